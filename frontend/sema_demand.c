/* sema_demand.c: a helper relation made only for the tuples its one reader can use (a
 * one-level demand, or magic-set, rewrite).
 *
 * TPC-H Q21 reads `shared(k, s)` (the orders with a second supplier) only beside late lines
 * of failed orders of Saudi suppliers, yet its rule joins every order's lines with each
 * other: the reader's other literals bound (k, s) to a few thousand pairs among 60 M. Here
 * such a relation H, read in one literal of one clause C (positive or negated), gets a demand
 * relation `+demand_H` over the arguments C's other literals bind, made from copies of those
 * literals, and each of H's rules a `+demand_H(...)` literal over its head's arguments there:
 * H then holds only tuples C could meet.
 *
 * Why it is the same answer: C's body B = A ∧ H(x) ∧ rest, where A (the literals copied) is
 * a part of B and demand(x) = ∃ (A's other variables) A. The new H' = H ∧ demand, and
 * wherever B's A holds, demand(x) holds, so H'(x) ∧ A ≡ H(x) ∧ A, and !H'(x) ∧ A ≡
 * (!H(x) ∨ !demand(x)) ∧ A ≡ !H(x) ∧ A. Nothing else reads H, so no other answer changes;
 * H itself does: so the engine asks for the rewrite only where the outputs alone are looked
 * at (the rfx command, librfx's results_only), and refuses reads of H there
 * (rfx_relation.demanded).
 *
 * Where: H is not an input, output or printsize relation, has rules and no facts, is not
 * recursive (its rules read nothing of its own stratum), is not an eqrel, a lattice's,
 * subsumed, a choice-domain's nor size-limited, and its rules have no `.plan`; C has one
 * conjunction, no `.plan` and is not subsumptive; H appears in C once, outside aggregates,
 * and nowhere else. A is C's positive atoms of strata below C's that depend on no relation
 * so rewritten (a demand reading one would read itself), and the comparisons over their
 * variables; the demanded arguments are H's arguments in C that are variables A grounds,
 * and H's head arguments there must be variables in every rule. It is done where it should
 * pay: A filters (an atom's constant argument, or a comparison) and some rule of H joins
 * two atoms or more; else computing the demand repeats C's join for little.
 *
 * Off with the tuning `demand=0`, or where every relation is kept whole
 * (rfx_parse_opts.no_demand). */
#include "sema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Calls f on every literal of every conjunction of clause c, aggregates' bodies included
 * (in_agg true inside one). */
typedef void (*lit_fn)(const rfx_lit *l, bool in_agg, void *arg);

static void walk_expr(const rfx_expr *e, lit_fn f, void *arg);

static void walk_conj(const rfx_conj *cj, bool in_agg, lit_fn f, void *arg)
{
    for (int i = 0; cj && i < cj->nlits; i++) {
        const rfx_lit *l = cj->lits[i];
        f(l, in_agg, arg);
        walk_expr(l->lhs, f, arg);
        walk_expr(l->rhs, f, arg);
        for (int a = 0; (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG) && a < l->atom.nargs; a++)
            walk_expr(l->atom.args[a], f, arg);
    }
}

static void walk_expr(const rfx_expr *e, lit_fn f, void *arg)
{
    if (!e)
        return;
    if (e->kind == RFX_E_AGG) {
        walk_expr(e->u.agg.target, f, arg);
        walk_conj(rfx_agg_conj(e), true, f, arg);
        return;
    }
    for (int i = 0; i < rfx_expr_nkids(e); i++)
        walk_expr(rfx_expr_kid(e, i), f, arg);
}

static void walk_clause(const rfx_clause *c, lit_fn f, void *arg)
{
    for (int a = 0; a < c->head.nargs; a++)
        walk_expr(c->head.args[a], f, arg);
    for (int d = 0; d < c->nconj; d++)
        walk_conj(&c->conj[d], false, f, arg);
}

/* Per relation: the literals naming it (any), those inside aggregates, and the relations
 * the clauses deriving it read (for the dependencies). */
typedef struct uses {
    int *refs, *in_agg;
} uses;

static void count_use(const rfx_lit *l, bool in_agg, void *arg)
{
    uses *u = arg;
    if ((l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG) && l->atom.rel >= 0) {
        u->refs[l->atom.rel]++;
        u->in_agg[l->atom.rel] += in_agg;
    }
}

typedef struct reads {
    int head;
    int *from, *to;
    size_t n, cap;
} reads;

/* Records that the clause being walked (its head rel) reads the literal's relation. */
static void add_read(const rfx_lit *l, bool in_agg, void *arg)
{
    (void)in_agg;
    reads *r = arg;
    if ((l->kind != RFX_L_ATOM && l->kind != RFX_L_NEG) || l->atom.rel < 0 || r->n == SIZE_MAX)
        return;
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        int *f = realloc(r->from, sizeof(int) * cap), *t = f ? realloc(r->to, sizeof(int) * cap) : NULL;
        if (f)
            r->from = f;
        if (!f || !t) {
            r->n = SIZE_MAX;   /* out of memory */
            return;
        }
        r->to = t;
        r->cap = cap;
    }
    r->from[r->n] = l->atom.rel;
    r->to[r->n++] = r->head;
}

/* tainted[r]: r is marked, or its rules read (through others) a marked relation; false out
 * of memory. */
static bool taint(const rfx_program *p, bool *tainted)
{
    reads rd = {0};
    for (int ci = 0; ci < p->nclauses && rd.n != SIZE_MAX; ci++)
        if (!p->clauses[ci].is_fact && (rd.head = p->clauses[ci].head.rel) >= 0)
            walk_clause(&p->clauses[ci], add_read, &rd);
    bool ok = rd.n != SIZE_MAX;
    for (bool more = ok; more;) {   /* to a fixpoint: few rounds on real programs' depths */
        more = false;
        for (size_t i = 0; i < rd.n; i++)
            if (tainted[rd.from[i]] && !tainted[rd.to[i]])
                more = tainted[rd.to[i]] = true;
    }
    free(rd.from);
    free(rd.to);
    return ok;
}

static bool has_agg_or_fn(const rfx_expr *e)
{
    if (!e)
        return false;
    if (e->kind == RFX_E_AGG || (e->kind == RFX_E_FN && (e->u.fn.fn == RFX_FN_AUTOINC || e->u.fn.fn == RFX_FN_USER)))
        return true;
    for (int i = 0; i < rfx_expr_nkids(e); i++)
        if (has_agg_or_fn(rfx_expr_kid(e, i)))
            return true;
    return false;
}

/* The one clause and literal reading relation h (*lit its index in the clause's only
 * conjunction), where h may be rewritten; false where not. */
static bool candidate(const rfx_program *p, const uses *u, int h, int *clause, int *lit)
{
    const rfx_relation *r = &p->rels[h];
    if ((r->io & (RFX_REL_INPUT | RFX_REL_OUTPUT | RFX_REL_PRINTSIZE)) || !r->has_rules || r->arity == 0 ||
        rfx_relation_is_eqrel(r) || r->subsumed || r->nchoice || r->limitsize >= 0 || r->checker_made ||
        u->refs[h] != 1 || u->in_agg[h] || r->stratum < 0)
        return false;
    for (int a = 0; a < r->arity; a++)
        if (r->attrs[a].lattice)
            return false;
    bool joins = false;
    for (int ci = 0; ci < p->nclauses; ci++) {
        const rfx_clause *c = &p->clauses[ci];
        if (c->head.rel == h) {
            if (c->is_fact || c->nplans || c->subsumptive)
                return false;
            for (int d = 0; d < c->nconj; d++) {
                int atoms = 0;
                for (int i = 0; i < c->conj[d].nlits; i++) {
                    const rfx_lit *l = c->conj[d].lits[i];
                    if ((l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG) && l->atom.rel >= 0 &&
                        p->rels[l->atom.rel].stratum == r->stratum)
                        return false;   /* recursive */
                    atoms += l->kind == RFX_L_ATOM;
                }
                joins |= atoms >= 2;
            }
        }
    }
    if (!joins)
        return false;
    for (int ci = 0; ci < p->nclauses; ci++) {
        const rfx_clause *c = &p->clauses[ci];
        for (int d = 0; d < c->nconj; d++)
            for (int i = 0; i < c->conj[d].nlits; i++) {
                const rfx_lit *l = c->conj[d].lits[i];
                if ((l->kind != RFX_L_ATOM && l->kind != RFX_L_NEG) || l->atom.rel != h)
                    continue;
                if (c->nconj != 1 || c->nplans || c->subsumptive || c->head.rel < 0 || c->head.rel == h)
                    return false;
                *clause = ci;
                *lit = i;
                return true;
            }
    }
    return false;   /* read inside an expression only (an aggregate's body): not here */
}

/* The literals of C's conjunction the demand copies (keep[i]), the variables they ground
 * (bound) and H's demanded argument places (want[a]); their number, 0 where it would not
 * pay. tainted: relations that read one rewritten, which A may not read. */
static int choose(const rfx_program *p, const rfx_clause *c, int lit, const bool *tainted, bool *keep, bool *bound,
                  bool *want)
{
    const rfx_conj *cj = &c->conj[0];
    const int cst = p->rels[c->head.rel].stratum;
    bool filters = false;
    for (int i = 0; i < cj->nlits; i++) {
        const rfx_lit *l = cj->lits[i];
        keep[i] = false;
        if (i == lit || l->kind != RFX_L_ATOM || l->atom.rel < 0 || l->atom.rel >= p->nrels ||
            p->rels[l->atom.rel].stratum >= cst || tainted[l->atom.rel])
            continue;   /* (a demand atom added to a rule here: past p's relations) */
        /* arguments: variables, `_` and constants (an expression over variables would need
         * them bound by what is kept) */
        bool plain = true;
        for (int a = 0; a < l->atom.nargs && plain; a++) {
            const rfx_expr *e = l->atom.args[a];
            if (e->kind != RFX_E_VAR && e->kind != RFX_E_ANON) {
                memset(bound, 0, (size_t)c->nvars + 1);   /* scratch here: bound is made below */
                rfx_expr_vars(e, bound, NULL);
                for (int v = 0; v < c->nvars && plain; v++)
                    plain = !bound[v];
                plain = plain && !has_agg_or_fn(e);
            }
        }
        keep[i] = plain;
    }
    memset(bound, 0, (size_t)c->nvars + 1);
    for (int i = 0; i < cj->nlits; i++) {
        const rfx_lit *l = cj->lits[i];
        if (!keep[i])
            continue;
        for (int a = 0; a < l->atom.nargs; a++) {
            const rfx_expr *e = l->atom.args[a];
            if (e->kind == RFX_E_VAR)
                bound[e->u.v.var] = true;
            else if (e->kind != RFX_E_ANON)
                filters = true;   /* a constant */
        }
    }
    /* comparisons over what those atoms ground (and equalities grounding more, in turn) */
    bool *use = malloc((size_t)c->nvars + 1);
    if (!use)
        return 0;
    for (bool more = true; more;) {
        more = false;
        for (int i = 0; i < cj->nlits; i++) {
            const rfx_lit *l = cj->lits[i];
            if (keep[i] || l->kind != RFX_L_CMP || has_agg_or_fn(l->lhs) || has_agg_or_fn(l->rhs))
                continue;
            memset(use, 0, (size_t)c->nvars + 1);
            rfx_expr_vars(l->lhs, use, NULL);
            rfx_expr_vars(l->rhs, use, NULL);
            int unbound = -1, nunbound = 0;
            for (int v = 0; v < c->nvars; v++)
                if (use[v] && !bound[v]) {
                    unbound = v;
                    nunbound++;
                }
            /* all grounded: a filter; `v = expr` with v new and expr over grounded ones: it
             * grounds v */
            const rfx_expr *side = l->lhs->kind == RFX_E_VAR && l->lhs->u.v.var == unbound   ? l->lhs
                                   : l->rhs->kind == RFX_E_VAR && l->rhs->u.v.var == unbound ? l->rhs
                                                                                              : NULL;
            bool grounds = nunbound == 1 && l->cmp == RFX_EQ && side;
            if (grounds) {   /* v on one side alone, not also on the other */
                memset(use, 0, (size_t)c->nvars + 1);
                rfx_expr_vars(side == l->lhs ? l->rhs : l->lhs, use, NULL);
                grounds = !use[unbound];
            }
            if (nunbound == 0 || grounds) {
                keep[i] = true;
                filters |= nunbound == 0;
                if (grounds) {
                    bound[unbound] = true;
                    more = true;
                }
            }
        }
    }
    free(use);
    const rfx_atom *h = &cj->lits[lit]->atom;
    int n = 0;
    for (int a = 0; a < h->nargs; a++) {
        want[a] = h->args[a]->kind == RFX_E_VAR && bound[h->args[a]->u.v.var];
        n += want[a];
    }
    return filters ? n : 0;
}

/* Whether every rule of h has plain variables at the places in want. */
static bool heads_plain(const rfx_program *p, int h, const bool *want)
{
    for (int ci = 0; ci < p->nclauses; ci++) {
        const rfx_clause *c = &p->clauses[ci];
        for (int a = 0; c->head.rel == h && a < c->head.nargs; a++)
            if (want[a] && c->head.args[a]->kind != RFX_E_VAR)
                return false;
    }
    return true;
}

static rfx_body *and_lit(sema *s, rfx_body *body, rfx_lit *l)
{
    rfx_body *leaf = salloc(s, sizeof *leaf), *and = body ? salloc(s, sizeof *and) : NULL;
    if (!leaf || (body && !and))
        return NULL;
    *leaf = (rfx_body){.kind = RFX_B_LIT, .lit = l};
    if (!body)
        return leaf;
    *and = (rfx_body){.kind = RFX_B_AND, .lhs = body, .rhs = leaf};
    return and;
}

/* An atom of relation r over the places in want of args (copies). */
static rfx_lit *demand_atom(sema *s, int r, const rfx_relation *dr, rfx_expr *const *args, int nargs,
                            const bool *want, rfx_loc loc)
{
    rfx_lit *l = salloc(s, sizeof *l);
    rfx_expr **a = salloc(s, sizeof(rfx_expr *) * (size_t)(dr->arity + 1));
    if (!l || !a)
        return NULL;
    for (int i = 0, k = 0; i < nargs; i++)
        if (want[i])
            a[k++] = rfx_clone_expr(s->ctx, args[i]);
    *l = (rfx_lit){.kind = RFX_L_ATOM, .loc = loc, .atom = {.name = dr->name, .rel = r, .nargs = dr->arity,
                                                               .args = a, .loc = loc}};
    return l;
}

/* Relation `+demand_H` at rels[r] over h's places in want (n of them) and its clause at
 * *into: the literals of clause ci that keep marks, copied. */
static bool make_demand(sema *s, rfx_relation *rels, const rfx_clause *c, int h, int lit, const bool *keep,
                        const bool *want, int n, int r, rfx_clause *into)
{
    const rfx_conj *cj = &c->conj[0];
    const rfx_relation *hr = &rels[h];
    size_t len = strlen(hr->name) + 10;
    char *name = salloc(s, len);
    rfx_attr *attrs = salloc(s, sizeof(rfx_attr) * (size_t)(n + 1));
    rfx_lit **lits = salloc(s, sizeof(rfx_lit *) * (size_t)(cj->nlits + 1));
    rfx_conj *conj = salloc(s, sizeof *conj);
    if (!name || !attrs || !lits || !conj)
        return false;
    snprintf(name, len, "+demand_%s", hr->name);
    for (int a = 0, k = 0; a < hr->arity; a++)
        if (want[a])
            attrs[k++] = hr->attrs[a];
    const rfx_loc loc = cj->lits[lit]->loc;
    rels[r] = (rfx_relation){.name = name, .arity = n, .attrs = attrs, .loc = loc, .has_rules = true,
                             .checker_made = true, .demand = true, .limitsize = -1};
    rfx_body *body = NULL;
    int nl = 0;
    for (int i = 0; i < cj->nlits; i++) {
        if (!keep[i])
            continue;
        rfx_lit *copy = salloc(s, sizeof *copy);
        if (!copy)
            return false;
        *copy = *cj->lits[i];
        if (copy->kind == RFX_L_ATOM)
            rfx_clone_atom(s->ctx, &copy->atom, &cj->lits[i]->atom);
        copy->lhs = rfx_clone_expr(s->ctx, cj->lits[i]->lhs);
        copy->rhs = rfx_clone_expr(s->ctx, cj->lits[i]->rhs);
        lits[nl++] = copy;
        if (!(body = and_lit(s, body, copy)))
            return false;
    }
    *conj = (rfx_conj){nl, lits};
    rfx_lit *head = demand_atom(s, r, &rels[r], cj->lits[lit]->atom.args, cj->lits[lit]->atom.nargs, want, loc);
    if (!head)
        return false;
    *into = (rfx_clause){.head = head->atom, .body = body, .nconj = 1, .conj = conj, .nvars = c->nvars,
                         .var_names = c->var_names, .var_types = c->var_types, .loc = c->loc,
                         .instance = c->instance};
    return true;
}

/* Each rule of h given demand relation r's atom over its head's arguments at the places in
 * want, in every conjunction. */
static bool add_demand(sema *s, rfx_relation *rels, rfx_clause *clauses, int nclauses, int h, int r,
                       const bool *want)
{
    for (int k = 0; k < nclauses; k++) {
        rfx_clause *hc = &clauses[k];
        if (hc->head.rel != h)
            continue;
        rfx_lit *atom = demand_atom(s, r, &rels[r], hc->head.args, hc->head.nargs, want, hc->head.loc);
        rfx_conj *cs = salloc(s, sizeof(rfx_conj) * (size_t)hc->nconj);
        if (!atom || !cs)
            return false;
        for (int d = 0; d < hc->nconj; d++) {
            rfx_lit **l = salloc(s, sizeof(rfx_lit *) * (size_t)(hc->conj[d].nlits + 1));
            if (!l)
                return false;
            memcpy(l, hc->conj[d].lits, sizeof(rfx_lit *) * (size_t)hc->conj[d].nlits);
            l[hc->conj[d].nlits] = atom;
            cs[d] = (rfx_conj){hc->conj[d].nlits + 1, l};
        }
        hc->conj = cs;
        if (!(hc->body = and_lit(s, hc->body, atom)))
            return false;
    }
    rels[h].demanded = true;
    return true;
}

/* The demanded arguments of h's literal in its reader, as variables: *key (arena) and its
 * length. Two helpers read in one clause with the same variables demand the same tuples
 * (the literals kept depend on the clause alone): one demand relation serves both. */
static int demand_key(sema *s, const rfx_atom *a, const bool *want, int **key)
{
    int n = 0;
    *key = salloc(s, sizeof(int) * (size_t)(a->nargs + 1));
    for (int i = 0; *key && i < a->nargs; i++)
        if (want[i])
            (*key)[n++] = a->args[i]->u.v.var;
    return n;
}

bool rfx_sema_push_demand(sema *s)
{
    rfx_program *p = s->p;
    const int nrels = p->nrels, nclauses = p->nclauses;
    if (!p->any_output)   /* a LogiQL program without outputs writes every relation it derives */
        return false;
    int most = 0, maxvars = 0;
    for (int ci = 0; ci < nclauses; ci++) {
        for (int d = 0; d < p->clauses[ci].nconj; d++)
            most = p->clauses[ci].conj[d].nlits > most ? p->clauses[ci].conj[d].nlits : most;
        maxvars = p->clauses[ci].nvars > maxvars ? p->clauses[ci].nvars : maxvars;
    }
    uses u = {calloc((size_t)nrels + 1, sizeof(int)), calloc((size_t)nrels + 1, sizeof(int))};
    int *at = malloc(sizeof(int) * 2 * ((size_t)nrels + 1));
    bool *tainted = calloc((size_t)nrels + 1, 1), *pays = calloc((size_t)nrels + 1, 1);
    /* a rule gains one literal at most (its head's demand): most + 1 */
    bool *keep = malloc((size_t)most + 2), *bound = malloc((size_t)maxvars + 1);
    bool *want = malloc((size_t)RFX_MAX_ARITY + 1);
    bool ok = u.refs && u.in_agg && at && tainted && pays && keep && bound && want;
    int n = 0;
    for (int ci = 0; ok && ci < nclauses; ci++)
        walk_clause(&p->clauses[ci], count_use, &u);
    for (int h = 0; ok && h < nrels; h++)
        tainted[h] = candidate(p, &u, h, &at[2 * h], &at[2 * h + 1]);
    for (int h = 0; ok && h < nrels; h++)
        pays[h] = tainted[h];
    ok = ok && taint(p, tainted);
    for (int h = 0; ok && h < nrels; h++)   /* each candidate whose demand would pay */
        if (pays[h]) {
            pays[h] = choose(p, &p->clauses[at[2 * h]], at[2 * h + 1], tainted, keep, bound, want) > 0 &&
                      heads_plain(p, h, want);
            n += pays[h];
        }
    rfx_relation *rels = ok && n ? salloc(s, sizeof(rfx_relation) * (size_t)(nrels + n + 1)) : NULL;
    rfx_clause *clauses = rels ? salloc(s, sizeof(rfx_clause) * (size_t)(nclauses + n + 1)) : NULL;
    int made = 0;
    if (clauses) {
        memcpy(rels, p->rels, sizeof(rfx_relation) * (size_t)nrels);
        memcpy(clauses, p->clauses, sizeof(rfx_clause) * (size_t)nclauses);
        int *by_clause = malloc(sizeof(int) * ((size_t)n + 1)), *by_rel = malloc(sizeof(int) * ((size_t)n + 1)),
            *nkey = malloc(sizeof(int) * ((size_t)n + 1));
        int **keys = malloc(sizeof(int *) * ((size_t)n + 1));
        ok = by_clause && by_rel && nkey && keys;
        for (int h = 0; ok && h < nrels; h++) {
            if (!pays[h])
                continue;
            const int ci = at[2 * h], lit = at[2 * h + 1];
            int k = choose(p, &clauses[ci], lit, tainted, keep, bound, want), *key = NULL;
            int nk = demand_key(s, &clauses[ci].conj[0].lits[lit]->atom, want, &key), same = -1;
            ok = key != NULL;
            for (int m = 0; ok && m < made && same < 0; m++)
                if (by_clause[m] == ci && nkey[m] == nk && memcmp(keys[m], key, sizeof(int) * (size_t)nk) == 0)
                    same = by_rel[m];
            if (ok && same < 0) {
                ok = make_demand(s, rels, &clauses[ci], h, lit, keep, want, k, nrels + made,
                                 &clauses[nclauses + made]);
                by_clause[made] = ci, by_rel[made] = nrels + made, nkey[made] = nk, keys[made] = key;
                same = nrels + made;
                made += ok;
            }
            ok = ok && add_demand(s, rels, clauses, nclauses, h, same, want);
        }
        free(by_clause), free(by_rel), free(nkey), free(keys);
        if (ok) {
            p->rels = rels;
            p->clauses = clauses;
            p->nrels += made;
            p->nclauses += made;
        }
    }
    free(u.refs), free(u.in_agg), free(at), free(tainted), free(pays), free(keep), free(bound), free(want);
    if (!ok)
        s->ctx->oom = true;
    return ok && made > 0;
}
