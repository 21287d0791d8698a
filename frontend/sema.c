/* sema.c: semantic analysis: DNF of bodies, variable typing, safety (range restriction),
 * constant division by zero, and stratification (the type declarations and the subtype
 * lattice: sema_types.c; relations, directives and pragmas: sema_decls.c). */
#include "sema.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- DNF --------------------------------------------------------------------------- */
typedef struct dnf {
    int n;
    rfx_conj *c;
} dnf;

static dnf to_dnf(sema *s, rfx_body *b)
{
    dnf r = {0, NULL};
    if (!b)
        return r;
    if (b->kind == RFX_B_LIT) {
        r.c = salloc(s, sizeof(rfx_conj));
        if (!r.c || !b->lit)
            return r;
        r.n = 1;
        r.c[0].nlits = 1;
        r.c[0].lits = salloc(s, sizeof(rfx_lit *));
        if (r.c[0].lits)
            r.c[0].lits[0] = b->lit;
        return r;
    }
    dnf l = to_dnf(s, b->lhs), rr = to_dnf(s, b->rhs);
    if (b->kind == RFX_B_OR) {
        r.n = l.n + rr.n;
        r.c = salloc(s, sizeof(rfx_conj) * (size_t)r.n);
        if (!r.c)
            return (dnf){0, NULL};
        rfx_memcpy(r.c, l.c, sizeof(rfx_conj) * (size_t)l.n);
        rfx_memcpy(r.c + l.n, rr.c, sizeof(rfx_conj) * (size_t)rr.n);
        return r;
    }
    if ((long)l.n * rr.n > 4096) {
        rfx_diag_error(s->d, (rfx_loc){0, 0}, "body has more than 4096 disjuncts after expansion");
        return (dnf){0, NULL};
    }
    r.n = l.n * rr.n;
    r.c = salloc(s, sizeof(rfx_conj) * (size_t)(r.n ? r.n : 1));
    if (!r.c)
        return (dnf){0, NULL};
    for (int i = 0; i < l.n; i++)
        for (int j = 0; j < rr.n; j++) {
            rfx_conj *c = &r.c[i * rr.n + j];
            c->nlits = l.c[i].nlits + rr.c[j].nlits;
            c->lits = salloc(s, sizeof(rfx_lit *) * (size_t)c->nlits);
            if (!c->lits)
                return (dnf){0, NULL};
            rfx_memcpy(c->lits, l.c[i].lits, sizeof(rfx_lit *) * (size_t)l.c[i].nlits);
            rfx_memcpy(c->lits + l.c[i].nlits, rr.c[j].lits, sizeof(rfx_lit *) * (size_t)rr.c[j].nlits);
        }
    return r;
}

/* The disjuncts of a product share its factors' literals: cj's become copies of its own
 * (atoms with their own argument arrays; expressions stay shared). */
static void own_literals(sema *s, rfx_conj *cj)
{
    for (int i = 0; i < cj->nlits; i++) {
        rfx_lit *l = salloc(s, sizeof *l);
        rfx_expr **args = salloc(s, sizeof(rfx_expr *) * (size_t)(cj->lits[i]->atom.nargs + 1));
        if (!l || !args)
            return;
        *l = *cj->lits[i];
        rfx_memcpy(args, l->atom.args, sizeof(rfx_expr *) * (size_t)l->atom.nargs);
        l->atom.args = args;
        cj->lits[i] = l;
    }
}

/* ---- variables ---------------------------------------------------------------------- */

static int var_index(clause_ctx *cc, const char *name)
{
    for (int i = 0; i < cc->names.n; i++)
        if (strcmp(cc->names.items[i], name) == 0)
            return i;
    rfx_plist_push(cc->s->ctx, &cc->names, (void *)name);
    return cc->names.n - 1;
}

int rfx_sema_fresh_var(clause_ctx *cc, const char *name)
{
    rfx_plist_push(cc->s->ctx, &cc->names, (void *)name);
    return cc->names.n - 1;
}

static void number_expr(clause_ctx *cc, rfx_expr *e);

static void number_atom(clause_ctx *cc, rfx_atom *a)
{
    for (int i = 0; i < a->nargs; i++)
        number_expr(cc, a->args[i]);
}

static void number_conj(clause_ctx *cc, rfx_conj *cj)
{
    for (int i = 0; i < cj->nlits; i++) {
        rfx_lit *l = cj->lits[i];
        if (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG)
            number_atom(cc, &l->atom);
        else if (l->kind == RFX_L_CMP) {
            number_expr(cc, l->lhs);
            number_expr(cc, l->rhs);
        }
    }
}

static void number_expr(clause_ctx *cc, rfx_expr *e)
{
    switch (e->kind) {
    case RFX_E_VAR:
        e->u.v.var = var_index(cc, e->u.v.name);
        break;
    case RFX_E_NEG: case RFX_E_BINOP: case RFX_E_FN:
        for (int i = 0; i < rfx_expr_nkids(e); i++)
            number_expr(cc, rfx_expr_kid(e, i));
        break;
    case RFX_E_AGG:
        if (e->u.agg.target)
            number_expr(cc, e->u.agg.target);
        if (rfx_agg_conj(e))
            number_conj(cc, rfx_agg_conj(e));
        break;
    default:
        break;
    }
}

/* ---- aggregate scopes (Soufflé's rule) -------------------------------------------------
 * A variable of an aggregate is injected (a group key shared with the enclosing scope) when
 * the enclosing scope grounds it without this aggregate's result and it is not in the
 * aggregate's target expression; every other variable of the aggregate is local to it and
 * is renumbered apart, so `x = max x : { r(x) }` names two variables. */
static void scope_aggs_in(clause_ctx *cc, rfx_expr *e, rfx_conj *scope, const bool *base, int nbase);

static bool expr_ground(const rfx_expr *e, const bool *bound, const rfx_expr *skip)
{
    switch (e->kind) {
    case RFX_E_VAR: return bound[e->u.v.var];
    case RFX_E_ANON: return false;
    case RFX_E_NEG: case RFX_E_BINOP: case RFX_E_FN:
        for (int i = 0; i < rfx_expr_nkids(e); i++)
            if (!expr_ground(rfx_expr_kid(e, i), bound, skip))
                return false;
        return true;
    case RFX_E_AGG: return e != skip;
    default: return true;
    }
}

void rfx_conj_ground(const rfx_conj *cj, bool *bound, const rfx_expr *skip)
{
    for (int i = 0; i < cj->nlits; i++)
        if (cj->lits[i]->kind == RFX_L_ATOM)
            for (int a = 0; a < cj->lits[i]->atom.nargs; a++)
                if (cj->lits[i]->atom.args[a]->kind == RFX_E_VAR)
                    bound[cj->lits[i]->atom.args[a]->u.v.var] = true;
    rfx_sema_ground_eqs(cj, bound, skip);
}

void rfx_sema_ground_eqs(const rfx_conj *cj, bool *bound, const rfx_expr *skip)
{
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < cj->nlits; i++) {
            const rfx_lit *l = cj->lits[i];
            if (l->kind != RFX_L_CMP || l->cmp != RFX_EQ)
                continue;
            for (int side = 0; side < 2; side++) {
                const rfx_expr *v = side ? l->rhs : l->lhs, *x = side ? l->lhs : l->rhs;
                if (v->kind == RFX_E_VAR && !bound[v->u.v.var] && expr_ground(x, bound, skip)) {
                    bound[v->u.v.var] = true;
                    changed = true;
                }
            }
        }
    }
}

void rfx_conj_vars(const rfx_conj *cj, bool *use, const rfx_expr *skip)
{
    for (int i = 0; i < cj->nlits; i++) {
        const rfx_lit *l = cj->lits[i];
        if (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG)
            for (int a = 0; a < l->atom.nargs; a++)
                rfx_expr_vars(l->atom.args[a], use, skip);
        else if (l->kind == RFX_L_CMP) {
            rfx_expr_vars(l->lhs, use, skip);
            rfx_expr_vars(l->rhs, use, skip);
        }
    }
}

void rfx_expr_vars(const rfx_expr *e, bool *use, const rfx_expr *skip)
{
    if (e == skip)
        return;
    switch (e->kind) {
    case RFX_E_VAR: use[e->u.v.var] = true; break;
    case RFX_E_NEG: case RFX_E_BINOP: case RFX_E_FN:
        for (int i = 0; i < rfx_expr_nkids(e); i++)
            rfx_expr_vars(rfx_expr_kid(e, i), use, skip);
        break;
    case RFX_E_AGG:
        if (e->u.agg.target)
            rfx_expr_vars(e->u.agg.target, use, skip);
        if (rfx_agg_conj(e))
            rfx_conj_vars(rfx_agg_conj(e), use, skip);
        break;
    default: break;
    }
}

static void rename_conj(rfx_conj *cj, const int *map);

static void rename_expr(rfx_expr *e, const int *map)
{
    switch (e->kind) {
    case RFX_E_VAR: if (map[e->u.v.var] >= 0) e->u.v.var = map[e->u.v.var]; break;
    case RFX_E_NEG: case RFX_E_BINOP: case RFX_E_FN:
        for (int i = 0; i < rfx_expr_nkids(e); i++)
            rename_expr(rfx_expr_kid(e, i), map);
        break;
    case RFX_E_AGG:
        if (e->u.agg.target)
            rename_expr(e->u.agg.target, map);
        if (rfx_agg_conj(e))
            rename_conj(rfx_agg_conj(e), map);
        break;
    default: break;
    }
}

static void rename_conj(rfx_conj *cj, const int *map)
{
    for (int i = 0; i < cj->nlits; i++) {
        rfx_lit *l = cj->lits[i];
        if (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG)
            for (int a = 0; a < l->atom.nargs; a++)
                rename_expr(l->atom.args[a], map);
        else if (l->kind == RFX_L_CMP) {
            rename_expr(l->lhs, map);
            rename_expr(l->rhs, map);
        }
    }
}

/* Scopes one aggregate: `outer_bound` is what its enclosing scope grounds (this aggregate's
 * result not counted); then the aggregates nested in its body. */
static void scope_agg(clause_ctx *cc, rfx_expr *agg, const bool *outer_bound)
{
    rfx_conj *body = rfx_agg_conj(agg);
    if (agg->u.agg.scoped || !body)
        return;
    agg->u.agg.scoped = true;
    int nv = cc->names.n;
    bool *in = calloc((size_t)nv + 1, 1), *target = calloc((size_t)nv + 1, 1);
    bool *outside = calloc((size_t)nv + 1, 1);
    int *map = malloc(sizeof(int) * (size_t)(nv + 1));
    if (!in || !target || !outside || !map) {
        free(in), free(target), free(outside), free(map);
        cc->s->ctx->oom = true;
        return;
    }
    rfx_expr_vars(agg, in, NULL);
    if (agg->u.agg.target)
        rfx_expr_vars(agg->u.agg.target, target, NULL);
    /* a variable seen nowhere else is local as it is */
    rfx_conj_vars(cc->conj, outside, agg);
    for (int a = 0; a < cc->c->head.nargs; a++)
        rfx_expr_vars(cc->c->head.args[a], outside, agg);
    bool any = false;
    for (int v = 0; v < nv; v++) {
        map[v] = -1;
        if (in[v] && outside[v] && (!outer_bound[v] || target[v])) {
            map[v] = rfx_sema_fresh_var(cc, cc->names.items[v]);
            any = true;
        }
    }
    if (any)
        rename_expr(agg, map);
    free(in), free(target), free(outside), free(map);
    /* each nested aggregate sees what is injected here plus what the body grounds
     * without its own result */
    for (int i = 0; i < body->nlits; i++) {
        rfx_lit *l = body->lits[i];
        if (l->kind == RFX_L_CMP) {
            scope_aggs_in(cc, l->lhs, body, outer_bound, nv);
            scope_aggs_in(cc, l->rhs, body, outer_bound, nv);
        } else if (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG)
            for (int a = 0; a < l->atom.nargs; a++)
                scope_aggs_in(cc, l->atom.args[a], body, outer_bound, nv);
    }
}

/* Scopes the aggregates of expression e, whose enclosing scope is the conjunction `scope`
 * with the first `nbase` variables' groundings of `base` injected into it. */
static void scope_aggs_in(clause_ctx *cc, rfx_expr *e, rfx_conj *scope, const bool *base, int nbase)
{
    for (int i = 0; i < rfx_expr_nkids(e); i++)
        scope_aggs_in(cc, rfx_expr_kid(e, i), scope, base, nbase);
    if (e->kind != RFX_E_AGG || e->u.agg.scoped || !rfx_agg_conj(e))
        return;
    bool *b = calloc((size_t)cc->names.n + 1, 1);
    if (!b) {
        cc->s->ctx->oom = true;
        return;
    }
    for (int v = 0; v < nbase; v++)
        b[v] = base[v];
    rfx_conj_ground(scope, b, e);
    scope_agg(cc, e, b);
    free(b);
}

/* Scopes every aggregate of a conjunction and of the head that goes with it. */
static void scope_clause_aggs(clause_ctx *cc, rfx_conj *cj, rfx_atom *head)
{
    cc->conj = cj;
    for (int i = 0; i < cj->nlits; i++) {
        rfx_lit *l = cj->lits[i];
        if (l->kind == RFX_L_CMP) {
            scope_aggs_in(cc, l->lhs, cj, NULL, 0);
            scope_aggs_in(cc, l->rhs, cj, NULL, 0);
        } else if (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG)
            for (int a = 0; a < l->atom.nargs; a++)
                scope_aggs_in(cc, l->atom.args[a], cj, NULL, 0);
    }
    for (int a = 0; a < head->nargs; a++)
        scope_aggs_in(cc, head->args[a], cj, NULL, 0);
}

rfx_conj *rfx_agg_conj(const rfx_expr *agg)
{
    return agg->u.agg.body ? agg->u.agg.body->flat : NULL;
}

/* ---- typing --------------------------------------------------------------------------- */
static rfx_prim tprim(const rfx_program *p, int t)
{
    return p->types[t].prim;
}

/* Record that variable v has type t; a clash of primitive kinds is an error. */
void rfx_sema_bind_type(clause_ctx *cc, int v, int t, rfx_loc loc, bool *changed)
{
    rfx_program *p = cc->s->p;
    int cur = cc->c->var_types[v];
    if (cur < 0) {
        cc->c->var_types[v] = t;
        *changed = true;
    } else if (tprim(p, cur) != tprim(p, t)) {
        rfx_diag_error(cc->s->d, loc, "type mismatch: variable '%s' is used as %s ('%s') and as %s ('%s')",
                       cc->c->var_names[v], rfx_prim_name(tprim(p, cur)), p->types[cur].name,
                       rfx_prim_name(tprim(p, t)), p->types[t].name);
        cc->c->var_types[v] = t;
    }
}

static void infer_conj(clause_ctx *cc, rfx_conj *cj, bool *changed);

/* The type a functor's result always has (0 number, 1 unsigned, 2 float, 3 symbol: the
 * primitive types' indices; as(x, T): T), or -1 for range, whose result has its operands'
 * type, as an operator's. */
static int fn_result(const rfx_expr *e)
{
    if (e->u.fn.fn == RFX_FN_RECORD)   /* a constructor tells its ADT; `[..]` takes its context's type */
        return e->u.fn.cast_name ? e->u.fn.cast : -1;
    if (e->u.fn.fn == RFX_FN_USER)     /* its declared result */
        return e->u.fn.cast;
    static const int res[RFX_FN_COUNT] = {3, 0, 3, 0, 0, 0, 0, 1, 2, 3, -1, -1, 0, -1, -1, -1, -1,
                                          RFX_DATE, 0, 0, 0, RFX_DATE, 0, -1, -1, -1};
    return e->u.fn.fn == RFX_FN_AS ? e->u.fn.cast : res[e->u.fn.fn];
}

/* The type a functor's argument i must have (a primitive type's index), -1 where any
 * numeric or symbol argument is taken (conversions, as), -2 where it has the result's. */
static int fn_arg_type(const rfx_expr *e, int i)
{
    switch (e->u.fn.fn) {
    case RFX_FN_CAT: case RFX_FN_STRLEN: case RFX_FN_ORD: case RFX_FN_CONTAINS: case RFX_FN_MATCH: case RFX_FN_LIKE:
        return 3;
    case RFX_FN_SUBSTR: return i ? 0 : 3;
    case RFX_FN_TO_DATE: return 3;
    case RFX_FN_DATE_YEAR: case RFX_FN_DATE_MONTH: case RFX_FN_DATE_DAY: return RFX_DATE;
    case RFX_FN_ADD_MONTHS: return i ? 0 : RFX_DATE;
    case RFX_FN_RANGE: return -2;
    case RFX_FN_USER: return e->u.fn.arg_types && i < e->u.fn.nargs ? e->u.fn.arg_types[i] : -1;
    default: return -1;
    }
}

/* Whether an expression has a part that tells its type (a variable, an aggregate, or a
 * literal other than a plain integer, which takes the type its context wants). */
static bool typed_leaf(const rfx_expr *e)
{
    switch (e->kind) {
    case RFX_E_INT: case RFX_E_ANON: return false;
    case RFX_E_FN:
        if ((e->u.fn.fn == RFX_FN_RECORD && !e->u.fn.cast_name) || e->u.fn.fn == RFX_FN_NIL)
            return false;   /* a record literal takes the type its context wants */
        /* fall through */
    case RFX_E_NEG: case RFX_E_BINOP:
        if (e->kind == RFX_E_FN && fn_result(e) >= 0)
            return true;
        for (int i = 0; i < rfx_expr_nkids(e); i++)
            if (typed_leaf(rfx_expr_kid(e, i)))
                return true;
        return false;
    default: return true;
    }
}

/* The type an expression's own parts tell (variables, aggregates, literals other than plain
 * integers), or -1; *plain is cleared when some part can tell none yet (an untyped
 * variable, `_`). One walk: long expressions are typed in linear time. */
static int type_up(clause_ctx *cc, const rfx_expr *e, bool *plain)
{
    switch (e->kind) {
    case RFX_E_VAR: {
        int t = cc->c->var_types[e->u.v.var];
        if (t < 0)
            *plain = false;
        return t;
    }
    case RFX_E_ANON: *plain = false; return -1;
    case RFX_E_INT: return -1;
    case RFX_E_UNSIGNED: return 1;
    case RFX_E_FLOAT: return e->type >= 0 ? e->type : 2;   /* float64 where its context made it one */
    case RFX_E_STRING: return 3;
    case RFX_E_NEG: return type_up(cc, e->u.bin.lhs, plain);
    case RFX_E_BINOP: {
        int l = type_up(cc, e->u.bin.lhs, plain), r = type_up(cc, e->u.bin.rhs, plain);
        return rfx_sema_binop_type(cc->s, e, l, r);
    }
    case RFX_E_AGG:
        if (e->u.agg.fn == RFX_AGG_COUNT)
            return 0;
        if (e->u.agg.fn == RFX_AGG_MEAN) {   /* float, or float64 over float64 values */
            int t = e->u.agg.target ? type_up(cc, e->u.agg.target, plain) : -1;
            return t >= 0 && (cc->s->p->types[t].prim == RFX_FLOAT64 || cc->s->p->types[t].prim == RFX_DECIMAL)
                 ? RFX_FLOAT64 : RFX_FLOAT;
        }
        if (e->u.agg.target)
            return type_up(cc, e->u.agg.target, plain);
        *plain = false;
        return -1;
    case RFX_E_FN: {
        if (e->u.fn.fn == RFX_FN_FIELD) {   /* the field's type, once the record's is known */
            const int *ft;
            int nf = rfx_program_fields(cc->s->p, type_up(cc, e->u.fn.args[0], plain), e->u.fn.cast, &ft);
            if (e->u.fn.field < nf)
                return ft[e->u.fn.field];
            *plain = false;
            return -1;
        }
        if (e->u.fn.fn != RFX_FN_RANGE) {
            if (fn_result(e) < 0)   /* as(x, T) with T unknown (reported); a record literal */
                *plain = false;
            return fn_result(e);
        }
        int t = -1;
        for (int i = 0; i < e->u.fn.nargs; i++) {
            int k = type_up(cc, e->u.fn.args[i], plain);
            t = t >= 0 ? t : k;
        }
        return t;
    }
    }
    return -1;
}

/* Type of an expression, or -1 when it cannot be told yet: what its parts tell, else the
 * type `want` gives its integer literals, else (integer literals only) number. */
int rfx_sema_expr_type(clause_ctx *cc, rfx_expr *e, int want)
{
    bool plain = true;
    int t = type_up(cc, e, &plain);
    return t >= 0 ? t : want >= 0 ? want : plain ? 0 : -1;
}

static void infer_expr_aggs(clause_ctx *cc, rfx_expr *e, bool *changed)
{
    if (e->kind == RFX_E_AGG && e->u.agg.body)
        infer_conj(cc, rfx_agg_conj(e), changed);
    for (int i = 0; i < rfx_expr_nkids(e); i++)
        infer_expr_aggs(cc, rfx_expr_kid(e, i), changed);
}

static void infer_atom(clause_ctx *cc, rfx_atom *a, bool *changed)
{
    if (a->rel < 0)
        return;
    rfx_relation *r = &cc->s->p->rels[a->rel];
    for (int i = 0; i < a->nargs && i < r->arity; i++)
        if (a->args[i]->kind == RFX_E_VAR)
            rfx_sema_bind_type(cc, a->args[i]->u.v.var, r->attrs[i].type, a->args[i]->loc, changed);
        else   /* an aggregate in an argument: its body's variables too */
            infer_expr_aggs(cc, a->args[i], changed);
}

static void infer_conj(clause_ctx *cc, rfx_conj *cj, bool *changed)
{
    for (int i = 0; i < cj->nlits; i++) {
        rfx_lit *l = cj->lits[i];
        if (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG)
            infer_atom(cc, &l->atom, changed);
        else if (l->kind == RFX_L_CMP) {
            infer_expr_aggs(cc, l->lhs, changed);
            infer_expr_aggs(cc, l->rhs, changed);
            rfx_expr *v = NULL, *other = NULL;
            if (l->lhs->kind == RFX_E_VAR) { v = l->lhs; other = l->rhs; }
            if (l->rhs->kind == RFX_E_VAR && (!v || cc->c->var_types[v->u.v.var] >= 0)) {
                if (!v || cc->c->var_types[l->rhs->u.v.var] < 0) { v = l->rhs; other = l->lhs; }
            }
            if (v && cc->c->var_types[v->u.v.var] < 0) {
                int t = rfx_sema_expr_type(cc, other, -1);
                if (t >= 0 && (cc->literals_type || typed_leaf(other)))
                    rfx_sema_bind_type(cc, v->u.v.var, t, v->loc, changed);
            }
        }
    }
}

static void check_expr(clause_ctx *cc, rfx_expr *e, int want);
static void check_fn(clause_ctx *cc, rfx_expr *e);

static void check_conj_types(clause_ctx *cc, rfx_conj *cj);

static void check_atom_types(clause_ctx *cc, rfx_atom *a)
{
    if (a->rel < 0)
        return;
    rfx_program *p = cc->s->p;
    rfx_relation *r = &p->rels[a->rel];
    for (int i = 0; i < a->nargs && i < r->arity; i++) {
        int want = r->attrs[i].type;
        check_expr(cc, a->args[i], want);
        int t = rfx_sema_expr_type(cc, a->args[i], want);
        if (t >= 0 && a->args[i]->kind != RFX_E_VAR && !rfx_sema_types_agree(p, t, want))   /* variables: the subtype check */
            rfx_diag_error(cc->s->d, a->args[i]->loc, "type mismatch: argument %d of '%s' is '%s', got '%s'", i + 1,
                           r->name, p->types[want].name, p->types[t].name);
        else if (t >= 0 && tprim(p, t) != tprim(p, want))
            rfx_diag_error(cc->s->d, a->args[i]->loc,
                           "type mismatch: argument %d of '%s' is %s%s%s%s, got %s",
                           i + 1, r->name, rfx_prim_name(tprim(p, want)), want >= RFX_NPRIMS ? " ('" : "",
                           want >= RFX_NPRIMS ? p->types[want].name : "", want >= RFX_NPRIMS ? "')" : "",
                           rfx_prim_name(tprim(p, t)));
        else if (t >= 0 && tprim(p, t) == RFX_DECIMAL && p->types[t].scale > p->types[want].scale)
            rfx_diag_error(cc->s->d, a->args[i]->loc, "argument %d of '%s' is %s, got a value of %d decimal places "
                           "(as(x, %s) rounds it)", i + 1, r->name, p->types[want].name, p->types[t].scale,
                           p->types[want].name);
    }
}

/* First pass of check_expr: each node's own type (type_up's) in e->type, -2 where only
 * integer literals tell none, children before parents. */
static int type_nodes(clause_ctx *cc, rfx_expr *e)
{
    int t;
    switch (e->kind) {
    case RFX_E_NEG: t = type_nodes(cc, e->u.bin.lhs); break;
    case RFX_E_BINOP: {
        int l = type_nodes(cc, e->u.bin.lhs), r = type_nodes(cc, e->u.bin.rhs);
        t = l >= 0 || r >= 0 ? rfx_sema_binop_type(cc->s, e, l, r) : l == -2 && r == -2 ? -2 : -1;
        break;
    }
    case RFX_E_INT: t = -2; break;
    case RFX_E_FN: {
        if (e->u.fn.fn == RFX_FN_FIELD) {
            type_nodes(cc, e->u.fn.args[0]);
            bool plain = true;
            t = type_up(cc, e, &plain);
            break;
        }
        t = fn_result(e);
        bool ints = true;   /* range over integer literals only */
        for (int i = 0; i < e->u.fn.nargs; i++) {
            int k = type_nodes(cc, e->u.fn.args[i]);
            if (e->u.fn.fn == RFX_FN_RANGE) {
                t = t >= 0 ? t : k >= 0 ? k : -1;
                ints &= k == -2;
            }
        }
        if (e->u.fn.fn == RFX_FN_RANGE && t < 0)
            t = ints ? -2 : -1;
        break;
    }
    case RFX_E_AGG:
        if (e->u.agg.target)
            type_nodes(cc, e->u.agg.target);
        /* fall through */
    default: {
        bool plain = true;
        t = type_up(cc, e, &plain);
    }
    }
    e->type = t;
    return t;
}

/* Whether op applies to values of kind prim: % and the bitwise, shift and logical operators
 * to integers alone, ^ to floats too but not to decimals. */
static bool binop_applies(rfx_prim prim, rfx_binop op)
{
    const bool fractional = prim == RFX_FLOAT || prim == RFX_FLOAT64 || prim == RFX_DECIMAL;
    return !fractional || !(op == RFX_MOD || RFX_BINOP_INTEGRAL(op) || (op == RFX_POW && prim == RFX_DECIMAL));
}

/* Second pass: each node's type given what its context wants, and the checks. */
static void check_typed(clause_ctx *cc, rfx_expr *e, int want)
{
    rfx_program *p = cc->s->p;
    if (rfx_sema_float64_literal(cc->s, e, want))
        return;
    e->type = rfx_sema_literal_arith_type(cc->s, e, e->type, want);
    e->type = e->type >= 0 ? e->type : want >= 0 ? want : e->type == -2 ? 0 : -1;
    switch (e->kind) {
    case RFX_E_INT:
        if (e->type >= 0 && tprim(p, e->type) == RFX_SYMBOL)
            rfx_diag_error(cc->s->d, e->loc, "type mismatch: number literal where a symbol is expected");
        if (e->type >= 0 && (tprim(p, e->type) == RFX_NUMBER || tprim(p, e->type) == RFX_UNSIGNED) &&
            (e->bits ? e->bits64
             : tprim(p, e->type) == RFX_UNSIGNED ? e->u.ival > (int64_t)UINT32_MAX : e->u.ival > INT32_MAX || e->u.ival < INT32_MIN))
            rfx_diag_error(cc->s->d, e->loc, "%s literal out of range (%s)", rfx_prim_name(tprim(p, e->type)),
                           tprim(p, e->type) == RFX_NUMBER ? "numbers are 32-bit signed: number64 holds 64 bits"
                                                           : "32 bits: unsigned64 holds 64");
        if (e->u.ival < 0 && !e->bits && e->type >= 0 && tprim(p, e->type) == RFX_UNSIGNED)
            rfx_diag_error(cc->s->d, e->loc, "negative literal %lld where an unsigned value is expected",
                           (long long)e->u.ival);
        break;
    case RFX_E_FLOAT: {
        double v = e->u.fval < 0 ? -e->u.fval : e->u.fval;
        if (v == v && v != HUGE_VAL && (v > FLT_MAX || (v != 0 && v < FLT_MIN)))
            rfx_diag_error(cc->s->d, e->loc, "float literal out of range (floats are 32-bit)");
        break;
    }
    case RFX_E_NEG:
        check_typed(cc, e->u.bin.lhs, e->type);
        if (e->type >= 0 && tprim(p, e->type) == RFX_SYMBOL)
            rfx_diag_error(cc->s->d, e->loc, "type mismatch: unary minus applied to a symbol");
        break;
    case RFX_E_BINOP: {
        check_typed(cc, e->u.bin.lhs, e->type);
        check_typed(cc, e->u.bin.rhs, e->type);
        int l = e->u.bin.lhs->type, r = e->u.bin.rhs->type;   /* their own, or the one e gave them */
        if (l >= 0 && r >= 0 && tprim(p, l) != tprim(p, r))
            rfx_diag_error(cc->s->d, e->loc, "type mismatch: '%s' between %s and %s",
                           rfx_binop_str(e->u.bin.op), rfx_prim_name(tprim(p, l)), rfx_prim_name(tprim(p, r)));
        else if (e->type >= 0 && tprim(p, e->type) == RFX_SYMBOL && e->u.bin.op != RFX_ADD)   /* a + b: cat */
            rfx_diag_error(cc->s->d, e->loc, "type mismatch: %s '%s' on symbols",
                           RFX_BINOP_CALL(e->u.bin.op) ? "functor" : "arithmetic", rfx_binop_str(e->u.bin.op));
        else if (e->type >= 0 && !binop_applies(tprim(p, e->type), e->u.bin.op))
            rfx_diag_error(cc->s->d, e->loc, "type mismatch: '%s' on %ss (%s only)",
                           rfx_binop_str(e->u.bin.op), rfx_prim_name(tprim(p, e->type)),
                           e->u.bin.op == RFX_POW ? "numbers, unsigned and floats" : "numbers and unsigned");
        else if (l >= 0 && r >= 0 && tprim(p, l) == RFX_DECIMAL && tprim(p, r) == RFX_DECIMAL && e->u.bin.op == RFX_MUL &&
                 p->types[l].scale + p->types[r].scale > 18)
            rfx_diag_error(cc->s->d, e->loc, "a product of %s and %s has more than 18 decimal places",
                           p->types[l].name, r >= 0 ? p->types[r].name : "?");
        rfx_expr *rhs = e->u.bin.rhs;
        if ((e->u.bin.op == RFX_DIV || e->u.bin.op == RFX_MOD) &&
            ((rhs->kind == RFX_E_INT || rhs->kind == RFX_E_UNSIGNED) && rhs->u.ival == 0))
            rfx_diag_error(cc->s->d, rhs->loc, "division by zero");
        break;
    }
    case RFX_E_AGG:
        if (!e->u.agg.body)
            break;
        check_conj_types(cc, rfx_agg_conj(e));
        if (e->u.agg.target) {
            check_typed(cc, e->u.agg.target, e->u.agg.fn == RFX_AGG_COUNT ? -1 : e->type);
            int t = e->u.agg.target->type;
            if (t >= 0 && tprim(p, t) == RFX_SYMBOL)
                rfx_diag_error(cc->s->d, e->u.agg.target->loc, "type mismatch: %s over symbols",
                               rfx_aggfn_str(e->u.agg.fn));
            else if (t >= 0 && e->u.agg.fn == RFX_AGG_MEAN && tprim(p, t) != RFX_FLOAT && tprim(p, t) != RFX_FLOAT64 &&
                     tprim(p, t) != RFX_DECIMAL)
                rfx_diag_error(cc->s->d, e->u.agg.target->loc,
                               "type mismatch: mean over %s (mean takes floats: convert with to_float)",
                               rfx_prim_name(tprim(p, t)));
        }
        break;
    case RFX_E_FN:
        check_fn(cc, e);
        break;
    default:
        break;
    }
}

/* A record literal (or nil) typed by its context: its fields checked against the type's. */
static void check_record(clause_ctx *cc, rfx_expr *e)
{
    rfx_program *p = cc->s->p;
    bool nil = e->u.fn.fn == RFX_FN_NIL, adt = e->u.fn.cast_name != NULL;
    if (adt && e->u.fn.field < 0)
        return;   /* an unknown constructor (reported) */
    const int *ft = NULL;
    int nf = e->type >= 0 ? rfx_program_fields(p, e->type, adt ? e->u.fn.field : -1, &ft) : -1;
    if (nil && e->type >= 0 && rfx_program_record_type(p, e->type) < 0)
        nf = -1;   /* nil is a record's, no ADT's */
    if (e->type < 0)
        rfx_diag_error(cc->s->d, e->loc, "cannot tell the type of this %s (no typed attribute or variable "
                       "gives it)", nil ? "nil" : "record");
    else if (nf < 0)
        rfx_diag_error(cc->s->d, e->loc, "type mismatch: %s where '%s' is expected", nil ? "nil" : "a record",
                       p->types[e->type].name);
    else if (!nil && e->u.fn.nargs != nf)
        rfx_diag_error(cc->s->d, e->loc, "record of %d field%s where '%s' has %d", e->u.fn.nargs,
                       e->u.fn.nargs == 1 ? "" : "s", p->types[e->type].name, nf);
    for (int i = 0; i < e->u.fn.nargs; i++) {
        int want = nf >= 0 && i < nf ? ft[i] : -1;
        rfx_expr *a = e->u.fn.args[i];
        check_typed(cc, a, want);
        if (want >= 0 && a->type >= 0 && a->kind != RFX_E_ANON &&
            (!rfx_sema_types_agree(p, a->type, want) || tprim(p, a->type) != tprim(p, want)))
            rfx_diag_error(cc->s->d, a->loc, "type mismatch: field %d of '%s' is '%s', got '%s'", i + 1 - adt,
                           adt ? p->types[e->type].branches[e->u.fn.field].name : rfx_sema_type_shown(p, e->type),
                           rfx_sema_type_shown(p, want), rfx_sema_type_shown(p, a->type));
    }
}

/* A functor's arguments typed and checked against what it takes. */
static void check_fn(clause_ctx *cc, rfx_expr *e)
{
    rfx_program *p = cc->s->p;
    if (e->u.fn.fn == RFX_FN_RECORD || e->u.fn.fn == RFX_FN_NIL) {
        check_record(cc, e);
        return;
    }
    const char *name = e->u.fn.fn == RFX_FN_USER ? e->u.fn.cast_name : rfx_functor_name(e->u.fn.fn);
    for (int i = 0; i < e->u.fn.nargs; i++) {
        rfx_expr *a = e->u.fn.args[i];
        int want = fn_arg_type(e, i), own = a->type;
        if (want == -2)
            want = e->type;
        else if (want == -1)   /* a conversion's literal argument: number, as(lit, T): T */
            want = e->u.fn.fn == RFX_FN_AS ? e->u.fn.cast : -1;
        check_typed(cc, a, want);
        int t = a->type;
        if (t < 0)
            continue;
        if (fn_arg_type(e, i) >= 0 && tprim(p, t) != tprim(p, fn_arg_type(e, i)))
            rfx_diag_error(cc->s->d, a->loc, "type mismatch: argument %d of '%s' is %s, got %s", i + 1, name,
                           rfx_prim_name(tprim(p, fn_arg_type(e, i))), rfx_prim_name(tprim(p, t)));
        else if (e->u.fn.fn == RFX_FN_TO_DATE && a->kind == RFX_E_STRING &&
                 !rfx_date_parse(rfx_symtab_str(p->syms, a->u.sym), rfx_symtab_len(p->syms, a->u.sym), &(uint32_t){0}))
            rfx_diag_error(cc->s->d, a->loc, "\"%s\" is not a date (YYYY-MM-DD)", rfx_symtab_str(p->syms, a->u.sym));
        else if (e->u.fn.fn == RFX_FN_RANGE && tprim(p, t) == RFX_SYMBOL)
            rfx_diag_error(cc->s->d, a->loc, "type mismatch: range over symbols");
        else if (e->u.fn.fn == RFX_FN_RANGE && e->type >= 0 && own >= 0 && tprim(p, own) != tprim(p, e->type))
            rfx_diag_error(cc->s->d, a->loc, "type mismatch: range's arguments are %s and %s",
                           rfx_prim_name(tprim(p, e->type)), rfx_prim_name(tprim(p, own)));
        else if (e->u.fn.fn == RFX_FN_AS && e->u.fn.cast >= 0 &&
                 (tprim(p, t) == RFX_SYMBOL) != (tprim(p, e->u.fn.cast) == RFX_SYMBOL))
            rfx_diag_error(cc->s->d, e->loc,
                           "as(...) between a symbol and a %s is not supported (a symbol's number is rfx's own)",
                           rfx_prim_name(tprim(p, tprim(p, t) == RFX_SYMBOL ? e->u.fn.cast : t)));
    }
}

/* Types every node of e (integer literals as `want` says, else as the rest of e says, else
 * number) and checks it, in two walks. */
static void check_expr(clause_ctx *cc, rfx_expr *e, int want)
{
    type_nodes(cc, e);
    check_typed(cc, e, want);
}

static void check_conj_types(clause_ctx *cc, rfx_conj *cj)
{
    rfx_program *p = cc->s->p;
    for (int i = 0; i < cj->nlits; i++) {
        rfx_lit *l = cj->lits[i];
        if (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG)
            check_atom_types(cc, &l->atom);
        else if (l->kind == RFX_L_CMP) {
            int lt, rt;
            if (!typed_leaf(l->lhs) && typed_leaf(l->rhs)) {
                rt = rfx_sema_expr_type(cc, l->rhs, -1);
                lt = rfx_sema_expr_type(cc, l->lhs, rt);
            } else {
                lt = rfx_sema_expr_type(cc, l->lhs, -1);
                rt = rfx_sema_expr_type(cc, l->rhs, lt);
            }
            if (lt < 0 && rt >= 0)
                lt = rfx_sema_expr_type(cc, l->lhs, rt);
            check_expr(cc, l->lhs, rt >= 0 ? rt : lt);
            check_expr(cc, l->rhs, lt >= 0 ? lt : rt);
            lt = lt >= 0 ? rfx_sema_expr_type(cc, l->lhs, lt) : lt;   /* a float literal made float64 */
            rt = rt >= 0 ? rfx_sema_expr_type(cc, l->rhs, rt) : rt;
            if (lt >= 0 && rt >= 0 && !rfx_sema_types_agree(p, lt, rt))
                rfx_diag_error(cc->s->d, l->loc, "type mismatch: '%s' between '%s' and '%s'", rfx_cmpop_str(l->cmp),
                               p->types[lt].name, p->types[rt].name);
            else if (lt >= 0 && rt >= 0 && tprim(p, lt) != tprim(p, rt))
                rfx_diag_error(cc->s->d, l->loc, "type mismatch: '%s' between %s and %s",
                               rfx_cmpop_str(l->cmp), rfx_prim_name(tprim(p, lt)), rfx_prim_name(tprim(p, rt)));
            else if (lt >= 0 && (rfx_program_record_type(p, lt) >= 0 || rfx_program_adt_type(p, lt) >= 0) &&
                     l->cmp != RFX_EQ && l->cmp != RFX_NE)
                rfx_diag_error(cc->s->d, l->loc, "records are compared with = and != only");
        }
    }
}

/* ---- atoms: relation lookup and arity --------------------------------------------- */
static void resolve_atom(sema *s, rfx_atom *a)
{
    a->rel = rfx_program_find_rel(s->p, a->name);
    if (a->rel < 0) {
        rfx_diag_error(s->d, a->loc, "unknown relation '%s'", a->name);
        return;
    }
    rfx_relation *r = &s->p->rels[a->rel];
    if (r->arity != a->nargs) {
        rfx_diag_error(s->d, a->loc, "arity mismatch: '%s' has %d attribute%s, used with %d",
                       a->name, r->arity, r->arity == 1 ? "" : "s", a->nargs);
        a->rel = -1;
    }
}


static void resolve_conj(sema *s, rfx_conj *cj)
{
    for (int i = 0; i < cj->nlits; i++) {
        rfx_lit *l = cj->lits[i];
        if (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG) {
            resolve_atom(s, &l->atom);
            for (int a = 0; a < l->atom.nargs; a++)
                rfx_sema_resolve_expr(s, l->atom.args[a]);
        } else if (l->kind == RFX_L_CMP) {
            rfx_sema_resolve_expr(s, l->lhs);
            rfx_sema_resolve_expr(s, l->rhs);
        }
    }
}

/* Flattens an aggregate's body to one conjunction (disjunctions are not supported there). */
static void flatten_agg(sema *s, rfx_expr *e)
{
    if (!e->u.agg.body || e->u.agg.body->flat)
        return;
    dnf d = to_dnf(s, e->u.agg.body);
    if (d.n != 1) {
        rfx_diag_error(s->d, e->loc, "disjunction inside an aggregate body is not supported");
        e->u.agg.body = NULL;
        return;
    }
    rfx_body *b = salloc(s, sizeof *b);
    rfx_conj *cj = salloc(s, sizeof *cj);
    if (!b || !cj) {
        e->u.agg.body = NULL;
        return;
    }
    *cj = d.c[0];
    b->kind = RFX_B_AND;
    b->flat = cj;
    e->u.agg.body = b;
}

/* `@f(...)`: the `.functor` it calls, the number of its arguments. */
static void resolve_user_functor(sema *s, rfx_expr *e)
{
    rfx_program *p = s->p;
    for (int i = 0; i < p->nfunctors; i++) {
        rfx_functor_decl *f = &p->functors[i];
        if (strcmp(f->name, e->u.fn.cast_name) != 0)
            continue;
        if (e->u.fn.nargs != f->nargs) {
            rfx_diag_error(s->d, e->loc, "'@%s' takes %d argument%s, given %d", f->name, f->nargs,
                           f->nargs == 1 ? "" : "s", e->u.fn.nargs);
            return;
        }
        e->u.fn.field = i;
        e->u.fn.cast = f->ret_type;
        e->u.fn.arg_types = f->arg_types;
        f->used = true;
        return;
    }
    rfx_diag_error(s->d, e->loc, "unknown functor '@%s' (declare it with .functor)", e->u.fn.cast_name);
}

void rfx_sema_resolve_expr(sema *s, rfx_expr *e)
{
    if (e->kind == RFX_E_AGG)
        flatten_agg(s, e);
    if (e->kind == RFX_E_AGG && e->u.agg.body)
        resolve_conj(s, rfx_agg_conj(e));
    if (e->kind == RFX_E_FN && e->u.fn.fn == RFX_FN_RECORD && e->u.fn.cast_name && e->u.fn.field < 0)
        rfx_sema_resolve_constructor(s, e);
    if (e->kind == RFX_E_FN && e->u.fn.fn == RFX_FN_USER && e->u.fn.field < 0)
        resolve_user_functor(s, e);
    if (e->kind == RFX_E_FN && e->u.fn.fn == RFX_FN_AS) {
        e->u.fn.cast = rfx_sema_type(s, e->u.fn.cast_name);
        if (e->u.fn.cast < 0)
            rfx_diag_error(s->d, e->loc, "unknown type '%s' in as(...)", e->u.fn.cast_name);
    }
    for (int i = 0; i < rfx_expr_nkids(e); i++)
        rfx_sema_resolve_expr(s, rfx_expr_kid(e, i));
}

/* ---- safety -------------------------------------------------------------------------- */
typedef struct safety {
    clause_ctx *cc;
    bool *bound;               /* per variable */
} safety;

static bool expr_vars_bound(safety *sf, const rfx_expr *e)
{
    switch (e->kind) {
    case RFX_E_VAR:
        return sf->bound[e->u.v.var];
    case RFX_E_NEG: case RFX_E_BINOP: case RFX_E_FN:
        for (int i = 0; i < rfx_expr_nkids(e); i++)
            if (!expr_vars_bound(sf, rfx_expr_kid(e, i)))
                return false;
        return true;
    default:
        return true;       /* constants; aggregates are checked on their own */
    }
}

static void report_unbound(safety *sf, const rfx_expr *e, const char *where)
{
    switch (e->kind) {
    case RFX_E_VAR:
        if (!sf->bound[e->u.v.var]) {
            rfx_diag_error(sf->cc->s->d, e->loc, "ungrounded variable '%s'%s", e->u.v.name, where);
            sf->bound[e->u.v.var] = true;   /* report each variable once */
        }
        break;
    case RFX_E_ANON:
        rfx_diag_error(sf->cc->s->d, e->loc, "underscore '_' is not allowed %s", where[0] ? where + 1 : "here");
        break;
    case RFX_E_NEG: case RFX_E_BINOP: case RFX_E_FN:
        for (int i = 0; i < rfx_expr_nkids(e); i++)
            report_unbound(sf, rfx_expr_kid(e, i), where);
        break;
    default:
        break;
    }
}

static void check_conj_safety(clause_ctx *cc, rfx_conj *cj, bool *bound, bool outer);

static void bind_atom_vars(bool *bound, const rfx_atom *a)
{
    for (int i = 0; i < a->nargs; i++)
        if (a->args[i]->kind == RFX_E_VAR)
            bound[a->args[i]->u.v.var] = true;
}

/* Safety of an aggregate: its body is range-restricted given what the enclosing scope
 * grounds (`outer`): a variable shared with it is injected there (scope_agg), its values
 * the enclosing tuples' (`sum y : { r(y), y < k }` with k bound outside). */
static void check_agg_safety(clause_ctx *cc, rfx_expr *e, const bool *outer)
{
    for (int i = 0; i < rfx_expr_nkids(e); i++)
        check_agg_safety(cc, rfx_expr_kid(e, i), outer);
    if (e->kind != RFX_E_AGG || !e->u.agg.body)
        return;
    int nv = cc->c->nvars;
    bool *inner = calloc((size_t)nv + 1, 1);
    if (!inner) {
        cc->s->ctx->oom = true;
        return;
    }
    memcpy(inner, outer, (size_t)nv);
    check_conj_safety(cc, rfx_agg_conj(e), inner, false);
    if (e->u.agg.target) {
        safety sf = {cc, inner};
        report_unbound(&sf, e->u.agg.target, " in aggregate target");
    }
    free(inner);
}

/* min, max and mean have no value over nothing; inside a negated atom Soufflé then holds
 * the negation, where rfx would drop the tuple: refused rather than answered otherwise. */
static void refuse_empty_aggregates(clause_ctx *cc, const rfx_expr *e)
{
    if (e->kind == RFX_E_AGG && e->u.agg.fn != RFX_AGG_COUNT && e->u.agg.fn != RFX_AGG_SUM) {
        rfx_diag_error(cc->s->d, e->loc, "%s in a negated atom's argument is not supported (count and sum are)",
                       rfx_aggfn_str(e->u.agg.fn));
        return;
    }
    for (int i = 0; e->kind != RFX_E_AGG && i < rfx_expr_nkids(e); i++)
        refuse_empty_aggregates(cc, rfx_expr_kid(e, i));
}

static void check_conj_safety(clause_ctx *cc, rfx_conj *cj, bool *bound, bool outer)
{
    (void)outer;
    safety sf = {cc, bound};
    for (int i = 0; i < cj->nlits; i++)
        if (cj->lits[i]->kind == RFX_L_ATOM)
            bind_atom_vars(bound, &cj->lits[i]->atom);
    /* `v = expr` binds v once expr is bound; aggregates bind their result */
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < cj->nlits; i++) {
            rfx_lit *l = cj->lits[i];
            if (l->kind != RFX_L_CMP || l->cmp != RFX_EQ)
                continue;
            if (l->lhs->kind == RFX_E_VAR && !bound[l->lhs->u.v.var] && expr_vars_bound(&sf, l->rhs)) {
                bound[l->lhs->u.v.var] = true;
                changed = true;
            } else if (l->rhs->kind == RFX_E_VAR && !bound[l->rhs->u.v.var] && expr_vars_bound(&sf, l->lhs)) {
                bound[l->rhs->u.v.var] = true;
                changed = true;
            }
        }
    }
    for (int i = 0; i < cj->nlits; i++) {
        rfx_lit *l = cj->lits[i];
        if (l->kind == RFX_L_NEG) {
            for (int a = 0; a < l->atom.nargs; a++)
                if (l->atom.args[a]->kind != RFX_E_ANON) {
                    report_unbound(&sf, l->atom.args[a], " in negated atom");
                    refuse_empty_aggregates(cc, l->atom.args[a]);
                }
        } else if (l->kind == RFX_L_CMP) {
            report_unbound(&sf, l->lhs, " in comparison");
            report_unbound(&sf, l->rhs, " in comparison");
            check_agg_safety(cc, l->lhs, bound);
            check_agg_safety(cc, l->rhs, bound);
        } else if (l->kind == RFX_L_ATOM) {
            for (int a = 0; a < l->atom.nargs; a++) {
                rfx_expr *x = l->atom.args[a];
                if (x->kind != RFX_E_VAR && x->kind != RFX_E_ANON) {
                    report_unbound(&sf, x, " in atom argument");
                    check_agg_safety(cc, x, bound);
                }
            }
        }
    }
}

/* ---- clauses --------------------------------------------------------------------- */
static bool is_constant(const rfx_expr *e)
{
    switch (e->kind) {
    case RFX_E_INT: case RFX_E_UNSIGNED: case RFX_E_FLOAT: case RFX_E_STRING:
        return true;
    case RFX_E_NEG: case RFX_E_BINOP:   /* a functor makes a rule of it, planned as any; so
                                          * does `"a" + "b"`, a concatenation of symbols */
        for (int i = 0; i < rfx_expr_nkids(e); i++)
            if (!is_constant(rfx_expr_kid(e, i)) || rfx_expr_kid(e, i)->kind == RFX_E_STRING)
                return false;
        return true;
    default:
        return false;
    }
}

/* Gives the variables of an arithmetic expression that have no type yet the type t its
 * context wants (every operator's operands are of its result's type). */
static void type_untyped(clause_ctx *cc, const rfx_expr *e, int t)
{
    switch (e->kind) {
    case RFX_E_VAR:
        if (cc->c->var_types[e->u.v.var] < 0)
            cc->c->var_types[e->u.v.var] = t;
        break;
    case RFX_E_NEG: type_untyped(cc, e->u.bin.lhs, t); break;
    case RFX_E_BINOP: type_untyped(cc, e->u.bin.lhs, t); type_untyped(cc, e->u.bin.rhs, t); break;
    case RFX_E_FN:   /* operands of the types the functor takes */
        if (e->u.fn.fn == RFX_FN_RECORD) {   /* a record's fields, of its type's */
            const int *ft;
            int nf = rfx_program_fields(cc->s->p, e->u.fn.cast_name ? e->u.fn.cast : t,
                                        e->u.fn.cast_name ? e->u.fn.field : -1, &ft);
            for (int i = 0; i < e->u.fn.nargs && i < nf; i++)
                type_untyped(cc, e->u.fn.args[i], ft[i]);
            break;
        }
        for (int i = 0; i < e->u.fn.nargs; i++) {
            int want = fn_arg_type(e, i);
            if (want != -1)
                type_untyped(cc, e->u.fn.args[i], want == -2 ? t : want);
        }
        break;
    default: break;
    }
}

bool rfx_sema_add_lit(sema *s, rfx_conj *cj, rfx_lit *l)
{
    rfx_lit **lits = salloc(s, sizeof(rfx_lit *) * (size_t)(cj->nlits + 1));
    if (!lits)
        return false;
    rfx_memcpy(lits, cj->lits, sizeof(rfx_lit *) * (size_t)cj->nlits);
    lits[cj->nlits++] = l;
    cj->lits = lits;
    return true;
}

/* A disjunct whose body holds its own head (`a(x) :- a(x), b(x).`) derives nothing: Soufflé
 * drops such clauses once its checks have passed (MinimiseProgram), before it orders the
 * strata it evaluates, which changes what subsumption and choice see; rfx drops them at the
 * same point. Subsumptive clauses hold their head by design and stay. Returns whether any
 * was dropped. */
static bool drop_redundant_disjuncts(rfx_clause *c)
{
    if (c->subsumptive || c->is_fact || c->head.rel < 0)
        return false;
    int kept = 0;
    for (int d = 0; d < c->nconj; d++) {
        const rfx_conj *cj = &c->conj[d];
        bool redundant = false;
        for (int i = 0; i < cj->nlits && !redundant; i++) {
            const rfx_lit *l = cj->lits[i];
            redundant = l->kind == RFX_L_ATOM && l->atom.rel == c->head.rel && l->atom.nargs == c->head.nargs;
            for (int a = 0; redundant && a < c->head.nargs; a++)
                redundant = rfx_expr_alike(l->atom.args[a], c->head.args[a]);
        }
        if (!redundant)
            c->conj[kept++] = c->conj[d];
    }
    bool dropped = kept < c->nconj;
    c->nconj = kept;
    return dropped;
}

static void check_clause(sema *s, rfx_clause *c)
{
    resolve_atom(s, &c->head);
    if (c->subsumptive)   /* after the head's relation is known: the rewrite asks its column types */
        rfx_sema_tighten_subsumption(s, c);
    dnf d = c->body ? to_dnf(s, c->body) : (dnf){0, NULL};
    if (!c->body) {
        d.n = 1;
        d.c = salloc(s, sizeof(rfx_conj));
        if (!d.c)
            return;
    }
    for (int i = 1; i < d.n; i++)   /* each disjunct its own literals: later passes rewrite them */
        own_literals(s, &d.c[i]);
    c->nconj = d.n;
    c->conj = d.c;
    for (int i = 0; i < c->nconj; i++) {
        int atoms = 0;
        for (int l = 0; l < c->conj[i].nlits; l++)
            atoms += c->conj[i].lits[l]->kind == RFX_L_ATOM || c->conj[i].lits[l]->kind == RFX_L_NEG;
        if (atoms > RFX_MAX_RULE_ATOMS) {
            rfx_diag_error(s->d, c->loc, "rule has a body of %d atoms; at most %d are supported", atoms,
                           RFX_MAX_RULE_ATOMS);
            c->nconj = 0;   /* nothing of it is checked or planned */
            return;
        }
    }
    for (int i = 0; i < c->nconj; i++)
        resolve_conj(s, &c->conj[i]);
    for (int a = 0; a < c->head.nargs; a++)
        rfx_sema_resolve_expr(s, c->head.args[a]);
    clause_ctx cc = {s, c, {0}, NULL, false};
    for (int a = 0; a < c->head.nargs; a++)
        number_expr(&cc, c->head.args[a]);
    for (int i = 0; i < c->nconj; i++)
        number_conj(&cc, &c->conj[i]);
    /* lattice arguments read through Glb, as Soufflé rewrites them before anything else (a
     * record written there is a value to meet, not fields to match) */
    rfx_sema_rewrite_lattices(&cc);
    /* records first: a variable inside a record of an atom is grounded by the atom, which
     * the aggregates' scopes ask */
    rfx_sema_lift_records(&cc);
    for (int i = 0; i < c->nconj; i++)
        scope_clause_aggs(&cc, &c->conj[i], &c->head);
    rfx_sema_lift_ranges(&cc);
    c->nvars = cc.names.n;
    c->var_names = (const char **)cc.names.items;
    if (c->nvars > RFX_MAX_RULE_VARS) {
        rfx_diag_error(s->d, c->loc, "rule has %d variables; at most %d are supported", c->nvars, RFX_MAX_RULE_VARS);
        return;
    }
    c->var_types = salloc(s, sizeof(int) * (size_t)(c->nvars + 1));
    if (!c->var_types)
        return;
    for (int v = 0; v < c->nvars; v++)
        c->var_types[v] = -1;

    c->is_fact = !c->body;
    for (int a = 0; c->is_fact && a < c->head.nargs; a++)
        if (!is_constant(c->head.args[a]))
            c->is_fact = false;

    /* typing: infer to a fixpoint from the body, then from head arguments for variables
     * still untyped (`y = min(10, 6)` with y an unsigned head column), then from integer
     * literals (numbers); then check every use */
    for (int pass = 0; pass < 3; pass++) {
        cc.literals_type = pass == 2;
        for (bool changed = true; changed;) {
            changed = false;
            for (int i = 0; i < c->nconj; i++)
                infer_conj(&cc, &c->conj[i], &changed);
            for (int a = 0; a < c->head.nargs; a++)
                infer_expr_aggs(&cc, c->head.args[a], &changed);
        }
        if (pass == 0 && c->head.rel >= 0)
            for (int a = 0; a < c->head.nargs && a < s->p->rels[c->head.rel].arity; a++)
                type_untyped(&cc, c->head.args[a], s->p->rels[c->head.rel].attrs[a].type);
    }
    /* then records nothing types (`s = [x, y], s != [1, 2]`): a record type of their
     * fields' types, as Soufflé accepts them, and inference again */
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < c->nconj; i++)
            rfx_sema_type_anonymous_records(&cc, &c->conj[i], &changed);
        for (int i = 0; changed && i < c->nconj; i++)
            infer_conj(&cc, &c->conj[i], &changed);
    }
    for (int i = 0; i < c->nconj; i++)
        check_conj_types(&cc, &c->conj[i]);
    check_atom_types(&cc, &c->head);
    for (int i = 0; i < c->nconj; i++)
        rfx_sema_check_subtypes(s, c, &c->conj[i]);

    /* safety, per disjunct */
    for (int i = 0; i < c->nconj; i++) {
        bool *bound = calloc((size_t)c->nvars + 1, 1);
        if (!bound) {
            s->ctx->oom = true;
            return;
        }
        check_conj_safety(&cc, &c->conj[i], bound, true);
        safety sf = {&cc, bound};
        for (int a = 0; a < c->head.nargs; a++) {
            report_unbound(&sf, c->head.args[a], " in head");
            check_agg_safety(&cc, c->head.args[a], bound);
        }
        free(bound);
    }
    if (c->head.rel >= 0 && !c->is_fact)
        s->p->rels[c->head.rel].has_rules = true;
}

/* `.plan`: Soufflé refuses a plan for a rule that is not recursive, for a version the rule
 * does not have (one per recursive atom), and an order that is not one of its atoms'. */
static void check_plans(sema *s)
{
    const rfx_program *p = s->p;
    for (int ci = 0; ci < p->nclauses; ci++) {
        const rfx_clause *c = &p->clauses[ci];
        if (!c->nplans || c->head.rel < 0)
            continue;
        int stratum = p->rels[c->head.rel].stratum;
        bool recursive = false;
        for (int d = 0; d < c->nconj; d++) {
            const rfx_conj *cj = &c->conj[d];
            int natoms = 0, nrec = 0;
            for (int i = 0; i < cj->nlits; i++)
                if (cj->lits[i]->kind == RFX_L_ATOM) {
                    natoms++;
                    nrec += cj->lits[i]->atom.rel >= 0 && p->rels[cj->lits[i]->atom.rel].stratum == stratum;
                }
            recursive |= nrec > 0;
            for (int k = 0; nrec && k < c->nplans; k++) {
                const rfx_plan_order *o = &c->plans[k];
                if (o->version < 0 || o->version >= nrec) {
                    rfx_diag_error(s->d, o->loc, "'.plan' for version %d: this rule has versions 0 to %d (one per "
                                   "recursive atom)", o->version, nrec - 1);
                    continue;
                }
                bool perm = o->n == natoms;
                for (int a = 0; perm && a < o->n; a++) {
                    perm = o->atoms[a] >= 1 && o->atoms[a] <= natoms;
                    for (int b = 0; perm && b < a; b++)
                        perm = o->atoms[b] != o->atoms[a];
                }
                if (!perm)
                    rfx_diag_error(s->d, o->loc, "'.plan' for version %d: expected an order of the rule's %d atoms "
                                   "(each of 1 to %d once)", o->version, natoms, natoms);
            }
        }
        if (!recursive)
            rfx_diag_error(s->d, c->plans[0].loc, "'.plan' for a rule that is not recursive (Soufflé refuses it "
                           "too: such a rule is evaluated once, in the order rfx chooses)");
    }
}

/* Subsumptive clauses compare two tuples of one relation, whose representation (if one is
 * given) is btree_delete, as Soufflé requires. */
static void check_subsumption(sema *s)
{
    rfx_program *p = s->p;
    for (int ci = 0; ci < p->nclauses; ci++) {
        const rfx_clause *c = &p->clauses[ci];
        if (!c->subsumptive || c->head.rel < 0 || !c->nconj)
            continue;
        rfx_relation *r = &p->rels[c->head.rel];
        s->d->instance = c->instance;
        for (int i = 0; i < c->conj[0].nlits; i++) {
            const rfx_lit *l = c->conj[0].lits[i];
            if (l->role == RFX_ROLE_DOMINATING && l->atom.rel != c->head.rel && l->atom.rel >= 0)
                rfx_diag_error(s->d, l->loc, "subsumption compares tuples of one relation: '%s' and '%s'", r->name,
                               p->rels[l->atom.rel].name);
        }
        if (r->repr && strcmp(r->repr, "btree_delete") != 0 && !r->subsumed)
            rfx_diag_error(s->d, r->loc, "'%s' has subsumptive rules: its representation must be btree_delete, not %s",
                           r->name, r->repr);
        r->subsumed = true;
        s->d->instance = NULL;
    }
}

void rfx_sema_run(rfx_program *p, rfx_parse_ctx *ctx)
{
    sema s = {p, ctx, ctx->diag, 0, 0};
    rfx_sema_check_pragmas(&s);
    rfx_sema_check_types(&s);
    if (ctx->oom)
        return;
    rfx_sema_check_decls(&s);
    rfx_sema_check_functors(&s);
    rfx_sema_check_lattices(&s);
    if (ctx->oom)
        return;
    p->nclauses = ctx->clauses.n;
    p->clauses = salloc(&s, sizeof(rfx_clause) * (size_t)(p->nclauses + 1));
    if (!p->clauses)
        return;
    for (int i = 0; i < p->nclauses; i++) {
        p->clauses[i] = *(rfx_clause *)ctx->clauses.items[i];
        s.d->instance = p->clauses[i].instance;
        check_clause(&s, &p->clauses[i]);
        s.d->instance = NULL;
        if (ctx->oom)
            return;
    }
    check_subsumption(&s);
    if (s.d->errors == 0)
        rfx_sema_stratify(&s);
    if (s.d->errors == 0)   /* on the program as written, as Soufflé checks plans */
        check_plans(&s);
    bool dropped = false;
    for (int i = 0; s.d->errors == 0 && i < p->nclauses; i++)
        dropped |= drop_redundant_disjuncts(&p->clauses[i]);
    if (s.d->errors == 0 && rfx_sema_split_disconnected(&s))
        dropped = true;
    if (dropped)   /* the strata evaluated are those of what is left */
        rfx_sema_stratify(&s);
    if (s.d->errors == 0 && !ctx->no_demand && rfx_sema_push_demand(&s))   /* it reads the strata */
        rfx_sema_stratify(&s);
    if (s.d->errors == 0)
        rfx_sema_widen(&s);
}
