// regex_shim.cc: C-callable std::regex, the regular expressions of Soufflé's match functor
// (ECMAScript grammar, the whole string matched). No exception leaves this file.
#include <new>
#include <regex>
#include <string>

extern "C" {
#include "base.h"
}

struct rfx_regex {
    std::regex re;
};

extern "C" rfx_regex *rfx_regex_compile(const char *pattern, size_t n)
{
    try {
        return new rfx_regex{std::regex(std::string(pattern, n))};
    } catch (...) {   // std::regex_error (an invalid pattern) or std::bad_alloc
        return nullptr;
    }
}

extern "C" bool rfx_regex_full_match(const rfx_regex *re, const char *s, size_t n)
{
    try {
        return std::regex_match(s, s + n, re->re);
    } catch (...) {   // a pattern too complex for the input (error_complexity, error_stack)
        return false;
    }
}

extern "C" void rfx_regex_free(rfx_regex *re)
{
    delete re;
}
