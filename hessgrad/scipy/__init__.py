"""``hessgrad.scipy``: SciPy's layout over hessgrad, so ``import hessgrad.scipy.special as hsp``
mirrors ``import scipy.special``.

* :mod:`.optimize`: callbacks for ``scipy.optimize.minimize`` (:func:`objective`,
  :func:`constraint`) and :func:`hessian_operator` (a ``LinearOperator``), re-exported here
  where they have always been (``hessgrad.scipy.objective``).
* :mod:`.special`, :mod:`.stats`, :mod:`.linalg`, :mod:`.signal`, :mod:`.integrate`:
  differentiable versions of SciPy's functions (first and second derivatives, forward and
  reverse), each a primitive of ``hessgrad.ops`` or a composite of them.
"""

from . import integrate, linalg, optimize, signal, special, stats
from .optimize import Constraint, Objective, constraint, hessian_operator, objective

__all__ = ["optimize", "special", "stats", "linalg", "signal", "integrate", "Objective",
           "Constraint", "objective", "constraint", "hessian_operator"]
