/* functors.c: Soufflé's symbol functors and conversions on the host (base.h). Each
 * follows what Soufflé 2.5 does, C++ library behaviour included (std::stoi, std::stof,
 * std::string::substr, std::to_string, std::regex), so that answers agree. */
#include "base.h"
#include "fn_env.h"
#include "rx_ops.h"
#include "text_ops.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *rfx_fn_op_name(rfx_fn_op op)
{
    static const char *const names[RFX_FX_COUNT] = {
        "cat", "strlen", "substr", "ord", "contains", "match", "to_number", "to_unsigned", "to_float",
        "to_string", "to_string", "to_string", "to_number", "to_unsigned", "to_float", "to_float", "autoinc",
        "compare", "pack", "unpack", "user", "to_date", "to_string", "like", "in_range", "in_range"};
    return names[op];
}

rfx_fn_env *rfx_fn_env_new(rfx_symtab *syms)
{
    rfx_fn_env *env = calloc(1, sizeof *env);
    if (!env)
        return NULL;
    if (pthread_mutex_init(&env->lock, NULL) != 0) {
        free(env);
        return NULL;
    }
    env->syms = syms;
    return env;
}

void rfx_fn_env_free(rfx_fn_env *env)
{
    if (!env)
        return;
    for (size_t i = 0; i < env->nregex; i++)
        rfx_regex_free(env->regexes[i].re);
    free(env->regexes);
    rfx_records_free(env->records);
    rfx_user_functors_free(env);
    for (size_t i = 0; i < env->nmissing; i++)
        free(env->missing[i].s);
    free(env->missing);
    free((void *)env->seen);
    pthread_mutex_destroy(&env->lock);
    free(env);
}

void rfx_fn_env_reset(rfx_fn_env *env)
{
    atomic_store(&env->autoinc, 0);
    env->failed = false;
    env->error[0] = 0;
}

const char *rfx_fn_env_error(const rfx_fn_env *env)
{
    return env->failed ? env->error : NULL;
}

/* ---- with the lock held -------------------------------------------------------------- */
void rfx_fn_env_fail(rfx_fn_env *env, bool *failed, const char *fmt, const char *text)
{
    *failed = true;
    if (env->failed)
        return;
    env->failed = true;
    char shown[200];   /* the offending text, cut to fit the message */
    snprintf(shown, sizeof shown, "%s", text);
    snprintf(env->error, sizeof env->error, fmt, shown);
}

void rfx_fn_env_note(rfx_fn_env *env, const char *why)
{
    bool failed;
    pthread_mutex_lock(&env->lock);
    rfx_fn_env_fail(env, &failed, "%s", why);
    pthread_mutex_unlock(&env->lock);
}

static uint32_t intern(rfx_fn_env *env, const char *s, size_t n, bool *failed)
{
    uint32_t id = rfx_symtab_intern(env->syms, s, n);
    if (id == UINT32_MAX)
        rfx_fn_env_fail(env, failed, "out of memory making a symbol%s", "");
    return id;
}

/* std::stoi / std::stoul over the NUL-ended text: leading blanks and a sign taken, the
 * longest run of digits of the base read; nothing read or out of range fails. */
static bool parse_integer(const char *s, int base, bool is_unsigned, int64_t *out)
{
    errno = 0;
    char *end;
    if (is_unsigned) {
        unsigned long long v = strtoull(s, &end, base);
        if (end == s || errno == ERANGE)
            return false;
        *out = (int64_t)(uint32_t)v;   /* std::stoul's 64 bits, cut to Soufflé's 32 */
        return true;
    }
    long long v = strtoll(s, &end, base);
    if (end == s || errno == ERANGE || v < INT32_MIN || v > INT32_MAX)
        return false;
    *out = v;
    return true;
}

/* Soufflé's RamSignedFromString and RamUnsignedFromString: "0b" (and "-0b") prefixes read
 * binary, "0x" (and "-0x") hexadecimal, anything else decimal; an unsigned may not be
 * negative. */
static bool parse_souffle_int(const char *s, bool is_unsigned, uint32_t *out)
{
    int64_t v;
    if (is_unsigned) {
        const char *p = s;
        while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
            p++;
        if (*p == '-')
            return false;
    }
    if (!is_unsigned && strncmp(s, "-0b", 3) == 0) {
        if (!parse_integer(s + 3, 2, false, &v))
            return false;
        *out = 0u - (uint32_t)v;
        return true;
    }
    bool ok = strncmp(s, "0b", 2) == 0 ? parse_integer(s + 2, 2, is_unsigned, &v)
            : strncmp(s, "0x", 2) == 0 || (!is_unsigned && strncmp(s, "-0x", 3) == 0)
                ? parse_integer(s, 16, is_unsigned, &v)
                : parse_integer(s, 10, is_unsigned, &v);
    if (ok)
        *out = (uint32_t)v;
    return ok;
}

static rfx_regex *regex_of(rfx_fn_env *env, uint32_t pattern, bool *failed)
{
    for (size_t i = 0; i < env->nregex; i++)
        if (env->regexes[i].pattern == pattern)
            return env->regexes[i].re;
    if (!rfx_grow((void **)&env->regexes, &env->capregex, env->nregex + 1, sizeof(regex_entry))) {
        rfx_fn_env_fail(env, failed, "out of memory compiling a regular expression%s", "");
        return NULL;
    }
    rfx_regex *re = rfx_regex_compile(rfx_symtab_str(env->syms, pattern), rfx_symtab_len(env->syms, pattern));
    env->regexes[env->nregex++] = (regex_entry){pattern, re};
    return re;
}

bool rfx_fn_op_makes_symbol(rfx_fn_op op)
{
    return op == RFX_FX_CAT || op == RFX_FX_SUBSTR || op == RFX_FX_I2S || op == RFX_FX_U2S || op == RFX_FX_F2S ||
           op == RFX_FX_D2S;
}

/* The text the symbol-making op makes of a: in buf (MADE_BUF bytes), in *heap where longer
 * (the caller frees it), or in its argument's text (substr); false on out-of-memory. */
enum { MADE_BUF = 64 };
static bool made_text(const rfx_symtab *t, rfx_fn_op op, const uint32_t *a, char *buf, char **heap, const char **s,
                      size_t *n)
{
    *heap = NULL;
    *s = buf;
    switch (op) {
    case RFX_FX_CAT: {
        size_t n0 = rfx_symtab_len(t, a[0]), n1 = rfx_symtab_len(t, a[1]);
        char *p = n0 + n1 < MADE_BUF ? buf : (*heap = malloc(n0 + n1 + 1));
        if (!p)
            return false;
        memcpy(p, rfx_symtab_str(t, a[0]), n0);
        memcpy(p + n0, rfx_symtab_str(t, a[1]), n1);
        *s = p;
        *n = n0 + n1;
        return true;
    }
    case RFX_FX_SUBSTR: {
        /* std::string::substr(pos, count) with Soufflé's 32-bit arguments widened to
         * size_t: a negative position is past the end (Soufflé warns and gives ""), a
         * negative count takes the rest */
        size_t len = rfx_symtab_len(t, a[0]);
        int32_t pos = (int32_t)a[1], cnt = (int32_t)a[2];
        if (pos < 0 || (size_t)pos > len) {
            *n = 0;
            return true;
        }
        *s = rfx_symtab_str(t, a[0]) + pos;
        *n = cnt < 0 || (size_t)cnt > len - (size_t)pos ? len - (size_t)pos : (size_t)cnt;
        return true;
    }
    case RFX_FX_I2S: snprintf(buf, MADE_BUF, "%d", (int32_t)a[0]); break;
    case RFX_FX_U2S: snprintf(buf, MADE_BUF, "%u", a[0]); break;
    case RFX_FX_F2S: snprintf(buf, MADE_BUF, "%f", (double)rfx_as_f32(a[0])); break;   /* std::to_string(float) */
    default: rfx_date_format(buf, MADE_BUF, a[0]); break;   /* RFX_FX_D2S */
    }
    *n = strlen(buf);
    return true;
}

/* The operations that read or make symbols, with the lock held. */
static uint32_t apply_symbolic(rfx_fn_env *env, rfx_fn_op op, const uint32_t *a, bool *failed)
{
    rfx_symtab *t = env->syms;
    if (rfx_fn_op_makes_symbol(op)) {
        char buf[MADE_BUF], *heap;
        const char *text;
        size_t n;
        if (!made_text(t, op, a, buf, &heap, &text, &n)) {
            rfx_fn_env_fail(env, failed, "out of memory making a symbol%s", "");
            return 0;
        }
        uint32_t id = intern(env, text, n, failed);
        free(heap);
        return id;
    }
    switch (op) {
    case RFX_FX_UNPACK: {
        int n;
        const uint32_t *f = env->records ? rfx_records_fields(env->records, a[0], &n) : NULL;
        return f && a[1] < (uint32_t)n ? f[a[1]] : 0;
    }
    case RFX_FX_MATCH: {
        rfx_regex *re = regex_of(env, a[0], failed);
        return !re ? 2u : rfx_regex_full_match(re, rfx_symtab_str(t, a[1]), rfx_symtab_len(t, a[1]));
    }
    case RFX_FX_S2I: case RFX_FX_S2U: {
        uint32_t v = 0;
        if (!parse_souffle_int(rfx_symtab_str(t, a[0]), op == RFX_FX_S2U, &v))
            rfx_fn_env_fail(env, failed, op == RFX_FX_S2U ? "to_unsigned: \"%s\" is not an unsigned number in range"
                                               : "to_number: \"%s\" is not a number in range", rfx_symtab_str(t, a[0]));
        return v;
    }
    case RFX_FX_S2F: {
        const char *s = rfx_symtab_str(t, a[0]);
        char *end;
        errno = 0;
        float f = strtof(s, &end);
        if (end == s || errno == ERANGE) {   /* std::stof: nothing read, or out of range */
            rfx_fn_env_fail(env, failed, "to_float: \"%s\" is not a float in range", s);
            return 0;
        }
        return rfx_of_f32(f);
    }
    case RFX_FX_S2D: {
        uint32_t day = 0;
        if (!rfx_date_parse(rfx_symtab_str(t, a[0]), rfx_symtab_len(t, a[0]), &day))
            rfx_fn_env_fail(env, failed, "to_date: \"%s\" is not a date (YYYY-MM-DD)", rfx_symtab_str(t, a[0]));
        return day;
    }
    default:   /* RFX_FX_ORD */
        return a[0];
    }
}

/* With the lock held. */
uint32_t rfx_fn_env_pack_locked(rfx_fn_env *env, const uint32_t *f, int n, bool *failed)
{
    if (!env->records && !(env->records = rfx_records_new())) {
        rfx_fn_env_fail(env, failed, "out of memory making a record%s", "");
        return 0;
    }
    uint32_t id = rfx_records_pack(env->records, f, n);
    if (id == UINT32_MAX) {
        rfx_fn_env_fail(env, failed, "out of memory making a record (or more than 2^32 of them)%s", "");
        return 0;
    }
    return id;
}

uint32_t rfx_fn_env_pack(rfx_fn_env *env, const uint32_t *fields, int n)
{
    bool failed = false;
    pthread_mutex_lock(&env->lock);
    uint32_t id = rfx_fn_env_pack_locked(env, fields, n, &failed);
    pthread_mutex_unlock(&env->lock);
    return failed ? UINT32_MAX : id;
}

const rfx_records *rfx_fn_env_records(const rfx_fn_env *env)
{
    return env->records;
}

/* ---- speculation (base.h's rfx_fn_env_speculate) ----------------------------------- */
/* A run notes at most SPEC_MAX distinct missing texts: past them it gives up (a command
 * making that many symbols makes them on one thread), its hashes in SPEC_SEEN slots. */
enum { SPEC_MAX = 1024, SPEC_SEEN = 4 * SPEC_MAX, SPEC_PROBES = 16 };

void rfx_fn_env_speculate(rfx_fn_env *env)
{
    pthread_mutex_lock(&env->lock);
    if (!env->seen)
        env->seen = calloc(SPEC_SEEN, sizeof *env->seen);
    else
        memset((void *)env->seen, 0, SPEC_SEEN * sizeof *env->seen);
    env->spec_nomem = !env->seen;
    atomic_store(&env->given_up, false);
    env->failed_before = env->failed;
    pthread_mutex_unlock(&env->lock);
    atomic_store(&env->speculating, true);
}

/* Notes text (n bytes) as missing, once: a hash already in `seen` was noted (a text whose
 * hash another's took is noted in a later run, the one after that one's symbol is made).
 * Gives the run up past SPEC_MAX texts, or where their hashes crowd `seen`. */
static void note_missing(rfx_fn_env *env, const char *text, size_t n)
{
    uint64_t h = rfx_symtab_hash(text, n) | 1;
    bool placed = false;
    for (size_t i = h % SPEC_SEEN, probes = 0; env->seen && probes < SPEC_PROBES; i = (i + 1) % SPEC_SEEN, probes++) {
        uint64_t cur = atomic_load_explicit(&env->seen[i], memory_order_relaxed);
        if (cur == 0 && atomic_compare_exchange_strong(&env->seen[i], &cur, h)) {
            placed = true;
            break;
        }
        if (cur == h)
            return;
    }
    if (!placed) {
        atomic_store(&env->given_up, true);
        return;
    }
    char *copy = malloc(n + 1);
    pthread_mutex_lock(&env->lock);
    if (env->nmissing >= SPEC_MAX)
        atomic_store(&env->given_up, true);
    if (copy && env->nmissing == env->capmissing) {
        size_t cap = env->capmissing ? 2 * env->capmissing : 64;
        rfx_text_ref *m = realloc(env->missing, cap * sizeof *m);
        if (m) {
            env->missing = m;
            env->capmissing = cap;
        }
    }
    if (copy && env->nmissing < env->capmissing) {
        memcpy(copy, text, n);
        copy[n] = 0;
        env->missing[env->nmissing++] = (rfx_text_ref){copy, n};
        copy = NULL;
    } else {
        env->spec_nomem = true;
    }
    pthread_mutex_unlock(&env->lock);
    free(copy);
}

/* A symbol-making functor while speculating: the symbol of its text where the table holds
 * it, else RFX_SYM_MISSING (its text noted). Nothing adds symbols meanwhile, so the table
 * is read without the lock. */
static uint32_t speculated_symbol(rfx_fn_env *env, rfx_fn_op op, const uint32_t *a)
{
    if (atomic_load_explicit(&env->given_up, memory_order_relaxed) ||
        ((op == RFX_FX_CAT || op == RFX_FX_SUBSTR) &&
         (a[0] == RFX_SYM_MISSING || (op == RFX_FX_CAT && a[1] == RFX_SYM_MISSING))))
        return RFX_SYM_MISSING;   /* given up, or made of a text not made yet: nothing to note */
    char buf[MADE_BUF], *heap;
    const char *text;
    size_t n;
    if (!made_text(env->syms, op, a, buf, &heap, &text, &n)) {
        pthread_mutex_lock(&env->lock);
        env->spec_nomem = true;
        pthread_mutex_unlock(&env->lock);
        return RFX_SYM_MISSING;
    }
    uint32_t id = rfx_symtab_find(env->syms, text, n);
    if (id == UINT32_MAX)
        note_missing(env, text, n);
    free(heap);
    return id == UINT32_MAX ? RFX_SYM_MISSING : id;
}

static int text_order(const void *x, const void *y)
{
    const rfx_text_ref *a = x, *b = y;
    int c = memcmp(a->s, b->s, a->n < b->n ? a->n : b->n);
    return c ? c : (a->n > b->n) - (a->n < b->n);
}

long rfx_fn_env_speculated(rfx_fn_env *env)
{
    atomic_store(&env->speculating, false);
    pthread_mutex_lock(&env->lock);
    bool given_up = atomic_load(&env->given_up);
    long made = given_up ? RFX_SPEC_GIVEN_UP : (long)env->nmissing;
    if (given_up || made || env->spec_nomem) {   /* the run's rows are not used: nor its failure */
        env->failed = env->failed_before;
        if (!env->failed)
            env->error[0] = 0;
    }
    bool failed = false;
    if (env->spec_nomem)
        rfx_fn_env_fail(env, &failed, "out of memory making a symbol%s", "");
    if (env->nmissing)
        qsort(env->missing, env->nmissing, sizeof *env->missing, text_order);
    for (size_t i = 0; i < env->nmissing; i++) {
        if (!failed && !given_up)   /* what a run given up noted depends on the threads' timing */
            intern(env, env->missing[i].s, env->missing[i].n, &failed);
        free(env->missing[i].s);
    }
    env->nmissing = 0;
    pthread_mutex_unlock(&env->lock);
    return failed ? -1 : made;
}

bool rfx_fn_op_device_makes(rfx_fn_op op)
{
    return op == RFX_FX_CAT || op == RFX_FX_SUBSTR || op == RFX_FX_I2S || op == RFX_FX_U2S;
}

/* text (n bytes, made in heap or not) in a copy of its own, heap taken over; NULL on
 * out-of-memory. */
static char *made_copy(const char *text, size_t n, char *heap)
{
    if (heap && text == heap)
        return heap;
    char *copy = malloc(n + 1);
    if (copy) {
        memcpy(copy, text, n);
        copy[n] = 0;
    }
    free(heap);
    return copy;
}

/* A text the table lacked and the tuple it was made of (text_order reads it as its text). */
typedef struct missing_text {
    rfx_text_ref text;
    size_t at;
} missing_text;

bool rfx_fn_env_make_symbols(rfx_fn_env *env, rfx_fn_op op, const uint32_t *args, int nargs, size_t n,
                             uint32_t *ids)
{
    bool failed = false;
    missing_text *missing = n ? malloc(n * sizeof *missing) : NULL;
    size_t nmissing = 0;
    pthread_mutex_lock(&env->lock);
    for (size_t i = 0; i < n; i++) {   /* each tuple's symbol, or its text kept */
        char buf[MADE_BUF], *heap, *copy;
        const char *text;
        size_t len;
        if (!missing || !made_text(env->syms, op, args + i * (size_t)nargs, buf, &heap, &text, &len)) {
            rfx_fn_env_fail(env, &failed, "out of memory making a symbol%s", "");
            break;
        }
        ids[i] = rfx_symtab_find(env->syms, text, len);
        if (ids[i] != UINT32_MAX) {
            free(heap);
            continue;
        }
        if (!(copy = made_copy(text, len, heap))) {
            rfx_fn_env_fail(env, &failed, "out of memory making a symbol%s", "");
            break;
        }
        missing[nmissing++] = (missing_text){{copy, len}, i};
    }
    if (nmissing)   /* added in their byte order, repeats next to each other */
        qsort(missing, nmissing, sizeof *missing, text_order);
    for (size_t i = 0; i < nmissing; i++) {
        if (!failed)
            ids[missing[i].at] = intern(env, missing[i].text.s, missing[i].text.n, &failed);
        free(missing[i].text.s);
    }
    pthread_mutex_unlock(&env->lock);
    free(missing);
    return !failed;
}

rfx_symtab *rfx_fn_env_symbols(const rfx_fn_env *env)
{
    return env->syms;
}

bool rfx_fn_op_parallel(rfx_fn_op op)
{
    switch (op) {   /* rfx_fn_apply's cases before its lock, autoinc aside */
    case RFX_FX_F2I: case RFX_FX_F2U: case RFX_FX_I2F: case RFX_FX_U2F: case RFX_FX_IN_RANGE_I:
    case RFX_FX_IN_RANGE_U: case RFX_FX_STRLEN: case RFX_FX_SYMCMP: case RFX_FX_CONTAINS: case RFX_FX_LIKE:
        return true;
    default:
        return false;
    }
}

uint32_t rfx_fn_apply(rfx_fn_env *env, rfx_fn_op op, const uint32_t *a, int nargs, bool *failed)
{
    if (op == RFX_FX_PACK) {
        pthread_mutex_lock(&env->lock);
        uint32_t id = rfx_fn_env_pack_locked(env, a, nargs, failed);
        pthread_mutex_unlock(&env->lock);
        return id;
    }
    switch (op) {
    case RFX_FX_F2I: {   /* x86's conversion, as Soufflé's static_cast compiles there: NaN and
                          * values out of range give INT32_MIN */
        float f = rfx_as_f32(a[0]);
        return f >= -2147483648.0f && f < 2147483648.0f ? (uint32_t)(int32_t)f : 0x80000000u;
    }
    case RFX_FX_F2U: {   /* through 64 bits, as x86 converts a float to an unsigned */
        float f = rfx_as_f32(a[0]);
        return f >= -9223372036854775808.0f && f < 9223372036854775808.0f ? (uint32_t)(int64_t)f : 0u;
    }
    case RFX_FX_I2F: return rfx_of_f32((float)(int32_t)a[0]);
    case RFX_FX_U2F: return rfx_of_f32((float)a[0]);
    case RFX_FX_AUTOINC: return atomic_fetch_add(&env->autoinc, 1u);
    case RFX_FX_IN_RANGE_I: case RFX_FX_IN_RANGE_U: {
        /* the values range() makes (primitives' rfx_cpu_range), tested without making them:
         * 64-bit steps from `from` towards `to`, never past it; a step of 0 gives `from`
         * alone unless it is `to`; an unsigned explicit step counts up */
        bool u = op == RFX_FX_IN_RANGE_U;
        int64_t v = u ? (int64_t)a[0] : (int32_t)a[0], x = u ? (int64_t)a[1] : (int32_t)a[1],
                b = u ? (int64_t)a[2] : (int32_t)a[2];
        int64_t s = nargs > 3 ? (u ? (int64_t)a[3] : (int32_t)a[3]) : x <= b ? 1 : -1;
        if (s == 0)
            return v == x && x != b;
        if (s > 0)
            return x <= v && v < b && (v - x) % s == 0;
        return b < v && v <= x && (x - v) % -s == 0;
    }
    /* reads of symbols alone take no lock (symtab.c: a reader beside a thread adding
     * symbols is safe), so that a test over a column of texts runs on every thread */
    case RFX_FX_STRLEN: case RFX_FX_SYMCMP: case RFX_FX_CONTAINS: case RFX_FX_LIKE: {
        const rfx_symtab *t = env->syms;
        uint32_t b = op == RFX_FX_STRLEN ? a[0] : a[1];
        return rfx_text_apply(op, rfx_symtab_str(t, a[0]), rfx_symtab_len(t, a[0]), rfx_symtab_str(t, b),
                              rfx_symtab_len(t, b));
    }
    default: break;
    }
    if (rfx_fn_op_makes_symbol(op) && atomic_load_explicit(&env->speculating, memory_order_relaxed))
        return speculated_symbol(env, op, a);
    pthread_mutex_lock(&env->lock);
    uint32_t v = apply_symbolic(env, op, a, failed);
    pthread_mutex_unlock(&env->lock);
    return v;
}
