/* base.h: what every module of rfx uses, using nothing of rfx itself: memory by lifetime
 * (arenas), growable arrays, the symbol table, status codes, allocation and write wrappers
 * with fault injection, the persistent thread pool, the clock and hashing, the value model
 * and the scalar expression programs the planner builds and the operators run, and the
 * tuning knobs. Modules include it directly or through their stage's header; it includes
 * only libc. */
#ifndef RFX_BASE_H
#define RFX_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- status ------------------------------------------------------------------------ */
typedef enum rfx_status {
    RFX_OK = 0,
    RFX_ERR_NOMEM,             /* an allocation failed */
    RFX_ERR_DIV0,              /* an expression failed: division or modulo by zero, a functor
                                * (to_number of "abc"; the plan's fn_env says which) */
    RFX_ERR_IO,                /* a file could not be read or written */
    RFX_ERR_INPUT,             /* malformed input data */
    RFX_ERR_LIMIT,             /* a size limit was exceeded */
    RFX_ERR_DEVICE,            /* a CUDA call failed (the backend's last_error says which) */
    RFX_ERR_INTERNAL,          /* a bug in rfx */
    RFX_ERR_REMOTE             /* another process of a distributed run failed (it says why) */
} rfx_status;

/* ---- arena: memory by lifetime, never freed piece by piece ---------------------- */
typedef struct rfx_arena rfx_arena;
rfx_arena *rfx_arena_new(void);
void *rfx_arena_alloc(rfx_arena *a, size_t size);          /* zeroed; NULL on OOM */
char *rfx_arena_strdup(rfx_arena *a, const char *s, size_t n);
void rfx_arena_free(rfx_arena *a);

/* memcpy that accepts NULL pointers when n is 0 (empty arrays start out NULL). */
static inline void rfx_memcpy(void *dst, const void *src, size_t n)
{
    if (n)
        __builtin_memcpy(dst, src, n);
}

/* ---- growable array helper ----------------------------------------------------- */
/* Plain malloc'ed vector; returns false on OOM and leaves *items intact. */
bool rfx_grow(void **items, size_t *cap, size_t need, size_t elem_size);

/* ---- symbol table: interned strings <-> dense 32-bit ids ----------------------- */
typedef struct rfx_symtab rfx_symtab;
rfx_symtab *rfx_symtab_new(void);
void rfx_symtab_free(rfx_symtab *t);
/* Returns the id of s (length n), adding it if new; UINT32_MAX on OOM. */
uint32_t rfx_symtab_intern(rfx_symtab *t, const char *s, size_t n);
/* The same, s's hash (rfx_symtab_hash) computed already (on another thread, say). */
uint32_t rfx_symtab_intern_hashed(rfx_symtab *t, const char *s, size_t n, uint64_t hash);
uint64_t rfx_symtab_hash(const char *s, size_t n);
/* The id of s, or UINT32_MAX where the table does not hold it. */
uint32_t rfx_symtab_find(const rfx_symtab *t, const char *s, size_t n);
const char *rfx_symtab_str(const rfx_symtab *t, uint32_t id);   /* borrowed */
uint32_t rfx_symtab_len(const rfx_symtab *t, uint32_t id);         /* bytes (a symbol may hold NUL) */
uint32_t rfx_symtab_size(const rfx_symtab *t);
/* The bytes the symbols' texts hold (each with a NUL), for copies of the table. */
size_t rfx_symtab_text_bytes(const rfx_symtab *t);
/* A number no other table of this process has: copies of a table know it by it. */
uint64_t rfx_symtab_serial(const rfx_symtab *t);
/* Rank of each id in byte-wise string order (for sorted output); caller frees. */
uint32_t *rfx_symtab_ranks(const rfx_symtab *t);

/* A thread's symbols on their way to a table that threads share: ids from 0 in the order
 * the symbols first come, then added to the table in one go, in that order (so a file read
 * on many threads numbers its symbols as one thread would). The strings are borrowed until
 * the merge; clear forgets them and keeps the memory. UINT32_MAX, NULL: out of memory. */
typedef struct rfx_symlocal rfx_symlocal;
rfx_symlocal *rfx_symlocal_new(void);
void rfx_symlocal_free(rfx_symlocal *l);
void rfx_symlocal_clear(rfx_symlocal *l);
uint32_t rfx_symlocal_intern(rfx_symlocal *l, const char *s, size_t n);
/* Adds l's symbols to t; local id -> t's id (l's, valid until l changes). */
const uint32_t *rfx_symlocal_merge(rfx_symlocal *l, rfx_symtab *t);
/* Adds the n tables' symbols to t, as their merges one after another would (ids in that
 * order), on up to nthreads threads; each table's ids then hold its local ids' ids in t.
 * False on out of memory (t then holds the symbols it held). */
bool rfx_symlocal_merge_all(rfx_symlocal *const *locals, int n, rfx_symtab *t, int nthreads);
/* Local id -> the table's id, after a merge. */
const uint32_t *rfx_symlocal_ids(const rfx_symlocal *l);

/* ---- record table: tuples of values <-> dense 32-bit ids ------------------------ */
/* A record value (Soufflé's `[a, b]`) is the id of its fields' tuple here; 0 is nil, the
 * record of no tuple. Not thread-safe: the functor environment serialises its use. */
#define RFX_MAX_RECORD_FIELDS 64
typedef struct rfx_records rfx_records;
rfx_records *rfx_records_new(void);
void rfx_records_free(rfx_records *r);
/* The id of the tuple f[0..n) (made if new; ids from 1); UINT32_MAX when out of memory. */
uint32_t rfx_records_pack(rfx_records *r, const uint32_t *f, int n);
/* The fields of record id (*n of them); NULL for nil or an id never made. Valid until
 * the next pack. */
const uint32_t *rfx_records_fields(const rfx_records *r, uint32_t id, int *n);

/* ---- fault injection ------------------------------------------------------------ */
/* Allocation and file-write wrappers that can be told to fail the N-th call
 * (SQLite-style fault injection), so every error path can be exercised by tests.
 * Set RFX_FAULT_ALLOC=N (host allocations), RFX_FAULT_DEVICE=N (device allocations) or
 * RFX_FAULT_WRITE=N in the environment, or call rfx_fault_set(); 0 disables. Counting is
 * process-wide and thread-safe.
 * The allocation wrappers also refuse (NULL) a block of 256 MiB or more that exceeds the
 * memory the system reports available (MemAvailable; RFX_HOST_AVAILABLE=bytes stands in
 * for it), so a result too big for the machine fails as "out of memory" instead of the
 * kernel killing rfx when the promised pages are touched. */
void *rfx_malloc(size_t n);
void *rfx_calloc(size_t n, size_t size);
void *rfx_realloc(void *p, size_t n);

/* fwrite/fputs/fclose equivalents that honour RFX_FAULT_WRITE; return false on failure. */
bool rfx_fwrite(FILE *f, const void *buf, size_t n);
bool rfx_fclose(FILE *f);
/* pwrite of all n bytes at offset `at` (retried on short writes and EINTR); false on
 * failure with errno set where the system set it. */
bool rfx_pwrite(int fd, const void *buf, size_t n, long long at);

/* True when this device allocation must fail (called by the CUDA backend's allocator). */
bool rfx_fault_device_alloc(void);

/* Arm injection: the alloc_n-th allocation / write_n-th write from now fails (0 = never). */
void rfx_fault_set(long alloc_n, long write_n);
/* Arm injection of device allocations: the n-th from now fails (0 = never). */
void rfx_fault_set_device(long n);
/* Whether any injected fault has fired since the last rfx_fault_set(). */
bool rfx_fault_fired(void);
/* Guarded calls (allocations and writes) made so far. */
long rfx_fault_calls(void);

/* ---- threads and time ------------------------------------------------------------ */
/* Seconds on the monotonic clock (CLOCK_MONOTONIC): for intervals and trace spans. */
double rfx_seconds(void);

/* Runs fn(i, ctx) for i in [0, n) on up to nthreads threads; fn must be thread-safe. */
void rfx_parallel_for(int n, int nthreads, void (*fn)(int i, void *ctx), void *ctx);
/* Tests: whether the kept threads watch for the next call before sleeping (pool.c): 1
 * always, 0 never, -1 as the machine says (the default). */
void rfx_pool_watch(int mode);
/* memcpy of n bytes on up to nthreads threads, each a piece of at least RFX_PAR_COPY_MIN
 * bytes (one thread cannot fill a host's memory bandwidth: see docs/PERFORMANCE.md). */
#define RFX_PAR_COPY_MIN ((size_t)4 << 20)
void rfx_parallel_memcpy(void *dst, const void *src, size_t n, int nthreads);

/* ---- hashing ------------------------------------------------------------------------ */
/* 64-bit FNV-1a of n bytes, continuing from h (start with RFX_FNV_INIT): a record's and a
 * choice key's hash, and a generated kernel source's identity (found once when it is generated,
 * rfx_fgroup.source_hash, so that the JIT's caches need not hash the text on each run). */
#define RFX_FNV_INIT 1469598103934665603ull
/* A 64-bit key's bits mixed (splitmix64's finalizer): an open-addressing table's slot. */
static inline uint64_t rfx_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
static inline uint64_t rfx_fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* ---- choice domains ---------------------------------------------------------------- */
/* A relation's `choice-domain`s: domain q is the columns cols[first[q] .. first[q] + ncols[q]). */
typedef struct rfx_choice_domains {
    int ndom;
    const int *ncols, *first, *cols;
} rfx_choice_domains;

/* Marks keep[i] for each of the n tuples of rows (arity columns each, tried in order) that
 * enters a relation with domains d holding the nsets sets held[k] (nheld[k] tuples each,
 * sorted sets): those sharing no domain's values with a held tuple or an earlier kept one
 * (choice.c). */
rfx_status rfx_choice_select(const rfx_choice_domains *d, int arity, const uint32_t *const *held,
                             const size_t *nheld, int nsets, const uint32_t *rows, size_t n, bool *keep);

/* ---- values ----------------------------------------------------------------------- */
/* Rows of one or two columns up to this many are sorted by one block in shared memory on a
 * device (primitives/gpu_sort.cu's sort_small; Harmony names it sort.small). */
#define RFX_SORT_ONE_BLOCK_MAX 2048
#define RFX_MAX_ARITY 128        /* attributes of a relation (the front end checks it) */

/* A place in a program's text, for messages. */
typedef struct rfx_loc {
    int line, col;             /* 1-based; 0 when unknown */
} rfx_loc;

#include "rx_kinds.h"   /* rfx_prim, rfx_binop, rfx_cal_op, rfx_aggfn, rfx_cmpop */

const char *rfx_prim_name(rfx_prim p);
/* The operators as Soufflé writes them ("+", "band", "<=", "count", ...). */
const char *rfx_binop_str(rfx_binop op);
const char *rfx_cmpop_str(rfx_cmpop op);
const char *rfx_aggfn_str(rfx_aggfn fn);

/* ---- scalar expression programs ----------------------------------------------------- */
/* The expressions every executor evaluates over a tuple's columns (rfx_rx below): the
 * planner (ra_ir) builds them, the operators (primitives/, on the CPU and in the GPU's
 * interpreter) run them, with the semantics of rx_ops.h; expr.c evaluates one on a tuple.
 *
 * Functor nodes (RFX_RX_FN, functors.c) are Soufflé's intrinsic functors that read or make
 * symbols, or convert between kinds of values (cat, substr, to_number, ...). They need the
 * program's symbol table while a plan runs, so they run on the host, on any number of
 * threads: their environment serialises the table's use. A functor that fails
 * (to_number of "abc") records why and sets *fail; the run stops with that message,
 * naming the rule, as on a division by zero. An environment borrows its symbol table;
 * the plan owns the environment. */
/* The operations of RFX_RX_FN nodes, each over arguments of fixed kinds. */
typedef enum rfx_fn_op {
    RFX_FX_CAT,                /* symbol, symbol -> symbol */
    RFX_FX_STRLEN,             /* symbol -> number (bytes) */
    RFX_FX_SUBSTR,             /* symbol, number, number -> symbol */
    RFX_FX_ORD,                /* symbol -> number (its id) */
    RFX_FX_CONTAINS,           /* symbol, symbol -> 0/1: the first occurs in the second */
    RFX_FX_MATCH,              /* symbol, symbol -> 0/1: the second matches the first, an ECMAScript
                                * regex; 2 when the pattern is invalid (neither match nor !match holds) */
    RFX_FX_S2I, RFX_FX_S2U, RFX_FX_S2F,   /* symbol -> number, unsigned, float (parsed as Soufflé does) */
    RFX_FX_I2S, RFX_FX_U2S, RFX_FX_F2S,   /* number, unsigned, float -> symbol */
    RFX_FX_F2I, RFX_FX_F2U, RFX_FX_I2F, RFX_FX_U2F,   /* between floats and integers */
    RFX_FX_AUTOINC,            /* -> number: 0, 1, 2, ... in the order of evaluation */
    RFX_FX_SYMCMP,             /* symbol, symbol -> number: -1, 0 or 1 as their texts compare, byte by
                                * byte (a prefix first): `<` and its kin on symbols, as in Soufflé */
    RFX_FX_PACK,               /* any values -> record: the id of their tuple (`[a, b]`) */
    RFX_FX_UNPACK,             /* record, i (a constant) -> its i-th field (0 for nil) */
    RFX_FX_USER,               /* a user-defined functor (`.functor`; the node's col: its index) */
    RFX_FX_S2D, RFX_FX_D2S,    /* symbol "YYYY-MM-DD" -> date, and back */
    RFX_FX_LIKE,               /* symbol, symbol -> 0/1: the second matches the first, an SQL LIKE
                                * pattern (`%` any text, `_` one UTF-8 character, no escape) */
    RFX_FX_IN_RANGE_I, RFX_FX_IN_RANGE_U,   /* number (unsigned) v, from, to[, step] -> 0/1: v is one
                                * of range(from, to[, step])'s values (`v = range(..)`, v bound) */
    RFX_FX_COUNT
} rfx_fn_op;

const char *rfx_fn_op_name(rfx_fn_op op);

typedef struct rfx_fn_env rfx_fn_env;

rfx_fn_env *rfx_fn_env_new(rfx_symtab *syms);   /* NULL on out-of-memory */
void rfx_fn_env_free(rfx_fn_env *env);
/* A run starts: autoinc() from 0 again, no failure recorded. */
void rfx_fn_env_reset(rfx_fn_env *env);
/* Why the first failing functor failed since the last reset, or NULL. */
const char *rfx_fn_env_error(const rfx_fn_env *env);
/* Records why an expression failed (the first reason since the last reset is kept). */
void rfx_fn_env_note(rfx_fn_env *env, const char *why);

/* op over its nargs arguments' values; sets *fail (and records why) on failure. */
uint32_t rfx_fn_apply(rfx_fn_env *env, rfx_fn_op op, const uint32_t *args, int nargs, bool *fail);
/* A command whose functors make symbols runs on every thread by speculation: between
 * rfx_fn_env_speculate and rfx_fn_env_speculated the functors that make symbols (cat,
 * substr, to_string; rfx_fn_op_makes_symbol) take no lock and add nothing: a text the table
 * holds gives its symbol, one it does not is noted and gives RFX_SYM_MISSING, which they
 * pass on. rfx_fn_env_speculated adds the noted texts in their byte order (so the same
 * symbols get the same ids whatever the threads did) and returns how many it noted: 0, the
 * run stands (its failures are real); more, its rows are not to be used (a failure it had
 * is forgotten) and the command is to run again; RFX_SPEC_GIVEN_UP, the same but too many
 * texts were missing and none was made: the command is to run on one thread; -1, out of
 * memory (recorded). Nothing else may add symbols meanwhile. */
#define RFX_SYM_MISSING UINT32_MAX
#define RFX_SPEC_GIVEN_UP (-2L)
void rfx_fn_env_speculate(rfx_fn_env *env);
long rfx_fn_env_speculated(rfx_fn_env *env);
bool rfx_fn_op_makes_symbol(rfx_fn_op op);
/* Whether the device makes op's symbols too (primitives' rfx_gpu_make_symbols): substr, cat
 * and to_string of a 32-bit integer, whose texts it can build from its copy of the table. */
bool rfx_fn_op_device_makes(rfx_fn_op op);
/* The symbols the symbol-making op makes of n argument tuples (tuple i at args[i * nargs]),
 * into ids[i]: the texts the table lacks are added in their byte order, as
 * rfx_fn_env_speculated adds them. false where one could not be made (recorded). */
bool rfx_fn_env_make_symbols(rfx_fn_env *env, rfx_fn_op op, const uint32_t *args, int nargs, size_t n,
                             uint32_t *ids);
/* The symbol table the environment's functors read and add to. */
rfx_symtab *rfx_fn_env_symbols(const rfx_fn_env *env);
/* Whether op may run on many threads at once, in any row order: it takes no lock and
 * counts nothing (conversions, range tests, reads of symbols such as like and contains). */
bool rfx_fn_op_parallel(rfx_fn_op op);
/* The environment's record table, for readers and writers of facts (with the lock held
 * by rfx_fn_env_pack; rfx_fn_env_records when nothing packs at the same time). */
uint32_t rfx_fn_env_pack(rfx_fn_env *env, const uint32_t *fields, int n);
const rfx_records *rfx_fn_env_records(const rfx_fn_env *env);

/* User-defined functors (`.functor`, user_functors.c): declared to an environment, bound
 * to their code (a shared library's symbol, found by the runtime), called through libffi
 * as Soufflé calls them. A stateless functor takes and returns int32_t (number), uint32_t
 * (unsigned), float, or const char * (symbol); a stateful one takes a symbol table and a
 * record table (souffle_tables.cc) and then every argument as a RamDomain (int32_t: a
 * symbol's or a record's id, a float's bits) and returns one. Calls hold the environment's
 * lock (the symbol table's): one at a time. */
typedef struct rfx_user_sig {
    const char *name;
    int nargs;                 /* at most RFX_MAX_RECORD_FIELDS */
    const rfx_prim *args;
    rfx_prim ret;
    bool stateful;
} rfx_user_sig;
/* Declares n functors (copied; calls name them by index); false on out-of-memory. */
bool rfx_fn_env_declare(rfx_fn_env *env, const rfx_user_sig *sigs, int n);
/* Functor i runs code from now on; false (why in err) where libffi cannot call it. */
bool rfx_fn_env_bind(rfx_fn_env *env, int i, void (*code)(void), char *err, size_t errsz);
/* Whether the library was built with libffi (else no user-defined functor can be called). */
bool rfx_user_functors_supported(void);
/* Functor i over its arguments' values; sets *fail (and records why) when it has no code. */
uint32_t rfx_fn_apply_user(rfx_fn_env *env, int i, const uint32_t *args, int nargs, bool *fail);

/* The Soufflé-ABI tables handed to stateful functors (souffle_tables.cc), over callbacks. */
typedef struct rfx_table_ops {
    void *ctx;
    uint32_t (*find)(void *ctx, const char *s, size_t n);       /* UINT32_MAX: absent */
    uint32_t (*encode)(void *ctx, const char *s, size_t n);
    const char *(*decode)(void *ctx, uint32_t id, size_t *n);
    uint32_t (*pack)(void *ctx, const uint32_t *fields, size_t n);
    const uint32_t *(*unpack)(void *ctx, uint32_t id, size_t n);
} rfx_table_ops;
typedef struct rfx_souffle_tables rfx_souffle_tables;
rfx_souffle_tables *rfx_souffle_tables_new(const rfx_table_ops *ops);   /* NULL on out-of-memory */
void rfx_souffle_tables_free(rfx_souffle_tables *t);
void *rfx_souffle_symbol_table(rfx_souffle_tables *t);   /* a souffle::SymbolTable * */
void *rfx_souffle_record_table(rfx_souffle_tables *t);   /* a souffle::RecordTable * */

/* Regular expressions with the ECMAScript grammar of C++ std::regex, which Soufflé's match
 * uses (regex_shim.cc). NULL for an invalid pattern or out of memory. */
typedef struct rfx_regex rfx_regex;
rfx_regex *rfx_regex_compile(const char *pattern, size_t n);
bool rfx_regex_full_match(const rfx_regex *re, const char *s, size_t n);
void rfx_regex_free(rfx_regex *re);

/* An expression over the columns of a command's input: for two-input commands, columns
 * 0..a0-1 are src0's and a0.. are src1's. */
typedef enum rfx_rx_kind {
    RFX_RX_COL,                /* col */
    RFX_RX_CONST,              /* value (32-bit pattern of prim) */
    RFX_RX_BIN,                /* binop over l, r, computed in prim */
    RFX_RX_NEG,                /* -l in prim */
    RFX_RX_CMP,                /* cmp of l, r compared as prim; yields 0/1 (RFX_DECIMAL: counts of
                                * scales col apart, l's the smaller for col > 0) */
    RFX_RX_AND,                /* l && r */
    RFX_RX_PAIR,               /* the 64-bit value (prim) of words l (high) and r (low) */
    RFX_RX_HALF,               /* op 0: the high word of l (64-bit), 1: its low word (RFX_WORD) */
    RFX_RX_CONV,               /* l's value converted to prim, between widths and kinds (sign- or
                                * zero-extended, truncated, rounded as C converts); col and op: the
                                * decimal scales it counts from and to (0 for other kinds) */
    RFX_RX_CAL,                /* a calendar function (rfx_cal_op) of day l (and months r) */
    RFX_RX_FN                  /* fn (an rfx_fn_op) over args: symbols and conversions (rfx_rx_host_only) */
} rfx_rx_kind;

typedef struct rfx_rx {
    rfx_rx_kind kind;
    rfx_prim prim;             /* type of the value (BIN, NEG, CONST, COL) or operands (CMP) */
    int col;                   /* RFX_RX_COL; RFX_FX_USER's functor index */
    uint64_t value;            /* RFX_RX_CONST (a 32-bit kind's in the low bits) */
    int op;                    /* rfx_binop (BIN), rfx_cmpop (CMP) or rfx_fn_op (FN) */
    struct rfx_rx *l, *r;
    int nargs;                 /* RFX_RX_FN: its arguments (at most 3; a record's fields for PACK) */
    struct rfx_rx **args;
    rfx_fn_env *env;           /* RFX_RX_FN: the plan's (borrowed); on a BIN or CONV of decimals, where
                                * an overflow past 64 bits fails (as a division by zero does) */
    rfx_loc loc;               /* source location, for run-time errors (division by zero) */
} rfx_rx;

/* Whether an expression holds a node only the host runs (an RFX_RX_FN but those reading
 * texts alone, text_ops.h, which the device's interpreter runs too); any RFX_RX_FN; one
 * computed by rx_ops.h's 64-bit functions (64-bit values, calendar functions: the device's
 * interpreter on 64-bit slots, the weaver's kernels by those functions compiled in); a
 * call of a user-defined functor (RFX_FX_USER). */
bool rfx_rx_host_only(const rfx_rx *e);
bool rfx_rx_calls(const rfx_rx *e);
bool rfx_rx_wide(const rfx_rx *e);
bool rfx_rx_calls_user(const rfx_rx *e);
/* Whether e calls a functor that is not rfx_fn_op_parallel: a command evaluating it runs on
 * one thread (the functors' lock would only queue threads; autoinc counts in row order). */
bool rfx_rx_serial(const rfx_rx *e);
/* Whether every functor e calls is rfx_fn_op_parallel or makes symbols: a command
 * evaluating it may run on every thread by speculation (rfx_fn_env_speculate). */
bool rfx_rx_speculable(const rfx_rx *e);
/* Whether evaluating e may fail on some tuple (an integer division or remainder but by a
 * constant not 0, a functor, decimal arithmetic past 64 bits): what must be evaluated on
 * every tuple to report it. */
bool rfx_rx_may_fail(const rfx_rx *e);
/* Whether the device runs e with its symbol-making functors (rfx_fn_op_device_makes) making
 * their symbols there: every functor e calls reads texts or is one of those, and nothing
 * else in e may fail (a division but by a constant not 0, decimal arithmetic). */
bool rfx_rx_device_makes(const rfx_rx *e);
/* Whether a BIN node is a decimal's arithmetic, exact or failing past 64 bits (its env set:
 * + - * of decimals, as rfx_rx_eval64 computes them). */
bool rfx_rx_checked(const rfx_rx *e);
/* The highest column e reads; -1 where it reads none. */
int rfx_rx_max_col(const rfx_rx *e);
/* The range that pred's conjuncts put on column col (>= aa: of src1) by comparing it with
 * expressions of src0's columns alone that cannot fail (`$col <= $0 + 2`, `$1 < $col`), as
 * 32-bit integers of one kind: the first lower and the first upper bound (the others, and
 * these, stay tests of pred). A join whose src1 is sorted on col within each key group
 * searches each src0 row's matches within it (the plan's `range`). False where there is
 * none. */
typedef struct rfx_rx_range {
    const rfx_rx *lo, *hi;     /* NULL: unbounded on that side */
    bool lo_strict, hi_strict;
    bool is_signed;            /* numbers: compared as signed; else unsigned */
} rfx_rx_range;
bool rfx_rx_range_of(const rfx_rx *pred, int aa, int col, rfx_rx_range *r);
/* The leading columns a filter fixes: vals[0..n-1] where pred is `$0 = vals[0] and ... and
 * $n-1 = vals[n-1] and ...` (in any order, compared as numbers, unsigned or symbols, whose
 * equality is their bits'); n, at most max. 0 where pred may fail on a tuple (a division,
 * a functor), so that no tuple it reads may be left unread. */
int rfx_rx_fixed_prefix(const rfx_rx *pred, uint32_t *vals, int max);

/* Evaluation of a scalar expression on one tuple (shared by every CPU executor).
 * Sets *div0 when a division or modulo by zero happens, or a functor fails (its reason in
 * the plan's fn_env). */
uint32_t rfx_rx_eval(const rfx_rx *e, const uint32_t *t0, int a0, const uint32_t *t1, bool *div0);
/* The same, for an expression of any width (a 32-bit kind's value in the low bits). */
uint64_t rfx_rx_eval64(const rfx_rx *e, const uint32_t *t0, int a0, const uint32_t *t1, bool *div0);
/* A decimal's value past 64 bits: *fail set and the reason noted in e's functor
 * environment (the run fails naming the rule, rather than wrap). */
void rfx_rx_overflow(const rfx_rx *e, bool *fail);

/* Evaluation over a batch of rows at once (expr_batch.c), for the CPU's maps and filters:
 * e over rows[i * arity ...] for i < n <= RFX_RX_BATCH into v[i] (a 32-bit kind's value in
 * the low bits), as rfx_rx_eval64 row by row; a failure counts (*div0) only for a row with
 * live[i] set. Only for expressions rfx_rx_batchable takes: no functor (they may count, as
 * autoinc() does, in row order) and not too deep. */
#define RFX_RX_BATCH 256
bool rfx_rx_batchable(const rfx_rx *e);
void rfx_rx_eval_batch(const rfx_rx *e, const uint32_t *rows, int arity, int n, const unsigned char *live,
                       uint64_t *v, bool *div0);

/* A date's text (dates.c): YYYY-MM-DD (a year of up to 7 digits, `-` before it for one
 * before year 0) to days since 1970-01-01; false where it is no date. Back, as snprintf. */
bool rfx_date_parse(const char *s, size_t n, uint32_t *day);
int rfx_date_format(char *buf, size_t cap, uint32_t day);

/* ---- tuning ------------------------------------------------------------------------- */
/* The knobs of rfx's heuristics, for experiments and tests: each has a default that is the
 * right choice as far as measured (docs/PERFORMANCE.md), set through librfx
 * (rfx_config.tune) or `rfx --tune key=value`. Modules read the fields they need from the
 * tuning their caller hands them; none reads the environment for them. The table of names,
 * ranges and meanings is in tuning.c (`rfx --tune help`, docs/cli.md). */
typedef struct rfx_tuning {
    bool demand;                      /* front end: helpers made for their one reader's demand */
    bool split_loops;                 /* executor: split outgrown loops under a cap */
    int join_groups;                  /* weaver: 0 by cost, 1 generated, 2 by members */
    uint64_t jit_min_rows;            /* CUDA: fused groups over fewer rows run unfused */
    bool jit_background;              /* CUDA: uncached groups run unfused while they compile */
    uint64_t cpu_scratch;             /* CPU backend under a cap: bytes beyond it (0: any) */
    bool check_pins;                  /* CPU backend: check host registrations (tests) */
    bool ooc_merges_on_device;        /* out of core: big merges by parts on the device */
    bool pin_host;                    /* out of core: register rows joins copy from */
    uint64_t pin_from;                /* ... of at least this many bytes */
    bool box_snake, box_bounds, box_tries;   /* boxed triejoins */
    double box_outer, box_level0;     /* boxed triejoins: budget shares */
    bool pairs, pairs_early;          /* triangle count by parts */
    bool induced_device;              /* clique-shaped joins by induced parts: subgraphs made on the device */
    double induced_share;             /* ... a part's share of the memory budget */
    bool induced_overlap;             /* ... the next part made on a stream of its own during a join */
    int pairs_host_trie, pairs_lanes, pairs_held, pairs_slot, pairs_rev;
    bool lftj_fuse_levels, lftj_rows; /* GPU triejoin */
    int lftj_narrow;
    uint64_t lftj_trie_from, lftj_unchecked_rows, lftj_regroup_piece, lftj_small_rows;
    int lftj_small_group;
    int search_lanes;                 /* GPU primitives' searches */
    int made_hash_bits;               /* CUDA: bits of the hash that symbols made on the device are told apart by */
    uint64_t pool_keep;               /* CUDA: freed memory an engine's pool keeps between runs (0: a quarter of the budget) */
    int auto_place;                   /* --backend=auto: 0 by cost, 1 device first, 2 alternate */
    bool auto_cpu_device;             /* --backend=auto: a CPU backend as the device (tests) */
    double auto_start_ms, auto_launch_us, auto_host_ns, auto_device_ns, auto_copy_gbs;   /* its cost model */
    double auto_grow_regret;   /* share of a start a loop that may grow past one waits to have lost */
    uint64_t dist_replica_rows;       /* MPI runs: the most rows of a replica kept for a loop */
    uint64_t dist_slice_bytes;        /* MPI runs: plain facts files of at least this size read in slices */
    double dist_skew;                 /* MPI runs: a join side this unbalanced has its hot keys spread */
    uint64_t dist_hot_rows;           /* ... where it has at least this many tuples */
    double dist_hot_part;             /* ... its keys of at least this share of a mean part */
} rfx_tuning;

extern const rfx_tuning rfx_tuning_defaults;
/* Sets one knob from its text; false with the reason in err (unknown key, bad value). */
bool rfx_tuning_set(rfx_tuning *t, const char *key, const char *value, char *err, size_t errcap);
/* Applies `key=value` settings separated by blanks or commas (NULL: none), in order. */
bool rfx_tuning_parse(rfx_tuning *t, const char *spec, char *err, size_t errcap);
/* Writes the table of knobs: name, default, meaning. */
void rfx_tuning_describe(FILE *out);

#endif
