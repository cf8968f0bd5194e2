"""The typed loop representation of whole-graph kernels (hessgrad.compiler.loops): one kernel,
two back ends -- its Python text compiled by Numba, its LLVM IR by llvmlite -- with the same
bits, buffers and scalar results."""

import math

import numpy as np
import pytest

from hessgrad.compiler import loops, native
from hessgrad.compiler.scalar import BOOL, F64, Array, Binary, Call, Const, Load, Var
from hessgrad.engine.facts import call, select
from hessgrad.kernels import loader, scalar as helpers

pytest.importorskip("llvmlite")
pytest.importorskip("numba")


def _kernel():
    """x (3, 4), y () -> (r: (4, 3) float64, mask (12,) bool, total float64 scalar)."""
    x, y = Array("v0", (3, 4), F64), Array("a1", (), F64)
    s, r, flat, mask = (Array("v2", (4, 3), F64), Array("v3", (4, 3), F64),
                        Array("v4", (12,), F64), Array("v5", (12,), BOOL))
    yv, total, t, e = Var("v1"), Var("v6"), Var("s7"), Var("l0")
    body = [loops.Assign(yv, Load(y, ())), loops.Alloc(s, zero=True),
            loops.Alloc(r, zero=False), loops.Assign(total, Const(0.0))]
    per_element = loops.nest((3, 4), ["i0", "i1"], [
        loops.Assign(e, Load(x, ["i0", "i1"])),
        loops.Assign(t, call(helpers.logaddexp, e, yv) ** Const(2) - call(math.sin, e) / yv),
        loops.AddTo(Load(s, ["i1", "i0"]), t),
        loops.Store(Load(r, ["i1", "i0"]), select(t > Const(1.0), t, -e)),
        loops.AddTo(total, call(helpers.sigmoid, t) * Const(0.5))])
    body += per_element + [loops.Reshape(flat, r), loops.Alloc(mask, zero=False)]
    body += loops.nest((12,), ["i0"], [loops.Store(Load(mask, ["i0"]), Binary(
        "!=", call(math.isfinite, Load(flat, ["i0"])), Load(flat, [11]) < 0.0))])
    return loops.Kernel([x, y], body, [flat, mask, total, s])


def test_one_kernel_two_back_ends_same_bits():
    kernel = _kernel()
    source = loops.python_source(kernel)
    assert source.count("for i0 in range(") == 2 and "v4 = v3.reshape((12,))" in source
    x = np.random.default_rng(0).uniform(-2, 2, (3, 4))
    y = np.array(0.7)
    by_numba = loader.load(source)(x, y)
    compiled = native.NativeKernel(kernel, source)
    ns = {"_np": np, "x": x, "y": y}
    lines, texts = compiled.call_lines(["x", "y"], ns)
    exec("\n".join(lines + ["out = [" + ", ".join(texts) + "]"]), ns)  # noqa: S102
    by_native = ns["out"]
    assert len(by_native) == 4
    for a, b in zip(by_native, by_numba):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_array_equal(a, b)
    # the first result is the reshape of a buffer; the last a zero-filled accumulator
    expected = np.zeros((4, 3))
    t = np.logaddexp(x, 0.7) ** 2.0 - np.sin(x) / 0.7
    expected += t.T
    np.testing.assert_allclose(by_native[3], expected, rtol=1e-14)
    np.testing.assert_allclose(by_native[0], np.where(t > 1.0, t, -x).T.reshape(12),
                               rtol=1e-14)


def test_what_the_llvm_back_end_does_not_lower_raises_unsupported():
    x = Array("v0", (3,), F64)
    for value in (Const(True) + Const(True),  # Python's arithmetic on booleans
                  Call(print, [Load(x, [0])])):  # no lowering for this function
        kernel = loops.Kernel([x], [loops.Assign(Var("t"), value)], [])
        with pytest.raises(native.Unsupported):
            native.NativeKernel(kernel, loops.python_source(kernel))
