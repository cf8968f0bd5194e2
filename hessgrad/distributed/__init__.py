"""Beyond one machine: data-sharded objectives, Hessian columns and spectral probes on Dask.

``sharded(f, shards)`` is ``F(x) = sum_i f(x, *shards[i])`` with every shard resident on a
Dask worker; its ``fun``/``jac``/``hessp``/``hess`` plug into ``scipy.optimize.minimize`` and
its ``hessian_operator(x)`` into ``solvers.cg``/``eigsh``/``hutchpp`` unchanged. ``replicated``
puts one copy of ``f``'s data on every worker, for column and probe jobs on a non-sharded
objective. Dask is optional: this package imports it only when a cluster is needed
(``pip install "hessgrad[distributed]"``).

Layering: like ``hessgrad/cli.py`` this package sits above ``solvers`` (it uses
``solvers``' estimators and Lanczos) and uses only hessgrad's public API below it.

* ``objective``  -- ShardedObjective and DistributedHessianOperator;
* ``analytics``  -- Hutchinson on the workers, stochastic Lanczos quadrature;
* ``_cluster``   -- clients, resident data and its recovery, tree sums, block jobs;
* ``_worker``    -- what runs on a worker: per-process caches and per-shard tasks.
"""

from .objective import DistributedHessianOperator, Loader, ShardedObjective, loader

__all__ = ["sharded", "replicated", "hessian", "loader", "Loader", "ShardedObjective",
           "DistributedHessianOperator"]


def sharded(f, shards, client=None, *, workers=None, replicas=2, progress=None, timeout=10,
            modules=()):
    """``F(x) = sum_i f(x, *shards[i])``, each shard living on a Dask worker.

    Shards are sent once (``client.scatter``, then copied to ``replicas`` workers so that a
    worker's death loses no data; the client keeps its copy to scatter again if every
    holder dies) or loaded on the workers by :func:`loader` tasks, which Dask re-runs when
    needed. Each evaluation runs one task per shard where it lives, with ``f``'s traces and
    Hessian linearizations cached per worker process, and sums the results on the workers
    in a tree; only ``x``, vectors and sums travel.

    Args:
        f: scalar function ``f(x, *shard_data)`` written with ``hessgrad.numpy``; it is
            cloudpickled once, so keep large data in the shards, not in its closure.
        shards: a sequence whose items are a tuple of arrays (the extra arguments of ``f``),
            a single array, or a :func:`loader`. Shards may differ only in their leading
            (row) axis.
        client: None (start a ``LocalCluster`` on 127.0.0.1 with one single-threaded worker
            process per core, closed with the objective), a scheduler address, or a
            ``distributed.Client`` (left open).
        workers: number of worker processes for the local cluster (default: cores).
        replicas: workers holding each scattered shard (1 disables the copies).
        progress: True/False forces the stderr progress line of block jobs (default: on for
            jobs of 32 tasks or more).
        timeout: seconds to wait for a scheduler address to answer.
        modules: paths of single-file Python modules that ``f`` needs and the workers
            cannot import (a script's own module, found through the working directory):
            each is sent with ``Client.upload_file``, which also reaches workers that
            join later. ``f`` defined in such a module is pickled by reference, so the
            workers must import that module.
    Returns:
        :class:`ShardedObjective`: ``fun``, ``jac``, ``hess``, ``hessp``, ``value_and_grad``,
        ``hessian_operator(x)``, ``hessian(x, out=)``, ``hutchinson``, ``hutchpp``,
        ``spectral_density``; a context manager.
    Raises:
        ValueError: no shards, or shards disagree in arity, dtype or trailing shape.
        ConnectionError: the scheduler at ``client`` cannot be reached.
        ImportError: Dask's distributed scheduler is not installed.

    >>> import numpy as np, hessgrad.numpy as hnp
    >>> import hessgrad.distributed as hgd
    >>> def loss(w, A, b):
    ...     return 0.5 * hnp.sum((hnp.matmul(A, w) - b) ** 2)
    >>> A, b = np.arange(12.0).reshape(6, 2), np.ones(6)
    >>> with hgd.sharded(loss, [(A[:3], b[:3]), (A[3:], b[3:])], workers=2) as F:
    ...     bool(np.allclose(F.hess(np.zeros(2)), A.T @ A))
    True
    """
    return ShardedObjective(f, shards, client, workers=workers, replicas=replicas,
                            progress=progress, timeout=timeout, modules=modules)


def replicated(f, *data, client=None, workers=None, progress=None, timeout=10, modules=()):
    """``f(x, *data)`` with ``data`` copied to every worker: one shard whose Hessian column
    blocks, Hutchinson probes and Lanczos probes run on all workers in parallel.

    Args and returns: as :func:`sharded` (with a single shard broadcast to every worker).
    """
    return ShardedObjective(f, [tuple(data)], client, workers=workers, broadcast=True,
                            progress=progress, timeout=timeout, modules=modules)


def hessian(f, x, *data, client=None, workers=None, out=None, block_size=None,
            progress=None):
    """The dense Hessian of ``f(x, *data)`` at ``x``, column blocks spread over Dask workers
    (each block one batched HVP), assembled on the client or written block by block into the
    ``.npy`` memmap at path ``out``.

    Returns:
        ``(x.size, x.size)`` array (a ``numpy.memmap`` when ``out`` is given).
    """
    with replicated(f, *data, client=client, workers=workers, progress=progress) as F:
        return F.hessian(x, out=out, block_size=block_size)
