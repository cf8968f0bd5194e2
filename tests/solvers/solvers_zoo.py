"""Test operators for tests/solvers: matrices with known spectra in every form.

Imported by the test modules as ``solvers_zoo`` (rootdir-relative discovery puts
this folder on sys.path; there is deliberately no ``__init__.py``).
"""

import numpy as np
import scipy.sparse
import scipy.sparse.linalg as sla


def with_spectrum(eigenvalues, seed=0, dtype=np.float64):
    """Dense symmetric ``Q diag(l) Q^T`` with a random orthogonal ``Q``."""
    lam = np.asarray(eigenvalues, dtype=np.float64)
    Q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((lam.size,) * 2))
    A = (Q * lam) @ Q.T
    return ((A + A.T) / 2).astype(dtype)


def laplacian(n):
    """Sparse 1-D Dirichlet Laplacian (tridiagonal -1, 2, -1), SPD."""
    e = np.ones(n)
    return scipy.sparse.diags([-e[:-1], 2 * e, -e[:-1]], [-1, 0, 1], format="csr")


N = 60
MATRICES = {
    "spd_well": with_spectrum(np.linspace(1.0, 10.0, N), seed=1),
    "spd_ill": with_spectrum(np.geomspace(1.0, 1e6, N), seed=2),
    "indefinite": with_spectrum(np.r_[np.linspace(-3, -0.5, 20), np.linspace(0.5, 5, 40)],
                                seed=3),
    "diagonal": np.diag(np.arange(1.0, N + 1.0)),
    "float32": with_spectrum(np.linspace(1.0, 10.0, N), seed=4, dtype=np.float32),
    "laplacian": laplacian(N),
}
SPD = {"spd_well", "spd_ill", "diagonal", "float32", "laplacian"}


class CountingOperator(sla.LinearOperator):
    """A scipy LinearOperator counting its matvecs (to count SciPy's)."""

    def __init__(self, A):
        self.A = A
        self.count = 0
        super().__init__(A.dtype, A.shape)

    def _matvec(self, x):
        self.count += 1
        return self.A @ x.ravel()

    def _matmat(self, X):
        self.count += X.shape[1]
        return self.A @ X


class DuckOperator:
    """An object with only .matvec and .shape (like hessgrad's HessianOperator)."""

    def __init__(self, A):
        self._A = A
        self.shape = A.shape

    def matvec(self, x):
        return self._A @ x


def dense(A):
    return A.toarray() if scipy.sparse.issparse(A) else np.asarray(A)


def as_form(A, form):
    """``A`` as an ndarray / sparse matrix / LinearOperator / duck object / callable.

    For "callable" returns a plain function; callers must pass the size.
    """
    if form == "ndarray":
        return dense(A)
    if form == "sparse":
        return scipy.sparse.csr_matrix(A)
    if form == "linearoperator":
        return sla.aslinearoperator(A)
    if form == "duck":
        return DuckOperator(A)
    if form == "callable":
        return lambda x: A @ x
    raise ValueError(form)


FORMS = ["ndarray", "sparse", "linearoperator", "duck", "callable"]


def same_arithmetic(A, form):
    """The matrix whose ``@`` rounds exactly like ``as_form(A, form)``'s matvec."""
    if form == "sparse" or (scipy.sparse.issparse(A) and form != "ndarray"):
        return scipy.sparse.csr_matrix(A)
    return dense(A)
