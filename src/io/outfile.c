/* SPDX-License-Identifier: MIT */
/* Atomic output files: data goes to a temporary file in the target's directory (so
 * rename stays within one file system and is atomic), which replaces the target only
 * once everything was written and flushed. A failed or interrupted run leaves either
 * the old file or none, never a partial one. The path "-" is standard output,
 * streamed and so not atomic. */
#define _GNU_SOURCE /* renameat2 */
#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static atomic_uint_fast64_t tmp_counter;

/* Temporary files being written, so a signal handler can remove them: a fixed table
 * of atomic pointers, since the handler may neither lock nor allocate. A name is
 * registered once its file was created (never a name that may be another process's
 * file) and dropped after the rename or unlink. */
enum { LIVE_MAX = 64 };
static _Atomic(char *) live_tmp[LIVE_MAX];

static void live_add(char *name) {
    for (int i = 0; i < LIVE_MAX; i++) {
        char *expect = NULL;
        if (atomic_compare_exchange_strong(&live_tmp[i], &expect, name)) return;
    }
    /* Table full (more than LIVE_MAX outputs open at once): the file is still removed
     * on every error, only not on a signal. */
}

static void live_drop(char *name) {
    for (int i = 0; i < LIVE_MAX; i++) {
        char *expect = name;
        if (atomic_compare_exchange_strong(&live_tmp[i], &expect, NULL)) return;
    }
}

/* Threads between creating a temporary and registering it. They block the fatal
 * signals meanwhile, so a handler runs on another thread and waits for them: else a
 * signal landing right after open() would leave an unregistered file behind. */
static atomic_int creating;

static void pause_briefly(void) {
    struct timespec pause = {0, 100000};
    nanosleep(&pause, NULL);
}

void canopy_outfile_unlink_live(void) {
    /* Creating takes microseconds; the bound only guards against a hung file system. */
    for (int i = 0; i < 10000 && atomic_load(&creating) > 0; i++) pause_briefly();
    for (int i = 0; i < LIVE_MAX; i++) {
        char *name = atomic_load(&live_tmp[i]);
        if (name) unlink(name);
    }
}

/* 0; 1 while canopy_outfile_commit_all renames a set of files; 2 + the signal that
 * arrived meanwhile (the handler defers it so a signal leaves all or none of the set
 * renamed; the commit raises it again once done); or DYING once a handler on some
 * thread removes the temporaries, after which no thread may create or rename one (the
 * other threads run on until the handler's raise ends the process). */
enum { DYING = -1 };
static atomic_int commit_state;

static const int fatal_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

/* Called where a thread would start a new file or a rename after a handler claimed
 * the process: it waits for the handler's raise to end the process. */
_Noreturn static void wait_for_death(void) {
    for (;;) pause_briefly();
}

static void on_fatal_signal(int sig) {
    int e = errno;
    for (;;) {
        int state = atomic_load(&commit_state);
        if (state > 1 ||
            (state == 1 && atomic_compare_exchange_strong(&commit_state, &state, sig + 2))) {
            canopy_outfile_remove_on_signal(); /* SA_RESETHAND removed the handler */
            errno = e;
            return;
        }
        if (state == DYING ||
            (state == 0 && atomic_compare_exchange_strong(&commit_state, &state, DYING)))
            break;
    }
    canopy_outfile_unlink_live();
    errno = e;
    /* SA_RESETHAND restored the default action and SA_NODEFER left the signal
     * unblocked, so this ends the process with the status a parent expects. */
    raise(sig);
}

void canopy_outfile_remove_on_signal(void) {
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++) {
        const int sig = fatal_signals[i];
        struct sigaction old, sa;
        /* A signal the caller ignores (nohup, a background job's SIGINT) stays ignored. */
        if (sigaction(sig, NULL, &old) != 0 || old.sa_handler == SIG_IGN) continue;
        if (old.sa_handler != SIG_DFL && old.sa_handler != on_fatal_signal)
            continue; /* the embedding program has its own */
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESETHAND | SA_NODEFER;
        sigaction(sig, &sa, NULL);
    }
}

static void outfile_free(canopy_outfile *o) {
    if (o->tmp_path) live_drop(o->tmp_path);
    free(o->final_path);
    free(o->tmp_path);
    memset(o, 0, sizeof *o);
}

static bool is_stdout(const char *path) {
    return path[0] == '-' && path[1] == '\0';
}

canopy_status canopy_outfile_open(canopy_outfile *o, const char *path) {
    memset(o, 0, sizeof *o);
    if (!path || !*path) return canopy_fail(CANOPY_ERR_INVALID, "no output file name given");
    if (is_stdout(path)) {
        o->final_path = strdup("standard output");
        if (!o->final_path) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory opening '-'");
        o->fp = stdout;
        return CANOPY_OK;
    }
    /* The rename would replace a device, FIFO or socket by a regular file (as root,
     * /dev/null itself), and a directory gives a vague error late: refuse up front. */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return canopy_fail(CANOPY_ERR_IO,
                           "cannot write '%s': it exists and is not a regular file (outputs "
                           "replace files; '-' writes to standard output)",
                           path);
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
    sigset_t fatal, saved;
    sigemptyset(&fatal);
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++)
        sigaddset(&fatal, fatal_signals[i]);
    pthread_sigmask(SIG_BLOCK, &fatal, &saved);
    atomic_fetch_add(&creating, 1);
    if (atomic_load(&commit_state) == DYING) {
        atomic_fetch_sub(&creating, 1);
        wait_for_death();
    }
    int fd = -1;
    memcpy(o->tmp_path, path, len);
    memcpy(o->tmp_path + len, suffix, sizeof suffix);
    for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
        char *x = o->tmp_path + len + sizeof ".tmp." - 1;
        for (int i = 0; i < 6; i++) x[i] = digits[canopy_rng_below(&r, sizeof digits - 1)];
        fd = open(o->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd >= 0) live_add(o->tmp_path);
    int open_errno = errno;
    atomic_fetch_sub(&creating, 1);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    if (fd < 0) {
        int e = open_errno;
        free(o->tmp_path); /* not registered: it may name another process's file */
        o->tmp_path = NULL;
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

/* Flushes and closes o's file. Standard output is then done (freed); a temporary
 * stays in place for the rename. On error the temporary is removed and o freed. */
static canopy_status outfile_close(canopy_outfile *o) {
    if (!o->fp) return canopy_fail(CANOPY_ERR_INVALID, "output file is not open");
    FILE *f = o->fp;
    o->fp = NULL;
    /* Write errors that stdio buffered (a full disk shows up at flush or close) must
     * fail the commit rather than rename a short file into place. */
    int bad = fflush(f) != 0 || ferror(f);
    int e = bad && errno ? errno : EIO;
    if (!o->tmp_path) { /* standard output stays open for the rest of the program */
        canopy_status s =
            bad ? canopy_fail(CANOPY_ERR_IO, "error writing standard output: %s", strerror(e))
                : CANOPY_OK;
        outfile_free(o);
        return s;
    }
    if (fclose(f) != 0 && !bad) bad = 1, e = errno;
    if (bad) {
        unlink(o->tmp_path);
        canopy_status s =
            canopy_fail(CANOPY_ERR_IO, "error writing '%s': %s", o->final_path, strerror(e));
        outfile_free(o);
        return s;
    }
    return CANOPY_OK;
}

canopy_status canopy_outfile_commit(canopy_outfile *o) {
    return canopy_outfile_commit_all(o, 1);
}

/* The old target's second name while the set is renamed (NULL: none was there, or no
 * hard link could be made, and a failed set can only remove the new file). */
static char *keep_old(const canopy_outfile *o) {
    struct stat st;
    if (lstat(o->final_path, &st) != 0) return NULL;
    size_t len = strlen(o->tmp_path);
    char *b = malloc(len + sizeof ".old");
    if (!b) return NULL;
    memcpy(b, o->tmp_path, len);
    memcpy(b + len, ".old", sizeof ".old");
    if (link(o->final_path, b) == 0) return b;
    free(b);
    return NULL;
}

static atomic_int exchange_off; /* canopy_outfile_use_exchange(0), for tests */

void canopy_outfile_use_exchange(int on) {
    atomic_store(&exchange_off, !on);
}

/* Swaps the names of o's temporary and its target; 0 or an errno. */
static int swap_names(const canopy_outfile *o) {
#ifdef RENAME_EXCHANGE
    if (atomic_load(&exchange_off)) return EINVAL;
    return renameat2(AT_FDCWD, o->tmp_path, AT_FDCWD, o->final_path, RENAME_EXCHANGE) ? errno : 0;
#else
    (void)o;
    return EINVAL;
#endif
}

/* How output i replaced its target, for the rollback and the clean-up. */
typedef struct replaced {
    int swapped; /* exchanged: the old file is at the temporary's name */
    char *old;   /* renamed with a link to the old file (keep_old), or NULL */
} replaced;

/* Puts o's temporary in place of its target; 0 or an errno. An existing target is
 * exchanged with the temporary (renameat2 RENAME_EXCHANGE), where the file system can:
 * ext4 writes a file renamed over an existing one out at once (auto_da_alloc), which
 * cost more wall time than counting 10^6 bins (bench/results/paircount.md); and the
 * old file, now under the temporary's name, is the way back for a failed set. Else
 * (no target, or no exchange) a rename, after keep_old when n > 1. */
static int replace_target(canopy_outfile *o, int n, replaced *r) {
    int e = swap_names(o);
    if (!e) {
        /* a target that became a folder after open was swapped in: rename refuses that */
        struct stat st;
        if (lstat(o->tmp_path, &st) != 0 || !S_ISDIR(st.st_mode)) {
            r->swapped = 1;
            return 0;
        }
        swap_names(o);
        return EISDIR;
    }
    if (n > 1) r->old = keep_old(o);
    return rename(o->tmp_path, o->final_path) != 0 ? errno : 0;
}

/* Puts back what replace_target did to o's target (a later output of the set failed). */
static void restore_target(canopy_outfile *o, replaced *r) {
    if (r->swapped) {
        swap_names(o); /* the new file is at the temporary's name again, removed below */
        r->swapped = 0;
        return;
    }
    if (r->old)
        rename(r->old, o->final_path);
    else
        unlink(o->final_path);
    live_drop(o->tmp_path); /* renamed: nothing left to remove */
    free(o->tmp_path);
    o->tmp_path = NULL;
}

canopy_status canopy_outfile_commit_all(canopy_outfile *o, int n) {
    static pthread_mutex_t one_set = PTHREAD_MUTEX_INITIALIZER;
    canopy_status s = CANOPY_OK;
    for (int i = 0; i < n; i++) {
        if (s)
            canopy_outfile_abort(&o[i]);
        else
            s = outfile_close(&o[i]);
    }
    if (s) {
        for (int i = 0; i < n; i++) canopy_outfile_abort(&o[i]);
        return s;
    }
    replaced *r = calloc((size_t)n + 1, sizeof *r);
    if (!r) {
        for (int i = 0; i < n; i++) canopy_outfile_abort(&o[i]);
        return canopy_fail(CANOPY_ERR_NOMEM, "out of memory committing outputs");
    }
    pthread_mutex_lock(&one_set);
    int idle = 0;
    if (!atomic_compare_exchange_strong(&commit_state, &idle, 1))
        wait_for_death(); /* only DYING can be there: one_set serialises commits */
    int failed = -1, e = 0;
    for (int i = 0; i < n && failed < 0; i++) {
        if (!o[i].tmp_path) continue; /* standard output: already flushed */
        if ((e = replace_target(&o[i], n, &r[i]))) failed = i;
    }
    /* A replacement failed: put back what the earlier ones replaced, so the set stays old. */
    for (int i = 0; failed >= 0 && i < failed; i++)
        if (o[i].tmp_path) restore_target(&o[i], &r[i]);
    for (int i = 0; i < n; i++) {
        if (r[i].old) unlink(r[i].old); /* after a rollback it no longer exists */
        free(r[i].old);
        if (r[i].swapped) unlink(o[i].tmp_path); /* the old file */
        if (o[i].tmp_path && failed < 0) {
            live_drop(o[i].tmp_path);
            free(o[i].tmp_path);
            o[i].tmp_path = NULL;
        }
    }
    free(r);
    int pending = atomic_exchange(&commit_state, 0);
    pthread_mutex_unlock(&one_set);
    if (failed >= 0)
        s = canopy_fail(CANOPY_ERR_IO, "cannot replace '%s': %s%s", o[failed].final_path,
                        strerror(e), n > 1 ? " (no output of this run was replaced)" : "");
    for (int i = 0; i < n; i++) canopy_outfile_abort(&o[i]);
    if (pending > 1) raise(pending - 2);
    return s;
}

void canopy_outfile_abort(canopy_outfile *o) {
    if (!o) return;
    if (o->fp && o->tmp_path) fclose(o->fp);
    if (o->tmp_path) unlink(o->tmp_path);
    outfile_free(o);
}
