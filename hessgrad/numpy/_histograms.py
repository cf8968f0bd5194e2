"""Multi-dimensional histograms and bin edges: ``histogram_bin_edges``, ``histogram2d``,
``histogramdd``.

The samples decide the bins, so they must be concrete (numpy arrays or eager tensors; said
while tracing). Counts and edges are constants; with tensor ``weights`` the histogram is
differentiable in the weights (also with ``density``), as ``histogram`` is.
"""

import builtins

import numpy as _np

from ..engine.tensor import Tensor as _Tensor
from ..ops import core as _core, indexing as _ix, reduction as _red, signal as _sig
from ._arguments import _array, _as_tensor, _cast, _concrete, _const, _dtype, _symbolic, _value
from ._arraylike import has_tensor as _has_tensor, stacked as _stacked


def _values(fname, x, what):
    """``x`` with every tensor replaced by its (concrete) value."""
    if isinstance(x, (list, tuple)):
        return type(x)(_values(fname, v, what) for v in x)
    if isinstance(x, _Tensor):
        return _np.asarray(_concrete(fname, x, what, "the samples decide the bins"))
    return x


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002 - numpy's name
    """The bin edges ``numpy.histogram`` would use for ``a`` (numpy.histogram_bin_edges), a
    constant.

    >>> import hessgrad.numpy as hnp
    >>> hnp.histogram_bin_edges([0.0, 1.0, 4.0], bins=2).tolist()
    [0.0, 2.0, 4.0]
    """
    return _const(_numpy(
        "histogram_bin_edges", _np.histogram_bin_edges, _values("histogram_bin_edges", a, "a"),
        _values("histogram_bin_edges", bins, "bins"), range,
        _values("histogram_bin_edges", weights, "weights")))


def _numpy(fname, fn, *args):
    """Run numpy's ``fn``, naming ``fname`` in its errors about bins, ranges and shapes."""
    try:
        return fn(*args)
    except ValueError as exc:
        raise ValueError(f"{fname}: {exc}") from None


def _as_samples(sample):
    """numpy's reading of ``sample``: an (N, D) array, or D arrays of length N."""
    try:
        n, d = sample.shape
    except (AttributeError, ValueError):
        sample = _np.atleast_2d(sample).T
        n, d = sample.shape
    return sample


def histogramdd(sample, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """numpy.histogramdd: ``(hist, edges)`` of ``N`` samples in ``D`` dimensions (an (N, D)
    array or D arrays of length N). Counts and edges are constants; tensor ``weights`` of
    length N make ``hist`` differentiable in them.

    Raises:
        ValueError: weights of the wrong length, and numpy's bin and range errors.

    >>> import hessgrad.numpy as hnp
    >>> sample = np.array([[0.1, 0.2], [0.6, 0.9], [0.7, 0.1]])  # 3 points in 2-D
    >>> hist, edges = hnp.histogramdd(sample, bins=2, range=[(0, 1), (0, 1)])
    >>> hist.tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    samples = _values("histogramdd", sample, "sample")
    bins = _values("histogramdd", bins, "bins")
    if not _has_tensor(weights):
        hist, edges = _numpy("histogramdd", _np.histogramdd, samples, bins, range, density,
                             weights)
        return _const(hist), [_const(e) for e in edges]
    _, edges = _numpy("histogramdd", _np.histogramdd, samples, bins, range)
    samples = _as_samples(samples)
    n, d = samples.shape
    w = _array("histogramdd", weights, "weights")
    if tuple(w.shape) != (n,):
        raise ValueError(f"histogramdd: weights must be a 1-D array of the samples' length "
                         f"{n}, got shape {tuple(w.shape)}")
    nbin = _np.array([len(e) + 1 for e in edges])
    counts = []
    for i in builtins.range(d):  # numpy's bin of each sample: edges inclusive on the right
        c = _np.searchsorted(edges[i], samples[:, i], side="right")
        c[samples[:, i] == edges[i][-1]] -= 1
        counts.append(c)
    flat = _np.ravel_multi_index(tuple(counts), nbin)
    w = _cast(w, _np.result_type(w.dtype, _np.float64))
    hist = _core.scatter_add(w, index=(flat.astype(_np.intp),), shape=(int(nbin.prod()),))
    hist = _core.reshape(hist, shape=tuple(nbin))
    hist = _core.getitem(hist, index=(slice(1, -1),) * d)
    if density:
        total = _red.sum(hist)
        for i in builtins.range(d):
            shape = [1] * d
            shape[i] = nbin[i] - 2
            hist = hist / _np.diff(edges[i]).reshape(shape)
        hist = hist / total
    return hist, [_const(e) for e in edges]


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """numpy.histogram2d: ``(hist, xedges, yedges)`` of the points ``(x[i], y[i])``; counts
    and edges are constants, tensor ``weights`` make ``hist`` differentiable in them.

    Raises:
        ValueError: ``x`` and ``y`` of different lengths.

    >>> import hessgrad.numpy as hnp
    >>> hist, xe, ye = hnp.histogram2d([0.1, 0.6, 0.7], [0.2, 0.9, 0.1], bins=2,
    ...                                range=[(0, 1), (0, 1)])
    >>> hist.tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    x = _values("histogram2d", x, "x")
    y = _values("histogram2d", y, "y")
    if len(x) != len(y):
        raise ValueError(f"histogram2d: x and y must have the same length (got {len(x)} and "
                         f"{len(y)})")
    bins = _values("histogram2d", bins, "bins")
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n not in {1, 2}:
        bins = [_np.asarray(bins), _np.asarray(bins)]
    hist, edges = histogramdd([x, y], bins, range, density, weights)
    return hist, edges[0], edges[1]


# --- binning and counting -----------------------------------------------------------------
def searchsorted(a, v, side="left", sorter=None):
    """Indices where ``v`` would be inserted into the sorted 1-D ``a`` (an integer constant;
    traces).

    >>> import hessgrad.numpy as hnp
    >>> hnp.searchsorted([1.0, 2.0, 3.0], [2.0, 2.5], side="right").tolist()
    [2, 2]
    """
    a, v = _array("searchsorted", a), _array("searchsorted", v, "v")
    if len(a.shape) != 1:
        raise ValueError(f"searchsorted: argument 'a' must be 1-D, got shape {tuple(a.shape)}")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if sorter is not None:
        a = _ix.take(_as_tensor(a), sorter)
    return _sig.searchsorted(a, v, side=side)


def digitize(x, bins, right=False):
    """Indices of the bins holding each ``x`` (numpy.digitize; an integer constant; traces).

    >>> import hessgrad.numpy as hnp
    >>> hnp.digitize([0.5, 1.5, 3.0], [0.0, 1.0, 2.0]).tolist()
    [1, 2, 3]
    """
    x, bins = _array("digitize", x, "x"), _array("digitize", bins, "bins")
    if len(bins.shape) != 1:
        raise ValueError(f"digitize: bins must be 1-D, got shape {tuple(bins.shape)}")
    if _dtype(x).kind == "c":
        raise TypeError("digitize: x may not be complex")
    if not _symbolic(bins):
        d = _np.diff(_value(bins))
        if not (_np.all(d >= 0) or _np.all(d <= 0)):
            raise ValueError("digitize: bins must be monotonically increasing or decreasing")
    return _sig.digitize(x, bins, right=bool(right))


def bincount(x, weights=None, minlength=0):
    """Occurrences of each non-negative integer in ``x``; with ``weights`` the sums of the
    weights per value, differentiable in ``weights``. The output length depends on ``x``'s
    values, so ``x`` must be concrete (``weights`` may be traced).

    >>> import hessgrad as hg, hessgrad.numpy as hnp, numpy as np
    >>> hnp.bincount([0, 2, 2]).tolist()
    [1, 0, 2]
    >>> hg.grad(lambda w: hnp.bincount([0, 2, 2], w)[2])(np.array([1.0, 2.0, 3.0]))
    array([0., 1., 1.])
    """
    xv = _np.asarray(_concrete("bincount", _array("bincount", x, "x"), "x",
                               "its values set the output length"))
    if xv.ndim != 1:
        raise ValueError(f"bincount: argument 'x' must be 1-D, got shape {xv.shape}")
    if xv.size == 0:
        xv = xv.astype(_np.intp)
    if xv.dtype.kind not in "iub":
        raise TypeError(f"bincount: argument 'x' must hold integers, got dtype {xv.dtype}")
    if xv.size and xv.min() < 0:
        raise ValueError("bincount: argument 'x' must have no negative elements")
    if minlength < 0:
        raise ValueError(f"bincount: minlength must be non-negative, got {minlength}")
    length = builtins.max(int(xv.max()) + 1 if xv.size else 0, int(minlength))
    if weights is None:
        return _const(_np.bincount(xv, minlength=length))
    w = _array("bincount", weights, "weights")
    if tuple(w.shape) != xv.shape:
        raise ValueError(f"bincount: the weights and x must have the same length (shapes "
                         f"{tuple(w.shape)} and {xv.shape})")
    w = _as_tensor(_cast(w, _np.float64))
    return _core.scatter_add(w, index=(xv.astype(_np.intp),), shape=(length,))


def histogram(a, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """numpy.histogram: ``(hist, bin_edges)``. Counts are constants; with ``weights`` the
    histogram is differentiable in the weights (also with ``density``). ``a`` must be
    concrete (it decides the bins); the edges are constants.

    >>> import hessgrad.numpy as hnp
    >>> hist, edges = hnp.histogram([0.1, 0.4, 0.45, 0.9], bins=2, range=(0.0, 1.0))
    >>> hist.tolist(), edges.tolist()
    ([3, 1], [0.0, 0.5, 1.0])
    """
    av = _np.asarray(_concrete("histogram", _array("histogram", a), "a",
                               "the data decides the bins"))
    bins = _stacked(bins, "histogram", "bins")
    bins = _value(bins) if isinstance(bins, _Tensor) else bins
    counts, edges = _np.histogram(av, bins=bins, range=range)
    if weights is None:
        if density:
            counts = counts / _np.diff(edges).astype(float) / counts.sum()
        return _const(counts), _const(edges)
    w = _array("histogram", weights, "weights")
    if tuple(w.shape) != av.shape:
        raise ValueError(f"histogram: weights should have the same shape as a (shapes "
                         f"{tuple(w.shape)} and {av.shape})")
    nbins = len(edges) - 1
    flat = av.reshape(-1)
    idx = _np.searchsorted(edges, flat, side="right") - 1
    idx[flat == edges[-1]] = nbins - 1
    keep = (idx >= 0) & (idx < nbins) & (flat >= edges[0]) & (flat <= edges[-1])
    wflat = _core.reshape(_as_tensor(w), shape=(-1,))
    picked = _core.getitem(wflat, index=(_np.nonzero(keep)[0],))
    hist = _core.scatter_add(picked, index=(idx[keep],), shape=(nbins,))
    if density:
        hist = hist / _np.diff(edges).astype(float) / _red.sum(hist)
    return hist, _const(edges)


__all__ = ["histogram_bin_edges", "histogram2d", "histogramdd", "searchsorted", "digitize",
           "bincount", "histogram"]
