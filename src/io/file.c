/* SPDX-License-Identifier: MIT */
/* Opening and reading input files, with errors that name the path. */
#define _POSIX_C_SOURCE 200809L
#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *canopy_io_name(const char *name) {
    return name ? name : "<memory>";
}

canopy_status canopy_io_open_read(const char *path, FILE **fp, int64_t *size) {
    *fp = NULL;
    if (!path) return canopy_fail(CANOPY_ERR_INVALID, "no file name given");
    /* O_NONBLOCK: a FIFO nobody writes to opens at once (and then reads as empty)
     * instead of blocking in open(); reads block again once it is known to be a pipe. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return canopy_fail(CANOPY_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    struct stat st;
    int e = fstat(fd, &st) != 0 ? errno : 0;
    /* A directory would fail later with a vaguer message; a device or socket (a
     * terminal, /dev/zero) could block or never end. */
    if (!e && S_ISDIR(st.st_mode)) e = EISDIR;
    if (!e && !S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
        close(fd);
        return canopy_fail(CANOPY_ERR_IO, "cannot open '%s': not a regular file or a pipe", path);
    }
    int flags = e ? 0 : fcntl(fd, F_GETFL);
    if (!e && (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0)) e = errno;
    FILE *f = e ? NULL : fdopen(fd, "rb");
    if (!f) {
        e = e ? e : errno;
        close(fd);
        return canopy_fail(CANOPY_ERR_IO, "cannot open '%s': %s", path, strerror(e));
    }
    *size = S_ISREG(st.st_mode) ? (int64_t)st.st_size : -1;
    *fp = f;
    return CANOPY_OK;
}

canopy_status canopy_io_read_all(const char *path, char **buf, size_t *len) {
    FILE *f;
    int64_t size;
    *buf = NULL;
    *len = 0;
    canopy_status s = canopy_io_open_read(path, &f, &size);
    if (s != CANOPY_OK) return s;
    /* The size of a regular file sizes the buffer in one go; a pipe grows it. The
     * extra byte holds the NUL. */
    size_t cap = size >= 0 ? (size_t)size + 1 : 65536, n = 0;
    char *b = malloc(cap);
    for (;;) {
        if (!b) {
            fclose(f);
            return canopy_fail(CANOPY_ERR_NOMEM, "out of memory reading '%s'", path);
        }
        n += fread(b + n, 1, cap - n, f);
        if (n < cap) break; /* end of file or an error; ferror tells which */
        char *nb = cap <= SIZE_MAX / 2 ? realloc(b, cap * 2) : NULL;
        if (!nb) free(b);
        b = nb;
        cap *= 2;
    }
    if (ferror(f)) {
        int e = errno;
        free(b);
        fclose(f);
        return canopy_fail(CANOPY_ERR_IO, "error reading '%s': %s", path, strerror(e));
    }
    fclose(f);
    b[n] = '\0';
    *buf = b;
    *len = n;
    return CANOPY_OK;
}

void canopy_io_printable(char *out, size_t cap, const char *s, size_t n) {
    size_t keep = n < cap ? n : cap - 4; /* room for "..." and the NUL when cut */
    for (size_t i = 0; i < keep; i++) {
        unsigned char c = (unsigned char)s[i];
        out[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (keep < n) memcpy(out + keep, "...", 3), keep += 3;
    out[keep] = '\0';
}

bool canopy_io_has_suffix(const char *path, const char *suffix) {
    size_t lp = strlen(path), ls = strlen(suffix);
    if (ls > lp) return false;
    const char *p = path + lp - ls;
    for (size_t i = 0; i < ls; i++) {
        char a = p[i], b = suffix[i];
        if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
        if (b >= 'A' && b <= 'Z') b = (char)(b - 'A' + 'a');
        if (a != b) return false;
    }
    return true;
}

canopy_status canopy_io_array_alloc(canopy_array *a, canopy_dtype t, int32_t ndim,
                                    const int64_t *shape, const char *name) {
    canopy_status s = canopy_array_alloc(a, t, ndim, shape);
    if (s != CANOPY_ERR_NOMEM) return s;
    int64_t count;
    size_t bytes;
    if (!canopy_io_shape_size(ndim, shape, canopy_dtype_size(t), &count, &bytes)) bytes = SIZE_MAX;
    return canopy_fail(s, "%s: out of memory allocating %zu bytes for its data", name, bytes);
}
