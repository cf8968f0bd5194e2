"""What runs inside a Dask worker: per-process caches of traced functions and the per-shard tasks.

Every task takes a :class:`Spec` (an objective's token and its pickled ``f``) and one shard's
data. Traced functions are built once per worker process and objective; Hessian
linearizations (``make_hvp(f)(x, *shard)``) once per worker, shard and point, so the repeated
products of a Krylov solve re-run only the tangent part. This module imports no Dask: it is
plain hessgrad code, importable (and testable) on the client too.
"""

import hashlib
from collections import OrderedDict

import numpy as np

import hessgrad as hg
from hessgrad.engine.batching import members_per_chunk

# Linearizations kept per worker process (least recently used are dropped). Each holds a
# folded graph at one point for one shard: a few times the shard's size.
MAX_LINEARIZATIONS = 32
# A batched product is run in chunks whose largest intermediate holds about this many bytes
# (as hessgrad.hessian does): matrix-matrix products without multi-gigabyte temporaries.

_FUNCTIONS = {}                # (token, kind) -> traced function
_LINEARIZATIONS = OrderedDict()  # (token, shard, x digest) -> make_hvp(f)(x, *shard)
_PRODUCTS = {}                 # (token, shard, x digest) -> unfolded products so far


class Spec:
    """An objective as a worker sees it: a token naming it and its cloudpickled ``f``.

    The payload is unpickled once per worker process (the first task that needs it).
    """

    __slots__ = ("token", "payload")

    def __init__(self, token, payload):
        self.token, self.payload = token, payload

    def __reduce__(self):
        return (Spec, (self.token, self.payload))

    def function(self):
        key = (self.token, "f")
        f = _FUNCTIONS.get(key)
        if f is None:
            import cloudpickle

            f = _FUNCTIONS[key] = cloudpickle.loads(self.payload)
        return f

    def traced(self, kind):
        key = (self.token, kind)
        fn = _FUNCTIONS.get(key)
        if fn is None:
            f = self.function()
            builders = {"value_and_grad": lambda: hg.function(hg.value_and_grad(f)),
                        "hvp": lambda: hg.function(hg.hvp(f))}
            fn = _FUNCTIONS[key] = builders[kind]()
        return fn


def digest(x):
    """A short name for a point: its dtype, shape and a hash of its bytes."""
    x = np.ascontiguousarray(x)
    h = hashlib.blake2b(x.tobytes(), digest_size=12).hexdigest()
    return f"{x.dtype.str}{x.shape}{h}"


def linearization(spec, shard, x, data):
    """The folded HVP of shard ``shard`` at ``x`` (built once per worker, then reused)."""
    key = (spec.token, shard, digest(x))
    apply = _LINEARIZATIONS.get(key)
    if apply is None:
        apply = hg.make_hvp(spec.function())(x, *data)
        _LINEARIZATIONS[key] = apply
        while len(_LINEARIZATIONS) > MAX_LINEARIZATIONS:
            _LINEARIZATIONS.popitem(last=False)
    else:
        _LINEARIZATIONS.move_to_end(key)
    return apply


def forget(token):
    """Drop everything cached for one objective (run on every worker when it is closed)."""
    for cache in (_FUNCTIONS, _LINEARIZATIONS, _PRODUCTS):
        for key in [k for k in cache if k[0] == token]:
            del cache[key]
    return True


# ------------------------------------------------------------------------------ tasks

def value_and_grad(spec, x, data):
    value, grad = spec.traced("value_and_grad")(x, *data)
    value = np.asarray(value)
    if value.size != 1:
        raise ValueError(f"sharded: f must return a scalar for every shard, got an array of "
                         f"shape {value.shape}")
    return float(value.reshape(())), np.asarray(grad, dtype=x.dtype).reshape(x.shape)


def hvp(spec, shard, x, v, fold_after, data):
    """``H_shard(x) v``. The first ``fold_after`` products at a point use the traced
    (unfolded) HVP; after that the folded linearization is built and reused (the same ski
    rental as ``hessgrad.scipy.Objective``). ``fold_after=0`` folds at once."""
    key = (spec.token, shard, digest(x))
    if fold_after and key not in _LINEARIZATIONS:
        count = _PRODUCTS.get(key, 0) + 1
        if count <= fold_after:
            if len(_PRODUCTS) > 4 * MAX_LINEARIZATIONS:
                _PRODUCTS.clear()
            _PRODUCTS[key] = count
            out = spec.traced("hvp")(x, *data, v.reshape(x.shape))
            return np.asarray(out, dtype=x.dtype).reshape(-1)
    return np.asarray(linearization(spec, shard, x, data)(v.reshape(x.shape)),
                      dtype=x.dtype).reshape(-1)


def batched_hvp(spec, shard, x, V, data):
    """``V @ H_shard(x)`` for the rows of ``V`` (shape ``(k, n)``), as ``(k, n)``."""
    apply = linearization(spec, shard, x, data)
    k, n = V.shape
    out = np.empty((k, n), dtype=x.dtype)
    if k == 0:
        return out
    largest = apply.largest_intermediate(np.zeros(x.shape, x.dtype))
    chunk = members_per_chunk(largest)
    for start in range(0, k, chunk):
        stop = min(start + chunk, k)
        block = V[start:stop].reshape((stop - start,) + x.shape)
        out[start:stop] = np.asarray(apply.batched(block)).reshape(stop - start, n)
    return out


def hessian_rows(spec, shard, x, start, stop, data):
    """Rows ``start:stop`` of ``H_shard(x)`` (= its columns: a Hessian is symmetric), from a
    batched product with basis vectors made here rather than shipped."""
    n = x.size
    E = np.zeros((stop - start, n), dtype=x.dtype)
    E[np.arange(stop - start), np.arange(start, stop)] = 1.0
    return batched_hvp(spec, shard, x, E, data)


# Probes made from one seed: the client's blocks hold whole groups, so probe i is the same
# whatever the cluster's block sizes (and a seed gives the same estimate on any cluster).
PROBES_PER_SEED = 8


def probes(seeds, n, k, distribution):
    """``k`` probe vectors of length ``n`` as rows, ``PROBES_PER_SEED`` from each seed in
    turn: the same on every worker for the seeds."""
    rows = []
    for j, seed in enumerate(seeds):
        count = min(PROBES_PER_SEED, k - j * PROBES_PER_SEED)
        rng = np.random.default_rng(seed)
        if distribution == "rademacher":
            rows.append(rng.integers(0, 2, size=(count, n)).astype(np.float64) * 2.0 - 1.0)
        else:
            rows.append(rng.standard_normal((count, n)))
    return np.concatenate(rows) if rows else np.zeros((0, n))


def quadratic_forms(spec, shard, x, seeds, k, distribution, data):
    """``z^T H_shard z`` for ``k`` probes made from ``seeds``: only ``k`` numbers travel
    back."""
    Z = probes(seeds, x.size, k, distribution).astype(x.dtype, copy=False)
    return np.einsum("ij,ij->i", Z, batched_hvp(spec, shard, x, Z, data))


def lanczos_quadrature(spec, shard, x, V0, steps, data):
    """Gauss quadrature nodes and weights (stochastic Lanczos quadrature), one row per start
    vector (rows of ``V0``), against this worker's replica of the whole operator."""
    from hessgrad import solvers  # noqa: PLC0415 - this module sits beside the CLI, above solvers

    apply = linearization(spec, shard, x, data)
    n = x.size

    def matvec(v):
        return np.asarray(apply(np.asarray(v, x.dtype).reshape(x.shape))).reshape(-1)

    op = solvers.aslinearoperator_like(matvec, n)
    nodes = np.zeros((len(V0), steps))
    weights = np.zeros((len(V0), steps))
    for i, v in enumerate(V0):
        res = solvers.lanczos(op, steps, v0=v)
        theta, S = np.linalg.eigh(res.tridiagonal())
        nodes[i, :theta.size] = theta
        weights[i, :theta.size] = S[0, :] ** 2
    return nodes, weights


def describe(data):
    """Shapes and dtypes of a shard's arrays (to check loaded shards against each other)."""
    return [(tuple(np.shape(a)), np.asarray(a).dtype.str) for a in data]


def load(loader, args):
    """Run a user's loader on the worker; the shard is its return value, made a tuple."""
    data = loader(*args)
    return tuple(data) if isinstance(data, (tuple, list)) else (data,)


def add(*parts):
    """Sum of arrays, floats, or tuples of them (the tree reduction's node)."""
    first = parts[0]
    if isinstance(first, tuple):
        return tuple(add(*items) for items in zip(*parts))
    total = first
    for p in parts[1:]:
        total = total + p
    return total
