/* expr.c: scalar expression evaluation on one tuple (semantics in rx_ops.h, shared with
 * the CUDA kernels), and the names of the value kinds. */
#include "base.h"
#include "rx_ops.h"
#include "text_ops.h"

void rfx_rx_overflow(const rfx_rx *e, bool *fail)
{
    *fail = true;
    rfx_fn_env_note(e->env, "a decimal value overflows 64 bits (18 digits)");
}

uint64_t rfx_rx_eval64(const rfx_rx *e, const uint32_t *t0, int a0, const uint32_t *t1, bool *div0)
{
    switch (e->kind) {
    case RFX_RX_COL:
        return e->col < a0 ? t0[e->col] : t1[e->col - a0];
    case RFX_RX_CONST:
        return e->value;
    case RFX_RX_BIN: {
        uint64_t l = rfx_rx_eval64(e->l, t0, a0, t1, div0), r = rfx_rx_eval64(e->r, t0, a0, t1, div0);
        if (rfx_rx_checked(e)) {   /* decimals: exact or fail */
            bool over = false;
            int64_t v = rfx_checked64(e->op, (int64_t)l, (int64_t)r, &over);
            if (over)
                rfx_rx_overflow(e, div0);
            return (uint64_t)v;
        }
        return RFX_PRIM_WIDE(e->prim) ? rfx_binary64(e->op, e->prim, l, r, div0)
                                      : rfx_binary(e->op, e->prim, (uint32_t)l, (uint32_t)r, div0);
    }
    case RFX_RX_NEG: {
        uint64_t l = rfx_rx_eval64(e->l, t0, a0, t1, div0);
        return RFX_PRIM_WIDE(e->prim) ? rfx_negate64(e->prim, l) : rfx_negate(e->prim, (uint32_t)l);
    }
    case RFX_RX_CMP: {
        uint64_t l = rfx_rx_eval64(e->l, t0, a0, t1, div0), r = rfx_rx_eval64(e->r, t0, a0, t1, div0);
        if (e->prim == RFX_DECIMAL)   /* decimals of scales col apart */
            return rfx_compare_scaled(e->op, (int64_t)l, (int64_t)r, e->col);
        return RFX_PRIM_WIDE(e->prim) ? rfx_compare64(e->op, e->prim, l, r)
                                      : rfx_compare(e->op, e->prim, (uint32_t)l, (uint32_t)r);
    }
    case RFX_RX_AND:
        return rfx_rx_eval64(e->l, t0, a0, t1, div0) && rfx_rx_eval64(e->r, t0, a0, t1, div0);
    case RFX_RX_PAIR:
        return (uint64_t)(uint32_t)rfx_rx_eval64(e->l, t0, a0, t1, div0) << 32 |
               (uint32_t)rfx_rx_eval64(e->r, t0, a0, t1, div0);
    case RFX_RX_HALF: {
        uint64_t v = rfx_rx_eval64(e->l, t0, a0, t1, div0);
        return e->op == 0 ? v >> 32 : (uint32_t)v;
    }
    case RFX_RX_CONV: {
        uint64_t v = rfx_rx_eval64(e->l, t0, a0, t1, div0);
        bool over = false;
        v = rfx_convert_checked(e->l->prim, e->col, e->prim, e->op, e->env != NULL, v, &over);
        if (over)
            rfx_rx_overflow(e, div0);   /* a decimal's places grown past 64 bits */
        return v;
    }
    case RFX_RX_CAL:
        return rfx_calendar(e->op, (uint32_t)rfx_rx_eval64(e->l, t0, a0, t1, div0),
                            e->r ? (uint32_t)rfx_rx_eval64(e->r, t0, a0, t1, div0) : 0);
    case RFX_RX_FN: {
        uint32_t v[RFX_MAX_RECORD_FIELDS] = {0, 0, 0};
        int n = e->nargs < RFX_MAX_RECORD_FIELDS ? e->nargs : RFX_MAX_RECORD_FIELDS;
        for (int i = 0; i < n; i++)
            v[i] = (uint32_t)rfx_rx_eval64(e->args[i], t0, a0, t1, div0);
        if (e->op == RFX_FX_USER)
            return rfx_fn_apply_user(e->env, e->col, v, n, div0);
        return rfx_fn_apply(e->env, (rfx_fn_op)e->op, v, n, div0);
    }
    }
    return 0;
}

uint32_t rfx_rx_eval(const rfx_rx *e, const uint32_t *t0, int a0, const uint32_t *t1, bool *div0)
{
    return (uint32_t)rfx_rx_eval64(e, t0, a0, t1, div0);
}

bool rfx_rx_wide(const rfx_rx *e)
{
    if (!e)
        return false;
    if (e->kind == RFX_RX_PAIR || e->kind == RFX_RX_HALF || e->kind == RFX_RX_CONV || e->kind == RFX_RX_CAL ||
        RFX_PRIM_WIDE(e->prim))
        return true;
    if (e->kind == RFX_RX_FN) {
        for (int i = 0; i < e->nargs; i++)
            if (rfx_rx_wide(e->args[i]))
                return true;
        return false;
    }
    return rfx_rx_wide(e->l) || rfx_rx_wide(e->r);
}

/* Whether e holds a functor call (its arguments' included) for which hit holds. */
static bool any_call(const rfx_rx *e, bool (*hit)(const rfx_rx *))
{
    if (!e)
        return false;
    if (e->kind == RFX_RX_FN) {
        if (hit(e))
            return true;
        for (int i = 0; i < e->nargs; i++)
            if (any_call(e->args[i], hit))
                return true;
        return false;
    }
    return any_call(e->l, hit) || any_call(e->r, hit);
}

/* The functors that only read texts run on the device too (over its copy of the symbol
 * table, text_ops.h); the others read the host's state or add to it. */
static bool host_call(const rfx_rx *e)
{
    return !rfx_text_op(e->op);
}

static bool any(const rfx_rx *e)
{
    (void)e;
    return true;
}

bool rfx_rx_host_only(const rfx_rx *e)
{
    return any_call(e, host_call);
}

bool rfx_rx_calls(const rfx_rx *e)
{
    return any_call(e, any);
}

static bool serial_call(const rfx_rx *e)
{
    return e->op == RFX_FX_USER || !rfx_fn_op_parallel((rfx_fn_op)e->op);
}

static bool user_call(const rfx_rx *e)
{
    return e->op == RFX_FX_USER;
}

bool rfx_rx_serial(const rfx_rx *e)
{
    return any_call(e, serial_call);
}

static bool unspeculable_call(const rfx_rx *e)
{
    return serial_call(e) && !rfx_fn_op_makes_symbol((rfx_fn_op)e->op);
}

bool rfx_rx_speculable(const rfx_rx *e)
{
    return !any_call(e, unspeculable_call);
}

bool rfx_rx_calls_user(const rfx_rx *e)
{
    return any_call(e, user_call);
}

const char *rfx_prim_name(rfx_prim p)
{
    static const char *names[] = {"number", "unsigned", "float", "symbol", "number64", "unsigned64", "float64", "word",
                                  "date", "decimal"};
    return p >= 0 && p < RFX_NPRIMS ? names[p] : "?";
}

const char *rfx_binop_str(rfx_binop op)
{
    static const char *s[] = {"+",   "-",   "*",    "/",   "%",   "band", "bor", "bxor", "bshl",
                              "bshr", "bshru", "land", "lor", "lxor", "^",    "min", "max"};
    return s[op];
}

const char *rfx_cmpop_str(rfx_cmpop op)
{
    static const char *s[] = {"<", "<=", ">", ">=", "=", "!="};
    return s[op];
}

const char *rfx_aggfn_str(rfx_aggfn fn)
{
    static const char *s[] = {"count", "sum", "min", "max", "mean"};
    return s[fn];
}

bool rfx_rx_checked(const rfx_rx *e)
{
    return e->kind == RFX_RX_BIN && e->env && (e->op == RFX_ADD || e->op == RFX_SUB || e->op == RFX_MUL);
}

/* An integer division or remainder by what may be 0 (a float's never fails: rx_ops.h). */
static bool divides_by_zero(const rfx_rx *e)
{
    return e->kind == RFX_RX_BIN && (e->op == RFX_DIV || e->op == RFX_MOD) && e->prim != RFX_FLOAT &&
           e->prim != RFX_FLOAT64 && (e->r->kind != RFX_RX_CONST || e->r->value == 0);
}

bool rfx_rx_may_fail(const rfx_rx *e)
{
    if (!e)
        return false;
    /* a functor, a division, decimal arithmetic or a decimal rescale (past 64 bits) */
    if (e->kind == RFX_RX_FN || e->env || divides_by_zero(e))
        return true;
    return rfx_rx_may_fail(e->l) || rfx_rx_may_fail(e->r);
}

bool rfx_rx_device_makes(const rfx_rx *e)
{
    if (!e)
        return true;
    if (e->kind == RFX_RX_FN) {
        if (!rfx_text_op(e->op) && !rfx_fn_op_device_makes((rfx_fn_op)e->op))
            return false;
        for (int i = 0; i < e->nargs; i++)
            if (!rfx_rx_device_makes(e->args[i]))
                return false;
        return true;
    }
    if (e->env || divides_by_zero(e))
        return false;
    return rfx_rx_device_makes(e->l) && rfx_rx_device_makes(e->r);
}

int rfx_rx_max_col(const rfx_rx *e)
{
    if (!e)
        return -1;
    int m = e->kind == RFX_RX_COL ? e->col : -1, l = rfx_rx_max_col(e->l), r = rfx_rx_max_col(e->r);
    m = l > m ? l : m;
    m = r > m ? r : m;
    for (int i = 0; e->kind == RFX_RX_FN && i < e->nargs; i++) {
        int a = rfx_rx_max_col(e->args[i]);
        m = a > m ? a : m;
    }
    return m;
}

static void fixed_columns(const rfx_rx *e, uint32_t *vals, bool *fixed, int max)
{
    if (e->kind == RFX_RX_AND) {
        fixed_columns(e->l, vals, fixed, max);
        fixed_columns(e->r, vals, fixed, max);
        return;
    }
    if (e->kind != RFX_RX_CMP || e->op != RFX_EQ || e->prim == RFX_FLOAT || RFX_PRIM_WIDE(e->prim))
        return;
    const rfx_rx *col = e->l->kind == RFX_RX_COL ? e->l : e->r, *k = col == e->l ? e->r : e->l;
    if (col->kind == RFX_RX_COL && k->kind == RFX_RX_CONST && col->col < max && !fixed[col->col]) {
        fixed[col->col] = true;
        vals[col->col] = (uint32_t)k->value;
    }
}

int rfx_rx_fixed_prefix(const rfx_rx *pred, uint32_t *vals, int max)
{
    bool fixed[64] = {false};
    max = max < 64 ? max : 64;
    if (!pred || rfx_rx_may_fail(pred))
        return 0;
    fixed_columns(pred, vals, fixed, max);
    int n = 0;
    while (n < max && fixed[n])
        n++;
    return n;
}

/* A bound on column col from one comparison of it with an expression e of src0's columns
 * alone (`$col <= e`, `e < $col`, ...): lo (1) or hi (-1), or 0 where cmp is not one. */
static int bound_side(const rfx_rx *cmp, int aa, int col, const rfx_rx **e, bool *strict)
{
    if (cmp->kind != RFX_RX_CMP || (cmp->prim != RFX_NUMBER && cmp->prim != RFX_UNSIGNED))
        return 0;
    bool left = cmp->l->kind == RFX_RX_COL && cmp->l->col == col;
    *e = left ? cmp->r : cmp->l;
    if (!left && !(cmp->r->kind == RFX_RX_COL && cmp->r->col == col))
        return 0;
    if (rfx_rx_max_col(*e) >= aa || rfx_rx_may_fail(*e) || rfx_rx_calls(*e) || rfx_rx_wide(*e))
        return 0;
    int op = cmp->op;
    *strict = op == RFX_LT || op == RFX_GT;
    if (op == RFX_GE || op == RFX_GT)
        return left ? 1 : -1;   /* $col >= e: a lower bound; e >= $col: an upper one */
    if (op == RFX_LE || op == RFX_LT)
        return left ? -1 : 1;
    return 0;
}

static void range_conjuncts(const rfx_rx *e, int aa, int col, rfx_rx_range *r, bool *kind_set)
{
    if (e->kind == RFX_RX_AND) {
        range_conjuncts(e->l, aa, col, r, kind_set);
        range_conjuncts(e->r, aa, col, r, kind_set);
        return;
    }
    const rfx_rx *b;
    bool strict;
    int side = bound_side(e, aa, col, &b, &strict);
    if (!side || (*kind_set && r->is_signed != (e->prim == RFX_NUMBER)))
        return;
    if ((side > 0 && r->lo) || (side < 0 && r->hi))
        return;   /* the first of each side; the others stay tests */
    *kind_set = true;
    r->is_signed = e->prim == RFX_NUMBER;
    if (side > 0) {
        r->lo = b;
        r->lo_strict = strict;
    } else {
        r->hi = b;
        r->hi_strict = strict;
    }
}

bool rfx_rx_range_of(const rfx_rx *pred, int aa, int col, rfx_rx_range *r)
{
    *r = (rfx_rx_range){0};
    bool kind_set = false;
    if (pred)
        range_conjuncts(pred, aa, col, r, &kind_set);
    return r->lo || r->hi;
}
