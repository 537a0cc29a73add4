/* Atomic output files: data goes to a temporary file in the target's directory (so
 * rename stays within one file system and is atomic), which replaces the target only
 * once everything was written and flushed. A failed or interrupted run leaves either
 * the old file or none, never a partial one. */
#define _POSIX_C_SOURCE 200809L
#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_uint_fast64_t tmp_counter;

static void outfile_free(canopy_outfile *o) {
    free(o->final_path);
    free(o->tmp_path);
    memset(o, 0, sizeof *o);
}

canopy_status canopy_outfile_open(canopy_outfile *o, const char *path) {
    memset(o, 0, sizeof *o);
    if (!path || !*path) return canopy_fail(CANOPY_ERR_INVALID, "no output file name given");
    size_t len = strlen(path);
    static const char suffix[] = ".tmp.XXXXXX";
    o->final_path = malloc(len + 1);
    o->tmp_path = malloc(len + sizeof suffix);
    if (!o->final_path || !o->tmp_path) {
        outfile_free(o);
        return canopy_fail(CANOPY_ERR_NOMEM, "out of memory opening '%s'", path);
    }
    memcpy(o->final_path, path, len + 1);

    /* Like mkstemp, but created with mode 0666 so the umask applies as it would to
     * any new file (mkstemp's 0600 would make outputs private). */
    static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    canopy_rng r = canopy_rng_make((uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32),
                                   atomic_fetch_add(&tmp_counter, 1));
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
        char *x = o->tmp_path + len + sizeof ".tmp." - 1;
        memcpy(o->tmp_path, path, len);
        memcpy(o->tmp_path + len, suffix, sizeof suffix);
        for (int i = 0; i < 6; i++) x[i] = digits[canopy_rng_below(&r, sizeof digits - 1)];
        fd = open(o->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        int e = errno;
        outfile_free(o);
        return canopy_fail(CANOPY_ERR_IO, "cannot write '%s': %s", path, strerror(e));
    }
    o->fp = fdopen(fd, "wb");
    if (!o->fp) {
        int e = errno;
        close(fd);
        unlink(o->tmp_path);
        outfile_free(o);
        return canopy_fail(CANOPY_ERR_IO, "cannot write '%s': %s", path, strerror(e));
    }
    return CANOPY_OK;
}

canopy_status canopy_io_write(canopy_outfile *o, const void *p, size_t n) {
    if (n > 0 && fwrite(p, 1, n, o->fp) != n)
        return canopy_fail(CANOPY_ERR_IO, "error writing '%s': %s", o->final_path, strerror(errno));
    return CANOPY_OK;
}

canopy_status canopy_outfile_commit(canopy_outfile *o) {
    if (!o->fp) return canopy_fail(CANOPY_ERR_INVALID, "output file is not open");
    FILE *f = o->fp;
    o->fp = NULL;
    /* Write errors that stdio buffered (a full disk shows up at flush or close) must
     * fail the commit rather than rename a short file into place. */
    int bad = fflush(f) != 0 || ferror(f);
    int e = errno;
    if (fclose(f) != 0 && !bad) bad = 1, e = errno;
    if (bad) {
        unlink(o->tmp_path);
        canopy_status s =
            canopy_fail(CANOPY_ERR_IO, "error writing '%s': %s", o->final_path, strerror(e));
        outfile_free(o);
        return s;
    }
    if (rename(o->tmp_path, o->final_path) != 0) {
        e = errno;
        unlink(o->tmp_path);
        canopy_status s =
            canopy_fail(CANOPY_ERR_IO, "cannot replace '%s': %s", o->final_path, strerror(e));
        outfile_free(o);
        return s;
    }
    outfile_free(o);
    return CANOPY_OK;
}

void canopy_outfile_abort(canopy_outfile *o) {
    if (!o) return;
    if (o->fp) {
        fclose(o->fp);
        unlink(o->tmp_path);
    }
    outfile_free(o);
}
