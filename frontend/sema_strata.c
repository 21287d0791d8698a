/* sema_strata.c: the program's strata: Tarjan's strongly connected components over the
 * relations' dependency graph, in an order that evaluates each after what it reads, and the
 * checks that negation and aggregation do not go through a cycle. */
#include "sema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- stratification (Tarjan's SCC over the relation dependency graph) -------------- */
typedef struct dep {
    int from, to;              /* head depends on body relation */
    bool neg;                  /* through negation or aggregation */
    bool agg;                  /* through aggregation */
    rfx_loc loc;
} dep;

typedef struct graph {
    dep *deps;
    size_t n, cap;
    int *index, *low, *stack, *comp;
    bool *on;
    int sp, counter, ncomp;
} graph;

static void add_deps_expr(sema *s, graph *g, int head, rfx_expr *e, bool neg);

static void add_deps_conj(sema *s, graph *g, int head, rfx_conj *cj, bool neg)
{
    for (int i = 0; i < cj->nlits; i++) {
        rfx_lit *l = cj->lits[i];
        /* a subsumptive clause's two atoms compare what its head holds: no dependency */
        if ((l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG) && l->atom.rel >= 0 && !l->role) {
            if (!rfx_grow((void **)&g->deps, &g->cap, g->n + 1, sizeof(dep))) {
                s->ctx->oom = true;
                return;
            }
            g->deps[g->n++] = (dep){head, l->atom.rel, neg || l->kind == RFX_L_NEG, neg, l->loc};
        }
        if (l->kind == RFX_L_CMP) {
            add_deps_expr(s, g, head, l->lhs, neg);
            add_deps_expr(s, g, head, l->rhs, neg);
        }
        if (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG)
            for (int a = 0; a < l->atom.nargs; a++)
                add_deps_expr(s, g, head, l->atom.args[a], neg);
    }
}

static void add_deps_expr(sema *s, graph *g, int head, rfx_expr *e, bool neg)
{
    (void)neg;
    if (e->kind == RFX_E_AGG && e->u.agg.body) {
        rfx_conj *cj = rfx_agg_conj(e);
        size_t before = g->n;
        add_deps_conj(s, g, head, cj, true);
        for (size_t i = before; i < g->n; i++)
            g->deps[i].loc = e->loc;
    }
    for (int i = 0; i < rfx_expr_nkids(e); i++)
        add_deps_expr(s, g, head, rfx_expr_kid(e, i), neg);
}

static void tarjan(graph *g, int v)
{
    g->index[v] = g->low[v] = g->counter++;
    g->stack[g->sp++] = v;
    g->on[v] = true;
    for (size_t i = 0; i < g->n; i++) {
        if (g->deps[i].from != v)
            continue;
        int w = g->deps[i].to;
        if (g->index[w] < 0) {
            tarjan(g, w);
            if (g->low[w] < g->low[v])
                g->low[v] = g->low[w];
        } else if (g->on[w] && g->index[w] < g->low[v])
            g->low[v] = g->index[w];
    }
    if (g->low[v] == g->index[v]) {
        int w;
        do {
            w = g->stack[--g->sp];
            g->on[w] = false;
            g->comp[w] = g->ncomp;
        } while (w != v);
        g->ncomp++;
    }
}

/* Writes a dependency path from `from` to `to` inside one component into buf. */
static void cycle_path(sema *s, graph *g, int from, int to, char *buf, size_t cap)
{
    int nr = s->p->nrels;
    int *prev = malloc(sizeof(int) * (size_t)nr), *queue = malloc(sizeof(int) * (size_t)nr);
    if (!prev || !queue) {
        free(prev);
        free(queue);
        snprintf(buf, cap, "%s -> ... -> %s", s->p->rels[from].name, s->p->rels[to].name);
        return;
    }
    for (int i = 0; i < nr; i++)
        prev[i] = -2;
    int qh = 0, qt = 0;
    queue[qt++] = from;
    prev[from] = -1;
    while (qh < qt && prev[to] == -2) {
        int v = queue[qh++];
        for (size_t i = 0; i < g->n; i++)
            if (g->deps[i].from == v && g->comp[g->deps[i].to] == g->comp[from] && prev[g->deps[i].to] == -2) {
                prev[g->deps[i].to] = v;
                queue[qt++] = g->deps[i].to;
            }
    }
    /* walk back from `to`, then print forwards, closing the cycle */
    int path[64], np = 0;
    for (int v = to; v >= 0 && np < 64; v = prev[v])
        path[np++] = v;
    size_t len = 0;
    for (int i = np - 1; i >= 0 && len < cap; i--)
        len += (size_t)snprintf(buf + len, cap - len, "%s -> ", s->p->rels[path[i]].name);
    if (len < cap)
        snprintf(buf + len, cap - len, "%s", s->p->rels[from].name);
    free(prev);
    free(queue);
}

void rfx_sema_stratify(sema *s)
{
    rfx_program *p = s->p;
    int nr = p->nrels;
    graph g = {0};
    for (int c = 0; c < p->nclauses; c++) {
        rfx_clause *cl = &p->clauses[c];
        if (cl->head.rel < 0 || cl->is_fact)
            continue;
        for (int i = 0; i < cl->nconj; i++)
            add_deps_conj(s, &g, cl->head.rel, &cl->conj[i], false);
        for (int a = 0; a < cl->head.nargs; a++)
            add_deps_expr(s, &g, cl->head.rel, cl->head.args[a], false);
    }
    g.index = malloc(sizeof(int) * (size_t)(nr + 1));
    g.low = malloc(sizeof(int) * (size_t)(nr + 1));
    g.stack = malloc(sizeof(int) * (size_t)(nr + 1));
    g.comp = malloc(sizeof(int) * (size_t)(nr + 1));
    g.on = calloc((size_t)nr + 1, 1);
    if (!g.index || !g.low || !g.stack || !g.comp || !g.on) {
        s->ctx->oom = true;
        goto out;
    }
    for (int i = 0; i < nr; i++)
        g.index[i] = -1;
    for (int i = 0; i < nr; i++)
        if (g.index[i] < 0)
            tarjan(&g, i);
    /* negation or aggregation inside a component cannot be stratified */
    for (size_t i = 0; i < g.n; i++) {
        dep *d = &g.deps[i];
        if (d->neg && g.comp[d->from] == g.comp[d->to]) {
            char cyc[1024];
            cycle_path(s, &g, d->from, d->to, cyc, sizeof cyc);
            rfx_diag_error(s->d, d->loc, "cannot stratify: '%s' depends on '%s' through %s within the recursive cycle %s",
                           p->rels[d->from].name, p->rels[d->to].name, d->agg ? "aggregation" : "negation", cyc);
        }
    }
    p->nstrata = g.ncomp;
    p->strata = salloc(s, sizeof(rfx_stratum) * (size_t)(g.ncomp + 1));
    if (!p->strata)
        goto out;
    for (int r = 0; r < nr; r++)
        p->strata[g.comp[r]].nrels++;
    for (int c = 0; c < g.ncomp; c++) {
        rfx_stratum *st = &p->strata[c];
        st->rels = salloc(s, sizeof(int) * (size_t)(st->nrels + 1));
        if (!st->rels)
            goto out;
        st->recursive = st->nrels > 1;
        st->nrels = 0;
    }
    for (int r = 0; r < nr; r++) {
        rfx_stratum *st = &p->strata[g.comp[r]];
        st->rels[st->nrels++] = r;
        p->rels[r].stratum = g.comp[r];
    }
    for (size_t i = 0; i < g.n; i++)
        if (g.deps[i].from == g.deps[i].to)
            p->strata[g.comp[g.deps[i].from]].recursive = true;
out:
    free(g.deps);
    free(g.index);
    free(g.low);
    free(g.stack);
    free(g.comp);
    free(g.on);
}
