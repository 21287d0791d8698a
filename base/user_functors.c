/* user_functors.c: user-defined functors (`.functor`) called through libffi with the
 * calling convention Soufflé's interpreter uses (base.h); without libffi at build time
 * every call fails with the reason. */
#include "base.h"
#include "fn_env.h"
#include "rx_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef RFX_HAVE_FFI
#include <ffi.h>
#endif

struct rfx_user_fn {
    char *name;
    int nargs;
    rfx_prim args[RFX_MAX_RECORD_FIELDS];
    rfx_prim ret;
    bool stateful;
    void (*code)(void);        /* NULL: not bound */
#ifdef RFX_HAVE_FFI
    ffi_cif cif;
    ffi_type *types[RFX_MAX_RECORD_FIELDS + 2];
#endif
};

bool rfx_user_functors_supported(void)
{
#ifdef RFX_HAVE_FFI
    return true;
#else
    return false;
#endif
}

void rfx_user_functors_free(rfx_fn_env *env)
{
    for (int i = 0; i < env->nuser; i++)
        free(env->user[i].name);
    free(env->user);
    rfx_souffle_tables_free(env->tables);
}

bool rfx_fn_env_declare(rfx_fn_env *env, const rfx_user_sig *sigs, int n)
{
    rfx_user_fn *u = rfx_calloc((size_t)n + 1, sizeof *u);
    if (!u)
        return false;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(sigs[i].name);
        if (!(u[i].name = rfx_malloc(len + 1))) {
            for (int k = 0; k < i; k++)
                free(u[k].name);
            free(u);
            return false;
        }
        rfx_memcpy(u[i].name, sigs[i].name, len + 1);
        u[i].nargs = sigs[i].nargs < RFX_MAX_RECORD_FIELDS ? sigs[i].nargs : RFX_MAX_RECORD_FIELDS;
        for (int a = 0; a < u[i].nargs; a++)
            u[i].args[a] = sigs[i].args[a];
        u[i].ret = sigs[i].ret;
        u[i].stateful = sigs[i].stateful;
    }
    for (int k = 0; k < env->nuser; k++)
        free(env->user[k].name);
    free(env->user);
    env->user = u;
    env->nuser = n;
    return true;
}

#ifdef RFX_HAVE_FFI
static ffi_type *ffi_of(rfx_prim p, bool stateful)
{
    if (stateful)
        return &ffi_type_sint32;
    switch (p) {
    case RFX_NUMBER: return &ffi_type_sint32;
    case RFX_UNSIGNED: return &ffi_type_uint32;
    case RFX_FLOAT: return &ffi_type_float;
    default: return &ffi_type_pointer;   /* a symbol's text */
    }
}
#endif

bool rfx_fn_env_bind(rfx_fn_env *env, int i, void (*code)(void), char *err, size_t errsz)
{
    rfx_user_fn *u = &env->user[i];
#ifdef RFX_HAVE_FFI
    int n = 0;
    if (u->stateful) {
        u->types[n++] = &ffi_type_pointer;   /* SymbolTable * */
        u->types[n++] = &ffi_type_pointer;   /* RecordTable * */
    }
    for (int a = 0; a < u->nargs; a++)
        u->types[n++] = ffi_of(u->args[a], u->stateful);
    if (ffi_prep_cif(&u->cif, FFI_DEFAULT_ABI, (unsigned)n, ffi_of(u->ret, u->stateful), u->types) != FFI_OK) {
        snprintf(err, errsz, "libffi cannot call functor '%s'", u->name);
        return false;
    }
    u->code = code;
    return true;
#else
    (void)code;
    snprintf(err, errsz, "functor '%s': this rfx was built without libffi, which calls user-defined functors",
             u->name);
    return false;
#endif
}

#ifdef RFX_HAVE_FFI
/* ---- the tables of stateful functors (the lock held: they call back while it is) ---- */
static uint32_t t_find(void *ctx, const char *s, size_t n)
{
    return rfx_symtab_find(((rfx_fn_env *)ctx)->syms, s, n);
}

static uint32_t t_encode(void *ctx, const char *s, size_t n)
{
    rfx_fn_env *env = ctx;
    uint32_t id = rfx_symtab_intern(env->syms, s, n);
    if (id == UINT32_MAX) {
        bool failed;
        rfx_fn_env_fail(env, &failed, "out of memory making a symbol in a functor%s", "");
        return 0;
    }
    return id;
}

static const char *t_decode(void *ctx, uint32_t id, size_t *n)
{
    rfx_fn_env *env = ctx;
    *n = rfx_symtab_len(env->syms, id);
    return rfx_symtab_str(env->syms, id);
}

static uint32_t t_pack(void *ctx, const uint32_t *f, size_t n)
{
    bool failed = false;
    return n > RFX_MAX_RECORD_FIELDS ? 0 : rfx_fn_env_pack_locked(ctx, f, (int)n, &failed);
}

static const uint32_t *t_unpack(void *ctx, uint32_t id, size_t n)
{
    rfx_fn_env *env = ctx;
    int have = 0;
    const uint32_t *f = env->records ? rfx_records_fields(env->records, id, &have) : NULL;
    return f && (size_t)have >= n ? f : NULL;
}

static uint32_t call_locked(rfx_fn_env *env, rfx_user_fn *u, const uint32_t *a, bool *failed)
{
    void *values[RFX_MAX_RECORD_FIELDS + 2];
    const char *texts[RFX_MAX_RECORD_FIELDS];
    void *tables[2];
    int n = 0;
    if (u->stateful) {
        if (!env->tables) {
            rfx_table_ops ops = {env, t_find, t_encode, t_decode, t_pack, t_unpack};
            if (!(env->tables = rfx_souffle_tables_new(&ops))) {
                rfx_fn_env_fail(env, failed, "out of memory calling functor '%s'", u->name);
                return 0;
            }
        }
        tables[0] = rfx_souffle_symbol_table(env->tables);
        tables[1] = rfx_souffle_record_table(env->tables);
        values[n++] = &tables[0];
        values[n++] = &tables[1];
    }
    for (int i = 0; i < u->nargs; i++) {
        if (!u->stateful && u->args[i] == RFX_SYMBOL) {
            texts[i] = rfx_symtab_str(env->syms, a[i]);
            values[n++] = &texts[i];
        } else
            values[n++] = (void *)&a[i];   /* int32_t, uint32_t and float alike: 4 bytes */
    }
    union {
        ffi_arg word;                      /* an integer result, widened by libffi */
        float f;
        const char *s;
    } r;
    memset(&r, 0, sizeof r);
    ffi_call(&u->cif, u->code, &r, values);
    if (u->stateful || u->ret == RFX_NUMBER || u->ret == RFX_UNSIGNED)
        return (uint32_t)r.word;
    if (u->ret == RFX_FLOAT)
        return rfx_of_f32(r.f);
    if (!r.s) {
        rfx_fn_env_fail(env, failed, "functor '%s' returned no symbol (a null pointer)", u->name);
        return 0;
    }
    uint32_t id = rfx_symtab_intern(env->syms, r.s, strlen(r.s));
    if (id == UINT32_MAX)
        rfx_fn_env_fail(env, failed, "out of memory making a symbol%s", "");
    return id;
}
#endif

uint32_t rfx_fn_apply_user(rfx_fn_env *env, int i, const uint32_t *a, int nargs, bool *failed)
{
    pthread_mutex_lock(&env->lock);
    uint32_t v = 0;
    if (i < 0 || i >= env->nuser || !env->user[i].code || nargs != env->user[i].nargs)
        rfx_fn_env_fail(env, failed, "user-defined functor '%s' has no code bound", i >= 0 && i < env->nuser
                                                                                   ? env->user[i].name : "?");
#ifdef RFX_HAVE_FFI
    else
        v = call_locked(env, &env->user[i], a, failed);
#else
    (void)a;
#endif
    pthread_mutex_unlock(&env->lock);
    return v;
}
