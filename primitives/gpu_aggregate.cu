// gpu_aggregate.cu: AGGREGATE: count, sum, min, max and mean of each group of b for the tuples of a.
#include "gpu_core.cuh"

// ---- aggregate ------------------------------------------------------------------------------
// The plan gives a sorted on its first k columns (the group keys). The first row of each run
// of equal keys folds its group of b (k_aggregate_heads), and every row takes its run's
// result (k_aggregate_rows): a group is folded once however many rows of a share it (an
// atom the planner made an aggregate meets one group from thousands of rows), in the order
// a row alone would fold it, so results are the CPU's bit for bit. A row whose run head is
// not found (a out of key order) folds its group itself.

// The fold of key's group of b (its first k columns); whether it gives a value.
static __device__ bool fold_group(const uint32_t *key, const uint32_t *b, size_t nb, int ba, int k, int fn, int col,
                                  int prim, uint32_t *val)
{
    size_t l = k ? bound_rows(b, ba, nb, key, k, false) : 0;
    size_t h = k ? (l < nb && cmp_prefix(b + l * ba, key, k) == 0 ? bound_rows(b, ba, nb, key, k, true) : l) : nb;
    *val = 0;
    if (fn == RFX_AGG_COUNT) {
        *val = (uint32_t)(h - l);
    } else if (h > l || fn == RFX_AGG_SUM) {
        const bool sums = fn == RFX_AGG_SUM || fn == RFX_AGG_MEAN;
        uint32_t v = sums ? 0 : b[l * ba + col];
        for (size_t q = sums ? l : l + 1; q < h; q++)
            v = rfx_agg_step(fn, prim, v, b[q * ba + col]);
        *val = rfx_agg_finish(fn, v, h - l);
    }
    return h > l || fn == RFX_AGG_COUNT || fn == RFX_AGG_SUM;
}

enum { NOT_HEAD = 0xff };

__global__ void k_aggregate_heads(const uint32_t *a, size_t na, int aa, const uint32_t *b, size_t nb, int ba, int k,
                                  int fn, int col, int prim, uint32_t *vals, unsigned char *have)
{
    GRID_STRIDE(i, na)
    {
        const uint32_t *key = a + i * aa;
        if (i > 0 && (k == 0 || cmp_prefix(key - aa, key, k) == 0))
            have[i] = NOT_HEAD;   // not the first row of its keys
        else
            have[i] = fold_group(key, b, nb, ba, k, fn, col, prim, &vals[i]);
    }
}

__global__ void k_aggregate_rows(const uint32_t *a, size_t na, int aa, const uint32_t *b, size_t nb, int ba, int k,
                                 int fn, int col, int prim, const uint32_t *vals, const unsigned char *have,
                                 uint32_t *out, uint64_t *flags)
{
    GRID_STRIDE(i, na)
    {
        const uint32_t *key = a + i * aa;
        size_t head = k ? bound_rows(a, aa, na, key, k, false) : 0;
        uint32_t val = vals[head];
        bool got = have[head];
        if (have[head] == NOT_HEAD || (k && cmp_prefix(a + head * aa, key, k) != 0))
            got = fold_group(key, b, nb, ba, k, fn, col, prim, &val);
        for (int c = 0; c < aa; c++)
            out[i * (aa + 1) + c] = key[c];
        out[i * (aa + 1) + aa] = val;
        flags[i] = got;
    }
}

extern "C" rfx_status rfx_gpu_aggregate(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, rfx_aggfn fn,
                                        int col, rfx_prim prim, rfx_dev_rows *dst)
{
    size_t na = a->n;
    rfx_dev_rows res;
    rfx_status st = rows_alloc(g, &res, a->arity + 1, na);
    if (st || na == 0) {
        if (st == RFX_OK)
            replace(g, dst, &res);
        return st;
    }
    uint64_t *flags = (uint64_t *)rfx_gpu_alloc(g, na * 8);
    uint32_t *vals = (uint32_t *)rfx_gpu_alloc(g, na * 5);   // and a byte a row: whether it has one
    if (!flags || !vals) {
        if (flags)
            rfx_gpu_free(g, flags);
        if (vals)
            rfx_gpu_free(g, vals);
        rfx_gpu_rows_free(g, &res);
        return RFX_ERR_NOMEM;
    }
    unsigned char *have = (unsigned char *)(vals + na);
    // a nullary outer relation holds one empty tuple: give the kernels a valid pointer
    const uint32_t *adata = a->data ? a->data : (const uint32_t *)flags;
    k_aggregate_heads<<<grid_for(na), 256, 0, g->stream>>>(adata, na, a->arity, b->data, b->n, b->arity, k, (int)fn,
                                                           col, (int)prim, vals, have);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) {
        k_aggregate_rows<<<grid_for(na), 256, 0, g->stream>>>(adata, na, a->arity, b->data, b->n, b->arity, k, (int)fn,
                                                              col, (int)prim, vals, have, res.data, flags);
        e = cudaGetLastError();
    }
    if (e != cudaSuccess)
        st = fail(g, e, "k_aggregate", __FILE__, __LINE__);
    rfx_gpu_free(g, vals);
    rfx_dev_rows kept;
    if (st == RFX_OK)
        st = compact(g, res.data, na, a->arity + 1, flags, &kept);
    rfx_gpu_free(g, flags);
    rfx_gpu_rows_free(g, &res);
    if (st == RFX_OK)
        replace(g, dst, &kept);
    return st;
}
