/* domain.c: where the values of a recursive relation's columns come from, so that what its
 * loop can derive is bounded before the loop runs.
 *
 * Datalog makes no values but those its expressions compute: a column of a recursive
 * relation holds values copied from columns of relations of earlier strata (complete when
 * the loop starts) and constants written in its rules, unless some rule puts an expression
 * there (arithmetic, a functor, a record, an aggregate: the column is open). A relation
 * whose columns are all closed holds at most the product, over its columns, of the rows of
 * their sources plus their constants. path(x, z) :- path(x, y), edge(y, z) over path(x, y)
 * :- edge(x, y) holds at most |edge| x |edge| pairs; reach(y) :- reach(x), edge(x, y) over
 * reach(0) at most |edge| + 1 vertices. The bound is loose (rows, not distinct values) but
 * tells a loop that may grow past a device's start from one that cannot
 * (runtime/backend_auto.c). */
#include "ra_internal.h"

#include <string.h>

/* One column's sources while they are gathered: a set of relations (by bit), the columns
 * of its stratum whose constants it holds (itself among them), open. */
typedef struct col_set {
    unsigned char *rels;       /* nrels bits */
    unsigned char *consts_from;   /* the stratum's columns, by their index (bits) */
    int own_consts;            /* constants its rules write into it, once per clause argument */
    bool open;
} col_set;

typedef struct domain_ctx {
    const rfx_program *prog;
    col_set **cols;            /* per relation of a recursive stratum: per column; else NULL */
    int *by_stratum;           /* clause indices by their head's stratum: stratum s's are */
    int *first;                /* by_stratum[first[s] .. first[s + 1]) */
    int bytes;                 /* of each set of relations */
    int cbytes;                /* of each set of the stratum's columns */
    col_set **by_index;        /* the stratum's columns by index */
    bool changed;
} domain_ctx;

static void add_rel(domain_ctx *d, col_set *to, int r)
{
    if (!(to->rels[r >> 3] & (1u << (r & 7)))) {
        to->rels[r >> 3] |= (unsigned char)(1u << (r & 7));
        d->changed = true;
    }
}

/* to gains what from holds (a column of the same stratum read by a rule). */
static void add_set(domain_ctx *d, col_set *to, const col_set *from)
{
    for (int i = 0; i < d->bytes; i++)
        if (from->rels[i] & ~to->rels[i]) {
            to->rels[i] |= from->rels[i];
            d->changed = true;
        }
    for (int i = 0; i < d->cbytes; i++)
        if (from->consts_from[i] & ~to->consts_from[i]) {
            to->consts_from[i] |= from->consts_from[i];
            d->changed = true;
        }
    if (from->open && !to->open)
        d->changed = to->open = true;
}

static bool is_constant(const rfx_expr *e)
{
    return e->kind == RFX_E_INT || e->kind == RFX_E_UNSIGNED || e->kind == RFX_E_FLOAT || e->kind == RFX_E_STRING;
}

/* The positive atom of conjunct cj, and its column, that binds variable v: one of an
 * earlier stratum first (its rows are known), else one of r's own stratum; false: none. */
static bool atom_binding(const domain_ctx *d, const rfx_conj *cj, int v, int stratum, int *rel, int *col)
{
    bool found = false;
    for (int i = 0; i < cj->nlits; i++) {
        const rfx_lit *l = cj->lits[i];
        if (l->kind != RFX_L_ATOM || l->atom.rel < 0)
            continue;
        for (int k = 0; k < l->atom.nargs; k++) {
            const rfx_expr *a = l->atom.args[k];
            if (a->kind != RFX_E_VAR || a->u.v.var != v)
                continue;
            bool earlier = d->prog->rels[l->atom.rel].stratum != stratum;
            if (!found || earlier) {
                *rel = l->atom.rel;
                *col = k;
                found = true;
            }
            if (earlier)
                return true;
        }
    }
    return found;
}

/* A variable or constant that `v = e` (or `e = v`) in cj equates v with, other than the
 * variables seen[0..nseen) already followed; NULL: none. */
static const rfx_expr *equated(const rfx_conj *cj, int v, const int *seen, int nseen)
{
    for (int i = 0; i < cj->nlits; i++) {
        const rfx_lit *l = cj->lits[i];
        if (l->kind != RFX_L_CMP || l->cmp != RFX_EQ)
            continue;
        const rfx_expr *other = l->lhs->kind == RFX_E_VAR && l->lhs->u.v.var == v   ? l->rhs
                                : l->rhs->kind == RFX_E_VAR && l->rhs->u.v.var == v ? l->lhs
                                                                                    : NULL;
        bool old = false;
        for (int k = 0; other && other->kind == RFX_E_VAR && k < nseen; k++)
            old |= other->u.v.var == seen[k];
        if (other && !old)
            return other;
    }
    return NULL;
}

/* Adds to `to` where the value e of a head argument comes from in conjunct cj. Constants
 * are counted on the first pass only (count_consts), the sets grow to their fixpoint. */
static void add_source(domain_ctx *d, col_set *to, const rfx_conj *cj, const rfx_expr *e, int stratum,
                       bool count_consts)
{
    enum { HOPS = 8 };
    int seen[HOPS];
    for (int hops = 0; hops < HOPS; hops++) {   /* through a chain of equalities */
        if (is_constant(e)) {
            to->own_consts += count_consts;
            return;
        }
        if (e->kind != RFX_E_VAR || e->u.v.var < 0)
            break;
        int rel, col;
        if (atom_binding(d, cj, e->u.v.var, stratum, &rel, &col)) {
            if (d->prog->rels[rel].stratum != stratum || !d->cols[rel])
                add_rel(d, to, rel);
            else
                add_set(d, to, &d->cols[rel][col]);
            return;
        }
        seen[hops] = e->u.v.var;
        const rfx_expr *next = equated(cj, e->u.v.var, seen, hops + 1);
        if (!next)
            break;
        e = next;
    }
    if (!to->open)
        d->changed = to->open = true;
}

/* What relation r's representation adds beyond its rules: a lattice column holds values its
 * Lub makes (open); an equivalence's closure swaps its columns (both get both's sources). */
static void close_relation(domain_ctx *d, int r)
{
    const rfx_relation *rel = &d->prog->rels[r];
    for (int k = 0; k < rel->arity; k++)
        if (rel->attrs[k].lattice && !d->cols[r][k].open)
            d->changed = d->cols[r][k].open = true;
    if (rfx_relation_is_eqrel(rel) && rel->arity == 2) {
        add_set(d, &d->cols[r][0], &d->cols[r][1]);
        add_set(d, &d->cols[r][1], &d->cols[r][0]);
    }
}

/* One pass over stratum s's rules: each head argument's sources join its column's. A
 * relation read from files holds their values too: its own rows count (tuples inserted
 * through the API into a relation with rules are not counted: a bound too low only delays
 * a device's start). */
static void walk_stratum(domain_ctx *d, int s, bool first_pass)
{
    const rfx_program *p = d->prog;
    for (int i = 0; first_pass && i < p->strata[s].nrels; i++) {
        int r = p->strata[s].rels[i];
        for (int k = 0; (p->rels[r].io & RFX_REL_INPUT) && k < p->rels[r].arity; k++)
            add_rel(d, &d->cols[r][k], r);
    }
    for (int i = d->first[s]; i < d->first[s + 1]; i++) {
        const rfx_clause *c = &p->clauses[d->by_stratum[i]];
        int r = c->head.rel;
        if (!d->cols[r])
            continue;
        for (int j = 0; j < c->nconj; j++)
            for (int k = 0; k < c->head.nargs && k < p->rels[r].arity; k++)
                add_source(d, &d->cols[r][k], &c->conj[j], c->head.args[k], s, first_pass);
    }
    for (int i = 0; i < p->strata[s].nrels; i++)
        close_relation(d, p->strata[s].rels[i]);
}

/* The plan's form of one column's set. */
static bool keep_column(rfx_plan *P, const domain_ctx *d, const col_set *c, rfx_col_domain *out)
{
    out->open = c->open;
    for (int j = 0; j < d->cbytes * 8; j++)
        if ((c->consts_from[j >> 3] >> (j & 7)) & 1)
            out->nconsts += d->by_index[j]->own_consts;
    for (int r = 0; r < d->prog->nrels; r++)
        out->nsrc += (c->rels[r >> 3] >> (r & 7)) & 1;
    out->src = rfx_arena_alloc(P->arena, sizeof(int) * (size_t)(out->nsrc + 1));
    if (!out->src)
        return false;
    int n = 0;
    for (int r = 0; r < d->prog->nrels; r++)
        if ((c->rels[r >> 3] >> (r & 7)) & 1)
            out->src[n++] = r;
    return true;
}

/* d->by_stratum and d->first: the clauses with a head, bucketed by its stratum. */
static bool bucket_clauses(domain_ctx *d, rfx_arena *scratch)
{
    const rfx_program *p = d->prog;
    d->first = rfx_arena_alloc(scratch, sizeof(int) * (size_t)(p->nstrata + 2));
    d->by_stratum = rfx_arena_alloc(scratch, sizeof(int) * (size_t)(p->nclauses + 1));
    int *at = rfx_arena_alloc(scratch, sizeof(int) * (size_t)(p->nstrata + 1));
    if (!d->first || !d->by_stratum || !at)
        return false;
    for (int ci = 0; ci < p->nclauses; ci++) {
        int r = p->clauses[ci].head.rel, s = r >= 0 ? p->rels[r].stratum : -1;
        if (s >= 0 && s < p->nstrata)
            d->first[s + 1]++;
    }
    for (int s = 0; s < p->nstrata; s++) {
        d->first[s + 1] += d->first[s];
        at[s] = d->first[s];
    }
    for (int ci = 0; ci < p->nclauses; ci++) {
        int r = p->clauses[ci].head.rel, s = r >= 0 ? p->rels[r].stratum : -1;
        if (s >= 0 && s < p->nstrata)
            d->by_stratum[at[s]++] = ci;
    }
    return true;
}

bool rfx_plan_find_domains(rfx_plan *P)
{
    const rfx_program *p = P->prog;
    domain_ctx d = {.prog = p, .bytes = (p->nrels + 8) / 8};
    P->domain = rfx_arena_alloc(P->arena, sizeof(rfx_col_domain *) * (size_t)(p->nrels + 1));
    rfx_arena *scratch = rfx_arena_new();
    d.cols = scratch ? rfx_arena_alloc(scratch, sizeof(col_set *) * (size_t)(p->nrels + 1)) : NULL;
    bool ok = P->domain && d.cols && bucket_clauses(&d, scratch);
    for (int s = 0; ok && s < p->nstrata; s++) {
        const rfx_stratum *st = &p->strata[s];
        if (!st->recursive)
            continue;
        int ncols = 0;
        for (int i = 0; i < st->nrels; i++)
            ncols += p->rels[st->rels[i]].arity;
        d.cbytes = (ncols + 8) / 8;
        d.by_index = rfx_arena_alloc(scratch, sizeof(col_set *) * (size_t)(ncols + 1));
        ok &= d.by_index != NULL;
        for (int i = 0, j = 0; ok && i < st->nrels; i++) {
            int r = st->rels[i], n = p->rels[r].arity;
            d.cols[r] = rfx_arena_alloc(scratch, sizeof(col_set) * (size_t)(n + 1));
            ok &= d.cols[r] != NULL;
            for (int k = 0; ok && k < n; k++, j++) {
                col_set *c = &d.cols[r][k];
                c->rels = rfx_arena_alloc(scratch, (size_t)d.bytes);
                c->consts_from = rfx_arena_alloc(scratch, (size_t)d.cbytes);
                ok &= c->rels && c->consts_from;
                if (ok)
                    c->consts_from[j >> 3] |= (unsigned char)(1u << (j & 7));
                d.by_index[j] = c;
            }
        }
        for (bool first_pass = true; ok && (first_pass || d.changed); first_pass = false) {
            d.changed = false;
            walk_stratum(&d, s, first_pass);
        }
        for (int i = 0; ok && i < st->nrels; i++) {
            int r = st->rels[i], n = p->rels[r].arity;
            P->domain[r] = rfx_arena_alloc(P->arena, sizeof(rfx_col_domain) * (size_t)(n + 1));
            ok &= P->domain[r] != NULL;
            for (int k = 0; ok && k < n; k++)
                ok &= keep_column(P, &d, &d.cols[r][k], &P->domain[r][k]);
        }
    }
    rfx_arena_free(scratch);
    return ok;
}

double rfx_plan_rows_bound(const rfx_plan *P, int rel, size_t (*rows)(void *ctx, int var), void *ctx)
{
    if (rel < 0 || !P->domain || !P->domain[rel])
        return -1;
    double bound = 1;
    for (int k = 0; k < P->prog->rels[rel].arity; k++) {
        const rfx_col_domain *c = &P->domain[rel][k];
        if (c->open)
            return -1;
        double values = c->nconsts;
        for (int i = 0; i < c->nsrc; i++)
            values += (double)rows(ctx, P->relvar[c->src[i]]);
        bound *= values;
    }
    return bound;
}
