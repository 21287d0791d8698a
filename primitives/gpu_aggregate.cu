// gpu_aggregate.cu: AGGREGATE: count, sum, min, max and mean of each group of b for the tuples of a.
#include "gpu_core.cuh"

// ---- aggregate ------------------------------------------------------------------------------
// The plan gives a sorted on its first k columns (the group keys). The first row of each run
// of equal keys folds its group of b (k_aggregate_heads), and every row takes its run's
// result (k_aggregate_rows): a group is folded once however many rows of a share it (an
// atom the planner made an aggregate meets one group from thousands of rows), in the order
// the CPU folds it, so results are the CPU's bit for bit. A row whose run head is not found
// (a out of key order) folds its group itself.
//
// A group of RFX_AGG_RUN rows or more is not folded by one thread (a sum over a whole
// relation, a few keys over millions of rows: one thread's fold waits on memory for each
// row) where its fold may be split into runs (`splits`): its runs are folded a warp each
// (k_fold_runs), then joined by a warp a group (k_join_runs). 64-bit kinds always split:
// rx_ops.h defines their fold run by run, and the CPU follows it. 32-bit kinds split where
// the order cannot change the value: integer sums (modulo 2^32), min and max of all but
// floats; float sums, means, min and max keep one sequence, Soufflé's, on one thread.

// Whether a group's fold may be split into runs; whether a run's fold may take its values in
// any order (else a warp takes them in order).
static __host__ __device__ bool splits(int fn, int prim, bool wide)
{
    if (fn == RFX_AGG_COUNT)
        return false;
    return wide || ((fn == RFX_AGG_SUM || fn == RFX_AGG_MIN || fn == RFX_AGG_MAX) && prim != RFX_FLOAT);
}

static __device__ bool order_free(int fn, int prim, bool wide)
{
    return !wide || rfx_agg_exact64(fn, prim) || prim != RFX_FLOAT64;
}

// key's group of b (its first k columns): rows [*l, *h), searched for in b's rows [wlo, whi)
// first (where a block's keys lie), checked, then in all of b where it is not there.
static __device__ void group_rows(const uint32_t *key, const uint32_t *b, size_t nb, int ba, int k, size_t wlo,
                                  size_t whi, size_t *l, size_t *h)
{
    if (k == 0) {
        *l = 0;
        *h = nb;
        return;
    }
    auto before = [=](size_t m) { return cmp_prefix(b + m * ba, key, k) < 0; };
    size_t at = partition_point(wlo < whi ? wlo : whi, whi < nb ? whi : nb, before);
    if ((at > 0 && !before(at - 1)) || (at < nb && before(at)))
        at = bound_rows(b, ba, nb, key, k, false);
    equal_rows_at(b, ba, nb, key, k, at, l, h);
}

// The fold of rows [l, h) of b, on this thread; whether it gives a value. A 64-bit kind's
// value (wide: not a count) is the two words at col, col + 1; an integer sum past its kind
// sets *overflow.
static __device__ bool fold_rows(const uint32_t *b, size_t l, size_t h, int ba, int fn, int col, int prim, bool wide,
                                 uint64_t *val, bool *overflow)
{
    *val = 0;
    if (fn == RFX_AGG_COUNT) {
        *val = (uint32_t)(h - l);
    } else if (wide && (h > l || fn == RFX_AGG_SUM)) {
        *val = rfx_agg_fold64(fn, prim, b, (size_t)ba, col, l, h, overflow);
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

// The first row of the run of a's rows equal to row i on their first k columns that holds
// i, galloped back from i (a run's rows are near each other, a search over all of a is not).
// Where a is not sorted on them this may be a row that is no head, or of other keys: the
// caller checks.
static __device__ size_t run_head(const uint32_t *a, int aa, size_t i, int k)
{
    const uint32_t *key = a + i * aa;
    size_t first = i, step = 1;   // row first is equal
    while (first > 0) {
        size_t probe = first > step ? first - step : 0;
        if (cmp_prefix(a + probe * aa, key, k) != 0)
            return partition_point(probe + 1, first, [=](size_t m) { return cmp_prefix(a + m * aa, key, k) != 0; });
        first = probe;
        step *= 2;
    }
    return 0;
}

// A group left to the runs' kernels: the head row of a whose value it makes, its rows of b,
// and the slot of its first run's fold among all groups' runs.
struct big_group {
    unsigned long long head, l, h, first;
};

struct runs_args {
    big_group *bigs;              // NULL: no group splits
    unsigned *nbig;               // groups listed
    unsigned *run_group;          // per run slot, its group in bigs
    unsigned long long *nruns;    // run slots taken
    __int128 *parts;              // per run slot, its fold
};

// A block's rows of a are consecutive: where a is sorted as b is (as plans give it), their
// groups lie between the first row's and past the last row's in b, found by two searches a
// block; each thread then searches that window, in cache, not all of b from DRAM.
__global__ void k_aggregate_heads(const uint32_t *a, size_t na, int aa, const uint32_t *b, size_t nb, int ba, int k,
                                  int fn, int col, int prim, bool wide, uint64_t *vals, unsigned char *have,
                                  const runs_args r, unsigned *overflow_flag)
{
    __shared__ size_t window[2];
    bool overflow = false;
    for (size_t base = blockIdx.x * (size_t)blockDim.x; base < na; base += (size_t)gridDim.x * blockDim.x) {
        const size_t last = (na - base < blockDim.x ? na : base + blockDim.x) - 1, i = base + threadIdx.x;
        if (k && threadIdx.x < 2)
            window[threadIdx.x] = bound_rows(b, ba, nb, a + (threadIdx.x ? last : base) * aa, k, threadIdx.x == 1);
        __syncthreads();
        const size_t wlo = window[0], whi = window[1];
        __syncthreads();   // read before the next round's searches write
        if (i >= na)
            continue;
        const uint32_t *key = a + i * aa;
        if (i > 0 && (k == 0 || cmp_prefix(key - aa, key, k) == 0)) {
            have[i] = NOT_HEAD;   // not the first row of its keys
            continue;
        }
        size_t l, h;
        group_rows(key, b, nb, ba, k, wlo, whi, &l, &h);
        if (r.bigs && h - l >= RFX_AGG_RUN) {
            unsigned long long runs = (h - l + RFX_AGG_RUN - 1) / RFX_AGG_RUN, first = atomicAdd(r.nruns, runs);
            unsigned e = atomicAdd(r.nbig, 1u);
            r.bigs[e] = big_group{i, l, h, first};
            for (unsigned long long s = 0; s < runs; s++)
                r.run_group[first + s] = e;
            have[i] = 1;
            continue;
        }
        have[i] = fold_rows(b, l, h, ba, fn, col, prim, wide, &vals[i], &overflow);
    }
    if (overflow)
        atomicOr(overflow_flag, 1u);
}

static __device__ __forceinline__ uint64_t value_at(const uint32_t *b, int ba, int col, bool wide, size_t q)
{
    return wide ? rfx_agg_value64(b, (size_t)ba, col, q) : b[q * ba + col];
}

// Two folds of one group's values joined (a 32-bit kind's in the low word).
static __device__ __forceinline__ __int128 join(int fn, int prim, bool wide, __int128 x, __int128 y)
{
    return wide ? rfx_agg_join64(fn, prim, x, y, false) : (__int128)rfx_agg_step(fn, prim, (uint32_t)x, (uint32_t)y);
}

static __device__ __forceinline__ __int128 shfl_down128(__int128 v, int d)
{
    uint64_t lo = __shfl_down_sync(0xffffffffu, (uint64_t)v, d),
             hi = __shfl_down_sync(0xffffffffu, (uint64_t)((unsigned __int128)v >> 64), d);
    return (__int128)((unsigned __int128)hi << 64 | lo);
}

static __device__ __forceinline__ __int128 shfl128(__int128 v, int from)
{
    uint64_t lo = __shfl_sync(0xffffffffu, (uint64_t)v, from),
             hi = __shfl_sync(0xffffffffu, (uint64_t)((unsigned __int128)v >> 64), from);
    return (__int128)((unsigned __int128)hi << 64 | lo);
}

// Every run's fold, a warp a run: in any order where that cannot change it (each lane folds
// its rows, then the lanes' folds are joined), else in order (the warp reads 32 values at a
// time and every lane folds them one after another, as rfx_agg_run64 does).
__global__ void __launch_bounds__(256) k_fold_runs(const runs_args r, const uint32_t *b, int ba, int fn, int col,
                                                   int prim, bool wide)
{
    const unsigned lane = threadIdx.x & 31;
    const unsigned long long warps = ((unsigned long long)gridDim.x * blockDim.x) >> 5;
    const bool any_order = order_free(fn, prim, wide);
    for (unsigned long long s = (blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x) >> 5; s < *r.nruns;
         s += warps) {
        big_group gr = r.bigs[r.run_group[s]];
        size_t lo = gr.l + (s - gr.first) * RFX_AGG_RUN, hi = lo + RFX_AGG_RUN < gr.h ? lo + RFX_AGG_RUN : gr.h;
        __int128 acc = 0;
        if (any_order) {
            // lanes past the run's end start from its first value (min and max) or 0 (sums)
            const bool sums = fn == RFX_AGG_SUM || fn == RFX_AGG_MEAN;
            if (!sums)
                acc = (__int128)value_at(b, ba, col, wide, lo);
            for (size_t q = lo + lane; q < hi; q += 32) {
                uint64_t v = value_at(b, ba, col, wide, q);
                acc = wide ? rfx_agg_add64(fn, prim, acc, v, false)
                           : (__int128)rfx_agg_step(fn, prim, (uint32_t)acc, (uint32_t)v);
            }
            for (int d = 16; d > 0; d >>= 1)
                acc = join(fn, prim, wide, acc, shfl_down128(acc, d));
        } else {
            for (size_t base = lo; base < hi; base += 32) {
                uint64_t mine = base + lane < hi ? value_at(b, ba, col, wide, base + lane) : 0;
                int n = hi - base < 32 ? (int)(hi - base) : 32;
                for (int j = 0; j < n; j++) {
                    uint64_t v = __shfl_sync(0xffffffffu, mine, j);
                    acc = rfx_agg_add64(fn, prim, acc, v, base + j == lo);
                }
            }
        }
        if (lane == 0)
            r.parts[s] = acc;
    }
}

// Each listed group's runs joined, its value made; a warp a group (a few groups of millions
// of rows each have thousands of runs: one thread's walk over them waits on a load for each).
// In any order where that cannot change the value (each lane joins every 32nd run, then the
// lanes' joins are joined); else in order: the warp reads 32 runs' folds at a time and every
// lane joins them one after another, so all lanes hold the same value.
__global__ void k_join_runs(const runs_args r, size_t cap, int fn, int prim, bool wide, uint64_t *vals,
                            unsigned *overflow_flag)
{
    const unsigned lane = threadIdx.x & 31;
    const size_t warps = ((size_t)gridDim.x * blockDim.x) >> 5;
    const bool any_order = order_free(fn, prim, wide);
    const unsigned nbig = *r.nbig;
    bool overflow = false;
    for (size_t e = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5; e < cap && e < nbig; e += warps) {
        const big_group gr = r.bigs[e];
        const unsigned long long runs = (gr.h - gr.l + RFX_AGG_RUN - 1) / RFX_AGG_RUN;
        const __int128 *parts = r.parts + gr.first;
        __int128 acc = 0;
        if (any_order) {
            if (lane < runs) {
                acc = parts[lane];
                for (unsigned long long s = lane + 32; s < runs; s += 32)
                    acc = join(fn, prim, wide, acc, parts[s]);
            }
            for (int d = 16; d > 0; d >>= 1) {   // lane L's join takes lane L + d's where it has one
                __int128 other = shfl_down128(acc, d);
                if (lane + d < runs)
                    acc = join(fn, prim, wide, acc, other);
            }
        } else {
            acc = parts[0];
            for (unsigned long long base = 1; base < runs; base += 32) {
                __int128 mine = base + lane < runs ? parts[base + lane] : 0;
                const int n = runs - base < 32 ? (int)(runs - base) : 32;
                for (int j = 0; j < n; j++)
                    acc = join(fn, prim, wide, acc, shfl128(mine, j));
            }
        }
        if (lane == 0)
            vals[gr.head] = wide ? rfx_agg_end64(fn, prim, acc, gr.h - gr.l, &overflow) : (uint32_t)acc;
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
        size_t head = k ? run_head(a, aa, i, k) : 0;
        uint64_t val = vals[head];
        bool got = have[head];
        if (have[head] == NOT_HEAD || (k && cmp_prefix(a + head * aa, key, k) != 0)) {
            size_t l, h;
            group_rows(key, b, nb, ba, k, 0, nb, &l, &h);
            got = fold_rows(b, l, h, ba, fn, col, prim, wide, &val, &overflow);
        }
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

// The runs' arrays for b's groups of RFX_AGG_RUN rows or more, in one allocation: at most
// cap groups (no more than na heads, nor nb / RFX_AGG_RUN of that size), and a run slot per
// RFX_AGG_RUN rows of b plus one per group for its last, partial run.
static rfx_status runs_alloc(rfx_gpu *g, size_t na, size_t nb, runs_args *r, size_t *cap, void **mem)
{
    *cap = nb / RFX_AGG_RUN < na ? nb / RFX_AGG_RUN : na;
    size_t slots = nb / RFX_AGG_RUN + *cap;
    size_t bytes = slots * sizeof(__int128) + *cap * sizeof(big_group) + slots * sizeof(unsigned) + 16;
    char *m = (char *)rfx_gpu_alloc(g, bytes);
    if (!m)
        return RFX_ERR_NOMEM;
    r->parts = (__int128 *)m;   // 16-byte aligned: the pool's blocks are
    r->bigs = (big_group *)(m + slots * sizeof(__int128));
    r->nruns = (unsigned long long *)(r->bigs + *cap);
    r->nbig = (unsigned *)(r->nruns + 1);
    r->run_group = r->nbig + 2;
    *mem = m;
    cudaError_t e = cudaMemsetAsync(r->nruns, 0, 16, g->stream);
    if (e != cudaSuccess) {
        rfx_gpu_free(g, m);
        return fail(g, e, "cudaMemsetAsync", __FILE__, __LINE__);
    }
    return RFX_OK;
}

extern "C" rfx_status rfx_gpu_aggregate(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, rfx_aggfn fn,
                                        int col, rfx_prim prim, rfx_dev_rows *dst)
{
    size_t na = a->n, nb = b->n;
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
    runs_args r = {};
    size_t cap = 0;
    void *runs_mem = NULL;
    if (flags && vals && splits((int)fn, (int)prim, wide) && nb >= RFX_AGG_RUN)
        st = runs_alloc(g, na, nb, &r, &cap, &runs_mem);
    if (!flags || !vals || st) {
        if (flags)
            rfx_gpu_free(g, flags);
        if (vals)
            rfx_gpu_free(g, vals);
        rfx_gpu_rows_free(g, &res);
        return st ? st : RFX_ERR_NOMEM;
    }
    unsigned char *have = (unsigned char *)(vals + na);
    // only an integer sum of a 64-bit kind can overflow: the flag is cleared and read back
    // (a host wait) for those alone
    const bool checked = wide && fn == RFX_AGG_SUM && prim != RFX_FLOAT64;
    g->div_armed = checked;
    cudaError_t e = checked ? cudaMemsetAsync(g->d_flag, 0, sizeof(unsigned), g->stream) : cudaSuccess;
    // a nullary outer relation holds one empty tuple: give the kernels a valid pointer
    const uint32_t *adata = a->data ? a->data : (const uint32_t *)flags;
    if (e == cudaSuccess) {
        k_aggregate_heads<<<grid_for(na), 256, 0, g->stream>>>(adata, na, a->arity, b->data, nb, b->arity, k, (int)fn,
                                                               col, (int)prim, wide, vals, have, r, g->d_flag);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess && r.bigs) {
        k_fold_runs<<<(unsigned)g->sms * 8, 256, 0, g->stream>>>(r, b->data, b->arity, (int)fn, col, (int)prim, wide);
        e = cudaGetLastError();
        if (e == cudaSuccess) {
            k_join_runs<<<grid_for(cap * 32), 256, 0, g->stream>>>(r, cap, (int)fn, (int)prim, wide, vals, g->d_flag);
            e = cudaGetLastError();
        }
    }
    if (e == cudaSuccess) {
        k_aggregate_rows<<<grid_for(na), 256, 0, g->stream>>>(adata, na, a->arity, b->data, nb, b->arity, k, (int)fn,
                                                              col, (int)prim, wide, vals, have, res.data, flags,
                                                              g->d_flag);
        e = cudaGetLastError();
    }
    if (e != cudaSuccess)
        st = fail(g, e, "k_aggregate", __FILE__, __LINE__);
    if (st == RFX_OK && checked && (st = check_div0(g)) == RFX_ERR_DIV0)
        snprintf(g->err, sizeof g->err, "a 64-bit sum overflows");
    rfx_gpu_free(g, vals);
    if (runs_mem)
        rfx_gpu_free(g, runs_mem);
    rfx_dev_rows kept;
    if (st == RFX_OK)
        st = compact(g, res.data, na, oa, flags, &kept);
    rfx_gpu_free(g, flags);
    rfx_gpu_rows_free(g, &res);
    if (st == RFX_OK)
        replace(g, dst, &kept);
    return st;
}
