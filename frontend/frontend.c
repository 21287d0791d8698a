/* frontend.c: parse + check driver, lookups, and the AST printer (--emit=ast). */
#include "sema.h"
#include "parser.h"
#include "base.h"

#include <errno.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>

typedef void *yyscan_t;
int rfx_yylex_init_extra(rfx_parse_ctx *extra, yyscan_t *scanner);
int rfx_yylex_destroy(yyscan_t scanner);
void *rfx_yy_scan_bytes(const char *bytes, int len, yyscan_t scanner);

/* The functors of rfx's own (to_date .. like, not Soufflé's) whose names the program gives
 * relations, `.decl like(...)`: a bit each from RFX_FN_TO_DATE. Soufflé programs that name a
 * relation so keep it a relation. */
static unsigned shadowed_functors(const char *src, size_t len)
{
    unsigned bits = 0;
    for (const char *p = src, *end = src + len; (p = memmem(p, (size_t)(end - p), ".decl", 5)) != NULL;) {
        p += 5;
        while (p < end && *p != '(' && *p != '\n') {   /* the names declared, up to their attributes */
            while (p < end && (*p == ' ' || *p == '\t' || *p == ','))
                p++;
            const char *w = p;
            while (p < end && (isalnum((unsigned char)*p) || *p == '_' || *p == '?'))
                p++;
            if (p == w) {
                p += p < end;
                continue;
            }
            for (int f = RFX_FN_TO_DATE; f <= RFX_FN_LIKE; f++) {
                const char *name = rfx_functor_name((rfx_functor)f);
                if (strlen(name) == (size_t)(p - w) && memcmp(name, w, (size_t)(p - w)) == 0)
                    bits |= 1u << (f - RFX_FN_TO_DATE);
            }
        }
    }
    return bits;
}

void rfx_program_free(rfx_program *p)
{
    if (!p)
        return;
    rfx_symtab_free(p->syms);
    free(p->src);
    rfx_arena_free(p->arena);
    free(p);
}

/* Splits a blank-separated list into words (malloc'ed array and copy). */
static int split_words(const char *list, char **copy, const char ***words)
{
    *copy = NULL;
    *words = NULL;
    if (!list)
        return 0;
    size_t n = strlen(list);
    if (!(*copy = malloc(n + 1)) || !(*words = malloc(sizeof(char *) * (n / 2 + 2)))) {
        free(*copy);
        *copy = NULL;
        return -1;
    }
    memcpy(*copy, list, n + 1);
    int k = 0;
    for (char *t = strtok(*copy, " \t\n"); t; t = strtok(NULL, " \t\n"))
        (*words)[k++] = t;
    return k;
}

/* Parses src; with o, a program file's, its directives go through the preprocessor first. */
static rfx_program *parse(const char *src, size_t len, const char *file, FILE *diag_out, int *nerrors,
                          const rfx_parse_opts *o)
{
    const bool preprocess = o && !o->no_preprocessor;
    char *text = NULL;   /* the preprocessor's output, when it ran */
    char *dir = NULL;
    rfx_program *p = rfx_calloc(1, sizeof *p);
    rfx_diag diag = {.file = file, .out = diag_out ? diag_out : stderr, .max_errors = 50,
                     .no_warnings = o && o->no_warn};
    *nerrors = 1;
    if (!p)
        goto oom;
    p->arena = rfx_arena_new();
    p->syms = rfx_symtab_new();
    p->src = rfx_malloc(len + 1);
    if (!p->arena || !p->syms || !p->src)
        goto oom;
    rfx_memcpy(p->src, src, len);
    p->src[len] = 0;
    p->file = rfx_arena_strdup(p->arena, file, strlen(file));
    if (!p->file)
        goto oom;
    diag.file = p->file;
    diag.src = p->src;
    if (len > INT32_MAX - 2) {
        rfx_diag_error(&diag, (rfx_loc){0, 0}, "program text is too large");
        rfx_program_free(p);
        return NULL;
    }

    rfx_parse_ctx ctx = {.arena = p->arena, .syms = p->syms, .diag = &diag, .line = 1, .col = 1, .file = p->file,
                         .dir = "", .no_preprocessor = o && o->no_preprocessor, .no_demand = o && o->no_demand};
    char *mcopy = NULL, *icopy = NULL;
    const char **mwords = NULL, **iwords = NULL;
    int nmacros = preprocess ? split_words(o->macros, &mcopy, &mwords) : 0;
    int nincs = preprocess && nmacros >= 0 ? split_words(o->include_dirs, &icopy, &iwords) : 0;
    if (nmacros < 0 || nincs < 0) {
        free(mcopy), free(mwords), free(icopy), free(iwords);
        goto oom;
    }
    if (preprocess && (nmacros > 0 || rfx_needs_preprocessor(src, len))) {
        char why[512];
        size_t tlen = 0;
        rfx_loc where = {0, 0};
        int rc = rfx_preprocess(src, len, file, mwords, nmacros, iwords, nincs, &text, &tlen, &where, why, sizeof why);
        free(mcopy), free(mwords), free(icopy), free(iwords);
        mcopy = icopy = NULL;
        mwords = iwords = NULL;
        if (rc != 0) {
            rfx_diag_error(&diag, where, "%s", why);
            rfx_program_free(p);
            return NULL;
        }
        if (tlen > INT32_MAX - 2) {
            free(text);
            rfx_diag_error(&diag, (rfx_loc){0, 0}, "program text is too large after the preprocessor");
            rfx_program_free(p);
            return NULL;
        }
        if (!(dir = strdup(file))) {
            free(text);
            goto oom;
        }
        char *slash = strrchr(dir, '/');
        if (slash)
            slash[slash == dir ? 1 : 0] = 0;
        else
            dir[0] = 0;
        ctx.dir = dir;
        ctx.lines = &p->lines;
        diag.map = &p->lines;
        src = text;
        len = tlen;
    }
    free(mcopy), free(mwords), free(icopy), free(iwords);
    ctx.shadowed = shadowed_functors(src, len);
    yyscan_t scanner;
    if (rfx_yylex_init_extra(&ctx, &scanner))
        goto oom;
    if (!rfx_yy_scan_bytes(src, (int)len, scanner)) {
        rfx_yylex_destroy(scanner);
        goto oom;
    }
    int rc = rfx_yyparse(scanner, &ctx);
    rfx_yylex_destroy(scanner);
    free(text);
    free(dir);
    text = dir = NULL;
    /* 2 is bison's "memory exhausted": out of memory, or the nesting limit (already reported) */
    if (ctx.oom || (rc == 2 && diag.errors == 0))
        goto oom;
    if (diag.errors == 0)
        rfx_components_expand(&ctx);
    if (diag.errors == 0 && !ctx.oom)
        rfx_sema_run(p, &ctx);
    if (ctx.oom)
        goto oom;
    if (diag.errors) {
        if (diag.errors > diag.max_errors)
            fprintf(diag.out, "%s: too many errors (%d), stopped reporting\n", file, diag.errors);
        *nerrors = diag.errors;
        rfx_program_free(p);
        return NULL;
    }
    *nerrors = 0;
    return p;
oom:
    free(text);
    free(dir);
    fprintf(diag.out, "%s: error: out of memory while compiling\n", file);
    rfx_program_free(p);
    *nerrors = -1;
    return NULL;
}

rfx_program *rfx_frontend_parse(const char *src, size_t len, const char *file, FILE *diag_out, int *nerrors)
{
    return parse(src, len, file, diag_out, nerrors, NULL);
}

rfx_program *rfx_frontend_parse_text(const char *src, size_t len, const char *file, const rfx_parse_opts *o,
                                     FILE *diag_out, int *nerrors)
{
    rfx_parse_opts text = o ? *o : (rfx_parse_opts){0};
    text.no_preprocessor = true;
    return parse(src, len, file, diag_out, nerrors, &text);
}

rfx_program *rfx_frontend_parse_file(const char *path, const rfx_parse_opts *o, FILE *diag_out, int *nerrors,
                                     bool *io_error)
{
    FILE *out = diag_out ? diag_out : stderr;
    *io_error = false;
    *nerrors = 1;
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(out, "%s: error: cannot open program: %s\n", path, strerror(errno));
        *io_error = true;
        return NULL;
    }
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (!rfx_grow((void **)&buf, &cap, n + 65536, 1)) {
            fclose(f);
            free(buf);
            fprintf(out, "%s: error: out of memory reading program\n", path);
            *nerrors = -1;
            return NULL;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        fprintf(out, "%s: error: cannot read program (is it a directory?)\n", path);
        free(buf);
        *io_error = true;
        return NULL;
    }
    const rfx_parse_opts none = {0};
    rfx_program *p = parse(buf ? buf : "", n, path, diag_out, nerrors, o ? o : &none);
    free(buf);
    return p;
}

/* The symbol table's hash of a name. */
static size_t name_hash(const char *s)
{
    return (size_t)rfx_fnv1a(RFX_FNV_INIT, s, strlen(s));
}

int rfx_program_find_rel(const rfx_program *p, const char *name)
{
    if (!p->rel_cap) {
        for (int i = 0; i < p->nrels; i++)
            if (strcmp(p->rels[i].name, name) == 0)
                return i;
        return -1;
    }
    for (size_t k = name_hash(name) & (size_t)(p->rel_cap - 1);; k = (k + 1) & (size_t)(p->rel_cap - 1)) {
        int i = p->rel_slots[k];
        if (i < 0 || strcmp(p->rels[i].name, name) == 0)
            return i;
    }
}

bool rfx_program_index_rel(rfx_program *p, int rel)
{
    if (!p->rel_cap)
        return false;
    size_t k = name_hash(p->rels[rel].name) & (size_t)(p->rel_cap - 1);
    for (size_t probes = 0; p->rel_slots[k] >= 0; k = (k + 1) & (size_t)(p->rel_cap - 1))
        if (++probes >= (size_t)p->rel_cap)
            return false;
    p->rel_slots[k] = rel;
    return true;
}

static int composite_type(const rfx_program *p, int t, bool adt)
{
    for (int hops = 0; t >= 0 && t < p->ntypes && hops <= p->ntypes; hops++) {
        const rfx_type *ty = &p->types[t];
        if (adt ? ty->nbranches > 0 : ty->nfields >= 0)
            return t;
        if (ty->nfields >= 0 || ty->nbranches > 0)
            return -1;
        if (ty->subtype || ty->nmembers || ty->parent < 0)
            return -1;
        t = ty->parent;
    }
    return -1;
}

int rfx_program_record_type(const rfx_program *p, int t)
{
    return composite_type(p, t, false);
}

int rfx_program_adt_type(const rfx_program *p, int t)
{
    return composite_type(p, t, true);
}

bool rfx_program_adt_enum(const rfx_program *p, int t)
{
    int at = rfx_program_adt_type(p, t);
    return at >= 0 && p->types[at].enumeration;
}

int rfx_program_fields(const rfx_program *p, int t, int branch, const int **types)
{
    int rt = rfx_program_record_type(p, t), at = rfx_program_adt_type(p, t);
    if (rt >= 0) {
        *types = p->types[rt].fields;
        return p->types[rt].nfields;
    }
    if (at < 0 || branch < 0 || branch >= p->types[at].nbranches)
        return -1;
    *types = p->types[at].branches[branch].stored;   /* [0]: unsigned, the branch's number */
    return 2;
}

const rfx_type *rfx_program_type(const rfx_program *p, int type)
{
    return &p->types[type];
}

const char *rfx_io_get(const rfx_io_dir *d, const char *key)
{
    for (int i = 0; i < d->nopts; i++)
        if (strcmp(d->opts[i].key, key) == 0)
            return d->opts[i].value;
    return NULL;
}

/* ---- printer ---------------------------------------------------------------------- */
static void print_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        switch (*s) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\t': fputs("\\t", out); break;
        default: fputc(*s, out);
        }
    }
    fputc('"', out);
}

static void print_conj(FILE *out, const rfx_program *p, const rfx_clause *c, const rfx_conj *cj);

void rfx_expr_print(FILE *out, const rfx_program *p, const rfx_clause *c, const rfx_expr *e)
{
    switch (e->kind) {
    case RFX_E_VAR: fputs(e->u.v.name, out); break;
    case RFX_E_ANON: fputc('_', out); break;
    case RFX_E_INT: fprintf(out, "%lld", (long long)e->u.ival); break;
    case RFX_E_UNSIGNED: fprintf(out, "%lldu", (long long)e->u.ival); break;
    case RFX_E_FLOAT: fprintf(out, "%.9g%s", e->u.fval,
                              e->u.fval == (double)(long long)e->u.fval ? ".0" : ""); break;
    case RFX_E_STRING: print_string(out, rfx_symtab_str(p->syms, e->u.sym)); break;
    case RFX_E_NEG:
        fputs("-(", out);
        rfx_expr_print(out, p, c, e->u.bin.lhs);
        fputc(')', out);
        break;
    case RFX_E_BINOP: {   /* (l op r), or op(l, r) for min and max */
        const bool call = RFX_BINOP_CALL(e->u.bin.op);
        fprintf(out, "%s(", call ? rfx_binop_str(e->u.bin.op) : "");
        rfx_expr_print(out, p, c, e->u.bin.lhs);
        fprintf(out, call ? ", " : " %s ", rfx_binop_str(e->u.bin.op));
        rfx_expr_print(out, p, c, e->u.bin.rhs);
        fputc(')', out);
        break;
    }
    case RFX_E_AGG:
        fputs(rfx_aggfn_str(e->u.agg.fn), out);
        if (e->u.agg.target) {
            fputc(' ', out);
            rfx_expr_print(out, p, c, e->u.agg.target);
        }
        fputs(" : { ", out);
        if (rfx_agg_conj(e))
            print_conj(out, p, c, rfx_agg_conj(e));
        fputs(" }", out);
        break;
    case RFX_E_FN:
        if (e->u.fn.fn == RFX_FN_RECORD && e->u.fn.cast_name) {   /* $B(a, b): after checking [branch, [a, b]] */
            fprintf(out, "$%s(", e->u.fn.cast_name);
            const rfx_expr *f = e;
            int from = 0;
            if (e->u.fn.cast >= 0 && e->u.fn.nargs == 2) {   /* checked: the branch's fields after its number */
                bool one = p->types[e->u.fn.cast].branches[e->u.fn.field].payload < 0;
                f = one ? e : e->u.fn.args[1];
                from = one ? 1 : 0;
            }
            for (int i = from; i < f->u.fn.nargs; i++) {
                if (i > from)
                    fputs(", ", out);
                rfx_expr_print(out, p, c, f->u.fn.args[i]);
            }
            fputc(')', out);
            break;
        }
        if (e->u.fn.fn == RFX_FN_AS && e->u.fn.cast >= 0 && rfx_program_adt_enum(p, e->u.fn.cast) &&
            e->u.fn.args[0]->kind == RFX_E_UNSIGNED) {   /* an enumeration's branch, by its number */
            int at = rfx_program_adt_type(p, e->u.fn.cast);
            int64_t b = e->u.fn.args[0]->u.ival;
            if (b >= 0 && b < p->types[at].nbranches) {
                fprintf(out, "$%s()", p->types[at].branches[b].name);
                break;
            }
        }
        if (e->u.fn.fn == RFX_FN_RECORD || e->u.fn.fn == RFX_FN_NIL) {
            fputs(e->u.fn.fn == RFX_FN_NIL ? "nil" : "[", out);
            for (int i = 0; i < e->u.fn.nargs; i++) {
                if (i)
                    fputs(", ", out);
                rfx_expr_print(out, p, c, e->u.fn.args[i]);
            }
            if (e->u.fn.fn == RFX_FN_RECORD)
                fputc(']', out);
            break;
        }
        if (e->u.fn.fn == RFX_FN_USER)
            fprintf(out, "@%s(", e->u.fn.cast_name);
        else
            fprintf(out, "%s(", rfx_functor_name(e->u.fn.fn));
        for (int i = 0; i < e->u.fn.nargs; i++) {
            if (i)
                fputs(", ", out);
            rfx_expr_print(out, p, c, e->u.fn.args[i]);
        }
        if (e->u.fn.fn == RFX_FN_AS)
            fprintf(out, ", %s", e->u.fn.cast_name);
        if (e->u.fn.fn == RFX_FN_FIELD)
            fprintf(out, ", %d", e->u.fn.field);
        fputc(')', out);
        break;
    }
}

static void print_atom(FILE *out, const rfx_program *p, const rfx_clause *c, const rfx_atom *a)
{
    fprintf(out, "%s(", a->name);
    for (int i = 0; i < a->nargs; i++) {
        if (i)
            fputs(", ", out);
        rfx_expr_print(out, p, c, a->args[i]);
    }
    fputc(')', out);
}

static void print_conj(FILE *out, const rfx_program *p, const rfx_clause *c, const rfx_conj *cj)
{
    for (int i = 0; i < cj->nlits; i++) {
        const rfx_lit *l = cj->lits[i];
        if (i)
            fputs(", ", out);
        switch (l->kind) {
        case RFX_L_NEG: fputc('!', out); /* fall through */
        case RFX_L_ATOM: print_atom(out, p, c, &l->atom); break;
        case RFX_L_CMP:
            rfx_expr_print(out, p, c, l->lhs);
            fprintf(out, " %s ", rfx_cmpop_str(l->cmp));
            rfx_expr_print(out, p, c, l->rhs);
            break;
        case RFX_L_TRUE: fputs("true", out); break;
        case RFX_L_FALSE: fputs("false", out); break;
        }
    }
}

static void print_opts(FILE *out, int n, const rfx_io_opt *o)
{
    if (!n)
        return;
    fputc('(', out);
    for (int i = 0; i < n; i++) {
        fprintf(out, "%s%s=", i ? ", " : "", o[i].key);
        print_string(out, o[i].value);
    }
    fputc(')', out);
}

void rfx_frontend_print(FILE *out, const rfx_program *p)
{
    fprintf(out, "// AST of %s\n", p->file);
    for (int i = RFX_NPRIMS; i < p->ntypes; i++) {
        const rfx_type *t = &p->types[i];
        if (strchr(t->name, '$') || (t->prim == RFX_DECIMAL && t->parent < 0))   /* an ADT branch's record of
                                                                               * fields; decimal(P,S), built in */
            continue;
        if (t->nfields >= 0) {   /* a record type */
            fprintf(out, ".type %s = [", t->name);
            for (int f = 0; f < t->nfields; f++)
                fprintf(out, "%s%s: %s", f ? ", " : "", t->field_names[f], p->types[t->fields[f]].name);
            fputs("]\n", out);
        } else if (t->nbranches) {   /* an ADT */
            fprintf(out, ".type %s =", t->name);
            for (int b = 0; b < t->nbranches; b++) {
                fprintf(out, "%s %s {", b ? " |" : "", t->branches[b].name);
                for (int f = 1; f <= t->branches[b].nfields; f++)
                    fprintf(out, "%s%s: %s", f > 1 ? ", " : "", t->branches[b].field_names[f],
                            p->types[t->branches[b].fields[f]].name);
                fputc('}', out);
            }
            fputc('\n', out);
        } else
            fprintf(out, ".type %s <: %s   // %s\n", t->name, t->parent >= 0 ? p->types[t->parent].name : "?",
                    rfx_prim_name(t->prim));
    }
    for (int i = 0; i < p->nfunctors; i++) {
        const rfx_functor_decl *f = &p->functors[i];
        fprintf(out, ".functor %s(", f->name);
        for (int a = 0; a < f->nargs; a++)
            fprintf(out, "%s%s", a ? ", " : "", p->types[f->arg_types[a]].name);
        fprintf(out, "): %s%s\n", p->types[f->ret_type].name, f->stateful ? " stateful" : "");
    }
    for (int i = 0; i < p->nlattices; i++) {
        const rfx_lattice *l = &p->lattices[i];
        fprintf(out, ".lattice %s<> { ", p->types[l->type].name);
        if (l->bottom) {
            fputs("Bottom -> ", out);
            rfx_expr_print(out, p, NULL, l->bottom);
            fputs(", ", out);
        }
        if (l->top) {
            fputs("Top -> ", out);
            rfx_expr_print(out, p, NULL, l->top);
            fputs(", ", out);
        }
        fprintf(out, "Lub -> @%s(_, _)", p->functors[l->lub].name);
        if (l->glb >= 0)
            fprintf(out, ", Glb -> @%s(_, _)", p->functors[l->glb].name);
        fputs(" }\n", out);
    }
    for (int i = 0; i < p->nrels; i++) {
        const rfx_relation *r = &p->rels[i];
        fprintf(out, ".decl %s(", r->name);
        for (int a = 0; a < r->arity; a++)
            fprintf(out, "%s%s: %s%s", a ? ", " : "", r->attrs[a].name, p->types[r->attrs[a].type].name,
                    r->attrs[a].lattice ? "<>" : "");
        fprintf(out, ")");
        if (r->repr)
            fprintf(out, " %s", r->repr);
        for (int d = 0; d < r->nchoice; d++)
            for (int k = 0; k < r->choice_ncols[d]; k++)
                fprintf(out, "%s%s%s%s", !d && !k ? " choice-domain " : !k ? ", " : "", !k && r->choice_ncols[d] > 1 ? "(" : k ? ", " : "",
                        r->attrs[r->choice_cols[r->choice_first[d] + k]].name,
                        k == r->choice_ncols[d] - 1 && r->choice_ncols[d] > 1 ? ")" : "");
        fprintf(out, "   // stratum %d%s\n", r->stratum, r->logiql ? ", LogiQL" : "");
        for (int k = 0; k < r->ninputs; k++) {
            fprintf(out, ".input %s", r->name);
            print_opts(out, r->inputs[k].nopts, r->inputs[k].opts);
            fputc('\n', out);
        }
        for (int k = 0; k < r->noutputs; k++) {
            fprintf(out, ".output %s", r->name);
            print_opts(out, r->outputs[k].nopts, r->outputs[k].opts);
            fputc('\n', out);
        }
        if (r->io & RFX_REL_PRINTSIZE)
            fprintf(out, ".printsize %s\n", r->name);
    }
    for (int i = 0; i < p->nclauses; i++) {
        const rfx_clause *c = &p->clauses[i];
        if (c->subsumptive)   /* `a <= b :- body.` as the tuples it deletes */
            fputs("// subsumption: delete\n", out);
        print_atom(out, p, c, &c->head);
        if (!c->is_fact || c->body) {
            fputs(c->nconj ? " :- " : " :- false", out);   /* none left: each held its head */
            for (int d = 0; d < c->nconj; d++) {
                if (d)
                    fputs("; ", out);
                print_conj(out, p, c, &c->conj[d]);
            }
        }
        fputc('.', out);
        if (c->nvars) {
            fputs("   // ", out);
            for (int v = 0; v < c->nvars; v++)
                fprintf(out, "%s%s: %s", v ? ", " : "", c->var_names[v],
                        c->var_types[v] >= 0 ? p->types[c->var_types[v]].name : "?");
        }
        fputc('\n', out);
    }
    for (int s = 0; s < p->nstrata; s++) {
        const rfx_stratum *st = &p->strata[s];
        fprintf(out, "// stratum %d%s:", s, st->recursive ? " (recursive)" : "");
        for (int i = 0; i < st->nrels; i++)
            fprintf(out, " %s", p->rels[st->rels[i]].name);
        fputc('\n', out);
    }
}
