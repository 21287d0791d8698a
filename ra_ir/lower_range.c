/* lower_range.c: `v = range(a, b[, s])` in a rule body: each tuple extended by each value
 * (RANGE, on the host), a test where v is bound already or nothing reads it (no value
 * made), and when a range is best left until an atom binds its variable. */
#include "lower_rule.h"

#include <stdlib.h>

/* Whether `v = range(...)` is best left until an atom of the body binds v (it is then a
 * test): integer bounds that are constants spanning over 2^24 values. Bounds read from
 * the tuples are applied as soon as they are bound. */
bool rfx_lower_range_waits(rule_ctx *R, const item *it)
{
    const rfx_expr *e = it->rhs;
    rfx_prim prim = rfx_lower_expr_prim(R, e);
    if (R->bound[it->var] || (prim != RFX_NUMBER && prim != RFX_UNSIGNED))
        return false;
    bool ok = true;
    int64_t a[3] = {0, 0, 1};
    for (int i = 0; i < e->u.fn.nargs && i < 3; i++) {
        uint64_t x = rfx_lower_const_value(R->L->prog, e->u.fn.args[i], prim, &ok);
        a[i] = prim == RFX_NUMBER ? (int64_t)(int32_t)(uint32_t)x : (int64_t)(uint32_t)x;
    }
    int64_t span = a[1] > a[0] ? a[1] - a[0] : a[0] - a[1], step = a[2] < 0 ? -a[2] : a[2];
    bool bound_later = false;
    for (int k = 0; k < R->nitems; k++)
        for (int i = 0; !R->items[k].done && R->items[k].kind == IT_ATOM && i < R->items[k].atom->nargs; i++)
            bound_later |= R->items[k].argvar[i] == it->var;
    return ok && step && span / step > (int64_t)1 << 24 && bound_later;
}

/* cur's rows where value is one of the values of the integer range e (its functor's
 * arguments over cur), kept as they were: none of the values made. */
static void keep_in_range(rule_ctx *R, flow *cur, rfx_rx *value, const rfx_expr *e, rfx_prim prim)
{
    lower_ctx *L = R->L;
    rfx_rx **args = lalloc(L, sizeof(rfx_rx *) * 4), **outs = lalloc(L, sizeof(rfx_rx *) * (size_t)(cur->n + 1));
    if (!args || !outs)
        return;
    args[0] = value;
    for (int i = 0; i < e->u.fn.nargs; i++)
        args[i + 1] = rfx_lower_expr(R, e->u.fn.args[i], cur, NULL, prim);
    rfx_rx *test = rfx_rx_new(L, RFX_RX_CMP, RFX_NUMBER);
    test->op = RFX_EQ;
    test->l = rfx_rx_fn(L, prim == RFX_NUMBER ? RFX_FX_IN_RANGE_I : RFX_FX_IN_RANGE_U, RFX_NUMBER, args,
                        e->u.fn.nargs + 1, e->loc);
    test->r = rfx_rx_new(L, RFX_RX_CONST, RFX_NUMBER);
    test->r->value = 1;
    for (int i = 0; i < cur->n; i++)
        outs[i] = rfx_rx_col(L, i, L->plan->vars[cur->var].types[i]);
    bool uniq = cur->unique;
    int sorted = cur->sorted;
    *cur = rfx_lower_emit_map(R, cur, test, outs, cur->schema, cur->n);
    cur->unique = uniq, cur->sorted = sorted;   /* rows kept as they were */
}

/* `v = range(a, b[, c])`: each tuple extended by each value (RANGE, on the host); where v
 * is bound already, an integer is tested (none made), a float's values go to a fresh
 * variable that must equal it. */
void rfx_lower_apply_range(rule_ctx *R, flow *cur, item *it)
{
    lower_ctx *L = R->L;
    const rfx_expr *e = it->rhs;
    it->done = true;
    int v = it->var;
    rfx_prim prim = rfx_lower_expr_prim(R, e);
    if (R->bound[v] && (prim == RFX_NUMBER || prim == RFX_UNSIGNED)) {
        /* a test of an integer already bound: whether it is among the values, none made
         * (`v = range(2, v)` would make v - 2 of them for every tuple) */
        int col = rfx_lower_col_of(cur, NULL, v);
        if (col >= 0)
            keep_in_range(R, cur, rfx_rx_col(L, col, prim), e, prim);
        return;
    }
    if (R->bound[v]) {
        v = R->nv++;
        rfx_expr *ve = lalloc(L, sizeof *ve), *ue = lalloc(L, sizeof *ue);
        if (!ve || !ue)
            return;
        *ve = (rfx_expr){.kind = RFX_E_VAR, .loc = e->loc, .type = e->type, .u.v = {"$range", v}};
        *ue = (rfx_expr){.kind = RFX_E_VAR, .loc = e->loc, .type = e->type, .u.v = {"$var", it->var}};
        rfx_lower_add_item(R, (item){.kind = IT_FILTER, .cmp = RFX_EQ, .lhs = ve, .rhs = ue, .loc = e->loc});
    }
    rfx_rx **bounds = lalloc(L, sizeof(rfx_rx *) * 3);
    rfx_prim *types = lalloc(L, sizeof(rfx_prim) * (size_t)(cur->n + 2));
    int *schema = lalloc(L, sizeof(int) * (size_t)(cur->n + 2));
    if (!bounds || !types || !schema)
        return;
    for (int i = 0; i < e->u.fn.nargs; i++)
        bounds[i] = rfx_lower_expr(R, e->u.fn.args[i], cur, NULL, prim);
    rfx_memcpy(types, L->plan->vars[cur->var].types, sizeof(rfx_prim) * (size_t)cur->n);
    rfx_memcpy(schema, cur->schema, sizeof(int) * (size_t)cur->n);
    types[cur->n] = prim;
    schema[cur->n] = v;
    int dst = rfx_lower_new_var(L, NULL, RFX_PV_TEMP, cur->n + 1, types, -1);
    rfx_ra_cmd *c = rfx_lower_emit(L, RFX_RA_RANGE, dst, cur->var, -1);
    c->nout = e->u.fn.nargs;
    c->out = bounds;
    /* each tuple's values are distinct: a set stays one, sorted as far as it was */
    *cur = (flow){dst, cur->n + 1, schema, cur->sorted, cur->unique};
    R->bound[v] = true;
}

/* Whether an integer range's variable is read by nothing after it (no literal left, no
 * output): a rule's body then needs only that the range has a value, not each value. */
bool rfx_lower_range_unread(rule_ctx *R, item *it, const hcol *out, int nout, const bool *outer)
{
    rfx_prim prim = rfx_lower_expr_prim(R, it->rhs);
    if (R->bound[it->var] || (prim != RFX_NUMBER && prim != RFX_UNSIGNED))
        return false;
    bool *need = calloc((size_t)R->nv + 1, 1);
    if (!need) {
        R->L->oom = true;
        return false;
    }
    it->done = true;   /* its own reading aside */
    rfx_lower_needed_vars(R, out, nout, need, outer);
    it->done = false;
    bool unread = !need[it->var];
    free(need);
    return unread;
}

/* `v = range(a, b[, s])` whose v nothing reads, in a rule's body (where each binding of
 * the head counts once): the tuples whose range has a value, kept as they are, none made
 * (a is the first value when there is one). */
void rfx_lower_apply_range_nonempty(rule_ctx *R, flow *cur, item *it)
{
    it->done = true;
    rfx_prim prim = rfx_lower_expr_prim(R, it->rhs);
    keep_in_range(R, cur, rfx_lower_expr(R, it->rhs->u.fn.args[0], cur, NULL, prim), it->rhs, prim);
}

