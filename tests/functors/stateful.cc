// stateful.cc: stateful user-defined functors for tests/cases/functors_*, written as a
// Soufflé user writes them: against the symbol and record tables' interface of Soufflé's
// headers (souffle/SymbolTable.h, souffle/RecordTable.h), declared here with the same
// virtual functions in the same order, so that this library stands for one built with
// Soufflé's own headers.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <utility>

namespace souffle {
using RamDomain = int32_t;

class SymbolTable {
public:
    struct Iterator {
        void *impl;
    };
    virtual ~SymbolTable() {}
    virtual Iterator begin() const = 0;
    virtual Iterator end() const = 0;
    virtual bool weakContains(const std::string &symbol) const = 0;
    virtual RamDomain encode(const std::string &symbol) = 0;
    virtual const std::string &decode(const RamDomain index) const = 0;
    virtual RamDomain unsafeEncode(const std::string &symbol) = 0;
    virtual const std::string &unsafeDecode(const RamDomain index) const = 0;
    virtual std::pair<RamDomain, bool> findOrInsert(const std::string &symbol) = 0;
};

class RecordTable {
public:
    virtual ~RecordTable() {}
    virtual void setNumLanes(const std::size_t lanes) = 0;
    virtual RamDomain pack(const RamDomain *tuple, const std::size_t arity) = 0;
    virtual RamDomain pack(const std::initializer_list<RamDomain> &list) = 0;
    virtual const RamDomain *unpack(const RamDomain ref, const std::size_t arity) const = 0;
    virtual void enumerate(const std::function<void(const RamDomain *, std::size_t, RamDomain)> &f) const = 0;
};
}  // namespace souffle

using souffle::RamDomain;

extern "C" {

// symbols arrive as ids: decoded, joined, encoded
RamDomain join_symbols(souffle::SymbolTable *symbols, souffle::RecordTable *, RamDomain a, RamDomain b)
{
    return symbols->encode(symbols->decode(a) + "+" + symbols->decode(b));
}

// whether a text is a symbol the program holds already
RamDomain known(souffle::SymbolTable *symbols, souffle::RecordTable *, RamDomain a)
{
    return symbols->weakContains(symbols->decode(a) + "?") ? 1 : 0;
}

// records: made, and read back
RamDomain make_pair(souffle::SymbolTable *, souffle::RecordTable *records, RamDomain a)
{
    RamDomain t[2] = {a, a * 10};
    return records->pack(t, 2);
}

RamDomain pair_sum(souffle::SymbolTable *, souffle::RecordTable *records, RamDomain r)
{
    const RamDomain *f = records->unpack(r, 2);
    return f ? f[0] + f[1] : -1;
}

// the interval lattice (tests/cases/lattice_intervals): [lo, hi] records, nil or lo > hi the
// empty one; the join spans both, the meet is their overlap
static RamDomain interval(souffle::RecordTable *records, RamDomain lo, RamDomain hi)
{
    return records->pack({lo, hi});
}

RamDomain span(souffle::SymbolTable *, souffle::RecordTable *records, RamDomain a, RamDomain b)
{
    const RamDomain *x = a ? records->unpack(a, 2) : nullptr, *y = b ? records->unpack(b, 2) : nullptr;
    if (!x || x[0] > x[1])
        return b;
    if (!y || y[0] > y[1])
        return a;
    return interval(records, x[0] < y[0] ? x[0] : y[0], x[1] > y[1] ? x[1] : y[1]);
}

RamDomain overlap(souffle::SymbolTable *, souffle::RecordTable *records, RamDomain a, RamDomain b)
{
    const RamDomain *x = a ? records->unpack(a, 2) : nullptr, *y = b ? records->unpack(b, 2) : nullptr;
    if (!x || !y)
        return 0;
    RamDomain lo = x[0] > y[0] ? x[0] : y[0], hi = x[1] < y[1] ? x[1] : y[1];
    return lo > hi ? 0 : interval(records, lo, hi);
}

// the sign lattice (tests/cases/lattice_enumeration): an enumeration's values are its
// branches' numbers, by name: Bottom 0, Neg 1, Pos 2, Top 3, Zero 4
enum Sign { SIGN_BOTTOM, SIGN_NEG, SIGN_POS, SIGN_TOP, SIGN_ZERO };

RamDomain sign_lub(souffle::SymbolTable *, souffle::RecordTable *, RamDomain a, RamDomain b)
{
    return a == SIGN_BOTTOM ? b : b == SIGN_BOTTOM || a == b ? a : SIGN_TOP;
}

RamDomain sign_glb(souffle::SymbolTable *, souffle::RecordTable *, RamDomain a, RamDomain b)
{
    return a == SIGN_TOP ? b : b == SIGN_TOP || a == b ? a : SIGN_BOTTOM;
}

// ADT values as Soufflé lays them out (tests/cases/adt_functor_layout), branches numbered by
// name (Circle 0, Dot 1, Rect 2): [branch, field] for one field, else [branch, [fields]]
// ([branch, 1] for none: record 1 is the empty record)
RamDomain shape_area(souffle::SymbolTable *, souffle::RecordTable *records, RamDomain s)
{
    const RamDomain *v = records->unpack(s, 2);
    if (v[0] == 0)
        return 3 * v[1] * v[1];
    if (v[0] == 1)
        return v[1] == 1 ? 0 : -1;
    const RamDomain *f = records->unpack(v[1], 2);
    return f[0] * f[1];
}

RamDomain make_rect(souffle::SymbolTable *, souffle::RecordTable *records, RamDomain w, RamDomain h)
{
    return records->pack({2, records->pack({w, h})});
}

RamDomain make_dot(souffle::SymbolTable *, souffle::RecordTable *records)
{
    return records->pack({1, 1});
}

// a number and a symbol, as a stateful functor sees them
RamDomain tag(souffle::SymbolTable *symbols, souffle::RecordTable *records, RamDomain n, RamDomain s)
{
    return records->pack({n, symbols->encode("#" + symbols->decode(s))});
}
}
