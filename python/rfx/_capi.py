"""librfx through ctypes: the library, rfx.h's structs mirrored, each function's signature.

ctypes releases the GIL for every call into librfx, so engines in several Python threads
run at once. The structs below must match rfx.h field for field; tests/test_abi.py checks
their sizes and offsets against a C compiler's.
"""
import ctypes
import glob
import os
from ctypes import POINTER, Structure, c_bool, c_char_p, c_int, c_size_t, c_ssize_t, c_void_p


def _find_library():
    here = os.path.dirname(os.path.abspath(__file__))
    found = sorted(glob.glob(os.path.join(here, "librfx.so*")))
    if found:
        return found[-1]
    # a source checkout used in place (python/rfx next to a CMake build in build/)
    for build in ("build", "build-asan"):
        lib = os.path.join(here, "..", "..", build, "runtime", "librfx.so.0")
        if os.path.exists(lib):
            return os.path.abspath(lib)
    raise ImportError("rfx: librfx is not installed beside the package (install it with `pip install .` "
                      "from the rfx repository)")


lib = ctypes.CDLL(_find_library())
libc = ctypes.CDLL(None)

# enums (rfx.h)
BACKENDS = {"auto": 0, "cpu": 1, "cuda": 2}
JOINS = {"auto": 0, "binary": 1, "lftj": 2}
STAGES = {"ast": 0, "plan": 1, "harmony": 2, "fused": 3, "cuda": 4}
COL_NUMBER, COL_UNSIGNED, COL_FLOAT, COL_SYMBOL = range(4)
(FMT_I32, FMT_U32, FMT_F32, FMT_I64, FMT_U64, FMT_F64, FMT_SYMBOL, FMT_UTF8, FMT_UTF8_FIXED,
 FMT_UTF32_FIXED) = range(10)


class Config(Structure):
    _fields_ = [
        ("backend", c_int),
        ("device_memory", c_size_t),
        ("threads", c_int),
        ("fact_dir", c_char_p),
        ("output_dir", c_char_p),
        ("out", c_void_p),
        ("diag", c_void_p),
        ("progress", c_void_p),
        ("profile", c_void_p),
        ("profile_json", c_void_p),
        ("trace", c_void_p),
        ("no_opt", c_bool),
        ("no_fuse", c_bool),
        ("join", c_int),
        ("devices", POINTER(c_int)),
        ("ndevices", c_int),
        ("macros", c_char_p),
        ("library_dirs", c_char_p),
        ("libraries", c_char_p),
        ("tune", c_char_p),
        ("results_only", c_bool),   # False: relations stay whole for the cursors
        ("alone", c_bool),
        ("include_dirs", c_char_p),
        ("no_preprocessor", c_bool),
        ("no_warn", c_bool),
    ]


class Column(Structure):
    _fields_ = [
        ("format", c_int),
        ("data", c_void_p),
        ("stride", c_ssize_t),
        ("width", c_size_t),
        ("offsets", c_void_p),
    ]


def _sig(name, res, *args):
    f = getattr(lib, name)
    f.restype = res
    f.argtypes = list(args)
    return f


engine_p = c_void_p
version = _sig("rfx_version", c_char_p)
config_init = _sig("rfx_config_init", None, POINTER(Config))
open_engine = _sig("rfx_open", engine_p, POINTER(Config))
close = _sig("rfx_close", None, engine_p)
load_string = _sig("rfx_load_string", c_int, engine_p, c_char_p, c_char_p)
load_file = _sig("rfx_load_file", c_int, engine_p, c_char_p)
emit = _sig("rfx_emit", c_int, engine_p, c_int, c_void_p)
relation_info = _sig("rfx_relation_info", c_int, engine_p, c_char_p, POINTER(c_int), POINTER(c_int))
relation_name = _sig("rfx_relation_name", c_char_p, engine_p, c_int)
attribute_name = _sig("rfx_attribute_name", c_char_p, engine_p, c_char_p, c_int)
insert_columns = _sig("rfx_insert_columns", c_int, engine_p, c_char_p, POINTER(Column), c_size_t)
run = _sig("rfx_run", c_int, engine_p)
read_inputs = _sig("rfx_read_inputs", c_int, engine_p)
size = _sig("rfx_size", c_int, engine_p, c_char_p, POINTER(c_size_t))
read_columns = _sig("rfx_read_columns", c_int, engine_p, c_char_p, POINTER(Column), c_size_t, POINTER(c_size_t))
symbol_texts = _sig("rfx_symbol_texts", c_int, engine_p, c_void_p, c_size_t, c_void_p, c_size_t, c_void_p)
errmsg = _sig("rfx_errmsg", c_char_p, engine_p)
clique_program = _sig("rfx_clique_program", c_size_t, c_char_p, c_size_t, c_int, c_bool, c_bool, c_char_p)
tune_check = _sig("rfx_tune_check", c_bool, c_char_p, c_char_p, c_size_t)

# C stdio for the FILE * the config takes (progress through a pipe, profiles and emitted
# stages through an anonymous temporary file)
fdopen = libc.fdopen
fdopen.restype, fdopen.argtypes = c_void_p, [c_int, c_char_p]
tmpfile = libc.tmpfile
tmpfile.restype, tmpfile.argtypes = c_void_p, []
fclose = libc.fclose
fclose.restype, fclose.argtypes = c_int, [c_void_p]
fflush = libc.fflush
fflush.restype, fflush.argtypes = c_int, [c_void_p]
ftell = libc.ftell
ftell.restype, ftell.argtypes = ctypes.c_long, [c_void_p]
fseek = libc.fseek
fseek.restype, fseek.argtypes = c_int, [c_void_p, ctypes.c_long, c_int]
fread = libc.fread
fread.restype, fread.argtypes = c_size_t, [c_void_p, c_size_t, c_size_t, c_void_p]
setvbuf = libc.setvbuf
setvbuf.restype, setvbuf.argtypes = c_int, [c_void_p, c_char_p, c_int, c_size_t]


class CFile:
    """An anonymous temporary file as a C FILE *, read back from where the last read ended."""

    def __init__(self):
        self.fp = tmpfile()
        if not self.fp:
            raise OSError("rfx: no temporary file for a profile or an emitted stage")
        self.start = 0

    def read_new(self):
        fflush(self.fp)
        end = ftell(self.fp)
        n = end - self.start
        buf = ctypes.create_string_buffer(max(n, 1))
        fseek(self.fp, self.start, 0)
        got = fread(buf, 1, n, self.fp)
        fseek(self.fp, end, 0)
        self.start = end
        return buf.raw[:got].decode("utf-8", "replace")

    def close(self):
        if self.fp:
            fclose(self.fp)
            self.fp = None

