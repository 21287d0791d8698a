/* rx_kinds.h: the value kinds and the operators of scalar expressions, as numbers. Part of
 * base.h, apart because it includes nothing: the weaver compiles it with rx_ops.h into the
 * kernels it generates (NVRTC), so that generated code and the interpreters share one
 * definition of each kind and operator. */
#ifndef RFX_RX_KINDS_H
#define RFX_RX_KINDS_H

/* The primitive kinds. Storage is 32-bit words: a value of a 64-bit kind takes two columns,
 * its high word (a column of the kind itself) and then its low word (RFX_WORD), so that
 * joins, sorts and set operations over words are those over the values. Expressions
 * compute 64-bit kinds whole (RFX_RX_PAIR reads the two words, RFX_RX_HALF splits). */
typedef enum rfx_prim {
    RFX_NUMBER,                /* signed 32-bit, wrapping arithmetic */
    RFX_UNSIGNED,              /* unsigned 32-bit */
    RFX_FLOAT,                 /* IEEE binary32, stored as its bits */
    RFX_SYMBOL,                /* id into the symbol table */
    RFX_NUMBER64,              /* signed 64-bit, wrapping arithmetic */
    RFX_UNSIGNED64,            /* unsigned 64-bit */
    RFX_FLOAT64,               /* IEEE binary64, stored as its bits */
    RFX_WORD,                  /* a 32-bit half of a 64-bit value (the low word in storage) */
    RFX_DATE,                  /* a calendar day: days since 1970-01-01 (proleptic Gregorian), 32-bit
                                * signed; the planner computes with it as a number */
    RFX_DECIMAL,               /* a fixed-point number: a 64-bit signed count of 10^-scale, the scale its
                                * type's (decimal(P, S)); the planner computes with it as a number64 */
    RFX_NPRIMS
} rfx_prim;
#define RFX_PRIM_WIDE(p) (((p) >= RFX_NUMBER64 && (p) <= RFX_FLOAT64) || (p) == RFX_DECIMAL)
/* The 32-bit kind of a 64-bit one (number for number64, ...), and back. */
#define RFX_PRIM_NARROW(p) (RFX_PRIM_WIDE(p) ? (rfx_prim)((p) - RFX_NUMBER64) : (p))
#define RFX_PRIM_WIDEN(p) ((p) <= RFX_FLOAT ? (rfx_prim)((p) + RFX_NUMBER64) : (p))


/* Soufflé's binary operators: arithmetic, then (numbers and unsigned only) bitwise, shifts,
 * logical (0 or 1), then power, then the two-argument functors min(a, b) and max(a, b). */
typedef enum rfx_binop {
    RFX_ADD, RFX_SUB, RFX_MUL, RFX_DIV, RFX_MOD,
    RFX_BAND, RFX_BOR, RFX_BXOR, RFX_BSHL, RFX_BSHR, RFX_BSHRU, RFX_LAND, RFX_LOR, RFX_LXOR, RFX_POW,
    RFX_MIN_OF, RFX_MAX_OF
} rfx_binop;
/* Whether op is defined on numbers and unsigned only (not floats; ^ is on floats too). */
#define RFX_BINOP_INTEGRAL(op) ((op) >= RFX_BAND && (op) < RFX_POW)
/* Whether op is written as a function, min(a, b), rather than between its operands. */
#define RFX_BINOP_CALL(op) ((op) == RFX_MIN_OF || (op) == RFX_MAX_OF)
/* Calendar functions of a date (days since 1970-01-01): its year, month (1-12) and day of
 * the month (1-31), and the date n months later (the day kept, or the month's last). */
typedef enum rfx_cal_op { RFX_CAL_YEAR, RFX_CAL_MONTH, RFX_CAL_DAY, RFX_CAL_ADD_MONTHS } rfx_cal_op;
typedef enum rfx_aggfn { RFX_AGG_COUNT, RFX_AGG_SUM, RFX_AGG_MIN, RFX_AGG_MAX, RFX_AGG_MEAN } rfx_aggfn;
typedef enum rfx_cmpop { RFX_LT, RFX_LE, RFX_GT, RFX_GE, RFX_EQ, RFX_NE } rfx_cmpop;

#endif
