/* sema_subsume.c: a subsumption's "the tuples differ" tightened by a loose order its body
 * writes between one column of the two tuples.
 *
 * `r(u, a) <= r(v, b) :- a <= b.` is the clause
 *     r(u, a) :- r(u, a), r(v, b), (u != v ; a != b), a <= b.
 * whose first disjunct, `u != v, a <= b`, pairs each tuple with every tuple of a larger or
 * equal b: no key joins them, and the plan is a product of the relation with itself. Over a
 * column whose order agrees with its equality (a < b exactly where a <= b and the values'
 * bits differ: integers, symbols, dates, decimals, records; not floats, where 0.0 and -0.0
 * are equal and differ), the same clause is
 *     r(u, a) :- r(u, a), r(v, b), (a < b ; a = b, u != v).
 * (a tuple under a larger b, or another tuple of the same b): the first disjunct asks only
 * whether some b exceeds a (a maximum: ra_ir/lower_extreme.c), the second joins on a = b.
 * The two bodies hold for the same tuples: `a <= b, a != b` is `a < b`, and `a <= b, u != v`
 * is `a < b, u != v` (inside the first) or `a = b, u != v`. */
#include "sema.h"

#include <string.h>

/* Whether e is the variable that x is (both variables of one name). */
static bool same_var(const rfx_expr *e, const rfx_expr *x)
{
    return e && x && e->kind == RFX_E_VAR && x->kind == RFX_E_VAR && strcmp(e->u.v.name, x->u.v.name) == 0;
}

/* A literal `x <= y` or `x >= y` (either way round) between column k of lt and of gt, for
 * some k whose arguments are two different variables: the literal, its column in *col. */
static rfx_lit *loose_order(const rfx_lit *l, const rfx_atom *lt, const rfx_atom *gt, int *col)
{
    if (l->kind != RFX_L_CMP || (l->cmp != RFX_LE && l->cmp != RFX_GE) || l->bitwise)
        return NULL;
    for (int k = 0; k < lt->nargs && k < gt->nargs; k++) {
        const rfx_expr *a = lt->args[k], *b = gt->args[k];
        if (a->kind != RFX_E_VAR || b->kind != RFX_E_VAR || same_var(a, b))
            continue;
        if ((same_var(l->lhs, a) && same_var(l->rhs, b)) || (same_var(l->lhs, b) && same_var(l->rhs, a))) {
            *col = k;
            return (rfx_lit *)l;
        }
    }
    return NULL;
}

/* Whether column k of relation rel orders its values as their equality does. */
static bool order_agrees(const rfx_program *p, int rel, int k)
{
    const rfx_relation *r = &p->rels[rel];
    if (k >= r->arity || r->attrs[k].lattice || r->attrs[k].type < 0)
        return false;
    int t = rfx_sema_canon_type(p, r->attrs[k].type);
    return t >= 0 && p->types[t].prim != RFX_FLOAT && p->types[t].prim != RFX_FLOAT64;
}

/* The first top-level conjunct of b (literals joined by `,`) that loose_order finds over a
 * column of relation rel whose order agrees with its equality. */
static rfx_lit *find_loose_order(const rfx_program *p, int rel, const rfx_body *b, const rfx_atom *lt,
                                 const rfx_atom *gt, int *col)
{
    if (!b)
        return NULL;
    if (b->kind == RFX_B_AND) {
        rfx_lit *l = find_loose_order(p, rel, b->lhs, lt, gt, col);
        return l ? l : find_loose_order(p, rel, b->rhs, lt, gt, col);
    }
    rfx_lit *l = b->kind == RFX_B_LIT && b->lit ? loose_order(b->lit, lt, gt, col) : NULL;
    return l && order_agrees(p, rel, *col) ? l : NULL;
}

/* b without the literal l among its top-level conjuncts (NULL where nothing is left). */
static rfx_body *without_conjunct(rfx_parse_ctx *ctx, rfx_body *b, const rfx_lit *l)
{
    if (!b || (b->kind == RFX_B_LIT && b->lit == l))
        return NULL;
    if (b->kind != RFX_B_AND)
        return b;
    rfx_body *lhs = without_conjunct(ctx, b->lhs, l), *rhs = without_conjunct(ctx, b->rhs, l);
    if (!lhs || !rhs)
        return lhs ? lhs : rhs;
    return lhs == b->lhs && rhs == b->rhs ? b : rfx_mk_bool_body(ctx, RFX_B_AND, lhs, rhs);
}

/* The difference test d (a disjunction of bitwise `!=`) without its tests of column k's two
 * variables (NULL where nothing is left); *ok false where d is not of that form. */
static rfx_body *without_column(rfx_parse_ctx *ctx, rfx_body *d, const rfx_expr *a, const rfx_expr *b, bool *ok)
{
    if (!d)
        return NULL;
    if (d->kind == RFX_B_OR) {
        rfx_body *lhs = without_column(ctx, d->lhs, a, b, ok), *rhs = without_column(ctx, d->rhs, a, b, ok);
        if (!lhs || !rhs)
            return lhs ? lhs : rhs;
        return lhs == d->lhs && rhs == d->rhs ? d : rfx_mk_bool_body(ctx, RFX_B_OR, lhs, rhs);
    }
    const rfx_lit *l = d->kind == RFX_B_LIT ? d->lit : NULL;
    if (!l || l->kind != RFX_L_CMP || l->cmp != RFX_NE || !l->bitwise) {
        *ok = false;
        return d;
    }
    return (same_var(l->lhs, a) && same_var(l->rhs, b)) || (same_var(l->lhs, b) && same_var(l->rhs, a)) ? NULL : d;
}

void rfx_sema_tighten_subsumption(sema *s, rfx_clause *c)
{
    rfx_parse_ctx *ctx = s->ctx;
    rfx_body *b = c->body;
    /* rfx_add_subsumption's shape: ((dominated, dominating), differ), body; without the
     * differ where the body orders the tuples strictly already */
    if (!c->subsumptive || c->head.rel < 0 || !b || b->kind != RFX_B_AND || !b->lhs || b->lhs->kind != RFX_B_AND ||
        !b->lhs->lhs || b->lhs->lhs->kind != RFX_B_AND)
        return;
    rfx_body *pair = b->lhs->lhs, *differ = b->lhs->rhs, *body = b->rhs;
    if (pair->lhs->kind != RFX_B_LIT || pair->rhs->kind != RFX_B_LIT || !pair->lhs->lit || !pair->rhs->lit ||
        pair->lhs->lit->role != RFX_ROLE_DOMINATED || pair->rhs->lit->role != RFX_ROLE_DOMINATING)
        return;
    const rfx_atom *lt = &pair->lhs->lit->atom, *gt = &pair->rhs->lit->atom;
    /* the atoms are resolved later (with the body's); a pair of two relations is an error then */
    if (strcmp(lt->name, c->head.name) != 0 || strcmp(gt->name, c->head.name) != 0)
        return;
    int k = -1;
    rfx_lit *le = find_loose_order(s->p, c->head.rel, body, lt, gt, &k);
    if (!le)
        return;
    bool ok = true;
    rfx_body *others = without_column(ctx, differ, lt->args[k], gt->args[k], &ok);
    if (!ok)
        return;
    RFX_YYLTYPE loc = {le->loc.line, le->loc.col, le->loc.line, le->loc.col};
    rfx_body *strict = rfx_mk_cmp_body(ctx, le->cmp == RFX_LE ? RFX_LT : RFX_GT, rfx_clone_expr(ctx, le->lhs),
                                       rfx_clone_expr(ctx, le->rhs), loc);
    rfx_body *tight = strict;
    if (others) {
        rfx_body *eq = rfx_mk_cmp_body(ctx, RFX_EQ, rfx_clone_expr(ctx, le->lhs), rfx_clone_expr(ctx, le->rhs), loc);
        tight = rfx_mk_bool_body(ctx, RFX_B_OR, strict, rfx_mk_bool_body(ctx, RFX_B_AND, eq, others));
    }
    rfx_body *rest = without_conjunct(ctx, body, le);
    rfx_body *nb = rfx_mk_bool_body(ctx, RFX_B_AND, pair, tight);
    if (rest)
        nb = rfx_mk_bool_body(ctx, RFX_B_AND, nb, rest);
    if (!ctx->oom)
        c->body = nb;
}
