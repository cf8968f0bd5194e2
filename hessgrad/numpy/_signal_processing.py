"""Signal-processing helpers: the window functions ``bartlett``, ``blackman``, ``hamming``,
``hanning``, ``kaiser`` and phase unwrapping ``unwrap``.

Windows are constants of their length ``M`` (numpy's values); ``kaiser`` is differentiable in
a tensor ``beta``. ``unwrap`` adds multiples of the period that are piecewise constant in the
phases, so its derivative is the identity.
"""

import builtins

import numpy as _np

from ..engine.tensor import Tensor as _Tensor
from ..ops import core as _core, elementwise as _ew, signal as _sig, special as _special
from . import _reductions as _r, _shapes as _s
from ._arguments import _array, _as_tensor, _cast, _concrete, _dtype


def _length(fname, M):
    """A concrete window length (numpy also accepts floats here)."""
    if isinstance(M, _Tensor):
        M = _concrete(fname, M, "M", "it sets the window's length")
    M = _np.asarray(M)
    if M.ndim != 0 or M.dtype.kind not in "biuf":
        raise TypeError(f"{fname}: M must be a real number, got {M!r}")
    return M.item()


def _window(fname, numpy_fn):
    def window(M):
        return _core.constant(numpy_fn(_length(fname, M)))

    window.__name__ = window.__qualname__ = fname
    window.__doc__ = f"""numpy.{fname}: the {fname.capitalize()} window of ``M`` points
    (float64; empty for ``M < 1``), a constant.

    >>> import hessgrad.numpy as hnp, numpy as np
    >>> np.array_equal(hnp.{fname}(5).numpy(), np.{fname}(5))
    True
    """
    return window


bartlett = _window("bartlett", _np.bartlett)
blackman = _window("blackman", _np.blackman)
hamming = _window("hamming", _np.hamming)
hanning = _window("hanning", _np.hanning)


def kaiser(M, beta):
    """numpy.kaiser: the Kaiser window ``i0(beta sqrt(1 - ((n - a) / a)^2)) / i0(beta)``,
    ``a = (M - 1) / 2``; differentiable in a tensor ``beta`` to any order.

    >>> import hessgrad as hg, hessgrad.numpy as hnp
    >>> hnp.kaiser(3, 2.0).round(6).tolist()
    [0.438676, 1.0, 0.438676]
    >>> round(float(hg.grad(lambda b: hnp.sum(hnp.kaiser(3, b)))(2.0)), 6)
    -0.612194
    """
    M = _length("kaiser", M)
    if not isinstance(beta, _Tensor):
        return _core.constant(_np.kaiser(M, beta))
    if _np.dtype(beta.dtype).kind not in "biuf" or len(beta.shape) != 0:
        raise TypeError(f"kaiser: beta must be a real scalar, got a tensor of shape "
                        f"{tuple(beta.shape)} and dtype {beta.dtype}")
    beta = _cast(beta, _np.float64)
    if M == 1:
        return _core.constant(_np.ones(1))
    n = _np.arange(0, M)
    alpha = (M - 1) / 2.0
    with _np.errstate(divide="ignore", invalid="ignore"):
        shape = _np.sqrt(1 - ((n - alpha) / alpha) ** 2.0)  # numpy's operations, in order
    return _special.i0(beta * shape) / _special.i0(beta)


def unwrap(p, discont=None, axis=-1, *, period=2 * _np.pi):
    """numpy.unwrap: ``p`` with multiples of ``period`` added along ``axis`` so that no jump
    between neighbours exceeds ``max(discont, period / 2)``. Differentiable in ``p`` (the
    added multiples are piecewise constant: the derivative is the identity).

    Raises:
        ValueError: ``p`` is 0-d.

    >>> import hessgrad.numpy as hnp, numpy as np
    >>> hnp.unwrap([0.0, 3.0, 6.5]).round(6).tolist()
    [0.0, 3.0, 0.216815]
    """
    p = _as_tensor(_array("unwrap", p, "p"))
    if len(p.shape) == 0:
        raise ValueError("unwrap: argument 'p' must be at least 1-D, got shape ()")
    axis = _r._one_axis("unwrap", p, axis)
    dd = _s.diff(p, axis=axis)
    if discont is None:
        discont = period / 2
    dtype = _np.result_type(_dtype(dd), period)
    if dtype.kind in "iu":
        interval_high, rem = divmod(period, 2)
        boundary_ambiguous = rem == 0
    else:
        interval_high = period / 2
        boundary_ambiguous = True
    interval_low = -interval_high
    ddmod = _ew.remainder(dd - interval_low, period) + interval_low
    if boundary_ambiguous:  # numpy maps a jump of exactly +period/2 to +period/2
        ddmod = _ew.where(_ew.logical_and(_ew.equal(ddmod, interval_low), _ew.greater(dd, 0)),
                          _np.asarray(interval_high, _dtype(ddmod)), ddmod)
    correction = _ew.where(_ew.less(_ew.absolute(dd), discont), _np.zeros((), _dtype(ddmod)),
                           ddmod - dd)
    correction = _core.stop_gradient(correction)  # piecewise constant in p
    nd = len(p.shape)
    head = _core.getitem(p, index=(slice(None),) * axis + (slice(0, 1),))
    tail = _core.getitem(p, index=(slice(None),) * axis + (slice(1, None),))
    tail = tail + _r.cumsum(correction, axis=axis)
    out = _s.concatenate([_cast(head, dtype), _cast(tail, dtype)], axis=axis - nd)
    return out


# --- convolution --------------------------------------------------------------------------
_MODES = {"v": "valid", "s": "same", "f": "full", 0: "valid", 1: "same", 2: "full"}


def _conv_args(fname, a, v, mode):
    key = mode.lower()[:1] if isinstance(mode, str) else mode
    if key not in _MODES:
        raise ValueError(f"{fname}: mode must be 'full', 'same' or 'valid', got {mode!r}")
    a, v = _array(fname, a), _array(fname, v, "v")
    out = []
    for arr, what in ((a, "a"), (v, "v")):
        if len(arr.shape) > 1:
            raise ValueError(f"{fname}: argument '{what}' must be 1-D, got shape "
                             f"{tuple(arr.shape)}")
        if len(arr.shape) == 0:
            arr = _core.reshape(_as_tensor(arr), shape=(1,))
        if arr.shape[0] == 0:
            raise ValueError(f"{fname}: argument '{what}' cannot be empty (shape (0,))")
        out.append(arr)
    return out[0], out[1], _MODES[key]


def convolve(a, v, mode="full"):
    """Discrete linear convolution of two 1-D sequences (numpy.convolve), differentiable in
    both: the VJP of a convolution is a correlation, itself a convolution with a flipped
    operand, so every order is exact.

    Args:
        a, v: non-empty 1-D arrays (0-d count as length 1).
        mode: 'full' (length n + m - 1), 'same' (max(n, m)) or 'valid' (max - min + 1).
    Returns:
        A 1-D tensor.
    Raises:
        ValueError: an input is empty or not 1-D, or ``mode`` is unknown.

    >>> import hessgrad.numpy as hnp
    >>> hnp.convolve([1.0, 2.0, 3.0], [0.0, 1.0, 0.5]).tolist()
    [0.0, 1.0, 2.5, 4.0, 1.5]
    """
    a, v, mode = _conv_args("convolve", a, v, mode)
    full = _sig.convolve(a, v)
    n, m = a.shape[0], v.shape[0]
    if mode == "full":
        return full
    short, long_ = builtins.min(n, m), builtins.max(n, m)
    start = (short - 1) // 2 if mode == "same" else short - 1
    length = long_ if mode == "same" else long_ - short + 1
    return _core.getitem(full, index=(slice(start, start + length),))


def correlate(a, v, mode="valid"):
    """Cross-correlation ``c[k] = sum_n a[n + k] * conj(v[n])`` of two 1-D sequences
    (numpy.correlate, default mode 'valid'); differentiable in both.

    >>> import hessgrad.numpy as hnp
    >>> hnp.correlate([1.0, 2.0, 3.0], [0.0, 1.0, 0.5]).tolist()
    [3.5]
    """
    a, v, mode = _conv_args("correlate", a, v, mode)
    if _dtype(v).kind == "c":
        v = _ew.conjugate(v)
    full = _sig.convolve(a, _core.getitem(_as_tensor(v), index=(slice(None, None, -1),)))
    n, m = a.shape[0], v.shape[0]
    if mode == "full":
        return full
    short, long_ = builtins.min(n, m), builtins.max(n, m)
    if mode == "same":
        start = (m - 1) // 2 if n >= m else n - 1 - (n - 1) // 2
        length = long_
    else:
        start, length = short - 1, long_ - short + 1
    return _core.getitem(full, index=(slice(start, start + length),))


__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser", "unwrap", "convolve", "correlate"]
