// gpu_lftj_pair.cuh: the count of a level over pairs of sources by shared-memory hash sets, and the root index of a source.
// Part of the GPU triejoin, included by gpu_lftj.cu in order (see gpu_lftj.cuh).

// Counting the last variable with two participants: one of them (A) has a node that
// depends on an earlier prefix of the binding than the other's (B), so consecutive
// frontier elements (sorted by binding) share it: for triangles A = N+(x), B = N+(y). A
// block takes a chunk of elements, loads each run's shared A node into a shared-memory
// hash set once, and its warps walk the runs' B nodes probing the set: one shared-memory
// probe per candidate instead of a binary search in global memory. A nodes too large for
// the set are searched in global memory.
//
// Most probes miss, and a warp waits for its lane with the longest probe sequence, so the
// tables are sparse: at least 2^LFTJ_SPREAD slots a value while that fits (8 slots a value
// and nodes of over 512 values in both tables were the fastest measured, bench_lftj;
// docs/PERFORMANCE.md has the history). Two tables
// alternate, so a run's table is cleared while warps may still probe the previous one:
// two barriers a run. Run boundaries come from a bitmask of the chunk's run starts.
#ifndef LFTJ_SLOTS_BITS
#define LFTJ_SLOTS_BITS 12   // each of the two tables
#endif
#ifndef LFTJ_MINB
#define LFTJ_MINB 6   // blocks a multiprocessor the count's registers allow (6 beat 5, and
                      // beat 8 blocks over tables of half the slots)
#endif
#define LFTJ_SLOTS (1u << LFTJ_SLOTS_BITS)
#ifndef LFTJ_BOTH_FROM
#define LFTJ_BOTH_FROM (LFTJ_SLOTS / 8)   // a node of more values takes both tables (fuller
                                          // tables miss longer: 512 beat 1024 and 2048)
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
#define LFTJ_SHORT_RUN 2   // elements a run must average for the chunk to build tables (2 beat
                           // 1, 4 and 8 on boxed counts)
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
// load; a search for every element cost the count a quarter more). Where vertices are numbered in the orientation's order (renamed by degree
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
// values, search the root level (a search for every slot cost a large graph's index
// about a millisecond).
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
