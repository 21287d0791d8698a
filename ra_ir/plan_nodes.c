/* plan_nodes.c: what the lowering builds a plan of: variables, commands, blocks, and
 * scalar expression nodes (constants folded by the evaluator the backends share). */
#include "ra_internal.h"
#include "rx_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- variables, commands, blocks --------------------------------------------------- */
int rfx_lower_new_var(lower_ctx *L, const char *name, rfx_pvar_kind kind, int arity,
                      const rfx_prim *types, int rel)
{
    rfx_plan *P = L->plan;
    if (P->nvars == P->varcap) {
        int nc = P->varcap ? P->varcap * 2 : 32;
        rfx_pvar *v = lalloc(L, sizeof(rfx_pvar) * (size_t)nc);
        if (!v)
            return 0;
        rfx_memcpy(v, P->vars, sizeof(rfx_pvar) * (size_t)P->nvars);
        P->vars = v;
        P->varcap = nc;
    }
    rfx_pvar *v = &P->vars[P->nvars];
    char buf[64];
    if (!name) {
        snprintf(buf, sizeof buf, "t%d", L->ntemps++);
        name = buf;
    }
    v->name = rfx_arena_strdup(P->arena, name, strlen(name));
    v->kind = kind;
    v->arity = arity;
    v->rel = rel;
    v->types = lalloc(L, sizeof(rfx_prim) * (size_t)(arity + 1));
    if (v->types && types)
        rfx_memcpy(v->types, types, sizeof(rfx_prim) * (size_t)arity);
    return P->nvars++;
}

rfx_ra_cmd *rfx_lower_emit(lower_ctx *L, rfx_ra_op op, int dst, int s0, int s1)
{
    rfx_block *b = &L->plan->blocks[L->block];
    if (b->ncmds == b->cap) {
        int nc = b->cap ? b->cap * 2 : 16;
        rfx_ra_cmd *c = lalloc(L, sizeof(rfx_ra_cmd) * (size_t)nc);
        if (!c) {
            static rfx_ra_cmd sink;
            memset(&sink, 0, sizeof sink);
            return &sink;
        }
        rfx_memcpy(c, b->cmds, sizeof(rfx_ra_cmd) * (size_t)b->ncmds);
        b->cmds = c;
        b->cap = nc;
    }
    rfx_ra_cmd *c = &b->cmds[b->ncmds++];
    memset(c, 0, sizeof *c);
    c->op = op;
    c->dst = dst;
    c->src[0] = s0;
    c->src[1] = s1;
    c->agg_col = -1;
    c->rule = L->rule;
    return c;
}

int rfx_lower_new_block(lower_ctx *L, const char *label)
{
    rfx_plan *P = L->plan;
    if (P->nblocks == P->blockcap) {
        int nc = P->blockcap ? P->blockcap * 2 : 8;
        rfx_block *b = lalloc(L, sizeof(rfx_block) * (size_t)nc);
        if (!b)
            return L->block;
        rfx_memcpy(b, P->blocks, sizeof(rfx_block) * (size_t)P->nblocks);
        P->blocks = b;
        P->blockcap = nc;
    }
    rfx_block *b = &P->blocks[P->nblocks];
    memset(b, 0, sizeof *b);
    b->label = label;
    b->loop_head = -1;
    L->block = P->nblocks++;
    return L->block;
}

rfx_rx *rfx_rx_new(lower_ctx *L, rfx_rx_kind kind, rfx_prim prim)
{
    rfx_rx *e = lalloc(L, sizeof *e);
    if (!e) {
        static rfx_rx sink;
        return &sink;
    }
    e->kind = kind;
    e->prim = prim;
    return e;
}

rfx_rx *rfx_rx_col(lower_ctx *L, int col, rfx_prim prim)
{
    rfx_rx *e = rfx_rx_new(L, RFX_RX_COL, prim);
    e->col = col;
    return e;
}

rfx_rx *rfx_rx_and(lower_ctx *L, rfx_rx *a, rfx_rx *b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    rfx_rx *e = rfx_rx_new(L, RFX_RX_AND, RFX_NUMBER);
    e->l = a;
    e->r = b;
    return e;
}

/* Constant value of a literal expression as stored (the bits of prim; a word of a 64-bit
 * literal, sema_widen.c's, as it is). */
uint64_t rfx_lower_const_value(const rfx_program *p, const rfx_expr *e, rfx_prim prim, bool *ok)
{
    if (p && e->type >= 0 && p->types[e->type].prim == RFX_DECIMAL &&
        (e->kind == RFX_E_INT || e->kind == RFX_E_UNSIGNED || e->kind == RFX_E_FLOAT)) {   /* its count of 10^-scale */
        rfx_prim from = e->kind == RFX_E_FLOAT ? RFX_FLOAT64 : RFX_NUMBER64;
        uint64_t v = e->kind == RFX_E_FLOAT ? rfx_of_f64(e->u.fval) : (uint64_t)e->u.ival;
        return rfx_convert_scaled(from, 0, RFX_NUMBER64, p->types[e->type].scale, v);
    }
    switch (e->kind) {
    case RFX_E_INT:
    case RFX_E_UNSIGNED:
        if (e->type == RFX_WORD)
            return (uint32_t)e->u.ival;
        if (prim == RFX_FLOAT)
            return rfx_of_f32((float)e->u.ival);
        if (prim == RFX_FLOAT64)
            return rfx_of_f64((double)e->u.ival);
        return RFX_PRIM_WIDE(prim) ? (uint64_t)e->u.ival : (uint32_t)e->u.ival;
    case RFX_E_FLOAT:
        return prim == RFX_FLOAT64 ? rfx_of_f64(e->u.fval) : rfx_of_f32((float)e->u.fval);
    case RFX_E_STRING:
        return e->u.sym;
    default:
        *ok = false;
        return 0;
    }
}

/* ---- expression nodes ---------------------------------------------------------------- */
/* x as a constant when its operands are constants (and it divides by no zero, and no
 * functor fails: those stay, to fail at run time). autoinc() is never constant. */
rfx_rx *rfx_rx_fold(rfx_rx *x)
{
    if (x->kind == RFX_RX_FN) {
        for (int i = 0; i < x->nargs; i++)
            if (x->args[i]->kind != RFX_RX_CONST)
                return x;
        if (x->op == RFX_FX_AUTOINC || x->op == RFX_FX_USER)   /* a user's code runs when the program does */
            return x;
    } else if (!x->l || x->l->kind != RFX_RX_CONST ||
               ((x->kind == RFX_RX_BIN || x->kind == RFX_RX_PAIR) && (!x->r || x->r->kind != RFX_RX_CONST)) ||
               (x->kind == RFX_RX_CAL && x->r && x->r->kind != RFX_RX_CONST))
        return x;
    bool div0 = false;
    uint64_t v = rfx_rx_eval64(x, NULL, 0, NULL, &div0);
    if (!div0)   /* a plain constant: nothing of the call or operator it was (an env would
                  * say it may fail) */
        *x = (rfx_rx){.kind = RFX_RX_CONST, .prim = x->prim, .value = v, .loc = x->loc};
    return x;
}

/* x's bits typed prim (as(x, T), and conversions between number and unsigned): a column,
 * constant or functor (whose values do not depend on its type) retyped, else max(x, x),
 * which is x's bits in every kind. */
rfx_rx *rfx_rx_retype(lower_ctx *L, rfx_rx *x, rfx_prim prim)
{
    if (x->prim == prim)
        return x;
    bool copy = x->kind == RFX_RX_COL || x->kind == RFX_RX_CONST || x->kind == RFX_RX_FN;
    rfx_rx *y = rfx_rx_new(L, copy ? x->kind : RFX_RX_BIN, prim);
    if (copy) {
        rfx_prim keep = y->prim;
        *y = *x;
        y->prim = keep;
        return y;
    }
    y->op = RFX_MAX_OF;
    y->l = y->r = x;
    return y;
}

rfx_rx *rfx_rx_fn(lower_ctx *L, rfx_fn_op op, rfx_prim prim, rfx_rx **args, int nargs, rfx_loc loc)
{
    rfx_rx *x = rfx_rx_new(L, RFX_RX_FN, prim);
    x->op = op;
    x->env = L->plan->fn_env;
    x->nargs = nargs;
    x->args = lalloc(L, sizeof(rfx_rx *) * (size_t)(nargs + 1));
    for (int i = 0; x->args && i < nargs; i++)
        x->args[i] = args[i];
    if (!x->args)
        x->nargs = 0;
    x->loc = loc;
    return rfx_rx_fold(x);
}


int rfx_plan_temps_named(const rfx_plan *P)
{
    int n = 0;
    for (int v = 0; v < P->nvars; v++) {
        const char *s = P->vars[v].name;
        if (P->vars[v].kind == RFX_PV_TEMP && s && s[0] == 't' && s[1] >= '0' && s[1] <= '9') {
            int t = atoi(s + 1);
            n = t + 1 > n ? t + 1 : n;
        }
    }
    return n;
}

rfx_ra_cmd *rfx_block_insert(lower_ctx *L, rfx_block *b, int at, int n)
{
    if (b->ncmds + n > b->cap) {
        int nc = b->cap * 2 + n;
        rfx_ra_cmd *cmds = lalloc(L, sizeof(rfx_ra_cmd) * (size_t)nc);
        if (!cmds)
            return NULL;
        rfx_memcpy(cmds, b->cmds, sizeof(rfx_ra_cmd) * (size_t)b->ncmds);
        b->cmds = cmds;
        b->cap = nc;
    }
    memmove(&b->cmds[at + n], &b->cmds[at], sizeof(rfx_ra_cmd) * (size_t)(b->ncmds - at));
    b->ncmds += n;
    memset(&b->cmds[at], 0, (size_t)n * sizeof(rfx_ra_cmd));
    return &b->cmds[at];
}

bool rfx_block_writes(const rfx_block *b, int v, int from, int to)
{
    for (int i = from; i < to; i++)
        if (b->cmds[i].dst == v || (b->cmds[i].op == RFX_RA_SWAP && b->cmds[i].src[0] == v))
            return true;
    return false;
}
