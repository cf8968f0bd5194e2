import numpy as np

# ---------------------------------------------------------------------------
# Corpus of classic optimisation test objectives, written ONCE in plain
# numpy style against the module-level global ``np``.
#
# * Every objective body only touches ``np`` (the name that is rebound by
#   :func:`load_corpus`), Python builtins, and constant data arrays.
# * Constant data (matrices, data sets, measured values) are plain
#   ``numpy.ndarray`` objects built at import time through the separately
#   imported name ``_onp``; they never depend on which ``np`` is bound.
# * Objective bodies never mutate arrays (no ``a[i] = ...``, no augmented
#   assignment); that is checked by an AST lint in the test-suite.
# * ``x0(n)`` / ``x_star(n)`` always return plain float64 ndarrays.
#
# ``load_corpus(np_module)`` re-executes this very file in a fresh module
# namespace and then binds ``np`` to ``np_module`` so that the same source is
# evaluated against, e.g., ``hessgrad.numpy``.
# ---------------------------------------------------------------------------

import ast as _ast
import dataclasses as _dataclasses
import os as _os
import types as _types
from typing import Callable as _Callable, Optional as _Optional, Tuple as _Tuple, Union as _Union

import numpy as _onp

_CORPUS_PATH = _os.path.abspath(__file__)


@_dataclasses.dataclass(frozen=True)
class Objective:
    """One test objective.

    name    : unique identifier
    fn      : f(x) -> scalar, x a 1-D float array of length n
    dims    : tuple of supported n
    x0      : n -> ndarray, a standard (or reasonable) starting point at which
              ``fn`` is C^2 (away from kinks of abs/max/sqrt)
    smooth  : True iff fn is C^2 on its whole (natural) domain
    x_star  : optional n -> ndarray or None, a known global minimiser
    f_star  : optional float, or n -> float or None, the known minimum
    source  : literature citation
    notes   : free text (domain restrictions, caveats)
    """

    name: str
    fn: _Callable
    dims: _Tuple[int, ...]
    x0: _Callable
    smooth: bool = True
    x_star: _Optional[_Callable] = None
    f_star: _Union[None, float, _Callable] = None
    source: str = ""
    notes: str = ""

    def x_star_at(self, n):
        if self.x_star is None:
            return None
        xs = self.x_star(n)
        return None if xs is None else _onp.asarray(xs, dtype=float)

    def f_star_at(self, n):
        if self.f_star is None:
            return None
        if callable(self.f_star):
            return self.f_star(n)
        return float(self.f_star)

    def __call__(self, x):
        return self.fn(x)


OBJECTIVES = []


def _register(name, dims, x0, smooth=True, x_star=None, f_star=None, source="", notes=""):
    def deco(fn):
        OBJECTIVES.append(
            Objective(name=name, fn=fn, dims=tuple(dims), x0=x0, smooth=smooth,
                      x_star=x_star, f_star=f_star, source=source, notes=notes)
        )
        return fn

    return deco


# --- helpers producing plain ndarrays for x0 / x_star ------------------------

def _pt(*vals):
    """Fixed point (for fixed-dimension problems)."""
    arr = _onp.array(vals, dtype=float)
    return lambda n: arr.copy()


def _cyc(*vals):
    """Cyclic repetition of ``vals`` up to length n."""
    arr = _onp.array(vals, dtype=float)
    return lambda n: _onp.resize(arr, n).astype(float)


def _full(v):
    return lambda n: _onp.full(n, float(v))


def _only(n0, value):
    """Known value only for dimension n0."""
    return lambda n: (value() if callable(value) else value) if n == n0 else None


# =============================================================================
# Classic 2-D and n-D benchmark functions (Jamil & Yang 2013; Surjanovic &
# Bingham "Virtual Library of Simulation Experiments", SFU)
# =============================================================================

@_register("rosenbrock", dims=(2, 3, 5, 10), x0=_cyc(-1.2, 1.0), x_star=_full(1.0), f_star=0.0,
           source="Rosenbrock 1960; chained form as scipy.optimize.rosen")
def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


@_register("extended_rosenbrock", dims=(2, 4, 10), x0=_cyc(-1.2, 1.0), x_star=_full(1.0), f_star=0.0,
           source="Moré, Garbow, Hillstrom 1981 #21")
def extended_rosenbrock(x):
    odd, even = x[0::2], x[1::2]
    return np.sum((10.0 * (even - odd ** 2)) ** 2) + np.sum((1.0 - odd) ** 2)


_BEALE_Y = _onp.array([1.5, 2.25, 2.625])


@_register("beale", dims=(2,), x0=_pt(1.0, 1.0), x_star=_pt(3.0, 0.5), f_star=0.0,
           source="Moré, Garbow, Hillstrom 1981 #5; Beale 1958")
def beale(x):
    return sum((_BEALE_Y[i] - x[0] * (1 - x[1] ** (i + 1))) ** 2 for i in range(3))


@_register("booth", dims=(2,), x0=_pt(0.0, 0.0), x_star=_pt(1.0, 3.0), f_star=0.0,
           source="Jamil & Yang 2013 #24")
def booth(x):
    return (x[0] + 2 * x[1] - 7) ** 2 + (2 * x[0] + x[1] - 5) ** 2


@_register("matyas", dims=(2,), x0=_pt(3.0, -2.0), x_star=_pt(0.0, 0.0), f_star=0.0,
           source="Jamil & Yang 2013 #71")
def matyas(x):
    return 0.26 * (x[0] ** 2 + x[1] ** 2) - 0.48 * x[0] * x[1]


@_register("himmelblau", dims=(2,), x0=_pt(0.0, 0.0), x_star=_pt(3.0, 2.0), f_star=0.0,
           source="Himmelblau 1972")
def himmelblau(x):
    r = np.stack([x[0] ** 2 + x[1] - 11, x[0] + x[1] ** 2 - 7])
    return r @ r


@_register("three_hump_camel", dims=(2,), x0=_pt(1.0, -1.0), x_star=_pt(0.0, 0.0), f_star=0.0,
           source="Jamil & Yang 2013 #29")
def three_hump_camel(x):
    a, b = x[0], x[1]
    return 2 * a ** 2 - 1.05 * a ** 4 + a ** 6 / 6 + a * b + b ** 2


_SIX_HUMP_XSTAR = _onp.array([0.08984201310031807, -0.7126564030207396])


@_register("six_hump_camel", dims=(2,), x0=_pt(-1.0, 1.0), x_star=lambda n: _SIX_HUMP_XSTAR.copy(),
           f_star=-1.0316284534898774, source="Jamil & Yang 2013 #30 (f* = -1.0316285)")
def six_hump_camel(x):
    a, b = x[0], x[1]
    return (4 - 2.1 * a ** 2 + a ** 4 / 3) * a ** 2 + a * b + (-4 + 4 * b ** 2) * b ** 2


@_register("easom", dims=(2,), x0=_pt(2.5, 2.7), x_star=lambda n: _onp.array([_onp.pi, _onp.pi]), f_star=-1.0,
           source="Easom 1990; Jamil & Yang 2013 #50")
def easom(x):
    return -np.cos(x[0]) * np.cos(x[1]) * np.exp(-((x[0] - np.pi) ** 2 + (x[1] - np.pi) ** 2))


_MCC_S = -2.0 * _onp.pi / 3.0


@_register("mccormick", dims=(2,), x0=_pt(0.0, 0.0),
           x_star=lambda n: _onp.array([(_MCC_S + 1) / 2, (_MCC_S - 1) / 2]),
           f_star=-_onp.sqrt(3.0) / 2 - _onp.pi / 3,
           source="McCormick 1976; Jamil & Yang 2013 #72 (f* = -1.9133)")
def mccormick(x):
    return np.sin(x[0] + x[1]) + (x[0] - x[1]) ** 2 - 1.5 * x[0] + 2.5 * x[1] + 1


@_register("goldstein_price", dims=(2,), x0=_pt(0.5, -0.5), x_star=_pt(0.0, -1.0), f_star=3.0,
           source="Goldstein & Price 1971")
def goldstein_price(x):
    a, b = x[0], x[1]
    t1 = 1 + (a + b + 1) ** 2 * (19 - 14 * a + 3 * a ** 2 - 14 * b + 6 * a * b + 3 * b ** 2)
    t2 = 30 + (2 * a - 3 * b) ** 2 * (18 - 32 * a + 12 * a ** 2 + 48 * b - 36 * a * b + 27 * b ** 2)
    return t1 * t2


@_register("bukin6", dims=(2,), x0=_pt(-8.0, 1.5), smooth=False, x_star=_pt(-10.0, 1.0), f_star=0.0,
           source="Bukin 1997; Jamil & Yang 2013 #28",
           notes="kinks where x2 = 0.01 x1^2 and x1 = -10 (sqrt|.| and |.|); x0 is in a smooth region")
def bukin6(x):
    return 100 * np.sqrt(np.abs(x[1] - 0.01 * x[0] ** 2)) + 0.01 * np.abs(x[0] + 10)


@_register("ackley", dims=(2, 5, 10), x0=_cyc(0.4, -0.7, 1.1), smooth=False, x_star=lambda n: _onp.zeros(n),
           f_star=0.0, source="Ackley 1987; Jamil & Yang 2013 #1",
           notes="not differentiable at the origin (sqrt of mean square)")
def ackley(x):
    a, b, c = 20.0, 0.2, 2 * np.pi
    return -a * np.exp(-b * np.sqrt(np.mean(np.square(x)))) - np.exp(np.mean(np.cos(c * x))) + a + np.e


@_register("rastrigin", dims=(2, 5, 10), x0=_cyc(0.3, -0.4, 1.2), x_star=lambda n: _onp.zeros(n), f_star=0.0,
           source="Rastrigin 1974; Jamil & Yang 2013")
def rastrigin(x):
    return 10 * len(x) + np.sum(x ** 2 - 10 * np.cos(2 * np.pi * x))


@_register("griewank", dims=(2, 5, 10), x0=_cyc(1.5, -2.0, 0.5), x_star=lambda n: _onp.zeros(n), f_star=0.0,
           source="Griewank 1981; Jamil & Yang 2013 #59")
def griewank(x):
    n = x.shape[0]
    return 1 + np.sum(x ** 2) / 4000 - np.prod(np.cos(x / np.sqrt(np.arange(1, n + 1))))


def _styblinski_root():
    r = _onp.roots([4.0, 0.0, -32.0, 5.0])
    return float(_onp.min(r.real))


_ST_XSTAR = _styblinski_root()
_ST_FSTAR1 = 0.5 * (_ST_XSTAR ** 4 - 16 * _ST_XSTAR ** 2 + 5 * _ST_XSTAR)


@_register("styblinski_tang", dims=(2, 5, 10), x0=_full(0.5), x_star=_full(_ST_XSTAR),
           f_star=lambda n: n * _ST_FSTAR1, source="Styblinski & Tang 1990 (f* = -39.16617 n)")
def styblinski_tang(x):
    return 0.5 * np.sum(x ** 4 - 16 * x ** 2 + 5 * x)


@_register("powell_singular", dims=(4, 8, 12), x0=_cyc(3.0, -1.0, 0.0, 1.0), x_star=lambda n: _onp.zeros(n),
           f_star=0.0, source="Moré, Garbow, Hillstrom 1981 #13 / #22 (extended)")
def powell_singular(x):
    a, b, c, d = x.reshape(-1, 4).T
    return np.sum((a + 10 * b) ** 2 + 5 * (c - d) ** 2 + (b - 2 * c) ** 4 + 10 * (a - d) ** 4)


@_register("trid", dims=(2, 5, 10), x0=lambda n: _onp.zeros(n),
           x_star=lambda n: _onp.arange(1, n + 1) * (n + 1 - _onp.arange(1, n + 1.0)),
           f_star=lambda n: -n * (n + 4) * (n - 1) / 6.0, source="Surjanovic & Bingham (SFU), Trid function")
def trid(x):
    return np.sum((x - 1) ** 2) - np.sum(x[1:] * x[:-1])


@_register("dixon_price", dims=(2, 5, 10), x0=_full(1.0),
           x_star=lambda n: 2.0 ** (-(2.0 ** _onp.arange(1, n + 1) - 2) / 2.0 ** _onp.arange(1, n + 1)),
           f_star=0.0, source="Dixon & Price 1989")
def dixon_price(x):
    n = x.shape[0]
    return (x[0] - 1) ** 2 + np.sum(np.arange(2, n + 1) * (2 * x[1:] ** 2 - x[:-1]) ** 2)


@_register("zakharov", dims=(2, 5, 10), x0=_cyc(0.5, -0.25), x_star=lambda n: _onp.zeros(n), f_star=0.0,
           source="Zakharov; Jamil & Yang 2013 #172")
def zakharov(x):
    i = np.arange(1, x.shape[0] + 1)
    s1 = np.sum(x ** 2)
    s2 = np.sum(0.5 * i * x)
    return s1 + s2 ** 2 + s2 ** 4


@_register("levy", dims=(2, 5, 10), x0=_cyc(0.0, 2.5, -1.5), x_star=_full(1.0), f_star=0.0,
           source="Levy & Montalvo 1985; SFU Levy function")
def levy(x):
    w = 1 + (x - 1) / 4
    wi = w[:-1]
    head = np.sin(np.pi * w[0]) ** 2
    mid = np.sum((wi - 1) ** 2 * (1 + 10 * np.sin(np.pi * wi + 1) ** 2))
    tail = (w[-1] - 1) ** 2 * (1 + np.sin(2 * np.pi * w[-1]) ** 2)
    return head + mid + tail


@_register("levy13", dims=(2,), x0=_pt(-1.0, 0.5), x_star=_pt(1.0, 1.0), f_star=0.0,
           source="Levy N.13; SFU")
def levy13(x):
    return (np.sin(3 * np.pi * x[0]) ** 2
            + (x[0] - 1) ** 2 * (1 + np.sin(3 * np.pi * x[1]) ** 2)
            + (x[1] - 1) ** 2 * (1 + np.sin(2 * np.pi * x[1]) ** 2))


_MICHAL_X2 = _onp.array([2.2029055201801495, _onp.pi / 2])


@_register("michalewicz", dims=(2, 5, 10), x0=_full(1.0), x_star=_only(2, lambda: _MICHAL_X2.copy()),
           f_star=_only(2, -1.8013034100985537),
           source="Michalewicz 1992, m = 10 (n=2: f* = -1.8013)")
def michalewicz(x):
    i = np.arange(1, x.shape[0] + 1)
    return -np.sum(np.sin(x) * np.sin(i * x ** 2 / np.pi) ** 20)


_SCHW_XSTAR = 420.9687463599821
_SCHW_G = _SCHW_XSTAR * _onp.sin(_onp.sqrt(_SCHW_XSTAR))


@_register("schwefel226", dims=(2, 5, 10), x0=_full(100.0), smooth=False, x_star=_full(_SCHW_XSTAR),
           f_star=lambda n: n * (418.9829 - _SCHW_G), source="Schwefel 1981, problem 2.26",
           notes="sqrt|x| is not differentiable at x_i = 0")
def schwefel226(x):
    return 418.9829 * x.shape[0] - np.sum(x * np.sin(np.sqrt(np.abs(x))))


@_register("schwefel12", dims=(2, 5, 10), x0=_cyc(1.0, -0.5, 2.0), x_star=lambda n: _onp.zeros(n), f_star=0.0,
           source="Schwefel 1981, problem 1.2 (double sum)")
def schwefel12(x):
    return np.sum(np.cumsum(x) ** 2)


@_register("schwefel222", dims=(2, 5, 10), x0=_cyc(0.5, -0.3, 1.2), smooth=False,
           x_star=lambda n: _onp.zeros(n), f_star=0.0, source="Schwefel 1981, problem 2.22",
           notes="kinks at x_i = 0")
def schwefel222(x):
    return np.sum(np.abs(x)) + np.prod(np.abs(x))


@_register("schwefel221", dims=(2, 5, 10), x0=lambda n: 0.1 * _onp.arange(1, n + 1) * (-1.0) ** _onp.arange(n),
           smooth=False, x_star=lambda n: _onp.zeros(n), f_star=0.0, source="Schwefel 1981, problem 2.21",
           notes="max|x_i|: kinks where the argmax is not unique or x_i = 0")
def schwefel221(x):
    return np.max(np.abs(x))


@_register("sphere", dims=(2, 5, 10), x0=_cyc(1.0, -2.0, 0.5), x_star=lambda n: _onp.zeros(n), f_star=0.0,
           source="De Jong 1975, F1")
def sphere(x):
    return np.dot(x, x)


@_register("sum_squares", dims=(2, 5, 10), x0=_cyc(1.0, -2.0, 0.5), x_star=lambda n: _onp.zeros(n), f_star=0.0,
           source="SFU, Sum squares function")
def sum_squares(x):
    return (np.arange(1, len(x) + 1) * x ** 2).sum()


@_register("sum_diff_powers", dims=(2, 5, 10), x0=_cyc(0.5, -0.8, 0.3), x_star=lambda n: _onp.zeros(n),
           f_star=0.0, source="SFU, Sum of different powers function",
           notes="|x|^k with k >= 2 is C^2 everywhere")
def sum_diff_powers(x):
    return np.sum(np.abs(x) ** np.arange(2, x.shape[0] + 2))


@_register("powell_sum", dims=(2, 5, 10), x0=_cyc(0.5, -0.8, 0.3), x_star=lambda n: _onp.zeros(n), f_star=0.0,
           source="Jamil & Yang 2013 #93 (Powell sum); mathematically equal to sum_diff_powers",
           notes="builtin sum/abs over a Python loop")
def powell_sum(x):
    return sum(abs(x[i]) ** (i + 2) for i in range(len(x)))


@_register("rotated_hyper_ellipsoid", dims=(2, 5, 10), x0=_cyc(1.0, -2.0, 0.5), x_star=lambda n: _onp.zeros(n),
           f_star=0.0, source="SFU, Rotated hyper-ellipsoid function")
def rotated_hyper_ellipsoid(x):
    return np.sum(np.cumsum(x ** 2))


@_register("bohachevsky1", dims=(2,), x0=_pt(0.6, -0.4), x_star=_pt(0.0, 0.0), f_star=0.0,
           source="Bohachevsky, Johnson, Stein 1986")
def bohachevsky1(x):
    return x[0] ** 2 + 2 * x[1] ** 2 - 0.3 * np.cos(3 * np.pi * x[0]) - 0.4 * np.cos(4 * np.pi * x[1]) + 0.7


@_register("bohachevsky2", dims=(2,), x0=_pt(0.6, -0.4), x_star=_pt(0.0, 0.0), f_star=0.0,
           source="Bohachevsky, Johnson, Stein 1986")
def bohachevsky2(x):
    return x[0] ** 2 + 2 * x[1] ** 2 - 0.3 * np.cos(3 * np.pi * x[0]) * np.cos(4 * np.pi * x[1]) + 0.3


@_register("bohachevsky3", dims=(2,), x0=_pt(0.6, -0.4), x_star=_pt(0.0, 0.0), f_star=0.0,
           source="Bohachevsky, Johnson, Stein 1986")
def bohachevsky3(x):
    return x[0] ** 2 + 2 * x[1] ** 2 - 0.3 * np.cos(3 * np.pi * x[0] + 4 * np.pi * x[1]) + 0.3


@_register("branin", dims=(2,), x0=_pt(0.0, 0.0), x_star=lambda n: _onp.array([_onp.pi, 2.275]),
           f_star=5.0 / (4.0 * _onp.pi), source="Branin 1972; Dixon & Szegö 1978 (f* = 0.397887)")
def branin(x):
    a, b, c = 1.0, 5.1 / (4 * np.pi ** 2), 5 / np.pi
    r, s, t = 6.0, 10.0, 1 / (8 * np.pi)
    return a * (x[1] - b * x[0] ** 2 + c * x[0] - r) ** 2 + s * (1 - t) * np.cos(x[0]) + s


@_register("colville", dims=(4,), x0=_pt(0.5, 0.5, 0.5, 0.5), x_star=_full(1.0), f_star=0.0,
           source="Colville 1968; mathematically identical to Wood (MGH #14)")
def colville(x):
    x1, x2, x3, x4 = x[0], x[1], x[2], x[3]
    return (100 * (x1 ** 2 - x2) ** 2 + (x1 - 1) ** 2 + (x3 - 1) ** 2 + 90 * (x3 ** 2 - x4) ** 2
            + 10.1 * ((x2 - 1) ** 2 + (x4 - 1) ** 2) + 19.8 * (x2 - 1) * (x4 - 1))


@_register("wood", dims=(4,), x0=_pt(-3.0, -1.0, -3.0, -1.0), x_star=_full(1.0), f_star=0.0,
           source="Moré, Garbow, Hillstrom 1981 #14")
def wood(x):
    r = np.stack([
        10 * (x[1] - x[0] ** 2),
        1 - x[0],
        np.sqrt(90) * (x[3] - x[2] ** 2),
        1 - x[2],
        np.sqrt(10) * (x[1] + x[3] - 2),
        (x[1] - x[3]) / np.sqrt(10),
    ])
    return np.sum(np.square(r))


@_register("perm0_d_beta", dims=(2, 3, 4), x0=_full(0.5), x_star=lambda n: 1.0 / _onp.arange(1, n + 1),
           f_star=0.0, source="SFU, Perm function 0,d,beta (beta = 10)")
def perm0_d_beta(x):
    beta = 10.0
    j = np.arange(1.0, len(x) + 1)
    return sum(np.sum((j + beta) * (x ** i - 1.0 / j ** i)) ** 2 for i in range(1, len(x) + 1))


@_register("perm_d_beta", dims=(2, 3, 4), x0=_full(1.5), x_star=lambda n: _onp.arange(1.0, n + 1),
           f_star=0.0, source="SFU, Perm function d,beta (beta = 0.5)")
def perm_d_beta(x):
    beta = 0.5
    j = np.arange(1.0, len(x) + 1)
    total = 0.0
    for i in range(1, len(x) + 1):
        total = total + np.sum((j ** i + beta) * ((x / j) ** i - 1)) ** 2
    return total


@_register("qing", dims=(2, 5, 10), x0=_full(0.5), x_star=lambda n: _onp.sqrt(_onp.arange(1.0, n + 1)),
           f_star=0.0, source="Qing 2006; Jamil & Yang 2013 #98")
def qing(x):
    return np.sum((x ** 2 - np.arange(1, x.shape[0] + 1)) ** 2)


@_register("quartic", dims=(2, 5, 10), x0=_cyc(0.5, -0.7), x_star=lambda n: _onp.zeros(n), f_star=0.0,
           source="De Jong F4 without noise; Jamil & Yang 2013 #100")
def quartic(x):
    return np.sum(np.arange(1, x.shape[0] + 1) * x ** 4)


@_register("salomon", dims=(2, 5, 10), x0=_cyc(0.3, -0.2, 0.4), smooth=False, x_star=lambda n: _onp.zeros(n),
           f_star=0.0, source="Salomon 1996; Jamil & Yang 2013 #110",
           notes="||x|| is not differentiable at the origin")
def salomon(x):
    r = np.linalg.norm(x)
    return 1 - np.cos(2 * np.pi * r) + 0.1 * r


@_register("schaffer2", dims=(2,), x0=_pt(1.0, 0.5), x_star=_pt(0.0, 0.0), f_star=0.0,
           source="Schaffer N.2; Mishra 2006")
def schaffer2(x):
    num = np.sin(x[0] ** 2 - x[1] ** 2) ** 2 - 0.5
    den = (1 + 0.001 * (x[0] ** 2 + x[1] ** 2)) ** 2
    return 0.5 + num / den


_SCHAFFER4_Y = 1.253131831453285
_SCHAFFER4_F = 0.29257863203598056


@_register("schaffer4", dims=(2,), x0=_pt(1.0, 0.5), smooth=False, x_star=_pt(0.0, _SCHAFFER4_Y),
           f_star=_SCHAFFER4_F, source="Schaffer N.4; Mishra 2006 (f* = 0.292579)",
           notes="kink on |x1| = |x2|")
def schaffer4(x):
    num = np.cos(np.sin(np.abs(x[0] ** 2 - x[1] ** 2))) ** 2 - 0.5
    den = (1 + 0.001 * (x[0] ** 2 + x[1] ** 2)) ** 2
    return 0.5 + num / den


@_register("alpine1", dims=(2, 5, 10), x0=_cyc(0.5, -1.0, 2.0), smooth=False, x_star=lambda n: _onp.zeros(n),
           f_star=0.0, source="Rahnamayan et al. 2007; Jamil & Yang 2013 #6",
           notes="kinks where x_i (sin x_i + 0.1) = 0")
def alpine1(x):
    return np.sum(np.abs(x * np.sin(x) + 0.1 * x))


_ALPINE2_X = 7.917052684666207
_ALPINE2_G = _onp.sqrt(_ALPINE2_X) * _onp.sin(_ALPINE2_X)


@_register("alpine2", dims=(2, 5, 10), x0=_cyc(1.0, 2.0, 1.5), x_star=_full(_ALPINE2_X),
           f_star=lambda n: -_ALPINE2_G ** n, source="Clerc 1999; Jamil & Yang 2013 #7 (sign flipped: minimise)",
           notes="domain x > 0 (sqrt)")
def alpine2(x):
    return -np.prod(np.sqrt(x) * np.sin(x))


@_register("brown", dims=(2, 5, 10), x0=_cyc(0.5, -0.7), x_star=lambda n: _onp.zeros(n), f_star=0.0,
           source="Begambre & Laier 2009; Jamil & Yang 2013 #25",
           notes="array ** array with variable base and exponent; mathematically C^2, but d/d(exponent) "
                 "involves log(0) at x_star = 0, so AD derivatives there may be nan")
def brown(x):
    a = x[:-1] ** 2
    b = x[1:] ** 2
    return np.sum(a ** (b + 1) + b ** (a + 1))


@_register("chung_reynolds", dims=(2, 5, 10), x0=_cyc(0.5, -1.0), x_star=lambda n: _onp.zeros(n), f_star=0.0,
           source="Chung & Reynolds 1998; Jamil & Yang 2013 #34")
def chung_reynolds(x):
    return np.sum(x ** 2) ** 2


@_register("exponential", dims=(2, 5, 10), x0=_cyc(0.3, -0.2), x_star=lambda n: _onp.zeros(n), f_star=-1.0,
           source="Rahnamayan et al. 2007; Jamil & Yang 2013 #54")
def exponential(x):
    return -np.exp(-0.5 * np.sum(x ** 2))


@_register("happy_cat", dims=(2, 5, 10), x0=_full(0.5), smooth=False, x_star=_full(-1.0), f_star=0.0,
           source="Beyer & Finck 2012 (alpha = 1/8)", notes="kink on the sphere ||x||^2 = n")
def happy_cat(x):
    n = x.shape[0]
    r2 = x @ x
    return ((r2 - n) ** 2) ** 0.125 + (0.5 * r2 + np.sum(x)) / n + 0.5


@_register("bent_cigar", dims=(2, 5, 10), x0=_cyc(1.0, -0.5), x_star=lambda n: _onp.zeros(n), f_star=0.0,
           source="CEC 2013 / 2017 benchmark suite")
def bent_cigar(x):
    return x[0] ** 2 + 1e6 * np.sum(x[1:] ** 2)


@_register("discus", dims=(2, 5, 10), x0=_cyc(1.0, -0.5), x_star=lambda n: _onp.zeros(n), f_star=0.0,
           source="Hansen et al., BBOB 2009 f11")
def discus(x):
    return 1e6 * x[0] ** 2 + np.sum(x[1:] ** 2)


@_register("ellipsoid", dims=(2, 5, 10), x0=_full(1.0), x_star=lambda n: _onp.zeros(n), f_star=0.0,
           source="Hansen et al., BBOB 2009 f2 (conditioning 1e6)")
def ellipsoid(x):
    n = x.shape[0]
    w = 10.0 ** (6.0 * np.arange(n) / max(n - 1, 1))
    return np.sum(w * x ** 2)


_ZETTL_X = _onp.array([-0.029895985050660386, 0.0])
_ZETTL_F = -0.0037912372204688977


@_register("zettl", dims=(2,), x0=_pt(1.0, 1.0), x_star=lambda n: _ZETTL_X.copy(), f_star=_ZETTL_F,
           source="Schwefel 1981; Jamil & Yang 2013 #171 (f* = -0.003791)")
def zettl(x):
    return (x[0] ** 2 + x[1] ** 2 - 2 * x[0]) ** 2 + 0.25 * x[0]


_CIT_X = 1.3494066185560873
_CIT_F = -2.0626118708227374


@_register("cross_in_tray", dims=(2,), x0=_pt(1.0, 1.0), smooth=False, x_star=_full(_CIT_X), f_star=_CIT_F,
           source="Mishra 2006; Jamil & Yang 2013 #39 (f* = -2.06261)", notes="abs kinks")
def cross_in_tray(x):
    inner = np.abs(100 - np.sqrt(x[0] ** 2 + x[1] ** 2) / np.pi)
    return -0.0001 * (np.abs(np.sin(x[0]) * np.sin(x[1]) * np.exp(inner)) + 1) ** 0.1


_HOLDER_X = _onp.array([8.055023476292433, 9.66459001906185])
_HOLDER_F = -19.20850256788673


@_register("holder_table", dims=(2,), x0=_pt(1.0, 1.0), smooth=False, x_star=lambda n: _HOLDER_X.copy(),
           f_star=_HOLDER_F, source="Mishra 2006; Jamil & Yang 2013 #146 (f* = -19.2085)", notes="abs kinks")
def holder_table(x):
    return -np.abs(np.sin(x[0]) * np.cos(x[1]) * np.exp(np.abs(1 - np.sqrt(x[0] ** 2 + x[1] ** 2) / np.pi)))


_EGG_X = _onp.array([512.0, 404.23180514658696])
_EGG_F = -959.6406627208509


@_register("eggholder", dims=(2,), x0=_pt(100.0, 100.0), smooth=False, x_star=lambda n: _EGG_X.copy(),
           f_star=_EGG_F, source="Jamil & Yang 2013 #51 (f* = -959.6407 on the box [-512, 512]^2)",
           notes="minimiser lies on the boundary of the box; abs kinks")
def eggholder(x):
    a = x[1] + 47
    return -a * np.sin(np.sqrt(np.abs(x[0] / 2 + a))) - x[0] * np.sin(np.sqrt(np.abs(x[0] - a)))


@_register("drop_wave", dims=(2,), x0=_pt(0.5, 0.3), x_star=_pt(0.0, 0.0), f_star=-1.0,
           source="SFU, Drop-wave function",
           notes="C-infinity, but written with sqrt(r^2): AD through sqrt is singular at the origin")
def drop_wave(x):
    r2 = x[0] ** 2 + x[1] ** 2
    return -(1 + np.cos(12 * np.sqrt(r2))) / (0.5 * r2 + 2)


# =============================================================================
# Moré, Garbow & Hillstrom (1981) "Testing unconstrained optimization
# software", ACM TOMS 7(1): f = sum_i f_i(x)^2.
# =============================================================================

_PBS_X = _onp.array([1.0981593296997374e-05, 9.106146739867187])


@_register("powell_badly_scaled", dims=(2,), x0=_pt(0.0, 1.0), x_star=lambda n: _PBS_X.copy(), f_star=0.0,
           source="Moré, Garbow, Hillstrom 1981 #3")
def powell_badly_scaled(x):
    r = np.stack([1e4 * x[0] * x[1] - 1, np.exp(-x[0]) + np.exp(-x[1]) - 1.0001])
    return np.sum(r ** 2)


@_register("brown_badly_scaled", dims=(2,), x0=_pt(1.0, 1.0), x_star=_pt(1e6, 2e-6), f_star=0.0,
           source="Moré, Garbow, Hillstrom 1981 #4")
def brown_badly_scaled(x):
    r = np.stack([x[0] - 1e6, x[1] - 2e-6, x[0] * x[1] - 2])
    return np.dot(r, r)


_JS_I = _onp.arange(1.0, 11.0)
_JS_X = 0.2578252136703641
_JS_F = 124.36218235561483


@_register("jennrich_sampson", dims=(2,), x0=_pt(0.3, 0.4), x_star=_full(_JS_X), f_star=_JS_F,
           source="Moré, Garbow, Hillstrom 1981 #6, m = 10 (f* = 124.362)")
def jennrich_sampson(x):
    r = 2 + 2 * _JS_I - (np.exp(_JS_I * x[0]) + np.exp(_JS_I * x[1]))
    return np.sum(r ** 2)


@_register("helical_valley", dims=(3,), x0=_pt(-1.0, 0.0, 0.0), smooth=False, x_star=_pt(1.0, 0.0, 0.0),
           f_star=0.0, source="Moré, Garbow, Hillstrom 1981 #7; Fletcher & Powell 1963",
           notes="theta jumps across the half-plane x1 = 0, x2 < 0; smooth elsewhere")
def helical_valley(x):
    theta = np.where(x[0] > 0, 0.0, 0.5) + np.arctan(x[1] / x[0]) / (2 * np.pi)
    r = np.stack([10 * (x[2] - 10 * theta), 10 * (np.sqrt(x[0] ** 2 + x[1] ** 2) - 1), x[2]])
    return np.sum(r ** 2)


_BARD_Y = _onp.array([0.14, 0.18, 0.22, 0.25, 0.29, 0.32, 0.35, 0.39, 0.37, 0.58, 0.73, 0.96, 1.34, 2.10, 4.39])
_BARD_U = _onp.arange(1.0, 16.0)
_BARD_V = 16.0 - _BARD_U
_BARD_W = _onp.minimum(_BARD_U, _BARD_V)
_BARD_XSTAR = _onp.array([0.08241056041738389, 1.1330361144980894, 2.343695157021447])
_BARD_F = 0.008214877306578971


@_register("bard", dims=(3,), x0=_pt(1.0, 1.0, 1.0), x_star=lambda n: _BARD_XSTAR.copy(), f_star=_BARD_F,
           source="Moré, Garbow, Hillstrom 1981 #8 (f* = 8.21487e-3)")
def bard(x):
    r = _BARD_Y - (x[0] + _BARD_U / (_BARD_V * x[1] + _BARD_W * x[2]))
    return np.sum(r ** 2)


_GAUSS_Y = _onp.array([0.0009, 0.0044, 0.0175, 0.0540, 0.1295, 0.2420, 0.3521, 0.3989,
                       0.3521, 0.2420, 0.1295, 0.0540, 0.0175, 0.0044, 0.0009])
_GAUSS_T = (8.0 - _onp.arange(1.0, 16.0)) / 2.0
_GAUSS_XSTAR = _onp.array([0.39895613783858047, 1.0000190844860886, 0.0])
_GAUSS_F = 1.1279327696183855e-08


@_register("gaussian", dims=(3,), x0=_pt(0.4, 1.0, 0.0), x_star=lambda n: _GAUSS_XSTAR.copy(), f_star=_GAUSS_F,
           source="Moré, Garbow, Hillstrom 1981 #9 (f* = 1.12793e-8)")
def gaussian(x):
    r = x[0] * np.exp(-x[1] * (_GAUSS_T - x[2]) ** 2 / 2) - _GAUSS_Y
    return np.sum(r ** 2)


_MEYER_Y = _onp.array([34780., 28610., 23650., 19630., 16370., 13720., 11540., 9744.,
                       8261., 7030., 6005., 5147., 4427., 3820., 3307., 2872.])
_MEYER_T = 45.0 + 5.0 * _onp.arange(1.0, 17.0)
_MEYER_XSTAR = _onp.array([0.005609636586734234, 6181.346329074165, 345.22363404421964])
_MEYER_F = 87.94585517056987


@_register("meyer", dims=(3,), x0=_pt(0.02, 4000.0, 250.0), x_star=lambda n: _MEYER_XSTAR.copy(),
           f_star=_MEYER_F, source="Moré, Garbow, Hillstrom 1981 #10 (f* = 87.9458)",
           notes="very badly scaled")
def meyer(x):
    r = x[0] * np.exp(x[1] / (_MEYER_T + x[2])) - _MEYER_Y
    return np.sum(r ** 2)


_BOX_T = 0.1 * _onp.arange(1.0, 11.0)


@_register("box3d", dims=(3,), x0=_pt(0.0, 10.0, 20.0), x_star=_pt(1.0, 10.0, 1.0), f_star=0.0,
           source="Moré, Garbow, Hillstrom 1981 #12, m = 10")
def box3d(x):
    r = np.exp(-_BOX_T * x[0]) - np.exp(-_BOX_T * x[1]) - x[2] * (np.exp(-_BOX_T) - np.exp(-10 * _BOX_T))
    return np.sum(r ** 2)


_KO_Y = _onp.array([0.1957, 0.1947, 0.1735, 0.1600, 0.0844, 0.0627, 0.0456, 0.0342, 0.0323, 0.0235, 0.0246])
_KO_U = _onp.array([4.0, 2.0, 1.0, 0.5, 0.25, 0.167, 0.125, 0.1, 0.0833, 0.0714, 0.0625])
_KO_XSTAR = _onp.array([0.19280693441606445, 0.19128233315371754, 0.12305650830896014, 0.13606233260282377])
_KO_F = 3.0750560384923653e-04


@_register("kowalik_osborne", dims=(4,), x0=_pt(0.25, 0.39, 0.415, 0.39), x_star=lambda n: _KO_XSTAR.copy(),
           f_star=_KO_F, source="Moré, Garbow, Hillstrom 1981 #15 (f* = 3.07505e-4)")
def kowalik_osborne(x):
    u = _KO_U
    r = _KO_Y - x[0] * (u ** 2 + u * x[1]) / (u ** 2 + u * x[2] + x[3])
    return np.sum(r ** 2)


_BD_T = _onp.arange(1.0, 21.0) / 5.0
_BD_XSTAR = _onp.array([-11.594439904262698, 13.203630050681221, -0.403439474794374, 0.23677866867463415])
_BD_F = 85822.20162635633


@_register("brown_dennis", dims=(4,), x0=_pt(25.0, 5.0, -5.0, -1.0), x_star=lambda n: _BD_XSTAR.copy(),
           f_star=_BD_F, source="Moré, Garbow, Hillstrom 1981 #16, m = 20 (f* = 85822.2)")
def brown_dennis(x):
    t = _BD_T
    r = (x[0] + t * x[1] - np.exp(t)) ** 2 + (x[2] + x[3] * np.sin(t) - np.cos(t)) ** 2
    return np.sum(r ** 2)


_OS1_Y = _onp.array([0.844, 0.908, 0.932, 0.936, 0.925, 0.908, 0.881, 0.850, 0.818, 0.784, 0.751,
                     0.718, 0.685, 0.658, 0.628, 0.603, 0.580, 0.558, 0.538, 0.522, 0.506, 0.490,
                     0.478, 0.467, 0.457, 0.448, 0.438, 0.431, 0.424, 0.420, 0.414, 0.411, 0.406])
_OS1_T = 10.0 * _onp.arange(33.0)
_OS1_XSTAR = _onp.array([0.3754100455301074, 1.935846144784355, -1.4646863637383314,
                        0.012867533083403384, 0.0221227027707414])
_OS1_F = 5.464894697484841e-05


@_register("osborne1", dims=(5,), x0=_pt(0.5, 1.5, -1.0, 0.01, 0.02), x_star=lambda n: _OS1_XSTAR.copy(),
           f_star=_OS1_F, source="Moré, Garbow, Hillstrom 1981 #17 (f* = 5.46489e-5)")
def osborne1(x):
    model = x[0] + x[1] * np.exp(-_OS1_T * x[3]) + x[2] * np.exp(-_OS1_T * x[4])
    return np.sum((_OS1_Y - model) ** 2)


_BIGGS_T = 0.1 * _onp.arange(1.0, 14.0)
_BIGGS_Y = _onp.exp(-_BIGGS_T) - 5 * _onp.exp(-10 * _BIGGS_T) + 3 * _onp.exp(-4 * _BIGGS_T)


@_register("biggs_exp6", dims=(6,), x0=_pt(1.0, 2.0, 1.0, 1.0, 1.0, 1.0), x_star=_pt(1.0, 10.0, 1.0, 5.0, 4.0, 3.0),
           f_star=0.0, source="Moré, Garbow, Hillstrom 1981 #18, m = 13")
def biggs_exp6(x):
    t = _BIGGS_T
    r = x[2] * np.exp(-t * x[0]) - x[3] * np.exp(-t * x[1]) + x[5] * np.exp(-t * x[4]) - _BIGGS_Y
    return np.sum(r ** 2)


def _watson_mats(n):
    t = _onp.arange(1.0, 30.0) / 29.0
    j = _onp.arange(n)
    vand = t[:, None] ** j[None, :]
    dvand = _onp.zeros((29, n))
    dvand[:, 1:] = j[None, 1:] * t[:, None] ** (j[None, 1:] - 1)
    return vand, dvand


_WATSON = {n: _watson_mats(n) for n in (6, 9)}
_WATSON_X6 = _onp.array([-0.015725086073559748, 1.0124348721178547, -0.23299164956865612,
                         1.260430150107675, -1.513728987754352, 0.9929964566087761])
_WATSON_F6 = 2.287670053552368e-03


@_register("watson", dims=(6, 9), x0=lambda n: _onp.zeros(n), x_star=_only(6, lambda: _WATSON_X6.copy()),
           f_star=lambda n: {6: _WATSON_F6, 9: None}[n],
           source="Moré, Garbow, Hillstrom 1981 #20, m = 31 (f*(6) = 2.28767e-3, f*(9) = 1.39976e-6)")
def watson(x):
    vand, dvand = _WATSON[x.shape[0]]
    r = dvand @ x - (vand @ x) ** 2 - 1
    return np.sum(r ** 2) + x[0] ** 2 + (x[1] - x[0] ** 2 - 1) ** 2


_PEN1_X4 = _onp.full(4, 0.2500074995875379)
_PEN1_F4 = 2.2499775008999375e-05


@_register("penalty1", dims=(4, 10), x0=lambda n: _onp.arange(1.0, n + 1), x_star=_only(4, lambda: _PEN1_X4.copy()),
           f_star=lambda n: {4: _PEN1_F4, 10: None}[n],
           source="Moré, Garbow, Hillstrom 1981 #23 (f*(4) = 2.24997e-5, f*(10) = 7.08765e-5)")
def penalty1(x):
    a = 1e-5
    return np.sum((np.sqrt(a) * (x - 1)) ** 2) + (np.sum(x ** 2) - 0.25) ** 2


_PEN2_X4 = _onp.array([0.199999333336231, 0.1913166865525887, 0.4801014884587569, 0.5188454146162187])
_PEN2_F4 = 9.376293007355439e-06


@_register("penalty2", dims=(4, 10), x0=_full(0.5), x_star=_only(4, lambda: _PEN2_X4.copy()),
           f_star=lambda n: {4: _PEN2_F4, 10: None}[n],
           source="Moré, Garbow, Hillstrom 1981 #24 (f*(4) = 9.37629e-6, f*(10) = 2.93660e-4)")
def penalty2(x):
    n = x.shape[0]
    a = 1e-5
    i = np.arange(2, n + 1)
    y = np.exp(i / 10) + np.exp((i - 1) / 10)
    e = np.exp(x / 10)
    r2 = np.sqrt(a) * (e[1:] + e[:-1] - y)
    r3 = np.sqrt(a) * (e[1:] - np.exp(-1 / 10))
    r4 = np.sum(np.arange(n, 0, -1) * x ** 2) - 1
    return (x[0] - 0.2) ** 2 + np.sum(r2 ** 2) + np.sum(r3 ** 2) + r4 ** 2


@_register("variably_dimensioned", dims=(2, 5, 10), x0=lambda n: 1 - _onp.arange(1.0, n + 1) / n,
           x_star=_full(1.0), f_star=0.0, source="Moré, Garbow, Hillstrom 1981 #25")
def variably_dimensioned(x):
    j = np.arange(1, len(x) + 1)
    s = np.sum(j * (x - 1))
    return np.sum((x - 1) ** 2) + s ** 2 + s ** 4


@_register("trigonometric", dims=(2, 5, 10), x0=lambda n: _onp.full(n, 1.0 / n), f_star=0.0,
           source="Moré, Garbow, Hillstrom 1981 #26")
def trigonometric(x):
    n = x.shape[0]
    i = np.arange(1, n + 1)
    r = n - np.sum(np.cos(x)) + i * (1 - np.cos(x)) - np.sin(x)
    return np.sum(r ** 2)


@_register("brown_almost_linear", dims=(2, 5, 10), x0=_full(0.5), x_star=_full(1.0), f_star=0.0,
           source="Moré, Garbow, Hillstrom 1981 #27")
def brown_almost_linear(x):
    n = len(x)
    s = x.sum()
    return np.sum((x[:-1] + s - (n + 1)) ** 2) + (x.prod() - 1) ** 2


@_register("discrete_boundary_value", dims=(2, 5, 10),
           x0=lambda n: (_onp.arange(1.0, n + 1) / (n + 1)) * (_onp.arange(1.0, n + 1) / (n + 1) - 1),
           f_star=0.0, source="Moré, Garbow, Hillstrom 1981 #28")
def discrete_boundary_value(x):
    n = x.shape[0]
    h = 1.0 / (n + 1)
    t = np.arange(1, n + 1) * h
    xp = np.concatenate([[0.0], x, [0.0]])
    r = 2 * x - xp[:-2] - xp[2:] + h ** 2 * (x + t + 1) ** 3 / 2
    return np.sum(r ** 2)


@_register("broyden_tridiagonal", dims=(2, 5, 10), x0=_full(-1.0), f_star=0.0,
           source="Moré, Garbow, Hillstrom 1981 #30")
def broyden_tridiagonal(x):
    xp = np.concatenate((np.zeros(1), x, np.zeros(1)))
    xi = xp[1:-1]
    r = (3 - 2 * xi) * xi - xp[:-2] - 2 * xp[2:] + 1
    return np.sum(r ** 2)


def _broyden_band(n, ml=5, mu=1):
    i = _onp.arange(n)[:, None]
    j = _onp.arange(n)[None, :]
    return ((j >= i - ml) & (j <= i + mu) & (j != i)).astype(float)


_BROYDEN_BAND = {n: _broyden_band(n) for n in (2, 5, 10)}


@_register("broyden_banded", dims=(2, 5, 10), x0=_full(-1.0), f_star=0.0,
           source="Moré, Garbow, Hillstrom 1981 #31")
def broyden_banded(x):
    band = _BROYDEN_BAND[x.shape[0]]
    r = x * (2 + 5 * x ** 2) + 1 - band @ (x * (1 + x))
    return np.sum(r ** 2)


@_register("linear_full_rank", dims=(2, 5, 10), x0=_full(1.0), x_star=_full(-1.0), f_star=lambda n: float(n),
           source="Moré, Garbow, Hillstrom 1981 #32, m = 2n (f* = m - n)")
def linear_full_rank(x):
    n = x.shape[0]
    m = 2 * n
    s = 2 * np.sum(x) / m
    r = np.concatenate([x - s - 1, (-s - 1) * np.ones(m - n)])
    return np.sum(r ** 2)


@_register("linear_rank1", dims=(2, 5, 10), x0=_full(1.0),
           x_star=lambda n: _onp.eye(n)[0] * 3.0 / (4 * n + 1),
           f_star=lambda n: (2 * n) * (2 * n - 1) / (2.0 * (4 * n + 1)),
           source="Moré, Garbow, Hillstrom 1981 #33, m = 2n (f* = m(m-1)/(2(2m+1)))")
def linear_rank1(x):
    n = x.shape[0]
    j = np.arange(1, n + 1)
    i = np.arange(1, 2 * n + 1)
    r = i * np.dot(j, x) - 1
    return np.sum(r ** 2)


_CHEBY2 = _onp.array([(1 - 1 / _onp.sqrt(3.0)) / 2, (1 + 1 / _onp.sqrt(3.0)) / 2])


@_register("chebyquad", dims=(2, 4, 6, 8), x0=lambda n: _onp.arange(1.0, n + 1) / (n + 1),
           x_star=_only(2, lambda: _CHEBY2.copy()), f_star=lambda n: 0.0 if n < 8 else None,
           source="Moré, Garbow, Hillstrom 1981 #35, m = n (f* = 0 for n <= 7, 3.51687e-3 for n = 8)")
def chebyquad(x):
    n = x.shape[0]
    y = 2 * x - 1
    t_prev, t_cur = np.ones(n), y
    res = []
    for i in range(1, n + 1):
        ref = 0.0 if i % 2 == 1 else -1.0 / (i * i - 1)
        res.append(np.mean(t_cur) - ref)
        t_prev, t_cur = t_cur, 2 * y * t_cur - t_prev
    r = np.stack(res)
    return np.dot(r, r)


@_register("ext_freudenstein_roth", dims=(2, 4, 10), x0=_cyc(0.5, -2.0), x_star=_cyc(5.0, 4.0), f_star=0.0,
           source="Moré, Garbow, Hillstrom 1981 #2; extended form: Andrei 2008")
def ext_freudenstein_roth(x):
    a, b = x[0::2], x[1::2]
    r1 = -13 + a + ((5 - b) * b - 2) * b
    r2 = -29 + a + ((b + 1) * b - 14) * b
    return np.sum(r1 ** 2 + r2 ** 2)


# =============================================================================
# Statistics / machine-learning style objectives on small seeded data sets
# =============================================================================

def _make_classification(seed, m, d):
    rng = _onp.random.default_rng(seed)
    X = rng.standard_normal((m, d))
    w_true = rng.standard_normal(d)
    p = 1.0 / (1.0 + _onp.exp(-(X @ w_true)))
    t = (rng.random(m) < p).astype(float)
    return X, t


_LOGREG_X, _LOGREG_T = _make_classification(1234, 60, 5)
_LOGREG_S = 2.0 * _LOGREG_T - 1.0  # labels in {-1, +1}


@_register("logistic_l2", dims=(5,), x0=_cyc(0.1, -0.2, 0.3), source="L2-regularised logistic regression")
def logistic_l2(x):
    lam = 0.1
    margins = _LOGREG_S * (_LOGREG_X @ x)
    return np.mean(np.log1p(np.exp(-margins))) + 0.5 * lam * np.dot(x, x)


@_register("logistic_logaddexp", dims=(6,), x0=_cyc(0.1, -0.2, 0.3),
           source="logistic regression with intercept, log(1 + e^z) via logaddexp")
def logistic_logaddexp(x):
    w, b = x[:-1], x[-1]
    z = _LOGREG_X @ w + b
    return np.mean(np.logaddexp(0.0, z) - _LOGREG_T * z) + 0.05 * np.sum(w ** 2)


@_register("squared_hinge_svm", dims=(5,), x0=_cyc(0.1, -0.2, 0.3), smooth=False,
           source="L2-SVM (squared hinge loss), Mangasarian 2002", notes="C^1 only: kink of the Hessian at margins = 1")
def squared_hinge_svm(x):
    margins = _LOGREG_S * np.dot(_LOGREG_X, x)
    return np.mean(np.maximum(0.0, 1 - margins) ** 2) + 0.05 * x @ x


def _make_softmax_data(seed, m, d, k):
    rng = _onp.random.default_rng(seed)
    X = rng.standard_normal((m, d))
    labels = _onp.argmax(X @ rng.standard_normal((d, k)) + 0.5 * rng.standard_normal((m, k)), axis=1)
    return X, _onp.eye(k)[labels]


_SM_X, _SM_Y = _make_softmax_data(99, 50, 4, 3)


@_register("softmax_cross_entropy", dims=(12,), x0=lambda n: 0.1 * _onp.sin(_onp.arange(1.0, n + 1)),
           source="multinomial logistic regression (softmax cross-entropy + L2)",
           notes="uses the max-shift trick; f is smooth although np.max is not")
def softmax_cross_entropy(x):
    W = x.reshape(4, 3)
    Z = _SM_X @ W
    zmax = np.max(Z, axis=1, keepdims=True)
    logp = Z - zmax - np.log(np.sum(np.exp(Z - zmax), axis=1, keepdims=True))
    return -np.mean(np.sum(_SM_Y * logp, axis=1)) + 0.01 * np.sum(W ** 2)


def _make_regression(seed, m, d, noise=0.1):
    rng = _onp.random.default_rng(seed)
    X = rng.standard_normal((m, d))
    y = _onp.sin(X @ rng.standard_normal(d)) + noise * rng.standard_normal(m)
    return X, y


_MLP_X, _MLP_Y = _make_regression(7, 40, 3)


@_register("tanh_mlp", dims=(21,), x0=lambda n: 0.5 * _onp.cos(_onp.arange(n) * 1.3),
           source="one-hidden-layer tanh MLP, mean squared error (3-4-1)")
def tanh_mlp(x):
    W1 = x[:12].reshape((3, 4))
    b1 = x[12:16]
    w2 = x[16:20]
    b2 = x[20]
    H = np.tanh(_MLP_X @ W1 + b1)
    pred = np.dot(H, w2) + b2
    return np.mean((pred - _MLP_Y) ** 2)


@_register("log_sum_exp", dims=(2, 5, 10), x0=_cyc(0.5, -1.0, 2.0), source="log-sum-exp (softmax potential)",
           notes="unbounded below: no minimiser")
def log_sum_exp(x):
    return np.log(np.sum(np.exp(x)))


def _spd(seed, n, cond=50.0):
    rng = _onp.random.default_rng(seed)
    Q, _ = _onp.linalg.qr(rng.standard_normal((n, n)))
    eig = _onp.geomspace(1.0, cond, n)
    A = (Q * eig) @ Q.T
    A = 0.5 * (A + A.T)
    return A, rng.standard_normal(n)


_QUAD = {n: _spd(100 + n, n) for n in (2, 5, 10)}
_QUAD_XSTAR = {n: _onp.linalg.solve(A, b) for n, (A, b) in _QUAD.items()}


@_register("quadratic", dims=(2, 5, 10), x0=lambda n: _onp.zeros(n), x_star=lambda n: _QUAD_XSTAR[n].copy(),
           f_star=lambda n: float(-0.5 * _QUAD[n][1] @ _QUAD_XSTAR[n]), source="convex quadratic 1/2 x'Ax - b'x, A SPD")
def quadratic(x):
    A, b = _QUAD[x.shape[0]]
    return 0.5 * x @ A @ x - b @ x


_QUAD_E = {n: _spd(200 + n, n, cond=10.0) for n in (3, 6)}
_QUAD_E_XSTAR = {n: _onp.linalg.solve(A, b) for n, (A, b) in _QUAD_E.items()}


@_register("quadratic_einsum", dims=(3, 6), x0=_full(1.0), x_star=lambda n: _QUAD_E_XSTAR[n].copy(),
           f_star=lambda n: float(-0.5 * _QUAD_E[n][1] @ _QUAD_E_XSTAR[n]), source="convex quadratic via einsum")
def quadratic_einsum(x):
    A, b = _QUAD_E[len(x)]
    return 0.5 * np.einsum("i,ij,j->", x, A, x) - np.dot(b, x)


def _ridge_data(seed, m, n):
    rng = _onp.random.default_rng(seed)
    return rng.standard_normal((m, n)), rng.standard_normal(m)


_RIDGE = {n: _ridge_data(300 + n, 20, n) for n in (4, 8)}
_RIDGE_LAM = 0.3


def _ridge_solution(n):
    A, b = _RIDGE[n]
    return _onp.linalg.solve(A.T @ A + _RIDGE_LAM * _onp.eye(n), A.T @ b)


def _ridge_value(n):
    A, b = _RIDGE[n]
    xs = _ridge_solution(n)
    return float(0.5 * _onp.sum((A @ xs - b) ** 2) + 0.5 * _RIDGE_LAM * xs @ xs)


@_register("ridge", dims=(4, 8), x0=_full(0.5), x_star=_ridge_solution, f_star=_ridge_value,
           source="ridge regression (Hoerl & Kennard 1970)")
def ridge(x):
    A, b = _RIDGE[x.shape[0]]
    return 0.5 * np.linalg.norm(A @ x - b) ** 2 + 0.5 * _RIDGE_LAM * np.linalg.norm(x) ** 2


def _poisson_data(seed, m, d):
    rng = _onp.random.default_rng(seed)
    X = 0.5 * rng.standard_normal((m, d))
    y = rng.poisson(_onp.exp(X @ rng.standard_normal(d))).astype(float)
    return X, y


_POIS_X, _POIS_Y = _poisson_data(11, 80, 4)


@_register("poisson_regression", dims=(4,), x0=_full(0.1), source="Poisson GLM negative log-likelihood (log link)")
def poisson_regression(x):
    eta = _POIS_X @ x
    return np.mean(np.exp(eta) - _POIS_Y * eta) + 0.01 * np.sum(np.square(x))


def _robust_data(seed, m, d):
    rng = _onp.random.default_rng(seed)
    A = rng.standard_normal((m, d))
    b = A @ _onp.arange(1.0, d + 1) + 0.1 * rng.standard_normal(m)
    b = b + 10.0 * (rng.random(m) < 0.15)  # outliers
    return A, b


_PH_A, _PH_B = _robust_data(21, 30, 3)


@_register("pseudo_huber_regression", dims=(3,), x0=lambda n: _onp.zeros(n),
           source="robust regression with the pseudo-Huber loss (Charbonnier 1994)")
def pseudo_huber_regression(x):
    delta = 1.0
    r = _PH_A @ x - _PH_B
    return delta ** 2 * np.sum(np.sqrt(1 + (r / delta) ** 2) - 1)


@_register("log_cosh_regression", dims=(3,), x0=lambda n: _onp.zeros(n), source="log-cosh regression loss")
def log_cosh_regression(x):
    return np.mean(np.log(np.cosh(_PH_A @ x - _PH_B)))


def _mf_data(seed, m, k, rank):
    rng = _onp.random.default_rng(seed)
    return rng.standard_normal((m, rank)) @ rng.standard_normal((rank, k)) + 0.05 * rng.standard_normal((m, k))


_MF_M = _mf_data(31, 6, 5, 2)


@_register("matrix_factorization", dims=(22,), x0=lambda n: 0.3 * _onp.cos(0.7 * _onp.arange(n)),
           source="regularised low-rank matrix factorisation ||U V^T - M||_F^2")
def matrix_factorization(x):
    U = x[:12].reshape(6, 2)
    V = x[12:].reshape(5, 2)
    R = U @ V.T - _MF_M
    return 0.5 * np.trace(R.T @ R) + 0.005 * (np.sum(U ** 2) + np.sum(V ** 2))


def _tv_signal(n):
    rng = _onp.random.default_rng(41 + n)
    return _onp.where(_onp.arange(n) < n // 2, 0.0, 1.0) + 0.1 * rng.standard_normal(n)


_TV_Y = {n: _tv_signal(n) for n in (5, 10, 20)}


@_register("tv_denoise", dims=(5, 10, 20), x0=lambda n: _TV_Y[n].copy(),
           source="smoothed total-variation denoising (Rudin, Osher, Fatemi 1992)")
def tv_denoise(x):
    lam, eps = 0.5, 1e-2
    y = _TV_Y[x.shape[0]]
    return 0.5 * np.sum((x - y) ** 2) + lam * np.sum(np.sqrt(np.diff(x) ** 2 + eps ** 2))


_LAP_I = _onp.array([0, 1, 2, 3, 4, 5, 6, 7, 0, 2])
_LAP_J = _onp.array([1, 2, 3, 4, 5, 6, 7, 0, 4, 6])
_LAP_W = _onp.random.default_rng(51).uniform(0.5, 2.0, size=10)
_LAP_Y = _onp.random.default_rng(52).standard_normal(8)
_LAP_MU = 0.5


def _lap_solution(n):
    L = _onp.zeros((8, 8))
    for e in range(len(_LAP_I)):
        i, j, w = _LAP_I[e], _LAP_J[e], _LAP_W[e]
        L[i, i] += w
        L[j, j] += w
        L[i, j] -= w
        L[j, i] -= w
    return _onp.linalg.solve(L + _LAP_MU * _onp.eye(8), _LAP_MU * _LAP_Y)


def _lap_value(n):
    xs = _lap_solution(n)
    return float(0.5 * _onp.sum(_LAP_W * (xs[_LAP_I] - xs[_LAP_J]) ** 2) + 0.5 * _LAP_MU * _onp.sum((xs - _LAP_Y) ** 2))


@_register("laplacian_smoothing", dims=(8,), x0=lambda n: _onp.zeros(n), x_star=_lap_solution, f_star=_lap_value,
           source="graph-Laplacian regularised least squares (Zhu, Ghahramani, Lafferty 2003)",
           notes="integer-array (fancy) indexing x[idx]")
def laplacian_smoothing(x):
    return 0.5 * np.sum(_LAP_W * (x[_LAP_I] - x[_LAP_J]) ** 2) + 0.5 * _LAP_MU * np.sum((x - _LAP_Y) ** 2)


_GMLE_D = _onp.random.default_rng(61).normal(1.5, 0.7, size=50)


def _gmle_star(n):
    return _onp.array([_GMLE_D.mean(), _onp.log(_GMLE_D.std())])


def _gmle_value(n):
    return float(0.5 + _onp.log(_GMLE_D.std()) + 0.5 * _onp.log(2 * _onp.pi))


@_register("gaussian_mle", dims=(2,), x0=_pt(0.0, 0.0), x_star=_gmle_star, f_star=_gmle_value,
           source="Gaussian negative log-likelihood in (mu, log sigma)")
def gaussian_mle(x):
    mu, log_sigma = x[0], x[1]
    z = (_GMLE_D - mu) / np.exp(log_sigma)
    return np.mean(0.5 * z ** 2 + log_sigma) + 0.5 * np.log(2 * np.pi)


def _barrier_data(seed, m, n):
    rng = _onp.random.default_rng(seed)
    return rng.standard_normal((m, n)), 1.0 + rng.random(m)


_AC = {n: _barrier_data(70 + n, 4 * n, n) for n in (2, 5)}


@_register("analytic_center", dims=(2, 5), x0=lambda n: _onp.zeros(n),
           source="analytic centre of {Ax <= b} (Boyd & Vandenberghe 2004, 9.3)", notes="domain Ax < b")
def analytic_center(x):
    A, b = _AC[x.shape[0]]
    return -np.sum(np.log(b - A @ x))


# =============================================================================
# Introspection helpers and the loader
# =============================================================================

# Every ``np.<name>`` used inside objective bodies (kept in sync by a test).
# Beyond these names the bodies rely on (see ``api_usage()`` for a static list):
#   * operators + - * / ** @ and unary -, with Python scalars, numpy float64
#     scalars and constant float64 ndarrays on EITHER side of a traced value
#     (e.g. ``_JS_I * x[0]``, ``_BARD_Y - (...)``, ``band @ (...)``);
#   * ``**`` with int, float, constant-array and traced-array exponents
#     (``np.abs(x) ** np.arange(...)``, ``a ** (b + 1)`` in ``brown``);
#   * indexing: ``x[0]``, ``x[-1]``, ``x[i]`` (Python int), slices ``x[1:]``,
#     ``x[:-1]``, ``x[1:-1]``, ``x[:12]``, strided ``x[0::2]``, fancy ``x[idx]``;
#   * ``x.shape[0]`` / ``len(x)`` must be plain Python ints (used as dict keys,
#     in ``range`` and arithmetic); ``x.reshape(-1, 4)``, ``x.reshape((3, 4))``,
#     ``.T``, ``.sum()``, ``.prod()``; tuple-unpacking iteration over rows
#     (``a, b, c, d = x.reshape(-1, 4).T``);
#   * reductions with ``axis=`` / ``keepdims=True`` (``np.sum``, ``np.max``);
#   * ``np.stack`` of a list of 0-d values; ``np.concatenate`` mixing traced
#     arrays with Python lists ``[0.0]`` and constant arrays;
#   * comparisons (``x[0] > 0``) feeding ``np.where`` with constant branches;
#   * builtin ``sum`` over generators (starts from int 0), builtin ``abs``;
#   * ``np.sqrt(90)``, ``np.exp(data)``: np functions on non-traced constants.
NUMPY_API = (
    "np.abs", "np.arange", "np.arctan", "np.concatenate", "np.cos", "np.cosh", "np.cumsum", "np.diff",
    "np.dot", "np.e", "np.einsum", "np.exp", "np.linalg.norm", "np.log", "np.log1p", "np.logaddexp",
    "np.max", "np.maximum", "np.mean", "np.ones", "np.pi", "np.prod", "np.sin", "np.sqrt", "np.square",
    "np.stack", "np.sum", "np.tanh", "np.trace", "np.where", "np.zeros",
)


def _dotted(node):
    parts = []
    while isinstance(node, _ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, _ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def objective_function_nodes(source=None):
    """AST ``FunctionDef`` nodes of all functions decorated with ``_register``."""
    if source is None:
        with open(_CORPUS_PATH) as fh:
            source = fh.read()
    tree = _ast.parse(source)
    out = []
    for node in tree.body:
        if isinstance(node, _ast.FunctionDef):
            for dec in node.decorator_list:
                if isinstance(dec, _ast.Call) and isinstance(dec.func, _ast.Name) and dec.func.id == "_register":
                    out.append(node)
    return out


def api_usage(source=None):
    """Static inventory of what the objective bodies use.

    Returns a dict with sorted lists: ``np`` (np.* names), ``methods``
    (attribute access on non-module values, e.g. ``.reshape``, ``.T``),
    ``operators`` (binary/unary/compare operator node names), ``builtins``
    (builtin functions called) and ``indexing`` (kinds of subscripts).
    """
    np_names, methods, ops, builtins_, indexing = set(), set(), set(), set(), set()
    for fn in objective_function_nodes(source):
        body_nodes = [node for stmt in fn.body for node in _ast.walk(stmt)]  # decorators excluded
        inner = {id(node.value) for node in body_nodes if isinstance(node, _ast.Attribute)}
        for node in body_nodes:
            if isinstance(node, _ast.Attribute):
                if id(node) in inner:  # e.g. the ``np.linalg`` part of ``np.linalg.norm``
                    continue
                dotted = _dotted(node)
                if dotted is not None and dotted.startswith("np."):
                    np_names.add(dotted)
                else:
                    methods.add("." + node.attr)
            elif isinstance(node, _ast.BinOp):
                ops.add(type(node.op).__name__)
            elif isinstance(node, _ast.UnaryOp):
                ops.add("Unary" + type(node.op).__name__)
            elif isinstance(node, _ast.Compare):
                ops.update("Compare" + type(o).__name__ for o in node.ops)
            elif isinstance(node, _ast.Call) and isinstance(node.func, _ast.Name):
                if node.func.id in ("sum", "abs", "len", "range", "max", "min", "float"):
                    builtins_.add(node.func.id)
            elif isinstance(node, _ast.Subscript):
                sl = node.slice
                if isinstance(sl, _ast.Slice):
                    indexing.add("slice_step" if sl.step is not None else "slice")
                elif isinstance(sl, _ast.Tuple):
                    indexing.add("tuple")
                elif isinstance(sl, _ast.Constant) or (isinstance(sl, _ast.UnaryOp) and isinstance(sl.operand, _ast.Constant)):
                    indexing.add("int")
                elif isinstance(sl, _ast.Name) and sl.id.startswith("_"):
                    indexing.add("data_array_or_dict_key")
                else:
                    indexing.add("int_expr")
    return {
        "np": sorted(np_names),
        "methods": sorted(methods),
        "operators": sorted(ops),
        "builtins": sorted(builtins_),
        "indexing": sorted(indexing),
    }


def get_objective(name, objectives=None):
    for obj in (OBJECTIVES if objectives is None else objectives):
        if obj.name == name:
            return obj
    raise KeyError(name)


def load_corpus(np_module, return_module=False):
    """Re-execute this file in a fresh namespace with ``np`` bound to ``np_module``.

    Module-level data are always built with real numpy (``_onp``); after the
    source has run, the global ``np`` seen by every objective body is rebound
    to ``np_module``.  Returns the fresh ``OBJECTIVES`` list (or the module
    object itself if ``return_module`` is true).
    """
    with open(_CORPUS_PATH) as fh:
        source = fh.read()
    tag = getattr(np_module, "__name__", type(np_module).__name__).replace(".", "_")
    module = _types.ModuleType("_objective_corpus_" + tag)
    module.__file__ = _CORPUS_PATH
    exec(compile(source, _CORPUS_PATH, "exec"), module.__dict__)
    module.np = np_module
    return module if return_module else module.OBJECTIVES
