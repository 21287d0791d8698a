/* sema.h: the checker (private to frontend/): its entry point, and what its files share. */
#ifndef RFX_SEMA_H
#define RFX_SEMA_H
#include "parse_ctx.h"

/* Fills p's types, relations, clauses and strata from what the parser collected;
 * reports problems through ctx->diag. */
void rfx_sema_run(rfx_program *p, rfx_parse_ctx *ctx);

/* The checker's state, shared by its files. */
typedef struct sema {
    rfx_program *p;
    rfx_parse_ctx *ctx;
    rfx_diag *d;
} sema;

static inline void *salloc(sema *s, size_t n)
{
    void *p = rfx_arena_alloc(s->p->arena, n ? n : 1);
    if (!p)
        s->ctx->oom = true;
    return p;
}

/* sema_types.c: a type by name (-1: none); the program's types from the declarations; the
 * subtype rules for one conjunction of clause c and its head. */
int rfx_sema_find_type(const rfx_program *p, const char *name);
void rfx_sema_check_types(sema *s);
void rfx_sema_check_subtypes(sema *s, const rfx_clause *c, const rfx_conj *cj);

/* sema_decls.c: the program's relations and their directives; its pragmas. */
void rfx_sema_check_decls(sema *s);
void rfx_sema_check_pragmas(sema *s);

#endif
