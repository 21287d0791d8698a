/* lower_expr.c: a rule's expressions as the scalar programs (rfx_rx) the operators run,
 * over the columns of the pipeline that carries their variables. */
#include "lower_rule.h"

int rfx_lower_agg_var(rule_ctx *R, const rfx_expr *e)
{
    for (int i = 0; i < R->nagg; i++)
        if (R->aggs[i] == e)
            return R->aggvar[i];
    return -1;
}

/* ---- expressions ---------------------------------------------------------------------- */
int rfx_lower_col_of(const flow *f0, const flow *f1, int var)
{
    for (int i = 0; i < f0->n; i++)
        if (f0->schema[i] == var)
            return i;
    if (f1)
        for (int i = 0; i < f1->n; i++)
            if (f1->schema[i] == var)
                return f0->n + i;
    return -1;
}

/* x, a count of 10^-fs, counted in 10^-ts as kind `to` (a decimal's scale changed, or a
 * value converted to or from a decimal); x itself where nothing changes. */
static rfx_rx *rescale(lower_ctx *L, rfx_rx *x, int fs, int ts, rfx_prim to)
{
    if (fs == ts && x->prim == to)
        return x;
    rfx_rx *c = rfx_rx_new(L, RFX_RX_CONV, to);
    c->l = x;
    c->col = fs;
    c->op = ts;
    c->env = ts > fs ? L->plan->fn_env : NULL;   /* places grown: past 64 bits a failure */
    return rfx_rx_fold(c);
}

static bool is_decimal(const rfx_program *p, int t)
{
    return t >= 0 && p->types[t].prim == RFX_DECIMAL;
}

/* A functor call: the operation its arguments' kinds call for. A conversion to the kind the
 * argument has is the argument; as(x, T) and conversions between numbers and unsigned are
 * x's bits, retyped. */
static rfx_rx *tx_functor(rule_ctx *R, const rfx_expr *e, const flow *f0, const flow *f1, rfx_prim prim)
{
    lower_ctx *L = R->L;
    const rfx_program *p = L->prog;
    bool user = e->u.fn.fn == RFX_FN_USER;
    /* a record: the id of its fields' tuple; `@f(..)`: a call of the code bound to functor `field` */
    if (e->u.fn.fn == RFX_FN_RECORD || user) {
        rfx_rx **f = lalloc(L, sizeof(rfx_rx *) * (size_t)(e->u.fn.nargs + 1));
        for (int i = 0; f && i < e->u.fn.nargs; i++)
            f[i] = rfx_lower_expr(R, e->u.fn.args[i], f0, f1, type_prim(p, e->u.fn.args[i]->type));
        rfx_rx *x = !f ? NULL
                       : rfx_rx_fn(L, user ? RFX_FX_USER : RFX_FX_PACK, user ? prim : RFX_UNSIGNED, f, e->u.fn.nargs, e->loc);
        if (x && user)
            x->col = e->u.fn.field;
        return x ? x : rfx_rx_new(L, RFX_RX_CONST, prim);
    }
    if (e->u.fn.fn == RFX_FN_NIL)
        return rfx_rx_new(L, RFX_RX_CONST, RFX_UNSIGNED);   /* 0 */
    rfx_rx *a[3] = {NULL, NULL, NULL};
    for (int i = 0; i < e->u.fn.nargs && i < 3; i++) {
        const rfx_expr *k = e->u.fn.args[i];
        a[i] = rfx_lower_expr(R, k, f0, f1, type_prim(p, k->type));
    }
    rfx_prim ap = a[0] ? a[0]->prim : RFX_NUMBER;
    rfx_loc loc = e->loc;
    /* 64-bit values: their words (sema_widen.c), and conversions to or from them by value */
    switch (e->u.fn.fn) {
    case RFX_FN_PAIR: {
        rfx_rx *x = rfx_rx_new(L, RFX_RX_PAIR, prim);
        x->l = a[0];
        x->r = a[1];
        return rfx_rx_fold(x);
    }
    case RFX_FN_HI: case RFX_FN_LO: {
        if (a[0]->kind == RFX_RX_PAIR)
            return e->u.fn.fn == RFX_FN_HI ? a[0]->l : a[0]->r;
        rfx_rx *x = rfx_rx_new(L, RFX_RX_HALF, RFX_WORD);
        x->op = e->u.fn.fn == RFX_FN_LO;
        x->l = a[0];
        return rfx_rx_fold(x);
    }
    case RFX_FN_DATE_YEAR: case RFX_FN_DATE_MONTH: case RFX_FN_DATE_DAY: case RFX_FN_ADD_MONTHS: {
        rfx_rx *x = rfx_rx_new(L, RFX_RX_CAL, RFX_NUMBER);
        x->op = e->u.fn.fn == RFX_FN_DATE_YEAR ? RFX_CAL_YEAR : e->u.fn.fn == RFX_FN_DATE_MONTH ? RFX_CAL_MONTH
              : e->u.fn.fn == RFX_FN_DATE_DAY  ? RFX_CAL_DAY  : RFX_CAL_ADD_MONTHS;
        x->l = a[0];
        x->r = e->u.fn.fn == RFX_FN_ADD_MONTHS ? a[1] : NULL;
        return rfx_rx_fold(x);
    }
    case RFX_FN_TO_DATE: return rfx_rx_fn(L, RFX_FX_S2D, RFX_NUMBER, a, 1, loc);
    case RFX_FN_TO_STRING:   /* a date's text, not its number of days */
        if (p->types[e->u.fn.args[0]->type].prim == RFX_DATE)
            return rfx_rx_fn(L, RFX_FX_D2S, RFX_SYMBOL, a, 1, loc);
        break;
    case RFX_FN_AS: case RFX_FN_TO_NUMBER: case RFX_FN_TO_UNSIGNED: case RFX_FN_TO_FLOAT:
    {   /* to or from a 64-bit kind or a decimal, by value (as() between 32-bit kinds is
         * Soufflé's: the bits) */
        int fs = type_scale(p, e->u.fn.args[0]->type), ts = e->u.fn.fn == RFX_FN_AS ? type_scale(p, e->u.fn.cast) : 0;
        if (ap != RFX_SYMBOL && (RFX_PRIM_WIDE(ap) || RFX_PRIM_WIDE(prim)) && (ap != prim || fs != ts))
            return rescale(L, a[0], fs, ts, prim);
        break;
    }
    default:
        break;
    }
    switch (e->u.fn.fn) {
    case RFX_FN_CAT: {
        rfx_rx *acc = a[0];
        for (int i = 1; i < e->u.fn.nargs; i++) {
            rfx_rx *pair[2] = {acc, i < 3 ? a[i] : rfx_lower_expr(R, e->u.fn.args[i], f0, f1, RFX_SYMBOL)};
            acc = rfx_rx_fn(L, RFX_FX_CAT, RFX_SYMBOL, pair, 2, loc);
        }
        return acc;
    }
    case RFX_FN_STRLEN: return rfx_rx_fn(L, RFX_FX_STRLEN, RFX_NUMBER, a, 1, loc);
    case RFX_FN_SUBSTR: return rfx_rx_fn(L, RFX_FX_SUBSTR, RFX_SYMBOL, a, 3, loc);
    case RFX_FN_ORD: return rfx_rx_fn(L, RFX_FX_ORD, RFX_NUMBER, a, 1, loc);
    case RFX_FN_CONTAINS: return rfx_rx_fn(L, RFX_FX_CONTAINS, RFX_NUMBER, a, 2, loc);
    case RFX_FN_MATCH: return rfx_rx_fn(L, RFX_FX_MATCH, RFX_NUMBER, a, 2, loc);
    case RFX_FN_LIKE: return rfx_rx_fn(L, RFX_FX_LIKE, RFX_NUMBER, a, 2, loc);
    case RFX_FN_AUTOINC: return rfx_rx_fn(L, RFX_FX_AUTOINC, RFX_NUMBER, a, 0, loc);
    case RFX_FN_TO_NUMBER:
        return ap == RFX_SYMBOL ? rfx_rx_fn(L, RFX_FX_S2I, RFX_NUMBER, a, 1, loc)
             : ap == RFX_FLOAT  ? rfx_rx_fn(L, RFX_FX_F2I, RFX_NUMBER, a, 1, loc)
                                : rfx_rx_retype(L, a[0], RFX_NUMBER);
    case RFX_FN_TO_UNSIGNED:
        return ap == RFX_SYMBOL ? rfx_rx_fn(L, RFX_FX_S2U, RFX_UNSIGNED, a, 1, loc)
             : ap == RFX_FLOAT  ? rfx_rx_fn(L, RFX_FX_F2U, RFX_UNSIGNED, a, 1, loc)
                                : rfx_rx_retype(L, a[0], RFX_UNSIGNED);
    case RFX_FN_TO_FLOAT:
        return ap == RFX_SYMBOL   ? rfx_rx_fn(L, RFX_FX_S2F, RFX_FLOAT, a, 1, loc)
             : ap == RFX_NUMBER   ? rfx_rx_fn(L, RFX_FX_I2F, RFX_FLOAT, a, 1, loc)
             : ap == RFX_UNSIGNED ? rfx_rx_fn(L, RFX_FX_U2F, RFX_FLOAT, a, 1, loc)
                                  : a[0];
    case RFX_FN_TO_STRING:
        return ap == RFX_NUMBER   ? rfx_rx_fn(L, RFX_FX_I2S, RFX_SYMBOL, a, 1, loc)
             : ap == RFX_UNSIGNED ? rfx_rx_fn(L, RFX_FX_U2S, RFX_SYMBOL, a, 1, loc)
             : ap == RFX_FLOAT    ? rfx_rx_fn(L, RFX_FX_F2S, RFX_SYMBOL, a, 1, loc)
                                  : a[0];
    case RFX_FN_AS: return rfx_rx_retype(L, a[0], prim);
    case RFX_FN_FIELD: {
        a[1] = rfx_rx_new(L, RFX_RX_CONST, RFX_UNSIGNED);
        a[1]->value = (uint32_t)e->u.fn.field;
        return rfx_rx_fn(L, RFX_FX_UNPACK, prim, a, 2, loc);
    }
    default:   /* range is a generator, lowered as one (never an operand) */
        L->internal_error = "range() outside a binding";
        return a[0] ? a[0] : rfx_rx_new(L, RFX_RX_CONST, prim);
    }
}

rfx_rx *rfx_lower_expr(rule_ctx *R, const rfx_expr *e, const flow *f0, const flow *f1, rfx_prim want)
{
    lower_ctx *L = R->L;
    const rfx_program *p = L->prog;
    rfx_prim prim = e->type >= 0 ? type_prim(p, e->type) : want;
    switch (e->kind) {
    case RFX_E_VAR:
    case RFX_E_AGG: {
        int v = e->kind == RFX_E_VAR ? e->u.v.var : rfx_lower_agg_var(R, e);
        int col = rfx_lower_col_of(f0, f1, v);
        /* a 64-bit aggregate's result: its words in two variables (apply_aggregate) */
        int lo = RFX_PRIM_WIDE(prim) && e->kind == RFX_E_AGG ? rfx_lower_col_of(f0, f1, v + 1) : 0;
        if (col < 0 || lo < 0) {
            L->internal_error = "variable not available in pipeline";
            col = lo = 0;
        }
        if (RFX_PRIM_WIDE(prim) && e->kind == RFX_E_AGG) {
            rfx_rx *x = rfx_rx_new(L, RFX_RX_PAIR, prim);
            x->l = rfx_rx_col(L, col, RFX_WORD);
            x->r = rfx_rx_col(L, lo, RFX_WORD);
            return x;
        }
        return rfx_rx_col(L, col, prim);
    }
    /* operators over constants are folded here, by the evaluator the backends share,
     * so that the device's expression interpreter gets only what depends on the tuple; a
     * division by a zero constant stays, to fail at run time as it would have */
    case RFX_E_NEG: {
        rfx_rx *x = rfx_rx_new(L, RFX_RX_NEG, prim);
        x->l = rfx_lower_expr(R, e->u.bin.lhs, f0, f1, prim);
        x->loc = e->loc;
        return rfx_rx_fold(x);
    }
    case RFX_E_BINOP: {
        if (prim == RFX_SYMBOL) {   /* Soufflé's `a + b` of symbols: their concatenation (the
                                     * checker allows no other operator on symbols) */
            rfx_rx *pair[2] = {rfx_lower_expr(R, e->u.bin.lhs, f0, f1, prim), rfx_lower_expr(R, e->u.bin.rhs, f0, f1, prim)};
            return rfx_rx_fn(L, RFX_FX_CAT, RFX_SYMBOL, pair, 2, e->loc);
        }
        const rfx_expr *lhs = e->u.bin.lhs, *rhs = e->u.bin.rhs;
        const bool dec = is_decimal(p, e->type) || is_decimal(p, lhs->type) || is_decimal(p, rhs->type);
        rfx_rx *x = rfx_rx_new(L, RFX_RX_BIN, prim);
        x->op = e->u.bin.op;
        x->l = rfx_lower_expr(R, lhs, f0, f1, dec ? RFX_NUMBER64 : prim);
        x->r = rfx_lower_expr(R, rhs, f0, f1, dec ? RFX_NUMBER64 : prim);
        x->loc = e->loc;
        if (!dec)
            return rfx_rx_fold(x);
        /* decimals, as counts of 10^-scale: a quotient of their values as float64s, a product
         * of counts at the scales added, anything else at the result's scale */
        int ls = type_scale(p, lhs->type), rs = type_scale(p, rhs->type), es = type_scale(p, e->type);
        x->env = prim == RFX_NUMBER64 ? L->plan->fn_env : NULL;   /* exact, or a failure past 64 bits */
        if (prim == RFX_FLOAT64) {
            x->l = rescale(L, x->l, ls, 0, RFX_FLOAT64);
            x->r = rescale(L, x->r, rs, 0, RFX_FLOAT64);
            return rfx_rx_fold(x);
        }
        if (x->op == RFX_MUL)
            return rescale(L, rfx_rx_fold(x), ls + rs, es, RFX_NUMBER64);
        x->l = rescale(L, x->l, ls, es, RFX_NUMBER64);
        x->r = rescale(L, x->r, rs, es, RFX_NUMBER64);
        return rfx_rx_fold(x);
    }
    case RFX_E_FN:
        return tx_functor(R, e, f0, f1, prim);
    default: {
        bool ok = true;
        rfx_rx *x = rfx_rx_new(L, RFX_RX_CONST, e->type == RFX_WORD ? RFX_WORD : prim);
        x->value = rfx_lower_const_value(p, e, prim, &ok);
        return x;
    }
    }
}

rfx_prim rfx_lower_expr_prim(rule_ctx *R, const rfx_expr *e)
{
    return type_prim(R->L->prog, e->type);
}

/* The term the body binds variable v to (`v = t`), or NULL. */
static const rfx_expr *bound_term(const rule_ctx *R, int v)
{
    for (int i = 0; i < R->nitems; i++)
        if (R->items[i].kind == IT_BIND && R->items[i].var == v)
            return R->items[i].rhs;
    return NULL;
}

rfx_rx *rfx_lower_cmp(rule_ctx *R, const item *filter, const flow *f0, const flow *f1)
{
    const rfx_cmpop op = filter->cmp;
    const rfx_expr *l = filter->lhs, *r = filter->rhs;
    rfx_prim prim = l->type >= 0 ? rfx_lower_expr_prim(R, l) : rfx_lower_expr_prim(R, r);
    /* `x = y` of two variables unifies them, as Soufflé does: floats equal bit for bit,
     * as a join would match them (against an expression it is IEEE: 0.0 = -0.0); so do the
     * bitwise comparisons that tell tuples apart. But Soufflé first replaces a variable the
     * body binds to a term (`x = t`) by the term, so `x = y` compares t with y as values. */
    bool unify = op == RFX_EQ && l->kind == RFX_E_VAR && r->kind == RFX_E_VAR &&
                 !bound_term(R, l->u.v.var) && !bound_term(R, r->u.v.var);
    bool bits = filter->bitwise || unify;
    rfx_prim cmp_prim = bits && prim == RFX_FLOAT ? RFX_UNSIGNED : bits && prim == RFX_FLOAT64 ? RFX_UNSIGNED64 : prim;
    rfx_rx *x = rfx_rx_new(R->L, RFX_RX_CMP, cmp_prim);
    x->op = op;
    x->l = rfx_lower_expr(R, l, f0, f1, prim);
    x->r = rfx_lower_expr(R, r, f0, f1, prim);
    const rfx_program *p = R->L->prog;
    if (is_decimal(p, l->type) || is_decimal(p, r->type)) {   /* decimals by value, scales apart in 128 bits */
        int ls = type_scale(p, l->type), rs = type_scale(p, r->type);
        x->prim = ls == rs ? RFX_NUMBER64 : RFX_DECIMAL;
        x->col = rs - ls;
    }
    if (prim == RFX_SYMBOL && op != RFX_EQ && op != RFX_NE) {   /* by text: compare(l, r) op 0 */
        rfx_rx *args[2] = {x->l, x->r};
        x->prim = RFX_NUMBER;
        x->l = rfx_rx_fn(R->L, RFX_FX_SYMCMP, RFX_NUMBER, args, 2, l->loc);
        x->r = rfx_rx_new(R->L, RFX_RX_CONST, RFX_NUMBER);   /* value 0 */
    }
    return x;
}

