// gpu_aggregate.cu: AGGREGATE: count, sum, min, max and mean of each group of b for the tuples of a.
#include "gpu_core.cuh"

// ---- aggregate ------------------------------------------------------------------------------
// The plan gives a sorted on its first k columns (the group keys). The first row of each run
// of equal keys folds its group of b (k_aggregate_heads), and every row takes its run's
// result (k_aggregate_rows): a group is folded once however many rows of a share it (an
// atom the planner made an aggregate meets one group from thousands of rows), in the order
// a row alone would fold it, so results are the CPU's bit for bit. A row whose run head is
// not found (a out of key order) folds its group itself.

// The fold of key's group of b (its first k columns); whether it gives a value. A 64-bit
// kind's value (wide: not a count) is the two words at col, col + 1, folded as the CPU's
// fold64; an integer sum past its kind sets *overflow.
static __device__ bool fold_group(const uint32_t *key, const uint32_t *b, size_t nb, int ba, int k, int fn, int col,
                                  int prim, bool wide, uint64_t *val, bool *overflow)
{
    size_t l = k ? bound_rows(b, ba, nb, key, k, false) : 0;
    size_t h = k ? (l < nb && cmp_prefix(b + l * ba, key, k) == 0 ? bound_rows(b, ba, nb, key, k, true) : l) : nb;
    const bool sums = fn == RFX_AGG_SUM || fn == RFX_AGG_MEAN;
    *val = 0;
    if (fn == RFX_AGG_COUNT) {
        *val = (uint32_t)(h - l);
    } else if (wide && (h > l || fn == RFX_AGG_SUM)) {
        uint64_t v = sums ? 0 : (uint64_t)b[l * ba + col] << 32 | b[l * ba + col + 1];
        for (size_t q = sums ? l : l + 1; q < h; q++)
            v = rfx_agg_step64(fn, prim, v, (uint64_t)b[q * ba + col] << 32 | b[q * ba + col + 1], overflow);
        *val = rfx_agg_finish64(fn, prim, v, h - l);
    } else if (h > l || fn == RFX_AGG_SUM) {
        uint32_t v = sums ? 0 : b[l * ba + col];
        for (size_t q = sums ? l : l + 1; q < h; q++)
            v = rfx_agg_step(fn, prim, v, b[q * ba + col]);
        *val = rfx_agg_finish(fn, v, h - l);
    }
    return h > l || fn == RFX_AGG_COUNT || fn == RFX_AGG_SUM;
}

enum { NOT_HEAD = 0xff };

__global__ void k_aggregate_heads(const uint32_t *a, size_t na, int aa, const uint32_t *b, size_t nb, int ba, int k,
                                  int fn, int col, int prim, bool wide, uint64_t *vals, unsigned char *have,
                                  unsigned *overflow_flag)
{
    bool overflow = false;
    GRID_STRIDE(i, na)
    {
        const uint32_t *key = a + i * aa;
        if (i > 0 && (k == 0 || cmp_prefix(key - aa, key, k) == 0))
            have[i] = NOT_HEAD;   // not the first row of its keys
        else
            have[i] = fold_group(key, b, nb, ba, k, fn, col, prim, wide, &vals[i], &overflow);
    }
    if (overflow)
        atomicOr(overflow_flag, 1u);
}

__global__ void k_aggregate_rows(const uint32_t *a, size_t na, int aa, const uint32_t *b, size_t nb, int ba, int k,
                                 int fn, int col, int prim, bool wide, const uint64_t *vals, const unsigned char *have,
                                 uint32_t *out, uint64_t *flags, unsigned *overflow_flag)
{
    const int oa = aa + 1 + wide;
    bool overflow = false;
    GRID_STRIDE(i, na)
    {
        const uint32_t *key = a + i * aa;
        size_t head = k ? bound_rows(a, aa, na, key, k, false) : 0;
        uint64_t val = vals[head];
        bool got = have[head];
        if (have[head] == NOT_HEAD || (k && cmp_prefix(a + head * aa, key, k) != 0))
            got = fold_group(key, b, nb, ba, k, fn, col, prim, wide, &val, &overflow);
        for (int c = 0; c < aa; c++)
            out[i * oa + c] = key[c];
        if (wide) {
            out[i * oa + aa] = (uint32_t)(val >> 32);
            out[i * oa + aa + 1] = (uint32_t)val;
        } else {
            out[i * oa + aa] = (uint32_t)val;
        }
        flags[i] = got;
    }
    if (overflow)
        atomicOr(overflow_flag, 1u);
}

extern "C" rfx_status rfx_gpu_aggregate(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, rfx_aggfn fn,
                                        int col, rfx_prim prim, rfx_dev_rows *dst)
{
    size_t na = a->n;
    const bool wide = RFX_PRIM_WIDE(prim) && fn != RFX_AGG_COUNT;   // a result of two words
    const int oa = a->arity + 1 + wide;
    rfx_dev_rows res;
    rfx_status st = rows_alloc(g, &res, oa, na);
    if (st || na == 0) {
        if (st == RFX_OK)
            replace(g, dst, &res);
        return st;
    }
    uint64_t *flags = (uint64_t *)rfx_gpu_alloc(g, na * 8);
    uint64_t *vals = (uint64_t *)rfx_gpu_alloc(g, na * 9);   // and a byte a row: whether it has one
    if (!flags || !vals) {
        if (flags)
            rfx_gpu_free(g, flags);
        if (vals)
            rfx_gpu_free(g, vals);
        rfx_gpu_rows_free(g, &res);
        return RFX_ERR_NOMEM;
    }
    unsigned char *have = (unsigned char *)(vals + na);
    // only an integer sum of a 64-bit kind can overflow: the flag is cleared and read back
    // (a host wait) for those alone
    const bool checked = wide && (fn == RFX_AGG_SUM || fn == RFX_AGG_MEAN) && prim != RFX_FLOAT64;
    g->div_armed = checked;
    cudaError_t e = checked ? cudaMemsetAsync(g->d_flag, 0, sizeof(unsigned), g->stream) : cudaSuccess;
    // a nullary outer relation holds one empty tuple: give the kernels a valid pointer
    const uint32_t *adata = a->data ? a->data : (const uint32_t *)flags;
    if (e == cudaSuccess) {
        k_aggregate_heads<<<grid_for(na), 256, 0, g->stream>>>(adata, na, a->arity, b->data, b->n, b->arity, k, (int)fn,
                                                               col, (int)prim, wide, vals, have, g->d_flag);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) {
        k_aggregate_rows<<<grid_for(na), 256, 0, g->stream>>>(adata, na, a->arity, b->data, b->n, b->arity, k, (int)fn,
                                                              col, (int)prim, wide, vals, have, res.data, flags,
                                                              g->d_flag);
        e = cudaGetLastError();
    }
    if (e != cudaSuccess)
        st = fail(g, e, "k_aggregate", __FILE__, __LINE__);
    if (st == RFX_OK && checked && (st = check_div0(g)) == RFX_ERR_DIV0)
        snprintf(g->err, sizeof g->err, "a 64-bit sum overflows");
    rfx_gpu_free(g, vals);
    rfx_dev_rows kept;
    if (st == RFX_OK)
        st = compact(g, res.data, na, oa, flags, &kept);
    rfx_gpu_free(g, flags);
    rfx_gpu_rows_free(g, &res);
    if (st == RFX_OK)
        replace(g, dst, &kept);
    return st;
}
