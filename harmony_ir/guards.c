/* guards.c: when a command (or the fused group it anchors) is work nobody needs.
 *
 * A semi-naive loop runs one version of each recursive rule per delta; in the iterations
 * where a version's delta is empty, its other commands (selections over the full
 * relations, their joins) would still read whole relations to build results that meet an
 * empty side. Each running command gets a guard: a conjunction of clauses, each clause a
 * few variables, such that when every clause holds an empty variable at the command's
 * turn, the command's result is empty or is read only by commands whose results are
 * empty (or read only by ...): the executor then empties its destination instead.
 *
 * An operand "annihilates" a command when an empty operand makes the result empty (both
 * sides of a join, the left of a difference, the input of a selection). A command may be
 * skipped when its destination is none of its operands; its own annihilators give one
 * clause (its result is empty). A temporary written once, read only later in its block,
 * may also be skipped when every reader's result is known to be empty or unread from
 * variables no command writes between the skipped command's turn and the reader's: the
 * readers' guards, restricted to such "settled" variables, are conjoined. A fused group
 * is skipped when each of its members may be, judged at the group's anchor.
 *
 * Guards only ever say less than the truth (clauses cut short, too many clauses give no
 * guard), never more: a skipped command is always one whose result would not matter. */
#include "guards.h"
#include "base.h"

#include <stdlib.h>
#include <string.h>

#define MAX_CLAUSE 6      /* variables in a clause (more are dropped: a narrower clause) */
#define MAX_CLAUSES 6     /* clauses in a guard (more: no guard) */
#define MAX_DEPTH 12      /* readers of readers followed */

typedef struct clause {
    int n;
    int v[MAX_CLAUSE];
} clause;

/* A conjunction of clauses; `none`: no guard (never skipped). */
typedef struct cnf {
    bool none;
    int n;
    clause c[MAX_CLAUSES];
} cnf;

typedef struct gctx {
    const rfx_plan *P;
    const rfx_weave *W;
    int b;                /* the block analysed */
    int *exec_pos;        /* per command of block b: where it runs (its group's anchor) */
    int *nwrites;         /* per variable: commands writing it, whole plan */
    int *local;           /* per variable: its index among those block b touches, or -1 */
    int *touched;         /* those variables, by that index */
    int ntouched;
    /* per touched variable (by local index): */
    int *writer;          /* the one command of block b writing it, -1 none, -2 several */
    int *first_read;      /* CSR of the commands of block b reading it */
    int *reads;
    int *read_block;      /* per variable: the one block reading it, -1 none, -2 several */
    int *wstart, *wpos;   /* CSR of block b's exec positions writing it */
    int *wcur, *rcur;     /* fill cursors */
} gctx;

static int writes_of(const rfx_ra_cmd *c, int out[2])
{
    int n = 0;
    if (c->dst >= 0)
        out[n++] = c->dst;
    if (c->op == RFX_RA_SWAP && c->src[0] >= 0)
        out[n++] = c->src[0];
    return n;
}

/* Operands whose emptiness makes c's result empty; their count. */
static int annihilators(const rfx_ra_cmd *c, int *out, int cap)
{
    int n = 0;
    switch (c->op) {
    case RFX_RA_JOIN:
    case RFX_RA_MAPJOIN:
    case RFX_RA_PRODUCT:
    case RFX_RA_INTERSECT:
        out[n++] = c->src[0];
        out[n++] = c->src[1];
        break;
    case RFX_RA_SELECT:
    case RFX_RA_PROJECT:
    case RFX_RA_MAP:
    case RFX_RA_MAPFILTER:
    case RFX_RA_DIFFERENCE:
    case RFX_RA_SORT:
    case RFX_RA_UNIQUE:
    case RFX_RA_SORT_UNIQUE:
    case RFX_RA_AGGREGATE:   /* a row per row of src0 (the groups) */
    case RFX_RA_CHOICE:
    case RFX_RA_EQREL:
    case RFX_RA_LATTICE:
    case RFX_RA_RANGE:
    case RFX_RA_COPY:
        out[n++] = c->src[0];
        break;
    case RFX_RA_LFTJ:
        if (!c->count_only)
            for (int k = 0; k < c->nvars && n < cap; k++)
                out[n++] = c->vars[k];
        break;
    default:
        break;
    }
    return n;
}

/* c's destination is a result of its operands alone, so an empty one may stand for it. */
static bool pure(const gctx *x, const rfx_ra_cmd *c)
{
    int ann[64];
    if (c->dst < 0 || x->P->vars[c->dst].count_only || annihilators(c, ann, 64) == 0)
        return false;
    for (int k = 0; k < rfx_ra_cmd_ninputs(c); k++)
        if (rfx_ra_cmd_input(c, k) == c->dst)
            return false;
    return true;
}

/* No command of the block running at positions from..to writes v. */
static bool settled(const gctx *x, int v, int from, int to)
{
    int l = x->local[v];
    for (int k = l < 0 ? 0 : x->wstart[l]; l >= 0 && k < x->wstart[l + 1]; k++)
        if (x->wpos[k] >= from && x->wpos[k] <= to)
            return false;
    return true;
}

/* Adds to k the annihilators of command ci settled from `from` to its turn. An operand that
 * an earlier member of ci's fused group writes at the group's turn is not settled, but it
 * is empty whenever one of that member's own annihilators is: those stand for it (a delta
 * selected inside a JOIN group then guards the group). */
static void add_annihilators(const gctx *x, int ci, int from, clause *k, int depth)
{
    const rfx_ra_cmd *c = &x->P->blocks[x->b].cmds[ci];
    int ann[64];
    int n = annihilators(c, ann, 64);
    for (int i = 0; i < n && k->n < MAX_CLAUSE; i++) {
        int v = ann[i];
        if (v < 0 || x->P->vars[v].kind == RFX_PV_UNIT)
            continue;
        if (!settled(x, v, from, x->exec_pos[ci])) {
            int l = x->local[v], w = l >= 0 ? x->writer[l] : -1;
            if (depth < MAX_DEPTH && w >= 0 && w < ci && x->nwrites[v] == 1 && x->exec_pos[w] == x->exec_pos[ci] &&
                pure(x, &x->P->blocks[x->b].cmds[w]))
                add_annihilators(x, w, from, k, depth + 1);
            continue;
        }
        bool seen = false;
        for (int j = 0; j < k->n; j++)
            seen |= k->v[j] == v;
        if (!seen)
            k->v[k->n++] = v;
    }
}

/* The clause "c's result is empty", of the annihilators settled from `from` to c's turn. */
static clause empty_clause(const gctx *x, int ci, int from)
{
    clause k = {0};
    add_annihilators(x, ci, from, &k, 0);
    return k;
}

static cnf no_guard(void)
{
    return (cnf){.none = true};
}

static cnf of_clause(clause k)
{
    cnf g = {.n = 1};
    g.c[0] = k;
    return k.n ? g : no_guard();
}

/* k or g, as a conjunction: k joins each of g's clauses. */
static cnf or_clause(clause k, cnf g)
{
    if (g.none)
        return of_clause(k);
    for (int i = 0; i < g.n; i++)
        for (int j = 0; j < k.n && g.c[i].n < MAX_CLAUSE; j++) {
            bool seen = false;
            for (int l = 0; l < g.c[i].n; l++)
                seen |= g.c[i].v[l] == k.v[j];
            if (!seen)
                g.c[i].v[g.c[i].n++] = k.v[j];
        }
    return g;
}

static bool subset(const clause *a, const clause *b)
{
    for (int i = 0; i < a->n; i++) {
        bool in = false;
        for (int j = 0; j < b->n; j++)
            in |= a->v[i] == b->v[j];
        if (!in)
            return false;
    }
    return true;
}

/* a and b; a clause implied by another (a superset of its variables) is left out */
static cnf and_cnf(cnf a, cnf b)
{
    if (a.none || b.none)
        return no_guard();
    for (int i = 0; i < b.n; i++) {
        bool implied = false;
        for (int j = 0; j < a.n && !implied; j++)
            implied = subset(&a.c[j], &b.c[i]);
        if (implied)
            continue;
        int kept = 0;
        for (int j = 0; j < a.n; j++)
            if (!subset(&b.c[i], &a.c[j]))
                a.c[kept++] = a.c[j];
        a.n = kept;
        if (a.n == MAX_CLAUSES)
            return no_guard();
        a.c[a.n++] = b.c[i];
    }
    return a;
}

/* A temporary that only the block's later commands read, written by ci alone. */
static bool private_temporary(const gctx *x, int ci)
{
    int t = x->P->blocks[x->b].cmds[ci].dst, l = x->local[t];
    if (x->P->vars[t].kind != RFX_PV_TEMP || x->nwrites[t] != 1 || x->writer[l] != ci || x->read_block[t] != x->b ||
        x->first_read[l] == x->first_read[l + 1])
        return false;
    for (int k = x->first_read[l]; k < x->first_read[l + 1]; k++)
        if (x->reads[k] <= ci || x->exec_pos[x->reads[k]] < x->exec_pos[ci])
            return false;
    return true;
}

/* When command ci's result is empty or unread, from variables settled since `from`. */
static cnf unneeded(const gctx *x, int ci, int from, int depth)
{
    const rfx_ra_cmd *c = &x->P->blocks[x->b].cmds[ci];
    clause own = empty_clause(x, ci, from);
    if (depth >= MAX_DEPTH || !private_temporary(x, ci))
        return of_clause(own);
    cnf readers = {0};
    int l = x->local[c->dst];
    for (int k = x->first_read[l]; k < x->first_read[l + 1] && !readers.none; k++) {
        int r = x->reads[k];
        const rfx_ra_cmd *rc = &x->P->blocks[x->b].cmds[r];
        /* a reader with side effects, or writing what outlives it, needs c's rows */
        cnf u = pure(x, rc) ? unneeded(x, r, from, depth + 1) : no_guard();
        readers = and_cnf(readers, u);
    }
    return own.n ? or_clause(own, readers) : readers;
}

static bool store(rfx_arena *a, rfx_hcmd *hc, cnf g, const int *clear, int nclear)
{
    if (g.none || g.n == 0)
        return true;
    int len = 0;
    for (int i = 0; i < g.n; i++)
        len += g.c[i].n + 1;
    int *v = rfx_arena_alloc(a, sizeof(int) * (size_t)(len + nclear));
    if (!v)
        return false;
    int k = 0;
    for (int i = 0; i < g.n; i++) {
        for (int j = 0; j < g.c[i].n; j++)
            v[k++] = g.c[i].v[j];
        v[k++] = -1;
    }
    rfx_memcpy(v + k, clear, sizeof(int) * (size_t)nclear);
    hc->nclauses = g.n;
    hc->guard = v;
    hc->nclear = nclear;
    hc->clear = v + k;
    return true;
}

static bool guard_block(gctx *x, rfx_harmony *h)
{
    const rfx_block *pb = &x->P->blocks[x->b];
    int n = pb->ncmds;
    for (int i = 0; i < n; i++) {
        const rfx_fgroup *g = rfx_weave_group_at(x->W, x->b, i);
        x->exec_pos[i] = g && g->block == x->b ? g->anchor : i;
    }
    /* the variables the block touches, numbered locally: a block costs its own size */
    x->ntouched = 0;
    for (int i = 0; i < n; i++) {
        const rfx_ra_cmd *c = &pb->cmds[i];
        int w[2], nw = writes_of(c, w);
        for (int k = 0; k < nw + rfx_ra_cmd_ninputs(c); k++) {
            int v = k < nw ? w[k] : rfx_ra_cmd_input(c, k - nw);
            if (v >= 0 && x->local[v] < 0) {
                x->local[v] = x->ntouched;
                x->touched[x->ntouched++] = v;
            }
        }
    }
    int m = x->ntouched;
    memset(x->writer, -1, sizeof(int) * (size_t)m);
    memset(x->wstart, 0, sizeof(int) * (size_t)(m + 1));
    memset(x->first_read, 0, sizeof(int) * (size_t)(m + 1));
    /* two passes over the block: count, then fill (a command reading v twice once) */
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            for (int l = 0; l < m; l++) {
                x->wstart[l + 1] += x->wstart[l];
                x->first_read[l + 1] += x->first_read[l];
            }
            memcpy(x->wcur, x->wstart, sizeof(int) * (size_t)m);
            memcpy(x->rcur, x->first_read, sizeof(int) * (size_t)m);
        }
        for (int i = 0; i < n; i++) {
            const rfx_ra_cmd *c = &pb->cmds[i];
            int w[2];
            for (int k = writes_of(c, w) - 1; k >= 0; k--) {
                int l = x->local[w[k]];
                if (pass == 0) {
                    x->wstart[l + 1]++;
                    x->writer[l] = x->writer[l] == -1 ? i : -2;
                } else {
                    x->wpos[x->wcur[l]++] = x->exec_pos[i];
                }
            }
            for (int k = 0; k < rfx_ra_cmd_ninputs(c); k++) {
                int v = rfx_ra_cmd_input(c, k);
                bool again = false;
                for (int j = 0; j < k; j++)
                    again |= rfx_ra_cmd_input(c, j) == v;
                if (v < 0 || again)
                    continue;
                if (pass == 0)
                    x->first_read[x->local[v] + 1]++;
                else
                    x->reads[x->rcur[x->local[v]]++] = i;
            }
        }
    }

    rfx_hblock *hb = &h->blocks[x->b];
    for (int i = 0; i < n; i++) {
        rfx_hcmd *hc = &hb->cmds[i];
        if (!hc->runs)
            continue;
        const rfx_fgroup *g = hc->group;
        cnf guard = {0};
        int clear[64], nclear = 0;
        if (!g) {
            if (!pure(x, &pb->cmds[i]))
                continue;
            guard = unneeded(x, i, i, 0);
            clear[nclear++] = pb->cmds[i].dst;
        } else {
            for (int k = 0; k < g->nmembers && !guard.none; k++) {
                const rfx_fmember *fm = &g->members[k];
                const rfx_ra_cmd *mc = &pb->cmds[fm->cmd];
                if (fm->block != x->b || !pure(x, mc) || nclear == 64) {
                    guard = no_guard();
                    break;
                }
                guard = and_cnf(guard, unneeded(x, fm->cmd, i, 0));
                clear[nclear++] = mc->dst;
            }
        }
        if (!store(h->arena, hc, guard, clear, nclear))
            return false;
    }
    for (int l = 0; l < m; l++)
        x->local[x->touched[l]] = -1;
    return true;
}

bool rfx_harmony_guards(rfx_harmony *h)
{
    const rfx_plan *P = h->plan;
    int nv = P->nvars, maxcmds = 0, maxrefs = 0;
    for (int b = 0; b < P->nblocks; b++) {
        maxcmds = P->blocks[b].ncmds > maxcmds ? P->blocks[b].ncmds : maxcmds;
        int refs = 0;
        for (int i = 0; i < P->blocks[b].ncmds; i++)
            refs += rfx_ra_cmd_ninputs(&P->blocks[b].cmds[i]) + 2;
        maxrefs = refs > maxrefs ? refs : maxrefs;
    }
    gctx x = {.P = P, .W = h->weave};
    size_t nvs = (size_t)nv + 1;
    x.exec_pos = rfx_calloc((size_t)maxcmds + 1, sizeof(int));
    x.nwrites = rfx_calloc(nvs, sizeof(int));
    size_t refs = (size_t)maxrefs + 2;
    x.local = rfx_calloc(nvs, sizeof(int));
    x.touched = rfx_calloc(refs, sizeof(int));
    x.writer = rfx_calloc(refs, sizeof(int));
    x.first_read = rfx_calloc(refs, sizeof(int));
    x.reads = rfx_calloc((size_t)maxrefs + 1, sizeof(int));
    x.read_block = rfx_calloc(nvs, sizeof(int));
    x.wstart = rfx_calloc(refs, sizeof(int));
    x.wpos = rfx_calloc(refs, sizeof(int));
    x.wcur = rfx_calloc(refs, sizeof(int));
    x.rcur = rfx_calloc(refs, sizeof(int));
    bool ok = x.exec_pos && x.nwrites && x.local && x.touched && x.writer && x.first_read && x.reads &&
              x.read_block && x.wstart && x.wpos && x.wcur && x.rcur;
    for (int v = 0; ok && v < nv; v++)
        x.read_block[v] = x.local[v] = -1;
    for (int b = 0; ok && b < P->nblocks; b++)
        for (int i = 0; i < P->blocks[b].ncmds; i++) {
            const rfx_ra_cmd *c = &P->blocks[b].cmds[i];
            int w[2];
            for (int k = writes_of(c, w) - 1; k >= 0; k--)
                x.nwrites[w[k]]++;
            for (int k = 0; k < rfx_ra_cmd_ninputs(c); k++) {
                int v = rfx_ra_cmd_input(c, k);
                if (v >= 0)
                    x.read_block[v] = x.read_block[v] == -1 || x.read_block[v] == b ? b : -2;
            }
        }
    for (x.b = 0; ok && x.b < P->nblocks; x.b++)
        ok = guard_block(&x, h);
    free(x.exec_pos);
    free(x.nwrites);
    free(x.local);
    free(x.touched);
    free(x.writer);
    free(x.first_read);
    free(x.reads);
    free(x.read_block);
    free(x.wstart);
    free(x.wpos);
    free(x.wcur);
    free(x.rcur);
    return ok;
}
