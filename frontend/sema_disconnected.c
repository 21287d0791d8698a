/* sema_disconnected.c: a recursive rule's body atom that names no variable (`r(_)`,
 * `r(1, _)`: an existence test) becomes a nullary relation of its own, as Soufflé's
 * disconnected literals do (`+disconnected0() :- r(_).`).
 *
 * Why: semi-naive evaluation runs a version of the rule with each recursive atom read as
 * its delta. Read as a delta, an existence test holds in every iteration where r gained a
 * tuple, and that version joins the rest of the body over the whole relations again, each
 * iteration: a long recursion becomes quadratic (`s(v + 1) :- r(_), s(v), v < N.` rereads
 * all of s per step). The nullary relation's delta is non-empty once, in the iteration
 * after r first holds a matching tuple, and the version reading it runs then only; the
 * versions reading the other atoms' deltas test its full relation, one tuple. The answer
 * is the same (the rewrite is a definition: the new relation holds () iff some tuple of r
 * matches); tuples may arrive an iteration later.
 *
 * Only atoms of the head's own recursive stratum are rewritten (elsewhere the test is made
 * once); the new relations are marked checker_made and not indexed by name (a program
 * cannot name them: `+` is not a letter of its names). */
#include "sema.h"

#include <stdio.h>
#include <string.h>

/* Whether e names a variable (an aggregate counts as one). */
static bool names_variable(const rfx_expr *e)
{
    if (!e)
        return false;
    if (e->kind == RFX_E_VAR || e->kind == RFX_E_AGG)
        return true;
    for (int i = 0; i < rfx_expr_nkids(e); i++)
        if (names_variable(rfx_expr_kid(e, i)))
            return true;
    return false;
}

static bool is_existence_test(const rfx_program *p, const rfx_clause *c, const rfx_lit *l)
{
    if (l->kind != RFX_L_ATOM || l->role || l->atom.rel < 0 || l->atom.nargs == 0)
        return false;
    if (p->rels[l->atom.rel].stratum != p->rels[c->head.rel].stratum)
        return false;
    for (int i = 0; i < l->atom.nargs; i++)
        if (names_variable(l->atom.args[i]))
            return false;
    return true;
}

/* Relation `+disconnectedN` (nullary) at rels[r] and its clause `+disconnectedN() :- l.` at
 * *into (c: the clause l was in); false out of memory. */
static bool make_disconnected(sema *s, const rfx_clause *c, const rfx_lit *l, int n, int r, rfx_relation *rels,
                              rfx_clause *into)
{
    char *name = salloc(s, 32);
    rfx_lit *copy = salloc(s, sizeof *copy);
    rfx_lit **lits = salloc(s, sizeof(rfx_lit *));
    rfx_conj *conj = salloc(s, sizeof *conj);
    rfx_body *body = salloc(s, sizeof *body);
    if (!name || !copy || !lits || !conj || !body)
        return false;
    snprintf(name, 32, "+disconnected%d", n);
    rels[r] = (rfx_relation){.name = name, .loc = l->loc, .has_rules = true, .checker_made = true, .limitsize = -1};
    *copy = *l;
    lits[0] = copy;
    *conj = (rfx_conj){1, lits};
    *body = (rfx_body){.kind = RFX_B_LIT, .lit = copy};
    *into = (rfx_clause){.head = {.name = name, .rel = r, .loc = l->loc}, .body = body, .nconj = 1, .conj = conj,
                         .loc = c->loc, .instance = c->instance};
    return true;
}

static bool rewritten(const rfx_program *p, const rfx_clause *c, const rfx_lit *l)
{
    return !c->is_fact && !c->subsumptive && is_existence_test(p, c, l);
}

bool rfx_sema_split_disconnected(sema *s)
{
    rfx_program *p = s->p;
    int n = 0, nrels = p->nrels, nclauses = p->nclauses;
    for (int ci = 0; ci < nclauses; ci++)
        for (int d = 0; d < p->clauses[ci].nconj; d++)
            for (int i = 0; i < p->clauses[ci].conj[d].nlits; i++)
                n += rewritten(p, &p->clauses[ci], p->clauses[ci].conj[d].lits[i]);
    if (!n)
        return false;
    /* the arrays grown once, in the arena */
    rfx_relation *rels = salloc(s, sizeof(rfx_relation) * (size_t)(nrels + n + 1));
    rfx_clause *clauses = salloc(s, sizeof(rfx_clause) * (size_t)(nclauses + n + 1));
    if (!rels || !clauses)
        return false;
    memcpy(rels, p->rels, sizeof(rfx_relation) * (size_t)nrels);
    memcpy(clauses, p->clauses, sizeof(rfx_clause) * (size_t)nclauses);
    int made = 0;
    for (int ci = 0; ci < nclauses; ci++)
        for (int d = 0; d < clauses[ci].nconj; d++)
            for (int i = 0; i < clauses[ci].conj[d].nlits; i++) {
                rfx_lit *l = clauses[ci].conj[d].lits[i], *now;
                if (!rewritten(p, &clauses[ci], l))
                    continue;
                int r = nrels + made;
                if (!make_disconnected(s, &clauses[ci], l, made, r, rels, &clauses[nclauses + made]) ||
                    !(now = salloc(s, sizeof *now)))   /* the literal may be shared by disjuncts */
                    return false;
                *now = *l;
                now->atom = (rfx_atom){.name = rels[r].name, .rel = r, .loc = l->atom.loc};
                clauses[ci].conj[d].lits[i] = now;
                made++;
            }
    p->rels = rels;
    p->clauses = clauses;
    p->nrels += made;
    p->nclauses += made;
    return true;
}
