"""Matrix-free Hessian operators: ``shape``, ``dtype``, ``matvec``, ``matmat`` at a fixed point.

They are the duck-typed operators that ``solvers`` and ``scipy.sparse.linalg`` accept.
"""

import numpy as np

from .engine.nest import flatten
from .engine.tensor import Tensor
from .kernels import tuning
from .pytree import ravel_pytree, tree_flatten as _tree_flatten
from .second_order import make_hvp
from .transforms import jvp, vjp


class HessianOperator:
    """The Hessian of scalar ``f`` at ``x`` as a linear operator on flat vectors.

    The Hessian-vector product is traced and compiled once per ``f`` and signature
    (forward-over-reverse by default), shared by every operator of that ``f``; building one
    at a new ``x`` runs the forward pass and gradient once, and each ``matvec`` re-runs only
    the part that depends on ``v``.

    Args:
        f: scalar function of one argument (extra ``args`` are held fixed).
        x: the point: an array (any shape; the operator acts on ``x.size``-vectors) or a
            pytree of arrays (a dict, list, tuple, namedtuple: the parameters of a model),
            which the operator sees as one flat vector of all their entries, in
            :func:`hessgrad.ravel_pytree` order; ``unravel`` turns such a vector (a product,
            a solver's solution) back into the tree.
        args: further positional arguments of ``f``, held fixed.
        mode: HVP strategy, see :func:`hessgrad.hvp`.

    Attributes: ``shape`` ``(N, N)``, ``dtype``, ``x`` (the point as an array, or the flat
    vector of a tree), ``params`` (the point as given, copied), ``unravel``, ``nmatvec``.

    >>> import hessgrad as hg
    >>> import hessgrad.numpy as hnp
    >>> H = hg.HessianOperator(lambda x: hnp.sum(x ** 3), np.array([1.0, 2.0]))
    >>> H.shape, H @ np.array([1.0, 1.0])
    ((2, 2), array([ 6., 12.]))
    """

    def __init__(self, f, x, args=(), mode="auto"):
        _at(self, x)
        self.nmatvec = 0
        self._hvp = make_hvp(f, 0, mode)(self.params, *args)

    def matvec(self, v):
        v = _vector(self, v, "HessianOperator.matvec")
        self.nmatvec += 1
        out = self._ravel(self._hvp(self._unflat(v)))
        return out.reshape(v.shape) if v.ndim == 2 else out

    def rmatvec(self, v):
        return self.matvec(v)  # a Hessian is symmetric

    def matmat(self, V):
        V = _matrix(self, V, "HessianOperator.matmat")
        if not V.shape[1]:
            return np.zeros((self.shape[0], 0), self.dtype)
        if V.shape[1] == 1:
            return self.matvec(V[:, 0]).reshape(-1, 1)
        self.nmatvec += V.shape[1]
        k = V.shape[1]
        if self._tree is None:
            out = np.asarray(self._hvp.batched(V.T.reshape((k,) + self.x.shape)))
            return out.reshape(k, -1).T
        rows = V.T  # (k, N): each leaf's columns, stacked along a leading batch axis
        stacked = self.unravel.treedef.unflatten(
            rows[:, lo:hi].reshape((k,) + shape) for shape, lo, hi in
            zip(self.unravel.shapes, self.unravel.offsets, self.unravel.offsets[1:]))
        out = flatten(self._hvp.batched(stacked))
        return np.concatenate([np.asarray(o, self.dtype).reshape(k, -1) for o in out],
                              axis=1).T if out else np.zeros((self.shape[0], k), self.dtype)

    def _unflat(self, v):
        """A flat vector as the point's structure (a view where it can be)."""
        return v.reshape(self.x.shape) if self._tree is None else self.unravel(v.reshape(-1))

    def _ravel(self, out):
        """A product (shaped like the point) as a flat vector."""
        if self._tree is None:
            return np.asarray(out).reshape(-1)
        leaves = flatten(out)
        return np.concatenate([np.asarray(o, self.dtype).reshape(-1) for o in leaves]) \
            if leaves else np.zeros(0, self.dtype)

    def info(self):
        """What the products at this point run: ``{"compiled": bool, "block_size": int,
        "batched_programs": int}`` -- whether the HVP runs a compiled program now (a lazy trace:
        once compiled in the background, see ``hessgrad.tracing.tiers``), the batch size
        ``matmat`` runs its columns in (in blocks of that many, whatever the number of
        columns) and how many batched programs were compiled for this ``f`` so far (at most
        one per batch flags: not one per number of columns)."""
        linear = self._hvp.linear
        compiled = linear is not None and bool(getattr(linear, "compiled", False))
        return {"compiled": compiled, "block_size": tuning.MATMAT_BLOCK,
                "batched_programs": linear.batched_programs if compiled else 0}

    def __matmul__(self, other):
        other = np.asarray(other)
        return self.matvec(other) if other.ndim == 1 else self.matmat(other)

    def to_dense(self):
        """The full matrix, one product per column."""
        return self.matmat(np.eye(self.shape[0], dtype=self.dtype))

    def aslinearoperator(self):
        """This operator as a ``scipy.sparse.linalg.LinearOperator``."""
        from scipy.sparse.linalg import LinearOperator

        return LinearOperator(self.shape, matvec=self.matvec, rmatvec=self.rmatvec,
                              matmat=self.matmat, dtype=self.dtype)


def _point(x):
    """A copy of ``x`` in a float dtype (float32 stays float32): the operator is at the point
    it was given, even when the caller then updates ``x`` in place."""
    x = np.array(x.numpy() if isinstance(x, Tensor) else x)
    return x if x.dtype.kind in "fc" else x.astype(np.float64)


def _at(op, x):
    """Set ``op``'s point: ``x`` an array, or a pytree of them (its leaves copied as
    :func:`_point` copies an array; the operator acts on the flat vector of all entries)."""
    if isinstance(x, (list, tuple, dict)):
        tree_leaves, treedef = _tree_flatten(x)
        if any(leaf is None for leaf in flatten(x)):
            raise TypeError("HessianOperator: the parameters hold None leaves; leave them "
                            "out of the differentiated tree")
        op.params = treedef.unflatten(_point(leaf) for leaf in tree_leaves)
        op.x, op.unravel = ravel_pytree(op.params)
        op._tree = treedef
    else:
        op.params = op.x = _point(x)
        op._tree = None
        shape = op.x.shape
        op.unravel = lambda v: np.asarray(v).reshape(shape)
    op.shape = (op.x.size, op.x.size)
    op.dtype = op.x.dtype


def _vector(op, v, name):
    v = np.asarray(v, dtype=op.dtype)
    if v.size != op.x.size:
        raise ValueError(f"{name}: vector v has shape {v.shape} ({v.size} entries), the "
                         f"operator has shape {op.shape}")
    return v


def _matrix(op, V, name):
    V = np.asarray(V, dtype=op.dtype)
    if V.ndim != 2 or V.shape[0] != op.shape[1]:
        raise ValueError(f"{name}: matrix V has shape {V.shape}, expected ({op.shape[1]}, k)")
    return V


class GaussNewtonOperator:
    """Generalized Gauss-Newton ``J^T H_loss J`` of ``loss(model(x))`` at ``x``.

    Each product is one JVP through ``model``, one Hessian-vector product of ``loss`` at the
    model output (usually cheap), and one VJP through ``model``. It is positive semidefinite
    whenever ``loss`` is convex, which makes it a safe curvature model for Newton-CG.
    ``x`` may be a pytree of parameters (see :class:`HessianOperator`: the operator acts on
    flat vectors, ``unravel`` rebuilds the tree).

    >>> import hessgrad as hg
    >>> import hessgrad.numpy as hnp
    >>> A = np.array([[1.0, 2.0], [3.0, 4.0], [0.0, 1.0]])
    >>> G = hg.GaussNewtonOperator(lambda x: hnp.matmul(A, x),
    ...                            lambda r: 0.5 * hnp.sum(r ** 2), np.zeros(2))
    >>> np.allclose(G.to_dense(), A.T @ A)
    True
    """

    def __init__(self, model, loss, x):
        from .second_order import hvp as _hvp

        _at(self, x)
        self.nmatvec = 0
        self._model = model
        self._out, self._pullback = vjp(model, self.params)
        self._loss_hvp = _hvp(loss)

    def matvec(self, v):
        v = _vector(self, v, "GaussNewtonOperator.matvec")
        self.nmatvec += 1
        _, jv = jvp(self._model, (self.params,), (self._unflat(v),))
        hjv = self._loss_hvp(self._out, jv)
        (g,) = self._pullback(hjv)
        out = self._ravel(g)
        return out.reshape(v.shape) if v.ndim == 2 else out

    rmatvec = matvec

    def matmat(self, V):
        V = _matrix(self, V, "GaussNewtonOperator.matmat")
        return np.column_stack([self.matvec(V[:, j]) for j in range(V.shape[1])]) \
            if V.shape[1] else np.zeros((self.shape[0], 0), self.dtype)

    __matmul__ = HessianOperator.__matmul__
    _unflat = HessianOperator._unflat
    _ravel = HessianOperator._ravel
    to_dense = HessianOperator.to_dense
    aslinearoperator = HessianOperator.aslinearoperator
