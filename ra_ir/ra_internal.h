/* ra_internal.h: state shared by the lowering and the passes (private to ra_ir/). */
#ifndef RFX_RA_INTERNAL_H
#define RFX_RA_INTERNAL_H

#include "ra_ir.h"
#include "base.h"

typedef struct lower_ctx {
    rfx_plan *plan;
    const rfx_program *prog;
    int block;                 /* block receiving commands */
    int ntemps;                /* temporaries named so far */
    int rule;                  /* clause being lowered, -1 outside rules */
    int stratum;               /* stratum being lowered, -1 before */
    int *relvar, *deltavar, *newvar;   /* per program relation: plan variables */
    int *lattice_facts;        /* per relation with lattice attributes and rules: the variable its facts
                                * are loaded into, for its stratum's first batch (else -1) */
    rfx_join_choice join;      /* --join */
    const rfx_plan_order *order;   /* the `.plan` of the rule version being lowered (else NULL) */
    const int *role_src;       /* a subsumptive clause being lowered: per rfx_lit.role, the variable
                                * its atom reads (else NULL) */
    int role_first;            /* the role whose atom the join starts from (the smaller side), or 0 */
    int *stratum_rules;        /* the rules (clause indices, facts left out) by their head's stratum: */
    int *stratum_first;        /* stratum s's are stratum_rules[stratum_first[s] .. stratum_first[s+1]) */
    bool oom;
    const char *internal_error;
} lower_ctx;

/* Plan-lifetime memory; marks the lowering out of memory on failure. */
static inline void *lalloc(lower_ctx *L, size_t n)
{
    void *p = rfx_arena_alloc(L->plan->arena, n ? n : 1);
    if (!p)
        L->oom = true;
    return p;
}

/* The kind the plan computes a value of type t in: a date is its number of days, a decimal
 * its count of 10^-scale (type_scale). */
static inline rfx_prim type_prim(const rfx_program *p, int t)
{
    rfx_prim k = t >= 0 ? p->types[t].prim : RFX_NUMBER;
    return k == RFX_DATE ? RFX_NUMBER : k == RFX_DECIMAL ? RFX_NUMBER64 : k;
}

/* The scale of a value of type t: a decimal's, else 0. */
static inline int type_scale(const rfx_program *p, int t)
{
    return t >= 0 && p->types[t].prim == RFX_DECIMAL ? p->types[t].scale : 0;
}

/* The kind of a column whose attribute has type t: the high word of a 64-bit value (the
 * front end's sema_widen.c) is a word, as its low word is. */
static inline rfx_prim column_prim(const rfx_program *p, int t)
{
    rfx_prim k = type_prim(p, t);
    return RFX_PRIM_WIDE(k) ? RFX_WORD : k;
}

/* lower.c: one disjunct of a rule as a sorted set of head tuples (its variable; -1 for a
 * `false` body), or UNIONed into `into`; delta_lit selects the atom read as a delta. */
int rfx_lower_rule_set(lower_ctx *L, const rfx_clause *c, const rfx_conj *cj, int delta_lit);
void rfx_lower_rule(lower_ctx *L, const rfx_clause *c, const rfx_conj *cj, int delta_lit, int into);
/* A literal's value as stored (the 32-bit pattern of prim); *ok false where it has none. */
uint64_t rfx_lower_const_value(const rfx_program *p, const rfx_expr *e, rfx_prim prim, bool *ok);

int rfx_lower_new_var(lower_ctx *L, const char *name, rfx_pvar_kind kind, int arity,
                      const rfx_prim *types, int rel);
rfx_ra_cmd *rfx_lower_emit(lower_ctx *L, rfx_ra_op op, int dst, int s0, int s1);
int rfx_lower_new_block(lower_ctx *L, const char *label);
/* Temporaries are named t0, t1, ... in the order made: the number the next one takes (for
 * passes that make more). */
int rfx_plan_temps_named(const rfx_plan *P);
/* n commands (zeroed) inserted before index at of b, the block's array regrown in the plan's
 * arena where full; NULL out of memory (b unchanged). */
rfx_ra_cmd *rfx_block_insert(lower_ctx *L, rfx_block *b, int at, int n);
/* Whether a command of b at an index in [from, to) may change variable v (writes it, or
 * swaps it with another). */
bool rfx_block_writes(const rfx_block *b, int v, int from, int to);
rfx_rx *rfx_rx_new(lower_ctx *L, rfx_rx_kind kind, rfx_prim prim);
rfx_rx *rfx_rx_col(lower_ctx *L, int col, rfx_prim prim);
rfx_rx *rfx_rx_and(lower_ctx *L, rfx_rx *a, rfx_rx *b);
/* Whether an expression draws fresh values (autoinc()): each evaluation differs, so it is
 * neither duplicated, merged nor moved (passes.c). */
bool rfx_rx_fresh(const rfx_rx *e);
/* x as a constant where its operands are constants (a zero divisor, a failing functor and
 * autoinc() stay, to act at run time); x's bits typed prim; a functor node over args. */
rfx_rx *rfx_rx_fold(rfx_rx *x);
rfx_rx *rfx_rx_retype(lower_ctx *L, rfx_rx *x, rfx_prim prim);
rfx_rx *rfx_rx_fn(lower_ctx *L, rfx_fn_op op, rfx_prim prim, rfx_rx **args, int nargs, rfx_loc loc);

#endif
