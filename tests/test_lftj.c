/* test_lftj.c: the leapfrog triejoin on the CPU.
 * - rfx_cpu_lftj against a nested-loop join on random relations (one relation as a
 *   triangle, three relations, four variables over arity 2 and 3), listing and counting,
 *   one and four threads, duplicates and empty sources.
 * - Plans: LFTJ and binary-join plans list identical tuples for triangles and 4-cliques on
 *   random graphs (uniform and R-MAT), through librfx.
 * - `rfx cliques`: 3-, 4- and 5-clique counts and lists on small random graphs equal a
 *   brute-force count over the adjacency matrix; -o writes the list; errors.
 * - A relation only counted (count-only LFTJ) is planned again keeping its tuples when
 *   tuples are inserted into it; a cursor on it says why it cannot list.
 * - Boxing (out-of-core joins): with the inputs capped at 5%, 10%, 25% of their size and
 *   less, the boxed join lists and counts exactly what the whole join does; over an
 *   oriented graph the boxes without bindings are skipped (the same result); the CPU
 *   backend under --device-memory runs that code path. */
#include "graphgen.h"
#include "harness.h"
#include "lftj.h"
#include "rfx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 42;
static uint32_t rnd(uint32_t mod)
{
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (uint32_t)((z ^ (z >> 31)) % mod);
}

static rfx_rows random_rows(size_t n, int arity, uint32_t range, bool dedup)
{
    rfx_rows r;
    rfx_rows_init(&r, arity);
    rfx_rows_reserve(&r, n);
    for (size_t i = 0; i < n * (size_t)arity; i++)
        r.data[i] = rnd(range);
    r.n = n;
    rfx_cpu_sort(&r, 1);
    if (dedup)
        rfx_cpu_unique(&r, 1);
    return r;
}

/* Binary search of a sorted relation. */
static bool has_row(const rfx_rows *r, const uint32_t *t)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        const uint32_t *x = r->data + m * (size_t)r->arity;
        int c = 0;
        for (int i = 0; i < r->arity && !c; i++)
            c = x[i] < t[i] ? -1 : x[i] > t[i];
        if (!c)
            return true;
        if (c < 0)
            lo = m + 1;
        else
            hi = m;
    }
    return false;
}

/* Every binding over [0, range)^nvars whose projections are in every source: the
 * definition, in lexicographic order. */
static rfx_rows naive(const rfx_lftj_src *s, int nsrc, int nvars, uint32_t range)
{
    rfx_rows out;
    rfx_rows_init(&out, nvars);
    uint32_t b[8] = {0}, t[8];
    for (;;) {
        bool ok = true;
        for (int k = 0; k < nsrc && ok; k++) {
            for (int c = 0; c < s[k].rows->arity; c++)
                t[c] = b[s[k].colvar[c]];
            ok = has_row(s[k].rows, t);
        }
        if (ok)
            rfx_rows_push(&out, b);
        int v = nvars - 1;
        while (v >= 0 && ++b[v] == range)
            b[v--] = 0;
        if (v < 0)
            break;
    }
    return out;
}

static void check_query(const int *cv, const int *arity, int nsrc, int nvars, uint32_t range, size_t n, bool same_rel,
                        bool dedup)
{
    rfx_rows h[4];
    rfx_lftj_src s[4];
    for (int k = 0, off = 0; k < nsrc; k++) {
        h[k] = same_rel && k > 0 ? h[0] : random_rows(n, arity[k], range, dedup);
        s[k] = (rfx_lftj_src){&h[k], cv + off, NULL};
        off += arity[k];
    }
    rfx_rows want = naive(s, nsrc, nvars, range);
    /* boxed: the same bindings with the inputs capped to fractions of their size */
    size_t bytes = 0;
    for (int k = 0; k < nsrc; k++)
        bytes += h[k].n * sizeof(uint32_t) * (size_t)h[k].arity;
    const double fractions[] = {0.05, 0.10, 0.25, 0.01};
    for (size_t fi = 0; fi < sizeof fractions / sizeof fractions[0]; fi++) {
        size_t cap = (size_t)((double)bytes * fractions[fi]) + 1, nboxes = 0;
        rfx_rows got;
        rfx_rows_init(&got, nvars);
        uint64_t count = 0;
        CU_ASSERT_EQUAL(rfx_cpu_lftj_boxed(s, nsrc, nvars, cap, &got, NULL, 2, &nboxes, NULL), RFX_OK);
        CU_ASSERT_EQUAL(rfx_cpu_lftj_boxed(s, nsrc, nvars, cap, NULL, &count, 2, NULL, NULL), RFX_OK);
        CU_ASSERT(n < 100 || nboxes > 1);
        CU_ASSERT_EQUAL(count, want.n);
        CU_ASSERT(got.n == want.n &&
                  (want.n == 0 || memcmp(got.data, want.data, sizeof(uint32_t) * want.n * (size_t)nvars) == 0));
        rfx_rows_free(&got);
    }
    for (int threads = 1; threads <= 4; threads += 3) {
        rfx_rows got;
        rfx_rows_init(&got, nvars);
        uint64_t count = 0;
        CU_ASSERT_EQUAL(rfx_cpu_lftj(s, nsrc, nvars, &got, NULL, threads), RFX_OK);
        CU_ASSERT_EQUAL(rfx_cpu_lftj(s, nsrc, nvars, NULL, &count, threads), RFX_OK);
        CU_ASSERT_EQUAL(got.n, want.n);
        CU_ASSERT_EQUAL(count, want.n);
        CU_ASSERT(got.n == want.n &&
                  (want.n == 0 || memcmp(got.data, want.data, sizeof(uint32_t) * want.n * (size_t)nvars) == 0));
        rfx_rows_free(&got);
    }
    rfx_rows_free(&want);
    for (int k = 0; k < nsrc; k++)
        if (!(same_rel && k > 0))
            rfx_rows_free(&h[k]);
}

static void lftj_matches_nested_loops(void)
{
    static const int tri[] = {0, 1, 1, 2, 0, 2}, tri_ar[] = {2, 2, 2};
    static const int four[] = {0, 1, 2, 1, 3, 0, 3, 2, 3}, four_ar[] = {3, 2, 2, 2};
    static const int chain[] = {0, 1, 1, 2}, chain_ar[] = {2, 2};
    const size_t ns[] = {0, 1, 20, 150, 600};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        for (int dedup = 0; dedup < 2; dedup++) {
            uint32_t range = ns[i] < 100 ? 8 : 24;
            check_query(tri, tri_ar, 3, 3, range, ns[i], true, dedup);
            check_query(tri, tri_ar, 3, 3, range, ns[i], false, dedup);
            check_query(four, four_ar, 4, 4, 10, ns[i], false, dedup);
            check_query(chain, chain_ar, 2, 3, range, ns[i], false, dedup);
        }
    /* a big enough relation to be split over threads */
    check_query(tri, tri_ar, 3, 3, 60, 40000, true, true);
}

/* Boxes without bindings: over an oriented graph (x < y) an interval of x holds no y below
 * it, so the bounds skip about half the boxes; the join lists and counts the same with
 * and without them, for triangles (one relation three times) and 4-cliques. */
static void boxes_without_bindings_are_skipped(void)
{
    rfx_rows e;
    rfx_rows_init(&e, 2);
    rfx_rows_reserve(&e, 6000);
    for (int i = 0; i < 6000; i++) {
        uint32_t a = rnd(300), b = rnd(300);
        if (a == b)
            continue;
        uint32_t t[2] = {a < b ? a : b, a < b ? b : a};
        rfx_rows_push(&e, t);
    }
    rfx_cpu_sort(&e, 1);
    rfx_cpu_unique(&e, 1);
    static const int tri[] = {0, 1, 1, 2, 0, 2}, four[] = {0, 1, 0, 2, 0, 3, 1, 2, 1, 3, 2, 3};
    const int *cvs[] = {tri, four}, nsrcs[] = {3, 6}, nvars[] = {3, 4};
    for (int q = 0; q < 2; q++) {
        rfx_lftj_src s[6];
        for (int k = 0; k < nsrcs[q]; k++)
            s[k] = (rfx_lftj_src){&e, cvs[q] + 2 * k, NULL};
        rfx_rows want, got, plain;
        rfx_rows_init(&want, nvars[q]);
        rfx_rows_init(&got, nvars[q]);
        rfx_rows_init(&plain, nvars[q]);
        uint64_t count = 0, plain_count = 0;
        size_t cap = e.n * 8 / 10, boxes = 0, plain_boxes = 0;
        CU_ASSERT_EQUAL(rfx_cpu_lftj(s, nsrcs[q], nvars[q], &want, NULL, 2), RFX_OK);
        CU_ASSERT_EQUAL(rfx_cpu_lftj_boxed(s, nsrcs[q], nvars[q], cap, &got, NULL, 2, &boxes, NULL), RFX_OK);
        CU_ASSERT_EQUAL(rfx_cpu_lftj_boxed(s, nsrcs[q], nvars[q], cap, NULL, &count, 2, NULL, NULL), RFX_OK);
        rfx_tuning no_bounds = rfx_tuning_defaults;
        no_bounds.box_bounds = false;
        CU_ASSERT_EQUAL(rfx_cpu_lftj_boxed(s, nsrcs[q], nvars[q], cap, &plain, NULL, 2, &plain_boxes, &no_bounds), RFX_OK);
        CU_ASSERT_EQUAL(rfx_cpu_lftj_boxed(s, nsrcs[q], nvars[q], cap, NULL, &plain_count, 2, NULL, &no_bounds), RFX_OK);
        CU_ASSERT(want.n > 0);
        CU_ASSERT_EQUAL(count, want.n);
        CU_ASSERT_EQUAL(plain_count, want.n);
        CU_ASSERT(got.n == want.n && memcmp(got.data, want.data, sizeof(uint32_t) * want.n * (size_t)nvars[q]) == 0);
        CU_ASSERT(plain.n == want.n && memcmp(plain.data, want.data, sizeof(uint32_t) * want.n * (size_t)nvars[q]) == 0);
        CU_ASSERT(boxes > 1 && boxes * 10 < plain_boxes * 7);   /* well under the boxes with a slice each */
        rfx_rows_free(&want);
        rfx_rows_free(&got);
        rfx_rows_free(&plain);
    }
    rfx_rows_free(&e);
}

/* The partition bounds the first level: ids dense with one row each (as the low ranks of a
 * graph renamed by degree) would put 7/16 of the budget's rows, each a frontier element of
 * 4 + 8 * 3 bytes, in one outer interval; a sixth of the budget is what it may take. */
static void partition_bounds_first_level(void)
{
    rfx_rows e;
    rfx_rows_init(&e, 2);
    for (uint32_t x = 0; x < 100000; x++) {
        uint32_t t[2] = {x, x + 1};
        rfx_rows_push(&e, t);
    }
    static const int tri[] = {0, 1, 1, 2, 0, 2};
    rfx_lftj_src s[3];
    for (int k = 0; k < 3; k++)
        s[k] = (rfx_lftj_src){&e, tri + 2 * k, NULL};
    size_t budget = 200000;
    rfx_lftj_boxes b;
    CU_ASSERT_EQUAL_FATAL(rfx_lftj_partition(s, 3, 3, budget, NULL, &b), RFX_OK);
    CU_ASSERT(b.ncuts[0] > 2);
    size_t widest = 0;
    for (int i = 0; i + 1 < b.ncuts[0]; i++) {
        uint64_t lo = b.cuts[0][i], hi = b.cuts[0][i + 1] < 100000 ? b.cuts[0][i + 1] : 100000;
        widest = hi - lo > widest ? (size_t)(hi - lo) : widest;
    }
    CU_ASSERT(widest * 28 <= budget / 6);
    CU_ASSERT(widest * 28 * 2 > budget / 6);   /* and not much narrower */
    rfx_lftj_boxes_free(&b);
    uint64_t count = 1;
    CU_ASSERT_EQUAL(rfx_cpu_lftj_boxed(s, 3, 3, budget, NULL, &count, 2, NULL, NULL), RFX_OK);
    CU_ASSERT_EQUAL(count, 0);   /* a path has no triangles */
    rfx_rows_free(&e);
}

/* ---- plans through librfx ------------------------------------------------------------- */
static const char *clique_src =
    ".decl edge(x: number, y: number)\n"
    ".decl e(x: number, y: number)\n"
    "e(x, y) :- edge(x, y), x < y.\n"
    "e(y, x) :- edge(x, y), y < x.\n"
    ".decl tri(x: number, y: number, z: number)\n"
    "tri(x, y, z) :- e(x, y), e(y, z), e(x, z).\n"
    ".decl k4(w: number, x: number, y: number, z: number)\n"
    "k4(w, x, y, z) :- e(w, x), e(w, y), e(w, z), e(x, y), e(x, z), e(y, z).\n"
    ".output tri\n.output k4\n";

/* The tuples of rel as text, one per line (malloc'ed). */
static char *listing(rfx_engine *e, const char *rel)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    rfx_cursor *c = rfx_cursor_open(e, rel);
    for (const rfx_value *t; c && (t = rfx_cursor_next(c));) {
        for (int i = 0; i < rfx_cursor_arity(c); i++)
            fprintf(f, "%d ", t[i].i);
        fputc('\n', f);
    }
    rfx_cursor_close(c);
    fclose(f);
    return buf;
}

static void plans_agree(rfx_graph_kind kind, uint32_t n, size_t m, uint64_t seed)
{
    uint32_t *edges = malloc(sizeof(uint32_t) * 2 * m);
    rfx_graph_generate(kind, n, m, seed, edges);
    char *out[2][2];
    size_t sizes[2][2];
    for (int plan = 0; plan < 2; plan++) {
        rfx_config cfg;
        rfx_config_init(&cfg);
        cfg.backend = RFX_BACKEND_CPU;
        cfg.threads = 2;
        cfg.join = plan ? RFX_JOIN_LFTJ : RFX_JOIN_BINARY;
        rfx_engine *e = rfx_open(&cfg);
        CU_ASSERT_EQUAL_FATAL(rfx_load_string(e, clique_src, "cliques.dl"), RFX_EXIT_OK);
        CU_ASSERT_EQUAL(rfx_insert_numbers(e, "edge", (const int32_t *)edges, m), RFX_EXIT_OK);
        CU_ASSERT_EQUAL(rfx_run(e), RFX_EXIT_OK);
        out[plan][0] = listing(e, "tri");
        out[plan][1] = listing(e, "k4");
        rfx_size(e, "tri", &sizes[plan][0]);
        rfx_size(e, "k4", &sizes[plan][1]);
        rfx_close(e);
    }
    CU_ASSERT(sizes[0][0] > 0);      /* the graphs are dense enough to have triangles */
    for (int r = 0; r < 2; r++) {
        CU_ASSERT_EQUAL(sizes[0][r], sizes[1][r]);
        CU_ASSERT_STRING_EQUAL(out[0][r], out[1][r]);
        free(out[0][r]);
        free(out[1][r]);
    }
    free(edges);
}

static void lftj_and_binary_plans_agree(void)
{
    plans_agree(RFX_GRAPH_UNIFORM, 60, 600, 1);
    plans_agree(RFX_GRAPH_UNIFORM, 400, 6000, 2);
    plans_agree(RFX_GRAPH_RMAT, 1024, 16384, 3);
    plans_agree(RFX_GRAPH_RMAT, 4096, 65536, 4);
}

/* ---- rfx cliques against brute force -------------------------------------------------- */
static uint64_t brute(const bool *adj, int n, int k, int *stack, int depth, int from)
{
    if (depth == k)
        return 1;
    uint64_t c = 0;
    for (int v = from; v < n; v++) {
        bool ok = true;
        for (int i = 0; i < depth && ok; i++)
            ok = adj[stack[i] * n + v];
        if (ok) {
            stack[depth] = v;
            c += brute(adj, n, k, stack, depth + 1, v + 1);
        }
    }
    return c;
}

static void cliques_command_counts(void)
{
    char *dir = make_temp_dir();
    for (int gi = 0; gi < 3; gi++) {
        int n = gi == 2 ? 256 : 40 + 30 * gi;
        size_t m = gi == 2 ? 4096 : (size_t)n * 6;
        uint32_t *edges = malloc(sizeof(uint32_t) * 2 * m);
        rfx_graph_generate(gi == 2 ? RFX_GRAPH_RMAT : RFX_GRAPH_UNIFORM, (uint32_t)n, m, 10 + (uint64_t)gi, edges);
        bool *adj = calloc((size_t)n * (size_t)n, 1);
        char path[600];
        snprintf(path, sizeof path, "%s/g%d.txt", dir, gi);
        FILE *f = fopen(path, "w");
        fprintf(f, "# random graph\n");
        for (size_t i = 0; i < m; i++) {
            fprintf(f, "%u\t%u\n", edges[2 * i], edges[2 * i + 1]);
            if (edges[2 * i] != edges[2 * i + 1])
                adj[edges[2 * i] * (uint32_t)n + edges[2 * i + 1]] = adj[edges[2 * i + 1] * (uint32_t)n + edges[2 * i]] = true;
        }
        fclose(f);
        for (int k = 3; k <= 5; k++) {
            int stack[8];
            uint64_t want = brute(adj, n, k, stack, 0, 0);
            char ks[8], wants[32];
            snprintf(ks, sizeof ks, "%d", k);
            snprintf(wants, sizeof wants, "%llu\n", (unsigned long long)want);
            char *argv[] = {(char *)env_or("RFX_TEST_BIN", RFX_BIN), "cliques", "-k", ks, "--count", "-j", "2", path, NULL};
            run_result r = run_prog(dir, argv);
            CU_ASSERT_EQUAL(r.code, 0);
            CU_ASSERT_PTR_NOT_NULL(r.out);
            if (r.out && strcmp(r.out, wants) != 0)
                fprintf(stderr, "\n    %d-cliques of g%d: got %s, brute force %s", k, gi, r.out, wants);
            CU_ASSERT(r.out && strcmp(r.out, wants) == 0);
            run_free(&r);
            /* the list: as many lines, each ascending and a clique */
            char *argv2[] = {(char *)env_or("RFX_TEST_BIN", RFX_BIN), "cliques", "-k", ks, "-o", "list.txt", path, NULL};
            r = run_prog(dir, argv2);
            CU_ASSERT_EQUAL(r.code, 0);
            run_free(&r);
            char lp[700];
            snprintf(lp, sizeof lp, "%s/list.txt", dir);
            char *list = read_file(lp, NULL);
            CU_ASSERT_PTR_NOT_NULL_FATAL(list);
            uint64_t lines = 0;
            bool ok = true;
            for (char *p = list; *p; lines++) {
                int v[8];
                for (int i = 0; i < k; i++)
                    v[i] = (int)strtol(p, &p, 10);
                for (int i = 0; i < k; i++)
                    for (int j = i + 1; j < k; j++)
                        ok &= v[i] < v[j] && adj[v[i] * n + v[j]];
                while (*p && *p != '\n')
                    p++;
                if (*p)
                    p++;
            }
            CU_ASSERT(ok);
            CU_ASSERT_EQUAL(lines, want);
            free(list);
        }
        free(adj);
        free(edges);
    }
    /* errors: a bad k, a missing graph (and no list file left behind) */
    char *bad_k[] = {(char *)env_or("RFX_TEST_BIN", RFX_BIN), "cliques", "-k", "1", "x.txt", NULL};
    run_result r = run_prog(dir, bad_k);
    CU_ASSERT_EQUAL(r.code, 2);
    CU_ASSERT_PTR_NOT_NULL(r.err && strstr(r.err, "-k takes a clique size"));
    run_free(&r);
    char *missing[] = {(char *)env_or("RFX_TEST_BIN", RFX_BIN), "cliques", "-o", "none.txt", "missing.txt", NULL};
    r = run_prog(dir, missing);
    CU_ASSERT_EQUAL(r.code, 2);
    CU_ASSERT_PTR_NOT_NULL(r.err && strstr(r.err, "missing.txt"));
    run_free(&r);
    char np[700];
    snprintf(np, sizeof np, "%s/none.txt", dir);
    CU_ASSERT_FALSE(file_exists(np));
    remove_tree(dir);
    free(dir);
}

/* ---- count-only relations --------------------------------------------------------------- */
static void count_only_relations(void)
{
    const char *src = ".decl e(x: number, y: number)\n"
                      ".decl tri(x: number, y: number, z: number)\n"
                      "tri(x, y, z) :- e(x, y), e(y, z), e(x, z).\n"
                      ".printsize tri\n";
    char *plan = NULL;
    size_t len = 0;
    rfx_config cfg;
    rfx_config_init(&cfg);
    cfg.backend = RFX_BACKEND_CPU;
    rfx_engine *e = rfx_open(&cfg);
    CU_ASSERT_EQUAL_FATAL(rfx_load_string(e, src, "tri.dl"), RFX_EXIT_OK);
    FILE *f = open_memstream(&plan, &len);
    rfx_emit(e, RFX_STAGE_PLAN, f);
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(plan, "tri = LFTJ e($0, $1), e($1, $2), e($0, $2) vars=3 count-only"));
    free(plan);
    int32_t edges[] = {1, 2, 2, 3, 1, 3, 3, 4, 2, 4};
    CU_ASSERT_EQUAL(rfx_insert_numbers(e, "e", edges, 5), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_run(e), RFX_EXIT_OK);
    size_t n = 0;
    CU_ASSERT_EQUAL(rfx_size(e, "tri", &n), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_PTR_NULL(rfx_cursor_open(e, "tri"));
    CU_ASSERT_PTR_NOT_NULL(strstr(rfx_errmsg(e), "counted, not listed"));
    /* a tuple inserted into the counted relation itself: planned again, kept and counted */
    int32_t extra[] = {7, 8, 9};
    CU_ASSERT_EQUAL(rfx_insert_numbers(e, "tri", extra, 1), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_run(e), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_size(e, "tri", &n), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(n, 3);
    rfx_cursor *c = rfx_cursor_open(e, "tri");
    CU_ASSERT_PTR_NOT_NULL(c);
    CU_ASSERT_EQUAL(rfx_cursor_count(c), 3);
    rfx_cursor_close(c);
    rfx_close(e);
}

/* Keeps e's rows oriented from the lower id (no loops): every clique over them once. */
static void keep_oriented(rfx_rows *e)
{
    size_t w = 0;
    for (size_t i = 0; i < e->n; i++)
        if (e->data[2 * i] < e->data[2 * i + 1]) {
            e->data[2 * w] = e->data[2 * i];
            e->data[2 * w + 1] = e->data[2 * i + 1];
            w++;
        }
    e->n = w;
}

/* A join whose first variable leads an atom with every other one, run by induced parts of
 * every size (one vertex a part up to one part), lists and counts what the whole join does;
 * joins of other shapes are not taken. */
static void induced_parts_equal_whole(void)
{
    /* 4-clique; 5-clique; a 4-clique less one edge (b, d); a triangle with a pendant (a, d) */
    static const int k4[] = {0, 1, 0, 2, 0, 3, 1, 2, 1, 3, 2, 3};
    static const int k5[] = {0, 1, 0, 2, 0, 3, 0, 4, 1, 2, 1, 3, 1, 4, 2, 3, 2, 4, 3, 4};
    static const int kite[] = {0, 1, 0, 2, 0, 3, 1, 2, 2, 3};
    static const int pend[] = {0, 1, 0, 2, 1, 2, 0, 3};
    static const int chain[] = {0, 1, 1, 2, 2, 3};   /* the first variable meets 1 only */
    const struct { const int *cv; int nsrc, nvars; } q[] = {{k4, 6, 4}, {k5, 10, 5}, {kite, 5, 4}, {pend, 4, 4}};
    rfx_rows e = random_rows(4000, 2, 80, true);
    keep_oriented(&e);
    /* a hub (100) with far more rows than a small part has vertices, which every vertex
     * below 80 points to, and rows from those into the hub's neighbours: parts that take the
     * hub look its neighbours up among its rows */
    rfx_rows_reserve(&e, e.n + 3100);
    for (uint32_t v = 101; v <= 3000; v++, e.n++)
        e.data[2 * e.n] = 100, e.data[2 * e.n + 1] = v;
    for (uint32_t a = 0; a < 80; a++, e.n += 2) {
        e.data[2 * e.n] = a, e.data[2 * e.n + 1] = 100;
        e.data[2 * e.n + 2] = a, e.data[2 * e.n + 3] = 101 + a % 10;
    }
    rfx_cpu_sort(&e, 1);
    rfx_cpu_unique(&e, 1);
    rfx_lftj_src chain_srcs[3] = {{&e, chain, NULL}, {&e, chain + 2, NULL}, {&e, chain + 4, NULL}};
    CU_ASSERT_FALSE(rfx_lftj_induced_applies(chain_srcs, 3, 4));
    for (size_t qi = 0; qi < sizeof q / sizeof q[0]; qi++) {
        rfx_lftj_src srcs[10];
        for (int s = 0; s < q[qi].nsrc; s++)
            srcs[s] = (rfx_lftj_src){&e, q[qi].cv + 2 * s, NULL};
        CU_ASSERT_FATAL(rfx_lftj_induced_applies(srcs, q[qi].nsrc, q[qi].nvars));
        rfx_rows want;
        rfx_rows_init(&want, q[qi].nvars);
        CU_ASSERT_EQUAL_FATAL(rfx_cpu_lftj(srcs, q[qi].nsrc, q[qi].nvars, &want, NULL, 2), RFX_OK);
        CU_ASSERT(want.n > 0);
        const size_t budgets[] = {8, 2000, 20000, (size_t)1 << 30};
        for (size_t bi = 0; bi < sizeof budgets / sizeof budgets[0]; bi++) {
            rfx_lftj_induced *it = NULL;
            CU_ASSERT_EQUAL_FATAL(rfx_lftj_induced_open(srcs, q[qi].nsrc, budgets[bi], 2, &it), RFX_OK);
            rfx_lftj_part part;
            rfx_lftj_part_init(&part);
            size_t nparts = 0;
            rfx_rows got, rows;
            rfx_rows_init(&got, q[qi].nvars);
            rfx_rows_init(&rows, q[qi].nvars);
            uint64_t count = 0;
            rfx_status st = RFX_OK;
            while (rfx_lftj_induced_next(it, &part, &st)) {
                uint64_t k = 0;
                rows.n = 0;
                CU_ASSERT_EQUAL(part.number, ++nparts);
                CU_ASSERT_EQUAL(rfx_cpu_lftj(part.srcs, q[qi].nsrc, q[qi].nvars, &rows, NULL, 1), RFX_OK);
                CU_ASSERT_EQUAL(rfx_cpu_lftj(part.srcs, q[qi].nsrc, q[qi].nvars, NULL, &k, 1), RFX_OK);
                CU_ASSERT_EQUAL(k, rows.n);
                count += k;
                CU_ASSERT_EQUAL(rfx_rows_append(&got, &rows), RFX_OK);
            }
            CU_ASSERT_EQUAL(st, RFX_OK);
            CU_ASSERT(bi != 0 || nparts > 50);   /* a vertex a part */
            CU_ASSERT(bi != 3 || nparts == 1);
            CU_ASSERT_EQUAL(count, want.n);
            CU_ASSERT(got.n == want.n && memcmp(got.data, want.data, sizeof(uint32_t) * want.n * q[qi].nvars) == 0);
            rfx_rows_free(&got);
            rfx_rows_free(&rows);
            rfx_lftj_part_free(&part);
            rfx_lftj_induced_close(it);
        }
        rfx_rows_free(&want);
    }
    rfx_rows_free(&e);
}

/* The parts as their vertices (for a device that makes each subgraph itself): the same
 * parts as the host's, each member's rows where start and before say, and the subgraph
 * those rows make with both ends among the members the host's; a part chosen again from
 * its first row under a smaller budget is a prefix of it, and the parts after it go on
 * where it ends. */
static void induced_vertices_make_the_parts(void)
{
    static const int k4[] = {0, 1, 0, 2, 0, 3, 1, 2, 1, 3, 2, 3};
    rfx_rows e = random_rows(3000, 2, 60, true);
    keep_oriented(&e);
    rfx_cpu_sort(&e, 1);
    rfx_cpu_unique(&e, 1);
    rfx_lftj_src srcs[6];
    for (int s = 0; s < 6; s++)
        srcs[s] = (rfx_lftj_src){&e, k4 + 2 * s, NULL};
    const size_t budgets[] = {8, 3000, (size_t)1 << 30};
    for (size_t bi = 0; bi < sizeof budgets / sizeof budgets[0]; bi++) {
        rfx_lftj_induced *host = NULL, *dev = NULL;
        CU_ASSERT_EQUAL_FATAL(rfx_lftj_induced_open(srcs, 6, budgets[bi], 2, &host), RFX_OK);
        CU_ASSERT_EQUAL_FATAL(rfx_lftj_induced_open(srcs, 6, budgets[bi], 2, &dev), RFX_OK);
        CU_ASSERT(rfx_lftj_induced_maxid(dev) >= e.data[2 * (e.n - 1)]);
        rfx_lftj_part part;
        rfx_lftj_part_init(&part);
        rfx_lftj_part_vertices pv;
        rfx_status st = RFX_OK, st2 = RFX_OK;
        size_t parts = 0;
        while (rfx_lftj_induced_next(host, &part, &st)) {
            CU_ASSERT_FATAL(rfx_lftj_induced_next_vertices(dev, &pv, &st2));
            parts++;
            CU_ASSERT(pv.rows.data == part.rows.data && pv.rows.n == part.rows.n);
            CU_ASSERT(pv.rows.data == e.data + 2 * pv.first);
            size_t made = 0;
            bool same = true;
            for (size_t k = 0; k < pv.nmembers; k++) {
                CU_ASSERT(k == 0 || pv.members[k - 1] < pv.members[k]);
                for (uint64_t i = pv.start[k]; i < pv.start[k] + (pv.before[k + 1] - pv.before[k]); i++) {
                    CU_ASSERT_FATAL(i < e.n && e.data[2 * i] == pv.members[k]);
                    uint32_t v = e.data[2 * i + 1];
                    bool in = false;
                    for (size_t m = 0; m < pv.nmembers && !in; m++)
                        in = pv.members[m] == v;
                    if (!in)
                        continue;
                    same &= made < part.induced.n && part.induced.data[2 * made] == pv.members[k] &&
                            part.induced.data[2 * made + 1] == v;
                    made++;
                }
            }
            CU_ASSERT(same && made == part.induced.n);
        }
        CU_ASSERT_FALSE(rfx_lftj_induced_next_vertices(dev, &pv, &st2));
        CU_ASSERT(st == RFX_OK && st2 == RFX_OK);
        CU_ASSERT(bi != 0 || parts > 20);
        rfx_lftj_induced_close(dev);
        /* chosen again: the second part under a tenth of the budget */
        CU_ASSERT_EQUAL_FATAL(rfx_lftj_induced_open(srcs, 6, budgets[bi], 2, &dev), RFX_OK);
        size_t next_row = 0, first = 0, n = 0;
        for (int k = 0; k < 2 && rfx_lftj_induced_next_vertices(dev, &pv, &st2); k++)
            first = pv.first, n = pv.rows.n;
        rfx_lftj_induced_set_budget(dev, budgets[bi] / 10);
        rfx_lftj_induced_restart(dev, first);
        bool again = true;
        while (rfx_lftj_induced_next_vertices(dev, &pv, &st2)) {
            if (again)
                CU_ASSERT(pv.first == first && pv.rows.n <= n);
            CU_ASSERT(again || pv.first == next_row);
            again = false;
            next_row = pv.first + pv.rows.n;
        }
        CU_ASSERT(parts < 2 || next_row == e.n);
        rfx_lftj_induced_close(dev);
        rfx_lftj_induced_close(host);
        rfx_lftj_part_free(&part);
    }
    rfx_rows_free(&e);
}

/* The CPU backend under a cap runs joins box by box: same counts as uncapped. */
static void capped_runs_match(void)
{
    const char *graph = RFX_SOURCE_DIR "/programs/data/ca-GrQc.txt";
    /* triangles: about 10%, 20%, 50% of the three sources; 4-cliques (six sources, whose
     * two inner variables multiply the boxes): about 25% and 50% */
    const char *caps[2][3] = {{"35K", "70K", "174K"}, {"174K", "350K", NULL}};
    const char *want[] = {"48260\n", "329297\n"};
    for (int k = 3; k <= 4; k++)
        for (size_t c = 0; c < 3 && caps[k - 3][c]; c++) {
            char ks[4], cap[32];
            snprintf(ks, sizeof ks, "%d", k);
            snprintf(cap, sizeof cap, "--device-memory=%s", caps[k - 3][c]);
            char *argv[] = {(char *)env_or("RFX_TEST_BIN", RFX_BIN), "cliques", "-k", ks, "--count", "--backend=cpu", "-j", "2", cap, (char *)graph, NULL};
            run_result r = run_prog(".", argv);
            CU_ASSERT_EQUAL(r.code, 0);
            CU_ASSERT(r.out && strcmp(r.out, want[k - 3]) == 0);
            run_free(&r);
        }
}

/* Large graphs are made on several threads, each part from the state its first edge's
 * draws start at: the whole graph and any part must hold the edges of one sequential
 * pass from the first edge. */
static void generator_threads_agree(void)
{
    size_t big = ((size_t)1 << 20) + 3, small = 5000;
    uint32_t *a = malloc(sizeof(uint32_t) * 2 * big), *ref = malloc(sizeof(uint32_t) * 2 * big),
             *b = malloc(sizeof(uint32_t) * 2 * small);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ref);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    for (int kind = 0; kind < 2; kind++) {
        rfx_graph_kind k = kind ? RFX_GRAPH_RMAT : RFX_GRAPH_UNIFORM;
        rfx_graph_generate(k, 1u << 16, big, 3, a);
        rfx_graph_generate_part(k, 1u << 16, 3, 0, big, ref);   /* one pass */
        CU_ASSERT(memcmp(a, ref, sizeof(uint32_t) * 2 * big) == 0);
        for (size_t lo = 0; lo + small <= big; lo += big / 7) {
            rfx_graph_generate_part(k, 1u << 16, 3, lo, lo + small, b);
            CU_ASSERT(memcmp(ref + 2 * lo, b, sizeof(uint32_t) * 2 * small) == 0);
        }
    }
    free(a);
    free(ref);
    free(b);
}

/* The host TrieArray a box's slices travel in: built in chunks on several threads, it
 * holds each distinct row once, in order, and a slice cut at values maps to its roots. */
static void host_trie_holds_distinct_rows(void)
{
    for (int run = 0; run < 4; run++) {   /* one and four threads; rows with repeats (two passes), without (one) */
        int threads = run % 2 ? 4 : 1;
        rfx_rows r = random_rows(400000, 2, run < 2 ? 600 : 3000, run >= 2);   /* ~667 or ~133 rows a value */
        rfx_lftj_trie t;
        CU_ASSERT_EQUAL_FATAL(rfx_lftj_trie_build(&r, threads, &t), RFX_OK);
        CU_ASSERT_EQUAL(t.ptr0.n, t.val0.n + 1);
        CU_ASSERT_EQUAL(t.ptr0.data[t.val0.n], t.val1.n);
        size_t i = 0, bad = 0;
        for (size_t k = 0; k < t.val0.n; k++) {
            bad += k > 0 && t.val0.data[k] <= t.val0.data[k - 1];
            bad += t.ptr0.data[k + 1] <= t.ptr0.data[k];
            for (size_t v = t.ptr0.data[k]; v < t.ptr0.data[k + 1]; v++) {
                bad += i >= r.n || r.data[2 * i] != t.val0.data[k] || r.data[2 * i + 1] != t.val1.data[v];
                for (i++; i < r.n && r.data[2 * i] == r.data[2 * i - 2] && r.data[2 * i + 1] == r.data[2 * i - 1]; i++)
                    ;   /* repeats of the row just matched */
            }
        }
        CU_ASSERT_EQUAL(bad, 0);
        CU_ASSERT_EQUAL(i, r.n);
        /* rows [lo, hi) between two values: the roots of exactly those values */
        size_t lo = 0, hi = 0, rlo, rhi;
        while (lo < r.n && r.data[2 * lo] < 100)
            lo++;
        for (hi = lo; hi < r.n && r.data[2 * hi] < 200; hi++)
            ;
        CU_ASSERT_FATAL(rfx_lftj_trie_roots(&t, &r, lo, hi, &rlo, &rhi));
        CU_ASSERT(rlo < t.val0.n && t.val0.data[rlo] == r.data[2 * lo]);
        CU_ASSERT(rhi < t.val0.n && t.val0.data[rhi] == r.data[2 * hi] && t.val0.data[rhi - 1] < 200);
        CU_ASSERT(rfx_lftj_trie_roots(&t, &r, lo, r.n, &rlo, &rhi) && rhi == t.val0.n);
        size_t mid = lo;
        while (mid + 1 < r.n && r.data[2 * mid + 2] == r.data[2 * lo])
            mid++;
        CU_ASSERT(!rfx_lftj_trie_roots(&t, &r, mid, hi, &rlo, &rhi));   /* mid splits a value's rows */
        rfx_lftj_trie_free(&t);
        /* one row out of place, late (a chunk past the first) or early, in either column:
         * refused in whichever pass runs, and t left empty */
        size_t at = run % 2 ? r.n - 2 : 1;
        uint32_t keep = r.data[2 * at + run / 2];
        r.data[2 * at + run / 2] = UINT32_MAX;   /* the row after it is now less */
        CU_ASSERT_EQUAL(rfx_lftj_trie_build(&r, threads, &t), RFX_ERR_LIMIT);
        CU_ASSERT(t.val0.n == 0 && t.val1.n == 0 && t.val1.data == NULL);
        r.data[2 * at + run / 2] = keep;
        rfx_rows_free(&r);
    }
    rfx_rows three;
    rfx_rows_init(&three, 3);
    rfx_lftj_trie t;
    CU_ASSERT_EQUAL(rfx_lftj_trie_build(&three, 2, &t), RFX_ERR_LIMIT);
    rfx_rows two;
    rfx_rows_init(&two, 2);
    CU_ASSERT_EQUAL(rfx_lftj_trie_build(&two, 2, &t), RFX_OK);
    CU_ASSERT(t.val0.n == 0 && t.val1.n == 0 && t.ptr0.n == 1 && t.ptr0.data[0] == 0);
    rfx_lftj_trie_free(&t);
}

static void add_suites(void)
{
    CU_pSuite s = CU_add_suite("lftj", NULL, NULL);
    CU_add_test(s, "graph generator: threads make the edges one thread makes", generator_threads_agree);
    CU_add_test(s, "CPU LFTJ equals nested loops", lftj_matches_nested_loops);
    CU_add_test(s, "boxes without bindings are skipped", boxes_without_bindings_are_skipped);
    CU_add_test(s, "the partition bounds the first level", partition_bounds_first_level);
    CU_add_test(s, "host TrieArrays hold each distinct row once", host_trie_holds_distinct_rows);
    CU_add_test(s, "LFTJ and binary plans list the same tuples", lftj_and_binary_plans_agree);
    CU_add_test(s, "rfx cliques equals brute force", cliques_command_counts);
    CU_add_test(s, "count-only relations", count_only_relations);
    CU_add_test(s, "capped CPU runs join box by box", capped_runs_match);
    CU_add_test(s, "induced parts list and count what the whole join does", induced_parts_equal_whole);
    CU_add_test(s, "induced parts as their vertices make the host's parts", induced_vertices_make_the_parts);
}

int main(int argc, char **argv)
{
    return run_suites(argc, argv, add_suites);
}
