/* sema.h: the checker's entry point (private to frontend/). */
#ifndef RFX_SEMA_H
#define RFX_SEMA_H
#include "parse_ctx.h"

/* Fills p's types, relations, clauses and strata from what the parser collected;
 * reports problems through ctx->diag. */
void rfx_sema_run(rfx_program *p, rfx_parse_ctx *ctx);

#endif
