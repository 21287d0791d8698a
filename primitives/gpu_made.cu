// gpu_made.cu: maps whose outputs make symbols (substr, cat, to_string), run on the device
// (rfx_gpu_mapfilter_making), so that a column of texts need not cross to the host and back
// for the symbols alone.
#include "gpu_core.cuh"

// ---- one functor's symbols (make_symbols) ---------------------------------------------------
// Each row's text is built from the device's copy of the table and hashed; the distinct hashes are sorted out, the host makes the text
// of one row of each (only the texts it lacks are added, in their byte order, as a run by
// speculation adds them), and every row takes the symbol of its hash, checked against that
// symbol's text. Where two texts share a hash the check fails and the host makes every row's.

struct made_args {
    int col[3];
    int n;
};

// The text op makes of arguments a, as base/functors.c's made_text makes it: up to two
// pieces of the table's texts, or the digits in num (which p[0] then points to).
struct made_text {
    const char *p[2];
    uint32_t n[2];
    char num[12];
};

static __device__ void symbol_text(const char *text, const unsigned long long *off, uint32_t nsyms, uint32_t s,
                                   const char **p, uint32_t *n)
{
    *p = text;
    *n = 0;
    if (s < nsyms) {
        *p = text + off[s];
        *n = (uint32_t)(off[s + 1] - off[s]);
    }
}

static __device__ void make_text(int op, const uint32_t *a, const char *text, const unsigned long long *off,
                                 uint32_t nsyms, made_text *m)
{
    m->p[1] = text;
    m->n[1] = 0;
    switch (op) {
    case RFX_FX_SUBSTR: {   // std::string::substr with Soufflé's 32-bit arguments, as the host
        symbol_text(text, off, nsyms, a[0], &m->p[0], &m->n[0]);
        const int32_t pos = (int32_t)a[1], cnt = (int32_t)a[2];
        const uint32_t len = m->n[0];
        if (pos < 0 || (uint32_t)pos > len) {
            m->n[0] = 0;
            break;
        }
        m->p[0] += pos;
        m->n[0] = cnt < 0 || (uint32_t)cnt > len - (uint32_t)pos ? len - (uint32_t)pos : (uint32_t)cnt;
        break;
    }
    case RFX_FX_CAT:
        symbol_text(text, off, nsyms, a[0], &m->p[0], &m->n[0]);
        symbol_text(text, off, nsyms, a[1], &m->p[1], &m->n[1]);
        break;
    default: {   // RFX_FX_I2S ("%d"), RFX_FX_U2S ("%u")
        const bool neg = op == RFX_FX_I2S && (int32_t)a[0] < 0;
        uint32_t v = neg ? 0u - a[0] : a[0];
        char d[10];
        int k = 0, j = 0;
        do {
            d[k++] = (char)('0' + v % 10);
            v /= 10;
        } while (v);
        if (neg)
            m->num[j++] = '-';
        while (k)
            m->num[j++] = d[--k];
        m->p[0] = m->num;
        m->n[0] = (uint32_t)j;
    }
    }
}

static __device__ uint64_t made_hash(const made_text *m)
{
    uint64_t h = 0xcbf29ce484222325ull ^ (m->n[0] + m->n[1]);
    for (int k = 0; k < 2; k++)
        for (uint32_t i = 0; i < m->n[k]; i++)
            h = (h ^ (uint8_t)m->p[k][i]) * 0x100000001b3ull;
    h ^= h >> 30;   // splitmix64's finalizer: the bytes' effect spread over every bit
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

static __device__ bool made_equals(const made_text *m, const char *s, uint32_t n)
{
    if (m->n[0] + m->n[1] != n)
        return false;
    for (int k = 0, at = 0; k < 2; at += (int)m->n[k], k++)
        for (uint32_t i = 0; i < m->n[k]; i++)
            if (m->p[k][i] != s[at + i])
                return false;
    return true;
}

static __device__ void row_args(const uint32_t *rows, int arity, size_t i, made_args ac, uint32_t *a)
{
    for (int k = 0; k < ac.n; k++)
        a[k] = rows[i * arity + ac.col[k]];
}

__global__ void k_made_hash(const uint32_t *rows, int arity, size_t n, int op, made_args ac, const char *text,
                            const unsigned long long *off, uint32_t nsyms, uint64_t mask, uint64_t *h,
                            uint64_t *h_sorted)
{
    GRID_STRIDE(i, n) {
        uint32_t a[3];
        made_text m;
        row_args(rows, arity, i, ac, a);
        make_text(op, a, text, off, nsyms, &m);
        h[i] = h_sorted[i] = made_hash(&m) & mask;
    }
}

static __device__ size_t hash_at(const uint64_t *distinct, size_t d, uint64_t h)
{
    size_t lo = 0, hi = d;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (distinct[mid] < h)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

// rep[j]: the first row whose hash is the j-th distinct one
__global__ void k_made_first(const uint64_t *h, size_t n, const uint64_t *distinct, size_t d, unsigned long long *rep)
{
    GRID_STRIDE(i, n) atomicMin(&rep[hash_at(distinct, d, h[i])], (unsigned long long)i);
}

// args[j]: the arguments of row rep[j] (of row j where rep is NULL)
__global__ void k_made_args(const uint32_t *rows, int arity, const unsigned long long *rep, size_t d, made_args ac,
                            uint32_t *args)
{
    GRID_STRIDE(j, d) row_args(rows, arity, rep ? (size_t)rep[j] : j, ac, args + j * ac.n);
}

// Each row's column col set to the symbol of its hash among distinct (ids[j] the j-th's),
// checked against that symbol's text (*bad set where it differs); of row i, unchecked, where
// distinct is NULL.
__global__ void k_made_assign(uint32_t *rows, int arity, size_t n, int op, made_args ac, const char *text,
                              const unsigned long long *off, uint32_t nsyms, const uint64_t *h,
                              const uint64_t *distinct, size_t d, const uint32_t *ids, int col, unsigned *bad)
{
    GRID_STRIDE(i, n) {
        uint32_t id = ids[i];
        if (distinct) {
            id = ids[hash_at(distinct, d, h[i])];
            uint32_t a[3];
            made_text m;
            row_args(rows, arity, i, ac, a);
            make_text(op, a, text, off, nsyms, &m);
            const char *s;
            uint32_t len;
            symbol_text(text, off, nsyms, id, &s, &len);
            if (id >= nsyms || !made_equals(&m, s, len))
                *bad = 1;
        }
        rows[i * arity + col] = id;
    }
}

// The symbols of the d argument tuples at dev_args (d * ac.n words), made by the host, into
// ids on the device.
static rfx_status made_by_host(rfx_gpu *g, rfx_fn_env *env, int op, const uint32_t *dev_args, size_t d, int nargs,
                               uint32_t *ids)
{
    uint32_t *args = (uint32_t *)malloc(d * (size_t)nargs * sizeof *args + 1), *made = (uint32_t *)malloc(d * 4 + 1);
    rfx_status st = args && made ? to_host(g, dev_args, args, d * (size_t)nargs) : RFX_ERR_NOMEM;
    if (st == RFX_OK && !rfx_fn_env_make_symbols(env, (rfx_fn_op)op, args, nargs, d, made))
        st = RFX_ERR_DIV0;   // a functor failed (out of memory): the environment says so
    if (st == RFX_OK)
        st = upload_bytes(g, ids, made, d * 4);
    free(args);
    free(made);
    return st;
}

static rfx_status make_symbols(rfx_gpu *g, rfx_dev_rows *rows, rfx_fn_env *env, int op, const int *args, int nargs,
                                int col)
{
    const size_t n = rows->n;
    if (n == 0)
        return RFX_OK;
    if (nargs < 1 || nargs > 3 || !rfx_fn_op_device_makes((rfx_fn_op)op)) {
        snprintf(g->err, sizeof g->err, "functor %d does not make symbols on the device", op);
        return RFX_ERR_INTERNAL;
    }
    made_args ac = {{0, 0, 0}, nargs};
    for (int k = 0; k < nargs; k++)
        ac.col[k] = args[k];
    const rfx_symtab *t = rfx_fn_env_symbols(env);
    rfx_status st = gpu_symbols(g, t);
    if (st != RFX_OK)
        return st;
    uint64_t *h, *sorted, *alt, *distinct;
    ALLOC(h, n * 8);
    ALLOC(sorted, n * 8);
    ALLOC(alt, n * 8);
    ALLOC(distinct, n * 8);
    const int bits = g->tune->made_hash_bits >= 1 && g->tune->made_hash_bits < 64 ? g->tune->made_hash_bits : 64;
    k_made_hash<<<grid_for(n), 256, 0, g->stream>>>(rows->data, rows->arity, n, op, ac, g->sym_text, g->sym_off, g->sym_n,
                                                     bits == 64 ? ~0ull : (1ull << bits) - 1, h, sorted);
    CK_LAUNCH();
    int sel = 0;
    st = cub_sort_u64(g, sorted, alt, n, 0, bits, &sel);
    if (st != RFX_OK)
        return st;
    size_t d = 0;
    st = unique_keys_rows(g, sel ? alt : sorted, n, 0, (uint32_t *)distinct, NULL, &d);
    rfx_gpu_free(g, alt);
    rfx_gpu_free(g, sorted);
    if (st != RFX_OK)
        return st;
    unsigned long long *rep;
    uint32_t *dargs, *ids;
    unsigned *bad;
    ALLOC(rep, d * 8);
    ALLOC(dargs, d * (size_t)nargs * 4);
    ALLOC(ids, n * 4);   // d first; n where the check fails
    ALLOC(bad, sizeof *bad);
    CK(cudaMemsetAsync(rep, 0xff, d * 8, g->stream));
    CK(cudaMemsetAsync(bad, 0, sizeof *bad, g->stream));
    k_made_first<<<grid_for(n), 256, 0, g->stream>>>(h, n, distinct, d, rep);
    CK_LAUNCH();
    k_made_args<<<grid_for(d), 256, 0, g->stream>>>(rows->data, rows->arity, rep, d, ac, dargs);
    CK_LAUNCH();
    st = made_by_host(g, env, op, dargs, d, nargs, ids);
    if (st == RFX_OK)
        st = gpu_symbols(g, t);   // the texts just added, for the check
    if (st != RFX_OK)
        return st;
    k_made_assign<<<grid_for(n), 256, 0, g->stream>>>(rows->data, rows->arity, n, op, ac, g->sym_text, g->sym_off,
                                                       g->sym_n, h, distinct, d, ids, col, bad);
    CK_LAUNCH();
    unsigned b = 0;
    st = to_host(g, bad, &b, 1);
    if (st == RFX_OK && b) {   // two texts shared a hash: every row's symbol made by the host
        rfx_gpu_free(g, dargs);
        ALLOC(dargs, n * (size_t)nargs * 4);
        k_made_args<<<grid_for(n), 256, 0, g->stream>>>(rows->data, rows->arity, NULL, n, ac, dargs);
        CK_LAUNCH();
        st = made_by_host(g, env, op, dargs, n, nargs, ids);
        if (st == RFX_OK) {
            k_made_assign<<<grid_for(n), 256, 0, g->stream>>>(rows->data, rows->arity, n, op, ac, NULL, NULL, 0,
                                                               NULL, NULL, 0, ids, col, bad);
            CK_LAUNCH();
        }
    }
    rfx_gpu_free(g, rep);
    rfx_gpu_free(g, dargs);
    rfx_gpu_free(g, ids);
    rfx_gpu_free(g, bad);
    rfx_gpu_free(g, h);
    rfx_gpu_free(g, distinct);
    return st;
}

// ---- the map (rfx_gpu_mapfilter_making) ------------------------------------------------------
// The outputs are copied (their nodes in `nodes`, freed after) and rewritten level by level:
// the functors making symbols whose arguments make none are computed into columns of an
// intermediate relation (the columns the outputs read, each functor's arguments and a column
// for its symbols), after which they read that column; the outputs last read only columns.

struct rx_nodes {
    void **p;
    int n, cap;
    bool nomem;
};

static void *take(rx_nodes *m, size_t bytes)
{
    if (m->n == m->cap) {
        int cap = m->cap ? 2 * m->cap : 64;
        void **p = (void **)realloc(m->p, sizeof *p * (size_t)cap);
        if (!p) {
            m->nomem = true;
            return NULL;
        }
        m->p = p;
        m->cap = cap;
    }
    void *x = calloc(1, bytes);
    if (!x)
        m->nomem = true;
    else
        m->p[m->n++] = x;
    return x;
}

static rfx_rx *clone_rx(rx_nodes *m, const rfx_rx *e)
{
    if (!e)
        return NULL;
    rfx_rx *c = (rfx_rx *)take(m, sizeof *c);
    if (!c)
        return NULL;
    *c = *e;
    c->l = clone_rx(m, e->l);
    c->r = clone_rx(m, e->r);
    if (e->kind == RFX_RX_FN && e->nargs > 0) {
        c->args = (rfx_rx **)take(m, sizeof *c->args * (size_t)e->nargs);
        for (int i = 0; c->args && i < e->nargs; i++)
            c->args[i] = clone_rx(m, e->args[i]);
    }
    return c;
}

static rfx_rx *leaf(rx_nodes *m, rfx_rx_kind kind, rfx_prim prim, int col)
{
    rfx_rx *c = (rfx_rx *)take(m, sizeof *c);
    if (c) {
        c->kind = kind;
        c->prim = prim;
        c->col = col;
    }
    return c;
}

static bool makes(const rfx_rx *e)
{
    return e && e->kind == RFX_RX_FN && rfx_fn_op_makes_symbol((rfx_fn_op)e->op);
}

static bool holds_maker(const rfx_rx *e)
{
    if (!e)
        return false;
    if (makes(e))
        return true;
    for (int i = 0; e->kind == RFX_RX_FN && i < e->nargs; i++)
        if (holds_maker(e->args[i]))
            return true;
    return holds_maker(e->l) || holds_maker(e->r);
}

enum { LEVEL_MAX = 16 };   // functors made in one pass (more wait for the next)

// The functors making symbols in e whose arguments make none (at most LEVEL_MAX in all).
static void level_makers(rfx_rx *e, rfx_rx **found, int *n)
{
    if (!e || *n == LEVEL_MAX)
        return;
    if (e->kind == RFX_RX_FN) {
        bool inner = false;
        for (int i = 0; i < e->nargs; i++)
            inner |= holds_maker(e->args[i]);
        if (makes(e) && !inner) {
            found[(*n)++] = e;
            return;
        }
        for (int i = 0; i < e->nargs; i++)
            level_makers(e->args[i], found, n);
        return;
    }
    level_makers(e->l, found, n);
    level_makers(e->r, found, n);
}

static void columns_read(const rfx_rx *e, bool *read)
{
    if (!e)
        return;
    if (e->kind == RFX_RX_COL)
        read[e->col] = true;
    for (int i = 0; e->kind == RFX_RX_FN && i < e->nargs; i++)
        columns_read(e->args[i], read);
    columns_read(e->l, read);
    columns_read(e->r, read);
}

static void renumber(rfx_rx *e, const int *to)
{
    if (!e)
        return;
    if (e->kind == RFX_RX_COL)
        e->col = to[e->col];
    for (int i = 0; e->kind == RFX_RX_FN && i < e->nargs; i++)
        renumber(e->args[i], to);
    renumber(e->l, to);
    renumber(e->r, to);
}

// One level: *cur (filtered by pred where given) into *next, the columns the outputs read
// and each level maker's arguments and symbols; the makers then read their column.
static rfx_status make_level(rfx_gpu *g, rx_nodes *m, const rfx_dev_rows *cur, const rfx_rx *pred, rfx_rx **outs,
                             int nout, rfx_dev_rows *next)
{
    rfx_rx *mk[LEVEL_MAX];
    int nmk = 0;
    for (int k = 0; k < nout; k++)
        level_makers(outs[k], mk, &nmk);
    const int w = cur->arity;
    bool *read = (bool *)calloc((size_t)w + 1, sizeof *read);
    int *to = (int *)malloc(((size_t)w + 1) * sizeof *to);
    rfx_rx **lv = (rfx_rx **)malloc(sizeof *lv * ((size_t)w + 4 * LEVEL_MAX));
    rfx_status st = read && to && lv ? RFX_OK : RFX_ERR_NOMEM;
    int nl = 0, argc[LEVEL_MAX][3], slot[LEVEL_MAX];
    if (st == RFX_OK) {
        for (int k = 0; k < nout; k++)
            columns_read(outs[k], read);
        for (int c = 0; c < w; c++)
            if (read[c]) {
                to[c] = nl;
                lv[nl++] = leaf(m, RFX_RX_COL, RFX_WORD, c);
            }
        for (int j = 0; j < nmk; j++) {
            for (int a = 0; a < mk[j]->nargs; a++) {
                argc[j][a] = nl;
                lv[nl++] = mk[j]->args[a];
            }
            slot[j] = nl;
            lv[nl++] = leaf(m, RFX_RX_CONST, RFX_SYMBOL, 0);
        }
        if (m->nomem)
            st = RFX_ERR_NOMEM;
    }
    if (st == RFX_OK)
        st = rfx_gpu_mapfilter(g, cur, pred, lv, nl, next);
    for (int j = 0; st == RFX_OK && j < nmk; j++)
        st = make_symbols(g, next, mk[j]->env, mk[j]->op, argc[j], mk[j]->nargs, slot[j]);
    if (st == RFX_OK) {   // the outputs over next's columns, each level maker its symbols'
        for (int k = 0; k < nout; k++)
            renumber(outs[k], to);
        for (int j = 0; j < nmk; j++) {
            mk[j]->kind = RFX_RX_COL;
            mk[j]->col = slot[j];
            mk[j]->nargs = 0;
        }
    }
    free(read);
    free(to);
    free(lv);
    return st;
}

extern "C" rfx_status rfx_gpu_mapfilter_making(rfx_gpu *g, const rfx_dev_rows *src, const rfx_rx *pred,
                                               rfx_rx *const *out, int nout, rfx_dev_rows *dst)
{
    rx_nodes m = {NULL, 0, 0, false};
    rfx_rx **outs = (rfx_rx **)take(&m, sizeof *outs * (size_t)(nout > 0 ? nout : 1));
    for (int k = 0; outs && k < nout; k++)
        outs[k] = clone_rx(&m, out[k]);
    rfx_status st = m.nomem ? RFX_ERR_NOMEM : RFX_OK;
    rfx_dev_rows cur;
    rfx_gpu_rows_init(&cur, 0);
    const rfx_dev_rows *from = src;
    for (bool more = true; st == RFX_OK && more;) {
        more = false;
        for (int k = 0; k < nout; k++)
            more |= holds_maker(outs[k]);
        if (!more)
            break;
        rfx_dev_rows next;
        rfx_gpu_rows_init(&next, 0);
        st = make_level(g, &m, from, pred, outs, nout, &next);
        rfx_gpu_rows_free(g, &cur);
        cur = next;
        from = &cur;
        pred = NULL;   // the first level's rows passed it
    }
    if (st == RFX_OK)
        st = rfx_gpu_mapfilter(g, from, pred, outs, nout, dst);
    rfx_gpu_rows_free(g, &cur);
    for (int i = 0; i < m.n; i++)
        free(m.p[i]);
    free(m.p);
    return st;
}
