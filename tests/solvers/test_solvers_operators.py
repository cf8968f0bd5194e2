"""aslinearoperator_like: every accepted form, counters, errors."""

import numpy as np
import pytest
import scipy.sparse
import scipy.sparse.linalg as sla
from solvers_zoo import FORMS, as_form

from solvers import aslinearoperator_like
from solvers.operators import Operator

A = np.arange(9.0).reshape(3, 3)


@pytest.mark.parametrize("form", FORMS)
def test_forms_matvec_matmat_counter(form):
    op = aslinearoperator_like(as_form(A, form), 3)
    assert isinstance(op, Operator) and op.shape == (3, 3) and op.dtype == np.float64
    np.testing.assert_allclose(op.matvec(np.ones(3)), A @ np.ones(3))
    np.testing.assert_allclose(op.matmat(np.eye(3)), A)
    assert op.nmatvec == 4
    assert aslinearoperator_like(op) is op


def test_dtypes_and_column_outputs():
    op = aslinearoperator_like(A.astype(np.float32))
    assert op.dtype == np.float32
    op = aslinearoperator_like(np.eye(2, dtype=int))
    assert op.dtype == np.float64
    col = aslinearoperator_like(lambda x: (A @ x)[:, None], 3)    # returns (n, 1)
    assert col.matvec(np.ones(3)).shape == (3,)
    assert aslinearoperator_like(scipy.sparse.eye(4)).matvec(np.ones(4)).shape == (4,)


def test_errors():
    with pytest.raises(ValueError, match="needs|n=..."):
        aslinearoperator_like(lambda x: x)
    with pytest.raises(TypeError, match="cannot use A of type str"):
        aslinearoperator_like("nope")
    with pytest.raises(ValueError, match="must be 2-D"):
        aslinearoperator_like(np.ones(3))
    with pytest.raises(TypeError, match="complex"):
        aslinearoperator_like(np.eye(2, dtype=complex))
    bad = aslinearoperator_like(lambda x: np.ones(5), 3)
    with pytest.raises(ValueError, match=r"returned shape \(5,\)"):
        bad.matvec(np.ones(3))
    with pytest.raises(ValueError, match="matmat: X has shape"):
        aslinearoperator_like(A).matmat(np.ones((2, 2)))


class _Counted(sla.LinearOperator):
    """A LinearOperator defining ``_matvec``/``_matmat``, counting calls of each."""

    def __init__(self, M):
        self.M, self.calls = M, []
        super().__init__(M.dtype, M.shape)

    def _matvec(self, x):
        self.calls.append("_matvec")
        return self.M @ x

    def _matmat(self, X):
        self.calls.append("_matmat")
        return self.M @ X


class _OverridesMatvec(_Counted):
    def matvec(self, x):
        self.calls.append("matvec")
        return super().matvec(x)


def test_linear_operator_products_skip_only_scipys_own_wrappers():
    # SciPy's checking wrapper is skipped (same product), but a subclass's own
    # matvec is always called.
    x = np.array([1.0, -2.0, 0.5])
    for cls, expected in ((_Counted, ["_matvec", "_matmat"]),
                          (_OverridesMatvec, ["matvec", "_matvec", "_matmat"])):
        L = cls(A)
        op = aslinearoperator_like(L)
        np.testing.assert_array_equal(op.matvec(x), L.M @ x)
        np.testing.assert_array_equal(op.matmat(np.eye(3)), A)
        assert L.calls == expected
    # A callable wrapped by SciPy, and a (n, 1) result, still come out as (n,).
    op = aslinearoperator_like(sla.LinearOperator((3, 3), matvec=lambda v: A @ v))
    np.testing.assert_array_equal(op.matvec(x), A @ x)
    op = aslinearoperator_like(sla.LinearOperator((3, 3), matvec=lambda v: (A @ v)[:, None]))
    assert op.matvec(x).shape == (3,)
