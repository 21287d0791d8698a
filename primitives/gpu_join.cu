// gpu_join.cu: JOIN on a key prefix: count matches, scan, expand; by tiles; by tiles in one pass.
#include "gpu_core.cuh"

// ---- join: count matches per left tuple, scan, expand one output per thread -----------------
__global__ void k_join_count(const uint32_t *a, size_t na, int aa, const uint32_t *b, size_t nb, int ba, int k,
                             uint64_t *lo, uint64_t *cnt)
{
    GRID_STRIDE(i, na)
    {
        if (k == 0) {
            lo[i] = 0;
            cnt[i] = nb;
        } else {
            const uint32_t *key = a + i * aa;
            size_t l, h;
            equal_rows(b, ba, nb, key, k, &l, &h);
            lo[i] = l;
            cnt[i] = h - l;
        }
    }
}

__global__ void k_join_expand(const __grid_constant__ gprog code, uint64_t total, const uint64_t *off, size_t na, const uint64_t *lo, const uint32_t *a,
                              int aa, const uint32_t *b, int ba, int len, int nout, uint32_t *out, uint64_t *flags,
                              unsigned *div_flag)
{
    bool div0 = false;
    GRID_STRIDE(o, total)
    {
        size_t i = first_above(off, 0, na, o) - 1, j = lo[i] + (o - off[i]);   // o's left row
        bool keep = run_prog(code, len, a + i * aa, aa, b + j * ba, out + o * nout, &div0);
        if (flags)
            flags[o] = keep;
    }
    if (div0)
        atomicOr(div_flag, 1u);
}

// Each left row's key group [lo, lo + cnt) of b narrowed to its range (rfx_rx_range_of) of
// column col, on which b is sorted within groups: bounds[i] holds the row's bound values
// (the lower's first where it has both).
__global__ void k_join_narrow(uint64_t *lo, uint64_t *cnt, size_t na, const uint32_t *b, int ba, int col,
                              const uint32_t *bounds, int nbounds, bool is_signed, bool has_lo, bool lo_strict,
                              bool has_hi, bool hi_strict)
{
    GRID_STRIDE(i, na)
    {
        uint64_t l = lo[i], h = l + cnt[i];
        const uint32_t *v = bounds + i * (size_t)nbounds;
        uint32_t blo, bhi, vlo = has_lo ? v[0] : 0, vhi = has_hi ? v[has_lo ? 1 : 0] : 0;
        if (l == h)
            continue;
        if (!rfx_range_bits(is_signed, has_lo, vlo, lo_strict, has_hi, vhi, hi_strict, &blo, &bhi)) {
            cnt[i] = 0;
            continue;
        }
        for (uint64_t e = h; l < e;) {   // the first row at or above blo
            uint64_t m = l + (e - l) / 2;
            if (b[m * ba + col] < blo)
                l = m + 1;
            else
                e = m;
        }
        uint64_t s = l;
        for (uint64_t e = h; l < e;) {   // the first row above bhi
            uint64_t m = l + (e - l) / 2;
            if (b[m * ba + col] <= bhi)
                l = m + 1;
            else
                e = m;
        }
        lo[i] = s;
        cnt[i] = l - s;
    }
}

// The matches counted (lo, cnt) narrowed to each row's range where pred gives one.
static rfx_status narrow_to_range(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, const rfx_rx *pred,
                                  uint64_t *lo, uint64_t *cnt)
{
    rfx_rx_range r;
    if (k >= b->arity || !rfx_rx_range_of(pred, a->arity, a->arity + k, &r))
        return RFX_OK;
    rfx_rx *bound[2];
    int n = 0;
    if (r.lo)
        bound[n++] = (rfx_rx *)r.lo;
    if (r.hi)
        bound[n++] = (rfx_rx *)r.hi;
    rfx_dev_rows vals;
    rfx_gpu_rows_init(&vals, n);
    rfx_status st = rfx_gpu_mapfilter(g, a, NULL, bound, n, &vals);
    if (st == RFX_OK) {
        k_join_narrow<<<grid_for(a->n), 256, 0, g->stream>>>(lo, cnt, a->n, b->data, b->arity, k, vals.data, n,
                                                             r.is_signed, r.lo != NULL, r.lo_strict, r.hi != NULL,
                                                             r.hi_strict);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            st = fail(g, e, "k_join_narrow", __FILE__, __LINE__);
    }
    rfx_gpu_rows_free(g, &vals);
    return st;
}

// Tiles of the left side (joins, semi-joins) and of a join's outputs; see "join by tiles".
static rfx_status join_count_tiles(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, uint64_t *lo,
                                   uint64_t *cnt);
static rfx_status join_expand_tiles(rfx_gpu *g, const gprog &code, uint64_t total, const uint64_t *off, size_t na,
                                    const uint64_t *lo, const rfx_dev_rows *a, const rfx_dev_rows *b, int len,
                                    int nout, uint32_t *out, uint64_t *flags);
static rfx_status join_one_pass(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, const gprog &code,
                                int len, rfx_rx *const *out, int nout, rfx_dev_rows *res, bool *done);

// a_sorted: a in key order (the tiled kernels' ranges need it); else each row searched alone.
// range: b sorted on column k within key groups, each row's matches narrowed to its range
static rfx_status join(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, const rfx_rx *pred,
                       rfx_rx *const *out, int nout, bool a_sorted, bool range, rfx_dev_rows *dst)
{
    rfx_dev_rows res;
    rfx_gpu_rows_init(&res, nout);
    size_t na = a->n;
    if (na == 0 || b->n == 0) {
        replace(g, dst, &res);
        return RFX_OK;
    }
    int plen, olen, depth;
    gprog code;
    rfx_status st = load_prog(g, pred, out, nout, &code, &plen, &olen, &depth);
    if (st)
        return st;
    int len = plen + olen;
    if (!pred && a_sorted) {
        bool done;
        st = join_one_pass(g, a, b, k, code, len, out, nout, &res, &done);
        if (done || st) {
            if (st == RFX_OK)
                replace(g, dst, &res);
            else
                rfx_gpu_rows_free(g, &res);
            return st;
        }
    }
    uint64_t *lo, *cnt, *off;
    ALLOC(lo, na * 8);
    ALLOC(cnt, na * 8);
    ALLOC(off, na * 8);
    if (a_sorted && k >= 1 && k <= 4 && na / SEMI_T < (size_t)INT32_MAX) {
        st = join_count_tiles(g, a, b, k, lo, cnt);
    } else {
        k_join_count<<<grid_for(na), 256, 0, g->stream>>>(a->data, na, a->arity, b->data, b->n, b->arity, k, lo, cnt);
        CK_LAUNCH();
    }
    if (st == RFX_OK && range)
        st = narrow_to_range(g, a, b, k, pred, lo, cnt);
    uint64_t total = 0;
    if (st == RFX_OK)
        st = scan_total(g, cnt, off, na, &total);
    rfx_gpu_free(g, cnt);
    uint64_t *flags = NULL;
    if (st == RFX_OK && total)
        st = rows_alloc(g, &res, nout, (size_t)total);
    if (st == RFX_OK && total && pred) {
        flags = (uint64_t *)rfx_gpu_alloc(g, total * 8);
        if (!flags)
            st = RFX_ERR_NOMEM;
    }
    if (st == RFX_OK && total && total / JOIN_OUT_T < (uint64_t)INT32_MAX) {
        st = join_expand_tiles(g, code, total, off, na, lo, a, b, len, nout, res.data, flags);
        if (st == RFX_OK)
            st = check_div0(g);
    } else if (st == RFX_OK && total) {
        k_join_expand<<<grid_for(total), 256, 0, g->stream>>>(code, total, off, na, lo, a->data, a->arity, b->data, b->arity,
                                                              len, nout, res.data, flags, g->d_flag);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            st = fail(g, e, "k_join_expand", __FILE__, __LINE__);
        if (st == RFX_OK)
            st = check_div0(g);
    }
    rfx_gpu_free(g, lo);
    rfx_gpu_free(g, off);
    return finish_filtered(g, st, &res, (size_t)total, nout, flags, dst);
}

extern "C" rfx_status rfx_gpu_join(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, const rfx_rx *pred,
                                   rfx_rx *const *out, int nout, rfx_dev_rows *dst)
{
    return join(g, a, b, k, pred, out, nout, true, false, dst);
}

// A probe's searches stay in the L2 cache while b takes at most half of it, and cost less
// than a sort of a's rows up to PROBE_MAX_ROWS of them (docs/PERFORMANCE.md: TC of SF.cedge,
// deltas under a million rows, against p2p-Gnutella31's larger ones); rows fewer than one
// in PROBE_FEW_RATIO of b's search far apart in b however they are ordered.
#define PROBE_MAX_ROWS ((size_t)1 << 22)
#define PROBE_FEW_RATIO 64

extern "C" bool rfx_gpu_probe_pays(const rfx_gpu *g, size_t na, const rfx_dev_rows *b)
{
    return ((size_t)b->arity * 4 * b->n <= g->l2_bytes / 2 && na <= PROBE_MAX_ROWS) || na <= b->n / PROBE_FEW_RATIO;
}

static rfx_status probe_join(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, const rfx_rx *pred,
                             rfx_rx *const *out, int nout, bool range, rfx_dev_rows *dst)
{
    if (k == 0 || rfx_gpu_probe_pays(g, a->n, b))
        return join(g, a, b, k, pred, out, nout, k == 0, range, dst);
    rfx_dev_rows sorted;
    rfx_gpu_rows_init(&sorted, a->arity);
    rfx_status st = rfx_gpu_sort_leading_into(g, a, k, &sorted);
    if (st == RFX_OK)
        st = join(g, &sorted, b, k, pred, out, nout, true, range, dst);
    rfx_gpu_rows_free(g, &sorted);
    return st;
}

extern "C" rfx_status rfx_gpu_probe_join(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k,
                                         const rfx_rx *pred, rfx_rx *const *out, int nout, rfx_dev_rows *dst)
{
    return probe_join(g, a, b, k, pred, out, nout, false, dst);
}

extern "C" rfx_status rfx_gpu_range_join(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k,
                                         const rfx_rx *pred, rfx_rx *const *out, int nout, bool probe,
                                         rfx_dev_rows *dst)
{
    return probe ? probe_join(g, a, b, k, pred, out, nout, true, dst) : join(g, a, b, k, pred, out, nout, true, true, dst);
}

// ---- join by tiles ----------------------------------------------------------------------
// The count: a block per tile of SEMI_T left rows looks each row's key up among the keys
// of the right side in the tile's range (k_semi_ranges), staged in shared memory when they
// fit; the expansion: a block per JOIN_OUT_T outputs looks each output's left row up
// among the offsets of the rows that tile covers (k_join_starts), staged likewise. The
// kernels they replace searched the whole right side, and all left rows' offsets, in
// global memory per row and per output.

__global__ void __launch_bounds__(256) k_join_count_tiles(const uint32_t *a, size_t na, int aa, const uint32_t *b,
                                                          int ba, int k, const size_t *range, uint64_t *lo,
                                                          uint64_t *cnt)
{
    extern __shared__ uint32_t sk[];   // the right side's keys in the tile's range
    const size_t t = blockIdx.x, r0 = range[2 * t], m = range[2 * t + 1] - r0, mk = m * (size_t)k;
    const bool staged = m <= JOIN_B_CAP;
    if (staged)
        for (size_t w0 = threadIdx.x; w0 < mk; w0 += 8 * 256) {   // 8 loads in flight
            uint32_t v[8];
#pragma unroll
            for (int q = 0; q < 8; q++) {
                size_t w = w0 + q * 256;
                v[q] = w < mk ? b[(r0 + w / k) * ba + w % k] : 0;
            }
#pragma unroll
            for (int q = 0; q < 8; q++)
                if (w0 + q * 256 < mk)
                    sk[w0 + q * 256] = v[q];
        }
    __syncthreads();
    const uint32_t *seg = staged ? sk : b + r0 * ba;
    const int sa = staged ? k : ba;
    for (int j = 0; j < SEMI_ITEMS; j++) {
        size_t i = t * SEMI_T + (size_t)j * 256 + threadIdx.x;
        if (i >= na)
            break;
        const uint32_t *key = a + i * aa;
        size_t l, h;
        equal_rows(seg, sa, m, key, k, &l, &h);
        lo[i] = r0 + l;
        cnt[i] = h - l;
    }
}

// starts[t] = the left row of output t * JOIN_OUT_T (t < ntiles), starts[ntiles] = the
// left row of the last output: the last i with off[i] <= o (rows without outputs share
// their successor's offset and are passed over).
__global__ void k_join_starts(const uint64_t *off, size_t na, uint64_t total, size_t ntiles, size_t *starts)
{
    GRID_STRIDE(t, ntiles + 1)
    {
        uint64_t o = t < ntiles ? (uint64_t)t * JOIN_OUT_T : total - 1;
        starts[t] = first_above(off, 0, na, o) - 1;
    }
}

__global__ void __launch_bounds__(256) k_join_expand_tiles(const __grid_constant__ gprog code, uint64_t total,
                                                           const uint64_t *off, const size_t *starts,
                                                           const uint64_t *lo, const uint32_t *a, int aa,
                                                           const uint32_t *b, int ba, int len, int nout,
                                                           uint32_t *out, uint64_t *flags, unsigned *div_flag)
{
    __shared__ uint64_t so[JOIN_OFF_CAP];
    const size_t t = blockIdx.x, i0 = starts[t], nr = starts[t + 1] - i0 + 1;
    const bool staged = nr <= JOIN_OFF_CAP;
    if (staged)
        block_copy(so, off + i0, nr);
    __syncthreads();
    const uint64_t *seg = staged ? so : off + i0;
    bool div0 = false;
    for (int j = 0; j < JOIN_OUT_T / 256; j++) {
        uint64_t o = (uint64_t)t * JOIN_OUT_T + (uint64_t)j * 256 + threadIdx.x;
        if (o >= total)
            break;
        size_t l = first_above(seg, 0, nr, o), i = i0 + l - 1, jb = lo[i] + (o - seg[l - 1]);
        bool keep = run_prog(code, len, a + i * aa, aa, b + jb * ba, out + o * nout, &div0);
        if (flags)
            flags[o] = keep;
    }
    if (div0)
        atomicOr(div_flag, 1u);
}

// lo, cnt: per left row, its first match among b's rows and their number.
static rfx_status join_count_tiles(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, uint64_t *lo,
                                   uint64_t *cnt)
{
    size_t ntiles = (a->n + SEMI_T - 1) / SEMI_T, smem = (size_t)JOIN_B_CAP * k * 4;
    size_t *range = (size_t *)rfx_gpu_alloc(g, ntiles * 16);
    if (!range)
        return RFX_ERR_NOMEM;
    k_semi_ranges<<<search_grid(g, 2 * ntiles), 256, 0, g->stream>>>(a->data, a->n, a->arity, b->data, b->arity, b->n, k,
                                                               ntiles, SEMI_T, search_lanes(g, 2 * ntiles), range);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(k_join_count_tiles, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e == cudaSuccess) {
        k_join_count_tiles<<<(unsigned)ntiles, 256, smem, g->stream>>>(a->data, a->n, a->arity, b->data, b->arity, k,
                                                                       range, lo, cnt);
        e = cudaGetLastError();
    }
    rfx_gpu_free(g, range);
    return e == cudaSuccess ? RFX_OK : fail(g, e, "k_join_count_tiles", __FILE__, __LINE__);
}

static rfx_status join_expand_tiles(rfx_gpu *g, const gprog &code, uint64_t total, const uint64_t *off, size_t na,
                                    const uint64_t *lo, const rfx_dev_rows *a, const rfx_dev_rows *b, int len,
                                    int nout, uint32_t *out, uint64_t *flags)
{
    size_t ntiles = (size_t)((total + JOIN_OUT_T - 1) / JOIN_OUT_T);
    size_t *starts = (size_t *)rfx_gpu_alloc(g, (ntiles + 1) * 8);
    if (!starts)
        return RFX_ERR_NOMEM;
    k_join_starts<<<grid_for(ntiles + 1), 256, 0, g->stream>>>(off, na, total, ntiles, starts);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) {
        k_join_expand_tiles<<<(unsigned)ntiles, 256, 0, g->stream>>>(code, total, off, starts, lo, a->data, a->arity,
                                                                     b->data, b->arity, len, nout, out, flags,
                                                                     g->d_flag);
        e = cudaGetLastError();
    }
    rfx_gpu_free(g, starts);
    return e == cudaSuccess ? RFX_OK : fail(g, e, "k_join_expand_tiles", __FILE__, __LINE__);
}

// ---- join by tiles in one pass ----------------------------------------------------------------
// A block per tile of JT_T left rows stages the tile and the right rows of its key range
// (k_semi_ranges); each thread finds the matches of its JT_ITEMS consecutive rows (the
// first by halving, the rest a row at a time from the last match and then by galloping:
// step_rows), the counts are scanned within the tile while warp 0 places the tile by
// look-back, and the outputs go into a staged output tile (dealt evenly to a warp's
// lanes; rows with more than JT_HEAVY matches, skewed keys, by the whole block) written
// out in 16-byte stores. The output is allocated for na + nb rows before the count is
// known; a join with more is counted by that pass and run again into an exact
// allocation. The three-pass join (counts, scan, expansion) moved ~3x the floor's bytes
// through per-row arrays and reached 10% of it.
// JT_ITEMS: left rows a thread (odd: the threads' rows fall in different banks; 5 was the
// fastest of 3, 5, 7 and 9 in bench_gpu_prims)
#define JT_ITEMS 5
#define JT_T (JT_ITEMS * 256)
static_assert(JT_T * 3 / 2 < 65536, "a tile's left rows and staged right rows are numbered in 16 bits");
#define JT_HEAVY 32
// Blocks a multiprocessor: 5 (48 registers, 42 KB of shared memory where b is about as dense
// as a) beat 4 (63 registers, 49 KB) at every size measured, and 6 (40 registers) fell
// between; persistent blocks staging the next tile while joining one (two buffers: 3
// blocks, 78 registers) were slower.
#define JT_BLOCKS 5
#define JT_QUEUE 32   // heavy rows expanded per round
#define JT_SMEM (96 * 1024)

// cmp_prefix with the key's width known at compile time (K > 0; 0: k at run time): the
// one-pass join is bound by instructions, not bytes (ncu: the SMs far busier than memory).
template <int K> __device__ __forceinline__ int cmp_key(const uint32_t *x, const uint32_t *y, int k)
{
    if constexpr (K == 0) {
        return cmp_prefix(x, y, k);
    } else {
#pragma unroll
        for (int i = 0; i < K; i++)
            if (x[i] != y[i])
                return x[i] < y[i] ? -1 : 1;
        return 0;
    }
}

// Whether right row r lies before the first row whose k-prefix is >= key (upper: > key).
template <int K>
__device__ __forceinline__ bool row_before(const uint32_t *seg, int sa, unsigned r, const uint32_t *key, int k,
                                           bool upper)
{
    int c = cmp_key<K>(seg + r * (unsigned)sa, key, k);
    return c < 0 || (upper && c == 0);
}

// The first r in [0, m) whose k-prefix is >= key: halving without a branch (the base
// moves or not, the same steps for every lane of a warp; the branching loop took more
// instructions a step, though JOIN's time hardly changed).
template <int K>
__device__ __forceinline__ unsigned lower_rows(const uint32_t *seg, int sa, unsigned m, const uint32_t *key, int k)
{
    if (m == 0)
        return 0;
    unsigned base = 0;
    while (m > 1) {
        const unsigned half = m / 2;
        base = row_before<K>(seg, sa, base + half - 1, key, k, false) ? base + half : base;
        m -= half;
    }
    return base + (row_before<K>(seg, sa, base, key, k, false) ? 1u : 0u);
}

// The first r in [from, m) whose k-prefix is >= key (upper: > key), by galloping from
// `from`: a row's matches lie next to its neighbour's, so the steps are ~2 log of the
// distance (4 steps and then halving all of [from, m) cost a warp ~14 steps a row: ncu).
// 32-bit row indices (the caller's right side has fewer than 2^32 rows).
template <int K>
__device__ __forceinline__ unsigned seek_rows(const uint32_t *seg, int sa, unsigned from, unsigned m,
                                              const uint32_t *key, int k, bool upper)
{
    if (from >= m || !row_before<K>(seg, sa, from, key, k, upper))
        return from;
    unsigned lo = from, hi = m;   // lo before the answer, the answer in (lo, hi]
    for (unsigned step = 1;; step *= 2) {
        unsigned probe = lo + step;
        if (probe >= m || step > m)
            break;
        if (!row_before<K>(seg, sa, probe, key, k, upper)) {
            hi = probe;
            break;
        }
        lo = probe;
    }
    lo++;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        if (row_before<K>(seg, sa, mid, key, k, upper))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

// seek_rows for answers near `from`, as a join's usually are (a row's matches start where
// its neighbour's end, and keys of one or two matches end there): a row at a time for up to
// JT_STEPS rows, then galloping (skewed keys). The searches were most of the one-pass
// join's instructions (ncu).
#define JT_STEPS 4
template <int K>
__device__ __forceinline__ unsigned step_rows(const uint32_t *seg, int sa, unsigned from, unsigned m,
                                              const uint32_t *key, int k, bool upper)
{
#pragma unroll
    for (int q = 0; q < JT_STEPS; q++) {
        if (from >= m || !row_before<K>(seg, sa, from, key, k, upper))
            return from;
        from++;
    }
    return seek_rows<K>(seg, sa, from, m, key, k, upper);
}

// Each of a thread's JT_ITEMS rows (from `first` of the tile's tn, staged at sa): its
// first match lo[] in seg (mb right rows) and count cnt[]; returns their sum. Called with
// seg in shared memory or in global memory, once each, so that the staged case compiles
// to shared loads with 32-bit addresses (through one generic pointer: generic loads and
// 64-bit address arithmetic at every step, ncu).
template <int K>
__device__ __forceinline__ unsigned long long jt_ranges(const uint32_t *seg, int ba, unsigned mb, const uint32_t *sa,
                                                        int aa, size_t first, size_t tn, int k,
                                                        unsigned (&lo)[JT_ITEMS], unsigned (&cnt)[JT_ITEMS])
{
    unsigned long long mine = 0;
    unsigned at = 0;
#pragma unroll
    for (int s = 0; s < JT_ITEMS; s++) {
        lo[s] = 0;
        cnt[s] = 0;
        if (first + s < tn) {
            const uint32_t *key = sa + (first + s) * aa;
            unsigned l = s == 0 ? lower_rows<K>(seg, ba, mb, key, k) : step_rows<K>(seg, ba, at, mb, key, k, false);
            unsigned h = l < mb && cmp_key<K>(seg + l * (unsigned)ba, key, k) == 0
                             ? step_rows<K>(seg, ba, l + 1, mb, key, k, true)
                             : l;
            lo[s] = at = l;
            cnt[s] = h - l;
            mine += h - l;
        }
    }
    return mine;
}

// One output row of left row ra and right row rb: plain columns copied, else the program.
__device__ __forceinline__ void jt_emit(const gprog &code, int len, const colmap &m, const uint32_t *ra, int aa,
                                        const uint32_t *rb, uint32_t *dst, bool *div0)
{
    if (m.n) {
        for (int c = 0; c < m.n; c++)
            dst[c] = m.col[c] < aa ? ra[m.col[c]] : rb[m.col[c] - aa];
    } else {
        run_prog(code, len, ra, aa, rb, dst, div0);
    }
}

/* A warp's listed (left row, right row) pairs written as NO plain columns each (m.n == NO):
 * which side and word each column comes from is found once, not per output. Entries of
 * `pairs` at or below an output's index may be overwritten by it (read first). */
template <int NO>
__device__ __forceinline__ void jt_deal(const colmap &m, const uint32_t *sa, int aa, const uint32_t *sb, int ba,
                                        const uint32_t *pairs, uint32_t *wdst, unsigned warp_n, unsigned lane)
{
    bool from_b[NO];
    int word[NO];
#pragma unroll
    for (int c = 0; c < NO; c++) {
        from_b[c] = m.col[c] >= aa;
        word[c] = from_b[c] ? m.col[c] - aa : m.col[c];
    }
    for (unsigned j0 = 0; j0 < warp_n; j0 += 32) {
        const unsigned j = j0 + lane, e = j < warp_n ? pairs[j] : 0;
        __syncwarp();
        if (j < warp_n) {
            const uint32_t *ra = sa + (e >> 16) * aa, *rb = sb + (e & 0xffffu) * ba;
            uint32_t v[NO];
#pragma unroll
            for (int c = 0; c < NO; c++)
                v[c] = from_b[c] ? rb[word[c]] : ra[word[c]];
            uint32_t *d = wdst + (size_t)j * NO;
#pragma unroll
            for (int c = 0; c < NO; c++)
                d[c] = v[c];
        }
    }
}

// AA, BA: the sides' arities where known at compile time (0: aa, ba at run time; the
// graph join, rows of two columns on one key, has its row offsets folded into constants).
template <int K, int AA = 0, int BA = 0>
__global__ void __launch_bounds__(256, JT_BLOCKS)
    k_join_tiles(const __grid_constant__ gprog code, int len, const __grid_constant__ colmap m, const uint32_t *a,
                 size_t na, int aa, const uint32_t *b, int ba, int k, const size_t *range, size_t ntiles, unsigned bcap,
                 unsigned ocap, int nout, uint32_t *out, unsigned long long cap, const lb_args lb, unsigned *div_flag)
{
    aa = AA ? AA : aa;
    ba = BA ? BA : ba;
    extern __shared__ __align__(16) uint32_t smem[];   // a's tile, b's range, the output tile
    __shared__ unsigned s_qn, s_qrow[JT_QUEUE], s_qlo[JT_QUEUE], s_qcnt[JT_QUEUE];
    __shared__ unsigned long long s_qout[JT_QUEUE], s_base;
    const size_t tile = lb_tile(), t0 = tile * JT_T, tn = na - t0 < JT_T ? na - t0 : JT_T, r0 = range[2 * tile];
    const unsigned mb = (unsigned)(range[2 * tile + 1] - r0);   // right rows of the tile: indices below 2^32
    const uint32_t *ga = a + t0 * aa, *gb = b + r0 * ba;
    const bool b_staged = mb <= bcap;
    uint32_t *sa = smem + ((uintptr_t)ga & 15) / 4, *sbase = smem + ((JT_T * aa + 4 + 3) & ~3),
             *sb = sbase + ((uintptr_t)gb & 15) / 4, *so = sbase + ((bcap * ba + 4 + 3) & ~3u);
    block_stage_async(sa, ga, tn * aa);
    if (b_staged)
        block_stage_async(sb, gb, mb * ba);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    const uint32_t *seg = b_staged ? sb : gb;
    const size_t first = (size_t)threadIdx.x * JT_ITEMS;
    unsigned lo[JT_ITEMS], cnt[JT_ITEMS];   // 32-bit: 64-bit ones spilled (ncu: issue-bound)
    unsigned long long mine = b_staged ? jt_ranges<K>(sb, ba, mb, sa, aa, first, tn, k, lo, cnt)
                                       : jt_ranges<K>(gb, ba, mb, sa, aa, first, tn, k, lo, cnt);
    // The tile's outputs are placed within it first; warp 0 then finds the tile's offset by
    // look-back while the block writes its staged outputs (waiting for the look-back before
    // the writing left the SM's warps at a barrier: ncu).
    unsigned long long tile_n, base = 0, my_out = block_offsets<unsigned long long>(mine, &tile_n);
    if (threadIdx.x < 32) {
        unsigned long long at = lookback_warp(tile_n, tile, ntiles, lb);
        if (threadIdx.x == 0)
            s_base = at;
    }
    const bool o_staged = tile_n <= ocap;
    if (!o_staged) {
        __syncthreads();
        base = s_base;
        if (base + tile_n > cap)
            return;   // counted only: the caller allocates the total and runs again
    }
    uint32_t *dst = o_staged ? so : out + base * nout;
    bool div0 = false;
    unsigned heavy = 0;   // this thread's rows left to the block
#pragma unroll
    for (int s = 0; s < JT_ITEMS; s++)
        heavy |= cnt[s] > JT_HEAVY ? 1u << s : 0u;
    const unsigned lane = threadIdx.x & 31, full = 0xffffffffu;
    if (b_staged && o_staged && !__any_sync(full, heavy != 0)) {
        // The warp's outputs dealt to its lanes evenly (a thread writing its own rows'
        // outputs left 20 of 32 lanes idle): each thread lists its outputs' (left row,
        // right row) pairs, 16 bits each, in the last words of the warp's stretch of the
        // staged outputs, and the lanes then take them 32 at a time (a search over the
        // lanes' first outputs and their packed row counts for each output cost ~100
        // instructions a warp and 32 outputs, ncu). Output j overwrites only entries <= j,
        // read before it is written.
        const unsigned rel = (unsigned)(my_out - __shfl_sync(full, my_out, 0)),
                       warp_n = __shfl_sync(full, rel + (unsigned)mine, 31),
                       warp_at = (unsigned)__shfl_sync(full, my_out, 0);
        uint32_t *wdst = so + (size_t)warp_at * nout, *pairs = wdst + (size_t)warp_n * (nout - 1);
        unsigned o = rel;
#pragma unroll
        for (int s = 0; s < JT_ITEMS; s++) {
            for (unsigned q = 0; q < cnt[s]; q++)
                pairs[o + q] = (unsigned)(first + s) << 16 | (lo[s] + q);
            o += cnt[s];
        }
        __syncwarp();
        switch (m.n) {   // plain columns of a known width: the copy unrolled, its sources hoisted
        case 1: jt_deal<1>(m, sa, aa, sb, ba, pairs, wdst, warp_n, lane); break;
        case 2: jt_deal<2>(m, sa, aa, sb, ba, pairs, wdst, warp_n, lane); break;
        case 3: jt_deal<3>(m, sa, aa, sb, ba, pairs, wdst, warp_n, lane); break;
        case 4: jt_deal<4>(m, sa, aa, sb, ba, pairs, wdst, warp_n, lane); break;
        default:
            for (unsigned j0 = 0; j0 < warp_n; j0 += 32) {
                const unsigned j = j0 + lane, e = j < warp_n ? pairs[j] : 0;
                __syncwarp();
                if (j < warp_n)
                    jt_emit(code, len, m, sa + (e >> 16) * aa, aa, sb + (e & 0xffffu) * ba,
                            wdst + (size_t)j * nout, &div0);
            }
        }
    } else {
        unsigned long long o = my_out;
#pragma unroll
        for (int s = 0; s < JT_ITEMS; s++) {
            if (!(heavy >> s & 1))
                for (unsigned q = 0; q < cnt[s]; q++)
                    jt_emit(code, len, m, sa + (first + s) * aa, aa, seg + (size_t)(lo[s] + q) * ba,
                            dst + (o + q) * nout, &div0);
            o += cnt[s];
        }
    }
    // heavy rows: queued (JT_QUEUE at a time) and each expanded by the whole block
    while (__syncthreads_or(heavy != 0)) {
        if (threadIdx.x == 0)
            s_qn = 0;
        __syncthreads();
        unsigned long long o = my_out;
#pragma unroll
        for (int s = 0; s < JT_ITEMS; s++) {
            if (heavy >> s & 1) {
                unsigned at_q = atomicAdd(&s_qn, 1u);
                if (at_q < JT_QUEUE) {
                    s_qrow[at_q] = (unsigned)(first + s);
                    s_qlo[at_q] = lo[s];
                    s_qcnt[at_q] = cnt[s];
                    s_qout[at_q] = o;
                    heavy &= ~(1u << s);
                }
            }
            o += cnt[s];
        }
        __syncthreads();
        unsigned nq = s_qn < JT_QUEUE ? s_qn : JT_QUEUE;
        for (unsigned t = 0; t < nq; t++) {
            const uint32_t *ra = sa + (size_t)s_qrow[t] * aa;
            for (unsigned q = threadIdx.x; q < s_qcnt[t]; q += 256)
                jt_emit(code, len, m, ra, aa, seg + (size_t)(s_qlo[t] + q) * ba, dst + (s_qout[t] + q) * nout,
                        &div0);
        }
    }
    if (o_staged) {
        __syncthreads();
        base = s_base;
        if (base + tile_n <= cap)   // else counted only
            block_write_out(out + base * nout, so, (unsigned)tile_n * nout);
    }
    if (div0)
        atomicOr(div_flag, 1u);
}

/* The one-pass join for k of 1-4 key columns, rows of at most 4 words, no filter: into
 * res (n and the data set here). *done false: not taken (nothing done). */
static rfx_status join_one_pass(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, const gprog &code,
                                int len, rfx_rx *const *out, int nout, rfx_dev_rows *res, bool *done)
{
    *done = false;
    size_t na = a->n, nb = b->n, ntiles = (na + JT_T - 1) / JT_T;
    int aa = a->arity, ba = b->arity;
    if (k < 1 || k > 4 || aa > 4 || ba > 4 || nout < 1 || ntiles >= (size_t)INT32_MAX || nb >= (size_t)UINT32_MAX)
        return RFX_OK;
    colmap m;
    if (!plain_columns(out, nout, &m))
        m.n = 0;
    // right rows staged: a quarter more than the tile's where b is about as dense as a (a
    // range then spans about a tile, and JT_BLOCKS blocks fit), else half as many again;
    // outputs staged: what shared memory then has room for. 24 words spare: two alignments
    // of up to 7 and block_write_out's reads past the end.
    size_t bcap = nb * 8 <= na * 9 ? JT_T * 5 / 4 : JT_T * 3 / 2,
           words = JT_SMEM / 4 - (size_t)JT_T * aa - bcap * ba - 24,
           ocap = words / (size_t)nout < bcap ? words / (size_t)nout : bcap,
           smem = ((size_t)JT_T * aa + bcap * ba + ocap * nout + 24) * 4;
    lb_scratch lb;   // and each tile's range of b
    rfx_status st = lb_alloc(g, ntiles, ntiles * 16, &lb);
    if (st)
        return st;
    *done = true;
    unsigned long long n = 0;
    size_t *range = (size_t *)lb.extra;
    k_semi_ranges<<<search_grid(g, 2 * ntiles), 256, 0, g->stream>>>(a->data, na, aa, b->data, ba, nb, k, ntiles, JT_T,
                                                               search_lanes(g, 2 * ntiles), range);
    cudaError_t e = cudaGetLastError();
    // keys of 1 and 2 columns compared by unrolled code (k_join_tiles<0>: any width)
    auto kernel = k == 1 && aa == 2 && ba == 2 ? k_join_tiles<1, 2, 2>
                  : k == 1                     ? k_join_tiles<1>
                  : k == 2                     ? k_join_tiles<2>
                                               : k_join_tiles<0>;
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    unsigned long long cap = na + nb;
    if (rows_alloc(g, res, nout, (size_t)cap) != RFX_OK) {
        rfx_gpu_rows_init(res, nout);   // no room for the guess: count first
        cap = 0;
    }
    for (int pass = 0; pass < 2 && e == cudaSuccess && st == RFX_OK; pass++) {
        if (pass && (st = lb_retag(g, &lb)) != RFX_OK)
            break;
        kernel<<<(unsigned)ntiles, 256, smem, g->stream>>>(code, len, m, a->data, na, aa, b->data, ba, k, range, ntiles,
                                                           (unsigned)bcap, (unsigned)ocap, nout, res->data, cap, lb.a,
                                                           g->d_flag);
        e = cudaGetLastError();
        if (e == cudaSuccess)
            st = lb_total(g, &lb, "k_join_tiles", &n);
        if (e != cudaSuccess || st != RFX_OK || n <= cap)
            break;
        rfx_gpu_rows_free(g, res);   // more than the guess: the exact count is known now
        st = rows_alloc(g, res, nout, (size_t)n);
        cap = n;
    }
    lb_free(g, &lb, e != cudaSuccess || st != RFX_OK);
    if (e != cudaSuccess)
        st = fail(g, e, "k_join_tiles", __FILE__, __LINE__);
    if (st == RFX_OK)
        st = check_div0(g);
    if (st == RFX_OK && n * 4 < cap) {   // a guess far above the count: keep a tight copy
        rfx_dev_rows tight;
        st = rows_alloc(g, &tight, nout, (size_t)n);
        if (st == RFX_OK && n)
            st = rfx_gpu_memcpy_d2d(g, tight.data, res->data, (size_t)n * nout * 4);
        if (st == RFX_OK) {
            rfx_gpu_rows_free(g, res);
            *res = tight;
        } else {
            rfx_gpu_rows_free(g, &tight);
        }
    }
    res->n = (size_t)n;
    return st;
}
