// souffle_tables.cc: the symbol and record tables a stateful user-defined functor is given,
// with the interface Soufflé's headers declare (souffle/SymbolTable.h, RecordTable.h): a
// functor built against them calls these objects' virtual functions by their places in
// the table of virtual functions, so the interfaces below declare the same virtual
// functions in the same order (Itanium C++ ABI). The implementations forward to rfx's own
// tables through rfx_table_ops. No exception leaves this file.
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>

extern "C" {
#include "base.h"
}

namespace souffle {

using RamDomain = int32_t;   // Soufflé's default build (RAM_DOMAIN_SIZE 32), as rfx's values

// The interfaces as Soufflé declares them (names included: run-time type checks, such as
// UBSan's, compare the classes by name). A symbol table's iterators are never handed out
// (begin and end stop the run), so only their type's size matters here.
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

namespace {

using souffle::RamDomain;

class Symbols final : public souffle::SymbolTable {
public:
    explicit Symbols(const rfx_table_ops *ops) : ops(ops) {}
    Iterator begin() const override { std::abort(); }
    Iterator end() const override { std::abort(); }
    bool weakContains(const std::string &symbol) const override
    {
        return ops->find(ops->ctx, symbol.data(), symbol.size()) != UINT32_MAX;
    }
    RamDomain encode(const std::string &symbol) override
    {
        return (RamDomain)ops->encode(ops->ctx, symbol.data(), symbol.size());
    }
    const std::string &decode(const RamDomain index) const override
    {
        auto at = texts.find((uint32_t)index);
        if (at != texts.end())
            return at->second;
        size_t n = 0;
        const char *s = ops->decode(ops->ctx, (uint32_t)index, &n);
        try {
            return texts.emplace((uint32_t)index, std::string(s ? s : "", s ? n : 0)).first->second;
        } catch (...) {
            return empty;
        }
    }
    RamDomain unsafeEncode(const std::string &symbol) override { return encode(symbol); }
    const std::string &unsafeDecode(const RamDomain index) const override { return decode(index); }
    std::pair<RamDomain, bool> findOrInsert(const std::string &symbol) override
    {
        bool had = weakContains(symbol);
        return {encode(symbol), !had};
    }

private:
    const rfx_table_ops *ops;
    mutable std::unordered_map<uint32_t, std::string> texts;   // decode's answers live as long as the table
    const std::string empty;
};

class Records final : public souffle::RecordTable {
public:
    explicit Records(const rfx_table_ops *ops) : ops(ops) {}
    void setNumLanes(const std::size_t) override {}
    RamDomain pack(const RamDomain *tuple, const std::size_t arity) override
    {
        return (RamDomain)ops->pack(ops->ctx, (const uint32_t *)tuple, arity);
    }
    RamDomain pack(const std::initializer_list<RamDomain> &list) override { return pack(list.begin(), list.size()); }
    const RamDomain *unpack(const RamDomain ref, const std::size_t arity) const override
    {
        return (const RamDomain *)ops->unpack(ops->ctx, (uint32_t)ref, arity);
    }
    void enumerate(const std::function<void(const RamDomain *, std::size_t, RamDomain)> &) const override
    {
        std::abort();   // no functor of Soufflé's own needs it; see begin() above
    }

private:
    const rfx_table_ops *ops;
};

}  // namespace

struct rfx_souffle_tables {
    rfx_table_ops ops;
    Symbols symbols;
    Records records;
    explicit rfx_souffle_tables(const rfx_table_ops &o) : ops(o), symbols(&ops), records(&ops) {}
};

extern "C" rfx_souffle_tables *rfx_souffle_tables_new(const rfx_table_ops *ops)
{
    try {
        return new rfx_souffle_tables(*ops);
    } catch (...) {
        return nullptr;
    }
}

extern "C" void rfx_souffle_tables_free(rfx_souffle_tables *t)
{
    delete t;
}

extern "C" void *rfx_souffle_symbol_table(rfx_souffle_tables *t)
{
    return static_cast<souffle::SymbolTable *>(&t->symbols);
}

extern "C" void *rfx_souffle_record_table(rfx_souffle_tables *t)
{
    return static_cast<souffle::RecordTable *>(&t->records);
}
