/* parser.y: pure bison grammar for Soufflé's core Datalog plus Red Fox's LogiQL forms.
 * Every action is a one-line call into build.c; all nodes live in the parse arena, so
 * no %destructor is needed (the arena is freed as a whole on error too). */
%define api.pure full
%define api.prefix {rfx_yy}
%define parse.error detailed
%locations
%expect 0
%param {void *scanner}
%parse-param {rfx_parse_ctx *ctx}

%code top {
/* nesting deeper than this is refused with a message, before later passes recurse on it */
#define YYMAXDEPTH 2000
}

%code requires {
#include "parse_ctx.h"
}

%code {
#include <string.h>
int rfx_yylex(RFX_YYSTYPE *lval, RFX_YYLTYPE *lloc, void *scanner);
rfx_parse_ctx *rfx_yyget_extra(void *scanner);

/* The scanner's tokens, with relation qualifiers told apart: `brie`, `inline`, `input`, ...
 * right after a declaration's closing ')' (or another qualifier) are T_QUALIFIER unless an
 * argument list follows them (then they start the next clause's atom). Elsewhere they are
 * names like any other. */
static int (*const scan_token)(RFX_YYSTYPE *, RFX_YYLTYPE *, void *) = rfx_yylex;
static int qualified_token(RFX_YYSTYPE *lval, RFX_YYLTYPE *lloc, void *scanner)
{
    static const char *const quals[] = {"input", "output", "printsize", "overridable", "inline", "no_inline", "magic",
                                        "no_magic", "brie", "btree", "btree_delete", "eqrel", NULL};
    rfx_parse_ctx *ctx = rfx_yyget_extra(scanner);
    int tok = scan_token(lval, lloc, scanner);
    ctx->toks[2] = ctx->toks[1];
    ctx->toks[1] = ctx->toks[0];
    ctx->toks[0] = tok;
    if (tok == T_IF || tok == T_LARROW)
        ctx->in_body = true;
    else if (tok == '.')
        ctx->in_body = false;
    ctx->end_line = lloc->last_line;
    ctx->end_col = lloc->last_column;
    /* `stateful` after a `.functor`'s result type (elsewhere a name) */
    if (tok == T_FUNCTOR_DECL) {
        ctx->functor_state = 1;
        ctx->functor_depth = 0;
    } else if (ctx->functor_state == 1 && (tok == '(' || tok == ')'))
        ctx->functor_depth += tok == '(' ? 1 : -1;
    else if (ctx->functor_state == 1 && tok == ':' && ctx->functor_depth == 0)
        ctx->functor_state = 2;
    else if (ctx->functor_state == 2 && tok == T_IDENT)
        ctx->functor_state = 3;
    else if (ctx->functor_state == 3) {
        ctx->functor_state = 0;
        if (tok == T_IDENT && strcmp(lval->str, "stateful") == 0 && !ctx->ident_opens_atom)
            return T_STATEFUL;
    }
    if (tok == T_DECL) {
        ctx->decl_state = 1;
        ctx->decl_depth = 0;
    } else if (ctx->decl_state == 1 && tok == '(') {
        ctx->decl_depth++;
    } else if (ctx->decl_state == 1 && tok == ')') {
        if (--ctx->decl_depth == 0)
            ctx->decl_state = 2;
    } else if (ctx->decl_state == 2) {
        bool q = false;
        for (int i = 0; tok == T_IDENT && !ctx->ident_opens_atom && quals[i]; i++)
            q |= strcmp(lval->str, quals[i]) == 0;
        if (q)
            return T_QUALIFIER;
        ctx->decl_state = 0;
    }
    return tok;
}
#define rfx_yylex qualified_token
static void rfx_yyerror(RFX_YYLTYPE *loc, void *scanner, rfx_parse_ctx *ctx, const char *msg)
{
    (void)scanner;
    if (strcmp(msg, "memory exhausted") == 0)
        msg = "the program nests too deeply here (parser stack limit)";
    rfx_parse_error(ctx, *loc, "%s", msg);
}
}

%union {
    char *str;
    int64_t ival;
    double fval;
    uint32_t sym;
    rfx_expr *expr;
    rfx_atom *atom;
    rfx_body *body;
    rfx_plist *list;
    rfx_comp_ref *cref;
    int op;
}

%code {
/* In a rule's body, the tokens after which a name is an operand, never a relation's:
 * `x = y.` ends a clause (then `y.t(1)` is not one name), as in Soufflé. Elsewhere
 * (`.type T = inst.U`, `.init c = C<T>` then `c.r(1).`) a dotted name is one name. */
bool rfx_qualified_name_here(const rfx_parse_ctx *ctx)
{
    if (!ctx->in_body)
        return true;
    switch (ctx->toks[0]) {
    case '=': case '<': case '>': case T_LE: case T_GE: case T_NE: case '+': case '-': case '*': case '/': case '%': case '^':
    case T_BAND: case T_BOR: case T_BXOR: case T_BSHL: case T_BSHR: case T_BSHRU: case T_LAND: case T_LOR:
    case T_LXOR: case T_BNOT: case T_LNOT:
        return false;
    default:
        return true;
    }
}
}

%token T_DECL ".decl" T_TYPE ".type" T_NUMBER_TYPE ".number_type" T_SYMBOL_TYPE ".symbol_type"
%token T_INPUT ".input" T_OUTPUT ".output" T_PRINTSIZE ".printsize"
%token T_COMP ".comp" T_INIT ".init" T_OVERRIDE ".override" T_PRAGMA ".pragma" T_PLAN ".plan" T_LIMITSIZE ".limitsize"
%token T_FUNCTOR_DECL ".functor" T_STATEFUL "stateful" T_LATTICE ".lattice"
%token T_COUNT "count" T_SUM "sum" T_MIN "min" T_MAX "max" T_MEAN "mean" T_TRUE "true" T_FALSE "false"
%token T_AS "as" T_NIL "nil"
%token T_BAND "band" T_BOR "bor" T_BXOR "bxor" T_BSHL "bshl" T_BSHR "bshr" T_BSHRU "bshru"
%token T_LAND "land" T_LOR "lor" T_LXOR "lxor" T_BNOT "bnot" T_LNOT "lnot"
%token T_IF ":-" T_LARROW "<-" T_RARROW "->" T_SUBTYPE "<:"
%token T_LE "<=" T_GE ">=" T_NE "!=" T_ANON "_" T_COUNTER "$" T_CHOICE "choice-domain"
%token <str> T_IDENT "identifier"
%token <ival> T_FUNCTOR "functor" T_CONSTRAINT "contains, match or like"
%token <ival> T_INT "integer" T_UNSIGNED "unsigned integer" T_BITS "hexadecimal, binary or IPv4 number"
%token <str> T_QUALIFIER "relation qualifier"
%token <str> T_CONSTRUCTOR "constructor" T_USER_FN "user-defined functor"
%token <fval> T_FLOAT "float"
%token <sym> T_STRING "string"

%type <expr> expr lxor_expr land_expr bor_expr bxor_expr band_expr shift_expr sum term factor unary power primary aggregate
%type <atom> atom
%type <body> disj conj lit
%type <list> lattice_ops lattice_op args attrs dir_names decl_names quals heads more_args union_members comp_params comp_bases base_list plan_orders plan_order plan_atoms adt_branches adt_branch choice_domains choice_domain functor_params functor_param
%type <cref> comp_ref
%type <op> cmpop
%type <str> optval


%%
program:
      %empty
    | program item
    ;

item:
      T_DECL decl_names '(' ')' quals            { rfx_add_decls(ctx, $2, NULL, $5, NULL); }
    | T_DECL decl_names '(' attrs ')' quals      { rfx_add_decls(ctx, $2, $4, $6, NULL); }
    | T_DECL decl_names '(' attrs ')' quals T_CHOICE choice_domains { rfx_add_decls(ctx, $2, $4, $6, $8); }
    | T_TYPE T_IDENT T_SUBTYPE T_IDENT           { rfx_add_type(ctx, $2, $4, true, @2, @4); }
    | T_TYPE T_IDENT '=' T_IDENT                 { rfx_add_type(ctx, $2, $4, false, @2, @4); }
    | T_TYPE T_IDENT '=' union_members           { rfx_add_union_type(ctx, $2, $4, @2); }
    | T_TYPE T_IDENT                             { rfx_add_bare_type(ctx, $2, @2); }
    | T_TYPE T_IDENT '=' adt_branches            { rfx_add_adt_type(ctx, $2, $4, @2); }
    | T_TYPE T_IDENT '=' '[' ']'                 { rfx_add_record_type(ctx, $2, NULL, @2); }
    | T_TYPE T_IDENT '=' '[' attrs ']'           { rfx_add_record_type(ctx, $2, $5, @2); }
    | T_NUMBER_TYPE T_IDENT                      { rfx_add_type(ctx, $2, "number", true, @2, @2); }
    | T_SYMBOL_TYPE T_IDENT                      { rfx_add_type(ctx, $2, "symbol", true, @2, @2); }
    | T_INPUT     { ctx->cur_kind = RFX_REL_INPUT; } dir_names
    | T_OUTPUT    { ctx->cur_kind = RFX_REL_OUTPUT; } dir_names
    | T_PRINTSIZE { ctx->cur_kind = RFX_REL_PRINTSIZE; } dir_names
    | heads '.'                                  { rfx_add_clauses(ctx, $1, NULL, @1); }
    | heads T_IF disj '.'                        { rfx_add_clauses(ctx, $1, $3, @1); }
    | heads T_LARROW disj '.'                    { rfx_add_clauses(ctx, $1, $3, @1); }
    | atom T_RARROW conj '.'                     { rfx_add_logiql_decl(ctx, $1, $3, @1); }
    | atom T_LE atom T_IF disj '.'               { rfx_add_subsumption(ctx, $1, $3, $5, @1); }
    | T_COMP comp_head '{' program '}'           { rfx_comp_close(ctx); }
    | T_INIT T_IDENT '=' comp_ref                { rfx_add_init(ctx, $2, $4, @2); }
    | T_OVERRIDE T_IDENT                         { rfx_add_override(ctx, $2, @2); }
    | T_PRAGMA T_STRING                          { rfx_add_pragma(ctx, $2, UINT32_MAX, @2); }
    | T_PRAGMA T_STRING T_STRING                 { rfx_add_pragma(ctx, $2, $3, @2); }
    | T_LIMITSIZE T_IDENT '(' T_IDENT '=' T_INT ')' { rfx_add_limitsize(ctx, $2, $4, $6, @2, @4); }
    | T_PLAN plan_orders                         { rfx_add_plan(ctx, $2, @1); }
    | T_FUNCTOR_DECL T_IDENT '(' ')' ':' T_IDENT { rfx_add_functor(ctx, $2, NULL, $6, false, @2); }
    | T_FUNCTOR_DECL T_IDENT '(' functor_params ')' ':' T_IDENT { rfx_add_functor(ctx, $2, $4, $7, false, @2); }
    | T_FUNCTOR_DECL T_IDENT '(' ')' ':' T_IDENT T_STATEFUL { rfx_add_functor(ctx, $2, NULL, $6, true, @2); }
    | T_FUNCTOR_DECL T_IDENT '(' functor_params ')' ':' T_IDENT T_STATEFUL { rfx_add_functor(ctx, $2, $4, $7, true, @2); }
    | T_LATTICE T_IDENT '<' '>' '{' lattice_ops '}' { rfx_add_lattice(ctx, $2, $6, @2); }
    | error '.'                                  { yyerrok; }
    ;

/* `.lattice T<> { Bottom -> e, Lub -> @f(_, _), ... }`: (name, expression, location) triples */
lattice_ops:
      lattice_op                                 { $$ = $1; }
    | lattice_ops ',' lattice_op                 { $$ = rfx_list_append(ctx, $1, $3); }
    ;

lattice_op:
      T_IDENT T_RARROW expr                      { $$ = rfx_mk_lattice_op(ctx, $1, $3, @1); }
    ;

/* `A {x: X} | B {}`: an ADT's branches, (name, attributes or NULL, location) triples each */
adt_branches:
      adt_branch                                 { $$ = $1; }
    | adt_branches '|' adt_branch                { $$ = rfx_list_append(ctx, $1, $3); }
    ;

adt_branch:
      T_IDENT '{' '}'                            { $$ = rfx_mk_branch(ctx, $1, NULL, @1); }
    | T_IDENT '{' attrs '}'                      { $$ = rfx_mk_branch(ctx, $1, $3, @1); }
    ;

/* a `.functor`'s parameters, `x: T` or `T`: (type name, location) pairs */
functor_params:
      functor_param                              { $$ = $1; }
    | functor_params ',' functor_param           { $$ = rfx_list_append(ctx, $1, $3); }
    ;

functor_param:
      T_IDENT ':' T_IDENT                        { $$ = rfx_mk_name_list(ctx, NULL, $3, @3); }
    | T_IDENT                                    { $$ = rfx_mk_name_list(ctx, NULL, $1, @1); }
    ;

/* `choice-domain x, (y, z)`: per domain its attributes' (name, location) pairs */
choice_domains:
      choice_domain                              { $$ = rfx_mk_list(ctx, $1); }
    | choice_domains ',' choice_domain           { $$ = rfx_list_add(ctx, $1, $3); }
    ;

choice_domain:
      T_IDENT                                    { $$ = rfx_mk_name_list(ctx, NULL, $1, @1); }
    | '(' decl_names ')'                         { $$ = $2; }
    ;

/* `.plan 0: (1, 2), 1: (2, 1)`: per version of the clause before it, its atoms' order
 * (kept as lists of boxed integers: the version, then its order) */
plan_orders:
      plan_order                                 { $$ = rfx_mk_list(ctx, $1); }
    | plan_orders ',' plan_order                 { $$ = rfx_list_add(ctx, $1, $3); }
    ;

plan_order:
      T_INT ':' '(' ')'                          { $$ = rfx_mk_plan_order(ctx, $1, NULL); }
    | T_INT ':' '(' plan_atoms ')'               { $$ = rfx_mk_plan_order(ctx, $1, $4); }
    ;

plan_atoms:
      T_INT                                      { $$ = rfx_mk_list(ctx, rfx_box_int(ctx, $1)); }
    | plan_atoms ',' T_INT                       { $$ = rfx_list_add(ctx, $1, rfx_box_int(ctx, $3)); }
    ;

/* `.comp Name<T, U> : Base<T>, Other {`: the scope of its body opens here */
comp_head:
      T_IDENT comp_params comp_bases             { rfx_comp_open(ctx, $1, $2, $3, @1); }
    ;

comp_params:
      %empty                                     { $$ = NULL; }
    | '<' decl_names '>'                              { $$ = $2; }
    ;

comp_bases:
      %empty                                     { $$ = NULL; }
    | ':' base_list                              { $$ = $2; }
    ;

base_list:
      comp_ref                                   { $$ = rfx_mk_list(ctx, $1); }
    | base_list ',' comp_ref                     { $$ = rfx_list_add(ctx, $1, $3); }
    ;

comp_ref:
      T_IDENT                                    { $$ = rfx_mk_comp_ref(ctx, $1, NULL, @1); }
    | T_IDENT '<' decl_names '>'                      { $$ = rfx_mk_comp_ref(ctx, $1, $3, @1); }
    ;

/* `a(x), b(x) :- body.`: one clause per head, over a copy of the body each */
heads:
      atom                                       { $$ = rfx_mk_list(ctx, $1); }
    | heads ',' atom                             { $$ = rfx_list_add(ctx, $1, $3); }
    ;

/* `.decl A, B(x: number)` declares both alike; name and location per entry */
decl_names:
      T_IDENT                                    { $$ = rfx_mk_name_list(ctx, NULL, $1, @1); }
    | decl_names ',' T_IDENT                     { $$ = rfx_mk_name_list(ctx, $1, $3, @3); }
    ;

quals:
      %empty                                     { $$ = NULL; }
    | quals T_QUALIFIER                          { $$ = rfx_mk_name_list(ctx, $1, $2, @2); }
    ;

attrs:
      T_IDENT ':' T_IDENT                        { $$ = rfx_mk_attr(ctx, NULL, $1, $3, @1); }
    | attrs ',' T_IDENT ':' T_IDENT              { $$ = rfx_mk_attr(ctx, $1, $3, $5, @3); }
    | T_IDENT ':' T_IDENT '<' '>'                { $$ = rfx_mk_attr(ctx, NULL, $1, rfx_lattice_type_name(ctx, $3), @1); }
    | attrs ',' T_IDENT ':' T_IDENT '<' '>'      { $$ = rfx_mk_attr(ctx, $1, $3, rfx_lattice_type_name(ctx, $5), @3); }
    ;

dir_names:
      dir_rel                                    { $$ = NULL; }
    | dir_names ',' dir_rel                      { $$ = NULL; }
    ;

dir_rel:
      T_IDENT                                    { rfx_add_directive(ctx, $1, @1); }
    | T_IDENT '(' ')'                            { rfx_add_directive(ctx, $1, @1); }
    | T_IDENT '(' opts ')'                       { rfx_add_directive(ctx, $1, @1); }
    ;

opts:
      T_IDENT '=' optval                         { rfx_add_opt(ctx, $1, $3); }
    | opts ',' T_IDENT '=' optval                { rfx_add_opt(ctx, $3, $5); }
    ;

optval:
      T_STRING                                   { $$ = (char *)rfx_sym_text(ctx, $1); }
    | T_IDENT                                    { $$ = $1; }
    | T_INT                                      { $$ = (char *)rfx_int_text(ctx, $1); }
    | T_TRUE                                     { $$ = "true"; }
    | T_FALSE                                    { $$ = "false"; }
    ;

atom:
      T_IDENT '(' ')'                            { $$ = rfx_mk_atom(ctx, $1, NULL, @1); }
    | T_IDENT '(' args ')'                       { $$ = rfx_mk_atom(ctx, $1, $3, @1); }
    ;

args:
      expr                                       { $$ = rfx_mk_list(ctx, $1); }
    | args ',' expr                              { $$ = rfx_list_add(ctx, $1, $3); }
    ;

disj:
      conj                                       { $$ = $1; }
    | disj ';' conj                              { $$ = rfx_mk_bool_body(ctx, RFX_B_OR, $1, $3); }
    ;

conj:
      lit                                        { $$ = $1; }
    | conj ',' lit                               { $$ = rfx_mk_bool_body(ctx, RFX_B_AND, $1, $3); }
    ;

lit:
      atom                                       { $$ = rfx_mk_lit_body(ctx, RFX_L_ATOM, $1, @1); }
    | '!' atom                                   { $$ = rfx_mk_lit_body(ctx, RFX_L_NEG, $2, @1); }
    | T_CONSTRAINT '(' more_args ')'             { $$ = rfx_mk_fn_lit(ctx, (rfx_functor)$1, $3, false, @1); }
    | '!' T_CONSTRAINT '(' more_args ')'         { $$ = rfx_mk_fn_lit(ctx, (rfx_functor)$2, $4, true, @1); }
    | '!' '(' disj ')'                           { $$ = rfx_mk_not_body(ctx, $3); }
    | expr cmpop expr                            { $$ = rfx_mk_cmp_body(ctx, (rfx_cmpop)$2, $1, $3, @2); }
    | '(' disj ')'                               { $$ = $2; }
    | T_TRUE                                     { $$ = rfx_mk_lit_body(ctx, RFX_L_TRUE, NULL, @1); }
    | T_FALSE                                    { $$ = rfx_mk_lit_body(ctx, RFX_L_FALSE, NULL, @1); }
    ;

cmpop:
      '<'      { $$ = RFX_LT; }
    | T_LE     { $$ = RFX_LE; }
    | '>'      { $$ = RFX_GT; }
    | T_GE     { $$ = RFX_GE; }
    | '='      { $$ = RFX_EQ; }
    | T_NE     { $$ = RFX_NE; }
    ;

/* Soufflé's precedence, loosest first: lor, lxor, land, bor, bxor, band, the shifts, + -,
 * * / %, unary minus, ^ (right-associative). */
expr:
      lxor_expr                                  { $$ = $1; }
    | expr T_LOR lxor_expr                       { $$ = rfx_mk_binop(ctx, RFX_LOR, $1, $3, @2); }
    ;

lxor_expr:
      land_expr                                  { $$ = $1; }
    | lxor_expr T_LXOR land_expr                 { $$ = rfx_mk_binop(ctx, RFX_LXOR, $1, $3, @2); }
    ;

land_expr:
      bor_expr                                   { $$ = $1; }
    | land_expr T_LAND bor_expr                  { $$ = rfx_mk_binop(ctx, RFX_LAND, $1, $3, @2); }
    ;

bor_expr:
      bxor_expr                                  { $$ = $1; }
    | bor_expr T_BOR bxor_expr                   { $$ = rfx_mk_binop(ctx, RFX_BOR, $1, $3, @2); }
    ;

bxor_expr:
      band_expr                                  { $$ = $1; }
    | bxor_expr T_BXOR band_expr                 { $$ = rfx_mk_binop(ctx, RFX_BXOR, $1, $3, @2); }
    ;

band_expr:
      shift_expr                                 { $$ = $1; }
    | band_expr T_BAND shift_expr                { $$ = rfx_mk_binop(ctx, RFX_BAND, $1, $3, @2); }
    ;

shift_expr:
      sum                                        { $$ = $1; }
    | shift_expr T_BSHL sum                      { $$ = rfx_mk_binop(ctx, RFX_BSHL, $1, $3, @2); }
    | shift_expr T_BSHR sum                      { $$ = rfx_mk_binop(ctx, RFX_BSHR, $1, $3, @2); }
    | shift_expr T_BSHRU sum                     { $$ = rfx_mk_binop(ctx, RFX_BSHRU, $1, $3, @2); }
    ;

sum:
      term                                       { $$ = $1; }
    | sum '+' term                               { $$ = rfx_mk_binop(ctx, RFX_ADD, $1, $3, @2); }
    | sum '-' term                               { $$ = rfx_mk_binop(ctx, RFX_SUB, $1, $3, @2); }
    ;

term:
      unary                                      { $$ = $1; }
    | term '*' unary                             { $$ = rfx_mk_binop(ctx, RFX_MUL, $1, $3, @2); }
    | term '/' unary                             { $$ = rfx_mk_binop(ctx, RFX_DIV, $1, $3, @2); }
    | term '%' unary                             { $$ = rfx_mk_binop(ctx, RFX_MOD, $1, $3, @2); }
    ;

unary:
      power                                      { $$ = $1; }
    | '-' unary                                  { $$ = rfx_mk_neg(ctx, $2, @1); }
    | T_BNOT unary                               { $$ = rfx_mk_binop(ctx, RFX_BXOR, $2, rfx_mk_all_ones(ctx, @1), @1); }
    | T_LNOT unary                               { $$ = rfx_mk_binop(ctx, RFX_LXOR, $2, rfx_mk_int(ctx, 1, false, @1), @1); }
    ;

power:
      factor                                     { $$ = $1; }
    | factor '^' unary                           { $$ = rfx_mk_binop(ctx, RFX_POW, $1, $3, @2); }
    ;

factor:
      primary                                    { $$ = $1; }
    | aggregate                                  { $$ = $1; }
    ;

primary:
      T_IDENT                                    { $$ = rfx_mk_var(ctx, $1, @1); }
    | T_ANON                                     { $$ = rfx_mk_expr(ctx, RFX_E_ANON, @1); }
    | T_COUNTER                                  { $$ = rfx_mk_counter(ctx, @1); }
    | T_INT                                      { $$ = rfx_mk_int(ctx, $1, false, @1); }
    | T_UNSIGNED                                 { $$ = rfx_mk_int(ctx, $1, true, @1); }
    | T_BITS                                     { $$ = rfx_mk_bits(ctx, $1, @1); }
    | T_FLOAT                                    { $$ = rfx_mk_float(ctx, $1, @1); }
    | T_STRING                                   { $$ = rfx_mk_string(ctx, $1, @1); }
    | '(' expr ')'                               { $$ = $2; }
    | T_MIN '(' expr ',' more_args ')'           { $$ = rfx_fold_binop(ctx, RFX_MIN_OF, $3, $5, @1); }
    | T_MAX '(' expr ',' more_args ')'           { $$ = rfx_fold_binop(ctx, RFX_MAX_OF, $3, $5, @1); }
    | T_FUNCTOR '(' ')'                          { $$ = rfx_mk_fn(ctx, (rfx_functor)$1, NULL, @1); }
    | T_FUNCTOR '(' more_args ')'                { $$ = rfx_mk_fn(ctx, (rfx_functor)$1, $3, @1); }
    | T_AS '(' expr ',' T_IDENT ')'              { $$ = rfx_mk_as(ctx, $3, $5, @1); }
    | '[' ']'                                    { $$ = rfx_mk_fn(ctx, RFX_FN_RECORD, NULL, @1); }
    | '[' more_args ']'                          { $$ = rfx_mk_fn(ctx, RFX_FN_RECORD, $2, @1); }
    | T_NIL                                      { $$ = rfx_mk_fn(ctx, RFX_FN_NIL, NULL, @1); }
    | T_USER_FN '(' ')'                          { $$ = rfx_mk_user_fn(ctx, $1, NULL, @1); }
    | T_USER_FN '(' more_args ')'                { $$ = rfx_mk_user_fn(ctx, $1, $3, @1); }
    | T_CONSTRUCTOR                              { $$ = rfx_mk_constructor(ctx, $1, NULL, @1); }
    | T_CONSTRUCTOR '(' ')'                      { $$ = rfx_mk_constructor(ctx, $1, NULL, @1); }
    | T_CONSTRUCTOR '(' more_args ')'            { $$ = rfx_mk_constructor(ctx, $1, $3, @1); }
    ;

/* the second and later arguments of min(a, b, ...) and max(a, b, ...); a functor's arguments */
more_args:
      expr                                       { $$ = rfx_mk_list(ctx, $1); }
    | more_args ',' expr                         { $$ = rfx_list_add(ctx, $1, $3); }
    ;

/* `A | B | ...`: (name, location) pairs, two members at least */
union_members:
      T_IDENT '|' T_IDENT                        { $$ = rfx_mk_name_list(ctx, rfx_mk_name_list(ctx, NULL, $1, @1), $3, @3); }
    | union_members '|' T_IDENT                  { $$ = rfx_mk_name_list(ctx, $1, $3, @3); }
    ;

aggregate:
      T_COUNT ':' atom                           { $$ = rfx_mk_agg(ctx, RFX_AGG_COUNT, NULL, rfx_mk_atom_body(ctx, $3), @1); }
    | T_COUNT ':' '{' disj '}'                   { $$ = rfx_mk_agg(ctx, RFX_AGG_COUNT, NULL, $4, @1); }
    | T_SUM expr ':' atom                        { $$ = rfx_mk_agg(ctx, RFX_AGG_SUM, $2, rfx_mk_atom_body(ctx, $4), @1); }
    | T_SUM expr ':' '{' disj '}'                { $$ = rfx_mk_agg(ctx, RFX_AGG_SUM, $2, $5, @1); }
    | T_MIN expr ':' atom                        { $$ = rfx_mk_agg(ctx, RFX_AGG_MIN, $2, rfx_mk_atom_body(ctx, $4), @1); }
    | T_MIN expr ':' '{' disj '}'                { $$ = rfx_mk_agg(ctx, RFX_AGG_MIN, $2, $5, @1); }
    | T_MAX expr ':' atom                        { $$ = rfx_mk_agg(ctx, RFX_AGG_MAX, $2, rfx_mk_atom_body(ctx, $4), @1); }
    | T_MAX expr ':' '{' disj '}'                { $$ = rfx_mk_agg(ctx, RFX_AGG_MAX, $2, $5, @1); }
    | T_MEAN expr ':' atom                       { $$ = rfx_mk_agg(ctx, RFX_AGG_MEAN, $2, rfx_mk_atom_body(ctx, $4), @1); }
    | T_MEAN expr ':' '{' disj '}'               { $$ = rfx_mk_agg(ctx, RFX_AGG_MEAN, $2, $5, @1); }
    ;
%%
