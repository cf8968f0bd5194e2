"""TensorFlow's documented behaviour of gradients, GradientTape and custom gradients."""

import numpy as np
import pytest

import hessgrad as hg

COVERED = {"read_variable", "custom_gradient"}  # derivatives checked by the tests below


def run(graph, fetches, feeds=None):
    return graph.run(fetches, feeds or {})


def test_stop_gradients_partial_vs_total():
    with hg.Graph().as_default() as g:
        a = hg.constant(0.0)
        b = 2 * a
        partial = hg.gradients(a + b, [a, b], stop_gradients=[a, b])
        total = hg.gradients(a + b, [a, b])
    assert [float(v) for v in run(g, partial)] == [1.0, 1.0]
    assert [float(v) for v in run(g, total)] == [3.0, 1.0]


def test_stop_gradient_op_equals_stop_gradients_argument():
    with hg.Graph().as_default() as g:
        a = hg.constant(0.0)
        b = 2 * a
        a2, b2 = hg.stop_gradient(a), hg.stop_gradient(b)
        via_op = hg.gradients(a2 + b2, [a, b])
    assert via_op == [None, None]
    del g


def test_unconnected_gradients_none_and_zero():
    with hg.Graph().as_default() as g:
        x = hg.constant([1.0, 2.0])
        y = hg.constant(3.0)
        z = hg.identity(y)
        assert hg.gradients(z, [x]) == [None]
        (zero,) = hg.gradients(z, [x], unconnected_gradients=hg.UnconnectedGradients.ZERO)
    np.testing.assert_array_equal(run(g, zero), [0.0, 0.0])
    with pytest.raises(ValueError, match="unconnected_gradients"):
        with hg.Graph().as_default():
            hg.gradients(hg.constant(1.0), [hg.constant(1.0)], unconnected_gradients="bad")


def test_gradients_eager_is_runtime_error():
    with pytest.raises(RuntimeError, match="GradientTape"):
        hg.gradients(hg.constant(1.0), [hg.constant(1.0)])


def test_gradients_missing_rule_is_lookup_error():
    nograd = hg.primitive("test_nograd_op", lambda x: x * 1.0)
    with hg.Graph().as_default():
        x = hg.placeholder("float64", (2,), name="x")
        y = nograd(x)
        with pytest.raises(LookupError, match="test_nograd_op"):
            hg.gradients(y, [x])


def test_gradients_wrong_shape_is_value_error():
    bad = hg.primitive("test_bad_shape_grad", lambda x: x.sum(),
                       vjp=[lambda g, ans, x: hg.reshape(g, [1])])
    with hg.Graph().as_default():
        x = hg.placeholder("float64", (3,), name="x")
        with pytest.raises(ValueError, match=r"Input index: 0.*\(3,\).*\(1,\)"):
            hg.gradients(bad(x), [x])


def test_integer_tensors_are_constants():
    with hg.Graph().as_default() as g:
        x = hg.placeholder("float64", (2,))
        i = hg.constant([1, 2])
        y = hg.reduce_sum(x * hg.cast(i, "float64"))
        assert hg.gradients(y, [i]) == [None]
        (dx,) = hg.gradients(y, [x])
    np.testing.assert_array_equal(g.run(dx, {x: [0.0, 0.0]}), [1.0, 2.0])


def test_grad_ys_and_several_ys_aggregate():
    with hg.Graph().as_default() as g:
        x = hg.placeholder("float64", (2,))
        y1, y2 = x * x, 3.0 * x
        (dx,) = hg.gradients([y1, y2], [x], grad_ys=[hg.constant([1.0, 2.0]), None])
        for method in (hg.AggregationMethod.ADD_N, hg.AggregationMethod.EXPERIMENTAL_TREE,
                       hg.AggregationMethod.EXPERIMENTAL_ACCUMULATE_N):
            (d2,) = hg.gradients(x * x + x * x + x * x, [x], aggregation_method=method)
            np.testing.assert_allclose(g.run(d2, {x: [1.0, 2.0]}), [6.0, 12.0])
    np.testing.assert_allclose(g.run(dx, {x: [1.0, 2.0]}), [2.0 + 3.0, 8.0 + 3.0])


def test_second_order_in_graph_mode():
    with hg.Graph().as_default() as g:
        x = hg.placeholder("float64", (3,))
        y = hg.reduce_sum(hg.sin(x) * x)
        (dx,) = hg.gradients(y, [x])
        (ddx,) = hg.gradients(dx, [x])
    xv = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(g.run(ddx, {x: xv}), 2 * np.cos(xv) - xv * np.sin(xv))


def test_variables_in_graph_mode_are_read_at_run_time():
    v = hg.Variable([1.0, 2.0])
    with hg.Graph().as_default() as g:
        y = hg.reduce_sum(v * v)
        (dv,) = hg.gradients(y, [v])
    np.testing.assert_allclose(g.run(dv), [2.0, 4.0])
    v.assign([3.0, 4.0])
    np.testing.assert_allclose(g.run(dv), [6.0, 8.0])


def test_variable_reads_and_fetches_are_live_and_protect_the_variable():
    # value()/read_value() returned a detached snapshot (no gradient; frozen inside a
    # traced function), and a fetched Variable was frozen at plan time.
    v = hg.Variable([1.0, 2.0])
    with hg.GradientTape(persistent=True) as tape:
        ys = [hg.reduce_sum(read() * 2.0) for read in (v.value, v.read_value)]
    for y in ys:
        np.testing.assert_allclose(tape.gradient(y, v).numpy(), [2.0, 2.0])
    with hg.Graph().as_default() as g:
        p = hg.placeholder("float64", (2,))
        (dv,) = hg.gradients(hg.reduce_sum(v.value() * p), [v])
        w = v * 1.0
    np.testing.assert_allclose(g.run(dv, {p: np.array([3.0, 4.0])}), [3.0, 4.0])
    f = hg.function(lambda a: (hg.reduce_sum(v.read_value() * a), v))
    a = np.ones(2)
    f(a), g.run([v, w])
    v.assign([10.0, 20.0])
    total, fetched = f(a)
    assert float(total) == 30.0
    np.testing.assert_allclose(fetched, [10.0, 20.0])
    np.testing.assert_allclose(g.run([v, w]), [[10.0, 20.0]] * 2)
    # what the caller receives is its own array: writing to it leaves the variable alone
    for out in (fetched, g.run([v, w])[0], v.numpy()):
        out[0] = 99.0
    np.testing.assert_allclose(v.numpy(), [10.0, 20.0])


def test_output_gradients_and_grad_ys_must_have_the_targets_shapes():
    # A (2, 3) seed for a (3,) target was summed away silently ([4, 8, 12] for x * x).
    x = hg.constant([1.0, 2.0, 3.0])
    for seed in (np.ones((2, 3)), np.ones(1), 1.0):
        with hg.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        with pytest.raises(ValueError, match=r"GradientTape.gradient: output_gradients\[0\] "
                           r"has shape .* but its target has shape \(3,\)"):
            tape.gradient(y, x, output_gradients=seed)
    with hg.Graph().as_default():
        p = hg.placeholder("float64", (3,))
        with pytest.raises(ValueError, match=r"gradients: grad_ys\[0\] has shape \(2, 3\)"):
            hg.gradients(p * p, [p], grad_ys=np.ones((2, 3)))
    # an integer seed for a float target gives a float gradient
    with hg.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    g = tape.gradient(y, x, output_gradients=np.array([1, 0, 2]))
    assert g.dtype == np.float64
    np.testing.assert_allclose(g.numpy(), [2.0, 0.0, 12.0])


def test_tape_nested_higher_order():
    x = hg.constant(3.0)
    with hg.GradientTape() as g:
        g.watch(x)
        with hg.GradientTape() as gg:
            gg.watch(x)
            y = x * x * x
        dy = gg.gradient(y, x)
    assert float(dy) == 27.0
    assert float(g.gradient(dy, x)) == 18.0


def test_non_persistent_tape_used_twice():
    x = hg.constant(3.0)
    with hg.GradientTape() as g:
        g.watch(x)
        y = x * x
    g.gradient(y, x)
    with pytest.raises(RuntimeError, match="non-persistent"):
        g.gradient(y, x)


def test_persistent_tape_and_nested_sources():
    x = hg.constant(3.0)
    w = {"a": hg.constant([1.0, 2.0]), "b": [hg.constant(2.0)]}
    with hg.GradientTape(persistent=True) as g:
        g.watch(x)
        g.watch(w)
        y = x * x
        z = y * y + hg.reduce_sum(w["a"]) * w["b"][0]
    assert float(g.gradient(z, x)) == 108.0
    assert float(g.gradient(y, x)) == 6.0
    grads = g.gradient(z, w)
    np.testing.assert_allclose(grads["a"].numpy(), [2.0, 2.0])
    assert float(grads["b"][0]) == 3.0


def test_tape_variables_watched_automatically():
    v = hg.Variable(2.0)
    frozen = hg.Variable(5.0, trainable=False)
    with hg.GradientTape() as tape:
        y = v * v * frozen
    assert tape.watched_variables() == (v,)
    assert float(tape.gradient(y, v)) == 20.0
    with hg.GradientTape(watch_accessed_variables=False) as tape:
        y = v * v
    assert tape.gradient(y, v) is None


def test_tape_assign_after_use_keeps_recorded_value():
    v = hg.Variable(2.0)
    with hg.GradientTape() as tape:
        y = v * v
        v.assign(10.0)
    assert float(tape.gradient(y, v)) == 4.0


def test_stop_recording_and_reset():
    x = hg.constant(2.0)
    with hg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        with tape.stop_recording():
            y = x * x
        z = x * x
    assert tape.gradient(y, x) is None
    assert float(tape.gradient(z, x)) == 4.0
    tape.reset()
    assert tape.gradient(z, x) is None


def test_tape_unconnected_zero():
    x, y = hg.constant([1.0, 2.0]), hg.constant(1.0)
    with hg.GradientTape() as tape:
        tape.watch([x, y])
        z = y * 2.0
    gx, gy = tape.gradient(z, [x, y], unconnected_gradients="zero")
    np.testing.assert_array_equal(gx.numpy(), [0.0, 0.0])
    assert float(gy) == 2.0


def test_tape_output_gradients():
    x = hg.constant([1.0, 2.0])
    with hg.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    g = tape.gradient(y, x, output_gradients=hg.constant([10.0, 1.0]))
    np.testing.assert_allclose(g.numpy(), [20.0, 4.0])


def test_tape_jacobian_and_batch_jacobian():
    x = hg.constant([[1.0, 2.0], [3.0, 4.0]])
    with hg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    jac = tape.jacobian(y, x).numpy()
    assert jac.shape == (2, 2, 2, 2)
    np.testing.assert_allclose(jac.reshape(4, 4), np.diag(2 * x.numpy().ravel()))
    bj = tape.batch_jacobian(y, x).numpy()
    assert bj.shape == (2, 2, 2)
    np.testing.assert_allclose(bj[1], np.diag([6.0, 8.0]))


def test_custom_gradient_log1pexp_float32():
    @hg.custom_gradient
    def log1pexp(x):
        e = hg.exp(x)

        def grad(upstream):
            return upstream * (1 - 1 / (1 + e))
        return hg.log(1 + e), grad

    x = hg.constant(100.0, dtype="float32")
    with hg.GradientTape() as tape:
        tape.watch(x)
        y = log1pexp(x)
    assert float(tape.gradient(y, x)) == 1.0
    with np.errstate(all="ignore"):
        with hg.GradientTape() as tape:
            tape.watch(x)
            y = hg.log(1 + hg.exp(x))
        assert np.isnan(float(tape.gradient(y, x)))


def test_custom_gradient_two_inputs_eager_and_graph():
    @hg.custom_gradient
    def f(x, y):
        def grad(dz):
            return dz * y, dz * x
        return x * y, grad

    x, y = hg.constant(2.0), hg.constant(3.0)
    with hg.GradientTape() as tape:
        tape.watch([x, y])
        z = f(x, y)
    assert [float(v) for v in tape.gradient(z, [x, y])] == [3.0, 2.0]
    with hg.Graph().as_default() as g:
        a, b = hg.placeholder("float64", ()), hg.placeholder("float64", ())
        grads = hg.gradients(f(a, b), [a, b])
    assert [float(v) for v in g.run(grads, {a: 2.0, b: 3.0})] == [3.0, 2.0]


def test_custom_gradient_with_variables_linear_poly():
    weights = hg.Variable([5.0, 20.0])

    @hg.custom_gradient
    def linear_poly(x):
        poly = weights[1] * x + weights[0]

        def grad_fn(dpoly, variables):
            assert len(variables) == 1 and variables[0] is weights
            grad_xs = dpoly * weights[1]
            dy_dw = dpoly * hg.stack(x ** 1, x ** 0)
            return grad_xs, [hg.reduce_sum(hg.reshape(dy_dw, [2, -1]), axis=1)]
        return poly, grad_fn

    x = hg.constant([1.0, 2.0, 3.0])
    with hg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        poly = linear_poly(x)
    np.testing.assert_allclose(poly.numpy(), [25.0, 45.0, 65.0])
    np.testing.assert_allclose(tape.gradient(poly, x).numpy(), [20.0, 20.0, 20.0])
    np.testing.assert_allclose(tape.gradient(poly, weights).numpy(), [6.0, 3.0])


def test_custom_gradient_variable_errors():
    w = hg.Variable(2.0)

    @hg.custom_gradient
    def no_variables_kw(x):
        return x * w, lambda dy: dy * w

    with pytest.raises(TypeError, match="variables"):
        with hg.GradientTape():
            no_variables_kw(hg.constant(1.0))

    @hg.custom_gradient
    def wrong_count(x):
        return x * w, lambda dy, variables=None: (dy * w, [dy, dy])

    x = hg.constant(1.0)
    with hg.GradientTape() as tape:
        tape.watch(x)
        y = wrong_count(x)
    with pytest.raises(ValueError, match="gradient for each variable"):
        tape.gradient(y, [x, w])

    @hg.custom_gradient
    def too_many(x):
        return x * 2.0, lambda dy: (dy, dy)

    with hg.GradientTape() as tape:
        tape.watch(x)
        y = too_many(x)
    with pytest.raises(ValueError, match="expected to return 1 gradients, but returned 2"):
        tape.gradient(y, x)


def test_nested_custom_gradient_second_order():
    # The grad_fn is itself written with ops, so the custom gradient differentiates again.
    @hg.custom_gradient
    def cube(x):
        def grad(dy):
            return dy * 3.0 * x * x
        return x * x * x, grad

    x = hg.constant(2.0)
    with hg.GradientTape() as outer:
        outer.watch(x)
        with hg.GradientTape() as inner:
            inner.watch(x)
            y = cube(x)
        dy = inner.gradient(y, x)
    assert float(dy) == 12.0
    assert float(outer.gradient(dy, x)) == 12.0


def test_grad_pass_through_assign():
    x, z = hg.Variable(1.0), hg.Variable(3.0)
    with hg.GradientTape() as tape:
        y = hg.grad_pass_through(x.assign)(z ** 2)
    assert float(tape.gradient(y, z)) == 6.0
    assert float(x) == 9.0


def test_recompute_grad_reruns_forward_and_saves_tape_memory():
    calls = []

    def layer(h):
        calls.append(1)
        return hg.tanh(h) * 1.1

    x = hg.constant(np.linspace(-1.0, 1.0, 7))
    results = {}
    for name, fn in (("plain", layer), ("recompute", hg.recompute_grad(layer))):
        calls.clear()
        with hg.GradientTape() as tape:
            tape.watch(x)
            h = x
            for _ in range(50):
                h = fn(h)
            y = hg.reduce_sum(h)
        kept = len(tape._tracked)
        grad = tape.gradient(y, x).numpy()
        results[name] = (kept, len(calls), grad)
    assert results["plain"][1] == 50
    assert results["recompute"][1] == 100          # forward, then once more per layer
    assert results["recompute"][0] < 0.6 * results["plain"][0]
    np.testing.assert_allclose(results["recompute"][2], results["plain"][2], rtol=1e-12)


def test_recompute_grad_keeps_forward_mode_derivatives():
    # Its forward ran with no recorder, so an accumulator saw no tangent: jvp was None and
    # the default (forward-over-reverse) HVP and Hessian silently dropped its terms.
    w = hg.Variable(np.array([0.5, -1.5, 2.0]))

    def layer(x):
        return hg.tanh(x * w) * x

    xv, vv = np.array([0.3, -0.2, 0.7]), np.array([1.0, 0.5, -1.0])
    x = hg.constant(xv)
    with hg.ForwardAccumulator((x, w), (hg.constant(vv), hg.constant(vv[::-1]))) as acc:
        plain, recomputed = layer(x), hg.recompute_grad(layer)(x)
    np.testing.assert_allclose(acc.jvp(recomputed).numpy(), acc.jvp(plain).numpy(),
                               rtol=1e-14)

    def loss(layer):
        return lambda x: hg.reduce_sum(layer(x) ** 2)
    expected = hg.hessian(loss(layer))(xv)
    for mode in ("fwd-rev", "rev-fwd", "rev-rev"):
        np.testing.assert_allclose(hg.hvp(loss(hg.recompute_grad(layer)), mode=mode)(xv, vv),
                                   expected @ vv, rtol=1e-13)
    np.testing.assert_allclose(hg.hessian(loss(hg.recompute_grad(layer)))(xv), expected,
                               rtol=1e-13)
    np.testing.assert_allclose(hg.jacfwd(hg.recompute_grad(layer))(xv),
                               hg.jacrev(layer)(xv), rtol=1e-14)


@pytest.mark.parametrize("mode", ["tape", "graph"])
def test_long_chain_has_no_recursion_limit(mode):
    n = 100_000
    if mode == "tape":
        x = hg.constant(1.0)
        with hg.GradientTape() as tape:
            tape.watch(x)
            h = x
            for _ in range(n):
                h = h * 1.000001
        value = float(tape.gradient(h, x))
    else:
        with hg.Graph().as_default() as g:
            x = hg.placeholder("float64", ())
            h = x
            for _ in range(n):
                h = h * 1.000001
            (d,) = hg.gradients(h, [x])
        value = float(g.run(d, {x: 1.0}))
    assert value == pytest.approx(1.000001 ** n, rel=1e-9)


def test_forward_accumulator_and_mixed_nesting():
    x = hg.constant([1.0, 2.0])
    v = hg.constant([1.0, 0.5])
    with hg.ForwardAccumulator(x, v) as acc:
        with hg.GradientTape() as tape:
            tape.watch(x)
            y = hg.reduce_sum(x ** 3)
        g = tape.gradient(y, x)
    np.testing.assert_allclose(acc.jvp(g).numpy(), 6 * x.numpy() * v.numpy())
    with hg.GradientTape() as tape:
        tape.watch(x)
        with hg.ForwardAccumulator(x, v) as acc:
            y = hg.reduce_sum(x ** 3)
        d = acc.jvp(y)
    np.testing.assert_allclose(tape.gradient(d, x).numpy(), 6 * x.numpy() * v.numpy())


def test_function_traces_once_per_signature_and_matches_eager():
    traces = []

    @hg.function
    def f(x, n):
        traces.append(1)
        return hg.reduce_sum(x ** n)

    a = np.array([1.0, 2.0])
    assert float(f(a, 2)) == 5.0
    assert float(f(a + 1, 2)) == 13.0
    assert len(traces) == 1
    f(a, 3)
    f(np.ones(3), 2)
    assert len(traces) == 3
    assert isinstance(f(hg.constant(a), 2), hg.Tensor)


def test_function_with_tape_inside_and_gradient_graph():
    @hg.function
    def grad_f(x):
        with hg.GradientTape() as tape:
            tape.watch(x)
            y = hg.reduce_sum(hg.sin(x) * x)
        return tape.gradient(y, x)

    xv = np.array([0.5, 1.5])
    np.testing.assert_allclose(grad_f(xv), np.sin(xv) + xv * np.cos(xv))


def test_symbolic_value_errors_are_clear():
    def f(x):
        if x > 0:
            return x
        return -x

    with hg.Graph().as_default():  # no value to branch on: an explicit graph's placeholder
        with pytest.raises(TypeError, match="hg.cond"):
            f(hg.placeholder("float64", shape=()))
    # hessgrad.function traces at the call's values: the branch taken is a guard
    g = hg.function(f)
    assert float(g(np.array(1.0))) == 1.0 and float(g(np.array(-2.0))) == 2.0


def test_numpy_conversion_under_a_tape_raises_instead_of_dropping_gradient():
    x = hg.constant([1.0, 2.0])
    with hg.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        with pytest.raises(TypeError, match="silently drop"):
            np.array([y[0], y[1]])
        z = hg.reduce_sum(y)
    assert float(tape.gradient(z, x)[1]) == 4.0
    np.testing.assert_array_equal(np.asarray(y), [1.0, 4.0])  # fine once recording is over


def test_tape_gives_no_gradient_for_an_unwatched_source_even_where_the_target_depends_on_it():
    x, z = hg.constant([1.0, 2.0]), hg.constant([3.0, 4.0])
    with hg.GradientTape(persistent=True) as tape:
        tape.watch(z)
        y = hg.reduce_sum(x * z)
    gx, gz = tape.gradient(y, [x, z])
    assert gx is None
    np.testing.assert_allclose(gz.numpy(), [1.0, 2.0])
    zx, _ = tape.gradient(y, [x, z], unconnected_gradients="zero")
    np.testing.assert_allclose(zx.numpy(), [0.0, 0.0])
    assert tape.jacobian(x * z, x) is None


def test_stack_takes_tensorflows_list_or_tensors():
    # stack([a, b]) made an array of the list and stacked that alone: shape (1, 2, 3).
    a, b = hg.constant([1.0, 2.0, 3.0]), hg.constant([4.0, 5.0, 6.0])
    assert hg.stack([a, b]).shape == (2, 3) and hg.stack((a, b), axis=1).shape == (3, 2)
    assert hg.stack(a, b, axis=-1).shape == (3, 2)
    with hg.Graph().as_default() as g:
        p = hg.placeholder("float64", (3,))
        (dp,) = hg.gradients(hg.reduce_sum(hg.stack([p, p * 2.0]) ** 2), [p])
    np.testing.assert_allclose(g.run(dp, {p: np.ones(3)}), [10.0, 10.0, 10.0])


def test_a_user_primitive_declared_again_replaces_the_old_one():
    """A notebook cell run twice declares its primitive again: the new one wins; hessgrad's
    own names stay taken."""
    first = hg.primitive("test_rerun_scale", lambda x: 2.0 * x,
                         vjp=[lambda g, ans, x: 2.0 * g], jvp=[lambda t, ans, x: 2.0 * t])
    again = hg.primitive("test_rerun_scale", lambda x: 3.0 * x,
                         vjp=[lambda g, ans, x: 3.0 * g], jvp=[lambda t, ans, x: 3.0 * t])
    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(again(x).numpy(), [3.0, 6.0])
    np.testing.assert_array_equal(first(x).numpy(), [2.0, 4.0])  # made before: still works
    np.testing.assert_array_equal(hg.grad(lambda x: hg.reduce_sum(again(x)))(x), [3.0, 3.0])
    with pytest.raises(ValueError, match="one of hessgrad's"):
        hg.primitive("sin", lambda x: x)
