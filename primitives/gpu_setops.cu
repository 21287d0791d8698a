// gpu_setops.cu: UNION, DIFFERENCE and the semi- and anti-joins by merge path over tiles.
#include "gpu_core.cuh"

// ---- union of rows wider than SETOP_MAX_WORDS -----------------------------------------------
// Merge of two disjoint sorted sets, a block per tile of the big side: each row of the
// tile [t0, t1) and of the small side's rows that fall between big[t0] and big[t1] (found
// by two searches) is written once at its final place = own index + rank in the other
// side, the ranks searched in global memory.
#define MERGE_TILE 1024

__device__ __forceinline__ size_t lower_bound_in(const uint32_t *rows, int arity, size_t lo, size_t hi,
                                                 const uint32_t *key)
{
    return partition_point(lo, hi, [=](size_t m) { return cmp_prefix(rows + m * arity, key, arity) < 0; });
}

__global__ void __launch_bounds__(256) k_merge_tiles(const uint32_t *big, size_t nb, const uint32_t *small, size_t ns,
                                                     int arity, uint32_t *out)
{
    __shared__ size_t s_lo, s_hi;
    const size_t t0 = (size_t)blockIdx.x * MERGE_TILE, t1 = t0 + MERGE_TILE < nb ? t0 + MERGE_TILE : nb;
    if (threadIdx.x == 0)
        s_lo = t0 == 0 ? 0 : lower_bound_in(small, arity, 0, ns, big + t0 * arity);
    if (threadIdx.x == 1)
        s_hi = t1 == nb ? ns : lower_bound_in(small, arity, 0, ns, big + t1 * arity);
    __syncthreads();
    const size_t nt = t1 - t0, lo = s_lo, m = s_hi - s_lo;
    const uint32_t *tb = big + t0 * arity, *ts = small + lo * arity;
    for (size_t i = threadIdx.x; i < nt; i += blockDim.x) {
        const uint32_t *row = tb + i * arity;
        size_t pos = t0 + i + lo + lower_bound_in(ts, arity, 0, m, row);
        for (int c = 0; c < arity; c++)
            out[pos * arity + c] = row[c];
    }
    for (size_t j = threadIdx.x; j < m; j += blockDim.x) {
        const uint32_t *row = ts + j * arity;
        size_t pos = lo + j + t0 + lower_bound_in(tb, arity, 0, nt, row);
        for (int c = 0; c < arity; c++)
            out[pos * arity + c] = row[c];
    }
}

// ---- set operations by merge path -----------------------------------------------------------
// A tile of SETOP_TD consecutive rows of the merge of a and b (a's rows first among equal
// keys; the tiles' splits found all at once by k_setop_splits) is staged in shared memory
// together with the next row of b; each thread finds its SETOP_D rows of the tile by a
// search along its diagonal and walks them in order. An a row's match is then the next
// row of b: semi- and anti-join keep a's rows with or without one, the union keeps all of
// b and a's rows without one. The kept rows are counted, placed (block scan, decoupled
// look-back) and written from a staged output tile in one sweep. Every row is read once
// and compared about twice: the row-at-a-time searches of k_semi_tiles and k_merge_tiles
// compared each row ~12 times and left the memory system idle meanwhile.
#define SETOP_D 11   // rows a thread (odd: the threads' rows fall in different banks; 7: 47%, 15: 45%)
#define SETOP_TD (SETOP_D * 256)
#define SETOP_MAX_WORDS 4
enum { SETOP_ANTI, SETOP_SEMI, SETOP_UNION };

// splits[t] = the rows of a among the first min(t * SETOP_TD, na + nb) of the merge, G
// lanes a split (search_lanes).
__global__ void k_setop_splits(const uint32_t *a, size_t na, int aa, const uint32_t *b, size_t nb, int ba, int k,
                               size_t ntiles, int G, size_t *splits)
{
    GROUP_STRIDE(t, ntiles + 1, G)
    {
        const size_t d = t * (size_t)SETOP_TD < na + nb ? t * (size_t)SETOP_TD : na + nb,
                     lo = d > nb ? d - nb : 0, hi = d < na ? d : na;
        auto before = [=](size_t m) { return cmp_prefix(a + m * aa, b + (d - 1 - m) * ba, k) <= 0; };
        const size_t at = lanes_partition_point(G, lo, hi, before);
        if (threadIdx.x % G == 0)
            splits[t] = at;
    }
}

// Shared memory: the output tile (SETOP_TD rows of aa words), then a's and b's rows of
// the tile and b's next row, each placed as in global memory modulo 16 bytes.
static size_t setop_smem(int aa, int ba)
{
    int w = aa > ba ? aa : ba;
    return ((size_t)SETOP_TD * aa + (size_t)(SETOP_TD + 1) * w + 12) * 4;
}

__global__ void __launch_bounds__(256) k_setop_tiles(const uint32_t *a, size_t na, int aa, const uint32_t *b,
                                                     size_t nb, int ba, int k, int mode, const size_t *splits,
                                                     size_t ntiles, uint32_t *out, const lb_args lb)
{
    extern __shared__ __align__(16) uint32_t smem[];
    const size_t tile = lb_tile(), d0 = tile * SETOP_TD, dn = d0 + SETOP_TD < na + nb ? d0 + SETOP_TD : na + nb;
    const size_t a0 = splits[tile], b0 = d0 - a0, b1 = dn - splits[tile + 1];
    const unsigned nat = (unsigned)(splits[tile + 1] - a0), nbt = (unsigned)(b1 - b0),
                   nbx = nbt + (b1 < nb ? 1u : 0u);   // with b's next row
    const uint32_t *ga = a + a0 * aa, *gb = b + b0 * ba;
    uint32_t *so = smem, *sa = so + SETOP_TD * aa + ((uintptr_t)ga & 15) / 4;
    uint32_t *sb = so + ((SETOP_TD * aa + 4 + nat * aa + 3) & ~3u) + ((uintptr_t)gb & 15) / 4;
    block_stage_async(sa, ga, (size_t)nat * aa);
    block_stage_async(sb, gb, (size_t)nbx * ba);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    // this thread's rows of the merge: [x0, x1), starting at a's row i and b's row j
    const unsigned len = (unsigned)(dn - d0), x0 = threadIdx.x * SETOP_D < len ? threadIdx.x * SETOP_D : len,
                   x1 = x0 + SETOP_D < len ? x0 + SETOP_D : len;
    unsigned lo = x0 > nbt ? x0 - nbt : 0, hi = x0 < nat ? x0 : nat;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (cmp_prefix(sa + mid * aa, sb + (x0 - 1 - mid) * ba, k) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    const unsigned i0 = lo, j0 = x0 - lo;
    unsigned took_a = 0, kept = 0, cnt = 0, i = i0, j = j0;
#pragma unroll
    for (int s = 0; s < SETOP_D; s++) {
        if (x0 + s < x1) {
            int c = 1;
            if (i < nat && j < nbx)
                c = cmp_prefix(sa + i * aa, sb + j * ba, k);
            bool from_a = i < nat && (j >= nbt || c <= 0), keep;
            if (from_a) {
                keep = (c == 0) == (mode == SETOP_SEMI);   // a union keeps a's rows without a match
                i++;
            } else {
                keep = mode == SETOP_UNION;
                j++;
            }
            took_a |= (unsigned)from_a << s;
            kept |= (unsigned)keep << s;
            cnt += keep;
        }
    }
    unsigned long long tile_n, tile_at;
    unsigned pos = block_place<unsigned>(cnt, tile, ntiles, lb, &tile_n, &tile_at);
    i = i0;
    j = j0;
#pragma unroll
    for (int s = 0; s < SETOP_D; s++) {
        if (x0 + s < x1) {
            const uint32_t *row = took_a >> s & 1 ? sa + i++ * aa : sb + j++ * ba;
            if (kept >> s & 1) {
                for (int c = 0; c < aa; c++)
                    so[pos * aa + c] = row[c];
                pos++;
            }
        }
    }
    __syncthreads();
    block_write_out(out + tile_at * aa, so, (unsigned)tile_n * aa);
}

// A row of W words (1 or 2) as one integer that orders as the row does: where the key is
// the whole row (sets: the semi-naive loop's differences and unions), the merge compares
// and moves rows in single operations.
template <int W> struct row_key;
template <> struct row_key<1> {
    typedef uint32_t T;
    static __device__ __forceinline__ T at(const uint32_t *s, unsigned i) { return s[i]; }
    static __device__ __forceinline__ void put(uint32_t *d, unsigned i, T v) { d[i] = v; }
};
template <> struct row_key<2> {   // rows 8-byte aligned
    typedef unsigned long long T;
    static __device__ __forceinline__ T at(const uint32_t *s, unsigned i)
    {
        uint2 v = ((const uint2 *)s)[i];
        return (T)v.x << 32 | v.y;
    }
    static __device__ __forceinline__ void put(uint32_t *d, unsigned i, T v)
    {
        ((uint2 *)d)[i] = make_uint2((uint32_t)(v >> 32), (uint32_t)v);
    }
};

// Shared memory of k_setop_rows: a's and b's rows of the tile and b's next row (placed as
// in global memory modulo 16 bytes), which the output tile then overwrites.
static size_t setop_rows_smem(int w)
{
    return ((size_t)(SETOP_TD + 1) * w + 12) * 4;
}

// k_setop_tiles where a and b are W-word rows and the key is the whole row: each thread
// holds the current row of a and of b in registers as they merge and keeps the rows it
// will write there too, so the output tile can overwrite the staged input (half the
// shared memory; 48 registers keep 5 blocks a multiprocessor all the same, and bounds of
// 6 or 8 blocks were no faster). The general kernel was bound by issue, not DRAM (ncu);
// this one moves the set operations of such rows markedly closer to their floor.
template <int W>
__global__ void __launch_bounds__(256) k_setop_rows(const uint32_t *a, size_t na, const uint32_t *b, size_t nb,
                                                    int mode, const size_t *splits, size_t ntiles, uint32_t *out,
                                                    const lb_args lb)
{
    typedef row_key<W> R;
    typedef typename R::T K;
    extern __shared__ __align__(16) uint32_t smem[];
    const size_t tile = lb_tile(), d0 = tile * SETOP_TD, dn = d0 + SETOP_TD < na + nb ? d0 + SETOP_TD : na + nb;
    const size_t a0 = splits[tile], b0 = d0 - a0, b1 = dn - splits[tile + 1];
    const unsigned nat = (unsigned)(splits[tile + 1] - a0), nbt = (unsigned)(b1 - b0),
                   nbx = nbt + (b1 < nb ? 1u : 0u);   // with b's next row
    const uint32_t *ga = a + a0 * W, *gb = b + b0 * W;
    uint32_t *so = smem, *sa = smem + ((uintptr_t)ga & 15) / 4;
    uint32_t *sb = smem + ((4 + nat * W + 3) & ~3u) + ((uintptr_t)gb & 15) / 4;
    block_stage_async(sa, ga, (size_t)nat * W);
    block_stage_async(sb, gb, (size_t)nbx * W);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    const unsigned len = (unsigned)(dn - d0), x0 = threadIdx.x * SETOP_D < len ? threadIdx.x * SETOP_D : len,
                   x1 = x0 + SETOP_D < len ? x0 + SETOP_D : len;
    unsigned lo = x0 > nbt ? x0 - nbt : 0, hi = x0 < nat ? x0 : nat;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (R::at(sa, mid) <= R::at(sb, x0 - 1 - mid))
            lo = mid + 1;
        else
            hi = mid;
    }
    unsigned i = lo, j = x0 - lo, kept = 0, cnt = 0;
    K ka = i < nat ? R::at(sa, i) : 0, kb = j < nbx ? R::at(sb, j) : 0, row[SETOP_D];
#pragma unroll
    for (int s = 0; s < SETOP_D; s++) {
        if (x0 + s < x1) {
            const bool from_a = i < nat && (j >= nbt || ka <= kb), match = j < nbx && ka == kb;
            bool keep;
            if (from_a) {
                keep = match == (mode == SETOP_SEMI);   // a union keeps a's rows without a match
                row[s] = ka;
                i++;
                ka = i < nat ? R::at(sa, i) : 0;
            } else {
                keep = mode == SETOP_UNION;
                row[s] = kb;
                j++;
                kb = j < nbx ? R::at(sb, j) : 0;
            }
            kept |= (unsigned)keep << s;
            cnt += keep;
        }
    }
    unsigned long long tile_n, tile_at;
    unsigned pos = block_place<unsigned>(cnt, tile, ntiles, lb, &tile_n, &tile_at);   // after every walk
#pragma unroll
    for (int s = 0; s < SETOP_D; s++)
        if (kept >> s & 1)
            R::put(so, pos++, row[s]);
    __syncthreads();
    block_write_out(out + tile_at * W, so, (unsigned)tile_n * W);
}

/* dst = a's rows with (SEMI) or without (ANTI) a row of b equal on the first k columns
 * (b of arity k), or a u b (UNION: equal arities k; sets); a and b sorted, of at most
 * SETOP_MAX_WORDS columns. */
static rfx_status setop_merge(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, int mode,
                              rfx_dev_rows *dst)
{
    size_t na = a->n, nb = b->n, ntiles = (na + nb + SETOP_TD - 1) / SETOP_TD, smem = setop_smem(a->arity, b->arity);
    rfx_dev_rows res;
    lb_scratch lb;   // and the tiles' splits
    rfx_status st = tiled_begin(g, a->arity, mode == SETOP_UNION ? na + nb : na, ntiles, (ntiles + 1) * 8, &res, &lb);
    if (st)
        return st;
    size_t *splits = (size_t *)lb.extra;
    k_setop_splits<<<search_grid(g, ntiles + 1), 256, 0, g->stream>>>(a->data, na, a->arity, b->data, nb, b->arity, k,
                                                                ntiles, search_lanes(g, ntiles + 1), splits);
    cudaError_t e = cudaGetLastError();
    // whole rows of one or two words (8-byte aligned) as keys: k_setop_rows
    const int w = a->arity == k && b->arity == k && k <= 2 && ((uintptr_t)a->data | (uintptr_t)b->data) % 8 == 0 ? k : 0;
    auto rows = w == 1 ? k_setop_rows<1> : k_setop_rows<2>;
    if (w)
        smem = setop_rows_smem(w);
    if (e == cudaSuccess)
        e = w ? cudaFuncSetAttribute(rows, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem)
              : cudaFuncSetAttribute(k_setop_tiles, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e == cudaSuccess && w)
        rows<<<(unsigned)ntiles, 256, smem, g->stream>>>(a->data, na, b->data, nb, mode, splits, ntiles, res.data, lb.a);
    else if (e == cudaSuccess)
        k_setop_tiles<<<(unsigned)ntiles, 256, smem, g->stream>>>(a->data, na, a->arity, b->data, nb, b->arity, k,
                                                                  mode, splits, ntiles, res.data, lb.a);
    if (e == cudaSuccess)
        e = cudaGetLastError();
    return tiled_end(g, e, w ? "k_setop_rows" : "k_setop_tiles", &lb, &res, dst);
}

static rfx_status union_rows(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, bool disjoint, rfx_dev_rows *dst);

extern "C" rfx_status rfx_gpu_union(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, rfx_dev_rows *dst)
{
    return union_rows(g, a, b, false, dst);
}

extern "C" rfx_status rfx_gpu_union_disjoint(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b,
                                             rfx_dev_rows *dst)
{
    return union_rows(g, a, b, true, dst);
}

static rfx_status union_rows(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, bool disjoint, rfx_dev_rows *dst)
{
    int ar = a->arity;
    if (ar == 0) {
        rfx_dev_rows r;
        rfx_gpu_rows_init(&r, 0);
        r.n = a->n || b->n ? 1 : 0;
        replace(g, dst, &r);
        return RFX_OK;
    }
    if (b->n == 0 || a->n == 0)
        return rfx_gpu_copy(g, b->n == 0 ? a : b, dst);
    if (ar <= SETOP_MAX_WORDS && (a->n + b->n) / SETOP_TD < (size_t)INT32_MAX)
        return setop_merge(g, a, b, ar, SETOP_UNION, dst);
    // The smaller side less what the larger holds (in the semi-naive loop, full u new, new
    // is disjoint from full already: a search per tuple of the small side). Disjoint sets
    // then merge with each tuple written once at its final place: no unique/compact passes.
    const rfx_dev_rows *big = a->n >= b->n ? a : b, *small = a->n >= b->n ? b : a;
    // Operands known disjoint (the plan says so) skip the search: the small side is
    // merged as it is, borrowed.
    rfx_dev_rows owned;
    rfx_gpu_rows_init(&owned, ar);
    rfx_status st = disjoint ? RFX_OK : rfx_gpu_semijoin(g, small, big, ar, false, &owned);
    if (st)
        return st;
    const rfx_dev_rows *fresh = disjoint ? small : &owned;
    if (fresh->n == 0) {
        rfx_gpu_rows_free(g, &owned);
        return rfx_gpu_copy(g, big, dst);
    }
    rfx_dev_rows res;
    if ((st = rows_alloc(g, &res, ar, big->n + fresh->n)) != RFX_OK) {
        rfx_gpu_rows_free(g, &owned);
        return st;
    }
    size_t tiles = (big->n + MERGE_TILE - 1) / MERGE_TILE;
    k_merge_tiles<<<(unsigned)tiles, 256, 0, g->stream>>>(big->data, big->n, fresh->data, fresh->n, ar, res.data);
    cudaError_t e = cudaGetLastError();
    rfx_gpu_rows_free(g, &owned);
    if (e != cudaSuccess) {
        rfx_gpu_rows_free(g, &res);
        return fail(g, e, "k_merge_tiles", __FILE__, __LINE__);
    }
    replace(g, dst, &res);
    return RFX_OK;
}

// ---- semi-join / anti-join --------------------------------------------------------------------
// A probe's b as a bitmap of its keys (one or two words: a number, or a 64-bit one's high and
// low words) over their span: a row of a in any order is found by one load, in cache, not by
// a search of b in global memory, a dependent load for each of its ~20 levels.
struct key_bits {
    const uint32_t *bits;   // NULL: b is searched
    uint64_t lo, span;      // b's least key and its largest less it, plus one
};

static __host__ __device__ __forceinline__ uint64_t key_value(const uint32_t *key, int k)
{
    return k == 1 ? key[0] : (uint64_t)key[0] << 32 | key[1];
}

// Whether key (k columns) is among b's nb rows (sorted sets of k columns).
static __device__ __forceinline__ bool semi_found(const uint32_t *key, const uint32_t *b, size_t nb, int k,
                                                  const key_bits kb)
{
    if (kb.bits) {
        uint64_t v = key_value(key, k) - kb.lo;
        return v < kb.span && (kb.bits[v >> 5] >> (v & 31) & 1u);
    }
    size_t l = bound_rows(b, k, nb, key, k, false);
    return l < nb && cmp_prefix(b + l * k, key, k) == 0;
}

__global__ void k_key_bits(const uint32_t *b, size_t nb, int k, uint64_t lo, uint32_t *bits)
{
    GRID_STRIDE(i, nb)
    {
        uint64_t v = key_value(b + i * k, k) - lo;
        atomicOr(&bits[v >> 5], 1u << (v & 31));
    }
}

// Probes of at least this many rows of a may take b as a bitmap (its build waits for b's
// first and last keys).
#define KEY_BITS_FROM ((size_t)1 << 20)

// b's keys as a bitmap for na probes (*kb; kb->bits NULL where it does not pay: few probes,
// keys of more than two words, a span wider than 64 bits a row of b and 16 M bits, or no
// memory for it). The caller frees kb->bits after the probes.
static rfx_status key_bitmap(rfx_gpu *g, const rfx_dev_rows *b, int k, size_t na, key_bits *kb)
{
    *kb = key_bits{NULL, 0, 0};
    if (na < KEY_BITS_FROM || k < 1 || k > 2 || b->n == 0)
        return RFX_OK;
    uint32_t ends[4];
    CK(cudaMemcpyAsync(ends, b->data, k * 4, cudaMemcpyDeviceToHost, g->stream));
    CK(cudaMemcpyAsync(ends + 2, b->data + (b->n - 1) * k, k * 4, cudaMemcpyDeviceToHost, g->stream));
    CK(cudaStreamSynchronize(g->stream));
    const uint64_t lo = key_value(ends, k), hi = key_value(ends + 2, k);
    const uint64_t most = 64 * (uint64_t)b->n > ((uint64_t)1 << 24) ? 64 * (uint64_t)b->n : (uint64_t)1 << 24;
    if (hi < lo || hi - lo >= most)
        return RFX_OK;
    const uint64_t span = hi - lo + 1, words = (span + 31) / 32;
    uint32_t *bits = (uint32_t *)rfx_gpu_alloc(g, words * 4);
    if (!bits) {   // the search needs no memory: go on without
        g->err[0] = 0;
        return RFX_OK;
    }
    cudaError_t e = cudaMemsetAsync(bits, 0, words * 4, g->stream);
    if (e == cudaSuccess) {
        k_key_bits<<<grid_for(b->n), 256, 0, g->stream>>>(b->data, b->n, k, lo, bits);
        e = cudaGetLastError();
    }
    if (e != cudaSuccess) {
        rfx_gpu_free(g, bits);
        return fail(g, e, "k_key_bits", __FILE__, __LINE__);
    }
    *kb = key_bits{bits, lo, span};
    return RFX_OK;
}

__global__ void k_semi(const uint32_t *a, size_t na, int aa, const uint32_t *b, size_t nb, int k, bool keep,
                       const key_bits kb, uint64_t *flags)
{
    GRID_STRIDE(i, na)
    {
        flags[i] = semi_found(a + i * aa, b, nb, k, kb) == keep;
    }
}

// A block per tile of SEMI_T rows of a (sorted), in block order: the rows of b
// whose keys lie between the tile's first and last key (k_semi_ranges; range NULL: a in
// any order, every tile searches all of b) are staged in
// shared memory when they fit, each row of the tile is looked up there (else in that
// range of b in global memory), and the rows kept are placed by per-warp ballots and the
// warp-wide look-back and written from a staged output tile in one sweep. So a is read
// once, b at most once, the output written once: no flags and no separate compaction.


__global__ void __launch_bounds__(256) k_semi_tiles(const uint32_t *a, size_t na, int aa, const uint32_t *b,
                                                    size_t nb, const size_t *range, int k, bool keep, size_t b_cap,
                                                    const key_bits kb, uint32_t *out, const lb_args lb)
{
    extern __shared__ __align__(16) uint32_t smem[];   // a's tile, the output tile, b's segment
    __shared__ unsigned s_kept, s_excl[SEMI_T / 32];
    __shared__ unsigned long long s_at;
    uint32_t *sa = smem, *so = sa + SEMI_T * aa, *sb = so + SEMI_T * aa;
    unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const size_t tile = lb_tile(), t0 = tile * SEMI_T, tn = na - t0 < SEMI_T ? na - t0 : SEMI_T,
                 ntiles = (na + SEMI_T - 1) / SEMI_T;
    block_copy(sa, a + t0 * aa, tn * aa);
    const size_t lo = range ? range[2 * tile] : 0, m = kb.bits ? 0 : range ? range[2 * tile + 1] - lo : nb;
    const bool staged = m <= b_cap;
    if (staged)
        block_copy(sb, b + lo * k, m * k);
    __syncthreads();
    const uint32_t *seg = staged ? sb : b + lo * k;
    unsigned ballot[SEMI_ITEMS];
#pragma unroll
    for (int j = 0; j < SEMI_ITEMS; j++) {
        size_t r = (size_t)j * 256 + threadIdx.x;
        bool kept = false;
        if (r < tn)
            kept = semi_found(sa + r * aa, seg, m, k, kb) == keep;
        ballot[j] = __ballot_sync(0xffffffffu, kept);
        if (lane == 0)
            s_excl[j * 8 + warp] = __popc(ballot[j]);
    }
    __syncthreads();
    if (warp == 0) {   // the tile's place
        unsigned tile_kept;
        unsigned long long excl = place_slabs(s_excl, SEMI_T / 32, tile, ntiles, lb, &tile_kept);
        if (lane == 0) {
            s_kept = tile_kept;
            s_at = excl;
        }
    }
    __syncthreads();
    const unsigned below = (1u << lane) - 1;
#pragma unroll
    for (int j = 0; j < SEMI_ITEMS; j++)
        if (ballot[j] >> lane & 1) {
            unsigned at = s_excl[j * 8 + warp] + __popc(ballot[j] & below);
            size_t r = (size_t)j * 256 + threadIdx.x;
            for (int c = 0; c < aa; c++)
                so[at * aa + c] = sa[r * aa + c];
        }
    __syncthreads();
    block_write_out(out + s_at * aa, so, s_kept * (unsigned)aa);
}

static rfx_status semijoin_tiles(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, bool keep,
                                 bool a_sorted, rfx_dev_rows *dst)
{
    // b's segment: up to twice a tile (one as dense as a: a tile's keys span about a tile
    // of b; with room for 2,048 rows at most half of the tiles of two random sets of equal
    // size fitted, and the rest searched global memory), as far as SEMI_SMEM allows
    size_t na = a->n, ntiles = (na + SEMI_T - 1) / SEMI_T, tiles_a = (size_t)SEMI_T * a->arity * 2 * 4,
           b_cap = (SEMI_SMEM - tiles_a) / ((size_t)k * 4), smem;
    b_cap = b_cap < 2 * (size_t)SEMI_T ? b_cap : 2 * (size_t)SEMI_T;
    smem = tiles_a + b_cap * k * 4 + 16;   // block_write_out reads up to 4 words past the output tile
    rfx_dev_rows res;
    lb_scratch lb;   // and each tile's range of b
    key_bits kb = key_bits{NULL, 0, 0};   // a in any order: b may be a bitmap of its keys
    rfx_status st = a_sorted ? RFX_OK : key_bitmap(g, b, k, na, &kb);
    if (st == RFX_OK && (st = tiled_begin(g, a->arity, na, ntiles, ntiles * 16, &res, &lb)) != RFX_OK)
        rfx_gpu_free(g, (void *)kb.bits);
    if (st)
        return st;
    size_t *range = a_sorted ? (size_t *)lb.extra : NULL;
    if (a_sorted)
        k_semi_ranges<<<search_grid(g, 2 * ntiles), 256, 0, g->stream>>>(a->data, na, a->arity, b->data, k, b->n, k,
                                                                   ntiles, SEMI_T, search_lanes(g, 2 * ntiles), range);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(k_semi_tiles, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e == cudaSuccess) {
        k_semi_tiles<<<(unsigned)ntiles, 256, smem, g->stream>>>(a->data, na, a->arity, b->data, b->n, range, k, keep,
                                                                 b_cap, kb, res.data, lb.a);
        e = cudaGetLastError();
    }
    rfx_gpu_free(g, (void *)kb.bits);   // stream-ordered: after the kernel
    return tiled_end(g, e, "k_semi_tiles", &lb, &res, dst);
}

// Sorted sets of k columns that together make one relation (its main rows and the runs a
// semi-naive loop's small deltas were kept as), passed by value: a kernel parameter.
struct semi_sets {
    const uint32_t *data[RFX_GPU_MAX_SETS];
    size_t n[RFX_GPU_MAX_SETS];
    int count;
};

// After k_semi has set flags[i] from the first set: row i found in any later set is flagged
// keep. A thread a (set, row) pair: a row missing from every set (the common case of a
// DIFFERENCE against a relation and its runs) is searched in each, and by one thread a
// set those searches run side by side; by one thread a row they were a chain of dependent
// loads as long as all the sets' depths together. Threads that find it write the same
// value, so the order of their writes does not matter.
__global__ void k_semi_later_sets(const uint32_t *a, size_t na, int aa, const semi_sets b, int k, bool keep,
                                  uint64_t *flags)
{
    GRID_STRIDE(t, na * (size_t)(b.count - 1))
    {
        const size_t i = t % na;
        const int s = 1 + (int)(t / na);
        const uint32_t *key = a + i * aa;
        size_t l = bound_rows(b.data[s], k, b.n[s], key, k, false);
        if (l < b.n[s] && cmp_prefix(b.data[s] + l * k, key, k) == 0)
            flags[i] = keep;
    }
}

extern "C" rfx_status rfx_gpu_semijoin_sets(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *const *b, int nb,
                                            int k, bool keep, rfx_dev_rows *dst)
{
    if (nb > RFX_GPU_MAX_SETS)
        return RFX_ERR_LIMIT;
    semi_sets sets;
    sets.count = 0;
    const rfx_dev_rows *one = NULL;   // the last set with rows
    for (int s = 0; s < nb; s++)
        if (b[s]->n > 0) {   // an empty set holds nothing to find
            sets.data[sets.count] = b[s]->data;
            sets.n[sets.count++] = b[s]->n;
            one = b[s];
        }
    if (sets.count <= 1 || k == 0 || a->n == 0) {   // as one set (k = 0: whether any has rows)
        rfx_dev_rows none;
        rfx_gpu_rows_init(&none, k);
        return rfx_gpu_semijoin(g, a, one ? one : &none, k, keep, dst);
    }
    uint64_t *flags;
    ALLOC(flags, a->n * 8);
    k_semi<<<grid_for(a->n), 256, 0, g->stream>>>(a->data, a->n, a->arity, sets.data[0], sets.n[0], k, keep,
                                                   key_bits{NULL, 0, 0}, flags);
    CK_LAUNCH();
    k_semi_later_sets<<<grid_for(a->n * (size_t)(sets.count - 1)), 256, 0, g->stream>>>(a->data, a->n, a->arity, sets,
                                                                                          k, keep, flags);
    CK_LAUNCH();
    return keep_flagged(g, a, flags, dst);
}

extern "C" rfx_status rfx_gpu_semijoin(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, bool keep,
                                       rfx_dev_rows *dst)
{
    if (k == 0) {
        bool all = (b->n > 0) == keep;
        if (all)
            return rfx_gpu_copy(g, a, dst);
        rfx_dev_rows r;
        rfx_gpu_rows_init(&r, a->arity);
        replace(g, dst, &r);
        return RFX_OK;
    }
    if (a->n == 0 || (b->n == 0 && !keep))
        return rfx_gpu_copy(g, a, dst);
    // by merge path where b is not much larger than a (it reads all of b), else by
    // looking a's rows up in b
    if (a->arity <= SETOP_MAX_WORDS && k <= SETOP_MAX_WORDS && b->n / 4 <= a->n &&
        (a->n + b->n) / SETOP_TD < (size_t)INT32_MAX)
        return setop_merge(g, a, b, k, keep ? SETOP_SEMI : SETOP_ANTI, dst);
    if (a->arity <= SEMI_MAX_WORDS && k <= SEMI_MAX_WORDS && a->n / SEMI_T < (size_t)INT32_MAX)
        return semijoin_tiles(g, a, b, k, keep, true, dst);
    uint64_t *flags;
    ALLOC(flags, a->n * 8);
    k_semi<<<grid_for(a->n), 256, 0, g->stream>>>(a->data, a->n, a->arity, b->data, b->n, k, keep,
                                                   key_bits{NULL, 0, 0}, flags);
    CK_LAUNCH();
    return keep_flagged(g, a, flags, dst);
}

extern "C" rfx_status rfx_gpu_probe_sets(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *const *b, int nb,
                                         int k, bool keep, rfx_dev_rows *dst)
{
    if (nb > RFX_GPU_MAX_SETS)
        return RFX_ERR_LIMIT;
    semi_sets sets;
    sets.count = 0;
    for (int s = 0; s < nb; s++)
        if (b[s]->n > 0) {
            sets.data[sets.count] = b[s]->data;
            sets.n[sets.count++] = b[s]->n;
        }
    if (k == 0 || a->n == 0)   // no search row by row: as a sorted a
        return rfx_gpu_semijoin_sets(g, a, b, nb, k, keep, dst);
    if (sets.count == 0) {   // nothing to find: all of a or none
        if (!keep)
            return rfx_gpu_copy(g, a, dst);
        rfx_dev_rows r;
        rfx_gpu_rows_init(&r, a->arity);
        replace(g, dst, &r);
        return RFX_OK;
    }
    if (sets.count == 1 && a->arity <= SEMI_MAX_WORDS && k <= SEMI_MAX_WORDS && a->n / SEMI_T < (size_t)INT32_MAX) {
        rfx_dev_rows one = {(uint32_t *)sets.data[0], sets.n[0], sets.n[0], k};
        return semijoin_tiles(g, a, &one, k, keep, false, dst);
    }
    // a's rows in any order: one set may be a bitmap of its keys
    key_bits kb = key_bits{NULL, 0, 0};
    rfx_dev_rows first = {(uint32_t *)sets.data[0], sets.n[0], sets.n[0], k};
    rfx_status st = sets.count == 1 ? key_bitmap(g, &first, k, a->n, &kb) : RFX_OK;
    uint64_t *flags = st == RFX_OK ? (uint64_t *)rfx_gpu_alloc(g, a->n * 8) : NULL;
    if (!flags) {
        rfx_gpu_free(g, (void *)kb.bits);
        return st != RFX_OK ? st : RFX_ERR_NOMEM;
    }
    k_semi<<<grid_for(a->n), 256, 0, g->stream>>>(a->data, a->n, a->arity, sets.data[0], sets.n[0], k, keep, kb,
                                                   flags);
    rfx_gpu_free(g, (void *)kb.bits);
    CK_LAUNCH();
    if (sets.count > 1) {
        k_semi_later_sets<<<grid_for(a->n * (size_t)(sets.count - 1)), 256, 0, g->stream>>>(a->data, a->n, a->arity,
                                                                                              sets, k, keep, flags);
        CK_LAUNCH();
    }
    return keep_flagged(g, a, flags, dst);
}
