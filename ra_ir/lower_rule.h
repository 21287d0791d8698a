/* lower_rule.h: a rule's pipeline as lower.c builds it, shared with lower_expr.c (the
 * rule's expressions over a pipeline's columns), lower_extreme.c and lower_lftj.c (planner
 * rules of their own); private to ra_ir/. */
#ifndef RFX_LOWER_RULE_H
#define RFX_LOWER_RULE_H

#include "ra_internal.h"

/* A stream of tuples in the pipeline: which variable holds it, which rule variable each
 * column carries (-1 for a computed column with no variable), and what order it has. */
typedef struct flow {
    int var;
    int n;
    int *schema;
    int sorted;                /* the first `sorted` columns are in lexicographic order */
    bool unique;               /* no duplicate tuples */
} flow;

typedef enum item_kind { IT_ATOM, IT_NEG, IT_FILTER, IT_BIND, IT_AGG, IT_RANGE } item_kind;

/* One body element still to be applied. */
typedef struct item {
    item_kind kind;
    const rfx_atom *atom;      /* IT_ATOM, IT_NEG */
    int src;                   /* IT_ATOM, IT_NEG: plan variable scanned */
    int *argvar;               /* IT_ATOM, IT_NEG: per column a variable, or -1 (no variable) */
    const rfx_expr **argconst; /* per column: constant to match, or NULL */
    const rfx_expr *lhs, *rhs; /* IT_FILTER: comparison; IT_BIND: rhs computes var; IT_RANGE:
                                * rhs is range(...), lhs the variable taking its values */
    rfx_cmpop cmp;
    bool bitwise;              /* IT_FILTER: the values' bits compared (rfx_lit.bitwise) */
    int var;                   /* IT_BIND, IT_RANGE: bound variable; IT_AGG: result variable */
    const rfx_expr *agg;       /* IT_AGG */
    rfx_loc loc;
    double est;                /* IT_ATOM: estimated size */
    bool delta;                /* IT_ATOM: scans a delta relation (the semi-naive pivot) */
    int ord;                   /* IT_ATOM: its place among the body's atoms (a `.plan`'s numbers, from 0) */
    bool head_test;            /* IT_NEG: the rule's own head, not written in the body (lower.c,
                                * add_head_test): applied only where a join remains */
    bool done;
} item;

/* An output column of a pipeline: an expression, or a plain variable when e is NULL. */
typedef struct hcol {
    const rfx_expr *e;
    int var;
} hcol;

typedef struct rule_ctx {
    lower_ctx *L;
    const rfx_clause *c;
    int nv;                    /* variables: the clause's, then fresh ones */
    int nagg;                  /* aggregate expressions of the conjunction and their variables */
    const rfx_expr **aggs;
    int *aggvar;
    item *items;
    int nitems, itemcap;
    bool *bound;
    int *bound_by;             /* per variable: 1 + the IT_BIND item that bound it, 0 where none did */
    const rfx_expr *folded[8];   /* aggregates rfx_lower_extremes made of atoms: their groups
                                  * come from the enclosing tuples (a correlated aggregate) */
    int nfolded;
} rule_ctx;

/* cj with each existential comparison (a positive atom with a variable that one ordered
 * comparison alone reads: `p(k, y), x < y`) made a comparison with the atom's extreme
 * (`x < max y : { p(k, y) }`: lower_extreme.c); cj itself where there is none. *delta_lit
 * follows the literal it named; out are the columns the body must give (y not among
 * them). The aggregates made go to made[*nmade ...], at most cap in all. */
const rfx_conj *rfx_lower_extremes(lower_ctx *L, const rfx_clause *c, const rfx_conj *cj, int *delta_lit,
                                   const hcol *out, int nout, const rfx_expr **made, int *nmade, int cap);

/* cj with each `v = aggregate` whose v nothing else reads made what it asks (lower_extreme.c):
 * a min's or max's body joined into cj (whether it has a tuple), a count or sum dropped
 * (always one value); cj itself where there is none. Literals keep their indices. */
const rfx_conj *rfx_lower_unread_aggregates(lower_ctx *L, const rfx_clause *c, const rfx_conj *cj,
                                            const hcol *out, int nout);

/* Scan of an atom (lower.c): selections for constants, repeated variables and, with
 * push_filters, the comparisons over its variables alone; its columns are its distinct
 * variables, less those keep (when given) does not hold. */
flow rfx_lower_scan_atom(rule_ctx *R, item *it, bool push_filters, const bool *keep);
/* lower.c: the variables still needed after the items done so far (by open items and the
 * output) marked in use; an item added to the body's. */
void rfx_lower_needed_vars(rule_ctx *R, const hcol *out, int nout, bool *use, const bool *outer);
void rfx_lower_expr_vars(rule_ctx *R, const rfx_expr *e, bool *use);
/* lower_keys.c: bindings as join keys */
flow rfx_lower_keys_inverted(rule_ctx *R, flow cur, const item *it);
flow rfx_lower_keys_computed_on_atom(rule_ctx *R, flow s, const flow *cur, const item *it);
int rfx_lower_keys_by_bindings(rule_ctx *R, const item *it, const flow *cur);
bool rfx_lower_atoms_tied_by_bindings(rule_ctx *R);
/* A variable of the atom scanned as s that comparisons with cur's values range (`y <= x + 2`;
 * keys[0..k) the join's keys), or -1; those comparisons, as the predicate of the join of cur
 * and s (s sorted on y after the keys), marked done. */
int rfx_lower_range_var(rule_ctx *R, const flow *cur, const flow *s, const int *keys, int k);
rfx_rx *rfx_lower_range_pred(rule_ctx *R, int y, const flow *cur, const flow *s, const int *keys, int k);
void rfx_lower_add_item(rule_ctx *R, item it);
/* Ranges (lower_range.c): whether `v = range(...)` is best left until an atom binds v;
 * it applied to cur; whether nothing after it reads v (a rule's body needs then only that
 * the range has a value); that test applied. */
bool rfx_lower_range_waits(rule_ctx *R, const item *it);
void rfx_lower_apply_range(rule_ctx *R, flow *cur, item *it);
bool rfx_lower_range_unread(rule_ctx *R, item *it, const hcol *out, int nout, const bool *outer);
void rfx_lower_apply_range_nonempty(rule_ctx *R, flow *cur, item *it);
/* Flows (lower_flow.c): a new one over variable var, of n columns (schema to fill). */
flow rfx_lower_flow_new(lower_ctx *L, int var, int n);
/* The column types of the outputs computed by out. */
rfx_prim *rfx_lower_out_types(rule_ctx *R, rfx_rx **out, int nout);
/* Whether outs name every one of a flow's n columns as it is (the map is one-to-one). */
bool rfx_lower_keeps_every_column(rfx_rx *const *outs, int nout, int n);
/* A one-input command computing outs (filtered by pred, when given) from f: its flow. */
flow rfx_lower_emit_map(rule_ctx *R, const flow *f, rfx_rx *pred, rfx_rx **outs, int *schema, int nout);
/* f's rows sorted on all their columns (and made distinct where they may not be) into a
 * new temporary; the sort command, or NULL. */
rfx_ra_cmd *rfx_lower_sort_all(lower_ctx *L, flow *f);
/* Whether f is sorted with the variables keys[0..k) first (and, compact, holds only the
 * columns need asks for, and no duplicates). */
bool rfx_lower_in_order(const flow *f, const int *keys, int k, const bool *need, bool compact);
/* f projected with keys[0..k) first, then its other columns need asks for (NULL: all);
 * *rest_ordered: rows of equal keys are in order already. */
flow rfx_lower_keys_first(rule_ctx *R, flow f, const int *keys, int k, const bool *need, bool *rest_ordered);
/* f's rows whose first k columns do (op INTERSECT) or do not (DIFFERENCE) occur in the
 * sorted k-column variable set; probe: f not in order on them (each row searched);
 * optional: a filter nothing depends on (rfx_ra_cmd.optional). */
void rfx_lower_emit_semijoin(lower_ctx *L, flow *f, rfx_ra_op op, int set, int k, bool probe, bool optional);
/* f sorted with the variables keys[0..k) first (need and compact: which columns after
 * them it keeps). */
flow rfx_lower_ensure_order(rule_ctx *R, flow f, const int *keys, int k, const bool *need, bool compact);
/* Joins every positive atom still to apply with one leapfrog triejoin where the plan's join
 * choice says so (auto: a cyclic body of three or more atoms): true where it decided, *cur
 * then binding every atom variable, sorted (lower_lftj.c). */
bool rfx_lower_try_lftj(rule_ctx *R, flow *cur);

/* Whether the body is a semi-naive loop's version (it reads a delta). */
bool rfx_lower_in_loop(const rule_ctx *R);
/* Whether a positive atom still to be joined binds a variable (lower_probe.c). */
bool rfx_lower_joins_left(const rule_ctx *R);
/* A negated atom applied to cur: an anti-join with its scan (lower.c). */
void rfx_lower_apply_negation(rule_ctx *R, flow *cur, item *it);
/* Searches of a relation the loop makes (lower_probe.c): the columns of atom `it` read by
 * searches of cur's tuples (0: a scan instead); cur's tuples kept where those columns' values
 * are (op INTERSECT) or are not (DIFFERENCE) in it; the head's own test applied to cur. */
int rfx_lower_probe_cols(rule_ctx *R, const flow *cur, const item *it);
void rfx_lower_probe_atom(rule_ctx *R, flow *cur, item *it, int k, rfx_ra_op op);
void rfx_lower_apply_head_test(rule_ctx *R, flow *cur, item *it);

/* Whether v is one of vals[0..n). */
static inline bool rfx_lower_listed(const int *vals, int n, int v)
{
    for (int i = 0; i < n; i++)
        if (vals[i] == v)
            return true;
    return false;
}

/* The variable holding an aggregate expression's result (-1 where it has none). */
int rfx_lower_agg_var(rule_ctx *R, const rfx_expr *e);
/* The column of f0, or past f0's of f1 (may be NULL), that carries var; -1 where none does. */
int rfx_lower_col_of(const flow *f0, const flow *f1, int var);
/* An expression over the columns of f0 (and f1 after them), computed in its own type or,
 * untyped, in want; a comparison `l op r`. */
rfx_rx *rfx_lower_expr(rule_ctx *R, const rfx_expr *e, const flow *f0, const flow *f1, rfx_prim want);
rfx_rx *rfx_lower_cmp(rule_ctx *R, const item *filter, const flow *f0, const flow *f1);
rfx_prim rfx_lower_expr_prim(rule_ctx *R, const rfx_expr *e);

#endif
