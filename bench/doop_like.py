#!/usr/bin/env python3
"""Random facts for programs/doop_like.dl: an object-oriented program of M methods in a
type hierarchy, each with a few variables, allocations, field loads and stores, casts and
virtual and static calls. Usage: bench/doop_like.py OUT_DIR [METHODS] [SEED]"""
import os
import random
import sys


def main():
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        print(__doc__, file=sys.stdout if sys.argv[1:2] in (["-h"], ["--help"]) else sys.stderr)
        sys.exit(0 if sys.argv[1:2] in (["-h"], ["--help"]) else 2)
    out = sys.argv[1]
    nm = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    os.makedirs(out, exist_ok=True)
    rel = {k: [] for k in ["Assign", "Alloc", "Load", "Store", "VCall", "SCall", "Actual", "Formal", "Return",
                           "CallResult", "This", "HeapType", "Implements", "Subtype", "Cast", "Entry"]}
    ntypes = max(4, nm // 8)
    types = ["T%d" % i for i in range(ntypes)]
    for i in range(1, ntypes):   # a tree of types
        rel["Subtype"].append((types[i], types[rng.randrange(i)]))
    sigs = ["s%d" % i for i in range(max(2, nm // 10))]
    fields = ["f%d" % i for i in range(max(2, nm // 20))]
    methods = ["m%d" % i for i in range(nm)]
    # the root type implements every signature; the other methods override one in a subtype
    for k, m in enumerate(methods):
        rel["Implements"].append((types[0] if k < len(sigs) else rng.choice(types), sigs[k % len(sigs)], m))
    heap = 0
    invo = 0
    for m in methods:
        vs = ["%s/v%d" % (m, k) for k in range(rng.randint(3, 8))]
        rel["This"].append((m, vs[0]))
        for n in range(1, min(3, len(vs))):
            rel["Formal"].append((m, str(n), vs[n]))
        rel["Return"].append((m, rng.choice(vs)))
        for _ in range(rng.randint(1, 3)):
            h = "h%d" % heap
            heap += 1
            rel["Alloc"].append((rng.choice(vs), h, m))
            rel["HeapType"].append((h, rng.choice(types)))
        for _ in range(rng.randint(0, 2)):
            rel["Assign"].append((rng.choice(vs), rng.choice(vs)))
        for _ in range(rng.randint(0, 2)):
            rel["Load"].append((rng.choice(vs), rng.choice(fields), rng.choice(vs)))
            rel["Store"].append((rng.choice(vs), rng.choice(vs), rng.choice(fields)))
        if rng.random() < 0.3:
            rel["Cast"].append((rng.choice(vs), rng.choice(vs), rng.choice(types)))
        for _ in range(rng.randint(1, 2)):
            i = "i%d" % invo
            invo += 1
            if rng.random() < 0.7:
                rel["VCall"].append((rng.choice(vs), rng.choice(sigs), i, m))
            else:
                rel["SCall"].append((rng.choice(methods), i, m))
            rel["Actual"].append((i, "1", rng.choice(vs)))
            if rng.random() < 0.5:
                rel["CallResult"].append((i, rng.choice(vs)))
    for m in rng.sample(methods, max(2, nm // 20)):
        rel["Entry"].append((m,))
    for k, rows in rel.items():
        with open(os.path.join(out, k + ".facts"), "w") as f:
            for r in sorted(set(rows)):
                f.write("\t".join(r) + "\n")
    print("%s: %d methods, %d heap sites, %d call sites" % (out, nm, heap, invo))


if __name__ == "__main__":
    main()
