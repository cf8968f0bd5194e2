"""Built-in problems: derivatives against finite differences, references and exact facts."""

import numpy as np
import pytest

import hessgrad as hg
from hessgrad import problems

SMALL = {"rosenbrock": {"n": 8}, "logistic": {"n": 6, "m": 40}, "mlp": {"hidden": 3, "m": 10},
         "quadratic": {"n": 7}, "saddle": {"n": 7, "negative": 2}}


def small(name, seed=0):
    opts = dict(SMALL[name])
    return problems.get(name, opts.pop("n", None), seed=seed, **opts)


def point(p):
    return p.x0 + 0.3 * np.random.default_rng(5).standard_normal(p.n)


def fd_gradient(f, x, h=1e-6):
    return np.array([(float(f(x + h * e)) - float(f(x - h * e))) / (2 * h)
                     for e in np.eye(x.size)])


def test_names():
    assert problems.names() == ["logistic", "mlp", "quadratic", "rosenbrock", "saddle"]
    assert set(problems.describe()) == set(problems.names())


@pytest.mark.parametrize("name", sorted(SMALL))
def test_gradient_and_hessian_against_finite_differences(name):
    p = small(name)
    x = point(p)
    assert p.x0.shape == (p.n,) and p.x0.dtype == np.float64
    g = hg.grad(p.fun)(x)
    np.testing.assert_allclose(g, fd_gradient(p.fun, x), rtol=1e-6, atol=1e-6)
    H = hg.hessian(p.fun)(x)
    grad = hg.grad(p.fun)
    H_fd = np.column_stack([(grad(x + 1e-6 * e) - grad(x - 1e-6 * e)) / 2e-6
                            for e in np.eye(p.n)])
    np.testing.assert_allclose(H, H_fd, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(H, H.T, atol=1e-12)


@pytest.mark.parametrize("name", ["rosenbrock", "logistic", "quadratic", "saddle"])
def test_against_hand_written_references(name):
    p = small(name)
    x = point(p)
    v = np.random.default_rng(9).standard_normal(p.n)
    ref = p.reference
    assert float(p.fun(x)) == pytest.approx(ref["value"](x), rel=1e-13)
    np.testing.assert_allclose(hg.grad(p.fun)(x), ref["grad"](x), rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(hg.hvp(p.fun)(x, v), ref["hvp"](x, v), rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(hg.hessian(p.fun)(x), ref["hessian"](x), rtol=1e-11,
                               atol=1e-12)


def test_quadratic_exact_facts():
    lambdas = [-1.0, 0.5, 2.0, 3.0, 10.0]
    p = problems.get("quadratic", n=5, seed=3, eigenvalues=lambdas)
    H = hg.hessian(p.fun)(point(p))
    np.testing.assert_allclose(H, p.data["A"], atol=1e-13)
    np.testing.assert_allclose(np.linalg.eigvalsh(H), lambdas, atol=1e-12)
    assert p.exact["trace"] == pytest.approx(14.5)
    assert p.exact["condition_number"] == pytest.approx(20.0)
    assert p.exact["negative_count"] == 1
    assert "minimizer" not in p.exact       # indefinite: no minimiser
    q = problems.get("quadratic", n=30)
    assert np.linalg.norm(hg.grad(q.fun)(q.exact["minimizer"])) < 1e-9
    assert float(q.fun(q.exact["minimizer"])) == pytest.approx(q.exact["minimum"], rel=1e-12)
    assert q.exact["condition_number"] == pytest.approx(1000.0)


def test_saddle_exact_spectrum_at_x0():
    p = problems.get("saddle", n=12, negative=4)
    assert np.linalg.norm(hg.grad(p.fun)(p.x0)) == 0.0
    w = np.linalg.eigvalsh(hg.hessian(p.fun)(p.x0))
    np.testing.assert_allclose(w, np.sort(p.exact["eigenvalues"]), atol=1e-12)
    assert p.exact["negative_count"] == 4 == int(np.sum(w < 0))


def test_rosenbrock_minimum():
    p = problems.get("rosenbrock", n=10)
    assert float(p.fun(p.exact["minimizer"])) == 0.0
    assert np.all(hg.grad(p.fun)(p.exact["minimizer"]) == 0.0)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_deterministic_from_seed(name):
    a, b, c = small(name, 0), small(name, 0), small(name, 1)
    x = point(a)
    assert np.array_equal(a.x0, b.x0) and float(a.fun(x)) == float(b.fun(x))
    assert not (np.array_equal(a.x0, c.x0) and float(a.fun(x)) == float(c.fun(x)))


def test_default_sizes():
    assert problems.get("rosenbrock").n == 100
    assert problems.get("logistic").n == 50
    assert problems.get("logistic").data["X"].shape == (1000, 50)
    assert 200 <= problems.get("mlp").n <= 600


def test_fun_for_plain_numpy_matches():
    p = small("mlp")
    x = point(p)
    assert p.fun_for(np)(x) == pytest.approx(float(p.fun(x)), rel=1e-14)


def test_bad_input():
    with pytest.raises(KeyError, match="known problems: logistic, mlp, quadratic, rosenbrock"):
        problems.get("rosenbrok")
    with pytest.raises(ValueError, match="n must be >= 2"):
        problems.get("rosenbrock", n=1)
    with pytest.raises(ValueError, match="n must be an int"):
        problems.get("rosenbrock", n=2.5)
    with pytest.raises(ValueError, match="seed must be an int"):
        problems.get("rosenbrock", seed=-1)
    with pytest.raises(ValueError, match="hidden="):
        problems.get("mlp", n=10)
    with pytest.raises(ValueError, match="eigenvalues has 2 entries, expected n=3"):
        problems.get("quadratic", n=3, eigenvalues=[1.0, 2.0])
    with pytest.raises(ValueError, match="negative"):
        problems.get("saddle", n=3, negative=3)
    with pytest.raises(TypeError, match="unknown option.*bogus.*accepts no options"):
        problems.get("rosenbrock", bogus=1)
    with pytest.raises(TypeError, match="accepts m, lam"):
        problems.get("logistic", hidden=1)
