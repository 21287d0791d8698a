// gpu_symbols.cu: the device's copy of a symbol table, which the expression interpreter's
// text functors read (G_FN: like, contains, strlen, the symbols' order), so that a filter
// over a column of texts runs where its rows are instead of moving them to the host and
// back. Symbols are only ever added to a table, so the copy grows by what was added since
// it was last brought up to date: a table kept by an engine crosses the link once.
#include "gpu_core.cuh"

void gpu_symbols_free(rfx_gpu *g)
{
    if (g->sym_text)
        cudaFree(g->sym_text);
    if (g->sym_off)
        cudaFree(g->sym_off);
    g->sym_text = NULL;
    g->sym_off = NULL;
    g->sym_text_cap = g->sym_off_cap = g->sym_bytes = 0;
    g->sym_n = 0;
    g->sym_serial = 0;
}

// *buf holding `keep` bytes grown to at least `want` (doubling), from cudaMalloc as the
// look-back words are (tagged_words says why), checked against the budget.
static rfx_status grow(rfx_gpu *g, void **buf, size_t *cap, size_t keep, size_t want, size_t unit)
{
    if (want <= *cap)
        return RFX_OK;
    size_t to = want > 2 * *cap ? want : 2 * *cap;
    bool injected = rfx_fault_device_alloc();
    if (injected || rfx_gpu_in_use(g) - *cap * unit + to * unit > g->budget) {
        snprintf(g->err, sizeof g->err, "device memory budget exceeded: %zu bytes asked for the symbols' texts%s",
                 to * unit, injected ? " (injected by RFX_FAULT_DEVICE)" : "");
        return RFX_ERR_NOMEM;
    }
    void *p = NULL;
    CK(cudaMalloc(&p, to * unit));
    if (keep) {
        cudaError_t e = cudaMemcpyAsync(p, *buf, keep * unit, cudaMemcpyDeviceToDevice, g->stream);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(g->stream);
        if (e != cudaSuccess) {
            cudaFree(p);
            return fail(g, e, "cudaMemcpyAsync", __FILE__, __LINE__);
        }
    }
    if (*buf)
        cudaFree(*buf);
    *buf = p;
    *cap = to;
    return RFX_OK;
}

struct gather_job {
    const rfx_symtab *t;
    uint32_t from, n;          // symbols [from, from + n)
    const unsigned long long *off;   // their offsets, off[0] the first's
    char *text;                // where off[0] lands
    int pieces;
};

static void gather_piece(int k, void *ctx)
{
    gather_job *j = (gather_job *)ctx;
    uint32_t lo = (uint32_t)((uint64_t)j->n * k / j->pieces), hi = (uint32_t)((uint64_t)j->n * (k + 1) / j->pieces);
    for (uint32_t i = lo; i < hi; i++)
        memcpy(j->text + (j->off[i] - j->off[0]), rfx_symtab_str(j->t, j->from + i), j->off[i + 1] - j->off[i]);
}

rfx_status gpu_symbols(rfx_gpu *g, const rfx_symtab *t)
{
    if (g->sym_serial != rfx_symtab_serial(t)) {   // another table: start again
        gpu_symbols_free(g);
        g->sym_serial = rfx_symtab_serial(t);
    }
    const uint32_t n = rfx_symtab_size(t), from = g->sym_n;
    if (n == from && g->sym_off)
        return RFX_OK;
    const uint32_t m = n - from;
    unsigned long long *off = (unsigned long long *)malloc(((size_t)m + 1) * sizeof *off);
    if (!off)
        return RFX_ERR_NOMEM;
    off[0] = from ? g->sym_bytes : 0;   // the copy's end
    rfx_status st = RFX_OK;
    for (uint32_t i = 0; st == RFX_OK && i < m; i++)
        off[i + 1] = off[i] + rfx_symtab_len(t, from + i);
    const size_t bytes = (size_t)(off[m] - off[0]);
    char *text = st == RFX_OK && bytes ? (char *)malloc(bytes) : NULL;
    if (st == RFX_OK && bytes && !text)
        st = RFX_ERR_NOMEM;
    if (st == RFX_OK) {
        int threads = g->host_threads > 1 && bytes >= ((size_t)1 << 20) ? g->host_threads : 1;
        gather_job j = {t, from, m, off, text, 4 * threads};
        if (bytes)
            rfx_parallel_for(j.pieces, threads, gather_piece, &j);
        st = grow(g, (void **)&g->sym_text, &g->sym_text_cap, (size_t)off[0], (size_t)off[m] ? (size_t)off[m] : 1, 1);
    }
    if (st == RFX_OK)
        st = grow(g, (void **)&g->sym_off, &g->sym_off_cap, from ? (size_t)from + 1 : 0, (size_t)n + 1, 8);
    if (st == RFX_OK)
        st = upload_bytes(g, g->sym_text + off[0], text, bytes);
    if (st == RFX_OK)
        st = upload_bytes(g, g->sym_off + from, off, ((size_t)m + 1) * sizeof *off);
    if (st == RFX_OK) {
        g->sym_n = n;
        g->sym_bytes = (size_t)off[m];
    }
    free(text);
    free(off);
    return st;
}
