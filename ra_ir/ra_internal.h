/* ra_internal.h: state shared by the lowering and the passes (private to ra_ir/). */
#ifndef RFX_RA_INTERNAL_H
#define RFX_RA_INTERNAL_H

#include "ra_ir.h"
#include "fault.h"

typedef struct lower_ctx {
    rfx_plan *plan;
    const rfx_program *prog;
    int block;                 /* block receiving commands */
    int ntemps;                /* temporaries named so far */
    int rule;                  /* clause being lowered, -1 outside rules */
    int stratum;               /* stratum being lowered, -1 before */
    int *relvar, *deltavar, *newvar;   /* per program relation: plan variables */
    rfx_join_choice join;      /* --join */
    bool oom;
    const char *internal_error;
} lower_ctx;

int rfx_lower_new_var(lower_ctx *L, const char *name, rfx_pvar_kind kind, int arity,
                      const rfx_prim *types, int rel);
rfx_ra_cmd *rfx_lower_emit(lower_ctx *L, rfx_ra_op op, int dst, int s0, int s1);
int rfx_lower_new_block(lower_ctx *L, const char *label);
rfx_rx *rfx_rx_new(lower_ctx *L, rfx_rx_kind kind, rfx_prim prim);
rfx_rx *rfx_rx_col(lower_ctx *L, int col, rfx_prim prim);
rfx_rx *rfx_rx_and(lower_ctx *L, rfx_rx *a, rfx_rx *b);

#endif
