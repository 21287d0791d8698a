/* backend_cpu.c: the CPU backend: plan variables as host rows, commands on the CPU
 * primitives. */
#include "backend.h"
#include "fault.h"

#include <stdlib.h>
#include <string.h>

typedef struct cpu_ctx {
    const rfx_plan *P;
    rfx_rows *vars;
    int nthreads;
} cpu_ctx;

static rfx_status cpu_open(rfx_backend *be, const rfx_plan *P)
{
    cpu_ctx *c = be->ctx;
    c->P = P;
    c->vars = rfx_calloc((size_t)P->nvars, sizeof(rfx_rows));
    if (!c->vars)
        return RFX_ERR_NOMEM;
    for (int v = 0; v < P->nvars; v++)
        rfx_rows_init(&c->vars[v], P->vars[v].arity);
    c->vars[P->unit].n = 1;
    return RFX_OK;
}

static void cpu_close(rfx_backend *be)
{
    cpu_ctx *c = be->ctx;
    if (c->vars)
        for (int v = 0; v < c->P->nvars; v++)
            rfx_rows_free(&c->vars[v]);
    free(c->vars);
    free(c);
    free(be);
}

static size_t cpu_count(rfx_backend *be, int var)
{
    return ((cpu_ctx *)be->ctx)->vars[var].n;
}

static void cpu_release(rfx_backend *be, int var)
{
    rfx_rows_free(&((cpu_ctx *)be->ctx)->vars[var]);
}

static rfx_status cpu_merge_host(rfx_backend *be, int var, rfx_rows *rows)
{
    cpu_ctx *c = be->ctx;
    rfx_status st = rfx_cpu_union(&c->vars[var], rows, &c->vars[var], c->nthreads);
    rfx_rows_free(rows);
    return st;
}

static rfx_status cpu_host_view(rfx_backend *be, int var, rfx_rows *scratch, const rfx_rows **view)
{
    (void)scratch;
    *view = &((cpu_ctx *)be->ctx)->vars[var];
    return RFX_OK;
}

static rfx_status copy_rows(const rfx_rows *s, rfx_rows *d)
{
    if (d == s)
        return RFX_OK;
    rfx_rows_free(d);
    d->arity = s->arity;
    rfx_status st = rfx_rows_reserve(d, s->n);
    if (st)
        return st;
    if (s->arity)
        rfx_memcpy(d->data, s->data, sizeof(uint32_t) * (size_t)s->arity * s->n);
    d->n = s->n;
    return RFX_OK;
}

static rfx_status cpu_exec(rfx_backend *be, const rfx_ra_cmd *c)
{
    cpu_ctx *x = be->ctx;
    rfx_rows *V = x->vars;
    int nt = x->nthreads;
    rfx_status st;
    switch (c->op) {
    case RFX_RA_SELECT: case RFX_RA_PROJECT: case RFX_RA_MAP: case RFX_RA_MAPFILTER:
        return rfx_cpu_mapfilter(&V[c->src[0]], c->pred, c->out, c->nout, &V[c->dst], nt);
    case RFX_RA_JOIN: case RFX_RA_MAPJOIN: case RFX_RA_PRODUCT:
        return rfx_cpu_join(&V[c->src[0]], &V[c->src[1]], c->nkeys, c->pred, c->out, c->nout, &V[c->dst], nt);
    case RFX_RA_UNION:
        return rfx_cpu_union(&V[c->src[0]], &V[c->src[1]], &V[c->dst], nt);
    case RFX_RA_INTERSECT:
    case RFX_RA_DIFFERENCE:
        return rfx_cpu_semijoin(&V[c->src[0]], &V[c->src[1]], c->nkeys, c->op == RFX_RA_INTERSECT, &V[c->dst], nt);
    case RFX_RA_SORT:
        st = copy_rows(&V[c->src[0]], &V[c->dst]);
        return st ? st : rfx_cpu_sort(&V[c->dst], nt);
    case RFX_RA_UNIQUE:
        st = copy_rows(&V[c->src[0]], &V[c->dst]);
        return st ? st : rfx_cpu_unique(&V[c->dst], nt);
    case RFX_RA_COPY:
        return copy_rows(&V[c->src[0]], &V[c->dst]);
    case RFX_RA_AGGREGATE:
        return rfx_cpu_aggregate(&V[c->src[0]], &V[c->src[1]], c->nkeys, c->agg, c->agg_col, c->agg_prim, &V[c->dst]);
    case RFX_RA_SWAP:
        rfx_rows_swap(&V[c->dst], &V[c->src[0]]);
        return RFX_OK;
    case RFX_RA_CLEAR:
        V[c->dst].n = 0;
        return RFX_OK;
    default:
        return RFX_ERR_INTERNAL;
    }
}

static const char *cpu_last_error(rfx_backend *be)
{
    (void)be;
    return "";
}

rfx_backend *rfx_backend_cpu(int nthreads)
{
    rfx_backend *be = rfx_calloc(1, sizeof *be);
    cpu_ctx *c = rfx_calloc(1, sizeof *c);
    if (!be || !c) {
        free(be);
        free(c);
        return NULL;
    }
    c->nthreads = nthreads > 0 ? nthreads : 1;
    *be = (rfx_backend){"cpu", c, cpu_open, cpu_close, cpu_count, cpu_release, cpu_merge_host,
                        cpu_host_view, cpu_exec, cpu_last_error};
    return be;
}
