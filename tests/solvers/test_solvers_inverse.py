"""inverse_hvp by CG / MINRES / LiSSA against an exact solve."""

import numpy as np
import pytest
from solvers_zoo import FORMS, as_form, with_spectrum

from solvers import inverse_hvp, lissa

A = with_spectrum(np.linspace(1.0, 4.0, 50), seed=31)
B = np.random.default_rng(0).standard_normal(50)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("method", ["cg", "minres", "lissa"])
@pytest.mark.parametrize("damping", [0.0, 0.5])
def test_inverse_hvp_matches_solve(form, method, damping):
    exact = np.linalg.solve(A + damping * np.eye(50), B)
    op = as_form(A, form)
    if method == "lissa":
        if form == "callable":
            pytest.skip("lissa needs an operator with a shape")
        x = inverse_hvp(op, B, method="lissa", damping=damping, scale=5.0, depth=300)
        tol = 1e-6
    else:
        x = inverse_hvp(op, B, method=method, damping=damping)
        tol = 1e-6
    np.testing.assert_allclose(x, exact, atol=tol * np.abs(exact).max())


def test_lissa_stochastic_sequence_of_operators():
    # Per-sample Hessians whose mean is A: the stochastic recursion of LiSSA.
    rng = np.random.default_rng(1)
    E = [with_spectrum(rng.uniform(-0.3, 0.3, 50), seed=s) for s in range(8)]
    mean_E = sum(E) / len(E)
    ops = [A - mean_E + e for e in E]
    exact = np.linalg.solve(A, B)
    res = lissa(ops, B, scale=5.0, depth=200, repeats=20, rng=2, full_output=True)
    err = np.linalg.norm(res.x - exact) / np.linalg.norm(exact)
    assert err < 0.05
    assert res.nmatvec == 200 * 20
    # Seeded: reproducible.
    np.testing.assert_array_equal(res.x, lissa(ops, B, scale=5.0, depth=200, repeats=20,
                                               rng=2))


def test_lissa_default_scale_and_divergence():
    x = lissa(A, B, depth=400, rng=0)
    np.testing.assert_allclose(x, np.linalg.solve(A, B), atol=1e-6)
    with pytest.raises(FloatingPointError, match="lissa: the recursion diverged"):
        lissa(A, B, scale=1.0, depth=200)


def test_inverse_hvp_errors():
    indef = with_spectrum(np.linspace(-1.0, 2.0, 20), seed=2)
    with pytest.raises(ValueError, match="negative curvature"):
        inverse_hvp(indef, np.ones(20))
    x = inverse_hvp(indef + 0.0, np.ones(20), method="minres")
    assert np.linalg.norm(indef @ x - 1.0) < 1e-5 * np.sqrt(20) * 10
    with pytest.raises(ValueError, match="inverse_hvp: method"):
        inverse_hvp(A, B, method="svd")
    with pytest.raises(ValueError, match="inverse_hvp: b has shape"):
        inverse_hvp(A, np.ones(3))
    with pytest.raises(ValueError, match="lissa: pass scale"):
        lissa([A, A], B)
    with pytest.raises(TypeError, match="inverse_hvp: damping must be a real number"):
        inverse_hvp(A, B, damping=None)
    # NaN in b was reported as divergence ("increase scale or damping").
    with pytest.raises(ValueError, match="lissa: b contains NaN or inf"):
        lissa(A, np.full(50, np.nan), scale=5.0)
    with pytest.raises(ValueError, match=r"lissa: A is a callable matvec.*"
                                         r"aslinearoperator_like\(f, n\)"):
        lissa(lambda x: x, B, scale=5.0)
