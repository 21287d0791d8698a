/* test_cases.c: end-to-end cases, one directory each under tests/cases/:
 *   program.dl        the program
 *   facts/            fact directory passed with -F (optional)
 *   args              extra arguments replacing the defaults (optional; $OUT is the output dir)
 *   expected.code     exit status (default 0)
 *   expected.out      exact stdout (optional)
 *   expected.err      exact stderr (optional; when absent a successful run must be silent)
 *   expected/         exact output files; the output directory must hold nothing else
 *                     (so a failed run must leave it empty: no partial outputs)
 *   expected.ast      golden `--emit=ast` (optional)
 *   expected.plan     golden `--emit=plan` (optional)
 *   expected.harmony  golden `--emit=harmony` (optional)
 *   expected.fused    golden `--emit=fused` (optional)
 *   expected.cuda     golden `--emit=cuda` (optional)
 * RFX_TEST_ARGS holds options added to every run of a case (not to the --emit runs of the
 * goldens): `cases_unfused` runs every case with --no-fuse, `cases_capped` under a device
 * memory cap, and the device scripts with --tune settings; the results must not change.
 * RFX_UPDATE_GOLDEN=1 rewrites the expected.* files from the actual results. */
#include "harness.h"

#include <stdlib.h>


#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_CASES 400

static char **cases;
static int ncases;

static char *path_join(const char *a, const char *b)
{
    char *p;
    return asprintf(&p, "%s/%s", a, b) < 0 ? NULL : p;
}

static bool update_golden(void)
{
    const char *u = getenv("RFX_UPDATE_GOLDEN");
    return u && *u == '1';
}

/* Compares actual text with the golden file (or rewrites the golden file). */
static bool check_text(const char *dir, const char *file, const char *actual, const char *what)
{
    char *path = path_join(dir, file);
    char *expected = read_file(path, NULL);
    bool ok = true;
    if (update_golden() && (expected || strcmp(file, "expected.out") == 0 || strcmp(file, "expected.err") == 0)) {
        if (expected || (actual && *actual))
            write_file(path, actual ? actual : "");
    } else if (expected) {
        ok = actual && strcmp(expected, actual) == 0;
        if (!ok)
            show_diff(what, expected, actual);
    }
    free(expected);
    free(path);
    return ok;
}

static void run_case(int idx)
{
    const char *dir = cases[idx];
    char *out_dir = make_temp_dir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(out_dir);
    char *argv[96];
    int argc = 0;
    argv[argc++] = (char *)env_or("RFX_TEST_BIN", RFX_BIN);
    char *extra = strdup(env_or("RFX_TEST_ARGS", ""));
    CU_ASSERT_PTR_NOT_NULL_FATAL(extra);
    for (char *tok = strtok(extra, " \t\n"); tok && argc < 30; tok = strtok(NULL, " \t\n"))
        argv[argc++] = tok;
    char *args_path = path_join(dir, "args");
    char *args = read_file(args_path, NULL);
    free(args_path);
    char *facts = path_join(dir, "facts");
    if (args) {
        for (char *tok = strtok(args, " \t\n"); tok && argc < 90; tok = strtok(NULL, " \t\n"))
            argv[argc++] = strcmp(tok, "$OUT") == 0 ? out_dir : strcmp(tok, "$LIB") == 0 ? (char *)env_or("RFX_TEST_LIB_DIR", RFX_TEST_LIB_DIR) : tok;
    } else {
        argv[argc++] = "-j2";
        if (is_dir(facts)) {
            argv[argc++] = "-F";
            argv[argc++] = "facts";
        }
        argv[argc++] = "-D";
        argv[argc++] = out_dir;
        argv[argc++] = "program.dl";
    }
    argv[argc] = NULL;
    run_result r = run_prog(dir, argv);

    char *code_path = path_join(dir, "expected.code");
    char *code_text = read_file(code_path, NULL);
    int want = code_text ? atoi(code_text) : 0;
    if (update_golden() && r.code != 0) {
        char buf[16];
        snprintf(buf, sizeof buf, "%d\n", r.code);
        write_file(code_path, buf);
        want = r.code;
    }
    free(code_text);
    free(code_path);
    if (r.code != want)
        fprintf(stderr, "\n    exit status %d, expected %d; stderr:\n%s", r.code, want, r.err ? r.err : "");
    CU_ASSERT_EQUAL(r.code, want);
    CU_ASSERT(check_text(dir, "expected.out", r.out, "stdout"));
    char *err_path = path_join(dir, "expected.err");
    if (file_exists(err_path) || (update_golden() && r.err && *r.err)) {
        CU_ASSERT(check_text(dir, "expected.err", r.err, "stderr"));
    } else if (want == 0 && r.err && *r.err) {
        fprintf(stderr, "\n    unexpected stderr: %s", r.err);
        CU_FAIL("unexpected stderr");
    }
    free(err_path);

    /* output files: exactly the expected ones, byte for byte */
    char *exp_dir = path_join(dir, "expected");
    char **got = list_dir(out_dir);
    if (update_golden() && got && got[0]) {
        if (!is_dir(exp_dir))
            mkdir(exp_dir, 0755);
        for (char **g = got; *g; g++) {
            char *src = path_join(out_dir, *g), *dst = path_join(exp_dir, *g);
            char *text = read_file(src, NULL);
            if (text)
                write_file(dst, text);
            free(text);
            free(src);
            free(dst);
        }
    }
    char **exp = is_dir(exp_dir) ? list_dir(exp_dir) : NULL;
    int ng = 0, ne = 0;
    for (char **g = got; g && *g; g++)
        ng++;
    for (char **e = exp; e && *e; e++) {
        ne++;
        char *ep = path_join(exp_dir, *e), *ap = path_join(out_dir, *e);
        char *et = read_file(ep, NULL), *at = read_file(ap, NULL);
        if (!at)
            fprintf(stderr, "\n    missing output %s", *e);
        else if (strcmp(et ? et : "", at) != 0)
            show_diff(*e, et, at);
        CU_ASSERT(at && strcmp(et ? et : "", at) == 0);
        free(et);
        free(at);
        free(ep);
        free(ap);
    }
    if (ng != ne) {
        fprintf(stderr, "\n    output directory holds %d files, expected %d:", ng, ne);
        for (char **g = got; g && *g; g++)
            fprintf(stderr, " %s", *g);
    }
    CU_ASSERT_EQUAL(ng, ne);
    free_list(got);
    free_list(exp);
    free(exp_dir);

    /* golden IR stages */
    static const char *stages[][2] = {{"expected.ast", "--emit=ast"},     {"expected.plan", "--emit=plan"},
                                      {"expected.harmony", "--emit=harmony"}, {"expected.fused", "--emit=fused"},
                                      {"expected.cuda", "--emit=cuda"}};
    for (int s = 0; s < 5; s++) {
        char *p = path_join(dir, stages[s][0]);
        if (file_exists(p)) {
            char *eargv[] = {(char *)env_or("RFX_TEST_BIN", RFX_BIN), (char *)stages[s][1], "program.dl", NULL};
            run_result e = run_prog(dir, eargv);
            CU_ASSERT_EQUAL(e.code, 0);
            CU_ASSERT(check_text(dir, stages[s][0], e.out, stages[s][0]));
            run_free(&e);
        }
        free(p);
    }
    run_free(&r);
    free(args);
    free(extra);
    free(facts);
    remove_tree(out_dir);
    free(out_dir);
}

/* CUnit tests take no arguments: one trampoline per case index. */
#define T1(n) static void case_##n(void) { run_case(n); }
#define T10(n) T1(n##0) T1(n##1) T1(n##2) T1(n##3) T1(n##4) T1(n##5) T1(n##6) T1(n##7) T1(n##8) T1(n##9)
#define T100(n) T10(n##0) T10(n##1) T10(n##2) T10(n##3) T10(n##4) T10(n##5) T10(n##6) T10(n##7) T10(n##8) T10(n##9)
T10() T10(1) T10(2) T10(3) T10(4) T10(5) T10(6) T10(7) T10(8) T10(9)
T100(1) T100(2) T100(3)
#define R1(n) case_##n,
#define R10(n) R1(n##0) R1(n##1) R1(n##2) R1(n##3) R1(n##4) R1(n##5) R1(n##6) R1(n##7) R1(n##8) R1(n##9)
#define R100(n) R10(n##0) R10(n##1) R10(n##2) R10(n##3) R10(n##4) R10(n##5) R10(n##6) R10(n##7) R10(n##8) R10(n##9)
static void (*const trampolines[])(void) = {
    R1(0) R1(1) R1(2) R1(3) R1(4) R1(5) R1(6) R1(7) R1(8) R1(9)
    R10(1) R10(2) R10(3) R10(4) R10(5) R10(6) R10(7) R10(8) R10(9)
    R100(1) R100(2) R100(3)
};

static void add(void)
{
    char **names = list_dir(env_or("RFX_TEST_CASES", RFX_CASES_DIR));
    CU_pSuite suite = CU_add_suite("cases", NULL, NULL);
    size_t ntramp = sizeof trampolines / sizeof trampolines[0];
    for (char **n = names; n && *n; n++) {
        char *dir = path_join(env_or("RFX_TEST_CASES", RFX_CASES_DIR), *n);
        if (!is_dir(dir) || (size_t)ncases >= ntramp || ncases >= MAX_CASES) {
            free(dir);
            continue;
        }
        cases = realloc(cases, sizeof(char *) * (size_t)(ncases + 1));
        cases[ncases] = dir;
        CU_add_test(suite, *n, trampolines[ncases]);
        ncases++;
    }
    free_list(names);
}

int main(int argc, char **argv)
{
    int rc = run_suites(argc, argv, add);
    for (int i = 0; i < ncases; i++)
        free(cases[i]);
    free(cases);
    return rc;
}
