"""The constrained corpus (``hessgrad.problems_constrained``) for CasADi: the same problem
code run on a small numpy-like shim over CasADi's SX expressions, and two ways to solve it.

* :func:`casadi_nlp` builds ``{"x", "f", "g"}`` in SX from the problem's ``builder``;
* :func:`solve_casadi` solves it with CasADi's ``nlpsol("ipopt")`` (CasADi's own Ipopt
  build, its derivatives generated from the SX graph) and reports CasADi's timing stats;
* :func:`casadi_callbacks` wraps CasADi's derivative functions (gradient, Jacobian, lower
  triangle of the Lagrangian's Hessian) as cyipopt callbacks, so that the *same* Ipopt
  binary as hessgrad's can be run with CasADi's derivatives: iteration counts then compare
  exactly (two Ipopt builds, 3.14.11 in cyipopt-wheels and 3.14.19 in CasADi 3.8, may take
  different paths on the same derivatives).

CasADi is a benchmark extra (``pip install -e '.[bench]'``), never a runtime dependency.
"""

import time

import numpy as np


def _casadi():
    import casadi
    return casadi


class CasadiNumpy:
    """The vocabulary the corpus uses (see ``hessgrad.problems_constrained``) on SX."""

    def __init__(self):
        ca = _casadi()
        self.sqrt, self.exp, self.log = ca.sqrt, ca.exp, ca.log
        self.sin, self.cos, self.tanh = ca.sin, ca.cos, ca.tanh

    @staticmethod
    def sum(a):
        ca = _casadi()
        return ca.sum1(ca.sum2(a))

    @staticmethod
    def reshape(a, shape):
        """numpy's row-major reshape (CasADi's own is column-major)."""
        ca = _casadi()
        if len(shape) == 1:
            return ca.reshape(a.T, shape[0], 1)
        rows, cols = shape
        return ca.reshape(a.T if a.shape[1] > 1 else a, cols, rows).T

    @staticmethod
    def pad(a, width):
        """``numpy.pad(a, width)`` with zeros, for a 2-D ``a``."""
        ca = _casadi()
        rows, cols = a.shape
        side = ca.SX.zeros(rows, width)
        band = ca.SX.zeros(width, cols + 2 * width)
        return ca.vertcat(band, ca.horzcat(side, a, side), band)

    @staticmethod
    def stack(parts):
        return _casadi().vertcat(*parts)

    @staticmethod
    def concatenate(parts):
        return _casadi().vertcat(*parts)


def const(a):
    """A numpy constant as CasADi sees it: arrays as DM (1-D as columns), scalars as float."""
    a = np.asarray(a, dtype=np.float64)
    return float(a) if a.ndim == 0 else _casadi().DM(a)


def casadi_nlp(problem):
    """``({"x": x, "f": f, "g": g}, seconds to build the SX expressions)``."""
    ca = _casadi()
    start = time.perf_counter()
    x = ca.SX.sym("x", problem.n)
    f, c = problem.fun_for(CasadiNumpy(), const)
    nlp = {"x": x, "f": f(x), "g": c(x) if c is not None else ca.SX(0, 1)}
    return nlp, time.perf_counter() - start


def _bounds(v):
    return np.clip(np.asarray(v, np.float64), -1e19, 1e19)


def solve_casadi(problem, options=None):
    """Solve with CasADi's nlpsol("ipopt"): a dict with x, f, nit, status, build time
    (SX graph + nlpsol: its derivative functions), and CasADi's timing stats."""
    ca = _casadi()
    nlp, t_graph = casadi_nlp(problem)
    opts = {"ipopt." + k: v for k, v in (options or {}).items()}
    opts.setdefault("ipopt.print_level", 0)
    opts.setdefault("ipopt.sb", "yes")
    opts["print_time"] = False
    start = time.perf_counter()
    solver = ca.nlpsol("solver", "ipopt", nlp, opts)
    t_init = time.perf_counter() - start
    start = time.perf_counter()
    sol = solver(x0=problem.x0, lbx=_bounds(problem.lb), ubx=_bounds(problem.ub),
                 lbg=_bounds(problem.cl), ubg=_bounds(problem.cu))
    t_solve = time.perf_counter() - start
    stats = solver.stats()
    return {"x": np.asarray(sol["x"]).ravel(), "f": float(sol["f"]),
            "nit": int(stats["iter_count"]), "success": bool(stats["success"]),
            "status": stats["return_status"], "setup": t_graph + t_init,
            "solve": t_solve, "stats": stats,
            "lam_g": np.asarray(sol["lam_g"]).ravel()}


class CasadiCallbacks:
    """cyipopt's callbacks computed by CasADi functions generated from the SX graph."""

    def __init__(self, problem, ulps=None):
        ca = _casadi()
        # ulps=seed: every derivative entry moved by one rounding unit in a random direction
        # (how sensitive IPOPT's path is to the last bits of exact derivatives)
        self._rng = None if ulps is None else np.random.default_rng(ulps)
        start = time.perf_counter()
        nlp, _ = casadi_nlp(problem)
        x, f, g = nlp["x"], nlp["f"], nlp["g"]
        sigma = ca.SX.sym("sigma")
        lam = ca.SX.sym("lam", g.shape[0])
        lagrangian = sigma * f + (ca.dot(lam, g) if g.shape[0] else 0)
        jac = ca.jacobian(g, x)
        hess = ca.tril(ca.hessian(lagrangian, x)[0])
        self._fg = ca.Function("fg", [x], [f, g])
        self._grad = ca.Function("grad", [x], [ca.gradient(f, x)])
        self._jac = ca.Function("jac_g", [x], [jac])
        self._hess = ca.Function("hess_l", [x, sigma, lam], [hess])
        js, hs = jac.sparsity(), hess.sparsity()
        self._jac_structure = tuple(np.asarray(v, np.int64) for v in js.get_triplet())
        self._hess_structure = tuple(np.asarray(v, np.int64) for v in hs.get_triplet())
        self.setup = time.perf_counter() - start
        self.nit = 0
        self.eval_time = 0.0

    def _timed(self, fn, *args):
        start = time.perf_counter()
        out = fn(*args)
        self.eval_time += time.perf_counter() - start
        return out

    def _moved(self, values):
        if self._rng is None:
            return values
        values = np.asarray(values, dtype=np.float64)
        return values + np.spacing(values) * self._rng.choice([-1.0, 1.0], values.shape)

    def objective(self, x):
        return float(self._timed(self._fg, x)[0])

    def constraints(self, x):
        return np.asarray(self._timed(self._fg, x)[1]).ravel()

    def gradient(self, x):
        return self._moved(np.asarray(self._timed(self._grad, x)).ravel())

    def jacobianstructure(self):
        return self._jac_structure

    def jacobian(self, x):
        return self._moved(np.asarray(self._timed(self._jac, x).nonzeros()))

    def hessianstructure(self):
        return self._hess_structure

    def hessian(self, x, lagrange, obj_factor):
        return self._moved(np.asarray(self._timed(self._hess, x, obj_factor,
                                                  lagrange).nonzeros()))

    def intermediate(self, alg_mod, iter_count, *rest):
        self.nit = int(iter_count)
        return True


def solve_cyipopt_casadi(problem, options=None, ulps=None):
    """Solve with cyipopt (hessgrad's Ipopt build) fed CasADi's derivatives (moved by a
    rounding unit each, at random, with ``ulps=seed``)."""
    import cyipopt
    cb = CasadiCallbacks(problem, ulps)
    nlp = cyipopt.Problem(n=problem.n, m=problem.m, problem_obj=cb, lb=_bounds(problem.lb),
                          ub=_bounds(problem.ub), cl=_bounds(problem.cl),
                          cu=_bounds(problem.cu))
    opts = {"print_level": 0, "sb": "yes", "tol": 1e-8, "mu_strategy": "adaptive"}
    opts.update(options or {})
    for k, v in opts.items():
        nlp.add_option(k, v)
    start = time.perf_counter()
    x, info = nlp.solve(problem.x0)
    return {"x": x, "f": float(info["obj_val"]), "nit": cb.nit, "status": info["status"],
            "setup": cb.setup, "solve": time.perf_counter() - start,
            "eval_time": cb.eval_time}
