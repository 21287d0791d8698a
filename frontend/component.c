/* component.c: Soufflé's components, expanded in the front end.
 *
 * A `.comp` body is collected as written, a scope of items of its own (rfx_items). Each
 * `.init x = C<T>` of the top level is replaced by copies of C's items: first those of
 * its bases (less the rules of the relations C overrides), then the instances C makes
 * itself, then C's own items, C's type parameters bound to the instance's arguments.
 * Whatever the copies declare, relations and types, is then named `x.name`, and every
 * use of those names in them renamed alike; other names keep referring to what the
 * enclosing scope declares. A nested instance is renamed first (`y.r`), then with the
 * instance around it (`x.y.r`), as Soufflé names them. */
#include "parse_ctx.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* components inside components, or instances inside instances, at most this deep */
#define MAX_NESTING 100
/* items (declarations, rules, directives) all instances together copy, at most: nested
 * instances multiply (ten levels of two instances each make 1024 copies) */
#define MAX_COPIES 200000

static void swap_list(rfx_plist *a, rfx_plist *b)
{
    rfx_plist t = *a;
    *a = *b;
    *b = t;
}

/* The parser adds items to ctx's lists: they become the component's while its body is read. */
static void swap_items(rfx_parse_ctx *ctx, rfx_items *it)
{
    swap_list(&ctx->types, &it->types);
    swap_list(&ctx->decls, &it->decls);
    swap_list(&ctx->directives, &it->directives);
    swap_list(&ctx->clauses, &it->clauses);
    swap_list(&ctx->comps, &it->comps);
    swap_list(&ctx->inits, &it->inits);
    swap_list(&ctx->overrides, &it->overrides);
    swap_list(&ctx->lattices, &it->lattices);
}

rfx_comp_ref *rfx_mk_comp_ref(rfx_parse_ctx *ctx, const char *name, rfx_plist *args, RFX_YYLTYPE loc)
{
    rfx_comp_ref *r = rfx_ctx_alloc(ctx, sizeof *r);
    if (r)
        *r = (rfx_comp_ref){name, args, rfx_loc_of(loc)};
    return r;
}

void rfx_comp_open(rfx_parse_ctx *ctx, const char *name, rfx_plist *params, rfx_plist *bases, RFX_YYLTYPE loc)
{
    rfx_comp *c = rfx_ctx_alloc(ctx, sizeof *c);
    if (!c)
        return;
    *c = (rfx_comp){.name = name, .params = params, .parent = ctx->open, .loc = rfx_loc_of(loc)};
    for (int i = 0; bases && i < bases->n; i++)
        if (bases->items[i])
            rfx_plist_push(ctx, &c->bases, bases->items[i]);
    for (int i = 0; params && i + 2 < params->n; i += 2)
        for (int j = i + 2; j < params->n; j += 2)
            if (strcmp(params->items[i], params->items[j]) == 0)
                rfx_diag_error(ctx->diag, *(rfx_loc *)params->items[j + 1],
                               "type parameter '%s' of component '%s' is named twice", (char *)params->items[j], name);
    rfx_plist_push(ctx, &ctx->comps, c);
    swap_items(ctx, &c->items);
    ctx->open = c;
}

void rfx_comp_close(rfx_parse_ctx *ctx)
{
    rfx_comp *c = ctx->open;
    if (!c)
        return;
    swap_items(ctx, &c->items);
    ctx->open = c->parent;
}

void rfx_add_init(rfx_parse_ctx *ctx, const char *name, rfx_comp_ref *ref, RFX_YYLTYPE loc)
{
    rfx_comp_init *in = rfx_ctx_alloc(ctx, sizeof *in);
    if (!in || !ref)
        return;
    *in = (rfx_comp_init){name, *ref, rfx_loc_of(loc)};
    rfx_plist_push(ctx, &ctx->inits, in);
}

void rfx_add_override(rfx_parse_ctx *ctx, const char *name, RFX_YYLTYPE loc)
{
    if (!ctx->open) {
        rfx_parse_error(ctx, loc, "'.override %s' outside a component", name);
        return;
    }
    rfx_loc *where = rfx_ctx_alloc(ctx, sizeof *where);
    if (!where)
        return;
    *where = rfx_loc_of(loc);
    rfx_plist_push(ctx, &ctx->overrides, (void *)name);
    rfx_plist_push(ctx, &ctx->overrides, where);
}

/* ---- expansion ---------------------------------------------------------------------- */

/* A component's type parameters and what an instance gives them. */
typedef struct binding {
    int n;
    const char **formal, **actual;
} binding;

static const char *bound(const binding *b, const char *name)
{
    for (int i = 0; b && i < b->n; i++)
        if (strcmp(b->formal[i], name) == 0)
            return b->actual[i];
    return name;
}

typedef struct expander {
    rfx_parse_ctx *ctx;
    int depth;
    long copies;               /* items copied so far (MAX_COPIES) */
} expander;

/* The component `name` as seen from inside `scope` (NULL: the top level): declared in
 * it or in a scope around it, the nearest first. */
static rfx_comp *lookup(expander *x, const char *name, const rfx_comp *scope)
{
    for (const rfx_comp *s = scope;; s = s->parent) {
        const rfx_plist *l = s ? &s->items.comps : &x->ctx->comps;
        for (int i = 0; i < l->n; i++)
            if (strcmp(((rfx_comp *)l->items[i])->name, name) == 0)
                return l->items[i];
        if (!s)
            return NULL;
    }
}

/* `ref` names a component with its type arguments, spelled in the scope of `outer`. */
static rfx_comp *resolve(expander *x, const rfx_comp_ref *ref, const rfx_comp *scope, const binding *outer,
                         binding *b, const char *what)
{
    const char *name = bound(outer, ref->name);
    rfx_comp *c = lookup(x, name, scope);
    if (!c) {
        rfx_diag_error(x->ctx->diag, ref->loc, "unknown component '%s' %s", name, what);
        return NULL;
    }
    int np = c->params ? c->params->n / 2 : 0, na = ref->args ? ref->args->n / 2 : 0;
    if (np != na) {
        rfx_diag_error(x->ctx->diag, ref->loc, "component '%s' takes %d type parameter%s, given %d", name, np,
                       np == 1 ? "" : "s", na);
        return NULL;
    }
    b->n = np;
    b->formal = rfx_ctx_alloc(x->ctx, sizeof(char *) * (size_t)(np + 1));
    b->actual = rfx_ctx_alloc(x->ctx, sizeof(char *) * (size_t)(np + 1));
    if (!b->formal || !b->actual)
        return NULL;
    for (int i = 0; i < np; i++) {
        b->formal[i] = c->params->items[2 * i];
        b->actual[i] = bound(outer, ref->args->items[2 * i]);
    }
    return c;
}

/* A set of names (open addressing; the strings are borrowed). */
typedef struct name_set {
    size_t cap;                /* a power of two, or 0 */
    const char **slot;
} name_set;

/* The symbol table's hash of a name. */
static size_t name_hash(const char *s)
{
    return (size_t)rfx_fnv1a(RFX_FNV_INIT, s, strlen(s));
}

static bool name_set_has(const name_set *set, const char *name)
{
    if (!set->cap)
        return false;
    for (size_t i = name_hash(name) & (set->cap - 1);; i = (i + 1) & (set->cap - 1)) {
        if (!set->slot[i])
            return false;
        if (strcmp(set->slot[i], name) == 0)
            return true;
    }
}

/* The names of n items, each's name at `off` bytes into it. */
static void name_set_fill(expander *x, name_set *set, const rfx_plist *items, size_t off)
{
    set->cap = 0;
    set->slot = NULL;
    if (!items->n)
        return;
    size_t cap = 8;
    while (cap < 2 * (size_t)items->n)
        cap *= 2;
    set->slot = rfx_ctx_alloc(x->ctx, cap * sizeof(char *));
    if (!set->slot)
        return;
    set->cap = cap;
    for (int k = 0; k < items->n; k++) {
        const char *name = *(const char *const *)((const char *)items->items[k] + off);
        size_t i = name_hash(name) & (cap - 1);
        while (set->slot[i] && strcmp(set->slot[i], name) != 0)
            i = (i + 1) & (cap - 1);
        set->slot[i] = name;
    }
}

/* How names change in a copy: type parameters bound, and the names of `rels` and `types`
 * (what the copy declares) prefixed. */
typedef struct renaming {
    const binding *b;
    const char *prefix;        /* NULL: none */
    name_set rels, types, branches;   /* an ADT's branches are qualified as its type is */
} renaming;

static const char *qualify(expander *x, const char *prefix, const char *name)
{
    size_t np = strlen(prefix), nn = strlen(name);
    char *q = rfx_ctx_alloc(x->ctx, np + nn + 2);
    if (!q)
        return name;
    memcpy(q, prefix, np);
    q[np] = '.';
    memcpy(q + np + 1, name, nn + 1);
    return q;
}

static const char *type_name(expander *x, const renaming *r, const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n > 2 && strcmp(name + n - 2, "<>") == 0) {   /* `T<>`, a lattice attribute: T renamed */
        char *base = rfx_ctx_alloc(x->ctx, n - 1);
        if (!base)
            return name;
        memcpy(base, name, n - 2);
        base[n - 2] = 0;
        return rfx_lattice_type_name(x->ctx, type_name(x, r, base));
    }
    name = bound(r->b, name);
    return r->prefix && name_set_has(&r->types, name) ? qualify(x, r->prefix, name) : name;
}

static const char *rel_name(expander *x, const renaming *r, const char *name)
{
    return r->prefix && name_set_has(&r->rels, name) ? qualify(x, r->prefix, name) : name;
}

static void rename_body(expander *x, const renaming *r, rfx_body *b);

static void rename_expr(expander *x, const renaming *r, rfx_expr *e)
{
    if (!e)
        return;
    if (e->kind == RFX_E_AGG) {
        rename_expr(x, r, e->u.agg.target);
        rename_body(x, r, e->u.agg.body);
        return;
    }
    if (e->kind == RFX_E_FN && e->u.fn.fn == RFX_FN_AS && e->u.fn.cast_name)
        e->u.fn.cast_name = type_name(x, r, e->u.fn.cast_name);
    if (e->kind == RFX_E_FN && e->u.fn.fn == RFX_FN_RECORD && e->u.fn.cast_name && r->prefix &&
        name_set_has(&r->branches, e->u.fn.cast_name))   /* `$B(..)` of an ADT the instance declares */
        e->u.fn.cast_name = qualify(x, r->prefix, e->u.fn.cast_name);
    for (int i = 0; i < rfx_expr_nkids(e); i++)
        rename_expr(x, r, rfx_expr_kid(e, i));
}

static void rename_atom(expander *x, const renaming *r, rfx_atom *a)
{
    a->name = rel_name(x, r, a->name);
    for (int i = 0; i < a->nargs; i++)
        rename_expr(x, r, a->args[i]);
}

static void rename_body(expander *x, const renaming *r, rfx_body *b)
{
    if (!b)
        return;
    if (b->kind != RFX_B_LIT) {
        rename_body(x, r, b->lhs);
        rename_body(x, r, b->rhs);
        return;
    }
    rfx_lit *l = b->lit;
    if (!l)
        return;
    if (l->kind == RFX_L_ATOM || l->kind == RFX_L_NEG)
        rename_atom(x, r, &l->atom);
    rename_expr(x, r, l->lhs);
    rename_expr(x, r, l->rhs);
}

static const char *instance_of(expander *x, const char *prefix, const char *inner)
{
    return inner ? qualify(x, prefix, inner) : prefix;
}

/* Renames the items of `it` in place (they are the copies of one instance). */
static void rename_items(expander *x, const renaming *r, rfx_items *it)
{
    /* the uses first, then the declarations (the sets borrow the names from before) */
    for (int i = 0; i < it->types.n; i++) {
        rfx_type_decl *t = it->types.items[i];
        t->base = type_name(x, r, t->base);
        for (int k = 0; t->others && k < t->others->n; k += 2)
            t->others->items[k] = (void *)type_name(x, r, t->others->items[k]);
        for (int k = 1; t->fields && k < t->fields->n; k += 3)
            t->fields->items[k] = (void *)type_name(x, r, t->fields->items[k]);
        for (int b = 1; t->branches && b < t->branches->n; b += 3) {   /* an ADT's branches' fields */
            rfx_plist *f = t->branches->items[b];
            for (int k = 1; f && k < f->n; k += 3)
                f->items[k] = (void *)type_name(x, r, f->items[k]);
        }
    }
    for (int i = 0; i < it->decls.n; i++) {
        rfx_rel_decl *d = it->decls.items[i];
        for (int a = 0; a < d->nattrs; a++)
            d->attr_types[a] = type_name(x, r, d->attr_types[a]);
    }
    for (int i = 0; i < it->directives.n; i++) {
        rfx_directive *d = it->directives.items[i];
        d->rel = rel_name(x, r, d->rel);
    }
    for (int i = 0; i < it->lattices.n; i++) {   /* its type, constructors in its Bottom and Top */
        rfx_lattice_text *l = it->lattices.items[i];
        l->type = type_name(x, r, l->type);
        for (int k = 1; l->ops && k < l->ops->n; k += 3)
            rename_expr(x, r, l->ops->items[k]);
    }
    for (int i = 0; i < it->clauses.n; i++) {
        rfx_clause *c = it->clauses.items[i];
        rename_atom(x, r, &c->head);
        rename_body(x, r, c->body);
        if (r->prefix)
            c->instance = instance_of(x, r->prefix, c->instance);
    }
    if (!r->prefix)
        return;
    for (int i = 0; i < it->types.n; i++) {
        rfx_type_decl *t = it->types.items[i];
        t->name = qualify(x, r->prefix, t->name);
        for (int b = 0; t->branches && b < t->branches->n; b += 3)
            t->branches->items[b] = (void *)qualify(x, r->prefix, t->branches->items[b]);
    }
    for (int i = 0; i < it->decls.n; i++) {
        rfx_rel_decl *d = it->decls.items[i];
        d->name = qualify(x, r->prefix, d->name);
        d->instance = instance_of(x, r->prefix, d->instance);
    }
}

static void append(expander *x, rfx_plist *dst, const rfx_plist *src)
{
    for (int i = 0; i < src->n; i++)
        rfx_plist_push(x->ctx, dst, src->items[i]);
}

/* What src declares (types, relations, directives, lattices) appended to dst's. */
static void append_declarations(expander *x, rfx_items *dst, const rfx_items *src)
{
    append(x, &dst->types, &src->types);
    append(x, &dst->decls, &src->decls);
    append(x, &dst->directives, &src->directives);
    append(x, &dst->lattices, &src->lattices);
}

/* Copies of a component's own items, its type parameters bound (`b`). */
static void copy_own(expander *x, const rfx_comp *c, const binding *b, rfx_items *out)
{
    rfx_parse_ctx *ctx = x->ctx;
    x->copies += c->items.types.n + c->items.decls.n + c->items.directives.n + c->items.clauses.n;
    if (x->copies > MAX_COPIES) {
        if (x->copies - MAX_COPIES <= c->items.types.n + c->items.decls.n + c->items.directives.n + c->items.clauses.n)
            rfx_diag_error(ctx->diag, c->loc, "the instances of components make more than %d copies of "
                           "declarations and rules (instances nested in instances multiply)", MAX_COPIES);
        return;
    }
    rfx_items copy = {0};
    for (int i = 0; i < c->items.types.n; i++) {
        rfx_type_decl *t = rfx_ctx_alloc(ctx, sizeof *t);
        if (!t)
            return;
        *t = *(rfx_type_decl *)c->items.types.items[i];
        rfx_plist **lists[] = {&t->others, &t->fields, &t->branches};
        for (int k = 0; k < 3; k++)
            if (*lists[k]) {
                rfx_plist *o = rfx_ctx_alloc(ctx, sizeof *o);
                if (!o)
                    return;
                append(x, o, *lists[k]);
                *lists[k] = o;
            }
        for (int b = 1; t->branches && b < t->branches->n; b += 3)   /* each branch's fields too */
            if (t->branches->items[b]) {
                rfx_plist *o = rfx_ctx_alloc(ctx, sizeof *o);
                if (!o)
                    return;
                append(x, o, t->branches->items[b]);
                t->branches->items[b] = o;
            }
        rfx_plist_push(ctx, &copy.types, t);
    }
    for (int i = 0; i < c->items.decls.n; i++) {
        rfx_rel_decl *d = rfx_ctx_alloc(ctx, sizeof *d);
        if (!d)
            return;
        *d = *(rfx_rel_decl *)c->items.decls.items[i];
        const char **types = rfx_ctx_alloc(ctx, sizeof(char *) * (size_t)(d->nattrs + 1));
        if (!types)
            return;
        memcpy(types, d->attr_types, sizeof(char *) * (size_t)d->nattrs);
        d->attr_types = types;
        rfx_plist_push(ctx, &copy.decls, d);
    }
    for (int i = 0; i < c->items.directives.n; i++) {
        rfx_directive *d = rfx_ctx_alloc(ctx, sizeof *d);
        if (!d)
            return;
        *d = *(rfx_directive *)c->items.directives.items[i];
        rfx_plist_push(ctx, &copy.directives, d);
    }
    for (int i = 0; i < c->items.lattices.n; i++) {
        const rfx_lattice_text *src = c->items.lattices.items[i];
        rfx_lattice_text *l = rfx_ctx_alloc(ctx, sizeof *l);
        rfx_plist *ops = rfx_ctx_alloc(ctx, sizeof *ops);
        if (!l || !ops)
            return;
        *l = *src;
        for (int k = 0; src->ops && k < src->ops->n; k++)   /* (name, expression, location) */
            rfx_plist_push(ctx, ops, k % 3 == 1 ? rfx_clone_expr(ctx, src->ops->items[k]) : src->ops->items[k]);
        l->ops = ops;
        rfx_plist_push(ctx, &copy.lattices, l);
    }
    for (int i = 0; i < c->items.clauses.n; i++) {
        const rfx_clause *src = c->items.clauses.items[i];
        rfx_clause *k = rfx_ctx_alloc(ctx, sizeof *k);
        if (!k)
            return;
        *k = *src;
        rfx_clone_atom(ctx, &k->head, &src->head);
        k->body = rfx_clone_body(ctx, src->body);
        rfx_plist_push(ctx, &copy.clauses, k);
    }
    renaming r = {.b = b};
    rename_items(x, &r, &copy);
    append_declarations(x, out, &copy);
    append(x, &out->clauses, &copy.clauses);
}

static void instantiate(expander *x, const rfx_comp_init *in, const rfx_comp *scope, const binding *outer,
                        rfx_items *out);

/* Two instances of one name in a scope would declare every relation twice: said once. */
static void check_instance_names(expander *x, const rfx_plist *inits)
{
    for (int i = 0; i < inits->n; i++)
        for (int j = 0; j < i; j++) {
            const rfx_comp_init *a = inits->items[j], *b = inits->items[i];
            if (strcmp(a->name, b->name) == 0) {
                char where[300];
                rfx_diag_error(x->ctx->diag, b->loc, "instance '%s' is made twice (first at %s)", b->name,
                               rfx_diag_where(x->ctx->diag, a->loc, where, sizeof where));
                break;
            }
        }
}

/* The items a component stands for, unqualified: its bases', its instances', its own. */
static void collect(expander *x, rfx_comp *c, const binding *b, rfx_items *out, rfx_loc at)
{
    rfx_parse_ctx *ctx = x->ctx;
    if (x->copies > MAX_COPIES)   /* said once, in copy_own */
        return;
    if (c->expanding) {
        rfx_diag_error(ctx->diag, at, "component '%s' contains itself (through its bases or its instances)", c->name);
        return;
    }
    if (x->depth >= MAX_NESTING) {
        rfx_diag_error(ctx->diag, at, "components nest more than %d deep here", MAX_NESTING);
        return;
    }
    c->expanding = true;
    x->depth++;
    rfx_items bases = {0};
    for (int i = 0; i < c->bases.n; i++) {
        const rfx_comp_ref *ref = c->bases.items[i];
        binding nb = {0};
        char what[300];
        snprintf(what, sizeof what, "(a base of '%s')", c->name);
        rfx_comp *base = resolve(x, ref, c->parent, b, &nb, what);
        if (base)
            collect(x, base, &nb, &bases, ref->loc);
    }
    /* `.override r`: the bases' rules for r are dropped; r must be an overridable relation of a base */
    const rfx_plist *ov = &c->items.overrides;
    for (int k = 0; k + 1 < ov->n; k += 2) {
        const char *name = ov->items[k];
        const rfx_rel_decl *d = NULL;
        for (int i = 0; i < bases.decls.n && !d; i++)
            if (strcmp(((rfx_rel_decl *)bases.decls.items[i])->name, name) == 0)
                d = bases.decls.items[i];
        char where[300];
        if (!d)
            rfx_diag_error(ctx->diag, *(rfx_loc *)ov->items[k + 1],
                           "'.override %s': no base of component '%s' declares '%s'", name, c->name, name);
        else if (!d->overridable)
            rfx_diag_error(ctx->diag, *(rfx_loc *)ov->items[k + 1],
                           "'.override %s': '%s' is not declared overridable (at %s)", name, name,
                           rfx_diag_where(ctx->diag, d->loc, where, sizeof where));
    }
    append_declarations(x, out, &bases);
    for (int i = 0; i < bases.clauses.n; i++) {
        const rfx_clause *cl = bases.clauses.items[i];
        bool dropped = false;
        for (int k = 0; k + 1 < ov->n && !dropped; k += 2)
            dropped = strcmp(cl->head.name, ov->items[k]) == 0;
        if (!dropped)
            rfx_plist_push(ctx, &out->clauses, bases.clauses.items[i]);
    }
    check_instance_names(x, &c->items.inits);
    for (int i = 0; i < c->items.inits.n; i++)
        instantiate(x, c->items.inits.items[i], c, b, out);
    copy_own(x, c, b, out);
    x->depth--;
    c->expanding = false;
}

static void instantiate(expander *x, const rfx_comp_init *in, const rfx_comp *scope, const binding *outer,
                        rfx_items *out)
{
    binding b = {0};
    char what[300];
    snprintf(what, sizeof what, "in '.init %s'", in->name);
    rfx_comp *c = resolve(x, &in->ref, scope, outer, &b, what);
    if (!c)
        return;
    rfx_items sub = {0};
    collect(x, c, &b, &sub, in->ref.loc);
    renaming r = {.prefix = in->name};
    name_set_fill(x, &r.rels, &sub.decls, offsetof(rfx_rel_decl, name));
    name_set_fill(x, &r.types, &sub.types, offsetof(rfx_type_decl, name));
    rfx_plist branches = {0};   /* the ADTs' branch names, as items whose name is their first word */
    for (int i = 0; i < sub.types.n; i++) {
        const rfx_type_decl *t = sub.types.items[i];
        for (int b = 0; t->branches && b < t->branches->n; b += 3)
            rfx_plist_push(x->ctx, &branches, &t->branches->items[b]);
    }
    name_set_fill(x, &r.branches, &branches, 0);
    rename_items(x, &r, &sub);
    append_declarations(x, out, &sub);
    append(x, &out->clauses, &sub.clauses);
}

void rfx_components_expand(rfx_parse_ctx *ctx)
{
    if (ctx->open || !ctx->inits.n)
        return;
    expander x = {ctx, 0, 0};
    check_instance_names(&x, &ctx->inits);
    if (ctx->diag->errors)
        return;
    rfx_items out = {0};
    for (int i = 0; i < ctx->inits.n; i++)
        instantiate(&x, ctx->inits.items[i], NULL, NULL, &out);
    append(&x, &ctx->types, &out.types);
    append(&x, &ctx->decls, &out.decls);
    append(&x, &ctx->directives, &out.directives);
    append(&x, &ctx->lattices, &out.lattices);
    append(&x, &ctx->clauses, &out.clauses);
}
