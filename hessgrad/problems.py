"""Built-in test objectives with deterministic data: a registry for demos, tests and benchmarks.

Every problem is generated from ``seed`` alone (no downloads) and is written once against an
array namespace ``xp`` (``hessgrad.numpy`` for :attr:`Problem.fun`; the benchmark passes
autograd's, JAX's or a PyTorch shim), so the same mathematics runs in every engine.

=============  ==============================================================  ==========
name           objective                                                       default n
=============  ==============================================================  ==========
rosenbrock     extended Rosenbrock ``sum 100 (x[i+1] - x[i]^2)^2 + (1-x[i])^2``  100
logistic       L2-regularised logistic regression, 1000 rows                    50
mlp            tanh MLP regression (2 hidden layers), flat parameter vector     353
quadratic      ``x^T A x / 2 - b^T x`` with ``A = Q diag(lambdas) Q^T``           100
saddle         ``x^T S x / 2 + sum(x^4) / 4`` at its saddle point ``x = 0``      50
=============  ==============================================================  ==========

Constrained problems (``min f(x) s.t. cl <= c(x) <= cu, lb <= x <= ub``: Hock-Schittkowski,
optimal control, PDE-constrained, ... with known optima) have their own registry,
``problems.constrained`` (:mod:`hessgrad.problems_constrained`): ``constrained.names()``,
``constrained.get("hs071")``.

>>> from hessgrad import problems
>>> problems.names()
['logistic', 'mlp', 'quadratic', 'rosenbrock', 'saddle']
>>> p = problems.get("quadratic", n=4, seed=0)
>>> p.n, p.exact["eigenvalues"].tolist()
(4, [1.0, 10.0, 100.0, 1000.0])
>>> bool(np.isclose(float(p.fun(p.exact["minimizer"])), p.exact["minimum"]))
True
"""

import inspect
import numbers
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Problem", "get", "names", "describe", "constrained"]


@dataclass(frozen=True, eq=False)
class Problem:
    """A ready objective.

    Attributes:
        name: registry name.
        fun: scalar function of a flat float64 vector of length ``n``, written with
            ``hessgrad.numpy`` (differentiable to any order).
        x0: the default starting / analysis point, shape ``(n,)``.
        n: number of variables.
        description: one line.
        exact: known facts (``eigenvalues`` of the Hessian at ``x0``, ``trace``,
            ``condition_number``, ``negative_count``, ``minimizer``, ``minimum``, ...);
            empty when nothing is known in closed form.
        data: the generated data and constants (``X``, ``y``, ``A``, ``b``, ...).
        reference: hand-written numpy implementations, ``{"value", "grad", "hvp",
            "hessian"}`` (a subset), each a function of ``x`` (and ``v`` for ``hvp``).
        builder: ``builder(xp, const)`` returns the objective written against the array
            namespace ``xp``; ``const`` converts a numpy constant for that namespace.
    """

    name: str
    fun: object
    x0: np.ndarray
    n: int
    description: str
    exact: dict = field(default_factory=dict)
    data: dict = field(default_factory=dict)
    reference: dict = field(default_factory=dict)
    builder: object = None
    seed: int = 0

    def fun_for(self, xp, const=None):
        """The objective written with another numpy-like namespace (for benchmarks)."""
        return self.builder(xp, const if const is not None else (lambda a: a))

    def __repr__(self):
        facts = f", exact={sorted(self.exact)}" if self.exact else ""
        return f"Problem({self.name!r}, n={self.n}, seed={self.seed}{facts})"


_REGISTRY = {}


def _register(name, default_n, description):
    def deco(make):
        _REGISTRY[name] = (make, default_n, description)
        return make
    return deco


def names():
    """Sorted names of the built-in problems."""
    return sorted(_REGISTRY)


def describe():
    """``{name: (default n, description)}`` for every built-in problem (``mlp``'s size is
    set by its architecture: 353 for the default ``hidden=16``)."""
    return {k: (v[1] if v[1] is not None else 353, v[2])
            for k, v in sorted(_REGISTRY.items())}


def get(name, n=None, seed=0, **options):
    """Build the built-in problem ``name`` with ``n`` variables from ``seed``.

    Args:
        name: one of :func:`names`.
        n: number of variables (``None``: the problem's default). ``mlp`` has a size
            fixed by its architecture; choose it with ``hidden=`` instead.
        seed: int seed of all generated data and of ``x0``.
        **options: problem-specific options (``rosenbrock``: none; ``logistic``: ``m``,
            ``lam``; ``mlp``: ``hidden``, ``m``; ``quadratic``: ``eigenvalues``;
            ``saddle``: ``negative``).

    Returns:
        :class:`Problem`.

    Raises:
        KeyError: unknown name (the message lists the known ones).
        ValueError: a bad ``n``, ``seed`` or option.

    >>> get("rosenbrock", n=3).x0.shape
    (3,)
    >>> get("rosenbrok")
    Traceback (most recent call last):
    ...
    KeyError: "unknown problem 'rosenbrok'; known problems: logistic, mlp, quadratic, rosenbrock, saddle"
    """
    if not isinstance(name, str) or name not in _REGISTRY:
        raise KeyError(f"unknown problem {name!r}; known problems: {', '.join(names())}")
    make, default_n, _ = _REGISTRY[name]
    if n is not None and (isinstance(n, bool) or not isinstance(n, numbers.Integral)):
        raise ValueError(f"problems.get({name!r}): n must be an int or None, got {n!r}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"problems.get({name!r}): seed must be an int >= 0, got {seed!r}")
    allowed = list(inspect.signature(make).parameters)[2:]
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise TypeError(f"problems.get({name!r}): unknown option(s) {', '.join(unknown)}; "
                        f"{name} accepts {', '.join(allowed) if allowed else 'no options'}")
    return make(default_n if n is None else int(n), int(seed), **options)


def _check_n(name, n, minimum):
    if n < minimum:
        raise ValueError(f"problems.get({name!r}): n must be >= {minimum}, got {n}")


def _finish(name, builder, x0, description, seed, **facts):
    from . import numpy as hnp

    return Problem(name=name, fun=builder(hnp, lambda a: a), x0=np.asarray(x0, np.float64),
                   n=int(np.size(x0)), description=description, builder=builder, seed=seed,
                   **facts)


def _rotation(rng, n):
    """A random orthogonal matrix (Haar distributed: QR of a Gaussian, signs fixed)."""
    Q, R = np.linalg.qr(rng.standard_normal((n, n)))
    return Q * np.sign(np.diag(R))


# --------------------------------------------------------------------------- rosenbrock

@_register("rosenbrock", 100, "extended Rosenbrock function (SciPy's rosen), minimum 0 at "
                              "x = 1")
def _rosenbrock(n, seed):
    from scipy.optimize import rosen, rosen_der, rosen_hess, rosen_hess_prod

    _check_n("rosenbrock", n, 2)
    rng = np.random.default_rng(seed)
    # The classic start (-1.2, 1, -1.2, 1, ...), perturbed by the seed.
    x0 = np.where(np.arange(n) % 2 == 0, -1.2, 1.0) + 0.1 * rng.standard_normal(n)

    def builder(xp, const):
        def rosenbrock(x):
            return xp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        return rosenbrock

    return _finish("rosenbrock", builder, x0, f"extended Rosenbrock, n={n}", seed,
                   exact={"minimizer": np.ones(n), "minimum": 0.0},
                   reference={"value": rosen, "grad": rosen_der, "hvp": rosen_hess_prod,
                              "hessian": rosen_hess})


# --------------------------------------------------------------------------- logistic

@_register("logistic", 50, "L2-regularised logistic regression on 1000 synthetic rows")
def _logistic(d, seed, m=1000, lam=1e-3):
    from scipy.special import expit

    _check_n("logistic", d, 1)
    if not (isinstance(m, numbers.Integral) and m >= 1):
        raise ValueError(f"problems.get('logistic'): m must be an int >= 1, got {m!r}")
    if not lam >= 0:
        raise ValueError(f"problems.get('logistic'): lam must be >= 0, got {lam!r}")
    rng = np.random.default_rng(seed)
    # Feature scales from 1 down to 0.03 make the Hessian moderately ill-conditioned.
    X = rng.standard_normal((m, d)) * np.logspace(0.0, -1.5, d)
    w_true = rng.standard_normal(d) / np.logspace(0.0, -1.5, d) / np.sqrt(d)
    y = np.where(X @ w_true + 0.5 * rng.standard_normal(m) > 0, 1.0, -1.0)
    x0 = np.zeros(d)
    lam = float(lam)

    def builder(xp, const):
        Xc, yc = const(X), const(y)

        def logistic(w):
            margins = -yc * (Xc @ w)
            return xp.mean(xp.logaddexp(0.0, margins)) + 0.5 * lam * xp.sum(w * w)
        return logistic

    # Hand-written references: s = sigmoid(-y X w); H = X^T diag(s (1 - s)) X / m + lam I.
    def value(w):
        return float(np.mean(np.logaddexp(0.0, -y * (X @ w))) + 0.5 * lam * (w @ w))

    def grad(w):
        return X.T @ (-y * expit(-y * (X @ w))) / m + lam * w

    def hvp(w, v):
        s = expit(-y * (X @ w))
        return X.T @ (s * (1 - s) * (X @ v)) / m + lam * v

    def hessian(w):
        s = expit(-y * (X @ w))
        return (X.T * (s * (1 - s))) @ X / m + lam * np.eye(d)

    return _finish("logistic", builder, x0,
                   f"L2-regularised logistic regression, m={m} rows, d={d}, lam={lam:g}",
                   seed, exact={"hessian_lower_bound": lam}, data={"X": X, "y": y, "lam": lam},
                   reference={"value": value, "grad": grad, "hvp": hvp, "hessian": hessian})


# --------------------------------------------------------------------------- mlp

@_register("mlp", None, "tanh MLP regression (3 -> h -> h -> 1), flat parameter vector")
def _mlp(n, seed, hidden=16, m=128):
    if not (isinstance(hidden, numbers.Integral) and hidden >= 1):
        raise ValueError(f"problems.get('mlp'): hidden must be an int >= 1, got {hidden!r}")
    if not (isinstance(m, numbers.Integral) and m >= 1):
        raise ValueError(f"problems.get('mlp'): m must be an int >= 1, got {m!r}")
    d_in, h = 3, int(hidden)
    shapes = [(d_in, h), (h,), (h, h), (h,), (h, 1), (1,)]
    sizes = [int(np.prod(s)) for s in shapes]
    size = sum(sizes)
    if n is not None and n != size:
        raise ValueError(f"problems.get('mlp'): the MLP with hidden={h} has {size} "
                         f"parameters, got n={n}; leave n unset and choose the size with "
                         f"hidden= (n = 3h + h + h^2 + h + h + 1)")
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2.0, 2.0, size=(m, d_in))
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] / 2.0 + 0.05 * rng.standard_normal(m)
    # Glorot-style initialisation, zero biases.
    x0 = np.concatenate([
        (rng.standard_normal(s) / np.sqrt(s[0])).ravel() if len(s) == 2 else np.zeros(s)
        for s in shapes])
    offsets = np.cumsum([0] + sizes)

    def builder(xp, const):
        Xc, yc = const(X), const(y)

        def mlp(theta):
            W1, b1, W2, b2, W3, b3 = [xp.reshape(theta[offsets[i]:offsets[i + 1]], shapes[i])
                                      for i in range(len(shapes))]
            a1 = xp.tanh(Xc @ W1 + b1)
            a2 = xp.tanh(a1 @ W2 + b2)
            pred = xp.reshape(a2 @ W3 + b3, (m,))
            return 0.5 * xp.mean((pred - yc) ** 2)
        return mlp

    return _finish("mlp", builder, x0,
                   f"tanh MLP regression 3 -> {h} -> {h} -> 1 ({size} parameters), "
                   f"{m} samples, at initialisation", seed,
                   data={"X": X, "y": y, "shapes": shapes, "hidden": h})


# --------------------------------------------------------------------------- quadratic

@_register("quadratic", 100, "x^T A x / 2 - b^T x with a prescribed spectrum (eigenvalues "
                             "log-spaced in [1, 1000])")
def _quadratic(n, seed, eigenvalues=None):
    _check_n("quadratic", n, 1)
    if eigenvalues is None:
        lambdas = np.logspace(0.0, 3.0, n)
    else:
        lambdas = np.sort(np.asarray(eigenvalues, dtype=np.float64).ravel())
        if lambdas.size != n:
            raise ValueError(f"problems.get('quadratic'): eigenvalues has {lambdas.size} "
                             f"entries, expected n={n}")
        if not np.all(np.isfinite(lambdas)):
            raise ValueError("problems.get('quadratic'): eigenvalues must be finite")
    rng = np.random.default_rng(seed)
    Q = _rotation(rng, n)
    A = (Q * lambdas) @ Q.T
    A = 0.5 * (A + A.T)
    b = rng.standard_normal(n)
    x0 = np.zeros(n)
    facts = {"eigenvalues": lambdas, "eigenvectors": Q, "trace": float(lambdas.sum()),
             "negative_count": int(np.sum(lambdas < 0))}
    absl = np.abs(lambdas)
    facts["condition_number"] = float(absl.max() / absl.min()) if absl.min() > 0 else np.inf
    if np.all(lambdas > 0):
        xstar = Q @ ((Q.T @ b) / lambdas)
        facts["minimizer"] = xstar
        facts["minimum"] = float(-0.5 * b @ xstar)

    def builder(xp, const):
        Ac, bc = const(A), const(b)

        def quadratic(x):
            return 0.5 * xp.sum(x * (Ac @ x)) - xp.sum(bc * x)
        return quadratic

    return _finish("quadratic", builder, x0,
                   f"quadratic with prescribed spectrum in [{lambdas[0]:g}, {lambdas[-1]:g}], "
                   f"n={n}", seed, exact=facts, data={"A": A, "b": b},
                   reference={"value": lambda x: float(0.5 * x @ A @ x - b @ x),
                              "grad": lambda x: A @ x - b, "hvp": lambda x, v: A @ v,
                              "hessian": lambda x: A.copy()})


# --------------------------------------------------------------------------- saddle

@_register("saddle", 50, "x^T S x / 2 + sum(x^4) / 4 at its saddle x = 0, with a few known "
                         "negative Hessian eigenvalues")
def _saddle(n, seed, negative=3):
    _check_n("saddle", n, 2)
    if not (isinstance(negative, numbers.Integral) and 1 <= negative < n):
        raise ValueError(f"problems.get('saddle'): negative must be an int with "
                         f"1 <= negative < n={n}, got {negative!r}")
    k = int(negative)
    # A spectral gap around 0 ([-0.5, 1]) keeps eigenvalue counts well defined.
    lambdas = np.concatenate([-np.linspace(2.0, 0.5, k), np.logspace(0.0, 2.0, n - k)])
    rng = np.random.default_rng(seed)
    Q = _rotation(rng, n)
    S = (Q * lambdas) @ Q.T
    S = 0.5 * (S + S.T)
    x0 = np.zeros(n)

    def builder(xp, const):
        Sc = const(S)

        def saddle(x):
            return 0.5 * xp.sum(x * (Sc @ x)) + 0.25 * xp.sum(x ** 4)
        return saddle

    return _finish("saddle", builder, x0,
                   f"saddle x^T S x / 2 + sum(x^4) / 4 at x = 0, n={n}, {k} negative "
                   f"eigenvalues", seed,
                   exact={"eigenvalues": lambdas, "eigenvectors": Q,
                          "trace": float(lambdas.sum()), "negative_count": k,
                          "condition_number": float(np.abs(lambdas).max()
                                                    / np.abs(lambdas).min())},
                   data={"S": S},
                   reference={"value": lambda x: float(0.5 * x @ S @ x + 0.25 * np.sum(x ** 4)),
                              "grad": lambda x: S @ x + x ** 3,
                              "hvp": lambda x, v: S @ v + 3 * x ** 2 * v,
                              "hessian": lambda x: S + np.diag(3 * x ** 2)})


from . import problems_constrained as constrained  # noqa: E402 - the constrained registry
