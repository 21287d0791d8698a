/* lower_keys.c: what the body computes as join keys and ranges. A binding `v = e`
 * (`b(x + 1, y)`, `t = x + 1`) keys a join where one side holds v and the other e's
 * variables: on the current tuples apply_filters computes v before the atom is joined;
 * where the current tuples hold v already (a delta read first), this file inverts e where
 * it can (x = v - 1, computed on the current tuples) or else computes e on the atom's rows.
 * A comparison of one of the atom's variables with the current tuples'
 * values (`y >= x, y <= x + 2`) ranges the join: the atom's rows sorted on y after the
 * keys, each tuple's matches are searched within its bounds (the command's `range`).
 * Either way the join does not test the product of its sides. */
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

static bool is_order(rfx_cmpop op)
{
    return op == RFX_LT || op == RFX_LE || op == RFX_GT || op == RFX_GE;
}

/* Whether e reads variables, each held by the current tuples. */
static bool held_by(rule_ctx *R, const rfx_expr *e, const flow *cur)
{
    bool *use = calloc((size_t)R->nv + 1, 1);
    if (!use) {
        R->L->oom = true;
        return false;
    }
    rfx_lower_expr_vars(R, e, use);
    bool held = true;
    for (int w = 0; w < R->nv && held; w++)
        held = !use[w] || (R->bound[w] && rfx_lower_col_of(cur, NULL, w) >= 0);
    free(use);
    return held;
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

/* Where a binding `v = x + t` (`t + x`, `x - t`, `t - x`) has v held by the current tuples,
 * x one of atom it's unbound variables and t read from the current tuples alone (a
 * constant, their variables), x is v - t (v + t, t - v): 32-bit integers wrap, so the
 * inverse is exact and the binding holds. x computed on the current tuples keys the join
 * by the atom's own column, in the order its relation is kept, instead of e computed on
 * every row of the atom (a recursive relation mapped and sorted whole every iteration:
 * `fib(n, a + b) :- fib(n - 1, a), fib(n - 2, b)` read from the first atom's delta). */
flow rfx_lower_keys_inverted(rule_ctx *R, flow cur, const item *it)
{
    lower_ctx *L = R->L;
    for (int k = 0; k < R->nitems && !L->oom; k++) {
        item *b = &R->items[k];
        const rfx_expr *e = b->rhs;
        if (b->done || b->kind != IT_BIND || !R->bound[b->var] || rfx_lower_col_of(&cur, NULL, b->var) < 0 ||
            e->kind != RFX_E_BINOP || (e->u.bin.op != RFX_ADD && e->u.bin.op != RFX_SUB))
            continue;
        rfx_prim p = rfx_lower_expr_prim(R, e);
        if (p != RFX_NUMBER && p != RFX_UNSIGNED)
            continue;
        for (int side = 0; side < 2; side++) {
            const rfx_expr *x = side ? e->u.bin.rhs : e->u.bin.lhs, *t = side ? e->u.bin.lhs : e->u.bin.rhs;
            if (x->kind != RFX_E_VAR || R->bound[x->u.v.var] || !atom_has_var(it, x->u.v.var) ||
                rfx_lower_expr_prim(R, x) != p || !held_by(R, t, &cur))
                continue;
            rfx_expr *inv = lalloc(L, sizeof *inv);
            rfx_rx **outs = lalloc(L, sizeof(rfx_rx *) * (size_t)(cur.n + 1));
            int *schema = lalloc(L, sizeof(int) * (size_t)(cur.n + 1));
            if (!inv || !outs || !schema)
                return cur;
            /* x = v - t for x + t and t + x; v + t for x - t; t - v for t - x */
            *inv = *e;
            bool minus_x = e->u.bin.op == RFX_SUB && side;
            inv->u.bin.op = e->u.bin.op == RFX_ADD || minus_x ? RFX_SUB : RFX_ADD;
            inv->u.bin.lhs = minus_x ? (rfx_expr *)t : (rfx_expr *)b->lhs;
            inv->u.bin.rhs = minus_x ? (rfx_expr *)b->lhs : (rfx_expr *)t;
            const rfx_pvar *cv = &L->plan->vars[cur.var];
            for (int i = 0; i < cur.n; i++) {
                outs[i] = rfx_rx_col(L, i, cv->types[i]);
                schema[i] = cur.schema[i];
            }
            outs[cur.n] = rfx_lower_expr(R, inv, &cur, NULL, p);
            schema[cur.n] = x->u.v.var;
            bool uniq = cur.unique;
            cur = rfx_lower_emit_map(R, &cur, NULL, outs, schema, cur.n + 1);
            cur.unique = uniq;
            R->bound[x->u.v.var] = true;
            b->done = true;
            break;
        }
    }
    return cur;
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


/* The variable y of comparison f that ranges a join of cur with s (y one of s's columns,
 * not bound nor a key, an integer; the other side held by cur), or -1. */
static int ranged_var(rule_ctx *R, const item *f, const flow *cur, const flow *s, const int *keys, int k)
{
    if (f->done || f->kind != IT_FILTER || f->bitwise || !is_order(f->cmp))
        return -1;
    for (int side = 0; side < 2; side++) {
        const rfx_expr *v = side ? f->rhs : f->lhs, *e = side ? f->lhs : f->rhs;
        if (v->kind != RFX_E_VAR)
            continue;
        int y = v->u.v.var;
        rfx_prim p = rfx_lower_expr_prim(R, v);
        bool key = false;
        for (int i = 0; i < k; i++)
            key |= keys[i] == y;
        if (!key && !R->bound[y] && rfx_lower_col_of(s, NULL, y) >= 0 && (p == RFX_NUMBER || p == RFX_UNSIGNED) &&
            rfx_lower_expr_prim(R, e) == p && held_by(R, e, cur))
            return y;
    }
    return -1;
}

int rfx_lower_range_var(rule_ctx *R, const flow *cur, const flow *s, const int *keys, int k)
{
    for (int i = 0; i < R->nitems; i++) {
        int y = ranged_var(R, &R->items[i], cur, s, keys, k);
        if (y >= 0)
            return y;
    }
    return -1;
}

rfx_rx *rfx_lower_range_pred(rule_ctx *R, int y, const flow *cur, const flow *s, const int *keys, int k)
{
    rfx_rx *pred = NULL;
    for (int i = 0; i < R->nitems; i++) {
        item *f = &R->items[i];
        if (ranged_var(R, f, cur, s, keys, k) != y)
            continue;
        pred = rfx_rx_and(R->L, pred, rfx_lower_cmp(R, f, cur, s));
        f->done = true;
    }
    return pred;
}
