#!/usr/bin/env python3
"""diff_souffle.py: random Datalog programs and facts, each run by rfx and by Soufflé 2.5 (the
oracle); every output relation must hold the same tuples, and `.printsize` the same counts.

The generator covers the language rfx accepts: number, unsigned, float and symbol columns;
several strata, some of them groups of mutually recursive relations (copy rules, bounded
arithmetic); negation of earlier strata; comparisons; arithmetic (+ - * / % with nonzero
constant divisors, ^ with small exponents, bitwise and logical operators, min/max functors) in heads, bindings and
atom arguments; aggregates (count, sum, min, max) with group keys, constants, aggregates as
head and body atom arguments, and bound results (tests); disjunctions; nullary relations; empty inputs;
records and ADTs; components; subsumptive clauses (a relation's tuples dominated by others of
the same key, in and out of recursions); eqrel relations.
Floats are dyadic rationals so that sums are exact in any order.

A program Soufflé rejects is the generator's fault and is not counted; one rfx rejects while
Soufflé runs it is a refusal (a coverage gap); different outputs are a wrong answer; one
that rfx does not finish in a minute is kept and reported as slow, and one where rfx takes over
a second (--slower-min) and over ten times Soufflé's time as slower: both fail nothing (speed
findings; a GPU backend's start alone may take a second). Soufflé's
eqrel misses implied pairs in some recursions (souffle-lang/souffle#2052): where outputs
differ in a program with an eqrel relation, Soufflé runs it again with each eqrel spelt as its
closure rules, and if that agrees with rfx the case is kept and reported, but fails nothing.
Likewise Soufflé's materialisation of aggregate bodies collapses `_`'s tuples in a count, sum
or mean whose body reads a variable bound outside by an expression (souffle-lang/souffle#2552):
where outputs differ in a program with such an aggregate, Soufflé runs it again without that
rewrite (--disable-transformers=MaterializeAggregationQueriesTransformer), and if that agrees
with rfx the case is kept and reported as aggregate, failing nothing.

Usage: diff_souffle.py RFX COUNT [--souffle PATH] [--seed N] [--work DIR] [--budget S]
                       [--jobs N] [--rfx-opts=OPTIONS] [--slower-min S]
(options that begin with a dash go after `=`: `--rfx-opts=--backend=cuda`)
Without Soufflé (default ../shared/tools/souffle/bin/souffle beside the checkout) it prints
one line saying so and exits 0. Failing cases are kept in DIR/fail-N; exit 1 if any.
"""
import argparse
import concurrent.futures
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SOUFFLE = os.path.join(HERE, "..", "..", "shared", "tools", "souffle", "bin", "souffle")

TYPES = ["number", "number", "number", "unsigned", "float", "symbol"]
FLOATS = ["0.5", "-1.25", "2.0", "3.75", "-0.5", "0.0", "8.0", "-6.5", "1.125", "100.0"]
SYMBOLS = ["a", "b", "zeta", "Alpha", "x y", "0", "-1", "b2", "a_b", "", "hello world"]


def const(rng, ty):
    if ty == "number":
        return str(rng.randint(-3, 12))
    if ty == "unsigned":
        return str(rng.randint(0, 15))
    if ty == "float":
        return rng.choice(FLOATS)
    return '"%s"' % rng.choice(SYMBOLS)


def fact_value(rng, ty):
    if ty == "number":
        return str(rng.choice([rng.randint(-3, 12), rng.randint(-3, 12), rng.randint(-1000, 1000)]))
    if ty == "unsigned":
        return str(rng.choice([rng.randint(0, 15), rng.randint(0, 15), 4294967295, 2147483648]))
    if ty == "float":
        return rng.choice(FLOATS)
    return rng.choice([s for s in SYMBOLS if s])   # Soufflé reads an empty field as an error


class Rel:
    def __init__(self, name, types, edb=False):
        self.name, self.types, self.edb, self.eqrel = name, types, edb, False

    def decl(self):
        return ".decl %s(%s)%s" % (self.name, ", ".join("c%d: %s" % (i, t) for i, t in enumerate(self.types)),
                                   " eqrel" if self.eqrel else "")


class Body:
    """Variables bound so far (name -> type) and the literals of one conjunction."""

    def __init__(self, rng):
        self.rng, self.vars, self.lits, self.n = rng, {}, [], 0

    def fresh(self, ty):
        self.n += 1
        v = "v%d" % self.n
        self.vars[v] = ty
        return v

    def of_type(self, ty):
        return [v for v, t in self.vars.items() if t == ty]

    def atom(self, rel, link, allow_anon=True, allow_expr=True):
        rng, args, linked = self.rng, [], False
        for ty in rel.types:
            same = self.of_type(ty)
            p = rng.random()
            if same and (p < 0.45 or (link and not linked)):
                args.append(rng.choice(same))
                linked = True
            elif p < 0.53:
                args.append(const(rng, ty))
            elif p < 0.58 and allow_anon:
                args.append("_")
            elif p < 0.61 and allow_expr and same and ty in ("number", "unsigned"):
                args.append("%s + 1" % rng.choice(same))   # an expression argument: a test
            else:
                args.append(self.fresh(ty))
        return "%s(%s)" % (rel.name, ", ".join(args))


def functor(rng, body, ty, depth):
    """A functor call of type ty over bound variables (string functors, conversions, as), or
    None where the body has nothing to call one on. Never to_number of an arbitrary symbol:
    both engines stop on a symbol that is not a number."""
    syms, nums, uns, flts = (body.of_type(t) for t in ("symbol", "number", "unsigned", "float"))
    forms = []
    if ty == "symbol":
        if syms:
            forms += ["cat", "substr"]
        if nums or uns:
            forms.append("to_string")
    elif ty == "number":
        if syms:
            forms.append("strlen")
        if nums:
            forms.append("roundtrip")
        if uns:
            forms += ["as_u", "to_number_u"]
        if flts:
            forms.append("to_number_f")
    elif ty == "unsigned":
        if nums:
            forms += ["to_unsigned", "as_n"]
    elif ty == "float":
        if nums:
            forms.append("to_float")
        if uns:
            forms.append("to_float_u")
    if not forms:
        return None
    f = rng.choice(forms)
    if f == "cat":
        parts = [rng.choice(syms + ['"-"', '"x"', '""']) for _ in range(rng.choice([2, 2, 3]))]
        return "cat(%s)" % ", ".join(parts)
    if f == "substr":
        return "substr(%s, %d, %d)" % (rng.choice(syms), rng.randint(-1, 4), rng.randint(-1, 3))
    if f == "roundtrip":
        return "to_number(to_string(%s))" % arith(rng, body, "number", depth + 1)
    form, pool = {"to_string": ("to_string(%s)", nums + uns), "strlen": ("strlen(%s)", syms),
                  "as_u": ("as(%s, number)", uns), "to_number_u": ("to_number(%s)", uns),
                  "to_number_f": ("to_number(%s)", flts), "to_unsigned": ("to_unsigned(%s)", nums),
                  "as_n": ("as(%s, unsigned)", nums), "to_float": ("to_float(%s)", nums),
                  "to_float_u": ("to_float(%s)", uns)}[f]
    return form % rng.choice(pool)


def arith(rng, body, ty, depth=0):
    """An expression of type ty over bound variables (bound ones exist for ty)."""
    vs = body.of_type(ty)
    if depth <= 1 and rng.random() < (0.6 if ty == "symbol" else 0.15):
        f = functor(rng, body, ty, depth)
        if f:
            return f
    if not vs or ty == "symbol":
        return rng.choice(vs) if vs else const(rng, ty)
    if depth > 1 or rng.random() < 0.35:
        return rng.choice(vs) if rng.random() < 0.8 else const(rng, ty)
    a = arith(rng, body, ty, depth + 1)
    if ty == "float":
        op = rng.choice(["+", "-", "*", "max", "min", "^"])
    else:
        op = rng.choice(["+", "-", "*", "+", "-", "/", "%", "band", "bor", "bxor", "bshl", "bshr", "land", "lor",
                         "max", "min", "^"])
    if op == "^":   # small exponents: exact for the dyadic floats too
        return "(%s ^ %s)" % (a, rng.choice(["2.0", "3.0"]) if ty == "float" else rng.randint(0, 3))
    if op in ("/", "%"):
        return "(%s %s %d)" % (a, op, rng.randint(1, 7))
    if op == "bshl" or op == "bshr":
        return "(%s %s %d)" % (a, op, rng.randint(0, 5))
    b = arith(rng, body, ty, depth + 1)
    if op in ("max", "min"):
        if rng.random() < 0.3:
            return "%s(%s, %s, %s)" % (op, a, b, arith(rng, body, ty, depth + 1))
        return "%s(%s, %s)" % (op, a, b)
    if ty != "float" and rng.random() < 0.1:
        return "(%s %s)" % (rng.choice(["bnot", "lnot"]), a)
    return "(%s %s %s)" % (a, op, b)


def bound_atom(rng, body, rel):
    """An atom over rel whose arguments are the body's bound variables or `_` (to negate)."""
    args = []
    for ty in rel.types:
        same = body.of_type(ty)
        args.append(rng.choice(same) if same and rng.random() < 0.8 else "_")
    return "%s(%s)" % (rel.name, ", ".join(args))


def aggregate(rng, body, avail):
    """An aggregate over an available relation; its group keys are bound variables."""
    rel = rng.choice(avail)
    inner = Body(rng)
    inner.n = 100 + body.n
    args = []
    for ty in rel.types:
        same = body.of_type(ty)
        p = rng.random()
        if same and p < 0.3:
            args.append(rng.choice(same))        # injected: a group key
        elif p < 0.4:
            args.append(const(rng, ty))
        elif p < 0.55:
            args.append("_")
        else:
            args.append(inner.fresh(ty))
    lits = ["%s(%s)" % (rel.name, ", ".join(args))]
    body.n = inner.n
    nums = [v for v, t in inner.vars.items() if t in ("number", "unsigned", "float")]
    if nums and rng.random() < 0.3:
        v = rng.choice(nums)
        lits.append("%s %s %s" % (v, rng.choice(["<", ">", "!="]), const(rng, inner.vars[v])))
    if nums and rng.random() < 0.1:   # a nested aggregate over the same relation
        v = rng.choice(nums)
        col = [i for i, t in enumerate(rel.types) if t == inner.vars[v]][0]
        nested = ["_"] * len(rel.types)
        nested[col] = "w%d" % inner.n
        lits.append("%s %s %s w%d : { %s(%s) }" % (v, rng.choice(["<", ">=", "="]), rng.choice(["min", "max"]),
                                                   inner.n, rel.name, ", ".join(nested)))
    if nums and rng.random() < 0.2:   # an outer variable in the body: injected, each tuple's value
        v = rng.choice(nums)
        outer = body.of_type(inner.vars[v])
        if outer:
            lits.append("%s %s %s" % (v, rng.choice(["<", ">=", "!="]), rng.choice(outer)))
    if inner.vars and rng.random() < 0.15:   # a negated atom over the body's variables
        lits.append("!" + bound_atom(rng, inner, rng.choice(avail)))
    fn = rng.choice(["count", "count", "sum", "min", "max", "mean"])
    if fn == "count" or not nums:
        return "count : { %s }" % ", ".join(lits), "number"
    v = rng.choice(nums)
    if fn == "mean":   # Soufflé 2.5 takes floats only
        flts = [x for x in nums if inner.vars[x] == "float"]
        if not flts:
            return "count : { %s }" % ", ".join(lits), "number"
        v = rng.choice(flts)
    target = v
    if rng.random() < 0.2 and inner.vars[v] != "float":
        target = "%s * 2" % v
    return "%s %s : { %s }" % (fn, target, ", ".join(lits)), inner.vars[v]


def gen_rule(rng, head, avail, group, negs, recursive):
    """One rule for head: atoms over avail (and, when recursive, a member of its group first)."""
    body = Body(rng)
    nat = rng.randint(1, 3)
    for i in range(nat):
        rel = rng.choice(group) if recursive and (i == 0 or rng.random() < 0.3) else rng.choice(avail)
        body.lits.append(body.atom(rel, i > 0 and rng.random() < 0.85, allow_expr=not recursive))
    if not body.vars and head.types:
        return None
    if rng.random() < 0.35:   # a comparison
        v = rng.choice(list(body.vars)) if body.vars else None
        if v:
            ty = body.vars[v]
            ops = ["<", "<=", ">", ">=", "=", "!="]   # symbols compare by text, as in Soufflé
            rhs = rng.choice(body.of_type(ty) + [const(rng, ty)])
            body.lits.append("%s %s %s" % (v, rng.choice(ops), rhs))
    syms = body.of_type("symbol")
    if syms and rng.random() < 0.1:   # a string constraint
        pat = rng.choice(['"a.*"', '".*b.*"', '"[0-9]+"', '"-?[0-9]"', '"(a|b)+"', '""'])
        lit = rng.choice(["match(%s, %s)" % (pat, rng.choice(syms)),
                          "contains(%s, %s)" % (rng.choice(syms + ['"a"', '"b"', '""']), rng.choice(syms))])
        body.lits.append(("!" if rng.random() < 0.3 else "") + lit)
    nums = body.of_type("number")
    if not recursive and nums and rng.random() < 0.08:   # a generator: each value of a small range
        v = rng.choice(nums)
        bounds = rng.choice(["%s, %s + %d" % (v, v, rng.randint(0, 4)), "%s, %s - %d" % (v, v, rng.randint(0, 3)),
                             "%d, %s, %d" % (rng.randint(-3, 3), v, rng.choice([1, 2, -1, -2, 0]))])
        if rng.random() < 0.2:
            body.lits.append("%s = range(%s)" % (rng.choice(nums), bounds))   # a test of a bound variable
        else:
            body.lits.append("%s = range(%s)" % (body.fresh("number"), bounds))
    if negs and body.vars and rng.random() < 0.08:   # a negated disjunction over bound variables
        body.lits.append("!(%s ; %s)" % (bound_atom(rng, body, rng.choice(negs)), bound_atom(rng, body, rng.choice(negs))))
    if negs and rng.random() < 0.3:   # negation of an earlier stratum
        rel = rng.choice(negs)
        args = []
        for ty in rel.types:
            same = body.of_type(ty)
            p = rng.random()
            args.append(rng.choice(same) if same and p < 0.75 else "_" if p < 0.9 else const(rng, ty))
        body.lits.append("!%s(%s)" % (rel.name, ", ".join(args)))
    if negs and not recursive and rng.random() < 0.3:   # an aggregate: bound (a test) or a new variable
        agg, ty = aggregate(rng, body, negs)
        same = body.of_type(ty)
        if same and rng.random() < 0.3:
            body.lits.append("%s = %s" % (rng.choice(same), agg))
        else:
            v = "g%d" % body.n
            body.n += 1
            body.lits.append("%s = %s" % (v, agg))
            body.vars[v] = ty
    if negs and not recursive and body.vars and rng.random() < 0.06:   # an aggregate as an atom's argument
        rel = rng.choice(negs)
        agg, aty = aggregate(rng, body, negs)
        if aty in rel.types:
            at = rel.types.index(aty)
            neg = rng.random() < 0.3 and agg.startswith(("count", "sum"))   # min/max refused there
            args = [agg if j == at else rng.choice(body.of_type(ty)) if body.of_type(ty) and rng.random() < 0.6
                    else "_" if neg or rng.random() < 0.5 else body.fresh(ty) for j, ty in enumerate(rel.types)]
            body.lits.append(("!" if neg else "") + "%s(%s)" % (rel.name, ", ".join(args)))
    if not recursive and rng.random() < 0.25:   # a binding by arithmetic
        tys = sorted(set(body.vars.values()))
        if tys:
            ty = rng.choice(tys)
            e = arith(rng, body, ty)
            v = body.fresh(ty)
            body.lits.append("%s = %s" % (v, e))
            if rng.random() < 0.2:   # bound twice: the second binding tests the first's value
                body.lits.append("%s = %s" % (v, arith(rng, body, ty)))
    if rng.random() < 0.1 and len(body.lits) >= 2:   # a disjunction of the last two literals
        a, b = body.lits[-2], body.lits[-1]
        cmp = ("<", ">", "=")   # a comparison's variables are grounded elsewhere: not in a disjunct alone
        if not b.startswith("!") and not any(c in a or c in b for c in cmp):
            body.lits[-2:] = ["(%s ; %s)" % (a, b)] if set_vars_same(a, b) else [a, b]
    head_args = []
    for ty in head.types:
        same = body.of_type(ty)
        if not same:
            return None
        p = rng.random()
        if recursive or (ty == "symbol" and p < 0.8) or p < 0.6:
            if recursive and ty in ("number", "unsigned") and p < 0.15:
                v = rng.choice(same)
                body.lits.append("%s < %d" % (v, rng.randint(3, 12)))
                head_args.append("%s + 1" % v)   # bounded: the recursion ends
            else:
                head_args.append(rng.choice(same))
        elif p < 0.85:
            head_args.append(arith(rng, body, ty))
        elif p < 0.93 or not negs:
            head_args.append(const(rng, ty))
        else:
            agg, aty = aggregate(rng, body, negs)
            head_args.append(agg if aty == ty else rng.choice(same))
    return "%s(%s) :- %s." % (head.name, ", ".join(head_args), ", ".join(body.lits))


def set_vars_same(a, b):
    """Whether two literals name the same variables (a disjunction of them stays safe)."""
    import re
    va = set(re.findall(r"\b[vg]\d+\b", a))
    vb = set(re.findall(r"\b[vg]\d+\b", b))
    return va == vb


def gen_program(rng, facts_dir):
    lines, avail = [], []
    for k in range(rng.randint(1, 4)):
        rel = Rel("in%d" % k, [rng.choice(TYPES) for _ in range(rng.randint(1, 3))], True)
        lines += [rel.decl(), ".input %s" % rel.name]
        n = rng.choice([0, 1, 4, 12, 40, 150, 150, 1500])
        rows = {tuple(fact_value(rng, t) for t in rel.types) for _ in range(n)}
        with open(os.path.join(facts_dir, rel.name + ".facts"), "w") as f:
            for r in rows:
                f.write("\t".join(r) + "\n")
        avail.append(rel)
    if rng.random() < 0.3:   # inline facts
        rel = Rel("fx", [rng.choice(TYPES) for _ in range(rng.randint(1, 2))])
        lines.append(rel.decl())
        for _ in range(rng.randint(1, 5)):
            lines.append("fx(%s)." % ", ".join(const(rng, t) for t in rel.types))
        avail.append(rel)
    outputs = []
    for s in range(rng.randint(1, 5)):
        negs = list(avail)
        size = 1 if rng.random() < 0.6 else rng.randint(2, 3)
        group = []
        for j in range(size):
            arity = rng.choice([0, 1, 1, 2, 2, 3]) if size == 1 else rng.choice([1, 2, 2])
            if size > 1:   # a recursive group shares one signature, so copy rules connect it
                types = group[0].types if group else [rng.choice(TYPES) for _ in range(arity)]
            else:
                types = [rng.choice(TYPES) for _ in range(arity)]
            group.append(Rel("r%d_%d" % (s, j), types))
        for rel in group:   # equivalence relations: two columns of one type
            if len(rel.types) == 2 and rng.random() < 0.25:
                if size == 1:
                    rel.types = [rel.types[0]] * 2
                rel.eqrel = rel.types[0] == rel.types[1]
        for rel in group:
            lines.append(rel.decl())
        for rel in group:
            rules = []
            for _ in range(rng.randint(1, 3)):
                r = gen_rule(rng, rel, avail, group, negs, False)
                if r:
                    rules.append(r)
            if size > 1 or rng.random() < 0.35:
                for _ in range(rng.randint(1, 2)):
                    mates = [g for g in group if g.types == rel.types] if size > 1 else [rel]
                    r = gen_rule(rng, rel, avail + group, mates, negs, True)
                    if r:
                        rules.append(r)
                if size > 1:   # a plain copy from a group mate
                    mate = rng.choice(group)
                    vs = ", ".join("x%d" % i for i in range(len(rel.types)))
                    rules.append("%s(%s) :- %s(%s)." % (rel.name, vs, mate.name, vs))
            if not rules:
                vs = ", ".join(const(rng, t) for t in rel.types)
                rules.append("%s(%s)." % (rel.name, vs))
            if rel.types and not rel.eqrel and rng.random() < 0.15:
                rules.append(subsumption(rng, rel, avail))
            lines += rules
            outputs.append(rel)
        avail += group
    for rel in outputs:
        p = rng.random()
        if p < 0.8:
            lines.append(".output %s" % rel.name)
        elif p < 0.9:
            lines.append(".printsize %s" % rel.name)
    if rng.random() < 0.3:
        lines += records(rng, avail)
    if rng.random() < 0.3:
        lines = in_components(rng, lines, facts_dir)
    return "\n".join(lines) + "\n"


def subsumption(rng, rel, avail):
    """`r(..) <= r(..) :- cond.`: the tuples some other tuple of the same key (the columns
    written alike) dominates on one column, at times under a condition on another relation."""
    n = len(rel.types)
    col = rng.randrange(n)
    lhs = ["k%d" % i for i in range(n)]
    rhs = list(lhs)
    lhs[col], rhs[col] = "a", "b"
    for i in range(n):   # other columns free on one side at times (any value dominates)
        if i != col and rng.random() < 0.25:
            lhs[i], rhs[i] = "_" if rng.random() < 0.5 else "u%d" % i, "v%d" % i
    conds = ["a %s b" % rng.choice(["<", "<=", ">", ">="])]
    other = [r for r in avail if r.types and rel.types[col] in r.types]
    if other and rng.random() < 0.3:
        r = rng.choice(other)
        args = ["_"] * len(r.types)
        args[r.types.index(rel.types[col])] = "b"
        conds.append("%s%s(%s)" % ("!" if rng.random() < 0.3 else "", r.name, ", ".join(args)))
    return "%s(%s) <= %s(%s) :- %s." % (rel.name, ", ".join(lhs), rel.name, ", ".join(rhs), ", ".join(conds))


def records(rng, avail):
    """Records made from a relation's rows (nested at times), read back by pattern, compared,
    and built into lists by recursion."""
    src = rng.choice([r for r in avail if r.types] or [None])
    if src is None:
        return []
    n = len(src.types)
    vs = ["x%d" % i for i in range(n)]
    fields = ", ".join("f%d: %s" % (i, t) for i, t in enumerate(src.types))
    out = [".type Rec = [%s]" % fields, ".type Box = [r: Rec, k: number]", ".type Chain = [r: Rec, next: Chain]",
           ".decl recs(p: Rec)", "recs([%s]) :- %s(%s)." % (", ".join(vs), src.name, ", ".join(vs)),
           ".decl boxed(b: Box)", "boxed([p, 1]) :- recs(p).", "boxed([[%s], 2]) :- recs([%s])." % (", ".join(vs), ", ".join(vs)),
           ".decl unbox(%s)" % ", ".join("c%d: %s" % (i, t) for i, t in enumerate(src.types)),
           "unbox(%s) :- boxed([[%s], k]), k %s 1." % (", ".join(vs), ", ".join(vs), rng.choice(["=", ">", ">=", "!="])),
           ".decl chain(c: Chain, len: number)", "chain(nil, 0).",
           "chain([p, c], l + 1) :- chain(c, l), recs(p), l < %d." % rng.randint(1, 2),
           ".decl firsts(p: Rec)", "firsts(p) :- chain([p, nil], _).",
           ".decl pairs(p: Rec, q: Rec)", "pairs(p, q) :- recs(p), recs(q), p %s q, p = [%s]." % (
               rng.choice(["=", "!="]), ", ".join("_" if i else "x0" for i in range(n))),
           ".decl missing(%s)" % ", ".join("c%d: %s" % (i, t) for i, t in enumerate(src.types)),
           "missing(%s) :- %s(%s), !recs([%s])." % (", ".join(vs), src.name, ", ".join(vs), ", ".join(vs))]
    out += [".type Val = One {v: %s} | Two {a: Rec, b: number} | Zero {}" % src.types[0],
            ".decl vals(x: Val)", "vals($One(x0)) :- recs([%s])." % ", ".join(vs),
            "vals($Two(p, 2)) :- recs(p).", "vals($Zero()) :- recs(_).",
            ".decl unval(%s)" % ", ".join("c%d: %s" % (i, t) for i, t in enumerate(src.types)),
            "unval(%s) :- vals($Two([%s], _))." % (", ".join(vs), ", ".join(vs)),
            ".decl ones(c: %s)" % src.types[0], "ones(v) :- vals(x), x = $One(v), !vals($Zero())." if rng.random() < 0.3
            else "ones(v) :- vals(x), x = $One(v)."]
    for r in ["recs", "boxed", "unbox", "chain", "firsts", "pairs", "missing", "vals", "unval", "ones"]:
        if rng.random() < 0.7:
            out.append(".output %s" % r)
    return out


def in_components(rng, lines, facts_dir):
    """The program as a component, instantiated once or twice (each instance reading its own
    copy of the facts: a.in0.facts), its items split between a base and a derived component
    at times: the same answers, under qualified names."""
    instances = rng.choice([["a"], ["a", "b"], ["net.x"]])
    cut = rng.randint(0, len(lines))
    if rng.random() < 0.5:
        comps = [".comp Base {"] + lines[:cut] + ["}", ".comp Prog : Base {"] + lines[cut:] + ["}"]
    else:
        comps = [".comp Prog {"] + lines + ["}"]
    out = comps
    for inst in instances:
        if "." in inst:   # an instance made inside another component's instance
            outer, inner = inst.split(".")
            out += [".comp Outer {", ".init %s = Prog" % inner, "}", ".init %s = Outer" % outer]
        else:
            out.append(".init %s = Prog" % inst)
    for f in os.listdir(facts_dir):
        src = os.path.join(facts_dir, f)
        for inst in instances:
            shutil.copyfile(src, os.path.join(facts_dir, inst + "." + f))
        os.remove(src)
    return out


CASE_TIMEOUT = 60
CLOSED_TIMEOUT = 900   # Soufflé on an eqrel's closure spelt as rules: slower than its eqrel


SLOWER_FACTOR = 10   # "slower": rfx over this many times Soufflé's seconds and over --slower-min


def run(cmd, cwd, took=None, limit=CASE_TIMEOUT):
    t0 = time.time()
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=limit)
    except subprocess.TimeoutExpired:
        return None, b"", b"timed out"
    finally:
        if took is not None:
            took.append(time.time() - t0)
    return p.returncode, p.stdout, p.stderr


def outputs(d):
    """Each output file's lines as a sorted list (the order of rows is not compared)."""
    res = {}
    for f in sorted(os.listdir(d)):
        with open(os.path.join(d, f), "rb") as h:
            res[f] = sorted(h.read().splitlines())
    return res


AGG_COUNTING = re.compile(r"\b(count|sum|mean)\b[^:{}]*:\s*\{")   # an aggregate whose tuples' number counts
EQREL_DECL = re.compile(r"^(\s*\.decl\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(.*\))\s*eqrel\s*$", re.M)


def without_eqrel(text):
    """The program with each eqrel relation a plain one closed by its own rules: the
    definition of eqrel, for Soufflé's eqrel in recursions misses implied pairs
    (souffle-lang/souffle#2052, #2071)."""
    def closed(m):
        r = m.group(2)
        return "%s\n%s(x, x) :- %s(x, _).\n%s(y, x) :- %s(x, y).\n%s(x, z) :- %s(x, y), %s(y, z)." % (
            m.group(1), r, r, r, r, r, r, r)
    return EQREL_DECL.sub(closed, text)


def one_case(args, i):
    rng = random.Random(args.seed * 1000003 + i)
    case = os.path.join(args.work, "case-%d" % i)
    shutil.rmtree(case, ignore_errors=True)
    facts = os.path.join(case, "facts")
    os.makedirs(facts)
    prog = os.path.join(case, "program.dl")
    with open(prog, "w") as f:
        f.write(gen_program(rng, facts))
    os.makedirs(os.path.join(case, "souffle"))
    os.makedirs(os.path.join(case, "rfx"))
    took = []
    rc_s, out_s, err_s = run([args.souffle, "-j1", "-F", facts, "-D", os.path.join(case, "souffle"), prog], case, took)
    if rc_s != 0:
        shutil.rmtree(case, ignore_errors=True)
        return "invalid", i, (err_s or b"").decode(errors="replace")[:300]
    rc_r, out_r, err_r = run([args.rfx, "-q", rng.choice(["-j1", "-j2"]), "-F", facts, "-D", os.path.join(case, "rfx")] +
                             shlex.split(args.rfx_opts) + [prog], case, took)
    verdict, why = "same", ""
    if rc_r is None:
        verdict, why = "slow", "rfx took over %d s" % CASE_TIMEOUT
    elif rc_r != 0:
        verdict, why = "refused", "rfx exit %s: %s" % (rc_r, err_r.decode(errors="replace")[:300])
    else:
        a, b = outputs(os.path.join(case, "souffle")), outputs(os.path.join(case, "rfx"))
        if a != b:
            diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
            verdict, why = "differs", "outputs differ: %s" % ", ".join(diff)
        elif sorted(out_s.splitlines()) != sorted(out_r.splitlines()):
            verdict, why = "differs", "printsize output differs"
        if verdict == "differs" and EQREL_DECL.search(open(prog).read()):
            # the same program with eqrel spelt as its closure rules: where Soufflé then
            # agrees with rfx, Soufflé's eqrel was what differed
            plain = os.path.join(case, "closed.dl")
            with open(plain, "w") as f:
                f.write(without_eqrel(open(prog).read()))
            os.makedirs(os.path.join(case, "souffle_closed"))
            # (a closure spelt as rules runs slower than Soufflé's eqrel: it gets longer)
            rc_c, out_c, _ = run([args.souffle, "-j1", "-F", facts, "-D", os.path.join(case, "souffle_closed"), plain],
                                 case, limit=CLOSED_TIMEOUT)
            if (rc_c == 0 and outputs(os.path.join(case, "souffle_closed")) == b and
                    sorted(out_c.splitlines()) == sorted(out_r.splitlines())):
                verdict, why = "eqrel", why + " (only as Soufflé's eqrel: closed.dl, its closure as rules, agrees)"
    if verdict == "differs" and AGG_COUNTING.search(open(prog).read()):
        # Soufflé's materialisation of aggregate bodies projects a body onto its named
        # variables, so `_`'s tuples collapse where a variable bound outside by an
        # expression is read inside (souffle-lang/souffle#2552): where Soufflé without that
        # rewrite agrees with rfx, that rewrite was what differed
        os.makedirs(os.path.join(case, "souffle_unmaterialised"))
        rc_m, out_m, _ = run([args.souffle, "-j1", "--disable-transformers=MaterializeAggregationQueriesTransformer",
                              "-F", facts, "-D", os.path.join(case, "souffle_unmaterialised"), prog], case)
        if (rc_m == 0 and outputs(os.path.join(case, "souffle_unmaterialised")) == b and
                sorted(out_m.splitlines()) == sorted(out_r.splitlines())):
            verdict, why = "aggregate", why + (" (only as Soufflé materialises aggregate bodies: without that rewrite "
                                               "it agrees)")
    if verdict == "same" and took[1] > args.slower_min and took[1] > SLOWER_FACTOR * took[0]:
        verdict, why = "slower", "rfx took %.2f s, Soufflé %.2f s" % (took[1], took[0])
    if verdict == "same":
        shutil.rmtree(case, ignore_errors=True)
    else:
        with open(os.path.join(case, "why.txt"), "w") as f:
            f.write(why + "\n")
        keep = os.path.join(args.work, "fail-%d" % i)
        shutil.rmtree(keep, ignore_errors=True)
        os.rename(case, keep)
    return verdict, i, why


def main():
    ap = argparse.ArgumentParser(description="random programs run by rfx and Soufflé, outputs compared")
    ap.add_argument("rfx")
    ap.add_argument("count", type=int)
    ap.add_argument("--souffle", default=DEFAULT_SOUFFLE)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work", default="diff-souffle-work")
    ap.add_argument("--budget", type=float, default=float("inf"), help="seconds; no new program after them")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--rfx-opts", default="", help="extra rfx options (--backend=cuda, say)")
    ap.add_argument("--slower-min", type=float, default=1.0,
                    help="seconds rfx must take for a 'slower' finding (raise it where a device backend's start "
                         "alone takes that long)")
    args = ap.parse_args()
    args.rfx, args.souffle = os.path.abspath(args.rfx), os.path.abspath(args.souffle)   # cases run in their folders
    if not os.access(args.souffle, os.X_OK):
        print("diff_souffle: skipped: no Soufflé at %s" % os.path.normpath(args.souffle))
        return 0
    os.makedirs(args.work, exist_ok=True)
    start = time.time()
    counts = {"same": 0, "invalid": 0, "refused": 0, "differs": 0, "slow": 0, "slower": 0, "eqrel": 0, "aggregate": 0}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        pending, nxt = set(), 0
        while pending or nxt < args.count:
            while nxt < args.count and len(pending) < 2 * args.jobs and time.time() - start < args.budget:
                pending.add(pool.submit(one_case, args, nxt))
                nxt += 1
            if not pending:
                break
            done, pending = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
            for fut in done:
                verdict, i, why = fut.result()
                counts[verdict] += 1
                if verdict in ("refused", "differs", "slow", "slower", "eqrel", "aggregate"):
                    print("case %d (seed %d): %s: %s" % (i, args.seed, verdict, why), flush=True)
            if time.time() - start >= args.budget and nxt < args.count:
                nxt = args.count   # budget spent: finish what runs
    ran = sum(counts[k] for k in counts if k != "invalid")
    print("diff_souffle: %d programs compared in %.0f s (seed %d): %d same, %d refused by rfx, %d differ, "
          "%d where rfx took over %d s and %d where it took over %d times Soufflé's time (kept, not failed: speed "
          "findings); %d where only Soufflé's eqrel differs (kept: its closure spelt as rules agrees with rfx); "
          "%d where only Soufflé's materialised aggregate bodies differ (kept: Soufflé without that rewrite agrees); "
          "%d rejected by Soufflé (not counted)"
          % (ran, time.time() - start, args.seed, counts["same"], counts["refused"], counts["differs"], counts["slow"],
             CASE_TIMEOUT, counts["slower"], SLOWER_FACTOR, counts["eqrel"], counts["aggregate"], counts["invalid"]))
    return 1 if counts["refused"] or counts["differs"] else 0


if __name__ == "__main__":
    sys.exit(main())
