"""``check_grads``: derivatives against central finite differences, recursively to any order,
in forward and reverse mode (every mixed combination at order 2).

Complex inputs are perturbed along complex directions (real and imaginary parts at once), so
the derivative checked is the R-linear one of a function of complex numbers, as hessgrad
computes it (JAX's convention): the JVP against ``(f(x + eps v) - f(x - eps v)) / (2 eps)``,
the VJP ``g`` of a cotangent ``u`` through the pairing ``Re(sum(g * v)) = Re(sum(u * J v))``
(no conjugation)."""

import numpy as np

from .engine.nest import flatten
from .engine.tensor import Tensor
from .transforms import jvp, vjp


def _inexact(v):
    """``v`` as a numpy array of float64, or complex128 when it is complex."""
    a = np.asarray(v.numpy() if isinstance(v, Tensor) else v)
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def _leaves(x):
    return [_inexact(v) for v in flatten(x)]


def _dot(a, b):
    """``Re(sum(a * b))`` over the leaves: the real pairing under which a VJP is the
    transpose of its JVP."""
    return float(sum(np.sum(x * y).real for x, y in zip(_leaves(a), _leaves(b))))


def _is_complex(a):
    dtype = a.dtype if isinstance(a, (Tensor, np.ndarray, np.generic)) else np.asarray(a).dtype
    return np.dtype(dtype).kind == "c"


def _random_like(args, rng):
    """A random direction per argument: real for real arguments, complex (independent real
    and imaginary parts) for complex ones."""
    out = []
    for a in args:
        shape = np.shape(a) if not isinstance(a, Tensor) else tuple(a.shape)
        d = rng.standard_normal(shape)
        out.append(d + 1j * rng.standard_normal(shape) if _is_complex(a) else d)
    return tuple(out)


def _shift(args, v, eps):
    return tuple(_inexact(a) + eps * d for a, d in zip(args, v))


def _numeric(f, args, v, eps):
    """Central difference of ``f`` along ``v`` (leaves of the output)."""
    hi, lo = _leaves(f(*_shift(args, v, eps))), _leaves(f(*_shift(args, v, -eps)))
    return [(h - l) / (2 * eps) for h, l in zip(hi, lo)]


def _close(exact, numeric, atol, rtol, what):
    if not abs(exact - numeric) <= atol + rtol * abs(numeric):
        raise AssertionError(f"check_grads: {what} derivative is wrong: exact {exact!r}, "
                             f"finite differences {numeric!r} (atol={atol}, rtol={rtol})")


def check_jvp(f, args, *, eps=1e-6, atol=1e-6, rtol=1e-6, rng=None):
    """Forward mode: ``J v`` against ``(f(x + eps v) - f(x - eps v)) / (2 eps)``."""
    rng = np.random.default_rng(0) if rng is None else rng
    v = _random_like(args, rng)
    _, tangent = jvp(f, args, v)
    numeric = _numeric(f, args, v, eps)
    u = _random_like(numeric, rng)
    _close(_dot(tangent, u), _dot(numeric, u), atol, rtol, "forward-mode")


def check_vjp(f, args, *, eps=1e-6, atol=1e-6, rtol=1e-6, rng=None):
    """Reverse mode: ``Re(sum(vjp(u) * v))`` against ``Re(sum(u * J v))``, ``J v`` by finite
    differences along ``v``."""
    rng = np.random.default_rng(1) if rng is None else rng
    y, pullback = vjp(f, *args)
    u = list(_random_like(_leaves(y), rng))
    grads = pullback(u[0] if not isinstance(y, (list, tuple, dict)) else
                     _restructure(y, u))
    v = _random_like(args, rng)
    _close(_dot(grads, v), _dot(_numeric(f, args, v, eps), u), atol, rtol, "reverse-mode")


def _restructure(y, leaves):
    from .engine.nest import pack_as
    return pack_as(y, leaves)


def check_grads(f, args, order=2, modes=("fwd", "rev"), *, eps=1e-6, atol=1e-6, rtol=1e-6,
                rng=None):
    """Check the derivatives of ``f`` at ``args`` up to ``order`` in the given modes.

    At order 2 every combination is checked (forward-over-forward, forward-over-reverse,
    reverse-over-forward, reverse-over-reverse) by differentiating the derivative functions
    themselves along fixed random directions.

    Args:
        f: a function of numpy-like arrays written with hessgrad ops.
        args: a tuple of arrays (float64 or complex128 recommended for finite differences);
            complex ones are checked along complex directions, as complex numbers.
        order: highest derivative order to check.
        modes: any of "fwd" and "rev".
    Raises:
        AssertionError: a derivative disagrees with finite differences.

    >>> import hessgrad as hg
    >>> hg.testing.check_grads(lambda x: hg.sin(x) * x, (np.array([0.3, 1.2]),), order=2)
    >>> hg.testing.check_grads(lambda z: hg.sin(z) * z, (np.array([0.3 + 0.2j, 1.2 - 1j]),))
    """
    if isinstance(modes, str):
        modes = (modes,)
    for mode in modes:
        if mode not in ("fwd", "rev"):
            raise ValueError(f"check_grads: modes must contain 'fwd' or 'rev', got {mode!r}")
    rng = np.random.default_rng(0) if rng is None else rng
    args = tuple(args)
    tol = dict(eps=eps, atol=atol, rtol=rtol)
    if "fwd" in modes:
        check_jvp(f, args, rng=rng, **tol)
        if order > 1:
            v = _random_like(args, rng)
            check_grads(lambda *x: jvp(f, x, v)[1], args, order - 1, modes, rng=rng, **tol)
    if "rev" in modes:
        check_vjp(f, args, rng=rng, **tol)
        if order > 1:
            y = f(*args)
            u = _random_like(_leaves(y), rng)

            def pulled_back(*x):
                out, pullback = vjp(f, *x)
                cotangent = u[0] if not isinstance(out, (list, tuple, dict)) else \
                    _restructure(out, list(u))
                return pullback(cotangent)
            check_grads(pulled_back, args, order - 1, modes, rng=rng, **tol)
