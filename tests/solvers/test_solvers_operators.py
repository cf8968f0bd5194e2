"""aslinearoperator_like: every accepted form, counters, errors."""

import numpy as np
import pytest
import scipy.sparse
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
