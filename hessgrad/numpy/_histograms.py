"""Multi-dimensional histograms and bin edges: ``histogram_bin_edges``, ``histogram2d``,
``histogramdd``.

The samples decide the bins, so they must be concrete (numpy arrays or eager tensors; said
while tracing). Counts and edges are constants; with tensor ``weights`` the histogram is
differentiable in the weights (also with ``density``), as ``histogram`` is.
"""

import builtins

import numpy as _np

from ..engine.tensor import Tensor as _Tensor
from ..ops import core as _core, reduction as _red
from ._arraylike import has_tensor as _has_tensor
from ._extras import _array, _cast, _concrete, _const


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


__all__ = ["histogram_bin_edges", "histogram2d", "histogramdd"]
