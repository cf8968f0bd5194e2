"""Inverse Hessian-vector products ``(A + damping I)^{-1} b``, e.g. for influence
functions (Koh and Liang, 2017): by CG / MINRES, or by the LiSSA recursion
(Agarwal, Bullins and Hazan, 2017).
"""

import math
import numbers
from collections.abc import Sequence

import numpy as np
from scipy.optimize import OptimizeResult

from .krylov import _check_finite, _check_number, cg, minres
from .lanczos import power_iteration
from .operators import aslinearoperator_like

__all__ = ["inverse_hvp", "lissa"]


def _damped(op, damping):
    if damping == 0.0:
        return op
    return aslinearoperator_like(lambda x: op.matvec(x) + damping * x, op.shape[0],
                                 dtype=op.dtype)


def _check_vector(caller, b, n, shape):
    b = np.asarray(b)
    if b.shape != (n,):
        raise ValueError(f"{caller}: b has shape {b.shape} but A has shape {shape}")
    # NaN in b would otherwise surface as a misleading "the recursion diverged".
    _check_finite(caller, "b", b)
    return b.astype(np.result_type(b.dtype, np.float32))


def lissa(A, b, *, damping=0.0, scale=None, depth=100, repeats=1, rng=None,
          full_output=False):
    """LiSSA estimate of ``(A + damping I)^{-1} b``.

    Runs the recursion ``v_0 = b``, ``v_{j+1} = b + (I - (A_j + damping I) /
    scale) v_j`` for ``depth`` steps and returns ``v_depth / scale``, averaged over
    ``repeats`` independent runs.  It converges when the spectrum of
    ``(A + damping I) / scale`` lies in ``(0, 2)``; the error after ``depth`` steps
    is ``(I - (A + damping I)/scale)^depth`` applied to the solution.

    ``A`` is either one operator (the recursion is then deterministic) or a sequence
    of operators whose mean is the target (e.g. per-minibatch Hessians); in that
    case every step uses one drawn uniformly with ``rng`` -- the stochastic
    recursion of the original method.

    Args:
        A: a symmetric positive (semi)definite operator, or a sequence of them.
        b: right-hand side, shape ``(n,)``.
        damping: added to the diagonal (>= 0).
        scale: must exceed ``lambda_max(A + damping I) / 2``; for a single operator
            the default is ``1.1 * (|lambda_max(A)| + damping)`` by power iteration
            (a few extra matvecs); required for a sequence.
        depth: recursion depth (matvecs per repeat).
        repeats: independent runs to average.
        rng: seed or ``numpy.random.Generator``.
        full_output: return an ``OptimizeResult`` (``x``, ``std_error`` across
            repeats, ``nmatvec``, ``scale``) instead of ``x``.

    Returns:
        ``x`` (ndarray), or the ``OptimizeResult``.

    Raises:
        ValueError: on bad shapes or parameters, NaN/inf in ``b``, or a missing
            ``scale`` for a sequence of operators.
        FloatingPointError: if the recursion diverges (``scale`` too small or
            ``A + damping I`` not positive definite).

    >>> import numpy as np
    >>> A = np.diag([1.0, 2.0])
    >>> np.round(lissa(A, np.ones(2), scale=2.5, depth=200), 8).tolist()
    [1.0, 0.5]
    """
    ops = ([aslinearoperator_like(a, caller="lissa", name="A[i]", caller_takes_size=False)
            for a in A] if isinstance(A, Sequence) else
           [aslinearoperator_like(A, caller="lissa", caller_takes_size=False)])
    if not ops:
        raise ValueError("lissa: A is an empty sequence")
    shape = ops[0].shape
    for op in ops:
        if op.shape != shape or shape[0] != shape[1]:
            raise ValueError(f"lissa: operators must be square and of one shape, got "
                             f"{[o.shape for o in ops]}")
    n = shape[0]
    b = _check_vector("lissa", b, n, shape)
    for name, val in (("depth", depth), ("repeats", repeats)):
        if not isinstance(val, numbers.Integral) or val < 1:
            raise ValueError(f"lissa: {name} must be an int >= 1, got {val!r}")
    _check_number("lissa", "damping", damping)
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    start = sum(op.nmatvec for op in ops)
    if scale is None:
        if len(ops) > 1:
            raise ValueError("lissa: pass scale= when A is a sequence of operators")
        lam = power_iteration(ops[0], maxiter=100, tol=1e-3, rng=rng).eigenvalue
        scale = 1.1 * (abs(lam) + damping)
    _check_number("lissa", "scale", scale, positive=True)
    bnorm = float(np.linalg.norm(b))
    runs = []
    for _ in range(int(repeats)):
        v = b.copy()
        for _ in range(int(depth)):
            op = ops[rng.integers(len(ops))] if len(ops) > 1 else ops[0]
            Av = op.matvec(v)
            if damping:
                Av = Av + damping * v
            v = b + v - Av / scale
        if not np.all(np.isfinite(v)) or np.linalg.norm(v) > 1e12 * (bnorm + 1e-300):
            raise FloatingPointError(
                f"lissa: the recursion diverged (scale={scale!r}); increase scale or "
                f"damping so that (A + damping I) / scale has spectrum in (0, 2)")
        runs.append(v / scale)
    runs = np.array(runs)
    x = runs.mean(axis=0)
    if not full_output:
        return x
    std = (runs.std(axis=0, ddof=1) / math.sqrt(len(runs)) if len(runs) > 1
           else np.full(n, np.inf))
    return OptimizeResult(x=x, std_error=std, scale=scale,
                          nmatvec=sum(op.nmatvec for op in ops) - start)


def inverse_hvp(A, b, method="cg", damping=0.0, *, rtol=1e-8, maxiter=None, M=None,
                **lissa_options):
    """Compute ``(A + damping I)^{-1} b`` matrix-free.

    Args:
        A: symmetric operator (a Hessian), in any form accepted by
            ``aslinearoperator_like``; for ``method="lissa"`` also a sequence of
            operators (see :func:`lissa`).
        b: right-hand side, shape ``(n,)``.
        method: ``"cg"`` (needs ``A + damping I`` positive definite), ``"minres"``
            (symmetric indefinite allowed) or ``"lissa"`` (stochastic recursion).
        damping: Tikhonov damping added to the diagonal (>= 0).
        rtol, maxiter, M: passed to :func:`~hessgrad.solvers.krylov.cg` /
            :func:`~hessgrad.solvers.krylov.minres`.
        **lissa_options: ``scale``, ``depth``, ``repeats``, ``rng`` for LiSSA.

    Returns:
        ``x`` as an ndarray.

    Raises:
        ValueError: on an unknown method, bad shapes or negative damping, or if CG
            meets negative curvature (increase ``damping`` or use ``"minres"``).
        RuntimeError: if the Krylov solver does not converge within ``maxiter``.

    >>> import numpy as np
    >>> A = np.array([[2.0, 1.0], [1.0, 2.0]])
    >>> np.allclose(inverse_hvp(A, np.ones(2), damping=1.0), np.ones(2) / 4)
    True
    """
    if method not in ("cg", "minres", "lissa"):
        raise ValueError(f"inverse_hvp: method must be 'cg', 'minres' or 'lissa', "
                         f"got {method!r}")
    _check_number("inverse_hvp", "damping", damping)
    if method == "lissa":
        return lissa(A, b, damping=damping, **lissa_options)
    if lissa_options:
        raise TypeError(f"inverse_hvp: unexpected options {sorted(lissa_options)} for "
                        f"method={method!r}")
    b = np.asarray(b)
    op = aslinearoperator_like(A, b.shape[0] if b.ndim else None, caller="inverse_hvp")
    if op.shape[0] != op.shape[1] or b.shape != (op.shape[1],):
        raise ValueError(f"inverse_hvp: b has shape {b.shape} but A has shape "
                         f"{op.shape}")
    solver = cg if method == "cg" else minres
    res = solver(_damped(op, damping), b, rtol=rtol, maxiter=maxiter, M=M,
                 full_output=True)
    if method == "cg" and res.negative_curvature:
        raise ValueError("inverse_hvp: A + damping I is not positive definite (CG met "
                         "negative curvature); increase damping or use "
                         "method='minres'")
    if not res.success and res.status == 1:
        raise RuntimeError(f"inverse_hvp: {method} did not converge in {res.nit} "
                           f"iterations (residual {res.residual_norm:.3g})")
    return res.x
