"""Constrained test problems with known optima, written once in numpy style.

``min f(x)  subject to  cl <= c(x) <= cu,  lb <= x <= ub``: Hock-Schittkowski problems (the
classic small nonlinear programs, with their published optima), and scalable structured
problems from optimal control, PDE-constrained optimization, mechanics and finance (COPS,
MINPACK-2 and CasADi's examples), where the sparse Jacobian and the sparse Hessian of the
Lagrangian matter. Every problem is written once against an array namespace ``xp``
(``hessgrad.numpy`` here; the benchmark passes a CasADi shim) with a small vocabulary: slices
(also of 2-D grids) and integer-array indexing, arithmetic, ``xp.sum``, ``xp.sqrt``,
``xp.exp``, ``xp.log``, ``xp.sin``, ``xp.cos``, ``xp.stack`` (of scalars),
``xp.concatenate`` (of vectors), ``xp.reshape`` (row-major), ``xp.pad(a, 1)`` (zeros), and
``const(array)`` for array constants.

Known optima (``minimum``) and where they come from (``source``):

* Hock-Schittkowski: the optima published in Hock & Schittkowski, *Test Examples for
  Nonlinear Programming Codes* (1981) / Schittkowski's collection;
* ``hanging_chain`` (a discrete catenary), ``lq_control`` (linear-quadratic control, a
  sparse KKT solve) and ``portfolio`` (the efficient frontier in closed form): computed here
  independently of any optimizer;
* ``thomson``: the known minimal energies of ``N`` unit charges on a sphere;
* ``goddard``: the optimum reported by COPS 3.0 for the same discretisation (5 digits);
* the other structured problems at their default size: the optimum computed with CasADi's
  own derivatives and IPOPT (``minsurf`` and ``torsion`` also with SciPy's L-BFGS-B), stored;
  at other sizes ``minimum`` is None.

>>> from hessgrad import problems_constrained as pc
>>> p = pc.get("hs071")
>>> p.n, p.m, p.minimum
(4, 2, 17.0140173)
>>> float(p.fun(p.x0)), p.constraint(p.x0).numpy().tolist()
(16.0, [25.0, 52.0])
>>> len(pc.names()) >= 25
True
"""

import numbers
from dataclasses import dataclass, field

import numpy as np

__all__ = ["ConstrainedProblem", "get", "names", "describe"]


@dataclass(frozen=True, eq=False)
class ConstrainedProblem:
    """A constrained problem ``min f(x) s.t. cl <= c(x) <= cu, lb <= x <= ub``.

    Attributes:
        name, description: registry name and one line.
        fun: scalar ``f(x)`` of a flat float64 vector, written with ``hessgrad.numpy``.
        constraint: ``c(x)`` returning a 1-D array of ``m`` values (None when ``m == 0``).
        x0: the starting point, shape ``(n,)``.
        n, m: numbers of variables and constraints.
        lb, ub: variable bounds (``-inf``/``inf``: none); cl, cu: constraint bounds
            (``cl == cu``: an equality).
        minimum: the known optimal value, or None; minimizer: a known solution, or None.
        rtol: how accurately ``minimum`` is known, relative to ``max(1, |minimum|)`` (the
            published digits; a solver at IPOPT's ``tol=1e-8`` gets within about 1e-7).
        source: where ``minimum`` comes from.
        family: "hock-schittkowski", "optimal control", "pde", "mechanics", "finance" or
            "geometry".
        builder: ``builder(xp, const) -> (f, c)``: the problem written with namespace
            ``xp`` (``const`` converts a numpy constant for it).
        size: the problem's size parameter (intervals, grid points, links, ...).
    """

    name: str
    description: str
    fun: object
    constraint: object
    x0: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    cl: np.ndarray
    cu: np.ndarray
    minimum: object = None
    minimizer: object = None
    rtol: float = 1e-6
    source: str = ""
    family: str = ""
    builder: object = None
    size: object = None
    data: dict = field(default_factory=dict)

    @property
    def n(self):
        return int(self.x0.size)

    @property
    def m(self):
        return int(self.cl.size)

    @property
    def bounds(self):
        """The variable bounds as a ``scipy.optimize.Bounds``."""
        from scipy.optimize import Bounds
        return Bounds(self.lb, self.ub)

    @property
    def constraints(self):
        """``[NonlinearConstraint(constraint, cl, cu)]`` (empty when ``m == 0``), for
        :func:`hessgrad.ipopt.minimize` (for SciPy's ``minimize``, which evaluates the
        constraint itself, use ``hessgrad.scipy.constraint(p.constraint, p.cl, p.cu)``)."""
        from scipy.optimize import NonlinearConstraint
        if self.constraint is None:
            return []
        return [NonlinearConstraint(self.constraint, self.cl, self.cu)]

    def fun_for(self, xp, const=None):
        """``(f, c)`` written with another numpy-like namespace (for benchmarks)."""
        return self.builder(xp, const if const is not None else (lambda a: a))

    def __repr__(self):
        return f"ConstrainedProblem({self.name!r}, n={self.n}, m={self.m})"


_REGISTRY = {}


def _register(name, default_n, description, family):
    def deco(make):
        _REGISTRY[name] = (make, default_n, description, family)
        return make
    return deco


def names(family=None):
    """Sorted names of the constrained problems (of one ``family`` if given).

    >>> names("mechanics")
    ['hanging_chain']
    """
    return sorted(k for k, v in _REGISTRY.items() if family is None or v[3] == family)


def describe():
    """``{name: (default n or None for a fixed size, family, description)}``.

    >>> describe()["goddard"][:2]
    (405, 'optimal control')
    """
    return {k: (v[1], v[3], v[2]) for k, v in sorted(_REGISTRY.items())}


def get(name, n=None):
    """Build the constrained problem ``name``.

    Args:
        name: one of :func:`names`.
        n: the approximate number of variables of a scalable problem (its discretisation
            is chosen to come close; ``p.n`` is the exact number); None for the default.
            Hock-Schittkowski problems have a fixed size: ``n`` must be None or theirs.
    Returns:
        :class:`ConstrainedProblem`.
    Raises:
        KeyError: unknown name (the message lists the known ones).
        ValueError: a bad ``n``.

    >>> get("hanging_chain", n=40).n
    40
    >>> get("hs999")
    Traceback (most recent call last):
    ...
    KeyError: "unknown constrained problem 'hs999'; see problems_constrained.names()"
    """
    if not isinstance(name, str) or name not in _REGISTRY:
        raise KeyError(f"unknown constrained problem {name!r}; see "
                       "problems_constrained.names()")
    make, default_n, _, _ = _REGISTRY[name]
    if n is not None and (isinstance(n, bool) or not isinstance(n, numbers.Integral)):
        raise ValueError(f"problems_constrained.get({name!r}): n must be an int or None, "
                         f"got {n!r}")
    if default_n is None:
        if n is not None:
            raise ValueError(f"problems_constrained.get({name!r}): this problem has a fixed "
                             f"size; n must be None, got {n}")
        return make()
    return make(default_n if n is None else int(n))


def _identity(a):
    return a


def _finish(name, builder, x0, lb=None, ub=None, cl=(), cu=(), **facts):
    from . import numpy as hnp

    x0 = np.asarray(x0, np.float64)
    n = x0.size
    fun, constraint = builder(hnp, _identity)
    make, _, description, family = _REGISTRY[name]

    def full(v, fill):
        return np.full(n, fill) if v is None else \
            np.array(np.broadcast_to(np.asarray(v, np.float64), (n,)))
    return ConstrainedProblem(
        name=name, description=facts.pop("description", description), fun=fun,
        constraint=constraint if len(cl) else None, x0=x0, lb=full(lb, -np.inf),
        ub=full(ub, np.inf), cl=np.asarray(cl, np.float64), cu=np.asarray(cu, np.float64),
        family=family, builder=builder, **facts)


def _hs(number, x0, f, c=None, cl=(), cu=(), lb=None, ub=None, minimum=None, x_star=None,
        rtol=1e-8):
    """Register Hock-Schittkowski problem ``number``: ``f(xp, x)``, ``c(xp, x)`` a list of
    scalar constraints."""
    name = f"hs{number:03d}"

    def builder(xp, const):
        def fun(x):
            return f(xp, x)

        def constraint(x):
            return xp.stack(c(xp, x))
        return fun, (constraint if c is not None else None)

    def make():
        return _finish(name, builder, x0, lb, ub, cl, cu, minimum=minimum,
                       minimizer=None if x_star is None else np.asarray(x_star, float),
                       rtol=rtol, source="Hock & Schittkowski (1981), problem "
                                         f"{number}")
    _register(name, None, f"Hock-Schittkowski problem {number}", "hock-schittkowski")(make)


INF = np.inf
SQ2 = np.sqrt(2.0)

# --------------------------------------------------------------------- Hock-Schittkowski
_hs(6, [-1.2, 1.0], lambda xp, x: (1 - x[0]) ** 2,
    lambda xp, x: [10 * (x[1] - x[0] ** 2)], [0], [0], minimum=0.0, x_star=[1, 1])
_hs(7, [2.0, 2.0], lambda xp, x: xp.log(1 + x[0] ** 2) - x[1],
    lambda xp, x: [(1 + x[0] ** 2) ** 2 + x[1] ** 2 - 4], [0], [0],
    minimum=-np.sqrt(3.0), x_star=[0, np.sqrt(3.0)])
_hs(10, [-10.0, 10.0], lambda xp, x: x[0] - x[1],
    lambda xp, x: [-3 * x[0] ** 2 + 2 * x[0] * x[1] - x[1] ** 2 + 1], [0], [INF],
    minimum=-1.0, x_star=[0, 1])
_hs(11, [4.9, 0.1], lambda xp, x: (x[0] - 5) ** 2 + x[1] ** 2 - 25,
    lambda xp, x: [-x[0] ** 2 + x[1]], [0], [INF], minimum=-8.498464223,
    x_star=[1.234772825053, 1.524663929490])  # x1: the root of 2 x^3 + x - 5
_hs(12, [0.0, 0.0], lambda xp, x: 0.5 * x[0] ** 2 + x[1] ** 2 - x[0] * x[1] - 7 * x[0]
    - 7 * x[1], lambda xp, x: [25 - 4 * x[0] ** 2 - x[1] ** 2], [0], [INF], minimum=-30.0,
    x_star=[2, 3])
_hs(14, [2.0, 2.0], lambda xp, x: (x[0] - 2) ** 2 + (x[1] - 1) ** 2,
    lambda xp, x: [x[0] - 2 * x[1] + 1, -x[0] ** 2 / 4 - x[1] ** 2 + 1], [0, 0], [0, INF],
    minimum=9 - 23 / 8 * np.sqrt(7.0),
    x_star=[(np.sqrt(7.0) - 1) / 2, (np.sqrt(7.0) + 1) / 4])
_hs(15, [-2.0, 1.0], lambda xp, x: 100 * (x[1] - x[0] ** 2) ** 2 + (1 - x[0]) ** 2,
    lambda xp, x: [x[0] * x[1] - 1, x[0] + x[1] ** 2], [0, 0], [INF, INF],
    ub=[0.5, INF], minimum=306.5, x_star=[0.5, 2.0])
_hs(21, [-1.0, -1.0], lambda xp, x: 0.01 * x[0] ** 2 + x[1] ** 2 - 100,
    lambda xp, x: [10 * x[0] - x[1] - 10], [0], [INF], lb=[2, -50], ub=[50, 50],
    minimum=-99.96, x_star=[2, 0])
_hs(28, [-4.0, 1.0, 1.0], lambda xp, x: (x[0] + x[1]) ** 2 + (x[1] + x[2]) ** 2,
    lambda xp, x: [x[0] + 2 * x[1] + 3 * x[2] - 1], [0], [0], minimum=0.0,
    x_star=[0.5, -0.5, 0.5])
_hs(35, [0.5, 0.5, 0.5], lambda xp, x: 9 - 8 * x[0] - 6 * x[1] - 4 * x[2] + 2 * x[0] ** 2
    + 2 * x[1] ** 2 + x[2] ** 2 + 2 * x[0] * x[1] + 2 * x[0] * x[2],
    lambda xp, x: [3 - x[0] - x[1] - 2 * x[2]], [0], [INF], lb=0.0, minimum=1 / 9,
    x_star=[4 / 3, 7 / 9, 4 / 9])
_hs(39, [2.0] * 4, lambda xp, x: -x[0],
    lambda xp, x: [x[1] - x[0] ** 3 - x[2] ** 2, x[0] ** 2 - x[1] - x[3] ** 2], [0, 0],
    [0, 0], minimum=-1.0, x_star=[1, 1, 0, 0])
_hs(40, [0.8] * 4, lambda xp, x: -x[0] * x[1] * x[2] * x[3],
    lambda xp, x: [x[0] ** 3 + x[1] ** 2 - 1, x[0] ** 2 * x[3] - x[2], x[3] ** 2 - x[1]],
    [0] * 3, [0] * 3, minimum=-0.25,
    x_star=[2 ** (-1 / 3), 2 ** (-1 / 2), 2 ** (-11 / 12), 2 ** (-1 / 4)])
_hs(43, [0.0] * 4, lambda xp, x: x[0] ** 2 + x[1] ** 2 + 2 * x[2] ** 2 + x[3] ** 2 - 5 * x[0]
    - 5 * x[1] - 21 * x[2] + 7 * x[3],
    lambda xp, x: [8 - x[0] ** 2 - x[1] ** 2 - x[2] ** 2 - x[3] ** 2 - x[0] + x[1] - x[2]
                   + x[3],
                   10 - x[0] ** 2 - 2 * x[1] ** 2 - x[2] ** 2 - 2 * x[3] ** 2 + x[0] + x[3],
                   5 - 2 * x[0] ** 2 - x[1] ** 2 - x[2] ** 2 - 2 * x[0] + x[1] + x[3]],
    [0] * 3, [INF] * 3, minimum=-44.0, x_star=[0, 1, 2, -1])
_hs(48, [3.0, 5.0, -3.0, 2.0, -2.0],
    lambda xp, x: (x[0] - 1) ** 2 + (x[1] - x[2]) ** 2 + (x[3] - x[4]) ** 2,
    lambda xp, x: [xp.sum(x) - 5, x[2] - 2 * (x[3] + x[4]) + 3], [0, 0], [0, 0],
    minimum=0.0, x_star=[1.0] * 5)
_hs(51, [2.5, 0.5, 2.0, -1.0, 0.5],
    lambda xp, x: (x[0] - x[1]) ** 2 + (x[1] + x[2] - 2) ** 2 + (x[3] - 1) ** 2
    + (x[4] - 1) ** 2,
    lambda xp, x: [x[0] + 3 * x[1] - 4, x[2] + x[3] - 2 * x[4], x[1] - x[4]], [0] * 3,
    [0] * 3, minimum=0.0, x_star=[1.0] * 5)
_hs(65, [-5.0, 5.0, 0.0],
    lambda xp, x: (x[0] - x[1]) ** 2 + (x[0] + x[1] - 10) ** 2 / 9 + (x[2] - 5) ** 2,
    lambda xp, x: [48 - x[0] ** 2 - x[1] ** 2 - x[2] ** 2], [0], [INF],
    lb=[-4.5, -4.5, -5], ub=[4.5, 4.5, 5], minimum=0.9535288567,
    x_star=[3.650461821, 3.650461821, 4.6204170507])
_hs(71, [1.0, 5.0, 5.0, 1.0],
    lambda xp, x: x[0] * x[3] * (x[0] + x[1] + x[2]) + x[2],
    lambda xp, x: [x[0] * x[1] * x[2] * x[3], xp.sum(x ** 2)], [25, 40], [INF, 40],
    lb=1.0, ub=5.0, minimum=17.0140173, x_star=[1.0, 4.7429994, 3.8211503, 1.3794082])
_hs(77, [2.0] * 5,
    lambda xp, x: (x[0] - 1) ** 2 + (x[0] - x[1]) ** 2 + (x[2] - 1) ** 2 + (x[3] - 1) ** 4
    + (x[4] - 1) ** 6,
    lambda xp, x: [x[0] ** 2 * x[3] + xp.sin(x[3] - x[4]) - 2 * SQ2,
                   x[1] + x[2] ** 4 * x[3] ** 2 - 8 - SQ2], [0, 0], [0, 0],
    minimum=0.24150513, x_star=[1.166172, 1.182111, 1.380257, 1.506036, 0.6109203])


def _hs78_constraints(xp, x):
    return [xp.sum(x ** 2) - 10, x[1] * x[2] - 5 * x[3] * x[4], x[0] ** 3 + x[1] ** 3 + 1]


_hs(78, [-2.0, 1.5, 2.0, -1.0, -1.0], lambda xp, x: x[0] * x[1] * x[2] * x[3] * x[4],
    _hs78_constraints, [0] * 3, [0] * 3, minimum=-2.91970041,
    x_star=[-1.717143, 1.595709, 1.827247, -0.7636413, -0.7636450])
_hs(79, [2.0] * 5,
    lambda xp, x: (x[0] - 1) ** 2 + (x[0] - x[1]) ** 2 + (x[1] - x[2]) ** 2
    + (x[2] - x[3]) ** 4 + (x[3] - x[4]) ** 4,
    lambda xp, x: [x[0] + x[1] ** 2 + x[2] ** 3 - 2 - 3 * SQ2,
                   x[1] - x[2] ** 2 + x[3] + 2 - 2 * SQ2, x[0] * x[4] - 2], [0] * 3, [0] * 3,
    minimum=0.0787768209, x_star=[1.191127, 1.362603, 1.472818, 1.635017, 1.679081])
_hs(80, [-2.0, 2.0, 2.0, -1.0, -1.0],
    lambda xp, x: xp.exp(x[0] * x[1] * x[2] * x[3] * x[4]), _hs78_constraints, [0] * 3,
    [0] * 3, lb=[-2.3, -2.3, -3.2, -3.2, -3.2], ub=[2.3, 2.3, 3.2, 3.2, 3.2],
    minimum=0.0539498478, x_star=[-1.717143, 1.595709, 1.827247, -0.7636413, -0.7636450])
_hs(100, [1.0, 2.0, 0.0, 4.0, 0.0, 1.0, 1.0],
    lambda xp, x: (x[0] - 10) ** 2 + 5 * (x[1] - 12) ** 2 + x[2] ** 4 + 3 * (x[3] - 11) ** 2
    + 10 * x[4] ** 6 + 7 * x[5] ** 2 + x[6] ** 4 - 4 * x[5] * x[6] - 10 * x[5] - 8 * x[6],
    lambda xp, x: [127 - 2 * x[0] ** 2 - 3 * x[1] ** 4 - x[2] - 4 * x[3] ** 2 - 5 * x[4],
                   282 - 7 * x[0] - 3 * x[1] - 10 * x[2] ** 2 - x[3] + x[4],
                   196 - 23 * x[0] - x[1] ** 2 - 6 * x[5] ** 2 + 8 * x[6],
                   -4 * x[0] ** 2 - x[1] ** 2 + 3 * x[0] * x[1] - 2 * x[2] ** 2 - 5 * x[5]
                   + 11 * x[6]], [0] * 4, [INF] * 4, minimum=680.6300573,
    x_star=[2.330499, 1.951372, -0.4775414, 4.365726, -0.6244870, 1.038131, 1.594227])
_hs(113, [2.0, 3.0, 5.0, 5.0, 1.0, 2.0, 7.0, 3.0, 6.0, 10.0],
    lambda xp, x: x[0] ** 2 + x[1] ** 2 + x[0] * x[1] - 14 * x[0] - 16 * x[1]
    + (x[2] - 10) ** 2 + 4 * (x[3] - 5) ** 2 + (x[4] - 3) ** 2 + 2 * (x[5] - 1) ** 2
    + 5 * x[6] ** 2 + 7 * (x[7] - 11) ** 2 + 2 * (x[8] - 10) ** 2 + (x[9] - 7) ** 2 + 45,
    lambda xp, x: [105 - 4 * x[0] - 5 * x[1] + 3 * x[6] - 9 * x[7],
                   -10 * x[0] + 8 * x[1] + 17 * x[6] - 2 * x[7],
                   8 * x[0] - 2 * x[1] - 5 * x[8] + 2 * x[9] + 12,
                   -3 * (x[0] - 2) ** 2 - 4 * (x[1] - 3) ** 2 - 2 * x[2] ** 2 + 7 * x[3] + 120,
                   -5 * x[0] ** 2 - 8 * x[1] - (x[2] - 6) ** 2 + 2 * x[3] + 40,
                   -0.5 * (x[0] - 8) ** 2 - 2 * (x[1] - 4) ** 2 - 3 * x[4] ** 2 + x[5] + 30,
                   -x[0] ** 2 - 2 * (x[1] - 2) ** 2 + 2 * x[0] * x[1] - 14 * x[4] + 6 * x[5],
                   3 * x[0] - 6 * x[1] - 12 * (x[8] - 8) ** 2 + 7 * x[9]],
    [0] * 8, [INF] * 8, minimum=24.3062091,
    x_star=[2.171996, 2.363683, 8.773926, 5.095984, 0.9906548, 1.430574, 1.321644,
            9.828726, 8.280092, 8.375927])


# --------------------------------------------------------------------- hanging chain
def _catenary(N, length, a, b):
    """The equilibrium of ``N`` equal rigid links (weights at the joints) from (0, 0) to
    ``(a, b)``: horizontal tension ``H`` and vertical ``V_j = V_0 + j w`` in link ``j``
    (force balance at each joint); two equations for ``(H, V_0)`` close the chain."""
    from scipy.optimize import fsolve

    ell = length / N
    j = np.arange(N)

    def ends(p):
        h, v0 = np.exp(p[0]), p[1]
        r = np.hypot(h, v0 + j)
        return [ell * np.sum(h / r) - a, ell * np.sum((v0 + j) / r) - b]

    p, info, ok, msg = fsolve(ends, [np.log(N / 4.0), -N / 2.0], xtol=1e-13,
                              full_output=True)
    if np.abs(info["fvec"]).max() > 1e-12:  # pragma: no cover - converges at every size tried
        raise RuntimeError(f"hanging_chain: the catenary did not converge: {msg}")
    h, v0 = np.exp(p[0]), p[1]
    r = np.hypot(h, v0 + j)
    xs = np.concatenate([[0.0], np.cumsum(ell * h / r)])
    ys = np.concatenate([[0.0], np.cumsum(ell * (v0 + j) / r)])
    return xs, ys


@_register("hanging_chain", 40, "a chain of N rigid links hanging between two points: "
                                 "minimal potential energy, one length constraint per link",
           "mechanics")
def _hanging_chain(n):
    N = max(n // 2 + 1, 3)  # links; 2 (N - 1) interior coordinates
    length, a, b = 2.0, 1.0, 0.3
    ell = length / N
    xs, ys = _catenary(N, length, a, b)
    s = np.arange(1, N) / N
    x0 = np.concatenate([a * s, b * s - 0.6 * s * (1 - s)])

    def builder(xp, const):
        K = N - 1

        def energy(z):  # each link's weight (its length) at its midpoint's height
            return ell * (xp.sum(z[K:]) + 0.5 * b)

        def links(z):  # (length / ell)^2 - 1: unscaled, MUMPS pivots ~10^3x slower
            X = xp.concatenate([const(np.zeros(1)), z[:K], const(np.full(1, a))])
            Y = xp.concatenate([const(np.zeros(1)), z[K:], const(np.full(1, b))])
            return ((X[1:] - X[:-1]) ** 2 + (Y[1:] - Y[:-1]) ** 2) / ell ** 2 - 1
        return energy, links

    x_star = np.concatenate([xs[1:-1], ys[1:-1]])
    return _finish("hanging_chain", builder, x0, cl=np.zeros(N), cu=np.zeros(N),
                   minimum=float(ell * (np.sum(ys[1:-1]) + 0.5 * b)), minimizer=x_star,
                   rtol=1e-8, size=N, description=f"hanging chain, {N} links",
                   source="the discrete catenary (joint equilibrium solved here)")


# --------------------------------------------------------------------- Goddard rocket
@_register("goddard", 405, "Goddard rocket (COPS 3.0): maximal altitude, trapezoidal "
                           "collocation of height, speed, mass and thrust, free final time",
           "optimal control")
def _goddard(n):
    nh = max((n - 1) // 4 - 1, 10)
    K = nh + 1
    h0, v0, m0, g0 = 1.0, 0.0, 1.0, 1.0
    Tc, hc, vc, mc = 3.5, 500.0, 620.0, 0.6
    Dc, mf, c, Tmax = 0.5 * vc * m0 / g0, mc * m0, 0.5 * np.sqrt(g0 * h0), Tc * g0 * m0
    t = np.arange(K) / nh
    x0 = np.concatenate([np.ones(K), t * (1 - t), m0 + (mf - m0) * t, np.full(K, Tmax / 2),
                         [1.0]])
    inf = np.full(K, np.inf)
    lb = np.concatenate([np.full(K, h0), np.zeros(K), np.full(K, mf), np.zeros(K), [0.0]])
    ub = np.concatenate([inf, inf, np.full(K, m0), np.full(K, Tmax), [np.inf]])
    lb[0] = ub[0] = h0            # h(0)
    lb[K] = ub[K] = v0            # v(0)
    lb[2 * K] = ub[2 * K] = m0    # m(0)
    lb[3 * K - 1] = ub[3 * K - 1] = mf  # m(tf)

    def builder(xp, const):
        def altitude(z):
            return -z[K - 1]

        def dynamics(z):
            h, v, m, T, tf = z[:K], z[K:2 * K], z[2 * K:3 * K], z[3 * K:4 * K], z[4 * K]
            step = tf / nh
            drag = Dc * v ** 2 * xp.exp(-hc * (h - h0) / h0)
            accel = (T - drag) / m - g0 * (h0 / h) ** 2
            return xp.concatenate([
                h[1:] - h[:-1] - 0.5 * step * (v[1:] + v[:-1]),
                v[1:] - v[:-1] - 0.5 * step * (accel[1:] + accel[:-1]),
                m[1:] - m[:-1] + 0.5 * step * (T[1:] + T[:-1]) / c])
        return altitude, dynamics

    return _finish("goddard", builder, x0, lb, ub, np.zeros(3 * nh), np.zeros(3 * nh),
                   minimum=-1.01283 if nh >= 100 else None, rtol=2e-5, size=nh,
                   description=f"Goddard rocket, {nh} intervals",
                   source="COPS 3.0 (Dolan, More, Munson 2004): h(tf) = 1.01283")


# --------------------------------------------------------------------- grid helpers
def _grid_values(xp, const, z, nx, boundary=None):
    """The (nx + 2) x (nx + 2) grid: the interior ``z`` (row-major), padded with the
    boundary values (zeros, or the constant grid ``boundary``, zero inside)."""
    V = xp.pad(xp.reshape(z, (nx, nx)), 1)
    return V if boundary is None else V + const(boundary)


def _triangle_differences(V, h):
    """``dx, dy`` on the lower and the upper triangles of the grid (MINPACK-2's elements),
    as 2-D slices (their gradients are slices too: no scattered sums)."""
    return ((V[1:, :-1] - V[:-1, :-1]) / h, (V[:-1, 1:] - V[:-1, :-1]) / h,
            (V[1:, 1:] - V[:-1, 1:]) / h, (V[1:, 1:] - V[1:, :-1]) / h)


def _mesh(nx):
    g = np.arange(1, nx + 1) / (nx + 1)
    return np.meshgrid(g, g, indexing="ij")


# Optima at the default sizes, computed with CasADi's derivatives + IPOPT (tol 1e-13,
# bound_relax_factor 0) and, for the bound-constrained ones, confirmed with SciPy's L-BFGS-B
# (gtol 1e-12): keyed by (name, n).
_STORED = {
    ("minsurf", 100): 2.460105246067,       # L-BFGS-B: 2.460105246066
    ("torsion", 100): -0.409945172904,      # L-BFGS-B: -0.409945172905
    ("vanderpol", 153): 3.673417058000,
    ("car_race", 154): 1.904563072407,
    ("pde_control", 200): 0.096896080615,
}


def _stored(name, n):
    value = _STORED.get((name, n))
    source = "CasADi 3.8 derivatives + IPOPT at tol 1e-13, same discretisation (stored)" \
        if value is not None else "unknown at this size"
    return value, source


# --------------------------------------------------------------------- minimal surface
@_register("minsurf", 100, "minimal surface over the unit square with an obstacle (COPS 3.0, "
                           "MINPACK-2): Enneper-like boundary data, v >= 1 on the centre",
           "pde")
def _minsurf(n):
    nx = max(int(round(np.sqrt(n))), 3)
    h = 1.0 / (nx + 1)
    edge = np.linspace(0.0, 1.0, nx + 2)
    boundary = np.zeros((nx + 2, nx + 2))
    boundary[:, 0] = boundary[:, -1] = 1 - (2 * edge - 1) ** 2   # y = 0 and y = 1
    X, Y = _mesh(nx)
    obstacle = ((np.abs(X - 0.5) <= 0.25) & (np.abs(Y - 0.5) <= 0.25)).astype(float)
    x0 = np.maximum(1 - (2 * X - 1) ** 2, obstacle).ravel()

    def builder(xp, const):
        def area(z):
            dx1, dy1, dx2, dy2 = _triangle_differences(
                _grid_values(xp, const, z, nx, boundary), h)
            return 0.5 * h * h * (xp.sum(xp.sqrt(1 + dx1 ** 2 + dy1 ** 2))
                                  + xp.sum(xp.sqrt(1 + dx2 ** 2 + dy2 ** 2)))
        return area, None

    minimum, source = _stored("minsurf", nx * nx)
    return _finish("minsurf", builder, x0, lb=obstacle.ravel(), minimum=minimum, rtol=1e-7,
                   source=source, size=nx,
                   description=f"minimal surface with obstacle, {nx} x {nx} grid")


# --------------------------------------------------------------------- torsion
@_register("torsion", 100, "elastic-plastic torsion (COPS 3.0, MINPACK-2): quadratic "
                           "energy, |v| bounded by the distance to the boundary", "pde")
def _torsion(n):
    nx = max(int(round(np.sqrt(n))), 3)
    h = 1.0 / (nx + 1)
    cforce = 5.0
    X, Y = _mesh(nx)
    dist = np.minimum(np.minimum(X, 1 - X), np.minimum(Y, 1 - Y)).ravel()

    def builder(xp, const):
        def energy(z):
            dx1, dy1, dx2, dy2 = _triangle_differences(_grid_values(xp, const, z, nx), h)
            return (0.25 * h * h * (xp.sum(dx1 ** 2 + dy1 ** 2) + xp.sum(dx2 ** 2 + dy2 ** 2))
                    - cforce * h * h * xp.sum(z))
        return energy, None

    minimum, source = _stored("torsion", nx * nx)
    return _finish("torsion", builder, dist.copy(), lb=-dist, ub=dist, minimum=minimum,
                   rtol=1e-7, source=source, size=nx,
                   description=f"elastic-plastic torsion, {nx} x {nx} grid")


# --------------------------------------------------------------------- optimal control
def _trapezoid_weights(K, step):
    w = np.full(K, step)
    w[0] = w[-1] = 0.5 * step
    return w


@_register("lq_control", 300, "linear-quadratic control of a double integrator "
                              "(trapezoidal collocation); optimum by a sparse KKT solve",
           "optimal control")
def _lq_control(n):
    N = max(n // 3 - 1, 4)
    K = N + 1
    step = 5.0 / N
    w = _trapezoid_weights(K, step)
    x0 = np.zeros(3 * K)
    x0[0] = 1.0
    lb, ub = np.full(3 * K, -np.inf), np.full(3 * K, np.inf)
    lb[0] = ub[0] = 1.0     # p(0)
    lb[K] = ub[K] = 0.0     # v(0)

    def builder(xp, const):
        W = const(w)

        def cost(z):
            return 0.5 * xp.sum(W * (z[:K] ** 2 + z[K:2 * K] ** 2 + z[2 * K:] ** 2))

        def dynamics(z):
            p, v, u = z[:K], z[K:2 * K], z[2 * K:]
            return xp.concatenate([p[1:] - p[:-1] - 0.5 * step * (v[1:] + v[:-1]),
                                   v[1:] - v[:-1] - 0.5 * step * (u[1:] + u[:-1])])
        return cost, dynamics

    # the optimum: min z^T Q z / 2 subject to A z = b (dynamics and the initial state)
    import scipy.sparse as sp
    from scipy.sparse.linalg import spsolve
    Q = sp.diags(np.tile(w, 3))
    D = sp.diags([-np.ones(N), np.ones(N)], [0, 1], shape=(N, K))
    S = sp.diags([np.ones(N), np.ones(N)], [0, 1], shape=(N, K)) * (0.5 * step)
    Z = sp.csr_matrix((N, K))
    A = sp.vstack([sp.hstack([D, -S, Z]), sp.hstack([Z, D, -S]),
                   sp.csr_matrix(([1.0, 1.0], ([0, 1], [0, K])), shape=(2, 3 * K))])
    rhs = np.concatenate([np.zeros(2 * N + 2 + 3 * K)])
    rhs[3 * K + 2 * N] = 1.0
    kkt = sp.bmat([[Q, A.T], [A, None]], format="csc")
    z = spsolve(kkt, rhs)[:3 * K]
    return _finish("lq_control", builder, x0, lb, ub, np.zeros(2 * N), np.zeros(2 * N),
                   minimum=float(0.5 * z @ (Q @ z)), minimizer=z, rtol=1e-8, size=N,
                   description=f"linear-quadratic double integrator, {N} intervals",
                   source="the KKT system solved here (scipy.sparse.linalg.spsolve)")


@_register("vanderpol", 153, "Van der Pol oscillator steered to rest (CasADi's example): "
                             "trapezoidal collocation, |u| <= 1, x1 >= -0.25",
           "optimal control")
def _vanderpol(n):
    N = max(n // 3 - 1, 4)
    K = N + 1
    step = 10.0 / N
    w = _trapezoid_weights(K, step)
    x0 = np.concatenate([np.zeros(K), np.ones(K), np.zeros(K)])
    lb = np.concatenate([np.full(K, -0.25), np.full(K, -np.inf), np.full(K, -1.0)])
    ub = np.concatenate([np.full(2 * K, np.inf), np.full(K, 1.0)])
    lb[0] = ub[0] = 0.0
    lb[K] = ub[K] = 1.0

    def builder(xp, const):
        W = const(w)

        def cost(z):
            return xp.sum(W * (z[:K] ** 2 + z[K:2 * K] ** 2 + z[2 * K:] ** 2))

        def dynamics(z):
            x1, x2, u = z[:K], z[K:2 * K], z[2 * K:]
            f1 = (1 - x2 ** 2) * x1 - x2 + u
            return xp.concatenate([x1[1:] - x1[:-1] - 0.5 * step * (f1[1:] + f1[:-1]),
                                   x2[1:] - x2[:-1] - 0.5 * step * (x1[1:] + x1[:-1])])
        return cost, dynamics

    minimum, source = _stored("vanderpol", 3 * K)
    return _finish("vanderpol", builder, x0, lb, ub, np.zeros(2 * N), np.zeros(2 * N),
                   minimum=minimum, rtol=1e-7, source=source, size=N,
                   description=f"Van der Pol control, {N} intervals")


@_register("car_race", 154, "minimal-time race on a track with a speed limit (CasADi's "
                            "race-car example), trapezoidal collocation, free final time",
           "optimal control")
def _car_race(n):
    N = max((n - 1) // 3 - 1, 4)
    K = N + 1
    s = np.arange(K) / N
    x0 = np.concatenate([s, np.full(K, 0.5), np.full(K, 0.5), [1.0]])
    lb = np.concatenate([np.full(K, -np.inf), np.full(K, -np.inf), np.zeros(K), [0.0]])
    ub = np.concatenate([np.full(2 * K, np.inf), np.ones(K), [np.inf]])
    lb[0] = ub[0] = 0.0          # pos(0)
    lb[K - 1] = ub[K - 1] = 1.0  # pos(T)
    lb[K] = ub[K] = 0.0          # speed(0)

    def builder(xp, const):
        def final_time(z):
            return z[3 * K]

        def constraints(z):
            pos, speed, u, T = z[:K], z[K:2 * K], z[2 * K:3 * K], z[3 * K]
            step = T / N
            accel = u - speed
            return xp.concatenate([
                pos[1:] - pos[:-1] - 0.5 * step * (speed[1:] + speed[:-1]),
                speed[1:] - speed[:-1] - 0.5 * step * (accel[1:] + accel[:-1]),
                speed + 0.5 * xp.sin(2 * np.pi * pos)])       # <= 1: the track's limit
        return final_time, constraints

    minimum, source = _stored("car_race", 3 * K + 1)
    return _finish("car_race", builder, x0, lb, ub,
                   np.concatenate([np.zeros(2 * N), np.full(K, -np.inf)]),
                   np.concatenate([np.zeros(2 * N), np.ones(K)]), minimum=minimum, rtol=1e-7,
                   source=source, size=N, description=f"car race, {N} intervals")


@_register("pde_control", 200, "distributed control of a semilinear elliptic PDE "
                               "(-lap y + y^3 = u on the unit square, |u| <= 5), 5-point "
                               "stencil", "pde")
def _pde_control(n):
    nx = max(int(round(np.sqrt(n / 2))), 3)
    h = 1.0 / (nx + 1)
    alpha = 1e-3
    X, Y = _mesh(nx)
    target = (np.sin(2 * np.pi * X) * np.sin(np.pi * Y)).ravel()
    M = nx * nx
    x0 = np.zeros(2 * M)

    def builder(xp, const):
        yd = const(target)

        def tracking(z):
            return 0.5 * h * h * (xp.sum((z[:M] - yd) ** 2) + alpha * xp.sum(z[M:] ** 2))

        def state_equation(z):  # h^2 (-lap y + y^3 - u) = 0 at every grid point
            V = _grid_values(xp, const, z[:M], nx)
            y, u = V[1:-1, 1:-1], xp.reshape(z[M:], (nx, nx))
            residual = (4 * y - V[:-2, 1:-1] - V[2:, 1:-1] - V[1:-1, :-2] - V[1:-1, 2:]
                        + h * h * (y ** 3 - u))
            return xp.reshape(residual, (M,))
        return tracking, state_equation

    lb = np.concatenate([np.full(M, -np.inf), np.full(M, -5.0)])
    ub = np.concatenate([np.full(M, np.inf), np.full(M, 5.0)])
    minimum, source = _stored("pde_control", 2 * M)
    return _finish("pde_control", builder, x0, lb, ub, np.zeros(M), np.zeros(M),
                   minimum=minimum, rtol=1e-7, source=source, size=nx,
                   description=f"semilinear elliptic control, {nx} x {nx} grid")


# --------------------------------------------------------------------- portfolio
@_register("portfolio", 50, "maximal expected return with a quadratic risk budget "
                            "(factor model) and a full-investment constraint; optimum on "
                            "the efficient frontier in closed form", "finance")
def _portfolio(n):
    n = max(n, 3)
    rng = np.random.default_rng(0)
    k = 3
    F = rng.standard_normal((n, k)) * 0.1
    d = rng.uniform(0.01, 0.04, n)
    mu = rng.uniform(0.02, 0.12, n)
    Sigma = F @ F.T + np.diag(d)
    inv_one, inv_mu = np.linalg.solve(Sigma, np.ones(n)), np.linalg.solve(Sigma, mu)
    A, B, C = np.sum(inv_one), np.sum(inv_mu), mu @ inv_mu
    budget = 2.0 / A                      # twice the minimal variance
    best = B / A + np.sqrt((C - B * B / A) * (budget - 1.0 / A))
    w_star = ((C - best * B) * inv_one + (A * best - B) * inv_mu) / (A * C - B * B)

    def builder(xp, const):
        FT, D, M = const(F.T), const(d), const(mu)

        def neg_return(w):
            return -xp.sum(M * w)

        def constraints(w):  # the risk as a fraction of the budget: <= 1
            risk = xp.sum((FT @ w) ** 2) + xp.sum(D * w ** 2)
            return xp.stack([risk / budget, xp.sum(w)])
        return neg_return, constraints

    return _finish("portfolio", builder, np.full(n, 1.0 / n), cl=[-np.inf, 1.0],
                   cu=[1.0, 1.0], minimum=float(-best), minimizer=w_star, rtol=1e-8,
                   size=n, data={"Sigma": Sigma, "mu": mu, "budget": budget},
                   description=f"portfolio with a risk budget, {n} assets",
                   source="the efficient frontier in closed form")


# --------------------------------------------------------------------- Thomson
_THOMSON = {5: 6.474691495, 6: 9.985281374, 10: 32.716949460, 12: 49.165253058,
            20: 150.881568334, 30: 359.603945904, 32: 412.261274651, 50: 1055.182314726,
            100: 4448.350634331}


@_register("thomson", 36, "N unit charges on the unit sphere with minimal Coulomb energy "
                          "(COPS 'elec'): a dense Lagrangian Hessian", "geometry")
def _thomson(n):
    N = max(n // 3, 2)
    k = np.arange(N) + 0.5  # a Fibonacci sphere, slightly twisted off its symmetries
    theta = np.arccos(1 - 2 * k / N)
    phi = np.pi * (1 + 5 ** 0.5) * k + 0.1 * np.sin(3.0 * k)
    x0 = np.concatenate([np.cos(phi) * np.sin(theta), np.sin(phi) * np.sin(theta),
                         np.cos(theta)])
    I, J = np.triu_indices(N, 1)

    def builder(xp, const):
        def energy(z):
            x, y, w = z[:N], z[N:2 * N], z[2 * N:]
            return xp.sum(1 / xp.sqrt((x[I] - x[J]) ** 2 + (y[I] - y[J]) ** 2
                                      + (w[I] - w[J]) ** 2))

        def sphere(z):
            return z[:N] ** 2 + z[N:2 * N] ** 2 + z[2 * N:] ** 2
        return energy, sphere

    return _finish("thomson", builder, x0, cl=np.ones(N), cu=np.ones(N),
                   minimum=_THOMSON.get(N), rtol=1e-9, size=N,
                   description=f"Thomson problem, {N} charges",
                   source="the known minimal energies (Wales et al., Cambridge Cluster "
                          "Database)")
