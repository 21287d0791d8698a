/* group_sorts.c: one sort for the aggregates that group one relation alike.
 *
 * An aggregate's inner rows are a projection of its body (the group columns first, then
 * what it folds) sorted stably on the group columns (SORT keys=k). A rule with several
 * aggregates over one relation and one grouping (TPC-H Q1 has eight) sorts as many
 * projections of the same rows by the same keys. Here each such set becomes one
 * projection of the relation (the keys, then every column the members read), sorted once
 * on the keys, and each member a mapping of that, whose rows come out in its order: rows
 * of a group keep the relation's order, as each member's own stable sort kept them, so
 * every fold (floats' included) sees its values in the order it did. */
#include "ra_internal.h"

#include <stdlib.h>
#include <string.h>

/* A member: a SORT keys=k (at index sort_at) of a temporary made by a plain PROJECT or MAP
 * (no filter, at map_at) of variable rel whose first k outputs are rel's columns. */
typedef struct member {
    int sort_at, map_at;
    int rel, k;
} member;

static void mark_cols(const rfx_rx *e, bool *used)
{
    if (!e)
        return;
    if (e->kind == RFX_RX_COL)
        used[e->col] = true;
    for (int i = 0; i < e->nargs; i++)
        mark_cols(e->args[i], used);
    mark_cols(e->l, used);
    mark_cols(e->r, used);
}

/* e with each column c read as column to[c] (a copy in the plan's arena). */
static rfx_rx *remap(lower_ctx *L, const rfx_rx *e, const int *to)
{
    if (!e)
        return NULL;
    rfx_rx *x = lalloc(L, sizeof *x);
    if (!x)
        return NULL;
    *x = *e;
    if (e->kind == RFX_RX_COL)
        x->col = to[e->col];
    x->l = remap(L, e->l, to);
    x->r = remap(L, e->r, to);
    if (e->nargs) {
        x->args = lalloc(L, sizeof(rfx_rx *) * (size_t)e->nargs);
        for (int i = 0; x->args && i < e->nargs; i++)
            x->args[i] = remap(L, e->args[i], to);
    }
    return x;
}

/* Whether the command at index i of b is a member's SORT; fills m. */
static bool member_at(const rfx_plan *P, const rfx_block *b, int i, member *m)
{
    const rfx_ra_cmd *s = &b->cmds[i];
    if (s->op != RFX_RA_SORT || s->nkeys <= 0 || P->vars[s->src[0]].kind != RFX_PV_TEMP)
        return false;
    int j = i - 1;
    while (j >= 0 && b->cmds[j].dst != s->src[0])
        j--;
    if (j < 0)
        return false;
    const rfx_ra_cmd *c = &b->cmds[j];
    if ((c->op != RFX_RA_PROJECT && c->op != RFX_RA_MAP) || c->pred || c->nout < s->nkeys)
        return false;
    for (int o = 0; o < c->nout; o++)
        if (rfx_rx_fresh(c->out[o]) || (o < s->nkeys && c->out[o]->kind != RFX_RX_COL))
            return false;
    *m = (member){i, j, c->src[0], s->nkeys};
    return true;
}

static bool same_keys(const rfx_block *b, const member *x, const member *y)
{
    if (x->rel != y->rel || x->k != y->k)
        return false;
    const rfx_ra_cmd *cx = &b->cmds[x->map_at], *cy = &b->cmds[y->map_at];
    for (int o = 0; o < x->k; o++)
        if (cx->out[o]->col != cy->out[o]->col)
            return false;
    return true;
}

/* A member that only projects columns (mo: its outputs over the sorted rows) and whose
 * result var only aggregates read as their inner rows: they read the sorted rows themselves,
 * their folded column found there (its two words side by side where 64-bit). The member's
 * own copy is then unread (dce drops it). */
static void aggregate_sorted(rfx_plan *P, int var, int sorted, rfx_rx *const *mo, int nout, int k)
{
    for (int o = 0; o < nout; o++)
        if (mo[o]->kind != RFX_RX_COL || (o < k && mo[o]->col != o))
            return;
    for (int pass = 0; pass < 2; pass++)   /* 0: every reader checked, 1: rewritten */
        for (int bi = 0; bi < P->nblocks; bi++)
            for (int i = 0; i < P->blocks[bi].ncmds; i++) {
                rfx_ra_cmd *c = &P->blocks[bi].cmds[i];
                bool reads = false;
                for (int n = 0; n < rfx_ra_cmd_ninputs(c); n++)
                    reads |= rfx_ra_cmd_input(c, n) == var;
                if (!reads)
                    continue;
                const int wide = RFX_PRIM_WIDE(c->agg_prim) && c->agg != RFX_AGG_COUNT;
                if (pass == 0 && (c->op != RFX_RA_AGGREGATE || c->src[0] == var || c->nkeys != k ||
                                  (c->agg_col >= 0 && (c->agg_col + wide >= nout ||
                                                       (wide && mo[c->agg_col + 1]->col != mo[c->agg_col]->col + 1)))))
                    return;
                if (pass == 1) {
                    c->src[1] = sorted;
                    c->agg_col = c->agg_col >= 0 ? mo[c->agg_col]->col : -1;
                }
            }
}

/* One set of members (first at ms[0], all sharing rel and keys): the shared projection and
 * sort inserted before the first member's SORT, each member's SORT made its mapping of it.
 * False out of memory. */
static bool share(lower_ctx *L, rfx_block *b, member *ms, int n)
{
    rfx_plan *P = L->plan;
    const int rel = ms[0].rel, k = ms[0].k, arity = P->vars[rel].arity;
    const rfx_ra_cmd *first = &b->cmds[ms[0].map_at];
    const int rule = first->rule;
    bool *used = calloc((size_t)arity, 1);
    int *to = malloc(sizeof(int) * (size_t)arity), *cols = malloc(sizeof(int) * (size_t)arity + sizeof(int) * k);
    rfx_prim *types = malloc(sizeof(rfx_prim) * ((size_t)arity + (size_t)k));
    bool ok = used && to && cols && types;
    int w = 0;
    if (ok) {
        for (int o = 0; o < k; o++) {   /* the keys first, in the members' order */
            cols[w] = first->out[o]->col;
            to[cols[w]] = w;
            w++;
        }
        for (int i = 0; i < n; i++)
            for (int o = k; o < b->cmds[ms[i].map_at].nout; o++)
                mark_cols(b->cmds[ms[i].map_at].out[o], used);
        for (int o = 0; o < k; o++)
            used[cols[o]] = false;
        for (int c = 0; c < arity; c++)
            if (used[c]) {
                cols[w] = c;
                to[c] = w++;
            }
        for (int c = 0; c < w; c++)
            types[c] = P->vars[rel].types[cols[c]];
    }
    int proj = ok ? rfx_lower_new_var(L, NULL, RFX_PV_TEMP, w, types, -1) : -1;
    int sorted = ok && !L->oom ? rfx_lower_new_var(L, NULL, RFX_PV_TEMP, w, types, -1) : -1;
    rfx_rx **outs = ok && !L->oom ? lalloc(L, sizeof(rfx_rx *) * (size_t)w) : NULL;
    rfx_rx ***mo = ok && !L->oom ? lalloc(L, sizeof(rfx_rx **) * (size_t)n) : NULL;
    for (int c = 0; outs && c < w; c++)
        outs[c] = rfx_rx_col(L, cols[c], types[c]);
    /* every member's outputs over the sorted rows made first: out of memory, the plan is
     * left as it was */
    for (int i = 0; mo && i < n; i++) {
        const rfx_ra_cmd *m = &b->cmds[ms[i].map_at];
        if ((mo[i] = lalloc(L, sizeof(rfx_rx *) * (size_t)m->nout)))
            for (int o = 0; o < m->nout; o++)
                mo[i][o] = remap(L, m->out[o], to);
    }
    rfx_ra_cmd *at = ok && !L->oom && outs && mo ? rfx_block_insert(L, b, ms[0].sort_at, 2) : NULL;
    if (at) {
        at[0] = (rfx_ra_cmd){.op = RFX_RA_PROJECT, .dst = proj, .src = {rel, -1}, .nout = w, .out = outs,
                             .agg_col = -1, .rule = rule, .io = -1};
        at[1] = (rfx_ra_cmd){.op = RFX_RA_SORT, .dst = sorted, .src = {proj, -1}, .nkeys = k, .agg_col = -1,
                             .rule = rule, .io = -1};
        /* each member's SORT (two places on, past the insert) becomes its PROJECT or MAP over
         * the sorted rows */
        for (int i = 0; i < n; i++) {
            const int shift = ms[i].map_at >= ms[0].sort_at ? 2 : 0;
            rfx_ra_cmd c = b->cmds[ms[i].map_at + shift], *s = &b->cmds[ms[i].sort_at + 2];
            c.dst = s->dst;
            c.src[0] = sorted;
            c.out = mo[i];
            *s = c;
            aggregate_sorted(P, c.dst, sorted, mo[i], c.nout, k);
        }
    }
    free(used);
    free(to);
    free(cols);
    free(types);
    return at != NULL;
}

void rfx_plan_share_group_sorts(rfx_plan *P)
{
    lower_ctx L = {.plan = P, .ntemps = rfx_plan_temps_named(P), .rule = -1};
    for (int bi = 0; bi < P->nblocks && !L.oom; bi++) {
        rfx_block *b = &P->blocks[bi];
        for (bool again = true; again && !L.oom;) {   /* one set at a time: a set's insert moves the indices */
            again = false;
            member *ms = malloc(sizeof(member) * ((size_t)b->ncmds + 1));
            if (!ms)
                return;
            int n = 0;
            for (int i = 0; i < b->ncmds; i++)
                n += member_at(P, b, i, &ms[n]);
            for (int i = 0; i < n && !again; i++) {
                member set[64];
                int ns = 0, lo = ms[i].map_at, hi = ms[i].sort_at;
                for (int j = i; j < n && ns < 64; j++)
                    if (j == i || same_keys(b, &ms[i], &ms[j])) {
                        set[ns++] = ms[j];
                        lo = ms[j].map_at < lo ? ms[j].map_at : lo;
                        hi = ms[j].sort_at > hi ? ms[j].sort_at : hi;
                    }
                if (ns < 2 || rfx_block_writes(b, ms[i].rel, lo, hi + 1))
                    continue;
                if (!share(&L, b, set, ns))
                    break;
                again = true;
            }
            free(ms);
        }
    }
}
