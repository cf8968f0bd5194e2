"""IPOPT with exact sparse derivatives: constrained optimization of numpy-style functions.

:func:`minimize` (also named :func:`minimize_ipopt`, cyipopt's name) solves

    min f(x)  subject to  cl <= c(x) <= cu,  lb <= x <= ub

with IPOPT (through cyipopt, an optional extra: ``pip install 'hessgrad[ipopt]'``), handing
it what CasADi hands it: the objective, its gradient, the constraint values, the sparse
constraint Jacobian in a fixed (row, col) structure, and the lower triangle of the sparse
Hessian of the Lagrangian ``L(x; sigma, lam) = sigma * f(x) + lam @ c(x)``.

How the derivatives are computed (all of it once per solve, before IPOPT starts):

* the nonlinear constraints are concatenated into one function ``C(x)``; the pattern of its
  Jacobian is read off the traced graph, its columns (or rows) colored, and every Jacobian
  is one batched run of JVPs (or VJPs) with one seed per color (:class:`SparseJacobian`);
* the Lagrangian is one scalar function of ``x`` with ``sigma`` and ``lam`` as further
  arguments. The sparsity detection treats arguments as data of unknown value, so one
  pattern and one star coloring serve every multiplier, and every Hessian is one batched
  run of Hessian-vector products of ``L`` (:class:`SparseHessian`), not a Hessian per
  constraint; its lower triangle is gathered in IPOPT's fixed order;
* linear constraints (``LinearConstraint``) enter with their matrix: a constant Jacobian
  and no Hessian; bounds go to IPOPT as bounds.

IPOPT asks for ``f``, ``c``, the gradient, the Jacobian and the Hessian at the same point:
``f`` and ``c`` come from one run of one traced program (a trial point of the line search
costs one run), and each result is kept until IPOPT moves to another point.

What is captured when: the user's functions are traced (as ``hessgrad.function`` traces)
when the solve starts, at ``x0``; what they read from outside their arguments (globals,
closures, attributes, data arrays) is baked into these traces and trusted for the rest of
that solve, since nothing the user wrote can change while IPOPT runs. A new call of
:func:`minimize` traces afresh, so a changed global is seen by the next solve. Pass data
that should vary between solves as ``args`` or read it from globals; both are fine.
"""

import time

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, NonlinearConstraint, OptimizeResult

from . import numpy as _hnp
from .tracing.function import function as _function
from .scipy import Constraint
from .sparse import SparseHessian, SparseJacobian
from .transforms import grad as _grad

INSTALL = "pip install 'hessgrad[ipopt]'"
# IPOPT's bounds at or beyond +-1e19 mean "no bound" (its nlp_upper_bound_inf).
INF = 1e19


def _cyipopt():
    try:
        import cyipopt
    except ImportError as exc:
        raise ImportError(
            "hessgrad.ipopt.minimize needs cyipopt, which is not installed: "
            f"{INSTALL} installs it (the PyPI package cyipopt-wheels, Ipopt included; "
            "a cyipopt built against your own Ipopt works too)") from exc
    return cyipopt


def available():
    """Whether cyipopt can be imported (the ``[ipopt]`` extra is installed).

    Returns:
        bool.

    >>> isinstance(available(), bool)
    True
    """
    try:
        _cyipopt()
    except ImportError:
        return False
    return True


# --- constraints as SciPy states them -------------------------------------------------------
class _Group:
    """One entry of ``constraints``: ``kind`` "nonlinear" (``fun(x, *args)``) or "linear"
    (matrix ``A``), bounds ``lb``/``ub`` as given (sized once ``m`` is known)."""

    def __init__(self, kind, index, lb, ub, fun=None, args=(), A=None):
        self.kind, self.index, self.fun, self.args, self.A = kind, index, fun, args, A
        self.lb, self.ub = lb, ub
        self.m = None if A is None else A.shape[0]
        self.rows = None  # this group's rows of the stacked constraint vector


def _groups(constraints, n):
    if isinstance(constraints, (dict, NonlinearConstraint, LinearConstraint)):
        constraints = [constraints]
    try:
        constraints = list(constraints)
    except TypeError:
        raise TypeError("minimize: constraints must be a dict, a NonlinearConstraint, a "
                        "LinearConstraint or a sequence of them, got "
                        f"{type(constraints).__name__}") from None
    groups = []
    for i, con in enumerate(constraints):
        what = f"minimize: constraints[{i}]"
        if isinstance(con, dict):
            kind = con.get("type")
            if kind not in ("eq", "ineq"):
                raise ValueError(f"{what}['type'] must be 'eq' or 'ineq', got {kind!r}")
            fun = con.get("fun")
            if not callable(fun):
                raise TypeError(f"{what}['fun'] must be callable, got {type(fun).__name__}")
            args = con.get("args", ())
            args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
            # SciPy's convention: 'eq' is c(x) == 0, 'ineq' is c(x) >= 0
            groups.append(_Group("nonlinear", i, 0.0, 0.0 if kind == "eq" else np.inf,
                                 fun=fun, args=args))
        elif isinstance(con, Constraint):
            groups.append(_Group("nonlinear", i, con.lb, con.ub, fun=con.function))
        elif isinstance(con, NonlinearConstraint):
            if not callable(con.fun):
                raise TypeError(f"{what}.fun must be callable, got {type(con.fun).__name__}")
            groups.append(_Group("nonlinear", i, con.lb, con.ub, fun=con.fun))
        elif isinstance(con, LinearConstraint):
            A = sp.csr_matrix(sp.csr_matrix(np.atleast_2d(con.A) if not sp.issparse(con.A)
                                            else con.A), dtype=np.float64)
            if A.shape[1] != n:
                raise ValueError(f"{what}: A has shape {A.shape}, expected {n} columns "
                                 f"(x0 has {n} entries)")
            A.eliminate_zeros()
            A.sort_indices()
            groups.append(_Group("linear", i, con.lb, con.ub, A=A))
        else:
            raise TypeError(f"{what} must be a dict, a NonlinearConstraint or a "
                            f"LinearConstraint, got {type(con).__name__}")
    return groups


def _sized(value, m, what):
    value = np.asarray(value, dtype=np.float64)
    try:
        return np.array(np.broadcast_to(value, (m,)))
    except ValueError:
        raise ValueError(f"{what} has shape {value.shape}, which does not broadcast to the "
                         f"constraint's {m} values") from None


def _bounds(bounds, n):
    if bounds is None:
        return np.full(n, -np.inf), np.full(n, np.inf)
    if isinstance(bounds, Bounds):
        lb, ub = bounds.lb, bounds.ub
    else:
        pairs = np.array(bounds, dtype=object)
        if pairs.ndim != 2 or pairs.shape[1] != 2:
            raise ValueError("minimize: bounds must be a scipy.optimize.Bounds or a sequence "
                             f"of (min, max) pairs, one per variable; got shape {pairs.shape}")
        pairs = np.where(pairs == None, np.nan, pairs).astype(np.float64)  # noqa: E711
        lb = np.where(np.isnan(pairs[:, 0]), -np.inf, pairs[:, 0])
        ub = np.where(np.isnan(pairs[:, 1]), np.inf, pairs[:, 1])
    lb, ub = np.asarray(lb, dtype=np.float64), np.asarray(ub, dtype=np.float64)
    try:
        lb, ub = np.broadcast_to(lb, (n,)).copy(), np.broadcast_to(ub, (n,)).copy()
    except ValueError:
        raise ValueError(f"minimize: bounds have shapes {lb.shape} and {ub.shape}, which do "
                         f"not broadcast to x0's {n} entries") from None
    return lb, ub


def _noted(what):
    """A context adding ``what`` to an exception raised while tracing a user's function."""
    class _Note:
        def __enter__(self):
            return self

        def __exit__(self, kind, exc, tb):
            if exc is not None and hasattr(exc, "add_note"):
                exc.add_note(f"(hessgrad.ipopt: raised while {what})")
            return False
    return _Note()


# --- the problem as IPOPT sees it -----------------------------------------------------------
class NLP:
    """The callbacks cyipopt calls (``objective``, ``gradient``, ``constraints``,
    ``jacobian``, ``jacobianstructure``, ``hessian``, ``hessianstructure``,
    ``intermediate``), with exact sparse derivatives. Built by :func:`nlp`; usable without
    cyipopt (the derivatives are hessgrad's), e.g. to check them or to drive another
    solver.

    Attributes:
        n, m: the numbers of variables and constraints (all of them, stacked in the order
            of ``constraints``).
        lb, ub: variable bounds; cl, cu: constraint bounds (``-inf``/``inf``: none).
        jacobian_sparsity, hessian_sparsity: the :class:`hessgrad.SparseJacobian` of the
            stacked nonlinear constraints and the :class:`hessgrad.SparseHessian` of the
            Lagrangian (``.info(x0, ...)``: patterns and colors), or None when absent.
        setup_time: seconds spent tracing, detecting, coloring and compiling (at ``x0``).
        eval_time, ncalls: per callback (``"objective"``, ``"constraints"``,
            ``"gradient"``, ``"jacobian"``, ``"hessian"``) the seconds spent and the calls.
        nit: the last iteration IPOPT reported (``intermediate``).
    """

    KINDS = ("objective", "constraints", "gradient", "jacobian", "hessian")

    def __init__(self, fun, x0, args=(), kwargs=None, constraints=(), bounds=None, *,
                 jit_kernels=False):
        if not callable(fun):
            raise TypeError(f"minimize: fun must be callable, got {type(fun).__name__}")
        x0 = np.asarray(x0)
        if x0.dtype.kind not in "fiub":
            raise TypeError(f"minimize: x0 must be a real array, got dtype {x0.dtype} "
                            f"(shape {x0.shape})")
        x0 = np.atleast_1d(x0).astype(np.float64)
        if x0.ndim != 1:
            raise ValueError(f"minimize: x0 must be 1-D, got shape {x0.shape}")
        self.n = n = x0.size
        self.x0 = x0
        args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
        kwargs = dict(kwargs or {})
        self.lb, self.ub = _bounds(bounds, n)
        groups = _groups(constraints, n)
        nonlinear = [g for g in groups if g.kind == "nonlinear"]
        self.eval_time = dict.fromkeys(self.KINDS, 0.0)
        self.ncalls = dict.fromkeys(self.KINDS, 0)
        self.nit = 0
        self.iterations = []  # (iteration, objective, inf_pr, inf_du) per IPOPT iteration
        start = time.perf_counter()

        def f(x):
            y = fun(x, *args, **kwargs)
            shape = getattr(y, "shape", None)
            shape = np.shape(y) if shape is None else shape
            if None not in shape and int(np.prod(shape, dtype=np.int64)) != 1:
                raise ValueError(f"minimize: fun must return a scalar, got shape {shape}")
            return _hnp.reshape(y, ())

        sizes = []

        def C(x):
            parts = [_hnp.ravel(g.fun(x, *g.args)) for g in nonlinear]
            sizes[:] = [int(np.prod(p.shape, dtype=np.int64)) for p in parts]  # as traced
            return _hnp.concatenate(parts)

        # f and C at one point: one program (a line search's trial point is one run)
        with _noted("tracing fun and the constraints at x0"):
            if nonlinear:
                self._values = _function(lambda x: (f(x), C(x)), jit_kernels=jit_kernels)
                self._values(x0)
            else:
                self._values = _function(f, jit_kernels=jit_kernels)
                self._values(x0)
        for g, size in zip(nonlinear, sizes):
            g.m = size
        offset = 0
        for g in groups:
            g.rows = np.arange(offset, offset + g.m)
            offset += g.m
        self.m = m = offset
        self.groups = groups
        self.cl, self.cu = np.empty(m), np.empty(m)
        for g in groups:
            what = f"minimize: constraints[{g.index}]"
            self.cl[g.rows] = _sized(g.lb, g.m, f"{what}: lb")
            self.cu[g.rows] = _sized(g.ub, g.m, f"{what}: ub")
        self._nl_rows = np.concatenate([g.rows for g in nonlinear] + [np.zeros(0, int)])
        self._linear = [g for g in groups if g.kind == "linear"]

        with _noted("tracing the gradient of fun"):
            self._grad = _function(_grad(f), jit_kernels=jit_kernels)
            self._grad(x0)

        # the Jacobian: the nonlinear constraints' colored products, then the linear rows
        rows, cols = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
        self.jacobian_sparsity = None
        if nonlinear:
            with _noted("detecting the constraints' Jacobian pattern"):
                self.jacobian_sparsity = SparseJacobian(_function(C), jit_kernels=jit_kernels)
                r, c = self.jacobian_sparsity.structure(x0)
                self.jacobian_sparsity.values(x0)
            rows.append(self._nl_rows[r])
            cols.append(c)
        lin_data = [np.zeros(0)]
        for g in self._linear:
            coo = g.A.tocoo()
            rows.append(g.rows[coo.row].astype(np.int64))
            cols.append(coo.col.astype(np.int64))
            lin_data.append(coo.data)
        self._jac_rows, self._jac_cols = np.concatenate(rows), np.concatenate(cols)
        self._lin_data = np.concatenate(lin_data)
        self._nl_nnz = len(self._jac_rows) - len(self._lin_data)
        self._linear_A = (sp.vstack([g.A for g in self._linear], format="csr")
                          if self._linear else None)
        self._linear_rows = np.concatenate([g.rows for g in self._linear] +
                                           [np.zeros(0, int)])

        # the Lagrangian's Hessian: one pattern and coloring for every sigma and lambda
        if nonlinear:
            def lagrangian(x, sigma, lam):
                return sigma * f(x) + _hnp.sum(lam * C(x))
            self._multipliers = (np.ones(()), np.ones(len(self._nl_rows)))
        else:
            def lagrangian(x, sigma):
                return sigma * f(x)
            self._multipliers = (np.ones(()),)
        with _noted("detecting the Lagrangian's Hessian pattern"):
            # colored products even for a dense pattern (then one color per variable): the
            # same batched product, compiled as jit_kernels says
            self.hessian_sparsity = SparseHessian(_function(lagrangian), dense_threshold=1.0,
                                                  jit_kernels=jit_kernels)
            self._hess_rows, self._hess_cols = self.hessian_sparsity.structure(
                x0, *self._multipliers, triangle="lower")
            self.hessian_sparsity.values(x0, *self._multipliers, triangle="lower")
        self.setup_time = time.perf_counter() - start
        self._x = None
        self._at = {}

    # --- the point IPOPT asks about ---------------------------------------------------------
    def _point(self, x):
        """The results kept at ``x`` (a dict, emptied when ``x`` changes)."""
        if self._x is None or not np.array_equal(self._x, x):
            self._x = np.array(x, dtype=np.float64)
            self._at = {}
        return self._at

    def _values_at(self, x):
        at = self._point(x)
        if "f" not in at:
            if len(self._multipliers) == 2:
                value, c = self._values(self._x)
            else:
                value, c = self._values(self._x), None
            at["f"] = float(np.asarray(value).reshape(()))
            g = np.empty(self.m)
            if c is not None:
                g[self._nl_rows] = np.asarray(c).reshape(-1)
            if self._linear_A is not None:
                g[self._linear_rows] = self._linear_A @ self._x
            at["c"] = g
        return at

    def _timed(self, kind, start):
        self.eval_time[kind] += time.perf_counter() - start
        self.ncalls[kind] += 1

    # --- cyipopt's callbacks ------------------------------------------------------------------
    def objective(self, x):
        """``f(x)``."""
        start = time.perf_counter()
        value = self._values_at(x)["f"]
        self._timed("objective", start)
        return value

    def constraints(self, x):
        """``c(x)``, all constraints stacked in the order given."""
        start = time.perf_counter()
        value = self._values_at(x)["c"].copy()
        self._timed("constraints", start)
        return value

    def gradient(self, x):
        """The gradient of ``f`` at ``x``."""
        start = time.perf_counter()
        at = self._point(x)
        if "grad" not in at:
            at["grad"] = np.asarray(self._grad(self._x), dtype=np.float64).reshape(-1)
        value = at["grad"].copy()
        self._timed("gradient", start)
        return value

    def jacobianstructure(self):
        """``(rows, cols)`` of the constraint Jacobian's entries (fixed for the solve)."""
        return self._jac_rows, self._jac_cols

    def jacobian(self, x):
        """The Jacobian's entries at ``x`` in the order of :meth:`jacobianstructure`."""
        start = time.perf_counter()
        at = self._point(x)
        if "jac" not in at:
            out = np.empty(len(self._jac_rows))
            if self._nl_nnz:
                out[:self._nl_nnz] = self.jacobian_sparsity.values(self._x)
            out[self._nl_nnz:] = self._lin_data
            at["jac"] = out
        value = at["jac"].copy()
        self._timed("jacobian", start)
        return value

    def hessianstructure(self):
        """``(rows, cols)``, ``rows >= cols``: the lower triangle of the Lagrangian's
        Hessian (fixed for the solve)."""
        return self._hess_rows, self._hess_cols

    def hessian(self, x, lagrange, obj_factor):
        """The lower triangle of the Hessian of ``obj_factor * f(x) + lagrange @ c(x)`` in
        the order of :meth:`hessianstructure` (linear constraints contribute nothing)."""
        start = time.perf_counter()
        self._point(x)
        sigma = np.asarray(obj_factor, dtype=np.float64).reshape(())
        if len(self._multipliers) == 2:
            lam = np.asarray(lagrange, dtype=np.float64).reshape(-1)[self._nl_rows]
            value = self.hessian_sparsity.values(self._x, sigma, lam, triangle="lower")
        else:
            value = self.hessian_sparsity.values(self._x, sigma, triangle="lower")
        self._timed("hessian", start)
        return value

    def intermediate(self, alg_mod, iter_count, obj_value, inf_pr, inf_du, mu, d_norm,
                     regularization_size, alpha_du, alpha_pr, ls_trials):
        self.nit = int(iter_count)
        self.iterations.append((int(iter_count), float(obj_value), float(inf_pr),
                                float(inf_du)))
        return True

    # --- for checks ---------------------------------------------------------------------------
    def jacobian_matrix(self, x):
        """The constraint Jacobian at ``x`` as an ``(m, n)`` CSR matrix."""
        return sp.csr_matrix((self.jacobian(x), (self._jac_rows, self._jac_cols)),
                             shape=(self.m, self.n))

    def hessian_matrix(self, x, lagrange, obj_factor=1.0):
        """The full (symmetric) Hessian of the Lagrangian at ``x`` as a CSR matrix."""
        low = sp.csr_matrix((self.hessian(x, lagrange, obj_factor),
                             (self._hess_rows, self._hess_cols)), shape=(self.n, self.n))
        return sp.csr_matrix(low + sp.triu(low.T, k=1))

    def info(self):
        """Sizes, nonzeros and colors of the derivatives (a dict)."""
        out = {"n": self.n, "m": self.m, "jac_nnz": len(self._jac_rows),
               "hess_nnz": len(self._hess_rows), "jac_colors": 0, "jac_lower_bound": 0,
               "jac_mode": None, "hess_colors": 0, "hess_max_row_nnz": 0,
               "hess_density": 0.0}
        if self.jacobian_sparsity is not None:
            j = self.jacobian_sparsity.info(self.x0)
            out.update(jac_colors=j["ncolors"], jac_lower_bound=j["lower_bound"],
                       jac_mode=j["mode"])
        h = self.hessian_sparsity.info(self.x0, *self._multipliers)
        out.update(hess_colors=h["ncolors"], hess_max_row_nnz=h["max_row_nnz"],
                   hess_density=h["density"])
        return out


def nlp(fun, x0, args=(), kwargs=None, constraints=(), bounds=None, *, jit_kernels=False):
    """The problem that :func:`minimize` hands IPOPT, as an :class:`NLP` of callbacks with
    exact sparse derivatives (traced, detected, colored and compiled now, at ``x0``).

    Args: as :func:`minimize`'s.
    Returns:
        An :class:`NLP`.
    Raises:
        TypeError, ValueError: as :func:`minimize`.

    >>> import hessgrad.numpy as hnp
    >>> from hessgrad.ipopt import nlp
    >>> p = nlp(lambda x: hnp.sum(x ** 2), np.ones(3),
    ...         constraints=[{"type": "eq", "fun": lambda x: x[1:] * x[:-1] - 1.0}])
    >>> p.n, p.m, p.jacobianstructure()[0].tolist(), p.jacobianstructure()[1].tolist()
    (3, 2, [0, 0, 1, 1], [0, 1, 1, 2])
    >>> p.jacobian(np.array([1.0, 2.0, 3.0]))
    array([2., 1., 3., 2.])
    >>> p.hessian_matrix(np.zeros(3), lagrange=np.array([1.0, 1.0])).toarray()
    array([[2., 1., 0.],
           [1., 2., 1.],
           [0., 1., 2.]])
    """
    return NLP(fun, x0, args=args, kwargs=kwargs, constraints=constraints, bounds=bounds,
               jit_kernels=jit_kernels)


def _options(options, tol):
    options = dict(options or {})
    for old, new in (("disp", "print_level"), ("maxiter", "max_iter")):
        if old in options:
            options[new] = options.pop(old)
    options["print_level"] = int(options.get("print_level", 0))
    if tol is not None:
        tol = float(tol)
        if not tol > 0:
            raise ValueError(f"minimize: tol must be positive, got {tol!r}")
        options["tol"] = tol
    options.setdefault("tol", 1e-8)
    options.setdefault("mu_strategy", "adaptive")
    if options["print_level"] == 0:
        options.setdefault("sb", "yes")  # no banner either
    return options


def minimize(fun, x0, args=(), kwargs=None, method=None, jac=None, hess=None, hessp=None,
             bounds=None, constraints=(), tol=None, callback=None, options=None, *,
             jit_kernels=False):
    """Minimize ``fun`` subject to constraints and bounds with IPOPT, with exact sparse
    derivatives from hessgrad (cyipopt's ``minimize_ipopt`` without derivative arguments).

    The gradient, the sparse constraint Jacobian and the sparse Hessian of the Lagrangian
    are computed by hessgrad (see the module's documentation: one colored computation for
    the Hessian of ``sigma * f + lam @ c``, whatever the number of constraints). Everything
    the functions read from outside their arguments is traced at ``x0`` when the solve
    starts and trusted until it ends; the next call traces afresh.

    Args:
        fun: ``fun(x, *args, **kwargs)``, a scalar function written with
            ``hessgrad.numpy``.
        x0: the starting point, a 1-D array (integers are converted to float).
        args, kwargs: further arguments of ``fun`` (not of the constraints).
        method, jac, hess, hessp: for cyipopt's signature only: must be None (the
            derivatives are hessgrad's, the method is IPOPT).
        bounds: None, a ``scipy.optimize.Bounds``, or a sequence of ``(min, max)`` pairs
            (None: no bound), one per variable.
        constraints: a constraint or a sequence of them: SciPy's dicts
            (``{"type": "eq" | "ineq", "fun": c, "args": (...)}``, with ``c(x) == 0`` or
            ``c(x) >= 0``; a ``"jac"`` entry is ignored), ``NonlinearConstraint(c, lb,
            ub)`` (its ``jac`` and ``hess`` are ignored), :func:`hessgrad.scipy.constraint`
            objects, and ``LinearConstraint(A, lb, ub)`` (dense or sparse ``A``). ``c``
            may return an array of any shape (flattened) or a scalar.
        tol: IPOPT's ``tol`` (default 1e-8).
        callback: not supported (IPOPT reports iterations to hessgrad: see ``nit`` and
            ``iterations`` of the result); must be None.
        options: IPOPT options by name (``{"max_iter": 200, "print_level": 5, ...}``;
            ``disp`` and ``maxiter`` are read as ``print_level`` and ``max_iter``).
            Defaults as cyipopt's ``minimize_ipopt``: ``tol=1e-8``,
            ``mu_strategy="adaptive"``, ``print_level=0``.
        jit_kernels: compile the derivative programs with fused Numba kernels. They are
            compiled for each problem size (10-20 s for a few thousand variables, then
            cached on disk) and save about a millisecond per evaluation at 10^4 variables,
            so they pay off for many solves at one size; the default compiles without
            them (a second or less).

    Returns:
        A ``scipy.optimize.OptimizeResult``: ``x``, ``fun``, ``success`` (IPOPT's status
        0), ``status``, ``message``, ``nit``, ``nfev``, ``njev``, ``nhev``, ``jac`` (the
        gradient at ``x``), ``mult_g`` (the constraint multipliers, stacked in the order of
        ``constraints``; with IPOPT's and SciPy's sign, ``grad f + J^T mult_g - mult_x_L +
        mult_x_U = 0``), ``mult_x_L``, ``mult_x_U`` (bound multipliers), ``v`` and
        ``constr`` (per constraint, its multipliers and values, as ``trust-constr``
        returns them), ``info`` (cyipopt's dict), ``iterations`` (per iteration: number,
        objective, primal and dual infeasibility), ``setup_time`` (seconds of tracing,
        detection, coloring, compiling), ``eval_time`` and ``ncalls`` (per callback), and
        ``sparsity`` (nonzeros and colors of the Jacobian and Hessian).

    Raises:
        ImportError: cyipopt is not installed (the message says ``pip install
            'hessgrad[ipopt]'``).
        TypeError: ``fun`` or a constraint's function is not callable, a constraint is not
            one of the accepted kinds, or a derivative/method/callback argument was given.
        ValueError: ``x0`` is not 1-D, ``fun`` is not scalar, bounds or constraint bounds
            do not fit, a dict's ``type`` is unknown, ``tol`` is not positive.

    >>> import hessgrad.numpy as hnp
    >>> from hessgrad.ipopt import minimize
    >>> def f(x):                                       # Hock-Schittkowski problem 71
    ...     return x[0] * x[3] * (x[0] + x[1] + x[2]) + x[2]
    >>> cons = [{"type": "ineq", "fun": lambda x: hnp.prod(x) - 25.0},
    ...         {"type": "eq", "fun": lambda x: hnp.sum(x ** 2) - 40.0}]
    >>> res = minimize(f, [1, 5, 5, 1], bounds=[(1, 5)] * 4, constraints=cons)
    >>> res.success, round(res.fun, 6), res.nit
    (True, 17.014017, 8)
    >>> np.round(res.x, 4)
    array([1.    , 4.743 , 3.8211, 1.3794])
    """
    for name, value in (("method", method), ("jac", jac), ("hess", hess), ("hessp", hessp)):
        if value is not None:
            raise TypeError(f"minimize: {name}= is not supported: hessgrad computes the "
                            "exact derivatives and the method is IPOPT; leave it None")
    if callback is not None:
        raise TypeError("minimize: callback= is not supported (IPOPT's iterations are in "
                        "the result's nit and iterations); leave it None")
    cyipopt = _cyipopt()
    options = _options(options, tol)
    problem = NLP(fun, x0, args=args, kwargs=kwargs, constraints=constraints, bounds=bounds,
                  jit_kernels=jit_kernels)
    ipopt = cyipopt.Problem(n=problem.n, m=problem.m, problem_obj=problem,
                            lb=np.clip(problem.lb, -INF, INF), ub=np.clip(problem.ub, -INF, INF),
                            cl=np.clip(problem.cl, -INF, INF), cu=np.clip(problem.cu, -INF, INF))
    for name, value in options.items():
        try:
            ipopt.add_option(name, value)
        except TypeError as exc:
            raise TypeError(f"minimize: IPOPT refused option {name}={value!r}: {exc}") \
                from None
    start = time.perf_counter()
    x, info = ipopt.solve(problem.x0)
    solve_time = time.perf_counter() - start
    return _result(problem, x, info, solve_time)


minimize_ipopt = minimize


def _result(problem, x, info, solve_time):
    message = info["status_msg"]
    if isinstance(message, bytes):
        message = message.decode()
    mult_g = np.asarray(info["mult_g"], dtype=np.float64)
    g = np.asarray(info["g"], dtype=np.float64)
    gradient = np.asarray(problem._grad(np.asarray(x, dtype=np.float64)), dtype=np.float64)
    return OptimizeResult(
        x=x, fun=float(info["obj_val"]), success=info["status"] == 0,
        status=info["status"], message=message, nit=problem.nit,
        nfev=problem.ncalls["objective"], njev=problem.ncalls["gradient"],
        nhev=problem.ncalls["hessian"], jac=gradient.reshape(-1), mult_g=mult_g,
        mult_x_L=np.asarray(info["mult_x_L"]), mult_x_U=np.asarray(info["mult_x_U"]),
        v=[mult_g[grp.rows] for grp in problem.groups],
        constr=[g[grp.rows] for grp in problem.groups], info=info,
        iterations=problem.iterations, setup_time=problem.setup_time,
        solve_time=solve_time, eval_time=dict(problem.eval_time),
        ncalls=dict(problem.ncalls), sparsity=problem.info())
