/* runtime.h: executes a query plan on a backend, with Soufflé-compatible fact input and
 * relation output.
 *
 * Ownership: rfx_run borrows the plan and the program; it interns symbols read from
 * facts into the program's symbol table (the one mutable part of a checked program). */
#ifndef RFX_RUNTIME_H
#define RFX_RUNTIME_H

#include "primitives.h"

typedef enum rfx_backend_kind { RFX_BACKEND_AUTO, RFX_BACKEND_CPU, RFX_BACKEND_CUDA } rfx_backend_kind;

typedef struct rfx_run_opts {
    const char *fact_dir;      /* -F: where <rel>.facts and relative filename= live ("." default) */
    const char *output_dir;    /* -D: where <rel>.csv go ("." default; "-" = stdout) */
    int nthreads;              /* -j */
    rfx_backend_kind backend;
    bool quiet;                /* no progress or notes */
    bool profile;              /* print a per-operator table to stderr at the end */
    size_t device_memory;      /* --device-memory: bytes rfx may use on the GPU (0: free less 5%) */
    FILE *err;                 /* diagnostics (stderr if NULL) */
    FILE *out;                 /* stdout-bound output: -D -, .printsize (stdout if NULL) */
} rfx_run_opts;

/* Exit statuses of the rfx command (also returned by rfx_status_exit_code). */
enum {
    RFX_EXIT_OK = 0,
    RFX_EXIT_PROGRAM = 1,      /* an error in the program (also: division by zero at run time) */
    RFX_EXIT_IO = 2,           /* unreadable or malformed input, unwritable output */
    RFX_EXIT_RESOURCE = 3,     /* out of memory or a size limit */
    RFX_EXIT_INTERNAL = 4      /* a bug in rfx */
};
int rfx_status_exit_code(rfx_status st);

/* Runs the plan to its HALT. Errors are reported on opts->err; no output file is left
 * half-written (outputs are written to a temporary file and renamed). */
rfx_status rfx_run(const rfx_plan *plan, rfx_program *prog, const rfx_run_opts *opts);

/* ---- fact and output I/O (io.c), usable on their own ---------------------------------- */
typedef struct rfx_read_opts {
    char delimiter;            /* field separator of .facts files (default '\t') */
    bool edge_list;            /* SNAP-style: '#' comments, any whitespace or comma, extra columns ignored */
} rfx_read_opts;

/* Appends the tuples of a facts / edge-list file (plain or gzip) to rows. Messages name
 * file:line. types has rows->arity entries. */
rfx_status rfx_read_facts(const char *path, const rfx_prim *types, rfx_symtab *syms,
                          const rfx_read_opts *ro, rfx_rows *rows, FILE *err);

/* Writes rows as a tab-separated file (sorted by typed value: numbers signed, symbols by
 * text), atomically: a temporary file in the same directory renamed over the target.
 * path "-" writes to `out` with a header naming the relation. */
rfx_status rfx_write_relation(const char *path, const char *name, const rfx_rows *rows,
                              const rfx_prim *types, const rfx_symtab *syms, char delimiter,
                              FILE *out, FILE *err);

#endif
