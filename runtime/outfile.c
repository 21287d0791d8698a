/* outfile.c: output files written whole or not at all. A regular file (or a path not there
 * yet) is written to a temporary file beside it and renamed into place once complete, so
 * a failed or interrupted run leaves what was there; a symbolic link is followed, so the
 * link stays and its target is replaced. What is not a regular file (a FIFO, a terminal,
 * /dev/stdout, /dev/null) is written in place: renaming over it would replace the node.
 *
 * Temporary files being written are listed in a fixed table of atomic slots, so that a
 * signal handler can remove them (rfx_outfile_remove_unfinished, async-signal-safe). */
#include "runtime.h"

#include "base.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { PENDING_SLOTS = 256 };
static _Atomic(char *) pending[PENDING_SLOTS];

static void pending_add(char *tmp)
{
    for (int i = 0; i < PENDING_SLOTS; i++) {
        char *none = NULL;
        if (atomic_compare_exchange_strong(&pending[i], &none, tmp))
            return;
    }
    /* the table is full: this file is not removed on a signal (only then) */
}

static void pending_drop(const char *tmp)
{
    for (int i = 0; i < PENDING_SLOTS; i++) {
        char *cur = (char *)tmp;
        if (atomic_compare_exchange_strong(&pending[i], &cur, NULL))
            return;
    }
}

int rfx_outfile_remove_unfinished(void)
{
    int n = 0;
    for (int i = 0; i < PENDING_SLOTS; i++) {
        char *tmp = atomic_exchange(&pending[i], NULL);
        if (tmp && unlink(tmp) == 0)
            n++;
    }
    return n;
}

bool rfx_outfile_open(rfx_outfile *o, const char *path, bool binary, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    struct stat st;
    /* the target of a link: the link stays, what it names is replaced */
    char *target = NULL;
    struct stat lst;
    bool link = lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode);
    if (link)
        target = realpath(path, NULL);
    const char *real = target ? target : path;
    /* /dev/stdout and the like name a descriptor the process has: renaming over what they
     * resolve to would cut that descriptor off from the file; and a link that resolves to
     * no path (a descriptor's deleted file) is written through */
    bool in_place = strncmp(path, "/dev/", 5) == 0 || strncmp(path, "/proc/", 6) == 0 || (link && !target) ||
                    (target && (strncmp(target, "/dev/", 5) == 0 || strncmp(target, "/proc/", 6) == 0));
    if (in_place || (stat(real, &st) == 0 && !S_ISREG(st.st_mode))) {
        o->f = fopen(real, binary ? "wb" : "w");
        free(target);
        if (!o->f) {
            snprintf(err, errlen, "%s", strerror(errno));
            return false;
        }
        return true;
    }
    size_t n = strlen(real) + 16;
    o->tmp = malloc(n);
    o->path = target ? target : strdup(path);
    if (!o->tmp || !o->path) {
        free(o->tmp);
        free(o->path);
        o->tmp = o->path = NULL;
        snprintf(err, errlen, "out of memory");
        return false;
    }
    snprintf(o->tmp, n, "%s.tmp.XXXXXX", real);
    pending_add(o->tmp);    /* before the file exists: a signal in between finds no file */
    int fd = mkstemp(o->tmp);
    if (fd >= 0) {
        fchmod(fd, 0644);
        o->f = fdopen(fd, binary ? "wb" : "w");
    }
    if (!o->f) {
        snprintf(err, errlen, "%s", strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(o->tmp);
        }
        pending_drop(o->tmp);
        free(o->tmp);
        free(o->path);
        o->tmp = o->path = NULL;
        return false;
    }
    return true;
}

rfx_status rfx_outfile_finish(rfx_outfile *o, rfx_status st, int saved_errno, const char *path, FILE *err)
{
    char why[256] = "";
    if (!rfx_outfile_close(o, st == RFX_OK, why, sizeof why) && st == RFX_OK) {
        st = RFX_ERR_IO;
        saved_errno = 0;
    }
    if (st == RFX_ERR_NOMEM)
        fprintf(err, "%s: error: out of memory writing output\n", path);
    else if (st != RFX_OK)
        fprintf(err, "%s: error: cannot write output: %s\n", path,
                saved_errno ? strerror(saved_errno) : why[0] ? why : "write failed");
    return st;
}

int rfx_outfile_fd(const rfx_outfile *o)
{
    return o->tmp && o->f ? fileno(o->f) : -1;
}

bool rfx_outfile_close(rfx_outfile *o, bool keep, char *err, size_t errlen)
{
    if (!o->f)
        return !keep;
    errno = 0;
    bool ok = rfx_fclose(o->f);
    if (!ok)
        snprintf(err, errlen, "%s", errno ? strerror(errno) : "write failed");
    o->f = NULL;
    if (o->tmp) {
        if (ok && keep && rename(o->tmp, o->path) != 0) {
            snprintf(err, errlen, "%s", strerror(errno));
            ok = false;
        }
        if (!ok || !keep)
            unlink(o->tmp);
        pending_drop(o->tmp);
    }
    free(o->tmp);
    free(o->path);
    o->tmp = o->path = NULL;
    return ok;
}
