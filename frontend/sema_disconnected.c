/* sema_disconnected.c: a rule body's parts that share no variable with its head (through
 * the other literals) become nullary relations of their own, as Soufflé's disconnected
 * literals do: `a(x) :- b(x), c(y), d(y, z).` is read as `a(x) :- b(x), +disconnected0().`
 * with `+disconnected0() :- c(y), d(y, z).`.
 *
 * Why: such a part only tests that it has a solution. Joined with the rest it is a product
 * (every b(x) with every solution of c and d) that the head then projects away; made
 * alone it is one nullary tuple, made once. In a recursion it matters even for one atom:
 * semi-naive evaluation runs a version of the rule with each recursive atom read as its
 * delta, and read as a delta a test holds in every iteration where its relation grew, so
 * that version joins the rest of the body over whole relations again, each iteration
 * (`s(v + 1) :- r(_), s(v), v < N.` rereads all of s per step). The nullary relation's delta
 * is non-empty once. The answer is the same (the rewrite is a definition: the relation
 * holds () iff the part has a solution); tuples may arrive an iteration later.
 *
 * Parts are the connected components of the graph whose edges join the variables of one
 * literal (an aggregate's inner variables included), the head's variables making one; as
 * Soufflé, every part without a head variable moves (a literal with no variable stays;
 * `_` is a variable to Soufflé, not to rfx), and so does, in a recursion, an atom with no
 * variable that reads the head's own recursive stratum (an existence test: its own part),
 * except an atom of constants in a stratum that subsumes: Soufflé keeps that one, and
 * moved it would hold an iteration later, while which tuples a subsumption keeps depends
 * on the iteration each arrives in. Kept as written: literals calling
 * autoinc() or a stateful functor (each evaluation counts), subsumptive clauses and
 * clauses with a `.plan` (their literals are numbered). The new relations are marked
 * checker_made and not indexed by name (a program cannot name them: `+` is not a letter
 * of its names). */
#include "sema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool lit_stateful(const rfx_program *p, const rfx_lit *l);

/* Whether e calls something whose every evaluation counts: autoinc() or a stateful functor. */
static bool calls_stateful(const rfx_program *p, const rfx_expr *e)
{
    if (!e)
        return false;
    if (e->kind == RFX_E_FN && (e->u.fn.fn == RFX_FN_AUTOINC ||
                                (e->u.fn.fn == RFX_FN_USER && e->u.fn.field >= 0 && p->functors[e->u.fn.field].stateful)))
        return true;
    if (e->kind == RFX_E_AGG) {
        const rfx_conj *cj = rfx_agg_conj(e);
        bool any = calls_stateful(p, e->u.agg.target);
        for (int i = 0; cj && i < cj->nlits && !any; i++)
            any = lit_stateful(p, cj->lits[i]);
        return any;
    }
    for (int i = 0; i < rfx_expr_nkids(e); i++)
        if (calls_stateful(p, rfx_expr_kid(e, i)))
            return true;
    return false;
}

static bool lit_stateful(const rfx_program *p, const rfx_lit *l)
{
    if (l->kind == RFX_L_CMP)
        return calls_stateful(p, l->lhs) || calls_stateful(p, l->rhs);
    for (int a = 0; (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG) && a < l->atom.nargs; a++)
        if (calls_stateful(p, l->atom.args[a]))
            return true;
    return false;
}

/* Marks in use (cleared first; nvars + 1 entries) the variables of literal l. */
static void lit_vars(const rfx_lit *l, bool *use, int nvars)
{
    memset(use, 0, (size_t)nvars + 1);
    rfx_conj one = {1, (rfx_lit **)&l};
    rfx_conj_vars(&one, use, NULL);
}

static bool has_anon(const rfx_expr *e)
{
    if (e && e->kind == RFX_E_ANON)
        return true;
    for (int i = 0; e && i < rfx_expr_nkids(e); i++)
        if (has_anon(rfx_expr_kid(e, i)))
            return true;
    return false;
}

/* Whether l, an atom without named variables, is an existence test of the head's recursive
 * stratum that moves to a part of its own. Soufflé moves it where it has a `_` (a variable
 * there) and keeps it where every argument is a constant; rfx moves both, except that in a
 * stratum that subsumes (subsumes[st]: there what survives depends on the iteration each
 * tuple arrives in) it keeps Soufflé's choice, and with it Soufflé's timing. */
static bool reads_own_stratum(const rfx_program *p, const bool *subsumes, const rfx_clause *c, const rfx_lit *l)
{
    int st = p->rels[c->head.rel].stratum;
    if (l->kind != RFX_L_ATOM || l->atom.rel < 0 || l->atom.nargs == 0 || p->rels[l->atom.rel].stratum != st)
        return false;
    for (int a = 0; a < l->atom.nargs; a++)
        if (has_anon(l->atom.args[a]))
            return true;
    return !subsumes[st];
}

static int uf_find(int *uf, int v)
{
    while (uf[v] != v)
        v = uf[v] = uf[uf[v]];
    return v;
}

/* Splits one conjunction: part[i] is the new relation (0, 1, ...) literal i moves to, or -1
 * where it stays. Returns the number of new relations; -1 out of memory. */
static int split_conj(const rfx_program *p, const bool *subsumes, const rfx_clause *c, const rfx_conj *cj,
                      int *part)
{
    int nv = c->nvars, head = nv;
    int *uf = malloc(sizeof(int) * (size_t)(nv + 1));
    int *root = malloc(sizeof(int) * (size_t)(cj->nlits + 1));
    bool *use = malloc((size_t)nv + 1);
    if (!uf || !root || !use) {
        free(uf), free(root), free(use);
        return -1;
    }
    for (int v = 0; v <= nv; v++)
        uf[v] = v;
    memset(use, 0, (size_t)nv + 1);
    for (int a = 0; a < c->head.nargs; a++)
        rfx_expr_vars(c->head.args[a], use, NULL);
    for (int v = 0; v < nv; v++)
        if (use[v])
            uf[uf_find(uf, v)] = head;
    for (int i = 0; i < cj->nlits; i++) {
        const rfx_lit *l = cj->lits[i];
        lit_vars(l, use, nv);
        int first = lit_stateful(p, l) ? head : -1;
        for (int v = 0; v < nv; v++)
            if (use[v]) {
                if (first < 0)
                    first = v;
                int a = uf_find(uf, first), b = uf_find(uf, v);
                if (a == head)   /* the head's stays the root of its part */
                    uf[b] = head;
                else if (a != b)
                    uf[a] = b;
            }
        root[i] = first < 0 ? -1 : uf_find(uf, first);
    }
    /* a variable-free atom of the recursion is a part of its own (root -2 - i) */
    for (int i = 0; i < cj->nlits; i++) {
        if (root[i] >= 0)
            root[i] = uf_find(uf, root[i]);
        else if (reads_own_stratum(p, subsumes, c, cj->lits[i]))
            root[i] = -2 - i;
    }
    int nparts = 0;
    for (int i = 0; i < cj->nlits; i++) {
        part[i] = -1;
        int r = root[i];
        bool moves = r <= -2 || (r >= 0 && r != head);
        if (!moves)
            continue;
        for (int j = 0; j < i && part[i] < 0; j++)   /* an earlier literal of the part named it */
            if (root[j] == r && r >= 0)
                part[i] = part[j];
        if (part[i] < 0)
            part[i] = nparts++;
    }
    free(uf), free(root), free(use);
    return nparts;
}

static bool splits(const rfx_clause *c)
{
    return !c->is_fact && !c->subsumptive && c->nplans == 0 && c->head.rel >= 0;
}

/* Relation `+disconnectedN` (nullary) at rels[r] and its clause at *into, whose body is the
 * literals of cj that part names `which` (c: the clause they were in); false out of memory. */
static bool make_disconnected(sema *s, const rfx_clause *c, const rfx_conj *cj, const int *part, int which, int n,
                              int r, rfx_relation *rels, rfx_clause *into)
{
    int nl = 0, first = -1;
    for (int i = 0; i < cj->nlits; i++)
        if (part[i] == which) {
            nl++;
            if (first < 0)
                first = i;
        }
    char *name = salloc(s, 32);
    rfx_lit **lits = salloc(s, sizeof(rfx_lit *) * (size_t)nl);
    rfx_conj *conj = salloc(s, sizeof *conj);
    rfx_body *body = NULL;
    if (!name || !lits || !conj)
        return false;
    snprintf(name, 32, "+disconnected%d", n);
    const rfx_loc loc = cj->lits[first]->loc;
    rels[r] = (rfx_relation){.name = name, .loc = loc, .has_rules = true, .checker_made = true, .limitsize = -1};
    for (int i = 0, k = 0; i < cj->nlits; i++) {
        if (part[i] != which)
            continue;
        rfx_lit *copy = salloc(s, sizeof *copy);
        rfx_body *leaf = salloc(s, sizeof *leaf);
        rfx_body *and = body ? salloc(s, sizeof *and) : NULL;
        if (!copy || !leaf || (body && !and))
            return false;
        *copy = *cj->lits[i];
        lits[k++] = copy;
        *leaf = (rfx_body){.kind = RFX_B_LIT, .lit = copy};
        if (body)
            *and = (rfx_body){.kind = RFX_B_AND, .lhs = body, .rhs = leaf};
        body = body ? and : leaf;
    }
    *conj = (rfx_conj){nl, lits};
    *into = (rfx_clause){.head = {.name = name, .rel = r, .loc = loc}, .body = body, .nconj = 1, .conj = conj,
                         .nvars = c->nvars, .var_names = c->var_names, .var_types = c->var_types,
                         .loc = c->loc, .instance = c->instance};
    return true;
}

bool rfx_sema_split_disconnected(sema *s)
{
    rfx_program *p = s->p;
    int n = 0, nrels = p->nrels, nclauses = p->nclauses, most = 0;
    for (int ci = 0; ci < nclauses; ci++)
        for (int d = 0; d < p->clauses[ci].nconj; d++)
            most = p->clauses[ci].conj[d].nlits > most ? p->clauses[ci].conj[d].nlits : most;
    /* per stratum: whether a subsumptive clause's head is there (reads_own_stratum) */
    bool *subsumes = salloc(s, (size_t)p->nstrata + 1);   /* the arena's memory is zeroed */
    if (!subsumes)
        return false;
    for (int ci = 0; ci < nclauses; ci++)
        if (p->clauses[ci].subsumptive && p->clauses[ci].head.rel >= 0 &&
            p->rels[p->clauses[ci].head.rel].stratum >= 0)
            subsumes[p->rels[p->clauses[ci].head.rel].stratum] = true;
    int *part = malloc(sizeof(int) * (size_t)(most + 1));
    if (!part) {
        s->ctx->oom = true;
        return false;
    }
    for (int ci = 0; ci < nclauses; ci++)
        for (int d = 0; splits(&p->clauses[ci]) && d < p->clauses[ci].nconj; d++) {
            int k = split_conj(p, subsumes, &p->clauses[ci], &p->clauses[ci].conj[d], part);
            if (k < 0) {
                free(part);
                s->ctx->oom = true;
                return false;
            }
            n += k;
        }
    if (!n) {
        free(part);
        return false;
    }
    /* the arrays grown once, in the arena */
    rfx_relation *rels = salloc(s, sizeof(rfx_relation) * (size_t)(nrels + n + 1));
    rfx_clause *clauses = salloc(s, sizeof(rfx_clause) * (size_t)(nclauses + n + 1));
    if (!rels || !clauses) {
        free(part);
        return false;
    }
    memcpy(rels, p->rels, sizeof(rfx_relation) * (size_t)nrels);
    memcpy(clauses, p->clauses, sizeof(rfx_clause) * (size_t)nclauses);
    int made = 0;
    bool ok = true;
    for (int ci = 0; ok && ci < nclauses; ci++)
        for (int d = 0; ok && splits(&clauses[ci]) && d < clauses[ci].nconj; d++) {
            rfx_conj *cj = &clauses[ci].conj[d];
            int k = split_conj(p, subsumes, &clauses[ci], cj, part);
            if (k <= 0) {
                ok = k == 0;
                continue;
            }
            /* the literals that stay, each part's atom where its first literal stood (the
             * conjunction's array is its own; its literals may be shared by disjuncts) */
            rfx_lit **lits = salloc(s, sizeof(rfx_lit *) * (size_t)cj->nlits);
            ok = lits != NULL;
            int nl = 0;
            for (int i = 0; ok && i < cj->nlits; i++) {
                if (part[i] < 0) {
                    lits[nl++] = cj->lits[i];
                    continue;
                }
                bool first = true;
                for (int j = 0; j < i; j++)
                    first &= part[j] != part[i];
                if (!first)
                    continue;
                int r = nrels + made;
                rfx_lit *atom = salloc(s, sizeof *atom);
                ok = atom && make_disconnected(s, &clauses[ci], cj, part, part[i], made, r, rels,
                                               &clauses[nclauses + made]);
                if (!ok)
                    break;
                *atom = (rfx_lit){.kind = RFX_L_ATOM, .loc = cj->lits[i]->loc,
                                  .atom = {.name = rels[r].name, .rel = r, .loc = cj->lits[i]->loc}};
                lits[nl++] = atom;
                made++;
            }
            if (ok)
                *cj = (rfx_conj){nl, lits};
        }
    free(part);
    if (!ok)
        return false;
    p->rels = rels;
    p->clauses = clauses;
    p->nrels += made;
    p->nclauses += made;
    return true;
}
