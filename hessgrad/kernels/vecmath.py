"""Vectorised float64 ``tanh``, compiled from LLVM IR once per process.

numpy evaluates ``tanh`` one element at a time through the C library unless the CPU has
AVX-512 (about 14 ns per element on an AVX2 machine), which made it most of a tanh network's
gradient; XLA emits vector code for it. This module does the same: ``tanh(x)`` on SIMD
registers, in a loop over the array, about 1 ns per element.

The method: ``tanh|x| = t / (t + 2)`` with ``t = expm1(2|x|)``; ``expm1`` by the usual
reduction ``2|x| = k ln2 + r``, ``|r| <= ln2 / 2``, a degree-13 Taylor polynomial for
``expm1(r)`` and ``expm1 = 2^k expm1(r) + (2^k - 1)``; ``|x|`` is capped at 22, where tanh is
1 in float64, and the sign is copied back (so ``-0.0``, ``inf`` and NaN come out as numpy's).
Results agree with numpy's to a few units in the last place (the tests measure at most 3).

:func:`tanh` falls back to ``numpy.tanh`` for anything but C-contiguous float64 arrays of at
least ``MIN_SIZE`` elements, for ``out`` other than ``x`` itself, if llvmlite cannot compile
here, or when ``HESSGRAD_VECMATH=0``.
"""

import ctypes
import math
import os

import numpy as np

MIN_SIZE = 64  # below this numpy's call is as fast as the ctypes call
_F64 = np.dtype(np.float64)

# 1/n! for n = 2..13: expm1(r) = r + r^2 (1/2! + r/3! + ... + r^11/13!), |r| <= ln2/2 (the
# first omitted term is below 1e-17 relative).
_TAYLOR = [1.0 / math.factorial(n) for n in range(2, 14)]
_LN2_HI = 6.93147180369123816490e-01  # ln 2 split so that k * _LN2_HI is exact for |k| < 2^11
_LN2_LO = 1.90821492927058770002e-10
_CAP = 22.0  # tanh(22) rounds to 1.0 in float64


def _hex(x):
    """A double as an LLVM IR literal (exact)."""
    return "0x%016X" % np.array(x, dtype=np.float64).view(np.uint64)


def _ir(width, data_offset):
    """IR text of ``void vtanh(ptr x_object, ptr out_object, i64 n)``."""
    v = f"<{width} x double>"
    vi = f"<{width} x i64>"

    def splat(x):
        return f"<{', '.join(['double ' + _hex(x)] * width)}>"

    def isplat(k):
        return f"<{', '.join([f'i64 {k}'] * width)}>"
    suffix = f"v{width}f64"
    lines, q = [], splat(_TAYLOR[-1])  # Horner: q = q * r + c, from 1/13! down to 1/2!
    for j, c in enumerate(reversed(_TAYLOR[:-1])):
        lines.append(f"  %q{j} = call {v} @llvm.fmuladd.{suffix}({v} {q}, {v} %r, "
                     f"{v} {splat(c)})")
        q = f"%q{j}"
    horner = "\n".join(lines)
    return f"""
declare {v} @llvm.fabs.{suffix}({v})
declare {v} @llvm.rint.{suffix}({v})
declare {v} @llvm.copysign.{suffix}({v}, {v})
declare {v} @llvm.fmuladd.{suffix}({v}, {v}, {v})
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)

define internal {v} @tanh_block({v} %x) alwaysinline {{
  %a = call {v} @llvm.fabs.{suffix}({v} %x)
  %big = fcmp ogt {v} %a, {splat(_CAP)}
  %c = select <{width} x i1> %big, {v} {splat(_CAP)}, {v} %a
  %y = fmul {v} %c, {splat(2.0)}
  %ky = fmul {v} %y, {splat(1.0 / math.log(2.0))}
  %k = call {v} @llvm.rint.{suffix}({v} %ky)
  %r1 = call {v} @llvm.fmuladd.{suffix}({v} %k, {v} {splat(-_LN2_HI)}, {v} %y)
  %r = call {v} @llvm.fmuladd.{suffix}({v} %k, {v} {splat(-_LN2_LO)}, {v} %r1)
{horner}
  %rr = fmul {v} %r, %r
  %em = call {v} @llvm.fmuladd.{suffix}({v} %rr, {v} {q}, {v} %r)
  %ki = fptosi {v} %k to {vi}
  %kb = add {vi} %ki, {isplat(1023)}
  %sb = shl {vi} %kb, {isplat(52)}
  %s = bitcast {vi} %sb to {v}
  %s1 = fsub {v} %s, {splat(1.0)}
  %t = call {v} @llvm.fmuladd.{suffix}({v} %s, {v} %em, {v} %s1)
  %t2 = fadd {v} %t, {splat(2.0)}
  %th = fdiv {v} %t, %t2
  %out = call {v} @llvm.copysign.{suffix}({v} %th, {v} %x)
  ret {v} %out
}}

define void @vtanh(ptr %xobj, ptr %oobj, i64 %n) {{
entry:
  %buf = alloca {v}, align 64
  %xf = getelementptr i8, ptr %xobj, i64 {data_offset}
  %x = load ptr, ptr %xf
  %of = getelementptr i8, ptr %oobj, i64 {data_offset}
  %o = load ptr, ptr %of
  %nv = and i64 %n, {-width}
  br label %check
check:
  %i = phi i64 [0, %entry], [%inext, %body]
  %more = icmp ult i64 %i, %nv
  br i1 %more, label %body, label %tail
body:
  %px = getelementptr double, ptr %x, i64 %i
  %vx = load {v}, ptr %px, align 8
  %vt = call {v} @tanh_block({v} %vx)
  %po = getelementptr double, ptr %o, i64 %i
  store {v} %vt, ptr %po, align 8
  %inext = add i64 %i, {width}
  br label %check
tail:
  %rem = sub i64 %n, %nv
  %has = icmp ne i64 %rem, 0
  br i1 %has, label %dotail, label %done
dotail:
  %bytes = shl i64 %rem, 3
  store {v} zeroinitializer, ptr %buf, align 64
  %tx = getelementptr double, ptr %x, i64 %nv
  call void @llvm.memcpy.p0.p0.i64(ptr %buf, ptr %tx, i64 %bytes, i1 false)
  %bx = load {v}, ptr %buf, align 64
  %bt = call {v} @tanh_block({v} %bx)
  store {v} %bt, ptr %buf, align 64
  %to = getelementptr double, ptr %o, i64 %nv
  call void @llvm.memcpy.p0.p0.i64(ptr %to, ptr %buf, i64 %bytes, i1 false)
  br label %done
done:
  ret void
}}
"""


def _compile():
    """The compiled ``vtanh`` as a ctypes function, or None when it cannot be had here."""
    if os.environ.get("HESSGRAD_VECMATH", "1") == "0":
        return None
    try:
        from .llvm import DATA_OFFSET, compile_ir, llvm
        binding, _ = llvm()
        binding.initialize_native_target()
        features = binding.get_host_cpu_features()
        width = 8 if features.get("avx512f") else 4
        engine = compile_ir(_ir(width, DATA_OFFSET))
        address = engine.get_function_address("vtanh")
    except Exception:  # noqa: BLE001 - no usable llvmlite: numpy's tanh is still right
        return None
    fn = ctypes.CFUNCTYPE(None, ctypes.py_object, ctypes.py_object, ctypes.c_int64)(address)
    fn.engine = engine  # the machine code lives as long as the function object
    return fn


_KERNEL = []  # [ctypes function or None], compiled on first use


def _kernel():
    if not _KERNEL:
        _KERNEL.append(_compile())
    return _KERNEL[0]


def tanh(x, out=None):
    """``numpy.tanh(x[, out])``, vectorised for large C-contiguous float64 arrays.

    >>> import numpy as np
    >>> x = np.linspace(-3.0, 3.0, 101)
    >>> bool(np.allclose(tanh(x), np.tanh(x), rtol=1e-15, atol=0))
    True
    """
    if type(x) is np.ndarray and x.dtype == _F64 and x.size >= MIN_SIZE and \
            (out is None or out is x) and x.flags.c_contiguous:
        kernel = _KERNEL[0] if _KERNEL else _kernel()
        if kernel is not None:
            if out is None:
                out = np.empty(x.shape)
            kernel(x, out, x.size)
            return out
    return np.tanh(x) if out is None else np.tanh(x, out=out)
