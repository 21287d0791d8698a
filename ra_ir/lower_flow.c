/* lower_flow.c: flows, the current tuples of a rule body as the plan computes them (a
 * variable, the body variable each column holds, how far it is sorted, whether it is a
 * set), and the commands that reshape them: projections, maps, sorts into a key order. */
#include "lower_rule.h"

#include <stdlib.h>
#include <string.h>

flow rfx_lower_flow_new(lower_ctx *L, int var, int n)
{
    flow f = {var, n, lalloc(L, sizeof(int) * (size_t)(n + 1)), 0, false};
    return f;
}

/* Column types of outputs computed by out. */
rfx_prim *rfx_lower_out_types(rule_ctx *R, rfx_rx **out, int nout)
{
    rfx_prim *t = lalloc(R->L, sizeof(rfx_prim) * (size_t)(nout + 1));
    for (int i = 0; t && i < nout; i++)
        t[i] = out[i]->prim;
    return t;
}

/* Whether outs name every one of a flow's n columns as it is (the map is one-to-one). */
bool rfx_lower_keeps_every_column(rfx_rx *const *outs, int nout, int n)
{
    for (int c = 0; c < n; c++) {
        bool kept = false;
        for (int i = 0; i < nout && !kept; i++)
            kept = outs[i]->kind == RFX_RX_COL && outs[i]->col == c;
        if (!kept)
            return false;
    }
    return true;
}

/* Emits a one-input command computing `outs` (and filtering by pred) from f. */
flow rfx_lower_emit_map(rule_ctx *R, const flow *f, rfx_rx *pred, rfx_rx **outs, int *schema, int nout)
{
    lower_ctx *L = R->L;
    rfx_prim *types = rfx_lower_out_types(R, outs, nout);
    int dst = rfx_lower_new_var(L, NULL, RFX_PV_TEMP, nout, types, -1);
    bool cols_only = true, identity = nout == f->n;
    for (int i = 0; i < nout; i++) {
        cols_only &= outs[i]->kind == RFX_RX_COL || outs[i]->kind == RFX_RX_CONST;
        identity &= outs[i]->kind == RFX_RX_COL && outs[i]->col == i;
    }
    rfx_ra_op op = pred ? (identity ? RFX_RA_SELECT : RFX_RA_MAPFILTER)
                        : (cols_only ? RFX_RA_PROJECT : RFX_RA_MAP);
    rfx_ra_cmd *c = rfx_lower_emit(L, op, dst, f->var, -1);
    c->pred = pred;
    c->nout = nout;
    c->out = outs;
    flow g = rfx_lower_flow_new(L, dst, nout);
    if (g.schema)
        rfx_memcpy(g.schema, schema, sizeof(int) * (size_t)nout);
    /* order survives as long as the output starts with the input's sorted columns */
    g.sorted = 0;
    while (g.sorted < nout && g.sorted < f->sorted && outs[g.sorted]->kind == RFX_RX_COL &&
           outs[g.sorted]->col == g.sorted)
        g.sorted++;
    g.unique = f->unique && rfx_lower_keeps_every_column(outs, nout, f->n);   /* one-to-one: a set stays one */
    /* a sorted set extended by computed columns (kept in front) stays a sorted set */
    bool prefix_kept = nout >= f->n && f->sorted == f->n && f->unique && !pred;
    for (int i = 0; prefix_kept && i < f->n; i++)
        prefix_kept = outs[i]->kind == RFX_RX_COL && outs[i]->col == i;
    if (prefix_kept) {
        g.sorted = nout;
        g.unique = true;
    }
    return g;
}

/* f's rows sorted on all their columns (and made distinct where they may not be already)
 * into a new temporary; the sort command, or NULL. */
rfx_ra_cmd *rfx_lower_sort_all(lower_ctx *L, flow *f)
{
    int dst = rfx_lower_new_var(L, NULL, RFX_PV_TEMP, f->n, L->plan->vars[f->var].types, -1);
    rfx_ra_cmd *c = rfx_lower_emit(L, f->unique ? RFX_RA_SORT : RFX_RA_SORT_UNIQUE, dst, f->var, -1);
    if (!f->unique)
        c->nkeys = f->sorted;   /* a hint: the rows come sorted on their first f->sorted columns */
    f->var = dst;
    f->sorted = f->n;
    f->unique = true;
    return c;
}

/* Whether f carries a variable that `need` (with the keys marked) does not ask for. */
static bool has_unneeded(const flow *f, const bool *need)
{
    for (int c = 0; need && c < f->n; c++)
        if (f->schema[c] >= 0 && !need[f->schema[c]])
            return true;
    return false;
}

/* Whether f is sorted with the variables `keys` as its first columns (and, `compact`,
 * holds only needed columns and no duplicates). */
bool rfx_lower_in_order(const flow *f, const int *keys, int k, const bool *need, bool compact)
{
    bool prefix = f->n >= k;
    for (int i = 0; prefix && i < k; i++)
        prefix = f->schema[i] == keys[i];
    return prefix && f->sorted >= k && !(compact && (has_unneeded(f, need) || !f->unique));
}

/* f projected with the variables `keys` first, then its other needed columns in their
 * order (no command where that is f itself); *rest_ordered: the rows were sorted on all
 * their columns, none is dropped, so rows of equal keys are in order already. */
flow rfx_lower_keys_first(rule_ctx *R, flow f, const int *keys, int k, const bool *need, bool *rest_ordered)
{
    lower_ctx *L = R->L;
    *rest_ordered = f.sorted == f.n && f.unique;
    /* project: keys first, then the remaining needed columns in their order */
    rfx_rx **outs = lalloc(L, sizeof(rfx_rx *) * (size_t)(f.n + 1));
    int *schema = lalloc(L, sizeof(int) * (size_t)(f.n + 1));
    if (!outs || !schema)
        return f;
    int n = 0;
    for (int i = 0; i < k; i++) {
        int c = rfx_lower_col_of(&f, NULL, keys[i]);
        outs[n] = rfx_rx_col(L, c, L->plan->vars[f.var].types[c]);
        schema[n++] = keys[i];
    }
    bool dropped = false;
    for (int c = 0; c < f.n; c++) {
        bool iskey = false;
        for (int i = 0; i < k; i++)
            iskey |= keys[i] == f.schema[c];
        if (iskey)
            continue;
        if (f.schema[c] < 0 || !need || need[f.schema[c]]) {
            outs[n] = rfx_rx_col(L, c, L->plan->vars[f.var].types[c]);
            schema[n++] = f.schema[c];
        } else
            dropped = true;
    }
    bool identity = n == f.n;
    for (int i = 0; identity && i < n; i++)
        identity = outs[i]->col == i;
    *rest_ordered &= !dropped;
    if (!identity) {
        bool uniq = f.unique && !dropped;
        f = rfx_lower_emit_map(R, &f, NULL, outs, schema, n);
        f.unique = uniq;
    }
    return f;
}

/* Makes f sorted with the variables `keys` as its first columns, keeping only needed
 * columns after them (those it had, where it is sorted so already and not `compact`;
 * a compact flow drops the columns nothing needs, and the duplicates that leaves). */
flow rfx_lower_ensure_order(rule_ctx *R, flow f, const int *keys, int k, const bool *need, bool compact)
{
    lower_ctx *L = R->L;
    if (rfx_lower_in_order(&f, keys, k, need, compact))
        return f;
    /* a relation sorted on all its columns, its keys moved first and every other column
     * kept in its order: rows of equal keys are in order already, so a stable sort on the
     * keys alone sorts it */
    bool rest_ordered;
    f = rfx_lower_keys_first(R, f, keys, k, need, &rest_ordered);
    const bool was_unique = f.unique;
    rfx_ra_cmd *c = rfx_lower_sort_all(L, &f);
    if (c && was_unique && rest_ordered && k < f.n)
        c->nkeys = k;   /* rows of equal keys keep the order of the sorted source */
    return f;
}

void rfx_lower_emit_semijoin(lower_ctx *L, flow *f, rfx_ra_op op, int set, int k, bool probe, bool optional)
{
    int dst = rfx_lower_new_var(L, NULL, RFX_PV_TEMP, f->n, L->plan->vars[f->var].types, -1);
    rfx_ra_cmd *c = rfx_lower_emit(L, op, dst, f->var, set);
    c->nkeys = k;
    c->probe = probe;
    c->optional = optional;
    f->var = dst;   /* a subset of f's rows, in its order: sorted and unique as far as f was */
}
