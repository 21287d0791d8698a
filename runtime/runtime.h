/* runtime.h: executes a query plan on a backend, with Soufflé-compatible fact input and
 * relation output.
 *
 * Ownership: rfx_exec_run borrows the plan and the program; it interns symbols read from
 * facts into the program's symbol table (the one mutable part of a checked program). */
#ifndef RFX_RUNTIME_H
#define RFX_RUNTIME_H

#include "primitives.h"
#include "ra_ir.h"
#include "rfx.h"

/* Device contexts an engine keeps between its runs (backend_cuda.c): a run borrows them,
 * so the next one opens no stream or memory pool (whose freed memory it reuses) and
 * loads no generated kernel again, a cost that small programs' runs would feel. */
typedef struct rfx_device_keep rfx_device_keep;
/* NULL without CUDA (or host memory): runs then open and close their own contexts. */
rfx_device_keep *rfx_device_keep_new(void);
/* Closes the contexts held (after a failed run: a device error may have spoilt them). */
void rfx_device_keep_clear(rfx_device_keep *k);
void rfx_device_keep_free(rfx_device_keep *k);
/* Whether k holds open device contexts (a run borrowing them starts no device). */
bool rfx_device_keep_warm(const rfx_device_keep *k);
/* k also keeps, on the device, the inserted tuples runs uploaded (sorted and unique), so
 * that the next run copies them there instead of uploading them again: the engine drops
 * them whenever its inserted tuples or its plan change. */
void rfx_device_keep_forget_inputs(rfx_device_keep *k);

/* User-defined functors' code (functor_libs.c): the libraries named (blank- or comma-
 * separated lists, with the program's "library-dir" and "libraries" pragmas; NULL: the
 * defaults, libfunctors.so in the current directory) opened once into *held, and every
 * functor the program calls bound in env. Returns 0, or an exit status with the message
 * (file:line:col of the `.functor`) written to err. */
typedef struct rfx_functor_libs rfx_functor_libs;
int rfx_functors_bind(const rfx_program *prog, rfx_fn_env *env, const char *dirs, const char *libs,
                      rfx_functor_libs **held, FILE *err);
void rfx_functor_libs_free(rfx_functor_libs *l);

typedef struct rfx_run_opts {
    const char *fact_dir;      /* where <rel>.facts and relative filename= live; NULL: .input not read */
    const char *output_dir;    /* where <rel>.csv go; "-" = to out; NULL: .output not written */
    int nthreads;              /* CPU worker threads (>= 1) */
    rfx_backend_kind backend;
    size_t device_memory;      /* bytes rfx may use on the GPU (0: free less 5%) */
    const int *devices;        /* GPUs to use (NULL: device 0); boxed joins spread over them */
    int ndevices;
    FILE *err;                 /* diagnostics (stderr if NULL) */
    FILE *out;                 /* .printsize and output_dir "-"; NULL: not printed */
    FILE *progress;            /* one redrawn status line per iteration; NULL: none */
    FILE *profile;             /* per-operator table after the run; NULL: none */
    FILE *profile_json;        /* the same as JSON; NULL: none */
    FILE *trace;               /* Chrome/Perfetto trace JSON, an event per command; NULL: none */
    bool no_fuse;              /* run every command on its own (no weaver groups) */
    rfx_device_keep *keep;     /* device contexts to borrow and leave for the next run; NULL: none */
    const rfx_tuning *tune;    /* the heuristics' knobs (NULL: rfx_tuning_defaults) */
    const struct rfx_harmony *harmony;   /* what runs: the program's Harmony IR over its weave,
                                          * built once (librfx does); NULL: the run weaves and
                                          * lowers the plan itself (no weave with no_fuse) */
    struct rfx_comm *comm;     /* the processes of a distributed run (comm.h), this one among them;
                                * NULL: this process alone */
    bool inputs_only;          /* run the plan's INPUT commands alone (rfx_read_inputs): the
                                * relations they fill are the run's result */
} rfx_run_opts;

int rfx_status_exit_code(rfx_status st);

/* The backend a run asked for `asked` gets: auto unless RFX_BACKEND says cpu or cuda. */
rfx_backend_kind rfx_exec_backend_kind(rfx_backend_kind asked);

/* The state of a finished run: the backend with every relation's contents. */
typedef struct rfx_exec rfx_exec;

/* Runs the plan to its HALT. inserts (NULL or one sorted set per program relation) are
 * merged into the relations before the first command. Errors are reported on opts->err;
 * no output file is left half-written (outputs are written to a temporary file and
 * renamed). With keep non-NULL, a successful run's state is returned there (free it with
 * rfx_exec_free); otherwise it is freed. */
rfx_status rfx_exec_run(const rfx_plan *plan, rfx_program *prog, const rfx_run_opts *opts,
                        const rfx_rows *inserts, rfx_exec **keep);
/* Tuples of program relation rel after the run. */
size_t rfx_exec_count(rfx_exec *x, int rel);
/* A copy of program relation rel's tuples (a sorted set), into *rows (initialised by the
 * caller with the relation's arity). */
rfx_status rfx_exec_rows(rfx_exec *x, int rel, rfx_rows *rows);
/* Program relation rel's tuples without a copy where the backend holds them on the host:
 * *view points at them (or at scratch, filled), valid until the next call on x. */
rfx_status rfx_exec_view(rfx_exec *x, int rel, rfx_rows *scratch, const rfx_rows **view);
void rfx_exec_free(rfx_exec *x);

/* ---- bulk column transfers (columns.c) for rfx_insert_columns / rfx_read_columns -------- */
/* Whether cols[arity] fit the types and describe n values each; false with the reason. */
bool rfx_columns_check(const rfx_column *cols, const rfx_prim *types, int arity, size_t n, bool reading,
                       const char *relation, char *msg, size_t cap);
/* Converts n tuples from checked columns into out (row-major, arity values a row), texts
 * interned into syms; false (the tuple and column in msg) where a value does not fit. */
bool rfx_columns_to_rows(const rfx_column *cols, const rfx_prim *types, int arity, size_t n, uint32_t *out,
                         rfx_symtab *syms, int nthreads, const char *relation, char *msg, size_t cap);
/* Writes n rows (taken in the order idx, or as stored when idx is NULL) into checked columns. */
void rfx_rows_to_columns(const uint32_t *rows, int arity, const size_t *idx, size_t n, const rfx_prim *types,
                         const rfx_column *cols, int nthreads);

/* ---- fact and output I/O (io.c), usable on their own ---------------------------------- */
/* What reading and writing records needs (record_text.c): the program's types, each
 * column's type, the run's symbols and record table. */
typedef struct rfx_record_io {
    const rfx_program *prog;
    const int *coltypes;       /* per column: its attribute's type */
    rfx_symtab *syms;
    rfx_fn_env *env;
} rfx_record_io;

/* Whether values of type t are records (a record type's or an ADT's). */
static inline bool rfx_record_column(const rfx_program *p, int t)
{
    return rfx_program_record_type(p, t) >= 0 || rfx_program_adt_type(p, t) >= 0;
}

/* A growable text (malloc'ed). */
typedef struct rfx_text {
    char *p;
    size_t len, cap;
} rfx_text;

/* Appends n bytes of s (with room kept for a terminating NUL); false on OOM. */
bool rfx_text_put(rfx_text *t, const char *s, size_t n);

/* One field of record type `type` (`[1, "a b", nil]`, `nil`): its id, packed; else an
 * error text as parse_value's. */
const char *rfx_record_parse(const rfx_record_io *rio, int type, const char *s, size_t n, uint32_t *out);
/* Appends value v of type `type` in Soufflé's text (records as `[a, b]`); false on OOM. */
bool rfx_record_format(const rfx_record_io *rio, int type, uint32_t v, rfx_text *t, int depth);
/* Values a and b of type `type` compared by what they hold (records field by field, symbols
 * by text, numbers by value): outputs with records are sorted so, whatever order the
 * records were made in. */
int rfx_record_compare(const rfx_record_io *rio, int type, uint32_t a, uint32_t b, int depth);
/* Field conversions: a plain value of kind prim from its text (an error text, or NULL; a
 * 64-bit kind's high word at out[0], low at out[1]; value_text.c), and a number's, float's
 * or date's text (its length; cap >= 32; io.c). */
const char *rfx_parse_value(const char *s, size_t n, rfx_prim prim, rfx_symtab *syms, uint32_t *out);
/* A decimal's text ([sign] digits [. digits]) as its count of 10^-scale, high word at
 * out[0], low at out[1]: exactly, or an error text where it has more places after the point
 * than the scale or more digits before it than precision - scale (value_text.c). */
const char *rfx_parse_decimal(const char *s, size_t n, int precision, int scale, uint32_t *out);
int rfx_format_value(char *buf, size_t cap, rfx_prim prim, uint32_t v);
/* A decimal's text (its count of 10^-scale `raw`, the point `scale` digits from the right):
 * its length; cap >= 32 (facts_write.c). */
int rfx_format_decimal(char *buf, size_t cap, uint64_t raw, int scale);

/* The decimal columns of a relation (files hold their values as text, 12.50): per column,
 * its type's digits in all and after the point. */
typedef struct rfx_decimal_cols {
    uint8_t precision[RFX_MAX_ARITY], scale[RFX_MAX_ARITY];
} rfx_decimal_cols;

typedef struct rfx_read_opts {
    const char *delimiter;     /* field separator of .facts files, any length (NULL: "\t", or ","
                                * with rfc4180) */
    bool edge_list;            /* SNAP-style: '#' comments, any whitespace or comma, extra columns ignored */
    int threads;               /* parse on this many threads (0 or 1: the caller's only) */
    bool headers;              /* the first line names the columns: skipped */
    bool rfc4180;              /* a field may be quoted ("a,b", "say ""hi""", a newline inside) */
    const rfx_record_io *records;   /* the relation has record columns (else NULL) */
    const rfx_decimal_cols *decimals;   /* ... decimal columns (else NULL) */
    /* Slice `slice` of `nslices` (nslices > 1; a plain file, rfx_facts_sliceable): the lines
     * that begin in bytes [size * slice / nslices, size * (slice + 1) / nslices). Messages
     * still name the file's own line numbers; lines skipped for not starting with numbers
     * are counted into *skipped (the first one's line into *first_skipped) and not reported. */
    int slice, nslices;
    long *skipped, *first_skipped;
    const bool *unread;        /* per column: not parsed, unread_value stored (NULL: none) */
    uint32_t unread_value;
} rfx_read_opts;

/* Whether a facts file can be read in slices: a plain (not gzip) file of at least min_bytes. */
bool rfx_facts_sliceable(const char *path, long long min_bytes);
/* Whether every one of the arity columns holds numbers or unsigned values (text without
 * symbols or floats, which the readers and writers take a faster way through). */
bool rfx_integer_columns(const rfx_prim *types, int arity);
/* The warning about `skipped` lines that do not start with numbers, the first at line first. */
void rfx_report_skipped(FILE *err, const char *path, long first, long skipped);

/* Appends the tuples of a facts / edge-list file (plain or gzip) to rows. Messages name
 * file:line. types has rows->arity entries. */
rfx_status rfx_read_facts(const char *path, const rfx_prim *types, rfx_symtab *syms,
                          const rfx_read_opts *ro, rfx_rows *rows, FILE *err);

/* The typed order of rows (numbers signed, floats numerically, symbols by text) as an
 * index array the caller frees; NULL with *st == RFX_OK when stored order already is it.
 * Found on nthreads threads. */
size_t *rfx_output_order(const rfx_rows *rows, const rfx_prim *types, const rfx_symtab *syms,
                         int nthreads, rfx_status *st);

/* ---- output files written whole or not at all (outfile.c) -------------------------- */
typedef struct rfx_outfile {
    FILE *f;                   /* write here */
    char *tmp;                 /* the temporary file renamed into place (NULL: in place) */
    char *path;                /* where it goes (a link's target) */
} rfx_outfile;

/* Opens path for writing: a regular file (or a new path; a link's target) through a
 * temporary file beside it, anything else (a FIFO, a device, /dev/stdout) in place. On
 * failure false, with the reason in err. */
bool rfx_outfile_open(rfx_outfile *o, const char *path, bool binary, char *err, size_t errlen);
/* The temporary file's descriptor (writes may go at offsets), or -1 when writing in place. */
int rfx_outfile_fd(const rfx_outfile *o);
/* Closes; keep: renames into place, else the temporary file goes. false (reason in err) when
 * writing or renaming failed, or when asked to keep a file never opened. */
bool rfx_outfile_close(rfx_outfile *o, bool keep, char *err, size_t errlen);
/* The end of writing an output: closed (kept where st is RFX_OK), and a failure, st's or
 * the close's (saved_errno: errno where the writing failed, or 0), reported as path's.
 * Returns the status of the whole. */
rfx_status rfx_outfile_finish(rfx_outfile *o, rfx_status st, int saved_errno, const char *path, FILE *err);
/* Removes every temporary file still being written; returns how many. Async-signal-safe:
 * for a signal handler before the process ends. */
int rfx_outfile_remove_unfinished(void);

/* One key of an output's order (ordered.c): a column (a 64-bit value's high word, which
 * the next column completes) and its direction. */
typedef struct rfx_order_key {
    int col;
    bool desc;
} rfx_order_key;

/* Column c of rows a and b in their type's order, the order outputs are written in:
 * numbers signed, floats by value with NaNs last (equal values by their bits), symbols by
 * text, or by rank[id] (rfx_symtab_ranks) where rank is given; a 64-bit value's high word
 * at c, its low word at c + 1. */
int rfx_typed_cmp(const rfx_prim *types, const uint32_t *rank, const rfx_symtab *syms, const uint32_t *a,
                  const uint32_t *b, int c);
/* The indices of the first min(limit, n) rows in the keys' order, the other columns
 * ascending after them (rows equal throughout keep no order: a set has none); *count set.
 * NULL with *st on failure. */
size_t *rfx_order_rows(const rfx_rows *rows, const rfx_prim *types, const rfx_symtab *syms,
                       const rfx_order_key *keys, int nkeys, size_t limit, size_t *count, rfx_status *st);

typedef struct rfx_write_opts {
    const char *delimiter;     /* field separator, any length (NULL: "\t", or "," with rfc4180) */
    int threads;               /* the text is made on this many threads */
    bool headers;              /* a first line of the attribute names */
    bool rfc4180;              /* symbols in quotes, a quote inside doubled */
    bool compress;             /* gzip */
    const rfx_record_io *records;   /* the relation has record columns (else NULL) */
    bool in_order;             /* the rows are in the order to write (an output's order option) */
    const rfx_decimal_cols *decimals;   /* the relation's decimal columns (else NULL) */
} rfx_write_opts;

/* Writes rows as a delimited file (sorted by typed value: numbers signed, symbols by
 * text), whole or not at all (rfx_outfile).
 * path "-" writes to `out` between Soufflé's rules, `header` (the relation's name and its
 * attribute names, tab-separated) after the first. */
rfx_status rfx_write_relation(const char *path, const char *header, const rfx_rows *rows,
                              const rfx_prim *types, const rfx_symtab *syms, const rfx_write_opts *wo,
                              FILE *out, FILE *err);

/* The order outputs are written in, as an index array the caller frees (NULL: as stored):
 * by typed value, or by what records hold where records is non-NULL. */
size_t *rfx_write_order(const rfx_rows *rows, const rfx_prim *types, const rfx_symtab *syms,
                        const rfx_record_io *records, int nthreads, rfx_status *st);

/* ---- Soufflé's JSON form (json_io.c): IO=jsonfile and IO=json ---------------------------- */
typedef struct rfx_json_io {
    const rfx_program *prog;
    const rfx_relation *rel;   /* its attributes' names and types (a 64-bit one spans two columns) */
    rfx_symtab *syms;
    const rfx_record_io *records;   /* the run's record table (needed where a column holds records) */
    bool objects;              /* writing: tuples and records as objects (format=object), else lists */
} rfx_json_io;

/* Appends the tuples of a JSON file (a list of tuples, each a list or an object; plain or
 * gzip) to rows (the relation's arity). Messages name file:line. */
rfx_status rfx_read_json(const char *path, const rfx_json_io *io, rfx_rows *rows, FILE *err);
/* Writes rows as Soufflé's JSON, whole or not at all (rfx_outfile); path "-" writes to out.
 * in_order: as they are (an output's order option), else in rfx_write_order's order. */
rfx_status rfx_write_json(const char *path, const rfx_json_io *io, const rfx_rows *rows, const rfx_prim *types,
                          bool in_order, int nthreads, FILE *out, FILE *err);

#endif
