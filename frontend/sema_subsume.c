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

/* Whether comparison l reads x and y, either way round. */
static bool compares(const rfx_lit *l, const rfx_expr *x, const rfx_expr *y)
{
    return (rfx_expr_alike(l->lhs, x) && rfx_expr_alike(l->rhs, y)) ||
           (rfx_expr_alike(l->lhs, y) && rfx_expr_alike(l->rhs, x));
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

/* A top-level conjunct of b (literals joined by `,`), `x <= y` or `x >= y`, between column k
 * of lt and of gt whose arguments are two different variables, over a column of relation rel
 * whose order agrees with its equality: the literal, its column in *col. */
static rfx_lit *find_loose_order(const rfx_program *p, int rel, const rfx_body *b, const rfx_atom *lt,
                                 const rfx_atom *gt, int *col)
{
    if (b->kind == RFX_B_AND) {
        rfx_lit *l = find_loose_order(p, rel, b->lhs, lt, gt, col);
        return l ? l : find_loose_order(p, rel, b->rhs, lt, gt, col);
    }
    rfx_lit *l = b->kind == RFX_B_LIT ? b->lit : NULL;
    if (!l || l->kind != RFX_L_CMP || (l->cmp != RFX_LE && l->cmp != RFX_GE) || l->bitwise)
        return NULL;
    for (int k = 0; k < lt->nargs && k < gt->nargs; k++) {
        const rfx_expr *x = lt->args[k], *y = gt->args[k];
        if (x->kind == RFX_E_VAR && y->kind == RFX_E_VAR && !rfx_expr_alike(x, y) && compares(l, x, y) &&
            order_agrees(p, rel, k)) {
            *col = k;
            return l;
        }
    }
    return NULL;
}

/* What prune drops: one literal (lit), or the bitwise `!=` tests between x and y. */
typedef struct leaf {
    const rfx_lit *lit;
    const rfx_expr *x, *y;
} leaf;

static bool is_leaf(const rfx_lit *l, const leaf *f)
{
    return f->lit ? l == f->lit : l->kind == RFX_L_CMP && l->cmp == RFX_NE && l->bitwise && compares(l, f->x, f->y);
}

/* b, a tree of `kind` (AND or OR) over literals, without the literals f names at its top
 * (NULL where nothing is left); *gone set where one was dropped. */
static rfx_body *prune(rfx_parse_ctx *ctx, rfx_body *b, rfx_body_kind kind, const leaf *f, bool *gone)
{
    if (b->kind == RFX_B_LIT && b->lit && is_leaf(b->lit, f)) {
        *gone = true;
        return NULL;
    }
    if (b->kind != kind)
        return b;
    rfx_body *lhs = prune(ctx, b->lhs, kind, f, gone), *rhs = prune(ctx, b->rhs, kind, f, gone);
    if (!lhs || !rhs)
        return lhs ? lhs : rhs;
    return lhs == b->lhs && rhs == b->rhs ? b : rfx_mk_bool_body(ctx, kind, lhs, rhs);
}

void rfx_sema_tighten_subsumption(sema *s, rfx_clause *c)
{
    rfx_parse_ctx *ctx = s->ctx;
    rfx_body *b = c->body;
    /* rfx_add_subsumption's shape: ((dominated, dominating), differ), body; without the
     * differ where the body orders the tuples strictly already */
    if (ctx->oom || c->head.rel < 0 || !b || b->kind != RFX_B_AND || b->lhs->kind != RFX_B_AND || b->lhs->lhs->kind != RFX_B_AND)
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
    /* differ is `(column k differs) ; others`: le and it are `le strict ; le = , others` */
    bool gone = false;
    rfx_body *others = prune(ctx, differ, RFX_B_OR, &(leaf){NULL, lt->args[k], gt->args[k]}, &gone);
    if (!gone)
        return;
    RFX_YYLTYPE loc = {le->loc.line, le->loc.col, le->loc.line, le->loc.col};
    rfx_body *tight = rfx_mk_cmp_body(ctx, le->cmp == RFX_LE ? RFX_LT : RFX_GT, rfx_clone_expr(ctx, le->lhs),
                                      rfx_clone_expr(ctx, le->rhs), loc);
    if (others) {
        rfx_body *eq = rfx_mk_cmp_body(ctx, RFX_EQ, rfx_clone_expr(ctx, le->lhs), rfx_clone_expr(ctx, le->rhs), loc);
        tight = rfx_mk_bool_body(ctx, RFX_B_OR, tight, rfx_mk_bool_body(ctx, RFX_B_AND, eq, others));
    }
    gone = false;
    rfx_body *rest = prune(ctx, body, RFX_B_AND, &(leaf){le, NULL, NULL}, &gone);
    rfx_body *nb = rfx_mk_bool_body(ctx, RFX_B_AND, pair, tight);
    if (rest)
        nb = rfx_mk_bool_body(ctx, RFX_B_AND, nb, rest);
    if (!ctx->oom)
        c->body = nb;
}
