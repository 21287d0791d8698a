/* weaver.c: fusion groups over the query plan (thesis Algorithms 1 and 2) and their
 * printer. Code generation is in codegen.c. */
#include "weaver.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_REGS 96
#define DEFAULT_SMEM (48 * 1024)
#define MAX_CONJ 64
#define MAX_MEMBERS 32
#define MAX_KEYS 16            /* key columns a probe's group takes from anywhere in its first source */

typedef struct pos {
    int block, cmd;
} pos;

typedef struct wctx {
    rfx_weave *w;
    const rfx_plan *P;
    rfx_weave_opts o;
    int *uses, *defs;          /* per variable: commands reading / writing it */
    int *region_end;           /* per block: last block of its straight-line region */
    int cap;                   /* groups allocated */
} wctx;

static const rfx_ra_cmd *cmd_at(const rfx_plan *P, pos p)
{
    return &P->blocks[p.block].cmds[p.cmd];
}

static bool writes(const rfx_ra_cmd *c, int var)
{
    return c->dst == var || (c->op == RFX_RA_SWAP && c->src[0] == var);
}

static bool reads(const rfx_ra_cmd *c, int var)
{
    for (int k = 0; k < rfx_ra_cmd_ninputs(c); k++)
        if (rfx_ra_cmd_input(c, k) == var)
            return true;
    return false;
}

static bool is_elementwise(rfx_ra_op op)
{
    return op == RFX_RA_SELECT || op == RFX_RA_PROJECT || op == RFX_RA_MAP || op == RFX_RA_MAPFILTER;
}

/* Whether a generated kernel may run c: not what only the host runs, nor expressions
 * calling functors (the device's interpreter runs those, unfused). 64-bit expressions are
 * generated with base/rx_ops.h's functions (codegen.c). */
static bool weavable(const rfx_ra_cmd *c)
{
    return !c->host_only && !c->functors;
}

static bool is_control(rfx_ra_op op)
{
    return op == RFX_RA_JUMP || op == RFX_RA_JUMP_IF_EMPTY || op == RFX_RA_JUMP_IF_FULL || op == RFX_RA_HALT;
}

/* Steps to the next command in plan order inside a straight-line region; false at its end. */
static bool next_pos(const wctx *x, int region_end, pos *p)
{
    p->cmd++;
    while (p->cmd >= x->P->blocks[p->block].ncmds) {
        if (p->block >= region_end)
            return false;
        p->block++;
        p->cmd = 0;
    }
    return true;
}

/* Whether a command in the open interval (from, to) of one region writes var (or, with
 * also_reads, reads it). */
static bool touched_between(const wctx *x, pos from, pos to, int var, bool also_reads)
{
    pos p = from;
    while (next_pos(x, x->region_end[from.block], &p) && (p.block != to.block || p.cmd != to.cmd)) {
        const rfx_ra_cmd *c = cmd_at(x->P, p);
        if (writes(c, var) || (also_reads && reads(c, var)))
            return true;
    }
    return false;
}

/* ---- expressions ------------------------------------------------------------------------ */
static int rx_nodes(const rfx_rx *e)
{
    return e ? 1 + rx_nodes(e->l) + rx_nodes(e->r) : 0;
}

/* Whether evaluating c's expressions can fail (rfx_rx_may_fail; functors are never woven):
 * such expressions are not moved ahead of the filters that guard them. */
static bool cmd_can_fail(const rfx_ra_cmd *c)
{
    if (rfx_rx_may_fail(c->pred))
        return true;
    for (int k = 0; k < c->nout; k++)
        if (rfx_rx_may_fail(c->out[k]))
            return true;
    return false;
}

static int rx_max_col(const rfx_rx *e)
{
    if (!e)
        return -1;
    int m = e->kind == RFX_RX_COL ? e->col : -1, l = rx_max_col(e->l), r = rx_max_col(e->r);
    return m > l ? (m > r ? m : r) : (l > r ? l : r);
}

static int rx_min_col(const rfx_rx *e)
{
    if (!e)
        return 1 << 30;
    int m = e->kind == RFX_RX_COL ? e->col : 1 << 30, l = rx_min_col(e->l), r = rx_min_col(e->r);
    return m < l ? (m < r ? m : r) : (l < r ? l : r);
}

static rfx_rx *rx_col(rfx_arena *a, int col, rfx_prim prim)
{
    rfx_rx *e = rfx_arena_alloc(a, sizeof *e);
    if (e) {
        e->kind = RFX_RX_COL;
        e->col = col;
        e->prim = prim;
    }
    return e;
}

/* e with every column c replaced by defs[c]; NULL on out-of-memory. */
static rfx_rx *rx_subst(rfx_arena *a, const rfx_rx *e, rfx_rx **defs, bool *oom)
{
    if (!e)
        return NULL;
    if (e->kind == RFX_RX_COL)
        return defs[e->col];
    rfx_rx *x = rfx_arena_alloc(a, sizeof *x);
    if (!x) {
        *oom = true;
        return NULL;
    }
    *x = *e;
    x->l = rx_subst(a, e->l, defs, oom);
    x->r = rx_subst(a, e->r, defs, oom);
    return x;
}

static rfx_rx *rx_and(rfx_arena *a, rfx_rx *l, rfx_rx *r, bool *oom)
{
    if (!l || !r)
        return l ? l : r;
    rfx_rx *e = rfx_arena_alloc(a, sizeof *e);
    if (!e) {
        *oom = true;
        return NULL;
    }
    e->kind = RFX_RX_AND;
    e->l = l;
    e->r = r;
    return e;
}

/* ---- JOIN groups: a star join on one key over the left spine of JOINs ------------------- */
typedef struct jbuild {
    wctx *x;
    int block, anchor, k;
    int nsrc, width;
    int srcs[RFX_WEAVE_MAX_SRCS], offset[RFX_WEAVE_MAX_SRCS];
    int nconj;
    rfx_rx *conj[MAX_CONJ];
    int nmem;
    rfx_fmember mem[MAX_MEMBERS];
    bool oom;
    bool too_big;              /* more conjunctions than a group holds: not fused this way */
    bool probe;                /* the anchor reads its first source in any order (a probe) */
    bool keyed;                /* keycol holds the group's key columns of its first source */
    int keycol[MAX_KEYS];
} jbuild;

typedef struct jstate {
    int nsrc, width, nconj, nmem;
    bool keyed;
} jstate;

/* The one source whose columns e reads, or -1 (none, or several). */
static int source_of(const jbuild *j, const rfx_rx *e)
{
    int lo = rx_min_col(e), hi = rx_max_col(e);
    if (hi < 0)
        return -1;
    for (int s = 0; s < j->nsrc; s++) {
        int end = s + 1 < j->nsrc ? j->offset[s + 1] : j->width;
        if (lo >= j->offset[s] && hi < end)
            return s;
    }
    return -1;
}

static jstate save(const jbuild *j)
{
    return (jstate){j->nsrc, j->width, j->nconj, j->nmem, j->keyed};
}

static void restore(jbuild *j, jstate s)
{
    j->nsrc = s.nsrc;
    j->width = s.width;
    j->nconj = s.nconj;
    j->nmem = s.nmem;
    j->keyed = s.keyed;
}

static rfx_rx **leaf(jbuild *j, int var)
{
    const rfx_pvar *v = &j->x->P->vars[var];
    if (j->nsrc == RFX_WEAVE_MAX_SRCS)
        return NULL;
    rfx_rx **d = rfx_arena_alloc(j->x->w->arena, sizeof(rfx_rx *) * (size_t)(v->arity + 1));
    if (!d) {
        j->oom = true;
        return NULL;
    }
    for (int c = 0; c < v->arity; c++)
        if (!(d[c] = rx_col(j->x->w->arena, j->width + c, v->types[c]))) {
            j->oom = true;
            return NULL;
        }
    j->srcs[j->nsrc] = var;
    j->offset[j->nsrc++] = j->width;
    j->width += v->arity;
    return d;
}

static void add_conjuncts(jbuild *j, rfx_rx *e)
{
    if (!e)
        return;
    if (e->kind == RFX_RX_AND) {
        add_conjuncts(j, e->l);
        add_conjuncts(j, e->r);
    } else if (j->nconj < MAX_CONJ)
        j->conj[j->nconj++] = e;
    else
        j->too_big = true;
}

static rfx_rx **outputs(jbuild *j, const rfx_ra_cmd *c, rfx_rx **in)
{
    if (c->op == RFX_RA_SELECT && c->nout == 0)
        return in;
    rfx_rx **d = rfx_arena_alloc(j->x->w->arena, sizeof(rfx_rx *) * (size_t)(c->nout + 1));
    if (!d) {
        j->oom = true;
        return NULL;
    }
    for (int k = 0; k < c->nout; k++)
        d[k] = rx_subst(j->x->w->arena, c->out[k], in, &j->oom);
    return j->oom ? NULL : d;
}

/* The defining command of var in the block before `before`, if var is a temporary used
 * once and defined once there and belongs to no group yet. */
static int producer(jbuild *j, int var, int before)
{
    const rfx_plan *P = j->x->P;
    if (P->vars[var].kind != RFX_PV_TEMP || j->x->uses[var] != 1 || j->x->defs[var] != 1)
        return -1;
    for (int i = before - 1; i >= 0; i--)
        if (P->blocks[j->block].cmds[i].dst == var)
            return j->x->w->at[j->block][i] < 0 && weavable(&P->blocks[j->block].cmds[i]) ? i : -1;
    return -1;
}

/* Whether a JOIN's key columns are its right source's first (that source searched) and
 * columns of the group's first source: its first (in key order), or any where the JOIN
 * probes (the group's anchor reads that source in any order), the same for every JOIN of
 * the group. */
static bool keys_line_up(jbuild *j, const rfx_ra_cmd *c, rfx_rx **d0, rfx_rx **d1, int first_src1)
{
    const bool any = c->probe && j->probe;
    if (any && j->k > MAX_KEYS)
        return false;
    for (int k = 0; k < j->k; k++) {
        if (d0[k]->kind != RFX_RX_COL || (any ? d0[k]->col >= j->offset[1] : d0[k]->col != k) ||
            (j->keyed && j->keycol[k] != d0[k]->col))
            return false;
        if (d1[k]->kind != RFX_RX_COL || d1[k]->col != j->offset[first_src1] + k)
            return false;
    }
    for (int k = 0; k < j->k && k < MAX_KEYS; k++)
        j->keycol[k] = d0[k]->col;
    j->keyed = j->k <= MAX_KEYS;
    return true;
}

static rfx_rx **join_defs(jbuild *j, const rfx_ra_cmd *c, int at, rfx_fdep dep);

/* The columns of var (read by the command at `at`) as expressions over the group's
 * sources: through its producer when that can be fused, else var as a new source. */
static rfx_rx **defs_of(jbuild *j, int var, int at, bool left)
{
    int d = producer(j, var, at);
    if (d >= 0 && j->nmem < MAX_MEMBERS) {
        const rfx_ra_cmd *c = &j->x->P->blocks[j->block].cmds[d];
        jstate s = save(j);
        rfx_rx **r = NULL;
        if (!cmd_can_fail(c) && !touched_between(j->x, (pos){j->block, d}, (pos){j->block, j->anchor}, c->src[0], false)) {
            if (is_elementwise(c->op)) {
                rfx_rx **in = defs_of(j, c->src[0], d, left);
                if (in) {
                    j->mem[j->nmem++] = (rfx_fmember){j->block, d, RFX_DEP_THREAD};
                    add_conjuncts(j, rx_subst(j->x->w->arena, c->pred, in, &j->oom));
                    r = outputs(j, c, in);
                }
            } else if (left && (c->op == RFX_RA_JOIN || c->op == RFX_RA_MAPJOIN) && c->nkeys == j->k && !c->range &&
                       !touched_between(j->x, (pos){j->block, d}, (pos){j->block, j->anchor}, c->src[1], false))
                r = join_defs(j, c, d, RFX_DEP_CTA);
        }
        if (r && !j->oom && !j->too_big)
            return r;
        restore(j, s);
        j->too_big = false;   /* what was too big is undone */
        if (j->oom)
            return NULL;
    }
    return leaf(j, var);
}

/* A JOIN's output columns over the group's sources; NULL when its sides do not line up. */
static rfx_rx **join_defs(jbuild *j, const rfx_ra_cmd *c, int at, rfx_fdep dep)
{
    rfx_rx **d0 = defs_of(j, c->src[0], at, true);
    int first1 = j->nsrc;
    rfx_rx **d1 = d0 ? defs_of(j, c->src[1], at, false) : NULL;
    if (!d1 || j->nsrc != first1 + 1 || !keys_line_up(j, c, d0, d1, first1) || j->nmem == MAX_MEMBERS)
        return NULL;
    int a0 = j->x->P->vars[c->src[0]].arity, a1 = j->x->P->vars[c->src[1]].arity;
    rfx_rx **in = rfx_arena_alloc(j->x->w->arena, sizeof(rfx_rx *) * (size_t)(a0 + a1 + 1));
    if (!in) {
        j->oom = true;
        return NULL;
    }
    memcpy(in, d0, sizeof(rfx_rx *) * (size_t)a0);
    memcpy(in + a0, d1, sizeof(rfx_rx *) * (size_t)a1);
    j->mem[j->nmem++] = (rfx_fmember){j->block, at, dep};
    add_conjuncts(j, rx_subst(j->x->w->arena, c->pred, in, &j->oom));
    return outputs(j, c, in);
}

static rfx_fgroup *new_group(wctx *x)
{
    rfx_weave *w = x->w;
    if (w->ngroups == x->cap) {
        int cap = x->cap ? 2 * x->cap : 16;
        rfx_fgroup *g = rfx_arena_alloc(w->arena, sizeof *g * (size_t)cap);
        if (!g)
            return NULL;
        if (w->ngroups)
            memcpy(g, w->groups, sizeof *g * (size_t)w->ngroups);
        w->groups = g;
        x->cap = cap;
    }
    rfx_fgroup *g = &w->groups[w->ngroups];
    memset(g, 0, sizeof *g);
    g->id = w->ngroups;
    g->weave = w;
    g->src = g->dst = -1;
    snprintf(g->name, sizeof g->name, "rfx_g%d", g->id);
    return g;
}

static int cmp_member(const void *a, const void *b)
{
    const rfx_fmember *x = a, *y = b;
    return x->block != y->block ? x->block - y->block : x->cmd - y->cmd;
}

/* The JOIN alone over its two operands. */
static rfx_rx **plain_join(jbuild *j, const rfx_ra_cmd *c)
{
    wctx *x = j->x;
    *j = (jbuild){.x = x, .block = j->block, .anchor = j->anchor, .k = c->nkeys, .probe = c->probe};
    rfx_rx **d0 = leaf(j, c->src[0]), **d1 = d0 ? leaf(j, c->src[1]) : NULL;
    int a0 = x->P->vars[c->src[0]].arity, a1 = x->P->vars[c->src[1]].arity;
    rfx_rx **in = d1 ? rfx_arena_alloc(x->w->arena, sizeof(rfx_rx *) * (size_t)(a0 + a1 + 1)) : NULL;
    if (!in) {
        j->oom = true;
        return NULL;
    }
    memcpy(in, d0, sizeof(rfx_rx *) * (size_t)a0);
    memcpy(in + a0, d1, sizeof(rfx_rx *) * (size_t)a1);
    j->mem[j->nmem++] = (rfx_fmember){j->block, j->anchor, RFX_DEP_ANCHOR};
    add_conjuncts(j, rx_subst(x->w->arena, c->pred, in, &j->oom));
    return outputs(j, c, in);
}

static int join_regs(const jbuild *j)
{
    int nodes = 0;
    for (int i = 0; i < j->nconj; i++)
        nodes += rx_nodes(j->conj[i]);
    return 24 + j->width + 4 * j->nsrc + nodes / 2;
}

static bool join_group(wctx *x, int block, int anchor)
{
    const rfx_ra_cmd *c = &x->P->blocks[block].cmds[anchor];
    jbuild *j = calloc(1, sizeof *j);
    if (!j)
        return false;
    *j = (jbuild){.x = x, .block = block, .anchor = anchor, .k = c->nkeys, .probe = c->probe};
    rfx_rx **out = join_defs(j, c, anchor, RFX_DEP_ANCHOR);
    /* Algorithm 2: the whole group within the register budget, or the JOIN alone */
    if (!j->oom && (!out || j->too_big || join_regs(j) > x->o.max_regs))
        out = plain_join(j, c);
    if (!j->oom && (!out || j->too_big)) {   /* not even alone (a huge filter): unfused */
        free(j);
        return true;
    }
    int regs = join_regs(j);
    rfx_fgroup *g = j->oom ? NULL : new_group(x);
    if (!g) {
        free(j);
        return false;
    }
    rfx_arena *A = x->w->arena;
    g->kind = RFX_FG_JOIN;
    g->block = block;
    g->anchor = anchor;
    g->nsrc = j->nsrc;
    g->srcs = rfx_arena_alloc(A, sizeof(int) * (size_t)j->nsrc);
    g->offset = rfx_arena_alloc(A, sizeof(int) * (size_t)j->nsrc);
    g->members = rfx_arena_alloc(A, sizeof(rfx_fmember) * (size_t)j->nmem);
    if (!g->srcs || !g->offset || !g->members) {
        free(j);
        return false;
    }
    memcpy(g->srcs, j->srcs, sizeof(int) * (size_t)j->nsrc);
    memcpy(g->offset, j->offset, sizeof(int) * (size_t)j->nsrc);
    g->nmembers = j->nmem;
    memcpy(g->members, j->mem, sizeof(rfx_fmember) * (size_t)j->nmem);
    qsort(g->members, (size_t)g->nmembers, sizeof *g->members, cmp_member);
    g->nkeys = j->k;
    g->probe = c->probe;
    bool identity = true;
    for (int k = 0; j->keyed && k < j->k; k++)
        identity &= j->keycol[k] == k;
    if (!identity) {
        if (!(g->keycol = rfx_arena_alloc(A, sizeof(int) * (size_t)j->k))) {
            free(j);
            return false;
        }
        memcpy(g->keycol, j->keycol, sizeof(int) * (size_t)j->k);
    }
    /* conjunctions over one source alone that cannot fail filter that source's rows as
     * they are counted (the first source's before its matches are looked up); the rest
     * keep their order */
    g->filt = rfx_arena_alloc(A, sizeof(rfx_rx *) * (size_t)j->nsrc);
    if (!g->filt) {
        free(j);
        return false;
    }
    for (int i = 0; i < j->nconj; i++) {
        rfx_rx *e = j->conj[i];
        int s = source_of(j, e);
        if (s >= 0 && !rfx_rx_may_fail(e))
            g->filt[s] = rx_and(A, g->filt[s], e, &j->oom);
        else
            g->residual = rx_and(A, g->residual, e, &j->oom);
    }
    g->pre = g->filt[0];
    for (int s = 1; s < j->nsrc; s++)
        g->pred = rx_and(A, g->pred, g->filt[s], &j->oom);
    g->pred = rx_and(A, g->pred, g->residual, &j->oom);
    if (j->oom) {
        free(j);
        return false;
    }
    g->nout = c->nout;
    g->out = out;
    g->dst = c->dst;
    g->regs = regs;
    g->smem = rfx_weave_expand_staged(c->nout) ? RFX_WEAVE_THREADS * c->nout * 4 : 0;
    for (int i = 0; i < g->nmembers; i++)
        x->w->at[g->members[i].block][g->members[i].cmd] = g->id;
    x->w->ngroups++;
    free(j);
    return true;
}

/* Whether a JOIN group took in commands that filter or join (not only ones that order its
 * first source's columns: a probe's keys first). */
static bool filters(const rfx_plan *P, const rfx_fgroup *g)
{
    for (int m = 0; m < g->nmembers; m++) {
        const rfx_ra_cmd *c = rfx_fgroup_member_cmd(P, g, m);
        if (g->members[m].dep != RFX_DEP_ANCHOR && !(c->op == RFX_RA_PROJECT && !c->pred))
            return true;
    }
    return false;
}

/* ---- FILTER groups: element-wise commands over one input ---------------------------------- */
static int filter_regs(const rfx_fgroup *g, int arity)
{
    int nodes = 0;
    for (int i = 0; i < g->nouts; i++) {
        nodes += rx_nodes(g->outs[i].pred);
        for (int k = 0; k < g->outs[i].nout; k++)
            nodes += g->outs[i].out[k] ? rx_nodes(g->outs[i].out[k]) : 1;
    }
    return 20 + rfx_weave_items(arity) * arity + 2 * g->nouts + nodes / 4;
}

static int filter_smem(int nouts, int arity)
{
    /* rows of other widths than 1, 2 and 4 words are staged through shared memory */
    int tile = RFX_WEAVE_THREADS * rfx_weave_items(arity);
    int staged = rfx_weave_staged(arity) ? tile * arity * 4 : 0;
    return staged + nouts * (rfx_weave_items(arity) * (RFX_WEAVE_THREADS / 32) * 4 + 8 + 4) + 16;
}

static void set_out(rfx_fout *o, const rfx_ra_cmd *c, const rfx_plan *P)
{
    o->dst = c->dst;
    o->pred = c->pred;
    if (c->op == RFX_RA_SELECT && c->nout == 0) {
        o->nout = P->vars[c->dst].arity;
        o->out = NULL;
    } else {
        o->nout = c->nout;
        o->out = c->out;
    }
}

static bool filter_group(wctx *x, pos first)
{
    const rfx_plan *P = x->P;
    const rfx_ra_cmd *c = cmd_at(P, first);
    rfx_fgroup *g = new_group(x);
    if (!g)
        return false;
    rfx_arena *A = x->w->arena;
    g->members = rfx_arena_alloc(A, sizeof(rfx_fmember) * RFX_WEAVE_MAX_OUTS);
    g->outs = rfx_arena_alloc(A, sizeof(rfx_fout) * RFX_WEAVE_MAX_OUTS);
    if (!g->members || !g->outs)
        return false;
    g->kind = RFX_FG_FILTER;
    g->block = first.block;
    g->anchor = first.cmd;
    g->src = c->src[0];
    int arity = P->vars[g->src].arity;
    g->members[0] = (rfx_fmember){first.block, first.cmd, RFX_DEP_ANCHOR};
    set_out(&g->outs[0], c, P);
    g->nmembers = g->nouts = 1;
    x->w->at[first.block][first.cmd] = g->id;
    pos p = first;
    /* a command that can fail (division) runs alone, so that a failure names its rule */
    while (!cmd_can_fail(c) && g->nouts < RFX_WEAVE_MAX_OUTS && next_pos(x, x->region_end[first.block], &p)) {
        const rfx_ra_cmd *d = cmd_at(P, p);
        if (writes(d, g->src))
            break;     /* later readers see other contents */
        if (!is_elementwise(d->op) || d->src[0] != g->src || x->w->at[p.block][p.cmd] >= 0 || cmd_can_fail(d) ||
            !weavable(d) ||
            touched_between(x, first, p, d->dst, true))
            continue;
        /* Algorithm 2: take it if the group still fits */
        set_out(&g->outs[g->nouts], d, P);
        g->nouts++;
        if (filter_regs(g, arity) > x->o.max_regs || filter_smem(g->nouts, arity) > x->o.max_smem) {
            g->nouts--;
            break;
        }
        g->members[g->nmembers++] = (rfx_fmember){p.block, p.cmd, RFX_DEP_INPUT};
        x->w->at[p.block][p.cmd] = g->id;
    }
    g->regs = filter_regs(g, arity);
    g->smem = filter_smem(g->nouts, arity);
    x->w->ngroups++;
    return true;
}

/* ---- building -------------------------------------------------------------------------- */
static bool analyse(wctx *x)
{
    const rfx_plan *P = x->P;
    x->uses = calloc((size_t)P->nvars, sizeof(int));
    x->defs = calloc((size_t)P->nvars, sizeof(int));
    x->region_end = calloc((size_t)P->nblocks + 1, sizeof(int));
    bool *target = calloc((size_t)P->nblocks + 1, sizeof(bool));
    if (!x->uses || !x->defs || !x->region_end || !target) {
        free(target);
        return false;
    }
    for (int b = 0; b < P->nblocks; b++)
        for (int i = 0; i < P->blocks[b].ncmds; i++) {
            const rfx_ra_cmd *c = &P->blocks[b].cmds[i];
            for (int k = 0; k < rfx_ra_cmd_ninputs(c); k++)
                if (rfx_ra_cmd_input(c, k) >= 0)
                    x->uses[rfx_ra_cmd_input(c, k)]++;
            if (c->dst >= 0)
                x->defs[c->dst]++;
            if (c->op == RFX_RA_JUMP || c->op == RFX_RA_JUMP_IF_EMPTY || c->op == RFX_RA_JUMP_IF_FULL)
                target[c->target] = true;
        }
    /* straight-line regions: blocks outside loops, entered only by falling through */
    for (int b = P->nblocks - 1; b >= 0; b--) {
        bool falls = b + 1 < P->nblocks && P->blocks[b].loop_head < 0 && P->blocks[b + 1].loop_head < 0 &&
                     !target[b + 1];
        for (int i = 0; falls && i < P->blocks[b].ncmds; i++)
            falls = !is_control(P->blocks[b].cmds[i].op);
        x->region_end[b] = falls ? x->region_end[b + 1] : b;
    }
    free(target);
    return true;
}

rfx_weave *rfx_weave_build(const rfx_plan *plan, const rfx_weave_opts *opts)
{
    rfx_weave *w = calloc(1, sizeof *w);
    wctx x = {.w = w, .P = plan};
    if (opts)
        x.o = *opts;
    if (!x.o.max_regs)
        x.o.max_regs = DEFAULT_REGS;
    if (!x.o.max_smem)
        x.o.max_smem = DEFAULT_SMEM;
    bool ok = w && (w->arena = rfx_arena_new()) && analyse(&x) &&
              (w->at = rfx_arena_alloc(w->arena, sizeof(int *) * (size_t)(plan->nblocks + 1)));
    if (w)
        w->plan = plan;
    for (int b = 0; ok && b < plan->nblocks; b++) {
        ok = (w->at[b] = rfx_arena_alloc(w->arena, sizeof(int) * (size_t)(plan->blocks[b].ncmds + 1))) != NULL;
        for (int i = 0; ok && i < plan->blocks[b].ncmds; i++)
            w->at[b][i] = -1;
    }
    /* JOIN groups first, from the last JOIN of each block, so selections feeding a join
     * go into it rather than into a FILTER group */
    for (int b = 0; ok && b < plan->nblocks; b++)
        for (int i = plan->blocks[b].ncmds - 1; ok && i >= 0; i--) {
            const rfx_ra_cmd *c = &plan->blocks[b].cmds[i];
            /* (a ranged join searches each tuple's range itself: the kernels of a group
             * would expand its whole key group) */
            if ((c->op == RFX_RA_JOIN || c->op == RFX_RA_MAPJOIN) && c->nkeys > 0 && !c->range && w->at[b][i] < 0 &&
                weavable(c))
                ok = join_group(&x, b, i);
        }
    for (int b = 0; ok && b < plan->nblocks; b++)
        for (int i = 0; ok && i < plan->blocks[b].ncmds; i++) {
            const rfx_ra_cmd *c = &plan->blocks[b].cmds[i];
            if (is_elementwise(c->op) && w->at[b][i] < 0 && weavable(c))
                ok = filter_group(&x, (pos){b, i});
        }
    const int join_groups = opts ? opts->join_groups : 0;
    for (int g = 0; ok && g < w->ngroups; g++) {
        rfx_fgroup *grp = &w->groups[g];
        grp->gpu_by_members = grp->kind == RFX_FG_JOIN && join_groups != 1 && (filters(plan, grp) || join_groups == 2);
        ok = (grp->source = rfx_weave_codegen(w->arena, plan, grp, &grp->divides)) != NULL;
        if (ok)
            grp->source_hash = rfx_fnv1a(RFX_FNV_INIT, grp->source, strlen(grp->source));
    }
    free(x.uses);
    free(x.defs);
    free(x.region_end);
    if (!ok) {
        rfx_weave_free(w);
        return NULL;
    }
    return w;
}

void rfx_weave_free(rfx_weave *w)
{
    if (!w)
        return;
    rfx_arena_free(w->arena);
    free(w);
}

int rfx_fgroup_ninputs(const rfx_fgroup *g)
{
    return g->kind == RFX_FG_FILTER ? 1 : g->nsrc;
}

int rfx_fgroup_input(const rfx_fgroup *g, int k)
{
    return g->kind == RFX_FG_FILTER ? g->src : g->srcs[k];
}

int rfx_fgroup_noutputs(const rfx_fgroup *g)
{
    return g->kind == RFX_FG_FILTER ? g->nouts : 1;
}

int rfx_fgroup_output(const rfx_fgroup *g, int k)
{
    return g->kind == RFX_FG_FILTER ? g->outs[k].dst : g->dst;
}

const rfx_ra_cmd *rfx_fgroup_member_cmd(const rfx_plan *P, const rfx_fgroup *g, int m)
{
    return &P->blocks[g->members[m].block].cmds[g->members[m].cmd];
}

int rfx_fgroup_temporary(const rfx_plan *P, const rfx_fgroup *g, int m)
{
    int d = rfx_fgroup_member_cmd(P, g, m)->dst;
    return g->kind == RFX_FG_JOIN && d != g->dst ? d : -1;
}

bool rfx_fgroup_temporary_dead(const rfx_plan *P, const rfx_fgroup *g, int k, int m)
{
    const int t = rfx_fgroup_temporary(P, g, k);
    if (t < 0)
        return false;
    for (int j = m + 1; j < g->nmembers; j++) {
        const rfx_ra_cmd *c = rfx_fgroup_member_cmd(P, g, j);
        for (int s = 0; s < rfx_ra_cmd_ninputs(c); s++)
            if (rfx_ra_cmd_input(c, s) == t)
                return false;
    }
    return true;
}

/* ---- printing --------------------------------------------------------------------------- */
static const char *dep_name(rfx_fdep d)
{
    switch (d) {
    case RFX_DEP_ANCHOR: return "anchor";
    case RFX_DEP_INPUT: return "input dependence";
    case RFX_DEP_THREAD: return "thread dependence";
    default: return "CTA dependence";
    }
}

static void print_outs(FILE *out, const rfx_plan *P, int nout, rfx_rx *const *o)
{
    fputs(" out (", out);
    for (int k = 0; k < nout; k++) {
        if (k)
            fputs(", ", out);
        if (o && o[k])
            rfx_rx_print(out, P, o[k]);
        else
            fprintf(out, "$%d", k);
    }
    fputs(")", out);
}

void rfx_weave_print(FILE *out, const rfx_weave *w)
{
    const rfx_plan *P = w->plan;
    fprintf(out, "// fused groups of %s: %d\n", P->prog->file, w->ngroups);
    for (int i = 0; i < w->ngroups; i++) {
        const rfx_fgroup *g = &w->groups[i];
        fprintf(out, "\ngroup %s: ", g->name);
        if (g->kind == RFX_FG_FILTER)
            fprintf(out, "FILTER over %s, %d output%s", P->vars[g->src].name, g->nouts, g->nouts == 1 ? "" : "s");
        else {
            fprintf(out, "JOIN of");
            for (int s = 0; s < g->nsrc; s++)
                fprintf(out, "%s %s", s ? "," : "", P->vars[g->srcs[s]].name);
            fprintf(out, " on %d key%s", g->nkeys, g->nkeys == 1 ? "" : "s");
            if (g->probe)
                fprintf(out, ", %s read in any order", P->vars[g->srcs[0]].name);
            for (int k = 0; g->keycol && k < g->nkeys; k++)
                fprintf(out, "%s$%d", k ? ", " : " by its columns ", g->keycol[k]);
        }
        fprintf(out, "; estimate %d registers, %d bytes shared memory per block\n", g->regs, g->smem);
        for (int m = 0; m < g->nmembers; m++) {
            const rfx_fmember *mb = &g->members[m];
            fprintf(out, "  B%d %-18s", mb->block, dep_name(mb->dep));
            rfx_plan_print_cmd(out, P, &P->blocks[mb->block].cmds[mb->cmd]);
        }
        if (g->kind == RFX_FG_FILTER) {
            for (int k = 0; k < g->nouts; k++) {
                const rfx_fout *o = &g->outs[k];
                fprintf(out, "  => %s =", P->vars[o->dst].name);
                if (o->pred) {
                    fputs(" where ", out);
                    rfx_rx_print(out, P, o->pred);
                }
                print_outs(out, P, o->nout, o->out);
                fputc('\n', out);
            }
        } else {
            fprintf(out, "  => %s = join", P->vars[g->dst].name);
            for (int s = 0; s < g->nsrc; s++)
                fprintf(out, " %s@$%d", P->vars[g->srcs[s]].name, g->offset[s]);
            for (int s = 0; s < g->nsrc; s++)
                if (g->filt[s]) {
                    fprintf(out, " filter %s by ", P->vars[g->srcs[s]].name);
                    rfx_rx_print(out, P, g->filt[s]);
                }
            if (g->residual) {
                fputs(" where ", out);
                rfx_rx_print(out, P, g->residual);
            }
            print_outs(out, P, g->nout, g->out);
            fputc('\n', out);
            if (g->gpu_by_members)
                fputs("  on the GPU: its members one by one (faster than this star join)\n", out);
        }
    }
}

void rfx_weave_print_cuda(FILE *out, const rfx_weave *w)
{
    fprintf(out, "// generated CUDA C of %s: %d group%s\n", w->plan->prog->file, w->ngroups, w->ngroups == 1 ? "" : "s");
    for (int i = 0; i < w->ngroups; i++)
        fprintf(out, "\n// ---- group %s ----\n%s", w->groups[i].name, w->groups[i].source);
}
