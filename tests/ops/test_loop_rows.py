"""Loops of independent iterations (``hessians``, ``map_fn``, a counter writing TensorArray
rows) run as batched computations (:mod:`hessgrad.ops.control_flow.rows`): the same results as the
step-by-step loop, which stays in charge of everything else (carried state, reads of the
buffer, kept histories, errors)."""

import numpy as np
import pytest
from scipy.optimize import rosen_hess

import hessgrad as hg
from hessgrad.engine import batching
from hessgrad.ops.control_flow import loops as control_flow, rows as loop_rows


def rosen(x):
    return hg.reduce_sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


@pytest.fixture
def batched_runs(monkeypatch):
    """Counts the loops ``run_rows`` computed (None: the loop ran step by step)."""
    runs = []

    def counting(*args):
        out = loop_rows.run_rows(*args)
        runs.append(out is not None)
        return out
    monkeypatch.setattr(control_flow, "run_rows", counting)
    return runs


def step_by_step(monkeypatch):
    monkeypatch.setattr(control_flow, "run_rows", lambda *args: None)


def while_nodes(graph):
    return [n for n in graph.nodes if n.prim is control_flow._while.primitive]


def rows_loop(n, start, limit, maximum_iterations=None, element=(3,)):
    """A graph: ``for j in range(start, limit): rows[j] = f(x, j)``, plus the final j."""
    g = hg.Graph()
    with g.as_default():
        x = hg.placeholder("float64", element)
        s = hg.placeholder("int64", ())
        lim = hg.placeholder("int64", ()) if limit is None else limit
        rows = hg.TensorArray("float64", size=n, element_shape=element)

        def body(j, rows):
            value = hg.sin(x * hg.cast(j, "float64")) + hg.reduce_sum(x) * hg.cast(j, "float64")
            return j + 1, rows.write(j, value)
        j, rows = hg.while_loop(lambda j, rows: j < lim, body, (s, rows),
                                maximum_iterations=maximum_iterations)
    return g, x, s, lim, j, rows.stack()


def expected_rows(n, x0, start, stop):
    out = np.zeros((n,) + x0.shape)
    for j in range(start, stop):
        out[j] = np.sin(x0 * j) + x0.sum() * j
    return out


def test_hessians_rows_in_one_batch(batched_runs):
    x0 = np.random.default_rng(0).uniform(-2, 2, 40)
    with hg.Graph().as_default() as g:
        x = hg.placeholder("float64", (40,))
        (h,) = hg.hessians(rosen(x), x)
    (node,) = while_nodes(g)
    assert node.params["loop"].rows is not None and "rows_plan" in node.params
    out = g.run(h, {x: x0})
    assert batched_runs == [True]
    np.testing.assert_allclose(out, rosen_hess(x0), rtol=1e-12, atol=1e-12)


def test_compiled_hessians_and_map_fn_match_the_step_by_step_loop(batched_runs, monkeypatch):
    x0 = np.random.default_rng(1).uniform(-2, 2, 30)
    a = np.random.default_rng(2).standard_normal((30, 30))

    def f(x):
        (h,) = hg.hessians(rosen(x) + hg.reduce_sum(hg.tanh(hg.matmul(a, x))), x)
        m = hg.map_fn(lambda r: hg.reduce_sum(r * hg.exp(r)), hg.reshape(x, (10, 3)))
        return h, m
    fast = [np.array(v) for v in hg.function(f)(x0)]
    assert batched_runs == [True, True]
    step_by_step(monkeypatch)
    slow = [np.array(v) for v in hg.function(f)(x0)]
    for u, v in zip(fast, slow):
        np.testing.assert_allclose(u, v, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("start, limit, maximum_iterations", [
    (0, 8, None), (2, 8, None), (3, 7, 2), (5, 5, None), (6, 2, None), (0, 8, 0)])
def test_start_limit_and_maximum_iterations(batched_runs, start, limit, maximum_iterations):
    g, x, s, lim, j, rows = rows_loop(8, start, None, maximum_iterations)
    x0 = np.array([0.5, -1.0, 2.0])
    stop = max(start, min(limit, start + (maximum_iterations if maximum_iterations is not None
                                          else limit)))
    out_j, out_rows = g.run([j, rows], {x: x0, s: start, lim: limit})
    assert batched_runs == [True]
    assert out_j == stop and np.asarray(out_j).dtype == np.int64
    np.testing.assert_allclose(out_rows, expected_rows(8, x0, start, stop), rtol=1e-15)


@pytest.mark.parametrize("budget", [1, 7, 10, 24])
def test_several_batches_of_one_size(batched_runs, monkeypatch, budget):
    # Each row holds a few small intermediates: the budget (bytes) bounds the batch size.
    monkeypatch.setattr(batching, "BATCH_BYTES", budget * 10 * 8)
    g, x, s, lim, j, rows = rows_loop(11, 0, 11)
    x0 = np.array([0.25, 1.5, -0.75])
    out = g.run(rows, {x: x0, s: 0})
    assert batched_runs == [True]
    np.testing.assert_allclose(out, expected_rows(11, x0, 0, 11), rtol=1e-15)


def test_out_of_range_rows_raise_as_the_loop_does(batched_runs):
    g, x, s, lim, j, rows = rows_loop(4, 0, None)
    with pytest.raises(IndexError, match="index 4 is out of range for a TensorArray of size 4"):
        g.run(rows, {x: np.ones(3), s: 0, lim: 6})
    with pytest.raises(IndexError, match="index -1 is out of range"):
        g.run(rows, {x: np.ones(3), s: -1, lim: 2})
    assert batched_runs == [False, False]


def test_a_batch_that_raises_falls_back_to_the_loop(batched_runs, monkeypatch):
    g, x, s, lim, j, rows = rows_loop(6, 0, 6)
    plan = while_nodes(g)[0].params["rows_plan"]

    def fail(*args):
        raise RuntimeError("a batching rule failed")
    monkeypatch.setattr(plan, "run_flagged", fail)
    x0 = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(g.run(rows, {x: x0, s: 0}), expected_rows(6, x0, 0, 6),
                               rtol=1e-15)
    assert batched_runs == [False]


def _loop_of(body, *extra, cond=lambda j, *rest: j < 5):
    """The Rows facts of ``while cond: body`` over (j = 0, a TensorArray, *extra)."""
    with hg.Graph().as_default() as g:
        ta = hg.TensorArray("float64", size=8, element_shape=(3,)).write(0, hg.constant(np.ones(3)))
        hg.while_loop(cond, body, (hg.constant(0, dtype="int64"), ta) +
                      tuple(make() for make in extra))
    (node,) = while_nodes(g)
    assert ("rows_plan" in node.params) == (node.params["loop"].rows is not None)
    return node.params["loop"].rows


def test_loops_whose_iterations_depend_on_each_other_run_step_by_step():
    carried = _loop_of(lambda j, t, acc: (j + 1, t.write(j, acc), acc + 1.0),
                       lambda: hg.constant(np.zeros(3)))
    reads = _loop_of(lambda j, t: (j + 1, t.write(j + 1, t.read(j) + 1.0)))
    shifted = _loop_of(lambda j, t: (j + 1, t.write(j + 1, hg.constant(np.ones(3)))))
    stride = _loop_of(lambda j, t: (j + 2, t.write(j, hg.constant(np.ones(3)))))
    other_cond = _loop_of(lambda j, t: (j + 1, t.write(j, hg.constant(np.ones(3)))),
                          cond=lambda j, t: j <= 5)
    for rows in (carried, reads, shifted, stride, other_cond):
        assert rows is None
    passed_on = _loop_of(lambda j, t, c: (j + 1, t.write(j, c * 2.0), c),
                         lambda: hg.constant(np.ones(3)))
    assert passed_on is not None and passed_on.buffers == [1] and passed_on.limit == 5


def test_gradients_and_batched_runs_of_a_rows_loop(batched_runs):
    x0 = np.random.default_rng(3).standard_normal((4, 3))

    def f(x):
        return hg.reduce_sum(hg.map_fn(lambda r: hg.reduce_sum(hg.sin(r) * r), x) ** 2)
    # A gradient through the loop turns its history on: it then runs step by step.
    np.testing.assert_allclose(hg.function(hg.grad(f))(x0), hg.grad(f)(x0), rtol=1e-13)
    assert batched_runs == []
    # Forward mode: the JVP loop (the values and their tangents) is a rows loop too.
    v0 = np.ones_like(x0)
    jvp = hg.function(lambda x, v: hg.jvp(f, (x,), (v,))[1])
    np.testing.assert_allclose(jvp(x0, v0), hg.jvp(f, (x0,), (v0,))[1], rtol=1e-13)
    assert batched_runs == [True]
    # A batch of calls: the node's batching rule runs the loop once for the whole batch.
    xs = np.stack([x0, 2 * x0])
    np.testing.assert_allclose(hg.vmap(hg.function(f))(xs), [f(x0), f(2 * x0)], rtol=1e-13)


def test_nested_loops_and_integer_rows(batched_runs, monkeypatch):
    # hessians through a map_fn (its body then holds the reverse loop of the map), a map_fn
    # inside a map_fn, and rows of integers.
    x0 = np.random.default_rng(4).standard_normal(6)

    def f(x):
        return hg.reduce_sum(hg.map_fn(lambda r: hg.sin(r) * r * r, x) * hg.exp(x))

    def outputs(x):
        nested = hg.map_fn(lambda row: hg.reduce_sum(hg.map_fn(lambda e: e * hg.sin(e), row)),
                           hg.reshape(x, (3, 2)))
        return hg.hessians(f(x), x)[0], nested, hg.map_fn(lambda r: hg.cast(r * 10, "int64"), x)
    fast = hg.function(outputs)(x0)
    assert batched_runs and all(batched_runs)
    np.testing.assert_allclose(fast[0], hg.hessian(f)(x0), rtol=1e-13, atol=1e-14)
    assert fast[2].dtype == np.int64
    step_by_step(monkeypatch)
    for u, v in zip(fast, hg.function(outputs)(x0)):
        np.testing.assert_array_equal(u, v)


def test_compiled_batches_count_the_values_alive_together():
    # y = sin(x), z = 2 y, w = z + 1: the interpreter keeps y, z and w (3 rows of 5); generated
    # code frees y after z, so at most two of them are alive at once.
    from hessgrad.compiler import compile_plan
    from hessgrad.engine.graph import Plan
    with hg.Graph().as_default() as g:
        x = hg.placeholder("float64", (5,))
        w = hg.sin(x) * 2.0 + 1.0
    plan = Plan(g, [w], [x])
    assert plan.total_batched_size([True]) == 16  # (counted from 1)
    assert compile_plan(plan).total_batched_size([True]) == 10
    assert compile_plan(plan).total_batched_size([False]) == 1


def test_compiled_one_hot_rows_come_from_the_loop_indices():
    # hessians' batches start from one-hot cotangent rows; the fused kernels compute them
    # from their indices instead of reading a dense (batch, n) array: the same bits
    from hessgrad.kernels import loader
    n = 600
    x0 = np.random.default_rng(4).uniform(-2, 2, n)
    fast = hg.function(lambda x: hg.hessians(rosen(x), x)[0])(x0)
    assert any("if i1 == a" in src and f"range({n - 1})" in src  # (1.0 if i1 == a0[i0] ...
               for src in loader._LOADED)
    plain = hg.function(lambda x: hg.hessians(rosen(x), x)[0], jit_kernels=False)(x0)
    np.testing.assert_array_equal(fast, plain)
    np.testing.assert_allclose(fast, rosen_hess(x0), rtol=1e-12, atol=1e-9)
