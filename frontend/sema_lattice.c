/* sema_lattice.c: Soufflé 2.5's lattices. The declarations (`.lattice T<> {...}`) and the
 * relations with lattice attributes are checked here, and bodies are rewritten as Soufflé's
 * LatticeTransformer rewrites them, so that the rest of rfx sees plain constraints over the
 * user-defined functors Glb:
 * - a variable that only lattice arguments of positive atoms bind, written in several, is
 *   one fresh variable per place and the meet of them: `c(x, v) :- a(x, v), b(x, v).` is
 *   `c(x, v) :- a(x, v0), b(x, v1), v = @glb(v1, v0), v != Bottom.`;
 * - any other lattice argument (a constant, a variable grounded elsewhere) is a fresh variable
 *   w and `@glb(w, arg) = arg`: the value held is at least arg;
 * - a negated atom with a lattice argument c holds where the atom's key is absent or its value
 *   meets c in Bottom: the disjunct is split in two (`!a(x, _)`; `a(x, w), @glb(w, c) = Bottom`).
 * What a relation keeps (per key, the Lub of what enters it) is the plan's LATTICE command. */
#include "sema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- declarations -------------------------------------------------------------------- */
/* The functor index of `@f(_, _)`, or -1 (reported). */
static int lattice_functor(sema *s, const rfx_lattice_text *t, const char *op, const rfx_expr *e, int type,
                           rfx_loc loc)
{
    rfx_program *p = s->p;
    if (e->kind != RFX_E_FN || e->u.fn.fn != RFX_FN_USER) {
        rfx_diag_error(s->d, loc, "lattice operator %s must be a user-defined functor", op);
        return -1;
    }
    for (int i = 0; i < p->nfunctors; i++) {
        rfx_functor_decl *f = &p->functors[i];
        if (strcmp(f->name, e->u.fn.cast_name) != 0)
            continue;
        /* aliases are the type they name: a component's `.type Interval = I` is the I its
         * functors take */
        int u = rfx_sema_canon_type(p, type);
        if (f->nargs != 2 || rfx_sema_canon_type(p, f->ret_type) != u ||
            rfx_sema_canon_type(p, f->arg_types[0]) != u || rfx_sema_canon_type(p, f->arg_types[1]) != u) {
            rfx_diag_error(s->d, loc, "lattice operator %s: '@%s' must take two %s and return one", op, f->name,
                           t->type);
            return -1;
        }
        f->used = true;   /* its code is bound for every run */
        return i;
    }
    rfx_diag_error(s->d, e->loc, "unknown functor '@%s' (declare it with .functor)", e->u.fn.cast_name);
    return -1;
}

/* Whether e names no variable and no aggregate (a lattice's Bottom or Top). */
static bool constant(const rfx_expr *e)
{
    if (e->kind == RFX_E_VAR || e->kind == RFX_E_ANON || e->kind == RFX_E_AGG)
        return false;
    for (int i = 0; i < rfx_expr_nkids(e); i++)
        if (!constant(rfx_expr_kid(e, i)))
            return false;
    return true;
}

void rfx_sema_check_lattices(sema *s)
{
    rfx_program *p = s->p;
    int n = s->ctx->lattices.n;
    p->lattices = salloc(s, sizeof(rfx_lattice) * (size_t)(n + 1));
    if (!p->lattices)
        return;
    for (int i = 0; i < n; i++) {
        const rfx_lattice_text *t = s->ctx->lattices.items[i];
        int type = rfx_sema_find_type(p, t->type);
        if (type < 0) {
            rfx_diag_error(s->d, t->loc, "unknown type '%s' of a lattice", t->type);
            continue;
        }
        if (rfx_program_lattice(p, type) >= 0) {
            rfx_diag_error(s->d, t->loc, "lattice %s<> is declared twice", t->type);
            continue;
        }
        rfx_lattice *l = &p->lattices[p->nlattices];
        *l = (rfx_lattice){.type = type, .lub = -1, .glb = -1, .loc = t->loc};
        bool ok = true;
        for (int k = 0; t->ops && k + 2 < t->ops->n; k += 3) {
            const char *op = t->ops->items[k];
            rfx_expr *e = t->ops->items[k + 1];
            rfx_loc at = *(const rfx_loc *)t->ops->items[k + 2];
            if (strcmp(op, "Bottom") == 0 || strcmp(op, "Top") == 0)
                rfx_sema_resolve_expr(s, e);   /* `$B()`: its branch, before bodies copy it */
            if ((strcmp(op, "Bottom") == 0 || strcmp(op, "Top") == 0) && !constant(e)) {
                rfx_diag_error(s->d, at, "lattice %s<>: %s must be a constant", t->type, op);
                ok = false;
            }
            if (strcmp(op, "Bottom") == 0)
                l->bottom = e;
            else if (strcmp(op, "Top") == 0)
                l->top = e;
            else if (strcmp(op, "Lub") == 0)
                ok &= (l->lub = lattice_functor(s, t, op, e, type, at)) >= 0;
            else if (strcmp(op, "Glb") == 0)
                ok &= (l->glb = lattice_functor(s, t, op, e, type, at)) >= 0;
            else {
                rfx_diag_error(s->d, at, "unknown lattice operator '%s' (Bottom, Top, Lub or Glb)", op);
                ok = false;
            }
        }
        /* as Soufflé 2.5: only Lub is required; without Glb and Bottom bodies read lattice
         * arguments as written */
        if (!l->bottom && ok)
            rfx_diag_warning(s->d, t->loc, "lattice %s<> does not define Bottom", t->type);
        if (l->lub < 0 && ok)
            rfx_diag_error(s->d, t->loc, "lattice %s<> does not define Lub", t->type);
        if (l->glb < 0 && ok)
            rfx_diag_warning(s->d, t->loc, "lattice %s<> does not define Glb", t->type);
        if (l->lub >= 0 && ok)
            p->nlattices++;
    }
    for (int r = 0; r < p->nrels; r++) {
        rfx_relation *rel = &p->rels[r];
        for (int a = 0; a < rel->arity; a++) {
            if (!rel->attrs[a].lattice)
                continue;
            if (rfx_program_lattice(p, rel->attrs[a].type) < 0)
                rfx_diag_error(s->d, rel->loc, "no lattice is declared for type '%s' of attribute '%s' of '%s'",
                               p->types[rel->attrs[a].type].name, rel->attrs[a].name, rel->name);
            for (int b = a + 1; b < rel->arity; b++)
                if (!rel->attrs[b].lattice) {
                    rfx_diag_error(s->d, rel->loc, "lattice attribute '%s' of '%s' should be placed after all "
                                   "non-lattice attributes", rel->attrs[a].name, rel->name);
                    b = rel->arity;
                }
            if (rel->nchoice || rfx_relation_is_eqrel(rel))
                rfx_diag_error(s->d, rel->loc, "'%s' has a lattice attribute: it cannot be %s", rel->name,
                               rel->nchoice ? "given a choice-domain" : "an eqrel");
            break;
        }
    }
}

/* ---- the rewrite of bodies ---------------------------------------------------------- */
typedef struct lat_ctx {
    clause_ctx *cc;
    sema *s;
    int fresh;                 /* variables made */
} lat_ctx;

static rfx_expr *mk(lat_ctx *lc, rfx_expr e)
{
    rfx_expr *x = salloc(lc->s, sizeof *x);
    if (x) {
        *x = e;
        x->type = -1;
    }
    return x;
}

static rfx_expr *fresh_var(lat_ctx *lc, rfx_loc loc)
{
    char *name = salloc(lc->s, 24);
    if (!name)
        return NULL;
    snprintf(name, 24, "<lattice%d>", lc->fresh++);
    return mk(lc, (rfx_expr){.kind = RFX_E_VAR, .loc = loc, .u.v = {name, rfx_sema_fresh_var(lc->cc, name)}});
}

static rfx_expr *copy_var(lat_ctx *lc, const rfx_expr *v)
{
    return mk(lc, *v);
}

/* `@glb(a, b)` of lattice l. */
static rfx_expr *glb(lat_ctx *lc, const rfx_lattice *l, rfx_expr *a, rfx_expr *b, rfx_loc loc)
{
    const rfx_functor_decl *f = &lc->s->p->functors[l->glb];
    rfx_expr **args = salloc(lc->s, sizeof(rfx_expr *) * 2);
    if (!args || !a || !b)
        return NULL;
    args[0] = a;
    args[1] = b;
    int depth = (a->depth > b->depth ? a->depth : b->depth) + 1;
    rfx_expr *e = mk(lc, (rfx_expr){.kind = RFX_E_FN, .loc = loc, .depth = depth});
    if (!e)
        return NULL;
    e->u.fn.fn = RFX_FN_USER;
    e->u.fn.nargs = 2;
    e->u.fn.args = args;
    e->u.fn.cast_name = f->name;
    e->u.fn.cast = f->ret_type;
    e->u.fn.field = l->glb;
    e->u.fn.arg_types = f->arg_types;
    return e;
}

static rfx_lit *cmp_lit(lat_ctx *lc, rfx_cmpop op, rfx_expr *lhs, rfx_expr *rhs, rfx_loc loc)
{
    rfx_lit *l = salloc(lc->s, sizeof *l);
    if (l && lhs && rhs)
        *l = (rfx_lit){.kind = RFX_L_CMP, .loc = loc, .cmp = op, .lhs = lhs, .rhs = rhs};
    return l && lhs && rhs ? l : NULL;
}

/* The lattice of argument a of atom at (NULL: not a lattice attribute). */
static const rfx_lattice *arg_lattice(const rfx_program *p, const rfx_atom *at, int a)
{
    if (at->rel < 0 || a >= p->rels[at->rel].arity || !p->rels[at->rel].attrs[a].lattice)
        return NULL;
    int l = rfx_program_lattice(p, p->rels[at->rel].attrs[a].type);
    /* a lattice without Glb or Bottom reads its arguments as written (Soufflé 2.5 rewrites
     * nothing then: `r(x, [a, b])` matches the record) */
    return l >= 0 && p->lattices[l].glb >= 0 && p->lattices[l].bottom ? &p->lattices[l] : NULL;
}

static bool is_lattice_arg(const rfx_program *p, const rfx_lit *l, int a)
{
    return (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG) && arg_lattice(p, &l->atom, a);
}

/* The variables grounded without the lattice arguments: those in positive atoms' other
 * arguments, then those an equality with grounded terms binds. */
static void grounded(const rfx_program *p, const rfx_conj *cj, bool *g)
{
    for (int i = 0; i < cj->nlits; i++) {
        const rfx_lit *l = cj->lits[i];
        for (int a = 0; l->kind == RFX_L_ATOM && a < l->atom.nargs; a++)
            if (!is_lattice_arg(p, l, a))
                rfx_expr_vars(l->atom.args[a], g, NULL);
    }
    rfx_sema_ground_eqs(cj, g, NULL);
}

/* The first literal of cj where variable v occurs other than as a lattice argument of a
 * positive atom, or NULL. */
static const rfx_lit *used_elsewhere(const rfx_program *p, const rfx_conj *cj, int v, int nvars)
{
    bool *use = calloc((size_t)nvars + 1, 1);
    if (!use)
        return NULL;
    const rfx_lit *at = NULL;
    for (int i = 0; i < cj->nlits && !at; i++) {
        const rfx_lit *l = cj->lits[i];
        if (l->kind == RFX_L_CMP) {
            rfx_expr_vars(l->lhs, use, NULL);
            rfx_expr_vars(l->rhs, use, NULL);
        } else if (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG)
            for (int a = 0; a < l->atom.nargs; a++)
                if (l->kind == RFX_L_NEG || !is_lattice_arg(p, l, a))
                    rfx_expr_vars(l->atom.args[a], use, NULL);
        if (use[v])
            at = l;
    }
    free(use);
    return at;
}

/* Positive atoms' lattice arguments in cj, rewritten. */
static void rewrite_positive(lat_ctx *lc, rfx_conj *cj)
{
    const rfx_program *p = lc->s->p;
    int nvars = lc->cc->names.n;
    bool *g = calloc((size_t)nvars + 1, 1);
    int *count = calloc((size_t)nvars + 1, sizeof(int));
    if (!g || !count) {
        lc->s->ctx->oom = true;
        free(g);
        free(count);
        return;
    }
    grounded(p, cj, g);
    int n = cj->nlits;
    for (int i = 0; i < n; i++) {
        rfx_lit *l = cj->lits[i];
        for (int a = 0; l->kind == RFX_L_ATOM && a < l->atom.nargs; a++) {
            const rfx_lattice *lat = arg_lattice(p, &l->atom, a);
            rfx_expr *e = l->atom.args[a];
            if (!lat || e->kind == RFX_E_ANON)
                continue;
            if (e->kind == RFX_E_VAR && !g[e->u.v.var]) {
                count[e->u.v.var]++;
                continue;
            }
            /* grounded elsewhere, or not a variable: the value held is at least it */
            rfx_expr *w = fresh_var(lc, e->loc);
            rfx_lit *c = w ? cmp_lit(lc, RFX_EQ, glb(lc, lat, copy_var(lc, w), e, e->loc),
                                     e->kind == RFX_E_VAR ? copy_var(lc, e) : rfx_clone_expr(lc->s->ctx, e), e->loc)
                           : NULL;
            if (!c || !rfx_sema_add_lit(lc->s, cj, c))
                goto out;
            l->atom.args[a] = w;
        }
    }
    /* a variable only lattice arguments bind, in several of them: their meet */
    for (int v = 0; v < nvars; v++) {
        if (count[v] < 2)
            continue;
        const rfx_lit *other = used_elsewhere(p, cj, v, nvars);
        if (other) {
            rfx_diag_error(lc->s->d, other->loc, "ungrounded lattice variable '%s' cannot be used in other literals",
                           (const char *)lc->cc->names.items[v]);
            continue;
        }
        const rfx_lattice *lat = NULL;
        rfx_expr *acc = NULL, *first = NULL;
        for (int i = 0; i < n; i++) {
            rfx_lit *l = cj->lits[i];
            for (int a = 0; l->kind == RFX_L_ATOM && a < l->atom.nargs; a++) {
                rfx_expr *e = l->atom.args[a];
                if (e->kind != RFX_E_VAR || e->u.v.var != v || !(lat = arg_lattice(p, &l->atom, a)))
                    continue;
                if (!first)
                    first = e;
                rfx_expr *w = fresh_var(lc, e->loc);
                acc = acc ? glb(lc, lat, w, acc, e->loc) : w;
                l->atom.args[a] = copy_var(lc, w);
                if (!acc || !l->atom.args[a])
                    goto out;
            }
        }
        rfx_lit *bind = cmp_lit(lc, RFX_EQ, copy_var(lc, first), acc, first->loc);
        rfx_lit *some = cmp_lit(lc, RFX_NE, copy_var(lc, first), rfx_clone_expr(lc->s->ctx, lat->bottom), first->loc);
        if (!bind || !some || !rfx_sema_add_lit(lc->s, cj, bind) || !rfx_sema_add_lit(lc->s, cj, some))
            goto out;
    }
out:
    free(g);
    free(count);
}

/* A negated atom with a lattice argument other than `_`: cj keeps `!a(.., _)` and a new
 * disjunct has `a(.., w), @glb(w, c) = Bottom` in its place. Returns whether one was split. */
static bool split_negation(lat_ctx *lc, rfx_clause *c, int d)
{
    const rfx_program *p = lc->s->p;
    rfx_conj *cj = &c->conj[d];
    for (int i = 0; i < cj->nlits; i++) {
        rfx_lit *l = cj->lits[i];
        int at = -1, n = 0;
        for (int a = 0; l->kind == RFX_L_NEG && a < l->atom.nargs; a++)
            if (arg_lattice(p, &l->atom, a) && l->atom.args[a]->kind != RFX_E_ANON) {
                at = a;
                n++;
            }
        if (at < 0)
            continue;
        if (n > 1) {
            rfx_diag_error(lc->s->d, l->loc, "a negated atom with more than one lattice argument is not supported");
            return false;
        }
        const rfx_lattice *lat = arg_lattice(p, &l->atom, at);
        rfx_conj *all = salloc(lc->s, sizeof(rfx_conj) * (size_t)(c->nconj + 1));
        rfx_lit *neg = salloc(lc->s, sizeof *neg), *pos = salloc(lc->s, sizeof *pos);
        rfx_expr **nargs = salloc(lc->s, sizeof(rfx_expr *) * (size_t)l->atom.nargs);
        rfx_expr **pargs = salloc(lc->s, sizeof(rfx_expr *) * (size_t)l->atom.nargs);
        rfx_lit **lits = salloc(lc->s, sizeof(rfx_lit *) * (size_t)cj->nlits);
        rfx_expr *w = fresh_var(lc, l->loc), *arg = l->atom.args[at];
        if (!all || !neg || !pos || !nargs || !pargs || !lits || !w)
            return false;
        rfx_memcpy(nargs, l->atom.args, sizeof(rfx_expr *) * (size_t)l->atom.nargs);
        rfx_memcpy(pargs, l->atom.args, sizeof(rfx_expr *) * (size_t)l->atom.nargs);
        nargs[at] = mk(lc, (rfx_expr){.kind = RFX_E_ANON, .loc = arg->loc});
        pargs[at] = w;
        *neg = *l;
        neg->atom.args = nargs;
        *pos = *l;
        pos->kind = RFX_L_ATOM;
        pos->atom.args = pargs;
        rfx_memcpy(all, c->conj, sizeof(rfx_conj) * (size_t)c->nconj);
        /* the new disjunct's atoms of its own: the rewrite of positive atoms changes their arguments */
        for (int k = 0; k < cj->nlits; k++) {
            const rfx_lit *o = cj->lits[k];
            if (o->kind != RFX_L_ATOM || k == i) {
                lits[k] = cj->lits[k];
                continue;
            }
            rfx_lit *copy = salloc(lc->s, sizeof *copy);
            rfx_expr **args = salloc(lc->s, sizeof(rfx_expr *) * (size_t)(o->atom.nargs + 1));
            if (!copy || !args)
                return false;
            *copy = *o;
            rfx_memcpy(args, o->atom.args, sizeof(rfx_expr *) * (size_t)o->atom.nargs);
            copy->atom.args = args;
            lits[k] = copy;
        }
        lits[i] = pos;
        all[c->nconj] = (rfx_conj){cj->nlits, lits};
        all[d].lits[i] = neg;
        rfx_lit *meet = cmp_lit(lc, RFX_EQ, glb(lc, lat, copy_var(lc, w), rfx_clone_expr(lc->s->ctx, arg), l->loc),
                                rfx_clone_expr(lc->s->ctx, lat->bottom), l->loc);
        if (!nargs[at] || !meet || !rfx_sema_add_lit(lc->s, &all[c->nconj], meet))
            return false;
        c->conj = all;
        c->nconj++;
        return true;
    }
    return false;
}

/* An aggregate's body reading a lattice argument other than `_` or a plain variable. */
static bool agg_reads_lattice(const rfx_program *p, const rfx_expr *e)
{
    if (e->kind == RFX_E_AGG) {
        const rfx_conj *cj = rfx_agg_conj(e);
        for (int i = 0; cj && i < cj->nlits; i++) {
            const rfx_lit *l = cj->lits[i];
            for (int a = 0; (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG) && a < l->atom.nargs; a++)
                if (arg_lattice(p, &l->atom, a) && l->atom.args[a]->kind != RFX_E_ANON &&
                    (l->kind == RFX_L_NEG || l->atom.args[a]->kind != RFX_E_VAR))
                    return true;
        }
        return e->u.agg.target && agg_reads_lattice(p, e->u.agg.target);
    }
    for (int i = 0; i < rfx_expr_nkids(e); i++)
        if (agg_reads_lattice(p, rfx_expr_kid(e, i)))
            return true;
    return false;
}

void rfx_sema_rewrite_lattices(clause_ctx *cc)
{
    rfx_clause *c = cc->c;
    const rfx_program *p = cc->s->p;
    if (!p->nlattices)
        return;
    lat_ctx lc = {cc, cc->s, 0};
    for (int d = 0; d < c->nconj; d++)
        while (split_negation(&lc, c, d))
            ;
    for (int d = 0; d < c->nconj; d++) {
        for (int i = 0; i < c->conj[d].nlits; i++) {
            const rfx_lit *l = c->conj[d].lits[i];
            bool agg = l->kind == RFX_L_CMP && (agg_reads_lattice(p, l->lhs) || agg_reads_lattice(p, l->rhs));
            for (int a = 0; (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG) && a < l->atom.nargs; a++)
                agg |= agg_reads_lattice(p, l->atom.args[a]);
            if (agg)
                rfx_diag_error(cc->s->d, l->loc, "an aggregate over a lattice argument other than '_' or a "
                               "variable is not supported");
        }
        rewrite_positive(&lc, &c->conj[d]);
    }
}
