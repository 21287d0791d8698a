/* exec.c: the CFG interpreter. Runs each command of the plan on the CPU primitives,
 * follows jumps, frees temporaries after their last use, and does the plan's I/O. */
#include "backend.h"
#include "fault.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct op_stat {
    double seconds;
    uint64_t calls, tuples_in, tuples_out;
} op_stat;

typedef struct exec {
    const rfx_plan *P;
    rfx_program *prog;
    const rfx_run_opts *o;
    FILE *err, *out;
    rfx_backend *be;           /* owns the plan variables' storage */
    struct block_frees {
        int *start;            /* per command: offset into list of its run */
        int *list;             /* -1-terminated runs of temporaries to free */
    } *frees;                  /* per block */
    op_stat stats[RFX_RA_NOPS];
    int nthreads;
} exec;

int rfx_status_exit_code(rfx_status st)
{
    switch (st) {
    case RFX_OK: return RFX_EXIT_OK;
    case RFX_ERR_DIV0: return RFX_EXIT_PROGRAM;
    case RFX_ERR_IO: case RFX_ERR_INPUT: return RFX_EXIT_IO;
    case RFX_ERR_NOMEM: case RFX_ERR_LIMIT: case RFX_ERR_DEVICE: return RFX_EXIT_RESOURCE;
    default: return RFX_EXIT_INTERNAL;
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Temporaries whose every use is in the block that defines them are freed after their
 * last use there; others (hoisted out of loops) live to the end. */
static bool plan_liveness(exec *x)
{
    const rfx_plan *P = x->P;
    int *def_block = rfx_malloc(sizeof(int) * (size_t)P->nvars), *last_use = rfx_malloc(sizeof(int) * (size_t)P->nvars);
    bool *local = rfx_malloc(sizeof(bool) * (size_t)P->nvars);
    x->frees = rfx_calloc((size_t)P->nblocks, sizeof *x->frees);
    bool ok = def_block && last_use && local && x->frees;
    for (int v = 0; ok && v < P->nvars; v++) {
        def_block[v] = -1;
        last_use[v] = -1;
        local[v] = P->vars[v].kind == RFX_PV_TEMP;
    }
    for (int b = 0; ok && b < P->nblocks; b++)
        for (int i = 0; i < P->blocks[b].ncmds; i++) {
            const rfx_ra_cmd *c = &P->blocks[b].cmds[i];
            if (c->dst >= 0 && P->vars[c->dst].kind == RFX_PV_TEMP)
                def_block[c->dst] = b;
        }
    for (int b = 0; ok && b < P->nblocks; b++)
        for (int i = 0; i < P->blocks[b].ncmds; i++) {
            const rfx_ra_cmd *c = &P->blocks[b].cmds[i];
            for (int s = 0; s < 2; s++) {
                int v = c->src[s];
                if (v < 0 || !local[v])
                    continue;
                if (def_block[v] != b)
                    local[v] = false;
                else
                    last_use[v] = i;
            }
        }
    for (int b = 0; ok && b < P->nblocks; b++) {
        int n = P->blocks[b].ncmds;
        struct block_frees *f = &x->frees[b];
        f->start = rfx_malloc(sizeof(int) * (size_t)(n + 1));
        f->list = rfx_malloc(sizeof(int) * (size_t)(n + P->nvars + 1));
        if (!f->start || !f->list) {
            ok = false;
            break;
        }
        int pos = 0;
        for (int i = 0; i < n; i++) {
            f->start[i] = pos;
            for (int v = 0; v < P->nvars; v++)
                if (local[v] && def_block[v] == b && last_use[v] == i)
                    f->list[pos++] = v;
            f->list[pos++] = -1;
        }
    }
    free(def_block);
    free(last_use);
    free(local);
    return ok;
}

static void free_liveness(exec *x)
{
    if (!x->frees)
        return;
    for (int b = 0; b < x->P->nblocks; b++) {
        free(x->frees[b].start);
        free(x->frees[b].list);
    }
    free(x->frees);
}

static char *join_path(const char *dir, const char *name, const char *ext)
{
    size_t n = strlen(dir) + strlen(name) + strlen(ext) + 2;
    char *p = rfx_malloc(n);
    if (!p)
        return NULL;
    if (name[0] == '/' || !dir[0] || strcmp(dir, ".") == 0)
        snprintf(p, n, "%s%s", name, ext);
    else
        snprintf(p, n, "%s/%s%s", dir, name, ext);
    return p;
}

static char delimiter_of(const char *d)
{
    if (!d)
        return '\t';
    if (strcmp(d, "\\t") == 0)
        return '\t';
    return d[0];
}

static rfx_status do_input(exec *x, const rfx_ra_cmd *c)
{
    const rfx_pvar *v = &x->P->vars[c->dst];
    const rfx_relation *r = &x->prog->rels[v->rel];
    const char *fname = rfx_relation_opt(r, true, "filename");
    const char *fmt = rfx_relation_opt(r, true, "format");
    char *path = fname ? join_path(x->o->fact_dir, fname, "") : join_path(x->o->fact_dir, r->name, ".facts");
    if (!path)
        return RFX_ERR_NOMEM;
    rfx_read_opts ro = {delimiter_of(rfx_relation_opt(r, true, "delimiter")), false};
    /* a file named by filename= without a delimiter is read as an edge list (SNAP style)
     * when every column is numeric; format="facts" or "edges" says it explicitly */
    bool numeric = true;
    for (int a = 0; a < v->arity; a++)
        numeric &= v->types[a] != RFX_SYMBOL;
    ro.edge_list = fmt ? strcmp(fmt, "edges") == 0
                       : fname && numeric && !rfx_relation_opt(r, true, "delimiter");
    rfx_rows tmp;
    rfx_rows_init(&tmp, v->arity);
    rfx_status st = rfx_read_facts(path, v->types, x->prog->syms, &ro, &tmp, x->err);
    free(path);
    if (st == RFX_OK)
        st = rfx_cpu_sort(&tmp, x->nthreads);
    if (st == RFX_OK)
        st = rfx_cpu_unique(&tmp, x->nthreads);
    if (st == RFX_OK)
        st = x->be->merge_host(x->be, c->dst, &tmp);
    rfx_rows_free(&tmp);
    return st;
}

static rfx_status do_facts(exec *x, const rfx_ra_cmd *c)
{
    int a = x->P->vars[c->dst].arity;
    rfx_rows tmp;
    rfx_rows_init(&tmp, a);
    rfx_status st = rfx_rows_reserve(&tmp, (size_t)c->ntuples);
    for (int t = 0; st == RFX_OK && t < c->ntuples; t++)
        st = rfx_rows_push(&tmp, c->tuples + (size_t)t * (size_t)a);
    if (st == RFX_OK)
        st = rfx_cpu_sort(&tmp, 1);
    if (st == RFX_OK)
        st = rfx_cpu_unique(&tmp, 1);
    if (st == RFX_OK)
        st = x->be->merge_host(x->be, c->dst, &tmp);
    rfx_rows_free(&tmp);
    return st;
}

static rfx_status do_output(exec *x, const rfx_ra_cmd *c)
{
    const rfx_pvar *v = &x->P->vars[c->src[0]];
    const rfx_relation *r = &x->prog->rels[v->rel];
    const char *io = rfx_relation_opt(r, false, "IO");
    const char *fname = rfx_relation_opt(r, false, "filename");
    char delim = delimiter_of(rfx_relation_opt(r, false, "delimiter"));
    bool to_stdout = (io && strcmp(io, "stdout") == 0) || strcmp(x->o->output_dir, "-") == 0;
    rfx_rows scratch;
    rfx_rows_init(&scratch, v->arity);
    const rfx_rows *rows;
    rfx_status st = x->be->host_view(x->be, c->src[0], &scratch, &rows);
    if (st != RFX_OK)
        return st;
    char *path = to_stdout ? NULL : fname ? join_path(x->o->output_dir, fname, "") : join_path(x->o->output_dir, r->name, ".csv");
    if (!to_stdout && !path)
        st = RFX_ERR_NOMEM;
    else
        st = rfx_write_relation(to_stdout ? "-" : path, r->name, rows, v->types, x->prog->syms, delim, x->out, x->err);
    free(path);
    rfx_rows_free(&scratch);
    return st;
}

static const rfx_clause *rule_of(exec *x, const rfx_ra_cmd *c)
{
    return c->rule >= 0 ? &x->prog->clauses[c->rule] : NULL;
}

static rfx_status run_cmd(exec *x, const rfx_ra_cmd *c)
{
    switch (c->op) {
    case RFX_RA_FACTS:
        return do_facts(x, c);
    case RFX_RA_INPUT:
        return do_input(x, c);
    case RFX_RA_OUTPUT:
        return do_output(x, c);
    case RFX_RA_PRINTSIZE:
        fprintf(x->out, "%s\t%zu\n", x->P->vars[c->src[0]].name, x->be->count(x->be, c->src[0]));
        return RFX_OK;
    default:
        return x->be->exec(x->be, c);
    }
}

static void print_profile(exec *x)
{
    fprintf(x->err, "%-14s %8s %12s %14s %14s\n", "operator", "calls", "seconds", "tuples in", "tuples out");
    for (int op = 0; op < RFX_RA_NOPS; op++) {
        op_stat *s = &x->stats[op];
        if (!s->calls)
            continue;
        fprintf(x->err, "%-14s %8llu %12.6f %14llu %14llu\n", rfx_ra_op_name((rfx_ra_op)op),
                (unsigned long long)s->calls, s->seconds, (unsigned long long)s->tuples_in,
                (unsigned long long)s->tuples_out);
    }
}

rfx_status rfx_run(const rfx_plan *P, rfx_program *prog, const rfx_run_opts *o)
{
    exec x = {.P = P, .prog = prog, .o = o};
    x.err = o->err ? o->err : stderr;
    x.out = o->out ? o->out : stdout;
    x.nthreads = o->nthreads > 0 ? o->nthreads : 1;
    if (strcmp(o->output_dir, "-") != 0) {
        struct stat sb;
        if (stat(o->output_dir, &sb) != 0) {
            fprintf(x.err, "%s: error: output directory does not exist\n", o->output_dir);
            return RFX_ERR_IO;
        }
        if (!S_ISDIR(sb.st_mode)) {
            fprintf(x.err, "%s: error: output directory is not a directory\n", o->output_dir);
            return RFX_ERR_IO;
        }
        if (access(o->output_dir, W_OK) != 0) {
            fprintf(x.err, "%s: error: output directory is not writable: %s\n", o->output_dir, strerror(errno));
            return RFX_ERR_IO;
        }
    }
    rfx_backend_kind kind = o->backend;
    const char *env = getenv("RFX_BACKEND");
    if (kind == RFX_BACKEND_AUTO && env)
        kind = strcmp(env, "cuda") == 0 ? RFX_BACKEND_CUDA : strcmp(env, "cpu") == 0 ? RFX_BACKEND_CPU : kind;
    const char *why = NULL;
    if (kind != RFX_BACKEND_CPU)
        x.be = rfx_backend_cuda(o, &why);
    if (!x.be && kind == RFX_BACKEND_CUDA) {
        fprintf(x.err, "rfx: error: the CUDA backend cannot be used: %s\n", why ? why : "unknown reason");
        return RFX_ERR_DEVICE;
    }
    if (!x.be)
        x.be = rfx_backend_cpu(x.nthreads);
    if (!x.be || x.be->open_vars(x.be, P) != RFX_OK || !plan_liveness(&x)) {
        fprintf(x.err, "rfx: error: out of memory starting the run\n");
        if (x.be)
            x.be->close(x.be);
        free_liveness(&x);
        return RFX_ERR_NOMEM;
    }
    rfx_status st = RFX_OK;
    int b = 0, i = 0;
    while (b < P->nblocks) {
        const rfx_block *blk = &P->blocks[b];
        if (i >= blk->ncmds) {
            b++;
            i = 0;
            continue;
        }
        const rfx_ra_cmd *c = &blk->cmds[i];
        if (c->op == RFX_RA_HALT)
            break;
        if (c->op == RFX_RA_JUMP) {
            b = c->target;
            i = 0;
            continue;
        }
        if (c->op == RFX_RA_JUMP_IF_EMPTY) {
            bool empty = true;
            for (int k = 0; k < c->nvars; k++)
                empty &= x.be->count(x.be, c->vars[k]) == 0;
            if (empty) {
                b = c->target;
                i = 0;
                continue;
            }
            i++;
            continue;
        }
        double t0 = o->profile ? now() : 0;
        st = run_cmd(&x, c);
        if (o->profile) {
            op_stat *s = &x.stats[c->op];
            s->seconds += now() - t0;
            s->calls++;
            for (int k = 0; k < 2; k++)
                if (c->src[k] >= 0)
                    s->tuples_in += x.be->count(x.be, c->src[k]);
            if (c->dst >= 0)
                s->tuples_out += x.be->count(x.be, c->dst);
        }
        if (st != RFX_OK) {
            const rfx_clause *cl = rule_of(&x, c);
            if (st == RFX_ERR_DIV0) {
                rfx_diag d = {prog->file, prog->src, x.err, 0, 0};
                rfx_diag_error(&d, cl ? cl->loc : (rfx_loc){0, 0}, "division by zero while evaluating this rule");
            }
            else if (st == RFX_ERR_NOMEM || st == RFX_ERR_LIMIT || st == RFX_ERR_DEVICE) {
                /* name what was being computed, from what, and how large */
                fprintf(x.err, "rfx: error: %s in %s", st == RFX_ERR_NOMEM ? "out of memory" : st == RFX_ERR_LIMIT ? "size limit exceeded" : "device failure",
                        rfx_ra_op_name(c->op));
                if (c->dst >= 0)
                    fprintf(x.err, " computing %s", P->vars[c->dst].name);
                for (int k = 0; k < 2; k++)
                    if (c->src[k] >= 0)
                        fprintf(x.err, "%s %s (%zu tuples)", k ? " and" : " from", P->vars[c->src[k]].name,
                                x.be->count(x.be, c->src[k]));
                if (cl)
                    fprintf(x.err, ", for the rule at %s:%d", prog->file, cl->loc.line);
                const char *why = x.be->last_error(x.be);
                fprintf(x.err, " on the %s backend%s%s\n", x.be->name, why && *why ? ": " : "", why ? why : "");
            }
            break;
        }
        for (const int *f = x.frees[b].list + x.frees[b].start[i]; *f >= 0; f++)
            x.be->release(x.be, *f);
        i++;
    }
    if (o->profile)
        print_profile(&x);
    x.be->close(x.be);
    free_liveness(&x);
    return st;
}
