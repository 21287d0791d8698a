/* lower_probe.c: tests of a rule's tuples against a relation its own loop is making, by
 * searches of each tuple there (their cost follows the delta, not the relation): atoms
 * read whole beside a delta, and the head's own test (lower.c, add_head_test). */
#include "lower_rule.h"

/* Whether the body is a semi-naive loop's version (it reads a delta). */
bool rfx_lower_in_loop(const rule_ctx *R)
{
    for (int k = 0; k < R->nitems; k++)
        if (R->items[k].delta)
            return true;
    return false;
}

/* Whether atom `it` is tested against the current tuples by a search of each in its
 * relation (a probe) rather than by a scan of the relation that filters it: in a
 * semi-naive loop, for a relation of the stratum being looped over read whole (it changes
 * every iteration, so a scan would read all of it each time), where each column is a
 * variable cur binds or a constant and the scan would filter (a variable twice, `r(x,
 * x)`, or a constant in any column): a thin recursion's test then costs its delta, not the
 * relation. A `_` leaves the scan (a semi-join searches whole tuples), and so does a
 * float constant (the scan's test takes 0.0 and -0.0 as equal; a search compares bits).
 * Returns the columns searched, 0 where not so. */
int rfx_lower_probe_cols(rule_ctx *R, const flow *cur, const item *it)
{
    lower_ctx *L = R->L;
    const rfx_pvar *v = &L->plan->vars[it->src];
    const rfx_atom *a = it->atom;
    if (!rfx_lower_in_loop(R) || it->delta || v->kind != RFX_PV_REL || v->rel < 0 || L->stratum < 0 ||
        L->prog->rels[v->rel].stratum != L->stratum || a->nargs != v->arity || cur->var == L->plan->unit)
        return 0;
    int k = 0;
    bool filters = false;
    while (k < a->nargs && (it->argconst[k] || it->argvar[k] >= 0)) {
        if (it->argconst[k]) {
            bool ok = true;
            (void)rfx_lower_const_value(L->prog, it->argconst[k], v->types[k], &ok);
            if (!ok || v->types[k] == RFX_FLOAT)
                return 0;
            filters = true;
        } else {
            if (rfx_lower_col_of(cur, NULL, it->argvar[k]) < 0)
                return 0;
            for (int j = 0; j < k; j++)
                filters |= it->argvar[j] == it->argvar[k];
        }
        k++;
    }
    return k == a->nargs && filters ? k : 0;   /* a semi-join searches whole tuples */
}

/* Keeps the current tuples whose values of atom `it`'s first k columns (probe_cols above)
 * are (op INTERSECT) or are not (DIFFERENCE) in its relation: each tuple extended in front
 * by those values and searched there, then returned to its columns, order and uniqueness.
 * (A negated atom's relation is of an earlier stratum, never one the loop makes, but for
 * the head's own test: add_head_test.) */
void rfx_lower_probe_atom(rule_ctx *R, flow *cur, item *it, int k, rfx_ra_op op)
{
    lower_ctx *L = R->L;
    const rfx_pvar *v = &L->plan->vars[it->src], *cv = &L->plan->vars[cur->var];
    it->done = true;
    rfx_rx **outs = lalloc(L, sizeof(rfx_rx *) * (size_t)(k + cur->n + 1));
    rfx_rx **back = lalloc(L, sizeof(rfx_rx *) * (size_t)(cur->n + 1));
    int *schema = lalloc(L, sizeof(int) * (size_t)(k + cur->n + 1));
    if (!outs || !back || !schema)
        return;
    for (int i = 0; i < k; i++) {
        if (it->argconst[i]) {
            bool ok = true;
            outs[i] = rfx_rx_new(L, RFX_RX_CONST, v->types[i]);
            if (outs[i])
                outs[i]->value = rfx_lower_const_value(L->prog, it->argconst[i], v->types[i], &ok);
        } else {
            outs[i] = rfx_rx_col(L, rfx_lower_col_of(cur, NULL, it->argvar[i]), v->types[i]);
        }
        if (!outs[i])
            return;
        schema[i] = -1;
    }
    for (int i = 0; i < cur->n; i++) {
        outs[k + i] = rfx_rx_col(L, i, cv->types[i]);
        back[i] = rfx_rx_col(L, k + i, cv->types[i]);
        schema[k + i] = cur->schema[i];
    }
    flow probed = rfx_lower_emit_map(R, cur, NULL, outs, schema, k + cur->n);
    rfx_lower_emit_semijoin(L, &probed, op, it->src, k, true, false);
    flow g = rfx_lower_emit_map(R, &probed, NULL, back, cur->schema, cur->n);
    g.sorted = cur->sorted;   /* a subset of cur's rows in cur's order */
    g.unique = cur->unique;
    *cur = g;
}

/* The head's test (add_head_test) applied to cur: held heads searched for tuple by tuple
 * where a scan of the relation would select from all of it (rfx_lower_probe_cols: a
 * constant, a variable twice), else an anti-join with the relation as it is. */
void rfx_lower_apply_head_test(rule_ctx *R, flow *cur, item *it)
{
    const int k = rfx_lower_probe_cols(R, cur, it);
    if (k)
        rfx_lower_probe_atom(R, cur, it, k, RFX_RA_DIFFERENCE);
    else
        rfx_lower_apply_negation(R, cur, it);
}

/* Whether a positive atom still to be joined binds a variable (a join, where the head's
 * test may spare work; an atom whose variables are all bound is a semi-join, costing what
 * the test would). */
bool rfx_lower_joins_left(const rule_ctx *R)
{
    for (int k = 0; k < R->nitems; k++) {
        const item *it = &R->items[k];
        for (int a = 0; !it->done && it->kind == IT_ATOM && a < it->atom->nargs; a++)
            if (it->argvar[a] >= 0 && !R->bound[it->argvar[a]])
                return true;
    }
    return false;
}
