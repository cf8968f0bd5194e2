"""The objective corpus, written once in plain numpy style, run with ``np`` bound to
``hessgrad.numpy``: values equal numpy's, gradients and Hessians agree with finite differences
(and SciPy's analytic Rosenbrock oracles), eagerly and inside ``hessgrad.function``."""


import numpy
import pytest
from scipy.optimize import rosen_der, rosen_hess

import hessgrad as hg
import hessgrad.numpy as hnp



import _hessgrad_tests_objectives_corpus as corpus  # noqa: E402 - registered by conftest.py
import _hessgrad_tests_objectives_fd as fd  # noqa: E402

HG_OBJECTIVES = {o.name: o for o in corpus.load_corpus(hnp)}
NP_OBJECTIVES = {o.name: o for o in corpus.OBJECTIVES}
# The smallest supported dimension of each smooth objective (and a larger one where offered).
CASES = [(o.name, n) for o in corpus.OBJECTIVES if o.smooth
         for n in sorted({min(o.dims), max([d for d in o.dims if d <= 10] or [min(o.dims)])})]
IDS = [f"{name}-{n}" for name, n in CASES]


def _scale(a):
    return max(1.0, float(numpy.max(numpy.abs(a))))


@pytest.mark.parametrize("name,n", CASES, ids=IDS)
def test_value_gradient_hessian_eager(name, n):
    o_np, o_hg = NP_OBJECTIVES[name], HG_OBJECTIVES[name]
    x = numpy.asarray(o_np.x0(n), dtype=numpy.float64)
    value, grad = hg.value_and_grad(o_hg.fn)(x)
    numpy.testing.assert_allclose(value, o_np.fn(x), rtol=1e-12, atol=1e-300)
    g_fd = fd.fd_gradient(o_np.fn, x)
    numpy.testing.assert_allclose(grad, g_fd, rtol=1e-5, atol=1e-6 * _scale(g_fd))
    H = hg.hessian(o_hg.fn)(x)
    H_fd = fd.fd_hessian_of_grad(hg.grad(o_hg.fn), x)
    numpy.testing.assert_allclose(H, H_fd, rtol=1e-5, atol=1e-6 * _scale(H_fd))
    numpy.testing.assert_allclose(H, H.T, rtol=1e-9, atol=1e-9 * _scale(H))


@pytest.mark.parametrize("name,n", CASES[::3], ids=IDS[::3])
def test_gradient_and_hvp_in_graph_mode(name, n):
    o_hg = HG_OBJECTIVES[name]
    x = numpy.asarray(NP_OBJECTIVES[name].x0(n), dtype=numpy.float64)
    eager = hg.grad(o_hg.fn)(x)
    traced = hg.function(hg.grad(o_hg.fn))(x)
    numpy.testing.assert_allclose(traced, eager, rtol=1e-12, atol=1e-12 * _scale(eager))
    v = numpy.random.default_rng(n).standard_normal(n)
    hv_eager = hg.hvp(o_hg.fn)(x, v)
    hv_graph = hg.make_hvp(o_hg.fn)(x)(v)
    numpy.testing.assert_allclose(hv_graph, hv_eager, rtol=1e-10, atol=1e-10 * _scale(hv_eager))


@pytest.mark.parametrize("n", [2, 5, 100])
def test_rosenbrock_against_scipy_oracles(n):
    f = HG_OBJECTIVES["rosenbrock"].fn
    x = numpy.random.default_rng(n).uniform(-2, 2, n)
    numpy.testing.assert_allclose(hg.grad(f)(x), rosen_der(x), rtol=1e-12, atol=1e-12)
    numpy.testing.assert_allclose(hg.hessian(f)(x), rosen_hess(x), rtol=1e-10, atol=1e-10)
