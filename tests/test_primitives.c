/* test_primitives.c: every CPU primitive against a naive reference on random inputs:
 * empty, one tuple, 2^k +- 1 sizes, all-equal keys and Zipf-skewed keys, on one and
 * several threads (the parallel paths start at 32768 tuples). */
#include "harness.h"
#include "primitives.h"
#include "rx_ops.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- deterministic random numbers (splitmix64) ---------------------------------------- */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

typedef enum dist { UNIFORM, NARROW, EQUAL, ZIPF, WIDE } dist;

static uint32_t draw(dist d, uint32_t range)
{
    switch (d) {
    case UNIFORM: return (uint32_t)(rnd() % range);
    case NARROW: return (uint32_t)(rnd() % 4);
    case EQUAL: return 7;
    case WIDE: return (uint32_t)rnd();
    case ZIPF: {
        /* P(k) ~ 1/k: inverse transform of a log-uniform draw */
        double u = (double)(rnd() >> 11) / 9007199254740992.0;
        return (uint32_t)(exp(u * log((double)range + 1.0)) - 1.0);
    }
    }
    return 0;
}

static rfx_rows random_rows(size_t n, int arity, dist d, uint32_t range)
{
    rfx_rows r;
    rfx_rows_init(&r, arity);
    rfx_rows_reserve(&r, n);
    for (size_t i = 0; i < n * (size_t)arity; i++)
        r.data[i] = draw(d, range);
    r.n = n;
    return r;
}

static int cmp_a;
static int cmp_tuple(const void *x, const void *y)
{
    const uint32_t *a = x, *b = y;
    for (int i = 0; i < cmp_a; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

static void ref_sort(rfx_rows *r)
{
    cmp_a = r->arity;
    if (r->n && r->arity)
        qsort(r->data, r->n, sizeof(uint32_t) * (size_t)r->arity, cmp_tuple);
}

static void ref_unique(rfx_rows *r)
{
    if (r->arity == 0) {
        r->n = r->n ? 1 : 0;
        return;
    }
    size_t w = 0;
    for (size_t i = 0; i < r->n; i++)
        if (i == 0 || memcmp(r->data + i * r->arity, r->data + (w - 1) * r->arity, 4u * r->arity) != 0)
            memmove(r->data + w++ * r->arity, r->data + i * r->arity, 4u * r->arity);
    r->n = w;
}

static rfx_rows copy_rows(const rfx_rows *s)
{
    rfx_rows r;
    rfx_rows_init(&r, s->arity);
    rfx_rows_reserve(&r, s->n);
    if (s->n && s->arity)
        rfx_memcpy(r.data, s->data, 4u * s->arity * s->n);
    r.n = s->n;
    return r;
}

static bool same_rows(const rfx_rows *a, const rfx_rows *b)
{
    return a->arity == b->arity && a->n == b->n &&
           (a->n == 0 || a->arity == 0 || memcmp(a->data, b->data, 4u * a->arity * a->n) == 0);
}

static rfx_rows sorted_set(size_t n, int arity, dist d, uint32_t range)
{
    rfx_rows r = random_rows(n, arity, d, range);
    ref_sort(&r);
    ref_unique(&r);
    return r;
}

static const size_t sizes[] = {0, 1, 2, 63, 64, 65, 1023, 1025, 40000, 70001};
#define NSIZES (sizeof sizes / sizeof sizes[0])
static const int threads[] = {1, 4};

/* ---- sort and unique ------------------------------------------------------------------ */
static void sort_case(dist d, uint32_t range)
{
    for (size_t s = 0; s < NSIZES; s++)
        for (int arity = 1; arity <= 4; arity++)
            for (int t = 0; t < 2; t++) {
                rfx_rows r = random_rows(sizes[s], arity, d, range), ref = copy_rows(&r);
                CU_ASSERT_EQUAL(rfx_cpu_sort(&r, threads[t]), RFX_OK);
                ref_sort(&ref);
                CU_ASSERT(same_rows(&r, &ref));
                CU_ASSERT_EQUAL(rfx_cpu_unique(&r, threads[t]), RFX_OK);
                ref_unique(&ref);
                CU_ASSERT(same_rows(&r, &ref));
                CU_ASSERT(rfx_cpu_is_set(&r));
                rfx_rows_free(&r);
                rfx_rows_free(&ref);
            }
}

/* Appends whose copy is split over threads (4 MB pieces: 1, 4 and 16 threads over 0.5 MB,
 * 18 MB + 12 bytes, and 40 MB), the last after 24 MB already held (the rows held are moved
 * to a larger buffer on those threads too), keep every word in order after the rows there
 * were. */
static void test_append_parallel(void)
{
    const size_t sizes[] = {65536, 2359297, 5242880}, held[] = {1, 1, 3145728};
    const int threads[] = {1, 4, 16};
    for (int k = 0; k < 3; k++) {
        rfx_rows src, dst;
        rfx_rows_init(&src, 2);
        rfx_rows_init(&dst, 2);
        CU_ASSERT_EQUAL_FATAL(rfx_rows_reserve(&src, sizes[k]), RFX_OK);
        CU_ASSERT_EQUAL_FATAL(rfx_rows_reserve(&dst, held[k]), RFX_OK);
        for (size_t i = 0; i < 2 * sizes[k]; i++)
            src.data[i] = (uint32_t)(i * 2654435761u);
        for (size_t i = 0; i < 2 * held[k]; i++)
            dst.data[i] = (uint32_t)i ^ 0x5555u;
        src.n = sizes[k];
        dst.n = held[k];
        CU_ASSERT_EQUAL(rfx_rows_append_parallel(&dst, &src, threads[k]), RFX_OK);
        CU_ASSERT_EQUAL(dst.n, src.n + held[k]);
        bool same = dst.n == src.n + held[k] && memcmp(dst.data + 2 * held[k], src.data, src.n * 8) == 0;
        for (size_t i = 0; same && i < 2 * held[k]; i++)
            same = dst.data[i] == ((uint32_t)i ^ 0x5555u);
        CU_ASSERT(same);
        rfx_rows_free(&src);
        rfx_rows_free(&dst);
    }
}

/* rfx_parallel_for through its kept threads: every index run once whatever the thread
 * counts of the calls before, with threads that watch for the next call or sleep, with
 * calls nested inside a call (the pool is in use: threads of their own) and calls from two
 * threads at once. */
typedef struct pf_ctx {
    atomic_int *hits;
    bool nest;                 /* each index runs a parallel_for of its own over 37 counters */
} pf_ctx;

static void pf_hit(int i, void *arg)
{
    pf_ctx *c = arg;
    if (c->nest) {
        pf_ctx inner = {c->hits + (size_t)i * 37, false};
        rfx_parallel_for(37, 3, pf_hit, &inner);
    } else {
        atomic_fetch_add(&c->hits[i], 1);
    }
}

/* calls of several sizes and thread counts; false if an index ran other than once */
static bool pf_calls(unsigned seed, int calls)
{
    atomic_int *hits = calloc(4 * 37 * 64, sizeof *hits);
    bool ok = hits != NULL;
    for (int k = 0; ok && k < calls; k++) {
        seed = seed * 1103515245u + 12345u;
        const int nthreads[] = {2, 3, 8, 16, 1, 5};
        bool nest = k % 7 == 3;
        int n = nest ? 4 : (int)(seed >> 16) % 300, total = nest ? 4 * 37 : n;
        for (int i = 0; i < total; i++)
            atomic_store(&hits[i], 0);
        pf_ctx c = {hits, nest};
        rfx_parallel_for(n, nthreads[k % 6], pf_hit, &c);
        for (int i = 0; i < total; i++)
            ok &= atomic_load(&hits[i]) == 1;
    }
    free(hits);
    return ok;
}

static void *pf_thread(void *arg)
{
    return pf_calls((unsigned)(uintptr_t)arg, 300) ? arg : NULL;
}

static void test_parallel_for(void)
{
    CU_ASSERT(pf_calls(1, 300));
    rfx_pool_watch(1);   /* kept threads that watch for the next call (many-core machines) */
    CU_ASSERT(pf_calls(2, 300));
    rfx_pool_watch(0);
    CU_ASSERT(pf_calls(4, 100));
    rfx_pool_watch(-1);
    pthread_t t[2];
    void *ret[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++)
        CU_ASSERT_FATAL(pthread_create(&t[i], NULL, pf_thread, (void *)(uintptr_t)(i + 7)) == 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], &ret[i]);
    CU_ASSERT(ret[0] != NULL && ret[1] != NULL);
    /* a child of fork, which has none of the pool's workers, runs its calls too (or is
     * stopped by the alarm instead of waiting for them forever) */
    pid_t child = fork();
    CU_ASSERT_FATAL(child >= 0);
    if (child == 0) {
        alarm(20);
        _exit(pf_calls(3, 100) ? 0 : 1);
    }
    int status = 0;
    CU_ASSERT(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_sort_uniform(void) { sort_case(UNIFORM, 1000); }
static void test_sort_narrow(void) { sort_case(NARROW, 4); }
static void test_sort_equal(void) { sort_case(EQUAL, 1); }
static void test_sort_zipf(void) { sort_case(ZIPF, 100000); }
static void test_sort_wide(void) { sort_case(WIDE, 0); }

static void test_sort_large(void)
{
    rfx_rows r = random_rows((1u << 21) + 1, 2, WIDE, 0), ref = copy_rows(&r);
    CU_ASSERT_EQUAL(rfx_cpu_sort(&r, 4), RFX_OK);
    ref_sort(&ref);
    CU_ASSERT(same_rows(&r, &ref));
    rfx_rows_free(&r);
    rfx_rows_free(&ref);
}

/* Rows of many columns (sorted by row numbers, a column at a time within equal runs): few
 * values in the first columns make runs too long to compare row by row, a constant column
 * is passed over, and repeated rows stay side by side for unique. */
static void test_sort_many_columns(void)
{
    const int arities[] = {6, 12, 20};
    const size_t sizes_[] = {1000, 100003};
    for (int ai = 0; ai < 3; ai++)
        for (int si = 0; si < 2; si++)
            for (int t = 1; t <= 4; t += 3) {
                const int a = arities[ai];
                const size_t n = sizes_[si];
                rfx_rows r;
                rfx_rows_init(&r, a);
                CU_ASSERT_FATAL(rfx_rows_reserve(&r, n) == RFX_OK);
                for (size_t i = 0; i < n; i++)
                    for (int c = 0; c < a; c++) {
                        uint32_t *v = &r.data[i * (size_t)a + (size_t)c];
                        if (i % 7 == 3 && i > 0)   /* a repeat of the row before */
                            *v = v[-a];
                        else
                            *v = c < 2 ? (uint32_t)(rnd() % 3) : c == 2 ? 9 : c % 3 == 0 ? (uint32_t)rnd() : (uint32_t)(rnd() % 5);
                    }
                r.n = n;
                rfx_rows ref = copy_rows(&r);
                CU_ASSERT_EQUAL(rfx_cpu_sort(&r, t), RFX_OK);
                ref_sort(&ref);
                CU_ASSERT(same_rows(&r, &ref));
                CU_ASSERT_EQUAL(rfx_cpu_unique(&r, t), RFX_OK);
                ref_unique(&ref);
                CU_ASSERT(same_rows(&r, &ref));
                rfx_rows_free(&r);
                rfx_rows_free(&ref);
            }
}

/* A sort on the leading columns alone: in their order, rows of equal keys in the order they
 * came (the row's number rides in its last column). */
static void test_sort_leading(void)
{
    for (int t = 1; t <= 4; t += 3) {
        const size_t n = 100003;
        rfx_rows r = random_rows(n, 4, NARROW, 0);
        for (size_t i = 0; i < n; i++) {
            r.data[i * 4 + 2] = (uint32_t)rnd();   /* unsorted past the keys */
            r.data[i * 4 + 3] = (uint32_t)i;
        }
        CU_ASSERT_EQUAL(rfx_cpu_sort_leading(&r, 2, t), RFX_OK);
        bool ok = true;
        for (size_t i = 1; i < n && ok; i++) {
            const uint32_t *p = r.data + (i - 1) * 4, *q = r.data + i * 4;
            int c = rfx_tuple_cmp(p, q, 2);
            ok = c < 0 || (c == 0 && p[3] < q[3]);
        }
        CU_ASSERT(ok);
        rfx_rows_free(&r);
    }
}

/* Rows sorted on their first two columns, in runs of 1..most rows equal on them (the rest
 * of each row from a few values, so runs hold repeats); bad: one pair of runs swapped. */
static rfx_rows rows_in_runs(size_t n, size_t most, bool bad)
{
    rfx_rows r;
    rfx_rows_init(&r, 4);
    rfx_rows_reserve(&r, n);
    r.n = n;
    uint32_t run = 0;
    for (size_t i = 0; i < n; run++) {
        size_t len = 1 + (size_t)(rnd() % most);
        for (size_t q = 0; q < len && i < n; q++, i++) {
            uint32_t *row = r.data + i * 4;
            row[0] = run / 1000;
            row[1] = run % 1000;
            row[2] = (uint32_t)(rnd() % 3);
            row[3] = (uint32_t)(rnd() % 4);
        }
    }
    if (bad) {   /* the first row moved to the end */
        uint32_t first[4];
        memcpy(first, r.data, sizeof first);
        memmove(r.data, r.data + 4, (n - 1) * 4 * sizeof(uint32_t));
        memcpy(r.data + (n - 1) * 4, first, sizeof first);
    }
    return r;
}

/* A sort of rows sorted on a prefix already: each short run sorted alone; where the prefix
 * is not sorted or a run is long it says so, and the full sort still gives the set. */
static void test_sort_runs(void)
{
    const struct { size_t most; bool bad, done; } cases[] = {
        {1, false, true}, {6, false, true}, {32, false, true}, {200, false, false}, {6, true, false}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        for (int t = 1; t <= 4; t += 3) {
            rfx_rows r = rows_in_runs(100003, cases[k].most, cases[k].bad), ref = copy_rows(&r);
            ref_sort(&ref);
            ref_unique(&ref);
            bool repeats = false, done = rfx_cpu_sort_runs(&r, 2, t, &repeats);
            CU_ASSERT_EQUAL(done, cases[k].done);
            CU_ASSERT_EQUAL(repeats, !done || cases[k].most > 1);   /* not sorted here: repeats may be left */
            if (!done)
                CU_ASSERT_EQUAL(rfx_cpu_sort(&r, t), RFX_OK);
            if (repeats || !done)
                CU_ASSERT_EQUAL(rfx_cpu_unique(&r, t), RFX_OK);
            CU_ASSERT(same_rows(&r, &ref));
            rfx_rows_free(&r);
            rfx_rows_free(&ref);
        }
}

/* Sorted rows come back as they are; one pair out of order anywhere (at a chunk's first row
 * too) is still sorted. */
static void test_sort_nearly_sorted(void)
{
    const size_t n = (1u << 20) + 3;
    const size_t at[] = {1, n / 16, n / 2 + 1, n - 1};
    for (size_t t = 0; t <= sizeof at / sizeof at[0]; t++) {
        rfx_rows r = random_rows(n, 2, WIDE, 0);
        ref_sort(&r);
        if (t < sizeof at / sizeof at[0]) {   /* swap rows at[t] - 1 and at[t] */
            uint32_t *x = r.data + (at[t] - 1) * 2, *y = r.data + at[t] * 2, k0 = x[0], k1 = x[1];
            x[0] = y[0], x[1] = y[1], y[0] = k0, y[1] = k1;
        }
        rfx_rows ref = copy_rows(&r);
        ref_sort(&ref);
        CU_ASSERT_EQUAL(rfx_cpu_sort(&r, 4), RFX_OK);
        CU_ASSERT(same_rows(&r, &ref));
        rfx_rows_free(&r);
        rfx_rows_free(&ref);
    }
}

static void test_nullary(void)
{
    rfx_rows r;
    rfx_rows_init(&r, 0);
    r.n = 5;
    CU_ASSERT_EQUAL(rfx_cpu_sort(&r, 2), RFX_OK);
    CU_ASSERT_EQUAL(rfx_cpu_unique(&r, 2), RFX_OK);
    CU_ASSERT_EQUAL(r.n, 1);
    rfx_rows e, u;
    rfx_rows_init(&e, 0);
    rfx_rows_init(&u, 0);
    CU_ASSERT_EQUAL(rfx_cpu_union(&r, &e, &u, 1), RFX_OK);
    CU_ASSERT_EQUAL(u.n, 1);
    rfx_rows_free(&u);
}

/* ---- set operations ------------------------------------------------------------------ */
static void test_union(void)
{
    for (size_t s = 0; s < NSIZES; s++)
        for (int t = 0; t < 2; t++) {
            rfx_rows a = sorted_set(sizes[s], 2, UNIFORM, 300), b = sorted_set(sizes[(s * 7) % NSIZES], 2, UNIFORM, 300);
            rfx_rows out;
            rfx_rows_init(&out, 2);
            CU_ASSERT_EQUAL(rfx_cpu_union(&a, &b, &out, threads[t]), RFX_OK);
            rfx_rows ref;
            rfx_rows_init(&ref, 2);
            rfx_rows_reserve(&ref, a.n + b.n);
            rfx_memcpy(ref.data, a.data, 8 * a.n);
            if (b.n)
                rfx_memcpy(ref.data + 2 * a.n, b.data, 8 * b.n);
            ref.n = a.n + b.n;
            ref_sort(&ref);
            ref_unique(&ref);
            CU_ASSERT(same_rows(&out, &ref));
            /* in place, as the semi-naive loop does it */
            CU_ASSERT_EQUAL(rfx_cpu_union(&a, &b, &a, threads[t]), RFX_OK);
            CU_ASSERT(same_rows(&a, &ref));
            rfx_rows_free(&a);
            rfx_rows_free(&b);
            rfx_rows_free(&out);
            rfx_rows_free(&ref);
        }
}

static void semijoin_case(bool keep, dist d)
{
    for (size_t s = 0; s < NSIZES; s++)
        for (int k = 0; k <= 2; k++)
            for (int t = 0; t < 2; t++) {
                rfx_rows a = sorted_set(sizes[s], 3, d, 50), b = sorted_set(sizes[(s * 3 + 1) % NSIZES] / 2 + 1, k, d, 50);
                rfx_rows out;
                rfx_rows_init(&out, 3);
                CU_ASSERT_EQUAL(rfx_cpu_semijoin(&a, &b, k, keep, &out, threads[t]), RFX_OK);
                rfx_rows ref;
                rfx_rows_init(&ref, 3);
                for (size_t i = 0; i < a.n; i++) {
                    bool found = false;
                    cmp_a = k;
                    if (k == 0)
                        found = b.n > 0;
                    else
                        found = bsearch(a.data + 3 * i, b.data, b.n, 4u * k, cmp_tuple) != NULL;
                    if (found == keep)
                        rfx_rows_push(&ref, a.data + 3 * i);
                }
                CU_ASSERT(same_rows(&out, &ref));
                rfx_rows_free(&a);
                rfx_rows_free(&b);
                rfx_rows_free(&out);
                rfx_rows_free(&ref);
            }
}

/* The semi- and anti-join against the union of several sorted sets (a relation's runs):
 * sets over all values, and sets each over a range of its own (the chunks skip those
 * whose range misses theirs); the destination's buffer reused from a previous call. */
static void test_semijoin_sets(void)
{
    for (size_t s = 0; s < NSIZES; s++)
        for (int nb = 1; nb <= 5; nb++)
            for (int ranged = 0; ranged < 2; ranged++)
                for (int t = 0; t < 2; t++) {
                    int k = 1 + (int)(s % 2);
                    rfx_rows a = sorted_set(sizes[s], 3, UNIFORM, 60), b[5];
                    const rfx_rows *bs[5];
                    for (int j = 0; j < nb; j++) {
                        b[j] = sorted_set(sizes[(s + (size_t)j * 3) % NSIZES] / 3 + 1, k, UNIFORM, 60);
                        if (ranged)   /* set j holds only first values in [12 j, 12 j + 12) */
                            for (size_t i = 0; i < b[j].n; i++)
                                b[j].data[i * (size_t)k] = b[j].data[i * (size_t)k] % 12 + 12u * (uint32_t)j;
                        ref_sort(&b[j]);
                        ref_unique(&b[j]);
                        bs[j] = &b[j];
                    }
                    for (int keep = 0; keep < 2; keep++) {
                        rfx_rows ref;
                        rfx_rows_init(&ref, 3);
                        for (size_t i = 0; i < a.n; i++) {
                            bool found = false;
                            cmp_a = k;
                            for (int j = 0; j < nb && !found; j++)
                                found = bsearch(a.data + 3 * i, b[j].data, b[j].n, 4u * k, cmp_tuple) != NULL;
                            if (found == (bool)keep)
                                rfx_rows_push(&ref, a.data + 3 * i);
                        }
                        rfx_rows out;
                        rfx_rows_init(&out, 3);
                        for (int again = 0; again < 2; again++) {
                            CU_ASSERT_EQUAL(rfx_cpu_semijoin_sets(&a, bs, nb, k, keep, &out, threads[t]), RFX_OK);
                            CU_ASSERT(same_rows(&out, &ref));
                        }
                        /* a probe of a's rows shuffled, some twice: the rows kept in that order */
                        rfx_rows mixed, want;
                        rfx_rows_init(&mixed, 3);
                        rfx_rows_init(&want, 3);
                        for (size_t i = 0; i < a.n + a.n / 4; i++) {
                            const uint32_t *row = a.data + 3 * (rnd() % a.n);
                            rfx_rows_push(&mixed, row);
                            bool found = false;
                            cmp_a = k;
                            for (int j = 0; j < nb && !found; j++)
                                found = bsearch(row, b[j].data, b[j].n, 4u * k, cmp_tuple) != NULL;
                            if (found == (bool)keep)
                                rfx_rows_push(&want, row);
                        }
                        CU_ASSERT_EQUAL(rfx_cpu_probe_sets(&mixed, bs, nb, k, keep, false, &out, threads[t]), RFX_OK);
                        CU_ASSERT(same_rows(&out, &want));
                        CU_ASSERT_EQUAL(rfx_cpu_probe_sets(&mixed, bs, nb, k, keep, false, &mixed, threads[t]), RFX_OK);
                        CU_ASSERT(same_rows(&mixed, &want));
                        rfx_rows_free(&mixed);
                        rfx_rows_free(&want);
                        rfx_rows_free(&out);
                        rfx_rows_free(&ref);
                    }
                    rfx_rows_free(&a);
                    for (int j = 0; j < nb; j++)
                        rfx_rows_free(&b[j]);
                }
}

/* A probe against a set past a cache's size, of rows not far fewer: a's rows sorted on
 * the keys and merged, so the rows kept come in key order (compared as a bag). */
static void test_probe_large_set(void)
{
    rfx_rows b = sorted_set(4500000, 2, UNIFORM, 1u << 22), a;
    rfx_rows_init(&a, 3);
    for (size_t i = 0; i < 1200000; i++) {
        uint32_t row[3] = {(uint32_t)(rnd() % (1u << 22)), (uint32_t)(rnd() % (1u << 22)), (uint32_t)i};
        if (i % 3 == 0)   /* a third of them certainly in b */
            memcpy(row, b.data + 2 * (rnd() % b.n), sizeof(uint32_t) * 2);
        rfx_rows_push(&a, row);
    }
    const rfx_rows *bs[1] = {&b};
    for (int keep = 0; keep < 2; keep++) {
        rfx_rows want, out;
        rfx_rows_init(&want, 3);
        rfx_rows_init(&out, 3);
        cmp_a = 2;
        for (size_t i = 0; i < a.n; i++)
            if ((bsearch(a.data + 3 * i, b.data, b.n, 8, cmp_tuple) != NULL) == (bool)keep)
                rfx_rows_push(&want, a.data + 3 * i);
        rfx_rows all;   /* optional: all of a kept, in its order, where filtering costs more */
        rfx_rows_init(&all, 3);
        CU_ASSERT_EQUAL(rfx_cpu_probe_sets(&a, bs, 1, 2, keep, true, &all, 4), RFX_OK);
        CU_ASSERT(same_rows(&all, &a));
        rfx_rows_free(&all);
        CU_ASSERT_EQUAL(rfx_cpu_probe_sets(&a, bs, 1, 2, keep, false, &out, 4), RFX_OK);
        bool in_key_order = true;
        cmp_a = 2;
        for (size_t i = 1; i < out.n; i++)
            in_key_order &= cmp_tuple(out.data + 3 * (i - 1), out.data + 3 * i) <= 0;
        CU_ASSERT(in_key_order);
        ref_sort(&want);
        ref_sort(&out);
        CU_ASSERT(same_rows(&out, &want));
        rfx_rows_free(&want);
        rfx_rows_free(&out);
    }
    rfx_rows_free(&a);
    rfx_rows_free(&b);
}

static void test_intersect(void) { semijoin_case(true, UNIFORM); }
static void test_difference(void) { semijoin_case(false, UNIFORM); }
static void test_difference_zipf(void) { semijoin_case(false, ZIPF); }

/* ---- join ---------------------------------------------------------------------------- */
static rfx_rx col(int c) { return (rfx_rx){.kind = RFX_RX_COL, .prim = RFX_NUMBER, .col = c}; }

static void join_case(int k, dist d, bool with_pred)
{
    size_t jsizes[] = {0, 1, 2, 65, 1025, 40000};
    for (size_t s = 0; s < sizeof jsizes / sizeof jsizes[0]; s++)
        for (int t = 0; t < 2; t++) {
            size_t na = jsizes[s], nb = jsizes[(s + 2) % 6];
            if (k == 0) {
                na = na > 300 ? 300 : na;
                nb = nb > 200 ? 200 : nb;
            }
            uint32_t range = d == EQUAL ? 1 : (uint32_t)(na / 4 + 5);
            rfx_rows a = sorted_set(na, 2, d, range), b = sorted_set(nb, 2, d, range);
            if (d == EQUAL && a.n > 0) {
                /* all keys equal but distinct second columns: a skewed key group */
                for (size_t i = 0; i < a.n; i++) a.data[2 * i + 1] = (uint32_t)i;
            }
            rfx_rx c[4] = {col(0), col(1), col(2), col(3)};
            rfx_rx *outs[3] = {&c[1], &c[3], &c[0]};
            rfx_rx lt = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER, .op = RFX_LT, .l = &c[1], .r = &c[3]};
            rfx_rows out;
            rfx_rows_init(&out, 3);
            CU_ASSERT_EQUAL_FATAL(rfx_cpu_join(&a, &b, k, with_pred ? &lt : NULL, outs, 3, false, &out, threads[t]), RFX_OK);
            rfx_rows ref;
            rfx_rows_init(&ref, 3);
            for (size_t i = 0; i < a.n; i++)
                for (size_t j = 0; j < b.n; j++) {
                    const uint32_t *x = a.data + 2 * i, *y = b.data + 2 * j;
                    if (memcmp(x, y, 4u * k) != 0)
                        continue;
                    if (with_pred && !((int32_t)x[1] < (int32_t)y[1]))
                        continue;
                    uint32_t tup[3] = {x[1], y[1], x[0]};
                    rfx_rows_push(&ref, tup);
                }
            ref_sort(&ref);
            rfx_rows got = copy_rows(&out);
            ref_sort(&got);
            CU_ASSERT(same_rows(&got, &ref));
            if (k > 0) {   /* a probe of a's rows shuffled: the same pairs */
                rfx_rows mixed = copy_rows(&a);
                for (size_t i = mixed.n; i > 1; i--) {
                    size_t j = rnd() % i;
                    for (int c = 0; c < 2; c++) {
                        uint32_t v = mixed.data[2 * (i - 1) + c];
                        mixed.data[2 * (i - 1) + c] = mixed.data[2 * j + c];
                        mixed.data[2 * j + c] = v;
                    }
                }
                CU_ASSERT_EQUAL(rfx_cpu_probe_join(&mixed, &b, k, with_pred ? &lt : NULL, outs, 3, false, &out, threads[t]),
                                RFX_OK);
                ref_sort(&out);
                CU_ASSERT(same_rows(&out, &ref));
                rfx_rows_free(&mixed);
            }
            rfx_rows_free(&a);
            rfx_rows_free(&b);
            rfx_rows_free(&out);
            rfx_rows_free(&ref);
            rfx_rows_free(&got);
        }
}

/* A value near zero as a number or unsigned, now and then one of the type's limits. */
static uint32_t near_zero(bool is_signed)
{
    uint64_t r = rnd() % 100;
    if (r < 3)
        return is_signed ? (r == 0 ? 0x7fffffffu : 0x80000000u) : (r == 0 ? 0xffffffffu : 0xfffffff0u);
    return is_signed ? (uint32_t)(int32_t)(rnd() % 121 - 60) : (uint32_t)(rnd() % 121);
}

/* A ranged join (b sorted on its first k + 1 columns, pred bounding b's column k by a's
 * values) makes what the same join without the range does: numbers across zero and at
 * their limits, unsigned values, each bound alone or both, strict or not, either side of
 * the comparison first, k = 0 and 1, searched in order or probed. */
static void test_range_join(void)
{
    for (int round = 0; round < 160; round++) {
        bool is_signed = round % 2, probe = round % 3 == 0;
        int k = round % 4 < 2 ? 0 : 1, aa = 2;
        if (probe && k == 0)
            probe = false;
        rfx_rows a, b;
        rfx_rows_init(&a, 2);
        rfx_rows_init(&b, 2);
        size_t na = rnd() % 300, nb = rnd() % 400;
        for (size_t i = 0; i < na; i++) {
            uint32_t t[2] = {(uint32_t)(rnd() % 3), near_zero(is_signed)};
            rfx_rows_push(&a, t);
        }
        for (size_t i = 0; i < nb; i++) {
            uint32_t key = (uint32_t)(rnd() % 3), v = near_zero(is_signed);
            uint32_t t[2] = {k ? key : v, k ? v : key};
            rfx_rows_push(&b, t);
        }
        ref_sort(&a);
        ref_unique(&a);
        ref_sort(&b);
        ref_unique(&b);
        rfx_prim prim = is_signed ? RFX_NUMBER : RFX_UNSIGNED;
        rfx_rx c[4], d1 = {.kind = RFX_RX_CONST, .prim = prim, .value = (uint32_t)(rnd() % 9) - 4},
                     d2 = {.kind = RFX_RX_CONST, .prim = prim, .value = rnd() % 12};
        for (int i = 0; i < 4; i++)
            c[i] = (rfx_rx){.kind = RFX_RX_COL, .prim = prim, .col = i};
        rfx_rx lo_e = {.kind = RFX_RX_BIN, .prim = prim, .op = RFX_ADD, .l = &c[1], .r = &d1},
               hi_e = {.kind = RFX_RX_BIN, .prim = prim, .op = RFX_ADD, .l = &c[1], .r = &d2};
        int shape = (int)(rnd() % 3);   /* both bounds, the lower alone, the upper alone */
        bool lo_strict = rnd() % 2, hi_strict = rnd() % 2, flip = rnd() % 2;
        rfx_rx *y = &c[aa + k];
        rfx_rx lo = {.kind = RFX_RX_CMP, .prim = prim, .op = lo_strict ? RFX_GT : RFX_GE, .l = y, .r = &lo_e},
               hi = {.kind = RFX_RX_CMP, .prim = prim, .op = hi_strict ? RFX_LT : RFX_LE, .l = y, .r = &hi_e};
        if (flip)   /* written as `e < y`, `e >= y` */
            lo = (rfx_rx){.kind = RFX_RX_CMP, .prim = prim, .op = lo_strict ? RFX_LT : RFX_LE, .l = &lo_e, .r = y};
        rfx_rx both = {.kind = RFX_RX_AND, .prim = RFX_NUMBER, .l = &lo, .r = &hi};
        const rfx_rx *pred = shape == 0 ? &both : shape == 1 ? &lo : &hi;
        rfx_rx *outs[3] = {&c[0], &c[1], &c[3]};
        rfx_rows want, got;
        rfx_rows_init(&want, 3);
        rfx_rows_init(&got, 3);
        CU_ASSERT_EQUAL_FATAL(rfx_cpu_join(&a, &b, k, pred, outs, 3, false, &want, 2), RFX_OK);
        CU_ASSERT_EQUAL_FATAL(rfx_cpu_range_join(&a, &b, k, pred, outs, 3, false, probe, &got, 1 + round % 4), RFX_OK);
        ref_sort(&want);
        ref_sort(&got);
        CU_ASSERT(same_rows(&got, &want));
        rfx_rows_free(&a);
        rfx_rows_free(&b);
        rfx_rows_free(&want);
        rfx_rows_free(&got);
    }
}

static void test_join_k1(void) { join_case(1, UNIFORM, false); }
static void test_join_k2(void) { join_case(2, NARROW, false); }
static void test_join_pred(void) { join_case(1, UNIFORM, true); }
static void test_join_skew(void) { join_case(1, EQUAL, false); }
static void test_join_zipf(void) { join_case(1, ZIPF, true); }
static void test_product(void) { join_case(0, UNIFORM, true); }

/* A probe join's two ways past the cache's size: rows few next to b searched one by one,
 * rows not few sorted first; each the merge join's pairs over a's rows sorted. */
static void test_probe_join_large(void)
{
    rfx_rows b = sorted_set(2600000, 2, UNIFORM, 1u << 21);
    rfx_rx c[4] = {col(0), col(1), col(2), col(3)};
    rfx_rx *outs[3] = {&c[1], &c[3], &c[0]};
    const size_t nas[] = {20000, 300000};
    for (int s = 0; s < 2; s++) {
        rfx_rows a;
        rfx_rows_init(&a, 2);
        for (size_t i = 0; i < nas[s]; i++) {
            uint32_t row[2] = {(uint32_t)(rnd() % (1u << 21)), (uint32_t)i};
            rfx_rows_push(&a, row);
        }
        rfx_rows sorted = copy_rows(&a), want, got;
        ref_sort(&sorted);
        rfx_rows_init(&want, 3);
        rfx_rows_init(&got, 3);
        CU_ASSERT_EQUAL(rfx_cpu_join(&sorted, &b, 1, NULL, outs, 3, false, &want, 4), RFX_OK);
        CU_ASSERT(want.n > 0);
        for (int t = 0; t < 2; t++) {
            CU_ASSERT_EQUAL(rfx_cpu_probe_join(&a, &b, 1, NULL, outs, 3, false, &got, threads[t]), RFX_OK);
            ref_sort(&got);
            ref_sort(&want);
            CU_ASSERT(same_rows(&got, &want));
        }
        rfx_rows_free(&a);
        rfx_rows_free(&sorted);
        rfx_rows_free(&want);
        rfx_rows_free(&got);
    }
    rfx_rows_free(&b);
}

/* A small side against a large one (a thin recursion's delta against its relation), where
 * the work is searches and splits one chunk a thread: the join and the semi- and anti-join
 * against several sets give the reference's rows on 1 and 4 threads. */
static void test_small_against_large(void)
{
    rfx_rows b = sorted_set(1000000, 2, UNIFORM, 1u << 30), a, parts[3];
    rfx_rows_init(&a, 2);
    for (size_t i = 0; i < b.n; i += 500) {   /* every 500th key of b, and keys beside them */
        uint32_t hit[2] = {b.data[2 * i], (uint32_t)i}, near[2] = {b.data[2 * i] + 1, (uint32_t)i};
        rfx_rows_push(&a, hit);
        rfx_rows_push(&a, near);
    }
    ref_sort(&a);
    ref_unique(&a);
    const rfx_rows *bs[3];
    for (int j = 0; j < 3; j++) {   /* b's keys as three sorted sets, as a relation and its runs */
        rfx_rows_init(&parts[j], 1);
        for (size_t i = (size_t)j; i < b.n; i += 3)
            rfx_rows_push(&parts[j], b.data + 2 * i);
        ref_unique(&parts[j]);
        bs[j] = &parts[j];
    }
    rfx_rows join_ref, in_ref, out_ref;
    rfx_rows_init(&join_ref, 3);
    rfx_rows_init(&in_ref, 2);
    rfx_rows_init(&out_ref, 2);
    for (size_t i = 0, j = 0; i < a.n; i++) {
        const uint32_t *x = a.data + 2 * i;
        while (j < b.n && b.data[2 * j] < x[0])
            j++;
        bool found = false;
        for (size_t m = j; m < b.n && b.data[2 * m] == x[0]; m++, found = true) {
            uint32_t tup[3] = {x[1], b.data[2 * m + 1], x[0]};
            rfx_rows_push(&join_ref, tup);
        }
        rfx_rows_push(found ? &in_ref : &out_ref, x);
    }
    CU_ASSERT(join_ref.n >= a.n / 2 && out_ref.n > 0);
    rfx_rx c[4] = {col(0), col(1), col(2), col(3)};
    rfx_rx *outs[3] = {&c[1], &c[3], &c[0]};
    for (int t = 0; t < 2; t++) {
        rfx_rows out;
        rfx_rows_init(&out, 3);
        CU_ASSERT_EQUAL_FATAL(rfx_cpu_join(&a, &b, 1, NULL, outs, 3, false, &out, threads[t]), RFX_OK);
        CU_ASSERT(same_rows(&out, &join_ref));
        rfx_rows_free(&out);
        for (int keep = 0; keep < 2; keep++) {
            rfx_rows_init(&out, 2);
            CU_ASSERT_EQUAL(rfx_cpu_semijoin_sets(&a, bs, 3, 1, keep, &out, threads[t]), RFX_OK);
            CU_ASSERT(same_rows(&out, keep ? &in_ref : &out_ref));
            rfx_rows_free(&out);
        }
    }
    rfx_rows_free(&a);
    rfx_rows_free(&b);
    for (int j = 0; j < 3; j++)
        rfx_rows_free(&parts[j]);
    rfx_rows_free(&join_ref);
    rfx_rows_free(&in_ref);
    rfx_rows_free(&out_ref);
}

/* A join read as a set (only a sort with unique reads it) drops repeats as it goes: the same
 * set as the plain join's rows made a set, for two sources and for a star of three, on one
 * thread (one part, past the size at which a part drops its repeats) and several. */
static void test_join_as_set(void)
{
    /* {keys, rows a key} for two and three sources: one part past the size at which a part
     * drops its repeats (few keys), and several parts (many keys, work over a thread's) */
    const size_t shapes[2][2][2] = {{{3, 1500}, {500, 40}}, {{3, 150}, {2100, 16}}};
    for (int t = 0; t < 2; t++)
        for (int nsrc = 2; nsrc <= 3; nsrc++)
            for (int sh = 0; sh < 2; sh++) {
                size_t keys = shapes[nsrc - 2][sh][0], per = shapes[nsrc - 2][sh][1];
                /* (key, value, i): values few, so most output rows (value, value') repeat */
                rfx_rows src[3];
                for (int q = 0; q < nsrc; q++) {
                    rfx_rows_init(&src[q], 3);
                    for (size_t key = 0; key < keys; key++)
                        for (size_t i = 0; i < per; i++) {
                            uint32_t tup[3] = {(uint32_t)key, (uint32_t)((i * (q + 3) + key) % (7 + 2 * q)), (uint32_t)i};
                            rfx_rows_push(&src[q], tup);
                        }
                    ref_sort(&src[q]);
                }
                rfx_rx c[9] = {col(0), col(1), col(2), col(3), col(4), col(5), col(6), col(7), col(8)};
                rfx_rx *outs[2] = {&c[1], &c[nsrc == 2 ? 4 : 7]};
                const rfx_rows *srcs[3] = {&src[0], &src[1], &src[2]};
                rfx_rows plain, set;
                rfx_rows_init(&plain, 2);
                rfx_rows_init(&set, 2);
                CU_ASSERT_EQUAL_FATAL(rfx_cpu_star_join(srcs, nsrc, 1, NULL, NULL, outs, 2, false, &plain, threads[t]), RFX_OK);
                CU_ASSERT_EQUAL_FATAL(rfx_cpu_star_join(srcs, nsrc, 1, NULL, NULL, outs, 2, true, &set, threads[t]), RFX_OK);
                CU_ASSERT(set.n < plain.n / 100 || sh == 1);   /* many small parts: left to the sort */
                CU_ASSERT_EQUAL(rfx_cpu_sort(&plain, threads[t]), RFX_OK);
                CU_ASSERT_EQUAL(rfx_cpu_unique(&plain, threads[t]), RFX_OK);
                CU_ASSERT_EQUAL(rfx_cpu_sort(&set, threads[t]), RFX_OK);
                CU_ASSERT_EQUAL(rfx_cpu_unique(&set, threads[t]), RFX_OK);
                CU_ASSERT(plain.n > 0 && same_rows(&plain, &set));
                rfx_rows_free(&plain);
                rfx_rows_free(&set);
                for (int q = 0; q < nsrc; q++)
                    rfx_rows_free(&src[q]);
            }
}

/* Rows (key0, key1, value), sorted, no repeats: key0 in [0, k0), key1 in [0, k1), value in
 * [0, v), n drawn (repeats dropped). */
static rfx_rows keyed_rows(size_t n, uint32_t k0, uint32_t k1, uint32_t v, unsigned seed)
{
    rfx_rows r;
    rfx_rows_init(&r, 3);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        uint32_t t[3] = {(seed >> 8) % k0, (seed >> 4) % k1, (seed >> 16) % v};
        rfx_rows_push(&r, t);
    }
    ref_sort(&r);
    ref_unique(&r);
    return r;
}

/* A join read as a set whose output keeps no key column: where its rows are mostly repeats
 * (few values, many keys leading to them) it is made a group of a's values at a time, each
 * group's matches gathered as a set, so that its output is already sorted and without
 * repeats where a's columns come first (the plain join's rows would hold every repeat);
 * elsewhere it is the plain join's. Either way the same set as the plain join's rows, for
 * one and two keys, outputs in either side's order, a column taken twice, empty sides. */
static void test_join_dropping_keys(void)
{
    const int outs_k1[][4] = {{1, 4, -1}, {2, 5, -1}, {4, 1, -1}, {2, 4, 1, -1}, {5, 1, 4, -1}, {1, 1, 5, -1}};
    const int outs_k2[][4] = {{2, 5, -1}, {5, 2, -1}};
    for (int t = 0; t < 2; t++)
        for (int k = 1; k <= 2; k++)
            for (int regime = 0; regime < 4; regime++) {
                /* 0: mostly repeats (5,000 rows a side over 20 keys, few values); 1: random rows;
                 * 2, 3: an empty side */
                size_t na = regime == 2 ? 0 : regime == 1 ? 40000 : 5000, nb = regime == 3 ? 0 : regime == 1 ? 30000 : 5000;
                uint32_t k0 = regime == 1 ? 5003 : k == 1 ? 20 : 10, k1 = k == 1 || regime == 1 ? 20 : 2,
                         v = regime == 1 ? 5003 : k == 1 ? 20 : 200;
                rfx_rows a = keyed_rows(na, k0, k1, v, 7u + (unsigned)k), b = keyed_rows(nb, k0, k1, v, 11u + (unsigned)k);
                int nvar = k == 1 ? 6 : 2;
                for (int o = 0; o < nvar; o++) {
                    const int *oc = k == 1 ? outs_k1[o] : outs_k2[o];
                    rfx_rx c[6] = {col(0), col(1), col(2), col(3), col(4), col(5)};
                    rfx_rx *outs[3];
                    int nout = 0;
                    while (oc[nout] >= 0)
                        outs[nout] = &c[oc[nout]], nout++;
                    rfx_rows plain, set;
                    rfx_rows_init(&plain, nout);
                    rfx_rows_init(&set, nout);
                    CU_ASSERT_EQUAL_FATAL(rfx_cpu_join(&a, &b, k, NULL, outs, nout, false, &plain, threads[t]), RFX_OK);
                    CU_ASSERT_EQUAL_FATAL(rfx_cpu_join(&a, &b, k, NULL, outs, nout, true, &set, threads[t]), RFX_OK);
                    bool a_first = true;   /* every column of a's before b's */
                    for (int x = 1; x < nout; x++)
                        a_first &= !(oc[x] < 3 && oc[x - 1] >= 3);
                    if (regime == 0 && a_first)   /* made by groups: sorted, no repeats */
                        CU_ASSERT(rfx_cpu_is_set(&set) && set.n * 4 < plain.n);
                    CU_ASSERT_EQUAL(rfx_cpu_sort(&plain, threads[t]), RFX_OK);
                    CU_ASSERT_EQUAL(rfx_cpu_unique(&plain, threads[t]), RFX_OK);
                    CU_ASSERT_EQUAL(rfx_cpu_sort(&set, threads[t]), RFX_OK);
                    CU_ASSERT_EQUAL(rfx_cpu_unique(&set, threads[t]), RFX_OK);
                    CU_ASSERT(same_rows(&plain, &set));
                    CU_ASSERT(plain.n > 0 || regime >= 2);
                    /* with a test of a's rows alone (a star join's pre): a's third column under v / 2 */
                    rfx_rx half = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER, .value = v / 2};
                    rfx_rx pre = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER, .op = RFX_LT, .l = &c[2], .r = &half};
                    const rfx_rows *srcs[2] = {&a, &b};
                    rfx_rows pplain, pset;
                    rfx_rows_init(&pplain, nout);
                    rfx_rows_init(&pset, nout);
                    CU_ASSERT_EQUAL_FATAL(rfx_cpu_star_join(srcs, 2, k, &pre, NULL, outs, nout, false, &pplain, threads[t]), RFX_OK);
                    CU_ASSERT_EQUAL_FATAL(rfx_cpu_star_join(srcs, 2, k, &pre, NULL, outs, nout, true, &pset, threads[t]), RFX_OK);
                    CU_ASSERT_EQUAL(rfx_cpu_sort(&pplain, threads[t]), RFX_OK);
                    CU_ASSERT_EQUAL(rfx_cpu_unique(&pplain, threads[t]), RFX_OK);
                    CU_ASSERT_EQUAL(rfx_cpu_sort(&pset, threads[t]), RFX_OK);
                    CU_ASSERT_EQUAL(rfx_cpu_unique(&pset, threads[t]), RFX_OK);
                    CU_ASSERT(same_rows(&pplain, &pset));
                    CU_ASSERT(pplain.n <= plain.n);
                    rfx_rows_free(&pplain);
                    rfx_rows_free(&pset);
                    rfx_rows_free(&plain);
                    rfx_rows_free(&set);
                }
                rfx_rows_free(&a);
                rfx_rows_free(&b);
            }
}

/* A join read as a set whose output reads the first source alone stops each row at its
 * first passing match (an existential join), its group searched where a witness is likelier
 * first (larger values of b for a < b, smaller for a > b, as signed numbers or unsigned):
 * the same set as the whole join's, with keys (groups of thousands, every row dominated or
 * not, values of both signs) and without (a product); and where the predicate divides,
 * every pair is still tested, so a division by zero is reported. */
static void test_join_first_match(void)
{
    for (int t = 0; t < 2; t++)
        for (int v = 0; v < 6; v++) {
            int k = v % 2;
            rfx_cmpop op = v < 4 ? RFX_LT : RFX_GT;
            rfx_prim prim = v % 4 < 2 ? RFX_NUMBER : RFX_UNSIGNED;
            rfx_rows a, b;
            rfx_rows_init(&a, 2);
            rfx_rows_init(&b, 2);
            for (uint32_t key = 0; key < 3; key++)
                for (uint32_t i = 0; i < (k ? 3000u : 60u); i++) {   /* values -2500..2502 */
                    uint32_t ta[2] = {key, (i * 7919u) % 5003u - 2500u}, tb[2] = {key, (i * 104729u) % 4999u - 2500u};
                    rfx_rows_push(&a, ta);
                    rfx_rows_push(&b, tb);
                }
            uint32_t zero[2] = {2, 4998};   /* the divisor's zero below, in the last group */
            rfx_rows_push(&b, zero);
            ref_sort(&a);
            ref_sort(&b);
            rfx_rx c[4] = {col(0), col(1), col(2), col(3)};
            rfx_rx lt = {.kind = RFX_RX_CMP, .prim = prim, .op = op, .l = &c[1], .r = &c[3]};
            rfx_rx *outs[2] = {&c[0], &c[1]};
            rfx_rows plain, first;
            rfx_rows_init(&plain, 2);
            rfx_rows_init(&first, 2);
            CU_ASSERT_EQUAL_FATAL(rfx_cpu_join(&a, &b, k, &lt, outs, 2, false, &plain, threads[t]), RFX_OK);
            CU_ASSERT_EQUAL_FATAL(rfx_cpu_join(&a, &b, k, &lt, outs, 2, true, &first, threads[t]), RFX_OK);
            CU_ASSERT(first.n <= a.n && first.n < plain.n);   /* one row a witness at most */
            if (!(first.n <= a.n && first.n < plain.n))
                fprintf(stderr, "\n    variant %d: %zu rows of %zu, the whole join %zu", v, first.n, a.n, plain.n);
            CU_ASSERT_EQUAL(rfx_cpu_sort(&plain, threads[t]), RFX_OK);
            CU_ASSERT_EQUAL(rfx_cpu_unique(&plain, threads[t]), RFX_OK);
            CU_ASSERT_EQUAL(rfx_cpu_sort(&first, threads[t]), RFX_OK);
            CU_ASSERT_EQUAL(rfx_cpu_unique(&first, threads[t]), RFX_OK);
            CU_ASSERT(plain.n > 0 && same_rows(&plain, &first));
            /* $1 < 100 / ($3 - 4998): the pair with $3 = 4998 divides by zero, whatever came first */
            rfx_rx k4998 = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER, .value = 4998},
                   k100 = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER, .value = 100},
                   d = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_SUB, .l = &c[3], .r = &k4998},
                   q = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_DIV, .l = &k100, .r = &d},
                   lt_q = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER, .op = RFX_LT, .l = &c[1], .r = &q};
            CU_ASSERT_EQUAL(rfx_cpu_join(&a, &b, k, &lt_q, outs, 2, true, &first, threads[t]), RFX_ERR_DIV0);
            rfx_rows_free(&a);
            rfx_rows_free(&b);
            rfx_rows_free(&plain);
            rfx_rows_free(&first);
        }
}

/* A two-source star join tests pre (over the first source's row) once a row, before its
 * matches: the rows of the join under pre and pred together, and a division by zero in
 * pre reported for a row with matches only (a row without any is never tested). */
static void test_star_join_pre(void)
{
    rfx_rows a, b;
    rfx_rows_init(&a, 2);
    rfx_rows_init(&b, 2);
    for (uint32_t key = 0; key < 50; key++)
        for (uint32_t i = 0; i < 40; i++) {
            uint32_t ta[2] = {key, i}, tb[2] = {key + 1, (i * 13u) % 40u};   /* key 0 has no match */
            rfx_rows_push(&a, ta);
            rfx_rows_push(&b, tb);
        }
    ref_sort(&a);
    ref_sort(&b);
    rfx_rx c[4] = {col(0), col(1), col(2), col(3)}, k3 = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER, .value = 3};
    rfx_rx pre = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER, .op = RFX_LT, .l = &c[1], .r = &k3},
           pred = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER, .op = RFX_LT, .l = &c[1], .r = &c[3]},
           both = {.kind = RFX_RX_AND, .l = &pre, .r = &pred};
    rfx_rx *outs[3] = {&c[0], &c[1], &c[3]};
    const rfx_rows *srcs[2] = {&a, &b};
    for (int t = 0; t < 2; t++) {
        rfx_rows star, plain;
        rfx_rows_init(&star, 3);
        rfx_rows_init(&plain, 3);
        CU_ASSERT_EQUAL(rfx_cpu_star_join(srcs, 2, 1, &pre, &pred, outs, 3, false, &star, threads[t]), RFX_OK);
        CU_ASSERT_EQUAL(rfx_cpu_join(&a, &b, 1, &both, outs, 3, false, &plain, threads[t]), RFX_OK);
        ref_sort(&star);
        ref_sort(&plain);
        CU_ASSERT(plain.n > 0 && same_rows(&star, &plain));
        /* 1 / $0: zero only on key 0's rows, which meet no match */
        rfx_rx one = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER, .value = 1},
               div = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_DIV, .l = &one, .r = &c[0]},
               pre_div = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER, .op = RFX_GE, .l = &div, .r = &c[1]};
        CU_ASSERT_EQUAL(rfx_cpu_star_join(srcs, 2, 1, &pre_div, NULL, outs, 3, false, &star, threads[t]), RFX_OK);
        const rfx_rows *flipped[2] = {&b, &a};   /* now the rows of a divide, with matches */
        rfx_rx div_b = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_DIV, .l = &one, .r = &c[1]},
               pre_b = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER, .op = RFX_GE, .l = &div_b, .r = &c[0]};
        CU_ASSERT_EQUAL(rfx_cpu_star_join(flipped, 2, 1, &pre_b, NULL, outs, 3, false, &star, threads[t]),
                        RFX_ERR_DIV0);
        rfx_rows_free(&star);
        rfx_rows_free(&plain);
    }
    rfx_rows_free(&a);
    rfx_rows_free(&b);
}

/* ---- map / filter -------------------------------------------------------------------- */
static void test_mapfilter(void)
{
    for (size_t s = 0; s < NSIZES; s++)
        for (int t = 0; t < 2; t++) {
            rfx_rows a = random_rows(sizes[s], 2, WIDE, 0);
            rfx_rx c0 = col(0), c1 = col(1);
            rfx_rx sum = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_ADD, .l = &c0, .r = &c1};
            rfx_rx gt = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER, .op = RFX_GT, .l = &c0, .r = &c1};
            rfx_rx *outs[2] = {&sum, &c1};
            rfx_rows out;
            rfx_rows_init(&out, 2);
            CU_ASSERT_EQUAL(rfx_cpu_mapfilter(&a, &gt, outs, 2, &out, threads[t]), RFX_OK);
            rfx_rows ref;
            rfx_rows_init(&ref, 2);
            for (size_t i = 0; i < a.n; i++) {
                uint32_t x = a.data[2 * i], y = a.data[2 * i + 1];
                if ((int32_t)x > (int32_t)y) {
                    uint32_t tup[2] = {x + y, y};   /* wrapping addition */
                    rfx_rows_push(&ref, tup);
                }
            }
            CU_ASSERT(same_rows(&out, &ref));
            rfx_rows_free(&a);
            rfx_rows_free(&out);
            rfx_rows_free(&ref);
        }
}

static void test_div_zero(void)
{
    rfx_rows a = random_rows(100, 2, NARROW, 4);
    a.data[11] = 0;
    rfx_rx c0 = col(0), c1 = col(1);
    rfx_rx q = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_DIV, .l = &c0, .r = &c1};
    rfx_rx *outs[1] = {&q};
    rfx_rows out;
    rfx_rows_init(&out, 1);
    CU_ASSERT_EQUAL(rfx_cpu_mapfilter(&a, NULL, outs, 1, &out, 1), RFX_ERR_DIV0);
    rfx_rows_free(&a);
    rfx_rows_free(&out);
}

static void test_arith_semantics(void)
{
    rfx_rx a = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER, .value = 0x80000000u};
    rfx_rx m1 = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER, .value = 0xFFFFFFFFu};
    rfx_rx div = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_DIV, .l = &a, .r = &m1};
    rfx_rx mod = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_MOD, .l = &a, .r = &m1};
    rfx_rx add = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_ADD, .l = &a, .r = &m1};
    bool d0 = false;
    CU_ASSERT_EQUAL(rfx_rx_eval(&div, NULL, 0, NULL, &d0), 0x80000000u);    /* INT_MIN / -1 wraps */
    CU_ASSERT_EQUAL(rfx_rx_eval(&mod, NULL, 0, NULL, &d0), 0u);
    CU_ASSERT_EQUAL(rfx_rx_eval(&add, NULL, 0, NULL, &d0), 0x7FFFFFFFu);    /* INT_MIN + -1 wraps */
    CU_ASSERT_FALSE(d0);
    rfx_rx seven = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER, .value = (uint32_t)-7};
    rfx_rx two = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER, .value = 2};
    rfx_rx d = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_DIV, .l = &seven, .r = &two};
    rfx_rx m = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_MOD, .l = &seven, .r = &two};
    CU_ASSERT_EQUAL((int32_t)rfx_rx_eval(&d, NULL, 0, NULL, &d0), -3);      /* truncation, as C and Souffle */
    CU_ASSERT_EQUAL((int32_t)rfx_rx_eval(&m, NULL, 0, NULL, &d0), -1);
    rfx_rx u7 = {.kind = RFX_RX_CONST, .prim = RFX_UNSIGNED, .value = 7};
    rfx_rx ucmp = {.kind = RFX_RX_CMP, .prim = RFX_UNSIGNED, .op = RFX_LT, .l = &u7, .r = &m1};
    rfx_rx scmp = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER, .op = RFX_LT, .l = &u7, .r = &m1};
    CU_ASSERT_EQUAL(rfx_rx_eval(&ucmp, NULL, 0, NULL, &d0), 1);
    CU_ASSERT_EQUAL(rfx_rx_eval(&scmp, NULL, 0, NULL, &d0), 0);
}

/* Soufflé's bitwise, shift, logical and power operators and min / max (rx_ops.h). */
static void test_bitwise_semantics(void)
{
    static const struct {
        int op, prim;
        uint32_t a, b, want;
    } cases[] = {
        {RFX_BAND, RFX_NUMBER, 0xFFFFFFF9u, 33, 33},
        {RFX_BOR, RFX_UNSIGNED, 0xF0u, 0x0Fu, 0xFFu},
        {RFX_BXOR, RFX_NUMBER, 0x80000000u, 0xFFFFFFFFu, 0x7FFFFFFFu},
        {RFX_BSHL, RFX_NUMBER, 1, 33, 2},                       /* counts modulo 32 */
        {RFX_BSHL, RFX_NUMBER, 1, 32, 1},
        {RFX_BSHL, RFX_NUMBER, 0xFFFFFFF9u, 0xFFFFFFF9u, 0xF2000000u},   /* -7 << (-7 & 31) */
        {RFX_BSHR, RFX_NUMBER, 0x80000000u, 31, 0xFFFFFFFFu},   /* arithmetic on numbers */
        {RFX_BSHR, RFX_UNSIGNED, 0x80000000u, 31, 1},           /* logical on unsigned */
        {RFX_BSHRU, RFX_NUMBER, 0x80000000u, 31, 1},
        {RFX_BSHR, RFX_NUMBER, 0xFFFFFFF9u, 1, 0xFFFFFFFCu},    /* -7 >> 1 = -4 */
        {RFX_LAND, RFX_NUMBER, 0xFFFFFFFFu, 2, 1},
        {RFX_LAND, RFX_NUMBER, 0, 2, 0},
        {RFX_LOR, RFX_UNSIGNED, 0, 0, 0},
        {RFX_LOR, RFX_UNSIGNED, 0, 9, 1},
        {RFX_LXOR, RFX_NUMBER, 5, 6, 0},
        {RFX_LXOR, RFX_NUMBER, 0, 6, 1},
        {RFX_POW, RFX_NUMBER, 3, 5, 243},
        {RFX_POW, RFX_NUMBER, 0xFFFFFFF9u, 3, (uint32_t)-343},
        {RFX_POW, RFX_NUMBER, 2, 32, 0x80000000u},              /* past 32 bits: as x86 casts pow */
        {RFX_POW, RFX_NUMBER, 2000, 3, 0x80000000u},
        {RFX_POW, RFX_NUMBER, 46340, 2, 2147395600u},
        {RFX_POW, RFX_NUMBER, 46341, 2, 0x80000000u},
        {RFX_POW, RFX_NUMBER, 0xFFFFFFFEu, 31, 0x80000000u},    /* (-2)^31, in range */
        {RFX_POW, RFX_NUMBER, 0xFFFFFFFDu, 21, 0x80000000u},    /* (-3)^21, not */
        {RFX_POW, RFX_NUMBER, 7, 0, 1},
        {RFX_POW, RFX_NUMBER, 0, 0, 1},
        {RFX_POW, RFX_NUMBER, 2, 0xFFFFFFFFu, 0},               /* 2^-1 truncated */
        {RFX_POW, RFX_NUMBER, 0xFFFFFFFFu, 0xFFFFFFFDu, 0xFFFFFFFFu},   /* (-1)^-3 */
        {RFX_POW, RFX_NUMBER, 0xFFFFFFFFu, 0xFFFFFFFEu, 1},     /* (-1)^-2 */
        {RFX_POW, RFX_NUMBER, 1, 0x80000000u, 1},
        {RFX_POW, RFX_NUMBER, 0, 0xFFFFFFFFu, 0x80000000u},     /* 0^-1: infinite */
        {RFX_POW, RFX_UNSIGNED, 3, 0xFFFFFFFFu, 0},             /* an unsigned exponent; past 2^63 */
        {RFX_POW, RFX_UNSIGNED, 100000, 3, 2764472320u},        /* 10^15's low word */
        {RFX_POW, RFX_UNSIGNED, 65536, 2, 0},
        {RFX_POW, RFX_UNSIGNED, 0xFFFFFFFFu, 2, 0},
        {RFX_POW, RFX_UNSIGNED, 10321, 4, 696743746u},          /* past 2^53: pow's rounding */
        {RFX_MIN_OF, RFX_NUMBER, 0xFFFFFFFFu, 1, 0xFFFFFFFFu},
        {RFX_MIN_OF, RFX_UNSIGNED, 0xFFFFFFFFu, 1, 1},
        {RFX_MAX_OF, RFX_NUMBER, 0x80000000u, 0x7FFFFFFFu, 0x7FFFFFFFu},
        {RFX_MAX_OF, RFX_UNSIGNED, 0x80000000u, 0x7FFFFFFFu, 0x80000000u},
        {RFX_MIN_OF, RFX_FLOAT, 0x3FC00000u, 0xC0200000u, 0xC0200000u},  /* min(1.5, -2.5) */
        {RFX_MAX_OF, RFX_FLOAT, 0x3FC00000u, 0x7FC00000u, 0x3FC00000u},  /* a NaN second: the first */
        {RFX_MIN_OF, RFX_FLOAT, 0x7FC00000u, 0x3FC00000u, 0x7FC00000u},  /* a NaN first stays */
        {RFX_MIN_OF, RFX_FLOAT, 0x80000000u, 0x00000000u, 0x80000000u},  /* -0.0 and 0.0: the first */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rfx_rx l = {.kind = RFX_RX_CONST, .prim = (rfx_prim)cases[i].prim, .value = cases[i].a};
        rfx_rx r = {.kind = RFX_RX_CONST, .prim = (rfx_prim)cases[i].prim, .value = cases[i].b};
        rfx_rx e = {.kind = RFX_RX_BIN, .prim = (rfx_prim)cases[i].prim, .op = cases[i].op, .l = &l, .r = &r};
        bool d0 = false;
        uint32_t got = rfx_rx_eval(&e, NULL, 0, NULL, &d0);
        if (got != cases[i].want || d0)
            fprintf(stderr, "case %zu: %s gave 0x%x, expected 0x%x\n", i, rfx_binop_str((rfx_binop)cases[i].op), got,
                    cases[i].want);
        CU_ASSERT_EQUAL(got, cases[i].want);
        CU_ASSERT_FALSE(d0);
    }
}

/* number64, unsigned64 and float64 (rx_ops.h): the 32-bit rules at 64 bits, and the
 * conversions between widths and kinds. */
/* ---- expressions by batches: the row-by-row evaluation's values and failures ------------ */
static rfx_rx *random_rx(rfx_rx *pool, int *used, int depth, rfx_fn_env *env)
{
    static const rfx_prim prims[] = {RFX_NUMBER, RFX_UNSIGNED, RFX_FLOAT, RFX_NUMBER64, RFX_UNSIGNED64, RFX_FLOAT64};
    rfx_rx *e = &pool[(*used)++];
    memset(e, 0, sizeof *e);
    int kind = depth <= 0 ? (int)(rnd() % 2) : (int)(rnd() % 10);
    e->prim = prims[rnd() % 6];
    switch (kind) {
    case 0: e->kind = RFX_RX_COL; e->col = (int)(rnd() % 5); break;
    case 1: e->kind = RFX_RX_CONST; e->value = rnd() % 3 ? rnd() % 7 : rnd(); break;
    case 2: case 3:
        e->kind = RFX_RX_BIN;
        e->op = (int)(rnd() % (RFX_MAX_OF + 1));
        e->env = rnd() % 4 == 0 && e->op <= RFX_MUL ? env : NULL;   /* a decimal's checked arithmetic */
        break;
    case 4: e->kind = RFX_RX_NEG; break;
    case 5:
        e->kind = RFX_RX_CMP;
        e->op = (int)(rnd() % 6);
        if (rnd() % 4 == 0) {
            e->prim = RFX_DECIMAL;
            e->col = (int)(rnd() % 7) - 3;
        }
        break;
    case 6: e->kind = RFX_RX_AND; break;
    case 7: e->kind = rnd() % 2 ? RFX_RX_PAIR : RFX_RX_HALF; e->op = (int)(rnd() % 2); break;
    case 8:
        e->kind = RFX_RX_CONV;
        e->col = (int)(rnd() % 4), e->op = (int)(rnd() % 4);
        e->env = rnd() % 2 ? env : NULL;
        break;
    default: e->kind = RFX_RX_CAL; e->op = (int)(rnd() % 4); e->prim = RFX_NUMBER; break;
    }
    if (kind >= 2) {
        e->l = random_rx(pool, used, depth - 1, env);
        if (e->kind != RFX_RX_NEG && e->kind != RFX_RX_HALF && e->kind != RFX_RX_CONV &&
            (e->kind != RFX_RX_CAL || e->op == RFX_CAL_ADD_MONTHS))
            e->r = random_rx(pool, used, depth - 1, env);
    }
    return e;
}

static void test_rx_batches(void)
{
    rfx_fn_env *env = rfx_fn_env_new(NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(env);
    enum { N = 300, A = 5 };
    static uint32_t rows[N * A];
    unsigned char live[N];
    uint64_t got[N];
    int bad = 0;
    for (int round = 0; round < 3000 && bad < 5; round++) {
        rfx_rx pool[200];
        int used = 0;
        rfx_rx *e = random_rx(pool, &used, 1 + (int)(rnd() % 6), env);
        for (int i = 0; i < N * A; i++)
            rows[i] = rnd() % 3 ? (uint32_t)(rnd() % 9) : (uint32_t)rnd();
        for (int i = 0; i < N; i++)
            live[i] = rnd() % 4 != 0;
        CU_ASSERT_FATAL(rfx_rx_batchable(e));
        bool fail = false, want_fail = false;
        for (int at = 0; at < N; at += RFX_RX_BATCH) {
            int n = N - at < RFX_RX_BATCH ? N - at : RFX_RX_BATCH;
            rfx_rx_eval_batch(e, rows + (size_t)at * A, A, n, live + at, got + at, &fail);
        }
        for (int i = 0; i < N; i++) {
            bool d = false;
            uint64_t want = rfx_rx_eval64(e, rows + (size_t)i * A, A, NULL, &d);
            want_fail |= d && live[i];
            if (want != got[i]) {
                bad++;
                CU_FAIL("a batch's value differs from the row's");
                break;
            }
        }
        if (want_fail != fail) {
            bad++;
            CU_FAIL("a batch's failure differs from the rows'");
        }
    }
    rfx_rx fn = {.kind = RFX_RX_FN};
    CU_ASSERT(!rfx_rx_batchable(&fn));
    rfx_fn_env_free(env);
}

static void test_wide_semantics(void)
{
    static const struct {
        int op, prim;
        uint64_t a, b, want;
    } cases[] = {
        {RFX_ADD, RFX_NUMBER64, 0x7FFFFFFFFFFFFFFFull, 1, 0x8000000000000000ull},   /* wraps */
        {RFX_MUL, RFX_NUMBER64, 3000000000ull, 3000000000ull, 9000000000000000000ull},
        {RFX_DIV, RFX_NUMBER64, 0x8000000000000000ull, (uint64_t)-1, 0x8000000000000000ull},
        {RFX_MOD, RFX_NUMBER64, 0x8000000000000000ull, (uint64_t)-1, 0},
        {RFX_DIV, RFX_NUMBER64, (uint64_t)-7, 2, (uint64_t)-3},                   /* truncates */
        {RFX_DIV, RFX_UNSIGNED64, (uint64_t)-7, 2, 0x7FFFFFFFFFFFFFFCull},
        {RFX_BSHL, RFX_NUMBER64, 1, 65, 2},                                      /* counts modulo 64 */
        {RFX_BSHR, RFX_NUMBER64, 0x8000000000000000ull, 63, (uint64_t)-1},
        {RFX_BSHR, RFX_UNSIGNED64, 0x8000000000000000ull, 63, 1},
        {RFX_POW, RFX_NUMBER64, 10, 18, 1000000000000000000ull},
        {RFX_MIN_OF, RFX_NUMBER64, (uint64_t)-1, 1, (uint64_t)-1},
        {RFX_MIN_OF, RFX_UNSIGNED64, (uint64_t)-1, 1, 1},
        {RFX_ADD, RFX_FLOAT64, 0x3FF8000000000000ull, 0x4004000000000000ull, 0x4010000000000000ull},   /* 1.5 + 2.5 */
        {RFX_SUB, RFX_FLOAT64, 0x7FF0000000000000ull, 0x7FF0000000000000ull, 0x7FF8000000000000ull},   /* inf - inf */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rfx_rx l = {.kind = RFX_RX_CONST, .prim = (rfx_prim)cases[i].prim, .value = cases[i].a};
        rfx_rx r = {.kind = RFX_RX_CONST, .prim = (rfx_prim)cases[i].prim, .value = cases[i].b};
        rfx_rx e = {.kind = RFX_RX_BIN, .prim = (rfx_prim)cases[i].prim, .op = cases[i].op, .l = &l, .r = &r};
        bool d0 = false;
        uint64_t got = rfx_rx_eval64(&e, NULL, 0, NULL, &d0);
        if (got != cases[i].want)
            fprintf(stderr, "case %zu: %s gave 0x%llx\n", i, rfx_binop_str((rfx_binop)cases[i].op), (unsigned long long)got);
        CU_ASSERT_EQUAL(got, cases[i].want);
        CU_ASSERT_FALSE(d0);
    }
    /* a value of two words from a tuple, compared, halved, converted */
    uint32_t t[2] = {0xFFFFFFFFu, 0xFFFFFFF9u};   /* -7 */
    rfx_rx hi = {.kind = RFX_RX_COL, .prim = RFX_WORD, .col = 0}, lo = {.kind = RFX_RX_COL, .prim = RFX_WORD, .col = 1};
    rfx_rx pair = {.kind = RFX_RX_PAIR, .prim = RFX_NUMBER64, .l = &hi, .r = &lo};
    rfx_rx zero = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER64, .value = 0};
    rfx_rx lt = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER64, .op = RFX_LT, .l = &pair, .r = &zero};
    rfx_rx ult = {.kind = RFX_RX_CMP, .prim = RFX_UNSIGNED64, .op = RFX_LT, .l = &pair, .r = &zero};
    rfx_rx half = {.kind = RFX_RX_HALF, .prim = RFX_WORD, .op = 1, .l = &pair};
    rfx_rx f = {.kind = RFX_RX_CONV, .prim = RFX_FLOAT64, .l = &pair};
    rfx_rx n = {.kind = RFX_RX_CONV, .prim = RFX_NUMBER, .l = &pair};
    bool d0 = false;
    CU_ASSERT_EQUAL(rfx_rx_eval(&lt, t, 2, NULL, &d0), 1);
    CU_ASSERT_EQUAL(rfx_rx_eval(&ult, t, 2, NULL, &d0), 0);
    CU_ASSERT_EQUAL(rfx_rx_eval(&half, t, 2, NULL, &d0), 0xFFFFFFF9u);
    CU_ASSERT_EQUAL(rfx_rx_eval64(&f, t, 2, NULL, &d0), 0xC01C000000000000ull);   /* -7.0 */
    CU_ASSERT_EQUAL(rfx_rx_eval(&n, t, 2, NULL, &d0), 0xFFFFFFF9u);
    CU_ASSERT_EQUAL(rfx_convert(RFX_NUMBER, RFX_NUMBER64, 0xFFFFFFF9u), (uint64_t)-7);      /* sign-extended */
    CU_ASSERT_EQUAL(rfx_convert(RFX_UNSIGNED, RFX_UNSIGNED64, 0xFFFFFFF9u), 0xFFFFFFF9u);  /* zero-extended */
    CU_ASSERT_EQUAL(rfx_convert(RFX_FLOAT64, RFX_NUMBER64, 0x43F0000000000000ull), 0);     /* 2^64: out of range */
    CU_ASSERT_EQUAL(rfx_convert(RFX_FLOAT64, RFX_UNSIGNED64, 0x43E0000000000000ull), 0x8000000000000000ull);
    CU_ASSERT_FALSE(d0);
}

/* Dates: every day from 1600-01-01 to 2400-12-31 walked with a plain calendar agrees with
 * the day numbers, both texts and the parts; add_months keeps the day or takes the last. */
static void test_dates(void)
{
    int y = 1600, m = 1, d = 1;
    int32_t day = -135140;   /* 1600-01-01 */
    bool ok = true;
    for (; y <= 2400; day++) {
        char want[16], got[32];
        snprintf(want, sizeof want, "%04d-%02d-%02d", y, m, d);
        uint32_t parsed = 0;
        ok &= rfx_date_parse(want, strlen(want), &parsed) && parsed == (uint32_t)day;
        rfx_date_format(got, sizeof got, (uint32_t)day);
        ok &= strcmp(got, want) == 0;
        ok &= rfx_calendar(RFX_CAL_YEAR, (uint32_t)day, 0) == (uint32_t)y &&
              rfx_calendar(RFX_CAL_MONTH, (uint32_t)day, 0) == (uint32_t)m &&
              rfx_calendar(RFX_CAL_DAY, (uint32_t)day, 0) == (uint32_t)d;
        bool leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
        int dim = m == 2 ? 28 + leap : m == 4 || m == 6 || m == 9 || m == 11 ? 30 : 31;
        if (++d > dim)
            d = 1, m++;
        if (m > 12)
            m = 1, y++;
    }
    CU_ASSERT(ok);
    uint32_t jan31, feb29, x;
    CU_ASSERT_FATAL(rfx_date_parse("2000-01-31", 10, &jan31) && rfx_date_parse("2000-02-29", 10, &feb29));
    CU_ASSERT_EQUAL(rfx_calendar(RFX_CAL_ADD_MONTHS, jan31, 1), feb29);   /* past the month's end: its last day */
    CU_ASSERT(rfx_date_parse("1999-02-28", 10, &x) && rfx_calendar(RFX_CAL_ADD_MONTHS, jan31, (uint32_t)-11) == x);
    CU_ASSERT(rfx_date_parse("1999-12-29", 10, &x) && rfx_calendar(RFX_CAL_ADD_MONTHS, feb29, (uint32_t)-2) == x);
    CU_ASSERT(rfx_date_parse("2100-02-28", 10, &x) && rfx_calendar(RFX_CAL_ADD_MONTHS, jan31, 1201) == x);
    const char *bad[] = {"1999-02-29", "2000-13-01", "2000-00-10", "2000-1-1x", "20000101", "", "-", "1900-02-29"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CU_ASSERT_FALSE(rfx_date_parse(bad[i], strlen(bad[i]), &x));
}

/* LIKE by its definition, for ASCII texts (`_` one byte). */
static bool like_reference(const char *p, const char *s)
{
    if (!*p)
        return !*s;
    if (*p == '%')
        return like_reference(p + 1, s) || (*s && like_reference(p, s + 1));
    return *s && (*p == '_' || *p == *s) && like_reference(p + 1, s + 1);
}

/* SQL's LIKE (the symbol functor like()): listed cases, then random patterns over a, b, %
 * and _ against random texts over a and b (patterns without `_` take the texts-between-%
 * path), against the definition. */
static void test_like(void)
{
    static const struct {
        const char *p, *s;
        bool want;
    } cases[] = {
        {"", "", true},          {"%", "", true},         {"_", "", false},          {"%%", "x", true},
        {"a%b%c", "aXbYc", true}, {"a%b%c", "abcb", false}, {"_%_", "ab", true},      {"_%_", "a", false},
        {"%green%", "forest green", true}, {"%green%", "gren", false}, {"PROMO%", "PROMO BRUSHED", true},
        {"G_te", "G\xc3\xb6te", true}, {"G__te", "G\xc3\xb6te", false}, {"%a%a%a", "aaaa", true},
        {"%a%a%a", "aab", false}, {"100%", "100%", true}, {"a", "A", false},
    };
    rfx_symtab *t = rfx_symtab_new();
    rfx_fn_env *env = rfx_fn_env_new(t);
    CU_ASSERT_FATAL(t && env);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        uint32_t a[2] = {rfx_symtab_intern(t, cases[i].p, strlen(cases[i].p)),
                         rfx_symtab_intern(t, cases[i].s, strlen(cases[i].s))};
        bool failed = false;
        uint32_t got = rfx_fn_apply(env, RFX_FX_LIKE, a, 2, &failed);
        if (got != cases[i].want)
            fprintf(stderr, "like(\"%s\", \"%s\") gave %u\n", cases[i].p, cases[i].s, got);
        CU_ASSERT_EQUAL(got, cases[i].want);
        CU_ASSERT_FALSE(failed);
    }
    uint64_t r = 0x5eed;
    for (int i = 0; i < 20000; i++) {
        char pat[9], text[9];
        int np = (int)((r = rfx_mix64(r)) % 9), nt = (int)((r = rfx_mix64(r)) % 9);
        for (int k = 0; k < np; k++)
            pat[k] = "ab%%_"[(r = rfx_mix64(r)) % (i % 2 ? 4 : 5)];   /* every other without `_` */
        for (int k = 0; k < nt; k++)
            text[k] = "ab"[(r = rfx_mix64(r)) % 2];
        pat[np] = text[nt] = 0;
        uint32_t a[2] = {rfx_symtab_intern(t, pat, (size_t)np), rfx_symtab_intern(t, text, (size_t)nt)};
        bool failed = false;
        uint32_t got = rfx_fn_apply(env, RFX_FX_LIKE, a, 2, &failed);
        if (got != (uint32_t)like_reference(pat, text))
            fprintf(stderr, "like(\"%s\", \"%s\") gave %u\n", pat, text, got);
        CU_ASSERT_EQUAL(got, (uint32_t)like_reference(pat, text));
    }
    rfx_fn_env_free(env);
    rfx_symtab_free(t);
}

/* rfx_fn_env_make_symbols (the host's part of symbols made on the device): each tuple's
 * symbol is the one rfx_fn_apply makes of it, the texts the table lacked are added in their
 * byte order (repeats once), the table's own kept. */
static void test_make_symbols(void)
{
    rfx_symtab *t = rfx_symtab_new(), *u = rfx_symtab_new();
    rfx_fn_env *env = rfx_fn_env_new(t), *one = rfx_fn_env_new(u);
    CU_ASSERT_FATAL(t && u && env && one);
    const char *words[] = {"zeta", "alpha-beta", "", "13-555", "\xc3\xa9t\xc3\xa9"};
    uint32_t w[5], wu[5];
    for (int i = 0; i < 5; i++) {
        w[i] = rfx_symtab_intern(t, words[i], strlen(words[i]));
        wu[i] = rfx_symtab_intern(u, words[i], strlen(words[i]));
        CU_ASSERT_EQUAL_FATAL(w[i], wu[i]);
    }
    uint32_t sub[][3] = {{w[3], 0, 2}, {w[1], 6, (uint32_t)-1}, {w[0], 9, 1}, {w[3], 0, 2}, {w[1], 0, 5},
                         {w[4], 1, 3}, {w[1], 0, 10}, {w[2], 0, 0}};
    uint32_t cat[][2] = {{w[0], w[1]}, {w[2], w[0]}, {w[0], w[1]}, {w[1], w[2]}};
    uint32_t num[] = {0, 7, (uint32_t)-42, 2147483648u, 7};
    const struct {
        rfx_fn_op op;
        const uint32_t *args;
        int nargs;
        size_t n;
    } calls[] = {{RFX_FX_SUBSTR, sub[0], 3, 8}, {RFX_FX_CAT, cat[0], 2, 4}, {RFX_FX_I2S, num, 1, 5},
                 {RFX_FX_U2S, num, 1, 5}};
    for (size_t c = 0; c < sizeof calls / sizeof *calls; c++) {
        uint32_t before = rfx_symtab_size(t), ids[8];
        CU_ASSERT_FATAL(rfx_fn_env_make_symbols(env, calls[c].op, calls[c].args, calls[c].nargs, calls[c].n, ids));
        for (size_t i = 0; i < calls[c].n; i++) {   /* the same texts as one by one, in the other table */
            const uint32_t *a = calls[c].args + i * (size_t)calls[c].nargs;   /* the words' ids agree */
            bool failed = false;
            uint32_t want = rfx_fn_apply(one, calls[c].op, a, calls[c].nargs, &failed);
            CU_ASSERT_FALSE(failed);
            CU_ASSERT_EQUAL(rfx_symtab_len(t, ids[i]), rfx_symtab_len(u, want));
            CU_ASSERT_EQUAL(memcmp(rfx_symtab_str(t, ids[i]), rfx_symtab_str(u, want), rfx_symtab_len(u, want)), 0);
        }
        for (uint32_t id = before; id + 1 < rfx_symtab_size(t); id++) {   /* added in byte order, each once */
            size_t la = rfx_symtab_len(t, id), lb = rfx_symtab_len(t, id + 1);
            int cmp = memcmp(rfx_symtab_str(t, id), rfx_symtab_str(t, id + 1), la < lb ? la : lb);
            CU_ASSERT(cmp < 0 || (cmp == 0 && la < lb));
        }
    }
    CU_ASSERT_NOT_EQUAL(rfx_symtab_find(t, "13", 2), UINT32_MAX);
    CU_ASSERT_NOT_EQUAL(rfx_symtab_find(t, "-42", 3), UINT32_MAX);
    CU_ASSERT_NOT_EQUAL(rfx_symtab_find(t, "4294967254", 10), UINT32_MAX);
    CU_ASSERT_EQUAL(rfx_symtab_find(t, words[1], strlen(words[1])), w[1]);
    rfx_fn_env_free(env);
    rfx_fn_env_free(one);
    rfx_symtab_free(t);
    rfx_symtab_free(u);
}

/* in_range (`v = range(..)` with v bound) holds for exactly the values range() makes:
 * every sign of step and 0, empty ranges, bounds at the ends of number and unsigned. */
static void test_in_range(void)
{
    static const int64_t ends[] = {0, 3, -3, 17, 2147483647, -2147483647 - 1, 4294967295, 2147483648u};
    rfx_symtab *t = rfx_symtab_new();
    rfx_fn_env *env = rfx_fn_env_new(t);
    CU_ASSERT_FATAL(t && env);
    uint32_t unit = 0;
    rfx_rows one;
    rfx_rows_init(&one, 1);
    CU_ASSERT_FATAL(rfx_rows_push(&one, &unit) == RFX_OK);
    int checked = 0;
    for (int u = 0; u < 2; u++)
        for (size_t e = 0; e < sizeof ends / sizeof *ends; e++)
            for (int d0 = -6; d0 <= 6; d0 += 3)
                for (int d1 = -7; d1 <= 7; d1 += 2)
                    for (int st = -3; st <= 4; st++) {   /* 4: no step given */
                        rfx_prim prim = u ? RFX_UNSIGNED : RFX_NUMBER;
                        uint32_t from = (uint32_t)(ends[e] + d0), to = (uint32_t)(ends[e] + d1);
                        int64_t span = u ? (int64_t)from - to : (int64_t)(int32_t)from - (int32_t)to;
                        if (span > 64 || span < -64)
                            continue;   /* wrapped past an end: billions of values to make */
                        rfx_rx b[3] = {{.kind = RFX_RX_CONST, .prim = prim, .value = from},
                                       {.kind = RFX_RX_CONST, .prim = prim, .value = to},
                                       {.kind = RFX_RX_CONST, .prim = prim, .value = (uint32_t)st}};
                        rfx_rx *bp[3] = {&b[0], &b[1], &b[2]};
                        int nb = st == 4 ? 2 : 3;
                        rfx_rows made;
                        rfx_rows_init(&made, 2);
                        CU_ASSERT_FATAL(rfx_cpu_range(&one, bp, nb, &made) == RFX_OK);
                        for (int dv = -9; dv <= 9; dv++) {
                            uint32_t a[4] = {(uint32_t)(ends[e] + dv), from, to, (uint32_t)st};
                            bool is = false, failed = false;
                            for (size_t i = 0; i < made.n && !is; i++)
                                is = made.data[2 * i + 1] == a[0];
                            uint32_t got = rfx_fn_apply(env, u ? RFX_FX_IN_RANGE_U : RFX_FX_IN_RANGE_I, a, nb + 1, &failed);
                            if (got != is)
                                fprintf(stderr, "in_range(%u; %u, %u, %d, %s) gave %u\n", a[0], from, to, st,
                                        u ? "unsigned" : "number", got);
                            CU_ASSERT_EQUAL(got, is);
                            checked++;
                        }
                        rfx_rows_free(&made);
                    }
    CU_ASSERT(checked > 10000);
    rfx_rows_free(&one);
    rfx_fn_env_free(env);
    rfx_symtab_free(t);
}

/* 64-bit aggregates: values and results of two words; an integer sum leaving its range
 * fails rather than wrap. */
static void test_agg_wide(void)
{
    rfx_rows a, b, out;
    rfx_rows_init(&a, 1);
    rfx_rows_init(&b, 3);
    rfx_rows_init(&out, 3);
    uint32_t keys[2] = {1, 2};
    uint32_t vals[4][3] = {{1, 0x7FFFFFFFu, 0xFFFFFFFFu}, {1, 0xFFFFFFFFu, 0xFFFFFFFFu}, {2, 0x7FFFFFFFu, 0xFFFFFFFFu},
                           {2, 0, 1}};   /* key 1: INT64_MAX, -1; key 2: INT64_MAX, 1 */
    for (int i = 0; i < 2; i++)
        CU_ASSERT_FATAL(rfx_rows_push(&a, &keys[i]) == RFX_OK);
    for (int i = 0; i < 4; i++)
        CU_ASSERT_FATAL(rfx_rows_push(&b, vals[i]) == RFX_OK);
    CU_ASSERT_EQUAL(rfx_cpu_aggregate(&a, &b, 1, RFX_AGG_MIN, 1, RFX_NUMBER64, &out), RFX_OK);
    CU_ASSERT_EQUAL(out.arity, 3);
    CU_ASSERT(out.n == 2 && out.data[1] == 0xFFFFFFFFu && out.data[2] == 0xFFFFFFFFu && out.data[4] == 0 &&
              out.data[5] == 1);
    CU_ASSERT_EQUAL(rfx_cpu_aggregate(&a, &b, 1, RFX_AGG_MAX, 1, RFX_UNSIGNED64, &out), RFX_OK);
    CU_ASSERT(out.n == 2 && out.data[1] == 0xFFFFFFFFu && out.data[4] == 0x7FFFFFFFu);
    CU_ASSERT_EQUAL(rfx_cpu_aggregate(&a, &b, 1, RFX_AGG_SUM, 1, RFX_NUMBER64, &out), RFX_ERR_DIV0);   /* key 2 */
    b.n = 3;   /* key 1 only: INT64_MAX - 1 */
    CU_ASSERT_EQUAL(rfx_cpu_aggregate(&a, &b, 1, RFX_AGG_SUM, 1, RFX_NUMBER64, &out), RFX_OK);
    CU_ASSERT(out.n == 2 && out.data[1] == 0x7FFFFFFFu && out.data[2] == 0xFFFFFFFEu);
    rfx_rows_free(&a);
    rfx_rows_free(&b);
    rfx_rows_free(&out);
}

/* ---- aggregate ----------------------------------------------------------------------- */
static void agg_case(rfx_aggfn fn, rfx_prim prim)
{
    for (size_t s = 0; s < 8; s++) {
        rfx_rows a = sorted_set(sizes[s], 1, UNIFORM, 40), b = sorted_set(sizes[s + 1], 2, UNIFORM, 60);
        if (prim == RFX_FLOAT)
            for (size_t i = 0; i < b.n; i++) {
                float f = (float)(b.data[2 * i + 1] % 10) - 4.5f;
                rfx_memcpy(&b.data[2 * i + 1], &f, 4);
            }
        rfx_rows out;
        rfx_rows_init(&out, 2);
        CU_ASSERT_EQUAL(rfx_cpu_aggregate(&a, &b, 1, fn, fn == RFX_AGG_COUNT ? -1 : 1, prim, &out), RFX_OK);
        rfx_rows ref;
        rfx_rows_init(&ref, 2);
        for (size_t i = 0; i < a.n; i++) {
            uint32_t key = a.data[i], cnt = 0, acc = 0;
            int32_t imin = INT32_MAX, imax = INT32_MIN;
            float fsum = 0, fmin = INFINITY, fmax = -INFINITY;
            for (size_t j = 0; j < b.n; j++) {
                if (b.data[2 * j] != key)
                    continue;
                uint32_t v = b.data[2 * j + 1];
                float f;
                rfx_memcpy(&f, &v, 4);
                cnt++;
                acc += v;
                fsum += f;
                imin = (int32_t)v < imin ? (int32_t)v : imin;
                imax = (int32_t)v > imax ? (int32_t)v : imax;
                fmin = f < fmin ? f : fmin;
                fmax = f > fmax ? f : fmax;
            }
            uint32_t val;
            if (fn == RFX_AGG_COUNT)
                val = cnt;
            else if (fn == RFX_AGG_SUM && prim == RFX_FLOAT)
                rfx_memcpy(&val, &fsum, 4);
            else if (fn == RFX_AGG_SUM)
                val = acc;
            else if (!cnt)
                continue;
            else if (prim == RFX_FLOAT)
                rfx_memcpy(&val, fn == RFX_AGG_MIN ? &fmin : &fmax, 4);
            else
                val = (uint32_t)(fn == RFX_AGG_MIN ? imin : imax);
            uint32_t tup[2] = {key, val};
            rfx_rows_push(&ref, tup);
        }
        CU_ASSERT(same_rows(&out, &ref));
        rfx_rows_free(&a);
        rfx_rows_free(&b);
        rfx_rows_free(&out);
        rfx_rows_free(&ref);
    }
}

static void test_agg_count(void) { agg_case(RFX_AGG_COUNT, RFX_NUMBER); }
static void test_agg_sum(void) { agg_case(RFX_AGG_SUM, RFX_NUMBER); }
static void test_agg_min(void) { agg_case(RFX_AGG_MIN, RFX_NUMBER); }
static void test_agg_max(void) { agg_case(RFX_AGG_MAX, RFX_NUMBER); }
static void test_agg_sum_float(void) { agg_case(RFX_AGG_SUM, RFX_FLOAT); }
static void test_agg_min_float(void) { agg_case(RFX_AGG_MIN, RFX_FLOAT); }
static void test_agg_max_float(void) { agg_case(RFX_AGG_MAX, RFX_FLOAT); }

/* Moving rows into an empty set takes them (the same buffer); into a non-empty one, they
 * are appended in order; either way the source is left empty. */
static void test_move_append(void)
{
    rfx_rows a, b, c;
    rfx_rows_init(&a, 2);
    rfx_rows_init(&b, 2);
    rfx_rows_init(&c, 2);
    for (uint32_t i = 0; i < 1000; i++) {
        uint32_t t[2] = {i, 2 * i};
        CU_ASSERT_FATAL(rfx_rows_push(i < 600 ? &b : &c, t) == RFX_OK);
    }
    const uint32_t *held = b.data;
    CU_ASSERT(rfx_rows_move_append(&a, &b, 4) == RFX_OK);
    CU_ASSERT(a.data == held && a.n == 600);
    CU_ASSERT(b.n == 0 && b.data == NULL && b.arity == 2);
    CU_ASSERT(rfx_rows_move_append(&a, &c, 4) == RFX_OK);
    CU_ASSERT(a.n == 1000 && c.n == 0 && c.data == NULL);
    bool in_order = true;
    for (uint32_t i = 0; i < a.n; i++)
        in_order &= a.data[2 * i] == i && a.data[2 * i + 1] == 2 * i;
    CU_ASSERT(in_order);
    rfx_rows_free(&a);
}

static void add(void)
{
    CU_pSuite s = CU_add_suite("primitives", NULL, NULL);
    CU_add_test(s, "parallel_for: every index once, nested and from two threads", test_parallel_for);
    CU_add_test(s, "appends copied on several threads", test_append_parallel);
    CU_add_test(s, "rows moved into an empty set, appended to a full one", test_move_append);
    CU_add_test(s, "sort uniform", test_sort_uniform);
    CU_add_test(s, "sort narrow", test_sort_narrow);
    CU_add_test(s, "sort all equal", test_sort_equal);
    CU_add_test(s, "sort zipf", test_sort_zipf);
    CU_add_test(s, "sort wide values", test_sort_wide);
    CU_add_test(s, "sort 2^21+1 tuples", test_sort_large);
    CU_add_test(s, "sort rows of many columns", test_sort_many_columns);
    CU_add_test(s, "sort on the leading columns, stable", test_sort_leading);
    CU_add_test(s, "sort of rows sorted on a prefix, run by run", test_sort_runs);
    CU_add_test(s, "sort rows sorted but for one pair", test_sort_nearly_sorted);
    CU_add_test(s, "nullary relations", test_nullary);
    CU_add_test(s, "union", test_union);
    CU_add_test(s, "intersect (semi-join)", test_intersect);
    CU_add_test(s, "difference (anti-join)", test_difference);
    CU_add_test(s, "difference zipf", test_difference_zipf);
    CU_add_test(s, "semi- and anti-join against several sets", test_semijoin_sets);
    CU_add_test(s, "a probe against a set past the cache", test_probe_large_set);
    CU_add_test(s, "join one key", test_join_k1);
    CU_add_test(s, "a join ranged by comparisons makes what the join alone does", test_range_join);
    CU_add_test(s, "join two keys", test_join_k2);
    CU_add_test(s, "join with predicate", test_join_pred);
    CU_add_test(s, "join skewed key", test_join_skew);
    CU_add_test(s, "join zipf", test_join_zipf);
    CU_add_test(s, "a probe join past the cache: searches or a sort", test_probe_join_large);
    CU_add_test(s, "a small side against a large one, split by its searches", test_small_against_large);
    CU_add_test(s, "product", test_product);
    CU_add_test(s, "join read as a set drops repeats, keeps the set", test_join_as_set);
    CU_add_test(s, "join read as a set that keeps no key: a group's matches made a set", test_join_dropping_keys);
    CU_add_test(s, "existential join: a row's first match, likely witnesses first, every pair where the predicate divides", test_join_first_match);
    CU_add_test(s, "two-source star join: pre once a row with matches", test_star_join_pre);
    CU_add_test(s, "map and filter", test_mapfilter);
    CU_add_test(s, "division by zero reported", test_div_zero);
    CU_add_test(s, "arithmetic semantics", test_arith_semantics);
    CU_add_test(s, "bitwise, shift, logical, power, min and max semantics", test_bitwise_semantics);
    CU_add_test(s, "aggregate count", test_agg_count);
    CU_add_test(s, "aggregate sum", test_agg_sum);
    CU_add_test(s, "aggregate min", test_agg_min);
    CU_add_test(s, "aggregate max", test_agg_max);
    CU_add_test(s, "aggregate sum float", test_agg_sum_float);
    CU_add_test(s, "aggregate min float", test_agg_min_float);
    CU_add_test(s, "aggregate max float", test_agg_max_float);
    CU_add_test(s, "64-bit arithmetic, comparison and conversion semantics", test_wide_semantics);
    CU_add_test(s, "expressions by batches: the values and failures of rows one by one", test_rx_batches);
    CU_add_test(s, "64-bit aggregates, exact sums", test_agg_wide);
    CU_add_test(s, "dates: the calendar, its text, add_months", test_dates);
    CU_add_test(s, "like(): SQL's LIKE patterns", test_like);
    CU_add_test(s, "symbols made of many tuples: as one by one, the new ones in text order", test_make_symbols);
    CU_add_test(s, "in_range: the values range() makes, tested", test_in_range);
}

int main(int argc, char **argv)
{
    return run_suites(argc, argv, add);
}
