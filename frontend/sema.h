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
    int anonymous;             /* record types made for records nothing types */
    int decimals;              /* decimal(P, S) types made as their names are met */
} sema;

/* One clause being checked: its variables' names, numbered in order. */
typedef struct clause_ctx {
    sema *s;
    rfx_clause *c;
    rfx_plist names;           /* const char* */
    rfx_conj *conj;            /* the conjunction whose aggregates are being scoped */
    bool literals_type;        /* `v = 1 + 2` types v (number) when nothing else does */
} clause_ctx;

/* A new variable index under an existing name (an aggregate's local variable, a lifted
 * range's or record's). */
int rfx_sema_fresh_var(clause_ctx *cc, const char *name);
/* The variables of cj that its equalities bind, given those in bound, added to bound, to a
 * fixpoint (skip: an expression not to look into). */
void rfx_sema_ground_eqs(const rfx_conj *cj, bool *bound, const rfx_expr *skip);
/* Appends literal l to cj. */
bool rfx_sema_add_lit(sema *s, rfx_conj *cj, rfx_lit *l);
/* An expression outside clauses (a lattice's Bottom and Top): its constructors, functors and
 * casts resolved as in a clause. */
void rfx_sema_resolve_expr(sema *s, rfx_expr *e);
/* `$B(a, b)` (sema_types.c): its ADT and branch found, the value it stands for as Soufflé
 * stores it. */
void rfx_sema_resolve_constructor(sema *s, rfx_expr *e);
/* A type's name as a message shows it (an ADT branch's record of fields, `T.$B`, by the
 * branch's; an anonymous record type without its '$'); a type with its aliases resolved. */
const char *rfx_sema_type_shown(const rfx_program *p, int t);
int rfx_sema_canon_type(const rfx_program *p, int t);
/* The record type of fields of these types that records nothing else types get (`s = [x, y],
 * s != [1, 2]`, as Soufflé accepts them), made once per list of field types (named
 * `$[number, symbol]`); -1 past RFX_ANONYMOUS_RECORDS of them. */
#define RFX_ANONYMOUS_RECORDS 64
int rfx_sema_anonymous_record(sema *s, const int *fields, int n);
/* `v = [a, b]` with v and the record untyped, its fields typed: v that anonymous record type
 * (sema_types.c). */
void rfx_sema_type_anonymous_records(clause_ctx *cc, rfx_conj *cj, bool *changed);
/* sema.c's typing: an expression's type, or -1 where it cannot be told yet (integer literals
 * take want's, else number); variable v given type t. */
int rfx_sema_expr_type(clause_ctx *cc, rfx_expr *e, int want);
void rfx_sema_bind_type(clause_ctx *cc, int v, int t, rfx_loc loc, bool *changed);
/* sema_lift.c: records in the clause's bodies lifted (before the aggregates' scopes: a
 * record's variables are grounded by its atom); then range() generators. */
void rfx_sema_lift_records(clause_ctx *cc);
void rfx_sema_lift_ranges(clause_ctx *cc);
/* sema_lattice.c: the `.lattice` declarations and the relations' lattice attributes; the
 * clause's bodies rewritten to read lattice arguments through Glb (before the lifts). */
void rfx_sema_check_lattices(sema *s);
void rfx_sema_rewrite_lattices(clause_ctx *cc);

/* A float literal (or its negation), typed float unless its context wants a float64 (then
 * it is one) or a decimal (then it is the decimal of its own scale, 0.05 a decimal(18,2)):
 * true, e retyped. The type of e given its own (type) where want is wanted: want where e
 * is arithmetic over float literals alone and want a float64 (its nodes take it in turn as
 * their operands are checked), else type. The type of binary operator e from its operands' types l and r: l's (r's
 * where l is none), a float64 for a float literal beside one, and for decimals (a float
 * literal beside one counting as a decimal of its own scale) SQL's: + - min max the
 * larger scale, * the scales added (-1 past 18), / a float64. The scale of a literal that a
 * decimal holds exactly, or -1. */
bool rfx_sema_float64_literal(sema *s, rfx_expr *e, int want);
int rfx_sema_literal_arith_type(const sema *s, const rfx_expr *e, int type, int want);
int rfx_sema_binop_type(sema *s, const rfx_expr *e, int l, int r);
int rfx_sema_literal_scale(double v);
/* sema_strata.c: p's strata (and the relations' strata) from its clauses' dependencies;
 * a cycle through negation or aggregation is an error. */
void rfx_sema_stratify(sema *s);
/* sema_disconnected.c: a rule body's parts that share no variable with its head become
 * nullary relations of their own (Soufflé's disconnected literals); true where one did (the
 * program is then stratified again). */
bool rfx_sema_split_disconnected(sema *s);
/* sema_subsume.c: a subsumptive clause's body, before its DNF, with "the tuples differ" and
 * a loose order the body writes between one column of the two tuples (`a <= b`) made
 * `a < b ; a = b, (the other columns differ)`: the same tuples, without a product. */
void rfx_sema_tighten_subsumption(sema *s, rfx_clause *c);
/* sema_demand.c: a helper relation read in one place made only for the tuples read there;
 * true where it rewrote one (the strata are to be made again). */
bool rfx_sema_push_demand(sema *s);
/* sema_widen.c: 64-bit values as pairs of words, in relations, clauses and expressions (the
 * last rewrite, on a program checked without errors). */
void rfx_sema_widen(sema *s);

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
/* The same, a `decimal(P, S)` made the first time it is named (the lexer spells them one
 * way); that of a precision and scale (the results of decimal arithmetic). */
#define RFX_DECIMAL_TYPES (19 * 19)
int rfx_sema_type(sema *s, const char *name);
int rfx_sema_decimal_type(sema *s, int precision, int scale);
void rfx_sema_check_types(sema *s);
void rfx_sema_check_subtypes(sema *s, const rfx_clause *c, const rfx_conj *cj);
/* Whether values of types a and b may meet (an argument, a comparison): records only of
 * one record type; other types as their kinds say (checked apart). */
bool rfx_sema_types_agree(const rfx_program *p, int a, int b);
/* The ADT with a branch of this name (its number in *branch), or -1. */
int rfx_sema_find_branch(const rfx_program *p, const char *name, int *branch);

/* sema_decls.c: the program's relations and their directives; its pragmas. */
void rfx_sema_check_decls(sema *s);
void rfx_sema_check_pragmas(sema *s);
void rfx_sema_check_functors(sema *s);

#endif
