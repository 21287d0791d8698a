/* frontend.h: the Datalog front end: parse, check, and hand a typed, safe, stratified
 * program (the AST below) to the query-plan lowering in ra_ir/.
 *
 * Ownership: everything reachable from an rfx_program lives in its arena and is freed
 * by rfx_program_free(); callers borrow. Strings are interned in the program's symbol
 * table (rfx_symtab), which the runtime keeps extending with symbols read from facts. */
#ifndef RFX_FRONTEND_H
#define RFX_FRONTEND_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>

#include "base.h"

/* ---- diagnostics ---------------------------------------------------------------- */

/* Where the lines of a preprocessed program came from (its line markers): from line `at`
 * of the text on, line `line` of `file` onwards. */
typedef struct rfx_linemark {
    int at, line;
    const char *file;
} rfx_linemark;
typedef struct rfx_linemap {
    int n;
    rfx_linemark *marks;       /* by `at` */
} rfx_linemap;

typedef struct rfx_diag {
    const char *file;          /* name shown in messages */
    const char *src;           /* whole source text, to quote the line (may be NULL) */
    FILE *out;                 /* where messages go (stderr by default) */
    int errors;                /* count so far */
    int max_errors;            /* stop reporting after this many */
    const rfx_linemap *map;    /* a preprocessed program's lines (NULL: the text is the file's) */
    const char *instance;      /* the component instance being checked: messages name it (else NULL) */
    bool no_warnings;          /* `.pragma "no-warn"` */
} rfx_diag;

void rfx_diag_error(rfx_diag *d, rfx_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void rfx_diag_warning(rfx_diag *d, rfx_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "line 12" (or "inc.dl:12" in another file) for loc, in messages that name a second place. */
const char *rfx_diag_where(const rfx_diag *d, rfx_loc loc, char *buf, size_t cap);

/* ---- limits (checked with messages) --------------------------------------------- */
#define RFX_MAX_RULE_VARS 1000   /* distinct variables of one rule */
#define RFX_MAX_EXPR_DEPTH 10000 /* operators on one path of an expression */
/* atoms (negated or not) of one conjunction of a rule's body: semi-naive evaluation makes a
 * version of the rule per recursive atom, each joining all of them, so the plan grows with the square
 * of this and planning time faster (a 650-atom rule: 1.7 M commands, 31 s; 8 KB of
 * 64-atom rules plan in ~3 s under ASan and the fuzzer's coverage, of 128-atom ones
 * ~7.5 s, near its 10 s limit) */
#define RFX_MAX_RULE_ATOMS 64

/* ---- types ---------------------------------------------------------------------- */

typedef struct rfx_type {
    const char *name;          /* "number", or a user type */
    rfx_prim prim;             /* representation */
    int parent;                /* index of the supertype (`<:`), the aliased type (`=`) or a union's
                                * first member; -1 for primitives */
    rfx_loc loc;               /* declaration, for messages */
    bool subtype;              /* declared `<:` (else an alias, or a union) */
    int nmembers;              /* a union `A | B | ...`: its members (else 0) */
    int *members;
    int nfields;               /* a record type `[a: A, b: B]`: its fields (else -1); its values are
                                * ids of the run's record table (unsigned, 0 for nil) */
    int *fields;               /* their types */
    const char **field_names;
    int nbranches;             /* an ADT `A {x: X} | B {}`: its branches (else 0); a value is the record
                                * [branch, its fields...] of the run's record table */
    struct rfx_branch *branches;
    bool enumeration;          /* an ADT whose branches have no fields: its values are their numbers */
    int precision, scale;      /* decimal(P, S): digits in all, and after the point */
} rfx_type;

typedef struct rfx_branch {
    const char *name;
    int nfields;
    int *fields;               /* their types, after [0], the branch number's (unsigned) */
    const char **field_names;
    int payload;               /* the record type of its fields where it has not one (else -1) */
    int stored[2];             /* the types of the record a value is (an ADT not an enumeration):
                                * Soufflé's [branch, field] or [branch, [fields...]] */
} rfx_branch;

/* ---- expressions ---------------------------------------------------------------- */
typedef enum rfx_expr_kind {
    RFX_E_VAR,                 /* name, var (index after checking) */
    RFX_E_ANON,                /* `_` */
    RFX_E_INT,                 /* ival: an integer literal, typed by context */
    RFX_E_UNSIGNED,            /* ival: `5u` */
    RFX_E_FLOAT,               /* fval */
    RFX_E_STRING,              /* sym: interned id */
    RFX_E_NEG,                 /* lhs: unary minus */
    RFX_E_BINOP,               /* op, lhs, rhs */
    RFX_E_AGG,                 /* agg: aggregate over a sub-body */
    RFX_E_FN                   /* fn: an intrinsic functor over its arguments */
} rfx_expr_kind;


/* Soufflé's intrinsic functors other than the operators (rfx_binop) and min/max. contains
 * and match are constraints in a body (`match(p, s)` is `match(p, s) = 1`). as(x, T)
 * gives x's bits typed T; range(a, b[, step]) takes every value from a towards b. */
typedef enum rfx_functor {
    RFX_FN_CAT, RFX_FN_STRLEN, RFX_FN_SUBSTR, RFX_FN_ORD, RFX_FN_CONTAINS, RFX_FN_MATCH,
    RFX_FN_TO_NUMBER, RFX_FN_TO_UNSIGNED, RFX_FN_TO_FLOAT, RFX_FN_TO_STRING,
    RFX_FN_AS, RFX_FN_RANGE, RFX_FN_AUTOINC,
    RFX_FN_RECORD,             /* `[a, b]`: a record of its arguments (its type from the context);
                                * `$B(a, b)` (cast_name "B"): an ADT's branch B, after checking the record
                                * [branch, a, b] (cast: the ADT, field: the branch) */
    RFX_FN_NIL,                /* `nil`: the record of no tuple */
    RFX_FN_FIELD,              /* the checker's: field `field` of its argument, a record (0 for nil); of
                                * an ADT's branch `cast` (else -1) */
    RFX_FN_USER,               /* `@name(...)` (cast_name): the program's functor `field` (rfx_functor_decl),
                                * whose result type is `cast` (set by the checker) */
    RFX_FN_TO_DATE,            /* to_date("1994-01-01"): a symbol's date (a literal's checked, folded) */
    RFX_FN_DATE_YEAR, RFX_FN_DATE_MONTH, RFX_FN_DATE_DAY,   /* a date's year, month (1-12), day (1-31) */
    RFX_FN_ADD_MONTHS,         /* add_months(d, n): n months after d (the day kept, or the month's last) */
    RFX_FN_LIKE,               /* like(pattern, s): SQL's LIKE, `%` any text, `_` one character (a constraint) */
    RFX_FN_PAIR,               /* the checker's, after typing (sema_widen.c): the 64-bit value of its two
                                * 32-bit words (high, low) */
    RFX_FN_HI, RFX_FN_LO,      /* ... the high or low word of its 64-bit argument */
    RFX_FN_COUNT
} rfx_functor;
const char *rfx_functor_name(rfx_functor f);
/* The functor named `name`, or -1. */
int rfx_functor_find(const char *name);


typedef struct rfx_body rfx_body;
typedef struct rfx_expr rfx_expr;

struct rfx_expr {
    rfx_expr_kind kind;
    rfx_loc loc;
    int type;                  /* index into program types, set by the checker (-1 = unset) */
    int depth;                 /* operators on its longest path to a leaf (RFX_MAX_EXPR_DEPTH) */
    bool bits;                 /* RFX_E_INT written in hex, binary or IPv4: any 32 bits (64 of a
                                * 64-bit type) */
    bool bits64;               /* ... one past 32 bits */
    union {
        struct { const char *name; int var; } v;               /* RFX_E_VAR */
        int64_t ival;                                          /* RFX_E_INT / UNSIGNED */
        double fval;                                           /* RFX_E_FLOAT */
        uint32_t sym;                                          /* RFX_E_STRING */
        struct { rfx_binop op; rfx_expr *lhs, *rhs; } bin;     /* RFX_E_NEG uses lhs */
        struct { rfx_aggfn fn; rfx_expr *target; rfx_body *body; bool scoped; } agg; /* RFX_E_AGG;
                                   scoped: its local variables renumbered apart (sema) */
        struct { rfx_functor fn; int nargs; rfx_expr **args; const char *cast_name; int cast; int field;
                 const int *arg_types; } fn;
                               /* RFX_E_FN; as(x, T): T's name and (after checking) its index;
                                * RFX_FN_FIELD: the field's place; RFX_FN_USER: its parameters' types */
    } u;
};

/* The operands of an operator node (RFX_E_NEG, RFX_E_BINOP, RFX_E_FN), in order; none for
 * leaves and aggregates (whose parts are walked on their own). */
static inline int rfx_expr_nkids(const rfx_expr *e)
{
    return e->kind == RFX_E_NEG ? 1 : e->kind == RFX_E_BINOP ? 2 : e->kind == RFX_E_FN ? e->u.fn.nargs : 0;
}
static inline rfx_expr *rfx_expr_kid(const rfx_expr *e, int i)
{
    return e->kind == RFX_E_FN ? e->u.fn.args[i] : i ? e->u.bin.rhs : e->u.bin.lhs;
}

/* ---- atoms, literals, bodies -------------------------------------------------- */
typedef struct rfx_atom {
    const char *name;          /* relation name as written */
    int rel;                   /* index into program relations, set by the checker */
    int nargs;
    rfx_expr **args;
    rfx_loc loc;
} rfx_atom;

typedef enum rfx_lit_kind {
    RFX_L_ATOM,                /* atom */
    RFX_L_NEG,                 /* atom, negated */
    RFX_L_CMP,                 /* cmp, lhs, rhs */
    RFX_L_TRUE,                /* `true` */
    RFX_L_FALSE                /* `false` */
} rfx_lit_kind;

typedef struct rfx_lit {
    rfx_lit_kind kind;
    rfx_loc loc;
    rfx_atom atom;             /* RFX_L_ATOM, RFX_L_NEG */
    rfx_cmpop cmp;             /* RFX_L_CMP */
    rfx_expr *lhs, *rhs;       /* RFX_L_CMP */
    int role;                  /* in a subsumptive clause: RFX_ROLE_DOMINATED or _DOMINATING; else 0 */
    bool bitwise;              /* RFX_L_CMP: compares the values' bits (a float's 0.0 and -0.0
                                * differ), as Soufflé tells one tuple from another */
} rfx_lit;

/* The two atoms of `r(a) <= r(b) :- body.` as body literals of its clause, whose head is a
 * copy of the dominated atom: the tuples it deletes. */
enum { RFX_ROLE_DOMINATED = 1, RFX_ROLE_DOMINATING = 2 };

/* A body as written: a tree of conjunctions and disjunctions over literals.
 * The checker flattens it to disjunctive normal form (rfx_clause.conj). */
typedef enum rfx_body_kind { RFX_B_LIT, RFX_B_AND, RFX_B_OR } rfx_body_kind;
struct rfx_body {
    rfx_body_kind kind;
    rfx_lit *lit;              /* RFX_B_LIT */
    rfx_body *lhs, *rhs;       /* RFX_B_AND, RFX_B_OR */
    struct rfx_conj *flat;     /* aggregate bodies after checking: one conjunction */
};

typedef struct rfx_conj {
    int nlits;
    rfx_lit **lits;
} rfx_conj;

/* ---- clauses and relations ------------------------------------------------------ */
/* `.plan` after a clause: for one version of its semi-naive evaluation (0: the first;
 * i: the one whose delta is its i-th recursive atom), its body atoms' order, numbered
 * from 1 as written. */
typedef struct rfx_plan_order {
    int version, n;
    int *atoms;
    rfx_loc loc;
} rfx_plan_order;

typedef struct rfx_clause {
    rfx_atom head;
    rfx_body *body;            /* NULL for a fact */
    int nconj;                 /* DNF of body (1 for facts, with 0 literals) */
    rfx_conj *conj;
    int nvars;                 /* distinct named variables, numbered 0.. */
    const char **var_names;
    int *var_types;            /* per variable, set by the checker */
    rfx_loc loc;
    bool is_fact;              /* ground head, empty body */
    bool subsumptive;          /* `a <= b :- body.`: its head's tuples are the ones to delete */
    const char *instance;      /* written in a component: the instance it was expanded for (else NULL) */
    int nplans;                /* its `.plan` (else 0) */
    rfx_plan_order *plans;
} rfx_clause;

typedef struct rfx_io_opt {
    const char *key, *value;
} rfx_io_opt;

/* One .input or .output directive: its options and where it stands. */
typedef struct rfx_io_dir {
    int nopts;
    rfx_io_opt *opts;
    rfx_loc loc;
} rfx_io_dir;

typedef struct rfx_attr {
    const char *name;
    int type;                  /* index into program types */
    bool lattice;              /* `x: T<>`: a lattice's element (the relation keeps, per value of its
                                * other columns, the Lub of what enters it; rfx_lattice) */
} rfx_attr;

enum {
    RFX_REL_INPUT = 1,         /* .input */
    RFX_REL_OUTPUT = 2,        /* .output */
    RFX_REL_PRINTSIZE = 4,     /* .printsize */
    RFX_REL_LIMITSIZE = 8      /* .limitsize (a directive of the parser's only) */
};

typedef struct rfx_relation {
    const char *name;
    int arity;
    rfx_attr *attrs;
    unsigned io;               /* RFX_REL_* flags */
    int ninputs, noutputs;     /* its .input and .output directives, each honoured in turn */
    rfx_io_dir *inputs, *outputs;
    rfx_loc loc, io_loc, printsize_loc;
    int stratum;               /* set by stratification */
    bool has_rules;            /* some non-fact clause derives it */
    bool checker_made;         /* made by the checker (sema_disconnected.c, sema_demand.c), after the
                                * declared ones: no program or API names it */
    bool demanded;             /* holds only the tuples its one reader can use (sema_demand.c): not
                                * all its rules derive */
    bool demand;               /* the demand relation of one so made: what its reader binds, made to
                                * be few (the planner joins it first) */
    bool logiql;               /* declared in LogiQL form `r(x) -> int32(x).` */
    int64_t limitsize;         /* `.limitsize r(n=N)`: its recursion stops once it holds N tuples
                                * (-1: none) */
    const char *repr;          /* representation qualifier as written (btree, brie, eqrel, ...) or NULL */
    bool subsumed;             /* some subsumptive clause deletes from it */
    int nchoice;               /* `choice-domain`: its domains, each a set of columns no two tuples */
    int *choice_ncols;         /* share: domain d is choice_cols[choice_first[d] ..] of choice_ncols[d] */
    int *choice_first, *choice_cols;
} rfx_relation;

/* Whether a relation is an equivalence relation (`eqrel`): closed under reflexivity,
 * symmetry and transitivity wherever pairs enter it (the plan's EQREL commands). */
static inline bool rfx_relation_is_eqrel(const rfx_relation *r)
{
    return r->repr && r->repr[0] == 'e' && strcmp(r->repr, "eqrel") == 0;
}

/* The number of a relation's columns before its lattice columns (its last ones): its key
 * (the arity where it has none). */
static inline int rfx_relation_lattice_key(const rfx_relation *r)
{
    int k = r->arity;
    while (k > 0 && r->attrs[k - 1].lattice)
        k--;
    return k;
}

/* A relation's choice domains, as base/choice.c takes them. */
static inline rfx_choice_domains rfx_relation_choice(const rfx_relation *r)
{
    return (rfx_choice_domains){r->nchoice, r->choice_ncols, r->choice_first, r->choice_cols};
}

/* A user-defined functor, `.functor name(T, ...): R [stateful]`: its code comes from a
 * shared library at run time (runtime/functor_libs.c). */
typedef struct rfx_functor_decl {
    const char *name;
    int nargs;
    int *arg_types;            /* program types */
    int ret_type;
    bool stateful;
    bool used;                 /* some rule calls it */
    rfx_loc loc;
} rfx_functor_decl;

/* `.lattice T<> { Bottom -> e, Top -> e, Lub -> @f(_, _), Glb -> @g(_, _) }` (Soufflé 2.5):
 * values of type T ordered by the user-defined functors Lub (least upper bound) and Glb
 * (greatest lower bound). A relation's lattice attributes (its last columns) hold, per value
 * of the others, the Lub of every value derived; body atoms read them through Glb (the
 * checker's rewrite, sema_lattice.c). */
typedef struct rfx_lattice {
    int type;
    rfx_expr *bottom, *top;    /* top NULL when not given */
    int lub, glb;              /* program functors */
    rfx_loc loc;
} rfx_lattice;

/* `.pragma "key" "value"` (value NULL for `.pragma "key"`). */
typedef struct rfx_pragma {
    const char *key, *value;
    rfx_loc loc;
} rfx_pragma;

typedef struct rfx_stratum {
    int nrels;
    int *rels;                 /* relation indices */
    bool recursive;            /* some rule of it depends on the stratum itself */
} rfx_stratum;

typedef struct rfx_program {
    rfx_arena *arena;
    rfx_symtab *syms;
    const char *file;
    char *src;                 /* owned copy of the source */
    int ntypes; rfx_type *types;
    int nrels; rfx_relation *rels;
    int *rel_slots;            /* relations by name: open addressing over rel_cap slots of
                                * indices, -1 empty (rfx_program_find_rel) */
    int rel_cap;
    int nclauses; rfx_clause *clauses;
    int nstrata; rfx_stratum *strata;      /* in evaluation order */
    bool any_output;           /* some .output or .printsize directive */
    int npragmas;
    rfx_pragma *pragmas;
    int nfunctors;             /* `.functor` declarations */
    rfx_functor_decl *functors;
    int nlattices;             /* `.lattice` declarations */
    rfx_lattice *lattices;
    rfx_linemap lines;         /* after the preprocessor: where each line came from (n = 0: none ran) */
} rfx_program;

/* The lattice declared for type t, or -1. */
static inline int rfx_program_lattice(const rfx_program *p, int t)
{
    for (int i = 0; i < p->nlattices; i++)
        if (p->lattices[i].type == t)
            return i;
    return -1;
}

/* Parse and check a program. On errors, diagnostics go to diag_out (stderr if NULL),
 * *nerrors is set (-1 when memory ran out) and NULL is returned. `file` is the name used
 * in messages. */
rfx_program *rfx_frontend_parse(const char *src, size_t len, const char *file,
                                FILE *diag_out, int *nerrors);
/* What a program file is read with, as Soufflé's command line gives it (each may be NULL
 * or false). */
typedef struct rfx_parse_opts {
    const char *macros;        /* `NAME[=VALUE] ...` for the preprocessor (Soufflé's -M) */
    const char *include_dirs;  /* blank-separated directories #include searches after the
                                * including file's own (Soufflé's -I); relative ones from the
                                * current directory */
    bool no_preprocessor;      /* the text is parsed as it is (Soufflé's --no-preprocessor) */
    bool no_warn;              /* no warnings (Soufflé's -w, `.pragma "no-warn"`) */
    bool no_demand;            /* helper relations made whole, not for their reader's demand alone
                                * (sema_demand.c) */
} rfx_parse_opts;

/* rfx_frontend_parse with options (o may be NULL); the text is never preprocessed. */
rfx_program *rfx_frontend_parse_text(const char *src, size_t len, const char *file, const rfx_parse_opts *o,
                                     FILE *diag_out, int *nerrors);
/* Reads the file first; an unreadable file counts as an I/O error (*io_error = true). A
 * program file that uses preprocessor directives (#include, #define, .include, .once), or
 * is given macros, is run through the system's C preprocessor, as Soufflé does;
 * rfx_frontend_parse does not. o may be NULL (the defaults). */
rfx_program *rfx_frontend_parse_file(const char *path, const rfx_parse_opts *o, FILE *diag_out, int *nerrors,
                                     bool *io_error);
void rfx_program_free(rfx_program *p);

/* Deterministic textual dump of the checked AST (`rfx --emit=ast`). */
void rfx_frontend_print(FILE *out, const rfx_program *p);
void rfx_expr_print(FILE *out, const rfx_program *p, const rfx_clause *c, const rfx_expr *e);

/* The checked body of an aggregate expression (RFX_E_AGG) as one conjunction. */
rfx_conj *rfx_agg_conj(const rfx_expr *agg);

/* Lookups. */
int rfx_program_find_rel(const rfx_program *p, const char *name);
/* Type t as a record type (its aliases resolved): its index, or -1 when it is none. */
int rfx_program_record_type(const rfx_program *p, int t);
/* Type t as an ADT (its aliases resolved): its index, or -1. */
int rfx_program_adt_type(const rfx_program *p, int t);
/* Whether t is an ADT whose branches have no fields (an enumeration): its values are the
 * branches' numbers (branches numbered by name), not records. */
bool rfx_program_adt_enum(const rfx_program *p, int t);
/* The field types of a record of type t (an ADT's branch `branch`: the branch number's type,
 * then its one field's or that of the record of its fields, rfx_branch.stored): their number,
 * or -1 when t is neither. */
int rfx_program_fields(const rfx_program *p, int t, int branch, const int **types);
/* Adds relation `rel` (its name set) to the index rfx_program_find_rel reads; false when
 * out of room (the checker sizes it for every declaration). */
bool rfx_program_index_rel(rfx_program *p, int rel);
const rfx_type *rfx_program_type(const rfx_program *p, int type);
/* Option value of an .input/.output directive, or NULL. */
/* Marks in `use` the variables (after checking: their indices) of an expression or a
 * conjunction, aggregates' bodies included, but none of the subtree `skip` (may be NULL). */
void rfx_expr_vars(const rfx_expr *e, bool *use, const rfx_expr *skip);
/* Whether a and b are written alike (variables by name; an aggregate never): two atoms agree
 * there whatever binds them, two sides of comparisons compute the same value. */
bool rfx_expr_alike(const rfx_expr *a, const rfx_expr *b);
void rfx_conj_vars(const rfx_conj *cj, bool *use, const rfx_expr *skip);
/* Marks in `bound` what a conjunction grounds given what is marked: its positive atoms'
 * variables, and `v = expr` over grounded ones, to a fixpoint (the result of the
 * aggregate `skip`, which may be NULL, counting as ungrounded). */
void rfx_conj_ground(const rfx_conj *cj, bool *bound, const rfx_expr *skip);

/* A directive's option value, or NULL. */
const char *rfx_io_get(const rfx_io_dir *d, const char *key);

#endif
