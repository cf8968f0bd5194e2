"""``hessgrad.scipy.integrate``: ``trapezoid``, ``cumulative_trapezoid`` and ``simpson`` on
tensors (SciPy's formulas, differentiable in ``y``, ``x`` and ``dx``), and ``odeint``.

>>> import numpy as np, hessgrad as hg
>>> import hessgrad.scipy.integrate as hint
>>> round(float(hint.simpson(np.array([0.0, 1.0, 4.0, 9.0]), dx=1.0)), 12)  # int_0^3 x^2
9.0
>>> t = np.array([0.0, 1.0])
>>> dy0 = hg.grad(lambda k: hint.odeint(lambda y, t, k: -k * y, 1.0, t, args=(k,))[-1])(0.5)
>>> round(float(dy0), 6)  # d/dk exp(-k) at k = 0.5, within the tolerance
-0.606531

``odeint`` differentiates the discrete solution (discretize, then differentiate): it
integrates with the Dormand–Prince 5(4) pair, choosing the steps on the values (an error
controller with ``rtol``/``atol``, as SciPy's), then runs those steps again with hessgrad ops
— each step a fixed fraction of its output interval, so the result is differentiable in
``y0``, ``t`` and ``args`` (and whatever ``func`` reads) to every order, forward and reverse.
The derivatives are those of the discrete scheme: exact for it, and within the integration
tolerance of the true sensitivities (as the values are within it of the true solution). This
is simpler and more robust at second order than a continuous adjoint (no backward solve whose
own error would need control), at the cost of recording every step. Under
``hessgrad.function`` the values are unknown while tracing: pass ``steps=`` (a fixed number of
steps per output interval).
"""

import numpy as np

from .. import numpy as hnp
from ..engine.tensor import ConcretizationError, Tensor


def _arr(x):
    return hnp.asarray(x)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The composite trapezoidal rule along ``axis`` (scipy.integrate.trapezoid)."""
    return hnp.trapezoid(y, x=x, dx=dx, axis=axis)


def cumulative_trapezoid(y, x=None, dx=1.0, axis=-1, initial=None):
    """The running trapezoidal integral along ``axis``; ``initial=0`` prepends a zero (the
    only value SciPy accepts)."""
    y = hnp.moveaxis(_arr(y), axis, -1)
    if x is None:
        d = dx
    else:
        x = _arr(x)
        d = hnp.diff(hnp.moveaxis(x, axis, -1) if x.ndim > 1 else x, axis=-1)
    out = hnp.cumsum(d * (y[..., 1:] + y[..., :-1]) / 2.0, axis=-1)
    if initial is not None:
        if initial != 0:
            raise ValueError("`initial` must be `None` or `0`.")
        out = hnp.concatenate([hnp.zeros_like(y[..., :1]) * 0.0, out], axis=-1)
    return hnp.moveaxis(out, -1, axis)


def _basic_simpson(y, stop, x, dx):
    """Simpson's rule on points ``0..stop`` (even) of the last axis (SciPy's formula)."""
    y0, y1, y2 = y[..., 0:stop:2], y[..., 1:stop + 1:2], y[..., 2:stop + 2:2]
    if x is None:
        return hnp.sum(y0 + 4.0 * y1 + y2, axis=-1) * (dx / 3.0)
    h = hnp.diff(x, axis=-1)
    h0, h1 = h[..., 0:stop:2], h[..., 1:stop + 1:2]
    hsum, hprod = h0 + h1, h0 * h1
    h0divh1 = h0 / h1
    tmp = hsum / 6.0 * (y0 * (2.0 - 1.0 / h0divh1) + y1 * (hsum * (hsum / hprod))
                        + y2 * (2.0 - h0divh1))
    return hnp.sum(tmp, axis=-1)


def simpson(y, *, x=None, dx=1.0, axis=-1):
    """Simpson's rule along ``axis`` (scipy.integrate.simpson): for an even number of
    points, Simpson on all but the last interval and Cartwright's correction for it."""
    y = hnp.moveaxis(_arr(y), axis, -1)
    n = y.shape[-1]
    if x is not None:
        x = _arr(x)
        x = hnp.moveaxis(x, axis, -1) if x.ndim > 1 else x
        if x.shape[-1] != n:
            raise ValueError("If given, length of x along axis must be the same as y.")
    if n % 2:
        return _basic_simpson(y, n - 2, x, dx)
    if n == 2:
        last = dx if x is None else x[..., -1] - x[..., -2]
        return 0.5 * last * (y[..., -1] + y[..., -2])
    result = _basic_simpson(y, n - 3, x, dx)
    if x is None:
        h0 = h1 = dx
    else:
        h = hnp.diff(x, axis=-1)
        h0, h1 = h[..., -2], h[..., -1]
    alpha = (2 * h1 ** 2 + 3 * h0 * h1) / (6 * (h1 + h0))
    beta = (h1 ** 2 + 3.0 * h0 * h1) / (6 * h0)
    eta = h1 ** 3 / (6 * h0 * (h0 + h1))
    return result + alpha * y[..., -1] + beta * y[..., -2] - eta * y[..., -3]


# --- odeint -----------------------------------------------------------------------------------
_C = (0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
_A = ((),
      (1 / 5,),
      (3 / 40, 9 / 40),
      (44 / 45, -56 / 15, 32 / 9),
      (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
      (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
      (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84))
_B5 = _A[6] + (0.0,)
_B4 = (5179 / 57600, 0.0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40)
_E = tuple(b5 - b4 for b5, b4 in zip(_B5, _B4))


def _stage_sum(y, h, ks, coeffs):
    out = y
    for c, k in zip(coeffs, ks):
        if c:
            out = out + (h * c) * k
    return out


def _dopri_step(f, t, y, h, with_error=False):
    ks = []
    for i in range(7 if with_error else 6):
        yi = _stage_sum(y, h, ks, _A[i]) if i else y
        ks.append(f(yi, t + _C[i] * h))
    y5 = _stage_sum(y, h, ks[:6], _B5[:6])
    if not with_error:
        return y5
    return y5, _stage_sum(0.0 * y, h, ks, _E)


def _symbolic(x):
    if not isinstance(x, Tensor):
        return False
    try:
        x.numpy()
    except TypeError:  # a symbolic tensor has no value while a function is traced
        return True
    return False


def _plain(x):
    """The value (for choosing steps: no derivative goes through it)."""
    if isinstance(x, Tensor):
        return np.asarray(x.numpy(), dtype=float)
    return np.asarray(x, dtype=float)


def _choose_steps(f, y0, t, rtol, atol, mxstep):
    """Step fractions per output interval, chosen by the Dormand-Prince error controller on
    the values (no derivative)."""
    fractions = []
    y = y0
    h = None
    for i in range(len(t) - 1):
        t0, t1 = float(t[i]), float(t[i + 1])
        span = t1 - t0
        if span == 0:
            fractions.append([])
            continue
        direction = np.sign(span)
        if h is None:
            d0 = np.sqrt(np.mean((y / (atol + rtol * np.abs(y))) ** 2))
            d1 = np.sqrt(np.mean((f(y, t0) / (atol + rtol * np.abs(y))) ** 2))
            h = 0.01 * d0 / d1 if d0 > 1e-5 and d1 > 1e-5 else 1e-6
            h = min(abs(span), h) * direction
        steps, tc, count = [], t0, 0
        while (t1 - tc) * direction > 0:
            if count >= mxstep:
                raise RuntimeError(f"odeint: more than mxstep={mxstep} steps in the interval "
                                   f"[{t0}, {t1}] (a stiff problem, or tolerances too tight)")
            h = direction * min(abs(h), abs(t1 - tc))
            y_new, err = _dopri_step(f, tc, y, h, with_error=True)
            scale = atol + rtol * np.maximum(np.abs(y), np.abs(y_new))
            e = float(np.sqrt(np.mean((err / scale) ** 2))) if np.size(y) else 0.0
            count += 1
            if e <= 1.0 or abs(h) < 1e-14 * max(1.0, abs(tc)):
                last = abs(t1 - tc - h) <= 1e-12 * abs(span)
                steps.append(1.0 - sum(steps) if last else h / span)
                tc = t1 if last else tc + h
                y = y_new
            h = h * min(5.0, max(0.2, 0.9 * (e if e > 0 else 1e-10) ** -0.2))
        fractions.append(steps)
    return fractions


def odeint(func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, rtol=None,  # noqa: N803
           atol=None, mxstep=0, tfirst=False, steps=None, **ignored):
    """The solution of ``dy/dt = func(y, t, *args)`` at the times ``t`` (``t[0]``: the initial
    time, ``y(t[0]) = y0``), as ``scipy.integrate.odeint`` (``tfirst=True``: ``func(t, y,
    ...)``); a tensor of shape ``(len(t),) + y0.shape``.

    Args:
        func: the right-hand side, written with hessgrad.numpy.
        y0: the initial state (array or tensor; any shape).
        t: the output times, monotonic (array or tensor: differentiable too).
        args: extra arguments of ``func`` (differentiable).
        rtol, atol: the error controller's tolerances (SciPy's defaults 1.49012e-8).
        mxstep: the most steps per output interval (0: 5000).
        steps: a fixed number of equal steps per output interval instead of the controller
            (required under ``hessgrad.function``).
    Returns:
        The states at ``t``. The values agree with SciPy's within the tolerances (both are
        approximations; a test compares at rtol 1e-6 with tight tolerances).
    Raises:
        hessgrad.ConcretizationError: traced (symbolic) arguments without ``steps`` (the
            transforms that fall back to eager evaluation on it, such as ``hessian`` and
            ``hessgrad.scipy.objective``, then run it eagerly).
        NotImplementedError: ``Dfun``, ``full_output``.
        RuntimeError: more than ``mxstep`` steps in one interval.
    """
    if Dfun is not None or full_output:
        raise NotImplementedError("odeint: Dfun and full_output are not supported (the "
                                  "Jacobian comes from differentiating func)")
    rtol = 1.49012e-8 if rtol is None else float(rtol)
    atol = 1.49012e-8 if atol is None else float(atol)
    mxstep = 5000 if not mxstep else int(mxstep)
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    y0 = _arr(y0)
    t = _arr(t)
    if t.ndim != 1:
        raise ValueError(f"odeint: t must be 1-D, got shape {tuple(t.shape)}")

    def f(y, s):
        return func(s, y, *args) if tfirst else func(y, s, *args)

    n = t.shape[0]
    if steps is None:
        if any(_symbolic(v) for v in (y0, t) + args):
            # the callers that trace and can fall back to eager evaluation (hessian,
            # scipy.objective, vmap) do so on this error
            raise ConcretizationError(
                "odeint needs values to choose its adaptive steps, unknown while tracing "
                "(hessgrad.function): pass steps= (a fixed number of steps per output "
                "interval), or call it eagerly")
        plain_args = tuple(_plain(a) if isinstance(a, Tensor) else a for a in args)

        def f_plain(y, s):
            out = func(s, y, *plain_args) if tfirst else func(y, s, *plain_args)
            return _plain(out)
        fractions = _choose_steps(f_plain, _plain(y0), _plain(t), rtol, atol, mxstep)
    else:
        fractions = [[1.0 / int(steps)] * int(steps)] * (n - 1)
    out = [y0]
    y = y0
    for i in range(n - 1):
        span = t[i + 1] - t[i]
        done = 0.0
        for frac in fractions[i]:
            y = _dopri_step(f, t[i] + done * span, y, frac * span)
            done += frac
        out.append(y)
    return hnp.stack(out)


__all__ = ["trapezoid", "cumulative_trapezoid", "simpson", "odeint"]
