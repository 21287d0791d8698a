/* test_gpu_lftj.c: the leapfrog triejoin on the device against the CPU's (listing and
 * counting, in rounds, by boxes and memos, over TrieArrays, the triangle count by parts,
 * the probe sums of a count's variable order, renaming by degree rank). */
#include "gpu_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* lftj_small_rows settings: every count level by level, or in one launch whatever the
 * size (joins of two or three variables). */
#define LEVEL_BY_LEVEL "0"
#define ONE_LAUNCH "4294967295"

/* rfx_gpu_lftj's count on ctx with the tuning's lftj_small_rows set to small_rows (NULL:
 * as it is). In one launch, every group size (lanes a row: lftj_small_group) must count the
 * same; the size's own choice is the first. */
static uint64_t lftj_count_with(rfx_gpu *ctx, const char *small_rows, const rfx_dev_rows *const *srcs, const int *cv,
                                int nsrc, int nvars)
{
    static const char *groups[] = {NULL, "1", "2", "4", "8"};
    const int ngroups = small_rows && strcmp(small_rows, ONE_LAUNCH) == 0 ? 5 : 1;
    uint64_t first = 0;
    const rfx_tuning saved = current;
    if (small_rows)
        tune_set("lftj_small_rows", small_rows);
    for (int k = 0; k < ngroups; k++) {
        uint64_t n = 0;
        if (groups[k])
            tune_set("lftj_small_group", groups[k]);
        CU_ASSERT_EQUAL(rfx_gpu_lftj(ctx, srcs, cv, nsrc, nvars, NULL, &n), RFX_OK);
        if (k == 0)
            first = n;
        else if (n != first) {
            CU_FAIL("a group size counts differently");
            fprintf(stderr, "\n    %s lanes a row: %llu, by the size's own choice %llu\n", groups[k],
                    (unsigned long long)n, (unsigned long long)first);
        }
    }
    current = saved;
    return first;
}

/* Leapfrog triejoin: GPU (listing and counting) against the CPU on random relations:
 * one relation three times (triangles), three different relations, and four variables
 * over sources of arity 2 and 3; uniform, skewed (Zipf: high-degree keys spread over many
 * threads) and all-equal keys; empty sources. Also spread over two contexts (both on
 * device 0 here: the peer copy and the shared queue of intervals are the same code). */
static void test_lftj(void)
{
    if (!need_gpu())
        return;
    char err[256];
    rfx_gpu *second = open_gpu(0, 0, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(second);
    rfx_gpu *const two[2] = {gpu, second};
    static const int tri[] = {0, 1, 1, 2, 0, 2};
    static const int four[] = {0, 1, 2, 1, 3, 0, 3, 2, 3};   /* A(v0,v1,v2) B(v1,v3) C(v0,v3) D(v2,v3) */
    const size_t ns[] = {0, 1, 300, 5000, 200000};
    const dist ds[] = {UNIFORM, ZIPF, EQUAL};
    for (size_t si = 0; si < sizeof ns / sizeof ns[0]; si++)
        for (size_t di = 0; di < 3; di++)
            for (int q = 0; q < 3; q++) {
                size_t n = ns[si];
                if (quick && n > 5000)
                    continue;
                uint32_t range = ds[di] == ZIPF ? 4000 : (uint32_t)(n / 8 + 3);
                int nsrc = q == 2 ? 4 : 3, nvars = q == 2 ? 4 : 3;
                rfx_rows h[4];
                const rfx_dev_rows *dp[4];
                rfx_dev_rows d[4];
                rfx_lftj_src s[4];
                const int *cv = q == 2 ? four : tri;
                for (int k = 0, off = 0; k < nsrc; k++) {
                    int arity = q == 2 && k == 0 ? 3 : 2;
                    h[k] = q == 0 && k > 0 ? h[0] : rows_random(k == 1 && si == 1 ? 0 : n, arity, ds[di], range, true);
                    d[k] = up(&h[k]);
                    dp[k] = &d[k];
                    s[k] = (rfx_lftj_src){&h[k], cv + off, NULL};
                    off += arity;
                }
                rfx_rows cpu;
                rfx_rows_init(&cpu, nvars);
                uint64_t ccount = 0, gcount = 0;
                CU_ASSERT_EQUAL(rfx_cpu_lftj(s, nsrc, nvars, &cpu, NULL, 4), RFX_OK);
                CU_ASSERT_EQUAL(rfx_cpu_lftj(s, nsrc, nvars, NULL, &ccount, 4), RFX_OK);
                rfx_dev_rows gd;
                rfx_gpu_rows_init(&gd, nvars);
                CU_ASSERT_EQUAL(rfx_gpu_lftj(gpu, dp, cv, nsrc, nvars, &gd, NULL), RFX_OK);
                CU_ASSERT_EQUAL(rfx_gpu_lftj(gpu, dp, cv, nsrc, nvars, NULL, &gcount), RFX_OK);
                /* and level by level (small inputs are counted in one launch) */
                CU_ASSERT_EQUAL(lftj_count_with(gpu, LEVEL_BY_LEVEL, dp, cv, nsrc, nvars), cpu.n);
                rfx_rows back = down(&gd);
                CU_ASSERT(same(&back, &cpu));
                CU_ASSERT_EQUAL(ccount, cpu.n);
                CU_ASSERT_EQUAL(gcount, cpu.n);
                rfx_rows_free(&back);
                rfx_rows spread;
                rfx_rows_init(&spread, nvars);
                uint64_t scount = 0;
                CU_ASSERT_EQUAL(rfx_gpu_lftj_spread(two, 2, dp, cv, nsrc, nvars, 5, &spread, NULL, NULL, NULL, NULL, err,
                                                    sizeof err), RFX_OK);
                CU_ASSERT_EQUAL(rfx_gpu_lftj_spread(two, 2, dp, cv, nsrc, nvars, 7, NULL, &scount, NULL, NULL, NULL, err,
                                                    sizeof err), RFX_OK);
                CU_ASSERT(same(&spread, &cpu));
                CU_ASSERT_EQUAL(scount, cpu.n);
                rfx_rows_free(&spread);
                size_t hn = h[0].n / 2;   /* rows after dedup: fewer than n asked */
                if (q == 0 && hn > 0) {
                    /* a box's view: e(x,y) and e(x,z) a prefix of the rows e(y,z) reads whole */
                    rfx_rows hp = {h[0].data, hn, hn, 2};
                    rfx_lftj_src sp[3] = {{&hp, cv, NULL}, {&h[0], cv + 2, NULL}, {&hp, cv + 4, NULL}};
                    rfx_dev_rows half = {d[0].data, hn, hn, 2};
                    const rfx_dev_rows *pp[3] = {&half, &d[0], &half};
                    uint64_t want = 0, got = 0;
                    CU_ASSERT_EQUAL(rfx_cpu_lftj(sp, 3, 3, NULL, &want, 2), RFX_OK);
                    CU_ASSERT_EQUAL(rfx_gpu_lftj(gpu, pp, cv, 3, 3, NULL, &got), RFX_OK);
                    CU_ASSERT_EQUAL(got, want);
                }
                rfx_rows_free(&cpu);
                rfx_gpu_rows_free(gpu, &gd);
                for (int k = 0; k < nsrc; k++) {
                    if (!(q == 0 && k > 0))
                        rfx_rows_free(&h[k]);
                    rfx_gpu_rows_free(gpu, &d[k]);
                }
            }
    rfx_gpu_close(second);
}

/* The triangles of e counted on the GPU, with the last two levels in one pass, (with
 * lftj_fuse_levels=0) level by level, and in one launch depth first (small inputs' way,
 * forced whatever the size), equal the CPU's, at least at_least; false (and a note)
 * otherwise. */
static bool triangles_agree(const rfx_rows *e, const char *what, uint64_t at_least)
{
    static const int tri[] = {0, 1, 1, 2, 0, 2};
    rfx_lftj_src s[3] = {{e, tri, NULL}, {e, tri + 2, NULL}, {e, tri + 4, NULL}};
    uint64_t want = 0, got[5] = {0, 0, 0, 0, 0};
    CU_ASSERT_EQUAL(rfx_cpu_lftj(s, 3, 3, NULL, &want, 4), RFX_OK);
    rfx_dev_rows d = up(e);
    const rfx_dev_rows *dp[3] = {&d, &d, &d};
    /* fused, level by level, one launch; then fused and level by level with the pair
     * count's nodes always narrowed (by default only counts of 2^20 elements or more
     * where a sample shows it pays) */
    for (int way = 0; way < 5; way++) {
        const rfx_tuning saved = current;
        if (way == 1 || way == 4)
            tune_set("lftj_fuse_levels", "0");
        if (way >= 3)
            tune_set("lftj_narrow", "1");
        got[way] = lftj_count_with(gpu, way == 2 ? ONE_LAUNCH : LEVEL_BY_LEVEL, dp, tri, 3, 3);
        current = saved;
    }
    rfx_gpu_rows_free(gpu, &d);
    CU_ASSERT(want >= at_least);   /* the shape has the triangles it is meant to */
    bool ok = true;
    for (int way = 0; way < 5; way++)
        ok &= got[way] == want;
    CU_ASSERT(ok);
    if (!ok)
        fprintf(stderr,
                "\n    %s triangles: GPU %llu (fused), %llu (level by level), %llu (one launch), narrowed %llu "
                "(fused), %llu (level by level); CPU %llu\n",
                what, (unsigned long long)got[0], (unsigned long long)got[1], (unsigned long long)got[2],
                (unsigned long long)got[3], (unsigned long long)got[4], (unsigned long long)want);
    return ok;
}

/* Triangle counts where the shared node of the last level has every size the pair count
 * tells apart: hubs of 6000 neighbours (beyond both tables' 4096 values: searched in global
 * memory), 3000, 1025 and 513 (both tables as one, 2.7 to 16 slots a value), 512 (one
 * table, 8 slots a value), small nodes (8 or more slots a value, or a search in chunks of
 * short runs), and the value 0xFFFFFFFF (the tables' empty mark) in both nodes; then the
 * same edges with rows repeated (lftj.h allows it: no value may count twice). Counts equal
 * the CPU's. */
static void test_lftj_hubs(void)
{
    if (!need_gpu())
        return;
    static const uint32_t hub_degree[] = {6000, 3000, 1025, 513, 512};
    rfx_rows e;
    rfx_rows_init(&e, 2);
    for (uint32_t h = 0; h < 5; h++)
        for (uint32_t v = 10; v < 10 + hub_degree[h]; v++)
            rfx_rows_push(&e, (uint32_t[]){h, v * (h + 1) % 6500 + 10});
    for (int i = 0; i < 60000; i++) {
        uint32_t u = 10 + (uint32_t)(rnd() % 6500), v = 10 + (uint32_t)(rnd() % 6500);
        rfx_rows_push(&e, (uint32_t[]){u < v ? u : v, u < v ? v : u});
    }
    for (uint32_t v = 0; v < 6500; v += 7)
        rfx_rows_push(&e, (uint32_t[]){v, UINT32_MAX});
    for (uint32_t v = 0; v < 6500; v += 13)
        rfx_rows_push(&e, (uint32_t[]){v, v + 1});
    rfx_cpu_sort(&e, 4);
    rfx_rows dup;
    rfx_rows_init(&dup, 2);
    for (size_t i = 0; i < e.n; i++)   /* every third row twice, the hub rows among them */
        for (int k = 0; k < 1 + (i % 3 == 0); k++)
            rfx_rows_push(&dup, e.data + 2 * i);
    rfx_cpu_unique(&e, 4);
    triangles_agree(&e, "hub", 50000);
    triangles_agree(&dup, "repeated-row", 50000);
    rfx_rows_free(&dup);
    rfx_rows_free(&e);
    /* Short runs (a box's shape): 20000 blocks of 5 vertices, each block a clique, plus
     * random edges: x has at most a few y, so a chunk of the count searches instead of
     * building tables (fused), or the count regroups the frontier by y (level by level). */
    rfx_rows_init(&e, 2);
    for (uint32_t b = 0; b < 20000; b++)
        for (uint32_t i = 0; i < 5; i++)
            for (uint32_t j = i + 1; j < 5; j++)
                rfx_rows_push(&e, (uint32_t[]){5 * b + i, 5 * b + j});
    for (int i = 0; i < 50000; i++) {
        uint32_t u = (uint32_t)(rnd() % 100000), v = (uint32_t)(rnd() % 100000);
        if (u != v)
            rfx_rows_push(&e, (uint32_t[]){u < v ? u : v, u < v ? v : u});
    }
    rfx_cpu_sort(&e, 4);
    rfx_cpu_unique(&e, 4);
    triangles_agree(&e, "short-run", 200000);
    rfx_rows_free(&e);
}

/* Triangles of a band graph, v joined to v+1 .. v+300, edges from the lower id: counted
 * by (x, y, z), the shared node N+(x) covers (x, x+300] and each probed N+(y) (y, y+300],
 * so narrowing N+(y) to N+(x)'s values cuts about a third of the count's warp steps, and
 * the count (4400 x 300 edges: over 2^20 elements) narrows by its sample's say, not only
 * when forced. Then renamed by degree rank on the device: the same triangles. */
static void test_lftj_narrowed(void)
{
    if (!need_gpu())
        return;
    const uint32_t n = 4400, w = 300;
    rfx_rows e;
    rfx_rows_init(&e, 2);
    for (uint32_t v = 0; v < n; v++)
        for (uint32_t k = 1; k <= w; k++)
            rfx_rows_push(&e, (uint32_t[]){v, v + k});
    triangles_agree(&e, "band", 100000000);
    rfx_dev_rows d = up(&e);
    CU_ASSERT_EQUAL(rfx_gpu_rename_by_degree(gpu, &d, &d), RFX_OK);
    rfx_rows renamed = down(&d);
    rfx_gpu_rows_free(gpu, &d);
    for (size_t i = 0; i < renamed.n; i++)   /* oriented again: from the lower rank */
        if (renamed.data[2 * i] > renamed.data[2 * i + 1]) {
            uint32_t t = renamed.data[2 * i];
            renamed.data[2 * i] = renamed.data[2 * i + 1];
            renamed.data[2 * i + 1] = t;
        }
    rfx_cpu_sort(&renamed, 4);
    triangles_agree(&renamed, "band renamed by degree rank", 100000000);
    rfx_rows_free(&renamed);
    rfx_rows_free(&e);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* rfx_gpu_rename_by_degree against ranks by (degree, id) counted on the host: every size,
 * ids uniform over 5000, all equal (self-loops: degree 2 a row), Zipf-skewed over 3 M (most
 * ids absent: degree 0, ranked first). Rows of three columns refused. */
static void test_rename_by_degree(void)
{
    if (!need_gpu())
        return;
    static const dist shapes[] = {UNIFORM, EQUAL, ZIPF};
    for (size_t i = 0; i < NS; i++)
        for (int k = 0; k < 3; k++) {
            rfx_rows e = rows_random(sizes[i], 2, shapes[k], k == 0 ? 5000 : 3000000, false);
            uint32_t mx = 0;
            for (size_t r = 0; r < 2 * e.n; r++)
                mx = e.data[r] > mx ? e.data[r] : mx;
            size_t nv = (size_t)mx + 1;
            uint64_t *key = malloc(sizeof(uint64_t) * nv);
            uint32_t *rank = malloc(sizeof(uint32_t) * nv);
            for (size_t v = 0; v < nv; v++)
                key[v] = v;
            for (size_t r = 0; r < 2 * e.n; r++)
                key[e.data[r]] += (uint64_t)1 << 32;
            qsort(key, nv, sizeof *key, cmp_u64);
            for (size_t r = 0; r < nv; r++)
                rank[(uint32_t)key[r]] = (uint32_t)r;
            rfx_rows want;
            rfx_rows_init(&want, 2);
            rfx_rows_reserve(&want, e.n);
            for (size_t r = 0; r < e.n; r++)
                rfx_rows_push(&want, (uint32_t[]){rank[e.data[2 * r]], rank[e.data[2 * r + 1]]});
            rfx_dev_rows d = up(&e), out;
            rfx_gpu_rows_init(&out, 2);
            if (!gpu_agrees(rfx_gpu_rename_by_degree(gpu, &d, &out), &out, &want))
                fprintf(stderr, "\n    renamed by degree: %zu rows, shape %d\n", e.n, k);
            rfx_gpu_rows_free(gpu, &d);
            rfx_rows_free(&e);
            free(key);
            free(rank);
        }
    rfx_rows one;
    rfx_rows_init(&one, 3);
    rfx_dev_rows d = up(&one), out;
    rfx_gpu_rows_init(&out, 2);
    CU_ASSERT_NOT_EQUAL(rfx_gpu_rename_by_degree(gpu, &d, &out), RFX_OK);   /* three columns: refused */
    rfx_gpu_rows_free(gpu, &d);
    rfx_rows_free(&one);
}

/* 4-cliques and triangles over one relation, every source the same device rows (as
 * `rfx cliques` makes them): level 0 then needs no check (every root node is alike), and
 * small levels go into the next frontier unchecked, each emit counting and scanning the
 * next level's candidates; with lftj_unchecked_rows=0 every level is checked and
 * compacted (the emits after a check scan by look-back too). Dense values (level 0 by
 * value: the gaps stay as empty elements), values far apart with rows repeated (level 0
 * by row: the repeats stay empty), and a hub joined to every vertex. Listing and counting,
 * both ways, and with the sources read as rows instead of TrieArrays, equal the CPU's. */
static void test_lftj_one_relation(void)
{
    if (!need_gpu())
        return;
    static const int k4[] = {0, 1, 0, 2, 0, 3, 1, 2, 1, 3, 2, 3}, tri[] = {0, 1, 1, 2, 0, 2};
    for (int shape = 0; shape < 3; shape++) {
        const uint32_t scale = shape == 1 ? 100003 : 1;
        rfx_rows e;
        rfx_rows_init(&e, 2);
        for (int i = 0; i < 12000; i++) {
            uint32_t u = (uint32_t)(rnd() % 400), v = (uint32_t)(rnd() % 400);
            if (u != v)
                rfx_rows_push(&e, (uint32_t[]){(u < v ? u : v) * scale, (u < v ? v : u) * scale});
            if (shape == 1 && i % 5 == 0 && u != v)
                rfx_rows_push(&e, (uint32_t[]){(u < v ? u : v) * scale, (u < v ? v : u) * scale});
        }
        for (uint32_t v = 1; shape == 2 && v < 400; v++)
            rfx_rows_push(&e, (uint32_t[]){0, v});
        rfx_cpu_sort(&e, 4);
        if (shape != 1)
            rfx_cpu_unique(&e, 4);
        rfx_dev_rows d = up(&e);
        const rfx_dev_rows *dp[6] = {&d, &d, &d, &d, &d, &d};
        for (int q = 0; q < 2; q++) {
            const int *cv = q ? tri : k4, nsrc = q ? 3 : 6, nvars = q ? 3 : 4;
            rfx_lftj_src s[6];
            for (int k = 0; k < nsrc; k++)
                s[k] = (rfx_lftj_src){&e, cv + 2 * k, NULL};
            rfx_rows cpu;
            rfx_rows_init(&cpu, nvars);
            CU_ASSERT_EQUAL(rfx_cpu_lftj(s, nsrc, nvars, &cpu, NULL, 4), RFX_OK);
            CU_ASSERT(cpu.n > 1000);   /* the shape has the cliques it is meant to */
            rfx_dev_rows gd;
            rfx_gpu_rows_init(&gd, nvars);
            CU_ASSERT_EQUAL(rfx_gpu_lftj(gpu, dp, cv, nsrc, nvars, &gd, NULL), RFX_OK);
            rfx_rows back = down(&gd);
            CU_ASSERT(same(&back, &cpu));
            uint64_t counted = 0, as_rows = 0;
            CU_ASSERT_EQUAL(rfx_gpu_lftj(gpu, dp, cv, nsrc, nvars, NULL, &counted), RFX_OK);
            /* the sources read as their rows, no TrieArray (small sources' default) */
            tune_set("lftj_trie_from", "4294967295");
            CU_ASSERT_EQUAL(rfx_gpu_lftj(gpu, dp, cv, nsrc, nvars, NULL, &as_rows), RFX_OK);
            rfx_dev_rows gr;
            rfx_gpu_rows_init(&gr, nvars);
            CU_ASSERT_EQUAL(rfx_gpu_lftj(gpu, dp, cv, nsrc, nvars, &gr, NULL), RFX_OK);
            tune_set("lftj_trie_from", "0");
            rfx_rows listed_rows = down(&gr);
            rfx_gpu_rows_free(gpu, &gr);
            CU_ASSERT(same(&listed_rows, &cpu));
            CU_ASSERT_EQUAL(as_rows, cpu.n);
            if (!same(&listed_rows, &cpu) || as_rows != cpu.n)
                fprintf(stderr, "\n    shape %d, %d variables as rows: listed %zu, counted %llu, CPU %zu\n", shape,
                        nvars, listed_rows.n, (unsigned long long)as_rows, cpu.n);
            rfx_rows_free(&listed_rows);
            tune_set("lftj_unchecked_rows", "0");   /* every level checked */
            const uint64_t levels = lftj_count_with(gpu, LEVEL_BY_LEVEL, dp, cv, nsrc, nvars);
            rfx_gpu_rows_free(gpu, &gd);
            rfx_gpu_rows_init(&gd, nvars);
            CU_ASSERT_EQUAL(rfx_gpu_lftj(gpu, dp, cv, nsrc, nvars, &gd, NULL), RFX_OK);
            current.lftj_unchecked_rows = base_tuning.lftj_unchecked_rows;
            rfx_rows checked = down(&gd);
            CU_ASSERT(same(&checked, &cpu));
            CU_ASSERT_EQUAL(counted, cpu.n);
            CU_ASSERT_EQUAL(levels, cpu.n);
            if (!same(&back, &cpu) || !same(&checked, &cpu) || counted != cpu.n || levels != cpu.n)
                fprintf(stderr, "\n    shape %d, %d variables: listed %zu (%zu checked), counted %llu (%llu checked "
                                "level by level), CPU %zu\n", shape, nvars, back.n, checked.n,
                        (unsigned long long)counted, (unsigned long long)levels, cpu.n);
            rfx_rows_free(&checked);
            rfx_rows_free(&back);
            rfx_rows_free(&cpu);
            rfx_gpu_rows_free(gpu, &gd);
        }
        rfx_gpu_rows_free(gpu, &d);
        rfx_rows_free(&e);
    }
}

/* The probe sums that choose a triangle count's variable order, against the host's. */
static void test_triangle_order_costs(void)
{
    if (!need_gpu())
        return;
    for (int shape = 0; shape < 3; shape++) {
        rfx_rows e = rows_random(shape == 2 ? 1 : 40000, 2, shape == 0 ? UNIFORM : ZIPF, 5000, true);
        uint32_t deg[5001] = {0};
        for (size_t i = 0; i < e.n; i++)
            deg[e.data[2 * i]]++;
        double want_xy = 0, want_yx = 0, xy = -1, yx = -1;
        for (size_t i = 0; i < e.n; i++)
            want_xy += deg[e.data[2 * i + 1]];
        for (int v = 0; v < 5001; v++)
            want_yx += (double)deg[v] * deg[v];
        rfx_dev_rows d = up(&e);
        CU_ASSERT_EQUAL(rfx_gpu_triangle_order_costs(gpu, &d, &xy, &yx), RFX_OK);
        CU_ASSERT_EQUAL(xy, want_xy);
        CU_ASSERT_EQUAL(yx, want_yx);
        rfx_gpu_rows_free(gpu, &d);
        rfx_rows_free(&e);
    }
}

/* A sorted relation reversed (the source that binds y first): the rows swapped and sorted,
 * as the host does it, over every size and shape the sorts are tested on. */
static void test_reversed(void)
{
    if (!need_gpu())
        return;
    static const dist shapes[] = {UNIFORM, EQUAL, ZIPF, WIDE};
    for (size_t i = 0; i < NS; i++)
        for (int k = 0; k < 4; k++) {
            rfx_rows e = rows_random(sizes[i], 2, shapes[k], 5000, true), want;
            rfx_rows_init(&want, 2);
            rfx_rows_reserve(&want, e.n);
            for (size_t r = 0; r < e.n; r++)
                rfx_rows_push(&want, (uint32_t[]){e.data[2 * r + 1], e.data[2 * r]});
            rfx_cpu_sort(&want, 4);
            rfx_dev_rows d = up(&e), out;
            rfx_gpu_rows_init(&out, 2);
            if (!gpu_agrees(rfx_gpu_reversed(gpu, &d, &out), &out, &want))
                fprintf(stderr, "\n    reversed: %zu rows, shape %d\n", e.n, k);
            rfx_gpu_rows_free(gpu, &d);
            rfx_rows_free(&e);
        }
}

/* One level of a TrieArray downloaded: n words from device memory p. */
static bool trie_level_is(uint32_t *p, size_t n, const uint32_t *want, const char *what, int level)
{
    rfx_dev_rows view = {p, n, n, 1};
    rfx_rows h = down(&view);
    bool ok = h.n == n && (n == 0 || memcmp(h.data, want, 4 * n) == 0);
    if (!ok)
        fprintf(stderr, "\n    TrieArray %s of level %d differs (%zu entries)\n", what, level, n);
    rfx_rows_free(&h);
    return ok;
}

/* rfx_gpu_trie_build against a sequential build of the same sorted rows, repeats kept
 * (arity 1 to 4, every size, value shapes from all equal to wide, the largest value). */
static void test_trie_build(void)
{
    if (!need_gpu())
        return;
    static const dist shapes[] = {UNIFORM, EQUAL, ZIPF, WIDE};
    for (int a = 1; a <= 4; a++)
        for (size_t i = 0; i < NS; i++)
            for (int k = 0; k < 4; k++) {
                rfx_rows r = rows_random(sizes[i], a, shapes[k], 40, false);
                if (r.n > 2 && k == 1)
                    r.data[r.n * a - 1] = UINT32_MAX;   /* the join's empty mark, in the last level */
                rfx_cpu_sort(&r, 4);
                size_t n[4] = {0};
                uint32_t *val[4], *ptr[4];
                bool has_max = false;
                for (int l = 0; l < a; l++) {
                    val[l] = malloc(4 * (r.n + 1));
                    ptr[l] = malloc(4 * (r.n + 1));
                }
                for (size_t row = 0; row < r.n; row++) {
                    int c = 0;   /* the first column where it differs from the row before */
                    while (row > 0 && c < a && r.data[row * a + c] == r.data[(row - 1) * a + c])
                        c++;
                    for (int l = c; l < a; l++) {
                        if (l + 1 < a)
                            ptr[l][n[l]] = (uint32_t)n[l + 1];
                        val[l][n[l]++] = r.data[row * a + l];
                    }
                    has_max |= r.data[row * a + a - 1] == UINT32_MAX;
                }
                for (int l = 0; l + 1 < a; l++)
                    ptr[l][n[l]] = (uint32_t)n[l + 1];
                rfx_dev_rows d = up(&r);
                rfx_dev_trie t;
                CU_ASSERT_EQUAL_FATAL(rfx_gpu_trie_build(gpu, &d, &t), RFX_OK);
                CU_ASSERT_EQUAL(t.levels, a);
                bool ok = t.last_has_max == has_max;
                if (r.n)
                    ok &= t.first == r.data[0] && t.last == r.data[(r.n - 1) * a];
                for (int l = 0; l < a; l++) {
                    ok &= t.n[l] == n[l];
                    ok = ok && trie_level_is(t.val[l], n[l], val[l], "val", l);
                    ok = ok && (l + 1 == a || trie_level_is(t.ptr[l], n[l] + 1, ptr[l], "ptr", l));
                    free(val[l]);
                    free(ptr[l]);
                }
                CU_ASSERT(ok);
                if (!ok)
                    fprintf(stderr, "\n    TrieArray: arity %d, %zu rows, shape %d\n", a, r.n, k);
                rfx_gpu_trie_free(gpu, &t);
                rfx_gpu_rows_free(gpu, &d);
                rfx_rows_free(&r);
            }
    rfx_dev_rows wide = {NULL, 1, 1, RFX_TRIE_MAX_LEVELS + 1};   /* refused before it is read */
    rfx_dev_trie t;
    CU_ASSERT_EQUAL(rfx_gpu_trie_build(gpu, &wide, &t), RFX_ERR_LIMIT);
    CU_ASSERT_PTR_NOT_NULL(strstr(rfx_gpu_error(gpu), "arity 9"));
}

/* Joins of two variables, small enough to be counted in one launch: the rows two relations
 * share, and the rows of one whose second column is in a unary relation (with rows
 * repeated); counted both ways against the CPU. */
static void test_lftj_two_vars(void)
{
    if (!need_gpu())
        return;
    static const int shared[] = {0, 1, 0, 1}, by_unary[] = {0, 1, 1};
    for (int q = 0; q < 2; q++) {
        rfx_rows a = rows_random(5000, 2, ZIPF, 300, true), b = rows_random(q ? 150 : 5000, q ? 1 : 2, ZIPF, 300, !q);
        if (q)
            rfx_cpu_sort(&b, 4);   /* sorted, repeats kept */
        const int *cv = q ? by_unary : shared;
        rfx_lftj_src s[2] = {{&a, cv, NULL}, {&b, cv + 2, NULL}};
        uint64_t want = 0;
        CU_ASSERT_EQUAL(rfx_cpu_lftj(s, 2, 2, NULL, &want, 2), RFX_OK);
        rfx_dev_rows da = up(&a), db = up(&b);
        const rfx_dev_rows *dp[2] = {&da, &db};
        CU_ASSERT(want > 0);
        CU_ASSERT_EQUAL(lftj_count_with(gpu, ONE_LAUNCH, dp, cv, 2, 2), want);
        CU_ASSERT_EQUAL(lftj_count_with(gpu, LEVEL_BY_LEVEL, dp, cv, 2, 2), want);
        rfx_gpu_rows_free(gpu, &da);
        rfx_gpu_rows_free(gpu, &db);
        rfx_rows_free(&a);
        rfx_rows_free(&b);
    }
}

/* The same join under a small device budget: the candidates of the last level (about
 * 30 million, 16 bytes each) cannot fit in 96 MB, so the frontier is split and expanded
 * in rounds; listing and counting (level by level: the one-launch count of small inputs
 * turned off) must still equal the CPU's. */
static void test_lftj_small_budget(void)
{
    if (!need_gpu())
        return;
    char err[256];
    rfx_gpu *small = open_gpu(0, (size_t)96 << 20, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(small);
    static const int tri[] = {0, 1, 1, 2, 0, 2};
    rfx_rows e = rows_random(quick ? 20000 : 300000, 2, UNIFORM, quick ? 800 : 3000, true);
    rfx_lftj_src s[3] = {{&e, tri, NULL}, {&e, tri + 2, NULL}, {&e, tri + 4, NULL}};
    rfx_rows cpu;
    rfx_rows_init(&cpu, 3);
    CU_ASSERT_EQUAL(rfx_cpu_lftj(s, 3, 3, &cpu, NULL, 4), RFX_OK);
    rfx_dev_rows d, out;
    rfx_gpu_rows_init(&d, 2);
    rfx_gpu_rows_init(&out, 3);
    CU_ASSERT_EQUAL_FATAL(rfx_gpu_upload(small, &e, &d), RFX_OK);
    const rfx_dev_rows *dp[3] = {&d, &d, &d};
    rfx_status st = rfx_gpu_lftj(small, dp, tri, 3, 3, &out, NULL);
    if (st != RFX_OK)
        fprintf(stderr, "\n    small-budget LFTJ: %s\n", rfx_gpu_error(small));
    CU_ASSERT_EQUAL(st, RFX_OK);
    const uint64_t n = lftj_count_with(small, LEVEL_BY_LEVEL, dp, tri, 3, 3);
    CU_ASSERT_EQUAL(lftj_count_with(small, NULL, dp, tri, 3, 3), cpu.n);   /* and in one launch (its size's way) */
    rfx_rows back;
    rfx_rows_init(&back, 3);
    CU_ASSERT_EQUAL(rfx_gpu_download(small, &out, &back), RFX_OK);
    CU_ASSERT(same(&back, &cpu));
    CU_ASSERT_EQUAL(n, cpu.n);
    rfx_rows_free(&back);
    rfx_rows_free(&cpu);
    rfx_rows_free(&e);
    rfx_gpu_rows_free(small, &d);
    rfx_gpu_rows_free(small, &out);
    rfx_gpu_close(small);
}

/* e = n disjoint triangles (3i, 3i+1, 3i+2) and n/4 random edges among their vertices,
 * each vertex v named (v * mult) mod 3n (mult prime to 3n: a bijection), oriented
 * from the lower id, sorted, distinct. */
static void triangles_and_noise(rfx_rows *e, uint32_t n, uint32_t mult)
{
    const uint32_t m = 3 * n;
    rfx_rows_init(e, 2);
    rfx_rows_reserve(e, 3 * (size_t)n + n / 4);
    for (uint32_t i = 0; i < n + n / 4; i++) {
        uint32_t uv[3][2] = {{3 * i, 3 * i + 1}, {3 * i, 3 * i + 2}, {3 * i + 1, 3 * i + 2}};
        int k = i < n ? 3 : 1;
        if (i >= n) {
            uv[0][0] = draw(UNIFORM, m);
            uv[0][1] = draw(UNIFORM, m);
        }
        for (int j = 0; j < k; j++) {
            uint32_t u = (uint32_t)((uint64_t)uv[j][0] * mult % m), v = (uint32_t)((uint64_t)uv[j][1] * mult % m);
            if (u == v)
                continue;
            e->data[2 * e->n] = u < v ? u : v;
            e->data[2 * e->n + 1] = u < v ? v : u;
            e->n++;
        }
    }
    rfx_cpu_sort(e, 4);
    rfx_cpu_unique(e, 4);
}

static const int tri_vars[] = {0, 1, 1, 2, 0, 2};

/* A pair count whose frontier is regrouped by its other node piece by piece (as under a
 * cap, where the whole frontier's sorted copy does not fit): disjoint triangles
 * x -> y -> z, x -> z leave one level-2 element per x, runs of one element, so the count
 * swaps its roles and regroups; in pieces of 1000 elements, whole, and with the last two
 * levels fused (no regroup) the count must equal the CPU's. Random edges among the
 * triangles' vertices add triangles that share vertices. */
static void test_lftj_regroup_pieces(void)
{
    if (!need_gpu())
        return;
    const uint32_t n = quick ? 20000 : 200000;
    rfx_rows e;
    triangles_and_noise(&e, n, 1);
    rfx_lftj_src s[3] = {{&e, tri_vars, NULL}, {&e, tri_vars + 2, NULL}, {&e, tri_vars + 4, NULL}};
    uint64_t want = 0;
    CU_ASSERT_EQUAL(rfx_cpu_lftj(s, 3, 3, NULL, &want, 4), RFX_OK);
    CU_ASSERT(want >= n);
    rfx_dev_rows d;
    rfx_gpu_rows_init(&d, 2);
    CU_ASSERT_EQUAL_FATAL(rfx_gpu_upload(gpu, &e, &d), RFX_OK);
    const rfx_dev_rows *dp[3] = {&d, &d, &d};
    tune_set("lftj_fuse_levels", "0");
    tune_set("lftj_regroup_piece", "1000");
    CU_ASSERT_EQUAL(lftj_count_with(gpu, LEVEL_BY_LEVEL, dp, tri_vars, 3, 3), want);
    current.lftj_regroup_piece = base_tuning.lftj_regroup_piece;
    CU_ASSERT_EQUAL(lftj_count_with(gpu, LEVEL_BY_LEVEL, dp, tri_vars, 3, 3), want);
    current.lftj_fuse_levels = base_tuning.lftj_fuse_levels;
    CU_ASSERT_EQUAL(lftj_count_with(gpu, LEVEL_BY_LEVEL, dp, tri_vars, 3, 3), want);
    rfx_gpu_rows_free(gpu, &d);
    rfx_rows_free(&e);
}

/* The boxes of one outer interval, as gpu_boxed.cuh joins them: the outer slice e(x, .)
 * whole, the inner e(y, .) in intervals of y (the first a view of the outer slice's first
 * rows: one pointer, fewer rows), each box counted with one memo (level 0 and the root
 * index kept from box to box; a box's runs are of one or two elements, so its count
 * regroups), whole and in pieces of 1,000 elements; the boxes' counts are the CPU's. Then
 * the memo is forgotten, as a box's copy of a new outer slice forgets it, and other rows
 * of the same size take the slice's place (the pool may hand out the same memory): nothing
 * kept may be read again. */
static void test_lftj_memo_boxes(void)
{
    if (!need_gpu())
        return;
    const uint32_t n = quick ? 20000 : 200000, parts = 5;
    rfx_gpu_lftj_memo *memo = rfx_gpu_lftj_memo_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(memo);
    for (int graph = 0; graph < 2; graph++) {
        rfx_rows e;
        triangles_and_noise(&e, n, graph ? 7 : 1);
        rfx_dev_rows d;
        rfx_gpu_rows_init(&d, 2);
        CU_ASSERT_EQUAL_FATAL(rfx_gpu_upload(gpu, &e, &d), RFX_OK);
        for (int pass = 0; pass < 2; pass++) {
            if (pass)
                tune_set("lftj_regroup_piece", "1000");
            uint64_t sum = 0;
            for (uint32_t p = 0, lo = 0; p < parts; p++) {
                const uint32_t ymax = p + 1 == parts ? UINT32_MAX : (uint32_t)((uint64_t)3 * n * (p + 1) / parts);
                uint32_t hi = lo;
                while (hi < e.n && e.data[2 * hi] < ymax)
                    hi++;
                rfx_rows hs = {e.data + 2 * (size_t)lo, hi - lo, hi - lo, 2};
                rfx_dev_rows ds = {d.data + 2 * (size_t)lo, hi - lo, hi - lo, 2};
                rfx_lftj_src s[3] = {{&e, tri_vars, NULL}, {&hs, tri_vars + 2, NULL}, {&e, tri_vars + 4, NULL}};
                const rfx_dev_rows *dp[3] = {&d, &ds, &d};
                uint64_t want = 0, got = ~0ull;
                CU_ASSERT_EQUAL(rfx_cpu_lftj(s, 3, 3, NULL, &want, 4), RFX_OK);
                CU_ASSERT_EQUAL(rfx_gpu_lftj_memo_run(gpu, dp, tri_vars, 3, 3, NULL, &got, memo), RFX_OK);
                CU_ASSERT_EQUAL(got, want);
                sum += got;
                lo = hi;
            }
            CU_ASSERT(sum >= n);
            current.lftj_regroup_piece = base_tuning.lftj_regroup_piece;
        }
        rfx_gpu_lftj_memo_forget(gpu, memo);
        rfx_gpu_rows_free(gpu, &d);
        rfx_rows_free(&e);
    }
    rfx_gpu_lftj_memo_free(gpu, memo);
}

/* A triangle count box by box over TrieArrays built once per part and given to the join
 * (rfx_gpu_lftj_tries: what an out-of-core count's boxes would hold), against the CPU box
 * by box: parts of the vertex ids; order x, y, z (box: x in part a, y in part b) and order
 * y, x, z over the reversed edges (y in part a, x in part b), counted and listed. */
static void test_lftj_given_tries(void)
{
    if (!need_gpu())
        return;
    enum { V = 600, PARTS = 4 };
    static const int xy[] = {0, 1, 1, 2, 0, 2}, yx[] = {0, 1, 0, 2, 1, 2};
    rfx_rows e, r;
    rfx_rows_init(&e, 2);
    rfx_rows_init(&r, 2);
    for (int i = 0; i < 24000; i++) {
        uint32_t u = (uint32_t)(rnd() % V), v = (uint32_t)(rnd() % (i % 3 ? V : 40));   /* low ids are hubs */
        if (u != v) {
            rfx_rows_push(&e, (uint32_t[]){u < v ? u : v, u < v ? v : u});
            rfx_rows_push(&r, (uint32_t[]){u < v ? v : u, u < v ? u : v});
        }
    }
    rfx_cpu_sort(&e, 4);
    rfx_cpu_unique(&e, 4);
    rfx_cpu_sort(&r, 4);
    rfx_cpu_unique(&r, 4);
    rfx_dev_rows de = up(&e), dr = up(&r);
    size_t elo[PARTS + 1], rlo[PARTS + 1];   /* part k: ids [k V / PARTS, (k + 1) V / PARTS) */
    for (int k = 0; k <= PARTS; k++) {
        elo[k] = rlo[k] = 0;
        while (elo[k] < e.n && e.data[2 * elo[k]] < (uint32_t)(k * V / PARTS))
            elo[k]++;
        while (rlo[k] < r.n && r.data[2 * rlo[k]] < (uint32_t)(k * V / PARTS))
            rlo[k]++;
    }
    elo[PARTS] = e.n;
    rlo[PARTS] = r.n;
    rfx_rows he[PARTS], hr[PARTS];
    rfx_dev_rows pe[PARTS], pr[PARTS];
    rfx_dev_trie te[PARTS], tr[PARTS];
    for (int k = 0; k < PARTS; k++) {
        he[k] = (rfx_rows){e.data + 2 * elo[k], elo[k + 1] - elo[k], elo[k + 1] - elo[k], 2};
        hr[k] = (rfx_rows){r.data + 2 * rlo[k], rlo[k + 1] - rlo[k], rlo[k + 1] - rlo[k], 2};
        pe[k] = (rfx_dev_rows){de.data + 2 * elo[k], he[k].n, he[k].n, 2};
        pr[k] = (rfx_dev_rows){dr.data + 2 * rlo[k], hr[k].n, hr[k].n, 2};
        CU_ASSERT_FATAL(he[k].n > 0 && hr[k].n > 0);
        CU_ASSERT_EQUAL_FATAL(rfx_gpu_trie_build(gpu, &pe[k], &te[k]), RFX_OK);
        CU_ASSERT_EQUAL_FATAL(rfx_gpu_trie_build(gpu, &pr[k], &tr[k]), RFX_OK);
    }
    rfx_lftj_src whole[3] = {{&e, xy, NULL}, {&e, xy + 2, NULL}, {&e, xy + 4, NULL}};
    uint64_t want = 0;
    CU_ASSERT_EQUAL(rfx_cpu_lftj(whole, 3, 3, NULL, &want, 4), RFX_OK);
    CU_ASSERT(want > 10000);
    for (int order = 0; order < 2; order++) {
        uint64_t sum = 0;
        for (int a = 0; a < PARTS; a++)
            for (int b = order ? 0 : a; b < (order ? a + 1 : PARTS); b++) {
                const int *cv = order ? yx : xy;
                const rfx_rows *hs[3] = {order ? &hr[a] : &he[a], order ? &he[a] : &he[b], order ? &he[b] : &he[a]};
                const rfx_dev_rows *ds[3] = {order ? &pr[a] : &pe[a], order ? &pe[a] : &pe[b], order ? &pe[b] : &pe[a]};
                const rfx_dev_trie *ts[3] = {order ? &tr[a] : &te[a], order ? &te[a] : &te[b], order ? &te[b] : &te[a]};
                rfx_lftj_src s[3] = {{hs[0], cv, NULL}, {hs[1], cv + 2, NULL}, {hs[2], cv + 4, NULL}};
                rfx_rows cpu;
                rfx_rows_init(&cpu, 3);
                CU_ASSERT_EQUAL(rfx_cpu_lftj(s, 3, 3, &cpu, NULL, 4), RFX_OK);
                uint64_t got = ~0ull;
                CU_ASSERT_EQUAL(rfx_gpu_lftj_tries(gpu, ds, ts, cv, 3, 3, NULL, &got), RFX_OK);
                CU_ASSERT_EQUAL(got, cpu.n);
                rfx_dev_rows gd;
                rfx_gpu_rows_init(&gd, 3);
                CU_ASSERT_EQUAL(rfx_gpu_lftj_tries(gpu, ds, ts, cv, 3, 3, &gd, NULL), RFX_OK);
                rfx_rows listed = down(&gd);
                CU_ASSERT(same(&listed, &cpu));
                if (got != cpu.n || !same(&listed, &cpu))
                    fprintf(stderr, "\n    order %s, box (%d, %d): counted %llu, listed %zu, CPU %zu\n",
                            order ? "yx" : "xy", a, b, (unsigned long long)got, listed.n, cpu.n);
                sum += got;
                rfx_rows_free(&listed);
                rfx_rows_free(&cpu);
                rfx_gpu_rows_free(gpu, &gd);
            }
        CU_ASSERT_EQUAL(sum, want);
    }
    /* only a two-column source can be given as a TrieArray */
    static const int three[] = {0, 1, 2};
    rfx_dev_rows wide = {de.data, e.n * 2 / 3, e.n * 2 / 3, 3};
    const rfx_dev_rows *ws[1] = {&wide};
    const rfx_dev_trie *wt[1] = {&te[0]};
    uint64_t none = 0;
    CU_ASSERT_EQUAL(rfx_gpu_lftj_tries(gpu, ws, wt, three, 1, 3, NULL, &none), RFX_ERR_INTERNAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(rfx_gpu_error(gpu), "given as a TrieArray"));
    for (int k = 0; k < PARTS; k++) {
        rfx_gpu_trie_free(gpu, &te[k]);
        rfx_gpu_trie_free(gpu, &tr[k]);
    }
    rfx_gpu_rows_free(gpu, &de);
    rfx_gpu_rows_free(gpu, &dr);
    rfx_rows_free(&e);
    rfx_rows_free(&r);
}

/* Triangles counted out of core by parts of the vertices (rfx_gpu_triangles_parts) in
 * contexts of a few megabytes, so that the edges make tens of chunks and several parts:
 * edges oriented from the lower id with hubs (the rows of a part's own chunks all go up),
 * the same edges both ways with self-loops (rows from a part's later chunks into earlier
 * ones, joined when those chunks come again) and a vertex 0xFFFFFFFF (the last chunk's
 * bound); each count equals the CPU's join. A value leading more rows than a chunk may
 * hold is RFX_ERR_NOMEM with a message (the caller then boxes the general way). */
static void test_triangles_parts(void)
{
    if (!need_gpu())
        return;
    static const int tri[] = {0, 1, 1, 2, 0, 2};
    const uint32_t V = 30000;
    rfx_rows e, both;
    rfx_rows_init(&e, 2);
    rfx_rows_init(&both, 2);
    for (int i = 0; i < 600000; i++) {
        uint32_t u = (uint32_t)(rnd() % V), v = (uint32_t)(rnd() % (i % 4 ? V : 300));   /* low ids are hubs */
        if (u == v)
            continue;
        rfx_rows_push(&e, (uint32_t[]){u < v ? u : v, u < v ? v : u});
        rfx_rows_push(&both, (uint32_t[]){u, v});
        rfx_rows_push(&both, (uint32_t[]){v, u});
    }
    for (uint32_t v = 0; v < V; v += 97) {
        rfx_rows_push(&e, (uint32_t[]){v, UINT32_MAX});
        rfx_rows_push(&both, (uint32_t[]){v, v});
        rfx_rows_push(&both, (uint32_t[]){v, UINT32_MAX});
        rfx_rows_push(&both, (uint32_t[]){UINT32_MAX, v});
    }
    rfx_rows *graphs[2] = {&e, &both};
    const char *names[2] = {"oriented", "both ways"};
    for (int k = 0; k < 2; k++) {
        rfx_cpu_sort(graphs[k], 4);
        rfx_cpu_unique(graphs[k], 4);
        rfx_lftj_src s[3] = {{graphs[k], tri, NULL}, {graphs[k], tri + 2, NULL}, {graphs[k], tri + 4, NULL}};
        uint64_t want = 0;
        CU_ASSERT_EQUAL(rfx_cpu_lftj(s, 3, 3, NULL, &want, 4), RFX_OK);
        CU_ASSERT(want > 1000);
        static const size_t budgets[] = {(size_t)2 << 20, (size_t)4 << 20};
        rfx_gpu *small = NULL;
        size_t rows_bytes = 0;
        /* each budget with two lanes and the chunks sent as rows, one lane, two again in the
         * same context with a part's first piece joined after the part before
         * (pairs_early=0), with the chunks sent as TrieArrays (pairs_host_trie=2;
         * the others as the count chooses), and from a TrieArray the caller keeps,
         * registered (as the out-of-core layer's) */
        rfx_lftj_trie kept;
        CU_ASSERT_EQUAL_FATAL(rfx_lftj_trie_build(graphs[k], 4, &kept), RFX_OK);
        for (int run = 0; run < 10; run++) {
            const int b = run / 5, lanes = run % 5 == 1 ? 1 : 2;
            char err[256];
            if (run % 5 == 0) {
                small = open_gpu(0, budgets[b], err, sizeof err);
                CU_ASSERT_PTR_NOT_NULL_FATAL(small);
            }
            tune_set("pairs_lanes", lanes == 1 ? "1" : "2");
            if (run % 5 == 2)
                tune_set("pairs_early", "0");
            if (run % 5 == 0 || run % 5 == 3)
                tune_set("pairs_host_trie", run % 5 ? "2" : "0");
            bool reg[3] = {false, false, false};
            rfx_rows *part[3] = {&kept.val0, &kept.ptr0, &kept.val1};
            for (int q = 0; q < 3 && run % 5 == 4; q++)
                reg[q] = rfx_gpu_host_register(part[q]->data, part[q]->n * 4);
            uint64_t got = ~0ull;
            size_t boxes = 0, parts = 0, bytes = 0;
            rfx_status st = rfx_gpu_triangles_parts(small, graphs[k], run % 5 == 4 ? &kept : NULL, &got, &boxes, &parts,
                                                    &bytes, NULL, NULL);
            for (int q = 0; q < 3; q++)
                if (reg[q])
                    rfx_gpu_host_unregister(part[q]->data);
            current = base_tuning;
            CU_ASSERT_EQUAL(st, RFX_OK);
            CU_ASSERT_EQUAL(got, want);
            CU_ASSERT(parts > 1 && boxes > parts && bytes >= graphs[k]->n * (run % 5 >= 3 ? 4 : 8));
            if (run % 5 == 0)
                rows_bytes = bytes;
            else if (run % 5 >= 3)   /* the TrieArrays were sent: fewer bytes than the rows */
                CU_ASSERT(bytes < rows_bytes);
            if (st != RFX_OK || got != want || parts < 2)
                fprintf(stderr, "\n    %s, budget %zu, %d lanes: status %d; %llu triangles against %llu, %zu parts, %zu boxes: %s\n",
                        names[k], budgets[b], lanes, (int)st, (unsigned long long)got, (unsigned long long)want,
                        parts, boxes, rfx_gpu_error(small));
            if (run % 5 == 4)
                rfx_gpu_close(small);
        }
        rfx_lftj_trie_free(&kept);
    }
    /* A device allocation failing at each of several points of a two-lane count (the
     * setup, a chunk's TrieArray, a box, the other lane's context): the count is the
     * same, whether a box was retried in halves or the count again on one lane. */
    {
        char err[256];
        rfx_gpu *small = open_gpu(0, (size_t)4 << 20, err, sizeof err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(small);
        rfx_lftj_src s[3] = {{&e, tri, NULL}, {&e, tri + 2, NULL}, {&e, tri + 4, NULL}};
        uint64_t want = 0;
        CU_ASSERT_EQUAL(rfx_cpu_lftj(s, 3, 3, NULL, &want, 4), RFX_OK);
        static const long nth[] = {1, 3, 7, 20, 60, 150, 400};
        for (size_t f = 0; f < sizeof nth / sizeof nth[0]; f++) {
            tune_set("pairs_lanes", "2");
            rfx_fault_set_device(nth[f]);
            uint64_t got = ~0ull;
            rfx_status st = rfx_gpu_triangles_parts(small, &e, NULL, &got, NULL, NULL, NULL, NULL, NULL);
            const bool fired = rfx_fault_fired();
            rfx_fault_set_device(0);
            current = base_tuning;
            CU_ASSERT_EQUAL(st, RFX_OK);
            CU_ASSERT_EQUAL(got, want);
            if (st != RFX_OK || got != want)
                fprintf(stderr, "\n    device allocation %ld failing (%s): status %d, %llu triangles against %llu: %s\n",
                        nth[f], fired ? "fired" : "not reached", (int)st, (unsigned long long)got,
                        (unsigned long long)want, rfx_gpu_error(small));
        }
        rfx_gpu_close(small);
    }
    /* a star: vertex 1 leads 400000 rows, more than a 3 MB context's chunk */
    rfx_rows star;
    rfx_rows_init(&star, 2);
    for (uint32_t v = 2; v < 400002; v++)
        rfx_rows_push(&star, (uint32_t[]){1, v});
    char err[256];
    rfx_gpu *small = open_gpu(0, (size_t)3 << 20, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(small);
    uint64_t got = 0;
    CU_ASSERT_EQUAL(rfx_gpu_triangles_parts(small, &star, NULL, &got, NULL, NULL, NULL, NULL, NULL), RFX_ERR_NOMEM);
    CU_ASSERT_PTR_NOT_NULL(strstr(rfx_gpu_error(small), "leads more than"));
    rfx_gpu_close(small);
    rfx_rows_free(&star);
    rfx_rows_free(&e);
    rfx_rows_free(&both);
}

void gpu_lftj_tests(CU_pSuite s)
{
    CU_add_test(s, "leapfrog triejoin", test_lftj);
    CU_add_test(s, "leapfrog triejoin in rounds under a small budget", test_lftj_small_budget);
    CU_add_test(s, "pair count regrouped in pieces", test_lftj_regroup_pieces);
    CU_add_test(s, "boxes of one outer interval share a memo", test_lftj_memo_boxes);
    CU_add_test(s, "triangles box by box over TrieArrays given to the join", test_lftj_given_tries);
    CU_add_test(s, "triangles out of core by parts of the vertices", test_triangles_parts);
    CU_add_test(s, "leapfrog triejoin of two variables", test_lftj_two_vars);
    CU_add_test(s, "leapfrog triejoin counting over hubs and the largest value", test_lftj_hubs);
    CU_add_test(s, "leapfrog triejoin over one relation: 4-cliques, triangles", test_lftj_one_relation);
    CU_add_test(s, "probe sums for a triangle count's variable order", test_triangle_order_costs);
    CU_add_test(s, "a sorted relation reversed", test_reversed);
    CU_add_test(s, "vertices renamed by degree rank", test_rename_by_degree);
    CU_add_test(s, "leapfrog triejoin: the pair count's nodes narrowed", test_lftj_narrowed);
    CU_add_test(s, "TrieArray built on the device", test_trie_build);
}
