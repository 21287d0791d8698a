/* sema_widen.c: the checker's last rewrite, after typing: 64-bit values (number64,
 * unsigned64, float64) as pairs of 32-bit words, which is how relations store them.
 *
 * A relation's 64-bit attribute becomes two: the value's high word (typed as the attribute
 * was, so readers and writers of facts know the value's kind) and its low word (`$word`).
 * A 64-bit variable becomes two word variables, its own index holding the high word; where
 * an expression reads the value, `$pair(hi, lo)` stands in its place. An atom's argument
 * of a 64-bit column becomes the two words of what was written there (a constant's words,
 * or `$hi(e)` and `$lo(e)` of an expression), and `a = b` of 64-bit values the equalities of
 * their words, so that joins, bindings and selections over words are those over values and
 * the planner needs to know nothing of widths. Aggregates over 64-bit values keep their
 * type: the planner gives their results two columns. */
#include "sema.h"
#include "rx_ops.h"

#include <stdio.h>
#include <string.h>

typedef struct widen {
    sema *s;
    rfx_program *p;
    const rfx_clause *c;
    int *lo;                   /* per variable of the clause: its low word's variable, or -1 */
    int *logical;              /* per relation: its arity as declared */
} widen;

static bool wide(const rfx_program *p, int t)
{
    return t >= 0 && t < p->ntypes && RFX_PRIM_WIDE(p->types[t].prim);
}

static rfx_expr *node(widen *w, rfx_expr_kind kind, int type, rfx_loc loc)
{
    rfx_expr *e = salloc(w->s, sizeof *e);
    if (e)
        *e = (rfx_expr){.kind = kind, .loc = loc, .type = type};
    return e;
}

static rfx_expr *word_var(widen *w, int v, rfx_loc loc)
{
    rfx_expr *e = node(w, RFX_E_VAR, RFX_WORD, loc);
    if (e) {
        e->u.v.name = w->c->var_names[v];
        e->u.v.var = v;
    }
    return e;
}

static rfx_expr *word_const(widen *w, uint32_t bits, rfx_loc loc)
{
    rfx_expr *e = node(w, RFX_E_UNSIGNED, RFX_WORD, loc);
    if (e)
        e->u.ival = bits;
    return e;
}

static rfx_expr *word_fn(widen *w, rfx_functor fn, int type, rfx_expr **args, int nargs, rfx_loc loc)
{
    rfx_expr *e = node(w, RFX_E_FN, type, loc);
    rfx_expr **a = salloc(w->s, sizeof *a * (size_t)nargs);
    if (!e || !a)
        return e;
    memcpy(a, args, sizeof *a * (size_t)nargs);
    e->u.fn.fn = fn;
    e->u.fn.nargs = nargs;
    e->u.fn.args = a;
    e->u.fn.cast = e->u.fn.field = -1;
    e->depth = args[0]->depth + 1;
    return e;
}

/* A literal's 64 bits as a column of type t stores them (a decimal's count of 10^-scale at
 * t's scale); false for anything else. */
static bool literal_bits(const rfx_program *p, const rfx_expr *e, int t, uint64_t *bits)
{
    double d;
    rfx_prim prim = p->types[t].prim;
    if (prim == RFX_DECIMAL && (e->kind == RFX_E_INT || e->kind == RFX_E_UNSIGNED || e->kind == RFX_E_FLOAT)) {
        bool f = e->kind == RFX_E_FLOAT;
        *bits = rfx_convert_scaled(f ? RFX_FLOAT64 : RFX_NUMBER64, 0, RFX_NUMBER64, p->types[t].scale,
                                   f ? rfx_of_f64(e->u.fval) : (uint64_t)e->u.ival);
        return true;
    }
    if (e->kind == RFX_E_INT || e->kind == RFX_E_UNSIGNED) {
        if (prim != RFX_FLOAT64) {
            *bits = (uint64_t)e->u.ival;
            return true;
        }
        d = (double)e->u.ival;
    } else if (e->kind == RFX_E_FLOAT)
        d = e->u.fval;
    else
        return false;
    memcpy(bits, &d, 8);
    return true;
}

static void widen_conj(widen *w, rfx_conj *cj);

/* Unsupported uses of 64-bit values, with the place to point at. */
static void refuse(widen *w, const rfx_expr *e)
{
    if (e->kind != RFX_E_FN)
        return;
    rfx_functor fn = e->u.fn.fn;
    if (fn == RFX_FN_RANGE && wide(w->p, e->type))
        rfx_diag_error(w->s->d, e->loc, "range() over 64-bit values is not supported yet");
    if (fn == RFX_FN_AS || fn == RFX_FN_TO_NUMBER || fn == RFX_FN_TO_UNSIGNED || fn == RFX_FN_TO_FLOAT ||
        fn == RFX_FN_RANGE || fn >= RFX_FN_PAIR)
        return;
    for (int i = 0; i < e->u.fn.nargs; i++)
        if (wide(w->p, e->u.fn.args[i]->type)) {
            rfx_diag_error(w->s->d, e->u.fn.args[i]->loc, "%s of a 64-bit value is not supported yet%s",
                           fn == RFX_FN_RECORD ? "a record field" : fn == RFX_FN_USER ? "a user-defined functor's argument"
                                                                                     : rfx_functor_name(fn),
                           fn == RFX_FN_TO_STRING ? " (convert it with to_number first where it fits)" : "");
            return;
        }
}

/* e with every 64-bit variable read as $pair(hi, lo) (in place: e may be shared by the
 * conjunctions of a disjunctive body, and a second visit finds nothing left to do). */
static void widen_expr(widen *w, rfx_expr *e)
{
    if (e->kind == RFX_E_VAR && e->u.v.var >= 0 && w->lo[e->u.v.var] >= 0 && e->type != RFX_WORD) {
        rfx_expr *pair[2] = {word_var(w, e->u.v.var, e->loc), word_var(w, w->lo[e->u.v.var], e->loc)};
        if (!pair[0] || !pair[1])
            return;
        rfx_expr *f = word_fn(w, RFX_FN_PAIR, e->type, pair, 2, e->loc);
        if (f)
            *e = *f;
        return;
    }
    if (e->kind == RFX_E_AGG) {
        if (e->u.agg.target)
            widen_expr(w, e->u.agg.target);
        if (e->u.agg.body)
            widen_conj(w, rfx_agg_conj(e));
        return;
    }
    refuse(w, e);
    for (int i = 0; i < rfx_expr_nkids(e); i++)
        widen_expr(w, rfx_expr_kid(e, i));
}

/* Word i (0 high, 1 low) of a 64-bit expression already widened, as a value of type t. */
static rfx_expr *half(widen *w, rfx_expr *e, int t, int i)
{
    uint64_t bits;
    if (e->kind == RFX_E_FN && e->u.fn.fn == RFX_FN_PAIR)
        return e->u.fn.args[i];
    if (e->kind == RFX_E_ANON)
        return e;
    if (literal_bits(w->p, e, t, &bits))
        return word_const(w, i ? (uint32_t)bits : (uint32_t)(bits >> 32), e->loc);
    return word_fn(w, i ? RFX_FN_LO : RFX_FN_HI, RFX_WORD, &e, 1, e->loc);
}

static void widen_atom(widen *w, rfx_atom *a)
{
    if (a->rel < 0)
        return;
    const rfx_relation *r = &w->p->rels[a->rel];
    if (a->nargs != w->logical[a->rel])   /* a shared atom, done already */
        return;
    int n = 0;
    for (int k = 0; k < a->nargs; k++)
        n += wide(w->p, r->attrs[k].type) ? 2 : 1;
    rfx_expr **args = n == a->nargs ? a->args : salloc(w->s, sizeof *args * (size_t)n);
    if (!args)
        return;
    for (int k = 0, j = 0; k < a->nargs; k++) {
        rfx_expr *x = a->args[k];
        widen_expr(w, x);
        int t = r->attrs[k].type;
        const rfx_type *xt = x->type >= 0 ? &w->p->types[x->type] : NULL;
        if (xt && xt->prim == RFX_DECIMAL && xt->scale < w->p->types[t].scale && x->kind != RFX_E_FLOAT &&
            x->kind != RFX_E_INT && x->kind != RFX_E_NEG) {   /* a decimal of fewer places: counted at t's */
            rfx_expr *as = word_fn(w, RFX_FN_AS, t, &x, 1, x->loc);
            if (!as)
                return;
            as->u.fn.cast = t;
            x = as;
        }
        if (n != a->nargs && wide(w->p, t)) {
            args[j++] = half(w, x, t, 0);
            args[j++] = half(w, x, t, 1);
        } else if (n != a->nargs)
            args[j++] = x;
    }
    a->args = args;
    a->nargs = n;
}

/* Whether `a = b` is one of words: 64-bit values of one representation (decimals of
 * different scales are compared by value, the planner rescaling one). */
static bool split_equality(const widen *w, const rfx_lit *l)
{
    const rfx_program *p = w->p;
    if (l->kind != RFX_L_CMP || l->cmp != RFX_EQ)
        return false;
    int a = l->lhs->type, b = l->rhs->type;
    if (!wide(p, a) && !wide(p, b))
        return false;
    return !(a >= 0 && b >= 0 && p->types[a].prim == RFX_DECIMAL && p->types[b].prim == RFX_DECIMAL &&
             p->types[a].scale != p->types[b].scale);
}

static void widen_conj(widen *w, rfx_conj *cj)
{
    int n = cj->nlits;
    for (int i = 0; i < cj->nlits; i++)
        n += split_equality(w, cj->lits[i]);
    rfx_lit **lits = n == cj->nlits ? cj->lits : salloc(w->s, sizeof *lits * (size_t)n);
    if (!lits)
        return;
    int j = 0;
    for (int i = 0; i < cj->nlits; i++) {
        rfx_lit *l = cj->lits[i];
        if (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG) {
            widen_atom(w, &l->atom);
            lits[j++] = l;
            continue;
        }
        if (l->kind != RFX_L_CMP) {
            lits[j++] = l;
            continue;
        }
        widen_expr(w, l->lhs);
        widen_expr(w, l->rhs);
        if (n == cj->nlits || !split_equality(w, l)) {
            lits[j++] = l;
            continue;
        }
        /* `a = b` of 64-bit values: their high words equal, and their low words */
        for (int h = 0; h < 2; h++) {
            rfx_lit *x = salloc(w->s, sizeof *x);
            if (!x)
                return;
            *x = *l;
            x->lhs = half(w, l->lhs, l->lhs->type, h);
            x->rhs = half(w, l->rhs, l->rhs->type, h);
            lits[j++] = x;
        }
    }
    cj->lits = lits;
    cj->nlits = j;
}

static void widen_clause(widen *w, rfx_clause *c)
{
    int nwide = 0;
    for (int v = 0; v < c->nvars; v++)
        nwide += wide(w->p, c->var_types[v]);
    int nv = c->nvars + nwide;
    const char **names = nwide ? salloc(w->s, sizeof *names * (size_t)(nv + 1)) : c->var_names;
    int *types = nwide ? salloc(w->s, sizeof *types * (size_t)(nv + 1)) : c->var_types;
    w->lo = salloc(w->s, sizeof *w->lo * (size_t)(nv + 1));
    if ((nwide && (!names || !types)) || !w->lo)
        return;
    if (nwide) {
        memcpy(names, c->var_names, sizeof *names * (size_t)c->nvars);
        memcpy(types, c->var_types, sizeof *types * (size_t)c->nvars);
    }
    for (int v = 0, k = c->nvars; v < c->nvars; v++) {
        w->lo[v] = -1;
        if (!wide(w->p, c->var_types[v]))
            continue;
        size_t len = strlen(c->var_names[v]) + 4;
        char *name = salloc(w->s, len);
        if (!name)
            return;
        snprintf(name, len, "%s$lo", c->var_names[v]);
        names[k] = name;
        types[k] = RFX_WORD;
        w->lo[k] = -1;
        w->lo[v] = k++;
    }
    c->var_names = names;
    c->var_types = types;
    c->nvars = nv;
    w->c = c;
    widen_atom(w, &c->head);
    for (int k = 0; k < c->nconj; k++)
        widen_conj(w, &c->conj[k]);
    for (int v = 0; v < nv; v++)   /* every variable holds a word now */
        if (w->lo[v] >= 0)
            types[v] = RFX_WORD;
}

/* What 64-bit values cannot be yet, said where declared. */
static void refuse_decls(widen *w)
{
    rfx_program *p = w->p;
    for (int t = RFX_NPRIMS; t < p->ntypes; t++)
        for (int f = 0; f < p->types[t].nfields; f++)
            if (wide(p, p->types[t].fields[f]))
                rfx_diag_error(w->s->d, p->types[t].loc, "record field '%s' of '%s': 64-bit record fields are not "
                               "supported yet", p->types[t].field_names[f], rfx_sema_type_shown(p, t));
    for (int i = 0; i < p->nfunctors; i++) {
        const rfx_functor_decl *f = &p->functors[i];
        bool any = wide(p, f->ret_type);
        for (int k = 0; k < f->nargs; k++)
            any |= wide(p, f->arg_types[k]);
        if (any)
            rfx_diag_error(w->s->d, f->loc, "functor '%s': 64-bit arguments and results of user-defined functors "
                           "are not supported yet", f->name);
    }
    for (int i = 0; i < p->nrels; i++) {
        const rfx_relation *r = &p->rels[i];
        for (int k = 0; k < r->arity; k++) {
            if (!wide(p, r->attrs[k].type))
                continue;
            const char *what = rfx_relation_is_eqrel(r) ? "an eqrel" : r->attrs[k].lattice ? "a lattice attribute"
                             : r->nchoice ? "a relation with a choice-domain" : NULL;
            if (what) {
                rfx_diag_error(w->s->d, r->loc, "attribute '%s' of '%s': 64-bit values in %s are not supported yet",
                               r->attrs[k].name, r->name, what);
                break;
            }
        }
    }
}

/* The relations' 64-bit attributes as two columns each: the high word, named and typed
 * as declared, then the low word. */
static void widen_relations(widen *w)
{
    rfx_program *p = w->p;
    for (int i = 0; i < p->nrels; i++) {
        rfx_relation *r = &p->rels[i];
        int n = r->arity;
        for (int k = 0; k < r->arity; k++)
            n += wide(p, r->attrs[k].type);
        if (n == r->arity)
            continue;
        if (n > RFX_MAX_ARITY) {
            rfx_diag_error(w->s->d, r->loc, "'%s' takes %d columns, its 64-bit attributes two each (at most %d)",
                           r->name, n, RFX_MAX_ARITY);
            continue;
        }
        rfx_attr *attrs = salloc(w->s, sizeof *attrs * (size_t)n);
        if (!attrs)
            return;
        for (int k = 0, j = 0; k < r->arity; k++) {
            attrs[j++] = r->attrs[k];
            if (!wide(p, r->attrs[k].type))
                continue;
            size_t len = strlen(r->attrs[k].name) + 4;
            char *name = salloc(w->s, len);
            if (!name)
                return;
            snprintf(name, len, "%s$lo", r->attrs[k].name);
            attrs[j++] = (rfx_attr){.name = name, .type = RFX_WORD};
        }
        r->attrs = attrs;
        r->arity = n;
    }
}

void rfx_sema_widen(sema *s)
{
    rfx_program *p = s->p;
    widen w = {.s = s, .p = p, .logical = salloc(s, sizeof(int) * (size_t)(p->nrels + 1))};
    if (!w.logical)
        return;
    refuse_decls(&w);
    for (int i = 0; i < p->nrels; i++)
        w.logical[i] = p->rels[i].arity;
    for (int i = 0; i < p->nclauses; i++) {
        s->d->instance = p->clauses[i].instance;
        widen_clause(&w, &p->clauses[i]);
        s->d->instance = NULL;
    }
    widen_relations(&w);
}
