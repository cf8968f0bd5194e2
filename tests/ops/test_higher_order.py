"""scan, foldl, foldr and map_fn: values against Python loops, derivatives to second order
(eager, traced and compiled, and graph-mode ``hessians``), TensorFlow's semantics for empty
sequences, ``reverse`` and missing initializers, and the errors."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.testing import check_grads

RNG = np.random.default_rng(0)
W = 0.5 * RNG.standard_normal((3, 3))
MODES = {"eager": lambda f: f, "compiled": hg.function,
         "plan": lambda f: hg.function(f, optimize=False)}


def rnn_scan(x):
    hs = hg.scan(lambda h, xt: hnp.tanh(h @ W + xt), x, initializer=np.zeros(3))
    return hnp.sum(hs ** 2)


def rnn_loop(x):
    h, total = np.zeros(3), 0.0
    for t in range(x.shape[0]):
        h = hnp.tanh(h @ W + x[t])
        total = total + hnp.sum(h ** 2)
    return total


def mixed(a):
    """Every function, pytrees, reverse, no initializer."""
    s = hg.scan(lambda acc, e: {"p": acc["p"] * e[0], "s": acc["s"] + e[1]}, (a, a ** 2),
                initializer={"p": 1.0, "s": 0.0}, reverse=True)
    left = hg.foldl(lambda acc, x: 0.5 * acc + hnp.sin(x), a)
    right = hg.foldr(lambda acc, x: 0.5 * acc + hnp.sin(x), a)
    prod, ex = hg.map_fn(lambda e: (e[0] * e[1], hnp.exp(e[0])), (a, a[::-1]))
    return hnp.sum(s["p"]) + hnp.sum(s["s"] ** 2) + left * right + hnp.sum(prod) * hnp.sum(ex)


def mixed_loop(a):
    n = a.shape[0]
    p, s, acc_p, acc_s = [None] * n, [None] * n, 1.0, 0.0
    for i in reversed(range(n)):
        acc_p, acc_s = acc_p * a[i], acc_s + a[i] ** 2
        p[i], s[i] = acc_p, acc_s
    left = a[0]
    for i in range(1, n):
        left = 0.5 * left + hnp.sin(a[i])
    right = a[n - 1]
    for i in reversed(range(n - 1)):
        right = 0.5 * right + hnp.sin(a[i])
    return hnp.sum(hnp.stack(p)) + hnp.sum(hnp.stack(s) ** 2) + left * right + \
        hnp.sum(a * a[::-1]) * hnp.sum(hnp.exp(a))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, loop, x", [
    (rnn_scan, rnn_loop, RNG.standard_normal((5, 3))),
    (mixed, mixed_loop, RNG.uniform(0.5, 1.5, 6)),
])
def test_gradients_hessians_hvps_match_the_python_loop(mode, f, loop, x):
    wrap = MODES[mode]
    np.testing.assert_allclose(wrap(f)(x), loop(x).numpy(), rtol=1e-13)
    np.testing.assert_allclose(wrap(hg.grad(f))(x), hg.grad(loop)(x), rtol=1e-12, atol=1e-13)
    H = hg.hessian(loop)(x)
    np.testing.assert_allclose(wrap(hg.hessian(f))(x), H, rtol=1e-11, atol=1e-12)
    v = np.cos(np.arange(x.size)).reshape(x.shape)
    hv = wrap(lambda x, v: hg.hvp(f)(x, v))(x, v)
    np.testing.assert_allclose(hv, (H.reshape(x.size, x.size) @ v.ravel()).reshape(x.shape),
                               rtol=1e-11, atol=1e-12)


def test_graph_mode_hessians():
    a = RNG.uniform(0.5, 1.5, 6)
    with hg.Graph().as_default() as g:
        p = hg.placeholder("float64", shape=(6,))
        (H,) = hg.hessians(mixed(p), [p])
    np.testing.assert_allclose(g.run(H, {p: a}), hg.hessian(mixed_loop)(a), rtol=1e-11,
                               atol=1e-12)


@pytest.mark.parametrize("fn", [
    lambda a: hnp.sum(hg.scan(lambda c, x: c * hnp.cos(x) + x, a) ** 2),
    lambda a: hg.foldr(lambda c, x: c * x + 1.0, a, initializer=hg.constant(0.3)),
    lambda a: hnp.sum(hg.map_fn(lambda r: hnp.tanh(r) @ r, hnp.reshape(a, (2, 3)))),
])
def test_finite_differences_second_order(fn):
    a = RNG.uniform(0.2, 1.0, 6)
    check_grads(fn, (a,), order=2, modes=("fwd", "rev"))
    check_grads(hg.function(fn), (a,), order=2, modes=("fwd", "rev"))


def test_tensorflow_semantics():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    # no initializer: the first element is the first output (last with reverse)
    np.testing.assert_array_equal(hg.scan(lambda c, e: c + e, x).numpy(), np.cumsum(x))
    np.testing.assert_array_equal(hg.scan(lambda c, e: c + e, x, reverse=True).numpy(),
                                  np.cumsum(x[::-1])[::-1])
    # an accumulator with another structure than elems
    out = hg.scan(lambda c, e: (c[0] + e, c[1] * e), x, initializer=(0.0, 1.0))
    np.testing.assert_array_equal(out[0].numpy(), np.cumsum(x))
    np.testing.assert_array_equal(out[1].numpy(), np.cumprod(x))
    assert float(hg.foldl(lambda c, e: c - e, x)) == 1.0 - 2.0 - 3.0 - 4.0
    assert float(hg.foldr(lambda c, e: c - e, x)) == 4.0 - 3.0 - 2.0 - 1.0
    # one element, no initializer: no step runs
    assert hg.scan(lambda c, e: c * 10.0, x[:1]).numpy().tolist() == [1.0]
    # dict elems, map_fn to another structure and dtype
    out = hg.map_fn(lambda e: {"n": hnp.sum(e["a"] > 0.0), "v": e["a"] * e["b"]},
                    {"a": np.ones((2, 3)), "b": np.arange(2.0)},
                    fn_output_signature={"n": np.int64, "v": np.float64})
    assert out["n"].numpy().tolist() == [3, 3]
    np.testing.assert_array_equal(out["v"].numpy(), [[0.0] * 3, [1.0] * 3])


@pytest.mark.parametrize("mode", MODES)
def test_empty_sequences(mode):
    def f(x):
        return (hg.scan(lambda c, e: c + e, x, initializer=np.zeros(2)),
                hg.map_fn(lambda r: hnp.sum(r) * hnp.ones(4), x),
                hg.foldl(lambda c, e: c + e, x, initializer=np.ones(2)))
    scanned, mapped, folded = MODES[mode](f)(np.zeros((0, 2)))
    assert np.shape(scanned) == (0, 2) and np.shape(mapped) == (0, 4)
    np.testing.assert_array_equal(folded, np.ones(2))


def test_errors():
    x = np.arange(3.0)
    with pytest.raises(ValueError, match="scan: elems are empty and there is no initializer"):
        hg.scan(lambda c, e: c + e, np.zeros(0))
    with pytest.raises(ValueError, match=r"foldl: the leaves of elems have different lengths"
                                         r" along axis 0: \[\(3,\), \(2,\)\]"):
        hg.foldl(lambda c, e: c, (x, x[:2]), initializer=0.0)
    with pytest.raises(ValueError, match=r"scan: elems leaf 0 has shape \(\)"):
        hg.scan(lambda c, e: c, 1.0, initializer=0.0)
    with pytest.raises(ValueError, match=r"scan: fn's result leaf 0 has dtype float64 and "
                                         r"shape \(2,\), but the accumulator leaf 0"):
        hg.scan(lambda c, e: c + hnp.ones(2), x, initializer=0.0)
    with pytest.raises(ValueError, match="foldr: fn must return the accumulator with the "
                                         "structure"):
        hg.foldr(lambda c, e: (c, c), x, initializer=0.0)
    with pytest.raises(ValueError, match="map_fn: fn must return the first element's result"):
        hg.map_fn(lambda e: e if float(e) < 1.0 else (e, e), x)
    with pytest.raises(TypeError, match="map_fn: fn's result leaf 0 has dtype float64, but "
                                        "fn_output_signature says int64"):
        hg.map_fn(lambda e: e * 2.0, x, fn_output_signature=np.int64)
    with pytest.raises(TypeError, match="map_fn: fn_output_signature"):
        hg.map_fn(lambda e: e * 2.0, x, fn_output_signature=(np.float64, np.float64))
    with hg.Graph().as_default():
        p = hg.placeholder("float64", shape=(None,))
        with pytest.raises(ValueError, match=r"map_fn: elems leaf 0 has shape \(None,\)"):
            hg.map_fn(lambda e: e, p)
