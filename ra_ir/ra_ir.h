/* ra_ir.h: the query plan (Red Fox §3.1.1): relation variables and a CFG of basic
 * blocks of relational-algebra commands; lowering from the checked AST with semi-naive
 * loops, the plan passes, and the printer (`rfx --emit=plan`).
 *
 * Ownership: an rfx_plan owns everything it points to (one arena) except `prog`, which
 * it borrows: free the plan before the program. Plans are immutable after
 * rfx_plan_build(); executors keep their state beside them. */
#ifndef RFX_RA_IR_H
#define RFX_RA_IR_H

#include "frontend.h"

typedef enum rfx_ra_op {
#define RA_OP(id, name, nsrc, fusion) RFX_RA_##id,
#include "ra_ops.def"
#undef RA_OP
    RFX_RA_NOPS
} rfx_ra_op;

typedef enum rfx_fusion_class { RFX_FUSE_THREAD, RFX_FUSE_CTA, RFX_FUSE_KERNEL, RFX_FUSE_CONTROL } rfx_fusion_class;

const char *rfx_ra_op_name(rfx_ra_op op);
int rfx_ra_op_nsrc(rfx_ra_op op);
rfx_fusion_class rfx_ra_op_fusion(rfx_ra_op op);


/* ---- relation variables -------------------------------------------------------------- */
typedef enum rfx_pvar_kind {
    RFX_PV_REL,                /* a program relation (its full contents); sorted set */
    RFX_PV_DELTA,              /* the last iteration's new tuples of a relation; sorted set */
    RFX_PV_NEW,                /* tuples derived in the current iteration; sorted set */
    RFX_PV_TEMP,               /* an intermediate of one rule; any order */
    RFX_PV_UNIT                /* the nullary relation holding one empty tuple */
} rfx_pvar_kind;

typedef struct rfx_pvar {
    const char *name;
    rfx_pvar_kind kind;
    int arity;
    rfx_prim *types;           /* per column */
    int rel;                   /* program relation (REL, DELTA, NEW), else -1 */
    bool count_only;           /* holds only a size (a counting LFTJ writes it): no tuples */
    bool set_read;             /* a temporary read by SORT_UNIQUE alone: its writer may drop
                                * repeated rows and write them in any order */
    bool *unread;              /* an input relation's columns no rule reads (ra_ir/unread.c),
                                * read as one constant; NULL: every column read */
    bool unneeded;             /* a relation no output depends on, where only results are seen:
                                * its rules are not run (ra_ir/needed.c) */
} rfx_pvar;

/* ---- commands ---------------------------------------------------------------------- */
/* The schedule of a leapfrog triejoin over sources larger than the memory budget (the
 * out-of-core layer): boxes of the sources' slices fit any join; the others are faster
 * where the join's shape allows them (rfx_plan_lftj_schedules decides). */
typedef enum rfx_lftj_parts {
    RFX_LFTJ_BOXES,      /* boxes of slices of every source (lftj/boxing.c) */
    RFX_LFTJ_PAIRS,      /* a triangle count over one two-column relation: by parts of its
                          * vertices, each part's pairs joined whole (a device's count) */
    RFX_LFTJ_INDUCED,    /* four or more variables over one two-column relation, the first
                          * joined with every other: by parts of the first variable's values,
                          * each with the subgraph their neighbours induce (lftj/induced.c) */
} rfx_lftj_parts;

typedef struct rfx_ra_cmd {
    rfx_ra_op op;
    int dst;                   /* destination variable (-1 for OUTPUT, PRINTSIZE, jumps) */
    int src[2];                /* operands, -1 when unused */
    int nkeys;                 /* JOIN/MAPJOIN/INTERSECT/DIFFERENCE/AGGREGATE: key prefix length;
                                * SORT: the leading columns to order by, stably (rows with
                                * equal ones keep their order: an aggregate's fold of floats
                                * follows it); 0: all columns. SORT_UNIQUE: a hint, the
                                * leading columns src comes sorted on (backends check it) */
    rfx_rx *pred;              /* filter (SELECT, MAPFILTER, MAPJOIN, PRODUCT) or NULL */
    int nout;                  /* output expressions (PROJECT, MAP*, JOIN, PRODUCT) */
    rfx_rx **out;
    rfx_aggfn agg;             /* AGGREGATE: function */
    int agg_col;               /* AGGREGATE: column of src1 aggregated (-1 for count) */
    rfx_prim agg_prim;         /* AGGREGATE: type of that column and of the result */
    int nvars;                 /* JUMP_IF_EMPTY, JUMP_IF_FULL: variables tested; LFTJ: its sources */
    int *vars;
    int *colvar;               /* LFTJ: per source, per column, the variable it holds (flattened) */
    bool count_only;           /* LFTJ: only the number of bindings is needed (dst holds no rows) */
    bool lftj_swap;            /* LFTJ, count-only: its first two variables may run in either order
                                * (rfx_plan_lftj_schedules); a backend that can measure which
                                * order probes less picks it at run time */
    rfx_lftj_parts parts;      /* LFTJ: how it runs where its sources outgrow the memory budget */
    bool disjoint;             /* UNION: the operands share no tuple (full u new, new = derived - full) */
    bool probe;                /* INTERSECT, DIFFERENCE: src0 in any order, each row searched in src1
                                * (a probe, not a merge); dst in src0's order or sorted on the
                                * keys (a backend may sort src0 and merge where searches cost
                                * more): either keeps an order src0 had on fewer columns.
                                * JOIN, MAPJOIN: src0 in any order, each row's key searched in
                                * src1 (or src0 sorted first where searches cost more); dst in
                                * no order the plan counts on */
    bool range;                /* JOIN, MAPJOIN, PRODUCT: src1 is sorted on its first nkeys + 1
                                * columns, so that pred's comparisons of column nkeys with src0's
                                * values (rfx_rx_range_of) narrow each src0 row's matches to a
                                * range of its key group; a backend may ignore it (pred tests them) */
    bool optional;             /* INTERSECT probe: a filter nothing's answer depends on (the rows
                                * it drops meet nothing later); a backend may keep them where
                                * filtering costs it more than they do */
    int target;                /* JUMP, JUMP_IF_EMPTY, JUMP_IF_FULL: block index */
    int ntuples;               /* FACTS: tuples, arity of dst each */
    uint32_t *tuples;
    int rule;                  /* clause the command was lowered from, -1 for none */
    int io;                    /* INPUT, OUTPUT: which of the relation's directives */
    bool host_only;            /* no device runs it: functors but those reading texts alone
                                * (rfx_rx_host_only) or making symbols on the device (below),
                                * RANGE, expressions past the device interpreter's size (rx_ops.h) */
    bool device_makes;         /* a map whose outputs make symbols the device makes too
                                * (rfx_rx_device_makes; its filter makes none): the device makes
                                * them, the host only the distinct texts it lacks */
    bool wide;                 /* its expressions compute 64-bit values: the device interprets
                                * them, no fused kernel is generated for it */
    bool functors;             /* its expressions call functors (RFX_RX_FN: the symbol table; the
                                * device interprets those it runs, no fused kernel for it) */
    bool user_functors;        /* ... user-defined ones among them (RFX_FX_USER; the profile counts them) */
} rfx_ra_cmd;

typedef struct rfx_block {
    int ncmds, cap;
    rfx_ra_cmd *cmds;
    const char *label;         /* what the block does, for printing */
    int loop_head;             /* for a loop body: index of its own first block; else -1 */
} rfx_block;

typedef enum rfx_join_choice {
    RFX_PLAN_JOIN_AUTO,             /* leapfrog triejoin for cyclic bodies of 3+ atoms, binary joins elsewhere */
    RFX_PLAN_JOIN_BINARY,           /* binary joins only */
    RFX_PLAN_JOIN_LFTJ              /* leapfrog triejoin for every body of 2+ atoms it can take */
} rfx_join_choice;

typedef struct rfx_plan_opts {
    bool no_passes;            /* skip optimisation passes (debugging) */
    rfx_join_choice join;
    bool no_count_only;        /* keep every relation's tuples (no count-only LFTJ) */
    bool no_fuse_maps;         /* keep SELECT/PROJECT/MAP apart (fusion off, `--no-fuse`) */
    bool results_only;         /* only outputs and printed sizes are seen after a run: input
                                * columns no rule reads need not be read (rfx_pvar.unread) */
} rfx_plan_opts;

/* Where a recursive relation's column gets its values (domain.c): from the rows of relations
 * of earlier strata and from constants written in its rules, or from expressions (open). */
typedef struct rfx_col_domain {
    bool open;
    int nconsts;               /* constants written into it (at least their distinct values) */
    int nsrc;
    int *src;                  /* program relations whose values it may hold */
} rfx_col_domain;

typedef struct rfx_plan {
    rfx_arena *arena;
    const rfx_program *prog;   /* borrowed */
    int nvars, varcap;
    rfx_pvar *vars;
    int nblocks, blockcap;
    rfx_block *blocks;
    int unit;                  /* index of the unit variable */
    int *relvar;               /* per program relation: its RFX_PV_REL variable */
    int *split_col;            /* per program relation: the column its recursion keeps
                                * (rfx_plan_find_splits), -1 for none */
    rfx_col_domain **domain;   /* per program relation of a recursive stratum: per column, where
                                * its values come from (rfx_plan_find_domains); else NULL */
    rfx_fn_env *fn_env;        /* what functors need while the plan runs (owned) */
} rfx_plan;

/* The variables a command reads, by position: k < rfx_ra_cmd_ninputs(c); src[0..1] come
 * first (-1 when unused), then vars (LFTJ's sources, JUMP_IF_EMPTY's tested relations). */
static inline int rfx_ra_cmd_ninputs(const rfx_ra_cmd *c)
{
    return 2 + c->nvars;
}
static inline int rfx_ra_cmd_input(const rfx_ra_cmd *c, int k)
{
    return k < 2 ? c->src[k] : c->vars[k - 2];
}

/* Whether c is one of the host's commands that compare new tuples with what a relation
 * holds (CHOICE, EQREL, LATTICE): they read the relations in vars as the sets they are
 * stored in, and have no part-wise path. */
static inline bool rfx_ra_cmd_reads_held(const rfx_ra_cmd *c)
{
    return c->op == RFX_RA_CHOICE || c->op == RFX_RA_EQREL || c->op == RFX_RA_LATTICE;
}

/* Whether c can read its k-th input as several sorted, disjoint sets (a relation kept as
 * its main rows and the runs its small deltas were added as): the relation a disjoint
 * UNION grows in place (k = 0), the relation a DIFFERENCE takes away or an INTERSECT keeps
 * (k = 1: a semi-join searches each set, so a thin recursion's test of a growing relation
 * merges nothing). */
static inline bool rfx_ra_cmd_reads_runs(const rfx_ra_cmd *c, int k)
{
    return (c->op == RFX_RA_UNION && c->disjoint && k == 0 && c->dst == c->src[0] && c->src[1] != c->dst) ||
           ((c->op == RFX_RA_DIFFERENCE || c->op == RFX_RA_INTERSECT) && k == 1 && c->src[0] != c->src[1] &&
            c->dst != c->src[1]);
}

/* Why rfx_plan_build failed: out of memory, or a bug of ours (an internal error). */
typedef struct rfx_plan_error {
    bool internal;
    char message[256];
} rfx_plan_error;

/* Lowers a checked program; NULL on failure, described in *err when err is not NULL. */
rfx_plan *rfx_plan_build(const rfx_program *prog, const rfx_plan_opts *opts, rfx_plan_error *err);
void rfx_plan_free(rfx_plan *plan);

/* Passes (run by rfx_plan_build unless opts->no_passes). */
void rfx_plan_fuse_maps(rfx_plan *plan);   /* SELECT/MAP into their producer: MapFilter/MapJoin */
void rfx_plan_cse(rfx_plan *plan);         /* common subexpressions, loop-invariant hoisting */
void rfx_plan_dce(rfx_plan *plan);         /* drop commands whose temps are never used */
/* float32 sums and means of one relation add each group's values in Soufflé's order */
void rfx_plan_fold_order(rfx_plan *plan);
/* aggregates grouping one variable alike: its rows projected and sorted on the keys once */
void rfx_plan_share_group_sorts(rfx_plan *plan);
void rfx_plan_schedule(rfx_plan *plan);    /* list scheduling inside blocks: free temporaries early */
/* A relation whose only use is .printsize, filled by one LFTJ rule whose bindings are its
 * tuples, gets the count straight from a count-only LFTJ (the last variable is never
 * materialised). */
void rfx_plan_count_only(rfx_plan *plan);
/* Each LFTJ's lftj_swap and parts, from its shape (run after rfx_plan_count_only). */
void rfx_plan_lftj_schedules(rfx_plan *plan);
/* The source of LFTJ c reading variables a and b as its two columns, in that order; -1: none. */
int rfx_ra_lftj_source(const rfx_plan *plan, const rfx_ra_cmd *c, int a, int b);

/* Per program relation, the column whose values no derivation of its (linear) recursion
 * changes, so that its loop may run one range of them at a time (split.c); run by
 * rfx_plan_build. false on out-of-memory. */
bool rfx_plan_find_splits(rfx_plan *plan);
/* Per relation of a recursive stratum, where its columns' values come from (domain.c); run by
 * rfx_plan_build. false on out-of-memory. */
bool rfx_plan_find_domains(rfx_plan *plan);
/* The most rows relation rel can hold, by its columns' sources' rows (rows(ctx, var): a
 * variable's rows now; their relations complete before rel's loop starts): the product over
 * its columns of their sources' rows plus their constants; -1 where some column is open or
 * rel is not recursive. */
double rfx_plan_rows_bound(const rfx_plan *plan, int rel, size_t (*rows)(void *ctx, int var), void *ctx);
/* Marks the symbol columns of input relations that no rule reads (rfx_pvar.unread); false
 * on out of memory. */
bool rfx_plan_mark_unread(rfx_plan *plan);
/* needed[r] (nrels entries) = whether the program's outputs and printed sizes depend on
 * relation r, through the rules (every relation where `ord` or a stateful functor is
 * called); false on out of memory. */
bool rfx_plan_needed_relations(const rfx_program *prog, bool *needed);

/* Consistency checks of the plan (our bugs, not the user's); returns false and prints to
 * out (when not NULL). */
bool rfx_plan_verify(const rfx_plan *plan, FILE *out);

void rfx_plan_print(FILE *out, const rfx_plan *plan);
/* One command's line (two-space indent, newline included). */
void rfx_plan_print_cmd(FILE *out, const rfx_plan *plan, const rfx_ra_cmd *c);
void rfx_rx_print(FILE *out, const rfx_plan *plan, const rfx_rx *e);

#endif
