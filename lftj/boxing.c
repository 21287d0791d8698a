/* boxing.c: splitting a leapfrog triejoin's search space into boxes whose input slices
 * fit a memory budget (Red Fox thesis §6.1), and running the CPU join box by box.
 *
 * A source's rows are sorted, so the rows whose first column lies in a value interval
 * are one contiguous range: a slice, taken as a view without copying. Every variable that
 * is some source's first column (a leading variable) gets its value domain cut into k_v
 * intervals; the k_v are chosen (doubling the one whose sources weigh most per interval)
 * until the slices of a box add up to the budget, and each interval's upper bound is
 * found by binary search as the largest keeping every source led by the variable within
 * its 1/k_v share. The boxes are all combinations of one interval per leading variable;
 * they cover the search space, each binding falls in exactly one box (its leading
 * variables' values pick the intervals), and a box's join reads only its slices. */
#include "lftj.h"
#include "base.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SRC 32

/* First row of r whose first column is >= v (v up to 2^32, the last cut: past every row). */
static size_t lower(const rfx_rows *r, uint64_t v)
{
    const uint32_t key = (uint32_t)v;
    return v > UINT32_MAX ? r->n : rfx_rows_bound(r, 0, &key, 1, false);
}

static size_t row_bytes(const rfx_rows *r)
{
    return sizeof(uint32_t) * (size_t)r->arity;
}

/* Whether every source led by var keeps its slice of values [lo, hi) within its limit,
 * and (frontier_limit > 0) the join's first level, one element of `per_value` bytes per
 * value of var in every slice, within frontier_limit. The values are at most the slice's
 * rows and at most hi - lo: where ids are dense and rows few a value (vertices numbered
 * by degree rank, the low ranks), that bound, not the slice, is what fills the device. */
static bool fits(const rfx_lftj_src *srcs, int nsrc, int var, uint64_t lo, uint64_t hi, const size_t *limit,
                 size_t per_value, size_t frontier_limit)
{
    uint64_t values = hi - lo;
    for (int s = 0; s < nsrc; s++)
        if (srcs[s].colvar[0] == var) {
            size_t rows = lower(srcs[s].rows, hi) - lower(srcs[s].rows, lo);
            if (rows * row_bytes(srcs[s].rows) > limit[s])
                return false;
            values = rows < values ? rows : values;
        }
    return !frontier_limit || values * per_value <= frontier_limit;
}

/* Intervals per leading variable. Boxes run with the first leading variable's interval
 * as the outer digit, so consecutive boxes share its slices and only the inner variables'
 * slices change: what is copied in all is about the inputs once plus, per interval of
 * the outer variable, the inner variables' sources. Hence the outer variable is cut as
 * little as possible. The join's working memory (a box's frontier) is small beside the
 * slices, so it keeps an eighth; the outer slices take 7/16 of the budget (held once) and
 * the inner ones 7/32 (double-buffered: 7/16), which maximises outer x inner slice size,
 * i.e. minimises the boxes (fewer boxes and faster than a half, two eighths and a quarter
 * for the join; a larger outer share copies less but takes as long: the box joins set the
 * time).
 * Sources that are one relation led by one variable have one slice (counted once).
 * Returns the outer variable, or -1 where everything fits in one box. */
static int choose_splits(const rfx_lftj_src *srcs, int nsrc, int nvars, size_t budget, double outer_share, uint64_t *k)
{
    double weight[64] = {0}, inner = 0;
    for (int v = 0; v < nvars; v++)
        k[v] = 0;
    int outer = -1;
    for (int s = 0; s < nsrc; s++) {
        int v = srcs[s].colvar[0];
        bool again = false;
        for (int q = 0; q < s; q++)
            again |= srcs[q].rows == srcs[s].rows && srcs[q].colvar[0] == v;
        if (!again)
            weight[v] += (double)srcs[s].rows->n * (double)row_bytes(srcs[s].rows);
        k[v] = 1;     /* a leading variable, even of empty sources */
        outer = outer < 0 || v < outer ? v : outer;
    }
    double total = 0;
    for (int v = 0; v < nvars; v++) {
        total += weight[v];
        inner += v == outer ? 0 : weight[v];
    }
    if (total <= (double)budget || outer < 0)
        return -1;     /* one box */
    double b = budget > 16 ? (double)budget : 16, lim = (double)((uint64_t)1 << 31);
    const double share = outer_share;   /* of the budget, for the outer slices (tuning box_outer) */
    double ko = ceil(weight[outer] / (b * share)), ki = ceil(inner / (b * (7.0 / 8 - share) / 2));
    k[outer] = (uint64_t)(ko < 1 ? 1 : ko > lim ? lim : ko);
    for (int v = 0; v < nvars; v++)
        if (k[v] && v != outer)
            k[v] = (uint64_t)(ki < 1 ? 1 : ki > lim ? lim : ki);
    return outer;
}

/* Empty boxes (no cuts yet) for a join of nsrc sources over nvars variables. */
static rfx_status boxes_init(rfx_lftj_boxes *out, int nsrc, int nvars)
{
    memset(out, 0, sizeof *out);
    if (nsrc > MAX_SRC || nvars > 64 || nsrc < 1)
        return RFX_ERR_LIMIT;
    out->nvars = nvars;
    out->cuts = rfx_calloc((size_t)nvars, sizeof(uint64_t *));
    out->ncuts = rfx_calloc((size_t)nvars, sizeof(int));
    if (!out->cuts || !out->ncuts) {
        rfx_lftj_boxes_free(out);
        return RFX_ERR_NOMEM;
    }
    return RFX_OK;
}

rfx_status rfx_lftj_partition(const rfx_lftj_src *srcs, int nsrc, int nvars, size_t budget, const rfx_tuning *tune,
                               rfx_lftj_boxes *out)
{
    rfx_status st = boxes_init(out, nsrc, nvars);
    if (st != RFX_OK)
        return st;
    uint64_t k[64];
    size_t limit[MAX_SRC];
    /* where there are boxes, the first level's frontier (a value and each source's node a
     * binding: 4 + 8 nsrc bytes) takes at most a sixth of the budget: the boxed GPU join
     * keeps it for the next box and copies it, which with the slices (7/8) leaves room
     * beside a cap's last quarter for the later levels (that split themselves where they
     * run short) */
    if (!tune)
        tune = &rfx_tuning_defaults;
    int outer = choose_splits(srcs, nsrc, nvars, budget, tune->box_outer, k);
    const double share = tune->box_level0;   /* a sixth by default */
    size_t per_value = 4 + 8 * (size_t)nsrc, frontier_limit = (size_t)((double)budget * share);
    frontier_limit = frontier_limit > per_value ? frontier_limit : per_value;
    for (int s = 0; s < nsrc; s++) {
        size_t bytes = srcs[s].rows->n * row_bytes(srcs[s].rows);
        uint64_t kv = k[srcs[s].colvar[0]];
        limit[s] = (size_t)((bytes + kv - 1) / kv);
        if (limit[s] < row_bytes(srcs[s].rows))
            limit[s] = row_bytes(srcs[s].rows);
    }
    for (int v = 0; v < nvars; v++) {
        if (!k[v])
            continue;
        size_t cap = 8, n = 0;
        uint64_t *cut = rfx_malloc(sizeof(uint64_t) * cap);
        if (!cut) {
            rfx_lftj_boxes_free(out);
            return RFX_ERR_NOMEM;
        }
        cut[n++] = 0;
        for (uint64_t lo = 0; lo < ((uint64_t)1 << 32);) {
            /* the largest hi in (lo, 2^32] whose slices fit; lo + 1 when even one value's
             * rows do not (that box then exceeds the budget: boxes cannot split a value) */
            uint64_t good = lo + 1, bad = ((uint64_t)1 << 32) + 1;
            size_t flimit = v == outer ? frontier_limit : 0;
            if (fits(srcs, nsrc, v, lo, (uint64_t)1 << 32, limit, per_value, flimit))
                good = (uint64_t)1 << 32;
            else
                while (bad - good > 1) {
                    uint64_t mid = good + (bad - good) / 2;
                    if (fits(srcs, nsrc, v, lo, mid, limit, per_value, flimit))
                        good = mid;
                    else
                        bad = mid;
                }
            /* skip to the next value present, so no box is empty by construction */
            uint64_t next = (uint64_t)1 << 32;
            for (int s = 0; s < nsrc; s++)
                if (srcs[s].colvar[0] == v) {
                    size_t at = lower(srcs[s].rows, good);
                    if (at < srcs[s].rows->n && srcs[s].rows->data[at * (size_t)srcs[s].rows->arity] < next)
                        next = srcs[s].rows->data[at * (size_t)srcs[s].rows->arity];
                }
            if (next < good)
                next = good;
            if (n + 1 >= cap) {
                uint64_t *c = rfx_realloc(cut, sizeof(uint64_t) * cap * 2);
                if (!c) {
                    free(cut);
                    rfx_lftj_boxes_free(out);
                    return RFX_ERR_NOMEM;
                }
                cut = c;
                cap *= 2;
            }
            cut[n++] = next;
            lo = next;
        }
        out->cuts[v] = cut;
        out->ncuts[v] = (int)n;
    }
    out->nboxes = 1;
    for (int v = 0; v < nvars; v++)
        if (out->cuts[v]) {
            size_t k = (size_t)out->ncuts[v] - 1;
            out->nboxes = out->nboxes > SIZE_MAX / k ? SIZE_MAX : out->nboxes * k;
        }
    return RFX_OK;
}

bool rfx_lftj_boxes_in_order(const rfx_lftj_boxes *b)
{
    for (int v = 1; v < b->nvars; v++)
        if (b->cuts[v] && b->ncuts[v] > 2)
            return false;
    return true;
}

void rfx_lftj_boxes_free(rfx_lftj_boxes *b)
{
    if (b->cuts)
        for (int v = 0; v < b->nvars; v++)
            free(b->cuts[v]);
    for (int s = 0; s < b->nsrc; s++) {   /* either may be missing after a failure */
        if (b->least)
            free(b->least[s]);
        if (b->most)
            free(b->most[s]);
    }
    free(b->least);
    free(b->most);
    free(b->cuts);
    free(b->ncuts);
    memset(b, 0, sizeof *b);
}

/* ---- bounds: boxes that hold no bindings ---------------------------------------------- */
/* A piece of one interval's slice (a slice is cut in pieces so that the threads share
 * even one large interval), with the least and greatest second-column value found. */
typedef struct bound_piece {
    const rfx_rows *r;
    size_t lo, hi;
    size_t interval;
    uint32_t least, most;
} bound_piece;

static void bound_scan(int i, void *ctx)
{
    bound_piece *p = (bound_piece *)ctx + i;
    const uint32_t *col = p->r->data + 1;
    size_t a = (size_t)p->r->arity;
    uint32_t least = UINT32_MAX, most = 0;
    for (size_t k = p->lo; k < p->hi; k++) {
        uint32_t v = col[k * a];
        least = v < least ? v : least;
        most = v > most ? v : most;
    }
    p->least = least;
    p->most = most;
}

/* Bounds of source s over the intervals of its leading variable: least/most get k entries. */
static rfx_status bound_source(const rfx_lftj_boxes *b, const rfx_rows *r, int v, uint32_t *least, uint32_t *most,
                               int nthreads)
{
    enum { PIECE = 1 << 20 };   /* rows a task: 4-8 MB, so even one interval spreads */
    size_t k = (size_t)b->ncuts[v] - 1, npieces = 0, cap = k;
    bound_piece *pieces = rfx_malloc(sizeof *pieces * cap);
    if (!pieces)
        return RFX_ERR_NOMEM;
    for (size_t p = 0; p < k; p++) {
        least[p] = UINT32_MAX;
        most[p] = 0;
        size_t lo = lower(r, b->cuts[v][p]), hi = lower(r, b->cuts[v][p + 1]);
        for (size_t at = lo; at < hi; at += PIECE) {
            if (npieces == cap) {
                bound_piece *n = rfx_realloc(pieces, sizeof *pieces * cap * 2);
                if (!n) {
                    free(pieces);
                    return RFX_ERR_NOMEM;
                }
                pieces = n;
                cap *= 2;
            }
            pieces[npieces++] = (bound_piece){r, at, hi - at > PIECE ? at + PIECE : hi, p, 0, 0};
        }
    }
    if (npieces > INT32_MAX) {
        free(pieces);
        return RFX_ERR_LIMIT;
    }
    rfx_parallel_for((int)npieces, r->n < 65536 ? 1 : nthreads, bound_scan, pieces);
    for (size_t i = 0; i < npieces; i++) {
        size_t p = pieces[i].interval;
        least[p] = pieces[i].least < least[p] ? pieces[i].least : least[p];
        most[p] = pieces[i].most > most[p] ? pieces[i].most : most[p];
    }
    free(pieces);
    return RFX_OK;
}

rfx_status rfx_lftj_boxes_bound(rfx_lftj_boxes *b, const rfx_lftj_src *srcs, int nsrc, int nthreads,
                                const rfx_tuning *tune)
{
    if ((tune && !tune->box_bounds) || nsrc > MAX_SRC || b->least)
        return RFX_OK;
    b->least = rfx_calloc((size_t)nsrc, sizeof(uint32_t *));
    b->most = rfx_calloc((size_t)nsrc, sizeof(uint32_t *));
    b->nsrc = nsrc;
    if (!b->least || !b->most)
        return RFX_ERR_NOMEM;
    for (int s = 0; s < nsrc; s++) {
        const rfx_rows *r = srcs[s].rows;
        int v = srcs[s].colvar[0];
        if (r->arity < 2 || !r->n || !b->cuts[srcs[s].colvar[1]] || b->ncuts[srcs[s].colvar[1]] <= 2)
            continue;   /* the second column's variable is not cut: nothing to tell */
        size_t k = (size_t)b->ncuts[v] - 1;
        b->least[s] = rfx_malloc(sizeof(uint32_t) * k);
        b->most[s] = rfx_malloc(sizeof(uint32_t) * k);
        if (!b->least[s] || !b->most[s])
            return RFX_ERR_NOMEM;
        int same = -1;   /* one relation led by one variable: the same bounds */
        for (int q = 0; q < s && same < 0; q++)
            if (srcs[q].rows == r && srcs[q].colvar[0] == v && b->least[q])
                same = q;
        if (same >= 0) {
            memcpy(b->least[s], b->least[same], sizeof(uint32_t) * k);
            memcpy(b->most[s], b->most[same], sizeof(uint32_t) * k);
            continue;
        }
        rfx_status st = bound_source(b, r, v, b->least[s], b->most[s], nthreads);
        if (st != RFX_OK)
            return st;
    }
    return RFX_OK;
}

bool rfx_lftj_box_slices(const rfx_lftj_boxes *b, size_t box, const rfx_lftj_src *srcs, int nsrc, rfx_rows *views)
{
    /* the box's interval of each leading variable: box is a mixed-radix number, the
     * first leading variable its most significant digit (boxes run in value order) */
    int pick[64] = {0};
    for (int v = b->nvars - 1; v >= 0; v--)
        if (b->cuts[v]) {
            size_t k = (size_t)b->ncuts[v] - 1;
            pick[v] = (int)(box % k);
            box /= k;
        }
    bool any = true;
    for (int s = 0; s < nsrc; s++) {
        const rfx_rows *r = srcs[s].rows;
        int v = srcs[s].colvar[0];
        size_t lo = lower(r, b->cuts[v][pick[v]]), hi = lower(r, b->cuts[v][pick[v] + 1]);
        views[s] = (rfx_rows){r->data ? r->data + lo * (size_t)r->arity : NULL, hi - lo, hi - lo, r->arity};
        any &= hi > lo;
        if (s < b->nsrc && b->least && b->most && b->least[s] && b->most[s]) {
            int w = srcs[s].colvar[1];
            uint64_t from = b->cuts[w][pick[w]], to = b->cuts[w][pick[w] + 1];
            uint32_t least = b->least[s][pick[v]], most = b->most[s][pick[v]];
            any &= least <= most && most >= from && least < to;
        }
    }
    return any;
}

rfx_status rfx_cpu_lftj_boxed(const rfx_lftj_src *srcs, int nsrc, int nvars, size_t budget, rfx_rows *dst,
                              uint64_t *count, int nthreads, size_t *nboxes, const rfx_tuning *tune)
{
    if (nsrc > MAX_SRC)
        return RFX_ERR_LIMIT;
    rfx_lftj_boxes b;
    rfx_status st = rfx_lftj_partition(srcs, nsrc, nvars, budget, tune, &b);
    if (st != RFX_OK)
        return st;
    if (nboxes)
        *nboxes = 0;
    rfx_rows views[MAX_SRC], part, all;
    rfx_lftj_src vs[MAX_SRC];
    rfx_rows_init(&all, nvars);
    uint64_t total = 0;
    st = rfx_lftj_boxes_bound(&b, srcs, nsrc, nthreads, tune);
    for (size_t box = 0; box < b.nboxes && st == RFX_OK; box++) {
        if (!rfx_lftj_box_slices(&b, box, srcs, nsrc, views))
            continue;
        if (nboxes)
            ++*nboxes;
        size_t rows = 0;
        for (int s = 0; s < nsrc; s++) {
            vs[s] = (rfx_lftj_src){&views[s], srcs[s].colvar, NULL};
            rows += views[s].n;
        }
        int nt = rows < 65536 ? 1 : nthreads;   /* a small box is not worth starting threads */
        if (count) {
            uint64_t n = 0;
            st = rfx_cpu_lftj(vs, nsrc, nvars, NULL, &n, nt);
            total += n;
            continue;
        }
        rfx_rows_init(&part, nvars);
        st = rfx_cpu_lftj(vs, nsrc, nvars, &part, NULL, nt);
        if (st == RFX_OK)
            st = rfx_rows_append(&all, &part);
        rfx_rows_free(&part);
    }
    bool in_order = rfx_lftj_boxes_in_order(&b);   /* else sorted once: boxes are disjoint */
    rfx_lftj_boxes_free(&b);
    if (st == RFX_OK && !count && !in_order)
        st = rfx_cpu_sort(&all, nthreads);
    if (st == RFX_OK && count)
        *count = total;
    if (st == RFX_OK && !count)
        rfx_rows_swap(dst, &all);
    rfx_rows_free(&all);
    return st;
}
