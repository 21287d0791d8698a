/* backend_cpu.c: the CPU backend: plan variables as host rows, commands on the CPU
 * primitives. */
#include "backend.h"
#include "base.h"
#include "lftj.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A relation that grows by small disjoint deltas (full = full u new in a semi-naive loop)
 * keeps them as sorted runs beside its main rows, each run at most half the one before
 * (the main rows first), so an iteration costs about its delta's size times a logarithm,
 * not the relation's size. Only that UNION and a DIFFERENCE against the relation read the
 * runs; before any other command reads the relation they are merged into its main rows. */
enum { CPU_MAX_RUNS = 48 };
typedef struct cpu_runs {
    int n;
    size_t rows;               /* in all runs */
    rfx_rows r[CPU_MAX_RUNS];
} cpu_runs;

typedef struct cpu_ctx {
    const rfx_plan *P;
    rfx_rows *vars;            /* the main rows of every variable */
    cpu_runs **runs;           /* per variable: its runs, NULL when it has none */
    int nthreads;
    size_t cap;                /* the budget the out-of-core layer keeps (0: none) */
    char device[64];
    double bandwidth;          /* GB/s, measured on first use */
    size_t scratch;            /* tuning cpu_scratch under a cap: bytes every command needs besides
                                * the rows held, failing for lack of memory as a device's fixed
                                * scratch does (tests the out-of-core layer's last resorts) */
    void *pins[64];            /* check_pins: host memory registered (cpu_pin_host) */
    int npins;
    const rfx_tuning *tune;    /* the run's (borrowed) */
} cpu_ctx;

static void drop_runs(cpu_ctx *x, int v)
{
    cpu_runs *R = x->runs[v];
    if (!R)
        return;
    for (int k = 0; k < R->n; k++)
        rfx_rows_free(&R->r[k]);
    free(R);
    x->runs[v] = NULL;
}

static size_t runs_rows(const cpu_ctx *x, int v)
{
    return x->runs[v] ? x->runs[v]->rows : 0;
}

/* Whether a command must fail for lack of memory (only with the tuning's cpu_scratch and a cap). */
static bool cpu_out_of_budget(const cpu_ctx *x)
{
    if (!x->scratch)
        return false;
    size_t held = x->scratch;
    for (int v = 0; v < x->P->nvars; v++)
        held += (x->vars[v].n + runs_rows(x, v)) * (size_t)x->vars[v].arity * 4;
    return held > x->cap;
}

/* The previous run, or the main rows where v has one run. */
static rfx_rows *before_last(cpu_ctx *x, int v)
{
    cpu_runs *R = x->runs[v];
    return R->n > 1 ? &R->r[R->n - 2] : &x->vars[v];
}

/* Merges v's last run into the one before it (the main rows where it is the only one). */
static rfx_status merge_last(cpu_ctx *x, int v)
{
    cpu_runs *R = x->runs[v];
    rfx_rows *last = &R->r[R->n - 1], *prev = before_last(x, v);
    size_t moved = prev == &x->vars[v] ? last->n : 0;
    rfx_status st = rfx_cpu_union(prev, last, prev, x->nthreads);
    if (st == RFX_OK) {
        rfx_rows_free(&R->r[--R->n]);
        R->rows -= moved;
    }
    return st;
}

/* Merges v's runs into its main rows, smallest first. */
static rfx_status consolidate(cpu_ctx *x, int v)
{
    rfx_status st = RFX_OK;
    while (x->runs[v] && x->runs[v]->n > 0 && st == RFX_OK)
        st = merge_last(x, v);
    if (st == RFX_OK)
        drop_runs(x, v);
    return st;
}

/* v = v u d, d sharing no tuple with v: d copied as a run while it is small against v,
 * then runs merged while the last is more than half the one before it. */
static rfx_status union_runs(cpu_ctx *x, int v, const rfx_rows *d)
{
    size_t held = x->vars[v].n + runs_rows(x, v);
    if (d->n == 0)
        return RFX_OK;
    if (x->vars[v].arity == 0 || d->n * 2 > held || (x->runs[v] && x->runs[v]->n == CPU_MAX_RUNS)) {
        rfx_status st = consolidate(x, v);
        return st ? st : rfx_cpu_union(&x->vars[v], d, &x->vars[v], x->nthreads);
    }
    if (!x->runs[v] && !(x->runs[v] = rfx_calloc(1, sizeof(cpu_runs))))
        return RFX_ERR_NOMEM;
    cpu_runs *R = x->runs[v];
    rfx_rows *run = &R->r[R->n];
    rfx_rows_init(run, d->arity);
    rfx_status st = rfx_rows_append(run, d);
    if (st != RFX_OK)
        return st;
    R->n++;
    R->rows += d->n;
    while (st == RFX_OK && R->n > 0 && R->r[R->n - 1].n * 2 > before_last(x, v)->n)
        st = merge_last(x, v);
    return st;
}

/* Appends v's sorted sets (its main rows, then each run) to out; their number. */
static int sets_of(const cpu_ctx *x, int v, const rfx_rows **out)
{
    int n = 0;
    out[n++] = &x->vars[v];
    for (int r = 0; x->runs[v] && r < x->runs[v]->n; r++)
        out[n++] = &x->runs[v]->r[r];
    return n;
}

/* c's semi-join or anti-join of src0 against b's rows and runs. */
static rfx_status semijoin_runs(cpu_ctx *x, const rfx_ra_cmd *c, int nthreads)
{
    const rfx_rows *sets[CPU_MAX_RUNS + 1];
    int n = sets_of(x, c->src[1], sets);
    bool keep = c->op == RFX_RA_INTERSECT;
    rfx_rows *a = &x->vars[c->src[0]], *dst = &x->vars[c->dst];
    return c->probe ? rfx_cpu_probe_sets(a, sets, n, c->nkeys, keep, c->optional, dst, nthreads)
                    : rfx_cpu_semijoin_sets(a, sets, n, c->nkeys, keep, dst, nthreads);
}

static rfx_status cpu_open(rfx_backend *be, const rfx_plan *P)
{
    cpu_ctx *c = be->ctx;
    c->P = P;
    c->vars = rfx_calloc((size_t)P->nvars, sizeof(rfx_rows));
    c->runs = rfx_calloc((size_t)P->nvars, sizeof(cpu_runs *));
    if (!c->vars || !c->runs)
        return RFX_ERR_NOMEM;
    for (int v = 0; v < P->nvars; v++)
        rfx_rows_init(&c->vars[v], P->vars[v].arity);
    c->vars[P->unit].n = 1;
    return RFX_OK;
}

/* tuning check_pins=1 (tests): the CPU takes host registrations as a device's backend does
 * and checks the out-of-core layer's bookkeeping of them: each unpin names registered
 * memory, none is registered twice or left registered when the backend closes. A broken
 * rule is a bug of rfx, not of its input: it aborts with a message. */
static void pin_check_failed(const char *what, const void *p)
{
    fprintf(stderr, "rfx: internal error: check_pins: %s (%p)\n", what, p);
    abort();
}

static bool cpu_pin_host(rfx_backend *be, void *data, size_t bytes)
{
    cpu_ctx *c = be->ctx;
    for (int k = 0; k < c->npins; k++)
        if (c->pins[k] == data)
            pin_check_failed("memory registered twice", data);
    if (!bytes || c->npins == 64)
        return false;
    c->pins[c->npins++] = data;
    return true;
}

static void cpu_unpin_host(rfx_backend *be, void *data)
{
    cpu_ctx *c = be->ctx;
    for (int k = 0; k < c->npins; k++)
        if (c->pins[k] == data) {
            c->pins[k] = c->pins[--c->npins];
            return;
        }
    pin_check_failed("unregistering memory that is not registered", data);
}

static void cpu_close(rfx_backend *be)
{
    cpu_ctx *c = be->ctx;
    if (c->npins)
        pin_check_failed("memory left registered at close", c->pins[0]);
    if (c->vars)
        for (int v = 0; v < c->P->nvars; v++)
            rfx_rows_free(&c->vars[v]);
    if (c->runs)
        for (int v = 0; v < c->P->nvars; v++)
            drop_runs(c, v);
    free(c->vars);
    free(c->runs);
    free(c);
    free(be);
}

static size_t cpu_count_of(const cpu_ctx *c, int var)
{
    return c->vars[var].n + runs_rows(c, var);
}

static size_t cpu_count(rfx_backend *be, int var)
{
    return cpu_count_of(be->ctx, var);
}

enum { KEPT_BYTES = 4096 };   /* a released variable keeps a buffer this small for its next rows */

static void cpu_release(rfx_backend *be, int var)
{
    rfx_rows *r = &((cpu_ctx *)be->ctx)->vars[var];
    if (r->cap * (size_t)r->arity * sizeof(uint32_t) <= KEPT_BYTES)
        r->n = 0;   /* a thin recursion's temporaries: no allocation an iteration */
    else
        rfx_rows_free(r);
    drop_runs(be->ctx, var);
}

static rfx_status cpu_merge_host(rfx_backend *be, int var, rfx_rows *rows)
{
    cpu_ctx *c = be->ctx;
    rfx_rows *v = &c->vars[var];
    rfx_status cs = consolidate(c, var);
    if (cs != RFX_OK)
        return cs;
    if (v->n == 0)   /* taken as they are (a facts file's rows) */
        return rfx_rows_move_append(v, rows, c->nthreads);
    rfx_status st = rfx_cpu_union(v, rows, v, c->nthreads);
    rfx_rows_free(rows);
    return st;
}

static rfx_status cpu_merge_host_kept(rfx_backend *be, int var, const rfx_rows *rows)
{
    cpu_ctx *c = be->ctx;
    rfx_rows *v = &c->vars[var];
    rfx_status cs = consolidate(c, var);
    if (cs != RFX_OK)
        return cs;
    return v->n == 0 ? rfx_rows_append_parallel(v, rows, c->nthreads) : rfx_cpu_union(v, rows, v, c->nthreads);
}

static rfx_status cpu_host_view(rfx_backend *be, int var, rfx_rows *scratch, const rfx_rows **view)
{
    (void)scratch;
    *view = &((cpu_ctx *)be->ctx)->vars[var];
    return consolidate(be->ctx, var);
}

static rfx_status cpu_take_host(rfx_backend *be, int var, rfx_rows *out)
{
    cpu_ctx *c = be->ctx;
    rfx_status st = consolidate(c, var);
    return st ? st : rfx_rows_move_append(out, &c->vars[var], c->nthreads);
}

static rfx_status copy_rows(const rfx_rows *s, rfx_rows *d, int nthreads)
{
    if (d == s)
        return RFX_OK;
    if (d->arity != s->arity || d->cap < s->n)
        rfx_rows_free(d);
    d->arity = s->arity;
    rfx_status st = rfx_rows_reserve(d, s->n);
    if (st)
        return st;
    if (s->arity)
        rfx_parallel_memcpy(d->data, s->data, sizeof(uint32_t) * (size_t)s->arity * s->n, nthreads);
    d->n = s->n;
    return RFX_OK;
}

rfx_status rfx_cpu_merge_cmd(const rfx_ra_cmd *c, const rfx_rows *a, const rfx_rows *b, rfx_rows *dst, int nthreads)
{
    rfx_status st;
    switch (c->op) {
    case RFX_RA_UNION:
        return rfx_cpu_union(a, b, dst, nthreads);
    case RFX_RA_INTERSECT:
    case RFX_RA_DIFFERENCE:
        if (c->probe)
            return rfx_cpu_probe_sets(a, &b, 1, c->nkeys, c->op == RFX_RA_INTERSECT, c->optional, dst, nthreads);
        return rfx_cpu_semijoin(a, b, c->nkeys, c->op == RFX_RA_INTERSECT, dst, nthreads);
    case RFX_RA_SORT:
    case RFX_RA_UNIQUE:
    case RFX_RA_SORT_UNIQUE: {
        bool repeats = true;
        st = copy_rows(a, dst, nthreads);
        if (st == RFX_OK && c->op == RFX_RA_SORT && c->nkeys > 0)   /* stable: the rest keep their order */
            st = rfx_cpu_sort_leading(dst, c->nkeys, nthreads);
        else if (st == RFX_OK && c->op == RFX_RA_SORT_UNIQUE && rfx_cpu_sort_runs(dst, c->nkeys, nthreads, &repeats))
            ;   /* sorted on its first nkeys columns already: each run of equal ones sorted alone */
        else if (st == RFX_OK && c->op != RFX_RA_UNIQUE)
            st = rfx_cpu_sort(dst, nthreads);
        if (st == RFX_OK && c->op != RFX_RA_SORT && repeats)
            st = rfx_cpu_unique(dst, nthreads);
        return st;
    }
    default:
        return RFX_ERR_INTERNAL;
    }
}

/* Whether c reads its k-th input's runs as they are (the relation's own disjoint UNION, a
 * DIFFERENCE against it, the relations a host command reads the held sets of). */
static bool reads_runs(const rfx_ra_cmd *c, int k)
{
    return rfx_ra_cmd_reads_runs(c, k) || (rfx_ra_cmd_reads_held(c) && k >= 2);
}

/* Merges the runs c reads as rows; drops those of the variable it overwrites. */
static rfx_status settle_runs(cpu_ctx *x, const rfx_ra_cmd *c)
{
    rfx_status st = RFX_OK;
    if (c->op == RFX_RA_SWAP) {
        cpu_runs *t = x->runs[c->dst];
        x->runs[c->dst] = x->runs[c->src[0]];
        x->runs[c->src[0]] = t;
        return RFX_OK;
    }
    for (int k = 0; st == RFX_OK && k < rfx_ra_cmd_ninputs(c); k++) {
        int v = rfx_ra_cmd_input(c, k);
        if (v >= 0 && x->runs[v] && !reads_runs(c, k))
            st = consolidate(x, v);
    }
    if (st == RFX_OK && c->dst >= 0 && x->runs[c->dst] && !reads_runs(c, 0))
        drop_runs(x, c->dst);
    return st;
}

enum { MAX_KEY = 16 };   /* leading columns a filter's range search uses, at most */

bool rfx_cpu_filter_searches(const rfx_plan *P, int src, const rfx_rx *const *preds, int n)
{
    rfx_pvar_kind kind = P->vars[src].kind;
    int a = P->vars[src].arity;
    uint32_t key[MAX_KEY];
    if ((kind != RFX_PV_REL && kind != RFX_PV_DELTA && kind != RFX_PV_NEW) || a == 0 || n > RFX_FUSED_MAX_OUTS)
        return false;
    for (int p = 0; p < n; p++)
        if (rfx_rx_fixed_prefix(preds[p], key, a < MAX_KEY ? a : MAX_KEY) == 0)
            return false;
    return true;
}

bool rfx_cpu_cmd_searches(const rfx_plan *P, const rfx_ra_cmd *c)
{
    const rfx_rx *pred = c->pred;
    return (c->op == RFX_RA_SELECT || c->op == RFX_RA_MAPFILTER) && c->dst != c->src[0] &&
           rfx_cpu_filter_searches(P, c->src[0], &pred, 1);
}

/* The rows of sorted variable v (a relation, its delta or new tuples: sets in order) that
 * filters preds[0..npreds-1] may keep, where each fixes v's leading columns to constants
 * (`edge(0, y)`): the hull of their ranges, found by binary search in v's rows and each of
 * its runs, so that a thin recursion's selection of a growing relation costs its answer,
 * not the relation. *view is a part of v's rows, or those parts gathered in order into
 * scratch; *found false where no such range applies (read all of v). */
static rfx_status fixed_range(cpu_ctx *x, int v, const rfx_rx *const *preds, int npreds, rfx_rows *scratch,
                              rfx_rows *view, bool *found)
{
    int a = x->vars[v].arity;
    uint32_t keys[RFX_FUSED_MAX_OUTS][MAX_KEY];
    int nkey[RFX_FUSED_MAX_OUTS];
    *found = false;
    if (!rfx_cpu_filter_searches(x->P, v, preds, npreds))
        return RFX_OK;
    for (int p = 0; p < npreds; p++)
        nkey[p] = rfx_rx_fixed_prefix(preds[p], keys[p], a < MAX_KEY ? a : MAX_KEY);
    rfx_rows parts[CPU_MAX_RUNS + 1];
    int nparts = 0, nonempty = 0;
    size_t total = 0;
    const rfx_rows *sets[CPU_MAX_RUNS + 1];
    for (int s = 0, nsets = sets_of(x, v, sets); s < nsets; s++) {
        const rfx_rows *set = sets[s];
        size_t lo = set->n, hi = 0;
        for (int p = 0; p < npreds; p++) {
            size_t l = rfx_rows_bound(set, 0, keys[p], nkey[p], false);
            size_t h = rfx_rows_bound(set, l, keys[p], nkey[p], true);
            if (l < h) {
                lo = l < lo ? l : lo;
                hi = h > hi ? h : hi;
            }
        }
        if (lo >= hi)
            continue;
        parts[nparts++] = (rfx_rows){set->data + lo * (size_t)a, hi - lo, 0, a};
        nonempty++;
        total += hi - lo;
    }
    /* most of a relation with runs: merging them once serves its later readers too */
    if (x->runs[v] && total * 2 > cpu_count_of(x, v))
        return RFX_OK;
    *found = true;
    if (nonempty <= 1) {
        *view = nparts ? parts[0] : (rfx_rows){NULL, 0, 0, a};
        return RFX_OK;
    }
    rfx_status st = rfx_rows_concat(parts, (size_t)nparts, scratch, x->nthreads);
    if (st == RFX_OK)
        st = rfx_cpu_sort(scratch, x->nthreads);   /* disjoint sorted parts: their union in order */
    *view = *scratch;
    return st;
}

/* Element-wise commands over a sorted variable read only the range their filter fixes. */
static rfx_status mapfilter_range(cpu_ctx *x, const rfx_ra_cmd *c, int nthreads, bool *done)
{
    rfx_rows scratch, view;
    rfx_rows_init(&scratch, x->vars[c->src[0]].arity);
    const rfx_rx *pred = c->pred;
    rfx_status st = fixed_range(x, c->src[0], &pred, 1, &scratch, &view, done);
    if (st == RFX_OK && *done) {
        drop_runs(x, c->dst);
        st = rfx_cpu_mapfilter(&view, c->pred, c->out, c->nout, &x->vars[c->dst], nthreads);
    }
    rfx_rows_free(&scratch);
    return st;
}

/* Whether c calls functors that take the functors' lock (threads would only queue for it)
 * or count in row order: then c runs on one thread. */
static bool serial_functors(const rfx_ra_cmd *c)
{
    bool serial = c->functors && rfx_rx_serial(c->pred);
    for (int k = 0; c->functors && k < c->nout; k++)
        serial |= rfx_rx_serial(c->out[k]);
    return serial;
}

static rfx_status exec_on(rfx_backend *be, const rfx_ra_cmd *c, int nt)
{
    cpu_ctx *x = be->ctx;
    rfx_rows *V = x->vars;
    if (c->dst >= 0 && c->op != RFX_RA_SWAP && c->op != RFX_RA_CLEAR && cpu_out_of_budget(x))
        return RFX_ERR_NOMEM;
    bool done = false;
    rfx_status st = RFX_OK;
    if (rfx_cpu_cmd_searches(x->P, c))
        st = mapfilter_range(x, c, nt, &done);
    if (st != RFX_OK || done)
        return st;
    st = settle_runs(x, c);
    if (st != RFX_OK)
        return st;
    if (reads_runs(c, 0))
        return union_runs(x, c->dst, &V[c->src[1]]);
    if ((c->op == RFX_RA_DIFFERENCE || c->op == RFX_RA_INTERSECT) && x->runs[c->src[1]] && reads_runs(c, 1))
        return semijoin_runs(x, c, nt);
    switch (c->op) {
    case RFX_RA_SELECT: case RFX_RA_PROJECT: case RFX_RA_MAP: case RFX_RA_MAPFILTER:
        return rfx_cpu_mapfilter(&V[c->src[0]], c->pred, c->out, c->nout, &V[c->dst], nt);
    case RFX_RA_JOIN: case RFX_RA_MAPJOIN: case RFX_RA_PRODUCT:
        if (c->range)
            return rfx_cpu_range_join(&V[c->src[0]], &V[c->src[1]], c->nkeys, c->pred, c->out, c->nout,
                                      x->P->vars[c->dst].set_read, c->probe, &V[c->dst], nt);
        return (c->probe ? rfx_cpu_probe_join : rfx_cpu_join)(&V[c->src[0]], &V[c->src[1]], c->nkeys, c->pred, c->out,
                                                              c->nout, x->P->vars[c->dst].set_read, &V[c->dst], nt);
    case RFX_RA_UNION: case RFX_RA_INTERSECT: case RFX_RA_DIFFERENCE:
        return rfx_cpu_merge_cmd(c, &V[c->src[0]], &V[c->src[1]], &V[c->dst], nt);
    case RFX_RA_SORT: case RFX_RA_UNIQUE: case RFX_RA_SORT_UNIQUE:
        return rfx_cpu_merge_cmd(c, &V[c->src[0]], NULL, &V[c->dst], nt);
    case RFX_RA_COPY:
        return copy_rows(&V[c->src[0]], &V[c->dst], nt);
    case RFX_RA_RANGE:
        return rfx_cpu_range(&V[c->src[0]], c->out, c->nout, &V[c->dst]);
    case RFX_RA_CHOICE: {   /* the held relations' runs as they are: sorted sets each */
        rfx_choice_domains d = rfx_relation_choice(&x->P->prog->rels[x->P->vars[c->vars[0]].rel]);
        const rfx_rows *held[2 * (CPU_MAX_RUNS + 1)];
        int nheld = 0;
        if (c->nvars > 2)
            return RFX_ERR_INTERNAL;   /* the relation and its new tuples, at most */
        for (int k = 0; k < c->nvars; k++)
            nheld += sets_of(x, c->vars[k], held + nheld);
        return rfx_cpu_choice(&V[c->src[0]], &d, held, nheld, &V[c->dst]);
    }
    case RFX_RA_EQREL: {   /* the held relation's runs as they are (none: nothing held) */
        const rfx_rows *held[CPU_MAX_RUNS + 1];
        int nheld = c->nvars ? sets_of(x, c->vars[0], held) : 0;
        return rfx_cpu_eqrel(&V[c->src[0]], held, nheld, &V[c->dst], x->nthreads);
    }
    case RFX_RA_LATTICE: {   /* the held relation's runs as they are (none: nothing held) */
        const rfx_rows *held[CPU_MAX_RUNS + 1];
        int nheld = c->nvars ? sets_of(x, c->vars[0], held) : 0;
        return rfx_cpu_lattice(&V[c->src[0]], c->nkeys, c->out, held, nheld, &V[c->dst], x->nthreads);
    }
    case RFX_RA_AGGREGATE:
        return rfx_cpu_aggregate(&V[c->src[0]], &V[c->src[1]], c->nkeys, c->agg, c->agg_col, c->agg_prim, &V[c->dst]);
    case RFX_RA_LFTJ: {
        rfx_lftj_src srcs[64];
        if (c->nvars > 64)
            return RFX_ERR_LIMIT;
        for (int s = 0, off = 0; s < c->nvars; s++) {
            srcs[s] = (rfx_lftj_src){&V[c->vars[s]], c->colvar + off, NULL};
            off += V[c->vars[s]].arity;
        }
        if (!c->count_only)
            return rfx_cpu_lftj(srcs, c->nvars, c->nkeys, &V[c->dst], NULL, nt);
        uint64_t n = 0;
        st = rfx_cpu_lftj(srcs, c->nvars, c->nkeys, NULL, &n, nt);
        rfx_rows_free(&V[c->dst]);     /* a count-only relation: a size, no rows */
        V[c->dst].n = (size_t)n;
        return st;
    }
    case RFX_RA_SWAP:
        rfx_rows_swap(&V[c->dst], &V[c->src[0]]);
        return RFX_OK;
    case RFX_RA_CLEAR:
        V[c->dst].n = 0;
        return RFX_OK;
    default:
        return RFX_ERR_INTERNAL;
    }
}

/* Whether c, whose functors would run it on one thread (serial, serial_functors), runs on
 * every thread by speculation (rfx_fn_env_speculate): its functors only read texts or make
 * symbols, and it writes rows that a run again replaces, at most one a row of its source (a
 * map or filter into a relation it does not read: a join's predicate over symbols not made
 * yet could pass every pair). */
static bool speculates(const cpu_ctx *x, const rfx_ra_cmd *c, bool serial)
{
    if (x->nthreads < 2 || !x->P->fn_env || !serial || !rfx_rx_speculable(c->pred))
        return false;
    for (int k = 0; k < c->nout; k++)
        if (!rfx_rx_speculable(c->out[k]))
            return false;
    for (int k = 0; k < rfx_ra_cmd_ninputs(c); k++)
        if (c->src[k] == c->dst)
            return false;
    switch (c->op) {
    case RFX_RA_SELECT: case RFX_RA_PROJECT: case RFX_RA_MAP: case RFX_RA_MAPFILTER:
        return true;
    default:
        return false;
    }
}

/* Runs c; one calling functors that make symbols runs on every thread, again after the
 * symbols its run found missing were made (a chain of them, one more each time), on one
 * thread where the chain is long or the run found too many missing. */
static rfx_status cpu_exec(rfx_backend *be, const rfx_ra_cmd *c)
{
    cpu_ctx *x = be->ctx;
    const bool serial = serial_functors(c);
    if (!speculates(x, c, serial))
        return exec_on(be, c, serial ? 1 : x->nthreads);
    for (int run = 0; run < 4; run++) {
        rfx_fn_env_speculate(x->P->fn_env);
        rfx_status st = exec_on(be, c, x->nthreads);
        long made = rfx_fn_env_speculated(x->P->fn_env);
        if (made == RFX_SPEC_GIVEN_UP)
            break;
        if (made < 0)
            return RFX_ERR_NOMEM;
        if (made == 0)
            return st;
    }
    return exec_on(be, c, 1);
}

/* A FILTER group: its outputs in one pass over its source (the range they fix, if any). */
static rfx_status filter_group(cpu_ctx *x, const rfx_fgroup *g)
{
    rfx_rows *V = x->vars;
    const rfx_rx *preds[RFX_FUSED_MAX_OUTS];
    rfx_rx *const *outs[RFX_FUSED_MAX_OUTS];
    int nout[RFX_FUSED_MAX_OUTS];
    rfx_rows *dsts[RFX_FUSED_MAX_OUTS];
    bool aliased = false;
    for (int k = 0; k < g->nouts; k++) {
        preds[k] = g->outs[k].pred;
        outs[k] = g->outs[k].out;
        nout[k] = g->outs[k].nout;
        dsts[k] = &V[g->outs[k].dst];
        aliased |= g->outs[k].dst == g->src;
        drop_runs(x, g->outs[k].dst);
    }
    rfx_rows scratch, view;
    rfx_rows_init(&scratch, V[g->src].arity);
    bool found = false;
    rfx_status st = aliased ? RFX_OK : fixed_range(x, g->src, preds, g->nouts, &scratch, &view, &found);
    if (st == RFX_OK && !found) {
        st = consolidate(x, g->src);
        view = V[g->src];
    }
    if (st == RFX_OK)
        st = rfx_cpu_mapfilter_multi(&view, g->nouts, preds, outs, nout, dsts, x->nthreads);
    rfx_rows_free(&scratch);
    return st;
}

/* A fused group in one pass over its input(s). */
static rfx_status cpu_exec_group(rfx_backend *be, const rfx_fgroup *g)
{
    cpu_ctx *x = be->ctx;
    rfx_rows *V = x->vars;
    if (cpu_out_of_budget(x))
        return RFX_ERR_NOMEM;
    if (g->kind == RFX_FG_FILTER)
        return filter_group(x, g);
    if (g->probe)   /* the star join reads its first source in key order: a probe's members instead */
        return rfx_backend_run_members(be, x->P, g, cpu_exec);
    /* a star join with an empty source is empty whatever the others hold: their runs are
     * left unmerged (a thin recursion's empty delta against a relation that grows by a run
     * an iteration would otherwise merge all of it every iteration) */
    bool empty = false;
    for (int s = 0; s < g->nsrc; s++)
        empty |= cpu_count_of(x, g->srcs[s]) == 0;
    for (int k = 0; k < rfx_fgroup_ninputs(g) && !empty; k++) {
        rfx_status st = consolidate(x, rfx_fgroup_input(g, k));
        if (st != RFX_OK)
            return st;
    }
    for (int k = 0; k < rfx_fgroup_noutputs(g); k++)
        drop_runs(x, rfx_fgroup_output(g, k));
    const rfx_rows *srcs[RFX_FUSED_MAX_SRCS];
    for (int s = 0; s < g->nsrc; s++)
        srcs[s] = &V[g->srcs[s]];
    return rfx_cpu_star_join(srcs, g->nsrc, g->nkeys, g->pre, g->pred, g->out, g->nout, x->P->vars[g->dst].set_read,
                             &V[g->dst], x->nthreads);
}

static rfx_status cpu_load_host(rfx_backend *be, int var, const rfx_rows *rows)
{
    cpu_ctx *c = be->ctx;
    drop_runs(c, var);
    return copy_rows(rows, &c->vars[var], c->nthreads);
}

static size_t cpu_budget(rfx_backend *be)
{
    return ((cpu_ctx *)be->ctx)->cap;
}

/* The tuning's check_pins: the out-of-core layer keeps TrieArrays of two-column sources, as for a
 * device, and each one given to a join must be its rows' as they are now, registered. */
static bool cpu_reads_tries(rfx_backend *be, const rfx_lftj_src *srcs, int nsrc, rfx_lftj_parts parts)
{
    (void)be;
    (void)parts;
    bool any = false;
    for (int s = 0; s < nsrc; s++)
        any |= srcs[s].rows->arity == 2;
    return any;
}

static bool cpu_pinned(const cpu_ctx *c, const void *data)
{
    for (int k = 0; k < c->npins; k++)
        if (c->pins[k] == data)
            return true;
    return false;
}

static void cpu_check_trie(const cpu_ctx *c, const rfx_lftj_src *src)
{
    const rfx_lftj_trie *t = src->trie;
    rfx_lftj_trie fresh;
    if (rfx_lftj_trie_build(src->rows, 1, &fresh) != RFX_OK)
        pin_check_failed("a TrieArray given for rows that have none", t);
    bool same = fresh.val0.n == t->val0.n && fresh.val1.n == t->val1.n;
    const rfx_rows *a[3] = {&fresh.val0, &fresh.ptr0, &fresh.val1}, *b[3] = {&t->val0, &t->ptr0, &t->val1};
    for (int k = 0; k < 3 && same; k++)
        same = a[k]->n == b[k]->n && (!a[k]->n || memcmp(a[k]->data, b[k]->data, a[k]->n * 4) == 0) &&
               (!b[k]->n || cpu_pinned(c, b[k]->data));
    rfx_lftj_trie_free(&fresh);
    if (!same)
        pin_check_failed("a TrieArray given that is not its rows' or not registered", t);
}

static rfx_status cpu_lftj_host(rfx_backend *be, const rfx_lftj_src *srcs, int nsrc, int nvars, rfx_lftj_parts parts,
                                size_t budget, int nthreads, rfx_rows *dst, uint64_t *count, size_t *boxes,
                                size_t *copied)
{
    if (parts == RFX_LFTJ_INDUCED)   /* the out-of-core layer's parts, each joined here by boxes */
        return RFX_ERR_LIMIT;
    /* boxes, views of the host rows, are as good as any other part here */
    for (int s = 0; s < nsrc; s++)
        if (srcs[s].trie)
            cpu_check_trie(be->ctx, &srcs[s]);
    *copied = 0;      /* slices are views of host memory */
    (void)nthreads;   /* the backend's own count: it joins on the host too */
    return rfx_cpu_lftj_boxed(srcs, nsrc, nvars, budget, dst, count, ((cpu_ctx *)be->ctx)->nthreads, boxes,
                              ((cpu_ctx *)be->ctx)->tune);
}

static const char *cpu_last_error(rfx_backend *be)
{
    (void)be;
    return "";
}

static rfx_status cpu_sync(rfx_backend *be)
{
    (void)be;
    return RFX_OK;
}

static const char *cpu_device(rfx_backend *be)
{
    return ((cpu_ctx *)be->ctx)->device;
}

enum { BW_CHUNK = 4 << 20 };   /* bytes per task of the bandwidth probe */
typedef struct bw_probe {
    char *src, *dst;
} bw_probe;

static void copy_chunk(int i, void *arg)
{
    bw_probe *p = arg;
    memcpy(p->dst + (size_t)i * BW_CHUNK, p->src + (size_t)i * BW_CHUNK, BW_CHUNK);
}

/* Best of three parallel copies of 128 MiB (bigger than any last-level cache). */
static double cpu_copy_bandwidth(rfx_backend *be)
{
    cpu_ctx *c = be->ctx;
    if (c->bandwidth > 0)
        return c->bandwidth;
    enum { CHUNKS = 32 };
    bw_probe p = {malloc((size_t)CHUNKS * BW_CHUNK), malloc((size_t)CHUNKS * BW_CHUNK)};
    if (p.src && p.dst) {
        memset(p.src, 1, (size_t)CHUNKS * BW_CHUNK);
        memset(p.dst, 2, (size_t)CHUNKS * BW_CHUNK);
        double best = 0;
        for (int rep = 0; rep < 3; rep++) {
            double t0 = rfx_seconds();
            rfx_parallel_for(CHUNKS, c->nthreads, copy_chunk, &p);
            double s = rfx_seconds() - t0;
            double gbs = s > 0 ? 2.0 * CHUNKS * BW_CHUNK / s * 1e-9 : 0;
            best = gbs > best ? gbs : best;
        }
        c->bandwidth = best;
    }
    free(p.src);
    free(p.dst);
    return c->bandwidth;
}

rfx_backend *rfx_backend_cpu(int nthreads, size_t cap, const rfx_tuning *tune)
{
    rfx_backend *be = rfx_calloc(1, sizeof *be);
    cpu_ctx *c = rfx_calloc(1, sizeof *c);
    if (!be || !c) {
        free(be);
        free(c);
        return NULL;
    }
    c->nthreads = nthreads > 0 ? nthreads : 1;
    c->cap = cap;
    if (!tune)
        tune = &rfx_tuning_defaults;
    c->tune = tune;
    c->scratch = cap ? tune->cpu_scratch : 0;
    snprintf(c->device, sizeof c->device, "%d CPU thread%s", c->nthreads, c->nthreads > 1 ? "s" : "");
    *be = (rfx_backend){.name = "cpu", .ctx = c, .open_vars = cpu_open, .close = cpu_close, .count = cpu_count,
                        .release = cpu_release, .merge_host = cpu_merge_host, .merge_host_kept = cpu_merge_host_kept, .host_view = cpu_host_view,
                        .exec = cpu_exec, .exec_group = cpu_exec_group, .last_error = cpu_last_error,
                        .sync = cpu_sync, .copy_bandwidth = cpu_copy_bandwidth, .device = cpu_device,
                        .load_host = cpu_load_host, .budget = cpu_budget, .enforces_budget = c->scratch > 0,
                        .lftj_host = cpu_lftj_host, .take_host = cpu_take_host};
    if (tune->check_pins) {
        be->pin_host = cpu_pin_host;
        be->unpin_host = cpu_unpin_host;
        be->reads_tries = cpu_reads_tries;
    }
    return be;
}
