// gpu_boxed.cuh: the leapfrog triejoin box by box, for joins whose inputs do not fit on
// the device (Red Fox thesis §6.3) or that are spread over several devices (§6.4).
// Included by primitives/cuda_prims.cu after gpu_lftj.cuh.
//
// The sources stay on the host. A box's slice of a sorted source is one contiguous row
// range, so "slicing" a box is free and its upload is one copy per source: the host
// memory is pinned once (cudaHostRegister) and the copies of box i+1 run on a stream of
// their own while box i is being joined (two slots of device buffers, ordered by events).
// Each device has a worker thread that takes the next box from a shared counter, so
// faster devices take more boxes; results are kept per box and put in box order by the
// caller.
#include <atomic>
#include <new>

typedef struct boxed_run {
    rfx_gpu *const *gs;
    int ndev, nsrc, nvars;
    const rfx_rows *const *srcs;
    const int *colvar;
    size_t nboxes;
    const size_t *lo, *hi;         // nboxes x nsrc row ranges
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

static double host_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
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
} box_worker;

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
        int same = -1;
        for (int q = 0; q < s && same < 0; q++)
            if (R->srcs[q]->data == r->data && R->lo[box * R->nsrc + q] == lo && R->hi[box * R->nsrc + q] == hi)
                same = q;
        if (same >= 0) {
            W->at[slot][s] = W->at[slot][same];
            continue;
        }
        if (!bytes || (W->held_lo[k][s] == lo && W->held_hi[k][s] == hi))
            continue;
        if (R->outer[s])   // the other slot's join reads it too
            CK(cudaStreamWaitEvent(W->copy, W->used[slot ^ 1], 0));
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

static rfx_status box_join(boxed_run *R, box_worker *W, size_t box, int slot, box_events *e)
{
    rfx_gpu *g = W->g;
    CK(cudaStreamWaitEvent(g->stream, W->copied[slot], 0));
    if (e)
        CK(cudaEventRecord(e->j0, g->stream));
    rfx_dev_rows views[LFTJ_MAX_SRC];
    const rfx_dev_rows *vp[LFTJ_MAX_SRC];
    for (int s = 0; s < R->nsrc; s++) {
        size_t n = R->hi[box * R->nsrc + s] - R->lo[box * R->nsrc + s];
        views[s] = (rfx_dev_rows){n ? W->at[slot][s] : NULL, n, n, R->srcs[s]->arity};
        vp[s] = &views[s];
    }
    rfx_status st;
    if (R->counts)
        st = rfx_gpu_lftj(g, vp, R->colvar, R->nsrc, R->nvars, NULL, &R->counts[box]);
    else {
        rfx_dev_rows out;
        rfx_gpu_rows_init(&out, R->nvars);
        st = rfx_gpu_lftj(g, vp, R->colvar, R->nsrc, R->nvars, &out, NULL);
        if (st == RFX_OK)
            st = rfx_gpu_download(g, &out, &R->parts[box]);
        rfx_gpu_rows_free(g, &out);
    }
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
        rfx_status st = RFX_OK;
        if (nxt < R->nboxes && !outer_changes)
            st = box_copy(R, W, nxt, slot ^ 1, enxt);
        if (st == RFX_OK)
            st = box_join(R, W, cur, slot, ecur);
        if (st == RFX_OK && nxt < R->nboxes && outer_changes)
            st = box_copy(R, W, nxt, slot ^ 1, enxt);
        if (st != RFX_OK)
            return st;
        cur = nxt;
        ecur = enxt;
        slot ^= 1;
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
    double host_base = 0;
    cudaError_t e = cudaSetDevice(g->device);
    if (e == cudaSuccess)
        e = cudaStreamCreateWithFlags(&W.copy, cudaStreamNonBlocking);
    for (int k = 0; k < 2 && e == cudaSuccess; k++)
        if ((e = cudaEventCreateWithFlags(&W.copied[k], cudaEventDisableTiming)) == cudaSuccess &&
            (e = cudaEventCreateWithFlags(&W.used[k], cudaEventDisableTiming)) == cudaSuccess)
            e = cudaEventRecord(W.used[k], g->stream);
    if (e == cudaSuccess && R->span && (e = cudaEventCreate(&base)) == cudaSuccess &&
        (e = cudaEventRecord(base, g->stream)) == cudaSuccess && (e = cudaEventSynchronize(base)) == cudaSuccess)
        host_base = host_seconds();
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

extern "C" rfx_status rfx_gpu_lftj_boxes(rfx_gpu *const *gs, int ndev, const rfx_rows *const *srcs, const int *colvar,
                                         int nsrc, int nvars, size_t nboxes, const size_t *lo, const size_t *hi,
                                         rfx_rows *parts, uint64_t *counts, rfx_gpu_span_fn span, void *span_ctx,
                                         size_t *host_bytes, char *err, size_t errcap)
{
    if (nsrc < 1 || nsrc > LFTJ_MAX_SRC || ndev < 1) {
        snprintf(err, errcap, "boxed leapfrog triejoin of %d sources on %d devices", nsrc, ndev);
        return RFX_ERR_LIMIT;
    }
    boxed_run *R = new (std::nothrow) boxed_run;
    if (!R)
        return RFX_ERR_NOMEM;
    R->gs = gs;
    R->ndev = ndev;
    R->nsrc = nsrc;
    R->nvars = nvars;
    R->srcs = srcs;
    R->colvar = colvar;
    R->nboxes = nboxes;
    R->lo = lo;
    R->hi = hi;
    R->parts = parts;
    R->counts = counts;
    R->span = span;
    R->span_ctx = span_ctx;
    R->next = 0;
    R->failed = 0;
    R->copied = 0;
    R->st = RFX_OK;
    R->err[0] = 0;
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
    // Pin each distinct source once (portable: for every device), so copies are
    // asynchronous; a source that cannot be pinned is still copied, only not overlapped.
    bool pinned[LFTJ_MAX_SRC] = {false};
    for (int s = 0; s < nsrc; s++) {
        bool seen = false;
        for (int q = 0; q < s; q++)
            seen |= srcs[q]->data == srcs[s]->data;
        if (seen || !srcs[s]->data || !srcs[s]->n || !srcs[s]->arity)
            continue;
        cudaError_t e = cudaHostRegister(srcs[s]->data, srcs[s]->n * (size_t)srcs[s]->arity * 4, cudaHostRegisterPortable);
        pinned[s] = e == cudaSuccess;
        cudaGetLastError();
    }
    rfx_parallel_for(ndev, ndev, box_worker_run, R);
    for (int s = 0; s < nsrc; s++)
        if (pinned[s])
            cudaHostUnregister(srcs[s]->data);
    cudaGetLastError();
    cudaSetDevice(gs[0]->device);
    rfx_status st = R->st;
    if (host_bytes)
        *host_bytes = R->copied.load();
    if (st != RFX_OK)
        snprintf(err, errcap, "%s", R->err);
    delete R;
    return st;
}
