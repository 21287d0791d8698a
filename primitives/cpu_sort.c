/* cpu_sort.c: the CPU sort of packed rows into their order (all columns, the first most
 * significant). Narrow rows: an LSD radix over (column, 11-bit digit) passes, each moving
 * the rows. Wide rows would move every byte of every row a pass for each digit of each
 * column; they are sorted as (column value, row number) pairs instead, most significant
 * column first, a column further only within the runs the columns before it left equal, and
 * the rows are moved once at the end. */
#include "primitives.h"
#include "cpu_rows.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RADIX_BITS 11
#define RADIX (1 << RADIX_BITS)

typedef struct sort_ctx {
    const uint32_t *src;
    uint32_t *dst;
    size_t n;
    int a, col, shift, nchunks;
    size_t *hist;              /* nchunks x RADIX */
} sort_ctx;

static void sort_hist(int c, void *arg)
{
    sort_ctx *s = arg;
    size_t lo = s->n * (size_t)c / (size_t)s->nchunks, hi = s->n * (size_t)(c + 1) / (size_t)s->nchunks;
    size_t *h = s->hist + (size_t)c * RADIX;
    memset(h, 0, sizeof(size_t) * RADIX);
    const uint32_t *p = s->src + s->col;
    for (size_t i = lo; i < hi; i++)
        h[(p[i * (size_t)s->a] >> s->shift) & (RADIX - 1)]++;
}

static void sort_scatter(int c, void *arg)
{
    sort_ctx *s = arg;
    size_t lo = s->n * (size_t)c / (size_t)s->nchunks, hi = s->n * (size_t)(c + 1) / (size_t)s->nchunks;
    size_t *h = s->hist + (size_t)c * RADIX;
    int a = s->a;
    const uint32_t *src = s->src;
    uint32_t *dst = s->dst;
    if (a == 1) {
        for (size_t i = lo; i < hi; i++) {
            uint32_t v = src[i];
            dst[h[(v >> s->shift) & (RADIX - 1)]++] = v;
        }
    } else if (a == 2) {
        const uint64_t *s64 = (const uint64_t *)(const void *)src;
        uint64_t *d64 = (uint64_t *)(void *)dst;
        for (size_t i = lo; i < hi; i++) {
            uint64_t v = s64[i];
            uint32_t key = s->col == 0 ? src[2 * i] : src[2 * i + 1];
            d64[h[(key >> s->shift) & (RADIX - 1)]++] = v;
        }
    } else {
        for (size_t i = lo; i < hi; i++) {
            const uint32_t *t = src + i * (size_t)a;
            size_t pos = h[(t[s->col] >> s->shift) & (RADIX - 1)]++;
            rfx_memcpy(dst + pos * (size_t)a, t, sizeof(uint32_t) * (size_t)a);
        }
    }
}

/* The stable passes over column col's digits that vary (its bits in vary), between src and
 * dst: returns the one that holds the rows at the end. */
static uint32_t *column_passes(uint32_t *src, uint32_t *dst, size_t n, int a, int col, uint32_t vary,
                               int nchunks, int nthreads, size_t *hist)
{
    for (int shift = 0; shift < 32; shift += RADIX_BITS) {
        if (((vary >> shift) & (RADIX - 1)) == 0)
            continue;
        sort_ctx s = {src, dst, n, a, col, shift, nchunks, hist};
        rfx_parallel_for(nchunks, nthreads, sort_hist, &s);
        size_t sum = 0;
        for (int d = 0; d < RADIX; d++)
            for (int k = 0; k < nchunks; k++) {
                size_t v = hist[(size_t)k * RADIX + d];
                hist[(size_t)k * RADIX + d] = sum;
                sum += v;
            }
        rfx_parallel_for(nchunks, nthreads, sort_scatter, &s);
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    return src;
}

static int digits(uint32_t vary)
{
    int d = 0;
    for (int shift = 0; shift < 32; shift += RADIX_BITS)
        d += ((vary >> shift) & (RADIX - 1)) != 0;
    return d;
}

static int cmp_rows(const void *x, const void *y, void *arity)
{
    return cmp_prefix(x, y, *(const int *)arity);
}

/* ---- wide rows: (value, row number) pairs ------------------------------------------------ */
enum { WIDE_SMALL = 1024 };    /* runs up to this many pairs are sorted by comparing rows */

typedef struct wide_ctx {
    const uint32_t *rows;
    int a;
    size_t n;
    const uint32_t *vary;      /* per column, the bits that vary */
    uint32_t *pairs, *tmp;     /* n x {value, row number}, and room for as many */
    uint32_t *out;             /* the rows in order */
    size_t *bounds;            /* parts of the pairs that begin a run each */
    int nparts;
    int col;                   /* while refining: the column the pairs were sorted by */
    atomic_bool nomem;
} wide_ctx;

typedef struct row_order {
    const uint32_t *rows;
    int a, col;
} row_order;

static int cmp_pair_rows(const void *x, const void *y, void *arg)
{
    const row_order *o = arg;
    const uint32_t *p = x, *q = y;
    return cmp_prefix(o->rows + (size_t)p[1] * (size_t)o->a + o->col, o->rows + (size_t)q[1] * (size_t)o->a + o->col,
                      o->a - o->col);
}

/* Pairs [lo, hi), equal in the columns before col, into the order of their rows. */
static void refine(wide_ctx *w, size_t lo, size_t hi, int col, size_t *hist)
{
    const int a = w->a;
    while (col < a && w->vary[col] == 0)
        col++;
    if (col == a || hi - lo < 2)
        return;   /* equal rows */
    uint32_t *p = w->pairs + 2 * lo;
    if (hi - lo <= WIDE_SMALL) {
        row_order o = {w->rows, a, col};
        qsort_r(p, hi - lo, 2 * sizeof(uint32_t), cmp_pair_rows, &o);
        return;
    }
    for (size_t i = lo; i < hi; i++)
        w->pairs[2 * i] = w->rows[(size_t)w->pairs[2 * i + 1] * (size_t)a + (size_t)col];
    uint32_t *got = column_passes(p, w->tmp + 2 * lo, hi - lo, 2, 0, w->vary[col], 1, 1, hist);
    if (got != p)
        memcpy(p, got, (hi - lo) * 2 * sizeof(uint32_t));
    for (size_t i = lo; i < hi;) {
        size_t j = i + 1;
        while (j < hi && w->pairs[2 * j] == w->pairs[2 * i])
            j++;
        refine(w, i, j, col + 1, hist);
        i = j;
    }
}

static void wide_fill(int k, void *arg)
{
    wide_ctx *w = arg;
    size_t lo = w->n * (size_t)k / (size_t)w->nparts, hi = w->n * (size_t)(k + 1) / (size_t)w->nparts;
    for (size_t i = lo; i < hi; i++) {
        w->pairs[2 * i] = w->rows[i * (size_t)w->a + (size_t)w->col];
        w->pairs[2 * i + 1] = (uint32_t)i;
    }
}

static void wide_refine(int k, void *arg)
{
    wide_ctx *w = arg;
    size_t *hist = rfx_malloc(sizeof(size_t) * RADIX);
    if (!hist) {
        atomic_store(&w->nomem, true);
        return;
    }
    for (size_t i = w->bounds[k], hi = w->bounds[k + 1]; i < hi;) {
        size_t j = i + 1;
        while (j < hi && w->pairs[2 * j] == w->pairs[2 * i])
            j++;
        refine(w, i, j, w->col + 1, hist);
        i = j;
    }
    free(hist);
}

static void wide_gather(int k, void *arg)
{
    wide_ctx *w = arg;
    const size_t a = (size_t)w->a;
    size_t lo = w->n * (size_t)k / (size_t)w->nparts, hi = w->n * (size_t)(k + 1) / (size_t)w->nparts;
    for (size_t i = lo; i < hi; i++)
        rfx_memcpy(w->out + i * a, w->rows + (size_t)w->pairs[2 * i + 1] * a, sizeof(uint32_t) * a);
}

static rfx_status sort_wide(rfx_rows *r, const uint32_t *vary, int nchunks, int nthreads, size_t *hist)
{
    const size_t n = r->n;
    int c0 = 0;
    while (vary[c0] == 0)
        c0++;   /* some column varies: the rows are not in order */
    wide_ctx w = {r->data, r->arity, n, vary, rfx_malloc(n * 2 * sizeof(uint32_t)),
                  rfx_malloc(n * 2 * sizeof(uint32_t)), NULL, rfx_malloc(sizeof(size_t) * ((size_t)nchunks + 1)),
                  nchunks, c0, false};
    if (!w.pairs || !w.tmp || !w.bounds)
        goto nomem;
    rfx_parallel_for(nchunks, nthreads, wide_fill, &w);
    uint32_t *got = column_passes(w.pairs, w.tmp, n, 2, 0, vary[c0], nchunks, nthreads, hist);
    if (got != w.pairs) {
        w.tmp = w.pairs;
        w.pairs = got;
    }
    /* parts of about equal size, each beginning where a run of equal values does */
    w.bounds[0] = 0;
    for (int k = 1; k < nchunks; k++) {
        size_t b = n * (size_t)k / (size_t)nchunks, lo = w.bounds[k - 1];
        if (b < lo)
            b = lo;
        uint32_t v = b < n ? w.pairs[2 * b] : 0;
        size_t hi = b;
        while (lo < hi) {   /* the first pair of b's run */
            size_t mid = lo + (hi - lo) / 2;
            if (w.pairs[2 * mid] < v)
                lo = mid + 1;
            else
                hi = mid;
        }
        w.bounds[k] = b < n ? lo : n;
    }
    w.bounds[nchunks] = n;
    rfx_parallel_for(nchunks, nthreads, wide_refine, &w);
    if (atomic_load(&w.nomem))
        goto nomem;
    free(w.tmp);
    w.tmp = NULL;
    if (!(w.out = rfx_malloc(n * (size_t)r->arity * sizeof(uint32_t))))
        goto nomem;
    rfx_parallel_for(nchunks, nthreads, wide_gather, &w);
    free(r->data);
    r->data = w.out;
    r->cap = n;
    free(w.pairs);
    free(w.bounds);
    return RFX_OK;
nomem:
    free(w.pairs);
    free(w.tmp);
    free(w.bounds);
    return RFX_ERR_NOMEM;
}

/* ---- whether a sort is needed, and which ------------------------------------------------- */
typedef struct sorted_ctx {
    const uint32_t *data;
    size_t n;
    int arity, chunks;
    atomic_bool unsorted;
} sorted_ctx;

static void sorted_chunk(int i, void *arg)
{
    sorted_ctx *s = arg;
    size_t lo = s->n * (size_t)i / (size_t)s->chunks, hi = s->n * (size_t)(i + 1) / (size_t)s->chunks;
    const size_t a = (size_t)s->arity;
    for (size_t k = lo ? lo : 1; k < hi; k++) {
        if (cmp_prefix(s->data + (k - 1) * a, s->data + k * a, s->arity) > 0) {
            atomic_store_explicit(&s->unsorted, true, memory_order_relaxed);
            return;
        }
        if ((k & 0xFFFF) == 0 && atomic_load_explicit(&s->unsorted, memory_order_relaxed))
            return;
    }
}

/* Whether rows already are in order (facts files written by rfx, edge lists sorted by
 * source): a pass that stops at the first pair out of order, against a radix sort's passes. */
static bool rows_sorted(const rfx_rows *r, int nthreads)
{
    sorted_ctx s = {r->data, r->n, r->arity, chunks_for(r->n, nthreads), false};
    rfx_parallel_for(s.chunks, nthreads, sorted_chunk, &s);
    return !atomic_load(&s.unsorted);
}

typedef struct vary_ctx {
    const uint32_t *data;
    size_t n;
    int arity, chunks;
    uint32_t *vary;             /* per chunk, the bits that differ from the first row's */
} vary_ctx;

static void vary_chunk(int i, void *arg)
{
    vary_ctx *v = arg;
    const size_t a = (size_t)v->arity;
    size_t lo = v->n * (size_t)i / (size_t)v->chunks, hi = v->n * (size_t)(i + 1) / (size_t)v->chunks;
    uint32_t *out = v->vary + (size_t)i * a;
    for (size_t k = lo; k < hi; k++)
        for (size_t c = 0; c < a; c++)
            out[c] |= v->data[k * a + c] ^ v->data[c];
}

/* Per column, the bits that differ from the first row's somewhere (digits where nothing
 * varies need no pass); NULL on out of memory. */
static uint32_t *column_vary(const rfx_rows *r, int nchunks, int nthreads)
{
    const int a = r->arity;
    uint32_t *vary = rfx_calloc((size_t)(nchunks + 1) * (size_t)a, sizeof(uint32_t));
    if (!vary)
        return NULL;
    vary_ctx v = {r->data, r->n, a, nchunks, vary + a};
    rfx_parallel_for(nchunks, nthreads, vary_chunk, &v);
    for (int c = 0; c < a; c++)
        for (int i = 0; i < nchunks; i++)
            vary[c] |= v.vary[(size_t)i * (size_t)a + (size_t)c];
    return vary;
}

rfx_status rfx_cpu_sort(rfx_rows *r, int nthreads)
{
    int a = r->arity;
    size_t n = r->n;
    if (n < 2 || a == 0)
        return RFX_OK;
    if (n < 64) {
        /* insertion sort */
        uint32_t tmp[64];
        if (a > 64) {
            qsort_r(r->data, n, sizeof(uint32_t) * (size_t)a, cmp_rows, &a);
            return RFX_OK;
        }
        for (size_t i = 1; i < n; i++) {
            rfx_memcpy(tmp, r->data + i * (size_t)a, sizeof(uint32_t) * (size_t)a);
            size_t j = i;
            while (j > 0 && cmp_prefix(r->data + (j - 1) * (size_t)a, tmp, a) > 0) {
                rfx_memcpy(r->data + j * (size_t)a, r->data + (j - 1) * (size_t)a, sizeof(uint32_t) * (size_t)a);
                j--;
            }
            rfx_memcpy(r->data + j * (size_t)a, tmp, sizeof(uint32_t) * (size_t)a);
        }
        return RFX_OK;
    }
    if (rows_sorted(r, nthreads))
        return RFX_OK;
    int nchunks = chunks_for(n, nthreads);
    uint32_t *vary = column_vary(r, nchunks, nthreads);
    size_t *hist = rfx_malloc(sizeof(size_t) * RADIX * (size_t)nchunks);
    if (!vary || !hist) {
        free(vary);
        free(hist);
        return RFX_ERR_NOMEM;
    }
    int passes = 0;
    for (int c = 0; c < a; c++)
        passes += digits(vary[c]);
    rfx_status st = RFX_OK;
    /* the rows' words moved a pass against the pairs' passes, the refining's reads of rows
     * out of order and one move of every row: the crossover lies near 40 words a row */
    if (a >= 4 && passes * a >= 40 && n <= UINT32_MAX)
        st = sort_wide(r, vary, nchunks, nthreads, hist);
    else {
        uint32_t *tmp = rfx_malloc(n * (size_t)a * sizeof(uint32_t)), *src = r->data;
        if (!tmp)
            st = RFX_ERR_NOMEM;
        for (int c = a - 1; c >= 0 && tmp; c--)
            src = column_passes(src, src == r->data ? tmp : r->data, n, a, c, vary[c], nchunks, nthreads, hist);
        if (src != r->data) {   /* the rows are in tmp: adopt it */
            free(r->data);
            r->data = src;
            r->cap = n;
        } else
            free(tmp);
    }
    free(hist);
    free(vary);
    return st;
}

rfx_status rfx_cpu_sort_leading(rfx_rows *r, int nkeys, int nthreads)
{
    const int a = r->arity;
    const size_t n = r->n;
    if (nkeys >= a || nkeys <= 0)
        return nkeys <= 0 ? RFX_OK : rfx_cpu_sort(r, nthreads);
    if (n < 2)
        return RFX_OK;
    int nchunks = chunks_for(n, nthreads);
    uint32_t *vary = column_vary(r, nchunks, nthreads);
    size_t *hist = rfx_malloc(sizeof(size_t) * RADIX * (size_t)nchunks);
    uint32_t *tmp = rfx_malloc(n * (size_t)a * sizeof(uint32_t));
    rfx_status st = vary && hist && tmp ? RFX_OK : RFX_ERR_NOMEM;
    if (st == RFX_OK) {
        uint32_t *src = r->data;
        for (int c = nkeys - 1; c >= 0; c--)   /* LSD: stable, the keys' varying digits only */
            src = column_passes(src, src == r->data ? tmp : r->data, n, a, c, vary[c], nchunks, nthreads, hist);
        if (src != r->data) {   /* the rows are in tmp: adopt it */
            free(r->data);
            r->data = src;
            r->cap = n;
            tmp = NULL;
        }
    }
    free(tmp);
    free(hist);
    free(vary);
    return st;
}

/* ---- rows sorted on a prefix already: each run sorted alone --------------------------- */
/* The longest run of rows equal on the sorted prefix sorted alone (by insertion). */
#define SORT_RUN_MOST 32

typedef struct runs_ctx {
    uint32_t *rows;
    size_t n;
    int a, p, nchunks;
    atomic_int flags;          /* 1: a pair out of order on the prefix, 2: a run too long, 4: a run of 2+ */
} runs_ctx;

static void swap_rows(uint32_t *x, uint32_t *y, int a)
{
    for (int c = 0; c < a; c++) {
        uint32_t t = x[c];
        x[c] = y[c];
        y[c] = t;
    }
}

/* Chunk k's runs (those whose first row is in it; a run may reach past its end). */
static void sort_runs_chunk(int k, void *ctx)
{
    runs_ctx *s = ctx;
    const int a = s->a, p = s->p;
    size_t lo = s->n * (size_t)k / (size_t)s->nchunks, hi = s->n * (size_t)(k + 1) / (size_t)s->nchunks;
    int f = 0;
    for (size_t i = lo; i < hi && !(f & 3); i++) {
        if (i > 0) {
            int c = rfx_tuple_cmp(s->rows + (i - 1) * a, s->rows + i * a, p);
            if (c > 0)
                f |= 1;
            if (c >= 0)
                continue;
        }
        size_t j = i + 1;
        while (j < s->n && j - i <= SORT_RUN_MOST && rfx_tuple_cmp(s->rows + (j - 1) * a, s->rows + j * a, p) == 0)
            j++;
        if (j - i > SORT_RUN_MOST) {
            f |= 2;
            break;
        }
        f |= j - i > 1 ? 4 : 0;
        for (size_t q = i + 1; q < j; q++)
            for (size_t r = q; r > i && rfx_tuple_cmp(s->rows + (r - 1) * a, s->rows + r * a, a) > 0; r--)
                swap_rows(s->rows + (r - 1) * a, s->rows + r * a, a);
        if (((i - lo) & 1023) == 0 && (atomic_load_explicit(&s->flags, memory_order_relaxed) & 3))
            break;   /* another chunk found the hint wrong */
    }
    atomic_fetch_or(&s->flags, f);
}

bool rfx_cpu_sort_runs(rfx_rows *r, int sorted, int nthreads, bool *repeats)
{
    *repeats = true;
    if (sorted <= 0 || r->arity == 0 || r->n < 2)
        return false;
    runs_ctx s = {r->data, r->n, r->arity, sorted < r->arity ? sorted : r->arity, chunks_for(r->n, nthreads), 0};
    rfx_parallel_for(s.nchunks, nthreads, sort_runs_chunk, &s);
    int f = atomic_load(&s.flags);
    *repeats = (f & 3) != 0 || (f & 4) != 0;   /* not sorted here: the caller's sort may leave repeats */
    return (f & 3) == 0;
}

/* ---- sorted runs merged ------------------------------------------------------------------ */
static const uint32_t *run_row(const rfx_rows *r, size_t i)
{
    return r->data + i * (size_t)r->arity;
}

/* A min-heap of run indices ordered by each run's head row on its first `keys` columns
 * (ties: lower run first, so rows of equal keys keep the order of the runs they came from). */
typedef struct run_heap {
    const rfx_rows *runs;
    const size_t *pos;
    size_t *at, n;
    int k, keys;
} run_heap;

static bool head_less(const run_heap *h, size_t p, size_t q)
{
    const size_t x = h->at[p], y = h->at[q];
    int c = rfx_tuple_cmp(run_row(&h->runs[x], h->pos[x]), run_row(&h->runs[y], h->pos[y]), h->keys);
    return c < 0 || (c == 0 && x < y);
}

static void sift_down(run_heap *h, size_t p)
{
    for (;;) {
        size_t l = 2 * p + 1, m = p;
        if (l < h->n && head_less(h, l, m))
            m = l;
        if (l + 1 < h->n && head_less(h, l + 1, m))
            m = l + 1;
        if (m == p)
            return;
        size_t t = h->at[p];
        h->at[p] = h->at[m];
        h->at[m] = t;
        p = m;
    }
}

rfx_status rfx_cpu_merge_runs(const rfx_rows *runs, size_t nruns, int keys, rfx_rows *out)
{
    size_t total = 0, *pos = rfx_calloc(nruns ? nruns : 1, sizeof(size_t));
    run_heap h = {runs, pos, rfx_malloc(sizeof(size_t) * (nruns ? nruns : 1)), 0, out->arity,
                  keys > 0 && keys < out->arity ? keys : out->arity};
    for (size_t r = 0; r < nruns; r++)
        total += runs[r].n;
    rfx_status st = pos && h.at ? rfx_rows_reserve(out, total) : RFX_ERR_NOMEM;
    for (size_t r = 0; st == RFX_OK && r < nruns; r++)
        if (runs[r].n)
            h.at[h.n++] = r;
    for (size_t i = h.n; st == RFX_OK && i-- > 0;)
        sift_down(&h, i);
    while (st == RFX_OK && h.n) {
        size_t r = h.at[0];
        memcpy(out->data + out->n * (size_t)h.k, run_row(&runs[r], pos[r]), sizeof(uint32_t) * (size_t)h.k);
        out->n++;
        if (++pos[r] == runs[r].n)
            h.at[0] = h.at[--h.n];
        sift_down(&h, 0);
    }
    free(pos);
    free(h.at);
    return st;
}
