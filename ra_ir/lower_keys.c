/* lower_keys.c: equalities the body computes (`b(x + 1, y)`, `t = x + 1`) as join keys. A
 * binding `v = e` keys a join where one side holds v and the other e's variables: on the
 * current tuples apply_filters computes v before the atom is joined; on the atom's rows
 * (this file) e is computed where the current tuples hold v already (a delta read first).
 * Either way the join matches by key instead of testing the product of its sides. */
#include "lower_rule.h"

#include <stdlib.h>
#include <string.h>

static bool atom_has_var(const item *it, int v)
{
    for (int a = 0; a < it->atom->nargs; a++)
        if (it->argvar[a] == v)
            return true;
    return false;
}

/* Whether binding b (`v = e`, v held by the current tuples cur) keys the join of cur with
 * atom `it` (scanned as s, where it is): e reads only the atom's variables, none bound yet,
 * so that e computed on its rows meets v in the join (a delta `r(x + 1, z)` before `e(x)`:
 * e's rows keyed by x + 1, not a product tested after). Not on floats: a join matches
 * bits, `=` on floats is IEEE. */
static bool binding_keys_atom(rule_ctx *R, const item *b, const flow *cur, const item *it, const flow *s)
{
    int at = b->done || b->kind != IT_BIND || !R->bound[b->var] ? -1 : rfx_lower_col_of(cur, NULL, b->var);
    if (at < 0 || (s && rfx_lower_col_of(s, NULL, b->var) >= 0))
        return false;
    rfx_prim p = rfx_lower_expr_prim(R, b->rhs);
    if (p == RFX_FLOAT || p == RFX_FLOAT64 || p != R->L->plan->vars[cur->var].types[at])
        return false;
    bool *use = calloc((size_t)R->nv + 1, 1);
    if (!use) {
        R->L->oom = true;
        return false;
    }
    rfx_lower_expr_vars(R, b->rhs, use);
    bool reads = false, mine = true;
    for (int w = 0; w < R->nv; w++) {
        if (!use[w])
            continue;
        reads = true;
        mine &= atom_has_var(it, w) && !R->bound[w] && (!s || rfx_lower_col_of(s, NULL, w) >= 0);
    }
    free(use);
    return reads && mine;
}

/* s (atom it's scan) with the bindings that key it to cur (binding_keys_atom) computed as
 * columns named by their variables. */
flow rfx_lower_keys_computed_on_atom(rule_ctx *R, flow s, const flow *cur, const item *it)
{
    lower_ctx *L = R->L;
    for (int k = 0; k < R->nitems && !L->oom; k++) {
        item *b = &R->items[k];
        if (!binding_keys_atom(R, b, cur, it, &s))
            continue;
        rfx_rx **outs = lalloc(L, sizeof(rfx_rx *) * (size_t)(s.n + 1));
        int *schema = lalloc(L, sizeof(int) * (size_t)(s.n + 1));
        if (!outs || !schema)
            return s;
        const rfx_pvar *sv = &L->plan->vars[s.var];
        for (int i = 0; i < s.n; i++) {
            outs[i] = rfx_rx_col(L, i, sv->types[i]);
            schema[i] = s.schema[i];
        }
        outs[s.n] = rfx_lower_expr(R, b->rhs, &s, NULL, rfx_lower_expr_prim(R, b->rhs));
        schema[s.n] = b->var;
        s = rfx_lower_emit_map(R, &s, NULL, outs, schema, s.n + 1);
        b->done = true;   /* the join's key equality is the test */
    }
    return s;
}

/* How many bindings would key atom `it` to the current tuples, for ranking it as if those
 * were bound variables of it. */
int rfx_lower_keys_by_bindings(rule_ctx *R, const item *it, const flow *cur)
{
    int n = 0;
    for (int k = 0; k < R->nitems; k++)
        n += binding_keys_atom(R, &R->items[k], cur, it, NULL);
    return n;
}

/* Whether a binding ties one atom's column to an expression over other atoms' variables
 * (`tak(x - 1, y, ...), tak(y - 1, z, x, ...)`): binary joins key on it (apply_filters,
 * keys_computed_on_atom), where a triejoin, which intersects only the variables atoms
 * share, could test it only on what the join made without it. */
bool rfx_lower_atoms_tied_by_bindings(rule_ctx *R)
{
    bool tied = false;
    bool *use = calloc((size_t)R->nv + 1, 1);
    if (!use) {
        R->L->oom = true;
        return false;
    }
    for (int k = 0; k < R->nitems && !tied; k++) {
        const item *b = &R->items[k];
        rfx_prim p = b->kind == IT_BIND ? rfx_lower_expr_prim(R, b->rhs) : RFX_FLOAT;
        if (b->done || b->kind != IT_BIND || p == RFX_FLOAT || p == RFX_FLOAT64)
            continue;
        memset(use, 0, (size_t)R->nv + 1);
        rfx_lower_expr_vars(R, b->rhs, use);
        for (int j = 0; j < R->nitems && !tied; j++) {
            const item *a = &R->items[j];
            if (a->done || a->kind != IT_ATOM || !atom_has_var(a, b->var))
                continue;
            bool reads = false, others = true;
            for (int w = 0; w < R->nv && others; w++) {
                if (!use[w])
                    continue;
                reads = true;
                bool elsewhere = false;
                for (int o = 0; o < R->nitems && !elsewhere; o++)
                    elsewhere = o != j && !R->items[o].done && R->items[o].kind == IT_ATOM &&
                                atom_has_var(&R->items[o], w);
                others = elsewhere && !atom_has_var(a, w);
            }
            tied = reads && others;
        }
    }
    free(use);
    return tied;
}

