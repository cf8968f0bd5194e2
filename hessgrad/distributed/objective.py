"""``ShardedObjective``: ``F(x) = sum_i f(x, *shard_i)`` with each shard resident on a Dask
worker, and ``DistributedHessianOperator``, its Hessian at a point as a matvec/matmat operator.

Each evaluation runs one task per shard where the shard lives and sums the results on the
workers by a tree reduction; only ``x``, the vectors and the sums travel.
"""

import math
import uuid

import numpy as np

from . import _worker
from ._cluster import (Cluster, Resident, as_float_array, gather_sum, run_blocks, tree_sum,
                       with_recovery)


class Loader:
    """A shard made on a worker by ``fn(*args)`` (e.g. reading a file) instead of being sent
    from the client. Dask knows how to make it again, so a worker death costs a reload."""

    def __init__(self, fn, *args):
        if not callable(fn):
            raise TypeError(f"loader: fn must be callable, got {type(fn).__name__}")
        self.fn, self.args = fn, args

    def __repr__(self):
        return f"Loader({getattr(self.fn, '__name__', self.fn)!r}, {len(self.args)} args)"


def loader(fn, *args):
    """A shard loaded on a worker by ``fn(*args)``, which returns an array or a tuple of
    arrays (the shard's extra arguments of ``f``). See :func:`sharded`."""
    return Loader(fn, *args)


def _normalize_shard(i, shard):
    if isinstance(shard, Loader):
        return shard
    if isinstance(shard, (tuple, list)):
        data = tuple(shard)
    else:
        data = (shard,)
    for j, a in enumerate(data):
        if not hasattr(a, "shape") or not hasattr(a, "dtype"):
            if np.ndim(a) == 0 and isinstance(a, (int, float, np.number)):
                continue
            raise TypeError(f"sharded: shard {i} argument {j} must be an array (or a "
                            f"hessgrad.distributed.loader), got {type(a).__name__}")
    return data


def check_shards(described):
    """Raise ValueError unless the shards agree in arity, dtypes and all but the first axis.

    ``described``: one list of ``(shape, dtype str)`` per shard.
    """
    ref = described[0]
    for i, desc in enumerate(described[1:], start=1):
        if len(desc) != len(ref):
            raise ValueError(f"sharded: shard {i} has {len(desc)} data arrays, shard 0 has "
                             f"{len(ref)}: every shard must give f the same arguments")
        for j, ((shape, dtype), (shape0, dtype0)) in enumerate(zip(desc, ref)):
            if np.dtype(dtype) != np.dtype(dtype0):
                raise ValueError(f"sharded: shard {i} argument {j} has dtype "
                                 f"{np.dtype(dtype)}, shard 0 has {np.dtype(dtype0)}")
            if len(shape) != len(shape0) or tuple(shape[1:]) != tuple(shape0[1:]):
                raise ValueError(f"sharded: shard {i} argument {j} has shape {shape}, shard 0 "
                                 f"has {shape0}: shards may differ only in the leading "
                                 f"(row) axis")


class ShardedObjective:
    """``F(x) = sum_i f(x, *shards[i])`` evaluated where the shards live (see :func:`sharded`).

    SciPy callbacks ``fun``, ``jac``, ``hess``, ``hessp`` (value and gradient of one ``x``
    come from one distributed evaluation, cached), ``value_and_grad``,
    ``hessian_operator(x)``, dense ``hessian(x, out=)``, and trace / spectrum estimators.
    Close it (or use ``with``) to release the shards and any cluster it started.
    """

    # Unfolded products per point before each worker builds the folded linearization
    # (hessgrad.scipy.Objective's ski-rental threshold).
    fold_after = 8

    def __init__(self, f, shards, client=None, *, workers=None, replicas=2, broadcast=False,
                 progress=None, timeout=10, modules=()):
        import cloudpickle

        if not callable(f):
            raise TypeError(f"sharded: f must be callable, got {type(f).__name__}")
        shards = list(shards)
        if not shards:
            raise ValueError("sharded: shards is empty; give at least one shard (a tuple of "
                             "arrays, one array, or a loader)")
        normalized = [_normalize_shard(i, s) for i, s in enumerate(shards)]
        local = [s for s in normalized if not isinstance(s, Loader)]
        if len(local) == len(normalized):
            check_shards([_worker.describe(s) for s in normalized])
        self.f = f
        self.progress = progress
        self.n_shards = len(normalized)
        self.token = uuid.uuid4().hex
        self._spec = _worker.Spec(self.token, cloudpickle.dumps(f))
        self._cluster = Cluster(client, workers, timeout)
        self._closed = False
        try:
            self._cluster.ship(modules)
            self._shards = [
                Resident(self._cluster, loader=(s.fn, s.args)) if isinstance(s, Loader) else
                Resident(self._cluster, value=s, replicas=replicas, broadcast=broadcast)
                for s in normalized]
            if len(local) != len(normalized):
                described = self.client.gather(
                    [self.client.submit(_worker.describe, r.future(), pure=False)
                     for r in self._shards])
                check_shards(described)
        except BaseException:
            self.close()
            raise
        self._last = None       # (x key, value, gradient)
        self._operator = None   # (x key, DistributedHessianOperator)
        self.nfev = self.njev = self.nhev = self.nhessp = 0

    # ------------------------------------------------------------------ plumbing
    @property
    def client(self):
        """The ``distributed.Client`` the tasks run on."""
        return self._cluster.client

    def n_workers(self):
        return self._cluster.n_workers()

    def shard_futures(self):
        """One future per shard (re-created if a worker death lost it)."""
        if self._closed:
            raise RuntimeError("sharded: this objective is closed")
        return [r.future() for r in self._shards]

    def submit_per_shard(self, task, *args):
        """``task(spec, i, *args, shard_i)`` for every shard, as a list of futures."""
        client = self.client
        return [client.submit(task, self._spec, i, *args, data, pure=False)
                for i, data in enumerate(self.shard_futures())]

    def sum_per_shard(self, task, *args):
        """The sum over shards of ``task(spec, i, *args, shard_i)`` (tree, then client)."""
        return gather_sum(self.client, self.submit_per_shard(task, *args))

    def close(self):
        """Forget cached traces on the workers, release the shards, and stop the cluster if
        this objective started it."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._cluster.client.status == "running":
                for r in getattr(self, "_shards", ()):
                    r.release()
                if not self._cluster.owned:
                    self.client.run(_worker.forget, self.token)
        except Exception:  # noqa: BLE001 - closing must not mask the user's error
            pass
        finally:
            self._cluster.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = "closed" if self._closed else f"{self.n_shards} shards"
        return f"ShardedObjective({getattr(self.f, '__name__', 'f')}, {state})"

    # ------------------------------------------------------------------ first order
    def _evaluate(self, x, args):
        if args:
            raise TypeError("sharded: extra arguments are not supported; put data in the "
                            "shards (f(x, *shard))")
        x = as_float_array(x, "sharded")
        key = (x.tobytes(), x.shape, x.dtype.str)
        if self._last is None or self._last[0] != key:
            value, grad = with_recovery(
                lambda: self.sum_per_shard(_gradient_task, x), "value_and_grad")
            self._last = (key, float(value), np.asarray(grad))
            self.nfev += 1
        return self._last

    def fun(self, x, *args):
        return self._evaluate(x, args)[1]

    def jac(self, x, *args):
        self.njev += 1
        return self._evaluate(x, args)[2].copy()

    def value_and_grad(self, x, *args):
        _, value, grad = self._evaluate(x, args)
        return value, grad.copy()

    __call__ = fun

    # ------------------------------------------------------------------ second order
    def hessian_operator(self, x):
        """The Hessian of ``F`` at ``x`` as a :class:`DistributedHessianOperator`."""
        return DistributedHessianOperator(self, x)

    def _operator_at(self, x):
        x = as_float_array(x, "sharded")
        key = (x.tobytes(), x.shape, x.dtype.str)
        if self._operator is None or self._operator[0] != key:
            if self._operator is not None:
                self._operator[1].release()
            self._operator = (key, DistributedHessianOperator(self, x))
        return self._operator[1]

    def hessp(self, x, p, *args):
        if args:
            raise TypeError("sharded: extra arguments are not supported")
        self.nhessp += 1
        op = self._operator_at(x)
        p = np.asarray(p, dtype=op.dtype)
        return op.product(p.reshape(-1), fold_after=self.fold_after).reshape(p.shape)

    def hess(self, x, *args):
        if args:
            raise TypeError("sharded: extra arguments are not supported")
        self.nhev += 1
        x = as_float_array(x, "sharded")
        return self._operator_at(x).to_dense().reshape(x.shape * 2)

    def hessian(self, x, *, out=None, block_size=None, progress=None):
        """The dense Hessian at ``x`` (flat, ``(n, n)``) computed in row blocks spread over
        the workers; with ``out=`` a path, written block by block to a ``.npy`` memmap
        (returned) so it never has to fit in the client's memory."""
        return self._operator_at(x).to_dense(out=out, block_size=block_size, progress=progress)

    # ------------------------------------------------------------------ analytics
    def hutchinson(self, x, num_matvecs, *, distribution="rademacher", rng=None,
                   progress=None):
        """``tr H(x)`` by Hutchinson's estimator with probes made on the workers."""
        from .analytics import hutchinson

        return hutchinson(self._operator_at(x), num_matvecs, distribution=distribution,
                          rng=rng, progress=progress)

    def hutchpp(self, x, num_matvecs, *, distribution="rademacher", rng=None):
        """``tr H(x)`` by Hutch++ (``solvers.hutchpp`` on the distributed matmat)."""
        from hessgrad import solvers  # noqa: PLC0415 - hessgrad.distributed sits beside the CLI

        return solvers.hutchpp(self._operator_at(x), num_matvecs, distribution=distribution,
                               rng=rng)

    def spectral_density(self, x, *, num_probes=10, lanczos_steps=30, rng=None,
                         progress=None):
        """Stochastic Lanczos quadrature of ``H(x)``'s spectrum (``solvers.SpectralDensity``).

        With one shard on every worker (:func:`replicated`) each probe's Lanczos runs inside
        one task against the worker's replica; with several shards all probes advance in
        lockstep, one distributed matmat per step.
        """
        from .analytics import spectral_density

        return spectral_density(self._operator_at(x), num_probes=num_probes,
                                lanczos_steps=lanczos_steps, rng=rng, progress=progress)


def _gradient_task(spec, i, x, data):
    del i
    return _worker.value_and_grad(spec, x, data)


class DistributedHessianOperator:
    """The Hessian of a :class:`ShardedObjective` at ``x``: ``shape``, ``dtype``, ``matvec``,
    ``matmat``, ``rmatvec``, ``nmatvec`` (the duck type ``solvers`` and SciPy accept).

    ``x`` is sent to every worker once; each worker builds the folded HVP of its shards at
    ``x`` on the first product and reuses it. ``matmat`` splits its columns into blocks
    spread over the workers.
    """

    def __init__(self, objective, x):
        x = as_float_array(x, "hessian_operator")
        self.objective = objective
        self.x = x
        self.shape = (x.size, x.size)
        self.dtype = x.dtype
        self.nmatvec = 0
        self._x = Resident(objective._cluster, value=x, broadcast=True)

    def release(self):
        self._x.release()

    def x_future(self):
        return self._x.future()

    def product(self, v, fold_after=0):
        """``H v`` for a flat ``v`` (one task per shard, summed on the workers)."""
        if v.size != self.x.size:
            raise ValueError(f"DistributedHessianOperator: vector has {v.size} entries, the "
                             f"operator has shape {self.shape}")
        v = np.ascontiguousarray(v, dtype=self.dtype).reshape(-1)
        self.nmatvec += 1
        return with_recovery(lambda: self.objective.sum_per_shard(
            _worker.hvp, self.x_future(), v, fold_after), "matvec")

    def matvec(self, v):
        v = np.asarray(v, dtype=self.dtype)
        out = self.product(v.reshape(-1))
        return out.reshape(v.shape) if v.ndim == 2 else out

    def rmatvec(self, v):
        return self.matvec(v)  # a Hessian is symmetric

    def matmat(self, V, *, progress=None):
        V = np.asarray(V, dtype=self.dtype)
        if V.ndim != 2 or V.shape[0] != self.shape[1]:
            raise ValueError(f"DistributedHessianOperator.matmat: matrix has shape {V.shape}, "
                             f"expected ({self.shape[1]}, k)")
        k = V.shape[1]
        if not k:
            return np.zeros((self.shape[0], 0), self.dtype)
        rows = np.ascontiguousarray(V.T)
        out = np.empty((k, self.shape[0]), self.dtype)
        self.run_blocks(_block_starts(k, self.block_size(k)), "matmat",
                        lambda s, e: (_worker.batched_hvp, rows[s:e]),
                        lambda s, e, value: out.__setitem__(slice(s, e), value), progress)
        self.nmatvec += k
        return out.T

    def block_size(self, k, max_bytes=32 * 2**20):
        """Columns per task: enough blocks to keep every worker busy (about four per worker
        over all shards), each result at most ``max_bytes``."""
        per_shard = max(1, math.ceil(4 * self.objective.n_workers() / self.objective.n_shards))
        return max(1, min(math.ceil(k / per_shard), max_bytes // (8 * self.shape[0])))

    def run_blocks(self, blocks, label, task, collect, progress=None):
        """For each ``(start, stop)`` block: ``task(start, stop)`` gives ``(fn, *args)`` run
        per shard (after the spec, shard index and ``x``), summed over shards, and handed to
        ``collect(start, stop, sum)``."""
        obj = self.objective

        def submit(block):
            fn, *args = task(*block)
            return tree_sum(obj.client, obj.submit_per_shard(fn, self.x_future(), *args))

        progress = obj.progress if progress is None else progress
        run_blocks(obj._cluster, blocks, submit, lambda b, v: collect(*b, v), label,
                   progress=progress)

    def __matmul__(self, other):
        other = np.asarray(other)
        return self.matvec(other) if other.ndim == 1 else self.matmat(other)

    def to_dense(self, out=None, *, block_size=None, progress=None):
        """The full matrix by row blocks over the workers (rows equal columns: symmetric);
        into a ``.npy`` memmap at path ``out`` when given (written as blocks arrive)."""
        n = self.shape[0]
        if out is not None:
            H = np.lib.format.open_memmap(out, mode="w+", dtype=self.dtype, shape=(n, n))
        else:
            H = np.empty((n, n), self.dtype)
        if n:
            b = int(block_size) if block_size else self.block_size(n)
            if b < 1:
                raise ValueError(f"to_dense: block_size must be >= 1, got {block_size!r}")

            def collect(s, e, rows):
                H[s:e] = rows

            self.run_blocks(_block_starts(n, b), "hessian blocks",
                            lambda s, e: (_worker.hessian_rows, s, e), collect, progress)
            self.nmatvec += n
        if out is not None:
            H.flush()
        return H

    def aslinearoperator(self):
        """This operator as a ``scipy.sparse.linalg.LinearOperator``."""
        from scipy.sparse.linalg import LinearOperator

        return LinearOperator(self.shape, matvec=self.matvec, rmatvec=self.rmatvec,
                              matmat=self.matmat, dtype=self.dtype)

    def __repr__(self):
        return (f"DistributedHessianOperator(shape={self.shape}, "
                f"shards={self.objective.n_shards}, nmatvec={self.nmatvec})")


def _block_starts(n, b):
    return [(s, min(s + b, n)) for s in range(0, n, b)]


__all__ = ["ShardedObjective", "DistributedHessianOperator", "Loader", "loader",
           "check_shards"]
