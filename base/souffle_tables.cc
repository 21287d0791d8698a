// souffle_tables.cc: the symbol and record tables a stateful user-defined functor is given,
// with the interface Soufflé's headers declare (souffle/SymbolTable.h, RecordTable.h): a
// functor built against them calls these objects' virtual functions by their places in
// the table of virtual functions, so the classes below declare the same virtual functions
// in the same order (Itanium C++ ABI). They forward to rfx's own tables through
// rfx_table_ops. No exception leaves this file.
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

namespace {

using RamDomain = int32_t;   // Soufflé's default build (RAM_DOMAIN_SIZE 32), as rfx's values

// The iterators of a symbol table are never handed out: a functor that asks for one stops
// the run (begin/end below), so only their type's size matters here.
struct NoIterator {
    void *impl;
};

class SymbolTable {
public:
    explicit SymbolTable(const rfx_table_ops *ops) : ops(ops) {}
    virtual ~SymbolTable() {}
    virtual NoIterator begin() const { std::abort(); }
    virtual NoIterator end() const { std::abort(); }
    virtual bool weakContains(const std::string &symbol) const
    {
        return ops->find(ops->ctx, symbol.data(), symbol.size()) != UINT32_MAX;
    }
    virtual RamDomain encode(const std::string &symbol)
    {
        return (RamDomain)ops->encode(ops->ctx, symbol.data(), symbol.size());
    }
    virtual const std::string &decode(const RamDomain index) const
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
    virtual RamDomain unsafeEncode(const std::string &symbol) { return encode(symbol); }
    virtual const std::string &unsafeDecode(const RamDomain index) const { return decode(index); }
    virtual std::pair<RamDomain, bool> findOrInsert(const std::string &symbol)
    {
        bool had = weakContains(symbol);
        return {encode(symbol), !had};
    }

private:
    const rfx_table_ops *ops;
    mutable std::unordered_map<uint32_t, std::string> texts;   // decode's answers live as long as the table
    const std::string empty;
};

class RecordTable {
public:
    explicit RecordTable(const rfx_table_ops *ops) : ops(ops) {}
    virtual ~RecordTable() {}
    virtual void setNumLanes(const std::size_t) {}
    virtual RamDomain pack(const RamDomain *tuple, const std::size_t arity)
    {
        return (RamDomain)ops->pack(ops->ctx, (const uint32_t *)tuple, arity);
    }
    virtual RamDomain pack(const std::initializer_list<RamDomain> &list)
    {
        return pack(list.begin(), list.size());
    }
    virtual const RamDomain *unpack(const RamDomain ref, const std::size_t arity) const
    {
        return (const RamDomain *)ops->unpack(ops->ctx, (uint32_t)ref, arity);
    }
    virtual void enumerate(const std::function<void(const RamDomain *, std::size_t, RamDomain)> &) const
    {
        std::abort();   // no functor of Soufflé's own needs it; see begin() above
    }

private:
    const rfx_table_ops *ops;
};

}  // namespace

struct rfx_souffle_tables {
    rfx_table_ops ops;
    SymbolTable symbols;
    RecordTable records;
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
    return &t->symbols;
}

extern "C" void *rfx_souffle_record_table(rfx_souffle_tables *t)
{
    return &t->records;
}
