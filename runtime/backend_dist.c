/* backend_dist.c: one process's share of a run spread over the processes of an MPI job
 * (comm.h), around the backend that holds that share (CPU, CUDA, auto, out of core).
 *
 * Every variable is hash-partitioned on one of its columns, pcol[v]: a tuple t lives on
 * process owner(t[pcol]) = mix(t[pcol]) mod P (nullary tuples on process 0). Relations,
 * deltas and new tuples are always placed by column 0; a temporary may be placed by the
 * column its source's placing column went to (a projection that reorders columns moves
 * nothing). A command computes its part locally where its sources meet: a join's and a set
 * operation's where both are placed by the same key column, a join's also where one side
 * stays as it is placed and the other is read whole from a replica. The planner's rule:
 * whichever moves fewer rows, and a relation a loop reads but does not change (an edge
 * relation under a closure) is replicated once and kept while it stays unchanged, so
 * such loops exchange nothing. Sources that do not meet move to their owners by column 0;
 * an output that does not hold its placing column (or is a relation's) is sent to its
 * owners by column 0. The few commands that need whole relations (choice, equivalence
 * closure, a key prefix of length 0) or that may make symbols and records (functors: every
 * process must make the same ones in the same order, so that ids agree) run on every
 * process over replicas of their sources, and each keeps its own part of the output; a
 * triejoin reads its sources that begin with its first variable as this process's part
 * and the others whole, so its bindings split by the first variable.
 *
 * Hot keys: a join's work lands where its sources are placed, every row of one key on the
 * process its hash names, so a key holding much of a side (a hub of a power-law graph)
 * would leave that process with most of the join. Before a join whose placed side is
 * unbalanced (its largest process part over dist_skew times the mean), the processes agree
 * on its hot keys, the values of the placing column that hold at least dist_hot_part (half)
 * of a mean part of a side. A hot key's rows are spread over the processes by a hash of
 * the whole row on the side that has more of them and gathered to every process on the
 * other (BPRA's sub-buckets, their partner rows broadcast), so every pair of rows still
 * meets on exactly one process; where the other side is read whole, the placed side's hot
 * rows are spread alone. The join's output is then placed by no column and goes to its
 * owners after.
 *
 * Sizes are agreed after every command (rfx_backend.settle), so count() is the same
 * number on every process and costs no transfer, and control flow (loop tests, guards)
 * and every placing decision take the same path everywhere. */
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
    uint16_t *dest;            /* bucketing: each row's owner, from the count to the placing pass */
    size_t dest_cap;
    int *pcol;                 /* per variable: the column whose value places its tuples (see above) */
    bool *sorted_set;          /* per variable: received sorted and without repeats (read only by
                                * SORT_UNIQUE, which copies it) */
    bool *kept;                /* per variable: a replica of it is kept, current, in variable 2 * nvars + v */
    uint64_t replica_rows;     /* the most rows of a replica kept across a loop's iterations */
    double skew;               /* a join side whose largest part is over skew x the mean: hot keys spread */
    uint64_t hot_rows;         /* ... where the side has at least this many tuples */
    double hot_part;           /* a hot key: at least this share of a mean part of a side */
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

/* The hash scaled to [0, P) by a multiply and a shift (a division per row costs more than
 * the rest of bucketing). */
static int owner(const dist_ctx *x, const uint32_t *row, int arity)
{
    return arity ? (int)(((uint64_t)mix(row[0]) * (uint64_t)x->size) >> 32) : 0;
}

/* The owner of a hot key's row: a hash of the whole row, so that one key's rows spread. */
static int row_owner(const dist_ctx *x, const uint32_t *row, int arity)
{
    uint32_t h = 0x9e3779b9u;
    for (int i = 0; i < arity; i++)
        h = mix(h ^ row[i]) + (uint32_t)i;
    return (int)(((uint64_t)h * (uint64_t)x->size) >> 32);
}

/* v's replica for one command, and the replica kept while v is unchanged. */
static int twin_of(const dist_ctx *x, int v)
{
    return v < 0 ? v : x->P->nvars + v;
}

static int kept_of(const dist_ctx *x, int v)
{
    return 2 * x->P->nvars + v;
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
 * places them at its offset in each owner's bucket (the order of rows within a bucket
 * kept). The owners found by counting are kept for placing where they fit 16 bits. */
typedef struct bucketing {
    const dist_ctx *x;
    const rfx_rows *in;
    rfx_rows *out;
    uint16_t *dest;            /* NULL: found again */
    size_t *at;                /* T rows of `stride`: chunk t's count for owner p, then its next place */
    size_t stride;             /* P and at least a cache line more: no two chunks write one line */
    int T;
    bool by_row;               /* owners by row_owner (hot keys' rows), not by column 0 */
} bucketing;

static void chunk_range(const bucketing *k, int t, size_t *lo, size_t *hi)
{
    *lo = k->in->n * (size_t)t / (size_t)k->T;
    *hi = k->in->n * (size_t)(t + 1) / (size_t)k->T;
}

static void count_chunk(int t, void *ctx)
{
    bucketing *k = ctx;
    size_t lo, hi, *at = k->at + (size_t)t * k->stride;
    int a = k->in->arity;
    chunk_range(k, t, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        const uint32_t *row = k->in->data + i * (size_t)a;
        int p = k->by_row ? row_owner(k->x, row, a) : owner(k->x, row, a);
        if (k->dest)
            k->dest[i] = (uint16_t)p;
        at[p]++;
    }
}

static void place_chunk(int t, void *ctx)
{
    bucketing *k = ctx;
    size_t lo, hi, *at = k->at + (size_t)t * k->stride;
    int a = k->in->arity;
    chunk_range(k, t, &lo, &hi);
    if (a == 2 && k->dest) {   /* the common pair: a copy of constant size, one move */
        const uint32_t *in = k->in->data;
        uint32_t *out = k->out->data;
        for (size_t i = lo; i < hi; i++)
            memcpy(out + 2 * at[k->dest[i]]++, in + 2 * i, 8);
        return;
    }
    for (size_t i = lo; i < hi && a; i++) {
        const uint32_t *row = k->in->data + i * (size_t)a;
        int p = k->dest ? k->dest[i] : k->by_row ? row_owner(k->x, row, a) : owner(k->x, row, a);
        memcpy(k->out->data + at[p]++ * (size_t)a, row, sizeof(uint32_t) * (size_t)a);
    }
}

/* out = in's rows bucketed by owner (row_owner where by_row); counts[p] = rows for process p. */
static rfx_status bucket(dist_ctx *x, const rfx_rows *in, rfx_rows *out, size_t *counts, bool by_row)
{
    int T = in->n < 65536 ? 1 : x->nthreads, P = x->size;
    if (P <= 65536 && in->n > x->dest_cap) {
        free(x->dest);
        x->dest_cap = in->n + in->n / 2;
        if (!(x->dest = rfx_malloc(sizeof(uint16_t) * x->dest_cap)))
            x->dest_cap = 0;
    }
    size_t stride = ((size_t)P + 7) / 8 * 8 + 8;
    bucketing k = {x, in, out, P <= 65536 && in->n <= x->dest_cap ? x->dest : NULL,
                   rfx_calloc((size_t)T * stride, sizeof(size_t)), stride, T, by_row};
    if (!k.at || rfx_rows_reserve(out, in->n) != RFX_OK) {
        free(k.at);
        return RFX_ERR_NOMEM;
    }
    rfx_parallel_for(T, T, count_chunk, &k);
    size_t next = 0;
    for (int p = 0; p < P; p++) {
        counts[p] = 0;
        for (int t = 0; t < T; t++) {
            size_t n = k.at[(size_t)t * stride + (size_t)p];
            k.at[(size_t)t * stride + (size_t)p] = next;
            next += n;
            counts[p] += n;
        }
    }
    rfx_parallel_for(T, T, place_chunk, &k);
    out->n = in->n;
    free(k.at);
    return RFX_OK;
}

/* Variable into = rows, ordered as a sorted variable keeps them (and without repeats for
 * v's kind of set, or where only SORT_UNIQUE reads v): a temporary may have been sorted on
 * a prefix its readers count on, which the full order keeps. The sort is the backend's (on
 * its device), from variable staging, emptied after. */
static rfx_status place_sorted(dist_ctx *x, int v, int into, int staging, const rfx_rows *rows)
{
    rfx_status st = replace(x, staging, rows);
    rfx_ra_cmd sort = {.op = is_set(x, v) || x->P->vars[v].set_read ? RFX_RA_SORT_UNIQUE : RFX_RA_SORT,
                       .dst = into, .src = {staging, -1}, .rule = -1, .io = -1};
    if (st == RFX_OK)
        st = x->in->exec(x->in, &sort);
    x->in->release(x->in, staging);
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

/* Variable v's rows sent to their owners (placed by column 0 after); a temporary only
 * SORT_UNIQUE reads sends its rows without repeats (a join's output holds several rows for
 * many of its tuples). */
static rfx_status repartition(dist_ctx *x, int v, bool failed)
{
    double t0 = rfx_seconds(), t[6];
    t[0] = t0;
    int a = x->P->vars[v].arity, from = v;
    rfx_rows *scratch = reuse(&x->view, a), *bucketed = reuse(&x->bucketed, a), *got = reuse(&x->got, a);
    const rfx_rows *mine = NULL;   /* the backend's own rows where it holds them on the host */
    size_t *counts = rfx_calloc((size_t)x->size, sizeof(size_t));
    rfx_status st = failed ? RFX_ERR_REMOTE : !counts ? RFX_ERR_NOMEM : RFX_OK;
    if (st == RFX_OK && x->P->vars[v].set_read) {
        from = twin_of(x, v);
        rfx_ra_cmd once = {.op = RFX_RA_SORT_UNIQUE, .dst = from, .src = {v, -1}, .rule = -1, .io = -1};
        st = x->in->exec(x->in, &once);
    }
    t[1] = rfx_seconds();
    if (st == RFX_OK)
        st = x->in->host_view(x->in, from, scratch, &mine);
    t[2] = rfx_seconds();
    if (st == RFX_OK)
        st = bucket(x, mine, bucketed, counts, false);
    t[3] = rfx_seconds();
    if (st == RFX_OK) {
        x->st.sent_rows += mine->n - counts[x->rank];
        x->st.sent_bytes += (mine->n - counts[x->rank]) * (size_t)a * 4;
    }
    scratch->n = 0;
    rfx_status cs = rfx_comm_exchange(x->comm, bucketed, counts, st != RFX_OK, got);
    t[4] = rfx_seconds();
    st = st != RFX_OK ? st : cs;
    free(counts);
    if (from != v)
        x->in->release(x->in, from);
    if (st == RFX_OK)
        st = place_sorted(x, v, v, twin_of(x, v), got);
    x->sorted_set[v] = x->P->vars[v].set_read;
    t[5] = rfx_seconds();
    for (int k = 0; k < 5; k++)
        x->st.phase_s[k] += t[k + 1] - t[k];
    bucketed->n = got->n = 0;
    x->pcol[v] = 0;
    x->st.exchanges++;
    x->st.exchange_s += rfx_seconds() - t0;
    return st;
}

/* Variable into = v's rows of every process (one_row: at most one of each process's, where
 * only whether v is empty matters). */
static rfx_status replicate(dist_ctx *x, int v, int into, bool one_row, bool failed)
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
    /* sorted on the device, staged in the other replica's variable unless that one is kept */
    int staging = into == twin_of(x, v) ? kept_of(x, v) : twin_of(x, v);
    if (st == RFX_OK && (all.n < 65536 || (staging == kept_of(x, v) && x->kept[v]))) {
        st = order_rows(x, v, &all);
        if (st == RFX_OK)
            st = replace(x, into, &all);
    } else if (st == RFX_OK)
        st = place_sorted(x, v, into, staging, &all);
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

/* Keeps this process's part of v, which holds the whole (each process computed it). Only
 * triejoins write sizes without rows, and they run split (run_replicated). */
static rfx_status keep_own(dist_ctx *x, int v)
{
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

/* Where output column k is plain column `col` of the sources (a join's src1 columns
 * follow src0's), or -1. */
static int out_col(const rfx_ra_cmd *c, int col)
{
    for (int k = 0; c->out && k < c->nout; k++)
        if (c->out[k] && c->out[k]->kind == RFX_RX_COL && c->out[k]->col == col)
            return k;
    return -1;
}

/* How one command runs over the partitioned variables. */
typedef struct shape {
    bool gather_all;           /* every process runs it over replicas of its sources */
    bool move[2];              /* src[k] is sent to its owners (by its first column) first */
    bool whole[2];             /* src[k] is read as a replica */
    bool one_row;              /* ... of at most one row a process: only its emptiness matters */
    int out;                   /* the column that places the output; -1: sent to its owners after */
} shape;

/* Whether the loop that runs c (if any) leaves v alone, so that a replica of v made in
 * one iteration serves the others. */
static bool loop_invariant(const dist_ctx *x, const rfx_ra_cmd *c, int v)
{
    const rfx_plan *P = x->P;
    int head = -1;
    for (int b = 0; b < P->nblocks; b++) {
        uintptr_t lo = (uintptr_t)P->blocks[b].cmds, at = (uintptr_t)c;
        if (at >= lo && at < lo + sizeof(rfx_ra_cmd) * (size_t)P->blocks[b].ncmds)
            head = P->blocks[b].loop_head;
    }
    for (int b = 0; head >= 0 && b < P->nblocks; b++)
        for (int i = 0; P->blocks[b].loop_head == head && i < P->blocks[b].ncmds; i++) {
            const rfx_ra_cmd *w = &P->blocks[b].cmds[i];
            if (w->dst == v || (w->op == RFX_RA_SWAP && w->src[0] == v))
                return false;
        }
    return head >= 0;
}

/* Rows every process receives if v is replicated for c: none where a current replica is
 * kept, or where v is small and the loop does not change it (the replica, kept, serves
 * every iteration); UINT64_MAX where v is too big to replicate. */
static uint64_t replica_cost(const dist_ctx *x, const rfx_ra_cmd *c, int v)
{
    if (x->kept[v])
        return 0;
    if (x->global[v] > x->replica_rows)
        return UINT64_MAX;
    return loop_invariant(x, c, v) ? 0 : x->global[v] * (uint64_t)(x->size - 1);
}

/* Sources that must meet on a key prefix of nkeys columns: where both are placed by the
 * same key column they do; else the ones placed otherwise move to their owners. */
static int meet(const dist_ctx *x, const rfx_ra_cmd *c, shape *s, int nkeys)
{
    int a = x->pcol[c->src[0]], b = x->pcol[c->src[1]];
    if (a == b && a < nkeys)
        return a;
    s->move[0] = a != 0;
    s->move[1] = b != 0;
    return 0;
}

/* A keyed join: its sources meet on the key (moving those placed otherwise), or one stays
 * where it is and the other is replicated, whichever moves fewer rows. The output stays
 * where it is made when it holds the column that placed it. */
static void join_shape(const dist_ctx *x, const rfx_ra_cmd *c, shape *s)
{
    int s0 = c->src[0], s1 = c->src[1], a0 = x->P->vars[s0].arity;
    int a = x->pcol[s0], b = x->pcol[s1];
    if (a == b && a < c->nkeys) {
        int k = out_col(c, a);
        s->out = k >= 0 ? k : out_col(c, a0 + a);
        return;
    }
    uint64_t move = (a ? x->global[s0] : 0) + (b ? x->global[s1] : 0);
    uint64_t keep0 = replica_cost(x, c, s1), keep1 = replica_cost(x, c, s0);
    if (move <= keep0 && move <= keep1) {
        s->move[0] = a != 0;
        s->move[1] = b != 0 && !(s1 == s0 && a != 0);
        s->out = out_col(c, 0) >= 0 ? out_col(c, 0) : out_col(c, a0);
    } else if (keep0 <= keep1) {
        s->whole[1] = true;
        s->out = out_col(c, a);
    } else {
        s->whole[0] = true;
        s->out = out_col(c, a0 + b);
    }
}

/* The shape of c, from where its sources' tuples are (pcol) and how big they are. */
static void shape_of(const dist_ctx *x, const rfx_ra_cmd *c, shape *s)
{
    *s = (shape){.out = -1};
    int a = c->src[0] >= 0 ? x->pcol[c->src[0]] : 0;
    if (c->functors) {
        s->gather_all = true;
        return;
    }
    switch (c->op) {
    case RFX_RA_SELECT: case RFX_RA_SORT: case RFX_RA_UNIQUE: case RFX_RA_SORT_UNIQUE: case RFX_RA_COPY:
        s->out = a;
        break;
    case RFX_RA_UNION:   /* the same tuple on the same process */
        s->out = meet(x, c, s, x->P->vars[c->src[0]].arity + 1);
        break;
    case RFX_RA_INTERSECT: case RFX_RA_DIFFERENCE:
        if (c->nkeys == 0) {
            s->whole[1] = s->one_row = true;
            s->out = a;
        } else
            s->out = meet(x, c, s, c->nkeys);
        break;
    case RFX_RA_PROJECT: case RFX_RA_MAP: case RFX_RA_MAPFILTER:
        s->out = out_col(c, a);
        break;
    case RFX_RA_JOIN: case RFX_RA_MAPJOIN: case RFX_RA_PRODUCT:
        if (c->op == RFX_RA_PRODUCT || c->nkeys == 0) {   /* a nullary src0 is process 0's */
            s->whole[1] = true;
            s->out = x->P->vars[c->src[0]].arity ? out_col(c, a) : -1;
        } else
            join_shape(x, c, s);
        break;
    case RFX_RA_AGGREGATE:   /* src0's columns, then the value */
        if (c->nkeys == 0)
            s->whole[1] = true;
        else
            a = meet(x, c, s, c->nkeys);
        s->out = x->P->vars[c->src[0]].arity ? a : -1;
        break;
    case RFX_RA_RANGE:
        s->out = x->P->vars[c->src[0]].arity ? a : -1;
        break;
    case RFX_RA_LATTICE:   /* src0 against the held relation (vars[0]), placed by column 0 */
        if (c->nkeys > 0) {
            s->move[0] = a != 0;
            s->out = 0;
        } else
            s->gather_all = true;
        break;
    default:   /* CHOICE, EQREL, LFTJ: the whole relations */
        s->gather_all = true;
    }
    /* nullary tuples are process 0's; relations and their deltas are placed by column 0 */
    if (c->dst < 0 || x->P->vars[c->dst].arity == 0 || (s->out != 0 && x->P->vars[c->dst].kind != RFX_PV_TEMP))
        s->out = -1;
}

/* v's contents change: a replica kept of it is stale, and it is no longer a sorted set. */
static void forget(dist_ctx *x, int v)
{
    if (v >= 0)
        x->sorted_set[v] = false;
    if (v >= 0 && x->kept[v]) {
        x->in->release(x->in, kept_of(x, v));
        x->kept[v] = false;
    }
}

/* *at = a variable holding v's rows of every process, for c: the kept replica where there
 * is one; one made and kept where replica_cost counts it as free; else a replica for c
 * alone, in v's twin (released after c). */
static rfx_status whole(dist_ctx *x, const rfx_ra_cmd *c, int v, bool one_row, bool failed, int *at)
{
    if (!one_row && x->kept[v]) {
        *at = kept_of(x, v);
        x->st.kept_reads++;
        return failed ? RFX_ERR_REMOTE : RFX_OK;
    }
    bool keep = !one_row && replica_cost(x, c, v) == 0;
    *at = keep ? kept_of(x, v) : twin_of(x, v);
    rfx_status st = replicate(x, v, *at, one_row, failed);
    x->kept[v] = keep && st == RFX_OK;
    return st;
}

/* The replicas c read that were made for it alone (each once). */
static void release_replicas(dist_ctx *x, const int *at, const int *of, int n)
{
    for (int k = 0; k < n; k++) {
        bool again = false;
        for (int j = 0; j < k; j++)
            again |= at[j] == at[k];
        if (of[k] >= 0 && at[k] == twin_of(x, of[k]) && !again)
            x->in->release(x->in, at[k]);
    }
}

/* Runs c with every source (and variable it reads in vars) read whole; then keeps this
 * process's part of the output. A triejoin with an output is split instead: the sources
 * that begin with its first variable are read as this process's part (every source that
 * holds that variable begins with it, the first in every trie's order), so its bindings
 * are this process's part of the output (or of the count). */
static rfx_status run_replicated(dist_ctx *x, const rfx_ra_cmd *c)
{
    int at[66], of[66], n = 2 + c->nvars, vars[64];
    if (c->nvars > 64)
        return RFX_ERR_LIMIT;
    bool split = c->op == RFX_RA_LFTJ && c->dst >= 0 && x->P->vars[c->dst].arity > 0;
    bool local[66] = {false};
    rfx_status st = RFX_OK;
    for (int k = 0, off = 0; k < n; k++) {   /* the parts first: a move stages in the twin */
        int v = of[k] = at[k] = k < 2 ? c->src[k] : c->vars[k - 2];
        if (k >= 2 && split) {
            local[k] = c->colvar[off] == 0;
            off += x->P->vars[v].arity;
        }
        if (local[k] && x->pcol[v] != 0)
            st = repartition(x, v, st != RFX_OK);
    }
    for (int k = 0; k < n; k++) {
        int v = of[k], same = -1;   /* a variable read twice is gathered once */
        if (v < 0 || local[k])
            continue;
        for (int j = 0; j < k; j++)
            if (of[j] == v && at[j] != v)
                same = j;
        if (same >= 0)
            at[k] = at[same];
        else
            st = whole(x, c, v, false, st != RFX_OK, &at[k]);
    }
    rfx_ra_cmd t = *c;
    t.src[0] = at[0];
    t.src[1] = at[1];
    t.range &= at[1] == c->src[1];   /* rows moved or gathered are sorted on the keys alone */
    for (int k = 0; k < c->nvars; k++)
        vars[k] = at[2 + k];
    t.vars = c->nvars ? vars : NULL;
    double t0 = rfx_seconds();
    if (st == RFX_OK)
        st = x->in->exec(x->in, &t);
    x->st.compute_s += rfx_seconds() - t0;
    x->st.replicated += !split;
    release_replicas(x, at, of, n);
    return st == RFX_OK && c->dst >= 0 && !split ? keep_own(x, c->dst) : st;
}

/* The values of column col of r, sorted with their repeats: a side's rows per key. */
static rfx_status column_values(const dist_ctx *x, const rfx_rows *r, int col, rfx_rows *vals)
{
    rfx_status st = rfx_rows_reserve(vals, r->n);
    for (size_t i = 0; st == RFX_OK && i < r->n; i++)
        vals->data[i] = r->data[i * (size_t)r->arity + (size_t)col];
    if (st != RFX_OK)
        return st;
    vals->n = r->n;
    return rfx_cpu_sort(vals, x->nthreads);
}

/* Rows of vals (one sorted column) equal to v. */
static uint64_t rows_of_value(const rfx_rows *vals, uint32_t v)
{
    size_t lo = rfx_rows_bound(vals, 0, &v, 1, false);
    return rfx_rows_bound(vals, lo, &v, 1, true) - lo;
}

/* This process's hot keys of a join's placed sides (side k's values in column col[k], its
 * rows in rows[k] and their sorted values in vals[k]): a key with at least thr[k] rows of a
 * side, as rows (value, its rows in side 0, in side 1). Every row of a key is on this
 * process (placed by it), so these are the key's counts over the whole job. */
static rfx_status local_hot_keys(const rfx_rows *vals, const uint64_t *thr, const bool *placed, rfx_rows *hot)
{
    rfx_status st = RFX_OK;
    for (int k = 0; k < 2 && st == RFX_OK; k++)
        for (size_t i = 0, j; placed[k] && i < vals[k].n && st == RFX_OK; i = j) {
            uint32_t v = vals[k].data[i];
            for (j = i + 1; j < vals[k].n && vals[k].data[j] == v; j++)
                ;
            if (j - i < thr[k])
                continue;
            uint64_t n0 = placed[0] ? rows_of_value(&vals[0], v) : 0, n1 = placed[1] ? rows_of_value(&vals[1], v) : 0;
            if (k == 1 && placed[0] && n0 >= thr[0])
                continue;   /* already taken from side 0 */
            uint32_t row[3] = {v, n0 > UINT32_MAX ? UINT32_MAX : (uint32_t)n0, n1 > UINT32_MAX ? UINT32_MAX : (uint32_t)n1};
            st = rfx_rows_push(hot, row);
        }
    return st;
}

/* Side k's rows (placed by column col) split: rows of keys not in hot (sorted (value, rows
 * in side 0, in side 1)) kept; of a hot key, spread where k is the side that spreads it
 * (the one with more of its rows; the placed one where the other is read whole), else
 * gathered to every process. */
static rfx_status split_hot_rows(const rfx_rows *rows, int col, int k, bool meet, const rfx_rows *hot, rfx_rows *keep,
                                 rfx_rows *spread, rfx_rows *gather)
{
    int a = rows->arity;
    rfx_status st = RFX_OK;
    for (size_t i = 0; i < rows->n && st == RFX_OK; i++) {
        const uint32_t *row = rows->data + i * (size_t)a;
        size_t h = rfx_rows_bound(hot, 0, &row[col], 1, false);
        if (h == hot->n || hot->data[3 * h] != row[col])
            st = rfx_rows_push(keep, row);
        else if (!meet || (hot->data[3 * h + 1] >= hot->data[3 * h + 2]) == (k == 0))
            st = rfx_rows_push(spread, row);
        else
            st = rfx_rows_push(gather, row);
    }
    return st;
}

/* The variable side k of c is staged in while its hot keys are spread: v's twin, or the
 * slot of its kept replica where none is kept, whichever the other side does not read;
 * -1 where both are taken (a join of v with itself whose replica is kept). */
static int stage_of(const dist_ctx *x, const rfx_ra_cmd *c, const int *at, int k)
{
    int v = c->src[k], other = at[1 - k];
    if (twin_of(x, v) != other)
        return twin_of(x, v);
    return !x->kept[v] && kept_of(x, v) != other ? kept_of(x, v) : -1;
}

/* Spreads the hot keys of join c (see the file's head) before it runs over at[0..1] (the
 * sources as placed, or replicas where s->whole[k]); each placed side changed is staged
 * and at[k] names its stage. *spread: whether any was (the output is then placed by no
 * column). Collective: a process that failed already (failed) still takes part, and gets
 * RFX_OK back (its own error stands); else RFX_ERR_REMOTE where another failed. */
static rfx_status spread_hot_keys(dist_ctx *x, const rfx_ra_cmd *c, const shape *s, int *at, bool failed, bool *spread)
{
    *spread = false;
    bool join = c->op == RFX_RA_JOIN || c->op == RFX_RA_MAPJOIN || c->op == RFX_RA_PRODUCT;
    if (!join || x->size < 2 || x->skew <= 0)
        return RFX_OK;
    bool placed[2], big = false, meet = !s->whole[0] && !s->whole[1];
    int col[2], stage[2] = {-1, -1}, P = x->size;
    for (int k = 0; k < 2; k++) {
        int v = c->src[k];
        placed[k] = v >= 0 && !s->whole[k] && x->P->vars[v].arity > 0;
        col[k] = placed[k] ? x->pcol[v] : -1;
        big |= placed[k] && x->global[v] >= x->hot_rows;
    }
    if (meet && !(placed[0] && placed[1] && col[0] == col[1]))
        return RFX_OK;   /* not keyed on one column (cannot happen) */
    int staged_at[2] = {at[0], at[1]};
    for (int k = 0; k < 2; k++)
        if (placed[k] && (stage[k] = stage_of(x, c, staged_at, k)) >= 0)
            staged_at[k] = stage[k];
    if (!big || (placed[0] && stage[0] < 0) || (placed[1] && stage[1] < 0))
        return RFX_OK;
    /* whether a placed side is unbalanced: some process's part over skew x the mean
     * (the totals are agreed after every command) */
    uint64_t flags[2] = {failed, 0}, total[2] = {0, 0}, thr[2];
    for (int k = 0; k < 2; k++) {
        total[k] = placed[k] ? x->global[c->src[k]] : 0;
        double part = x->hot_part * (double)total[k] / P;
        thr[k] = total[k] < x->hot_rows ? UINT64_MAX : part > 1 ? (uint64_t)part : 1;
        if (placed[k] && total[k] >= x->hot_rows &&
            (double)x->in->count(x->in, c->src[k]) > x->skew * (double)total[k] / P)
            flags[1] = 1;
    }
    rfx_status st = rfx_comm_sum(x->comm, flags, 2);
    if (st != RFX_OK || flags[0] || !flags[1])   /* the same answer on every process */
        return failed ? RFX_OK : st != RFX_OK || flags[0] ? RFX_ERR_REMOTE : RFX_OK;
    /* the hot keys, agreed: each process's, gathered */
    rfx_rows rows[2], vals[2], hot, hot_all;
    for (int k = 0; k < 2; k++) {
        rfx_rows_init(&rows[k], placed[k] ? x->P->vars[c->src[k]].arity : 1);
        rfx_rows_init(&vals[k], 1);
    }
    rfx_rows_init(&hot, 3);
    rfx_rows_init(&hot_all, 3);
    for (int k = 0; k < 2 && st == RFX_OK; k++)
        if (placed[k]) {
            st = local_rows(x, c->src[k], &rows[k]);
            if (st == RFX_OK)
                st = column_values(x, &rows[k], col[k], &vals[k]);
        }
    if (st == RFX_OK)
        st = local_hot_keys(vals, thr, placed, &hot);
    rfx_status cs = rfx_comm_gather_rows(x->comm, &hot, st != RFX_OK, &hot_all);
    st = st != RFX_OK ? st : cs;
    if (st == RFX_OK)
        st = rfx_cpu_sort(&hot_all, 1);
    for (int k = 0; k < 2; k++)
        rfx_rows_free(&vals[k]);
    /* each placed side: its hot rows spread (and gathered), staged; the same calls everywhere */
    bool any = hot_all.n > 0;   /* agreed, or all failed alike */
    for (int k = 0; k < 2 && any; k++) {
        if (!placed[k])
            continue;
        int a = rows[k].arity;
        rfx_rows keep, out, gather, got, gathered;
        rfx_rows_init(&keep, a);
        rfx_rows_init(&out, a);
        rfx_rows_init(&gather, a);
        rfx_rows_init(&got, a);
        rfx_rows_init(&gathered, a);
        size_t *counts = rfx_calloc((size_t)P, sizeof(size_t));
        if (st == RFX_OK)
            st = counts ? split_hot_rows(&rows[k], col[k], k, meet, &hot_all, &keep, &out, &gather) : RFX_ERR_NOMEM;
        rfx_rows_free(&rows[k]);
        rfx_rows bucketed;
        rfx_rows_init(&bucketed, a);
        if (st == RFX_OK)
            st = bucket(x, &out, &bucketed, counts, true);
        if (st == RFX_OK)
            x->st.spread_rows += out.n - counts[x->rank] + gather.n * (uint64_t)(P - 1);
        cs = rfx_comm_exchange(x->comm, &bucketed, counts, st != RFX_OK, &got);
        st = st != RFX_OK ? st : cs;
        rfx_rows_free(&bucketed);
        rfx_rows_free(&out);
        free(counts);
        if (meet) {   /* the other side's rows of the keys this one spreads */
            cs = rfx_comm_gather_rows(x->comm, &gather, st != RFX_OK, &gathered);
            st = st != RFX_OK ? st : cs;
        }
        rfx_rows parts[3] = {keep, got, gathered}, staged;
        rfx_rows_init(&staged, a);
        if (st == RFX_OK)
            st = rfx_rows_concat(parts, 3, &staged, x->nthreads);
        if (st == RFX_OK)
            st = order_rows(x, c->src[k], &staged);
        if (st == RFX_OK)
            st = replace(x, stage[k], &staged);
        at[k] = stage[k];
        rfx_rows_free(&staged);
        rfx_rows_free(&keep);
        rfx_rows_free(&gather);
        rfx_rows_free(&got);
        rfx_rows_free(&gathered);
    }
    for (int k = 0; k < 2; k++)
        rfx_rows_free(&rows[k]);
    if (any)
        x->st.hot_keys += hot_all.n;
    rfx_rows_free(&hot);
    rfx_rows_free(&hot_all);
    *spread = any;
    return failed ? RFX_OK : st;
}

static rfx_status dist_exec(rfx_backend *be, const rfx_ra_cmd *c)
{
    dist_ctx *x = be->ctx;
    if (c->op == RFX_RA_SWAP || c->op == RFX_RA_CLEAR) {
        forget(x, c->dst);
        if (c->op == RFX_RA_SWAP) {
            forget(x, c->src[0]);
            int p = x->pcol[c->dst];
            x->pcol[c->dst] = x->pcol[c->src[0]];
            x->pcol[c->src[0]] = p;
        } else
            x->pcol[c->dst] = 0;
        return x->in->exec(x->in, c);
    }
    shape s;
    shape_of(x, c, &s);
    if (s.gather_all) {
        rfx_status st = run_replicated(x, c);
        forget(x, c->dst);
        if (c->dst >= 0)
            x->pcol[c->dst] = 0;
        return st;
    }
    rfx_status st = RFX_OK;
    int at[2] = {c->src[0], c->src[1]};
    for (int k = 0; k < 2; k++)
        if (s.move[k])
            st = repartition(x, c->src[k], st != RFX_OK);
    for (int k = 0; k < 2; k++)
        if (s.whole[k])
            st = whole(x, c, c->src[k], s.one_row, st != RFX_OK, &at[k]);
    bool spread = false;
    rfx_status hs = spread_hot_keys(x, c, &s, at, st != RFX_OK, &spread);
    st = st != RFX_OK ? st : hs;
    if (spread)
        s.out = -1;   /* a hot key's output rows are made where its rows were spread */
    rfx_ra_cmd t = *c;
    t.src[0] = at[0];
    t.src[1] = at[1];
    t.range &= at[1] == c->src[1];   /* rows moved or gathered are sorted on the keys alone */
    if (c->op == RFX_RA_SORT_UNIQUE && x->sorted_set[c->src[0]])
        t.op = RFX_RA_COPY;   /* sorted without repeats as it was received */
    double t0 = rfx_seconds();
    if (st == RFX_OK)
        st = x->in->exec(x->in, &t);
    x->st.compute_s += rfx_seconds() - t0;
    if (st == RFX_OK && c->dst >= 0 && (c->op == RFX_RA_JOIN || c->op == RFX_RA_MAPJOIN || c->op == RFX_RA_PRODUCT))
        x->st.joined_rows += x->in->count(x->in, c->dst);
    for (int k = 0; k < 2; k++)   /* a stage in the slot of a replica not kept */
        if (c->src[k] >= 0 && at[k] == kept_of(x, c->src[k]) && !x->kept[c->src[k]])
            x->in->release(x->in, at[k]);
    release_replicas(x, at, c->src, 2);
    if (c->dst < 0)
        return st;
    forget(x, c->dst);
    if (s.out < 0) {   /* collective: a process that failed still takes part */
        rfx_status moved = repartition(x, c->dst, st != RFX_OK);
        st = st != RFX_OK ? st : moved;
    } else
        x->pcol[c->dst] = s.out;
    return st;
}

static rfx_status dist_settle(rfx_backend *be, const int *vars, int nvars, rfx_status mine, int *reporter);

/* A fused group runs member by member: each member's output may have to move before the
 * next reads it. The processes agree after each member, so that where one fails none runs
 * the next member's transfers alone, and on the size of what it made, which the next
 * member's placement weighs (a join moving a temporary taken as empty instead of
 * replicating a small relation). */
static rfx_status dist_exec_group(rfx_backend *be, const rfx_fgroup *g)
{
    dist_ctx *x = be->ctx;
    rfx_status st = RFX_OK;
    for (int m = 0; m < g->nmembers && st == RFX_OK; m++) {
        const rfx_ra_cmd *c = &x->P->blocks[g->members[m].block].cmds[g->members[m].cmd];
        st = dist_exec(be, c);
        if (c->dst >= 0 && m + 1 < g->nmembers) {
            int reporter;
            rfx_status all = dist_settle(be, &c->dst, 1, st, &reporter);
            st = st != RFX_OK ? st : all != RFX_OK ? RFX_ERR_REMOTE : RFX_OK;
        } else
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
    x->twin.nvars = x->twin.varcap = 3 * P->nvars;
    x->twin_vars = rfx_malloc(sizeof(rfx_pvar) * (size_t)x->twin.nvars);
    x->global = rfx_calloc((size_t)P->nvars, sizeof(uint64_t));
    x->agreed = rfx_calloc((size_t)x->size + (size_t)P->nvars, sizeof(uint64_t));
    if (!x->twin_vars || !x->global || !x->agreed)
        return RFX_ERR_NOMEM;
    x->pcol = rfx_calloc((size_t)P->nvars, sizeof(int));
    x->sorted_set = rfx_calloc((size_t)P->nvars, sizeof(bool));
    x->kept = rfx_calloc((size_t)P->nvars, sizeof(bool));
    if (!x->pcol || !x->kept || !x->sorted_set)
        return RFX_ERR_NOMEM;
    memcpy(x->twin_vars, P->vars, sizeof(rfx_pvar) * (size_t)P->nvars);
    memcpy(x->twin_vars + P->nvars, P->vars, sizeof(rfx_pvar) * (size_t)P->nvars);
    memcpy(x->twin_vars + 2 * P->nvars, P->vars, sizeof(rfx_pvar) * (size_t)P->nvars);
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
    free(x->pcol);
    free(x->sorted_set);
    free(x->kept);
    rfx_rows_free(&x->view);
    rfx_rows_free(&x->bucketed);
    rfx_rows_free(&x->got);
    free(x->dest);
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
    forget(x, var);
    x->in->release(x->in, var);
    x->global[var] = 0;
    x->pcol[var] = 0;
}

/* rows are the same on every process (each read the same file, or the caller inserted the
 * same tuples everywhere): each keeps its own. The sizes are agreed by the next settle. */
static rfx_status dist_merge_host(rfx_backend *be, int var, rfx_rows *rows)
{
    dist_ctx *x = be->ctx;
    forget(x, var);
    keep_owned(x, rows);   /* a relation's, placed by column 0 */
    return x->in->merge_host(x->in, var, rows);
}

/* rows are this process's slice of a file, as read: each goes to its owner, which sorts
 * what it receives, drops repeats and merges it (collective). */
static rfx_status dist_merge_slices(rfx_backend *be, int var, rfx_rows *rows, bool failed)
{
    dist_ctx *x = be->ctx;
    forget(x, var);
    int a = rows->arity;
    size_t *counts = rfx_calloc((size_t)x->size, sizeof(size_t));
    rfx_rows bucketed, got;
    rfx_rows_init(&bucketed, a);
    rfx_rows_init(&got, a);
    rfx_status st = failed ? RFX_ERR_REMOTE : !counts ? RFX_ERR_NOMEM : bucket(x, rows, &bucketed, counts, false);
    if (st == RFX_OK) {
        x->st.sent_rows += rows->n - counts[x->rank];
        x->st.sent_bytes += (rows->n - counts[x->rank]) * (size_t)a * 4;
    }
    rfx_rows_free(rows);
    rfx_status cs = rfx_comm_exchange(x->comm, &bucketed, counts, st != RFX_OK, &got);
    st = st != RFX_OK ? st : cs;
    rfx_rows_free(&bucketed);
    free(counts);
    if (st == RFX_OK)
        st = order_rows(x, var, &got);   /* sorted once, here: the slices arrive as read */
    if (st == RFX_OK)
        st = x->in->merge_host(x->in, var, &got);
    rfx_rows_free(&got);
    return st;
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
    forget(x, var);
    x->pcol[var] = 0;
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

static void dist_loop_iteration(rfx_backend *be, int iteration, size_t delta_rows, const rfx_ra_cmd *test)
{
    dist_ctx *x = be->ctx;
    if (x->in->loop_iteration)
        x->in->loop_iteration(x->in, iteration, delta_rows, test);
}

bool rfx_dist_stats_of(rfx_backend *be, rfx_dist_stats *st, size_t *local)
{
    if (be->exec != dist_exec)
        return false;
    dist_ctx *x = be->ctx;
    *st = x->st;
    for (int v = 0; local && v < x->P->nvars; v++)
        local[v] = x->in->count(x->in, v);
    return true;
}

rfx_backend *rfx_backend_dist(rfx_backend *inner, rfx_comm *comm, int nthreads, const rfx_tuning *tune)
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
                    .nthreads = nthreads > 0 ? nthreads : 1,
                    .replica_rows = (tune ? tune : &rfx_tuning_defaults)->dist_replica_rows,
                    .skew = (tune ? tune : &rfx_tuning_defaults)->dist_skew,
                    .hot_rows = (tune ? tune : &rfx_tuning_defaults)->dist_hot_rows,
                    .hot_part = (tune ? tune : &rfx_tuning_defaults)->dist_hot_part};
    *be = (rfx_backend){.name = inner->name, .ctx = x, .open_vars = dist_open, .close = dist_close,
                        .count = dist_count, .release = dist_release, .merge_host = dist_merge_host,
                        .merge_host_slices = dist_merge_slices,
                        .host_view = dist_host_view, .exec = dist_exec, .exec_group = dist_exec_group,
                        .last_error = dist_last_error, .sync = dist_sync, .copy_bandwidth = dist_copy_bandwidth,
                        .device = dist_device, .jit_stats = dist_jit_stats, .load_host = dist_load_host,
                        .loop_iteration = dist_loop_iteration, .settle = dist_settle,
                        .rank = x->rank, .nranks = x->size};
    return be;
}
