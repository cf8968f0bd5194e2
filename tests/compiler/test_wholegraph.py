"""Small programs compiled whole into one Numba function (hessgrad.compiler.wholegraph):
which programs take that path, and that they give the uncompiled plan's numbers, types and
errors."""

import warnings

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.compiler import wholegraph
from hessgrad.engine.facts import call
from hessgrad.kernels import tuning

pytest.importorskip("numba")


def chain(x):
    for _ in range(10):
        x = hnp.sin(x) * 0.9 + 0.1
        x = hnp.tanh(x) * 1.1
    return hnp.sum(x)


def rosenbrock(x):
    odd, even = x[0::2], x[1::2]
    return hnp.sum(100.0 * (even - odd ** 2) ** 2 + (1.0 - odd) ** 2)


X = np.random.default_rng(0).standard_normal((6, 3))
Y = np.random.default_rng(1).standard_normal(6)


def mlp(w):
    h = hnp.tanh(X @ hnp.reshape(w[0:12], (3, 4)) + w[12:16])
    r = (h @ hnp.reshape(w[16:20], (4, 1)) + w[20:21])[:, 0] - Y
    return hnp.mean(r * r)


def _compiled(fn, *args, **flags):
    """(outputs, CompiledPlan) of ``hg.function(fn, **flags)`` at ``args``."""
    f = hg.function(fn, **flags)
    return f(*args), f.get_concrete_function(*args).compiled


def _same(out, ref, rtol=1e-12):
    """Equal to ``rtol`` with the same Python types, shapes and dtypes, output by output."""
    outs, refs = (out, ref) if isinstance(ref, tuple) else ((out,), (ref,))
    assert len(outs) == len(refs)
    for a, b in zip(outs, refs):
        assert type(a) is type(b) and np.shape(a) == np.shape(b)
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * max(1.0, np.max(np.abs(b))))


@pytest.mark.parametrize("f, n", [(chain, 10), (rosenbrock, 10), (rosenbrock, 1000), (mlp, 21)])
def test_gradient_and_hvp_run_as_one_function(f, n):
    rng = np.random.default_rng(n)
    x, v = rng.uniform(-1, 1, n), rng.standard_normal(n)
    for fn, args in [(hg.grad(f), (x,)), (hg.hvp(f), (x, v)), (hg.value_and_grad(f), (x,))]:
        out, compiled = _compiled(fn, *args)
        assert compiled.whole_graph and compiled.fused_kernels == 0
        assert "@njit" in compiled.kernel_sources[0]
        assert compiled.backend == "native"
        assert "one native function" in compiled.summary()
        _same(out, hg.function(fn, optimize=False)(*args))
        _same(hg.function(fn)(*args), out)  # the steady-state call
    np.testing.assert_allclose(hg.make_hvp(f)(x)(v), hg.hvp(f)(x, v), rtol=1e-12)


def test_split_hvp_parts_run_as_one_function_each():
    x, v = np.linspace(-1, 1, 10), np.ones(10)
    compiled = hg.function(hg.hvp(rosenbrock)).get_concrete_function(x, v).compiled
    runner = compiled.split([True, False])  # make_hvp: setup at x, products in v
    for part in (runner.setup, runner.apply):
        assert "_K" in part.__globals__  # the whole-graph wrapper calls its Numba function
    np.testing.assert_allclose(runner.at([x]).run([v])[0], hg.hvp(rosenbrock)(x, v),
                               rtol=1e-12)


def test_batched_runs_of_small_programs_run_as_one_function():
    x, V = np.linspace(-1, 1, 10), np.eye(10)
    compiled = hg.function(hg.hvp(rosenbrock)).get_concrete_function(x, V[0]).compiled
    (H,) = compiled.run_batched([x, V], [False, True])  # the rows of a dense Hessian
    assert all("_K" in run.__globals__ for run in compiled._batched.values())
    rows = [hg.function(hg.hvp(rosenbrock), optimize=False)(x, e) for e in V]
    np.testing.assert_allclose(H, np.stack(rows), rtol=1e-12)
    np.testing.assert_allclose(hg.hessian(rosenbrock)(x), H.T, rtol=1e-12)


def test_elementwise_ops_of_one_shape_share_one_loop():
    x = np.linspace(-1, 1, 10)
    _, compiled = _compiled(hg.grad(chain), x)
    source = compiled.kernel_sources[0]
    assert source.count("for i0 in range(10):") == 1
    assert source.count("np.empty") == 1  # the result: no intermediate leaves the loop


def test_views_reductions_and_scatters_agree():
    rng = np.random.default_rng(2)
    A, x = rng.standard_normal((3, 4)), rng.standard_normal(7)
    cases = [
        (hg.grad(lambda A: hnp.sum(hnp.sum(A * A, axis=1) ** 2) + A[0, 1]), (A,)),
        (hg.grad(lambda A: hnp.sum(A[1:, ::2] ** 3)), (A,)),
        (lambda A: hnp.sum(A.T @ A, axis=0), (A,)),
        (lambda A: (A - hnp.sum(A, axis=0, keepdims=True)) * 2.0, (A,)),
        (lambda A: hnp.reshape(A.T, (2, 6)) * 2.0, (A,)),
        (hg.grad(lambda x, A: hnp.sum(A * x[:4] ** 2)), (x, A)),
        (hg.grad(lambda x: hnp.sum(hnp.maximum(x, 0.1) * hnp.minimum(x, 0.3) + hnp.exp(x)
                                   + hnp.log1p(x * x) + hnp.logaddexp(0.0, x))), (x,)),
    ]
    for fn, args in cases:
        out, compiled = _compiled(fn, *args)
        assert compiled.whole_graph
        _same(out, hg.function(fn, optimize=False)(*args))


def test_scatter_terms_sharing_a_loop_then_a_reshape_run_once():
    # The gradient of a difference of two overlapping slices is one accumulate whose two
    # terms share a loop; a reshape of it then closed that loop twice, adding every term
    # twice (the compiled gradient was exactly 2x the eager one).
    x = np.array([0.3, -1.2, 0.5, 2.0, 0.7, -0.4])
    cases = [
        lambda x: hnp.sum(hnp.sin(hnp.reshape(x, (3, 2))[1:] - hnp.reshape(x, (3, 2))[:-1])),
        lambda x: hnp.sum(hnp.sin(hnp.diff(hnp.reshape(x, (2, 3)), axis=1))),
        lambda x: hnp.sum(hnp.cos(hnp.reshape(x, (3, 2))[1:] * hnp.reshape(x, (3, 2))[:-1])),
    ]
    for f in cases:
        out, compiled = _compiled(hg.grad(f), x)
        assert compiled.whole_graph
        _same(out, hg.grad(f)(x))
        _same(hg.function(hg.hvp(f))(x, np.ones(6)), hg.hvp(f)(x, np.ones(6)))


def test_accumulate_terms_split_across_loops_store_what_later_loops_read():
    # The gradient of sum(sin(x) * x[0]) + sum(x) is one accumulate with a 0-d term (at
    # [0]) between two full terms: the 0-d term closes the loop that computed the third
    # term, whose value was not stored (its only user "ran" in that loop), so Numba failed
    # to type the kernel and the graph ran op by op.
    x = np.array([0.3, 0.5, 0.7])
    cases = [
        lambda x: hnp.sum(hnp.sin(x) * x[0]) + hnp.sum(x),
        lambda x: hnp.sum(hnp.exp(x) * hnp.sum(x ** 2)) + hnp.sum(x * x[-1]),
    ]
    for f in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out, compiled = _compiled(hg.grad(f), x)
        assert compiled.whole_graph
        _same(out, hg.grad(f)(x))


def test_views_of_strided_views_read_the_right_elements():
    # A slice of a reversed (or strided) view composes index texts: "3 + -1 * (1 + i1)",
    # whose parentheses were missing (it read x[i0, 2 + i1] instead of x[i0, 2 - i1]).
    x = np.random.default_rng(4).uniform(-1, 1, (5, 6))
    cases = [
        lambda x: (lambda t: t[:-1] * t[1:])(x[:, ::-1][:, 1:] - x[:, ::-1][:, :-1]),
        lambda x: x[::-1][::2][1:] * 2.0 + x[::2][::-1][:2],
        lambda x: hnp.sin(x[1:, ::-2][::-1, 1:]) * x[:4, ::3][::-1, ::-1][:, :1],
    ]
    for f in cases:
        for fn in (f, hg.grad(lambda x: hnp.sum(hnp.sin(f(x))))):
            out, compiled = _compiled(fn, x)
            assert compiled.whole_graph
            _same(out, hg.function(fn, optimize=False)(x))


def test_zero_d_bool_and_fed_outputs_keep_the_plan_types():
    x = np.random.default_rng(3).standard_normal(5)
    cases = [
        (lambda x: (x > 0.5, hnp.sum(x * x)), (x,)),
        (lambda x: hnp.where(x[0] > 0, x[1], x[2]), (x,)),  # a 0-d array
        (lambda x: x[3] * 2.0 - x[1], (x,)),  # a numpy scalar
        (lambda x: x * 2.0 + 1.0 - x * x, (np.array(1.5),)),
        (lambda x: hnp.sin(x) * x + 1.0, (1.5,)),
        (lambda x: (x, x * 2.0 + x * x), (x,)),
    ]
    for fn, args in cases:
        out, compiled = _compiled(fn, *args)
        assert compiled.whole_graph
        _same(out, hg.function(fn, optimize=False)(*args))


def test_unsupported_ops_and_large_graphs_take_the_per_op_path():
    x = np.random.default_rng(4).standard_normal(10)
    for fn, args in [(lambda x: hnp.sum(hnp.sort(x) * x), (x,)),
                     (hnp.tanh, (x,)),  # one op: numpy's own (SIMD) tanh, bit for bit
                     (hg.grad(lambda x: hnp.sum(x[np.array([0, 2, 2])] ** 2)), (x,)),
                     (hg.grad(chain), (np.linspace(-1, 1, tuning.MAX_SIZE_SIMD + 1),))]:
        out, compiled = _compiled(fn, *args)
        assert not compiled.whole_graph
        _same(out, hg.function(fn, optimize=False)(*args))


def test_a_function_numba_cannot_compile_warns_and_runs_op_by_op(monkeypatch):
    def no_such_function(x):
        return x
    monkeypatch.setattr(hg.sin.primitive.lowering, "scalar",
                        lambda x: call(no_such_function, x))
    x = np.linspace(-1, 1, 10)
    with pytest.warns(RuntimeWarning, match="could not compile the whole graph"):
        out, compiled = _compiled(hg.grad(chain), x)
    assert not compiled.whole_graph
    _same(out, hg.function(hg.grad(chain), optimize=False)(x))


def test_jit_kernels_false_disables_it():
    x = np.linspace(-1, 1, 10)
    out, compiled = _compiled(hg.grad(rosenbrock), x, jit_kernels=False)
    assert not compiled.whole_graph and compiled.kernel_sources == []
    _same(out, hg.function(hg.grad(rosenbrock))(x))


def test_feeds_are_validated_and_made_contiguous():
    f = hg.function(hg.grad(rosenbrock))
    x = np.linspace(-1, 1, 20)
    compiled = f.get_concrete_function(x[::2]).compiled
    assert compiled.whole_graph
    with pytest.raises(ValueError, match="placeholder .* has shape"):
        compiled.run([np.zeros(3)])
    strided = compiled.run([x[::2]])[0]  # a view: copied, not read with wrong strides
    np.testing.assert_allclose(strided, compiled.run([x[::2].copy()])[0], rtol=0)
    np.testing.assert_allclose(compiled.run([list(x[::2])])[0], strided, rtol=0)
