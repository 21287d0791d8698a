/* test_frontend.c: unit tests of the front end (symbols, arena, parsing, checking,
 * stratification) and of plan construction. Exact diagnostics are pinned by the
 * end-to-end cases in tests/cases/. */
#include "harness.h"
#include "ra_ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rfx_program *parse(const char *src, int *nerr)
{
    FILE *devnull = fopen("/dev/null", "w");
    rfx_program *p = rfx_frontend_parse(src, strlen(src), "t.dl", devnull, nerr);
    fclose(devnull);
    return p;
}

static int errors_of(const char *src)
{
    int n;
    rfx_program *p = parse(src, &n);
    rfx_program_free(p);
    return n;
}

static void test_symtab(void)
{
    rfx_symtab *t = rfx_symtab_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    uint32_t a = rfx_symtab_intern(t, "banana", 6), b = rfx_symtab_intern(t, "apple", 5);
    CU_ASSERT_EQUAL(rfx_symtab_intern(t, "banana", 6), a);
    CU_ASSERT_NOT_EQUAL(a, b);
    CU_ASSERT_STRING_EQUAL(rfx_symtab_str(t, b), "apple");
    char buf[32];
    for (int i = 0; i < 5000; i++) {
        int n = snprintf(buf, sizeof buf, "s%d", i);
        CU_ASSERT_EQUAL(rfx_symtab_intern(t, buf, (size_t)n), (uint32_t)(i + 2));
    }
    CU_ASSERT_EQUAL(rfx_symtab_intern(t, "s4999", 5), 5001u);
    uint32_t *rank = rfx_symtab_ranks(t);
    CU_ASSERT(rank[b] < rank[a]);
    free(rank);
    /* embedded tabs and spaces are part of the symbol */
    uint32_t s = rfx_symtab_intern(t, "a b\tc", 5);
    CU_ASSERT_STRING_EQUAL(rfx_symtab_str(t, s), "a b\tc");
    rfx_symtab_free(t);
}

static void test_arena(void)
{
    rfx_arena *a = rfx_arena_new();
    char *big = rfx_arena_alloc(a, 1 << 20);
    CU_ASSERT_PTR_NOT_NULL(big);
    CU_ASSERT_EQUAL(big[12345], 0);
    for (int i = 0; i < 10000; i++) {
        int *p = rfx_arena_alloc(a, 24);
        CU_ASSERT_EQUAL(((uintptr_t)p) % 16, 0);
    }
    CU_ASSERT_STRING_EQUAL(rfx_arena_strdup(a, "hello world", 5), "hello");
    rfx_arena_free(a);
}

static void test_parse_decls(void)
{
    int n;
    rfx_program *p = parse(".type Node <: symbol\n.type Id = number\n"
                           ".decl e(a: Node, b: Node, w: float, u: unsigned, i: Id)\n"
                           ".decl flag()\n.input e\n.output flag\nflag() :- e(_, _, _, _, _).\n", &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL(p->nrels, 2);
    CU_ASSERT_EQUAL(p->rels[0].arity, 5);
    CU_ASSERT_EQUAL(p->types[p->rels[0].attrs[0].type].prim, RFX_SYMBOL);
    CU_ASSERT_EQUAL(p->types[p->rels[0].attrs[2].type].prim, RFX_FLOAT);
    CU_ASSERT_EQUAL(p->types[p->rels[0].attrs[3].type].prim, RFX_UNSIGNED);
    CU_ASSERT_EQUAL(p->types[p->rels[0].attrs[4].type].prim, RFX_NUMBER);
    CU_ASSERT_EQUAL(p->rels[1].arity, 0);
    CU_ASSERT(p->rels[0].io & RFX_REL_INPUT);
    CU_ASSERT(p->rels[1].io & RFX_REL_OUTPUT);
    rfx_program_free(p);
}

static void test_logiql(void)
{
    int n;
    rfx_program *p = parse("number(n) -> int32(n).\nnumber(0).\nnext(n,m) -> int32(n), int32(m).\n"
                           "next(0, 1).\neven(n) -> int32(n).\neven(0).\nodd(n) -> int32(n).\n"
                           "even(n) <- number(n), next(m, n), odd(m).\nodd(n) <- next(m, n), even(m).\n", &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL(p->nrels, 4);
    CU_ASSERT(p->rels[0].logiql);
    int even = rfx_program_find_rel(p, "even"), odd = rfx_program_find_rel(p, "odd");
    CU_ASSERT_EQUAL(p->rels[even].stratum, p->rels[odd].stratum);
    CU_ASSERT(p->strata[p->rels[even].stratum].recursive);
    rfx_program_free(p);
}

static void test_unicode_arrows(void)
{
    CU_ASSERT_EQUAL(errors_of("a(n) \xE2\x88\x92> int32(n).\nb(n) \xE2\x88\x92> int32(n).\nb(1).\n"
                              "a(n) \xE2\x86\x90 b(n).\n"), 0);
}

static void test_dnf(void)
{
    int n;
    rfx_program *p = parse(".decl a(x: number)\n.decl b(x: number)\n.decl c(x: number)\n.decl d(x: number)\n"
                           "d(x) :- (a(x) ; b(x)), (c(x) ; x = 1 ; x = 2), a(x).\n", &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL(p->clauses[0].nconj, 6);
    CU_ASSERT_EQUAL(p->clauses[0].conj[0].nlits, 3);
    rfx_program_free(p);
}

static void test_var_types(void)
{
    int n;
    rfx_program *p = parse(".decl e(a: symbol, b: float)\n.decl r(a: symbol, b: float)\n"
                           "r(x, y) :- e(x, z), y = z * 2.0.\n", &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    const rfx_clause *c = &p->clauses[0];
    CU_ASSERT_EQUAL(c->nvars, 3);
    for (int v = 0; v < c->nvars; v++) {
        rfx_prim want = strcmp(c->var_names[v], "x") == 0 ? RFX_SYMBOL : RFX_FLOAT;
        CU_ASSERT_EQUAL(p->types[c->var_types[v]].prim, want);
    }
    rfx_program_free(p);
}

static void test_strata_order(void)
{
    int n;
    rfx_program *p = parse(".decl e(x: number, y: number)\n.decl p(x: number, y: number)\n"
                           ".decl n(x: number)\n.decl q(x: number)\n"
                           "q(x) :- n(x), !p(x, x).\nn(x) :- e(x, _).\np(x, y) :- e(x, y).\n"
                           "p(x, z) :- p(x, y), e(y, z).\n", &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    int e = rfx_program_find_rel(p, "e"), pp = rfx_program_find_rel(p, "p"), q = rfx_program_find_rel(p, "q");
    CU_ASSERT(p->rels[e].stratum < p->rels[pp].stratum);
    CU_ASSERT(p->rels[pp].stratum < p->rels[q].stratum);
    CU_ASSERT(p->strata[p->rels[pp].stratum].recursive);
    CU_ASSERT_FALSE(p->strata[p->rels[q].stratum].recursive);
    rfx_program_free(p);
}

/* Components expand into qualified relations; a dotted name after an operator in a body
 * is a variable ending the clause, as in Soufflé. */
static void test_components(void)
{
    int n;
    rfx_program *p = parse(".comp G<T> { .decl e(a: T) .decl r(a: T) r(x) :- e(x). .comp In { .decl z(a: number) } "
                           ".init in = In }\n.comp H : G<number> { e(1). }\n.init g = H\n.init s = G<symbol>\n"
                           ".decl t(x: number)\nt(x) :- g.r(x), x = y.t(1).\ns.e(\"a\").g.in.z(2).\n", &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_EQUAL(p->nrels, 7);
    int gr = rfx_program_find_rel(p, "g.r"), se = rfx_program_find_rel(p, "s.e");
    CU_ASSERT(gr >= 0 && se >= 0 && rfx_program_find_rel(p, "g.in.z") >= 0);
    if (gr >= 0 && se >= 0) {
        CU_ASSERT_EQUAL(p->types[p->rels[gr].attrs[0].type].prim, RFX_NUMBER);
        CU_ASSERT_EQUAL(p->types[p->rels[se].attrs[0].type].prim, RFX_SYMBOL);
    }
    /* `x = y.t(1).`: the rule ends after y, then a fact */
    int t = rfx_program_find_rel(p, "t");
    int facts = 0;
    for (int i = 0; i < p->nclauses; i++)
        facts += p->clauses[i].head.rel == t && p->clauses[i].is_fact;
    CU_ASSERT_EQUAL(facts, 1);
    rfx_program_free(p);
    CU_ASSERT_EQUAL(errors_of(".comp A { .decl r(x: number) }\n.init a = A\n.init a = A\n"), 1);
    CU_ASSERT_EQUAL(errors_of(".comp A<T> { }\n.init a = A\n"), 1);
    CU_ASSERT_EQUAL(errors_of(".comp A : A { }\n.init a = A\n"), 1);
    CU_ASSERT_EQUAL(errors_of(".init a = Nowhere\n"), 1);
    CU_ASSERT_EQUAL(errors_of(".comp A { .decl r(x: number) overridable }\n.comp B : A { .override r }\n.init b = B\n"), 0);
}

static void test_error_counts(void)
{
    CU_ASSERT_EQUAL(errors_of(".decl a(x: number)\na(x) :- b(x).\n"), 1);                   /* unknown */
    CU_ASSERT_EQUAL(errors_of(".decl a(x: number)\n.decl b(x: number)\nb(x) :- a(x, x).\n"), 1); /* arity */
    CU_ASSERT_EQUAL(errors_of(".decl a(x: number)\n.decl b(x: symbol)\na(x) :- b(x).\n"), 1);
    CU_ASSERT_EQUAL(errors_of(".decl a(x: number)\na(x) :- a(y).\n"), 1);                  /* ungrounded */
    CU_ASSERT_EQUAL(errors_of(".decl a(x: number)\na(x) :- a(x), !a(y).\n"), 1);
    CU_ASSERT_EQUAL(errors_of(".decl a(x: number)\n.decl b(x: number)\na(x) :- b(x), !a(x).\n"), 1);
    CU_ASSERT_EQUAL(errors_of(".decl a(x: number)\na(x) :- a(y), x = y / 0.\n"), 1);
    CU_ASSERT_EQUAL(errors_of(".decl a(x: number)\na(x) :- a(x) a(x).\n"), 1);             /* syntax */
    CU_ASSERT_EQUAL(errors_of(".decl a(x: number)\n.decl a(x: number)\n"), 1);
    CU_ASSERT_EQUAL(errors_of(".decl a(x: nosuch)\n"), 1);
    CU_ASSERT_EQUAL(errors_of(".decl a(x: number)\na(\"s\").\n"), 1);
    CU_ASSERT_EQUAL(errors_of(".decl a(x: number)\na(2147483648).\n"), 1);
    CU_ASSERT_EQUAL(errors_of(".decl a(x: number)\na(-2147483648).\n"), 0);
    CU_ASSERT_EQUAL(errors_of(".decl a(x: symbol)\na(x) :- a(x), x < \"b\".\n"), 0);   /* by text */
    CU_ASSERT_EQUAL(errors_of(".decl a(x: symbol)\na(x) :- a(x), x < 1.\n"), 1);
    CU_ASSERT_EQUAL(errors_of(".decl a(x: number)\n.decl c(n: number)\nc(n) :- a(n), n = count : { c(_) }.\n"), 1);
    CU_ASSERT_EQUAL(errors_of("/* never closed\n"), 1);
    CU_ASSERT_EQUAL(errors_of(".decl a(x: symbol)\na(\"never closed).\n"), 1);
}

static void test_plan_verifies(void)
{
    const char *srcs[] = {
        ".decl e(x: number, y: number)\n.decl p(x: number, y: number)\n.output p\n"
        "p(x, y) :- e(x, y).\np(x, z) :- p(x, y), p(y, z).\n",
        ".decl e(x: number, y: number)\n.decl d(x: number, n: number)\n.output d\n"
        "d(x, n) :- e(x, _), n = sum y : { e(x, y) } + count : { e(_, x) }.\n",
        ".decl e(x: number, y: number)\n.decl t(x: number)\n.output t\n"
        "t(x + 1) :- e(x, y), !e(y, x), y != 3, x * 2 = y.\n",
    };
    for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
        int n;
        rfx_program *p = parse(srcs[i], &n);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        for (int opt = 0; opt < 2; opt++) {
            rfx_plan_opts o = {.no_passes = opt == 1};
            rfx_plan *plan = rfx_plan_build(p, &o, NULL);
            CU_ASSERT_PTR_NOT_NULL(plan);
            if (plan)
                CU_ASSERT(rfx_plan_verify(plan, stderr));
            rfx_plan_free(plan);
        }
        rfx_program_free(p);
    }
}

static void test_loop_hoisting(void)
{
    /* the re-sort of e by its second column does not change in the loop: it is hoisted */
    int n;
    rfx_program *p = parse(".decl e(x: number, y: number)\n.decl r(x: number, y: number)\n.output r\n"
                           "r(x, y) :- e(x, y).\nr(x, z) :- e(y, z), r(x, y).\n", &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    rfx_plan *plan = rfx_plan_build(p, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
    int loop = -1;
    for (int b = 0; b < plan->nblocks; b++)
        if (plan->blocks[b].loop_head == b)
            loop = b;
    CU_ASSERT(loop > 0);
    for (int i = 0; loop > 0 && i < plan->blocks[loop].ncmds; i++) {
        const rfx_ra_cmd *c = &plan->blocks[loop].cmds[i];
        for (int s = 0; s < 2; s++)
            if (c->src[s] >= 0 && plan->vars[c->src[s]].kind == RFX_PV_REL && c->op != RFX_RA_UNION &&
                c->op != RFX_RA_DIFFERENCE && c->op != RFX_RA_JOIN && c->op != RFX_RA_MAPJOIN)
                CU_FAIL("a command over a loop-invariant relation stayed in the loop");
    }
    rfx_plan_free(plan);
    rfx_program_free(p);
}

/* rows for rfx_plan_rows_bound: e holds 10 rows, s 3, the rest none */
static size_t fixed_rows(void *ctx, int var)
{
    const rfx_plan *plan = ctx;
    const char *name = plan->vars[var].name;
    return strcmp(name, "e") == 0 ? 10 : strcmp(name, "s") == 0 ? 3 : 0;
}

static void test_rows_bound(void)
{
    int n;
    rfx_program *p = parse(".decl e(x: number, y: number)\n.decl s(x: number)\n.input e, s\n"
                           ".decl path(x: number, y: number)\n.decl reach(x: number)\n.decl c(x: number)\n"
                           ".decl pair(x: number, y: number)\n.output path, reach, c, pair\n"
                           "path(x, y) :- e(x, y).\npath(x, z) :- path(x, y), e(y, w), z = w.\n"
                           "reach(0).\nreach(x) :- s(x).\nreach(y) :- reach(x), e(x, y).\n"
                           "c(0).\nc(x + 1) :- c(x), x < 5.\n"
                           "pair(x, 7) :- s(x).\npair(y, x) :- pair(x, y).\n", &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    rfx_plan *plan = rfx_plan_build(p, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
    int path = rfx_program_find_rel(p, "path"), reach = rfx_program_find_rel(p, "reach");
    int c = rfx_program_find_rel(p, "c"), e = rfx_program_find_rel(p, "e"), pair = rfx_program_find_rel(p, "pair");
    CU_ASSERT_DOUBLE_EQUAL(rfx_plan_rows_bound(plan, path, fixed_rows, plan), 100, 0);   /* |e| x |e| */
    CU_ASSERT_DOUBLE_EQUAL(rfx_plan_rows_bound(plan, reach, fixed_rows, plan), 14, 0);   /* |e| + |s| + 1 */
    CU_ASSERT_DOUBLE_EQUAL(rfx_plan_rows_bound(plan, pair, fixed_rows, plan), 16, 0);    /* (|s| + 1)^2 */
    CU_ASSERT_DOUBLE_EQUAL(rfx_plan_rows_bound(plan, c, fixed_rows, plan), -1, 0);       /* x + 1: open */
    CU_ASSERT_DOUBLE_EQUAL(rfx_plan_rows_bound(plan, e, fixed_rows, plan), -1, 0);       /* not recursive */
    rfx_plan_free(plan);
    rfx_program_free(p);
}

static void add(void)
{
    CU_pSuite s = CU_add_suite("frontend", NULL, NULL);
    CU_add_test(s, "symbol table", test_symtab);
    CU_add_test(s, "arena", test_arena);
    CU_add_test(s, "declarations and types", test_parse_decls);
    CU_add_test(s, "LogiQL forms", test_logiql);
    CU_add_test(s, "LogiQL Unicode arrows", test_unicode_arrows);
    CU_add_test(s, "disjunctive normal form", test_dnf);
    CU_add_test(s, "variable types", test_var_types);
    CU_add_test(s, "strata order", test_strata_order);
    CU_add_test(s, "error counts", test_error_counts);
    CU_add_test(s, "components", test_components);
    CU_pSuite q = CU_add_suite("plan", NULL, NULL);
    CU_add_test(q, "plans verify with and without passes", test_plan_verifies);
    CU_add_test(q, "loop-invariant hoisting", test_loop_hoisting);
    CU_add_test(q, "what a loop can derive, by its columns' sources", test_rows_bound);
}

int main(int argc, char **argv)
{
    return run_suites(argc, argv, add);
}
