/* parse_ctx.h: state shared by the scanner, the grammar and the AST builders (private
 * to frontend/). Grammar actions are one-line calls into build.c. */
#ifndef RFX_PARSE_CTX_H
#define RFX_PARSE_CTX_H

#include "frontend.h"

/* Bison's location type, declared here so the scanner and builders share it. */
typedef struct RFX_YYLTYPE {
    int first_line, first_column, last_line, last_column;
} RFX_YYLTYPE;
#define RFX_YYLTYPE_IS_DECLARED 1
#define RFX_YYLTYPE_IS_TRIVIAL 1

/* Growable pointer list living in the arena. */
typedef struct rfx_plist {
    void **items;
    int n, cap;
} rfx_plist;

/* One `.type` declaration as written. */
typedef struct rfx_type_decl {
    const char *name, *base;
    bool subtype;              /* `<:` rather than `=` */
    rfx_loc loc, base_loc;
    rfx_plist *others;         /* a union `= base | A | B`: the other members' names (else NULL) */
    rfx_plist *fields;         /* a record `= [a: A, b: B]`: (name, type, location) triples (else NULL) */
    rfx_plist *branches;       /* an ADT `= A {a: T} | B {}`: (name, fields as above or NULL, location)
                                * triples (else NULL) */
} rfx_type_decl;

/* One `.decl` (or LogiQL `r(x) -> int32(x).`) as written. */
typedef struct rfx_rel_decl {
    const char *name;
    int nattrs;
    const char **attr_names, **attr_types;
    rfx_loc *attr_locs;
    rfx_loc loc;
    bool logiql;
    bool overridable;          /* `overridable`: a derived component may `.override` its rules */
    const char *repr;          /* representation qualifier (btree, brie, btree_delete, eqrel) or NULL */
    rfx_loc repr_loc;
    rfx_plist *choice;         /* `choice-domain`: per domain a list of (name, location) pairs */
    const char *instance;      /* declared in a component: the instance it was expanded for */
} rfx_rel_decl;

/* `.functor name(T, ...): R [stateful]` as written. */
typedef struct rfx_functor_text {
    const char *name, *ret;
    rfx_plist *params;         /* (type name, location) pairs, or NULL */
    bool stateful;
    rfx_loc loc;
} rfx_functor_text;

/* `.lattice T<> { Bottom -> e, Lub -> @f(_, _), ... }` as written. */
typedef struct rfx_lattice_text {
    const char *type;
    rfx_plist *ops;            /* (operator name, expression, location) triples */
    rfx_loc loc;
} rfx_lattice_text;

/* One `.input/.output/.printsize` directive naming one relation. */
typedef struct rfx_directive {
    unsigned kind;             /* RFX_REL_INPUT / OUTPUT / PRINTSIZE */
    const char *rel;
    rfx_loc loc;
    int nopts;
    rfx_io_opt *opts;
} rfx_directive;

/* What the items of one scope declare: the program's top level, or a component's body. */
typedef struct rfx_items {
    rfx_plist types;           /* rfx_type_decl* */
    rfx_plist decls;           /* rfx_rel_decl* */
    rfx_plist directives;      /* rfx_directive* */
    rfx_plist clauses;         /* rfx_clause* (body unflattened) */
    rfx_plist comps;           /* rfx_comp*: components declared here */
    rfx_plist inits;           /* rfx_comp_init*: `.init` instances made here */
    rfx_plist overrides;       /* (name, location) pairs of `.override` */
    rfx_plist lattices;        /* rfx_lattice_text* */
} rfx_items;

/* A use of a component: `C` or `C<T1, T2>` (`.init x = C<T>`, a base `: C<T>`). */
typedef struct rfx_comp_ref {
    const char *name;
    rfx_plist *args;           /* (name, location) pairs, or NULL */
    rfx_loc loc;
} rfx_comp_ref;

typedef struct rfx_comp_init {
    const char *name;          /* the instance's name, the prefix of what it declares */
    rfx_comp_ref ref;
    rfx_loc loc;
} rfx_comp_init;

/* `.comp Name<T1, ...> : Base<...>, ... { items }` as written; expanded per `.init` by
 * component.c. */
typedef struct rfx_comp {
    const char *name;
    rfx_plist *params;         /* (name, location) pairs, or NULL */
    rfx_plist bases;           /* rfx_comp_ref* */
    rfx_items items;
    struct rfx_comp *parent;   /* the component whose body declares this one (NULL: top level) */
    rfx_loc loc;
    bool expanding;            /* on the expansion's stack (cycles) */
} rfx_comp;

typedef struct rfx_parse_ctx {
    rfx_arena *arena;
    rfx_symtab *syms;
    rfx_diag *diag;
    int line, col;             /* scanner position */
    RFX_YYLTYPE comment_loc;   /* start of an open block comment */
    rfx_plist types;           /* the current scope's items (rfx_items): the top level's, or */
    rfx_plist decls;           /* the open component's while its body is parsed */
    rfx_plist directives;
    rfx_plist clauses;
    rfx_plist comps, inits, overrides;
    rfx_comp *open;            /* the innermost component whose body is being parsed */
    int toks[3];               /* the last tokens scanned, latest first (qualified names) */
    int end_line, end_col;     /* where the last token ended */
    bool in_body;              /* between a rule's `:-` and its '.' */
    int unnamed;               /* `_`s named so far (rfx_add_subsumption) */
    int functor_state, functor_depth;   /* where in a `.functor` the scanner is (its `stateful`, parser.y) */
    rfx_plist functors;        /* rfx_functor_decl* */
    rfx_plist lattices;        /* rfx_lattice_text* */
    rfx_plist pragmas;         /* rfx_pragma* */
    rfx_plist cur_opts;        /* options of the directive being parsed (rfx_io_opt*) */
    unsigned cur_kind;         /* RFX_REL_* of the directive being parsed */
    bool oom;
    bool expr_too_deep;        /* reported once */
    int decl_state, decl_depth;/* relation qualifiers: 1 in a .decl's parentheses, 2 after them */
    bool ident_opens_atom;     /* the last identifier scanned is followed by '(' */
    unsigned shadowed;         /* rfx's own functors (RFX_FN_TO_DATE.., a bit each) that the program
                                * declares relations of: those names are relations' there */
    rfx_linemap *lines;        /* preprocessed text: the line markers read so far (else NULL) */
    bool no_preprocessor;      /* a program file read with the preprocessor turned off */
    bool no_demand;            /* rfx_parse_opts.no_demand */
    int mark_cap;
    const char *file;          /* the program's name (line markers of "<stdin>" name it) */
    const char *dir;           /* its directory, where the preprocessor ran ("" for none) */
} rfx_parse_ctx;

/* A line of the preprocessor's (`# 12 "inc.dl" 1`, `#pragma ...`): a marker is recorded. */
void rfx_parse_linemark(rfx_parse_ctx *ctx, const char *text);
/* The preprocessor pass (preprocess.c): whether the program uses it, and the text after
 * it (malloc'ed, line markers kept). 0 on success; 1 when the preprocessor reported an
 * error (*err says what, *where where in the program when it says), -1 when it could not
 * run. incs: directories #include searches after the including file's own (relative ones
 * from the current directory). */
bool rfx_needs_preprocessor(const char *src, size_t len);
int rfx_preprocess(const char *src, size_t len, const char *file, const char *const *macros, int nmacros,
                   const char *const *incs, int nincs, char **out, size_t *outlen, rfx_loc *where, char *err,
                   size_t errcap);

rfx_loc rfx_loc_of(RFX_YYLTYPE l);
void rfx_parse_error(rfx_parse_ctx *ctx, RFX_YYLTYPE loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
char *rfx_parse_unescape(rfx_parse_ctx *ctx, const char *s, size_t n);

void rfx_plist_push(rfx_parse_ctx *ctx, rfx_plist *l, void *item);

/* AST builders (build.c). */
rfx_expr *rfx_mk_expr(rfx_parse_ctx *ctx, rfx_expr_kind kind, RFX_YYLTYPE loc);
rfx_expr *rfx_mk_var(rfx_parse_ctx *ctx, const char *name, RFX_YYLTYPE loc);
rfx_expr *rfx_mk_int(rfx_parse_ctx *ctx, int64_t v, bool uns, RFX_YYLTYPE loc);
rfx_expr *rfx_mk_float(rfx_parse_ctx *ctx, double v, RFX_YYLTYPE loc);
rfx_expr *rfx_mk_string(rfx_parse_ctx *ctx, uint32_t sym, RFX_YYLTYPE loc);
rfx_expr *rfx_mk_binop(rfx_parse_ctx *ctx, rfx_binop op, rfx_expr *l, rfx_expr *r, RFX_YYLTYPE loc);
rfx_expr *rfx_mk_neg(rfx_parse_ctx *ctx, rfx_expr *e, RFX_YYLTYPE loc);
rfx_expr *rfx_mk_agg(rfx_parse_ctx *ctx, rfx_aggfn fn, rfx_expr *target, rfx_body *body, RFX_YYLTYPE loc);
rfx_atom *rfx_mk_atom(rfx_parse_ctx *ctx, const char *name, rfx_plist *args, RFX_YYLTYPE loc);
rfx_plist *rfx_mk_list(rfx_parse_ctx *ctx, void *first);
rfx_plist *rfx_list_add(rfx_parse_ctx *ctx, rfx_plist *l, void *item);
rfx_body *rfx_mk_lit_body(rfx_parse_ctx *ctx, rfx_lit_kind kind, rfx_atom *a, RFX_YYLTYPE loc);
rfx_body *rfx_mk_cmp_body(rfx_parse_ctx *ctx, rfx_cmpop op, rfx_expr *l, rfx_expr *r, RFX_YYLTYPE loc);
rfx_body *rfx_mk_bool_body(rfx_parse_ctx *ctx, rfx_body_kind kind, rfx_body *l, rfx_body *r);
rfx_body *rfx_mk_atom_body(rfx_parse_ctx *ctx, rfx_atom *a);

void rfx_add_type(rfx_parse_ctx *ctx, const char *name, const char *base, bool subtype,
                  RFX_YYLTYPE loc, RFX_YYLTYPE base_loc);
/* `.type T = A | B | ...`: members a list of (name, location) pairs (rfx_mk_name_list). */
void rfx_add_union_type(rfx_parse_ctx *ctx, const char *name, rfx_plist *members, RFX_YYLTYPE loc);
void rfx_add_decl(rfx_parse_ctx *ctx, const char *name, rfx_plist *attrs, RFX_YYLTYPE loc);
rfx_plist *rfx_mk_attr(rfx_parse_ctx *ctx, rfx_plist *l, const char *name, const char *type,
                       RFX_YYLTYPE loc);
void rfx_add_opt(rfx_parse_ctx *ctx, const char *key, const char *value);
void rfx_add_directive(rfx_parse_ctx *ctx, const char *rel, RFX_YYLTYPE loc);
void rfx_add_clause(rfx_parse_ctx *ctx, rfx_atom *head, rfx_body *body, RFX_YYLTYPE loc);
/* One clause per head (an atom list), each over its own copy of body. */
void rfx_add_clauses(rfx_parse_ctx *ctx, rfx_plist *heads, rfx_body *body, RFX_YYLTYPE loc);
/* Pairs (name, location) for `.decl A, B(...)` and qualifiers. */
rfx_plist *rfx_mk_name_list(rfx_parse_ctx *ctx, rfx_plist *l, const char *name, RFX_YYLTYPE loc);
/* choice: `choice-domain`'s domains (lists of name pairs) or NULL. */
void rfx_add_decls(rfx_parse_ctx *ctx, rfx_plist *names, rfx_plist *attrs, rfx_plist *quals, rfx_plist *choice);
/* `.functor name(params): type [stateful]` (params: rfx_mk_name_list pairs of type names). */
void rfx_add_functor(rfx_parse_ctx *ctx, const char *name, rfx_plist *params, const char *ret, bool stateful,
                     RFX_YYLTYPE loc);
/* `@name(args)`. */
rfx_expr *rfx_mk_user_fn(rfx_parse_ctx *ctx, const char *name, rfx_plist *args, RFX_YYLTYPE loc);
/* `lt <= gt :- body.`: Soufflé's subsumptive clause, deleting lt's tuples. */
void rfx_add_subsumption(rfx_parse_ctx *ctx, rfx_atom *lt, rfx_atom *gt, rfx_body *body, RFX_YYLTYPE loc);
rfx_body *rfx_mk_not_body(rfx_parse_ctx *ctx, rfx_body *b);
/* A hexadecimal, binary or IPv4 literal: 32 bits, in a number column too. */
rfx_expr *rfx_mk_bits(rfx_parse_ctx *ctx, int64_t v, RFX_YYLTYPE loc);
/* All ones in the width of the type its context gives it (bnot's operand of bxor). */
rfx_expr *rfx_mk_all_ones(rfx_parse_ctx *ctx, RFX_YYLTYPE loc);
/* first op rest[0] op rest[1] ... (min and max of several arguments). */
rfx_expr *rfx_fold_binop(rfx_parse_ctx *ctx, rfx_binop op, rfx_expr *first, rfx_plist *rest, RFX_YYLTYPE loc);
/* A functor call; its number of arguments is checked here. */
rfx_expr *rfx_mk_fn(rfx_parse_ctx *ctx, rfx_functor fn, rfx_plist *args, RFX_YYLTYPE loc);
/* `$`: Soufflé's deprecated spelling of autoinc() (warned about, as Soufflé does). */
rfx_expr *rfx_mk_counter(rfx_parse_ctx *ctx, RFX_YYLTYPE loc);
rfx_expr *rfx_mk_as(rfx_parse_ctx *ctx, rfx_expr *x, const char *type, RFX_YYLTYPE loc);
/* contains(...) or match(...), a body literal (negated: `!match(...)`). */
rfx_body *rfx_mk_fn_lit(rfx_parse_ctx *ctx, rfx_functor fn, rfx_plist *args, bool negated, RFX_YYLTYPE loc);
/* Components (component.c): `.comp` opens a scope that collects the items of its body
 * until its '}'; `.init` and `.override` are items of the current scope. */
rfx_comp_ref *rfx_mk_comp_ref(rfx_parse_ctx *ctx, const char *name, rfx_plist *args, RFX_YYLTYPE loc);
void rfx_comp_open(rfx_parse_ctx *ctx, const char *name, rfx_plist *params, rfx_plist *bases, RFX_YYLTYPE loc);
void rfx_comp_close(rfx_parse_ctx *ctx);
void rfx_add_init(rfx_parse_ctx *ctx, const char *name, rfx_comp_ref *ref, RFX_YYLTYPE loc);
void rfx_add_override(rfx_parse_ctx *ctx, const char *name, RFX_YYLTYPE loc);
/* Replaces every `.init` of the top level by the items of the instance it makes, their
 * names qualified by the instance's (`x.r`), as Soufflé expands components. */
void rfx_components_expand(rfx_parse_ctx *ctx);
/* Whether a name followed by ".name" is one qualified name (`inst.rel`) here, rather
 * than a variable ending a clause (`x = y.` then a clause): given the last tokens. */
bool rfx_qualified_name_here(const rfx_parse_ctx *ctx);
/* Deep copies (a clause's body per head, a component's items per instance). */
rfx_body *rfx_clone_body(rfx_parse_ctx *ctx, const rfx_body *b);
rfx_expr *rfx_clone_expr(rfx_parse_ctx *ctx, const rfx_expr *e);
void rfx_clone_atom(rfx_parse_ctx *ctx, rfx_atom *dst, const rfx_atom *src);
void *rfx_ctx_alloc(rfx_parse_ctx *ctx, size_t n);

/* `.type T = [a: A, ...]` (attrs: rfx_mk_attr's triples, or NULL for `[]`). */
void rfx_add_record_type(rfx_parse_ctx *ctx, const char *name, rfx_plist *attrs, RFX_YYLTYPE loc);
/* ADTs: a branch `B {a: A}` (a triple of adt_branches), the type, a constructor `$B(...)`. */
rfx_plist *rfx_mk_branch(rfx_parse_ctx *ctx, const char *name, rfx_plist *attrs, RFX_YYLTYPE loc);
rfx_plist *rfx_list_append(rfx_parse_ctx *ctx, rfx_plist *l, rfx_plist *more);
/* `.lattice T<> {...}`: one operator of it; the declaration; `x: T<>`'s type as the
 * attribute keeps it (the name with "<>", which the checker takes apart). */
rfx_plist *rfx_mk_lattice_op(rfx_parse_ctx *ctx, const char *name, rfx_expr *e, RFX_YYLTYPE loc);
void rfx_add_lattice(rfx_parse_ctx *ctx, const char *type, rfx_plist *ops, RFX_YYLTYPE loc);
const char *rfx_lattice_type_name(rfx_parse_ctx *ctx, const char *type);
void rfx_add_adt_type(rfx_parse_ctx *ctx, const char *name, rfx_plist *branches, RFX_YYLTYPE loc);
rfx_expr *rfx_mk_constructor(rfx_parse_ctx *ctx, const char *branch, rfx_plist *args, RFX_YYLTYPE loc);
/* `.type T` alone: a subtype of symbol (Soufflé's deprecated form). */
void rfx_add_bare_type(rfx_parse_ctx *ctx, const char *name, RFX_YYLTYPE loc);
/* value UINT32_MAX: `.pragma "key"` alone */
void rfx_add_pragma(rfx_parse_ctx *ctx, uint32_t key, uint32_t value, RFX_YYLTYPE loc);
void rfx_add_limitsize(rfx_parse_ctx *ctx, const char *rel, const char *key, int64_t n, RFX_YYLTYPE loc,
                       RFX_YYLTYPE key_loc);
void *rfx_box_int(rfx_parse_ctx *ctx, int64_t v);
/* One version's order: a list of boxed integers, the version first. */
rfx_plist *rfx_mk_plan_order(rfx_parse_ctx *ctx, int64_t version, rfx_plist *atoms);
/* `.plan` for the clause before it. */
void rfx_add_plan(rfx_parse_ctx *ctx, rfx_plist *orders, RFX_YYLTYPE loc);

void rfx_add_logiql_decl(rfx_parse_ctx *ctx, rfx_atom *head, rfx_body *types, RFX_YYLTYPE loc);
const char *rfx_sym_text(rfx_parse_ctx *ctx, uint32_t sym);
const char *rfx_int_text(rfx_parse_ctx *ctx, int64_t v);

#endif
