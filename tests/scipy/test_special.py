"""hessgrad.scipy.special: SciPy's values (rtol 1e-12), first and second derivatives forward and
reverse against finite differences (parameters included), the extreme arguments of the issue,
NotImplementedError for derivatives without a formula, graph mode (hessgrad.function), and
the error that names the replacement when scipy.special meets a traced value."""

import numpy as np
import pytest
import scipy.special as sc

import hessgrad as hg
import hessgrad.numpy as hnp
import hessgrad.scipy.special as hsp
from hessgrad.ops import special as sp
from hessgrad.testing import check_grads

# the primitives of hessgrad/ops/special.py declared for this namespace (see test_coverage.py)
COVERED = {
    "bessel_i", "bessel_j", "bessel_y", "polygamma", "gammaln", "gamma", "betaln", "beta",
    "zeta", "erfc", "erfcx", "erfinv", "erfcinv", "ndtr", "ndtri", "log_ndtr", "logit",
    "log_expit", "xlogy", "xlog1py", "entr", "rel_entr", "gammainc", "gammaincc", "betainc",
    "spence", "expi", "exp1", "owens_t", "i0", "i1", "gammaincinv", "betaincinv", "poch",
    "stdtr", "stdtrit",
}

rng = np.random.default_rng(3)
POS = rng.uniform(0.3, 4.0, (2, 3))
POS2 = rng.uniform(0.4, 3.0, (3,))
REAL = rng.uniform(-3.0, 3.0, (2, 3))
UNIT = rng.uniform(0.05, 0.95, (2, 3))
SYM = rng.uniform(-0.9, 0.9, (2, 3))

# (id, hessgrad function, scipy function, arguments as a tuple)
VALUES = [
    ("gammaln", hsp.gammaln, sc.gammaln, (np.concatenate([POS.ravel(), [-2.5, 1e-300, 1e300,
                                                                        170.3]]),)),
    ("gamma", hsp.gamma, sc.gamma, (np.concatenate([POS.ravel(), [-2.5, 0.1]]),)),
    ("digamma", hsp.digamma, sc.digamma, (np.concatenate([POS.ravel(), [-2.5]]),)),
    ("psi", hsp.psi, sc.psi, (POS,)),
    ("polygamma1", lambda x: hsp.polygamma(1, x), lambda x: sc.polygamma(1, x), (POS,)),
    ("polygamma3", lambda x: hsp.polygamma(3, x), lambda x: sc.polygamma(3, x), (POS,)),
    ("multigammaln", lambda a: hsp.multigammaln(a, 3), lambda a: sc.multigammaln(a, 3),
     (np.array(2.7),)),
    ("beta", hsp.beta, sc.beta, (POS, POS2)),
    ("betaln", hsp.betaln, sc.betaln, (np.array([1e10, 0.5, 3.0]), np.array([1.0, 2.5, 1e-3]))),
    ("betainc", hsp.betainc, sc.betainc, (POS, POS2, UNIT)),
    ("gammainc", hsp.gammainc, sc.gammainc, (POS, POS2)),
    ("gammaincc", hsp.gammaincc, sc.gammaincc, (POS, POS2)),
    ("zeta", hsp.zeta, sc.zeta, (POS + 1.1, POS2)),
    ("zeta-riemann", hsp.zeta, sc.zeta, (POS + 1.1,)),
    ("erf", hsp.erf, sc.erf, (REAL,)),
    ("erfc", hsp.erfc, sc.erfc, (np.concatenate([REAL.ravel(), [10.0, 26.0, -30.0]]),)),
    ("erfcx", hsp.erfcx, sc.erfcx, (np.concatenate([REAL.ravel(), [1e5, -20.0]]),)),
    ("erfinv", hsp.erfinv, sc.erfinv, (SYM,)),
    ("erfcinv", hsp.erfcinv, sc.erfcinv, (UNIT * 2,)),
    ("ndtr", hsp.ndtr, sc.ndtr, (REAL,)),
    ("ndtri", hsp.ndtri, sc.ndtri, (np.concatenate([UNIT.ravel(), [1e-300, 1 - 1e-16]]),)),
    ("log_ndtr", hsp.log_ndtr, sc.log_ndtr, (np.array([-1e5, -40.0, -5.0, 0.0, 3.0, 40.0]),)),
    ("expit", hsp.expit, sc.expit, (np.concatenate([REAL.ravel(), [-800.0, 800.0, -40]]),)),
    ("logit", hsp.logit, sc.logit, (UNIT,)),
    ("log_expit", hsp.log_expit, sc.log_expit, (np.array([-800.0, -30, -1.0, 0.0, 2.0, 800.0]),)),
    ("xlogy", hsp.xlogy, sc.xlogy, (np.array([0.0, 0.0, 1.5, 2.0]), np.array([0.0, 2.0, 0.5, 3]))),
    ("xlog1py", hsp.xlog1py, sc.xlog1py, (np.array([0.0, 0.0, 1.5]), np.array([-1.0, 2.0, 0.5]))),
    ("entr", hsp.entr, sc.entr, (np.array([0.0, 0.5, 2.0, -1.0]),)),
    ("rel_entr", hsp.rel_entr, sc.rel_entr, (np.array([0.0, 0.5, 2.0, -1.0]), POS[0, 0])),
    ("kl_div", hsp.kl_div, sc.kl_div, (np.array([0.0, 0.5, 2.0, -1.0]), POS[0, 0])),
    ("iv", lambda x: hsp.iv(2.5, x), lambda x: sc.iv(2.5, x), (POS,)),
    ("ive", lambda x: hsp.ive(1.5, x), lambda x: sc.ive(1.5, x), (POS * 100,)),
    ("i0", hsp.i0, sc.i0, (REAL,)), ("i0e", hsp.i0e, sc.i0e, (REAL * 100,)),
    ("i1", hsp.i1, sc.i1, (REAL,)), ("i1e", hsp.i1e, sc.i1e, (REAL * 100,)),
    ("jv", lambda x: hsp.jv(1.5, x), lambda x: sc.jv(1.5, x), (POS,)),
    ("jn", lambda x: hsp.jn(3, x), lambda x: sc.jn(3, x), (REAL,)),
    ("j0", hsp.j0, sc.j0, (REAL,)), ("j1", hsp.j1, sc.j1, (REAL,)),
    ("yv", lambda x: hsp.yv(0.5, x), lambda x: sc.yv(0.5, x), (POS,)),
    ("yn", lambda x: hsp.yn(2, x), lambda x: sc.yn(2, x), (POS,)),
    ("y0", hsp.y0, sc.y0, (POS,)), ("y1", hsp.y1, sc.y1, (POS,)),
    ("sinc", hsp.sinc, sc.sinc, (np.concatenate([REAL.ravel(), [0.0]]),)),
    ("spence", hsp.spence, sc.spence, (np.array([0.0, 0.3, 1.0, 2.5]),)),
    ("expi", hsp.expi, sc.expi, (REAL,)),
    ("exp1", hsp.exp1, sc.exp1, (POS,)),
    ("owens_t", hsp.owens_t, sc.owens_t, (REAL, POS2)),
    ("gammaincinv", sp.gammaincinv, sc.gammaincinv, (POS, UNIT)),
    ("betaincinv", sp.betaincinv, sc.betaincinv, (POS, POS2, UNIT)),
    ("poch", sp.poch, sc.poch, (POS, POS2)), ("stdtr", sp.stdtr, sc.stdtr, (POS, REAL)),
    ("stdtrit", sp.stdtrit, sc.stdtrit, (POS, UNIT)),
    ("logsumexp", hsp.logsumexp, sc.logsumexp, (REAL,)),
    ("logsumexp-axis", lambda a: hsp.logsumexp(a, axis=1, keepdims=True),
     lambda a: sc.logsumexp(a, axis=1, keepdims=True), (REAL,)),
    ("logsumexp-b", lambda a, b: hsp.logsumexp(a, axis=0, b=b),
     lambda a, b: sc.logsumexp(a, axis=0, b=b), (REAL, POS2)),
    ("softmax", lambda x: hsp.softmax(x, axis=1), lambda x: sc.softmax(x, axis=1), (REAL,)),
    ("softmax-all", hsp.softmax, sc.softmax, (REAL,)),
    ("log_softmax", lambda x: hsp.log_softmax(x, axis=0),
     lambda x: sc.log_softmax(x, axis=0), (REAL,)),
]


@pytest.mark.parametrize("name,f,ref,args", VALUES, ids=[r[0] for r in VALUES])
def test_values_equal_scipy(name, f, ref, args):
    with np.errstate(all="ignore"):
        want = ref(*args)
    got = np.asarray(f(*args))
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


# (id, function, arguments): derivatives of order 2, forward and reverse, in every argument
GRADS = [
    ("gammaln", hsp.gammaln, (POS,)), ("gamma", hsp.gamma, (POS,)),
    ("gamma-negative", hsp.gamma, (np.array([-2.5, -0.4]),)),
    ("digamma", hsp.digamma, (POS,)), ("polygamma2", lambda x: hsp.polygamma(2, x), (POS,)),
    ("multigammaln", lambda a: hsp.multigammaln(a, 4), (POS + 2,)),
    ("beta", hsp.beta, (POS, POS2)), ("betaln", hsp.betaln, (POS, POS2)),
    ("betainc-x", lambda x: hsp.betainc(POS, POS2, x), (UNIT,)),
    ("betainc-a1", lambda x: hsp.betainc(1.0, 2.5, x), (np.array([0.01, 0.3]),)),
    ("gammainc-x", lambda x: hsp.gammainc(POS, x), (POS2,)),
    ("gammaincc-x", lambda x: hsp.gammaincc(POS, x), (POS2,)),
    ("zeta-q", lambda q: hsp.zeta(2.5, q), (POS,)),
    ("erf", hsp.erf, (REAL,)), ("erfc", hsp.erfc, (REAL,)), ("erfcx", hsp.erfcx, (REAL,)),
    ("erfinv", hsp.erfinv, (SYM,)), ("erfcinv", hsp.erfcinv, (UNIT * 2,)),
    ("ndtr", hsp.ndtr, (REAL,)), ("ndtri", hsp.ndtri, (UNIT,)),
    ("log_ndtr", hsp.log_ndtr, (np.concatenate([REAL.ravel(), [-12.0, -0.001, 0.0, 8.0]]),)),
    ("expit", hsp.expit, (REAL,)), ("logit", hsp.logit, (UNIT,)),
    ("log_expit", hsp.log_expit, (REAL * 5,)),
    ("logsumexp", hsp.logsumexp, (REAL,)),
    ("logsumexp-axis-keepdims", lambda a: hsp.logsumexp(a, axis=-1, keepdims=True), (REAL,)),
    ("logsumexp-b", lambda a, b: hsp.logsumexp(a, axis=1, b=b), (REAL, POS2)),
    ("logsumexp-b-signed", lambda a, b: hsp.logsumexp(a, b=b, return_sign=True)[0],
     (REAL, np.array([1.0, -0.3, 0.5]))),
    ("logsumexp-b-zero", lambda a, b: hsp.logsumexp(a, b=b), (REAL[0], np.array([0.0, 1.0, 2.0]))),
    ("softmax", lambda x: hsp.softmax(x, axis=0), (REAL,)),
    ("log_softmax", lambda x: hsp.log_softmax(x, axis=1), (REAL,)),
    ("xlogy", hsp.xlogy, (POS, POS2)), ("xlog1py", hsp.xlog1py, (POS, POS2)),
    ("xlogy-y-at-x-zero", lambda y: hsp.xlogy(np.array([0.0, 1.0, 0.0]), y), (POS2,)),
    ("entr", hsp.entr, (POS,)), ("rel_entr", hsp.rel_entr, (POS, POS2)),
    ("kl_div", hsp.kl_div, (POS, POS2)),
    ("iv", lambda x: hsp.iv(0.7, x), (POS,)), ("ive", lambda x: hsp.ive(2, x), (POS,)),
    ("i0", hsp.i0, (REAL,)), ("i0e", hsp.i0e, (REAL,)), ("i1", hsp.i1, (REAL,)),
    ("i1-at-0", hsp.i1, (np.array([0.0, 0.5]),)), ("i1e", hsp.i1e, (REAL,)),
    ("jv", lambda x: hsp.jv(2.5, x), (POS,)), ("jn", lambda x: hsp.jn(2, x), (REAL,)),
    ("j0", hsp.j0, (REAL,)), ("j1", hsp.j1, (REAL,)),
    ("yv", lambda x: hsp.yv(1.5, x), (POS,)), ("yn", lambda x: hsp.yn(3, x), (POS + 1,)),
    ("y0", hsp.y0, (POS,)), ("y1", hsp.y1, (POS,)),
    ("sinc", hsp.sinc, (REAL,)),
    ("spence", hsp.spence, (np.array([0.3, 0.97, 1.0, 1.03, 2.5]),)),
    ("expi", hsp.expi, (POS,)), ("expi-negative", hsp.expi, (-POS,)), ("exp1", hsp.exp1, (POS,)),
    ("owens_t", hsp.owens_t, (REAL, POS2)),
    ("0d", lambda x: hsp.gammaln(x) * hsp.ndtr(x), (np.array(1.3),)),
    # primitives behind hessgrad.scipy.stats
    ("gammaincinv-q", lambda q: sp.gammaincinv(POS, q), (UNIT[0],)),
    ("betaincinv-q", lambda q: sp.betaincinv(POS, POS2, q), (UNIT,)),
    ("poch", sp.poch, (POS, POS2)),
    ("stdtr-t", lambda t: sp.stdtr(POS, t), (REAL,)),
    ("stdtrit-q", lambda q: sp.stdtrit(POS, q), (UNIT,)),
    ("empty", hsp.log_ndtr, (np.zeros((0, 2)),)),
]


@pytest.mark.parametrize("name,f,args", GRADS, ids=[r[0] for r in GRADS])
def test_grads(name, f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"))


def _value_and_grads(f, args):
    return hg.grad(lambda *a: hnp.sum(f(*a)), argnums=tuple(range(len(args))))(*args)


@pytest.mark.parametrize("name,f,args", GRADS[::3], ids=[r[0] for r in GRADS[::3]])
def test_graph_mode(name, f, args):
    """hessgrad.function runs every primitive (the compiler calls their forwards): values
    and gradients equal the eager ones."""
    np.testing.assert_allclose(hg.function(f)(*args), np.asarray(f(*args)), rtol=1e-13)
    graph = hg.function(lambda *a: _value_and_grads(f, a))(*args)
    for got, want in zip(graph, _value_and_grads(f, args)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)


def test_graph_mode_hessian():
    f = lambda x: hnp.sum(hsp.log_ndtr(x) + hsp.gammaln(x) * hsp.xlogy(x, x + 1.0))  # noqa: E731
    x = np.array([0.4, 1.7, 3.2])
    np.testing.assert_allclose(hg.function(hg.hessian(f))(x), hg.hessian(f)(x), rtol=1e-12)


# --- extreme arguments ----------------------------------------------------------------------
def test_log_ndtr_tails():
    """First and second derivatives against 50-digit references, far in the left tail."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 50
    x = np.array([-1e5, -40.0, -10.0, -1.0, 0.0, 3.0])
    f = lambda x: hnp.sum(hsp.log_ndtr(x))  # noqa: E731
    d1 = hg.grad(f)(x)
    d2 = np.diag(hg.hessian(f)(x))
    ref = lambda t: mpmath.log(mpmath.ncdf(t))  # noqa: E731
    want1 = [float(mpmath.diff(ref, mpmath.mpf(xi))) for xi in x]
    want2 = [float(mpmath.diff(ref, mpmath.mpf(xi), 2)) for xi in x]
    np.testing.assert_allclose(d1, want1, rtol=1e-14)
    np.testing.assert_allclose(d2, want2, rtol=1e-12)
    assert float(hsp.log_ndtr(-40.0)) == sc.log_ndtr(-40.0)
    right = hg.grad(f)(np.array([10.0, 40.0]))
    assert right[1] == 0.0 and 0 < right[0] < 1e-22


def test_betainc_derivative_at_x_0():
    # x^(a-1) (1-x)^(b-1) / B(a, b) at x = 0 with a = 1: 1 / B(1, b) = b
    assert hg.grad(lambda x: hsp.betainc(1.0, 2.5, x))(0.0) == pytest.approx(2.5, rel=1e-14)


def test_logsumexp_huge_weights():
    a = np.array([0.0, 1.0, 2.0])
    b = np.array([1e300, -1e300, 1e300])
    out, s = hsp.logsumexp(a, b=b, return_sign=True)
    want, wsign = sc.logsumexp(a, b=b, return_sign=True)
    np.testing.assert_allclose(out, want, rtol=1e-12)
    assert s == wsign
    g = hg.grad(lambda a: hsp.logsumexp(a, b=b))(a)
    w = b * np.exp(a) / np.sum(b * np.exp(a))
    np.testing.assert_allclose(g, w, rtol=1e-12)
    gb = hg.grad(lambda bb: hsp.logsumexp(a, b=bb), )(b)
    np.testing.assert_allclose(gb, np.exp(a) / np.sum(b * np.exp(a)), rtol=1e-12)
    out = hsp.logsumexp(np.array([1000.0, -1000.0]), b=np.array([-1e300, 1e300]),
                        return_sign=True)
    np.testing.assert_allclose(out[0], 1000.0 + np.log(1e300), rtol=1e-14)
    assert out[1] == -1.0


def test_logsumexp_zero_weight_keeps_its_derivative():
    a = np.array([0.3, -0.2, 1.1])
    b = np.array([0.0, 1.0, 2.0])
    gb = hg.grad(lambda bb: hsp.logsumexp(a, b=bb))(b)
    np.testing.assert_allclose(gb, np.exp(a) / np.sum(b * np.exp(a)), rtol=1e-12)


def test_logsumexp_negative_sum_is_nan_without_sign():
    assert np.isnan(float(hsp.logsumexp([1.0, 2.0], b=[1.0, -1.0])))


def test_gammaln_extremes():
    x = np.array([1e-300, 1e300])
    np.testing.assert_allclose(hsp.gammaln(x), sc.gammaln(x), rtol=1e-14)
    g = hg.grad(lambda x: hnp.sum(hsp.gammaln(x)))(x)
    np.testing.assert_allclose(g, sc.digamma(x), rtol=1e-14)
    assert np.isfinite(g).all()
    h = np.diag(hg.hessian(lambda x: hnp.sum(hsp.gammaln(x)))(x))
    np.testing.assert_allclose(h, sc.polygamma(1, x), rtol=1e-14)


def test_expit_and_log_expit_at_800():
    x = np.array([-800.0, 800.0])
    np.testing.assert_array_equal(hsp.expit(x), sc.expit(x))
    np.testing.assert_array_equal(hsp.log_expit(x), sc.log_expit(x))
    for f in (hsp.expit, hsp.log_expit):
        g = hg.grad(lambda x: hnp.sum(f(x)))(x)
        h = hg.hessian(lambda x: hnp.sum(f(x)))(x)
        assert np.isfinite(g).all() and np.isfinite(h).all()
    np.testing.assert_array_equal(hg.grad(lambda x: hnp.sum(hsp.log_expit(x)))(x), [1.0, 0.0])


def test_xlogy_at_zero():
    assert float(hsp.xlogy(0.0, 0.0)) == 0.0
    gy = hg.grad(lambda y: hsp.xlogy(0.0, y))(0.0)
    assert gy == 0.0
    h = hg.hessian(lambda v: hsp.xlogy(v[0], v[1]))(np.array([0.0, 2.0]))
    np.testing.assert_allclose(h, [[0.0, 0.5], [0.5, 0.0]])
    assert hg.grad(lambda y: hsp.xlog1py(0.0, y))(-1.0) == 0.0
    assert float(hsp.entr(0.0)) == 0.0 and float(hsp.rel_entr(0.0, 0.0)) == 0.0


# --- derivatives without a formula -----------------------------------------------------------
@pytest.mark.parametrize("f,arg", [
    (lambda a: hsp.gammainc(a, 1.5), "'a'"), (lambda a: hsp.gammaincc(a, 1.5), "'a'"),
    (lambda a: hsp.betainc(a, 2.0, 0.3), "'a'"), (lambda b: hsp.betainc(2.0, b, 0.3), "'b'"),
    (lambda x: hsp.zeta(x, 2.0), "'x'"),
    (lambda a: sp.gammaincinv(a, 0.3), "'a'"), (lambda b: sp.betaincinv(2.0, b, 0.3), "'b'"),
    (lambda df: sp.stdtr(df, 0.3), "'df'"), (lambda df: sp.stdtrit(df, 0.3), "'df'"),
])
@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_no_formula_raises_naming_the_argument(f, arg, mode):
    with pytest.raises(NotImplementedError, match=arg):
        if mode == "rev":
            hg.grad(f)(1.7)
        else:
            hg.jvp(f, (1.7,), (1.0,))


def test_static_orders():
    # an array of orders broadcasts against x, as SciPy's (one order per element)
    np.testing.assert_allclose(hsp.polygamma(np.array([[1], [2]]), np.array([1.0, 2.5])),
                               sc.polygamma(np.array([[1], [2]]), np.array([1.0, 2.5])),
                               rtol=1e-13)
    with pytest.raises(ValueError, match="n must be integers >= 0"):
        hsp.polygamma(np.array([1, -2]), 1.0)
    with pytest.raises(ValueError, match="integer"):
        hsp.jn(1.5, 1.0)
    with pytest.raises(ValueError, match="condition a"):
        hsp.multigammaln(0.5, 3)
    # a float tensor order could be differentiated: refused, never a silent zero derivative
    with pytest.raises(NotImplementedError, match="order 'v'"):
        hg.grad(lambda v: hsp.iv(v, 1.5))(0.5)
    assert float(hsp.polygamma(hnp.asarray(1), 2.0)) == pytest.approx(sc.polygamma(1, 2.0))


# --- plain scipy.special on a traced value -----------------------------------------------
@pytest.mark.parametrize("name", ["gammaln", "expit", "xlogy", "log_ndtr", "erf"])
def test_scipy_special_on_a_tensor_names_the_replacement(name):
    fn = getattr(sc, name)
    args = (np.array([0.5, 1.5]),) * (2 if name == "xlogy" else 1)
    with pytest.raises(TypeError, match=f"hessgrad.scipy.special.{name}"):
        hg.grad(lambda x: hnp.sum(fn(*([x] + list(args[1:])))))(args[0])


# --- the other interpreters: vmap, sparsity, the compiler's fused kernels ------------------------
def test_vmap_and_sparse_hessian():
    x = rng.uniform(0.5, 2.0, (5, 3))
    np.testing.assert_array_equal(hg.vmap(hsp.gammaln)(x), hsp.gammaln(x))
    np.testing.assert_array_equal(hg.vmap(lambda r: hsp.betainc(2.0, 3.0, r / 3))(x),
                                  hsp.betainc(2.0, 3.0, x / 3))

    def f(x):
        return (hnp.sum(hsp.log_ndtr(x[1:] - x[:-1])) + hnp.sum(hsp.gammaln(x))
                + hnp.sum(hsp.xlogy(x, x + 1) * hsp.log_expit(x)))
    x = np.linspace(1, 2, 8)
    s = hg.sparse_hessian(f)(x)
    assert s.nnz == 8 + 2 * 7  # tridiagonal: the pattern rules of the new primitives hold
    np.testing.assert_allclose(s.toarray(), hg.hessian(f)(x), rtol=1e-13)


def test_compiled_with_fused_kernels_around_the_new_primitives():
    """Arrays above the fusion threshold: the compiler fuses the ops it translates and calls
    the new primitives' forwards (no lowering needed)."""
    x = np.linspace(0.1, 5, 20000)

    def f(x):
        return hnp.sum(hsp.gammaln(x) * hnp.exp(-x) + hsp.log_ndtr(x - 3) * x
                       + hsp.erfcx(x) * hnp.sin(x))
    g = hg.grad(f)
    np.testing.assert_allclose(hg.function(g)(x), g(x), rtol=1e-13)
    v = np.cos(x)
    np.testing.assert_allclose(hg.function(hg.hvp(f))(x, v), hg.hvp(f)(x, v), rtol=1e-12,
                               atol=1e-300)
