"""Minimise the extended Rosenbrock function with SciPy's trust-region methods.

``scipy.optimize.minimize(method="trust-krylov")`` solves each trust-region subproblem by a
Lanczos process (GLTR) that needs only Hessian-vector products: ``hg.scipy.objective``
supplies them (forward-over-reverse, traced once per point), together with the value and
gradient. ``trust-ncg`` (Steihaug CG) uses the same callbacks; ``trust-exact`` needs the
dense Hessian (``obj.hess``) and is shown for comparison.

    python examples/scipy_trust_krylov.py
"""

import time

import numpy as np
from scipy.optimize import minimize

import hessgrad as hg
from hessgrad import problems


def main(n=100, seed=0, methods=("trust-krylov", "trust-ncg", "trust-exact")):
    problem = problems.get("rosenbrock", n=n, seed=seed)
    xstar = problem.exact["minimizer"]
    print(f"{problem.description}, start f(x0) = {float(problem.fun(problem.x0)):.6g}\n")
    print(f"{'method':<13} {'iterations':>10} {'f evals':>8} {'Hess-vec':>9} {'Hessians':>9} "
          f"{'f(x)':>10} {'|x - x*|':>9} {'time':>7}")
    results = {}
    for method in methods:
        obj = hg.scipy.objective(problem.fun)
        curvature = {"hess": obj.hess} if method == "trust-exact" else {"hessp": obj.hessp}
        start = time.perf_counter()
        res = minimize(obj.fun, problem.x0, jac=obj.jac, method=method,
                       options={"gtol": 1e-8, "maxiter": 2000}, **curvature)
        seconds = time.perf_counter() - start
        err = float(np.linalg.norm(res.x - xstar))
        results[method] = {"nit": int(res.nit), "nfev": int(res.nfev), "nhessp": obj.nhessp,
                           "nhess": obj.nhev, "fun": float(res.fun), "error": err,
                           "success": bool(res.success)}
        print(f"{method:<13} {res.nit:>10} {res.nfev:>8} {obj.nhessp:>9} {obj.nhev:>9} "
              f"{res.fun:>10.2e} {err:>9.1e} {seconds:>6.2f}s")
    print("\n(x* = ones(n), the global minimiser; a run may also end in the local minimum "
          "near x[0] = -1)")
    return results


if __name__ == "__main__":
    main()
