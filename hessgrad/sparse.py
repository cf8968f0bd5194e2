"""Sparse Hessians and Jacobians: sparsity detection + coloring + one batched product.

The pattern is read off the traced graph (:mod:`hessgrad.sparsity`), colored
(:mod:`hessgrad.coloring`), and the compressed matrix ``H S`` (``J S`` or ``W^T J``) is computed
by one batched run of a traced Hessian-vector product (JVP, VJP) with ``x`` as an unbatched
input and the seed columns as the batch. Pattern, coloring, recovery indices and the traced
product are cached per input shape, dtype and capture key (``tracing.capture``), so later
calls at other points only run the batched product and a gather.
"""

import copy

import numpy as np
import scipy.sparse as sp

from . import coloring as _coloring
from . import sparsity as _sparsity
from .tracing.capture import TRUSTED, CaptureCache
from .tracing.reroll import rerolled
from .tracing.function import ConcreteFunction, leaf_key
from .engine.nest import flatten, structure_key
from .engine.tensor import Tensor
from .ops.core import constant, getitem, reshape, scatter_add
from .second_order import dense_hessian, hvp as _hvp
from .transforms import jvp as _jvp
from .transforms import vjp as _vjp
from .engine.batching import stacked_rows

METHODS = ("trace", "probe")
COLORINGS = ("star", "column")
DENSE_THRESHOLD = 0.25
# Below this size a dense Hessian, all n products as one batch, costs less than detecting the
# pattern (one pass over the program with sparse matrices) and assembling from colored
# products (in a compiled graph a gather and a scatter: about 20 us; measured crossover 64).
STRUCTURE_MIN_SIZE = 64


def _check(what, method, coloring, dense_threshold, probes=1):
    if method not in METHODS:
        raise ValueError(f"{what}: method must be one of {METHODS}, got {method!r}")
    if coloring is not None and coloring not in COLORINGS:
        raise ValueError(f"{what}: coloring must be one of {COLORINGS}, got {coloring!r}")
    if not 0.0 <= float(dense_threshold) <= 1.0:
        raise ValueError(f"{what}: dense_threshold must be in [0, 1], got {dense_threshold!r}")
    if int(probes) < 1:
        raise ValueError(f"{what}: probes must be >= 1, got {probes!r}")


def _arg_key(args):
    """The signature of ``args`` as hessgrad.function traces them: the nesting, arrays by
    shape and dtype, static values (bools, np.bool_, ints, ...) by value, since they select
    the trace and so the pattern and product."""
    if all(type(a) is np.ndarray for a in args):  # the common case, without flattening
        return tuple(("A", a.shape, a.dtype.str) for a in args)
    leaves = flatten(list(args))
    return structure_key(list(args), leaves), tuple(leaf_key(a) for a in leaves)


def _point(x, what):
    if isinstance(x, Tensor):
        if x._value is None:
            raise TypeError(f"{what}: x must be a concrete array, got symbolic tensor {x.name}")
        x = x.numpy()
    x = np.asarray(x)
    if x.dtype.kind != "f":  # no silent cast of integers: hg.hessian and hg.jacobian refuse them
        raise TypeError(f"{what}: argument x must be a real floating-point array, got dtype "
                        f"{x.dtype} (shape {x.shape}); cast it to float first")
    return x


def _check_callable(f, what):
    if not callable(f):
        raise TypeError(f"{what}: f must be callable, got {type(f).__name__}")


class _Compressed:
    """A traced product ``p(x, *args, u)`` run with ``u`` batched along a leading axis
    (compiled: a few colors run the fused graph per color), traced under a capture key."""

    def __init__(self, product, x, args, u_shape, once=False, jit_kernels=True):
        self.concrete = ConcreteFunction(product, (x, *args, np.zeros(u_shape, x.dtype)), {},
                                         jit_kernels=jit_kernels and not once)

    def __call__(self, x, args, batch, cap):
        if all(type(a) is np.ndarray for a in args):
            leaves = [x, *args, batch]
        else:
            leaves = flatten(((x,) + tuple(args) + (batch,), {}))
        flags = [False] * (len(leaves) - 1) + [True]
        return np.asarray(self.concrete.run_batched(leaves, flags, cap.feeds(self.concrete)))


def _flat_positions(plan):
    """The row-major positions of the pattern's entries in the flattened dense Hessian."""
    if "flat" not in plan:
        pattern, n = plan["pattern"], plan["n"]
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(pattern.indptr))
        plan["flat"] = rows * n + pattern.indices
    return plan["flat"]


def _coordinates(pattern):
    """``(rows, cols)`` of the stored entries of the CSR ``pattern``, in its order."""
    rows = np.repeat(np.arange(pattern.shape[0], dtype=np.int64), np.diff(pattern.indptr))
    return rows, pattern.indices.astype(np.int64)


TRIANGLES = (None, "lower")


def _triangle(plan, triangle, what):
    """``(positions, rows, cols)``: the entries of the plan's pattern that ``triangle`` keeps
    (all of them for None, those with ``row >= col`` for "lower"), positions in CSR order."""
    if triangle not in TRIANGLES:
        raise ValueError(f"{what}: triangle must be None or 'lower', got {triangle!r}")
    cached = plan.get(("triangle", triangle))
    if cached is None:
        rows, cols = _coordinates(plan["pattern"])
        keep = np.arange(len(rows)) if triangle is None else np.flatnonzero(rows >= cols)
        cached = plan[("triangle", triangle)] = (keep, rows[keep], cols[keep])
    return cached


def _max_row_count(pattern):
    """The largest number of stored entries in one row (0 for an empty pattern)."""
    return int(np.diff(pattern.indptr).max(initial=0))


def _matrix(plan, data, shape, out, what):
    """``data`` in the plan's pattern as a CSR matrix: written into ``out`` (a matrix of that
    pattern) when given, else a new matrix. A new one is a shallow copy of a template built
    once, with its own index arrays: scipy's constructor checks and converts the indices at
    every call, which cost more than the products on small problems."""
    if out is not None:
        _check_out(out, plan["pattern"], shape, what)
        out.data[...] = data
        return out
    template = plan.get("csr")
    if template is None:
        pattern = plan["pattern"]
        template = plan["csr"] = sp.csr_matrix(
            (np.zeros(pattern.nnz, data.dtype), pattern.indices, pattern.indptr), shape=shape)
    m = copy.copy(template)
    m.indices, m.indptr, m.data = template.indices.copy(), template.indptr.copy(), data
    return m


def _check_out(out, pattern, shape, what):
    """``out`` is a CSR matrix of ``shape`` with ``pattern``'s entries."""
    if not (sp.issparse(out) and out.format == "csr"):
        raise TypeError(f"{what}: out must be a scipy.sparse CSR matrix returned by an earlier "
                        f"call, got {type(out).__name__}")
    if out.shape != shape or out.nnz != pattern.nnz or \
            not np.array_equal(out.indptr, pattern.indptr) or \
            not np.array_equal(out.indices, pattern.indices):
        raise ValueError(f"{what}: out must have the pattern of this call's result (shape "
                         f"{shape}, {pattern.nnz} entries), got shape {out.shape} with "
                         f"{out.nnz} entries")


class _PlanCache:
    """Pattern, coloring and traced product are built once per input shape, dtype, argument
    signature and capture key (``_build``; see ``tracing.capture``) and reused at every point.
    ``_plan`` returns ``(plan, capture)``: the products take the capture's lifted arrays."""

    def __init__(self, f):
        self.f = f
        self._plans = CaptureCache(f)

    def _plan(self, x, args, cap=None):
        if cap is None:
            cap = self._plans.check((x, *args), {})
        key = (x.shape, x.dtype.str, _arg_key(args))
        return self._plans.get(key, cap, lambda once: self._build(x, args, cap, once)), cap


class SparseHessian(_PlanCache):
    """``H(x, *args)``: the Hessian of scalar ``f`` at ``x`` (flattened) as a
    ``scipy.sparse.csr_matrix``, from ``ncolors`` Hessian-vector products run as one batch.

    Built by :func:`sparse_hessian`. Attributes after a call: ``info(x, *args)`` gives the
    pattern's size, number of nonzeros and colors and whether the dense path is used. Where
    ``f`` branches in Python on the values of ``x``, the pattern is that of the branch ``x``
    takes: each branch gets its own plan, picked by the trace's guards.
    """

    def __init__(self, f, *, method="trace", coloring="star", dense_threshold=DENSE_THRESHOLD,
                 probes=2, seed=0, budget=None, jit_kernels=True):
        _check("sparse_hessian", method, coloring, dense_threshold, probes)
        _check_callable(f, "sparse_hessian")
        super().__init__(f)
        self.method = method
        self.coloring = coloring
        self.dense_threshold = float(dense_threshold)
        self.probes = int(probes)
        self.seed = seed
        self.jit_kernels = bool(jit_kernels)
        self.nhvp = 0
        self._budget = budget  # n -> entry budget of the detection (None: sparsity's default)

    # --- the cached plan per shape ----------------------------------------------------------
    def _build(self, x, args, cap, once):
        n = x.size
        budget = _sparsity.ENTRY_BUDGET if self._budget is None else self._budget(n)
        # a loop of scalar operations packed into vector ones (see tracing.reroll): the
        # detection and the products then walk a few ops instead of the loop
        ops = None if cap is TRUSTED else cap.ops()
        f = (rerolled(self.f, [x], ops) if not args else None) or self.f
        pattern, gave_up, local = _sparsity._hessian_pattern(f, x, args, "sparse_hessian",
                                                             budget=budget)
        plan = {"n": n, "traced_pattern": pattern, "gave_up": gave_up, "local": local, "f": f}
        if self.method == "probe":
            pattern = self._probe(x, args, pattern, cap, once)
        plan["pattern"] = pattern
        return self._finish(plan, x, args, once)

    def _finish(self, plan, x, args, once):
        n, pattern = plan["n"], plan["pattern"]
        plan["dense"] = n > 0 and pattern.nnz > self.dense_threshold * n * n
        if plan["dense"]:
            plan["ncolors"] = n
            return plan
        if pattern.nnz == n * n:   # every pair interacts: one color per variable
            colors = np.arange(n, dtype=np.int64)
            index = _coloring.column_recovery_index(pattern, colors)
        elif self.coloring == "star":
            colors = _coloring.star_coloring(pattern)
            index = _coloring.star_recovery_index(pattern, colors)
        else:
            colors = _coloring.column_coloring(pattern)
            index = _coloring.column_recovery_index(pattern, colors)
        plan["colors"] = colors
        plan["ncolors"] = int(colors.max()) + 1 if n and pattern.nnz else 0
        plan["index"] = index
        plan["seeds"] = np.ascontiguousarray(
            _coloring.seed_matrix(colors, x.dtype)[:, :plan["ncolors"]].T).reshape(
                (plan["ncolors"],) + x.shape)
        if plan["ncolors"]:
            plan["product"] = _Compressed(_hvp(plan.get("f", self.f)), x, args, x.shape, once,
                                          self.jit_kernels)
        return plan

    def _probe(self, x, args, traced, cap, once):
        """Union of the nonzeros of the Hessian at ``x`` and at ``probes`` random points near
        it. ``x`` itself is one of the points: where the pattern depends on the values (sort,
        max, where), the nearby points alone may miss entries nonzero at ``x``, and the call
        that builds the pattern would be wrong at its own point."""
        rng = np.random.default_rng(self.seed)
        trial = {"n": x.size, "pattern": traced}
        trial = self._finish(trial, x, args, once)
        found = sp.csr_matrix((x.size, x.size), dtype=bool)
        for k in range(self.probes + 1):
            z = x if k == 0 else \
                (x + 0.1 * (1.0 + np.abs(x)) * rng.standard_normal(x.shape)).astype(x.dtype)
            h = self._evaluate(trial, z, args, cap)
            h.data = h.data != 0            # NaN counts as a nonzero (conservative)
            found = found + h
        found = sp.csr_matrix(found, dtype=bool)
        found = sp.csr_matrix(found + found.T, dtype=bool)
        found.sort_indices()
        return found

    # --- evaluation --------------------------------------------------------------------------
    def _evaluate(self, plan, x, args, cap, out=None):
        n = plan["n"]
        if plan["dense"]:
            self.nhvp += n
            h = np.asarray(dense_hessian(plan.get("f", self.f))(x, *args)).reshape(n, n)
            data = h.reshape(-1)[_flat_positions(plan)].astype(x.dtype, copy=False)
        elif not plan["ncolors"]:
            data = np.zeros(0, x.dtype)
        else:
            self.nhvp += plan["ncolors"]
            b = plan["product"](x, args, plan["seeds"], cap)
            data = b.reshape(-1)[plan["index"]].astype(x.dtype, copy=False)
        return _matrix(plan, data, (n, n), out, "sparse_hessian")

    def __call__(self, x, *args, out=None):
        """The Hessian at ``x`` as a CSR matrix; ``out``: a matrix an earlier call returned
        (same shapes, so the same pattern), overwritten and returned (no allocation: the
        values of a loop's matrix refreshed in place)."""
        x = _point(x, "sparse_hessian")
        plan, cap = self._plan(x, args)
        return self._evaluate(plan, x, args, cap, out)

    def dense(self, x, *args, capture=None):
        """The Hessian as a dense array of shape ``x.shape + x.shape``, assembled from the
        compressed products, or None below ``STRUCTURE_MIN_SIZE`` entries or when coloring
        would not halve the number of products (then the dense batched path is as fast).
        ``capture``: the call's capture run, when
        the caller made it already."""
        x = _point(x, "hessian")
        if x.size < STRUCTURE_MIN_SIZE:  # too few columns for detection to pay for itself
            return None
        plan, cap = self._plan(x, args, capture)
        n = plan["n"]
        if plan["dense"] or 2 * plan["ncolors"] > n:
            return None
        out = np.zeros(n * n, dtype=x.dtype)
        if plan["ncolors"]:
            self.nhvp += plan["ncolors"]
            b = plan["product"](x, args, plan["seeds"], cap)
            out[_flat_positions(plan)] = b.reshape(-1)[plan["index"]]
        return out.reshape(x.shape + x.shape)

    def dense_tensor(self, x):
        """:meth:`dense` for a tensor ``x`` with a known shape (symbolic in a trace, or
        watched by a tape), built from differentiable ops: the colored products as one
        batch (:func:`hessgrad.engine.batching.map_rows`), their entries gathered and placed in the
        dense Hessian. None where :meth:`dense` would be, and below ``STRUCTURE_MIN_SIZE``."""
        if x.size < STRUCTURE_MIN_SIZE:
            return None
        plan, _ = self._plan(np.zeros(x.shape, x.dtype), ())
        n, k = plan["n"], plan["ncolors"]
        if plan["dense"] or 2 * k > n:
            return None
        if not k:
            return constant(np.zeros(x.shape + x.shape, x.dtype))
        product = _hvp(self.f)
        self.nhvp += k
        (b,) = stacked_rows(lambda v: [product(x, v)], plan["seeds"])
        b = reshape(b, shape=(-1,))
        entries = getitem(b, index=plan["index"])
        out = scatter_add(entries, index=_flat_positions(plan), shape=(n * n,))
        return reshape(out, shape=x.shape + x.shape)

    def structure(self, x, *args, triangle=None):
        """``(rows, cols)``: the int64 coordinates of the entries that :meth:`values`
        returns, fixed for ``x``'s shape, dtype and argument signature (the order of the
        pattern's CSR storage; ``triangle="lower"`` keeps those with ``row >= col``, the
        layout IPOPT asks for).

        >>> import hessgrad as hg
        >>> import hessgrad.numpy as hnp
        >>> H = hg.sparse_hessian(lambda x: hnp.sum(x[1:] * x[:-1] ** 2))
        >>> rows, cols = H.structure(np.ones(3), triangle="lower")
        >>> rows.tolist(), cols.tolist()
        ([0, 1, 1, 2], [0, 0, 1, 1])
        >>> H.values(np.array([1.0, 2.0, 3.0]), triangle="lower")
        array([4., 2., 6., 4.])
        """
        x = _point(x, "sparse_hessian")
        _, rows, cols = _triangle(self._plan(x, args)[0], triangle, "sparse_hessian")
        return rows, cols

    def values(self, x, *args, triangle=None):
        """The Hessian's entries at the coordinates of :meth:`structure` (same ``triangle``),
        as a 1-D array: the compressed products and one gather, without building a matrix.

        Raises:
            ValueError: ``triangle`` is not None or "lower".
        """
        x = _point(x, "sparse_hessian")
        plan, cap = self._plan(x, args)
        keep, rows, cols = _triangle(plan, triangle, "sparse_hessian")
        n = plan["n"]
        if plan["dense"]:
            self.nhvp += n
            h = np.asarray(dense_hessian(plan.get("f", self.f))(x, *args)).reshape(-1)
            return h[rows * n + cols].astype(x.dtype, copy=False)
        if not plan["ncolors"]:
            return np.zeros(len(keep), x.dtype)
        index = plan.get(("index", triangle))
        if index is None:
            index = plan[("index", triangle)] = plan["index"][keep]
        self.nhvp += plan["ncolors"]
        b = plan["product"](x, args, plan["seeds"], cap)
        return b.reshape(-1)[index].astype(x.dtype, copy=False)

    def pattern(self, x, *args):
        """The (cached) boolean sparsity pattern used at ``x``'s shape and dtype."""
        x = _point(x, "sparse_hessian")
        return self._plan(x, args)[0]["pattern"]

    def colors(self, x, *args):
        """The coloring used at ``x``'s shape (None on the dense path)."""
        x = _point(x, "sparse_hessian")
        return self._plan(x, args)[0].get("colors")

    def info(self, x, *args):
        """A dict: n, nnz, density, ncolors, dense (dense path taken), gave_up (detection
        fell back to a dense pattern), max_row_nnz (the most entries in one row: the
        number of colors a distance-2 coloring needs at least; a star coloring may need
        fewer, e.g. 2 for an arrow pattern), local (``f`` branched in Python on ``x``'s
        values: the pattern holds where the same branches are taken)."""
        x = _point(x, "sparse_hessian")
        plan, _ = self._plan(x, args)
        n = plan["n"]
        return {"n": n, "nnz": int(plan["pattern"].nnz),
                "density": plan["pattern"].nnz / max(n * n, 1),
                "ncolors": plan["ncolors"], "dense": plan["dense"],
                "gave_up": plan["gave_up"], "local": plan["local"],
                "max_row_nnz": _max_row_count(plan["pattern"])}


def sparse_hessian(f, *, method="trace", coloring="star", dense_threshold=DENSE_THRESHOLD,
                   probes=2, seed=0, jit_kernels=True):
    """The Hessian of scalar ``f`` as a ``scipy.sparse.csr_matrix``, from a few HVPs.

    The sparsity pattern is detected once per input shape and dtype (and again when what
    ``f`` reads from outside its arguments changes: see ``hessgrad.tracing.capture``),
    colored, and every call computes ``H S`` (``S`` one 0/1 column per color) in one batched
    run of a traced Hessian-vector product, then reads each nonzero off ``H S``. The Hessian
    is w.r.t. the first argument, flattened: shape ``(x.size, x.size)``. Where ``f`` branches
    in Python on ``x``'s values, the pattern is that of the branches taken (``info``'s
    ``local``), detected again where a later point branches differently.

    Args:
        f: scalar function ``f(x, *args)`` written with hessgrad ops.
        method: "trace" (default): the pattern is derived from the traced graph; exact for
            common ops, conservative (never missing a nonzero) otherwise. "probe": the
            Hessian is evaluated at the first ``x`` and at ``probes`` random points near it
            (through the traced pattern) and the union of its nonzeros is the pattern;
            *probabilistic*: an entry that happens to vanish at every probe point is missed
            everywhere (exact at the first ``x`` itself).
        coloring: "star" (symmetric, direct recovery, default) or "column" (distance-2).
        dense_threshold: when the pattern has more than this fraction of nonzeros, the dense
            Hessian (:func:`hessgrad.hessian`) is computed instead and returned as a sparse
            matrix.
        probes, seed: number of random points and their seed for ``method="probe"``.
        jit_kernels: compile the batched product with fused Numba kernels (as
            ``hessgrad.function``); they are compiled for each input size (seconds, then
            cached on disk), so ``False`` starts faster where few calls follow.
    Returns:
        A :class:`SparseHessian`: call it as ``H(x, *args)``; ``.pattern(x)``, ``.colors(x)``,
        ``.info(x)`` expose the cached analysis. ``args`` are treated as data of unknown value
        by the detection (the pattern holds for all of them).
    Raises:
        ValueError: bad ``method``, ``coloring`` or ``dense_threshold``; ``f`` is not scalar.
        TypeError: ``f`` is not callable, or ``x`` is not a floating-point array (integers
            are not cast).

    >>> import hessgrad as hg
    >>> import hessgrad.numpy as hnp
    >>> rosen = lambda x: hnp.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    >>> H = hg.sparse_hessian(rosen)
    >>> x = np.linspace(-1.0, 2.0, 1000)
    >>> h = H(x)
    >>> h.shape, h.nnz, H.info(x)["ncolors"]
    ((1000, 1000), 2998, 3)
    >>> from scipy.optimize import rosen_hess
    >>> bool(np.allclose(h.toarray(), rosen_hess(x)))
    True
    """
    return SparseHessian(f, method=method, coloring=coloring, dense_threshold=dense_threshold,
                         probes=probes, seed=seed, jit_kernels=jit_kernels)


def _jvp_of(f):
    def product(x, *rest):
        *args, t = rest
        return _jvp(lambda z: f(z, *args), (x,), (t,))[1]
    return product


def _vjp_of(f):
    def product(x, *rest):
        *args, w = rest
        return _vjp(lambda z: f(z, *args), x)[1](w)[0]
    return product


class SparseJacobian(_PlanCache):
    """``J(x, *args)``: the Jacobian of ``f`` (output flattened, shape ``(m, x.size)``) as a
    ``scipy.sparse.csr_matrix``, built by :func:`sparse_jacobian`."""

    MODES = ("auto", "fwd", "rev")

    def __init__(self, f, *, mode="auto", dense_threshold=DENSE_THRESHOLD, jit_kernels=True):
        _check("sparse_jacobian", "trace", None, dense_threshold)
        if mode not in self.MODES:
            raise ValueError(f"sparse_jacobian: mode must be one of {self.MODES}, got {mode!r}")
        _check_callable(f, "sparse_jacobian")
        super().__init__(f)
        self.mode = mode
        self.dense_threshold = float(dense_threshold)
        self.jit_kernels = bool(jit_kernels)

    def _build(self, x, args, cap, once):
        pattern, gave_up, out_shape, local = _sparsity._jacobian_pattern(self.f, x, args,
                                                                         "sparse_jacobian")
        m, n = pattern.shape
        plan = {"pattern": pattern, "m": m, "n": n, "gave_up": gave_up, "out_shape": out_shape,
                "detected": pattern, "local": local}
        dense = pattern.nnz > self.dense_threshold * m * n
        if dense:   # every entry: identity seeds on the cheaper side
            pattern = plan["pattern"] = _sparsity.dense_pattern(n, m)
        if self.mode == "fwd" or (self.mode == "auto" and not dense):
            col = np.arange(n) if dense else _coloring.column_coloring(pattern)
        # rows need at least as many colors as the longest column has entries: where that
        # is no fewer than the columns' colors (a dense column), the rows are not colored
        hopeless = self.mode == "auto" and not dense and \
            np.bincount(pattern.indices, minlength=n).max(initial=0) > col.max(initial=-1)
        if self.mode == "rev" or (self.mode == "auto" and not dense and not hopeless):
            row = np.arange(m) if dense else _coloring.column_coloring(pattern.T)
        if self.mode == "auto":
            if dense:
                use_fwd = n <= m
                col, row = np.arange(n), np.arange(m)
            else:
                use_fwd = hopeless or col.max(initial=-1) <= row.max(initial=-1)
        else:
            use_fwd = self.mode == "fwd"
        plan["dense"] = dense
        if not pattern.nnz:
            plan["ncolors"] = 0
            return plan
        if use_fwd:
            plan["mode"] = "fwd"
            plan["colors"] = col
            plan["ncolors"] = int(col.max()) + 1
            plan["index"] = _coloring.column_recovery_index(pattern, col)
            plan["seeds"] = np.ascontiguousarray(
                _coloring.seed_matrix(col, x.dtype).T).reshape((plan["ncolors"],) + x.shape)
            plan["product"] = _Compressed(_jvp_of(self.f), x, args, x.shape, once,
                                          self.jit_kernels)
        else:
            plan["mode"] = "rev"
            plan["colors"] = row
            plan["ncolors"] = int(row.max()) + 1
            rows = np.repeat(np.arange(m, dtype=np.int64), np.diff(pattern.indptr))
            plan["index"] = row[rows] * n + pattern.indices
            plan["seeds"] = np.ascontiguousarray(
                _coloring.seed_matrix(row, x.dtype).T).reshape((plan["ncolors"],) + out_shape)
            plan["product"] = _Compressed(_vjp_of(self.f), x, args, out_shape, once,
                                          self.jit_kernels)
        return plan

    def __call__(self, x, *args, out=None):
        """The Jacobian at ``x`` as a CSR matrix; ``out`` as for :class:`SparseHessian`."""
        x = _point(x, "sparse_jacobian")
        plan, cap = self._plan(x, args)
        m, n = plan["m"], plan["n"]
        if not plan["ncolors"]:
            data = np.zeros(0, x.dtype)
        else:
            b = plan["product"](x, args, plan["seeds"], cap)
            data = b.reshape(-1)[plan["index"]].astype(x.dtype, copy=False)
        return _matrix(plan, data, (m, n), out, "sparse_jacobian")

    def pattern(self, x, *args):
        x = _point(x, "sparse_jacobian")
        return self._plan(x, args)[0]["pattern"]

    def structure(self, x, *args):
        """``(rows, cols)``: the int64 coordinates of the detected pattern's entries, in the
        order of its CSR storage, fixed for ``x``'s shape, dtype and argument signature:
        the order of :meth:`values` (and of IPOPT's Jacobian structure). On the dense path
        (more than ``dense_threshold`` of the entries) the products compute every entry,
        but the structure stays the detected one.

        >>> import hessgrad as hg
        >>> J = hg.sparse_jacobian(lambda x: x[1:] ** 2 - x[:-1])
        >>> rows, cols = J.structure(np.zeros(3))
        >>> rows.tolist(), cols.tolist()
        ([0, 0, 1, 1], [0, 1, 1, 2])
        >>> J.values(np.array([1.0, 2.0, 3.0]))
        array([-1.,  4., -1.,  6.])
        """
        x = _point(x, "sparse_jacobian")
        return _coordinates(self._plan(x, args)[0]["detected"])

    def values(self, x, *args):
        """The Jacobian's entries at the coordinates of :meth:`structure`, as a 1-D array:
        the compressed products and one gather, without building a matrix."""
        x = _point(x, "sparse_jacobian")
        plan, cap = self._plan(x, args)
        if not plan["ncolors"]:
            return np.zeros(plan["detected"].nnz, x.dtype)
        index = plan.get("detected_index")
        if index is None:
            index = plan["index"]
            if plan["detected"] is not plan["pattern"]:  # dense path: every entry computed
                rows, cols = _coordinates(plan["detected"])
                index = index[rows * plan["n"] + cols]
            plan["detected_index"] = index
        b = plan["product"](x, args, plan["seeds"], cap)
        return b.reshape(-1)[index].astype(x.dtype, copy=False)

    def info(self, x, *args):
        """A dict: m, n, nnz, ncolors, mode ("fwd": JVPs, "rev": VJPs), dense, gave_up,
        lower_bound (the colors the chosen side needs at least: the most entries of the
        detected pattern in one row for column colors, in one column for row colors; the
        dense path seeds every column or row instead), local (as for sparse Hessians)."""
        x = _point(x, "sparse_jacobian")
        plan, _ = self._plan(x, args)
        detected = plan["detected"]
        side = detected.T.tocsr() if plan.get("mode") == "rev" else detected
        return {"m": plan["m"], "n": plan["n"], "nnz": int(detected.nnz),
                "ncolors": plan["ncolors"], "mode": plan.get("mode"),
                "dense": plan["dense"], "gave_up": plan["gave_up"], "local": plan["local"],
                "lower_bound": _max_row_count(side)}


def sparse_jacobian(f, *, mode="auto", dense_threshold=DENSE_THRESHOLD, jit_kernels=True):
    """The Jacobian of ``f`` as a ``scipy.sparse.csr_matrix`` from a few JVPs or VJPs.

    The pattern (from the traced graph) is colored by columns (for JVPs, ``J S``) and by rows
    (for VJPs, ``W^T J``); ``mode="auto"`` takes the side with fewer colors. All products run
    as one batch. The output is flattened: shape ``(f(x).size, x.size)``.

    Args:
        f: function ``f(x, *args)`` returning one array.
        mode: "auto", "fwd" (column coloring, JVPs) or "rev" (row coloring, VJPs).
        dense_threshold: above this fraction of nonzeros every column (or row) is seeded.
        jit_kernels: as :func:`sparse_hessian`'s.
    Returns:
        A :class:`SparseJacobian`, called as ``J(x, *args)``.
    Raises:
        ValueError: bad ``mode`` or ``dense_threshold``, or ``f`` does not return one array.
        TypeError: ``f`` is not callable, or ``x`` is not a floating-point array (integers
            are not cast).

    >>> import hessgrad as hg
    >>> J = hg.sparse_jacobian(lambda x: x[1:] ** 2 - x[:-1])
    >>> J(np.array([1.0, 2.0, 3.0])).toarray()
    array([[-1.,  4.,  0.],
           [ 0., -1.,  6.]])
    >>> J.info(np.zeros(1000))["ncolors"]
    2
    """
    return SparseJacobian(f, mode=mode, dense_threshold=dense_threshold,
                          jit_kernels=jit_kernels)


def _structure_budget(n):
    return min(_sparsity.ENTRY_BUDGET, max(64 * n, n * n // 8))


def structure_check(f):
    """What ``hessgrad.hessian(f)`` consults once per signature: a sparse Hessian whose
    detection gives up as soon as an intermediate holds more than ``max(64 n, n^2 / 8)``
    dependency entries (a Hessian that dense is computed faster by the dense path)."""
    # denser patterns than half seldom halve the products
    return SparseHessian(f, dense_threshold=0.5, budget=_structure_budget)
