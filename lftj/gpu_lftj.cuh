// gpu_lftj.cuh: the leapfrog triejoin on the GPU, breadth-first (Red Fox thesis ch. 5).
// Compiled inside primitives/cuda_prims.cu (it uses the context, pool and scan helpers
// there). Semantics as lftj.h: sources are sorted rows whose columns hold variables in
// increasing order; the result binds all variables, sorted, each binding once.
//
// The join runs level by level. The frontier holds, per partial binding, its values and
// each source's current trie node (a row range). For the next variable, every frontier
// element's candidates are the rows of its smallest participating node (the driver);
// one thread per candidate (load-balancing search over the scanned candidate counts, so a
// high-degree vertex spreads over many threads) skips repeated values and looks the value
// up in the other participants' nodes by binary search. Survivors are compacted into the
// next frontier with their narrowed nodes. Candidates are taken in rounds of at most
// LFTJ_ROUND so scratch stays bounded; the next frontier is sized by a counting pass.
// A small level skips the check and compaction: every candidate goes into the next
// frontier, a non-match with empty nodes (lftj_unchecked). The emit that writes a
// frontier also finds its elements' drivers and candidate counts for the next level, and
// scans them by look-back where one launch writes the whole frontier (lftj_precount): a
// level is then one kernel and one wait.
// When only the number of bindings is wanted, the last variable is never materialised:
// a lane per frontier element counts its matches, the whole warp where its driver is long
// (k_lftj_count_last).

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
// search inlined in the loop) made a 4-clique's last level 45% slower (R-MAT 18, H100:
// 511 -> 732 ms as rows, 833 as TrieArrays; 511 and 475 with the pointer).
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
    size_t f = first_above(off, l, h, c);   // cuda_prims.cu
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

// Counting the last variable with two participants: one of them (A) has a node that
// depends on an earlier prefix of the binding than the other's (B), so consecutive
// frontier elements (sorted by binding) share it: for triangles A = N+(x), B = N+(y). A
// block takes a chunk of elements, loads each run's shared A node into a shared-memory
// hash set once, and its warps walk the runs' B nodes probing the set: one shared-memory
// probe per candidate instead of a binary search in global memory. A nodes too large for
// the set are searched in global memory.
//
// Most probes miss, and a warp waits for its lane with the longest probe sequence, so the
// tables are sparse: at least 2^LFTJ_SPREAD slots a value while that fits (single-slot
// probing, R-MAT 22 on an H100: 191 ms at 2 slots a value, 162 at 4, 152 at 8, 147 at 16;
// with buckets of 4 slots 4, 8 and 16 slots a value all counted R-MAT 24 in 475 ms; since
// the count in one pass, 8 slots a value and nodes of over 512 in both tables count it in
// 187 ms, against 195 ms at 4 slots and over 1024). Two tables
// alternate, so a run's table is cleared while warps may still probe the previous one:
// two barriers a run. Run boundaries come from a bitmask of the chunk's run starts.
#ifndef LFTJ_SLOTS_BITS
#define LFTJ_SLOTS_BITS 12   // each of the two tables
#endif
#ifndef LFTJ_MINB
#define LFTJ_MINB 6   // blocks a multiprocessor the count's registers allow (H100 R-MAT 24: 5, at
                      // 48 registers, 347 ms; 6: 334 ms; tables of 2^11 slots, 8 blocks: 516 ms)
#endif
#define LFTJ_SLOTS (1u << LFTJ_SLOTS_BITS)
#ifndef LFTJ_BOTH_FROM
#define LFTJ_BOTH_FROM (LFTJ_SLOTS / 8)   // a node of more values takes both tables (H100, count
                                          // ms, R-MAT 24 / 25 / 26: 206 / 491 / 1226 from 2048 on,
                                          // 195 / 441 / 1064 from 1024, 187 / 427 / 1042 from 512
                                          // with 8 slots a value: fuller tables miss longer)
#endif
#ifndef LFTJ_SPREAD
#define LFTJ_SPREAD 3
#endif
#define LFTJ_CHUNK 256
#define LFTJ_EMPTY 0xFFFFFFFFu

__device__ __forceinline__ uint32_t lftj_hash(uint32_t x, unsigned bits)
{
    return (x * 2654435761u) >> (32 - bits);
}

// The tables are of buckets of 4 slots, read with one 16-byte load: a bucket's slots fill
// in order, so one whose last slot is empty ends a value's search (single slots probed
// one after another cost warps ~3.5 extra steps each step, waiting for their longest
// search: ncu; buckets of 2 slots read with 8-byte loads, fewer shared-memory wavefronts,
// were 4-7% slower on R-MAT 24-26). A table of 2^bits slots, bits >= 5.
// Returns whether x went past its first bucket (that one was full): while no value of a
// table did, a value's first bucket alone says whether the table holds it.
__device__ __forceinline__ bool lftj_insert(uint32_t *table, unsigned bits, uint32_t x)
{
    const uint32_t mask = (1u << (bits - 2)) - 1;
    const uint32_t h0 = lftj_hash(x, bits - 2);
    for (uint32_t h = h0;; h = (h + 1) & mask)
        for (int i = 0; i < 4; i++) {
            uint32_t old = atomicCAS(&table[4 * h + i], LFTJ_EMPTY, x);
            if (old == LFTJ_EMPTY || old == x)
                return h != h0;
        }
}

// Whether bucket h holds x; *full: whether its last slot is taken (the search goes on).
// The compares are or-ed, not short-circuited: no branch a slot.
__device__ __forceinline__ bool lftj_bucket_has(const uint32_t *table, uint32_t h, uint32_t x, bool *full)
{
    const uint4 q = ((const uint4 *)table)[h];
    *full = q.w != LFTJ_EMPTY;
    return (q.x == x) | (q.y == x) | (q.z == x) | (q.w == x);
}

// Whether the table holds x, probing from the bucket after h on (the count probes every
// value's first bucket, h, itself and comes here only when that one is full and misses).
__device__ __forceinline__ unsigned lftj_probe_on(const uint32_t *table, unsigned bits, uint32_t x, uint32_t h)
{
    const uint32_t mask = (1u << (bits - 2)) - 1;
    for (h = (h + 1) & mask;; h = (h + 1) & mask) {
        bool full;
        if (lftj_bucket_has(table, h, x, &full))
            return 1;
        if (!full)
            return 0;
    }
}

// How many of the kept values x[i] (keep: a bit each) the table of 2^bits slots holds:
// every kept value's first bucket, then the rare longer searches. FIRST: no value of the
// table went past its first bucket, which then says it all. CLEAN: x is never the empty
// mark; else has_empty says whether the table's node held it.
template <bool CLEAN, bool FIRST>
__device__ __forceinline__ unsigned lftj_table_hits(const uint32_t *table, unsigned bits, bool has_empty,
                                                    const uint32_t *x, uint32_t keep)
{
    unsigned n = 0, more = 0;
    uint32_t h[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
        h[i] = lftj_hash(x[i], bits - 2);
        if (keep >> i & 1) {
            bool full;
            const bool hit = lftj_bucket_has(table, h[i], x[i], &full);
            if constexpr (CLEAN) {
                n += hit;
                more |= !FIRST && !hit && full ? 1u << i : 0;
            } else {
                n += x[i] == LFTJ_EMPTY ? has_empty : hit;
                more |= !FIRST && !hit && full && x[i] != LFTJ_EMPTY ? 1u << i : 0;
            }
        }
    }
    if (!FIRST && more) {
#pragma unroll
        for (int i = 0; i < 4; i++)
            if (more >> i & 1)
                n += lftj_probe_on(table, bits, x[i], h[i]);
    }
    return n;
}

#ifndef LFTJ_SHORT_RUN
#define LFTJ_SHORT_RUN 2   // elements a run must average for the chunk to build tables (R-MAT 24
                           // boxed at 25% on an H100: 1 0.85-0.87 s, 2 0.81 s, 4 0.90 s, 8 0.99 s)
#endif

// A warp step over a node's rows [lo, hi) from `row - lane`: *x the value of the lane's row
// (column col of rows `ar` words wide), true when it is in the node and differs from the row
// before it (a node's values repeat where columns follow). The value before the step comes
// from its lanes by a shuffle and from the last step through *carry (all lanes call it,
// the step count the same for all: a load of the previous row per value cost a warp as
// much as the value's own).
__device__ __forceinline__ bool lftj_fresh(const uint32_t *col, unsigned ar, uint32_t row, uint32_t lo, uint32_t hi,
                                           unsigned lane, uint32_t *carry, uint32_t *x)
{
    const uint32_t v = row < hi ? col[(size_t)row * ar] : 0;
    uint32_t prev = __shfl_up_sync(0xffffffffu, v, 1);
    if (lane == 0)
        prev = *carry;
    *carry = __shfl_sync(0xffffffffu, v, 31);
    *x = v;
    return row < hi && (row == lo || prev != v);
}

// The values common to an element's A node [alo, ahi) and B node [blo, bhi), counted by one
// warp: lanes take the shorter node's new values and search each in the longer one.
__device__ __forceinline__ unsigned long long lftj_pair_search(const lftj_srcs &S, int sa, int ca, int sb, int cb,
                                                               uint32_t alo, uint32_t ahi, uint32_t blo, uint32_t bhi,
                                                               unsigned lane)
{
    bool a_short = ahi - alo <= bhi - blo;
    int ss = a_short ? sa : sb, cs = a_short ? ca : cb, sl = a_short ? sb : sa, cl = a_short ? cb : ca;
    uint32_t lo = a_short ? alo : blo, hi = a_short ? ahi : bhi, llo = a_short ? blo : alo, lhi = a_short ? bhi : ahi;
    unsigned long long n = 0;
    unsigned ar;
    const uint32_t *col = lftj_column_of(S, ss, cs, &ar);
    uint32_t carry = 0;
    for (uint32_t base = lo; base < hi; base += 32) {
        uint32_t row = base + lane, x = 0;
        bool fresh = lftj_fresh(col, ar, row, lo, hi, lane, &carry, &x);
        if (fresh)
            n += lhas(S, sl, cl, llo, lhi, x);
    }
    return n;
}

// The first run start at or after position i of the chunk (n when none).
__device__ __forceinline__ int lftj_next_start(const unsigned *mask, int i, int n)
{
    for (int w = i >> 5; w < LFTJ_CHUNK / 32; w++) {
        unsigned m = mask[w] & (w == (i >> 5) ? ~0u << (i & 31) : ~0u);
        if (m)
            return (w << 5) + __ffs(m) - 1;
    }
    return n;
}

// out[r] = column col of row r; out is padded to whole quads (16-byte loads of a node's
// last quad stay inside it). *odd |= 1 when two adjacent rows are equal (the lftj.h
// sources may repeat rows; a set's nodes at its last column hold distinct values), 2 when
// the column holds LFTJ_EMPTY (the tables' empty mark, which then needs telling apart).
__global__ void k_lftj_column(const uint32_t *data, int arity, int col, size_t n, uint32_t *out, uint32_t *odd)
{
    GRID_STRIDE(r, (n + 3) & ~(size_t)3)
    {
        out[r] = r < n ? data[r * arity + col] : 0;
        if (r < n && out[r] == LFTJ_EMPTY)
            atomicOr(odd, 2u);
        if (r > 0 && r < n) {
            int c = 0;
            while (c < arity && data[r * arity + c] == data[(r - 1) * arity + c])
                c++;
            if (c == arity)
                atomicOr(odd, 1u);
        }
    }
}

// Rows 4q .. 4q+3 of B's column: one 16-byte load from its own copy, else the rows of
// [lo, hi) among them one word at a time.
template <bool OWN>
__device__ __forceinline__ uint4 lftj_quad(const uint32_t *own, const uint32_t *col, unsigned ar, uint32_t q,
                                           uint32_t lo, uint32_t hi)
{
    if constexpr (OWN) {
        return ((const uint4 *)own)[q];
    } else {
        uint32_t w[4];
#pragma unroll
        for (int i = 0; i < 4; i++)
            w[i] = 4 * q + i >= lo && 4 * q + i < hi ? col[(size_t)(4 * q + i) * ar] : 0;
        return make_uint4(w[0], w[1], w[2], w[3]);
    }
}

// A warp's steps [step, end) of a run (its elements' B nodes, steps numbered by s_step,
// the first in element f): each lane's quad of rows, the rows that count (in the node and
// differing from the row before: a node's values repeat where columns follow; DISTINCT:
// B's column is its last, where the rows of a set differ), and probe(x, keep) the matches
// among them (keep: a bit a row).
template <bool OWN, bool DISTINCT, typename Probe>
__device__ __forceinline__ unsigned lftj_walk(const uint32_t *s_step, const uint32_t *s_blo, const uint32_t *s_bhi,
                                              int f, uint32_t step, uint32_t end, unsigned lane, const uint32_t *own,
                                              const uint32_t *col, unsigned ar, Probe probe)
{
    unsigned hits = 0;
    uint32_t lo = 0, hi = 0, next = 0, row0 = 0;   // element f's node, its steps' end, the lane's first row
    f--;
    for (; step < end; step++, row0 += 128) {
        if (step >= next) {   // the next element (the same for every lane): its bounds, once
            do
                f++;
            while (s_step[f + 1] <= step);
            lo = s_blo[f];
            hi = s_bhi[f];
            next = s_step[f + 1];
            row0 = 4 * ((lo >> 2) + 32 * (step - s_step[f]) + lane);
        }
        const uint4 v = row0 < hi ? lftj_quad<OWN>(own, col, ar, row0 >> 2, lo, hi) : make_uint4(0, 0, 0, 0);
        const uint32_t a = lo > row0 ? min(lo - row0, 4u) : 0, b = hi > row0 ? min(hi - row0, 4u) : 0;
        const uint32_t in_node = ((1u << b) - 1) & ~((1u << a) - 1);
        const uint32_t x[4] = {v.x, v.y, v.z, v.w};
        if constexpr (DISTINCT) {
            hits += probe(x, in_node);
            continue;
        }
        uint32_t prev = __shfl_up_sync(0xffffffffu, v.w, 1);
        if (lane == 0 && row0 > lo && row0 < hi)
            prev = OWN ? own[row0 - 1] : col[(size_t)(row0 - 1) * ar];
        const uint32_t first = a < 4 && lo >= row0 ? 1u << a : 0;
        const uint32_t differs = (v.x != prev) | (v.y != v.x) << 1 | (v.z != v.y) << 2 | (v.w != v.z) << 3;
        hits += probe(x, in_node & (differs | first));
    }
    return hits;
}

// The warp steps (lftj_walk: 128 rows from the quad holding lo) a B node [lo, hi) takes.
__device__ __forceinline__ unsigned long long lftj_walk_steps(uint32_t lo, uint32_t hi)
{
    return hi > lo ? (((hi + 3) >> 2) - (lo >> 2) + 31) / 32 : 0;
}

// B's node [*blo, *bhi) narrowed to the values from the first to the last of A's node
// [alo, ahi) (a node's values are sorted): nothing outside can match. Only cuts of whole
// warp steps (lftj_walk: 128 rows from the quad holding *blo) save work, so an end is
// searched only where the row at its step's far side shows that step to be outside (one
// load; a search for every element cost the count of R-MAT 22 a quarter more, on an
// H100). Where vertices are numbered in the orientation's order (renamed by degree
// rank), a triangle count by (y, x, z) then walks only the part of N+(x) above y's first
// out-neighbour: a third fewer steps at R-MAT 22.
__device__ __forceinline__ void lftj_pair_narrow(const lftj_srcs &S, int sa, int ca, int sb, int cb,
                                                 const uint32_t *acol, uint32_t alo, uint32_t ahi, uint32_t *blo,
                                                 uint32_t *bhi)
{
    if (*blo >= *bhi)
        return;
    if (alo >= ahi) {
        *bhi = *blo;
        return;
    }
    const uint64_t first_end = (uint64_t)(*blo & ~3u) + 127;   // the first step's last row
    if (first_end + 1 >= *bhi)
        return;
    const uint32_t amin = acol ? acol[alo] : lv(S, sa, alo, ca), amax = acol ? acol[ahi - 1] : lv(S, sa, ahi - 1, ca);
    if (lv(S, sb, (uint32_t)first_end, cb) < amin)
        *blo = lsearch(S, sb, cb, (uint32_t)first_end + 1, *bhi, amin, false);
    const uint32_t steps = (uint32_t)lftj_walk_steps(*blo, *bhi);
    const uint32_t last_start = 4 * ((*blo >> 2) + 32 * (steps - 1));   // the last step's first row
    if (steps > 1 && lv(S, sb, last_start, cb) > amax)
        *bhi = lsearch(S, sb, cb, *blo, last_start, amax, true);
}

// The last two levels counted in one pass (k_lftj_count_pair's FUSED form): the pair
// count's elements are then the candidates of level v, the one before the last, found as
// lftj_expand finds them (drv, off over level v's frontier of F elements, L the level);
// a candidate that fails level v's checks gets an empty B node. B's node at the last level
// is participant kb's node at v narrowed to the candidate's value, A's node its element's.
// Level v's frontier (one element a binding of its candidates, 24 bytes each for
// triangles) is never written: for a triangle count that is the level of one element an
// edge.
struct lftj_fused {
    lftj_level L;
    const uint8_t *drv;
    const uint64_t *off;
    size_t F;
    int kb;
};

// Element me of a pair count: its B node [*blo, *bhi), and the frontier element holding its
// A node (returned). FUSED: me is a candidate of level fz.L, whose owner lies among the
// frontier elements [lo, hi) (a block's window, or all of them).
template <bool FUSED>
__device__ __forceinline__ size_t lftj_pair_element(const lftj_srcs &S, int sb, const uint32_t *rng, size_t stride,
                                                    const lftj_fused &fz, size_t lo, size_t hi, size_t me,
                                                    uint32_t *blo, uint32_t *bhi)
{
    *blo = *bhi = 0;
    if constexpr (FUSED) {
        const size_t own = lftj_owner(fz.off, lo, hi, me);
        const uint32_t *r = rng + own * stride;
        const int kc = fz.L.col[fz.kb];
        uint32_t row, end, x;
        if (lftj_match(S, fz.L, r, fz.drv[own], (uint32_t)(me - fz.off[own]), &row, &end, &x)) {
            *blo = lsearch(S, sb, kc, r[2 * sb], r[2 * sb + 1], x, false);
            *bhi = lsearch(S, sb, kc, r[2 * sb], r[2 * sb + 1], x, true);
        }
        return own;
    } else {
        *blo = rng[me * stride + 2 * sb];
        *bhi = rng[me * stride + 2 * sb + 1];
        return me;
    }
}

// For a sample of a pair count's n elements (one in `every`): out[0] += their warp steps,
// out[1] += their steps once narrowed (lftj_pair_narrow).
template <bool FUSED>
__global__ void k_lftj_narrow_sample(const __grid_constant__ lftj_srcs S, int sa, int ca, int sb, int cb, size_t n,
                                     size_t every, const uint32_t *rng, const uint32_t *acol,
                                     const __grid_constant__ lftj_fused fz, unsigned long long *out)
{
    const size_t stride = (size_t)S.nsrc * 2;
    unsigned long long steps = 0, narrowed = 0;
    GRID_STRIDE(i, (n + every - 1) / every)
    {
        uint32_t blo, bhi;
        const size_t own = lftj_pair_element<FUSED>(S, sb, rng, stride, fz, 0, fz.F, i * every, &blo, &bhi);
        steps += lftj_walk_steps(blo, bhi);
        lftj_pair_narrow(S, sa, ca, sb, cb, acol, rng[own * stride + 2 * sa], rng[own * stride + 2 * sa + 1], &blo,
                         &bhi);
        narrowed += lftj_walk_steps(blo, bhi);
    }
    for (int o = 16; o > 0; o >>= 1) {
        steps += __shfl_down_sync(0xffffffffu, steps, o);
        narrowed += __shfl_down_sync(0xffffffffu, narrowed, o);
    }
    if ((threadIdx.x & 31) == 0 && steps) {
        atomicAdd(&out[0], steps);
        atomicAdd(&out[1], narrowed);
    }
}

// chunk: elements a block takes at a time, at most LFTJ_CHUNK (fewer when the frontier is
// small, as in a box, so that more blocks share it and no single chunk is the tail).
// acol, bcol: A's and B's columns as arrays of their own (one word a row, B's padded to
// whole quads), or NULL. n: the elements (FUSED: level fz.L's candidates). CLEAN: B's
// values in a node are distinct (lftj_walk's DISTINCT) and never LFTJ_EMPTY.
//
// A run's B nodes are walked in warp steps of 32 quads (128 rows, one 16-byte load a lane),
// numbered across the run by a block scan of each element's step count; each warp takes an
// equal stretch of the run's steps. A warp an element left the run's barrier waiting for
// the warp with the longest node (ncu: 14% of stall samples), and one row a lane a step
// with branches around each probe cost 63 instructions a row; the count was issue-bound.
template <bool OWN, bool FUSED, bool CLEAN>
__global__ void __launch_bounds__(LFTJ_CHUNK, LFTJ_MINB)
    k_lftj_count_pair(const __grid_constant__ lftj_srcs S, int sa, int ca, int sb, int cb, size_t F,
                      const uint32_t *rng, unsigned chunk, const uint32_t *acol, const uint32_t *bcol_own,
                      const __grid_constant__ lftj_fused fz, bool narrow, unsigned long long *total)
{
    __shared__ __align__(16) uint32_t tables[2][LFTJ_SLOTS];
    __shared__ unsigned start_mask[LFTJ_CHUNK / 32];
    // per element of the chunk: its B node, and the frontier element holding its A node
    __shared__ uint32_t s_blo[LFTJ_CHUNK], s_bhi[LFTJ_CHUNK], s_own[LFTJ_CHUNK], s_step[LFTJ_CHUNK + 1];
    __shared__ size_t win[2];
    __shared__ unsigned long long block_sum;
    const size_t stride = (size_t)S.nsrc * 2;
    unsigned bar;
    const uint32_t *bcol = bcol_own ? NULL : lftj_column_of(S, sb, cb, &bar);
    unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5, which = 0;
    if (threadIdx.x == 0)
        block_sum = 0;
    __syncthreads();
    unsigned long long mine = 0;
    for (size_t c0 = (size_t)blockIdx.x * chunk; c0 < F; c0 += (size_t)gridDim.x * chunk) {
        int n = (int)(c0 + chunk < F ? chunk : F - c0);
        size_t me = c0 + threadIdx.x;
        uint32_t a_start = 0, blo = 0, bhi = 0;
        if constexpr (FUSED)
            lftj_owner_window(fz.off, fz.F, 0, c0, F, win);
        if ((int)threadIdx.x < n) {
            const size_t own = lftj_pair_element<FUSED>(S, sb, rng, stride, fz, FUSED ? win[0] : 0,
                                                                FUSED ? win[1] : 0, me, &blo, &bhi);
            a_start = rng[own * stride + 2 * sa];
            if (narrow)
                lftj_pair_narrow(S, sa, ca, sb, cb, acol, a_start, rng[own * stride + 2 * sa + 1], &blo, &bhi);
            s_own[threadIdx.x] = (uint32_t)own;
            s_blo[threadIdx.x] = blo;
            s_bhi[threadIdx.x] = bhi;
        }
        s_step[threadIdx.x] = a_start;   // for the next thread: a run starts where A's node changes
        __syncthreads();
        bool starts = (int)threadIdx.x < n && (threadIdx.x == 0 || s_step[threadIdx.x - 1] != a_start);
        unsigned ballot = __ballot_sync(0xffffffffu, starts);
        if (lane == 0)
            start_mask[warp] = ballot;
        int runs = __syncthreads_count(starts);
        // Runs of a few elements (a box of an out-of-core join cuts each A node's run
        // into pieces) do not repay a table: a warp an element then looks each value of
        // the shorter node up in the longer by binary search.
        if (runs * LFTJ_SHORT_RUN > n) {
            for (int f = (int)warp; f < n; f += (int)nwarps) {
                const uint32_t *r = rng + (size_t)s_own[f] * stride;
                mine += lftj_pair_search(S, sa, ca, sb, cb, r[2 * sa], r[2 * sa + 1], s_blo[f], s_bhi[f], lane);
            }
            __syncthreads();   // the next chunk rewrites the elements
            continue;
        }
        const uint32_t steps = (int)threadIdx.x < n ? (uint32_t)lftj_walk_steps(blo, bhi) : 0;
        uint32_t all, before = block_offsets<uint32_t>(steps, &all);
        s_step[threadIdx.x] = before;
        if (threadIdx.x == 0)
            s_step[n] = all;
        __syncthreads();
        for (int s = 0; s < n;) {   // every thread walks the same runs
            const uint32_t *r = rng + (size_t)s_own[s] * stride;
            uint32_t alo = r[2 * sa], ahi = r[2 * sa + 1], na = ahi - alo;
            int e = lftj_next_start(start_mask, s + 1, n);
            if (na == 0) {   // nothing matches
                s = e;
                continue;
            }
            // a node of more than an eighth of a table takes both as one, between barriers
            // (R-MAT 25: 3% of the probes are into nodes of more than 2048 values, which
            // would otherwise be searched in global memory)
            const bool both = na > LFTJ_BOTH_FROM && na <= LFTJ_SLOTS;
            bool use_table = na <= LFTJ_BOTH_FROM || both, has_empty = false, spilled = true;
            unsigned bits = 5;
            uint32_t *table = both ? tables[0] : tables[which];
            if (use_table) {
                // table runs alternate tables: between this one's probes and the clearing of
                // its table two table runs on lies the next table run's barrier
                if (both)
                    __syncthreads();
                else
                    which ^= 1;
                while (bits < LFTJ_SLOTS_BITS + both && (1u << bits) < (na << LFTJ_SPREAD))
                    bits++;
                for (unsigned i = threadIdx.x; i < (1u << bits) / 4; i += blockDim.x)
                    ((uint4 *)table)[i] = make_uint4(LFTJ_EMPTY, LFTJ_EMPTY, LFTJ_EMPTY, LFTJ_EMPTY);
                __syncthreads();
                bool empty_seen = false, spill_seen = false;
                for (uint32_t row = alo + threadIdx.x; row < ahi; row += blockDim.x) {
                    uint32_t x = acol ? acol[row] : lv(S, sa, row, ca);
                    if (x == LFTJ_EMPTY) {
                        empty_seen = true;
                        continue;
                    }
                    spill_seen |= lftj_insert(table, bits, x);
                }
                // CLEAN probes never look for the empty mark: the barrier's one bit then
                // says whether any value went past its first bucket instead
                if constexpr (CLEAN)
                    spilled = __syncthreads_or(spill_seen);
                else
                    has_empty = __syncthreads_or(empty_seen);
            }
            // the run's steps split into one stretch a warp (a warp an element, or steps
            // dealt in turn, left warps stepping through every element of the run)
            const uint32_t first_step = s_step[s], nsteps = s_step[e] - first_step, per = nsteps / nwarps,
                           extra = nsteps % nwarps;
            const uint32_t from = first_step + warp * per + min(warp, extra), to = from + per + (warp < extra);
            int f = s, fe = e;   // the element holding step `from`: the last with s_step[f] <= from
            while (fe - f > 1) {
                int mid = (f + fe) / 2;
                if (s_step[mid] <= from)
                    f = mid;
                else
                    fe = mid;
            }
            unsigned hits = 0;
            if (CLEAN && use_table && !spilled) {   // every value in its first bucket: one load a probe
                hits = lftj_walk<OWN, CLEAN>(s_step, s_blo, s_bhi, f, from, to, lane, bcol_own, bcol, bar,
                                             [&](const uint32_t *x, uint32_t keep) {
                                                 return lftj_table_hits<CLEAN, true>(table, bits, has_empty, x, keep);
                                             });
            } else if (use_table) {
                hits = lftj_walk<OWN, CLEAN>(s_step, s_blo, s_bhi, f, from, to, lane, bcol_own, bcol, bar,
                                             [&](const uint32_t *x, uint32_t keep) {
                                                 return lftj_table_hits<CLEAN, false>(table, bits, has_empty, x, keep);
                                             });
            } else {
                hits = lftj_walk<OWN, CLEAN>(s_step, s_blo, s_bhi, f, from, to, lane, bcol_own, bcol, bar,
                                      [&](const uint32_t *x, uint32_t keep) {
                                          unsigned n = 0;
#pragma unroll
                                          for (int i = 0; i < 4; i++)
                                              if (keep >> i & 1)
                                                  n += lhas(S, sa, ca, alo, ahi, x[i]);
                                          return n;
                                      });
            }
            mine += hits;
            if (both)
                __syncthreads();   // the next runs' tables are parts of this one
            s = e;
        }
        __syncthreads();   // start_mask and the steps are rewritten for the next chunk
    }
    lftj_add_block(mine, &block_sum, total);
}

// What a pair count over the frontier would do either way round. out[0] += the elements
// whose word col_a (a node's start row) differs from the previous one's: the runs that
// share a table with A's node as the shared one; out[1] += the warp steps (32 values)
// that probe the B nodes; out[2] += those that would probe the A nodes instead.
__global__ void k_lftj_pair_costs(const uint32_t *rng, size_t F, size_t stride, int col_a, int col_b,
                                  unsigned long long *out)
{
    unsigned long long runs = 0, probe_b = 0, probe_a = 0;
    GRID_STRIDE(f, F)
    {
        const uint32_t *r = rng + f * stride;
        runs += f == 0 || r[col_a] != rng[(f - 1) * stride + col_a];
        probe_b += (r[col_b + 1] - r[col_b] + 31) / 32;
        probe_a += (r[col_a + 1] - r[col_a] + 31) / 32;
    }
    for (int o = 16; o > 0; o >>= 1) {
        runs += __shfl_down_sync(0xffffffffu, runs, o);
        probe_b += __shfl_down_sync(0xffffffffu, probe_b, o);
        probe_a += __shfl_down_sync(0xffffffffu, probe_a, o);
    }
    if ((threadIdx.x & 31) == 0 && (runs | probe_b | probe_a)) {
        atomicAdd(&out[0], runs);
        atomicAdd(&out[1], probe_b);
        atomicAdd(&out[2], probe_a);
    }
}

// first[t] = the first row whose column 0 is >= minv + t (rows sorted by column 0).
__global__ void k_lftj_first(const uint32_t *data, int arity, uint32_t n, uint32_t minv, size_t m, uint32_t *first)
{
    GRID_STRIDE(t, m) first[t] = (uint32_t)lftj_first_at_least(data, arity, n, (uint64_t)minv + t);
}

// first[t] = the first row whose column 0 is >= minv + t, from a TrieArray's root level
// in two passes over first (preset to UINT32_MAX, which no
// row number is): each root entry writes its own value's slot and up to 256 before it
// (the values it is the first at least), then the slots left, in longer gaps between
// values, search the root level. A search for every slot took 1.3 ms at R-MAT 24 (16 M
// slots) on an H100.
#define LFTJ_FILL_GAP 256
__global__ void k_lftj_first_fill(const __grid_constant__ lftj_srcs S, int s, uint32_t *first)
{
    GRID_STRIDE(i, S.nroot[s])
    {
        const uint32_t hi = S.rval[s][i] - S.minv[s], row = S.rptr[s][i];
        const uint32_t lo = i ? S.rval[s][i - 1] - S.minv[s] + 1 : 0;
        for (uint64_t t = hi - lo < LFTJ_FILL_GAP ? lo : hi - LFTJ_FILL_GAP; t <= hi; t++)
            first[t] = row;
    }
}

__global__ void k_lftj_first_gaps(const __grid_constant__ lftj_srcs S, int s, size_t m, uint32_t *first)
{
    GRID_STRIDE(t, m)
    if (first[t] == UINT32_MAX)
        first[t] = lftj_root_at_least(S, s, (uint64_t)S.minv[s] + t);
}

// The first column's first and last values into pinned host memory (one launch, where two
// copies cost twice its time).
__global__ void k_lftj_ends(const uint32_t *data, size_t last, unsigned long long *host)
{
    *host = data[0] | (unsigned long long)data[last] << 32;
}

// first[0 .. maxv - minv + 1] over column 0 of n (< 2^32) sorted rows: first[t] is the
// first row whose value is >= minv + t, the last entry n. Built when the values span at
// most `limit`; otherwise, or without memory, *first stays NULL (an index is a speed-up,
// never a reason to fail).

static rfx_status lftj_root_index(rfx_gpu *g, const uint32_t *data, int arity, size_t n, size_t limit,
                                  uint32_t **first, uint32_t *minv, uint32_t *maxv)
{
    *first = NULL;
    k_lftj_ends<<<1, 1, 0, g->stream>>>(data, (n - 1) * (size_t)arity, g->d_words + 3);
    CK_LAUNCH();
    CK(cudaStreamSynchronize(g->stream));
    const uint64_t w = ((volatile uint64_t *)g->h_words)[3];
    const uint32_t ends[2] = {(uint32_t)w, (uint32_t)(w >> 32)};
    size_t m = (size_t)ends[1] - ends[0] + 2;
    if (m - 1 > limit || !(*first = (uint32_t *)rfx_gpu_alloc(g, m * 4)))
        return RFX_OK;
    k_lftj_first<<<grid_for(m), 256, 0, g->stream>>>(data, arity, (uint32_t)n, ends[0], m, *first);
    CK_LAUNCH();
    *minv = ends[0];
    *maxv = ends[1];
    return RFX_OK;
}

// Level 0 of a join kept for the next join over the same slices of the sources that
// variable 0 leads (the boxes of one outer interval): its frontier as level 0 left it,
// and the root index of such a source (its slice is the same until the memo is forgotten).
// Level 1 narrows ranges in place, so each join starts from a copy of level 0.
struct rfx_gpu_lftj_memo {
    bool valid;
    int nsrc;
    size_t F;
    uint32_t *bind, *rng;   // device memory of the context that made it
    const uint32_t *idx_data;   // the source the index is of (data, rows, arity), or NULL
    uint32_t idx_rows;
    int idx_arity;
    uint32_t *first, minv, maxv;
};

// Indexes the first column of each source whose values are dense enough that the index
// is no larger than the source, or spans at most LFTJ_INDEX_SMALL values (ca-HepTh's
// oriented edges: 25,973 rows over ids to 68,745; a root search there took ~16 loads),
// and that leaves most of the free budget alone.
// Sources over the same rows share one index (the same start is not enough: a box's
// slice of a relation may start where the whole relation, another source, does).
// owned[s] marks the indexes to free.
// With a memo, the index of a source variable 0 leads is taken from it or left to it.
static rfx_status lftj_index_roots(rfx_gpu *g, lftj_srcs *S, bool *owned, rfx_gpu_lftj_memo *memo, const bool *lead0)
{
    for (int s = 0; s < S->nsrc; s++) {
        size_t n = S->rows[s];
        owned[s] = false;
        S->first[s] = NULL;
        if (!n)
            continue;
        if (memo && lead0[s] && memo->first && memo->idx_data == S->data[s] && memo->idx_rows == S->rows[s] &&
            memo->idx_arity == S->arity[s]) {
            S->first[s] = memo->first;
            S->minv[s] = memo->minv;
            S->maxv[s] = memo->maxv;
            continue;
        }
        int same = -1;   // an earlier source over the same rows: its index, or none, is this one's
        for (int q = 0; q < s && same < 0; q++)
            if (S->data[q] == S->data[s] && S->rows[q] == S->rows[s] && S->arity[q] == S->arity[s])
                same = q;
        if (same >= 0) {
            S->first[s] = S->first[same];
            S->minv[s] = S->minv[same];
            S->maxv[s] = S->maxv[same];
            continue;
        }
        size_t used = rfx_gpu_in_use(g), spare = g->budget > used ? g->budget - used : 0;
        const size_t small = memo ? 0 : LFTJ_INDEX_SMALL;   // a box's slices: an index each would cost a wait each
        size_t limit = n * (size_t)S->arity[s] > small ? n * (size_t)S->arity[s] : small;
        limit = limit < spare / 16 ? limit : spare / 16;
        uint32_t *first = NULL;
        rfx_status st = RFX_OK;
        if (S->rptr[s]) {   // a TrieArray's root level: its ends are known, no wait; the index from the level
            size_t m = (size_t)S->maxv[s] - S->minv[s] + 2;
            if (m - 1 <= limit && (first = (uint32_t *)rfx_gpu_alloc(g, m * 4))) {
                cudaError_t e = cudaMemsetAsync(first, 0xff, m * 4, g->stream);
                if (e == cudaSuccess) {
                    k_lftj_first_fill<<<grid_for(S->nroot[s]), 256, 0, g->stream>>>(*S, s, first);
                    k_lftj_first_gaps<<<grid_for(m), 256, 0, g->stream>>>(*S, s, m, first);
                    e = cudaGetLastError();
                }
                if (e != cudaSuccess) {
                    rfx_gpu_free(g, first);
                    return fail(g, e, "k_lftj_first_fill", __FILE__, __LINE__);
                }
            }
        } else
            st = lftj_root_index(g, S->data[s], S->arity[s], n, limit, &first, &S->minv[s], &S->maxv[s]);
        if (st != RFX_OK)
            return st;
        S->first[s] = first;
        owned[s] = first != NULL;
        if (first && memo && lead0[s] && !memo->first) {
            memo->first = first;
            memo->idx_data = S->data[s];
            memo->idx_rows = S->rows[s];
            memo->idx_arity = S->arity[s];
            memo->minv = S->minv[s];
            memo->maxv = S->maxv[s];
            owned[s] = false;
        }
    }
    return RFX_OK;
}

// Sums for choosing a triangle count's variable order over rows e(a, b) sorted, with
// d(v) = first[v + 1] - first[v] the rows led by v: out[0] += d(b) for each row (the
// last level's probes under order a, b, c: N+(b) against a table of N+(a)), out[1] +=
// d(a)^2 at each run start (order b, a, c: N+(a) against a table of N+(b)).
__global__ void k_lftj_order_costs(const uint32_t *rows, size_t n, const uint32_t *first, uint32_t minv, uint32_t maxv,
                                   unsigned long long *out)
{
    unsigned long long xy = 0, yx = 0;
    GRID_STRIDE(i, n)
    {
        uint32_t a = rows[2 * i], b = rows[2 * i + 1];
        if (b >= minv && b <= maxv)
            xy += first[b - minv + 1] - first[b - minv];
        if (i == 0 || rows[2 * i - 2] != a) {
            unsigned long long d = first[a - minv + 1] - first[a - minv];
            yx += d * d;
        }
    }
    for (int o = 16; o > 0; o >>= 1) {
        xy += __shfl_down_sync(0xffffffffu, xy, o);
        yx += __shfl_down_sync(0xffffffffu, yx, o);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&out[0], xy);
        atomicAdd(&out[1], yx);
    }
}

extern "C" rfx_status rfx_gpu_triangle_order_costs(rfx_gpu *g, const rfx_dev_rows *e, double *xy, double *yx)
{
    *xy = *yx = 0;
    if (e->arity != 2 || e->n == 0 || e->n > UINT32_MAX)
        return RFX_OK;
    uint32_t *first, minv = 0, maxv = 0;
    rfx_status st = lftj_root_index(g, e->data, 2, e->n, 4 * e->n + 1024, &first, &minv, &maxv);
    if (st != RFX_OK || !first)
        return st;   // no estimate (sparse values, or no memory): the caller keeps its order
    unsigned long long *sums = (unsigned long long *)rfx_gpu_alloc(g, 16), h[2] = {0, 0};
    cudaError_t err = sums ? cudaMemsetAsync(sums, 0, 16, g->stream) : cudaSuccess;
    if (sums && err == cudaSuccess) {
        k_lftj_order_costs<<<grid_for(e->n), 256, 0, g->stream>>>(e->data, e->n, first, minv, maxv, sums);
        err = cudaGetLastError();
    }
    st = err != cudaSuccess ? fail(g, err, "k_lftj_order_costs", __FILE__, __LINE__)
         : sums            ? to_host(g, sums, h, 2)
                           : RFX_OK;
    rfx_gpu_free(g, first);
    rfx_gpu_free(g, sums);
    *xy = (double)h[0];
    *yx = (double)h[1];
    return st;
}

// One frontier: F partial bindings of `depth` values, with nsrc ranges each.
// drv and cnt, when set, hold the next level's drivers and candidate counts, found by the
// emit that made the frontier (lftj_precount); off, when set, their exclusive scan and C
// their sum (lftj_scan_begin).
struct lftj_frontier {
    size_t F;
    uint32_t *bind, *rng;
    uint8_t *drv;
    uint64_t *cnt, *off, C;
};

static void lftj_frontier_free(rfx_gpu *g, lftj_frontier *f)
{
    rfx_gpu_free(g, f->bind);
    rfx_gpu_free(g, f->rng);
    rfx_gpu_free(g, f->drv);
    rfx_gpu_free(g, f->cnt);
    rfx_gpu_free(g, f->off);
    f->bind = f->rng = NULL;
    f->drv = NULL;
    f->cnt = f->off = NULL;
}

// Flags of candidates [c0, c0 + nc) and their exclusive scan; *kept = survivors.
static rfx_status lftj_round(rfx_gpu *g, const lftj_srcs &S, const lftj_level &L, const lftj_frontier &cur,
                             const uint8_t *drv, const uint64_t *off, uint64_t c0, size_t nc, uint64_t *flag,
                             uint64_t *pos, uint64_t *kept)
{
    k_lftj_check<<<grid_for(nc), 256, 0, g->stream>>>(S, L, cur.F, cur.rng, drv, off, c0, nc, flag);
    CK_LAUNCH();
    return scan_total(g, flag, pos, nc, kept);
}

extern "C" rfx_gpu_lftj_memo *rfx_gpu_lftj_memo_new(void)
{
    return (rfx_gpu_lftj_memo *)calloc(1, sizeof(rfx_gpu_lftj_memo));
}

// Drops level 0 only (the index stays: the join that failed to keep level 0 reads it).
static void lftj_memo_drop_level0(rfx_gpu *g, rfx_gpu_lftj_memo *m)
{
    rfx_gpu_free(g, m->bind);
    rfx_gpu_free(g, m->rng);
    m->bind = m->rng = NULL;
    m->valid = false;
}

extern "C" void rfx_gpu_lftj_memo_forget(rfx_gpu *g, rfx_gpu_lftj_memo *m)
{
    if (!m)
        return;
    lftj_memo_drop_level0(g, m);
    rfx_gpu_free(g, m->first);   // stream-ordered: the joins queued before still read it
    m->first = NULL;
    m->idx_data = NULL;
}

extern "C" void rfx_gpu_lftj_memo_free(rfx_gpu *g, rfx_gpu_lftj_memo *m)
{
    rfx_gpu_lftj_memo_forget(g, m);
    free(m);
}

// The sources in mask (bit s) get their root range [0, rows) in every element: the
// sources variable 0 does not lead, whose slices differ from box to box.
__global__ void k_lftj_patch_roots(uint32_t *rng, size_t F, int nsrc, uint32_t mask,
                                   const __grid_constant__ lftj_srcs S)
{
    GRID_STRIDE(f, F)
    {
        for (int s = 0; s < nsrc; s++)
            if (mask >> s & 1) {
                rng[f * (size_t)nsrc * 2 + 2 * s] = 0;
                rng[f * (size_t)nsrc * 2 + 2 * s + 1] = S.rows[s];
            }
    }
}

// The state of one join: sources, levels, and what has been found so far.
struct lftj_run {
    rfx_gpu *g;
    lftj_srcs S;
    lftj_level *levels;
    int pair_a[64];            // per level with two participants: the one with the shared node, or -1
    int nsrc, nvars;
    bool counting;
    bool timing;               // RFX_LFTJ_TIMES: each level's time on stderr (synchronises)
    bool unfused;              // RFX_LFTJ_UNFUSED: no lftj_fused count (tests, comparisons)
    bool rows_only;            // RFX_LFTJ_ROWS: sorted rows read in place, no TrieArrays (comparisons)
    int narrow;                // RFX_LFTJ_NARROW: the pair count's narrowing 0 never, 1 always, -1 as a sample says
    uint64_t trie_from;        // RFX_LFTJ_TRIE_FROM: the rows a source needs to be read as a TrieArray
    uint64_t unchecked_rows;   // RFX_LFTJ_UNCHECKED_ROWS: lftj_unchecked's limit
    uint64_t regroup_piece;    // RFX_LFTJ_REGROUP_PIECE: the most elements lftj_count_regrouped sorts at once
    rfx_gpu_lftj_memo *memo;   // level 0 kept or reused, or NULL
    rfx_dev_trie tries[LFTJ_MAX_SRC];        // the TrieArrays built (levels 0: none built in the slot)
    const rfx_dev_trie *trie[LFTJ_MAX_SRC];  // the one each source reads, or NULL (rows)
    uint64_t total;            // counting: bindings so far
    rfx_dev_rows *pieces;      // listing: result pieces in order (several when the frontier was split)
    int npieces, piece_cap;
};

// Small joins, counted in one launch. The level-by-level join costs a dozen launches and
// host round trips whatever the input (0.22-0.37 ms for the bundled SNAP graphs of
// 14,000-180,000 edges, against microseconds of work), so small joins of two or three
// variables are counted in one pass instead: a group of G lanes a row (8, 4 or 1: see
// lftj_small_count) of a source p whose first two columns are variables 0 and 1 binds both
// from the row, narrows the other participants' nodes to them (a search of G + 1 parts a
// step for the first row, galloping for the last), and counts the last variable's values common to its nodes, the
// group's lanes taking every G-th value when its driver (the smallest node) has at most
// G * LFTJ_SMALL_LONG, each seeking through the others as its values rise; the longer
// drivers of a warp are counted by the whole warp, one after another
// (a power-law graph's hubs would otherwise hold their warps: ca-HepPh counted in 0.73 ms
// one lane a row, against 0.31 ms level by level). Inputs of at most LFTJ_SMALL_ROWS rows
// a source go this way (RFX_LFTJ_SMALL_ROWS overrides it; 0 turns it off): on an H100
// soc-Slashdot0902's 504,230 edges counted in 0.31 ms so against 0.51 level by level, and
// R-MAT 16's 908,853 in 0.97 against 0.58. (A depth-first
// lane a row for four variables counted 4-cliques up to 29 times slower than the levels:
// the lanes' work differs by the square of a node; with variable 2's long drivers spread
// over the warp, still 2-10 times slower on 13 of the 14 bundled graphs: a small graph
// gives too few warps for that much work a row. See docs/PERFORMANCE.md.)
#define LFTJ_SMALL_SRC 8
#ifndef LFTJ_SMALL_ROWS
#define LFTJ_SMALL_ROWS (1u << 19)
#endif
#ifndef LFTJ_SMALL_LONG
#define LFTJ_SMALL_LONG 16
#endif

struct lftj_small_plan {
    int nvars, p;   // p: the source whose rows bind variables 0 and 1
    lftj_level L[3];
};

// The first row in [from, hi) of a column (stride words a row) whose value is >= x (> x:
// upper), galloping from `from` (a value near the last one sought is found in a few loads).
__device__ __forceinline__ uint32_t lftj_gallop(const uint32_t *c, unsigned stride, uint32_t from, uint32_t hi,
                                                uint32_t x, bool upper)
{
    const auto below = [&](uint32_t row) { return lftj_before(c[(size_t)row * stride], x, upper); };
    if (from >= hi || !below(from))
        return from;
    uint32_t a = from, step = 1;   // row a is before the one sought
    while (step < hi - a && below(a + step)) {
        a += step;
        step *= 2;
    }
    return lftj_column_search(c, stride, a + 1, step < hi - a ? a + step : hi, x, upper);
}

// A row of a small join is worked by a group of up to LFTJ_SMALL_GROUP lanes: its searches probe
// that many rows a step, and its last level's values are dealt over them. A lane a row
// left each lane a chain of ~100 dependent loads (two binary searches over a whole
// relation, galloping, one seek per driver value) on graphs whose rows fill less than
// half the GPU's lanes: ca-GrQc's count was that chain, 76 us for 14,484 rows on an H100.
#define LFTJ_SMALL_GROUP 8   // the largest group (1, 2, 4 or 8 lanes: lftj_small_count chooses)

struct lftj_group {
    unsigned mask;   // the group's lanes in the warp
    int base;        // its first lane
    int lane;        // this lane's place in it
};

// The group's lanes for which `p` holds, as bits 0 .. G - 1.
template <int G>
__device__ __forceinline__ unsigned lftj_group_ballot(const lftj_group &q, bool p)
{
    return (__ballot_sync(q.mask, p) >> q.base) & ((1u << G) - 1);
}

// First row in [lo, hi) of a column (stride words a row) whose value is >= x (upper: > x):
// each step the G lanes probe G rows splitting the range in G + 1 parts.
template <int G>
__device__ __forceinline__ uint32_t lftj_group_search(const lftj_group &q, const uint32_t *c, unsigned stride,
                                                      uint32_t lo, uint32_t hi, uint32_t x, bool upper)
{
    if constexpr (G == 1) {
        return lftj_column_search(c, stride, lo, hi, x, upper);
    } else {
        while (hi - lo > G) {   // the answer lies in [lo, hi]
            const uint64_t n = hi - lo;
            const uint32_t v = c[(size_t)(lo + (uint32_t)((q.lane + 1) * n / (G + 1))) * stride];
            const uint32_t below = (uint32_t)__popc(lftj_group_ballot<G>(q, lftj_before(v, x, upper)));
            const uint32_t nlo = below ? lo + (uint32_t)(below * n / (G + 1)) + 1 : lo;
            hi = below < G ? lo + (uint32_t)((below + 1) * n / (G + 1)) : hi;
            lo = nlo;
        }
        const uint32_t at = lo + (uint32_t)q.lane;
        const bool below = at < hi && lftj_before(c[(size_t)at * stride], x, upper);
        return lo + (uint32_t)__popc(lftj_group_ballot<G>(q, below));
    }
}

// The same from `from`, whose answer is near: the lanes first probe from + 8^lane - 1
// (from, +7, +63, +511, ...), then search the bracket the first row not below ends.
template <int G>
__device__ __forceinline__ uint32_t lftj_group_gallop(const lftj_group &q, const uint32_t *c, unsigned stride,
                                                      uint32_t from, uint32_t hi, uint32_t x, bool upper)
{
    if constexpr (G == 1) {
        return lftj_gallop(c, stride, from, hi, x, upper);
    } else {
        const uint64_t off = ((uint64_t)1 << (3 * q.lane)) - 1;
        const bool in = from + off < hi;
        const uint32_t v = in ? c[(size_t)(from + off) * stride] : 0;
        const int below = __popc(lftj_group_ballot<G>(q, in && lftj_before(v, x, upper)));
        if (below == 0)
            return from;
        const uint64_t lo = from + (((uint64_t)1 << (3 * (below - 1))) - 1) + 1;
        const uint64_t end = below < G ? from + (((uint64_t)1 << (3 * below)) - 1) : hi;
        return lftj_group_search<G>(q, c, stride, (uint32_t)lo, (uint32_t)(end < hi ? end : hi), x, upper);
    }
}

// Narrows the nodes r (two words a source, the same in all the group's lanes) of level L's
// participants, but p's, to value x; false when one lacks it. The small join's sources are
// rows (it runs before any TrieArray is made), so a column is a pointer and a stride.
template <int G>
__device__ __forceinline__ bool lftj_group_bind(const lftj_group &q, const lftj_srcs &S, const lftj_level &L, int p,
                                                uint32_t *r, uint32_t x)
{
    for (int k = 0; k < L.np; k++) {
        const int s = L.src[k];
        if (s == p)
            continue;
        unsigned stride;
        const uint32_t *c = lftj_column_of(S, s, L.col[k], &stride);
        const uint32_t lo = lftj_group_search<G>(q, c, stride, r[2 * s], r[2 * s + 1], x, false);
        if (lo == r[2 * s + 1] || c[(size_t)lo * stride] != x)
            return false;
        r[2 * s + 1] = lftj_group_gallop<G>(q, c, stride, lo, r[2 * s + 1], x, true);
        r[2 * s] = lo;
    }
    return true;
}

// The values of the last level's driver d at rows start, start + stride, ... of its node
// that are new (differ from the row before) and in every other participant's node of r.
// In a group (stride up to LFTJ_SMALL_GROUP) the others are sought by galloping from the
// lane's last match; strided over a warp, by binary search.
__device__ __forceinline__ unsigned lftj_small_last(const lftj_srcs &S, const lftj_level &L, int d, const uint32_t *r,
                                                    uint32_t start, uint32_t stride)
{
    const int ds = L.src[d];
    const uint32_t lo = r[2 * ds], hi = r[2 * ds + 1];
    unsigned dstride;
    const uint32_t *dcol = lftj_column_of(S, ds, L.col[d], &dstride);
    uint32_t at[LFTJ_SMALL_SRC];
    for (int k = 0; k < L.np; k++)
        at[k] = r[2 * L.src[k]];
    unsigned n = 0;
    for (uint32_t j = start; j < hi; j += stride) {
        const uint32_t v = dcol[(size_t)j * dstride];
        if (j > lo && dcol[(size_t)(j - 1) * dstride] == v)
            continue;
        bool all = true;
        for (int k = 0; k < L.np && all; k++) {
            if (k == d)
                continue;
            const int s = L.src[k];
            unsigned cs;
            const uint32_t *c = lftj_column_of(S, s, L.col[k], &cs);
            if (stride <= LFTJ_SMALL_GROUP) {   // each lane's values rise: seek on from its last match
                at[k] = lftj_gallop(c, cs, at[k], r[2 * s + 1], v, false);
                all = at[k] < r[2 * s + 1] && c[(size_t)at[k] * cs] == v;
            } else {
                const uint32_t p = lftj_column_search(c, cs, r[2 * s], r[2 * s + 1], v, false);
                all = p < r[2 * s + 1] && c[(size_t)p * cs] == v;
            }
        }
        n += all;
    }
    return n;
}

template <int G>
__global__ void k_lftj_small_count(const __grid_constant__ lftj_srcs S, const __grid_constant__ lftj_small_plan P,
                                   unsigned long long *total)
{
    __shared__ unsigned long long block_sum;
    if (threadIdx.x == 0)
        block_sum = 0;
    __syncthreads();
    unsigned long long mine = 0;
    const unsigned lane = threadIdx.x & 31;
    const int p = P.p, ns = S.nsrc;
    const uint32_t n = S.rows[p];
    lftj_group q;
    q.lane = (int)lane % G;
    q.base = (int)lane - q.lane;
    q.mask = ((1u << G) - 1) << q.base;
    unsigned pstride;
    const uint32_t *pc = lftj_column_of(S, p, 0, &pstride);   // p's rows: x, y at pc[0], pc[1]
    // warp-uniform steps (a warp's groups take on its long nodes together), 32 / G rows a warp
    for (size_t base = ((size_t)blockIdx.x * blockDim.x + (threadIdx.x & ~31u)) / G; base < n;
         base += (size_t)gridDim.x * blockDim.x / G) {
        const uint32_t i = (uint32_t)base + lane / G;
        uint32_t r[2 * LFTJ_SMALL_SRC], x = 0, y = 0;
        bool ok = i < n;
        if (ok) {
            x = pc[(size_t)i * pstride];
            y = pc[(size_t)i * pstride + 1];
            ok = i == 0 || pc[(size_t)(i - 1) * pstride] != x || pc[(size_t)(i - 1) * pstride + 1] != y;   // else the row before binds them
        }
        if (ok) {
            for (int s = 0; s < ns; s++) {
                r[2 * s] = 0;
                r[2 * s + 1] = S.rows[s];
            }
            uint32_t e = i + 1;   // p's node: its rows that start with x, y
            while (e < n && pc[(size_t)e * pstride] == x && pc[(size_t)e * pstride + 1] == y)
                e++;
            r[2 * p] = i;
            r[2 * p + 1] = e;
            ok = lftj_group_bind<G>(q, S, P.L[0], p, r, x) && lftj_group_bind<G>(q, S, P.L[1], p, r, y);
        }
        if (P.nvars == 2) {
            mine += ok && q.lane == 0;
            continue;
        }
        const lftj_level &L = P.L[2];
        int d = 0;
        uint32_t len = 0;
        if (ok)
            d = lftj_driver(L, r, &len);
        const bool wide = ok && len > LFTJ_SMALL_LONG * G;
        if (ok && !wide)
            mine += lftj_small_last(S, L, d, r, r[2 * L.src[d]] + q.lane, G);
        for (unsigned m = __ballot_sync(0xffffffffu, wide && q.lane == 0); m; m &= m - 1) {
            const int from = __ffs(m) - 1;
            uint32_t rr[2 * LFTJ_SMALL_SRC];
            for (int s = 0; s < 2 * ns; s++)
                rr[s] = __shfl_sync(0xffffffffu, r[s], from);
            const int dd = __shfl_sync(0xffffffffu, d, from);
            mine += lftj_small_last(S, L, dd, rr, rr[2 * L.src[dd]] + lane, 32);
        }
    }
    lftj_add_block(mine, &block_sum, total);
}

// Zeroes the device counter, runs launch() (which returns its launch's error), and adds
// the count it leaves there to R->total; `what` names the kernel in an error. mapped: the
// kernel also counts its blocks done in counter[1] and its last block writes the count to
// the context's host word 3.
template <typename Launch>
static rfx_status lftj_add_count(lftj_run *R, unsigned long long *counter, bool mapped, const char *what, Launch launch)
{
    cudaError_t e = cudaMemsetAsync(counter, 0, mapped ? 16 : 8, R->g->stream);
    if (e == cudaSuccess)
        e = launch();
    unsigned long long t = 0;
    rfx_status st = RFX_OK;
    if (e != cudaSuccess)
        st = fail(R->g, e, what, __FILE__, __LINE__);
    else if (!mapped)
        st = to_host(R->g, counter, &t, 1);
    else if ((e = cudaStreamSynchronize(R->g->stream)) != cudaSuccess)
        st = fail(R->g, e, what, __FILE__, __LINE__);
    else
        t = ((volatile uint64_t *)R->g->h_words)[3];
    R->total += t;
    return st;
}

// Counts the join in one launch when it is small and shaped for it (see above); *done
// says whether it did.
static rfx_status lftj_small_count(lftj_run *R, const int *colvar, bool *done)
{
    *done = false;
    const char *env = getenv("RFX_LFTJ_SMALL_ROWS");
    const size_t limit = env ? strtoull(env, NULL, 10) : LFTJ_SMALL_ROWS;
    if (!R->counting || R->memo || R->nsrc > LFTJ_SMALL_SRC || R->nvars < 2 || R->nvars > 3)
        return RFX_OK;
    lftj_small_plan P;
    memset(&P, 0, sizeof P);
    P.nvars = R->nvars;
    P.p = -1;
    for (int s = 0, o = 0; s < R->nsrc; o += R->S.arity[s], s++) {
        if (R->S.rows[s] > limit || R->S.rptr[s])   // rows only: its columns are pointers and strides
            return RFX_OK;
        if (R->S.arity[s] >= 2 && colvar[o] == 0 && colvar[o + 1] == 1 && (P.p < 0 || R->S.rows[s] < R->S.rows[P.p]))
            P.p = s;
    }
    if (P.p < 0)
        return RFX_OK;
    for (int v = 0; v < R->nvars; v++)
        P.L[v] = R->levels[v];
    rfx_gpu *g = R->g;
    lftj_srcs S = R->S;
    for (int s = 0; s < R->nsrc; s++)
        S.first[s] = NULL;   // searches only: an index would cost a round trip to build
    unsigned long long *d_total = (unsigned long long *)rfx_gpu_alloc(g, 8);
    if (!d_total)
        return RFX_ERR_NOMEM;
    // Lanes a row: 8 or 4 where rows * lanes fit the GPU's resident threads, else 1 (a
    // group repeats its searches in every lane, which a full GPU pays for). H100, count ms
    // with 1 / 2 / 4 / 8 lanes: ca-GrQc (14,484 rows) 0.09 / 0.09 / 0.06 / 0.05,
    // as-caida20071105 (53,381) 0.09 / 0.09 / 0.07 / 0.06, ca-CondMat (93,439) 0.08 / 0.12 /
    // 0.10 / 0.11, p2p-Gnutella31 (147,892) 0.06 / 0.14 / 0.13 / 0.13; two lanes never won.
    // RFX_LFTJ_SMALL_GROUP=1|2|4|8 sets it.
    const char *genv = getenv("RFX_LFTJ_SMALL_GROUP");
    int G = genv ? atoi(genv) : 0;
    if (G != 1 && G != 2 && G != 4 && G != 8) {
        const size_t resident = (size_t)g->sms * 2048, rows = S.rows[P.p];
        G = rows * 8 <= resident ? 8 : rows * 4 <= resident ? 4 : 1;
    }
    const unsigned blocks = grid_for((size_t)S.rows[P.p] * G);
    rfx_status st = lftj_add_count(R, d_total, false, "k_lftj_small_count", [&] {
        if (G == 8)
            k_lftj_small_count<8><<<blocks, 256, 0, g->stream>>>(S, P, d_total);
        else if (G == 4)
            k_lftj_small_count<4><<<blocks, 256, 0, g->stream>>>(S, P, d_total);
        else if (G == 2)
            k_lftj_small_count<2><<<blocks, 256, 0, g->stream>>>(S, P, d_total);
        else
            k_lftj_small_count<1><<<blocks, 256, 0, g->stream>>>(S, P, d_total);
        return cudaGetLastError();
    });
    rfx_gpu_free(g, d_total);
    *done = st == RFX_OK;
    return st;
}

// Wall seconds after the stream's work so far (timing only).
static double lftj_clock(lftj_run *R)
{
    cudaStreamSynchronize(R->g->stream);
    return rfx_seconds();
}

// A copy of the frontier's F ranges (F < 2^32: a pair count's), stably ordered by word col
// (a node's start row), in *out; *out stays NULL when memory is short (the caller then
// regroups a smaller piece).
static rfx_status lftj_regroup(rfx_gpu *g, const uint32_t *rng, size_t F, int nsrc, int col, uint32_t **out)
{
    *out = NULL;
    int bits[2 * LFTJ_MAX_SRC] = {0};
    bits[col] = 32;
    rfx_status st = rows_sorted_by(g, rng, F, nsrc * 2, bits, out);
    return st == RFX_ERR_NOMEM ? RFX_OK : st;
}

// Which participant of the pair count holds the shared node (*a, from the plan's order),
// and whether the count had better regroup the frontier by the other node and swap the
// roles (*swap: lftj_count_regrouped), as it had when
// - the shared node's runs average under LFTJ_SHORT_RUN elements: in a box the inner
//   variable's interval cuts them to a few elements each, and regrouped, the elements of
//   one y share N+(y) in one run; or
// - the other node's lists are shorter to probe by LFTJ_SWAP_GAIN: a triangle count over
//   (x, y) probes N+(y) for each pair, that is sum d+(y), where swapped it probes sum
//   d+(x) (R-MAT: about half; the sort costs a few percent of the count).
// counter: 24 device bytes.
#define LFTJ_SWAP_GAIN 0.8
static rfx_status lftj_pair_roles(lftj_run *R, int v, const lftj_frontier &cur, unsigned long long *counter, int *a,
                                  bool *swap)
{
    rfx_gpu *g = R->g;
    const lftj_level &L = R->levels[v];
    *a = R->pair_a[v];
    *swap = false;
    if (cur.F < 4096)
        return RFX_OK;
    CK(cudaMemsetAsync(counter, 0, 24, g->stream));
    k_lftj_pair_costs<<<grid_for(cur.F), 256, 0, g->stream>>>(cur.rng, cur.F, (size_t)R->nsrc * 2, 2 * L.src[*a],
                                                               2 * L.src[1 - *a], counter);
    CK_LAUNCH();
    unsigned long long c[3] = {0, 0, 0};
    rfx_status st = to_host(g, counter, c, 3);
    *swap = st == RFX_OK && (c[0] * LFTJ_SHORT_RUN > cur.F || (double)c[2] < LFTJ_SWAP_GAIN * (double)c[1]);
    if (R->timing)
        fprintf(stderr, "lftj pair roles: %zu elements, %llu runs, warp steps probing %llu (swapped %llu)%s\n", cur.F,
                c[0], c[1], c[2], *swap ? ": swapped" : "");
    return st;
}

// Whether narrowing the count's B nodes (lftj_pair_narrow) pays: where it cuts at least
// LFTJ_NARROW_GAIN of the warp steps of a sample of the n elements (one launch, one wait;
// smaller counts run unnarrowed). R-MAT 22 / 24 / 26 on an H100, count ms: renamed by
// degree rank, 31.8 / 170.8 / 928.2 unnarrowed, 29.0 / 147.2 / 743.6 narrowed; numbered
// as generated, where it cut ~1% of the steps, 32.9 / 176.4 / 974.7 against 34.4 / 185.6 /
// 1015.9 (the searches' loads in each chunk's setup, which its barrier waits for).
#define LFTJ_NARROW_FROM (1u << 20)
#define LFTJ_NARROW_SAMPLE (1u << 16)
#define LFTJ_NARROW_GAIN 0.1
static cudaError_t lftj_narrow_pays(const lftj_run *R, int sa, int ca, int sb, int cb, size_t n, const uint32_t *rng,
                                    const uint32_t *acol, const lftj_fused &fz, bool fused, bool *pays)
{
    rfx_gpu *g = R->g;
    const lftj_srcs &S = R->S;
    *pays = R->narrow > 0;
    if (R->narrow >= 0 || n < LFTJ_NARROW_FROM)
        return cudaSuccess;
    unsigned long long *d = (unsigned long long *)rfx_gpu_alloc(g, 16), h[2] = {0, 0};
    if (!d)   // short of memory: the count runs unnarrowed
        return cudaSuccess;
    const size_t every = n / LFTJ_NARROW_SAMPLE;
    const unsigned grid = LFTJ_NARROW_SAMPLE / 256;
    cudaError_t e = cudaMemsetAsync(d, 0, 16, g->stream);
    if (e == cudaSuccess) {
        if (fused)
            k_lftj_narrow_sample<true><<<grid, 256, 0, g->stream>>>(S, sa, ca, sb, cb, n, every, rng, acol, fz, d);
        else
            k_lftj_narrow_sample<false><<<grid, 256, 0, g->stream>>>(S, sa, ca, sb, cb, n, every, rng, acol, fz, d);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(h, d, 16, cudaMemcpyDeviceToHost, g->stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(g->stream);
    rfx_gpu_free(g, d);
    *pays = (double)h[1] < (1 - LFTJ_NARROW_GAIN) * (double)h[0];
    return e;
}

// Launches the pair count of the last level w (participant a holds the shared node) over
// n elements of rng: a frontier's, or with fz level w - 1's candidates. Adds to *total.
static cudaError_t lftj_pair_launch(lftj_run *R, int w, int a, size_t n, const uint32_t *rng, const lftj_fused *fz,
                                    unsigned long long *total)
{
    rfx_gpu *g = R->g;
    const lftj_level &L = R->levels[w];
    // chunks of 256 elements, unless that leaves fewer than 32 chunks a multiprocessor
    // (R-MAT 22 boxed at 25% on an H100: the count of a box took 3.4x its share of the
    // whole join with one wave of 256-element chunks, the slowest chunk its length)
    unsigned chunk = LFTJ_CHUNK;
    while (chunk > 32 && n / chunk < (size_t)g->sms * 32)
        chunk /= 2;
    size_t blocks = (n + chunk - 1) / chunk;
    const unsigned grid = (unsigned)(blocks < 65536 ? blocks : 65536);
    int sa = L.src[a], ca = L.col[a], sb = L.src[1 - a], cb = L.col[1 - a];
    // B's probed column copied out of its rows (where memory allows): read in place,
    // every other word of a two-column relation came along, and the count of R-MAT 24
    // read 2 TB/s from DRAM (ncu: 62% of its bandwidth, 6% L2 hits). The last word past
    // the padded column says whether B repeats a row or holds the
    // empty mark; where neither and cb is B's last column, a node's values are distinct
    // and never the mark (no check of either a value).
    // A TrieArray source's last level is that column already (padded, distinct; a source
    // of two columns takes part in the last level by its second).
    uint32_t *bcol = NULL, odd = 1;
    const size_t bwords = (R->S.rows[sb] + 3) / 4 * 4;
    cudaError_t e = cudaSuccess;
    const bool in_trie = R->trie[sb] && cb == 1;
    if (in_trie) {
        bcol = (uint32_t *)R->S.data[sb];
        odd = R->trie[sb]->last_has_max ? 2 : 0;
    } else if (R->S.rows[sb] && (bcol = (uint32_t *)rfx_gpu_alloc(g, bwords * 4 + 4))) {
        e = cudaMemsetAsync(bcol + bwords, 0, 4, g->stream);
        if (e == cudaSuccess) {
            k_lftj_column<<<grid_for(bwords), 256, 0, g->stream>>>(R->S.data[sb], R->S.arity[sb], cb, R->S.rows[sb],
                                                                  bcol, bcol + bwords);
            e = cudaGetLastError();
        }
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(&odd, bcol + bwords, 4, cudaMemcpyDeviceToHost, g->stream);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(g->stream);
    }
    // A's column: B's where A's rows are B's or their first ones (a view of the same rows)
    const bool a_in_b = R->S.data[sa] == R->S.data[sb] && R->S.arity[sa] == R->S.arity[sb] && ca == cb &&
                        R->S.rows[sa] <= R->S.rows[sb];
    const uint32_t *acol = bcol && a_in_b ? bcol : NULL;
    lftj_fused none;
    memset(&none, 0, sizeof none);
    const lftj_fused &f = fz ? *fz : none;
    const bool clean = !odd && cb == R->S.arity[sb] - 1;
    bool narrow = false;
    if (e == cudaSuccess)
        e = lftj_narrow_pays(R, sa, ca, sb, cb, n, rng, acol, f, fz != NULL, &narrow);
#define LFTJ_PAIR(own, fused, dist)                                                                                   \
    k_lftj_count_pair<own, fused, dist><<<grid, LFTJ_CHUNK, 0, g->stream>>>(R->S, sa, ca, sb, cb, n, rng, chunk, acol, \
                                                                             bcol, f, narrow, total)
    if (e == cudaSuccess) {
        if (bcol && fz)
            clean ? LFTJ_PAIR(true, true, true) : LFTJ_PAIR(true, true, false);
        else if (bcol)
            clean ? LFTJ_PAIR(true, false, true) : LFTJ_PAIR(true, false, false);
        else if (fz)
            clean ? LFTJ_PAIR(false, true, true) : LFTJ_PAIR(false, true, false);
        else
            clean ? LFTJ_PAIR(false, false, true) : LFTJ_PAIR(false, false, false);
        e = cudaGetLastError();
    }
#undef LFTJ_PAIR
    if (!in_trie)
        rfx_gpu_free(g, bcol);   // stream-ordered: the count queued before still reads it
    return e;
}

// The pair count with the roles swapped (participant a's node the probed one), over the
// frontier regrouped by the other node piece by piece: a regrouped copy of F elements
// takes ~28 F bytes at its peak, and under a cap the join's share of the device holds that
// only for a part of a box's frontier (R-MAT 24 at a 50% cap on an H100: a third of the
// boxes' elements could not be regrouped whole and were counted as they were, at 2.2x the
// time an element of the regrouped ones took). In pieces the runs are shorter (a value's
// elements are spread over the pieces) but the probes are the cheaper ones. Pieces are
// halved until one fits; below LFTJ_REGROUP_LEAST elements a piece is counted unswapped.
#define LFTJ_REGROUP_LEAST 4096
static rfx_status lftj_count_regrouped(lftj_run *R, int v, const lftj_frontier &cur, int a,
                                       unsigned long long *d_total, size_t *pieces)
{
    rfx_gpu *g = R->g;
    const int col = 2 * R->levels[v].src[1 - a];
    const size_t stride = (size_t)R->nsrc * 2;
    size_t piece = cur.F < R->regroup_piece ? cur.F : (size_t)R->regroup_piece;
    *pieces = 0;
    rfx_status st = RFX_OK;
    for (size_t f0 = 0; f0 < cur.F && st == RFX_OK;) {
        const size_t n = cur.F - f0 < piece ? cur.F - f0 : piece;
        const uint32_t *rng = cur.rng + f0 * stride;
        uint32_t *regrouped = NULL;
        st = lftj_regroup(g, rng, n, R->nsrc, col, &regrouped);
        if (st != RFX_OK)
            break;
        if (!regrouped && n > LFTJ_REGROUP_LEAST) {
            g->err[0] = 0;   // the allocation that failed said why
            piece = (n + 1) / 2;
            continue;
        }
        st = lftj_add_count(R, d_total, false, "k_lftj_count_pair", [&] {
            return lftj_pair_launch(R, v, regrouped ? 1 - a : a, n, regrouped ? regrouped : rng, NULL, d_total);
        });
        rfx_gpu_free(g, regrouped);
        f0 += n;
        ++*pieces;
    }
    return st;
}

// Counts the last variable of frontier cur (never materialised).
static rfx_status lftj_count_last(lftj_run *R, int v, const lftj_frontier &cur)
{
    rfx_gpu *g = R->g;
    const lftj_level &L = R->levels[v];
    unsigned long long *d_total = (unsigned long long *)rfx_gpu_alloc(g, 24);   // the roles' costs, then the count
    if (!d_total)
        return RFX_ERR_NOMEM;
    bool pair = L.np == 2 && R->pair_a[v] >= 0 && cur.F <= UINT32_MAX, swap = false;
    int a = 0;
    size_t pieces = 0;
    rfx_status st = pair ? lftj_pair_roles(R, v, cur, d_total, &a, &swap) : RFX_OK;
    if (st == RFX_OK && swap)
        st = lftj_count_regrouped(R, v, cur, a, d_total, &pieces);
    else if (st == RFX_OK)
        st = lftj_add_count(R, d_total, !pair, pair ? "k_lftj_count_pair" : "k_lftj_count_last", [&] {
            if (pair)
                return lftj_pair_launch(R, v, a, cur.F, cur.rng, NULL, d_total);
            size_t blocks = (cur.F + 255) / 256;   // a lane an element
            k_lftj_count_last<<<(unsigned)(blocks < 65536 ? blocks : 65536), 256, 0, g->stream>>>(
                R->S, L, cur.F, cur.rng, d_total, g->d_words + 3);
            return cudaGetLastError();
        });
    if (R->timing && pieces > 1)
        fprintf(stderr, "lftj pair count regrouped in %zu pieces\n", pieces);
    rfx_gpu_free(g, d_total);
    return st;
}

// Whether level v and the last level w = v + 1 can be counted in one pass (lftj_fused):
// counting; w a pair count whose shared node's source (A) takes no part in v and whose
// other (B) does, at its previous column (so B's node at w is its node at v narrowed to
// v's value); no memo, since a box's short runs want the frontier regrouped
// (lftj_pair_roles), which needs it materialised. *kb: B's participant index in v.
static bool lftj_fusable(const lftj_run *R, int v, size_t F, int *kb)
{
    int w = v + 1;
    if (!R->counting || R->memo || w != R->nvars - 1 || F > UINT32_MAX || R->unfused)
        return false;
    const lftj_level &L = R->levels[v], &W = R->levels[w];
    if (W.np != 2 || R->pair_a[w] < 0)
        return false;
    int sa = W.src[R->pair_a[w]], sb = W.src[1 - R->pair_a[w]], cb = W.col[1 - R->pair_a[w]];
    *kb = -1;
    for (int k = 0; k < L.np; k++) {
        if (L.src[k] == sa)
            return false;
        if (L.src[k] == sb && L.col[k] == cb - 1)
            *kb = k;
    }
    return *kb >= 0;
}

// Counts levels v and v + 1 (the last) in one pass over level v's C candidates (drv, off
// as lftj_expand made them for the frontier cur).
static rfx_status lftj_count_fused(lftj_run *R, int v, const lftj_frontier &cur, int kb, const uint8_t *drv,
                                   const uint64_t *off, uint64_t C)
{
    rfx_gpu *g = R->g;
    unsigned long long *d_total = (unsigned long long *)rfx_gpu_alloc(g, 8);
    if (!d_total)
        return RFX_ERR_NOMEM;
    lftj_fused fz;
    memset(&fz, 0, sizeof fz);
    fz.L = R->levels[v];
    fz.drv = drv;
    fz.off = off;
    fz.F = cur.F;
    fz.kb = kb;
    rfx_status st = lftj_add_count(R, d_total, false, "k_lftj_count_pair (fused)", [&] {
        return lftj_pair_launch(R, v + 1, R->pair_a[v + 1], (size_t)C, cur.rng, &fz, d_total);
    });
    rfx_gpu_free(g, d_total);
    return st;
}

// Whether level v's C candidates all go into the next frontier unchecked: the emit tests
// each and gives a non-match empty nodes (it binds nothing further), so the check's pass,
// its scan and a host round trip are saved for a frontier of C elements instead of the
// survivors. For small levels only (C at most RFX_LFTJ_UNCHECKED_ROWS, by default
// LFTJ_UNCHECKED_ROWS; 0 turns it off), never the last, nor one before a last level
// counted in pairs (its runs of shared nodes are not made for empty elements), nor a box's
// (its memo keeps level 0 as checked).
#ifndef LFTJ_UNCHECKED_ROWS
#define LFTJ_UNCHECKED_ROWS (1u << 20)
#endif
// lftj_unchecked but for the number of candidates (level 0's, lftj_root_unchecked, need
// no check at all).
static bool lftj_may_skip_check(const lftj_run *R, int v)
{
    const int w = v + 1;
    return w < R->nvars && !R->memo && R->unchecked_rows &&
           !(w == R->nvars - 1 && R->counting && R->levels[w].np == 2 && R->pair_a[w] >= 0);
}

static bool lftj_unchecked(const lftj_run *R, int v, uint64_t C)
{
    return lftj_may_skip_check(R, v) && C && C <= R->unchecked_rows;
}

// Whether k_lftj_emit builds its new ranges (nrng) in shared memory: within the 48 KB a
// block may have without asking (up to 23 sources).
static bool lftj_staged(const lftj_run *R, const uint32_t *nrng)
{
    return nrng && LFTJ_EMIT_SMEM(R->nsrc) <= 48 * 1024;
}

// Whether the emit of level v also finds level v + 1's drivers and candidate counts
// (k_lftj_emit's ncnt): not when that level is the last and counted (lftj_count_last
// reads the ranges itself), nor under a memo, whose level-0 frontier other boxes reuse
// with other root ranges, so it must not come narrowed.
static bool lftj_precount(const lftj_run *R, int v)
{
    const int w = v + 1;
    return !R->memo && w < R->nvars && !(w == R->nvars - 1 && R->counting);
}

// next's drv and cnt for lftj_precount (left NULL when memory is short: the next level
// then counts them itself).
static void lftj_precount_alloc(lftj_run *R, int v, lftj_frontier *next)
{
    if (lftj_precount(R, v) && next->F) {
        next->drv = (uint8_t *)rfx_gpu_alloc(R->g, next->F);
        next->cnt = (uint64_t *)rfx_gpu_alloc(R->g, next->F * 8);
        if (!next->drv || !next->cnt) {
            rfx_gpu_free(R->g, next->drv);
            rfx_gpu_free(R->g, next->cnt);
            next->drv = NULL;
            next->cnt = NULL;
        }
    }
}

// For an emit of nc candidates (one launch) into next, precounted: the scan of next's
// counts by the emit (lftj_scan_out), next->off and the look-back scratch allocated and
// zeroed. scan->off stays NULL (the next level scans for itself) when next is not
// precounted or memory is short.
static rfx_status lftj_scan_begin(lftj_run *R, lftj_frontier *next, size_t nc, unsigned grid, lftj_scan_out *scan)
{
    rfx_gpu *g = R->g;
    *scan = lftj_scan_out{};   // no scan
    if (!next->cnt || !nc)
        return RFX_OK;
    const size_t ntiles = (nc + 255) / 256;
    next->off = (uint64_t *)rfx_gpu_alloc(g, next->F * 8);
    lb_args lb = {NULL, NULL, 0, NULL, (unsigned)(ntiles + grid - 1)};   // a block's last ticket is past the tiles
    lb_arm(g, &lb, LFTJ_SCAN_WORD);
    rfx_status st = next->off ? tagged_words(g, ntiles, &lb.status, &lb.counter, &lb.tag) : RFX_ERR_NOMEM;
    if (st != RFX_OK) {
        rfx_gpu_free(g, next->off);
        next->off = NULL;
        return st == RFX_ERR_NOMEM ? RFX_OK : st;
    }
    *scan = lftj_scan_out{next->off, lb, ntiles};
    return RFX_OK;
}

// After the emit's launch (e: the error of `call`): takes the total it leaves in host
// memory as next->C, as soon as it is there (lb_wait).
static rfx_status lftj_scan_end(lftj_run *R, lftj_frontier *next, const lftj_scan_out &scan, cudaError_t e,
                                const char *call)
{
    rfx_gpu *g = R->g;
    if (e != cudaSuccess) {
        if (scan.off)
            g->tagged_clean = false;   // the counter and the words may be left half-set
        return fail(g, e, call, __FILE__, __LINE__);
    }
    unsigned long long c = 0;
    rfx_status st = scan.off ? lb_wait(g, scan.lb, LFTJ_SCAN_WORD, call, &c) : RFX_OK;
    if (scan.off && st == RFX_OK)
        next->C = c;
    return st;
}

// k_lftj_emit over level v's candidates [c0, c0 + nc) into next (flag and pos NULL:
// unchecked; base: the first output of these candidates). scan_it (one launch for all the
// level's candidates): the emit also scans next's counts when next is precounted, and
// this waits for it (lftj_scan_begin, lftj_scan_end).
static rfx_status lftj_emit(lftj_run *R, int v, const lftj_frontier &cur, const uint8_t *drv, const uint64_t *off,
                            uint64_t c0, size_t nc, const uint64_t *flag, const uint64_t *pos, uint64_t base,
                            bool scan_it, lftj_frontier *next)
{
    rfx_gpu *g = R->g;
    lftj_scan_out scan = {};
    const unsigned grid = grid_for(nc);
    rfx_status st = scan_it ? lftj_scan_begin(R, next, nc, grid, &scan) : RFX_OK;
    if (st != RFX_OK)
        return st;
    const bool staged = lftj_staged(R, next->rng);
    const lftj_level &NL = R->levels[v + 1 < R->nvars ? v + 1 : v];   // read only with next->cnt
    k_lftj_emit<<<grid, 256, staged ? LFTJ_EMIT_SMEM(R->nsrc) : 0, g->stream>>>(
        R->S, R->levels[v], cur.F, v, cur.bind, cur.rng, drv, off, c0, nc, flag, pos, base, next->bind, next->rng, NL,
        next->drv, next->cnt, staged, scan);
    return lftj_scan_end(R, next, scan, cudaGetLastError(), flag ? "k_lftj_emit" : "k_lftj_emit (unchecked)");
}

// Every candidate of level v (C of them, counted and scanned in drv and off) into *next
// without a check: the emit gives a non-match empty nodes. *next stays empty (F 0, no
// memory) when the memory for all of them is short; the caller then checks them first.
static rfx_status lftj_emit_unchecked(lftj_run *R, int v, const lftj_frontier &cur, const uint8_t *drv,
                                      const uint64_t *off, uint64_t C, lftj_frontier *next)
{
    rfx_gpu *g = R->g;
    *next = lftj_frontier{0, NULL, NULL};
    lftj_frontier nx = {(size_t)C, (uint32_t *)rfx_gpu_alloc(g, (size_t)C * (size_t)(v + 1) * 4),
                        (uint32_t *)rfx_gpu_alloc(g, (size_t)C * (size_t)R->nsrc * 8)};
    if (!nx.bind || !nx.rng) {
        lftj_frontier_free(g, &nx);
        return RFX_OK;
    }
    lftj_precount_alloc(R, v, &nx);
    rfx_status st = lftj_emit(R, v, cur, drv, off, 0, (size_t)C, NULL, NULL, 0, true, &nx);
    if (st != RFX_OK) {
        lftj_frontier_free(g, &nx);
        return st;
    }
    *next = nx;
    return RFX_OK;
}

// Level 0 without its check, when every participant is column 0 of the same rows (the
// root nodes of e(x, y), e(x, z) in a clique): each of the driver's candidates is then in
// all the others, and their number is known here from the root index's ends, so no count,
// scan or host round trip is needed. Candidates that are no new value (a gap between
// values, a repeated row) stay as elements with empty nodes. *next stays empty (F 0, no
// memory) when this does not apply or memory is short: the general level then runs.
static rfx_status lftj_root_unchecked(lftj_run *R, const lftj_frontier &cur, lftj_frontier *next)
{
    rfx_gpu *g = R->g;
    *next = lftj_frontier{0, NULL, NULL};
    const lftj_level &L = R->levels[0];
    const int s0 = L.src[0];
    if (cur.F != 1 || !lftj_may_skip_check(R, 0))
        return RFX_OK;
    for (int k = 0; k < L.np; k++) {
        const int s = L.src[k];
        if (L.col[k] != 0 || R->S.data[s] != R->S.data[s0] || R->S.rows[s] != R->S.rows[s0] ||
            R->S.arity[s] != R->S.arity[s0])
            return RFX_OK;
    }
    const uint32_t n = R->S.rows[s0];
    unsigned dv = 0;
    uint64_t C = n;
    if (R->S.rptr[s0] && n > 1) {   // as k_lftj_count chooses: the root node is the whole root level
        dv = LFTJ_BY_ENTRY;
        C = R->S.nroot[s0];
    } else if (R->S.first[s0] && n > 1 && R->S.maxv[s0] - R->S.minv[s0] < n - 1) {
        dv = LFTJ_BY_VALUE;
        C = (uint64_t)R->S.maxv[s0] - R->S.minv[s0] + 1;
    }
    uint8_t *drv = (uint8_t *)rfx_gpu_alloc(g, 1);   // the root element: its driver and offset
    uint64_t *off = (uint64_t *)rfx_gpu_alloc(g, 8);
    rfx_status st = RFX_OK;
    if (drv && off) {
        cudaError_t e = cudaMemsetAsync(drv, (int)dv, 1, g->stream);
        if (e == cudaSuccess)
            e = cudaMemsetAsync(off, 0, 8, g->stream);
        st = e != cudaSuccess ? fail(g, e, "cudaMemsetAsync", __FILE__, __LINE__)
                              : lftj_emit_unchecked(R, 0, cur, drv, off, C, next);
    }
    rfx_gpu_free(g, drv);
    rfx_gpu_free(g, off);
    return st;
}

static rfx_status lftj_add_piece(lftj_run *R, rfx_dev_rows *piece)
{
    if (R->npieces == R->piece_cap) {
        int nc = R->piece_cap ? 2 * R->piece_cap : 4;
        rfx_dev_rows *p = (rfx_dev_rows *)realloc(R->pieces, sizeof(rfx_dev_rows) * (size_t)nc);
        if (!p)
            return RFX_ERR_NOMEM;
        R->pieces = p;
        R->piece_cap = nc;
    }
    R->pieces[R->npieces++] = *piece;
    return RFX_OK;
}

// Keeps a copy of level 0's whole frontier in the memo (a speed-up: without memory, not).
static void lftj_memo_keep(lftj_run *R, const lftj_frontier &f)
{
    rfx_gpu *g = R->g;
    rfx_gpu_lftj_memo *m = R->memo;
    size_t bb = f.F * 4, rb = f.F * (size_t)R->nsrc * 8;
    m->bind = f.F ? (uint32_t *)rfx_gpu_alloc(g, bb) : NULL;
    m->rng = f.F ? (uint32_t *)rfx_gpu_alloc(g, rb) : NULL;
    if (f.F && (!m->bind || !m->rng ||
                cudaMemcpyAsync(m->bind, f.bind, bb, cudaMemcpyDeviceToDevice, g->stream) != cudaSuccess ||
                cudaMemcpyAsync(m->rng, f.rng, rb, cudaMemcpyDeviceToDevice, g->stream) != cudaSuccess)) {
        cudaGetLastError();
        lftj_memo_drop_level0(g, m);
        return;
    }
    m->F = f.F;
    m->nsrc = R->nsrc;
    m->valid = true;
}

static rfx_status lftj_expand(lftj_run *R, int v, lftj_frontier cur, bool owned);

// Level 1 onwards from the memo's level 0: a copy, with the root ranges of the sources
// variable 0 does not lead set to this join's slices. Where the copy does not fit beside
// the memo, the memo's own level 0 is taken (the next box with these outer slices joins
// level 0 again) rather than failing the box.
static rfx_status lftj_from_memo(lftj_run *R)
{
    rfx_gpu *g = R->g;
    rfx_gpu_lftj_memo *m = R->memo;
    lftj_frontier f = {m->F, NULL, NULL};
    if (m->F) {
        f.bind = (uint32_t *)rfx_gpu_alloc(g, m->F * 4);
        f.rng = (uint32_t *)rfx_gpu_alloc(g, m->F * (size_t)R->nsrc * 8);
        bool taken = !f.bind || !f.rng;
        if (taken) {
            lftj_frontier_free(g, &f);
            f.bind = m->bind;
            f.rng = m->rng;
            m->bind = m->rng = NULL;
            m->valid = false;
        }
        uint32_t mask = 0;
        for (int s = 0; s < R->nsrc; s++) {
            bool leads = false;
            for (int k = 0; k < R->levels[0].np; k++)
                leads |= R->levels[0].src[k] == s;
            mask |= leads ? 0u : 1u << s;
        }
        cudaError_t e = taken ? cudaSuccess
                              : cudaMemcpyAsync(f.bind, m->bind, m->F * 4, cudaMemcpyDeviceToDevice, g->stream);
        if (e == cudaSuccess && !taken)
            e = cudaMemcpyAsync(f.rng, m->rng, m->F * (size_t)R->nsrc * 8, cudaMemcpyDeviceToDevice, g->stream);
        if (e == cudaSuccess && mask) {
            k_lftj_patch_roots<<<grid_for(m->F), 256, 0, g->stream>>>(f.rng, m->F, R->nsrc, mask, R->S);
            e = cudaGetLastError();
        }
        if (e != cudaSuccess) {
            lftj_frontier_free(g, &f);
            return fail(g, e, "level 0 from the memo", __FILE__, __LINE__);
        }
    }
    return lftj_expand(R, 1, f, true);
}

// Binds variables v.. for the frontier cur (depth v). owned: cur is this call's to free;
// otherwise it is a view into the caller's frontier. When the next frontier does not fit
// in the device memory left, cur is split in halves, each expanded to the end in turn,
// so memory holds one half's subtree at a time ("several rounds").
static rfx_status lftj_expand(lftj_run *R, int v, lftj_frontier cur, bool owned)
{
    rfx_gpu *g = R->g;
    if (cur.F == 0) {
        if (owned)
            lftj_frontier_free(g, &cur);
        return RFX_OK;
    }
    const lftj_level &L = R->levels[v];
    bool last = v == R->nvars - 1;
    size_t F = cur.F;
    rfx_status st = RFX_OK;
    double t0 = R->timing ? lftj_clock(R) : 0;
    if (v == 0 && !last) {
        lftj_frontier next;
        st = lftj_root_unchecked(R, cur, &next);
        if (st == RFX_OK && next.F) {
            if (R->timing)
                fprintf(stderr, "lftj level 0: %zu elements, %zu candidates, all kept (unchecked), %.2f ms\n", F, next.F,
                        (lftj_clock(R) - t0) * 1e3);
            if (owned)
                lftj_frontier_free(g, &cur);
            return lftj_expand(R, 1, next, true);
        }
        if (st != RFX_OK) {
            if (owned)
                lftj_frontier_free(g, &cur);
            return st;
        }
    }
    if (last && R->counting) {
        st = lftj_count_last(R, v, cur);
        if (R->timing)
            fprintf(stderr, "lftj level %d: %zu elements, counted (%s), %.2f ms\n", v, F,
                    L.np == 2 && R->pair_a[v] >= 0 ? "pair" : "warp", (lftj_clock(R) - t0) * 1e3);
        if (owned)
            lftj_frontier_free(g, &cur);
        return st;
    }
    const bool precounted = cur.cnt != NULL, prescanned = cur.off != NULL;   // taken over from the frontier
    uint8_t *drv = precounted ? cur.drv : (uint8_t *)rfx_gpu_alloc(g, F);
    uint64_t *cnt = precounted ? cur.cnt : (uint64_t *)rfx_gpu_alloc(g, F * 8);
    uint64_t *off = prescanned ? cur.off : (uint64_t *)rfx_gpu_alloc(g, F * 8);
    cur.drv = NULL;
    cur.cnt = cur.off = NULL;
    uint64_t *flag = NULL, *pos = NULL;
    uint64_t C = 0, kept = 0;
    size_t round = 0;
    if (!drv || !cnt || !off)
        st = RFX_ERR_NOMEM;
    if (st == RFX_OK && !precounted) {
        k_lftj_count<<<grid_for(F), 256, 0, g->stream>>>(R->S, L, F, R->nsrc, cur.rng, drv, cnt);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            st = fail(g, e, "k_lftj_count", __FILE__, __LINE__);
    }
    if (st == RFX_OK && prescanned)
        C = cur.C;
    else if (st == RFX_OK)
        st = scan_total(g, cnt, off, F, &C);
    rfx_gpu_free(g, cnt);
    int kb;
    if (st == RFX_OK && lftj_fusable(R, v, F, &kb)) {
        st = C ? lftj_count_fused(R, v, cur, kb, drv, off, C) : RFX_OK;
        rfx_gpu_free(g, drv);
        rfx_gpu_free(g, off);
        if (R->timing)
            fprintf(stderr, "lftj levels %d-%d: %zu elements, %llu candidates, counted (pair, fused), %.2f ms\n", v,
                    v + 1, F, (unsigned long long)C, (lftj_clock(R) - t0) * 1e3);
        if (owned)
            lftj_frontier_free(g, &cur);
        return st;
    }
    if (st == RFX_OK && lftj_unchecked(R, v, C)) {
        lftj_frontier next;
        st = lftj_emit_unchecked(R, v, cur, drv, off, C, &next);
        if (st != RFX_OK || next.F) {   // else no memory for every candidate: check them first
            rfx_gpu_free(g, drv);
            rfx_gpu_free(g, off);
            if (owned)
                lftj_frontier_free(g, &cur);
            if (st != RFX_OK)
                return st;
            if (R->timing)
                fprintf(stderr, "lftj level %d: %zu elements, %llu candidates, all kept (unchecked), %.2f ms\n", v, F,
                        (unsigned long long)C, (lftj_clock(R) - t0) * 1e3);
            return lftj_expand(R, v + 1, next, true);
        }
    }
    round = C < LFTJ_ROUND ? (size_t)C : LFTJ_ROUND;
    {   // under a small budget (out of core) the round's 16 bytes a candidate take what is left
        size_t used = rfx_gpu_in_use(g), left = g->budget > used ? (g->budget - used) / 32 : 0;
        left = left < 256 ? 256 : left;
        round = round < left ? round : left;
    }
    if (st == RFX_OK && C) {
        flag = (uint64_t *)rfx_gpu_alloc(g, round * 8);
        pos = (uint64_t *)rfx_gpu_alloc(g, round * 8);
        if (!flag || !pos)
            st = RFX_ERR_NOMEM;
    }
    // count the survivors: that sizes the next frontier, which a single round fills
    // without checking again
    for (uint64_t c0 = 0; c0 < C && st == RFX_OK; c0 += round) {
        size_t nc = (size_t)(C - c0 < round ? C - c0 : round);
        uint64_t k = 0;
        st = lftj_round(g, R->S, L, cur, drv, off, c0, nc, flag, pos, &k);
        kept += k;
    }
    lftj_frontier next = {(size_t)kept, NULL, NULL};
    if (st == RFX_OK && kept) {
        next.bind = (uint32_t *)rfx_gpu_alloc(g, (size_t)kept * (size_t)(v + 1) * 4);
        next.rng = last ? NULL : (uint32_t *)rfx_gpu_alloc(g, (size_t)kept * (size_t)R->nsrc * 8);
        if (!next.bind || (!last && !next.rng)) {
            lftj_frontier_free(g, &next);
            st = RFX_ERR_NOMEM;
        }
    }
    if (st == RFX_ERR_NOMEM && F > 1) {
        // the next frontier does not fit: expand each half of this one on its own
        rfx_gpu_free(g, drv);
        rfx_gpu_free(g, off);
        rfx_gpu_free(g, flag);
        rfx_gpu_free(g, pos);
        size_t h = F / 2;
        lftj_frontier lo = {h, cur.bind, cur.rng},
                      hi = {F - h, cur.bind ? cur.bind + h * (size_t)v : NULL, cur.rng + h * (size_t)R->nsrc * 2};
        st = lftj_expand(R, v, lo, false);
        if (st == RFX_OK)
            st = lftj_expand(R, v, hi, false);
        if (owned)
            lftj_frontier_free(g, &cur);
        return st;
    }
    if (st == RFX_OK)
        lftj_precount_alloc(R, v, &next);
    uint64_t base = 0;
    for (uint64_t c0 = 0; c0 < C && kept && st == RFX_OK; c0 += round) {
        size_t nc = (size_t)(C - c0 < round ? C - c0 : round);
        uint64_t k = 0;
        if (C > round)     // the flags of the last round are still there when there is one
            st = lftj_round(g, R->S, L, cur, drv, off, c0, nc, flag, pos, &k);
        if (st != RFX_OK)
            break;
        st = lftj_emit(R, v, cur, drv, off, c0, nc, flag, pos, base, C <= round, &next);   // one round: it scans
        base += C > round ? k : kept;
    }
    rfx_gpu_free(g, drv);
    rfx_gpu_free(g, off);
    rfx_gpu_free(g, flag);
    rfx_gpu_free(g, pos);
    if (owned)
        lftj_frontier_free(g, &cur);
    if (st != RFX_OK) {
        lftj_frontier_free(g, &next);
        return st;
    }
    if (R->timing)
        fprintf(stderr, "lftj level %d: %zu elements, %llu candidates, %zu kept, %.2f ms\n", v, F,
                (unsigned long long)C, next.F, (lftj_clock(R) - t0) * 1e3);
    if (!last) {
        if (v == 0 && owned && R->memo && !R->memo->valid)
            lftj_memo_keep(R, next);
        return lftj_expand(R, v + 1, next, true);
    }
    if (!next.F)
        return RFX_OK;
    rfx_dev_rows piece;
    rfx_gpu_rows_init(&piece, R->nvars);
    piece.data = next.bind;
    piece.n = piece.cap = next.F;
    st = lftj_add_piece(R, &piece);
    if (st != RFX_OK)
        rfx_gpu_rows_free(g, &piece);
    return st;
}

// Source s read as the two-level TrieArray t: its last level is the data, one word a row.
static void lftj_read_trie(lftj_run *R, int s, const rfx_dev_trie *t, uint32_t *root)
{
    R->trie[s] = t;
    R->S.data[s] = t->val[1];
    R->S.rval[s] = t->val[0];
    R->S.rptr[s] = t->ptr[0];
    R->S.nroot[s] = (uint32_t)t->n[0];
    R->S.rows[s] = (uint32_t)t->n[1];
    R->S.minv[s] = t->first;
    R->S.maxv[s] = t->last;
    root[2 * s + 1] = R->S.rows[s];
}

// The in-core join reads each two-column source as a TrieArray built here on the device
// (rfx_gpu_trie_build): its second column, the last level, is then one word a row, so a
// search or a pair count reads half the bytes, and its values are distinct and padded as
// the pair count reads them (no copy of the column); its root level gives the root index
// and, at the root, the candidates (LFTJ_BY_ENTRY). Sources over the same rows share one;
// root gets each source's new row count (distinct rows). A source stays in rows when
// memory is short (the join reads either form).
// Sources of fewer rows stay rows: a build is several launches and a wait (4-cliques of
// p2p-Gnutella31, 148 K edges, on an H100: the join 0.222 ms with one TrieArray against
// 0.167 as rows). Larger ones gain: a 4-clique's last level reads half the words (R-MAT
// 16 / 18: 51 / 475 ms against 54 / 511 as rows). A triangle count's e(y, z), which leads
// y, is one too (it had stayed rows, its column copied for the pair count): R-MAT 22 / 24
// / 26 counted in 26.6 / 135.7 / 695.3 ms against 28.1 / 141.7 / 719.4 (H100), and the
// 4 bytes a row of that copy are not needed.
#ifndef LFTJ_TRIE_FROM
#define LFTJ_TRIE_FROM (1u << 20)
#endif
static rfx_status lftj_as_tries(lftj_run *R, uint32_t *root)
{
    rfx_gpu *g = R->g;
    const uint32_t *rows_of[LFTJ_MAX_SRC];
    uint32_t nrows[LFTJ_MAX_SRC];
    for (int s = 0; s < R->nsrc; s++) {
        rows_of[s] = R->S.data[s];
        nrows[s] = R->S.rows[s];
    }
    for (int s = 0; s < R->nsrc; s++) {
        if (R->trie[s] || R->S.arity[s] != 2 || R->S.rows[s] == 0 || R->S.rows[s] < R->trie_from)
            continue;
        int same = -1;
        for (int q = 0; q < s && same < 0; q++)
            if (rows_of[q] == rows_of[s] && R->S.arity[q] == 2 && nrows[q] == nrows[s])
                same = q;
        if (same >= 0) {
            if (!R->trie[same])
                continue;
            R->trie[s] = R->trie[same];
        } else {
            rfx_dev_rows in = {(uint32_t *)rows_of[s], nrows[s], nrows[s], 2};
            rfx_status st = rfx_gpu_trie_build(g, &in, &R->tries[s]);
            if (st == RFX_ERR_NOMEM) {
                g->err[0] = 0;
                continue;
            }
            if (st != RFX_OK)
                return st;
            R->trie[s] = &R->tries[s];
        }
        lftj_read_trie(R, s, R->trie[s], root);
    }
    return RFX_OK;
}

// tries: read the two-column sources as TrieArrays (lftj_as_tries). The in-core join
// does; a box's or a device's part does not, as it would build one per part (and a
// whole one of each source it does not slice), where its slices are read in place.
// given (else NULL): per source, a TrieArray of its rows already on the device (or NULL),
// read as lftj_as_tries would read one it built; srcs[s] then only says its arity.
static rfx_status lftj_run_join(rfx_gpu *g, const rfx_dev_rows *const *srcs, const int *colvar, int nsrc, int nvars,
                                rfx_dev_rows *dst, uint64_t *count, rfx_gpu_lftj_memo *memo, bool tries,
                                const rfx_dev_trie *const *given)
{
    if (nsrc < 1 || nsrc > LFTJ_MAX_SRC || nvars < 1 || nvars > 64) {
        snprintf(g->err, sizeof g->err, "leapfrog triejoin of %d sources over %d variables (at most %d and 64)", nsrc,
                 nvars, LFTJ_MAX_SRC);
        return RFX_ERR_LIMIT;
    }
    lftj_run R;
    memset(&R, 0, sizeof R);
    R.g = g;
    R.nsrc = nsrc;
    R.nvars = nvars;
    R.counting = count != NULL;
    R.timing = getenv("RFX_LFTJ_TIMES") != NULL;
    R.unfused = getenv("RFX_LFTJ_UNFUSED") != NULL;
    R.rows_only = getenv("RFX_LFTJ_ROWS") != NULL;
    const char *narrow_env = getenv("RFX_LFTJ_NARROW");
    R.narrow = narrow_env ? atoi(narrow_env) != 0 : -1;
    const char *trie_env = getenv("RFX_LFTJ_TRIE_FROM");
    R.trie_from = trie_env ? strtoull(trie_env, NULL, 10) : LFTJ_TRIE_FROM;
    const char *unchecked_env = getenv("RFX_LFTJ_UNCHECKED_ROWS");
    R.unchecked_rows = unchecked_env ? strtoull(unchecked_env, NULL, 10) : LFTJ_UNCHECKED_ROWS;
    const char *piece_env = getenv("RFX_LFTJ_REGROUP_PIECE");
    R.regroup_piece = piece_env && strtoull(piece_env, NULL, 10) ? strtoull(piece_env, NULL, 10) : UINT64_MAX;
    R.memo = nvars > 1 ? memo : NULL;
    R.S.nsrc = nsrc;
    R.levels = (lftj_level *)calloc((size_t)nvars, sizeof(lftj_level));
    uint32_t *root = (uint32_t *)malloc(sizeof(uint32_t) * 2 * (size_t)nsrc);
    if (!R.levels || !root) {
        free(R.levels);
        free(root);
        return RFX_ERR_NOMEM;
    }
    bool empty = false;
    rfx_status st = RFX_OK;
    for (int s = 0, o = 0; s < nsrc && st == RFX_OK; s++) {
        if (srcs[s]->n >= UINT32_MAX) {
            snprintf(g->err, sizeof g->err, "leapfrog triejoin source of %zu rows (at most 2^32-1)", srcs[s]->n);
            st = RFX_ERR_LIMIT;
            break;
        }
        R.S.data[s] = srcs[s]->data;
        R.S.arity[s] = srcs[s]->arity;
        R.S.rows[s] = (uint32_t)srcs[s]->n;
        root[2 * s] = 0;
        root[2 * s + 1] = (uint32_t)srcs[s]->n;
        if (given && given[s]) {
            if (srcs[s]->arity != 2 || given[s]->levels != 2 || given[s]->n[1] >= UINT32_MAX) {
                snprintf(g->err, sizeof g->err,
                         "leapfrog triejoin: source %d of %d columns given as a TrieArray of %d levels (two of each only)",
                         s, srcs[s]->arity, given[s]->levels);
                st = RFX_ERR_INTERNAL;
                break;
            }
            lftj_read_trie(&R, s, given[s], root);
        }
        empty |= R.S.rows[s] == 0;
        for (int c = 0; c < srcs[s]->arity; c++, o++) {
            lftj_level *L = &R.levels[colvar[o]];
            L->src[L->np] = s;
            L->col[L->np++] = c;
        }
    }
    /* for two participants: the one whose node is fixed by an earlier prefix of the
     * binding (its column's previous variable is earlier), shared by consecutive elements */
    for (int v = 0; v < nvars && st == RFX_OK; v++) {
        R.pair_a[v] = -1;
        if (R.levels[v].np == 0) {
            snprintf(g->err, sizeof g->err, "leapfrog triejoin: variable %d is in no source", v);
            st = RFX_ERR_INTERNAL;
            break;
        }
        if (R.levels[v].np != 2)
            continue;
        int prev[2];
        for (int k = 0; k < 2; k++) {
            int s = R.levels[v].src[k], c = R.levels[v].col[k], o = 0;
            for (int q = 0; q < s; q++)
                o += srcs[q]->arity;
            prev[k] = c > 0 ? colvar[o + c - 1] : -1;
        }
        if (prev[0] != prev[1])
            R.pair_a[v] = prev[0] < prev[1] ? 0 : 1;
    }
    bool owned_index[LFTJ_MAX_SRC] = {false}, small = false;
    if (st == RFX_OK && !empty)
        st = lftj_small_count(&R, colvar, &small);
    if (st == RFX_OK && !empty && !small && tries && !R.rows_only) {
        double t0 = R.timing ? lftj_clock(&R) : 0;
        st = lftj_as_tries(&R, root);
        if (R.timing)
            fprintf(stderr, "lftj TrieArrays: %.2f ms\n", (lftj_clock(&R) - t0) * 1e3);
    }
    if (st == RFX_OK && !empty && !small) {
        double t0 = R.timing ? lftj_clock(&R) : 0;
        bool lead0[LFTJ_MAX_SRC] = {false};
        for (int k = 0; k < R.levels[0].np; k++)
            lead0[R.levels[0].src[k]] = R.levels[0].col[k] == 0;
        st = lftj_index_roots(g, &R.S, owned_index, R.memo, lead0);
        if (R.timing)
            fprintf(stderr, "lftj root index: %.2f ms\n", (lftj_clock(&R) - t0) * 1e3);
    }
    lftj_frontier root_f = {empty ? (size_t)0 : 1, NULL, NULL};
    if (st == RFX_OK && !empty && !small) {
        root_f.rng = (uint32_t *)rfx_gpu_alloc(g, sizeof(uint32_t) * 2 * (size_t)nsrc);
        if (!root_f.rng)
            st = RFX_ERR_NOMEM;
        else {
            cudaError_t e = cudaMemcpyAsync(root_f.rng, root, sizeof(uint32_t) * 2 * (size_t)nsrc,
                                            cudaMemcpyHostToDevice, g->stream);
            if (e != cudaSuccess)
                st = fail(g, e, "cudaMemcpyAsync", __FILE__, __LINE__);
        }
    }
    if (st == RFX_OK && R.memo && R.memo->valid && R.memo->nsrc == nsrc && !empty) {
        lftj_frontier_free(g, &root_f);
        st = lftj_from_memo(&R);
    } else if (st == RFX_OK && !small)
        st = lftj_expand(&R, 0, root_f, true);
    else
        lftj_frontier_free(g, &root_f);
    free(R.levels);
    free(root);
    for (int s = 0; s < nsrc; s++) {
        if (owned_index[s])
            rfx_gpu_free(g, (void *)R.S.first[s]);
        rfx_gpu_trie_free(g, &R.tries[s]);   // stream-ordered: after the join's kernels
    }
    rfx_dev_rows res;
    rfx_gpu_rows_init(&res, nvars);
    if (st == RFX_OK && !R.counting) {
        if (R.npieces == 1)
            res = R.pieces[0];
        else if (R.npieces > 1) {
            // halves were expanded one after the other: their results concatenate in order
            size_t n = 0;
            for (int i = 0; i < R.npieces; i++)
                n += R.pieces[i].n;
            st = rows_alloc(g, &res, nvars, n);
            for (size_t at = 0, i = 0; st == RFX_OK && i < (size_t)R.npieces; i++) {
                cudaError_t e = cudaMemcpyAsync(res.data + at * (size_t)nvars, R.pieces[i].data,
                                                R.pieces[i].n * (size_t)nvars * 4, cudaMemcpyDeviceToDevice, g->stream);
                if (e != cudaSuccess)
                    st = fail(g, e, "cudaMemcpyAsync", __FILE__, __LINE__);
                at += R.pieces[i].n;
            }
        }
    }
    bool adopted = st == RFX_OK && !R.counting && R.npieces == 1;   // res is pieces[0]
    for (int i = 0; i < R.npieces && !adopted; i++)
        rfx_gpu_rows_free(g, &R.pieces[i]);
    free(R.pieces);
    if (st != RFX_OK) {
        rfx_gpu_rows_free(g, &res);   // allocated only when pieces were being joined
        return st;
    }
    if (count) {
        *count = R.total;
        return RFX_OK;
    }
    replace(g, dst, &res);
    return RFX_OK;
}

extern "C" rfx_status rfx_gpu_lftj(rfx_gpu *g, const rfx_dev_rows *const *srcs, const int *colvar, int nsrc, int nvars,
                                   rfx_dev_rows *dst, uint64_t *count)
{
    return lftj_run_join(g, srcs, colvar, nsrc, nvars, dst, count, NULL, true, NULL);
}

extern "C" rfx_status rfx_gpu_lftj_tries(rfx_gpu *g, const rfx_dev_rows *const *srcs, const rfx_dev_trie *const *tries,
                                         const int *colvar, int nsrc, int nvars, rfx_dev_rows *dst, uint64_t *count)
{
    return lftj_run_join(g, srcs, colvar, nsrc, nvars, dst, count, NULL, true, tries);
}

extern "C" rfx_status rfx_gpu_lftj_memo_run(rfx_gpu *g, const rfx_dev_rows *const *srcs, const int *colvar, int nsrc,
                                            int nvars, rfx_dev_rows *dst, uint64_t *count, rfx_gpu_lftj_memo *memo)
{
    return lftj_run_join(g, srcs, colvar, nsrc, nvars, dst, count, memo, false, NULL);
}
