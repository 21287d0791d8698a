/* cpu_lattice.c: what new tuples change in a relation with lattice attributes (Soufflé 2.5's
 * `.lattice`): per key, the Lub of the new values and of the value held. The Lub is a
 * user-defined functor, called through the expression evaluator on the host. */
#include "primitives.h"

#include <stdlib.h>
#include <string.h>

static int cmp_key(const uint32_t *a, const uint32_t *b, int k)
{
    for (int c = 0; c < k; c++)
        if (a[c] != b[c])
            return a[c] < b[c] ? -1 : 1;
    return 0;
}

/* The tuple of held set h whose key is key's, or NULL (h sorted; one tuple a key). */
static const uint32_t *held_tuple(const rfx_rows *h, const uint32_t *key, int k)
{
    size_t lo = 0, hi = h->n;
    const size_t a = (size_t)h->arity;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp_key(h->data + mid * a, key, k);
        if (c == 0)
            return h->data + mid * a;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

rfx_status rfx_cpu_lattice(const rfx_rows *src, int nkeys, rfx_rx *const *lub, const rfx_rows *const *held, int nheld,
                           rfx_rows *dst, int nthreads)
{
    const int a = src->arity, nv = a - nkeys;
    rfx_rows in, out;
    rfx_rows_init(&in, a);
    rfx_rows_init(&out, a);
    rfx_status st = rfx_rows_reserve(&in, src->n);
    if (st == RFX_OK && src->n) {
        memcpy(in.data, src->data, sizeof(uint32_t) * src->n * (size_t)a);
        in.n = src->n;
        st = rfx_cpu_sort(&in, nthreads);   /* the values of a key side by side */
    }
    uint32_t t[RFX_MAX_ARITY], pair[2];
    bool fail = false;
    for (size_t i = 0; st == RFX_OK && i < in.n;) {
        const uint32_t *first = in.data + i * (size_t)a;
        memcpy(t, first, sizeof(uint32_t) * (size_t)a);
        size_t j = i + 1;
        for (; j < in.n && cmp_key(in.data + j * (size_t)a, first, nkeys) == 0; j++)
            for (int c = 0; c < nv; c++) {
                pair[0] = t[nkeys + c];
                pair[1] = in.data[j * (size_t)a + (size_t)(nkeys + c)];
                t[nkeys + c] = rfx_rx_eval(lub[c], pair, 2, NULL, &fail);
            }
        i = j;
        const uint32_t *h = NULL;
        for (int s = 0; !h && s < nheld; s++)
            h = held_tuple(held[s], t, nkeys);
        if (h) {   /* Lub(new, held), as Soufflé orders it; kept where it raises what is held */
            bool same = true;
            for (int c = 0; c < nv; c++) {
                pair[0] = t[nkeys + c];
                pair[1] = h[nkeys + c];
                t[nkeys + c] = rfx_rx_eval(lub[c], pair, 2, NULL, &fail);
                same &= t[nkeys + c] == h[nkeys + c];
            }
            if (same)
                continue;
        }
        if (fail)
            break;
        st = rfx_rows_push(&out, t);
    }
    rfx_rows_free(&in);
    if (st != RFX_OK || fail) {
        rfx_rows_free(&out);
        return fail ? RFX_ERR_DIV0 : st;
    }
    rfx_rows_free(dst);
    *dst = out;
    return RFX_OK;
}

rfx_status rfx_cpu_lattice_last(rfx_rows *rows, int nkeys, int nthreads)
{
    const int a = rows->arity;
    if (rows->n < 2 || a == 0)
        return rows->n && a == 0 ? (rows->n = 1, RFX_OK) : RFX_OK;
    if (rows->n > UINT32_MAX || a + 1 > RFX_MAX_ARITY)
        return RFX_ERR_LIMIT;
    /* each row as (key, its line, values): sorted, a key's last line comes last */
    rfx_rows w;
    rfx_rows_init(&w, a + 1);
    rfx_status st = rfx_rows_reserve(&w, rows->n);
    if (st)
        return st;
    for (size_t i = 0; i < rows->n; i++) {
        const uint32_t *t = rows->data + i * (size_t)a;
        uint32_t *o = w.data + i * (size_t)(a + 1);
        memcpy(o, t, sizeof(uint32_t) * (size_t)nkeys);
        o[nkeys] = (uint32_t)i;
        memcpy(o + nkeys + 1, t + nkeys, sizeof(uint32_t) * (size_t)(a - nkeys));
    }
    w.n = rows->n;
    st = rfx_cpu_sort(&w, nthreads);
    size_t m = 0;
    for (size_t i = 0; st == RFX_OK && i < w.n; i++) {
        const uint32_t *t = w.data + i * (size_t)(a + 1);
        if (i + 1 < w.n && cmp_key(t, t + a + 1, nkeys) == 0)
            continue;   /* a later line of this key follows */
        uint32_t *o = rows->data + m++ * (size_t)a;
        memcpy(o, t, sizeof(uint32_t) * (size_t)nkeys);
        memcpy(o + nkeys, t + nkeys + 1, sizeof(uint32_t) * (size_t)(a - nkeys));
    }
    if (st == RFX_OK)
        rows->n = m;
    rfx_rows_free(&w);
    return st;
}
