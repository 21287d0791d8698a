/* test_gpu.c: the CUDA primitives against the CPU ones on the same random inputs
 * (empty, one tuple, 2^k +- 1, all-equal keys, Zipf-skewed keys, up to 2^28 tuples with
 * RFX_GPU_BIG=1), and whole programs on both backends with byte-identical outputs.
 * On a machine without a CUDA device every test reports "skipped: no CUDA device". */
#include "harness.h"

#include <stdlib.h>

#include "gpu_bench.h"
#include "base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lftj.h"

static rfx_gpu *gpu;

/* The tuning of every context the tests open (open_gpu), changed in place as a test goes:
 * base_tuning (test_gpu's defaults, set in main) with the test's settings on top. */
static rfx_tuning base_tuning, current;

static void tune_set(const char *key, const char *value)
{
    char err[256];
    if (!rfx_tuning_set(&current, key, value, err, sizeof err))
        CU_FAIL(err);
}

/* rfx_gpu_open, the context following `current`. */
static rfx_gpu *open_gpu(int device, size_t budget, char *err, size_t errcap)
{
    rfx_gpu *g = rfx_gpu_open(device, budget, err, errcap);
    if (g)
        rfx_gpu_set_tuning(g, &current);
    return g;
}

static char *cache_dir;     /* NVRTC cubins of this run */
static bool quick;          /* RFX_GPU_QUICK=1: small sizes only (for compute-sanitizer) */

static uint64_t rng = 0x1234567ull;
static uint64_t rnd(void)
{
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

typedef enum dist { UNIFORM, EQUAL, ZIPF, WIDE } dist;

static uint32_t draw(dist d, uint32_t range)
{
    switch (d) {
    case UNIFORM: return (uint32_t)(rnd() % range);
    case EQUAL: return 5;
    case WIDE: return (uint32_t)rnd();
    default: {
        double u = (double)(rnd() >> 11) / 9007199254740992.0;
        return (uint32_t)(exp(u * log((double)range + 1.0)) - 1.0);
    }
    }
}

static rfx_rows rows_random(size_t n, int arity, dist d, uint32_t range, bool set)
{
    rfx_rows r;
    rfx_rows_init(&r, arity);
    rfx_rows_reserve(&r, n);
    for (size_t i = 0; i < n * (size_t)arity; i++)
        r.data[i] = draw(d, range);
    r.n = n;
    if (set) {
        rfx_cpu_sort(&r, 4);
        rfx_cpu_unique(&r, 4);
    }
    return r;
}

static bool need_gpu(void)
{
    if (gpu)
        return true;
    printf("skipped: no CUDA device ");
    return false;
}

static bool same(const rfx_rows *a, const rfx_rows *b)
{
    if (a->arity != b->arity || a->n != b->n) {
        fprintf(stderr, "\n    size %zu/%d vs %zu/%d\n", a->n, a->arity, b->n, b->arity);
        return false;
    }
    return a->n == 0 || a->arity == 0 || memcmp(a->data, b->data, 4u * a->arity * a->n) == 0;
}

static rfx_dev_rows up(const rfx_rows *h)
{
    rfx_dev_rows d;
    rfx_gpu_rows_init(&d, h->arity);
    CU_ASSERT_EQUAL(rfx_gpu_upload(gpu, h, &d), RFX_OK);
    return d;
}

static rfx_rows down(const rfx_dev_rows *d)
{
    rfx_rows h;
    rfx_rows_init(&h, d->arity);
    CU_ASSERT_EQUAL(rfx_gpu_download(gpu, d, &h), RFX_OK);
    return h;
}

/* The GPU's result gd (its call returned st) equals the CPU's hc; both are freed. */
static bool gpu_agrees(rfx_status st, rfx_dev_rows *gd, rfx_rows *hc)
{
    CU_ASSERT_EQUAL(st, RFX_OK);
    rfx_rows back = down(gd);
    bool ok = same(&back, hc);
    CU_ASSERT(ok);
    rfx_rows_free(&back);
    rfx_rows_free(hc);
    rfx_gpu_rows_free(gpu, gd);
    return ok;
}

static const size_t sizes[] = {0, 1, 2, 255, 256, 257, 65535, 65537, 1000003};
#define NS (sizeof sizes / sizeof sizes[0])

/* Every sort of h (rows of any arity) on the device against the CPU's: sort and unique in
 * place, sort into fresh rows (the source left as it was), sort and unique into fresh rows
 * and in place, and for two columns the reversed rows with them. Frees h. */
static void sort_check(rfx_rows *h)
{
    int a = h->arity;
    rfx_dev_rows g = up(h), src = up(h), into;
    rfx_gpu_rows_init(&into, a);
    CU_ASSERT_EQUAL(rfx_gpu_sort(gpu, &g), RFX_OK);
    CU_ASSERT_EQUAL(rfx_gpu_unique(gpu, &g), RFX_OK);
    CU_ASSERT_EQUAL(rfx_gpu_sort_into(gpu, &src, &into), RFX_OK);   /* src left as it was */
    rfx_rows sorted = down(&into), before = down(&src);
    CU_ASSERT(same(&before, h));
    rfx_cpu_sort(h, 4);
    CU_ASSERT(same(&sorted, h));
    rfx_cpu_unique(h, 4);
    rfx_rows back = down(&g);
    CU_ASSERT(same(&back, h));
    /* both at once, into fresh rows and in place */
    rfx_dev_rows su;
    rfx_gpu_rows_init(&su, a);
    CU_ASSERT_EQUAL(rfx_gpu_sort_unique_into(gpu, &src, 0, NULL, &su), RFX_OK);
    rfx_rows su_back = down(&su);
    CU_ASSERT(same(&su_back, h));
    rfx_rows_free(&su_back);
    rfx_gpu_rows_free(gpu, &su);
    if (a == 2) {   /* and the reversed rows with them */
        rfx_dev_rows rv;
        rfx_rows want_rv;
        rfx_gpu_rows_init(&su, 2);
        rfx_gpu_rows_init(&rv, 2);
        rfx_rows_init(&want_rv, 2);
        for (size_t r = 0; r < h->n; r++)
            rfx_rows_push(&want_rv, (uint32_t[]){h->data[2 * r + 1], h->data[2 * r]});
        rfx_cpu_sort(&want_rv, 4);
        CU_ASSERT_EQUAL(rfx_gpu_sort_unique_reversed(gpu, &src, &su, &rv), RFX_OK);
        su_back = down(&su);
        CU_ASSERT(same(&su_back, h));
        rfx_rows_free(&su_back);
        rfx_gpu_rows_free(gpu, &su);
        if (!gpu_agrees(RFX_OK, &rv, &want_rv))
            fprintf(stderr, "\n    sort_unique_reversed: %zu rows\n", h->n);
    }
    CU_ASSERT_EQUAL(rfx_gpu_sort_unique_into(gpu, &src, 0, NULL, &src), RFX_OK);
    su_back = down(&src);
    CU_ASSERT(same(&su_back, h));
    rfx_rows_free(&su_back);
    rfx_rows_free(h);
    rfx_rows_free(&back);
    rfx_rows_free(&sorted);
    rfx_rows_free(&before);
    rfx_gpu_rows_free(gpu, &g);
    rfx_gpu_rows_free(gpu, &src);
    rfx_gpu_rows_free(gpu, &into);
}

static void sort_case(dist d, uint32_t range)
{
    if (!need_gpu())
        return;
    for (size_t s = 0; s < NS; s++)
        for (int a = 1; a <= 4; a++) {
            if (quick && sizes[s] > 70000)
                continue;
            rfx_rows h = rows_random(sizes[s], a, d, range, false);
            sort_check(&h);
        }
}

/* Two-column rows from 2^23 on are sorted as 64-bit words, by column 1 and then by column 0
 * (fewer, packed): each distribution, and either column all zero (one sort of the two). */
static void test_sort_words(void)
{
    if (!need_gpu())
        return;
    const size_t n = ((size_t)1 << 23) + 5;
    const dist ds[] = {UNIFORM, EQUAL, ZIPF, WIDE};
    const uint32_t ranges[] = {5000, 1, 1u << 20, 0};
    for (int i = 0; i < 4; i++)
        for (int zero = -1; zero < 2; zero++) {
            if (quick && ds[i] != WIDE && zero >= 0)
                continue;
            rfx_rows h = rows_random(n, 2, ds[i], ranges[i], false);
            for (size_t r = 0; zero >= 0 && r < n; r++)
                h.data[2 * r + (size_t)zero] = 0;
            sort_check(&h);
        }
}

static void test_sort_uniform(void) { sort_case(UNIFORM, 5000); }
static void test_sort_equal(void) { sort_case(EQUAL, 1); }
static void test_sort_zipf(void) { sort_case(ZIPF, 1u << 20); }
static void test_sort_wide(void) { sort_case(WIDE, 0); }

/* A sorted two-column relation with its columns swapped, sorted on the new first column
 * alone (SORT keys=1): equal to the whole sort, over sizes on both sides of the word sort's
 * threshold and with either column zero. */
static void test_sort_leading(void)
{
    if (!need_gpu())
        return;
    static const size_t ns[] = {1, 2, 3, 1000, 65537, 300001, ((size_t)1 << 23) + 3};
    for (size_t s = 0; s < sizeof ns / sizeof *ns; s++)
        for (int zero = -1; zero < 2; zero++) {
            if (quick && ns[s] > 70000 && zero >= 0)
                continue;
            rfx_rows h = rows_random(ns[s], 2, UNIFORM, (uint32_t)(ns[s] / 3 + 2), true);
            for (size_t r = 0; zero >= 0 && r < h.n; r++)
                h.data[2 * r + (size_t)zero] = 0;
            rfx_cpu_sort(&h, 4);   /* sorted on both columns (zeroing may have unsorted it) */
            for (size_t r = 0; r < h.n; r++) {   /* swapped: rows of equal column 0 in order */
                uint32_t t = h.data[2 * r];
                h.data[2 * r] = h.data[2 * r + 1];
                h.data[2 * r + 1] = t;
            }
            rfx_dev_rows src = up(&h), dst;
            rfx_gpu_rows_init(&dst, 2);
            CU_ASSERT_EQUAL(rfx_gpu_sort_leading_into(gpu, &src, 1, &dst), RFX_OK);
            rfx_rows back = down(&dst), before = down(&src);
            CU_ASSERT(same(&before, &h));   /* src left as it was */
            rfx_cpu_sort(&h, 4);
            bool eq = same(&back, &h);
            if (!eq)
                fprintf(stderr, "\n    sort on the leading column: %zu rows, column %d zero", h.n, zero);
            CU_ASSERT(eq);
            rfx_rows_free(&h);
            rfx_rows_free(&back);
            rfx_rows_free(&before);
            rfx_gpu_rows_free(gpu, &src);
            rfx_gpu_rows_free(gpu, &dst);
        }
}

/* A sort-unique of rows sorted on their first two columns (the plan's hint): runs of 1..most
 * rows equal on them, sorted each alone, with repeats or none; long runs, or the hint wrong
 * (the first row moved to the end), take the full sort. Against the CPU's sort and unique. */
static void test_sort_unique_hinted(void)
{
    if (!need_gpu())
        return;
    /* rows sorted on their first p columns, in runs of 1 to `most` rows equal on them (p 5:
     * sorted on every column first); from 2^20 rows the prefix is checked first (runs of one
     * row: a copy; sorted on every column: a copy made unique) */
    const struct { size_t most, n; int p; bool bad, distinct; } cases[] = {
        {1, 300007, 2, false, false},    {6, 300007, 2, false, false},   {6, 300007, 2, false, true},
        {32, 300007, 2, false, false},   {200, 300007, 2, false, false}, {6, 300007, 2, true, false},
        {1, 1200007, 2, false, false},   {6, 1200007, 2, false, false},  {1, 1200007, 2, true, false},
        {200, 300007, 5, false, false},  {1, 1200007, 5, false, true},   {6, 300007, 5, true, false}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const size_t n = cases[k].n;
        rfx_rows h;
        rfx_rows_init(&h, 5);
        rfx_rows_reserve(&h, n);
        h.n = n;
        uint32_t run = 0;
        for (size_t i = 0; i < n; run++) {
            size_t len = 1 + (size_t)(rnd() % cases[k].most);
            for (size_t q = 0; q < len && i < n; q++, i++) {
                uint32_t *row = h.data + i * 5;
                row[0] = run / 1000, row[1] = run % 1000;
                row[2] = (uint32_t)(rnd() % 3), row[3] = (uint32_t)(rnd() % 2), row[4] = (uint32_t)(rnd() % 3);
                if (cases[k].distinct)   // no two rows equal: nothing to remove
                    row[4] = (uint32_t)q;
            }
        }
        if (cases[k].p == 5)
            CU_ASSERT_EQUAL(rfx_cpu_sort(&h, 4), RFX_OK);
        if (cases[k].bad) {
            uint32_t first[5];
            memcpy(first, h.data, sizeof first);
            memmove(h.data, h.data + 5, (n - 1) * 5 * sizeof(uint32_t));
            memcpy(h.data + (n - 1) * 5, first, sizeof first);
        }
        rfx_dev_rows src = up(&h), dst;
        rfx_gpu_rows_init(&dst, 5);
        bool held = false;
        CU_ASSERT_EQUAL(rfx_gpu_sort_unique_into(gpu, &src, cases[k].p, &held, &dst), RFX_OK);
        CU_ASSERT_EQUAL(held, (cases[k].most <= 32 || cases[k].p == 5) && !cases[k].bad);
        rfx_rows back = down(&dst);
        rfx_cpu_sort(&h, 4);
        rfx_cpu_unique(&h, 4);
        bool eq = same(&back, &h);
        if (!eq)
            fprintf(stderr, "\n    hinted sort-unique: %zu rows sorted on %d columns in runs of up to %zu%s", n,
                    cases[k].p, cases[k].most, cases[k].bad ? ", hint wrong" : "");
        CU_ASSERT(eq);
        rfx_rows_free(&h);
        rfx_rows_free(&back);
        rfx_gpu_rows_free(gpu, &src);
        rfx_gpu_rows_free(gpu, &dst);
    }
}

/* Wider rows on their first k columns: stable (a group's rows in src's order, as an
 * aggregate's float fold needs), against the CPU's sort on the leading columns. */
static void test_sort_leading_stable(void)
{
    if (!need_gpu())
        return;
    static const size_t ns[] = {2, 5, 1000, 300001};
    static const int shapes[][2] = {{3, 1}, {4, 2}, {4, 3}, {5, 1}};   /* arity, keys */
    for (size_t s = 0; s < sizeof ns / sizeof *ns; s++)
        for (size_t f = 0; f < sizeof shapes / sizeof *shapes; f++)
            for (int zero = 0; zero < 2; zero++) {   /* zero: every key 0 (no radix pass) */
                const int a = shapes[f][0], k = shapes[f][1];
                rfx_rows h = rows_random(ns[s], a, ZIPF, 40, false);   /* few groups, rows unsorted */
                for (size_t r = 0; zero && r < h.n; r++)
                    for (int c = 0; c < k; c++)
                        h.data[r * (size_t)a + (size_t)c] = 0;
                rfx_dev_rows src = up(&h), dst;
                rfx_gpu_rows_init(&dst, a);
                CU_ASSERT_EQUAL(rfx_gpu_sort_leading_into(gpu, &src, k, &dst), RFX_OK);
                rfx_rows back = down(&dst);
                CU_ASSERT_EQUAL(rfx_cpu_sort_leading(&h, k, 4), RFX_OK);
                bool eq = same(&back, &h);
                if (!eq)
                    fprintf(stderr, "\n    stable sort on %d of %d columns: %zu rows", k, a, h.n);
                CU_ASSERT(eq);
                rfx_rows_free(&h);
                rfx_rows_free(&back);
                rfx_gpu_rows_free(gpu, &src);
                rfx_gpu_rows_free(gpu, &dst);
            }
}

static void test_sort_big(void)
{
    if (!need_gpu())
        return;
    if (quick)
        return;
    const char *big = getenv("RFX_GPU_BIG");
    size_t n = big && *big == '1' ? (1u << 28) : (1u << 24) + 1;
    rfx_rows h = rows_random(n, 2, WIDE, 0, false);
    rfx_dev_rows g = up(&h);
    CU_ASSERT_EQUAL(rfx_gpu_sort(gpu, &g), RFX_OK);
    rfx_cpu_sort(&h, 8);
    rfx_rows back = down(&g);
    CU_ASSERT(same(&back, &h));
    rfx_rows_free(&h);
    rfx_rows_free(&back);
    rfx_gpu_rows_free(gpu, &g);
}

static rfx_rx col(int c) { return (rfx_rx){.kind = RFX_RX_COL, .prim = RFX_NUMBER, .col = c}; }

static void test_join(void)
{
    if (!need_gpu())
        return;
    dist ds[] = {UNIFORM, EQUAL, ZIPF};
    for (int di = 0; di < 3; di++)
        for (size_t s = 0; s < NS - 1; s++)
            for (int k = 0; k <= 2; k++) {
                size_t na = sizes[s], nb = sizes[(s + 3) % (NS - 1)];
                if (quick && (na > 70000 || nb > 70000))
                    continue;
                if (k == 0) {
                    na = na > 500 ? 500 : na;
                    nb = nb > 300 ? 300 : nb;
                }
                if (ds[di] == EQUAL && k > 0) {
                    na = na > 3000 ? 3000 : na;
                    nb = nb > 3000 ? 3000 : nb;
                }
                uint32_t range = (uint32_t)(na / 3 + 7);
                rfx_rows a = rows_random(na, 2, ds[di], range, true), b = rows_random(nb, 2, ds[di], range, true);
                rfx_rx c[4] = {col(0), col(1), col(2), col(3)};
                rfx_rx *outs[3] = {&c[1], &c[3], &c[0]};
                rfx_rx lt = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER, .op = RFX_LT, .l = &c[1], .r = &c[3]};
                /* an output computed, not copied: the one-pass join runs the program */
                rfx_rx sum = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_ADD, .l = &c[1], .r = &c[3]};
                rfx_rx *outs_sum[3] = {&sum, &c[3], &c[0]};
                for (int withp = 0; withp < 3; withp++) {
                    rfx_rx *const *o = withp == 2 ? outs_sum : outs;
                    rfx_rows hc;
                    rfx_rows_init(&hc, 3);
                    CU_ASSERT_EQUAL(rfx_cpu_join(&a, &b, k, withp == 1 ? &lt : NULL, o, 3, false, &hc, 4), RFX_OK);
                    rfx_dev_rows ga = up(&a), gb = up(&b), gc;
                    rfx_gpu_rows_init(&gc, 3);
                    /* both emit key groups in order and pairs within a group row-major */
                    gpu_agrees(rfx_gpu_join(gpu, &ga, &gb, k, withp == 1 ? &lt : NULL, o, 3, &gc), &gc, &hc);
                    rfx_gpu_rows_free(gpu, &ga);
                    rfx_gpu_rows_free(gpu, &gb);
                }
                rfx_rows_free(&a);
                rfx_rows_free(&b);
            }
    /* few matches: a tile of outputs spans more left rows than the expansion stages */
    rfx_rows a = rows_random(200000, 2, UNIFORM, 1000000, true), b;
    rfx_rows_init(&b, 2);
    rfx_rows_reserve(&b, 1000);
    for (uint32_t v = 0; v < 1000; v++) {
        b.data[2 * v] = v * 997;
        b.data[2 * v + 1] = v;
    }
    b.n = 1000;
    rfx_rx c[4] = {col(0), col(1), col(2), col(3)};
    rfx_rx *outs[3] = {&c[1], &c[3], &c[0]};
    rfx_rows hc;
    rfx_rows_init(&hc, 3);
    CU_ASSERT_EQUAL(rfx_cpu_join(&a, &b, 1, NULL, outs, 3, false, &hc, 4), RFX_OK);
    rfx_dev_rows ga = up(&a), gb = up(&b), gc;
    rfx_gpu_rows_init(&gc, 3);
    CU_ASSERT(hc.n > 0);
    gpu_agrees(rfx_gpu_join(gpu, &ga, &gb, 1, NULL, outs, 3, &gc), &gc, &hc);
    rfx_rows_free(&a);
    rfx_rows_free(&b);
    rfx_gpu_rows_free(gpu, &ga);
    rfx_gpu_rows_free(gpu, &gb);
}

/* The GPU's semi-join (keep) or anti-join of a by the k-column keys bk equals the CPU's;
 * says which differs on stderr. */
static bool semijoin_as_cpu(const rfx_rows *a, const rfx_rows *bk, int k, bool keep)
{
    rfx_rows hc;
    rfx_rows_init(&hc, a->arity);
    rfx_dev_rows ga = up(a), gk = up(bk), gd;
    rfx_gpu_rows_init(&gd, a->arity);
    bool ok = rfx_cpu_semijoin(a, bk, k, keep, &hc, 4) == RFX_OK &&
              rfx_gpu_semijoin(gpu, &ga, &gk, k, keep, &gd) == RFX_OK;
    rfx_rows back = down(&gd);
    ok = ok && same(&back, &hc);
    if (!ok)
        fprintf(stderr, "\n    %s-join, k %d, %zu vs %zu rows differs", keep ? "semi" : "anti", k, a->n, bk->n);
    rfx_rows_free(&hc);
    rfx_rows_free(&back);
    rfx_gpu_rows_free(gpu, &ga);
    rfx_gpu_rows_free(gpu, &gk);
    rfx_gpu_rows_free(gpu, &gd);
    return ok;
}

static void test_set_ops(void)
{
    if (!need_gpu())
        return;
    for (size_t s = 0; s < NS; s++)
        for (int k = 0; k <= 3; k++) {
            if (quick && sizes[s] > 70000)
                continue;
            rfx_rows a = rows_random(sizes[s], 3, UNIFORM, 40, true);
            rfx_rows b = rows_random(sizes[(s + 2) % NS], 3, UNIFORM, 40, true);
            rfx_rows bk = rows_random(sizes[(s + 4) % NS] / 3 + 1, k, UNIFORM, 40, true);
            rfx_dev_rows ga = up(&a), gb = up(&b), gd;
            rfx_gpu_rows_init(&gd, 3);
            rfx_rows hc;
            rfx_rows_init(&hc, 3);
            if (k == 3) {
                CU_ASSERT_EQUAL(rfx_cpu_union(&a, &b, &hc, 4), RFX_OK);
                CU_ASSERT_EQUAL(rfx_gpu_union(gpu, &ga, &gb, &gd), RFX_OK);
                rfx_rows back = down(&gd);
                CU_ASSERT(same(&back, &hc));
                rfx_rows_free(&back);
            }
            for (int keep = 0; keep < 2; keep++)
                CU_ASSERT(semijoin_as_cpu(&a, &bk, k, keep));
            rfx_rows_free(&a);
            rfx_rows_free(&b);
            rfx_rows_free(&bk);
            rfx_rows_free(&hc);
            rfx_gpu_rows_free(gpu, &ga);
            rfx_gpu_rows_free(gpu, &gb);
            rfx_gpu_rows_free(gpu, &gd);
        }
}

/* A probe (rows in any order, some repeated) against one or several sorted sets, small
 * (staged in a block) and large, of rows narrow (tiles) and wide (a search a row): the
 * rows kept in their order, as the CPU's probe keeps them. */
static void test_probe_sets(void)
{
    if (!need_gpu())
        return;
    static const int arities[] = {2, 3, 7};
    static const size_t bsizes[] = {0, 5, 60000};
    for (int k = 1; k <= 2; k++)
        for (size_t ai = 0; ai < sizeof arities / sizeof arities[0]; ai++)
            for (size_t bi = 0; bi < sizeof bsizes / sizeof bsizes[0]; bi++)
                for (int n = 1; n <= 3; n += 2) {
                    int ar = arities[ai] < k ? k : arities[ai];
                    rfx_rows parts[3];
                    rfx_dev_rows gparts[3];
                    const rfx_rows *hp[3];
                    const rfx_dev_rows *gp[3];
                    for (int p = 0; p < n; p++) {
                        parts[p] = rows_random(bsizes[bi] / (size_t)n + (bsizes[bi] ? 1 : 0), k, UNIFORM, 3000, true);
                        gparts[p] = up(&parts[p]);
                        hp[p] = &parts[p];
                        gp[p] = &gparts[p];
                    }
                    rfx_rows a = rows_random(quick ? 30000 : 200000, ar, UNIFORM, 3000, false);
                    rfx_dev_rows ga = up(&a), gd;
                    for (int keep = 0; keep < 2; keep++) {
                        rfx_rows hc;
                        rfx_rows_init(&hc, ar);
                        rfx_gpu_rows_init(&gd, ar);
                        CU_ASSERT_EQUAL(rfx_cpu_probe_sets(&a, hp, n, k, keep, false, &hc, 4), RFX_OK);
                        CU_ASSERT_EQUAL(rfx_gpu_probe_sets(gpu, &ga, gp, n, k, keep, &gd), RFX_OK);
                        rfx_rows back = down(&gd);
                        CU_ASSERT(same(&back, &hc));
                        if (!same(&back, &hc))
                            fprintf(stderr, "\n    probe (%s) of %d columns against %d sets of %zu, k %d differs",
                                    keep ? "semi" : "anti", ar, n, bsizes[bi], k);
                        rfx_rows_free(&back);
                        rfx_rows_free(&hc);
                        rfx_gpu_rows_free(gpu, &gd);
                    }
                    rfx_rows_free(&a);
                    rfx_gpu_rows_free(gpu, &ga);
                    for (int p = 0; p < n; p++) {
                        rfx_rows_free(&parts[p]);
                        rfx_gpu_rows_free(gpu, &gparts[p]);
                    }
                }
}

/* A probe of over a million rows against one set of keys of one word or of two (a 64-bit
 * key: a high word 0, and one past the span a bitmap takes), some keys of a below and above
 * the set's: taken as a bitmap of the set's keys where the span allows, searched where not;
 * the rows kept as the CPU's probe keeps them either way. */
static void test_probe_bitmap(void)
{
    if (!need_gpu())
        return;
    for (int k = 1; k <= 2; k++)
        for (int wide_span = 0; wide_span < 2; wide_span++)
            for (int ar = k + 1; ar <= 7; ar += 6 - k) {
                rfx_rows b, a;
                rfx_rows_init(&b, k);
                rfx_rows_init(&a, ar);
                CU_ASSERT_FATAL(rfx_rows_reserve(&b, 5000) == RFX_OK && rfx_rows_reserve(&a, (1u << 20) + 999) == RFX_OK);
                uint32_t key[2];
                for (uint32_t v = 1000; b.n < 5000; v += 1 + (uint32_t)(rnd() % 7)) {
                    key[0] = k == 1 ? v : (wide_span && b.n >= 2500 ? 1u : 0u);
                    key[1] = v;
                    rfx_rows_push(&b, key);
                }
                uint32_t row[8];
                for (a.n = 0; a.n < (1u << 20) + 999;) {
                    for (int c = 0; c < ar; c++)
                        row[c] = (uint32_t)rnd();
                    uint32_t v = (uint32_t)(rnd() % 40000);   // below, within and above the set's keys
                    row[k - 1] = v;
                    if (k == 2)
                        row[0] = wide_span ? (uint32_t)(rnd() % 2) : (rnd() % 50 == 0 ? 1u : 0u);
                    rfx_rows_push(&a, row);
                }
                rfx_cpu_sort(&b, 4);
                rfx_cpu_unique(&b, 4);
                rfx_dev_rows ga = up(&a), gb = up(&b), gd;
                const rfx_rows *hp[1] = {&b};
                const rfx_dev_rows *gp[1] = {&gb};
                for (int keep = 0; keep < 2; keep++) {
                    rfx_rows hc;
                    rfx_rows_init(&hc, ar);
                    rfx_gpu_rows_init(&gd, ar);
                    CU_ASSERT_EQUAL(rfx_cpu_probe_sets(&a, hp, 1, k, keep, false, &hc, 4), RFX_OK);
                    CU_ASSERT_EQUAL(rfx_gpu_probe_sets(gpu, &ga, gp, 1, k, keep, &gd), RFX_OK);
                    rfx_rows back = down(&gd);
                    CU_ASSERT(same(&back, &hc) && hc.n > 0);
                    if (!same(&back, &hc))
                        fprintf(stderr, "\n    probe (%s) of %d columns, k %d%s differs", keep ? "semi" : "anti", ar, k,
                                wide_span ? ", wide span" : "");
                    rfx_rows_free(&back);
                    rfx_rows_free(&hc);
                    rfx_gpu_rows_free(gpu, &gd);
                }
                rfx_rows_free(&a);
                rfx_rows_free(&b);
                rfx_gpu_rows_free(gpu, &ga);
                rfx_gpu_rows_free(gpu, &gb);
            }
}

/* Semi- and anti-join against a relation kept as several sorted sets (its main rows and
 * runs): the same as against their union, with empty sets among them, one set, and a's rows
 * found in the first, the last or none. */
static void test_semijoin_sets(void)
{
    if (!need_gpu())
        return;
    static const int nsets[] = {1, 2, 5, 9};
    for (int k = 1; k <= 3; k++)
        for (size_t t = 0; t < sizeof nsets / sizeof nsets[0]; t++) {
            int n = nsets[t];
            rfx_rows whole, parts[9];
            rfx_rows_init(&whole, k);
            rfx_dev_rows gparts[9];
            const rfx_dev_rows *gp[9];
            for (int p = 0; p < n; p++) {
                /* set p: keys = p mod n over a range, so the sets are disjoint; set 1 empty */
                parts[p] = rows_random(p == 1 ? 0 : 3000 + 40000 * (size_t)p, k, UNIFORM, 5000, false);
                for (size_t i = 0; i < parts[p].n; i++)
                    parts[p].data[i * (size_t)k] = parts[p].data[i * (size_t)k] / (uint32_t)n * (uint32_t)n + (uint32_t)p;
                rfx_cpu_sort(&parts[p], 4);
                rfx_cpu_unique(&parts[p], 4);
                rfx_rows u;
                rfx_rows_init(&u, k);
                CU_ASSERT_EQUAL(rfx_cpu_union(&whole, &parts[p], &u, 4), RFX_OK);
                rfx_rows_free(&whole);
                whole = u;
                gparts[p] = up(&parts[p]);
                gp[p] = &gparts[p];
            }
            rfx_rows a = rows_random(quick ? 20000 : 300000, k + 1, UNIFORM, 5000, true);
            rfx_dev_rows ga = up(&a), gd;
            for (int keep = 0; keep < 2; keep++) {
                rfx_rows hc;
                rfx_rows_init(&hc, k + 1);
                rfx_gpu_rows_init(&gd, k + 1);
                CU_ASSERT_EQUAL(rfx_cpu_semijoin(&a, &whole, k, keep, &hc, 4), RFX_OK);
                CU_ASSERT_EQUAL(rfx_gpu_semijoin_sets(gpu, &ga, gp, n, k, keep, &gd), RFX_OK);
                rfx_rows back = down(&gd);
                CU_ASSERT(same(&back, &hc));
                if (!same(&back, &hc))
                    fprintf(stderr, "\n    %s-join against %d sets, k %d differs", keep ? "semi" : "anti", n, k);
                rfx_rows_free(&back);
                rfx_rows_free(&hc);
                rfx_gpu_rows_free(gpu, &gd);
            }
            rfx_rows_free(&a);
            rfx_gpu_rows_free(gpu, &ga);
            rfx_rows_free(&whole);
            for (int p = 0; p < n; p++) {
                rfx_rows_free(&parts[p]);
                rfx_gpu_rows_free(gpu, &gparts[p]);
            }
        }
}

/* Semi- and anti-join on whole rows of one and two words (the semi-naive loop's new =
 * derived - full; merged with the rows as single keys) across tile boundaries (2,816 rows
 * of the merge a tile), sides mostly equal or disjoint, and b a view at an odd row (its
 * rows then only 4-byte aligned for one word: the general kernel). */
static void test_semijoin_whole_rows(void)
{
    if (!need_gpu())
        return;
    static const size_t na_sizes[] = {1, 1407, 1408, 2815, 2816, 2817, 9000, 300001};
    for (int ar = 1; ar <= 2; ar++)
        for (size_t s = 0; s < sizeof na_sizes / sizeof *na_sizes; s++)
            for (int shape = 0; shape < 3; shape++) {
                if (quick && na_sizes[s] > 70000)
                    continue;
                /* 0: values from a small range (most rows of a in b), 1: wide (few), 2: b = a */
                uint32_t range = shape == 0 ? (uint32_t)(na_sizes[s] / 2 + 2) : 1u << 30;
                rfx_rows a = rows_random(na_sizes[s], ar, UNIFORM, range, true);
                rfx_rows b = shape == 2 ? rows_random(0, ar, UNIFORM, range, true)
                                        : rows_random(na_sizes[(s + 3) % 8] + 1, ar, UNIFORM, range, true);
                if (shape == 2)
                    for (size_t i = 0; i < a.n; i++)
                        rfx_rows_push(&b, a.data + i * (size_t)ar);
                for (int keep = 0; keep < 2; keep++)
                    CU_ASSERT(semijoin_as_cpu(&a, &b, ar, keep));
                if (b.n > 1) {   /* b from its second row on: a view one row into its device buffer */
                    rfx_rows tail = {b.data + ar, b.n - 1, b.n - 1, ar};
                    rfx_dev_rows ga = up(&a), gb = up(&b), gd;
                    rfx_dev_rows view = {gb.data + ar, b.n - 1, b.n - 1, ar};
                    rfx_gpu_rows_init(&gd, ar);
                    for (int keep = 0; keep < 2; keep++) {
                        rfx_rows hc;
                        rfx_rows_init(&hc, ar);
                        CU_ASSERT_EQUAL(rfx_cpu_semijoin(&a, &tail, ar, keep, &hc, 4), RFX_OK);
                        CU_ASSERT_EQUAL(rfx_gpu_semijoin(gpu, &ga, &view, ar, keep, &gd), RFX_OK);
                        rfx_rows back = down(&gd);
                        CU_ASSERT(same(&back, &hc));
                        rfx_rows_free(&back);
                        rfx_rows_free(&hc);
                    }
                    rfx_gpu_rows_free(gpu, &ga);
                    rfx_gpu_rows_free(gpu, &gb);
                    rfx_gpu_rows_free(gpu, &gd);
                }
                rfx_rows_free(&a);
                rfx_rows_free(&b);
            }
}

/* UNION (the semi-naive loop's full u new) across arities (by merge path up to 4
 * columns, by ranks in global memory beyond), tile boundaries, overlapping sides, and
 * inserts clustered between two rows of the big side. */
static void test_union_merge(void)
{
    if (!need_gpu())
        return;
    static const size_t big_sizes[] = {1, 1023, 1024, 1025, 2815, 2816, 2817, 5000, 300000};
    for (int ar = 1; ar <= 5; ar += ar == 3 ? 2 : 1)
        for (size_t s = 0; s < sizeof big_sizes / sizeof *big_sizes; s++)
            for (int shape = 0; shape < 3; shape++) {
                if (quick && big_sizes[s] > 70000)
                    continue;
                size_t nb = big_sizes[s];
                rfx_rows a, b;
                rfx_rows_init(&a, ar);
                rfx_rows_init(&b, ar);
                uint32_t t[8] = {0};
                for (size_t i = 0; i < nb; i++) {   /* even first columns */
                    t[0] = (uint32_t)(2 * i);
                    for (int c = 1; c < ar; c++)
                        t[c] = (uint32_t)(rnd() % 3);
                    rfx_rows_push(&a, t);
                }
                size_t nsmall = shape == 0 ? nb / 7 + 1 : 3000;
                for (size_t j = 0; j < nsmall; j++) {
                    /* 0: spread odd keys; 1: all between two big rows; 2: overlapping */
                    t[0] = shape == 0   ? (uint32_t)(2 * (rnd() % (nb + 2)) + 1)
                           : shape == 1 ? (uint32_t)(nb | 1)
                                        : (uint32_t)(rnd() % (2 * nb + 4));
                    for (int c = 1; c < ar; c++)
                        t[c] = shape == 1 ? (uint32_t)j * 7 + (uint32_t)c : (uint32_t)(rnd() % 3);
                    rfx_rows_push(&b, t);
                }
                rfx_cpu_sort(&b, 1);
                rfx_cpu_unique(&b, 1);
                rfx_rows hc;
                rfx_rows_init(&hc, ar);
                CU_ASSERT_EQUAL(rfx_cpu_union(&a, &b, &hc, 4), RFX_OK);
                rfx_dev_rows ga = up(&a), gb = up(&b), gd;
                rfx_gpu_rows_init(&gd, ar);
                CU_ASSERT_EQUAL(rfx_gpu_union(gpu, &ga, &gb, &gd), RFX_OK);
                rfx_rows back = down(&gd);
                bool eq = same(&back, &hc);
                if (!eq)
                    fprintf(stderr, "\n    union arity %d, %zu + %zu rows, shape %d differs", ar, a.n, b.n, shape);
                CU_ASSERT(eq);
                rfx_rows_free(&back);
                if (shape < 2) {   /* disjoint sides: the plan's full u new, without the search */
                    CU_ASSERT_EQUAL(rfx_gpu_union_disjoint(gpu, &ga, &gb, &gd), RFX_OK);
                    back = down(&gd);
                    CU_ASSERT(same(&back, &hc));
                    rfx_rows_free(&back);
                    CU_ASSERT_EQUAL(rfx_gpu_union_disjoint(gpu, &gb, &ga, &gd), RFX_OK);
                    back = down(&gd);
                    CU_ASSERT(same(&back, &hc));
                    rfx_rows_free(&back);
                }
                rfx_rows_free(&a);
                rfx_rows_free(&b);
                rfx_rows_free(&hc);
                rfx_gpu_rows_free(gpu, &ga);
                rfx_gpu_rows_free(gpu, &gb);
                rfx_gpu_rows_free(gpu, &gd);
            }
}

/* Semi- and anti-join by merge path (b at most 4x a's rows): a of arity 2 or 3 against
 * keys of 1 or 2 columns, about the tile of 2,816 merged rows, with b's keys drawn from
 * a's (all match), from a key range twice as wide (some match) or beyond a's (none). */
static void test_semijoin_merge(void)
{
    if (!need_gpu())
        return;
    static const size_t na_s[] = {1, 1407, 1408, 2815, 2816, 2817, 9001, 300000};
    for (size_t s = 0; s < sizeof na_s / sizeof *na_s; s++)
        for (int k = 1; k <= 2; k++)
            for (int shape = 0; shape < 3; shape++) {
                if (quick && na_s[s] > 70000)
                    continue;
                int ar = k + 1;
                uint32_t range = (uint32_t)(na_s[s] / 2 + 2);
                rfx_rows a = rows_random(na_s[s], ar, UNIFORM, range, true), bk;
                rfx_rows_init(&bk, k);
                uint32_t t[4];
                size_t nb = na_s[s] * (size_t)(shape + 1) / 2 + 1;
                for (size_t j = 0; j < nb; j++) {
                    size_t r = rnd() % a.n;
                    for (int c = 0; c < k; c++)
                        t[c] = shape == 0 ? a.data[r * ar + c] : shape == 1 ? (uint32_t)(rnd() % (2 * range))
                                                                            : range + (uint32_t)(rnd() % range);
                    rfx_rows_push(&bk, t);
                }
                rfx_cpu_sort(&bk, 1);
                rfx_cpu_unique(&bk, 1);
                for (int keep = 0; keep < 2; keep++)
                    CU_ASSERT(semijoin_as_cpu(&a, &bk, k, keep));
                rfx_rows_free(&a);
                rfx_rows_free(&bk);
            }
}

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

/* Rows up and back down the link, directly (one host thread) and through the context's
 * pinned buffer (four: from 16 MB on, in pieces of 32 MB; 40,000,024 bytes, a whole piece
 * and a part), and a small copy with four threads (direct); every word as it was. */
static void test_staged_copies(void)
{
    if (!need_gpu())
        return;
    const size_t sizes[] = {5000003, 1000};
    for (int k = 0; k < 2; k++)
        for (int threads = 1; threads <= 4; threads += 3) {
            rfx_rows h, back;
            rfx_rows_init(&h, 2);
            rfx_rows_init(&back, 2);
            CU_ASSERT_EQUAL_FATAL(rfx_rows_reserve(&h, sizes[k]), RFX_OK);
            for (size_t i = 0; i < 2 * sizes[k]; i++)
                h.data[i] = (uint32_t)(i * 2654435761u) ^ (uint32_t)threads;
            h.n = sizes[k];
            rfx_gpu_set_host_threads(gpu, threads);
            rfx_dev_rows d;
            rfx_gpu_rows_init(&d, 2);
            CU_ASSERT_EQUAL(rfx_gpu_upload(gpu, &h, &d), RFX_OK);
            CU_ASSERT_EQUAL(rfx_gpu_download(gpu, &d, &back), RFX_OK);
            CU_ASSERT_EQUAL(back.n, h.n);
            CU_ASSERT(back.n == h.n && memcmp(back.data, h.data, h.n * 8) == 0);
            rfx_gpu_rows_free(gpu, &d);
            rfx_rows_free(&h);
            rfx_rows_free(&back);
        }
    rfx_gpu_set_host_threads(gpu, 1);
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

/* The GPU's map/filter of a against the CPU's. */
static void mapfilter_vs_cpu(const rfx_rows *a, const rfx_rx *pred, rfx_rx *const *outs, int nout)
{
    rfx_rows hc;
    rfx_rows_init(&hc, nout);
    CU_ASSERT_EQUAL(rfx_cpu_mapfilter(a, pred, outs, nout, &hc, 4), RFX_OK);
    rfx_dev_rows ga = up(a), gd;
    rfx_gpu_rows_init(&gd, nout);
    gpu_agrees(rfx_gpu_mapfilter(gpu, &ga, pred, outs, nout, &gd), &gd, &hc);
    rfx_gpu_rows_free(gpu, &ga);
}

static void test_mapfilter(void)
{
    if (!need_gpu())
        return;
    rfx_rx c0 = col(0), c1 = col(1), two = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER, .value = 3};
    rfx_rx sum = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_ADD, .l = &c0, .r = &c1};
    rfx_rx quo = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_DIV, .l = &c0, .r = &two};
    rfx_rx neg = {.kind = RFX_RX_NEG, .prim = RFX_NUMBER, .l = &c1};
    rfx_rx gt = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER, .op = RFX_GT, .l = &c0, .r = &c1};
    rfx_rx *outs[4] = {&sum, &quo, &neg, &c1};
    for (size_t s = 0; s < NS; s++)
        for (int withp = 0; withp < 2; withp++) {
            if (quick && sizes[s] > 70000)
                continue;
            rfx_rows a = rows_random(sizes[s], 2, WIDE, 0, false);
            mapfilter_vs_cpu(&a, withp ? &gt : NULL, outs, 4);
            rfx_rows_free(&a);
        }
    /* division by zero is reported */
    rfx_rows z = rows_random(1000, 2, UNIFORM, 3, false);
    z.data[7] = 0;
    rfx_rx q2 = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_MOD, .l = &c0, .r = &c1};
    rfx_rx *o2[1] = {&q2};
    rfx_dev_rows gz = up(&z), gd;
    rfx_gpu_rows_init(&gd, 1);
    CU_ASSERT_EQUAL(rfx_gpu_mapfilter(gpu, &gz, NULL, o2, 1, &gd), RFX_ERR_DIV0);
    rfx_rows_free(&z);
    rfx_gpu_rows_free(gpu, &gz);
    rfx_gpu_rows_free(gpu, &gd);
}

/* Expressions over 64-bit values, decimals and dates in the device's interpreter, against
 * the CPU's rfx_rx_eval64: rows of two 64-bit values (words 0-1 and 2-3). */
static void test_mapfilter_wide(void)
{
    if (!need_gpu())
        return;
    rfx_fn_env *env = rfx_fn_env_new(NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(env);
    rfx_rx c[4];
    for (int k = 0; k < 4; k++)
        c[k] = (rfx_rx){.kind = RFX_RX_COL, .prim = k % 2 ? RFX_WORD : RFX_NUMBER64, .col = k};
    rfx_rx a = {.kind = RFX_RX_PAIR, .prim = RFX_NUMBER64, .l = &c[0], .r = &c[1]};
    rfx_rx b = {.kind = RFX_RX_PAIR, .prim = RFX_NUMBER64, .l = &c[2], .r = &c[3]};
    rfx_rx big = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER64, .value = 0x123456789ull};
    rfx_rx k12345 = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER64, .value = 12345};
    rfx_rx k40000 = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER, .value = 40000};
    rfx_rx k13 = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER, .value = 13};
    rfx_rx sum = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER64, .op = RFX_ADD, .l = &a, .r = &b};
    rfx_rx prod = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER64, .op = RFX_MUL, .l = &a, .r = &big};
    rfx_rx fa = {.kind = RFX_RX_CONV, .prim = RFX_FLOAT64, .l = &a};
    rfx_rx fb = {.kind = RFX_RX_CONV, .prim = RFX_FLOAT64, .l = &b};
    rfx_rx fq = {.kind = RFX_RX_BIN, .prim = RFX_FLOAT64, .op = RFX_DIV, .l = &fa, .r = &fb};
    /* a word's number grown to scale 2 (checked), less 12345 (checked) */
    rfx_rx lo = {.kind = RFX_RX_CONV, .prim = RFX_NUMBER64, .l = &c[1], .col = 0, .op = 2, .env = env};
    rfx_rx ndec = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER64, .op = RFX_SUB, .l = &lo, .r = &k12345, .env = env};
    rfx_rx small = {.kind = RFX_RX_CONV, .prim = RFX_NUMBER, .l = &b, .col = 3, .op = 1};   /* rounded to scale 1 */
    rfx_rx day = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_MOD, .l = &c[1], .r = &k40000};
    rfx_rx year = {.kind = RFX_RX_CAL, .prim = RFX_NUMBER, .op = RFX_CAL_YEAR, .l = &day};
    rfx_rx later = {.kind = RFX_RX_CAL, .prim = RFX_NUMBER, .op = RFX_CAL_ADD_MONTHS, .l = &day, .r = &k13};
    rfx_rx h[6] = {
        {.kind = RFX_RX_HALF, .prim = RFX_NUMBER64, .op = 0, .l = &sum},
        {.kind = RFX_RX_HALF, .prim = RFX_WORD, .op = 1, .l = &sum},
        {.kind = RFX_RX_HALF, .prim = RFX_WORD, .op = 1, .l = &prod},
        {.kind = RFX_RX_HALF, .prim = RFX_FLOAT64, .op = 0, .l = &fq},
        {.kind = RFX_RX_HALF, .prim = RFX_WORD, .op = 1, .l = &fq},
        {.kind = RFX_RX_HALF, .prim = RFX_WORD, .op = 1, .l = &ndec},
    };
    rfx_rx *outs[9] = {&h[0], &h[1], &h[2], &h[3], &h[4], &h[5], &small, &year, &later};
    rfx_rx lt = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER64, .op = RFX_LT, .l = &a, .r = &b};
    rfx_rx dec = {.kind = RFX_RX_CMP, .prim = RFX_DECIMAL, .op = RFX_GE, .l = &a, .r = &b, .col = 2};
    rfx_rx both = {.kind = RFX_RX_AND, .prim = RFX_NUMBER, .l = &lt, .r = &dec};
    rfx_rx *preds[3] = {NULL, &lt, &both};
    for (size_t s = 0; s < NS; s++)
        for (int p = 0; p < 3; p++) {
            if (quick && sizes[s] > 70000)
                continue;
            rfx_rows r = rows_random(sizes[s], 4, WIDE, 0, false);
            mapfilter_vs_cpu(&r, preds[p], outs, 9);
            rfx_rows_free(&r);
        }
    /* a decimal past 64 bits fails, as a division by zero does */
    rfx_rows z = rows_random(1000, 4, WIDE, 0, false);
    z.data[4 * 7] = 0x7fffffffu;
    rfx_rx k40 = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER64, .value = 1ull << 40};
    rfx_rx over = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER64, .op = RFX_MUL, .l = &a, .r = &k40, .env = env};
    rfx_rx oh = {.kind = RFX_RX_HALF, .prim = RFX_WORD, .op = 1, .l = &over};
    rfx_rx *o1[1] = {&oh};
    rfx_dev_rows gz = up(&z), gd;
    rfx_gpu_rows_init(&gd, 1);
    CU_ASSERT_EQUAL(rfx_gpu_mapfilter(gpu, &gz, NULL, o1, 1, &gd), RFX_ERR_DIV0);
    rfx_rows_free(&z);
    rfx_gpu_rows_free(gpu, &gz);
    rfx_gpu_rows_free(gpu, &gd);
    rfx_fn_env_free(env);
}

/* A random text over a few letters, `%`, `_` and a two-byte character, 0-11 bytes. */
static size_t random_text(char *buf)
{
    static const char *const parts[] = {"a", "b", "x", "%", "_", "\xc3\xa9"};
    size_t n = 0;
    for (int k = (int)(rnd() % 9); k > 0; k--) {
        const char *q = parts[rnd() % 6];
        memcpy(buf + n, q, strlen(q));
        n += strlen(q);
    }
    return n;
}

/* A pattern that s matches: some bytes made `_`, some runs made `%` (may split a two-byte
 * character: then it need not match, which is tested all the same). */
static size_t pattern_of(const char *s, size_t n, char *buf)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rnd() % 6;
        if (r == 0)
            buf[m++] = '_';
        else if (r == 1) {
            buf[m++] = '%';
            i += rnd() % 3;
        } else
            buf[m++] = s[i];
    }
    if (rnd() % 3 == 0)
        buf[m++] = '%';
    return m;
}

/* The functors that only read texts (like, contains, strlen, the symbols' order) in the
 * device's interpreter, over its copy of the symbol table, against the host's: pairs of a
 * pattern (half of them made to match) and a text; then symbols added since the copy was
 * made (it grows by them), then another table (it is made again). */
static void test_mapfilter_texts(void)
{
    if (!need_gpu())
        return;
    for (int table = 0; table < 2; table++) {
        rfx_symtab *syms = rfx_symtab_new();
        rfx_fn_env *env = rfx_fn_env_new(syms);
        CU_ASSERT_PTR_NOT_NULL_FATAL(env);
        rfx_rx c0 = col(0), c1 = col(1);
        rfx_rx *pair[2] = {&c0, &c1}, *one[1] = {&c1};
        rfx_rx fn[4] = {
            {.kind = RFX_RX_FN, .prim = RFX_NUMBER, .op = RFX_FX_LIKE, .nargs = 2, .args = pair, .env = env},
            {.kind = RFX_RX_FN, .prim = RFX_NUMBER, .op = RFX_FX_CONTAINS, .nargs = 2, .args = pair, .env = env},
            {.kind = RFX_RX_FN, .prim = RFX_NUMBER, .op = RFX_FX_STRLEN, .nargs = 1, .args = one, .env = env},
            {.kind = RFX_RX_FN, .prim = RFX_NUMBER, .op = RFX_FX_SYMCMP, .nargs = 2, .args = pair, .env = env},
        };
        rfx_rx *outs[5] = {&fn[0], &fn[1], &fn[2], &fn[3], &c0};
        for (int round = 0; round < 2; round++) {
            size_t n = quick ? 20000 : 300000;
            rfx_rows r;
            rfx_rows_init(&r, 2);
            char text[64], pat[64];
            for (size_t i = 0; i < n; i++) {
                size_t tn = random_text(text), pn = rnd() % 2 ? pattern_of(text, tn, pat) : random_text(pat);
                uint32_t row[2] = {rfx_symtab_intern(syms, pat, pn), rfx_symtab_intern(syms, text, tn)};
                if (i % 1000 == 0)   /* an id past the table reads as the empty text */
                    row[rnd() % 2] = rfx_symtab_size(syms) + 7;
                CU_ASSERT_EQUAL_FATAL(rfx_rows_push(&r, row), RFX_OK);
            }
            mapfilter_vs_cpu(&r, NULL, outs, 5);
            mapfilter_vs_cpu(&r, &fn[0], outs, 5);
            rfx_rows_free(&r);
        }
        rfx_fn_env_free(env);
        rfx_symtab_free(syms);
    }
}

/* n rows of `arity` words, each one of the 8 vals (or, with some_random, a random word one
 * time in four). */
static rfx_rows rows_of_values(size_t n, int arity, const uint32_t vals[8], bool some_random)
{
    rfx_rows a;
    rfx_rows_init(&a, arity);
    CU_ASSERT_EQUAL_FATAL(rfx_rows_reserve(&a, n), RFX_OK);
    for (size_t i = 0; i < n * (size_t)arity; i++)
        a.data[i] = some_random && rnd() % 4 == 0 ? (uint32_t)rnd() : vals[rnd() % 8];
    a.n = n;
    return a;
}

/* SELECTs whose predicate is a conjunction of comparisons of columns and constants and
 * whose outputs are plain columns run without the interpreter (k_select_simple): rows of 1
 * to 4 columns, every comparison in number (signed) and unsigned order, column against
 * constant, constant against column, column against column, conjunctions, outputs
 * permuted and repeated, sizes around its tiles (4,096 rows of 1-2 columns, 2,048 of 3-4),
 * against the CPU; a float comparison takes the interpreter and must agree too. Values
 * come from a few that collide and straddle the sign bit, so every outcome occurs. */
static void test_select_simple(void)
{
    if (!need_gpu())
        return;
    static const uint32_t vals[] = {0, 1, 7, 8, 0x7fffffffu, 0x80000000u, 0x80000001u, 0xffffffffu};
    static const size_t n_of[] = {1, 2047, 2048, 2049, 4095, 4096, 4097, 100003, 1000003};
    rfx_rx c[4] = {col(0), col(1), col(2), col(3)};
    int cases = 0;
    for (int arity = 1; arity <= 4; arity++)
        for (size_t s = 0; s < sizeof n_of / sizeof n_of[0]; s++) {
            if (quick && n_of[s] > 200000)
                continue;
            rfx_rows a = rows_of_values(n_of[s], arity, vals, true);
            for (int op = RFX_LT; op <= RFX_NE; op++)
                for (int prim = RFX_NUMBER; prim <= RFX_FLOAT; prim++)
                    for (int form = 0; form < 4; form++) {
                        /* form 0: $last op 7; 1: 0x80000000 op $0; 2: $0 op $last; 3: (2) and $0 != 1 */
                        rfx_rx k7 = {.kind = RFX_RX_CONST, .prim = prim, .value = 7};
                        rfx_rx kmin = {.kind = RFX_RX_CONST, .prim = prim, .value = 0x80000000u};
                        rfx_rx k1 = {.kind = RFX_RX_CONST, .prim = prim, .value = 1};
                        rfx_rx *last = &c[arity - 1];
                        rfx_rx cmp = {.kind = RFX_RX_CMP, .prim = prim, .op = op};
                        cmp.l = form == 0 ? last : form == 1 ? &kmin : &c[0];
                        cmp.r = form == 0 ? &k7 : form == 1 ? &c[0] : last;
                        rfx_rx ne1 = {.kind = RFX_RX_CMP, .prim = RFX_UNSIGNED, .op = RFX_NE, .l = &c[0], .r = &k1};
                        rfx_rx both = {.kind = RFX_RX_AND, .l = &cmp, .r = &ne1};
                        rfx_rx *outs[5] = {last, &c[0], &c[arity / 2], last, &c[0]};
                        int nout = 1 + (op + form + arity) % 5;
                        mapfilter_vs_cpu(&a, form == 3 ? &both : &cmp, outs, nout);
                        cases++;
                    }
            rfx_rows_free(&a);
        }
    CU_ASSERT(cases > 1000);
}

/* MAPs whose outputs are columns, constants or one +, - or * of two of them (number,
 * unsigned, float) run a row a thread without the interpreter (k_map_terms): rows of 1 to
 * 4 columns, 1 to 6 outputs, against the CPU. Values collide, wrap and straddle the sign
 * bit; floats include inf, so inf - inf and inf * 0 make NaNs, which must be the same one
 * (0x7fc00000) on both. A MAP with a negation, and a SELECT with such outputs, take the
 * interpreter and must agree too. */
static void test_map_simple(void)
{
    if (!need_gpu())
        return;
    static const uint32_t ints[] = {0, 1, 7, 0x7fffffffu, 0x80000000u, 0x80000001u, 0xffffffffu, 65536};
    static const uint32_t floats[] = {0, 0x80000000u, 0x3fc00000u /* 1.5 */, 0xc0100000u /* -2.25 */,
                                      0x7149f2cau /* 1e30 */, 0x7f800000u /* inf */, 0x40400000u /* 3 */, 0x00000001u};
    static const size_t n_of[] = {1, 2047, 2049, 4096, 4097, 100003, 1000003};
    rfx_rx c[4];
    int cases = 0;
    for (int fl = 0; fl < 2; fl++)
        for (int arity = 1; arity <= 4; arity++)
            for (size_t s = 0; s < sizeof n_of / sizeof n_of[0]; s++) {
                if (quick && n_of[s] > 200000)
                    continue;
                rfx_rows a = rows_of_values(n_of[s], arity, fl ? floats : ints, !fl);
                for (int prim = fl ? RFX_FLOAT : RFX_NUMBER; prim <= (fl ? RFX_FLOAT : RFX_UNSIGNED); prim++) {
                    for (int i = 0; i < 4; i++)
                        c[i] = (rfx_rx){.kind = RFX_RX_COL, .prim = prim, .col = i};
                    rfx_rx k = {.kind = RFX_RX_CONST, .prim = prim, .value = fl ? 0x3fc00000u : 0xfffffff9u};
                    rfx_rx *last = &c[arity - 1];
                    rfx_rx terms[6];
                    for (int op = RFX_ADD; op <= RFX_MUL; op++)
                        for (int form = 0; form < 4; form++) {
                            /* form 0: $0 op $last; 1: $last op k; 2: k op $0 (and a negation); 3: SELECT $0 < $last */
                            rfx_rx *l = form == 2 ? &k : form == 1 ? last : &c[0], *r = form == 2 ? &c[0] : form == 1 ? &k : last;
                            terms[0] = (rfx_rx){.kind = RFX_RX_BIN, .prim = prim, .op = op, .l = l, .r = r};
                            terms[1] = (rfx_rx){.kind = RFX_RX_BIN, .prim = prim, .op = (op + 1) % 3, .l = r, .r = l};
                            terms[2] = (rfx_rx){.kind = RFX_RX_NEG, .prim = prim, .l = last};
                            rfx_rx *outs[6] = {&terms[0], last, &k, &terms[1], &c[0], &terms[0]};
                            if (form == 2)
                                outs[4] = &terms[2];
                            int nout = 1 + (op + form + arity + (int)s) % 6;
                            rfx_rx lt = {.kind = RFX_RX_CMP, .prim = prim, .op = RFX_LT, .l = &c[0], .r = last};
                            mapfilter_vs_cpu(&a, form == 3 ? &lt : NULL, outs, nout);
                            cases++;
                        }
                }
                rfx_rows_free(&a);
            }
    CU_ASSERT(cases > 500);
}

/* The benchmark's fixed-cost probe: launched alone, and waited for through its host word
 * many times over (each wait must see its own launch's tag). */
static void test_empty_launch(void)
{
    if (!need_gpu())
        return;
    for (int i = 0; i < 1000; i++)
        CU_ASSERT_EQUAL_FATAL(rfx_gpu_empty_launch(gpu, i % 3 != 0), RFX_OK);
    CU_ASSERT_EQUAL(rfx_gpu_sync(gpu), RFX_OK);
}

/* The tiled kernels' look-back words are kept between launches and tagged with the
 * launch (no clearing): SELECTs by plain comparisons (a block a tile), by the interpreter
 * (resident blocks taking tiles until one is past the end) and semi-joins (by merge path
 * and by tiles of the left side), over inputs of 1 to ~260,000 rows in turn, so that every
 * launch finds words an earlier launch left, over more than 65,535 launches (the tags
 * wrap; 3,000 when quick). */
static void test_lookback_across_launches(void)
{
    if (!need_gpu())
        return;
    static const size_t n_of[] = {1, 4097, 300007, 2049};
    rfx_rx c0 = col(0), c1 = col(1), k = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER, .value = 512};
    rfx_rx sum = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_ADD, .l = &c0, .r = &c1};
    rfx_rx plain = {.kind = RFX_RX_CMP, .prim = RFX_UNSIGNED, .op = RFX_LT, .l = &c0, .r = &k};
    rfx_rx arith = {.kind = RFX_RX_CMP, .prim = RFX_UNSIGNED, .op = RFX_LT, .l = &sum, .r = &k};
    rfx_rx *outs[2] = {&c1, &c0};
    const rfx_rx *preds[2] = {&plain, &arith};
    enum { N = sizeof n_of / sizeof n_of[0] };
    rfx_rows h[N], want[N][3];
    rfx_dev_rows d[N];
    for (int i = 0; i < N; i++) {
        h[i] = rows_random(n_of[i], 2, UNIFORM, 1024, true);   /* sets that overlap */
        d[i] = up(&h[i]);
        for (int p = 0; p < 2; p++) {
            rfx_rows_init(&want[i][p], 2);
            CU_ASSERT_EQUAL(rfx_cpu_mapfilter(&h[i], preds[p], outs, 2, &want[i][p], 4), RFX_OK);
        }
    }
    for (int i = 0; i < N; i++) {   /* the rows of h[i] also in h[i - 1] (sets): a semi-join */
        rfx_rows_init(&want[i][2], 2);
        CU_ASSERT_EQUAL(rfx_cpu_semijoin(&h[i], &h[(i + N - 1) % N], 2, true, &want[i][2], 4), RFX_OK);
    }
    const int launches = quick ? 3000 : 70000;
    int wrong = 0;
    rfx_dev_rows out;
    rfx_gpu_rows_init(&out, 2);
    for (int t = 0; t < launches && wrong < 5; t++) {
        int i = t % N, op = (t / N) % 3;   /* the sizes in turn, each with every operator */
        if (n_of[i] > 100000 && t % (16 * N) >= 3 * N)
            i = (i + 1) % N;   /* the large input 1 time in 16: the loop stays short */
        rfx_status st = op < 2 ? rfx_gpu_mapfilter(gpu, &d[i], preds[op], outs, 2, &out)
                               : rfx_gpu_semijoin(gpu, &d[i], &d[(i + N - 1) % N], 2, true, &out);
        bool ok = st == RFX_OK && out.n == want[i][op].n;
        if (ok && (t % 997 == 0 || t >= launches - 3 * N)) {
            rfx_rows got = down(&out);
            ok = same(&got, &want[i][op]);
            rfx_rows_free(&got);
        }
        if (!ok) {
            fprintf(stderr, "\n    launch %d (input %zu rows, operator %d): %zu rows, want %zu (%s)\n", t, n_of[i], op,
                    out.n, want[i][op].n, st ? rfx_gpu_error(gpu) : "ok");
            wrong++;
        }
    }
    CU_ASSERT_EQUAL(wrong, 0);
    rfx_gpu_rows_free(gpu, &out);
    for (int i = 0; i < N; i++) {
        rfx_gpu_rows_free(gpu, &d[i]);
        rfx_rows_free(&h[i]);
        for (int p = 0; p < 3; p++)
            rfx_rows_free(&want[i][p]);
    }
}

/* The tiled interpreter's rows per thread (8, 4, 2, or not tiled) follow the row width
 * and the stack depth: chains of sums and differences 2 to 12 deep and rows of 2, 20 and
 * 45 columns,
 * over sizes around its tiles, against the CPU; a division by zero in a row the predicate
 * rejects is not an error (the CPU does not evaluate it). */
static void test_mapfilter_depths(void)
{
    if (!need_gpu())
        return;
    rfx_rx c0 = col(0), c1 = col(1), chain[12];
    rfx_rx gt = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER, .op = RFX_GT, .l = &c0, .r = &c1};
    static const size_t n_of[] = {511, 512, 513, 2047, 2048, 2049, 100003};
    for (int d = 0; d < 12; d++)   /* chain[d]: sums and differences of the columns, depth d + 2 */
        chain[d] = (rfx_rx){.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = d % 3 ? RFX_ADD : RFX_SUB,
                            .l = d % 2 ? &c1 : &c0, .r = d ? &chain[d - 1] : &c1};
    /* rows of 2 columns with stack depths 2 to 12, and of 20 and 45 columns (the widest
     * rows are not tiled: their stage would not fit) */
    rfx_rx last20 = col(19), last45 = col(44);
    rfx_rx gt20 = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER, .op = RFX_GT, .l = &c0, .r = &last20};
    rfx_rx gt45 = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER, .op = RFX_GT, .l = &c0, .r = &last45};
    rfx_rx sum20 = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_ADD, .l = &last20, .r = &c1};
    rfx_rx sum45 = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_ADD, .l = &last45, .r = &c1};
    for (int d = -2; d < 12; d += (d < 1 ? 1 : 3))
        for (size_t s = 0; s < sizeof n_of / sizeof n_of[0]; s++)
            for (int withp = 0; withp < 2; withp++) {
                int arity = d == -2 ? 20 : d == -1 ? 45 : 2, nout = d == 0 ? 1 : 2;
                rfx_rx *outs[2] = {d == -2 ? &sum20 : d == -1 ? &sum45 : &chain[d], &c0};
                rfx_rx *pred = !withp ? NULL : d == -2 ? &gt20 : d == -1 ? &gt45 : &gt;
                rfx_rows a = rows_random(n_of[s], arity, WIDE, 0, false);
                mapfilter_vs_cpu(&a, pred, outs, nout);
                rfx_rows_free(&a);
            }
    rfx_rows z = rows_random(5000, 2, UNIFORM, 3, false);
    for (size_t i = 0; i < z.n; i++)
        z.data[2 * i + 1] = z.data[2 * i] + 1 + (uint32_t)(i % 5);   /* $0 > $1 nowhere ... */
    z.data[2 * 777] = 5;
    z.data[2 * 777 + 1] = 0;   /* ... but here, where $0 / $1 is fine */
    z.data[2 * 4000] = 0;
    z.data[2 * 4000 + 1] = 0;   /* a zero divisor in a rejected row */
    rfx_rx quo = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_DIV, .l = &c1, .r = &c0};
    rfx_rx *o1[1] = {&quo};
    rfx_dev_rows gz = up(&z), gd;
    rfx_gpu_rows_init(&gd, 1);
    CU_ASSERT_EQUAL(rfx_gpu_mapfilter(gpu, &gz, &gt, o1, 1, &gd), RFX_OK);
    CU_ASSERT_EQUAL(gd.n, 1);
    rfx_rows back = down(&gd);
    CU_ASSERT(back.n == 1 && back.data[0] == 0);
    rfx_rows_free(&back);
    rfx_rows_free(&z);
    rfx_gpu_rows_free(gpu, &gz);
    rfx_gpu_rows_free(gpu, &gd);
}

/* A division guarded by the conditions before it (`$1 != 0, $0 / $1 > 1`) is evaluated only
 * where they hold, as C's && and the CPU do: zero divisors in a tenth of the rows, guards one
 * and two ANDs deep, through the tiled interpreter (rows of 2 columns), the per-row one (45
 * columns) and the 64-bit one (a decimal's checked arithmetic beside), against the CPU;
 * the same division unguarded is still an error. */
static void test_guarded_division(void)
{
    if (!need_gpu())
        return;
    rfx_fn_env *env = rfx_fn_env_new(NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(env);
    rfx_rx c0 = col(0), c1 = col(1), zero = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER, .value = 0};
    rfx_rx one = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER, .value = 1};
    rfx_rx nz = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER, .op = RFX_NE, .l = &c1, .r = &zero};
    rfx_rx quo = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_DIV, .l = &c0, .r = &c1};
    rfx_rx rem = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_MOD, .l = &c0, .r = &c1};
    rfx_rx big = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER, .op = RFX_GT, .l = &quo, .r = &one};
    rfx_rx even = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER, .op = RFX_EQ, .l = &rem, .r = &zero};
    rfx_rx pos = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER, .op = RFX_GT, .l = &c0, .r = &one};
    rfx_rx guarded = {.kind = RFX_RX_AND, .prim = RFX_NUMBER, .l = &nz, .r = &big};
    rfx_rx inner = {.kind = RFX_RX_AND, .prim = RFX_NUMBER, .l = &pos, .r = &even};
    rfx_rx nested = {.kind = RFX_RX_AND, .prim = RFX_NUMBER, .l = &nz, .r = &inner};
    rfx_rx *outs[2] = {&quo, &c0};
    /* 64-bit: the pair (words 0-1) over the pair (words 2-3) */
    rfx_rx w[4];
    for (int k = 0; k < 4; k++)
        w[k] = (rfx_rx){.kind = RFX_RX_COL, .prim = k % 2 ? RFX_WORD : RFX_NUMBER64, .col = k};
    rfx_rx a = {.kind = RFX_RX_PAIR, .prim = RFX_NUMBER64, .l = &w[0], .r = &w[1]};
    rfx_rx b = {.kind = RFX_RX_PAIR, .prim = RFX_NUMBER64, .l = &w[2], .r = &w[3]};
    rfx_rx zero64 = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER64, .value = 0};
    rfx_rx nz64 = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER64, .op = RFX_NE, .l = &b, .r = &zero64};
    rfx_rx quo64 = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER64, .op = RFX_DIV, .l = &a, .r = &b};
    rfx_rx sum64 = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER64, .op = RFX_ADD, .l = &quo64, .r = &a, .env = env};
    rfx_rx big64 = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER64, .op = RFX_GT, .l = &sum64, .r = &zero64};
    rfx_rx guarded64 = {.kind = RFX_RX_AND, .prim = RFX_NUMBER, .l = &nz64, .r = &big64};
    rfx_rx lo64 = {.kind = RFX_RX_HALF, .prim = RFX_WORD, .op = 1, .l = &quo64};
    rfx_rx *outs64[2] = {&lo64, &w[1]};
    static const size_t n_of[] = {1000, 2049, 100003};
    for (size_t s = 0; s < sizeof n_of / sizeof n_of[0]; s++)
        for (int arity = 2; arity <= 45; arity += 43) {
            rfx_rows r = rows_random(n_of[s], arity, UNIFORM, 50, false);
            for (size_t i = 0; i < r.n; i += 10)
                r.data[i * (size_t)arity + 1] = 0;
            mapfilter_vs_cpu(&r, &guarded, outs, 2);
            mapfilter_vs_cpu(&r, &nested, outs, 2);
            rfx_dev_rows gr = up(&r), gd;   /* unguarded: the zero divisors fail */
            rfx_gpu_rows_init(&gd, 1);
            CU_ASSERT_EQUAL(rfx_gpu_mapfilter(gpu, &gr, &big, outs, 1, &gd), RFX_ERR_DIV0);
            rfx_gpu_rows_free(gpu, &gr);
            rfx_gpu_rows_free(gpu, &gd);
            rfx_rows_free(&r);
        }
    rfx_rows r = rows_random(20000, 4, UNIFORM, 7, false);
    for (size_t i = 0; i < r.n; i += 10)
        r.data[i * 4 + 2] = r.data[i * 4 + 3] = 0;
    mapfilter_vs_cpu(&r, &guarded64, outs64, 2);
    rfx_rows_free(&r);
    rfx_fn_env_free(env);
}

/* The benchmark's operators at 2^28 rows against the CPU (RFX_GPU_BIG=1 only: minutes of
 * CPU time): SELECT by plain comparisons and with arithmetic, JOIN on one key, UNION and
 * DIFFERENCE, on sets of 2^28 random pairs below 2^28 (keys match about once, as in
 * bench_gpu_prims), the CPU with every core. */
static rfx_rows big_set(size_t n, int nt)
{
    rfx_rows r = rows_random(n, 2, UNIFORM, (uint32_t)n, false);
    rfx_cpu_sort(&r, nt);
    rfx_cpu_unique(&r, nt);
    return r;
}

static void big_check(const char *what, rfx_status st, rfx_dev_rows *gd, rfx_rows *hc)
{
    size_t n = hc->n;
    printf("%s: %zu rows %s; ", what, n, gpu_agrees(st, gd, hc) ? "equal" : "DIFFER");
}

static void test_big_ops(void)
{
    const char *big = getenv("RFX_GPU_BIG");
    if (!need_gpu() || quick || !big || *big != '1')
        return;
    int nt = (int)sysconf(_SC_NPROCESSORS_ONLN);
    size_t n = (size_t)1 << 28;
    rfx_rows a = big_set(n, nt), b = big_set(n, nt), hc;
    rfx_dev_rows ga = up(&a), gb = up(&b), gd;
    rfx_rx c[4] = {col(0), col(1), col(2), col(3)};
    rfx_rx half = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER, .value = (uint32_t)(n / 2)};
    rfx_rx lt = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER, .op = RFX_LT, .l = &c[0], .r = &half};
    rfx_rx sum = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_ADD, .l = &c[0], .r = &c[1]};
    rfx_rx sum_lt = {.kind = RFX_RX_CMP, .prim = RFX_UNSIGNED, .op = RFX_LT, .l = &sum, .r = &half};
    rfx_rx *swap[2] = {&c[1], &c[0]}, *id[2] = {&c[0], &c[1]}, *jout[3] = {&c[0], &c[1], &c[3]};
    const rfx_rx *preds[2] = {&lt, &sum_lt};
    rfx_rx *const *pouts[2] = {swap, id};
    for (int i = 0; i < 2; i++) {
        rfx_rows_init(&hc, 2);
        rfx_gpu_rows_init(&gd, 2);
        CU_ASSERT_EQUAL(rfx_cpu_mapfilter(&a, preds[i], pouts[i], 2, &hc, nt), RFX_OK);
        big_check(i ? "SELECT rx" : "SELECT", rfx_gpu_mapfilter(gpu, &ga, preds[i], pouts[i], 2, &gd), &gd, &hc);
    }
    rfx_rows_init(&hc, 3);
    rfx_gpu_rows_init(&gd, 3);
    CU_ASSERT_EQUAL(rfx_cpu_join(&a, &b, 1, NULL, jout, 3, false, &hc, nt), RFX_OK);
    big_check("JOIN", rfx_gpu_join(gpu, &ga, &gb, 1, NULL, jout, 3, &gd), &gd, &hc);
    rfx_rows_init(&hc, 2);
    rfx_gpu_rows_init(&gd, 2);
    CU_ASSERT_EQUAL(rfx_cpu_union(&a, &b, &hc, nt), RFX_OK);
    big_check("UNION", rfx_gpu_union(gpu, &ga, &gb, &gd), &gd, &hc);
    rfx_rows_init(&hc, 2);
    rfx_gpu_rows_init(&gd, 2);
    CU_ASSERT_EQUAL(rfx_cpu_semijoin(&a, &b, 2, false, &hc, nt), RFX_OK);
    big_check("DIFFERENCE", rfx_gpu_semijoin(gpu, &ga, &gb, 2, false, &gd), &gd, &hc);
    rfx_rows_free(&a);
    rfx_rows_free(&b);
    rfx_gpu_rows_free(gpu, &ga);
    rfx_gpu_rows_free(gpu, &gb);
}

/* 64-bit kinds: values of two words (column 1 the high, 2 the low), in groups of every size
 * (a ZIPF key: groups past a run of 1,024 rows fold run by run, also on the CPU) and over
 * the whole relation; sums that overflow on the way but not in total, and in total. */
static void test_aggregate_wide(void)
{
    if (!need_gpu())
        return;
    const rfx_prim prims[] = {RFX_NUMBER64, RFX_UNSIGNED64, RFX_FLOAT64};
    rfx_rows all;   /* a nullary outer relation: one empty tuple */
    rfx_rows_init(&all, 0);
    all.n = 1;
    for (int fn = RFX_AGG_COUNT; fn <= RFX_AGG_MEAN; fn++)
        for (int p = 0; p < 3; p++)
            for (size_t s = 0; s < NS; s++) {
                if (quick && sizes[s] > 70000)
                    continue;
                rfx_rows a = rows_random(s ? sizes[s - 1] : 0, 1, UNIFORM, 300, true);
                rfx_rows b = rows_random(sizes[s], 3, ZIPF, 400, true);
                for (size_t i = 0; i < b.n; i++)   /* float64s near 1; integers of every sign */
                    if (prims[p] == RFX_FLOAT64)
                        b.data[i * 3 + 1] = 0x3ff00000u + (b.data[i * 3 + 1] & 0xffff);
                    else if (i % 2)
                        b.data[i * 3 + 1] |= 0x80000000u;
                bool wide = fn != RFX_AGG_COUNT;
                int c = fn == RFX_AGG_COUNT ? -1 : 1;
                for (int k = 0; k < 2; k++) {
                    rfx_rows *outer = k ? &a : &all, hc;
                    rfx_rows_init(&hc, outer->arity + 1 + wide);
                    rfx_status want = rfx_cpu_aggregate(outer, &b, k, (rfx_aggfn)fn, c, prims[p], &hc);
                    rfx_dev_rows ga = up(outer), gb = up(&b), gd;
                    rfx_gpu_rows_init(&gd, outer->arity + 1 + wide);
                    rfx_status got = rfx_gpu_aggregate(gpu, &ga, &gb, k, (rfx_aggfn)fn, c, prims[p], &gd);
                    if (want == RFX_OK) {
                        gpu_agrees(got, &gd, &hc);
                    } else {   /* an unsigned sum past 2^64: both fail */
                        CU_ASSERT_EQUAL(got, want);
                        rfx_rows_free(&hc);
                        rfx_gpu_rows_free(gpu, &gd);
                    }
                    rfx_gpu_rows_free(gpu, &ga);
                    rfx_gpu_rows_free(gpu, &gb);
                }
                rfx_rows_free(&a);
                rfx_rows_free(&b);
            }
    /* -2^63 - 1 + (2^63 - 1): past 64 bits on the way, -2 in total; then past in total, in a
     * group of one run and in one of ten runs */
    for (int n = 3; n <= 10000; n += 9997) {
        rfx_rows b;
        rfx_rows_init(&b, 3);
        CU_ASSERT_EQUAL(rfx_rows_push(&b, (uint32_t[]){1, 0x80000000u, 0}), RFX_OK);
        CU_ASSERT_EQUAL(rfx_rows_push(&b, (uint32_t[]){1, 0xffffffffu, 0xffffffffu}), RFX_OK);
        for (int i = 2; i < n; i++)
            CU_ASSERT_EQUAL(rfx_rows_push(&b, (uint32_t[]){1, i == n - 1 ? 0x7fffffffu : 0, i == n - 1 ? 0xffffffffu : 0}),
                            RFX_OK);
        for (int past = 0; past < 2; past++) {
            for (int j = 0; past && j < 2; j++)   /* two more: the total leaves 64 bits */
                CU_ASSERT_EQUAL(rfx_rows_push(&b, (uint32_t[]){1, 0x7fffffffu, 0xffffffffu}), RFX_OK);
            rfx_rows hc;
            rfx_rows_init(&hc, 3);
            CU_ASSERT_EQUAL(rfx_cpu_aggregate(&all, &b, 0, RFX_AGG_SUM, 1, RFX_NUMBER64, &hc),
                            past ? RFX_ERR_DIV0 : RFX_OK);
            CU_ASSERT(past || (hc.n == 1 && hc.data[0] == 0xffffffffu && hc.data[1] == 0xfffffffeu));
            rfx_dev_rows ga = up(&all), gb = up(&b), gd;
            rfx_gpu_rows_init(&gd, 3);
            rfx_status st = rfx_gpu_aggregate(gpu, &ga, &gb, 0, RFX_AGG_SUM, 1, RFX_NUMBER64, &gd);
            if (past) {
                CU_ASSERT_EQUAL(st, RFX_ERR_DIV0);
                rfx_rows_free(&hc);
                rfx_gpu_rows_free(gpu, &gd);
            } else {
                gpu_agrees(st, &gd, &hc);
            }
            rfx_gpu_rows_free(gpu, &ga);
            rfx_gpu_rows_free(gpu, &gb);
        }
        rfx_rows_free(&b);
    }
    rfx_rows_free(&all);
}

/* An outer relation whose rows repeat their keys (an atom's rows, not its keys: runs of 1 to
 * 60 rows and one of 100,000), sorted on the key as plans give it: each row takes its run
 * head's value, found by galloping back from it. */
static void test_aggregate_outer_runs(void)
{
    if (!need_gpu())
        return;
    rfx_rows a, b = rows_random(200000, 2, ZIPF, 3000, true);
    rfx_rows_init(&a, 2);
    for (uint32_t key = 0; key < 3000; key++) {
        size_t len = key == 7 ? 100000 : 1 + (size_t)(rnd() % 60);
        for (size_t q = 0; q < len; q++)
            CU_ASSERT_EQUAL(rfx_rows_push(&a, (uint32_t[]){key, (uint32_t)rnd()}), RFX_OK);
    }
    for (int fn = RFX_AGG_COUNT; fn <= RFX_AGG_MAX; fn++) {
        rfx_rows hc;
        rfx_rows_init(&hc, 3);
        int c = fn == RFX_AGG_COUNT ? -1 : 1;
        CU_ASSERT_EQUAL(rfx_cpu_aggregate(&a, &b, 1, (rfx_aggfn)fn, c, RFX_NUMBER, &hc), RFX_OK);
        rfx_dev_rows ga = up(&a), gb = up(&b), gd;
        rfx_gpu_rows_init(&gd, 3);
        gpu_agrees(rfx_gpu_aggregate(gpu, &ga, &gb, 1, (rfx_aggfn)fn, c, RFX_NUMBER, &gd), &gd, &hc);
        rfx_gpu_rows_free(gpu, &ga);
        rfx_gpu_rows_free(gpu, &gb);
    }
    rfx_rows_free(&a);
    rfx_rows_free(&b);
}

static void test_aggregate(void)
{
    if (!need_gpu())
        return;
    for (int fn = RFX_AGG_COUNT; fn <= RFX_AGG_MAX; fn++)
        for (int prim = RFX_NUMBER; prim <= RFX_FLOAT; prim++)
            for (size_t s = 0; s < NS - 1; s++) {
                if (quick && sizes[s + 1] > 70000)
                    continue;
                rfx_rows a = rows_random(sizes[s], 1, UNIFORM, 300, true), b = rows_random(sizes[s + 1], 2, ZIPF, 400, true);
                rfx_rows hc;
                rfx_rows_init(&hc, 2);
                int c = fn == RFX_AGG_COUNT ? -1 : 1;
                CU_ASSERT_EQUAL(rfx_cpu_aggregate(&a, &b, 1, (rfx_aggfn)fn, c, (rfx_prim)prim, &hc), RFX_OK);
                rfx_dev_rows ga = up(&a), gb = up(&b), gd;
                rfx_gpu_rows_init(&gd, 2);
                gpu_agrees(rfx_gpu_aggregate(gpu, &ga, &gb, 1, (rfx_aggfn)fn, c, (rfx_prim)prim, &gd), &gd, &hc);
                rfx_rows_free(&a);
                rfx_rows_free(&b);
                rfx_gpu_rows_free(gpu, &ga);
                rfx_gpu_rows_free(gpu, &gb);
            }
    /* groups too large for one thread (folded by every block where the order cannot
     * matter): one group over a whole relation (a nullary outer relation), and three keys
     * with a million rows, 20,000 and 9 beside smaller ones, every kind and function */
    rfx_rows all;
    rfx_rows_init(&all, 0);
    all.n = 1;
    rfx_rows few;
    rfx_rows_init(&few, 1);
    for (uint32_t key = 0; key < 40; key++)
        CU_ASSERT_EQUAL(rfx_rows_push(&few, &key), RFX_OK);
    rfx_rows many = rows_random(quick ? 300000 : 3000000, 2, WIDE, 0, false);
    for (size_t i = 0; i < many.n; i++)   /* keys 0 (most), 1 (20,000), 2 (9), 3..39 */
        many.data[2 * i] = i < 20000 ? 1 : i < 20009 ? 2 : i < 21000 ? 3 + (uint32_t)(i % 37) : 0;
    rfx_cpu_sort(&many, 4);
    for (int fn = RFX_AGG_COUNT; fn <= RFX_AGG_MAX; fn++)
        for (int prim = RFX_NUMBER; prim <= RFX_FLOAT; prim++)
            for (int k = 0; k < 2; k++) {
                rfx_rows *a = k ? &few : &all, hc;
                rfx_rows_init(&hc, a->arity + 1);
                int c = fn == RFX_AGG_COUNT ? -1 : 1;
                CU_ASSERT_EQUAL(rfx_cpu_aggregate(a, &many, k, (rfx_aggfn)fn, c, (rfx_prim)prim, &hc), RFX_OK);
                rfx_dev_rows ga = up(a), gb = up(&many), gd;
                rfx_gpu_rows_init(&gd, a->arity + 1);
                gpu_agrees(rfx_gpu_aggregate(gpu, &ga, &gb, k, (rfx_aggfn)fn, c, (rfx_prim)prim, &gd), &gd, &hc);
                rfx_gpu_rows_free(gpu, &ga);
                rfx_gpu_rows_free(gpu, &gb);
            }
    rfx_rows_free(&all);
    rfx_rows_free(&few);
    rfx_rows_free(&many);
}

/* Every end-to-end case with outputs and the default options, run on both backends:
 * identical files. */
static void test_programs_both_backends(void)
{
    if (!need_gpu() || quick)
        return;
    char **names = list_dir(env_or("RFX_TEST_CASES", RFX_CASES_DIR));
    int compared = 0;
    for (char **n = names; n && *n; n++) {
        char dir[4096], exp[4200];
        snprintf(dir, sizeof dir, "%s/%s", env_or("RFX_TEST_CASES", RFX_CASES_DIR), *n);
        snprintf(exp, sizeof exp, "%s/expected", dir);
        if (!is_dir(exp) || !file_exists(strcat(strcpy(exp, dir), "/program.dl")))
            continue;
        if (file_exists(strcat(strcpy(exp, dir), "/args")))
            continue;   /* a case with options of its own: test_cases runs it (RFX_BACKEND=cuda) */
        char *outs[2];
        for (int b = 0; b < 2; b++) {
            outs[b] = make_temp_dir();
            char facts[4200];
            snprintf(facts, sizeof facts, "%s/facts", dir);
            char *argv[] = {(char *)env_or("RFX_TEST_BIN", RFX_BIN), b ? "--backend=cuda" : "--backend=cpu", "-F", is_dir(facts) ? "facts" : ".",
                            "-D", outs[b], "--tune", "jit_min_rows=0,jit_background=0,lftj_trie_from=0", "program.dl", NULL};
            run_result r = run_prog(dir, argv);
            if (r.code != 0)
                fprintf(stderr, "\n    %s on %s: exit %d: %s", *n, b ? "cuda" : "cpu", r.code, r.err ? r.err : "");
            CU_ASSERT_EQUAL(r.code, 0);
            run_free(&r);
        }
        char **files = list_dir(outs[0]);
        for (char **f = files; f && *f; f++) {
            char p0[4300], p1[4300];
            snprintf(p0, sizeof p0, "%s/%s", outs[0], *f);
            snprintf(p1, sizeof p1, "%s/%s", outs[1], *f);
            char *t0 = read_file(p0, NULL), *t1 = read_file(p1, NULL);
            bool eq = t0 && t1 && strcmp(t0, t1) == 0;
            if (!eq)
                fprintf(stderr, "\n    %s: %s differs between backends", *n, *f);
            CU_ASSERT(eq);
            free(t0);
            free(t1);
        }
        free_list(files);
        for (int b = 0; b < 2; b++) {
            remove_tree(outs[b]);
            free(outs[b]);
        }
        compared++;
    }
    free_list(names);
    CU_ASSERT(compared > 20);
}

static void add(void)
{
    char err[512];
    quick = getenv("RFX_GPU_QUICK") && getenv("RFX_GPU_QUICK")[0] == '1';
    /* the CUDA runs of the programs use generated kernels for every fused group, however
     * small (program_argv's --tune), compiled into a fresh cache */
    cache_dir = make_temp_dir();
    if (cache_dir)
        setenv("RFX_CACHE_DIR", cache_dir, 1);
    if (rfx_gpu_count() > 0) {
        gpu = open_gpu(0, 0, err, sizeof err);
        if (!gpu)
            fprintf(stderr, "cannot open the CUDA device: %s\n", err);
        else
            printf("device: %s\n", rfx_gpu_name(gpu));
    }
    CU_pSuite s = CU_add_suite("gpu-primitives", NULL, NULL);
    CU_add_test(s, "rows up and down, direct and staged", test_staged_copies);
    CU_add_test(s, "sort+unique uniform", test_sort_uniform);
    CU_add_test(s, "sort+unique all equal", test_sort_equal);
    CU_add_test(s, "sort+unique zipf", test_sort_zipf);
    CU_add_test(s, "sort+unique wide", test_sort_wide);
    CU_add_test(s, "sort large", test_sort_big);
    CU_add_test(s, "join, product, with predicates", test_join);
    CU_add_test(s, "union, intersect, difference", test_set_ops);
    CU_add_test(s, "sort of two-column rows as words", test_sort_words);
    CU_add_test(s, "sort on the leading column of rows in order within it", test_sort_leading);
    CU_add_test(s, "stable sort of wider rows on their leading columns", test_sort_leading_stable);
    CU_add_test(s, "sort-unique of rows sorted on a prefix, run by run", test_sort_unique_hinted);
    CU_add_test(s, "union by merged tiles", test_union_merge);
    CU_add_test(s, "semi- and anti-join of whole rows", test_semijoin_whole_rows);
    CU_add_test(s, "semi- and anti-join by merge path", test_semijoin_merge);
    CU_add_test(s, "semi- and anti-join against several sorted sets", test_semijoin_sets);
    CU_add_test(s, "probes: rows in any order searched in sorted sets", test_probe_sets);
    CU_add_test(s, "probes: a million rows against a bitmap of the set's keys, or searched", test_probe_bitmap);
    CU_add_test(s, "map and filter", test_mapfilter);
    CU_add_test(s, "map and filter over 64-bit values, decimals and dates", test_mapfilter_wide);
    CU_add_test(s, "like, contains, strlen and the symbols' order over texts on the device", test_mapfilter_texts);
    CU_add_test(s, "map and filter: stack depths, rejected rows", test_mapfilter_depths);
    CU_add_test(s, "divisions guarded by the conditions before them", test_guarded_division);
    CU_add_test(s, "select by plain comparisons", test_select_simple);
    CU_add_test(s, "maps of simple terms", test_map_simple);
    CU_add_test(s, "empty launches, waited for and not", test_empty_launch);
    CU_add_test(s, "look-back words kept across launches", test_lookback_across_launches);
    CU_add_test(s, "SELECT, JOIN, UNION, DIFFERENCE at 2^28 rows (RFX_GPU_BIG=1)", test_big_ops);
    CU_add_test(s, "aggregates", test_aggregate);
    CU_add_test(s, "aggregates over outer rows that repeat their keys", test_aggregate_outer_runs);
    CU_add_test(s, "aggregates of 64-bit values, by runs", test_aggregate_wide);
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
    CU_add_test(s, "programs on both backends", test_programs_both_backends);
}

int main(int argc, char **argv)
{
    /* the in-core triejoin reads two-column sources as TrieArrays from any size here (by
     * default from 2^20 rows), so the small cases take that path; the rows path is the
     * default for small sources elsewhere (test_lftj, test_ooc, rfx cliques) */
    base_tuning = rfx_tuning_defaults;
    base_tuning.lftj_trie_from = 0;
    current = base_tuning;
    if (rfx_gpu_count() <= 0) {
        printf("test_gpu: skipped: no CUDA device\n");
        return RFX_TEST_SKIPPED;
    }
    int rc = run_suites(argc, argv, add);
    rfx_gpu_close(gpu);
    if (cache_dir) {
        remove_tree(cache_dir);
        free(cache_dir);
    }
    return rc;
}
