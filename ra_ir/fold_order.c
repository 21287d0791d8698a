/* fold_order.c: float sums and means add a group's values in Soufflé's order.
 *
 * A float32 sum rounds at every step, so where values far apart in size meet, its bits
 * depend on the order it adds them in. Soufflé adds in its index's order: the group's
 * tuples by their other columns, in column order, each compared as a signed 32-bit number.
 * rfx keeps a relation sorted as unsigned words, so negatives (numbers, floats, unsigned
 * values past 2^31) come after the rest, and an aggregate's inner rows, sorted stably on
 * the group (SORT keys=k), meet their values in another order wherever a group's other
 * columns hold such values. Here, where the inner rows are a plain PROJECT or MAP of one
 * relation (sorted on the group, or in the relation's own order, or the relation itself;
 * a fold over a whole relation has no keys), that relation's other columns go right after
 * the keys with their sign bits flipped (the unsigned order of the flipped bits is the
 * signed order of the bits), the rows are sorted on those too, and the aggregates read
 * their values past them.
 *
 * Only for 32-bit float sum and mean (Soufflé's float): integer sums are exact or wrap
 * alike in any order, min, max and count take no order, and float64 (not Soufflé's) keeps
 * the relation's order on both backends. Bodies that filter, join or read 64-bit columns
 * keep theirs too. */
#include "ra_internal.h"

static bool order_sensitive(const rfx_ra_cmd *c)
{
    return c->op == RFX_RA_AGGREGATE && (c->agg == RFX_AGG_SUM || c->agg == RFX_AGG_MEAN) &&
           c->agg_prim == RFX_FLOAT;
}

/* The index in b of the last command before `before` that writes v, or -1. */
static int writer(const rfx_block *b, int v, int before)
{
    for (int j = before - 1; j >= 0; j--)
        if (b->cmds[j].dst == v)
            return j;
    return -1;
}

/* Whether v is written once and every command that reads it is an AGGREGATE over groups
 * of k columns reading it as its inner rows, one of them adding floats (so its rows may
 * change shape). */
static bool read_by_float_folds(const rfx_plan *P, int v, int k)
{
    bool sensitive = false;
    int writes = 0;
    for (int bi = 0; bi < P->nblocks; bi++)
        for (int i = 0; i < P->blocks[bi].ncmds; i++) {
            const rfx_ra_cmd *c = &P->blocks[bi].cmds[i];
            if ((writes += c->dst == v || (c->op == RFX_RA_SWAP && c->src[0] == v)) > 1)
                return false;
            bool reads = false;
            for (int n = 0; n < rfx_ra_cmd_ninputs(c); n++)
                reads |= rfx_ra_cmd_input(c, n) == v;
            if (!reads)
                continue;
            if (c->op != RFX_RA_AGGREGATE || c->src[0] == v || c->nkeys != k)
                return false;
            sensitive |= order_sensitive(c);
        }
    return sensitive;
}

/* The outputs of plain mapping m of relation rel with rel's columns that are not its first
 * k outputs (the keys) put after those, flipped; their count in *extra, the types in
 * *types. NULL where m's keys are not plain columns, rel holds 64-bit words (no signed
 * 32-bit order), nothing is to add, or out of memory. */
static rfx_rx **flipped_outputs(lower_ctx *L, const rfx_ra_cmd *m, int k, const rfx_prim *mtypes, int *extra,
                                rfx_prim **types)
{
    const rfx_pvar *rel = &L->plan->vars[m->src[0]];
    bool key[RFX_MAX_ARITY + 1] = {false};
    if (rel->arity > RFX_MAX_ARITY)
        return NULL;
    for (int o = 0; o < k; o++) {
        if (m->out[o]->kind != RFX_RX_COL)
            return NULL;
        key[m->out[o]->col] = true;
    }
    *extra = 0;
    for (int c = 0; c < rel->arity; c++) {
        if (rel->types[c] > RFX_SYMBOL && rel->types[c] != RFX_DATE)
            return NULL;
        *extra += !key[c];
    }
    const int nout = m->nout + *extra;
    rfx_rx **out = *extra ? lalloc(L, sizeof(rfx_rx *) * (size_t)nout) : NULL;
    *types = out ? lalloc(L, sizeof(rfx_prim) * (size_t)(nout + 1)) : NULL;
    if (!*types)
        return NULL;
    int w = 0;
    for (int o = 0; o < k; o++, w++) {
        out[w] = m->out[o];
        (*types)[w] = mtypes[o];
    }
    for (int c = 0; c < rel->arity; c++)
        if (!key[c]) {   /* its bits as unsigned, the sign bit flipped */
            rfx_rx *x = rfx_rx_new(L, RFX_RX_BIN, RFX_UNSIGNED), *bit = rfx_rx_new(L, RFX_RX_CONST, RFX_UNSIGNED);
            x->op = RFX_BXOR;
            x->l = rfx_rx_col(L, c, RFX_UNSIGNED);
            x->r = bit;
            bit->value = 0x80000000u;
            out[w] = x;
            (*types)[w++] = RFX_UNSIGNED;
        }
    for (int o = k; o < m->nout; o++, w++) {
        out[w] = m->out[o];
        (*types)[w] = mtypes[o];
    }
    return L->oom ? NULL : out;
}

static bool plain_mapping(const rfx_ra_cmd *m, int k)
{
    return m && (m->op == RFX_RA_PROJECT || m->op == RFX_RA_MAP) && !m->pred && m->nout >= k;
}

/* The order-sensitive fold at index q of b, if its inner rows are a plain mapping of one
 * relation of 32-bit columns, sorted on the keys (SORT keys=k) or in the relation's order
 * (the keys its leading columns): a mapping of the relation with its other columns, flipped,
 * after the keys, sorted on the keys and those, feeds it instead. Where the rows were
 * sorted for folds alone, that sort is the one changed (all its folds read past the new
 * columns); else two commands go before the fold. The first mapping stays for its other
 * readers, if any. */
static void reorder(lower_ctx *L, rfx_block *b, int q)
{
    rfx_plan *P = L->plan;
    const rfx_ra_cmd *a = &b->cmds[q];
    if (!order_sensitive(a))
        return;
    const int k = a->nkeys, inner = a->src[1];
    int i = P->vars[inner].kind == RFX_PV_TEMP ? writer(b, inner, q) : -1, j = -1;
    const rfx_ra_cmd *w = i >= 0 ? &b->cmds[i] : NULL;
    rfx_ra_cmd whole;   /* a relation folded as it is (the keys its leading columns): all of it */
    if (P->vars[inner].kind != RFX_PV_TEMP) {
        const int n = P->vars[inner].arity;
        whole = (rfx_ra_cmd){.op = RFX_RA_PROJECT, .dst = inner, .src = {inner, -1}, .nout = n, .rule = a->rule};
        if (!(whole.out = lalloc(L, sizeof(rfx_rx *) * (size_t)(n + 1))))
            return;
        for (int c = 0; c < n; c++)
            whole.out[c] = rfx_rx_col(L, c, P->vars[inner].types[c]);
        w = &whole;
        i = q;
    }
    bool resort = w && w->op == RFX_RA_SORT && k > 0 && w->nkeys == k && P->vars[w->src[0]].kind == RFX_PV_TEMP &&
                  read_by_float_folds(P, inner, k);
    if (resort)
        j = writer(b, w->src[0], i);
    else if (plain_mapping(w, k))
        j = i, i = q;   /* the rows in the relation's order: the new ones go before the fold */
    const rfx_ra_cmd *m = w == &whole ? w : j >= 0 ? &b->cmds[j] : NULL;
    if (!plain_mapping(m, k) || (m != &whole && rfx_block_writes(b, m->src[0], j + 1, i)))
        return;
    int extra = 0;
    rfx_prim *types = NULL;
    rfx_rx **out = flipped_outputs(L, m, k, P->vars[m->dst].types, &extra, &types);
    const int rel = m->src[0], rule = m->rule, nout = m->nout + extra;
    int made = out ? rfx_lower_new_var(L, NULL, RFX_PV_TEMP, nout, types, -1) : -1;
    int sorted = out && !resort && !L->oom ? rfx_lower_new_var(L, NULL, RFX_PV_TEMP, nout, types, -1) : inner;
    rfx_ra_cmd *at = out && !L->oom ? rfx_block_insert(L, b, i, resort ? 1 : 2) : NULL;
    if (!at)
        return;
    at[0] = (rfx_ra_cmd){.op = RFX_RA_MAP, .dst = made, .src = {rel, -1}, .nout = nout, .out = out, .agg_col = -1,
                         .rule = rule, .io = -1};
    rfx_ra_cmd *sort = &b->cmds[i + 1];
    if (!resort)
        *sort = (rfx_ra_cmd){.op = RFX_RA_SORT, .dst = sorted, .agg_col = -1, .rule = rule, .io = -1};
    sort->src[0] = made;
    sort->src[1] = -1;
    sort->nkeys = k + extra;
    if (resort) {   /* read by the folds alone: they take the longer rows */
        P->vars[inner].arity = nout;
        P->vars[inner].types = types;
        for (int bi = 0; bi < P->nblocks; bi++)
            for (int c = 0; c < P->blocks[bi].ncmds; c++) {
                rfx_ra_cmd *f = &P->blocks[bi].cmds[c];
                if (f->op == RFX_RA_AGGREGATE && f->src[1] == inner && f->agg_col >= 0)
                    f->agg_col += extra;
            }
    } else {
        rfx_ra_cmd *f = &b->cmds[q + 2];
        f->src[1] = sorted;
        f->agg_col += f->agg_col >= 0 ? extra : 0;
    }
}

void rfx_plan_fold_order(rfx_plan *P)
{
    lower_ctx L = {.plan = P, .ntemps = rfx_plan_temps_named(P), .rule = -1};
    for (int bi = 0; bi < P->nblocks && !L.oom; bi++)
        for (int i = 0; i < P->blocks[bi].ncmds && !L.oom; i++)
            reorder(&L, &P->blocks[bi], i);   /* an insert moves the fold on: looked at again, its rows
                                                 * are sorted on more than its keys */
}
