/* test_faults.c: fault injection sweeps (SQLite style). For several example programs,
 * the N-th host allocation, the N-th write, then the N-th device allocation is made to
 * fail, for N = 1, 2, ... until the fault is no longer reached. Every run must end cleanly: success with exactly the
 * expected outputs (a tolerated failure), or the documented exit status with a message;
 * never a crash, a sanitizer report (in the sanitizer build: leaks too), a partial
 * output file or a leftover temporary file. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static const char *programs[] = {
    "same_generation_small", "negation_strata", "aggregates_grouped", "mutual_recursion", "symbols_awkward",
    "edge_list_gzip", "facts_symbols_tab", "nullary", "disjunction", "float_arithmetic",
    "subsumption_shortest_paths", "choice_domain_first_wins", "eqrel_closure", "io_json",
};
#define NPROG (sizeof programs / sizeof programs[0])

static char *path2(const char *a, const char *b)
{
    char *p;
    return asprintf(&p, "%s/%s", a, b) < 0 ? NULL : p;
}

/* Output files present must each equal the expected one (complete outputs may exist
 * from before the failure); nothing else may be there. */
static bool outputs_ok(const char *exp_dir, const char *out_dir, bool all)
{
    char **got = list_dir(out_dir);
    bool ok = true;
    int n = 0;
    for (char **g = got; g && *g; g++, n++) {
        char *ep = path2(exp_dir, *g), *ap = path2(out_dir, *g);
        char *et = read_file(ep, NULL), *at = read_file(ap, NULL);
        if (!et || !at || strcmp(et, at) != 0) {
            fprintf(stderr, "\n    output %s is %s", *g, et ? "partial or wrong" : "unexpected (temporary?)");
            ok = false;
        }
        free(et);
        free(at);
        free(ep);
        free(ap);
    }
    free_list(got);
    if (all) {
        char **exp = list_dir(exp_dir);
        int ne = 0;
        for (char **e = exp; e && *e; e++)
            ne++;
        free_list(exp);
        if (ne != n) {
            fprintf(stderr, "\n    %d outputs, expected %d", n, ne);
            ok = false;
        }
    }
    return ok;
}

/* Sweeps one kind of fault over one program; returns the number of runs. */
static int sweep(const char *name, const char *var, int fail_code)
{
    char *dir = path2(env_or("RFX_TEST_CASES", RFX_CASES_DIR), name);
    char *exp = path2(dir, "expected");
    char *facts = path2(dir, "facts");
    char *want_out_path = path2(dir, "expected.out");
    char *want_out = read_file(want_out_path, NULL);
    int runs = 0;
    for (int n = 1; n < 100000; n++) {
        char *out = make_temp_dir();
        char *argv[] = {(char *)env_or("RFX_TEST_BIN", RFX_BIN), "-j2", "-F", is_dir(facts) ? "facts" : ".", "-D", out,
                        "program.dl", NULL};
        char fault[64];
        snprintf(fault, sizeof fault, "%s=%d", var, n);
        char *env[] = {fault, "RFX_FAULT_REPORT=1", NULL};
        run_result r = run_prog_env(dir, argv, env);
        runs++;
        bool reached = !(r.err && strstr(r.err, "fault injection: not reached"));
        bool sanitizer = r.err && (strstr(r.err, "Sanitizer") || strstr(r.err, "runtime error"));
        bool ok = !sanitizer && r.code < 128;
        if (r.code == 0)
            ok &= outputs_ok(exp, out, true) && (!want_out || (r.out && strcmp(r.out, want_out) == 0));
        else
            ok &= r.code == fail_code && r.err && strstr(r.err, "error") && outputs_ok(exp, out, false);
        if (!ok)
            fprintf(stderr, "\n    %s with %s: exit %d\n%s", name, fault, r.code, r.err ? r.err : "");
        CU_ASSERT(ok);
        run_free(&r);
        remove_tree(out);
        free(out);
        if (!reached || !ok)
            break;
    }
    free(dir);
    free(exp);
    free(facts);
    free(want_out_path);
    free(want_out);
    return runs;
}

/* min_runs guards against a sweep that stops at once (the knob not working). */
static void sweep_all(const char *var, int code, int min_runs)
{
    int total = 0;
    for (size_t i = 0; i < NPROG; i++)
        total += sweep(programs[i], var, code);
    printf("(%d runs) ", total);
    CU_ASSERT(total >= min_runs);
}

static void test_alloc_faults(void) { sweep_all("RFX_FAULT_ALLOC", 3, (int)NPROG * 20); }
static void test_write_faults(void) { sweep_all("RFX_FAULT_WRITE", 2, (int)NPROG * 2); }
/* Device allocations happen on the CUDA backend only (RFX_BACKEND=cuda on a GPU machine);
 * elsewhere each sweep stops at once. */
static void test_device_faults(void) { sweep_all("RFX_FAULT_DEVICE", 3, (int)NPROG); }

/* A result bigger than the memory the system has (RFX_HOST_AVAILABLE stands in for it:
 * 100 MB against a product of 10^8 pairs, 800 MB) ends with "out of memory" and the
 * resource exit status, before the kernel would kill the process for it; no output file. */
static void test_host_memory(void)
{
    static const char *prog = ".decl d(x: number)\n"
                              "d(0). d(1). d(2). d(3). d(4). d(5). d(6). d(7). d(8). d(9).\n"
                              ".decl n(x: number)\n"
                              "n(a * 1000 + b * 100 + c * 10 + e) :- d(a), d(b), d(c), d(e).\n"
                              ".decl pair(x: number, y: number)\n"
                              "pair(x, y) :- n(x), n(y).\n"
                              ".output pair\n";
    char *dir = make_temp_dir(), *out = make_temp_dir();
    char *file = path2(dir, "big.dl");
    CU_ASSERT_FATAL(write_file(file, prog));
    char *argv[] = {(char *)env_or("RFX_TEST_BIN", RFX_BIN), "--backend=cpu", "-j2", "-D", out, "big.dl", NULL};
    char *env[] = {"RFX_HOST_AVAILABLE=100000000", NULL};
    run_result r = run_prog_env(dir, argv, env);
    CU_ASSERT_EQUAL(r.code, 3);
    CU_ASSERT(r.err && strstr(r.err, "out of memory"));
    if (r.code != 3)
        fprintf(stderr, "\n    exit %d: %s", r.code, r.err ? r.err : "");
    char **left = list_dir(out);
    CU_ASSERT(left && !left[0]);   /* no partial pair.csv */
    free_list(left);
    run_free(&r);
    remove_tree(out);
    remove_tree(dir);
    free(out);
    free(dir);
    free(file);
}

/* A 4-clique count out of core (induced parts, each made on a thread of its own while the
 * part before joins) under every allocation failure: the count, or exit 3 with a message. */
static void test_alloc_faults_capped_cliques(void)
{
    char *dir = make_temp_dir();
    CU_ASSERT_FATAL(dir != NULL);
    char *graph = path2(dir, "g.txt");
    FILE *f = fopen(graph, "w");
    CU_ASSERT_FATAL(f != NULL);
    for (unsigned a = 0; a < 40; a++)   /* dense: every fourth pair (a, b), a < b */
        for (unsigned b = a + 1; b < 40; b++)
            if ((a * 7 + b * 13) % 4 == 0)
                fprintf(f, "%u %u\n", a, b);
    fclose(f);
    char *argv[] = {(char *)env_or("RFX_TEST_BIN", RFX_BIN), "cliques", "-k", "4", "--count", "--backend=cpu", "-j2",
                    "--device-memory=2K", "g.txt", NULL};
    run_result whole = run_prog(dir, argv);
    CU_ASSERT_EQUAL_FATAL(whole.code, 0);
    int runs = 0;
    for (int n = 1; n < 100000; n++, runs++) {
        char fault[64];
        snprintf(fault, sizeof fault, "RFX_FAULT_ALLOC=%d", n);
        char *env[] = {fault, "RFX_FAULT_REPORT=1", NULL};
        run_result r = run_prog_env(dir, argv, env);
        bool reached = !(r.err && strstr(r.err, "fault injection: not reached"));
        bool sanitizer = r.err && (strstr(r.err, "Sanitizer") || strstr(r.err, "runtime error"));
        bool ok = !sanitizer && (r.code == 0 ? r.out && strcmp(r.out, whole.out) == 0
                                             : r.code == 3 && r.err && strstr(r.err, "out of memory"));
        if (!ok)
            fprintf(stderr, "\n    capped cliques with %s: exit %d\n%s", fault, r.code, r.err ? r.err : "");
        CU_ASSERT(ok);
        run_free(&r);
        if (!reached || !ok)
            break;
    }
    printf("(%d runs) ", runs);
    CU_ASSERT(runs >= 20);
    run_free(&whole);
    remove_tree(dir);
    free(dir);
    free(graph);
}

static void add(void)
{
    CU_pSuite s = CU_add_suite("fault-injection", NULL, NULL);
    CU_add_test(s, "every allocation failure ends cleanly", test_alloc_faults);
    CU_add_test(s, "every write failure ends cleanly", test_write_faults);
    CU_add_test(s, "every device allocation failure ends cleanly", test_device_faults);
    CU_add_test(s, "a result bigger than the memory available ends cleanly", test_host_memory);
    CU_add_test(s, "every allocation failure of a capped 4-clique count ends cleanly", test_alloc_faults_capped_cliques);
}

int main(int argc, char **argv)
{
    return run_suites(argc, argv, add);
}
