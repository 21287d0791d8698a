// gpu_aggregate.cu: AGGREGATE: count, sum, min, max and mean of each group of b for the tuples of a.
#include "gpu_core.cuh"

// ---- aggregate ------------------------------------------------------------------------------
__global__ void k_aggregate(const uint32_t *a, size_t na, int aa, const uint32_t *b, size_t nb, int ba, int k, int fn,
                            int col, int prim, uint32_t *out, uint64_t *flags)
{
    GRID_STRIDE(i, na)
    {
        const uint32_t *key = a + i * aa;
        size_t l = k ? bound_rows(b, ba, nb, key, k, false) : 0;
        size_t h = k ? (l < nb && cmp_prefix(b + l * ba, key, k) == 0 ? bound_rows(b, ba, nb, key, k, true) : l) : nb;
        uint32_t val = 0;
        bool have = h > l || fn == RFX_AGG_COUNT || fn == RFX_AGG_SUM;
        if (fn == RFX_AGG_COUNT) {
            val = (uint32_t)(h - l);
        } else if (h > l || fn == RFX_AGG_SUM) {
            const bool sums = fn == RFX_AGG_SUM || fn == RFX_AGG_MEAN;
            val = sums ? 0 : b[l * ba + col];
            for (size_t q = sums ? l : l + 1; q < h; q++)
                val = rfx_agg_step(fn, prim, val, b[q * ba + col]);
            val = rfx_agg_finish(fn, val, h - l);
        }
        for (int c = 0; c < aa; c++)
            out[i * (aa + 1) + c] = key[c];
        out[i * (aa + 1) + aa] = val;
        flags[i] = have;
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
    if (!flags) {
        rfx_gpu_rows_free(g, &res);
        return RFX_ERR_NOMEM;
    }
    // a nullary outer relation holds one empty tuple: give the kernel a valid pointer
    const uint32_t *adata = a->data ? a->data : (const uint32_t *)flags;
    k_aggregate<<<grid_for(na), 256, 0, g->stream>>>(adata, na, a->arity, b->data, b->n, b->arity, k, (int)fn, col,
                                                     (int)prim, res.data, flags);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        st = fail(g, e, "k_aggregate", __FILE__, __LINE__);
    rfx_dev_rows kept;
    if (st == RFX_OK)
        st = compact(g, res.data, na, a->arity + 1, flags, &kept);
    rfx_gpu_free(g, flags);
    rfx_gpu_rows_free(g, &res);
    if (st == RFX_OK)
        replace(g, dst, &kept);
    return st;
}
