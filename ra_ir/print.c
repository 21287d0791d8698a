/* print.c: the query plan's text form (`rfx --emit=plan`); deterministic, golden-tested. */
#include "ra_ir.h"

#include <string.h>

static void print_const(FILE *out, const rfx_plan *P, rfx_prim prim, uint64_t v)
{
    switch (prim) {
    case RFX_NUMBER64: fprintf(out, "%lldL", (long long)(int64_t)v); break;
    case RFX_UNSIGNED64: fprintf(out, "%lluuL", (unsigned long long)v); break;
    case RFX_FLOAT64: {
        double d;
        rfx_memcpy(&d, &v, 8);
        fprintf(out, "%.17gL", d);
        break;
    }
    case RFX_WORD: case RFX_NPRIMS: fprintf(out, "0x%xw", (unsigned)v); break;
    case RFX_DECIMAL: fprintf(out, "%lldD", (long long)(int64_t)v); break;
    case RFX_DATE: {
        char d[32];
        rfx_date_format(d, sizeof d, (uint32_t)v);
        fprintf(out, "%s", d);
        break;
    }
    case RFX_NUMBER: fprintf(out, "%d", (int32_t)(uint32_t)v); break;
    case RFX_UNSIGNED: fprintf(out, "%uu", (unsigned)v); break;
    case RFX_FLOAT: {
        float f;
        uint32_t u = (uint32_t)v;
        rfx_memcpy(&f, &u, 4);
        fprintf(out, "%gf", (double)f);
        break;
    }
    case RFX_SYMBOL: {
        const char *s = P ? rfx_symtab_str(P->prog->syms, (uint32_t)v) : "?";
        fputc('"', out);
        for (; *s; s++) {
            if (*s == '"' || *s == '\\')
                fputc('\\', out);
            if (*s == '\n')
                fputs("\\n", out);
            else if (*s == '\t')
                fputs("\\t", out);
            else
                fputc(*s, out);
        }
        fputc('"', out);
        break;
    }
    }
}

void rfx_rx_print(FILE *out, const rfx_plan *P, const rfx_rx *e)
{
    switch (e->kind) {
    case RFX_RX_COL: fprintf(out, "$%d", e->col); break;
    case RFX_RX_CONST: print_const(out, P, e->prim, e->value); break;
    case RFX_RX_BIN: {
        /* the type after the operator; after a dot for words (bshr.u is not bshru) */
        const bool word = e->op >= RFX_BAND && e->op != RFX_POW;
        rfx_prim k = RFX_PRIM_NARROW(e->prim);
        const char *sfx = k == RFX_NUMBER    ? (k != e->prim ? "L" : "")
                          : k == RFX_UNSIGNED ? (k != e->prim ? (word ? ".uL" : "uL") : word ? ".u" : "u")
                                              : (k != e->prim ? (word ? ".fL" : "fL") : word ? ".f" : "f");
        const bool call = RFX_BINOP_CALL(e->op);   /* (l op r), or op(l, r) for min and max */
        fprintf(out, "%s%s(", call ? rfx_binop_str(e->op) : "", call ? sfx : "");
        rfx_rx_print(out, P, e->l);
        fprintf(out, call ? ", " : " %s%s ", rfx_binop_str(e->op), sfx);
        rfx_rx_print(out, P, e->r);
        fputc(')', out);
        break;
    }
    case RFX_RX_NEG:
        fputs("-(", out);
        rfx_rx_print(out, P, e->l);
        fputc(')', out);
        break;
    case RFX_RX_CMP:
        rfx_rx_print(out, P, e->l);
        if (e->prim == RFX_DECIMAL)   /* decimals, scales col apart */
            fprintf(out, " %s.d%d ", rfx_cmpop_str(e->op), e->col);
        else
            fprintf(out, " %s%s%s ", rfx_cmpop_str(e->op),
                    e->prim == RFX_UNSIGNED || e->prim == RFX_UNSIGNED64 || e->prim == RFX_WORD ? "u"
                    : e->prim == RFX_FLOAT || e->prim == RFX_FLOAT64 ? "f" : "", RFX_PRIM_WIDE(e->prim) ? "L" : "");
        rfx_rx_print(out, P, e->r);
        break;
    case RFX_RX_AND:
        rfx_rx_print(out, P, e->l);
        fputs(" and ", out);
        rfx_rx_print(out, P, e->r);
        break;
    case RFX_RX_PAIR:   /* a 64-bit value of two words */
        fprintf(out, "%s(", rfx_prim_name(e->prim));
        rfx_rx_print(out, P, e->l);
        fputs(":", out);
        rfx_rx_print(out, P, e->r);
        fputc(')', out);
        break;
    case RFX_RX_HALF:
        fputs(e->op ? "lo(" : "hi(", out);
        rfx_rx_print(out, P, e->l);
        fputc(')', out);
        break;
    case RFX_RX_CONV:
        fprintf(out, "%s(", rfx_prim_name(e->prim));
        rfx_rx_print(out, P, e->l);
        fputc(')', out);
        break;
    case RFX_RX_CAL: {
        static const char *const name[] = {"date_year", "date_month", "date_day", "add_months"};
        fprintf(out, "%s(", name[e->op & 3]);
        rfx_rx_print(out, P, e->l);
        if (e->r) {
            fputs(", ", out);
            rfx_rx_print(out, P, e->r);
        }
        fputc(')', out);
        break;
    }
    case RFX_RX_FN:
        if (e->op == RFX_FX_USER)
            fprintf(out, "@%s(", P->prog->functors[e->col].name);
        else
            fprintf(out, "%s(", rfx_fn_op_name((rfx_fn_op)e->op));
        for (int i = 0; i < e->nargs; i++) {
            if (i)
                fputs(", ", out);
            rfx_rx_print(out, P, e->args[i]);
        }
        fputc(')', out);
        break;
    }
}

static const char *kind_name(rfx_pvar_kind k)
{
    static const char *n[] = {"relation", "delta", "new", "temp", "unit"};
    return n[k];
}

void rfx_plan_print_cmd(FILE *out, const rfx_plan *P, const rfx_ra_cmd *c)
{
    const char *name = rfx_ra_op_name(c->op);
    fputs("  ", out);
    if (c->dst >= 0 && c->op != RFX_RA_SWAP && c->op != RFX_RA_CLEAR && c->op != RFX_RA_FACTS &&
        c->op != RFX_RA_INPUT)
        fprintf(out, "%s = ", P->vars[c->dst].name);
    fputs(name, out);
    switch (c->op) {
    case RFX_RA_SWAP:
        fprintf(out, " %s, %s", P->vars[c->dst].name, P->vars[c->src[0]].name);
        break;
    case RFX_RA_CLEAR: case RFX_RA_INPUT:
        fprintf(out, " %s", P->vars[c->dst].name);
        break;
    case RFX_RA_FACTS: {
        const rfx_pvar *v = &P->vars[c->dst];
        fprintf(out, " %s", v->name);
        for (int t = 0; t < c->ntuples; t++) {
            fputs(t ? ", (" : " (", out);
            for (int a = 0; a < v->arity; a++) {
                if (a)
                    fputs(", ", out);
                print_const(out, P, v->types[a], c->tuples[t * v->arity + a]);
            }
            fputc(')', out);
        }
        break;
    }
    case RFX_RA_JUMP:
        fprintf(out, " B%d", c->target);
        break;
    case RFX_RA_JUMP_IF_EMPTY: case RFX_RA_JUMP_IF_FULL:
        fputc(' ', out);
        for (int i = 0; i < c->nvars; i++)
            fprintf(out, "%s%s", i ? ", " : "", P->vars[c->vars[i]].name);
        fprintf(out, " -> B%d", c->target);
        break;
    case RFX_RA_HALT:
        break;
    case RFX_RA_LFTJ: {
        int off = 0;
        for (int s = 0; s < c->nvars; s++) {
            const rfx_pvar *v = &P->vars[c->vars[s]];
            fprintf(out, "%s%s(", s ? ", " : " ", v->name);
            for (int a = 0; a < v->arity; a++)
                fprintf(out, "%s$%d", a ? ", " : "", c->colvar[off + a]);
            fputc(')', out);
            off += v->arity;
        }
        static const char *const parts[] = {"", " parts=pairs", " parts=induced"};
        fprintf(out, " vars=%d%s%s%s", c->nkeys, c->count_only ? " count-only" : "",
                c->lftj_swap ? " swap=measured" : "", parts[c->parts]);
        break;
    }
    default:
        for (int s = 0; s < rfx_ra_op_nsrc(c->op); s++)
            fprintf(out, "%s%s", s ? ", " : " ", P->vars[c->src[s]].name);
        if (c->op == RFX_RA_JOIN || c->op == RFX_RA_MAPJOIN || c->op == RFX_RA_INTERSECT ||
            c->op == RFX_RA_DIFFERENCE || c->op == RFX_RA_AGGREGATE || c->op == RFX_RA_LATTICE)
            fprintf(out, " keys=%d", c->nkeys);
        if (c->op == RFX_RA_SORT && c->nkeys > 0)
            fprintf(out, " keys=%d", c->nkeys);
        if (c->op == RFX_RA_SORT_UNIQUE && c->nkeys > 0)
            fprintf(out, " sorted=%d", c->nkeys);
        if (c->op == RFX_RA_UNION && c->disjoint)
            fputs(" disjoint", out);
        if (c->probe)
            fputs(c->optional ? " probe optional" : " probe", out);
        if (c->range)
            fputs(" range", out);
        for (int i = 0; rfx_ra_cmd_reads_held(c) && i < c->nvars; i++)
            fprintf(out, "%s%s", i ? ", " : " against ", P->vars[c->vars[i]].name);
        if (c->op == RFX_RA_AGGREGATE) {
            fprintf(out, " %s", rfx_aggfn_str(c->agg));
            if (c->agg_col >= 0)
                fprintf(out, "($%d)", c->agg_col);
        }
        if (c->pred) {
            fputs(" where ", out);
            rfx_rx_print(out, P, c->pred);
        }
        if (c->nout && c->op != RFX_RA_SELECT) {
            fputs(" out (", out);
            for (int i = 0; i < c->nout; i++) {
                if (i)
                    fputs(", ", out);
                rfx_rx_print(out, P, c->out[i]);
            }
            fputc(')', out);
        }
    }
    fputc('\n', out);
}

/* A loop whose relation's recursion keeps a column (split.c) says so. */
static void print_split(FILE *out, const rfx_plan *P, const rfx_block *blk)
{
    for (int i = 0; P->split_col && i < blk->ncmds; i++) {
        const rfx_ra_cmd *c = &blk->cmds[i];
        for (int k = 0; c->op == RFX_RA_JUMP_IF_EMPTY && k < c->nvars; k++) {
            const rfx_pvar *d = &P->vars[c->vars[k]];
            if (d->kind == RFX_PV_DELTA && d->rel >= 0 && P->split_col[d->rel] >= 0)
                fprintf(out, "  // %s keeps $%d along its recursion: past a quarter of the memory budget the loop runs "
                             "by ranges of $%d\n",
                        P->vars[P->relvar[d->rel]].name, P->split_col[d->rel], P->split_col[d->rel]);
        }
    }
}

/* A loop's relations whose columns' values come from earlier relations and constants
 * (domain.c) say from which: their rows bound what it can derive. */
static void print_domains(FILE *out, const rfx_plan *P, const rfx_block *blk)
{
    for (int i = 0; P->domain && i < blk->ncmds; i++) {
        const rfx_ra_cmd *c = &blk->cmds[i];
        for (int k = 0; c->op == RFX_RA_JUMP_IF_EMPTY && k < c->nvars; k++) {
            int r = P->vars[c->vars[k]].rel;
            const rfx_col_domain *d = r >= 0 ? P->domain[r] : NULL;
            bool open = !d;
            for (int j = 0; !open && j < P->prog->rels[r].arity; j++)
                open = d[j].open;
            if (open || !P->prog->rels[r].arity)
                continue;
            int arity = P->prog->rels[r].arity;
            fprintf(out, "  // %s holds at most", P->vars[P->relvar[r]].name);
            for (int j = 0; j < arity; j++) {
                bool sum = arity > 1 && d[j].nsrc + (d[j].nconsts > 0) > 1;
                fprintf(out, "%s%s", j ? " x " : " ", sum ? "(" : "");
                for (int s = 0; s < d[j].nsrc; s++)
                    fprintf(out, "%s|%s|", s ? " + " : "", P->prog->rels[d[j].src[s]].name);
                if (d[j].nconsts || !d[j].nsrc)
                    fprintf(out, "%s%d", d[j].nsrc ? " + " : "", d[j].nconsts);
                fputs(sum ? ")" : "", out);
            }
            fprintf(out, " tuples (its columns' values come from those relations and its rules' constants)\n");
        }
    }
}

void rfx_plan_print(FILE *out, const rfx_plan *P)
{
    fprintf(out, "// query plan of %s\n", P->prog->file);
    for (int i = 0; i < P->nvars; i++) {
        const rfx_pvar *v = &P->vars[i];
        if (v->kind == RFX_PV_UNIT)
            continue;
        fprintf(out, ".%s %s(", kind_name(v->kind), v->name);
        for (int a = 0; a < v->arity; a++)
            fprintf(out, "%s%s%s", a ? ", " : "", v->unread && v->unread[a] ? "unread " : "", rfx_prim_name(v->types[a]));
        fputs(v->set_read ? ")  // read as a set\n"
                          : v->unneeded ? ")  // no output depends on it: its rules are not run\n" : ")\n", out);
    }
    for (int b = 0; b < P->nblocks; b++) {
        const rfx_block *blk = &P->blocks[b];
        fprintf(out, "\nB%d:%s%s\n", b, blk->label ? "  // " : "", blk->label ? blk->label : "");
        print_split(out, P, blk);
        print_domains(out, P, blk);
        for (int i = 0; i < blk->ncmds; i++)
            rfx_plan_print_cmd(out, P, &blk->cmds[i]);
    }
}
