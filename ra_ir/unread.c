/* unread.c: the columns of input relations that nothing reads.
 *
 * A symbol column of a relation read only from files, that every atom of the relation
 * leaves as `_` (or a variable seen nowhere else in its clause), has values no rule ever
 * sees: reading them is interning strings nobody asks for (TPC-H's comment columns, most of
 * its bytes). Where only the program's outputs are seen after the run, such a column is
 * read as one constant instead. Rows then equal in the other columns become one tuple,
 * which nothing can tell, unless something counts the relation's tuples: a count, sum or
 * mean whose body reads it, so those keep every column. Symbol ids show in `ord` and to
 * stateful functors, and a column left out changes the ids of the symbols after it, so
 * programs with either keep every column too. */
#include "ra_internal.h"

#include <stdlib.h>

typedef struct unread_ctx {
    const rfx_program *prog;
    bool *counted;             /* per relation: a body that counts tuples reads it */
    bool ids_seen;             /* ord, or a stateful functor */
    int *uses;                 /* per variable of the clause walked: its occurrences */
} unread_ctx;

static void walk_conj(unread_ctx *u, const rfx_conj *cj, bool counting);

/* Notes what e shows: variables' uses, ord, aggregates' bodies. */
static void walk_expr(unread_ctx *u, const rfx_expr *e, bool counting)
{
    if (!e)
        return;
    if (e->kind == RFX_E_VAR && e->u.v.var >= 0 && u->uses)
        u->uses[e->u.v.var]++;
    if (e->kind == RFX_E_FN && e->u.fn.fn == RFX_FN_ORD)
        u->ids_seen = true;
    if (e->kind == RFX_E_AGG) {
        walk_expr(u, e->u.agg.target, counting);
        const rfx_aggfn fn = e->u.agg.fn;
        walk_conj(u, rfx_agg_conj(e), counting || fn == RFX_AGG_COUNT || fn == RFX_AGG_SUM || fn == RFX_AGG_MEAN);
    }
    for (int i = 0; i < rfx_expr_nkids(e); i++)
        walk_expr(u, rfx_expr_kid(e, i), counting);
}

static void walk_atom(unread_ctx *u, const rfx_atom *a, bool counting)
{
    if (counting && a->rel >= 0)
        u->counted[a->rel] = true;
    for (int i = 0; i < a->nargs; i++)
        walk_expr(u, a->args[i], counting);
}

static void walk_conj(unread_ctx *u, const rfx_conj *cj, bool counting)
{
    for (int i = 0; cj && i < cj->nlits; i++) {
        const rfx_lit *l = cj->lits[i];
        if (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG)
            walk_atom(u, &l->atom, counting);
        else if (l->kind == RFX_L_CMP) {
            walk_expr(u, l->lhs, counting);
            walk_expr(u, l->rhs, counting);
        }
    }
}

static void walk_clause(unread_ctx *u, const rfx_clause *c)
{
    walk_atom(u, &c->head, false);
    for (int d = 0; d < c->nconj; d++)
        walk_conj(u, &c->conj[d], false);
}

/* Whether argument e of an atom reads its column: anything but `_` and a variable the
 * clause has nowhere else. */
static bool reads_arg(const unread_ctx *u, const rfx_expr *e)
{
    return !(e->kind == RFX_E_ANON || (e->kind == RFX_E_VAR && e->u.v.var >= 0 && u->uses[e->u.v.var] == 1));
}

static void mark_read_conj(unread_ctx *u, const rfx_conj *cj, bool **read);

static void mark_read_expr(unread_ctx *u, const rfx_expr *e, bool **read)
{
    if (!e)
        return;
    if (e->kind == RFX_E_AGG)
        mark_read_conj(u, rfx_agg_conj(e), read);
    for (int i = 0; i < rfx_expr_nkids(e); i++)
        mark_read_expr(u, rfx_expr_kid(e, i), read);
}

/* read[r][k] = true where an atom of r in cj reads its column k (read[r]: NULL where r is
 * no candidate). */
static void mark_read_conj(unread_ctx *u, const rfx_conj *cj, bool **read)
{
    for (int i = 0; cj && i < cj->nlits; i++) {
        const rfx_lit *l = cj->lits[i];
        if (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG) {
            bool *rr = l->atom.rel >= 0 ? read[l->atom.rel] : NULL;
            for (int k = 0; k < l->atom.nargs; k++) {
                if (rr && reads_arg(u, l->atom.args[k]))
                    rr[k] = true;
                mark_read_expr(u, l->atom.args[k], read);
            }
        } else if (l->kind == RFX_L_CMP) {
            mark_read_expr(u, l->lhs, read);
            mark_read_expr(u, l->rhs, read);
        }
    }
}

/* Whether r is read from files alone, seen by rules alone, and holds plain tuples. */
static bool plain_input(const rfx_program *p, int r)
{
    const rfx_relation *rel = &p->rels[r];
    if (!(rel->io & RFX_REL_INPUT) || (rel->io & ~(unsigned)RFX_REL_INPUT) || rel->subsumed || rel->nchoice ||
        rfx_relation_lattice_key(rel) < rel->arity || rfx_relation_is_eqrel(rel))
        return false;
    for (int i = 0; i < p->nclauses; i++)
        if (p->clauses[i].head.rel == r)
            return false;   /* facts or rules write it too */
    return true;
}

bool rfx_plan_mark_unread(rfx_plan *P)
{
    const rfx_program *p = P->prog;
    unread_ctx u = {p, rfx_calloc((size_t)p->nrels + 1, sizeof(bool)), false, NULL};
    bool **read = rfx_calloc((size_t)p->nrels + 1, sizeof(bool *));
    bool ok = u.counted && read;
    for (int f = 0; ok && f < p->nfunctors; f++)
        u.ids_seen |= p->functors[f].stateful;
    int candidates = 0;
    for (int r = 0; ok && !u.ids_seen && r < p->nrels; r++)
        if (plain_input(p, r)) {
            ok = (read[r] = rfx_calloc((size_t)p->rels[r].arity + 1, sizeof(bool))) != NULL;
            candidates++;
        }
    /* one walk a clause: its variables' uses (and what counts tuples, and ord), then the
     * columns its atoms read */
    for (int i = 0; ok && candidates && i < p->nclauses; i++) {
        const rfx_clause *c = &p->clauses[i];
        if (!(u.uses = rfx_calloc((size_t)c->nvars + 1, sizeof(int)))) {
            ok = false;
            break;
        }
        walk_clause(&u, c);
        for (int d = 0; d < c->nconj; d++)
            mark_read_conj(&u, &c->conj[d], read);
        for (int k = 0; k < c->head.nargs; k++)
            mark_read_expr(&u, c->head.args[k], read);
        free(u.uses);
        u.uses = NULL;
    }
    for (int r = 0; ok && !u.ids_seen && r < p->nrels; r++) {
        if (!read[r] || u.counted[r])
            continue;
        rfx_pvar *v = &P->vars[P->relvar[r]];
        bool any = false;
        for (int k = 0; k < v->arity; k++)
            any |= !read[r][k] && v->types[k] == RFX_SYMBOL;
        if (any && !(v->unread = rfx_arena_alloc(P->arena, sizeof(bool) * (size_t)v->arity)))
            ok = false;
        for (int k = 0; any && ok && k < v->arity; k++)
            v->unread[k] = !read[r][k] && v->types[k] == RFX_SYMBOL;
    }
    for (int r = 0; read && r < p->nrels; r++)
        free(read[r]);
    free(read);
    free(u.counted);
    return ok;
}
