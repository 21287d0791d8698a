/* cpu_rows.h (internal to primitives/): what the CPU primitives' files share about splitting
 * rows into chunks and comparing them. */
#ifndef RFX_CPU_ROWS_H
#define RFX_CPU_ROWS_H

#include "primitives.h"

#include <stdbool.h>
#include <stdint.h>

#define PAR_MIN 32768          /* below this many tuples, stay on one thread */

/* Chunks for n rows on nthreads threads: several a thread, so uneven ones even out. */
static inline int chunks_for(size_t n, int nthreads)
{
    if (nthreads <= 1 || n < PAR_MIN)
        return 1;
    size_t c = (size_t)nthreads * 4;
    if (c > n / (PAR_MIN / 4))
        c = n / (PAR_MIN / 4);
    return c < 1 ? 1 : (int)c;
}

/* Rows' worth of work when each of `small` sorted rows finds its place in `large` sorted rows
 * by galloping: about the log of their ratio in searches each, or all of `large` where reading
 * it whole is cheaper. A search step lands on a far cache line and costs many sequential
 * rows' time (GALLOP_STEP), which is why a small delta against a big relation is still worth
 * several threads on a machine with many: they hide each other's memory latency. *searching
 * (may be NULL): whether the searches are the work (large is not read whole). */
#define GALLOP_STEP 16
static inline size_t gallop_work(size_t small, size_t large, bool *searching)
{
    size_t r = small ? large / small : large;
    size_t per = r ? (size_t)(65 - __builtin_clzll((unsigned long long)r)) : 1;
    bool s = small * per * GALLOP_STEP < large;
    if (searching)
        *searching = s;
    return small + (s ? small * per * GALLOP_STEP : large);
}

/* Chunks for work that is searches: one a thread, as each row's search costs about the
 * same (chunks of equal rows take equal time) and each chunk more is one more hand-off,
 * a large share of a small delta's work. */
static inline int chunks_for_searches(size_t work, int nthreads)
{
    int c = chunks_for(work, nthreads);
    return c > nthreads ? nthreads : c;
}

/* Splits r's rows into c chunks whose boundaries cut no group of equal first k columns. */
void rfx_split_groups(const rfx_rows *r, int k, int c, size_t *bounds);
/* a's rows that join b's on their first k columns, estimated from `samples` rows of a
 * spread over it (two searches each). */
double rfx_join_rows_estimate(const rfx_rows *a, const rfx_rows *b, int k, size_t samples);

/* A hash of n words (multiplicative, its high bits mixed into the low: tables take either). */
static inline uint64_t rfx_row_hash(const uint32_t *t, int n)
{
    uint64_t h = 0;
    for (int i = 0; i < n; i++)
        h = (h ^ t[i]) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

static inline int cmp_prefix(const uint32_t *a, const uint32_t *b, int k)
{
    for (int i = 0; i < k; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

#endif
