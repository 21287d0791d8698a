/* test_gpu.c: the CUDA primitives against the CPU ones on the same random inputs
 * (empty, one tuple, 2^k +- 1, all-equal keys, Zipf-skewed keys, up to 2^28 tuples with
 * RFX_GPU_BIG=1), and whole programs on both backends with byte-identical outputs; this
 * file the sorts, joins and set operations and main, test_gpu_exprs.c and
 * test_gpu_lftj.c the rest (gpu_fixture.h). On a machine without a CUDA device every test
 * reports "skipped: no CUDA device". */
#include "gpu_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* The single-pass scans and uniques (a block a tile of 2,048, placed by look-back) at
 * and around tile edges: the distinct two-column rows of a sort, and the compaction of an
 * anti-join against two sets (flags, their scan, the kept rows), each against the CPU. */
static void test_single_pass_tiles(void)
{
    if (!need_gpu())
        return;
    static const size_t ns[] = {1, 2, 2047, 2048, 2049, 4095, 4097, 6144, 123457, 1000003};
    for (size_t s = 0; s < sizeof ns / sizeof *ns; s++) {
        rfx_rows h = rows_random(ns[s], 2, UNIFORM, (uint32_t)(ns[s] / 4 + 2), false);
        sort_check(&h);
        rfx_rows a = rows_random(ns[s], 2, UNIFORM, 3000, true), b1 = rows_random(900, 1, UNIFORM, 3000, false),
                 b2 = rows_random(700, 1, UNIFORM, 3000, false), whole, want;
        rfx_cpu_sort(&b1, 4);
        rfx_cpu_unique(&b1, 4);
        rfx_cpu_sort(&b2, 4);
        rfx_cpu_unique(&b2, 4);
        rfx_rows_init(&whole, 1);
        rfx_rows_init(&want, 2);
        CU_ASSERT_EQUAL(rfx_cpu_union(&b1, &b2, &whole, 4), RFX_OK);
        CU_ASSERT_EQUAL(rfx_cpu_semijoin(&a, &whole, 1, false, &want, 4), RFX_OK);
        rfx_dev_rows ga = up(&a), g1 = up(&b1), g2 = up(&b2), got;
        const rfx_dev_rows *sets[2] = {&g1, &g2};
        rfx_gpu_rows_init(&got, 2);
        if (!gpu_agrees(rfx_gpu_semijoin_sets(gpu, &ga, sets, 2, 1, false, &got), &got, &want))
            fprintf(stderr, "\n    anti-join of %zu rows against two sets differs", ns[s]);
        rfx_rows_free(&a);
        rfx_rows_free(&b1);
        rfx_rows_free(&b2);
        rfx_rows_free(&whole);
        rfx_gpu_rows_free(gpu, &ga);
        rfx_gpu_rows_free(gpu, &g1);
        rfx_gpu_rows_free(gpu, &g2);
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

/* A probe join of rows in any order: the GPU's pairs (searched one by one, or the rows
 * sorted first where b outgrows half the L2 cache and they are not few next to it) are
 * the CPU merge join's over the rows sorted, as bags. */
/* The device's rows (made by a call that returned st) and the host's are the same rows in
 * some order; both freed. */
static void agrees_as_sets(rfx_status st, rfx_dev_rows *gc, rfx_rows *hc)
{
    CU_ASSERT_EQUAL(st, RFX_OK);
    rfx_rows back = down(gc);
    CU_ASSERT_EQUAL(rfx_cpu_sort(&back, 4), RFX_OK);
    CU_ASSERT_EQUAL(rfx_cpu_sort(hc, 4), RFX_OK);
    CU_ASSERT(same(&back, hc));
    rfx_rows_free(&back);
    rfx_rows_free(hc);
    rfx_gpu_rows_free(gpu, gc);
}

static void test_probe_join(void)
{
    if (!need_gpu())
        return;
    const size_t nbs[] = {300000, 8000000}, nas[] = {1000003, 60000};
    for (int bi = 0; bi < 2; bi++)
        for (int ai = 0; ai < 2; ai++)
            for (int k = 1; k <= 2; k++) {
                if (quick && (bi || ai == 0))
                    continue;
                uint32_t range = k == 1 ? (uint32_t)nbs[bi] * 2 : 2048;
                rfx_rows b = rows_random(nbs[bi], 2, UNIFORM, range, true), a;
                rfx_rows_init(&a, 2);
                rfx_rows_reserve(&a, nas[ai]);
                for (size_t i = 0; i < nas[ai]; i++) {   /* in no order; a third certainly meets b */
                    const uint32_t *hit = b.data + 2 * (rnd() % b.n);
                    a.data[2 * i] = i % 3 == 0 ? hit[0] : draw(UNIFORM, range);
                    a.data[2 * i + 1] = k == 2 && i % 3 == 0 ? hit[1] : (uint32_t)i;
                }
                a.n = nas[ai];
                rfx_rx c[4] = {col(0), col(1), col(2), col(3)};
                rfx_rx *outs[3] = {&c[1], &c[3], &c[0]};
                rfx_rows sorted, hc;
                rfx_rows_init(&sorted, 2);
                rfx_rows_init(&hc, 3);
                rfx_rows_reserve(&sorted, a.n);
                memcpy(sorted.data, a.data, 8 * a.n);
                sorted.n = a.n;
                CU_ASSERT_EQUAL(rfx_cpu_sort(&sorted, 4), RFX_OK);
                CU_ASSERT_EQUAL(rfx_cpu_join(&sorted, &b, k, NULL, outs, 3, false, &hc, 4), RFX_OK);
                CU_ASSERT(hc.n > 0);
                rfx_dev_rows ga = up(&a), gb = up(&b), gc;
                rfx_gpu_rows_init(&gc, 3);
                agrees_as_sets(rfx_gpu_probe_join(gpu, &ga, &gb, k, NULL, outs, 3, &gc), &gc, &hc);
                rfx_rows_free(&sorted);
                rfx_rows_free(&a);
                rfx_rows_free(&b);
                rfx_gpu_rows_free(gpu, &ga);
                rfx_gpu_rows_free(gpu, &gb);
            }
}

/* A value near zero as a number or unsigned (within `spread`), now and then a type's limit. */
static uint32_t near_zero(bool is_signed, uint32_t spread)
{
    uint64_t r = rnd() % 100;
    if (r < 3)
        return is_signed ? (r == 0 ? 0x7fffffffu : 0x80000000u) : (r == 0 ? 0xffffffffu : 0xfffffff0u);
    return is_signed ? (uint32_t)(int32_t)(rnd() % (2 * spread + 1) - spread) : (uint32_t)(rnd() % (2 * spread + 1));
}

/* A join ranged by comparisons (rfx_gpu_range_join) makes the pairs the CPU's join makes
 * with the same predicate and no range: numbers across zero and at their limits, unsigned
 * values, one bound or two, strict or not, k = 0 and 1, in order or probed, small and large. */
static void test_range_join(void)
{
    if (!need_gpu())
        return;
    for (int round = 0; round < 48; round++) {
        bool is_signed = round % 2, probe = round % 3 == 0 && round % 4 >= 2, large = round >= 40;
        int k = round % 4 < 2 ? 0 : 1;
        size_t na = large ? 100000 : rnd() % 300, nb = large ? 200000 : rnd() % 400;
        uint32_t spread = large ? 1000000 : 60;
        rfx_rows a, b;
        rfx_rows_init(&a, 2);
        rfx_rows_init(&b, 2);
        for (size_t i = 0; i < na; i++) {
            uint32_t t[2] = {(uint32_t)(rnd() % 3), near_zero(is_signed, spread)};
            rfx_rows_push(&a, t);
        }
        for (size_t i = 0; i < nb; i++) {
            uint32_t key = (uint32_t)(rnd() % 3), v = near_zero(is_signed, spread);
            uint32_t t[2] = {k ? key : v, k ? v : key};
            rfx_rows_push(&b, t);
        }
        CU_ASSERT_EQUAL(rfx_cpu_sort(&a, 4), RFX_OK);
        CU_ASSERT_EQUAL(rfx_cpu_unique(&a, 4), RFX_OK);
        CU_ASSERT_EQUAL(rfx_cpu_sort(&b, 4), RFX_OK);
        CU_ASSERT_EQUAL(rfx_cpu_unique(&b, 4), RFX_OK);
        rfx_prim prim = is_signed ? RFX_NUMBER : RFX_UNSIGNED;
        rfx_rx c[4], d1 = {.kind = RFX_RX_CONST, .prim = prim, .value = (uint32_t)(rnd() % 9) - 4},
                     d2 = {.kind = RFX_RX_CONST, .prim = prim, .value = rnd() % 12};
        for (int i = 0; i < 4; i++)
            c[i] = (rfx_rx){.kind = RFX_RX_COL, .prim = prim, .col = i};
        rfx_rx lo_e = {.kind = RFX_RX_BIN, .prim = prim, .op = RFX_ADD, .l = &c[1], .r = &d1},
               hi_e = {.kind = RFX_RX_BIN, .prim = prim, .op = RFX_ADD, .l = &c[1], .r = &d2};
        rfx_rx *y = &c[2 + k];
        rfx_rx lo = {.kind = RFX_RX_CMP, .prim = prim, .op = round % 5 ? RFX_GE : RFX_GT, .l = y, .r = &lo_e},
               hi = {.kind = RFX_RX_CMP, .prim = prim, .op = round % 7 ? RFX_LE : RFX_LT, .l = y, .r = &hi_e},
               both = {.kind = RFX_RX_AND, .prim = RFX_NUMBER, .l = &lo, .r = &hi};
        int shape = large ? 0 : round % 3;   /* both bounds, the lower alone, the upper alone */
        const rfx_rx *pred = shape == 0 ? &both : shape == 1 ? &lo : &hi;
        rfx_rx *outs[3] = {&c[0], &c[1], &c[3]};
        rfx_rows hc;
        rfx_rows_init(&hc, 3);
        /* the reference: the CPU's join without the range (test_primitives checks its ranged
         * join against it), or where that product is too large to test pair by pair, ranged */
        rfx_status want = large ? rfx_cpu_range_join(&a, &b, k, pred, outs, 3, false, false, &hc, 4)
                                : rfx_cpu_join(&a, &b, k, pred, outs, 3, false, &hc, 4);
        CU_ASSERT_EQUAL(want, RFX_OK);
        if (probe)   /* a in no order */
            for (size_t i = a.n; i > 1; i--) {
                size_t j = rnd() % i;
                for (int col = 0; col < 2; col++) {
                    uint32_t v = a.data[2 * (i - 1) + col];
                    a.data[2 * (i - 1) + col] = a.data[2 * j + col];
                    a.data[2 * j + col] = v;
                }
            }
        rfx_dev_rows ga = up(&a), gb = up(&b), gc;
        rfx_gpu_rows_init(&gc, 3);
        agrees_as_sets(rfx_gpu_range_join(gpu, &ga, &gb, k, pred, outs, 3, probe, &gc), &gc, &hc);
        rfx_rows_free(&a);
        rfx_rows_free(&b);
        rfx_gpu_rows_free(gpu, &ga);
        rfx_gpu_rows_free(gpu, &gb);
    }
}

/* Rows sorted on some of their columns where they lie (a probe's key order): in order on
 * those columns, the same rows as before. */
static void test_sort_by_columns(void)
{
    if (!need_gpu())
        return;
    const int arities[] = {2, 2, 3, 3}, ks[] = {1, 1, 1, 2}, cols[][2] = {{1, 0}, {0, 0}, {2, 0}, {0, 2}};
    for (int t = 0; t < 4; t++)
        for (size_t n = 1; n <= 3000000; n *= 60) {
            int a = arities[t], k = ks[t];
            rfx_rows h;
            rfx_rows_init(&h, a);
            rfx_rows_reserve(&h, n);
            for (size_t i = 0; i < n * (size_t)a; i++)
                h.data[i] = draw(UNIFORM, 5000);
            h.n = n;
            rfx_dev_rows d = up(&h), out;
            rfx_gpu_rows_init(&out, a);
            CU_ASSERT_EQUAL(rfx_gpu_sort_by_columns_into(gpu, &d, cols[t], k, &out), RFX_OK);
            rfx_rows back = down(&out);
            bool ordered = back.n == n;
            for (size_t i = 1; ordered && i < n; i++)
                for (int c = 0; c < k; c++) {
                    uint32_t x = back.data[(i - 1) * a + cols[t][c]], y = back.data[i * a + cols[t][c]];
                    if (x != y) {
                        ordered = x < y;
                        break;
                    }
                }
            CU_ASSERT(ordered);
            CU_ASSERT_EQUAL(rfx_cpu_sort(&back, 4), RFX_OK);
            CU_ASSERT_EQUAL(rfx_cpu_sort(&h, 4), RFX_OK);
            CU_ASSERT(same(&back, &h));
            rfx_rows_free(&back);
            rfx_rows_free(&h);
            rfx_gpu_rows_free(gpu, &d);
            rfx_gpu_rows_free(gpu, &out);
        }
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
    CU_add_test(s, "single-pass scans and uniques at tile edges", test_single_pass_tiles);
    CU_add_test(s, "join, product, with predicates", test_join);
    CU_add_test(s, "probe joins: rows in any order searched, or sorted first", test_probe_join);
    CU_add_test(s, "ranged joins: each row's matches within the bounds comparisons give", test_range_join);
    CU_add_test(s, "probe joins' sort: rows on some of their columns where they lie", test_sort_by_columns);
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
    CU_add_test(s, "SELECT, JOIN, UNION, DIFFERENCE at 2^28 rows (RFX_GPU_BIG=1)", test_big_ops);
    gpu_exprs_tests(s);
    gpu_lftj_tests(s);
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
