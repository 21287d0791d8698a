/* sema_decls.c: the checker's declarations: relations, their directives (.input, .output,
 * .printsize, .limitsize) and the program's pragmas. */
#include "sema.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <errno.h>

/* Whether values of type t are or hold (in a record's fields, at any depth) an ADT's;
 * seen: the types met so far (each is looked into once). */
static bool holds_adt(const rfx_program *p, int t, bool *seen)
{
    if (rfx_program_adt_type(p, t) >= 0)
        return true;
    int rt = rfx_program_record_type(p, t);
    if (rt < 0 || seen[rt])
        return false;
    seen[rt] = true;
    for (int f = 0; f < p->types[rt].nfields; f++)
        if (holds_adt(p, p->types[rt].fields[f], seen))
            return true;
    return false;
}

static void check_order_option(sema *s, const rfx_relation *r, const rfx_directive *dir, const char *k, const char *v);

/* ---- relations and directives ------------------------------------------------- */
/* `choice-domain x, (y, z)`: each domain's attributes as columns. */
static void check_choice(sema *s, const rfx_rel_decl *d, rfx_relation *r)
{
    if (!d->choice)
        return;
    int ncols = 0;
    for (int q = 0; q < d->choice->n; q++)
        ncols += ((rfx_plist *)d->choice->items[q])->n / 2;
    r->choice_ncols = salloc(s, sizeof(int) * (size_t)(d->choice->n + 1));
    r->choice_first = salloc(s, sizeof(int) * (size_t)(d->choice->n + 1));
    r->choice_cols = salloc(s, sizeof(int) * (size_t)(ncols + 1));
    if (!r->choice_ncols || !r->choice_first || !r->choice_cols)
        return;
    if (d->repr && strcmp(d->repr, "eqrel") == 0)
        rfx_diag_error(s->d, d->repr_loc, "'%s': an eqrel relation cannot have a choice-domain", d->name);
    int at = 0;
    for (int q = 0; q < d->choice->n; q++) {
        const rfx_plist *dom = d->choice->items[q];
        r->choice_first[q] = at;
        for (int i = 0; i + 1 < dom->n; i += 2) {
            const char *name = dom->items[i];
            const rfx_loc *loc = dom->items[i + 1];
            int col = -1;
            for (int a = 0; a < r->arity && col < 0; a++)
                if (strcmp(r->attrs[a].name, name) == 0)
                    col = a;
            if (col < 0)
                rfx_diag_error(s->d, loc ? *loc : d->loc, "choice-domain: '%s' has no attribute '%s'", d->name, name);
            else
                r->choice_cols[at++] = col;
        }
        r->choice_ncols[q] = at - r->choice_first[q];
    }
    r->nchoice = d->choice->n;
}

void rfx_sema_check_decls(sema *s)
{
    rfx_program *p = s->p;
    int n = s->ctx->decls.n;
    p->rels = salloc(s, sizeof(rfx_relation) * (size_t)(n + 1));
    int cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    p->rel_slots = salloc(s, sizeof(int) * (size_t)cap);
    if (!p->rels || !p->rel_slots)
        return;
    for (int i = 0; i < cap; i++)
        p->rel_slots[i] = -1;
    p->rel_cap = cap;
    for (int i = 0; i < n; i++) {
        rfx_rel_decl *d = s->ctx->decls.items[i];
        s->d->instance = d->instance;
        int prev = rfx_program_find_rel(p, d->name);
        if (prev >= 0) {
            char at[300];
            rfx_diag_error(s->d, d->loc, "relation '%s' is declared twice (first at %s)", d->name,
                           rfx_diag_where(s->d, p->rels[prev].loc, at, sizeof at));
            continue;
        }
        if (d->nattrs > RFX_MAX_ARITY)
            rfx_diag_error(s->d, d->loc, "relation '%s' has %d attributes; at most %d are supported",
                           d->name, d->nattrs, RFX_MAX_ARITY);
        rfx_relation *r = &p->rels[p->nrels++];
        r->name = d->name;
        rfx_program_index_rel(p, p->nrels - 1);
        r->arity = d->nattrs;
        r->loc = d->loc;
        r->logiql = d->logiql;
        r->limitsize = -1;
        r->attrs = salloc(s, sizeof(rfx_attr) * (size_t)(d->nattrs + 1));
        if (!r->attrs)
            return;
        for (int a = 0; a < d->nattrs; a++) {
            r->attrs[a].name = d->attr_names[a];
            size_t tn = strlen(d->attr_types[a]);
            if (tn > 2 && strcmp(d->attr_types[a] + tn - 2, "<>") == 0) {   /* `x: T<>` */
                char *base = salloc(s, tn - 1);
                if (!base)
                    return;
                memcpy(base, d->attr_types[a], tn - 2);
                base[tn - 2] = 0;
                d->attr_types[a] = base;
                r->attrs[a].lattice = true;
            }
            r->attrs[a].type = rfx_sema_type(s, d->attr_types[a]);
            if (r->attrs[a].type < 0) {
                rfx_diag_error(s->d, d->attr_locs[a], "unknown type '%s' of attribute '%s'",
                               d->attr_types[a], d->attr_names[a]);
                r->attrs[a].type = 0;
            }
            for (int b = 0; b < a; b++)
                if (strcmp(r->attrs[b].name, d->attr_names[a]) == 0)
                    rfx_diag_error(s->d, d->attr_locs[a], "attribute '%s' appears twice in '%s'",
                                   d->attr_names[a], d->name);
        }
        r->repr = d->repr;
        check_choice(s, d, r);
    }
    s->d->instance = NULL;
    /* room for each relation's directives */
    for (int i = 0; i < s->ctx->directives.n; i++) {
        rfx_directive *dir = s->ctx->directives.items[i];
        int ri = rfx_program_find_rel(p, dir->rel);
        if (ri >= 0 && dir->kind == RFX_REL_INPUT)
            p->rels[ri].ninputs++;
        else if (ri >= 0 && dir->kind == RFX_REL_OUTPUT)
            p->rels[ri].noutputs++;
    }
    for (int ri = 0; ri < p->nrels; ri++) {
        rfx_relation *r = &p->rels[ri];
        r->inputs = salloc(s, sizeof(rfx_io_dir) * (size_t)(r->ninputs + 1));
        r->outputs = salloc(s, sizeof(rfx_io_dir) * (size_t)(r->noutputs + 1));
        if (!r->inputs || !r->outputs)
            return;
        r->ninputs = r->noutputs = 0;
    }
    for (int i = 0; i < s->ctx->directives.n; i++) {
        rfx_directive *dir = s->ctx->directives.items[i];
        int ri = rfx_program_find_rel(p, dir->rel);
        if (ri < 0) {
            rfx_diag_error(s->d, dir->loc, "unknown relation '%s' in directive", dir->rel);
            continue;
        }
        rfx_relation *r = &p->rels[ri];
        if (dir->kind == RFX_REL_LIMITSIZE) {
            char *end;
            long long n = strtoll(dir->opts[0].value, &end, 10);
            if (r->limitsize >= 0) {
                rfx_diag_error(s->d, dir->loc, "'%s' has a .limitsize directive already", r->name);
            } else if (n < 0)
                rfx_diag_error(s->d, dir->loc, "'.limitsize %s(n=%lld)': the limit is a number of tuples, 0 or more",
                               r->name, n);
            else
                r->limitsize = n;
            continue;
        }
        if (dir->kind == RFX_REL_PRINTSIZE && (r->io & RFX_REL_PRINTSIZE)) {   /* Soufflé refuses it too */
            char at[300];
            rfx_diag_error(s->d, dir->loc, "'%s' has a .printsize directive already (at %s)", r->name,
                           rfx_diag_where(s->d, r->printsize_loc, at, sizeof at));
            continue;
        }
        r->io |= dir->kind;
        if (dir->kind == RFX_REL_PRINTSIZE)
            r->printsize_loc = dir->loc;
        else
            r->io_loc = dir->loc;
        p->any_output |= dir->kind != RFX_REL_INPUT;
        const rfx_io_dir given = {dir->nopts, dir->opts, dir->loc};
        const char *io = rfx_io_get(&given, "IO");
        const bool json = io && (strcmp(io, "jsonfile") == 0 || strcmp(io, "json") == 0);
        for (int o = 0; o < dir->nopts; o++) {
            const char *k = dir->opts[o].key;
            static const char *known[] = {"filename", "delimiter", "IO", "headers", "format", "rfc4180", "compress",
                                          "order", "limit", NULL};
            bool ok = false;
            for (int q = 0; known[q]; q++)
                ok |= strcmp(known[q], k) == 0;
            const char *v = dir->opts[o].value;
            if (!ok)
                rfx_diag_error(s->d, dir->loc,
                               "unknown option '%s' (known: filename, delimiter, IO, headers, rfc4180, compress, format, "
                               "order, limit)", k);
            else if ((strcmp(k, "headers") == 0 || strcmp(k, "rfc4180") == 0 || strcmp(k, "compress") == 0) &&
                     strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
                rfx_diag_error(s->d, dir->loc, "option %s=\"%s\": expected true or false", k, v);
            else if (strcmp(k, "format") == 0 && json && strcmp(v, "list") != 0 && strcmp(v, "object") != 0)
                rfx_diag_error(s->d, dir->loc, "format=\"%s\": expected \"list\" or \"object\" (IO=%s)", v, io);
            else if (strcmp(k, "format") == 0 && !json && strcmp(v, "facts") != 0 && strcmp(v, "edges") != 0)
                rfx_diag_error(s->d, dir->loc, "format=\"%s\": expected \"facts\" or \"edges\" (SNAP edge lists)", v);
            else if (json && (strcmp(k, "delimiter") == 0 || strcmp(k, "headers") == 0 || strcmp(k, "rfc4180") == 0 ||
                              strcmp(k, "compress") == 0))
                rfx_diag_warning(s->d, dir->loc, "option %s has no effect with IO=%s", k, io);
            else if (strcmp(k, "order") == 0 || strcmp(k, "limit") == 0)
                check_order_option(s, r, dir, k, v);
        }
        if (dir->kind == RFX_REL_PRINTSIZE)
            continue;
        rfx_io_dir *d = dir->kind == RFX_REL_INPUT ? &r->inputs[r->ninputs++] : &r->outputs[r->noutputs++];
        *d = (rfx_io_dir){dir->nopts, dir->opts, dir->loc};
        const bool in = dir->kind == RFX_REL_INPUT;
        if (io && strcmp(io, "file") != 0 && strcmp(io, in ? "stdin" : "stdout") != 0 && !json)
            rfx_diag_error(s->d, dir->loc, "unsupported IO='%s' for an %s (supported: file, %s, jsonfile, json)", io,
                           in ? "input" : "output", in ? "stdin" : "stdout");
        bool *seen = json ? salloc(s, (size_t)p->ntypes + 1) : NULL;
        for (int a = 0; seen && a < r->arity; a++)
            if (memset(seen, 0, (size_t)p->ntypes + 1), holds_adt(p, r->attrs[a].type, seen)) {
                rfx_diag_error(s->d, dir->loc, "IO=%s: attribute '%s' of '%s' holds ADT values, for which "
                               "Soufflé's JSON has no form (use IO=file)", io, r->attrs[a].name, r->name);
                break;
            }
        const char *delim = rfx_io_get(d, "delimiter");
        if (delim && !delim[0])
            rfx_diag_error(s->d, dir->loc, "delimiter=\"\": a delimiter needs at least one character");
    }
    /* two outputs to one file: the later replaces the earlier (Soufflé writes both) */
    for (int ri = 0; ri < p->nrels; ri++)
        for (int a = 0; a < p->rels[ri].noutputs; a++) {
            const rfx_io_dir *da = &p->rels[ri].outputs[a];
            const char *fa = rfx_io_get(da, "filename");
            const char *ia = rfx_io_get(da, "IO");
            if (ia && (strcmp(ia, "stdout") == 0 || strcmp(ia, "json") == 0))
                continue;
            for (int rj = 0; rj <= ri; rj++)
                for (int b = 0; b < (rj == ri ? a : p->rels[rj].noutputs); b++) {
                    const rfx_io_dir *db = &p->rels[rj].outputs[b];
                    const char *fb = rfx_io_get(db, "filename");
                    const char *ib = rfx_io_get(db, "IO");
                    if (ib && (strcmp(ib, "stdout") == 0 || strcmp(ib, "json") == 0))
                        continue;
                    char na[512], nb[512];
                    snprintf(na, sizeof na, fa ? "%s" : ia && strcmp(ia, "jsonfile") == 0 ? "%s.json" : "%s.csv",
                             fa ? fa : p->rels[ri].name);
                    snprintf(nb, sizeof nb, fb ? "%s" : ib && strcmp(ib, "jsonfile") == 0 ? "%s.json" : "%s.csv",
                             fb ? fb : p->rels[rj].name);
                    char at[300];
                    if (strcmp(na, nb) == 0)
                        rfx_diag_warning(s->d, da->loc, "'%s' is written again (also at %s): the last "
                                         "output written replaces the earlier", na,
                                         rfx_diag_where(s->d, db->loc, at, sizeof at));
                }
        }
}

/* An output's order="a desc, b" (attributes, each asc or desc) and limit=N (rows, 0 or
 * more): of outputs only, over attributes a type orders (no records). */
static void check_order_option(sema *s, const rfx_relation *r, const rfx_directive *dir, const char *k, const char *v)
{
    rfx_program *p = s->p;
    if (dir->kind != RFX_REL_OUTPUT) {
        rfx_diag_error(s->d, dir->loc, "option %s: outputs only", k);
        return;
    }
    for (int a = 0; a < r->arity; a++)
        if (rfx_program_record_type(p, r->attrs[a].type) >= 0 || rfx_program_adt_type(p, r->attrs[a].type) >= 0) {
            rfx_diag_error(s->d, dir->loc, "option %s: '%s' holds records, whose order is not supported yet", k, r->name);
            return;
        }
    if (strcmp(k, "limit") == 0) {
        char *end;
        errno = 0;
        long long n = strtoll(v, &end, 10);
        if (!*v || *end || n < 0 || errno)
            rfx_diag_error(s->d, dir->loc, "limit=\"%s\": expected a number of rows, 0 or more", v);
        return;
    }
    const char *q = v;
    int n = 0;
    while (*q) {
        while (*q == ' ' || *q == ',')
            q++;
        size_t len = strcspn(q, " ,");
        if (!len)
            break;
        bool found = false;
        for (int a = 0; a < r->arity && !found; a++)
            found = strlen(r->attrs[a].name) == len && strncmp(r->attrs[a].name, q, len) == 0;
        if (!found) {
            rfx_diag_error(s->d, dir->loc, "order=\"%s\": '%s' has no attribute '%.*s'", v, r->name, (int)len, q);
            return;
        }
        q += len;
        while (*q == ' ')
            q++;
        size_t word = strcspn(q, " ,");
        if (word && ((word == 3 && strncasecmp(q, "asc", 3) == 0) || (word == 4 && strncasecmp(q, "desc", 4) == 0)))
            q += word;
        else if (word) {
            rfx_diag_error(s->d, dir->loc, "order=\"%s\": expected asc or desc after an attribute, got '%.*s'", v,
                           (int)word, q);
            return;
        }
        while (*q == ' ')
            q++;
        if (*q && *q != ',') {
            rfx_diag_error(s->d, dir->loc, "order=\"%s\": attributes are separated by commas", v);
            return;
        }
        n++;
    }
    if (!n)
        rfx_diag_error(s->d, dir->loc, "order=\"\": name the attributes to order by (`a desc, b`)");
}

/* `.functor` declarations: known types; a stateless functor takes and returns values
 * libffi passes as C values (number, unsigned, float, symbol), as Soufflé's interpreter. */
void rfx_sema_check_functors(sema *s)
{
    rfx_program *p = s->p;
    int n = s->ctx->functors.n;
    p->functors = salloc(s, sizeof(rfx_functor_decl) * (size_t)(n + 1));
    if (!p->functors)
        return;
    for (int i = 0; i < n; i++) {
        const rfx_functor_text *t = s->ctx->functors.items[i];
        for (int k = 0; k < p->nfunctors; k++)
            if (strcmp(p->functors[k].name, t->name) == 0) {
                char at[300];
                rfx_diag_error(s->d, t->loc, "functor '%s' is declared twice (first at %s)", t->name,
                               rfx_diag_where(s->d, p->functors[k].loc, at, sizeof at));
            }
        int nargs = t->params ? t->params->n / 2 : 0;
        if (nargs > RFX_MAX_RECORD_FIELDS)
            rfx_diag_error(s->d, t->loc, "functor '%s' has %d parameters; at most %d are supported", t->name, nargs,
                           RFX_MAX_RECORD_FIELDS);
        rfx_functor_decl *f = &p->functors[p->nfunctors++];
        *f = (rfx_functor_decl){.name = t->name, .nargs = nargs, .stateful = t->stateful, .loc = t->loc};
        if (!(f->arg_types = salloc(s, sizeof(int) * (size_t)(nargs + 1))))
            return;
        for (int a = 0; a <= nargs; a++) {
            const char *tn = a < nargs ? t->params->items[2 * a] : t->ret;
            const rfx_loc *tl = a < nargs ? t->params->items[2 * a + 1] : NULL;
            int ty = rfx_sema_type(s, tn);
            if (ty < 0)
                rfx_diag_error(s->d, tl ? *tl : t->loc, "unknown type '%s' in functor '%s'", tn, t->name);
            else if (!t->stateful && (rfx_program_record_type(p, ty) >= 0 || rfx_program_adt_type(p, ty) >= 0))
                rfx_diag_error(s->d, tl ? *tl : t->loc, "functor '%s': '%s' is a record type; a functor over "
                               "records is declared stateful", t->name, tn);
            if (a < nargs)
                f->arg_types[a] = ty < 0 ? 0 : ty;
            else
                f->ret_type = ty < 0 ? 0 : ty;
        }
    }
}

/* Soufflé's pragmas are its command-line options given in the program. Those that change
 * no answer (optimisation and debugging switches) are accepted and have no effect here;
 * no-warn silences warnings; those rfx does not apply (inputs, outputs, threads) are
 * warned about, so that a program never runs with other inputs than its author meant
 * without a word. */
void rfx_sema_check_pragmas(sema *s)
{
    static const char *const no_effect[] = {
        "magic-transform", "magic-transform-exclude", "inline-exclude", "disable-transformers", "legacy",
        "provenance", "profile", "profile-use", "debug-report", "verbose", "show", "parse-errors", "generate",
        "compile", "swig", "engine", "index-stats", "auto-schedule",
        "library-dir", "libraries",   /* applied where functors are bound (runtime/functor_libs.c) */
        NULL};
    static const char *const use_cli[][2] = {
        {"fact-dir", "give it as -F on the command line"}, {"output-dir", "give it as -D on the command line"},
        {"jobs", "give it as -j on the command line"}, {"macro", "give it as -M on the command line"},
        {"include-dir", "the preprocessor has run before a pragma is read: give it as -I on the command line"}};
    rfx_program *p = s->p;
    int n = s->ctx->pragmas.n;
    p->pragmas = salloc(s, sizeof(rfx_pragma) * (size_t)(n + 1));
    if (!p->pragmas)
        return;
    for (int i = 0; i < n; i++) {
        const rfx_pragma *pr = s->ctx->pragmas.items[i];
        p->pragmas[p->npragmas++] = *pr;
        if (strcmp(pr->key, "no-warn") == 0 || strcmp(pr->key, "nowarn") == 0) {
            s->d->no_warnings = true;
            continue;
        }
        bool known = false;
        for (int k = 0; no_effect[k] && !known; k++)
            known = strcmp(no_effect[k], pr->key) == 0;
        for (size_t k = 0; k < sizeof use_cli / sizeof use_cli[0] && !known; k++)
            if (strcmp(use_cli[k][0], pr->key) == 0) {
                rfx_diag_warning(s->d, pr->loc, "pragma \"%s\" is not applied by rfx: %s", pr->key, use_cli[k][1]);
                known = true;
            }
        if (!known)
            rfx_diag_warning(s->d, pr->loc, "unknown pragma \"%s\" (ignored)", pr->key);
    }
}

