/* split.c: which recursive relations may be computed one range of key values at a time.
 *
 * A relation r alone in its recursive stratum whose every recursive rule reads r once
 * (linear recursion) and copies one column of that atom unchanged into the head keeps
 * that column's value along every derivation: path(x, z) :- path(x, y), edge(y, z) never
 * changes x. The fixpoint then splits by ranges of the column's values: each range's
 * facts derive only facts of that range, so the loop run on a range's facts alone gives
 * exactly the whole loop's facts of that range (the discriminating-function evaluation
 * of linear sirups, Wolfson and Silberschatz 1988; Ganguly, Silberschatz and Tsur 1990).
 * The interpreter uses it when r outgrows the memory budget (runtime/exec.c). */
#include "ra_internal.h"

/* Whether literal l reads relation r (as an atom, negated or not). */
static bool reads_rel(const rfx_lit *l, int r)
{
    return (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG) && l->atom.rel == r;
}

/* Whether conjunct d reads r at most once and, where it does, as an atom holding at
 * column k the variable the head holds there. */
static bool keeps_column(const rfx_clause *c, const rfx_conj *d, int r, int k)
{
    const rfx_lit *at = NULL;
    int reads = 0;
    for (int i = 0; i < d->nlits; i++)
        if (reads_rel(d->lits[i], r)) {
            reads++;
            at = d->lits[i];
        }
    if (reads != 1)
        return reads == 0;
    const rfx_expr *h = c->head.args[k], *b = at->atom.args[k];
    return at->kind == RFX_L_ATOM && h->kind == RFX_E_VAR && b->kind == RFX_E_VAR && h->u.v.var == b->u.v.var;
}

/* The first column every recursive rule of r keeps, or -1. */
static int split_column(const rfx_program *prog, int r)
{
    const rfx_stratum *st = &prog->strata[prog->rels[r].stratum];
    /* choice and subsumption compare tuples across the ranges; an equivalence's closure
     * adds the symmetric pair, in another range; a lattice's values are merged per key */
    if (!st->recursive || st->nrels != 1 || prog->rels[r].arity < 1 || prog->rels[r].nchoice || prog->rels[r].subsumed ||
        rfx_relation_is_eqrel(&prog->rels[r]) || prog->rels[r].attrs[prog->rels[r].arity - 1].lattice)
        return -1;
    for (int k = 0; k < prog->rels[r].arity; k++) {
        bool kept = true;
        for (int ci = 0; ci < prog->nclauses && kept; ci++) {
            const rfx_clause *c = &prog->clauses[ci];
            if (c->is_fact || c->head.rel != r)
                continue;
            for (int d = 0; d < c->nconj && kept; d++)
                kept = keeps_column(c, &c->conj[d], r, k);
        }
        if (kept)
            return k;
    }
    return -1;
}

bool rfx_plan_find_splits(rfx_plan *P)
{
    const rfx_program *prog = P->prog;
    P->split_col = rfx_arena_alloc(P->arena, sizeof(int) * (size_t)(prog->nrels + 1));
    if (!P->split_col)
        return false;
    for (int r = 0; r < prog->nrels; r++)
        P->split_col[r] = prog->rels[r].stratum >= 0 && prog->rels[r].stratum < prog->nstrata ? split_column(prog, r) : -1;
    return true;
}
