/* harness.h: helpers shared by the CUnit suites: running the rfx binary, temporary
 * directories, files, and the CUnit main loop. */
#ifndef RFX_TEST_HARNESS_H
#define RFX_TEST_HARNESS_H

#include <CUnit/Basic.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct run_result {
    int code;                  /* exit status, or 128+signal */
    char *out, *err;           /* captured stdout / stderr (malloc'ed) */
} run_result;

/* Runs argv (argv[0] = program path) in directory cwd; stdin is /dev/null. */
run_result run_prog(const char *cwd, char *const argv[]);
/* The same with extra "NAME=value" environment entries (NULL-terminated, may be NULL). */
run_result run_prog_env(const char *cwd, char *const argv[], char *const env[]);
void run_free(run_result *r);

char *read_file(const char *path, size_t *len);     /* NULL if unreadable */
bool write_file(const char *path, const char *text);
char *make_temp_dir(void);                          /* malloc'ed path */
void remove_tree(const char *path);
bool file_exists(const char *path);
bool is_dir(const char *path);
/* Sorted names of the entries of dir (NULL-terminated, malloc'ed). */
char **list_dir(const char *dir);
void free_list(char **names);
/* The environment's value of name where set and not empty, else fallback: the build bakes
 * in absolute paths, and RFX_TEST_BIN / RFX_TEST_CASES / RFX_TEST_LIB_DIR override them where
 * the build runs elsewhere (the lent GPU machine). */
const char *env_or(const char *name, const char *fallback);
/* Prints where a and b first differ (for failure messages). */
void show_diff(const char *what, const char *expected, const char *actual);

/* The exit status of a test program that could not run here (no device, no data): ctest
 * reports it as skipped (SKIP_RETURN_CODE); the program prints one line saying why. */
#define RFX_TEST_SKIPPED 77

/* Registers suites via the callback, runs them, returns the process exit status. */
int run_suites(int argc, char **argv, void (*add)(void));

#endif
