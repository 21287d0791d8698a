// gpu_core.cuh: what the CUDA translation units of primitives/, lftj/ and the fused-group
// launcher share (internal; the public interface is cuda_prims.h): the context (struct
// rfx_gpu), checked calls (CK, ALLOC), launch geometry, device row comparison and
// searches, compaction by flags, the expression program and its device interpreter, and
// the decoupled look-back that the tiled primitives place their output rows with.
// Layout: packed rows of 32-bit values, row-major, lexicographically sorted as unsigned.
// Each operator writes into fresh memory and then replaces its destination, so a
// destination may alias an operand. Output sizes are counted before they are written.
#ifndef RFX_GPU_CORE_CUH
#define RFX_GPU_CORE_CUH

extern "C" {
#include "cuda_prims.h"
#include "base.h"
}
#include "rx_ops.h"
#include "text_ops.h"
#include "thrust_shim.h"

#include <cuda_pipeline.h>
#include <cuda_runtime.h>
#include <type_traits>
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
                               // [0] a word a scan copies (scan_total_also), [3] a kernel's
                               // word, [4, 5] a tiled primitive's look-back total and its tag
                               // (lb_wait), [8, 9] a triejoin emit's, [16..24] a generated
                               // FILTER's totals and division flag
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
    const rfx_tuning *tune;    // rfx_gpu_set_tuning's (borrowed; rfx_tuning_defaults at first)
    // The device's copy of a symbol table (gpu_symbols), for the functors that read texts:
    // symbol i's bytes at sym_text[sym_off[i], sym_off[i + 1]); of table sym_serial's first
    // sym_n symbols, sym_bytes of text (sym_off[sym_n], kept here too: growing the copy then
    // needs no read back). From cudaMalloc, as the look-back words (rfx_gpu_reclaim must not
    // free it; counted in the budget).
    char *sym_text;
    unsigned long long *sym_off;
    size_t sym_text_cap, sym_off_cap, sym_bytes;
    uint32_t sym_n;
    uint64_t sym_serial;
};
void jit_unload(rfx_gpu *g);   // gpu_fused.cu

static inline rfx_status fail(rfx_gpu *g, cudaError_t e, const char *call, const char *file, int line)
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

static inline unsigned grid_for(size_t n)
{
    size_t b = (n + 255) / 256;
    return (unsigned)(b < 1 ? 1 : b > (1u << 20) ? (1u << 20) : b);
}
// grid_for(n) blocks of 256, at most 16 a multiprocessor: what is resident at once, for
// grid-stride loops whose threads keep a running value (a reduction, a histogram)
static inline unsigned grid_resident(const rfx_gpu *g, size_t n)
{
    const size_t b = grid_for(n), most = (size_t)g->sms * 16;
    return (unsigned)(b < most ? b : most);
}
#define GRID_STRIDE(i, n) for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (n); i += (size_t)gridDim.x * blockDim.x)


// ---- context helpers (gpu_context.cu) --------------------------------------------------
// A sibling context on the same device for a second stream (kept until g closes).
rfx_gpu *gpu_sibling(rfx_gpu *g);
// keys sorted over their bits [0, end_bit) by CUB's radix sort, alternating with alt;
// *sel: 1 when the sorted keys ended in alt.
rfx_status cub_sort_u64(rfx_gpu *g, uint64_t *keys, uint64_t *alt, size_t n, int begin_bit, int end_bit,
                               int *sel);
rfx_status rows_alloc(rfx_gpu *g, rfx_dev_rows *r, int arity, size_t n);
void replace(rfx_gpu *g, rfx_dev_rows *dst, rfx_dev_rows *out);
// Whether a copy of `bytes` between pageable host rows and the device goes through the
// context's pinned staging buffer (gpu_context.cu says why).
bool staged(rfx_gpu *g, size_t bytes);
// bytes from pageable host memory to d (staged where that pays); returns once they left h.
rfx_status upload_bytes(rfx_gpu *g, void *d, const void *h, size_t bytes);
// The device's copy of t (gpu_symbols.cu): brought up to t's symbols now.
rfx_status gpu_symbols(rfx_gpu *g, const rfx_symtab *t);
void gpu_symbols_free(rfx_gpu *g);
#define RFX_STAGE_FROM ((size_t)16 << 20)
#define RFX_STAGE_BYTES ((size_t)32 << 20)

template <typename T> static rfx_status to_host(rfx_gpu *g, const T *d, T *h, size_t n)
{
    CK(cudaMemcpyAsync(h, d, n * sizeof(T), cudaMemcpyDeviceToHost, g->stream));
    CK(cudaStreamSynchronize(g->stream));
    return RFX_OK;
}


// ---- row comparison on the device ---------------------------------------------------------
static __device__ __forceinline__ int cmp_prefix(const uint32_t *a, const uint32_t *b, int k)
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
static __device__ __forceinline__ size_t first_above(const uint64_t *off, size_t l, size_t h, uint64_t x)
{
    return partition_point(l, h, [=](size_t m) { return off[m] <= x; });
}

// First row in [0, n) whose k-prefix is >= key (upper: > key).
static __device__ size_t bound_rows(const uint32_t *rows, int arity, size_t n, const uint32_t *key, int k, bool upper)
{
    return partition_point(0, n, [=](size_t m) {
        int c = cmp_prefix(rows + m * arity, key, k);
        return c < 0 || (upper && c == 0);
    });
}

// The end of the run of rows equal to key on their first k columns that starts at row l
// (equal): galloped from l, so a short run costs a few loads beside l, not a second search
// over all n rows.
static __device__ size_t run_end_rows(const uint32_t *rows, int arity, size_t n, size_t l, const uint32_t *key, int k)
{
    size_t last = l, step = 1;   // row last is equal
    for (;;) {
        size_t probe = n - last > step ? last + step : n;
        if (probe == n || cmp_prefix(rows + probe * arity, key, k) != 0)
            return partition_point(last + 1, probe,
                                   [=](size_t m) { return cmp_prefix(rows + m * arity, key, k) == 0; });
        last = probe;
        step *= 2;
    }
}

// [*l, *h): the rows equal to key on their first k columns (rows sorted on them), from the
// first row not before key (l).
static __device__ void equal_rows_at(const uint32_t *rows, int arity, size_t n, const uint32_t *key, int k, size_t l,
                                     size_t *lo, size_t *h)
{
    *lo = l;
    *h = l < n && cmp_prefix(rows + l * arity, key, k) == 0 ? run_end_rows(rows, arity, n, l, key, k) : l;
}

// [*l, *h): the rows equal to key on their first k columns (rows sorted on them).
static __device__ void equal_rows(const uint32_t *rows, int arity, size_t n, const uint32_t *key, int k, size_t *l,
                                  size_t *h)
{
    equal_rows_at(rows, arity, n, key, k, bound_rows(rows, arity, n, key, k, false), l, h);
}

// The first i in [lo, hi) where pred(i) is false (pred holds on a prefix), or hi, found by
// a group of G lanes (2-32, a power of two; the group's lanes call it with the same lo,
// hi): G probes a round, so about log_G rounds of dependent loads instead of log2. The
// searches that place tiles before a merge or a join (one a tile, each ~25 loads into 2^24
// rows, one DRAM latency after another) by a thread each took as long as a small set
// operation's tiles themselves; but each probe costs a sector, so many searches by whole
// warps cost more in traffic than their fewer rounds save (search_lanes).
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

// Lanes a search for a launch of n tile-placing searches, fewer as there are more: few
// searches leave most of the GPU idle, so a warp shares each (a warp each up to 2,048
// searches, 8 lanes up to 8,192, 4 up to 16,384, a thread each beyond: the merges' splits
// and the joins' ranges as bench_gpu_prims measured them, docs/PERFORMANCE.md). The
// tuning's search_lanes (1, 2, 4 ... 32) sets it for every launch.
static inline int search_lanes(const rfx_gpu *g, size_t n)
{
    const int t = g->tune->search_lanes;
    if (t == 1 || t == 2 || t == 4 || t == 8 || t == 16 || t == 32)
        return t;
    return n <= 2048 ? 32 : n <= 8192 ? 8 : n <= 16384 ? 4 : 1;
}

// Blocks for a launch of n searches of search_lanes(g, n) lanes each.
static inline unsigned search_grid(const rfx_gpu *g, size_t n)
{
    return grid_for((size_t)search_lanes(g, n) * n);
}

// ---- compaction ------------------------------------------------------------------------
static __global__ void k_scatter(const uint32_t *in, size_t n, int arity, const uint64_t *flags, const uint64_t *off,
                          uint32_t *out)
{
    GRID_STRIDE(i, n)
    {
        if (flags[i])
            for (int c = 0; c < arity; c++)
                out[off[i] * arity + c] = in[i * arity + c];
    }
}

static inline rfx_status exclusive_sum(rfx_gpu *g, const uint64_t *in, uint64_t *out, size_t n)
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

/* out = the exclusive prefix sums of in[0, n) (out may be in); *total = their sum, which
 * the scan's last tile leaves in pinned host memory (defined with the look-back below). */
static inline rfx_status scan_total(rfx_gpu *g, const uint64_t *in, uint64_t *out, size_t n, uint64_t *total);

/* out = the rows of in whose flag is set, in order. Frees nothing of the inputs. */
static inline rfx_status compact(rfx_gpu *g, const uint32_t *in, size_t n, int arity, const uint64_t *flags, rfx_dev_rows *out)
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

/* dst = src's rows whose flag is set (src may be dst); flags is freed. */
static inline rfx_status keep_flagged(rfx_gpu *g, const rfx_dev_rows *src, uint64_t *flags, rfx_dev_rows *dst)
{
    rfx_dev_rows out;
    rfx_status st = compact(g, src->data, src->n, src->arity, flags, &out);
    rfx_gpu_free(g, flags);
    if (st == RFX_OK)
        replace(g, dst, &out);
    return st;
}

/* The common ending of operators that compute rows and then filter them: keeps res's
 * flagged rows (when flags is set; n rows of nout columns), frees the scratch, and hands
 * the result to dst, or frees it when st is an error. */
static inline rfx_status finish_filtered(rfx_gpu *g, rfx_status st, rfx_dev_rows *res, size_t n, int nout, uint64_t *flags,
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


// ---- expressions: a small stack program in constant memory ----------------------------------
// A program over 64-bit values (a `wide` one: rfx_rx_wide) runs on a stack of 64-bit slots
// with the ops after G_FILTER, as base/expr.c's rfx_rx_eval64 computes; any other on 32-bit
// slots, which the tiled interpreters keep in shared memory.
enum { G_COL, G_CONST, G_BIN, G_NEG, G_CMP, G_AND, G_EMIT, G_FILTER,
       G_CONSTHI,   // the high word of the constant on top (value)
       G_PAIR,      // the 64-bit value of words (top - 1, top)
       G_HALF,      // arg 0: the top's high word, 1: its low word
       G_CONV,      // the top, of kind arg & 15 and scale value & 0xffff, as kind prim of scale
                    // value >> 16; arg & 16: a decimal's conversion that fails past 64 bits
       G_CAL,       // calendar function arg & 255 of day (top - 1) and months (top), or of the
                    // day on top alone where arg & 256 is clear
       G_ANDIF,     // an AND whose right side may fail: where the left (top) is false, jump to
                    // value (past the AND) keeping it; the right is evaluated only where it holds
       G_ANDEND,    // that AND's end: as G_AND (the tiled interpreter's reach mask is restored)
       G_FN };      // functor arg (text_ops.h) of the value (1) or two (value 2) symbols on top
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
    int wide;                  // 64-bit slots (run_prog_at<true>)
    uint32_t nsyms;            // G_FN's symbols: the context's copy of the table (sym_*)
    const char *text;
    const unsigned long long *off;
};

typedef struct prog {
    gins ins[MAX_PROG];
    int n, depth, max_depth;
    bool overflow, divides, wide;
    const rfx_symtab *syms;    // the table G_FN reads
} prog;

static inline void emit_ins(prog *p, int op, int prim, int arg, uint32_t value, int push)
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

static inline void compile_rx(prog *p, const rfx_rx *e)
{
    switch (e->kind) {
    case RFX_RX_COL: emit_ins(p, G_COL, e->prim, e->col, 0, 1); break;
    case RFX_RX_CONST:
        emit_ins(p, G_CONST, e->prim, 0, (uint32_t)e->value, 1);
        if (e->value >> 32)
            emit_ins(p, G_CONSTHI, e->prim, 0, (uint32_t)(e->value >> 32), 0);
        break;
    case RFX_RX_NEG: compile_rx(p, e->l); emit_ins(p, G_NEG, e->prim, 0, 0, 0); break;
    case RFX_RX_BIN:
        compile_rx(p, e->l);
        compile_rx(p, e->r);
        emit_ins(p, G_BIN, e->prim, e->op, rfx_rx_checked(e), -1);
        p->divides |= e->op == RFX_DIV || e->op == RFX_MOD || rfx_rx_checked(e);
        break;
    case RFX_RX_CMP:
        compile_rx(p, e->l);
        compile_rx(p, e->r);
        emit_ins(p, G_CMP, e->prim, e->op, (uint32_t)e->col, -1);   // col: a decimal comparison's scales apart
        break;
    case RFX_RX_AND:
        compile_rx(p, e->l);
        if (rfx_rx_may_fail(e->r)) {   // as C's &&: no failure where the left rejects
            int jump = p->n;
            emit_ins(p, G_ANDIF, 0, 0, 0, 0);
            compile_rx(p, e->r);
            emit_ins(p, G_ANDEND, 0, 0, 0, -1);
            if (jump < p->n)
                p->ins[jump].value = (uint32_t)p->n;
        } else {
            compile_rx(p, e->r);
            emit_ins(p, G_AND, 0, 0, 0, -1);
        }
        break;
    case RFX_RX_PAIR: compile_rx(p, e->l); compile_rx(p, e->r); emit_ins(p, G_PAIR, e->prim, 0, 0, -1); break;
    case RFX_RX_HALF: compile_rx(p, e->l); emit_ins(p, G_HALF, e->prim, e->op, 0, 0); break;
    case RFX_RX_CONV:
        compile_rx(p, e->l);
        emit_ins(p, G_CONV, e->prim, e->l->prim | (e->env ? 16 : 0), (uint32_t)e->col | (uint32_t)e->op << 16, 0);
        p->divides |= e->env != NULL;
        break;
    case RFX_RX_CAL:
        compile_rx(p, e->l);
        if (e->r)
            compile_rx(p, e->r);
        emit_ins(p, G_CAL, e->prim, e->op | (e->r ? 256 : 0), 0, e->r ? -1 : 0);
        break;
    case RFX_RX_FN:
        if (!rfx_text_op(e->op) || e->nargs < 1 || e->nargs > 2) {
            p->overflow = true;   // host-only (ra_ir's host_only): never sent here
            break;
        }
        for (int i = 0; i < e->nargs; i++)
            compile_rx(p, e->args[i]);
        emit_ins(p, G_FN, e->prim, e->op, (uint32_t)e->nargs, 1 - e->nargs);
        p->syms = rfx_fn_env_symbols(e->env);
        break;
    }
    p->wide |= e->kind == RFX_RX_PAIR || e->kind == RFX_RX_HALF || e->kind == RFX_RX_CONV || e->kind == RFX_RX_CAL ||
               e->kind == RFX_RX_FN ||   // the tiled interpreters hold no G_FN
               RFX_PRIM_WIDE(e->prim) || (e->kind == RFX_RX_CONST && e->value >> 32);
}

#define STACK RFX_RX_DEVICE_MAX_STACK

/* Compiles the predicate (ending in FILTER; none when pred is NULL) into code at 0 and the
 * outputs (EMIT k) after it: the whole program is plen + olen long. */
static inline rfx_status load_prog(rfx_gpu *g, const rfx_rx *pred, rfx_rx *const *out, int nout, gprog *code, int *plen,
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
    if (p->syms) {
        rfx_status st = gpu_symbols(g, p->syms);
        if (st != RFX_OK) {
            free(p);
            return st;
        }
    }
    memcpy(code->ins, p->ins, sizeof(gins) * (size_t)p->n);
    code->wide = p->wide;
    code->nsyms = p->syms ? g->sym_n : 0;
    code->text = g->sym_text;
    code->off = g->sym_off;
    *depth = p->max_depth;
    // only a division can raise the flag: without one there is nothing to clear or read
    // back (the read-back is a host wait)
    g->div_armed = p->divides;
    free(p);
    if (g->div_armed)
        CK(cudaMemsetAsync(g->d_flag, 0, sizeof(unsigned), g->stream));
    return RFX_OK;
}

// A text functor over symbols x and y (x alone for one argument), read from the program's
// copy of the symbol table; an id past it reads as the empty text, as the host's does.
static __device__ uint32_t text_fn(const gprog &code, int op, uint32_t x, uint32_t y)
{
    unsigned long long x0 = 0, x1 = 0, y0 = 0, y1 = 0;
    if (x < code.nsyms)
        x0 = code.off[x], x1 = code.off[x + 1];
    if (y < code.nsyms)
        y0 = code.off[y], y1 = code.off[y + 1];
    return rfx_text_apply(op, code.text + x0, (size_t)(x1 - x0), code.text + y0, (size_t)(y1 - y0));
}

/* The loaded program on one (pair of) tuple(s), as base/expr.c computes it; false when
 * the filter rejects. WIDE: a wide program on 64-bit slots, as rfx_rx_eval64 computes it
 * (32-bit kinds in the low bits of their slots; a decimal past 64 bits fails as a division
 * by zero does: the host names it, backend_ooc.c); else 32-bit slots and the 32-bit ops. */
template <bool WIDE>
static __device__ bool run_prog_at(const gprog &prog, int start, int len, const uint32_t *t0, int a0, const uint32_t *t1,
                                   uint32_t *out, bool *div0)
{
    typedef typename std::conditional<WIDE, uint64_t, uint32_t>::type slot;
    const gins *code = prog.ins;
    slot st[STACK];
    int sp = 0;
    for (int pc = start; pc < start + len; pc++) {
        gins in = code[pc];
        switch (in.op) {
        case G_COL: st[sp++] = in.arg < a0 ? t0[in.arg] : t1[in.arg - a0]; break;
        case G_CONST: st[sp++] = in.value; break;
        case G_NEG:
            if (WIDE && RFX_PRIM_WIDE(in.prim))
                st[sp - 1] = (slot)rfx_negate64(in.prim, st[sp - 1]);
            else
                st[sp - 1] = rfx_negate(in.prim, (uint32_t)st[sp - 1]);
            break;
        case G_BIN: {
            sp--;
            slot l = st[sp - 1], r = st[sp];
            if (WIDE && in.value) {   // a decimal's exact arithmetic
                bool over = false;
                l = (slot)rfx_checked64(in.arg, (int64_t)l, (int64_t)r, &over);
                *div0 |= over;
            } else if (WIDE && RFX_PRIM_WIDE(in.prim)) {
                l = (slot)rfx_binary64(in.arg, in.prim, l, r, div0);
            } else {
                l = rfx_binary(in.arg, in.prim, (uint32_t)l, (uint32_t)r, div0);
            }
            st[sp - 1] = l;
            break;
        }
        case G_CMP: {
            sp--;
            slot l = st[sp - 1], r = st[sp];
            st[sp - 1] = WIDE && in.prim == RFX_DECIMAL ? rfx_compare_scaled(in.arg, (int64_t)l, (int64_t)r, (int)in.value)
                         : WIDE && RFX_PRIM_WIDE(in.prim) ? rfx_compare64(in.arg, in.prim, l, r)
                                                          : rfx_compare(in.arg, in.prim, (uint32_t)l, (uint32_t)r);
            break;
        }
        case G_ANDIF:
            if (!st[sp - 1])
                pc = (int)in.value - 1;   // the left's false is the AND's value
            break;
        case G_AND: case G_ANDEND: sp--; st[sp - 1] = st[sp - 1] && st[sp]; break;
        case G_FILTER: if (!st[--sp]) return false; break;
        case G_EMIT: out[in.arg] = (uint32_t)st[--sp]; break;
        }
        if (!WIDE)
            continue;
        switch (in.op) {   // the ops only wide programs hold
        case G_CONSTHI: st[sp - 1] |= (uint64_t)in.value << 32; break;
        case G_PAIR: sp--; st[sp - 1] = (uint64_t)(uint32_t)st[sp - 1] << 32 | (uint32_t)st[sp]; break;
        case G_HALF: st[sp - 1] = in.arg == 0 ? (uint64_t)st[sp - 1] >> 32 : (uint32_t)st[sp - 1]; break;
        case G_CONV: {
            bool over = false;
            st[sp - 1] = (slot)rfx_convert_checked(in.arg & 15, (int)(in.value & 0xffff), in.prim, (int)(in.value >> 16),
                                                   (in.arg & 16) != 0, st[sp - 1], &over);
            *div0 |= over;
            break;
        }
        case G_CAL:
            if (in.arg & 256) {
                sp--;
                st[sp - 1] = rfx_calendar(in.arg & 255, (uint32_t)st[sp - 1], (uint32_t)st[sp]);
            } else {
                st[sp - 1] = rfx_calendar(in.arg & 255, (uint32_t)st[sp - 1], 0);
            }
            break;
        case G_FN:
            sp -= (int)in.value - 1;
            st[sp - 1] = text_fn(prog, in.arg, (uint32_t)st[sp - 1], (uint32_t)st[sp - 2 + in.value]);
            break;
        }
    }
    return true;
}

static __device__ __forceinline__ bool run_prog(const gprog &code, int len, const uint32_t *t0, int a0, const uint32_t *t1,
                                         uint32_t *out, bool *div0)
{
    if (code.wide)
        return run_prog_at<true>(code, 0, len, t0, a0, t1, out, div0);
    return run_prog_at<false>(code, 0, len, t0, a0, t1, out, div0);
}

static inline rfx_status check_div0(rfx_gpu *g)
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


/* Projection onto plain columns: no interpreter, 8-byte rows moved as one load. */
struct colmap {
    int n;
    int col[16];
};

static inline bool plain_columns(rfx_rx *const *out, int nout, colmap *m)
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

/* A look-back word's value: a prefix past LB_VALUE (a scan of counts whose sum no device
 * could hold) is written as LB_VALUE, never into the tag's bits, which would leave the
 * tiles after it waiting; the host takes a total of LB_VALUE or more as too many. */
static __device__ __forceinline__ unsigned long long lb_clamp(unsigned long long v)
{
    return v < LB_VALUE ? v : LB_VALUE;
}

/* Leaves `total` for the host in the words lb points at: the value, then the launch's tag
 * beside it once the value is there (what lb_wait spins on). */
static __device__ __forceinline__ void lb_publish(const lb_args &lb, unsigned long long total)
{
    *lb.total = total;
    __threadfence_system();
    ((volatile unsigned long long *)lb.total)[1] = lb.tag;
}

static __device__ __forceinline__ bool lb_ready(unsigned long long y, unsigned long long tag)
{
    return (y & LB_TAG) == tag && (y & (LB_AGGREGATE | LB_PREFIX)) != 0;
}

/* The tile of a block-a-tile launch: its block index. Blocks of a grid start in index
 * order (CUB's decoupled look-back relies on it too), so a look-back never waits on a
 * block that has not started; a ticket from the counter cost every tile an atomic's
 * round trip and a barrier before its first load. */
static __device__ __forceinline__ size_t lb_tile()
{
    return blockIdx.x;
}

/* The next tile of a persistent launch, in the order blocks ask: a look-back never waits
 * on a tile not taken. */
static __device__ __forceinline__ unsigned lb_take(const lb_args &lb)
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
 * a time held generated FILTER kernels well under the copy bandwidth, the warp reaches
 * it). The last tile also writes the grand total. */
static __device__ unsigned long long lookback_warp(unsigned long long total, size_t tile, size_t ntiles, const lb_args &lb)
{
    unsigned lane = threadIdx.x & 31;
    unsigned long long excl = 0, *status = lb.status;
    if (lane == 0)
        atomicExch(&status[tile], (tile == 0 ? LB_PREFIX : LB_AGGREGATE) | lb.tag | lb_clamp(total));
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
            atomicExch(&status[tile], LB_PREFIX | lb.tag | lb_clamp(excl + total));
        if (tile == ntiles - 1)   // the grand total
            lb_publish(lb, excl + total);
    }
    return excl;
}

/* By warp 0 of a block whose kept rows are counted per (row slab, warp) in s_excl (W <= 128
 * counts, row order; each lane scans W / 32 neighbours): their exclusive scan in place,
 * *tile_kept the tile's count, and the tile's offset by look-back, returned. */
static __device__ __forceinline__ unsigned long long place_slabs(unsigned *s_excl, int W, size_t tile, size_t ntiles,
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
static __device__ __forceinline__ T block_offsets(T cnt, T *tile_n)
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
static __device__ __forceinline__ T block_place(T cnt, size_t tile, size_t ntiles, const lb_args &lb,
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
 * that it clears nothing first (a memset is a launch, a tenth of a small filter's time).
 * Word 0 is the tile counter, which the launch's last ticket sets back to 0. The words are
 * zeroed when they grow, when the tags wrap and after a failed launch. They come from
 * cudaMalloc, not the pool (counted in the budget all the same): held in the pool across
 * runs they made SELECTs markedly slower (measured, not understood), and rfx_gpu_reclaim
 * must not free them. */
static inline rfx_status tagged_words(rfx_gpu *g, size_t words, unsigned long long **status, unsigned **counter,
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
static inline void lb_arm(rfx_gpu *g, lb_args *lb, int word)
{
    lb->total = g->d_words + word;
    ((volatile uint64_t *)g->h_words)[word + 1] = 0;
}

/* Waits until the kernel `call` writes tag into host word `word`: spins on it, asking the
 * stream now and then whether the kernel failed or ended without writing it. */
static inline rfx_status tag_wait(rfx_gpu *g, unsigned long long tag, int word, const char *call)
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


/* The total of the launch lb was armed for (host words `word`, `word + 1`). */
static inline rfx_status lb_wait(rfx_gpu *g, const lb_args &lb, int word, const char *call, unsigned long long *total)
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

static inline rfx_status lb_retag(rfx_gpu *g, lb_scratch *s)
{
    lb_arm(g, &s->a, LB_TOTAL_WORD);
    return tagged_words(g, s->ntiles, &s->a.status, &s->a.counter, &s->a.tag);
}

static inline rfx_status lb_alloc(rfx_gpu *g, size_t ntiles, size_t extra, lb_scratch *s)
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
static inline void lb_free(rfx_gpu *g, lb_scratch *s, bool failed)
{
    rfx_gpu_free(g, s->extra);
    s->extra = NULL;
    if (failed)
        g->tagged_clean = false;
}

/* The look-back's grand total of the kernel `call` just launched over lb's tiles (a kernel
 * of no tiles keeps nothing). */
static inline rfx_status lb_total(rfx_gpu *g, const lb_scratch *lb, const char *call, unsigned long long *total)
{
    *total = 0;
    if (lb->ntiles == 0)
        return RFX_OK;
    return lb_wait(g, lb->a, LB_TOTAL_WORD, call, total);
}

#define SCAN_ITEMS 8
#define SCAN_T (SCAN_ITEMS * 256)
#define SCAN_ALSO_WORD 0   // the host word a scan copies a device word into (scan_total_also)

/* The exclusive sums of `in` within a warp's slabs: warp w of a block holds the tile's
 * counts [w * 256, w * 256 + 256) as SCAN_ITEMS slabs of 32, lane l item j = count
 * j * 32 + l (coalesced loads); pre[j] = the counts before it in the warp's 256, returned
 * their sum. */
static __device__ __forceinline__ unsigned long long warp_slab_scan(const unsigned long long *v, unsigned long long *pre)
{
    const unsigned lane = threadIdx.x & 31;
    unsigned long long run = 0;
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; j++) {
        unsigned long long incl = v[j];
        for (int o = 1; o < 32; o <<= 1) {
            unsigned long long u = __shfl_up_sync(0xffffffffu, incl, o);
            if (lane >= (unsigned)o)
                incl += u;
        }
        pre[j] = run + incl - v[j];
        run += __shfl_sync(0xffffffffu, incl, 31);
    }
    return run;
}

/* Where warp `warp`'s rows go among all tiles': the warps' sums (lane 0's `sum` of each)
 * scanned across the block and the tile placed by look-back (block_place). */
static __device__ __forceinline__ unsigned long long warp_place(unsigned long long sum, size_t tile, size_t ntiles,
                                                         const lb_args &lb)
{
    unsigned long long tile_n, tile_at, excl;
    excl = block_place<unsigned long long>((threadIdx.x & 31) == 0 ? sum : 0, tile, ntiles, lb, &tile_n, &tile_at);
    return tile_at + __shfl_sync(0xffffffffu, excl, 0);
}

/* The exclusive sums of in[0, n) into out by one single-pass launch, a block a tile of
 * SCAN_T counts in launch order (lb_tile): each warp scans its 256 counts, the block its
 * warps' sums, and the tile's offset comes by look-back; the last tile leaves the grand
 * total in the host words lb points at (and *also in also_host before it, where given).
 * CUB's scan took two launches, a third wrote the total and the host waited for the
 * stream's end: a launch costs more than a small scan. */
static __global__ void __launch_bounds__(256) k_scan_lb(const uint64_t *in, uint64_t *out, size_t n,
                                                        const unsigned *also, unsigned long long *also_host,
                                                        const lb_args lb)
{
    const size_t tile = lb_tile(), ntiles = (n + SCAN_T - 1) / SCAN_T;
    const size_t w0 = tile * SCAN_T + (size_t)(threadIdx.x >> 5) * 256 + (threadIdx.x & 31);
    unsigned long long v[SCAN_ITEMS], pre[SCAN_ITEMS];
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; j++)
        v[j] = w0 + j * 32 < n ? in[w0 + j * 32] : 0;
    if (also && threadIdx.x == 0 && tile == ntiles - 1)   // before the total's fence (lookback_warp)
        *also_host = *also;
    const unsigned long long at = warp_place(warp_slab_scan(v, pre), tile, ntiles, lb);
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; j++)
        if (w0 + j * 32 < n)
            out[w0 + j * 32] = at + pre[j];
}

/* The look-back scratch of a single-pass launch over n items, a block a tile of SCAN_T
 * (*ntiles, its grid). */
static inline rfx_status onepass_begin(rfx_gpu *g, size_t n, const char *items, lb_scratch *lb, unsigned *ntiles)
{
    const size_t t = (n + SCAN_T - 1) / SCAN_T;
    if (t > 0x7fffffffu) {
        snprintf(g->err, sizeof g->err, "%zu %s exceed a single-pass launch's grid", n, items);
        return RFX_ERR_LIMIT;
    }
    *ntiles = (unsigned)t;
    return lb_alloc(g, t, 0, lb);
}

/* After the launch of `call`: its error, else the grand total it left for the host. */
static inline rfx_status onepass_end(rfx_gpu *g, lb_scratch *lb, const char *call, unsigned long long *total)
{
    cudaError_t e = cudaGetLastError();
    *total = 0;
    rfx_status st = e != cudaSuccess ? fail(g, e, call, __FILE__, __LINE__) : lb_total(g, lb, call, total);
    lb_free(g, lb, st != RFX_OK);
    return st;
}

/* scan_total, and *also_value = *also (a device word an earlier kernel wrote) read in the
 * same wait. */
static inline rfx_status scan_total_also(rfx_gpu *g, const uint64_t *in, uint64_t *out, size_t n, uint64_t *total,
                                         const unsigned *also, unsigned *also_value)
{
    *total = 0;
    if (also_value)
        *also_value = 0;
    if (n == 0)
        return RFX_OK;
    lb_scratch lb;
    unsigned ntiles;
    rfx_status st = onepass_begin(g, n, "counts", &lb, &ntiles);
    if (st != RFX_OK)
        return st;
    k_scan_lb<<<ntiles, 256, 0, g->stream>>>(in, out, n, also, g->d_words + SCAN_ALSO_WORD, lb.a);
    unsigned long long t;
    st = onepass_end(g, &lb, "k_scan_lb", &t);
    if (st == RFX_OK && t >= LB_VALUE) {   // the offsets past it are not exact (lb_clamp)
        snprintf(g->err, sizeof g->err, "a scan of %zu counts sums to 2^46 or more: more rows than a device holds", n);
        return RFX_ERR_NOMEM;
    }
    *total = t;
    if (st == RFX_OK && also)
        *also_value = (unsigned)((volatile uint64_t *)g->h_words)[SCAN_ALSO_WORD];
    return st;
}

static inline rfx_status scan_total(rfx_gpu *g, const uint64_t *in, uint64_t *out, size_t n, uint64_t *total)
{
    return scan_total_also(g, in, out, n, total, NULL, NULL);
}

/* The distinct keys of sorted keys[0, n) written as two-column rows (column 0 the key's
 * bits from `shift` up, column 1 those below; shift 0: the key's low word, then its high
 * one), and reversed into rev (where given), by one single-pass launch: a block a tile of
 * SCAN_T keys, a key kept where it differs from the one before, the kept ones placed by
 * ballots, the warps' counts and look-back (warp_place); the last tile leaves the count
 * in the host words lb points at. */
static __global__ void __launch_bounds__(256) k_unique_keys_lb(const uint64_t *keys, size_t n, int shift,
                                                               uint2 *rows, uint2 *rev, const lb_args lb)
{
    const unsigned lane = threadIdx.x & 31;
    const size_t tile = lb_tile(), ntiles = (n + SCAN_T - 1) / SCAN_T;
    const size_t w0 = tile * SCAN_T + (size_t)(threadIdx.x >> 5) * 256 + lane;
    uint64_t k[SCAN_ITEMS];
    unsigned ballot[SCAN_ITEMS], sum = 0;
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; j++) {
        const size_t i = w0 + j * 32;
        k[j] = i < n ? keys[i] : 0;
        uint64_t before = __shfl_up_sync(0xffffffffu, k[j], 1);
        if (lane == 0 && i > 0 && i < n)
            before = keys[i - 1];
        ballot[j] = __ballot_sync(0xffffffffu, i < n && (i == 0 || before != k[j]));
        sum += __popc(ballot[j]);
    }
    unsigned long long at = warp_place(sum, tile, ntiles, lb);
    const unsigned below = (1u << lane) - 1;
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; j++) {
        if (ballot[j] >> lane & 1) {
            const size_t o = at + __popc(ballot[j] & below);
            const uint2 r = shift ? make_uint2((uint32_t)(k[j] >> shift), (uint32_t)(k[j] & ((1ull << shift) - 1)))
                                  : make_uint2((uint32_t)k[j], (uint32_t)(k[j] >> 32));
            rows[o] = r;
            if (rev)
                rev[o] = make_uint2(r.y, r.x);
        }
        at += __popc(ballot[j]);
    }
}

/* The distinct keys of sorted keys[0, n) as rows into rows (and reversed into rev, where
 * given), n words each at most; *m: how many. */
static inline rfx_status unique_keys_rows(rfx_gpu *g, const uint64_t *keys, size_t n, int shift, uint32_t *rows,
                                          uint32_t *rev, size_t *m)
{
    *m = 0;
    if (n == 0)
        return RFX_OK;
    lb_scratch lb;
    unsigned ntiles;
    rfx_status st = onepass_begin(g, n, "keys", &lb, &ntiles);
    if (st != RFX_OK)
        return st;
    k_unique_keys_lb<<<ntiles, 256, 0, g->stream>>>(keys, n, shift, (uint2 *)rows, (uint2 *)rev, lb.a);
    unsigned long long t;
    st = onepass_end(g, &lb, "k_unique_keys_lb", &t);
    *m = (size_t)t;
    return st;
}

/* The start of a tiled kernel that keeps some of its rows: res for at most n rows of
 * `arity` (res->n is set at the end) and the look-back scratch; nothing held on failure. */
static inline rfx_status tiled_begin(rfx_gpu *g, int arity, size_t n, size_t ntiles, size_t extra, rfx_dev_rows *res,
                              lb_scratch *lb)
{
    rfx_status st = rows_alloc(g, res, arity, n);
    if (st == RFX_OK && (st = lb_alloc(g, ntiles, extra, lb)) != RFX_OK)
        rfx_gpu_rows_free(g, res);
    return st;
}

/* Its end: the launch's error (the kernel named `call`), else the rows kept (the look-back's
 * grand total) in res->n; the scratch freed, res handed to dst (freed on error). */
static inline rfx_status tiled_end(rfx_gpu *g, cudaError_t e, const char *call, lb_scratch *lb, rfx_dev_rows *res,
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
static __device__ __forceinline__ void block_write_out(uint32_t *dst, const uint32_t *st, unsigned words)
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


// ---- staging and joins by tiles, shared by the set operations and the joins ---------------
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

// dst[w] = src[w] for w < nw by a block of 256 threads, where dst and src lie alike
// modulo 16 bytes: cp.async of 16-byte pieces between scalar ends, all in flight at once
// (faster than 4 pieces a thread through registers); the caller commits and waits.
static __device__ __forceinline__ void block_stage_async(uint32_t *dst, const uint32_t *src, size_t nw)
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

#define SEMI_ITEMS 8
#define SEMI_T (SEMI_ITEMS * 256)
#define JOIN_B_CAP 4096     // right keys staged at most (k <= 4 words: 64 KiB)
#define JOIN_OUT_T 2048
#define JOIN_OFF_CAP 4096   // left rows' offsets staged at most (32 KiB)

#define SEMI_SMEM (96 * 1024)   // a block's shared memory: a's tile, b's segment, the output tile
#define SEMI_MAX_WORDS 4   // a's and b's rows staged up to this width

// range[2t, 2t + 1] = the rows of b whose keys lie between tile t's first and last key:
// all tiles' searches at once, so their latencies overlap (a block doing its own two
// searches first waited ~28 dependent loads per tile).
static __global__ void k_semi_ranges(const uint32_t *a, size_t na, int aa, const uint32_t *b, int ba, size_t nb, int k,
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

// ---- sorting helpers (gpu_sort.cu) ------------------------------------------------------------
static inline int bits_of(unsigned v)
{
    return v ? 32 - __builtin_clz(v) : 0;
}

// Rows reversed, (y, x), not yet sorted by y (see rfx_gpu_reversed).
typedef struct {
    uint64_t *rows;   // a row a word, or NULL
    int end_bit;      // y's width
} reversal;

/* *out = rv's rows sorted by y, stably. A row (y, x) is the 64-bit word x << 32 | y in
 * memory, so a key sort over the word's low end_bit bits sorts the rows themselves. Takes
 * rv's rows (freed or adopted, success or not). */
rfx_status reverse_sort(rfx_gpu *g, reversal *rv, size_t n, rfx_dev_rows *out);
// n (< 2^32) rows of arity a stably sorted by the columns with bits[c] > 0 (column 0 the
// most significant; bits[c] of each value vary), into *out (allocated here).
rfx_status rows_sorted_by(rfx_gpu *g, const uint32_t *rows, size_t n, int a, const int *bits, uint32_t **out);

#endif
