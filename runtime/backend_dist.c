/* backend_dist.c: one process's share of a run spread over the processes of an MPI job
 * (comm.h), around the backend that holds that share (CPU, CUDA, auto, out of core).
 *
 * Every variable is hash-partitioned on its first column: a tuple lives on process
 * owner(t) = mix(t[0]) mod P (nullary tuples on process 0). Because join keys, the key
 * prefixes of anti-joins and aggregates and the compared tuples of set operations all
 * begin with column 0, every command whose sources are partitioned that way computes its
 * part locally; what moves is its output, sent to its owners where its first column is not
 * a source's first column (a projection or join that leads with another variable). The
 * few commands that need a whole relation (choice, equivalence closure, triejoins, a key
 * prefix of length 0) or that may make symbols and records (functors: every process must
 * make the same ones in the same order, so that ids agree) run on every process over
 * replicas of their sources, gathered into twin variables, and each keeps its own part of
 * the output.
 *
 * Sizes are agreed after every command (rfx_backend.settle), so count() is the same
 * number on every process and costs no transfer, and control flow (loop tests, guards)
 * takes the same path everywhere. */
#include "backend.h"
#include "base.h"
#include "comm.h"

#include <stdlib.h>
#include <string.h>

typedef struct dist_ctx {
    rfx_backend *in;
    rfx_comm *comm;
    int rank, size, nthreads;
    const rfx_plan *P;         /* the run's plan (borrowed) */
    rfx_plan twin;             /* P with 2 * nvars variables: variable v's replica is nvars + v */
    rfx_pvar *twin_vars;
    uint64_t *global;          /* per variable of P: its tuples on all processes */
    uint64_t *agreed;          /* settle's sums: a status per process, then sizes (size + nvars) */
    /* an exchange's host rows, kept from one to the next: memory fresh from the kernel
     * costs a page fault per page on first touch, every iteration */
    rfx_rows view, bucketed, got;
    bool *set_read;            /* per variable: a temporary read only by SORT_UNIQUE, whose
                                * repeats may go before it is sent (each process's own) */
    char err[512];
    rfx_dist_stats st;
} dist_ctx;

static uint32_t mix(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

static int owner(const dist_ctx *x, const uint32_t *row, int arity)
{
    return arity ? (int)(mix(row[0]) % (uint32_t)x->size) : 0;
}

static bool is_set(const dist_ctx *x, int v)
{
    rfx_pvar_kind k = x->P->vars[v].kind;
    return k == RFX_PV_REL || k == RFX_PV_DELTA || k == RFX_PV_NEW;
}

static rfx_status local_rows(dist_ctx *x, int v, rfx_rows *out)
{
    rfx_rows scratch;
    rfx_rows_init(&scratch, out->arity);
    const rfx_rows *view;
    rfx_status st = x->in->host_view(x->in, v, &scratch, &view);
    if (st == RFX_OK && view == &scratch)
        rfx_rows_swap(out, &scratch);
    else if (st == RFX_OK)
        st = rfx_rows_append_parallel(out, view, x->nthreads);
    rfx_rows_free(&scratch);
    return st;
}

/* Rows gathered from several processes, in the order place_sorted gives (below). */
static rfx_status order_rows(dist_ctx *x, int v, rfx_rows *r)
{
    rfx_status st = rfx_cpu_sort(r, x->nthreads);
    if (st == RFX_OK && is_set(x, v % x->P->nvars))
        st = rfx_cpu_unique(r, x->nthreads);
    return st;
}

static rfx_status replace(dist_ctx *x, int v, const rfx_rows *r)
{
    x->in->release(x->in, v);
    return r->n ? x->in->load_host(x->in, v, r) : RFX_OK;
}

/* Rows bucketed by owner, in parallel: each of T chunks counts its rows per owner, then
 * places them at its offset in each owner's bucket (the order of rows within a bucket kept). */
typedef struct bucketing {
    const dist_ctx *x;
    const rfx_rows *in;
    rfx_rows *out;
    size_t *at;                /* T x P: chunk t's count for owner p, then its next place */
    int T;
} bucketing;

static void chunk_range(const bucketing *k, int t, size_t *lo, size_t *hi)
{
    *lo = k->in->n * (size_t)t / (size_t)k->T;
    *hi = k->in->n * (size_t)(t + 1) / (size_t)k->T;
}

static void count_chunk(int t, void *ctx)
{
    bucketing *k = ctx;
    size_t lo, hi, *at = k->at + (size_t)t * (size_t)k->x->size;
    int a = k->in->arity;
    chunk_range(k, t, &lo, &hi);
    for (size_t i = lo; i < hi; i++)
        at[owner(k->x, k->in->data + i * (size_t)a, a)]++;
}

static void place_chunk(int t, void *ctx)
{
    bucketing *k = ctx;
    size_t lo, hi, *at = k->at + (size_t)t * (size_t)k->x->size;
    int a = k->in->arity;
    chunk_range(k, t, &lo, &hi);
    for (size_t i = lo; i < hi && a; i++) {
        const uint32_t *row = k->in->data + i * (size_t)a;
        memcpy(k->out->data + at[owner(k->x, row, a)]++ * (size_t)a, row, sizeof(uint32_t) * (size_t)a);
    }
}

/* out = in's rows bucketed by owner; counts[p] = rows for process p. */
static rfx_status bucket(dist_ctx *x, const rfx_rows *in, rfx_rows *out, size_t *counts)
{
    int T = in->n < 65536 ? 1 : x->nthreads, P = x->size;
    bucketing k = {x, in, out, rfx_calloc((size_t)T * (size_t)P, sizeof(size_t)), T};
    if (!k.at || rfx_rows_reserve(out, in->n) != RFX_OK) {
        free(k.at);
        return RFX_ERR_NOMEM;
    }
    rfx_parallel_for(T, T, count_chunk, &k);
    size_t next = 0;
    for (int p = 0; p < P; p++) {
        counts[p] = 0;
        for (int t = 0; t < T; t++) {
            size_t n = k.at[(size_t)t * (size_t)P + (size_t)p];
            k.at[(size_t)t * (size_t)P + (size_t)p] = next;
            next += n;
            counts[p] += n;
        }
    }
    rfx_parallel_for(T, T, place_chunk, &k);
    out->n = in->n;
    free(k.at);
    return RFX_OK;
}

/* v = rows, ordered as a sorted variable keeps them (and without repeats for a set): a
 * temporary may have been sorted on a prefix its readers count on, which the full order
 * keeps. The sort is the backend's (on its device), from the twin. */
static rfx_status place_sorted(dist_ctx *x, int v, const rfx_rows *rows)
{
    int t = x->P->nvars + v;
    rfx_status st = replace(x, t, rows);
    rfx_ra_cmd sort = {.op = is_set(x, v) ? RFX_RA_SORT_UNIQUE : RFX_RA_SORT, .dst = v, .src = {t, -1}, .rule = -1,
                       .io = -1};
    if (st == RFX_OK)
        st = x->in->exec(x->in, &sort);
    x->in->release(x->in, t);
    return st;
}

/* r emptied and given arity a, its memory kept. */
static rfx_rows *reuse(rfx_rows *r, int a)
{
    if (r->arity != a) {
        size_t bytes = r->cap * (size_t)r->arity;   /* the same words as rows of the new arity */
        r->cap = a ? bytes / (size_t)a : 0;
        r->arity = a;
    }
    r->n = 0;
    return r;
}

/* Variable v's rows sent to their owners; a temporary only SORT_UNIQUE reads sends its
 * rows without repeats (a join's output holds several rows for many of its tuples). */
static rfx_status repartition(dist_ctx *x, int v, bool failed)
{
    double t0 = rfx_seconds();
    int a = x->P->vars[v].arity, from = v;
    rfx_rows *scratch = reuse(&x->view, a), *bucketed = reuse(&x->bucketed, a), *got = reuse(&x->got, a);
    const rfx_rows *mine = NULL;   /* the backend's own rows where it holds them on the host */
    size_t *counts = rfx_calloc((size_t)x->size, sizeof(size_t));
    rfx_status st = failed ? RFX_ERR_REMOTE : !counts ? RFX_ERR_NOMEM : RFX_OK;
    if (st == RFX_OK && x->set_read[v]) {
        from = x->P->nvars + v;
        rfx_ra_cmd once = {.op = RFX_RA_SORT_UNIQUE, .dst = from, .src = {v, -1}, .rule = -1, .io = -1};
        st = x->in->exec(x->in, &once);
    }
    if (st == RFX_OK)
        st = x->in->host_view(x->in, from, scratch, &mine);
    if (st == RFX_OK)
        st = bucket(x, mine, bucketed, counts);
    if (st == RFX_OK) {
        x->st.sent_rows += mine->n - counts[x->rank];
        x->st.sent_bytes += (mine->n - counts[x->rank]) * (size_t)a * 4;
    }
    scratch->n = 0;
    rfx_status cs = rfx_comm_exchange(x->comm, bucketed, counts, st != RFX_OK, got);
    st = st != RFX_OK ? st : cs;
    free(counts);
    if (from != v)
        x->in->release(x->in, from);
    if (st == RFX_OK)
        st = place_sorted(x, v, got);
    bucketed->n = got->n = 0;
    x->st.exchanges++;
    x->st.exchange_s += rfx_seconds() - t0;
    return st;
}

/* twin(v) = v's rows on every process (one_row: at most one of each process's, where only
 * whether v is empty matters). */
static rfx_status replicate(dist_ctx *x, int v, bool one_row, bool failed)
{
    double t0 = rfx_seconds();
    int a = x->P->vars[v].arity;
    rfx_rows mine, all;
    rfx_rows_init(&mine, a);
    rfx_rows_init(&all, a);
    rfx_status st = failed ? RFX_ERR_REMOTE : local_rows(x, v, &mine);
    if (st == RFX_OK && one_row && mine.n > 1)
        mine.n = 1;
    rfx_status cs = rfx_comm_gather_rows(x->comm, &mine, st != RFX_OK, &all);
    st = st != RFX_OK ? st : cs;
    rfx_rows_free(&mine);
    if (st == RFX_OK)
        st = order_rows(x, v, &all);
    if (st == RFX_OK)
        st = replace(x, x->P->nvars + v, &all);
    x->st.gathered_rows += all.n;
    rfx_rows_free(&all);
    x->st.exchange_s += rfx_seconds() - t0;
    return st;
}

/* Drops the rows other processes own, keeping the order of the rest. */
static void keep_owned(const dist_ctx *x, rfx_rows *r)
{
    int a = r->arity;
    size_t n = 0;
    for (size_t i = 0; i < r->n; i++)
        if (owner(x, r->data + i * (size_t)a, a) == x->rank) {
            if (a && n != i)
                memmove(r->data + n * (size_t)a, r->data + i * (size_t)a, sizeof(uint32_t) * (size_t)a);
            n++;
        }
    r->n = n;
}

/* Keeps this process's part of v, which holds the whole (each process computed it). */
static rfx_status keep_own(dist_ctx *x, int v)
{
    if (x->P->vars[v].count_only) {   /* a size: process 0's stands for all */
        if (x->rank) {
            rfx_ra_cmd clr = {.op = RFX_RA_CLEAR, .dst = v, .src = {-1, -1}, .rule = -1, .io = -1};
            return x->in->exec(x->in, &clr);
        }
        return RFX_OK;
    }
    rfx_rows r;
    rfx_rows_init(&r, x->P->vars[v].arity);
    rfx_status st = local_rows(x, v, &r);
    if (st == RFX_OK) {
        keep_owned(x, &r);
        st = replace(x, v, &r);
    }
    rfx_rows_free(&r);
    return st;
}

/* Whether output expression 0 is the first column of the command's first source (or, for
 * a keyed join, of its second: the same value). */
static bool leads_with_first_column(const dist_ctx *x, const rfx_ra_cmd *c)
{
    int a0 = x->P->vars[c->src[0]].arity;
    if (a0 == 0 || x->P->vars[c->dst].arity == 0 || c->nout == 0 || !c->out)   /* nullary: process 0's */
        return false;
    const rfx_rx *e = c->out[0];
    if (!e || e->kind != RFX_RX_COL)
        return false;
    bool keyed = (c->op == RFX_RA_JOIN || c->op == RFX_RA_MAPJOIN) && c->nkeys > 0;
    return e->col == 0 || (keyed && e->col == a0);
}

typedef enum { KEEP, SEND_OUTPUT, REPLICATE_ALL } placement;

/* How a command runs over partitioned variables: where its output goes, and which sources
 * (bit k: src[k]) must be whole on every process; *one_row: src[1] only for emptiness. */
static placement place(const dist_ctx *x, const rfx_ra_cmd *c, unsigned *whole, bool *one_row)
{
    *whole = 0;
    *one_row = false;
    if (c->functors)
        return REPLICATE_ALL;
    switch (c->op) {
    case RFX_RA_SELECT: case RFX_RA_SORT: case RFX_RA_UNIQUE: case RFX_RA_SORT_UNIQUE: case RFX_RA_UNION:
    case RFX_RA_COPY: case RFX_RA_SWAP: case RFX_RA_CLEAR:
        return KEEP;
    case RFX_RA_INTERSECT: case RFX_RA_DIFFERENCE:
        if (c->nkeys == 0) {   /* only whether src1 holds anything */
            *whole = 2;
            *one_row = true;
        }
        return KEEP;
    case RFX_RA_PROJECT: case RFX_RA_MAP: case RFX_RA_MAPFILTER:
        return leads_with_first_column(x, c) ? KEEP : SEND_OUTPUT;
    case RFX_RA_JOIN: case RFX_RA_MAPJOIN: case RFX_RA_PRODUCT:
        if (c->op == RFX_RA_PRODUCT || c->nkeys == 0)
            *whole = 2;
        return leads_with_first_column(x, c) ? KEEP : SEND_OUTPUT;
    case RFX_RA_AGGREGATE: case RFX_RA_RANGE:   /* src0's columns, then the value */
        if (c->op == RFX_RA_AGGREGATE && c->nkeys == 0)
            *whole = 2;
        return x->P->vars[c->src[0]].arity ? KEEP : SEND_OUTPUT;
    case RFX_RA_LATTICE:
        return c->nkeys > 0 ? KEEP : REPLICATE_ALL;
    default:   /* CHOICE, EQREL, LFTJ: the whole relations */
        return REPLICATE_ALL;
    }
}

static int twin_of(const dist_ctx *x, int v)
{
    return v < 0 ? v : x->P->nvars + v;
}

/* Runs c with every source (and variable it reads in vars) replaced by its replica; then
 * keeps this process's part of the output. */
static rfx_status run_replicated(dist_ctx *x, const rfx_ra_cmd *c)
{
    int vars[64];
    if (c->nvars > 64)
        return RFX_ERR_LIMIT;
    rfx_status st = RFX_OK;
    for (int k = 0; k < 2; k++)
        if (c->src[k] >= 0)
            st = replicate(x, c->src[k], false, st != RFX_OK);
    for (int k = 0; k < c->nvars; k++) {
        bool again = false;   /* a variable read twice is gathered once */
        for (int j = 0; j < k; j++)
            again |= c->vars[j] == c->vars[k];
        again |= c->vars[k] == c->src[0] || c->vars[k] == c->src[1];
        if (!again)
            st = replicate(x, c->vars[k], false, st != RFX_OK);
        vars[k] = twin_of(x, c->vars[k]);
    }
    rfx_ra_cmd t = *c;
    t.src[0] = twin_of(x, c->src[0]);
    t.src[1] = twin_of(x, c->src[1]);
    t.vars = c->nvars ? vars : NULL;
    double t0 = rfx_seconds();
    if (st == RFX_OK)
        st = x->in->exec(x->in, &t);
    x->st.compute_s += rfx_seconds() - t0;
    x->st.replicated++;
    for (int k = 0; k < 2; k++)
        if (c->src[k] >= 0)
            x->in->release(x->in, twin_of(x, c->src[k]));
    for (int k = 0; k < c->nvars; k++)
        x->in->release(x->in, vars[k]);
    return st == RFX_OK && c->dst >= 0 ? keep_own(x, c->dst) : st;
}

static rfx_status dist_exec(rfx_backend *be, const rfx_ra_cmd *c)
{
    dist_ctx *x = be->ctx;
    unsigned whole;
    bool one_row;
    placement p = place(x, c, &whole, &one_row);
    if (p == REPLICATE_ALL)
        return run_replicated(x, c);
    rfx_status st = RFX_OK;
    rfx_ra_cmd t = *c;
    if (whole & 2) {
        st = replicate(x, c->src[1], one_row, false);
        t.src[1] = twin_of(x, c->src[1]);
    }
    if (st != RFX_OK)
        return st;
    double t0 = rfx_seconds();
    st = x->in->exec(x->in, &t);
    x->st.compute_s += rfx_seconds() - t0;
    if (whole & 2)
        x->in->release(x->in, t.src[1]);
    if (p == SEND_OUTPUT) {   /* collective: a process that failed still takes part */
        rfx_status moved = repartition(x, c->dst, st != RFX_OK);
        st = st != RFX_OK ? st : moved;
    }
    return st;
}

/* A fused group runs member by member: each member's output may have to move before the
 * next reads it. The processes agree after each member, so that where one fails none runs
 * the next member's transfers alone. */
static rfx_status dist_exec_group(rfx_backend *be, const rfx_fgroup *g)
{
    dist_ctx *x = be->ctx;
    rfx_status st = RFX_OK;
    for (int m = 0; m < g->nmembers && st == RFX_OK; m++) {
        st = dist_exec(be, &x->P->blocks[g->members[m].block].cmds[g->members[m].cmd]);
        st = rfx_comm_agree(x->comm, st);
    }
    return st;
}

static rfx_status dist_settle(rfx_backend *be, const int *vars, int nvars, rfx_status mine, int *reporter)
{
    dist_ctx *x = be->ctx;
    int n = vars ? nvars : x->P->nvars;
    uint64_t *sizes = x->agreed + x->size;
    for (int k = 0; k < n; k++)
        sizes[k] = x->in->count(x->in, vars ? vars[k] : k);
    rfx_status st = rfx_comm_settle(x->comm, mine, x->agreed, n, reporter);
    for (int k = 0; st != RFX_ERR_REMOTE && k < n; k++)
        x->global[vars ? vars[k] : k] = sizes[k];
    return st;
}

static rfx_status dist_open(rfx_backend *be, const rfx_plan *P)
{
    dist_ctx *x = be->ctx;
    x->P = P;
    x->twin = *P;
    x->twin.nvars = x->twin.varcap = 2 * P->nvars;
    x->twin_vars = rfx_malloc(sizeof(rfx_pvar) * (size_t)x->twin.nvars);
    x->global = rfx_calloc((size_t)P->nvars, sizeof(uint64_t));
    x->agreed = rfx_calloc((size_t)x->size + (size_t)P->nvars, sizeof(uint64_t));
    if (!x->twin_vars || !x->global || !x->agreed)
        return RFX_ERR_NOMEM;
    if (!(x->set_read = rfx_malloc(sizeof(bool) * (size_t)P->nvars)))
        return RFX_ERR_NOMEM;
    for (int v = 0; v < P->nvars; v++)
        x->set_read[v] = P->vars[v].kind == RFX_PV_TEMP;
    for (int b = 0; b < P->nblocks; b++)
        for (int i = 0; i < P->blocks[b].ncmds; i++) {
            const rfx_ra_cmd *c = &P->blocks[b].cmds[i];
            for (int k = 0; k < rfx_ra_cmd_ninputs(c); k++) {
                int v = rfx_ra_cmd_input(c, k);
                if (v >= 0 && c->op != RFX_RA_SORT_UNIQUE)
                    x->set_read[v] = false;
            }
        }
    memcpy(x->twin_vars, P->vars, sizeof(rfx_pvar) * (size_t)P->nvars);
    memcpy(x->twin_vars + P->nvars, P->vars, sizeof(rfx_pvar) * (size_t)P->nvars);
    x->twin.vars = x->twin_vars;
    rfx_status st = x->in->open_vars(x->in, &x->twin);
    if (st == RFX_OK && x->rank)   /* the unit tuple is a nullary relation's: process 0's */
        x->in->release(x->in, P->unit);
    x->global[P->unit] = 1;
    return st;
}

static void dist_close(rfx_backend *be)
{
    dist_ctx *x = be->ctx;
    x->in->close(x->in);
    free(x->twin_vars);
    free(x->global);
    free(x->agreed);
    free(x->set_read);
    rfx_rows_free(&x->view);
    rfx_rows_free(&x->bucketed);
    rfx_rows_free(&x->got);
    free(x);
    free(be);
}

static size_t dist_count(rfx_backend *be, int var)
{
    return (size_t)((dist_ctx *)be->ctx)->global[var];
}

static void dist_release(rfx_backend *be, int var)
{
    dist_ctx *x = be->ctx;
    x->in->release(x->in, var);
    x->global[var] = 0;
}

/* rows are the same on every process (each read the same file, or the caller inserted the
 * same tuples everywhere): each keeps its own. The sizes are agreed by the next settle. */
static rfx_status dist_merge_host(rfx_backend *be, int var, rfx_rows *rows)
{
    dist_ctx *x = be->ctx;
    keep_owned(x, rows);
    return x->in->merge_host(x->in, var, rows);
}

/* The whole relation on every process (collective). */
static rfx_status dist_host_view(rfx_backend *be, int var, rfx_rows *scratch, const rfx_rows **view)
{
    dist_ctx *x = be->ctx;
    rfx_rows mine;
    rfx_rows_init(&mine, scratch->arity);
    rfx_status st = local_rows(x, var, &mine);
    rfx_status cs = rfx_comm_gather_rows(x->comm, &mine, st != RFX_OK, scratch);
    st = st != RFX_OK ? st : cs;
    rfx_rows_free(&mine);
    if (st == RFX_OK)
        st = order_rows(x, var, scratch);
    *view = scratch;
    return st;
}

/* rows are the whole of var's new contents, the same on every process. */
static rfx_status dist_load_host(rfx_backend *be, int var, const rfx_rows *rows)
{
    dist_ctx *x = be->ctx;
    rfx_rows own;
    rfx_rows_init(&own, rows->arity);
    rfx_status st = rfx_rows_append(&own, rows);
    if (st == RFX_OK) {
        keep_owned(x, &own);
        st = replace(x, var, &own);
    }
    rfx_rows_free(&own);
    return st;
}

static const char *dist_last_error(rfx_backend *be)
{
    dist_ctx *x = be->ctx;
    const char *in = x->in->last_error(x->in);
    snprintf(x->err, sizeof x->err, "process %d of %d%s%s", x->rank, x->size, in && *in ? ": " : "", in ? in : "");
    return x->err;
}

static rfx_status dist_sync(rfx_backend *be)
{
    dist_ctx *x = be->ctx;
    return x->in->sync(x->in);
}

static double dist_copy_bandwidth(rfx_backend *be)
{
    dist_ctx *x = be->ctx;
    return x->in->copy_bandwidth(x->in);
}

static const char *dist_device(rfx_backend *be)
{
    dist_ctx *x = be->ctx;
    return x->in->device(x->in);
}

static void dist_jit_stats(rfx_backend *be, int *compiled, int *cached, double *compile_ms, double *cache_ms)
{
    dist_ctx *x = be->ctx;
    *compiled = *cached = 0;
    *compile_ms = *cache_ms = 0;
    if (x->in->jit_stats)
        x->in->jit_stats(x->in, compiled, cached, compile_ms, cache_ms);
}

static void dist_loop_iteration(rfx_backend *be, int iteration, size_t delta_rows)
{
    dist_ctx *x = be->ctx;
    if (x->in->loop_iteration)
        x->in->loop_iteration(x->in, iteration, delta_rows);
}

bool rfx_dist_stats_of(rfx_backend *be, rfx_dist_stats *st, size_t *local)
{
    if (be->exec != dist_exec)
        return false;
    dist_ctx *x = be->ctx;
    *st = x->st;
    for (int v = 0; local && v < x->P->nvars; v++)
        local[v] = x->P->vars[v].count_only && x->rank ? 0 : x->in->count(x->in, v);
    return true;
}

rfx_backend *rfx_backend_dist(rfx_backend *inner, rfx_comm *comm, int nthreads)
{
    rfx_backend *be = rfx_calloc(1, sizeof *be);
    dist_ctx *x = rfx_calloc(1, sizeof *x);
    if (!be || !x) {
        free(be);
        free(x);
        inner->close(inner);
        return NULL;
    }
    *x = (dist_ctx){.in = inner, .comm = comm, .rank = rfx_comm_rank(comm), .size = rfx_comm_size(comm),
                    .nthreads = nthreads > 0 ? nthreads : 1};
    *be = (rfx_backend){.name = inner->name, .ctx = x, .open_vars = dist_open, .close = dist_close,
                        .count = dist_count, .release = dist_release, .merge_host = dist_merge_host,
                        .host_view = dist_host_view, .exec = dist_exec, .exec_group = dist_exec_group,
                        .last_error = dist_last_error, .sync = dist_sync, .copy_bandwidth = dist_copy_bandwidth,
                        .device = dist_device, .jit_stats = dist_jit_stats, .load_host = dist_load_host,
                        .loop_iteration = dist_loop_iteration, .settle = dist_settle,
                        .rank = x->rank, .nranks = x->size};
    return be;
}
