/* codegen.c: CUDA C for fused groups, compiled at run time with NVRTC.
 *
 * FILTER groups become one Crystal-style tile kernel: a block loads a tile of rows
 * (striped, so a warp's loads are contiguous), evaluates every output's predicate with
 * the expressions compiled in, counts kept rows per warp with ballots, scans the counts
 * in shared memory, finds each output's offset with one decoupled look-back per tile,
 * and writes each output in input order. JOIN groups become a count kernel (the first
 * source's filter, then one range per other source by binary search) and an expand
 * kernel (one thread per candidate tuple: its sources' rows by mixed-radix decomposition,
 * the remaining filters, the outputs).
 *
 * Scalar semantics are those of ra_ir/rx_ops.h: 32-bit wrapping integers, a zero divisor
 * sets the division flag and gives 0, IEEE binary32 floats without contraction (the
 * launcher compiles with --fmad=false), so fused and unfused runs agree bit for bit. */
#include "weaver.h"

#include <stdlib.h>
#include <string.h>

static const char prelude[] =
    "typedef unsigned int u32;\n"
    "typedef unsigned long long u64;\n"
    "struct rfx_outs { u32 *p[8]; };\n"
    "struct rfx_srcs { const u32 *p[8]; u64 n[8]; };\n"
    "static __device__ __forceinline__ float rfx_f(u32 u) { return __uint_as_float(u); }\n"
    "static __device__ __forceinline__ u32 rfx_u(float f) { return __float_as_uint(f); }\n"
    "static __device__ __forceinline__ u32 rfx_divu(u32 a, u32 b, bool *z) { if (!b) { *z = true; return 0; } return a / b; }\n"
    "static __device__ __forceinline__ u32 rfx_modu(u32 a, u32 b, bool *z) { if (!b) { *z = true; return 0; } return a % b; }\n"
    "static __device__ __forceinline__ u32 rfx_divi(u32 a, u32 b, bool *z)\n"
    "{ int x = (int)a, y = (int)b; if (!y) { *z = true; return 0; } if (x == (int)0x80000000 && y == -1) return a; return (u32)(x / y); }\n"
    "static __device__ __forceinline__ u32 rfx_modi(u32 a, u32 b, bool *z)\n"
    "{ int x = (int)a, y = (int)b; if (!y) { *z = true; return 0; } if (y == -1) return 0; return (u32)(x % y); }\n"
    "#define LB_AGGREGATE (1ull << 62)\n"
    "#define LB_PREFIX (2ull << 62)\n"
    "#define LB_VALUE ((1ull << 62) - 1)\n";

typedef struct gen {
    FILE *f;
    const rfx_plan *P;
    const char *colfmt;        /* how column c is named, e.g. "v[j][%d]" or "c%d" */
} gen;

static const char *arith_op(int op)
{
    switch (op) {
    case RFX_ADD: return "+";
    case RFX_SUB: return "-";
    case RFX_MUL: return "*";
    default: return "/";
    }
}

static const char *cmp_op(int op)
{
    switch (op) {
    case RFX_LT: return "<";
    case RFX_LE: return "<=";
    case RFX_GT: return ">";
    case RFX_GE: return ">=";
    case RFX_EQ: return "==";
    default: return "!=";
    }
}

/* A u32-valued C expression for e. */
static void emit_rx(gen *g, const rfx_rx *e)
{
    FILE *f = g->f;
    switch (e->kind) {
    case RFX_RX_COL:
        fprintf(f, g->colfmt, e->col);
        break;
    case RFX_RX_CONST:
        fprintf(f, "0x%xu", e->value);
        break;
    case RFX_RX_NEG:
        if (e->prim == RFX_FLOAT) {
            fputs("rfx_u(-rfx_f(", f);
            emit_rx(g, e->l);
            fputs("))", f);
        } else {
            fputs("(0u - ", f);
            emit_rx(g, e->l);
            fputs(")", f);
        }
        break;
    case RFX_RX_BIN:
        if (e->prim == RFX_FLOAT && e->op == RFX_MOD)
            fputs("0u", f);     /* as rx_ops.h: no float modulo */
        else if (e->prim == RFX_FLOAT) {
            fputs("rfx_u(rfx_f(", f);
            emit_rx(g, e->l);
            fprintf(f, ") %s rfx_f(", arith_op(e->op));
            emit_rx(g, e->r);
            fputs("))", f);
        } else if (e->op == RFX_DIV || e->op == RFX_MOD) {
            fprintf(f, "rfx_%s%s(", e->op == RFX_DIV ? "div" : "mod", e->prim == RFX_UNSIGNED ? "u" : "i");
            emit_rx(g, e->l);
            fputs(", ", f);
            emit_rx(g, e->r);
            fputs(", &div0)", f);
        } else {
            fputs("(u32)(", f);
            emit_rx(g, e->l);
            fprintf(f, " %s ", arith_op(e->op));
            emit_rx(g, e->r);
            fputs(")", f);
        }
        break;
    case RFX_RX_CMP: {
        bool eq = e->op == RFX_EQ || e->op == RFX_NE;
        const char *cast = e->prim == RFX_FLOAT ? "rfx_f" : e->prim == RFX_NUMBER && !eq ? "(int)" : "";
        fprintf(f, "(u32)(%s(", cast);
        emit_rx(g, e->l);
        fprintf(f, ") %s %s(", cmp_op(e->op), cast);
        emit_rx(g, e->r);
        fputs("))", f);
        break;
    }
    case RFX_RX_AND:
        fputs("(u32)(", f);
        emit_rx(g, e->l);
        fputs(" && ", f);
        emit_rx(g, e->r);
        fputs(")", f);
        break;
    }
}

static void mark_cols(const rfx_rx *e, bool *used)
{
    if (!e)
        return;
    if (e->kind == RFX_RX_COL)
        used[e->col] = true;
    mark_cols(e->l, used);
    mark_cols(e->r, used);
}

/* ---- FILTER ------------------------------------------------------------------------------ */
static void gen_filter(gen *g, const rfx_fgroup *grp)
{
    FILE *f = g->f;
    int A = g->P->vars[grp->src].arity, M = grp->nouts, items = rfx_weave_items(A);
    fprintf(f, "// FILTER over %s: %d output%s, rows of %d columns, %d rows per thread\n", g->P->vars[grp->src].name, M,
            M == 1 ? "" : "s", A, items);
    fprintf(f, "#define T %d\n#define ITEMS %d\n#define TILE (T * ITEMS)\n#define M %d\n", RFX_WEAVE_THREADS, items, M);
    fprintf(f,
            "extern \"C\" __global__ void __launch_bounds__(T) %s(const u32 *__restrict__ src, u64 n, rfx_outs outs,\n"
            "    u64 *status, unsigned *counter, u64 *totals, unsigned *div_flag)\n{\n",
            grp->name);
    fputs("    __shared__ unsigned s_tile;\n"
          "    __shared__ u32 s_cnt[M][ITEMS][T / 32];\n"
          "    __shared__ u32 s_tot[M];\n"
          "    __shared__ u64 s_base[M];\n"
          "    if (threadIdx.x == 0)\n"
          "        s_tile = atomicAdd(counter, 1u);\n"
          "    __syncthreads();\n"
          "    const u64 tile = s_tile, ntiles = (n + TILE - 1) / TILE, first = tile * TILE;\n"
          "    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
          "    bool div0 = false;\n",
          f);
    fprintf(f, "    u32 v[ITEMS][%d];\n    u32 keep[M];\n", A ? A : 1);
    fputs("#pragma unroll\n    for (int m = 0; m < M; m++)\n        keep[m] = 0;\n"
          "#pragma unroll\n    for (int j = 0; j < ITEMS; j++) {\n"
          "        const u64 r = first + (u64)j * T + threadIdx.x;\n"
          "        const bool in = r < n;\n"
          "        if (in) {\n",
          f);
    if (A == 2)
        fputs("            uint2 t = ((const uint2 *)src)[r];\n            v[j][0] = t.x;\n            v[j][1] = t.y;\n", f);
    else if (A == 4)
        fputs("            uint4 t = ((const uint4 *)src)[r];\n"
              "            v[j][0] = t.x;\n            v[j][1] = t.y;\n            v[j][2] = t.z;\n            v[j][3] = t.w;\n",
              f);
    else
        for (int c = 0; c < A; c++)
            fprintf(f, "            v[j][%d] = src[r * %d + %d];\n", c, A, c);
    fputs("        }\n", f);
    g->colfmt = "v[j][%d]";
    for (int m = 0; m < M; m++) {
        fprintf(f, "        {\n            const bool k = in");
        if (grp->outs[m].pred) {
            fputs(" && ", f);
            emit_rx(g, grp->outs[m].pred);
        }
        fprintf(f, ";\n            keep[%d] |= (u32)k << j;\n"
                   "            const u32 b = __ballot_sync(0xffffffffu, k);\n"
                   "            if (lane == 0)\n                s_cnt[%d][j][warp] = __popc(b);\n        }\n",
                m, m);
    }
    fputs("    }\n    __syncthreads();\n"
          "    if (warp == 0) {\n"
          "        const int V = ITEMS * (T / 32), P = (V + 31) / 32;\n"
          "        for (int m = 0; m < M; m++) {\n"
          "            u32 *c = &s_cnt[m][0][0], sum = 0;\n"
          "            for (int q = 0; q < P; q++)\n"
          "                if (lane * P + q < V)\n                    sum += c[lane * P + q];\n"
          "            u32 incl = sum;\n"
          "            for (int o = 1; o < 32; o <<= 1) {\n"
          "                u32 y = __shfl_up_sync(0xffffffffu, incl, o);\n"
          "                if (lane >= (unsigned)o)\n                    incl += y;\n            }\n"
          "            u32 run = incl - sum;\n"
          "            for (int q = 0; q < P; q++)\n"
          "                if (lane * P + q < V) {\n"
          "                    u32 t = c[lane * P + q];\n                    c[lane * P + q] = run;\n                    run += t;\n"
          "                }\n"
          "            if (lane == 31)\n                s_tot[m] = incl;\n"
          "        }\n"
          "        __syncwarp();\n"
          "        if (lane < M) {\n"
          "            // decoupled look-back for output `lane`: earlier tiles are running or done\n"
          "            u64 *st = status + lane * ntiles, total = s_tot[lane], excl = 0;\n"
          "            if (tile == 0)\n                atomicExch(&st[0], LB_PREFIX | total);\n"
          "            else {\n"
          "                atomicExch(&st[tile], LB_AGGREGATE | total);\n"
          "                for (long long t = (long long)tile - 1; t >= 0; t--) {\n"
          "                    u64 y;\n"
          "                    do\n                        y = *(volatile u64 *)&st[t];\n"
          "                    while (!(y & (LB_AGGREGATE | LB_PREFIX)));\n"
          "                    excl += y & LB_VALUE;\n"
          "                    if (y & LB_PREFIX)\n                        break;\n"
          "                }\n"
          "                atomicExch(&st[tile], LB_PREFIX | (excl + total));\n"
          "            }\n"
          "            s_base[lane] = excl;\n"
          "            if (tile == ntiles - 1)\n                totals[lane] = excl + total;\n"
          "        }\n"
          "    }\n"
          "    __syncthreads();\n"
          "    const u32 below = (1u << lane) - 1;\n"
          "#pragma unroll\n    for (int j = 0; j < ITEMS; j++) {\n",
          f);
    for (int m = 0; m < M; m++) {
        const rfx_fout *o = &grp->outs[m];
        fprintf(f,
                "        {\n            const bool k = (keep[%d] >> j) & 1;\n"
                "            const u32 b = __ballot_sync(0xffffffffu, k);\n"
                "            if (k) {\n"
                "                const u64 at = s_base[%d] + s_cnt[%d][j][warp] + __popc(b & below);\n",
                m, m, m);
        if (o->nout)
            fprintf(f, "                u32 *w = outs.p[%d] + at * %d;\n", m, o->nout);
        else
            fputs("                (void)at;\n", f);
        for (int k = 0; k < o->nout; k++) {
            fprintf(f, "                w[%d] = ", k);
            if (o->out && o->out[k])
                emit_rx(g, o->out[k]);
            else
                fprintf(f, "v[j][%d]", k);
            fputs(";\n", f);
        }
        fputs("            }\n        }\n", f);
    }
    fputs("    }\n    if (div0)\n        atomicOr(div_flag, 1u);\n}\n", f);
    fputs("#undef T\n#undef ITEMS\n#undef TILE\n#undef M\n", f);
}

/* ---- JOIN -------------------------------------------------------------------------------- */
static void gen_join(gen *g, const rfx_fgroup *grp)
{
    FILE *f = g->f;
    const rfx_plan *P = g->P;
    int ns = grp->nsrc, K = grp->nkeys, width = grp->offset[ns - 1] + P->vars[grp->srcs[ns - 1]].arity;
    int a0 = P->vars[grp->srcs[0]].arity;
    bool *used = calloc((size_t)width + 1, sizeof(bool));
    if (!used)
        return;
    mark_cols(grp->pred, used);
    for (int k = 0; k < grp->nout; k++)
        mark_cols(grp->out[k], used);
    fprintf(f, "// JOIN of %d sources on %d key column%s\n", ns, K, K == 1 ? "" : "s");
    fprintf(f,
            "static __device__ __forceinline__ int %s_cmp(const u32 *row, const u32 *key)\n{\n"
            "#pragma unroll\n    for (int c = 0; c < %d; c++)\n"
            "        if (row[c] != key[c])\n            return row[c] < key[c] ? -1 : 1;\n    return 0;\n}\n",
            grp->name, K);
    fprintf(f,
            "// first row of rows[lo, hi) whose key is >= key (upper: > key)\n"
            "static __device__ u64 %s_bound(const u32 *rows, int arity, u64 lo, u64 hi, const u32 *key, bool upper)\n{\n"
            "    while (lo < hi) {\n        u64 m = lo + (hi - lo) / 2;\n        int c = %s_cmp(rows + m * arity, key);\n"
            "        if (c < 0 || (upper && c == 0))\n            lo = m + 1;\n        else\n            hi = m;\n    }\n"
            "    return lo;\n}\n",
            grp->name, grp->name);
    /* count */
    fprintf(f,
            "extern \"C\" __global__ void %s_count(rfx_srcs S, u64 *lo, u64 *len, u64 *cnt, unsigned *div_flag)\n{\n"
            "    const u64 na = S.n[0];\n    bool div0 = false;\n"
            "    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < na; i += (u64)gridDim.x * blockDim.x) {\n"
            "        const u32 *a = S.p[0] + i * %d;\n",
            grp->name, a0);
    bool *pre_used = calloc((size_t)a0 + 1, sizeof(bool));
    if (!pre_used) {
        free(used);
        return;
    }
    mark_cols(grp->pre, pre_used);
    for (int c = 0; c < a0; c++)
        if (pre_used[c])
            fprintf(f, "        const u32 c%d = a[%d];\n", c, c);
    g->colfmt = "c%d";
    fputs("        u64 total = 0;\n        if (", f);
    if (grp->pre)
        emit_rx(g, grp->pre);
    else
        fputs("true", f);
    fputs(") {\n            total = 1;\n", f);
    for (int s = 1; s < ns; s++) {
        int as = P->vars[grp->srcs[s]].arity;
        fprintf(f,
                "            {\n                const u64 l = %s_bound(S.p[%d], %d, 0, S.n[%d], a, false);\n"
                "                const u64 h = %s_bound(S.p[%d], %d, l, S.n[%d], a, true);\n"
                "                lo[%d * na + i] = l;\n                len[%d * na + i] = h - l;\n"
                "                total *= h - l;\n            }\n",
                grp->name, s, as, s, grp->name, s, as, s, s - 1, s - 1);
    }
    fputs("        }\n        cnt[i] = total;\n    }\n    if (div0)\n        atomicOr(div_flag, 1u);\n}\n", f);
    /* expand */
    fprintf(f,
            "extern \"C\" __global__ void %s_expand(rfx_srcs S, u64 total, const u64 *off, const u64 *lo, const u64 *len,\n"
            "    u32 *out, u64 *flags, unsigned *div_flag)\n{\n"
            "    const u64 na = S.n[0];\n    bool div0 = false;\n"
            "    for (u64 o = blockIdx.x * (u64)blockDim.x + threadIdx.x; o < total; o += (u64)gridDim.x * blockDim.x) {\n"
            "        // the first-source row whose output range holds o: last i with off[i] <= o\n"
            "        u64 l = 0, h = na;\n"
            "        while (l < h) {\n            u64 m = l + (h - l) / 2;\n"
            "            if (off[m] <= o)\n                l = m + 1;\n            else\n                h = m;\n        }\n"
            "        const u64 i = l - 1;\n        u64 rem = o - off[i];\n",
            grp->name);
    for (int s = ns - 1; s >= 1; s--)
        fprintf(f,
                "        const u64 L%d = len[%d * na + i], j%d = lo[%d * na + i] + rem %% L%d;\n        rem /= L%d;\n",
                s, s - 1, s, s - 1, s, s);
    fputs("        const u64 j0 = i;\n", f);
    for (int s = 0; s < ns; s++) {
        int as = P->vars[grp->srcs[s]].arity;
        for (int c = 0; c < as; c++)
            if (used[grp->offset[s] + c])
                fprintf(f, "        const u32 c%d = S.p[%d][j%d * %d + %d];\n", grp->offset[s] + c, s, s, as, c);
    }
    fputs("        const bool keep = ", f);
    if (grp->pred)
        emit_rx(g, grp->pred);
    else
        fputs("true", f);
    fputs(";\n        if (flags)\n            flags[o] = keep;\n        if (keep) {\n", f);
    for (int k = 0; k < grp->nout; k++) {
        fprintf(f, "            out[o * %d + %d] = ", grp->nout, k);
        emit_rx(g, grp->out[k]);
        fputs(";\n", f);
    }
    fputs("        }\n    }\n    if (div0)\n        atomicOr(div_flag, 1u);\n}\n", f);
    free(pre_used);
    free(used);
}

char *rfx_weave_codegen(rfx_arena *arena, const rfx_plan *plan, const rfx_fgroup *grp)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    gen g = {f, plan, "c%d"};
    fputs(prelude, f);
    if (grp->kind == RFX_FG_FILTER)
        gen_filter(&g, grp);
    else
        gen_join(&g, grp);
    bool ok = !ferror(f);
    if (fclose(f) != 0)
        ok = false;
    char *s = ok && buf ? rfx_arena_strdup(arena, buf, len) : NULL;
    free(buf);
    return s;
}
