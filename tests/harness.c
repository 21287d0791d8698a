/* harness.c: see harness.h. */
#include "harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The whole of f from where it stands, NUL-terminated; *len (when given) its bytes. */
static char *read_stream(FILE *f, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            char *nb = realloc(buf, cap * 2 + 1);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    if (!buf)
        return NULL;
    buf[n] = 0;
    if (len)
        *len = n;
    return buf;
}

char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = read_stream(f, len);
    fclose(f);
    return text;
}

/* The whole of file descriptor fd from its start (it is closed). */
static char *read_fd(int fd)
{
    FILE *f = lseek(fd, 0, SEEK_SET) == 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        close(fd);
        return NULL;
    }
    char *text = read_stream(f, NULL);
    fclose(f);
    return text;
}

bool write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    bool ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

char *make_temp_dir(void)
{
    const char *base = getenv("TMPDIR");
    char *path;
    if (asprintf(&path, "%s/rfx-test-XXXXXX", base ? base : "/tmp") < 0)
        return NULL;
    if (!mkdtemp(path)) {
        free(path);
        return NULL;
    }
    return path;
}

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb; (void)flag; (void)ftw;
    chmod(p, 0700);
    return remove(p);
}

void remove_tree(const char *path)
{
    if (path)
        nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

bool file_exists(const char *path)
{
    return access(path, F_OK) == 0;
}

bool is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char **list_dir(const char *dir)
{
    DIR *d = opendir(dir);
    size_t n = 0, cap = 16;
    char **names = calloc(cap + 1, sizeof(char *));
    if (!d || !names) {
        if (d)
            closedir(d);
        free(names);
        return NULL;
    }
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            char **nn = realloc(names, (cap * 2 + 1) * sizeof(char *));
            if (!nn)
                break;
            names = nn;
            cap *= 2;
        }
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    names[n] = NULL;
    qsort(names, n, sizeof(char *), cmp_str);
    return names;
}

void free_list(char **names)
{
    if (!names)
        return;
    for (char **p = names; *p; p++)
        free(*p);
    free(names);
}

void show_diff(const char *what, const char *expected, const char *actual)
{
    int line = 1;
    const char *e = expected ? expected : "", *a = actual ? actual : "";
    while (*e && *e == *a) {
        if (*e == '\n')
            line++;
        e++;
        a++;
    }
    const char *el = strchr(e, '\n'), *al = strchr(a, '\n');
    fprintf(stderr, "\n    %s differs at line %d:\n      expected: %.*s\n      actual:   %.*s\n", what, line,
            (int)(el ? el - e : (long)strlen(e)), e, (int)(al ? al - a : (long)strlen(a)), a);
}

run_result run_prog(const char *cwd, char *const argv[])
{
    return run_prog_env(cwd, argv, NULL);
}

run_result run_prog_env(const char *cwd, char *const argv[], char *const env[])
{
    run_result r = {-1, NULL, NULL};
    /* the child's output goes to files removed at once: nothing is left behind where the
     * harness is killed (a test's timeout) */
    char out_path[] = "/tmp/rfx-out-XXXXXX", err_path[] = "/tmp/rfx-err-XXXXXX";
    int fo = mkstemp(out_path), fe = mkstemp(err_path);
    if (fo >= 0)
        unlink(out_path);
    if (fe >= 0)
        unlink(err_path);
    if (fo < 0 || fe < 0) {
        if (fo >= 0)
            close(fo);
        if (fe >= 0)
            close(fe);
        return r;
    }
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDONLY);
        dup2(devnull, 0);
        dup2(fo, 1);
        dup2(fe, 2);
        if (cwd && chdir(cwd) != 0)
            _exit(126);
        for (int i = 0; env && env[i]; i++)
            putenv(env[i]);
        execv(argv[0], argv);
        _exit(127);
    }
    int status = 0;
    if (pid > 0)
        waitpid(pid, &status, 0);
    r.code = pid < 0 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = read_fd(fo);
    r.err = read_fd(fe);
    return r;
}

void run_free(run_result *r)
{
    free(r->out);
    free(r->err);
}

int run_suites(int argc, char **argv, void (*add)(void))
{
    (void)argc; (void)argv;
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    add();
    CU_basic_set_mode(CU_BRM_VERBOSE);
    /* RFX_TEST_ONLY=text runs only the tests whose names hold it, RFX_TEST_ONLY==name the one
     * so named (sanitizer runs of a few; bench/gpu_sanitize.sh runs each test alone) */
    const char *only = getenv("RFX_TEST_ONLY");
    const bool exact = only && only[0] == '=';
    only = exact ? only + 1 : only;
    unsigned failed = 0, ran = 0;
    if (only && *only) {
        for (CU_pSuite s = CU_get_registry()->pSuite; s; s = s->pNext)
            for (CU_pTest t = s->pTest; t; t = t->pNext)
                if (exact ? strcmp(t->pName, only) == 0 : strstr(t->pName, only) != NULL) {
                    CU_basic_run_test(s, t);
                    failed += CU_get_number_of_tests_failed() + CU_get_number_of_suites_failed();
                    ran++;
                }
        if (!ran) {
            fprintf(stderr, "RFX_TEST_ONLY=%s%s: no test's name %s it\n", exact ? "=" : "", only,
                    exact ? "is" : "holds");
            failed = 1;
        }
    } else {
        CU_basic_run_tests();
        failed = CU_get_number_of_tests_failed() + CU_get_number_of_suites_failed();
    }
    CU_cleanup_registry();
    return failed ? 1 : 0;
}

const char *env_or(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}
