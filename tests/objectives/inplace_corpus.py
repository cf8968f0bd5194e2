import numpy as np

# ---------------------------------------------------------------------------
# Objectives that build arrays IN PLACE, as numpy code in the wild does: loops filling
# arrays, boundary padding, stencils, dynamic programming, Gauss-Seidel and Jacobi sweeps,
# factorizations and solvers written element by element, time stepping, ufunc.at
# assembly, out= arguments, in-place sorting. Written ONCE against the module-level ``np``
# (rebound by :func:`load_corpus`, e.g. to ``hessgrad.numpy``); constant data are plain
# numpy arrays built with ``_onp``. Every body is smooth at its starting point.
# ---------------------------------------------------------------------------

import dataclasses as _dataclasses
import os as _os
import types as _types
from typing import Callable as _Callable

import numpy as _onp

_PATH = _os.path.abspath(__file__)


@_dataclasses.dataclass(frozen=True)
class Objective:
    """``fn(x) -> scalar`` at ``x0`` (a 1-D float64 array of length ``n``). ``branches``:
    it branches in Python on the data (traces carry guards: another point may take another
    trace)."""

    name: str
    fn: _Callable
    n: int
    x0: _Callable
    branches: bool = False
    notes: str = ""


OBJECTIVES = []


def _objective(n, x0, branches=False, notes=""):
    def register(fn):
        OBJECTIVES.append(Objective(fn.__name__, fn, n, x0, branches, notes))
        return fn
    return register


def _spread(n, lo=-0.9, hi=1.1):
    return lambda: _onp.linspace(lo, hi, n) + 0.05 * _onp.sin(_onp.arange(n) * 1.7)


# --- the two objectives of issue 34 -------------------------------------------------------
@_objective(5, lambda: _onp.array([-0.4, 0.1, 0.5, 0.9, 1.3]), branches=True,
            notes="a Python branch on each x[i]: eager only")
def deceptive_like(x):
    g = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        if x[i] <= 0.0:
            g[i] = x[i]
        elif x[i] < 0.8:
            g[i] = -x[i] / 0.8 + 0.8
        else:
            g[i] = x[i] - 1.0
    return -(np.sum(g) / x.shape[0]) ** 2


@_objective(5, lambda: _onp.array([-0.4, 0.1, 0.5, 0.9, 1.3]))
def deceptive_where(x):
    g = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        g[i] = np.where(x[i] <= 0.0, x[i], np.where(x[i] < 0.8, -x[i] / 0.8 + 0.8, x[i] - 1.0))
    return -(np.sum(g) / x.shape[0]) ** 2


@_objective(6, _spread(6))
def padded(x):
    xx = np.zeros(x.shape[0] + 2)
    xx[1:-1] = x
    xx[0] = x[-1]
    xx[-1] = x[0]
    A = xx[:-2] * np.sin(xx[1:-1]) + np.sin(xx[2:])
    return np.sum(A ** 2)


# --- loops filling arrays -----------------------------------------------------------------
@_objective(6, _spread(6))
def recurrence_fill(x):
    s = np.empty(x.shape[0])
    s[0] = x[0]
    for i in range(1, x.shape[0]):
        s[i] = 0.7 * s[i - 1] + np.tanh(x[i] * s[i - 1] + x[i])
    return np.sum(s ** 2) + s[-1] * x[0]


@_objective(5, _spread(5, 0.2, 1.4))
def pairwise_table(x):
    n = x.shape[0]
    D = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            D[i, j] = np.sqrt((x[i] - x[j]) ** 2 + 0.5)
            D[j, i] = D[i, j]
    return np.sum(np.exp(-D)) + np.sum(D[0] * x)


@_objective(6, _spread(6))
def running_stats(x):
    mean = np.zeros(1)
    var = np.zeros(1)
    out = np.zeros((x.shape[0], 2))
    for k in range(x.shape[0]):
        delta = x[k] - mean[0]
        mean += delta / (k + 1)
        var[0] += delta * (x[k] - mean[0])
        out[k] = [mean[0], var[0] / (k + 1)]
    return np.sum(out[:, 0] ** 2 + out[:, 1])


# --- padding and stencils -----------------------------------------------------------------
@_objective(6, _spread(6))
def laplacian_dirichlet(x):
    u = np.zeros(x.shape[0] + 2)
    u[1:-1] = x
    u[0] = 0.5
    u[-1] = -0.25
    lap = np.empty(x.shape[0])
    lap[:] = u[:-2] - 2.0 * u[1:-1] + u[2:]
    return np.sum(lap ** 2) + np.sum(np.cos(x) * x)


@_objective(9, _spread(9))
def stencil_2d_torus(x):
    m = 3
    X = x.reshape(m, m)
    P = np.zeros((m + 2, m + 2))
    P[1:-1, 1:-1] = X
    P[0, 1:-1] = X[-1]
    P[-1, 1:-1] = X[0]
    P[:, 0] = P[:, -2]
    P[:, -1] = P[:, 1]
    L = P[:-2, 1:-1] + P[2:, 1:-1] + P[1:-1, :-2] + P[1:-1, 2:] - 4.0 * P[1:-1, 1:-1]
    return np.sum(L ** 2) + np.sum(X ** 4)


@_objective(8, _spread(8, -0.5, 0.8))
def upwind_advection(x):
    u = x.copy()
    for _ in range(4):
        flux = u[1:] - u[:-1]
        u[1:] -= 0.4 * flux
        u[0] -= 0.4 * (u[0] - u[-1])
    return np.sum(u ** 2 * (1.0 + 0.1 * u))


@_objective(6, _spread(6))
def ring_buffer(x):
    buf = np.zeros(3)
    total = np.zeros(())
    for v in x:
        buf[:-1] = buf[1:]
        buf[-1] = v
        total += np.sum(buf * np.array([0.2, 0.3, 0.5])) ** 2
    return total


# --- dynamic programming ------------------------------------------------------------------
def _softmin(a, b, c, gamma=0.5):
    m = np.minimum(np.minimum(a, b), c)
    return m - gamma * np.log(np.exp(-(a - m) / gamma) + np.exp(-(b - m) / gamma)
                              + np.exp(-(c - m) / gamma))


_DTW_Y = _onp.array([0.1, 0.7, -0.2, 0.4])


@_objective(5, _spread(5))
def soft_dtw(x):
    n, m = x.shape[0], _DTW_Y.shape[0]
    R = np.full((n + 1, m + 1), 1e6)
    R[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            cost = (x[i - 1] - _DTW_Y[j - 1]) ** 2
            R[i, j] = cost + _softmin(R[i - 1, j - 1], R[i - 1, j], R[i, j - 1])
    return R[n, m]


_LOGA = _onp.log(_onp.array([[0.8, 0.2], [0.3, 0.7]]))


@_objective(6, _spread(6))
def hmm_forward(x):
    T = x.shape[0]
    alpha = np.zeros((T, 2))
    alpha[0] = np.log(np.array([0.5, 0.5])) - 0.5 * (x[0] - np.array([-0.5, 0.8])) ** 2
    for t in range(1, T):
        for s in range(2):
            scores = alpha[t - 1] + _LOGA[:, s]
            top = np.max(scores)
            alpha[t, s] = top + np.log(np.sum(np.exp(scores - top)))
        alpha[t] += -0.5 * (x[t] - np.array([-0.5, 0.8])) ** 2
    last = alpha[-1]
    top = np.max(last)
    return -(top + np.log(np.sum(np.exp(last - top))))


@_objective(5, _spread(5, 0.1, 1.0))
def knapsack_relaxed(x):
    # value table V[k, w] of a smoothed knapsack over 5 items and capacities 0..3
    weights = [1, 2, 1, 3, 2]
    V = np.zeros((6, 4))
    for k in range(1, 6):
        V[k] = V[k - 1]
        wk = weights[k - 1]
        for w in range(wk, 4):
            take = V[k - 1, w - wk] + x[k - 1] ** 2 + 0.3 * x[k - 1]
            V[k, w] = 0.5 * (V[k, w] + take + np.sqrt((V[k, w] - take) ** 2 + 0.01))
    return V[5, 3]


# --- sweeps, solvers and factorizations written element by element -------------------------
_A5 = _onp.array([[4.0, 1.0, 0.0, 0.5, 0.0], [1.0, 5.0, 1.0, 0.0, 0.3],
                  [0.0, 1.0, 4.0, 1.0, 0.0], [0.5, 0.0, 1.0, 6.0, 1.0],
                  [0.0, 0.3, 0.0, 1.0, 4.0]])


@_objective(5, _spread(5))
def gauss_seidel(x):
    n = x.shape[0]
    b = np.sin(x) + x ** 2
    u = np.zeros(n)
    for _ in range(6):
        for i in range(n):
            u[i] = (b[i] - np.dot(_A5[i, :i], u[:i]) - np.dot(_A5[i, i + 1:], u[i + 1:])) / _A5[i, i]
    return np.sum(u ** 2) + np.dot(u, x)


@_objective(5, _spread(5, 0.2, 0.9))
def gauss_seidel_nonlinear(x):
    n = x.shape[0]
    u = x * 0.5
    for _ in range(4):
        for i in range(n):
            left = u[i - 1] if i > 0 else 0.0
            right = u[i + 1] if i < n - 1 else 0.0
            u[i] = (x[i] + left + right) / (3.0 + 0.1 * u[i] ** 2)
    return np.sum(u * np.exp(0.3 * u))


@_objective(7, _spread(7))
def jacobi_poisson(x):
    n = x.shape[0]
    u = np.zeros(n + 2)
    f = np.cos(x) * x
    h2 = (1.0 / (n + 1)) ** 2
    for _ in range(5):
        v = u.copy()
        v[1:-1] = 0.5 * (u[:-2] + u[2:] + h2 * f)
        u[:] = v
    return np.sum(u ** 2) * 100.0 + np.sum(f * u[1:-1])


@_objective(6, _spread(6, 0.3, 1.2))
def thomas_tridiagonal(x):
    n = x.shape[0]
    a = np.full(n, -1.0)
    b = 3.0 + x ** 2
    c = np.full(n, -1.0)
    d = np.sin(x) + 1.0
    cp = np.zeros(n)
    dp = np.zeros(n)
    cp[0] = c[0] / b[0]
    dp[0] = d[0] / b[0]
    for i in range(1, n):
        den = b[i] - a[i] * cp[i - 1]
        cp[i] = c[i] / den
        dp[i] = (d[i] - a[i] * dp[i - 1]) / den
    sol = np.zeros(n)
    sol[-1] = dp[-1]
    for i in range(n - 2, -1, -1):
        sol[i] = dp[i] - cp[i] * sol[i + 1]
    return np.sum(sol ** 2) + np.sum(sol * x)


@_objective(4, _spread(4, 0.2, 0.8))
def lu_doolittle_logdet(x):
    n = x.shape[0]
    A = _A5[:n, :n] + np.outer(x, x) * 0.5
    for i in range(n):
        A[i, i] += x[i] ** 2
    for k in range(n):
        for i in range(k + 1, n):
            A[i, k] /= A[k, k]
            A[i, k + 1:] -= A[i, k] * A[k, k + 1:]
    return np.sum(np.log(np.abs(np.diagonal(A).copy()))) + np.sum(A[np.tril_indices(n, -1)] ** 2)


@_objective(4, _spread(4, 0.1, 0.7))
def cholesky_in_place(x):
    n = x.shape[0]
    S = _A5[:n, :n] + np.diag(x ** 2) + 0.2 * np.outer(np.sin(x), np.sin(x))
    L = np.zeros((n, n))
    for j in range(n):
        L[j, j] = np.sqrt(S[j, j] - np.sum(L[j, :j] ** 2))
        for i in range(j + 1, n):
            L[i, j] = (S[i, j] - np.sum(L[i, :j] * L[j, :j])) / L[j, j]
    return 2.0 * np.sum(np.log(np.diagonal(L).copy())) + np.sum(L ** 2)


@_objective(5, _spread(5))
def forward_substitution(x):
    n = x.shape[0]
    Lm = np.tril(_A5) + np.diag(x ** 2)
    y = np.zeros(n)
    for i in range(n):
        y[i] = (np.cos(x[i]) - Lm[i, :i] @ y[:i]) / Lm[i, i]
    return np.sum(y ** 2) * 10.0


# --- time stepping on views of a trajectory -----------------------------------------------
@_objective(3, lambda: _onp.array([0.3, -0.2, 0.5]))
def euler_trajectory(x):
    steps = 8
    traj = np.zeros((steps + 1, 2))
    traj[0] = x[:2]
    for k in range(steps):
        state = traj[k]
        nxt = traj[k + 1]
        nxt[:] = state
        nxt[0] += 0.1 * state[1]
        nxt[1] -= 0.1 * (np.sin(state[0]) + x[2] * state[1])
    return np.sum(traj[-1] ** 2) + 0.1 * np.sum(traj ** 2)


@_objective(3, lambda: _onp.array([0.4, 0.1, 0.7]))
def rk4_oscillator(x):
    y = np.array([1.0, 0.0])
    y[0] = x[0]
    h = 0.2
    k = np.zeros((4, 2))
    for _ in range(5):
        k[0] = [y[1], -x[1] * y[0] - x[2] * y[1] ** 3]
        t = y + 0.5 * h * k[0]
        k[1] = [t[1], -x[1] * t[0] - x[2] * t[1] ** 3]
        t = y + 0.5 * h * k[1]
        k[2] = [t[1], -x[1] * t[0] - x[2] * t[1] ** 3]
        t = y + h * k[2]
        k[3] = [t[1], -x[1] * t[0] - x[2] * t[1] ** 3]
        y += h / 6.0 * (k[0] + 2.0 * k[1] + 2.0 * k[2] + k[3])
    return np.sum(y ** 2)


# --- ufunc.at, fill_diagonal, out=, sorting in place ---------------------------------------
_ELEMENTS = _onp.array([[0, 1], [1, 2], [2, 3], [3, 4], [1, 3]])


@_objective(5, _spread(5, 0.5, 1.5))
def fem_assembly(x):
    n = 5
    K = np.zeros((n, n))
    for e, (p, q) in enumerate(_ELEMENTS):
        k = x[e] ** 2 + 0.5
        np.add.at(K, (np.array([p, p, q, q]), np.array([p, q, p, q])),
                  np.array([k, -k, -k, k]))
    K[np.diag_indices(n)] += 1.0
    f = np.linspace(0.5, 1.0, n)
    return f @ K @ f + np.log(np.linalg.det(K))


@_objective(6, _spread(6))
def binned_accumulation(x):
    bins = np.zeros(3)
    idx = _onp.array([0, 2, 1, 0, 2, 2])
    np.add.at(bins, idx, np.exp(0.5 * x))
    np.multiply.at(bins, _onp.array([1, 1]), np.array([1.0 + x[0] ** 2, 0.5]))
    return np.sum(bins ** 2) - np.prod(bins)


@_objective(4, _spread(4, 0.3, 1.0))
def diagonal_and_out(x):
    n = x.shape[0]
    M = np.ones((n, n)) * 0.1
    np.fill_diagonal(M, x ** 2 + 1.0)
    np.multiply(M, np.cos(x)[:, None], out=M)
    w = np.empty(n)
    np.dot(M, x, out=w)
    np.exp(-w, out=w)
    return np.sum(w) + np.sum(M * M)


@_objective(5, _onp.array([0.9, -0.3, 0.2, 1.4, -1.1]).copy)
def sorted_weights(x):
    a = x ** 3 + x
    a.sort()
    b = np.empty(a.shape[0])
    b[:] = a
    b[::2] *= 2.0
    return np.sum(b * np.arange(1.0, 6.0)) + np.sum(a ** 2)


@_objective(4, _spread(4, 0.2, 0.9))
def power_iteration_out(x):
    A = _A5[:4, :4] + np.diag(x)
    v = np.ones(4)
    w = np.empty(4)
    for _ in range(6):
        np.dot(A, v, out=w)
        v[:] = w
        v /= np.sqrt(np.sum(v ** 2))
    return v @ A @ v + np.sum(v * x)


def load_corpus(np_module):
    """This file run again in a fresh namespace with ``np`` bound to ``np_module``; returns
    its ``OBJECTIVES``."""
    with open(_PATH) as fh:
        source = fh.read()
    tag = getattr(np_module, "__name__", type(np_module).__name__).replace(".", "_")
    module = _types.ModuleType("_inplace_corpus_" + tag)
    module.__file__ = _PATH
    exec(compile(source, _PATH, "exec"), module.__dict__)
    module.np = np_module
    return module.OBJECTIVES
