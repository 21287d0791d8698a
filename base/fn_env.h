/* fn_env.h: the functor environment's state, shared by functors.c (Soufflé's intrinsic
 * functors) and user_functors.c (`.functor`); private to base/. */
#ifndef RFX_FN_ENV_H
#define RFX_FN_ENV_H

#include "base.h"

#include <pthread.h>
#include <stdatomic.h>

typedef struct regex_entry {
    uint32_t pattern;          /* symbol id */
    rfx_regex *re;             /* NULL: the pattern is invalid (match is false, as Soufflé's) */
} regex_entry;

typedef struct rfx_user_fn rfx_user_fn;   /* user_functors.c */

typedef struct rfx_text_ref {
    char *s;                   /* owned */
    size_t n;
} rfx_text_ref;

struct rfx_fn_env {
    rfx_symtab *syms;
    pthread_mutex_t lock;      /* adding symbols, the regex cache, the records, the error, user functors */
    atomic_uint autoinc;
    bool failed;
    char error[320];
    regex_entry *regexes;
    size_t nregex, capregex;
    rfx_records *records;      /* made on the first record */
    rfx_user_fn *user;         /* the declared user-defined functors */
    int nuser;
    rfx_souffle_tables *tables;   /* what stateful ones are handed, made on their first call */
    /* rfx_fn_env_speculate's run: the texts not in the table (each once, as far as the
     * hashes in `seen` tell), whether the environment had failed before it, out of memory */
    atomic_bool speculating, given_up;
    _Atomic uint64_t *seen;    /* SPEC_SEEN texts' hashes (0: free), made on the first run */
    rfx_text_ref *missing;
    size_t nmissing, capmissing;
    bool failed_before, spec_nomem;
};

/* With the lock held: records why the first failure failed (fmt has one %s, for text). */
void rfx_fn_env_fail(rfx_fn_env *env, bool *failed, const char *fmt, const char *text);
/* With the lock held: the record of n fields (0 and *failed set on out-of-memory). */
uint32_t rfx_fn_env_pack_locked(rfx_fn_env *env, const uint32_t *f, int n, bool *failed);
void rfx_user_functors_free(rfx_fn_env *env);

#endif
