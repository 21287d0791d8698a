/* ordered.c: an output's order and cut (`.output r(order="c desc, d", limit=10)`): the
 * rows' indices by typed keys, the other columns ascending after them, and the first N
 * of them found with a bounded heap, not a sort of everything, where N is small. */
#include "runtime.h"

#include <stdlib.h>
#include <string.h>

typedef struct order_ctx {
    const rfx_rows *rows;
    const rfx_prim *types;
    const rfx_symtab *syms;
    const rfx_order_key *keys;
    int nkeys;
} order_ctx;

int rfx_typed_cmp(const rfx_prim *types, const uint32_t *rank, const rfx_symtab *syms, const uint32_t *a,
                  const uint32_t *b, int c)
{
    const rfx_prim t = types[c];
    if (RFX_PRIM_WIDE(t)) {
        uint64_t x = (uint64_t)a[c] << 32 | a[c + 1], y = (uint64_t)b[c] << 32 | b[c + 1];
        if (x == y)
            return 0;
        if (t == RFX_FLOAT64) {
            double fx, fy;
            memcpy(&fx, &x, 8);
            memcpy(&fy, &y, 8);
            if ((fx != fx) != (fy != fy))   /* NaNs after every number */
                return fx != fx ? 1 : -1;
            if (fx == fx && fx != fy)
                return fx < fy ? -1 : 1;
            return x < y ? -1 : 1;          /* equal values (+0, -0) and NaNs by their bits */
        }
        return t == RFX_NUMBER64 || t == RFX_DECIMAL ? ((int64_t)x < (int64_t)y ? -1 : 1) : (x < y ? -1 : 1);
    }
    if (a[c] == b[c])
        return 0;
    switch (t) {
    case RFX_NUMBER: case RFX_DATE: return (int32_t)a[c] < (int32_t)b[c] ? -1 : 1;
    case RFX_FLOAT: {
        float fx, fy;
        memcpy(&fx, &a[c], 4);
        memcpy(&fy, &b[c], 4);
        if ((fx != fx) != (fy != fy))
            return fx != fx ? 1 : -1;
        if (fx == fx && fx != fy)
            return fx < fy ? -1 : 1;
        return a[c] < b[c] ? -1 : 1;
    }
    case RFX_SYMBOL: {
        if (rank)
            return rank[a[c]] < rank[b[c]] ? -1 : 1;
        size_t la = rfx_symtab_len(syms, a[c]), lb = rfx_symtab_len(syms, b[c]);
        int k = memcmp(rfx_symtab_str(syms, a[c]), rfx_symtab_str(syms, b[c]), la < lb ? la : lb);
        return k ? (k < 0 ? -1 : 1) : (la > lb) - (la < lb);
    }
    default: return a[c] < b[c] ? -1 : 1;
    }
}

static int cmp_column(const order_ctx *o, const uint32_t *a, const uint32_t *b, int c)
{
    return rfx_typed_cmp(o->types, NULL, o->syms, a, b, c);
}

static int cmp_rows(const void *x, const void *y, void *ctx)
{
    const order_ctx *o = ctx;
    const size_t ar = (size_t)o->rows->arity;
    const uint32_t *a = o->rows->data + *(const size_t *)x * ar, *b = o->rows->data + *(const size_t *)y * ar;
    for (int k = 0; k < o->nkeys; k++) {
        int c = cmp_column(o, a, b, o->keys[k].col);
        if (c)
            return o->keys[k].desc ? -c : c;
    }
    for (size_t c = 0; c < ar; c += RFX_PRIM_WIDE(o->types[c]) ? 2 : 1) {   /* then every column, ascending */
        int d = cmp_column(o, a, b, (int)c);
        if (d)
            return d;
    }
    return 0;
}

/* Heap of the best `cap` rows so far, the worst on top (a max-heap under cmp_rows). */
static void sift_down(size_t *h, size_t n, size_t i, const order_ctx *o)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, w = i;
        if (l < n && cmp_rows(&h[l], &h[w], (void *)o) > 0)
            w = l;
        if (r < n && cmp_rows(&h[r], &h[w], (void *)o) > 0)
            w = r;
        if (w == i)
            return;
        size_t t = h[i];
        h[i] = h[w];
        h[w] = t;
        i = w;
    }
}

size_t *rfx_order_rows(const rfx_rows *rows, const rfx_prim *types, const rfx_symtab *syms,
                       const rfx_order_key *keys, int nkeys, size_t limit, size_t *count, rfx_status *st)
{
    order_ctx o = {rows, types, syms, keys, nkeys};
    size_t n = rows->n, want = limit < n ? limit : n;
    *count = want;
    *st = RFX_OK;
    const bool few = want < n / 8;   /* a few of many: a bounded heap, O(n log want) */
    size_t *idx = rfx_malloc(sizeof(size_t) * (few ? want + 1 : n + 1));
    if (!idx) {
        *st = RFX_ERR_NOMEM;
        return NULL;
    }
    if (!want)
        return idx;
    if (few) {
        size_t h = 0;
        for (size_t i = 0; i < n; i++) {
            if (h < want) {
                idx[h++] = i;
                for (size_t k = h - 1; k > 0 && cmp_rows(&idx[(k - 1) / 2], &idx[k], &o) < 0; k = (k - 1) / 2) {
                    size_t t = idx[k];
                    idx[k] = idx[(k - 1) / 2];
                    idx[(k - 1) / 2] = t;
                }
            } else if (cmp_rows(&i, &idx[0], &o) < 0) {
                idx[0] = i;
                sift_down(idx, h, 0, &o);
            }
        }
    } else
        for (size_t i = 0; i < n; i++)
            idx[i] = i;
    qsort_r(idx, few ? want : n, sizeof(size_t), cmp_rows, &o);
    return idx;
}
