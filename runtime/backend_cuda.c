/* backend_cuda.c: the CUDA backend: plan variables live in device memory; every data
 * command runs on the device primitives (primitives/cuda_prims.h); facts arrive and
 * outputs leave through host copies. */
#include "backend.h"
#include "comm.h"
#include "cuda_prims.h"
#include "base.h"
#include "jit.h"
#include "lftj.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_DEVICES = 16 };

/* An inserted relation's tuples as a run left them on the device (gs[0]): the plan
 * variable they went to, and the host rows they came from (unchanged until the engine
 * forgets them). */
typedef struct kept_input {
    int var;
    const uint32_t *data;
    size_t n;
    int arity;
    rfx_dev_rows rows;
} kept_input;

struct rfx_device_keep {
    rfx_gpu *gs[MAX_DEVICES];
    int devs[MAX_DEVICES], ndev;
    size_t device_memory;      /* the cap they were opened with */
    bool lent;                 /* a backend holds them now */
    kept_input *inputs;        /* on gs[0]; at most a quarter of its budget */
    int ninputs, capinputs;
    size_t input_bytes;
};

rfx_device_keep *rfx_device_keep_new(void)
{
    return rfx_calloc(1, sizeof(rfx_device_keep));
}

bool rfx_device_keep_warm(const rfx_device_keep *k)
{
    return k && k->ndev > 0;
}

static void drop_inputs(rfx_device_keep *k)
{
    for (int i = 0; i < k->ninputs; i++)
        rfx_gpu_rows_free(k->gs[0], &k->inputs[i].rows);
    k->ninputs = 0;
    k->input_bytes = 0;
}

void rfx_device_keep_forget_inputs(rfx_device_keep *k)
{
    if (k && !k->lent)
        drop_inputs(k);
}

void rfx_device_keep_clear(rfx_device_keep *k)
{
    if (!k || k->lent)
        return;
    rfx_device_keep_forget_inputs(k);
    for (int d = k->ndev - 1; d >= 0; d--)
        rfx_gpu_close(k->gs[d]);
    k->ndev = 0;
}

void rfx_device_keep_free(rfx_device_keep *k)
{
    rfx_device_keep_clear(k);
    if (k)
        free(k->inputs);
    free(k);
}

typedef struct cuda_ctx {
    const rfx_plan *P;
    rfx_gpu *g;                /* the first device: plan variables live here */
    rfx_gpu *gs[MAX_DEVICES];  /* every device a boxed join is spread over (gs[0] == g) */
    int ndev;
    char err[512];             /* a boxed join's failure (else the context's) */
    rfx_dev_rows *vars;        /* every variable's (main) rows */
    struct cu_runs **runs;     /* per variable: the runs beside them, NULL when none */
    bool *hint_failed;         /* per variable: the SORT_UNIQUE writing it found its src not sorted as
                                * the plan's hint said, or in long runs (its loop's later ones skip it) */
    int jit;                   /* generated kernels usable: -1 not yet asked, 0 no, 1 yes */
    size_t jit_min_rows;       /* smaller groups run on the precompiled primitives */
    signed char *loaded;       /* per group id: 1 its kernels are loaded, -1 they failed to compile */
    rfx_jit_job **jobs;        /* per group id: its compile in the background, NULL if none */
    int nloaded;
    rfx_device_keep *keep;     /* the engine's, when gs are borrowed from it */
    uint64_t mark[MAX_DEVICES];   /* allocations of the borrowed contexts before this run */
    int jit_compiled0, jit_cached0;   /* its JIT counts before this run */
    double jit_compile_ms0, jit_cache_ms0;
    const rfx_tuning *tune;    /* the run's (borrowed) */
} cuda_ctx;

/* A relation that grows by small disjoint deltas (full = full u new in a semi-naive loop)
 * keeps them as sorted runs beside its main rows, as the CPU backend does: each run at most
 * a quarter of the one before (the main rows first), so an iteration moves about its
 * delta's rows times a logarithm instead of the whole relation, and a long loop of small
 * deltas is not quadratic. Only that UNION and a DIFFERENCE against the relation read the
 * runs (the DIFFERENCE searches each run by its own threads); any other reader merges them
 * first. A quarter rather than the CPU's half: every row of the DIFFERENCE searches every
 * run, and on the device those searches cost more than the merges that fewer runs take. */
enum { CU_MAX_RUNS = 48 };
typedef struct cu_runs {
    int n;
    size_t rows;               /* in all runs */
    rfx_dev_rows r[CU_MAX_RUNS];
} cu_runs;

static void drop_runs(cuda_ctx *x, int v)
{
    cu_runs *R = x->runs ? x->runs[v] : NULL;
    if (!R)
        return;
    for (int k = 0; k < R->n; k++)
        rfx_gpu_rows_free(x->g, &R->r[k]);
    free(R);
    x->runs[v] = NULL;
}

static size_t runs_rows(const cuda_ctx *x, int v)
{
    return x->runs && x->runs[v] ? x->runs[v]->rows : 0;
}

/* The run before the last, or the main rows where v has one run. */
static rfx_dev_rows *before_last(cuda_ctx *x, int v)
{
    cu_runs *R = x->runs[v];
    return R->n > 1 ? &R->r[R->n - 2] : &x->vars[v];
}

/* Merges v's last run into the one before it. */
static rfx_status merge_last(cuda_ctx *x, int v)
{
    cu_runs *R = x->runs[v];
    rfx_dev_rows *last = &R->r[R->n - 1], *prev = before_last(x, v);
    size_t moved = prev == &x->vars[v] ? last->n : 0;
    rfx_status st = rfx_gpu_union_disjoint(x->g, prev, last, prev);
    if (st == RFX_OK) {
        rfx_gpu_rows_free(x->g, &R->r[--R->n]);
        R->rows -= moved;
    }
    return st;
}

/* Merges v's runs into its main rows, smallest first. */
static rfx_status consolidate(cuda_ctx *x, int v)
{
    rfx_status st = RFX_OK;
    while (x->runs[v] && x->runs[v]->n > 0 && st == RFX_OK)
        st = merge_last(x, v);
    if (st == RFX_OK)
        drop_runs(x, v);
    return st;
}

/* v = v u d, d sharing no tuple with v: d copied as a run while it is small against v,
 * then runs merged while the last is more than a quarter of the one before it. */
static rfx_status union_runs(cuda_ctx *x, int v, const rfx_dev_rows *d)
{
    size_t held = x->vars[v].n + runs_rows(x, v);
    if (d->n == 0)
        return RFX_OK;
    if (x->vars[v].arity == 0 || d->n * 2 > held || (x->runs[v] && x->runs[v]->n == CU_MAX_RUNS)) {
        rfx_status st = consolidate(x, v);
        return st ? st : rfx_gpu_union_disjoint(x->g, &x->vars[v], d, &x->vars[v]);
    }
    if (!x->runs[v] && !(x->runs[v] = rfx_calloc(1, sizeof(cu_runs))))
        return RFX_ERR_NOMEM;
    cu_runs *R = x->runs[v];
    rfx_dev_rows *run = &R->r[R->n];
    rfx_gpu_rows_init(run, d->arity);
    rfx_status st = rfx_gpu_copy(x->g, d, run);
    if (st != RFX_OK)
        return st;
    R->n++;
    R->rows += d->n;
    while (st == RFX_OK && R->n > 0 && R->r[R->n - 1].n * 4 > before_last(x, v)->n)
        st = merge_last(x, v);
    return st;
}

/* c's semi-join or anti-join of src0 against the rows of src1 (runs included: NULL, none). */
static rfx_status semijoin_runs(cuda_ctx *x, const rfx_ra_cmd *c)
{
    const rfx_dev_rows *sets[CU_MAX_RUNS + 1];
    int n = 0, b = c->src[1];
    sets[n++] = &x->vars[b];
    for (int r = 0; x->runs && x->runs[b] && r < x->runs[b]->n; r++)
        sets[n++] = &x->runs[b]->r[r];
    bool keep = c->op == RFX_RA_INTERSECT;
    rfx_dev_rows *a = &x->vars[c->src[0]], *dst = &x->vars[c->dst];
    if (c->probe)
        return rfx_gpu_probe_sets(x->g, a, sets, n, c->nkeys, keep, dst);
    if (n == 1)
        return rfx_gpu_semijoin(x->g, a, sets[0], c->nkeys, keep, dst);
    return rfx_gpu_semijoin_sets(x->g, a, sets, n, c->nkeys, keep, dst);
}

/* Before c runs: the runs of the inputs it reads as rows merged, those of the variable it
 * overwrites dropped (a SWAP exchanges them with the rows). */
static rfx_status settle_runs(cuda_ctx *x, const rfx_ra_cmd *c)
{
    if (c->op == RFX_RA_SWAP) {
        cu_runs *t = x->runs[c->dst];
        x->runs[c->dst] = x->runs[c->src[0]];
        x->runs[c->src[0]] = t;
        return RFX_OK;
    }
    rfx_status st = RFX_OK;
    for (int k = 0; st == RFX_OK && k < rfx_ra_cmd_ninputs(c); k++) {
        int v = rfx_ra_cmd_input(c, k);
        if (v >= 0 && x->runs[v] && !rfx_ra_cmd_reads_runs(c, k))
            st = consolidate(x, v);
    }
    if (st == RFX_OK && c->dst >= 0 && x->runs[c->dst] && !rfx_ra_cmd_reads_runs(c, 0))
        drop_runs(x, c->dst);
    return st;
}

/* The same before a fused group: it reads every input as rows. */
static rfx_status settle_group_runs(cuda_ctx *x, const rfx_fgroup *g)
{
    rfx_status st = RFX_OK;
    for (int k = 0; st == RFX_OK && k < rfx_fgroup_ninputs(g); k++)
        if (x->runs[rfx_fgroup_input(g, k)])
            st = consolidate(x, rfx_fgroup_input(g, k));
    for (int k = 0; st == RFX_OK && k < rfx_fgroup_noutputs(g); k++)
        drop_runs(x, rfx_fgroup_output(g, k));
    return st;
}

static rfx_status cu_open(rfx_backend *be, const rfx_plan *P)
{
    cuda_ctx *c = be->ctx;
    c->P = P;
    /* the thread that runs the commands may not be the one that opened the backend
     * (--backend=auto starts it in the background): its device becomes current here */
    if (rfx_gpu_activate(c->g) != RFX_OK)
        return RFX_ERR_DEVICE;
    c->vars = rfx_calloc((size_t)P->nvars, sizeof(rfx_dev_rows));
    c->runs = rfx_calloc((size_t)P->nvars, sizeof(cu_runs *));
    c->hint_failed = rfx_calloc((size_t)P->nvars, sizeof(bool));
    if (!c->vars || !c->runs || !c->hint_failed)
        return RFX_ERR_NOMEM;
    for (int v = 0; v < P->nvars; v++)
        rfx_gpu_rows_init(&c->vars[v], P->vars[v].arity);
    c->vars[P->unit].n = 1;
    return RFX_OK;
}

/* The freed memory a run leaves in a kept context's pool for the engine's next run: what
 * the driver maps afresh is zeroed and mapped page by page, a cost a query over kept
 * tables pays on every run otherwise; a quarter of the budget at most by default, the
 * bound the kept inputs have, so an idle engine holds no more than half its device. */
static size_t pool_keep(const cuda_ctx *c, rfx_gpu *g)
{
    return c->tune->pool_keep ? (size_t)c->tune->pool_keep : rfx_gpu_budget(g) / 4;
}

static void cu_close(rfx_backend *be)
{
    cuda_ctx *c = be->ctx;
    if (c->vars)
        for (int v = 0; v < c->P->nvars; v++) {
            rfx_gpu_rows_free(c->g, &c->vars[v]);
            drop_runs(c, v);
        }
    free(c->vars);
    free(c->runs);
    free(c->hint_failed);
    /* compiles not needed in the end run on without the run (their cubins cached): a run
       shorter than NVRTC's work does not wait for it */
    for (int i = 0; c->jobs && i < c->nloaded; i++)
        if (c->jobs[i])
            rfx_jit_job_detach(c->jobs[i]);
    free(c->jobs);
    free(c->loaded);
    if (c->keep) {   /* back to the engine, with nothing of this run left allocated but
                      * the inputs it keeps */
        void **inputs = rfx_calloc((size_t)c->keep->ninputs + 1, sizeof *inputs);
        int nkeep = 0;
        for (int i = 0; inputs && i < c->keep->ninputs; i++)
            inputs[nkeep++] = c->keep->inputs[i].rows.data;
        if (!inputs)   /* no list: the kept inputs go too */
            drop_inputs(c->keep);
        for (int d = 0; d < c->ndev; d++) {
            rfx_gpu_reclaim(c->gs[d], c->mark[d], d == 0 ? inputs : NULL, d == 0 ? (size_t)nkeep : 0);
            rfx_gpu_trim(c->gs[d], pool_keep(c, c->gs[d]));
        }
        free(inputs);
        rfx_gpu_activate(c->g);
        c->keep->lent = false;
    } else {
        for (int d = c->ndev - 1; d >= 0; d--)
            rfx_gpu_close(c->gs[d]);
    }
    free(c);
    free(be);
}

static size_t cu_count(rfx_backend *be, int var)
{
    cuda_ctx *c = be->ctx;
    return c->vars[var].n + runs_rows(c, var);
}

static void cu_release(rfx_backend *be, int var)
{
    cuda_ctx *c = be->ctx;
    rfx_gpu_rows_free(c->g, &c->vars[var]);
    drop_runs(c, var);
}

/* The engine's device copy of rows (inserted tuples a run merged into var before), if
 * it keeps one. */
static kept_input *kept_input_of(const cuda_ctx *c, int var, const rfx_rows *rows)
{
    for (int i = 0; c->keep && c->ndev == 1 && i < c->keep->ninputs; i++) {
        kept_input *k = &c->keep->inputs[i];
        if (k->var == var && k->data == rows->data && k->n == rows->n && k->arity == rows->arity)
            return k;
    }
    return NULL;
}

/* var's rows, all from rows, copied for the engine to keep where a quarter of the device
 * budget holds them: the next run copies them back (cu_merge_host_kept). A copy that does
 * not fit is simply not kept. */
static void keep_input(cuda_ctx *c, int var, const rfx_rows *rows)
{
    rfx_device_keep *k = c->keep;
    size_t bytes = c->vars[var].n * (size_t)c->vars[var].arity * 4;
    if (!k || c->ndev != 1 || k->input_bytes + bytes > rfx_gpu_budget(c->g) / 4)
        return;
    if (k->ninputs == k->capinputs) {
        int cap = k->capinputs ? 2 * k->capinputs : 8;
        kept_input *in = realloc(k->inputs, sizeof *in * (size_t)cap);
        if (!in)
            return;
        k->inputs = in;
        k->capinputs = cap;
    }
    kept_input *e = &k->inputs[k->ninputs];
    *e = (kept_input){var, rows->data, rows->n, rows->arity, {0}};
    rfx_gpu_rows_init(&e->rows, c->vars[var].arity);
    if (rfx_gpu_copy(c->g, &c->vars[var], &e->rows) != RFX_OK) {
        rfx_gpu_rows_free(c->g, &e->rows);
        return;
    }
    k->ninputs++;
    k->input_bytes += bytes;
}

static rfx_status cu_merge_host_kept(rfx_backend *be, int var, const rfx_rows *rows)
{
    cuda_ctx *c = be->ctx;
    const bool alone = c->vars[var].n == 0 && !c->runs[var];   /* var will hold these rows alone */
    kept_input *kept = alone ? kept_input_of(c, var, rows) : NULL;
    if (kept)
        return rfx_gpu_copy(c->g, &kept->rows, &c->vars[var]);
    rfx_dev_rows tmp;
    rfx_gpu_rows_init(&tmp, rows->arity);
    rfx_status st = c->runs[var] ? consolidate(c, var) : RFX_OK;
    if (st == RFX_OK)
        st = rfx_gpu_upload(c->g, rows, &tmp);
    if (st == RFX_OK)
        st = rfx_gpu_union(c->g, &c->vars[var], &tmp, &c->vars[var]);
    rfx_gpu_rows_free(c->g, &tmp);
    if (st == RFX_OK && alone)
        keep_input(c, var, rows);
    return st;
}

static rfx_status cu_merge_host(rfx_backend *be, int var, rfx_rows *rows)
{
    rfx_status st = cu_merge_host_kept(be, var, rows);
    rfx_rows_free(rows);
    return st;
}

static rfx_status cu_host_view(rfx_backend *be, int var, rfx_rows *scratch, const rfx_rows **view)
{
    cuda_ctx *c = be->ctx;
    rfx_status st = c->runs[var] ? consolidate(c, var) : RFX_OK;
    if (st == RFX_OK)
        st = rfx_gpu_download(c->g, &c->vars[var], scratch);
    *view = scratch;
    return st;
}

/* The staging buffer through which a box's TrieArray slices reach the device: at most a
 * sixteenth of the budget (the slices keep the rest). */
#define BOX_STAGE_MAX ((size_t)24 << 20)

/* Before the boxes: the two-column sources made TrieArrays (the form their slices are
 * copied in) and those, or the sources' rows, pinned (task 0), while the host scans the
 * sources for the bounds that leave out boxes without bindings (task 1); each takes
 * ~40-60 ms for 2 GB. trie[s] is source s's TrieArray (one per relation), or NULL. */
typedef struct box_prep {
    const rfx_gpu *g;
    int nsrc, nthreads;
    const rfx_rows *const *hs;
    bool by_trie;
    rfx_lftj_trie *tries;   /* nsrc, the first source of each relation's */
    rfx_lftj_trie **trie;
    const rfx_rows *pins[64 * 3];
    int npins;
    bool *pinned;
    rfx_lftj_boxes *b;
    const rfx_lftj_src *srcs;
    const rfx_tuning *tune;
    rfx_status st;
} box_prep;

static void box_prep_task(int i, void *arg)
{
    box_prep *p = arg;
    if (i == 1) {
        p->st = rfx_lftj_boxes_bound(p->b, p->srcs, p->nsrc, p->nthreads, p->tune);
        return;
    }
    p->npins = 0;
    for (int s = 0; s < p->nsrc; s++) {
        p->trie[s] = NULL;
        for (int q = 0; q < s && p->by_trie; q++)
            if (p->hs[q]->data == p->hs[s]->data)
                p->trie[s] = p->trie[q];
        if (!p->trie[s] && p->by_trie && p->hs[s]->arity == 2 && p->hs[s]->n &&
            rfx_lftj_trie_build(p->hs[s], p->nthreads, &p->tries[s]) == RFX_OK && p->tries[s].val1.data) {
            p->trie[s] = &p->tries[s];
            p->pins[p->npins++] = &p->tries[s].val0;
            p->pins[p->npins++] = &p->tries[s].ptr0;
            p->pins[p->npins++] = &p->tries[s].val1;
        }
        if (!p->trie[s])   /* else no memory for it or not two columns: the rows are copied */
            p->pins[p->npins++] = p->hs[s];
    }
    rfx_gpu_pin_sources(p->g, p->pins, p->npins, p->pinned);
}

/* Boxes of every other outer interval in reverse (boxes of one outer interval are a run of
 * equal rows of source s0, which the outer variable leads): an interval's first box then
 * reads the inner slices its predecessor's last box read, and the device keeps them
 * (gpu_boxed.cuh). Boxes hold their results by position and are put in order after, so
 * the order they run in is free. */
static void snake_order(size_t *lo, size_t *hi, size_t n, int nsrc, int s0)
{
    size_t run = 0;
    for (size_t a = 0; a < n; run++) {
        size_t b = a + 1;
        while (b < n && lo[b * nsrc + s0] == lo[a * nsrc + s0] && hi[b * nsrc + s0] == hi[a * nsrc + s0])
            b++;
        for (size_t i = a, j = b - 1; run % 2 && i < j; i++, j--)
            for (int s = 0; s < nsrc; s++) {
                size_t t = lo[i * nsrc + s];
                lo[i * nsrc + s] = lo[j * nsrc + s];
                lo[j * nsrc + s] = t;
                t = hi[i * nsrc + s];
                hi[i * nsrc + s] = hi[j * nsrc + s];
                hi[j * nsrc + s] = t;
            }
        a = b;
    }
}

/* Each box's roots of each source sent as a TrieArray (trie[s] non-NULL) in bt, and the
 * TrieArrays' parts in ht[s] (bt->tries; NULLs for sources sent as rows); *any says
 * whether there is one. */
static rfx_status box_trie_roots(cuda_ctx *x, const rfx_rows *const *hs, int nsrc, rfx_lftj_trie *const *trie, size_t n,
                                 const size_t *lo, const size_t *hi, rfx_gpu_host_trie *ht, rfx_gpu_box_tries *bt,
                                 bool *any)
{
    *any = false;
    for (int s = 0; s < nsrc; s++) {
        ht[s] = (rfx_gpu_host_trie){NULL, NULL, NULL};
        if (trie[s])
            ht[s] = (rfx_gpu_host_trie){trie[s]->val0.data, trie[s]->ptr0.data, trie[s]->val1.data};
        *any |= trie[s] != NULL;
    }
    if (!*any)
        return RFX_OK;
    size_t *rlo = rfx_malloc(sizeof(size_t) * (n ? n : 1) * (size_t)nsrc);
    size_t *rhi = rfx_malloc(sizeof(size_t) * (n ? n : 1) * (size_t)nsrc);
    bt->rlo = rlo;
    bt->rhi = rhi;
    if (!rlo || !rhi)
        return RFX_ERR_NOMEM;
    for (int s = 0; s < nsrc; s++)
        for (size_t i = 0; trie[s] && i < n; i++) {
            size_t k = i * (size_t)nsrc + s;
            rlo[k] = rhi[k] = 0;
            if (hi[k] > lo[k] && !rfx_lftj_trie_roots(trie[s], hs[s], lo[k], hi[k], &rlo[k], &rhi[k])) {
                snprintf(x->err, sizeof x->err, "boxed join: a slice of source %d splits a value's rows", s);
                return RFX_ERR_INTERNAL;
            }
        }
    return RFX_OK;
}

/* The join box by box over host sources within the budget, the boxes shared out among
 * the devices. */
static rfx_status cu_lftj_boxes(rfx_backend *be, const rfx_lftj_src *srcs, int nsrc, int nvars, size_t budget,
                                int nthreads, rfx_rows *dst, uint64_t *count, size_t *nboxes, size_t *copied)
{
    cuda_ctx *x = be->ctx;
    if (nsrc > 64)
        return RFX_ERR_LIMIT;
    double t0 = rfx_seconds();
    x->err[0] = 0;
    /* tuning box_tries: two-column sources travel as TrieArrays, half the bytes of their rows.
     * Not the default: the box joins, not the copies, bound the boxed counts measured, and
     * building the TrieArray and its staging buffer (a sixteenth of the budget: more boxes)
     * cost more than the copies save (docs/PERFORMANCE.md). */
    bool by_trie = x->tune->box_tries, two_columns = false;
    for (int s = 0; s < nsrc; s++)
        two_columns |= srcs[s].rows->arity == 2;
    size_t stage = by_trie && two_columns ? (budget / 16 < BOX_STAGE_MAX ? budget / 16 : BOX_STAGE_MAX) : 0;
    budget -= stage;
    rfx_lftj_boxes b;
    rfx_status st = rfx_lftj_partition(srcs, nsrc, nvars, budget, x->tune, &b);
    double t1 = rfx_seconds();
    if (st != RFX_OK)
        return st;
    const rfx_rows *hs[64];
    int colvar[64 * 8], ncol = 0;
    for (int s = 0; s < nsrc; s++) {
        hs[s] = srcs[s].rows;
        for (int k = 0; k < srcs[s].rows->arity && ncol < 64 * 8; k++)
            colvar[ncol++] = srcs[s].colvar[k];
    }
    /* each box's row range of each source; boxes without bindings (rfx_lftj_box_slices) are left out */
    size_t *lo = rfx_malloc(sizeof(size_t) * b.nboxes * (size_t)nsrc), *hi = rfx_malloc(sizeof(size_t) * b.nboxes * (size_t)nsrc);
    rfx_rows *parts = count ? NULL : rfx_calloc(b.nboxes ? b.nboxes : 1, sizeof(rfx_rows));
    uint64_t *counts = count ? rfx_calloc(b.nboxes ? b.nboxes : 1, sizeof(uint64_t)) : NULL;
    size_t n = 0;
    if (!lo || !hi || (!parts && !counts))
        st = RFX_ERR_NOMEM;
    bool pinned[64 * 3] = {false};
    rfx_lftj_trie tries[64];
    rfx_lftj_trie *trie[64] = {NULL};
    memset(tries, 0, sizeof tries);
    box_prep prep = {.g = x->gs[0], .nsrc = nsrc, .nthreads = nthreads, .hs = hs, .by_trie = stage > 0,
                     .tries = tries, .trie = trie, .pinned = pinned, .b = &b, .srcs = srcs, .tune = x->tune,
                     .st = RFX_OK};
    if (st == RFX_OK) {
        rfx_parallel_for(2, 2, box_prep_task, &prep);
        st = prep.st;
    }
    for (size_t box = 0; st == RFX_OK && box < b.nboxes; box++) {
        rfx_rows views[64];
        bool empty = !rfx_lftj_box_slices(&b, box, srcs, nsrc, views);
        for (int s = 0; s < nsrc; s++) {
            lo[n * nsrc + s] = views[s].n ? (size_t)(views[s].data - hs[s]->data) / (size_t)hs[s]->arity : 0;
            hi[n * nsrc + s] = lo[n * nsrc + s] + views[s].n;
        }
        n += !empty;
    }
    int s0 = 0;
    for (int s = 1; s < nsrc; s++)
        s0 = srcs[s].colvar[0] < srcs[s0].colvar[0] ? s : s0;
    if (st == RFX_OK && x->tune->box_snake)
        snake_order(lo, hi, n, nsrc, s0);
    rfx_gpu_host_trie ht[64];
    rfx_gpu_box_tries bt = {ht, NULL, NULL, stage};
    bool any_trie = false;
    if (st == RFX_OK)
        st = box_trie_roots(x, hs, nsrc, trie, n, lo, hi, ht, &bt, &any_trie);
    for (size_t i = 0; parts && i < n; i++)
        rfx_rows_init(&parts[i], nvars);
    if (nboxes)
        *nboxes = n;
    if (st == RFX_OK && be->span) {
        be->span(be->span_ctx, "boxes: partition", 0, 0, n, t0, t1);
        be->span(be->span_ctx, "boxes: bounds, TrieArrays and pinning", 0, 0, n, t1, rfx_seconds());
    }
    if (st == RFX_OK)
        st = rfx_gpu_lftj_boxes(x->gs, x->ndev, hs, colvar, nsrc, nvars, n, lo, hi, any_trie ? &bt : NULL, parts, counts,
                                be->span, be->span_ctx, copied, x->err, sizeof x->err);
    rfx_gpu_unpin_sources(prep.pins, prep.npins, pinned);
    for (int s = 0; s < nsrc; s++)
        rfx_lftj_trie_free(&tries[s]);
    free((void *)bt.rlo);
    free((void *)bt.rhi);
    uint64_t total = 0;
    for (size_t i = 0; st == RFX_OK && counts && i < n; i++)
        total += counts[i];
    if (count && st == RFX_OK)
        *count = total;
    if (parts && st == RFX_OK)
        st = rfx_rows_concat(parts, n, dst, nthreads);
    if (parts && st == RFX_OK && !rfx_lftj_boxes_in_order(&b))
        st = rfx_cpu_sort(dst, nthreads);
    for (size_t i = 0; parts && i < n; i++)
        rfx_rows_free(&parts[i]);
    free(parts);
    free(counts);
    free(lo);
    free(hi);
    rfx_lftj_boxes_free(&b);
    return st;
}

static rfx_status reclaim_on_failure(cuda_ctx *x, uint64_t mark, rfx_status st);

/* Whether a count goes by parts of its vertices (below): the plan's schedule for it, one
 * device, and the tuning's pairs not 0 (0: the general boxes, for comparisons). */
static bool by_parts(const cuda_ctx *x, rfx_lftj_parts parts)
{
    return parts == RFX_LFTJ_PAIRS && x->ndev == 1 && x->tune->pairs;
}

/* The count by parts sends its chunks as slices of the relation's TrieArray, ~half the
 * bytes of its rows: kept from when the rows land, it costs the join nothing. */
static bool cu_reads_tries(rfx_backend *be, const rfx_lftj_src *srcs, int nsrc, rfx_lftj_parts parts)
{
    (void)srcs;
    (void)nsrc;
    const cuda_ctx *x = be->ctx;
    return x->tune->pairs_host_trie != 0 && by_parts(x, parts);
}

/* A triangle count over one host relation on one device: by parts of its vertices
 * (rfx_gpu_triangles_parts), whose boxes join at about the in-core rate, where a plan
 * fits the budget; *done false leaves it to the boxes of the general join. */
static rfx_status cu_triangles_by_parts(rfx_backend *be, const rfx_lftj_src *srcs, rfx_lftj_parts parts,
                                        uint64_t *count, size_t *nboxes, size_t *copied, bool *done)
{
    cuda_ctx *x = be->ctx;
    *done = false;
    if (!by_parts(x, parts))
        return RFX_OK;
    double t0 = rfx_seconds();
    size_t boxes = 0, nparts = 0, bytes = 0;
    rfx_status st = rfx_gpu_triangles_parts(x->g, srcs[0].rows, srcs[0].trie, count, &boxes, &nparts, &bytes, be->span,
                                            be->span_ctx);
    if (copied)
        *copied = bytes;
    if (be->span)
        be->span(be->span_ctx, st == RFX_OK ? "triangles by parts" : "triangles by parts (failed)", 0, 0, nparts, t0,
                 rfx_seconds());
    if (st == RFX_ERR_NOMEM) {   /* no plan fits, or a box ran out: the general boxes (the count left nothing) */
        x->err[0] = 0;
        return RFX_OK;
    }
    if (st != RFX_OK)
        snprintf(x->err, sizeof x->err, "triangles by parts: %s", rfx_gpu_error(x->g));
    *done = st == RFX_OK;
    if (nboxes && *done)
        *nboxes = boxes;
    return st;
}

/* A join by induced parts (the plan's RFX_LFTJ_INDUCED) on one device that reads the
 * relation in host memory and makes each part's subgraph itself (rfx_gpu_lftj_induced):
 * RFX_ERR_LIMIT where it cannot, where the tuning says no, or where the parts would be
 * too many (rfx_lftj_induced_too_many_parts): the caller's parts then. */
static rfx_status cu_lftj_induced(rfx_backend *be, const rfx_lftj_src *srcs, int nsrc, int nvars, size_t budget,
                                  int nthreads, rfx_rows *dst, uint64_t *count, size_t *nparts, size_t *copied)
{
    cuda_ctx *x = be->ctx;
    const size_t share = (size_t)((double)budget * x->tune->induced_share);
    if (x->ndev != 1 || !x->tune->induced_device || rfx_lftj_induced_too_many_parts(srcs, share))
        return RFX_ERR_LIMIT;
    double t0 = rfx_seconds();
    size_t parts = 0, bytes = 0;
    const size_t had = dst ? dst->n : 0;
    uint64_t mark = rfx_gpu_alloc_mark(x->g);
    rfx_status st = rfx_gpu_lftj_induced(x->g, srcs, nsrc, nvars, share, nthreads, dst, count, &parts, &bytes,
                                         be->span, be->span_ctx);
    if (be->span)
        be->span(be->span_ctx, st == RFX_OK ? "induced parts" : "induced parts (failed)", 0, 0, parts, t0,
                 rfx_seconds());
    st = reclaim_on_failure(x, mark, st);
    if (st == RFX_ERR_NOMEM || st == RFX_ERR_LIMIT) {   /* nothing kept: the caller's parts or boxes */
        x->err[0] = 0;
        if (dst)
            dst->n = had;
        return st;
    }
    if (st != RFX_OK)
        snprintf(x->err, sizeof x->err, "induced parts: %s", rfx_gpu_error(x->g));
    if (nparts)
        *nparts = parts;
    if (copied)
        *copied = bytes;
    return st;
}

static rfx_status cu_lftj_host(rfx_backend *be, const rfx_lftj_src *srcs, int nsrc, int nvars, rfx_lftj_parts parts,
                               size_t budget, int nthreads, rfx_rows *dst, uint64_t *count, size_t *nboxes,
                               size_t *copied)
{
    cuda_ctx *x = be->ctx;
    if (parts == RFX_LFTJ_INDUCED)
        return cu_lftj_induced(be, srcs, nsrc, nvars, budget, nthreads, dst, count, nboxes, copied);
    uint64_t mark = rfx_gpu_alloc_mark(x->g);
    bool done = false;
    rfx_status st = count ? cu_triangles_by_parts(be, srcs, parts, count, nboxes, copied, &done) : RFX_OK;
    if (st != RFX_OK || done)
        return reclaim_on_failure(x, mark, st);
    return reclaim_on_failure(x, mark, cu_lftj_boxes(be, srcs, nsrc, nvars, budget, nthreads, dst, count, nboxes, copied));
}

static bool cu_pin_host(rfx_backend *be, void *data, size_t bytes)
{
    cuda_ctx *x = be->ctx;
    return rfx_gpu_activate(x->g) == RFX_OK && rfx_gpu_host_register(data, bytes);
}

static void cu_unpin_host(rfx_backend *be, void *data)
{
    (void)be;
    rfx_gpu_host_unregister(data);
}

/* On several devices the sources are copied to each and the outer variable's intervals
 * shared out (16 a device, from a queue, for balance). */
static rfx_status cu_lftj_devices(rfx_backend *be, const rfx_ra_cmd *c)
{
    cuda_ctx *x = be->ctx;
    const rfx_dev_rows *srcs[64];
    for (int s = 0; s < c->nvars; s++)
        srcs[s] = &x->vars[c->vars[s]];
    uint64_t n = 0;
    rfx_rows out;
    rfx_rows_init(&out, c->nkeys);
    x->err[0] = 0;
    uint64_t mark = rfx_gpu_alloc_mark(x->g);
    rfx_status st = rfx_gpu_lftj_spread(x->gs, x->ndev, srcs, c->colvar, c->nvars, c->nkeys, 16 * x->ndev,
                                        c->count_only ? NULL : &out, c->count_only ? &n : NULL, be->span,
                                        be->span_ctx, NULL, x->err, sizeof x->err);
    st = reclaim_on_failure(x, mark, st);
    if (st == RFX_OK && c->count_only) {
        rfx_gpu_rows_free(x->g, &x->vars[c->dst]);
        x->vars[c->dst].n = (size_t)n;
    } else if (st == RFX_OK)
        st = rfx_gpu_upload(x->g, &out, &x->vars[c->dst]);
    rfx_rows_free(&out);
    return st;
}

/* Counts a join the plan lets swap its first two variables (lftj_swap: the first three a
 * triangle e(0,1), e(0,2), e(1,2) over one relation) in order 1, 0, ... (e reversed as the
 * source of e(0,1)) when that probes fewer values at the third variable than the plan's
 * order: the planner has no degrees, the device measures both sums in one pass over e
 * (rfx_gpu_triangle_order_costs). *done: counted here. */
static rfx_status cu_lftj_swapped(cuda_ctx *x, const rfx_ra_cmd *c, uint64_t *n, bool *done)
{
    *done = false;
    int s01 = -1, colvar[128], nsrc = c->nvars;
    for (int s = 0, off = 0; s < nsrc; s++) {   /* variables 0 and 1 trade places */
        int a = x->vars[c->vars[s]].arity;
        if (off + a > (int)(sizeof colvar / sizeof colvar[0]))
            return RFX_OK;
        for (int k = 0; k < a; k++) {
            int v = c->colvar[off + k];
            colvar[off + k] = v == 0 ? 1 : v == 1 ? 0 : v;
        }
        if (a == 2 && c->colvar[off] == 0 && c->colvar[off + 1] == 1) {
            s01 = s;
            colvar[off] = 0;   /* reversed: e(1,0) read as its columns come */
            colvar[off + 1] = 1;
        }
        off += a;
    }
    if (s01 < 0)
        return RFX_OK;
    const rfx_dev_rows *e = &x->vars[c->vars[s01]];
    double plan = 0, swapped = 0;
    uint64_t mark = rfx_gpu_alloc_mark(x->g);
    rfx_status st = rfx_gpu_triangle_order_costs(x->g, e, &plan, &swapped);
    if (st == RFX_ERR_NOMEM) {   /* no estimate: the plan's order */
        reclaim_on_failure(x, mark, st);
        return RFX_OK;
    }
    if (st != RFX_OK || !(swapped < 0.8 * plan))   /* the reversal costs a sort: it must pay */
        return st;
    rfx_dev_rows er;
    rfx_gpu_rows_init(&er, 2);
    st = rfx_gpu_reversed(x->g, e, &er);
    const rfx_dev_rows *srcs[64];
    for (int s = 0; s < nsrc; s++)
        srcs[s] = s == s01 ? &er : &x->vars[c->vars[s]];
    if (st == RFX_OK)
        st = rfx_gpu_lftj(x->g, srcs, colvar, nsrc, c->nkeys, NULL, n);
    rfx_gpu_rows_free(x->g, &er);
    if (st == RFX_ERR_NOMEM) {   /* the reversed copy did not fit: the plan's order then */
        reclaim_on_failure(x, mark, st);
        return RFX_OK;
    }
    *done = st == RFX_OK;
    return st;
}

static rfx_status cu_lftj(rfx_backend *be, const rfx_ra_cmd *c)
{
    cuda_ctx *x = be->ctx;
    if (c->nvars > 64)
        return RFX_ERR_LIMIT;
    if (x->ndev > 1)
        return cu_lftj_devices(be, c);
    const rfx_dev_rows *srcs[64];
    for (int s = 0; s < c->nvars; s++)
        srcs[s] = &x->vars[c->vars[s]];
    if (!c->count_only)
        return rfx_gpu_lftj(x->g, srcs, c->colvar, c->nvars, c->nkeys, &x->vars[c->dst], NULL);
    uint64_t n = 0;
    bool done = false;
    double t0 = rfx_seconds();
    rfx_status st = c->lftj_swap ? cu_lftj_swapped(x, c, &n, &done) : RFX_OK;
    if (done && be->span)   /* a trace shows which order the degrees chose */
        be->span(be->span_ctx, "LFTJ with its first two variables swapped (measured)", 0, 0, 0, t0, rfx_seconds());
    if (st == RFX_OK && !done)
        st = rfx_gpu_lftj(x->g, srcs, c->colvar, c->nvars, c->nkeys, NULL, &n);
    rfx_gpu_rows_free(x->g, &x->vars[c->dst]);   /* a count-only relation: a size, no rows */
    x->vars[c->dst].n = (size_t)n;
    return st;
}

static rfx_status cu_exec_one(rfx_backend *be, const rfx_ra_cmd *c)
{
    cuda_ctx *x = be->ctx;
    rfx_dev_rows *V = x->vars;
    rfx_gpu *g = x->g;
    if (c->host_only) {   /* the out-of-core layer above runs these on the host */
        snprintf(x->err, sizeof x->err, "%s with a functor reached the device", rfx_ra_op_name(c->op));
        return RFX_ERR_INTERNAL;
    }
    rfx_status st = settle_runs(x, c);
    if (st != RFX_OK)
        return st;
    if (rfx_ra_cmd_reads_runs(c, 0))
        return union_runs(x, c->dst, &V[c->src[1]]);
    if ((c->op == RFX_RA_DIFFERENCE || c->op == RFX_RA_INTERSECT) && x->runs[c->src[1]] && rfx_ra_cmd_reads_runs(c, 1))
        return semijoin_runs(x, c);
    switch (c->op) {
    case RFX_RA_SELECT: case RFX_RA_PROJECT: case RFX_RA_MAP: case RFX_RA_MAPFILTER:
        if (c->device_makes)
            return rfx_gpu_mapfilter_making(g, &V[c->src[0]], c->pred, c->out, c->nout, &V[c->dst]);
        return rfx_gpu_mapfilter(g, &V[c->src[0]], c->pred, c->out, c->nout, &V[c->dst]);
    case RFX_RA_JOIN: case RFX_RA_MAPJOIN: case RFX_RA_PRODUCT:
        if (c->range)
            return rfx_gpu_range_join(g, &V[c->src[0]], &V[c->src[1]], c->nkeys, c->pred, c->out, c->nout, c->probe,
                                      &V[c->dst]);
        return (c->probe ? rfx_gpu_probe_join : rfx_gpu_join)(g, &V[c->src[0]], &V[c->src[1]], c->nkeys, c->pred, c->out,
                                                              c->nout, &V[c->dst]);
    case RFX_RA_UNION:
        if (c->disjoint)
            return rfx_gpu_union_disjoint(g, &V[c->src[0]], &V[c->src[1]], &V[c->dst]);
        return rfx_gpu_union(g, &V[c->src[0]], &V[c->src[1]], &V[c->dst]);
    case RFX_RA_INTERSECT:
    case RFX_RA_DIFFERENCE:
        return semijoin_runs(x, c);
    case RFX_RA_SORT:
        if (c->nkeys > 0)
            return rfx_gpu_sort_leading_into(g, &V[c->src[0]], c->nkeys, &V[c->dst]);
        return rfx_gpu_sort_into(g, &V[c->src[0]], &V[c->dst]);
    case RFX_RA_UNIQUE:
        return rfx_gpu_unique_into(g, &V[c->src[0]], &V[c->dst]);
    case RFX_RA_SORT_UNIQUE:
    {
        bool held = true;
        rfx_status st = rfx_gpu_sort_unique_into(g, &V[c->src[0]], x->hint_failed[c->dst] ? 0 : c->nkeys, &held,
                                                 &V[c->dst]);
        x->hint_failed[c->dst] |= !held;
        return st;
    }
    case RFX_RA_COPY:
        return rfx_gpu_copy(g, &V[c->src[0]], &V[c->dst]);
    case RFX_RA_AGGREGATE:
        return rfx_gpu_aggregate(g, &V[c->src[0]], &V[c->src[1]], c->nkeys, c->agg, c->agg_col, c->agg_prim, &V[c->dst]);
    case RFX_RA_LFTJ:
        return cu_lftj(be, c);
    case RFX_RA_SWAP: {
        rfx_dev_rows t = V[c->dst];
        V[c->dst] = V[c->src[0]];
        V[c->src[0]] = t;
        return RFX_OK;
    }
    case RFX_RA_CLEAR:
        V[c->dst].n = 0;
        return RFX_OK;
    default:
        return RFX_ERR_INTERNAL;
    }
}

static void kernel_name(const rfx_fgroup *g, char *kernel, size_t cap)
{
    snprintf(kernel, cap, g->kind == RFX_FG_JOIN ? "%s_count" : "%s", g->name);
}

/* The compiles of every other group of g's weave that may run generated kernels and whose
 * are neither in the context nor already being made, started together (each a thread;
 * one a source): a run that needs one group's kernels is likely to need the others', and
 * NVRTC, which does much of each compile under a lock of its own, is kept busy from the
 * first need on rather than from each group's. A source in the disk cache is only read. */
static void start_other_compiles(cuda_ctx *x, const rfx_fgroup *g)
{
    const struct rfx_weave *w = g->weave;
    for (int i = 0; w && i < w->ngroups && i < x->nloaded; i++) {
        const rfx_fgroup *h = &w->groups[i];
        if (h == g || h->gpu_by_members || x->loaded[i] || x->jobs[i] || rfx_gpu_jit_has(x->g, h->source_hash))
            continue;
        bool twin = h->source_hash == g->source_hash;
        for (int k = 0; k < i && !twin; k++)
            twin = x->jobs[k] && w->groups[k].source_hash == h->source_hash;
        if (twin)
            continue;
        char kernel[40];
        kernel_name(h, kernel, sizeof kernel);
        x->jobs[i] = rfx_jit_start(h->source, kernel, rfx_gpu_arch(x->g));
    }
}

/* A group's kernels not yet in the context nor in the disk cache are compiled in a thread
 * (tuning jit_background) while the run goes on with the group's members: a first run
 * does not wait for NVRTC. The first such compile starts the other groups' too. *busy
 * while g's compile runs; else RFX_OK once the library is loaded (or is to be compiled
 * here and now), RFX_ERR_DEVICE where the compile failed. */
static rfx_status compiled_in_background(cuda_ctx *x, const rfx_fgroup *g, const char *kernel, bool *busy)
{
    rfx_jit_job **j = &x->jobs[g->id];
    *busy = false;
    if (!*j) {
        void *cubin = NULL;
        size_t size = 0;
        double t0 = rfx_seconds();
        if (!x->tune->jit_background || rfx_gpu_jit_has(x->g, g->source_hash))
            return RFX_OK;
        if (rfx_jit_cached(g->source, rfx_gpu_arch(x->g), &cubin, &size))
            return rfx_gpu_jit_add(x->g, g->source_hash, cubin, false, (rfx_seconds() - t0) * 1e3);
        *j = rfx_jit_start(g->source, kernel, rfx_gpu_arch(x->g));
        *busy = *j != NULL;
        start_other_compiles(x, g);
        return RFX_OK;
    }
    if (!rfx_jit_job_done(*j)) {
        *busy = true;
        return RFX_OK;
    }
    void *cubin = NULL;
    size_t size = 0;
    bool compiled = false;
    double ms = 0;
    bool ok = rfx_jit_job_finish(*j, &cubin, &size, &compiled, &ms, NULL, 0);
    *j = NULL;
    return ok ? rfx_gpu_jit_add(x->g, g->source_hash, cubin, compiled, ms) : RFX_ERR_DEVICE;
}

static rfx_status cu_exec_group_once(rfx_backend *be, const rfx_fgroup *g)
{
    cuda_ctx *x = be->ctx;
    rfx_dev_rows *V = x->vars;
    if (x->jit < 0) {
        char why[256];
        x->jit = rfx_gpu_jit_ready(x->g, why, sizeof why);
        x->jit_min_rows = x->tune->jit_min_rows;
    }
    rfx_status st = settle_group_runs(x, g);
    if (st != RFX_OK)
        return st;
    if (g->gpu_by_members)
        return rfx_backend_run_members(be, x->P, g, cu_exec_one);
    size_t rows = 0;
    for (int k = 0; k < rfx_fgroup_ninputs(g); k++)
        rows += V[rfx_fgroup_input(g, k)].n;
    if (!x->jit || rows < x->jit_min_rows)
        return rfx_backend_run_members(be, x->P, g, cu_exec_one);
    if (g->id >= x->nloaded) {   /* room for every group of the weave */
        int n = g->weave && g->weave->ngroups > g->id ? g->weave->ngroups : g->id + 16;
        signed char *l = realloc(x->loaded, (size_t)n);
        if (l)
            x->loaded = l;
        rfx_jit_job **j = realloc(x->jobs, sizeof *j * (size_t)n);
        if (j)
            x->jobs = j;
        if (!l || !j)
            return RFX_ERR_NOMEM;
        memset(l + x->nloaded, 0, (size_t)(n - x->nloaded));
        memset(j + x->nloaded, 0, sizeof *j * (size_t)(n - x->nloaded));
        x->nloaded = n;
    }
    if (!x->loaded[g->id]) {
        /* a source NVRTC cannot compile (an expression too deep, say) runs unfused */
        char kernel[40];
        kernel_name(g, kernel, sizeof kernel);
        bool busy;
        rfx_status st = compiled_in_background(x, g, kernel, &busy);
        if (busy)
            return rfx_backend_run_members(be, x->P, g, cu_exec_one);   /* NVRTC still at work: this time unfused */
        if (st == RFX_OK)
            st = rfx_gpu_jit_load(x->g, g->source, g->source_hash, kernel);
        if (st == RFX_ERR_NOMEM)
            return st;
        x->loaded[g->id] = st == RFX_OK ? 1 : -1;
    }
    if (x->loaded[g->id] < 0)
        return rfx_backend_run_members(be, x->P, g, cu_exec_one);
    bool pays = true;
    for (int s = 1; g->probe && s < g->nsrc; s++)
        pays &= rfx_gpu_probe_pays(x->g, V[g->srcs[0]].n, &V[g->srcs[s]]);
    if (pays)
        return rfx_cuda_run_group(x->g, g, V);
    /* a probe whose searches cost more than a sort: its first source sorted on the key
     * columns where they lie (in their order), the generated kernel then galloping as over
     * rows in key order; else the members, whose JOIN sorts */
    enum { MAX_SORTED_KEYS = 16 };
    bool sortable = V[g->srcs[0]].n <= UINT32_MAX && g->nkeys <= MAX_SORTED_KEYS;
    for (int k = 1; sortable && g->keycol && k < g->nkeys; k++)
        sortable = g->keycol[k] > g->keycol[k - 1];
    for (int s = 1; s < g->nsrc; s++)   /* a source searched too keeps its order */
        sortable &= g->srcs[s] != g->srcs[0];
    if (!sortable)
        return rfx_backend_run_members(be, x->P, g, cu_exec_one);
    int cols[MAX_SORTED_KEYS];
    for (int k = 0; k < g->nkeys; k++)
        cols[k] = g->keycol ? g->keycol[k] : k;
    rfx_dev_rows sorted, *a = &V[g->srcs[0]], held = *a;
    rfx_gpu_rows_init(&sorted, a->arity);
    st = rfx_gpu_sort_by_columns_into(x->g, a, cols, g->nkeys, &sorted);
    if (st == RFX_OK) {
        *a = sorted;   /* in the group's first source's place while it runs */
        st = rfx_cuda_run_group(x->g, g, V);
        *a = held;
    }
    rfx_gpu_rows_free(x->g, &sorted);
    return st;
}

/* A command that ran out of device memory frees what it left allocated (the operators
 * free on success, not on every failure path), so the out-of-core layer can go on. */
static rfx_status reclaim_on_failure(cuda_ctx *x, uint64_t mark, rfx_status st)
{
    if (st != RFX_ERR_NOMEM)
        return st;
    size_t n = 0, cap = (size_t)x->P->nvars;
    for (int v = 0; v < x->P->nvars; v++)
        cap += x->runs[v] ? (size_t)x->runs[v]->n : 0;
    void **keep = rfx_malloc(sizeof(void *) * cap);
    if (!keep)
        return st;
    for (int v = 0; v < x->P->nvars; v++) {
        if (x->vars[v].data)
            keep[n++] = x->vars[v].data;
        for (int r = 0; x->runs[v] && r < x->runs[v]->n; r++)
            if (x->runs[v]->r[r].data)
                keep[n++] = x->runs[v]->r[r].data;
    }
    rfx_gpu_reclaim(x->g, mark, keep, n);
    free(keep);
    return st;
}

static rfx_status cu_exec(rfx_backend *be, const rfx_ra_cmd *c)
{
    cuda_ctx *x = be->ctx;
    x->err[0] = 0;
    uint64_t mark = rfx_gpu_alloc_mark(x->g);
    return reclaim_on_failure(x, mark, cu_exec_one(be, c));
}

static rfx_status cu_exec_group(rfx_backend *be, const rfx_fgroup *g)
{
    cuda_ctx *x = be->ctx;
    x->err[0] = 0;
    uint64_t mark = rfx_gpu_alloc_mark(x->g);
    return reclaim_on_failure(x, mark, cu_exec_group_once(be, g));
}

rfx_status rfx_cuda_run_group(rfx_gpu *gpu, const rfx_fgroup *g, rfx_dev_rows *V)
{
    if (g->kind == RFX_FG_FILTER) {
        int nout[RFX_WEAVE_MAX_OUTS];
        rfx_dev_rows *dsts[RFX_WEAVE_MAX_OUTS];
        for (int k = 0; k < g->nouts; k++) {
            nout[k] = g->outs[k].nout;
            dsts[k] = &V[g->outs[k].dst];
        }
        return rfx_gpu_fused_filter(gpu, g->name, g->source, g->source_hash, g->divides,
                                    rfx_weave_items(V[g->src].arity), &V[g->src], g->nouts, nout, dsts);
    }
    const rfx_dev_rows *srcs[RFX_WEAVE_MAX_SRCS];
    for (int s = 0; s < g->nsrc; s++)
        srcs[s] = &V[g->srcs[s]];
    return rfx_gpu_fused_join(gpu, g->name, g->source, g->source_hash, srcs, g->nsrc, g->residual != NULL, g->nout,
                              &V[g->dst]);
}

static const char *cu_last_error(rfx_backend *be)
{
    cuda_ctx *x = be->ctx;
    return x->err[0] ? x->err : rfx_gpu_error(x->g);
}

static rfx_status cu_load_host(rfx_backend *be, int var, const rfx_rows *rows)
{
    cuda_ctx *x = be->ctx;
    x->err[0] = 0;
    drop_runs(x, var);
    return rfx_gpu_upload(x->g, rows, &x->vars[var]);
}

static size_t cu_budget(rfx_backend *be)
{
    return rfx_gpu_budget(((cuda_ctx *)be->ctx)->g);
}

static rfx_status cu_sync(rfx_backend *be)
{
    return rfx_gpu_sync(((cuda_ctx *)be->ctx)->g);
}

static double cu_copy_bandwidth(rfx_backend *be)
{
    return rfx_gpu_copy_bandwidth(((cuda_ctx *)be->ctx)->g);
}

static const char *cu_device(rfx_backend *be)
{
    return rfx_gpu_name(((cuda_ctx *)be->ctx)->g);
}

static void cu_jit_stats(rfx_backend *be, int *compiled, int *cached, double *compile_ms, double *cache_ms)
{
    cuda_ctx *c = be->ctx;
    rfx_gpu_jit_stats(c->g, compiled, cached, compile_ms, cache_ms);
    *compiled -= c->jit_compiled0;   /* this run's: a kept context counts since it opened */
    *cached -= c->jit_cached0;
    *compile_ms -= c->jit_compile_ms0;
    *cache_ms -= c->jit_cache_ms0;
}

/* Whether the engine's kept contexts are for these devices and this cap. */
static bool keep_fits(const rfx_device_keep *k, const int *devs, int ndev, size_t device_memory)
{
    if (k->ndev != ndev || k->device_memory != device_memory)
        return false;
    for (int d = 0; d < ndev; d++)
        if (k->devs[d] != devs[d])
            return false;
    return true;
}

bool rfx_cuda_available(char *name, size_t cap)
{
    if (rfx_gpu_count() <= 0)
        return false;
    return !name || !cap || rfx_gpu_device_name(0, name, cap);
}

bool rfx_cuda_versions(int *runtime, int *driver)
{
    return rfx_gpu_versions(runtime, driver);
}

bool rfx_backend_cuda_compiling(void)
{
    return rfx_jit_detached_running() || rfx_gpu_warm_state(NULL) == RFX_WARM_RUNNING;
}

void rfx_backend_cuda_settle(void)
{
    rfx_jit_settle();
}

void rfx_backend_cuda_warm(const int *devices, int ndevices)
{
    rfx_gpu_warm(ndevices > 0 && devices ? devices[0] : 0);
}

int rfx_backend_cuda_warm_state(double *t0)
{
    return rfx_gpu_warm_state(t0);
}

rfx_backend *rfx_backend_cuda(const rfx_run_opts *o, char *why, size_t whycap)
{
    if (rfx_gpu_count() <= 0) {
        snprintf(why, whycap, "no CUDA device or driver");
        return NULL;
    }
    rfx_backend *be = rfx_calloc(1, sizeof *be);
    cuda_ctx *c = rfx_calloc(1, sizeof *c);
    if (!be || !c) {
        free(be);
        free(c);
        snprintf(why, whycap, "out of host memory");
        return NULL;
    }
    c->jit = -1;
    /* the processes of a distributed run on one host take its GPUs in turn, and those
     * sharing one split its free memory */
    int ngpu = rfx_gpu_count(), one = o->comm && ngpu > 0 ? rfx_comm_local_rank(o->comm) % ngpu : 0;
    const int *devs = o->ndevices > 0 ? o->devices : &one;
    int ndev = o->ndevices > 0 ? o->ndevices : 1;
    size_t budget = o->device_memory;
    if (!budget && o->comm && ngpu > 0) {
        int sharing = (rfx_comm_local_size(o->comm) + ngpu - 1) / ngpu;
        size_t free_b = rfx_gpu_free_bytes(devs[0]);
        budget = free_b / 20 * 19 / (size_t)sharing;
    }
    if (ndev > MAX_DEVICES) {
        snprintf(why, whycap, "%d devices asked for, at most %d", ndev, MAX_DEVICES);
        free(be);
        free(c);
        return NULL;
    }
    rfx_device_keep *k = o->keep && !o->keep->lent ? o->keep : NULL;
    if (k && k->ndev && !keep_fits(k, devs, ndev, budget))
        rfx_device_keep_clear(k);   /* other devices or another cap: opened afresh */
    if (k && k->ndev) {
        for (int d = 0; d < ndev; d++)
            c->gs[d] = k->gs[d];
        c->ndev = ndev;
    }
    for (int d = c->ndev; d < ndev; d++) {
        if (devs[d] < 0 || devs[d] >= rfx_gpu_count()) {
            snprintf(why, whycap, "device %d does not exist (%d device%s)", devs[d], rfx_gpu_count(),
                     rfx_gpu_count() == 1 ? "" : "s");
            break;
        }
        if (!(c->gs[d] = rfx_gpu_open(devs[d], budget, why, whycap)))
            break;
        c->ndev++;
    }
    c->g = c->gs[0];
    c->tune = o->tune ? o->tune : &rfx_tuning_defaults;
    for (int d = 0; d < c->ndev; d++) {
        rfx_gpu_set_host_threads(c->gs[d], o->nthreads);
        rfx_gpu_set_tuning(c->gs[d], c->tune);
    }
    if (c->ndev < ndev || rfx_gpu_activate(c->g) != RFX_OK) {
        if (!(k && k->ndev))
            for (int d = c->ndev - 1; d >= 0; d--)
                rfx_gpu_close(c->gs[d]);
        free(be);
        free(c);
        return NULL;
    }
    if (k) {   /* lent for this run; the engine keeps them after it */
        for (int d = 0; d < ndev; d++) {
            k->gs[d] = c->gs[d];
            k->devs[d] = devs[d];
        }
        k->ndev = ndev;
        k->device_memory = budget;
        k->lent = true;
        c->keep = k;
        for (int d = 0; d < ndev; d++)
            c->mark[d] = rfx_gpu_alloc_mark(c->gs[d]);
        rfx_gpu_jit_stats(c->g, &c->jit_compiled0, &c->jit_cached0, &c->jit_compile_ms0, &c->jit_cache_ms0);
    }
    *be = (rfx_backend){.name = "cuda", .ctx = c, .open_vars = cu_open, .close = cu_close, .count = cu_count,
                        .release = cu_release, .merge_host = cu_merge_host, .merge_host_kept = cu_merge_host_kept, .host_view = cu_host_view,
                        .exec = cu_exec, .exec_group = cu_exec_group, .last_error = cu_last_error,
                        .sync = cu_sync, .copy_bandwidth = cu_copy_bandwidth, .device = cu_device,
                        .jit_stats = cu_jit_stats, .load_host = cu_load_host, .budget = cu_budget,
                        .enforces_budget = true, .lftj_host = cu_lftj_host, .pin_host = cu_pin_host,
                        .unpin_host = cu_unpin_host, .reads_tries = cu_reads_tries};
    return be;
}
