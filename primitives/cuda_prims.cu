// cuda_prims.cu: relational primitives on a CUDA device (see cuda_prims.h).
// Layout: packed rows of 32-bit values, row-major, lexicographically sorted as unsigned.
// Each operator writes into fresh memory and then replaces its destination, so a
// destination may alias an operand. Output sizes are counted before they are written.
extern "C" {
#include "cuda_prims.h"
#include "base.h"
#include "lftj.h"   // the host TrieArray the count by parts sends its chunks from
}
#include "rx_ops.h"
#include "thrust_shim.h"

#include <cuda_pipeline.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <atomic>
#include <unordered_map>

#define RFX_H_WORDS 32

struct rfx_gpu {
    int device;
    cudaStream_t stream;
    cudaMemPool_t pool;
    size_t budget;             // bytes the pool may hold in use
    char name[256];
    char err[512];
    unsigned int *d_flag;      // division-by-zero flag of the last expression kernel
    uint64_t *h_words;         // pinned host words kernels write for the host to read after a wait:
                               // [0] scan_total's, [3] a kernel's word, [4, 5] a tiled
                               // primitive's look-back total and its tag (lb_wait), [8, 9] a
                               // triejoin emit's, [16..24] a generated FILTER's totals and
                               // division flag
    unsigned long long *d_words;   // the same words as kernels address them (mapped)
    bool div_armed;            // the last loaded expression program divides: d_flag is live
    double copy_gbs;           // measured d2d copy bandwidth (0: not yet)
    int arch;                  // compute capability, 10 * major + minor
    int sms;                   // multiprocessors
    size_t l2_bytes;           // the L2 cache
    struct jit_lib *libs;      // generated kernels loaded in this context
    unsigned long long *tagged;   // tiled launches' look-back words, kept between launches
    size_t tagged_cap;         // words (the first is the tile counter; see tagged_words)
    unsigned tag;              // the last launch's tag (1..0xffff)
    bool tagged_clean;         // false: zero them before the next launch
    std::unordered_map<void *, uint64_t> *live;   // pool allocations and their sequence numbers
    uint64_t seq;
    int jit_compiled, jit_cached;
    double jit_compile_ms, jit_cache_ms;
    int host_threads;          // rfx_gpu_set_host_threads
    char *stage;               // pinned, RFX_STAGE_BYTES: large copies of pageable rows go through it
    struct rfx_gpu *sibling;   // gpu_sibling's, kept until this one closes
    bool shares_pool;          // a sibling: the pool is its parent's
};
static void jit_unload(rfx_gpu *g);

static rfx_status fail(rfx_gpu *g, cudaError_t e, const char *call, const char *file, int line)
{
    snprintf(g->err, sizeof g->err, "%s:%d: %s: %s", file, line, call, cudaGetErrorString(e));
    cudaGetLastError();   // clear a sticky-free error so later calls are unaffected
    return e == cudaErrorMemoryAllocation ? RFX_ERR_NOMEM : RFX_ERR_DEVICE;
}

#define CK(call)                                                          \
    do {                                                                  \
        cudaError_t e_ = (call);                                          \
        if (e_ != cudaSuccess)                                            \
            return fail(g, e_, #call, __FILE__, __LINE__);                \
    } while (0)
#define CK_LAUNCH() CK(cudaGetLastError())
#define ALLOC(ptr, bytes)                                                 \
    do {                                                                  \
        (ptr) = (decltype(ptr))rfx_gpu_alloc(g, (bytes));                 \
        if (!(ptr) && (bytes) != 0)                                       \
            return RFX_ERR_NOMEM;                                         \
    } while (0)

static unsigned grid_for(size_t n)
{
    size_t b = (n + 255) / 256;
    return (unsigned)(b < 1 ? 1 : b > (1u << 20) ? (1u << 20) : b);
}
// grid_for(n) blocks of 256, at most 16 a multiprocessor: what is resident at once, for
// grid-stride loops whose threads keep a running value (a reduction, a histogram)
static unsigned grid_resident(const rfx_gpu *g, size_t n)
{
    const size_t b = grid_for(n), most = (size_t)g->sms * 16;
    return (unsigned)(b < most ? b : most);
}
#define GRID_STRIDE(i, n) for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (n); i += (size_t)gridDim.x * blockDim.x)

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
static rfx_gpu *gpu_sibling(rfx_gpu *g)
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
    return (size_t)used + g->tagged_cap * 8;   // the pool and the look-back words (tagged_words)
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
static rfx_status cub_sort_u64(rfx_gpu *g, uint64_t *keys, uint64_t *alt, size_t n, int begin_bit, int end_bit,
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

extern "C" rfx_status rfx_gpu_cub_sort_u64(rfx_gpu *g, uint64_t *keys, size_t n, int bits)
{
    int sel;
    uint64_t *alt;
    ALLOC(alt, n * 8);
    rfx_status st = cub_sort_u64(g, keys, alt, n, 0, bits, &sel);   // may end in alt: the reference times the sort alone
    rfx_gpu_free(g, alt);
    return st;
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

static rfx_status rows_alloc(rfx_gpu *g, rfx_dev_rows *r, int arity, size_t n)
{
    rfx_gpu_rows_init(r, arity);
    r->n = r->cap = n;
    if (arity && n)
        ALLOC(r->data, n * (size_t)arity * sizeof(uint32_t));
    return RFX_OK;
}

/* dst takes over out's memory. */
static void replace(rfx_gpu *g, rfx_dev_rows *dst, rfx_dev_rows *out)
{
    if (dst->data != out->data)
        rfx_gpu_free(g, dst->data);
    *dst = *out;
}

extern "C" void rfx_gpu_set_host_threads(rfx_gpu *g, int n)
{
    g->host_threads = n;
}

// Pageable host rows cross the link at 1.3-3 GB/s on the lent H100 machine (the driver
// stages them on one thread, and one thread there copies 1.4 GB/s), pinned ones at 52-55
// GB/s: copies from RFX_STAGE_FROM bytes up go through a pinned buffer of the context in
// pieces, filled or emptied by the host threads (512 MB: 11-17 GB/s against 1.4 direct).
#define RFX_STAGE_FROM ((size_t)16 << 20)
#define RFX_STAGE_BYTES ((size_t)32 << 20)
static bool staged(rfx_gpu *g, size_t bytes)
{
    if (bytes < RFX_STAGE_FROM || g->host_threads <= 1)
        return false;
    if (!g->stage && cudaHostAlloc((void **)&g->stage, RFX_STAGE_BYTES, cudaHostAllocDefault) != cudaSuccess) {
        cudaGetLastError();   // no pinned memory: the direct copy, slower
        g->stage = NULL;
    }
    return g->stage != NULL;
}

extern "C" rfx_status rfx_gpu_upload(rfx_gpu *g, const rfx_rows *src, rfx_dev_rows *dst)
{
    rfx_dev_rows out;
    rfx_status st = rows_alloc(g, &out, src->arity, src->n);
    if (st)
        return st;
    const size_t bytes = src->arity ? src->n * (size_t)src->arity * 4 : 0;
    if (bytes && staged(g, bytes)) {
        for (size_t at = 0; at < bytes; at += RFX_STAGE_BYTES) {
            const size_t m = bytes - at < RFX_STAGE_BYTES ? bytes - at : RFX_STAGE_BYTES;
            CK(cudaStreamSynchronize(g->stream));   // the last piece has left the buffer
            rfx_parallel_memcpy(g->stage, (const char *)src->data + at, m, g->host_threads);
            CK(cudaMemcpyAsync((char *)out.data + at, g->stage, m, cudaMemcpyHostToDevice, g->stream));
        }
    } else if (bytes)
        CK(cudaMemcpyAsync(out.data, src->data, bytes, cudaMemcpyHostToDevice, g->stream));
    CK(cudaStreamSynchronize(g->stream));   // the host buffer may be freed on return
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

template <typename T> static rfx_status to_host(rfx_gpu *g, const T *d, T *h, size_t n)
{
    CK(cudaMemcpyAsync(h, d, n * sizeof(T), cudaMemcpyDeviceToHost, g->stream));
    CK(cudaStreamSynchronize(g->stream));
    return RFX_OK;
}

// ---- row comparison on the device ---------------------------------------------------------
__device__ __forceinline__ int cmp_prefix(const uint32_t *a, const uint32_t *b, int k)
{
    for (int i = 0; i < k; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

// The first i in [lo, hi) where pred(i) is false (pred holds on a prefix), or hi, by one
// thread (group_partition_point below: by a group of lanes); on the host too.
template <typename P> __host__ __device__ __forceinline__ size_t partition_point(size_t lo, size_t hi, P pred)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pred(mid))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

// The first i in [l, h) with off[i] > x (h if none): in sorted output offsets, i - 1 is
// the row whose outputs hold x.
__device__ __forceinline__ size_t first_above(const uint64_t *off, size_t l, size_t h, uint64_t x)
{
    return partition_point(l, h, [=](size_t m) { return off[m] <= x; });
}

// First row in [0, n) whose k-prefix is >= key (upper: > key).
__device__ size_t bound_rows(const uint32_t *rows, int arity, size_t n, const uint32_t *key, int k, bool upper)
{
    return partition_point(0, n, [=](size_t m) {
        int c = cmp_prefix(rows + m * arity, key, k);
        return c < 0 || (upper && c == 0);
    });
}

// The first i in [lo, hi) where pred(i) is false (pred holds on a prefix), or hi, found by
// a group of G lanes (2-32, a power of two; the group's lanes call it with the same lo,
// hi): G probes a round, so about log_G rounds of dependent loads instead of log2. The
// searches that place tiles before a merge or a join (one a tile, each ~25 loads into 2^24
// rows, one DRAM latency after another) took 12-22 us on an H100 by a thread each, as long
// as a 2^20 set operation's tiles themselves; but each probe costs a sector, so many
// searches by whole warps cost more in traffic than their fewer rounds save (search_lanes).
template <int G, typename P> __device__ __forceinline__ size_t group_partition_point(size_t lo, size_t hi, P pred)
{
    const unsigned lane = threadIdx.x & 31, gl = lane % G,
                   mask = G == 32 ? 0xffffffffu : ((1u << G) - 1) << (lane - gl);
    while (lo < hi) {
        const size_t s = (hi - lo + G - 1) / G, p = lo + gl * s + s - 1;
        // the lanes whose probe holds: a prefix of the group
        const unsigned held = __popc(__ballot_sync(mask, p < hi && pred(p)) & mask);
        if (held == G)
            return hi;
        const size_t nlo = lo + held * s, last = nlo + s - 1;   // the first false probe: last (or past hi)
        lo = nlo;
        hi = last < hi ? last : hi;
    }
    return lo;
}

// group_partition_point for G of 2-32 lanes, partition_point for 1.
template <typename P> __device__ __forceinline__ size_t lanes_partition_point(int G, size_t lo, size_t hi, P pred)
{
    switch (G) {
    case 32: return group_partition_point<32>(lo, hi, pred);
    case 16: return group_partition_point<16>(lo, hi, pred);
    case 8: return group_partition_point<8>(lo, hi, pred);
    case 4: return group_partition_point<4>(lo, hi, pred);
    case 2: return group_partition_point<2>(lo, hi, pred);
    default: return partition_point(lo, hi, pred);
    }
}

// each search i of a group of G lanes (the loop is uniform within the group)
#define GROUP_STRIDE(i, n, G)                                                                                        \
    for (size_t i = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / (G); i < (n);                                  \
         i += (size_t)gridDim.x * blockDim.x / (G))

// Lanes a search for a launch of n tile-placing searches, fewer as there are more (H100,
// bench_gpu_prims, the merges' splits and the joins' ranges at 2^20-2^24 rows): a warp each
// up to 2,048 searches (2^20-2^21 set operations: 8 or 4 lanes 1-4 points slower), 8 lanes
// up to 8,192 (UNION of 2^22 rows, 2,980 splits: 48% of the floor by warps, 51-52% so,
// 49-50% by threads; DIFFERENCE 40-42% / 43% / 41%), 4 up to 16,384 (the set operations of
// 2^23-2^24 and the join of 2^23: as a thread each or a point better; 8 or 16 lanes slower
// at 2^24), a thread each beyond, as measured there and before.
// RFX_SEARCH_G=1, 2, 4, ... 32 sets it for every launch (measurements).
static int search_lanes(size_t n)
{
    static const int env = [] {   // read once (a static's first use is thread-safe)
        const char *v = getenv("RFX_SEARCH_G");
        return v ? atoi(v) : 0;
    }();
    if (env == 1 || env == 2 || env == 4 || env == 8 || env == 16 || env == 32)
        return env;
    return n <= 2048 ? 32 : n <= 8192 ? 8 : n <= 16384 ? 4 : 1;
}

// Blocks for a launch of n searches of search_lanes(n) lanes each.
static unsigned search_grid(size_t n)
{
    return grid_for((size_t)search_lanes(n) * n);
}

// ---- compaction ------------------------------------------------------------------------
__global__ void k_scatter(const uint32_t *in, size_t n, int arity, const uint64_t *flags, const uint64_t *off,
                          uint32_t *out)
{
    GRID_STRIDE(i, n)
    {
        if (flags[i])
            for (int c = 0; c < arity; c++)
                out[off[i] * arity + c] = in[i * arity + c];
    }
}

static rfx_status exclusive_sum(rfx_gpu *g, const uint64_t *in, uint64_t *out, size_t n)
{
    size_t bytes = 0;
    CK((cudaError_t)rfx_shim_exclusive_sum_u64(NULL, &bytes, in, out, n, (rfx_stream)g->stream));
    void *tmp;
    ALLOC(tmp, bytes ? bytes : 1);
    cudaError_t e = (cudaError_t)rfx_shim_exclusive_sum_u64(tmp, &bytes, in, out, n, (rfx_stream)g->stream);
    rfx_gpu_free(g, tmp);
    CK(e);
    return RFX_OK;
}

__global__ void k_scan_total(const uint64_t *last_out, const uint64_t *last_in, unsigned long long *host)
{
    *host = *last_out + *last_in;
}

/* out = the exclusive prefix sums of in; *total = their sum, written by a one-thread
 * kernel into pinned host memory and read after one wait (two 8-byte copies cost the
 * stream twice a launch). */
static rfx_status scan_total(rfx_gpu *g, const uint64_t *in, uint64_t *out, size_t n, uint64_t *total)
{
    *total = 0;
    if (n == 0)
        return RFX_OK;
    rfx_status st = exclusive_sum(g, in, out, n);
    if (st != RFX_OK)
        return st;
    k_scan_total<<<1, 1, 0, g->stream>>>(out + n - 1, in + n - 1, g->d_words);
    CK_LAUNCH();
    CK(cudaStreamSynchronize(g->stream));
    *total = ((volatile uint64_t *)g->h_words)[0];
    return RFX_OK;
}

/* out = the rows of in whose flag is set, in order. Frees nothing of the inputs. */
static rfx_status compact(rfx_gpu *g, const uint32_t *in, size_t n, int arity, const uint64_t *flags, rfx_dev_rows *out)
{
    rfx_gpu_rows_init(out, arity);
    if (n == 0)
        return RFX_OK;
    uint64_t *off;
    ALLOC(off, n * sizeof(uint64_t));
    uint64_t kept = 0;
    rfx_status st = scan_total(g, flags, off, n, &kept);
    if (st == RFX_OK)
        st = rows_alloc(g, out, arity, (size_t)kept);
    if (st == RFX_OK && out->n) {
        if (arity) {
            k_scatter<<<grid_for(n), 256, 0, g->stream>>>(in, n, arity, flags, off, out->data);
            cudaError_t e = cudaGetLastError();
            if (e != cudaSuccess)
                st = fail(g, e, "k_scatter", __FILE__, __LINE__);
        }
    }
    rfx_gpu_free(g, off);
    return st;
}

/* The common ending of operators that compute rows and then filter them: keeps res's
 * flagged rows (when flags is set; n rows of nout columns), frees the scratch, and hands
 * the result to dst, or frees it when st is an error. */
static rfx_status finish_filtered(rfx_gpu *g, rfx_status st, rfx_dev_rows *res, size_t n, int nout, uint64_t *flags,
                                  rfx_dev_rows *dst)
{
    if (st == RFX_OK && flags) {
        rfx_dev_rows kept;
        st = compact(g, nout ? res->data : NULL, n, nout, flags, &kept);
        if (st == RFX_OK) {
            rfx_gpu_rows_free(g, res);
            *res = kept;
        }
    }
    rfx_gpu_free(g, flags);
    if (st == RFX_OK)
        replace(g, dst, res);
    else
        rfx_gpu_rows_free(g, res);
    return st;
}

// ---- sort ------------------------------------------------------------------------------
__global__ void k_col_or(const uint32_t *rows, size_t n, int arity, int col, unsigned *out)
{
    uint32_t acc = 0;
    GRID_STRIDE(i, n) acc |= rows[i * arity + col];
    for (int o = 16; o; o >>= 1)
        acc |= __shfl_xor_sync(0xffffffffu, acc, o);
    if ((threadIdx.x & 31) == 0 && acc)
        atomicOr(out, acc);
}

// out[c] |= every value of column c, in one coalesced pass over all columns: the grid's
// thread count is a multiple of the arity, so each thread's words are of one column.
__global__ void k_cols_or(const uint32_t *rows, size_t words, int arity, unsigned *out)
{
    __shared__ unsigned acc[64];
    if (threadIdx.x < 64)
        acc[threadIdx.x] = 0;
    __syncthreads();
    size_t T = (size_t)gridDim.x * blockDim.x / (size_t)arity * (size_t)arity,
           t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned mine = 0;
    for (size_t j = t; t < T && j < words; j += T)
        mine |= rows[j];
    if (t < T && mine)
        atomicOr(&acc[t % (size_t)arity], mine);
    __syncthreads();
    if ((int)threadIdx.x < arity && acc[threadIdx.x])
        atomicOr(&out[threadIdx.x], acc[threadIdx.x]);
}

__global__ void k_unpack2(const uint64_t *keys, size_t n, int shift, uint32_t *rows)
{
    GRID_STRIDE(i, n)
    {
        uint64_t k = keys[i];
        rows[2 * i] = (uint32_t)(k >> shift);
        rows[2 * i + 1] = (uint32_t)(k & ((1ull << shift) - 1));
    }
}

__global__ void k_iota(uint32_t *p, size_t n)
{
    GRID_STRIDE(i, n) p[i] = (uint32_t)i;
}

__global__ void k_gather_col(const uint32_t *rows, size_t n, int arity, int col, const uint32_t *perm, uint32_t *out)
{
    GRID_STRIDE(i, n) out[i] = rows[(size_t)perm[i] * arity + col];
}

__global__ void k_gather_rows(const uint32_t *rows, size_t n, int arity, const uint32_t *perm, uint32_t *out)
{
    GRID_STRIDE(i, n) for (int c = 0; c < arity; c++) out[i * arity + c] = rows[(size_t)perm[i] * arity + c];
}

static int bits_of(unsigned v)
{
    return v ? 32 - __builtin_clz(v) : 0;
}

/* Per column, the width of its largest value, so radix passes over bits that are zero in
 * every row can be skipped (columns past the 64th: 32). */
static rfx_status varying_bits(rfx_gpu *g, const rfx_dev_rows *r, int *bits)
{
    int a = r->arity < 64 ? r->arity : 64;
    unsigned *d, h[64];
    ALLOC(d, sizeof(unsigned) * (size_t)a);
    cudaError_t e = cudaMemsetAsync(d, 0, sizeof(unsigned) * (size_t)a, g->stream);
    if (e == cudaSuccess && a == r->arity) {
        size_t blocks = grid_resident(g, r->n * (size_t)a);
        k_cols_or<<<(unsigned)blocks, 256, 0, g->stream>>>(r->data, r->n * (size_t)a, a, d);
        e = cudaGetLastError();
    } else if (e == cudaSuccess) {
        for (int c = 0; c < a && e == cudaSuccess; c++) {
            k_col_or<<<grid_for(r->n), 256, 0, g->stream>>>(r->data, r->n, r->arity, c, d + c);
            e = cudaGetLastError();
        }
    }
    rfx_status st = e == cudaSuccess ? to_host(g, d, h, (size_t)a) : fail(g, e, "k_cols_or", __FILE__, __LINE__);
    rfx_gpu_free(g, d);
    for (int c = 0; c < r->arity; c++)
        bits[c] = c < 64 ? bits_of(h[c]) : 32;
    return st;
}

// keys[i] = row i's columns as one 64-bit key; widths[c] |= every value of column c.
__global__ void k_pack2_widths(const uint2 *rows, size_t n, uint64_t *keys, unsigned *widths)
{
    __shared__ unsigned s_or[2];
    if (threadIdx.x < 2)
        s_or[threadIdx.x] = 0;
    __syncthreads();
    unsigned o0 = 0, o1 = 0;
    GRID_STRIDE(i, n)
    {
        uint2 r = rows[i];
        keys[i] = (uint64_t)r.x << 32 | r.y;
        o0 |= r.x;
        o1 |= r.y;
    }
    for (int o = 16; o; o >>= 1) {
        o0 |= __shfl_xor_sync(0xffffffffu, o0, o);
        o1 |= __shfl_xor_sync(0xffffffffu, o1, o);
    }
    if ((threadIdx.x & 31) == 0) {   // one global atomic a block: a warp's each would queue at one address
        atomicOr(&s_or[0], o0);
        atomicOr(&s_or[1], o1);
    }
    __syncthreads();
    if (threadIdx.x < 2 && s_or[threadIdx.x])
        atomicOr(&widths[threadIdx.x], s_or[threadIdx.x]);
}

__global__ void k_squeeze2(uint64_t *keys, size_t n, int shift)
{
    GRID_STRIDE(i, n) keys[i] = (keys[i] >> 32) << shift | (keys[i] & 0xFFFFFFFFull);
}

// Rows reversed, (y, x), not yet sorted by y (see rfx_gpu_reversed).
typedef struct {
    uint64_t *rows;   // a row a word, or NULL
    int end_bit;      // y's width
} reversal;

static rfx_status reverse_sort(rfx_gpu *g, reversal *rv, size_t n, rfx_dev_rows *out);

/* The packed sort of sort_rows2 (below SORT_WORDS_MIN rows): rows packed into 64-bit keys
 * (the widths of both columns found in the same pass), sorted by CUB. Column 1 keeps all
 * 32 bits of its half unless squeezing it to its width saves a radix pass (8 bits) or
 * more. (Measuring the widths first, so that the keys are written once and already
 * squeezed, saves 8 bytes a row where columns are narrow, as graph ids are, and costs 8
 * where they are not. CUB's sort of the rows themselves through a decomposer took twice
 * as long as its 64-bit key sort on an H100 and an H200.) *sorted, *spare: the buffer of
 * sorted keys and the other one; *shift: column 1's bits in a key; *b1: its width. */
static rfx_status sort_packed2(rfx_gpu *g, const rfx_dev_rows *src, uint64_t **sorted, uint64_t **spare, int *shift,
                               int *b1)
{
    size_t n = src->n;
    int sel = 0;
    uint64_t *keys = (uint64_t *)rfx_gpu_alloc(g, n * 8), *alt = (uint64_t *)rfx_gpu_alloc(g, n * 8);
    unsigned *d_widths = (unsigned *)rfx_gpu_alloc(g, 8), widths[2] = {0, 0};
    rfx_status st = keys && alt && d_widths ? RFX_OK : RFX_ERR_NOMEM;
    cudaError_t e = st == RFX_OK ? cudaMemsetAsync(d_widths, 0, 8, g->stream) : cudaSuccess;
    if (st == RFX_OK && e == cudaSuccess) {
        size_t blocks = grid_resident(g, n);
        k_pack2_widths<<<(unsigned)blocks, 256, 0, g->stream>>>((const uint2 *)src->data, n, keys, d_widths);
        if ((e = cudaGetLastError()) == cudaSuccess)
            st = to_host(g, d_widths, widths, 2);
    }
    int b0 = bits_of(widths[0]);
    *b1 = bits_of(widths[1]);
    *shift = 32;
    if (*b1 < 32 && (32 + b0 + 7) / 8 > (b0 + (*b1 ? *b1 : 1) + 7) / 8) {
        *shift = *b1 ? *b1 : 1;
        if (st == RFX_OK && e == cudaSuccess) {
            k_squeeze2<<<grid_for(n), 256, 0, g->stream>>>(keys, n, *shift);
            e = cudaGetLastError();
        }
    }
    int total = b0 + *shift > 1 ? b0 + *shift : 1;
    if (st == RFX_OK && e == cudaSuccess)
        st = cub_sort_u64(g, keys, alt, n, 0, total, &sel);
    rfx_gpu_free(g, d_widths);
    *sorted = sel ? alt : keys;
    *spare = sel ? keys : alt;
    return st != RFX_OK || e == cudaSuccess ? st : fail(g, e, "packing two-column rows", __FILE__, __LINE__);
}

/* The sort of sort_rows2 from SORT_WORDS_MIN rows: a row is one 64-bit word in memory,
 * column 0 in its low half, and CUB's radix sort is stable, so sorting the words by
 * column 1's bits and then by column 0's sorts the rows, with nothing packed or unpacked
 * (each sort spans its column's width, found by one pass that reads the rows). The packed
 * sort's two passes over the keys, each reading and writing 8 bytes a row, had SORT at
 * 1.17-1.22x CUB's sort of the packed keys on an H100; the word sorts move what the
 * packed sort does, less those passes, plus one radix histogram and the widths' read.
 * *sorted: the sorted words (rows), *spare: a buffer of n words or NULL; *b1: column 1's
 * width. leading_only: src's rows of equal column 0 are in order already, so the sort by
 * column 0 alone (stable) sorts them. */
static rfx_status sort_words2(rfx_gpu *g, const rfx_dev_rows *src, uint64_t **sorted, uint64_t **spare, int *b1,
                              bool leading_only)
{
    size_t n = src->n, bytes = 0;
    int bits[2], sel = 0;
    *sorted = *spare = NULL;
    rfx_status st = varying_bits(g, src, bits);
    if (st != RFX_OK)
        return st;
    *b1 = bits[1];
    if (leading_only)   // rows of equal column 0 in order already: the column-0 sort alone
        bits[1] = 0;
    const uint64_t *rows = (const uint64_t *)src->data;
    uint64_t *keys, *alt;
    ALLOC(keys, n * 8);
    // the first sort reads src and writes keys (its scratch holds the other buffer)
    int begin = bits[1] ? 32 : 0, end = bits[1] ? 32 + bits[1] : bits[0] ? bits[0] : 1;
    cudaError_t e = (cudaError_t)rfx_shim_sort_u64_from(NULL, &bytes, rows, keys, n, begin, end, (rfx_stream)g->stream);
    void *tmp = e == cudaSuccess ? rfx_gpu_alloc(g, bytes ? bytes : 1) : NULL;
    if (e == cudaSuccess && !tmp)
        st = RFX_ERR_NOMEM;
    if (st == RFX_OK && e == cudaSuccess)
        e = (cudaError_t)rfx_shim_sort_u64_from(tmp, &bytes, rows, keys, n, begin, end, (rfx_stream)g->stream);
    rfx_gpu_free(g, tmp);
    if (st == RFX_OK && e == cudaSuccess && bits[1] && bits[0]) {   // then by column 0, through alt
        if (!(alt = (uint64_t *)rfx_gpu_alloc(g, n * 8)))
            st = RFX_ERR_NOMEM;
        else if ((st = cub_sort_u64(g, keys, alt, n, 0, bits[0], &sel)) == RFX_OK && sel) {
            uint64_t *t = keys;
            keys = alt;
            alt = t;
        }
        *spare = alt;
    }
    *sorted = keys;
    if (st == RFX_OK && e != cudaSuccess)
        st = fail(g, e, "sorting two-column rows", __FILE__, __LINE__);
    return st;
}

/* Rows from this many on are sorted as words (sort_words2), fewer packed (sort_packed2):
 * the word sorts make two calls of CUB's sort and read the rows once more for the widths,
 * which below ~2^23 rows cost more than the packing passes save (H100, against CUB's sort
 * of the packed keys: words 1.16x / 1.13x / 1.10-1.11x at 2^23 / 2^24 / 2^25-2^26, packed
 * 1.18-1.19x; at 2^21-2^22 words 1.19-1.23x, packed 1.18x). */
#define SORT_WORDS_MIN ((size_t)1 << 23)

/* Two-column rows of src sorted into *out (fresh memory; src is left as it was). distinct:
 * repeated rows are dropped as they are written out (one pass over the sorted keys instead
 * of UNIQUE's flags, scan and gather over the rows); rv (distinct only): that pass also
 * writes the rows reversed (into fresh memory, rv->rows). */
static rfx_status sort_rows2(rfx_gpu *g, const rfx_dev_rows *src, rfx_dev_rows *out, bool distinct, reversal *rv)
{
    size_t n = src->n;
    if (rv)
        rv->rows = NULL;
    uint64_t *sorted = NULL, *spare = NULL;
    int shift = 0, b1 = 0;   // shift 0: the sorted keys are the rows themselves
    rfx_status st = n >= SORT_WORDS_MIN ? sort_words2(g, src, &sorted, &spare, &b1, false)
                                        : sort_packed2(g, src, &sorted, &spare, &shift, &b1);
    cudaError_t e = cudaSuccess;
    if (st == RFX_OK && !spare && (distinct || shift) && !(spare = (uint64_t *)rfx_gpu_alloc(g, n * 8)))
        st = RFX_ERR_NOMEM;
    uint64_t *result = shift || distinct ? spare : sorted;   // the rows written out, or the sorted words
    size_t m = n;
    if (distinct && st == RFX_OK) {   // the distinct keys, as rows, into spare
        uint64_t *d_m = (uint64_t *)rfx_gpu_alloc(g, 8), hm = 0;
        if (rv) {
            rv->rows = (uint64_t *)rfx_gpu_alloc(g, n * 8);
            rv->end_bit = b1 ? b1 : 1;
        }
        size_t bytes = 0;
        void *tmp = NULL;
        if (!d_m || (rv && !rv->rows))
            st = RFX_ERR_NOMEM;
        uint32_t *rr = rv ? (uint32_t *)rv->rows : NULL;
        if (st == RFX_OK)
            e = (cudaError_t)rfx_shim_unique_u64_rows(NULL, &bytes, sorted, shift, (uint32_t *)spare, rr, d_m, n,
                                                      (rfx_stream)g->stream);
        if (st == RFX_OK && e == cudaSuccess && !(tmp = rfx_gpu_alloc(g, bytes ? bytes : 1)))
            st = RFX_ERR_NOMEM;
        if (st == RFX_OK && e == cudaSuccess)
            e = (cudaError_t)rfx_shim_unique_u64_rows(tmp, &bytes, sorted, shift, (uint32_t *)spare, rr, d_m, n,
                                                      (rfx_stream)g->stream);
        if (st == RFX_OK && e == cudaSuccess && (st = to_host(g, d_m, &hm, 1)) == RFX_OK)
            m = (size_t)hm;
        rfx_gpu_free(g, tmp);
        rfx_gpu_free(g, d_m);
    } else if (st == RFX_OK && shift) {
        k_unpack2<<<grid_for(m), 256, 0, g->stream>>>(sorted, m, shift, (uint32_t *)spare);
        e = cudaGetLastError();
    }
    rfx_gpu_free(g, result == sorted ? spare : sorted);
    if (st != RFX_OK || e != cudaSuccess) {
        rfx_gpu_free(g, result);
        if (rv) {
            rfx_gpu_free(g, rv->rows);
            rv->rows = NULL;
        }
        return st != RFX_OK ? st : fail(g, e, "sorting two-column rows", __FILE__, __LINE__);
    }
    rfx_gpu_rows_init(out, 2);
    out->data = (uint32_t *)result;
    out->n = m;
    out->cap = n;
    return RFX_OK;
}

// dst = src sorted, and without repeated rows when distinct (src unchanged; dst may be src).
static rfx_status sort_rows_into(rfx_gpu *g, const rfx_dev_rows *src, rfx_dev_rows *dst, bool distinct)
{
    if (src->arity == 2 && src->n >= 2) {
        rfx_dev_rows out;
        rfx_status st = sort_rows2(g, src, &out, distinct, NULL);
        if (st == RFX_OK)
            replace(g, dst, &out);
        return st;
    }
    rfx_status st = rfx_gpu_copy(g, src, dst);
    st = st ? st : rfx_gpu_sort(g, dst);
    return st || !distinct ? st : rfx_gpu_unique(g, dst);
}

extern "C" rfx_status rfx_gpu_sort_into(rfx_gpu *g, const rfx_dev_rows *src, rfx_dev_rows *dst)
{
    return sort_rows_into(g, src, dst, false);
}

extern "C" rfx_status rfx_gpu_sort_unique_into(rfx_gpu *g, const rfx_dev_rows *src, rfx_dev_rows *dst)
{
    return sort_rows_into(g, src, dst, true);
}

/* Two columns, k = 1: one stable radix sort of the rows as words over column 0's bits, at
 * every size (the transitive closure's delta with its join key moved first: half the
 * passes of the sort of both columns). */
extern "C" rfx_status rfx_gpu_sort_leading_into(rfx_gpu *g, const rfx_dev_rows *src, int k, rfx_dev_rows *dst)
{
    if (src->arity != 2 || k != 1 || src->n < 2)
        return sort_rows_into(g, src, dst, false);
    uint64_t *sorted, *spare;
    int b1;
    rfx_status st = sort_words2(g, src, &sorted, &spare, &b1, true);
    rfx_gpu_free(g, spare);
    if (st != RFX_OK) {
        rfx_gpu_free(g, sorted);
        return st;
    }
    rfx_dev_rows out;
    rfx_gpu_rows_init(&out, 2);
    out.data = (uint32_t *)sorted;
    out.n = out.cap = src->n;
    replace(g, dst, &out);
    return RFX_OK;
}

// n (< 2^32) rows of arity a stably sorted by the columns with bits[c] > 0 (column 0 the
// most significant; bits[c] of each value vary), into *out (allocated here): LSD passes
// of CUB's pair sort over a permutation, then one gather.
static rfx_status rows_sorted_by(rfx_gpu *g, const uint32_t *rows, size_t n, int a, const int *bits, uint32_t **out)
{
    *out = NULL;
    size_t bytes = 0;
    int sel = 0;
    uint32_t *perm = (uint32_t *)rfx_gpu_alloc(g, n * 4), *perm_alt = (uint32_t *)rfx_gpu_alloc(g, n * 4),
             *keys = (uint32_t *)rfx_gpu_alloc(g, n * 4), *keys_alt = (uint32_t *)rfx_gpu_alloc(g, n * 4);
    void *tmp = NULL;
    rfx_status st = perm && perm_alt && keys && keys_alt ? RFX_OK : RFX_ERR_NOMEM;
    cudaError_t e = cudaSuccess;
    if (st == RFX_OK) {
        k_iota<<<grid_for(n), 256, 0, g->stream>>>(perm, n);
        if ((e = cudaGetLastError()) == cudaSuccess)
            e = (cudaError_t)rfx_shim_sort_pairs_u32(NULL, &bytes, keys, keys_alt, perm, perm_alt, n, 32, &sel,
                                                     (rfx_stream)g->stream);
    }
    if (st == RFX_OK && e == cudaSuccess && !(tmp = rfx_gpu_alloc(g, bytes ? bytes : 1)))
        st = RFX_ERR_NOMEM;
    for (int c = a - 1; c >= 0 && st == RFX_OK && e == cudaSuccess; c--) {
        if (!bits[c])
            continue;
        k_gather_col<<<grid_for(n), 256, 0, g->stream>>>(rows, n, a, c, perm, keys);
        if ((e = cudaGetLastError()) == cudaSuccess)
            e = (cudaError_t)rfx_shim_sort_pairs_u32(tmp, &bytes, keys, keys_alt, perm, perm_alt, n, bits[c], &sel,
                                                     (rfx_stream)g->stream);
        if (sel & 2) {
            uint32_t *t = perm;
            perm = perm_alt;
            perm_alt = t;
        }
    }
    rfx_gpu_free(g, tmp);
    rfx_gpu_free(g, keys);
    rfx_gpu_free(g, keys_alt);
    rfx_gpu_free(g, perm_alt);
    if (st == RFX_OK && e == cudaSuccess && !(*out = (uint32_t *)rfx_gpu_alloc(g, n * (size_t)a * 4)))
        st = RFX_ERR_NOMEM;
    if (st == RFX_OK && e == cudaSuccess) {
        k_gather_rows<<<grid_for(n), 256, 0, g->stream>>>(rows, n, a, perm, *out);
        e = cudaGetLastError();
    }
    rfx_gpu_free(g, perm);
    if (e != cudaSuccess) {
        rfx_gpu_free(g, *out);
        *out = NULL;
        return fail(g, e, "sorting rows by columns", __FILE__, __LINE__);
    }
    return st;
}

extern "C" rfx_status rfx_gpu_sort(rfx_gpu *g, rfx_dev_rows *r)
{
    size_t n = r->n;
    int a = r->arity;
    if (n < 2 || a == 0)
        return RFX_OK;
    if (a == 2) {
        rfx_dev_rows out;
        rfx_status st = sort_rows2(g, r, &out, false, NULL);
        if (st == RFX_OK)
            replace(g, r, &out);
        return st;
    }
    int bits[RFX_MAX_ARITY];
    rfx_status st = varying_bits(g, r, bits);
    if (st)
        return st;
    size_t bytes = 0;
    int sel = 0;
    void *tmp = NULL;
    if (a == 1) {
        uint32_t *alt;
        ALLOC(alt, n * 4);
        CK((cudaError_t)rfx_shim_sort_u32(NULL, &bytes, r->data, alt, n, 0, bits[0] ? bits[0] : 1, &sel, (rfx_stream)g->stream));
        ALLOC(tmp, bytes ? bytes : 1);
        cudaError_t e = (cudaError_t)rfx_shim_sort_u32(tmp, &bytes, r->data, alt, n, 0, bits[0] ? bits[0] : 1, &sel,
                                                      (rfx_stream)g->stream);
        rfx_gpu_free(g, tmp);
        if (sel) {
            rfx_gpu_free(g, r->data);
            r->data = alt;
            r->cap = n;
        } else
            rfx_gpu_free(g, alt);
        CK(e);
        return RFX_OK;
    }
    // wider rows: LSD over columns on a permutation, then one gather
    if (n > UINT32_MAX) {
        snprintf(g->err, sizeof g->err, "sort of %zu rows of %d columns (at most 2^32-1 rows of more than two)", n, a);
        return RFX_ERR_LIMIT;
    }
    uint32_t *out;
    st = rows_sorted_by(g, r->data, n, a, bits, &out);
    if (st != RFX_OK)
        return st;
    rfx_gpu_free(g, r->data);
    r->data = out;
    r->cap = n;
    return RFX_OK;
}

// ---- unique -------------------------------------------------------------------------------
__global__ void k_flag_unique(const uint32_t *rows, size_t n, int arity, uint64_t *flags)
{
    GRID_STRIDE(i, n) flags[i] = i == 0 || cmp_prefix(rows + i * arity, rows + (i - 1) * arity, arity) != 0;
}

// rev[i] = rows[i] with its columns swapped; *width |= every y.
__global__ void k_swap_cols(const uint2 *rows, size_t n, uint2 *rev, unsigned *width)
{
    unsigned o = 0;
    GRID_STRIDE(i, n)
    {
        const uint2 r = rows[i];
        rev[i] = make_uint2(r.y, r.x);
        o |= r.y;
    }
    for (int d = 16; d; d >>= 1)
        o |= __shfl_xor_sync(0xffffffffu, o, d);
    if ((threadIdx.x & 31) == 0 && o)
        atomicOr(width, o);
}

/* *out = rv's rows sorted by y, stably. A row (y, x) is the 64-bit word x << 32 | y in
 * memory, so a key sort over the word's low end_bit bits sorts the rows themselves: as
 * many radix passes as a pair sort of y and x, with no arrays to split or zip. Takes rv's
 * rows (freed or adopted, success or not). */
static rfx_status reverse_sort(rfx_gpu *g, reversal *rv, size_t n, rfx_dev_rows *out)
{
    int sel = 0;
    uint64_t *rows = rv->rows, *alt = (uint64_t *)rfx_gpu_alloc(g, n * 8);
    rv->rows = NULL;
    rfx_status st = rows && alt ? cub_sort_u64(g, rows, alt, n, 0, rv->end_bit, &sel) : RFX_ERR_NOMEM;
    uint64_t *sorted = sel ? alt : rows;
    rfx_gpu_free(g, sel ? rows : alt);
    if (st != RFX_OK) {
        rfx_gpu_free(g, sorted);
        return st;
    }
    rfx_dev_rows r;
    rfx_gpu_rows_init(&r, 2);
    r.data = (uint32_t *)sorted;
    r.n = r.cap = n;
    replace(g, out, &r);
    return RFX_OK;
}

static rfx_status reverse_small(rfx_gpu *g, const rfx_dev_rows *e, rfx_dev_rows *out)
{
    rfx_rx c0 = {.kind = RFX_RX_COL, .col = 0}, c1 = {.kind = RFX_RX_COL, .col = 1};
    rfx_rx *swap[] = {&c1, &c0};
    return rfx_gpu_mapfilter(g, e, NULL, swap, 2, out);
}

/* e is sorted by (x, y), so a stable sort of its rows by y alone leaves each y's rows in
 * x order: a sort over y's width (3 radix passes of 8 bytes a row at 2^24 vertices)
 * instead of over both columns (6 passes). */
extern "C" rfx_status rfx_gpu_reversed(rfx_gpu *g, const rfx_dev_rows *e, rfx_dev_rows *out)
{
    size_t n = e->n;
    if (e->arity != 2) {
        snprintf(g->err, sizeof g->err, "reversing rows of %d columns (two wanted)", e->arity);
        return RFX_ERR_INTERNAL;
    }
    if (n < 2)
        return reverse_small(g, e, out);
    unsigned width = 0;
    reversal rv = {(uint64_t *)rfx_gpu_alloc(g, n * 8), 1};
    unsigned *d_width = (unsigned *)rfx_gpu_alloc(g, 4);
    rfx_status st = rv.rows && d_width ? RFX_OK : RFX_ERR_NOMEM;
    cudaError_t err = st == RFX_OK ? cudaMemsetAsync(d_width, 0, 4, g->stream) : cudaSuccess;
    if (st == RFX_OK && err == cudaSuccess) {
        size_t blocks = grid_resident(g, n);
        k_swap_cols<<<(unsigned)blocks, 256, 0, g->stream>>>((const uint2 *)e->data, n, (uint2 *)rv.rows, d_width);
        if ((err = cudaGetLastError()) == cudaSuccess)
            st = to_host(g, d_width, &width, 1);
    }
    rfx_gpu_free(g, d_width);
    if (st == RFX_OK && err != cudaSuccess)
        st = fail(g, err, "k_swap_cols", __FILE__, __LINE__);
    if (st != RFX_OK) {
        rfx_gpu_free(g, rv.rows);
        return st;
    }
    rv.end_bit = bits_of(width) ? bits_of(width) : 1;
    return reverse_sort(g, &rv, n, out);
}

// ---- renaming by degree ---------------------------------------------------------------------
__global__ void k_max2(const uint2 *rows, size_t n, unsigned *mx)
{
    unsigned o = 0;
    GRID_STRIDE(i, n)
    {
        const uint2 r = rows[i];
        o = max(o, max(r.x, r.y));
    }
    for (int d = 16; d; d >>= 1)
        o = max(o, __shfl_xor_sync(0xffffffffu, o, d));
    if ((threadIdx.x & 31) == 0 && o)
        atomicMax(mx, o);
}

// deg[v] += the rows v is in, for the vertices v in [lo, lo + span) only
__global__ void k_degrees(const uint2 *rows, size_t n, uint32_t lo, uint32_t span, uint32_t *deg)
{
    GRID_STRIDE(i, n)
    {
        const uint2 r = rows[i];
        if (r.x - lo < span)
            atomicAdd(&deg[r.x], 1u);
        if (r.y - lo < span)
            atomicAdd(&deg[r.y], 1u);
    }
}

// keys[v] = (degree, v), v in the low idbits bits
__global__ void k_degree_keys(const uint32_t *deg, size_t nv, int idbits, uint64_t *keys)
{
    GRID_STRIDE(v, nv) keys[v] = (uint64_t)deg[v] << idbits | v;
}

__global__ void k_rank_of(const uint64_t *sorted, size_t nv, int idbits, uint32_t *rank)
{
    const uint64_t id_mask = ((uint64_t)1 << idbits) - 1;
    GRID_STRIDE(i, nv) rank[sorted[i] & id_mask] = (uint32_t)i;
}

__global__ void k_rename2(const uint2 *rows, size_t n, const uint32_t *rank, uint2 *out)
{
    GRID_STRIDE(i, n)
    {
        const uint2 r = rows[i];
        out[i] = make_uint2(rank[r.x], rank[r.y]);
    }
}

extern "C" rfx_status rfx_gpu_rename_by_degree(rfx_gpu *g, const rfx_dev_rows *src, rfx_dev_rows *dst)
{
    const size_t n = src->n;
    if (src->arity != 2) {
        snprintf(g->err, sizeof g->err, "renaming the vertices of rows of %d columns (edges of two wanted)", src->arity);
        return RFX_ERR_INTERNAL;
    }
    if (n >= ((size_t)1 << 31)) {   // a degree (at most 2n) must fit 32 bits
        snprintf(g->err, sizeof g->err, "renaming the vertices of %zu edges (fewer than 2^31 wanted)", n);
        return RFX_ERR_LIMIT;
    }
    if (n == 0)
        return rfx_gpu_copy(g, src, dst);
    unsigned mx = 0, *d_mx = (unsigned *)rfx_gpu_alloc(g, 4);
    rfx_status st = d_mx ? RFX_OK : RFX_ERR_NOMEM;
    cudaError_t e = st == RFX_OK ? cudaMemsetAsync(d_mx, 0, 4, g->stream) : cudaSuccess;
    const unsigned blocks = grid_resident(g, n);
    if (st == RFX_OK && e == cudaSuccess) {
        k_max2<<<blocks, 256, 0, g->stream>>>((const uint2 *)src->data, n, d_mx);
        if ((e = cudaGetLastError()) == cudaSuccess)
            st = to_host(g, d_mx, &mx, 1);
    }
    rfx_gpu_free(g, d_mx);
    const size_t nv = (size_t)mx + 1;
    const int idbits = mx ? bits_of(mx) : 1;   // the sort's passes: over the ids' and degrees' widths
    // deg becomes the ranks once the keys are made
    uint32_t *deg = NULL, *renamed = NULL;
    uint64_t *keys = NULL, *alt = NULL;
    if (st == RFX_OK && e == cudaSuccess) {
        deg = (uint32_t *)rfx_gpu_alloc(g, nv * 4);
        keys = (uint64_t *)rfx_gpu_alloc(g, nv * 8);
        alt = (uint64_t *)rfx_gpu_alloc(g, nv * 8);
        st = deg && keys && alt ? RFX_OK : RFX_ERR_NOMEM;
    }
    // The counts in sweeps over the rows, each counting the vertices of a span whose
    // counters fill half the L2: random atomics on counters in DRAM move a sector each way
    // per increment. The renaming of R-MAT 24 / 26 on an H100 (2^24 / 2^26 counters), ms:
    // one sweep 23.6 / 157.5; spans of a quarter of the L2's bytes 20.0 / 163.7, a half
    // 18.6 / 128.2, the whole 20.8 / 121.6.
    const size_t span = g->l2_bytes / 8 > ((size_t)1 << 20) ? g->l2_bytes / 8 : (size_t)1 << 20;
    if (st == RFX_OK && e == cudaSuccess && (e = cudaMemsetAsync(deg, 0, nv * 4, g->stream)) == cudaSuccess) {
        for (size_t lo = 0; lo < nv && e == cudaSuccess; lo += span) {
            k_degrees<<<grid_for(n), 256, 0, g->stream>>>((const uint2 *)src->data, n, (uint32_t)lo,
                                                          (uint32_t)(nv - lo < span ? nv - lo : span), deg);
            e = cudaGetLastError();
        }
        if (e == cudaSuccess) {
            k_degree_keys<<<grid_for(nv), 256, 0, g->stream>>>(deg, nv, idbits, keys);
            e = cudaGetLastError();
        }
    }
    int sel = 0;
    if (st == RFX_OK && e == cudaSuccess)   // degrees are at most 2n
        st = cub_sort_u64(g, keys, alt, nv, 0, idbits + bits_of((unsigned)(2 * n)), &sel);
    if (st == RFX_OK && e == cudaSuccess) {
        k_rank_of<<<grid_for(nv), 256, 0, g->stream>>>(sel ? alt : keys, nv, idbits, deg);
        e = cudaGetLastError();
    }
    rfx_gpu_free(g, keys);
    rfx_gpu_free(g, alt);
    if (st == RFX_OK && e == cudaSuccess && !(renamed = (uint32_t *)rfx_gpu_alloc(g, n * 8)))
        st = RFX_ERR_NOMEM;
    if (st == RFX_OK && e == cudaSuccess) {
        k_rename2<<<grid_for(n), 256, 0, g->stream>>>((const uint2 *)src->data, n, deg, (uint2 *)renamed);
        e = cudaGetLastError();
    }
    rfx_gpu_free(g, deg);
    if (st != RFX_OK || e != cudaSuccess) {
        rfx_gpu_free(g, renamed);
        return st != RFX_OK ? st : fail(g, e, "renaming vertices by degree", __FILE__, __LINE__);
    }
    rfx_dev_rows out;
    rfx_gpu_rows_init(&out, 2);
    out.data = renamed;
    out.n = out.cap = n;
    replace(g, dst, &out);
    return RFX_OK;
}

extern "C" rfx_status rfx_gpu_sort_unique_reversed(rfx_gpu *g, const rfx_dev_rows *src, rfx_dev_rows *dst,
                                                   rfx_dev_rows *rev)
{
    if (src->arity != 2) {
        snprintf(g->err, sizeof g->err, "reversing rows of %d columns (two wanted)", src->arity);
        return RFX_ERR_INTERNAL;
    }
    if (src->n < 2) {
        rfx_status st = rfx_gpu_copy(g, src, dst);
        return st ? st : reverse_small(g, dst, rev);
    }
    rfx_dev_rows out;
    reversal rv;
    rfx_status st = sort_rows2(g, src, &out, true, &rv);
    if (st != RFX_OK)
        return st;
    size_t m = out.n;
    replace(g, dst, &out);
    return reverse_sort(g, &rv, m, rev);
}

extern "C" rfx_status rfx_gpu_unique_into(rfx_gpu *g, const rfx_dev_rows *src, rfx_dev_rows *dst)
{
    if (src->arity == 0 || src->n < 2) {
        rfx_status st = rfx_gpu_copy(g, src, dst);
        if (st == RFX_OK && dst->arity == 0 && dst->n)
            dst->n = 1;
        return st;
    }
    /* the compaction writes fresh memory anyway: read src directly, no copy first */
    uint64_t *flags;
    ALLOC(flags, src->n * 8);
    k_flag_unique<<<grid_for(src->n), 256, 0, g->stream>>>(src->data, src->n, src->arity, flags);
    CK_LAUNCH();
    rfx_dev_rows out;
    rfx_status st = compact(g, src->data, src->n, src->arity, flags, &out);
    rfx_gpu_free(g, flags);
    if (st == RFX_OK)
        replace(g, dst, &out);
    return st;
}

extern "C" rfx_status rfx_gpu_unique(rfx_gpu *g, rfx_dev_rows *r)
{
    return rfx_gpu_unique_into(g, r, r);
}

// ---- expressions: a small stack program in constant memory ----------------------------------
enum { G_COL, G_CONST, G_BIN, G_NEG, G_CMP, G_AND, G_EMIT, G_FILTER };
struct gins {
    uint8_t op, prim;
    uint16_t arg;
    uint32_t value;
};
// The program travels as a kernel parameter (constant bank, like __constant__ memory, but
// owned by the launch: engines in other threads cannot overwrite it mid-run).
#define MAX_PROG RFX_RX_DEVICE_MAX_INS
struct gprog {
    gins ins[MAX_PROG];
};

typedef struct prog {
    gins ins[MAX_PROG];
    int n, depth, max_depth;
    bool overflow, divides;
} prog;

static void emit_ins(prog *p, int op, int prim, int arg, uint32_t value, int push)
{
    if (p->n >= MAX_PROG) {
        p->overflow = true;
        return;
    }
    p->ins[p->n++] = gins{(uint8_t)op, (uint8_t)prim, (uint16_t)arg, value};
    p->depth += push;
    if (p->depth > p->max_depth)
        p->max_depth = p->depth;
}

static void compile_rx(prog *p, const rfx_rx *e)
{
    switch (e->kind) {
    case RFX_RX_COL: emit_ins(p, G_COL, e->prim, e->col, 0, 1); break;
    case RFX_RX_CONST: emit_ins(p, G_CONST, e->prim, 0, e->value, 1); break;
    case RFX_RX_NEG: compile_rx(p, e->l); emit_ins(p, G_NEG, e->prim, 0, 0, 0); break;
    case RFX_RX_BIN:
        compile_rx(p, e->l);
        compile_rx(p, e->r);
        emit_ins(p, G_BIN, e->prim, e->op, 0, -1);
        p->divides |= e->op == RFX_DIV || e->op == RFX_MOD;
        break;
    case RFX_RX_CMP: compile_rx(p, e->l); compile_rx(p, e->r); emit_ins(p, G_CMP, e->prim, e->op, 0, -1); break;
    case RFX_RX_AND: compile_rx(p, e->l); compile_rx(p, e->r); emit_ins(p, G_AND, 0, 0, 0, -1); break;
    case RFX_RX_FN: p->overflow = true; break;   // host-only (ra_ir's host_only): never sent here
    }
}

#define STACK RFX_RX_DEVICE_MAX_STACK

/* Compiles the predicate (ending in FILTER; none when pred is NULL) into code at 0 and the
 * outputs (EMIT k) after it: the whole program is plen + olen long. */
static rfx_status load_prog(rfx_gpu *g, const rfx_rx *pred, rfx_rx *const *out, int nout, gprog *code, int *plen,
                            int *olen, int *depth)
{
    prog *p = (prog *)calloc(1, sizeof *p);
    if (!p)
        return RFX_ERR_NOMEM;
    if (pred) {
        compile_rx(p, pred);
        emit_ins(p, G_FILTER, 0, 0, 0, -1);
    }
    *plen = p->n;
    for (int k = 0; k < nout; k++) {
        compile_rx(p, out[k]);
        emit_ins(p, G_EMIT, 0, k, 0, -1);
    }
    *olen = p->n - *plen;
    if (p->overflow || p->max_depth > STACK) {
        snprintf(g->err, sizeof g->err, "expression too large for the device interpreter (%d instructions, depth %d)",
                 p->n, p->max_depth);
        free(p);
        return RFX_ERR_LIMIT;
    }
    memcpy(code->ins, p->ins, sizeof(gins) * (size_t)p->n);
    *depth = p->max_depth;
    // only a division can raise the flag: without one there is nothing to clear or read
    // back (the read-back is a host wait, ~10 us a call)
    g->div_armed = p->divides;
    free(p);
    if (g->div_armed)
        CK(cudaMemsetAsync(g->d_flag, 0, sizeof(unsigned), g->stream));
    return RFX_OK;
}

/* Runs the loaded program on one (pair of) tuple(s); false when the filter rejects. */
__device__ bool run_prog_at(const gins *code, int start, int len, const uint32_t *t0, int a0, const uint32_t *t1,
                            uint32_t *out, bool *div0)
{
    uint32_t st[STACK];
    int sp = 0;
    for (int pc = start; pc < start + len; pc++) {
        gins in = code[pc];
        switch (in.op) {
        case G_COL: st[sp++] = in.arg < a0 ? t0[in.arg] : t1[in.arg - a0]; break;
        case G_CONST: st[sp++] = in.value; break;
        case G_NEG: st[sp - 1] = rfx_negate(in.prim, st[sp - 1]); break;
        case G_BIN: sp--; st[sp - 1] = rfx_binary(in.arg, in.prim, st[sp - 1], st[sp], div0); break;
        case G_CMP: sp--; st[sp - 1] = rfx_compare(in.arg, in.prim, st[sp - 1], st[sp]); break;
        case G_AND: sp--; st[sp - 1] = st[sp - 1] && st[sp]; break;
        case G_FILTER: if (!st[--sp]) return false; break;
        case G_EMIT: out[in.arg] = st[--sp]; break;
        }
    }
    return true;
}

__device__ __forceinline__ bool run_prog(const gins *code, int len, const uint32_t *t0, int a0, const uint32_t *t1,
                                         uint32_t *out, bool *div0)
{
    return run_prog_at(code, 0, len, t0, a0, t1, out, div0);
}

static rfx_status check_div0(rfx_gpu *g)
{
    unsigned f = 0;
    if (!g->div_armed)
        return RFX_OK;
    rfx_status st = to_host(g, g->d_flag, &f, 1);
    if (st == RFX_OK && f) {
        snprintf(g->err, sizeof g->err, "division by zero");
        return RFX_ERR_DIV0;
    }
    return st;
}

// ---- map / filter ----------------------------------------------------------------------
__global__ void k_mapfilter(const __grid_constant__ gprog code, const uint32_t *src, size_t n, int arity, int len,
                            int nout, uint32_t *out, uint64_t *flags, unsigned *div_flag)
{
    bool div0 = false;
    GRID_STRIDE(i, n)
    {
        bool keep = run_prog(code.ins, len, src + i * arity, arity, NULL, out + i * nout, &div0);
        if (flags)
            flags[i] = keep;
    }
    if (div0)
        atomicOr(div_flag, 1u);
}

/* Projection onto plain columns: no interpreter, 8-byte rows moved as one load. */
struct colmap {
    int n;
    int col[16];
};

/* Two-column rows: one 8-byte load and store per row. */
__global__ void k_project2(const uint2 *src, size_t n, int c0, int c1, uint2 *out)
{
    GRID_STRIDE(i, n)
    {
        uint2 v = src[i];
        out[i] = make_uint2(c0 ? v.y : v.x, c1 ? v.y : v.x);
    }
}

/* __grid_constant__: the column map is read from parameter space, not copied per thread. */
__global__ void k_project(const uint32_t *src, size_t n, int arity, const __grid_constant__ colmap m, uint32_t *out)
{
    GRID_STRIDE(i, n)
    {
        const uint32_t *t = src + i * arity;
        for (int k = 0; k < m.n; k++)
            out[i * m.n + k] = t[m.col[k]];
    }
}

static bool plain_columns(rfx_rx *const *out, int nout, colmap *m)
{
    if (nout < 1 || nout > 16)
        return false;
    m->n = nout;
    for (int k = 0; k < nout; k++) {
        if (out[k]->kind != RFX_RX_COL)
            return false;
        m->col[k] = out[k]->col;
    }
    return true;
}

// ---- filter: one pass, order kept (decoupled look-back over tiles) -----------------------
#define SEL_THREADS 256
// A look-back word: two flags, the launch's tag (bits 46-61) and the value. A word whose
// tag is not the launch's is not ready, so words kept from earlier launches need no
// clearing (tagged_words).
#define LB_AGGREGATE (1ull << 62)
#define LB_PREFIX (2ull << 62)
#define LB_TAG (0xffffull << 46)
#define LB_VALUE ((1ull << 46) - 1)

/* A tiled launch's look-back state: a word per tile, the grand total's host word, the
 * launch's tag, and the tile counter of persistent launches (lb_take), which the block
 * that takes ticket `last` (ntiles + grid - 1: each block takes tiles until one is past
 * the end) sets back to zero for the next launch. Launches of a block a tile leave the
 * counter alone (lb_tile). */
struct lb_args {
    unsigned long long *status, *total, tag;
    unsigned *counter;
    unsigned last;
};

__device__ __forceinline__ bool lb_ready(unsigned long long y, unsigned long long tag)
{
    return (y & LB_TAG) == tag && (y & (LB_AGGREGATE | LB_PREFIX)) != 0;
}

/* The tile of a block-a-tile launch: its block index. Blocks of a grid start in index
 * order (CUB's decoupled look-back relies on it too), so a look-back never waits on a
 * block that has not started; a ticket from the counter cost every tile an atomic's
 * round trip and a barrier before its first load (H100, a generated 3-output FILTER of
 * 10%: 4-6% of its time). */
__device__ __forceinline__ size_t lb_tile()
{
    return blockIdx.x;
}

/* The next tile of a persistent launch, in the order blocks ask: a look-back never waits
 * on a tile not taken. */
__device__ __forceinline__ unsigned lb_take(const lb_args &lb)
{
    unsigned t = atomicAdd(lb.counter, 1u);
    if (t == lb.last)
        atomicExch(lb.counter, 0u);
    return t;
}

/* The offset of tile `tile`, whose count is total, among all tiles' outputs: decoupled
 * look-back by one whole warp (all lanes call it), 32 earlier tiles' words at a time,
 * summed back to the nearest one that holds its inclusive prefix (tiles are taken in
 * launch order, so every earlier tile is running or done; one lane walking back a tile at
 * a time held generated FILTER kernels to 71% of the copy bandwidth on an H100, the warp
 * to 97%). The last tile also writes the grand total. */
__device__ unsigned long long lookback_warp(unsigned long long total, size_t tile, size_t ntiles, const lb_args &lb)
{
    unsigned lane = threadIdx.x & 31;
    unsigned long long excl = 0, *status = lb.status;
    if (lane == 0)
        atomicExch(&status[tile], (tile == 0 ? LB_PREFIX : LB_AGGREGATE) | lb.tag | total);
    for (long long top = (long long)tile - 1; top >= 0; top -= 32) {
        long long t = top - (long long)lane;
        unsigned long long y = t >= 0 ? *(volatile unsigned long long *)&status[t] : LB_PREFIX | lb.tag;
        while (!__all_sync(0xffffffffu, lb_ready(y, lb.tag)))
            if (!lb_ready(y, lb.tag))
                y = *(volatile unsigned long long *)&status[t];
        unsigned prefixes = __ballot_sync(0xffffffffu, (y & LB_PREFIX) != 0);
        int stop = prefixes ? __ffs(prefixes) - 1 : 31;
        unsigned long long v = (int)lane <= stop ? (y & LB_VALUE) : 0;
        for (int o = 16; o > 0; o >>= 1)
            v += __shfl_xor_sync(0xffffffffu, v, o);
        excl += v;
        if (prefixes)
            break;
    }
    if (lane == 0) {
        if (tile != 0)
            atomicExch(&status[tile], LB_PREFIX | lb.tag | (excl + total));
        if (tile == ntiles - 1) {   // the grand total, then the launch's tag beside it (lb_wait)
            *lb.total = excl + total;
            __threadfence_system();
            ((volatile unsigned long long *)lb.total)[1] = lb.tag;
        }
    }
    return excl;
}

/* By warp 0 of a block whose kept rows are counted per (row slab, warp) in s_excl (W <= 128
 * counts, row order; each lane scans W / 32 neighbours): their exclusive scan in place,
 * *tile_kept the tile's count, and the tile's offset by look-back, returned. */
__device__ __forceinline__ unsigned long long place_slabs(unsigned *s_excl, int W, size_t tile, size_t ntiles,
                                                          const lb_args &lb, unsigned *tile_kept)
{
    const unsigned lane = threadIdx.x & 31, P = ((unsigned)W + 31) / 32;
    unsigned c[4], sum = 0;
#pragma unroll
    for (unsigned q = 0; q < 4; q++) {
        c[q] = q < P && lane * P + q < (unsigned)W ? s_excl[lane * P + q] : 0;
        sum += c[q];
    }
    unsigned incl = sum;
    for (int o = 1; o < 32; o <<= 1) {
        unsigned v = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= (unsigned)o)
            incl += v;
    }
    unsigned run = incl - sum;
#pragma unroll
    for (unsigned q = 0; q < 4; q++)
        if (q < P && lane * P + q < (unsigned)W) {
            s_excl[lane * P + q] = run;
            run += c[q];
        }
    *tile_kept = __shfl_sync(0xffffffffu, incl, 31);
    return lookback_warp(*tile_kept, tile, ntiles, lb);
}

/* Each thread's count scanned across the block (256 threads): returns the counts of the
 * threads before this one, *tile_n the block's total (all threads). */
template <typename T>
__device__ __forceinline__ T block_offsets(T cnt, T *tile_n)
{
    __shared__ T s_warp[8], s_n;
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    T incl = cnt;
    for (int o = 1; o < 32; o <<= 1) {
        T v = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= (unsigned)o)
            incl += v;
    }
    if (lane == 31)
        s_warp[warp] = incl;
    __syncthreads();
    if (warp == 0) {
        T w = lane < 8 ? s_warp[lane] : 0, wi = w;
        for (int o = 1; o < 8; o <<= 1) {
            T v = __shfl_up_sync(0xffffffffu, wi, o);
            if (lane >= (unsigned)o)
                wi += v;
        }
        __syncwarp();
        if (lane < 8)
            s_warp[lane] = wi - w;
        if (lane == 7)
            s_n = wi;
    }
    __syncthreads();
    *tile_n = s_n;
    return s_warp[warp] + incl - cnt;
}

/* Where a block's rows go: block_offsets, and the block's total placed among all tiles by
 * look-back. Returns the counts of the threads before this one; *tile_n, *tile_at: the
 * block's total and its offset. */
template <typename T>
__device__ __forceinline__ T block_place(T cnt, size_t tile, size_t ntiles, const lb_args &lb,
                                         unsigned long long *tile_n, unsigned long long *tile_at)
{
    __shared__ unsigned long long s_at;
    T n, excl = block_offsets<T>(cnt, &n);
    if (threadIdx.x < 32) {
        unsigned long long at = lookback_warp(n, tile, ntiles, lb);
        if (threadIdx.x == 0)
            s_at = at;
    }
    __syncthreads();
    *tile_n = n;
    *tile_at = s_at;
    return excl;
}

/* The context's look-back words, kept between launches (the tiled primitives' and the
 * generated FILTERs'): a launch takes `words` of them tagged with a new tag (LB_TAG), so
 * that it clears nothing first (a memset is a launch: ~8 us of a 64 MB generated filter's
 * ~80). Word 0 is the tile counter, which the launch's last ticket sets back to 0. The
 * words are zeroed when they grow, when the tags wrap and after a failed launch. They
 * come from cudaMalloc, not the pool (counted in the budget all the same): held in the
 * pool across runs they made SELECTs of 10% of 256 MB-4 GB 1.5-2.3x slower (H100,
 * fused and not; not understood), and rfx_gpu_reclaim must not free them. */
static rfx_status tagged_words(rfx_gpu *g, size_t words, unsigned long long **status, unsigned **counter,
                               unsigned long long *tag)
{
    if (words + 1 > g->tagged_cap) {
        size_t cap = words + 1 > 2 * g->tagged_cap ? words + 1 : 2 * g->tagged_cap, used = rfx_gpu_in_use(g);
        bool injected = rfx_fault_device_alloc();
        if (injected || used - g->tagged_cap * 8 + cap * 8 > g->budget) {
            snprintf(g->err, sizeof g->err, "device memory budget exceeded: %zu bytes in use, %zu asked for look-back words%s",
                     used, cap * 8, injected ? " (injected by RFX_FAULT_DEVICE)" : "");
            return RFX_ERR_NOMEM;
        }
        unsigned long long *w = NULL;
        CK(cudaStreamSynchronize(g->stream));   // the old words may be in use
        if (g->tagged)
            cudaFree(g->tagged);
        g->tagged = NULL;
        g->tagged_cap = 0;
        CK(cudaMalloc((void **)&w, cap * 8));
        g->tagged = w;
        g->tagged_cap = cap;
        g->tagged_clean = false;
    }
    if (!g->tagged_clean || g->tag == 0xffff) {
        CK(cudaMemsetAsync(g->tagged, 0, g->tagged_cap * 8, g->stream));
        g->tag = 0;
        g->tagged_clean = true;
    }
    g->tag++;
    *counter = (unsigned *)g->tagged;
    *status = g->tagged + 1;
    *tag = (unsigned long long)g->tag << 46;
    return RFX_OK;
}

/* The grand total of a look-back goes straight to a pair of the context's pinned host
 * words: the total, then the launch's tag once the total is there. The host reads the
 * total as soon as the tag appears (lb_wait), which is before the kernel's other tiles
 * have written their rows: everything after reads those on the stream, in order. That
 * saves every tiled primitive a copy, and the wait for the kernel's end. */
#define LB_TOTAL_WORD 4        // and 5: the tiled primitives'
#define LFTJ_SCAN_WORD 8       // and 9: a triejoin emit's scan (gpu_lftj.cuh)

/* Points lb's total at host words `word` and `word + 1` and clears the second; before the
 * launch. */
static void lb_arm(rfx_gpu *g, lb_args *lb, int word)
{
    lb->total = g->d_words + word;
    ((volatile uint64_t *)g->h_words)[word + 1] = 0;
}

/* Waits until the kernel `call` writes tag into host word `word`: spins on it, asking the
 * stream now and then whether the kernel failed or ended without writing it. */
static rfx_status tag_wait(rfx_gpu *g, unsigned long long tag, int word, const char *call)
{
    volatile uint64_t *h = (volatile uint64_t *)g->h_words;
    for (unsigned spin = 1; h[word] != tag; spin++) {
        if (spin % 256)
            continue;
        cudaError_t e = cudaStreamQuery(g->stream);
        if (e == cudaErrorNotReady)
            continue;
        if (e != cudaSuccess) {
            g->tagged_clean = false;
            return fail(g, e, call, __FILE__, __LINE__);
        }
        if (h[word] != tag) {   // the stream is done: the word is final
            g->tagged_clean = false;
            snprintf(g->err, sizeof g->err, "%s:%d: %s ended without writing its total", __FILE__, __LINE__, call);
            return RFX_ERR_INTERNAL;
        }
    }
    return RFX_OK;
}

#define EMPTY_WORD 12   // rfx_gpu_empty_launch's

__global__ void k_empty(unsigned long long *word, unsigned long long tag)
{
    if (word && threadIdx.x == 0 && blockIdx.x == 0)
        *word = tag;
}

extern "C" rfx_status rfx_gpu_empty_launch(rfx_gpu *g, bool wait)
{
    static std::atomic<unsigned long long> tag;
    unsigned long long t = ++tag;
    k_empty<<<1, 32, 0, g->stream>>>(wait ? g->d_words + EMPTY_WORD : NULL, t);
    CK(cudaGetLastError());
    return wait ? tag_wait(g, t, EMPTY_WORD, "k_empty") : RFX_OK;
}

/* The total of the launch lb was armed for (host words `word`, `word + 1`). */
static rfx_status lb_wait(rfx_gpu *g, const lb_args &lb, int word, const char *call, unsigned long long *total)
{
    rfx_status st = tag_wait(g, lb.tag, word + 1, call);
    if (st == RFX_OK)
        *total = ((volatile uint64_t *)g->h_words)[word];
    return st;
}

/* A tiled kernel's look-back scratch: tagged words, a status word per tile (taken again
 * for a second launch over the same tiles by lb_retag), `extra` bytes for the caller
 * (freed by lb_free), and the total's host words LB_TOTAL_WORD (read by lb_total). */
struct lb_scratch {
    lb_args a;
    void *extra;
    size_t ntiles;
};

static rfx_status lb_retag(rfx_gpu *g, lb_scratch *s)
{
    lb_arm(g, &s->a, LB_TOTAL_WORD);
    return tagged_words(g, s->ntiles, &s->a.status, &s->a.counter, &s->a.tag);
}

static rfx_status lb_alloc(rfx_gpu *g, size_t ntiles, size_t extra, lb_scratch *s)
{
    s->ntiles = ntiles;
    s->extra = NULL;
    s->a.last = 0;   // a block a tile (lb_tile) takes no ticket; persistent kernels set it
    if (extra && !(s->extra = rfx_gpu_alloc(g, extra)))
        return RFX_ERR_NOMEM;
    rfx_status st = lb_retag(g, s);
    if (st) {
        rfx_gpu_free(g, s->extra);
        s->extra = NULL;
    }
    return st;
}

/* After the launch: a failed one may leave the counter and words half-set. */
static void lb_free(rfx_gpu *g, lb_scratch *s, bool failed)
{
    rfx_gpu_free(g, s->extra);
    s->extra = NULL;
    if (failed)
        g->tagged_clean = false;
}

/* The look-back's grand total of the kernel `call` just launched over lb's tiles (a kernel
 * of no tiles keeps nothing). */
static rfx_status lb_total(rfx_gpu *g, const lb_scratch *lb, const char *call, unsigned long long *total)
{
    *total = 0;
    if (lb->ntiles == 0)
        return RFX_OK;
    return lb_wait(g, lb->a, LB_TOTAL_WORD, call, total);
}

/* The start of a tiled kernel that keeps some of its rows: res for at most n rows of
 * `arity` (res->n is set at the end) and the look-back scratch; nothing held on failure. */
static rfx_status tiled_begin(rfx_gpu *g, int arity, size_t n, size_t ntiles, size_t extra, rfx_dev_rows *res,
                              lb_scratch *lb)
{
    rfx_status st = rows_alloc(g, res, arity, n);
    if (st == RFX_OK && (st = lb_alloc(g, ntiles, extra, lb)) != RFX_OK)
        rfx_gpu_rows_free(g, res);
    return st;
}

/* Its end: the launch's error (the kernel named `call`), else the rows kept (the look-back's
 * grand total) in res->n; the scratch freed, res handed to dst (freed on error). */
static rfx_status tiled_end(rfx_gpu *g, cudaError_t e, const char *call, lb_scratch *lb, rfx_dev_rows *res,
                            rfx_dev_rows *dst)
{
    unsigned long long kept = 0;
    rfx_status st = e != cudaSuccess ? fail(g, e, call, __FILE__, __LINE__) : lb_total(g, lb, call, &kept);
    lb_free(g, lb, st != RFX_OK);
    res->n = (size_t)kept;
    return finish_filtered(g, st, res, res->n, res->arity, NULL, dst);
}

/* words staged at st (16-byte aligned, readable 4 words past the end) written to dst by
 * the block in 16-byte stores: the words before dst's first 16-byte boundary, then quads
 * (each from two aligned 16-byte loads of shared memory, shifted by that count, the same
 * for the whole block), then the rest (one store a word cost the one-pass JOIN ~6% of its
 * instructions, ncu; every staged output tile goes out this way). */
__device__ __forceinline__ void block_write_out(uint32_t *dst, const uint32_t *st, unsigned words)
{
    unsigned head = (unsigned)((16 - ((uintptr_t)dst & 15)) & 15) / 4;
    if (head > words)
        head = words;
    for (unsigned w = threadIdx.x; w < head; w += blockDim.x)
        dst[w] = st[w];
    const unsigned quads = (words - head) / 4;
    uint4 *d4 = (uint4 *)(dst + head);
    const uint4 *s4 = (const uint4 *)st;
    for (unsigned q = threadIdx.x; q < quads; q += blockDim.x) {
        uint4 a = s4[q], b = head ? s4[q + 1] : a, v;
        switch (head) {
        case 0: v = a; break;
        case 1: v = make_uint4(a.y, a.z, a.w, b.x); break;
        case 2: v = make_uint4(a.z, a.w, b.x, b.y); break;
        default: v = make_uint4(a.w, b.x, b.y, b.z); break;
        }
        d4[q] = v;
    }
    for (unsigned w = head + 4 * quads + threadIdx.x; w < words; w += blockDim.x)
        dst[w] = st[w];
}

/* The program run over a tile of ITEMS * 256 rows at once, an instruction at a time: the
 * stack lives in shared memory, one slot per stack level and row (row j * 256 + thread:
 * shared accesses free of bank conflicts), so each instruction is decoded once per ITEMS
 * rows (the per-row interpreter kept its stack in local memory and reached 20-50% of the
 * copy bandwidth on an H100). rows: the tile's rows as staged in shared memory. live: rows
 * that exist (predicate) or are kept (outputs); only they raise division
 * by zero or are written. Returns the rows a FILTER keeps. EMIT k writes row j's value at
 * ostage[pos[j] * nout + k]. */
template <int ITEMS>
__device__ __forceinline__ unsigned run_tile(const gins *code, int start, int len, const uint32_t *rows, int arity,
                                             unsigned live, uint32_t *slot, bool *div0, uint32_t *ostage, int nout,
                                             const unsigned *pos)
{
    const int T = ITEMS * SEL_THREADS;
    unsigned pass = live;
    int sp = 0;
    uint32_t *mine = slot + threadIdx.x;
    for (int pc = start; pc < start + len; pc++) {
        gins in = code[pc];
        uint32_t *x = mine + (sp - 1) * T, *y = mine + sp * T;   // top, and the slot above it
        switch (in.op) {
        case G_COL:
#pragma unroll
            for (int j = 0; j < ITEMS; j++)
                y[j * SEL_THREADS] = rows[(j * SEL_THREADS + threadIdx.x) * arity + in.arg];
            sp++;
            break;
        case G_CONST:
#pragma unroll
            for (int j = 0; j < ITEMS; j++)
                y[j * SEL_THREADS] = in.value;
            sp++;
            break;
        case G_NEG:
#pragma unroll
            for (int j = 0; j < ITEMS; j++)
                x[j * SEL_THREADS] = rfx_negate(in.prim, x[j * SEL_THREADS]);
            break;
        case G_BIN:
            sp--;
            x -= T;
            y -= T;
#pragma unroll
            for (int j = 0; j < ITEMS; j++) {
                bool d = false;
                x[j * SEL_THREADS] = rfx_binary(in.arg, in.prim, x[j * SEL_THREADS], y[j * SEL_THREADS], &d);
                *div0 |= d && (live >> j & 1);
            }
            break;
        case G_CMP:
            sp--;
            x -= T;
            y -= T;
#pragma unroll
            for (int j = 0; j < ITEMS; j++)
                x[j * SEL_THREADS] = rfx_compare(in.arg, in.prim, x[j * SEL_THREADS], y[j * SEL_THREADS]);
            break;
        case G_AND:
            sp--;
            x -= T;
            y -= T;
#pragma unroll
            for (int j = 0; j < ITEMS; j++)
                x[j * SEL_THREADS] = x[j * SEL_THREADS] && y[j * SEL_THREADS];
            break;
        case G_FILTER:
            sp--;
#pragma unroll
            for (int j = 0; j < ITEMS; j++)
                if (!x[j * SEL_THREADS])
                    pass &= ~(1u << j);
            break;
        case G_EMIT:
            sp--;
#pragma unroll
            for (int j = 0; j < ITEMS; j++)
                if (live >> j & 1)
                    ostage[pos[j] * nout + in.arg] = x[j * SEL_THREADS];
            break;
        }
    }
    return pass;
}

/* Issues the copies of tile `tile`'s words into shared memory (cp.async: they land while
 * the block works on its previous tile) and commits them as one group. */
__device__ __forceinline__ void stage_tile(uint32_t *raw, const uint32_t *src, size_t n, int arity, size_t tile, int T)
{
    size_t base = tile * (size_t)T;
    if (base < n) {
        const uint32_t *words = src + base * arity;
        unsigned nw = (unsigned)((n - base < (size_t)T ? n - base : (size_t)T) * (size_t)arity);
        for (unsigned w = threadIdx.x; w < nw; w += SEL_THREADS)
            __pipeline_memcpy_async(raw + w, words + w, 4);
    }
    __pipeline_commit();
}

/* SELECT and MAP over one source, by resident blocks that take tiles in order from a
 * counter and copy the next tile in (stage_tile) while they work on the current one (the
 * same kernel with each block's phases in series, load, compute, look-back, write, reached
 * 49% (SELECT) and 76% (MAP) of the copy bandwidth on an H100). A tile: the predicate,
 * its kept rows placed (row order: per row slab j, the warps' ballots; the tile's offset
 * by decoupled look-back, lookback_warp), the outputs run into a staged output tile that
 * is written out in one coalesced sweep. Without a predicate (dense) row i goes to output
 * i. Dynamic shared memory: (2 * arity + depth + nout) * T words. */
template <int ITEMS>
__global__ void __launch_bounds__(SEL_THREADS) k_select_tiles(const __grid_constant__ gprog code, const uint32_t *src,
                                                              size_t n, int arity, int plen, int olen, int depth,
                                                              int nout, bool dense, uint32_t *out, const lb_args lb,
                                                              unsigned *div_flag)
{
    extern __shared__ __align__(16) uint32_t smem[];
    __shared__ unsigned s_next, s_kept, s_excl[ITEMS * SEL_THREADS / 32];
    __shared__ unsigned long long s_at;
    const int T = ITEMS * SEL_THREADS;
    const size_t ntiles = (n + T - 1) / T;
    uint32_t *slot = smem + 2 * arity * T, *ostage = slot + depth * T;   // after the two staged tiles
    unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5, b = 0;
    bool div0 = false;
    if (threadIdx.x == 0)
        s_next = lb_take(lb);
    __syncthreads();
    size_t tile = s_next;
    stage_tile(smem, src, n, arity, tile, T);
    while (tile < ntiles) {
        // A MAP takes its next tile now, a whole tile ahead. A SELECT takes it once its
        // look-back is done: a tile taken early publishes its count a tile late, and the
        // look-backs of the tiles after it wait for that (H100, 2^28 rows: SELECT 26% of
        // the copy bandwidth taking tiles early, 51% late, 49% with no copies ahead; MAP
        // 89%, 76% with no copies ahead).
        size_t next = ntiles;
        uint32_t *rows = smem + b * arity * T;
        __syncthreads();   // everyone has read s_next
        if (dense) {
            if (threadIdx.x == 0)
                s_next = lb_take(lb);
            __syncthreads();
            next = s_next;
            stage_tile(smem + (b ^ 1) * arity * T, src, n, arity, next, T);
            __pipeline_wait_prior(1);   // this thread's copies of the current tile have landed
        } else {
            __pipeline_wait_prior(0);
        }
        __syncthreads();   // and everyone's
        size_t base = tile * T, tile_n = n - base < (size_t)T ? n - base : (size_t)T;
        unsigned live = 0;
#pragma unroll
        for (int j = 0; j < ITEMS; j++)
            live |= (size_t)(j * SEL_THREADS + threadIdx.x) < tile_n ? 1u << j : 0u;
        unsigned pos[ITEMS], keep = live, kept = (unsigned)tile_n;
        unsigned long long at = base;
        if (dense) {
#pragma unroll
            for (int j = 0; j < ITEMS; j++)
                pos[j] = j * SEL_THREADS + threadIdx.x;
        } else {
            keep = run_tile<ITEMS>(code.ins, 0, plen, rows, arity, live, slot, &div0, NULL, 0, NULL);
            unsigned ballot[ITEMS];
#pragma unroll
            for (int j = 0; j < ITEMS; j++) {
                ballot[j] = __ballot_sync(0xffffffffu, keep >> j & 1);
                if (lane == 0)
                    s_excl[j * (SEL_THREADS / 32) + warp] = __popc(ballot[j]);
            }
            __syncthreads();
            // the tile's place, by warp 0, which then takes the next tile
            if (warp == 0) {
                unsigned tile_kept;
                unsigned long long excl = place_slabs(s_excl, ITEMS * SEL_THREADS / 32, tile, ntiles, lb, &tile_kept);
                if (lane == 0) {
                    s_kept = tile_kept;
                    s_at = excl;
                    s_next = lb_take(lb);
                }
            }
            __syncthreads();
            kept = s_kept;
            at = s_at;
            next = s_next;
            stage_tile(smem + (b ^ 1) * arity * T, src, n, arity, next, T);
            unsigned below = (1u << lane) - 1;
#pragma unroll
            for (int j = 0; j < ITEMS; j++)
                pos[j] = s_excl[j * (SEL_THREADS / 32) + warp] + __popc(ballot[j] & below);
        }
        run_tile<ITEMS>(code.ins, plen, olen, rows, arity, keep, slot, &div0, ostage, nout, pos);
        __syncthreads();
        block_write_out(out + at * nout, ostage, kept * (unsigned)nout);
        tile = next;
        b ^= 1;
    }
    __pipeline_wait_prior(0);
    if (div0)
        atomicOr(div_flag, 1u);
}

/* Rows per thread: the most whose tile (two staged copies of the rows, the stack, the
 * staged outputs: `words` a row) fits the block's share of shared memory, else 2 rows in
 * up to 96 KiB (0: too wide, not tiled). */
static int tile_items(int words)
{
    size_t row = (size_t)words * SEL_THREADS * 4;   // 64 KiB: SELECT 51%, 45% at 32 KiB; MAP 89% either way
    return 8 * row <= 64 * 1024 ? 8 : 4 * row <= 64 * 1024 ? 4 : 2 * row <= 96 * 1024 ? 2 : 0;
}

static rfx_status select_tiles(rfx_gpu *g, const rfx_dev_rows *src, const rfx_rx *pred, rfx_rx *const *out, int nout,
                               rfx_dev_rows *dst, bool *done)
{
    int plen, olen, depth;
    gprog code;
    *done = false;
    rfx_status st = load_prog(g, pred, out, nout, &code, &plen, &olen, &depth);
    if (st)
        return st;
    int items = tile_items(2 * src->arity + depth + nout);
    if (!items)
        return RFX_OK;
    size_t n = src->n, T = (size_t)items * SEL_THREADS, ntiles = (n + T - 1) / T,
           smem = (size_t)(2 * src->arity + depth + nout) * T * 4 + 16;   // block_write_out reads past the outputs
    rfx_dev_rows res;
    lb_scratch lb;
    if ((st = tiled_begin(g, nout, n, ntiles, 0, &res, &lb)) != RFX_OK)
        return st;
    bool dense = pred == NULL;
    cudaError_t e;
    // resident blocks only: a block waits (look-back) on tiles that others hold; each
    // block takes tickets until one is past the tiles, so the last is ntiles + grid - 1
#define SELECT_TILES(I)                                                                                              \
    do {                                                                                                             \
        int per_sm = 0;                                                                                              \
        e = cudaFuncSetAttribute(k_select_tiles<I>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);        \
        if (e == cudaSuccess)                                                                                        \
            e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k_select_tiles<I>, SEL_THREADS, smem);       \
        size_t grid = (size_t)(per_sm > 0 ? per_sm : 1) * (size_t)g->sms;                                            \
        grid = grid < ntiles ? grid : ntiles;                                                                        \
        lb.a.last = (unsigned)(ntiles + grid - 1);                                                                   \
        if (e == cudaSuccess)                                                                                        \
            k_select_tiles<I><<<(unsigned)grid, SEL_THREADS, smem, g->stream>>>(                                     \
                code, src->data, n, src->arity, plen, olen, depth, nout, dense, res.data, lb.a, g->d_flag);          \
    } while (0)
    if (items == 8)
        SELECT_TILES(8);
    else if (items == 4)
        SELECT_TILES(4);
    else
        SELECT_TILES(2);
#undef SELECT_TILES
    if (e == cudaSuccess)
        e = cudaGetLastError();
    unsigned long long kept = n;
    if (e != cudaSuccess)
        st = fail(g, e, "k_select_tiles", __FILE__, __LINE__);
    else if (!dense)
        st = lb_total(g, &lb, "k_select_tiles", &kept);
    lb_free(g, &lb, st != RFX_OK);
    if (st == RFX_OK)
        st = check_div0(g);
    res.n = (size_t)kept;
    *done = true;
    return finish_filtered(g, st, &res, n, nout, NULL, dst);
}

// ---- SELECT by plain comparisons: rows in registers, no interpreter ----------------------
/* A predicate that is a conjunction of comparisons of columns and constants (not floats)
 * and outputs that are plain columns, the common SELECT of Datalog: each comparison is
 * three-way on keys made unsigned (flip: the sign bit of `number`), tested against a mask
 * of the outcomes it accepts (1 less, 2 equal, 4 greater). */
#define SS_CLAUSES 8
#define SS_OUTS 8
#define SS_CONST 255   // an operand that is the constant, not a column
struct sel_clause {
    uint32_t lval, rval, flip;
    uint8_t lcol, rcol, mask;
};
struct sel_simple {
    int nclause, nout;
    sel_clause c[SS_CLAUSES];
    uint8_t out[SS_OUTS];
};

/* A column of the row (below arity) or a constant: *col is the column, or SS_CONST with the
 * constant in *val. */
static bool term_operand(const rfx_rx *e, int arity, uint8_t *col, uint32_t *val)
{
    if (e->kind == RFX_RX_COL && e->col >= 0 && e->col < arity)
        *col = (uint8_t)e->col;
    else if (e->kind == RFX_RX_CONST)
        *col = SS_CONST, *val = e->value;
    else
        return false;
    return true;
}

static bool simple_clauses(const rfx_rx *e, int arity, sel_simple *s)
{
    if (e->kind == RFX_RX_AND)
        return simple_clauses(e->l, arity, s) && simple_clauses(e->r, arity, s);
    if (e->kind != RFX_RX_CMP || e->prim == RFX_FLOAT || s->nclause == SS_CLAUSES)
        return false;
    const rfx_rx *side[2] = {e->l, e->r};
    sel_clause *c = &s->c[s->nclause++];
    uint8_t col[2];
    uint32_t val[2] = {0, 0};
    for (int i = 0; i < 2; i++)
        if (!term_operand(side[i], arity, &col[i], &val[i]))
            return false;
    c->lcol = col[0], c->rcol = col[1], c->lval = val[0], c->rval = val[1];
    c->flip = e->prim == RFX_NUMBER ? 0x80000000u : 0u;
    switch (e->op) {
    case RFX_LT: c->mask = 1; break;
    case RFX_LE: c->mask = 3; break;
    case RFX_GT: c->mask = 4; break;
    case RFX_GE: c->mask = 6; break;
    case RFX_EQ: c->mask = 2; break;
    default: c->mask = 5; break;
    }
    return true;
}

static bool simple_select(const rfx_rx *pred, rfx_rx *const *out, int nout, int arity, sel_simple *s)
{
    colmap m;
    memset(s, 0, sizeof *s);
    if (!pred || arity < 1 || arity > 4 || nout > SS_OUTS || !plain_columns(out, nout, &m) ||
        !simple_clauses(pred, arity, s))
        return false;
    s->nout = nout;
    for (int k = 0; k < nout; k++) {
        if (m.col[k] < 0 || m.col[k] >= arity)
            return false;
        s->out[k] = (uint8_t)m.col[k];
    }
    return true;
}

/* Column c of a row held in registers (c uniform across the warp: selects, no local memory). */
template <int A>
__device__ __forceinline__ uint32_t pick(const uint32_t (&v)[A], int c)
{
    uint32_t x = v[0];
#pragma unroll
    for (int i = 1; i < A; i++)
        x = c == i ? v[i] : x;
    return x;
}

template <int A>
__device__ __forceinline__ void load_row(const uint32_t *src, size_t r, uint32_t (&v)[A])
{
    if constexpr (A == 2) {
        uint2 t = ((const uint2 *)src)[r];
        v[0] = t.x, v[1] = t.y;
    } else if constexpr (A == 4) {
        uint4 t = ((const uint4 *)src)[r];
        v[0] = t.x, v[1] = t.y, v[2] = t.z, v[3] = t.w;
    } else {
#pragma unroll
        for (int c = 0; c < A; c++)
            v[c] = src[r * A + c];
    }
}

/* One tile of ITEMS * 256 rows a block, as the weaver's generated FILTER kernels do it (97%
 * of the copy bandwidth there): every load issued first, straight into registers, the
 * comparisons, the kept rows placed by ballots, a scan of the (slab, warp) counts and the
 * decoupled look-back (place_slabs), each kept row written from registers. Tiles are taken
 * in block order (lb_tile), so a block only ever waits on tiles already running. */
template <int A, int ITEMS>
__global__ void __launch_bounds__(SEL_THREADS) k_select_simple(const __grid_constant__ sel_simple s,
                                                               const uint32_t *src, size_t n, uint32_t *out,
                                                               const lb_args lb)
{
    __shared__ unsigned s_excl[ITEMS * SEL_THREADS / 32];
    __shared__ unsigned long long s_at;
    const int T = ITEMS * SEL_THREADS;
    const size_t tile = lb_tile(), ntiles = (n + T - 1) / T, first = tile * T;
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5, below = (1u << lane) - 1;
    uint32_t v[ITEMS][A];
#pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        size_t r = first + (size_t)j * SEL_THREADS + threadIdx.x;
        if (r < n)
            load_row<A>(src, r, v[j]);
    }
    unsigned keep = 0;
#pragma unroll
    for (int j = 0; j < ITEMS; j++)
        keep |= first + (size_t)j * SEL_THREADS + threadIdx.x < n ? 1u << j : 0u;
    for (int c = 0; c < s.nclause; c++) {
        const sel_clause &q = s.c[c];
#pragma unroll
        for (int j = 0; j < ITEMS; j++) {
            uint32_t a = (q.lcol == SS_CONST ? q.lval : pick<A>(v[j], q.lcol)) ^ q.flip,
                     b = (q.rcol == SS_CONST ? q.rval : pick<A>(v[j], q.rcol)) ^ q.flip;
            unsigned outcome = a < b ? 1u : a == b ? 2u : 4u;
            if (!(outcome & q.mask))
                keep &= ~(1u << j);
        }
    }
#pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        unsigned b = __ballot_sync(0xffffffffu, keep >> j & 1);
        if (lane == 0)
            s_excl[j * (SEL_THREADS / 32) + warp] = __popc(b);
    }
    __syncthreads();
    if (warp == 0) {
        unsigned kept;
        unsigned long long at = place_slabs(s_excl, ITEMS * SEL_THREADS / 32, tile, ntiles, lb, &kept);
        if (lane == 0)
            s_at = at;
    }
    __syncthreads();
    const int nout = s.nout;
    uint32_t *const o = out + s_at * nout;   // the tile's place once; rows by 32-bit positions in it
#pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        unsigned b = __ballot_sync(0xffffffffu, keep >> j & 1);
        if (keep >> j & 1) {
            const unsigned at = s_excl[j * (SEL_THREADS / 32) + warp] + __popc(b & below);
            if (nout == 2)
                ((uint2 *)o)[at] = make_uint2(pick<A>(v[j], s.out[0]), pick<A>(v[j], s.out[1]));
            else
                for (int k = 0; k < nout; k++)
                    o[at * nout + k] = pick<A>(v[j], s.out[k]);
        }
    }
}

/* k_select_simple's rows a thread: 16 of one or two words, 8 of three or four (registers). */
static constexpr int ss_items(int arity)
{
    return arity <= 2 ? 16 : 8;
}

/* SELECT by k_select_simple where the predicate and outputs allow (*done then). */
static rfx_status select_simple(rfx_gpu *g, const rfx_dev_rows *src, const rfx_rx *pred, rfx_rx *const *out,
                                int nout, rfx_dev_rows *dst, bool *done)
{
    sel_simple s;
    int A = src->arity, items = ss_items(A);
    size_t n = src->n, T = (size_t)items * SEL_THREADS, ntiles = (n + T - 1) / T;
    *done = false;
    if (n == 0 || ntiles >= (size_t)INT32_MAX || !simple_select(pred, out, nout, A, &s))
        return RFX_OK;
    *done = true;
    rfx_dev_rows res;
    lb_scratch lb;
    rfx_status st = tiled_begin(g, nout, n, ntiles, 0, &res, &lb);
    if (st != RFX_OK)
        return st;
#define SELECT_SIMPLE(A_)                                                                                            \
    k_select_simple<A_, ss_items(A_)><<<(unsigned)ntiles, SEL_THREADS, 0, g->stream>>>(s, src->data, n, res.data, lb.a)
    switch (A) {
    case 1: SELECT_SIMPLE(1); break;
    case 2: SELECT_SIMPLE(2); break;
    case 3: SELECT_SIMPLE(3); break;
    default: SELECT_SIMPLE(4); break;
    }
#undef SELECT_SIMPLE
    cudaError_t e = cudaGetLastError();
    return tiled_end(g, e, "k_select_simple", &lb, &res, dst);
}

// ---- MAP of simple terms: a row a thread, no interpreter ---------------------------------
/* An output that is a column, a constant, or one addition, subtraction or multiplication of
 * two of them: the common arithmetic of Datalog heads (d + 1, x * 2). No division, so
 * nothing is flagged and nothing waited for: such a MAP is one launch, like a projection. */
#define MT_COPY 255   // the term is its left operand (SS_CONST: an operand that is the constant)
struct map_term {
    uint32_t lval, rval;
    uint8_t op, prim, lcol, rcol;
};
struct map_terms {
    int nout;
    map_term t[SS_OUTS];
};

static bool simple_map(rfx_rx *const *out, int nout, int arity, map_terms *m)
{
    memset(m, 0, sizeof *m);
    if (arity < 1 || arity > 4 || nout < 1 || nout > SS_OUTS)
        return false;
    m->nout = nout;
    for (int k = 0; k < nout; k++) {
        const rfx_rx *e = out[k];
        map_term *t = &m->t[k];
        t->prim = (uint8_t)e->prim;
        if (e->kind != RFX_RX_BIN) {
            t->op = MT_COPY;
            if (!term_operand(e, arity, &t->lcol, &t->lval))
                return false;
        } else if (e->op == RFX_ADD || e->op == RFX_SUB || e->op == RFX_MUL) {
            t->op = (uint8_t)e->op;
            if (!term_operand(e->l, arity, &t->lcol, &t->lval) || !term_operand(e->r, arity, &t->rcol, &t->rval))
                return false;
        } else {
            return false;
        }
    }
    return true;
}

template <int A>
__device__ __forceinline__ uint32_t map_term_of(const uint32_t (&v)[A], const map_term &t)
{
    uint32_t x = t.lcol == SS_CONST ? t.lval : pick<A>(v, t.lcol);
    if (t.op == MT_COPY)
        return x;
    bool div0 = false;   // no division here: never set
    return rfx_arith(t.op, t.prim, x, t.rcol == SS_CONST ? t.rval : pick<A>(v, t.rcol), &div0);
}

template <int A>
__global__ void k_map_terms(const __grid_constant__ map_terms m, const uint32_t *src, size_t n, uint32_t *out)
{
    const int nout = m.nout;
    GRID_STRIDE(i, n)
    {
        uint32_t v[A];
        load_row<A>(src, i, v);
        if (nout == 2) {
            ((uint2 *)out)[i] = make_uint2(map_term_of<A>(v, m.t[0]), map_term_of<A>(v, m.t[1]));
        } else {
            for (int k = 0; k < nout; k++)
                out[i * nout + k] = map_term_of<A>(v, m.t[k]);
        }
    }
}

/* MAP by k_map_terms where the outputs allow (*done then). */
static rfx_status map_simple(rfx_gpu *g, const rfx_dev_rows *src, rfx_rx *const *out, int nout, rfx_dev_rows *dst,
                             bool *done)
{
    map_terms m;
    size_t n = src->n;
    *done = false;
    if (!simple_map(out, nout, src->arity, &m))
        return RFX_OK;
    *done = true;
    rfx_dev_rows res;   // n > 0 (the caller's condition)
    rfx_status st = rows_alloc(g, &res, nout, n);
    if (st != RFX_OK)
        return st;
    switch (src->arity) {
    case 1: k_map_terms<1><<<grid_for(n), 256, 0, g->stream>>>(m, src->data, n, res.data); break;
    case 2: k_map_terms<2><<<grid_for(n), 256, 0, g->stream>>>(m, src->data, n, res.data); break;
    case 3: k_map_terms<3><<<grid_for(n), 256, 0, g->stream>>>(m, src->data, n, res.data); break;
    default: k_map_terms<4><<<grid_for(n), 256, 0, g->stream>>>(m, src->data, n, res.data); break;
    }
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        rfx_gpu_rows_free(g, &res);
        return fail(g, e, "k_map_terms", __FILE__, __LINE__);
    }
    replace(g, dst, &res);
    return RFX_OK;
}

extern "C" rfx_status rfx_gpu_mapfilter(rfx_gpu *g, const rfx_dev_rows *src, const rfx_rx *pred, rfx_rx *const *out,
                                        int nout, rfx_dev_rows *dst)
{
    size_t n = src->n;
    colmap m;
    bool plain = !pred && plain_columns(out, nout, &m);
    if (!plain && nout > 0 && n > 0 && n / 512 < (size_t)INT32_MAX) {
        bool done;
        rfx_status st = pred ? select_simple(g, src, pred, out, nout, dst, &done)
                             : map_simple(g, src, out, nout, dst, &done);
        if (st != RFX_OK || done)
            return st;
        st = select_tiles(g, src, pred, out, nout, dst, &done);
        if (st != RFX_OK || done)
            return st;
    }
    if (plain) {
        rfx_dev_rows res;
        rfx_status st = rows_alloc(g, &res, nout, n);
        if (st)
            return st;
        if (n) {
            if (src->arity == 2 && nout == 2)
                k_project2<<<grid_for(n), 256, 0, g->stream>>>((const uint2 *)src->data, n, m.col[0], m.col[1],
                                                               (uint2 *)res.data);
            else
                k_project<<<grid_for(n), 256, 0, g->stream>>>(src->data, n, src->arity, m, res.data);
            cudaError_t e = cudaGetLastError();
            if (e != cudaSuccess) {
                rfx_gpu_rows_free(g, &res);
                return fail(g, e, "k_project", __FILE__, __LINE__);
            }
        }
        replace(g, dst, &res);
        return RFX_OK;
    }
    int plen, olen, depth;
    gprog code;
    rfx_status st = load_prog(g, pred, out, nout, &code, &plen, &olen, &depth);
    if (st)
        return st;
    int len = plen + olen;
    rfx_dev_rows res;
    if ((st = rows_alloc(g, &res, nout, n)) != RFX_OK)
        return st;
    uint64_t *flags = NULL;
    if (pred && n)
        flags = (uint64_t *)rfx_gpu_alloc(g, n * 8);
    if (pred && n && !flags) {
        rfx_gpu_rows_free(g, &res);
        return RFX_ERR_NOMEM;
    }
    if (n) {
        // a nullary output still needs somewhere to write nothing
        uint32_t *o = res.data;
        k_mapfilter<<<grid_for(n), 256, 0, g->stream>>>(code, src->data, n, src->arity, len, nout, o, flags, g->d_flag);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            st = fail(g, e, "k_mapfilter", __FILE__, __LINE__);
    }
    if (st == RFX_OK)
        st = check_div0(g);
    return finish_filtered(g, st, &res, n, nout, flags, dst);
}

// ---- join: count matches per left tuple, scan, expand one output per thread -----------------
__global__ void k_join_count(const uint32_t *a, size_t na, int aa, const uint32_t *b, size_t nb, int ba, int k,
                             uint64_t *lo, uint64_t *cnt)
{
    GRID_STRIDE(i, na)
    {
        if (k == 0) {
            lo[i] = 0;
            cnt[i] = nb;
        } else {
            const uint32_t *key = a + i * aa;
            size_t l = bound_rows(b, ba, nb, key, k, false);
            size_t h = l < nb && cmp_prefix(b + l * ba, key, k) == 0 ? bound_rows(b, ba, nb, key, k, true) : l;
            lo[i] = l;
            cnt[i] = h - l;
        }
    }
}

__global__ void k_join_expand(const __grid_constant__ gprog code, uint64_t total, const uint64_t *off, size_t na, const uint64_t *lo, const uint32_t *a,
                              int aa, const uint32_t *b, int ba, int len, int nout, uint32_t *out, uint64_t *flags,
                              unsigned *div_flag)
{
    bool div0 = false;
    GRID_STRIDE(o, total)
    {
        size_t i = first_above(off, 0, na, o) - 1, j = lo[i] + (o - off[i]);   // o's left row
        bool keep = run_prog(code.ins, len, a + i * aa, aa, b + j * ba, out + o * nout, &div0);
        if (flags)
            flags[o] = keep;
    }
    if (div0)
        atomicOr(div_flag, 1u);
}

// Tiles of the left side (joins, semi-joins) and of a join's outputs; see "join by tiles".
#define SEMI_ITEMS 8
#define SEMI_T (SEMI_ITEMS * 256)
#define JOIN_B_CAP 4096     // right keys staged at most (k <= 4 words: 64 KiB)
#define JOIN_OUT_T 2048
#define JOIN_OFF_CAP 4096   // left rows' offsets staged at most (32 KiB)
static rfx_status join_count_tiles(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, uint64_t *lo,
                                   uint64_t *cnt);
static rfx_status join_expand_tiles(rfx_gpu *g, const gprog &code, uint64_t total, const uint64_t *off, size_t na,
                                    const uint64_t *lo, const rfx_dev_rows *a, const rfx_dev_rows *b, int len,
                                    int nout, uint32_t *out, uint64_t *flags);
static rfx_status join_one_pass(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, const gprog &code,
                                int len, rfx_rx *const *out, int nout, rfx_dev_rows *res, bool *done);

extern "C" rfx_status rfx_gpu_join(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, const rfx_rx *pred,
                                   rfx_rx *const *out, int nout, rfx_dev_rows *dst)
{
    rfx_dev_rows res;
    rfx_gpu_rows_init(&res, nout);
    size_t na = a->n;
    if (na == 0 || b->n == 0) {
        replace(g, dst, &res);
        return RFX_OK;
    }
    int plen, olen, depth;
    gprog code;
    rfx_status st = load_prog(g, pred, out, nout, &code, &plen, &olen, &depth);
    if (st)
        return st;
    int len = plen + olen;
    if (!pred) {
        bool done;
        st = join_one_pass(g, a, b, k, code, len, out, nout, &res, &done);
        if (done || st) {
            if (st == RFX_OK)
                replace(g, dst, &res);
            else
                rfx_gpu_rows_free(g, &res);
            return st;
        }
    }
    uint64_t *lo, *cnt, *off;
    ALLOC(lo, na * 8);
    ALLOC(cnt, na * 8);
    ALLOC(off, na * 8);
    if (k >= 1 && k <= 4 && na / SEMI_T < (size_t)INT32_MAX) {
        st = join_count_tiles(g, a, b, k, lo, cnt);
    } else {
        k_join_count<<<grid_for(na), 256, 0, g->stream>>>(a->data, na, a->arity, b->data, b->n, b->arity, k, lo, cnt);
        CK_LAUNCH();
    }
    uint64_t total = 0;
    if (st == RFX_OK)
        st = scan_total(g, cnt, off, na, &total);
    rfx_gpu_free(g, cnt);
    uint64_t *flags = NULL;
    if (st == RFX_OK && total)
        st = rows_alloc(g, &res, nout, (size_t)total);
    if (st == RFX_OK && total && pred) {
        flags = (uint64_t *)rfx_gpu_alloc(g, total * 8);
        if (!flags)
            st = RFX_ERR_NOMEM;
    }
    if (st == RFX_OK && total && total / JOIN_OUT_T < (uint64_t)INT32_MAX) {
        st = join_expand_tiles(g, code, total, off, na, lo, a, b, len, nout, res.data, flags);
        if (st == RFX_OK)
            st = check_div0(g);
    } else if (st == RFX_OK && total) {
        k_join_expand<<<grid_for(total), 256, 0, g->stream>>>(code, total, off, na, lo, a->data, a->arity, b->data, b->arity,
                                                              len, nout, res.data, flags, g->d_flag);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            st = fail(g, e, "k_join_expand", __FILE__, __LINE__);
        if (st == RFX_OK)
            st = check_div0(g);
    }
    rfx_gpu_free(g, lo);
    rfx_gpu_free(g, off);
    return finish_filtered(g, st, &res, (size_t)total, nout, flags, dst);
}

// ---- union of rows wider than SETOP_MAX_WORDS -----------------------------------------------
// Merge of two disjoint sorted sets, a block per tile of the big side: each row of the
// tile [t0, t1) and of the small side's rows that fall between big[t0] and big[t1] (found
// by two searches) is written once at its final place = own index + rank in the other
// side, the ranks searched in global memory.
#define MERGE_TILE 1024

__device__ __forceinline__ size_t lower_bound_in(const uint32_t *rows, int arity, size_t lo, size_t hi,
                                                 const uint32_t *key)
{
    return partition_point(lo, hi, [=](size_t m) { return cmp_prefix(rows + m * arity, key, arity) < 0; });
}

__global__ void __launch_bounds__(256) k_merge_tiles(const uint32_t *big, size_t nb, const uint32_t *small, size_t ns,
                                                     int arity, uint32_t *out)
{
    __shared__ size_t s_lo, s_hi;
    const size_t t0 = (size_t)blockIdx.x * MERGE_TILE, t1 = t0 + MERGE_TILE < nb ? t0 + MERGE_TILE : nb;
    if (threadIdx.x == 0)
        s_lo = t0 == 0 ? 0 : lower_bound_in(small, arity, 0, ns, big + t0 * arity);
    if (threadIdx.x == 1)
        s_hi = t1 == nb ? ns : lower_bound_in(small, arity, 0, ns, big + t1 * arity);
    __syncthreads();
    const size_t nt = t1 - t0, lo = s_lo, m = s_hi - s_lo;
    const uint32_t *tb = big + t0 * arity, *ts = small + lo * arity;
    for (size_t i = threadIdx.x; i < nt; i += blockDim.x) {
        const uint32_t *row = tb + i * arity;
        size_t pos = t0 + i + lo + lower_bound_in(ts, arity, 0, m, row);
        for (int c = 0; c < arity; c++)
            out[pos * arity + c] = row[c];
    }
    for (size_t j = threadIdx.x; j < m; j += blockDim.x) {
        const uint32_t *row = ts + j * arity;
        size_t pos = lo + j + t0 + lower_bound_in(tb, arity, 0, nt, row);
        for (int c = 0; c < arity; c++)
            out[pos * arity + c] = row[c];
    }
}

// dst[w] = src[w] for w < nw by a block of 256 threads, 8 loads in flight a thread (a loop
// of one load and one store waits a DRAM latency per 256 words).
template <typename T> __device__ __forceinline__ void block_copy(T *dst, const T *src, size_t nw)
{
    for (size_t w0 = threadIdx.x; w0 < nw; w0 += 8 * 256) {
        T v[8];
#pragma unroll
        for (int q = 0; q < 8; q++)
            v[q] = w0 + q * 256 < nw ? src[w0 + q * 256] : 0;
#pragma unroll
        for (int q = 0; q < 8; q++)
            if (w0 + q * 256 < nw)
                dst[w0 + q * 256] = v[q];
    }
}

// ---- set operations by merge path -----------------------------------------------------------
// A tile of SETOP_TD consecutive rows of the merge of a and b (a's rows first among equal
// keys; the tiles' splits found all at once by k_setop_splits) is staged in shared memory
// together with the next row of b; each thread finds its SETOP_D rows of the tile by a
// search along its diagonal and walks them in order. An a row's match is then the next
// row of b: semi- and anti-join keep a's rows with or without one, the union keeps all of
// b and a's rows without one. The kept rows are counted, placed (block scan, decoupled
// look-back) and written from a staged output tile in one sweep. Every row is read once
// and compared about twice: the row-at-a-time searches of k_semi_tiles and k_merge_tiles
// compared each row ~12 times and left the memory system idle meanwhile.
#define SETOP_D 11   // rows a thread (odd: the threads' rows fall in different banks; 7: 47%, 15: 45%)
#define SETOP_TD (SETOP_D * 256)
#define SETOP_MAX_WORDS 4
enum { SETOP_ANTI, SETOP_SEMI, SETOP_UNION };

// splits[t] = the rows of a among the first min(t * SETOP_TD, na + nb) of the merge, G
// lanes a split (search_lanes).
__global__ void k_setop_splits(const uint32_t *a, size_t na, int aa, const uint32_t *b, size_t nb, int ba, int k,
                               size_t ntiles, int G, size_t *splits)
{
    GROUP_STRIDE(t, ntiles + 1, G)
    {
        const size_t d = t * (size_t)SETOP_TD < na + nb ? t * (size_t)SETOP_TD : na + nb,
                     lo = d > nb ? d - nb : 0, hi = d < na ? d : na;
        auto before = [=](size_t m) { return cmp_prefix(a + m * aa, b + (d - 1 - m) * ba, k) <= 0; };
        const size_t at = lanes_partition_point(G, lo, hi, before);
        if (threadIdx.x % G == 0)
            splits[t] = at;
    }
}

// dst[w] = src[w] for w < nw by a block of 256 threads, where dst and src lie alike
// modulo 16 bytes: cp.async of 16-byte pieces between scalar ends, all in flight at once
// (4 pieces a thread through registers: 47% of the floor for DIFFERENCE at 2^28 on an
// H100, 52% so); the caller commits and waits.
__device__ __forceinline__ void block_stage_async(uint32_t *dst, const uint32_t *src, size_t nw)
{
    size_t head = ((16 - ((uintptr_t)src & 15)) & 15) / 4;
    head = head < nw ? head : nw;
    if (threadIdx.x < head)
        __pipeline_memcpy_async(dst + threadIdx.x, src + threadIdx.x, 4);
    size_t n4 = (nw - head) / 4, done = head + n4 * 4;
    for (size_t q = threadIdx.x; q < n4; q += 256)
        __pipeline_memcpy_async(dst + head + 4 * q, src + head + 4 * q, 16);
    if (threadIdx.x < nw - done)
        __pipeline_memcpy_async(dst + done + threadIdx.x, src + done + threadIdx.x, 4);
}

// Shared memory: the output tile (SETOP_TD rows of aa words), then a's and b's rows of
// the tile and b's next row, each placed as in global memory modulo 16 bytes.
static size_t setop_smem(int aa, int ba)
{
    int w = aa > ba ? aa : ba;
    return ((size_t)SETOP_TD * aa + (size_t)(SETOP_TD + 1) * w + 12) * 4;
}

__global__ void __launch_bounds__(256) k_setop_tiles(const uint32_t *a, size_t na, int aa, const uint32_t *b,
                                                     size_t nb, int ba, int k, int mode, const size_t *splits,
                                                     size_t ntiles, uint32_t *out, const lb_args lb)
{
    extern __shared__ __align__(16) uint32_t smem[];
    const size_t tile = lb_tile(), d0 = tile * SETOP_TD, dn = d0 + SETOP_TD < na + nb ? d0 + SETOP_TD : na + nb;
    const size_t a0 = splits[tile], b0 = d0 - a0, b1 = dn - splits[tile + 1];
    const unsigned nat = (unsigned)(splits[tile + 1] - a0), nbt = (unsigned)(b1 - b0),
                   nbx = nbt + (b1 < nb ? 1u : 0u);   // with b's next row
    const uint32_t *ga = a + a0 * aa, *gb = b + b0 * ba;
    uint32_t *so = smem, *sa = so + SETOP_TD * aa + ((uintptr_t)ga & 15) / 4;
    uint32_t *sb = so + ((SETOP_TD * aa + 4 + nat * aa + 3) & ~3u) + ((uintptr_t)gb & 15) / 4;
    block_stage_async(sa, ga, (size_t)nat * aa);
    block_stage_async(sb, gb, (size_t)nbx * ba);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    // this thread's rows of the merge: [x0, x1), starting at a's row i and b's row j
    const unsigned len = (unsigned)(dn - d0), x0 = threadIdx.x * SETOP_D < len ? threadIdx.x * SETOP_D : len,
                   x1 = x0 + SETOP_D < len ? x0 + SETOP_D : len;
    unsigned lo = x0 > nbt ? x0 - nbt : 0, hi = x0 < nat ? x0 : nat;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (cmp_prefix(sa + mid * aa, sb + (x0 - 1 - mid) * ba, k) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    const unsigned i0 = lo, j0 = x0 - lo;
    unsigned took_a = 0, kept = 0, cnt = 0, i = i0, j = j0;
#pragma unroll
    for (int s = 0; s < SETOP_D; s++) {
        if (x0 + s < x1) {
            int c = 1;
            if (i < nat && j < nbx)
                c = cmp_prefix(sa + i * aa, sb + j * ba, k);
            bool from_a = i < nat && (j >= nbt || c <= 0), keep;
            if (from_a) {
                keep = (c == 0) == (mode == SETOP_SEMI);   // a union keeps a's rows without a match
                i++;
            } else {
                keep = mode == SETOP_UNION;
                j++;
            }
            took_a |= (unsigned)from_a << s;
            kept |= (unsigned)keep << s;
            cnt += keep;
        }
    }
    unsigned long long tile_n, tile_at;
    unsigned pos = block_place<unsigned>(cnt, tile, ntiles, lb, &tile_n, &tile_at);
    i = i0;
    j = j0;
#pragma unroll
    for (int s = 0; s < SETOP_D; s++) {
        if (x0 + s < x1) {
            const uint32_t *row = took_a >> s & 1 ? sa + i++ * aa : sb + j++ * ba;
            if (kept >> s & 1) {
                for (int c = 0; c < aa; c++)
                    so[pos * aa + c] = row[c];
                pos++;
            }
        }
    }
    __syncthreads();
    block_write_out(out + tile_at * aa, so, (unsigned)tile_n * aa);
}

// A row of W words (1 or 2) as one integer that orders as the row does: where the key is
// the whole row (sets: the semi-naive loop's differences and unions), the merge compares
// and moves rows in single operations.
template <int W> struct row_key;
template <> struct row_key<1> {
    typedef uint32_t T;
    static __device__ __forceinline__ T at(const uint32_t *s, unsigned i) { return s[i]; }
    static __device__ __forceinline__ void put(uint32_t *d, unsigned i, T v) { d[i] = v; }
};
template <> struct row_key<2> {   // rows 8-byte aligned
    typedef unsigned long long T;
    static __device__ __forceinline__ T at(const uint32_t *s, unsigned i)
    {
        uint2 v = ((const uint2 *)s)[i];
        return (T)v.x << 32 | v.y;
    }
    static __device__ __forceinline__ void put(uint32_t *d, unsigned i, T v)
    {
        ((uint2 *)d)[i] = make_uint2((uint32_t)(v >> 32), (uint32_t)v);
    }
};

// Shared memory of k_setop_rows: a's and b's rows of the tile and b's next row (placed as
// in global memory modulo 16 bytes), which the output tile then overwrites.
static size_t setop_rows_smem(int w)
{
    return ((size_t)(SETOP_TD + 1) * w + 12) * 4;
}

// k_setop_tiles where a and b are W-word rows and the key is the whole row: each thread
// holds the current row of a and of b in registers as they merge and keeps the rows it
// will write there too, so the output tile can overwrite the staged input (half the
// shared memory; 48 registers keep 5 blocks a multiprocessor all the same, and bounds of
// 6 or 8 blocks were no faster). On an H100 the general kernel ran at 72% of the SMs'
// issue rate and 59% of DRAM bandwidth (ncu), DIFFERENCE at 2^24-2^26 at 45-50% of the
// floor; so 58-67% (UNION 55-62% -> 68-79%).
template <int W>
__global__ void __launch_bounds__(256) k_setop_rows(const uint32_t *a, size_t na, const uint32_t *b, size_t nb,
                                                    int mode, const size_t *splits, size_t ntiles, uint32_t *out,
                                                    const lb_args lb)
{
    typedef row_key<W> R;
    typedef typename R::T K;
    extern __shared__ __align__(16) uint32_t smem[];
    const size_t tile = lb_tile(), d0 = tile * SETOP_TD, dn = d0 + SETOP_TD < na + nb ? d0 + SETOP_TD : na + nb;
    const size_t a0 = splits[tile], b0 = d0 - a0, b1 = dn - splits[tile + 1];
    const unsigned nat = (unsigned)(splits[tile + 1] - a0), nbt = (unsigned)(b1 - b0),
                   nbx = nbt + (b1 < nb ? 1u : 0u);   // with b's next row
    const uint32_t *ga = a + a0 * W, *gb = b + b0 * W;
    uint32_t *so = smem, *sa = smem + ((uintptr_t)ga & 15) / 4;
    uint32_t *sb = smem + ((4 + nat * W + 3) & ~3u) + ((uintptr_t)gb & 15) / 4;
    block_stage_async(sa, ga, (size_t)nat * W);
    block_stage_async(sb, gb, (size_t)nbx * W);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    const unsigned len = (unsigned)(dn - d0), x0 = threadIdx.x * SETOP_D < len ? threadIdx.x * SETOP_D : len,
                   x1 = x0 + SETOP_D < len ? x0 + SETOP_D : len;
    unsigned lo = x0 > nbt ? x0 - nbt : 0, hi = x0 < nat ? x0 : nat;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (R::at(sa, mid) <= R::at(sb, x0 - 1 - mid))
            lo = mid + 1;
        else
            hi = mid;
    }
    unsigned i = lo, j = x0 - lo, kept = 0, cnt = 0;
    K ka = i < nat ? R::at(sa, i) : 0, kb = j < nbx ? R::at(sb, j) : 0, row[SETOP_D];
#pragma unroll
    for (int s = 0; s < SETOP_D; s++) {
        if (x0 + s < x1) {
            const bool from_a = i < nat && (j >= nbt || ka <= kb), match = j < nbx && ka == kb;
            bool keep;
            if (from_a) {
                keep = match == (mode == SETOP_SEMI);   // a union keeps a's rows without a match
                row[s] = ka;
                i++;
                ka = i < nat ? R::at(sa, i) : 0;
            } else {
                keep = mode == SETOP_UNION;
                row[s] = kb;
                j++;
                kb = j < nbx ? R::at(sb, j) : 0;
            }
            kept |= (unsigned)keep << s;
            cnt += keep;
        }
    }
    unsigned long long tile_n, tile_at;
    unsigned pos = block_place<unsigned>(cnt, tile, ntiles, lb, &tile_n, &tile_at);   // after every walk
#pragma unroll
    for (int s = 0; s < SETOP_D; s++)
        if (kept >> s & 1)
            R::put(so, pos++, row[s]);
    __syncthreads();
    block_write_out(out + tile_at * W, so, (unsigned)tile_n * W);
}

/* dst = a's rows with (SEMI) or without (ANTI) a row of b equal on the first k columns
 * (b of arity k), or a u b (UNION: equal arities k; sets); a and b sorted, of at most
 * SETOP_MAX_WORDS columns. */
static rfx_status setop_merge(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, int mode,
                              rfx_dev_rows *dst)
{
    size_t na = a->n, nb = b->n, ntiles = (na + nb + SETOP_TD - 1) / SETOP_TD, smem = setop_smem(a->arity, b->arity);
    rfx_dev_rows res;
    lb_scratch lb;   // and the tiles' splits
    rfx_status st = tiled_begin(g, a->arity, mode == SETOP_UNION ? na + nb : na, ntiles, (ntiles + 1) * 8, &res, &lb);
    if (st)
        return st;
    size_t *splits = (size_t *)lb.extra;
    k_setop_splits<<<search_grid(ntiles + 1), 256, 0, g->stream>>>(a->data, na, a->arity, b->data, nb, b->arity, k,
                                                                ntiles, search_lanes(ntiles + 1), splits);
    cudaError_t e = cudaGetLastError();
    // whole rows of one or two words (8-byte aligned) as keys: k_setop_rows
    const int w = a->arity == k && b->arity == k && k <= 2 && ((uintptr_t)a->data | (uintptr_t)b->data) % 8 == 0 ? k : 0;
    auto rows = w == 1 ? k_setop_rows<1> : k_setop_rows<2>;
    if (w)
        smem = setop_rows_smem(w);
    if (e == cudaSuccess)
        e = w ? cudaFuncSetAttribute(rows, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem)
              : cudaFuncSetAttribute(k_setop_tiles, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e == cudaSuccess && w)
        rows<<<(unsigned)ntiles, 256, smem, g->stream>>>(a->data, na, b->data, nb, mode, splits, ntiles, res.data, lb.a);
    else if (e == cudaSuccess)
        k_setop_tiles<<<(unsigned)ntiles, 256, smem, g->stream>>>(a->data, na, a->arity, b->data, nb, b->arity, k,
                                                                  mode, splits, ntiles, res.data, lb.a);
    if (e == cudaSuccess)
        e = cudaGetLastError();
    return tiled_end(g, e, w ? "k_setop_rows" : "k_setop_tiles", &lb, &res, dst);
}

static rfx_status union_rows(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, bool disjoint, rfx_dev_rows *dst);

extern "C" rfx_status rfx_gpu_union(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, rfx_dev_rows *dst)
{
    return union_rows(g, a, b, false, dst);
}

extern "C" rfx_status rfx_gpu_union_disjoint(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b,
                                             rfx_dev_rows *dst)
{
    return union_rows(g, a, b, true, dst);
}

static rfx_status union_rows(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, bool disjoint, rfx_dev_rows *dst)
{
    int ar = a->arity;
    if (ar == 0) {
        rfx_dev_rows r;
        rfx_gpu_rows_init(&r, 0);
        r.n = a->n || b->n ? 1 : 0;
        replace(g, dst, &r);
        return RFX_OK;
    }
    if (b->n == 0 || a->n == 0)
        return rfx_gpu_copy(g, b->n == 0 ? a : b, dst);
    if (ar <= SETOP_MAX_WORDS && (a->n + b->n) / SETOP_TD < (size_t)INT32_MAX)
        return setop_merge(g, a, b, ar, SETOP_UNION, dst);
    // The smaller side less what the larger holds (in the semi-naive loop, full u new, new
    // is disjoint from full already: a search per tuple of the small side). Disjoint sets
    // then merge with each tuple written once at its final place: no unique/compact passes.
    const rfx_dev_rows *big = a->n >= b->n ? a : b, *small = a->n >= b->n ? b : a;
    // Operands known disjoint (the plan says so) skip the search: the small side is
    // merged as it is, borrowed.
    rfx_dev_rows owned;
    rfx_gpu_rows_init(&owned, ar);
    rfx_status st = disjoint ? RFX_OK : rfx_gpu_semijoin(g, small, big, ar, false, &owned);
    if (st)
        return st;
    const rfx_dev_rows *fresh = disjoint ? small : &owned;
    if (fresh->n == 0) {
        rfx_gpu_rows_free(g, &owned);
        return rfx_gpu_copy(g, big, dst);
    }
    rfx_dev_rows res;
    if ((st = rows_alloc(g, &res, ar, big->n + fresh->n)) != RFX_OK) {
        rfx_gpu_rows_free(g, &owned);
        return st;
    }
    size_t tiles = (big->n + MERGE_TILE - 1) / MERGE_TILE;
    k_merge_tiles<<<(unsigned)tiles, 256, 0, g->stream>>>(big->data, big->n, fresh->data, fresh->n, ar, res.data);
    cudaError_t e = cudaGetLastError();
    rfx_gpu_rows_free(g, &owned);
    if (e != cudaSuccess) {
        rfx_gpu_rows_free(g, &res);
        return fail(g, e, "k_merge_tiles", __FILE__, __LINE__);
    }
    replace(g, dst, &res);
    return RFX_OK;
}

// ---- semi-join / anti-join --------------------------------------------------------------------
__global__ void k_semi(const uint32_t *a, size_t na, int aa, const uint32_t *b, size_t nb, int k, bool keep,
                       uint64_t *flags)
{
    GRID_STRIDE(i, na)
    {
        const uint32_t *key = a + i * aa;
        size_t l = bound_rows(b, k, nb, key, k, false);
        bool found = l < nb && cmp_prefix(b + l * k, key, k) == 0;
        flags[i] = found == keep;
    }
}

// A block per tile of SEMI_T rows of a (sorted), in block order: the rows of b
// whose keys lie between the tile's first and last key (k_semi_ranges) are staged in
// shared memory when they fit, each row of the tile is looked up there (else in that
// range of b in global memory), and the rows kept are placed by per-warp ballots and the
// warp-wide look-back and written from a staged output tile in one sweep. So a is read
// once, b at most once, the output written once: no flags and no separate compaction.
#define SEMI_SMEM (96 * 1024)   // a block's shared memory: a's tile, b's segment, the output tile
#define SEMI_MAX_WORDS 4   // a's and b's rows staged up to this width

// range[2t, 2t + 1] = the rows of b whose keys lie between tile t's first and last key:
// all tiles' searches at once, so their latencies overlap (a block doing its own two
// searches first waited ~28 dependent loads per tile).
__global__ void k_semi_ranges(const uint32_t *a, size_t na, int aa, const uint32_t *b, int ba, size_t nb, int k,
                              size_t ntiles, size_t T, int G, size_t *range)
{
    auto key = [=](size_t i) {
        const size_t t = i / 2, row = i % 2 == 0 ? t * T : (t * T + T < na ? t * T + T : na) - 1;
        return a + row * aa;
    };
    GROUP_STRIDE(i, 2 * ntiles, G)
    {
        const uint32_t *x = key(i);
        const bool upper = i % 2 == 1;
        const size_t at = lanes_partition_point(G, 0, nb, [=](size_t m) {
            int c = cmp_prefix(b + m * ba, x, k);
            return c < 0 || (upper && c == 0);
        });
        if (threadIdx.x % G == 0)
            range[i] = at;
    }
}

__global__ void __launch_bounds__(256) k_semi_tiles(const uint32_t *a, size_t na, int aa, const uint32_t *b,
                                                    const size_t *range, int k, bool keep, size_t b_cap, uint32_t *out,
                                                    const lb_args lb)
{
    extern __shared__ __align__(16) uint32_t smem[];   // a's tile, the output tile, b's segment
    __shared__ unsigned s_kept, s_excl[SEMI_T / 32];
    __shared__ unsigned long long s_at;
    uint32_t *sa = smem, *so = sa + SEMI_T * aa, *sb = so + SEMI_T * aa;
    unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const size_t tile = lb_tile(), t0 = tile * SEMI_T, tn = na - t0 < SEMI_T ? na - t0 : SEMI_T,
                 ntiles = (na + SEMI_T - 1) / SEMI_T;
    block_copy(sa, a + t0 * aa, tn * aa);
    const size_t lo = range[2 * tile], m = range[2 * tile + 1] - lo;
    const bool staged = m <= b_cap;
    if (staged)
        block_copy(sb, b + lo * k, m * k);
    __syncthreads();
    const uint32_t *seg = staged ? sb : b + lo * k;
    unsigned ballot[SEMI_ITEMS];
#pragma unroll
    for (int j = 0; j < SEMI_ITEMS; j++) {
        size_t r = (size_t)j * 256 + threadIdx.x;
        bool kept = false;
        if (r < tn) {
            const uint32_t *key = sa + r * aa;
            size_t l = bound_rows(seg, k, m, key, k, false);
            kept = (l < m && cmp_prefix(seg + l * k, key, k) == 0) == keep;
        }
        ballot[j] = __ballot_sync(0xffffffffu, kept);
        if (lane == 0)
            s_excl[j * 8 + warp] = __popc(ballot[j]);
    }
    __syncthreads();
    if (warp == 0) {   // the tile's place
        unsigned tile_kept;
        unsigned long long excl = place_slabs(s_excl, SEMI_T / 32, tile, ntiles, lb, &tile_kept);
        if (lane == 0) {
            s_kept = tile_kept;
            s_at = excl;
        }
    }
    __syncthreads();
    const unsigned below = (1u << lane) - 1;
#pragma unroll
    for (int j = 0; j < SEMI_ITEMS; j++)
        if (ballot[j] >> lane & 1) {
            unsigned at = s_excl[j * 8 + warp] + __popc(ballot[j] & below);
            size_t r = (size_t)j * 256 + threadIdx.x;
            for (int c = 0; c < aa; c++)
                so[at * aa + c] = sa[r * aa + c];
        }
    __syncthreads();
    block_write_out(out + s_at * aa, so, s_kept * (unsigned)aa);
}

static rfx_status semijoin_tiles(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, bool keep,
                                 rfx_dev_rows *dst)
{
    // b's segment: up to twice a tile (one as dense as a: a tile's keys span about a tile
    // of b; with room for 2,048 rows at most half of the tiles of two random sets of equal
    // size fitted, and the rest searched global memory), as far as SEMI_SMEM allows
    size_t na = a->n, ntiles = (na + SEMI_T - 1) / SEMI_T, tiles_a = (size_t)SEMI_T * a->arity * 2 * 4,
           b_cap = (SEMI_SMEM - tiles_a) / ((size_t)k * 4), smem;
    b_cap = b_cap < 2 * (size_t)SEMI_T ? b_cap : 2 * (size_t)SEMI_T;
    smem = tiles_a + b_cap * k * 4 + 16;   // block_write_out reads up to 4 words past the output tile
    rfx_dev_rows res;
    lb_scratch lb;   // and each tile's range of b
    rfx_status st = tiled_begin(g, a->arity, na, ntiles, ntiles * 16, &res, &lb);
    if (st)
        return st;
    size_t *range = (size_t *)lb.extra;
    k_semi_ranges<<<search_grid(2 * ntiles), 256, 0, g->stream>>>(a->data, na, a->arity, b->data, k, b->n, k, ntiles,
                                                               SEMI_T, search_lanes(2 * ntiles), range);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(k_semi_tiles, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e == cudaSuccess) {
        k_semi_tiles<<<(unsigned)ntiles, 256, smem, g->stream>>>(a->data, na, a->arity, b->data, range, k, keep, b_cap,
                                                                 res.data, lb.a);
        e = cudaGetLastError();
    }
    return tiled_end(g, e, "k_semi_tiles", &lb, &res, dst);
}

extern "C" rfx_status rfx_gpu_semijoin(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, bool keep,
                                       rfx_dev_rows *dst)
{
    if (k == 0) {
        bool all = (b->n > 0) == keep;
        if (all)
            return rfx_gpu_copy(g, a, dst);
        rfx_dev_rows r;
        rfx_gpu_rows_init(&r, a->arity);
        replace(g, dst, &r);
        return RFX_OK;
    }
    if (a->n == 0 || (b->n == 0 && !keep))
        return rfx_gpu_copy(g, a, dst);
    // by merge path where b is not much larger than a (it reads all of b), else by
    // looking a's rows up in b
    if (a->arity <= SETOP_MAX_WORDS && k <= SETOP_MAX_WORDS && b->n / 4 <= a->n &&
        (a->n + b->n) / SETOP_TD < (size_t)INT32_MAX)
        return setop_merge(g, a, b, k, keep ? SETOP_SEMI : SETOP_ANTI, dst);
    if (a->arity <= SEMI_MAX_WORDS && k <= SEMI_MAX_WORDS && a->n / SEMI_T < (size_t)INT32_MAX)
        return semijoin_tiles(g, a, b, k, keep, dst);
    uint64_t *flags;
    ALLOC(flags, a->n * 8);
    k_semi<<<grid_for(a->n), 256, 0, g->stream>>>(a->data, a->n, a->arity, b->data, b->n, k, keep, flags);
    CK_LAUNCH();
    rfx_dev_rows res;
    rfx_status st = compact(g, a->data, a->n, a->arity, flags, &res);
    rfx_gpu_free(g, flags);
    if (st == RFX_OK)
        replace(g, dst, &res);
    return st;
}

// ---- join by tiles ----------------------------------------------------------------------
// The count: a block per tile of SEMI_T left rows looks each row's key up among the keys
// of the right side in the tile's range (k_semi_ranges), staged in shared memory when they
// fit; the expansion: a block per JOIN_OUT_T outputs looks each output's left row up
// among the offsets of the rows that tile covers (k_join_starts), staged likewise. The
// kernels they replace searched the whole right side, and all left rows' offsets, in
// global memory per row and per output.

__global__ void __launch_bounds__(256) k_join_count_tiles(const uint32_t *a, size_t na, int aa, const uint32_t *b,
                                                          int ba, int k, const size_t *range, uint64_t *lo,
                                                          uint64_t *cnt)
{
    extern __shared__ uint32_t sk[];   // the right side's keys in the tile's range
    const size_t t = blockIdx.x, r0 = range[2 * t], m = range[2 * t + 1] - r0, mk = m * (size_t)k;
    const bool staged = m <= JOIN_B_CAP;
    if (staged)
        for (size_t w0 = threadIdx.x; w0 < mk; w0 += 8 * 256) {   // 8 loads in flight
            uint32_t v[8];
#pragma unroll
            for (int q = 0; q < 8; q++) {
                size_t w = w0 + q * 256;
                v[q] = w < mk ? b[(r0 + w / k) * ba + w % k] : 0;
            }
#pragma unroll
            for (int q = 0; q < 8; q++)
                if (w0 + q * 256 < mk)
                    sk[w0 + q * 256] = v[q];
        }
    __syncthreads();
    const uint32_t *seg = staged ? sk : b + r0 * ba;
    const int sa = staged ? k : ba;
    for (int j = 0; j < SEMI_ITEMS; j++) {
        size_t i = t * SEMI_T + (size_t)j * 256 + threadIdx.x;
        if (i >= na)
            break;
        const uint32_t *key = a + i * aa;
        size_t l = bound_rows(seg, sa, m, key, k, false);
        size_t h = l < m && cmp_prefix(seg + l * sa, key, k) == 0 ? bound_rows(seg, sa, m, key, k, true) : l;
        lo[i] = r0 + l;
        cnt[i] = h - l;
    }
}

// starts[t] = the left row of output t * JOIN_OUT_T (t < ntiles), starts[ntiles] = the
// left row of the last output: the last i with off[i] <= o (rows without outputs share
// their successor's offset and are passed over).
__global__ void k_join_starts(const uint64_t *off, size_t na, uint64_t total, size_t ntiles, size_t *starts)
{
    GRID_STRIDE(t, ntiles + 1)
    {
        uint64_t o = t < ntiles ? (uint64_t)t * JOIN_OUT_T : total - 1;
        starts[t] = first_above(off, 0, na, o) - 1;
    }
}

__global__ void __launch_bounds__(256) k_join_expand_tiles(const __grid_constant__ gprog code, uint64_t total,
                                                           const uint64_t *off, const size_t *starts,
                                                           const uint64_t *lo, const uint32_t *a, int aa,
                                                           const uint32_t *b, int ba, int len, int nout,
                                                           uint32_t *out, uint64_t *flags, unsigned *div_flag)
{
    __shared__ uint64_t so[JOIN_OFF_CAP];
    const size_t t = blockIdx.x, i0 = starts[t], nr = starts[t + 1] - i0 + 1;
    const bool staged = nr <= JOIN_OFF_CAP;
    if (staged)
        block_copy(so, off + i0, nr);
    __syncthreads();
    const uint64_t *seg = staged ? so : off + i0;
    bool div0 = false;
    for (int j = 0; j < JOIN_OUT_T / 256; j++) {
        uint64_t o = (uint64_t)t * JOIN_OUT_T + (uint64_t)j * 256 + threadIdx.x;
        if (o >= total)
            break;
        size_t l = first_above(seg, 0, nr, o), i = i0 + l - 1, jb = lo[i] + (o - seg[l - 1]);
        bool keep = run_prog(code.ins, len, a + i * aa, aa, b + jb * ba, out + o * nout, &div0);
        if (flags)
            flags[o] = keep;
    }
    if (div0)
        atomicOr(div_flag, 1u);
}

// lo, cnt: per left row, its first match among b's rows and their number.
static rfx_status join_count_tiles(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, uint64_t *lo,
                                   uint64_t *cnt)
{
    size_t ntiles = (a->n + SEMI_T - 1) / SEMI_T, smem = (size_t)JOIN_B_CAP * k * 4;
    size_t *range = (size_t *)rfx_gpu_alloc(g, ntiles * 16);
    if (!range)
        return RFX_ERR_NOMEM;
    k_semi_ranges<<<search_grid(2 * ntiles), 256, 0, g->stream>>>(a->data, a->n, a->arity, b->data, b->arity, b->n, k,
                                                               ntiles, SEMI_T, search_lanes(2 * ntiles), range);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(k_join_count_tiles, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e == cudaSuccess) {
        k_join_count_tiles<<<(unsigned)ntiles, 256, smem, g->stream>>>(a->data, a->n, a->arity, b->data, b->arity, k,
                                                                       range, lo, cnt);
        e = cudaGetLastError();
    }
    rfx_gpu_free(g, range);
    return e == cudaSuccess ? RFX_OK : fail(g, e, "k_join_count_tiles", __FILE__, __LINE__);
}

static rfx_status join_expand_tiles(rfx_gpu *g, const gprog &code, uint64_t total, const uint64_t *off, size_t na,
                                    const uint64_t *lo, const rfx_dev_rows *a, const rfx_dev_rows *b, int len,
                                    int nout, uint32_t *out, uint64_t *flags)
{
    size_t ntiles = (size_t)((total + JOIN_OUT_T - 1) / JOIN_OUT_T);
    size_t *starts = (size_t *)rfx_gpu_alloc(g, (ntiles + 1) * 8);
    if (!starts)
        return RFX_ERR_NOMEM;
    k_join_starts<<<grid_for(ntiles + 1), 256, 0, g->stream>>>(off, na, total, ntiles, starts);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) {
        k_join_expand_tiles<<<(unsigned)ntiles, 256, 0, g->stream>>>(code, total, off, starts, lo, a->data, a->arity,
                                                                     b->data, b->arity, len, nout, out, flags,
                                                                     g->d_flag);
        e = cudaGetLastError();
    }
    rfx_gpu_free(g, starts);
    return e == cudaSuccess ? RFX_OK : fail(g, e, "k_join_expand_tiles", __FILE__, __LINE__);
}

// ---- join by tiles in one pass ----------------------------------------------------------------
// A block per tile of JT_T left rows stages the tile and the right rows of its key range
// (k_semi_ranges); each thread finds the matches of its JT_ITEMS consecutive rows (the
// first by halving, the rest a row at a time from the last match and then by galloping:
// step_rows), the counts are scanned within the tile while warp 0 places the tile by
// look-back, and the outputs go into a staged output tile (dealt evenly to a warp's
// lanes; rows with more than JT_HEAVY matches, skewed keys, by the whole block) written
// out in 16-byte stores. The output is allocated for na + nb rows before the count is
// known; a join with more is counted by that pass and run again into an exact
// allocation. The three-pass join (counts, scan, expansion) moved ~3x the floor's bytes
// through per-row arrays and reached 10% of it.
// JT_ITEMS: left rows a thread (odd: the threads' rows fall in different banks; H100 2^28,
// with galloping searches and outputs dealt by pairs: 3 41% of the floor, 5 49%, 7 46%, 9 36%)
#define JT_ITEMS 5
#define JT_T (JT_ITEMS * 256)
static_assert(JT_T * 3 / 2 < 65536, "a tile's left rows and staged right rows are numbered in 16 bits");
#define JT_HEAVY 32
// Blocks a multiprocessor: 5 (48 registers, 42 KB of shared memory where b is about as dense
// as a) against 4 (63 registers, 49 KB): H100, JOIN of 2^22 / 2^24 / 2^26 rows 38-39% / 51% /
// 55-56% of the floor -> 40-41% / 54% / 59%; 6 (40 registers) fell between; persistent
// blocks staging the next tile while joining one (two buffers: 3 blocks, 78 registers)
// were slower, 2^24 45-46%.
#define JT_BLOCKS 5
#define JT_QUEUE 32   // heavy rows expanded per round
#define JT_SMEM (96 * 1024)

// cmp_prefix with the key's width known at compile time (K > 0; 0: k at run time): the
// one-pass join is bound by instructions, not bytes (H100, ncu: SM 66% busy, memory 27%).
template <int K> __device__ __forceinline__ int cmp_key(const uint32_t *x, const uint32_t *y, int k)
{
    if constexpr (K == 0) {
        return cmp_prefix(x, y, k);
    } else {
#pragma unroll
        for (int i = 0; i < K; i++)
            if (x[i] != y[i])
                return x[i] < y[i] ? -1 : 1;
        return 0;
    }
}

// Whether right row r lies before the first row whose k-prefix is >= key (upper: > key).
template <int K>
__device__ __forceinline__ bool row_before(const uint32_t *seg, int sa, unsigned r, const uint32_t *key, int k,
                                           bool upper)
{
    int c = cmp_key<K>(seg + r * (unsigned)sa, key, k);
    return c < 0 || (upper && c == 0);
}

// The first r in [0, m) whose k-prefix is >= key: halving without a branch (the base
// moves or not, the same steps for every lane of a warp; the branching loop took 14
// instructions a step, a tenth of the one-pass join's, ncu at 2^22: JOIN within 1% all
// the same, H100).
template <int K>
__device__ __forceinline__ unsigned lower_rows(const uint32_t *seg, int sa, unsigned m, const uint32_t *key, int k)
{
    if (m == 0)
        return 0;
    unsigned base = 0;
    while (m > 1) {
        const unsigned half = m / 2;
        base = row_before<K>(seg, sa, base + half - 1, key, k, false) ? base + half : base;
        m -= half;
    }
    return base + (row_before<K>(seg, sa, base, key, k, false) ? 1u : 0u);
}

// The first r in [from, m) whose k-prefix is >= key (upper: > key), by galloping from
// `from`: a row's matches lie next to its neighbour's, so the steps are ~2 log of the
// distance (4 steps and then halving all of [from, m) cost a warp ~14 steps a row: ncu).
// 32-bit row indices (the caller's right side has fewer than 2^32 rows).
template <int K>
__device__ __forceinline__ unsigned seek_rows(const uint32_t *seg, int sa, unsigned from, unsigned m,
                                              const uint32_t *key, int k, bool upper)
{
    if (from >= m || !row_before<K>(seg, sa, from, key, k, upper))
        return from;
    unsigned lo = from, hi = m;   // lo before the answer, the answer in (lo, hi]
    for (unsigned step = 1;; step *= 2) {
        unsigned probe = lo + step;
        if (probe >= m || step > m)
            break;
        if (!row_before<K>(seg, sa, probe, key, k, upper)) {
            hi = probe;
            break;
        }
        lo = probe;
    }
    lo++;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        if (row_before<K>(seg, sa, mid, key, k, upper))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

// seek_rows for answers near `from`, as a join's usually are (a row's matches start where
// its neighbour's end, and keys of one or two matches end there): a row at a time for up to
// JT_STEPS rows, then galloping (skewed keys). On an H100 the searches were most of the
// one-pass join's instructions (ncu at 2^24: 64% issue-busy, ~370 a left row).
#define JT_STEPS 4
template <int K>
__device__ __forceinline__ unsigned step_rows(const uint32_t *seg, int sa, unsigned from, unsigned m,
                                              const uint32_t *key, int k, bool upper)
{
#pragma unroll
    for (int q = 0; q < JT_STEPS; q++) {
        if (from >= m || !row_before<K>(seg, sa, from, key, k, upper))
            return from;
        from++;
    }
    return seek_rows<K>(seg, sa, from, m, key, k, upper);
}

// Each of a thread's JT_ITEMS rows (from `first` of the tile's tn, staged at sa): its
// first match lo[] in seg (mb right rows) and count cnt[]; returns their sum. Called with
// seg in shared memory or in global memory, once each, so that the staged case compiles
// to shared loads with 32-bit addresses (through one generic pointer: generic loads and
// 64-bit address arithmetic at every step, ncu).
template <int K>
__device__ __forceinline__ unsigned long long jt_ranges(const uint32_t *seg, int ba, unsigned mb, const uint32_t *sa,
                                                        int aa, size_t first, size_t tn, int k,
                                                        unsigned (&lo)[JT_ITEMS], unsigned (&cnt)[JT_ITEMS])
{
    unsigned long long mine = 0;
    unsigned at = 0;
#pragma unroll
    for (int s = 0; s < JT_ITEMS; s++) {
        lo[s] = 0;
        cnt[s] = 0;
        if (first + s < tn) {
            const uint32_t *key = sa + (first + s) * aa;
            unsigned l = s == 0 ? lower_rows<K>(seg, ba, mb, key, k) : step_rows<K>(seg, ba, at, mb, key, k, false);
            unsigned h = l < mb && cmp_key<K>(seg + l * (unsigned)ba, key, k) == 0
                             ? step_rows<K>(seg, ba, l + 1, mb, key, k, true)
                             : l;
            lo[s] = at = l;
            cnt[s] = h - l;
            mine += h - l;
        }
    }
    return mine;
}

// One output row of left row ra and right row rb: plain columns copied, else the program.
__device__ __forceinline__ void jt_emit(const gprog &code, int len, const colmap &m, const uint32_t *ra, int aa,
                                        const uint32_t *rb, uint32_t *dst, bool *div0)
{
    if (m.n) {
        for (int c = 0; c < m.n; c++)
            dst[c] = m.col[c] < aa ? ra[m.col[c]] : rb[m.col[c] - aa];
    } else {
        run_prog(code.ins, len, ra, aa, rb, dst, div0);
    }
}

/* A warp's listed (left row, right row) pairs written as NO plain columns each (m.n == NO):
 * which side and word each column comes from is found once, not per output. Entries of
 * `pairs` at or below an output's index may be overwritten by it (read first). */
template <int NO>
__device__ __forceinline__ void jt_deal(const colmap &m, const uint32_t *sa, int aa, const uint32_t *sb, int ba,
                                        const uint32_t *pairs, uint32_t *wdst, unsigned warp_n, unsigned lane)
{
    bool from_b[NO];
    int word[NO];
#pragma unroll
    for (int c = 0; c < NO; c++) {
        from_b[c] = m.col[c] >= aa;
        word[c] = from_b[c] ? m.col[c] - aa : m.col[c];
    }
    for (unsigned j0 = 0; j0 < warp_n; j0 += 32) {
        const unsigned j = j0 + lane, e = j < warp_n ? pairs[j] : 0;
        __syncwarp();
        if (j < warp_n) {
            const uint32_t *ra = sa + (e >> 16) * aa, *rb = sb + (e & 0xffffu) * ba;
            uint32_t v[NO];
#pragma unroll
            for (int c = 0; c < NO; c++)
                v[c] = from_b[c] ? rb[word[c]] : ra[word[c]];
            uint32_t *d = wdst + (size_t)j * NO;
#pragma unroll
            for (int c = 0; c < NO; c++)
                d[c] = v[c];
        }
    }
}

// AA, BA: the sides' arities where known at compile time (0: aa, ba at run time; the
// graph join, rows of two columns on one key, has its row offsets folded into constants).
template <int K, int AA = 0, int BA = 0>
__global__ void __launch_bounds__(256, JT_BLOCKS)
    k_join_tiles(const __grid_constant__ gprog code, int len, const __grid_constant__ colmap m, const uint32_t *a,
                 size_t na, int aa, const uint32_t *b, int ba, int k, const size_t *range, size_t ntiles, unsigned bcap,
                 unsigned ocap, int nout, uint32_t *out, unsigned long long cap, const lb_args lb, unsigned *div_flag)
{
    aa = AA ? AA : aa;
    ba = BA ? BA : ba;
    extern __shared__ __align__(16) uint32_t smem[];   // a's tile, b's range, the output tile
    __shared__ unsigned s_qn, s_qrow[JT_QUEUE], s_qlo[JT_QUEUE], s_qcnt[JT_QUEUE];
    __shared__ unsigned long long s_qout[JT_QUEUE], s_base;
    const size_t tile = lb_tile(), t0 = tile * JT_T, tn = na - t0 < JT_T ? na - t0 : JT_T, r0 = range[2 * tile];
    const unsigned mb = (unsigned)(range[2 * tile + 1] - r0);   // right rows of the tile: indices below 2^32
    const uint32_t *ga = a + t0 * aa, *gb = b + r0 * ba;
    const bool b_staged = mb <= bcap;
    uint32_t *sa = smem + ((uintptr_t)ga & 15) / 4, *sbase = smem + ((JT_T * aa + 4 + 3) & ~3),
             *sb = sbase + ((uintptr_t)gb & 15) / 4, *so = sbase + ((bcap * ba + 4 + 3) & ~3u);
    block_stage_async(sa, ga, tn * aa);
    if (b_staged)
        block_stage_async(sb, gb, mb * ba);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    const uint32_t *seg = b_staged ? sb : gb;
    const size_t first = (size_t)threadIdx.x * JT_ITEMS;
    unsigned lo[JT_ITEMS], cnt[JT_ITEMS];   // 32-bit: 64-bit ones spilled (ncu: issue-bound)
    unsigned long long mine = b_staged ? jt_ranges<K>(sb, ba, mb, sa, aa, first, tn, k, lo, cnt)
                                       : jt_ranges<K>(gb, ba, mb, sa, aa, first, tn, k, lo, cnt);
    // The tile's outputs are placed within it first; warp 0 then finds the tile's offset by
    // look-back while the block writes its staged outputs (waiting for the look-back before
    // the writing left the SM's warps at a barrier: ncu).
    unsigned long long tile_n, base = 0, my_out = block_offsets<unsigned long long>(mine, &tile_n);
    if (threadIdx.x < 32) {
        unsigned long long at = lookback_warp(tile_n, tile, ntiles, lb);
        if (threadIdx.x == 0)
            s_base = at;
    }
    const bool o_staged = tile_n <= ocap;
    if (!o_staged) {
        __syncthreads();
        base = s_base;
        if (base + tile_n > cap)
            return;   // counted only: the caller allocates the total and runs again
    }
    uint32_t *dst = o_staged ? so : out + base * nout;
    bool div0 = false;
    unsigned heavy = 0;   // this thread's rows left to the block
#pragma unroll
    for (int s = 0; s < JT_ITEMS; s++)
        heavy |= cnt[s] > JT_HEAVY ? 1u << s : 0u;
    const unsigned lane = threadIdx.x & 31, full = 0xffffffffu;
    if (b_staged && o_staged && !__any_sync(full, heavy != 0)) {
        // The warp's outputs dealt to its lanes evenly (a thread writing its own rows'
        // outputs left 20 of 32 lanes idle): each thread lists its outputs' (left row,
        // right row) pairs, 16 bits each, in the last words of the warp's stretch of the
        // staged outputs, and the lanes then take them 32 at a time (a search over the
        // lanes' first outputs and their packed row counts for each output cost ~100
        // instructions a warp and 32 outputs, ncu). Output j overwrites only entries <= j,
        // read before it is written.
        const unsigned rel = (unsigned)(my_out - __shfl_sync(full, my_out, 0)),
                       warp_n = __shfl_sync(full, rel + (unsigned)mine, 31),
                       warp_at = (unsigned)__shfl_sync(full, my_out, 0);
        uint32_t *wdst = so + (size_t)warp_at * nout, *pairs = wdst + (size_t)warp_n * (nout - 1);
        unsigned o = rel;
#pragma unroll
        for (int s = 0; s < JT_ITEMS; s++) {
            for (unsigned q = 0; q < cnt[s]; q++)
                pairs[o + q] = (unsigned)(first + s) << 16 | (lo[s] + q);
            o += cnt[s];
        }
        __syncwarp();
        switch (m.n) {   // plain columns of a known width: the copy unrolled, its sources hoisted
        case 1: jt_deal<1>(m, sa, aa, sb, ba, pairs, wdst, warp_n, lane); break;
        case 2: jt_deal<2>(m, sa, aa, sb, ba, pairs, wdst, warp_n, lane); break;
        case 3: jt_deal<3>(m, sa, aa, sb, ba, pairs, wdst, warp_n, lane); break;
        case 4: jt_deal<4>(m, sa, aa, sb, ba, pairs, wdst, warp_n, lane); break;
        default:
            for (unsigned j0 = 0; j0 < warp_n; j0 += 32) {
                const unsigned j = j0 + lane, e = j < warp_n ? pairs[j] : 0;
                __syncwarp();
                if (j < warp_n)
                    jt_emit(code, len, m, sa + (e >> 16) * aa, aa, sb + (e & 0xffffu) * ba,
                            wdst + (size_t)j * nout, &div0);
            }
        }
    } else {
        unsigned long long o = my_out;
#pragma unroll
        for (int s = 0; s < JT_ITEMS; s++) {
            if (!(heavy >> s & 1))
                for (unsigned q = 0; q < cnt[s]; q++)
                    jt_emit(code, len, m, sa + (first + s) * aa, aa, seg + (size_t)(lo[s] + q) * ba,
                            dst + (o + q) * nout, &div0);
            o += cnt[s];
        }
    }
    // heavy rows: queued (JT_QUEUE at a time) and each expanded by the whole block
    while (__syncthreads_or(heavy != 0)) {
        if (threadIdx.x == 0)
            s_qn = 0;
        __syncthreads();
        unsigned long long o = my_out;
#pragma unroll
        for (int s = 0; s < JT_ITEMS; s++) {
            if (heavy >> s & 1) {
                unsigned at_q = atomicAdd(&s_qn, 1u);
                if (at_q < JT_QUEUE) {
                    s_qrow[at_q] = (unsigned)(first + s);
                    s_qlo[at_q] = lo[s];
                    s_qcnt[at_q] = cnt[s];
                    s_qout[at_q] = o;
                    heavy &= ~(1u << s);
                }
            }
            o += cnt[s];
        }
        __syncthreads();
        unsigned nq = s_qn < JT_QUEUE ? s_qn : JT_QUEUE;
        for (unsigned t = 0; t < nq; t++) {
            const uint32_t *ra = sa + (size_t)s_qrow[t] * aa;
            for (unsigned q = threadIdx.x; q < s_qcnt[t]; q += 256)
                jt_emit(code, len, m, ra, aa, seg + (size_t)(s_qlo[t] + q) * ba, dst + (s_qout[t] + q) * nout,
                        &div0);
        }
    }
    if (o_staged) {
        __syncthreads();
        base = s_base;
        if (base + tile_n <= cap)   // else counted only
            block_write_out(out + base * nout, so, (unsigned)tile_n * nout);
    }
    if (div0)
        atomicOr(div_flag, 1u);
}

/* The one-pass join for k of 1-4 key columns, rows of at most 4 words, no filter: into
 * res (n and the data set here). *done false: not taken (nothing done). */
static rfx_status join_one_pass(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, const gprog &code,
                                int len, rfx_rx *const *out, int nout, rfx_dev_rows *res, bool *done)
{
    *done = false;
    size_t na = a->n, nb = b->n, ntiles = (na + JT_T - 1) / JT_T;
    int aa = a->arity, ba = b->arity;
    if (k < 1 || k > 4 || aa > 4 || ba > 4 || nout < 1 || ntiles >= (size_t)INT32_MAX || nb >= (size_t)UINT32_MAX)
        return RFX_OK;
    colmap m;
    if (!plain_columns(out, nout, &m))
        m.n = 0;
    // right rows staged: a quarter more than the tile's where b is about as dense as a (a
    // range then spans about a tile, and JT_BLOCKS blocks fit), else half as many again;
    // outputs staged: what shared memory then has room for. 24 words spare: two alignments
    // of up to 7 and block_write_out's reads past the end.
    size_t bcap = nb * 8 <= na * 9 ? JT_T * 5 / 4 : JT_T * 3 / 2,
           words = JT_SMEM / 4 - (size_t)JT_T * aa - bcap * ba - 24,
           ocap = words / (size_t)nout < bcap ? words / (size_t)nout : bcap,
           smem = ((size_t)JT_T * aa + bcap * ba + ocap * nout + 24) * 4;
    lb_scratch lb;   // and each tile's range of b
    rfx_status st = lb_alloc(g, ntiles, ntiles * 16, &lb);
    if (st)
        return st;
    *done = true;
    unsigned long long n = 0;
    size_t *range = (size_t *)lb.extra;
    k_semi_ranges<<<search_grid(2 * ntiles), 256, 0, g->stream>>>(a->data, na, aa, b->data, ba, nb, k, ntiles, JT_T,
                                                               search_lanes(2 * ntiles), range);
    cudaError_t e = cudaGetLastError();
    // keys of 1 and 2 columns compared by unrolled code (k_join_tiles<0>: any width)
    auto kernel = k == 1 && aa == 2 && ba == 2 ? k_join_tiles<1, 2, 2>
                  : k == 1                     ? k_join_tiles<1>
                  : k == 2                     ? k_join_tiles<2>
                                               : k_join_tiles<0>;
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    unsigned long long cap = na + nb;
    if (rows_alloc(g, res, nout, (size_t)cap) != RFX_OK) {
        rfx_gpu_rows_init(res, nout);   // no room for the guess: count first
        cap = 0;
    }
    for (int pass = 0; pass < 2 && e == cudaSuccess && st == RFX_OK; pass++) {
        if (pass && (st = lb_retag(g, &lb)) != RFX_OK)
            break;
        kernel<<<(unsigned)ntiles, 256, smem, g->stream>>>(code, len, m, a->data, na, aa, b->data, ba, k, range, ntiles,
                                                           (unsigned)bcap, (unsigned)ocap, nout, res->data, cap, lb.a,
                                                           g->d_flag);
        e = cudaGetLastError();
        if (e == cudaSuccess)
            st = lb_total(g, &lb, "k_join_tiles", &n);
        if (e != cudaSuccess || st != RFX_OK || n <= cap)
            break;
        rfx_gpu_rows_free(g, res);   // more than the guess: the exact count is known now
        st = rows_alloc(g, res, nout, (size_t)n);
        cap = n;
    }
    lb_free(g, &lb, e != cudaSuccess || st != RFX_OK);
    if (e != cudaSuccess)
        st = fail(g, e, "k_join_tiles", __FILE__, __LINE__);
    if (st == RFX_OK)
        st = check_div0(g);
    if (st == RFX_OK && n * 4 < cap) {   // a guess far above the count: keep a tight copy
        rfx_dev_rows tight;
        st = rows_alloc(g, &tight, nout, (size_t)n);
        if (st == RFX_OK && n)
            st = rfx_gpu_memcpy_d2d(g, tight.data, res->data, (size_t)n * nout * 4);
        if (st == RFX_OK) {
            rfx_gpu_rows_free(g, res);
            *res = tight;
        } else {
            rfx_gpu_rows_free(g, &tight);
        }
    }
    res->n = (size_t)n;
    return st;
}

// ---- aggregate ------------------------------------------------------------------------------
__global__ void k_aggregate(const uint32_t *a, size_t na, int aa, const uint32_t *b, size_t nb, int ba, int k, int fn,
                            int col, int prim, uint32_t *out, uint64_t *flags)
{
    GRID_STRIDE(i, na)
    {
        const uint32_t *key = a + i * aa;
        size_t l = k ? bound_rows(b, ba, nb, key, k, false) : 0;
        size_t h = k ? (l < nb && cmp_prefix(b + l * ba, key, k) == 0 ? bound_rows(b, ba, nb, key, k, true) : l) : nb;
        uint32_t val = 0;
        bool have = h > l || fn == RFX_AGG_COUNT || fn == RFX_AGG_SUM;
        if (fn == RFX_AGG_COUNT) {
            val = (uint32_t)(h - l);
        } else if (h > l || fn == RFX_AGG_SUM) {
            const bool sums = fn == RFX_AGG_SUM || fn == RFX_AGG_MEAN;
            val = sums ? 0 : b[l * ba + col];
            for (size_t q = sums ? l : l + 1; q < h; q++)
                val = rfx_agg_step(fn, prim, val, b[q * ba + col]);
            val = rfx_agg_finish(fn, val, h - l);
        }
        for (int c = 0; c < aa; c++)
            out[i * (aa + 1) + c] = key[c];
        out[i * (aa + 1) + aa] = val;
        flags[i] = have;
    }
}

extern "C" rfx_status rfx_gpu_aggregate(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, rfx_aggfn fn,
                                        int col, rfx_prim prim, rfx_dev_rows *dst)
{
    size_t na = a->n;
    rfx_dev_rows res;
    rfx_status st = rows_alloc(g, &res, a->arity + 1, na);
    if (st || na == 0) {
        if (st == RFX_OK)
            replace(g, dst, &res);
        return st;
    }
    uint64_t *flags = (uint64_t *)rfx_gpu_alloc(g, na * 8);
    if (!flags) {
        rfx_gpu_rows_free(g, &res);
        return RFX_ERR_NOMEM;
    }
    // a nullary outer relation holds one empty tuple: give the kernel a valid pointer
    const uint32_t *adata = a->data ? a->data : (const uint32_t *)flags;
    k_aggregate<<<grid_for(na), 256, 0, g->stream>>>(adata, na, a->arity, b->data, b->n, b->arity, k, (int)fn, col,
                                                     (int)prim, res.data, flags);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        st = fail(g, e, "k_aggregate", __FILE__, __LINE__);
    rfx_dev_rows kept;
    if (st == RFX_OK)
        st = compact(g, res.data, na, a->arity + 1, flags, &kept);
    rfx_gpu_free(g, flags);
    rfx_gpu_rows_free(g, &res);
    if (st == RFX_OK)
        replace(g, dst, &kept);
    return st;
}

// ---- benchmark inputs ---------------------------------------------------------------
__global__ void k_fill_random(uint32_t *p, size_t n, uint64_t seed, uint32_t mod)
{
    GRID_STRIDE(i, n)
    {
        uint64_t z = seed + i * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        p[i] = mod ? (uint32_t)(z % mod) : (uint32_t)z;
    }
}

extern "C" rfx_status rfx_gpu_fill_random(rfx_gpu *g, rfx_dev_rows *r, size_t n, uint64_t seed, uint32_t mod)
{
    rfx_dev_rows out;
    rfx_status st = rows_alloc(g, &out, r->arity, n);
    if (st)
        return st;
    if (n && r->arity) {
        k_fill_random<<<grid_for(n * r->arity), 256, 0, g->stream>>>(out.data, n * (size_t)r->arity, seed, mod);
        CK_LAUNCH();
    }
    replace(g, r, &out);
    return RFX_OK;
}


// ---- leapfrog triejoin (lftj/): built on the helpers above --------------------------------------
#include "../lftj/gpu_triearray.cuh"
#include "../lftj/gpu_lftj.cuh"
#include "../lftj/gpu_boxed.cuh"
#include "../lftj/gpu_pairs.cuh"

// ---- fused groups (weaver/): generated kernels ----------------------------------------------
#include "fused.cuh"
