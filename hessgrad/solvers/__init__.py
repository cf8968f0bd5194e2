"""Matrix-free solvers and Hessian analytics that see only a matvec.

Layout (one job per file):

* ``operators``  -- normalise arrays, sparse matrices, LinearOperators, duck-typed
  objects and callables into one counting operator;
* ``krylov``     -- ``cg`` (with negative-curvature detection), ``steihaug``, ``minres``;
* ``inverse``    -- ``inverse_hvp`` and ``lissa``;
* ``lanczos``    -- ``lanczos``, thick-restart ``eigsh``, ``power_iteration``;
* ``estimators`` -- ``hutchinson``, ``hutchpp``, ``diagonal``;
* ``spectral``   -- stochastic Lanczos quadrature and what follows from it;
* ``trust_region`` -- trust-region driver, ``gltr`` and the tridiagonal subproblem;
* ``optimize``   -- ``minimize``: Newton-CG, trust-ncg, trust-lanczos;
* ``_kernels``   -- dense inner loops (Numba, BLAS for long vectors).
"""

from .estimators import diagonal, hutchinson, hutchpp
from .inverse import inverse_hvp, lissa
from .krylov import cg, minres, steihaug
from .lanczos import EigshNoConvergence, eigsh, lanczos, power_iteration
from .operators import aslinearoperator_like
from .optimize import minimize
from .spectral import (condition_number_estimate, negative_eigenvalue_count,
                       spectral_density)
from .trust_region import gltr

__all__ = [
    "cg", "steihaug", "minres", "inverse_hvp", "lissa", "lanczos", "eigsh",
    "EigshNoConvergence", "power_iteration", "hutchinson", "hutchpp", "diagonal",
    "spectral_density", "condition_number_estimate", "negative_eigenvalue_count",
    "aslinearoperator_like", "minimize", "gltr",
]
