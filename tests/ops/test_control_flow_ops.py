"""Control flow: while_loop, cond, TensorArray -- eager (derivatives of any order through the
tape) and graph mode (while/cond nodes with block plans; gradients and second derivatives
through reverse loops), checked against eager results and finite differences."""

import re

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.engine.graph import Plan
from hessgrad.ops.control_flow import buffers as cf
from hessgrad.ops.control_flow import TensorArray, cond, while_loop
from hessgrad.testing import check_grads

COVERED = {"while", "cond", "tensor_array_buffer", "tensor_array_write", "tensor_array_read",
           "tensor_array_read_adjoint", "tensor_array_clear", "tensor_array_pop",
           "tensor_array_accumulate"}

rng = np.random.default_rng(0)


def r(*shape):
    return rng.standard_normal(shape)


def run_graph(build, *values):
    """Build ``build(*placeholders)`` in a fresh graph and run it on ``values``."""
    g = hg.Graph()
    with g.as_default():
        phs = [hg.placeholder(np.asarray(v).dtype, np.shape(v)) for v in values]
        out = build(*phs)
    return g.run(out, dict(zip(phs, values)))


def fd(f, x, eps=1e-6):
    """Central differences of a scalar- or array-valued ``f`` at array ``x``."""
    x = np.asarray(x, dtype=float)
    cols = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = eps
        e = e.reshape(x.shape)
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps))
    return np.moveaxis(np.array(cols), 0, -1).reshape(np.shape(f(x)) + x.shape)


# --- TensorArray buffer primitives: order 2, forward and reverse ---------------------------
ROWS = [
    ("read-scalar", lambda b: cf.tensor_array_read(b, 1), (r(3, 2),)),
    ("read-repeated", lambda b: cf.tensor_array_read(b, np.array([0, 2, 0])), (r(3, 2),)),
    ("read-prefix", lambda b: cf.tensor_array_read(b, 2, prefix=True) ** 2, (r(4, 2),)),
    ("read_adjoint", lambda g: cf.tensor_array_read_adjoint(g, np.array([0, 2, 0]),
                                                            np.zeros((4, 3))), (r(3, 3),)),
    ("read_adjoint-prefix", lambda g: cf.tensor_array_read_adjoint(g, 2, np.zeros((4,)),
                                                                   prefix=True), (r(2),)),
    ("clear-truncate", lambda g: cf.tensor_array_clear(g, 1, np.zeros((3, 2))), (r(4, 2),)),
    ("clear-pad", lambda g: cf.tensor_array_clear(g, np.array([0, 3]), np.zeros((5, 2))),
     (r(2, 2),)),
    ("write", lambda b, v: cf.tensor_array_write(b * 1.0, 2, v) ** 2, (r(4, 3), r(3))),
    ("write-many", lambda b, v: cf.tensor_array_write(b * 1.0, np.array([3, 0]), v) * b,
     (r(4, 2), r(2, 2))),
    ("write-grow", lambda b, v: cf.tensor_array_write(b * 1.0, 5, v, dynamic=True),
     (r(2, 3), r(3))),
    ("pop", lambda g: (lambda out: out[0] ** 2 + hg.reduce_sum(out[1] ** 3, axis=0))(
        cf.tensor_array_pop(g, 1, np.zeros((3, 2)))), (r(3, 2),)),
    ("pop-many", lambda g: (lambda out: out[0] * hg.reduce_sum(out[1] ** 2))(
        cf.tensor_array_pop(g, np.array([2, 0]), np.zeros((3, 2)))), (r(3, 2),)),
    ("accumulate", lambda a, v: cf.tensor_array_accumulate(a * 1.0, 2, v) ** 2,
     (r(4, 3), r(3))),
    ("accumulate-repeated", lambda a, v: cf.tensor_array_accumulate(
        a * 1.0, np.array([0, 2, 0]), v) * a, (r(3, 2), r(3, 2))),
]


@pytest.mark.parametrize("name,f,args", ROWS, ids=[row[0] for row in ROWS])
def test_buffer_primitives_order2(name, f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"))


def test_buffer_primitives_in_graph_mode():
    b, v = r(4, 3), r(3)
    out = run_graph(lambda b, v: cf.tensor_array_write(b * 1.0, 2, v), b, v)
    expect = b.copy()
    expect[2] = v
    np.testing.assert_allclose(out, expect)
    with hg.Graph().as_default():
        buf = cf.tensor_array_buffer(shape=(3, 2), dtype="float32")
        assert buf.shape == (3, 2) and buf.dtype == np.float32
        grown = cf.tensor_array_write(buf, 4, np.ones(2, np.float32), dynamic=True)
        assert grown.shape == (None, 2)
    assert cf.tensor_array_buffer(shape=(2, 1), dtype="float64").numpy().tolist() == [[0], [0]]


def test_buffer_primitive_errors():
    with pytest.raises(IndexError, match="TensorArray.write: index \\[5\\] is out of range.*4"):
        cf.tensor_array_write(np.zeros((4, 2)), np.array([5]), np.zeros((1, 2)))
    with pytest.raises(ValueError, match="TensorArray.write: value of shape \\(3,\\)"):
        cf.tensor_array_write(np.zeros((4, 2)), 1, np.zeros(3))
    with pytest.raises(IndexError, match="TensorArray.read"):
        cf.tensor_array_read(np.zeros((2, 2)), 2)
    with pytest.raises(TypeError, match="index must be an integer"):
        cf.tensor_array_read(np.zeros((2, 2)), 1.0)


def test_buffer_rows_at_a_loop_counter():
    # An integer row of any integer type (a loop's counter): the row written and read back,
    # a copy, and the errors just outside the buffer.
    buf, v = np.zeros((4, 3)), r(3)
    for row in (2, np.int64(2), np.int32(2)):
        out = cf._ta_write(buf.copy(), row, v)
        assert np.array_equal(out[2], v) and not out[[0, 1, 3]].any()
        got = cf._ta_read(out, row)
        assert np.array_equal(got, v) and not np.shares_memory(got, out)
    with pytest.raises(IndexError, match="index 4 is out of range for a TensorArray of size 4"):
        cf._ta_write(buf, np.int64(4), v)
    with pytest.raises(IndexError, match="index -1 is out of range"):
        cf._ta_read(buf, np.int64(-1))
    with pytest.raises(ValueError, match="value of shape \\(1, 3\\) does not match"):
        cf._ta_write(buf, np.int64(1), v[None])
    counters = np.arange(5, 9)  # a 1-D buffer's row reads back as a numpy scalar
    assert type(cf._ta_read(counters, np.int64(2))) is np.int64
    assert cf._ta_read(counters, np.array(2)).shape == ()  # the general path: a 0-d array


def test_loop_counter_arithmetic_is_generated_as_operators():
    f = hg.function(lambda x: while_loop(lambda k, y: k < 5, lambda k, y: (k + 1, y * 2.0),
                                         (0, x))[1])
    x = np.ones(3)
    np.testing.assert_array_equal(f(x), 32.0 * x)
    loop = next(op for op in f.get_concrete_function(x).compiled.program.ops
                if op.name == "while")
    assert re.search(r"= \(v\d+ < 5\)", loop.params["cond_plan"].source)
    assert re.search(r"= \(v\d+ \+ 1\)", loop.params["body_plan"].source)
    assert type(f.get_concrete_function(x).compiled.run([x])[0]) is np.ndarray


# --- eager mode: tapes see every op, any order ----------------------------------------------
def fixed_point(a):
    """x_{k+1} = cos(a x_k), 30 steps."""
    _, x = while_loop(lambda k, x: k < 30, lambda k, x: (k + 1, hg.cos(a * x)),
                      (0, hg.ones_like(a) * 0.5))
    return x


def inner_loss(w, a):
    return hg.reduce_sum((w - a) ** 2 * np.array([1.0, 2.0, 0.5])) + 0.1 * hg.reduce_sum(w ** 4)


def unrolled_descent(a, steps=20, lr=0.1):
    """w minimises inner_loss(., a) by ``steps`` gradient steps; the outer loss reads w."""
    def body(i, w):
        with hg.GradientTape() as tape:
            tape.watch(w)
            loss = inner_loss(w, a)
        return i + 1, w - lr * tape.gradient(loss, w)

    _, w = while_loop(lambda i, w: i < steps, body, (0, hg.zeros_like(a)))
    return hg.reduce_sum(w * hg.sin(w))


def test_eager_fixed_point_order2():
    check_grads(fixed_point, (np.array([0.7, 1.1]),), order=2, modes=("fwd", "rev"))


def test_eager_unrolled_descent_order2():
    check_grads(unrolled_descent, (np.array([0.3, -0.8, 1.2]),), order=2,
                modes=("fwd", "rev"), rtol=1e-5, atol=1e-6)


def test_eager_cond_and_tensor_array_order2():
    def f(x):
        y = cond(hg.reduce_sum(x) > 0, lambda: hg.sin(x) * x, lambda: x ** 3)
        ta = TensorArray("float64", size=2)
        ta = ta.write(0, y).write(1, hg.exp(-x))
        return ta.stack() * ta.read(1)

    check_grads(f, (np.array([0.4, 0.9]),), order=2, modes=("fwd", "rev"))
    check_grads(f, (np.array([-0.4, -0.9]),), order=2, modes=("fwd", "rev"))


def test_eager_tensor_array_methods():
    def f(x):
        ta = TensorArray("float64", size=3, element_shape=(2,)).unstack(x)
        dyn = TensorArray("float64", size=0, dynamic_size=True)
        dyn = dyn.write(2, ta.read(0) * ta.read(2)).scatter([0, 1], ta.gather([1, 1]))
        return hg.concat([dyn.concat(), ta.stack()[0] ** 2], axis=0)

    x = r(3, 2)
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))
    dyn = TensorArray("float64", dynamic_size=True).write(3, [1.0])
    assert int(dyn.size()) == 4
    np.testing.assert_array_equal(dyn.stack().numpy(), [[0.0], [0.0], [0.0], [1.0]])
    assert TensorArray("float64", size=0, element_shape=(2,)).stack().shape == (0, 2)


def test_eager_while_structures_and_max_iterations():
    out = while_loop(lambda s: s["i"] < 5, lambda s: {"i": s["i"] + 1, "x": s["x"] * 2.0},
                     [{"i": 0, "x": 1.0}])
    assert int(out[0]["i"]) == 5 and float(out[0]["x"]) == 32.0
    single = while_loop(lambda x: x < 100, lambda x: x * 3, 1, maximum_iterations=3)
    assert int(single) == 27
    assert int(while_loop(lambda x: x < 0, lambda x: x + 1, 7)) == 7


# --- graph mode: nodes, plans, gradients -------------------------------------------------
def test_graph_fixed_point_matches_eager_to_second_order():
    a0 = np.array([0.7, 1.1])

    def build(a):
        x = fixed_point(a)
        y = hg.reduce_sum(x * x)
        (g,) = hg.gradients(y, [a])
        (h0,) = hg.gradients(g[0], [a])
        (h1,) = hg.gradients(g[1], [a])
        return [y, g, hg.stack(h0, h1, axis=0)]

    y, g, h = run_graph(build, a0)

    def eager_y(a):
        x = fixed_point(a)
        return hg.reduce_sum(x * x)

    assert np.isclose(y, eager_y(hg.constant(a0)).numpy(), rtol=1e-14)
    np.testing.assert_allclose(g, hg.grad(eager_y)(a0), rtol=1e-12)
    np.testing.assert_allclose(h, hg.jacfwd(hg.grad(eager_y))(a0), rtol=1e-10, atol=1e-12)


def test_graph_unrolled_descent_with_gradients_inside_body():
    a0 = np.array([0.3, -0.8, 1.2])

    def graph_descent(a, steps=20, lr=0.1):
        def body(i, w):
            (gw,) = hg.gradients(inner_loss(w, a), [w])
            return i + 1, w - lr * gw

        _, w = while_loop(lambda i, w: i < steps, body, (0, hg.zeros_like(a)))
        return hg.reduce_sum(w * hg.sin(w))

    def build(a):
        y = graph_descent(a)
        (g,) = hg.gradients(y, [a])
        return [y, g]

    y, g = run_graph(build, a0)
    assert np.isclose(y, float(unrolled_descent(hg.constant(a0))), rtol=1e-13)
    np.testing.assert_allclose(g, hg.grad(unrolled_descent)(a0), rtol=1e-11)
    np.testing.assert_allclose(g, fd(lambda a: run_graph(graph_descent, a), a0), rtol=1e-6)


def test_graph_loop_in_hg_function_and_dynamic_trip_count():
    @hg.function
    def f(a, n):
        _, x = while_loop(lambda k, x: k < n, lambda k, x: (k + 1, hg.cos(a * x)), (0, 0.5))
        return x

    for n in (0, 3, 30):
        x = 0.5
        for _ in range(n):
            x = np.cos(0.7 * x)
        assert np.isclose(f(np.array(0.7), np.array(n)), x, rtol=1e-15)
    assert f.experimental_traces == 1  # one trace serves every trip count


def test_graph_tensor_array_in_loop_gradients():
    x0 = r(3)

    def build(x):
        ta = TensorArray("float64", size=4, element_shape=(3,))

        def body(i, v, ta):
            v = hg.sin(v) * 2.0 + ta.read(hg.maximum(i - 1, 0)) * 0.1
            return i + 1, v, ta.write(i, v)

        _, v, ta = while_loop(lambda i, v, ta: i < 4, body, (0, x, ta))
        s = ta.stack()
        y = hg.reduce_sum(s * s) + hg.reduce_sum(v)
        (g,) = hg.gradients(y, [x])
        return [s, y, g]

    def eager(x):
        rows, v = [], x
        prev = hg.zeros_like(x)
        for i in range(4):
            v = hg.sin(v) * 2.0 + (rows[i - 1] if i else prev) * 0.1
            rows.append(v)
        s = hg.stack(*rows, axis=0)
        return hg.reduce_sum(s * s) + hg.reduce_sum(v)

    s, y, g = run_graph(build, x0)
    assert s.shape == (4, 3)
    assert np.isclose(y, float(eager(hg.constant(x0))), rtol=1e-14)
    np.testing.assert_allclose(g, hg.grad(eager)(x0), rtol=1e-12)


def test_graph_dynamic_tensor_array_and_methods():
    x0 = r(2)

    def build(x):
        ta = TensorArray("float64", size=0, dynamic_size=True, element_shape=(2,))
        _, ta = while_loop(lambda i, ta: i < 5,
                           lambda i, ta: (i + 1, ta.write(i, x * hg.cast(i, dtype="float64"))),
                           (0, ta))
        s = ta.stack()  # shape (None, 2): gradients need static shapes, so values only
        return [s, ta.size(), ta.concat()]

    s, size, cat = run_graph(build, x0)
    np.testing.assert_allclose(s, np.arange(5)[:, None] * x0)
    assert int(size) == 5 and cat.shape == (10,)

    def methods(x):
        ta = TensorArray("float64", size=3, element_shape=(2,)).unstack(x)
        ta2 = TensorArray("float64", size=4, element_shape=(2,))
        ta2 = ta2.scatter([3, 0], ta.gather([2, 2]) * ta.read(1))
        y = hg.reduce_sum(ta2.stack() * hg.reshape(hg.constant(np.arange(8.0)), shape=(4, 2)))
        (g,) = hg.gradients(y, [x])
        return [ta2.stack(), ta.size(), ta2.concat(), g]

    x1 = r(3, 2)
    stacked, size, cat, g = run_graph(methods, x1)
    expect = np.zeros((4, 2))
    expect[[3, 0]] = x1[2] * x1[1]
    np.testing.assert_allclose(stacked, expect)
    assert int(size) == 3 and cat.shape == (8,)

    def eager_methods(x):
        w = np.arange(8.0).reshape(4, 2)
        return hg.reduce_sum(x[2] * x[1] * (w[3] + w[0]))

    np.testing.assert_allclose(g, hg.grad(eager_methods)(x1), rtol=1e-12)


def test_graph_nested_loops_and_cond_in_loop():
    a0 = np.array([0.4, 0.9])

    def model(a):
        def outer_body(i, x):
            _, x = while_loop(lambda j, x: j < 3,
                              lambda j, x: (j + 1, x + 0.1 * hg.sin(a * x)), (0, x))
            x = cond(hg.reduce_sum(x) > 1.5, lambda: x * 0.9, lambda: x + a * a * 0.1)
            return i + 1, x

        _, x = while_loop(lambda i, x: i < 4, outer_body, (0, a))
        return hg.reduce_sum(x ** 3)

    def build(a):
        y = model(a)
        (g,) = hg.gradients(y, [a])
        (h0,) = hg.gradients(g[0], [a])
        return [y, g, h0]

    y, g, h0 = run_graph(build, a0)
    assert np.isclose(y, float(model(hg.constant(a0))), rtol=1e-14)
    np.testing.assert_allclose(g, hg.grad(model)(a0), rtol=1e-12)
    np.testing.assert_allclose(h0, hg.jacrev(hg.grad(model))(a0)[0], rtol=1e-10)


def test_graph_cond_gradients_both_branches_second_order():
    def build(x):
        y = cond(x > 0, lambda: x * x * x, lambda: hg.sin(x))
        (dy,) = hg.gradients(y, [x])
        (ddy,) = hg.gradients(dy, [x])
        return [y, dy, ddy]

    np.testing.assert_allclose(run_graph(build, np.array(2.0)), [8.0, 12.0, 12.0])
    np.testing.assert_allclose(run_graph(build, np.array(-1.0)),
                               [np.sin(-1.0), np.cos(-1.0), -np.sin(-1.0)])


def test_graph_cond_structures_and_concrete_pred():
    def build(x):
        out = cond(x[0] > 0, lambda: {"a": x * 2, "b": (x[1], 1)},
                   lambda: {"a": -x, "b": (x[0], 2)})
        return [out["a"], out["b"][0], out["b"][1]]

    a, b, c = run_graph(build, np.array([1.0, 5.0]))
    np.testing.assert_allclose(a, [2.0, 10.0])
    assert float(b) == 5.0 and int(c) == 1
    a, b, c = run_graph(build, np.array([-1.0, 5.0]))
    assert float(b) == -1.0 and int(c) == 2
    with hg.Graph().as_default():  # a Python predicate picks the branch at trace time
        assert cond(True, lambda: 1, lambda: 2) == 1


def test_graph_cond_on_a_variable_is_decided_at_run_time():
    # A Variable predicate was read once while building (bool(pred)): the traced function
    # kept the branch of its trace after flag.assign(False).
    flag = hg.Variable(True)
    traced = hg.function(lambda a: cond(flag, lambda: a * 2.0, lambda: a * 3.0))
    a = np.array([1.0])
    np.testing.assert_allclose(traced(a), [2.0])
    flag.assign(False)
    np.testing.assert_allclose(traced(a), [3.0])
    with hg.Graph().as_default() as g:
        out = cond(flag, lambda: hg.constant(2.0), lambda: hg.constant(3.0))
    flag.assign(True)
    assert float(g.run(out)) == 2.0


def test_graph_variable_captured_by_loop():
    v = hg.Variable(np.array([0.5, 1.5]))
    with hg.Graph().as_default() as g:
        _, x = while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * v), (0, hg.constant(np.ones(2))))
        y = hg.reduce_sum(x)
        (gv,) = hg.gradients(y, [v])
    np.testing.assert_allclose(g.run(gv), 3 * v.numpy() ** 2)
    v.assign([2.0, 1.0])
    np.testing.assert_allclose(g.run(y), 9.0)  # the loop reads the variable at run time


def test_block_nodes_stay_out_of_outer_plans():
    g = hg.Graph()
    with g.as_default():
        x = hg.placeholder("float64", shape=())
        start = len(g.nodes)
        _, y = while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, hg.exp(y) * x), (0, x))
        block = g.nodes[start:-1]
        z = y + 1.0
    plan = Plan(g, [z], [x])
    ops = [step[-1] for step in plan.steps]
    assert [n.type for n in ops].count("while") == 1
    assert not any(n in ops for n in block if n.type != "const")
    assert any(n.type == "exp" for n in block)


def test_graph_max_iterations_and_shape_invariants():
    def build(x):
        _, grown = while_loop(lambda i, v: i < 3,
                              lambda i, v: (i + 1, hg.concat([v, v[:1] * 2.0], axis=0)),
                              (0, x), shape_invariants=((), (None,)))
        k, _ = while_loop(lambda k, v: k < 100, lambda k, v: (k + 1, v), (0, x),
                          maximum_iterations=4)
        return [grown, k]

    grown, k = run_graph(build, np.array([1.0, 3.0]))
    np.testing.assert_allclose(grown, [1, 3, 2, 2, 2])
    assert int(k) == 4


def test_errors_name_the_function_and_shapes():
    with pytest.raises(TypeError, match="while_loop: body must be callable"):
        while_loop(lambda x: x < 1, 3, (1,))
    with pytest.raises(ValueError, match="while_loop: body must return the same structure"):
        while_loop(lambda a, b: a < 1, lambda a, b: (a + 1,), (0, 1.0))
    with pytest.raises(TypeError, match="cond: false_fn must be callable"):
        cond(True, lambda: 1, None)
    with hg.Graph().as_default():
        x = hg.placeholder("float64", shape=(2,))
        with pytest.raises(ValueError, match="loop variable 1 has shape \\(2,\\) on entry but "
                                             "\\(3,\\)"):
            while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, hg.concat([v, v[:1]], axis=0)),
                       (0, x))
        with pytest.raises(TypeError, match="loop variable 0 has dtype int64 on entry but "
                                            "float64"):
            while_loop(lambda i: i < 2, lambda i: i + 0.5, 0)
        with pytest.raises(TypeError, match="while_loop: cond must return a boolean scalar"):
            while_loop(lambda v: v, lambda v: v, x)
        with pytest.raises(ValueError, match="cond: true_fn and false_fn must return the same"):
            cond(x[0] > 0, lambda: (x, x), lambda: x)
        with pytest.raises(TypeError, match="cond: output 0 has dtype float64 in true_fn but "
                                            "int64"):
            cond(x[0] > 0, lambda: x, lambda: hg.constant([1, 2]))
        with pytest.raises(TypeError, match="cond: pred must be a boolean scalar"):
            cond(x, lambda: x, lambda: x)
        with pytest.raises(ValueError, match="no element_shape"):
            while_loop(lambda i, ta: i < 2, lambda i, ta: (i + 1, ta), (0, TensorArray("float64",
                                                                                       size=2)))
        ta = TensorArray("float64", size=2, element_shape=(2,))
        with pytest.raises(ValueError, match="TensorArray.write: value of element shape"):
            ta.write(0, hg.constant([1.0, 2.0, 3.0]))
        bad = ta.write(5, x)
    with pytest.raises(IndexError, match="TensorArray.write: index 5 is out of range"):
        bad._buf.graph.run(bad.stack(), {x: [1.0, 2.0]})
    with pytest.raises(IndexError, match="TensorArray.write: index 2 is out of range .* size 2"):
        TensorArray("float64", size=2).write(2, 1.0)
    with pytest.raises(IndexError, match="TensorArray.read"):
        TensorArray("float64", size=2).read(3)


# --- forward mode through graph-mode loops: JVPs and every HVP strategy ----------------------
def looped(a):
    def body(k, x, ta):
        x = hg.cos(a * x) + 0.1 * hg.sin(x)
        x = cond(hg.reduce_sum(x) > 0.5, lambda: x * 1.01, lambda: x - 0.01 * a)
        return k + 1, x, ta.write(k, x * a)

    ta = TensorArray("float64", size=6, element_shape=(3,))
    _, x, ta = while_loop(lambda k, x, ta: k < 6, body, (0, hg.ones_like(a) * 0.5, ta))
    return hg.reduce_sum(x ** 2) + hg.reduce_sum(ta.stack() ** 3)


def looped_unrolled(a):
    x, rows = hg.ones_like(a) * 0.5, []
    for _ in range(6):
        x = hg.cos(a * x) + 0.1 * hg.sin(x)
        x = x * 1.01 if hg.reduce_sum(x) > 0.5 else x - 0.01 * a
        rows.append(x * a)
    return hg.reduce_sum(x ** 2) + hg.reduce_sum(hg.stack(*rows, axis=0) ** 3)


def test_graph_jvp_through_loop_cond_and_tensor_array():
    a0, v = np.array([0.7, 1.1, -0.4]), np.array([0.3, -1.0, 2.0])
    with hg.Graph().as_default() as g:
        a = hg.placeholder("float64", (3,))
        with hg.ForwardAccumulator(a, hg.constant(v)) as acc:
            y = looped(a)
        t = acc.jvp(y)
    assert np.isclose(g.run(t, {a: a0}), hg.jvp(looped_unrolled, (a0,), (v,))[1], rtol=1e-13)


@pytest.mark.parametrize("mode", ["fwd-rev", "rev-rev", "rev-fwd"])
def test_graph_hvp_strategies_through_loops_agree_with_eager(mode):
    a0, v = np.array([0.7, 1.1, -0.4]), np.array([0.3, -1.0, 2.0])
    expect = hg.hvp(looped_unrolled)(a0, v)
    got = hg.make_hvp(looped, mode=mode)(a0)(v)  # traced: while/cond/TensorArray nodes
    np.testing.assert_allclose(got, expect, rtol=1e-12, atol=1e-13)


def nested_loops(x):
    def outer(i, s):
        _, t = while_loop(lambda j, t: j < 2, lambda j, t: (j + 1, hg.sin(t) * s), (0, s))
        return i + 1, t
    _, s = while_loop(lambda i, s: i < 2, outer, (0, x))
    return hg.reduce_sum(s)


def nested_loops_unrolled(x):
    s = x
    for _ in range(2):
        t = s
        for _ in range(2):
            t = hg.sin(t) * s
        s = t
    return hg.reduce_sum(s)


@pytest.mark.parametrize("mode", ["fwd-rev", "rev-rev", "rev-fwd"])
def test_graph_hvp_through_nested_loops(mode):
    # The forward pass of the outer loop's reverse loop clones its body, which holds the
    # inner loop *and* the inner loop's reverse loop reading its history: the clone of the
    # inner loop must keep recording (it was fed None instead of its history).
    x, v = np.array([0.3, 0.5, -0.2]), np.array([1.0, -0.5, 2.0])
    expect = hg.hvp(nested_loops_unrolled)(x, v)
    got = hg.function(lambda z, w: hg.hvp(nested_loops, mode=mode)(z, w), optimize=False)(x, v)
    np.testing.assert_allclose(got, expect, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(hg.make_hvp(nested_loops, mode=mode)(x)(v), expect, rtol=1e-12,
                               atol=1e-14)


def dynamic_rows(x):
    ta = TensorArray("float64", size=0, dynamic_size=True, element_shape=(3,))
    _, ta = while_loop(lambda i, ta: i < 4,
                       lambda i, ta: (i + 1, ta.write(i, x * hg.cast(i + 1, "float64"))),
                       (0, ta))
    return hg.reduce_sum(ta.read(2) * ta.read(3)) + hg.reduce_sum(ta.read(0) ** 3)


def test_graph_hvp_through_a_growing_tensor_array():
    # Forward mode carries the buffer's tangent through the loop: a buffer too, it keeps no
    # history (stacking the grown tangent buffers of every iteration failed).
    x, v = np.array([0.3, 0.5, -0.2]), np.array([1.0, -0.5, 2.0])
    expect = 24.0 * v + 6.0 * x * v  # sum(12 x^2 + x^3)
    for mode in ("fwd-rev", "rev-fwd"):
        np.testing.assert_allclose(hg.make_hvp(dynamic_rows, mode=mode)(x)(v), expect,
                                   rtol=1e-13)
    np.testing.assert_allclose(hg.hessian(dynamic_rows)(x), np.diag(24.0 + 6.0 * x),
                               rtol=1e-13)


# --- reverse loops take rows out of cotangent buffers in place -------------------------------
H, T = 3, 5
W0 = r(H, H) * 0.5
XS = r(T, H)


def rnn_loss(w, xs):
    hs = hg.scan(lambda h, x: hg.tanh(hg.matmul(h, w) + x), xs, initializer=np.zeros(H))
    return hg.reduce_sum(hs ** 3) + hg.reduce_sum(hs[1] * hs[3])


def rnn_loss_unrolled(w, xs):
    h, rows = np.zeros(H), []
    for t in range(T):
        h = hg.tanh(hg.matmul(h, w) + xs[t])
        rows.append(h)
    hs = hg.stack(*rows, axis=0)
    return hg.reduce_sum(hs ** 3) + hg.reduce_sum(hs[1] * hs[3])


def test_scan_gradient_updates_cotangent_buffers_in_place(monkeypatch):
    # A T-step scan's reverse loop used to copy the whole cotangent of its output buffer (a
    # write's adjoint) and build a whole zero buffer for its input's (a read's adjoint) at
    # every step: O(T^2). Now both are row updates of arrays the loop owns.
    calls = {"pop": [0, 0], "accumulate": [0, 0]}
    for name in calls:
        prim = getattr(cf, f"tensor_array_{name}").primitive
        forward = prim.forward

        def counting(first, *args, _forward=forward, _count=calls[name], **params):
            out = _forward(first, *args, **params)
            _count[0] += 1
            _count[1] += (out[1] if isinstance(out, tuple) else out) is first  # in place
            return out
        monkeypatch.setattr(prim, "forward", counting)
        monkeypatch.setattr(prim, "eager_forward", counting)
    for compiled in (False, True):
        grads = hg.function(hg.grad(rnn_loss, argnums=(0, 1)), jit_kernels=compiled)(W0, XS)
        expect = hg.grad(rnn_loss_unrolled, argnums=(0, 1))(W0, XS)
        for got, want in zip(grads, expect):
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    assert calls == {"pop": [2 * T, 2 * T], "accumulate": [2 * T, 2 * T]}


@pytest.mark.parametrize("mode", ["fwd-rev", "rev-rev", "rev-fwd"])
def test_scan_second_order_with_in_place_cotangents(mode):
    # fwd-rev runs the reverse loop and its tangent loop from the same initial cotangent
    # (each loop updates its own copy); rev-rev differentiates the reverse loop, whose
    # history must not alias arrays updated in place.
    v = r(H, H)
    f = hg.function(lambda w, v: hg.hvp(lambda w: rnn_loss(w, XS), mode=mode)(w, v))
    np.testing.assert_allclose(f(W0, v), hg.hvp(lambda w: rnn_loss_unrolled(w, XS))(W0, v),
                               rtol=1e-12, atol=1e-14)
    vx = r(T, H)
    g = hg.function(lambda x, v: hg.hvp(lambda x: rnn_loss(W0, x), mode=mode)(x, v))
    np.testing.assert_allclose(g(XS, vx), hg.hvp(lambda x: rnn_loss_unrolled(W0, x))(XS, vx),
                               rtol=1e-12, atol=1e-14)


def test_scan_hessian_and_third_order_with_in_place_cotangents():
    hess = hg.function(hg.hessian(lambda w: rnn_loss(w, XS)))(W0)  # batched HVPs
    np.testing.assert_allclose(hess, hg.hessian(lambda w: rnn_loss_unrolled(w, XS))(W0),
                               rtol=1e-12, atol=1e-14)
    v = r(H, H)

    def third(loss):
        return lambda w: hg.reduce_sum(hg.hvp(loss, mode="rev-rev")(w, v) ** 2)
    got = hg.function(hg.grad(third(lambda w: rnn_loss(w, XS))))(W0)
    np.testing.assert_allclose(got, hg.grad(third(lambda w: rnn_loss_unrolled(w, XS)))(W0),
                               rtol=1e-11, atol=1e-13)


def overwrites(x):
    # Row 0 written at every step (the last write wins), row 1 written before the loop and
    # read in it, row 2 written in the loop and read right after being written.
    ta = TensorArray("float64", size=3, element_shape=(2,)).write(1, x * 2.0)

    def body(i, v, ta):
        v = hg.sin(v) + ta.read(1) * 0.5
        ta = ta.write(0, v * v).write(2, v * hg.cast(i + 1, "float64"))
        return i + 1, v + ta.read(2) * 0.1, ta

    _, v, ta = while_loop(lambda i, v, ta: i < 3, body, (0, x, ta))
    return hg.reduce_sum(ta.stack() ** 2) + hg.reduce_sum(v)


def overwrites_unrolled(x):
    rows, v = [None, x * 2.0, None], x
    for i in range(3):
        v = hg.sin(v) + rows[1] * 0.5
        rows[0], rows[2] = v * v, v * float(i + 1)
        v = v + rows[2] * 0.1
    return hg.reduce_sum(hg.stack(*rows, axis=0) ** 2) + hg.reduce_sum(v)


def test_overwritten_and_pre_written_rows_get_the_right_gradients():
    x, v = np.array([0.4, -0.7]), np.array([1.0, 0.5])
    np.testing.assert_allclose(hg.function(hg.grad(overwrites))(x),
                               hg.grad(overwrites_unrolled)(x), rtol=1e-13)
    for mode in ("fwd-rev", "rev-rev"):
        np.testing.assert_allclose(hg.make_hvp(overwrites, mode=mode)(x)(v),
                                   hg.hvp(overwrites_unrolled)(x, v), rtol=1e-12)


def scan_in_loop(w):
    def outer(i, s):
        return i + 1, rnn_loss(w * s, XS) * 0.1 + s
    return while_loop(lambda i, s: i < 2, outer, (0, hg.constant(1.0)))[1]


def scan_in_loop_unrolled(w):
    s = 1.0
    for _ in range(2):
        s = rnn_loss_unrolled(w * s, XS) * 0.1 + s
    return s


def test_scan_nested_in_a_loop_with_in_place_cotangents():
    v = r(H, H)
    np.testing.assert_allclose(hg.function(hg.grad(scan_in_loop))(W0),
                               hg.grad(scan_in_loop_unrolled)(W0), rtol=1e-12)
    for mode in ("fwd-rev", "rev-rev", "rev-fwd"):
        np.testing.assert_allclose(hg.make_hvp(scan_in_loop, mode=mode)(W0)(v),
                                   hg.hvp(scan_in_loop_unrolled)(W0, v), rtol=1e-11)


# --- custom gradients inside graph loops and branches -----------------------------------------
@hg.custom_gradient
def softplus_custom(x):
    e = hg.exp(x)

    def grad(dy):  # reads e, a tensor of the loop body that the reverse loop clones
        return dy * (1 - 1 / (1 + e))
    return hg.log(1 + e), grad


recomputed_layer = hg.recompute_grad(lambda s: hg.tanh(s) * hg.reduce_sum(s ** 2))


def loop_of(layer, x):
    _, s = while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, layer(s) * x + 0.1), (0, x))
    return hg.reduce_sum(s ** 2)


def unrolled_of(fn, x):
    s = x
    for _ in range(3):
        s = fn(s) * x + 0.1
    return hg.reduce_sum(s ** 2)


@pytest.mark.parametrize("layer,plain", [
    (softplus_custom, hg.softplus),
    (recomputed_layer, lambda s: hg.tanh(s) * hg.reduce_sum(s ** 2)),
], ids=["custom_gradient", "recompute_grad"])
def test_custom_gradients_inside_a_graph_loop(layer, plain):
    # The reverse loop differentiates a clone of the body; the custom op's grad_fn must read
    # the clone's tensors, not the body's (whose placeholders are never fed: a crash), and
    # recompute_grad's tape must watch the clone's inputs (else its gradient was zero).
    x, v = np.array([0.3, -0.5, 0.2]), np.array([1.0, 0.5, -2.0])
    f, ref = (lambda z: loop_of(layer, z)), (lambda z: unrolled_of(plain, z))
    np.testing.assert_allclose(hg.function(hg.grad(f))(x), hg.grad(ref)(x), rtol=1e-12)
    expect = hg.hvp(ref)(x, v)
    for mode in ("fwd-rev", "rev-rev", "rev-fwd"):
        np.testing.assert_allclose(hg.make_hvp(f, mode=mode)(x)(v), expect, rtol=1e-11)
    with hg.Graph().as_default() as g:
        p = hg.placeholder("float64", (3,))
        (h,) = hg.hessians(f(p), p)
    np.testing.assert_allclose(g.run(h, {p: x}), hg.hessian(ref)(x), rtol=1e-11)


def row_by_branch(x):
    ta = TensorArray("float64", size=2, element_shape=(2,))
    ta = cond(x[0] > 1.0, lambda: ta.write(0, x ** 2), lambda: ta.write(0, hg.sin(x)))
    return hg.reduce_sum(ta.write(1, x * 3.0).stack() ** 2 * x[1])


def row_by_branch_unrolled(x):
    first = x ** 2 if x[0] > 1.0 else hg.sin(x)
    return hg.reduce_sum(hg.stack(first, x * 3.0, axis=0) ** 2 * x[1])


@pytest.mark.parametrize("x", [np.array([0.5, 2.0]), np.array([1.5, -1.0])])
def test_graph_cond_returning_a_tensor_array(x):
    # A branch's TensorArray result leaves the cond node as its flow tensors, as a loop's
    # does (the cond returned the bare buffer tensor, which has no TensorArray methods).
    np.testing.assert_allclose(hg.function(row_by_branch)(x), row_by_branch_unrolled(x).numpy(),
                               rtol=1e-14)
    np.testing.assert_allclose(hg.function(hg.grad(row_by_branch))(x),
                               hg.grad(row_by_branch_unrolled)(x), rtol=1e-13)
    np.testing.assert_allclose(hg.hessian(row_by_branch)(x),
                               hg.hessian(row_by_branch_unrolled)(x), rtol=1e-13)

    @hg.function
    def grown(z):
        dynamic = TensorArray("float64", size=0, dynamic_size=True, element_shape=(2,))
        return cond(z[0] > 1.0, lambda: dynamic.write(2, z), lambda: dynamic.write(0, -z)).size()
    assert int(grown(x)) == (3 if x[0] > 1.0 else 1)


def test_eager_unstack_and_scatter_are_one_op_each():
    # one unstack op per scatter (its gradient one stack), not a slice per row, whose
    # gradients were each full-size: an eager scan's backward was O(T^2)
    x = hg.constant(np.arange(12.0).reshape(4, 3))
    with hg.GradientTape() as tape:
        tape.watch(x)
        ta = hg.TensorArray(np.float64, size=6).unstack(x)
        ta = ta.scatter([5, 4], x[:2] * 2.0)
        y = hnp.sum(ta.read(1) * 3.0 + ta.read(5) + ta.read(4) * ta.read(4))
    names = sorted(p.name for p in tape.recorded_primitives())
    assert names.count("unstack") == 1 and "getitem" in names  # x[:2], and no row slices
    assert len([r for r in tape._records if r[0].name == "unstack"]) == 2
    want = np.zeros((4, 3))
    want[1] = 3.0 + 8.0 * x.numpy()[1]
    want[0] = 2.0
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), want)
    with pytest.raises(IndexError, match=r"TensorArray.scatter: index 6 is out of range"):
        hg.TensorArray(np.float64, size=6).scatter([6], x[:1])
    with pytest.raises(ValueError, match="element shape"):
        hg.TensorArray(np.float64, size=6, element_shape=(2,)).scatter([0], x[:1])
