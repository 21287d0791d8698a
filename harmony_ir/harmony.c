/* harmony.c: plan and weave -> Harmony IR (the kernels the CUDA backend launches per
 * command and fused group) and its printer. */
#include "harmony.h"
#include "base.h"
#include "guards.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct hctx {
    rfx_harmony *h;
    rfx_hcmd *cur;
    int kcap;
    int nscratch;
    bool oom;
} hctx;

static void *halloc(hctx *x, size_t n)
{
    void *p = rfx_arena_alloc(x->h->arena, n ? n : 1);
    if (!p)
        x->oom = true;
    return p;
}

static char *hfmt(hctx *x, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char *s = rfx_arena_strdup(x->h->arena, buf, (size_t)(n < 0 ? 0 : n < 255 ? n : 255));
    if (!s)
        x->oom = true;
    return s;
}

static int add_var(hctx *x, const char *name, int plan_var, int words, const char *size)
{
    rfx_harmony *h = x->h;
    if (h->nvars == h->varcap) {
        int nc = h->varcap ? h->varcap * 2 : 32;
        rfx_hvar *v = halloc(x, sizeof(rfx_hvar) * (size_t)nc);
        if (!v)
            return 0;
        rfx_memcpy(v, h->vars, sizeof(rfx_hvar) * (size_t)h->nvars);
        h->vars = v;
        h->varcap = nc;
    }
    h->vars[h->nvars] = (rfx_hvar){name, plan_var, words, size};
    return h->nvars++;
}

/* Kernel variable holding plan variable v (they are numbered alike). */
static int pv(int v)
{
    return v;
}

static const char *size_of(hctx *x, int v)
{
    return hfmt(x, "|%s|", x->h->plan->vars[v].name);
}

static int scratch(hctx *x, int words, const char *size)
{
    return add_var(x, hfmt(x, "s%d", x->nscratch++), -1, words, size);
}

static void kernel(hctx *x, rfx_hk_stage stage, const char *name, const char *note, int nin, const int *in, int nout,
                   const int *out)
{
    rfx_hcmd *c = x->cur;
    if (c->nkernels == x->kcap) {
        int nc = x->kcap ? x->kcap * 2 : 8;
        rfx_hkernel *k = halloc(x, sizeof(rfx_hkernel) * (size_t)nc);
        if (!k)
            return;
        rfx_memcpy(k, c->kernels, sizeof(rfx_hkernel) * (size_t)c->nkernels);
        c->kernels = k;
        x->kcap = nc;
    }
    rfx_hkernel *k = &c->kernels[c->nkernels++];
    memset(k, 0, sizeof *k);
    k->stage = stage;
    k->name = name;
    k->note = note;
    k->nin = nin;
    k->nout = nout;
    for (int i = 0; i < nin && i < 4; i++)
        k->in[i] = in[i];
    for (int i = 0; i < nout && i < 4; i++)
        k->out[i] = out[i];
}

#define K(stage, name, note, ins, outs)                                                         \
    do {                                                                                        \
        int in_[] = {ins}, out_[] = {outs};                                                     \
        kernel(x, stage, name, note, (int)(sizeof in_ / sizeof in_[0]) - 1, in_ + 1,            \
               (int)(sizeof out_ / sizeof out_[0]) - 1, out_ + 1);                              \
    } while (0)
#define V(...) -1, __VA_ARGS__
#define NONE -1

/* Flags, scan, scatter: the compaction every filtering operator ends with. */
static void compaction(hctx *x, int rows, int flags, int dst, const char *n)
{
    int off = scratch(x, 2, n);
    K(RFX_HK_COMPUTE, "scan.lookback", "output positions, in one pass (their total left in a host word)", V(flags),
      V(off));
    K(RFX_HK_GATHER, "compact.scatter", "kept rows to their positions", V(rows, flags, off), V(dst));
}

static void lower_cmd(hctx *x, const rfx_ra_cmd *c)
{
    const rfx_plan *P = x->h->plan;
    int d = c->dst >= 0 ? pv(c->dst) : -1, a = c->src[0] >= 0 ? pv(c->src[0]) : -1,
        b = c->src[1] >= 0 ? pv(c->src[1]) : -1;
    if (c->device_makes)   /* cuda_prims.h's rfx_gpu_mapfilter_making, a pass each level of them */
        K(RFX_HK_COMPUTE, "symbols.make", "functors making symbols: texts built and hashed per tuple, the distinct "
                                          "ones made by the host, each tuple's symbol checked against its text",
          V(a), V(NONE));
    switch (c->op) {
    case RFX_RA_PROJECT: {
        bool plain = true;
        for (int i = 0; i < c->nout; i++)
            plain &= c->out[i]->kind == RFX_RX_COL;
        if (plain) {
            K(RFX_HK_COMPUTE, "project.gather", "columns copied, no interpreter", V(a), V(d));
            break;
        }
        /* constants need the expression program */
        K(RFX_HK_COMPUTE, "map.eval", "output expressions per tuple", V(a), V(d));
        break;
    }
    case RFX_RA_MAP:
        K(RFX_HK_COMPUTE, "map.eval", "output expressions per tuple", V(a), V(d));
        break;
    case RFX_RA_SELECT:
    case RFX_RA_MAPFILTER: {
        const char *n = size_of(x, c->src[0]);
        int rows = scratch(x, c->nout, n), flags = scratch(x, 2, n);
        K(RFX_HK_COMPUTE, "filter.eval", "predicate and outputs per tuple", V(a), V(rows, flags));
        compaction(x, rows, flags, d, n);
        break;
    }
    case RFX_RA_JOIN:
    case RFX_RA_MAPJOIN:
    case RFX_RA_PRODUCT: {
        const char *na = size_of(x, c->src[0]);
        int lo = scratch(x, 2, na), cnt = scratch(x, 2, na), off = scratch(x, 2, na);
        if (c->probe)   /* rfx_gpu_probe_join: searches in any order, or the left side sorted first */
            K(RFX_HK_PARTITION, "join.count",
              "matching key range of each left tuple, in any order (binary search); where the right side outgrows "
              "half the L2 cache and the left is not few next to it: the left sorted first and merged",
              V(a, b), V(lo, cnt));
        else
            K(RFX_HK_PARTITION, "join.count", c->nkeys ? "matching key range of each left tuple (binary search)"
                                                       : "every right tuple matches", V(a, b), V(lo, cnt));
        if (c->range) {   /* rfx_gpu_range_join */
            int bounds = scratch(x, 2, na);
            K(RFX_HK_COMPUTE, "filter.eval", "the bounds the predicate's comparisons put on the right side's column "
              "past the keys, per left tuple", V(a), V(bounds));
            K(RFX_HK_PARTITION, "join.narrow", "each left tuple's range narrowed to its bounds (binary search on that "
              "column)", V(b, bounds, lo, cnt), V(lo, cnt));
        }
        K(RFX_HK_COMPUTE, "scan.lookback", "output range of each left tuple, in one pass", V(cnt), V(off));
        if (c->pred) {
            const char *no = hfmt(x, "sum of %s", "matches");
            int rows = scratch(x, c->nout, no), flags = scratch(x, 2, no);
            K(RFX_HK_COMPUTE, "join.expand", "one output pair per thread, predicate and outputs", V(a, b, lo, off),
              V(rows, flags));
            compaction(x, rows, flags, d, no);
        } else
            K(RFX_HK_COMPUTE, "join.expand", "one output pair per thread", V(a, b, lo, off), V(d));
        break;
    }
    case RFX_RA_UNION: {
        /* the smaller side (chosen at run time; src1 shown) less the larger, then a merge
         * of two disjoint sets: every tuple written once at its final place */
        const char *n = size_of(x, c->src[1]);
        int fresh = b;
        if (!c->disjoint) {   /* operands known disjoint skip the search */
            int flags = scratch(x, 2, n);
            fresh = scratch(x, P->vars[c->src[1]].arity, n);
            K(RFX_HK_COMPUTE, "semijoin.search", "smaller side's tuples absent from the larger (binary search)",
              V(b, a), V(flags));
            compaction(x, b, flags, fresh, n);
        }
        K(RFX_HK_COMPUTE, "merge.tiles", "a block per tile of the larger side: the fresh tuples between its ends "
                                         "merged in shared memory, each tuple written once at its final place",
          V(a, fresh), V(d));
        break;
    }
    case RFX_RA_INTERSECT:
    case RFX_RA_DIFFERENCE: {
        const char *n = size_of(x, c->src[0]);
        int flags = scratch(x, 2, n);
        K(RFX_HK_COMPUTE, "semijoin.search", c->op == RFX_RA_INTERSECT ? "key prefix found in src1 (binary search)"
                                                                      : "key prefix absent from src1 (binary search)",
          V(a, b), V(flags));
        compaction(x, a, flags, d, n);
        break;
    }
    case RFX_RA_SORT: case RFX_RA_SORT_UNIQUE: {
        int arity = P->vars[c->src[0]].arity;
        bool distinct = c->op == RFX_RA_SORT_UNIQUE;
        if (distinct && c->nkeys > 0)   /* the plan's hint; the sort below where it fails */
            K(RFX_HK_COMPUTE, "sort.runs",
              hfmt(x, "rows sorted on columns 0..%d checked, each run of equal ones (up to 32 rows) sorted by one "
                      "thread; else as below", c->nkeys - 1),
              V(a), V(d));
        if (arity <= 2 && (distinct || c->nkeys == 0 || c->nkeys >= arity))   /* not a stable sort on a prefix */
            K(RFX_HK_COMPUTE, "sort.small", hfmt(x, "up to %d rows: sorted%s by one block in shared memory; else as below",
                                                    RFX_SORT_ONE_BLOCK_MAX, distinct ? " and made distinct" : ""), V(a), V(d));
        K(RFX_HK_PARTITION, "sort.bits", "bits that vary, per column", V(a), V(NONE));
        if (arity == 2 && distinct) {   /* repeats dropped as the sorted rows are written out */
            int keys = scratch(x, 2, size_of(x, c->src[0]));
            K(RFX_HK_LIBRARY, "cub.radix_sort", "rows of two columns (or packed 64-bit keys)", V(a), V(keys));
            K(RFX_HK_COMPUTE, "unique.lookback", "the first of each run of equal keys, written as a row, in one pass",
              V(keys), V(d));
            break;
        }
        if (arity == 2 && c->nkeys == 1)   /* rows of equal column 0 in order already */
            K(RFX_HK_LIBRARY, "cub.radix_sort", "rows of two columns as 64-bit words, stable, on column 0 alone", V(a),
              V(d));
        else if (arity <= 2)
            K(RFX_HK_LIBRARY, "cub.radix_sort", arity == 1 ? "32-bit keys" : "rows of two columns (or packed 64-bit keys)",
              V(a), V(d));
        else {
            const char *n = size_of(x, c->src[0]);
            int perm = scratch(x, 1, n), keys = scratch(x, 1, n);
            K(RFX_HK_COMPUTE, "sort.iota", "identity permutation", V(NONE), V(perm));
            const bool leading = !distinct && c->nkeys > 0 && c->nkeys < arity;   /* stable, on the keys */
            for (int col = (leading ? c->nkeys : arity) - 1; col >= 0; col--) {
                K(RFX_HK_COMPUTE, "sort.gather_column", hfmt(x, "column %d in permutation order", col), V(a, perm), V(keys));
                K(RFX_HK_LIBRARY, "cub.radix_sort_pairs", "stable, column as key, permutation as value", V(keys, perm),
                  V(perm));
            }
            K(RFX_HK_GATHER, "sort.gather_rows", "rows in sorted order", V(a, perm), V(d));
        }
        if (distinct) {   /* then as UNIQUE, in place */
            const char *n = size_of(x, c->dst);
            int flags = scratch(x, 2, n);
            K(RFX_HK_COMPUTE, "unique.flags", "first of each run of equal tuples", V(d), V(flags));
            compaction(x, d, flags, d, n);
        }
        break;
    }
    case RFX_RA_UNIQUE: {
        const char *n = size_of(x, c->src[0]);
        int flags = scratch(x, 2, n);
        K(RFX_HK_COMPUTE, "unique.flags", "first of each run of equal tuples", V(a), V(flags));
        compaction(x, a, flags, d, n);
        break;
    }
    case RFX_RA_LFTJ: {
        /* breadth-first: per variable, count candidates of each frontier node's driver,
         * check one candidate per thread, compact the survivors into the next frontier */
        int nsrc = c->nvars, first = pv(c->vars[0]);
        for (int s = 0; s < nsrc; s++) {   /* a two-column source is read as its TrieArray, one a relation
                                             (at run time: of 2^20 rows or more) */
            int v = c->vars[s];
            bool seen = false;
            for (int q = 0; q < s; q++)
                seen |= c->vars[q] == v;
            if (seen || P->vars[v].arity != 2)
                continue;
            const char *n = size_of(x, v), *tiles = hfmt(x, "2 x tiles of %s", n);
            int cnt = scratch(x, 2, tiles), off = scratch(x, 2, tiles), trie = scratch(x, 1, hfmt(x, "%s + 2 x roots", n));
            K(RFX_HK_PARTITION, "trie.count", "TrieArray entries per level and tile: a row is new from its first column "
              "that differs from the row before", V(pv(v)), V(cnt));
            K(RFX_HK_LIBRARY, "cub.exclusive_scan", "each tile's first entry of each level", V(cnt), V(off));
            K(RFX_HK_COMPUTE, "trie.scatter", "levels' val and ptr, entries ranked by warp ballots", V(pv(v), off),
              V(trie));
        }
        if (c->lftj_swap) {   /* the first two variables' order, from the degrees of e(0,1)'s relation */
            int e = c->vars[rfx_ra_lftj_source(P, c, 0, 1)];   /* there is one: rfx_plan_lftj_schedules */
            int sums = scratch(x, 4, "1"), rev = scratch(x, 2, size_of(x, e));
            K(RFX_HK_COMPUTE, "lftj.order_costs", "candidates probed at $2 in order $0, $1 and in $1, $0, from degrees",
              V(pv(e)), V(sums));
            K(RFX_HK_LIBRARY, "cub.radix_sort", "where $1, $0 probes under 0.8 of the plan's: e(0,1) reversed, sorted on $1 "
              "(then every source reads $0 and $1 traded)", V(pv(e)), V(rev));
        }
        int front = scratch(x, 2 * nsrc, "1");
        for (int v = 0; v < c->nkeys; v++) {
            bool last = v == c->nkeys - 1;
            const char *n = hfmt(x, "|frontier %d|", v), *cand = hfmt(x, "candidates %d", v);
            int cnt = scratch(x, 2, n), off = scratch(x, 2, n), flags = scratch(x, 2, cand), at = scratch(x, 2, cand);
            int next = last ? d : scratch(x, v + 1 + 2 * nsrc, hfmt(x, "|frontier %d|", v + 1));
            K(RFX_HK_PARTITION, "lftj.count", hfmt(x, "variable $%d: each node's smallest participant and its rows", v),
              V(front), V(cnt));
            K(RFX_HK_COMPUTE, "scan.lookback", "candidate ranges (load balancing), in one pass", V(cnt), V(off));
            K(RFX_HK_COMPUTE, "lftj.check", "one candidate per thread: a new value found in every participant (binary search)",
              V(first, front, off), V(flags));
            K(RFX_HK_COMPUTE, "scan.lookback", "survivor positions, in one pass", V(flags), V(at));
            K(RFX_HK_GATHER, "lftj.emit", last ? "bindings" : "bindings and narrowed trie nodes", V(front, flags, at),
              V(next));
            front = next;
        }
        break;
    }
    case RFX_RA_AGGREGATE: {
        const char *n = size_of(x, c->src[0]);
        int rows = scratch(x, P->vars[c->dst].arity, n), flags = scratch(x, 2, n);
        K(RFX_HK_COMPUTE, "aggregate.fold", hfmt(x, "%s over each tuple's group (binary search)", rfx_aggfn_str(c->agg)),
          V(a, b), V(rows, flags));
        compaction(x, rows, flags, d, n);
        break;
    }
    case RFX_RA_COPY:
        K(RFX_HK_TRANSFER, "copy.d2d", NULL, V(a), V(d));
        break;
    case RFX_RA_INPUT:
    case RFX_RA_FACTS: {
        int staged = scratch(x, P->vars[c->dst].arity, c->op == RFX_RA_INPUT ? "tuples read" : "facts");
        K(RFX_HK_TRANSFER, "copy.h2d", c->op == RFX_RA_INPUT ? "read, sorted and deduplicated on the host"
                                                             : "the program's facts, sorted on the host", V(NONE), V(staged));
        K(RFX_HK_COMPUTE, "merge.place", "union with the relation's tuples", V(d, staged), V(d));
        break;
    }
    case RFX_RA_OUTPUT:
        K(RFX_HK_TRANSFER, "copy.d2h", "written by the host", V(a), V(NONE));
        break;
    default:
        break;   /* SWAP and CLEAR exchange or empty buffers; control flow runs on the host */
    }
}

/* A fused group's kernels at its anchor: the generated kernels, or its members' own where
 * the backend runs the group member by member. */
static void lower_group(hctx *x, const rfx_fgroup *g)
{
    const rfx_plan *P = x->h->plan;
    const char *small = "over fewer than jit_min_rows input tuples: the members' kernels instead";
    if (g->kind == RFX_FG_FILTER) {
        int outs[4] = {NONE, NONE, NONE, NONE};
        for (int m = 0; m < g->nouts && m < 4; m++)
            outs[m] = pv(g->outs[m].dst);
        kernel(x, RFX_HK_COMPUTE, hfmt(x, "%s.filter", g->name),
               hfmt(x, "generated: %d output%s placed by decoupled look-back in one pass; %s", g->nouts,
                    g->nouts == 1 ? "" : "s", small),
               1, (int[]){pv(g->src)}, g->nouts < 4 ? g->nouts : 4, outs);
        return;
    }
    if (g->gpu_by_members) {
        for (int k = 0; k < g->nmembers; k++) {
            const rfx_fmember *m = &g->members[k];
            lower_cmd(x, &P->blocks[m->block].cmds[m->cmd]);
        }
        return;
    }
    int ins[4] = {NONE, NONE, NONE, NONE};
    for (int s = 0; s < g->nsrc && s < 4; s++)
        ins[s] = pv(g->srcs[s]);
    const char *n = size_of(x, g->srcs[0]);
    int cnt = scratch(x, 2, n), off = scratch(x, 2, n);
    kernel(x, RFX_HK_PARTITION, hfmt(x, "%s.count", g->name),
           g->probe ? hfmt(x, "generated: matches per row of the first source, in any order, over %d sources; %s; where "
                              "searches cost more than a sort (rfx_gpu_probe_pays): the first source sorted on its "
                              "key columns first", g->nsrc, small)
                    : hfmt(x, "generated: matches per row of the first source over %d sources; %s", g->nsrc, small),
           g->nsrc < 4 ? g->nsrc : 4, ins, 1, (int[]){cnt});
    K(RFX_HK_COMPUTE, "scan.lookback", "output ranges, in one pass", V(cnt), V(off));
    int eins[4] = {off, ins[0], ins[1], ins[2]};
    kernel(x, RFX_HK_COMPUTE, hfmt(x, "%s.expand", g->name), "generated: one thread per candidate, filters and outputs",
           g->nsrc + 1 < 4 ? g->nsrc + 1 : 4, eins, 1, (int[]){pv(g->dst)});
}

rfx_harmony *rfx_harmony_build(const rfx_plan *plan, const rfx_weave *weave)
{
    rfx_harmony *h = rfx_calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->arena = rfx_arena_new();
    h->plan = plan;
    h->weave = weave;
    hctx x = {.h = h};
    if (!h->arena) {
        free(h);
        return NULL;
    }
    for (int v = 0; v < plan->nvars; v++)
        add_var(&x, plan->vars[v].name, v, plan->vars[v].arity, size_of(&x, v));
    h->nblocks = plan->nblocks;
    h->blocks = halloc(&x, sizeof(rfx_hblock) * (size_t)(plan->nblocks + 1));
    for (int b = 0; h->blocks && b < plan->nblocks; b++) {
        const rfx_block *pb = &plan->blocks[b];
        rfx_hblock *hb = &h->blocks[b];
        hb->ncmds = pb->ncmds;
        hb->cmds = halloc(&x, sizeof(rfx_hcmd) * (size_t)(pb->ncmds + 1));
        for (int i = 0; hb->cmds && i < pb->ncmds; i++) {
            const rfx_fgroup *g = rfx_weave_group_at(weave, b, i);
            const bool anchor = g && g->block == b && g->anchor == i;
            hb->cmds[i] = (rfx_hcmd){.cmd = &pb->cmds[i], .group = g, .runs = !g || anchor};
            x.cur = &hb->cmds[i];
            x.kcap = 0;
            if (anchor)
                lower_group(&x, g);
            else if (!g)
                lower_cmd(&x, &pb->cmds[i]);
        }
    }
    if (x.oom || !rfx_harmony_guards(h)) {
        rfx_harmony_free(h);
        return NULL;
    }
    return h;
}

void rfx_harmony_free(rfx_harmony *h)
{
    if (!h)
        return;
    rfx_arena_free(h->arena);
    free(h);
}

static const char *stage_name(rfx_hk_stage s)
{
    static const char *n[] = {"partition", "compute", "gather", "library", "transfer"};
    return n[s];
}

static void print_vars(FILE *out, const rfx_harmony *h, const int *v, int n)
{
    fputc('(', out);
    for (int i = 0; i < n; i++)
        fprintf(out, "%s%s", i ? ", " : "", v[i] >= 0 ? h->vars[v[i]].name : "-");
    fputc(')', out);
}

static void print_guard(FILE *out, const rfx_harmony *h, const rfx_hcmd *c)
{
    if (!c->nclauses)
        return;
    fputs("    // skipped (its outputs emptied) when empty:", out);
    const int *v = c->guard;
    for (int k = 0; k < c->nclauses; k++, v++) {
        fputs(k ? " and" : "", out);
        bool several = v[0] >= 0 && v[1] >= 0;
        fputs(several ? " (" : " ", out);
        for (int first = 1; *v >= 0; v++, first = 0)
            fprintf(out, "%s%s", first ? "" : " or ", h->plan->vars[*v].name);
        fputs(several ? ")" : "", out);
    }
    fputc('\n', out);
}

void rfx_harmony_print(FILE *out, const rfx_harmony *h)
{
    const rfx_plan *P = h->plan;
    fprintf(out, "// Harmony IR of %s: the kernels each plan command launches, fused groups at their anchor%s\n",
            P->prog->file, h->weave ? "" : " (no fusion)");
    for (int v = 0; v < h->nvars; v++) {
        const rfx_hvar *kv = &h->vars[v];
        if (kv->plan_var >= 0 && P->vars[kv->plan_var].kind == RFX_PV_UNIT)
            continue;
        fprintf(out, ".kvar %s: u32x%d[%s]%s\n", kv->name, kv->words, kv->size, kv->plan_var < 0 ? "   // scratch" : "");
    }
    for (int b = 0; b < h->nblocks; b++) {
        const rfx_block *pb = &P->blocks[b];
        fprintf(out, "\nB%d:%s%s\n", b, pb->label ? "  // " : "", pb->label ? pb->label : "");
        for (int i = 0; i < h->blocks[b].ncmds; i++) {
            const rfx_hcmd *c = &h->blocks[b].cmds[i];
            rfx_plan_print_cmd(out, P, c->cmd);
            if (c->group && c->runs)
                fprintf(out, "    // fused group %s (%s%s), in place of its %d command%s\n", c->group->name,
                        c->group->kind == RFX_FG_FILTER ? "FILTER" : "JOIN",
                        c->group->gpu_by_members ? ", run member by member" : "", c->group->nmembers,
                        c->group->nmembers == 1 ? "" : "s");
            else if (c->group)
                fprintf(out, "    // in fused group %s: runs at its anchor, B%d[%d]\n", c->group->name,
                        c->group->block, c->group->anchor);
            print_guard(out, h, c);
            for (int k = 0; k < c->nkernels; k++) {
                const rfx_hkernel *kn = &c->kernels[k];
                fprintf(out, "      %-9s %-22s ", stage_name(kn->stage), kn->name);
                print_vars(out, h, kn->in, kn->nin);
                fputs(" -> ", out);
                print_vars(out, h, kn->out, kn->nout);
                if (kn->note)
                    fprintf(out, "   // %s", kn->note);
                fputc('\n', out);
            }
        }
    }
}
