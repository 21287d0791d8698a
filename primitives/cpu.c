/* cpu.c: CPU implementations of the relational primitives over packed rows.
 * Parallel work is split into chunks at key-group boundaries; each chunk writes into its
 * own region and the regions are compacted afterwards, so no atomics are needed. */
#include "primitives.h"
#include "cpu_rows.h"
#include "cpu_sets.h"
#include "rx_ops.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>


/* ---- rows ------------------------------------------------------------------------ */
void rfx_rows_init(rfx_rows *r, int arity)
{
    r->data = NULL;
    r->n = r->cap = 0;
    r->arity = arity;
}

void rfx_rows_free(rfx_rows *r)
{
    free(r->data);
    r->data = NULL;
    r->n = r->cap = 0;
}

/* Large row buffers ask for transparent huge pages (where the kernel leaves that to
 * madvise) before they are written: pinning them for the GPU's copies takes less than half
 * the time it takes with 4 KiB pages, and the CPU's joins walk fewer TLB entries. Only the 2 MiB-aligned interior is advised; a failure changes nothing. */
static void advise_huge_pages(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    if (bytes < 4 * huge)
        return;
    uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1), hi = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

/* Room for n rows. The rows held move on nthreads threads where there are enough of them:
 * realloc copies them on one thread where it cannot remap (an out-of-core JOIN's output,
 * appended part by part, spent tens of milliseconds a growth so). */
static rfx_status rows_reserve_on(rfx_rows *r, size_t n, int nthreads)
{
    if (n <= r->cap)
        return RFX_OK;
    if (r->arity == 0) {
        r->cap = n;
        return RFX_OK;
    }
    if (n > SIZE_MAX / 4 / (size_t)r->arity)
        return RFX_ERR_NOMEM;
    size_t nc = r->cap ? r->cap : 16;
    while (nc < n)
        nc = nc + nc / 2 + 16;
    const size_t bytes = nc * (size_t)r->arity * sizeof(uint32_t), held = r->n * (size_t)r->arity * sizeof(uint32_t);
    uint32_t *d;
    if (nthreads > 1 && held >= 4 * RFX_PAR_COPY_MIN) {
        if (!(d = rfx_malloc(bytes)))
            return RFX_ERR_NOMEM;
        advise_huge_pages(d, bytes);
        rfx_parallel_memcpy(d, r->data, held, nthreads);
        free(r->data);
    } else {
        if (!(d = rfx_realloc(r->data, bytes)))
            return RFX_ERR_NOMEM;
        advise_huge_pages(d, bytes);
    }
    r->data = d;
    r->cap = nc;
    return RFX_OK;
}

rfx_status rfx_rows_reserve(rfx_rows *r, size_t n)
{
    return rows_reserve_on(r, n, 1);
}

rfx_status rfx_rows_push(rfx_rows *r, const uint32_t *t)
{
    rfx_status st = rfx_rows_reserve(r, r->n + 1);
    if (st)
        return st;
    if (r->arity)
        rfx_memcpy(r->data + r->n * (size_t)r->arity, t, sizeof(uint32_t) * (size_t)r->arity);
    r->n++;
    return RFX_OK;
}

void rfx_rows_swap(rfx_rows *a, rfx_rows *b)
{
    rfx_rows t = *a;
    *a = *b;
    *b = t;
}

rfx_status rfx_rows_append_parallel(rfx_rows *dst, const rfx_rows *src, int nthreads)
{
    if (!src->n)
        return RFX_OK;
    if (!src->data) {     /* arity 0: a size */
        dst->n = 1;
        return RFX_OK;
    }
    rfx_status st = rows_reserve_on(dst, dst->n + src->n, nthreads);
    if (st != RFX_OK)
        return st;
    rfx_parallel_memcpy(dst->data + dst->n * (size_t)dst->arity, src->data,
                        sizeof(uint32_t) * src->n * (size_t)src->arity, nthreads);
    dst->n += src->n;
    return RFX_OK;
}

rfx_status rfx_rows_move_append(rfx_rows *dst, rfx_rows *src, int nthreads)
{
    if (dst->n == 0) {
        rfx_rows_free(dst);
        rfx_rows_swap(dst, src);
        return RFX_OK;
    }
    rfx_status st = rfx_rows_append_parallel(dst, src, nthreads);
    rfx_rows_free(src);
    return st;
}

rfx_status rfx_rows_append(rfx_rows *dst, const rfx_rows *src)
{
    return rfx_rows_append_parallel(dst, src, 1);
}

rfx_status rfx_rows_concat(const rfx_rows *parts, size_t n, rfx_rows *dst, int nthreads)
{
    rfx_rows all;
    rfx_rows_init(&all, dst->arity);
    size_t rows = 0;
    for (size_t i = 0; i < n; i++)
        rows += parts[i].n;
    rfx_status st = rfx_rows_reserve(&all, rows);
    for (size_t i = 0; st == RFX_OK && i < n; i++)
        st = rfx_rows_append_parallel(&all, &parts[i], nthreads);
    if (st == RFX_OK)
        rfx_rows_swap(dst, &all);
    rfx_rows_free(&all);
    return st;
}

/* Sets dst to exactly n tuples of arity `arity` (contents undefined). */
static rfx_status rows_resize(rfx_rows *dst, int arity, size_t n)
{
    if (dst->arity != arity) {
        rfx_rows_free(dst);
        dst->arity = arity;
    }
    rfx_status st = rfx_rows_reserve(dst, n);
    if (st)
        return st;
    dst->n = n;
    return RFX_OK;
}

/* ---- comparison ----------------------------------------------------------------------- */
/* First index in [lo, hi) whose k-prefix is >= key (upper: > key) (rows of arity a). */
static size_t bound(const uint32_t *rows, int a, size_t lo, size_t hi, const uint32_t *key, int k, bool upper)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp_prefix(rows + mid * (size_t)a, key, k);
        if (c < 0 || (upper && c == 0))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static size_t lower_bound(const uint32_t *rows, int a, size_t lo, size_t hi, const uint32_t *key, int k)
{
    return bound(rows, a, lo, hi, key, k, false);
}

int rfx_tuple_cmp(const uint32_t *a, const uint32_t *b, int k)
{
    return cmp_prefix(a, b, k);
}

size_t rfx_rows_bound(const rfx_rows *r, size_t from, const uint32_t *key, int k, bool upper)
{
    return bound(r->data, r->arity, from, r->n, key, k, upper);
}

/* Galloping search forward from lo: first index in [lo, hi) with prefix >= key. */
static size_t gallop(const uint32_t *rows, int a, size_t lo, size_t hi, const uint32_t *key, int k)
{
    if (lo >= hi || cmp_prefix(rows + lo * (size_t)a, key, k) >= 0)
        return lo;
    size_t step = 1, prev = lo;
    while (lo + step < hi && cmp_prefix(rows + (lo + step) * (size_t)a, key, k) < 0) {
        prev = lo + step;
        step *= 2;
    }
    size_t end = lo + step < hi ? lo + step + 1 : hi;
    return lower_bound(rows, a, prev + 1, end, key, k);
}

/* End of the group starting at i (rows equal to row i on k columns). */
static size_t group_end(const uint32_t *rows, int a, size_t i, size_t n, int k)
{
    const uint32_t *key = rows + i * (size_t)a;
    size_t j = i + 1;
    if (j < n && cmp_prefix(rows + j * (size_t)a, key, k) != 0)
        return j;
    /* runs can be long (skewed keys): gallop to the first larger prefix */
    size_t step = 1, lo = i;
    while (lo + step < n && cmp_prefix(rows + (lo + step) * (size_t)a, key, k) == 0) {
        lo += step;
        step *= 2;
    }
    size_t hi = lo + step < n ? lo + step : n;
    while (lo + 1 < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_prefix(rows + mid * (size_t)a, key, k) == 0)
            lo = mid;
        else
            hi = mid;
    }
    return lo + 1;
}

/* Splits [0, n) into c chunks whose boundaries do not cut a k-prefix group. */
void rfx_split_groups(const rfx_rows *r, int k, int c, size_t *bounds)
{
    bounds[0] = 0;
    for (int i = 1; i < c; i++) {
        size_t b = r->n * (size_t)i / (size_t)c;
        if (b < bounds[i - 1])
            b = bounds[i - 1];
        if (k > 0 && b > 0 && b < r->n) {
            /* move back to the start of b's group */
            const uint32_t *key = r->data + b * (size_t)r->arity;
            b = lower_bound(r->data, r->arity, bounds[i - 1], b, key, k);
        }
        bounds[i] = b;
    }
    bounds[c] = r->n;
}

bool rfx_cpu_is_set(const rfx_rows *r)
{
    if (r->arity == 0)
        return r->n <= 1;
    for (size_t i = 1; i < r->n; i++)
        if (cmp_prefix(r->data + (i - 1) * (size_t)r->arity, r->data + i * (size_t)r->arity, r->arity) >= 0)
            return false;
    return true;
}

/* ---- chunked, compacted outputs -------------------------------------------------------- */
/* Moves each chunk's output [start_i, start_i + count_i) together; returns the total. */
static size_t compact_chunks(uint32_t *data, int a, const size_t *start, const size_t *count, int c)
{
    size_t pos = count[0];
    for (int i = 1; i < c; i++) {
        if (start[i] != pos && count[i] && a)
            memmove(data + pos * (size_t)a, data + start[i] * (size_t)a, sizeof(uint32_t) * (size_t)a * count[i]);
        pos += count[i];
    }
    return pos;
}

typedef struct unique_ctx {
    rfx_rows *r;
    size_t *bounds, *count;
} unique_ctx;

static void unique_chunk(int c, void *arg)
{
    unique_ctx *u = arg;
    int a = u->r->arity;
    uint32_t *d = u->r->data;
    size_t lo = u->bounds[c], hi = u->bounds[c + 1], w = lo;
    for (size_t i = lo; i < hi; i++) {
        const uint32_t *t = d + i * (size_t)a;
        /* compare with the previous input tuple (also across chunk boundaries) */
        if (i > 0 && memcmp(t, d + (i - 1) * (size_t)a, sizeof(uint32_t) * (size_t)a) == 0)
            continue;
        if (w != i)
            memmove(d + w * (size_t)a, t, sizeof(uint32_t) * (size_t)a);
        w++;
    }
    u->count[c] = w - lo;
}

rfx_status rfx_cpu_unique(rfx_rows *r, int nthreads)
{
    if (r->arity == 0) {
        if (r->n > 1)
            r->n = 1;
        return RFX_OK;
    }
    if (r->n < 2)
        return RFX_OK;
    int c = chunks_for(r->n, nthreads);
    size_t *bounds = rfx_malloc(sizeof(size_t) * (size_t)(c + 1)), *count = rfx_malloc(sizeof(size_t) * (size_t)c);
    if (!bounds || !count) {
        free(bounds);
        free(count);
        return RFX_ERR_NOMEM;
    }
    /* chunks at group boundaries (full arity), so "previous tuple" reads are untouched */
    rfx_split_groups(r, r->arity, c, bounds);
    unique_ctx u = {r, bounds, count};
    rfx_parallel_for(c, nthreads, unique_chunk, &u);
    r->n = compact_chunks(r->data, r->arity, bounds, count, c);
    free(bounds);
    free(count);
    return RFX_OK;
}

/* ---- map / filter ------------------------------------------------------------------------ */
typedef struct map_ctx {
    const rfx_rows *src;
    const rfx_rx *pred;
    rfx_rx *const *out;
    int nout;
    const int *cols;           /* when every output is a column: their indices */
    rfx_rows *dst;
    size_t *bounds, *count;
    atomic_bool div0;
    bool batch;                /* by batches of rows (map_batches) */
} map_ctx;

/* Rows [lo, hi) of src through pred and outs (outs[x] NULL: column x as it is) by batches
 * (rfx_rx_eval_batch), each kept row written at dst + w * nout; returns the new w. */
static size_t map_batches(const rfx_rows *src, size_t lo, size_t hi, const rfx_rx *pred, rfx_rx *const *outs,
                          int nout, uint32_t *dst, size_t w, bool *div0)
{
    const int a = src->arity;
    unsigned char all[RFX_RX_BATCH];
    memset(all, 1, sizeof all);
    uint64_t v[RFX_RX_BATCH];
    unsigned char keep[RFX_RX_BATCH];
    int at[RFX_RX_BATCH];
    for (size_t i = lo; i < hi; i += RFX_RX_BATCH) {
        const int n = hi - i < RFX_RX_BATCH ? (int)(hi - i) : RFX_RX_BATCH;
        const uint32_t *rows = src->data + i * (size_t)a;
        int kept = 0;
        if (pred) {
            rfx_rx_eval_batch(pred, rows, a, n, all, v, div0);
            for (int j = 0; j < n; j++) {
                keep[j] = v[j] != 0;
                if (keep[j])
                    at[kept++] = j;
            }
        } else {
            memset(keep, 1, (size_t)n);
            for (int j = 0; j < n; j++)
                at[j] = j;
            kept = n;
        }
        uint32_t *o = dst + w * (size_t)nout;
        for (int x = 0; x < nout; x++) {
            if (outs && outs[x] && outs[x]->kind != RFX_RX_COL) {
                rfx_rx_eval_batch(outs[x], rows, a, n, keep, v, div0);
                for (int q = 0; q < kept; q++)
                    o[(size_t)q * (size_t)nout + (size_t)x] = (uint32_t)v[at[q]];
            } else {
                const int col = outs && outs[x] ? outs[x]->col : x;
                for (int q = 0; q < kept; q++)
                    o[(size_t)q * (size_t)nout + (size_t)x] = rows[(size_t)at[q] * (size_t)a + (size_t)col];
            }
        }
        w += (size_t)kept;
    }
    return w;
}

/* Whether pred and every output can go by batches. */
static bool batchable(const rfx_rx *pred, rfx_rx *const *outs, int nout)
{
    if (pred && !rfx_rx_batchable(pred))
        return false;
    for (int x = 0; outs && x < nout; x++)
        if (outs[x] && !rfx_rx_batchable(outs[x]))
            return false;
    return true;
}

static void map_chunk(int c, void *arg)
{
    map_ctx *m = arg;
    int a = m->src->arity, no = m->nout;
    size_t lo = m->bounds[c], hi = m->bounds[c + 1], w = lo;
    bool div0 = false;
    if (m->batch) {
        w = map_batches(m->src, lo, hi, m->pred, m->out, no, m->dst->data, lo, &div0);
        m->count[c] = w - lo;
        if (div0)
            atomic_store(&m->div0, true);
        return;
    }
    for (size_t i = lo; i < hi; i++) {
        const uint32_t *t = m->src->data + i * (size_t)a;
        if (m->pred && !rfx_rx_eval(m->pred, t, a, NULL, &div0))
            continue;
        uint32_t *o = m->dst->data + w * (size_t)no;
        if (m->cols)
            for (int k = 0; k < no; k++)
                o[k] = t[m->cols[k]];
        else
            for (int k = 0; k < no; k++)
                o[k] = rfx_rx_eval(m->out[k], t, a, NULL, &div0);
        w++;
    }
    m->count[c] = w - lo;
    if (div0)
        atomic_store(&m->div0, true);
}

static const int *plain_columns(rfx_rx *const *out, int nout, int *buf)
{
    for (int k = 0; k < nout; k++) {
        if (out[k]->kind != RFX_RX_COL)
            return NULL;
        buf[k] = out[k]->col;
    }
    return buf;
}

rfx_status rfx_cpu_mapfilter(const rfx_rows *src, const rfx_rx *pred, rfx_rx *const *out, int nout,
                             rfx_rows *dst, int nthreads)
{
    rfx_status st = rows_resize(dst, nout, src->n);
    if (st)
        return st;
    if (nout == 0) {
        /* nullary output: one empty tuple per passing input tuple */
        size_t k = 0;
        bool div0 = false;
        for (size_t i = 0; i < src->n; i++)
            k += !pred || rfx_rx_eval(pred, src->data + i * (size_t)src->arity, src->arity, NULL, &div0);
        dst->n = k;
        return div0 ? RFX_ERR_DIV0 : RFX_OK;
    }
    int c = chunks_for(src->n, nthreads);
    size_t *bounds = rfx_malloc(sizeof(size_t) * (size_t)(c + 1)), *count = rfx_malloc(sizeof(size_t) * (size_t)c);
    int *colbuf = rfx_malloc(sizeof(int) * (size_t)(nout + 1));
    if (!bounds || !count || !colbuf) {
        free(bounds);
        free(count);
        free(colbuf);
        return RFX_ERR_NOMEM;
    }
    for (int i = 0; i <= c; i++)
        bounds[i] = src->n * (size_t)i / (size_t)c;
    const int *cols = plain_columns(out, nout, colbuf);
    map_ctx m = {src, pred, out, nout, cols, dst, bounds, count, false, !(cols && !pred) && batchable(pred, out, nout)};
    rfx_parallel_for(c, nthreads, map_chunk, &m);
    dst->n = compact_chunks(dst->data, nout, bounds, count, c);
    free(bounds);
    free(count);
    free(colbuf);
    return atomic_load(&m.div0) ? RFX_ERR_DIV0 : RFX_OK;
}

/* ---- join ------------------------------------------------------------------------------- */
typedef struct join_ctx {
    const rfx_rows *a, *b;
    int k;
    const rfx_rx *pre;         /* over a's row alone, tested once a row before its matches */
    const rfx_rx *pred;
    rfx_rx *const *out;
    int nout;
    const int *cols;
    size_t *bounds;
    rfx_rows *parts;           /* per chunk output */
    set_part *sets;            /* per chunk, where the output is read as a set; else NULL */
    atomic_int err;            /* rfx_status */
    bool first_only;           /* a row of a stops at its first match (first_match_will_do) */
    int down;                  /* first_only: 1 (-1) where a witness is likelier among b's larger
                                * (smaller) values of its first column past the keys, 0 where no
                                * comparison says (witness_side) */
    bool signed_order;         /* that column holds numbers: its rows' bit order puts negatives last */
    bool probe;                /* a in any order: each row's group in b found by its own search */
    bool ranged;               /* b sorted on column k within key groups: each row's matches
                                * searched within range (rfx_rx_range_of), in b's order */
    rfx_rx_range range;
} join_ctx;

/* For an existential join over keys k (a of arity aa): whether pred compares a column of a
 * with b's first column past the keys (within a key group b's rows are in its order) so
 * that larger values of it (1) or smaller ones (-1) are the ones that can pass, as in a
 * subsumption's `a < b`; 0 where no conjunct of pred says. *is_signed: the comparison is of
 * numbers (signed). Only the order in which a row's group is searched follows from it. */
static int witness_side(const rfx_rx *pred, int aa, int k, bool *is_signed)
{
    if (!pred)
        return 0;
    if (pred->kind == RFX_RX_AND) {
        int d = witness_side(pred->l, aa, k, is_signed);
        return d ? d : witness_side(pred->r, aa, k, is_signed);
    }
    if (pred->kind != RFX_RX_CMP || (pred->prim != RFX_NUMBER && pred->prim != RFX_UNSIGNED) ||
        pred->l->kind != RFX_RX_COL || pred->r->kind != RFX_RX_COL)
        return 0;
    int l = pred->l->col, r = pred->r->col, dir;
    if (l < aa && r == aa + k)   /* a's value op b's */
        dir = pred->op == RFX_LT || pred->op == RFX_LE ? 1 : pred->op == RFX_GT || pred->op == RFX_GE ? -1 : 0;
    else if (r < aa && l == aa + k)   /* b's value op a's */
        dir = pred->op == RFX_GT || pred->op == RFX_GE ? 1 : pred->op == RFX_LT || pred->op == RFX_LE ? -1 : 0;
    else
        return 0;
    *is_signed = pred->prim == RFX_NUMBER;
    return dir;
}

/* The first of rows [lo, hi) (of arity a, in order of column col) whose value in col is
 * negative as a number (its bit 31 set: those come last); hi where none is. */
static size_t first_negative(const uint32_t *rows, int a, size_t lo, size_t hi, int col)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rows[mid * (size_t)a + col] >> 31)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The q-th row (0 <= q < n) of b's key group [y, y + n) in the order join_chunk searches it:
 * as stored, or by the column past the keys descending (down = 1) or ascending (down = -1)
 * as numbers: in bit order, a group's values of a signed column are 0..INT_MAX and then
 * -2^31..-1, split at s (its first negative row). */
static size_t search_row(const join_ctx *j, size_t y, size_t n, size_t s, size_t q)
{
    if (!j->down)
        return y + q;
    size_t pos = s - y, neg = y + n - s;   /* rows at or above zero, below */
    if (!j->signed_order)
        return j->down > 0 ? y + n - 1 - q : y + q;
    if (j->down > 0)   /* numbers descending: the non-negative ones from the top, then the rest */
        return q < pos ? s - 1 - q : y + n - 1 - (q - pos);
    return q < neg ? s + q : y + (q - neg);   /* ascending: negatives first */
}

/* Whether a join may give each row of a (arity aa) its first passing match only: its
 * output is read as a set and reads a's columns alone, so every later match of the row
 * would repeat that output; and the predicate cannot fail on a pair left untested. An
 * existential join (a subsumption's "some tuple dominates this one", any rule whose other
 * atoms only test) then stops at a witness instead of listing every one. */
static bool first_match_will_do(const rfx_rx *pred, rfx_rx *const *out, int nout, int aa, bool as_set)
{
    if (!as_set || nout == 0 || rfx_rx_may_fail(pred))
        return false;
    for (int x = 0; x < nout; x++)
        if (rfx_rx_max_col(out[x]) >= aa)
            return false;
    return true;
}

static inline bool emit_pair(join_ctx *j, rfx_rows *o, const uint32_t *ta, const uint32_t *tb, bool *div0)
{
    int aa = j->a->arity;
    if (j->pred && !rfx_rx_eval(j->pred, ta, aa, tb, div0))
        return true;
    if (j->nout == 0) {
        o->n++;
        return true;
    }
    if (!rfx_set_part_room(o, j->sets ? &j->sets[o - j->parts] : NULL))
        return false;
    uint32_t *w = o->data + o->n * (size_t)j->nout;
    if (j->cols) {
        for (int x = 0; x < j->nout; x++) {
            int c = j->cols[x];
            w[x] = c < aa ? ta[c] : tb[c - aa];
        }
    } else
        for (int x = 0; x < j->nout; x++)
            w[x] = rfx_rx_eval(j->out[x], ta, aa, tb, div0);
    o->n++;
    return true;
}

/* Row p of a with each row of its key group [y, ye) of b (pre tested first); false where
 * the output could not grow (the error is set). */
/* The first row of [lo, hi) (b's rows, arity ba, in order of column col) whose value in col
 * is above v (above: > v, else >= v). */
static size_t col_bound(const uint32_t *b, int ba, size_t lo, size_t hi, int col, uint32_t v, bool above)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t x = b[mid * (size_t)ba + col];
        if (above ? x <= v : x < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool join_row(join_ctx *j, rfx_rows *o, size_t p, size_t y, size_t ye, bool *div0)
{
    const rfx_rows *A = j->a, *B = j->b;
    int aa = A->arity, ba = B->arity;
    const uint32_t *ta = A->data + p * (size_t)aa;
    if (j->pre && !rfx_rx_eval(j->pre, ta, aa, NULL, div0))
        return true;
    if (j->ranged) {   /* the group narrowed to the row's range of column k */
        uint32_t lo = j->range.lo ? (uint32_t)rfx_rx_eval(j->range.lo, ta, aa, NULL, div0) : 0;
        uint32_t hi = j->range.hi ? (uint32_t)rfx_rx_eval(j->range.hi, ta, aa, NULL, div0) : 0, blo, bhi;
        const rfx_rx_range *r = &j->range;
        if (!rfx_range_bits(r->is_signed, r->lo, lo, r->lo_strict, r->hi, hi, r->hi_strict, &blo, &bhi))
            return true;
        y = col_bound(B->data, ba, y, ye, j->k, blo, false);
        ye = col_bound(B->data, ba, y, ye, j->k, bhi, true);
    }
    size_t s = j->down && j->signed_order ? first_negative(B->data, ba, y, ye, j->k) : ye;
    for (size_t q = 0, had = o->n; q < ye - y && !(j->first_only && o->n > had); q++)
        if (!emit_pair(j, o, ta, B->data + search_row(j, y, ye - y, s, q) * (size_t)ba, div0)) {
            atomic_store(&j->err, RFX_ERR_NOMEM);
            return false;
        }
    return true;
}

static void join_chunk(int c, void *arg)
{
    join_ctx *j = arg;
    const rfx_rows *A = j->a, *B = j->b;
    int aa = A->arity, ba = B->arity, k = j->k;
    rfx_rows *o = &j->parts[c];
    size_t i = j->bounds[c], ie = j->bounds[c + 1];
    bool div0 = false;
    if (i >= ie)
        return;
    if (k == 0) {
        for (; i < ie && B->n > 0; i++)   /* pre only on rows that meet a match */
            if (!join_row(j, o, i, 0, B->n, &div0))
                return;
        goto done;
    }
    if (j->probe) {   /* rows in any order: each searched from the start of b */
        for (; i < ie; i++) {
            const uint32_t *ta = A->data + i * (size_t)aa;
            size_t y = lower_bound(B->data, ba, 0, B->n, ta, k);
            if (y < B->n && cmp_prefix(B->data + y * (size_t)ba, ta, k) == 0 &&
                !join_row(j, o, i, y, group_end(B->data, ba, y, B->n, k), &div0))
                return;
        }
        goto done;
    }
    size_t y = lower_bound(B->data, ba, 0, B->n, A->data + i * (size_t)aa, k);
    while (i < ie && y < B->n) {
        const uint32_t *ta = A->data + i * (size_t)aa, *tb = B->data + y * (size_t)ba;
        int cmp = cmp_prefix(ta, tb, k);
        if (cmp < 0) {
            i = gallop(A->data, aa, i, ie, tb, k);
            continue;
        }
        if (cmp > 0) {
            y = gallop(B->data, ba, y, B->n, ta, k);
            continue;
        }
        size_t ie2 = group_end(A->data, aa, i, ie, k), ye = group_end(B->data, ba, y, B->n, k);
        for (size_t p = i; p < ie2; p++)
            if (!join_row(j, o, p, y, ye, &div0))
                return;
        i = ie2;
        y = ye;
    }
done:
    if (j->sets)
        rfx_set_part_end(o, &j->sets[c]);
    if (div0)
        atomic_store(&j->err, RFX_ERR_DIV0);
}

double rfx_join_rows_estimate(const rfx_rows *a, const rfx_rows *b, int k, size_t samples)
{
    samples = samples < a->n ? samples : a->n;
    size_t matches = 0;
    for (size_t s = 0; s < samples; s++) {
        const uint32_t *key = a->data + (a->n * s / samples) * (size_t)a->arity;
        size_t lo = lower_bound(b->data, b->arity, 0, b->n, key, k);
        matches += bound(b->data, b->arity, lo, b->n, key, k, true) - lo;
    }
    return samples ? (double)matches * (double)a->n / (double)samples : 0;
}

/* A merge join's chunks: its work is its searches (galloping: a small side against a large
 * one costs the small side's searches, not the large side) and its output, estimated from
 * one row of a in 256, at most 16 (a sample costs two searches, few next to the join's own). */
static int join_chunks(const rfx_rows *a, const rfx_rows *b, int k, int nthreads)
{
    bool searching;
    size_t work = a->n < b->n ? gallop_work(a->n, b->n, &searching) : gallop_work(b->n, a->n, &searching);
    size_t out = (size_t)rfx_join_rows_estimate(a, b, k, a->n < 256 ? 1 : a->n < 4096 ? a->n / 256 : 16);
    /* skewed where groups differ: several chunks a thread */
    return searching && out < work ? chunks_for_searches(work + out, nthreads) : chunks_for(work + out, nthreads);
}

/* rfx_cpu_join with pre, a test of a's row alone, made once a row that has matches; probe:
 * a in any order (rfx_cpu_probe_join). */
static rfx_status join_rows(const rfx_rows *a, const rfx_rows *b, int k, const rfx_rx *pre, const rfx_rx *pred,
                            rfx_rx *const *out, int nout, bool as_set, bool probe, bool range, rfx_rows *dst,
                            int nthreads)
{
    rfx_rx_range rr;
    range = range && k < b->arity && rfx_rx_range_of(pred, a->arity, a->arity + k, &rr);
    int setcols[33];   /* a set made of plain columns that drop the keys: by groups where that pays */
    const int *sc = as_set && !pred && nout < 33 && !probe && !range ? plain_columns(out, nout, setcols) : NULL;
    if (sc && rfx_cpu_setjoin_fits(a->arity, b->arity, k, sc, nout) && rfx_cpu_setjoin_pays(a, b, k, sc, nout))
        return rfx_cpu_setjoin(a, b, k, pre, sc, nout, dst, nthreads);
    int c = a->n < 2 || nthreads < 2 ? 1 : k > 0 ? join_chunks(a, b, k, nthreads)
                                       : range ? chunks_for_searches(a->n * 64, nthreads)
                                               : chunks_for(a->n * (b->n < 1024 ? b->n : 1024), nthreads);
    if ((size_t)c > a->n)
        c = a->n ? (int)a->n : 1;
    /* one chunk (a small side, as a thin recursion's delta): no allocations besides the output */
    size_t bounds1[2];
    rfx_rows parts1[1] = {{0}};
    int colbuf1[33];
    size_t *bounds = c == 1 ? bounds1 : rfx_malloc(sizeof(size_t) * (size_t)(c + 1));
    rfx_rows *parts = c == 1 ? parts1 : rfx_calloc((size_t)c, sizeof(rfx_rows));
    int *colbuf = nout < 33 ? colbuf1 : rfx_malloc(sizeof(int) * (size_t)(nout + 1));
    set_part sets1[1], *sets = !as_set || nout == 0 ? NULL : c == 1 ? sets1 : rfx_malloc(sizeof(set_part) * (size_t)c);
    rfx_status st = RFX_OK;
    if (!bounds || !parts || !colbuf || (as_set && nout && !sets)) {
        st = RFX_ERR_NOMEM;
        goto out;
    }
    for (int i = 0; i < c; i++)
        rfx_rows_init(&parts[i], nout);
    if (sets)
        rfx_set_parts_init(sets, c, nout);
    rfx_split_groups(a, probe ? 0 : k, c, bounds);
    join_ctx j = {a, b, k, pre, pred, out, nout, plain_columns(out, nout, colbuf), bounds, parts, sets, RFX_OK,
                  first_match_will_do(pred, out, nout, a->arity, as_set), 0, false, probe, range,
                  range ? rr : (rfx_rx_range){0}};
    if (j.first_only && k > 0 && b->arity > k && !range)
        j.down = witness_side(pred, a->arity, k, &j.signed_order);
    if (nout == 0) {
        /* nullary output: only whether any pair matches */
        rfx_rows tmp;
        rfx_rows_init(&tmp, 0);
        st = rows_resize(dst, 0, 0);
        if (st)
            goto out;
        for (int i = 0; i < c; i++)
            join_chunk(i, &j);
        for (int i = 0; i < c; i++)
            dst->n += parts[i].n;
        st = (rfx_status)atomic_load(&j.err);
        goto out;
    }
    rfx_parallel_for(c, nthreads, join_chunk, &j);
    st = (rfx_status)atomic_load(&j.err);
    if (st == RFX_OK)
        st = rfx_join_parts(parts, sets, c, nout, dst, nthreads);
out:
    if (parts)
        for (int i = 0; i < c; i++)
            rfx_rows_free(&parts[i]);
    if (c > 1) {
        free(parts);
        free(bounds);
        free(sets);
    }
    if (colbuf != colbuf1)
        free(colbuf);
    return st;
}

rfx_status rfx_cpu_join(const rfx_rows *a, const rfx_rows *b, int k, const rfx_rx *pred,
                        rfx_rx *const *out, int nout, bool as_set, rfx_rows *dst, int nthreads)
{
    return join_rows(a, b, k, NULL, pred, out, nout, as_set, false, false, dst, nthreads);
}

/* Searches of a's rows in b pay where a is few: next to b (its rows' searches land far apart
 * whatever its order) or alone (a thin recursion's delta: a sort's passes cost more than
 * its searches); else a sorted first and merged reads each side once, and the merge join
 * makes a key group's output a set where that pays. */
#define PROBE_FEW_ROWS 4096
#define PROBE_FEW_RATIO 64

static rfx_status probe_join(const rfx_rows *a, const rfx_rows *b, int k, const rfx_rx *pred, rfx_rx *const *out,
                             int nout, bool as_set, bool range, rfx_rows *dst, int nthreads)
{
    if (k == 0 || a->n <= PROBE_FEW_ROWS || a->n <= b->n / PROBE_FEW_RATIO)
        return join_rows(a, b, k, NULL, pred, out, nout, as_set, k > 0, range, dst, nthreads);
    rfx_rows sorted;
    rfx_rows_init(&sorted, a->arity);
    rfx_status st = rows_resize(&sorted, a->arity, a->n);
    if (st == RFX_OK) {
        rfx_memcpy(sorted.data, a->data, sizeof(uint32_t) * (size_t)a->arity * a->n);
        st = rfx_cpu_sort_leading(&sorted, k, nthreads);   /* on the keys alone: the merge needs no more */
    }
    if (st == RFX_OK)
        st = join_rows(&sorted, b, k, NULL, pred, out, nout, as_set, false, range, dst, nthreads);
    rfx_rows_free(&sorted);
    return st;
}

rfx_status rfx_cpu_probe_join(const rfx_rows *a, const rfx_rows *b, int k, const rfx_rx *pred,
                              rfx_rx *const *out, int nout, bool as_set, rfx_rows *dst, int nthreads)
{
    return probe_join(a, b, k, pred, out, nout, as_set, false, dst, nthreads);
}

rfx_status rfx_cpu_range_join(const rfx_rows *a, const rfx_rows *b, int k, const rfx_rx *pred, rfx_rx *const *out,
                              int nout, bool as_set, bool probe, rfx_rows *dst, int nthreads)
{
    if (probe)
        return probe_join(a, b, k, pred, out, nout, as_set, true, dst, nthreads);
    return join_rows(a, b, k, NULL, pred, out, nout, as_set, false, true, dst, nthreads);
}

/* ---- union (merge of sorted sets) --------------------------------------------------------- */
typedef struct union_ctx {
    const rfx_rows *a, *b;
    size_t *abounds, *bbounds, *count, *start;
    rfx_rows *dst;
    bool write;
} union_ctx;

static void union_chunk(int c, void *arg)
{
    union_ctx *u = arg;
    int ar = u->a->arity;
    size_t i = u->abounds[c], ie = u->abounds[c + 1], j = u->bbounds[c], je = u->bbounds[c + 1];
    const uint32_t *A = u->a->data, *B = u->b->data;
    /* each row of the smaller side finds its place in the larger by galloping, and the
     * larger side's rows before it are copied as one block: a small delta merged into a
     * large relation costs its searches and a copy, not a comparison per row */
    bool a_small = ie - i < je - j;
    const uint32_t *S = a_small ? A : B, *L = a_small ? B : A;
    size_t s = a_small ? i : j, se = a_small ? ie : je, l = a_small ? j : i, le = a_small ? je : ie;
    size_t w = 0;
    uint32_t *o = u->write ? u->dst->data + u->start[c] * (size_t)ar : NULL;
    size_t bytes = sizeof(uint32_t) * (size_t)ar;
    for (; s < se; s++) {
        const uint32_t *t = S + s * (size_t)ar;
        size_t p = gallop(L, ar, l, le, t, ar);
        if (o && p > l)
            rfx_memcpy(o + w * (size_t)ar, L + l * (size_t)ar, bytes * (p - l));
        w += p - l;
        l = p;
        if (l < le && cmp_prefix(L + l * (size_t)ar, t, ar) == 0)
            l++;   /* in both: written once */
        if (o)
            rfx_memcpy(o + w * (size_t)ar, t, bytes);
        w++;
    }
    if (o && le > l)
        rfx_memcpy(o + w * (size_t)ar, L + l * (size_t)ar, bytes * (le - l));
    w += le - l;
    u->count[c] = w;
}

rfx_status rfx_cpu_union(const rfx_rows *a, const rfx_rows *b, rfx_rows *dst, int nthreads)
{
    int ar = a->arity;
    if (ar == 0) {
        rfx_status st = rows_resize(dst, 0, a->n || b->n ? 1 : 0);
        return st;
    }
    if (b->n == 0 || a->n == 0) {
        const rfx_rows *src = b->n == 0 ? a : b;
        if (src == dst)
            return RFX_OK;
        rfx_status st = rows_resize(dst, ar, src->n);
        if (st)
            return st;
        if (src->n)
            rfx_memcpy(dst->data, src->data, sizeof(uint32_t) * (size_t)ar * src->n);
        return RFX_OK;
    }
    int c = chunks_for(a->n + b->n, nthreads);
    size_t *mem = rfx_malloc(sizeof(size_t) * (size_t)(4 * c + 4));
    if (!mem)
        return RFX_ERR_NOMEM;
    size_t *ab = mem, *bb = mem + c + 1, *count = mem + 2 * c + 2, *start = mem + 3 * c + 3;
    for (int i = 0; i <= c; i++) {
        ab[i] = a->n * (size_t)i / (size_t)c;
        bb[i] = i == c ? b->n : lower_bound(b->data, ar, 0, b->n, a->data + ab[i] * (size_t)ar, ar);
    }
    bb[0] = 0;
    union_ctx u = {a, b, ab, bb, count, start, NULL, false};
    rfx_parallel_for(c, nthreads, union_chunk, &u);
    size_t total = 0;
    for (int i = 0; i < c; i++) {
        start[i] = total;
        total += count[i];
    }
    rfx_rows out;
    rfx_rows_init(&out, ar);
    rfx_status st = rows_resize(&out, ar, total);
    if (st) {
        free(mem);
        return st;
    }
    u.dst = &out;
    u.write = true;
    rfx_parallel_for(c, nthreads, union_chunk, &u);
    rfx_rows_free(dst);
    *dst = out;
    free(mem);
    return RFX_OK;
}

/* ---- semi-join and anti-join ---------------------------------------------------------------- */
typedef struct semi_ctx {
    const rfx_rows *a;
    const rfx_rows *const *bs;
    int nb, k;
    bool keep;
    size_t *bounds, *count;
    rfx_rows *dst;
} semi_ctx;

enum { SEMI_MAX_SETS = 64 };

/* Runs fn over c chunks of s->a's rows (cut between groups of equal first k columns, or
 * evenly by_rows), each writing the rows it keeps at its start in s->dst; s->dst, those
 * rows together, then becomes dst (which may be s->a). s->bounds and s->count are set here. */
static rfx_status semi_chunks(semi_ctx *s, int c, bool by_rows, void (*fn)(int, void *), rfx_rows *dst, int nthreads)
{
    size_t one[2], cnt1, n = s->a->n;
    size_t *bounds = c == 1 ? one : rfx_malloc(sizeof(size_t) * (size_t)(c + 1));
    size_t *count = c == 1 ? &cnt1 : rfx_malloc(sizeof(size_t) * (size_t)c);
    if (!bounds || !count) {
        if (c > 1) {
            free(bounds);
            free(count);
        }
        rfx_rows_free(s->dst);
        return RFX_ERR_NOMEM;
    }
    if (by_rows)
        for (int i = 0; i <= c; i++)
            bounds[i] = n / (size_t)c * (size_t)i + (n % (size_t)c) * (size_t)i / (size_t)c;
    else
        rfx_split_groups(s->a, s->k, c, bounds);
    s->bounds = bounds;
    s->count = count;
    rfx_parallel_for(c, nthreads, fn, s);
    s->dst->n = compact_chunks(s->dst->data, s->dst->arity, bounds, count, c);
    rfx_rows kept = *s->dst;
    rfx_rows_free(dst);
    *dst = kept;
    if (c > 1) {
        free(bounds);
        free(count);
    }
    return RFX_OK;
}
/* Sets a probe searches row by row while they fit a host's last-level cache, about. */
enum { PROBE_CACHE_BYTES = 32 << 20 };

static void semi_chunk(int c, void *arg)
{
    semi_ctx *s = arg;
    int ar = s->a->arity, k = s->k;
    const uint32_t *A = s->a->data;
    size_t i = s->bounds[c], ie = s->bounds[c + 1], w = i;
    size_t y[SEMI_MAX_SETS];
    const rfx_rows *bs[SEMI_MAX_SETS];
    int nb = 0;
    /* only the sets whose range meets this chunk's: a run of a relation grown in key order
     * (a chain's reach) lies wholly before the chunk, and costs no search */
    for (int b = 0; b < s->nb && i < ie; b++) {
        const rfx_rows *B = s->bs[b];
        if (!B->n || cmp_prefix(B->data + (B->n - 1) * (size_t)k, A + i * (size_t)ar, k) < 0 ||
            cmp_prefix(B->data, A + (ie - 1) * (size_t)ar, k) > 0)
            continue;
        bs[nb] = B;
        y[nb++] = lower_bound(B->data, k, 0, B->n, A + i * (size_t)ar, k);
    }
    size_t bytes = sizeof(uint32_t) * (size_t)ar;
    while (i < ie) {
        const uint32_t *t = A + i * (size_t)ar;
        bool found = false;
        for (int b = 0; b < nb && !found; b++) {
            const uint32_t *B = bs[b]->data;
            size_t n = bs[b]->n;
            y[b] = gallop(B, k, y[b], n, t, k);
            found = y[b] < n && cmp_prefix(B + y[b] * (size_t)k, t, k) == 0;
        }
        size_t ge = group_end(A, ar, i, ie, k);
        if (found == s->keep) {
            if (w != i)
                memmove(s->dst->data + w * (size_t)ar, t, bytes * (ge - i));
            w += ge - i;
        }
        i = ge;
    }
    s->count[c] = w - s->bounds[c];
}

rfx_status rfx_cpu_semijoin_sets(const rfx_rows *a, const rfx_rows *const *bs, int nb, int k, bool keep,
                                 rfx_rows *dst, int nthreads)
{
    int ar = a->arity;
    size_t bn = 0;
    for (int b = 0; b < nb; b++)
        bn += bs[b]->n;
    if (nb > SEMI_MAX_SETS)
        return RFX_ERR_LIMIT;
    if (k == 0) {
        /* prefix of length 0: every tuple matches iff some b is non-empty */
        bool all = (bn > 0) == keep;
        rfx_status st = rows_resize(dst, ar, all ? a->n : 0);
        if (st || !all || dst == a)
            return st;
        if (ar && a->n)
            rfx_memcpy(dst->data, a->data, sizeof(uint32_t) * (size_t)ar * a->n);
        return RFX_OK;
    }
    rfx_rows out;
    rfx_rows_init(&out, ar);
    bool reuse = dst != a && dst->arity == ar && dst->cap >= a->n;
    for (int b = 0; b < nb; b++)
        reuse &= bs[b] != dst;
    if (reuse)
        rfx_rows_swap(&out, dst);   /* its buffer reused */
    rfx_status st = rows_resize(&out, ar, a->n);
    if (st)
        return st;
    if (a->n)
        rfx_memcpy(out.data, a->data, sizeof(uint32_t) * (size_t)ar * a->n);
    /* galloping skips most of b's far larger than a: the work follows a, a search of
     * each set per tuple (the largest set's about the log of how much larger it is) */
    bool searching;
    size_t work = gallop_work(a->n, bn, &searching) + a->n * (size_t)(nb - 1);
    int c = searching ? chunks_for_searches(work, nthreads) : chunks_for(work, nthreads);
    semi_ctx s = {&out, bs, nb, k, keep, NULL, NULL, &out};
    return semi_chunks(&s, c, false, semi_chunk, dst, nthreads);
}

rfx_status rfx_cpu_semijoin(const rfx_rows *a, const rfx_rows *b, int k, bool keep, rfx_rows *dst,
                            int nthreads)
{
    return rfx_cpu_semijoin_sets(a, &b, 1, k, keep, dst, nthreads);
}

/* A chunk of a's rows (in any order), each searched in every set on its own; the rows
 * kept are written at the chunk's start in dst. A row whose key equals the row's before
 * takes that row's answer: rows of one key often come together. dst is not a. */
static void probe_chunk(int c, void *arg)
{
    semi_ctx *s = arg;
    int ar = s->a->arity, k = s->k;
    const uint32_t *A = s->a->data, *last = NULL;
    uint32_t *D = s->dst->data;
    size_t w = s->bounds[c];
    bool found = false;
    for (size_t i = s->bounds[c]; i < s->bounds[c + 1]; i++) {
        const uint32_t *t = A + i * (size_t)ar;
        if (!last || cmp_prefix(last, t, k) != 0) {
            found = false;
            for (int b = 0; b < s->nb && !found; b++) {
                const rfx_rows *B = s->bs[b];
                size_t y = lower_bound(B->data, k, 0, B->n, t, k);
                found = y < B->n && cmp_prefix(B->data + y * (size_t)k, t, k) == 0;
            }
            last = t;
        }
        if (found == s->keep) {
            memcpy(D + w * (size_t)ar, t, sizeof(uint32_t) * (size_t)ar);
            w++;
        }
    }
    s->count[c] = w - s->bounds[c];
}

rfx_status rfx_cpu_probe_sets(const rfx_rows *a, const rfx_rows *const *bs, int nb, int k, bool keep, bool optional,
                              rfx_rows *dst, int nthreads)
{
    int ar = a->arity;
    if (k == 0 || a->n == 0)   /* nothing to search row by row: as a sorted a */
        return rfx_cpu_semijoin_sets(a, bs, nb, k, keep, dst, nthreads);
    size_t bn = 0;
    for (int b = 0; b < nb; b++)
        bn += bs[b]->n;
    rfx_rows out;
    rfx_rows_init(&out, ar);
    rfx_status st;
    if (bn * (size_t)k * sizeof(uint32_t) > PROBE_CACHE_BYTES && a->n > bn / 8) {
        /* a search is a chain of cache misses once the sets outgrow the cache: where they
         * do and a is not far smaller, a copy of a sorted on the keys merges with them; an
         * optional filter (its rows meet nothing later) keeps them all instead */
        if (optional && a == dst)
            return RFX_OK;
        if ((st = rows_resize(&out, ar, a->n)) != RFX_OK)
            return st;
        rfx_parallel_memcpy(out.data, a->data, sizeof(uint32_t) * (size_t)ar * a->n, nthreads);
        if (optional) {
            rfx_rows_free(dst);
            *dst = out;
            return RFX_OK;
        }
        if ((st = rfx_cpu_sort_leading(&out, k, nthreads)) == RFX_OK)
            st = rfx_cpu_semijoin_sets(&out, bs, nb, k, keep, dst, nthreads);
        rfx_rows_free(&out);
        return st;
    }
    bool reuse = dst != a && dst->arity == ar && dst->cap >= a->n;
    for (int b = 0; b < nb; b++)
        reuse &= bs[b] != dst;
    if (reuse)
        rfx_rows_swap(&out, dst);   /* its buffer reused */
    if ((st = rows_resize(&out, ar, a->n)) != RFX_OK)
        return st;
    bool searching;
    int c = chunks_for_searches(gallop_work(a->n, bn, &searching) + a->n * (size_t)nb, nthreads);
    semi_ctx s = {a, bs, nb, k, keep, NULL, NULL, &out};
    return semi_chunks(&s, c, true, probe_chunk, dst, nthreads);
}

/* ---- aggregate -------------------------------------------------------------------------------- */
rfx_status rfx_cpu_aggregate(const rfx_rows *a, const rfx_rows *b, int k, rfx_aggfn fn, int col,
                             rfx_prim prim, rfx_rows *dst)
{
    int ar = a->arity, br = b->arity;
    const bool wide = RFX_PRIM_WIDE(prim) && fn != RFX_AGG_COUNT;   /* a result of two words */
    bool overflow = false;
    uint64_t val64 = 0;
    rfx_rows out;
    rfx_rows_init(&out, ar + 1 + wide);
    rfx_status st = rfx_rows_reserve(&out, a->n);
    if (st)
        return st;
    size_t y = 0, gs = 0, ge = 0;
    bool have = false;
    uint32_t val = 0;
    const uint32_t *last = NULL;
    for (size_t i = 0; i < a->n; i++) {
        const uint32_t *t = a->data ? a->data + i * (size_t)ar : NULL;
        if (!last || cmp_prefix(last, t, k) != 0) {
            /* a new group key: find its run in b and fold it */
            if (k == 0) {
                gs = 0;
                ge = b->n;
            } else {
                y = gallop(b->data, br, y, b->n, t, k);
                gs = y;
                ge = (y < b->n && cmp_prefix(b->data + y * (size_t)br, t, k) == 0) ? group_end(b->data, br, y, b->n, k) : y;
                y = ge;
            }
            have = ge > gs || fn == RFX_AGG_COUNT || fn == RFX_AGG_SUM;
            if (wide && have)
                val64 = rfx_agg_fold64(fn, prim, b->data, (size_t)br, col, gs, ge, &overflow);   /* run by run (rx_ops.h) */
            else if (fn == RFX_AGG_COUNT)
                val = (uint32_t)(ge - gs);
            else if (fn == RFX_AGG_SUM || (fn == RFX_AGG_MEAN && ge > gs)) {
                val = 0;
                for (size_t q = gs; q < ge; q++)
                    val = rfx_agg_step(fn, prim, val, b->data[q * (size_t)br + col]);
                val = rfx_agg_finish(fn, val, ge - gs);
            } else if (ge > gs) {
                val = b->data[gs * (size_t)br + col];
                for (size_t q = gs + 1; q < ge; q++)
                    val = rfx_agg_step(fn, prim, val, b->data[q * (size_t)br + col]);
            }
            last = t ? t : (const uint32_t *)&val;
        }
        if (!have)
            continue;
        uint32_t *w = out.data + out.n * (size_t)(ar + 1 + wide);
        if (ar)
            rfx_memcpy(w, t, sizeof(uint32_t) * (size_t)ar);
        w[ar] = wide ? (uint32_t)(val64 >> 32) : val;
        if (wide)
            w[ar + 1] = (uint32_t)val64;
        out.n++;
    }
    if (overflow) {   /* an exact sum or none: the run stops, naming the rule (exec.c) */
        rfx_rows_free(&out);
        return RFX_ERR_DIV0;
    }
    rfx_rows_free(dst);
    *dst = out;
    return RFX_OK;
}

/* ---- fused groups (weaver/): one pass over the input ------------------------------------- */
typedef struct multi_ctx {
    const rfx_rows *src;
    int nouts;
    const rfx_rx *const *preds;
    rfx_rx *const *const *outs;
    const int *nout;
    rfx_rows *const *dsts;
    size_t *bounds, *count;    /* count: per chunk, per output */
    atomic_bool div0;
    bool batch;                /* output by output, by batches of rows (map_batches) */
} multi_ctx;

/* Rows [lo, hi) of a chunk one by one, each through every output (functors count in row
 * order); w[k]: where output k's next row goes. */
static void multi_rows(multi_ctx *m, size_t lo, size_t hi, size_t *w, bool *div0)
{
    int a = m->src->arity;
    for (size_t i = lo; i < hi; i++) {
        const uint32_t *t = m->src->data + i * (size_t)a;
        for (int k = 0; k < m->nouts; k++) {
            if (m->preds[k] && !rfx_rx_eval(m->preds[k], t, a, NULL, div0))
                continue;
            int no = m->nout[k];
            if (!no) {
                w[k]++;
                continue;
            }
            uint32_t *o = m->dsts[k]->data + w[k]++ * (size_t)no;
            for (int x = 0; x < no; x++)
                o[x] = m->outs[k] && m->outs[k][x] ? rfx_rx_eval(m->outs[k][x], t, a, NULL, div0) : t[x];
        }
    }
}

static void multi_chunk(int c, void *arg)
{
    multi_ctx *m = arg;
    size_t lo = m->bounds[c], hi = m->bounds[c + 1];
    size_t w[RFX_FUSED_MAX_OUTS];
    for (int k = 0; k < m->nouts; k++)
        w[k] = lo;
    bool div0 = false;
    if (m->batch)   /* output by output, each by batches */
        for (int k = 0; k < m->nouts; k++)
            w[k] = map_batches(m->src, lo, hi, m->preds[k], m->outs[k], m->nout[k], m->dsts[k]->data, lo, &div0);
    else
        multi_rows(m, lo, hi, w, &div0);
    for (int k = 0; k < m->nouts; k++)
        m->count[(size_t)c * (size_t)m->nouts + (size_t)k] = w[k] - lo;
    if (div0)
        atomic_store(&m->div0, true);
}

rfx_status rfx_cpu_mapfilter_multi(const rfx_rows *src, int nouts, const rfx_rx *const *preds,
                                   rfx_rx *const *const *outs, const int *nout, rfx_rows *const *dsts, int nthreads)
{
    if (nouts < 1 || nouts > RFX_FUSED_MAX_OUTS)
        return RFX_ERR_INTERNAL;
    for (int k = 0; k < nouts; k++) {
        rfx_status st = rows_resize(dsts[k], nout[k], src->n);
        if (st)
            return st;
    }
    int c = chunks_for(src->n, nthreads);
    size_t *bounds = rfx_malloc(sizeof(size_t) * (size_t)(c + 1));
    size_t *count = rfx_malloc(sizeof(size_t) * (size_t)c * (size_t)nouts);
    size_t *col = rfx_malloc(sizeof(size_t) * (size_t)c);
    rfx_status st = RFX_OK;
    if (!bounds || !count || !col)
        st = RFX_ERR_NOMEM;
    if (st == RFX_OK) {
        for (int i = 0; i <= c; i++)
            bounds[i] = src->n * (size_t)i / (size_t)c;
        bool batch = true;
        for (int k = 0; k < nouts; k++)
            batch &= batchable(preds[k], outs[k], nout[k]);
        multi_ctx m = {src, nouts, preds, outs, nout, dsts, bounds, count, false, batch};
        rfx_parallel_for(c, nthreads, multi_chunk, &m);
        for (int k = 0; k < nouts; k++) {
            for (int i = 0; i < c; i++)
                col[i] = count[(size_t)i * (size_t)nouts + (size_t)k];
            dsts[k]->n = compact_chunks(dsts[k]->data, nout[k], bounds, col, c);
        }
        if (atomic_load(&m.div0))
            st = RFX_ERR_DIV0;
    }
    free(bounds);
    free(count);
    free(col);
    return st;
}

typedef struct star_ctx {
    const rfx_rows *const *srcs;
    int nsrc, k, width;
    const rfx_rx *pre, *pred;
    rfx_rx *const *out;
    int nout;
    const int *cols;           /* when every output is a column: their indices */
    size_t *bounds;
    rfx_rows *parts;
    set_part *sets;            /* per chunk, where the output is read as a set; else NULL */
    atomic_int err;
} star_ctx;

/* Every combination of the sources' rows in [lo[s], hi[s]) for s >= 1 with row i of the
 * first, as one concatenated tuple. */
static bool star_emit(star_ctx *j, rfx_rows *o, uint32_t *t, const size_t *lo, const size_t *hi, bool *div0)
{
    size_t idx[RFX_FUSED_MAX_SRCS];
    int ns = j->nsrc;
    for (int s = 1; s < ns; s++)
        if ((idx[s] = lo[s]) >= hi[s])
            return true;
    int off = j->srcs[0]->arity;
    for (;;) {
        int at = off;
        for (int s = 1; s < ns; s++) {
            int a = j->srcs[s]->arity;
            if (a)
                rfx_memcpy(t + at, j->srcs[s]->data + idx[s] * (size_t)a, sizeof(uint32_t) * (size_t)a);
            at += a;
        }
        if (!j->pred || rfx_rx_eval(j->pred, t, j->width, NULL, div0)) {
            if (!rfx_set_part_room(o, j->sets ? &j->sets[o - j->parts] : NULL))
                return false;
            uint32_t *w = o->data + o->n * (size_t)j->nout;
            if (j->cols)
                for (int x = 0; x < j->nout; x++)
                    w[x] = t[j->cols[x]];
            else
                for (int x = 0; x < j->nout; x++)
                    w[x] = rfx_rx_eval(j->out[x], t, j->width, NULL, div0);
            o->n++;
        }
        int s = ns - 1;
        while (s >= 1 && ++idx[s] == hi[s]) {
            idx[s] = lo[s];
            s--;
        }
        if (s < 1)
            return true;
    }
}

static void star_chunk(int c, void *arg)
{
    star_ctx *j = arg;
    const rfx_rows *A = j->srcs[0];
    uint32_t t[RFX_FUSED_MAX_WIDTH];
    size_t lo[RFX_FUSED_MAX_SRCS], hi[RFX_FUSED_MAX_SRCS], from[RFX_FUSED_MAX_SRCS] = {0};
    bool div0 = false, any = false;
    const uint32_t *key = NULL;   /* the key whose ranges lo/hi hold */
    /* the chunk's keys ascend: each source is searched forward from the last match, and
     * rows sharing a key reuse its ranges */
    for (size_t i = j->bounds[c]; i < j->bounds[c + 1]; i++) {
        const uint32_t *ta = A->data + i * (size_t)A->arity;
        if (A->arity)
            rfx_memcpy(t, ta, sizeof(uint32_t) * (size_t)A->arity);
        if (j->pre && !rfx_rx_eval(j->pre, t, j->width, NULL, &div0))
            continue;
        if (key && cmp_prefix(key, ta, j->k) == 0) {
            if (any && !star_emit(j, &j->parts[c], t, lo, hi, &div0)) {
                atomic_store(&j->err, RFX_ERR_NOMEM);
                return;
            }
            continue;
        }
        key = ta;
        any = true;
        for (int s = 1; s < j->nsrc && any; s++) {
            const rfx_rows *B = j->srcs[s];
            lo[s] = from[s] = gallop(B->data, B->arity, from[s], B->n, ta, j->k);
            hi[s] = lo[s] < B->n && cmp_prefix(B->data + lo[s] * (size_t)B->arity, ta, j->k) == 0
                        ? group_end(B->data, B->arity, lo[s], B->n, j->k) : lo[s];
            any = hi[s] > lo[s];
        }
        if (any && !star_emit(j, &j->parts[c], t, lo, hi, &div0)) {
            atomic_store(&j->err, RFX_ERR_NOMEM);
            return;
        }
    }
    if (j->sets)
        rfx_set_part_end(&j->parts[c], &j->sets[c]);
    if (div0)
        atomic_store(&j->err, RFX_ERR_DIV0);
}

rfx_status rfx_cpu_star_join(const rfx_rows *const *srcs, int nsrc, int k, const rfx_rx *pre, const rfx_rx *pred,
                             rfx_rx *const *out, int nout, bool as_set, rfx_rows *dst, int nthreads)
{
    int width = 0;
    for (int s = 0; s < nsrc; s++)
        width += srcs[s]->arity;
    if (nsrc < 2 || nsrc > RFX_FUSED_MAX_SRCS || width > RFX_FUSED_MAX_WIDTH || k < 1)
        return RFX_ERR_INTERNAL;
    if (nsrc == 2) {
        /* the merge join over key groups is this join for two sources, and faster (no
         * per-row searches or tuple copies); pre is tested once a row of srcs[0] that has
         * matches (on each pair, a delta of millions of rows meeting groups of thousands
         * tested it billions of times) */
        return join_rows(srcs[0], srcs[1], k, pre, pred, out, nout, as_set, false, false, dst, nthreads);
    }
    const rfx_rows *A = srcs[0];
    int c = chunks_for(A->n, nthreads);
    size_t *bounds = rfx_malloc(sizeof(size_t) * (size_t)(c + 1));
    rfx_rows *parts = rfx_calloc((size_t)c, sizeof(rfx_rows));
    int *colbuf = rfx_malloc(sizeof(int) * (size_t)(nout + 1));
    set_part *sets = as_set && nout ? rfx_malloc(sizeof(set_part) * (size_t)c) : NULL;
    rfx_status st = RFX_OK;
    if (!bounds || !parts || !colbuf || (as_set && nout && !sets))
        st = RFX_ERR_NOMEM;
    if (st == RFX_OK) {
        for (int i = 0; i < c; i++)
            rfx_rows_init(&parts[i], nout);
        if (sets)
            rfx_set_parts_init(sets, c, nout);
        rfx_split_groups(A, k, c, bounds);
        star_ctx j = {srcs, nsrc, k, width, pre, pred, out, nout, plain_columns(out, nout, colbuf), bounds, parts,
                      sets, RFX_OK};
        rfx_parallel_for(c, nthreads, star_chunk, &j);
        st = (rfx_status)atomic_load(&j.err);
        if (st == RFX_OK)
            st = rfx_join_parts(parts, sets, c, nout, dst, nthreads);
    }
    if (parts)
        for (int i = 0; i < c; i++)
            rfx_rows_free(&parts[i]);
    free(parts);
    free(bounds);
    free(colbuf);
    free(sets);
    return st;
}
