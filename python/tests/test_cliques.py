"""rfx.cliques: the SNAP graphs' triangle and 4-clique counts of MANIFEST.tsv, and networkx as
the oracle on small random graphs."""
import gzip
import itertools

import networkx as nx
import numpy as np
import pytest

import rfx


def read_snap(path):
    """An edge list as SNAP ships it: '#' comments, whitespace or commas, extra columns, gzip."""
    raw = gzip.open(path, "rb").read() if path.name.endswith(".gz") else path.read_bytes()
    text = raw.decode().replace(",", " ")
    lines = (line.split()[:2] for line in text.splitlines())
    pairs = [p for p in lines if len(p) == 2 and p[0].isdigit()]   # some headers lack their '#'

    return np.array(pairs, dtype=np.int64).reshape(-1, 2)


def manifest(graphs):
    lines = (graphs / "MANIFEST.tsv").read_text().splitlines()
    head = lines[0].split("\t")
    return [dict(zip(head, line.split("\t"))) for line in lines[1:] if line.strip()]


def test_snap_graphs_counts(graphs):
    """Triangles (the edges handed over as an array) and 4-cliques (the file read by rfx) of
    every graph."""
    rows = manifest(graphs)
    assert rows
    for row in rows:
        path = graphs / row["file"]
        edges = read_snap(path)
        assert rfx.cliques(edges, k=3) == int(row["triangles_computed"]), row["file"]
        if row["four_cliques_computed"]:
            assert rfx.cliques(path, k=4) == int(row["four_cliques_computed"]), row["file"]


def nx_cliques(g, k):
    return sorted(tuple(sorted(c)) for c in nx.enumerate_all_cliques(g) if len(c) == k)


@pytest.mark.parametrize("seed", range(6))
def test_random_graphs_against_networkx(seed):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(5, 40)), int(rng.integers(0, 300))
    g = nx.gnm_random_graph(n, m, seed=seed)
    g.add_edge(0, 0)                                  # a self-loop: not part of any clique
    for k in (2, 3, 4, 5):
        want = nx_cliques(g, k)
        assert rfx.cliques(g, k=k) == len(want)
        assert rfx.cliques(g, k=k, count=False).tolist() == [list(c) for c in want]
        # the same through an edge array with both directions and duplicates
        arr = np.array(list(g.edges()) + [(b, a) for a, b in g.edges()], dtype=np.int64).reshape(-1, 2)
        assert rfx.cliques(arr, k=k, order="id") == len(want)
        assert rfx.cliques(arr, k=k, order="degree") == len(want)


def test_labelled_networkx_graph():
    g = nx.Graph([("a", "b"), ("b", "c"), ("a", "c"), ("c", "d")])
    got = rfx.cliques(g, k=3, count=False).tolist()
    assert [sorted(c) for c in got] == [["a", "b", "c"]]
    assert rfx.cliques(g) == 1


def test_clique_arguments():
    with pytest.raises(rfx.InputError, match="2 to 8"):
        rfx.cliques(np.zeros((0, 2), dtype=np.int32), k=9)
    with pytest.raises(rfx.InputError, match="shape"):
        rfx.cliques(np.zeros(5, dtype=np.int32))
    assert rfx.cliques(np.zeros((0, 2), dtype=np.int32)) == 0
    full = np.array(list(itertools.combinations(range(8), 2)))
    assert rfx.cliques(full, k=8) == 1 and rfx.cliques(full, k=5) == 56
