"""Compiling kernels in a subprocess (:mod:`.worker`), for threads that compile in the
background.

Numba's compiler is seconds of Python (typing, lowering, the first compilation's imports of
its registries) between calls into LLVM: in a compiling thread all of it takes GIL slices from
the process's other threads (the calls a background tier compiles for), and C code holding
the GIL cannot be interrupted. In the worker process it costs the caller nothing but a wait
on a pipe, which does not hold the GIL; the machine code lands in the on-disk caches
(:mod:`.loader`, :mod:`.llvm`), which the caller then loads (an LLVM object in about a
millisecond; a Numba kernel after Numba's own once-per-process setup).

Only a thread inside ``with preferred():`` uses the worker (``tracing.tiers`` around a
background tier); everything else, eager compilation included, compiles in its own process as
before, so that a synchronous compile never waits for a process to start. The worker starts at
the first request (once per process; ``HESSGRAD_COMPILE_WORKER=0`` turns it off), runs the
same interpreter with the same ``sys.path``, environment and cache directory, and exits when
its stdin closes (at this process's exit, or :meth:`Worker.close`). When it cannot start, dies,
or fails a request, the caller compiles in its own process (which raises the error, if any,
where it always did): the worker only ever saves time.
"""

import atexit
import base64
import contextlib
import json
import os
import pickle
import subprocess
import sys
import threading

from . import tuning

_local = threading.local()
# Run as a file, not ``-m hessgrad.kernels.worker``: importing it as a module would import
# the whole hessgrad package first (see worker._kernels_only).
_WORKER_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "worker.py")


@contextlib.contextmanager
def preferred():
    """Within: this thread's kernel compiles go to the worker (see the module's doc)."""
    before = getattr(_local, "preferred", False)
    _local.preferred = True
    try:
        yield
    finally:
        _local.preferred = before


def wanted():
    """True when this thread prefers the worker and the worker is not known to be broken."""
    return (getattr(_local, "preferred", False) and not default().broken
            and os.environ.get("HESSGRAD_COMPILE_WORKER", "1").strip() != "0")


def compile_numba(path, entry, types):
    """Have the worker compile ``entry`` of the kernel file ``path`` for the Numba argument
    ``types`` into Numba's disk cache; False when it did not (compile here instead)."""
    try:
        types = base64.b64encode(pickle.dumps(tuple(types))).decode()
    except Exception:  # noqa: BLE001 - a type that does not pickle: compile here
        return False
    return default().request({"kind": "numba", "path": path, "entry": entry, "types": types})


def compile_llvm(text, key, extra):
    """Have the worker compile LLVM IR ``text`` into the object cache (see
    :func:`.llvm.compile_ir`); False when it did not."""
    return default().request({"kind": "llvm", "text": text, "key": key,
                              "extra": base64.b64encode(extra).decode()})


class Worker:
    """One compiling subprocess, started at the first :meth:`request`. Requests from several
    threads take turns (one pipe)."""

    def __init__(self):
        self.broken = False  # could not start, or died: never tried again
        self._process = None
        self._lock = threading.Lock()

    def request(self, message):
        """Send ``message`` (see :mod:`.worker`) and wait for the reply (the wait does not
        hold the GIL); True when the worker did the work."""
        with self._lock:
            if self.broken or (self._process is None and not self._start()):
                return False
            process = self._process
            try:
                process.stdin.write(json.dumps(message) + "\n")
                process.stdin.flush()
                line = process.stdout.readline()
            except (OSError, ValueError):  # a closed or broken pipe
                line = ""
            if not line:
                self._stop(process)
                return False
            try:
                return json.loads(line).get("ok") is True
            except ValueError:
                self._stop(process)
                return False

    @property
    def pid(self):
        """The worker's process id (None before it starts or once it is closed)."""
        return None if self._process is None else self._process.pid

    def close(self):
        """Close the worker's stdin (it exits) and reap it; later requests return False.
        Does not wait for a request under way: that one returns False too."""
        self.broken = True
        process = self._process
        if process is not None:
            self._stop(process)

    def _start(self):
        from .loader import cache_dir

        # The same interpreter, module search path and cache directory as this process; a
        # lower CPU priority (before its imports), so that on a busy machine the calls it
        # compiles for keep their core.
        boot = (f"import os, sys; sys.path[:] = {list(sys.path)!r}; "
                f"hasattr(os, 'nice') and os.nice({tuning.TIER_WORKER_NICENESS}); "
                "import runpy; runpy.run_path(sys.argv[1], run_name='__main__')")
        env = dict(os.environ, HESSGRAD_KERNEL_CACHE=cache_dir())
        try:
            process = subprocess.Popen([sys.executable, "-c", boot, _WORKER_FILE],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.DEVNULL, text=True, env=env)
        except (OSError, ValueError):
            self.broken = True
            return False
        try:
            ready = process.stdout.readline()
        except (OSError, ValueError):
            ready = ""
        if ready != "ready\n":
            self._stop(process)
            return False
        self._process = process
        return True

    def _stop(self, process):
        self.broken = True
        self._process = None
        with contextlib.suppress(OSError, ValueError):
            process.stdin.close()
        try:
            process.wait(timeout=0.5)  # it exits at the end of the request it is on
        except subprocess.TimeoutExpired:
            process.kill()  # its cache files are written whole or not at all
            process.wait()
        with contextlib.suppress(OSError, ValueError):
            process.stdout.close()


_DEFAULT = []
_DEFAULT_LOCK = threading.Lock()
if hasattr(os, "register_at_fork"):
    # a forked child must not talk on its parent's pipe (it would take the parent's replies)
    os.register_at_fork(after_in_child=_DEFAULT.clear)


def default():
    """This process's worker (not started until its first request)."""
    if not _DEFAULT:
        with _DEFAULT_LOCK:
            if not _DEFAULT:
                worker = Worker()
                atexit.register(worker.close)
                _DEFAULT.append(worker)
    return _DEFAULT[0]
