/* harmony.h: the kernel-level IR (Red Fox's Harmony IR, thesis §3.1.2). Each query-plan
 * command becomes a sequence of kernels over kernel variables: the partition, compute
 * and gather stages of its operator skeleton, library calls (radix sort, scan) and
 * transfers, in the same CFG as the plan. It is built from the plan and the weave the
 * runtime runs (one per program): a fused group's kernels stand at its anchor and its
 * other members launch nothing, as the CUDA backend runs them. Choices made at run time
 * from sizes (a group over fewer than the tuning's jit_min_rows input tuples runs its
 * members; triejoin paths, out-of-core parts) are named in the kernels' notes.
 *
 * Ownership: an rfx_harmony owns its arena and borrows the plan and the weave (free it
 * first). */
#ifndef RFX_HARMONY_H
#define RFX_HARMONY_H

#include "ra_ir.h"
#include "weaver.h"

typedef enum rfx_hk_stage {
    RFX_HK_PARTITION,          /* splits the work: key ranges, tile boundaries, counts */
    RFX_HK_COMPUTE,            /* does the operator's work on each element or pair */
    RFX_HK_GATHER,             /* compacts or scatters results into the output */
    RFX_HK_LIBRARY,            /* a library call: radix sort, exclusive scan */
    RFX_HK_TRANSFER            /* a copy between host and device, or device to device */
} rfx_hk_stage;

/* One kernel (or library call) with the variables it reads and writes. */
typedef struct rfx_hkernel {
    rfx_hk_stage stage;
    const char *name;          /* e.g. "join.count", "cub.radix_sort" */
    int nin, nout;
    int in[4], out[4];         /* kernel variables */
    const char *note;          /* what it computes, for the printer (may be NULL) */
} rfx_hkernel;

/* A kernel variable: a device buffer of elements. */
typedef struct rfx_hvar {
    const char *name;
    int plan_var;              /* the plan variable it holds, or -1 for a scratch buffer */
    int words;                 /* 32-bit words per element (a tuple's arity; 2 for 64-bit) */
    const char *size;          /* element count, symbolic ("|t3|", "|delta_path| + |edge|") */
} rfx_hvar;

/* The kernels of one plan command. */
typedef struct rfx_hcmd {
    const rfx_ra_cmd *cmd;     /* borrowed from the plan */
    const rfx_fgroup *group;   /* the fused group it belongs to (the weave's), or NULL */
    bool runs;                 /* false: a group member run at the group's anchor */
    int nkernels;
    rfx_hkernel *kernels;
    /* Work nobody needs (guards.c): when each of the nclauses clauses of `guard` (variables,
     * each clause ended by -1) holds a variable that is empty at the command's turn, its
     * result (a group's: every member's) is empty or read only where it cannot matter, and
     * the executor empties the nclear variables of `clear` instead of running it. */
    int nclauses;
    const int *guard;
    int nclear;
    const int *clear;
} rfx_hcmd;

typedef struct rfx_hblock {
    int ncmds;
    rfx_hcmd *cmds;
} rfx_hblock;

typedef struct rfx_harmony {
    rfx_arena *arena;
    const rfx_plan *plan;
    const rfx_weave *weave;    /* NULL: no fusion (every command runs on its own) */
    int nvars, varcap;
    rfx_hvar *vars;
    int nblocks;
    rfx_hblock *blocks;
} rfx_harmony;

/* Whether hc's guard holds, given each variable's row count. */
static inline bool rfx_hcmd_skippable(const rfx_hcmd *hc, size_t (*count)(void *ctx, int var), void *ctx)
{
    const int *v = hc->guard;
    for (int k = 0; k < hc->nclauses; k++, v++) {
        bool empty = false;
        for (; *v >= 0; v++)
            empty = empty || count(ctx, *v) == 0;
        if (!empty)
            return false;
    }
    return hc->nclauses > 0;
}

/* Lowers a plan and its weave (NULL: no fused groups); NULL on out-of-memory. */
rfx_harmony *rfx_harmony_build(const rfx_plan *plan, const rfx_weave *weave);
void rfx_harmony_free(rfx_harmony *h);
/* Deterministic text form (`rfx --emit=harmony`). */
void rfx_harmony_print(FILE *out, const rfx_harmony *h);

#endif
