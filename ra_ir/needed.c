/* needed.c: the relations the program's results depend on.
 *
 * Where only outputs and printed sizes are seen after a run (the rfx command), a relation
 * that no output reads, directly or through other relations' rules, need not be derived:
 * `pairs(p, q) :- recs(p), recs(q), p != q.` beside the outputs may hold billions of
 * tuples nobody looks at. Soufflé drops such relations too (its redundant relations).
 * Reading is followed through positive and negated atoms, aggregate bodies and heads'
 * aggregates. Symbol ids show in `ord` and to stateful functors, and a rule left out
 * would not intern the symbols it makes, changing the ids of later ones: programs with
 * either keep every relation. Inputs are still read (a malformed file is still an error)
 * and facts still loaded; only rules are left out. */
#include "ra_internal.h"

#include <stdlib.h>

typedef struct needed_ctx {
    const rfx_program *prog;
    bool *needed;
    int *stack, nstack;
    bool marking;              /* the walk marks what it reads (else it only looks for ids) */
    bool ids_seen;             /* ord, or a stateful functor */
} needed_ctx;

static void need(needed_ctx *n, int r)
{
    if (n->marking && r >= 0 && !n->needed[r]) {
        n->needed[r] = true;
        n->stack[n->nstack++] = r;
    }
}

static void walk_conj(needed_ctx *n, const rfx_conj *cj);

static void walk_expr(needed_ctx *n, const rfx_expr *e)
{
    if (!e)
        return;
    if (e->kind == RFX_E_FN && (e->u.fn.fn == RFX_FN_ORD ||
                                (e->u.fn.fn == RFX_FN_USER && e->u.fn.field >= 0 &&
                                 n->prog->functors[e->u.fn.field].stateful)))
        n->ids_seen = true;
    if (e->kind == RFX_E_AGG) {
        walk_expr(n, e->u.agg.target);
        walk_conj(n, rfx_agg_conj(e));
    }
    for (int i = 0; i < rfx_expr_nkids(e); i++)
        walk_expr(n, rfx_expr_kid(e, i));
}

static void walk_conj(needed_ctx *n, const rfx_conj *cj)
{
    for (int i = 0; cj && i < cj->nlits; i++) {
        const rfx_lit *l = cj->lits[i];
        if (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG) {
            need(n, l->atom.rel);
            for (int a = 0; a < l->atom.nargs; a++)
                walk_expr(n, l->atom.args[a]);
        } else if (l->kind == RFX_L_CMP) {
            walk_expr(n, l->lhs);
            walk_expr(n, l->rhs);
        }
    }
}

static void walk_clause(needed_ctx *n, const rfx_clause *c)
{
    for (int a = 0; a < c->head.nargs; a++)
        walk_expr(n, c->head.args[a]);
    for (int d = 0; d < c->nconj; d++)
        walk_conj(n, &c->conj[d]);
}

bool rfx_plan_needed_relations(const rfx_program *p, bool *needed)
{
    needed_ctx n = {p, needed, rfx_calloc((size_t)p->nrels + 1, sizeof(int)), 0, false, false};
    for (int r = 0; r < p->nrels; r++)
        needed[r] = false;
    int **by_head = rfx_calloc((size_t)p->nrels + 1, sizeof(int *));
    int *nby = rfx_calloc((size_t)p->nrels + 1, sizeof(int));
    bool ok = n.stack && by_head && nby;
    /* ord and stateful functors anywhere: every relation kept */
    for (int f = 0; ok && f < p->nfunctors; f++)
        n.ids_seen |= p->functors[f].stateful;
    for (int i = 0; ok && !n.ids_seen && i < p->nclauses; i++)
        walk_clause(&n, &p->clauses[i]);
    n.marking = true;
    for (int r = 0; ok && n.ids_seen && r < p->nrels; r++)
        n.needed[r] = true;
    /* the clauses of each relation */
    for (int i = 0; ok && i < p->nclauses; i++)
        if (p->clauses[i].head.rel >= 0)
            nby[p->clauses[i].head.rel]++;
    for (int r = 0; ok && r < p->nrels; r++)
        ok = !nby[r] || (by_head[r] = malloc(sizeof(int) * (size_t)nby[r])) != NULL;
    for (int r = 0; ok && r < p->nrels; r++)
        nby[r] = 0;
    for (int i = 0; ok && i < p->nclauses; i++) {
        int r = p->clauses[i].head.rel;
        if (r >= 0)
            by_head[r][nby[r]++] = i;
    }
    /* a LogiQL program without output directives outputs every relation it derives */
    bool logiql = false;
    for (int r = 0; ok && r < p->nrels; r++)
        logiql |= p->rels[r].logiql;
    for (int r = 0; ok && r < p->nrels; r++) {
        const rfx_relation *rel = &p->rels[r];
        if (rel->noutputs || (rel->io & RFX_REL_PRINTSIZE) || (logiql && !p->any_output && (rel->has_rules || rel->logiql)))
            need(&n, r);
    }
    while (ok && n.nstack) {
        int r = n.stack[--n.nstack];
        for (int k = 0; k < nby[r]; k++)
            walk_clause(&n, &p->clauses[by_head[r][k]]);
    }
    for (int r = 0; by_head && r < p->nrels; r++)
        free(by_head[r]);
    free(by_head);
    free(nby);
    free(n.stack);
    return ok;
}
