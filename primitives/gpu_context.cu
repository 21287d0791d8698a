// gpu_context.cu: the device context: opening, memory pool and budget, reclaiming after a failure, host staging, uploads and downloads, the copy bandwidth probe.
#include "gpu_core.cuh"

#include <atomic>
#include <pthread.h>
#include <stdint.h>

// ---- context --------------------------------------------------------------------------
extern "C" int rfx_gpu_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}

extern "C" size_t rfx_gpu_free_bytes(int device)
{
    size_t free_b = 0, total_b = 0;
    if (cudaSetDevice(device) != cudaSuccess || cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return free_b;
}

extern "C" bool rfx_gpu_device_name(int device, char *name, size_t cap)
{
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    snprintf(name, cap, "%s", prop.name);
    return true;
}

// ---- the driver started ahead of need ------------------------------------------------------
// Most of a device's start is the driver's initialisation and the device's primary context;
// a thread of its own makes them while the host parses, plans and reads facts, so that
// rfx_gpu_open later finds them made. Once a process; detached: nothing waits for it (a
// process may end before it does: rfx_gpu_warm_state says so, and the rfx command then
// ends with _exit rather than run the runtime's teardown under it).
static std::atomic<int> warm_state{RFX_WARM_NONE};
static double warm_t0;                   // written before the thread starts, read after state

static void *warm_thread(void *arg)
{
    int device = (int)(intptr_t)arg, n = 0;
    bool ready = cudaGetDeviceCount(&n) == cudaSuccess && device < n && cudaSetDevice(device) == cudaSuccess &&
                 cudaFree(0) == cudaSuccess;   // cudaFree(0) makes the primary context
    cudaGetLastError();
    warm_state.store(ready ? RFX_WARM_READY : RFX_WARM_FAILED);
    return NULL;
}

extern "C" void rfx_gpu_warm(int device)
{
    int none = RFX_WARM_NONE;
    if (device < 0 || !warm_state.compare_exchange_strong(none, RFX_WARM_RUNNING))
        return;
    warm_t0 = rfx_seconds();
    pthread_attr_t attr;
    pthread_t tid;
    bool started = pthread_attr_init(&attr) == 0;
    if (started) {
        started = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0 &&
                  pthread_create(&tid, &attr, warm_thread, (void *)(intptr_t)device) == 0;
        pthread_attr_destroy(&attr);
    }
    if (!started)
        warm_state.store(RFX_WARM_FAILED);
}

extern "C" int rfx_gpu_warm_state(double *t0)
{
    int st = warm_state.load();
    if (t0)
        *t0 = st ? warm_t0 : 0;
    return st;
}

// What every context has of its own: a stream, the allocation records, the division flag
// and the words kernels write for the host. false (with the reason in err) on failure,
// everything made so far undone.
static bool gpu_own_parts(rfx_gpu *g, char *err, size_t errcap)
{
    cudaError_t e = cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        snprintf(err, errcap, "device %d: %s", g->device, cudaGetErrorString(e));
        cudaGetLastError();
        g->stream = NULL;
        return false;
    }
    g->live = new (std::nothrow) std::unordered_map<void *, uint64_t>();
    if (!g->live || cudaMallocFromPoolAsync((void **)&g->d_flag, sizeof(unsigned), g->pool, g->stream) != cudaSuccess ||
        cudaHostAlloc((void **)&g->h_words, RFX_H_WORDS * sizeof(uint64_t), cudaHostAllocMapped) != cudaSuccess ||
        cudaHostGetDevicePointer((void **)&g->d_words, g->h_words, 0) != cudaSuccess) {
        snprintf(err, errcap, "device %d: cannot allocate", g->device);
        cudaGetLastError();
        if (g->d_flag)
            cudaFreeAsync(g->d_flag, g->stream);
        if (g->h_words)
            cudaFreeHost(g->h_words);
        cudaStreamSynchronize(g->stream);
        delete g->live;
        cudaStreamDestroy(g->stream);
        g->live = NULL;
        g->d_flag = NULL;
        g->h_words = NULL;
        g->stream = NULL;
        return false;
    }
    return true;
}

extern "C" rfx_gpu *rfx_gpu_open(int device, size_t budget, char *err, size_t errcap)
{
    rfx_gpu *g = (rfx_gpu *)calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, errcap, "out of host memory");
        return NULL;
    }
    g->device = device;
    g->tune = &rfx_tuning_defaults;
    cudaError_t e;
    cudaDeviceProp prop;
    size_t free_b = 0, total_b = 0;
    if ((e = cudaSetDevice(device)) != cudaSuccess || (e = cudaGetDeviceProperties(&prop, device)) != cudaSuccess ||
        (e = cudaMemGetInfo(&free_b, &total_b)) != cudaSuccess) {
        snprintf(err, errcap, "device %d: %s", device, cudaGetErrorString(e));
        cudaGetLastError();
        free(g);
        return NULL;
    }
    // A pool of our own, so the budget counts this context's memory only (other engines
    // in the process have theirs); freed memory stays in it: the semi-naive loop
    // reallocates the same sizes.
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    if ((e = cudaMemPoolCreate(&g->pool, &props)) != cudaSuccess) {
        snprintf(err, errcap, "device %d: cudaMemPoolCreate: %s", device, cudaGetErrorString(e));
        cudaGetLastError();
        free(g);
        return NULL;
    }
    uint64_t keep = UINT64_MAX;
    cudaMemPoolSetAttribute(g->pool, cudaMemPoolAttrReleaseThreshold, &keep);
    snprintf(g->name, sizeof g->name, "%s", prop.name);
    g->arch = prop.major * 10 + prop.minor;
    g->sms = prop.multiProcessorCount;
    g->l2_bytes = (size_t)prop.l2CacheSize;
    g->budget = budget ? budget : free_b - free_b / 20;
    if (!gpu_own_parts(g, err, errcap)) {
        cudaMemPoolDestroy(g->pool);
        free(g);
        return NULL;
    }
    return g;
}

// A second context on g's device and pool, for work beside g's on another host thread:
// its own stream, words and allocation records; the pool's use, which the budget is
// checked against, counts both. Made on first use, closed with g; NULL if it cannot be.
rfx_gpu *gpu_sibling(rfx_gpu *g)
{
    if (!g->sibling) {
        rfx_gpu *h = (rfx_gpu *)calloc(1, sizeof *h);
        char err[256];
        if (!h)
            return NULL;
        memcpy(h->name, g->name, sizeof h->name);
        h->device = g->device;
        h->pool = g->pool;
        h->shares_pool = true;
        h->arch = g->arch;
        h->sms = g->sms;
        h->l2_bytes = g->l2_bytes;
        if (!gpu_own_parts(h, err, sizeof err)) {
            free(h);
            return NULL;
        }
        g->sibling = h;
    }
    g->sibling->budget = g->budget;
    g->sibling->host_threads = g->host_threads;
    g->sibling->tune = g->tune;
    g->sibling->err[0] = 0;
    return g->sibling;
}

extern "C" void rfx_gpu_close(rfx_gpu *g)
{
    if (!g)
        return;
    if (g->sibling)
        rfx_gpu_close(g->sibling);
    cudaSetDevice(g->device);
    cudaFreeAsync(g->d_flag, g->stream);
    cudaStreamSynchronize(g->stream);
    if (g->tagged)
        cudaFree(g->tagged);
    gpu_symbols_free(g);
    cudaFreeHost(g->h_words);
    if (g->stage)
        cudaFreeHost(g->stage);
    jit_unload(g);
    cudaStreamDestroy(g->stream);
    if (!g->shares_pool)
        cudaMemPoolDestroy(g->pool);
    delete g->live;
    free(g);
}

extern "C" void rfx_gpu_trim(rfx_gpu *g, size_t keep_bytes)
{
    cudaSetDevice(g->device);
    cudaStreamSynchronize(g->stream);
    cudaMemPoolTrimTo(g->pool, keep_bytes);
    cudaGetLastError();
}

extern "C" const char *rfx_gpu_error(const rfx_gpu *g) { return g->err; }
extern "C" const char *rfx_gpu_name(const rfx_gpu *g) { return g->name; }
extern "C" size_t rfx_gpu_budget(const rfx_gpu *g) { return g->budget; }

extern "C" size_t rfx_gpu_in_use(rfx_gpu *g)
{
    uint64_t used = 0;
    cudaMemPoolGetAttribute(g->pool, cudaMemPoolAttrUsedMemCurrent, &used);
    // the pool, the look-back words (tagged_words) and the symbols' copy (gpu_symbols)
    return (size_t)used + g->tagged_cap * 8 + g->sym_text_cap + g->sym_off_cap * 8;
}

extern "C" uint64_t rfx_gpu_alloc_mark(const rfx_gpu *g) { return g->seq; }

extern "C" size_t rfx_gpu_reclaim(rfx_gpu *g, uint64_t mark, void *const *keep, size_t nkeep)
{
    size_t freed = 0;
    for (auto it = g->live->begin(); it != g->live->end();) {
        bool kept = it->second < mark;
        for (size_t k = 0; k < nkeep && !kept; k++)
            kept = keep[k] == it->first;
        if (kept) {
            ++it;
            continue;
        }
        cudaFreeAsync(it->first, g->stream);
        it = g->live->erase(it);
        freed++;
    }
    cudaGetLastError();
    return freed;
}

extern "C" rfx_status rfx_gpu_activate(rfx_gpu *g)
{
    CK(cudaSetDevice(g->device));
    return RFX_OK;
}

extern "C" void *rfx_gpu_alloc(rfx_gpu *g, size_t bytes)
{
    if (!bytes)
        return NULL;
    if (rfx_fault_device_alloc()) {
        snprintf(g->err, sizeof g->err, "device allocation of %zu bytes failed (injected by RFX_FAULT_DEVICE)", bytes);
        return NULL;
    }
    size_t used = rfx_gpu_in_use(g);
    if (used + bytes > g->budget) {
        snprintf(g->err, sizeof g->err, "device memory budget exceeded: %zu bytes in use, %zu more asked, budget %zu",
                 (size_t)used, bytes, g->budget);
        return NULL;
    }
    void *p = NULL;
    cudaError_t e = cudaMallocFromPoolAsync(&p, bytes, g->pool, g->stream);
    if (e != cudaSuccess) {
        fail(g, e, "cudaMallocFromPoolAsync", __FILE__, __LINE__);
        return NULL;
    }
    try {
        (*g->live)[p] = g->seq++;
    } catch (...) {
        cudaFreeAsync(p, g->stream);
        snprintf(g->err, sizeof g->err, "out of host memory recording a device allocation");
        return NULL;
    }
    return p;
}

extern "C" void rfx_gpu_free(rfx_gpu *g, void *p)
{
    if (p) {
        g->live->erase(p);
        cudaFreeAsync(p, g->stream);
    }
}

extern "C" rfx_status rfx_gpu_sync(rfx_gpu *g)
{
    CK(cudaStreamSynchronize(g->stream));
    return RFX_OK;
}

extern "C" double rfx_gpu_time_ms(rfx_gpu *g, rfx_status (*fn)(void *arg), void *arg, rfx_status *st)
{
    cudaEvent_t a, b;
    float ms = -1;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaEventRecord(a, g->stream);
    *st = fn(arg);
    cudaEventRecord(b, g->stream);
    if (cudaEventSynchronize(b) != cudaSuccess || cudaEventElapsedTime(&ms, a, b) != cudaSuccess)
        ms = -1;
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return ms;
}

extern "C" rfx_status rfx_gpu_memcpy_d2d(rfx_gpu *g, void *dst, const void *src, size_t bytes)
{
    CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, g->stream));
    return RFX_OK;
}

extern "C" bool rfx_gpu_versions(int *runtime, int *driver)
{
    *runtime = CUDART_VERSION;
    *driver = 0;
    if (cudaDriverGetVersion(driver) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return *driver > 0;
}

static rfx_status copy_once(void *arg)
{
    void **p = (void **)arg;
    rfx_gpu *g = (rfx_gpu *)p[0];
    return rfx_gpu_memcpy_d2d(g, p[1], p[2], (size_t)p[3]);
}

extern "C" double rfx_gpu_copy_bandwidth(rfx_gpu *g)
{
    if (g->copy_gbs > 0)
        return g->copy_gbs;
    size_t bytes = (size_t)256 << 20;
    while (bytes > ((size_t)1 << 20) && 2 * bytes > g->budget / 2)
        bytes /= 2;
    void *a = rfx_gpu_alloc(g, bytes), *b = a ? rfx_gpu_alloc(g, bytes) : NULL;
    if (a && b && cudaMemsetAsync(a, 1, bytes, g->stream) == cudaSuccess) {
        void *arg[4] = {g, b, a, (void *)bytes};
        double ms[3];
        rfx_status st = RFX_OK;
        rfx_gpu_time_ms(g, copy_once, arg, &st);   // warm-up
        for (int r = 0; r < 3 && st == RFX_OK; r++)
            ms[r] = rfx_gpu_time_ms(g, copy_once, arg, &st);
        if (st == RFX_OK && ms[0] > 0 && ms[1] > 0 && ms[2] > 0) {
            double lo = fmin(ms[0], fmin(ms[1], ms[2])), hi = fmax(ms[0], fmax(ms[1], ms[2]));
            double median = ms[0] + ms[1] + ms[2] - lo - hi;
            g->copy_gbs = 2.0 * (double)bytes / (median * 1e-3) * 1e-9;
        }
    }
    cudaGetLastError();
    rfx_gpu_free(g, a);
    rfx_gpu_free(g, b);
    return g->copy_gbs;
}

// keys sorted over their bits [0, end_bit) by CUB's radix sort, alternating with alt;
// *sel: 1 when the sorted keys ended in alt.
rfx_status cub_sort_u64(rfx_gpu *g, uint64_t *keys, uint64_t *alt, size_t n, int begin_bit, int end_bit,
                               int *sel)
{
    size_t bytes = 0;
    *sel = 0;
    CK((cudaError_t)rfx_shim_sort_u64(NULL, &bytes, keys, alt, n, begin_bit, end_bit, sel, (rfx_stream)g->stream));
    void *tmp;
    ALLOC(tmp, bytes ? bytes : 1);
    cudaError_t e =
        (cudaError_t)rfx_shim_sort_u64(tmp, &bytes, keys, alt, n, begin_bit, end_bit, sel, (rfx_stream)g->stream);
    rfx_gpu_free(g, tmp);
    CK(e);
    return RFX_OK;
}

extern "C" void rfx_gpu_rows_init(rfx_dev_rows *r, int arity)
{
    r->data = NULL;
    r->n = r->cap = 0;
    r->arity = arity;
}

extern "C" void rfx_gpu_rows_free(rfx_gpu *g, rfx_dev_rows *r)
{
    rfx_gpu_free(g, r->data);
    r->data = NULL;
    r->n = r->cap = 0;
}

rfx_status rows_alloc(rfx_gpu *g, rfx_dev_rows *r, int arity, size_t n)
{
    rfx_gpu_rows_init(r, arity);
    r->n = r->cap = n;
    if (arity && n)
        ALLOC(r->data, n * (size_t)arity * sizeof(uint32_t));
    return RFX_OK;
}

/* dst takes over out's memory. */
void replace(rfx_gpu *g, rfx_dev_rows *dst, rfx_dev_rows *out)
{
    if (dst->data != out->data)
        rfx_gpu_free(g, dst->data);
    *dst = *out;
}

extern "C" void rfx_gpu_set_host_threads(rfx_gpu *g, int n)
{
    g->host_threads = n;
}

extern "C" void rfx_gpu_set_tuning(rfx_gpu *g, const rfx_tuning *tune)
{
    g->tune = tune ? tune : &rfx_tuning_defaults;
}

// Pageable host rows cross the link several times slower than pinned ones (the driver
// stages them on one thread): copies from RFX_STAGE_FROM bytes up go through a pinned
// buffer of the context in pieces, filled or emptied by the host threads in parallel.
bool staged(rfx_gpu *g, size_t bytes)
{
    if (bytes < RFX_STAGE_FROM || g->host_threads <= 1)
        return false;
    if (!g->stage && cudaHostAlloc((void **)&g->stage, RFX_STAGE_BYTES, cudaHostAllocDefault) != cudaSuccess) {
        cudaGetLastError();   // no pinned memory: the direct copy, slower
        g->stage = NULL;
    }
    return g->stage != NULL;
}

rfx_status upload_bytes(rfx_gpu *g, void *d, const void *h, size_t bytes)
{
    if (bytes && staged(g, bytes)) {
        for (size_t at = 0; at < bytes; at += RFX_STAGE_BYTES) {
            const size_t m = bytes - at < RFX_STAGE_BYTES ? bytes - at : RFX_STAGE_BYTES;
            CK(cudaStreamSynchronize(g->stream));   // the last piece has left the buffer
            rfx_parallel_memcpy(g->stage, (const char *)h + at, m, g->host_threads);
            CK(cudaMemcpyAsync((char *)d + at, g->stage, m, cudaMemcpyHostToDevice, g->stream));
        }
    } else if (bytes)
        CK(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, g->stream));
    CK(cudaStreamSynchronize(g->stream));   // the host buffer may be freed on return
    return RFX_OK;
}

extern "C" rfx_status rfx_gpu_upload(rfx_gpu *g, const rfx_rows *src, rfx_dev_rows *dst)
{
    rfx_dev_rows out;
    rfx_status st = rows_alloc(g, &out, src->arity, src->n);
    if (st)
        return st;
    st = upload_bytes(g, out.data, src->data, src->arity ? src->n * (size_t)src->arity * 4 : 0);
    if (st != RFX_OK) {
        rfx_gpu_rows_free(g, &out);
        return st;
    }
    replace(g, dst, &out);
    return RFX_OK;
}

extern "C" rfx_status rfx_gpu_download(rfx_gpu *g, const rfx_dev_rows *src, rfx_rows *dst)
{
    rfx_rows_free(dst);
    dst->arity = src->arity;
    rfx_status st = rfx_rows_reserve(dst, src->n);
    if (st)
        return st;
    const size_t bytes = src->arity ? src->n * (size_t)src->arity * 4 : 0;
    if (bytes && staged(g, bytes)) {
        for (size_t at = 0; at < bytes; at += RFX_STAGE_BYTES) {
            const size_t m = bytes - at < RFX_STAGE_BYTES ? bytes - at : RFX_STAGE_BYTES;
            CK(cudaMemcpyAsync(g->stage, (const char *)src->data + at, m, cudaMemcpyDeviceToHost, g->stream));
            CK(cudaStreamSynchronize(g->stream));
            rfx_parallel_memcpy((char *)dst->data + at, g->stage, m, g->host_threads);
        }
    } else if (bytes)
        CK(cudaMemcpyAsync(dst->data, src->data, bytes, cudaMemcpyDeviceToHost, g->stream));
    CK(cudaStreamSynchronize(g->stream));
    dst->n = src->n;
    return RFX_OK;
}

extern "C" rfx_status rfx_gpu_copy(rfx_gpu *g, const rfx_dev_rows *src, rfx_dev_rows *dst)
{
    if (src == dst)
        return RFX_OK;
    rfx_dev_rows out;
    rfx_status st = rows_alloc(g, &out, src->arity, src->n);
    if (st)
        return st;
    if (src->n && src->arity)
        CK(cudaMemcpyAsync(out.data, src->data, src->n * (size_t)src->arity * 4, cudaMemcpyDeviceToDevice, g->stream));
    replace(g, dst, &out);
    return RFX_OK;
}

