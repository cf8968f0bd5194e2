"""Re-rolling (hessgrad/tracing/reroll.py): loops of scalar operations packed into vector
operations before differentiation give the Hessians of the loops as written."""

import os
import sys

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.kernels import tuning
from hessgrad.tracing.reroll import rerolled

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "harness"))
from loop_programs import random_loop  # noqa: E402

T = np.linspace(0.0, 10.0, 40)
Y = 2 * np.exp(-0.5 * ((T - 4) / 1.3) ** 2) + np.exp(-0.5 * ((T - 6) / 0.7) ** 2)


def peaks(p):
    total = 0.0
    for i in range(len(T)):
        r = Y[i]
        for k in range(2):
            R = (T[i] - p[3 * k + 1]) / p[3 * k + 2]
            r = r - p[3 * k] * hnp.exp(-0.5 * R * R)
        total = total + r * r
    return total


def rosenbrock_loop(x):
    s = 0.0
    for i in range(len(x) - 1):
        s = s + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return s


def feedback(x):  # each term reads the running sum: nothing packs across iterations
    s = x[0] * 0.0
    for i in range(len(x)):
        s = s + hnp.sin(s) * x[i] + x[i] ** 2
    return s


def mixed(x):  # array ops beside the loop, a shared constant and per-lane constants
    s = hnp.sum(hnp.tanh(x) ** 2)
    for i in range(len(x)):
        s = s + (i + 1) * hnp.cos(0.5 * x[i]) * x[(i + 3) % len(x)]
    return s - 0.25 * s * s


def matrix_loop(x):  # elements read by two indices
    a = hnp.reshape(x, (4, 5))
    s = 0.0
    for i in range(4):
        for j in range(5):
            s = s + hnp.exp(a[i, j] * 0.1) * a[(i + 1) % 4, j]
    return s


def subtracting(x):  # a chain of subtractions stays as it is
    s = 1.0
    for i in range(len(x)):
        s = s - x[i] ** 3
    return s * s


CASES = [(peaks, np.array([2.1, 4.2, 1.2, 0.9, 6.1, 0.8])),
         (rosenbrock_loop, np.linspace(-1.2, 1.0, 30)),
         (feedback, np.linspace(0.1, 0.9, 12)),
         (mixed, np.linspace(-1.0, 2.0, 25)),
         (matrix_loop, np.linspace(-1.0, 1.0, 20)),
         (subtracting, np.linspace(0.5, 1.5, 16))]


@pytest.fixture
def small(monkeypatch):
    """Re-roll traces of any size (the default only takes long ones)."""
    monkeypatch.setattr(tuning, "REROLL_MIN_NODES", 20)


def _without_reroll(f, x, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(tuning, "REROLL_MIN_NODES", 10 ** 9)
        return hg.hessian(f)(x)


@pytest.mark.parametrize("f, x", CASES, ids=[f.__name__ for f, _ in CASES])
def test_hessian_of_the_packed_program_is_the_loops(f, x, small, monkeypatch):
    want = _without_reroll(f, x, monkeypatch)
    got = hg.hessian(f)(x)
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-11 * np.abs(want).max())
    z = x * 1.1 + 0.05  # the cached program at another point
    np.testing.assert_allclose(hg.hessian(f)(z), _without_reroll(f, z, monkeypatch),
                               rtol=1e-11, atol=1e-11 * np.abs(want).max())


@pytest.mark.parametrize("f, x, most", [(peaks, CASES[0][1], 12),
                                        (rosenbrock_loop, CASES[1][1], 14),
                                        (matrix_loop, CASES[4][1], 8)])
def test_loops_pack_into_a_few_vector_operations(f, x, most, small):
    g = rerolled(f, [x])
    assert g is not None
    assert len(g.__self__.steps) <= most
    np.testing.assert_allclose(float(g(x)._value), float(f(x)), rtol=1e-12)


def test_what_does_not_shrink_is_left_as_it_is(small):
    assert rerolled(feedback, [CASES[2][1]]) is None


def test_not_rerolled_value_branches_other_dtypes_short_traces():
    x = np.linspace(0.1, 0.9, 12)

    def branching(x):
        s = 0.0
        for i in range(len(x)):
            s = s + (x[i] if x[i] > 0.5 else x[i] ** 2)
        return s
    assert rerolled(branching, [x]) is None  # branches on values: no trace
    assert rerolled(rosenbrock_loop, [x.astype(np.float32)]) is None
    assert rerolled(rosenbrock_loop, [x]) is None  # below REROLL_MIN_NODES
    h = hg.hessian(branching)(x)
    np.testing.assert_allclose(np.diag(h), np.where(x > 0.5, 0.0, 2.0))


def test_default_sizes_reroll_the_long_loop():
    t = np.linspace(0, 10, 400)

    def f(p):
        s = 0.0
        for i in range(len(t)):
            s = s + (p[0] * hnp.exp(-p[1] * t[i]) - 1.0) ** 2
        return s
    p = np.array([1.5, 0.3])
    assert rerolled(f, [p]) is not None
    r = p[0] * np.exp(-p[1] * t) - 1.0
    e = np.exp(-p[1] * t)
    J = np.stack([e, -p[0] * t * e])
    H = 2 * J @ J.T + 2 * np.array([[0.0, np.sum(-r * t * e)],
                                    [np.sum(-r * t * e), np.sum(r * p[0] * t * t * e)]])
    np.testing.assert_allclose(hg.hessian(f)(p), H, rtol=1e-12)


@pytest.mark.parametrize("f, x", CASES, ids=[f.__name__ for f, _ in CASES])
def test_every_mode_agrees_with_the_loops(f, x, small, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(tuning, "REROLL_MIN_NODES", 10 ** 9)
        want_g, want_h = hg.grad(f)(x), hg.hessian(f)(x)
    scale = np.abs(want_h).max()
    v = np.linspace(-1.0, 1.0, x.size)
    np.testing.assert_allclose(hg.function(hg.grad(f))(x), want_g, rtol=1e-11,
                               atol=1e-11 * np.abs(want_g).max())
    np.testing.assert_allclose(hg.function(hg.hessian(f))(x), want_h, rtol=1e-11,
                               atol=1e-11 * scale)
    np.testing.assert_allclose(hg.sparse_hessian(f)(x).toarray(), want_h, rtol=1e-11,
                               atol=1e-11 * scale)
    np.testing.assert_allclose(hg.make_hvp(f)(x)(v), want_h @ v, rtol=1e-10,
                               atol=1e-11 * scale * x.size)
    np.testing.assert_allclose(hg.jacfwd(hg.grad(f))(x), want_h, rtol=1e-11,
                               atol=1e-11 * scale)


@pytest.mark.parametrize("seed", range(24))
def test_random_loops(seed, small, monkeypatch):
    f, x = random_loop(seed)
    with monkeypatch.context() as m:
        m.setattr(tuning, "REROLL_MIN_NODES", 10 ** 9)
        want_g, want_h = hg.grad(f)(x), hg.hessian(f)(x)
    tol = dict(rtol=1e-10, atol=1e-10 * max(np.abs(want_h).max(), 1.0))
    np.testing.assert_allclose(hg.hessian(f)(x), want_h, **tol)
    np.testing.assert_allclose(hg.function(hg.hessian(f))(x), want_h, **tol)
    np.testing.assert_allclose(hg.function(hg.grad(f))(x), want_g, **tol)


def test_a_packing_that_changes_the_value_is_not_used(small, monkeypatch):
    """The safety net: lanes read out of place (a packing bug) change the value at the
    checked points, and the function is then differentiated as written."""
    from hessgrad.tracing import reroll
    f, x = CASES[0]
    want = _without_reroll(f, x, monkeypatch)
    monkeypatch.setattr(reroll, "_index_of", lambda positions: np.array(positions[::-1]))
    assert rerolled(f, [x]) is None
    np.testing.assert_allclose(hg.hessian(f)(x), want, rtol=1e-12)
