/* exec.c: the CFG interpreter. Runs the program's Harmony IR on a backend: each command
 * as it says (on its own, as a fused group at the group's anchor, or not at all, a member
 * run there), follows jumps, frees temporaries after their last use, and does the plan's
 * I/O. */
#include "backend.h"
#include "base.h"
#include "comm.h"
#include "harmony.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct op_stat {
    double seconds;
    uint64_t calls, tuples_in, tuples_out, bytes;
} op_stat;

struct rfx_exec {
    const rfx_plan *P;
    rfx_program *prog;
    const rfx_run_opts *o;
    FILE *err, *out;
    rfx_backend *be;           /* owns the plan variables' storage */
    struct block_frees {
        int *start;            /* per command: offset into list of its run */
        int *list;             /* -1-terminated runs of temporaries to free */
    } *frees;                  /* per block */
    op_stat stats[RFX_RA_NOPS + 2];   /* commands, then fused FILTER and JOIN groups */
    const rfx_harmony *H;      /* what runs: the caller's, or own_harmony over own_weave */
    rfx_weave *own_weave;      /* woven for this run where the caller gave no Harmony */
    rfx_harmony *own_harmony;
    int nthreads;
    double t_start, t_progress;
    int iteration;             /* of the current semi-naive loop */
    int loop_block;            /* block of that loop's body, -1 outside loops */
    bool progress_shown;
    bool no_split;             /* tuning split_loops=0: loops never run by key ranges */
    rfx_run_opts opts;         /* the caller's, tune filled in (o points here) */
    size_t splits, split_ranges;   /* loops split, and the ranges they ran (profile) */
    size_t user_fn_cmds;           /* commands calling user-defined functors, run on the host (profile) */
    size_t skipped;                /* commands and groups not run: their guards held (profile) */
    size_t iterations;             /* semi-naive iterations run, in all loops (profile) */
    uint64_t inserted_bytes;       /* the inserted tuples the run started from (profile: its scans' floor) */
    double user_fn_seconds;
    double split_seconds;      /* spent cutting their state and gathering the ranges' results */
    size_t *unsplit_bytes;     /* per relation: its size when it could not be cut (one value) */
    bool traced;               /* some trace event written */
    pthread_mutex_t trace_lock;    /* spans come from several host threads (one per GPU) */
    unsigned long long tracks;     /* device tracks named so far (bit per device and lane) */
    /* A distributed run (o->comm): this process's rank; each command's messages are held in
     * cmd_err and written to real_err only by the process that reports for all (the
     * lowest-ranked one that failed, else process 0), so that N processes reading the same
     * bad file print one message. */
    int rank;
    bool profiling;            /* --profile on every process (process 0 prints) */
    FILE *real_err, *cmd_err;
    char *ebuf;
    size_t elen;
    int *changed;              /* settle's variables (nvars + 1) */
};
typedef struct rfx_exec exec;

int rfx_status_exit_code(rfx_status st)
{
    switch (st) {
    case RFX_OK: return RFX_EXIT_OK;
    case RFX_ERR_DIV0: return RFX_EXIT_PROGRAM;
    case RFX_ERR_IO: case RFX_ERR_INPUT: return RFX_EXIT_IO;
    case RFX_ERR_NOMEM: case RFX_ERR_LIMIT: case RFX_ERR_DEVICE: case RFX_ERR_REMOTE: return RFX_EXIT_RESOURCE;
    default: return RFX_EXIT_INTERNAL;
    }
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
            /* a fused group reads its inputs where it runs, at its anchor */
            const rfx_hcmd *hc = &x->H->blocks[b].cmds[i];
            const rfx_fgroup *g = hc->group;
            bool anchor = g && hc->runs;
            int nin = rfx_ra_cmd_ninputs(c) + (anchor ? rfx_fgroup_ninputs(g) : 0);
            for (int s = 0; s < nin; s++) {
                int v = s < rfx_ra_cmd_ninputs(c) ? rfx_ra_cmd_input(c, s) : rfx_fgroup_input(g, s - rfx_ra_cmd_ninputs(c));
                if (v < 0 || !local[v])
                    continue;
                if (def_block[v] != b)
                    local[v] = false;
                else if (last_use[v] < i)
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

/* A directive's delimiter= (a `\t` written out: a tab), or NULL for the default. */
static const char *delimiter_of(const rfx_io_dir *d)
{
    const char *v = rfx_io_get(d, "delimiter");
    return v && strcmp(v, "\\t") == 0 ? "\t" : v;
}

static bool io_flag(const rfx_io_dir *d, const char *key)
{
    const char *v = rfx_io_get(d, key);
    return v && strcmp(v, "true") == 0;
}

/* A relation's record columns, for reading and writing them: false where it has none. */
/* The kinds of r's columns as files hold them: a 64-bit value's high word typed as the
 * value (the plan's variables hold words, as joins see them), its low word RFX_WORD; and
 * its decimal columns' digits (false where it has none). */
static bool io_prims(const exec *x, const rfx_relation *r, rfx_prim *prims, rfx_decimal_cols *dec)
{
    bool any = false;
    for (int a = 0; a < r->arity; a++) {
        const rfx_type *t = &x->prog->types[r->attrs[a].type];
        prims[a] = t->prim;
        dec->precision[a] = (uint8_t)t->precision;
        dec->scale[a] = (uint8_t)t->scale;
        any |= t->prim == RFX_DECIMAL;
    }
    return any;
}

static bool record_io(const exec *x, const rfx_relation *r, int *coltypes, rfx_record_io *rio)
{
    bool any = false;
    for (int a = 0; a < r->arity; a++) {
        coltypes[a] = r->attrs[a].type;
        any |= rfx_record_column(x->prog, coltypes[a]);
    }
    *rio = (rfx_record_io){x->prog, coltypes, x->prog->syms, x->P->fn_env};
    return any;
}

/* Whether every process of a distributed run reads a slice of the facts file at path
 * (collective where it may: the processes agree, so that all or none do): a plain file of
 * at least dist_slice_bytes holding numbers only. whole: the relation's reading needs the
 * whole file (records, quoted fields, a lattice's last line per key). path NULL (no memory
 * for it): this process says no, and fails after. */
static bool slices_for(exec *x, const rfx_pvar *v, const char *path, bool whole)
{
    if (!x->o->comm || !x->be->merge_host_slices || whole || rfx_comm_size(x->o->comm) < 2)
        return false;
    for (int c = 0; c < v->arity; c++)
        if (v->types[c] == RFX_SYMBOL)   /* ids must agree: every process reads every symbol */
            return false;
    uint64_t yes = path && rfx_facts_sliceable(path, (long long)x->o->tune->dist_slice_bytes);
    return rfx_comm_sum(x->o->comm, &yes, 1) == RFX_OK && yes == (uint64_t)rfx_comm_size(x->o->comm);
}

/* The slices' lines that do not start with numbers, reported once by process 0: their
 * count and the first one's line (the lowest slice's that has any). Collective. */
static void report_slices_skipped(exec *x, const char *path, long skipped, long first)
{
    int P = rfx_comm_size(x->o->comm);
    uint64_t mine[2] = {(uint64_t)skipped, (uint64_t)first}, *all = rfx_calloc((size_t)P * 2, sizeof(uint64_t));
    rfx_status st = all ? RFX_OK : RFX_ERR_NOMEM;
    st = rfx_comm_agree(x->o->comm, st);
    if (st == RFX_OK && rfx_comm_gather_all(x->o->comm, mine, 2, all) == RFX_OK && x->rank == 0) {
        uint64_t total = 0, at = 0;
        for (int p = 0; p < P; p++) {
            at = total == 0 && all[2 * p] ? all[2 * p + 1] : at;
            total += all[2 * p];
        }
        if (total)
            rfx_report_skipped(x->err, path, (long)at, (long)total);
    }
    free(all);
}

static rfx_status do_input(exec *x, const rfx_ra_cmd *c)
{
    if (!x->o->fact_dir)
        return RFX_OK;      /* embedded use without a fact directory: inserts only */
    const rfx_pvar *v = &x->P->vars[c->dst];
    const rfx_relation *r = &x->prog->rels[v->rel];
    const rfx_io_dir *d = &r->inputs[c->io];
    const char *fname = rfx_io_get(d, "filename");
    const char *fmt = rfx_io_get(d, "format");
    const char *io = rfx_io_get(d, "IO");
    const bool from_stdin = io && (strcmp(io, "stdin") == 0 || strcmp(io, "json") == 0);
    const bool json = io && (strcmp(io, "jsonfile") == 0 || strcmp(io, "json") == 0);
    if (from_stdin && rfx_comm_size(x->o->comm) > 1) {   /* each process would read its own stdin */
        rfx_diag dg = {.file = x->prog->file, .src = x->prog->src, .out = x->err, .map = &x->prog->lines};
        rfx_diag_error(&dg, d->loc, "IO=%s: not in a run of several processes (give the facts as a file)", io);
        return RFX_ERR_INPUT;
    }
    char *path = from_stdin ? join_path("", "/dev/stdin", "")
                 : fname    ? join_path(x->o->fact_dir, fname, "")
                            : join_path(x->o->fact_dir, r->name, json ? ".json" : ".facts");
    int key = rfx_relation_lattice_key(r);
    int coltypes[RFX_MAX_ARITY + 1];
    rfx_record_io rio;
    bool records = record_io(x, r, coltypes, &rio);
    bool sliced = !from_stdin && !json && slices_for(x, v, path, records || io_flag(d, "rfc4180") || key < r->arity);
    if (!path)
        return RFX_ERR_NOMEM;
    /* a SNAP edge list (comments, any blanks, extra columns) only where format="edges" says
     * so: a .facts file's every line is a row (gzip is recognised either way) */
    rfx_read_opts ro = {delimiter_of(d), fmt && strcmp(fmt, "edges") == 0, x->nthreads, io_flag(d, "headers"),
                        io_flag(d, "rfc4180"), records ? &rio : NULL, NULL, 0, 1, NULL, NULL, NULL, 0};
    long skipped = 0, first_skipped = 0;
    if (sliced) {
        ro.slice = x->rank;
        ro.nslices = rfx_comm_size(x->o->comm);
        ro.skipped = &skipped;
        ro.first_skipped = &first_skipped;
    }
    rfx_rows tmp;
    rfx_rows_init(&tmp, v->arity);
    rfx_prim prims[RFX_MAX_ARITY + 1];
    rfx_decimal_cols dec;
    ro.decimals = io_prims(x, r, prims, &dec) ? &dec : NULL;
    if (v->unread && (ro.unread_value = rfx_symtab_intern(x->prog->syms, "", 0)) != UINT32_MAX)
        ro.unread = v->unread;   /* columns no rule reads: all "" (ra_ir/unread.c) */
    rfx_json_io jio = {x->prog, r, x->prog->syms, records ? &rio : NULL, false};
    rfx_status st = json ? rfx_read_json(path, &jio, &tmp, x->err)
                         : rfx_read_facts(path, prims, x->prog->syms, &ro, &tmp, x->err);
    if (sliced) {   /* collective: a process whose slice failed takes part; owners sort */
        report_slices_skipped(x, path, skipped, first_skipped);
        rfx_status merged = x->be->merge_host_slices(x->be, c->dst, &tmp, st != RFX_OK);
        st = st != RFX_OK ? st : merged;
        free(path);
        rfx_rows_free(&tmp);
        return st;
    }
    free(path);
    if (st == RFX_OK && key < r->arity)   /* lattice attributes: a key's last line, as Soufflé reads them */
        st = rfx_cpu_lattice_last(&tmp, key, x->nthreads);
    if (st == RFX_OK && key == r->arity)
        st = rfx_cpu_sort(&tmp, x->nthreads);
    if (st == RFX_OK && key == r->arity)
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

/* The keys of an output's order="a desc, b" (checked by the front end): each attribute's
 * column (a 64-bit value's high word) and direction. */
static int order_keys(const rfx_relation *r, const char *spec, rfx_order_key *keys)
{
    int n = 0;
    for (const char *p = spec; p && *p && n < RFX_MAX_ARITY;) {
        while (*p == ' ' || *p == ',')
            p++;
        size_t len = strcspn(p, " ,");
        if (!len)
            break;
        int col = -1;
        for (int a = 0; a < r->arity && col < 0; a++)
            if (strlen(r->attrs[a].name) == len && strncmp(r->attrs[a].name, p, len) == 0)
                col = a;
        p += len;
        while (*p == ' ')
            p++;
        bool desc = strncasecmp(p, "desc", 4) == 0 && (p[4] == 0 || p[4] == ',' || p[4] == ' ');
        if (desc || (strncasecmp(p, "asc", 3) == 0 && (p[3] == 0 || p[3] == ',' || p[3] == ' ')))
            p += desc ? 4 : 3;
        if (col >= 0)
            keys[n++] = (rfx_order_key){col, desc};
    }
    return n;
}

/* rows cut and ordered as the output's order and limit options say, into *out. */
static rfx_status ordered_rows(const exec *x, const rfx_relation *r, const rfx_io_dir *d, const rfx_rows *rows,
                               const rfx_prim *prims, rfx_rows *out)
{
    rfx_order_key keys[RFX_MAX_ARITY];
    int nkeys = order_keys(r, rfx_io_get(d, "order"), keys);
    const char *lim = rfx_io_get(d, "limit");
    size_t limit = lim ? (size_t)strtoull(lim, NULL, 10) : SIZE_MAX, count = 0;
    rfx_status st;
    size_t *idx = rfx_order_rows(rows, prims, x->prog->syms, keys, nkeys, limit, &count, &st);
    if (st == RFX_OK)
        st = rfx_rows_reserve(out, count);
    for (size_t i = 0; st == RFX_OK && i < count; i++)
        st = rfx_rows_push(out, rows->data + idx[i] * (size_t)rows->arity);
    free(idx);
    return st;
}

static rfx_status do_output(exec *x, const rfx_ra_cmd *c)
{
    const rfx_pvar *v = &x->P->vars[c->src[0]];
    if (!x->o->output_dir || (!x->out && strcmp(x->o->output_dir, "-") == 0))
        return RFX_OK;
    const rfx_relation *r = &x->prog->rels[v->rel];
    const rfx_io_dir none = {0, NULL, {0}}, *d = c->io >= 0 ? &r->outputs[c->io] : &none;
    const char *io = rfx_io_get(d, "IO");
    const char *fname = rfx_io_get(d, "filename");
    int coltypes[RFX_MAX_ARITY + 1];
    rfx_record_io rio;
    bool records = record_io(x, r, coltypes, &rio);
    rfx_write_opts wo = {delimiter_of(d), x->nthreads, io_flag(d, "headers"), io_flag(d, "rfc4180"),
                         io_flag(d, "compress"), records ? &rio : NULL, false, NULL};
    /* `-D -` writes every output as text to out, JSON ones too (as Soufflé) */
    bool to_stdout =
        (io && (strcmp(io, "stdout") == 0 || strcmp(io, "json") == 0)) || strcmp(x->o->output_dir, "-") == 0;
    bool json = io && strcmp(x->o->output_dir, "-") != 0 && (strcmp(io, "jsonfile") == 0 || strcmp(io, "json") == 0);
    if (to_stdout && !x->out)
        return RFX_OK;
    rfx_rows scratch;
    rfx_rows_init(&scratch, v->arity);
    const rfx_rows *rows;
    rfx_status st = x->be->host_view(x->be, c->src[0], &scratch, &rows);
    if (x->o->comm)   /* a file is written only where every process has its rows there */
        st = rfx_comm_agree(x->o->comm, st);
    if (st != RFX_OK || x->rank) {   /* other processes of a distributed run took part in the gather */
        rfx_rows_free(&scratch);
        return st;
    }
    rfx_prim prims[RFX_MAX_ARITY + 1];
    rfx_decimal_cols dec;
    wo.decimals = io_prims(x, r, prims, &dec) ? &dec : NULL;
    rfx_rows ordered;   /* order="..." and limit=N: the rows to write, in that order */
    rfx_rows_init(&ordered, v->arity);
    if (rfx_io_get(d, "order") || rfx_io_get(d, "limit")) {
        st = ordered_rows(x, r, d, rows, prims, &ordered);
        rows = &ordered;
        wo.in_order = true;
    }
    char *path = to_stdout ? NULL
               : fname   ? join_path(x->o->output_dir, fname, "")
               : json    ? join_path(x->o->output_dir, r->name, ".json")
                         : join_path(x->o->output_dir, r->name, wo.compress ? ".csv.gz" : ".csv");   /* as Soufflé */
    /* on stdout, as Soufflé: the name, then the attribute names where headers=true or
       under `-D -` (which asks for them; a bare IO=stdout does not) */
    bool names = !to_stdout || wo.headers || strcmp(x->o->output_dir, "-") == 0;
    size_t hl = strlen(r->name) + 2;
    for (int a = 0; a < r->arity; a++)
        hl += strlen(r->attrs[a].name) + 1;
    char *header = malloc(hl);
    if (header) {
        size_t n = (size_t)sprintf(header, names ? "%s\n" : "%s", r->name);
        for (int a = 0; names && a < r->arity; a++)   /* a 64-bit value's low word is no attribute of its own */
            if (x->prog->types[r->attrs[a].type].prim != RFX_WORD)
                n += (size_t)sprintf(header + n, "%s%s", a ? "\t" : "", r->attrs[a].name);
    }
    if (st == RFX_OK && ((!to_stdout && !path) || !header))
        st = RFX_ERR_NOMEM;
    const char *fmt = rfx_io_get(d, "format");
    rfx_json_io jio = {x->prog, r, x->prog->syms, records ? &rio : NULL, fmt && strcmp(fmt, "object") == 0};
    if (st == RFX_OK && json)
        st = rfx_write_json(to_stdout ? "-" : path, &jio, rows, prims, wo.in_order, x->nthreads, x->out, x->err);
    else if (st == RFX_OK)
        st = rfx_write_relation(to_stdout ? "-" : path, header, rows, prims, x->prog->syms, &wo, x->out, x->err);
    free(header);
    free(path);
    rfx_rows_free(&ordered);
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
        if (x->out && !x->rank)
            fprintf(x->out, "%s\t%zu\n", x->P->vars[c->src[0]].name, x->be->count(x->be, c->src[0]));
        return RFX_OK;
    case RFX_RA_DIFFERENCE:
        /* nothing to take away from a variable in place (a subsumption step that deleted
         * nothing): no backend need copy it, and the CPU's keeps its runs */
        if (c->dst == c->src[0] && c->src[1] != c->dst && x->be->count(x->be, c->src[1]) == 0)
            return RFX_OK;
        return x->be->exec(x->be, c);
    case RFX_RA_UNION:
        /* nothing to add to a variable in place */
        for (int k = 0; k < 2; k++)
            if (c->dst == c->src[k] && c->src[1 - k] != c->dst && x->be->count(x->be, c->src[1 - k]) == 0)
                return RFX_OK;
        return x->be->exec(x->be, c);
    default:
        return x->be->exec(x->be, c);
    }
}

/* ---- profile -------------------------------------------------------------------------- */
static const char *stat_name(int k)
{
    return k < RFX_RA_NOPS ? rfx_ra_op_name((rfx_ra_op)k) : k == RFX_RA_NOPS ? "FUSED FILTER" : "FUSED JOIN";
}

/* Counts var's tuples as read or written, and their bytes when moved. */
static void count_var(exec *x, op_stat *s, int var, bool written, bool moved)
{
    size_t n = x->be->count(x->be, var);
    *(written ? &s->tuples_out : &s->tuples_in) += n;
    if (moved)
        s->bytes += n * (size_t)x->P->vars[var].arity * 4;
}

/* A group reads each input once and writes each output once. */
/* Commands calling user-defined functors (a group: any of its members) are counted apart
 * in the profile. */
static void count_user_functors(exec *x, bool user, double seconds)
{
    if (user) {
        x->user_fn_cmds++;
        x->user_fn_seconds += seconds;
    }
}

static void count_group_stats(exec *x, const rfx_fgroup *g, double seconds)
{
    bool user = false;
    for (int m = 0; m < g->nmembers && !user; m++)
        user = rfx_fgroup_member_cmd(x->P, g, m)->user_functors;
    count_user_functors(x, user, seconds);
    op_stat *s = &x->stats[RFX_RA_NOPS + (g->kind == RFX_FG_JOIN)];
    s->seconds += seconds;
    s->calls++;
    for (int k = 0; k < rfx_fgroup_ninputs(g); k++)
        count_var(x, s, rfx_fgroup_input(g, k), false, true);
    for (int k = 0; k < rfx_fgroup_noutputs(g); k++)
        count_var(x, s, rfx_fgroup_output(g, k), true, true);
}

static bool moves_data(rfx_ra_op op)
{
    return op != RFX_RA_SWAP && op != RFX_RA_CLEAR && op != RFX_RA_PRINTSIZE;
}

static void count_stats(exec *x, const rfx_ra_cmd *c, double seconds)
{
    count_user_functors(x, c->user_functors, seconds);
    op_stat *s = &x->stats[c->op];
    s->seconds += seconds;
    s->calls++;
    for (int k = 0; k < rfx_ra_cmd_ninputs(c); k++)
        if (rfx_ra_cmd_input(c, k) >= 0)
            count_var(x, s, rfx_ra_cmd_input(c, k), false, moves_data(c->op));
    if (c->dst >= 0)   /* a counting join writes no tuples */
        count_var(x, s, c->dst, true, moves_data(c->op) && !c->count_only);
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", (unsigned char)*s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

/* Per process of a distributed run: what it holds, sent and gathered, and its seconds in
 * transfers and in commands; NULL where the run is not distributed or memory ran short.
 * Collective (every process calls it); the rows are rank-major, each nprocess_cols values and
 * then one per program relation (the tuples of it this process holds). */
enum { PROC_TUPLES, PROC_SENT_ROWS, PROC_SENT_BYTES, PROC_GATHERED, PROC_REPLICATED, PROC_EXCHANGE_US,
       PROC_COMPUTE_US, PROC_JOINED, PROC_HOT_KEYS, PROC_SPREAD, PROC_PHASE_US, NPROC_COLS = PROC_PHASE_US + 5 };

static uint64_t *gather_process_stats(exec *x)
{
    rfx_comm *comm = x->o->comm;
    if (!comm)
        return NULL;
    int R = rfx_comm_size(comm), nrel = x->prog->nrels, K = NPROC_COLS + nrel;
    size_t *local = rfx_calloc((size_t)x->P->nvars, sizeof(size_t));
    uint64_t *mine = rfx_calloc((size_t)K, sizeof(uint64_t)), *all = rfx_calloc((size_t)K * (size_t)R, sizeof(uint64_t));
    rfx_dist_stats ds;
    uint64_t bad = !local || !mine || !all || !rfx_dist_stats_of(x->be, &ds, local);
    if (rfx_comm_sum(comm, &bad, 1) == RFX_OK && !bad) {
        for (int r = 0; r < nrel; r++) {
            mine[NPROC_COLS + r] = local[x->P->relvar[r]];
            mine[PROC_TUPLES] += local[x->P->relvar[r]];
        }
        mine[PROC_SENT_ROWS] = ds.sent_rows;
        mine[PROC_SENT_BYTES] = ds.sent_bytes;
        mine[PROC_GATHERED] = ds.gathered_rows;
        mine[PROC_REPLICATED] = ds.replicated;
        mine[PROC_EXCHANGE_US] = (uint64_t)(ds.exchange_s * 1e6);
        mine[PROC_COMPUTE_US] = (uint64_t)(ds.compute_s * 1e6);
        mine[PROC_JOINED] = ds.joined_rows;
        mine[PROC_HOT_KEYS] = ds.hot_keys;
        mine[PROC_SPREAD] = ds.spread_rows;
        for (int k = 0; k < 5; k++)
            mine[PROC_PHASE_US + k] = (uint64_t)(ds.phase_s[k] * 1e6);
        bad = rfx_comm_gather_all(comm, mine, K, all) != RFX_OK;
    }
    free(local);
    free(mine);
    if (bad) {
        free(all);
        return NULL;
    }
    return all;
}

/* Column col of every process's row of the gathered stats: its sum, the largest value
 * (*most) and the process holding it (*at). */
static uint64_t column_parts(const uint64_t *all, int R, int K, int col, uint64_t *most, int *at)
{
    uint64_t sum = 0;
    *most = 0;
    *at = 0;
    for (int p = 0; p < R; p++) {
        uint64_t n = all[(size_t)p * (size_t)K + (size_t)col];
        sum += n;
        if (n > *most)
            *most = n, *at = p;
    }
    return sum;
}

/* The processes' table (text and JSON) and, per relation, the largest share one holds. */
static void print_processes(exec *x, const uint64_t *all, FILE *f, FILE *j)
{
    int R = rfx_comm_size(x->o->comm), nrel = x->prog->nrels, K = NPROC_COLS + nrel;
    if (f)
        fprintf(f, "processes: %d (MPI), each holding the tuples whose placing column hashes to it\n"
                   "%8s %14s %14s %10s %14s %10s %12s %12s %14s\n",
                R, "process", "tuples held", "rows sent", "MB sent", "rows gathered", "replicated", "transfers s",
                "commands s", "rows joined");
    for (int p = 0; p < R; p++) {
        const uint64_t *v = all + (size_t)p * (size_t)K;
        if (f)
            fprintf(f, "%8d %14llu %14llu %10.1f %14llu %10llu %12.3f %12.3f %14llu\n", p,
                    (unsigned long long)v[PROC_TUPLES], (unsigned long long)v[PROC_SENT_ROWS],
                    v[PROC_SENT_BYTES] * 1e-6, (unsigned long long)v[PROC_GATHERED],
                    (unsigned long long)v[PROC_REPLICATED], v[PROC_EXCHANGE_US] * 1e-6, v[PROC_COMPUTE_US] * 1e-6,
                    (unsigned long long)v[PROC_JOINED]);
        if (j)
            fprintf(j, "%s\n  {\"process\": %d, \"tuples\": %llu, \"sent_rows\": %llu, \"sent_bytes\": %llu, "
                       "\"gathered_rows\": %llu, \"replicated_commands\": %llu, \"transfer_seconds\": %.6f, "
                       "\"command_seconds\": %.6f, \"joined_rows\": %llu, \"hot_keys\": %llu, \"spread_rows\": %llu, "
                       "\"send_phases_seconds\": {\"repeats\": %.6f, "
                       "\"to_host\": %.6f, \"bucket\": %.6f, \"all_to_all\": %.6f, \"place\": %.6f}}",
                    p ? "," : ", \"processes\": [", p, (unsigned long long)v[PROC_TUPLES],
                    (unsigned long long)v[PROC_SENT_ROWS], (unsigned long long)v[PROC_SENT_BYTES],
                    (unsigned long long)v[PROC_GATHERED], (unsigned long long)v[PROC_REPLICATED],
                    v[PROC_EXCHANGE_US] * 1e-6, v[PROC_COMPUTE_US] * 1e-6, (unsigned long long)v[PROC_JOINED],
                    (unsigned long long)v[PROC_HOT_KEYS], (unsigned long long)v[PROC_SPREAD], v[PROC_PHASE_US] * 1e-6,
                    v[PROC_PHASE_US + 1] * 1e-6, v[PROC_PHASE_US + 2] * 1e-6, v[PROC_PHASE_US + 3] * 1e-6,
                    v[PROC_PHASE_US + 4] * 1e-6);
    }
    uint64_t most, most_sent;
    int at;
    uint64_t sent = column_parts(all, R, K, PROC_SPREAD, &most_sent, &at);
    uint64_t joined = column_parts(all, R, K, PROC_JOINED, &most, &at);
    if (f && joined)
        fprintf(f, "  joins: %llu rows made, the largest part %.1f%% (process %d); %llu hot keys spread, %llu rows sent "
                   "spreading them\n",
                (unsigned long long)joined, 100.0 * (double)most / (double)joined, at,
                (unsigned long long)all[PROC_HOT_KEYS], (unsigned long long)sent);
    if (j)
        fputs("\n], \"shares\": [", j);
    bool first = true;
    for (int r = 0; r < nrel; r++) {
        uint64_t sum = column_parts(all, R, K, NPROC_COLS + r, &most, &at);
        if (!sum)
            continue;
        if (f)
            fprintf(f, "  share %s: %llu tuples, the largest part %.1f%% (process %d)\n", x->prog->rels[r].name,
                    (unsigned long long)sum, 100.0 * (double)most / (double)sum, at);
        if (j) {
            fprintf(j, "%s\n  {\"relation\": ", first ? "" : ",");
            json_string(j, x->prog->rels[r].name);
            fprintf(j, ", \"tuples\": %llu, \"largest_share\": %.6f, \"process\": %d}", (unsigned long long)sum,
                    (double)most / (double)sum, at);
        }
        first = false;
    }
    if (j)
        fputs("\n]", j);
}

static void print_profile(exec *x, double total)
{
    uint64_t *procs = gather_process_stats(x);
    if (x->rank) {
        free(procs);
        return;
    }
    double bw = x->be->copy_bandwidth(x->be);
    FILE *f = x->o->profile, *j = x->o->profile_json;
    if (f) {
        fprintf(f, "profile: %s backend on %s, %.3f s, measured copy bandwidth %.1f GB/s\n", x->be->name,
                x->be->device(x->be), total, bw);
        fprintf(f, "%-14s %8s %10s %14s %14s %12s %9s %8s\n", "operator", "calls", "seconds", "tuples in",
                "tuples out", "MB moved", "GB/s", "x floor");
    }
    int compiled = 0, cached = 0;
    double cms = 0, hms = 0;
    if (x->be->jit_stats)
        x->be->jit_stats(x->be, &compiled, &cached, &cms, &hms);
    if (j) {
        fprintf(j, "{\"rfx_version\": \"%s\", \"backend\": \"%s\", \"device\": ", RFX_VERSION_STRING, x->be->name);
        json_string(j, x->be->device(x->be));
        fprintf(j, ", \"copy_bandwidth_GBps\": %.3f, \"seconds\": %.6f, \"operators\": [", bw, total);
    }
    bool first = true;
    for (int op = 0; op < RFX_RA_NOPS + 2; op++) {
        op_stat *s = &x->stats[op];
        if (!s->calls)
            continue;
        double gbs = s->seconds > 0 ? (double)s->bytes / s->seconds * 1e-9 : 0;
        /* the time over the floor (the bytes an operator must move at least, at the copy
         * bandwidth): under 1 where it skips input (galloping joins, differences) */
        double floor_s = bw > 0 ? (double)s->bytes * 1e-9 / bw : 0;
        if (f) {
            fprintf(f, "%-14s %8llu %10.6f %14llu %14llu %12.1f %9.1f ", stat_name(op), (unsigned long long)s->calls,
                    s->seconds, (unsigned long long)s->tuples_in, (unsigned long long)s->tuples_out,
                    (double)s->bytes * 1e-6, gbs);
            if (floor_s > 0)
                fprintf(f, "%7.2fx\n", s->seconds / floor_s);
            else
                fprintf(f, "%8s\n", "-");
        }
        if (j)
            fprintf(j, "%s\n  {\"operator\": \"%s\", \"calls\": %llu, \"seconds\": %.6f, \"tuples_in\": %llu, "
                       "\"tuples_out\": %llu, \"bytes\": %llu, \"GBps\": %.3f, \"fraction_of_copy_bandwidth\": %.4f}",
                    first ? "" : ",", stat_name(op), (unsigned long long)s->calls, s->seconds,
                    (unsigned long long)s->tuples_in, (unsigned long long)s->tuples_out,
                    (unsigned long long)s->bytes, gbs, bw > 0 ? gbs / bw : 0);
        first = false;
    }
    rfx_ooc_stats oo;
    rfx_backend *dev = rfx_backend_auto_device(x->be);
    if (f && rfx_ooc_stats_of(dev ? dev : x->be, &oo) && (oo.commands || oo.spills)) {
        fprintf(f, "out of core: %zu commands in %zu parts, %zu variables moved to the host, %.1f MB to the device, "
                   "%.1f MB back", oo.commands, oo.parts, oo.spills, oo.up_bytes * 1e-6, oo.down_bytes * 1e-6);
        if (oo.host_merges)
            fprintf(f, ", %zu set operations and sorts by the host's cores", oo.host_merges);
        if (oo.host_commands)
            fprintf(f, ", %zu commands run whole by the CPU (the budget held no useful part of them)", oo.host_commands);
        if (oo.pinned_bytes > 0)
            fprintf(f, ", %.1f MB of a triejoin's host inputs registered in %.3f s as they landed", oo.pinned_bytes * 1e-6,
                    oo.pin_seconds);
        if (oo.trie_bytes > 0)
            fprintf(f, ", %.1f MB of TrieArrays made of them (and registered) in %.3f s", oo.trie_bytes * 1e-6,
                    oo.trie_seconds);
        fputc('\n', f);
    }
    if (f && x->user_fn_cmds)
        fprintf(f, "user-defined functors: %zu commands calling them ran on the host, %.3f s (their code is the "
                   "host's)\n", x->user_fn_cmds, x->user_fn_seconds);
    /* the floor of the run as a whole: its inputs (read from files or inserted) read once */
    uint64_t scan = x->stats[RFX_RA_INPUT].bytes + x->inserted_bytes;
    double scan_floor = bw > 0 ? (double)scan * 1e-9 / bw : 0;
    if (f && scan_floor > 0)
        fprintf(f, "scans: the inputs' %.1f MB, read once at the copy bandwidth, take %.3f ms; the run %.3f s, %.1fx "
                   "that floor\n", scan * 1e-6, scan_floor * 1e3, total, total / scan_floor);
    if (f && x->iterations)
        fprintf(f, "semi-naive iterations: %zu\n", x->iterations);
    if (f && x->skipped)
        fprintf(f, "skipped: %zu commands or groups whose results an empty input made empty or unneeded\n",
                x->skipped);
    if (f && x->splits)
        fprintf(f, "loops run by key ranges: %zu splits, the loop run on %zu ranges, %.3f s cutting and gathering them\n",
                x->splits, x->split_ranges, x->split_seconds);
    if (f && compiled + cached)
        fprintf(f, "fused groups' kernels: %d compiled with NVRTC (%.1f ms), %d read from the cache (%.2f ms)\n",
                compiled, cms, cached, hms);
    if (j)
        fprintf(j, "\n], \"scan_bytes\": %llu, \"scan_floor_seconds\": %.6f", (unsigned long long)scan, scan_floor);
    if (procs)
        print_processes(x, procs, f, j);
    free(procs);
    if (j)
        fprintf(j, ", \"iterations\": %zu, \"jit\": {\"compiled\": %d, \"compile_ms\": %.3f, \"cached\": %d, "
                   "\"cache_ms\": %.3f}}\n", x->iterations, compiled, cms, cached, hms);
}

/* ---- trace ------------------------------------------------------------------------------ */
/* One Chrome/Perfetto "complete" event per command: open the file in chrome://tracing or
 * ui.perfetto.dev. Commands run one after another on the backend's stream (on the GPU,
 * synchronised when tracing so each event spans its kernels). */
static void trace_event(exec *x, const rfx_ra_cmd *c, const rfx_fgroup *g, double t0, double t1)
{
    FILE *f = x->o->trace;
    if (!x->traced)
        fprintf(f, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
    int dst = g ? rfx_fgroup_output(g, 0) : c->dst;
    fprintf(f, "%s{\"name\": \"%s%s%s\", \"cat\": \"%s\", \"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, "
               "\"pid\": 1, \"tid\": 1, \"args\": {\"tuples_out\": %zu",
            x->traced ? ",\n" : "", g ? "FUSED " : rfx_ra_op_name(c->op), g ? "" : dst >= 0 ? " " : "",
            g ? g->name : dst >= 0 ? x->P->vars[dst].name : "", x->be->name, (t0 - x->t_start) * 1e6, (t1 - t0) * 1e6,
            dst >= 0 ? x->be->count(x->be, dst) : (size_t)0);
    if (c->rule >= 0)
        fprintf(f, ", \"rule_line\": %d", x->prog->clauses[c->rule].loc.line);
    fputs("}}", f);
    x->traced = true;
}

/* Pieces inside a command (a box's copy and join, a part of a partitioned operator) on
 * tracks of their own: process "GPU d", thread per lane, so copies beside kernels show. */
static void trace_span(void *ctx, const char *what, int device, int lane, size_t box, double t0, double t1)
{
    exec *x = ctx;
    FILE *f = x->o->trace;
    static const char *const lanes[3] = {"compute", "copy to device", "copy to host"};
    lane = lane < 0 || lane > 2 ? 0 : lane;
    device = device < 0 || device > 15 ? 15 : device;
    pthread_mutex_lock(&x->trace_lock);
    if (!x->traced)
        fprintf(f, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
    unsigned long long bit = 1ull << (device * 3 + lane);
    if (!(x->tracks & bit)) {
        fprintf(f, "%s{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"args\": {\"name\": \"device %d\"}},\n"
                   "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": %d, \"args\": {\"name\": \"%s\"}}",
                x->traced ? ",\n" : "", 2 + device, device, 2 + device, 1 + lane, lanes[lane]);
        x->tracks |= bit;
        x->traced = true;
    }
    fprintf(f, ",\n{\"name\": \"%s %zu\", \"cat\": \"%s\", \"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, \"pid\": %d, "
               "\"tid\": %d}",
            what, box, lanes[lane], (t0 - x->t_start) * 1e6, (t1 - t0) * 1e6, 2 + device, 1 + lane);
    pthread_mutex_unlock(&x->trace_lock);
}

static void end_trace(exec *x)
{
    FILE *f = x->o->trace;
    if (!f)
        return;
    if (!x->traced)
        fprintf(f, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [");
    fprintf(f, "\n], \"otherData\": {\"backend\": \"%s\", \"rfx_version\": \"%s\"}}\n", x->be ? x->be->name : "none",
            RFX_VERSION_STRING);
}

/* ---- progress --------------------------------------------------------------------------- */
/* Redraws one status line: what stratum, which iteration, how large the deltas are.
 * Quiet for the first half second, so short runs print nothing. */
static void show_progress(exec *x, int b, const rfx_ra_cmd *test)
{
    FILE *f = x->o->progress;
    if (!f)
        return;
    double t = rfx_seconds();
    if (t - x->t_start < 0.5 || t - x->t_progress < 0.1)
        return;
    x->t_progress = t;
    const char *label = x->P->blocks[b].label ? x->P->blocks[b].label : "";
    const char *st = strstr(label, "stratum ");
    fprintf(f, "\r\033[Krfx: %s%s", st ? "stratum " : label, st ? st + 8 : "");
    if (test) {
        fprintf(f, ", iteration %d, delta", x->iteration);
        for (int k = 0; k < test->nvars && k < 4; k++) {
            const rfx_pvar *v = &x->P->vars[test->vars[k]];
            fprintf(f, " %s %zu", v->rel >= 0 ? x->prog->rels[v->rel].name : v->name, x->be->count(x->be, test->vars[k]));
        }
        if (test->nvars > 4)
            fprintf(f, " (+%d more)", test->nvars - 4);
    }
    fprintf(f, " | %.1f s", t - x->t_start);
    fflush(f);
    x->progress_shown = true;
}

static void end_progress(exec *x)
{
    if (x->progress_shown) {
        fputs("\r\033[K", x->o->progress);
        fflush(x->o->progress);
    }
}

/* ---- the run ---------------------------------------------------------------------------- */
static rfx_status check_output_dir(exec *x)
{
    const char *d = x->o->output_dir;
    if (!d || strcmp(d, "-") == 0)
        return RFX_OK;
    struct stat sb;
    if (stat(d, &sb) != 0) {
        fprintf(x->err, "%s: error: output directory does not exist\n", d);
        return RFX_ERR_IO;
    }
    if (!S_ISDIR(sb.st_mode)) {
        fprintf(x->err, "%s: error: output directory is not a directory\n", d);
        return RFX_ERR_IO;
    }
    if (access(d, W_OK) != 0) {
        fprintf(x->err, "%s: error: output directory is not writable: %s\n", d, strerror(errno));
        return RFX_ERR_IO;
    }
    return RFX_OK;
}

rfx_backend_kind rfx_exec_backend_kind(rfx_backend_kind asked)
{
    const char *env = getenv("RFX_BACKEND");
    if (asked == RFX_BACKEND_AUTO && env)
        return strcmp(env, "cuda") == 0 ? RFX_BACKEND_CUDA : strcmp(env, "cpu") == 0 ? RFX_BACKEND_CPU : asked;
    return asked;
}

static rfx_status open_backend(exec *x)
{
    rfx_backend_kind kind = rfx_exec_backend_kind(x->o->backend);
    char why[512] = "";
    if (kind == RFX_BACKEND_AUTO)
        x->be = rfx_backend_auto(x->o, x->nthreads, rfx_device_keep_warm(x->o->keep));
    else if (kind == RFX_BACKEND_CUDA)
        x->be = rfx_backend_cuda(x->o, why, sizeof why);
    if (!x->be && kind == RFX_BACKEND_CUDA) {
        fprintf(x->err, "rfx: error: the CUDA backend cannot be used: %s\n", why[0] ? why : "unknown reason");
        return RFX_ERR_DEVICE;
    }
    if (!x->be && kind == RFX_BACKEND_CPU)
        x->be = rfx_backend_cpu(x->nthreads, x->o->device_memory, x->o->tune);
    if (x->be && kind != RFX_BACKEND_AUTO)   /* variables that do not fit the device's budget go to the host */
        x->be = rfx_backend_ooc(x->be, x->nthreads, x->o->tune);
    if (x->be && x->o->comm)   /* this process's share of a distributed run */
        x->be = rfx_backend_dist(x->be, x->o->comm, x->nthreads, x->o->tune);
    if (x->be && x->o->trace) {
        x->be->span = trace_span;
        x->be->span_ctx = x;
    }
    if (!x->be || x->be->open_vars(x->be, x->P) != RFX_OK || !plan_liveness(x) ||
        (x->o->comm && !(x->changed = rfx_malloc(sizeof(int) * ((size_t)x->P->nvars + 1))))) {
        fprintf(x->err, "rfx: error: out of memory starting the run\n");
        return RFX_ERR_NOMEM;
    }
    return RFX_OK;
}

/* ---- distributed runs: one outcome for all processes ------------------------------------- */
/* Holds the messages of the command about to run (a distributed run). */
static void hold_messages(exec *x)
{
    if (!x->o->comm)
        return;
    x->cmd_err = open_memstream(&x->ebuf, &x->elen);
    x->err = x->cmd_err ? x->cmd_err : x->real_err;
}

/* Agrees with the other processes on the outcome of what ran since the last call and, where
 * the backend holds the variables (sized), on the sizes of vars (NULL: all); the held
 * messages are written by the process that reports. *report: whether this process is the
 * one that tells a failure. */
static rfx_status settle(exec *x, const int *vars, int nvars, rfx_status st, bool sized, bool *report)
{
    *report = true;
    if (!x->o->comm)
        return st;
    int reporter = -1;
    st = sized ? x->be->settle(x->be, vars, nvars, st, &reporter) : rfx_comm_settle(x->o->comm, st, NULL, 0, &reporter);
    *report = reporter == x->rank;
    if (x->cmd_err) {
        fclose(x->cmd_err);
        if (reporter == x->rank || (reporter < 0 && !x->rank))
            fwrite(x->ebuf, 1, x->elen, x->real_err);
        free(x->ebuf);
        x->cmd_err = NULL;
        x->ebuf = NULL;
    }
    x->err = x->real_err;
    return st;
}

/* The variables a command (or group, or the clearing of a skipped one) may have changed. */
static int changed_by(exec *x, const rfx_ra_cmd *c, const rfx_fgroup *g, const rfx_hcmd *skipped)
{
    int n = 0;
    if (skipped)
        for (int k = 0; k < skipped->nclear && n < x->P->nvars; k++)
            x->changed[n++] = skipped->clear[k];
    else if (g)
        for (int m = 0; m < g->nmembers && n < x->P->nvars; m++) {
            const rfx_ra_cmd *mc = rfx_fgroup_member_cmd(x->P, g, m);
            if (mc->dst >= 0)
                x->changed[n++] = mc->dst;
        }
    else {
        if (c->dst >= 0 && c->op != RFX_RA_OUTPUT && c->op != RFX_RA_PRINTSIZE)
            x->changed[n++] = c->dst;
        if (c->op == RFX_RA_SWAP)
            x->changed[n++] = c->src[0];
    }
    return n;
}

static rfx_status merge_inserts(exec *x, const rfx_rows *inserts)
{
    for (int r = 0; inserts && r < x->prog->nrels; r++) {
        if (!inserts[r].n)
            continue;
        x->inserted_bytes += (uint64_t)inserts[r].n * (uint64_t)inserts[r].arity * 4;
        rfx_status st = rfx_backend_merge_kept(x->be, x->P->relvar[r], &inserts[r], x->nthreads);
        if (st != RFX_OK) {
            fprintf(x->err, "rfx: error: %s loading the tuples inserted into %s\n",
                    st == RFX_ERR_NOMEM ? "out of memory" : "device failure", x->prog->rels[r].name);
            return st;
        }
    }
    return RFX_OK;
}

/* Names what was being computed, from what, and how large. */
static void report_failure(exec *x, const rfx_ra_cmd *c, const rfx_fgroup *g, rfx_status st)
{
    const rfx_plan *P = x->P;
    const rfx_clause *cl = rule_of(x, c);
    if (st == RFX_ERR_DIV0) {   /* a division by zero, or a functor that failed */
        rfx_diag d = {.file = x->prog->file, .src = x->prog->src, .out = x->err, .map = &x->prog->lines,
                      .instance = cl ? cl->instance : NULL};
        /* a 64-bit aggregate fails only where its sum leaves its kind's range */
        const char *why = c && c->op == RFX_RA_AGGREGATE ? "a 64-bit sum overflows" : rfx_fn_env_error(P->fn_env);
        rfx_diag_error(&d, cl ? cl->loc : (rfx_loc){0, 0}, "%s while evaluating this rule",
                       why ? why : "division by zero");
        return;
    }
    if (st == RFX_ERR_IO || st == RFX_ERR_INPUT)
        return;     /* reported where they happened */
    fprintf(x->err, "rfx: error: %s in %s",
            st == RFX_ERR_NOMEM ? "out of memory" : st == RFX_ERR_LIMIT ? "size limit exceeded"
            : st == RFX_ERR_DEVICE ? "device failure" : st == RFX_ERR_REMOTE ? "a failure of the MPI job's transfers"
            : "internal error (a bug of rfx: please report it)",
            g ? (g->kind == RFX_FG_JOIN ? "fused JOIN" : "fused FILTER") : rfx_ra_op_name(c->op));
    if (g) {   /* what the group reads, not the anchor's operands (fused away) */
        fprintf(x->err, " %s computing %s from", g->name, P->vars[rfx_fgroup_output(g, 0)].name);
        for (int k = 0; k < rfx_fgroup_ninputs(g); k++)
            fprintf(x->err, "%s %s (%zu tuples)", k ? "," : "", P->vars[rfx_fgroup_input(g, k)].name,
                    x->be->count(x->be, rfx_fgroup_input(g, k)));
    } else {
        if (c->dst >= 0)
            fprintf(x->err, " computing %s", P->vars[c->dst].name);
        for (int k = 0; k < 2; k++)
            if (c->src[k] >= 0)
                fprintf(x->err, "%s %s (%zu tuples)", k ? " and" : " from", P->vars[c->src[k]].name,
                        x->be->count(x->be, c->src[k]));
    }
    if (cl)
        fprintf(x->err, ", for the rule at %s:%d", x->prog->file, cl->loc.line);
    const char *why = x->be->last_error(x->be);
    fprintf(x->err, " on the %s backend%s%s\n", x->be->name, why && *why ? ": " : "", why ? why : "");
}

/* ---- loops run by key ranges ------------------------------------------------------------- */
/* A loop whose relation r keeps a column along its recursion (ra_ir/split.c) and has grown
 * past a quarter of the backend's budget runs on from here one range of that column's
 * values at a time: the state of the semi-naive loop (r and delta_r) is cut into ranges of
 * about a sixteenth of the budget each, and the loop runs to its fixpoint on each range's
 * part alone. No derivation leaves its range, so the parts' fixpoints together are the
 * whole loop's; each part's relation, join outputs and sorts fit where the whole loop's
 * would have gone out of core every iteration (transitive closure of p2p-Gnutella31 under a
 * 4 GB cap: every iteration merged and checked all 7 GB of paths on the host). A range that
 * outgrows the quarter again is cut again the same way. */
#define SPLIT_FROM 4   /* r past budget / SPLIT_FROM bytes: split */
#define SPLIT_TO 16    /* into ranges of about budget / SPLIT_TO bytes */

typedef struct loop_split {
    int rel, col;              /* the relation and the column it keeps */
    int full, delta, fresh;    /* its REL, DELTA and NEW variables */
    int head, exit;            /* the loop body's first block; where the loop exits */
} loop_split;

static rfx_status interpret_from(exec *x, int b, int stop);

/* Whether the loop tested by c (in a block of loop head `head`) is to be split now. */
static bool split_wanted(exec *x, const rfx_ra_cmd *c, int head, loop_split *ls)
{
    const rfx_plan *P = x->P;
    size_t budget = x->be->budget ? x->be->budget(x->be) : 0;
    if (x->no_split || !budget || c->nvars != 1 || P->vars[c->vars[0]].kind != RFX_PV_DELTA)
        return false;
    int r = P->vars[c->vars[0]].rel;
    if (r < 0 || P->split_col[r] < 0)
        return false;
    *ls = (loop_split){r, P->split_col[r], P->relvar[r], c->vars[0], -1, head, c->target};
    for (int v = 0; v < P->nvars; v++)
        if (P->vars[v].kind == RFX_PV_NEW && P->vars[v].rel == r)
            ls->fresh = v;
    size_t bytes = x->be->count(x->be, ls->full) * sizeof(uint32_t) * (size_t)P->vars[ls->full].arity;
    /* one that could not be cut is tried again only once it has doubled */
    return ls->fresh >= 0 && bytes > budget / SPLIT_FROM && (!x->unsplit_bytes || bytes > 2 * x->unsplit_bytes[r]);
}

/* Variable v's rows, moved to the host (v is left empty). */
static rfx_status take_rows(exec *x, int v, rfx_rows *out)
{
    rfx_rows_init(out, x->P->vars[v].arity);
    if (x->be->take_host)
        return x->be->take_host(x->be, v, out);
    rfx_rows scratch;
    rfx_rows_init(&scratch, x->P->vars[v].arity);
    const rfx_rows *view;
    rfx_status st = x->be->host_view(x->be, v, &scratch, &view);
    if (st == RFX_OK && view == &scratch)
        rfx_rows_swap(out, &scratch);
    else if (st == RFX_OK)
        st = rfx_rows_append_parallel(out, view, x->nthreads);
    rfx_rows_free(&scratch);
    x->be->release(x->be, v);
    return st;
}

/* Cuts the values of r's column col into at most k ranges of about as many rows each,
 * range i from cuts[i] to cuts[i + 1] (excluded; the last ends at 2^32), each starting at a
 * new value; returns how many (1: the rows hold one value, or no memory to sort them). */
static size_t range_cuts(exec *x, const rfx_rows *r, int col, size_t k, uint64_t *cuts)
{
    rfx_rows vals;
    rfx_rows_init(&vals, 1);
    const uint32_t *v = r->data + col;
    size_t stride = (size_t)r->arity;
    if (col != 0) {   /* r is in order of column 0 only: sort a copy of the column */
        if (rfx_rows_reserve(&vals, r->n) != RFX_OK)
            return 1;
        for (size_t i = 0; i < r->n; i++)
            vals.data[i] = r->data[i * stride + (size_t)col];
        vals.n = r->n;
        if (rfx_cpu_sort(&vals, x->nthreads) != RFX_OK) {
            rfx_rows_free(&vals);
            return 1;
        }
        v = vals.data;
        stride = 1;
    }
    size_t n = 1;
    cuts[0] = 0;
    for (size_t j = 1; j < k; j++) {
        uint64_t at = v[(r->n * j / k) * stride];
        if (at > cuts[n - 1])
            cuts[n++] = at;
    }
    cuts[n] = (uint64_t)UINT32_MAX + 1;
    rfx_rows_free(&vals);
    return n;
}

/* The first row of r (in order) whose column 0 is >= v (v up to 2^32). */
static size_t first_row_from(const rfx_rows *r, uint64_t v)
{
    const uint32_t key = (uint32_t)v;
    return v > UINT32_MAX ? r->n : rfx_rows_bound(r, 0, &key, 1, false);
}

/* The rows of r whose column col lies in [lo, hi), in order: for column 0 a view of r's
 * rows (out->cap 0: nothing to free), else a copy. */
static rfx_status rows_in_range(const rfx_rows *r, int col, uint64_t lo, uint64_t hi, rfx_rows *out)
{
    rfx_rows_init(out, r->arity);
    size_t a = (size_t)r->arity, n = 0;
    if (col == 0) {
        size_t i = first_row_from(r, lo), j = first_row_from(r, hi);
        *out = (rfx_rows){r->data + i * a, j - i, 0, r->arity};
        return RFX_OK;
    }
    for (size_t i = 0; i < r->n; i++)
        n += r->data[i * a + (size_t)col] >= lo && r->data[i * a + (size_t)col] < hi;
    rfx_status st = rfx_rows_reserve(out, n);
    for (size_t i = 0; st == RFX_OK && i < r->n; i++)
        if (r->data[i * a + (size_t)col] >= lo && r->data[i * a + (size_t)col] < hi)
            memcpy(out->data + out->n++ * a, r->data + i * a, sizeof(uint32_t) * a);
    return st;
}

/* Runs the rest of loop ls range by range (*split: false when its rows hold one value of
 * the column, and the loop goes on whole). Reports its failures. */
static rfx_status split_loop(exec *x, const loop_split *ls, bool *split)
{
    bool inner_failed = false;
    double t0 = rfx_seconds(), in_loops = 0;
    const rfx_plan *P = x->P;
    rfx_backend *be = x->be;
    size_t budget = be->budget(be), arity = (size_t)P->vars[ls->full].arity;
    rfx_rows full, delta, done;
    rfx_rows_init(&done, (int)arity);
    rfx_status st = take_rows(x, ls->full, &full);
    if (st == RFX_OK)
        st = take_rows(x, ls->delta, &delta);
    else
        rfx_rows_init(&delta, (int)arity);
    size_t part = budget / SPLIT_TO > 0 ? budget / SPLIT_TO : 1, bytes = full.n * sizeof(uint32_t) * arity;
    size_t k = bytes / part + 1 < 2 ? 2 : bytes / part + 1, nr = 1;
    uint64_t *cuts = st == RFX_OK ? rfx_malloc(sizeof(uint64_t) * (k + 1)) : NULL;
    /* per range, its rows once done: a view of full's (nothing new in it) or the loop's */
    rfx_rows *got = st == RFX_OK ? rfx_calloc(k, sizeof(rfx_rows)) : NULL;
    if (st == RFX_OK && (!cuts || !got))
        st = RFX_ERR_NOMEM;
    if (st == RFX_OK)
        nr = range_cuts(x, &full, ls->col, k, cuts);
    *split = st == RFX_OK && nr > 1;
    if (*split) {
        x->splits++;
        be->release(be, ls->fresh);
    } else if (st == RFX_OK) {   /* one value: the loop goes on whole with its state put back */
        if (!x->unsplit_bytes)
            x->unsplit_bytes = rfx_calloc((size_t)x->prog->nrels + 1, sizeof(size_t));
        if (x->unsplit_bytes)
            x->unsplit_bytes[ls->rel] = bytes;
        st = be->merge_host(be, ls->full, &full);
        if (st == RFX_OK)
            st = be->merge_host(be, ls->delta, &delta);
    }
    for (size_t i = 0; *split && st == RFX_OK && i < nr; i++) {
        rfx_rows f, d;
        st = rows_in_range(&full, ls->col, cuts[i], cuts[i + 1], &f);
        if (st == RFX_OK)
            st = rows_in_range(&delta, ls->col, cuts[i], cuts[i + 1], &d);
        else
            rfx_rows_init(&d, (int)arity);
        if (st == RFX_OK && d.n == 0) {   /* nothing new in this range: its facts are final */
            rfx_rows_swap(&got[i], &f);
        } else if (st == RFX_OK) {
            x->split_ranges++;
            st = be->load_host(be, ls->full, &f);
            if (st == RFX_OK)
                st = be->load_host(be, ls->delta, &d);
            double t1 = rfx_seconds();
            if (st == RFX_OK)
                inner_failed = (st = interpret_from(x, ls->head, ls->exit)) != RFX_OK;
            in_loops += rfx_seconds() - t1;
            if (st == RFX_OK)
                st = take_rows(x, ls->full, &got[i]);
            be->release(be, ls->full);
            be->release(be, ls->delta);
            be->release(be, ls->fresh);
        }
        if (ls->col != 0) {   /* column 0's ranges are views of full and delta */
            rfx_rows_free(&f);
            rfx_rows_free(&d);
        }
    }
    /* the ranges' rows copied once, into a buffer of their total size */
    if (*split && st == RFX_OK)
        st = rfx_rows_concat(got, nr, &done, x->nthreads);
    for (size_t i = 0; got && i < nr; i++)
        if (got[i].cap)   /* views (cap 0) are full's */
            rfx_rows_free(&got[i]);
    free(got);
    rfx_rows_free(&full);
    rfx_rows_free(&delta);
    free(cuts);
    if (*split && st == RFX_OK && ls->col != 0)   /* ranges of another column interleave in r's order */
        st = rfx_cpu_sort(&done, x->nthreads);
    if (*split && st == RFX_OK)   /* full is empty: its rows become done's, not a copy of them */
        st = be->merge_host(be, ls->full, &done);
    rfx_rows_free(&done);
    x->split_seconds += rfx_seconds() - t0 - in_loops;
    if (st != RFX_OK && !inner_failed)   /* the loop's own failures were reported where they happened */
        fprintf(x->err, "rfx: error: %s running the loop of %s by ranges of $%d on the %s backend%s%s\n",
                st == RFX_ERR_NOMEM ? "out of memory" : "device failure", P->vars[ls->full].name, ls->col, be->name,
                be->last_error(be) && *be->last_error(be) ? ": " : "", be->last_error(be) ? be->last_error(be) : "");
    return st;
}

static size_t var_rows(void *be, int v)
{
    return ((rfx_backend *)be)->count(be, v);
}

/* Empties what a command or group whose guard holds would have written. */
static rfx_status skip_cmd(exec *x, const rfx_hcmd *hc)
{
    x->skipped++;
    for (int k = 0; k < hc->nclear; k++) {
        rfx_ra_cmd clr = {.op = RFX_RA_CLEAR, .dst = hc->clear[k], .src = {-1, -1}, .rule = -1, .io = -1};
        rfx_status st = x->be->count(x->be, clr.dst) ? x->be->exec(x->be, &clr) : RFX_OK;
        if (st != RFX_OK)
            return st;
    }
    return RFX_OK;
}

/* Runs blocks from b on until control reaches block stop (-1: to HALT). */
static rfx_status interpret_from(exec *x, int b, int stop)
{
    const rfx_plan *P = x->P;
    bool profile = x->o->profile || x->o->profile_json || x->o->trace;
    int i = 0;
    while (b < P->nblocks && b != stop) {
        const rfx_block *blk = &P->blocks[b];
        if (i >= blk->ncmds) {
            b++;
            i = 0;
            continue;
        }
        if (i == 0 && blk->loop_head != x->loop_block) {
            x->loop_block = blk->loop_head;
            x->iteration = 0;
        }
        const rfx_ra_cmd *c = &blk->cmds[i];
        if (c->op == RFX_RA_HALT)
            break;
        if (c->op == RFX_RA_JUMP) {
            b = c->target;
            i = 0;
            continue;
        }
        if (c->op == RFX_RA_JUMP_IF_FULL) {
            bool full = false;
            for (int k = 0; k < c->nvars && !full; k++) {
                int64_t limit = x->prog->rels[P->vars[c->vars[k]].rel].limitsize;
                full = limit >= 0 && x->be->count(x->be, c->vars[k]) >= (size_t)limit;
            }
            b = full ? c->target : b;
            i = full ? 0 : i + 1;
            continue;
        }
        if (c->op == RFX_RA_JUMP_IF_EMPTY) {
            x->iteration++;
            show_progress(x, b, c);
            bool split = false;
            size_t delta_rows = 0;
            for (int k = 0; k < c->nvars; k++)
                delta_rows += x->be->count(x->be, c->vars[k]);
            bool empty = delta_rows == 0;
            x->iterations += !empty;
            if (x->be->loop_iteration)
                x->be->loop_iteration(x->be, empty ? 0 : x->iteration, delta_rows, c);
            loop_split ls;
            if (!empty && split_wanted(x, c, blk->loop_head, &ls)) {
                rfx_status st = split_loop(x, &ls, &split);
                if (st != RFX_OK)
                    return st;
            }
            if (empty || split) {
                b = c->target;
                i = 0;
                continue;
            }
            i++;
            continue;
        }
        if (i == 0)
            show_progress(x, b, NULL);
        /* a fused group runs at its anchor; its other commands are skipped */
        const rfx_hcmd *hc = &x->H->blocks[b].cmds[i];
        const rfx_fgroup *g = hc->group;
        bool member = !hc->runs, skip = member, guarded = false;   /* a member runs in its group */
        rfx_status st = RFX_OK;
        if (!member)
            hold_messages(x);
        if (!skip && hc->nclauses && rfx_hcmd_skippable(hc, var_rows, x->be)) {
            skip = guarded = true;
            st = skip_cmd(x, hc);
        }
        double t0 = profile && !skip ? rfx_seconds() : 0;
        if (!skip)
            st = g ? x->be->exec_group(x->be, g) : run_cmd(x, c);
        double t1 = 0;
        if (profile && !skip) {
            if (st == RFX_OK)
                st = x->be->sync(x->be);
            t1 = rfx_seconds();
        }
        bool report = true;
        if (x->o->comm && !member)   /* before the profile counts what the command wrote */
            st = settle(x, x->changed, changed_by(x, c, g, guarded ? hc : NULL), st, true, &report);
        if (profile && !skip) {
            if (g)
                count_group_stats(x, g, t1 - t0);
            else
                count_stats(x, c, t1 - t0);
            if (x->o->trace)
                trace_event(x, c, g, t0, t1);
        }
        if (st != RFX_OK) {
            if (report)
                report_failure(x, c, g, st);
            return st;
        }
        for (const int *f = x->frees[b].list + x->frees[b].start[i]; *f >= 0; f++)
            x->be->release(x->be, *f);
        i++;
    }
    return RFX_OK;
}

/* Every INPUT command of the plan, in plan order, and nothing else. */
static rfx_status read_inputs(exec *x)
{
    for (int b = 0; b < x->P->nblocks; b++)
        for (int i = 0; i < x->P->blocks[b].ncmds; i++) {
            const rfx_ra_cmd *c = &x->P->blocks[b].cmds[i];
            if (c->op != RFX_RA_INPUT)
                continue;
            hold_messages(x);
            rfx_status st = run_cmd(x, c);
            if (st != RFX_OK) {
                report_failure(x, c, NULL, st);
                return st;
            }
        }
    return RFX_OK;
}

rfx_status rfx_exec_run(const rfx_plan *P, rfx_program *prog, const rfx_run_opts *o, const rfx_rows *inserts,
                        rfx_exec **keep)
{
    if (keep)
        *keep = NULL;
    exec *x = rfx_calloc(1, sizeof *x);
    FILE *err = o->err ? o->err : stderr;
    if (!x) {
        int reporter = -1;   /* the others of a distributed run learn it where they agree on the start */
        if (o->comm)
            rfx_comm_settle(o->comm, RFX_ERR_NOMEM, NULL, 0, &reporter);
        if (reporter < 0 || reporter == rfx_comm_rank(o->comm))
            fprintf(err, "rfx: error: out of memory starting the run\n");
        return RFX_ERR_NOMEM;
    }
    *x = (exec){.P = P, .prog = prog, .opts = *o, .err = err, .out = o->out, .loop_block = -1, .real_err = err,
                .rank = rfx_comm_rank(o->comm), .profiling = o->profile || o->profile_json};
    if (x->rank) {   /* process 0 shows the run */
        x->opts.progress = NULL;
        x->opts.trace = NULL;
    }
    if (!x->opts.tune)
        x->opts.tune = &rfx_tuning_defaults;
    x->o = &x->opts;
    x->no_split = !x->o->tune->split_loops || o->comm;   /* ranges of a loop are one process's plan */
    pthread_mutex_init(&x->trace_lock, NULL);
    x->nthreads = o->nthreads > 0 ? o->nthreads : 1;
    x->t_start = rfx_seconds();
    rfx_fn_env_reset(P->fn_env);
    hold_messages(x);
    rfx_status st = check_output_dir(x);
    x->H = o->harmony;
    if (st == RFX_OK && !x->H) {   /* weave and lower here what the caller did not */
        if (!o->no_fuse)
            x->own_weave = rfx_weave_build(P, &(rfx_weave_opts){.join_groups = x->o->tune->join_groups});
        if ((o->no_fuse || x->own_weave) && (x->own_harmony = rfx_harmony_build(P, x->own_weave)))
            x->H = x->own_harmony;
        else {
            fprintf(err, "rfx: error: out of memory fusing the plan's kernels\n");
            st = RFX_ERR_NOMEM;
        }
    }
    if (st == RFX_OK)
        st = open_backend(x);
    bool report;
    st = settle(x, NULL, 0, st, false, &report);
    if (st == RFX_OK) {
        hold_messages(x);
        st = settle(x, NULL, 0, merge_inserts(x, inserts), true, &report);
    }
    if (st == RFX_OK && o->inputs_only)
        st = read_inputs(x);
    else if (st == RFX_OK)
        st = interpret_from(x, 0, -1);
    end_progress(x);
    end_trace(x);
    if (x->be && x->profiling)
        print_profile(x, rfx_seconds() - x->t_start);
    if (st == RFX_OK && keep)
        *keep = x;
    else
        rfx_exec_free(x);
    return st;
}

size_t rfx_exec_count(rfx_exec *x, int rel)
{
    return x->be->count(x->be, x->P->relvar[rel]);
}

rfx_status rfx_exec_view(rfx_exec *x, int rel, rfx_rows *scratch, const rfx_rows **view)
{
    return x->be->host_view(x->be, x->P->relvar[rel], scratch, view);
}

rfx_status rfx_exec_rows(rfx_exec *x, int rel, rfx_rows *rows)
{
    rfx_rows scratch;
    rfx_rows_init(&scratch, rows->arity);
    const rfx_rows *view;
    rfx_status st = rfx_exec_view(x, rel, &scratch, &view);
    if (st == RFX_OK && view == &scratch)
        rfx_rows_swap(rows, &scratch);
    else if (st == RFX_OK && (st = rfx_rows_reserve(rows, view->n)) == RFX_OK) {
        if (view->arity)
            rfx_memcpy(rows->data, view->data, sizeof(uint32_t) * view->n * (size_t)view->arity);
        rows->n = view->n;
    }
    rfx_rows_free(&scratch);
    return st;
}

void rfx_exec_free(rfx_exec *x)
{
    if (!x)
        return;
    if (x->be)
        x->be->close(x->be);
    free_liveness(x);
    free(x->unsplit_bytes);
    free(x->changed);
    rfx_harmony_free(x->own_harmony);
    rfx_weave_free(x->own_weave);
    pthread_mutex_destroy(&x->trace_lock);
    free(x);
}
