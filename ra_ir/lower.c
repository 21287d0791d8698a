/* lower.c: AST -> query plan. Each rule body becomes a pipeline of scans (selections
 * pushed into them), joins in an order chosen by estimated size, filters and arithmetic
 * as soon as their variables are bound, anti-joins for negation, aggregates, and a final
 * projection onto the head. Recursive strata become semi-naive loops over deltas. */
#include "lower_rule.h"
#include "rx_ops.h"

#include <stdlib.h>
#include <string.h>

/* ---- variable bookkeeping ---------------------------------------------------------- */
/* Marks in `use` every variable an expression reads (an aggregate reads its result var). */
void rfx_lower_expr_vars(rule_ctx *R, const rfx_expr *e, bool *use)
{
    switch (e->kind) {
    case RFX_E_VAR: use[e->u.v.var] = true; break;
    case RFX_E_NEG: case RFX_E_BINOP: case RFX_E_FN:
        for (int i = 0; i < rfx_expr_nkids(e); i++)
            rfx_lower_expr_vars(R, rfx_expr_kid(e, i), use);
        break;
    case RFX_E_AGG: {
        int v = rfx_lower_agg_var(R, e);
        if (v >= 0)
            use[v] = true;
        if (v >= 0 && RFX_PRIM_WIDE(rfx_lower_expr_prim(R, e)))   /* its low word's */
            use[v + 1] = true;
        break;
    }
    default: break;
    }
}

static bool expr_bound(rule_ctx *R, const rfx_expr *e)
{
    switch (e->kind) {
    case RFX_E_VAR: return R->bound[e->u.v.var];
    case RFX_E_NEG: case RFX_E_BINOP: case RFX_E_FN:
        for (int i = 0; i < rfx_expr_nkids(e); i++)
            if (!expr_bound(R, rfx_expr_kid(e, i)))
                return false;
        return true;
    case RFX_E_AGG: { int v = rfx_lower_agg_var(R, e); return v >= 0 && R->bound[v]; }
    case RFX_E_ANON: return false;
    default: return true;
    }
}

static bool expr_has_agg(const rfx_expr *e)
{
    switch (e->kind) {
    case RFX_E_AGG: return true;
    case RFX_E_NEG: case RFX_E_BINOP: case RFX_E_FN:
        for (int i = 0; i < rfx_expr_nkids(e); i++)
            if (expr_has_agg(rfx_expr_kid(e, i)))
                return true;
        return false;
    default: return false;
    }
}

/* Variables of the inner body of an aggregate shared with the enclosing conjunction. */
static int agg_groups(rule_ctx *R, const rfx_expr *agg, const bool *outer, int *out)
{
    rfx_conj *cj = rfx_agg_conj(agg);
    bool *in = calloc((size_t)R->nv + 1, 1);
    int n = 0;
    if (!in) {
        R->L->oom = true;
        return 0;
    }
    rfx_conj_vars(cj, in, NULL);   /* clause variables only: below R->nv */
    for (int v = 0; v < R->nv; v++)
        if (in[v] && outer[v])
            out[n++] = v;
    free(in);
    return n;
}

static void item_vars(rule_ctx *R, const item *it, bool *use, const bool *outer)
{
    switch (it->kind) {
    case IT_ATOM:
    case IT_NEG:
        for (int i = 0; i < it->atom->nargs; i++)
            if (it->argvar[i] >= 0)
                use[it->argvar[i]] = true;
        break;
    case IT_FILTER:
        rfx_lower_expr_vars(R, it->lhs, use);
        rfx_lower_expr_vars(R, it->rhs, use);
        break;
    case IT_BIND: case IT_RANGE:
        /* the bound variable too: when it is bound already, the binding is a test of it */
        rfx_lower_expr_vars(R, it->rhs, use);
        use[it->var] = true;
        break;
    case IT_AGG: {
        int g[RFX_MAX_RULE_VARS + 1];
        int n = agg_groups(R, it->agg, outer, g);
        for (int i = 0; i < n; i++)
            use[g[i]] = true;
        break;
    }
    }
}

/* Variables still needed after the items done so far: by open items and the output. */
void rfx_lower_needed_vars(rule_ctx *R, const hcol *out, int nout, bool *use, const bool *outer)
{
    memset(use, 0, (size_t)R->nv + 1);
    for (int i = 0; i < R->nitems; i++)
        if (!R->items[i].done)
            item_vars(R, &R->items[i], use, outer);
    for (int i = 0; i < nout; i++) {
        if (out[i].e)
            rfx_lower_expr_vars(R, out[i].e, use);
        else if (out[i].var >= 0)
            use[out[i].var] = true;
    }
}

/* ---- scans ------------------------------------------------------------------------- */
/* Scan of an atom: selections for constants, repeated variables and comparisons that
 * involve only this atom's variables; output = its distinct variables, less those `keep`
 * (when given) does not hold: read by nothing else, they are `_`s. */
flow rfx_lower_scan_atom(rule_ctx *R, item *it, bool push_filters, const bool *keep)
{
    lower_ctx *L = R->L;
    const rfx_atom *a = it->atom;
    const rfx_pvar *src = &L->plan->vars[it->src];
    int n = a->nargs;
    flow base = rfx_lower_flow_new(L, it->src, n);
    for (int i = 0; base.schema && i < n; i++)
        base.schema[i] = it->argvar[i];
    base.sorted = n;
    base.unique = true;

    rfx_rx *pred = NULL;
    rfx_rx **outs = lalloc(L, sizeof(rfx_rx *) * (size_t)(n + 1));
    int *schema = lalloc(L, sizeof(int) * (size_t)(n + 1));
    if (!outs || !schema || !base.schema)
        return base;
    int nout = 0, sorted = 0;
    bool order_alive = true, unique = true;
    for (int i = 0; i < n; i++) {
        int v = it->argvar[i];
        if (it->argconst[i]) {
            rfx_rx *cmp = rfx_rx_new(L, RFX_RX_CMP, src->types[i]);
            cmp->op = RFX_EQ;
            cmp->l = rfx_rx_col(L, i, src->types[i]);
            bool ok = true;
            cmp->r = rfx_rx_new(L, RFX_RX_CONST, src->types[i]);
            cmp->r->value = rfx_lower_const_value(L->prog, it->argconst[i], src->types[i], &ok);
            if (!ok) {
                cmp->r = rfx_lower_expr(R, it->argconst[i], &base, NULL, src->types[i]);
            }
            pred = rfx_rx_and(L, pred, cmp);
            continue;             /* a column equal to a constant keeps the order */
        }
        int first = -1;
        for (int j = 0; v >= 0 && j < i; j++)
            if (it->argvar[j] == v && !it->argconst[j])
                first = j;
        if (v < 0 || (keep && !keep[v] && first < 0)) {   /* `_`: dropped */
            order_alive = false;
            unique = false;
            continue;
        }
        if (first >= 0) {
            /* one variable twice in an atom: the same value, bit for bit (a float's 0.0 and
             * -0.0 are two values, as in a join) */
            rfx_rx *cmp = rfx_rx_new(L, RFX_RX_CMP, src->types[i] == RFX_FLOAT ? RFX_UNSIGNED : src->types[i]);
            cmp->op = RFX_EQ;
            cmp->l = rfx_rx_col(L, first, src->types[i]);
            cmp->r = rfx_rx_col(L, i, src->types[i]);
            pred = rfx_rx_and(L, pred, cmp);
            continue;             /* equal to an earlier column: order kept */
        }
        outs[nout] = rfx_rx_col(L, i, src->types[i]);
        schema[nout++] = v;
        if (order_alive)
            sorted = nout;
    }
    /* push down comparisons over this atom's variables alone */
    if (push_filters) {
        bool *saved = R->bound;
        bool *mine = calloc((size_t)R->nv + 1, 1);
        if (!mine) {
            L->oom = true;
            return base;
        }
        for (int i = 0; i < n; i++)
            if (it->argvar[i] >= 0)
                mine[it->argvar[i]] = true;
        R->bound = mine;
        for (int k = 0; k < R->nitems; k++) {
            item *f = &R->items[k];
            /* a binding of one of this atom's variables to its others (`b(x, x + 1)`) is a
             * test of them: equal by value, as apply_filters would test it after the join */
            if (f->kind == IT_BIND && !f->done && mine[f->var] && expr_bound(R, f->rhs))
                f->kind = IT_FILTER;
            if (f->kind == IT_FILTER && !f->done && expr_bound(R, f->lhs) && expr_bound(R, f->rhs)) {
                pred = rfx_rx_and(L, pred, rfx_lower_cmp(R, f, &base, NULL));
                f->done = true;
            }
        }
        R->bound = saved;
        free(mine);
    }
    if (!pred && nout == n)
        return base;
    flow g = rfx_lower_emit_map(R, &base, pred, outs, schema, nout);
    g.sorted = sorted;
    g.unique = unique;
    return g;
}

/* ---- one conjunction ---------------------------------------------------------------------- */
/* An aggregate body's rows (its groups' columns first) less those of groups the enclosing
 * tuples lack (within: those groups, a sorted set; NULL: none dropped), where a sort is
 * to put them in groups: each row searched among the groups (a probe), so that the sort
 * sorts only the rows kept. Rows in groups already need no filter: the aggregate reads
 * only the groups it is asked for. */
static void keep_within(lower_ctx *L, flow *cur, const flow *within)
{
    if (!within || L->oom || rfx_lower_in_order(cur, within->schema, within->n, NULL, false))
        return;
    /* optional: the aggregate reads only the groups it is asked for */
    rfx_lower_emit_semijoin(L, cur, RFX_RA_INTERSECT, within->var, within->n, true, true);
}

static flow lower_conj(lower_ctx *L, const rfx_clause *c, const rfx_conj *cj, int delta_lit,
                       const hcol *out, int nout, int bag_keys, bool inner, int nv_base, const flow *seed,
                       const flow *within);

void rfx_lower_add_item(rule_ctx *R, item it)
{
    if (R->nitems == R->itemcap) {
        int nc = R->itemcap ? R->itemcap * 2 : 16;
        item *n = lalloc(R->L, sizeof(item) * (size_t)nc);
        if (!n)
            return;
        rfx_memcpy(n, R->items, sizeof(item) * (size_t)R->nitems);
        R->items = n;
        R->itemcap = nc;
    }
    R->items[R->nitems++] = it;
}

static void collect_aggs(rule_ctx *R, const rfx_expr *e)
{
    if (e->kind == RFX_E_AGG && rfx_lower_agg_var(R, e) < 0) {   /* $hi(a) and $lo(a) share a */
        R->aggs[R->nagg] = e;
        R->aggvar[R->nagg++] = R->nv;
        R->nv += RFX_PRIM_WIDE(rfx_lower_expr_prim(R, e)) ? 2 : 1;   /* a 64-bit one: its low word next */
    }
    for (int i = 0; i < rfx_expr_nkids(e); i++)
        collect_aggs(R, rfx_expr_kid(e, i));
}

static double estimate(lower_ctx *L, int src, int nconst)
{
    const rfx_pvar *v = &L->plan->vars[src];
    double est = 1e6;
    if (v->kind == RFX_PV_DELTA)
        est = 1e3;
    else if (v->rel >= 0) {
        const rfx_relation *r = &L->prog->rels[v->rel];
        if (L->stratum >= 0 && r->stratum == L->stratum)
            est = 1e7;
        else if (!r->has_rules && !(r->io & RFX_REL_INPUT))
            est = 1e2;     /* facts only */
        else if (r->demand)
            est = 1e3;     /* made to be few: the tuples a reader binds (sema_demand.c) */
    }
    for (int i = 0; i < nconst; i++)
        est /= 10;
    return est;
}

static void build_atom_item(rule_ctx *R, const rfx_lit *l, int src, bool inner, item *it)
{
    lower_ctx *L = R->L;
    const rfx_atom *a = &l->atom;
    memset(it, 0, sizeof *it);
    it->kind = l->kind == RFX_L_NEG ? IT_NEG : IT_ATOM;
    it->atom = a;
    it->src = src;
    it->loc = l->loc;
    it->argvar = lalloc(L, sizeof(int) * (size_t)(a->nargs + 1));
    it->argconst = lalloc(L, sizeof(rfx_expr *) * (size_t)(a->nargs + 1));
    if (!it->argvar || !it->argconst)
        return;
    int nconst = 0;
    for (int i = 0; i < a->nargs; i++) {
        const rfx_expr *x = a->args[i];
        it->argvar[i] = -1;
        if (x->kind == RFX_E_VAR)
            it->argvar[i] = x->u.v.var;
        else if (x->kind == RFX_E_ANON) {
            /* inside count/sum, `_` still tells tuples apart: keep it as a fresh variable */
            if (inner && it->kind == IT_ATOM)
                it->argvar[i] = R->nv++;
        } else if (x->kind == RFX_E_INT || x->kind == RFX_E_UNSIGNED || x->kind == RFX_E_FLOAT ||
                   x->kind == RFX_E_STRING) {
            it->argconst[i] = x;
            nconst++;
        } else {
            /* an expression argument: a fresh column variable bound to the expression, as
             * Soufflé reads `b(x + 1, y)`. Where the current tuples hold the expression's
             * variables before the atom is joined, a key computed on them (`a(x), b(x + 1,
             * y)` is a join, not a product tested pair by pair; lower_keys.c has the other
             * way round); where they are the atom's own columns, a test on its scan; else a
             * test once both sides are bound. One that reads no variable (`nil`, `1 + 2`)
             * tests the scan, as a constant does. */
            bool *use = calloc((size_t)R->nv + 1, 1);
            if (!use) {
                L->oom = true;
                return;
            }
            rfx_lower_expr_vars(R, x, use);
            bool reads = false;
            for (int w = 0; w < R->nv; w++)
                reads |= use[w];
            free(use);
            int v = R->nv++;
            it->argvar[i] = v;
            item f = {.kind = reads || it->kind == IT_NEG ? IT_BIND : IT_FILTER, .cmp = RFX_EQ, .loc = x->loc, .var = v};
            rfx_expr *ve = lalloc(L, sizeof *ve);
            if (!ve)
                return;
            ve->kind = RFX_E_VAR;
            ve->u.v.var = v;
            ve->u.v.name = "$arg";
            ve->type = x->type;
            f.lhs = ve;
            f.rhs = x;
            rfx_lower_add_item(R, f);
        }
    }
    it->est = estimate(L, src, nconst);
}

/* Whether the atom scanned as s changes only outside the loop being lowered (a relation
 * of an earlier stratum read by a rule version with a delta): what is made of it alone is
 * hoisted out of the loop and made once. */
static bool loop_invariant(rule_ctx *R, const item *it)
{
    const rfx_pvar *v = &R->L->plan->vars[it->src];
    return rfx_lower_in_loop(R) && v->kind != RFX_PV_DELTA && v->rel >= 0 && R->L->prog->rels[v->rel].stratum != R->L->stratum;
}

/* Where the join of atom `it` with cur sorts the atom's rows anyway, or they are made once
 * outside the loop: applies to its scan s each negation over its variables alone (`r(v1,
 * v2), !bad(v1)`) and returns whether one of them is then read by nothing after the join,
 * for the caller to drop it and the repeats that leaves (a tuple of cur then meets each
 * value left once). A recursive relation already in join order keeps the negation after
 * the join, whose work follows the delta. */
static bool push_negations(rule_ctx *R, flow *s, const flow *cur, item *it, const hcol *out, int nout,
                           const bool *outer, bool *need)
{
    int k = 0;
    bool keys_first = true;
    for (int i = 0; i < s->n; i++)
        if (rfx_lower_col_of(cur, NULL, s->schema[i]) >= 0) {
            keys_first &= i == k;
            k++;
        }
    if (keys_first && s->sorted >= k && !loop_invariant(R, it))
        return false;
    /* the local negations together: one may free a variable only with the others */
    int local[64], nl = 0;
    for (int n = 0; n < R->nitems && nl < 64; n++) {
        item *neg = &R->items[n];
        if (neg->done || neg->kind != IT_NEG || neg->head_test)
            continue;
        bool mine = true;
        for (int a = 0; mine && a < neg->atom->nargs; a++)
            mine = neg->argvar[a] < 0 || rfx_lower_col_of(s, NULL, neg->argvar[a]) >= 0;
        if (mine) {
            local[nl++] = n;
            neg->done = true;
        }
    }
    rfx_lower_needed_vars(R, out, nout, need, outer);
    bool frees = false;
    for (int c = 0; c < s->n; c++)
        frees |= s->schema[c] >= 0 && !need[s->schema[c]] && rfx_lower_col_of(cur, NULL, s->schema[c]) < 0;
    for (int i = 0; i < nl; i++) {
        R->items[local[i]].done = false;
        if (frees)
            rfx_lower_apply_negation(R, s, &R->items[local[i]]);
    }
    return frees;
}

/* Whether the tuples joined so far are likely few against relations rels[0..n) (those of
 * the atoms that are to meet them): none of their atoms reads such a relation (its rows of
 * a key would all be there: a group-by, `r(g, _), s = sum v : { r(g, v) }`), and one is
 * derived or selected by a constant (`chosen(pk)` of 2 K parts against lineitem's 200 K;
 * a whole input relation's keys, `orders(k, ...)` against lineitem, are most likely
 * every row's). skip: an atom not counted (the one being joined). Never in a semi-naive
 * loop: there the rows to meet a delta are sorted once, outside it, or are a relation's,
 * sorted already, and a filter by each delta would read them all every iteration. */
static bool joined_selective(rule_ctx *R, const item *skip, const int *rels, int n)
{
    bool selective = false;
    if (rfx_lower_in_loop(R))
        return false;
    for (int k = 0; k < R->nitems; k++) {
        const item *it = &R->items[k];
        if (it == skip || it->kind != IT_ATOM || !it->done)
            continue;
        for (int i = 0; i < n; i++)
            if (rels[i] == it->atom->rel)
                return false;
        selective |= R->L->prog->rels[it->atom->rel].has_rules;
        for (int a = 0; a < it->atom->nargs; a++)
            selective |= it->argconst[a] != NULL;
    }
    return selective;
}

/* s (an atom's rows) sorted with keys[0..k) first for a join with cur (in order with them
 * first): where cur is likely few against s's relation (joined_selective), s's rows are
 * first probed against cur's keys, so that only rows that may meet one are sorted (TPC-H
 * Q17's lines of the chosen parts, not all; the probe is optional: a backend that finds it
 * dearer than the rows it would drop keeps them all). */
static flow order_for_join(rule_ctx *R, flow s, const flow *cur, item *it, const int *keys, int k)
{
    lower_ctx *L = R->L;
    if (k == 0 || it->delta || rfx_lower_in_order(&s, keys, k, NULL, false) ||
        !joined_selective(R, it, &it->atom->rel, 1))
        return rfx_lower_ensure_order(R, s, keys, k, NULL, false);
    rfx_rx **outs = lalloc(L, sizeof(rfx_rx *) * (size_t)k);
    int *schema = lalloc(L, sizeof(int) * (size_t)k);
    if (!outs || !schema)
        return s;
    for (int i = 0; i < k; i++) {
        outs[i] = rfx_rx_col(L, i, L->plan->vars[cur->var].types[i]);
        schema[i] = keys[i];
    }
    flow wanted = cur->n == k ? *cur : rfx_lower_emit_map(R, cur, NULL, outs, schema, k);
    bool rest_ordered;
    s = rfx_lower_keys_first(R, s, keys, k, NULL, &rest_ordered);
    rfx_lower_emit_semijoin(L, &s, RFX_RA_INTERSECT, wanted.var, k, true, true);
    const bool was_unique = s.unique;
    rfx_ra_cmd *c = rfx_lower_sort_all(L, &s);
    if (c && was_unique && rest_ordered && k < s.n)
        c->nkeys = k;   /* rows of equal keys keep the order of the sorted source */
    return s;
}

/* Join (or semi-join) the current flow with an atom's scan. */
static bool apply_filters(rule_ctx *R, flow *cur, const hcol *out, int nout, const bool *outer);

static flow join_atom(rule_ctx *R, flow cur, item *it, const hcol *out, int nout, const bool *outer)
{
    lower_ctx *L = R->L;
    if (!(cur.var == L->plan->unit && cur.n == 0)) {
        /* the atom's variables an inverse binds (lower_keys.c), then what they let test or
         * bind on the current tuples rather than on the atom's rows */
        int was = cur.var;
        cur = rfx_lower_keys_inverted(R, cur, it);
        while (cur.var != was && apply_filters(R, &cur, out, nout, outer) && !L->oom)
            ;
    }
    const int probed = rfx_lower_probe_cols(R, &cur, it);
    if (probed) {
        rfx_lower_probe_atom(R, &cur, it, probed, RFX_RA_INTERSECT);
        return cur;
    }
    it->done = true;
    bool *need = calloc((size_t)R->nv + 1, 1);
    if (!need) {
        L->oom = true;
        return cur;
    }
    /* the atom's variables that nothing else reads nor binds (a named variable used once
     * is an `_`) stay out of its scan */
    rfx_lower_needed_vars(R, out, nout, need, outer);
    for (int v = 0; v < R->nv; v++)
        need[v] |= R->bound[v];
    flow s = rfx_lower_scan_atom(R, it, true, need);
    if (!(cur.var == L->plan->unit && cur.n == 0))
        s = rfx_lower_keys_computed_on_atom(R, s, &cur, it);
    bool pushed = !(cur.var == L->plan->unit && cur.n == 0) && push_negations(R, &s, &cur, it, out, nout, outer, need);
    rfx_lower_needed_vars(R, out, nout, need, outer);
    int *keys = lalloc(L, sizeof(int) * (size_t)(s.n + 1));
    if (!keys) {
        free(need);
        return cur;
    }
    int k = 0;
    for (int i = 0; i < s.n; i++)
        if (rfx_lower_col_of(&cur, NULL, s.schema[i]) >= 0)
            keys[k++] = s.schema[i];
    if (cur.var == L->plan->unit && cur.n == 0) {
        /* the unit relation joins as the identity */
        for (int i = 0; i < s.n; i++)
            R->bound[s.schema[i]] = true;
        free(need);
        return s;
    }
    /* key order: the atom side's if it is already sorted that way, else the current's */
    bool s_ok = s.sorted >= k;
    for (int i = 0; s_ok && i < k; i++)
        s_ok = s.schema[i] == keys[i];
    if (!s_ok) {
        bool c_ok = cur.sorted >= k;
        for (int i = 0; c_ok && i < k; i++) {
            bool in = false;
            for (int j = 0; j < k; j++)
                in |= cur.schema[i] == keys[j];
            c_ok = in;
        }
        if (c_ok)
            for (int i = 0; i < k; i++)
                keys[i] = cur.schema[i];
    }
    /* key variables are needed to match even when nothing later reads them */
    for (int i = 0; i < k; i++)
        need[keys[i]] = true;
    if (pushed)   /* the atom's rows without the variables nothing after the join reads */
        s = rfx_lower_ensure_order(R, s, keys, k, need, true);
    /* the current tuples, before a join that adds columns, lose those nothing reads and
     * the duplicates that leaves, so that no match is made twice for a later
     * deduplication to remove */
    bool semi = k == s.n;
    /* a comparison of one of the atom's variables with the current tuples' values (`y <=
     * x + 2`) ranges the join (lower_keys.c): the atom's rows sorted on y after the keys */
    const int ranged = semi ? -1 : rfx_lower_range_var(R, &cur, &s, keys, k);
    /* tuples not in key order are each searched in the atom's rows (a probe) rather than
     * sorted first: for a semi-join, the sort, where one comes after, sorts only the rows
     * kept; for a join, where the atom's rows are in key order as they are and the
     * current tuples need no compaction, the join reads them as they come (a delta of a
     * linear recursion, sorted on the columns it was made by, read by another) */
    bool probe = !rfx_lower_in_order(&cur, keys, k, need, false) &&
                 (semi || (k > 0 && rfx_lower_in_order(&s, keys, k, NULL, false) &&
                           rfx_lower_in_order(&cur, NULL, 0, need, true))),
         rest_ordered;
    if (probe)
        cur = rfx_lower_keys_first(R, cur, keys, k, need, &rest_ordered);
    else
        cur = rfx_lower_ensure_order(R, cur, keys, k, need, !semi);
    if (ranged >= 0) {
        keys[k] = ranged;
        s = rfx_lower_ensure_order(R, s, keys, k + 1, NULL, false);
    } else
        s = semi ? rfx_lower_ensure_order(R, s, keys, k, NULL, false) : order_for_join(R, s, &cur, it, keys, k);
    for (int i = 0; i < k; i++)
        need[keys[i]] = false;
    rfx_rx *range_pred = ranged >= 0 && s.schema[k] == ranged ? rfx_lower_range_pred(R, ranged, &cur, &s, keys, k)
                                                              : NULL;
    if (range_pred)   /* what only its comparisons read is read by the join alone */
        need[ranged] = false;
    rfx_lower_needed_vars(R, out, nout, need, outer);

    if (semi) {
        /* every variable of the atom is bound (or read by nothing: dropped by its scan): a
         * semi-join keeps the current tuples */
        rfx_lower_emit_semijoin(L, &cur, RFX_RA_INTERSECT, s.var, k, probe, false);
        free(need);
        return cur;
    }
    rfx_rx **outs = lalloc(L, sizeof(rfx_rx *) * (size_t)(cur.n + s.n + 1));
    int *schema = lalloc(L, sizeof(int) * (size_t)(cur.n + s.n + 1));
    if (!outs || !schema) {
        free(need);
        return cur;
    }
    int n = 0;
    bool dropped = false;
    const rfx_pvar *cv = &L->plan->vars[cur.var], *sv = &L->plan->vars[s.var];
    for (int i = 0; i < cur.n; i++) {
        if (cur.schema[i] >= 0 && !need[cur.schema[i]]) {
            dropped = true;
            continue;
        }
        outs[n] = rfx_rx_col(L, i, cv->types[i]);
        schema[n++] = cur.schema[i];
    }
    for (int j = k; j < s.n; j++) {
        if (!need[s.schema[j]]) {
            dropped = true;
            continue;
        }
        outs[n] = rfx_rx_col(L, cur.n + j, sv->types[j]);
        schema[n++] = s.schema[j];
    }
    rfx_prim *types = rfx_lower_out_types(R, outs, n);
    int dst = rfx_lower_new_var(L, NULL, RFX_PV_TEMP, n, types, -1);
    rfx_ra_cmd *c = rfx_lower_emit(L, k ? RFX_RA_JOIN : RFX_RA_PRODUCT, dst, cur.var, s.var);
    c->nkeys = k;
    c->probe = probe;
    c->pred = range_pred;
    c->range = range_pred != NULL;
    c->nout = n;
    c->out = outs;
    for (int j = 0; j < s.n; j++)
        R->bound[s.schema[j]] = true;
    flow g = rfx_lower_flow_new(L, dst, n);
    if (g.schema)
        rfx_memcpy(g.schema, schema, sizeof(int) * (size_t)n);
    /* merge join emits key groups in order, each as the cross product of its two runs
     * (the atom side's run in its own order: sorted beyond the keys only as far as it is) */
    int natural[512], nn = 0;
    for (int i = 0; i < cur.n && nn < 512; i++)
        natural[nn++] = cur.schema[i];
    bool cur_full = cur.sorted == cur.n && cur.unique;
    if (cur_full)
        for (int j = k; j < s.sorted && nn < 512; j++)
            natural[nn++] = s.schema[j];
    int lim = cur_full ? nn : (cur.sorted < nn ? cur.sorted : nn);
    if (k == 0 && !cur_full)
        lim = cur.sorted;
    while (!probe && g.sorted < n && g.sorted < lim && schema[g.sorted] == natural[g.sorted])
        g.sorted++;
    g.unique = !dropped && cur.unique && s.unique;
    free(need);
    return g;
}

/* `x = e` on floats, with x also an argument of an atom still to be joined, is an IEEE
 * test after that join (0.0 = -0.0 holds), not a binding the join would match by bits. */
static bool float_test(rule_ctx *R, const item *bind)
{
    if (rfx_lower_expr_prim(R, bind->lhs) != RFX_FLOAT || bind->rhs->kind == RFX_E_VAR)
        return false;
    for (int k = 0; k < R->nitems; k++) {
        const item *it = &R->items[k];
        if (it->done || it->kind != IT_ATOM)
            continue;
        for (int a = 0; a < it->atom->nargs; a++)
            if (it->argvar[a] == bind->var)
                return true;
    }
    return false;
}

/* Whether the float binding items[k] waits for an earlier-written binding of its variable:
 * Soufflé binds by the first, and 0.0 = -0.0 holds between values that print differently.
 * It waits only where that binding's inputs come from atoms or aggregates (it will be
 * ready), so that no rule is left unplannable. */
static bool waits_for_earlier(rule_ctx *R, int k)
{
    const item *it = &R->items[k];
    if (rfx_lower_expr_prim(R, it->rhs) != RFX_FLOAT)
        return false;
    for (int j = 0; j < k; j++) {
        const item *e = &R->items[j];
        if (e->done || e->kind != IT_BIND || e->var != it->var)
            continue;
        bool *use = calloc((size_t)R->nv + 1, 1);
        if (!use) {
            R->L->oom = true;
            return false;
        }
        rfx_lower_expr_vars(R, e->rhs, use);
        bool ready_later = true;
        for (int v = 0; v < R->nv && ready_later; v++) {
            if (!use[v] || R->bound[v])
                continue;
            bool grounded = false;
            for (int q = 0; q < R->nitems && !grounded; q++) {
                const item *g = &R->items[q];
                grounded = g->kind == IT_AGG && g->var == v;
                for (int a = 0; !grounded && g->kind == IT_ATOM && a < g->atom->nargs; a++)
                    grounded = g->argvar[a] == v;
            }
            ready_later = grounded;
        }
        free(use);
        if (ready_later)
            return true;
    }
    return false;
}

/* Applies every ready filter and binding as one MapFilter. Returns true if it did. */
/* Whether every variable of atom `it` is bound already or is the target of a binding not
 * yet made whose expression reads variables that other atoms (or what is bound) give. */
static bool computed_by_bindings(rule_ctx *R, const item *it)
{
    bool *use = calloc((size_t)R->nv + 1, 1), *others = calloc((size_t)R->nv + 1, 1);
    bool all = use && others;
    for (int k = 0; all && k < R->nitems; k++) {   /* what the other atoms bind */
        const item *o = &R->items[k];
        if (o != it && o->kind == IT_ATOM && !o->done)
            for (int a = 0; a < o->atom->nargs; a++)
                if (o->argvar[a] >= 0)
                    others[o->argvar[a]] = true;
    }
    for (int a = 0; all && a < it->atom->nargs; a++) {
        int v = it->argvar[a];
        if (v < 0 || R->bound[v])
            continue;
        bool computed = false;
        for (int k = 0; !computed && k < R->nitems; k++) {
            const item *b = &R->items[k];
            if (b->done || b->kind != IT_BIND || b->var != v)
                continue;
            memset(use, 0, (size_t)R->nv + 1);
            rfx_lower_expr_vars(R, b->rhs, use);
            bool reads = false, given = true;
            for (int w = 0; w < R->nv; w++)
                if (use[w]) {
                    reads = true;
                    given &= R->bound[w] || (others[w] && w != v);
                }
            computed = reads && given;
        }
        all = computed;
    }
    free(use);
    free(others);
    return all;
}

static bool apply_filters(rule_ctx *R, flow *cur, const hcol *out, int nout, const bool *outer)
{
    lower_ctx *L = R->L;
    rfx_rx *pred = NULL;
    int nbind = 0, nrebind = 0;
    int bindvar[64], bindby[64], rebindvar[64];
    const rfx_expr *bindexpr[64], *rebindexpr[64];
    for (int k = 0; k < R->nitems; k++) {
        item *it = &R->items[k];
        if (it->done)
            continue;
        if (it->kind == IT_FILTER && expr_bound(R, it->lhs) && expr_bound(R, it->rhs)) {
            pred = rfx_rx_and(L, pred, rfx_lower_cmp(R, it, cur, NULL));
            it->done = true;
        } else if (it->kind == IT_BIND && !R->bound[it->var] && expr_bound(R, it->rhs) && nbind < 64 &&
                   !float_test(R, it) && !rfx_lower_listed(bindvar, nbind, it->var) && !waits_for_earlier(R, k)) {
            /* (a second binding of a variable this map binds, `y = min .., y = max ..`,
             * waits for the next: a test of the value the first gives) */
            bindvar[nbind] = it->var;
            bindby[nbind] = k;
            bindexpr[nbind++] = it->rhs;
            it->done = true;
        } else if (it->kind == IT_BIND && R->bound[it->var] && it->rhs->kind == RFX_E_VAR &&
                   !R->bound[it->rhs->u.v.var]) {
            /* `x = y` with x bound binds y */
            const rfx_expr *v = it->rhs;
            it->rhs = it->lhs;
            it->lhs = v;
            it->var = v->u.v.var;
            k--;
        } else if (it->kind == IT_BIND && R->bound[it->var] && expr_bound(R, it->rhs)) {
            /* both sides bound already: the binding is an equality test. A float bound by
             * a binding written after this one takes this one's value once the test holds:
             * Soufflé binds by the first, and 0.0 = -0.0 holds between values that print
             * differently */
            if (R->bound_by[it->var] > k + 1 && nrebind < 64 && rfx_lower_expr_prim(R, it->rhs) == RFX_FLOAT &&
                !rfx_lower_listed(rebindvar, nrebind, it->var)) {
                rebindvar[nrebind] = it->var;
                rebindexpr[nrebind++] = it->rhs;
            }
            it->kind = IT_FILTER;
            k--;
        }
    }
    /* a binding reading a variable this map rebinds waits for the next map, which reads the
     * value taken */
    for (int i = 0; nrebind && i < nbind; i++) {
        bool *use = calloc((size_t)R->nv + 1, 1);
        if (!use) {
            L->oom = true;
            return false;
        }
        rfx_lower_expr_vars(R, bindexpr[i], use);
        bool reads = false;
        for (int r = 0; r < nrebind; r++)
            reads |= use[rebindvar[r]];
        free(use);
        if (!reads)
            continue;
        R->items[bindby[i]].done = false;
        for (int j = i + 1; j < nbind; j++)
            bindvar[j - 1] = bindvar[j], bindby[j - 1] = bindby[j], bindexpr[j - 1] = bindexpr[j];
        nbind--;
        i--;
    }
    if (!pred && !nbind)
        return false;
    for (int i = 0; i < nbind; i++) {
        R->bound[bindvar[i]] = true;
        R->bound_by[bindvar[i]] = bindby[i] + 1;
    }
    bool *need = calloc((size_t)R->nv + 1, 1);
    if (!need) {
        L->oom = true;
        return false;
    }
    rfx_lower_needed_vars(R, out, nout, need, outer);
    rfx_rx **outs = lalloc(L, sizeof(rfx_rx *) * (size_t)(cur->n + nbind + 1));
    int *schema = lalloc(L, sizeof(int) * (size_t)(cur->n + nbind + 1));
    if (!outs || !schema) {
        free(need);
        return false;
    }
    int n = 0;
    bool dropped = false;
    const rfx_pvar *cv = &L->plan->vars[cur->var];
    for (int i = 0; i < cur->n; i++) {
        if (cur->schema[i] >= 0 && !need[cur->schema[i]]) {
            dropped = true;
            continue;
        }
        int r = 0;
        while (r < nrebind && rebindvar[r] != cur->schema[i])
            r++;
        outs[n] = r < nrebind ? rfx_lower_expr(R, rebindexpr[r], cur, NULL, RFX_FLOAT) : rfx_rx_col(L, i, cv->types[i]);
        schema[n++] = cur->schema[i];
    }
    for (int i = 0; i < nbind; i++) {
        outs[n] = rfx_lower_expr(R, bindexpr[i], cur, NULL, rfx_lower_expr_prim(R, bindexpr[i]));
        schema[n++] = bindvar[i];
    }
    bool uniq = cur->unique && !dropped;
    *cur = rfx_lower_emit_map(R, cur, pred, outs, schema, n);
    cur->unique = uniq;
    free(need);
    return true;
}

/* cur sorted with `keys` first, keeping every column it has (negation and aggregation
 * add to the current tuples; they drop nothing). */
static flow order_keeping_all(rule_ctx *R, flow cur, const int *keys, int k)
{
    bool *need = calloc((size_t)R->nv + 1, 1);
    if (!need) {
        R->L->oom = true;
        return cur;
    }
    for (int i = 0; i < cur.n; i++)
        if (cur.schema[i] >= 0)
            need[cur.schema[i]] = true;
    cur = rfx_lower_ensure_order(R, cur, keys, k, need, false);
    free(need);
    return cur;
}

void rfx_lower_apply_negation(rule_ctx *R, flow *cur, item *it)
{
    lower_ctx *L = R->L;
    flow s = rfx_lower_scan_atom(R, it, false, NULL);
    it->done = true;
    s = rfx_lower_ensure_order(R, s, s.schema, s.n, NULL, false);
    /* tuples not in the atom's key order are each searched in its rows (a probe), as a
     * semi-join's are: every column kept */
    bool probe = !rfx_lower_in_order(cur, s.schema, s.n, NULL, false), rest_ordered;
    if (probe)
        *cur = rfx_lower_keys_first(R, *cur, s.schema, s.n, NULL, &rest_ordered);
    rfx_lower_emit_semijoin(L, cur, RFX_RA_DIFFERENCE, s.var, s.n, probe, false);
}

/* Soufflé's test of a recursive rule's head (`IF NOT (x, y) IN path`): in a semi-naive
 * loop's version a tuple whose head the relation holds already adds nothing, so once the
 * head's variables are bound and a join remains, the tuples whose head is held are
 * dropped before it (`r(x, x) :- r(x, y), r(x, z), !s(z, y).` with r an eqrel:
 * an x held meets no z at all). Only where a tuple held is one not added: a relation of
 * sets (no lattice, no subsumption, no choice) whose head is its variables and integer or
 * symbol constants, one variable at least (a ground head is bound before any atom). */
static void add_head_test(rule_ctx *R, int natoms)
{
    lower_ctx *L = R->L;
    const rfx_atom *h = &R->c->head;
    if (natoms < 2 || !rfx_lower_in_loop(R) || L->role_src || L->stratum < 0)
        return;
    const rfx_relation *rel = &L->prog->rels[h->rel];
    if (rel->stratum != L->stratum || rel->nchoice || rel->subsumed || rfx_relation_lattice_key(rel) < rel->arity ||
        L->plan->vars[L->relvar[h->rel]].arity != h->nargs)
        return;
    bool var = false;
    for (int i = 0; i < h->nargs; i++) {
        rfx_expr_kind k = h->args[i]->kind;
        if (k != RFX_E_VAR && k != RFX_E_INT && k != RFX_E_UNSIGNED && k != RFX_E_STRING)
            return;
        var |= k == RFX_E_VAR;
    }
    rfx_lit *l = lalloc(L, sizeof *l);
    if (!var || !l)
        return;
    memset(l, 0, sizeof *l);
    l->kind = RFX_L_NEG;
    l->loc = h->loc;
    l->atom = *h;
    item it;
    build_atom_item(R, l, L->relvar[h->rel], false, &it);
    it.ord = -1;
    it.head_test = true;
    rfx_lower_add_item(R, it);
}

/* Whether a conjunction grounds clause variable v by itself. */
static bool conj_grounds(const rfx_clause *c, const rfx_conj *cj, int v)
{
    bool *b = calloc((size_t)c->nvars + 1, 1);
    if (!b)
        return true;   /* out of memory: planned as before, the lowering reports it */
    rfx_conj_ground(cj, b, NULL);
    bool g = b[v];
    free(b);
    return g;
}

/* g (an aggregate's rows, its last two words the float64 mean of decimals' scaled counts)
 * with that mean divided by 10^scale: rows and order as g's, the mean a function of the
 * rest of its row. */
static flow unscaled_mean(rule_ctx *R, const flow *g, int scale)
{
    lower_ctx *L = R->L;
    const int n = g->n;
    rfx_rx **outs = lalloc(L, sizeof(rfx_rx *) * (size_t)n);
    rfx_rx *pair = rfx_rx_new(L, RFX_RX_PAIR, RFX_FLOAT64), *div = rfx_rx_new(L, RFX_RX_BIN, RFX_FLOAT64),
           *ten = rfx_rx_new(L, RFX_RX_CONST, RFX_FLOAT64);
    if (!outs || !pair || !div || !ten)
        return *g;
    for (int i = 0; i < n - 2; i++)
        outs[i] = rfx_rx_col(L, i, L->plan->vars[g->var].types[i]);
    pair->l = rfx_rx_col(L, n - 2, RFX_WORD);
    pair->r = rfx_rx_col(L, n - 1, RFX_WORD);
    ten->value = rfx_of_f64((double)rfx_pow10(scale));
    div->op = RFX_DIV;
    div->l = pair;
    div->r = ten;
    for (int h = 0; h < 2; h++) {
        if (!(outs[n - 2 + h] = rfx_rx_new(L, RFX_RX_HALF, RFX_WORD)))
            return *g;
        outs[n - 2 + h]->op = h;
        outs[n - 2 + h]->l = div;
    }
    flow m = rfx_lower_emit_map(R, g, NULL, outs, g->schema, n);
    m.sorted = g->sorted;
    m.unique = g->unique;
    return m;
}

static void apply_aggregate(rule_ctx *R, flow *cur, item *it, const bool *outer)
{
    lower_ctx *L = R->L;
    const rfx_expr *agg = it->agg;
    int groups[RFX_MAX_RULE_VARS + 1];
    int ng = agg_groups(R, agg, outer, groups);
    /* inner rows: group variables, then the aggregated value, then (for count and sum,
     * whose result depends on multiplicity) every other variable of the inner body */
    hcol cols[RFX_MAX_RULE_VARS + 2];
    int n = 0;
    for (int i = 0; i < ng; i++)
        cols[n++] = (hcol){NULL, groups[i]};
    int valcol = -1;
    const bool wide = RFX_PRIM_WIDE(rfx_lower_expr_prim(R, agg)) && agg->u.agg.fn != RFX_AGG_COUNT;
    /* the mean of decimals: their scaled counts summed exactly (as sums of number64s are),
     * the float64 mean of those then unscaled once, not a float64 sum of every value */
    const bool decimal_mean = agg->u.agg.fn == RFX_AGG_MEAN && agg->u.agg.target &&
                              agg->u.agg.target->type >= 0 &&
                              L->prog->types[agg->u.agg.target->type].prim == RFX_DECIMAL;
    const int mean_scale = decimal_mean ? type_scale(L->prog, agg->u.agg.target->type) : 0;
    if (agg->u.agg.target) {
        valcol = n;
        if (wide) {   /* a 64-bit value: its words */
            rfx_expr *w = lalloc(L, sizeof *w * 2);
            rfx_expr **arg = lalloc(L, sizeof *arg);
            if (!w || !arg)
                return;
            *arg = agg->u.agg.target;
            for (int h = 0; h < 2; h++) {
                w[h] = (rfx_expr){.kind = RFX_E_FN, .loc = agg->loc, .type = RFX_WORD};
                w[h].u.fn.fn = h ? RFX_FN_LO : RFX_FN_HI;
                w[h].u.fn.nargs = 1;
                w[h].u.fn.args = arg;
                cols[n++] = (hcol){&w[h], -1};
            }
        } else
            cols[n++] = (hcol){agg->u.agg.target, -1};
    }
    int nv_before = R->nv;
    /* count, sum and mean take each tuple of the body once: its rows a bag in groups */
    const int bag_keys = agg->u.agg.fn == RFX_AGG_COUNT || agg->u.agg.fn == RFX_AGG_SUM ||
                         agg->u.agg.fn == RFX_AGG_MEAN ? ng : -1;
    /* group variables the body does not ground itself take the enclosing tuples' values:
     * the body starts from their distinct values there (a correlated aggregate) */
    flow seed = {0}, *seeded = NULL;
    int sv[RFX_MAX_RULE_VARS + 1], ns = 0;
    /* an atom made an aggregate (lower_extreme.c) grounds its groups itself; in a
     * semi-naive loop it starts from the delta's groups, so that its work follows the
     * delta, not the whole atom's rows each iteration */
    bool folded = false;
    for (int i = 0; i < R->nfolded; i++)
        folded |= R->folded[i] == agg;
    folded &= rfx_lower_in_loop(R);
    for (int i = 0; i < ng; i++)
        if (folded || !conj_grounds(R->c, rfx_agg_conj(agg), groups[i]))
            sv[ns++] = groups[i];
    if (ns) {
        rfx_rx **outs = lalloc(L, sizeof(rfx_rx *) * (size_t)ns);
        int *schema = lalloc(L, sizeof(int) * (size_t)ns);
        if (!outs || !schema)
            return;
        for (int i = 0; i < ns; i++) {
            int c = rfx_lower_col_of(cur, NULL, sv[i]);
            outs[i] = rfx_rx_col(L, c, L->plan->vars[cur->var].types[c]);
            schema[i] = sv[i];
        }
        seed = rfx_lower_emit_map(R, cur, NULL, outs, schema, ns);
        seed.unique = false;   /* one row per value: SORT_UNIQUE */
        rfx_lower_sort_all(L, &seed);
        seeded = &seed;
    }
    flow within = {0}, *filtered = NULL;
    const rfx_conj *body = rfx_agg_conj(agg);
    int rels[RFX_MAX_RULE_VARS + 1], nrels = 0;
    for (int i = 0; body && i < body->nlits && nrels <= RFX_MAX_RULE_VARS; i++)
        if (body->lits[i]->kind == RFX_L_ATOM)
            rels[nrels++] = body->lits[i]->atom.rel;
    if (!ns && ng > 0 && nrels > 0 && nrels <= RFX_MAX_RULE_VARS && joined_selective(R, NULL, rels, nrels)) {
        /* the enclosing tuples' groups, a set: the body's rows of other groups are dropped */
        *cur = order_keeping_all(R, *cur, groups, ng);
        rfx_rx **outs = lalloc(L, sizeof(rfx_rx *) * (size_t)ng);
        if (!outs)
            return;
        for (int i = 0; i < ng; i++)
            outs[i] = rfx_rx_col(L, i, L->plan->vars[cur->var].types[i]);
        within = rfx_lower_emit_map(R, cur, NULL, outs, groups, ng);
        if (!within.unique)
            rfx_lower_sort_all(L, &within);
        filtered = &within;
    }
    flow in = lower_conj(L, R->c, rfx_agg_conj(agg), -1, cols, n, bag_keys, true, nv_before, seeded, filtered);
    it->done = true;
    if (in.var < 0 && !L->oom) {
        /* a body that is `false`: no inner rows (count 0; sum, min and max unbound) */
        int nin = valcol >= 0 ? valcol + 1 + wide : ng;
        rfx_prim *it_types = lalloc(L, sizeof(rfx_prim) * (size_t)(nin + 1));
        if (!it_types)
            return;
        for (int i = 0; i < ng; i++)
            it_types[i] = type_prim(L->prog, R->c->var_types[groups[i]]);
        if (valcol >= 0)
            it_types[valcol] = wide ? RFX_WORD : rfx_lower_expr_prim(R, agg->u.agg.target);
        if (valcol >= 0 && wide)
            it_types[valcol + 1] = RFX_WORD;
        in = rfx_lower_flow_new(L, rfx_lower_new_var(L, NULL, RFX_PV_TEMP, nin, it_types, -1), nin);
        rfx_lower_emit(L, RFX_RA_CLEAR, in.var, -1, -1);
    }
    *cur = order_keeping_all(R, *cur, groups, ng);
    rfx_prim *types = lalloc(L, sizeof(rfx_prim) * (size_t)(cur->n + 3));
    if (!types)
        return;
    rfx_memcpy(types, L->plan->vars[cur->var].types, sizeof(rfx_prim) * (size_t)cur->n);
    /* a 64-bit result (of the target's kind, or float64 for its mean): two words */
    rfx_prim rp = agg->u.agg.fn == RFX_AGG_COUNT ? RFX_NUMBER
                : wide && agg->u.agg.fn == RFX_AGG_MEAN ? RFX_FLOAT64
                : wide ? rfx_lower_expr_prim(R, agg->u.agg.target) : L->plan->vars[in.var].types[valcol];
    int nres = 1 + wide;
    types[cur->n] = wide ? RFX_WORD : rp;
    types[cur->n + 1] = RFX_WORD;
    int dst = rfx_lower_new_var(L, NULL, RFX_PV_TEMP, cur->n + nres, types, -1);
    rfx_ra_cmd *c = rfx_lower_emit(L, RFX_RA_AGGREGATE, dst, cur->var, in.var);
    c->nkeys = ng;
    c->agg = agg->u.agg.fn;
    c->agg_col = valcol;
    c->agg_prim = decimal_mean ? RFX_NUMBER64 : rp;
    flow g = rfx_lower_flow_new(L, dst, cur->n + nres);
    if (g.schema) {
        rfx_memcpy(g.schema, cur->schema, sizeof(int) * (size_t)cur->n);
        g.schema[cur->n] = it->var;
        if (wide)
            g.schema[cur->n + 1] = it->var + 1;
    }
    /* the aggregate is a function of each tuple: a sorted set stays one */
    bool full = cur->sorted == cur->n && cur->unique;
    g.sorted = full ? cur->n + nres : cur->sorted;
    g.unique = cur->unique;
    R->bound[it->var] = true;
    if (wide)
        R->bound[it->var + 1] = true;
    *cur = mean_scale > 0 ? unscaled_mean(R, &g, mean_scale) : g;
}

/* The most free variables atom `it` shares with any one other atom still to be joined: of
 * atoms alike, the one whose partner then tests every variable it adds goes first (`r(v1,
 * v2), r(v2, v3), r(v3, v2)`: the last two an intersection, whose v3 nothing else reads
 * and is dropped with its duplicates, before v1 multiplies them). */
static int partner_vars(rule_ctx *R, const item *it)
{
    int most = 0;
    for (int k = 0; k < R->nitems; k++) {
        const item *o = &R->items[k];
        if (o == it || o->done || o->kind != IT_ATOM)
            continue;
        int shared = 0;
        for (int a = 0; a < it->atom->nargs; a++) {
            const int v = it->argvar[a];
            bool dup = false;
            for (int b = 0; b < a && !dup; b++)
                dup = it->argvar[b] == v;
            if (v < 0 || R->bound[v] || dup)
                continue;
            for (int b = 0; b < o->atom->nargs; b++)
                if (o->argvar[b] == v) {
                    shared++;
                    break;
                }
        }
        most = shared > most ? shared : most;
    }
    return most;
}

/* Whether Soufflé evaluates an aggregate's body as a relation of its named variables (more
 * than one atom, a nested aggregate, or a variable twice in its one atom), in which case
 * count and sum see each binding of them once: `_` no longer tells tuples apart. */
static bool body_materialized(const rfx_conj *cj)
{
    int atoms = 0;
    const rfx_atom *one = NULL;
    for (int i = 0; i < cj->nlits; i++) {
        const rfx_lit *l = cj->lits[i];
        if (l->kind == RFX_L_ATOM) {
            atoms++;
            one = &l->atom;
        } else if (l->kind == RFX_L_CMP && (expr_has_agg(l->lhs) || expr_has_agg(l->rhs)))
            return true;
        if (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG)
            for (int a = 0; a < l->atom.nargs; a++)
                if (expr_has_agg(l->atom.args[a]))
                    return true;
    }
    if (atoms > 1)
        return true;
    for (int a = 0; one && a < one->nargs; a++)
        for (int b = 0; b < a; b++)
            if (one->args[a]->kind == RFX_E_VAR && one->args[b]->kind == RFX_E_VAR &&
                one->args[a]->u.v.var == one->args[b]->u.v.var)
                return true;
    return false;
}

/* Lowers one conjunction to a sorted set whose columns are `out`. bag_keys >= 0 (an
 * aggregate's inner body that takes each of its tuples once): rows grouped on their first
 * bag_keys columns, one a tuple of the body; a sorted set of the given columns followed by
 * every inner variable (which tell the tuples apart), or where that costs more, a bag of the
 * given columns alone. */
static flow lower_conj(lower_ctx *L, const rfx_clause *c, const rfx_conj *cj, int delta_lit,
                       const hcol *out_in, int nout_in, int bag_keys, bool inner, int nv_base, const flow *seed,
                       const flow *within)
{
    rule_ctx R = {.L = L, .c = c, .nv = nv_base};
    bool all_inner = bag_keys >= 0;
    int nout = nout_in;
    /* a rule's own body, not an aggregate's, whose tuples' multiplicity may count */
    if (!inner && !L->order) {   /* a `.plan` numbers the atoms as written */
        cj = rfx_lower_unread_aggregates(L, c, cj, out_in, nout_in);
        cj = rfx_lower_extremes(L, c, cj, &delta_lit, out_in, nout_in, R.folded, &R.nfolded, 8);
    }
    /* room for fresh variables: aggregates, `_` inside aggregates, expression arguments */
    int room = nv_base + 8;
    for (int i = 0; i < cj->nlits; i++)
        room += cj->lits[i]->kind == RFX_L_CMP ? 4 : 2 * cj->lits[i]->atom.nargs + 1;
    for (int i = 0; i < nout; i++)
        room += 4;
    R.aggs = lalloc(L, sizeof(rfx_expr *) * (size_t)room);
    R.aggvar = lalloc(L, sizeof(int) * (size_t)room);
    if (!R.aggs || !R.aggvar)
        return (flow){0};
    /* aggregates in comparisons, in atoms' arguments (`b(x, max y : {...})`) and in the
     * output become fresh variables */
    for (int i = 0; i < cj->nlits; i++)
        if (cj->lits[i]->kind == RFX_L_CMP) {
            collect_aggs(&R, cj->lits[i]->lhs);
            collect_aggs(&R, cj->lits[i]->rhs);
        } else if (cj->lits[i]->kind == RFX_L_ATOM || cj->lits[i]->kind == RFX_L_NEG)
            for (int a = 0; a < cj->lits[i]->atom.nargs; a++)
                collect_aggs(&R, cj->lits[i]->atom.args[a]);
    for (int i = 0; i < nout; i++)
        if (out_in[i].e)
            collect_aggs(&R, out_in[i].e);
    bool materialized = inner && body_materialized(cj);

    int natoms = 0;
    for (int i = 0; i < cj->nlits; i++) {
        const rfx_lit *l = cj->lits[i];
        item it;
        switch (l->kind) {
        case RFX_L_FALSE:
            return (flow){.var = -1};
        case RFX_L_TRUE:
            break;
        case RFX_L_ATOM:
        case RFX_L_NEG: {
            int src = L->relvar[l->atom.rel];
            if (i == delta_lit)
                src = L->deltavar[l->atom.rel];
            if (l->role && L->role_src)   /* a subsumptive clause's atoms: the parts compared */
                src = L->role_src[l->role];
            build_atom_item(&R, l, src, inner && !materialized, &it);
            it.delta = i == delta_lit || (l->role && l->role == L->role_first);
            it.ord = l->kind == RFX_L_ATOM ? natoms++ : -1;
            rfx_lower_add_item(&R, it);
            break;
        }
        case RFX_L_CMP: {
            memset(&it, 0, sizeof it);
            it.loc = l->loc;
            it.kind = IT_FILTER;
            it.cmp = l->cmp;
            it.bitwise = l->bitwise;
            it.lhs = l->lhs;
            it.rhs = l->rhs;
            if (l->cmp == RFX_EQ && (l->lhs->kind == RFX_E_VAR || l->rhs->kind == RFX_E_VAR)) {
                /* may bind: decided when its sides become bound */
                it.kind = IT_BIND;
                const rfx_expr *v = l->lhs->kind == RFX_E_VAR ? l->lhs : l->rhs;
                const rfx_expr *x = v == l->lhs ? l->rhs : l->lhs;
                it.var = v->u.v.var;
                it.rhs = x;
                it.lhs = v;
                if (x->kind == RFX_E_FN && x->u.fn.fn == RFX_FN_RANGE)
                    it.kind = IT_RANGE;
            }
            rfx_lower_add_item(&R, it);
            break;
        }
        }
    }
    if (!inner)
        add_head_test(&R, natoms);
    /* `v = aggregate` names the aggregate's result v (no copy of the column) where nothing
     * else can bind v: elsewhere (`n = sum d : {...}` with `num(n)`) it is a test of v */
    bool *used = calloc((size_t)R.nv + 1, 1);
    if (!used) {
        L->oom = true;
        return (flow){0};
    }
    for (int k = 0; k < R.nitems; k++) {
        item *it = &R.items[k];
        if (it->kind != IT_BIND || it->rhs->kind != RFX_E_AGG)
            continue;
        memset(used, 0, (size_t)R.nv + 1);
        for (int j = 0; j < R.nitems; j++)
            if (j != k)
                item_vars(&R, &R.items[j], used, NULL);
        rfx_conj_vars(rfx_agg_conj(it->rhs), used, NULL);
        if (used[it->var])
            continue;
        for (int i = 0; i < R.nagg; i++)
            if (R.aggs[i] == it->rhs && R.aggvar[i] >= c->nvars && !RFX_PRIM_WIDE(rfx_lower_expr_prim(&R, it->rhs))) {
                R.aggvar[i] = it->var;
                it->done = true;
            }
    }
    free(used);
    for (int i = 0; i < R.nagg; i++) {
        item it = {.kind = IT_AGG, .agg = R.aggs[i], .var = R.aggvar[i], .loc = R.aggs[i]->loc};
        rfx_lower_add_item(&R, it);
    }
    R.bound = calloc((size_t)R.nv + 1, 1);
    R.bound_by = calloc((size_t)R.nv + 1, sizeof(int));
    bool *outer = calloc((size_t)R.nv + 1, 1);
    if (!R.bound || !R.bound_by || !outer) {
        free(R.bound);
        free(R.bound_by);
        free(outer);
        L->oom = true;
        return (flow){0};
    }
    /* a variable is "outer" (a group key of aggregates) if used outside aggregate bodies */
    for (int k = 0; k < R.nitems; k++)
        if (R.items[k].kind != IT_AGG)
            item_vars(&R, &R.items[k], outer, NULL);
    for (int i = 0; i < nout; i++) {
        if (out_in[i].e)
            rfx_lower_expr_vars(&R, out_in[i].e, outer);
        else if (out_in[i].var >= 0)
            outer[out_in[i].var] = true;
    }

    hcol *out = lalloc(L, sizeof(hcol) * (size_t)(nout + R.nv + 1));
    if (!out) {
        free(R.bound);
        free(R.bound_by);
        free(outer);
        return (flow){0};
    }
    rfx_memcpy(out, out_in, sizeof(hcol) * (size_t)nout);
    const int nasked = nout;   /* the caller's columns, before the inner variables */
    if (all_inner) {
        /* append every variable this inner body binds through its atoms and generators
         * (each value of a range is a binding of its own) */
        bool *seen = calloc((size_t)R.nv + 1, 1);
        if (seen) {
            for (int i = 0; i < nout; i++) {
                if (!out[i].e && out[i].var >= 0)
                    seen[out[i].var] = true;
                if (out[i].e && out[i].e->kind == RFX_E_VAR)
                    seen[out[i].e->u.v.var] = true;
            }
            for (int k = 0; k < R.nitems; k++)
                if (R.items[k].kind == IT_RANGE && !seen[R.items[k].var]) {
                    seen[R.items[k].var] = true;
                    out[nout++] = (hcol){NULL, R.items[k].var};
                } else if (R.items[k].kind == IT_ATOM)
                    for (int a = 0; a < R.items[k].atom->nargs; a++) {
                        int v = R.items[k].argvar[a];
                        if (v >= 0 && !seen[v]) {
                            seen[v] = true;
                            out[nout++] = (hcol){NULL, v};
                        }
                    }
            free(seen);
        }
    }

    flow cur = {L->plan->unit, 0, NULL, 0, true};
    if (seed) {   /* an aggregate body's injected variables, bound by the enclosing tuples */
        cur = *seed;
        for (int i = 0; i < cur.n; i++)
            R.bound[cur.schema[i]] = true;
    }
    /* a `.plan` for this version orders the joins itself (no triejoin) */
    const rfx_plan_order *order = inner ? NULL : L->order;
    if (!inner && !order && (L->join != RFX_PLAN_JOIN_AUTO || !rfx_lower_atoms_tied_by_bindings(&R)))
        rfx_lower_try_lftj(&R, &cur);
    /* first atom: the delta when there is one, else the smallest estimate */
    for (;;) {
        if (L->oom)
            break;
        while (apply_filters(&R, &cur, out, nout, outer) && !L->oom)
            ;
        bool progress = false;
        for (int k = 0; k < R.nitems; k++) {
            item *it = &R.items[k];
            if (it->done)
                continue;
            if (it->kind == IT_NEG) {
                bool ok = true;
                for (int a = 0; a < it->atom->nargs; a++)
                    if (it->argvar[a] >= 0 && !R.bound[it->argvar[a]])
                        ok = false;
                if (ok && it->head_test && !rfx_lower_joins_left(&R))
                    it->done = true;   /* what is left costs what the test would */
                else if (ok) {
                    if (it->head_test)
                        rfx_lower_apply_head_test(&R, &cur, it);
                    else
                        rfx_lower_apply_negation(&R, &cur, it);
                    progress = true;
                }
            } else if (it->kind == IT_RANGE && expr_bound(&R, it->rhs) && !rfx_lower_range_waits(&R, it)) {
                if (!inner && rfx_lower_range_unread(&R, it, out, nout, outer))
                    rfx_lower_apply_range_nonempty(&R, &cur, it);
                else
                    rfx_lower_apply_range(&R, &cur, it);
                progress = true;
            } else if (it->kind == IT_AGG) {
                int g[RFX_MAX_RULE_VARS + 1];
                int ng = agg_groups(&R, it->agg, outer, g);
                bool ok = true;
                for (int i = 0; i < ng; i++)
                    ok &= R.bound[g[i]];
                if (ok) {
                    apply_aggregate(&R, &cur, it, outer);
                    progress = true;
                }
            }
        }
        if (progress)
            continue;
        /* next atom: the delta first; then the one with most bound variables (all bound
         * is a semi-join, the cheapest filter), connected before unconnected, then the
         * smallest estimate */
        item *best = NULL;
        int best_bound = -1, best_partners = -1;   /* best's partner_vars, once asked */
        for (int o = 0; order && o < order->n && !best; o++)
            for (int k = 0; k < R.nitems && !best; k++)
                if (!R.items[k].done && R.items[k].kind == IT_ATOM && R.items[k].ord == order->atoms[o] - 1)
                    best = &R.items[k];
        for (int k = 0; k < R.nitems && !(order && best); k++) {
            item *it = &R.items[k];
            if (it->done || it->kind != IT_ATOM)
                continue;
            if (it->delta && cur.n == 0 && cur.var == L->plan->unit) {
                best = it;
                break;
            }
            int nb = 0, nvars = 0;
            for (int a = 0; a < it->atom->nargs; a++)
                if (it->argvar[a] >= 0) {
                    nvars++;
                    nb += R.bound[it->argvar[a]];
                }
            /* all-bound atoms rank above any partial match; an atom whose every free
             * variable a binding computes from another atom's variables ranks below the
             * rest: after that atom and the binding it is a semi-join, before them a
             * product tested row pair by row pair (`c = substr(phone, 0, 2), code(c)`).
             * A binding the join would key on (lower_keys.c) counts as a bound variable */
            int linked = nb == nvars ? 0 : rfx_lower_keys_by_bindings(&R, it, &cur);
            int score = nb == nvars && nb > 0 ? 1000 : nb + linked;
            if (score < 1000 && nb == 0 && !linked && computed_by_bindings(&R, it))
                score = -1;
            bool tie = best && score == best_bound && it->est == best->est;
            int partners = tie ? partner_vars(&R, it) : -1;
            if (tie && best_partners < 0)
                best_partners = partner_vars(&R, best);
            if (!best || score > best_bound || (score == best_bound && it->est < best->est) ||
                (tie && partners > best_partners)) {
                best = it;
                best_bound = score;
                best_partners = partners;
            }
        }
        if (!best)
            break;
        cur = join_atom(&R, cur, best, out, nout, outer);
    }
    for (int k = 0; k < R.nitems; k++)
        if (!R.items[k].done && !L->oom) {
            L->internal_error = "a body element could not be scheduled";
            break;
        }

    /* the output columns */
    rfx_rx **outs = lalloc(L, sizeof(rfx_rx *) * (size_t)(nout + 1));
    int *schema = lalloc(L, sizeof(int) * (size_t)(nout + 1));
    if (outs && schema) {
        bool identity = nout == cur.n;
        for (int i = 0; i < nout; i++) {
            if (out[i].e) {
                rfx_prim want = out[i].e->type >= 0 ? rfx_lower_expr_prim(&R, out[i].e) : RFX_NUMBER;
                outs[i] = rfx_lower_expr(&R, out[i].e, &cur, NULL, want);
                schema[i] = out[i].e->kind == RFX_E_VAR ? out[i].e->u.v.var : -1;
            } else {
                int col = rfx_lower_col_of(&cur, NULL, out[i].var);
                outs[i] = rfx_rx_col(L, col < 0 ? 0 : col, L->plan->vars[cur.var].types[col < 0 ? 0 : col]);
                schema[i] = out[i].var;
            }
            identity &= outs[i]->kind == RFX_RX_COL && outs[i]->col == i;
        }
        if (all_inner && nasked > 0 && nasked < nout && !(identity && cur.sorted == cur.n && cur.unique) &&
            cur.unique && rfx_lower_keeps_every_column(outs, nout, cur.n)) {
            /* the body's rows are a set and every one of their columns is kept: a row is a
             * tuple already, and the given columns alone, as a bag (one row a tuple, repeats
             * kept), say the same with fewer bytes to move and sort, where the set is not
             * there as it is (a bag needs a column: rows of none are one fact, or none) */
            cur = rfx_lower_emit_map(&R, &cur, NULL, outs, schema, nasked);
            cur.unique = false;
            keep_within(L, &cur, within);
            if (cur.sorted < bag_keys) {   /* in groups: sorted on the groups' columns alone */
                int dst = rfx_lower_new_var(L, NULL, RFX_PV_TEMP, cur.n, L->plan->vars[cur.var].types, -1);
                rfx_lower_emit(L, RFX_RA_SORT, dst, cur.var, -1)->nkeys = bag_keys;
                cur.var = dst;
                cur.sorted = bag_keys;
            }
        } else {
            if (!identity)
                cur = rfx_lower_emit_map(&R, &cur, NULL, outs, schema, nout);
            keep_within(L, &cur, within);
            if (cur.sorted < cur.n || !cur.unique)
                rfx_lower_sort_all(L, &cur);   /* on all columns, whatever their variables */
        }
    }
    free(R.bound);
    free(R.bound_by);
    free(outer);
    return cur;
}

/* ---- rules ----------------------------------------------------------------------------- */
/* Lowers one disjunct of a rule; returns the variable holding its head tuples (a sorted
 * set), or -1 when the body is `false`. delta_lit selects the delta atom. */
int rfx_lower_rule_set(lower_ctx *L, const rfx_clause *c, const rfx_conj *cj, int delta_lit)
{
    int n = c->head.nargs;
    hcol *out = lalloc(L, sizeof(hcol) * (size_t)(n + 1));
    if (!out)
        return -1;
    for (int i = 0; i < n; i++)
        out[i] = (hcol){c->head.args[i], -1};
    flow f = lower_conj(L, c, cj, delta_lit, out, n, -1, false, c->nvars, NULL, NULL);
    return f.var;
}

/* Lowers one disjunct of a rule into `into` (UNION). */
void rfx_lower_rule(lower_ctx *L, const rfx_clause *c, const rfx_conj *cj, int delta_lit, int into)
{
    int v = rfx_lower_rule_set(L, c, cj, delta_lit);
    if (v >= 0)
        rfx_lower_emit(L, RFX_RA_UNION, into, into, v);
}
