/* test_ooc.c: out-of-core execution (runtime/backend_ooc.c) gives the uncapped results.
 * Random graphs go through programs that use every operator that can run in parts
 * (joins, unions, differences, sorts, aggregates, arithmetic, products, leapfrog
 * triejoins listing and counting); each relation after a run under a device-memory cap
 * must equal, tuple for tuple, the run without one. The backend is `auto`; on the CPU
 * the cap is a rule kept by the same code as a device's budget. With RFX_BACKEND=cuda
 * the inputs and caps are larger (a device needs room for an operator's scratch). */
#include "harness.h"
#include "rfx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The tuning settings of the engines the tests open (rfx_config.tune), "" for defaults. */
static char tune[256];

static const char *program =
    ".decl edge(x: number, y: number)\n"
    ".decl node(x: number)\n"
    ".decl path(x: number, y: number)\n"
    ".decl unreached(x: number, y: number)\n"
    ".decl degree(x: number, n: number)\n"
    ".decl heavy(x: number, s: number, lo: number, hi: number)\n"
    ".decl mix(x: number, y: number, s: number)\n"
    ".decl triangle(x: number, y: number, z: number)\n"
    ".decl sg(x: number, y: number)\n"
    "node(x) :- edge(x, _).\n"
    "node(y) :- edge(_, y).\n"
    "path(x, y) :- edge(x, y).\n"
    "path(x, z) :- path(x, y), edge(y, z).\n"
    "unreached(x, y) :- node(x), node(y), x < y + 3, !path(x, y).\n"
    "degree(x, n) :- node(x), n = count : { edge(x, _) }.\n"
    "heavy(x, s, lo, hi) :- node(x), s = sum y : { path(x, y) }, lo = min y : { path(x, y) },\n"
    "                       hi = max y : { path(x, y) }.\n"
    "mix(x, y, s) :- path(x, y), s = x * 7 - y, s % 3 != 0.\n"
    "triangle(x, y, z) :- edge(x, y), edge(y, z), edge(x, z), x < y, y < z.\n"
    "sg(x, y) :- edge(p, x), edge(p, y), x != y.\n"
    "sg(x, y) :- edge(a, x), sg(a, b), edge(b, y).\n";

static const char *const relations[] = {"node", "path", "unreached", "degree", "heavy", "mix", "triangle", "sg"};
enum { NREL = sizeof relations / sizeof *relations };

static bool on_cuda(void)
{
    const char *b = getenv("RFX_BACKEND");
    return b && strcmp(b, "cuda") == 0;
}

/* An engine's settings for a run under cap (0: none) with the tests' tuning: two threads,
 * the CUDA backend with RFX_BACKEND=cuda, else the CPU's, whose out-of-core layer keeps
 * the cap as a device's budget. */
static rfx_config capped_config(size_t cap)
{
    rfx_config cfg;
    rfx_config_init(&cfg);
    cfg.threads = 2;
    cfg.device_memory = cap;
    cfg.backend = on_cuda() ? RFX_BACKEND_CUDA : RFX_BACKEND_CPU;
    cfg.tune = tune;
    return cfg;
}

/* A random graph: nodes [0, n), m edges, a denser core so triangles occur (deterministic). */
static int32_t *random_graph(int n, int m, unsigned seed)
{
    int32_t *e = malloc(sizeof(int32_t) * 2 * (size_t)m);
    unsigned s = seed;
    for (int i = 0; i < m; i++) {
        s = s * 1103515245u + 12345u;
        int a = (int)((s >> 8) % (unsigned)(i % 3 == 0 ? n / 8 + 1 : n));
        s = s * 1103515245u + 12345u;
        int b = (int)((s >> 8) % (unsigned)(i % 3 == 0 ? n / 8 + 1 : n));
        e[2 * i] = a;
        e[2 * i + 1] = b;
    }
    return e;
}

/* Every relation's tuples as text, one per line, in cursor order. */
typedef struct result {
    char *text[NREL];
    size_t size[NREL];
    bool ok;
} result;

static char *relation_text(rfx_engine *e, const char *rel, size_t *count)
{
    rfx_cursor *c = rfx_cursor_open(e, rel);
    if (!c)
        return NULL;
    size_t cap = 1024, len = 0;
    char *buf = malloc(cap);
    buf[0] = 0;
    const rfx_value *t;
    int a = rfx_cursor_arity(c);
    *count = rfx_cursor_count(c);
    while ((t = rfx_cursor_next(c))) {
        for (int k = 0; k < a; k++) {
            if (len + 16 >= cap)
                buf = realloc(buf, cap *= 2);
            len += (size_t)snprintf(buf + len, cap - len, "%d%c", t[k].i, k + 1 < a ? '\t' : '\n');
        }
    }
    rfx_cursor_close(c);
    return buf;
}

static result run(const int32_t *edges, int m, size_t cap)
{
    result r = {{0}, {0}, false};
    rfx_config cfg = capped_config(cap);
    rfx_engine *e = rfx_open(&cfg);
    if (!e || rfx_load_string(e, program, "ooc.dl") || rfx_insert_numbers(e, "edge", edges, (size_t)m) || rfx_run(e)) {
        fprintf(stderr, "\n    run with cap %zu failed: %s", cap, e ? rfx_errmsg(e) : "no engine");
        rfx_close(e);
        return r;
    }
    r.ok = true;
    for (int k = 0; k < NREL; k++) {
        r.text[k] = relation_text(e, relations[k], &r.size[k]);
        r.ok &= r.text[k] != NULL;
    }
    rfx_close(e);
    return r;
}

static void free_result(result *r)
{
    for (int k = 0; k < NREL; k++)
        free(r->text[k]);
}

static void check_caps(int n, int m, unsigned seed, const size_t *caps, int ncaps)
{
    int32_t *edges = random_graph(n, m, seed);
    result want = run(edges, m, 0);
    CU_ASSERT_FATAL(want.ok);
    CU_ASSERT(want.size[1] > (size_t)m);     /* the closure is larger than its input */
    CU_ASSERT(want.size[6] > 0);             /* triangles occur */
    /* set operations and sorts that do not fit by the host's cores and loops by key ranges
     * (the defaults), then set operations in parts on the backend (ooc_merges_on_device),
     * then loops whole (split_loops=0) */
    static const char *const modes[] = {"merges on the host", "merges in parts", "loops whole"};
    for (int mode = 0; mode < 3; mode++) {
        char outer[sizeof tune / 2];
        snprintf(outer, sizeof outer, "%.100s", tune);
        if (mode)
            snprintf(tune, sizeof tune, "%s %s", outer, mode == 1 ? "ooc_merges_on_device=1" : "split_loops=0");
        for (int c = 0; c < ncaps; c++) {
            result got = run(edges, m, caps[c]);
            CU_ASSERT(got.ok);
            for (int k = 0; k < NREL && got.ok; k++) {
                bool same = strcmp(want.text[k], got.text[k]) == 0;
                if (!same) {
                    fprintf(stderr, "\n    %s differs under a cap of %zu bytes, %s (%zu tuples, expected %zu)",
                            relations[k], caps[c], modes[mode], got.size[k], want.size[k]);
                    show_diff(relations[k], want.text[k], got.text[k]);
                }
                CU_ASSERT(same);
            }
            free_result(&got);
        }
        snprintf(tune, sizeof tune, "%s", outer);
    }
    free_result(&want);
    free(edges);
}

/* Caps from far below the inputs (everything in parts, variables moving to the host) to
 * about their size (only the large relations out of core). */
static void test_small_graph(void)
{
    static const size_t cpu_caps[] = {512, 4096, 65536}, gpu_caps[] = {1 << 20, 4 << 20};
    if (on_cuda())
        check_caps(3000, 9000, 7, gpu_caps, 2);
    else
        check_caps(120, 300, 7, cpu_caps, 3);
}

static void test_larger_graph(void)
{
    static const size_t cpu_caps[] = {32768, 1 << 20}, gpu_caps[] = {8 << 20, 64 << 20};
    if (on_cuda())
        check_caps(6000, 15000, 11, gpu_caps, 2);
    else
        check_caps(600, 1500, 11, cpu_caps, 2);
}

/* Every operator needing more scratch than the cap (a device's fixed scratch beside a cap
 * of a few kilobytes): even one-row parts fail, and the commands run whole on the CPU. */
static void test_parts_too_small(void)
{
    static const size_t caps[] = {1024};
    if (on_cuda())
        return;   /* cpu_scratch acts on the CPU backend only */
    snprintf(tune, sizeof tune, "cpu_scratch=4096");
    check_caps(120, 300, 7, caps, 1);
    tune[0] = 0;
}

/* Runs src (a program over edge) on the edges under cap, printing into out and the
 * profile and trace where given (NULL: none); the engine, run, for the caller to read and
 * close. */
static rfx_engine *run_capped(const char *src, const int32_t *edges, int m, size_t cap, FILE *out, FILE *profile,
                              FILE *trace)
{
    rfx_config cfg = capped_config(cap);
    cfg.out = out;
    cfg.profile = profile;
    cfg.trace = trace;
    rfx_engine *e = rfx_open(&cfg);
    CU_ASSERT_FATAL(e != NULL);
    if (rfx_load_string(e, src, "ooc.dl") || rfx_insert_numbers(e, "edge", edges, (size_t)m) || rfx_run(e)) {
        fprintf(stderr, "\n    a run under a cap of %zu failed: %s", cap, rfx_errmsg(e));
        CU_FAIL("run under a cap");
    }
    return e;
}

/* The first line out holds into line ("" if none); out closed. */
static void first_line(FILE *out, char *line, size_t len)
{
    rewind(out);
    if (!fgets(line, (int)len, out))
        line[0] = 0;
    fclose(out);
}

/* Runs src on the edges under cap: the first line it prints into line, and its profile,
 * rewound, returned for the caller to read and close. */
static FILE *run_profiled(const char *src, const int32_t *edges, int m, size_t cap, char *line, size_t len)
{
    FILE *out = tmpfile(), *prof = tmpfile();
    CU_ASSERT_FATAL(out != NULL && prof != NULL);
    rfx_close(run_capped(src, edges, m, cap, out, prof, NULL));
    first_line(out, line, len);
    rewind(prof);
    return prof;
}

/* The triangle program alone, counted (a count-only leapfrog triejoin, boxed). */
static const char *triangle_count = ".decl edge(x: number, y: number)\n"
                                    ".decl tri(x: number, y: number, z: number)\n"
                                    "tri(x, y, z) :- edge(x, y), edge(y, z), edge(x, z), x < y, y < z.\n"
                                    ".printsize tri\n";

static void test_count_only(void)
{
    int n = on_cuda() ? 50000 : 2000, m = on_cuda() ? 400000 : 12000;
    int32_t *edges = random_graph(n, m, 3);
    char line[2][64] = {"", ""};
    size_t caps[2] = {0, on_cuda() ? (size_t)1 << 20 : 8192};
    for (int c = 0; c < 2; c++)
        fclose(run_profiled(triangle_count, edges, m, caps[c], line[c], sizeof line[c]));
    CU_ASSERT(strncmp(line[0], "tri\t", 4) == 0 && atol(line[0] + 4) > 0);
    CU_ASSERT_STRING_EQUAL(line[0], line[1]);
    free(edges);
}

/* The number before `what` in a profile's line, else was. */
static double text_mb(const char *text, const char *what, double was)
{
    const char *at = strstr(text, what);
    while (at && at > text && at[-1] != ' ')
        at--;
    return at ? atof(at) : was;
}

/* The rows a triejoin reads from the host are registered as they land there and released
 * once, whichever way they leave (spilled, uploaded, replaced, dropped, closed), and so are
 * the TrieArrays made of those a join copies as TrieArrays: check_pins makes the
 * CPU check that bookkeeping (it aborts on a broken rule; it also takes TrieArrays of
 * two-column sources, as a device's count by parts does, and checks each one a join is
 * given is its rows'), and pin_from=0 registers inputs of any size. The whole program
 * under every cap and mode, then two triangle counts, whose profiles say what was
 * registered and made. */
static void test_pinned_inputs(void)
{
    snprintf(tune, sizeof tune, "check_pins=1 pin_from=0");
    size_t caps[] = {on_cuda() ? (size_t)2 << 20 : 4096, on_cuda() ? (size_t)6 << 20 : 32768};
    check_caps(on_cuda() ? 3000 : 300, on_cuda() ? 12000 : 1200, 11, caps, 2);
    int n = on_cuda() ? 20000 : 2000, m = on_cuda() ? 150000 : 12000;
    int32_t *edges = random_graph(n, m, 7);
    /* the filtered count joins two relations (on a device, boxes); one_relation is a
     * device's count by parts, which copies the TrieArray's slices */
    static const char *one_relation = ".decl edge(x: number, y: number)\n"
                                      ".decl tri(x: number, y: number, z: number)\n"
                                      "tri(x, y, z) :- edge(x, y), edge(y, z), edge(x, z).\n"
                                      ".printsize tri\n";
    const char *programs[2] = {triangle_count, one_relation};
    for (int p = 0; p < 2; p++) {
        char line[2][64] = {"", ""};
        double mb = 0, trie_mb = 0;
        for (int c = 0; c < 2; c++) {
            FILE *prof = run_profiled(programs[p], edges, m, c ? (on_cuda() ? (size_t)1 << 20 : 8192) : 0, line[c],
                                      sizeof line[c]);
            char text[1024];
            while (fgets(text, sizeof text, prof)) {
                mb = text_mb(text, " MB of a triejoin's host inputs registered", mb);
                trie_mb = text_mb(text, " MB of TrieArrays made of them", trie_mb);
            }
            fclose(prof);
        }
        CU_ASSERT(strncmp(line[0], "tri\t", 4) == 0 && atol(line[0] + 4) > 0);
        CU_ASSERT_STRING_EQUAL(line[0], line[1]);
        CU_ASSERT(mb >= 8.0 * m * 1e-6 * 0.5);   /* the edges (deduplicated) were registered */
        if (p || !on_cuda())   /* and their TrieArray (about half their bytes) */
            CU_ASSERT(trie_mb > 0 && trie_mb <= mb);
    }
    tune[0] = 0;
    free(edges);
}

/* 4- and 5-cliques over an oriented graph, listed and counted, under caps that cut the
 * relation into many parts: the plan joins them by induced parts (lftj/induced.c). On a
 * device each part's subgraph is made by the device from the relation in host memory
 * (induced_device=1, the default; a trace then shows its parts), the next part beside each
 * join (induced_overlap=1, the default) or after it, or on the host (induced_device=0).
 * Every run must list and count what the uncapped one does. */
static const char *cliques_src = ".decl edge(x: number, y: number)\n"
                                 ".decl e(x: number, y: number)\n"
                                 "e(x, y) :- edge(x, y), x < y.\n"
                                 "e(y, x) :- edge(x, y), y < x.\n"
                                 ".decl k4(a: number, b: number, c: number, d: number)\n"
                                 "k4(a, b, c, d) :- e(a, b), e(a, c), e(a, d), e(b, c), e(b, d), e(c, d).\n"
                                 ".decl k5(a: number, b: number, c: number, d: number, f: number)\n"
                                 "k5(a, b, c, d, f) :- e(a, b), e(a, c), e(a, d), e(a, f), e(b, c), e(b, d),\n"
                                 "                     e(b, f), e(c, d), e(c, f), e(d, f).\n"
                                 ".printsize k5\n";

typedef struct clique_result {
    char *k4;
    size_t n4;
    char line[64];             /* the count of k5 */
    bool device_parts;         /* the trace shows parts whose subgraphs the device made */
} clique_result;

static clique_result clique_run(const int32_t *edges, int m, size_t cap)
{
    clique_result r = {NULL, 0, "", false};
    FILE *out = tmpfile(), *trace = tmpfile();
    CU_ASSERT_FATAL(out != NULL && trace != NULL);
    rfx_engine *e = run_capped(cliques_src, edges, m, cap, out, NULL, trace);
    r.k4 = relation_text(e, "k4", &r.n4);
    rfx_close(e);
    first_line(out, r.line, sizeof r.line);
    rewind(trace);
    char text[4096];
    while (fgets(text, sizeof text, trace))   /* the device's span around all its parts */
        r.device_parts |= strstr(text, "\"induced parts ") != NULL;
    fclose(trace);
    return r;
}

static void test_cliques_by_induced_parts(void)
{
    int n = on_cuda() ? 20000 : 300, m = on_cuda() ? 400000 : 4000;
    int32_t *edges = random_graph(n, m, 5);
    clique_result want = clique_run(edges, m, 0);
    CU_ASSERT_FATAL(want.k4 != NULL);
    CU_ASSERT(want.n4 > 0);
    CU_ASSERT(strncmp(want.line, "k5\t", 3) == 0 && atol(want.line + 3) > 0);
    /* the oriented relation's bytes: a cap of a quarter and of a sixteenth of them */
    const size_t rel = (size_t)m * 8;
    const size_t caps[] = {on_cuda() ? rel / 4 : rel / 8, on_cuda() ? rel / 16 : rel / 32};
    /* device-made parts, the next made beside each join (the default) or after it; host-made parts */
    static const char *const modes[] = {"", "induced_overlap=0", "induced_device=0"};
    for (int mode = 0; mode < (on_cuda() ? 3 : 1); mode++) {
        snprintf(tune, sizeof tune, "%s", modes[mode]);
        for (int c = 0; c < 2; c++) {
            clique_result got = clique_run(edges, m, caps[c]);
            CU_ASSERT(got.k4 && strcmp(got.k4, want.k4) == 0);
            CU_ASSERT_STRING_EQUAL(got.line, want.line);
            if (on_cuda())
                CU_ASSERT(got.device_parts == (mode < 2));
            free(got.k4);
        }
    }
    tune[0] = 0;
    free(want.k4);
    free(edges);
}

/* The closure's loop under a cap: run by ranges of x (its recursion keeps x), nested
 * where a range outgrows the budget again, and whole with split_loops=0; the same
 * paths either way, and the profile says which ran. */
static void test_loop_by_ranges(void)
{
    static const char *src = ".decl edge(x: number, y: number)\n"
                             ".decl path(x: number, y: number)\n"
                             "path(x, y) :- edge(x, y).\n"
                             "path(x, z) :- path(x, y), edge(y, z).\n"
                             ".printsize path\n";
    int n = on_cuda() ? 4000 : 400, m = on_cuda() ? 9000 : 900;
    int32_t *edges = random_graph(n, m, 5);
    char size[3][64] = {"", "", ""};
    size_t caps[3] = {0, on_cuda() ? (size_t)4 << 20 : 65536, on_cuda() ? (size_t)4 << 20 : 65536};
    bool split[3] = {false, false, false};
    for (int c = 0; c < 3; c++) {
        snprintf(tune, sizeof tune, "%s", c == 2 ? "split_loops=0" : "");
        FILE *prof = run_profiled(src, edges, m, caps[c], size[c], sizeof size[c]);
        char line[512];
        size_t splits = 0, ranges = 0;
        while (fgets(line, sizeof line, prof))
            if (sscanf(line, "loops run by key ranges: %zu splits, the loop run on %zu ranges", &splits, &ranges) == 2)
                split[c] = splits > 1 && ranges > splits;   /* some range was cut again */
        fclose(prof);
    }
    tune[0] = 0;
    CU_ASSERT(strncmp(size[0], "path\t", 5) == 0 && atol(size[0] + 5) > 20 * m);
    CU_ASSERT_STRING_EQUAL(size[0], size[1]);
    CU_ASSERT_STRING_EQUAL(size[0], size[2]);
    CU_ASSERT(!split[0]);
    CU_ASSERT(split[1]);
    CU_ASSERT(!split[2]);
    free(edges);
}

static void add(void)
{
    CU_pSuite s = CU_add_suite("out of core", NULL, NULL);
    CU_add_test(s, "small graph, caps far below the inputs", test_small_graph);
    CU_add_test(s, "larger graph, caps about the inputs", test_larger_graph);
    CU_add_test(s, "counting triangles box by box", test_count_only);
    CU_add_test(s, "cliques by induced parts, their subgraphs made by the host or the device", test_cliques_by_induced_parts);
    CU_add_test(s, "a closure's loop by key ranges", test_loop_by_ranges);
    CU_add_test(s, "a triejoin's host inputs registered as they land, released once", test_pinned_inputs);
    CU_add_test(s, "commands whose one-row parts do not fit run on the CPU", test_parts_too_small);
}

int main(int argc, char **argv)
{
    return run_suites(argc, argv, add);
}
