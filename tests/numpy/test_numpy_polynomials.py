"""roots, poly, polyadd, polysub, polymul, polydiv, polyder, polyint: values and dtypes equal
numpy's (eager; traced where the result's length does not depend on values), derivatives to
second order in both modes against finite differences and against JAX x64."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.testing import check_grads

rng = np.random.default_rng(11)


def randn(*shape):
    return rng.standard_normal(shape)


f32 = np.float32
VALUE_ROWS = [
    ("roots", ([1.0, -3.0, 2.0],)), ("roots", ([0, 0, 1.0, -3.0, 2.0, 0, 0],)),
    ("roots", ([1, 0, 1],)), ("roots", ([0, 0],)), ("roots", ([5.0],)),
    ("roots", (f32([1, 2, 3]),)), ("roots", ([1 + 1j, 2, 3],)), ("roots", ([0, 3.0, 0],)),
    ("roots", (randn(7),)), ("roots", ([],)), ("roots", ([2, -4],)),
    ("poly", ([1.0, 2.0],)), ("poly", ([1j, -1j],)), ("poly", ([1, 2, 3],)),
    ("poly", (np.array([[1.0, 2.0], [3.0, 4.0]]),)), ("poly", (np.array([[0.0, 1.0], [-1.0, 0.0]]),)),
    ("poly", ([],)), ("poly", ([1 + 1j, 2],)), ("poly", (f32([1, 2]),)),
    ("poly", (randn(5),)),
    ("polyadd", ([1, 2], [3, 4, 5])), ("polyadd", ([1.0, 2, 3], f32([4]))),
    ("polysub", ([1j, 2], [3])), ("polyadd", (3, [1, 2])), ("polysub", ([1.0, 2.0], [1.0, 2.0])),
    ("polysub", (randn(4), randn(2))),
    ("polymul", ([0, 1, 2.0], [3])), ("polymul", ([1, 2], [3, 4])), ("polymul", ([0, 0], [1, 2.0])),
    ("polymul", (f32([1, 2]), [1.5])), ("polymul", (randn(4), randn(3) + 1j)), ("polymul", (2.0, [1.0, 1.0])),
    ("polydiv", ([1.0, -3, 2], [1, -1])), ("polydiv", ([1.0, 2], [1, 2, 3])),
    ("polydiv", ([3, 5, 7, 1.0], [2, 1])), ("polydiv", (f32([1, 2, 3]), [2.0])),
    ("polydiv", ([1, 2, 3], f32([2, 1]))), ("polydiv", ([1j, 2, 3], [2, 1])),
    ("polydiv", (randn(6), randn(3))), ("polydiv", ([1.0, 0.0, 0.0], [1.0, 0.0])),
    ("polydiv", (4.0, [2.0])),
    ("polyder", ([1, 2, 3, 4],)), ("polyder", ([1.0, 2, 3, 4], 3)), ("polyder", ([1.0, 2], 5)),
    ("polyder", ([1.0, 2], 0)), ("polyder", (f32([1, 2, 3]),)), ("polyder", ([1j, 2.0],)),
    ("polyint", ([1, 2, 3],)), ("polyint", ([1.0, 2, 3], 2)), ("polyint", ([1.0, 2, 3], 3, [1, 2, 3])),
    ("polyint", ([1.0, 2], 2, 7)), ("polyint", (f32([1, 2]),)), ("polyint", ([1, 2], 0)),
    ("polyint", ([1j, 2.0], 1, 1j)), ("polyint", ([2.0], 2, [1.0, 2.0, 3.0])),
]


@pytest.mark.parametrize("name,args", VALUE_ROWS, ids=[f"{r[0]}-{k}" for k, r in enumerate(VALUE_ROWS)])
def test_values_and_dtypes_match_numpy(name, args):
    want, got = getattr(np, name)(*args), getattr(hnp, name)(*args)
    wants, gots = (want, got) if isinstance(want, tuple) else ((want,), (got,))
    for w, g in zip(wants, gots):
        w, g = np.asarray(w), np.asarray(g)
        assert g.dtype == w.dtype and g.shape == w.shape, (g, w)
        np.testing.assert_array_equal(g, w)


TRACED_ROWS = [  # lengths known from shapes: these trace
    ("roots", lambda p: hnp.roots(p, strip_zeros=False), lambda p: np.roots(p), (randn(5),)),
    ("poly", hnp.poly, np.poly, (randn(4),)),
    ("poly matrix", hnp.poly, np.poly, (randn(3, 3),)),
    ("polyadd", hnp.polyadd, np.polyadd, (randn(4), randn(2))),
    ("polysub", hnp.polysub, np.polysub, (randn(2), randn(3))),
    ("polymul", lambda a, b: hnp.polymul(a, b, trim_leading_zeros=False), np.polymul, (randn(3), randn(4))),
    ("polydiv", lambda u, v: hnp.polydiv(u, v, trim_leading_zeros=False),
     lambda u, v: (np.polydiv(u, v)[0], np.polydiv(u, v)[1]), (randn(5), randn(3))),
    ("polyder", lambda p: hnp.polyder(p, 2), lambda p: np.polyder(p, 2), (randn(5),)),
    ("polyint", lambda p, k: hnp.polyint(p, 2, k), lambda p, k: np.polyint(p, 2, k), (randn(3), randn(2))),
]


@pytest.mark.parametrize("name,ours,theirs,args", TRACED_ROWS, ids=[r[0] for r in TRACED_ROWS])
def test_traced_values(name, ours, theirs, args):
    got, want = hg.function(ours)(*args), theirs(*args)
    gots, wants = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    for g, w in zip(gots, wants):
        g = np.asarray(g)
        if name in ("roots", "poly matrix"):  # traced eigenvalues are complex (eig's rule)
            w = w.astype(complex)
        elif name == "polydiv":  # the remainder keeps its leading entries
            w = np.concatenate([np.zeros(g.shape[0] - w.shape[0]), w])
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def _parts(z):
    return hnp.stack([hnp.real(z), hnp.imag(z)])


def _sorted_real_roots(p):  # distinct real roots 1, 2, 4 scaled: a real-dtype row
    return hnp.roots(p)


GRAD_ROWS = [
    ("roots real", hnp.roots, (np.poly([1.0, 2.0, 4.0]) * 1.5,)),
    ("roots complex", lambda p: _parts(hnp.roots(p)), (np.array([1.0, 0.5, 2.0, -1.0]),)),
    ("roots stripped", lambda p: _parts(hnp.roots(p * np.array([0.0, 1.0, 1.0, 1.0, 0.0]))),
     (np.array([1.0, 2.0, 1.0, 3.0, 1.0]),)),
    ("roots no strip", lambda p: _parts(hnp.roots(p, strip_zeros=False)), (randn(4),)),
    ("poly", hnp.poly, (randn(4),)),
    ("poly complex roots", lambda x, y: _parts(hnp.poly(x + 1j * y)), (randn(3), randn(3))),
    ("poly matrix", lambda a: _parts(hnp.poly(a)), (randn(3, 3),)),
    ("polyadd", hnp.polyadd, (randn(4), randn(2))),
    ("polysub", hnp.polysub, (randn(2), randn(3))),
    ("polymul", hnp.polymul, (randn(3), randn(4))),
    ("polydiv", lambda u, v: hnp.polydiv(u, v, trim_leading_zeros=False), (randn(5), randn(3) + 2.0)),
    ("polydiv trimmed", hnp.polydiv, (randn(5), randn(2) + 2.0)),
    ("polyder", lambda p: hnp.polyder(p * p, 2), (randn(5),)),
    ("polyint", lambda p, k: hnp.polyint(p * p, 2, k), (randn(3), randn(2))),
    ("polyval of polyfit", lambda y: hnp.polyval(hnp.polyfit(np.arange(5.0), y, 2), 1.5), (randn(5),)),
]


@pytest.mark.parametrize("name,f,args", GRAD_ROWS, ids=[r[0] for r in GRAD_ROWS])
def test_derivatives_order2(name, f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)


def test_roots_derivative_is_implicit_function_theorem():
    # p(r(c)) = 0: dr/dp_k = -r^(n-k) / p'(r)
    p = np.array([2.0, -3.0, -11.0, 6.0])
    r = np.roots(p)
    g = hg.jacobian(hnp.roots)(p)
    want = -np.vander(r, len(p)) / np.polyval(np.polyder(p), r)[:, None]
    np.testing.assert_allclose(g, want, rtol=1e-10)


@pytest.mark.parametrize("name", ["roots", "poly", "polymul", "polydiv", "polyder", "polyint"])
def test_derivatives_match_jax(name):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    c = randn(6)
    cases = {  # (function of the module, its arguments)
        "roots": (lambda m, p: m.sum(m.abs(m.roots(p, strip_zeros=False)) ** 3), (randn(5),)),
        "poly": (lambda m, z: m.sum(m.poly(z) ** 2 * c[:5]), (randn(4),)),
        "polymul": (lambda m, a, b: m.sum(m.polymul(a, b) ** 3 * c), (randn(3), randn(4))),
        "polydiv": (lambda m, u, v: m.sum(m.polydiv(u, v, trim_leading_zeros=False)[0] ** 2) +
                    m.sum(m.polydiv(u, v, trim_leading_zeros=False)[1] ** 3), (randn(5), randn(3) + 2.0)),
        "polyder": (lambda m, p: m.sum(m.polyder(p ** 3, 2) * c[:3]), (randn(5),)),
        "polyint": (lambda m, p, k: m.sum(m.polyint(p, 2, k) ** 3 * c[:5]), (randn(3), randn(2))),
    }
    f, args = cases[name]
    ours, theirs = (lambda *a: f(hnp, *a)), (lambda *a: f(jnp, *a))
    argnums = tuple(range(len(args)))
    for got, want in zip(hg.grad(ours, argnums=argnums)(*args), jax.grad(theirs, argnums=argnums)(*args)):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)
    if len(args) == 1 and name != "roots":  # JAX's second derivative of roots needs eig's
        t = randn(*args[0].shape)
        np.testing.assert_allclose(hg.hvp(ours)(args[0], t),
                                   jax.jvp(jax.grad(theirs), args, (t,))[1], rtol=1e-8, atol=1e-10)


def test_scalar_coefficients_count_as_one():
    # numpy documents array_like input, but its dispatcher rejects a bare scalar for these two
    assert hnp.roots(3.0).shape == (0,) and hnp.roots(3.0).dtype == np.float64
    np.testing.assert_array_equal(hnp.poly(2.5).numpy(), np.poly([2.5]))


def test_traced_stripping_needs_concrete_values():
    for call, keyword in ((lambda p: hnp.roots(p), "strip_zeros=False"),
                          (lambda p: hnp.polymul(p, p), "trim_leading_zeros=False"),
                          (lambda p: hnp.polydiv(p, p[:2]), "trim_leading_zeros=False")):
        with pytest.raises(TypeError, match=f"must be known while a function is traced.*{keyword}"):
            hg.function(call)(randn(4))
    # eager tensors are concrete: stripping works on them
    p = hg.constant([0.0, 1.0, -3.0, 2.0, 0.0])
    np.testing.assert_allclose(hnp.roots(p).numpy(), np.roots(p.numpy()))


def test_poly_conjugate_pairs_give_real_coefficients_eagerly():
    z = np.array([1 + 2j, 1 - 2j, 3.0])
    assert hnp.poly(z).dtype == np.float64
    assert hg.function(hnp.poly)(z).dtype == np.complex128  # traced: values unknown
    np.testing.assert_allclose(hg.function(hnp.poly)(z).real, np.poly(z))


@pytest.mark.parametrize("call,exc,match", [
    (lambda: hnp.roots(np.ones((2, 2))), ValueError, r"roots: argument 'p' must be a 1-D .*\(2, 2\)"),
    (lambda: hnp.poly(np.ones((2, 3))), ValueError, r"poly: input must be 1d or non-empty square 2d"),
    (lambda: hnp.poly(np.ones((2, 2, 2))), ValueError, r"poly: .*\(2, 2, 2\)"),
    (lambda: hnp.polymul(np.ones((2, 2)), [1.0]), ValueError, r"polymul: argument 'a1' must be a 1-D"),
    (lambda: hnp.polydiv([1.0], np.ones((1, 2))), ValueError, r"polydiv: argument 'v' must be a 1-D"),
    (lambda: hnp.polyder([1.0, 2.0], -1), ValueError, "polyder: Order of derivative must be positive"),
    (lambda: hnp.polyint([1.0, 2.0], -1), ValueError, "polyint: Order of integral must be positive"),
    (lambda: hnp.polyint([1.0, 2.0], 3, k=[1.0, 2.0]), ValueError, "polyint: k must be a scalar"),
    (lambda: hnp.polyder(2.0), TypeError, "polyder: argument 'p' must be a sequence"),
    (lambda: hnp.polyadd(np.poly1d([1.0]), [1.0]), TypeError, "polyadd: numpy.poly1d objects"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
