"""The in-place corpus (objectives that build arrays in place: loops filling arrays, padding,
stencils, dynamic programming, Gauss-Seidel and Jacobi sweeps, element-by-element solvers and
factorizations, time stepping, ufunc.at assembly, out=, in-place sorting), written once in
numpy style and run with ``np`` bound to ``hessgrad.numpy``: values equal numpy's, gradients
agree with finite differences of the numpy function, Hessians with finite differences of the
gradient and of the numpy function, check_grads passes at second order in both modes, and
``hessgrad.function`` gives the eager results."""

import ast
import inspect

import numpy
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.testing import check_grads

import _hessgrad_tests_objectives_fd as fd  # noqa: E402 - registered by conftest.py
import _hessgrad_tests_objectives_inplace_corpus as corpus  # noqa: E402

NP = {o.name: o for o in corpus.OBJECTIVES}
HG = {o.name: o for o in corpus.load_corpus(hnp)}
NAMES = list(NP)


def _scale(a):
    return max(1.0, float(numpy.max(numpy.abs(a))))


def test_the_corpus_is_large_and_writes_in_place():
    assert len(NAMES) >= 20
    writes = (ast.Assign, ast.AugAssign)
    for o in corpus.OBJECTIVES:
        tree = ast.parse(inspect.getsource(o.fn))
        in_place = any(
            isinstance(node, writes) and any(isinstance(t, ast.Subscript) for t in (
                node.targets if isinstance(node, ast.Assign) else [node.target]))
            or isinstance(node, ast.AugAssign)
            or isinstance(node, ast.keyword) and node.arg == "out"
            or isinstance(node, ast.Attribute) and node.attr in ("at", "sort", "fill_diagonal")
            for node in ast.walk(tree))
        assert in_place, f"{o.name} writes no array in place"


@pytest.mark.parametrize("name", NAMES)
def test_value_gradient_hessian_eager(name):
    o_np, o_hg = NP[name], HG[name]
    x = o_np.x0()
    x_copy = x.copy()
    value, grad = hg.value_and_grad(o_hg.fn)(x)
    numpy.testing.assert_array_equal(x, x_copy)  # the caller's array is never written
    want = o_np.fn(x.copy())
    numpy.testing.assert_allclose(value, want, rtol=1e-13, atol=1e-14)
    g_fd = fd.fd_gradient(o_np.fn, x, order=4)
    numpy.testing.assert_allclose(grad, g_fd, rtol=1e-7, atol=1e-8 * _scale(g_fd))
    H = hg.hessian(o_hg.fn)(x)
    H_fd = fd.fd_hessian_of_grad(hg.grad(o_hg.fn), x)
    numpy.testing.assert_allclose(H, H_fd, rtol=1e-6, atol=1e-7 * _scale(H_fd))
    H_np = fd.fd_hessian(o_np.fn, x)  # finite differences of the numpy function alone
    numpy.testing.assert_allclose(H, H_np, rtol=1e-4, atol=1e-5 * _scale(H_np))
    numpy.testing.assert_allclose(H, H.T, rtol=1e-10, atol=1e-12 * _scale(H))


@pytest.mark.parametrize("name", NAMES)
def test_check_grads_second_order(name):
    check_grads(HG[name].fn, (NP[name].x0(),), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", NAMES)
def test_traced_by_hessgrad_function(name):
    o_np, o_hg = NP[name], HG[name]
    x = o_np.x0()
    f = hg.function(o_hg.fn)
    numpy.testing.assert_allclose(f(x), o_np.fn(x.copy()), rtol=1e-13, atol=1e-14)
    g = hg.grad(o_hg.fn)(x)
    numpy.testing.assert_allclose(hg.function(hg.grad(o_hg.fn))(x), g, rtol=1e-12,
                                  atol=1e-13 * _scale(g))
    H = hg.hessian(o_hg.fn)(x)
    numpy.testing.assert_allclose(hg.function(hg.hessian(o_hg.fn))(x), H, rtol=1e-11,
                                  atol=1e-12 * _scale(H))
    v = numpy.random.default_rng(0).standard_normal(x.size)
    numpy.testing.assert_allclose(hg.make_hvp(o_hg.fn)(x)(v), H @ v, rtol=1e-10,
                                  atol=1e-11 * _scale(H))
    x2 = x * 0.9 + 0.05  # the trace is reused at another point
    numpy.testing.assert_allclose(f(x2), o_np.fn(x2.copy()), rtol=1e-13, atol=1e-14)
    if o_np.branches:  # points whose branches differ get their own traces (guards)
        for z in (x[::-1].copy(), -x):
            numpy.testing.assert_allclose(f(z), o_np.fn(z.copy()), rtol=1e-13, atol=1e-14)
            numpy.testing.assert_allclose(hg.function(hg.grad(o_hg.fn))(z),
                                          hg.grad(o_hg.fn)(z), rtol=1e-12, atol=1e-13)


SPARSE = ["padded", "laplacian_dirichlet", "stencil_2d_torus", "upwind_advection",
          "thomas_tridiagonal", "jacobi_poisson", "recurrence_fill"]


@pytest.mark.parametrize("name", SPARSE)
def test_sparse_hessians(name):
    o_hg = HG[name]
    x = NP[name].x0()
    H = hg.hessian(o_hg.fn)(x)
    S = hg.sparse_hessian(o_hg.fn)(x)
    numpy.testing.assert_allclose(S.toarray(), H, rtol=1e-10, atol=1e-12 * _scale(H))
    pattern = hg.hessian_sparsity(o_hg.fn, x).toarray() != 0
    assert not numpy.any((numpy.abs(H) > 1e-12 * _scale(H)) & ~pattern), "a nonzero missed"
