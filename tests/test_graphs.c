/* test_graphs.c: the Datalog programs on real SNAP graphs (../shared/data/graphs):
 * triangle counts of every graph and 4-clique counts of those under 100,000 undirected
 * edges equal MANIFEST.tsv; transitive closure and same generation sizes equal those of
 * Souffle 2.5 (graphs read as their first two columns, directed, self-loops kept).
 * Runs on the CPU backend through the library, with two threads. */
#include "harness.h"
#include "rfx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct graph_test {
    char name[160];
    char file[128];
    const char *rules;         /* program body after the edge declaration */
    const char *result;        /* relation whose size is checked */
    long long expected;
} graph_test;

static graph_test tests[70];
static int ntests;
static const char *graphs_dir;

static const char *undirected =
    ".decl e(x: number, y: number)\n"
    "e(x, y) :- edge(x, y), x < y.\n"
    "e(y, x) :- edge(x, y), y < x.\n";

static const char *tri_rules =
    ".decl tri(x: number, y: number, z: number)\n"
    "tri(x, y, z) :- e(x, y), e(y, z), e(x, z).\n";

static const char *clique_rules =
    ".decl c4(w: number, x: number, y: number, z: number)\n"
    "c4(w, x, y, z) :- e(w, x), e(w, y), e(w, z), e(x, y), e(x, z), e(y, z).\n";

static const char *tc_rules =
    ".decl path(x: number, y: number)\n"
    "path(x, y) :- edge(x, y).\n"
    "path(x, z) :- path(x, y), edge(y, z).\n";

static const char *sg_rules =
    ".decl sg(x: number, y: number)\n"
    "sg(x, y) :- edge(p, x), edge(p, y), x != y.\n"
    "sg(x, y) :- edge(a, x), sg(a, b), edge(b, y).\n";

/* Runs the program and returns the size printed for `result`, or -1. */
static long long run_size(const graph_test *t)
{
    char *src = NULL;
    bool und = t->rules == tri_rules || t->rules == clique_rules;
    if (asprintf(&src, ".decl edge(x: number, y: number)\n.input edge(filename=\"%s/%s\", format=\"edges\")\n%s%s.printsize %s\n",
                 graphs_dir, t->file, und ? undirected : "", t->rules, t->result) < 0)
        return -1;
    rfx_config cfg;
    rfx_config_init(&cfg);
    cfg.backend = RFX_BACKEND_CPU;
    cfg.threads = 2;
    cfg.fact_dir = ".";
    cfg.diag = stderr;
    rfx_engine *e = rfx_open(&cfg);
    size_t n = 0;
    bool ok = e && rfx_load_string(e, src, t->name) == RFX_EXIT_OK && rfx_run(e) == RFX_EXIT_OK &&
              rfx_size(e, t->result, &n) == RFX_EXIT_OK;
    free(src);
    rfx_close(e);
    return ok ? (long long)n : -1;
}

static void run_test(int i)
{
    long long got = run_size(&tests[i]);
    if (got != tests[i].expected)
        fprintf(stderr, "\n    %s: got %lld, expected %lld\n", tests[i].name, got, tests[i].expected);
    CU_ASSERT_EQUAL(got, tests[i].expected);
}

#define T1(n) static void graph_##n(void) { run_test(n); }
#define T10(n) T1(n##0) T1(n##1) T1(n##2) T1(n##3) T1(n##4) T1(n##5) T1(n##6) T1(n##7) T1(n##8) T1(n##9)
T1(0) T1(1) T1(2) T1(3) T1(4) T1(5) T1(6) T1(7) T1(8) T1(9)
T10(1) T10(2) T10(3) T10(4) T10(5) T10(6)
#define R1(n) graph_##n,
#define R10(n) R1(n##0) R1(n##1) R1(n##2) R1(n##3) R1(n##4) R1(n##5) R1(n##6) R1(n##7) R1(n##8) R1(n##9)
static void (*const trampolines[])(void) = {
    R1(0) R1(1) R1(2) R1(3) R1(4) R1(5) R1(6) R1(7) R1(8) R1(9)
    R10(1) R10(2) R10(3) R10(4) R10(5) R10(6)
};

static void add_test(const char *kind, const char *file, const char *rules, const char *result, long long expected)
{
    if (ntests >= (int)(sizeof trampolines / sizeof trampolines[0]))
        return;
    graph_test *t = &tests[ntests++];
    snprintf(t->name, sizeof t->name, "%s %s", kind, file);
    snprintf(t->file, sizeof t->file, "%s", file);
    t->rules = rules;
    t->result = result;
    t->expected = expected;
}

static void add(void)
{
    graphs_dir = getenv("RFX_GRAPHS") ? getenv("RFX_GRAPHS") : RFX_GRAPHS_DIR;
    CU_pSuite s = CU_add_suite("snap-graphs", NULL, NULL);
    char *path;
    if (asprintf(&path, "%s/MANIFEST.tsv", graphs_dir) < 0)
        return;
    char *manifest = read_file(path, NULL);
    free(path);
    if (!manifest)
        return;
    /* columns: file source_repo source_path nodes undirected_edges triangles_computed
     *          triangles_published four_cliques_computed sha256 */
    char *save = NULL;
    for (char *line = strtok_r(manifest, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "file\t", 5) == 0)
            continue;
        char *f[9] = {0};
        int n = 0;
        for (char *p = line; n < 9 && p; n++) {
            f[n] = p;
            p = strchr(p, '\t');
            if (p)
                *p++ = 0;
        }
        if (n < 8)
            continue;
        long long edges = atoll(f[4]);
        add_test("triangles", f[0], tri_rules, "tri", atoll(f[5]));
        if (edges < 100000)
            add_test("4-cliques", f[0], clique_rules, "c4", atoll(f[7]));
    }
    free(manifest);
    add_test("transitive closure", "p2p-Gnutella08.txt", tc_rules, "path", 13148244);
    add_test("transitive closure", "ca-GrQc.txt", tc_rules, "path", 17293270);
    add_test("transitive closure", "ca-HepTh.txt", tc_rules, "path", 74619885);
    add_test("same generation", "p2p-Gnutella08.txt", sg_rules, "sg", 36347380);
    add_test("same generation", "ca-GrQc.txt", sg_rules, "sg", 17292337);
    for (int i = 0; i < ntests; i++)
        CU_add_test(s, tests[i].name, trampolines[i]);
}

int main(int argc, char **argv)
{
    const char *dir = getenv("RFX_GRAPHS") ? getenv("RFX_GRAPHS") : RFX_GRAPHS_DIR;
    char *manifest;
    if (asprintf(&manifest, "%s/MANIFEST.tsv", dir) < 0)
        return 2;
    bool have = access(manifest, R_OK) == 0;
    free(manifest);
    if (!have) {
        printf("test_graphs: skipped: no SNAP graphs (%s/MANIFEST.tsv; set RFX_GRAPHS)\n", dir);
        return RFX_TEST_SKIPPED;
    }
    return run_suites(argc, argv, add);
}
