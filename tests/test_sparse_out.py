"""Sparse Hessians and Jacobians returned as new matrices or written into ``out``."""

import numpy as np
import pytest
import scipy.sparse as sp

import hessgrad as hg
import hessgrad.numpy as hnp


def chain(x):
    return hnp.sum(x[1:] * x[:-1] ** 2) + hnp.sum(x ** 3)


def residuals(x):
    return hnp.concatenate([x[1:] ** 2 - x[:-1], hnp.sin(x[:1])])


def test_out_is_refreshed_in_place():
    H = hg.sparse_hessian(chain)
    x, z = np.array([1.0, 0.0, 3.0, 0.0, 2.0]), np.arange(1.0, 6.0)
    A = H(x)
    data = A.data
    B = H(z, out=A)
    assert B is A and A.data is data
    np.testing.assert_allclose(A.toarray(), hg.hessian(chain)(z), rtol=1e-13)
    np.testing.assert_allclose(H(z).toarray(), A.toarray(), rtol=0)


def test_returned_matrices_do_not_share_what_a_user_may_change():
    H = hg.sparse_hessian(chain)
    x = np.array([1.0, 0.0, 3.0, 0.0, 2.0])
    A = H(x)
    A.eliminate_zeros()  # rewrites the index arrays in place
    A.data *= 2
    z = np.arange(1.0, 6.0)
    np.testing.assert_allclose(H(z).toarray(), hg.hessian(chain)(z), rtol=1e-13)
    C, D = H(z), H(z)
    assert C.indices is not D.indices and C.data is not D.data


def test_out_of_another_pattern_is_refused():
    H = hg.sparse_hessian(chain)
    x = np.arange(1.0, 6.0)
    with pytest.raises(ValueError, match="sparse_hessian: out must have the pattern"):
        H(x, out=sp.identity(5, format="csr"))
    with pytest.raises(TypeError, match="out must be a scipy.sparse CSR matrix"):
        H(x, out=np.zeros((5, 5)))


def test_dense_plan_keeps_the_detected_pattern():
    f = lambda x: hnp.sum(x) ** 3 + hnp.sum(x[:-1] * x[1:])  # noqa: E731 - a dense Hessian
    H = hg.sparse_hessian(f)
    x = np.array([1.0, -1.0, 0.0])  # the Hessian 6 * sum(x) = 0, apart from the products
    A = H(x)
    assert H.info(x)["dense"] and A.nnz == 9
    assert H(2 * x + 1, out=A) is A
    np.testing.assert_allclose(A.toarray(), hg.hessian(f)(2 * x + 1), rtol=1e-13)


def test_jacobian_out():
    J = hg.sparse_jacobian(residuals)
    x, z = np.arange(1.0, 5.0), np.linspace(-1.0, 1.0, 4)
    A = J(x)
    assert J(z, out=A) is A
    np.testing.assert_allclose(A.toarray(), hg.jacobian(residuals)(z), rtol=1e-13)
