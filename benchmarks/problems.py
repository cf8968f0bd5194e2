"""The benchmark objectives, written once per engine, and their hand-written numpy references.

* extended Rosenbrock: ``sum(100 (x[1:] - x[:-1]**2)**2 + (1 - x[:-1])**2)`` (SciPy's
  ``rosen``), at a fixed random point;
* L2-regularised logistic regression: ``mean(logaddexp(0, -y * (X @ w))) + lam/2 ||w||^2``
  with labels ``y`` in {-1, +1}, data from a fixed seed; every engine takes ``(w, X, y)``
  so that JAX traces the data as arguments, not as baked-in constants.

The references are plain numpy/SciPy: ``rosen``, ``rosen_der``, ``rosen_hess_prod``,
``rosen_hess``, and the analytic logistic gradient ``-X^T (y s) / m + lam w`` with
``s = sigmoid(-y X w)``, HVP ``X^T (s (1 - s) X v) / m + lam v`` and Hessian
``X^T diag(s (1 - s)) X / m + lam I``.
"""

import numpy as np
from scipy.optimize import rosen, rosen_der, rosen_hess, rosen_hess_prod
from scipy.special import expit

LAM = 1e-2


# --------------------------------------------------------------------------- data

def rosen_point(n, seed=0):
    """A fixed point near the valley: 1 + 0.5 * N(0, 1) per coordinate."""
    return 1.0 + 0.5 * np.random.default_rng(seed).standard_normal(n)


def logistic_data(m, d, seed=0):
    """``(X, y, w)``: features N(0, 1), labels from a noisy linear model, a start point."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, d))
    w_true = rng.standard_normal(d) / np.sqrt(d)
    y = np.where(X @ w_true + 0.5 * rng.standard_normal(m) > 0, 1.0, -1.0)
    w = 0.1 * rng.standard_normal(d) / np.sqrt(d)
    return X, y, w


# --------------------------------------------------------------------------- numpy references

def np_rosen_value_and_grad(x):
    return rosen(x), rosen_der(x)


np_rosen_grad = rosen_der
np_rosen_hvp = rosen_hess_prod
np_rosen_hessian = rosen_hess


def np_logistic_value_and_grad(w, X, y, lam=LAM):
    t = -y * (X @ w)
    value = np.mean(np.logaddexp(0.0, t)) + 0.5 * lam * (w @ w)
    grad = X.T @ (-y * expit(t)) / X.shape[0] + lam * w
    return value, grad


def np_logistic_grad(w, X, y, lam=LAM):
    return X.T @ (-y * expit(-y * (X @ w))) / X.shape[0] + lam * w


def np_logistic_hvp(w, X, y, v, lam=LAM):
    s = expit(-y * (X @ w))
    return X.T @ (s * (1.0 - s) * (X @ v)) / X.shape[0] + lam * v


def np_logistic_hessian(w, X, y, lam=LAM):
    s = expit(-y * (X @ w))
    H = (X.T * (s * (1.0 - s))) @ X / X.shape[0]
    H[np.diag_indices_from(H)] += lam
    return H


# --------------------------------------------------------------------------- per engine

def per_engine(peers, make, make_torch=None):
    """``(hessgrad, autograd, jax, torch)`` versions of one objective: ``make(xp)`` with each
    engine's numpy-like namespace (torch's from ``make_torch(torch)`` where its spelling
    differs); None for a peer that is not installed."""
    import hessgrad.numpy as hnp

    anp = peers["autograd"][1] if peers["autograd"] else None
    jnp = peers["jax"][1] if peers["jax"] else None
    torch = peers["torch"]
    return (make(hnp), anp and make(anp), jnp and make(jnp),
            torch and (make_torch or make)(torch))


def rosen_for(xp):
    """Rosenbrock written with the numpy-like namespace ``xp`` (hessgrad.numpy,
    autograd.numpy, jax.numpy or torch: all spell it the same way)."""
    def f(x):
        return xp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    return f


def logistic_for(xp, lam=LAM):
    """The logistic loss ``f(w, X, y)`` in ``xp`` (hessgrad.numpy, autograd.numpy, jax.numpy)."""
    def f(w, X, y):
        return xp.mean(xp.logaddexp(0.0, -y * (X @ w))) + 0.5 * lam * xp.sum(w * w)
    return f


def logistic_torch(torch, lam=LAM):
    """The logistic loss in torch (``torch.logaddexp`` wants two tensors)."""
    def f(w, X, y):
        t = -y * (X @ w)
        return torch.mean(torch.logaddexp(torch.zeros_like(t), t)) + 0.5 * lam * torch.sum(w * w)
    return f
