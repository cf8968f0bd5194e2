"""Multi-output fused kernels (hessgrad.compiler.fusion): groups with shared intermediates,
fetched intermediates, sums and scatters into sliced results, kept convex; the numbers of the
unfused program and of the plan interpreter to rounding."""

import warnings

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp

pytest.importorskip("numba")

N = 5000  # above tuning.MAX_SIZE: the per-op path with fused kernels


def _compiled(fn, *args):
    """The compiled program's ops after fusion, once the results are checked against the
    program without kernels and the plan interpreter."""
    f = hg.function(fn)
    got = f(*args)
    for flags in (dict(jit_kernels=False), dict(optimize=False)):
        want = hg.function(fn, **flags)(*args)
        for a, b in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            assert np.asarray(a).dtype == np.asarray(b).dtype
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    return f.get_concrete_function(*args).compiled


def ext_rosen(x):
    odd, even = x[0::2], x[1::2]
    return hnp.sum(100.0 * (even - odd ** 2) ** 2 + (1.0 - odd) ** 2)


X = np.random.default_rng(0).uniform(-1.5, 1.5, N)
V = np.random.default_rng(1).standard_normal(N)


def test_intermediate_used_twice_is_computed_once_in_one_kernel():
    def f(x):
        t = x * 2.0 + 1.0
        return t * t - t / (1.0 + x * x)
    c = _compiled(f, X)
    assert c.counts_after == {"fused": 1}
    assert c.kernel_sources[0].count("* 2.0") == 1


def test_fetched_intermediate_is_an_extra_output():
    def f(x):
        t = x * 3.0 - 1.0
        return t, hnp.sum(t * x), t * t + x
    c = _compiled(f, X)
    assert c.counts_after == {"fused": 1}
    (op,) = c.program.ops
    assert op.multi and len(op.outs) == 3
    assert isinstance(hg.function(f)(X)[1], np.float64)  # the sum keeps numpy's type


def test_a_non_fused_op_between_two_fused_ones_splits_the_group():
    def f(x):
        a = x * 2.0 + 1.0
        return a * hnp.exp(a) + a  # exp (a numpy ufunc) reads a and feeds the same tree
    c = _compiled(f, X)
    assert c.counts_after == {"fused": 2, "exp": 1}
    first, exp, second = c.program.ops
    assert exp.args == [first.outs[0]] and set(exp.outs) <= set(second.args)


@pytest.mark.parametrize("task", ["grad", "hvp"])
def test_strided_accumulate_is_written_by_the_kernel(task):
    if task == "grad":
        c = _compiled(hg.grad(ext_rosen), X)
    else:
        c = _compiled(hg.hvp(ext_rosen), X, V)
    assert c.counts_after == {"fused": 1}  # the strided views are read through x (and v)
    source = c.kernel_sources[0]
    assert "np.empty((5000,))" in source and "[1 + 2 * i0] = " in source  # no zero-fill
    assert "a0[2 * i0]" in source


def test_a_view_used_elsewhere_stays():
    def f(x):
        head = x[1000:]
        return head, hnp.sum(head * head * 0.5)
    c = _compiled(f, X)
    assert c.counts_after == {"getitem": 1, "fused": 1}
    assert "[1000 + i0]" in c.kernel_sources[0]


def test_value_and_gradient_in_one_kernel():
    c = _compiled(hg.value_and_grad(ext_rosen), X)
    assert c.counts_after.get("fused") == 1
    value, grad = hg.function(hg.value_and_grad(ext_rosen))(X)
    assert isinstance(value, np.float64)


def test_two_dimensional_slices_and_partly_covered_results():
    def f(w):
        return hnp.sum(hnp.sin(w[::2, 1:]) * w[::2, 1:] ** 2) + \
            hnp.sum(w[1::2, :-1] ** 3 * 0.5)
    w = X.reshape(50, 100)
    c = _compiled(hg.grad(f), w)
    assert "accumulate" not in c.counts_after
    assert any("np.zeros((50, 100))" in s for s in c.kernel_sources)  # two corners stay 0


def test_overlapping_slices_accumulate_in_a_kernel_of_their_own():
    """Terms into overlapping slices cannot join an elementwise loop; their accumulate runs
    as its own kernel, one loop per term in numpy's order: the same bits."""
    def f(w):
        return hnp.sum(hnp.sin(w[:, 1:]) * w[:, 1:]) + hnp.sum(w[:, :-1] ** 3) + \
            hnp.sum(hnp.cos(w[::2]) * 2.0) + hnp.sum(w[3:7, 2:] * 0.5)
    w = X.reshape(50, 100)
    c = _compiled(hg.grad(f), w)
    assert "accumulate" not in c.counts_after
    source = next(s for s in c.kernel_sources if "r0 = np.zeros((50, 100))" in s)
    assert source.count("+=") == 5 and "r0[2 * i0, i1] +=" in source  # one is constant
    np.testing.assert_array_equal(hg.function(hg.grad(f))(w),
                                  hg.function(hg.grad(f), jit_kernels=False)(w))


def _same_bits_as_unfused(fn, *args):
    got = hg.function(fn)(*args)
    want = hg.function(fn, jit_kernels=False)(*args)
    for a, b in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        np.testing.assert_array_equal(a, b)
    return got


def test_shifted_slices_accumulate_inside_their_terms_loop():
    """Gradients of x[1:] and x[:-1] go into slices one element apart: the loop that
    computes the terms adds them, keeping the later-starting term's value for one
    iteration, in numpy's order (the same bits as the unfused program)."""
    from scipy.optimize import rosen, rosen_der

    def f(x):
        return hnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    c = _compiled(hg.grad(f), X)
    assert c.counts_after == {"fused": 1}
    (source,) = c.kernel_sources
    assert "k2_0 = t" in source and f"[{N - 1}] = r" in source  # kept; the last one after
    grad = _same_bits_as_unfused(hg.grad(f), X)
    np.testing.assert_allclose(grad, rosen_der(X), rtol=1e-12, atol=1e-12)
    assert np.isclose(hg.function(f)(X), rosen(X))


@pytest.mark.parametrize("cols", [1, 2, 3, 7, 40])
def test_shifted_slices_of_rows_in_any_order(cols):
    # terms into w[:, 2:], w[:, :-2] and w[:, 1:-1] of rows of (cols + 2) elements: shifts of
    # 0, 1 and 2 in either order of the terms, down to a slice shorter than the shifts
    def f(w):
        return hnp.sum(hnp.sin(w[:, 2:]) * w[:, :-2]) + hnp.sum(w[:, 1:-1] ** 3 * 0.5)
    w = np.random.default_rng(cols).uniform(-1, 1, (5000 // cols + 1, cols + 2))
    c = _compiled(hg.grad(f), w)
    assert "accumulate" not in c.counts_after
    if cols > 1:  # (one column each: three disjoint slices, stored as they are)
        assert any("if i1 >= 2:" in s for s in c.kernel_sources)
    got = _same_bits_as_unfused(hg.grad(f), w)
    want = np.zeros_like(w)
    want[:, 2:] += np.cos(w[:, 2:]) * w[:, :-2]
    want[:, :-2] += np.sin(w[:, 2:])
    want[:, 1:-1] += 1.5 * w[:, 1:-1] ** 2
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_integer_indices_accumulate_on_numpy():
    c = _compiled(hg.grad(lambda w: hnp.sum(w[:, 1] ** 2 * 2.0 + w[:, 3] ** 3)),
                  X.reshape(1000, 5))
    assert c.counts_after.get("accumulate") == 1 and c.counts_after.get("fused")


def test_boolean_mask_as_kernel_output():
    def f(x):
        m = x > 0.25
        return m, hnp.where(m, x * x, -x) * 2.0 + 1.0
    c = _compiled(f, X)
    assert c.counts_after == {"fused": 1}
    assert "np.bool_" in c.kernel_sources[0]


def test_float32_stays_unfused():
    c = hg.function(hg.grad(ext_rosen))
    c(X.astype(np.float32))
    assert "fused" not in c.get_concrete_function(X.astype(np.float32)).compiled.counts_after


def _mlp(x, w):
    h = hnp.tanh(x @ hnp.reshape(w[:60], (6, 10)) + w[60:70])
    return hnp.mean((h @ w[70:80] - hnp.sin(x[:, 0])) ** 2)


@pytest.mark.parametrize("name", ["rosenbrock", "mlp"])
def test_dense_hessians_of_batched_programs(name):
    rng = np.random.default_rng(2)
    if name == "rosenbrock":
        f, x = ext_rosen, rng.uniform(-1.5, 1.5, 2000)
    else:
        data = rng.standard_normal((1000, 6))
        f, x = (lambda w: _mlp(data, w)), 0.3 * rng.standard_normal(80)
    H = hg.hessian(f)(x)
    np.testing.assert_allclose(H, hg.hessian(f, detect_sparsity=False)(x), rtol=1e-12,
                               atol=1e-12)
    eager = np.stack([hg.hvp(f)(x, e) for e in np.eye(x.size)[:: max(1, x.size // 40)]])
    np.testing.assert_allclose(H[:: max(1, x.size // 40)], eager, rtol=1e-12, atol=1e-12)


def test_wide_trees_split_into_kernels_of_bounded_size():
    # Numba's compile time grows faster than linearly with a kernel, above all with its
    # arguments: the gradient of a 150-step unrolled RNN w.r.t. its weights (an add_n of 150
    # outer products) made one kernel of 165 arguments that took 15 s to compile.
    from hessgrad.kernels.tuning import MAX_GROUP_ARGS
    from hessgrad.ops.core import add_n
    cols = np.random.default_rng(2).standard_normal((60, 50, 1))
    rows = np.random.default_rng(3).standard_normal((60, 1, 50))

    def chain(a, b):
        total = a[0] * b[0]
        for k in range(1, 60):
            total = total + a[k] * b[k]
        return total
    c = _compiled(chain, cols, rows)
    fused = [op for op in c.program.ops if op.name == "fused"]
    assert len(fused) >= 3
    for op in fused:
        assert len(op.nodes) <= MAX_GROUP_ARGS and len(op.args) <= MAX_GROUP_ARGS

    def wide(a, b):
        return add_n(*[a[k] * b[k] for k in range(60)])
    c = _compiled(wide, cols, rows)
    assert c.counts_after.get("add_n") == 1  # 60 operands: stays on numpy
    assert all(len(op.args) <= MAX_GROUP_ARGS for op in c.program.ops if op.name == "fused")


@pytest.mark.parametrize("transform", ["jacfwd", "jacrev"])
def test_jacobian_bases_are_computed_in_kernels_not_read(transform):
    """A traced Jacobian pushes slices of an identity through the function; folded, they are
    dense constants. Kernels compute them from their indices, and a diagonal constant term of
    an accumulate adds only its diagonal: no dense constant is read, same bits."""
    def rosen(x):
        return hnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)

    x = np.linspace(-1, 1, 100)
    f = getattr(hg, transform)(hg.grad(rosen))
    c = _compiled(f, x)
    assert c.counts_after["fused"] == 2 and "accumulate" not in c.counts_after
    for op in c.program.ops:
        assert all(np.ndim(c.program.consts[a]) < 2 for a in op.args if a in c.program.consts)
    assert any("if i1 - i0 == -1 else 0.0" in s for s in c.kernel_sources)
    assert any("for i in range(0, 100):" in s for s in c.kernel_sources)  # the diagonal
    np.testing.assert_array_equal(hg.function(f)(x), hg.function(f, jit_kernels=False)(x))
    from scipy.optimize import rosen_hess
    np.testing.assert_allclose(hg.function(f)(x), rosen_hess(x), rtol=1e-12, atol=1e-9)


def test_scatters_into_a_size_zero_gradient_compile():
    """The gradient of a roll of a size-0 array accumulates slices of an empty array: it
    compiles (it fell back to the uncompiled plan with a warning: 'zero-size array to
    reduction operation maximum'); found by the op-by-op harness."""
    f = lambda x: hnp.sum(hnp.roll(x, 1, axis=1) ** 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = hg.function(hg.grad(f))(np.zeros((0, 3)))
    assert g.shape == (0, 3)
