// gpu_pairs.cuh: a relation's triangles counted out of core by parts of its vertices
// (rfx_gpu_triangles_parts). Included by primitives/cuda_prims.cu after gpu_boxed.cuh.
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
// joins. The host rows are pinned here, block by block on a thread of their own ahead of
// the copies that read them (cudaHostRegister of R-MAT 24's 2 GB takes ~50 ms, a fifth of
// the count where it came first), and unpinned once no copy is left to read them: blocks
// the last part's items do not read while that part joins, the rest at the end.
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

// Tiles [t0, t0 + gridDim.x) of val1[i0, i1): each selected value i (y in [ylo, ylast]) as the
// row (y, x), x its root's value, at off[t] - base + its rank in the tile, in value order.
__global__ void __launch_bounds__(PAIRS_TILE_THREADS) k_pairs_tile_rows(const uint32_t *val0, const uint32_t *ptr0,
                                                                       size_t n0, const uint32_t *val1, size_t i0,
                                                                       size_t i1, size_t t0, uint32_t ylo,
                                                                       uint32_t ylast,
                                                                       const unsigned long long *off,
                                                                       unsigned long long base, uint2 *out)
{
    __shared__ size_t win[2];
    __shared__ unsigned warp_sum[PAIRS_TILE_THREADS / 32];
    const size_t t = t0 + blockIdx.x, start = i0 + t * PAIRS_TILE;
    const size_t end = start + PAIRS_TILE < i1 ? start + PAIRS_TILE : i1;
    if (threadIdx.x < 2)
        win[threadIdx.x] = box_root_of(ptr0, 0, n0, threadIdx.x ? end - 1 : start);
    __syncthreads();
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x / 32;
    unsigned long long at = off[t] - base;
    for (int k = 0; k < PAIRS_TILE_ITEMS; k++) {
        const size_t i = start + k * PAIRS_TILE_THREADS + threadIdx.x;
        const uint32_t y = i < end ? val1[i] : 0;
        const bool sel = i < end && pairs_in(y, ylo, ylast);
        const unsigned mask = __ballot_sync(0xffffffffu, sel);
        if (lane == 0)
            warp_sum[warp] = __popc(mask);
        __syncthreads();
        unsigned before = 0, total = 0;
        for (int w = 0; w < PAIRS_TILE_THREADS / 32; w++) {
            before += w < (int)warp ? warp_sum[w] : 0;
            total += warp_sum[w];
        }
        if (sel) {
            const size_t r = box_root_of(ptr0, win[0], win[1] + 1, i);
            out[at + before + __popc(mask & ((1u << lane) - 1))] = make_uint2(y, val0[r]);
        }
        at += total;
        __syncthreads();   // warp_sum is rewritten
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
// 512 MB, so that few blocks are registered and unregistered (R-MAT 24's 2 GB: 8 blocks).
#define PAIRS_PIN_FIRST ((size_t)16 << 20)
#define PAIRS_PIN_MOST ((size_t)512 << 20)

typedef struct pairs_pins {
    char *base;
    size_t bytes;
    int device;
    std::vector<size_t> cut;          // block k: bytes [cut[k], cut[k + 1]) from base, page-aligned inside
    std::vector<char> pinned;         // block k registered (else its copies are from pageable memory)
    std::atomic<size_t> ready;        // blocks done
    std::atomic<int> registered;      // blocks pinned
    std::atomic<bool> stop;
    std::thread th, early;            // pinning; unpinning blocks no copy will read
} pairs_pins;

static void pairs_pin_blocks(pairs_pins *p)
{
    cudaSetDevice(p->device);   // registering needs the context
    for (size_t k = 0; k + 1 < p->cut.size() && !p->stop.load(); k++) {
        char *at = p->base + p->cut[k];
        const size_t n = p->cut[k + 1] - p->cut[k];
        // read-only where the device allows it: unpinning is then ~2.5x faster
        cudaError_t e = cudaHostRegister(at, n, cudaHostRegisterPortable | cudaHostRegisterReadOnly);
        if (e != cudaSuccess) {
            cudaGetLastError();
            e = cudaHostRegister(at, n, cudaHostRegisterPortable);
        }
        if (e != cudaSuccess)
            cudaGetLastError();
        p->pinned[k] = e == cudaSuccess;
        p->registered += e == cudaSuccess;
        p->ready.store(k + 1);
    }
    p->ready.store(p->cut.size());   // stopped: nobody waits
}

static bool pairs_pins_start(pairs_pins *p, const rfx_rows *e, int device)
{
    p->base = (char *)e->data;
    p->bytes = e->n * 8;
    p->device = device;
    const uintptr_t page = 4096, b = (uintptr_t)p->base;
    try {
        for (size_t at = 0, block = PAIRS_PIN_FIRST; at < p->bytes;) {
            p->cut.push_back(at);
            size_t next = (size_t)((b + at + block + page - 1) / page * page - b);
            at = next < p->bytes ? next : p->bytes;
            block = block < PAIRS_PIN_MOST ? 2 * block : block;
        }
        p->cut.push_back(p->bytes);
        p->pinned.assign(p->cut.size() - 1, 0);
        p->th = std::thread(pairs_pin_blocks, p);
    } catch (...) {
        p->cut.clear();
        return false;
    }
    return true;
}

static void pairs_unpin_blocks(pairs_pins *p, std::vector<char> drop)
{
    while (p->ready.load() < p->cut.size())   // the pinning thread has let go of pinned[]
        std::this_thread::yield();
    for (size_t k = 0; k < drop.size(); k++)
        if (drop[k] && p->pinned[k]) {
            if (cudaHostUnregister(p->base + p->cut[k]) != cudaSuccess)
                cudaGetLastError();
            p->pinned[k] = 0;
        }
}

static void pairs_pins_end(pairs_pins *p)
{
    p->stop.store(true);
    if (p->th.joinable())
        p->th.join();
    if (p->early.joinable())
        p->early.join();
    for (size_t k = 0; k < p->pinned.size(); k++)
        if (p->pinned[k] && cudaHostUnregister(p->base + p->cut[k]) != cudaSuccess)
            cudaGetLastError();
}

typedef struct pairs_chunk {
    size_t r0, r1;        // rows [r0, r1) of the host relation: whole first-column runs
    uint32_t ylo, ylast;  // the first and last value leading its rows: a box's y (no other y has N+(y))
    size_t roots;         // at most this many distinct first-column values
} pairs_chunk;

typedef struct pairs_item {
    int chunk;
    bool piece;           // a chunk of the part being built, or one streamed past it
    size_t i0;            // streamed: the part's values from i0 on are the box's x side
    size_t rows;          // streamed: the box's rows (x, y), as the histogram counted them
} pairs_item;

typedef struct pairs_span {
    const char *what;
    int lane;
    size_t box;
    cudaEvent_t e0, e1;
} pairs_span;

typedef struct pairs_run {
    rfx_gpu *g;
    const rfx_rows *e;
    std::vector<pairs_chunk> chunks;
    std::vector<int> part_end;    // part b: chunks [part_end[b - 1], part_end[b])
    size_t slot_rows, box_rows;   // a slot's capacity; the most rows a box reverses at once
    uint32_t *d_bounds;           // every chunk's ylo, then every chunk's ylast (the histogram's)
    cudaStream_t copy;
    cudaEvent_t copied[2], used[2];
    uint2 *slot[2];
    std::vector<pairs_item> items;
    size_t issued;
    // the part held: its TrieArray so far and where each of its pieces' values start
    rfx_dev_trie tb;
    size_t tb_cap1, tb_cap0;
    std::vector<uint32_t> voff;
    uint64_t count;
    size_t boxes, copied_bytes;
    bool spans;
    std::vector<pairs_span> sp, sp_copy;   // the joins' (this thread's), the copies' (the copier's)
    pairs_pins pins;
    // The copies are issued by a thread of their own (a cudaMemcpyAsync call could block
    // the issuing thread: R-MAT 24 at a 25% cap spent ~50 ms in them, where they were issued
    // between joins). Item k's copy goes once k is queued; `done` counts items whose copy
    // is issued (its `copied` event recorded).
    bool threaded;
    std::thread copier;
    std::mutex mu;
    std::condition_variable cv;
    std::vector<std::pair<size_t, int>> queue;   // (item, chunk), taken from `head` on
    size_t head;
    bool quit;
    std::atomic<size_t> done;
    std::atomic<int> copy_st;
    bool timing;                  // RFX_PAIRS_TIMES: where the host waited, on stderr
    double ms_setup, ms_loop, ms_part, ms_box, ms_stream, ms_issue, ms_unpin, ms_pin, ms_copy, ms_build, ms_count, ms_rev, ms_join;
} pairs_run;

static rfx_status pairs_span_begin(pairs_run *P, std::vector<pairs_span> &sp, const char *what, int lane, size_t box,
                                   cudaStream_t s)
{
    rfx_gpu *g = P->g;
    if (!P->spans)
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

static rfx_status pairs_span_end(pairs_run *P, std::vector<pairs_span> &sp, cudaStream_t s)
{
    rfx_gpu *g = P->g;
    if (P->spans)
        CK(cudaEventRecord(sp.back().e1, s));
    return RFX_OK;
}

// Item k's chunk copied into slot k % 2 on the copy stream, once the slot's last reader is
// done and its rows are pinned: a copy within each pinned block (one across two
// registrations would be staged through pageable memory).
static rfx_status pairs_issue(pairs_run *P, size_t k, int chunk)
{
    rfx_gpu *g = P->g;
    const pairs_chunk &c = P->chunks[chunk];
    const int s = (int)(k & 1);
    pairs_pins *pp = &P->pins;
    const size_t b0 = c.r0 * 8, b1 = c.r1 * 8;
    size_t blk = std::upper_bound(pp->cut.begin(), pp->cut.end(), b0) - pp->cut.begin() - 1;
    const size_t last = std::lower_bound(pp->cut.begin(), pp->cut.end(), b1) - pp->cut.begin();
    const double t0 = rfx_seconds();
    while (pp->ready.load() < last)
        std::this_thread::yield();
    P->ms_pin += (rfx_seconds() - t0) * 1e3;
    CK(cudaStreamWaitEvent(P->copy, P->used[s], 0));
    rfx_status st = pairs_span_begin(P, P->sp_copy, "copy chunk", 1, k, P->copy);
    if (st != RFX_OK)
        return st;
    for (size_t at = b0; at < b1; blk++) {
        const size_t to = pp->cut[blk + 1] < b1 ? pp->cut[blk + 1] : b1;
        CK(cudaMemcpyAsync((char *)P->slot[s] + (at - b0), pp->base + at, to - at, cudaMemcpyHostToDevice, P->copy));
        at = to;
    }
    st = pairs_span_end(P, P->sp_copy, P->copy);
    if (st != RFX_OK)
        return st;
    CK(cudaEventRecord(P->copied[s], P->copy));
    P->copied_bytes += (c.r1 - c.r0) * 8;
    return RFX_OK;
}

static void pairs_copier_run(pairs_run *P)
{
    cudaSetDevice(P->g->device);
    for (;;) {
        std::pair<size_t, int> job;
        {
            std::unique_lock<std::mutex> lock(P->mu);
            P->cv.wait(lock, [P] { return P->quit || P->head < P->queue.size(); });
            if (P->head == P->queue.size())
                return;   // quit, nothing left
            job = P->queue[P->head++];
        }
        rfx_status st = pairs_issue(P, job.first, job.second);
        if (st != RFX_OK) {
            P->copy_st.store(st);
            return;
        }
        P->done.store(job.first + 1);
    }
}

static void pairs_copier_stop(pairs_run *P)
{
    if (!P->copier.joinable())
        return;
    {
        std::lock_guard<std::mutex> lock(P->mu);
        P->quit = true;
    }
    P->cv.notify_one();
    P->copier.join();
}

// Items up to `upto` (those known) queued for their copies, or issued here.
static rfx_status pairs_issue_upto(pairs_run *P, size_t upto)
{
    rfx_status st = RFX_OK;
    const double t0 = rfx_seconds();
    if (P->threaded) {
        {
            std::lock_guard<std::mutex> lock(P->mu);
            for (; P->issued < P->items.size() && P->issued <= upto; P->issued++)
                P->queue.push_back({P->issued, P->items[P->issued].chunk});
        }
        P->cv.notify_one();
    } else
        for (; st == RFX_OK && P->issued < P->items.size() && P->issued <= upto; P->issued++)
            if ((st = pairs_issue(P, P->issued, P->items[P->issued].chunk)) == RFX_OK)
                P->done.store(P->issued + 1);
    P->ms_issue += (rfx_seconds() - t0) * 1e3;
    return st;
}

// Item k's copy issued (its `copied` event recorded), so that a wait on the event is for it.
static rfx_status pairs_wait_issued(pairs_run *P, size_t k)
{
    while (P->done.load() <= k) {
        if (P->copy_st.load() != RFX_OK)
            return (rfx_status)P->copy_st.load();
        std::this_thread::yield();
    }
    return RFX_OK;
}

static const int pairs_colvar[] = {0, 1, 0, 2, 1, 2};   // e reversed (y, x), N+(y) (y, z), N+(x) (x, z)

// The rows (x, y) of values tiles [t0, t1) of the part's [i0, i1) with y in chunk ya (n rows
// in all, the first base of the whole range's selection), reversed, sorted by y, made a
// TrieArray and joined with T_a and the part's. Where memory runs out the tiles are halved.
static rfx_status pairs_join_tiles(pairs_run *P, const rfx_dev_trie *ta, const pairs_chunk &ya, size_t i0, size_t i1,
                                   size_t t0, size_t t1, const unsigned long long *d_off, unsigned long long base,
                                   size_t n)
{
    rfx_gpu *g = P->g;
    if (!n)
        return RFX_OK;
    const rfx_dev_trie *tb = &P->tb;
    const double clock0 = rfx_seconds();
    uint64_t *rows = (uint64_t *)rfx_gpu_alloc(g, n * 8);
    rfx_status st = rows ? RFX_OK : RFX_ERR_NOMEM;
    if (st == RFX_OK) {
        k_pairs_tile_rows<<<(unsigned)(t1 - t0), PAIRS_TILE_THREADS, 0, g->stream>>>(
            tb->val[0], tb->ptr[0], tb->n[0], tb->val[1], i0, i1, t0, ya.ylo, ya.ylast, d_off, base, (uint2 *)rows);
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
    const double clock1 = rfx_seconds();
    P->ms_rev += (clock1 - clock0) * 1e3;
    if (st == RFX_OK) {
        const rfx_dev_rows s0 = {tr.val[1], tr.n[1], tr.n[1], 2}, s1 = {ta->val[1], ta->n[1], ta->n[1], 2},
                           s2 = {tb->val[1], tb->n[1], tb->n[1], 2};
        const rfx_dev_rows *s[3] = {&s0, &s1, &s2};
        const rfx_dev_trie *t[3] = {&tr, ta, tb};
        st = rfx_gpu_lftj_tries(g, s, t, pairs_colvar, 3, 3, NULL, &c);
    }
    rfx_gpu_trie_free(g, &tr);
    P->ms_join += (rfx_seconds() - clock1) * 1e3;
    if (st == RFX_OK) {
        P->count += c;
        P->boxes++;
        return RFX_OK;
    }
    if (st != RFX_ERR_NOMEM || t1 - t0 < 2)
        return st;
    const size_t mid = t0 + (t1 - t0) / 2;
    unsigned long long at = 0;
    g->err[0] = 0;
    if ((st = to_host(g, d_off + mid, &at, 1)) != RFX_OK)   // on the stream that wrote it
        return st;
    st = pairs_join_tiles(P, ta, ya, i0, i1, t0, mid, d_off, base, (size_t)(at - base));
    if (st == RFX_OK)
        st = pairs_join_tiles(P, ta, ya, i0, i1, mid, t1, d_off, at, n - (size_t)(at - base));
    return st;
}

// Box (the part, chunk ya): the part's values [i0, n1) with y in ya's range, T_a ya's N+.
// Where their number is unknown (or more than box_rows) their count per window of tiles
// decides how many rows each join reverses at once.
static rfx_status pairs_box(pairs_run *P, const rfx_dev_trie *ta, const pairs_chunk &ya, size_t i0, size_t known)
{
    rfx_gpu *g = P->g;
    const size_t i1 = P->tb.n[1];
    if (i1 <= i0)
        return RFX_OK;
    const size_t ntiles = (i1 - i0 + PAIRS_TILE - 1) / PAIRS_TILE;
    const size_t step = P->box_rows / PAIRS_TILE > 0 ? P->box_rows / PAIRS_TILE : 1;   // tiles a window
    const size_t nwin = (ntiles + step - 1) / step;
    const double t0 = rfx_seconds();
    unsigned long long *cnt = (unsigned long long *)rfx_gpu_alloc(g, (2 * (ntiles + 1) + nwin + 1) * 8);
    if (!cnt)
        return RFX_ERR_NOMEM;
    unsigned long long *off = cnt + ntiles + 1, *samp = off + ntiles + 1;
    std::vector<unsigned long long> h(nwin + 1);
    k_pairs_tile_counts<<<(unsigned)ntiles, PAIRS_TILE_THREADS, 0, g->stream>>>(P->tb.val[1], i0, i1, ya.ylo, ya.ylast,
                                                                               cnt, ntiles);
    cudaError_t e = cudaGetLastError();
    rfx_status st = e == cudaSuccess ? exclusive_sum(g, (const uint64_t *)cnt, (uint64_t *)off, ntiles + 1)
                                     : fail(g, e, "k_pairs_tile_counts", __FILE__, __LINE__);
    if (st == RFX_OK && known <= P->box_rows) {   // one join: no window's count is needed
        P->ms_count += (rfx_seconds() - t0) * 1e3;
        st = pairs_join_tiles(P, ta, ya, i0, i1, 0, ntiles, off, 0, known);
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
    P->ms_count += (rfx_seconds() - t0) * 1e3;
    // consecutive windows joined together while their rows stay within box_rows
    for (size_t w = 0; st == RFX_OK && w < nwin;) {
        size_t v = w + 1;
        while (v < nwin && h[v + 1] - h[w] <= P->box_rows)
            v++;
        const size_t t0 = w * step, t1 = v * step < ntiles ? v * step : ntiles;
        st = pairs_join_tiles(P, ta, ya, i0, i1, t0, t1, off, h[w], (size_t)(h[v] - h[w]));
        w = v;
    }
    rfx_gpu_free(g, cnt);
    return st;
}

// A piece (a chunk of the part, built as its own TrieArray) appended to the part's.
static rfx_status pairs_append(pairs_run *P, const rfx_dev_trie *pc)
{
    rfx_gpu *g = P->g;
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
    tb->n[0] += pc->n[0];
    tb->n[1] += pc->n[1];
    k_pairs_ends<<<1, 32, 0, g->stream>>>(tb->val[0], tb->ptr[0], tb->n[0], tb->val[1], tb->n[1]);
    CK_LAUNCH();
    P->voff.push_back((uint32_t)tb->n[1]);
    return RFX_OK;
}

// Part b's TrieArray, empty, with room for its chunks.
static rfx_status pairs_part_begin(pairs_run *P, int b)
{
    rfx_gpu *g = P->g;
    rfx_gpu_trie_free(g, &P->tb);
    size_t rows = 0, roots = 0;
    for (int a = b ? P->part_end[b - 1] : 0; a < P->part_end[b]; a++) {
        rows += P->chunks[a].r1 - P->chunks[a].r0;
        roots += P->chunks[a].roots;
    }
    P->tb.levels = 2;
    P->tb_cap1 = rows;
    P->tb_cap0 = roots;
    P->tb.val[1] = (uint32_t *)rfx_gpu_alloc(g, (rows + 4) / 4 * 4 * 4);
    P->tb.val[0] = (uint32_t *)rfx_gpu_alloc(g, (roots + 4) / 4 * 4 * 4);
    P->tb.ptr[0] = (uint32_t *)rfx_gpu_alloc(g, (roots + 1) * 4);
    if (!P->tb.val[1] || !P->tb.val[0] || !P->tb.ptr[0])
        return RFX_ERR_NOMEM;   // the caller frees what was made
    P->voff.assign(1, 0);
    return RFX_OK;
}

// The items from `next` on are all that is left: the blocks none of them reads are
// unpinned on a thread of their own while they join.
static void pairs_unpin_early(pairs_run *P, size_t next)
{
    pairs_pins *pp = &P->pins;
    std::vector<char> drop(pp->pinned.size(), 1);
    for (size_t k = next; k < P->items.size(); k++) {
        const pairs_chunk &c = P->chunks[P->items[k].chunk];
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

// After part b's last piece (item next - 1): which chunks its rows reach as y, each
// streamed past it (an item), then part b + 1's pieces.
static rfx_status pairs_plan_stream(pairs_run *P, int b, size_t next)
{
    rfx_gpu *g = P->g;
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
    for (int a = 0; st == RFX_OK && a < m; a++) {
        const bool own = a >= a0 && a < a0 + np;
        if (own ? h[m + a - a0] : h[a])
            P->items.push_back({a, false, own ? (size_t)P->voff[a - a0 + 1] : 0, own ? h[m + a - a0] : h[a]});
    }
    if (st == RFX_OK && b + 1 < (int)P->part_end.size())
        for (int a = P->part_end[b]; a < P->part_end[b + 1]; a++)
            P->items.push_back({a, true, 0, SIZE_MAX});
    if (st == RFX_OK && b + 1 == (int)P->part_end.size() && !P->pins.early.joinable())
        pairs_unpin_early(P, next);
    return st;
}

static rfx_status pairs_loop(pairs_run *P)
{
    rfx_gpu *g = P->g;
    int b = 0;
    for (int a = 0; a < P->part_end[0]; a++)
        P->items.push_back({a, true, 0, SIZE_MAX});
    rfx_status st = pairs_issue_upto(P, 1);
    for (size_t k = 0; st == RFX_OK && k < P->items.size(); k++) {
        const pairs_item it = P->items[k];
        const pairs_chunk &c = P->chunks[it.chunk];
        const int s = (int)(k & 1);
        double t0 = rfx_seconds();
        if (it.piece && it.chunk == (b ? P->part_end[b - 1] : 0) && (st = pairs_part_begin(P, b)) != RFX_OK)
            break;
        P->ms_part += (rfx_seconds() - t0) * 1e3;
        t0 = rfx_seconds();
        if ((st = pairs_wait_issued(P, k)) != RFX_OK)
            break;
        if (P->timing)   // the copy's wait seen apart from the build's
            CK(cudaEventSynchronize(P->copied[s]));
        double t1 = rfx_seconds();
        CK(cudaStreamWaitEvent(g->stream, P->copied[s], 0));
        if ((st = pairs_span_begin(P, P->sp, it.piece ? "join piece" : "join chunk", 0, k, g->stream)) != RFX_OK)
            break;
        const rfx_dev_rows rows = {(uint32_t *)P->slot[s], c.r1 - c.r0, c.r1 - c.r0, 2};
        rfx_dev_trie ta;
        st = rfx_gpu_trie_build(g, &rows, &ta);   // waits for the build: the slot is read
        if (st == RFX_OK && (st = pairs_issue_upto(P, k + 1)) == RFX_OK) {
            CK(cudaEventRecord(P->used[s], g->stream));
            st = pairs_issue_upto(P, k + 2);
        }
        if (st == RFX_OK && it.piece)
            st = pairs_append(P, &ta);
        P->ms_copy += (t1 - t0) * 1e3;
        P->ms_build += (rfx_seconds() - t1) * 1e3;
        const double t2 = rfx_seconds();
        if (st == RFX_OK)
            st = pairs_box(P, &ta, c, it.i0, it.rows);
        rfx_gpu_trie_free(g, &ta);
        P->ms_box += (rfx_seconds() - t2) * 1e3;
        if (st == RFX_OK)
            st = pairs_span_end(P, P->sp, g->stream);
        if (st == RFX_OK && it.piece && it.chunk + 1 == P->part_end[b]) {
            const double t3 = rfx_seconds();
            st = pairs_plan_stream(P, b, k + 1);
            P->ms_stream += (rfx_seconds() - t3) * 1e3;
            b++;
            if (st == RFX_OK)
                st = pairs_issue_upto(P, k + 2);
        }
    }
    return st;
}

// The chunks and parts within the context's budget, or RFX_ERR_NOMEM where none fit.
static rfx_status pairs_plan(pairs_run *P)
{
    rfx_gpu *g = P->g;
    const uint32_t *d = P->e->data;
    const size_t n = P->e->n, used = rfx_gpu_in_use(g);
    const size_t room = g->budget > used ? g->budget - used : 0;
    // Shares of the room in 64ths (RFX_PAIRS_SLOT and RFX_PAIRS_HELD to try others): each
    // of two slots 8 (8 bytes a row; the chunk's TrieArray beside it up to 12), the part held
    // 22 (4 bytes a row and 8 a first-column value), a box's reversal 6 (~17 bytes a row
    // while sorted), the rest for the chunk's TrieArray and the join's frontiers. At R-MAT
    // 24's 25% cap 8:22 ran in 0.351-0.367 s, 4:28 0.41-0.42, 3:32 0.48, 5:20 0.45.
    const char *he = getenv("RFX_PAIRS_HELD"), *se = getenv("RFX_PAIRS_SLOT");
    const size_t held64 = he && atoi(he) > 0 && atoi(he) < 48 ? (size_t)atoi(he) : 22;
    const size_t slot64 = se && atoi(se) > 0 && atoi(se) < 16 ? (size_t)atoi(se) : 8;
    P->slot_rows = room / 64 * slot64 / 8;
    P->box_rows = room / 64 * 6 / 17;
    const size_t held = room / 64 * held64;
    if (P->slot_rows < 1024 || P->box_rows < PAIRS_TILE) {
        snprintf(g->err, sizeof g->err, "triangles by parts: %zu bytes of device memory leave no room for chunks", room);
        return RFX_ERR_NOMEM;
    }
    P->chunks.clear();
    for (size_t r = 0; r < n;) {
        size_t end = r + P->slot_rows < n ? r + P->slot_rows : n;
        if (end < n) {   // back to the start of the run that crosses end
            const uint32_t x = d[2 * end];
            end = partition_point(r, end, [=](size_t k) { return d[2 * k] < x; });
            if (end == r) {
                snprintf(g->err, sizeof g->err, "triangles by parts: a value leads more than %zu rows", P->slot_rows);
                return RFX_ERR_NOMEM;
            }
        }
        pairs_chunk c = {r, end, d[2 * r], d[2 * (end - 1)], 0};
        const size_t span = (size_t)d[2 * (end - 1)] - d[2 * r] + 1;
        c.roots = span < end - r ? span : end - r;
        P->chunks.push_back(c);
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

extern "C" rfx_status rfx_gpu_triangles_parts(rfx_gpu *g, const rfx_rows *e, uint64_t *count, size_t *boxes,
                                              size_t *parts, size_t *host_bytes, rfx_gpu_span_fn span, void *span_ctx)
{
    *count = 0;
    if (e->arity != 2) {
        snprintf(g->err, sizeof g->err, "triangles by parts of a relation of %d columns (two wanted)", e->arity);
        return RFX_ERR_INTERNAL;
    }
    if (!e->n)
        return RFX_OK;
    CK(cudaSetDevice(g->device));
    pairs_run *P = new (std::nothrow) pairs_run();
    if (!P)
        return RFX_ERR_NOMEM;
    P->g = g;
    P->e = e;
    P->spans = span != NULL;
    P->timing = getenv("RFX_PAIRS_TIMES") != NULL;
    const char *ct = getenv("RFX_PAIRS_COPY_THREAD");   // 0: copies issued between the joins (for comparisons)
    P->threaded = !ct || atoi(ct) != 0;
    memset(&P->tb, 0, sizeof P->tb);
    cudaEvent_t base = NULL;
    double host_base = 0;
    const double clock0 = rfx_seconds();
    rfx_status st = pairs_plan(P);
    cudaError_t err = cudaSuccess;
    if (st == RFX_OK) {
        int least = 0, greatest = 0;   // copies ahead of the join's blocks
        if ((err = cudaDeviceGetStreamPriorityRange(&least, &greatest)) == cudaSuccess)
            err = cudaStreamCreateWithPriority(&P->copy, cudaStreamNonBlocking, greatest);
        for (int k = 0; k < 2 && err == cudaSuccess; k++)
            if ((err = cudaEventCreateWithFlags(&P->copied[k], cudaEventDisableTiming)) == cudaSuccess &&
                (err = cudaEventCreateWithFlags(&P->used[k], cudaEventDisableTiming)) == cudaSuccess)
                err = cudaEventRecord(P->used[k], g->stream);
        if (err == cudaSuccess && span && (err = cudaEventCreate(&base)) == cudaSuccess &&
            (err = cudaEventRecord(base, g->stream)) == cudaSuccess && (err = cudaEventSynchronize(base)) == cudaSuccess)
            host_base = rfx_seconds();
        if (err != cudaSuccess)
            st = fail(g, err, "stream or event creation", __FILE__, __LINE__);
    }
    if (st == RFX_OK) {
        const int m = (int)P->chunks.size();
        std::vector<uint32_t> bounds(2 * m);
        for (int a = 0; a < m; a++) {
            bounds[a] = P->chunks[a].ylo;
            bounds[m + a] = P->chunks[a].ylast;
        }
        P->slot[0] = (uint2 *)rfx_gpu_alloc(g, P->slot_rows * 8);
        P->slot[1] = (uint2 *)rfx_gpu_alloc(g, P->slot_rows * 8);
        P->d_bounds = (uint32_t *)rfx_gpu_alloc(g, 2 * m * 4);
        st = P->slot[0] && P->slot[1] && P->d_bounds ? RFX_OK : RFX_ERR_NOMEM;
        if (st == RFX_OK && (err = cudaMemcpyAsync(P->d_bounds, bounds.data(), 2 * m * 4, cudaMemcpyHostToDevice,
                                                   g->stream)) != cudaSuccess)
            st = fail(g, err, "cudaMemcpyAsync", __FILE__, __LINE__);
        if (st == RFX_OK)
            st = rfx_gpu_sync(g);   // bounds[] is read before it goes
    }
    if (st == RFX_OK && !pairs_pins_start(&P->pins, e, g->device))
        st = RFX_ERR_NOMEM;
    if (st == RFX_OK && P->threaded) {
        try {
            P->copier = std::thread(pairs_copier_run, P);
        } catch (...) {
            P->threaded = false;
        }
    }
    P->ms_setup = (rfx_seconds() - clock0) * 1e3;
    if (st == RFX_OK)
        st = pairs_loop(P);
    P->ms_loop = (rfx_seconds() - clock0) * 1e3 - P->ms_setup;
    pairs_copier_stop(P);   // after a failure it may still have copies to issue: they go first
    if (P->copy)
        cudaStreamSynchronize(P->copy);   // nothing may still read the slots
    cudaStreamSynchronize(g->stream);
    cudaGetLastError();
    const double clock1 = rfx_seconds();
    pairs_pins_end(&P->pins);
    P->ms_unpin = (rfx_seconds() - clock1) * 1e3;
    if (st == RFX_OK && span) {
        pairs_report(P, P->sp, span, span_ctx, base, host_base);
        pairs_report(P, P->sp_copy, span, span_ctx, base, host_base);
    }
    if (P->timing)
        fprintf(stderr, "triangles by parts: %zu chunks of at most %zu rows, %zu parts, %zu items, %zu joins of at most %zu rows; "
                "ms setting up %.1f, the loop %.1f: parts begun %.1f, boxes %.1f of which counted %.1f, reversed %.1f, joined %.1f; waiting for pinning %.1f, copies %.1f, chunk TrieArrays %.1f, "
                "chunks to stream %.1f, unpinning %.1f; copies issued in %.1f; %zu blocks, %d pinned\n",
                P->chunks.size(), P->slot_rows, P->part_end.size(), P->items.size(), P->boxes, P->box_rows, P->ms_setup, P->ms_loop,
                P->ms_part, P->ms_box, P->ms_count, P->ms_rev, P->ms_join,
                P->ms_pin, P->ms_copy,
                P->ms_build, P->ms_stream, P->ms_unpin, P->ms_issue, P->pins.pinned.size(), P->pins.registered.load());
    for (std::vector<pairs_span> *v : {&P->sp, &P->sp_copy})
        for (pairs_span &x : *v) {
            cudaEventDestroy(x.e0);
            cudaEventDestroy(x.e1);
        }
    rfx_gpu_trie_free(g, &P->tb);
    rfx_gpu_free(g, P->slot[0]);
    rfx_gpu_free(g, P->slot[1]);
    rfx_gpu_free(g, P->d_bounds);
    for (int k = 0; k < 2; k++) {
        if (P->copied[k])
            cudaEventDestroy(P->copied[k]);
        if (P->used[k])
            cudaEventDestroy(P->used[k]);
    }
    if (base)
        cudaEventDestroy(base);
    if (P->copy)
        cudaStreamDestroy(P->copy);
    if (st == RFX_OK) {
        *count = P->count;
        if (boxes)
            *boxes = P->boxes;
        if (parts)
            *parts = P->part_end.size();
    }
    if (host_bytes)
        *host_bytes = P->copied_bytes;
    delete P;
    return st;
}
