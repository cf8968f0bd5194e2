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
    assert llvm._read_object(path) is None
    assert _call(llvm.compile_ir(IR)) == 6.5
    assert llvm._read_object(path) is not None  # rewritten by the recompile


def test_different_ir_gets_its_own_entry(cache):
    llvm.compile_ir(IR)
    llvm.compile_ir(IR.replace("2.0", "3.0"))
    assert len(glob.glob(os.path.join(cache, "llvm-*.o"))) == 2
