/* sema_types.c: the checker's types: declarations (subtypes, aliases, unions) resolved to
 * their primitive kinds, and the subtype lattice Soufflé checks variables against. */
#include "sema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- declarations ------------------------------------------------------------------ */
int rfx_sema_find_type(const rfx_program *p, const char *name)
{
    for (int i = 0; i < p->ntypes; i++)
        if (strcmp(p->types[i].name, name) == 0)
            return i;
    return -1;
}

int rfx_sema_decimal_type(sema *s, int precision, int scale)
{
    char name[32];
    snprintf(name, sizeof name, "decimal(%d,%d)", precision, scale);
    return rfx_sema_type(s, name);
}

int rfx_sema_type(sema *s, const char *name)
{
    rfx_program *p = s->p;
    int t = rfx_sema_find_type(p, name);
    int prec, scale, end = 0;
    if (t >= 0 || sscanf(name, "decimal(%d,%d)%n", &prec, &scale, &end) != 2 || name[end] ||
        s->decimals >= RFX_DECIMAL_TYPES)
        return t;
    char *kept = salloc(s, strlen(name) + 1);
    if (!kept)
        return -1;
    strcpy(kept, name);
    s->decimals++;
    p->types[p->ntypes] = (rfx_type){.name = kept, .prim = RFX_DECIMAL, .parent = -1, .nfields = -1,
                                     .precision = prec, .scale = scale};
    return p->ntypes++;
}

/* Field types by name, from types[first] on; false after a message. */
static bool field_types(sema *s, const rfx_plist *attrs, int *types, const char **names, int first)
{
    bool ok = true;
    for (int f = 0; attrs && f < attrs->n / 3; f++) {
        const char *fname = attrs->items[3 * f], *ftype = attrs->items[3 * f + 1];
        names[first + f] = fname;
        types[first + f] = rfx_sema_type(s, ftype);
        if (types[first + f] < 0) {
            rfx_diag_error(s->d, *(rfx_loc *)attrs->items[3 * f + 2], "unknown type '%s' of field '%s'", ftype, fname);
            types[first + f] = 0;
            ok = false;
        }
    }
    return ok;
}

static int branch_order(const void *a, const void *b)
{
    return strcmp(((const rfx_branch *)a)->name, ((const rfx_branch *)b)->name);
}

/* An ADT's branches: their fields after the branch's number (an unsigned), names unique in
 * the program (a constructor names its ADT). */
static void adt_branches(sema *s, const rfx_type_decl *t)
{
    rfx_program *p = s->p;
    int ti = rfx_sema_find_type(p, t->name);
    if (ti < RFX_NPRIMS || !t->branches || p->types[ti].nbranches)
        return;
    int nb = t->branches->n / 3;
    rfx_branch *b = salloc(s, sizeof(rfx_branch) * (size_t)(nb + 1));
    if (!b)
        return;
    for (int k = 0; k < nb; k++) {
        const char *name = t->branches->items[3 * k];
        const rfx_plist *attrs = t->branches->items[3 * k + 1];
        rfx_loc at = *(rfx_loc *)t->branches->items[3 * k + 2];
        int nf = attrs ? attrs->n / 3 : 0;
        b[k] = (rfx_branch){.name = name, .nfields = nf, .fields = salloc(s, sizeof(int) * (size_t)(nf + 1)),
                            .field_names = salloc(s, sizeof(char *) * (size_t)(nf + 1)), .payload = -1};
        if (!b[k].fields || !b[k].field_names)
            return;
        b[k].fields[0] = RFX_UNSIGNED;   /* the types 0..3 are the primitives, in rfx_prim's order */
        b[k].field_names[0] = "$branch";
        field_types(s, attrs, b[k].fields, b[k].field_names, 1);
        for (int o = 0; o < p->ntypes; o++)
            for (int j = 0; j < (o == ti ? k : p->types[o].nbranches); j++)
                if (strcmp((o == ti ? b : p->types[o].branches)[j].name, name) == 0)
                    rfx_diag_error(s->d, at, "branch '%s' is declared twice (also in '%s')", name, p->types[o].name);
    }
    /* numbered by name, as Soufflé numbers them (a user-defined functor sees the numbers) */
    qsort(b, (size_t)nb, sizeof *b, branch_order);
    p->types[ti].branches = b;
    p->types[ti].nbranches = nb;
    /* a value (of an ADT not an enumeration) is stored as Soufflé stores it: the record
     * [branch, field] for a branch of one field, else [branch, [fields...]], the inner record
     * of a type of its own, named with a '$' no program can write */
    bool enumeration = true;
    for (int k = 0; k < nb; k++)
        enumeration &= b[k].nfields == 0;
    p->types[ti].enumeration = enumeration;
    for (int k = 0; k < nb; k++) {
        b[k].stored[0] = RFX_UNSIGNED;
        b[k].stored[1] = b[k].nfields == 1 ? b[k].fields[1] : RFX_UNSIGNED;
        if (enumeration || b[k].nfields == 1)
            continue;
        size_t len = strlen(t->name) + strlen(b[k].name) + 3;
        char *name = salloc(s, len);
        if (!name)
            return;
        snprintf(name, len, "%s.$%s", t->name, b[k].name);
        b[k].payload = p->ntypes;
        b[k].stored[1] = p->ntypes;
        p->types[p->ntypes++] = (rfx_type){.name = name, .prim = RFX_UNSIGNED, .parent = -1, .loc = p->types[ti].loc,
                                           .nfields = b[k].nfields, .fields = b[k].fields + 1,
                                           .field_names = b[k].field_names + 1};
    }
}

int rfx_sema_anonymous_record(sema *s, const int *fields, int n)
{
    rfx_program *p = s->p;
    char name[512];
    size_t len = (size_t)snprintf(name, sizeof name, "$[");
    for (int i = 0; i < n && len < sizeof name; i++)
        len += (size_t)snprintf(name + len, sizeof name - len, "%s%s", i ? ", " : "", p->types[fields[i]].name);
    if (len + 2 >= sizeof name)
        return -1;
    snprintf(name + len, sizeof name - len, "]");
    int t = rfx_sema_find_type(p, name);
    if (t >= 0)
        return t;
    if (s->anonymous >= RFX_ANONYMOUS_RECORDS)
        return -1;
    char *kept = salloc(s, strlen(name) + 1);
    int *types = salloc(s, sizeof(int) * (size_t)(n + 1));
    const char **names = salloc(s, sizeof(char *) * (size_t)(n + 1));
    if (!kept || !types || !names)
        return -1;
    strcpy(kept, name);
    for (int i = 0; i < n; i++) {
        types[i] = fields[i];
        names[i] = "";
    }
    s->anonymous++;
    p->types[p->ntypes] = (rfx_type){.name = kept, .prim = RFX_UNSIGNED, .parent = -1, .nfields = n, .fields = types,
                                     .field_names = names};
    return p->ntypes++;
}

int rfx_sema_find_branch(const rfx_program *p, const char *name, int *branch)
{
    for (int t = 0; t < p->ntypes; t++)
        for (int k = 0; k < p->types[t].nbranches; k++)
            if (strcmp(p->types[t].branches[k].name, name) == 0) {
                *branch = k;
                return t;
            }
    return -1;
}

/* `$B(a, b)`: its ADT and branch found, the record it stands for, as Soufflé stores it:
 * [branch, a] for one field, else [branch, [a, b, ...]] (a branch of an enumeration, an ADT
 * of branches without fields: the branch's number). */
void rfx_sema_resolve_constructor(sema *s, rfx_expr *e)
{
    int branch, t = rfx_sema_find_branch(s->p, e->u.fn.cast_name, &branch);
    if (t < 0) {
        rfx_diag_error(s->d, e->loc, "unknown constructor '$%s' (no ADT has such a branch)", e->u.fn.cast_name);
        return;
    }
    const rfx_branch *b = &s->p->types[t].branches[branch];
    if (e->u.fn.nargs != b->nfields) {
        rfx_diag_error(s->d, e->loc, "'$%s' takes %d argument%s, given %d", b->name, b->nfields,
                       b->nfields == 1 ? "" : "s", e->u.fn.nargs);
        return;
    }
    rfx_expr **args = salloc(s, sizeof(rfx_expr *) * (size_t)(e->u.fn.nargs + 1));
    rfx_expr *tag = salloc(s, sizeof *tag);
    if (!args || !tag)
        return;
    *tag = (rfx_expr){.kind = RFX_E_UNSIGNED, .loc = e->loc, .type = -1, .u.ival = branch};
    args[0] = tag;
    if (rfx_program_adt_enum(s->p, t)) {   /* an enumeration's value is its branch's number, as in
                                            * Soufflé: as(number, T) */
        e->u.fn.fn = RFX_FN_AS;
        e->u.fn.args = args;
        e->u.fn.nargs = 1;
        e->u.fn.cast_name = s->p->types[t].name;
        e->u.fn.cast = t;
        return;
    }
    if (b->payload < 0)   /* [branch, field] */
        args[1] = e->u.fn.args[0];
    else {                /* [branch, [fields...]], the inner record typed by the branch */
        rfx_expr *inner = salloc(s, sizeof *inner);
        if (!inner)
            return;
        *inner = (rfx_expr){.kind = RFX_E_FN, .loc = e->loc, .type = -1, .depth = e->depth,
                            .u.fn = {.fn = RFX_FN_RECORD, .nargs = e->u.fn.nargs, .args = e->u.fn.args,
                                     .cast = -1, .field = -1}};
        args[1] = inner;
        e->depth++;
    }
    e->u.fn.args = args;
    e->u.fn.nargs = 2;
    e->u.fn.cast = t;
    e->u.fn.field = branch;
}

void rfx_sema_check_types(sema *s)
{
    rfx_program *p = s->p;
    int n = s->ctx->types.n;
    int branches = 0;   /* room for their records of fields (adt_branches) */
    for (int i = 0; i < n; i++) {
        const rfx_type_decl *t = s->ctx->types.items[i];
        branches += t->branches ? t->branches->n / 3 : 0;
    }
    p->types = salloc(s, sizeof(rfx_type) * (size_t)(RFX_NPRIMS + n + branches + RFX_ANONYMOUS_RECORDS +
                                                      RFX_DECIMAL_TYPES));
    if (!p->types)
        return;
    /* the primitive types first, type i of kind i; the words of 64-bit values (sema_widen.c)
     * have a name no program can write */
    for (int i = 0; i < RFX_NPRIMS; i++)
        p->types[i] = (rfx_type){.name = i == RFX_WORD ? "$word" : i == RFX_DECIMAL ? "$decimal" : rfx_prim_name((rfx_prim)i),
                                 .prim = (rfx_prim)i, .precision = 18,
                                 .parent = -1, .nfields = -1};
    p->ntypes = RFX_NPRIMS;
    /* rfx's own primitive types (not Soufflé's) give way to a program's types of their names
     * (`.type date <: symbol` in a Soufflé program is its own date) */
    static const rfx_prim own[] = {RFX_NUMBER64, RFX_UNSIGNED64, RFX_FLOAT64, RFX_DATE};
    static const char *const hidden[] = {"$number64", "$unsigned64", "$float64", "$date"};
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 4; k++)
            if (strcmp(((rfx_type_decl *)s->ctx->types.items[i])->name, rfx_prim_name(own[k])) == 0)
                p->types[own[k]].name = hidden[k];
    for (int i = 0; i < n; i++) {
        rfx_type_decl *t = s->ctx->types.items[i];
        if (rfx_sema_find_type(p, t->name) >= 0) {
            rfx_diag_error(s->d, t->loc, "type '%s' is declared twice", t->name);
            continue;
        }
        /* a record type is a kind of its own: its fields are resolved once every type is known */
        bool composite = t->fields || t->branches;
        p->types[p->ntypes++] = (rfx_type){.name = t->name, .prim = composite ? RFX_UNSIGNED : RFX_NUMBER,
                                           .parent = composite ? -1 : -2, .loc = t->loc, .subtype = t->subtype,
                                           .nfields = -1};
    }
    /* resolve bases; a base may be declared later, so iterate to a fixpoint */
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < n; i++) {
            rfx_type_decl *t = s->ctx->types.items[i];
            int ti = rfx_sema_find_type(p, t->name);
            if (ti < RFX_NPRIMS || p->types[ti].parent != -2)
                continue;
            int bi = rfx_sema_type(s, t->base);
            bool ready = bi >= 0 && p->types[bi].parent != -2;
            for (int m = 0; ready && t->others && m < t->others->n; m += 2) {   /* a union: every member */
                int mi = rfx_sema_find_type(p, t->others->items[m]);
                ready = mi >= 0 && p->types[mi].parent != -2;
            }
            if (ready) {
                p->types[ti].parent = bi;
                p->types[ti].prim = p->types[bi].prim;
                p->types[ti].precision = p->types[bi].precision;   /* a decimal's, named anew */
                p->types[ti].scale = p->types[bi].scale;
                changed = true;
                if (t->others && (p->types[ti].members = salloc(s, sizeof(int) * (size_t)(t->others->n / 2 + 1)))) {
                    p->types[ti].members[p->types[ti].nmembers++] = bi;
                    for (int m = 0; m < t->others->n; m += 2)
                        p->types[ti].members[p->types[ti].nmembers++] = rfx_sema_find_type(p, t->others->items[m]);
                }
                for (int m = 0; t->others && m < t->others->n; m += 2) {
                    int mi = rfx_sema_find_type(p, t->others->items[m]);
                    if (p->types[mi].prim != p->types[bi].prim)
                        rfx_diag_error(s->d, *(rfx_loc *)t->others->items[m + 1],
                                       "union type '%s' mixes %s ('%s') and %s ('%s')", t->name,
                                       rfx_prim_name(p->types[bi].prim), t->base, rfx_prim_name(p->types[mi].prim),
                                       p->types[mi].name);
                }
            }
        }
    }
    for (int i = 0; i < n; i++)
        adt_branches(s, s->ctx->types.items[i]);
    for (int i = 0; i < n; i++) {
        rfx_type_decl *t = s->ctx->types.items[i];
        int ti = rfx_sema_find_type(p, t->name);
        if (ti < RFX_NPRIMS || !t->fields || p->types[ti].nfields >= 0)
            continue;
        rfx_type *ty = &p->types[ti];
        int nf = t->fields->n / 3;
        ty->fields = salloc(s, sizeof(int) * (size_t)(nf + 1));
        ty->field_names = salloc(s, sizeof(char *) * (size_t)(nf + 1));
        if (!ty->fields || !ty->field_names)
            return;
        field_types(s, t->fields, ty->fields, ty->field_names, 0);
        ty->nfields = nf;
    }
    for (int i = 0; i < n; i++) {
        rfx_type_decl *t = s->ctx->types.items[i];
        int ti = rfx_sema_find_type(p, t->name);
        if (ti < RFX_NPRIMS || p->types[ti].parent != -2)
            continue;
        bool unknown = false;
        if (rfx_sema_find_type(p, t->base) < 0)
            unknown = true, rfx_diag_error(s->d, t->base_loc, "unknown type '%s'", t->base);
        for (int m = 0; t->others && m < t->others->n; m += 2)
            if (rfx_sema_find_type(p, t->others->items[m]) < 0)
                unknown = true, rfx_diag_error(s->d, *(rfx_loc *)t->others->items[m + 1], "unknown type '%s'",
                                               (const char *)t->others->items[m]);
        if (!unknown)
            rfx_diag_error(s->d, t->loc, "type '%s' is defined in terms of itself", t->name);
        p->types[ti].parent = 0;
    }
}

/* ---- subtypes, as Soufflé checks them ----------------------------------------------- */
/* A type with its aliases resolved (`.type Age = number` is number). */
static int canon_type(const rfx_program *p, int t)
{
    for (int hops = 0; t >= 0 && hops <= p->ntypes; hops++) {
        const rfx_type *ty = &p->types[t];
        if (ty->subtype || ty->nmembers || ty->parent < 0)
            break;
        t = ty->parent;
    }
    return t;
}

/* Whether every value of type a is one of type b: a subtype is below its supertypes, a
 * union below what all its members are below, and above what is below one of them. */
static bool type_le(const rfx_program *p, int a, int b, int depth)
{
    a = canon_type(p, a);
    b = canon_type(p, b);
    if (a == b || a < 0 || b < 0 || depth > p->ntypes)   /* a cycle is reported where declared */
        return true;
    const rfx_type *ta = &p->types[a], *tb = &p->types[b];
    if (ta->prim != tb->prim)
        return false;
    if (ta->nmembers) {
        for (int m = 0; m < ta->nmembers; m++)
            if (!type_le(p, ta->members[m], b, depth + 1))
                return false;
        return true;
    }
    for (int m = 0; m < tb->nmembers; m++)
        if (type_le(p, a, tb->members[m], depth + 1))
            return true;
    return ta->subtype && type_le(p, ta->parent, b, depth + 1);
}

/* Soufflé's subtype rules for the variables its atoms type: a variable in positive atoms of
 * unrelated subtypes has no type, and one the head takes must be of a subtype of the head's
 * attribute (`h(x) :- a(x)` with a's A and h's B, both `<: number`, is an error). Variables
 * bound by expressions, and union types whose overlap is no declared type, are not checked. */
void rfx_sema_check_subtypes(sema *s, const rfx_clause *c, const rfx_conj *cj)
{
    rfx_program *p = s->p;
    int nv = c->nvars;
    int *meet = malloc(sizeof(int) * (size_t)(nv + 1));
    bool *skip = calloc((size_t)nv + 1, 1);
    if (!meet || !skip) {
        free(meet), free(skip);
        s->ctx->oom = true;
        return;
    }
    for (int v = 0; v < nv; v++)
        meet[v] = -1;
    for (int i = 0; i < cj->nlits; i++) {
        const rfx_atom *a = &cj->lits[i]->atom;
        if (cj->lits[i]->kind != RFX_L_ATOM || a->rel < 0)
            continue;
        for (int k = 0; k < a->nargs && k < p->rels[a->rel].arity; k++) {
            const rfx_expr *x = a->args[k];
            int t = p->rels[a->rel].attrs[k].type, v = x->kind == RFX_E_VAR ? x->u.v.var : -1;
            if (v < 0 || skip[v])
                continue;
            if (meet[v] < 0 || type_le(p, t, meet[v], 0))
                meet[v] = t;
            else if (!type_le(p, meet[v], t, 0)) {
                skip[v] = true;
                int ct = canon_type(p, t), cm = canon_type(p, meet[v]);
                if (p->types[ct].prim == p->types[cm].prim && !p->types[ct].nmembers && !p->types[cm].nmembers)
                    rfx_diag_error(s->d, x->loc,
                                   "type mismatch: variable '%s' is '%s' here and '%s' in another atom (unrelated "
                                   "subtypes)", c->var_names[v], p->types[t].name, p->types[meet[v]].name);
            }
        }
    }
    const rfx_atom *h = &c->head;
    for (int k = 0; h->rel >= 0 && k < h->nargs && k < p->rels[h->rel].arity; k++) {
        const rfx_expr *x = h->args[k];
        int v = x->kind == RFX_E_VAR ? x->u.v.var : -1, want = p->rels[h->rel].attrs[k].type;
        if (v >= 0 && !skip[v] && meet[v] >= 0 && p->types[meet[v]].prim == p->types[want].prim &&
            !type_le(p, meet[v], want, 0))
            rfx_diag_error(s->d, x->loc, "type mismatch: argument %d of '%s' is '%s', got '%s' of type '%s' (not a "
                           "subtype of it)", k + 1, p->rels[h->rel].name, p->types[want].name, c->var_names[v],
                           p->types[meet[v]].name);
    }
    free(meet);
    free(skip);
}


const char *rfx_sema_type_shown(const rfx_program *p, int t)
{
    const char *dollar = strchr(p->types[t].name, '$');
    return dollar ? dollar + 1 : p->types[t].name;
}

int rfx_sema_canon_type(const rfx_program *p, int t)
{
    return canon_type(p, t);
}

bool rfx_sema_types_agree(const rfx_program *p, int a, int b)
{
    return rfx_program_record_type(p, a) == rfx_program_record_type(p, b) &&
           rfx_program_adt_type(p, a) == rfx_program_adt_type(p, b);
}

/* The anonymous record type of an untyped record literal whose fields tell theirs (records
 * inside it in turn), or -1. */
static int anonymous_record_type(clause_ctx *cc, rfx_expr *rec, int depth)
{
    int ft[RFX_MAX_RECORD_FIELDS + 1];
    if (rec->u.fn.nargs > RFX_MAX_RECORD_FIELDS || depth > 64)
        return -1;
    for (int f = 0; f < rec->u.fn.nargs; f++) {
        rfx_expr *a = rec->u.fn.args[f];
        ft[f] = rfx_sema_expr_type(cc, a, -1);
        if (ft[f] < 0 && a->kind == RFX_E_FN && a->u.fn.fn == RFX_FN_RECORD && !a->u.fn.cast_name)
            ft[f] = anonymous_record_type(cc, a, depth + 1);
        if (ft[f] < 0)
            return -1;
    }
    return rfx_sema_anonymous_record(cc->s, ft, rec->u.fn.nargs);
}

/* `v = [a, b]` with v and the record untyped, its fields typed: v the anonymous record type
 * of those. */
void rfx_sema_type_anonymous_records(clause_ctx *cc, rfx_conj *cj, bool *changed)
{
    for (int i = 0; i < cj->nlits; i++) {
        rfx_lit *l = cj->lits[i];
        if (l->kind != RFX_L_CMP || l->cmp != RFX_EQ)
            continue;
        rfx_expr *v = l->lhs->kind == RFX_E_VAR ? l->lhs : l->rhs, *rec = v == l->lhs ? l->rhs : l->lhs;
        if (v->kind != RFX_E_VAR || cc->c->var_types[v->u.v.var] >= 0 || rec->kind != RFX_E_FN ||
            rec->u.fn.fn != RFX_FN_RECORD || rec->u.fn.cast_name)
            continue;
        int t = anonymous_record_type(cc, rec, 0);
        if (t >= 0)
            rfx_sema_bind_type(cc, v->u.v.var, t, v->loc, changed);
    }
}

/* ---- literals where float64 and decimal values are expected ------------------------- */
static rfx_expr *float_literal(const rfx_expr *e)
{
    while (e->kind == RFX_E_NEG)
        e = e->u.bin.lhs;
    return e->kind == RFX_E_FLOAT ? (rfx_expr *)e : NULL;
}

int rfx_sema_literal_scale(double v)
{
    double m = v < 0 ? -v : v, p10 = 1;
    for (int s = 0; s <= 18; s++, p10 *= 10) {
        double q = m * p10;
        if (q >= 9.2e18)
            return -1;
        if ((double)(long long)(q + 0.5) / p10 == m)
            return s;
    }
    return -1;
}

/* The decimal type a float literal (or its negation) is exactly, at its own scale; -1 where
 * none is (too many digits). */
static int literal_decimal(sema *s, const rfx_expr *e)
{
    const rfx_expr *f = float_literal(e);
    int sc = f ? rfx_sema_literal_scale(f->u.fval) : -1;
    return sc < 0 ? -1 : rfx_sema_decimal_type(s, 18, sc);
}

static void retype_literal(rfx_expr *e, int t)
{
    for (rfx_expr *x = e;; x = x->u.bin.lhs) {
        x->type = t;
        if (x->kind != RFX_E_NEG)
            return;
    }
}

/* Whether e is arithmetic over float literals alone (`2.0 ^ 0.5`, `-(1.5 + 2.25)`): a
 * float64 where one is wanted, computed in double as a float64 expression is. */
static bool float_literal_tree(const rfx_expr *e)
{
    switch (e->kind) {
    case RFX_E_FLOAT: return true;
    case RFX_E_NEG: return float_literal_tree(e->u.bin.lhs);
    case RFX_E_BINOP: return float_literal_tree(e->u.bin.lhs) && float_literal_tree(e->u.bin.rhs);
    default: return false;
    }
}

int rfx_sema_literal_arith_type(const sema *s, const rfx_expr *e, int type, int want)
{
    return want >= 0 && s->p->types[want].prim == RFX_FLOAT64 && float_literal_tree(e) ? want : type;
}

bool rfx_sema_float64_literal(sema *s, rfx_expr *e, int want)
{
    const rfx_program *p = s->p;
    if (want < 0 || !float_literal(e) || (p->types[want].prim != RFX_FLOAT64 && p->types[want].prim != RFX_DECIMAL))
        return false;
    int t = p->types[want].prim == RFX_FLOAT64 ? want : literal_decimal(s, e);
    if (t < 0)
        return false;   /* a float literal no decimal holds: reported as a float where a decimal is wanted */
    retype_literal(e, t);
    return true;
}

static bool is_decimal(const rfx_program *p, int t)
{
    return t >= 0 && p->types[t].prim == RFX_DECIMAL;
}

int rfx_sema_binop_type(sema *s, const rfx_expr *e, int l, int r)
{
    const rfx_program *p = s->p;
    rfx_expr *lhs = e->u.bin.lhs, *rhs = e->u.bin.rhs;
    if (l >= 0 && r >= 0 && p->types[l].prim == RFX_FLOAT && p->types[r].prim == RFX_FLOAT64 && float_literal(lhs))
        return r;
    /* a float literal beside a decimal: a decimal of its own scale */
    if (is_decimal(p, l) && r >= 0 && p->types[r].prim == RFX_FLOAT && float_literal(rhs))
        r = literal_decimal(s, rhs) >= 0 ? literal_decimal(s, rhs) : r;
    if (is_decimal(p, r) && l >= 0 && p->types[l].prim == RFX_FLOAT && float_literal(lhs))
        l = literal_decimal(s, lhs) >= 0 ? literal_decimal(s, lhs) : l;
    if (!is_decimal(p, l) || !is_decimal(p, r))
        return l >= 0 ? l : r;
    int sl = p->types[l].scale, sr = p->types[r].scale;
    switch (e->u.bin.op) {
    case RFX_ADD: case RFX_SUB: case RFX_MIN_OF: case RFX_MAX_OF: return sl >= sr ? l : r;
    case RFX_MUL: return sl + sr <= 18 ? rfx_sema_decimal_type(s, 18, sl + sr) : -1;
    case RFX_DIV: return RFX_FLOAT64;
    default: return l;   /* the checker refuses the operator */
    }
}
