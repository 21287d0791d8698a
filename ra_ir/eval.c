/* eval.c: scalar expression evaluation on one tuple, with the documented semantics:
 * number and unsigned arithmetic wraps modulo 2^32 (as Soufflé's does in practice,
 * here defined rather than undefined); INT32_MIN / -1 wraps to INT32_MIN; division and
 * modulo by zero are reported through *div0 (the run stops with an error). */
#include "ra_ir.h"

#include <string.h>

static float as_f(uint32_t u)
{
    float f;
    rfx_memcpy(&f, &u, 4);
    return f;
}

static uint32_t of_f(float f)
{
    uint32_t u;
    rfx_memcpy(&u, &f, 4);
    return u;
}

static uint32_t binop(int op, rfx_prim prim, uint32_t a, uint32_t b, bool *div0)
{
    switch (prim) {
    case RFX_FLOAT: {
        float x = as_f(a), y = as_f(b);
        switch (op) {
        case RFX_ADD: return of_f(x + y);
        case RFX_SUB: return of_f(x - y);
        case RFX_MUL: return of_f(x * y);
        case RFX_DIV: return of_f(x / y);
        default: return of_f(0);
        }
    }
    case RFX_UNSIGNED:
        switch (op) {
        case RFX_ADD: return a + b;
        case RFX_SUB: return a - b;
        case RFX_MUL: return a * b;
        case RFX_DIV: if (!b) { *div0 = true; return 0; } return a / b;
        case RFX_MOD: if (!b) { *div0 = true; return 0; } return a % b;
        }
        return 0;
    default: {
        int32_t x = (int32_t)a, y = (int32_t)b;
        switch (op) {
        case RFX_ADD: return a + b;
        case RFX_SUB: return a - b;
        case RFX_MUL: return a * b;
        case RFX_DIV:
            if (!y) { *div0 = true; return 0; }
            if (x == INT32_MIN && y == -1) return a;
            return (uint32_t)(x / y);
        case RFX_MOD:
            if (!y) { *div0 = true; return 0; }
            if (y == -1) return 0;
            return (uint32_t)(x % y);
        }
        return 0;
    }
    }
}

static bool compare(int op, rfx_prim prim, uint32_t a, uint32_t b)
{
    int c;
    if (prim == RFX_FLOAT) {
        float x = as_f(a), y = as_f(b);
        switch (op) {
        case RFX_LT: return x < y;
        case RFX_LE: return x <= y;
        case RFX_GT: return x > y;
        case RFX_GE: return x >= y;
        case RFX_EQ: return x == y;
        default: return x != y;
        }
    }
    if (prim == RFX_NUMBER)
        c = (int32_t)a < (int32_t)b ? -1 : (int32_t)a > (int32_t)b;
    else
        c = a < b ? -1 : a > b;
    switch (op) {
    case RFX_LT: return c < 0;
    case RFX_LE: return c <= 0;
    case RFX_GT: return c > 0;
    case RFX_GE: return c >= 0;
    case RFX_EQ: return a == b;
    default: return a != b;
    }
}

uint32_t rfx_rx_eval(const rfx_rx *e, const uint32_t *t0, int a0, const uint32_t *t1, bool *div0)
{
    switch (e->kind) {
    case RFX_RX_COL:
        return e->col < a0 ? t0[e->col] : t1[e->col - a0];
    case RFX_RX_CONST:
        return e->value;
    case RFX_RX_BIN:
        return binop(e->op, e->prim, rfx_rx_eval(e->l, t0, a0, t1, div0),
                     rfx_rx_eval(e->r, t0, a0, t1, div0), div0);
    case RFX_RX_NEG: {
        uint32_t v = rfx_rx_eval(e->l, t0, a0, t1, div0);
        return e->prim == RFX_FLOAT ? of_f(-as_f(v)) : 0u - v;
    }
    case RFX_RX_CMP:
        return compare(e->op, e->prim, rfx_rx_eval(e->l, t0, a0, t1, div0),
                       rfx_rx_eval(e->r, t0, a0, t1, div0));
    case RFX_RX_AND:
        return rfx_rx_eval(e->l, t0, a0, t1, div0) && rfx_rx_eval(e->r, t0, a0, t1, div0);
    }
    return 0;
}
