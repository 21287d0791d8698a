/* lower_program.c: a checked program -> its query plan: the plan's relations and their
 * delta and new variables, inputs and inline facts, each stratum's rules (a recursive one
 * as a semi-naive loop over deltas), outputs; then the plan passes and the verifier. Rule
 * bodies are lowered by lower.c. */
#include "ra_internal.h"
#include "rx_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool in_stratum(const rfx_program *p, int s, int rel)
{
    return rel >= 0 && p->rels[rel].stratum == s;
}

/* Whether clause ci is lowered with its stratum's rules: a rule, or a choice relation's fact. */
static bool in_stratum_rules(const rfx_program *p, int ci, const bool *needed)
{
    const rfx_clause *c = &p->clauses[ci];
    return c->head.rel >= 0 && (!c->is_fact || p->rels[c->head.rel].nchoice) && (!needed || needed[c->head.rel]);
}

/* Whether a relation of stratum s is needed (every one where needed is NULL). */
static bool stratum_needed(const rfx_program *p, int s, const bool *needed)
{
    for (int i = 0; i < p->strata[s].nrels; i++)
        if (!needed || needed[p->strata[s].rels[i]])
            return true;
    return false;
}

static int by_rel_name(const void *a, const void *b, void *prog)
{
    const rfx_program *p = prog;
    int c = strcmp(p->rels[*(const int *)a].name, p->rels[*(const int *)b].name);
    return c ? c : (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* ---- the order of outputs ---------------------------------------------------------- */
/* What Soufflé prints on standard output comes stratum by stratum, in its order of them:
 * by their longest path from a stratum that depends on none, then by the least relation
 * name each holds; a stratum's relations by name. Its strata are those of its rewritten
 * program: an aggregate none of whose variables occurs elsewhere in a body of more than
 * one literal becomes a relation of its own (a stratum more), and disconnected parts
 * relations (rfx's checker makes those too). rfx writes every output at the end, in that
 * order (files do not show it); Soufflé's other rewrites (copies of relations replaced,
 * aggregate bodies materialised) can still order some strata apart. */
typedef struct out_order {
    const rfx_program *p;
    int *depth;                /* per stratum: the longest path to it */
    const char **least;        /* per stratum: its least relation name */
    const rfx_clause *c;       /* the clause walked */
    int head;                  /* its head's stratum */
    int *uses;                 /* per variable of c: its occurrences in c */
    bool many;                 /* its disjunct has more than one literal */
} out_order;

static int conj_need(out_order *o, const rfx_conj *cj);

static void count_uses(const rfx_expr *e, int *uses, int sign)
{
    if (!e)
        return;
    if (e->kind == RFX_E_VAR && e->u.v.var >= 0)
        uses[e->u.v.var] += sign;
    if (e->kind == RFX_E_AGG) {
        const rfx_conj *cj = rfx_agg_conj(e);
        count_uses(e->u.agg.target, uses, sign);
        for (int i = 0; cj && i < cj->nlits; i++) {
            const rfx_lit *l = cj->lits[i];
            count_uses(l->lhs, uses, sign);
            count_uses(l->rhs, uses, sign);
            for (int a = 0; (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG) && a < l->atom.nargs; a++)
                count_uses(l->atom.args[a], uses, sign);
        }
    }
    for (int i = 0; i < rfx_expr_nkids(e); i++)
        count_uses(rfx_expr_kid(e, i), uses, sign);
}

/* Whether no variable of aggregate e is seen elsewhere in the clause: Soufflé then makes
 * it a relation of its own (a stratum more) where the body has other literals. */
static bool single_valued(out_order *o, const rfx_expr *e)
{
    bool *in = calloc((size_t)o->c->nvars + 1, 1);
    if (!in)
        return false;
    rfx_expr_vars(e, in, NULL);
    count_uses(e, o->uses, -1);   /* what is left: the occurrences outside e */
    bool single = true;
    for (int v = 0; v < o->c->nvars; v++)
        single &= !in[v] || o->uses[v] == 0;
    count_uses(e, o->uses, 1);
    free(in);
    return single;
}

/* The depth a clause's head needs for what e reads. */
static int expr_need(out_order *o, const rfx_expr *e)
{
    if (!e)
        return 0;
    int need = 0;
    if (e->kind == RFX_E_AGG) {
        int t = expr_need(o, e->u.agg.target), b = conj_need(o, rfx_agg_conj(e));
        need = t > b ? t : b;
        if (o->many && single_valued(o, e))
            need++;
    }
    for (int i = 0; i < rfx_expr_nkids(e); i++) {
        int k = expr_need(o, rfx_expr_kid(e, i));
        need = k > need ? k : need;
    }
    return need;
}

/* The depth a clause's head needs for what cj reads: one past each stratum read. */
static int conj_need(out_order *o, const rfx_conj *cj)
{
    int need = 0;
    for (int i = 0; cj && i < cj->nlits; i++) {
        const rfx_lit *l = cj->lits[i];
        int k = 0;
        if (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG) {
            int s = l->atom.rel >= 0 ? o->p->rels[l->atom.rel].stratum : -1;
            if (s >= 0 && s != o->head)
                k = o->depth[s] + 1;
            for (int a = 0; a < l->atom.nargs; a++) {
                int x = expr_need(o, l->atom.args[a]);
                k = x > k ? x : k;
            }
        } else if (l->kind == RFX_L_CMP) {
            int x = expr_need(o, l->lhs), y = expr_need(o, l->rhs);
            k = x > y ? x : y;
        }
        need = k > need ? k : need;
    }
    return need;
}

static int by_output_order(const void *a, const void *b, void *ctx)
{
    const out_order *o = ctx;
    const rfx_relation *ra = &o->p->rels[*(const int *)a], *rb = &o->p->rels[*(const int *)b];
    int sa = ra->stratum, sb = rb->stratum;
    if (sa >= 0 && sb >= 0 && sa != sb) {
        if (o->depth[sa] != o->depth[sb])
            return o->depth[sa] < o->depth[sb] ? -1 : 1;
        int c = strcmp(o->least[sa], o->least[sb]);
        if (c)
            return c;
    }
    return by_rel_name(a, b, (void *)o->p);
}

/* The relations in the order their outputs are written (by[0..nrels)). */
static bool output_order(lower_ctx *L, int *by)
{
    const rfx_program *p = L->prog;
    out_order o = {.p = p, .depth = lalloc(L, sizeof(int) * (size_t)(p->nstrata + 1)),
                   .least = lalloc(L, sizeof(char *) * (size_t)(p->nstrata + 1))};
    int *clauses = lalloc(L, sizeof(int) * (size_t)(p->nclauses + 1));
    if (!o.depth || !o.least || !clauses)
        return false;
    for (int s = 0; s < p->nstrata; s++) {
        o.depth[s] = 0;
        o.least[s] = NULL;
    }
    for (int r = 0; r < p->nrels; r++) {
        int s = p->rels[r].stratum;
        if (s >= 0 && (!o.least[s] || strcmp(p->rels[r].name, o.least[s]) < 0))
            o.least[s] = p->rels[r].name;
    }
    /* clauses by their head's stratum: a stratum reads only earlier ones, whose depths are
     * then final (counting sort) */
    int *at = lalloc(L, sizeof(int) * (size_t)(p->nstrata + 2));
    if (!at)
        return false;
    for (int s = 0; s <= p->nstrata + 1; s++)
        at[s] = 0;
    for (int ci = 0; ci < p->nclauses; ci++)
        if (p->clauses[ci].head.rel >= 0 && p->rels[p->clauses[ci].head.rel].stratum >= 0)
            at[p->rels[p->clauses[ci].head.rel].stratum + 2]++;
    for (int s = 0; s < p->nstrata; s++)
        at[s + 2] += at[s + 1];
    int n = 0;
    for (int ci = 0; ci < p->nclauses; ci++)
        if (p->clauses[ci].head.rel >= 0 && p->rels[p->clauses[ci].head.rel].stratum >= 0) {
            clauses[at[p->rels[p->clauses[ci].head.rel].stratum + 1]++] = ci;
            n++;
        }
    for (int k = 0; k < n; k++) {
        const rfx_clause *c = &p->clauses[clauses[k]];
        o.c = c;
        o.head = p->rels[c->head.rel].stratum;
        if (!(o.uses = calloc((size_t)c->nvars + 1, sizeof(int))))
            return false;
        for (int a = 0; a < c->head.nargs; a++)
            count_uses(c->head.args[a], o.uses, 1);
        for (int d = 0; d < c->nconj; d++) {
            const rfx_conj *cj = &c->conj[d];
            for (int i = 0; i < cj->nlits; i++) {
                count_uses(cj->lits[i]->lhs, o.uses, 1);
                count_uses(cj->lits[i]->rhs, o.uses, 1);
                for (int a = 0; (cj->lits[i]->kind == RFX_L_ATOM || cj->lits[i]->kind == RFX_L_NEG) &&
                                a < cj->lits[i]->atom.nargs; a++)
                    count_uses(cj->lits[i]->atom.args[a], o.uses, 1);
            }
        }
        int need = 0;
        for (int d = 0; d < c->nconj; d++) {
            o.many = c->conj[d].nlits > 1;
            int x = conj_need(&o, &c->conj[d]);
            need = x > need ? x : need;
        }
        o.many = c->nconj > 0 && c->conj[0].nlits > 1;
        for (int a = 0; a < c->head.nargs; a++) {
            int x = expr_need(&o, c->head.args[a]);
            need = x > need ? x : need;
        }
        if (need > o.depth[o.head])
            o.depth[o.head] = need;
        free(o.uses);
    }
    for (int i = 0; i < p->nrels; i++)
        by[i] = i;
    qsort_r(by, (size_t)p->nrels, sizeof(int), by_output_order, &o);
    return true;
}

static bool fold_const(const rfx_program *p, const rfx_expr *e, rfx_prim prim, uint64_t *out);

/* A fact's tuple (arity values at out). */
static void fact_tuple(lower_ctx *L, const rfx_clause *cl, uint32_t *out)
{
    const rfx_relation *rel = &L->prog->rels[cl->head.rel];
    for (int a = 0; a < rel->arity; a++) {
        uint64_t v;
        out[a] = fold_const(L->prog, cl->head.args[a], column_prim(L->prog, rel->attrs[a].type), &v) ? (uint32_t)v : 0;
    }
}

/* A relation with `choice-domain`s: v's tuples cut to those that may enter it (CHOICE): no
 * key shared with a tuple it holds, with a new tuple of this iteration (in a loop), or with
 * an earlier tuple of v. Soufflé tries each rule's tuples in its own evaluation order; rfx
 * tries them in tuple order (docs/language.md). */
static int choose(lower_ctx *L, int r, int v, bool in_loop)
{
    int arity = L->plan->vars[L->relvar[r]].arity;
    rfx_prim *types = L->plan->vars[L->relvar[r]].types;
    int t = rfx_lower_new_var(L, NULL, RFX_PV_TEMP, arity, types, -1);
    rfx_ra_cmd *c = rfx_lower_emit(L, RFX_RA_CHOICE, t, v, -1);
    c->vars = lalloc(L, sizeof(int) * 2);
    if (c->vars) {
        c->vars[c->nvars++] = L->relvar[r];
        if (in_loop)
            c->vars[c->nvars++] = L->newvar[r];
    }
    return t;
}

/* Facts rules[k0 .. k1) of one choice relation, in clause order: the first of each key
 * among them (decided here), then those that may enter the relation. */
static void lower_choice_facts(lower_ctx *L, const int *rules, int k0, int k1)
{
    const rfx_program *p = L->prog;
    int r = p->clauses[rules[k0]].head.rel, arity = p->rels[r].arity, n = k1 - k0;
    uint32_t *rows = lalloc(L, sizeof(uint32_t) * (size_t)(n * arity + 1));
    bool *keep = lalloc(L, (size_t)n + 1);
    if (!rows || !keep)
        return;
    for (int k = k0; k < k1; k++)
        fact_tuple(L, &p->clauses[rules[k]], rows + (size_t)(k - k0) * (size_t)arity);
    rfx_choice_domains d = rfx_relation_choice(&p->rels[r]);
    if (rfx_choice_select(&d, arity, NULL, NULL, 0, rows, (size_t)n, keep) != RFX_OK) {
        L->oom = true;
        return;
    }
    int m = 0;
    for (int i = 0; i < n; i++)
        if (keep[i])
            rfx_memcpy(rows + (size_t)m++ * (size_t)arity, rows + (size_t)i * (size_t)arity, sizeof(uint32_t) * (size_t)arity);
    int t = rfx_lower_new_var(L, NULL, RFX_PV_TEMP, arity, L->plan->vars[L->relvar[r]].types, -1);
    rfx_ra_cmd *c = rfx_lower_emit(L, RFX_RA_FACTS, t, -1, -1);
    c->ntuples = m;
    c->tuples = rows;
    rfx_lower_emit(L, RFX_RA_UNION, L->relvar[r], L->relvar[r], choose(L, r, t, false));
}

/* An eqrel relation r: the pairs that the closure of v's pairs and those r holds (held
 * false: none) adds to r, in a fresh variable. */
static int close_eqrel(lower_ctx *L, int r, int v, bool held)
{
    int t = rfx_lower_new_var(L, NULL, RFX_PV_TEMP, 2, L->plan->vars[L->relvar[r]].types, -1);
    rfx_ra_cmd *c = rfx_lower_emit(L, RFX_RA_EQREL, t, v, -1);
    if (held && (c->vars = lalloc(L, sizeof(int))))
        c->vars[c->nvars++] = L->relvar[r];
    return t;
}

/* A relation with lattice attributes: what the tuples of v change in what r holds (held
 * false: as if it held nothing), per key the Lub of their values and the value held, into
 * variable t (-1: a fresh one). */
static int lattice_merge(lower_ctx *L, int r, int v, bool held, int t)
{
    const rfx_program *p = L->prog;
    const rfx_relation *rel = &p->rels[r];
    const rfx_prim *types = L->plan->vars[L->relvar[r]].types;
    int k = rfx_relation_lattice_key(rel);
    if (t < 0)
        t = rfx_lower_new_var(L, NULL, RFX_PV_TEMP, rel->arity, types, -1);
    rfx_ra_cmd *c = rfx_lower_emit(L, RFX_RA_LATTICE, t, v, -1);
    c->nkeys = k;
    c->nout = rel->arity - k;
    c->out = lalloc(L, sizeof(rfx_rx *) * (size_t)(c->nout + 1));
    for (int i = 0; c->out && i < c->nout; i++) {
        const rfx_lattice *lat = &p->lattices[rfx_program_lattice(p, rel->attrs[k + i].type)];
        rfx_prim prim = types[k + i];
        rfx_rx **args = lalloc(L, sizeof(rfx_rx *) * 2);
        for (int a = 0; args && a < 2; a++)
            if ((args[a] = rfx_rx_new(L, RFX_RX_COL, prim)))
                args[a]->col = a;
        c->out[i] = args ? rfx_rx_fn(L, RFX_FX_USER, prim, args, 2, lat->loc) : NULL;
        if (c->out[i])
            c->out[i]->col = lat->lub;
    }
    if (held && (c->vars = lalloc(L, sizeof(int))))
        c->vars[c->nvars++] = L->relvar[r];
    return t;
}

/* The tuples of changed, a lattice merge's (one a key, in order), replace those of their
 * keys in r. */
static void lattice_update(lower_ctx *L, int r, int changed)
{
    int k = rfx_relation_lattice_key(&L->prog->rels[r]);
    /* the keys that changed (no key: the empty tuple, r holding one tuple at most), then r
     * without them */
    int keys = rfx_lower_new_var(L, NULL, RFX_PV_TEMP, k, L->plan->vars[L->relvar[r]].types, -1);
    rfx_ra_cmd *p = rfx_lower_emit(L, RFX_RA_PROJECT, keys, changed, -1);
    p->nout = k;
    p->out = lalloc(L, sizeof(rfx_rx *) * (size_t)(k + 1));
    for (int i = 0; p->out && i < k; i++)
        if ((p->out[i] = rfx_rx_new(L, RFX_RX_COL, L->plan->vars[L->relvar[r]].types[i])))
            p->out[i]->col = i;
    rfx_lower_emit(L, RFX_RA_DIFFERENCE, L->relvar[r], L->relvar[r], keys)->nkeys = k;
    rfx_lower_emit(L, RFX_RA_UNION, L->relvar[r], L->relvar[r], changed)->disjoint = true;
}

static bool has_lattice(const rfx_relation *rel)
{
    return rel->arity && rel->attrs[rel->arity - 1].lattice;
}

/* A rule outside a loop: its tuples into its relation (a relation with lattice attributes:
 * into acc[r], all its rules' tuples, which lower_base_rules then writes). */
static void lower_base_rule(lower_ctx *L, const rfx_clause *c, const rfx_conj *cj, int *acc)
{
    int r = c->head.rel;
    const rfx_relation *rel = &L->prog->rels[r];
    if (!rel->nchoice && !rfx_relation_is_eqrel(rel) && !has_lattice(rel)) {
        rfx_lower_rule(L, c, cj, -1, L->relvar[r]);
        return;
    }
    int v = rfx_lower_rule_set(L, c, cj, -1);
    if (v >= 0 && has_lattice(rel) && acc[r] >= 0) {
        int u = rfx_lower_new_var(L, NULL, RFX_PV_TEMP, rel->arity, L->plan->vars[L->relvar[r]].types, -1);
        rfx_lower_emit(L, RFX_RA_UNION, u, acc[r], v);
        acc[r] = u;
    } else if (v >= 0 && has_lattice(rel))
        acc[r] = v;
    else if (v >= 0 && rel->nchoice)
        rfx_lower_emit(L, RFX_RA_UNION, L->relvar[r], L->relvar[r], choose(L, r, v, false));
    else if (v >= 0)
        rfx_lower_emit(L, RFX_RA_UNION, L->relvar[r], L->relvar[r], close_eqrel(L, r, v, true))->disjoint = true;
}

/* The clauses rules[0 .. n) outside a loop, in clause order (a choice relation's facts among
 * them); with skip_recursive, those reading no relation of stratum s. */
static void lower_base_rules(lower_ctx *L, const int *rules, int n, int s, bool skip_recursive)
{
    const rfx_program *p = L->prog;
    int *acc = lalloc(L, sizeof(int) * (size_t)(p->nrels + 1));
    if (!acc)
        return;
    for (int r = 0; r < p->nrels; r++)
        acc[r] = L->lattice_facts && p->rels[r].stratum == s ? L->lattice_facts[r] : -1;
    for (int k = 0; k < n; k++) {
        int ci = rules[k];
        const rfx_clause *c = &p->clauses[ci];
        if (c->subsumptive)
            continue;
        if (c->is_fact) {
            int k1 = k + 1;
            while (k1 < n && p->clauses[rules[k1]].is_fact && p->clauses[rules[k1]].head.rel == c->head.rel)
                k1++;
            lower_choice_facts(L, rules, k, k1);
            k = k1 - 1;
            continue;
        }
        L->rule = ci;
        for (int d = 0; d < c->nconj; d++) {
            bool rec = false;
            for (int i = 0; skip_recursive && i < c->conj[d].nlits; i++) {
                const rfx_lit *l = c->conj[d].lits[i];
                rec |= l->kind == RFX_L_ATOM && in_stratum(p, s, l->atom.rel);
            }
            if (!rec)
                lower_base_rule(L, c, &c->conj[d], acc);
        }
    }
    L->rule = -1;
    /* the Lub of a key's tuples written over what the relation held, as Soufflé's stratum
     * start writes them (its loop, in contrast, takes the Lub with what is held) */
    for (int r = 0; r < p->nrels; r++)
        if (acc[r] >= 0)
            lattice_update(L, r, lattice_merge(L, r, acc[r], false, -1));
}

/* Subsumption: the tuples of `dominated` (a variable of relation r) that a subsumptive clause
 * of r finds dominated by a tuple of `dominating`, in a fresh variable; -1 when r has no such
 * clause. The join starts from the atom of role `first` (the smaller side), if any. */
static int dominated_set(lower_ctx *L, const int *rules, int n, int r, int dominated, int dominating, int first)
{
    const rfx_program *p = L->prog;
    int roles[3] = {-1, dominated, dominating}, nsets = 0, *sets = NULL;
    size_t cap = 0;
    L->role_src = roles;
    L->role_first = first;
    for (int k = 0; k < n; k++) {
        const rfx_clause *c = &p->clauses[rules[k]];
        if (!c->subsumptive || c->head.rel != r)
            continue;
        L->rule = rules[k];
        for (int d = 0; d < c->nconj; d++) {
            int v = rfx_lower_rule_set(L, c, &c->conj[d], -1);
            if (v >= 0 && rfx_grow((void **)&sets, &cap, (size_t)nsets + 1, sizeof(int)))
                sets[nsets++] = v;
            else if (v >= 0)
                L->oom = true;
        }
    }
    L->rule = -1;
    L->role_src = NULL;
    L->role_first = 0;
    /* one set is the answer as it is; several are gathered in a variable of their own (a
     * rule's result is never changed in place: CSE may share it) */
    int acc = nsets == 1 ? sets[0] : -1;
    if (nsets > 1) {
        acc = rfx_lower_new_var(L, NULL, RFX_PV_TEMP, p->rels[r].arity, L->plan->vars[L->relvar[r]].types, -1);
        rfx_lower_emit(L, RFX_RA_CLEAR, acc, -1, -1);
        for (int i = 0; i < nsets; i++)
            rfx_lower_emit(L, RFX_RA_UNION, acc, acc, sets[i]);
    }
    free(sets);
    return acc;
}

/* from = from - the tuples of del (-1: none). */
static void remove_tuples(lower_ctx *L, int r, int from, int del)
{
    if (del >= 0)
        rfx_lower_emit(L, RFX_RA_DIFFERENCE, from, from, del)->nkeys = L->prog->rels[r].arity;
}

/* Outside a loop, as Soufflé deletes once the relation's rules have run: every tuple of r
 * that another of its tuples dominates. */
static void subsume_all(lower_ctx *L, const int *rules, int n, const rfx_stratum *st)
{
    for (int i = 0; i < st->nrels; i++) {
        int r = st->rels[i];
        if (L->prog->rels[r].subsumed)
            remove_tuples(L, r, L->relvar[r], dominated_set(L, rules, n, r, L->relvar[r], L->relvar[r], 0));
    }
}

static void lower_stratum(lower_ctx *L, int s)
{
    const rfx_program *p = L->prog;
    const rfx_stratum *st = &p->strata[s];
    L->stratum = s;
    const int *rules = L->stratum_rules + L->stratum_first[s];
    int nrules = L->stratum_first[s + 1] - L->stratum_first[s];
    if (!st->recursive) {
        lower_base_rules(L, rules, nrules, s, false);
        subsume_all(L, rules, nrules, st);
        return;
    }
    /* base rules: no atom of this stratum in the body */
    lower_base_rules(L, rules, nrules, s, true);
    subsume_all(L, rules, nrules, st);
    for (int i = 0; i < st->nrels; i++) {
        int r = st->rels[i];
        rfx_lower_emit(L, RFX_RA_COPY, L->deltavar[r], L->relvar[r], -1);
    }
    char *label = lalloc(L, 64);
    if (label)
        snprintf(label, 64, "semi-naive loop of stratum %d", s);
    int head = rfx_lower_new_block(L, label);
    L->plan->blocks[head].loop_head = head;
    /* `.limitsize`: the loop stops before an iteration once a limited relation holds its
     * limit, as Soufflé's stops before merging the tuples of that iteration */
    int nlimited = 0, full_at = -1;
    for (int i = 0; i < st->nrels; i++)
        nlimited += p->rels[st->rels[i]].limitsize >= 0;
    if (nlimited) {
        rfx_ra_cmd *full = rfx_lower_emit(L, RFX_RA_JUMP_IF_FULL, -1, -1, -1);
        full->vars = lalloc(L, sizeof(int) * (size_t)nlimited);
        for (int i = 0; full->vars && i < st->nrels; i++)
            if (p->rels[st->rels[i]].limitsize >= 0)
                full->vars[full->nvars++] = L->relvar[st->rels[i]];
        full_at = L->plan->blocks[head].ncmds - 1;
    }
    /* each relation's tuples of this iteration: the one rule version's set directly when
     * only one contributes (no copy into new_r), else their union in new_r; a choice
     * relation's always in new_r, each version's cut by what new_r holds already */
    int *single = lalloc(L, sizeof(int) * (size_t)(p->nrels + 1));
    if (!single)
        return;
    for (int r = 0; r < p->nrels; r++)
        single[r] = -1;
    bool *merged = lalloc(L, (size_t)p->nrels + 1);
    if (!merged)
        return;
    for (int k = 0; k < nrules; k++) {
        int ci = rules[k];
        const rfx_clause *c = &p->clauses[ci];
        if (c->is_fact || c->subsumptive)
            continue;
        L->rule = ci;
        int r = c->head.rel;
        for (int d = 0; d < c->nconj; d++)
            for (int i = 0, version = 0; i < c->conj[d].nlits; i++) {
                const rfx_lit *l = c->conj[d].lits[i];
                if (l->kind != RFX_L_ATOM || !in_stratum(p, s, l->atom.rel))
                    continue;
                /* version k reads the k-th recursive atom as the delta (Soufflé's numbering) */
                for (int k = 0; k < c->nplans; k++)
                    if (c->plans[k].version == version)
                        L->order = &c->plans[k];
                version++;
                int v = rfx_lower_rule_set(L, c, &c->conj[d], i);
                L->order = NULL;
                if (v < 0)
                    continue;
                if (p->rels[r].nchoice) {
                    rfx_lower_emit(L, RFX_RA_UNION, L->newvar[r], L->newvar[r], choose(L, r, v, true));
                    merged[r] = true;
                } else if (merged[r])
                    rfx_lower_emit(L, RFX_RA_UNION, L->newvar[r], L->newvar[r], v);
                else if (single[r] >= 0) {
                    rfx_lower_emit(L, RFX_RA_UNION, L->newvar[r], single[r], v);
                    merged[r] = true;
                } else
                    single[r] = v;
            }
    }
    L->rule = -1;
    /* Every relation's new tuples are taken before any relation or delta changes: a rule
     * version's set may be another relation's delta itself (a copy rule `p(x) :- q(x).`),
     * which that relation's swap would replace before this one had read it. */
    int *vars = lalloc(L, sizeof(int) * (size_t)(st->nrels + 1));
    for (int i = 0; i < st->nrels; i++) {
        int r = st->rels[i];
        int from = !merged[r] && single[r] >= 0 ? single[r] : L->newvar[r];
        if (rfx_relation_is_eqrel(&p->rels[r])) {   /* what the closure adds */
            rfx_ra_cmd *c = rfx_lower_emit(L, RFX_RA_EQREL, L->newvar[r], from, -1);
            if ((c->vars = lalloc(L, sizeof(int))))
                c->vars[c->nvars++] = L->relvar[r];
            continue;
        }
        if (has_lattice(&p->rels[r])) {   /* the keys whose value this iteration raises */
            lattice_merge(L, r, from, true, L->newvar[r]);
            continue;
        }
        rfx_ra_cmd *c = rfx_lower_emit(L, RFX_RA_DIFFERENCE, L->newvar[r], from, L->relvar[r]);
        c->nkeys = p->rels[r].arity;
    }
    /* subsumption, as Soufflé's: a new tuple that another new one or one held dominates is
     * not taken; a held tuple that a taken one dominates is deleted */
    for (int i = 0; i < st->nrels; i++) {
        int r = st->rels[i];
        if (!p->rels[r].subsumed)
            continue;
        int among_new = dominated_set(L, rules, nrules, r, L->newvar[r], L->newvar[r], 0);
        int by_held = dominated_set(L, rules, nrules, r, L->newvar[r], L->relvar[r], RFX_ROLE_DOMINATED);
        remove_tuples(L, r, L->newvar[r], among_new);
        remove_tuples(L, r, L->newvar[r], by_held);
        remove_tuples(L, r, L->relvar[r], dominated_set(L, rules, nrules, r, L->relvar[r], L->newvar[r], RFX_ROLE_DOMINATING));
    }
    for (int i = 0; i < st->nrels; i++) {
        int r = st->rels[i];
        if (has_lattice(&p->rels[r]))
            lattice_update(L, r, L->newvar[r]);
        else
            rfx_lower_emit(L, RFX_RA_UNION, L->relvar[r], L->relvar[r], L->newvar[r])->disjoint = true;
        rfx_lower_emit(L, RFX_RA_SWAP, L->deltavar[r], L->newvar[r], -1);
        rfx_lower_emit(L, RFX_RA_CLEAR, L->newvar[r], -1, -1);
        if (vars)
            vars[i] = L->deltavar[r];
    }
    int exit_block = L->plan->nblocks;     /* the block created next */
    rfx_ra_cmd *j = rfx_lower_emit(L, RFX_RA_JUMP_IF_EMPTY, -1, -1, -1);
    j->nvars = st->nrels;
    j->vars = vars;
    j->target = exit_block;
    rfx_ra_cmd *back = rfx_lower_emit(L, RFX_RA_JUMP, -1, -1, -1);
    back->target = head;
    if (full_at >= 0)
        L->plan->blocks[head].cmds[full_at].target = exit_block;
    rfx_lower_new_block(L, "after loop");
    for (int i = 0; i < st->nrels; i++) {
        int r = st->rels[i];
        rfx_lower_emit(L, RFX_RA_CLEAR, L->deltavar[r], -1, -1);
    }
}

static rfx_prim *rel_types(lower_ctx *L, const rfx_relation *r)
{
    rfx_prim *t = lalloc(L, sizeof(rfx_prim) * (size_t)(r->arity + 1));
    for (int i = 0; t && i < r->arity; i++)
        t[i] = column_prim(L->prog, r->attrs[i].type);
    return t;
}

/* Constant-folds a fact's head argument (64-bit values through their words' $hi and $lo). */
static bool fold_const(const rfx_program *p, const rfx_expr *e, rfx_prim prim, uint64_t *out)
{
    bool div0 = false;
    switch (e->kind) {
    case RFX_E_BINOP: {
        uint64_t a, b;
        if (!fold_const(p, e->u.bin.lhs, prim, &a) || !fold_const(p, e->u.bin.rhs, prim, &b))
            return false;
        rfx_rx l = {.kind = RFX_RX_CONST, .prim = prim, .value = a};
        rfx_rx r = {.kind = RFX_RX_CONST, .prim = prim, .value = b};
        rfx_rx x = {.kind = RFX_RX_BIN, .prim = prim, .op = e->u.bin.op, .l = &l, .r = &r};
        *out = rfx_rx_eval64(&x, NULL, 0, NULL, &div0);
        return !div0;
    }
    case RFX_E_NEG: {
        uint64_t a;
        if (!fold_const(p, e->u.bin.lhs, prim, &a))
            return false;
        rfx_rx l = {.kind = RFX_RX_CONST, .prim = prim, .value = a};
        rfx_rx x = {.kind = RFX_RX_NEG, .prim = prim, .l = &l};
        *out = rfx_rx_eval64(&x, NULL, 0, NULL, &div0);
        return true;
    }
    case RFX_E_FN: {
        const rfx_expr *a = e->u.fn.args[0];
        if ((e->u.fn.fn != RFX_FN_HI && e->u.fn.fn != RFX_FN_LO) || !fold_const(p, a, type_prim(p, a->type), out))
            return false;
        *out = e->u.fn.fn == RFX_FN_HI ? *out >> 32 : (uint32_t)*out;
        return true;
    }
    default: {
        bool ok = true;
        *out = rfx_lower_const_value(p, e, prim, &ok);
        return ok;
    }
    }
}

/* The device interpreter's instructions for e, and its stack's height, as
 * primitives/gpu_core.cuh's compile_rx lays them out (each leaf pushes, each operator pops one). */
static void device_cost(const rfx_rx *e, int *ins, int *height, int *peak)
{
    if (e->kind == RFX_RX_COL || e->kind == RFX_RX_CONST) {
        *ins += 1 + (e->kind == RFX_RX_CONST && e->value >> 32);   /* a 64-bit constant's high word */
        if (++*height > *peak)
            *peak = *height;
        return;
    }
    if (e->kind == RFX_RX_FN) {   /* its arguments, then the call that takes them */
        for (int i = 0; i < e->nargs; i++)
            device_cost(e->args[i], ins, height, peak);
        *height -= e->nargs - 1;
        ++*ins;
        return;
    }
    device_cost(e->l, ins, height, peak);
    if (e->r) {   /* NEG, HALF, CONV and a one-argument CAL have none */
        device_cost(e->r, ins, height, peak);
        --*height;
    }
    /* an AND whose right side may fail jumps over it where its left rejects (G_ANDIF) */
    *ins += 1 + (e->kind == RFX_RX_AND && rfx_rx_may_fail(e->r));
}

/* Whether e raises a float64 to a power: CUDA's pow of doubles is not correctly rounded
 * where glibc's (and so Soufflé's) is, so the host computes it. */
static bool float64_pow(const rfx_rx *e)
{
    if (!e)
        return false;
    return (e->kind == RFX_RX_BIN && e->op == RFX_POW && e->prim == RFX_FLOAT64) || float64_pow(e->l) ||
           float64_pow(e->r);
}

/* A map or projection whose outputs make symbols the device makes (its filter only reads
 * texts): the device makes them level by level (an argument made first), so that a column
 * of texts need not cross to the host and back; the host makes only the distinct texts the
 * table lacks. */
static bool device_making(const rfx_ra_cmd *c)
{
    if (c->op != RFX_RA_MAP && c->op != RFX_RA_MAPFILTER && c->op != RFX_RA_PROJECT)
        return false;
    if (rfx_rx_host_only(c->pred) || !rfx_rx_device_makes(c->pred))
        return false;
    for (int k = 0; k < c->nout; k++)
        if (!rfx_rx_device_makes(c->out[k]))
            return false;
    return true;
}

/* Commands that only the host runs (after the passes, which move expressions between
 * commands): functors that make symbols or read more than texts, ranges, float64 powers,
 * and expressions past what the device's interpreter holds, so that no command the CPU
 * runs is refused there. Expressions over 64-bit values and the functors that only read
 * texts (like, contains, strlen, the symbols' order: over the device's copy of the symbol
 * table) run in the device's interpreter (no kernel is generated for them). */
static void mark_host_only(rfx_plan *P)
{
    for (int b = 0; b < P->nblocks; b++)
        for (int i = 0; i < P->blocks[b].ncmds; i++) {
            rfx_ra_cmd *c = &P->blocks[b].cmds[i];
            c->functors = rfx_rx_calls(c->pred);
            c->user_functors = rfx_rx_calls_user(c->pred);
            bool host_fn = rfx_rx_host_only(c->pred);
            for (int k = 0; k < c->nout; k++) {
                c->functors |= rfx_rx_calls(c->out[k]);
                c->user_functors |= rfx_rx_calls_user(c->out[k]);
                host_fn |= rfx_rx_host_only(c->out[k]);
            }
            c->wide = rfx_rx_wide(c->pred);
            bool pow64 = float64_pow(c->pred);
            for (int k = 0; k < c->nout; k++) {
                c->wide |= rfx_rx_wide(c->out[k]);
                pow64 |= float64_pow(c->out[k]);
            }
            c->device_makes = host_fn && device_making(c);
            host_fn &= !c->device_makes;
            c->host_only = host_fn || pow64 || c->op == RFX_RA_RANGE || rfx_ra_cmd_reads_held(c);
            int ins = 0, height = 0, peak = 0;
            if (!c->host_only && c->pred) {
                device_cost(c->pred, &ins, &height, &peak);
                ins++, height--;   /* FILTER */
            }
            for (int k = 0; !c->host_only && k < c->nout; k++) {
                device_cost(c->out[k], &ins, &height, &peak);
                ins++, height--;   /* EMIT */
            }
            c->host_only |= ins > RFX_RX_DEVICE_MAX_INS || peak > RFX_RX_DEVICE_MAX_STACK;
            c->device_makes &= !c->host_only;
        }
}

/* Temporaries whose every reader is a SORT_UNIQUE: a join writing one may drop its repeats
 * as it goes (a join's output is often mostly repeats, and holding them costs memory). */
static void mark_set_reads(rfx_plan *P)
{
    for (int v = 0; v < P->nvars; v++)
        P->vars[v].set_read = P->vars[v].kind == RFX_PV_TEMP && !P->vars[v].count_only;
    for (int b = 0; b < P->nblocks; b++)
        for (int i = 0; i < P->blocks[b].ncmds; i++) {
            const rfx_ra_cmd *c = &P->blocks[b].cmds[i];
            for (int k = 0; k < rfx_ra_cmd_ninputs(c); k++) {
                int v = rfx_ra_cmd_input(c, k);
                if (v >= 0 && c->op != RFX_RA_SORT_UNIQUE)
                    P->vars[v].set_read = false;
            }
        }
}

/* The program's `.functor`s, by index, for the runtime to bind to their code. */
static bool declare_functors(rfx_fn_env *env, const rfx_program *prog)
{
    int n = prog->nfunctors;
    rfx_user_sig *sigs = rfx_calloc((size_t)n + 1, sizeof *sigs);
    rfx_prim *prims = rfx_calloc((size_t)n * RFX_MAX_RECORD_FIELDS + 1, sizeof *prims);
    bool ok = sigs && prims;
    for (int i = 0; ok && i < n; i++) {
        const rfx_functor_decl *f = &prog->functors[i];
        rfx_prim *a = prims + (size_t)i * RFX_MAX_RECORD_FIELDS;
        for (int k = 0; k < f->nargs && k < RFX_MAX_RECORD_FIELDS; k++)
            a[k] = type_prim(prog, f->arg_types[k]);
        sigs[i] = (rfx_user_sig){f->name, f->nargs, a, type_prim(prog, f->ret_type), f->stateful};
    }
    ok = ok && rfx_fn_env_declare(env, sigs, n);
    free(sigs);
    free(prims);
    return ok;
}

rfx_plan *rfx_plan_build(const rfx_program *prog, const rfx_plan_opts *opts, rfx_plan_error *err)
{
    rfx_plan *P = rfx_calloc(1, sizeof *P);
    if (!P)
        goto oom;
    P->arena = rfx_arena_new();
    if (!P->arena)
        goto oom;
    P->prog = prog;
    if (!(P->fn_env = rfx_fn_env_new(prog->syms)) || !declare_functors(P->fn_env, prog))
        goto oom;
    lower_ctx Lc = {.plan = P, .prog = prog, .rule = -1, .stratum = -1, .join = opts ? opts->join : RFX_PLAN_JOIN_AUTO};
    lower_ctx *L = &Lc;
    int nr = prog->nrels;
    P->relvar = L->relvar = lalloc(L, sizeof(int) * (size_t)(nr + 1));
    L->deltavar = lalloc(L, sizeof(int) * (size_t)(nr + 1));
    L->newvar = lalloc(L, sizeof(int) * (size_t)(nr + 1));
    if (L->oom)
        goto oom;
    rfx_lower_new_block(L, "load inputs and facts");
    P->unit = rfx_lower_new_var(L, "$unit", RFX_PV_UNIT, 0, NULL, -1);
    for (int r = 0; r < nr; r++) {
        const rfx_relation *rel = &prog->rels[r];
        rfx_prim *t = rel_types(L, rel);
        L->relvar[r] = rfx_lower_new_var(L, rel->name, RFX_PV_REL, rel->arity, t, r);
        L->deltavar[r] = L->newvar[r] = -1;
    }
    /* where only results are seen, the rules of relations no output depends on are left out,
     * and their strata's deltas */
    bool *needed = opts && opts->results_only ? lalloc(L, (size_t)nr + 1) : NULL;
    if (opts && opts->results_only && (!needed || !rfx_plan_needed_relations(prog, needed)))
        goto oom;
    for (int r = 0; needed && r < nr; r++)
        P->vars[L->relvar[r]].unneeded = !needed[r] && prog->rels[r].has_rules;
    for (int s = 0; s < prog->nstrata; s++) {
        const rfx_stratum *st = &prog->strata[s];
        if (!st->recursive || !stratum_needed(prog, s, needed))
            continue;
        for (int i = 0; i < st->nrels; i++) {
            int r = st->rels[i];
            const rfx_relation *rel = &prog->rels[r];
            char name[256];
            snprintf(name, sizeof name, "delta_%s", rel->name);
            L->deltavar[r] = rfx_lower_new_var(L, name, RFX_PV_DELTA, rel->arity, P->vars[L->relvar[r]].types, r);
            snprintf(name, sizeof name, "new_%s", rel->name);
            L->newvar[r] = rfx_lower_new_var(L, name, RFX_PV_NEW, rel->arity, P->vars[L->relvar[r]].types, r);
        }
    }
    /* inputs, then inline facts. A relation with lattice attributes keeps one tuple a key:
     * what was inserted, the Lub of a key's tuples; then, as Soufflé writes them, each input
     * file's last line of a key and then the Lub of its facts replace what it held */
    for (int r = 0; r < nr; r++) {
        bool lattice = has_lattice(&prog->rels[r]);
        if (lattice)
            rfx_lower_emit(L, RFX_RA_SWAP, L->relvar[r], lattice_merge(L, r, L->relvar[r], false, -1), -1);
        for (int k = 0; k < prog->rels[r].ninputs; k++) {
            int t = lattice ? rfx_lower_new_var(L, NULL, RFX_PV_TEMP, prog->rels[r].arity,
                                                P->vars[L->relvar[r]].types, r)
                            : L->relvar[r];
            rfx_lower_emit(L, RFX_RA_INPUT, t, -1, -1)->io = k;
            if (lattice)
                lattice_update(L, r, t);
        }
    }
    /* each relation's facts: counted, then written in clause order (one pass each) */
    int *nfacts = lalloc(L, sizeof(int) * (size_t)(nr + 1));
    if ((L->lattice_facts = lalloc(L, sizeof(int) * (size_t)(nr + 1))))
        for (int r = 0; r < nr; r++)
            L->lattice_facts[r] = -1;
    uint32_t **fact_at = lalloc(L, sizeof(uint32_t *) * (size_t)(nr + 1));
    if (!nfacts || !fact_at)
        goto oom;
    for (int ci = 0; ci < prog->nclauses; ci++)
        if (prog->clauses[ci].is_fact && prog->clauses[ci].head.rel >= 0 && !prog->rels[prog->clauses[ci].head.rel].nchoice)
            nfacts[prog->clauses[ci].head.rel]++;
    for (int r = 0; r < nr; r++) {
        if (!nfacts[r])
            continue;
        bool lattice = has_lattice(&prog->rels[r]);
        int t = lattice ? rfx_lower_new_var(L, NULL, RFX_PV_TEMP, prog->rels[r].arity, P->vars[L->relvar[r]].types, -1)
                        : L->relvar[r];
        rfx_ra_cmd *c = rfx_lower_emit(L, RFX_RA_FACTS, t, -1, -1);
        c->ntuples = nfacts[r];
        c->tuples = fact_at[r] = lalloc(L, sizeof(uint32_t) * (size_t)(nfacts[r] * prog->rels[r].arity + 1));
        if (!c->tuples)
            goto oom;
        if (lattice && prog->rels[r].has_rules && L->lattice_facts)
            L->lattice_facts[r] = t;   /* joined with its rules' first tuples, as Soufflé does */
        else if (lattice)
            lattice_update(L, r, lattice_merge(L, r, t, false, -1));
    }
    for (int ci = 0; ci < prog->nclauses; ci++) {
        const rfx_clause *cl = &prog->clauses[ci];
        int r = cl->head.rel;
        if (!cl->is_fact || r < 0 || !nfacts[r])
            continue;
        fact_tuple(L, cl, fact_at[r]);
        fact_at[r] += prog->rels[r].arity;
    }
    /* an eqrel relation's inputs, facts and inserted pairs, closed */
    for (int r = 0; r < nr; r++)
        if (rfx_relation_is_eqrel(&prog->rels[r]))
            rfx_lower_emit(L, RFX_RA_UNION, L->relvar[r], L->relvar[r], close_eqrel(L, r, L->relvar[r], false));
    /* the rules of each stratum, in clause order (with a choice relation's facts: a rule
     * before a fact may take its key) */
    L->stratum_first = lalloc(L, sizeof(int) * (size_t)(prog->nstrata + 2));
    L->stratum_rules = lalloc(L, sizeof(int) * (size_t)(prog->nclauses + 1));
    if (!L->stratum_first || !L->stratum_rules)
        goto oom;
    for (int ci = 0; ci < prog->nclauses; ci++)
        if (in_stratum_rules(prog, ci, needed))
            L->stratum_first[prog->rels[prog->clauses[ci].head.rel].stratum + 2]++;
    for (int s = 0; s < prog->nstrata; s++)
        L->stratum_first[s + 2] += L->stratum_first[s + 1];
    for (int ci = 0; ci < prog->nclauses; ci++)
        if (in_stratum_rules(prog, ci, needed))
            L->stratum_rules[L->stratum_first[prog->rels[prog->clauses[ci].head.rel].stratum + 1]++] = ci;
    for (int s = 0; s < prog->nstrata; s++) {
        if (!stratum_needed(prog, s, needed))
            continue;
        char *label = lalloc(L, 64);
        if (label)
            snprintf(label, 64, "stratum %d", s);
        if (P->blocks[L->block].ncmds)
            rfx_lower_new_block(L, label);
        else
            P->blocks[L->block].label = label;
        lower_stratum(L, s);
    }
    rfx_lower_new_block(L, "outputs");
    /* a LogiQL program (one with a declaration in LogiQL form) without any output
     * directive outputs every relation it derives; a Soufflé program outputs nothing */
    bool logiql = false;
    for (int r = 0; r < nr; r++)
        logiql |= prog->rels[r].logiql;
    /* in Soufflé's order (on stdout, it shows) */
    int *by_order = lalloc(L, sizeof(int) * (size_t)(nr + 1));
    if (!by_order || !output_order(L, by_order))
        goto oom;
    for (int i = 0; i < nr; i++) {
        int r = by_order[i];
        const rfx_relation *rel = &prog->rels[r];
        for (int k = 0; k < rel->noutputs; k++)
            rfx_lower_emit(L, RFX_RA_OUTPUT, -1, L->relvar[r], -1)->io = k;
        if (logiql && !prog->any_output && (rel->has_rules || rel->logiql))
            rfx_lower_emit(L, RFX_RA_OUTPUT, -1, L->relvar[r], -1)->io = -1;   /* <name>.csv */
        if (rel->io & RFX_REL_PRINTSIZE)
            rfx_lower_emit(L, RFX_RA_PRINTSIZE, -1, L->relvar[r], -1);
    }
    rfx_lower_emit(L, RFX_RA_HALT, -1, -1, -1);
    if (L->oom)
        goto oom;
    if (L->internal_error) {
        if (err) {
            err->internal = true;
            snprintf(err->message, sizeof err->message, "internal error in plan lowering: %s", L->internal_error);
        }
        rfx_plan_free(P);
        return NULL;
    }
    if (!rfx_plan_find_splits(P) || !rfx_plan_find_domains(P) || (opts && opts->results_only && !rfx_plan_mark_unread(P)))
        goto oom;
    if (!opts || !opts->no_passes) {
        if (!opts || !opts->no_fuse_maps)
            rfx_plan_fuse_maps(P);
        rfx_plan_cse(P);
        rfx_plan_fold_order(P);
        rfx_plan_share_group_sorts(P);
        rfx_plan_dce(P);
        if (!opts || !opts->no_count_only)
            rfx_plan_count_only(P);
        rfx_plan_schedule(P);
    }
    rfx_plan_lftj_schedules(P);
    mark_host_only(P);
    mark_set_reads(P);
    char *why = NULL;
    size_t whylen = 0;
    FILE *vout = err ? open_memstream(&why, &whylen) : NULL;
    bool ok = rfx_plan_verify(P, vout);
    if (vout)
        fclose(vout);
    if (!ok) {
        if (err) {
            err->internal = true;
            snprintf(err->message, sizeof err->message, "internal error: plan verifier: %s", why ? why : "");
            err->message[strcspn(err->message, "\n")] = 0;
        }
        free(why);
        rfx_plan_free(P);
        return NULL;
    }
    free(why);
    return P;
oom:
    if (err) {
        err->internal = false;
        snprintf(err->message, sizeof err->message, "out of memory while planning");
    }
    rfx_plan_free(P);
    return NULL;
}

void rfx_plan_free(rfx_plan *plan)
{
    if (!plan)
        return;
    rfx_fn_env_free(plan->fn_env);
    rfx_arena_free(plan->arena);
    free(plan);
}
