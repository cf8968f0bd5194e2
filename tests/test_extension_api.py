"""The extension API (#37 part 3): JAX's custom_jvp / custom_vjp, autograd's @primitive with
defvjp / defjvp, custom_gradient around a numpy body, and primitives declared with a VJP only,
checked to second order (hessian, every hvp mode, grad of grad), eager and traced."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.testing import check_grads

X = np.array([0.3, -0.5, 0.8])
V = np.array([1.0, -2.0, 0.5])
MODES = ("auto", "fwd-rev", "rev-rev", "rev-fwd")


def numeric_hessian(f, x, h=1e-5):
    """Central differences of the (exact) gradient: an independent check of the second
    derivative."""
    g = hg.grad(f)
    cols = [(g(x + h * e) - g(x - h * e)) / (2 * h) for e in np.eye(x.size)]
    return np.array(cols).T


def check_second_order(f, H, x=X, v=V, rtol=1e-10, atol=1e-12, traced=True):
    """hessian, every hvp mode and grad of grad of ``f`` at ``x`` against ``H``."""
    close = dict(rtol=rtol, atol=atol)
    np.testing.assert_allclose(hg.hessian(f)(x), H, **close)
    np.testing.assert_allclose(hg.jacobian(hg.grad(f))(x), H, **close)
    np.testing.assert_allclose(hg.grad(lambda y: hnp.sum(hg.grad(f)(y) * v))(x), H @ v,
                               **close)
    for mode in MODES:
        np.testing.assert_allclose(hg.hvp(f, mode=mode)(x, v), H @ v, err_msg=mode, **close)
        if traced:
            np.testing.assert_allclose(hg.function(hg.hvp(f, mode=mode))(x, v), H @ v,
                                       err_msg=mode, **close)
    np.testing.assert_allclose(hg.make_hvp(f)(x)(v), H @ v, **close)
    if traced:
        np.testing.assert_allclose(hg.function(hg.hessian(f))(x), H, **close)
        np.testing.assert_allclose(hg.function(hg.grad(f))(x), hg.grad(f)(x), **close)
        grad_of_grad = hg.function(hg.grad(lambda y: hnp.sum(hg.grad(f)(y) * v)))
        np.testing.assert_allclose(grad_of_grad(x), H @ v, **close)


# --- the reference function: F(x) = sum(a * sin(x) * x), H = diag(a (2 cos x - x sin x)) ----

def hessian_of_reference(x, a=2.0):
    return np.diag(a * (2 * np.cos(x) - x * np.sin(x)))


# --- custom_vjp ----------------------------------------------------------------------------

def make_sin_times():
    @hg.custom_vjp
    def sin_times(x, a):
        return hnp.sin(x) * a

    def fwd(x, a):
        return sin_times(x, a), (x, a)  # JAX's idiom: fwd calls the function itself

    def bwd(res, g):
        x, a = res
        return g * hnp.cos(x) * a, hnp.sum(g * hnp.sin(x))

    sin_times.defvjp(fwd, bwd)
    return sin_times


def test_custom_vjp_second_order_eager_and_traced():
    sin_times = make_sin_times()
    f = lambda x: hnp.sum(sin_times(x, 2.0) * x)  # noqa: E731
    check_second_order(f, hessian_of_reference(X))
    np.testing.assert_allclose(numeric_hessian(f, X), hessian_of_reference(X), rtol=1e-7)


def test_custom_vjp_multiple_arguments_and_check_grads():
    sin_times = make_sin_times()
    a = np.array(1.7)
    ga, gx = hg.grad(lambda a, x: hnp.sum(sin_times(x, a)), argnums=(0, 1))(a, X)
    np.testing.assert_allclose(ga, np.sum(np.sin(X)), rtol=1e-14)
    np.testing.assert_allclose(gx, a * np.cos(X), rtol=1e-14)
    (Haa, Hax), (Hxa, Hxx) = hg.hessian(lambda a, x: hnp.sum(sin_times(x, a) * x),
                                        argnums=(0, 1))(a, X)
    np.testing.assert_allclose(Haa, 0.0, atol=1e-15)
    np.testing.assert_allclose(Hax, np.sin(X) + X * np.cos(X), rtol=1e-13)
    np.testing.assert_allclose(Hxa, Hax, rtol=1e-13)
    np.testing.assert_allclose(Hxx, hessian_of_reference(X, a), rtol=1e-13)
    check_grads(lambda x, a: sin_times(x, a) * x, (X, a), order=2)


def test_custom_vjp_rule_is_used_and_keywords_bind():
    @hg.custom_vjp
    def clip_gradient(x, lo=-1.0, hi=1.0):
        return x

    clip_gradient.defvjp(lambda x, lo, hi: (x, (lo, hi)),
                         lambda res, g: (hnp.clip(g, res[0], res[1]), None, None))
    assert float(hg.grad(lambda x: 3.0 * clip_gradient(x))(2.0)) == 1.0
    assert float(hg.grad(lambda x: 3.0 * clip_gradient(x, hi=2.5))(2.0)) == 2.5
    assert float(hg.function(hg.grad(lambda x: 3.0 * clip_gradient(x)))(2.0)) == 1.0


def test_custom_vjp_nondiff_argnums():
    def power(n, x):
        return x ** n

    power = hg.custom_vjp(power, nondiff_argnums=(0,))
    power.defvjp(lambda n, x: (x ** n, x), lambda n, x, g: (g * n * x ** (n - 1),))
    f = lambda x: hnp.sum(power(3, x) * x)  # noqa: E731 - x^4: H = diag(12 x^2)
    check_second_order(f, np.diag(12 * X ** 2))
    assert power.__name__ == "power"


def test_custom_vjp_structured_output_and_argument():
    @hg.custom_vjp
    def both(p):
        return p["a"] * p["b"], hnp.sin(p["a"])

    def fwd(p):
        return both(p), p

    def bwd(p, g):
        g_prod, g_sin = g
        return ({"a": g_prod * p["b"] + g_sin * hnp.cos(p["a"]), "b": g_prod * p["a"]},)

    both.defvjp(fwd, bwd)

    def f(x):
        prod, s = both({"a": x, "b": x * x})
        return hnp.sum(prod + s)  # x^3 + sin x: H = diag(6 x - sin x)
    check_second_order(f, np.diag(6 * X - np.sin(X)))


def test_custom_vjp_numpy_forward_eager():
    @hg.custom_vjp
    def tanh(x):
        return np.tanh(np.asarray(x))  # plain numpy: runs on values

    tanh.defvjp(lambda x: (tanh(x), x), lambda x, g: (g * (1 - hnp.tanh(x) ** 2),))
    f = lambda x: hnp.sum(tanh(x))  # noqa: E731
    t = np.tanh(X)
    np.testing.assert_allclose(hg.grad(f)(X), 1 - t ** 2, rtol=1e-14)
    check_second_order(f, np.diag(-2 * t * (1 - t ** 2)), traced=False)
    with pytest.raises(hg.ConcretizationError, match="hg.primitive"):
        hg.function(hg.grad(f))(X)


def test_custom_vjp_errors():
    @hg.custom_vjp
    def f(x, y):
        return x * y

    with pytest.raises(AttributeError, match="defvjp"):
        f(1.0, 2.0)
    f.defvjp(lambda x, y: (x * y, (x, y)), lambda res, g: (g * res[1],))  # one too few
    with pytest.raises(ValueError, match="one cotangent per differentiated argument"):
        hg.grad(f)(1.0, 2.0)
    with pytest.raises(ValueError, match="out of range"):
        g = hg.custom_vjp(lambda x: x, nondiff_argnums=(3,))
        g.defvjp(lambda x: (x, None), lambda res, g: (g,))
        g(1.0)


# --- custom_jvp ----------------------------------------------------------------------------

def make_sin_times_jvp():
    @hg.custom_jvp
    def sin_times(x, a):
        return hnp.sin(x) * a

    @sin_times.defjvp
    def _(primals, tangents):
        x, a = primals
        tx, ta = tangents
        return sin_times(x, a), tx * hnp.cos(x) * a + ta * hnp.sin(x)
    return sin_times


def test_custom_jvp_second_order_eager_and_traced():
    sin_times = make_sin_times_jvp()
    f = lambda x: hnp.sum(sin_times(x, 2.0) * x)  # noqa: E731
    check_second_order(f, hessian_of_reference(X))
    a = np.array(1.7)
    ga, gx = hg.grad(lambda a, x: hnp.sum(sin_times(x, a)), argnums=(0, 1))(a, X)
    np.testing.assert_allclose(ga, np.sum(np.sin(X)), rtol=1e-14)
    np.testing.assert_allclose(gx, a * np.cos(X), rtol=1e-14)
    check_grads(lambda x, a: sin_times(x, a) * x, (X, a), order=2)


def test_custom_jvp_rule_is_used():
    # JAX's example: log1p(exp(x)) whose naive derivative is nan at large x
    @hg.custom_jvp
    def log1pexp(x):
        return hnp.log1p(hnp.exp(x))

    @log1pexp.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return log1pexp(x), (1 - 1 / (1 + hnp.exp(x))) * t

    x = np.array([0.0, 3.0, 1000.0])
    s = 1 / (1 + np.exp(-x[:2]))
    np.testing.assert_allclose(hg.grad(lambda x: hnp.sum(log1pexp(x)))(x), [*s, 1.0])
    np.testing.assert_allclose(hg.jvp(log1pexp, (x,), (np.ones(3),))[1], [*s, 1.0])
    H = np.diag(hg.hessian(lambda x: hnp.sum(log1pexp(x)))(x[:2]))
    np.testing.assert_allclose(H, s * (1 - s), rtol=1e-14)


def test_custom_jvp_nondiff_argnums_and_defjvps():
    def scaled_cube(c, x):
        return c * x ** 3

    f = hg.custom_jvp(scaled_cube, nondiff_argnums=(0,))
    f.defjvp(lambda c, primals, tangents: (f(c, *primals), 3 * c * primals[0] ** 2 * tangents[0]))
    check_second_order(lambda x: hnp.sum(f(2.0, x)), np.diag(12 * X))

    g = hg.custom_jvp(lambda x, y: x * hnp.sin(y))
    g.defjvps(lambda tx, ans, x, y: tx * hnp.sin(y), lambda ty, ans, x, y: ty * x * hnp.cos(y))
    check_grads(g, (X, X[::-1].copy()), order=2)
    check_second_order(lambda x: hnp.sum(g(x, x)), np.diag(2 * np.cos(X) - X * np.sin(X)))


def test_custom_jvp_numpy_body_eager():
    @hg.custom_jvp
    def tanh(x):
        return np.tanh(np.asarray(x))

    tanh.defjvp(lambda p, t: (tanh(p[0]), t[0] * (1 - hnp.tanh(p[0]) ** 2)))
    t = np.tanh(X)
    check_second_order(lambda x: hnp.sum(tanh(x)), np.diag(-2 * t * (1 - t ** 2)),
                       traced=False)


def test_custom_jvp_without_rule():
    f = hg.custom_jvp(lambda x: x)
    with pytest.raises(AttributeError, match="defjvp"):
        f(1.0)


# --- autograd's @primitive, defvjp, defjvp --------------------------------------------------

def logsumexp_np(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def test_autograd_primitive_with_vjp_only_second_order():
    lse = hg.primitive(logsumexp_np)
    hg.defvjp(lse, lambda ans, x: lambda g: g * hnp.exp(x - ans))
    f = lambda x: lse(x) * hnp.sum(x)  # noqa: E731
    p = np.exp(X - logsumexp_np(X))
    one = np.ones_like(X)
    H_lse = np.diag(p) - np.outer(p, p)
    H = H_lse * np.sum(X) + np.outer(p, one) + np.outer(one, p)
    check_second_order(f, H)
    np.testing.assert_allclose(numeric_hessian(f, X), H, rtol=1e-7)
    np.testing.assert_allclose(hg.jvp(lse, (X,), (V,))[1], p @ V, rtol=1e-14)
    np.testing.assert_allclose(hg.jacfwd(lse)(X), p, rtol=1e-14)
    assert lse.__name__ == "logsumexp_np"


def test_autograd_defjvp_and_same():
    @hg.primitive
    def mul(a, b):
        return a * b

    hg.defvjp(mul, lambda ans, a, b: lambda g: g * b, lambda ans, a, b: lambda g: g * a)
    hg.defjvp(mul, "same", "same")
    check_second_order(lambda x: hnp.sum(mul(x, x) * x), np.diag(6 * X))
    np.testing.assert_allclose(hg.jvp(lambda x: mul(x, x), (X,), (V,))[1], 2 * X * V)

    @hg.primitive
    def cube(x, scale=1.0):  # a keyword is the op's parameter
        return scale * x ** 3

    hg.defjvp(cube, lambda g, ans, x, scale=1.0: 3 * scale * x ** 2 * g)
    hg.defvjp(cube, lambda ans, x, scale=1.0: lambda g: 3 * scale * x ** 2 * g)
    check_second_order(lambda x: hnp.sum(cube(x, scale=2.0)), np.diag(12 * X))


def test_autograd_defvjp_argnums():
    @hg.primitive
    def affine(x, w):
        return x * w

    hg.defvjp(affine, lambda ans, x, w: lambda g: g * x, argnums=(1,))  # w only
    assert hg.grad(lambda x, w: affine(x, w), argnums=1)(3.0, 2.0) == 3.0
    assert hg.grad(lambda x, w: affine(x, w), argnums=0)(3.0, 2.0) == 0.0


def test_defvjp_errors():
    with pytest.raises(TypeError, match="not a primitive"):
        hg.defvjp(lambda x: x, lambda ans, x: lambda g: g)
    with pytest.raises(ValueError, match="one of hessgrad's"):
        hg.defvjp(hg.sin, lambda ans, x: lambda g: g)
    with pytest.raises(ValueError, match="rules for argnums"):
        hg.defjvp(hg.primitive(logsumexp_np), None, argnums=(0, 1))


# --- primitives declared with a VJP only -----------------------------------------------------

def test_vjp_only_primitive_in_hvp_and_hessian():
    vsin = hg.primitive("test_ext_vjp_only_sin", np.sin,
                        vjp=[lambda g, ans, x: g * hnp.cos(x)])
    f = lambda x: hnp.sum(vsin(x) * x * 2.0)  # noqa: E731
    check_second_order(f, hessian_of_reference(X))
    np.testing.assert_allclose(hg.jacfwd(vsin)(X), np.diag(np.cos(X)), rtol=1e-14)

    # several results, a joint rule
    sincos = hg.primitive("test_ext_vjp_only_sincos", lambda x: (np.sin(x), np.cos(x)),
                          vjp=lambda g, ans, x: (g[0] * hnp.cos(x) - g[1] * hnp.sin(x),),
                          multiple_results=True)

    def g(x):
        s, c = sincos(x)
        return hnp.sum(s * c * x)  # sin(2x) x / 2: H = diag(2 cos 2x - 2 x sin 2x)
    check_second_order(g, np.diag(2 * np.cos(2 * X) - 2 * X * np.sin(2 * X)))


def test_vjp_only_primitive_with_an_untransposable_vjp_names_it_and_the_fixes():
    bad = hg.primitive("test_ext_numpy_vjp", np.sin,
                       vjp=[lambda g, ans, x: g * np.cos(np.asarray(x))])
    f = lambda x: hnp.sum(bad(x))  # noqa: E731
    np.testing.assert_allclose(hg.grad(f)(X), np.cos(X), rtol=1e-14)  # first order is fine
    # first order forward mode too: the transpose differentiates w.r.t. the output gradient
    np.testing.assert_allclose(hg.jvp(bad, (X,), (V,))[1], np.cos(X) * V, rtol=1e-14)
    for call in (lambda: hg.hvp(f)(X, V), lambda: hg.hessian(f)(X),
                 lambda: hg.hvp(f, mode="rev-fwd")(X, V)):
        with pytest.raises(LookupError) as info:
            call()
        message = str(info.value)
        assert "test_ext_numpy_vjp" in message and "jvp=" in message and "rev-rev" in message
    with pytest.raises(hg.ConcretizationError):  # never a wrong number
        hg.hvp(f, mode="rev-rev")(X, V)


def test_primitive_with_no_rule_at_all():
    none = hg.primitive("test_ext_no_rules", np.sin)
    with pytest.raises(LookupError, match="test_ext_no_rules"):
        hg.jvp(none, (X,), (V,))


# --- custom_gradient around a numpy body ----------------------------------------------------

def test_custom_gradient_numpy_body_second_order():
    @hg.custom_gradient
    def f(x):
        y = np.sin(np.asarray(x))  # plain numpy

        def grad_fn(dy):
            return dy * hnp.cos(x)
        return y, grad_fn

    F = lambda x: hnp.sum(f(x))  # noqa: E731
    x = np.array([0.1, 0.2])
    np.testing.assert_allclose(hg.grad(F)(x), np.cos(x), rtol=1e-14)
    check_second_order(F, np.diag(-np.sin(x)), x=x, v=np.array([1.0, -3.0]), traced=False)
    with pytest.raises(hg.ConcretizationError, match="hg.defvjp"):
        hg.function(hg.hessian(F))(x)
    with pytest.raises(hg.ConcretizationError, match="hg.primitive"):
        hg.function(F)(x)


def test_under_vmap_and_jacobians():
    sin_times, sin_times_jvp = make_sin_times(), make_sin_times_jvp()
    lse = hg.primitive(logsumexp_np)
    hg.defvjp(lse, lambda ans, x: lambda g: g * hnp.exp(x - ans))
    xs = np.stack([X, 2 * X])
    for fn in (lambda x: sin_times(x, 2.0), lambda x: sin_times_jvp(x, 2.0)):
        np.testing.assert_allclose(hg.vmap(fn)(xs), 2 * np.sin(xs), rtol=1e-14)
        np.testing.assert_allclose(hg.jacfwd(fn)(X), np.diag(2 * np.cos(X)), rtol=1e-14)
        np.testing.assert_allclose(hg.jacrev(fn)(X), np.diag(2 * np.cos(X)), rtol=1e-14)
    np.testing.assert_allclose(hg.vmap(lse)(xs), [logsumexp_np(r) for r in xs], rtol=1e-14)
    np.testing.assert_allclose(hg.vmap(hg.grad(lse))(xs),
                               [np.exp(r - logsumexp_np(r)) for r in xs], rtol=1e-14)


def test_numpy_values_read_by_the_rule_refuse_second_order():
    """A rule reading numpy arrays its body computed from x would miss their dependence on x
    at second order: first order works, second order raises (never a wrong number)."""
    @hg.custom_gradient
    def tanh(x):
        y = np.tanh(np.asarray(x))

        def grad_fn(dy):
            return dy * (1 - y ** 2)
        return y, grad_fn

    @hg.custom_vjp
    def tanh2(x):
        return np.tanh(np.asarray(x))

    tanh2.defvjp(lambda x: (tanh2(x), np.tanh(np.asarray(x))),
                 lambda y, g: (g * (1 - y ** 2),))
    x = np.array([0.1, 0.2])
    for fn in (tanh, tanh2):
        F = lambda x, fn=fn: hnp.sum(fn(x))  # noqa: E731
        np.testing.assert_allclose(hg.grad(F)(x), 1 - np.tanh(x) ** 2, rtol=1e-14)
        np.testing.assert_allclose(hg.jvp(fn, (x,), (np.ones(2),))[1], 1 - np.tanh(x) ** 2,
                                   rtol=1e-14)
        for mode in MODES:
            with pytest.raises(ValueError, match="hessgrad ops"):
                hg.hvp(F, mode=mode)(x, np.ones(2))
        with pytest.raises(ValueError, match="second derivative"):
            hg.hessian(F)(x)
