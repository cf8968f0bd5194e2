"""Batched ``while`` and ``cond`` (their rules in hessgrad.ops.control_flow): one run for the whole
batch equals one run per member (the fallback, which must not be taken where the batch can
run at once), for vmap, Function.map (compiled and plan routes) and batched Hessian-vector
products; against JAX's vmap of lax.while_loop / lax.cond / lax.scan when installed."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.engine.batching import run_members
from hessgrad.engine.graph import Graph, Plan
from hessgrad.ops.control_flow import branches as cond_module, loops as while_module, members

rng = np.random.default_rng(3)
X = rng.standard_normal((7, 3))


@pytest.fixture
def fallbacks(monkeypatch):
    """The control-flow ops run member by member (``run_members``), by name."""
    calls = []

    def spy(prim, *args, **kwargs):
        calls.append(prim.name)
        return run_members(prim, *args, **kwargs)
    monkeypatch.setattr(while_module, "run_members", spy)
    monkeypatch.setattr(cond_module, "run_members", spy)
    return calls


def per_member(f, X, optimize=True):
    g = hg.function(f, optimize=optimize)
    return np.stack([np.asarray(g(x)) for x in X])


# --- functions ---------------------------------------------------------------------------
def until_large(x):  # trip counts differ between members
    _, s = hg.while_loop(lambda i, s: hnp.sum(s ** 2) < 4.0,
                         lambda i, s: (i + 1, s * 1.5 + 0.1 * hnp.sin(x)), (0, x))
    return hnp.sum(s ** 3)


def until_large_capped(x):
    i, s = hg.while_loop(lambda i, s: hnp.sum(s ** 2) < 40.0,
                         lambda i, s: (i + 1, s * 1.5 + 0.1), (0, x), maximum_iterations=3)
    return s * hg.cast(i, "float64")


def scan_loss(x):  # a fixed trip count: the predicate is not batched
    ys = hg.scan(lambda a, e: hnp.sin(a) * e + a, x, initializer=hnp.sum(x) * 0.0 + 1.0)
    return hnp.sum(ys ** 2 * x)


def trips(x):  # 1 to 4 iterations
    return hnp.minimum(hg.cast(hnp.abs(x[0]) * 3.0, "int64") + 1, 4)


def rows_written(x):  # a fixed-size TensorArray written for each member's own trip count
    n = trips(x)
    ta = hg.TensorArray("float64", size=5, element_shape=(3,))
    _, ta = hg.while_loop(lambda i, ta: i < n, lambda i, ta: (
        i + 1, ta.write(i, hnp.sin(x) * hg.cast(i + 1, "float64"))), (0, ta))
    return ta.stack()


def rows_loss(x):
    return hnp.sum(rows_written(x) ** 2 * x)


def grown(x):  # a dynamic TensorArray grows differently per member
    n = trips(x)
    ta = hg.TensorArray("float64", size=0, dynamic_size=True, element_shape=(3,))
    _, ta = hg.while_loop(lambda i, ta: i < n, lambda i, ta: (
        i + 1, ta.write(i, x * hg.cast(i + 1, "float64"))), (0, ta))
    return ta.read(0) + ta.gather([0]).sum() + hg.cast(ta.size(), "float64")


def nested(x):  # the inner trip count depends on the outer state
    def outer(i, s):
        _, t = hg.while_loop(lambda j, t: hnp.sum(t ** 2) < 2.0 + hg.cast(i, "float64"),
                             lambda j, t: (j + 1, t * 1.3 + 0.01), (0, s))
        return i + 1, hnp.sin(t)
    _, s = hg.while_loop(lambda i, s: (i < 4) & (hnp.sum(s) < 3.0), outer, (0, x))
    return hnp.sum(s ** 2)


def mixed_in(x):  # c enters unbatched and becomes batched after one step
    _, c, s = hg.while_loop(lambda i, c, s: i < 3,
                            lambda i, c, s: (i + 1, c + s, s * 0.5), (0, 0.0, hnp.sum(x)))
    return c


def branch(x):
    return hg.cond(x[0] > 0, lambda: x ** 2, lambda: hnp.sin(x) * x[1])


def shared_branch(x):  # the predicate does not depend on x
    return hg.cond(hnp.sum(hg.constant(A0)) > 0, lambda: x ** 2, lambda: -x)


A0 = np.array([1.0, -0.5])


def branch_in_loop(x):  # a batched cond inside a loop with a batched predicate writes rows
    ta = hg.TensorArray("float64", size=6, element_shape=(3,))

    def body(i, s, ta):
        ta = hg.cond(s[0] > 0, lambda: ta.write(i, s * s), lambda: ta.write(i, -s))
        return i + 1, s - 0.4, ta
    _, s, ta = hg.while_loop(lambda i, s, ta: (i < 6) & (hnp.sum(s) > -2.0), body, (0, x, ta))
    return ta.stack()


def indexes_past_end(x):  # a finished member would read x[3]: runs member by member
    n = hnp.where(x[0] > 0, 3, 1)
    _, s = hg.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + x[i + 3 - n] ** 2),
                         (0, 0.0))
    return s


BATCHED = {
    "trip-counts-differ": until_large,
    "maximum-iterations": until_large_capped,
    "scan": scan_loss,
    "tensor-array-rows": rows_written,
    "dynamic-tensor-array": grown,
    "nested-loops": nested,
    "flags-fixed-point": mixed_in,
    "cond-batched-pred": branch,
    "cond-shared-pred": shared_branch,
    "cond-in-loop": branch_in_loop,
}
LOSSES = {
    "trip-counts-differ": until_large,
    "scan": scan_loss,
    "tensor-array-rows": rows_loss,
    "nested-loops": nested,
    "cond-batched-pred": lambda x: hnp.sum(branch(x) ** 3),
    "cond-in-loop": lambda x: hnp.sum(branch_in_loop(x) ** 3 * x),
}


@pytest.mark.parametrize("optimize", [True, False], ids=["compiled", "plan"])
@pytest.mark.parametrize("name", list(BATCHED))
def test_map_runs_the_batch_at_once(name, optimize, fallbacks):
    f = BATCHED[name]
    expected = per_member(f, X, optimize)
    np.testing.assert_allclose(hg.function(f, optimize=optimize).map(X), expected,
                               rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(hg.vmap(f)(X), expected, rtol=1e-13, atol=1e-13)
    assert fallbacks == []


@pytest.mark.parametrize("transform", [hg.grad, hg.hessian])
@pytest.mark.parametrize("name", list(LOSSES))
def test_map_of_derivatives_through_batched_loops(name, transform, fallbacks):
    # the gradient runs the reverse loop on the batch (each member reads its own trip count
    # of history rows); the Hessian its JVP loops too
    g = transform(LOSSES[name])
    expected = np.stack([np.asarray(g(x)) for x in X])
    np.testing.assert_allclose(hg.function(g).map(X), expected, rtol=1e-12, atol=1e-12)
    assert fallbacks == []


@pytest.mark.parametrize("name", list(LOSSES))
def test_hessian_from_batched_hvps_equals_hvp_columns(name, fallbacks):
    x = X[1]
    hvp = hg.function(hg.hvp(LOSSES[name]))  # one vector at a time
    columns = np.stack([hvp(x, e) for e in np.eye(3)])
    np.testing.assert_allclose(hg.hessian(LOSSES[name])(x), columns, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(hg.make_hvp(LOSSES[name])(x).batched(np.eye(3)), columns,
                               rtol=1e-12, atol=1e-12)
    assert fallbacks == []


def test_an_op_raising_for_a_finished_member_runs_member_by_member(fallbacks):
    X2 = np.array([[1.0, 2.0, 3.0], [-1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
    np.testing.assert_allclose(hg.function(indexes_past_end).map(X2), [14.0, 9.0, 5.25])
    assert "while" in fallbacks
    g = hg.grad(indexes_past_end)
    np.testing.assert_allclose(hg.function(g).map(X2), np.stack([g(x) for x in X2]))


def test_a_real_error_still_raises_on_a_batch():
    def past_end(x):
        return hg.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s + x[i]), (0, 0.0))[1]
    with pytest.raises(IndexError, match="out of bounds"):
        hg.function(past_end).map(X)


def test_histories_hold_each_members_own_rows(fallbacks):
    # the hidden history outputs (read by the reverse loop) equal the per-member ones,
    # zero-padded past each member's trip count
    with Graph().as_default() as graph:
        x = hg.placeholder("float64", shape=(3,))
        loss = until_large(x)
        (dx,) = hg.gradients(loss, [x])
    node = next(n for n in graph.nodes if n.prim.name == "while" and n.params["record"].on)
    fetches = list(node.outputs)
    plan = Plan(graph, fetches, [x])
    batched = plan.run_batched([X], [True])
    members = [plan.run([x_]) for x_ in X]
    for j, out in enumerate(batched):
        parts = [m[j] for m in members]
        longest = max(np.shape(p)[0] for p in parts) if np.ndim(parts[0]) else None
        if longest is not None and len({np.shape(p) for p in parts}) > 1:
            parts = [np.concatenate([p, np.zeros((longest - len(p),) + p.shape[1:])])
                     for p in parts]
        np.testing.assert_array_equal(out, np.stack(parts))
    np.testing.assert_allclose(Plan(graph, [dx], [x]).run_batched([X], [True])[0],
                               np.stack([Plan(graph, [dx], [x]).run([x_])[0] for x_ in X]))
    assert fallbacks == []


def test_run_flagged_keeps_unbatched_results_unbroadcast():
    with Graph().as_default() as graph:
        x = hg.placeholder("float64", shape=(3,))
        c = hg.placeholder("float64", shape=())
        y, z = x * c, c + 1.0
    plan = Plan(graph, [y, z], [x, c])
    (vy, vz), flags = plan.run_flagged([X, 2.0], [True, False])
    assert flags == [True, False] == plan.batched_fetches([True, False])
    assert np.shape(vz) == () and vy.shape == X.shape


# --- the TensorArray rules under a mask -----------------------------------------------------
def test_write_skips_inactive_members_and_their_indices():
    write = hg.ops.control_flow.tensor_array_write.primitive
    buf = np.zeros((3, 2, 2))
    idx = np.array([0, 7, 1])      # member 1 has finished: its index is past the end
    value = np.arange(6.0).reshape(3, 2)
    with members.Masked(np.array([True, False, True])):
        out = write.batch_values(write, [buf, idx, value], [True, True, True], {}, 3)
    assert out is buf  # in place
    np.testing.assert_array_equal(out, [[[0, 1], [0, 0]], [[0, 0], [0, 0]],
                                        [[0, 0], [4, 5]]])
    with pytest.raises(IndexError, match="TensorArray.write"):
        write.batch_values(write, [buf, idx, value], [True, True, True], {}, 3)


def test_read_of_an_inactive_member_is_never_out_of_range():
    read = hg.ops.control_flow.tensor_array_read.primitive
    buf = np.arange(12.0).reshape(3, 2, 2)
    idx = np.array([1, -1, 0])
    with members.Masked(np.array([True, False, True])):
        out = read.batch_values(read, [buf, idx], [True, True], {}, 3)
    np.testing.assert_array_equal(out[[0, 2]], [[2, 3], [8, 9]])
    with pytest.raises(IndexError, match="TensorArray.read"):
        read.batch_values(read, [buf, idx], [True, True], {}, 3)


# --- against JAX ------------------------------------------------------------------------------
@pytest.mark.slow
def test_against_jax_vmap_of_control_flow():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    def jwhile(x):
        _, s = jax.lax.while_loop(lambda c: jnp.sum(c[1] ** 2) < 4.0,
                                  lambda c: (c[0] + 1, c[1] * 1.5 + 0.1 * jnp.sin(x)), (0, x))
        return jnp.sum(s ** 3)

    def jscan(x):
        _, ys = jax.lax.scan(lambda a, e: (jnp.sin(a) * e + a,) * 2, jnp.sum(x) * 0.0 + 1.0, x)
        return jnp.sum(ys ** 2 * x)

    def jcond(x):
        return jax.lax.cond(x[0] > 0, lambda: x ** 2, lambda: jnp.sin(x) * x[1])

    for ours, theirs in [(until_large, jwhile), (scan_loss, jscan), (branch, jcond)]:
        np.testing.assert_allclose(hg.vmap(ours)(X), jax.vmap(theirs)(X), rtol=1e-12)
    # (JAX's reverse mode refuses a while_loop with a dynamic trip count: forward mode)
    np.testing.assert_allclose(hg.vmap(hg.grad(until_large))(X),
                               jax.vmap(jax.jacfwd(jwhile))(X), rtol=1e-12)
    np.testing.assert_allclose(hg.hessian(scan_loss)(X[0]), jax.hessian(jscan)(X[0]),
                               rtol=1e-12, atol=1e-12)


def test_compiled_batched_program_keeps_a_loop_with_run_time_history_lengths():
    # the loop's histories have run-time lengths; the batched program calls its batching
    # rule anyway (whose blocks run compiled per batch size and flags), not the plan
    f = hg.function(hg.grad(until_large))
    f.map(X)
    compiled = f.get_concrete_function(X[0]).compiled
    assert [run for run in compiled._batched.values() if run is not None]


def shared_rows_then_own_row(x):  # the loop writes the same rows for every member
    ta = hg.TensorArray("float64", size=3, element_shape=(3,))
    _, s, ta = hg.while_loop(lambda i, s, ta: i < 2, lambda i, s, ta: (
        i + 1, s * x, ta.write(i, hnp.ones(3) * hg.cast(i + 1, "float64"))), (0, x, ta))
    return ta.write(2, s).stack()


@pytest.mark.parametrize("optimize", [True, False], ids=["compiled", "plan"])
def test_a_shared_buffer_from_a_batched_loop_is_written_per_member_after_it(optimize,
                                                                             fallbacks):
    f = hg.function(shared_rows_then_own_row, optimize=optimize)
    np.testing.assert_array_equal(f.map(X), per_member(shared_rows_then_own_row, X, optimize))
    assert fallbacks == []


def test_members_copy_a_buffer_broadcast_over_the_batch():
    write = hg.ops.control_flow.tensor_array_write.primitive
    shared = np.broadcast_to(np.zeros((2, 3)), (4, 2, 3))  # read-only
    value = np.arange(12.0).reshape(4, 3)
    outs = run_members(write, [shared, 1, value], [True, False, True], {})
    np.testing.assert_array_equal(np.stack(outs)[:, 1], value)
    assert not shared.any()


def tf_hessian(x):  # hessians(): a while_loop writing one Hessian row per iteration
    return hg.hessians(hnp.sum(hnp.sin(x) * x[::-1] ** 2), x)[0]


def steps_of(x, n):  # the trip count comes from an unmapped argument
    return hg.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, hnp.cos(s) + x), (0, x))[1]


@pytest.mark.parametrize("f,in_axes,args", [
    (tf_hessian, 0, (X,)),
    (steps_of, (0, None), (X, np.int64(4))),
    (scan_loss, 0, (X,)),
], ids=["hessians-rows", "trip-count-unmapped", "scan"])
def test_vmap_of_fixed_trip_count_loops_never_masks(f, in_axes, args, fallbacks, monkeypatch):
    # an unbatched predicate: the plain loop on the batch, never the masked one
    def no_mask(*a, **k):
        raise AssertionError("masked loop")
    monkeypatch.setattr(while_module, "_masked_loop", no_mask)
    mapped = hg.vmap(f, in_axes=in_axes)(*args)
    rest = args[1:]
    np.testing.assert_allclose(mapped, np.stack([np.asarray(hg.function(f)(x, *rest))
                                                 for x in args[0]]), rtol=1e-13, atol=1e-13)
    assert fallbacks == []
