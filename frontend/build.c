/* build.c: AST construction called from the grammar's one-line actions. */
#include "parse_ctx.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

rfx_loc rfx_loc_of(RFX_YYLTYPE l)
{
    return (rfx_loc){l.first_line, l.first_column};
}

void rfx_parse_error(rfx_parse_ctx *ctx, RFX_YYLTYPE loc, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    rfx_diag_error(ctx->diag, rfx_loc_of(loc), "%s", buf);
}

void *rfx_ctx_alloc(rfx_parse_ctx *ctx, size_t n)
{
    void *p = rfx_arena_alloc(ctx->arena, n);
    if (!p)
        ctx->oom = true;
    return p;
}

#define ctx_alloc rfx_ctx_alloc

/* Returns NULL (after an error) for an invalid escape. */
char *rfx_parse_unescape(rfx_parse_ctx *ctx, const char *s, size_t n)
{
    char *out = ctx_alloc(ctx, n + 1), *o = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\') {
            *o++ = s[i];
            continue;
        }
        switch (s[++i]) {
        case 'n': *o++ = '\n'; break;
        case 't': *o++ = '\t'; break;
        case 'r': *o++ = '\r'; break;
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '\'': *o++ = '\''; break;
        default: {
            RFX_YYLTYPE l = {ctx->line, ctx->col, ctx->line, ctx->col};
            rfx_parse_error(ctx, l, "unknown escape sequence '\\%c' in string", s[i]);
            return NULL;
        }
        }
    }
    *o = 0;
    return out;
}

void rfx_plist_push(rfx_parse_ctx *ctx, rfx_plist *l, void *item)
{
    if (l->n == l->cap) {
        int nc = l->cap ? l->cap * 2 : 4;
        void **items = ctx_alloc(ctx, (size_t)nc * sizeof(void *));
        if (!items)
            return;
        if (l->n)
            rfx_memcpy(items, l->items, (size_t)l->n * sizeof(void *));
        l->items = items;
        l->cap = nc;
    }
    l->items[l->n++] = item;
}

rfx_plist *rfx_mk_list(rfx_parse_ctx *ctx, void *first)
{
    rfx_plist *l = ctx_alloc(ctx, sizeof *l);
    if (l)
        rfx_plist_push(ctx, l, first);
    return l;
}

rfx_plist *rfx_list_add(rfx_parse_ctx *ctx, rfx_plist *l, void *item)
{
    if (l)
        rfx_plist_push(ctx, l, item);
    return l;
}

rfx_expr *rfx_mk_expr(rfx_parse_ctx *ctx, rfx_expr_kind kind, RFX_YYLTYPE loc)
{
    rfx_expr *e = ctx_alloc(ctx, sizeof *e);
    if (!e) {
        static rfx_expr dummy;  /* keeps the parser going after OOM; ctx->oom reports it */
        return &dummy;
    }
    e->kind = kind;
    e->loc = rfx_loc_of(loc);
    e->type = -1;
    return e;
}

rfx_expr *rfx_mk_var(rfx_parse_ctx *ctx, const char *name, RFX_YYLTYPE loc)
{
    rfx_expr *e = rfx_mk_expr(ctx, RFX_E_VAR, loc);
    e->u.v.name = name;
    e->u.v.var = -1;
    return e;
}

rfx_expr *rfx_mk_int(rfx_parse_ctx *ctx, int64_t v, bool uns, RFX_YYLTYPE loc)
{
    rfx_expr *e = rfx_mk_expr(ctx, uns ? RFX_E_UNSIGNED : RFX_E_INT, loc);
    e->u.ival = v;
    return e;
}

rfx_expr *rfx_mk_bits(rfx_parse_ctx *ctx, int64_t v, RFX_YYLTYPE loc)
{
    rfx_expr *e = rfx_mk_int(ctx, v, false, loc);
    e->bits = true;
    e->bits64 = (uint64_t)v > UINT32_MAX;
    return e;
}

rfx_expr *rfx_mk_all_ones(rfx_parse_ctx *ctx, RFX_YYLTYPE loc)
{
    rfx_expr *e = rfx_mk_bits(ctx, -1, loc);   /* -1: every bit of 32 or of 64 as typed */
    e->bits64 = false;
    return e;
}

rfx_expr *rfx_fold_binop(rfx_parse_ctx *ctx, rfx_binop op, rfx_expr *first, rfx_plist *rest, RFX_YYLTYPE loc)
{
    rfx_expr *e = first;
    for (int i = 0; rest && i < rest->n; i++)
        e = rfx_mk_binop(ctx, op, e, rest->items[i], loc);
    return e;
}

rfx_expr *rfx_mk_float(rfx_parse_ctx *ctx, double v, RFX_YYLTYPE loc)
{
    rfx_expr *e = rfx_mk_expr(ctx, RFX_E_FLOAT, loc);
    e->u.fval = v;
    return e;
}

rfx_expr *rfx_mk_string(rfx_parse_ctx *ctx, uint32_t sym, RFX_YYLTYPE loc)
{
    rfx_expr *e = rfx_mk_expr(ctx, RFX_E_STRING, loc);
    e->u.sym = sym;
    return e;
}

/* An operator over operands this deep is refused once: every later pass walks expressions
 * recursively, so a chain of a million `+` would overflow the stack. */
static bool too_deep(rfx_parse_ctx *ctx, int depth, RFX_YYLTYPE loc)
{
    if (depth <= RFX_MAX_EXPR_DEPTH)
        return false;
    if (!ctx->expr_too_deep)
        rfx_parse_error(ctx, loc, "expression nests too deeply (over %d operators on one path)", RFX_MAX_EXPR_DEPTH);
    ctx->expr_too_deep = true;
    return true;
}

rfx_expr *rfx_mk_binop(rfx_parse_ctx *ctx, rfx_binop op, rfx_expr *l, rfx_expr *r, RFX_YYLTYPE loc)
{
    int depth = 1 + (l->depth > r->depth ? l->depth : r->depth);
    if (too_deep(ctx, depth, loc))
        return l;
    rfx_expr *e = rfx_mk_expr(ctx, RFX_E_BINOP, loc);
    e->depth = depth;
    e->u.bin.op = op;
    e->u.bin.lhs = l;
    e->u.bin.rhs = r;
    return e;
}

rfx_expr *rfx_mk_neg(rfx_parse_ctx *ctx, rfx_expr *x, RFX_YYLTYPE loc)
{
    /* fold `-literal` so that -2147483648 and negative facts are plain constants */
    if (x->kind == RFX_E_INT) {
        x->u.ival = -x->u.ival;
        x->loc = rfx_loc_of(loc);
        return x;
    }
    if (x->kind == RFX_E_FLOAT) {
        x->u.fval = -x->u.fval;
        x->loc = rfx_loc_of(loc);
        return x;
    }
    if (too_deep(ctx, x->depth + 1, loc))
        return x;
    rfx_expr *e = rfx_mk_expr(ctx, RFX_E_NEG, loc);
    e->depth = x->depth + 1;
    e->u.bin.lhs = x;
    return e;
}

rfx_expr *rfx_mk_counter(rfx_parse_ctx *ctx, RFX_YYLTYPE loc)
{
    rfx_diag_warning(ctx->diag, rfx_loc_of(loc), "'$' is deprecated: write autoinc()");
    return rfx_mk_fn(ctx, RFX_FN_AUTOINC, NULL, loc);
}

rfx_expr *rfx_mk_fn(rfx_parse_ctx *ctx, rfx_functor fn, rfx_plist *args, RFX_YYLTYPE loc)
{
    /* fewest and most arguments of each functor (cat: any number from one) */
    static const int lo[RFX_FN_COUNT] = {1, 1, 3, 1, 2, 2, 1, 1, 1, 1, 1, 2, 0, 0, 0, 1, 0, 1, 1, 1, 1, 2, 2};
    static const int hi[RFX_FN_COUNT] = {1 << 30, 1, 3, 1, 2, 2, 1, 1, 1, 1, 1, 3, 0, RFX_MAX_RECORD_FIELDS, 0, 1, 0,
                                         1, 1, 1, 1, 2, 2};
    int n = args ? args->n : 0;
    if (n < lo[fn] || n > hi[fn]) {
        if (fn == RFX_FN_RECORD)
            rfx_parse_error(ctx, loc, "a record has at most %d fields, given %d", RFX_MAX_RECORD_FIELDS, n);
        else if (lo[fn] == hi[fn])
            rfx_parse_error(ctx, loc, "'%s' takes %d argument%s, given %d", rfx_functor_name(fn), lo[fn],
                            lo[fn] == 1 ? "" : "s", n);
        else
            rfx_parse_error(ctx, loc, "'%s' takes %d to %d arguments, given %d", rfx_functor_name(fn), lo[fn],
                            hi[fn], n);
    }
    int depth = 0;
    for (int i = 0; i < n; i++)
        if (((rfx_expr *)args->items[i])->depth > depth)
            depth = ((rfx_expr *)args->items[i])->depth;
    if (too_deep(ctx, depth + 1, loc))
        return n ? args->items[0] : rfx_mk_int(ctx, 0, false, loc);
    rfx_expr *e = rfx_mk_expr(ctx, RFX_E_FN, loc);
    e->depth = depth + 1;
    e->u.fn.fn = fn;
    e->u.fn.nargs = n < lo[fn] || n > hi[fn] ? 0 : n;
    e->u.fn.args = args ? (rfx_expr **)args->items : NULL;
    e->u.fn.cast = -1;
    return e;
}

rfx_expr *rfx_mk_as(rfx_parse_ctx *ctx, rfx_expr *x, const char *type, RFX_YYLTYPE loc)
{
    rfx_expr *e = rfx_mk_fn(ctx, RFX_FN_AS, rfx_mk_list(ctx, x), loc);
    if (e->kind == RFX_E_FN)
        e->u.fn.cast_name = type;
    return e;
}

rfx_body *rfx_mk_fn_lit(rfx_parse_ctx *ctx, rfx_functor fn, rfx_plist *args, bool negated, RFX_YYLTYPE loc)
{
    /* fn(...) = 1, or = 0 negated: match of an invalid pattern gives 2, so that neither
     * holds, as in Soufflé */
    return rfx_mk_cmp_body(ctx, RFX_EQ, rfx_mk_fn(ctx, fn, args, loc), rfx_mk_int(ctx, negated ? 0 : 1, false, loc), loc);
}

rfx_expr *rfx_mk_agg(rfx_parse_ctx *ctx, rfx_aggfn fn, rfx_expr *target, rfx_body *body, RFX_YYLTYPE loc)
{
    int depth = 1 + (target ? target->depth : 0);
    if (target && too_deep(ctx, depth, loc))
        return target;
    rfx_expr *e = rfx_mk_expr(ctx, RFX_E_AGG, loc);
    e->depth = depth;
    e->u.agg.fn = fn;
    e->u.agg.target = target;
    e->u.agg.body = body;
    return e;
}

rfx_atom *rfx_mk_atom(rfx_parse_ctx *ctx, const char *name, rfx_plist *args, RFX_YYLTYPE loc)
{
    rfx_atom *a = ctx_alloc(ctx, sizeof *a);
    if (!a) {
        static rfx_atom dummy;
        return &dummy;
    }
    a->name = name;
    a->rel = -1;
    a->loc = rfx_loc_of(loc);
    if (args) {
        a->nargs = args->n;
        a->args = (rfx_expr **)args->items;
    }
    return a;
}

static rfx_body *mk_body(rfx_parse_ctx *ctx, rfx_body_kind kind)
{
    rfx_body *b = ctx_alloc(ctx, sizeof *b);
    if (!b) {
        static rfx_body dummy;
        return &dummy;
    }
    b->kind = kind;
    return b;
}

rfx_body *rfx_mk_lit_body(rfx_parse_ctx *ctx, rfx_lit_kind kind, rfx_atom *a, RFX_YYLTYPE loc)
{
    rfx_body *b = mk_body(ctx, RFX_B_LIT);
    rfx_lit *l = ctx_alloc(ctx, sizeof *l);
    if (!l)
        return b;
    l->kind = kind;
    l->loc = rfx_loc_of(loc);
    if (a)
        l->atom = *a;
    b->lit = l;
    return b;
}

rfx_body *rfx_mk_atom_body(rfx_parse_ctx *ctx, rfx_atom *a)
{
    RFX_YYLTYPE l = {a->loc.line, a->loc.col, a->loc.line, a->loc.col};
    return rfx_mk_lit_body(ctx, RFX_L_ATOM, a, l);
}

rfx_body *rfx_mk_cmp_body(rfx_parse_ctx *ctx, rfx_cmpop op, rfx_expr *lhs, rfx_expr *rhs, RFX_YYLTYPE loc)
{
    rfx_body *b = rfx_mk_lit_body(ctx, RFX_L_CMP, NULL, loc);
    if (b->lit) {
        b->lit->cmp = op;
        b->lit->lhs = lhs;
        b->lit->rhs = rhs;
    }
    return b;
}

rfx_body *rfx_mk_bool_body(rfx_parse_ctx *ctx, rfx_body_kind kind, rfx_body *l, rfx_body *r)
{
    rfx_body *b = mk_body(ctx, kind);
    b->lhs = l;
    b->rhs = r;
    return b;
}

void rfx_add_type(rfx_parse_ctx *ctx, const char *name, const char *base, bool subtype,
                  RFX_YYLTYPE loc, RFX_YYLTYPE base_loc)
{
    rfx_type_decl *t = ctx_alloc(ctx, sizeof *t);
    if (!t)
        return;
    *t = (rfx_type_decl){.name = name, .base = base, .subtype = subtype, .loc = rfx_loc_of(loc),
                         .base_loc = rfx_loc_of(base_loc)};
    rfx_plist_push(ctx, &ctx->types, t);
}

void rfx_add_union_type(rfx_parse_ctx *ctx, const char *name, rfx_plist *members, RFX_YYLTYPE loc)
{
    rfx_type_decl *t = ctx_alloc(ctx, sizeof *t);
    rfx_plist *others = ctx_alloc(ctx, sizeof *others);
    if (!t || !others || !members || members->n < 4)
        return;
    /* members holds (name, location) pairs: the first is the base, the rest the others */
    for (int i = 2; i < members->n; i++)
        rfx_plist_push(ctx, others, members->items[i]);
    *t = (rfx_type_decl){.name = name, .base = members->items[0], .loc = rfx_loc_of(loc),
                         .base_loc = *(rfx_loc *)members->items[1], .others = others};
    rfx_plist_push(ctx, &ctx->types, t);
}

/* Appends item to l, making the list when l is NULL. */
static rfx_plist *list_push(rfx_parse_ctx *ctx, rfx_plist *l, void *item)
{
    return l ? rfx_list_add(ctx, l, item) : rfx_mk_list(ctx, item);
}

static rfx_loc *located(rfx_parse_ctx *ctx, RFX_YYLTYPE loc)
{
    rfx_loc *where = ctx_alloc(ctx, sizeof *where);
    if (where)
        *where = rfx_loc_of(loc);
    return where;
}

rfx_plist *rfx_mk_attr(rfx_parse_ctx *ctx, rfx_plist *l, const char *name, const char *type,
                       RFX_YYLTYPE loc)
{
    /* attributes are kept as triples: name, type, location */
    l = list_push(ctx, l, (void *)name);
    rfx_list_add(ctx, l, (void *)type);
    rfx_list_add(ctx, l, located(ctx, loc));
    return l;
}

void rfx_add_decl(rfx_parse_ctx *ctx, const char *name, rfx_plist *attrs, RFX_YYLTYPE loc)
{
    rfx_rel_decl *d = ctx_alloc(ctx, sizeof *d);
    if (!d)
        return;
    d->name = name;
    d->loc = rfx_loc_of(loc);
    d->nattrs = attrs ? attrs->n / 3 : 0;
    d->attr_names = ctx_alloc(ctx, sizeof(char *) * (size_t)(d->nattrs + 1));
    d->attr_types = ctx_alloc(ctx, sizeof(char *) * (size_t)(d->nattrs + 1));
    d->attr_locs = ctx_alloc(ctx, sizeof(rfx_loc) * (size_t)(d->nattrs + 1));
    if (!d->attr_names || !d->attr_types || !d->attr_locs)
        return;
    for (int i = 0; i < d->nattrs; i++) {
        d->attr_names[i] = attrs->items[3 * i];
        d->attr_types[i] = attrs->items[3 * i + 1];
        rfx_loc *where = attrs->items[3 * i + 2];
        d->attr_locs[i] = where ? *where : d->loc;
    }
    rfx_plist_push(ctx, &ctx->decls, d);
}

rfx_plist *rfx_mk_name_list(rfx_parse_ctx *ctx, rfx_plist *l, const char *name, RFX_YYLTYPE loc)
{
    /* kept as pairs: name, location */
    l = list_push(ctx, l, (void *)name);
    rfx_list_add(ctx, l, located(ctx, loc));
    return l;
}

void rfx_add_decls(rfx_parse_ctx *ctx, rfx_plist *names, rfx_plist *attrs, rfx_plist *quals, rfx_plist *choice)
{
    for (int i = 0; names && i + 1 < names->n; i += 2) {
        const char *name = names->items[i];
        rfx_loc *where = names->items[i + 1];
        RFX_YYLTYPE loc = {where ? where->line : 0, where ? where->col : 0, 0, 0};
        rfx_add_decl(ctx, name, attrs, loc);
        rfx_rel_decl *decl = ctx->decls.n ? ctx->decls.items[ctx->decls.n - 1] : NULL;
        if (decl)
            decl->choice = choice;
        for (int q = 0; quals && q + 1 < quals->n; q += 2) {
            const char *qual = quals->items[q];
            rfx_loc *ql = quals->items[q + 1];
            RFX_YYLTYPE qloc = {ql ? ql->line : 0, ql ? ql->col : 0, 0, 0};
            /* the deprecated directive qualifiers are the directives; eqrel closes what the
             * relation holds (the plan's EQREL commands; its two columns checked here); the
             * other representations are kept for the checks subsumption makes; inlining and
             * magic-set hints leave the answers as they are */
            unsigned kind = strcmp(qual, "input") == 0 ? RFX_REL_INPUT : strcmp(qual, "output") == 0 ? RFX_REL_OUTPUT
                          : strcmp(qual, "printsize") == 0 ? RFX_REL_PRINTSIZE : 0;
            bool repr = strcmp(qual, "btree") == 0 || strcmp(qual, "brie") == 0 || strcmp(qual, "btree_delete") == 0 ||
                        strcmp(qual, "eqrel") == 0;
            if (kind) {
                ctx->cur_kind = kind;
                ctx->cur_opts.n = 0;
                rfx_add_directive(ctx, name, qloc);
            } else if (strcmp(qual, "overridable") == 0) {
                if (decl)
                    decl->overridable = true;
            } else if (repr && decl && decl->repr) {
                rfx_parse_error(ctx, qloc, "'%s': its representation is given already ('%s')", name, decl->repr);
            } else if (repr && decl) {
                decl->repr = qual;
                decl->repr_loc = rfx_loc_of(qloc);
                if (strcmp(qual, "eqrel") != 0)
                    continue;
                if (decl->nattrs != 2 || strcmp(decl->attr_types[0], decl->attr_types[1]) != 0)
                    rfx_parse_error(ctx, qloc, "an eqrel relation has two attributes of one type ('%s' has %d%s)",
                                    name, decl->nattrs, decl->nattrs == 2 ? " of different types" : "");
            }
        }
    }
}

void rfx_add_opt(rfx_parse_ctx *ctx, const char *key, const char *value)
{
    rfx_io_opt *o = ctx_alloc(ctx, sizeof *o);
    if (!o)
        return;
    o->key = key;
    o->value = value;
    rfx_plist_push(ctx, &ctx->cur_opts, o);
}

void rfx_add_directive(rfx_parse_ctx *ctx, const char *rel, RFX_YYLTYPE loc)
{
    rfx_directive *d = ctx_alloc(ctx, sizeof *d);
    if (!d)
        return;
    d->kind = ctx->cur_kind;
    d->rel = rel;
    d->loc = rfx_loc_of(loc);
    d->nopts = ctx->cur_opts.n;
    d->opts = ctx_alloc(ctx, sizeof(rfx_io_opt) * (size_t)(d->nopts + 1));
    for (int i = 0; d->opts && i < d->nopts; i++)
        d->opts[i] = *(rfx_io_opt *)ctx->cur_opts.items[i];
    ctx->cur_opts.n = 0;
    rfx_plist_push(ctx, &ctx->directives, d);
}

/* ---- copies, for clauses with several heads and components' instances: the checker
 * numbers variables in place, so each clause needs a body of its own */
rfx_expr *rfx_clone_expr(rfx_parse_ctx *ctx, const rfx_expr *e)
{
    if (!e)
        return NULL;
    rfx_expr *c = ctx_alloc(ctx, sizeof *c);
    if (!c)
        return (rfx_expr *)e;
    *c = *e;
    if (e->kind == RFX_E_BINOP || e->kind == RFX_E_NEG) {
        c->u.bin.lhs = rfx_clone_expr(ctx, e->u.bin.lhs);
        c->u.bin.rhs = rfx_clone_expr(ctx, e->u.bin.rhs);
    } else if (e->kind == RFX_E_AGG) {
        c->u.agg.target = rfx_clone_expr(ctx, e->u.agg.target);
        c->u.agg.body = rfx_clone_body(ctx, e->u.agg.body);
    } else if (e->kind == RFX_E_FN && e->u.fn.nargs) {
        c->u.fn.args = ctx_alloc(ctx, sizeof(rfx_expr *) * (size_t)e->u.fn.nargs);
        if (!c->u.fn.args)
            return c;
        for (int i = 0; i < e->u.fn.nargs; i++)
            c->u.fn.args[i] = rfx_clone_expr(ctx, e->u.fn.args[i]);
    }
    return c;
}

void rfx_clone_atom(rfx_parse_ctx *ctx, rfx_atom *dst, const rfx_atom *src)
{
    *dst = *src;
    dst->args = ctx_alloc(ctx, sizeof(rfx_expr *) * (size_t)(src->nargs + 1));
    if (!dst->args) {
        dst->args = src->args;
        return;
    }
    for (int i = 0; i < src->nargs; i++)
        dst->args[i] = rfx_clone_expr(ctx, src->args[i]);
}

rfx_body *rfx_clone_body(rfx_parse_ctx *ctx, const rfx_body *b)
{
    if (!b)
        return NULL;
    rfx_body *c = ctx_alloc(ctx, sizeof *c);
    if (!c)
        return (rfx_body *)b;
    *c = *b;
    c->lhs = rfx_clone_body(ctx, b->lhs);
    c->rhs = rfx_clone_body(ctx, b->rhs);
    if (b->lit) {
        rfx_lit *l = ctx_alloc(ctx, sizeof *l);
        if (!l)
            return c;
        *l = *b->lit;
        if (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG)
            rfx_clone_atom(ctx, &l->atom, &b->lit->atom);
        l->lhs = rfx_clone_expr(ctx, b->lit->lhs);
        l->rhs = rfx_clone_expr(ctx, b->lit->rhs);
        c->lit = l;
    }
    return c;
}

void rfx_add_clauses(rfx_parse_ctx *ctx, rfx_plist *heads, rfx_body *body, RFX_YYLTYPE loc)
{
    for (int i = 0; heads && i < heads->n; i++) {
        rfx_atom *h = heads->items[i];
        RFX_YYLTYPE hl = {h->loc.line, h->loc.col, h->loc.line, h->loc.col};
        rfx_add_clause(ctx, h, i ? rfx_clone_body(ctx, body) : body, i ? hl : loc);
    }
}

/* `!(body)`: the negation pushed to the literals (De Morgan): a disjunction of literals
 * becomes a conjunction of their negations, a conjunction a disjunction. */
rfx_body *rfx_mk_not_body(rfx_parse_ctx *ctx, rfx_body *b)
{
    if (!b)
        return b;
    if (b->kind != RFX_B_LIT)
        return rfx_mk_bool_body(ctx, b->kind == RFX_B_AND ? RFX_B_OR : RFX_B_AND, rfx_mk_not_body(ctx, b->lhs),
                                rfx_mk_not_body(ctx, b->rhs));
    rfx_lit *l = b->lit;
    if (!l)
        return b;
    static const rfx_cmpop inverse[] = {[RFX_LT] = RFX_GE, [RFX_LE] = RFX_GT, [RFX_GT] = RFX_LE,
                                        [RFX_GE] = RFX_LT, [RFX_EQ] = RFX_NE, [RFX_NE] = RFX_EQ};
    switch (l->kind) {
    case RFX_L_ATOM: l->kind = RFX_L_NEG; break;
    case RFX_L_NEG: l->kind = RFX_L_ATOM; break;
    case RFX_L_CMP: l->cmp = inverse[l->cmp]; break;
    case RFX_L_TRUE: l->kind = RFX_L_FALSE; break;
    case RFX_L_FALSE: l->kind = RFX_L_TRUE; break;
    }
    return b;
}

void rfx_add_clause(rfx_parse_ctx *ctx, rfx_atom *head, rfx_body *body, RFX_YYLTYPE loc)
{
    rfx_clause *c = ctx_alloc(ctx, sizeof *c);
    if (!c)
        return;
    c->head = *head;
    c->body = body;
    c->loc = rfx_loc_of(loc);
    rfx_plist_push(ctx, &ctx->clauses, c);
}

void rfx_add_functor(rfx_parse_ctx *ctx, const char *name, rfx_plist *params, const char *ret, bool stateful,
                     RFX_YYLTYPE loc)
{
    rfx_functor_text *f = ctx_alloc(ctx, sizeof *f);
    if (!f)
        return;
    *f = (rfx_functor_text){.name = name, .ret = ret, .params = params, .stateful = stateful, .loc = rfx_loc_of(loc)};
    rfx_plist_push(ctx, &ctx->functors, f);
}

rfx_expr *rfx_mk_user_fn(rfx_parse_ctx *ctx, const char *name, rfx_plist *args, RFX_YYLTYPE loc)
{
    int n = args ? args->n : 0, depth = 1;
    for (int i = 0; i < n; i++)
        if (((rfx_expr *)args->items[i])->depth + 1 > depth)
            depth = ((rfx_expr *)args->items[i])->depth + 1;
    if (too_deep(ctx, depth, loc))
        return n ? args->items[0] : rfx_mk_int(ctx, 0, false, loc);
    rfx_expr *e = rfx_mk_expr(ctx, RFX_E_FN, loc);
    e->depth = depth;
    e->u.fn.fn = RFX_FN_USER;
    e->u.fn.cast_name = name;
    e->u.fn.cast = -1;
    e->u.fn.field = -1;
    e->u.fn.nargs = n;
    e->u.fn.args = ctx_alloc(ctx, sizeof(rfx_expr *) * (size_t)(n + 1));
    for (int i = 0; e->u.fn.args && i < n; i++)
        e->u.fn.args[i] = args->items[i];
    if (!e->u.fn.args)
        e->u.fn.nargs = 0;
    return e;
}

/* Names each `_` of e, as Soufflé does for a dominated atom (its copy is the head). */
static void name_anonymous(rfx_parse_ctx *ctx, rfx_expr *e)
{
    if (e->kind == RFX_E_ANON) {
        char *name = ctx_alloc(ctx, 32);
        if (!name)
            return;
        snprintf(name, 32, "_<unnamed %d>", ++ctx->unnamed);
        e->kind = RFX_E_VAR;
        e->u.v.name = name;
        e->u.v.var = -1;
        return;
    }
    for (int i = 0; i < rfx_expr_nkids(e); i++)
        name_anonymous(ctx, rfx_expr_kid(e, i));
}

bool rfx_expr_alike(const rfx_expr *a, const rfx_expr *b)
{
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case RFX_E_VAR: return strcmp(a->u.v.name, b->u.v.name) == 0;
    case RFX_E_INT: case RFX_E_UNSIGNED: return a->u.ival == b->u.ival && a->bits == b->bits;
    case RFX_E_FLOAT: return a->u.fval == b->u.fval;
    case RFX_E_STRING: return a->u.sym == b->u.sym;
    case RFX_E_ANON: case RFX_E_AGG: return false;
    case RFX_E_BINOP: case RFX_E_NEG:
        if (a->u.bin.op != b->u.bin.op)
            return false;
        break;
    case RFX_E_FN:
        if (a->u.fn.fn != b->u.fn.fn || a->u.fn.nargs != b->u.fn.nargs ||
            (a->u.fn.cast_name != b->u.fn.cast_name &&
             (!a->u.fn.cast_name || !b->u.fn.cast_name || strcmp(a->u.fn.cast_name, b->u.fn.cast_name) != 0)))
            return false;
        break;
    default:
        break;
    }
    for (int i = 0; i < rfx_expr_nkids(a); i++)
        if (!rfx_expr_alike(rfx_expr_kid(a, i), rfx_expr_kid(b, i)))
            return false;
    return true;
}

/* `differ ; a != b`, where a and b are not alike; two record literals of one arity differ
 * where some pair of their fields does (`[l1, u1] != [l2, u2]` would leave both untyped). */
static rfx_body *add_difference(rfx_parse_ctx *ctx, rfx_body *differ, const rfx_expr *a, const rfx_expr *b,
                                RFX_YYLTYPE loc)
{
    if (rfx_expr_alike(a, b))
        return differ;
    if (a->kind == RFX_E_FN && b->kind == RFX_E_FN && a->u.fn.fn == RFX_FN_RECORD && b->u.fn.fn == RFX_FN_RECORD &&
        !a->u.fn.cast_name && !b->u.fn.cast_name && a->u.fn.nargs == b->u.fn.nargs) {
        for (int i = 0; i < a->u.fn.nargs; i++)
            differ = add_difference(ctx, differ, a->u.fn.args[i], b->u.fn.args[i], loc);
        return differ;
    }
    rfx_body *ne = rfx_mk_cmp_body(ctx, RFX_NE, rfx_clone_expr(ctx, a), rfx_clone_expr(ctx, b), loc);
    if (ne->lit)
        ne->lit->bitwise = true;   /* two tuples differ where a column's bits do */
    return differ ? rfx_mk_bool_body(ctx, RFX_B_OR, differ, ne) : ne;
}

/* Whether the conjunction body (its literals joined by `,` at the top) orders some column of
 * lt strictly against the same column of gt (`a < b` for lt's a and gt's b, either way
 * round): the two tuples then differ, and need no test that they do. */
static bool orders_apart(const rfx_body *body, const rfx_atom *lt, const rfx_atom *gt)
{
    if (!body)
        return false;
    if (body->kind == RFX_B_AND)
        return orders_apart(body->lhs, lt, gt) || orders_apart(body->rhs, lt, gt);
    const rfx_lit *l = body->kind == RFX_B_LIT ? body->lit : NULL;
    if (!l || l->kind != RFX_L_CMP || (l->cmp != RFX_LT && l->cmp != RFX_GT))
        return false;
    for (int i = 0; i < lt->nargs && i < gt->nargs; i++)
        if ((rfx_expr_alike(l->lhs, lt->args[i]) && rfx_expr_alike(l->rhs, gt->args[i])) ||
            (rfx_expr_alike(l->lhs, gt->args[i]) && rfx_expr_alike(l->rhs, lt->args[i])))
            return true;
    return false;
}

/* `lt <= gt :- body.`: the clause `lt :- lt, gt, (lt and gt differ), body.`, its first two
 * literals marked by role so that the plan reads each from the relation's part the
 * subsumption step compares (ra_ir/lower_program.c). The two atoms must differ somewhere
 * they are written differently: a tuple never subsumes itself, as in Soufflé (a body that
 * orders a column of one strictly against the other's says so already). */
void rfx_add_subsumption(rfx_parse_ctx *ctx, rfx_atom *lt, rfx_atom *gt, rfx_body *body, RFX_YYLTYPE loc)
{
    for (int i = 0; i < lt->nargs; i++)
        name_anonymous(ctx, lt->args[i]);
    RFX_YYLTYPE ll = {lt->loc.line, lt->loc.col, lt->loc.line, lt->loc.col};
    RFX_YYLTYPE gl = {gt->loc.line, gt->loc.col, gt->loc.line, gt->loc.col};
    rfx_atom *head = ctx_alloc(ctx, sizeof *head);
    if (!head)
        return;
    rfx_clone_atom(ctx, head, lt);
    rfx_body *dominated = rfx_mk_lit_body(ctx, RFX_L_ATOM, lt, ll);
    rfx_body *dominating = rfx_mk_lit_body(ctx, RFX_L_ATOM, gt, gl);
    if (!dominated->lit || !dominating->lit)
        return;
    dominated->lit->role = RFX_ROLE_DOMINATED;
    dominating->lit->role = RFX_ROLE_DOMINATING;
    rfx_body *differ = NULL;
    for (int i = 0; i < lt->nargs && i < gt->nargs; i++)
        differ = add_difference(ctx, differ, lt->args[i], gt->args[i], loc);
    if (!differ)
        differ = rfx_mk_lit_body(ctx, RFX_L_FALSE, NULL, loc);
    rfx_body *b = rfx_mk_bool_body(ctx, RFX_B_AND, dominated, dominating);
    if (!orders_apart(body, lt, gt))
        b = rfx_mk_bool_body(ctx, RFX_B_AND, b, differ);
    if (body)
        b = rfx_mk_bool_body(ctx, RFX_B_AND, b, body);
    rfx_add_clause(ctx, head, b, loc);
    rfx_clause *c = ctx->clauses.n ? ctx->clauses.items[ctx->clauses.n - 1] : NULL;
    if (c)
        c->subsumptive = true;
}

void rfx_add_record_type(rfx_parse_ctx *ctx, const char *name, rfx_plist *attrs, RFX_YYLTYPE loc)
{
    rfx_type_decl *t = ctx_alloc(ctx, sizeof *t);
    rfx_plist *fields = ctx_alloc(ctx, sizeof *fields);
    if (!t || !fields)
        return;
    /* attrs holds triples: name, type, location */
    for (int i = 0; attrs && i < attrs->n; i++)
        rfx_plist_push(ctx, fields, attrs->items[i]);
    if (fields->n / 3 > RFX_MAX_RECORD_FIELDS)
        rfx_parse_error(ctx, loc, "record type '%s' has %d fields; at most %d are supported", name, fields->n / 3,
                        RFX_MAX_RECORD_FIELDS);
    *t = (rfx_type_decl){.name = name, .base = "unsigned", .loc = rfx_loc_of(loc), .base_loc = rfx_loc_of(loc),
                         .fields = fields};
    rfx_plist_push(ctx, &ctx->types, t);
}

rfx_plist *rfx_mk_branch(rfx_parse_ctx *ctx, const char *name, rfx_plist *attrs, RFX_YYLTYPE loc)
{
    rfx_plist *l = rfx_mk_list(ctx, (void *)name);
    rfx_list_add(ctx, l, attrs);
    rfx_list_add(ctx, l, located(ctx, loc));
    if (attrs && attrs->n / 3 + 1 > RFX_MAX_RECORD_FIELDS)
        rfx_parse_error(ctx, loc, "branch '%s' has %d fields; at most %d are supported", name, attrs->n / 3,
                        RFX_MAX_RECORD_FIELDS - 1);
    return l;
}

rfx_plist *rfx_list_append(rfx_parse_ctx *ctx, rfx_plist *l, rfx_plist *more)
{
    for (int i = 0; l && more && i < more->n; i++)
        rfx_plist_push(ctx, l, more->items[i]);
    return l;
}

rfx_plist *rfx_mk_lattice_op(rfx_parse_ctx *ctx, const char *name, rfx_expr *e, RFX_YYLTYPE loc)
{
    rfx_plist *l = rfx_mk_list(ctx, (void *)name);
    rfx_list_add(ctx, l, e);
    rfx_list_add(ctx, l, located(ctx, loc));
    return l;
}

void rfx_add_lattice(rfx_parse_ctx *ctx, const char *type, rfx_plist *ops, RFX_YYLTYPE loc)
{
    rfx_lattice_text *t = ctx_alloc(ctx, sizeof *t);
    if (!t)
        return;
    *t = (rfx_lattice_text){.type = type, .ops = ops, .loc = rfx_loc_of(loc)};
    rfx_plist_push(ctx, &ctx->lattices, t);
}

const char *rfx_lattice_type_name(rfx_parse_ctx *ctx, const char *type)
{
    size_t n = strlen(type);
    char *s = ctx_alloc(ctx, n + 3);
    if (!s)
        return type;
    memcpy(s, type, n);
    memcpy(s + n, "<>", 3);
    return s;
}

void rfx_add_adt_type(rfx_parse_ctx *ctx, const char *name, rfx_plist *branches, RFX_YYLTYPE loc)
{
    rfx_type_decl *t = ctx_alloc(ctx, sizeof *t);
    if (!t || !branches)
        return;
    *t = (rfx_type_decl){.name = name, .base = "unsigned", .loc = rfx_loc_of(loc), .base_loc = rfx_loc_of(loc),
                         .branches = branches};
    rfx_plist_push(ctx, &ctx->types, t);
}

rfx_expr *rfx_mk_constructor(rfx_parse_ctx *ctx, const char *branch, rfx_plist *args, RFX_YYLTYPE loc)
{
    if (args && args->n + 1 > RFX_MAX_RECORD_FIELDS) {
        rfx_parse_error(ctx, loc, "'$%s' takes at most %d arguments", branch, RFX_MAX_RECORD_FIELDS - 1);
        args = NULL;
    }
    rfx_expr *e = rfx_mk_fn(ctx, RFX_FN_RECORD, args, loc);
    if (e->kind == RFX_E_FN) {
        e->u.fn.cast_name = branch;   /* the branch's number goes first when the checker finds it */
        e->u.fn.field = -1;
    }
    return e;
}

void rfx_add_bare_type(rfx_parse_ctx *ctx, const char *name, RFX_YYLTYPE loc)
{
    rfx_add_type(ctx, name, "symbol", true, loc, loc);
    rfx_diag_warning(ctx->diag, rfx_loc_of(loc), "'.type %s' without a definition is a subtype of symbol "
                     "(deprecated: write '.type %s <: symbol')", name, name);
}

void rfx_add_pragma(rfx_parse_ctx *ctx, uint32_t key, uint32_t value, RFX_YYLTYPE loc)
{
    rfx_pragma *pr = ctx_alloc(ctx, sizeof *pr);
    if (!pr)
        return;
    pr->key = rfx_sym_text(ctx, key);
    pr->value = value == UINT32_MAX ? NULL : rfx_sym_text(ctx, value);
    pr->loc = rfx_loc_of(loc);
    rfx_plist_push(ctx, &ctx->pragmas, pr);
}

void rfx_add_limitsize(rfx_parse_ctx *ctx, const char *rel, const char *key, int64_t n, RFX_YYLTYPE loc,
                       RFX_YYLTYPE key_loc)
{
    if (strcmp(key, "n") != 0) {
        rfx_parse_error(ctx, key_loc, "'.limitsize %s' takes n=<number of tuples>, not '%s'", rel, key);
        return;
    }
    /* a directive, so that components qualify its relation's name as any other's */
    unsigned kind = ctx->cur_kind;
    ctx->cur_kind = RFX_REL_LIMITSIZE;
    ctx->cur_opts.n = 0;
    rfx_add_opt(ctx, "n", rfx_int_text(ctx, n));
    rfx_add_directive(ctx, rel, loc);
    ctx->cur_kind = kind;
}

void *rfx_box_int(rfx_parse_ctx *ctx, int64_t v)
{
    int64_t *b = ctx_alloc(ctx, sizeof *b);
    if (b)
        *b = v;
    return b;
}

rfx_plist *rfx_mk_plan_order(rfx_parse_ctx *ctx, int64_t version, rfx_plist *atoms)
{
    rfx_plist *l = rfx_mk_list(ctx, rfx_box_int(ctx, version));
    for (int i = 0; l && atoms && i < atoms->n; i++)
        rfx_plist_push(ctx, l, atoms->items[i]);
    return l;
}

void rfx_add_plan(rfx_parse_ctx *ctx, rfx_plist *orders, RFX_YYLTYPE loc)
{
    rfx_clause *c = ctx->clauses.n ? ctx->clauses.items[ctx->clauses.n - 1] : NULL;
    if (!c || c->body == NULL) {
        rfx_parse_error(ctx, loc, "'.plan' follows no rule");
        return;
    }
    if (c->nplans) {   /* (rules between the two that failed to parse leave one rule before both) */
        rfx_parse_error(ctx, loc, "a second '.plan' for one rule");
        return;
    }
    if (!orders)
        return;
    c->plans = ctx_alloc(ctx, sizeof(rfx_plan_order) * (size_t)orders->n);
    if (!c->plans)
        return;
    for (int i = 0; i < orders->n; i++) {
        rfx_plist *o = orders->items[i];
        rfx_plan_order *po = &c->plans[c->nplans++];
        po->loc = rfx_loc_of(loc);
        po->version = o && o->items[0] ? (int)*(int64_t *)o->items[0] : 0;
        po->n = o ? o->n - 1 : 0;
        po->atoms = ctx_alloc(ctx, sizeof(int) * (size_t)(po->n + 1));
        for (int k = 0; po->atoms && k < po->n; k++)
            po->atoms[k] = o->items[k + 1] ? (int)*(int64_t *)o->items[k + 1] : 0;
    }
}

/* Maps a LogiQL type predicate (int32, string, ...) to an rfx type name, or NULL. */
static const char *logiql_type(const char *name)
{
    static const char *map[][2] = {
        {"int32", "number"}, {"int", "number"}, {"int64", "number64"},
        {"uint32", "unsigned"}, {"uint", "unsigned"}, {"uint64", "unsigned64"},
        {"float32", "float"}, {"float", "float"}, {"float64", "float64"}, {"decimal", "float"},
        {"string", "symbol"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(map[i][0], name) == 0)
            return map[i][1];
    return NULL;
}

static void collect_type_atoms(rfx_parse_ctx *ctx, rfx_body *b, rfx_plist *out)
{
    if (b->kind == RFX_B_AND) {
        collect_type_atoms(ctx, b->lhs, out);
        collect_type_atoms(ctx, b->rhs, out);
    } else if (b->kind == RFX_B_LIT && b->lit && b->lit->kind == RFX_L_ATOM) {
        rfx_plist_push(ctx, out, &b->lit->atom);
    } else {
        rfx_loc l = b->lit ? b->lit->loc : (rfx_loc){0, 0};
        rfx_diag_error(ctx->diag, l, "a LogiQL declaration `r(x) -> type(x).` lists type atoms only");
    }
}

/* `next(n, m) -> int32(n), int32(m).` declares next(n: number, m: number). */
void rfx_add_logiql_decl(rfx_parse_ctx *ctx, rfx_atom *head, rfx_body *types, RFX_YYLTYPE loc)
{
    rfx_plist atoms = {0};
    collect_type_atoms(ctx, types, &atoms);
    rfx_plist *attrs = NULL;
    RFX_YYLTYPE hl = loc;
    for (int i = 0; i < head->nargs; i++) {
        rfx_expr *arg = head->args[i];
        if (arg->kind != RFX_E_VAR) {
            rfx_diag_error(ctx->diag, arg->loc, "a LogiQL declaration's head takes variables only");
            return;
        }
        const char *type = NULL;
        const rfx_atom *first = NULL;
        for (int j = 0; j < atoms.n; j++) {
            rfx_atom *t = atoms.items[j];
            if (t->nargs == 1 && t->args[0]->kind == RFX_E_VAR &&
                strcmp(t->args[0]->u.v.name, arg->u.v.name) == 0) {
                const char *ty = logiql_type(t->name);
                if (!ty) {
                    rfx_diag_error(ctx->diag, t->loc, "unknown LogiQL type '%s' (known: int32, int64, uint32, uint64, float32, float64, string)", t->name);
                    return;
                }
                if (type && strcmp(type, ty) != 0) {
                    rfx_diag_error(ctx->diag, t->loc, "conflicting types for '%s' in LogiQL declaration of '%s': "
                                   "%s here, %s by '%s'", arg->u.v.name, head->name, ty, type, first->name);
                    return;
                }
                type = ty;
                first = t;
            }
        }
        if (!type) {
            rfx_diag_error(ctx->diag, arg->loc, "no type given for '%s' in LogiQL declaration of '%s'",
                           arg->u.v.name, head->name);
            return;
        }
        attrs = rfx_mk_attr(ctx, attrs, arg->u.v.name, type, hl);
    }
    rfx_add_decl(ctx, head->name, attrs, loc);
    if (ctx->decls.n)
        ((rfx_rel_decl *)ctx->decls.items[ctx->decls.n - 1])->logiql = true;
}

const char *rfx_sym_text(rfx_parse_ctx *ctx, uint32_t sym)
{
    return rfx_symtab_str(ctx->syms, sym);
}

const char *rfx_int_text(rfx_parse_ctx *ctx, int64_t v)
{
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%lld", (long long)v);
    return rfx_arena_strdup(ctx->arena, buf, (size_t)n);
}

void rfx_parse_linemark(rfx_parse_ctx *ctx, const char *text)
{
    RFX_YYLTYPE here = {ctx->line, 1, ctx->line, 1};
    if (!ctx->lines) {
        rfx_parse_error(ctx, here, ctx->no_preprocessor ? "preprocessor directive, and the preprocessor is off "
                                                          "(--no-preprocessor)"
                                                        : "preprocessor directive in a program read from memory "
                                                          "(only program files are preprocessed)");
        return;
    }
    /* `# 12 "file" flags` (or `#line 12 "file"`); other lines (#pragma) carry nothing */
    const char *p = text;
    while (*p == ' ' || *p == '\t' || *p == '#')
        p++;
    if (strncmp(p, "line", 4) == 0)
        p += 4;
    char *end;
    long line = strtol(p, &end, 10);
    if (end == p || line < 1 || line > INT32_MAX)
        return;
    p = end;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p != '"')
        return;
    const char *name = ++p;
    while (*p && *p != '"')
        p++;
    size_t n = (size_t)(p - name);
    const char *file;
    if (n == 7 && memcmp(name, "<stdin>", 7) == 0)
        file = ctx->file;
    else if (name[0] == '/' || name[0] == '<' || !ctx->dir[0]) {
        file = rfx_arena_strdup(ctx->arena, name, n);
    } else {   /* relative to the directory the preprocessor ran in */
        size_t dn = strlen(ctx->dir);
        char *f = ctx_alloc(ctx, dn + n + 2);
        if (f) {
            memcpy(f, ctx->dir, dn);
            f[dn] = '/';
            memcpy(f + dn + 1, name, n);
            f[dn + n + 1] = 0;
        }
        file = f;
    }
    if (!file) {
        ctx->oom = true;
        return;
    }
    rfx_linemap *m = ctx->lines;
    if (m->n == ctx->mark_cap) {
        int nc = ctx->mark_cap ? ctx->mark_cap * 2 : 16;
        rfx_linemark *nm = ctx_alloc(ctx, sizeof(rfx_linemark) * (size_t)nc);
        if (!nm)
            return;
        rfx_memcpy(nm, m->marks, sizeof(rfx_linemark) * (size_t)m->n);
        m->marks = nm;
        ctx->mark_cap = nc;
    }
    m->marks[m->n++] = (rfx_linemark){ctx->line + 1, (int)line, file};
}
