"""compile_ir keeps the machine code on disk: a later compile of the same IR loads it."""

import ctypes
import glob
import os

import pytest

from hessgrad.kernels import llvm

IR = """
define double @twice_plus(double %x, double %y) {
  %a = fmul double %x, 2.0
  %b = fadd double %a, %y
  ret double %b
}
"""


def _call(engine):
    fn = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double, ctypes.c_double)(
        engine.get_function_address("twice_plus"))
    return fn(3.0, 0.5)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HESSGRAD_KERNEL_CACHE", str(tmp_path))
    return tmp_path


def test_second_compile_loads_the_cached_object(cache, monkeypatch):
    first = llvm.compile_ir(IR)
    assert _call(first) == 6.5
    files = glob.glob(os.path.join(cache, "llvm-*.o"))
    assert len(files) == 1

    def no_parse(text):  # a cache hit must not need the IR
        raise AssertionError("the IR was parsed again")
    binding, _ = llvm.llvm()
    parse = binding.parse_assembly
    monkeypatch.setattr(binding, "parse_assembly",
                        lambda text: parse(text) if text.startswith("target triple")
                        else no_parse(text))
    again = llvm.compile_ir(IR)
    assert _call(again) == 6.5


def test_a_damaged_cache_file_is_ignored_and_replaced(cache):
    llvm.compile_ir(IR)
    (path,) = glob.glob(os.path.join(cache, "llvm-*.o"))
    data = bytearray(open(path, "rb").read())
    data[-10] ^= 0xFF  # one flipped byte in the machine code
    open(path, "wb").write(bytes(data))
    assert llvm._read_entry(path) is None
    assert _call(llvm.compile_ir(IR)) == 6.5
    assert llvm._read_entry(path) is not None  # rewritten by the recompile


def test_different_ir_gets_its_own_entry(cache):
    llvm.compile_ir(IR)
    llvm.compile_ir(IR.replace("2.0", "3.0"))
    assert len(glob.glob(os.path.join(cache, "llvm-*.o"))) == 2


def test_whole_graph_kernel_is_loaded_without_translating_again(cache, monkeypatch):
    import numpy as np

    import hessgrad as hg
    import hessgrad.numpy as hnp
    from hessgrad.compiler import native

    def f(x):
        return hnp.sum(hnp.sin(x) * x ** 2)

    x = np.linspace(0.1, 1.0, 7)
    first = hg.function(hg.grad(f))
    want = first(x)
    assert first.get_concrete_function(x).compiled.backend == "native"

    class NoTranslation:
        def __init__(self, *args):
            raise AssertionError("the kernel was lowered to LLVM IR again")
    monkeypatch.setattr(native, "_Translator", NoTranslation)
    again = hg.function(hg.grad(f))  # a new function: traced and compiled afresh
    np.testing.assert_array_equal(again(x), want)
    assert again.get_concrete_function(x).compiled.backend == "native"
