/* functor_libs.c: the code of user-defined functors (`.functor`), from the shared libraries
 * a run names as Soufflé's command line does: -l NAME loads libNAME.so (default: functors),
 * looked for in each -L directory (default: the current one), then where the system's
 * loader looks. Each functor the program calls is bound to the symbol of its name in the
 * first library that has it. */
#include "runtime.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rfx_functor_libs {
    void **handles;
    int n;
    size_t cap;
};

void rfx_functor_libs_free(rfx_functor_libs *l)
{
    if (!l)
        return;
    for (int i = 0; i < l->n; i++)
        dlclose(l->handles[i]);
    free(l->handles);
    free(l);
}

/* Appends the words of list (blank- or comma-separated) and of the program's pragmas
 * `key` to *out, a NUL-separated buffer; returns the count (-1: out of memory). */
static int words(const char *list, const rfx_program *p, const char *key, char **out, size_t *len)
{
    int n = 0;
    for (int k = -1; k < p->npragmas; k++) {
        const char *s = k < 0 ? list : strcmp(p->pragmas[k].key, key) == 0 ? p->pragmas[k].value : NULL;
        while (s && *s) {
            size_t w = strcspn(s, " \t,");
            if (w) {
                char *b = realloc(*out, *len + w + 1);
                if (!b)
                    return -1;
                memcpy(b + *len, s, w);
                b[*len + w] = 0;
                *out = b;
                *len += w + 1;
                n++;
            }
            s += w;
            s += strspn(s, " \t,");
        }
    }
    return n;
}

static const char *nth(const char *buf, int i)
{
    while (i-- > 0)
        buf += strlen(buf) + 1;
    return buf;
}

static bool keep_handle(rfx_functor_libs *l, void *h)
{
    if (!rfx_grow((void **)&l->handles, &l->cap, (size_t)l->n + 1, sizeof(void *))) {
        dlclose(h);
        return false;
    }
    l->handles[l->n++] = h;
    return true;
}

int rfx_functors_bind(const rfx_program *prog, rfx_fn_env *env, const char *dirs, const char *libs,
                      rfx_functor_libs **held, FILE *err)
{
    const rfx_functor_decl *first = NULL;
    for (int i = 0; i < prog->nfunctors && !first; i++)
        if (prog->functors[i].used)
            first = &prog->functors[i];
    if (!first)
        return RFX_EXIT_OK;
    rfx_diag d = {.file = prog->file, .src = prog->src, .out = err, .map = &prog->lines};
    if (!rfx_user_functors_supported()) {
        rfx_diag_error(&d, first->loc, "functor '%s': this rfx was built without libffi, which calls user-defined "
                       "functors", first->name);
        return RFX_EXIT_PROGRAM;
    }
    int status = RFX_EXIT_OK;
    if (!*held) {   /* the libraries, once per engine */
        char *dbuf = NULL, *lbuf = NULL;
        size_t dlen = 0, llen = 0;
        int nd = words(dirs, prog, "library-dir", &dbuf, &dlen);
        int nl = words(libs, prog, "libraries", &lbuf, &llen);
        rfx_functor_libs *l = rfx_calloc(1, sizeof *l);
        if (nd < 0 || nl < 0 || !l) {
            free(dbuf), free(lbuf), free(l);
            fprintf(err, "rfx: error: out of memory opening the functors' libraries\n");
            return RFX_EXIT_RESOURCE;
        }
        for (int i = 0; i < (nl ? nl : 1) && status == RFX_EXIT_OK; i++) {
            const char *name = nl ? nth(lbuf, i) : "functors";
            char path[4096], why[512] = "";
            void *h = NULL;
            for (int k = 0; k < (nd ? nd : 1) && !h; k++) {
                snprintf(path, sizeof path, "%s/lib%s.so", nd ? nth(dbuf, k) : ".", name);
                if (!(h = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
                    const char *e = dlerror();
                    if (e && !strstr(e, "No such file"))   /* there but unloadable: say why */
                        snprintf(why, sizeof why, ": %s", e);
                }
            }
            if (!h && !why[0]) {
                snprintf(path, sizeof path, "lib%s.so", name);
                h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
            }
            if (!h) {
                char where[1024] = "'.'";
                for (int k = 0; k < nd; k++)
                    snprintf(where + (k ? strlen(where) : 0), sizeof where - (k ? strlen(where) : 0), "%s'%s'",
                             k ? ", " : "", nth(dbuf, k));
                rfx_diag_error(&d, first->loc, "functor library 'lib%s.so' cannot be loaded from %s%s (give its "
                               "directory with -L and its name with -l)", name, where, why);
                status = RFX_EXIT_IO;
            } else if (!keep_handle(l, h)) {
                fprintf(err, "rfx: error: out of memory opening the functors' libraries\n");
                status = RFX_EXIT_RESOURCE;
            }
        }
        free(dbuf), free(lbuf);
        if (status != RFX_EXIT_OK) {
            rfx_functor_libs_free(l);
            return status;
        }
        *held = l;
    }
    for (int i = 0; i < prog->nfunctors && status == RFX_EXIT_OK; i++) {
        const rfx_functor_decl *f = &prog->functors[i];
        if (!f->used)
            continue;
        void *sym = NULL;
        for (int k = 0; k < (*held)->n && !sym; k++)
            sym = dlsym((*held)->handles[k], f->name);
        char why[256];
        if (!sym) {
            rfx_diag_error(&d, f->loc, "functor '%s': no library given defines the symbol '%s'", f->name, f->name);
            status = RFX_EXIT_PROGRAM;
        } else if (!rfx_fn_env_bind(env, i, (void (*)(void))sym, why, sizeof why)) {
            rfx_diag_error(&d, f->loc, "%s", why);
            status = RFX_EXIT_PROGRAM;
        }
    }
    return status;
}
