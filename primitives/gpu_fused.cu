// gpu_fused.cu: launching the weaver's generated kernels (weaver/codegen.c), compiled at
// run time by jit.c and loaded as CUDA libraries, over the core's helpers (pool,
// compaction, division flag).
#include "gpu_core.cuh"
extern "C" {
#include "jit.h"
}


struct jit_lib {
    uint64_t hash;             // of the source text
    cudaLibrary_t lib;
    struct jit_lib *next;
};

// Same layout as the generated code's rfx_outs and rfx_srcs.
struct fused_outs {
    uint32_t *p[8];
};
struct fused_srcs {
    const uint32_t *p[8];
    unsigned long long n[8];
};

void jit_unload(rfx_gpu *g)
{
    for (jit_lib *l = g->libs, *next; l; l = next) {
        next = l->next;
        cudaLibraryUnload(l->lib);
        free(l);
    }
    g->libs = NULL;
}

extern "C" bool rfx_gpu_jit_ready(rfx_gpu *g, char *why, size_t cap)
{
    (void)g;
    return rfx_jit_available(why, cap);
}

extern "C" void rfx_gpu_jit_stats(const rfx_gpu *g, int *compiled, int *cached, double *compile_ms, double *cache_ms)
{
    *compiled = g->jit_compiled;
    *cached = g->jit_cached;
    *compile_ms = g->jit_compile_ms;
    *cache_ms = g->jit_cache_ms;
}

extern "C" int rfx_gpu_arch(const rfx_gpu *g)
{
    return g->arch;
}

extern "C" bool rfx_gpu_jit_has(const rfx_gpu *g, uint64_t h)
{
    for (const jit_lib *l = g->libs; l; l = l->next)
        if (l->hash == h)
            return true;
    return false;
}

extern "C" rfx_status rfx_gpu_jit_add(rfx_gpu *g, uint64_t h, void *cubin, bool compiled, double ms)
{
    if (compiled) {
        g->jit_compiled++;
        g->jit_compile_ms += ms;
    } else {
        g->jit_cached++;
        g->jit_cache_ms += ms;
    }
    jit_lib *l = (jit_lib *)calloc(1, sizeof *l);
    if (!l) {
        free(cubin);
        return RFX_ERR_NOMEM;
    }
    cudaError_t e = cudaLibraryLoadData(&l->lib, cubin, NULL, NULL, 0, NULL, NULL, 0);
    free(cubin);
    if (e != cudaSuccess) {
        free(l);
        return fail(g, e, "cudaLibraryLoadData (generated kernels)", __FILE__, __LINE__);
    }
    l->hash = h;
    l->next = g->libs;
    g->libs = l;
    return RFX_OK;
}

/* The kernel `name` of the library built from source, whose rfx_fnv1a is h (compiled, or
 * read from the disk cache, on first use in this context). */
static rfx_status jit_kernel(rfx_gpu *g, const char *source, uint64_t h, const char *name, cudaKernel_t *k)
{
    jit_lib *l = g->libs;
    while (l && l->hash != h)
        l = l->next;
    if (!l) {
        void *cubin = NULL;
        size_t size = 0;
        bool compiled = false;
        double ms = 0;
        if (!rfx_jit_cubin(source, name, g->arch, &cubin, &size, &compiled, &ms, g->err, sizeof g->err))
            return RFX_ERR_DEVICE;
        rfx_status st = rfx_gpu_jit_add(g, h, cubin, compiled, ms);
        if (st != RFX_OK)
            return st;
        l = g->libs;
    }
    CK(cudaLibraryGetKernel(k, l->lib, name));
    return RFX_OK;
}

extern "C" rfx_status rfx_gpu_jit_load(rfx_gpu *g, const char *source, uint64_t source_hash, const char *kernel)
{
    cudaKernel_t k;
    return jit_kernel(g, source, source_hash, kernel, &k);
}

#define FUSED_TOTALS_WORD 16   // h_words[16 + m]: output m's size; [24]: the division flag;
#define FUSED_DIV_WORD 24      // [25]: the launch's tag, once the sizes are there
#define FUSED_TAG_WORD 25

static rfx_status launch(rfx_gpu *g, cudaKernel_t k, const char *name, size_t blocks, void **args)
{
    cudaError_t e = cudaLaunchKernel((const void *)k, dim3((unsigned)blocks), dim3(RFX_FUSED_THREADS), args, 0, g->stream);
    if (e != cudaSuccess)
        return fail(g, e, name, __FILE__, __LINE__);
    return RFX_OK;
}

extern "C" rfx_status rfx_gpu_fused_filter(rfx_gpu *g, const char *name, const char *source, uint64_t source_hash,
                                           bool divides, int items, const rfx_dev_rows *src, int nouts,
                                           const int *nout, rfx_dev_rows *const *dsts)
{
    if (nouts < 1 || nouts > 8)
        return RFX_ERR_INTERNAL;
    size_t n = src->n;
    if (n == 0) {
        for (int m = 0; m < nouts; m++) {
            rfx_dev_rows empty;
            rfx_gpu_rows_init(&empty, nout[m]);
            replace(g, dsts[m], &empty);
        }
        return RFX_OK;
    }
    cudaKernel_t k;
    rfx_status st = jit_kernel(g, source, source_hash, name, &k);
    if (st)
        return st;
    size_t tile = (size_t)RFX_FUSED_THREADS * (size_t)items, ntiles = (n + tile - 1) / tile;
    if (ntiles > 0xffffffffu) {
        snprintf(g->err, sizeof g->err, "%zu rows exceed the fused kernel's tile count", n);
        return RFX_ERR_LIMIT;
    }
    rfx_dev_rows res[8];
    int made = 0;
    for (; made < nouts && st == RFX_OK; made++)
        st = rows_alloc(g, &res[made], nout[made], n);   // upper bounds; n is set below
    unsigned long long *status = NULL, tag = 0;
    unsigned *counter = NULL;
    if (st == RFX_OK)
        st = tagged_words(g, (size_t)nouts * ntiles, &status, &counter, &tag);
    // the last tile writes the outputs' sizes and then the launch's tag, and a block that
    // divides by zero the flag, straight into the context's mapped host words: the host
    // reads the sizes once the tag is there, or, where the source divides, once the kernel
    // has ended (any block may set the flag at its end), and copies nothing
    volatile uint64_t *h = (volatile uint64_t *)g->h_words;
    if (st == RFX_OK) {
        h[FUSED_DIV_WORD] = 0;
        h[FUSED_TAG_WORD] = 0;
        fused_outs outs = {};
        for (int m = 0; m < nouts; m++)
            outs.p[m] = res[m].data;
        const uint32_t *data = src->data;
        unsigned long long nn = n, *totals = g->d_words + FUSED_TOTALS_WORD;
        unsigned *div_flag = (unsigned *)(g->d_words + FUSED_DIV_WORD);
        void *args[] = {&data, &nn, &outs, &status, &counter, &totals, &div_flag, &tag};
        st = launch(g, k, name, ntiles, args);
        if (st == RFX_OK && !divides)
            st = tag_wait(g, tag, FUSED_TAG_WORD, name);
        else if (st == RFX_OK) {
            cudaError_t e = cudaStreamSynchronize(g->stream);
            if (e != cudaSuccess)
                st = fail(g, e, name, __FILE__, __LINE__);
        }
        if (st != RFX_OK)
            g->tagged_clean = false;   // the counter and the words may be left half-set
    }
    if (st == RFX_OK && h[FUSED_DIV_WORD]) {
        snprintf(g->err, sizeof g->err, "division by zero");
        st = RFX_ERR_DIV0;
    }
    for (int m = 0; m < made; m++) {
        if (st == RFX_OK) {
            res[m].n = (size_t)h[FUSED_TOTALS_WORD + m];
            replace(g, dsts[m], &res[m]);
        } else
            rfx_gpu_rows_free(g, &res[m]);
    }
    return st;
}

extern "C" rfx_status rfx_gpu_fused_join(rfx_gpu *g, const char *name, const char *source, uint64_t source_hash,
                                         const rfx_dev_rows *const *srcs, int nsrc, bool has_residual, int nout,
                                         rfx_dev_rows *dst)
{
    if (nsrc < 2 || nsrc > 8)
        return RFX_ERR_INTERNAL;
    rfx_dev_rows res;
    rfx_gpu_rows_init(&res, nout);
    size_t na = srcs[0]->n;
    bool empty = na == 0;
    for (int s = 1; s < nsrc; s++)
        empty |= srcs[s]->n == 0;
    if (empty) {
        replace(g, dst, &res);
        return RFX_OK;
    }
    char kname[64];
    cudaKernel_t kcount, kexpand;
    snprintf(kname, sizeof kname, "%s_count", name);
    rfx_status st = jit_kernel(g, source, source_hash, kname, &kcount);
    snprintf(kname, sizeof kname, "%s_expand", name);
    if (st == RFX_OK)
        st = jit_kernel(g, source, source_hash, kname, &kexpand);
    if (st)
        return st;
    fused_srcs S = {};
    for (int s = 0; s < nsrc; s++) {
        S.p[s] = srcs[s]->data;
        S.n[s] = srcs[s]->n;
    }
    /* rows a lane of the count: up to RFX_FUSED_JOIN_CHUNK (its galloping searches read less)
     * while that leaves every multiprocessor its fill of threads; fewer where it would not,
     * since one lane's searches are a chain of dependent loads and a device of idle threads
     * waits on each link */
    const size_t fill = (size_t)g->sms * 2048;
    unsigned chunk = na / fill >= RFX_FUSED_JOIN_CHUNK ? RFX_FUSED_JOIN_CHUNK : na / fill ? (unsigned)(na / fill) : 1;
    const size_t rows_a_block = (size_t)RFX_FUSED_THREADS * chunk;
    if ((na + rows_a_block - 1) / rows_a_block > 0x7fffffffu) {
        snprintf(g->err, sizeof g->err, "%zu rows exceed the generated join's grid", na);
        return RFX_ERR_LIMIT;
    }
    size_t ranges = (size_t)(nsrc - 1) * na;
    uint64_t *lo, *len, *cnt, *off;
    ALLOC(lo, ranges * 8);
    len = (uint64_t *)rfx_gpu_alloc(g, ranges * 8);
    cnt = (uint64_t *)rfx_gpu_alloc(g, na * 8 + 16);   // then the raw-range flag
    off = (uint64_t *)rfx_gpu_alloc(g, na * 8);
    unsigned *raw_flag = cnt ? (unsigned *)(cnt + na) : NULL;
    if (!len || !cnt || !off)
        st = RFX_ERR_NOMEM;
    if (st == RFX_OK) {
        cudaError_t e = cudaMemsetAsync(g->d_flag, 0, sizeof(unsigned), g->stream);
        if (e == cudaSuccess)
            e = cudaMemsetAsync(raw_flag, 0, sizeof(unsigned), g->stream);
        if (e != cudaSuccess)
            st = fail(g, e, "cudaMemsetAsync", __FILE__, __LINE__);
    }
    if (st == RFX_OK) {
        void *args[] = {&S, &lo, &len, &cnt, &raw_flag, &g->d_flag, &chunk};
        st = launch(g, kcount, "generated join count kernel", (na + rows_a_block - 1) / rows_a_block, args);
    }
    // the total and whether some range was too long to filter as counted, in one wait
    uint64_t total = 0;
    unsigned raw = 0;
    if (st == RFX_OK)
        st = scan_total_also(g, cnt, off, na, &total, raw_flag, &raw);
    rfx_gpu_free(g, cnt);
    uint64_t *flags = NULL;
    if (st == RFX_OK && total)
        st = rows_alloc(g, &res, nout, (size_t)total);
    if (st == RFX_OK && total && (has_residual || raw) && !(flags = (uint64_t *)rfx_gpu_alloc(g, total * 8)))
        st = RFX_ERR_NOMEM;
    if (st == RFX_OK && total) {
        uint32_t *out = res.data;
        void *args[] = {&S, &total, &off, &lo, &len, &out, &flags, &g->d_flag};
        st = launch(g, kexpand, "generated join expand kernel", grid_for(total), args);
        if (st == RFX_OK)
            st = check_div0(g);
    }
    rfx_gpu_free(g, lo);
    rfx_gpu_free(g, len);
    rfx_gpu_free(g, off);
    return finish_filtered(g, st, &res, (size_t)total, nout, flags, dst);
}
