// gpu_triearray.cuh: a sorted relation as a TrieArray, built on the device (Red Fox
// thesis §5.2). Included by gpu_lftj.cu, before the join, which joins
// over it.
//
// Row r starts new entries at every level from the first column where it differs from
// row r - 1 (all levels for row 0, none for a repeat). Two passes over the rows, each
// block over one contiguous chunk (a tile of TRIE_TILE rows, or a few): the first counts
// the new entries per level and block, a scan of those counts places each block's first
// entry of every level, and the second walks its chunk in order, ranking new entries
// within each tile by warp ballots, and writes val (the row's value at that level) and
// ptr (where the row's entry one level down goes: an entry's children begin with the
// child its first row makes). The kernels are instantiated per arity, so a level loop
// unrolls to the levels there are (one loop over eight levels, guarded: 94 registers).

#define TRIE_BLOCK 256
#define TRIE_WARPS (TRIE_BLOCK / 32)
#define TRIE_ITEMS 4   // rows a thread takes in a tile: their loads in flight together
#define TRIE_TILE (TRIE_BLOCK * TRIE_ITEMS)

// Row i of the thread in the tile at t0: rows of a sub-tile go to consecutive threads, so
// a warp's loads are one stretch of memory (four consecutive rows a thread spread each
// load over eight times the sectors: the passes ran at 26-33% of DRAM bandwidth).
__device__ __forceinline__ size_t trie_row(size_t t0, int i)
{
    return t0 + (size_t)i * TRIE_BLOCK + threadIdx.x;
}

// x[i] = the thread's row i of the tile at t0 (zeros past e), and c[i] the first column
// where it differs from the row before (0 for row 0; A for a repeat or past e). The row
// before is the previous lane's, but for lane 0. Two-column rows load as one 8-byte word.
template <int A>
__device__ __forceinline__ void trie_tile_rows(const uint32_t *d, size_t t0, size_t e, uint32_t (*x)[A], int *c)
{
    const unsigned lane = threadIdx.x & 31;
#pragma unroll
    for (int i = 0; i < TRIE_ITEMS; i++) {
        const size_t r = trie_row(t0, i);
        if (A == 2 && r < e) {
            const uint2 w = reinterpret_cast<const uint2 *>(d)[r];
            x[i][0] = w.x;
            x[i][A - 1] = w.y;
        } else
#pragma unroll
            for (int k = 0; k < A; k++)
                x[i][k] = r < e ? d[r * A + k] : 0;
    }
#pragma unroll
    for (int i = 0; i < TRIE_ITEMS; i++) {
        const size_t r = trie_row(t0, i);
        uint32_t y[A];
#pragma unroll
        for (int k = 0; k < A; k++) {
            y[k] = __shfl_up_sync(0xffffffffu, x[i][k], 1);
            if (lane == 0 && r > 0 && r < e)
                y[k] = d[(r - 1) * A + k];
        }
        int ci = A;
#pragma unroll
        for (int k = A - 1; k >= 0; k--)
            if (x[i][k] != y[k])
                ci = k;
        c[i] = r >= e ? A : r == 0 ? 0 : ci;
    }
}

// cnt[l * nb + b] = the new entries of level l in block b's chunk; *mark |= 1 when the
// last column holds UINT32_MAX (the join's tables use it as their empty mark).
template <int A>
__global__ void __launch_bounds__(TRIE_BLOCK) k_trie_count(const uint32_t *d, size_t n, size_t chunk, unsigned nb,
                                                           unsigned long long *cnt, unsigned *mark)
{
    __shared__ unsigned sum[A];
    if (threadIdx.x < A)
        sum[threadIdx.x] = 0;
    __syncthreads();
    unsigned mine[A] = {0};
    bool max_seen = false;
    const size_t b0 = blockIdx.x * chunk, e = b0 + chunk < n ? b0 + chunk : n;
    for (size_t t0 = b0; t0 < e; t0 += TRIE_TILE) {
        int c[TRIE_ITEMS];
        uint32_t x[TRIE_ITEMS][A];
        trie_tile_rows<A>(d, t0, e, x, c);
#pragma unroll
        for (int i = 0; i < TRIE_ITEMS; i++) {
#pragma unroll
            for (int l = 0; l < A; l++)
                mine[l] += c[i] <= l;
            max_seen |= trie_row(t0, i) < e && x[i][A - 1] == UINT32_MAX;
        }
    }
#pragma unroll
    for (int l = 0; l < A; l++) {
        unsigned v = mine[l];
        for (int o = 16; o > 0; o >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, o);
        if ((threadIdx.x & 31) == 0 && v)
            atomicAdd(&sum[l], v);
    }
    if (max_seen)
        atomicOr(mark, 1u);
    __syncthreads();
    if (threadIdx.x < A)
        cnt[threadIdx.x * (size_t)nb + blockIdx.x] = sum[threadIdx.x];
}

struct trie_levels {
    uint32_t *val[RFX_TRIE_MAX_LEVELS], *ptr[RFX_TRIE_MAX_LEVELS];
};

// Each sub-tile's new entries ranked by warp ballots, then placed in row order.
template <int A>
__global__ void __launch_bounds__(TRIE_BLOCK) k_trie_scatter(const uint32_t *d, size_t n, size_t chunk, unsigned nb,
                                                             const unsigned long long *off,
                                                             const __grid_constant__ trie_levels T)
{
    __shared__ unsigned warp_new[TRIE_ITEMS][A][TRIE_WARPS];
    uint32_t base[A];   // positions are below 2^32: rows are
#pragma unroll
    for (int l = 0; l < A; l++)
        base[l] = (uint32_t)(off[l * (size_t)nb + blockIdx.x] - off[l * (size_t)nb]);
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5, below = (1u << lane) - 1;
    const size_t b0 = blockIdx.x * chunk, e = b0 + chunk < n ? b0 + chunk : n;
    for (size_t t0 = b0; t0 < e; t0 += TRIE_TILE) {
        int c[TRIE_ITEMS];
        uint32_t x[TRIE_ITEMS][A];
        trie_tile_rows<A>(d, t0, e, x, c);
        uint32_t pos[TRIE_ITEMS][A];
#pragma unroll
        for (int i = 0; i < TRIE_ITEMS; i++)
#pragma unroll
            for (int l = 0; l < A; l++) {
                const unsigned m = __ballot_sync(0xffffffffu, c[i] <= l);
                pos[i][l] = __popc(m & below);
                if (lane == 0)
                    warp_new[i][l][warp] = __popc(m);
            }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < TRIE_ITEMS; i++)
#pragma unroll
            for (int l = 0; l < A; l++) {
                unsigned before = 0, all = 0;
#pragma unroll
                for (unsigned w = 0; w < TRIE_WARPS; w++) {
                    before += w < warp ? warp_new[i][l][w] : 0;
                    all += warp_new[i][l][w];
                }
                pos[i][l] += base[l] + before;
                base[l] += all;
            }
#pragma unroll
        for (int i = 0; i < TRIE_ITEMS; i++) {
#pragma unroll
            for (int l = 0; l < A; l++)
                if (c[i] <= l) {
                    T.val[l][pos[i][l]] = x[i][l];
                    if (l + 1 < A)
                        T.ptr[l][pos[i][l]] = pos[i][l + 1];
                }
        }
        __syncthreads();   // warp_new is rewritten by the next tile
    }
}

// ptr[l][n[l]] = n[l + 1] (each level's end), and zeros after each level's values up to
// a whole quad (the join reads a node's values four at a time).
__global__ void k_trie_ends(const __grid_constant__ trie_levels T, int a, const __grid_constant__ rfx_dev_trie t)
{
    const int l = threadIdx.x;
    if (l >= a)
        return;
    if (l + 1 < a)
        T.ptr[l][t.n[l]] = (uint32_t)t.n[l + 1];
    for (size_t i = t.n[l]; i < (t.n[l] + 3) / 4 * 4; i++)
        T.val[l][i] = 0;
}

// out[l] = off[l * nb] for l <= a (level l's first entry; level a's: the total), then
// the mark with the first row's column 0, then the last row's.
__global__ void k_trie_gather(const unsigned long long *off, unsigned nb, int a, const unsigned *mark,
                              const uint32_t *d, size_t n, unsigned long long *out)
{
    const int l = threadIdx.x;
    const unsigned m = *mark;   // read before out (which may hold it) is written
    __syncthreads();
    if (l <= a)
        out[l] = off[l * (size_t)nb];
    if (l == a + 1)
        out[l] = m | (unsigned long long)d[0] << 32;   // and the root's first and last value
    if (l == a + 2)
        out[l] = d[(n - 1) * a];
}

extern "C" void rfx_gpu_trie_free(rfx_gpu *g, rfx_dev_trie *t)
{
    for (int l = 0; l < RFX_TRIE_MAX_LEVELS; l++) {
        rfx_gpu_free(g, t->val[l]);
        rfx_gpu_free(g, t->ptr[l]);
    }
    memset(t, 0, sizeof *t);
}

static_assert(RFX_TRIE_MAX_LEVELS == 8, "TRIE_ARITIES lists every arity");
#define TRIE_ARITIES TRIE_ARITY(1) TRIE_ARITY(2) TRIE_ARITY(3) TRIE_ARITY(4) TRIE_ARITY(5) TRIE_ARITY(6) \
    TRIE_ARITY(7) TRIE_ARITY(8)

// Rows a block takes: one tile each, as long as that leaves at most TRIE_MAX_BLOCKS
// blocks (their counts are scanned). A block walking a long chunk tile after tile waits
// on each tile's loads in turn (with chunks of ~1000 tiles and two blocks resident a
// multiprocessor, the scatter alone took over twice what the whole build takes now).
#define TRIE_MAX_BLOCKS (1u << 20)
static size_t trie_chunk(size_t n)
{
    size_t tiles = (n + TRIE_TILE - 1) / TRIE_TILE, per = (tiles + TRIE_MAX_BLOCKS - 1) / TRIE_MAX_BLOCKS;
    return (per ? per : 1) * TRIE_TILE;
}

static rfx_status trie_build(rfx_gpu *g, const rfx_dev_rows *rows, rfx_dev_trie *t, unsigned long long *cnt)
{
    const int a = rows->arity;
    const size_t n = rows->n;
    const size_t chunk = trie_chunk(n);
    const unsigned nb = (unsigned)((n + chunk - 1) / chunk);
    const size_t words = (size_t)a * nb + 1;   // the scan's last entry is the last level's total
    unsigned *mark = (unsigned *)(cnt + words);
    CK(cudaMemsetAsync(cnt, 0, words * 8 + 8, g->stream));
#define TRIE_ARITY(A)                                                                                   \
    case A: k_trie_count<A><<<nb, TRIE_BLOCK, 0, g->stream>>>(rows->data, n, chunk, nb, cnt, mark); break;
    switch (a) { TRIE_ARITIES }
#undef TRIE_ARITY
    CK_LAUNCH();
    unsigned long long *off;
    ALLOC(off, words * 8);
    rfx_status st = exclusive_sum(g, (const uint64_t *)cnt, (uint64_t *)off, words);
    unsigned long long at[RFX_TRIE_MAX_LEVELS + 3];   // each level's first entry in the scan, then k_trie_gather's
    if (st == RFX_OK) {
        k_trie_gather<<<1, 32, 0, g->stream>>>(off, nb, a, mark, rows->data, n, cnt);   // cnt is read: the scan is done
        cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(at, cnt, (a + 3) * 8, cudaMemcpyDeviceToHost, g->stream);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(g->stream);
        if (e != cudaSuccess)
            st = fail(g, e, "k_trie_gather", __FILE__, __LINE__);
    }
    const bool has_max = st == RFX_OK && (uint32_t)at[a + 1] != 0;
    if (st == RFX_OK) {
        t->first = (uint32_t)(at[a + 1] >> 32);
        t->last = (uint32_t)at[a + 2];
    }
    trie_levels T;
    memset(&T, 0, sizeof T);
    for (int l = 0; st == RFX_OK && l < a; l++) {
        t->n[l] = at[l + 1] - at[l];
        t->val[l] = (uint32_t *)rfx_gpu_alloc(g, (t->n[l] + 3) / 4 * 4 * 4);
        t->ptr[l] = l + 1 < a ? (uint32_t *)rfx_gpu_alloc(g, (t->n[l] + 1) * 4) : NULL;
        if (!t->val[l] || (l + 1 < a && !t->ptr[l]))
            st = RFX_ERR_NOMEM;
        T.val[l] = t->val[l];
        T.ptr[l] = t->ptr[l];
    }
    if (st == RFX_OK) {
#define TRIE_ARITY(A)                                                                                   \
    case A: k_trie_scatter<A><<<nb, TRIE_BLOCK, 0, g->stream>>>(rows->data, n, chunk, nb, off, T); break;
        switch (a) { TRIE_ARITIES }
#undef TRIE_ARITY
        cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess) {
            k_trie_ends<<<1, 32, 0, g->stream>>>(T, a, *t);
            e = cudaGetLastError();
        }
        if (e != cudaSuccess)
            st = fail(g, e, "k_trie_scatter", __FILE__, __LINE__);
    }
    rfx_gpu_free(g, off);
    t->last_has_max = has_max;
    return st;
}

extern "C" rfx_status rfx_gpu_trie_build(rfx_gpu *g, const rfx_dev_rows *rows, rfx_dev_trie *t)
{
    memset(t, 0, sizeof *t);
    if (rows->arity < 1 || rows->arity > RFX_TRIE_MAX_LEVELS) {
        snprintf(g->err, sizeof g->err, "TrieArray of a relation of arity %d (1 to %d)", rows->arity,
                 RFX_TRIE_MAX_LEVELS);
        return RFX_ERR_LIMIT;
    }
    if (rows->arity == 2 && (uintptr_t)rows->data % 8) {   // read as 8-byte words (the pool's are aligned)
        snprintf(g->err, sizeof g->err, "TrieArray of rows at a misaligned address");
        return RFX_ERR_INTERNAL;
    }
    if (rows->n >= UINT32_MAX) {   // ptr entries are 32-bit
        snprintf(g->err, sizeof g->err, "TrieArray of %zu rows (at most 2^32-2)", rows->n);
        return RFX_ERR_LIMIT;
    }
    t->levels = rows->arity;
    if (rows->n == 0) {
        for (int l = 0; l + 1 < rows->arity; l++) {   // one ptr entry (0) each: a level with no entries
            t->ptr[l] = (uint32_t *)rfx_gpu_alloc(g, 4);
            if (!t->ptr[l] || cudaMemsetAsync(t->ptr[l], 0, 4, g->stream) != cudaSuccess) {
                rfx_gpu_trie_free(g, t);
                snprintf(g->err, sizeof g->err, "TrieArray: no device memory for an empty relation");
                return RFX_ERR_NOMEM;
            }
        }
        return RFX_OK;
    }
    unsigned long long *cnt;
    const size_t chunk = trie_chunk(rows->n);
    ALLOC(cnt, ((size_t)rows->arity * ((rows->n + chunk - 1) / chunk) + 3) * 8);
    rfx_status st = trie_build(g, rows, t, cnt);
    rfx_gpu_free(g, cnt);
    if (st != RFX_OK) {
        if (st == RFX_ERR_NOMEM)
            snprintf(g->err, sizeof g->err, "TrieArray of %zu rows: out of device memory", rows->n);
        rfx_gpu_trie_free(g, t);
    }
    return st;
}
