"""Normalise anything that can multiply a vector into one tiny operator type.

Every algorithm in :mod:`solvers` sees only the :class:`Operator` returned by
:func:`aslinearoperator_like`: ``matvec``, ``matmat``, ``shape``, ``dtype`` and a
matvec counter ``nmatvec``.  This is how SciPy's iterative solvers work
(``make_system``), and it is what lets a Hessian operator, a dense array, a sparse
matrix or a plain Python function be used interchangeably.
"""

import numbers

import numpy as np
import scipy.sparse
import scipy.sparse.linalg as sla

__all__ = ["Operator", "aslinearoperator_like"]


class Operator:
    """A minimal linear operator with a matvec counter.

    Attributes:
        shape: ``(m, n)`` tuple of ints.
        dtype: numpy dtype of the operator's output (float64 when unknown).
        nmatvec: number of matrix-vector products computed so far (a ``matmat`` with
            ``k`` columns counts ``k``).
    """

    __slots__ = ("shape", "dtype", "nmatvec", "_mv", "_mm", "_source")

    def __init__(self, matvec, shape, dtype, matmat=None, source=None):
        self.shape = (int(shape[0]), int(shape[1]))
        self.dtype = np.dtype(dtype)
        self.nmatvec = 0
        self._mv = matvec
        self._mm = matmat
        self._source = source

    def matvec(self, x):
        """Return ``A @ x`` for a 1-D ``x`` of length ``shape[1]`` as a 1-D array."""
        self.nmatvec += 1
        y = self._mv(x)
        if type(y) is not np.ndarray or y.shape != (self.shape[0],):
            y = self._fix_vector(y)
        return y

    def matmat(self, X):
        """Return ``A @ X`` for a 2-D ``X``; falls back to a loop over columns."""
        X = np.asarray(X)
        if X.ndim != 2 or X.shape[0] != self.shape[1]:
            raise ValueError(
                f"matmat: X has shape {X.shape} but the operator has shape {self.shape}")
        k = X.shape[1]
        if self._mm is None:
            out = np.empty((self.shape[0], k), dtype=np.result_type(self.dtype, X.dtype))
            for j in range(k):
                out[:, j] = self.matvec(np.ascontiguousarray(X[:, j]))
            return out
        self.nmatvec += k
        Y = np.asarray(self._mm(X))
        if Y.shape != (self.shape[0], k):
            try:
                Y = Y.reshape(self.shape[0], k)
            except ValueError:
                raise ValueError(
                    f"matmat: the operator returned shape {Y.shape} for an input of "
                    f"shape {X.shape}; expected {(self.shape[0], k)}") from None
        return Y

    def __matmul__(self, x):
        x = np.asarray(x)
        return self.matvec(x) if x.ndim == 1 else self.matmat(x)

    def _fix_vector(self, y):
        y = np.asarray(y)
        if y.size != self.shape[0]:
            raise ValueError(
                f"matvec: the operator returned shape {y.shape}; expected "
                f"({self.shape[0]},) for an operator of shape {self.shape}")
        return y.reshape(self.shape[0])

    def __repr__(self):
        return (f"<Operator shape={self.shape} dtype={self.dtype} "
                f"nmatvec={self.nmatvec}>")


def _check_shape(shape, caller, name):
    try:
        shape = tuple(int(s) for s in shape)
    except TypeError:
        raise TypeError(f"{caller}: {name}.shape must be a tuple of two ints, "
                        f"got {shape!r}") from None
    if len(shape) != 2:
        raise ValueError(f"{caller}: {name} must be 2-D, got shape {shape}")
    return shape


def _real_dtype(dtype, caller, name):
    dtype = np.dtype(np.float64 if dtype is None else dtype)
    if np.issubdtype(dtype, np.complexfloating):
        raise TypeError(f"{caller}: {name} has complex dtype {dtype}; only real "
                        f"operators are supported")
    if not np.issubdtype(dtype, np.floating):
        # Integer / boolean matrices act in floating point, as in SciPy.
        dtype = np.dtype(np.float64)
    return dtype


def _missing_size_message(caller, name, caller_takes_size):
    """The error for a callable ``name`` given to ``caller`` without its size."""
    if caller_takes_size:
        how = "pass n=..., or a vector such as x0 to infer it"
    else:
        # caller has neither n nor a vector: the size must come with the operator.
        how = ("wrap it first, e.g. hessgrad.solvers.aslinearoperator_like(f, n), or pass a "
               "scipy.sparse.linalg.LinearOperator with a shape")
    return f"{caller}: {name} is a callable matvec, so its size n is needed ({how})"


def aslinearoperator_like(A, n=None, *, dtype=None, caller="aslinearoperator_like",
                          name="A", caller_takes_size=True):
    """Wrap ``A`` as an :class:`Operator` with ``matvec``/``matmat`` and a counter.

    Args:
        A: one of

            * an :class:`Operator` (returned unchanged, so counters accumulate);
            * a 2-D numpy array or a ``scipy.sparse`` matrix/array;
            * a ``scipy.sparse.linalg.LinearOperator``, or any object with
              ``.matvec`` and ``.shape`` (``.matmat`` and ``.dtype`` are used when
              present);
            * a callable ``f(x) -> A @ x``; then the size ``n`` is required.
        n: size of a square operator given as a callable (solvers pass ``len(b)``).
        dtype: dtype to report for callables or objects without ``.dtype``
            (default float64).
        caller: name of the calling function, used in error messages.
        name: name of the argument, used in error messages.
        caller_takes_size: False if ``caller`` has no argument (``n`` or a vector)
            giving the size of a callable: the error then says to wrap the callable.

    Returns:
        An :class:`Operator`.

    Raises:
        TypeError: if ``A`` is none of the above, or complex.
        ValueError: if ``A`` is not 2-D, or ``n`` is missing for a callable.

    >>> import numpy as np
    >>> op = aslinearoperator_like(np.diag([1.0, 2.0, 3.0]))
    >>> op.matvec(np.ones(3)), op.shape, op.nmatvec
    (array([1., 2., 3.]), (3, 3), 1)
    >>> op = aslinearoperator_like(lambda x: 2 * x, n=2)
    >>> op.matmat(np.eye(2)).tolist(), op.nmatvec
    ([[2.0, 0.0], [0.0, 2.0]], 2)
    """
    if isinstance(A, Operator):
        return A
    if isinstance(A, np.ndarray) or scipy.sparse.issparse(A):
        if isinstance(A, np.matrix):
            A = np.asarray(A)
        shape = _check_shape(A.shape, caller, name)
        dt = _real_dtype(A.dtype, caller, name)
        if isinstance(A, np.ndarray) and not np.issubdtype(A.dtype, np.floating):
            A = A.astype(dt)
        return Operator(A.dot, shape, dt, matmat=A.dot, source=A)
    if hasattr(A, "matvec") and hasattr(A, "shape"):
        shape = _check_shape(A.shape, caller, name)
        dt = getattr(A, "dtype", None)
        dt = _real_dtype(dtype if dt is None else dt, caller, name)
        mv, mm = _linear_operator_products(A)
        return Operator(mv, shape, dt, matmat=mm if callable(mm) else None, source=A)
    if callable(A):
        if n is None:
            raise ValueError(_missing_size_message(caller, name, caller_takes_size))
        if not isinstance(n, numbers.Integral) or n < 0:
            raise ValueError(f"{caller}: n must be a non-negative int, got {n!r}")
        return Operator(A, (n, n), _real_dtype(dtype, caller, name), source=A)
    raise TypeError(
        f"{caller}: cannot use {name} of type {type(A).__name__} as a linear operator; "
        f"pass an ndarray, a scipy.sparse matrix, a LinearOperator, an object with "
        f".matvec and .shape, or a callable matvec")


def _linear_operator_products(A):
    """``A``'s matvec and matmat, skipping ``scipy.sparse.linalg.LinearOperator``'s
    checking wrappers when the subclass does not override them: the wrappers cost
    microseconds per call (a fifth of a CG iteration's overhead for cheap operators)
    and only validate shapes, which :class:`Operator` checks itself; the products
    computed are the same."""
    if not isinstance(A, sla.LinearOperator):
        return A.matvec, getattr(A, "matmat", None)
    cls = type(A)
    mv = A._matvec if cls.matvec is sla.LinearOperator.matvec else A.matvec
    mm = A._matmat if cls.matmat is sla.LinearOperator.matmat else A.matmat
    return mv, mm


def as_square_operator(A, n, caller, name="A", dtype=None):
    """Internal: :func:`aslinearoperator_like` plus a square-shape check against ``n``."""
    op = aslinearoperator_like(A, n, dtype=dtype, caller=caller, name=name)
    if op.shape[0] != op.shape[1]:
        raise ValueError(f"{caller}: {name} must be square, got shape {op.shape}")
    if n is not None and op.shape[1] != n:
        raise ValueError(f"{caller}: vector of length {n} does not match {name} with "
                         f"shape {op.shape}")
    return op
