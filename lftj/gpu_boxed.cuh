// gpu_boxed.cuh: the leapfrog triejoin box by box, for joins whose inputs do not fit on
// the device (Red Fox thesis §6.3) or that are spread over several devices (§6.4).
// Included by gpu_lftj.cu after gpu_lftj.cuh.
//
// The sources stay on the host. A box's slice of a sorted source is one contiguous row
// range, so "slicing" a box is free and its upload is one copy per source: the host
// memory is pinned once by the caller (rfx_gpu_pin_sources) and the copies of box i+1
// run on a stream of their own while box i is being joined (two slots of device buffers,
// ordered by events). Each device has a worker thread that takes the next box from a
// shared counter, so faster devices take more boxes; results are kept per box and put in
// box order by the caller.
// Where the caller gives a source's TrieArray (rfx_gpu_box_tries), its slices travel in
// that form instead, half the bytes, and are expanded into rows on the copy stream.
#include <atomic>
#include <new>
#include <vector>

typedef struct boxed_run {
    rfx_gpu *const *gs;
    int ndev, nsrc, nvars;
    const rfx_rows *const *srcs;   // host sources (boxes copied), or
    const rfx_dev_rows *const *dsrcs;   // sources resident on device 0 (spread)
    const int *colvar;
    size_t nboxes;
    const size_t *lo, *hi;         // nboxes x nsrc row ranges
    const rfx_gpu_box_tries *bt;   // sources sent as TrieArrays, or NULL
    size_t maxrows[LFTJ_MAX_SRC];  // the largest slice of each source
    bool outer[LFTJ_MAX_SRC];      // led by the first leading variable: held once, not per slot
    bool alias[LFTJ_MAX_SRC];      // one relation led by one variable with an earlier source: its slice
    rfx_rows *parts;               // per box (listing), or NULL
    uint64_t *counts;              // per box (counting), or NULL
    rfx_gpu_span_fn span;
    void *span_ctx;
    std::atomic<size_t> next;
    std::atomic<int> failed;
    std::atomic<size_t> copied;    // bytes copied from the host
    rfx_status st;
    char err[600];
} boxed_run;

static boxed_run *boxed_run_new(rfx_gpu *const *gs, int ndev, int nsrc, int nvars, const int *colvar, size_t nboxes,
                                const size_t *lo, const size_t *hi, rfx_rows *parts, uint64_t *counts,
                                rfx_gpu_span_fn span, void *span_ctx)
{
    boxed_run *R = new (std::nothrow) boxed_run;
    if (!R)
        return NULL;
    R->gs = gs;
    R->ndev = ndev;
    R->nsrc = nsrc;
    R->nvars = nvars;
    R->srcs = NULL;
    R->dsrcs = NULL;
    R->colvar = colvar;
    R->nboxes = nboxes;
    R->lo = lo;
    R->hi = hi;
    R->bt = NULL;
    R->parts = parts;
    R->counts = counts;
    R->span = span;
    R->span_ctx = span_ctx;
    R->next = 0;
    R->failed = 0;
    R->copied = 0;
    R->st = RFX_OK;
    R->err[0] = 0;
    return R;
}

static size_t take_box(boxed_run *R)
{
    if (R->failed.load())
        return R->nboxes;
    size_t b = R->next.fetch_add(1);
    return b < R->nboxes ? b : R->nboxes;
}

// Per box: the events that time its copy and its join (when spans are wanted).
typedef struct box_events {
    size_t box;
    cudaEvent_t c0, c1, j0, j1;
} box_events;

typedef struct box_worker {
    rfx_gpu *g;
    cudaStream_t copy;
    cudaEvent_t copied[2], used[2];
    uint32_t *buf[2][LFTJ_MAX_SRC];   // outer sources: buf[0] only, shared by both slots
    uint32_t *at[2][LFTJ_MAX_SRC];    // where the slot's slice of each source is (a buffer of the slot)
    size_t held_lo[2][LFTJ_MAX_SRC], held_hi[2][LFTJ_MAX_SRC];   // the rows buf[slot][s] holds
    box_events *ev;
    size_t nev, evcap;
    rfx_gpu_lftj_memo *memo;          // level 0 of the outer slices held, for the boxes that share them
    uint32_t *stage;                  // a TrieArray slice's piece: stage_vals values, then stage_roots
    size_t stage_vals, stage_roots;   // roots' values and as many starts
} box_worker;

static bool box_by_trie(const boxed_run *R, int s)
{
    return R->bt && R->bt->tries[s].val1;
}

// The rows box `box`'s slice of source s has on the device: a TrieArray slice's distinct rows.
static size_t box_rows(const boxed_run *R, size_t box, int s)
{
    const size_t k = box * R->nsrc + s;
    if (!box_by_trie(R, s))
        return R->hi[k] - R->lo[k];
    const uint32_t *p0 = R->bt->tries[s].ptr0;
    return (size_t)p0[R->bt->rhi[k]] - p0[R->bt->rlo[k]];
}

// The largest r in [lo, hi) with p0[r] <= v, given p0[lo] <= v (p0: a TrieArray's starts).
__host__ __device__ __forceinline__ size_t box_root_of(const uint32_t *p0, size_t lo, size_t hi, size_t v)
{
    return partition_point(lo + 1, hi, [=](size_t m) { return p0[m] <= v; }) - 1;
}

// The rows of a staged piece of a TrieArray slice: n values v1 from the slice's value
// `at` on, whose nr roots have values v0 and starts p0 (p0[0] <= at). Each block finds the
// roots of its first and last value, and each value its root within them.
#define BOX_EXPAND_ITEMS 8
__global__ void __launch_bounds__(256) k_box_trie_rows(const uint32_t *v0, const uint32_t *p0, uint32_t nr,
                                                       const uint32_t *v1, uint32_t n, uint32_t at, uint2 *out)
{
    __shared__ uint32_t win[2];
    const uint32_t base = blockIdx.x * (256u * BOX_EXPAND_ITEMS);
    if (threadIdx.x < 2) {
        uint32_t last = min(n, base + 256u * BOX_EXPAND_ITEMS) - 1;
        win[threadIdx.x] = (uint32_t)box_root_of(p0, 0, nr, (size_t)at + (threadIdx.x ? last : base));
    }
    __syncthreads();
    for (int k = 0; k < BOX_EXPAND_ITEMS; k++) {
        uint32_t i = base + k * 256u + threadIdx.x;
        if (i < n) {
            uint32_t r = (uint32_t)box_root_of(p0, win[0], win[1] + 1, (size_t)at + i);
            out[i] = make_uint2(v0[r], v1[i]);
        }
    }
}

// Box `box`'s slice of source s, sent as its TrieArray: piece by piece through the
// staging buffer (values, their roots' values and starts), each piece expanded into rows
// at dst on the copy stream. *bytes gets what crossed.
static rfx_status box_copy_trie(boxed_run *R, box_worker *W, size_t box, int s, uint32_t *dst, size_t *bytes)
{
    rfx_gpu *g = W->g;
    const rfx_gpu_host_trie *t = &R->bt->tries[s];
    const size_t k = box * R->nsrc + s, rhi = R->bt->rhi[k];
    const uint32_t *p0 = t->ptr0;
    size_t ra = R->bt->rlo[k], ia = p0[ra];
    const size_t first = ia, end = p0[rhi];
    uint32_t *sv1 = W->stage, *sv0 = W->stage + W->stage_vals, *sp0 = sv0 + W->stage_roots;
    while (ia < end) {
        size_t ib = end - ia < W->stage_vals ? end : ia + W->stage_vals;
        size_t rb = box_root_of(p0, ra, rhi, ib - 1) + 1;   // the roots holding values [ia, ib)
        if (rb - ra > W->stage_roots) {
            rb = ra + W->stage_roots;
            ib = p0[rb];
        }
        const size_t nv = ib - ia, nr = rb - ra;
        CK(cudaMemcpyAsync(sv1, t->val1 + ia, nv * 4, cudaMemcpyHostToDevice, W->copy));
        CK(cudaMemcpyAsync(sv0, t->val0 + ra, nr * 4, cudaMemcpyHostToDevice, W->copy));
        CK(cudaMemcpyAsync(sp0, p0 + ra, nr * 4, cudaMemcpyHostToDevice, W->copy));
        k_box_trie_rows<<<(unsigned)((nv + 256 * BOX_EXPAND_ITEMS - 1) / (256 * BOX_EXPAND_ITEMS)), 256, 0, W->copy>>>(
            sv0, sp0, (uint32_t)nr, sv1, (uint32_t)nv, (uint32_t)ia, (uint2 *)(dst + 2 * (ia - first)));
        CK_LAUNCH();
        *bytes += (nv + 2 * nr) * 4;
        ra = p0[rb] > ib ? rb - 1 : rb;   // the root holding value ib
        ia = ib;
    }
    return RFX_OK;
}

// The earlier source whose slice of box `box` is source s's (the same rows and range: one
// relation led by one variable), or -1.
static int box_same_slice(const boxed_run *R, size_t box, int s)
{
    const size_t lo = R->lo[box * R->nsrc + s], hi = R->hi[box * R->nsrc + s];
    for (int q = 0; q < s; q++)
        if (R->srcs[q]->data == R->srcs[s]->data && R->lo[box * R->nsrc + q] == lo && R->hi[box * R->nsrc + q] == hi)
            return q;
    return -1;
}

// Each slice is copied from the host only when no buffer on the device holds it yet:
// sources that are one relation led by one variable share a slice (a triangle's e(x,y)
// and e(x,z)); the outer variable's slices are held once for both slots and change only
// when the outer interval does (then after every join queued so far); the inner ones
// are double-buffered, the next box's copied while this one joins.
static rfx_status box_copy(boxed_run *R, box_worker *W, size_t box, int slot, box_events *e)
{
    rfx_gpu *g = W->g;
    CK(cudaStreamWaitEvent(W->copy, W->used[slot], 0));   // the slot's previous box is joined
    if (e)
        CK(cudaEventRecord(e->c0, W->copy));
    for (int s = 0; s < R->nsrc; s++) {
        const rfx_rows *r = R->srcs[s];
        size_t lo = R->lo[box * R->nsrc + s], hi = R->hi[box * R->nsrc + s], bytes = (hi - lo) * (size_t)r->arity * 4;
        int k = R->outer[s] ? 0 : slot;
        W->at[slot][s] = W->buf[k][s];
        int same = box_same_slice(R, box, s);
        if (same >= 0) {
            W->at[slot][s] = W->at[slot][same];
            continue;
        }
        if (!bytes || (W->held_lo[k][s] == lo && W->held_hi[k][s] == hi))
            continue;
        if (R->outer[s]) {   // the other slot's join reads it too; level 0 changes with it
            CK(cudaStreamWaitEvent(W->copy, W->used[slot ^ 1], 0));
            rfx_gpu_lftj_memo_forget(g, W->memo);
        }
        if (box_by_trie(R, s)) {
            size_t sent = 0;
            rfx_status st = box_copy_trie(R, W, box, s, W->buf[k][s], &sent);
            if (st != RFX_OK)
                return st;
            bytes = sent;
        } else
            CK(cudaMemcpyAsync(W->buf[k][s], r->data + lo * (size_t)r->arity, bytes, cudaMemcpyHostToDevice, W->copy));
        R->copied += bytes;
        W->held_lo[k][s] = lo;
        W->held_hi[k][s] = hi;
    }
    if (e)
        CK(cudaEventRecord(e->c1, W->copy));
    CK(cudaEventRecord(W->copied[slot], W->copy));
    return RFX_OK;
}

// Box `box` joined over its slices vp: its count, or its bindings downloaded to the host.
// memo: level 0 of the previous box with the same outer slices, or NULL.
static rfx_status join_views(boxed_run *R, rfx_gpu *g, const rfx_dev_rows *const *vp, size_t box,
                             rfx_gpu_lftj_memo *memo)
{
    if (R->counts)
        return rfx_gpu_lftj_memo_run(g, vp, R->colvar, R->nsrc, R->nvars, NULL, &R->counts[box], memo);
    rfx_dev_rows out;
    rfx_gpu_rows_init(&out, R->nvars);
    rfx_status st = rfx_gpu_lftj_memo_run(g, vp, R->colvar, R->nsrc, R->nvars, &out, NULL, memo);
    if (st == RFX_OK)
        st = rfx_gpu_download(g, &out, &R->parts[box]);
    rfx_gpu_rows_free(g, &out);
    return st;
}

// Whether the slot already holds every inner slice of box `box` (a slice that is an earlier
// source's is not copied: box_same_slice).
static bool box_inner_held(const boxed_run *R, const box_worker *W, size_t box, int slot)
{
    for (int s = 0; s < R->nsrc; s++) {
        size_t lo = R->lo[box * R->nsrc + s], hi = R->hi[box * R->nsrc + s];
        if (!R->outer[s] && hi > lo && box_same_slice(R, box, s) < 0 &&
            (W->held_lo[slot][s] != lo || W->held_hi[slot][s] != hi))
            return false;
    }
    return true;
}

static rfx_status box_join(boxed_run *R, box_worker *W, size_t box, int slot, box_events *e)
{
    rfx_gpu *g = W->g;
    CK(cudaStreamWaitEvent(g->stream, W->copied[slot], 0));
    if (e)
        CK(cudaEventRecord(e->j0, g->stream));
    rfx_dev_rows views[LFTJ_MAX_SRC];
    const rfx_dev_rows *vp[LFTJ_MAX_SRC];
    for (int s = 0; s < R->nsrc; s++) {
        size_t n = box_rows(R, box, s);
        views[s] = (rfx_dev_rows){n ? W->at[slot][s] : NULL, n, n, R->srcs[s]->arity};
        vp[s] = &views[s];
    }
    rfx_status st = join_views(R, g, vp, box, W->memo);
    if (st != RFX_OK)
        return st;
    if (e)
        CK(cudaEventRecord(e->j1, g->stream));
    CK(cudaEventRecord(W->used[slot], g->stream));
    return RFX_OK;
}

static box_events *box_events_new(box_worker *W, size_t box)
{
    if (W->nev == W->evcap) {
        size_t cap = W->evcap ? 2 * W->evcap : 64;
        box_events *n = (box_events *)realloc(W->ev, cap * sizeof *n);
        if (!n)
            return NULL;
        W->ev = n;
        W->evcap = cap;
    }
    box_events *e = &W->ev[W->nev];
    e->box = box;
    if (cudaEventCreate(&e->c0) != cudaSuccess || cudaEventCreate(&e->c1) != cudaSuccess ||
        cudaEventCreate(&e->j0) != cudaSuccess || cudaEventCreate(&e->j1) != cudaSuccess) {
        cudaGetLastError();
        return NULL;
    }
    W->nev++;
    return e;
}

// Copy of the next box, then the join of this one, until the boxes run out.
static rfx_status box_loop(boxed_run *R, box_worker *W)
{
    rfx_gpu *g = W->g;
    for (int k = 0; k < 2; k++)
        for (int s = 0; s < R->nsrc; s++) {
            if ((k && R->outer[s]) || R->alias[s])
                continue;     // held once, or another source's slice
            uint32_t *p;
            ALLOC(p, R->maxrows[s] * (size_t)R->srcs[s]->arity * 4);
            W->buf[k][s] = p;
        }
    bool tries = false;
    for (int s = 0; s < R->nsrc; s++)
        tries |= box_by_trie(R, s);
    if (tries) {   // values and (a quarter as many) roots' values and starts
        size_t words = R->bt->stage_bytes / 4;
        W->stage_vals = words * 2 / 3 > 64 ? words * 2 / 3 : 64;
        W->stage_roots = W->stage_vals / 4 > 16 ? W->stage_vals / 4 : 16;
        ALLOC(W->stage, (W->stage_vals + 2 * W->stage_roots) * 4);
    }
    CK(cudaStreamSynchronize(g->stream));   // the pool's allocations are ordered on g->stream
    size_t cur = take_box(R);
    int slot = 0;
    box_events *ecur = NULL;
    if (cur < R->nboxes) {
        if (R->span && !(ecur = box_events_new(W, cur)))
            return RFX_ERR_NOMEM;
        rfx_status st = box_copy(R, W, cur, slot, ecur);
        if (st != RFX_OK)
            return st;
    }
    while (cur < R->nboxes) {
        size_t nxt = take_box(R);
        box_events *enxt = NULL;
        if (nxt < R->nboxes) {
            if (R->span && !(enxt = box_events_new(W, nxt)))
                return RFX_ERR_NOMEM;
            if (ecur)   // the array may have moved
                ecur = &W->ev[W->nev - 2];
        }
        /* the next box's copy goes ahead of this box's join, unless it replaces an outer
         * slice this join reads: then after it (the copy waits for the join's event) */
        bool outer_changes = false;
        for (int s = 0; nxt < R->nboxes && s < R->nsrc; s++)
            outer_changes |= R->outer[s] && !R->alias[s] && R->hi[nxt * R->nsrc + s] > R->lo[nxt * R->nsrc + s] &&
                             (W->held_lo[0][s] != R->lo[nxt * R->nsrc + s] || W->held_hi[0][s] != R->hi[nxt * R->nsrc + s]);
        /* where the next box (the first of an outer interval, the boxes in snake order) reads
         * the inner slices this one does, it stays in this slot: only its outer slices are
         * copied, after this join, as they would be anyway */
        int nslot = outer_changes && box_inner_held(R, W, nxt, slot) ? slot : slot ^ 1;
        rfx_status st = RFX_OK;
        if (nxt < R->nboxes && !outer_changes)
            st = box_copy(R, W, nxt, nslot, enxt);
        if (st == RFX_OK)
            st = box_join(R, W, cur, slot, ecur);
        if (st == RFX_OK && nxt < R->nboxes && outer_changes)
            st = box_copy(R, W, nxt, nslot, enxt);
        if (st != RFX_OK)
            return st;
        cur = nxt;
        ecur = enxt;
        slot = nslot;
    }
    CK(cudaStreamSynchronize(W->copy));
    CK(cudaStreamSynchronize(g->stream));
    return RFX_OK;
}

static void box_report(boxed_run *R, box_worker *W, int d, cudaEvent_t base, double host_base)
{
    for (size_t i = 0; i < W->nev; i++) {
        box_events *e = &W->ev[i];
        float c0, c1, j0, j1;
        if (cudaEventElapsedTime(&c0, base, e->c0) == cudaSuccess && cudaEventElapsedTime(&c1, base, e->c1) == cudaSuccess &&
            cudaEventElapsedTime(&j0, base, e->j0) == cudaSuccess && cudaEventElapsedTime(&j1, base, e->j1) == cudaSuccess) {
            R->span(R->span_ctx, "copy box", d, 1, e->box, host_base + c0 * 1e-3, host_base + c1 * 1e-3);
            R->span(R->span_ctx, "join box", d, 0, e->box, host_base + j0 * 1e-3, host_base + j1 * 1e-3);
        }
        cudaGetLastError();
    }
}

static void box_worker_run(int d, void *arg)
{
    boxed_run *R = (boxed_run *)arg;
    box_worker W;
    memset(&W, 0, sizeof W);
    W.g = R->gs[d];
    for (int k = 0; k < 2; k++)
        for (int s = 0; s < LFTJ_MAX_SRC; s++)
            W.held_lo[k][s] = W.held_hi[k][s] = SIZE_MAX;   // nothing held
    rfx_gpu *g = W.g;
    rfx_status st = RFX_OK;
    cudaEvent_t base = NULL;
    W.memo = rfx_gpu_lftj_memo_new();   // none: each box joins level 0 itself
    double host_base = 0;
    cudaError_t e = cudaSetDevice(g->device);
    // the copy stream's expansions of TrieArray slices (box_copy_trie) take multiprocessors
    // ahead of the join's blocks: the copies behind them wait on them
    int least = 0, greatest = 0;
    if (e == cudaSuccess)
        e = cudaDeviceGetStreamPriorityRange(&least, &greatest);
    if (e == cudaSuccess)
        e = cudaStreamCreateWithPriority(&W.copy, cudaStreamNonBlocking, greatest);
    for (int k = 0; k < 2 && e == cudaSuccess; k++)
        if ((e = cudaEventCreateWithFlags(&W.copied[k], cudaEventDisableTiming)) == cudaSuccess &&
            (e = cudaEventCreateWithFlags(&W.used[k], cudaEventDisableTiming)) == cudaSuccess)
            e = cudaEventRecord(W.used[k], g->stream);
    if (e == cudaSuccess && R->span && (e = cudaEventCreate(&base)) == cudaSuccess &&
        (e = cudaEventRecord(base, g->stream)) == cudaSuccess && (e = cudaEventSynchronize(base)) == cudaSuccess)
        host_base = rfx_seconds();
    st = e == cudaSuccess ? box_loop(R, &W) : fail(g, e, "stream or event creation", __FILE__, __LINE__);
    if (st != RFX_OK) {
        cudaStreamSynchronize(W.copy);   // nothing may still read the buffers
        cudaStreamSynchronize(g->stream);
        cudaGetLastError();
    } else if (R->span)
        box_report(R, &W, d, base, host_base);
    for (int k = 0; k < 2; k++)
        for (int s = 0; s < R->nsrc; s++)
            rfx_gpu_free(g, W.buf[k][s]);
    rfx_gpu_free(g, W.stage);
    if (W.memo)
        rfx_gpu_lftj_memo_free(g, W.memo);
    for (size_t i = 0; i < W.nev; i++) {
        cudaEventDestroy(W.ev[i].c0);
        cudaEventDestroy(W.ev[i].c1);
        cudaEventDestroy(W.ev[i].j0);
        cudaEventDestroy(W.ev[i].j1);
    }
    free(W.ev);
    for (int k = 0; k < 2; k++) {
        if (W.copied[k])
            cudaEventDestroy(W.copied[k]);
        if (W.used[k])
            cudaEventDestroy(W.used[k]);
    }
    if (base)
        cudaEventDestroy(base);
    if (W.copy)
        cudaStreamDestroy(W.copy);
    if (st != RFX_OK && R->failed.exchange(1) == 0) {
        R->st = st;
        snprintf(R->err, sizeof R->err, "device %d: %s", g->device,
                 st == RFX_ERR_NOMEM && !g->err[0] ? "out of memory" : g->err);
    }
}

extern "C" bool rfx_gpu_host_register(void *p, size_t bytes)
{
    // read-only where the device allows it (unpinning is then faster); mapped, for kernels
    // that read host memory in place (gpu_induced.cuh)
    const unsigned flags = cudaHostRegisterPortable | cudaHostRegisterMapped;
    cudaError_t e = cudaHostRegister(p, bytes, flags | cudaHostRegisterReadOnly);
    if (e != cudaSuccess) {
        cudaGetLastError();
        e = cudaHostRegister(p, bytes, flags);
    }
    cudaGetLastError();
    return e == cudaSuccess;
}

extern "C" void rfx_gpu_host_unregister(void *p)
{
    cudaHostUnregister(p);
    cudaGetLastError();
}

extern "C" bool rfx_gpu_host_registered(const void *p, size_t bytes)
{
    if (!p || !bytes)
        return false;
    for (const char *at : {(const char *)p, (const char *)p + bytes - 1}) {
        cudaPointerAttributes a;
        const bool pinned = cudaPointerGetAttributes(&a, at) == cudaSuccess && a.type == cudaMemoryTypeHost;
        cudaGetLastError();
        if (!pinned)
            return false;
    }
    return true;
}

extern "C" void rfx_gpu_pin_sources(const rfx_gpu *g, const rfx_rows *const *srcs, int nsrc, bool *pinned)
{
    cudaSetDevice(g->device);   // the thread's device: registering needs a context
    for (int s = 0; s < nsrc; s++) {
        pinned[s] = false;
        bool seen = false;
        for (int q = 0; q < s; q++)
            seen |= srcs[q]->data == srcs[s]->data;
        const size_t bytes = srcs[s]->n * (size_t)srcs[s]->arity * 4;
        if (seen || !srcs[s]->data || !bytes || rfx_gpu_host_registered(srcs[s]->data, bytes))
            continue;   // registered by its owner (the out-of-core layer's inputs): not ours to undo
        pinned[s] = rfx_gpu_host_register(srcs[s]->data, bytes);
    }
}

extern "C" void rfx_gpu_unpin_sources(const rfx_rows *const *srcs, int nsrc, const bool *pinned)
{
    for (int s = 0; s < nsrc; s++)
        if (pinned[s])
            rfx_gpu_host_unregister(srcs[s]->data);
}

extern "C" rfx_status rfx_gpu_lftj_boxes(rfx_gpu *const *gs, int ndev, const rfx_rows *const *srcs, const int *colvar,
                                         int nsrc, int nvars, size_t nboxes, const size_t *lo, const size_t *hi,
                                         const rfx_gpu_box_tries *tries, rfx_rows *parts, uint64_t *counts,
                                         rfx_gpu_span_fn span, void *span_ctx, size_t *host_bytes, char *err,
                                         size_t errcap)
{
    if (nsrc < 1 || nsrc > LFTJ_MAX_SRC || ndev < 1) {
        snprintf(err, errcap, "boxed leapfrog triejoin of %d sources on %d devices", nsrc, ndev);
        return RFX_ERR_LIMIT;
    }
    boxed_run *R = boxed_run_new(gs, ndev, nsrc, nvars, colvar, nboxes, lo, hi, parts, counts, span, span_ctx);
    if (!R)
        return RFX_ERR_NOMEM;
    R->srcs = srcs;
    R->bt = tries;
    int first = 64;
    for (int s = 0, o = 0; s < nsrc; o += srcs[s]->arity, s++)
        first = colvar[o] < first ? colvar[o] : first;
    for (int s = 0, o = 0; s < nsrc; o += srcs[s]->arity, s++) {
        R->outer[s] = colvar[o] == first;
        R->alias[s] = false;
        for (int q = 0, p = 0; q < s; p += srcs[q]->arity, q++)
            R->alias[s] |= srcs[q]->data == srcs[s]->data && colvar[p] == colvar[o];
        R->maxrows[s] = 0;
        for (size_t b = 0; b < nboxes; b++)
            R->maxrows[s] = hi[b * nsrc + s] - lo[b * nsrc + s] > R->maxrows[s] ? hi[b * nsrc + s] - lo[b * nsrc + s]
                                                                                 : R->maxrows[s];
    }
    rfx_parallel_for(ndev, ndev, box_worker_run, R);
    cudaSetDevice(gs[0]->device);
    rfx_status st = R->st;
    if (host_bytes)
        *host_bytes = R->copied.load();
    if (st != RFX_OK)
        snprintf(err, errcap, "%s", R->err);
    delete R;
    return st;
}

// ---- several devices, sources resident ------------------------------------------------
// A join whose sources fit on each device: every device holds the whole sources (device
// 0's own rows; a peer copy, once, on the others) and joins intervals of the outer
// variable taken from a shared queue. An interval's slices are views into the resident
// rows, so no box copies anything. A device that cannot hold the copy takes no intervals.

// out[i] = the first row whose column 0 is >= cuts[i].
__global__ void k_lftj_lower_bounds(const uint32_t *data, int arity, size_t n, const uint64_t *cuts, int ncuts,
                                    uint64_t *out)
{
    GRID_STRIDE(i, (size_t)ncuts) out[i] = lftj_first_at_least(data, arity, n, cuts[i]);
}

static void spread_worker_run(int d, void *arg)
{
    boxed_run *R = (boxed_run *)arg;
    rfx_gpu *g = R->gs[d], *home = R->gs[0];
    uint32_t *data[LFTJ_MAX_SRC] = {NULL};
    bool owned[LFTJ_MAX_SRC] = {false};
    rfx_status st = RFX_OK;
    cudaError_t e = cudaSetDevice(g->device);
    if (e != cudaSuccess)
        st = fail(g, e, "cudaSetDevice", __FILE__, __LINE__);
    double t0 = rfx_seconds();
    bool held = true;
    for (int s = 0; s < R->nsrc && st == RFX_OK && held; s++) {
        const rfx_dev_rows *r = R->dsrcs[s];
        data[s] = r->data;
        if (d == 0 || !r->n)
            continue;
        int same = -1;
        for (int q = 0; q < s && same < 0; q++)
            if (R->dsrcs[q]->data == r->data && R->dsrcs[q]->n >= r->n && R->dsrcs[q]->arity == r->arity)
                same = q;
        if (same >= 0) {
            data[s] = data[same];
            continue;
        }
        size_t bytes = r->n * (size_t)r->arity * 4;
        data[s] = (uint32_t *)rfx_gpu_alloc(g, bytes);
        if (!data[s]) {
            held = false;   // this device sits out; the others take its intervals
            break;
        }
        owned[s] = true;
        e = cudaMemcpyPeerAsync(data[s], g->device, r->data, home->device, bytes, g->stream);
        if (e != cudaSuccess)
            st = fail(g, e, "cudaMemcpyPeerAsync", __FILE__, __LINE__);
        R->copied += bytes;
    }
    if (st == RFX_OK && held && d > 0) {
        e = cudaStreamSynchronize(g->stream);
        if (e != cudaSuccess)
            st = fail(g, e, "cudaStreamSynchronize", __FILE__, __LINE__);
        else if (R->span)
            R->span(R->span_ctx, "copy sources", d, 1, 0, t0, rfx_seconds());
    }
    for (size_t box; st == RFX_OK && held && (box = take_box(R)) < R->nboxes;) {
        rfx_dev_rows views[LFTJ_MAX_SRC];
        const rfx_dev_rows *vp[LFTJ_MAX_SRC];
        for (int s = 0; s < R->nsrc; s++) {
            size_t lo = R->lo[box * R->nsrc + s], n = R->hi[box * R->nsrc + s] - lo;
            int a = R->dsrcs[s]->arity;
            views[s] = (rfx_dev_rows){n ? data[s] + lo * (size_t)a : NULL, n, n, a};
            vp[s] = &views[s];
        }
        double j0 = rfx_seconds();
        st = join_views(R, g, vp, box, NULL);
        if (st == RFX_OK && R->span)
            R->span(R->span_ctx, "join box", d, 0, box, j0, rfx_seconds());
    }
    cudaStreamSynchronize(g->stream);
    for (int s = 0; s < R->nsrc; s++)
        if (owned[s])
            rfx_gpu_free(g, data[s]);
    if (!held)
        snprintf(g->err, sizeof g->err, "%s", "");   // sitting out is not a failure
    if (st != RFX_OK && R->failed.exchange(1) == 0) {
        R->st = st;
        snprintf(R->err, sizeof R->err, "device %d: %s", g->device,
                 st == RFX_ERR_NOMEM && !g->err[0] ? "out of memory" : g->err);
    }
}

extern "C" rfx_status rfx_gpu_lftj_spread(rfx_gpu *const *gs, int ndev, const rfx_dev_rows *const *srcs,
                                          const int *colvar, int nsrc, int nvars, int nparts, rfx_rows *dst,
                                          uint64_t *count, rfx_gpu_span_fn span, void *span_ctx, size_t *peer_bytes,
                                          char *err, size_t errcap)
{
    rfx_gpu *g = gs[0];
    if (nsrc < 1 || nsrc > LFTJ_MAX_SRC || ndev < 1 || nparts < 1 || nparts > 4096) {
        snprintf(err, errcap, "spread leapfrog triejoin of %d sources on %d devices in %d parts", nsrc, ndev, nparts);
        return RFX_ERR_LIMIT;
    }
    // the outer variable, and the largest source it leads: its rows are cut in equal shares
    int first = 64, big = -1;
    for (int s = 0, o = 0; s < nsrc; o += srcs[s]->arity, s++)
        first = colvar[o] < first ? colvar[o] : first;
    for (int s = 0, o = 0; s < nsrc; o += srcs[s]->arity, s++)
        if (colvar[o] == first && (big < 0 || srcs[s]->n > srcs[big]->n))
            big = s;
    std::vector<uint32_t> at_value((size_t)nparts, 0);
    std::vector<uint64_t> cuts;
    cuts.push_back(0);
    CK(cudaStreamSynchronize(g->stream));   // the sources are complete before other devices read them
    for (int p = 1; p < nparts && srcs[big]->n; p++) {
        size_t at = srcs[big]->n * (size_t)p / (size_t)nparts;
        CK(cudaMemcpyAsync(&at_value[p], srcs[big]->data + at * (size_t)srcs[big]->arity, 4, cudaMemcpyDeviceToHost,
                           g->stream));
    }
    CK(cudaStreamSynchronize(g->stream));
    for (int p = 1; p < nparts && srcs[big]->n; p++)
        if (at_value[p] > cuts.back())
            cuts.push_back(at_value[p]);
    cuts.push_back((uint64_t)1 << 32);
    size_t nboxes = cuts.size() - 1, nc = cuts.size();
    std::vector<size_t> lo(nboxes * nsrc), hi(nboxes * nsrc);
    std::vector<uint64_t> bounds(nc);
    uint64_t *d_cuts, *d_bounds;
    ALLOC(d_cuts, nc * 8);
    d_bounds = (uint64_t *)rfx_gpu_alloc(g, nc * 8);
    if (!d_bounds) {
        rfx_gpu_free(g, d_cuts);
        return RFX_ERR_NOMEM;
    }
    rfx_status st = RFX_OK;
    cudaError_t e = cudaMemcpyAsync(d_cuts, cuts.data(), nc * 8, cudaMemcpyHostToDevice, g->stream);
    for (int s = 0, o = 0; s < nsrc && e == cudaSuccess; o += srcs[s]->arity, s++) {
        if (colvar[o] != first) {
            for (size_t b = 0; b < nboxes; b++) {
                lo[b * nsrc + s] = 0;
                hi[b * nsrc + s] = srcs[s]->n;
            }
            continue;
        }
        k_lftj_lower_bounds<<<grid_for(nc), 256, 0, g->stream>>>(srcs[s]->data, srcs[s]->arity, srcs[s]->n, d_cuts,
                                                                   (int)nc, d_bounds);
        if ((e = cudaGetLastError()) == cudaSuccess &&
            (e = cudaMemcpyAsync(bounds.data(), d_bounds, nc * 8, cudaMemcpyDeviceToHost, g->stream)) == cudaSuccess)
            e = cudaStreamSynchronize(g->stream);
        for (size_t b = 0; b < nboxes && e == cudaSuccess; b++) {
            lo[b * nsrc + s] = (size_t)bounds[b];
            hi[b * nsrc + s] = (size_t)bounds[b + 1];
        }
    }
    if (e != cudaSuccess)
        st = fail(g, e, "cutting the outer variable", __FILE__, __LINE__);
    rfx_gpu_free(g, d_cuts);
    rfx_gpu_free(g, d_bounds);
    if (st != RFX_OK)
        return st;
    std::vector<uint64_t> counts(count ? nboxes : 0);
    std::vector<rfx_rows> parts(count ? 0 : nboxes);
    for (size_t b = 0; b < parts.size(); b++)
        rfx_rows_init(&parts[b], nvars);
    boxed_run *R = boxed_run_new(gs, ndev, nsrc, nvars, colvar, nboxes, lo.data(), hi.data(),
                                 count ? NULL : parts.data(), count ? counts.data() : NULL, span, span_ctx);
    if (!R)
        return RFX_ERR_NOMEM;
    R->dsrcs = srcs;
    rfx_parallel_for(ndev, ndev, spread_worker_run, R);
    cudaSetDevice(g->device);
    st = R->st;
    if (st != RFX_OK)
        snprintf(err, errcap, "%s", R->err);
    if (peer_bytes)
        *peer_bytes = R->copied.load();
    delete R;
    if (st == RFX_OK && count) {
        *count = 0;
        for (size_t b = 0; b < nboxes; b++)
            *count += counts[b];
    }
    if (st == RFX_OK && !count)   // intervals of the first variable, in order: sorted
        st = rfx_rows_concat(parts.data(), nboxes, dst, 1);
    for (size_t b = 0; b < parts.size(); b++)
        rfx_rows_free(&parts[b]);
    return st;
}
