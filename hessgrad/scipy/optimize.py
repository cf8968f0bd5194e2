"""SciPy adapters: callbacks for ``scipy.optimize.minimize`` (an objective, and constraints
with exact sparse Jacobians and Hessians for ``trust-constr``) and a ``LinearOperator``."""

import numpy as np
from scipy.optimize import NonlinearConstraint

from .. import numpy as _hnp
from ..engine.nest import flatten
from ..hessian_matrix import hessian
from ..operators import HessianOperator
from ..pytree import ravel_pytree
from ..second_order import hvp
from ..sparse import SparseHessian, SparseJacobian, sparse_hessian as _sparse_hessian
from ..tracing.capture import CapturedTraces
from ..transforms import value_and_grad


class Objective:
    """``fun``, ``jac``, ``hess`` and ``hessp`` callables of one scalar function for SciPy.

    Value and gradient at the same ``x`` come from one traced evaluation (cached).
    ``hessp`` runs one traced ``hvp(f)(x, p)`` for the first ``fold_after`` products at a
    point; from then on it reuses a Hessian operator built once for that ``x`` (its
    products skip the parts that do not depend on ``p``). Extra arguments that SciPy
    passes (``args=``) are forwarded to ``f``; cached results are reused while ``x`` has the
    same values, the arguments are the same objects (arrays) or equal (other values), and
    what ``f`` reads from outside its arguments is unchanged: every call runs ``f`` once
    eagerly to check that (``hessgrad.tracing.capture``; pass a ``hessgrad.function`` to
    skip the check).

    ``sparse_hessian=True`` (or a dict of :func:`hessgrad.sparse_hessian` options) makes
    ``hess`` return a ``scipy.sparse.csr_matrix`` built from a few batched HVPs, for
    ``method="trust-constr"``.

    ``params=`` a pytree (a dict, list, tuple or namedtuple of arrays: a model's parameters)
    when ``f`` takes one: SciPy then works on the flat vector of all their entries
    (:func:`hessgrad.ravel_pytree` order); ``x0`` is that vector at ``params`` and
    ``unravel(x)`` the tree at a flat ``x`` (a result's ``res.x``).

    >>> import hessgrad as hg
    >>> import hessgrad.numpy as hnp
    >>> from scipy.optimize import minimize
    >>> obj = hg.scipy.objective(lambda x: hnp.sum((x - 3.0) ** 2))
    >>> res = minimize(obj.fun, np.zeros(2), jac=obj.jac, hessp=obj.hessp, method="trust-ncg")
    >>> np.round(res.x, 6)
    array([3., 3.])
    """

    # Products at one x before the operator is built. Building it at a new point (one
    # forward pass and gradient; the trace is shared by every point) costs about 0.7-3
    # unfolded products (measured: logistic regression, Rosenbrock n = 1e3 and 1e5), so
    # switching then costs at most about twice the better of the two strategies (ski
    # rental); its products then skip the forward pass and gradient (3.6x cheaper on the
    # logistic loss, about the same on Rosenbrock).
    fold_after = 2

    def __init__(self, f, *, trace=True, sparse_hessian=False, params=None):
        self.x0 = self.unravel = None
        if params is not None:
            self.x0, self.unravel = ravel_pytree(params)
            self.x0 = np.array(self.x0, dtype=np.float64)
            f = _on_flat(f, self.unravel)
        self.f = f
        self._sparse_hess = None
        if sparse_hessian:  # hess returns scipy.sparse matrices (trust-constr accepts them)
            self._sparse_hess = _sparse_hessian(
                f, **(sparse_hessian if isinstance(sparse_hessian, dict) else {}))
        self._trace = trace
        self._value_and_grad = value_and_grad(f)
        self._hvp = hvp(f)
        self._traced_value_and_grad = CapturedTraces(self._value_and_grad, f)
        self._traced_hvp = CapturedTraces(self._hvp, f)
        self._hessp_at = None  # (point key, products at this point)
        self._last = None      # (point key, args, value, gradient)
        self._hess_at = None   # (point key, args, HessianOperator)
        self.nfev = self.njev = self.nhev = self.nhessp = 0

    def _point(self, x, args):
        """``(x as float64, the point's key, capture)``: results cached under the key are
        those at ``x`` with ``f`` reading what it reads now."""
        x = np.asarray(x, dtype=np.float64)
        cap = self._traced_value_and_grad.check((x, *args), {})
        return x, (x.tobytes(), x.shape, cap.key), cap

    def _run(self, traced, cap, args):
        """A traced product at ``args`` (eager where ``f`` cannot be traced)."""
        if not self._trace:
            return None
        concrete = traced.concrete(cap, args, {})
        if concrete is None:
            return None
        return concrete(flatten((args, {})), False, cap.feeds(concrete))

    def _evaluate(self, x, args):
        x, key, cap = self._point(x, args)
        if self._last is None or self._last[0] != key or not _same_args(self._last[1], args):
            out = self._run(self._traced_value_and_grad, cap, (x, *args))
            value, grad = out if out is not None else self._value_and_grad(x, *args)
            self._last = (key, args, float(value), np.array(grad, dtype=np.float64))
            self.nfev += 1
        return self._last

    def fun(self, x, *args):
        return self._evaluate(x, args)[2]

    def jac(self, x, *args):
        self.njev += 1
        return self._evaluate(x, args)[3].copy()

    def value_and_grad(self, x, *args):
        _, _, value, grad = self._evaluate(x, args)
        return value, grad.copy()

    def hessp(self, x, p, *args):
        self.nhessp += 1
        x, key, cap = self._point(x, args)
        p = np.asarray(p, dtype=np.float64)
        if p.size != x.size:
            raise ValueError(f"Objective.hessp: p has shape {p.shape}, expected {x.size} "
                             f"entries like x (shape {x.shape})")
        at = self._hessp_at
        count = at[2] + 1 if at is not None and at[0] == key and _same_args(at[1], args) else 1
        self._hessp_at = (key, args, count)
        if count <= self.fold_after and not self._has_operator(key, args):
            out = self._run(self._traced_hvp, cap, (x, *args, p.reshape(x.shape)))
            if out is None:
                out = self._hvp(x, *args, p.reshape(x.shape))
            return np.asarray(out, dtype=np.float64).reshape(p.shape)
        if not self._has_operator(key, args):
            self._hess_at = (key, args, HessianOperator(self.f, x, args=args))
        return self._hess_at[2].matvec(p)

    def _has_operator(self, key, args):
        return self._hess_at is not None and self._hess_at[0] == key and \
            _same_args(self._hess_at[1], args)

    def hess(self, x, *args):
        self.nhev += 1
        if self._sparse_hess is not None:
            return self._sparse_hess(np.asarray(x, dtype=np.float64), *args)
        return np.asarray(hessian(self.f)(np.asarray(x, dtype=np.float64), *args))


def _on_flat(f, unravel):
    """``f`` of a pytree as a function of the flat vector of its entries."""
    def on_flat(x, *args, **kwargs):
        return f(unravel(x), *args, **kwargs)
    on_flat.__wrapped__ = f
    return on_flat


def _same_args(cached, args):
    """Whether SciPy's extra arguments are those of the cached evaluation: the same objects,
    or equal values that are not arrays. Arrays compare by identity (reading a large data
    array on every call would cost as much as the evaluation), so an array changed in place
    at the same ``x`` is not seen, as with SciPy's own ``MemoizeJac``, which ignores args."""
    if cached is args:
        return True
    if len(cached) != len(args):
        return False
    for a, b in zip(cached, args):
        if a is b:
            continue
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return False
        try:
            if not bool(a == b):
                return False
        except (TypeError, ValueError):  # e.g. lists holding arrays: no single truth value
            return False
    return True


def objective(f, **options):
    """SciPy callbacks (``fun``, ``jac``, ``hess``, ``hessp``) for scalar ``f`` (see
    :class:`Objective`)."""
    return Objective(f, **options)


def _flat(c):
    def flat(x):
        return _hnp.ravel(c(x))
    return flat


def _weighted(c):
    def weighted(x, v):
        return _hnp.sum(v * _hnp.ravel(c(x)))
    return weighted


class Constraint(NonlinearConstraint):
    """A ``scipy.optimize.NonlinearConstraint`` ``lb <= c(x) <= ub`` with exact sparse
    derivatives: ``jac(x)`` is the Jacobian of ``c`` (output flattened) and ``hess(x, v)``
    the Hessian of ``v @ c(x)``, both ``scipy.sparse.csr_matrix`` built by
    :func:`hessgrad.sparse_jacobian` and :func:`hessgrad.sparse_hessian` (pattern detected
    from the traced graph, colored, one batched product per call; the multipliers ``v`` are
    an argument of the traced Hessian, so one pattern and one coloring serve every ``v``).
    ``fun(x)`` runs a traced program of ``c``. Built by :func:`constraint`.

    Every call checks what ``c`` reads from outside its arguments (one eager run of ``c``;
    see "What is cached" in the README); pass a ``hessgrad.function`` to skip that check.

    Attributes:
        function: the user's ``c``.
        jacobian: the :class:`hessgrad.SparseJacobian` of ``c`` (``.info(x)``: colors).
        hessian: the :class:`hessgrad.SparseHessian` of ``v @ c(x)`` (called with ``x, v``).
        nfev, njev, nhev: the number of calls of ``fun``, ``jac`` and ``hess``.
    """

    def __init__(self, c, lb, ub, keep_feasible=False):
        if not callable(c):
            raise TypeError(f"constraint: c must be callable, got {type(c).__name__}")
        self.function = c
        self.jacobian = SparseJacobian(c)
        self.hessian = SparseHessian(_weighted(c))
        self._flat = _flat(c)
        self._traced = CapturedTraces(self._flat, c)
        self.nfev = self.njev = self.nhev = 0
        super().__init__(self._value, lb, ub, jac=self._jac, hess=self._hess,
                         keep_feasible=keep_feasible)

    def _value(self, x):
        self.nfev += 1
        x = _float_point(x, "constraint.fun")
        cap = self._traced.check((x,), {})
        concrete = self._traced.concrete(cap, (x,), {})
        if concrete is None:  # not traceable (Python control flow on values): eager
            out = self._flat(x)
        else:
            out = concrete(flatten(((x,), {})), False, cap.feeds(concrete))
        return np.asarray(out, dtype=np.float64).reshape(-1)

    def _jac(self, x):
        self.njev += 1
        return self.jacobian(_float_point(x, "constraint.jac"))

    def _hess(self, x, v):
        self.nhev += 1
        x = _float_point(x, "constraint.hess")
        v = np.asarray(v, dtype=np.float64).reshape(-1)
        return self.hessian(x, v)


def _float_point(x, what):
    x = np.asarray(x)
    if x.dtype.kind not in "fiub":
        raise TypeError(f"{what}: x must be a real array, got dtype {x.dtype} "
                        f"(shape {x.shape})")
    return x.astype(np.float64, copy=False)


def constraint(c, lb, ub, keep_feasible=False):
    """The constraint ``lb <= c(x) <= ub`` for ``scipy.optimize.minimize`` (``trust-constr``,
    also SLSQP and COBYQA, which use ``fun`` and ``jac``) with exact sparse derivatives.

    Args:
        c: ``c(x)`` written with ``hessgrad.numpy``, returning an array (flattened: ``m``
            constraints) or a scalar.
        lb, ub: bounds, scalars or arrays broadcastable to ``(m,)``; ``lb == ub`` for
            equalities, ``-np.inf`` / ``np.inf`` for one-sided ones.
        keep_feasible: as ``NonlinearConstraint``'s.
    Returns:
        A :class:`Constraint` (a ``NonlinearConstraint``): ``jac(x)`` an ``(m, n)`` and
        ``hess(x, v)`` an ``(n, n)`` ``scipy.sparse.csr_matrix``. Pass it to
        :func:`hessgrad.ipopt.minimize` as well.
    Raises:
        TypeError: ``c`` is not callable.

    >>> import hessgrad as hg
    >>> import hessgrad.numpy as hnp
    >>> from scipy.optimize import minimize
    >>> obj = hg.scipy.objective(lambda x: hnp.sum(x), sparse_hessian=True)
    >>> circle = hg.scipy.constraint(lambda x: hnp.sum(x ** 2), 1.0, 1.0)
    >>> circle.jac(np.array([1.0, 2.0])).toarray()
    array([[2., 4.]])
    >>> circle.hess(np.array([1.0, 2.0]), np.array([3.0])).toarray()
    array([[6., 0.],
           [0., 6.]])
    >>> res = minimize(obj.fun, np.array([1.0, 0.0]), jac=obj.jac, hess=obj.hess,
    ...                method="trust-constr", constraints=[circle])
    >>> np.round(res.x, 5)
    array([-0.70711, -0.70711])
    """
    return Constraint(c, lb, ub, keep_feasible=keep_feasible)


def hessian_operator(f, x, args=()):
    """The Hessian of ``f`` at ``x`` as a ``scipy.sparse.linalg.LinearOperator`` (``matvec``,
    ``matmat``, ``rmatvec``) for ``eigsh``, ``cg``, ``minres``, ``gmres``.

    >>> import hessgrad as hg
    >>> import hessgrad.numpy as hnp
    >>> from scipy.sparse.linalg import eigsh
    >>> H = hg.scipy.hessian_operator(lambda x: hnp.sum(x ** 4), np.array([1.0, 2.0, 3.0]))
    >>> np.round(np.sort(eigsh(H, k=2, return_eigenvectors=False)), 6)
    array([ 48., 108.])
    """
    return HessianOperator(f, x, args=args).aslinearoperator()


__all__ = ["Objective", "Constraint", "objective", "constraint", "hessian_operator"]
