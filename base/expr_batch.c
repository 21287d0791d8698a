/* expr_batch.c: an expression over a batch of rows at once, node by node, as rfx_rx_eval64
 * computes it row by row (expr.c): the kind and operator of a node are decided once for
 * the batch and its loop runs over the rows, where a row at a time walks the tree again
 * for every row. A failure (a division by zero, a decimal past 64 bits) counts only for a
 * row that rfx_rx_eval64 would evaluate the node for: a `live` row, and on the right of an
 * AND only where its left holds (rfx_rx_eval64's && does not evaluate the right there).
 * Functors are not taken (they may count, as autoinc() does, in the order of the rows). */
#include "base.h"
#include "rx_ops.h"

#include <string.h>

/* Deeper expressions go row by row: each level keeps a batch of values on the stack. */
#define BATCH_DEPTH 24

static int batch_depth(const rfx_rx *e)
{
    if (!e)
        return 0;
    if (e->kind == RFX_RX_FN)
        return BATCH_DEPTH + 1;
    int l = batch_depth(e->l), r = batch_depth(e->r);
    return 1 + (l > r ? l : r);
}

bool rfx_rx_batchable(const rfx_rx *e)
{
    return batch_depth(e) <= BATCH_DEPTH;
}

void rfx_rx_eval_batch(const rfx_rx *e, const uint32_t *t, int a, int n, const unsigned char *live, uint64_t *v,
                       bool *fail)
{
    uint64_t r[RFX_RX_BATCH];
    switch (e->kind) {
    case RFX_RX_COL:
        for (int i = 0; i < n; i++)
            v[i] = t[(size_t)i * (size_t)a + (size_t)e->col];
        return;
    case RFX_RX_CONST:
        for (int i = 0; i < n; i++)
            v[i] = e->value;
        return;
    case RFX_RX_BIN: {
        rfx_rx_eval_batch(e->l, t, a, n, live, v, fail);
        rfx_rx_eval_batch(e->r, t, a, n, live, r, fail);
        const int op = e->op, prim = e->prim;
        if (e->env && (op == RFX_ADD || op == RFX_SUB || op == RFX_MUL)) {   /* decimals: exact or fail */
            for (int i = 0; i < n; i++) {
                bool over = false;
                v[i] = (uint64_t)rfx_checked64(op, (int64_t)v[i], (int64_t)r[i], &over);
                if (over && live[i])
                    rfx_rx_overflow(e, fail);
            }
        } else if (RFX_PRIM_WIDE(prim)) {
            for (int i = 0; i < n; i++) {
                bool d = false;
                v[i] = rfx_binary64(op, prim, v[i], r[i], &d);
                *fail |= d && live[i];
            }
        } else {
            for (int i = 0; i < n; i++) {
                bool d = false;
                v[i] = rfx_binary(op, prim, (uint32_t)v[i], (uint32_t)r[i], &d);
                *fail |= d && live[i];
            }
        }
        return;
    }
    case RFX_RX_NEG:
        rfx_rx_eval_batch(e->l, t, a, n, live, v, fail);
        if (RFX_PRIM_WIDE(e->prim))
            for (int i = 0; i < n; i++)
                v[i] = rfx_negate64(e->prim, v[i]);
        else
            for (int i = 0; i < n; i++)
                v[i] = rfx_negate(e->prim, (uint32_t)v[i]);
        return;
    case RFX_RX_CMP:
        rfx_rx_eval_batch(e->l, t, a, n, live, v, fail);
        rfx_rx_eval_batch(e->r, t, a, n, live, r, fail);
        if (e->prim == RFX_DECIMAL)   /* decimals of scales col apart */
            for (int i = 0; i < n; i++)
                v[i] = rfx_compare_scaled(e->op, (int64_t)v[i], (int64_t)r[i], e->col);
        else if (RFX_PRIM_WIDE(e->prim))
            for (int i = 0; i < n; i++)
                v[i] = rfx_compare64(e->op, e->prim, v[i], r[i]);
        else
            for (int i = 0; i < n; i++)
                v[i] = rfx_compare(e->op, e->prim, (uint32_t)v[i], (uint32_t)r[i]);
        return;
    case RFX_RX_AND: {
        unsigned char held[RFX_RX_BATCH];
        rfx_rx_eval_batch(e->l, t, a, n, live, v, fail);
        for (int i = 0; i < n; i++)
            held[i] = live[i] && v[i];
        rfx_rx_eval_batch(e->r, t, a, n, held, r, fail);
        for (int i = 0; i < n; i++)
            v[i] = v[i] && r[i];
        return;
    }
    case RFX_RX_PAIR:
        rfx_rx_eval_batch(e->l, t, a, n, live, v, fail);
        rfx_rx_eval_batch(e->r, t, a, n, live, r, fail);
        for (int i = 0; i < n; i++)
            v[i] = (uint64_t)(uint32_t)v[i] << 32 | (uint32_t)r[i];
        return;
    case RFX_RX_HALF:
        rfx_rx_eval_batch(e->l, t, a, n, live, v, fail);
        for (int i = 0; i < n; i++)
            v[i] = e->op == 0 ? v[i] >> 32 : (uint32_t)v[i];
        return;
    case RFX_RX_CONV:
        rfx_rx_eval_batch(e->l, t, a, n, live, v, fail);
        for (int i = 0; i < n; i++) {
            bool over = false;
            v[i] = rfx_convert_checked(e->l->prim, e->col, e->prim, e->op, e->env != NULL, v[i], &over);
            if (over && live[i])
                rfx_rx_overflow(e, fail);   /* a decimal's places grown past 64 bits */
        }
        return;
    case RFX_RX_CAL:
        rfx_rx_eval_batch(e->l, t, a, n, live, v, fail);
        if (e->r)
            rfx_rx_eval_batch(e->r, t, a, n, live, r, fail);
        for (int i = 0; i < n; i++)
            v[i] = rfx_calendar(e->op, (uint32_t)v[i], e->r ? (uint32_t)r[i] : 0);
        return;
    case RFX_RX_FN:   /* not batchable: rfx_rx_batchable refuses it */
        memset(v, 0, sizeof(uint64_t) * (size_t)n);
        *fail = true;
        return;
    }
}
