/* lower_extreme.c: planner rules for existential comparisons and, at the end, aggregates
 * whose value nothing reads. A body atom with a variable y that one comparison reads and
 * nothing else does,
 *     q(k, x), p(k, y), x < y          (y in no other literal and not in the head)
 * only asks whether some y of p's k-group exceeds x, that is x < max y : { p(k, y) }. Joined
 * as written, each tuple of x's side meets p's whole group: a key with n tuples on both sides
 * makes n^2 rows (a subsumption such as `r(k, a) <= r(k, b) :- a < b.` over one large group
 * does exactly this). As the aggregate, each group is folded once for the keys the rest of
 * the body has, and a tuple meets one value. <, <= ask for the maximum, >, >= the minimum;
 * an empty group binds nothing, as no y would. A test that y differs from x besides (a
 * subsumption's "the tuples differ", `x != y`) makes the comparison strict: x <= y and
 * x != y is x < y. Literals that read y alone (`!excluded(y, _)`, `y != 0`) go into the
 * extreme's body with the atom: some y of the group that passes them exceeds x
 * (`r(a, u) <= r(b, v) :- a < b, !fx(b, _).` asks for the largest b without an fx).
 * Tests `x != y` alone (no ordered comparison) ask whether some y of the group differs from
 * x, that is whether its minimum or its maximum does: `((min y bxor x) bor (max y bxor x))
 * != 0` (TPC-H Q21's `lineitem(k, s), lineitem(k, s2), s != s2`: another supplier on the
 * order, a match per pair of its lines as written).
 * Integers only: a float's NaN has no place in the order a maximum needs. */
#include "lower_rule.h"

#include <stdlib.h>
#include <string.h>

/* Whether the atom's arguments are variables, `_` and constants (nothing computed). */
static bool plain_args(const rfx_atom *a)
{
    for (int i = 0; i < a->nargs; i++)
        switch (a->args[i]->kind) {
        case RFX_E_VAR: case RFX_E_ANON: case RFX_E_INT: case RFX_E_UNSIGNED: case RFX_E_STRING:
            break;
        default:
            return false;
        }
    return true;
}

/* Marks the variables that positive atoms other than cj->lits[skip] name as arguments. */
static void grounded_without(const rfx_conj *cj, int skip, bool *g)
{
    for (int i = 0; i < cj->nlits; i++) {
        const rfx_lit *l = cj->lits[i];
        if (i == skip || l->kind != RFX_L_ATOM)
            continue;
        for (int a = 0; a < l->atom.nargs; a++)
            if (l->atom.args[a]->kind == RFX_E_VAR)
                g[l->atom.args[a]->u.v.var] = true;
    }
}

/* Whether e reads a variable, and every variable it reads is marked in g. */
static bool all_marked(const rfx_expr *e, const bool *g, bool *scratch, int nv)
{
    memset(scratch, 0, (size_t)nv);
    rfx_expr_vars(e, scratch, NULL);
    bool any = false;
    for (int v = 0; v < nv; v++) {
        if (scratch[v] && !g[v])
            return false;
        any |= scratch[v];
    }
    return any;
}

enum { MAX_NE = 4, MAX_LOCAL = 4 };

/* The variable e is, or -1 where it is not a variable. */
static int var_of(const rfx_expr *e)
{
    return e->kind == RFX_E_VAR ? e->u.v.var : -1;
}

/* Marks in use the variables literal l reads. */
static void lit_vars(const rfx_lit *l, bool *use)
{
    if (l->kind == RFX_L_CMP) {
        rfx_expr_vars(l->lhs, use, NULL);
        rfx_expr_vars(l->rhs, use, NULL);
    } else if (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG)
        for (int a = 0; a < l->atom.nargs; a++)
            rfx_expr_vars(l->atom.args[a], use, NULL);
}

/* Marks in use the variables the columns out[0..nout) read. */
static void out_vars(const hcol *out, int nout, bool *use, int nv)
{
    for (int k = 0; k < nout; k++)
        if (out[k].e)
            rfx_expr_vars(out[k].e, use, NULL);
        else if (out[k].var >= 0 && out[k].var < nv)
            use[out[k].var] = true;
}

/* The compared value: a variable, or a 64-bit value's two words (hi, lo), which the
 * checker reads together as `$pair(hi, lo)` (sema_widen.c); lo is -1 for one variable. */
typedef struct value {
    int hi, lo;
} value;

static bool reads(const bool *use, value y)
{
    return use[y.hi] || (y.lo >= 0 && use[y.lo]);
}

/* Whether e is the value y as an expression reads it. */
static bool is_value(const rfx_expr *e, value y)
{
    if (y.lo < 0)
        return var_of(e) == y.hi;
    return e->kind == RFX_E_FN && e->u.fn.fn == RFX_FN_PAIR && e->u.fn.nargs == 2 &&
           var_of(e->u.fn.args[0]) == y.hi && var_of(e->u.fn.args[1]) == y.lo;
}

/* Whether use marks y's variables and no other. */
static bool only(const bool *use, int nv, value y)
{
    for (int v = 0; v < nv; v++)
        if (use[v] != (v == y.hi || v == y.lo))
            return false;
    return true;
}

/* Comparison l's side other than y (NULL where neither side is y, or the other reads y
 * too). */
static const rfx_expr *other_side(const rfx_lit *l, value y, bool *use, int nv)
{
    const rfx_expr *x = is_value(l->lhs, y) ? l->rhs : is_value(l->rhs, y) ? l->lhs : NULL;
    if (!x)
        return NULL;
    memset(use, 0, (size_t)nv);
    rfx_expr_vars(x, use, NULL);
    return reads(use, y) ? NULL : x;
}

/* For atom i of cj and its argument value y: the ordered comparison literal that alone
 * reads y (its index), besides tests `y != x` of the same x (their indices in ne[0..*nne))
 * and negations and comparisons that read y alone (local[0..*nlocal)), or -1 where y is
 * read otherwise too, or by no comparison of the right kind. Where tests `y != x` are all
 * there is, the first of them (*ne_only). */
static int lone_comparison(const rfx_conj *cj, int i, value y, const hcol *out, int nout, bool *use, int nv, int *ne,
                           int *nne, int *local, int *nlocal, bool *ne_only)
{
    *ne_only = false;
    int cmp = -1;
    *nne = *nlocal = 0;
    for (int j = 0; j < cj->nlits; j++) {
        const rfx_lit *l = cj->lits[j];
        memset(use, 0, (size_t)nv);
        if (j == i) {   /* y once in the atom itself */
            int n = 0, m = 0;
            for (int a = 0; a < l->atom.nargs; a++) {
                n += var_of(l->atom.args[a]) == y.hi;
                m += y.lo >= 0 && var_of(l->atom.args[a]) == y.lo;
            }
            if (n != 1 || (y.lo >= 0 && m != 1))
                return -1;
            continue;
        }
        lit_vars(l, use);
        if (!reads(use, y))
            continue;
        if ((l->kind == RFX_L_NEG || l->kind == RFX_L_CMP) && only(use, nv, y) && *nlocal < MAX_LOCAL) {
            local[(*nlocal)++] = j;
            continue;
        }
        const rfx_expr *side = l->kind == RFX_L_CMP ? other_side(l, y, use, nv) : NULL;
        if (side && l->cmp == RFX_NE && *nne < MAX_NE) {
            ne[(*nne)++] = j;
            continue;
        }
        bool ordered = l->kind == RFX_L_CMP && !l->bitwise &&
                       (l->cmp == RFX_LT || l->cmp == RFX_LE || l->cmp == RFX_GT || l->cmp == RFX_GE);
        if (!ordered || !side || cmp >= 0)
            return -1;
        cmp = j;
    }
    memset(use, 0, (size_t)nv);
    out_vars(out, nout, use, nv);
    if (reads(use, y) || (cmp < 0 && *nne == 0))
        return -1;
    if (cmp < 0) {   /* differ tests alone: the first is the comparison, the rest its repeats */
        cmp = ne[0];
        *ne_only = true;
    }
    const rfx_expr *x = other_side(cj->lits[cmp], y, use, nv);
    for (int k = 0; k < *nne; k++) {   /* the differ tests compare y with the same x */
        const rfx_expr *d = other_side(cj->lits[ne[k]], y, use, nv);
        if (!d || !rfx_expr_alike(d, x))
            return -1;
    }
    return cmp;
}

/* Whether atom i of cj, its value y compared by literal j, may become an aggregate: the
 * other side of the comparison reads variables (against a constant the comparison is a
 * selection of the atom, no join) and they and every other variable of the atom read
 * elsewhere (the columns out included) are grounded by the other positive atoms, and y is
 * an integer. */
static bool may_fold(lower_ctx *L, const rfx_clause *c, const rfx_conj *cj, int i, value y, int j, const hcol *out,
                     int nout, bool *g, bool *scratch, int nv)
{
    const rfx_lit *cmp = cj->lits[j];
    const rfx_expr *ys = is_value(cmp->lhs, y) ? cmp->lhs : cmp->rhs, *x = ys == cmp->lhs ? cmp->rhs : cmp->lhs;
    rfx_prim p = y.lo < 0 ? type_prim(L->prog, c->var_types[y.hi]) : ys->type >= 0 ? type_prim(L->prog, ys->type)
                                                                                 : RFX_FLOAT;
    if (y.lo < 0 ? p != RFX_NUMBER && p != RFX_UNSIGNED : p != RFX_NUMBER64 && p != RFX_UNSIGNED64)
        return false;
    memset(g, 0, (size_t)nv);
    grounded_without(cj, i, g);
    if (!all_marked(x, g, scratch, nv))
        return false;
    memset(scratch, 0, (size_t)nv);   /* what is read outside the atom */
    out_vars(out, nout, scratch, nv);
    for (int m = 0; m < cj->nlits; m++)
        if (m != i)
            lit_vars(cj->lits[m], scratch);
    const rfx_atom *a = &cj->lits[i]->atom;
    for (int k = 0; k < a->nargs; k++) {
        int v = var_of(a->args[k]);
        if (v >= 0 && v != y.hi && v != y.lo && scratch[v] && !g[v])
            return false;
    }
    return true;
}

/* A binary operator node over l and r, of type `type`. */
static rfx_expr *binop(lower_ctx *L, rfx_binop op, rfx_expr *l, rfx_expr *r, int type, rfx_loc loc)
{
    rfx_expr *e = lalloc(L, sizeof *e);
    if (e) {
        *e = (rfx_expr){.kind = RFX_E_BINOP, .loc = loc, .type = type,
                        .depth = 1 + (l->depth > r->depth ? l->depth : r->depth)};
        e->u.bin.op = op;
        e->u.bin.lhs = l;
        e->u.bin.rhs = r;
    }
    return e;
}

/* cj less atom i, the differ tests ne[0..nne) and the literals local[0..nlocal) (in the
 * extreme's body, after the atom), with comparison j reading the atom's extreme instead
 * of y (strict where differ tests were); NULL out of memory. The aggregate made is stored
 * in *made (and, ne_only, the maximum in made[1]). */
static rfx_conj *fold(lower_ctx *L, const rfx_conj *cj, int i, value y, int j, const int *ne, int nne,
                      const int *local, int nlocal, bool ne_only, const rfx_expr **made)
{
    const rfx_lit *a = cj->lits[i], *cmp = cj->lits[j];
    bool y_left = is_value(cmp->lhs, y);
    const rfx_expr *target = y_left ? cmp->lhs : cmp->rhs;   /* y as the comparison reads it */
    /* x < y, x <= y, y > x, y >= x: some y above x, the maximum; the others the minimum */
    bool above = y_left ? cmp->cmp == RFX_GT || cmp->cmp == RFX_GE : cmp->cmp == RFX_LT || cmp->cmp == RFX_LE;
    rfx_expr *agg = lalloc(L, sizeof *agg);
    rfx_body *body = lalloc(L, sizeof *body);
    rfx_conj *inner = lalloc(L, sizeof *inner), *res = lalloc(L, sizeof *res);
    rfx_lit **one = lalloc(L, sizeof *one * (size_t)(1 + nlocal)), **lits = lalloc(L, sizeof *lits * (size_t)cj->nlits);
    rfx_lit *nc = lalloc(L, sizeof *nc);
    if (!agg || !body || !inner || !res || !one || !lits || !nc)
        return NULL;
    one[0] = (rfx_lit *)a;
    for (int k = 0; k < nlocal; k++)
        one[1 + k] = cj->lits[local[k]];
    *inner = (rfx_conj){.nlits = 1 + nlocal, .lits = one};
    *body = (rfx_body){.kind = RFX_B_LIT, .lit = (rfx_lit *)a, .flat = inner};
    *agg = (rfx_expr){.kind = RFX_E_AGG, .loc = cmp->loc, .type = target->type, .depth = target->depth + 1};
    agg->u.agg.fn = above ? RFX_AGG_MAX : RFX_AGG_MIN;
    agg->u.agg.target = (rfx_expr *)target;
    agg->u.agg.body = body;
    *nc = *cmp;
    if (ne_only) {   /* some y differs from x: the minimum or the maximum does */
        rfx_expr *hi = lalloc(L, sizeof *hi), *zero = lalloc(L, sizeof *zero);
        rfx_expr *x = (rfx_expr *)(y_left ? cmp->rhs : cmp->lhs);
        if (!hi || !zero)
            return NULL;
        agg->u.agg.fn = RFX_AGG_MIN;
        *hi = *agg;
        hi->u.agg.fn = RFX_AGG_MAX;
        rfx_expr *lo_x = binop(L, RFX_BXOR, agg, x, target->type, cmp->loc);
        rfx_expr *hi_x = binop(L, RFX_BXOR, hi, x, target->type, cmp->loc);
        rfx_expr *either = lo_x && hi_x ? binop(L, RFX_BOR, lo_x, hi_x, target->type, cmp->loc) : NULL;
        if (!either)
            return NULL;
        *zero = (rfx_expr){.kind = RFX_E_INT, .loc = cmp->loc, .type = target->type};
        nc->cmp = RFX_NE;
        nc->bitwise = false;
        nc->lhs = either;
        nc->rhs = zero;
        made[1] = hi;
    } else {
        if (nne)
            nc->cmp = nc->cmp == RFX_LE ? RFX_LT : nc->cmp == RFX_GE ? RFX_GT : nc->cmp;
        if (y_left)
            nc->lhs = agg;
        else
            nc->rhs = agg;
    }
    int n = 0;
    for (int k = 0; k < cj->nlits; k++)
        if (k != i && (k == j || !rfx_lower_listed(ne, nne, k)) && !rfx_lower_listed(local, nlocal, k))
            lits[n++] = k == j ? nc : cj->lits[k];
    *res = (rfx_conj){.nlits = n, .lits = lits};
    *made = agg;
    return res;
}

const rfx_conj *rfx_lower_extremes(lower_ctx *L, const rfx_clause *c, const rfx_conj *cj, int *delta_lit,
                                   const hcol *out, int nout, const rfx_expr **made, int *nmade, int cap)
{
    int nv = c->nvars;
    bool *use = calloc((size_t)nv + 1, 3);
    if (!use) {
        L->oom = true;
        return cj;
    }
    bool *g = use + nv + 1, *scratch = g + nv + 1;
    for (bool again = true; again && *nmade + 2 <= cap && !L->oom;) {
        again = false;
        for (int i = 0; i < cj->nlits && !again; i++) {
            const rfx_lit *l = cj->lits[i];
            /* the delta of a semi-naive version, or the side a subsumption starts from, is the
             * small side the join starts from: folded, the join would start from the other,
             * large one and read all of it */
            if (l->kind != RFX_L_ATOM || i == *delta_lit || (l->role && L->role_src && l->role == L->role_first) ||
                !plain_args(&l->atom))
                continue;
            for (int a = 0; a < l->atom.nargs && !again; a++) {
                int ne[MAX_NE], nne, local[MAX_LOCAL], nlocal, j = -1;
                bool ne_only;
                value y = {var_of(l->atom.args[a]), -1};
                if (y.hi >= 0)
                    j = lone_comparison(cj, i, y, out, nout, use, nv, ne, &nne, local, &nlocal, &ne_only);
                if (j < 0 && y.hi >= 0 && a + 1 < l->atom.nargs && var_of(l->atom.args[a + 1]) >= 0) {
                    y.lo = var_of(l->atom.args[a + 1]);   /* a 64-bit value's words */
                    j = lone_comparison(cj, i, y, out, nout, use, nv, ne, &nne, local, &nlocal, &ne_only);
                }
                if (j < 0 || !may_fold(L, c, cj, i, y, j, out, nout, g, scratch, nv))
                    continue;
                rfx_conj *f = fold(L, cj, i, y, j, ne, nne, local, nlocal, ne_only, &made[*nmade]);
                if (!f) {
                    L->oom = true;
                    break;
                }
                *nmade += ne_only ? 2 : 1;
                int gone = *delta_lit > i;   /* literals before the delta that were dropped */
                for (int k = 0; k < nne; k++)
                    gone += *delta_lit > ne[k] && ne[k] != j;   /* the comparison stays, rewritten */
                for (int k = 0; k < nlocal; k++)
                    gone += *delta_lit > local[k];
                *delta_lit -= gone;
                cj = f;
                again = true;
            }
        }
    }
    free(use);
    return cj;
}

/* ---- aggregates whose value nothing reads ---------------------------------------------
 * `g = max y : { p(k, y), y < x }` with g read nowhere else only asks whether the body has
 * a tuple (a maximum or minimum of nothing binds nothing): its literals joined into the
 * rule's own body say the same (its local variables are the aggregate's alone, numbered
 * apart by the checker), where the existential comparison above may fold them again
 * (`x > min y : { p(k, y) }`), instead of each of the rule's tuples meeting its group to
 * fold a value dropped after. A count or sum of nothing is 0: one value whatever the body
 * holds, so the literal is dropped. Only where nothing in the aggregate can fail (no
 * division, no functor, no 64-bit arithmetic that may overflow a decimal): dropped or
 * joined, it must not turn a run that stopped on an error into one that answers. */

/* Whether evaluating e can fail. */
static bool may_fail(const rfx_program *p, const rfx_expr *e)
{
    switch (e->kind) {
    case RFX_E_VAR: case RFX_E_ANON: case RFX_E_INT: case RFX_E_UNSIGNED: case RFX_E_FLOAT: case RFX_E_STRING:
        return false;
    case RFX_E_NEG: case RFX_E_BINOP:
        if (e->type < 0 || RFX_PRIM_WIDE(type_prim(p, e->type)) ||
            (e->kind == RFX_E_BINOP && (e->u.bin.op == RFX_DIV || e->u.bin.op == RFX_MOD)))
            return true;
        for (int i = 0; i < rfx_expr_nkids(e); i++)
            if (may_fail(p, rfx_expr_kid(e, i)))
                return true;
        return false;
    default:
        return true;
    }
}

/* Whether an aggregate's target and body cannot fail (nothing nested in it aggregates). */
static bool agg_cannot_fail(const rfx_program *p, const rfx_expr *agg)
{
    const rfx_conj *b = rfx_agg_conj(agg);
    if (!b || (agg->u.agg.target && may_fail(p, agg->u.agg.target)))
        return false;
    for (int i = 0; i < b->nlits; i++) {
        const rfx_lit *l = b->lits[i];
        if (l->kind == RFX_L_CMP && (may_fail(p, l->lhs) || may_fail(p, l->rhs)))
            return false;
        for (int a = 0; (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG) && a < l->atom.nargs; a++)
            if (may_fail(p, l->atom.args[a]))
                return false;
    }
    return true;
}

/* The aggregate of literal l when l is `v = aggregate` (either way round) of count, sum,
 * min or max; *v its variable. */
static const rfx_expr *bound_aggregate(const rfx_lit *l, int *v)
{
    if (l->kind != RFX_L_CMP || l->cmp != RFX_EQ)
        return NULL;
    const rfx_expr *agg = l->lhs->kind == RFX_E_AGG ? l->lhs : l->rhs->kind == RFX_E_AGG ? l->rhs : NULL;
    const rfx_expr *var = agg == l->lhs ? l->rhs : l->lhs;
    if (!agg || var->kind != RFX_E_VAR || agg->u.agg.fn == RFX_AGG_MEAN)
        return NULL;
    *v = var->u.v.var;
    return agg;
}

const rfx_conj *rfx_lower_unread_aggregates(lower_ctx *L, const rfx_clause *c, const rfx_conj *cj,
                                            const hcol *out, int nout)
{
    int nv = c->nvars;
    bool *use = calloc((size_t)nv + 1, 1);
    if (!use) {
        L->oom = true;
        return cj;
    }
    for (int i = 0; i < cj->nlits && !L->oom; i++) {
        int v;
        const rfx_expr *agg = bound_aggregate(cj->lits[i], &v);
        if (!agg || v >= nv || !agg_cannot_fail(L->prog, agg))
            continue;
        memset(use, 0, (size_t)nv + 1);
        out_vars(out, nout, use, nv);
        for (int k = 0; k < cj->nlits; k++)
            if (k != i)
                lit_vars(cj->lits[k], use);
        rfx_expr_vars(agg, use, NULL);
        if (use[v])
            continue;
        const rfx_conj *b = rfx_agg_conj(agg);
        bool fold = agg->u.agg.fn == RFX_AGG_MIN || agg->u.agg.fn == RFX_AGG_MAX;
        int n = cj->nlits + (fold && b->nlits > 1 ? b->nlits - 1 : 0);
        rfx_conj *res = lalloc(L, sizeof *res);
        rfx_lit **lits = lalloc(L, sizeof(rfx_lit *) * (size_t)(n + 1));
        rfx_lit *t = lalloc(L, sizeof *t);
        if (!res || !lits || !t)
            break;
        /* literal i's place is taken (the delta's index stays), the rest appended */
        memset(t, 0, sizeof *t);
        t->kind = RFX_L_TRUE;
        t->loc = cj->lits[i]->loc;
        for (int k = 0; k < cj->nlits; k++)
            lits[k] = k != i ? cj->lits[k] : fold && b->nlits ? b->lits[0] : t;
        for (int k = 1; fold && k < b->nlits; k++)
            lits[cj->nlits + k - 1] = b->lits[k];
        *res = (rfx_conj){.nlits = n, .lits = lits};
        cj = res;
        i--;   /* the literal now there may be another such aggregate's */
    }
    free(use);
    return cj;
}
