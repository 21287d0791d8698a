/* functors.h: the semantics of Soufflé's intrinsic functors that read or make symbols, or
 * convert between kinds of values (cat, substr, to_number, ...), as the plan's RFX_RX_FN
 * nodes run them. They need the program's symbol table while a plan runs, so they run on
 * the host, on any number of threads: the environment below serialises the table's use.
 * A functor that fails (to_number of "abc") records why and sets *fail; the run stops
 * with that message, naming the rule, as on a division by zero.
 *
 * Ownership: an environment borrows its symbol table; the plan owns the environment. */
#ifndef RFX_FUNCTORS_H
#define RFX_FUNCTORS_H

#include "frontend.h"

#include <stdbool.h>
#include <stdint.h>

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

/* op over its arguments' values; sets *fail (and records why) on failure. */
uint32_t rfx_fn_apply(rfx_fn_env *env, rfx_fn_op op, const uint32_t *args, bool *fail);

/* Regular expressions with the ECMAScript grammar of C++ std::regex, which Soufflé's match
 * uses (regex_shim.cc). NULL for an invalid pattern or out of memory. */
typedef struct rfx_regex rfx_regex;
rfx_regex *rfx_regex_compile(const char *pattern, size_t n);
bool rfx_regex_full_match(const rfx_regex *re, const char *s, size_t n);
void rfx_regex_free(rfx_regex *re);

#endif
