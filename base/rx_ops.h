/* rx_ops.h: the semantics of scalar arithmetic, comparison and aggregation steps, shared
 * by the CPU evaluator (base/expr.c, primitives/cpu.c) and the CUDA kernels
 * (primitives/gpu_*.cu), so both backends compute the same bits.
 * number and unsigned wrap modulo 2^32; INT32_MIN / -1 is INT32_MIN and INT32_MIN % -1 is 0;
 * a zero divisor sets *div0 and gives 0; floats follow IEEE binary32, every NaN made being
 * 0x7fc00000. Shifts take their count modulo 32 (bshr of a number is arithmetic, of an
 * unsigned and bshru logical); land, lor, lxor give 0 or 1; x ^ y is Soufflé's: the power as
 * C's pow makes it, cast as x86 casts it (a number's power outside 32 bits, or 0 ^ y for y
 * negative, is INT32_MIN; an unsigned power is the low word of its 64-bit truncation, 0 from
 * 2^63; a negative y: 1 / x^-y truncated, so 0 unless x is 1 or -1), computed exactly in
 * integers wherever pow is exact (below 2^53), so that both backends agree; 64-bit powers
 * wrap as products do; x ^ y of floats is C's pow
 * in double precision, rounded to the float (as Soufflé's std::pow, and the same bits on
 * the GPU for every but the rarest operands); min and max of floats keep the first operand
 * unless the second is strictly beyond it (a NaN second: the first). */
#ifndef RFX_RX_OPS_H
#define RFX_RX_OPS_H

#include "base.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* What the device's expression interpreter holds (primitives/gpu_core.cuh): instructions
 * of one command's predicate and outputs, and values on its stack. A command past them runs
 * on the host (ra_ir marks it host_only). */
#define RFX_RX_DEVICE_MAX_INS 512
#define RFX_RX_DEVICE_MAX_STACK 16

#ifdef __CUDACC__
#define RFX_HD static __host__ __device__ inline
#else
#define RFX_HD static inline
#endif

RFX_HD float rfx_as_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* The bits of a float result. A NaN is always the quiet NaN 0x7fc00000: x86 and the GPU
 * make different NaNs (inf - inf is 0xffc00000 on one, 0x7fffffff on the other), and both
 * backends must store, order and print the same bits ("nan", not "-nan"). */
RFX_HD uint32_t rfx_of_f32(float f)
{
    if (f != f)
        return 0x7fc00000u;
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* A range's values for one row (rfx_rx_range: lo and hi, its bounds' values where it has
 * them) as an interval [*blo, *bhi] of the column's bits, the order rows are sorted in (a
 * signed range across zero: every value, as the negatives sort after the rest); false
 * where no value is in it. */
RFX_HD bool rfx_range_bits(bool is_signed, bool has_lo, uint32_t lo, bool lo_strict, bool has_hi, uint32_t hi,
                           bool hi_strict, uint32_t *blo, uint32_t *bhi)
{
    int64_t min = is_signed ? -2147483648LL : 0, max = is_signed ? 2147483647LL : 4294967295LL;
    int64_t l = !has_lo ? min : (is_signed ? (int64_t)(int32_t)lo : (int64_t)lo) + lo_strict;
    int64_t h = !has_hi ? max : (is_signed ? (int64_t)(int32_t)hi : (int64_t)hi) - hi_strict;
    if (l > h)
        return false;
    if (l < 0 && h >= 0) {
        *blo = 0;
        *bhi = 0xffffffffu;
        return true;
    }
    *blo = (uint32_t)l;
    *bhi = (uint32_t)h;
    return true;
}

/* b to the power e by squaring, held at cap + 1 once it passes cap (cap < 2^63). */
RFX_HD uint64_t rfx_pow_capped(uint64_t b, uint32_t e, uint64_t cap)
{
    uint64_t r = 1;
    b = b > cap ? cap + 1 : b;
    for (;;) {
        if (e & 1)
            r = b && r > cap / b ? cap + 1 : r * b;
        e >>= 1;
        if (!e)
            return r;
        b = b > cap / (b ? b : 1) ? cap + 1 : b * b;
    }
}

/* A number's power as Soufflé's (int32_t)std::pow(x, y). */
RFX_HD uint32_t rfx_pow_number(uint32_t a, uint32_t b)
{
    const int32_t x = (int32_t)a, y = (int32_t)b;
    if (y < 0)   /* |x^y| < 1 but for 1 and -1; 0 ^ y is infinite */
        return x == 1 ? 1u : x == -1 ? ((b & 1u) ? a : 1u) : x == 0 ? 0x80000000u : 0u;
    const uint64_t m = x < 0 ? (uint64_t)(-(int64_t)x) : (uint64_t)x;
    const uint64_t r = rfx_pow_capped(m, (uint32_t)y, (uint64_t)1 << 32);
    const bool neg = x < 0 && (y & 1);
    if (r > (neg ? (uint64_t)1 << 31 : ((uint64_t)1 << 31) - 1))
        return 0x80000000u;   /* x86's integer indefinite */
    return neg ? (uint32_t)(0u - (uint32_t)r) : (uint32_t)r;
}

/* An unsigned power as Soufflé's (uint32_t)std::pow(x, y): the double's 64-bit truncation,
 * its low word (0 where the double is 2^63 or more). */
RFX_HD uint32_t rfx_pow_unsigned(uint32_t a, uint32_t b)
{
    const uint64_t r = rfx_pow_capped(a, b, ((uint64_t)1 << 63) - 1);   /* 2^63: at or past it */
    if (r < (uint64_t)1 << 53)
        return (uint32_t)r;
    if (r > ((uint64_t)1 << 63) - 1)
        return 0u;
    /* past 2^53 pow rounds, and its ties fall as its own algorithm takes them (not to
       even): pow itself, so that the host matches Soufflé's (the device's pow may differ in
       the last place there) */
    const double d = pow((double)a, (double)b);
    return d >= 9223372036854775808.0 ? 0u : (uint32_t)(uint64_t)d;
}

/* The operators defined on numbers and unsigned only, and min and max. */
RFX_HD uint32_t rfx_bitwise(int op, int prim, uint32_t a, uint32_t b)
{
    const unsigned s = b & 31u;
    const int32_t x = (int32_t)a, y = (int32_t)b;
    switch (op) {
    case RFX_BAND: return a & b;
    case RFX_BOR: return a | b;
    case RFX_BXOR: return a ^ b;
    case RFX_BSHL: return a << s;
    case RFX_BSHR: return prim == RFX_NUMBER && x < 0 ? ~(~a >> s) : a >> s;
    case RFX_BSHRU: return a >> s;
    case RFX_LAND: return a != 0 && b != 0;
    case RFX_LOR: return a != 0 || b != 0;
    case RFX_LXOR: return (a != 0) != (b != 0);
    case RFX_POW: return prim == RFX_NUMBER ? rfx_pow_number(a, b) : rfx_pow_unsigned(a, b);
    case RFX_MIN_OF: return (prim == RFX_NUMBER ? y < x : b < a) ? b : a;
    default: return (prim == RFX_NUMBER ? y > x : b > a) ? b : a;   /* RFX_MAX_OF */
    }
}

/* + - * / % (op < RFX_BAND): what MAP's terms kernel compiles (the others would cost it
 * registers); rfx_binary takes every operator. */
RFX_HD uint32_t rfx_arith(int op, int prim, uint32_t a, uint32_t b, bool *div0)
{
    if (prim == RFX_FLOAT) {
        float x = rfx_as_f32(a), y = rfx_as_f32(b);
        switch (op) {
        case RFX_ADD: return rfx_of_f32(x + y);
        case RFX_SUB: return rfx_of_f32(x - y);
        case RFX_MUL: return rfx_of_f32(x * y);
        case RFX_DIV: return rfx_of_f32(x / y);
        default: return rfx_of_f32(0.0f);
        }
    }
    if (prim == RFX_UNSIGNED) {
        switch (op) {
        case RFX_ADD: return a + b;
        case RFX_SUB: return a - b;
        case RFX_MUL: return a * b;
        case RFX_DIV: if (!b) { *div0 = true; return 0; } return a / b;
        default: if (!b) { *div0 = true; return 0; } return a % b;
        }
    }
    int32_t x = (int32_t)a, y = (int32_t)b;
    switch (op) {
    case RFX_ADD: return a + b;
    case RFX_SUB: return a - b;
    case RFX_MUL: return a * b;
    case RFX_DIV:
        if (!y) { *div0 = true; return 0; }
        if (x == INT32_MIN && y == -1) return a;
        return (uint32_t)(x / y);
    default:
        if (!y) { *div0 = true; return 0; }
        if (y == -1) return 0;
        return (uint32_t)(x % y);
    }
}

/* x ^ y on floats: on the host the C library's powf, as Soufflé's std::pow on floats (glibc's
 * rounds in its own way where the exact power lies halfway between two floats: (-265)^3
 * gives -18609626, not the nearest even -18609624); on the device pow in double, rounded
 * (the device's own powf differs from glibc's in the last place either way). */
RFX_HD float rfx_powf32(float x, float y)
{
#ifdef __CUDA_ARCH__
    return (float)pow((double)x, (double)y);
#else
    return powf(x, y);
#endif
}

/* Any binary operator (rfx_binop). */
RFX_HD uint32_t rfx_binary(int op, int prim, uint32_t a, uint32_t b, bool *div0)
{
    if (op < RFX_BAND)
        return rfx_arith(op, prim, a, b, div0);
    if (prim != RFX_FLOAT)
        return rfx_bitwise(op, prim, a, b);
    float x = rfx_as_f32(a), y = rfx_as_f32(b);   /* min, max, ^: the checker allows no other */
    return op == RFX_MIN_OF   ? (y < x ? b : a)
           : op == RFX_MAX_OF ? (y > x ? b : a)
           : op == RFX_POW    ? rfx_of_f32(rfx_powf32(x, y))
                              : rfx_of_f32(0.0f);
}

RFX_HD uint32_t rfx_negate(int prim, uint32_t a)
{
    return prim == RFX_FLOAT ? rfx_of_f32(-rfx_as_f32(a)) : 0u - a;
}

RFX_HD bool rfx_compare(int op, int prim, uint32_t a, uint32_t b)
{
    if (prim == RFX_FLOAT) {
        float x = rfx_as_f32(a), y = rfx_as_f32(b);
        switch (op) {
        case RFX_LT: return x < y;
        case RFX_LE: return x <= y;
        case RFX_GT: return x > y;
        case RFX_GE: return x >= y;
        case RFX_EQ: return x == y;
        default: return x != y;
        }
    }
    int c = prim == RFX_NUMBER ? ((int32_t)a < (int32_t)b ? -1 : (int32_t)a > (int32_t)b) : (a < b ? -1 : a > b);
    switch (op) {
    case RFX_LT: return c < 0;
    case RFX_LE: return c <= 0;
    case RFX_GT: return c > 0;
    case RFX_GE: return c >= 0;
    case RFX_EQ: return a == b;
    default: return a != b;
    }
}

/* One step of sum/min/max (mean sums): acc combined with v. */
RFX_HD uint32_t rfx_agg_step(int fn, int prim, uint32_t acc, uint32_t v)
{
    if (fn == RFX_AGG_MEAN)
        fn = RFX_AGG_SUM;
    if (prim == RFX_FLOAT) {
        float x = rfx_as_f32(acc), y = rfx_as_f32(v);
        return rfx_of_f32(fn == RFX_AGG_SUM ? x + y : fn == RFX_AGG_MIN ? (y < x ? y : x) : (y > x ? y : x));
    }
    if (fn == RFX_AGG_SUM)
        return acc + v;
    bool less = prim == RFX_NUMBER ? (int32_t)v < (int32_t)acc : v < acc;
    if (fn == RFX_AGG_MIN)
        return less ? v : acc;
    return (!less && v != acc) ? v : acc;
}

/* An aggregate's value from its fold over n > 0 values: mean divides the (float) sum by n,
 * as Soufflé does. */
RFX_HD uint32_t rfx_agg_finish(int fn, uint32_t acc, uint64_t n)
{
    return fn == RFX_AGG_MEAN ? rfx_of_f32(rfx_as_f32(acc) / (float)n) : acc;
}

/* ---- 64-bit kinds (number64, unsigned64, float64), with the same rules at 64 bits:
 * wrapping modulo 2^64, INT64_MIN / -1 is INT64_MIN, shifts modulo 64, every NaN made
 * 0x7ff8000000000000. Values travel as uint64_t; a 32-bit kind's in the low bits. */
RFX_HD double rfx_as_f64(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}

RFX_HD uint64_t rfx_of_f64(double d)
{
    if (d != d)
        return 0x7ff8000000000000ull;
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

RFX_HD uint64_t rfx_pow_u64(uint64_t b, uint64_t e)
{
    uint64_t r = 1;
    for (; e; e >>= 1, b *= b)
        if (e & 1)
            r *= b;
    return r;
}

/* Any binary operator over a 64-bit kind (prim is RFX_NUMBER64, _UNSIGNED64 or _FLOAT64). */
RFX_HD uint64_t rfx_binary64(int op, int prim, uint64_t a, uint64_t b, bool *div0)
{
    if (prim == RFX_FLOAT64) {
        double x = rfx_as_f64(a), y = rfx_as_f64(b);
        switch (op) {
        case RFX_ADD: return rfx_of_f64(x + y);
        case RFX_SUB: return rfx_of_f64(x - y);
        case RFX_MUL: return rfx_of_f64(x * y);
        case RFX_DIV: return rfx_of_f64(x / y);
        case RFX_MIN_OF: return y < x ? b : a;
        case RFX_MAX_OF: return y > x ? b : a;
        case RFX_POW: return rfx_of_f64(pow(x, y));
        default: return rfx_of_f64(0.0);
        }
    }
    const bool sgn = prim == RFX_NUMBER64;
    const int64_t x = (int64_t)a, y = (int64_t)b;
    const unsigned s = (unsigned)(b & 63u);
    switch (op) {
    case RFX_ADD: return a + b;
    case RFX_SUB: return a - b;
    case RFX_MUL: return a * b;
    case RFX_DIV:
        if (!b) { *div0 = true; return 0; }
        if (!sgn) return a / b;
        if (x == INT64_MIN && y == -1) return a;
        return (uint64_t)(x / y);
    case RFX_MOD:
        if (!b) { *div0 = true; return 0; }
        if (!sgn) return a % b;
        if (y == -1) return 0;
        return (uint64_t)(x % y);
    case RFX_BAND: return a & b;
    case RFX_BOR: return a | b;
    case RFX_BXOR: return a ^ b;
    case RFX_BSHL: return a << s;
    case RFX_BSHR: return sgn && x < 0 ? ~(~a >> s) : a >> s;
    case RFX_BSHRU: return a >> s;
    case RFX_LAND: return a != 0 && b != 0;
    case RFX_LOR: return a != 0 || b != 0;
    case RFX_LXOR: return (a != 0) != (b != 0);
    case RFX_POW:
        if (sgn && y < 0)
            return x == 1 ? 1u : x == -1 ? ((b & 1u) ? a : 1u) : 0u;
        return rfx_pow_u64(a, b);
    case RFX_MIN_OF: return (sgn ? y < x : b < a) ? b : a;
    default: return (sgn ? y > x : b > a) ? b : a;   /* RFX_MAX_OF */
    }
}

RFX_HD uint64_t rfx_negate64(int prim, uint64_t a)
{
    return prim == RFX_FLOAT64 ? rfx_of_f64(-rfx_as_f64(a)) : 0u - a;
}

RFX_HD bool rfx_compare64(int op, int prim, uint64_t a, uint64_t b)
{
    int c;
    if (prim == RFX_FLOAT64) {
        double x = rfx_as_f64(a), y = rfx_as_f64(b);
        if (x != x || y != y)   /* every comparison with a NaN is false, but != */
            return op == RFX_NE;
        c = x < y ? -1 : x > y;
    } else
        c = prim == RFX_NUMBER64 ? ((int64_t)a < (int64_t)b ? -1 : (int64_t)a > (int64_t)b) : (a < b ? -1 : a > b);
    switch (op) {
    case RFX_LT: return c < 0;
    case RFX_LE: return c <= 0;
    case RFX_GT: return c > 0;
    case RFX_GE: return c >= 0;
    case RFX_EQ: return c == 0;
    default: return c != 0;
    }
}

/* v, of kind from, as kind to (either may be 32 or 64 bits wide; not symbols): integers
 * sign- or zero-extended by their source's kind and truncated to the target's width,
 * floats and integers converted as C converts (a float out of an integer's range: 0). */
RFX_HD uint64_t rfx_convert(int from, int to, uint64_t v)
{
    const bool ffrom = from == RFX_FLOAT || from == RFX_FLOAT64, fto = to == RFX_FLOAT || to == RFX_FLOAT64;
    double d = 0;
    int64_t i = 0;
    if (from == RFX_FLOAT) d = (double)rfx_as_f32((uint32_t)v);
    else if (from == RFX_FLOAT64) d = rfx_as_f64(v);
    else if (from == RFX_NUMBER) i = (int32_t)(uint32_t)v;
    else if (from == RFX_UNSIGNED) i = (int64_t)(uint32_t)v;
    else i = (int64_t)v;
    if (fto) {
        if (!ffrom)
            d = from == RFX_UNSIGNED64 ? (double)v : (double)i;
        return to == RFX_FLOAT ? rfx_of_f32((float)d) : rfx_of_f64(d);
    }
    if (ffrom) {
        const bool uns = to == RFX_UNSIGNED || to == RFX_UNSIGNED64;
        if (!(d == d) || d >= 18446744073709551616.0 || d <= -9223372036854775809.0 || (uns && d < 0))
            return 0;
        i = uns && d >= 9223372036854775808.0 ? (int64_t)(uint64_t)d : (int64_t)d;
    }
    return to == RFX_NUMBER64 || to == RFX_UNSIGNED64 ? (uint64_t)i : (uint64_t)(uint32_t)i;
}

/* 10^k as an integer (k <= 18) and as a double. */
RFX_HD int64_t rfx_pow10(int k)
{
    int64_t r = 1;
    while (k-- > 0)
        r *= 10;
    return r;
}

/* v of kind from, a count of 10^-fs (a decimal's raw value; fs 0 for anything else), as
 * kind to counting 10^-ts: an exact multiple where the scale grows, rounded half away from
 * zero where it shrinks (as SQL's CAST rounds), a float's value rounded to the nearest count. */
RFX_HD uint64_t rfx_convert_scaled(int from, int fs, int to, int ts, uint64_t v)
{
    if (fs == ts)
        return rfx_convert(from, to, v);
    const bool ffrom = from == RFX_FLOAT || from == RFX_FLOAT64, fto = to == RFX_FLOAT || to == RFX_FLOAT64;
    if (ffrom || fto) {
        double d = ffrom ? rfx_as_f64(rfx_convert(from, RFX_FLOAT64, v)) : (double)(int64_t)rfx_convert(from, RFX_NUMBER64, v);
        d = ts > fs ? d * (double)rfx_pow10(ts - fs) : d / (double)rfx_pow10(fs - ts);
        if (fto)
            return rfx_convert(RFX_FLOAT64, to, rfx_of_f64(d));
        d = d < 0 ? d - 0.5 : d + 0.5;
        return rfx_convert(RFX_FLOAT64, to, rfx_of_f64((double)(int64_t)(d > -9.2e18 && d < 9.2e18 ? d : 0)));
    }
    uint64_t u = rfx_convert(from, RFX_NUMBER64, v);   /* in 64 bits, wrapping where it overflows (the
                                                        * planner's checked nodes fail there first) */
    if (ts > fs)
        return rfx_convert(RFX_NUMBER64, to, u * (uint64_t)rfx_pow10(ts - fs));
    int64_t i = (int64_t)u, q = rfx_pow10(fs - ts), d = i / q, r = i % q;   /* rounded half away from zero */
    d += r > 0 && 2 * r >= q ? 1 : r < 0 && -2 * r >= q ? -1 : 0;
    return rfx_convert(RFX_NUMBER64, to, (uint64_t)d);
}

/* A decimal's exact arithmetic (op RFX_ADD, RFX_SUB or RFX_MUL) in 64 bits: *over set where
 * the result leaves them. */
RFX_HD int64_t rfx_checked64(int op, int64_t a, int64_t b, bool *over)
{
    __int128 r = op == RFX_ADD ? (__int128)a + b : op == RFX_SUB ? (__int128)a - b : (__int128)a * b;
    *over |= r < (__int128)INT64_MIN || r > (__int128)INT64_MAX;
    return (int64_t)r;
}

/* rfx_convert_scaled, where `checked` (a decimal's conversion the planner checks): *over set
 * where an integer's places grown to the scale ts leave 64 bits. */
RFX_HD uint64_t rfx_convert_checked(int from, int fs, int to, int ts, bool checked, uint64_t v, bool *over)
{
    if (checked && ts > fs && to == RFX_NUMBER64 && from != RFX_FLOAT && from != RFX_FLOAT64)
        rfx_checked64(RFX_MUL, (int64_t)rfx_convert(from, RFX_NUMBER64, v), rfx_pow10(ts - fs), over);
    return rfx_convert_scaled(from, fs, to, ts, v);
}

/* Decimals of different scales compared by value, in 128 bits (no rescaling overflows):
 * a * 10^k op b for k >= 0, a op b * 10^-k for k < 0. */
RFX_HD bool rfx_compare_scaled(int op, int64_t a, int64_t b, int k)
{
    __int128 x = a, y = b;
    if (k > 0)
        x *= rfx_pow10(k);
    else
        y *= rfx_pow10(-k);
    int c = x < y ? -1 : x > y;
    switch (op) {
    case RFX_LT: return c < 0;
    case RFX_LE: return c <= 0;
    case RFX_GT: return c > 0;
    case RFX_GE: return c >= 0;
    case RFX_EQ: return c == 0;
    default: return c != 0;
    }
}

/* ---- a 64-bit aggregate over a group, in runs ----
 * A group's values fold in runs of RFX_AGG_RUN rows from its first: each run folded in
 * order (rfx_agg_run64), the runs' folds joined in order (rfx_agg_join64), the result made
 * once (rfx_agg_end64). Integer sums are exact (128 bits) and fail only where the group's
 * total leaves the kind, so their order is free, as min's and max's of integers are; float64
 * sums, means, min and max take this order on both backends, which lets the device fold a
 * large group's runs at once and still agree bit for bit (a group of up to RFX_AGG_RUN
 * values folds as one sequence). A run's fold travels as 128 bits: an integer sum whole,
 * any other in the low 64. */
#define RFX_AGG_RUN 1024

RFX_HD uint64_t rfx_agg_value64(const uint32_t *b, size_t ba, int col, size_t q)
{
    return (uint64_t)b[q * ba + (size_t)col] << 32 | b[q * ba + (size_t)col + 1];
}

/* One step of a float64 sum (a mean sums) or of a 64-bit min or max: acc combined with v
 * (integer sums are exact: rfx_agg_add64). */
RFX_HD uint64_t rfx_agg_step64(int fn, int prim, uint64_t acc, uint64_t v)
{
    if (prim == RFX_FLOAT64) {
        double x = rfx_as_f64(acc), y = rfx_as_f64(v);
        return rfx_of_f64(fn == RFX_AGG_SUM || fn == RFX_AGG_MEAN ? x + y
                          : fn == RFX_AGG_MIN                      ? (y < x ? y : x)
                                                                   : (y > x ? y : x));
    }
    bool less = prim == RFX_NUMBER64 ? (int64_t)v < (int64_t)acc : v < acc;
    if (fn == RFX_AGG_MIN)
        return less ? v : acc;
    return (!less && v != acc) ? v : acc;
}

/* Whether fn over prim is an integer sum (exact, 128 bits). */
RFX_HD bool rfx_agg_exact64(int fn, int prim)
{
    return (fn == RFX_AGG_SUM || fn == RFX_AGG_MEAN) && prim != RFX_FLOAT64;
}

/* One value into a run's fold (first: the run's first value). */
RFX_HD __int128 rfx_agg_add64(int fn, int prim, __int128 acc, uint64_t v, bool first)
{
    if (rfx_agg_exact64(fn, prim))
        return acc + (prim == RFX_NUMBER64 ? (__int128)(int64_t)v : (__int128)v);
    if (first && fn != RFX_AGG_SUM && fn != RFX_AGG_MEAN)
        return (__int128)v;
    return (__int128)rfx_agg_step64(fn, prim, (uint64_t)acc, v);
}

/* The fold of rows [lo, hi) of b (ba words a row, the value's words at col, col + 1). */
RFX_HD __int128 rfx_agg_run64(int fn, int prim, const uint32_t *b, size_t ba, int col, size_t lo, size_t hi)
{
    __int128 acc = 0;
    for (size_t q = lo; q < hi; q++)
        acc = rfx_agg_add64(fn, prim, acc, rfx_agg_value64(b, ba, col, q), q == lo);
    return acc;
}

/* The runs' folds joined in order (first: acc holds nothing yet). */
RFX_HD __int128 rfx_agg_join64(int fn, int prim, __int128 acc, __int128 run, bool first)
{
    if (first)
        return run;
    if (rfx_agg_exact64(fn, prim))
        return acc + run;
    return (__int128)rfx_agg_step64(fn, prim, (uint64_t)acc, (uint64_t)run);
}

/* The aggregate's value from its joined folds over n values; *overflow where an integer
 * sum leaves its kind. */
RFX_HD uint64_t rfx_agg_end64(int fn, int prim, __int128 acc, uint64_t n, bool *overflow)
{
    if (!rfx_agg_exact64(fn, prim))   /* a float64 mean divides its sum; min, max and sums as they are */
        return fn == RFX_AGG_MEAN ? rfx_of_f64(rfx_as_f64((uint64_t)acc) / (double)n) : (uint64_t)acc;
    if (fn == RFX_AGG_MEAN)
        return rfx_of_f64((double)acc / (double)n);
    if (prim == RFX_NUMBER64 ? acc < (__int128)INT64_MIN || acc > (__int128)INT64_MAX
                             : acc < 0 || acc > (__int128)UINT64_MAX)
        *overflow = true;
    return (uint64_t)acc;
}

/* The aggregate of b's rows [l, h) (h > l, or a sum: 0 over none), run by run. */
RFX_HD uint64_t rfx_agg_fold64(int fn, int prim, const uint32_t *b, size_t ba, int col, size_t l, size_t h,
                               bool *overflow)
{
    __int128 acc = 0;
    for (size_t lo = l; lo < h; lo += RFX_AGG_RUN) {
        size_t hi = h - lo < RFX_AGG_RUN ? h : lo + RFX_AGG_RUN;
        acc = rfx_agg_join64(fn, prim, acc, rfx_agg_run64(fn, prim, b, ba, col, lo, hi), lo == l);
    }
    return rfx_agg_end64(fn, prim, acc, h - l, overflow);
}

/* ---- dates: days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's
 * days_from_civil and civil_from_days) ------------------------------------------------ */
RFX_HD int64_t rfx_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

RFX_HD void rfx_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const unsigned doe = (unsigned)(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

RFX_HD unsigned rfx_month_days(int64_t y, unsigned m)
{
    bool leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    return m == 2 ? 28u + leap : m == 4 || m == 6 || m == 9 || m == 11 ? 30u : 31u;
}

/* A calendar function (rfx_cal_op) of day `day` (and months n): a number, or a date. */
RFX_HD uint32_t rfx_calendar(int op, uint32_t day, uint32_t n)
{
    int64_t y;
    unsigned m, d;
    rfx_civil_from_days((int32_t)day, &y, &m, &d);
    switch (op) {
    case RFX_CAL_YEAR: return (uint32_t)(int32_t)y;
    case RFX_CAL_MONTH: return m;
    case RFX_CAL_DAY: return d;
    default: {   /* RFX_CAL_ADD_MONTHS */
        int64_t t = y * 12 + (int64_t)m - 1 + (int32_t)n;
        int64_t ny = t >= 0 ? t / 12 : (t - 11) / 12;
        unsigned nm = (unsigned)(t - ny * 12) + 1, dim = rfx_month_days(ny, nm);
        return (uint32_t)rfx_days_from_civil(ny, nm, d < dim ? d : dim);
    }
    }
}

#endif
