"""Tuples in from NumPy, pandas and Arrow; out as NumPy, pandas and Arrow; symbols round-trip."""
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import rfx

TYPED = """
.decl n(a: number, b: number)
.decl u(a: unsigned, b: unsigned)
.decl f(a: float, b: float)
.decl s(a: symbol)
.decl mixed(name: symbol, k: number, w: float, z: unsigned)
.decl one(x: number)
.decl none()
.decl copy_s(a: symbol)
copy_s(x) :- s(x).
"""


@pytest.fixture
def eng():
    with rfx.Engine(backend="cpu") as e:
        e.load(TYPED)
        yield e


def rows(eng, name):
    eng.run()
    return eng.relation(name).tolist()


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                                   np.uint64, bool])
def test_numpy_integer_dtypes(eng, dtype):
    a = np.array([[1, 0], [0, 1], [1, 1]], dtype=dtype)
    eng.insert("n", a)
    assert rows(eng, "n") == [[0, 1], [1, 0], [1, 1]]


def test_numpy_layouts(eng):
    base = np.arange(40, dtype=np.int32).reshape(10, 4)
    eng.insert("n", base[:, 1:3])              # strided columns of a wider array
    eng.insert("n", np.asfortranarray(base[:, [0, 3]]))   # column-major
    eng.insert("n", base[::3, :2])             # every third row
    want = sorted({tuple(r) for r in base[:, 1:3].tolist()} | {tuple(r) for r in base[:, [0, 3]].tolist()} |
                  {tuple(r) for r in base[::3, :2].tolist()})
    assert [tuple(r) for r in rows(eng, "n")] == want
    eng.insert("one", np.array([5, 3, 5]))    # 1-D for a unary relation
    assert rows(eng, "one") == [[3], [5]]


def test_structured_and_lists(eng):
    st = np.array([("a", 1, 0.5, 3), ("b", -2, 1.5, 4)],
                  dtype=[("name", "U4"), ("k", "i8"), ("w", "f8"), ("z", "u4")])
    eng.insert("mixed", st)
    eng.insert("mixed", [("c", 7, 2, 0)])
    got = rows(eng, "mixed")
    assert got == [["a", 1, 0.5, 3], ["b", -2, 1.5, 4], ["c", 7, 2.0, 0]]
    rel = eng.relation("mixed")
    assert rel.columns == ["name", "k", "w", "z"] and rel.types == ["symbol", "number", "float", "unsigned"]


def test_signed_unsigned_float_values(eng):
    eng.insert("n", np.array([[-2**31, 2**31 - 1], [-1, 0]], dtype=np.int64))
    eng.insert("u", np.array([[2**32 - 1, 0]], dtype=np.uint64))
    eng.insert("f", np.array([[0.1, -2.5e30]], dtype=np.float64))
    eng.run()
    assert eng.relation("n").tolist() == [[-2**31, 2**31 - 1], [-1, 0]]
    assert eng.relation("u").dtype == np.uint32 and eng.relation("u").tolist() == [[2**32 - 1, 0]]
    f = eng.relation("f")
    assert f.dtype == np.float32 and f[0, 0] == np.float32(0.1) and f[0, 1] == np.float32(-2.5e30)


@pytest.mark.parametrize("rel,value", [("n", 2**31), ("n", -2**31 - 1), ("u", -1), ("u", 2**32)])
def test_values_that_do_not_fit(eng, rel, value):
    eng.insert(rel, np.array([[1, 1]]))
    with pytest.raises(rfx.InputError, match=r"tuple 2, column 2 of %s: %d does not fit" % (rel, value)):
        eng.insert(rel, np.array([[1, 2], [3, value]], dtype=np.int64 if value < 2**63 else np.uint64))
    assert rows(eng, rel) == [[1, 1]]          # nothing of the failed call went in


def test_wrong_kinds(eng):
    with pytest.raises(rfx.InputError, match="number.*float64"):
        eng.insert("n", np.array([[1.5, 2.0]]))
    with pytest.raises(rfx.InputError, match="symbol column; it holds int"):
        eng.insert("s", [[1]])
    with pytest.raises(rfx.InputError, match="3 columns given, the relation has 2"):
        eng.insert("n", np.zeros((2, 3), dtype=np.int32))
    with pytest.raises(rfx.InputError, match="not a table"):
        eng.insert("n", [(1, 2), (3,)])
    with pytest.raises(rfx.InputError, match="no relation named 'nope'"):
        eng.insert("nope", [[1]])


def test_pandas_in_and_out(eng):
    df = pd.DataFrame({"name": ["x", "y"], "k": [1, 2], "w": np.array([0.25, 1], dtype=np.float32),
                       "z": pd.array([5, 6], dtype="UInt32")})
    eng.insert("mixed", df)
    eng.insert("s", pd.DataFrame({"a": pd.array(["p", "q"], dtype="string")}))
    eng.run()
    out = eng.relation("mixed").to_pandas()
    assert list(out.columns) == ["name", "k", "w", "z"]
    assert pd.api.types.is_string_dtype(out.dtypes.iloc[0])
    assert [str(t) for t in out.dtypes.iloc[1:]] == ["int32", "float32", "uint32"]
    assert out.values.tolist() == [["x", 1, 0.25, 5], ["y", 2, 1.0, 6]]
    assert eng.relation("copy_s").tolist() == [["p"], ["q"]]
    with pytest.raises(rfx.InputError, match="missing values"):
        eng.insert("n", pd.DataFrame({"a": [1, None], "b": [1, 2]}))


def test_arrow_in_and_out(eng):
    t = pa.table({"name": pa.chunked_array([["a", "bb"], ["ccc"]]), "k": pa.array([1, 2, 3], pa.int32()),
                  "w": pa.array([1.0, 2.0, 3.0], pa.float64()), "z": pa.array([7, 8, 9], pa.uint64())})
    eng.insert("mixed", t)
    eng.insert("s", pa.table({"a": pa.array(["d1", "d2", "d1"]).dictionary_encode()}))
    eng.insert("s", pa.table({"a": pa.array(["l1", ""], pa.large_string())}))
    eng.insert("s", pa.table({"a": pa.array(["x", "sliced", "y"]).slice(1, 1)}))
    eng.run()
    out = eng.relation("mixed").to_arrow()
    assert out.schema.types == [pa.string(), pa.int32(), pa.float32(), pa.uint32()]
    assert out.to_pylist()[2] == {"name": "ccc", "k": 3, "w": 3.0, "z": 9}
    assert eng.relation("s").tolist() == [[""], ["d1"], ["d2"], ["l1"], ["sliced"]]
    with pytest.raises(rfx.InputError, match="nulls"):
        eng.insert("n", pa.table({"a": [1, None], "b": [1, 2]}))


SYMBOLS = ["", "plain", "tab\there", "new\nline", "uni✓ 中文 😀", "quote\"s", "back\\slash", " lead", "ß" * 300,
           "trail\u00a0", "nul\0inside", "\udc80raw byte"]


@pytest.mark.parametrize("source", ["list", "U", "object", "S", "arrow", "pandas"])
def test_symbols_round_trip(eng, source):
    # NumPy 'S' arrays hold bytes (ASCII here); pandas' text columns refuse lone surrogates
    texts = [t for t in SYMBOLS if (source != "S" or t.isascii()) and (source != "pandas" or "\udc80" not in t)]
    if source in ("U", "S"):
        texts = [t for t in texts if not t.endswith("\0")]
    data = {"list": lambda: [[t] for t in texts],
            "U": lambda: np.array(texts).reshape(-1, 1),
            "object": lambda: np.array(texts, dtype=object).reshape(-1, 1),
            "S": lambda: np.array([t.encode() for t in texts]).reshape(-1, 1),
            "arrow": lambda: pa.table({"a": pa.array([t.encode("utf-8", "surrogateescape") for t in texts],
                                                     pa.binary()).cast(pa.string(), safe=False)}),
            "pandas": lambda: pd.DataFrame({"a": texts})}[source]()
    eng.insert("s", data)
    eng.run()
    got = [r[0] for r in eng.relation("copy_s").tolist()]
    raw = sorted(t.encode("utf-8", "surrogateescape") for t in texts)   # rfx orders symbols by their bytes
    assert [g.encode("utf-8", "surrogateescape") for g in got] == raw


def test_many_symbols_and_rows(eng):
    n = 200_000
    keys = np.char.add("k", (np.arange(n) % 5000).astype(str))
    eng.insert("mixed", pd.DataFrame({"name": keys, "k": np.arange(n), "w": np.ones(n), "z": np.arange(n)}))
    eng.run()
    rel = eng.relation("mixed")
    assert rel.shape == (n, 4) and eng.size("mixed") == n
    assert set(rel[:, 0]) == set(keys)


def test_empty_and_nullary(eng):
    eng.insert("n", np.zeros((0, 2), dtype=np.int32))
    eng.insert("s", [])
    eng.insert("none", [()])
    eng.run()
    assert eng.relation("n").shape == (0, 2)
    assert eng.relation("s").shape == (0, 1)
    assert eng.size("none") == 1 and eng.relation("none").shape == (1, 0)
