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

static int by_rel_name(const void *a, const void *b, void *prog)
{
    const rfx_program *p = prog;
    int c = strcmp(p->rels[*(const int *)a].name, p->rels[*(const int *)b].name);
    return c ? c : (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

static void lower_stratum(lower_ctx *L, int s)
{
    const rfx_program *p = L->prog;
    const rfx_stratum *st = &p->strata[s];
    L->stratum = s;
    const int *rules = L->stratum_rules + L->stratum_first[s];
    int nrules = L->stratum_first[s + 1] - L->stratum_first[s];
    if (!st->recursive) {
        for (int k = 0; k < nrules; k++) {
            int ci = rules[k];
            const rfx_clause *c = &p->clauses[ci];
            L->rule = ci;
            for (int d = 0; d < c->nconj; d++)
                rfx_lower_rule(L, c, &c->conj[d], -1, L->relvar[c->head.rel]);
        }
        L->rule = -1;
        return;
    }
    /* base rules: no atom of this stratum in the body */
    for (int k = 0; k < nrules; k++) {
        int ci = rules[k];
        const rfx_clause *c = &p->clauses[ci];
        L->rule = ci;
        for (int d = 0; d < c->nconj; d++) {
            bool rec = false;
            for (int i = 0; i < c->conj[d].nlits; i++) {
                const rfx_lit *l = c->conj[d].lits[i];
                rec |= l->kind == RFX_L_ATOM && in_stratum(p, s, l->atom.rel);
            }
            if (!rec)
                rfx_lower_rule(L, c, &c->conj[d], -1, L->relvar[c->head.rel]);
        }
    }
    L->rule = -1;
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
     * only one contributes (no copy into new_r), else their union in new_r */
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
                if (merged[r])
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
        rfx_ra_cmd *c = rfx_lower_emit(L, RFX_RA_DIFFERENCE, L->newvar[r], from, L->relvar[r]);
        c->nkeys = p->rels[r].arity;
    }
    for (int i = 0; i < st->nrels; i++) {
        int r = st->rels[i];
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
        t[i] = type_prim(L->prog, r->attrs[i].type);
    return t;
}

/* Constant-folds a fact's head argument. */
static bool fold_const(const rfx_expr *e, rfx_prim prim, uint32_t *out)
{
    switch (e->kind) {
    case RFX_E_BINOP: {
        uint32_t a, b;
        if (!fold_const(e->u.bin.lhs, prim, &a) || !fold_const(e->u.bin.rhs, prim, &b))
            return false;
        rfx_rx l = {.kind = RFX_RX_CONST, .prim = prim, .value = a};
        rfx_rx r = {.kind = RFX_RX_CONST, .prim = prim, .value = b};
        rfx_rx x = {.kind = RFX_RX_BIN, .prim = prim, .op = e->u.bin.op, .l = &l, .r = &r};
        bool div0 = false;
        *out = rfx_rx_eval(&x, NULL, 0, NULL, &div0);
        return !div0;
    }
    case RFX_E_NEG: {
        uint32_t a;
        if (!fold_const(e->u.bin.lhs, prim, &a))
            return false;
        rfx_rx l = {.kind = RFX_RX_CONST, .prim = prim, .value = a};
        rfx_rx x = {.kind = RFX_RX_NEG, .prim = prim, .l = &l};
        bool div0 = false;
        *out = rfx_rx_eval(&x, NULL, 0, NULL, &div0);
        return true;
    }
    default: {
        bool ok = true;
        *out = rfx_lower_const_value(e, prim, &ok);
        return ok;
    }
    }
}

/* The device interpreter's instructions for e, and its stack's height, as
 * primitives/gpu_core.cuh's compile_rx lays them out (each leaf pushes, each operator pops one). */
static void device_cost(const rfx_rx *e, int *ins, int *height, int *peak)
{
    if (e->kind == RFX_RX_COL || e->kind == RFX_RX_CONST) {
        ++*ins;
        if (++*height > *peak)
            *peak = *height;
        return;
    }
    device_cost(e->l, ins, height, peak);
    if (e->kind != RFX_RX_NEG) {
        device_cost(e->r, ins, height, peak);
        --*height;
    }
    ++*ins;
}

/* Commands that only the host runs (after the passes, which move expressions between
 * commands): functors (symbols need the host's table), ranges, and expressions past what
 * the device's interpreter holds, so that no command the CPU runs is refused there. */
static void mark_host_only(rfx_plan *P)
{
    for (int b = 0; b < P->nblocks; b++)
        for (int i = 0; i < P->blocks[b].ncmds; i++) {
            rfx_ra_cmd *c = &P->blocks[b].cmds[i];
            c->functors = rfx_rx_host_only(c->pred);
            for (int k = 0; k < c->nout; k++)
                c->functors |= rfx_rx_host_only(c->out[k]);
            c->host_only = c->functors || c->op == RFX_RA_RANGE;
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
        }
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
    if (!(P->fn_env = rfx_fn_env_new(prog->syms)))
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
    for (int s = 0; s < prog->nstrata; s++) {
        const rfx_stratum *st = &prog->strata[s];
        if (!st->recursive)
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
    /* inputs, then inline facts */
    for (int r = 0; r < nr; r++)
        for (int k = 0; k < prog->rels[r].ninputs; k++)
            rfx_lower_emit(L, RFX_RA_INPUT, L->relvar[r], -1, -1)->io = k;
    /* each relation's facts: counted, then written in clause order (one pass each) */
    int *nfacts = lalloc(L, sizeof(int) * (size_t)(nr + 1));
    uint32_t **fact_at = lalloc(L, sizeof(uint32_t *) * (size_t)(nr + 1));
    if (!nfacts || !fact_at)
        goto oom;
    for (int ci = 0; ci < prog->nclauses; ci++)
        if (prog->clauses[ci].is_fact && prog->clauses[ci].head.rel >= 0)
            nfacts[prog->clauses[ci].head.rel]++;
    for (int r = 0; r < nr; r++) {
        if (!nfacts[r])
            continue;
        rfx_ra_cmd *c = rfx_lower_emit(L, RFX_RA_FACTS, L->relvar[r], -1, -1);
        c->ntuples = nfacts[r];
        c->tuples = fact_at[r] = lalloc(L, sizeof(uint32_t) * (size_t)(nfacts[r] * prog->rels[r].arity + 1));
        if (!c->tuples)
            goto oom;
    }
    for (int ci = 0; ci < prog->nclauses; ci++) {
        const rfx_clause *cl = &prog->clauses[ci];
        int r = cl->head.rel;
        if (!cl->is_fact || r < 0)
            continue;
        const rfx_relation *rel = &prog->rels[r];
        for (int a = 0; a < rel->arity; a++) {
            rfx_prim prim = type_prim(prog, rel->attrs[a].type);
            if (!fold_const(cl->head.args[a], prim, &fact_at[r][a]))
                fact_at[r][a] = 0;
        }
        fact_at[r] += rel->arity;
    }
    /* the rules of each stratum, in clause order */
    L->stratum_first = lalloc(L, sizeof(int) * (size_t)(prog->nstrata + 2));
    L->stratum_rules = lalloc(L, sizeof(int) * (size_t)(prog->nclauses + 1));
    if (!L->stratum_first || !L->stratum_rules)
        goto oom;
    for (int ci = 0; ci < prog->nclauses; ci++)
        if (!prog->clauses[ci].is_fact && prog->clauses[ci].head.rel >= 0)
            L->stratum_first[prog->rels[prog->clauses[ci].head.rel].stratum + 2]++;
    for (int s = 0; s < prog->nstrata; s++)
        L->stratum_first[s + 2] += L->stratum_first[s + 1];
    for (int ci = 0; ci < prog->nclauses; ci++)
        if (!prog->clauses[ci].is_fact && prog->clauses[ci].head.rel >= 0)
            L->stratum_rules[L->stratum_first[prog->rels[prog->clauses[ci].head.rel].stratum + 1]++] = ci;
    for (int s = 0; s < prog->nstrata; s++) {
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
    /* in the order of the relations' names, as Soufflé writes them (on stdout, it shows) */
    int *by_name = lalloc(L, sizeof(int) * (size_t)(nr + 1));
    if (!by_name)
        goto oom;
    for (int i = 0; i < nr; i++)
        by_name[i] = i;
    qsort_r(by_name, (size_t)nr, sizeof(int), by_rel_name, (void *)prog);
    for (int i = 0; i < nr; i++) {
        int r = by_name[i];
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
    if (!rfx_plan_find_splits(P))
        goto oom;
    if (!opts || !opts->no_passes) {
        if (!opts || !opts->no_fuse_maps)
            rfx_plan_fuse_maps(P);
        rfx_plan_cse(P);
        rfx_plan_dce(P);
        if (!opts || !opts->no_count_only)
            rfx_plan_count_only(P);
        rfx_plan_schedule(P);
    }
    mark_host_only(P);
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
