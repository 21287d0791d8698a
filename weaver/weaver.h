/* weaver.h: the kernel weaver (Red Fox thesis ch. 4). Finds groups of plan commands that
 * can run as one kernel, so that intermediate results stay in registers instead of device
 * memory, and generates the CUDA C source of each group.
 *
 * Fusion happens in two stages. Thread dependences between a producer and its only
 * consumer (SELECT/PROJECT/MAP chains, a JOIN followed by a filter) are folded into
 * MAPFILTER and MAPJOIN commands by the plan pass rfx_plan_fuse_maps, so the CPU profits
 * too. The weaver then forms groups (Algorithm 1) and keeps those that fit a register and
 * shared-memory budget (Algorithm 2):
 *   - FILTER groups: every element-wise command reading one input, up to 8 of them (input
 *     dependence: several selections over one relation read it once);
 *   - JOIN groups: a sort-merge JOIN with the selections that feed it and the JOINs on the
 *     same key below it (CTA dependence: each key range of the inputs is joined where it
 *     is filtered), run as one star join over the unfiltered sources.
 * Every other command (SORT, UNIQUE, UNION, ...) needs all of its input and is a boundary.
 *
 * A group runs in place of its anchor command; the other commands it holds are skipped.
 *
 * Ownership: an rfx_weave owns its arena and borrows the plan (free the weave first). */
#ifndef RFX_WEAVER_H
#define RFX_WEAVER_H

#include "primitives.h"
#include "ra_ir.h"

#define RFX_WEAVE_MAX_OUTS RFX_FUSED_MAX_OUTS   /* outputs of one FILTER group */
#define RFX_WEAVE_MAX_SRCS RFX_FUSED_MAX_SRCS   /* sources of one JOIN group */

typedef enum rfx_fgroup_kind { RFX_FG_FILTER, RFX_FG_JOIN } rfx_fgroup_kind;

/* Why a command joined its group (the thesis's dependence classes). */
typedef enum rfx_fdep {
    RFX_DEP_ANCHOR,            /* the command the group replaces */
    RFX_DEP_INPUT,             /* reads the same input as the anchor */
    RFX_DEP_THREAD,            /* an element-wise producer of the consumer's input */
    RFX_DEP_CTA                /* a key-partitioned producer (a JOIN on the same key) */
} rfx_fdep;

typedef struct rfx_fmember {
    int block, cmd;            /* the plan command */
    rfx_fdep dep;
} rfx_fmember;

/* One output of a FILTER group: dst = out(sigma_pred(src)). */
typedef struct rfx_fout {
    int dst;
    const rfx_rx *pred;        /* NULL: every tuple */
    int nout;                  /* dst's arity; out[k] NULL means column k (SELECT) */
    rfx_rx *const *out;
} rfx_fout;

typedef struct rfx_fgroup {
    rfx_fgroup_kind kind;
    int id;                    /* its index in weave->groups */
    const struct rfx_weave *weave;   /* the weave it belongs to */
    int block, anchor;         /* runs in place of plan->blocks[block].cmds[anchor] */
    int nmembers;
    rfx_fmember *members;      /* in plan order; the anchor is among them */
    /* FILTER: src read once, nouts outputs */
    int src;
    int nouts;
    rfx_fout *outs;
    /* JOIN: dst = out(sigma_pre,pred(srcs[0] |x|_k srcs[1] |x|_k ...)); expressions read
     * the sources' columns concatenated (source s from offset[s]). pre reads srcs[0] only
     * and is tested before its matches are looked up. pred holds the other conjunctions:
     * filt[s] (s >= 1: the ones over source s alone, which cannot fail) and then
     * residual (the rest, in plan order). A key range of source s short enough to scan
     * is filtered by filt[s] when it is counted, so that only its passing rows expand. */
    int nsrc;
    int *srcs, *offset;
    int nkeys;
    bool probe;                /* srcs[0] in any order (the anchor is a probe) */
    int *keycol;               /* the key columns of srcs[0] (a probe's); NULL: its first nkeys */
    rfx_rx *pre, *pred;        /* NULL: none; conjunctions tested left to right */
    rfx_rx **filt;             /* per source (filt[0] == pre); NULL: none */
    rfx_rx *residual;
    int nout;
    rfx_rx **out;
    int dst;
    /* Whether the GPU runs the group by its members (the primitives) instead of its
     * generated kernels: JOIN groups that took in commands that filter or join do (not
     * those that only reorder the first source's columns: a probe's keys). Their star join over
     * unfiltered sources lost to the primitives' tiled joins over filtered ones (bench_weaver,
     * thesis patterns (b) and (c)), while a lone JOIN generated beat its primitive (TC and
     * SG on SNAP graphs; docs/PERFORMANCE.md). Set when the weave is built
     * (rfx_weave_opts.join_groups overrides it, for comparisons). */
    bool gpu_by_members;
    /* resource estimate of the generated kernel (Algorithm 2) */
    int regs, smem;
    char name[16];             /* kernel name prefix ("rfx_g3") */
    char *source;              /* generated CUDA C */
    uint64_t source_hash;      /* rfx_fnv1a of source: its identity in the JIT's caches */
    bool divides;              /* the source divides (integers): a FILTER's host waits for
                                  the kernel's end, when every block has set the flag */
} rfx_fgroup;

typedef struct rfx_weave_opts {
    int max_regs;              /* per thread (0: 96) */
    int max_smem;              /* bytes per block (0: 48 KiB) */
    int join_groups;           /* JOIN groups: 0 run as their size says (one member: one generated
                                * kernel; more: member by member), 1 always one generated kernel,
                                * 2 always member by member (rfx_tuning.join_groups) */
} rfx_weave_opts;

typedef struct rfx_weave {
    rfx_arena *arena;
    const rfx_plan *plan;      /* borrowed */
    int ngroups;
    rfx_fgroup *groups;
    int **at;                  /* per block, per command: group index it belongs to, or -1 */
} rfx_weave;

/* Forms the groups of a plan and generates their code; NULL on out-of-memory. */
rfx_weave *rfx_weave_build(const rfx_plan *plan, const rfx_weave_opts *opts);
void rfx_weave_free(rfx_weave *w);

/* The group that plan command (block, cmd) belongs to, or NULL. */
static inline const rfx_fgroup *rfx_weave_group_at(const rfx_weave *w, int block, int cmd)
{
    int g = w ? w->at[block][cmd] : -1;
    return g >= 0 ? &w->groups[g] : NULL;
}

/* The variables a group reads (FILTER: its source; JOIN: its sources) and writes (FILTER:
 * its outputs; JOIN: dst), by position. */
int rfx_fgroup_ninputs(const rfx_fgroup *g);
int rfx_fgroup_input(const rfx_fgroup *g, int k);
int rfx_fgroup_noutputs(const rfx_fgroup *g);
int rfx_fgroup_output(const rfx_fgroup *g, int k);
/* Member m's plan command; and, for a group run member by member, the variable member m
 * writes that nothing reads after the group (a JOIN chain's results but the group's
 * own), to be freed after the group, or -1. */
const rfx_ra_cmd *rfx_fgroup_member_cmd(const rfx_plan *P, const rfx_fgroup *g, int m);
int rfx_fgroup_temporary(const rfx_plan *P, const rfx_fgroup *g, int m);
/* Whether member k's temporary is read by no member after member m (k <= m): a group run
 * member by member frees it then, as the plan's liveness frees the commands' temporaries
 * after their last use, so the group never holds more memory than its commands run apart
 * (held to the group's end, a JOIN chain's selections made the pool grow mid-group). */
bool rfx_fgroup_temporary_dead(const rfx_plan *P, const rfx_fgroup *g, int k, int m);

/* `rfx --emit=fused`: the groups, their members with the dependence that brought each in,
 * and the resource estimate. */
void rfx_weave_print(FILE *out, const rfx_weave *w);
/* `rfx --emit=cuda`: the generated source of every group. */
void rfx_weave_print_cuda(FILE *out, const rfx_weave *w);

/* Code generation (codegen.c): the CUDA C source of a group (arena-allocated), its kernel
 * names derived from g->name; *divides: whether it divides integers. NULL on out-of-memory. */
char *rfx_weave_codegen(rfx_arena *arena, const rfx_plan *plan, const rfx_fgroup *g, bool *divides);

#define RFX_WEAVE_THREADS RFX_FUSED_THREADS
/* Rows per thread of a FILTER tile: as many as keep the loaded columns within 32 registers,
 * and at most 8 (rows of one or two words: 16 let only four blocks fit a multiprocessor,
 * see below). */
static inline int rfx_weave_items(int arity)
{
    return arity <= 4 ? 8 : arity <= 8 ? 4 : arity <= 16 ? 2 : 1;
}
/* Blocks a multiprocessor a FILTER kernel over rows this wide asks registers for (0: no
 * bound). Two-word rows, 8 a thread, capped for 6 blocks: more blocks resident hide each
 * block's wait at the look-back behind the others' loads, which beat more rows a thread
 * (bench_weaver's pattern (a)); wider rows keep their registers (a cap cost them more than
 * it won). */
static inline int rfx_weave_min_blocks(int arity)
{
    return arity <= 2 ? 6 : 0;
}
/* Whether a FILTER tile of rows this wide is loaded through shared memory (16-byte loads;
 * rows of 1, 2 or 4 words load as vectors directly; tiles over 32 KiB do not fit). */
static inline bool rfx_weave_staged(int arity)
{
    return arity != 0 && arity != 1 && arity != 2 && arity != 4 && rfx_weave_items(arity) * arity <= 32;
}
/* Whether a JOIN group's expand kernel gathers its output rows in shared memory and
 * writes them coalesced: rows of three words or more (from registers, each store of a warp
 * would touch 32 rows apart), at most 32 (32 KiB a block). */
static inline bool rfx_weave_expand_staged(int nout)
{
    return nout >= 3 && nout <= 32;
}
/* Key ranges up to this long are filtered while counted (JOIN groups). */
#define RFX_WEAVE_SCAN_RANGE 64

#endif
