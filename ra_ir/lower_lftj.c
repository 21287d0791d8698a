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
    /* variable order: variables in more atoms first (they prune most), then first use */
    int order[LFTJ_MAX_VARS], pos[LFTJ_MAX_VARS], deg[LFTJ_MAX_VARS];
    for (int k = 0; k < nv; k++) {
        deg[k] = 0;
        for (int a = 0; a < na; a++)
            deg[k] += has[a][k];
        order[k] = k;
    }
    for (int i = 1; i < nv; i++)
        for (int j = i; j > 0 && deg[order[j]] > deg[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
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
