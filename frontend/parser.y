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
    int op;
}

%token T_DECL ".decl" T_TYPE ".type" T_NUMBER_TYPE ".number_type" T_SYMBOL_TYPE ".symbol_type"
%token T_INPUT ".input" T_OUTPUT ".output" T_PRINTSIZE ".printsize"
%token T_COUNT "count" T_SUM "sum" T_MIN "min" T_MAX "max" T_TRUE "true" T_FALSE "false"
%token T_BAND "band" T_BOR "bor" T_BXOR "bxor" T_BSHL "bshl" T_BSHR "bshr" T_BSHRU "bshru"
%token T_LAND "land" T_LOR "lor" T_LXOR "lxor"
%token T_IF ":-" T_LARROW "<-" T_RARROW "->" T_SUBTYPE "<:"
%token T_LE "<=" T_GE ">=" T_NE "!=" T_ANON "_"
%token <str> T_IDENT "identifier"
%token <ival> T_INT "integer" T_UNSIGNED "unsigned integer"
%token <fval> T_FLOAT "float"
%token <sym> T_STRING "string"

%type <expr> expr lxor_expr land_expr bor_expr bxor_expr band_expr shift_expr sum term factor unary power primary aggregate
%type <atom> atom
%type <body> disj conj lit
%type <list> args attrs dir_names
%type <op> cmpop
%type <str> optval


%%
program:
      %empty
    | program item
    ;

item:
      T_DECL T_IDENT '(' ')'                     { rfx_add_decl(ctx, $2, NULL, @2); }
    | T_DECL T_IDENT '(' attrs ')'               { rfx_add_decl(ctx, $2, $4, @2); }
    | T_TYPE T_IDENT T_SUBTYPE T_IDENT           { rfx_add_type(ctx, $2, $4, true, @2, @4); }
    | T_TYPE T_IDENT '=' T_IDENT                 { rfx_add_type(ctx, $2, $4, false, @2, @4); }
    | T_NUMBER_TYPE T_IDENT                      { rfx_add_type(ctx, $2, "number", true, @2, @2); }
    | T_SYMBOL_TYPE T_IDENT                      { rfx_add_type(ctx, $2, "symbol", true, @2, @2); }
    | T_INPUT     { ctx->cur_kind = RFX_REL_INPUT; } dir_names
    | T_OUTPUT    { ctx->cur_kind = RFX_REL_OUTPUT; } dir_names
    | T_PRINTSIZE { ctx->cur_kind = RFX_REL_PRINTSIZE; } dir_names
    | atom '.'                                   { rfx_add_clause(ctx, $1, NULL, @1); }
    | atom T_IF disj '.'                         { rfx_add_clause(ctx, $1, $3, @1); }
    | atom T_LARROW disj '.'                     { rfx_add_clause(ctx, $1, $3, @1); }
    | atom T_RARROW conj '.'                     { rfx_add_logiql_decl(ctx, $1, $3, @1); }
    | error '.'                                  { yyerrok; }
    ;

attrs:
      T_IDENT ':' T_IDENT                        { $$ = rfx_mk_attr(ctx, NULL, $1, $3, @1); }
    | attrs ',' T_IDENT ':' T_IDENT              { $$ = rfx_mk_attr(ctx, $1, $3, $5, @3); }
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
    | T_INT                                      { $$ = rfx_mk_int(ctx, $1, false, @1); }
    | T_UNSIGNED                                 { $$ = rfx_mk_int(ctx, $1, true, @1); }
    | T_FLOAT                                    { $$ = rfx_mk_float(ctx, $1, @1); }
    | T_STRING                                   { $$ = rfx_mk_string(ctx, $1, @1); }
    | '(' expr ')'                               { $$ = $2; }
    | T_MIN '(' expr ',' expr ')'                { $$ = rfx_mk_binop(ctx, RFX_MIN_OF, $3, $5, @1); }
    | T_MAX '(' expr ',' expr ')'                { $$ = rfx_mk_binop(ctx, RFX_MAX_OF, $3, $5, @1); }
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
    ;
%%
