"""The Dask side: getting a client, keeping data resident on workers (and re-creating it when
a worker dies), tree reductions, and running many block tasks with a bounded window,
progress and per-block retries."""

import os
import sys
import time
from collections import deque

import numpy as np

INSTALL_HINT = 'install it with: pip install "hessgrad[distributed]"'
# Jobs with at least this many tasks print a progress line on stderr (progress=None).
PROGRESS_TASKS = 32
# Attempts per operation when a worker death made data unreachable before giving up.
ATTEMPTS = 3
# Latency-bound reductions (a matvec, a gradient) gather this many partial sums and add them
# on the client: one round trip instead of two for a few shards.
CLIENT_FAN_IN = 4


def dask():
    """The ``distributed`` module, or an ImportError that says how to install it."""
    try:
        import distributed
    except ImportError as exc:  # pragma: no cover - exercised only without dask
        raise ImportError(f"hessgrad.distributed needs Dask's distributed scheduler; "
                          f"{INSTALL_HINT}") from exc
    return distributed


def dask_config():
    import dask

    return dask.config


def usable_cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return os.cpu_count() or 1


def lost_errors():
    """Exceptions meaning "a worker died and took data with it": retry after re-scattering."""
    distributed = dask()
    from concurrent.futures import CancelledError

    return (CancelledError, distributed.client.FutureCancelledError)


class Cluster:
    """A ``distributed.Client`` and, when we started it, the LocalCluster behind it.

    Args:
        client: None (start a LocalCluster on 127.0.0.1 with one single-threaded worker
            process per usable core, or ``workers`` of them), a scheduler address string, or
            a connected ``distributed.Client``.
        workers: number of local worker processes when ``client`` is None.
        timeout: seconds to wait for a scheduler address to answer.
    Raises:
        ConnectionError: the scheduler cannot be reached (the message has the address and
            a hint) or the given client is closed.
    """

    def __init__(self, client=None, workers=None, timeout=10):
        distributed = dask()
        self.owned = client is None or isinstance(client, str)
        self._cluster = None
        if client is None:
            n = int(workers) if workers is not None else max(1, usable_cores())
            if n < 1:
                raise ValueError(f"workers must be >= 1, got {workers!r}")
            with dask_config().set({"distributed.worker.profile.enabled": False}):
                self._cluster = distributed.LocalCluster(
                    n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                    dashboard_address=":0", worker_dashboard_address=":0")
            self.client = distributed.Client(self._cluster)
        elif isinstance(client, str):
            try:
                self.client = distributed.Client(client, timeout=timeout)
            except (OSError, TimeoutError) as exc:
                raise ConnectionError(
                    f"hessgrad.distributed: cannot reach the Dask scheduler at {client!r} "
                    f"within {timeout} s ({type(exc).__name__}: {exc}). Hint: start one with "
                    f"`dask scheduler` and workers with `dask worker {client}`, check the "
                    f"address and firewall, or pass client=None for a local cluster") from exc
        elif isinstance(client, distributed.Client):
            if client.status not in ("running", "connecting", "newly-created"):
                address = getattr(client.scheduler, "address", None)
                raise ConnectionError(
                    f"hessgrad.distributed: the Dask client for {address!r} is "
                    f"{client.status}, not connected. Hint: reconnect it (Client(address)) "
                    f"or pass client=None for a local cluster")
            self.client = client
        else:
            raise TypeError(f"client must be None, a scheduler address or a "
                            f"distributed.Client, got {type(client).__name__}")

    def ship(self, modules):
        """Send single-file modules (paths) to the workers, present and future, where they
        become importable (``Client.upload_file``; not imported until a task needs them)."""
        for path in modules:
            if not (isinstance(path, (str, os.PathLike)) and str(path).endswith(".py")
                    and os.path.isfile(path)):
                raise ValueError(f"hessgrad.distributed: modules must be paths of .py files, "
                                 f"got {path!r}")
            self.client.upload_file(os.fspath(path), load=False)

    def n_workers(self):
        """Workers connected now (at least 1: a cluster may be scaling up)."""
        return max(1, len(self.client.nthreads()))

    def close(self):
        if not self.owned:
            return
        try:
            self.client.close()
        finally:
            if self._cluster is not None:
                self._cluster.close()
        self.owned = False


class Resident:
    """A value kept on workers: a future that is re-created when it was lost.

    Made either from local data (scattered to ``replicas`` workers; the local copy is kept
    so a lost future can be scattered again) or from a loader task that Dask itself can
    recompute on another worker.
    """

    def __init__(self, cluster, value=None, loader=None, replicas=1, broadcast=False):
        self.cluster, self.value, self.loader = cluster, value, loader
        self.replicas, self.broadcast = replicas, broadcast
        self._future = None

    def future(self):
        if self._future is None or self._future.status in ("cancelled", "lost", "error"):
            self._future = self._make()
        return self._future

    def _make(self):
        client = self.cluster.client
        if self.loader is not None:
            from ._worker import load

            fn, args = self.loader
            return client.submit(load, fn, args, pure=False)
        [fut] = client.scatter([self.value], broadcast=self.broadcast, hash=False)
        if not self.broadcast and self.replicas > 1:
            n = min(self.replicas, self.cluster.n_workers())
            if n > 1:
                client.replicate([fut], n=n)
        return fut

    def release(self):
        if self._future is not None:
            self._future.release()
            self._future = None


def tree_sum(client, futures, fan_in=2, until=1):
    """Add ``futures`` in pairs on the workers (depth log2) until at most ``until`` partial
    sums are left; returns their futures (one future for ``until=1``)."""
    from ._worker import add

    level = list(futures)
    while len(level) > until:
        level = [client.submit(add, *level[i:i + fan_in], pure=False) if i + 1 < len(level)
                 else level[i] for i in range(0, len(level), fan_in)]
    return level[0] if until == 1 else level


def gather_sum(client, futures, top=CLIENT_FAN_IN):
    """The sum of ``futures``: a tree on the workers for many, the last (at most ``top``)
    partial sums gathered and added here, which saves one task round trip per call."""
    from ._worker import add

    parts = client.gather(tree_sum(client, futures, until=top))
    return add(*parts)


def with_recovery(attempt, label):
    """Run ``attempt()`` again (it re-creates lost data) when a worker death lost data."""
    errors = lost_errors()
    for k in range(ATTEMPTS):
        try:
            return attempt()
        except errors as exc:
            if k == ATTEMPTS - 1:
                raise RuntimeError(f"hessgrad.distributed: {label} lost its data to worker "
                                   f"failures {ATTEMPTS} times: {exc}") from exc
            print(f"hessgrad.distributed: {label}: data lost with a worker ({exc}); "
                  f"re-creating it and retrying", file=sys.stderr)


class Progress:
    """A one-line ``label: done/total`` on stderr, refreshed at most every 0.2 s."""

    def __init__(self, label, total, enabled):
        self.label, self.total, self.done = label, total, 0
        self.enabled = total >= PROGRESS_TASKS if enabled is None else bool(enabled)
        self._last = 0.0
        self._start = time.perf_counter()

    def step(self, k=1):
        self.done += k
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self._last > 0.2 or self.done == self.total:
            self._last = now
            end = "\n" if self.done == self.total else ""
            print(f"\rhessgrad.distributed: {self.label}: {self.done}/{self.total} tasks "
                  f"({now - self._start:.1f} s)", end=end, file=sys.stderr, flush=True)


def run_blocks(cluster, blocks, submit, collect, label, window=None, progress=None):
    """Submit ``submit(block)`` for every block (at most ``window`` in flight), hand each
    finished result to ``collect(block, value)`` as it arrives, and resubmit a block whose
    data was lost with a worker (``submit`` re-creates lost resident data)."""
    distributed = dask()
    errors = lost_errors()
    window = window or 4 * cluster.n_workers()
    todo = deque(blocks)
    meter = Progress(label, len(todo), progress)
    running = {}
    retries = {}
    pool = distributed.as_completed()

    def launch():
        while todo and len(running) < window:
            block = todo.popleft()
            fut = submit(block)
            running[fut.key] = block
            pool.add(fut)

    launch()
    for fut in pool:
        block = running.pop(fut.key)
        try:
            value = fut.result()
        except errors as exc:
            retries[block] = retries.get(block, 0) + 1
            if retries[block] >= ATTEMPTS:
                raise RuntimeError(f"hessgrad.distributed: {label}: block {block} lost its "
                                   f"data to worker failures {ATTEMPTS} times") from exc
            todo.appendleft(block)
            launch()
            continue
        fut.release()
        collect(block, value)
        meter.step()
        launch()
    return meter.done


def as_float_array(x, caller):
    x = np.asarray(x)
    if x.dtype.kind not in "fc":
        x = x.astype(np.float64)
    if x.dtype.kind == "c":
        raise TypeError(f"{caller}: complex points are not supported, got dtype {x.dtype}")
    return x
