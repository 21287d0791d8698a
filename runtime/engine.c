/* engine.c: the public C API (rfx.h) over the front end, the planner and the runtime.
 * An engine holds one program, its plan, the tuples inserted so far and the state of
 * its last run; every message of a call is kept as text for rfx_errmsg. */
#include "backend.h"
#include "base.h"
#include "comm.h"
#include "harmony.h"
#include "rfx.h"

#include <stdarg.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct rfx_engine {
    rfx_config cfg;
    /* owned copies of the config's strings */
    char *fact_dir, *output_dir, *macros, *include_dirs, *library_dirs, *libraries;
    rfx_functor_libs *functor_libs;   /* the libraries of user-defined functors, opened on the first run */
    int devices[16];               /* a copy of the config's device list */
    int nthreads;
    rfx_program *prog;
    /* the program's stages, built once when it is loaded (again when a count-only relation
     * gets inserted tuples): the plan, the weave the runs fuse by (NULL with no_fuse) and
     * the Harmony IR of the two, which --emit=harmony prints */
    rfx_plan *plan;
    rfx_weave *weave;
    rfx_harmony *harmony;
    rfx_rows *inserts;             /* per program relation */
    bool *inserts_unsorted;        /* per relation: appended to since the last sort */
    rfx_exec *result;              /* state after the last successful run */
    rfx_device_keep *keep;         /* device contexts kept between runs (NULL: none) */
    struct rfx_comm *comm;         /* the processes a run spreads over (cfg.alone: NULL) */
    bool ran;                      /* a run finished (result may be empty after a failed one) */
    bool inputs_read;              /* rfx_read_inputs moved the .input files into inserts: runs read none */
    bool quiet;                    /* messages held back from cfg.diag: a distributed run's processes
                                    * but process 0, outside rfx_exec_run (which settles its own);
                                    * at the end of a call they agree whether one of them tells
                                    * its messages (agreed) */
    size_t msg_told;               /* the part of msg written to cfg.diag so far */
    FILE *diag;                    /* writes into msg, and to cfg.diag too */
    char *msg;                     /* messages of the current call, NUL-terminated */
    size_t msg_len, msg_cap;
    bool msg_oom;
    rfx_tuning tune;               /* the defaults with the config's tune settings applied */
    char tune_error[256];          /* why those settings were refused ("": they were not) */
};

struct rfx_cursor {
    rfx_rows rows;                 /* the snapshot */
    size_t *order;                 /* typed output order, or NULL for stored order */
    size_t next;
    rfx_value *row;                /* the current tuple */
    const rfx_prim *types;         /* the relation's column types (owned by the plan) */
    const rfx_symtab *syms;
};

const char *rfx_version(void)
{
    return RFX_VERSION_STRING;
}

void rfx_describe(FILE *out)
{
    char dev[256] = "";
    bool cuda = rfx_cuda_available(dev, sizeof dev);
    int rt = 0, drv = 0;
    bool have_driver = rfx_cuda_versions(&rt, &drv);
    fprintf(out, "rfx %s\nbackends: cpu (available), cuda (%s%s)\n", RFX_VERSION_STRING,
            cuda ? "available: " : RFX_WITH_CUDA ? "built in; no device found" : "not built in", dev);
    if (RFX_WITH_CUDA) {
        fprintf(out, "CUDA: runtime %d.%d, driver ", rt / 1000, rt % 1000 / 10);
        if (have_driver)
            fprintf(out, "%d.%d\n", drv / 1000, drv % 1000 / 10);
        else
            fputs("none\n", out);
    }
}

/* ---- messages ------------------------------------------------------------------------- */
static ssize_t diag_write(void *cookie, const char *buf, size_t n)
{
    rfx_engine *e = cookie;
    if (e->cfg.diag && !e->quiet)
        fwrite(buf, 1, n, e->cfg.diag);
    if (e->msg_oom)
        return (ssize_t)n;
    size_t cap = e->msg_cap;
    if (!rfx_grow((void **)&e->msg, &cap, e->msg_len + n + 1, 1)) {
        e->msg_oom = true;
        return (ssize_t)n;
    }
    e->msg_cap = cap;
    memcpy(e->msg + e->msg_len, buf, n);
    e->msg_len += n;
    if (!e->quiet)
        e->msg_told = e->msg_len;
    e->msg[e->msg_len] = 0;
    return (ssize_t)n;
}

/* A distributed run's processes make each call together; a call that failed on one of them
 * fails on all, with the result of the lowest-ranked process that failed, which alone
 * writes its messages (process 0 where none failed: warnings). Alone: r. */
static rfx_result agreed(rfx_engine *e, rfx_result r)
{
    if (!e->comm)
        return r;
    fflush(e->diag);
    int reporter = -1;
    rfx_status st = rfx_comm_settle(e->comm, (rfx_status)r, NULL, 0, &reporter);
    int me = rfx_comm_rank(e->comm);
    if (e->cfg.diag && (reporter == me || (reporter < 0 && me == 0)) && e->msg && e->msg_len > e->msg_told)
        fwrite(e->msg + e->msg_told, 1, e->msg_len - e->msg_told, e->cfg.diag);
    e->msg_told = e->msg_len;
    return st == RFX_ERR_REMOTE ? RFX_EXIT_RESOURCE : (rfx_result)st;
}

static void begin_call(rfx_engine *e)
{
    fflush(e->diag);
    e->msg_len = e->msg_told = 0;
    e->msg_oom = false;
    if (e->msg)
        e->msg[0] = 0;
}

static rfx_result end_call(rfx_engine *e, rfx_result r)
{
    fflush(e->diag);
    if (e->cfg.diag)
        fflush(e->cfg.diag);
    return r;
}

__attribute__((format(printf, 3, 4))) static rfx_result fail(rfx_engine *e, rfx_result r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("rfx: error: ", e->diag);
    vfprintf(e->diag, fmt, ap);
    fputc('\n', e->diag);
    va_end(ap);
    return end_call(e, r);
}

struct rfx_output {
    rfx_outfile o;
};

rfx_output *rfx_output_open(const char *path, FILE **f, char *err, size_t errlen)
{
    rfx_output *o = rfx_malloc(sizeof *o);
    if (!o) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (!rfx_outfile_open(&o->o, path, false, err, errlen)) {
        free(o);
        return NULL;
    }
    *f = o->o.f;
    return o;
}

bool rfx_output_close(rfx_output *o, bool keep, char *err, size_t errlen)
{
    bool ok = rfx_outfile_close(&o->o, keep, err, errlen);
    free(o);
    return ok;
}

int rfx_remove_unfinished_outputs(void)
{
    return rfx_outfile_remove_unfinished();
}

bool rfx_compiles_pending(void)
{
    return rfx_backend_cuda_compiling();
}

const char *rfx_errmsg(const rfx_engine *e)
{
    if (!e)
        return "rfx: error: no engine (rfx_open ran out of memory)\n";
    if (e->msg_oom)
        return "rfx: error: out of memory keeping the messages\n";
    return e->msg ? e->msg : "";
}

/* ---- engines -------------------------------------------------------------------------- */
bool rfx_tune_check(const char *tune, char *err, size_t errcap)
{
    rfx_tuning t = rfx_tuning_defaults;
    return rfx_tuning_parse(&t, tune, err, errcap);
}

void rfx_tune_describe(FILE *out)
{
    rfx_tuning_describe(out);
}

bool rfx_fault_status(long *calls)
{
    if (calls)
        *calls = rfx_fault_calls();
    return rfx_fault_fired();
}

void rfx_config_init(rfx_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->backend = RFX_BACKEND_AUTO;
}

static char *dup_or_null(const char *s, bool *ok)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = rfx_malloc(n);
    if (d)
        memcpy(d, s, n);
    else
        *ok = false;
    return d;
}

static rfx_engine *open_engine(const rfx_config *cfg);

rfx_engine *rfx_open(const rfx_config *cfg)
{
    rfx_engine *e = open_engine(cfg);
    rfx_comm *comm = cfg && cfg->alone ? NULL : rfx_comm_world();
    int reporter;
    if (comm && rfx_comm_settle(comm, e ? RFX_OK : RFX_ERR_NOMEM, NULL, 0, &reporter) != RFX_OK) {
        rfx_close(e);   /* engines open on every process of a distributed run or on none */
        return NULL;
    }
    return e;
}

static rfx_engine *open_engine(const rfx_config *cfg)
{
    rfx_engine *e = rfx_calloc(1, sizeof *e);
    if (!e)
        return NULL;
    if (cfg)
        e->cfg = *cfg;
    else
        rfx_config_init(&e->cfg);
    bool ok = true;
    e->fact_dir = dup_or_null(e->cfg.fact_dir, &ok);
    e->output_dir = dup_or_null(e->cfg.output_dir, &ok);
    e->macros = dup_or_null(e->cfg.macros, &ok);
    e->include_dirs = dup_or_null(e->cfg.include_dirs, &ok);
    e->library_dirs = dup_or_null(e->cfg.library_dirs, &ok);
    e->libraries = dup_or_null(e->cfg.libraries, &ok);
    e->cfg.fact_dir = e->fact_dir;
    e->cfg.output_dir = e->output_dir;
    e->cfg.macros = e->macros;
    e->cfg.include_dirs = e->include_dirs;
    e->cfg.library_dirs = e->library_dirs;
    e->cfg.libraries = e->libraries;
    e->cfg.tune = NULL;   /* applied here; the string is not kept */
    e->tune = rfx_tuning_defaults;
    if (cfg && !rfx_tuning_parse(&e->tune, cfg->tune, e->tune_error, sizeof e->tune_error) && !e->tune_error[0])
        snprintf(e->tune_error, sizeof e->tune_error, "bad tuning settings");
    if (e->cfg.ndevices > 16 || (e->cfg.ndevices > 0 && !e->cfg.devices))
        ok = false;     /* reported by rfx_open's failure below (NULL) */
    else if (e->cfg.ndevices > 0) {
        memcpy(e->devices, e->cfg.devices, sizeof(int) * (size_t)e->cfg.ndevices);
        e->cfg.devices = e->devices;
    }
    e->comm = e->cfg.alone ? NULL : rfx_comm_world();
    e->quiet = rfx_comm_rank(e->comm) > 0;
    e->nthreads = e->cfg.threads;
    if (e->nthreads <= 0) {   /* the processes of a distributed run on one host share its cores */
        long online = sysconf(_SC_NPROCESSORS_ONLN), n = online / rfx_comm_local_size(e->comm);
        cpu_set_t mine;       /* ... unless the launcher bound each to cores of its own */
        if (sched_getaffinity(0, sizeof mine, &mine) == 0 && CPU_COUNT(&mine) < online)
            n = CPU_COUNT(&mine);
        e->nthreads = n > 0 ? (int)(n > 256 ? 256 : n) : 1;
    }
    cookie_io_functions_t io = {.write = diag_write};
    e->diag = ok ? fopencookie(e, "w", io) : NULL;
    if (!e->diag) {
        free(e->fact_dir);
        free(e->output_dir);
        free(e->macros);
        free(e->include_dirs);
        free(e->library_dirs);
        free(e->libraries);
        free(e);
        return NULL;
    }
    setvbuf(e->diag, NULL, _IONBF, 0);   /* messages reach cfg.diag as they happen */
    if (e->cfg.backend != RFX_BACKEND_CPU)
        e->keep = rfx_device_keep_new();   /* NULL (none kept) without CUDA */
    /* the CUDA backend's driver starts while the program is parsed, planned and its facts
     * read (a distributed run's device is known once its processes are counted: not here).
     * Not auto's: a process that made a context pays its teardown as it ends, used or not,
     * more than a small program's whole run; auto starts the device once it pays. */
    if (rfx_exec_backend_kind(e->cfg.backend) == RFX_BACKEND_CUDA && !e->comm)
        rfx_backend_cuda_warm(e->cfg.devices, e->cfg.ndevices);
    return e;
}

static void free_inserts(rfx_engine *e)
{
    rfx_device_keep_forget_inputs(e->keep);
    if (e->inserts && e->prog)
        for (int r = 0; r < e->prog->nrels; r++)
            rfx_rows_free(&e->inserts[r]);
    free(e->inserts);
    free(e->inserts_unsorted);
}

/* Frees e's stages and sets them (the given ones may be NULL). */
static void set_stages(rfx_engine *e, rfx_plan *plan, rfx_weave *weave, rfx_harmony *harmony)
{
    rfx_harmony_free(e->harmony);
    rfx_weave_free(e->weave);
    rfx_plan_free(e->plan);
    e->plan = plan;
    e->weave = weave;
    e->harmony = harmony;
}

void rfx_close(rfx_engine *e)
{
    if (!e)
        return;
    rfx_exec_free(e->result);
    rfx_device_keep_free(e->keep);
    e->keep = NULL;
    free_inserts(e);
    set_stages(e, NULL, NULL, NULL);
    rfx_program_free(e->prog);
    fclose(e->diag);
    free(e->msg);
    free(e->fact_dir);
    free(e->output_dir);
    free(e->macros);
    free(e->include_dirs);
    free(e->library_dirs);
    free(e->libraries);
    rfx_functor_libs_free(e->functor_libs);
    free(e);
    rfx_backend_cuda_settle();   /* no compile left at work for exit() to run NVRTC's destructors under */
}

/* ---- programs ------------------------------------------------------------------------- */
/* Plans prog, weaves the plan (unless fusion is off) and lowers both to Harmony, into
 * e's stages (the old ones freed); false, with e's stages untouched, on failure (err says
 * whether it was a bug). */
static bool build_stages(rfx_engine *e, const rfx_program *prog, bool keep_all_tuples, rfx_plan_error *err)
{
    rfx_plan_opts po = {.no_passes = e->cfg.no_opt,
                        .no_fuse_maps = e->cfg.no_fuse,
                        .join = e->cfg.join == RFX_JOIN_BINARY ? RFX_PLAN_JOIN_BINARY
                              : e->cfg.join == RFX_JOIN_LFTJ ? RFX_PLAN_JOIN_LFTJ : RFX_PLAN_JOIN_AUTO,
                        .no_count_only = keep_all_tuples,
                        .results_only = e->cfg.results_only};
    rfx_plan *plan = rfx_plan_build(prog, &po, err);
    rfx_weave *weave = NULL;
    rfx_harmony *harmony = NULL;
    if (plan && !e->cfg.no_fuse)
        weave = rfx_weave_build(plan, &(rfx_weave_opts){.join_groups = e->tune.join_groups});
    if (plan && (weave || e->cfg.no_fuse))
        harmony = rfx_harmony_build(plan, weave);
    if (!harmony) {
        rfx_weave_free(weave);
        rfx_plan_free(plan);
        return false;
    }
    set_stages(e, plan, weave, harmony);
    rfx_device_keep_forget_inputs(e->keep);   /* kept by the old plan's variables */
    return true;
}

static rfx_result adopt_program(rfx_engine *e, rfx_program *prog, int nerr, bool io_error)
{
    if (!prog)
        return end_call(e, io_error ? RFX_EXIT_IO : nerr < 0 ? RFX_EXIT_RESOURCE : RFX_EXIT_PROGRAM);
    rfx_plan_error err = {0};
    bool built = build_stages(e, prog, false, &err);
    e->inserts = rfx_calloc((size_t)(prog->nrels ? prog->nrels : 1), sizeof(rfx_rows));
    e->inserts_unsorted = rfx_calloc((size_t)(prog->nrels ? prog->nrels : 1), sizeof(bool));
    if (!built || !e->inserts || !e->inserts_unsorted) {
        set_stages(e, NULL, NULL, NULL);
        free(e->inserts);
        free(e->inserts_unsorted);
        e->inserts = NULL;
        e->inserts_unsorted = NULL;
        rfx_program_free(prog);
        if (err.internal)
            return fail(e, RFX_EXIT_INTERNAL, "%s", err.message);
        return fail(e, RFX_EXIT_RESOURCE, "out of memory planning the program");
    }
    for (int r = 0; r < prog->nrels; r++)
        rfx_rows_init(&e->inserts[r], prog->rels[r].arity);
    e->prog = prog;
    return end_call(e, RFX_EXIT_OK);
}

/* Starts a load: false (with the message) when the engine has a program or arg is NULL. */
static bool begin_load(rfx_engine *e, const char *call, const void *arg, const char *what)
{
    begin_call(e);
    if (e->prog)
        fail(e, RFX_EXIT_IO, "this engine has a program already (open another engine for another program)");
    else if (!arg)
        fail(e, RFX_EXIT_IO, "%s: no %s", call, what);
    return !e->prog && arg;
}

/* Whether helpers read in one rule are made only for what that rule can use (sema_demand.c):
 * where only the outputs are looked at (results_only, as the rfx command runs), as the
 * tuning allows; else every relation stays whole for the caller's reads. */
static bool demand_rewrite(const rfx_engine *e)
{
    return e->tune.demand && e->cfg.results_only;
}

rfx_result rfx_load_string(rfx_engine *e, const char *source, const char *name)
{
    if (!begin_load(e, "rfx_load_string", source, "source text"))
        return agreed(e, RFX_EXIT_IO);
    int nerr = 0;
    const rfx_parse_opts po = {.no_demand = !demand_rewrite(e)};
    rfx_program *p = rfx_frontend_parse_text(source, strlen(source), name ? name : "<string>", &po, e->diag, &nerr);
    return agreed(e, adopt_program(e, p, nerr, false));
}

rfx_result rfx_load_file(rfx_engine *e, const char *path)
{
    if (!begin_load(e, "rfx_load_file", path, "path"))
        return agreed(e, RFX_EXIT_IO);
    int nerr = 0;
    bool io_error = false;
    const rfx_parse_opts po = {.macros = e->cfg.macros, .include_dirs = e->cfg.include_dirs,
                               .no_preprocessor = e->cfg.no_preprocessor, .no_warn = e->cfg.no_warn,
                               .no_demand = !demand_rewrite(e)};
    rfx_program *p = rfx_frontend_parse_file(path, &po, e->diag, &nerr, &io_error);
    return agreed(e, adopt_program(e, p, nerr, io_error));
}

static bool need_program(rfx_engine *e, const char *call)
{
    if (e->prog)
        return true;
    fail(e, RFX_EXIT_IO, "%s: no program loaded (call rfx_load_string or rfx_load_file first)", call);
    return false;
}

rfx_result rfx_emit(rfx_engine *e, rfx_stage stage, FILE *out)
{
    begin_call(e);
    if (!need_program(e, "rfx_emit"))
        return RFX_EXIT_IO;
    switch (stage) {
    case RFX_STAGE_AST:
        rfx_frontend_print(out, e->prog);
        break;
    case RFX_STAGE_PLAN:
        rfx_plan_print(out, e->plan);
        break;
    case RFX_STAGE_HARMONY:
        rfx_harmony_print(out, e->harmony);
        break;
    case RFX_STAGE_FUSED:
    case RFX_STAGE_CUDA:
        if (!e->weave)
            fprintf(out, "// %s: no fused groups (fusion is off)\n", e->prog->file);
        else if (stage == RFX_STAGE_FUSED)
            rfx_weave_print(out, e->weave);
        else
            rfx_weave_print_cuda(out, e->weave);
        break;
    default:
        return fail(e, RFX_EXIT_IO, "rfx_emit: unknown stage %d", (int)stage);
    }
    return end_call(e, RFX_EXIT_OK);
}

/* The relation's index, or -1 with a message. */
static int find_relation(rfx_engine *e, const char *call, const char *name)
{
    if (!need_program(e, call))
        return -1;
    int r = name ? rfx_program_find_rel(e->prog, name) : -1;
    if (r < 0)
        fail(e, RFX_EXIT_IO, "%s: the program has no relation named '%s'", call, name ? name : "(null)");
    return r;
}

/* A relation whose tuples a call reads: one the front end made only for the tuples its one
 * reader can use (sema_demand.c) is not all its rules derive, and is not read. */
static int read_relation(rfx_engine *e, const char *call, int r)
{
    if (r >= 0 && e->prog->rels[r].demanded) {
        fail(e, RFX_EXIT_IO,
             "%s: '%s' holds only the tuples the one rule reading it can use, not all its rules derive; "
             "declare it .output, or set the tuning demand=0, to read it whole",
             call, e->prog->rels[r].name);
        return -1;
    }
    return r;
}

static rfx_prim column_prim(const rfx_program *p, int rel, int col)
{
    return rfx_program_type(p, p->rels[rel].attrs[col].type)->prim;
}

/* A relation whose tuples the calls exchange: its columns' kinds are rfx_column_type's
 * (64-bit values, two words each, and dates are not: -1 after saying so). */
static int tuple_relation(rfx_engine *e, const char *call, const char *name)
{
    int r = find_relation(e, call, name);
    for (int c = 0; r >= 0 && c < e->prog->rels[r].arity; c++)
        if (column_prim(e->prog, r, c) > RFX_SYMBOL) {
            fail(e, RFX_EXIT_IO, "%s: %s has 64-bit or date columns, whose tuples librfx does not exchange yet "
                 "(read and write them as files)", call, name);
            return -1;
        }
    return r;
}

rfx_result rfx_relation_info(rfx_engine *e, const char *relation, int *arity, rfx_column_type *types)
{
    begin_call(e);
    int r = tuple_relation(e, "rfx_relation_info", relation);
    if (r < 0)
        return RFX_EXIT_IO;
    if (arity)
        *arity = e->prog->rels[r].arity;
    for (int c = 0; types && c < e->prog->rels[r].arity; c++)
        types[c] = (rfx_column_type)column_prim(e->prog, r, c);
    return end_call(e, RFX_EXIT_OK);
}

/* ---- inserts -------------------------------------------------------------------------- */
static rfx_result insert_rows(rfx_engine *e, const char *call, const char *relation, const void *values,
                              size_t ntuples, bool numbers_only)
{
    begin_call(e);
    int r = tuple_relation(e, call, relation);
    if (r < 0)
        return RFX_EXIT_IO;
    const rfx_relation *rel = &e->prog->rels[r];
    int a = rel->arity;
    if (ntuples && a && !values)
        return fail(e, RFX_EXIT_IO, "%s: no values for %zu tuples of %s", call, ntuples, relation);
    for (int c = 0; numbers_only && c < a; c++)
        if (column_prim(e->prog, r, c) != RFX_NUMBER)
            return fail(e, RFX_EXIT_IO, "%s: column %d of %s is %s, not number (use rfx_insert)", call, c + 1,
                        relation, rfx_prim_name(column_prim(e->prog, r, c)));
    rfx_rows *rows = &e->inserts[r];
    size_t before = rows->n;
    if (ntuples > SIZE_MAX / 2 - rows->n || rfx_rows_reserve(rows, rows->n + ntuples) != RFX_OK)
        return fail(e, RFX_EXIT_RESOURCE, "%s: out of memory inserting %zu tuples into %s", call, ntuples, relation);
    uint32_t t[RFX_MAX_ARITY];
    for (size_t i = 0; i < ntuples; i++) {
        for (int c = 0; c < a; c++) {
            size_t k = i * (size_t)a + (size_t)c;
            if (numbers_only) {
                t[c] = (uint32_t)((const int32_t *)values)[k];
                continue;
            }
            const rfx_value *v = &((const rfx_value *)values)[k];
            switch (column_prim(e->prog, r, c)) {
            case RFX_NUMBER: t[c] = (uint32_t)v->i; break;
            case RFX_UNSIGNED: t[c] = v->u; break;
            case RFX_FLOAT: rfx_memcpy(&t[c], &v->f, 4); break;
            case RFX_SYMBOL:
                if (!v->s) {
                    rows->n = before;
                    return fail(e, RFX_EXIT_IO, "%s: tuple %zu of %s: column %d is a symbol but its value is NULL",
                                call, i + 1, relation, c + 1);
                }
                t[c] = rfx_symtab_intern(e->prog->syms, v->s, strlen(v->s));
                if (t[c] == UINT32_MAX) {
                    rows->n = before;
                    return fail(e, RFX_EXIT_RESOURCE, "%s: out of memory interning a symbol of %s", call, relation);
                }
                break;
            default:   /* 64-bit values' words: tuple_relation refused the relation */
                break;
            }
        }
        rfx_rows_push(rows, t);   /* room was reserved: cannot fail */
    }
    if (a == 0 && ntuples)
        rows->n = 1;              /* a nullary relation holds at most the empty tuple */
    e->inserts_unsorted[r] |= rows->n > before;
    return end_call(e, RFX_EXIT_OK);
}

rfx_result rfx_insert(rfx_engine *e, const char *relation, const rfx_value *values, size_t ntuples)
{
    return insert_rows(e, "rfx_insert", relation, values, ntuples, false);
}

rfx_result rfx_insert_numbers(rfx_engine *e, const char *relation, const int32_t *values, size_t ntuples)
{
    return insert_rows(e, "rfx_insert_numbers", relation, values, ntuples, true);
}

/* The plan's column types of program relation r (the types cursors and outputs use). */
static const rfx_prim *relation_types(rfx_engine *e, int r)
{
    return e->plan->vars[e->plan->relvar[r]].types;
}

rfx_result rfx_insert_columns(rfx_engine *e, const char *relation, const rfx_column *cols, size_t ntuples)
{
    begin_call(e);
    int r = tuple_relation(e, "rfx_insert_columns", relation);
    if (r < 0)
        return RFX_EXIT_IO;
    int a = e->prog->rels[r].arity;
    rfx_prim types[RFX_MAX_ARITY];
    for (int c = 0; c < a; c++)
        types[c] = column_prim(e->prog, r, c);
    char msg[512];
    if (a && ntuples && !cols)
        return fail(e, RFX_EXIT_IO, "rfx_insert_columns: no columns for %zu tuples of %s", ntuples, relation);
    if (a && !rfx_columns_check(cols, types, a, ntuples, false, relation, msg, sizeof msg))
        return fail(e, RFX_EXIT_IO, "rfx_insert_columns: %s", msg);
    rfx_rows *rows = &e->inserts[r];
    size_t before = rows->n;
    if (ntuples > SIZE_MAX / 2 - rows->n || rfx_rows_reserve(rows, rows->n + ntuples) != RFX_OK)
        return fail(e, RFX_EXIT_RESOURCE, "rfx_insert_columns: out of memory inserting %zu tuples into %s", ntuples,
                    relation);
    if (!rfx_columns_to_rows(cols, types, a, ntuples, rows->data + before * (size_t)a, e->prog->syms, e->nthreads,
                             relation, msg, sizeof msg))
        return fail(e, strncmp(msg, "out of memory", 13) ? RFX_EXIT_IO : RFX_EXIT_RESOURCE,
                    "rfx_insert_columns: %s", msg);
    rows->n = a ? before + ntuples : (ntuples || before);   /* a nullary relation holds at most () */
    e->inserts_unsorted[r] |= rows->n > before;
    return end_call(e, RFX_EXIT_OK);
}

/* ---- runs ----------------------------------------------------------------------------- */
/* rfx_run up to the run itself: inserts sorted, functors bound. */
static rfx_result prepare_run(rfx_engine *e)
{
    if (!need_program(e, "rfx_run"))
        return RFX_EXIT_IO;
    if (e->tune_error[0])
        return fail(e, RFX_EXIT_IO, "rfx_config.tune: %s", e->tune_error);
    rfx_exec_free(e->result);
    e->result = NULL;
    e->ran = false;
    /* tuples inserted into a relation the plan only counts: plan again keeping tuples */
    for (int r = 0; r < e->prog->nrels; r++) {
        if (e->inserts[r].n && e->plan->vars[e->plan->relvar[r]].count_only) {
            rfx_plan_error err = {0};
            if (!build_stages(e, e->prog, true, &err))
                return fail(e, err.internal ? RFX_EXIT_INTERNAL : RFX_EXIT_RESOURCE, "%s",
                            err.internal ? err.message : "out of memory planning the program");
            break;
        }
    }
    for (int r = 0; r < e->prog->nrels; r++) {
        if (!e->inserts_unsorted[r])
            continue;
        rfx_device_keep_forget_inputs(e->keep);   /* tuples inserted since: the device's copies are stale */
        rfx_status st = rfx_cpu_sort(&e->inserts[r], e->nthreads);
        if (st == RFX_OK)
            st = rfx_cpu_unique(&e->inserts[r], e->nthreads);
        if (st != RFX_OK)
            return fail(e, RFX_EXIT_RESOURCE, "out of memory sorting the tuples inserted into %s",
                        e->prog->rels[r].name);
        e->inserts_unsorted[r] = false;
    }
    int bound = rfx_functors_bind(e->prog, e->plan->fn_env, e->cfg.library_dirs, e->cfg.libraries, &e->functor_libs,
                                  e->diag);
    return end_call(e, (rfx_result)bound);
}

rfx_result rfx_run(rfx_engine *e)
{
    begin_call(e);
    rfx_result r = agreed(e, prepare_run(e));
    if (r != RFX_EXIT_OK)
        return r;
    rfx_run_opts o = {
        .fact_dir = e->inputs_read ? NULL : e->cfg.fact_dir,
        .output_dir = e->cfg.output_dir,
        .nthreads = e->nthreads,
        .backend = e->cfg.backend,
        .device_memory = e->cfg.device_memory,
        .devices = e->cfg.devices,
        .ndevices = e->cfg.ndevices,
        .err = e->diag,
        .out = e->cfg.out,
        .progress = e->cfg.progress,
        .profile = e->cfg.profile,
        .profile_json = e->cfg.profile_json,
        .trace = e->cfg.trace,
        .no_fuse = e->cfg.no_fuse,
        .keep = e->keep,
        .tune = &e->tune,
        .harmony = e->harmony,
        .comm = e->comm,
    };
    e->quiet = false;
    rfx_status st = rfx_exec_run(e->plan, e->prog, &o, e->inserts, &e->result);
    e->quiet = rfx_comm_rank(e->comm) > 0;
    if (st != RFX_OK)   /* a device error may have spoilt the contexts: the next run opens its own */
        rfx_device_keep_clear(e->keep);
    e->ran = st == RFX_OK;
    return end_call(e, (rfx_result)rfx_status_exit_code(st));
}

rfx_result rfx_set_profile(rfx_engine *e, FILE *profile, FILE *profile_json)
{
    begin_call(e);
    e->cfg.profile = profile;
    e->cfg.profile_json = profile_json;
    return end_call(e, RFX_EXIT_OK);
}

/* The tuples of relation r's .input files, read by run x, added to what was inserted. */
static rfx_status keep_read_rows(rfx_engine *e, rfx_exec *x, int r)
{
    rfx_rows *ins = &e->inserts[r];
    rfx_rows read;
    rfx_rows_init(&read, e->plan->vars[e->plan->relvar[r]].arity);
    rfx_status st = rfx_exec_rows(x, r, &read);
    if (st == RFX_OK && ins->n == 0) {   /* the usual case: the read rows are a sorted set already */
        rfx_rows_swap(ins, &read);       /* (a relation of 64-bit columns, never inserted into, takes their width) */
    } else if (st == RFX_OK && read.n) {
        st = rfx_rows_append_parallel(ins, &read, e->nthreads);
        e->inserts_unsorted[r] = true;
    }
    rfx_rows_free(&read);
    return st;
}

rfx_result rfx_read_inputs(rfx_engine *e)
{
    begin_call(e);
    if (!need_program(e, "rfx_read_inputs"))
        return agreed(e, RFX_EXIT_IO);
    if (e->inputs_read)
        return agreed(e, fail(e, RFX_EXIT_IO, "rfx_read_inputs: the inputs were read already"));
    if (!e->cfg.fact_dir)
        return agreed(e, fail(e, RFX_EXIT_IO, "rfx_read_inputs: no fact directory (rfx_config.fact_dir)"));
    if (rfx_comm_size(e->comm) > 1)
        return agreed(e, fail(e, RFX_EXIT_IO, "rfx_read_inputs: not in a run of several processes (each reads its part)"));
    if (e->tune_error[0])
        return agreed(e, fail(e, RFX_EXIT_IO, "rfx_config.tune: %s", e->tune_error));
    rfx_run_opts o = {.fact_dir = e->cfg.fact_dir, .nthreads = e->nthreads, .backend = RFX_BACKEND_CPU,
                      .err = e->diag, .tune = &e->tune, .harmony = e->harmony, .no_fuse = e->cfg.no_fuse,
                      .inputs_only = true};
    rfx_exec *x = NULL;
    rfx_status st = rfx_exec_run(e->plan, e->prog, &o, NULL, &x);
    for (int r = 0; st == RFX_OK && r < e->prog->nrels; r++)
        if (e->prog->rels[r].ninputs)
            st = keep_read_rows(e, x, r);
    rfx_exec_free(x);
    rfx_device_keep_forget_inputs(e->keep);
    if (st == RFX_ERR_NOMEM)
        return agreed(e, fail(e, RFX_EXIT_RESOURCE, "rfx_read_inputs: out of memory keeping the tuples read"));
    e->inputs_read = st == RFX_OK;
    return agreed(e, end_call(e, (rfx_result)rfx_status_exit_code(st)));
}

static bool need_result(rfx_engine *e, const char *call)
{
    if (e->ran)
        return true;
    fail(e, RFX_EXIT_IO, "%s: no results (call rfx_run first; the last run, if any, failed)", call);
    return false;
}

rfx_result rfx_size(rfx_engine *e, const char *relation, size_t *ntuples)
{
    begin_call(e);
    int r = read_relation(e, "rfx_size", find_relation(e, "rfx_size", relation));
    if (r < 0 || !need_result(e, "rfx_size"))
        return RFX_EXIT_IO;
    *ntuples = rfx_exec_count(e->result, r);
    return end_call(e, RFX_EXIT_OK);
}

rfx_result rfx_read_columns(rfx_engine *e, const char *relation, const rfx_column *cols, size_t cap, size_t *ntuples)
{
    begin_call(e);
    int r = read_relation(e, "rfx_read_columns", tuple_relation(e, "rfx_read_columns", relation));
    if (r < 0 || !need_result(e, "rfx_read_columns"))
        return RFX_EXIT_IO;
    if (e->plan->vars[e->plan->relvar[r]].count_only)
        return fail(e, RFX_EXIT_IO, "rfx_read_columns: %s was counted, not listed (add .output %s to keep its tuples)",
                    relation, relation);
    int a = e->prog->rels[r].arity;
    const rfx_prim *types = relation_types(e, r);
    char msg[512];
    if (a && !cols)
        return fail(e, RFX_EXIT_IO, "rfx_read_columns: no columns for %s", relation);
    size_t n = rfx_exec_count(e->result, r);
    if (cap < n)
        return fail(e, RFX_EXIT_IO, "rfx_read_columns: %s holds %zu tuples; room was given for %zu", relation, n, cap);
    if (a && !rfx_columns_check(cols, types, a, n, true, relation, msg, sizeof msg))
        return fail(e, RFX_EXIT_IO, "rfx_read_columns: %s", msg);
    rfx_rows scratch;
    rfx_rows_init(&scratch, a);
    const rfx_rows *view = NULL;
    rfx_status st = rfx_exec_view(e->result, r, &scratch, &view);
    size_t *order = NULL;
    if (st == RFX_OK && a)
        order = rfx_output_order(view, types, e->prog->syms, e->nthreads, &st);
    if (st == RFX_OK) {
        rfx_rows_to_columns(view->data, a, order, view->n, types, cols, e->nthreads);
        if (ntuples)
            *ntuples = view->n;
    }
    free(order);
    rfx_rows_free(&scratch);
    if (st != RFX_OK)
        return fail(e, RFX_EXIT_RESOURCE, "%s reading %s", st == RFX_ERR_NOMEM ? "out of memory" : "device failure",
                    relation);
    return end_call(e, RFX_EXIT_OK);
}

rfx_result rfx_symbol_texts(rfx_engine *e, const uint32_t *ids, size_t n, char *buf, size_t cap, int64_t *offsets)
{
    begin_call(e);
    if (!need_program(e, "rfx_symbol_texts"))
        return RFX_EXIT_IO;
    if (n && (!ids || !offsets))
        return fail(e, RFX_EXIT_IO, "rfx_symbol_texts: no ids or no room for offsets");
    const rfx_symtab *syms = e->prog->syms;
    uint32_t count = rfx_symtab_size(syms);
    int64_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] >= count)
            return fail(e, RFX_EXIT_IO, "rfx_symbol_texts: %u is not a symbol id of this engine", (unsigned)ids[i]);
        offsets[i] = at;
        at += (int64_t)rfx_symtab_len(syms, ids[i]) + 1;
    }
    if (offsets)
        offsets[n] = at;
    if (buf && cap >= (size_t)at)
        for (size_t i = 0; i < n; i++) {
            size_t len = rfx_symtab_len(syms, ids[i]);
            memcpy(buf + offsets[i], rfx_symtab_str(syms, ids[i]), len);
            buf[offsets[i] + (int64_t)len] = '\0';
        }
    return end_call(e, RFX_EXIT_OK);
}

const char *rfx_relation_name(rfx_engine *e, int index)
{
    /* the checker's own relations come after the declared ones and are not listed */
    bool listed = e && e->prog && index >= 0 && index < e->prog->nrels && !e->prog->rels[index].checker_made;
    return listed ? e->prog->rels[index].name : NULL;
}

const char *rfx_attribute_name(rfx_engine *e, const char *relation, int column)
{
    if (!e || !e->prog || !relation)
        return NULL;
    int r = rfx_program_find_rel(e->prog, relation);
    return r >= 0 && column >= 0 && column < e->prog->rels[r].arity ? e->prog->rels[r].attrs[column].name : NULL;
}

/* ---- cursors -------------------------------------------------------------------------- */
rfx_cursor *rfx_cursor_open(rfx_engine *e, const char *relation)
{
    begin_call(e);
    int r = read_relation(e, "rfx_cursor_open", tuple_relation(e, "rfx_cursor_open", relation));
    if (r < 0 || !need_result(e, "rfx_cursor_open"))
        return NULL;
    int rv = e->plan->relvar[r];
    if (e->plan->vars[rv].count_only) {
        fail(e, RFX_EXIT_IO,
             "rfx_cursor_open: %s was counted, not listed: its only use is .printsize, so its size is computed "
             "without its tuples (add .output %s to keep them)",
             relation, relation);
        return NULL;
    }
    rfx_cursor *c = rfx_calloc(1, sizeof *c);
    int a = e->prog->rels[r].arity;
    if (!c) {
        fail(e, RFX_EXIT_RESOURCE, "out of memory opening a cursor on %s", relation);
        return NULL;
    }
    rfx_rows_init(&c->rows, a);
    c->syms = e->prog->syms;
    /* the column types as the plan stores them: the relation's own variable's */
    c->types = e->plan->vars[rv].types;
    c->row = rfx_calloc((size_t)(a ? a : 1), sizeof(rfx_value));
    rfx_status st = c->row ? rfx_exec_rows(e->result, r, &c->rows) : RFX_ERR_NOMEM;
    if (st == RFX_OK && c->types)
        c->order = rfx_output_order(&c->rows, c->types, c->syms, e->nthreads, &st);
    if (st != RFX_OK) {
        rfx_cursor_close(c);
        fail(e, RFX_EXIT_RESOURCE, "%s reading %s", st == RFX_ERR_NOMEM ? "out of memory" : "device failure",
             relation);
        return NULL;
    }
    end_call(e, RFX_EXIT_OK);
    return c;
}

const rfx_value *rfx_cursor_next(rfx_cursor *c)
{
    if (!c || c->next >= c->rows.n)
        return NULL;
    size_t i = c->order ? c->order[c->next] : c->next;
    c->next++;
    int a = c->rows.arity;
    const uint32_t *t = c->rows.data + i * (size_t)a;
    for (int k = 0; k < a; k++) {
        switch (c->types[k]) {
        case RFX_NUMBER: c->row[k].i = (int32_t)t[k]; break;
        case RFX_UNSIGNED: c->row[k].u = t[k]; break;
        case RFX_FLOAT: rfx_memcpy(&c->row[k].f, &t[k], 4); break;
        case RFX_SYMBOL: c->row[k].s = rfx_symtab_str(c->syms, t[k]); break;
        default: break;   /* 64-bit values' words: tuple_relation refused the relation */
        }
    }
    return c->row;
}

int rfx_cursor_arity(const rfx_cursor *c)
{
    return c ? c->rows.arity : 0;
}

size_t rfx_cursor_count(const rfx_cursor *c)
{
    return c ? c->rows.n : 0;
}

void rfx_cursor_close(rfx_cursor *c)
{
    if (!c)
        return;
    rfx_rows_free(&c->rows);
    free(c->order);
    free(c->row);
    free(c);
}

/* ---- distributed runs ------------------------------------------------------------------ */
rfx_result rfx_mpi_init(int *argc, char ***argv, char *why, size_t whycap)
{
    if (!rfx_comm_launched())
        return RFX_EXIT_OK;
    char reason[200];
    if (!rfx_comm_init(argc, argv, reason, sizeof reason)) {
        snprintf(why, whycap, "started by an MPI launcher, but %s", reason);
        return RFX_EXIT_IO;
    }
    return RFX_EXIT_OK;
}

void rfx_mpi_finalize(void)
{
    rfx_comm_finalize();
}

int rfx_mpi_rank(void)
{
    return rfx_comm_rank(rfx_comm_world());
}

int rfx_mpi_size(void)
{
    return rfx_comm_size(rfx_comm_world());
}
