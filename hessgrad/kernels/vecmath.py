"""Vectorised float64 ``tanh``, ``sigmoid`` and ``logaddexp``, compiled from LLVM IR once per
process.

numpy evaluates ``tanh`` one element at a time through the C library unless the CPU has
AVX-512 (about 14 ns per element on an AVX2 machine), and ``logaddexp`` and scipy's ``expit``
always (about 12 and 6 ns with AVX-512): they were most of the gradient of a tanh network or
of a logistic loss. XLA emits vector code for them; so does this module: one LLVM module with
a loop per function over the array on SIMD registers, 1 to 2.5 ns per element.

All three share one exponential: ``t = k ln2 + r``, ``|r| <= ln2 / 2``, a degree-13 Taylor
polynomial for ``expm1(r)``, ``2^k`` assembled from the bits of ``k``.

* ``tanh|x| = u / (u + 2)`` with ``u = expm1(2|x|) = 2^k expm1(r) + (2^k - 1)``; ``|x|`` is
  capped at 22, where tanh is 1 in float64, and the sign copied back.
* ``sigmoid(x)`` (scipy's ``expit``): ``e = exp(-|x|)``, ``1 / (1 + e)`` for ``x >= 0`` and
  ``e / (1 + e)`` below, so nothing overflows. ``exp`` is formed as ``2^(k + 64) e^r 2^-64``:
  the exponent bits of ``2^k`` alone cannot express its subnormal results (``x < -708``).
* ``logaddexp(x, y)``: numpy's ``max(x, y) + log1p(e)``, ``e = exp(-|x - y|)``, with
  ``log1p(e) = 2 atanh(s)``, ``s = e / (2 + e)``, or ``ln2 + 2 atanh(s)``, ``s = (e - 1) /
  (e + 3)`` for ``e > sqrt(2) - 1`` (so ``|s| <= 3 - 2 sqrt(2)``), ``atanh`` by its odd series
  to ``s^21``; ``x + ln2`` where ``x == y`` (equal infinities stay), NaN for a NaN operand.

``exp`` also returns its rounding error, and the quotients are corrected by their remainders,
so that sigmoid and log1p round about once. NaN, infinities and signed zeros come out as
numpy's (scipy's). Measured over wide random ranges and dense grids (the tests check these
bounds): ``tanh`` within 3 units in the last place of ``numpy.tanh``; ``sigmoid`` within 1
of the exact value and 2 of ``expit``, except that ``expit`` (``1 / (1 + exp(-x))``) is 0
below ``x = -709.78``, where the exact value is subnormal down to ``x = -745.13``: this
gives the subnormals, as hessgrad's other sigmoids; ``logaddexp`` within 2 of
``numpy.logaddexp`` counted in units of the largest of ``max(x, y)``, ``log1p(e)`` and the
result (the sum cancels to near 0 about ``logaddexp(-0.4, -1.11)``, and both carry the
rounding errors of its terms) and within 1 of the exact ``log1p(exp(z))``.

Each function falls back to numpy's (scipy's ``expit``) for anything but C-contiguous float64
arrays of at least :func:`min_size` elements (set in :mod:`.tuning`; ``logaddexp``: two of the
same shape, or one and a float or 0-d float64 array, either way round), for ``out`` other than
an input array, if llvmlite cannot compile here, or when ``HESSGRAD_VECMATH=0``.
"""

import collections
import ctypes
import math
import os

import numpy as np
import scipy.special

from . import tuning


def _numpy_tanh_is_simd():
    """Whether numpy runs float64 ``tanh`` on an AVX-512 loop here (numpy 2 on such CPUs)."""
    try:
        from numpy.lib.introspect import opt_func_info  # noqa: PLC0415 - numpy >= 2.0
        name = np.tanh.__name__
        target = opt_func_info(func_name=f"^{name}$", signature="float64")[name]["dd"]["current"]
    except Exception:  # noqa: BLE001 - an older numpy or another layout: assume the C library
        return False
    return target.startswith(("X86_V4", "AVX512"))


_NUMPY_TANH_SIMD = _numpy_tanh_is_simd()


_F64 = np.dtype(np.float64)

# 1/n! for n = 2..13: expm1(r) = r + r^2 (1/2! + r/3! + ... + r^11/13!), |r| <= ln2/2 (the
# first omitted term is below 1e-17 relative).
_TAYLOR = [1.0 / math.factorial(n) for n in range(2, 14)]
_LN2 = math.log(2.0)
_LN2_HI = 6.93147180369123816490e-01  # ln 2 split so that k * _LN2_HI is exact for |k| < 2^11
_LN2_LO = 1.90821492927058770002e-10
# Adding 1.5 * 2^52 rounds a double of magnitude below 2^51 to an integer k, which then sits
# in the low bits of the sum's representation: the bits of 2^k need no float-to-int
# conversion (whose result for NaN is poison in LLVM).
_SHIFTER = 1.5 * 2.0**52
_TANH_CAP = 22.0  # tanh(22) rounds to 1.0 in float64
_EXP_FLOOR = -750.0  # exp(-750) rounds to 0 (below half the smallest subnormal)
# 2 atanh(s) = 2s (1 + z P(z)), z = s^2, P(z) = 1/3 + z/5 + ... + z^9/21: for |s| <= 3 - 2
# sqrt(2) the first omitted term (s^22 / 23) is below 1e-18 relative.
_ATANH = [1.0 / (2 * j + 1) for j in range(1, 11)]


def _hex(x):
    """A double as an LLVM IR literal (exact)."""
    return "0x%016X" % np.array(x, dtype=np.float64).view(np.uint64)


def _ir(width, data_offset):
    """IR text of the loops in :data:`_LOOPS` and the math they apply per block."""
    v = f"<{width} x double>"
    vi = f"<{width} x i64>"
    vb = f"<{width} x i1>"
    sfx = f"v{width}f64"

    def splat(x):
        return f"<{', '.join(['double ' + _hex(x)] * width)}>"

    def isplat(k):
        return f"<{', '.join([f'i64 {k}'] * width)}>"

    def fma(a, b, c):
        return f"call {v} @llvm.fmuladd.{sfx}({v} {a}, {v} {b}, {v} {c})"

    def poly(var, coefs, name):
        """Lines for ``%name = coefs[0] + var coefs[1] + var^2 coefs[2] + ...`` by Estrin's
        scheme: neighbours joined with var, then var^2, var^4, ... (a few multiply-adds
        deep; Horner's rule is a chain of them as long as the polynomial, and the loops
        were bound by its latency)."""
        lines, terms, power, level = [], [splat(c) for c in coefs], var, 0
        while len(terms) > 1:
            if level:
                lines.append(f"  %{name}_x{level} = fmul {v} {power}, {power}")
                power = f"%{name}_x{level}"
            pairs = len(terms) // 2
            joined = [f"%{name}" if len(terms) <= 2 else f"%{name}_{level}_{j}"
                      for j in range(pairs)]
            for j, out in enumerate(joined):
                lines.append(f"  {out} = {fma(terms[2 * j + 1], power, terms[2 * j])}")
            terms = joined + terms[2 * pairs:]
            level += 1
        return "\n".join(lines)

    def reduction(bias):
        """Lines from ``%t`` (|t| < 2^10 or NaN) to ``%r``, ``%rl``, ``%rr``, ``%q`` and
        ``%s`` with ``t = k ln2 + r + rl`` (``rl``: what the rounding of ``r`` left),
        ``expm1(r) = r + rr q`` and ``s = 2^(k + bias)``."""
        return f"""  %kd = {fma('%t', splat(1.0 / _LN2), splat(_SHIFTER))}
  %k = fsub {v} %kd, {splat(_SHIFTER)}
  %r1 = {fma('%k', splat(-_LN2_HI), '%t')}
  %r = {fma('%k', splat(-_LN2_LO), '%r1')}
  %r2 = fsub {v} %r1, %r
  %rl = {fma('%k', splat(-_LN2_LO), '%r2')}
{poly('%r', _TAYLOR, 'q')}
  %rr = fmul {v} %r, %r
  %kb = bitcast {v} %kd to {vi}
  %eb = add {vi} %kb, {isplat(1023 + bias)}
  %sb = shl {vi} %eb, {isplat(52)}
  %s = bitcast {vi} %sb to {v}"""

    def two_sum(a, b, name):
        """Lines for ``%name = a + b`` rounded and ``%name_err``, its rounding error (exact:
        ``|a| >= |b|`` or ``a == 0``)."""
        return f"""  %{name} = fadd {v} {a}, {b}
  %{name}_z = fsub {v} %{name}, {a}
  %{name}_err = fsub {v} {b}, %{name}_z"""

    def divide(num, num_lo, den, den_lo, name, recip):
        """Lines for ``%name = (num + num_lo) / (den + den_lo)``, within about half a unit in
        the last place: the rounded quotient ``q`` plus the remainder times ``1 / den``,
        which ``recip(q, 1 - q)`` gives from the names of those two."""
        return f"""  %{name}_q = fdiv {v} {num}, {den}
  %{name}_nq = fneg {v} %{name}_q
  %{name}_r = {fma(f'%{name}_nq', den, num)}
  %{name}_r1 = fadd {v} %{name}_r, {num_lo}
  %{name}_r2 = {fma(f'%{name}_nq', den_lo, f'%{name}_r1')}
  %{name}_q1 = fsub {v} {splat(1.0)}, %{name}_q
  %{name}_inv = {recip(f'%{name}_q', f'%{name}_q1')}
  %{name} = {fma(f'%{name}_r2', f'%{name}_inv', f'%{name}_q')}"""

    pair = f"{{ {v}, {v} }}"
    blocks = f"""
declare {v} @llvm.fabs.{sfx}({v})
declare {v} @llvm.copysign.{sfx}({v}, {v})
declare {v} @llvm.fmuladd.{sfx}({v}, {v}, {v})
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)

define internal {v} @tanh_block({v} %x) alwaysinline {{
  %a = call {v} @llvm.fabs.{sfx}({v} %x)
  %big = fcmp ogt {v} %a, {splat(_TANH_CAP)}
  %c = select {vb} %big, {v} {splat(_TANH_CAP)}, {v} %a
  %t = fmul {v} %c, {splat(2.0)}
{reduction(0)}
  %em = {fma('%rr', '%q', '%r')}
  %s1 = fsub {v} %s, {splat(1.0)}
  %u = {fma('%s', '%em', '%s1')}
  %u2 = fadd {v} %u, {splat(2.0)}
  %th = fdiv {v} %u, %u2
  %out = call {v} @llvm.copysign.{sfx}({v} %th, {v} %x)
  ret {v} %out
}}

; exp(-a) = eh + el for a >= 0 or NaN (el: the rounding error of eh); 2^(k + 64) is normal
; down to exp(-750), where 2^k would not reach the subnormal results
define internal {pair} @exp_neg({v} %a) alwaysinline {{
  %t0 = fneg {v} %a
  %low = fcmp olt {v} %t0, {splat(_EXP_FLOOR)}
  %t = select {vb} %low, {v} {splat(_EXP_FLOOR)}, {v} %t0
{reduction(64)}
  ; e^(r + rl) = uh + lo, where uh + ul = 1 + r exactly
{two_sum(splat(1.0), '%r', 'uh')}
  %lo1 = {fma('%rr', '%q', '%uh_err')}
  %lo = {fma('%rl', '%uh', '%lo1')}
  %sh = fmul {v} %s, %uh
  %sl = fmul {v} %s, %lo
{two_sum('%sh', '%sl', 'e64')}
  %eh = fmul {v} %e64, {splat(2.0**-64)}
  %el = fmul {v} %e64_err, {splat(2.0**-64)}
  %p0 = insertvalue {pair} poison, {v} %eh, 0
  %p1 = insertvalue {pair} %p0, {v} %el, 1
  ret {pair} %p1
}}

; 1 / (1 + e) for x >= 0, e / (1 + e) below, with e = exp(-|x|)
define internal {v} @sigmoid_block({v} %x) alwaysinline {{
  %a = call {v} @llvm.fabs.{sfx}({v} %x)
  %ee = call {pair} @exp_neg({v} %a)
  %eh = extractvalue {pair} %ee, 0
  %el = extractvalue {pair} %ee, 1
  %pos = fcmp oge {v} %x, zeroinitializer
  %nh = select {vb} %pos, {v} {splat(1.0)}, {v} %eh
  %nl = select {vb} %pos, {v} zeroinitializer, {v} %el
{two_sum(splat(1.0), '%eh', 'dh')}
  %dl = fadd {v} %dh_err, %el
{divide('%nh', '%nl', '%dh', '%dl', 'out',
        lambda q, q1: f"select {vb} %pos, {v} {q}, {v} {q1}")}
  ret {v} %out
}}

; numpy's: x + ln2 where x == y (equal infinities too), d = x - y where that is NaN, else
; max(x, y) + log1p(e) with e = exp(-|d|); log1p(e) = c + 2 atanh(s), s = n / d with n = e,
; d = e + 2, c = 0 for e <= sqrt(2) - 1, else n = e - 1, d = e + 3, c = ln2 (|s| <= 3 -
; 2 sqrt(2)); 1 / d = (1 - s) / 2 or (1 - s) / 4
define internal {v} @logaddexp_block({v} %x, {v} %y) alwaysinline {{
  %d = fsub {v} %x, %y
  %a = call {v} @llvm.fabs.{sfx}({v} %d)
  %ee = call {pair} @exp_neg({v} %a)
  %eh = extractvalue {pair} %ee, 0
  %el = extractvalue {pair} %ee, 1
  %big = fcmp ogt {v} %eh, {splat(math.sqrt(2.0) - 1.0)}
  %m1 = select {vb} %big, {v} {splat(-1.0)}, {v} zeroinitializer
  %off = select {vb} %big, {v} {splat(3.0)}, {v} {splat(2.0)}
  %quarter = select {vb} %big, {v} {splat(0.25)}, {v} {splat(0.5)}
{two_sum('%m1', '%eh', 'nh')}
  %nl = fadd {v} %nh_err, %el
{two_sum('%off', '%eh', 'dh')}
  %dl = fadd {v} %dh_err, %el
{divide('%nh', '%nl', '%dh', '%dl', 'sv', lambda q, q1: f"fmul {v} {q1}, %quarter")}
  ; 2 atanh(s) = 2s + 2s z P(z), z = s^2; c + 2s held as two doubles
  %h = fadd {v} %sv, %sv
  %z = fmul {v} %sv, %sv
{poly('%z', _ATANH, 'p')}
  %w = fmul {v} %z, %p
  %clo = select {vb} %big, {v} {splat(_LN2_LO)}, {v} zeroinitializer
  %chi = select {vb} %big, {v} {splat(_LN2_HI)}, {v} zeroinitializer
{two_sum('%chi', '%h', 'ch')}
  %small1 = {fma('%h', '%w', '%clo')}
  %small = fadd {v} %small1, %ch_err
  %l1 = fadd {v} %ch, %small
  ; log1p(e) rounds to e below 2^-54 (where e / 2 would lose subnormal bits)
  %tiny = fcmp olt {v} %eh, {splat(2.0**-54)}
  %l = select {vb} %tiny, {v} %eh, {v} %l1
  %gt = fcmp ogt {v} %d, zeroinitializer
  %m = select {vb} %gt, {v} %x, {v} %y
  %sum = fadd {v} %m, %l
  %nan = fcmp uno {v} %d, %d
  %r = select {vb} %nan, {v} %d, {v} %sum
  %tie = fcmp oeq {v} %x, %y
  %x2 = fadd {v} %x, {splat(_LN2)}
  %out = select {vb} %tie, {v} %x2, {v} %r
  ret {v} %out
}}
"""

    def loop(name, block, n_arrays, scalar=False):
        """``void name(ptr a0, ..., [double s,] ptr out, i64 n)``: ``out[i] = block(a0[i],
        ..., [s])`` for ``i < n``, over the objects' data; the last ``n % width`` elements
        go through aligned buffers."""
        params = [f"ptr %a{j}obj" for j in range(n_arrays)] + (["double %s"] if scalar else [])
        entry, load, tail_load = [], [], []
        for j in range(n_arrays):
            entry += [f"  %buf{j} = alloca {v}, align 64",
                      f"  %a{j}f = getelementptr i8, ptr %a{j}obj, i64 {data_offset}",
                      f"  %a{j} = load ptr, ptr %a{j}f"]
            load += [f"  %p{j} = getelementptr double, ptr %a{j}, i64 %i",
                     f"  %v{j} = load {v}, ptr %p{j}, align 8"]
            tail_load += [f"  store {v} zeroinitializer, ptr %buf{j}, align 64",
                          f"  %t{j} = getelementptr double, ptr %a{j}, i64 %nv",
                          f"  call void @llvm.memcpy.p0.p0.i64(ptr %buf{j}, ptr %t{j}, "
                          "i64 %bytes, i1 false)",
                          f"  %b{j} = load {v}, ptr %buf{j}, align 64"]
        args = [f"{v} %v{j}" for j in range(n_arrays)]
        tail_args = [f"{v} %b{j}" for j in range(n_arrays)]
        if scalar:
            entry += [f"  %s0 = insertelement {v} poison, double %s, i32 0",
                      f"  %sv = shufflevector {v} %s0, {v} poison, <{width} x i32> "
                      "zeroinitializer"]
            args.append(f"{v} %sv")
            tail_args.append(f"{v} %sv")
        nl = "\n"
        return f"""
define void @{name}({', '.join(params)}, ptr %oobj, i64 %n) {{
entry:
{nl.join(entry)}
  %of = getelementptr i8, ptr %oobj, i64 {data_offset}
  %o = load ptr, ptr %of
  %nv = and i64 %n, {-width}
  br label %check
check:
  %i = phi i64 [0, %entry], [%inext, %body]
  %more = icmp ult i64 %i, %nv
  br i1 %more, label %body, label %tail
body:
{nl.join(load)}
  %vo = call {v} @{block}({', '.join(args)})
  %po = getelementptr double, ptr %o, i64 %i
  store {v} %vo, ptr %po, align 8
  %inext = add i64 %i, {width}
  br label %check
tail:
  %rem = sub i64 %n, %nv
  %has = icmp ne i64 %rem, 0
  br i1 %has, label %dotail, label %done
dotail:
  %bytes = shl i64 %rem, 3
{nl.join(tail_load)}
  %bo = call {v} @{block}({', '.join(tail_args)})
  store {v} %bo, ptr %buf0, align 64
  %to = getelementptr double, ptr %o, i64 %nv
  call void @llvm.memcpy.p0.p0.i64(ptr %to, ptr %buf0, i64 %bytes, i1 false)
  br label %done
done:
  ret void
}}
"""
    return blocks + "".join(loop(name, block, n_arrays, scalar)
                            for name, (block, n_arrays, scalar) in _LOOPS.items())


# exported function -> (block it applies, array operands, whether a double operand follows)
_LOOPS = {"vtanh": ("tanh_block", 1, False), "vsigmoid": ("sigmoid_block", 1, False),
          "vlogaddexp": ("logaddexp_block", 2, False),
          "vlogaddexp_scalar": ("logaddexp_block", 1, True)}
_Kernels = collections.namedtuple("_Kernels", "tanh sigmoid logaddexp logaddexp_scalar")
_TANH, _SIGMOID = 0, 1  # positions in _Kernels


def _compile():
    """The compiled loops as ctypes functions, or None when they cannot be had here."""
    if os.environ.get("HESSGRAD_VECMATH", "1") == "0":
        return None
    try:
        from .llvm import DATA_OFFSET, compile_ir, llvm
        binding, _ = llvm()
        binding.initialize_native_target()
        features = binding.get_host_cpu_features()
        # two registers' worth per step (AVX-512: 8 doubles each, else 4): the second's
        # arithmetic fills the first's latencies (logaddexp: 3.0 -> 2.5 ns per element)
        width = 16 if features.get("avx512f") else 8
        engine = compile_ir(_ir(width, DATA_OFFSET))
        addresses = [engine.get_function_address(name) for name in _LOOPS]
    except Exception:  # noqa: BLE001 - no usable llvmlite: numpy's functions are still right
        return None
    fns = []
    for address, (_, n_arrays, scalar) in zip(addresses, _LOOPS.values()):
        types = [ctypes.py_object] * n_arrays + [ctypes.c_double] * scalar
        fn = ctypes.CFUNCTYPE(None, *types, ctypes.py_object, ctypes.c_int64)(address)
        fn.engine = engine  # the machine code lives as long as the functions
        fns.append(fn)
    return _Kernels(*fns)


_KERNELS = []  # [_Kernels or None], compiled on first use


def _kernels():
    if not _KERNELS:
        _KERNELS.append(_compile())
    return _KERNELS[0]


def min_size(fn):
    """The smallest array the compiled loop of ``fn`` (:func:`tanh`, :func:`sigmoid` or
    :func:`logaddexp`) takes; numpy's (scipy's) function runs below (see :mod:`.tuning`)."""
    if fn is tanh:
        return tuning.TANH_MIN_SIZE_SIMD_NUMPY if _NUMPY_TANH_SIMD else \
            tuning.TANH_MIN_SIZE_SCALAR_NUMPY
    return tuning.SIGMOID_MIN_SIZE if fn is sigmoid else tuning.LOGADDEXP_MIN_SIZE


def _kernels_for(x, size):
    """The compiled loops when ``x`` is an array they take (C-contiguous float64, at least
    ``size`` elements) and they exist, else None."""
    if type(x) is np.ndarray and x.dtype == _F64 and x.size >= size and x.flags.c_contiguous:
        return _KERNELS[0] if _KERNELS else _kernels()
    return None


def _unary(loop, size, fallback, x, out):
    """The compiled loop ``loop`` (its position in the loops) applied to ``x`` (into ``out``
    if that is ``x``) where the loops take ``x``, else ``fallback(x[, out=out])``."""
    kernels = _kernels_for(x, size)
    if kernels is not None and (out is None or out is x):
        if out is None:
            out = np.empty(x.shape)
        kernels[loop](x, out, x.size)
        return out
    return fallback(x) if out is None else fallback(x, out=out)


def tanh(x, out=None):
    """``numpy.tanh(x[, out])``, vectorised for large C-contiguous float64 arrays.

    >>> import numpy as np
    >>> x = np.linspace(-3.0, 3.0, 101)
    >>> bool(np.allclose(tanh(x), np.tanh(x), rtol=1e-15, atol=0))
    True
    """
    return _unary(_TANH, tuning.TANH_MIN_SIZE_SIMD_NUMPY if _NUMPY_TANH_SIMD
                  else tuning.TANH_MIN_SIZE_SCALAR_NUMPY, np.tanh, x, out)


def sigmoid(x, out=None):
    """``scipy.special.expit(x[, out])``, vectorised for large C-contiguous float64 arrays.

    >>> import numpy as np, scipy.special
    >>> x = np.linspace(-40.0, 40.0, 101)
    >>> bool(np.allclose(sigmoid(x), scipy.special.expit(x), rtol=1e-15, atol=0))
    True
    """
    return _unary(_SIGMOID, tuning.SIGMOID_MIN_SIZE, scipy.special.expit, x, out)


def logaddexp(x, y, out=None):
    """``numpy.logaddexp(x, y[, out])``, vectorised for two large C-contiguous float64 arrays
    of the same shape, or one and a Python number or 0-d float64 array (either way round).

    >>> import numpy as np
    >>> z = np.linspace(-40.0, 40.0, 101)
    >>> bool(np.allclose(logaddexp(0.0, z), np.logaddexp(0.0, z), rtol=1e-15, atol=0))
    True
    """
    array, other = (x, y) if type(x) is np.ndarray and x.ndim else (y, x)
    kernels = _kernels_for(array, tuning.LOGADDEXP_MIN_SIZE)
    if kernels is not None:
        if isinstance(other, float) or type(other) is int and abs(other) <= 2**53 or \
                type(other) is np.ndarray and other.ndim == 0 and other.dtype == _F64:
            # logaddexp is symmetric (but for which NaN operand's sign a NaN result has)
            if out is None or out is array:
                if out is None:
                    out = np.empty(array.shape)
                kernels.logaddexp_scalar(array, float(other), out, array.size)
                return out
        elif type(other) is np.ndarray and other.shape == array.shape and \
                other.dtype == _F64 and other.flags.c_contiguous and \
                (out is None or ((out is x or out is y) and
                                 (x is y or not np.may_share_memory(x, y)))):
            # (writing into one operand while reading the other: a partial overlap would
            # read elements already written)
            if out is None:
                out = np.empty(x.shape)
            kernels.logaddexp(x, y, out, x.size)
            return out
    return np.logaddexp(x, y) if out is None else np.logaddexp(x, y, out=out)
