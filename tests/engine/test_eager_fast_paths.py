"""Edge cases of the eager fast paths: one-recorder dispatch, the tape's node list handed to
the backprop core, single contributions stored bare, and the per-argument shortcuts of grad."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.engine import backprop as backprop_module


def chain(x, n=20):
    for i in range(n):
        x = hnp.sin(x) if i % 2 == 0 else x * 1.01
    return hnp.sum(x)


def chain_grad(x, n=20):
    g = np.ones_like(x)
    xs = []
    for i in range(n):
        xs.append(x)
        x = np.sin(x) if i % 2 == 0 else x * 1.01
    for i in reversed(range(n)):
        g = g * np.cos(xs[i]) if i % 2 == 0 else g * 1.01
    return g


X = np.linspace(0.1, 1.0, 5)


def test_one_tape_matches_hand_written_gradient():
    np.testing.assert_allclose(hg.grad(chain)(X), chain_grad(X), rtol=1e-14)


def test_two_tapes_each_record_and_nest():
    x = hg.constant(X)
    with hg.GradientTape() as outer:
        outer.watch(x)
        with hg.GradientTape() as inner:
            inner.watch(x)
            y = hnp.sum(x ** 3)
        g = inner.gradient(y, x)
        assert type(g) is hg.Tensor  # recorded by the outer tape: no plain values
        z = hnp.sum(g)
    np.testing.assert_allclose(g.numpy(), 3 * X ** 2)
    np.testing.assert_allclose(outer.gradient(z, x).numpy(), 6 * X)


def test_outer_tape_only_records_ops_on_what_it_watches():
    x, w = hg.constant(X), hg.constant(2.0)
    with hg.GradientTape() as outer:
        outer.watch(w)
        with hg.GradientTape() as inner:
            inner.watch(x)
            h = hnp.sin(x)                   # recorded by the inner tape only
            y = hnp.sum(h * w)
    np.testing.assert_allclose(inner.gradient(y, x).numpy(), 2.0 * np.cos(X))
    assert not outer.tracks(h)
    assert float(outer.gradient(y, w)) == pytest.approx(np.sin(X).sum())


def test_persistent_tape_intermediate_sources_and_repeated_calls():
    x = hg.constant(X)
    with hg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        h = hnp.sin(x)
        y = hnp.sum(h * h) + hnp.sum(h)     # h has two consumers and is also a source
    for _ in range(2):
        dh, dx = tape.gradient(y, [h, x])
        np.testing.assert_allclose(dh.numpy(), 2 * np.sin(X) + 1)
        np.testing.assert_allclose(dx.numpy(), (2 * np.sin(X) + 1) * np.cos(X))
    with tape:                               # recording more keeps the earlier record
        z = hnp.sum(h * x)
    np.testing.assert_allclose(tape.gradient(z, x).numpy(), X * np.cos(X) + np.sin(X))


def test_watched_variable_takes_the_snapshot_path():
    v = hg.Variable(X.copy())
    with hg.GradientTape() as tape:
        y = hnp.sum(v * v)
    v.assign(np.zeros(5))                    # the recorded read keeps the old value
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), 2 * X)


def test_variable_read_twice_in_a_traced_function():
    v = hg.Variable(3.0)

    @hg.function
    def f():
        with hg.GradientTape() as tape:
            y = v * v + v                    # the graph's cached read is shown to the tape twice
        return tape.gradient(y, v)
    assert float(f()) == 7.0


def test_accumulator_alone_and_around_a_tape():
    x, t = hg.constant(X), hg.constant(np.ones(5))
    with hg.ForwardAccumulator(x, t) as acc:
        y = hnp.sum(hnp.sin(x) * 2.0)
    assert float(acc.jvp(y)) == pytest.approx(2 * np.cos(X).sum())
    np.testing.assert_allclose(hg.hvp(chain)(X, np.ones(5)),
                               hg.hvp(chain, mode="rev-rev")(X, np.ones(5)), rtol=1e-12)


def test_integer_inputs_are_constants():
    n = hg.constant(np.arange(5))
    x = hg.constant(X)
    with hg.GradientTape() as tape:
        tape.watch([n, x])
        y = hnp.sum(x * n) + hnp.sum(n * 2)
    dn, dx = tape.gradient(y, [n, x])
    assert dn is None
    np.testing.assert_allclose(dx.numpy(), np.arange(5.0))


def test_stop_recording_hides_ops_from_the_only_tape():
    x = hg.constant(X)
    with hg.GradientTape() as tape:
        tape.watch(x)
        with tape.stop_recording():
            h = hnp.sin(x)
        y = hnp.sum(h * x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.sin(X))


def test_missing_rule_off_the_path_to_the_sources_is_not_an_error():
    x, w = hg.constant(X), hg.constant(X)
    with hg.GradientTape() as tape:
        tape.watch([x, w])
        u = hg.custom_gradient(lambda a: (a * 2.0, None))(w)  # no usable gradient for w
        y = hnp.sum(x * x) + hnp.sum(u)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 2 * X)


@pytest.mark.parametrize("threshold, sums", [(1, 3), (2**40, 1)])
def test_early_aggregation_of_many_contributions(monkeypatch, threshold, sums):
    # 9 contributions to x's gradient: summed every 4 once past the byte threshold
    # (4 + 4 + the last, 3 add_n), else once at the end
    monkeypatch.setattr(backprop_module, "EARLY_AGGREGATION_BYTES", threshold)
    bound = []
    real_bind = backprop_module.bind
    monkeypatch.setattr(backprop_module, "bind",
                        lambda prim, *a: bound.append(prim.name) or real_bind(prim, *a))
    x = hg.constant(X)
    with hg.GradientTape() as tape:
        tape.watch(x)
        y = sum(hnp.sum(x * float(k)) for k in range(1, 10))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.full(5, 45.0))
    assert bound.count("add_n") == sums


def test_grad_of_nested_and_bare_arguments():
    f = lambda a, b: hnp.sum(a["u"] * b) + hnp.sum(a["v"])  # noqa: E731
    ga, gb = hg.grad(f, argnums=(0, 1))({"u": X, "v": X}, 2.0)
    np.testing.assert_allclose(ga["u"], np.full(5, 2.0))
    np.testing.assert_allclose(ga["v"], np.ones(5))
    assert gb == pytest.approx(X.sum())
    assert isinstance(hg.grad(lambda x: x * x)(3.0), np.floating)


def test_integer_results_of_recorded_ops_are_not_tracked():
    x = hg.constant(X)
    with hg.GradientTape() as tape:
        tape.watch(x)
        k = hg.cast(x * 10.0, dtype=np.int64)     # an integer result: a constant
        y = hnp.sum(x * k)
        assert tape.tracks(y) and not tape.tracks(k)
        np.asarray(k)                              # converting a constant drops no gradient
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), (X * 10.0).astype(np.int64))


def test_sources_that_are_not_all_the_watched_tensors():
    x, w = hg.constant(X), hg.constant(X + 1.0)
    with hg.GradientTape(persistent=True) as tape:
        tape.watch([x, w])
        y = hnp.sum(x * w)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), X + 1.0)          # a subset
    np.testing.assert_allclose(tape.gradient(y, [w, x])[1].numpy(), X + 1.0)   # all of them


def test_first_order_pass_computes_on_plain_arrays_but_returns_tensors():
    seen = []
    spy = hg.primitive("test_fast_paths_spy", lambda x: 2.0 * x,
                       vjp=[lambda g, ans, x: seen.append((type(g), type(hnp.cos(x)))) or 2 * g])
    x = hg.constant(X)
    with hg.GradientTape() as tape:
        tape.watch(x)
        y = hnp.sum(hnp.sin(spy(x)))
    g = tape.gradient(y, x)
    assert type(g) is hg.Tensor
    np.testing.assert_allclose(g.numpy(), 2 * np.cos(2 * X), rtol=1e-15)
    # a user's rule sees Tensors, and its ops make Tensors, even on the plain-array path
    assert seen == [(hg.Tensor, hg.Tensor)]
    assert not hg.engine.state.THREAD.state.plain_values


def test_custom_gradient_function_sees_tensors_in_a_first_order_pass():
    @hg.custom_gradient
    def square(x):
        def grad_fn(upstream):
            assert type(upstream) is hg.Tensor
            return upstream * 2.0 * x.numpy()
        return x * x, grad_fn

    np.testing.assert_allclose(hg.grad(lambda x: hnp.sum(hnp.exp(square(x))))(X),
                               2 * X * np.exp(X * X), rtol=1e-14)


def test_a_failing_rule_leaves_no_plain_mode_behind():
    bad = hg.primitive("test_fast_paths_bad", lambda x: x + 0.0,
                       vjp=[lambda g, ans, x: hnp.reshape(g, (7, 7))])
    bad.primitive.array_rules = True
    with pytest.raises(ValueError):
        hg.grad(lambda x: hnp.sum(hnp.sin(bad(x))))(X)
    assert not hg.engine.state.THREAD.state.plain_values


@pytest.mark.parametrize("call", [
    lambda a, b: hnp.add(a, b),                     # numpy-style ufunc: bind_eager
    lambda a, b: hg.constant(a) * b,                # operator
    lambda a, b: b - hg.constant(a),                # swapped operator
    lambda a, b: hg.ops.elementwise.divide(a, b),   # the op itself
])
def test_eager_two_operand_errors_name_the_op_and_shapes_alone(call):
    # bind_eager re-runs a failing forward through bind, outside its own handler: the error
    # names the op and the shapes and carries no chained first failure
    with pytest.raises(ValueError, match=r"operands cannot be broadcast together: x1 of "
                                         r"shape \((2|3),\), x2 of shape \((3|2),\)") as info:
        call(np.ones(2), np.ones(3))
    numpy_error = info.value.__cause__  # raised from numpy's own error, and from nothing else
    assert isinstance(numpy_error, ValueError) and numpy_error.__context__ is None


def test_eager_fast_path_operands_that_go_to_bind():
    # Variables (snapshot), lists, bools, numpy scalars and None take the general path and
    # give the same values and gradients as the fast operands
    v = hg.Variable(np.array([1.0, 2.0]))
    with hg.GradientTape() as tape:
        y = hnp.sum(v * [3.0, 4.0] + hnp.multiply(np.float64(2.0), v) + (v > 1.5) * v)
    np.testing.assert_allclose(float(y), 3 + 8 + 2 + 4 + 2)
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), [5.0, 7.0])
    with pytest.raises(TypeError):
        hnp.sin(None)


def test_ufunc_options_and_unknown_keywords():
    x = hg.constant(np.array([1.0, 2.0], np.float32))
    assert hnp.add(x, 1, dtype=np.float64).dtype == np.float64
    np.testing.assert_allclose(hnp.sin(x, None).numpy(), np.sin(x.numpy()))  # out positional
    with pytest.raises(TypeError, match=r"hessgrad\.numpy\.sin\(\) got an unexpected keyword "
                                        r"argument 'axis'"):
        hnp.sin(x, axis=0)
    with pytest.raises(TypeError, match="takes 2 positional inputs but 1 were given"):
        hnp.add(x)


def test_broadcasting_ops_gradients_are_summed_back_by_the_core():
    # rules of broadcasting ops return output-shaped gradients; the core sums them to each
    # input's shape, in eager mode, under a second-order tape and in graph mode
    a, b = np.arange(6.0).reshape(2, 3) + 1, np.array([0.5, 1.5, 2.5])

    def f(a, b):
        return hnp.sum(hnp.where(a > 2, a * b, a / b) + hnp.clip(a, 1.5, b * 2) ** b)

    ga, gb = hg.grad(f, argnums=(0, 1))(a, b)
    assert ga.shape == a.shape and gb.shape == b.shape
    eps = 1e-6
    for k in range(3):
        e = np.zeros(3)
        e[k] = eps
        fd = (float(f(a, b + e)) - float(f(a, b - e))) / (2 * eps)
        assert gb[k] == pytest.approx(fd, rel=1e-6)
    compiled = hg.function(lambda a, b: hg.gradients(f(a, b), [a, b]))
    for got, want in zip(compiled(a, b), (ga, gb)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    hb = hg.hessian(lambda b: f(a, b))(b)
    assert hb.shape == (3, 3)
    np.testing.assert_allclose(hb, hb.T, rtol=1e-10)


def test_user_rules_still_get_the_shape_check():
    # the core sums back only for ops that declare they broadcast: a user gradient of the
    # wrong (broadcast) shape is an error, as in TensorFlow
    @hg.custom_gradient
    def f(x):
        return x * 2.0, lambda g: hnp.ones((4, 3))

    x = hg.constant(np.ones(3))
    with hg.GradientTape() as tape:
        tape.watch(x)
        y = hnp.sum(f(x))
    with pytest.raises(ValueError, match="Incompatible shapes between op input and calculated "
                                         "input gradient"):
        tape.gradient(y, x)


@pytest.mark.parametrize("f, want", [
    (lambda x: x + x, 2.0), (lambda x: x - x, 0.0), (lambda x: x * x, "2x"),
    (lambda x: hnp.add(x, x) + x, 3.0), (lambda x: x / x, 0.0),
])
def test_an_input_used_twice_by_one_op_gets_both_contributions(f, want):
    g = hg.grad(lambda x: hnp.sum(f(x)))(X)
    np.testing.assert_allclose(g, 2 * X if want == "2x" else np.full_like(X, want), atol=1e-15)
