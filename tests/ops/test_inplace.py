"""In-place writes on hessgrad arrays (hessgrad.ops.inplace): numpy's semantics (views see
the writes to their base and write into it, aliases see every write, scalars stay immutable,
repeated indices, casting), derivatives through writes of every order in every mode (tapes,
forward accumulators, graph mode, hessgrad.function, grad, hvp, hessian, jacobian, vmap,
sparse Hessians), what sources mean once written, and the errors where a write cannot be
given a derivative."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.testing import check_grads

rng = np.random.default_rng(34)


def randn(*shape):
    return rng.standard_normal(shape)


# --- numpy's semantics: the same program on numpy and on hessgrad arrays ------------------
def _views_see_writes(m):
    a = m.zeros(5)
    v = a[1:]
    a[2] = 5.0
    w = v[1:]
    v[0] = 7.0
    w[-1] = -1.0
    return a, v, w


def _rows_and_columns(m):
    a = m.arange(12.0).reshape(3, 4)
    row, col, t = a[1], a[:, 2], a.T
    a[1, 2] = -5.0
    row[0] = 10.0
    t[3, 0] = 99.0
    col[:] = col * 2
    return a, row, col, t


def _rows_iterated_and_copies(m):
    import copy
    a = m.arange(6.0).reshape(3, 2)
    for row in a:  # rows are views, as numpy's
        row[0] = -row[1]
    b = copy.copy(a)
    c = copy.deepcopy(a)
    a[0, 0] = 100.0  # copies do not see it
    total = 0.0
    for x in m.arange(3.0):  # elements are scalars
        total = total + x
    return a, b, c, total


def _scalar_is_a_copy(m):
    a = m.arange(3.0)
    s = a[0]
    a[0] = 9.0
    return a, s


def _aliases(m):
    a = m.ones(3)
    b = a
    a += 1.0
    a *= m.arange(3.0)
    a -= 0.5
    a /= 2.0
    a **= 2
    return a, b


def _scalars_stay_immutable(m):
    x = m.arange(1.0, 4.0)
    s = m.sum(x)
    t = s
    s += 1.0
    z = m.zeros(())  # a 0-d array is updated in place
    w = z
    z += 2.0
    return s, t, z, w


def _repeated_indices(m):
    a = m.zeros(4)
    a[[0, 0, 1]] += 1.0          # buffered: once per position
    m.add.at(a, [0, 0, 2], 1.0)  # unbuffered: every time
    b = m.zeros(3)
    b[[0, 0, 2]] = [1.0, 2.0, 3.0]  # the last write wins
    c = m.ones(3)
    m.multiply.at(c, [1, 1, 2], [2.0, 3.0, 4.0])
    d = m.arange(1.0, 5.0)
    m.divide.at(d, [0, 0, 3], 2.0)
    m.maximum.at(d, [1, 1], [5.0, 0.0])
    m.negative.at(d, [2, 2, 3])
    return a, b, c, d


def _masks_and_fancy(m):
    a = m.linspace(-1.0, 1.0, 6)
    a[a > 0.5] = 0.0
    a[m.array([True, False, True, False, False, False])] = [7.0, 8.0]
    a[[1, 3]] *= 3.0
    a[a < 0] -= 1.0
    g = m.arange(6.0).reshape(2, 3)
    g[:, [0, 2]] = m.array([[1.0], [2.0]])
    g[1] += g[0]
    g[..., 1] = m.arange(2.0)
    return a, g


def _casting_and_overlap(m):
    i = m.zeros(3, dtype=int)
    i[0] = 2.7
    i += 2
    a = m.arange(6.0)
    a[1:] = a[:-1]
    b = m.arange(6.0)
    b[:-1] = b[1:] * 2
    return i, a, b


def _reshapes(m):
    a = m.arange(6.0)
    r = a.reshape(2, 3)        # a view of a C-ordered array
    c = a.reshape(2, 3)[:, 1:]
    flat = c.reshape(-1)       # a copy: c is not contiguous
    rav = c.ravel()            # a copy
    fl = r.flatten()           # always a copy
    e = m.expand_dims(a, 0)    # a view
    s = m.swapaxes(r, 0, 1)    # a view
    a[4] = 40.0
    r[0, 0] = -1.0
    s[2, 1] = 50.0
    return a, r, c, flat, rav, fl, e, s


def _methods(m):
    a = m.array([3.0, 1.0, 2.0, 5.0])
    v = a[1:]
    v.sort()
    b = m.zeros((2, 2))
    b.fill(4.0)
    c = m.arange(6.0)
    c.put([0, 5], [10.0, 20.0])
    c.flat[[1, 2]] = -1.0
    d = m.zeros(4)
    m.copyto(d, [1.0, 2.0, 3.0, 4.0], where=[True, False, True, False])
    m.putmask(d, d == 0, [9.0, 8.0])
    m.place(d, np.array([False, True, False, True]), [0.5])  # place needs a concrete mask
    e = m.zeros((3, 3))
    m.fill_diagonal(e, [1.0, 2.0, 3.0])
    f = m.zeros((2, 2))
    m.add(m.ones(2), 1.0, out=f[0])
    m.sum(m.ones((2, 2)), axis=0, out=f[1])
    return a, v, b, c, d, e, f


PROGRAMS = [_views_see_writes, _rows_and_columns, _rows_iterated_and_copies, _scalar_is_a_copy, _aliases,
            _scalars_stay_immutable, _repeated_indices, _masks_and_fancy, _casting_and_overlap,
            _reshapes, _methods]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__[1:] for p in PROGRAMS])
def test_numpy_semantics(program):
    want = program(np)
    got = program(hnp)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        w = np.asarray(w)
        g = np.asarray(g)
        assert g.dtype == w.dtype and g.shape == w.shape, (k, g, w)
        np.testing.assert_array_equal(g, w, err_msg=f"result {k}")


TRACEABLE = [p for p in PROGRAMS if p is not _masks_and_fancy]  # a[mask] -= 1 reads a[mask]


@pytest.mark.parametrize("program", TRACEABLE, ids=[p.__name__[1:] for p in TRACEABLE])
def test_numpy_semantics_traced(program):
    want = program(np)
    got = hg.function(lambda: program(hnp))()
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w), err_msg=f"result {k}")


def test_a_write_keeps_what_was_computed_before_it():
    a = hnp.arange(3.0)
    y = hnp.sin(a)
    before = a.copy()
    a[0] = 5.0
    a += 1.0
    np.testing.assert_array_equal(y.numpy(), np.sin(np.arange(3.0)))
    np.testing.assert_array_equal(before.numpy(), np.arange(3.0))
    np.testing.assert_array_equal(a.numpy(), [6.0, 2.0, 3.0])
    assert repr(a) == repr(hg.constant([6.0, 2.0, 3.0])) and a.shape == (3,)
    assert float(a[0]) == 6.0 and a.tolist() == [6.0, 2.0, 3.0]


def test_numpy_arrays_are_never_written():
    x = np.arange(3.0)
    a = hnp.asarray(x)
    a[0] = 7.0
    np.testing.assert_array_equal(x, np.arange(3.0))
    g = hg.grad(lambda v: (v.__setitem__(0, 0.0), hnp.sum(v ** 2))[1])(x)
    np.testing.assert_array_equal(x, np.arange(3.0))  # the transform's argument is a copy
    np.testing.assert_array_equal(g, [0.0, 2.0, 4.0])


# --- derivatives --------------------------------------------------------------------------
def _loop_fill(x):
    g = hnp.zeros(x.shape[0])
    for i in range(x.shape[0]):
        g[i] = x[i] ** 2 * (i + 1)
    return hnp.sum(g * x)


def _views_and_aliases(x):
    a = hnp.zeros((2, 3))
    row = a[1]
    a[0] = x[:3] * x[3]
    row += x[1:4] ** 2
    t = a.T
    t[1, :] *= x[0]
    b = a
    b -= hnp.sin(row)
    return hnp.sum(a ** 2) + hnp.prod(row)


def _overwrite_reads_old(x):
    a = x * 1.0
    y = a * a  # uses the old a
    a[1:] = a[:-1] * 2.0
    a[0] = y[-1]
    return hnp.sum(a * y)


def _writes_into_argument(x):
    x[0] = x[1] * x[2]   # numpy writes the caller's array; the derivative is the function's
    x[2:] *= 3.0
    return hnp.sum(hnp.exp(x) * x)


def _ufunc_at_and_out(x):
    a = hnp.zeros(3)
    hnp.add.at(a, [0, 0, 2], x[:3] ** 2)
    hnp.multiply.at(a, [1, 1], x[1:3])
    hnp.maximum.at(a, [2], x[0])
    buf = hnp.empty(3)
    hnp.exp(a, out=buf)
    hnp.multiply(buf, x[1:], out=buf, where=np.array([True, False, True]))
    return hnp.sum(buf) + hnp.sum(a * x[:3])


def _mask_and_put(x):
    a = x ** 2
    a[x > 0.3] = 0.5 * x[0]
    hnp.put(a, [1, 3], hnp.sin(x[:2]))
    hnp.copyto(a, x * x[1], where=x < -0.2)
    a.sort()
    return hnp.sum(a * hnp.arange(1.0, 5.0))


def _zero_d_arrays(x):
    acc = hnp.zeros(())
    for v in x:
        acc += v ** 2
    s = hnp.sum(x)
    s *= 2.0  # a new scalar
    return acc * s


DERIVATIVE_CASES = [(_loop_fill, randn(4)), (_views_and_aliases, randn(4)),
                    (_overwrite_reads_old, randn(4)), (_writes_into_argument, randn(4)),
                    (_ufunc_at_and_out, randn(4)), (_mask_and_put, randn(4)),
                    (_zero_d_arrays, randn(3))]
IDS = [f.__name__[1:] for f, _ in DERIVATIVE_CASES]


@pytest.mark.parametrize("f,x", DERIVATIVE_CASES, ids=IDS)
def test_second_order_both_modes(f, x):
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("f,x", DERIVATIVE_CASES, ids=IDS)
def test_every_transform_agrees(f, x):
    value, g = hg.value_and_grad(f)(x)
    H = hg.hessian(f)(x)
    v = randn(x.size)
    np.testing.assert_allclose(hg.hvp(f)(x, v), H @ v, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hg.hvp(f, mode="rev-rev")(x, v), H @ v, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hg.make_hvp(f)(x)(v), H @ v, rtol=1e-10, atol=1e-12)
    traced = hg.function(hg.value_and_grad(f))(x)
    np.testing.assert_allclose(traced[0], value, rtol=1e-13)
    np.testing.assert_allclose(traced[1], g, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(hg.function(hg.hessian(f))(x), H, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hg.jacfwd(hg.grad(f))(x), H, rtol=1e-10, atol=1e-12)
    X = np.stack([x, x + 0.1, x * 0.5])
    np.testing.assert_allclose(hg.vmap(hg.grad(f))(X), [hg.grad(f)(r) for r in X],
                               rtol=1e-12, atol=1e-14)
    S = hg.sparse_hessian(f)(x).toarray()
    np.testing.assert_allclose(S, H, rtol=1e-10, atol=1e-12)


def test_a_written_array_as_the_result():
    def f(x):
        out = hnp.empty((2, x.size))
        out[0] = hnp.cumsum(x)
        out[1, ::-1] = x ** 2
        out[:, 0] += 1.0
        return out
    x = randn(3)
    want = np.stack([np.cumsum(x), (x ** 2)[::-1]])
    want[:, 0] += 1.0
    np.testing.assert_allclose(f(x).numpy(), want)
    np.testing.assert_allclose(hg.function(f)(x), want)
    J = hg.jacobian(f)(x)
    np.testing.assert_allclose(J, hg.jacfwd(f)(x), rtol=1e-13)
    np.testing.assert_allclose(J[0], np.tril(np.ones((3, 3))))
    np.testing.assert_allclose(hg.vmap(f)(np.stack([x, 2 * x])), [want, f(2 * x).numpy()])
    check_grads(lambda x: f(x) ** 2, (x,), order=2, modes=("fwd", "rev"))


def test_tapes_and_accumulators():
    x = hg.constant(randn(3))
    with hg.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with hg.GradientTape() as inner:
            inner.watch(x)
            a = hnp.zeros(3)
            a[:] = x * x
            a[1] += x[0] * x[2]
            y = hnp.sum(a * x)
        g = inner.gradient(y, x)
        s = hnp.sum(g * g)
    h = outer.gradient(s, x)
    ref = hg.grad(lambda v: hnp.sum(hg.grad(_tape_fn)(v) ** 2))(x.numpy())
    np.testing.assert_allclose(g.numpy(), hg.grad(_tape_fn)(x.numpy()), rtol=1e-13)
    np.testing.assert_allclose(h.numpy(), ref, rtol=1e-12)
    t = hg.constant(randn(3))
    with hg.ForwardAccumulator(x, t) as acc:
        a = hnp.zeros(3)
        a[:] = x * x
        a[1] += x[0] * x[2]
        y = hnp.sum(a * x)
    np.testing.assert_allclose(float(acc.jvp(y)), hg.grad(_tape_fn)(x.numpy()) @ t.numpy(),
                               rtol=1e-13)


def _tape_fn(v):
    a = v * v
    a = hnp.concatenate([a[:1], a[1:2] + v[0] * v[2], a[2:]])
    return hnp.sum(a * v)


def test_graph_mode():
    g = hg.Graph()
    with g.as_default():
        x = hg.placeholder("float64", shape=(3,))
        a = hnp.zeros(3)
        a[1:] = x[:2] ** 2
        a[0] = hnp.sum(a) * x[2]
        y = hnp.sum(a * x)
        (dx,) = hg.gradients(y, [x])
        (hxx,) = hg.gradients(hnp.sum(dx * hg.constant([1.0, 0.0, 0.0])), [x])
    xv = randn(3)
    want_g = hg.grad(_graph_fn)(xv)
    got_a, got_g, got_h = g.run([a, dx, hxx], {x: xv})
    np.testing.assert_allclose(got_g, want_g, rtol=1e-13)
    np.testing.assert_allclose(got_h, hg.hessian(_graph_fn)(xv)[0], rtol=1e-12)
    np.testing.assert_allclose(got_a[1:], xv[:2] ** 2)


def _graph_fn(v):
    a = hnp.zeros(3)
    a[1:] = v[:2] ** 2
    a[0] = hnp.sum(a) * v[2]
    return hnp.sum(a * v)


def test_sources_mean_the_value_watched():
    x = hg.constant([1.0, 2.0, 3.0])
    with hg.GradientTape() as tape:
        tape.watch(x)
        x[0] = 10.0          # written after it was watched: the source is the watched value
        y = hnp.sum(x ** 2)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [0.0, 4.0, 6.0])
    z = hnp.zeros(3)
    z[1] = 2.0
    with hg.GradientTape() as tape:
        tape.watch(z)        # watched after a write: its value then
        y = hnp.sum(z ** 3)
    np.testing.assert_array_equal(tape.gradient(y, z).numpy(), [0.0, 12.0, 0.0])
    # a transform's argument written inside f: the derivative is the function's
    f = _writes_into_argument
    x = randn(4)
    xx = x.copy()
    xx[0] = x[1] * x[2]
    xx[2:] *= 3.0
    want = np.exp(xx) * (1 + xx) * np.array([0.0, 1.0, 3.0, 3.0])
    want[1] += (np.exp(xx[0]) * (1 + xx[0])) * x[2]
    want[2] += (np.exp(xx[0]) * (1 + xx[0])) * x[1]
    np.testing.assert_allclose(hg.grad(f)(x), want, rtol=1e-13)


def test_dynamic_scalar_index_traced():
    def f(x):
        a = x * 1.0
        k = hnp.argmax(x)
        a[k] = 0.0
        a[hnp.argmin(x)] += 10.0 * x[0]
        return hnp.sum(a ** 2)
    x = np.array([0.3, 2.0, -1.0, 0.5])
    want = hg.grad(f)(x)
    np.testing.assert_allclose(hg.function(hg.grad(f))(x), want, rtol=1e-13)
    np.testing.assert_allclose(hg.function(f)(x), f(x).numpy(), rtol=1e-13)


def test_traced_boolean_mask_with_a_scalar():
    def f(x):
        a = hnp.exp(x)
        a[x < 0] = x[0] ** 2   # a traced mask: numpy's a[mask] = scalar
        return hnp.sum(a * x)
    x = randn(5)
    np.testing.assert_allclose(hg.function(f)(x), f(x).numpy(), rtol=1e-13)
    np.testing.assert_allclose(hg.function(hg.grad(f))(x), hg.grad(f)(x), rtol=1e-13)
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))


def test_control_flow_bodies_write_their_own_arrays():
    def f(x):
        def body(i, acc):
            acc = acc * 1.0
            acc[0] = acc[0] + x[0] * hnp.cast(i, float) if hasattr(hnp, "cast") else acc[0]
            acc[1:] += acc[:-1] * 0.5
            return i + 1, acc
        _, out = hg.while_loop(lambda i, acc: i < 3, body, (0, x))
        return hnp.sum(out ** 2)
    x = randn(3)
    np.testing.assert_allclose(hg.function(f)(x), f(x).numpy(), rtol=1e-13)
    np.testing.assert_allclose(hg.function(hg.grad(f))(x), hg.grad(f)(x), rtol=1e-12)


# --- errors -------------------------------------------------------------------------------
OUTER = hnp.zeros(3)


def _leak(x):
    OUTER[0] = x[0]
    return hnp.sum(x)


def test_a_traced_value_cannot_be_written_into_an_outer_array():
    with pytest.raises(ValueError, match=r"a\[index\] = value: writes a value computed from "
                                         r"traced inputs.*shape \(3,\) created outside"):
        hg.function(_leak)(randn(3))
    with pytest.raises(ValueError, match="created outside the traced function"):
        hg.vmap(_leak)(randn(2, 3))
    np.testing.assert_array_equal(OUTER.numpy(), np.zeros(3))
    _leak(np.ones(3))  # eagerly it is numpy's side effect
    np.testing.assert_array_equal(OUTER.numpy(), [1.0, 0.0, 0.0])


def test_a_loop_body_cannot_write_an_outer_array():
    def f(x):
        a = hnp.zeros(3)

        def body(i, s):
            a[0] = s
            return i + 1, s * x[0]
        hg.while_loop(lambda i, s: i < 2, body, (0, x[1]))
        return hnp.sum(a)
    with pytest.raises(ValueError, match=r"inside a loop or branch body.*created outside "
                                         r"that body"):
        hg.function(f)(randn(3))


@pytest.mark.parametrize("call,exc,match", [
    (lambda: hg.Variable([1.0, 2.0]).__setitem__(0, 1.0), TypeError,
     r"a Variable is not written in place.*assign"),
    (lambda: hnp.zeros(3).__setitem__(slice(0, 2), np.ones(3)), ValueError,
     r"could not broadcast a value of shape \(3,\) into the indexed region of shape \(2,\) "
     r"\(the array has shape \(3,\)"),
    (lambda: hnp.zeros(3).__setitem__(5, 1.0), IndexError, r"index 5 is out of bounds"),
    (lambda: hnp.zeros(3, dtype=int).__iadd__(1.5), TypeError,
     r"Cannot cast ufunc 'add' output from dtype\('float64'\) to dtype\('int64'\)"),
    (lambda: hnp.zeros(3).__iadd__(np.ones((2, 3))), ValueError,
     r"non-broadcastable output operand with shape \(3,\) doesn't match the broadcast shape "
     r"\(2, 3\)"),
    (lambda: hnp.zeros(4)[1:].resize(2), ValueError, r"resize: cannot resize an array that "
                                                     r"references or is referenced"),
    (lambda: hg.function(lambda x: x.resize(2) or x)(np.ones(3)), ValueError,
     r"resize: a traced array of shape \(3,\) cannot be resized in place"),
    (lambda: hg.function(lambda x, i: x.__setitem__(hnp.argsort(i)[:2], 0.0) or x)(
        np.ones(3), np.ones(3)), TypeError,
     r"holds integer arrays computed from traced data, which may name one position twice"),
    (lambda: hg.function(lambda x: hnp.add.at(x, hnp.argsort(x), 1.0) or x)(np.ones(3)),
     TypeError, r"add\.at: the indices must be concrete"),
    (lambda: hnp.zeros(2).fill(np.ones(2)), ValueError, "fill: the value must be a scalar"),
    (lambda: hnp.put(hnp.zeros(2), [3], 1.0), IndexError,
     r"put: index 3 is out of bounds for an array of size 2"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
