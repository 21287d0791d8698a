// gpu_pairs.cuh: a relation's triangles counted out of core by parts of its vertices
// (rfx_gpu_triangles_parts). Included by gpu_lftj.cu after gpu_boxed.cuh.
//
// The count of e(x,y), e(y,z), e(x,z) is a sum over e's rows (x, y) of |N+(x) ∩ N+(y)|
// (N+(v): the second column of v's rows), so any partition of the rows (x, y) gives the
// count as a sum of joins, each over its share of the rows and the N+ lists they reach.
// The rows (sorted, on the host) are cut into chunks of whole first-column runs; runs of
// consecutive chunks are the parts. A part is held on the device as one TrieArray, T_b
// (N+(x) for its x, ~4 bytes a row), built chunk by chunk; every chunk whose first-column
// range receives some of the part's rows as y is then streamed past it as a TrieArray of
// its own (N+(y)). Box (part b, chunk a) is the leapfrog triejoin in variable order y, x, z
// (the in-core count's order on degree-oriented graphs) over the part's rows with y in
// chunk a, selected and reversed on the device, T_a and T_b: nothing is rebuilt per box
// but the box's own rows, so boxes join at about the in-core rate (bench/tri_pairs).
// A part's own chunks are joined as they arrive, over the part's rows built so far (the
// rows of a degree-oriented relation go up in id, so that is all of them); rows from the
// part's later chunks into an earlier one are joined when that chunk comes again.
// Copies run on a stream of their own into two slots, the next chunk's while this one
// joins, issued by a copier thread. Rows the out-of-core layer registered as they landed on
// the host are copied as they are; others the copier pins block by block between copies
// (cudaHostRegister of R-MAT 24's 2 GB takes ~45 ms, and every CUDA call of the process
// waits while it runs: on the join's critical path, which is why that layer registers a
// triejoin's inputs before it); its blocks are unpinned once no copy is left to read them:
// those the last part's items do not read while that part joins, the rest at the end. Two lanes (host
// threads, each with a context of its own on the same pool) take the items as their copies
// land, so that one's waits and small launches overlap the other's kernels. Where the plan
// streams chunks past many parts (small caps), they cross as TrieArrays instead, about half
// the bytes: the host rows are made a TrieArray once (pairs_host_trie_build, registered),
// a chunk's copy is its slice of each level, and its device TrieArray is taken from the slot
// as it lies (pairs_slot_trie).
#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

#define PAIRS_TILE_THREADS 256
#define PAIRS_TILE_ITEMS 8
#define PAIRS_TILE (PAIRS_TILE_THREADS * PAIRS_TILE_ITEMS)
#define PAIRS_MAX_CHUNKS 3072   // the histogram's chunk bounds and counts in shared memory

__device__ __forceinline__ bool pairs_in(uint32_t y, uint32_t ylo, uint32_t ylast)
{
    return y >= ylo && y <= ylast;
}

// cnt[t] = the values of tile t of val1[i0, i1) in [ylo, ylast]; cnt[ntiles] = 0 (the scan's end).
__global__ void __launch_bounds__(PAIRS_TILE_THREADS) k_pairs_tile_counts(const uint32_t *val1, size_t i0, size_t i1,
                                                                         uint32_t ylo, uint32_t ylast,
                                                                         unsigned long long *cnt, size_t ntiles)
{
    __shared__ unsigned warp_sum[PAIRS_TILE_THREADS / 32];
    const size_t base = i0 + blockIdx.x * (size_t)PAIRS_TILE;
    unsigned c = 0;
#pragma unroll
    for (int k = 0; k < PAIRS_TILE_ITEMS; k++) {
        size_t i = base + k * PAIRS_TILE_THREADS + threadIdx.x;
        c += i < i1 && pairs_in(val1[i], ylo, ylast);
    }
    for (int d = 16; d; d >>= 1)
        c += __shfl_xor_sync(0xffffffffu, c, d);
    if ((threadIdx.x & 31) == 0)
        warp_sum[threadIdx.x / 32] = c;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned s = 0;
        for (int w = 0; w < PAIRS_TILE_THREADS / 32; w++)
            s += warp_sum[w];
        cnt[blockIdx.x] = s;
        if (blockIdx.x == 0)
            cnt[ntiles] = 0;
    }
}

// out[w] = off[min(w * step, ntiles)] for w <= nwin: the selected values before each window.
__global__ void k_pairs_samples(const unsigned long long *off, size_t ntiles, size_t step, size_t nwin,
                                unsigned long long *out)
{
    GRID_STRIDE(w, nwin + 1) out[w] = off[w * step < ntiles ? w * step : ntiles];
}

// tile_root[t] = the root whose run holds value t * PAIRS_TILE of the part, or its last
// root from its end on, for t in [t0, t1): the roots of any value range lie between two of
// these, so a box's selection looks its values' roots up in a window without a search of
// all the part's roots first (a block's ~21 dependent loads had set the selection's time).
__global__ void k_pairs_tile_roots(const uint32_t *ptr0, size_t n0, size_t n1, size_t t0, size_t t1,
                                   uint32_t *tile_root)
{
    GRID_STRIDE(k, t1 - t0)
    {
        const size_t i = (t0 + k) * (size_t)PAIRS_TILE;
        tile_root[t0 + k] = (uint32_t)(i < n1 ? box_root_of(ptr0, 0, n0, i) : n0 - 1);
    }
}

// Tiles [t0, t0 + gridDim.x) of val1[i0, i1): each selected value i (y in [ylo, ylast]) as the
// row (y, x), x its root's value, at off[t] - base + its rank in the tile, in value order.
// Each thread reads a run of PAIRS_TILE_ITEMS consecutive values, so one scan of the
// threads' counts places every selected value (a scan per item, two barriers each, cost a
// third more); a tile with
// nothing selected returns before reading its values.
__global__ void __launch_bounds__(PAIRS_TILE_THREADS) k_pairs_tile_rows(const uint32_t *val0, const uint32_t *ptr0,
                                                                       size_t n0, const uint32_t *tile_root,
                                                                       const uint32_t *val1, size_t i0,
                                                                       size_t i1, size_t t0, uint32_t ylo,
                                                                       uint32_t ylast,
                                                                       const unsigned long long *off,
                                                                       unsigned long long base, uint2 *out)
{
    __shared__ size_t win[2];
    __shared__ unsigned warp_sum[PAIRS_TILE_THREADS / 32];
    const size_t t = t0 + blockIdx.x, start = i0 + t * PAIRS_TILE;
    if (off[t + 1] == off[t])
        return;   // the whole block: nothing of this tile is selected
    const size_t end = start + PAIRS_TILE < i1 ? start + PAIRS_TILE : i1;
    if (threadIdx.x < 2) {   // the roots of the part's tiles holding start and following end - 1
        const size_t r = tile_root[threadIdx.x ? (end - 1) / PAIRS_TILE + 1 : start / PAIRS_TILE];
        win[threadIdx.x] = r < n0 ? r : n0 - 1;   // the next piece may be appending past n0
    }
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x / 32;
    const size_t first = start + (size_t)threadIdx.x * PAIRS_TILE_ITEMS;
    uint32_t y[PAIRS_TILE_ITEMS];
    if ((uintptr_t)(val1 + first) % 16 == 0 && first + PAIRS_TILE_ITEMS <= end) {   // aligned, whole
#pragma unroll
        for (int k = 0; k < PAIRS_TILE_ITEMS; k += 4) {
            const uint4 q = *(const uint4 *)(val1 + first + k);
            y[k] = q.x;
            y[k + 1] = q.y;
            y[k + 2] = q.z;
            y[k + 3] = q.w;
        }
    } else {
#pragma unroll
        for (int k = 0; k < PAIRS_TILE_ITEMS; k++)
            y[k] = first + k < end ? val1[first + k] : 0;
    }
    unsigned sel = 0;
#pragma unroll
    for (int k = 0; k < PAIRS_TILE_ITEMS; k++)
        sel |= (unsigned)(first + k < end && pairs_in(y[k], ylo, ylast)) << k;
    const unsigned c = __popc(sel);
    unsigned incl = c;
    for (int d = 1; d < 32; d <<= 1) {
        const unsigned v = __shfl_up_sync(0xffffffffu, incl, d);
        incl += lane >= (unsigned)d ? v : 0;
    }
    if (lane == 31)
        warp_sum[warp] = incl;
    __syncthreads();
    if (!sel)
        return;
    unsigned before = incl - c;
    for (unsigned w = 0; w < warp; w++)
        before += warp_sum[w];
    unsigned long long at = off[t] - base + before;
    const size_t hi = win[1] + 1;
    size_t r = SIZE_MAX;
#pragma unroll
    for (int k = 0; k < PAIRS_TILE_ITEMS; k++) {
        if (!(sel >> k & 1))
            continue;
        const size_t i = first + k;
        if (r == SIZE_MAX)
            r = box_root_of(ptr0, win[0], hi, i);
        else   // a later value of the same run of values: its root is the same or a few on
            while (r + 1 < hi && ptr0[r + 1] <= i)
                r++;
        out[at++] = make_uint2(y[k], val0[r]);
    }
}

// dst[i] = src[i] + add (a piece's ptr entries moved to where its values go in the part).
__global__ void k_pairs_shift(const uint32_t *src, size_t n, uint32_t add, uint32_t *dst)
{
    GRID_STRIDE(i, n) dst[i] = src[i] + add;
}

// The end of the part's TrieArray so far: ptr0[n0] = n1 and zeros up to whole quads after
// both levels' values (the join reads values four at a time).
__global__ void k_pairs_ends(uint32_t *val0, uint32_t *ptr0, size_t n0, uint32_t *val1, size_t n1)
{
    if (threadIdx.x == 0)
        ptr0[n0] = (uint32_t)n1;
    if (threadIdx.x >= 1 && threadIdx.x < 4 && n0 + threadIdx.x - 1 < (n0 + 3) / 4 * 4)
        val0[n0 + threadIdx.x - 1] = 0;
    if (threadIdx.x >= 4 && threadIdx.x < 7 && n1 + threadIdx.x - 4 < (n1 + 3) / 4 * 4)
        val1[n1 + threadIdx.x - 4] = 0;
}

// Per chunk a, the part's values y in chunk a's range [lo[a], last[a]] (all[a]); for a
// chunk of the part itself (a - a0 in [0, np)), those whose x is in a later piece of the
// part (later[a - a0]; piece p holds values [voff[p], voff[p + 1])). bounds: m values lo,
// then m values last.
__global__ void k_pairs_chunk_hist(const uint32_t *val1, size_t n1, const uint32_t *bounds, int m, const uint32_t *voff,
                                   int np, int a0, unsigned long long *all, unsigned long long *later)
{
    extern __shared__ uint32_t sh[];
    uint32_t *s_lo = sh, *s_last = sh + m, *s_cnt = sh + 2 * m;
    for (int a = threadIdx.x; a < m; a += blockDim.x) {
        s_lo[a] = bounds[a];
        s_last[a] = bounds[m + a];
        s_cnt[a] = 0;
    }
    __syncthreads();
    GRID_STRIDE(i, n1)
    {
        const uint32_t y = val1[i];
        const int a = (int)partition_point(0, (size_t)m, [=](size_t k) { return s_lo[k] <= y; }) - 1;
        if (a < 0 || y > s_last[a])
            continue;   // no row is led by y: no triangle has it as y
        atomicAdd(&s_cnt[a], 1u);
        if (a >= a0 && a < a0 + np) {
            const int p = (int)partition_point(1, (size_t)np, [=](size_t k) { return voff[k] <= i; }) - 1;
            if (p > a - a0)
                atomicAdd(&later[a - a0], 1ull);
        }
    }
    __syncthreads();
    for (int a = threadIdx.x; a < m; a += blockDim.x)
        if (s_cnt[a])
            atomicAdd(&all[a], (unsigned long long)s_cnt[a]);
}

// Blocks pinned: 16 MB first (the first copy waits for it), each twice the last up to
// 64 MB. The copier thread registers them in order whenever it has no copy to issue:
// a cudaMemcpyAsync call waits while another thread registers memory (R-MAT 24's 2 GB
// take ~45 ms to register, and a copier behind a pinning thread started its first copy
// ~40 ms late), and a block's registration (~1.5 ms at 64 MB) is then only as long as
// the two slots' queued copies hide.
#define PAIRS_PIN_FIRST ((size_t)16 << 20)
#define PAIRS_PIN_MOST ((size_t)64 << 20)

typedef struct pairs_pins {
    char *base;
    size_t bytes;
    std::vector<size_t> cut;          // block k: bytes [cut[k], cut[k + 1]) from base, page-aligned inside
    std::vector<char> pinned;         // block k registered (else its copies are from pageable memory)
    std::atomic<size_t> ready;        // blocks done (all once the copier stops)
    std::atomic<int> registered;      // blocks pinned
    bool theirs;                      // registered by their owner: nothing to pin or unpin
    std::thread early;                // unpinning blocks no copy will read
} pairs_pins;

// The next block registered (by the copier).
static void pairs_pin_next(pairs_pins *p)
{
    const size_t k = p->ready.load();
    const bool ok = rfx_gpu_host_register(p->base + p->cut[k], p->cut[k + 1] - p->cut[k]);
    p->pinned[k] = ok;
    p->registered += ok;
    p->ready.store(k + 1);
}

// Blocks of the rows to pin; rows registered already (the out-of-core layer registers an
// input a triejoin streams as it lands on the host) are one block, ready, not ours to unpin.
static bool pairs_pins_start(pairs_pins *p, const rfx_rows *e)
{
    p->base = (char *)e->data;
    p->bytes = e->n * 8;
    const uintptr_t page = 4096, b = (uintptr_t)p->base;
    try {
        if ((p->theirs = rfx_gpu_host_registered(p->base, p->bytes))) {
            p->cut = {0, p->bytes};
            p->pinned.assign(1, 0);
            p->ready.store(1);
            return true;
        }
        for (size_t at = 0, block = PAIRS_PIN_FIRST; at < p->bytes;) {
            p->cut.push_back(at);
            size_t next = (size_t)((b + at + block + page - 1) / page * page - b);
            at = next < p->bytes ? next : p->bytes;
            block = block < PAIRS_PIN_MOST ? 2 * block : block;
        }
        p->cut.push_back(p->bytes);
        p->pinned.assign(p->cut.size() - 1, 0);
    } catch (...) {
        p->cut.clear();
        return false;
    }
    return true;
}

static void pairs_unpin_blocks(pairs_pins *p, std::vector<char> drop)
{
    while (p->ready.load() < p->pinned.size())   // the copier has let go of pinned[]
        std::this_thread::yield();
    for (size_t k = 0; k < drop.size(); k++)
        if (drop[k] && p->pinned[k]) {
            rfx_gpu_host_unregister(p->base + p->cut[k]);
            p->pinned[k] = 0;
        }
}

static void pairs_pins_end(pairs_pins *p)
{
    p->ready.store(p->pinned.size());   // the copier has stopped
    if (p->early.joinable())
        p->early.join();
    for (size_t k = 0; k < p->pinned.size(); k++)
        if (p->pinned[k])
            rfx_gpu_host_unregister(p->base + p->cut[k]);
}

typedef struct pairs_chunk {
    size_t r0, r1;        // rows [r0, r1) of the host relation (sent as a TrieArray: of its val1), whole first-column runs
    uint32_t ylo, ylast;  // the first and last value leading its rows: a box's y (no other y has N+(y))
    size_t roots;         // at most this many distinct first-column values (sent as a TrieArray: so many)
    size_t k0;            // sent as a TrieArray: its roots are the host TrieArray's [k0, k0 + roots)
} pairs_chunk;

// The host rows as a TrieArray (lftj/host_trie.c), registered, so that a chunk crosses
// the link as ~4 bytes a row and 8 a vertex instead of 8 a row.
typedef struct pairs_host_trie {
    rfx_lftj_trie t;
    bool reg[3];
} pairs_host_trie;

typedef struct pairs_item {
    int chunk;
    int part;             // the part held while it joins
    bool piece;           // a chunk of that part, or one streamed past it
    size_t i0;            // streamed: the part's values from i0 on are the box's x side
    size_t rows;          // streamed: the box's rows (x, y), as the histogram counted them
} pairs_item;

typedef struct pairs_span {
    const char *what;
    int lane;
    size_t box;
    cudaEvent_t e0, e1;
} pairs_span;

struct pairs_run;

// A lane joins items from a host thread and context of its own (lane 0 the caller's, lane
// 1 its sibling on the same device and pool), so that the device has one lane's kernels
// to run while the other waits for a size (a TrieArray's roots, a level's frontier, the
// count), launches small kernels or waits for its copy.
typedef struct pairs_lane {
    struct pairs_run *P;
    rfx_gpu *g;
    int id;
    cudaEvent_t done;            // recorded after each of its items
    uint64_t count;
    size_t boxes;
    std::vector<pairs_span> sp;
} pairs_lane;

typedef struct pairs_run {
    rfx_gpu *g;
    const rfx_rows *e;
    std::vector<pairs_chunk> chunks;
    std::vector<int> part_end;    // part b: chunks [part_end[b - 1], part_end[b])
    size_t slot_rows, box_rows;   // a slot's capacity; the most rows a box reverses at once (a lane)
    uint32_t *d_bounds;           // every chunk's ylo, then every chunk's ylast (the histogram's)
    cudaStream_t copy;
    cudaEvent_t copied[2], used[2];
    cudaEvent_t tb_ready;         // after the last append to the part's TrieArray
    uint2 *slot[2];
    // the part held: its TrieArray so far (room for the largest part) and where each of
    // its pieces' values start
    rfx_dev_trie tb;
    size_t tb_cap1, tb_cap0;
    uint32_t *tile_root;          // k_pairs_tile_roots' of the part so far
    std::vector<uint32_t> voff;
    size_t copied_bytes;
    bool spans;                   // trace spans
    std::vector<pairs_span> sp_copy;
    pairs_pins pins;
    int nlanes;
    pairs_lane lane[2];
    // Between the lanes and the copier thread (the copies are issued by a thread of their
    // own: a cudaMemcpyAsync call could hold the issuing thread while blocks were being
    // pinned, ~50 ms at R-MAT 24's 25% cap), under mu: the items known so far (`planned`
    // once no more will come), whose copies are issued, whose slots are released (the
    // chunk's TrieArray built), how many are taken by a lane and how many joined; the
    // first failure and whose it is (its message in that lane's context, the copier's in
    // g's).
    std::thread copier;
    std::mutex mu;
    std::condition_variable cv;
    std::vector<pairs_item> items;
    std::vector<char> issued, released;
    size_t taken, completed;
    size_t tb_items;              // the items up to the last piece appended to the part's TrieArray
    bool planned, quit, failed;
    bool early_first;             // a part's first piece joined before the last part's boxes end (pairs_early=0: not)
    bool by_trie;                 // chunks sent as TrieArrays from trie
    const rfx_lftj_trie *trie;    // ht's, or the caller's (kept registered by the out-of-core layer)
    pairs_host_trie ht;
    rfx_status st;
    int failed_lane;
} pairs_run;

// Waits under mu for pred; false when a lane or the copier failed instead.
template <typename F> static bool pairs_wait(pairs_run *P, F pred)
{
    std::unique_lock<std::mutex> lock(P->mu);
    P->cv.wait(lock, [&] { return P->failed || pred(); });
    return !P->failed;
}

static void pairs_fail(pairs_run *P, rfx_status st, int who)
{
    {
        std::lock_guard<std::mutex> lock(P->mu);
        if (!P->failed) {
            P->failed = true;
            P->st = st;
            P->failed_lane = who;
        }
    }
    P->cv.notify_all();
}

static rfx_status pairs_span_begin(rfx_gpu *g, bool on, std::vector<pairs_span> &sp, const char *what, int lane,
                                   size_t box, cudaStream_t s)
{
    if (!on)
        return RFX_OK;
    pairs_span x = {what, lane, box, NULL, NULL};
    CK(cudaEventCreate(&x.e0));
    if (cudaEventCreate(&x.e1) != cudaSuccess) {
        cudaEventDestroy(x.e0);
        return fail(g, cudaGetLastError(), "cudaEventCreate", __FILE__, __LINE__);
    }
    sp.push_back(x);
    CK(cudaEventRecord(x.e0, s));
    return RFX_OK;
}

static rfx_status pairs_span_end(rfx_gpu *g, bool on, std::vector<pairs_span> &sp, cudaStream_t s)
{
    if (on)
        CK(cudaEventRecord(sp.back().e1, s));
    return RFX_OK;
}

// Item k's chunk copied into slot k % 2 on the copy stream (its last reader is done: the
// copier issues it once item k - 2 released the slot), its rows pinned first where they
// are not yet: a copy within each pinned block (one across two registrations would be
// staged through pageable memory).
static rfx_status pairs_issue(pairs_run *P, size_t k, int chunk)
{
    rfx_gpu *g = P->g;
    const pairs_chunk &c = P->chunks[chunk];
    const int s = (int)(k & 1);
    pairs_pins *pp = &P->pins;
    if (P->by_trie) {   // its rows' second column, roots and their rows' starts (pairs_slot_trie)
        CK(cudaStreamWaitEvent(P->copy, P->used[s], 0));
        rfx_status st = pairs_span_begin(g, P->spans, P->sp_copy, "copy chunk", 1, k, P->copy);
        if (st != RFX_OK)
            return st;
        const size_t n1 = c.r1 - c.r0, o0 = (n1 + 3) / 4 * 4, o1 = o0 + (c.roots + 3) / 4 * 4;
        uint32_t *dst = (uint32_t *)P->slot[s];
        const rfx_lftj_trie *t = P->trie;
        CK(cudaMemcpyAsync(dst, t->val1.data + c.r0, n1 * 4, cudaMemcpyHostToDevice, P->copy));
        CK(cudaMemcpyAsync(dst + o0, t->val0.data + c.k0, c.roots * 4, cudaMemcpyHostToDevice, P->copy));
        CK(cudaMemcpyAsync(dst + o1, t->ptr0.data + c.k0, (c.roots + 1) * 4, cudaMemcpyHostToDevice, P->copy));
        if ((st = pairs_span_end(g, P->spans, P->sp_copy, P->copy)) != RFX_OK)
            return st;
        CK(cudaEventRecord(P->copied[s], P->copy));
        P->copied_bytes += (n1 + 2 * c.roots + 1) * 4;
        return RFX_OK;
    }
    const size_t b0 = c.r0 * 8, b1 = c.r1 * 8;
    size_t blk = std::upper_bound(pp->cut.begin(), pp->cut.end(), b0) - pp->cut.begin() - 1;
    const size_t last = std::lower_bound(pp->cut.begin(), pp->cut.end(), b1) - pp->cut.begin();
    while (pp->ready.load() < last) {   // the blocks it reads
        pairs_pin_next(pp);
    }
    CK(cudaStreamWaitEvent(P->copy, P->used[s], 0));
    rfx_status st = pairs_span_begin(g, P->spans, P->sp_copy, "copy chunk", 1, k, P->copy);
    if (st != RFX_OK)
        return st;
    for (size_t at = b0; at < b1; blk++) {
        const size_t to = pp->cut[blk + 1] < b1 ? pp->cut[blk + 1] : b1;
        CK(cudaMemcpyAsync((char *)P->slot[s] + (at - b0), pp->base + at, to - at, cudaMemcpyHostToDevice, P->copy));
        at = to;
    }
    st = pairs_span_end(g, P->spans, P->sp_copy, P->copy);
    if (st != RFX_OK)
        return st;
    CK(cudaEventRecord(P->copied[s], P->copy));
    P->copied_bytes += (c.r1 - c.r0) * 8;
    return RFX_OK;
}

// The copier: items in order, each once its slot is released, until told to quit; while
// it has none to issue it pins the next block.
static void pairs_copier_run(pairs_run *P)
{
    cudaSetDevice(P->g->device);
    pairs_pins *pp = &P->pins;
    for (size_t k = 0;;) {
        int chunk = -1;
        {
            std::unique_lock<std::mutex> lock(P->mu);
            auto ready = [&] { return k < P->items.size() && (k < 2 || P->released[k - 2]); };
            if (pp->ready.load() == pp->pinned.size())   // nothing left to pin: wait for the next copy
                P->cv.wait(lock, [&] { return P->quit || P->failed || ready(); });
            if (P->failed || (P->quit && !ready()))
                break;   // quit (every item is copied) or failed
            if (ready())
                chunk = P->items[k].chunk;
        }
        if (chunk < 0) {
            pairs_pin_next(pp);
            continue;
        }
        rfx_status st = pairs_issue(P, k, chunk);
        if (st != RFX_OK) {
            pairs_fail(P, st, -1);
            break;
        }
        {
            std::lock_guard<std::mutex> lock(P->mu);
            P->issued[k++] = 1;
        }
        P->cv.notify_all();
    }
    pp->ready.store(pp->pinned.size());   // no more registrations: unpinning may start
}

static void pairs_copier_stop(pairs_run *P)
{
    if (!P->copier.joinable())
        return;
    {
        std::lock_guard<std::mutex> lock(P->mu);
        P->quit = true;
    }
    P->cv.notify_all();
    P->copier.join();
}

static const int pairs_colvar[] = {0, 1, 0, 2, 1, 2};   // e reversed (y, x), N+(y) (y, z), N+(x) (x, z)

// The rows (x, y) of values tiles [t0, t1) of the part's [i0, i1) with y in chunk ya (n rows
// in all, the first base of the whole range's selection), reversed, sorted by y, made a
// TrieArray and joined with T_a and the part's (tb: as far as this box sees it). Where
// memory runs out the tiles are halved.
static rfx_status pairs_join_tiles(pairs_lane *L, const rfx_dev_trie *ta, const rfx_dev_trie *tb,
                                   const uint32_t *tile_root, const pairs_chunk &ya, size_t i0, size_t i1, size_t t0,
                                   size_t t1, const unsigned long long *d_off, unsigned long long base, size_t n)
{
    rfx_gpu *g = L->g;
    if (!n)
        return RFX_OK;
    uint64_t *rows = (uint64_t *)rfx_gpu_alloc(g, n * 8);
    rfx_status st = rows ? RFX_OK : RFX_ERR_NOMEM;
    if (st == RFX_OK) {
        k_pairs_tile_rows<<<(unsigned)(t1 - t0), PAIRS_TILE_THREADS, 0, g->stream>>>(
            tb->val[0], tb->ptr[0], tb->n[0], tile_root, tb->val[1], i0, i1, t0, ya.ylo, ya.ylast, d_off, base,
            (uint2 *)rows);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            st = fail(g, e, "k_pairs_tile_rows", __FILE__, __LINE__);
    }
    // the rows are in x order: a stable sort over the bits in which the chunk's y differ
    // (those above are the same in all) leaves each y's rows in x order
    reversal rv = {rows, bits_of(ya.ylo ^ ya.ylast) ? bits_of(ya.ylo ^ ya.ylast) : 1};
    rfx_dev_rows rev;
    rfx_gpu_rows_init(&rev, 2);
    if (st == RFX_OK)
        st = reverse_sort(g, &rv, n, &rev);   // takes the rows, freed on failure
    else
        rfx_gpu_free(g, rows);
    rfx_dev_trie tr;
    memset(&tr, 0, sizeof tr);
    if (st == RFX_OK)
        st = rfx_gpu_trie_build(g, &rev, &tr);
    rfx_gpu_rows_free(g, &rev);
    uint64_t c = 0;
    if (st == RFX_OK) {
        const rfx_dev_rows s0 = {tr.val[1], tr.n[1], tr.n[1], 2}, s1 = {ta->val[1], ta->n[1], ta->n[1], 2},
                           s2 = {tb->val[1], tb->n[1], tb->n[1], 2};
        const rfx_dev_rows *s[3] = {&s0, &s1, &s2};
        const rfx_dev_trie *t[3] = {&tr, ta, tb};
        st = rfx_gpu_lftj_tries(g, s, t, pairs_colvar, 3, 3, NULL, &c);
    }
    rfx_gpu_trie_free(g, &tr);
    if (st == RFX_OK) {
        L->count += c;
        L->boxes++;
        return RFX_OK;
    }
    if (st != RFX_ERR_NOMEM || t1 - t0 < 2)
        return st;
    const size_t mid = t0 + (t1 - t0) / 2;
    unsigned long long at = 0;
    g->err[0] = 0;
    if ((st = to_host(g, d_off + mid, &at, 1)) != RFX_OK)   // on the stream that wrote it
        return st;
    st = pairs_join_tiles(L, ta, tb, tile_root, ya, i0, i1, t0, mid, d_off, base, (size_t)(at - base));
    if (st == RFX_OK)
        st = pairs_join_tiles(L, ta, tb, tile_root, ya, i0, i1, mid, t1, d_off, at, n - (size_t)(at - base));
    return st;
}

// Box (the part, chunk ya): the part's values [i0, n1) with y in ya's range, T_a ya's N+.
// Where their number is unknown (or more than box_rows) their count per window of tiles
// decides how many rows each join reverses at once.
static rfx_status pairs_box(pairs_lane *L, const rfx_dev_trie *ta, const rfx_dev_trie *tb, const uint32_t *tile_root,
                            const pairs_chunk &ya, size_t i0, size_t known)
{
    pairs_run *P = L->P;
    rfx_gpu *g = L->g;
    const size_t i1 = tb->n[1];
    if (i1 <= i0)
        return RFX_OK;
    const size_t ntiles = (i1 - i0 + PAIRS_TILE - 1) / PAIRS_TILE;
    const size_t step = P->box_rows / PAIRS_TILE > 0 ? P->box_rows / PAIRS_TILE : 1;   // tiles a window
    const size_t nwin = (ntiles + step - 1) / step;
    unsigned long long *cnt = (unsigned long long *)rfx_gpu_alloc(g, (2 * (ntiles + 1) + nwin + 1) * 8);
    if (!cnt)
        return RFX_ERR_NOMEM;
    unsigned long long *off = cnt + ntiles + 1, *samp = off + ntiles + 1;
    std::vector<unsigned long long> h(nwin + 1);
    k_pairs_tile_counts<<<(unsigned)ntiles, PAIRS_TILE_THREADS, 0, g->stream>>>(tb->val[1], i0, i1, ya.ylo, ya.ylast,
                                                                               cnt, ntiles);
    cudaError_t e = cudaGetLastError();
    rfx_status st = e == cudaSuccess ? exclusive_sum(g, (const uint64_t *)cnt, (uint64_t *)off, ntiles + 1)
                                     : fail(g, e, "k_pairs_tile_counts", __FILE__, __LINE__);
    if (st == RFX_OK && known <= P->box_rows) {   // one join: no window's count is needed
        st = pairs_join_tiles(L, ta, tb, tile_root, ya, i0, i1, 0, ntiles, off, 0, known);
        rfx_gpu_free(g, cnt);
        return st;
    }
    if (st == RFX_OK) {
        k_pairs_samples<<<grid_for(nwin + 1), 256, 0, g->stream>>>(off, ntiles, step, nwin, samp);
        if ((e = cudaGetLastError()) == cudaSuccess)
            st = to_host(g, (const uint64_t *)samp, (uint64_t *)h.data(), nwin + 1);
        else
            st = fail(g, e, "k_pairs_samples", __FILE__, __LINE__);
    }
    // consecutive windows joined together while their rows stay within box_rows
    for (size_t w = 0; st == RFX_OK && w < nwin;) {
        size_t v = w + 1;
        while (v < nwin && h[v + 1] - h[w] <= P->box_rows)
            v++;
        const size_t t0 = w * step, t1 = v * step < ntiles ? v * step : ntiles;
        st = pairs_join_tiles(L, ta, tb, tile_root, ya, i0, i1, t0, t1, off, h[w], (size_t)(h[v] - h[w]));
        w = v;
    }
    rfx_gpu_free(g, cnt);
    return st;
}

// A piece (a chunk of the part, built as its own TrieArray) appended to the part's, on
// the appending lane's stream.
static rfx_status pairs_append(pairs_run *P, rfx_gpu *g, const rfx_dev_trie *pc)
{
    rfx_dev_trie *tb = &P->tb;
    if (tb->n[0] + pc->n[0] > P->tb_cap0 || tb->n[1] + pc->n[1] > P->tb_cap1) {
        snprintf(g->err, sizeof g->err, "triangles by parts: a piece overflows its part's TrieArray");
        return RFX_ERR_INTERNAL;
    }
    if (!tb->n[1])
        tb->first = pc->first;
    tb->last = pc->last;
    tb->last_has_max |= pc->last_has_max;
    CK(cudaMemcpyAsync(tb->val[1] + tb->n[1], pc->val[1], pc->n[1] * 4, cudaMemcpyDeviceToDevice, g->stream));
    CK(cudaMemcpyAsync(tb->val[0] + tb->n[0], pc->val[0], pc->n[0] * 4, cudaMemcpyDeviceToDevice, g->stream));
    k_pairs_shift<<<grid_for(pc->n[0]), 256, 0, g->stream>>>(pc->ptr[0], pc->n[0], (uint32_t)tb->n[1],
                                                             tb->ptr[0] + tb->n[0]);
    CK_LAUNCH();
    const size_t from = tb->n[1] / PAIRS_TILE;   // the tiles from the old end on
    tb->n[0] += pc->n[0];
    tb->n[1] += pc->n[1];
    k_pairs_ends<<<1, 32, 0, g->stream>>>(tb->val[0], tb->ptr[0], tb->n[0], tb->val[1], tb->n[1]);
    CK_LAUNCH();
    const size_t to = (tb->n[1] - 1) / PAIRS_TILE + 2;
    k_pairs_tile_roots<<<grid_for(to - from), 256, 0, g->stream>>>(tb->ptr[0], tb->n[0], tb->n[1], from, to,
                                                                  P->tile_root);
    CK_LAUNCH();
    P->voff.push_back((uint32_t)tb->n[1]);
    return RFX_OK;
}

// Room for the largest part's TrieArray, taken once: parts reuse it in turn.
static rfx_status pairs_held_alloc(pairs_run *P)
{
    rfx_gpu *g = P->g;
    size_t rows = 0, roots = 0;
    for (size_t b = 0; b < P->part_end.size(); b++) {
        size_t r = 0, o = 0;
        for (int a = b ? P->part_end[b - 1] : 0; a < P->part_end[b]; a++) {
            r += P->chunks[a].r1 - P->chunks[a].r0;
            o += P->chunks[a].roots;
        }
        rows = r > rows ? r : rows;
        roots = o > roots ? o : roots;
    }
    memset(&P->tb, 0, sizeof P->tb);
    P->tb.levels = 2;
    P->tb_cap1 = rows;
    P->tb_cap0 = roots;
    P->tb.val[1] = (uint32_t *)rfx_gpu_alloc(g, (rows + 4) / 4 * 4 * 4);
    P->tb.val[0] = (uint32_t *)rfx_gpu_alloc(g, (roots + 4) / 4 * 4 * 4);
    P->tb.ptr[0] = (uint32_t *)rfx_gpu_alloc(g, (roots + 1) * 4);
    P->tile_root = (uint32_t *)rfx_gpu_alloc(g, (rows / PAIRS_TILE + 3) * 4);
    return P->tb.val[1] && P->tb.val[0] && P->tb.ptr[0] && P->tile_root ? RFX_OK : RFX_ERR_NOMEM;   // the caller frees what was made
}

// The items in `left` are all that is left: the blocks none of them reads are unpinned on
// a thread of their own while they join.
static void pairs_unpin_early(pairs_run *P, const std::vector<pairs_item> &left)
{
    pairs_pins *pp = &P->pins;
    std::vector<char> drop(pp->pinned.size(), 1);
    for (const pairs_item &it : left) {
        const pairs_chunk &c = P->chunks[it.chunk];
        const size_t b0 = std::upper_bound(pp->cut.begin(), pp->cut.end(), c.r0 * 8) - pp->cut.begin() - 1;
        const size_t b1 = std::lower_bound(pp->cut.begin(), pp->cut.end(), c.r1 * 8) - pp->cut.begin();
        for (size_t q = b0; q < b1 && q < drop.size(); q++)
            drop[q] = 0;
    }
    try {
        pp->early = std::thread(pairs_unpin_blocks, pp, std::move(drop));
    } catch (...) {   // then all at the end
    }
}

// After part b's last piece: which chunks its rows reach as y, each streamed past it (an
// item), then part b + 1's pieces; published to the lanes and the copier.
static rfx_status pairs_plan_stream(pairs_lane *L, int b)
{
    pairs_run *P = L->P;
    rfx_gpu *g = L->g;
    const int m = (int)P->chunks.size(), a0 = b ? P->part_end[b - 1] : 0, np = P->part_end[b] - a0;
    unsigned long long *all = (unsigned long long *)rfx_gpu_alloc(g, (m + np) * 8);
    uint32_t *voff = (uint32_t *)rfx_gpu_alloc(g, (np + 1) * 4);
    rfx_status st = all && voff ? RFX_OK : RFX_ERR_NOMEM;
    std::vector<unsigned long long> h(m + np);
    cudaError_t e = cudaSuccess;
    if (st == RFX_OK && (e = cudaMemsetAsync(all, 0, (m + np) * 8, g->stream)) == cudaSuccess &&
        (e = cudaMemcpyAsync(voff, P->voff.data(), (np + 1) * 4, cudaMemcpyHostToDevice, g->stream)) == cudaSuccess) {
        k_pairs_chunk_hist<<<grid_resident(g, P->tb.n[1]), 256, 3 * m * 4, g->stream>>>(
            P->tb.val[1], P->tb.n[1], P->d_bounds, m, voff, np, a0, all, all + m);
        e = cudaGetLastError();
    }
    if (st == RFX_OK && e != cudaSuccess)
        st = fail(g, e, "k_pairs_chunk_hist", __FILE__, __LINE__);
    if (st == RFX_OK)
        st = to_host(g, (const uint64_t *)all, (uint64_t *)h.data(), m + np);
    rfx_gpu_free(g, all);
    rfx_gpu_free(g, voff);
    if (st != RFX_OK)
        return st;
    std::vector<pairs_item> add;
    for (int a = 0; a < m; a++) {
        const bool own = a >= a0 && a < a0 + np;
        if (own ? h[m + a - a0] : h[a])
            add.push_back({a, b, false, own ? (size_t)P->voff[a - a0 + 1] : 0, own ? h[m + a - a0] : h[a]});
    }
    const bool last = b + 1 == (int)P->part_end.size();
    if (!last)
        for (int a = P->part_end[b]; a < P->part_end[b + 1]; a++)
            add.push_back({a, b + 1, true, 0, SIZE_MAX});
    {
        std::lock_guard<std::mutex> lock(P->mu);
        P->items.insert(P->items.end(), add.begin(), add.end());
        P->issued.resize(P->items.size(), 0);
        P->released.resize(P->items.size(), 0);
        P->planned = last;
    }
    P->cv.notify_all();
    if (last && !P->pins.theirs && !P->pins.early.joinable())
        pairs_unpin_early(P, add);
    return RFX_OK;
}

// The box of a part's first piece, whose part is that piece alone: T_a is both N+(y) and
// N+(x), with tile roots of its own.
static rfx_status pairs_own_box(pairs_lane *L, const rfx_dev_trie *ta, const pairs_chunk &c)
{
    rfx_gpu *g = L->g;
    const size_t tiles = ta->n[1] / PAIRS_TILE + 2;
    uint32_t *tile_root = (uint32_t *)rfx_gpu_alloc(g, (tiles + 1) * 4);
    if (!tile_root)
        return RFX_ERR_NOMEM;
    k_pairs_tile_roots<<<grid_for(tiles), 256, 0, g->stream>>>(ta->ptr[0], ta->n[0], ta->n[1], 0, tiles, tile_root);
    cudaError_t e = cudaGetLastError();
    rfx_status st = e == cudaSuccess ? pairs_box(L, ta, ta, tile_root, c, 0, SIZE_MAX)
                                     : fail(g, e, "k_pairs_tile_roots", __FILE__, __LINE__);
    rfx_gpu_free(g, tile_root);
    return st;
}

// *flag = 1 where a node's last value (its greatest: each node is sorted and distinct) is
// UINT32_MAX, the pair count's empty mark.
__global__ void k_pairs_has_max(const uint32_t *val1, const uint32_t *ptr0, size_t n0, unsigned long long *flag)
{
    GRID_STRIDE(i, n0)
    if (ptr0[i + 1] > ptr0[i] && val1[ptr0[i + 1] - 1] == UINT32_MAX)
        *flag = 1;
}

// A chunk's TrieArray from its slot as pairs_issue laid it out (the second column, the
// roots, where their rows start in the host's TrieArray), as rfx_gpu_trie_build makes one:
// each level padded to four words with zeros, ptr ending at the rows, whether the last
// level holds UINT32_MAX read back (one wait, as the build's).
static rfx_status pairs_slot_trie(const pairs_run *P, rfx_gpu *g, const uint32_t *slot, const pairs_chunk &c,
                                  rfx_dev_trie *t)
{
    const size_t n1 = c.r1 - c.r0, n0 = c.roots, o0 = (n1 + 3) / 4 * 4, o1 = o0 + (n0 + 3) / 4 * 4;
    memset(t, 0, sizeof *t);
    t->levels = 2;
    t->n[0] = n0;
    t->n[1] = n1;
    t->first = c.ylo;
    t->last = c.ylast;
    t->val[1] = (uint32_t *)rfx_gpu_alloc(g, o0 * 4);
    t->val[0] = (uint32_t *)rfx_gpu_alloc(g, (n0 + 3) / 4 * 4 * 4);
    t->ptr[0] = (uint32_t *)rfx_gpu_alloc(g, (n0 + 1) * 4);
    unsigned long long *flag = (unsigned long long *)rfx_gpu_alloc(g, 8), has_max = 0;
    cudaError_t e = cudaSuccess;
    if (!t->val[1] || !t->val[0] || !t->ptr[0] || !flag) {
        rfx_gpu_free(g, flag);
        rfx_gpu_trie_free(g, t);
        return RFX_ERR_NOMEM;
    }
    if ((e = cudaMemcpyAsync(t->val[1], slot, n1 * 4, cudaMemcpyDeviceToDevice, g->stream)) == cudaSuccess &&
        (e = cudaMemsetAsync(t->val[1] + n1, 0, (o0 - n1) * 4, g->stream)) == cudaSuccess &&
        (e = cudaMemcpyAsync(t->val[0], slot + o0, n0 * 4, cudaMemcpyDeviceToDevice, g->stream)) == cudaSuccess &&
        (e = cudaMemsetAsync(t->val[0] + n0, 0, ((n0 + 3) / 4 * 4 - n0) * 4, g->stream)) == cudaSuccess) {
        k_pairs_shift<<<grid_for(n0 + 1), 256, 0, g->stream>>>(slot + o1, n0 + 1, 0u - (uint32_t)c.r0, t->ptr[0]);
        if ((e = cudaGetLastError()) == cudaSuccess && (e = cudaMemsetAsync(flag, 0, 8, g->stream)) == cudaSuccess) {
            k_pairs_has_max<<<grid_for(n0), 256, 0, g->stream>>>(t->val[1], t->ptr[0], n0, flag);
            e = cudaGetLastError();
        }
    }
    rfx_status st = e == cudaSuccess ? to_host(g, (const uint64_t *)flag, (uint64_t *)&has_max, 1)
                                     : fail(g, e, "pairs_slot_trie", __FILE__, __LINE__);
    rfx_gpu_free(g, flag);
    t->last_has_max = has_max != 0;
    if (st != RFX_OK)
        rfx_gpu_trie_free(g, t);
    return st;
}

// Item k on lane L: its chunk's TrieArray from the slot (which is then released to the
// next copy); a piece is appended to the part's TrieArray (a part's first piece starts it
// over; after its last, the plan of what streams past it); then its box.
static rfx_status pairs_item_run(pairs_lane *L, size_t k, const pairs_item &it)
{
    pairs_run *P = L->P;
    rfx_gpu *g = L->g;
    const pairs_chunk &c = P->chunks[it.chunk];
    const int s = (int)(k & 1);
    if (!pairs_wait(P, [&] { return P->issued[k] != 0; }))
        return RFX_OK;   // the failure that stopped the run is its status
    CK(cudaStreamWaitEvent(g->stream, P->copied[s], 0));
    rfx_status st = pairs_span_begin(g, P->spans, L->sp, it.piece ? "join piece" : "join chunk", 0, k, g->stream);
    if (st != RFX_OK)
        return st;
    const rfx_dev_rows rows = {(uint32_t *)P->slot[s], c.r1 - c.r0, c.r1 - c.r0, 2};
    rfx_dev_trie ta;
    if ((st = P->by_trie ? pairs_slot_trie(P, g, (const uint32_t *)P->slot[s], c, &ta)
                         : rfx_gpu_trie_build(g, &rows, &ta)) != RFX_OK)
        return st;
    cudaError_t e = cudaEventRecord(P->used[s], g->stream);
    if (e != cudaSuccess) {
        rfx_gpu_trie_free(g, &ta);
        return fail(g, e, "cudaEventRecord", __FILE__, __LINE__);
    }
    {
        std::lock_guard<std::mutex> lock(P->mu);
        P->released[k] = 1;
    }
    P->cv.notify_all();
    rfx_dev_trie tb;   // the part's TrieArray as far as this item's box sees it
    memset(&tb, 0, sizeof tb);
    bool joined = false;   // the box is done already
    if (it.piece) {
        // a part's first piece once every earlier item is joined (nothing reads the old
        // part's TrieArray then), the others once the piece before is appended: appends
        // write past what the boxes of earlier pieces read
        const bool first = it.chunk == (it.part ? P->part_end[it.part - 1] : 0);
        // a first piece's box needs no part but itself: joined while the last part's boxes
        // still join (the part's end is often a hub's heavy box), appended after
        if (first && P->early_first && it.chunk + 1 < P->part_end[it.part]) {
            st = pairs_own_box(L, &ta, c);
            joined = true;
            if (st != RFX_OK) {
                rfx_gpu_trie_free(g, &ta);
                return st;
            }
        }
        if (!pairs_wait(P, [&] { return first ? P->completed >= k : P->tb_items >= k; })) {
            rfx_gpu_trie_free(g, &ta);
            return RFX_OK;
        }
        if (first) {
            for (int j = 0; j < P->nlanes && e == cudaSuccess; j++)
                if (j != L->id)
                    e = cudaStreamWaitEvent(g->stream, P->lane[j].done, 0);
            P->tb.n[0] = P->tb.n[1] = 0;
            P->tb.first = P->tb.last = 0;
            P->tb.last_has_max = false;
            P->voff.assign(1, 0);
        } else
            e = cudaStreamWaitEvent(g->stream, P->tb_ready, 0);
        st = e == cudaSuccess ? pairs_append(P, g, &ta) : fail(g, e, "cudaStreamWaitEvent", __FILE__, __LINE__);
        if (st == RFX_OK && (e = cudaEventRecord(P->tb_ready, g->stream)) != cudaSuccess)
            st = fail(g, e, "cudaEventRecord", __FILE__, __LINE__);
        tb = P->tb;
        // the part complete: what streams past it is known now, so its copies start while
        // this piece joins
        if (st == RFX_OK && it.chunk + 1 == P->part_end[it.part])
            st = pairs_plan_stream(L, it.part);
        if (st == RFX_OK) {
            {
                std::lock_guard<std::mutex> lock(P->mu);
                P->tb_items = k + 1;
            }
            P->cv.notify_all();
        }
    } else if ((e = cudaStreamWaitEvent(g->stream, P->tb_ready, 0)) != cudaSuccess)   // the part complete
        st = fail(g, e, "cudaStreamWaitEvent", __FILE__, __LINE__);
    else
        tb = P->tb;
    if (st == RFX_OK && !joined)
        st = pairs_box(L, &ta, &tb, P->tile_root, c, it.i0, it.rows);
    rfx_gpu_trie_free(g, &ta);
    if (st == RFX_OK)
        st = pairs_span_end(g, P->spans, L->sp, g->stream);
    if (st == RFX_OK && (e = cudaEventRecord(L->done, g->stream)) != cudaSuccess)
        st = fail(g, e, "cudaEventRecord", __FILE__, __LINE__);
    if (st == RFX_OK) {
        {
            std::lock_guard<std::mutex> lock(P->mu);
            P->completed++;
        }
        P->cv.notify_all();
    }
    return st;
}

// Lane L takes the next item while there is one and the run has not failed: a lane that
// is through a light box goes on to the next copied chunk while the other joins a heavy
// one (items dealt alternately had one lane wait for the other's slot).
static void pairs_lane_run(pairs_lane *L)
{
    pairs_run *P = L->P;
    rfx_gpu *g = L->g;
    cudaError_t e = cudaSetDevice(g->device);
    rfx_status st = e == cudaSuccess ? RFX_OK : fail(g, e, "cudaSetDevice", __FILE__, __LINE__);
    while (st == RFX_OK) {
        size_t k;
        pairs_item it;
        {
            std::unique_lock<std::mutex> lock(P->mu);
            P->cv.wait(lock, [&] { return P->failed || P->planned || P->taken < P->items.size(); });
            if (P->failed || P->taken >= P->items.size())
                break;
            k = P->taken++;
            it = P->items[k];
        }
        st = pairs_item_run(L, k, it);
    }
    if (st != RFX_OK)
        pairs_fail(P, st, L->id);
}

#define PAIRS_TRIE_PARTS 24   // a rows plan of this many parts sends its chunks as TrieArrays

// ht from the host rows on the context's host threads, registered: false where memory
// runs out or the rows are too many (the chunks then go as rows).
static bool pairs_host_trie_build(pairs_run *P)
{
    pairs_host_trie *h = &P->ht;
    if (rfx_lftj_trie_build(P->e, P->g->host_threads > 1 ? P->g->host_threads : 1, &h->t) != RFX_OK)
        return false;
    rfx_rows *part[3] = {&h->t.val1, &h->t.val0, &h->t.ptr0};
    for (int k = 0; k < 3; k++)
        h->reg[k] = rfx_gpu_host_register(part[k]->data, part[k]->n * 4);
    return true;
}

static void pairs_host_trie_free(pairs_host_trie *h)
{
    const rfx_rows *part[3] = {&h->t.val1, &h->t.val0, &h->t.ptr0};
    for (int k = 0; k < 3; k++)
        if (h->reg[k])
            rfx_gpu_host_unregister(part[k]->data);
    memset(h->reg, 0, sizeof h->reg);
    rfx_lftj_trie_free(&h->t);
}

// The chunks and parts within the context's budget, or RFX_ERR_NOMEM where none fit.
static rfx_status pairs_plan(pairs_run *P)
{
    rfx_gpu *g = P->g;
    const uint32_t *d = P->e->data;
    const size_t n = P->e->n, used = rfx_gpu_in_use(g);
    const size_t room = g->budget > used ? g->budget - used : 0;
    // Shares of the room in 64ths (the tuning's pairs_slot, pairs_held and pairs_rev to try
    // others): each of two slots SLOT (8 bytes a row; the chunk's TrieArray beside it up to
    // as much again, one per lane), the part held HELD (4 bytes a row and 8 a first-column
    // value), a box's reversal REV per lane (~17 bytes a row while sorted), the rest for the
    // join's frontiers and root indexes (8:22:6 beat 4:28, 3:32 and 5:20 at a 25% cap).
    const rfx_tuning *T = g->tune;
    // A larger part where the room allows: fewer parts stream fewer chunks past them in
    // fewer boxes (26 beat 22 at a 25% cap). With less room it was slower though it made
    // fewer boxes, likely as the joins need memory that does not shrink with the shares
    // (a hub's N+ in the pair count's tables), so there the part stays at 22.
    const size_t held_default = room >= ((size_t)320 << 20) ? 26 : 22;
    const size_t held64 = T->pairs_held > 0 && T->pairs_held < 48 ? (size_t)T->pairs_held : held_default;
    const size_t slot64 = T->pairs_slot > 0 && T->pairs_slot < 16 ? (size_t)T->pairs_slot : 8;
    const size_t rev64 = T->pairs_rev > 0 && T->pairs_rev < 16 ? (size_t)T->pairs_rev : 6;
    P->slot_rows = room / 64 * slot64 / 8;
    P->box_rows = room / 64 * rev64 / 17;
    const size_t held = room / 64 * held64;
    if (P->slot_rows < 1024 || P->box_rows < PAIRS_TILE) {
        snprintf(g->err, sizeof g->err, "triangles by parts: %zu bytes of device memory leave no room for chunks", room);
        return RFX_ERR_NOMEM;
    }
    P->chunks.clear();
    const rfx_lftj_trie *t = P->trie;
    // as a TrieArray: the most roots from j0 whose rows fit a slot's count and whose slices
    // (4 bytes a row, 8 a root, padding) fit its bytes. (Chunks of up to twice the rows,
    // which the bytes would allow, made 18 chunks at R-MAT 24's 25% cap instead of 33 but
    // ran 0.354 s against 0.214: two lanes' TrieArrays and boxes no longer fit, and the
    // count ran again on one; at 10% the same 0.449 s.)
    for (size_t j0 = 0, n0 = P->by_trie ? t->val0.n : 0; j0 < n0;) {
        const uint32_t *p0 = t->ptr0.data;   // n0 + 1 entries, the last the rows
        auto fits = [&](size_t j) {
            const size_t rows = p0[j] - p0[j0];
            return rows <= P->slot_rows && 4 * rows + 8 * (j - j0) + 64 <= P->slot_rows * 8;
        };
        size_t a = j0, b = n0 + 1;   // fits(a), not fits(b) (past the end)
        while (b - a > 1) {
            const size_t mid = a + (b - a) / 2;
            (fits(mid) ? a : b) = mid;
        }
        if (a == j0) {
            snprintf(g->err, sizeof g->err, "triangles by parts: a value leads more than %zu rows", P->slot_rows);
            return RFX_ERR_NOMEM;
        }
        P->chunks.push_back({p0[j0], p0[a], t->val0.data[j0], t->val0.data[a - 1], a - j0, j0});
        j0 = a;
    }
    for (size_t r = 0; r < n && !P->by_trie;) {
        size_t end = r + P->slot_rows < n ? r + P->slot_rows : n;
        if (end < n) {   // back to the start of the run that crosses end
            const uint32_t x = d[2 * end];
            end = partition_point(r, end, [=](size_t k) { return d[2 * k] < x; });
            if (end == r) {
                snprintf(g->err, sizeof g->err, "triangles by parts: a value leads more than %zu rows", P->slot_rows);
                return RFX_ERR_NOMEM;
            }
        }
        const size_t span = (size_t)d[2 * (end - 1)] - d[2 * r] + 1;
        P->chunks.push_back({r, end, d[2 * r], d[2 * (end - 1)], span < end - r ? span : end - r, 0});
        r = end;
    }
    const int m = (int)P->chunks.size();
    if (m > PAIRS_MAX_CHUNKS) {
        snprintf(g->err, sizeof g->err, "triangles by parts: %d chunks (at most %d)", m, PAIRS_MAX_CHUNKS);
        return RFX_ERR_NOMEM;
    }
    P->part_end.clear();
    size_t bytes = 0;
    for (int a = 0; a < m; a++) {
        const size_t cb = 4 * (P->chunks[a].r1 - P->chunks[a].r0 + 4) + 8 * (P->chunks[a].roots + 4);
        if (a && bytes + cb > held) {
            P->part_end.push_back(a);
            bytes = 0;
        }
        bytes += cb;
    }
    P->part_end.push_back(m);
    return RFX_OK;
}

static void pairs_report(pairs_run *P, const std::vector<pairs_span> &sp, rfx_gpu_span_fn span, void *ctx,
                         cudaEvent_t base, double host_base)
{
    for (const pairs_span &x : sp) {
        float t0, t1;
        if (cudaEventElapsedTime(&t0, base, x.e0) == cudaSuccess && cudaEventElapsedTime(&t1, base, x.e1) == cudaSuccess)
            span(ctx, x.what, P->g->device, x.lane, x.box, host_base + t0 * 1e-3, host_base + t1 * 1e-3);
        cudaGetLastError();
    }
}

// Streams, events, slots, the part's room and the chunk bounds; the pinning and copier
// threads.
static rfx_status pairs_setup(pairs_run *P)
{
    rfx_gpu *g = P->g;
    if (!g->tune->pairs_host_trie)
        P->trie = NULL;   // rows, whatever the caller keeps
    P->by_trie = P->trie != NULL;   // the caller's: planned over it at once, no rows plan first
    rfx_status st = pairs_plan(P);
    if (st != RFX_OK)
        return st;
    // Chunks as TrieArrays (about half the bytes of their rows) where the plan streams
    // them past many parts: the host's TrieArray costs a pass over the rows and its
    // registration, which the copies saved repay at small caps only (docs/PERFORMANCE.md).
    // A TrieArray the caller keeps (the out-of-core layer's, made as the rows landed) costs
    // the count nothing, and is used whatever the parts. The tuning's pairs_host_trie: 2
    // always, 0 never (neither the caller's nor one built here).
    const bool want = g->tune->pairs_host_trie == 2 || P->part_end.size() >= PAIRS_TRIE_PARTS;
    if (want && !P->by_trie && pairs_host_trie_build(P)) {
        P->trie = &P->ht.t;
        P->by_trie = true;
        if ((st = pairs_plan(P)) != RFX_OK)
            return st;
    } else if (want && !P->by_trie)
        pairs_host_trie_free(&P->ht);   // what a failed build made; the chunks go as rows
    int least = 0, greatest = 0;   // copies ahead of the join's blocks
    CK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CK(cudaStreamCreateWithPriority(&P->copy, cudaStreamNonBlocking, greatest));
    for (int k = 0; k < 2; k++) {
        CK(cudaEventCreateWithFlags(&P->copied[k], cudaEventDisableTiming));
        CK(cudaEventCreateWithFlags(&P->used[k], cudaEventDisableTiming));
        CK(cudaEventRecord(P->used[k], g->stream));
    }
    CK(cudaEventCreateWithFlags(&P->tb_ready, cudaEventDisableTiming));
    for (int j = 0; j < P->nlanes; j++)
        CK(cudaEventCreateWithFlags(&P->lane[j].done, cudaEventDisableTiming));
    const int m = (int)P->chunks.size();
    std::vector<uint32_t> bounds(2 * m);
    for (int a = 0; a < m; a++) {
        bounds[a] = P->chunks[a].ylo;
        bounds[m + a] = P->chunks[a].ylast;
    }
    P->slot[0] = (uint2 *)rfx_gpu_alloc(g, P->slot_rows * 8);
    P->slot[1] = (uint2 *)rfx_gpu_alloc(g, P->slot_rows * 8);
    P->d_bounds = (uint32_t *)rfx_gpu_alloc(g, 2 * m * 4);
    if (!P->slot[0] || !P->slot[1] || !P->d_bounds || (st = pairs_held_alloc(P)) != RFX_OK)
        return RFX_ERR_NOMEM;
    CK(cudaMemcpyAsync(P->d_bounds, bounds.data(), 2 * m * 4, cudaMemcpyHostToDevice, g->stream));
    if ((st = rfx_gpu_sync(g)) != RFX_OK)   // bounds[] is read before it goes; the lanes' streams see it all
        return st;
    for (int a = 0; a < P->part_end[0]; a++)
        P->items.push_back({a, 0, true, 0, SIZE_MAX});
    P->issued.assign(P->items.size(), 0);
    P->released.assign(P->items.size(), 0);
    if (P->by_trie) {   // the copies read ht, registered: nothing to pin
        P->pins.base = (char *)P->e->data;
        P->pins.bytes = P->e->n * 8;
        P->pins.theirs = true;
        P->pins.cut = {0, P->pins.bytes};
        P->pins.pinned.assign(1, 0);
        P->pins.ready.store(1);
    } else if (!pairs_pins_start(&P->pins, P->e)) {
        snprintf(g->err, sizeof g->err, "triangles by parts: out of host memory");
        return RFX_ERR_NOMEM;
    }
    try {
        P->copier = std::thread(pairs_copier_run, P);
    } catch (...) {
        snprintf(g->err, sizeof g->err, "triangles by parts: no thread to issue the copies");
        return RFX_ERR_NOMEM;
    }
    return RFX_OK;
}

// One count with the lanes of sib (NULL: one lane).
static rfx_status pairs_count(rfx_gpu *g, rfx_gpu *sib, const rfx_rows *e, const rfx_lftj_trie *trie,
                              uint64_t *count, size_t *boxes, size_t *parts, size_t *host_bytes, rfx_gpu_span_fn span,
                              void *span_ctx)
{
    pairs_run *P = new (std::nothrow) pairs_run();
    if (!P)
        return RFX_ERR_NOMEM;
    P->g = g;
    P->e = e;
    P->trie = trie;
    P->spans = span != NULL;
    P->early_first = g->tune->pairs_early;
    P->st = RFX_OK;
    P->nlanes = sib ? 2 : 1;
    for (int j = 0; j < 2; j++) {
        P->lane[j].P = P;
        P->lane[j].id = j;
        P->lane[j].g = j ? sib : g;
    }
    cudaEvent_t base = NULL;
    double host_base = 0;
    rfx_status st = pairs_setup(P);
    cudaError_t err = cudaSuccess;
    if (st == RFX_OK && span && ((err = cudaEventCreate(&base)) != cudaSuccess ||
                                 (err = cudaEventRecord(base, g->stream)) != cudaSuccess ||
                                 (err = cudaEventSynchronize(base)) != cudaSuccess))
        st = fail(g, err, "cudaEventCreate", __FILE__, __LINE__);
    host_base = rfx_seconds();
    std::thread second;
    if (st == RFX_OK && P->nlanes == 2) {
        try {
            second = std::thread(pairs_lane_run, &P->lane[1]);
        } catch (...) {
            P->nlanes = 1;   // the other lane's items fall to this one
        }
    }
    if (st == RFX_OK)
        pairs_lane_run(&P->lane[0]);
    else
        pairs_fail(P, st, 0);
    if (second.joinable())
        second.join();
    pairs_copier_stop(P);   // after a failure it may still have copies to issue: they go first
    if (P->copy)
        cudaStreamSynchronize(P->copy);   // nothing may still read the slots
    cudaStreamSynchronize(g->stream);
    if (sib) {
        cudaStreamSynchronize(sib->stream);
        rfx_gpu_reclaim(sib, 0, NULL, 0);   // what a failed box left (nothing otherwise)
    }
    cudaGetLastError();
    st = P->st;
    if (st != RFX_OK && P->failed_lane == 1)
        memcpy(g->err, sib->err, sizeof g->err);
    pairs_pins_end(&P->pins);
    pairs_host_trie_free(&P->ht);
    if (st == RFX_OK && span) {
        for (int j = 0; j < 2; j++)
            pairs_report(P, P->lane[j].sp, span, span_ctx, base, host_base);
        pairs_report(P, P->sp_copy, span, span_ctx, base, host_base);
    }
    for (std::vector<pairs_span> *v : {&P->lane[0].sp, &P->lane[1].sp, &P->sp_copy})
        for (pairs_span &x : *v) {
            cudaEventDestroy(x.e0);
            cudaEventDestroy(x.e1);
        }
    rfx_gpu_trie_free(g, &P->tb);
    rfx_gpu_free(g, P->tile_root);
    rfx_gpu_free(g, P->slot[0]);
    rfx_gpu_free(g, P->slot[1]);
    rfx_gpu_free(g, P->d_bounds);
    for (cudaEvent_t ev : {P->copied[0], P->copied[1], P->used[0], P->used[1], P->tb_ready, P->lane[0].done,
                           P->lane[1].done, base})
        if (ev)
            cudaEventDestroy(ev);
    if (P->copy)
        cudaStreamDestroy(P->copy);
    if (st == RFX_OK) {
        *count = P->lane[0].count + P->lane[1].count;
        if (boxes)
            *boxes = P->lane[0].boxes + P->lane[1].boxes;
        if (parts)
            *parts = P->part_end.size();
    }
    if (host_bytes)
        *host_bytes += P->copied_bytes;
    delete P;
    return st;
}

extern "C" rfx_status rfx_gpu_triangles_parts(rfx_gpu *g, const rfx_rows *e, const rfx_lftj_trie *trie, uint64_t *count,
                                              size_t *boxes, size_t *parts, size_t *host_bytes, rfx_gpu_span_fn span,
                                              void *span_ctx)
{
    *count = 0;
    if (host_bytes)
        *host_bytes = 0;
    if (e->arity != 2) {
        snprintf(g->err, sizeof g->err, "triangles by parts of a relation of %d columns (two wanted)", e->arity);
        return RFX_ERR_INTERNAL;
    }
    if (!e->n)
        return RFX_OK;
    CK(cudaSetDevice(g->device));
    // two lanes unless pairs_lanes=1 (for comparisons) or no sibling context can be
    // made; where two run out of memory (R-MAT 24 at a 5% cap: both lanes' chunk
    // TrieArrays, reversals and frontiers at once), one does it again
    rfx_gpu *sib = g->tune->pairs_lanes == 1 ? NULL : gpu_sibling(g);
    const uint64_t mark = rfx_gpu_alloc_mark(g);
    rfx_status st = pairs_count(g, sib, e, trie, count, boxes, parts, host_bytes, span, span_ctx);
    if (st == RFX_ERR_NOMEM && sib) {
        cudaStreamSynchronize(g->stream);
        rfx_gpu_reclaim(g, mark, NULL, 0);   // what the failed boxes left
        g->err[0] = 0;
        st = pairs_count(g, NULL, e, trie, count, boxes, parts, host_bytes, span, span_ctx);
    }
    if (st != RFX_OK) {   // nothing of the count's stays (the caller goes on to other boxes)
        cudaStreamSynchronize(g->stream);
        rfx_gpu_reclaim(g, mark, NULL, 0);
    }
    return st;
}
