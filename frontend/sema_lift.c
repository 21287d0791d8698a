/* sema_lift.c: the checker's rewrites of bodies before typing: range() generators lifted
 * to variables of their own, records in bodies lifted and read field by field. */
#include "sema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* range(...) generates values. Where it stands as `v = range(...)` its variable takes each
 * value; anywhere else (an argument, an operand) it is lifted out: a fresh variable in its
 * place, bound by `$rangeN = range(...)` added to the conjunction it belongs to, so that the
 * rule holds for each value, as in Soufflé. */
typedef struct range_lift {
    clause_ctx *cc;            /* the variables are numbered (after aggregate scoping, so that a
                                * range in an aggregate's target keeps its variables local) */
    sema *s;
    int n;                     /* fresh variables made */
} range_lift;

static void lift_ranges_conj(range_lift *rl, rfx_conj *cj);


static rfx_expr *lift_ranges(range_lift *rl, rfx_expr *e, rfx_conj *cj, bool binding)
{
    if (e->kind == RFX_E_AGG) {
        if (e->u.agg.target && rfx_agg_conj(e))
            e->u.agg.target = lift_ranges(rl, e->u.agg.target, rfx_agg_conj(e), false);
        if (rfx_agg_conj(e))
            lift_ranges_conj(rl, rfx_agg_conj(e));
        return e;
    }
    for (int i = 0; i < rfx_expr_nkids(e); i++) {
        rfx_expr *k = lift_ranges(rl, rfx_expr_kid(e, i), cj, false);
        if (e->kind == RFX_E_FN)
            e->u.fn.args[i] = k;
        else if (i)
            e->u.bin.rhs = k;
        else
            e->u.bin.lhs = k;
    }
    if (e->kind != RFX_E_FN || e->u.fn.fn != RFX_FN_RANGE || binding)
        return e;
    rfx_expr *v = salloc(rl->s, sizeof *v), *v2 = salloc(rl->s, sizeof *v2);
    rfx_lit *l = salloc(rl->s, sizeof *l);
    char *name = salloc(rl->s, 24);
    if (!v || !v2 || !l || !name)
        return e;
    snprintf(name, 24, "$range%d", rl->n++);
    *v = (rfx_expr){.kind = RFX_E_VAR, .loc = e->loc, .type = -1, .u.v = {name, rfx_sema_fresh_var(rl->cc, name)}};
    *v2 = *v;
    *l = (rfx_lit){.kind = RFX_L_CMP, .loc = e->loc, .cmp = RFX_EQ, .lhs = v2, .rhs = e};
    rfx_sema_add_lit(rl->s, cj, l);
    return v;
}

static void lift_ranges_conj(range_lift *rl, rfx_conj *cj)
{
    int n = cj->nlits;   /* literals added for ranges are bindings already */
    for (int i = 0; i < n; i++) {
        rfx_lit *l = cj->lits[i];
        if (l->kind == RFX_L_CMP) {
            bool eq = l->cmp == RFX_EQ;
            l->lhs = lift_ranges(rl, l->lhs, cj, eq && l->rhs->kind == RFX_E_VAR);
            l->rhs = lift_ranges(rl, l->rhs, cj, eq && l->lhs->kind == RFX_E_VAR && l->rhs->kind != RFX_E_VAR);
        } else if (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG)
            for (int a = 0; a < l->atom.nargs; a++)
                l->atom.args[a] = lift_ranges(rl, l->atom.args[a], cj, false);
    }
}

/* Records in bodies. A record in a positive atom's argument stands for a fresh variable
 * `$recN` there and `$recN = [..]` beside the atom. An equality of a record literal with
 * an expression that the rest of the conjunction grounds reads that record (unpacks it):
 * `e = [a, _, [b, c]]` becomes `e != nil, a = $field(e, 0), $recN = $field(e, 2),
 * $recN = [b, c]` (whose turn comes next), each field binding its variable or testing its
 * value. Where the expression is not grounded otherwise, the equality makes the record
 * from its fields (packs it), as in a head. */
typedef struct record_lift {
    clause_ctx *cc;
    sema *s;
    int n;                     /* fresh variables made */
} record_lift;

static bool is_record(const rfx_expr *e)
{
    return e->kind == RFX_E_FN && e->u.fn.fn == RFX_FN_RECORD;
}

static rfx_expr *record_var(record_lift *rl, rfx_loc loc)
{
    rfx_expr *v = salloc(rl->s, sizeof *v);
    char *name = salloc(rl->s, 24);
    if (!v || !name)
        return NULL;
    snprintf(name, 24, "$rec%d", rl->n++);
    *v = (rfx_expr){.kind = RFX_E_VAR, .loc = loc, .type = -1, .u.v = {name, rfx_sema_fresh_var(rl->cc, name)}};
    return v;
}

static bool add_cmp(sema *s, rfx_conj *cj, rfx_cmpop op, rfx_expr *lhs, rfx_expr *rhs, rfx_loc loc)
{
    rfx_lit *l = salloc(s, sizeof *l);
    if (!l || !lhs || !rhs)
        return false;
    *l = (rfx_lit){.kind = RFX_L_CMP, .loc = loc, .cmp = op, .lhs = lhs, .rhs = rhs};
    return rfx_sema_add_lit(s, cj, l);
}

static rfx_expr *field_of(record_lift *rl, const rfx_expr *rec, int i, int branch, rfx_loc loc)
{
    rfx_expr *f = salloc(rl->s, sizeof *f);
    rfx_expr **args = salloc(rl->s, sizeof(rfx_expr *));
    if (!f || !args)
        return NULL;
    args[0] = rfx_clone_expr(rl->s->ctx, rec);
    *f = (rfx_expr){.kind = RFX_E_FN, .loc = loc, .type = -1, .depth = rec->depth + 1,
                    .u.fn = {.fn = RFX_FN_FIELD, .nargs = 1, .args = args, .cast = branch, .field = i}};
    return f;
}

static void lift_records_conj(record_lift *rl, rfx_conj *cj);

static void lift_records_aggs(record_lift *rl, rfx_expr *e)
{
    if (e->kind == RFX_E_AGG && rfx_agg_conj(e))
        lift_records_conj(rl, rfx_agg_conj(e));
    for (int i = 0; i < rfx_expr_nkids(e); i++)
        lift_records_aggs(rl, rfx_expr_kid(e, i));
}

/* Literal i, `e = [..]`, reads the record e. */
static void unpack_literal(record_lift *rl, rfx_conj *cj, int i, bool record_left)
{
    rfx_lit *l = cj->lits[i];
    rfx_expr *rec = record_left ? l->lhs : l->rhs, *e = record_left ? l->rhs : l->lhs;
    int branch = rec->u.fn.cast_name ? rec->u.fn.field : -1;   /* an ADT's: its number is field 0 */
    if (branch >= 0) {   /* the literal tests the branch */
        l->lhs = rec->u.fn.args[0];
        l->rhs = field_of(rl, e, 0, branch, rec->loc);
    } else {             /* nil has no fields: it is no record of any */
        l->cmp = RFX_NE;
        l->lhs = e;
        l->rhs = rfx_mk_fn(rl->s->ctx, RFX_FN_NIL, NULL, (RFX_YYLTYPE){rec->loc.line, rec->loc.col, 0, 0});
    }
    for (int f = branch >= 0; f < rec->u.fn.nargs; f++) {
        rfx_expr *a = rec->u.fn.args[f];
        if (a->kind == RFX_E_ANON)
            continue;
        if (is_record(a)) {
            rfx_expr *w = record_var(rl, a->loc), *w2 = w ? rfx_clone_expr(rl->s->ctx, w) : NULL;
            add_cmp(rl->s, cj, RFX_EQ, w, field_of(rl, e, f, branch, a->loc), a->loc);
            add_cmp(rl->s, cj, RFX_EQ, w2, a, a->loc);
        } else
            add_cmp(rl->s, cj, RFX_EQ, a, field_of(rl, e, f, branch, a->loc), a->loc);
    }
}

static bool is_var(const rfx_expr *e, int v)
{
    return e->kind == RFX_E_VAR && e->u.v.var == v;
}

/* Whether variable v stands anywhere but as a whole side of an equality of cj: in an atom,
 * another comparison, an expression, or the head. */
static bool used_beyond_equalities(const rfx_clause *c, const rfx_conj *cj, int v, int nv)
{
    bool *use = calloc((size_t)nv + 1, 1);
    if (!use)
        return true;
    for (int a = 0; a < c->head.nargs; a++)
        rfx_expr_vars(c->head.args[a], use, NULL);
    for (int i = 0; i < cj->nlits; i++) {
        const rfx_lit *l = cj->lits[i];
        if (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG)
            for (int a = 0; a < l->atom.nargs; a++)
                rfx_expr_vars(l->atom.args[a], use, NULL);
        else if (l->kind == RFX_L_CMP) {
            bool eq = l->cmp == RFX_EQ;
            if (!eq || !is_var(l->lhs, v))
                rfx_expr_vars(l->lhs, use, NULL);
            if (!eq || !is_var(l->rhs, v))
                rfx_expr_vars(l->rhs, use, NULL);
        }
    }
    bool used = use[v];
    free(use);
    return used;
}

/* Literal i taken out, the others keeping their order (a `.plan` numbers the atoms). */
static void remove_lit(rfx_conj *cj, int i)
{
    memmove(cj->lits + i, cj->lits + i + 1, sizeof(rfx_lit *) * (size_t)(cj->nlits - i - 1));
    cj->nlits--;
}

/* Soufflé's alias resolution, for records nothing else types: `r = [x, y], s = r,
 * s = [v, w]` with r and s in no atom, comparison or head is `x = v, y = w`. A variable
 * equal to a record literal and read only by equalities is replaced by that record in
 * them; an equality of two record literals of one arity is their fields' equalities. */
static void resolve_record_aliases(record_lift *rl, rfx_conj *cj)
{
    for (bool changed = true; changed && !rl->s->ctx->oom;) {
        changed = false;
        for (int i = 0; i < cj->nlits && !changed; i++) {
            rfx_lit *l = cj->lits[i];
            if (l->kind != RFX_L_CMP || l->cmp != RFX_EQ)
                continue;
            if (is_record(l->lhs) && is_record(l->rhs) && !l->lhs->u.fn.cast_name && !l->rhs->u.fn.cast_name &&
                l->lhs->u.fn.nargs == l->rhs->u.fn.nargs) {
                rfx_expr *a = l->lhs, *b = l->rhs;
                remove_lit(cj, i);
                for (int f = 0; f < a->u.fn.nargs; f++)
                    if (a->u.fn.args[f]->kind != RFX_E_ANON && b->u.fn.args[f]->kind != RFX_E_ANON)
                        add_cmp(rl->s, cj, RFX_EQ, a->u.fn.args[f], b->u.fn.args[f], l->loc);
                changed = true;
                continue;
            }
            bool left = l->lhs->kind == RFX_E_VAR && is_record(l->rhs) && !l->rhs->u.fn.cast_name;
            bool right = l->rhs->kind == RFX_E_VAR && is_record(l->lhs) && !l->lhs->u.fn.cast_name;
            if (!left && !right)
                continue;
            int v = (left ? l->lhs : l->rhs)->u.v.var;
            rfx_expr *rec = left ? l->rhs : l->lhs;
            bool *inside = calloc((size_t)rl->cc->names.n + 1, 1);
            if (!inside) {
                rl->s->ctx->oom = true;
                return;
            }
            rfx_expr_vars(rec, inside, NULL);
            bool cyclic = inside[v];
            free(inside);
            if (cyclic || used_beyond_equalities(rl->cc->c, cj, v, rl->cc->names.n))
                continue;
            remove_lit(cj, i);
            for (int k = 0; k < cj->nlits; k++) {
                rfx_lit *o = cj->lits[k];
                if (o->kind == RFX_L_CMP && o->cmp == RFX_EQ && is_var(o->lhs, v))
                    o->lhs = rfx_clone_expr(rl->s->ctx, rec);
                if (o->kind == RFX_L_CMP && o->cmp == RFX_EQ && is_var(o->rhs, v))
                    o->rhs = rfx_clone_expr(rl->s->ctx, rec);
            }
            changed = true;
        }
    }
}

static void lift_records_conj(record_lift *rl, rfx_conj *cj)
{
    sema *s = rl->s;
    int n = cj->nlits;
    for (int i = 0; i < n; i++) {
        rfx_lit *l = cj->lits[i];
        if (l->kind == RFX_L_ATOM)
            for (int a = 0; a < l->atom.nargs; a++)
                if (is_record(l->atom.args[a])) {
                    rfx_expr *v = record_var(rl, l->atom.args[a]->loc);
                    rfx_expr *v2 = v ? rfx_clone_expr(s->ctx, v) : NULL;
                    if (!v2 || !add_cmp(s, cj, RFX_EQ, v2, l->atom.args[a], l->atom.args[a]->loc))
                        return;
                    l->atom.args[a] = v;
                }
        if (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG)
            for (int a = 0; a < l->atom.nargs; a++)
                lift_records_aggs(rl, l->atom.args[a]);
        else if (l->kind == RFX_L_CMP) {
            lift_records_aggs(rl, l->lhs);
            lift_records_aggs(rl, l->rhs);
        }
    }
    /* each record equality in turn, as soon as its other side is grounded without it */
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < cj->nlits && !changed; i++) {
            rfx_lit *l = cj->lits[i];
            if (l->kind != RFX_L_CMP || l->cmp != RFX_EQ || is_record(l->lhs) == is_record(l->rhs))
                continue;
            int nv = rl->cc->names.n;
            bool *bound = calloc((size_t)nv + 1, 1), *use = calloc((size_t)nv + 1, 1);
            rfx_conj rest = {0, malloc(sizeof(rfx_lit *) * (size_t)cj->nlits)};
            if (!bound || !use || !rest.lits) {
                free(bound);
                free(use);
                free(rest.lits);
                s->ctx->oom = true;
                return;
            }
            for (int k = 0; k < cj->nlits; k++)
                if (k != i)
                    rest.lits[rest.nlits++] = cj->lits[k];
            rfx_conj_ground(&rest, bound, NULL);
            rfx_expr_vars(is_record(l->lhs) ? l->rhs : l->lhs, use, NULL);
            bool grounded = true;
            for (int v = 0; v < nv; v++)
                grounded &= !use[v] || bound[v];
            free(bound);
            free(use);
            free(rest.lits);
            if (grounded) {
                unpack_literal(rl, cj, i, is_record(l->lhs));
                changed = true;
            }
        }
    }
}

void rfx_sema_lift_records(clause_ctx *cc)
{
    record_lift rec = {cc, cc->s, 0};
    for (int i = 0; i < cc->c->nconj; i++) {
        /* a clause's own disjuncts only: an aggregate's body may share a variable with the
         * disjunct around it, which the resolution would not see */
        resolve_record_aliases(&rec, &cc->c->conj[i]);
        lift_records_conj(&rec, &cc->c->conj[i]);
    }
}

void rfx_sema_lift_ranges(clause_ctx *cc)
{
    rfx_clause *c = cc->c;
    range_lift rl = {cc, cc->s, 0};
    for (int i = 0; i < c->nconj; i++)
        lift_ranges_conj(&rl, &c->conj[i]);
    if (c->nconj > 0) {   /* a head's range: its binding joins every disjunct */
        int first = c->conj[0].nlits;
        for (int a = 0; a < c->head.nargs; a++)
            c->head.args[a] = lift_ranges(&rl, c->head.args[a], &c->conj[0], false);
        for (int i = 1; i < c->nconj; i++)
            for (int l = first; l < c->conj[0].nlits; l++)
                rfx_sema_add_lit(cc->s, &c->conj[i], c->conj[0].lits[l]);
    }
}
