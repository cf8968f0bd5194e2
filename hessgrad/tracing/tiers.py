"""Tiered compilation: when a trace's plan is compiled, and where.

A trace runs one of three ways, its *compile mode*:

* ``"lazy"`` (the default): the plan runs uncompiled (its interpreter) until the trace is
  proven hot -- :data:`~hessgrad.kernels.tuning.TIER_CALLS` calls, or uncompiled runs that
  took as long as the compilation is estimated to take -- then compiles in a background
  thread: first without Numba kernels (the optimizer and generated Python, cheap), then the
  same optimized program with them; each is swapped in once it is ready (with the batched
  programs the calls so far used, and their kernels, compiled too). No call waits for the
  compiler; a trace called once never pays for it.
* ``"eager"``: compiled at the first call, which waits for it (the behaviour before tiers).
* ``"never"``: always the uncompiled plan.

``hg.function(f, compile=...)`` chooses; else ``HESSGRAD_COMPILE``: ``0`` (or ``never``) turns
compilation off everywhere, ``1`` (or ``eager``) and ``lazy`` set the mode of the traces that
do not choose (hessgrad's own caches: ``hessian``, ``make_hvp``, ...).

The tiers compute the same numbers up to rounding (the compiler's rewrites are exact up to
reassociation, and a constant power's products within two ulps of pow(); see
``docs/compiler.md``); a call runs entirely in one tier.
"""

import os
import sys
import threading
import time
import weakref

import numpy as np

from ..kernels import tuning

MODES = ("eager", "lazy", "never")


def compile_mode(compile=None, optimize=True):
    """The compile mode of a new trace: ``compile`` when given, else ``HESSGRAD_COMPILE``'s
    (``"never"`` from it, or from ``optimize=False``, wins)."""
    if compile is not None and compile not in MODES:
        raise ValueError(f"hessgrad.function: compile must be one of {MODES}, got {compile!r}")
    env = os.environ.get("HESSGRAD_COMPILE")
    env = None if env is None else env.strip().lower()
    if not optimize or env in ("0", "false", "no", "", "never"):
        return "never"
    if compile is not None:
        return compile
    if env in ("1", "true", "yes", "eager"):
        return "eager"
    return "lazy"


def estimated_compile_seconds(n_steps):
    """What compiling a plan of ``n_steps`` steps costs, roughly (see tuning)."""
    return tuning.TIER_COMPILE_SECONDS + tuning.TIER_COMPILE_SECONDS_PER_STEP * n_steps


class Tiers:
    """The uncompiled runs of one lazy trace and its compilation in the background.

    ``compile()`` builds the :class:`~hessgrad.compiler.CompiledPlan` of the first tier
    (None when compiling failed), ``upgrade(plan)`` (optional) the next tier's from it (None:
    keep the first). :meth:`ran` is told of each uncompiled run (its duration, and how to warm
    the compiled program for it: ``("run",)``, ``("batched", flags, k)`` or ``("split", static)``
    -- the split at the feeds flagged static, its setup and per-call part run once --, with the
    feeds) and
    starts the compilation when the trace is hot; :attr:`ready` is the best compiled plan that
    can take the calls, :attr:`final` whether no better one is coming."""

    def __init__(self, compile, n_steps, upgrade=None):
        self._compile = compile
        self._upgrade = upgrade
        self.final = False
        self.estimate = estimated_compile_seconds(n_steps)
        self.calls = 0
        self.spent = 0.0  # seconds of uncompiled runs
        self.ready = None
        self.failed = False
        self._warm = {}  # entry point -> feeds to warm it with (the latest)
        self._thread = None
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._warm_lock = threading.Lock()  # _warm against want() while a tier is warmed

    @property
    def started(self):
        return self._thread is not None

    def hot(self):
        return self.calls >= tuning.TIER_CALLS or self.spent >= self.estimate

    def ran(self, seconds, entry, feeds):
        """Count an uncompiled run; compile once the trace is hot."""
        self.calls += 1
        self.spent += seconds
        if self._thread is None and not self.failed:
            # copies: the caller may change its arrays while the compiler warms up on them
            self._warm[entry] = [np.array(v) if isinstance(v, np.ndarray) else v
                                 for v in feeds]
            if self.hot():
                self.start()

    def start(self):
        """Compile now, in the background (or in this thread where ``TIER_BACKGROUND`` is
        off, which makes the switch deterministic: tests)."""
        with self._lock:
            if self._thread is not None:
                return
            if not tuning.TIER_BACKGROUND:
                self._thread = threading.current_thread()
                self._work()
                return
            # a daemon: a process that is done does not wait for a compilation it will not
            # use; only a weak reference, so a dropped trace is not kept alive by its compiler
            self._thread = threading.Thread(target=_work, args=(weakref.ref(self),),
                                            name="hessgrad-compile", daemon=True)
            self._thread.start()

    def _work(self):
        background = threading.current_thread() is self._thread and self._thread.daemon
        try:
            compiled = self._tier(self._compile, background)
            if compiled is not None and self._upgrade is not None:
                self._tier(lambda: self._upgrade(compiled), background)
            self.failed = self.ready is None
        finally:
            with self._warm_lock:
                self._warm.clear()
                self.final = True
            self._done.set()

    def want(self, entry, feeds):
        """Have the tiers still to come warm ``entry`` too (as :meth:`ran` does before the
        compilation starts; this also once it has: see :meth:`_tier`). False when no tier is
        coming (the compilation is over)."""
        with self._warm_lock:
            if self.final:
                return False
            self._warm[entry] = [np.array(v) if isinstance(v, np.ndarray) else v
                                 for v in feeds]
            return True

    def _tier(self, build, background):
        """Build a tier, warm it up for the calls seen (and the entries :meth:`want` adds
        meanwhile), and swap it in; returns it."""
        compiled = _throttled(build) if background else build()
        if compiled is not None:
            warmed = set()
            while True:
                with self._warm_lock:
                    todo = [(e, f) for e, f in self._warm.items() if e not in warmed]
                    if not todo:
                        self.ready = compiled
                        break
                for entry, feeds in todo:
                    warmed.add(entry)
                    if background:
                        _throttled(lambda e=entry, f=feeds: _warm(compiled, e, f))
                    else:
                        _warm(compiled, entry, feeds)
        return compiled

    def wait(self, timeout=None):
        """Start the compilation if it has not started, and wait for it; returns the compiled
        plan (None if compiling failed or ``timeout`` seconds passed)."""
        self.start()
        self._done.wait(timeout)
        return self.ready


class running:
    """``with running():`` around an uncompiled run: compiling threads yield the GIL to it
    (see :func:`_throttled`)."""

    count = 0  # runs under way, in any thread
    _lock = threading.Lock()

    def __enter__(self):
        with running._lock:
            running.count += 1

    def __exit__(self, *exc):
        with running._lock:
            running.count -= 1


def _throttled(fn):
    """``fn()`` with this thread holding the GIL at most about ``tuning.TIER_DUTY`` of the
    time while an uncompiled run is under way: CPython hands the GIL to a waiting thread every
    5 ms, so a compiling thread would otherwise take half of it from the run it compiles for.
    A trace hook (Python calls only) sleeps after each slice, for the slice's wall time
    (waiting for the GIL included) times ``(1 - duty) / duty``."""
    duty, slice_ = tuning.TIER_DUTY, 0.005
    state = [0, time.perf_counter()]

    def hook(frame, event, arg):
        state[0] += 1
        if state[0] & 31:
            return None
        now = time.perf_counter()
        if not running.count:
            state[1] = now
        elif now - state[1] >= slice_:
            time.sleep((now - state[1]) * (1 - duty) / duty)
            state[1] = time.perf_counter()
        return None

    previous = sys.gettrace()
    sys.settrace(hook)
    try:
        return fn()
    finally:
        sys.settrace(previous)


def _work(ref):
    tiers = ref()
    if tiers is not None:
        tiers._work()


def _warm(compiled, entry, feeds):
    """Compile what a call at ``entry`` runs (its lowering, its batched program, the Numba
    kernels they call at their first run) by running it once on ``feeds``."""
    try:
        if entry[0] == "run":
            compiled.run(feeds)
        elif entry[0] == "split":  # a specialization (see function.LazySpecialized)
            flags = list(entry[1])
            bound = compiled.split(flags).at([v for v, f in zip(feeds, flags) if f])
            bound.run([v for v, f in zip(feeds, flags) if not f])
        else:
            compiled.run_batched(feeds, list(entry[1]))
    except Exception:  # noqa: BLE001 - the call itself will say what is wrong
        pass
