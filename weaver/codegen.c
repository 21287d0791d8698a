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
 * Scalar semantics are those of base/rx_ops.h: 32-bit wrapping integers, a zero divisor
 * sets the division flag and gives 0, IEEE binary32 floats without contraction (the
 * launcher compiles with --fmad=false) whose NaNs are all 0x7fc00000, so fused and unfused
 * runs agree bit for bit. */
#include "weaver.h"
#include "rx_ops_text.h"   /* rfx_rx_ops_text: base/rx_kinds.h and base/rx_ops.h, generated */

#include <stdlib.h>
#include <string.h>

static const char prelude[] =
    "typedef unsigned int u32;\n"
    "typedef unsigned long long u64;\n"
    "struct rfx_outs { u32 *p[8]; };\n"
    "struct rfx_srcs { const u32 *p[8]; u64 n[8]; };\n"
    "static __device__ __forceinline__ float rfx_f(u32 u) { return __uint_as_float(u); }\n"
    "static __device__ __forceinline__ u32 rfx_u(float f) { return f != f ? 0x7fc00000u : __float_as_uint(f); }\n"
    "static __device__ __forceinline__ u32 rfx_divu(u32 a, u32 b, bool *z) { if (!b) { *z = true; return 0; } return a / b; }\n"
    "static __device__ __forceinline__ u32 rfx_modu(u32 a, u32 b, bool *z) { if (!b) { *z = true; return 0; } return a % b; }\n"
    "static __device__ __forceinline__ u32 rfx_divi(u32 a, u32 b, bool *z)\n"
    "{ int x = (int)a, y = (int)b; if (!y) { *z = true; return 0; } if (x == (int)0x80000000 && y == -1) return a; return (u32)(x / y); }\n"
    "static __device__ __forceinline__ u32 rfx_modi(u32 a, u32 b, bool *z)\n"
    "{ int x = (int)a, y = (int)b; if (!y) { *z = true; return 0; } if (y == -1) return 0; return (u32)(x % y); }\n"
    "static __device__ __forceinline__ u32 rfx_sar(u32 a, u32 b) { u32 s = b & 31u; return (int)a < 0 ? ~(~a >> s) : a >> s; }\n"
    "// powers as base/rx_ops.h's rfx_pow_number and rfx_pow_unsigned (Soufflé's casts of pow)\n"
    "static __device__ __forceinline__ u64 rfx_powc(u64 b, u32 e, u64 cap)\n"
    "{ u64 r = 1; b = b > cap ? cap + 1 : b; for (;;) { if (e & 1) r = b && r > cap / b ? cap + 1 : r * b;\n"
    "  e >>= 1; if (!e) return r; b = b > cap / (b ? b : 1) ? cap + 1 : b * b; } }\n"
    "static __device__ __forceinline__ u32 rfx_powi(u32 a, u32 b)\n"
    "{ int x = (int)a, y = (int)b; if (y < 0) return x == 1 ? 1u : x == -1 ? ((b & 1u) ? a : 1u) : x == 0 ? 0x80000000u : 0u;\n"
    "  u64 m = x < 0 ? (u64)(-(long long)x) : (u64)x, r = rfx_powc(m, (u32)y, 1ull << 32); bool neg = x < 0 && (y & 1);\n"
    "  if (r > (neg ? 1ull << 31 : (1ull << 31) - 1)) return 0x80000000u; return neg ? 0u - (u32)r : (u32)r; }\n"
    "static __device__ __forceinline__ u32 rfx_powu(u32 a, u32 b)\n"
    "{ u64 r = rfx_powc(a, b, (1ull << 63) - 1); if (r < 1ull << 53) return (u32)r; if (r > (1ull << 63) - 1) return 0u;\n"
    "  double d = pow((double)a, (double)b); return d >= 9223372036854775808.0 ? 0u : (u32)(u64)d; }\n"
    "static __device__ __forceinline__ u32 rfx_mini(u32 a, u32 b) { return (int)b < (int)a ? b : a; }\n"
    "static __device__ __forceinline__ u32 rfx_maxi(u32 a, u32 b) { return (int)b > (int)a ? b : a; }\n"
    "static __device__ __forceinline__ u32 rfx_minu(u32 a, u32 b) { return b < a ? b : a; }\n"
    "static __device__ __forceinline__ u32 rfx_maxu(u32 a, u32 b) { return b > a ? b : a; }\n"
    "static __device__ __forceinline__ u32 rfx_minf(u32 a, u32 b) { return rfx_f(b) < rfx_f(a) ? b : a; }\n"
    "static __device__ __forceinline__ u32 rfx_maxf(u32 a, u32 b) { return rfx_f(b) > rfx_f(a) ? b : a; }\n"
    "static __device__ __forceinline__ u32 rfx_powf(u32 a, u32 b) { return rfx_u((float)pow((double)rfx_f(a), (double)rfx_f(b))); }\n"
    "// look-back words: two flags, the launch's tag (bits 46-61: words of earlier launches\n"
    "// are not ready, so none is cleared before a launch), the value\n"
    "#define LB_AGGREGATE (1ull << 62)\n"
    "#define LB_PREFIX (2ull << 62)\n"
    "#define LB_TAG (0xffffull << 46)\n"
    "#define LB_VALUE ((1ull << 46) - 1)\n"
    "static __device__ __forceinline__ bool lb_ready(u64 y, u64 tag)\n"
    "{ return (y & LB_TAG) == tag && (y & (LB_AGGREGATE | LB_PREFIX)) != 0; }\n";

/* In front of rx_ops.h's functions where a kernel computes 64-bit values: what its
 * #include lines (left out of the embedded text) gave it, for NVRTC, which has no libc. */
static const char wide_prelude[] =
    "typedef unsigned int uint32_t;\n"
    "typedef int int32_t;\n"
    "typedef unsigned long long uint64_t;\n"
    "typedef long long int64_t;\n"
    "#define INT32_MIN (-2147483647 - 1)\n"
    "#define INT64_MIN (-9223372036854775807ll - 1)\n"
    "#define INT64_MAX 9223372036854775807ll\n"
    "#define UINT64_MAX 18446744073709551615ull\n"
    "static __device__ __forceinline__ u64 rfx_pair(u32 hi, u32 lo) { return (u64)hi << 32 | lo; }\n";

typedef struct gen {
    FILE *f;
    const rfx_plan *P;
    const char *colfmt;        /* how column c is named, e.g. "v[j][%d]" or "c%d" */
    bool divides;              /* an integer division or modulo (or a decimal's checked
                                * arithmetic) was emitted */
    bool wide;                 /* a 64-bit expression was emitted: rx_ops.h goes in front */
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

static void emit_rx(gen *g, const rfx_rx *e);
static void emit_rx64(gen *g, const rfx_rx *e);

/* The operators of rx_ops.h's rfx_bitwise (and min and max of floats), each operand
 * evaluated once and always (no short-circuit: a zero divisor inside either still sets
 * the division flag, as in the interpreter). */
static void emit_bitwise(gen *g, const rfx_rx *e)
{
    FILE *f = g->f;
    const char sfx = e->prim == RFX_NUMBER ? 'i' : e->prim == RFX_UNSIGNED ? 'u' : 'f';
    const char *call = e->op == RFX_POW ? (sfx == 'i' ? "rfx_powi" : sfx == 'u' ? "rfx_powu" : "rfx_powf")
                       : e->op == RFX_MIN_OF ? (sfx == 'i' ? "rfx_mini" : sfx == 'u' ? "rfx_minu" : "rfx_minf")
                       : e->op == RFX_MAX_OF ? (sfx == 'i' ? "rfx_maxi" : sfx == 'u' ? "rfx_maxu" : "rfx_maxf")
                       : e->op == RFX_BSHR && sfx == 'i' ? "rfx_sar"
                                                         : NULL;
    if (call) {
        fprintf(f, "%s(", call);
        emit_rx(g, e->l);
        fputs(", ", f);
        emit_rx(g, e->r);
        fputs(")", f);
        return;
    }
    const bool logical = e->op == RFX_LAND || e->op == RFX_LOR || e->op == RFX_LXOR,
               shift = e->op == RFX_BSHL || e->op == RFX_BSHR || e->op == RFX_BSHRU;
    const char *op = e->op == RFX_BAND || e->op == RFX_LAND ? "&"
                     : e->op == RFX_BOR || e->op == RFX_LOR ? "|"
                     : e->op == RFX_BXOR || e->op == RFX_LXOR ? "^"
                     : e->op == RFX_BSHL ? "<<"
                                         : ">>";   /* bshr of unsigned, bshru */
    /* (u32)(((l) != 0u) OP ((r) != 0u)), (u32)(l OP ((r) & 31u)) or (u32)(l OP r) */
    fputs(logical ? "(u32)(((" : "(u32)(", f);
    emit_rx(g, e->l);
    fprintf(f, "%s %s %s", logical ? ") != 0u)" : "", op, logical || shift ? "((" : "");
    emit_rx(g, e->r);
    fputs(logical ? ") != 0u))" : shift ? ") & 31u))" : ")", f);
}

/* A u32-valued C expression for e. */
static void emit_rx(gen *g, const rfx_rx *e)
{
    FILE *f = g->f;
    if (rfx_rx_wide(e)) {   /* 64-bit values inside: computed as the interpreters do */
        fputs("(u32)(", f);
        emit_rx64(g, e);
        fputs(")", f);
        return;
    }
    switch (e->kind) {
    case RFX_RX_COL:
        fprintf(f, g->colfmt, e->col);
        break;
    case RFX_RX_CONST:
        fprintf(f, "0x%xu", (unsigned)e->value);
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
        if (e->op >= RFX_BAND) {
            emit_bitwise(g, e);
            break;
        }
        if (e->prim == RFX_FLOAT && e->op == RFX_MOD)
            fputs("0u", f);     /* as rx_ops.h: no float modulo */
        else if (e->prim == RFX_FLOAT) {
            fputs("rfx_u(rfx_f(", f);
            emit_rx(g, e->l);
            fprintf(f, ") %s rfx_f(", arith_op(e->op));
            emit_rx(g, e->r);
            fputs("))", f);
        } else if (e->op == RFX_DIV || e->op == RFX_MOD) {
            g->divides = true;
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
    case RFX_RX_FN:   /* host-only commands are never woven (weaver.c) */
        fputs("\n#error functor on the device\n", f);
        break;
    case RFX_RX_PAIR: case RFX_RX_HALF: case RFX_RX_CONV: case RFX_RX_CAL:   /* rfx_rx_wide: above */
        break;
    }
}

/* Operands l and r, each as a u64-valued expression, after the text before (a call's name
 * and leading arguments), each wrapped in its cast: "before(lcast(l), rcast(r)" and then
 * after. */
static void emit_call2(gen *g, const char *before, const char *lcast, const rfx_rx *l, const char *rcast,
                       const rfx_rx *r, const char *after)
{
    fprintf(g->f, "%s%s(", before, lcast);
    emit_rx64(g, l);
    fprintf(g->f, "), %s(", rcast);
    emit_rx64(g, r);
    fprintf(g->f, ")%s", after);
}

/* A u64-valued C expression for e, node for node as base/expr.c's rfx_rx_eval64 computes it,
 * by the functions of base/rx_ops.h (compiled in front of the kernel): both backends, the
 * device's interpreter and these kernels compute the same bits. A zero divisor and a
 * decimal past 64 bits set div0, as the division flag. */
static void emit_rx64(gen *g, const rfx_rx *e)
{
    FILE *f = g->f;
    if (!rfx_rx_wide(e)) {
        fputs("(u64)(", f);
        emit_rx(g, e);
        fputs(")", f);
        return;
    }
    g->wide = true;
    char head[96];
    switch (e->kind) {
    case RFX_RX_COL:
        fputs("(u64)", f);
        fprintf(f, g->colfmt, e->col);
        break;
    case RFX_RX_CONST:
        fprintf(f, "0x%llxull", (unsigned long long)e->value);
        break;
    case RFX_RX_BIN:
    case RFX_RX_CMP: {
        /* a decimal's checked arithmetic and its comparisons across scales in int64_t, other
         * 64-bit kinds as 64 bits, the rest as words (rfx_rx_eval64's cases) */
        const bool cmp = e->kind == RFX_RX_CMP, exact = cmp ? e->prim == RFX_DECIMAL : rfx_rx_checked(e),
                   wide = RFX_PRIM_WIDE(e->prim);
        const char *cast = exact ? "(int64_t)" : wide ? "" : "(u32)";
        char after[32];
        snprintf(after, sizeof after, cmp && exact ? ", %d)" : cmp ? ")" : ", &div0)", e->col);
        if (exact)
            snprintf(head, sizeof head, "(u64)rfx_%s(%d, ", cmp ? "compare_scaled" : "checked64", e->op);
        else
            snprintf(head, sizeof head, "%srfx_%s%s(%d, %d, ", wide && !cmp ? "" : "(u64)", cmp ? "compare" : "binary",
                     wide ? "64" : "", e->op, e->prim);
        if (!cmp)
            g->divides |= exact || e->op == RFX_DIV || e->op == RFX_MOD;
        emit_call2(g, head, cast, e->l, cast, e->r, after);
        break;
    }
    case RFX_RX_NEG:
        fprintf(f, RFX_PRIM_WIDE(e->prim) ? "rfx_negate64(%d, (" : "(u64)rfx_negate(%d, (u32)(", e->prim);
        emit_rx64(g, e->l);
        fputs("))", f);
        break;
    case RFX_RX_AND:   /* as C's &&: the right not evaluated where the left is 0 */
        fputs("(u64)((", f);
        emit_rx64(g, e->l);
        fputs(") && (", f);
        emit_rx64(g, e->r);
        fputs("))", f);
        break;
    case RFX_RX_PAIR:   /* the high word l, the low word r */
        emit_call2(g, "rfx_pair(", "(u32)", e->l, "(u32)", e->r, ")");
        break;
    case RFX_RX_HALF:
        fputs(e->op == 0 ? "((" : "(u64)(u32)(", f);
        emit_rx64(g, e->l);
        fputs(e->op == 0 ? ") >> 32)" : ")", f);
        break;
    case RFX_RX_CONV:
        g->divides |= e->env != NULL;
        fprintf(f, "rfx_convert_checked(%d, %d, %d, %d, %s, ", e->l->prim, e->col, e->prim, e->op,
                e->env ? "true" : "false");
        emit_rx64(g, e->l);
        fputs(", &div0)", f);
        break;
    case RFX_RX_CAL:
        fprintf(f, "(u64)rfx_calendar(%d, (u32)(", e->op);
        emit_rx64(g, e->l);
        fputs("), ", f);
        if (e->r) {
            fputs("(u32)(", f);
            emit_rx64(g, e->r);
            fputs("))", f);
        } else
            fputs("0u)", f);
        break;
    case RFX_RX_FN:   /* host-only commands are never woven (weaver.c) */
        fputs("\n#error functor on the device\n", f);
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
/* Whether a FILTER's output gathers its rows of a tile in shared memory (the tile's own,
 * s_rows, once its rows are in registers) and writes them coalesced: rows of three words
 * or more, written from registers, would have each store of a warp touch 32 rows apart
 * (one or two words go as one store a row, side by side). Only where the tile is staged
 * and the output's rows are no wider than the source's, so that they fit there. */
static bool out_staged(const rfx_fout *o, int arity)
{
    return rfx_weave_staged(arity) && o->nout >= 3 && o->nout <= arity;
}

/* The statements, inside a loop over j, that place output m's kept rows of item j: in the
 * output (at o<m>) or, given stage, in that shared array at their place in the tile. */
static void put_out_rows(gen *g, const rfx_fout *o, int m, const char *stage)
{
    FILE *f = g->f;
    fprintf(f,
            "        {\n            const bool k = (keep[%d] >> j) & 1;\n"
            "            const u32 b = __ballot_sync(0xffffffffu, k);\n",
            m);
    if (!o->nout) {   /* a nullary output keeps only its count */
        fputs("            (void)b;\n        }\n", f);
        return;
    }
    if (stage)
        fprintf(f, "            if (k) {\n                u32 *w = %s + (s_cnt[%d][j][warp] + __popc(b & below)) * %du;\n",
                stage, m, o->nout);
    else
        fprintf(f, "            if (k) {\n                u32 *w = o%d + (s_cnt[%d][j][warp] + __popc(b & below)) * %du;\n",
                m, m, o->nout);
    /* two words: one 8-byte store (an output's rows start at a fresh allocation, so each row
     * is aligned to its width) */
    const bool pair = o->nout == 2 && !stage;
    if (pair)
        fputs("                *(uint2 *)w = make_uint2(", f);
    for (int k = 0; k < o->nout; k++) {
        if (pair)
            fputs(k ? ", " : "", f);
        else
            fprintf(f, "                w[%d] = ", k);
        if (o->out && o->out[k])
            emit_rx(g, o->out[k]);
        else
            fprintf(f, "v[j][%d]", k);
        if (!pair)
            fputs(";\n", f);
    }
    if (pair)
        fputs(");\n", f);
    fputs("            }\n        }\n", f);
}

static void gen_filter(gen *g, const rfx_fgroup *grp)
{
    FILE *f = g->f;
    int A = g->P->vars[grp->src].arity, M = grp->nouts, items = rfx_weave_items(A);
    fprintf(f, "// FILTER over %s: %d output%s, rows of %d columns, %d rows per thread\n", g->P->vars[grp->src].name, M,
            M == 1 ? "" : "s", A, items);
    fprintf(f, "#define T %d\n#define ITEMS %d\n#define TILE (T * ITEMS)\n#define M %d\n", RFX_WEAVE_THREADS, items, M);
    fputs("extern \"C\" __global__ void __launch_bounds__(T", f);
    if (rfx_weave_min_blocks(A))
        fprintf(f, ", %d", rfx_weave_min_blocks(A));
    fprintf(f,
            ") %s(const u32 *__restrict__ src, u64 n, rfx_outs outs,\n"
            "    u64 *status, unsigned *counter, u64 *totals, unsigned *div_flag, u64 tag)\n{\n",
            grp->name);
    bool staged = rfx_weave_staged(A);
    if (staged)
        fprintf(f, "    __shared__ __align__(16) u32 s_rows[TILE * %d];   // the tile, loaded coalesced\n", A);
    fputs("    __shared__ u32 s_cnt[M][ITEMS][T / 32];\n"
          "    __shared__ u64 s_base[M];\n"
          "    __shared__ u32 s_tot[M];   // each output's rows of the tile\n"
          "    const u64 ntiles = (n + TILE - 1) / TILE;\n"
          "    // a block a tile, in index order: blocks start in that order, so a look-back never\n"
          "    // waits on one not started (the counter is left alone)\n"
          "    const u64 tile = blockIdx.x, first = tile * TILE;\n"
          "    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
          "    bool div0 = false;\n",
          f);
    if (staged)
        fprintf(f,
                "    {\n        // all of a thread's 16-byte loads are in flight before the first store\n"
                "        const u64 words = (n - first < TILE ? n - first : TILE) * %d;\n"
                "        const u32 *g = src + first * %d;\n"
                "        const int Q = (TILE * %d / 4 + T - 1) / T;\n"
                "        uint4 q4[Q];\n"
                "#pragma unroll\n        for (int q = 0; q < Q; q++) {\n"
                "            const u64 w = ((u64)q * T + threadIdx.x) * 4;\n"
                "            if (w + 3 < words)\n                q4[q] = *(const uint4 *)&g[w];\n        }\n"
                "#pragma unroll\n        for (int q = 0; q < Q; q++) {\n"
                "            const u64 w = ((u64)q * T + threadIdx.x) * 4;\n"
                "            if (w + 3 < words)\n                *(uint4 *)&s_rows[w] = q4[q];\n        }\n"
                "        for (u64 w = (words & ~3ull) + threadIdx.x; w < words; w += T)\n"
                "            s_rows[w] = g[w];\n"
                "        __syncthreads();\n    }\n",
                A, A, A);
    fprintf(f, "    u32 v[ITEMS][%d];\n    u32 keep[M];\n", A ? A : 1);
    /* every load is issued before the first is used, so a thread keeps ITEMS in flight */
    fputs("#pragma unroll\n    for (int m = 0; m < M; m++)\n        keep[m] = 0;\n"
          "#pragma unroll\n    for (int j = 0; j < ITEMS; j++) {\n"
          "        const u64 r = first + (u64)j * T + threadIdx.x;\n"
          "        if (r < n) {\n",
          f);
    if (A == 2)
        fputs("            uint2 t = ((const uint2 *)src)[r];\n            v[j][0] = t.x;\n            v[j][1] = t.y;\n", f);
    else if (A == 4)
        fputs("            uint4 t = ((const uint4 *)src)[r];\n"
              "            v[j][0] = t.x;\n            v[j][1] = t.y;\n            v[j][2] = t.z;\n            v[j][3] = t.w;\n",
              f);
    else if (staged)
        for (int c = 0; c < A; c++)
            fprintf(f, "            v[j][%d] = s_rows[(j * T + threadIdx.x) * %d + %d];\n", c, A, c);
    else
        for (int c = 0; c < A; c++)
            fprintf(f, "            v[j][%d] = src[r * %d + %d];\n", c, A, c);
    fputs("        }\n    }\n"
          "#pragma unroll\n    for (int j = 0; j < ITEMS; j++) {\n"
          "        const bool in = first + (u64)j * T + threadIdx.x < n;\n",
          f);
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
          "    if (warp < M) {\n"
          "        // warp m scans output m's counts (item-major, then warp) and finds its offset\n"
          "        const int m = warp, V = ITEMS * (T / 32), P = (V + 31) / 32;\n"
          "        u32 *c = &s_cnt[m][0][0], sum = 0;\n"
          "        for (int q = 0; q < P; q++)\n"
          "            if (lane * P + q < V)\n                sum += c[lane * P + q];\n"
          "        u32 incl = sum;\n"
          "        for (int o = 1; o < 32; o <<= 1) {\n"
          "            u32 y = __shfl_up_sync(0xffffffffu, incl, o);\n"
          "            if (lane >= (unsigned)o)\n                incl += y;\n        }\n"
          "        u32 run = incl - sum;\n"
          "        for (int q = 0; q < P; q++)\n"
          "            if (lane * P + q < V) {\n"
          "                u32 t = c[lane * P + q];\n                c[lane * P + q] = run;\n                run += t;\n"
          "            }\n"
          "        const u64 total = __shfl_sync(0xffffffffu, incl, 31);\n"
          "        // decoupled look-back by the whole warp: 32 earlier tiles' words at a time, summed\n"
          "        // back to the nearest one that holds its inclusive prefix (earlier tiles are running\n"
          "        // or done: tiles are taken in order)\n"
          "        u64 *st = status + m * ntiles, excl = 0;\n"
          "        if (lane == 0)\n"
          "            atomicExch(&st[tile], (tile == 0 ? LB_PREFIX : LB_AGGREGATE) | tag | total);\n"
          "        for (long long top = (long long)tile - 1; top >= 0; top -= 32) {\n"
          "            const long long t = top - (long long)lane;\n"
          "            u64 y = t >= 0 ? *(volatile u64 *)&st[t] : LB_PREFIX | tag;\n"
          "            while (!__all_sync(0xffffffffu, lb_ready(y, tag)))\n"
          "                if (!lb_ready(y, tag))\n                    y = *(volatile u64 *)&st[t];\n"
          "            const u32 prefixes = __ballot_sync(0xffffffffu, (y & LB_PREFIX) != 0);\n"
          "            const int stop = prefixes ? __ffs(prefixes) - 1 : 31;\n"
          "            u64 v = (int)lane <= stop ? (y & LB_VALUE) : 0;\n"
          "            for (int o = 16; o > 0; o >>= 1)\n                v += __shfl_xor_sync(0xffffffffu, v, o);\n"
          "            excl += v;\n"
          "            if (prefixes)\n                break;\n"
          "        }\n"
          "        if (lane == 0) {\n"
          "            if (tile != 0)\n                atomicExch(&st[tile], LB_PREFIX | tag | (excl + total));\n"
          "            s_base[m] = excl;\n"
          "            s_tot[m] = (u32)total;\n"
          "            if (tile == ntiles - 1) {\n"
          "                totals[m] = excl + total;\n"
          "                __threadfence_system();   // before the tag that says the totals are there\n"
          "            }\n"
          "        }\n"
          "    }\n"
          "    __syncthreads();\n"
          "    if (threadIdx.x == 0 && tile == ntiles - 1)   // totals[9]: the totals are there\n"
          "        ((volatile u64 *)totals)[9] = tag;\n"
          "    const u32 below = (1u << lane) - 1;\n",
          f);
    /* each output's place found once, rows placed by 32-bit positions in the tile (64-bit
     * arithmetic for every row cost a measurable share of a FILTER's time) */
    for (int m = 0; m < M; m++)
        if (grp->outs[m].nout)
            fprintf(f, "    u32 *const o%d = outs.p[%d] + s_base[%d] * %d;\n", m, m, m, grp->outs[m].nout);
    /* outputs written straight from registers first, in one pass over the rows; then each
     * staged one in a pass of its own */
    bool direct = false;
    for (int m = 0; m < M; m++)
        direct |= !out_staged(&grp->outs[m], A);
    if (direct) {
        fputs("#pragma unroll\n    for (int j = 0; j < ITEMS; j++) {\n", f);
        for (int m = 0; m < M; m++)
            if (!out_staged(&grp->outs[m], A))
                put_out_rows(g, &grp->outs[m], m, NULL);
        fputs("    }\n", f);
    }
    for (int m = 0; m < M; m++) {
        const rfx_fout *o = &grp->outs[m];
        if (!out_staged(o, A))
            continue;
        fprintf(f,
                "    // output %d's rows of the tile gathered in s_rows (free: every row is in v, and\n"
                "    // what an earlier output gathered there was written), then written coalesced\n"
                "    __syncthreads();\n"
                "#pragma unroll\n    for (int j = 0; j < ITEMS; j++) {\n",
                m);
        put_out_rows(g, o, m, "s_rows");
        fprintf(f,
                "    }\n    __syncthreads();\n"
                "    for (u32 w = threadIdx.x, words = s_tot[%d] * %du; w < words; w += T)\n"
                "        o%d[w] = s_rows[w];\n",
                m, o->nout, m);
    }
    /* totals and div_flag are host words (mapped): one plain store, read after the wait */
    fputs("    if (div0)\n        *(volatile unsigned *)div_flag = 1u;\n}\n", f);
    fputs("#undef T\n#undef ITEMS\n#undef TILE\n#undef M\n", f);
}

/* ---- JOIN -------------------------------------------------------------------------------- */
/* Declarations of the columns of source s's row `row` that e reads. */
static void load_cols(gen *g, const rfx_fgroup *grp, int s, const bool *used, const char *row, const char *indent)
{
    int as = g->P->vars[grp->srcs[s]].arity;
    for (int c = 0; c < as; c++)
        if (used[grp->offset[s] + c])
            fprintf(g->f, "%sconst u32 c%d = S.p[%d][(%s) * %d + %d];\n", indent, grp->offset[s] + c, s, row, as, c);
}

static void emit_or_true(gen *g, const rfx_rx *e)
{
    if (e)
        emit_rx(g, e);
    else
        fputs("true", g->f);
}

static void gen_join(gen *g, const rfx_fgroup *grp)
{
    FILE *f = g->f;
    const rfx_plan *P = g->P;
    const char *nm = grp->name;
    int ns = grp->nsrc, K = grp->nkeys, width = grp->offset[ns - 1] + P->vars[grp->srcs[ns - 1]].arity;
    int a0 = P->vars[grp->srcs[0]].arity;
    bool *used = calloc((size_t)width + 1, sizeof(bool)), *fused = calloc((size_t)width + 1, sizeof(bool));
    if (!used || !fused) {
        free(used);
        free(fused);
        return;
    }
    mark_cols(grp->pred, used);
    for (int k = 0; k < grp->nout; k++)
        mark_cols(grp->out[k], used);
    fprintf(f, "// JOIN of %d sources on %d key column%s\n#define SCAN %d\n#define FILTERED (1ull << 63)\n", ns, K,
            K == 1 ? "" : "s", RFX_WEAVE_SCAN_RANGE);
    fprintf(f,
            "static __device__ __forceinline__ int %s_cmp(const u32 *row, const u32 *key)\n{\n"
            "#pragma unroll\n    for (int c = 0; c < %d; c++)\n"
            "        if (row[c] != key[c])\n            return row[c] < key[c] ? -1 : 1;\n    return 0;\n}\n",
            nm, K);
    fprintf(f,
            "// first row of rows[lo, hi) whose key is >= key (upper: > key)\n"
            "static __device__ u64 %s_bound(const u32 *rows, int arity, u64 lo, u64 hi, const u32 *key, bool upper)\n{\n"
            "    while (lo < hi) {\n        u64 m = lo + (hi - lo) / 2;\n        int c = %s_cmp(rows + m * arity, key);\n"
            "        if (c < 0 || (upper && c == 0))\n            lo = m + 1;\n        else\n            hi = m;\n    }\n"
            "    return lo;\n}\n",
            nm, nm);
    fprintf(f,
            "// rem %% n and rem /= n, in 32 bits when both fit\n"
            "static __device__ __forceinline__ u64 %s_digit(u64 *rem, u64 n)\n{\n"
            "    if ((*rem | n) >> 32 == 0) {\n        u32 r = (u32)*rem, q = r / (u32)n;\n        *rem = q;\n"
            "        return r - q * (u32)n;\n    }\n    u64 q = *rem / n, d = *rem - q * n;\n    *rem = q;\n    return d;\n}\n"
            "// the last i in [lo, hi) with off[i] <= o\n"
            "static __device__ __forceinline__ u64 %s_owner(const u64 *off, u64 lo, u64 hi, u64 o)\n{\n"
            "    while (lo < hi) {\n        u64 m = lo + (hi - lo) / 2;\n        if (off[m] <= o)\n            lo = m + 1;\n"
            "        else\n            hi = m;\n    }\n    return lo - 1;\n}\n",
            nm, nm);
    /* count: each warp takes 32 * chunk consecutive rows of the first source, a lane every
     * 32nd (so the warp's loads and stores stay coalesced). Where a lane's keys ascend,
     * after one binary search per source its next row's range is found by galloping
     * forward from the last one (a few steps the warp's other lanes have just cached)
     * instead of searching the whole source again; a probe's rows, in any order, search
     * the whole source where their key is below the last. The launch chooses chunk
     * (rfx_gpu_fused_join). */
    fprintf(f,
            "// first row of rows[lo, n) whose key is >= key (upper: > key), galloping from lo\n"
            "static __device__ u64 %s_gallop(const u32 *rows, int arity, u64 lo, u64 n, const u32 *key, bool upper)\n{\n"
            "    u64 step = 1, prev = lo;\n"
            "    while (lo < n) {\n        int c = %s_cmp(rows + lo * arity, key);\n"
            "        if (!(c < 0 || (upper && c == 0)))\n            break;\n"
            "        prev = lo + 1;\n        lo += step;\n        step *= 2;\n    }\n"
            "    return %s_bound(rows, arity, prev, lo < n ? lo : n, key, upper);\n}\n",
            nm, nm, nm);
    fprintf(f,
            "extern \"C\" __global__ void __launch_bounds__(%d) %s_count(rfx_srcs S, u64 *lo, u64 *len, u64 *cnt,\n"
            "    unsigned *raw_flag, unsigned *div_flag, unsigned chunk)\n{\n"
            "    const u64 na = S.n[0], first = ((blockIdx.x * (u64)blockDim.x + threadIdx.x) >> 5) * 32 * chunk;\n"
            "    const unsigned lane = threadIdx.x & 31;\n"
            "    bool div0 = false, raw = false;\n",
            RFX_FUSED_THREADS, nm);
    for (int s = 1; s < ns; s++)
        fprintf(f, "    u64 at%d = ~0ull;   // lower bound of the last key searched in source %d\n", s, s);
    fputs("    for (u64 i = first + lane; i < first + 32 * chunk && i < na; i += 32) {\n", f);
    fprintf(f, "        const u32 *a = S.p[0] + i * %d;\n        u64 total = 0;\n", a0);
    if (grp->keycol) {   /* a probe's key columns, where they are not the first source's first */
        fprintf(f, "        const u32 key[%d] = {", K);
        for (int c = 0; c < K; c++)
            fprintf(f, "%sa[%d]", c ? ", " : "", grp->keycol[c]);
        fputs("};\n", f);
    } else
        fputs("        const u32 *key = a;\n", f);
    g->colfmt = "c%d";
    if (grp->pre) {
        bool *pu = calloc((size_t)width + 1, sizeof(bool));
        if (pu) {
            mark_cols(grp->pre, pu);
            fputs("        {\n", f);
            load_cols(g, grp, 0, pu, "i", "            ");
            fputs("            if (!(", f);
            emit_rx(g, grp->pre);
            fputs(")) {\n                cnt[i] = 0;\n                continue;\n            }\n        }\n", f);
            free(pu);
        }
    }
    fputs("        do {\n            total = 1;\n", f);
    for (int s = 1; s < ns; s++) {
        int as = P->vars[grp->srcs[s]].arity;
        /* the gallop starts from the last key's bound where every row before it is below
         * this key (rows in key order: always), else a search of the whole source */
        fprintf(f,
                "            {\n"
                "                const bool after = at%d != ~0ull && (at%d == 0 || %s_cmp(S.p[%d] + (at%d - 1) * %d, key) < 0);\n"
                "                const u64 l = at%d = after ? %s_gallop(S.p[%d], %d, at%d, S.n[%d], key, false)\n"
                "                                           : %s_bound(S.p[%d], %d, 0, S.n[%d], key, false);\n"
                "                const u64 h = %s_gallop(S.p[%d], %d, l, S.n[%d], key, true);\n"
                "                u64 n = h - l;\n",
                s, s, nm, s, s, as, s, nm, s, as, s, s, nm, s, as, s, nm, s, as, s);
        if (grp->filt[s]) {
            memset(fused, 0, sizeof(bool) * (size_t)(width + 1));
            mark_cols(grp->filt[s], fused);
            fputs("                if (n <= SCAN) {\n                    u64 pass = 0;\n"
                  "                    for (u64 r = l; r < h; r++) {\n",
                  f);
            load_cols(g, grp, s, fused, "r", "                        ");
            fputs("                        pass += (", f);
            emit_rx(g, grp->filt[s]);
            fputs(") != 0;\n                    }\n", f);
            fprintf(f, "                    len[(u64)%d * na + i] = pass | FILTERED;\n                    n = pass;\n"
                       "                } else {\n                    raw = true;\n"
                       "                    len[(u64)%d * na + i] = n;\n                }\n",
                    s - 1, s - 1);
        } else
            fprintf(f, "                len[(u64)%d * na + i] = n;\n", s - 1);
        fprintf(f, "                lo[(u64)%d * na + i] = l;\n                total *= n;\n"
                   "                if (!total)\n                    break;\n            }\n",
                s - 1);
    }
    fputs("        } while (0);\n", f);
    fputs("        cnt[i] = total;\n    }\n"
          "    if (raw)\n        atomicOr(raw_flag, 1u);\n    if (div0)\n        atomicOr(div_flag, 1u);\n}\n",
          f);
    /* expand: rows of three words or more gathered in shared memory by the block and
     * written coalesced (from registers, each store of a warp would touch 32 rows apart) */
    const bool staged = rfx_weave_expand_staged(grp->nout);
    if (staged)
        fprintf(f, "#define T_EXPAND %d\n#define NOUT %d\n", RFX_FUSED_THREADS, grp->nout);
    fprintf(f,
            "extern \"C\" __global__ void __launch_bounds__(%d) %s_expand(rfx_srcs S, u64 total, const u64 *off, const u64 *lo,\n"
            "    const u64 *len, u32 *out, u64 *flags, unsigned *div_flag)\n{\n"
            "    __shared__ u64 s_first, s_last;\n"
            "%s"
            "    const u64 na = S.n[0];\n    bool div0 = false;\n"
            "    for (u64 base = blockIdx.x * (u64)blockDim.x; base < total; base += (u64)gridDim.x * blockDim.x) {\n"
            "        // the first-source rows owning this block's outputs, then each output's own\n"
            "        if (threadIdx.x == 0)\n            s_first = %s_owner(off, 0, na, base);\n"
            "        if (threadIdx.x == 1)\n"
            "            s_last = %s_owner(off, 0, na, base + blockDim.x - 1 < total ? base + blockDim.x - 1 : total - 1);\n"
            "        __syncthreads();\n"
            "        const u64 o = base + threadIdx.x;\n"
            "        if (o < total) {\n"
            "            const u64 i = %s_owner(off, s_first, s_last + 1, o);\n"
            "            u64 rem = o - off[i];\n",
            RFX_FUSED_THREADS, nm,
            staged ? "    __shared__ u32 s_out[T_EXPAND * NOUT];   // the block's rows, written coalesced\n" : "",
            nm, nm, nm);
    for (int s = ns - 1; s >= 1; s--) {
        fprintf(f, "            u64 j%d;\n            {\n                const u64 L = len[(u64)%d * na + i], l = lo[(u64)%d * na + i];\n"
                   "                u64 d = %s_digit(&rem, L & ~FILTERED);\n",
                s, s - 1, s - 1, nm);
        if (grp->filt[s]) {
            memset(fused, 0, sizeof(bool) * (size_t)(width + 1));
            mark_cols(grp->filt[s], fused);
            fputs("                if (L & FILTERED)\n                    for (u64 r = l;; r++) {\n", f);
            load_cols(g, grp, s, fused, "r", "                        ");
            fputs("                        if ((", f);
            emit_rx(g, grp->filt[s]);
            fprintf(f, ") != 0 && d-- == 0) {\n                            j%d = r;\n                            break;\n"
                       "                        }\n                    }\n                else\n                    j%d = l + d;\n",
                    s, s);
        } else
            fprintf(f, "                j%d = l + d;\n", s);
        fputs("            }\n", f);
    }
    fputs("            const u64 j0 = i;\n", f);
    for (int s = 0; s < ns; s++) {
        char row[16];
        snprintf(row, sizeof row, "j%d", s);
        load_cols(g, grp, s, used, row, "            ");
    }
    fputs("            // with flags, every filter is tested; without, every range was filtered as counted\n"
          "            const bool keep = !flags || (",
          f);
    emit_or_true(g, grp->pred);
    fputs(");\n            if (flags)\n                flags[o] = keep;\n            if (keep) {\n", f);
    for (int k = 0; k < grp->nout; k++) {
        if (staged)
            fprintf(f, "                s_out[threadIdx.x * NOUT + %d] = ", k);
        else
            fprintf(f, "                out[o * %d + %d] = ", grp->nout, k);
        emit_rx(g, grp->out[k]);
        fputs(";\n", f);
    }
    fputs("            }\n        }\n", f);
    if (staged)   /* a row not kept carries what s_out held: as unwritten, flags say it goes */
        fputs("        __syncthreads();\n"
              "        for (u64 w = threadIdx.x, words = (total - base < T_EXPAND ? total - base : T_EXPAND) * NOUT; w < words;\n"
              "             w += T_EXPAND)\n"
              "            out[base * NOUT + w] = s_out[w];\n",
              f);
    fputs("        __syncthreads();\n    }\n    if (div0)\n        atomicOr(div_flag, 1u);\n}\n"
          "#undef SCAN\n#undef FILTERED\n",
          f);
    if (staged)
        fputs("#undef T_EXPAND\n#undef NOUT\n", f);
    free(used);
    free(fused);
}

char *rfx_weave_codegen(rfx_arena *arena, const rfx_plan *plan, const rfx_fgroup *grp, bool *divides)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    gen g = {f, plan, "c%d", false, false};
    if (grp->kind == RFX_FG_FILTER)
        gen_filter(&g, grp);
    else
        gen_join(&g, grp);
    bool ok = !ferror(f);
    if (fclose(f) != 0)
        ok = false;
    /* the kernels after what they call: the prelude, and rx_ops.h where they compute 64 bits */
    char *s = NULL;
    if (ok && buf) {
        size_t np = strlen(prelude), nw = g.wide ? strlen(wide_prelude) + strlen(rfx_rx_ops_text) : 0;
        if ((s = rfx_arena_alloc(arena, np + nw + len + 1))) {
            char *at = s;
            memcpy(at, prelude, np);
            at += np;
            if (g.wide) {
                at = stpcpy(at, wide_prelude);
                at = stpcpy(at, rfx_rx_ops_text);
            }
            memcpy(at, buf, len + 1);
        }
    }
    free(buf);
    *divides = g.divides;
    return s;
}
