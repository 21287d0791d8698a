/* preprocess.c: the C preprocessor pass Soufflé makes over a program (`#include`,
 * `#define`, `#ifdef`, ...; Soufflé's own `.include "f"` and `.once` too). It runs only for
 * programs that use a directive; the system's `cpp` does the work (as Soufflé's gcc -E does)
 * in the program's directory, so that includes resolve next to it. Its line markers stay
 * in the text: the scanner reads them into the line map, and messages name the file and
 * line each token came from. */
#include "parse_ctx.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Which directive starts at s[i], a line's first non-blank byte: '#', 'i' (`.include`),
 * 'o' (`.once`), or 0 for none. */
static char directive_at(const char *s, size_t len, size_t i)
{
    if (s[i] == '#')
        return '#';
    if (len - i >= 8 && memcmp(s + i, ".include", 8) == 0)
        return 'i';
    if (len - i >= 5 && memcmp(s + i, ".once", 5) == 0 && (len - i == 5 || (s[i + 5] && strchr(" \t\r\n", s[i + 5]))))
        return 'o';
    return 0;
}

/* The first non-blank byte of the line starting at i (len at the end), and where the next
 * line starts. */
static size_t line_lead(const char *s, size_t len, size_t i, size_t *next)
{
    while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
        i++;
    const char *nl = i < len ? memchr(s + i, '\n', len - i) : NULL;
    *next = nl ? (size_t)(nl - s) + 1 : len;
    return i;
}

bool rfx_needs_preprocessor(const char *src, size_t len)
{
    for (size_t i = 0, next; i < len; i = next) {
        size_t lead = line_lead(src, len, i, &next);
        if (lead < len && directive_at(src, len, lead))
            return true;
    }
    return false;
}

/* Appends n bytes to a growing buffer; false on out-of-memory. */
static bool append(char **buf, size_t *n, size_t *cap, const char *p, size_t k)
{
    if (!rfx_grow((void **)buf, cap, *n + k + 1, 1))
        return false;
    memcpy(*buf + *n, p, k);
    *n += k;
    (*buf)[*n] = 0;
    return true;
}

/* Soufflé's directives as the preprocessor's: `.include` becomes `#include`, `.once`
 * `#pragma once` (no line moves: messages keep their lines). */
static char *translate(const char *src, size_t len, size_t *tlen)
{
    char *t = NULL;
    size_t n = 0, cap = 0, from = 0;
    for (size_t i = 0, next; i < len; i = next) {
        size_t lead = line_lead(src, len, i, &next);
        char d = lead < len ? directive_at(src, len, lead) : 0;
        if (d != 'i' && d != 'o')
            continue;
        const char *to = d == 'i' ? "#include" : "#pragma once";
        if (!append(&t, &n, &cap, src + from, lead - from) || !append(&t, &n, &cap, to, strlen(to))) {
            free(t);
            return NULL;
        }
        from = lead + (d == 'i' ? 8 : 5);
    }
    if (!append(&t, &n, &cap, src + from, len - from)) {
        free(t);
        return NULL;
    }
    *tlen = n;
    return t;
}

int rfx_preprocess(const char *src, size_t len, const char *file, const char *const *macros, int nmacros,
                   const char *const *incs, int nincs, char **out, size_t *outlen, rfx_loc *where, char *err,
                   size_t errcap)
{
    *out = NULL;
    *outlen = 0;
    err[0] = 0;
    char *text = translate(src, len, &len);
    char *dir = strdup(file);
    const char **argv = calloc((size_t)(nmacros + nincs) * 2 + 12, sizeof(char *));
    /* the preprocessor runs in the program's directory: relative include directories are
     * the user's, from the current one */
    char **absinc = calloc((size_t)nincs + 1, sizeof(char *));
    char cwd[4096];
    bool have_cwd = getcwd(cwd, sizeof cwd) != NULL;
    bool ok = text && dir && argv && absinc;
    for (int i = 0; ok && i < nincs; i++) {
        size_t n = strlen(incs[i]) + (have_cwd ? strlen(cwd) : 0) + 2;
        ok = (absinc[i] = malloc(n)) != NULL;
        if (ok)
            snprintf(absinc[i], n, "%s%s%s", incs[i][0] == '/' || !have_cwd ? "" : cwd,
                     incs[i][0] == '/' || !have_cwd ? "" : "/", incs[i]);
    }
    if (!ok) {
        for (int i = 0; absinc && i < nincs; i++)
            free(absinc[i]);
        free(text), free(dir), free(argv), free(absinc);
        snprintf(err, errcap, "out of memory preprocessing the program");
        return -1;
    }
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[slash == dir ? 1 : 0] = 0;
    else
        strcpy(dir, ".");
    int a = 0;
    argv[a++] = "cpp";
    argv[a++] = "-x";
    argv[a++] = "c";
    argv[a++] = "-undef";       /* no `linux` or `unix` macros eating a program's names */
    argv[a++] = "-w";           /* Datalog is not C: no warnings about its quotes */
    argv[a++] = "-nostdinc";
    for (int i = 0; i < nmacros; i++) {
        argv[a++] = "-D";
        argv[a++] = macros[i];
    }
    for (int i = 0; i < nincs; i++) {
        argv[a++] = "-I";
        argv[a++] = absinc[i];
    }
    argv[a++] = "-";
    argv[a] = NULL;

    int in[2] = {-1, -1}, o[2] = {-1, -1}, e[2] = {-1, -1};
    posix_spawn_file_actions_t fa;
    bool fa_ok = false;
    pid_t pid = -1;
    int rc = -1;
    if (pipe2(in, O_CLOEXEC) || pipe2(o, O_CLOEXEC) || pipe2(e, O_CLOEXEC)) {
        snprintf(err, errcap, "cannot start the C preprocessor: %s", strerror(errno));
        goto done;
    }
    fa_ok = posix_spawn_file_actions_init(&fa) == 0;
    if (!fa_ok || posix_spawn_file_actions_adddup2(&fa, in[0], 0) || posix_spawn_file_actions_adddup2(&fa, o[1], 1) ||
        posix_spawn_file_actions_adddup2(&fa, e[1], 2) || posix_spawn_file_actions_addchdir_np(&fa, dir)) {
        snprintf(err, errcap, "out of memory preprocessing the program");
        goto done;
    }
    int sp = posix_spawnp(&pid, "cpp", &fa, NULL, (char *const *)argv, environ);
    if (sp) {
        pid = -1;
        snprintf(err, errcap,
                 "the program uses preprocessor directives (#include, #define, .include, ...) and the C preprocessor "
                 "'cpp' cannot be run (%s): install it (Debian: apt-get install cpp)",
                 strerror(sp));
        goto done;
    }
    close(in[0]), close(o[1]), close(e[1]);
    in[0] = o[1] = e[1] = -1;
    /* feed the text while reading both outputs: a large program fills the pipes both ways */
    size_t fed = 0, en = 0, ecap = 0, ocap = 0;
    char *ebuf = NULL;
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigaction(SIGPIPE, &ign, &old);   /* cpp stopping early must not kill us */
    bool oom = false;
    while (o[0] >= 0 || e[0] >= 0) {
        struct pollfd pf[3];
        int np = 0;
        if (in[1] >= 0)
            pf[np++] = (struct pollfd){in[1], POLLOUT, 0};
        if (o[0] >= 0)
            pf[np++] = (struct pollfd){o[0], POLLIN, 0};
        if (e[0] >= 0)
            pf[np++] = (struct pollfd){e[0], POLLIN, 0};
        if (poll(pf, (nfds_t)np, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int k = 0; k < np; k++) {
            if (!pf[k].revents)
                continue;
            if (pf[k].fd == in[1]) {
                ssize_t w = write(in[1], text + fed, len - fed < 65536 ? len - fed : 65536);
                if (w > 0)
                    fed += (size_t)w;
                if (w < 0 || fed == len) {
                    close(in[1]);
                    in[1] = -1;
                }
                continue;
            }
            char chunk[65536];
            ssize_t r = read(pf[k].fd, chunk, sizeof chunk);
            int *fd = pf[k].fd == o[0] ? &o[0] : &e[0];
            if (r <= 0) {
                close(*fd);
                *fd = -1;
            } else if (fd == &o[0] ? !append(out, outlen, &ocap, chunk, (size_t)r)
                                   : !append(&ebuf, &en, &ecap, chunk, (size_t)r))
                oom = true;
        }
    }
    sigaction(SIGPIPE, &old, NULL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (oom)
        snprintf(err, errcap, "out of memory preprocessing the program");
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        /* cpp's first message: "<stdin>:L:C: fatal error: what" is the program's line L */
        const char *msg = ebuf ? ebuf : "the C preprocessor failed";
        const char *nl = strchr(msg, '\n');
        int mlen = nl ? (int)(nl - msg) : (int)strlen(msg);
        int line = 0, col = 0, skip = 0;
        if (sscanf(msg, "<stdin>:%d:%d: %n", &line, &col, &skip) == 2 && skip > 0 && skip < mlen) {
            *where = (rfx_loc){line, col};
            const char *what = strstr(msg + skip, "error: ");
            if (what && what < msg + mlen)
                skip = (int)(what + 7 - msg);
            snprintf(err, errcap, "%.*s", mlen - skip, msg + skip);
        } else
            snprintf(err, errcap, "preprocessor: %.*s", mlen, msg);
        rc = 1;
    } else
        rc = 0;
    free(ebuf);
done:
    for (int k = 0; k < 2; k++) {
        if (in[k] >= 0) close(in[k]);
        if (o[k] >= 0) close(o[k]);
        if (e[k] >= 0) close(e[k]);
    }
    if (fa_ok)
        posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        free(*out);
        *out = NULL;
        *outlen = 0;
    } else if (!*out && !(*out = calloc(1, 1)))
        rc = -1;
    for (int i = 0; i < nincs; i++)
        free(absinc[i]);
    free(text), free(dir), free(argv), free(absinc);
    return rc;
}
