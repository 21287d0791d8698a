/* lower_lftj.c: the planner's choice of a multi-way join. A body whose atoms' variables
 * form a cyclic hypergraph (a triangle, a clique) joins every atom at once with a leapfrog
 * triejoin (lftj/), whose work is bounded by the worst-case output, where binary joins
 * would build intermediate results far larger than it. */
#include "lower_rule.h"

#include <stdlib.h>
#include <string.h>

#define LFTJ_MAX_ATOMS 32
#define LFTJ_MAX_VARS 64

/* Whether the atoms' variable sets form a cyclic hypergraph (GYO reduction: drop
 * variables found in one atom only and atoms contained in another; acyclic when
 * nothing is left). Triangles and cliques are cyclic; chains and stars are not. */
static bool cyclic(int na, int nv, bool (*has)[LFTJ_MAX_VARS])
{
    bool alive[LFTJ_MAX_ATOMS];
    for (int a = 0; a < na; a++)
        alive[a] = true;
    for (bool changed = true; changed;) {
        changed = false;
        for (int v = 0; v < nv; v++) {
            int n = 0, at = -1;
            for (int a = 0; a < na; a++)
                if (alive[a] && has[a][v]) {
                    n++;
                    at = a;
                }
            if (n == 1) {
                has[at][v] = false;
                changed = true;
            }
        }
        for (int a = 0; a < na; a++) {
            if (!alive[a])
                continue;
            for (int b = 0; b < na; b++) {
                if (b == a || !alive[b])
                    continue;
                bool sub = true;
                for (int v = 0; v < nv && sub; v++)
                    sub = !has[a][v] || has[b][v];
                if (sub) {
                    alive[a] = false;
                    changed = true;
                    break;
                }
            }
        }
    }
    int left = 0;
    for (int a = 0; a < na; a++)
        left += alive[a];
    return left > 1;
}

/* ---- the variable order -------------------------------------------------------------------
 * Each source of a triejoin is read sorted by its variables in the join's order. A source
 * whose columns already come in that order (its variables in column order, constants and
 * repeats filtered out, up to its first `_`) is read as it is; any other is projected and
 * sorted first, and inside a semi-naive loop that happens every iteration for what
 * changes there: the delta and the recursive relations, the largest of all. Binary joins
 * pay that too, but there the join order is free to follow each relation's columns; here
 * one order serves every source, so it is chosen for them: the order that leaves the
 * fewest estimated rows to sort (a loop's recursive relations weigh their estimate, a
 * delta its own, and sources made once outside the loop a thousandth) plus the values its
 * first variable runs over (the smallest estimate among its atoms: a first variable
 * outside the delta would go through a whole relation every iteration), among the orders
 * that bind each variable after the first together with an earlier one (no products);
 * ties, and searches that run too long, keep the plain order (variables in more atoms
 * first, they prune most; then first use). */
#define ORDER_SEARCH_NODES 20000

typedef struct order_search {
    int na, nv;
    bool (*has)[LFTJ_MAX_VARS];
    int nat[LFTJ_MAX_ATOMS][LFTJ_MAX_VARS], nnat[LFTJ_MAX_ATOMS];   /* each source's order as read */
    double w[LFTJ_MAX_ATOMS];        /* rows to sort where the order breaks it (0: sorted anyway) */
    double first[LFTJ_MAX_VARS];     /* the values a variable runs over as the first */
    int plain[LFTJ_MAX_VARS];        /* the plain order, tried first at every step */
    int cur[LFTJ_MAX_VARS], best[LFTJ_MAX_VARS], got[LFTJ_MAX_ATOMS];
    bool placed[LFTJ_MAX_VARS], broken[LFTJ_MAX_ATOMS];
    double best_cost;
    long nodes;
} order_search;

static bool shares_atom(const order_search *S, int v)
{
    for (int a = 0; a < S->na; a++)
        if (S->has[a][v])
            for (int u = 0; u < S->nv; u++)
                if (S->placed[u] && S->has[a][u])
                    return true;
    return false;
}

static void search_order(order_search *S, int depth, double cost)
{
    if (cost >= S->best_cost || S->nodes++ > ORDER_SEARCH_NODES)
        return;
    if (depth == S->nv) {
        S->best_cost = cost;
        memcpy(S->best, S->cur, sizeof(int) * (size_t)S->nv);
        return;
    }
    bool joined = false;   /* some unplaced variable shares an atom with the placed ones */
    for (int i = 0; depth > 0 && i < S->nv && !joined; i++)
        joined = !S->placed[S->plain[i]] && shares_atom(S, S->plain[i]);
    for (int i = 0; i < S->nv; i++) {
        int v = S->plain[i];
        if (S->placed[v] || (joined && !shares_atom(S, v)))
            continue;
        double c = cost + (depth == 0 ? S->first[v] : 0);
        int moved[LFTJ_MAX_ATOMS], nm = 0, broke[LFTJ_MAX_ATOMS], nb = 0;
        for (int a = 0; a < S->na; a++) {
            if (!S->has[a][v] || S->broken[a] || S->w[a] == 0)
                continue;
            if (S->got[a] < S->nnat[a] && S->nat[a][S->got[a]] == v) {
                S->got[a]++;
                moved[nm++] = a;
            } else {
                S->broken[a] = true;
                broke[nb++] = a;
                c += S->w[a];
            }
        }
        S->placed[v] = true;
        S->cur[depth] = v;
        search_order(S, depth + 1, c);
        S->placed[v] = false;
        for (int k = 0; k < nm; k++)
            S->got[moved[k]]--;
        for (int k = 0; k < nb; k++)
            S->broken[broke[k]] = false;
    }
}

/* order[0..nv): the variables (indexes into vars) in the triejoin's order, chosen as above. */
static void choose_order(lower_ctx *L, item *const *atoms, int na, const int *vars, int nv,
                         bool (*has)[LFTJ_MAX_VARS], int *order)
{
    order_search *S = calloc(1, sizeof *S);
    int deg[LFTJ_MAX_VARS];
    for (int k = 0; k < nv; k++) {
        deg[k] = 0;
        for (int a = 0; a < na; a++)
            deg[k] += has[a][k];
        order[k] = k;
    }
    for (int i = 1; i < nv; i++)   /* the plain order */
        for (int j = i; j > 0 && deg[order[j]] > deg[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    if (!S)
        return;   /* the plain order, then */
    S->na = na, S->nv = nv, S->has = has;
    memcpy(S->plain, order, sizeof(int) * (size_t)nv);
    bool in_loop = false;
    for (int a = 0; a < na; a++)
        in_loop |= atoms[a]->delta;
    for (int a = 0; a < na; a++) {
        const item *it = atoms[a];
        bool after_anon = false, seen[LFTJ_MAX_VARS] = {false};
        for (int i = 0; i < it->atom->nargs; i++) {
            int v = it->argvar[i], k = 0;
            if (it->argconst[i])
                continue;
            if (v < 0) {
                after_anon = true;
                continue;
            }
            while (vars[k] != v)
                k++;
            if (seen[k])
                continue;
            seen[k] = true;
            if (after_anon)   /* a variable after a `_` is not in column order: sorted anyway */
                S->nnat[a] = -1;
            else if (S->nnat[a] >= 0)
                S->nat[a][S->nnat[a]++] = k;
        }
        const rfx_pvar *pv = &L->plan->vars[it->src];
        bool changes = pv->kind == RFX_PV_DELTA ||
                       (pv->kind == RFX_PV_REL && pv->rel >= 0 && L->prog->rels[pv->rel].stratum == L->stratum);
        S->w[a] = S->nnat[a] < 0 ? 0 : !in_loop || changes ? it->est : it->est / 1000;
        S->nnat[a] = S->nnat[a] < 0 ? 0 : S->nnat[a];
    }
    for (int k = 0; k < nv; k++) {
        S->first[k] = -1;
        for (int a = 0; a < na; a++)
            if (has[a][k] && (S->first[k] < 0 || atoms[a]->est < S->first[k]))
                S->first[k] = atoms[a]->est;
    }
    /* the plain order's cost bounds the search: only a cheaper one replaces it */
    S->best_cost = nv ? S->first[order[0]] : 0;
    for (int a = 0; a < na; a++) {
        int got = 0;
        for (int i = 0; i < nv && S->w[a] > 0; i++)
            if (has[a][order[i]] && !(got < S->nnat[a] && S->nat[a][got++] == order[i])) {
                S->best_cost += S->w[a];
                break;
            }
    }
    memcpy(S->best, order, sizeof(int) * (size_t)nv);
    search_order(S, 0, 0);
    memcpy(order, S->best, sizeof(int) * (size_t)nv);
    free(S);
}

/* Joins every positive atom of the body at once with a leapfrog triejoin when the
 * choice says so (auto: a cyclic body of three or more atoms). Each atom is scanned
 * (constants, repeated variables and its own comparisons applied), its columns put in
 * the variable order and sorted; the result binds every atom variable, sorted. */
bool rfx_lower_try_lftj(rule_ctx *R, flow *cur)
{
    lower_ctx *L = R->L;
    if (L->join == RFX_PLAN_JOIN_BINARY)
        return false;
    item *atoms[LFTJ_MAX_ATOMS];
    int na = 0;
    for (int k = 0; k < R->nitems; k++) {
        item *it = &R->items[k];
        if (it->done || it->kind != IT_ATOM)
            continue;
        if (na == LFTJ_MAX_ATOMS)
            return false;
        atoms[na++] = it;
    }
    if (na < (L->join == RFX_PLAN_JOIN_LFTJ ? 2 : 3))
        return false;
    /* the variables, numbered by first appearance */
    int vars[LFTJ_MAX_VARS], nv = 0;
    bool (*has)[LFTJ_MAX_VARS] = calloc(LFTJ_MAX_ATOMS, sizeof *has);
    if (!has) {
        L->oom = true;
        return false;
    }
    bool ok = true;
    for (int a = 0; a < na && ok; a++) {
        int nav = 0;
        for (int i = 0; i < atoms[a]->atom->nargs && ok; i++) {
            int v = atoms[a]->argvar[i];
            if (v < 0 || atoms[a]->argconst[i])
                continue;
            int k = 0;
            while (k < nv && vars[k] != v)
                k++;
            if (k == nv) {
                if (nv == LFTJ_MAX_VARS) {
                    ok = false;
                    break;
                }
                vars[nv++] = v;
            }
            nav += !has[a][k];
            has[a][k] = true;
        }
        ok &= nav > 0;
    }
    bool copy[LFTJ_MAX_ATOMS][LFTJ_MAX_VARS];
    memcpy(copy, has, sizeof copy);
    if (!ok || (L->join == RFX_PLAN_JOIN_AUTO && !cyclic(na, nv, copy))) {
        free(has);
        return false;
    }
    int order[LFTJ_MAX_VARS], pos[LFTJ_MAX_VARS];
    choose_order(L, atoms, na, vars, nv, has, order);
    for (int i = 0; i < nv; i++)
        pos[order[i]] = i;
    int *srcs = lalloc(L, sizeof(int) * (size_t)na), *colvar = lalloc(L, sizeof(int) * (size_t)(na * nv + 1));
    rfx_prim *types = lalloc(L, sizeof(rfx_prim) * (size_t)nv);
    int *schema = lalloc(L, sizeof(int) * (size_t)nv);
    if (!srcs || !colvar || !types || !schema) {
        free(has);
        return false;
    }
    int off = 0;
    for (int a = 0; a < na; a++) {
        flow f = rfx_lower_scan_atom(R, atoms[a], true, NULL);
        atoms[a]->done = true;
        int keys[LFTJ_MAX_VARS], k = 0;
        for (int i = 0; i < nv; i++)
            if (has[a][order[i]])
                keys[k++] = vars[order[i]];
        f = rfx_lower_ensure_order(R, f, keys, k, NULL, false);
        if (L->oom || f.n != k) {
            free(has);
            L->internal_error = L->oom ? NULL : "leapfrog triejoin source has unexpected columns";
            return true;
        }
        srcs[a] = f.var;
        for (int c = 0; c < k; c++) {
            int kk = 0;
            while (vars[kk] != f.schema[c])
                kk++;
            colvar[off + c] = pos[kk];
            types[pos[kk]] = L->plan->vars[f.var].types[c];
        }
        off += k;
    }
    free(has);
    for (int i = 0; i < nv; i++)
        schema[i] = vars[order[i]];
    int dst = rfx_lower_new_var(L, NULL, RFX_PV_TEMP, nv, types, -1);
    rfx_ra_cmd *c = rfx_lower_emit(L, RFX_RA_LFTJ, dst, -1, -1);
    if (!c)
        return true;
    c->nvars = na;
    c->vars = srcs;
    c->colvar = colvar;
    c->nkeys = nv;
    *cur = (flow){dst, nv, schema, nv, true};
    for (int i = 0; i < nv; i++)
        R->bound[vars[i]] = true;
    return true;
}
