// gpu_lftj_small.cuh: level 0 kept between joins (the memo), frontiers, the run state, and the count of small inputs a lane a row.
// Part of the GPU triejoin, included by gpu_lftj.cu in order (see gpu_lftj.cuh).

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
    // from the context's tuning (rfx_tuning, base.h):
    bool unfused;              // !lftj_fuse_levels: no lftj_fused count (tests, comparisons)
    bool rows_only;            // lftj_rows: sorted rows read in place, no TrieArrays (comparisons)
    int narrow;                // lftj_narrow: the pair count's narrowing 0 never, 1 always, -1 as a sample says
    uint64_t trie_from;        // lftj_trie_from: the rows a source needs to be read as a TrieArray
    uint64_t unchecked_rows;   // lftj_unchecked_rows: lftj_unchecked's limit
    uint64_t regroup_piece;    // lftj_regroup_piece: the most elements lftj_count_regrouped sorts at once
    rfx_gpu_lftj_memo *memo;   // level 0 kept or reused, or NULL
    rfx_dev_trie tries[LFTJ_MAX_SRC];        // the TrieArrays built (levels 0: none built in the slot)
    const rfx_dev_trie *trie[LFTJ_MAX_SRC];  // the one each source reads, or NULL (rows)
    uint64_t total;            // counting: bindings so far
    rfx_dev_rows *pieces;      // listing: result pieces in order (several when the frontier was split)
    int npieces, piece_cap;
};

// Small joins, counted in one launch. The level-by-level join costs a dozen launches and
// host round trips whatever the input (far more than the microseconds of work a small
// graph holds; docs/PERFORMANCE.md), so small joins of two or three
// variables are counted in one pass instead: a group of G lanes a row (8, 4 or 1: see
// lftj_small_count) of a source p whose first two columns are variables 0 and 1 binds both
// from the row, narrows the other participants' nodes to them (a search of G + 1 parts a
// step for the first row, galloping for the last), and counts the last variable's values common to its nodes, the
// group's lanes taking every G-th value when its driver (the smallest node) has at most
// G * LFTJ_SMALL_LONG, each seeking through the others as its values rise; the longer
// drivers of a warp are counted by the whole warp, one after another (a power-law graph's
// hubs would otherwise hold their warps). Inputs of at most the tuning's lftj_small_rows
// rows a source go this way (0 turns it off): past that the levels win. (A depth-first
// lane a row for four variables counted 4-cliques several times slower than the levels:
// the lanes' work differs by the square of a node, and a small graph gives too few warps
// for that much work a row. See docs/PERFORMANCE.md.)
#define LFTJ_SMALL_SRC 8
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
// half the GPU's lanes: a small graph's count was that chain.
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
    const size_t limit = R->g->tune->lftj_small_rows;
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
    // group repeats its searches in every lane, which a full GPU pays for; two lanes never
    // won where measured). The tuning's lftj_small_group (1, 2, 4 or 8) sets it.
    int G = g->tune->lftj_small_group;
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
