/* passes.c: plan optimisations (MapFilter/MapJoin formation, common subexpressions with
 * loop-invariant hoisting, dead temporaries) and the plan verifier. */
#include "ra_internal.h"

#include <stdlib.h>
#include <string.h>

#define RFX_RA_REMOVED RFX_RA_NOPS

static const struct { const char *name; int nsrc; rfx_fusion_class fusion; } op_info[] = {
#define RA_OP(id, name, nsrc, fusion) {name, nsrc, RFX_FUSE_##fusion},
#include "ra_ops.def"
#undef RA_OP
};

const char *rfx_ra_op_name(rfx_ra_op op) { return op < RFX_RA_NOPS ? op_info[op].name : "?"; }
int rfx_ra_op_nsrc(rfx_ra_op op) { return op_info[op].nsrc; }
rfx_fusion_class rfx_ra_op_fusion(rfx_ra_op op) { return op_info[op].fusion; }

static void compact(rfx_block *b)
{
    int n = 0;
    for (int i = 0; i < b->ncmds; i++)
        if (b->cmds[i].op != RFX_RA_REMOVED)
            b->cmds[n++] = b->cmds[i];
    b->ncmds = n;
}

static int count_uses(const rfx_plan *P, int var)
{
    int n = 0;
    for (int bi = 0; bi < P->nblocks; bi++)
        for (int i = 0; i < P->blocks[bi].ncmds; i++) {
            const rfx_ra_cmd *c = &P->blocks[bi].cmds[i];
            if (c->op == RFX_RA_REMOVED)
                continue;
            for (int k = 0; k < rfx_ra_cmd_ninputs(c); k++)
                n += rfx_ra_cmd_input(c, k) == var;
        }
    return n;
}

static bool is_mapping(rfx_ra_op op)
{
    return op == RFX_RA_SELECT || op == RFX_RA_PROJECT || op == RFX_RA_MAP || op == RFX_RA_MAPFILTER;
}

bool rfx_rx_fresh(const rfx_rx *e)
{
    if (!e)
        return false;
    if (e->kind == RFX_RX_FN && e->op == RFX_FX_AUTOINC)
        return true;
    for (int i = 0; i < e->nargs; i++)
        if (rfx_rx_fresh(e->args[i]))
            return true;
    return rfx_rx_fresh(e->l) || rfx_rx_fresh(e->r);
}

static bool cmd_fresh(const rfx_ra_cmd *c)
{
    bool f = rfx_rx_fresh(c->pred);
    for (int i = 0; i < c->nout; i++)
        f |= rfx_rx_fresh(c->out[i]);
    return f;
}

static rfx_rx *subst(lower_ctx *L, const rfx_rx *e, rfx_rx **defs)
{
    if (!e)
        return NULL;
    if (e->kind == RFX_RX_COL)
        return defs[e->col];
    rfx_rx *x = rfx_rx_new(L, e->kind, e->prim);
    *x = *e;
    x->l = subst(L, e->l, defs);
    x->r = subst(L, e->r, defs);
    if (e->nargs) {
        x->args = lalloc(L, sizeof(rfx_rx *) * (size_t)e->nargs);
        for (int i = 0; x->args && i < e->nargs; i++)
            x->args[i] = subst(L, e->args[i], defs);
        if (!x->args)
            x->nargs = 0;
    }
    return x;
}

/* Names a fused command by what it does. */
static void rename_op(rfx_ra_cmd *c, const rfx_plan *P)
{
    bool cols = true, identity = true;
    int in_arity = P->vars[c->src[0]].arity;
    for (int i = 0; i < c->nout; i++) {
        cols &= c->out[i]->kind == RFX_RX_COL || c->out[i]->kind == RFX_RX_CONST;
        identity &= c->out[i]->kind == RFX_RX_COL && c->out[i]->col == i;
    }
    identity &= c->nout == in_arity;
    if (c->op == RFX_RA_JOIN || c->op == RFX_RA_MAPJOIN) {
        bool plain = true;
        for (int i = 0; i < c->nout; i++)
            plain &= c->out[i]->kind == RFX_RX_COL;
        c->op = !c->pred && plain ? RFX_RA_JOIN : RFX_RA_MAPJOIN;
    } else if (c->op == RFX_RA_PRODUCT) {
        /* stays a product */
    } else if (c->pred)
        c->op = identity ? RFX_RA_SELECT : RFX_RA_MAPFILTER;
    else
        c->op = cols ? RFX_RA_PROJECT : RFX_RA_MAP;
}

/* Per variable, how many commands (not removed) read it, as count_uses says. */
static int *all_uses(const rfx_plan *P)
{
    int *n = calloc((size_t)P->nvars + 1, sizeof(int));
    for (int bi = 0; n && bi < P->nblocks; bi++)
        for (int i = 0; i < P->blocks[bi].ncmds; i++) {
            const rfx_ra_cmd *c = &P->blocks[bi].cmds[i];
            for (int k = 0; c->op != RFX_RA_REMOVED && k < rfx_ra_cmd_ninputs(c); k++)
                if (rfx_ra_cmd_input(c, k) >= 0)
                    n[rfx_ra_cmd_input(c, k)]++;
        }
    return n;
}

/* A mapping whose input is a temporary read by nothing else is fused into the command that
 * made it. The uses are counted once a round and each command's maker found by the last
 * write of each variable (the rule's semi-naive versions make plans of 10^4-10^5 commands,
 * where counting the uses through the whole plan at every command took seconds). */
void rfx_plan_fuse_maps(rfx_plan *P)
{
    lower_ctx L = {.plan = P};
    int *last_def = malloc(sizeof(int) * ((size_t)P->nvars + 1));   /* -1 none, -2 look back */
    if (!last_def)
        return;
    for (bool changed = true; changed;) {
        changed = false;
        int *uses = all_uses(P);
        if (!uses)
            break;
        for (int bi = 0; bi < P->nblocks; bi++) {
            rfx_block *b = &P->blocks[bi];
            for (int v = 0; v < P->nvars; v++)
                last_def[v] = -1;
            for (int j = 0; j < b->ncmds; j++) {
                rfx_ra_cmd *c2 = &b->cmds[j];
                int t = c2->src[0], i = -1;
                bool fuse = is_mapping(c2->op) && P->vars[t].kind == RFX_PV_TEMP && uses[t] == 1;
                if (fuse && (i = last_def[t]) == -2)   /* its maker was fused on: the one before, if any */
                    for (i = j - 1; i >= 0 && b->cmds[i].dst != t; i--)
                        ;
                rfx_ra_cmd *c1 = i >= 0 ? &b->cmds[i] : NULL;
                fuse = fuse && c1 && !cmd_fresh(c1) &&
                       (is_mapping(c1->op) || c1->op == RFX_RA_JOIN || c1->op == RFX_RA_MAPJOIN ||
                        c1->op == RFX_RA_PRODUCT);
                if (fuse) {
                    rfx_ra_cmd m = *c1;
                    m.dst = c2->dst;
                    m.pred = rfx_rx_and(&L, c1->pred, subst(&L, c2->pred, c1->out));
                    m.nout = c2->nout;
                    m.out = rfx_arena_alloc(P->arena, sizeof(rfx_rx *) * (size_t)(c2->nout + 1));
                    if (!m.out) {
                        free(uses);
                        free(last_def);
                        return;
                    }
                    for (int k = 0; k < c2->nout; k++)
                        m.out[k] = subst(&L, c2->out[k], c1->out);
                    rename_op(&m, P);
                    for (int k = 0; k < rfx_ra_cmd_ninputs(c2); k++)
                        if (rfx_ra_cmd_input(c2, k) >= 0)
                            uses[rfx_ra_cmd_input(c2, k)]--;
                    *c1 = m;
                    c2->op = RFX_RA_REMOVED;
                    last_def[t] = -2;   /* c1 writes c2's result now */
                    changed = true;
                }
                if (c2->dst >= 0)
                    last_def[c2->dst] = j;
            }
            compact(b);
        }
        free(uses);
    }
    free(last_def);
}

/* ---- common subexpressions and hoisting ------------------------------------------- */
static char *signature(const rfx_plan *P, const rfx_ra_cmd *c)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    fprintf(f, "%d %d %d %d %d %d %d %d %d %d|", c->op, c->src[0], c->src[1], c->nkeys, c->agg, c->agg_col, c->nout,
            c->probe, c->optional, c->range);
    if (c->pred)
        rfx_rx_print(f, P, c->pred);
    for (int i = 0; i < c->nout; i++) {
        fputc(',', f);
        rfx_rx_print(f, P, c->out[i]);
    }
    fclose(f);
    return buf;
}

/* Commands that CSE may merge and hoisting may move: a function of src[0..1] alone
 * (LFTJ, CHOICE, EQREL and LATTICE read vars too, so they are left where they are). */
static bool pure_cmd(const rfx_ra_cmd *c)
{
    return op_info[c->op].fusion != RFX_FUSE_CONTROL && c->op != RFX_RA_UNION && c->op != RFX_RA_LFTJ &&
           !rfx_ra_cmd_reads_held(c) && !cmd_fresh(c);
}

static void replace_uses(rfx_plan *P, int from, int to)
{
    for (int bi = 0; bi < P->nblocks; bi++)
        for (int i = 0; i < P->blocks[bi].ncmds; i++) {
            rfx_ra_cmd *c = &P->blocks[bi].cmds[i];
            for (int s = 0; s < 2; s++)
                if (c->src[s] == from)
                    c->src[s] = to;
            if (c->op == RFX_RA_LFTJ)
                for (int k = 0; k < c->nvars; k++)
                    if (c->vars[k] == from)
                        c->vars[k] = to;
        }
}

/* A command's signature, made once and kept until a replacement changes what it reads. */
typedef struct cse_sig {
    char *text;            /* NULL: not made yet (or stale) */
    uint64_t hash;
} cse_sig;

static bool cse_sig_of(const rfx_plan *P, const rfx_ra_cmd *c, cse_sig *s)
{
    if (s->text)
        return true;
    if (!(s->text = signature(P, c)))
        return false;
    s->hash = 1469598103934665603ull;   /* FNV-1a */
    for (const char *t = s->text; *t; t++)
        s->hash = (s->hash ^ (unsigned char)*t) * 1099511628211ull;
    return true;
}

/* The commands with a signature, by its hash: chains of nodes (a command whose signature
 * changed is added again under its new hash; a stale node is told by its hash). */
typedef struct cse_index {
    int *head;             /* per bucket: its latest node, -1 none */
    size_t mask;
    struct cse_node {
        int cmd, next;
    } *node;
    int nnodes, cap;
} cse_index;

static bool cse_add(cse_index *x, int cmd, uint64_t hash)
{
    if (x->nnodes == x->cap) {
        int cap = x->cap ? 2 * x->cap : 64;
        struct cse_node *n = realloc(x->node, sizeof *n * (size_t)cap);
        if (!n)
            return false;
        x->node = n;
        x->cap = cap;
    }
    int *h = &x->head[hash & x->mask];
    x->node[x->nnodes] = (struct cse_node){cmd, *h};
    *h = x->nnodes++;
    return true;
}

/* What var reads as after CSE's replacements so far (alias: -1, none). */
static int cse_resolve(int *alias, int v)
{
    int r = v;
    while (r >= 0 && alias[r] >= 0)
        r = alias[r];
    while (v >= 0 && alias[v] >= 0) {   /* the chain made short */
        int next = alias[v];
        alias[v] = r;
        v = next;
    }
    return r;
}

static void cse_resolve_cmd(int *alias, rfx_ra_cmd *c)
{
    for (int s = 0; s < 2; s++)
        if (c->src[s] >= 0)
            c->src[s] = cse_resolve(alias, c->src[s]);
    if (c->op == RFX_RA_LFTJ)
        for (int k = 0; k < c->nvars; k++)
            c->vars[k] = cse_resolve(alias, c->vars[k]);
}

static bool cse_reads(const rfx_ra_cmd *c, int v)
{
    for (int k = 0; c->op == RFX_RA_LFTJ && k < c->nvars; k++)
        if (c->vars[k] == v)
            return true;
    return c->src[0] == v || c->src[1] == v;
}

/* Each command computed again from the same operands as an earlier one in the block
 * (none of them written between the two) reads the earlier one's result instead, the
 * earliest such; what read the later one's result reads the earlier's. Signatures are made
 * once and looked up by hash, and the replacements are made as the commands are reached
 * (the other blocks' at the end): a rule of dozens of atoms, in all its semi-naive
 * versions, makes thousands of commands (hundreds of atoms: ~10^5), and making every
 * pair's signatures, scanning the commands between them for writes and every replacement
 * through the whole plan had taken seconds (a fuzzer's input: ~4,000 commands, 0.33 s in a
 * release build, over 10 s under ASan; 300 atoms: 22 s). */
static void cse_block(rfx_plan *P, rfx_block *b)
{
    cse_sig *sig = calloc((size_t)b->ncmds + 1, sizeof *sig);
    int *last_write = malloc(sizeof(int) * ((size_t)P->nvars + 1));   /* the latest command before j writing a var */
    int *first_read = malloc(sizeof(int) * ((size_t)P->nvars + 1));   /* the block's first command reading it */
    int *alias = malloc(sizeof(int) * ((size_t)P->nvars + 1));
    cse_index x = {NULL, 0, NULL, 0, 0};
    size_t buckets = 64;
    while (buckets < 2 * (size_t)b->ncmds)
        buckets *= 2;
    x.head = malloc(sizeof(int) * buckets);
    x.mask = buckets - 1;
    bool ok = sig && last_write && first_read && alias && x.head, aliased = false;
    for (int v = 0; ok && v < P->nvars; v++)
        last_write[v] = first_read[v] = alias[v] = -1;
    for (size_t k = 0; ok && k < buckets; k++)
        x.head[k] = -1;
    for (int k = b->ncmds - 1; ok && k >= 0; k--) {
        const rfx_ra_cmd *c = &b->cmds[k];
        for (int s = 0; s < 2; s++)
            if (c->src[s] >= 0)
                first_read[c->src[s]] = k;
        for (int q = 0; c->op == RFX_RA_LFTJ && q < c->nvars; q++)
            first_read[c->vars[q]] = k;
    }
    for (int j = 0; ok && j < b->ncmds; j++) {
        rfx_ra_cmd *cj = &b->cmds[j];
        cse_resolve_cmd(alias, cj);
        if (cj->op != RFX_RA_REMOVED && pure_cmd(cj) && P->vars[cj->dst].kind == RFX_PV_TEMP &&
            (ok = cse_sig_of(P, cj, &sig[j]))) {
            /* an earlier command is a candidate only after the last write of cj's operands */
            int from = 0, same = -1;
            for (int s = 0; s < 2; s++)
                if (cj->src[s] >= 0 && last_write[cj->src[s]] + 1 > from)
                    from = last_write[cj->src[s]] + 1;
            for (int n = x.head[sig[j].hash & x.mask]; n >= 0; n = x.node[n].next) {
                const int i = x.node[n].cmd;
                if (i >= from && (same < 0 || i < same) && b->cmds[i].op == cj->op && sig[i].text &&
                    sig[i].hash == sig[j].hash && strcmp(sig[i].text, sig[j].text) == 0)
                    same = i;
            }
            if (same >= 0) {
                const int gone = cj->dst, kept = b->cmds[same].dst;
                alias[gone] = kept;
                aliased = true;
                cj->op = RFX_RA_REMOVED;
                for (int k = first_read[gone]; ok && k >= 0 && k < j; k++)   /* read before it was made (a loop's) */
                    if (cse_reads(&b->cmds[k], gone)) {
                        cse_resolve_cmd(alias, &b->cmds[k]);
                        if (sig[k].text) {   /* its signature changed */
                            free(sig[k].text);
                            sig[k].text = NULL;
                            ok = cse_sig_of(P, &b->cmds[k], &sig[k]) && cse_add(&x, k, sig[k].hash);
                        }
                    }
            } else
                ok = cse_add(&x, j, sig[j].hash);
        }
        if (cj->dst >= 0)
            last_write[cj->dst] = j;
        if (cj->op == RFX_RA_SWAP && cj->src[0] >= 0)
            last_write[cj->src[0]] = j;
    }
    for (int bi = 0; aliased && bi < P->nblocks; bi++)   /* the rest of the plan reads the kept results */
        for (int i = 0; i < P->blocks[bi].ncmds; i++)
            cse_resolve_cmd(alias, &P->blocks[bi].cmds[i]);
    for (int k = 0; sig && k < b->ncmds; k++)
        free(sig[k].text);
    free(sig);
    free(last_write);
    free(first_read);
    free(alias);
    free(x.head);
    free(x.node);
    compact(b);
}

static void hoist_loop(rfx_plan *P, int li)
{
    rfx_block *loop = &P->blocks[li], *pre = &P->blocks[li - 1];
    bool *defined = calloc((size_t)P->nvars + 1, 1);
    if (!defined)
        return;
    for (int i = 0; i < loop->ncmds; i++) {
        rfx_ra_cmd *c = &loop->cmds[i];
        if (c->dst >= 0)
            defined[c->dst] = true;
        if (c->op == RFX_RA_SWAP)
            defined[c->src[0]] = true;
    }
    for (int i = 0; i < loop->ncmds; i++) {
        rfx_ra_cmd *c = &loop->cmds[i];
        if (!pure_cmd(c) || c->dst < 0 || P->vars[c->dst].kind != RFX_PV_TEMP)
            continue;
        bool inv = true;
        for (int s = 0; s < 2; s++)
            inv &= c->src[s] < 0 || !defined[c->src[s]];
        if (!inv)
            continue;
        if (pre->ncmds == pre->cap) {
            int nc = pre->cap ? pre->cap * 2 : 16;
            rfx_ra_cmd *cmds = rfx_arena_alloc(P->arena, sizeof(rfx_ra_cmd) * (size_t)nc);
            if (!cmds)
                break;
            rfx_memcpy(cmds, pre->cmds, sizeof(rfx_ra_cmd) * (size_t)pre->ncmds);
            pre->cmds = cmds;
            pre->cap = nc;
        }
        pre->cmds[pre->ncmds++] = *c;
        defined[c->dst] = false;
        c->op = RFX_RA_REMOVED;
    }
    compact(loop);
    free(defined);
}

void rfx_plan_cse(rfx_plan *P)
{
    for (int bi = 0; bi < P->nblocks; bi++)
        cse_block(P, &P->blocks[bi]);
    for (int bi = 1; bi < P->nblocks; bi++)
        if (P->blocks[bi].loop_head == bi) {
            hoist_loop(P, bi);
            cse_block(P, &P->blocks[bi - 1]);
        }
}

static bool identity_projection(const rfx_plan *P, const rfx_ra_cmd *c)
{
    if (c->op != RFX_RA_PROJECT || c->pred || c->nout != P->vars[c->src[0]].arity)
        return false;
    for (int i = 0; i < c->nout; i++)
        if (c->out[i]->kind != RFX_RX_COL || c->out[i]->col != i)
            return false;
    return true;
}

/* The uses are counted once a round and kept as commands go (counting them through the
 * whole plan at every command took seconds on a long rule's semi-naive versions). */
void rfx_plan_dce(rfx_plan *P)
{
    for (bool changed = true; changed;) {
        changed = false;
        int *uses = all_uses(P);
        if (!uses)
            return;
        for (int bi = 0; bi < P->nblocks; bi++) {
            rfx_block *b = &P->blocks[bi];
            for (int i = 0; i < b->ncmds; i++) {
                rfx_ra_cmd *c = &b->cmds[i];
                if (c->dst >= 0 && P->vars[c->dst].kind == RFX_PV_TEMP && identity_projection(P, c)) {
                    /* a copy of a value that is never changed: use the value */
                    replace_uses(P, c->dst, c->src[0]);
                    uses[c->src[0]] += uses[c->dst] - 1;
                    uses[c->dst] = 0;
                    c->op = RFX_RA_REMOVED;
                    changed = true;
                    continue;
                }
                if (c->dst >= 0 && P->vars[c->dst].kind == RFX_PV_TEMP && pure_cmd(c) && uses[c->dst] == 0) {
                    for (int k = 0; k < rfx_ra_cmd_ninputs(c); k++)
                        if (rfx_ra_cmd_input(c, k) >= 0)
                            uses[rfx_ra_cmd_input(c, k)]--;
                    c->op = RFX_RA_REMOVED;
                    changed = true;
                }
            }
            compact(b);
        }
        free(uses);
    }
}

/* ---- list scheduling inside basic blocks ----------------------------------------------- */
/* The variables a command reads and writes (SWAP both exchanges; I/O and control use a
 * pseudo-variable `io` so their order among themselves stays). */
static int cmd_uses(const rfx_ra_cmd *c, int io, bool writes, int *out)
{
    int n = 0;
    bool effect = c->op == RFX_RA_INPUT || c->op == RFX_RA_FACTS || c->op == RFX_RA_OUTPUT ||
                  c->op == RFX_RA_PRINTSIZE || op_info[c->op].fusion == RFX_FUSE_CONTROL;
    if (writes) {
        if (c->dst >= 0)
            out[n++] = c->dst;
        if (c->op == RFX_RA_SWAP)
            out[n++] = c->src[0];
    } else {
        for (int k = 0; k < rfx_ra_cmd_ninputs(c) && n < 62; k++)
            if (rfx_ra_cmd_input(c, k) >= 0)
                out[n++] = rfx_ra_cmd_input(c, k);
        if (c->op == RFX_RA_SWAP && c->dst >= 0)
            out[n++] = c->dst;
    }
    if (effect)
        out[n++] = io;
    return n;
}

static bool shares(const int *a, int na, const int *b, int nb)
{
    for (int i = 0; i < na; i++)
        for (int j = 0; j < nb; j++)
            if (a[i] == b[j])
                return true;
    return false;
}

/* Orders each block's commands by list scheduling over their dependences (read after
 * write, write after read, write after write): among the commands whose predecessors
 * have run, the one that reads the most block-local temporaries for the last time goes
 * first (their memory is freed right after it), ties in the lowering's order. Jumps and
 * HALT stay last; I/O keeps its order. */
void rfx_plan_schedule(rfx_plan *P)
{
    for (int bi = 0; bi < P->nblocks; bi++) {
        rfx_block *b = &P->blocks[bi];
        int n = b->ncmds;
        if (n < 3 || n > 256)      /* quadratic per step: huge blocks keep the lowering's order */
            continue;
        bool *dep = calloc((size_t)n * (size_t)n, 1), *done = calloc((size_t)n, 1);
        int *order = malloc(sizeof(int) * (size_t)n), *readers = calloc((size_t)P->nvars + 1, sizeof(int));
        rfx_ra_cmd *copy = malloc(sizeof(rfx_ra_cmd) * (size_t)n);
        bool *local = calloc((size_t)P->nvars + 1, 1);
        if (!dep || !done || !order || !readers || !copy || !local) {
            free(dep), free(done), free(order), free(readers), free(copy), free(local);
            return;
        }
        int io = P->nvars;
        struct uses {
            int r[64], w[4], nr, nw;
        } *u = malloc(sizeof *u * (size_t)n);
        if (!u) {
            free(dep), free(done), free(order), free(readers), free(copy), free(local);
            return;
        }
        for (int j = 0; j < n; j++) {
            u[j].nr = cmd_uses(&b->cmds[j], io, false, u[j].r);
            u[j].nw = cmd_uses(&b->cmds[j], io, true, u[j].w);
        }
        for (int j = 0; j < n; j++) {
            /* jumps, HALT, I/O: after everything before them; and a loop's `.limitsize` test
             * before everything of the iteration it may skip */
            bool control = op_info[b->cmds[j].op].fusion == RFX_FUSE_CONTROL && b->cmds[j].op != RFX_RA_SWAP &&
                           b->cmds[j].op != RFX_RA_CLEAR;
            for (int i = 0; i < j; i++)
                dep[(size_t)j * (size_t)n + (size_t)i] = control || b->cmds[i].op == RFX_RA_JUMP_IF_FULL ||
                                                         shares(u[j].r, u[j].nr, u[i].w, u[i].nw) ||
                                                         shares(u[j].w, u[j].nw, u[i].r, u[i].nr) ||
                                                         shares(u[j].w, u[j].nw, u[i].w, u[i].nw);
            for (int k = 0; k < u[j].nr; k++)
                if (u[j].r[k] < io)
                    readers[u[j].r[k]]++;
            if (b->cmds[j].dst >= 0 && P->vars[b->cmds[j].dst].kind == RFX_PV_TEMP)
                local[b->cmds[j].dst] = true;
        }
        for (int step = 0; step < n; step++) {
            int best = -1, best_frees = -1;
            for (int j = 0; j < n; j++) {
                if (done[j])
                    continue;
                bool ready = true;
                for (int i = 0; i < j && ready; i++)
                    ready = !dep[(size_t)j * (size_t)n + (size_t)i] || done[i];
                if (!ready)
                    continue;
                int frees = 0;
                for (int k = 0; k < u[j].nr; k++)
                    frees += u[j].r[k] < io && local[u[j].r[k]] && readers[u[j].r[k]] == 1;
                if (frees > best_frees) {
                    best = j;
                    best_frees = frees;
                }
            }
            done[best] = true;
            order[step] = best;
            for (int k = 0; k < u[best].nr; k++)
                if (u[best].r[k] < io)
                    readers[u[best].r[k]]--;
        }
        for (int k = 0; k < n; k++)
            copy[k] = b->cmds[order[k]];
        rfx_memcpy(b->cmds, copy, sizeof(rfx_ra_cmd) * (size_t)n);
        free(dep), free(done), free(order), free(readers), free(copy), free(local), free(u);
    }
}

/* ---- count-only leapfrog triejoins --------------------------------------------------- */
void rfx_plan_count_only(rfx_plan *P)
{
    for (int bi = 0; bi < P->nblocks; bi++)
        for (int i = 0; i + 1 < P->blocks[bi].ncmds; i++) {
            rfx_ra_cmd *j = &P->blocks[bi].cmds[i], *u = &P->blocks[bi].cmds[i + 1];
            /* t = LFTJ ...; R = UNION R, t */
            if (j->op != RFX_RA_LFTJ || u->op != RFX_RA_UNION || u->src[1] != j->dst || u->dst != u->src[0])
                continue;
            int t = j->dst, R = u->dst;
            if (P->vars[R].kind != RFX_PV_REL || count_uses(P, t) != 1)
                continue;
            /* R: written by this UNION only, read by PRINTSIZE only (and by one at least: a
             * relation nothing reads keeps its tuples, for an embedder's cursor) */
            bool only = true, printed = false;
            for (int b2 = 0; b2 < P->nblocks && only; b2++)
                for (int k = 0; k < P->blocks[b2].ncmds && only; k++) {
                    const rfx_ra_cmd *c = &P->blocks[b2].cmds[k];
                    if (c == u || c->op == RFX_RA_REMOVED)
                        continue;
                    bool reads = false;
                    for (int q = 0; q < rfx_ra_cmd_ninputs(c); q++)
                        reads |= rfx_ra_cmd_input(c, q) == R;
                    if (c->dst == R || (reads && c->op != RFX_RA_PRINTSIZE))
                        only = false;
                    printed |= reads && c->op == RFX_RA_PRINTSIZE;
                }
            if (!only || !printed)
                continue;
            j->dst = R;
            j->count_only = true;
            P->vars[R].count_only = true;
            u->op = RFX_RA_REMOVED;
        }
    for (int bi = 0; bi < P->nblocks; bi++)
        compact(&P->blocks[bi]);
}

/* ---- leapfrog triejoins' schedules --------------------------------------------------- */
int rfx_ra_lftj_source(const rfx_plan *P, const rfx_ra_cmd *c, int a, int b)
{
    for (int s = 0, off = 0; s < c->nvars; off += P->vars[c->vars[s]].arity, s++)
        if (P->vars[c->vars[s]].arity == 2 && c->colvar[off] == a && c->colvar[off + 1] == b)
            return s;
    return -1;
}

/* Whether every source of c is the same two-column relation. */
static bool over_one_edge_relation(const rfx_plan *P, const rfx_ra_cmd *c)
{
    for (int s = 0; s < c->nvars; s++)
        if (c->vars[s] != c->vars[0] || P->vars[c->vars[s]].arity != 2)
            return false;
    return true;
}

/* The first two variables of a count may swap where the first three are a triangle over
 * one two-column relation e, read e(0,1), e(0,2), e(1,2), and no other source reads both:
 * the join in order 1, 0, ... reads e reversed for e(0,1) and every other source as it is,
 * and which order probes fewer candidates at the third variable follows from e's degrees
 * alone (a skewed graph's orientation decides it), which only the data show. */
static bool swappable(const rfx_plan *P, const rfx_ra_cmd *c)
{
    if (!c->count_only || c->nkeys < 3)
        return false;
    int s01 = rfx_ra_lftj_source(P, c, 0, 1), s02 = rfx_ra_lftj_source(P, c, 0, 2), s12 = rfx_ra_lftj_source(P, c, 1, 2);
    if (s01 < 0 || s02 < 0 || s12 < 0 || c->vars[s02] != c->vars[s01] || c->vars[s12] != c->vars[s01])
        return false;
    for (int s = 0, off = 0; s < c->nvars; off += P->vars[c->vars[s]].arity, s++) {
        bool has0 = false, has1 = false;
        for (int a = 0; a < P->vars[c->vars[s]].arity; a++) {
            has0 |= c->colvar[off + a] == 0;
            has1 |= c->colvar[off + a] == 1;
        }
        if (s != s01 && has0 && has1)
            return false;
    }
    return true;
}

/* Out of core: a count of three variables, e(0,1), e(0,2), e(1,2) of one relation, by the
 * pairs of parts of its vertices; four or more variables of one two-column relation whose
 * first variable some source pairs with every other, by the first variable's induced
 * subgraphs (a part's every binding lies inside the neighbours of its first values). */
static rfx_lftj_parts parts_of(const rfx_plan *P, const rfx_ra_cmd *c)
{
    if (!over_one_edge_relation(P, c))
        return RFX_LFTJ_BOXES;
    if (c->count_only && c->nkeys == 3 && c->nvars == 3 && rfx_ra_lftj_source(P, c, 0, 1) >= 0 &&
        rfx_ra_lftj_source(P, c, 0, 2) >= 0 && rfx_ra_lftj_source(P, c, 1, 2) >= 0)
        return RFX_LFTJ_PAIRS;
    if (c->nkeys < 4)
        return RFX_LFTJ_BOXES;
    for (int v = 1; v < c->nkeys; v++)
        if (rfx_ra_lftj_source(P, c, 0, v) < 0)
            return RFX_LFTJ_BOXES;
    return RFX_LFTJ_INDUCED;
}

void rfx_plan_lftj_schedules(rfx_plan *P)
{
    for (int bi = 0; bi < P->nblocks; bi++)
        for (int i = 0; i < P->blocks[bi].ncmds; i++) {
            rfx_ra_cmd *c = &P->blocks[bi].cmds[i];
            if (c->op != RFX_RA_LFTJ)
                continue;
            c->lftj_swap = swappable(P, c);
            c->parts = parts_of(P, c);
        }
}

/* ---- verifier ------------------------------------------------------------------------ */
static bool rx_ok(const rfx_rx *e, int arity)
{
    if (!e)
        return true;
    if (e->kind == RFX_RX_COL)
        return e->col >= 0 && e->col < arity;
    for (int i = 0; i < e->nargs; i++)
        if (!rx_ok(e->args[i], arity))
            return false;
    return rx_ok(e->l, arity) && rx_ok(e->r, arity);
}

bool rfx_plan_verify(const rfx_plan *P, FILE *out)
{
    bool ok = true;
#define BAD(...) do { if (out) { fprintf(out, "B%d[%d] %s: ", bi, i, rfx_ra_op_name(c->op)); \
                      fprintf(out, __VA_ARGS__); fputc('\n', out); } ok = false; } while (0)
    for (int bi = 0; bi < P->nblocks; bi++)
        for (int i = 0; i < P->blocks[bi].ncmds; i++) {
            const rfx_ra_cmd *c = &P->blocks[bi].cmds[i];
            int ns = op_info[c->op].nsrc;
            for (int s = 0; s < ns; s++)
                if (c->src[s] < 0 || c->src[s] >= P->nvars)
                    BAD("operand %d missing", s);
            if (!ok)
                return false;
            const rfx_pvar *d = c->dst >= 0 ? &P->vars[c->dst] : NULL;
            int a0 = ns > 0 ? P->vars[c->src[0]].arity : 0, a1 = ns > 1 ? P->vars[c->src[1]].arity : 0;
            switch (c->op) {
            case RFX_RA_SELECT: case RFX_RA_PROJECT: case RFX_RA_MAP: case RFX_RA_MAPFILTER:
                if (!d || d->arity != c->nout) BAD("output arity %d != %d", c->nout, d ? d->arity : -1);
                for (int k = 0; k < c->nout; k++)
                    if (!rx_ok(c->out[k], a0)) BAD("column out of range");
                if (!rx_ok(c->pred, a0)) BAD("predicate column out of range");
                break;
            case RFX_RA_JOIN: case RFX_RA_MAPJOIN: case RFX_RA_PRODUCT:
                if (!d || d->arity != c->nout) BAD("output arity");
                if (c->nkeys > a0 || c->nkeys > a1) BAD("more keys than columns");
                if (c->probe && (c->op == RFX_RA_PRODUCT || c->nkeys == 0)) BAD("a probe without keys");
                for (int k = 0; k < c->nout; k++)
                    if (!rx_ok(c->out[k], a0 + a1)) BAD("column out of range");
                if (!rx_ok(c->pred, a0 + a1)) BAD("predicate column out of range");
                break;
            case RFX_RA_UNION:
                if (a0 != a1 || !d || d->arity != a0) BAD("arities %d, %d", a0, a1);
                break;
            case RFX_RA_INTERSECT: case RFX_RA_DIFFERENCE:
                if (c->nkeys > a0 || c->nkeys != a1 || !d || d->arity != a0) BAD("keys %d of %d/%d", c->nkeys, a0, a1);
                break;
            case RFX_RA_AGGREGATE:
            {   /* a 64-bit result takes two words, its value two columns of src1 */
                const int wide = RFX_PRIM_WIDE(c->agg_prim) && c->agg != RFX_AGG_COUNT;
                if (c->nkeys > a0 || c->nkeys > a1 || !d || d->arity != a0 + 1 + wide || c->agg_col + wide >= a1)
                    BAD("shape");
            }
                break;
            case RFX_RA_RANGE:
                if (!d || d->arity != a0 + 1 || c->nout < 2 || c->nout > 3) BAD("shape");
                for (int k = 0; k < c->nout; k++)
                    if (!rx_ok(c->out[k], a0)) BAD("column out of range");
                break;
            case RFX_RA_SORT: case RFX_RA_UNIQUE: case RFX_RA_SORT_UNIQUE: case RFX_RA_COPY:
                if (!d || d->arity != a0 || c->nkeys < 0 || c->nkeys > a0) BAD("arity");
                break;
            case RFX_RA_EQREL:
                if (!d || d->arity != 2 || a0 != 2 || c->nvars > 1 || (c->nvars && P->vars[c->vars[0]].arity != 2))
                    BAD("an equivalence's pairs");
                break;
            case RFX_RA_LATTICE:
                if (!d || d->arity != a0 || c->nkeys < 0 || c->nkeys + c->nout != a0 || c->nvars > 1 ||
                    (c->nvars && P->vars[c->vars[0]].arity != a0))
                    BAD("a lattice's shape");
                for (int k = 0; k < c->nout; k++)
                    if (!rx_ok(c->out[k], 2)) BAD("column out of range");
                break;
            case RFX_RA_LFTJ: {
                if (!d || d->arity != c->nkeys || c->nvars < 1) BAD("shape");
                int off = 0;
                for (int s = 0; ok && s < c->nvars; s++) {
                    int a = P->vars[c->vars[s]].arity;
                    for (int k = 0; k < a; k++)
                        if (c->colvar[off + k] < 0 || c->colvar[off + k] >= c->nkeys ||
                            (k && c->colvar[off + k] <= c->colvar[off + k - 1]))
                            BAD("source %d column %d: variable out of order", s, k);
                    off += a;
                }
                if ((c->lftj_swap || c->parts == RFX_LFTJ_PAIRS) && !c->count_only)
                    BAD("a count's schedule on a join that keeps its bindings");
                break;
            }
            case RFX_RA_JUMP: case RFX_RA_JUMP_IF_EMPTY: case RFX_RA_JUMP_IF_FULL:
                if (c->target < 0 || c->target >= P->nblocks) BAD("jump target");
                break;
            default:
                break;
            }
        }
#undef BAD
    if (!P->nblocks || !P->blocks[P->nblocks - 1].ncmds ||
        P->blocks[P->nblocks - 1].cmds[P->blocks[P->nblocks - 1].ncmds - 1].op != RFX_RA_HALT) {
        if (out)
            fprintf(out, "plan does not end with HALT\n");
        ok = false;
    }
    return ok;
}
