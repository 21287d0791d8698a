/* rfx.h: rfx as a library. Embed a Datalog engine in a C program the way SQLite is
 * embedded: open an engine, load a program, insert tuples from C arrays, run to the
 * fixpoint, read the results through cursors.
 *
 *     rfx_engine *e = rfx_open(NULL);                  // defaults: auto backend, all cores
 *     if (rfx_load_string(e, "...", "tc.dl") == RFX_EXIT_OK) {
 *         int32_t edges[] = {1, 2, 2, 3};
 *         rfx_insert_numbers(e, "edge", edges, 2);
 *         rfx_run(e);
 *         rfx_cursor *c = rfx_cursor_open(e, "path");
 *         for (const rfx_value *t; c && (t = rfx_cursor_next(c));)
 *             printf("%d %d\n", t[0].i, t[1].i);
 *         rfx_cursor_close(c);
 *     }
 *     fputs(rfx_errmsg(e), stderr);                    // "" when nothing went wrong
 *     rfx_close(e);
 *
 * Ownership and lifetime:
 * - The engine owns everything it returns: error text (valid until the engine's next
 *   call), symbol strings in cursor rows (valid until rfx_close), cursor rows (valid until
 *   the next rfx_cursor_next or rfx_cursor_close on that cursor).
 * - The caller owns its inputs: rfx_insert copies the tuples and the symbol texts.
 * - A cursor is a snapshot: a later rfx_run does not change it. Close every cursor before
 *   rfx_close.
 * - There are no globals: engines are independent, and different engines may be used
 *   from different threads at once. One engine must not be used by two threads at once.
 *
 * Errors: every call that can fail returns an rfx_result; RFX_EXIT_OK (0) is success,
 * and rfx_errmsg() gives the messages of the most recent call (program errors as
 * file:line:col with the source line and a caret, fact errors as file:line). The values
 * are the exit statuses of the rfx command. */
#ifndef RFX_H
#define RFX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RFX_VERSION_STRING "0.2.0"

typedef enum rfx_result {
    RFX_EXIT_OK = 0,
    RFX_EXIT_PROGRAM = 1,      /* an error in the program (also: division by zero at run time) */
    RFX_EXIT_IO = 2,           /* unreadable or malformed input, unwritable output, misuse of the API */
    RFX_EXIT_RESOURCE = 3,     /* out of memory (host or device), a size limit, a CUDA failure */
    RFX_EXIT_INTERNAL = 4      /* a bug in rfx */
} rfx_result;

typedef enum rfx_backend_kind {
    RFX_BACKEND_AUTO,          /* the CPU's cores and a CUDA device together, each command where
                                * it ends sooner (the device started once that pays) */
    RFX_BACKEND_CPU,
    RFX_BACKEND_CUDA           /* fail when no device can be used */
} rfx_backend_kind;

typedef enum rfx_join_kind {
    RFX_JOIN_AUTO,             /* leapfrog triejoin for cyclic bodies of 3+ atoms (triangles, cliques) */
    RFX_JOIN_BINARY,           /* binary joins only */
    RFX_JOIN_LFTJ              /* leapfrog triejoin for every body of 2+ positive atoms */
} rfx_join_kind;

typedef struct rfx_config {
    rfx_backend_kind backend;  /* default AUTO (the environment's RFX_BACKEND=cpu|cuda overrides AUTO) */
    size_t device_memory;      /* bytes rfx may use on the GPU; 0 (default): free memory less 5% */
    int threads;               /* CPU worker threads; 0 (default): all cores */
    const char *fact_dir;      /* where .input directives read from; NULL (default): they are not
                                * read, input relations hold only inserted tuples */
    const char *output_dir;    /* where .output directives write; NULL (default): nothing is
                                * written, read results with cursors; "-": to `out` */
    FILE *out;                 /* .printsize lines and output_dir "-"; NULL (default): not printed */
    FILE *diag;                /* a copy of every message as it happens (e.g. stderr); NULL: none */
    FILE *progress;            /* stratum, iteration, delta sizes, elapsed time, redrawn on one
                                * line (meant for a terminal); NULL (default): none */
    FILE *profile;             /* a per-operator table after each run; NULL: none */
    FILE *profile_json;        /* the same as one JSON object; NULL: none */
    FILE *trace;               /* a Chrome/Perfetto trace (JSON) of each run: an event per plan
                                * command with its time and output size; NULL: none */
    bool no_opt;               /* skip the plan's optimisation passes (debugging) */
    bool no_fuse;              /* run every operator on its own: no kernel fusion (the plan's
                                * MapFilter/MapJoin folding and the weaver's groups) */
    rfx_join_kind join;        /* how multi-way bodies are joined; default AUTO */
    const int *devices;        /* GPUs to use, by index (copied at rfx_open); NULL (default):
                                * device 0. Leapfrog triejoins are spread over all of them */
    int ndevices;
    const char *macros;        /* preprocessor definitions for program files, `NAME[=VALUE] ...`
                                * separated by blanks (Soufflé's -M); NULL (default): none */
    const char *library_dirs;  /* where the libraries of user-defined functors (`.functor`) are looked
                                * for, blank-separated (Soufflé's -L); NULL (default): the current
                                * directory, then the system loader's search path */
    const char *libraries;     /* their names, blank-separated: "m" loads libm.so (Soufflé's -l); NULL
                                * (default): "functors" */
    const char *tune;          /* tuning knobs for experiments, `key=value ...` separated by blanks
                                * or commas (docs/cli.md, rfx_tune_describe); NULL (default): the
                                * defaults. Bad settings make rfx_run fail with the reason */
    bool results_only;         /* only the program's outputs (.output, .printsize) are looked at
                                * after a run, as by the rfx command: input columns no rule reads
                                * are then not read (their text never interned); false (default):
                                * cursors see every relation whole */
    bool alone;                /* where MPI is initialised with several processes, run in this one
                                * alone; false (default): each run is spread over all of them, which
                                * must make the same calls in the same order (docs/mpi.md) */
    const char *include_dirs;  /* where a program file's #include looks after the including file's
                                * directory, blank-separated, relative ones from the current
                                * directory (Soufflé's -I); NULL (default): nowhere else */
    bool no_preprocessor;      /* program files are parsed as written, no C preprocessor
                                * (Soufflé's --no-preprocessor); false (default) */
    bool no_warn;              /* no warnings about program files (Soufflé's -w); false (default) */
} rfx_config;

/* Column types, as declared (subtypes and aliases resolve to these). */
typedef enum rfx_column_type { RFX_COL_NUMBER, RFX_COL_UNSIGNED, RFX_COL_FLOAT, RFX_COL_SYMBOL } rfx_column_type;

/* One value of a tuple: the member that matches its column's type. */
typedef union rfx_value {
    int32_t i;                 /* number */
    uint32_t u;                /* unsigned */
    float f;                   /* float */
    const char *s;             /* symbol (NUL-terminated) */
} rfx_value;

/* What rfx_emit prints (the stages of `rfx --emit=`). */
typedef enum rfx_stage {
    RFX_STAGE_AST, RFX_STAGE_PLAN, RFX_STAGE_HARMONY,
    RFX_STAGE_FUSED,           /* the kernel weaver's groups */
    RFX_STAGE_CUDA             /* the CUDA C generated for them */
} rfx_stage;

typedef struct rfx_engine rfx_engine;
typedef struct rfx_cursor rfx_cursor;

/* The library's version ("0.2.0"). */
const char *rfx_version(void);
/* Writes the version, the backends and (when one is usable) the CUDA device's name and
 * the CUDA runtime and driver versions, as `rfx --version` prints them. */
void rfx_describe(FILE *out);

/* Whether `key=value ...` are valid tuning settings (rfx_config.tune); false with the reason
 * in err. */
bool rfx_tune_check(const char *tune, char *err, size_t errcap);
/* Writes the tuning knobs: name, default, meaning (`rfx --tune help`). */
void rfx_tune_describe(FILE *out);
/* Fault injection, for tests (RFX_FAULT_ALLOC, RFX_FAULT_WRITE, RFX_FAULT_DEVICE in the
 * environment; docs/cli.md): whether an armed fault has fired, and in *calls the guarded
 * calls (allocations and writes) made so far. */
bool rfx_fault_status(long *calls);

/* Sets every field of cfg to its default. */
void rfx_config_init(rfx_config *cfg);
/* Opens an engine (cfg NULL: defaults); the config is copied. NULL only when memory ran out.
 * No device is touched before the first rfx_run. */
rfx_engine *rfx_open(const rfx_config *cfg);
/* Frees the engine and everything it holds, device memory included. NULL is a no-op.
 * Kernel compiles that ended runs left in the background end here: those NVRTC has not
 * begun are dropped, the one it is at is waited for (a process must not exit under a
 * compile: NVRTC's exit-time destructors would run under it). */
void rfx_close(rfx_engine *e);

/* Parses, checks and plans a program; `name` is the file name used in messages. One
 * program per engine: a second load fails. */
rfx_result rfx_load_string(rfx_engine *e, const char *source, const char *name);
rfx_result rfx_load_file(rfx_engine *e, const char *path);

/* Prints a stage of the loaded program's compilation. */
rfx_result rfx_emit(rfx_engine *e, rfx_stage stage, FILE *out);

/* The arity of a relation of the loaded program, and its column types when types is
 * non-NULL (it must hold arity entries; arities are at most 64). */
rfx_result rfx_relation_info(rfx_engine *e, const char *relation, int *arity, rfx_column_type *types);

/* Adds ntuples tuples (row-major: arity values each) to a relation; they take part in
 * every later rfx_run together with the program's facts and .input files. Inserting
 * into a relation that also has rules is allowed (its tuples are then facts). */
rfx_result rfx_insert(rfx_engine *e, const char *relation, const rfx_value *values, size_t ntuples);
/* The same for a relation whose columns are all numbers. */
rfx_result rfx_insert_numbers(rfx_engine *e, const char *relation, const int32_t *values, size_t ntuples);

/* Reads the program's .input files now, from the config's fact_dir, and keeps their
 * tuples as inserted ones: later runs read no file, so a program run many times over the
 * same facts (queries, benchmarks) reads them once. Needs a fact_dir; once per engine;
 * not where a run spreads over several MPI processes. */
rfx_result rfx_read_inputs(rfx_engine *e);

/* Computes the fixpoint from scratch over everything inserted so far; previous results
 * are replaced. Outputs, .printsize, progress and profiles go where the config says. */
rfx_result rfx_run(rfx_engine *e);

/* Where the profiles of the runs from now on go, as rfx_config's profile (the table) and
 * profile_json (NULL: none): one run among many is profiled, the others not paying for
 * its measurements. The files stay the caller's. */
rfx_result rfx_set_profile(rfx_engine *e, FILE *profile, FILE *profile_json);

/* The number of tuples of a relation after the last rfx_run. */
rfx_result rfx_size(rfx_engine *e, const char *relation, size_t *ntuples);

/* Opens a cursor over a relation's tuples after the last rfx_run, in the order output
 * files use (numbers signed, floats numerically, symbols by text). NULL on error
 * (rfx_errmsg says why). */
rfx_cursor *rfx_cursor_open(rfx_engine *e, const char *relation);
/* The next tuple (arity values), or NULL after the last. */
const rfx_value *rfx_cursor_next(rfx_cursor *c);
int rfx_cursor_arity(const rfx_cursor *c);
size_t rfx_cursor_count(const rfx_cursor *c);
void rfx_cursor_close(rfx_cursor *c);

/* ---- bulk transfers: columns of any layout ----------------------------------------------
 * For inserting and reading many tuples at once (NumPy, Arrow, column stores): each column
 * of the relation is described by where its values lie and in what format; rows may be
 * interleaved (a row-major array: stride = arity * value size) or apart (columns). The
 * transfer runs on all the engine's threads, one pass, with no per-tuple call. */
typedef enum rfx_format {
    RFX_FORMAT_I32, RFX_FORMAT_U32, RFX_FORMAT_F32,
    RFX_FORMAT_I64, RFX_FORMAT_U64, RFX_FORMAT_F64,
    RFX_FORMAT_SYMBOL,         /* uint32 symbol ids of this engine (rfx_symbol_texts gives their text) */
    RFX_FORMAT_UTF8,           /* texts as Arrow lays them out: value i is the bytes
                                * data[offsets[i] .. offsets[i + 1]) (inserts only) */
    RFX_FORMAT_UTF8_FIXED,     /* texts of `width` bytes each, trailing NULs not part of the text
                                * (NumPy's 'S' arrays; inserts only) */
    RFX_FORMAT_UTF32_FIXED     /* texts of `width` bytes of UTF-32 code points, trailing NULs not
                                * part of the text (NumPy's 'U' arrays; inserts only); U+DC80-U+DCFF
                                * stand for the bytes 0x80-0xFF (Python's surrogateescape) */
} rfx_format;

typedef struct rfx_column {
    rfx_format format;
    void *data;                /* the first value (only read by inserts) */
    ptrdiff_t stride;          /* bytes from one value to the next; 0: the value's size (width for
                                * fixed texts; unused for RFX_FORMAT_UTF8) */
    size_t width;              /* fixed texts: bytes per value */
    const int64_t *offsets;    /* RFX_FORMAT_UTF8: ntuples + 1 offsets into data */
} rfx_column;

/* Adds ntuples tuples given as one column per attribute (cols[arity]), like rfx_insert.
 * Formats convert where no value changes: a number column takes I32 and, range-checked,
 * U32, I64 and U64; an unsigned column U32 and, range-checked, I32, I64 and U64; a float
 * column F32, F64 (rounded to float) and integers; a symbol column SYMBOL ids and texts.
 * A value that does not fit fails the whole call with its tuple and column named, and
 * nothing is inserted. */
rfx_result rfx_insert_columns(rfx_engine *e, const char *relation, const rfx_column *cols, size_t ntuples);
/* Writes a relation's tuples after the last rfx_run, in cursor order, into cols[arity]
 * (room for cap tuples; fewer than rfx_size fails); *ntuples: how many. A number column
 * reads as I32, I64 or F64; unsigned as U32, U64, I64 or F64; float as F32 or F64; symbol
 * as SYMBOL ids. */
rfx_result rfx_read_columns(rfx_engine *e, const char *relation, const rfx_column *cols, size_t cap, size_t *ntuples);
/* The texts of n symbol ids, each followed by a NUL, one after another into buf when cap is
 * enough; offsets[n + 1] receives where each starts (offsets[n]: the bytes needed), also
 * when cap is not enough (call again with a larger buf). A text may itself hold NULs. */
rfx_result rfx_symbol_texts(rfx_engine *e, const uint32_t *ids, size_t n, char *buf, size_t cap, int64_t *offsets);
/* The name of the loaded program's relation number index (declaration order), or NULL past
 * the last declared one. */
const char *rfx_relation_name(rfx_engine *e, int index);
/* The declared name of a relation's column (0-based), or NULL when there is none. */
const char *rfx_attribute_name(rfx_engine *e, const char *relation, int column);

/* The program `rfx cliques` runs: edge(x, y) read from edge_file (a SNAP edge list) or, when
 * edge_file is NULL, inserted; the graph taken as undirected and simple; clique(v0, ..,
 * v{k-1}) each k-clique once, vertices ascending (by_degree: from the lowest degree up,
 * which is faster on skewed graphs); count: only its size (.printsize, never listed).
 * Writes it, NUL-terminated, into buf when it fits in cap bytes; returns its length (0 for
 * a k outside 2..8). */
size_t rfx_clique_program(char *buf, size_t cap, int k, bool count, bool by_degree, const char *edge_file);

/* The messages of the engine's most recent call ("" when it had none); warnings included. */
const char *rfx_errmsg(const rfx_engine *e);

/* ---- output files as rfx writes them --------------------------------------------------
 * Whole or not at all: a regular file (or a new path; a symbolic link's target) is written
 * to a temporary file beside it and renamed into place when kept; anything else (a FIFO, a
 * device, /dev/stdout) is written in place. */
/* ---- distributed runs (docs/mpi.md) -------------------------------------------------------
 * An engine opened where MPI is initialised with several processes spreads each run over
 * them (rfx_config.alone keeps it to one): every process makes the same calls, each
 * relation is hash-partitioned on its first column, results read from any process are the
 * whole relation, and only process 0 writes .output files. */
/* For a program an MPI launcher started (mpirun, srun): initialises MPI unless the program
 * did. RFX_EXIT_OK also where no launcher started it (nothing to do); RFX_EXIT_IO, with the
 * reason in why, where this librfx was built without MPI. */
rfx_result rfx_mpi_init(int *argc, char ***argv, char *why, size_t whycap);
/* Finalises MPI where rfx_mpi_init initialised it. */
void rfx_mpi_finalize(void);
/* This process's rank among the job's and their number (0 and 1 without MPI). */
int rfx_mpi_rank(void);
int rfx_mpi_size(void);

typedef struct rfx_output rfx_output;
/* Opens path; *f is where to write. NULL on failure, with the reason in err. */
rfx_output *rfx_output_open(const char *path, FILE **f, char *err, size_t errlen);
/* Closes and frees o; keep: into place, else the temporary file goes. false (reason in err)
 * when writing or renaming failed. */
bool rfx_output_close(rfx_output *o, bool keep, char *err, size_t errlen);
/* Removes the temporary files of every output still being written (an engine's relations,
 * rfx_output files); returns how many. Async-signal-safe: for a SIGINT or SIGTERM handler,
 * before the process ends. */
int rfx_remove_unfinished_outputs(void);
/* Whether device work started in the background still runs in this process: compiles of
 * generated CUDA kernels (an engine's run that ended before NVRTC did leaves them to finish
 * on their own; their kernels go to the disk cache for the next run), or the CUDA driver's
 * start that an engine of the cuda backend begins as it is made. rfx_close ends the
 * compiles; a program with nothing left to do may end with _exit instead, as the rfx
 * command does. */
bool rfx_compiles_pending(void);

#ifdef __cplusplus
}
#endif

#endif
