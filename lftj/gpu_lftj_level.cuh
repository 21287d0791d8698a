// gpu_lftj_level.cuh: the sources, searches in them and the per-level kernels (count, check, emit) of the breadth-first triejoin.
// Part of the GPU triejoin, included by gpu_lftj.cu in order (see gpu_lftj.cuh).

#define LFTJ_MAX_SRC 32
#define LFTJ_ROUND ((size_t)1 << 26)
#define LFTJ_INDEX_SMALL ((size_t)1 << 20)   // a root index of this many values is always worth it

// first[s], when set, indexes source s's first column by value (the root level of a
// TrieArray): first[s][v - minv[s]] is the first row whose column 0 is >= v, for v in
// [minv, maxv]. A search in the root node is then one load instead of ~log2(rows).
// A source read as a TrieArray of two levels (rptr[s] set: lftj_as_tries) keeps only its
// second column, the last level, in data, one word a row; its first column is the root
// level: values rval[s][0 .. nroot[s]) whose rows are rptr[s][i] .. rptr[s][i + 1] - 1.
struct lftj_srcs {
    const uint32_t *data[LFTJ_MAX_SRC];
    const uint32_t *first[LFTJ_MAX_SRC];
    const uint32_t *rval[LFTJ_MAX_SRC], *rptr[LFTJ_MAX_SRC];
    uint32_t rows[LFTJ_MAX_SRC], minv[LFTJ_MAX_SRC], maxv[LFTJ_MAX_SRC], nroot[LFTJ_MAX_SRC];
    int arity[LFTJ_MAX_SRC];
    int nsrc;
};

struct lftj_level {
    int np;                      // participants of this variable
    int src[LFTJ_MAX_SRC];       // their sources
    int col[LFTJ_MAX_SRC];       // and columns
};

// The first of n rows (sorted by column 0) whose column 0 is >= x (x may be 2^32: n).
__device__ __forceinline__ size_t lftj_first_at_least(const uint32_t *data, int arity, size_t n, uint64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (data[mid * arity] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

// The first root entry of a TrieArray source whose value is >= t (t up to 2^32).
__device__ __forceinline__ uint32_t lftj_root_entry(const lftj_srcs &S, int s, uint64_t t)
{
    return (uint32_t)lftj_first_at_least(S.rval[s], 1, S.nroot[s], t);
}

// Column 0 of row `row` of a TrieArray source: the value of the root entry holding it.
__device__ __forceinline__ uint32_t lftj_root_value(const lftj_srcs &S, int s, uint32_t row)
{
    if (row == 0)   // a root node's first row: no search
        return S.rval[s][0];
    const uint32_t last = S.nroot[s] - 1;   // a whole root node's last row (lftj_count_one's bounds): one load
    if (row >= S.rptr[s][last])
        return S.rval[s][last];
    uint32_t lo = 0, hi = S.nroot[s];   // the last entry whose rows start at or before row
    while (hi - lo > 1) {
        uint32_t m = lo + (hi - lo) / 2;
        if (S.rptr[s][m] <= row)
            lo = m;
        else
            hi = m;
    }
    return S.rval[s][lo];
}

__device__ __forceinline__ uint32_t lv(const lftj_srcs &S, int s, uint32_t row, int col)
{
    if (S.rptr[s])
        return col ? S.data[s][(size_t)row * (S.arity[s] - 1) + col - 1] : lftj_root_value(S, s, row);
    return S.data[s][(size_t)row * S.arity[s] + col];
}

// Column c of source s as an array with a stride (a TrieArray source's column 1 is its data).
__device__ __forceinline__ const uint32_t *lftj_column_of(const lftj_srcs &S, int s, int c, unsigned *stride)
{
    const int t = S.rptr[s] != NULL;
    *stride = (unsigned)(S.arity[s] - t);
    return S.data[s] + (c - t);
}

// The first row of source s whose column 0 is >= t, by its root index or root level.
__device__ __forceinline__ uint32_t lftj_root_at_least(const lftj_srcs &S, int s, uint64_t t)
{
    if (S.first[s])
        return t <= S.minv[s] ? 0 : t > S.maxv[s] ? S.rows[s] : S.first[s][t - S.minv[s]];
    return S.rptr[s][lftj_root_entry(S, s, t)];   // rptr[nroot] ends the rows
}

// Whether value v comes before the row a search for x looks for: the first >= x, or
// (upper) the first > x.
__device__ __forceinline__ bool lftj_before(uint32_t v, uint32_t x, bool upper)
{
    return upper ? v <= x : v < x;
}

// First row in [lo, hi) of a column (stride words a row) whose value is >= x (upper: > x).
// Searches take a column pointer made once, not lv a row: lv's TrieArray test (a root
// search inlined in the loop) made a 4-clique's last level half as slow again.
__device__ __forceinline__ uint32_t lftj_column_search(const uint32_t *c, unsigned stride, uint32_t lo, uint32_t hi,
                                                       uint32_t x, bool upper)
{
    while (lo < hi) {
        uint32_t m = lo + (hi - lo) / 2;
        if (lftj_before(c[(size_t)m * stride], x, upper))
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}

// First row in [lo, hi) whose column is >= x (upper: > x).
__device__ __forceinline__ uint32_t lsearch(const lftj_srcs &S, int s, int col, uint32_t lo, uint32_t hi, uint32_t x,
                                            bool upper)
{
    if (col == 0 && (S.first[s] || S.rptr[s])) {   // column 0 is sorted over all rows: the node clamps the answer
        uint32_t at = lftj_root_at_least(S, s, (uint64_t)x + upper);
        return at < lo ? lo : at > hi ? hi : at;
    }
    unsigned stride;   // column 0 here is a rows source's: lv's TrieArray case kept out of the loop
    return lftj_column_search(lftj_column_of(S, s, col, &stride), stride, lo, hi, x, upper);
}

// Whether the node [lo, hi) of source s holds value x in column col.
__device__ __forceinline__ bool lhas(const lftj_srcs &S, int s, int col, uint32_t lo, uint32_t hi, uint32_t x)
{
    if (col == 0 && S.first[s]) {   // x's rows overlap the node: two adjacent loads, no row read
        if (x < S.minv[s] || x > S.maxv[s])
            return false;
        const uint32_t *f = S.first[s] + (x - S.minv[s]);
        return (f[0] > lo ? f[0] : lo) < (f[1] < hi ? f[1] : hi);
    }
    if (col == 0 && S.rptr[s]) {
        uint32_t i = lftj_root_entry(S, s, x);
        if (i == S.nroot[s] || S.rval[s][i] != x)
            return false;
        uint32_t a = S.rptr[s][i], b = S.rptr[s][i + 1];
        return (a > lo ? a : lo) < (b < hi ? b : hi);
    }
    unsigned stride;   // as lsearch: one column pointer for the search and the last load
    const uint32_t *c = lftj_column_of(S, s, col, &stride);
    uint32_t p = lftj_column_search(c, stride, lo, hi, x, false);
    return p < hi && c[(size_t)p * stride] == x;
}

// The participant with the smallest node (the driver) among an element's ranges r, and
// that node's row count.
__device__ __forceinline__ int lftj_driver(const lftj_level &L, const uint32_t *r, uint32_t *len)
{
    int d = 0;
    uint32_t best = r[2 * L.src[0] + 1] - r[2 * L.src[0]];
    for (int k = 1; k < L.np; k++) {
        uint32_t n = r[2 * L.src[k] + 1] - r[2 * L.src[k]];
        if (n < best) {
            best = n;
            d = k;
        }
    }
    *len = best;
    return d;
}

// A driver code (drv) with this bit: the driver is at its root, which has an index, and
// its candidates are the values from its node's first to its last, not its rows (the
// root of a triangle count's reversed edges: 16 M values for 260 M rows at R-MAT 24).
#define LFTJ_BY_VALUE 0x80u
// Or with this: the driver is a TrieArray's whole root level, and its candidates are the
// level's entries, each a value with its rows (R-MAT 24: 2.6 M entries where by value
// there are 16.8 M candidates, 85% of them absent).
#define LFTJ_BY_ENTRY 0x40u
#define LFTJ_DRIVER(dv) ((int)((dv) & 0x3Fu))   // the participant index (< LFTJ_MAX_SRC)

// Whether source s is a TrieArray whose node in r is its whole root level.
__device__ __forceinline__ bool lftj_whole_root(const lftj_srcs &S, int s, const uint32_t *r)
{
    return S.rptr[s] && r[2 * s] == 0 && r[2 * s + 1] == S.rows[s];
}

// Per frontier element: its driver (participant index with the smallest node) and the
// number of candidate rows (or values: LFTJ_BY_VALUE; entries: LFTJ_BY_ENTRY). The driver's node is first
// narrowed, by a binary search at each end, to the values between the other nodes'
// largest first and smallest last value (a node's values are sorted): nothing outside can
// match. In a box of an out-of-core join the inner variable's slice covers an interval
// of values, so this keeps the work of a box in proportion to its part of the search
// space. Narrows r in place; returns the count.
__device__ __forceinline__ uint32_t lftj_count_one(const lftj_srcs &S, const lftj_level &L, uint32_t *r, uint8_t *drv,
                                                   uint64_t *cnt)
{
    uint32_t len;
    int d = lftj_driver(L, r, &len);
    if (len && L.np > 1) {
        uint32_t lo_v = 0, hi_v = UINT32_MAX;
        for (int k = 0; k < L.np; k++) {
            int s = L.src[k];
            if (k == d)
                continue;
            if (r[2 * s] == r[2 * s + 1]) {
                lo_v = 1;
                hi_v = 0;
                break;
            }
            uint32_t a = lv(S, s, r[2 * s], L.col[k]), b = lv(S, s, r[2 * s + 1] - 1, L.col[k]);
            lo_v = a > lo_v ? a : lo_v;
            hi_v = b < hi_v ? b : hi_v;
        }
        int ds = L.src[d];
        uint32_t lo = r[2 * ds], hi = r[2 * ds + 1];
        if (lo_v > hi_v)
            lo = hi;
        else {
            lo = lsearch(S, ds, L.col[d], lo, hi, lo_v, false);
            hi = lsearch(S, ds, L.col[d], lo, hi, hi_v, true);
        }
        r[2 * ds] = lo;
        r[2 * ds + 1] = hi;
        len = hi - lo;
    }
    const int ds = L.src[d];
    unsigned dv = (unsigned)d;
    if (len > 1 && L.col[d] == 0 && lftj_whole_root(S, ds, r)) {
        dv |= LFTJ_BY_ENTRY;
        len = S.nroot[ds];
    } else if (len > 1 && L.col[d] == 0 && S.first[ds]) {
        uint32_t v0 = lv(S, ds, r[2 * ds], 0), v1 = lv(S, ds, r[2 * ds + 1] - 1, 0);
        if (v1 - v0 < len - 1) {
            dv |= LFTJ_BY_VALUE;
            len = v1 - v0 + 1;
        }
    }
    *drv = (uint8_t)dv;
    *cnt = len;
    return len;
}

__global__ void k_lftj_count(const __grid_constant__ lftj_srcs S, const __grid_constant__ lftj_level L, size_t F,
                             int nsrc, uint32_t *rng, uint8_t *drv, uint64_t *cnt)
{
    GRID_STRIDE(f, F)
    lftj_count_one(S, L, rng + f * (size_t)nsrc * 2, &drv[f], &cnt[f]);
}

// Whether every participant but the driver d holds x in its node.
__device__ __forceinline__ bool lftj_in_others(const lftj_srcs &S, const lftj_level &L, const uint32_t *r, int d,
                                               uint32_t x)
{
    for (int k = 0; k < L.np; k++) {
        if (k == d)
            continue;
        int s = L.src[k];
        if (!lhas(S, s, L.col[k], r[2 * s], r[2 * s + 1], x))
            return false;
    }
    return true;
}

// Candidate k of the element with ranges r and driver code dv: *x its value and [*row,
// *end) the driver's rows holding it (*end only by value; row-wise *row + 1). False when
// it is no new value of the driver's node: a repeat of the row before, or (by value) absent.
__device__ __forceinline__ bool lftj_candidate(const lftj_srcs &S, const lftj_level &L, const uint32_t *r,
                                               unsigned dv, uint32_t k, uint32_t *row, uint32_t *end, uint32_t *x)
{
    const int d = LFTJ_DRIVER(dv), ds = L.src[d];
    if (dv & LFTJ_BY_ENTRY) {
        *x = S.rval[ds][k];
        *row = S.rptr[ds][k];
        *end = S.rptr[ds][k + 1];
        return true;
    }
    if (dv & LFTJ_BY_VALUE) {
        *x = lv(S, ds, r[2 * ds], 0) + k;
        const uint32_t *f = S.first[ds] + (*x - S.minv[ds]);
        *row = f[0];
        *end = f[1];
        return *end > *row;
    }
    *row = r[2 * ds] + k;
    *end = *row + 1;
    if (L.col[d] == 0 && S.rptr[ds]) {   // a TrieArray's root column (no whole root: that is by entry)
        *x = lftj_root_value(S, ds, *row);
        return *row == r[2 * ds] || lftj_root_value(S, ds, *row - 1) != *x;
    }
    unsigned stride;   // one column pointer for both loads (lv's TrieArray test once)
    const uint32_t *c = lftj_column_of(S, ds, L.col[d], &stride);
    *x = c[(size_t)*row * stride];
    return *row == r[2 * ds] || c[(size_t)(*row - 1) * stride] != *x;
}

// Candidate k (lftj_candidate) when it is also in every other participant's node.
__device__ __forceinline__ bool lftj_match(const lftj_srcs &S, const lftj_level &L, const uint32_t *r, unsigned dv,
                                           uint32_t k, uint32_t *row, uint32_t *end, uint32_t *x)
{
    return lftj_candidate(S, L, r, dv, k, row, end, x) && lftj_in_others(S, L, r, LFTJ_DRIVER(dv), *x);
}

// The frontier element holding candidate c: last f in [l, h) with off[f] <= c.
__device__ __forceinline__ size_t lftj_owner(const uint64_t *off, size_t l, size_t h, uint64_t c)
{
    size_t f = first_above(off, l, h, c);   // gpu_core.cuh
    return f > l ? f - 1 : l;
}

// A block's candidates [b0, b0 + blockDim) are consecutive, so their owners lie between
// the owners of its first and last: two threads search the whole offsets once, and every
// thread then searches that short window (a few cached loads instead of ~log2(F) misses).
// Every thread of the block calls this (it has barriers).
__device__ __forceinline__ void lftj_owner_window(const uint64_t *off, size_t F, uint64_t c0, size_t b0, size_t nc,
                                                  size_t *win)
{
    __syncthreads();   // the previous window is no longer read
    size_t last = b0 + blockDim.x < nc ? b0 + blockDim.x - 1 : nc - 1;
    if (threadIdx.x == 0)
        win[0] = lftj_owner(off, 0, F, c0 + b0);
    if (threadIdx.x == 32)
        win[1] = lftj_owner(off, 0, F, c0 + last) + 1;
    __syncthreads();
}

// flag[c - c0] = candidate c is a new value found in every participant's node.
__global__ void k_lftj_check(const __grid_constant__ lftj_srcs S, const __grid_constant__ lftj_level L, size_t F,
                             const uint32_t *rng, const uint8_t *drv, const uint64_t *off, uint64_t c0, size_t nc,
                             uint64_t *flag)
{
    __shared__ size_t win[2];
    for (size_t b0 = blockIdx.x * (size_t)blockDim.x; b0 < nc; b0 += (size_t)gridDim.x * blockDim.x) {
        lftj_owner_window(off, F, c0, b0, nc, win);
        size_t i = b0 + threadIdx.x;
        if (i >= nc)
            continue;
        uint64_t c = c0 + i;
        size_t f = lftj_owner(off, win[0], win[1], c);
        const uint32_t *r = rng + f * (size_t)S.nsrc * 2;
        uint32_t row, end, x;
        flag[i] = lftj_match(S, L, r, drv[f], (uint32_t)(c - off[f]), &row, &end, &x);
    }
}

// Candidate c of element f (its ranges r) as the new element o: its binding, and unless
// last (nr NULL) its narrowed nodes in nr; unchecked (check), a candidate that is no
// match gets empty nodes, so it binds nothing further. With ncnt, the new element's driver
// and candidate count for the next level NL too, as k_lftj_count would find them; returns
// that count (0 without ncnt).
__device__ __forceinline__ uint32_t lftj_emit_one(const lftj_srcs &S, const lftj_level &L, const lftj_level &NL,
                                                  int depth, const uint32_t *bind, const uint32_t *r, size_t f,
                                                  unsigned dv, uint32_t k, bool check, uint64_t o, uint32_t *nbind,
                                                  uint32_t *nr, uint8_t *ndrv, uint64_t *ncnt)
{
    const int d = LFTJ_DRIVER(dv);
    uint32_t row, end, x;
    const bool fresh = lftj_candidate(S, L, r, dv, k, &row, &end, &x);
    for (int v = 0; v < depth; v++)
        nbind[o * (depth + 1) + v] = bind[f * (size_t)depth + v];
    nbind[o * (depth + 1) + depth] = x;
    if (!nr)
        return 0;
    if (check && !(fresh && lftj_in_others(S, L, r, d, x))) {   // a dead element
        for (int s = 0; s < 2 * S.nsrc; s++)
            nr[s] = 0;
        if (ncnt) {
            ndrv[o] = 0;
            ncnt[o] = 0;
        }
        return 0;
    }
    for (int s = 0; s < 2 * S.nsrc; s++)
        nr[s] = r[s];
    for (int q = 0; q < L.np; q++) {
        int s = L.src[q];
        // a source's last column: no later level reads its node, so only the driver's
        // is set (its row; the rows of a set differ in their last column) and the
        // searches, ~log2 of the node a candidate (a triangle's N+(x)), are saved
        if (L.col[q] == S.arity[s] - 1 || (q == d && (dv & (LFTJ_BY_VALUE | LFTJ_BY_ENTRY)))) {
            if (q == d) {   // by value or entry: the index or the level gave the node
                nr[2 * s] = row;
                nr[2 * s + 1] = end;
            }
            continue;
        }
        uint32_t lo = lsearch(S, s, L.col[q], r[2 * s], r[2 * s + 1], x, false);
        nr[2 * s] = lo;
        nr[2 * s + 1] = lsearch(S, s, L.col[q], r[2 * s], r[2 * s + 1], x, true);   // from the node's start: the root index applies
    }
    return ncnt ? lftj_count_one(S, NL, nr, &ndrv[o], &ncnt[o]) : 0;
}

// Writes each surviving candidate's binding (and, unless last, its narrowed nodes) at
// its scanned position. Without flags (never at the last level), every candidate at its
// own position, and one that is no match gets empty nodes. With ncnt, the next level's
// drivers and counts too (lftj_precount: a launch and a reread of the ranges saved).
// staged (dynamic shared memory of LFTJ_EMIT_SMEM(nsrc)): the block's new ranges, whose
// outputs are consecutive, are built in shared memory and written out in 16-byte stores;
// each thread storing its own 2 * nsrc words, 4 bytes at a time 8 * nsrc bytes apart, cost
// the store traffic of ~8 times the bytes.
// With scan.off (one launch covering all the level's candidates, and ncnt), also those
// counts' exclusive scan, by decoupled look-back over the blocks' tiles (taken in order
// from scan.lb's counter), the total written straight to pinned host memory: the
// next level needs no scan kernels, copies or reads of its own.
#define LFTJ_EMIT_SMEM(nsrc) ((size_t)256 * 8 * (nsrc) + 16)   // block_write_out reads past the end
struct lftj_scan_out {
    uint64_t *off;                // NULL: no scan
    lb_args lb;                   // the context's tagged look-back words (a word per tile) and
                                  // counter; the total in mapped host memory
    size_t ntiles;
};
__global__ void k_lftj_emit(const __grid_constant__ lftj_srcs S, const __grid_constant__ lftj_level L, size_t F,
                            int depth, const uint32_t *bind, const uint32_t *rng, const uint8_t *drv,
                            const uint64_t *off, uint64_t c0, size_t nc, const uint64_t *flag, const uint64_t *pos,
                            uint64_t base, uint32_t *nbind, uint32_t *nrng, const __grid_constant__ lftj_level NL,
                            uint8_t *ndrv, uint64_t *ncnt, bool staged, lftj_scan_out scan)
{
    extern __shared__ __align__(16) uint32_t s_nr[];
    __shared__ size_t win[2], s_tile;
    const size_t W = 2 * (size_t)S.nsrc;
    for (size_t b0 = blockIdx.x * (size_t)blockDim.x;; b0 += (size_t)gridDim.x * blockDim.x) {
        if (scan.off) {   // tiles in the order blocks start: a look-back never waits on a block not running
            __syncthreads();
            if (threadIdx.x == 0)
                s_tile = lb_take(scan.lb);
            __syncthreads();
            b0 = s_tile * (size_t)blockDim.x;
        }
        if (b0 >= nc)
            break;
        lftj_owner_window(off, F, c0, b0, nc, win);   // its barrier also ends the last write-out
        const size_t i = b0 + threadIdx.x, last = (b0 + blockDim.x < nc ? b0 + blockDim.x : nc) - 1;
        const uint64_t o0 = base + (flag ? pos[b0] : b0);   // the block's outputs: [o0, o0 + n)
        const bool live = i < nc && !(flag && !flag[i]);
        const uint64_t o = live ? base + (flag ? pos[i] : i) : 0;
        uint64_t n_next = 0;
        if (live) {
            const uint64_t c = c0 + i;
            const size_t f = lftj_owner(off, win[0], win[1], c);
            uint32_t *nr = !nrng ? NULL : staged ? s_nr + (o - o0) * W : nrng + o * W;
            n_next = lftj_emit_one(S, L, NL, depth, bind, rng + f * W, f, drv[f], (uint32_t)(c - off[f]), !flag, o,
                                   nbind, nr, ndrv, ncnt);
        }
        if (scan.off) {
            unsigned long long tile_n, tile_at;
            unsigned long long before = block_place<unsigned long long>(n_next, b0 / blockDim.x, scan.ntiles,
                                                                        scan.lb, &tile_n, &tile_at);
            if (live)
                scan.off[o] = tile_at + before;
        }
        if (staged) {
            const uint64_t n = base + (flag ? pos[last] + flag[last] : last + 1) - o0;
            __syncthreads();
            block_write_out(nrng + o0 * W, s_nr, (unsigned)(n * W));
        }
    }
}

// Adds every thread's count to *total: warp sums into the block's, one atomic per block.
// block_sum is zeroed by thread 0 before a barrier; every thread of the block calls this.
__device__ __forceinline__ void lftj_add_block(unsigned long long mine, unsigned long long *block_sum,
                                               unsigned long long *total)
{
    for (int o = 16; o > 0; o >>= 1)
        mine += __shfl_down_sync(0xffffffffu, mine, o);
    if ((threadIdx.x & 31) == 0 && mine)
        atomicAdd(block_sum, mine);
    __syncthreads();
    if (threadIdx.x == 0 && *block_sum)
        atomicAdd(total, *block_sum);
}

// Counting the last variable: a lane an element, 32 consecutive elements a warp. A lane
// whose driver (smallest node) has at most LFTJ_LAST_SHORT rows checks them alone, each
// new value by binary search in the other participants; longer drivers are taken by the
// whole warp, one after another, lanes strided over the rows (a hub's node does not hold
// one lane). No flags, scans or owner searches; the warp's count is added once. (A warp
// for every element spent 32 threads on each: 6 M for the 188,834 elements, most of them
// empty, of a 4-clique count's last level on p2p-Gnutella31.)
#define LFTJ_LAST_SHORT 16
// total[0] the count, total[1] the blocks done (both zeroed): the last block to finish
// writes the count to pinned host memory (host), which saves the host a copy.
__global__ void k_lftj_count_last(const __grid_constant__ lftj_srcs S, const __grid_constant__ lftj_level L, size_t F,
                                  const uint32_t *rng, unsigned long long *total, unsigned long long *host)
{
    __shared__ unsigned long long block_sum;
    if (threadIdx.x == 0)
        block_sum = 0;
    __syncthreads();
    const unsigned lane = threadIdx.x & 31;
    const size_t nwarps = (size_t)gridDim.x * blockDim.x / 32;
    unsigned long long mine = 0;
    for (size_t f0 = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32 * 32; f0 < F; f0 += nwarps * 32) {
        const size_t f = f0 + lane;
        uint32_t len = 0;
        int d = 0;
        const uint32_t *r = rng + f * (size_t)S.nsrc * 2;
        if (f < F)
            d = lftj_driver(L, r, &len);
        if (len <= LFTJ_LAST_SHORT)
            for (uint32_t k = 0; k < len; k++) {
                uint32_t row, end, x;
                mine += lftj_match(S, L, r, (unsigned)d, k, &row, &end, &x);
            }
        for (unsigned ball = __ballot_sync(0xffffffffu, len > LFTJ_LAST_SHORT); ball; ball &= ball - 1) {
            const int b = __ffs(ball) - 1;
            const uint32_t *rb = rng + (f0 + b) * (size_t)S.nsrc * 2;
            const int db = __shfl_sync(0xffffffffu, d, b);
            const uint32_t lb = __shfl_sync(0xffffffffu, len, b);
            for (uint32_t k = lane; k < lb; k += 32) {
                uint32_t row, end, x;
                mine += lftj_match(S, L, rb, (unsigned)db, k, &row, &end, &x);
            }
        }
    }
    lftj_add_block(mine, &block_sum, total);
    if (threadIdx.x == 0) {
        __threadfence();
        if (atomicAdd(&total[1], 1ull) == gridDim.x - 1)
            *host = atomicAdd(&total[0], 0ull);
    }
}
