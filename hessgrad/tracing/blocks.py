"""Batches of products at a fixed point in blocks of one size: ``HessianOperator.matmat``.

``make_hvp(f)(x).batched(V)`` (and so ``HessianOperator.matmat``) runs ``k`` products at one
point. A batched program is compiled for one batch size (its shapes are fixed, and its Numba
kernels are compiled for them), so compiling one per ``k`` cost 0.4-8 s at each new ``k``
(issue 37). :class:`Blocks` runs a batch of any ``k`` with the one program compiled for
``tuning.MATMAT_BLOCK`` members:

* full blocks through the block program;
* the rest (fewer than a block) one by one, or as a block padded with zeros when that is
  measured to be cheaper than running them one by one;
* everything one by one while the block program is not compiled (``"lazy"`` traces: it is
  compiled in the background once matmat calls are frequent, as :mod:`.tiers` compiles a
  trace) or when a block is measured to cost more than running its members one by one.

So a block product costs about ``k`` single products at most (plus timer noise), less where
the batched program uses matrix-matrix products, and nothing is compiled per new ``k``.
"""

import collections
import functools
import time
import weakref

import numpy as np

from ..kernels import tuning
from .tiers import Tiers

_WINDOW = 9  # timings kept
_MIN_SAMPLES = 3  # timings needed before they decide (else: blocks, padded past half full)
_PROBE_EVERY = 16  # where blocks did not pay, every so many calls time one again


class _Program:
    """The block program as a tier (:class:`.tiers.Tiers` warms it through ``run``)."""

    def __init__(self, fn):
        self.fn = fn

    def run(self, feeds):
        return self.fn(*feeds)


class Blocks:
    """How the per-call part of one split (``runner``: a
    :class:`hessgrad.compiler.split.SplitRunner`) runs batches with batch ``flags``; shared
    by every point (:class:`hessgrad.compiler.split.Bound`) of the split."""

    def __init__(self, runner, flags, mode):
        self.runner = runner
        self.flags = list(flags)
        self.size = max(1, int(tuning.MATMAT_BLOCK))
        self._singles = collections.deque(maxlen=_WINDOW)  # seconds per single product
        self._blocks = collections.deque(maxlen=_WINDOW)   # seconds per block run
        self._program = None
        self._failed = False
        self._block_runs = self._single_runs = 0
        self._skipped = 0  # calls that ran one by one since a block was last timed
        # the compiler's callable holds the runner weakly: the runner holds this object,
        # which holds the tiers (no reference cycle keeps a dropped trace's arrays alive)
        self._tiers = Tiers(functools.partial(_build, weakref.ref(runner), self.size,
                                              self.flags),
                            len(runner.split.apply.ops)) if mode == "lazy" else None

    @classmethod
    def of(cls, runner, batched, mode):
        key = tuple(bool(b) for b in batched)
        blocks = runner.blocks.get(key)
        if blocks is None:
            blocks = runner.blocks[key] = cls(runner, key, mode)
        return blocks

    def _build(self):
        return _build(weakref.ref(self.runner), self.size, self.flags)

    def program(self, start):
        """The block program, or None (not compiled yet, or it cannot be). ``start``: compile
        it now (eager traces) where it has not been tried."""
        if self._program is None and not self._failed:
            if self._tiers is not None:
                ready = self._tiers.ready
                if ready is not None:
                    self._program = ready
                elif self._tiers.final:
                    self._failed = True
            elif start:
                self._program = self._build()
                self._failed = self._program is None
        return self._program

    @property
    def single(self):
        """Seconds per single product: the least of the latest timings (a busy machine only
        ever slows a run down), or None."""
        return min(self._singles) if len(self._singles) >= _MIN_SAMPLES else None

    @property
    def block(self):
        """Seconds per block run: the least of the latest timings, or None."""
        return min(self._blocks) if len(self._blocks) >= _MIN_SAMPLES else None

    @staticmethod
    def note_single(runner, seconds):
        """Count a single product of ``runner``'s per-call part (a ``matvec``) that took
        ``seconds``, for the batches that compare blocks with single products."""
        for blocks in runner.blocks.values():
            blocks._singles.append(seconds)

    @property
    def compiled(self):
        return self._program is not None

    def run(self, bound, values, batched):
        """The outputs of ``bound`` (a split's per-call part at one point) for the per-call
        ``values`` whose flagged members carry a leading batch axis of one length ``k``: one
        array per fetch, ``k`` along its leading axis."""
        k = next(len(v) for v, f in zip(values, batched) if f)
        program = self.program(start=k >= 2) if k >= 2 else None
        if program is None:
            return self._each(bound, values, batched, 0, k, hot=k >= 2)
        parts, start = [], 0
        size = self.size
        single, block = self.single, self.block
        unprofitable = block is not None and single is not None and block > size * single
        if unprofitable and self._skipped < _PROBE_EVERY:
            # blocks do not pay here (timed again now and then: the estimates drift)
            self._skipped += 1
            parts.append(self._each(bound, values, batched, start, k))
            return _concat(parts)
        self._skipped = 0
        while k - start >= size:
            parts.append(self._block(program, bound, values, batched, start, start + size))
            start += size
        rest = k - start
        if rest:
            if block is not None and single is not None:
                pad = block < rest * single
            else:
                pad = 2 * rest >= size
            parts.append(self._block(program, bound, values, batched, start, k) if pad
                         else self._each(bound, values, batched, start, k))
        return _concat(parts)

    def _each(self, bound, values, batched, lo, hi, hot=False):
        sliced = [v[lo:hi] if f else v for v, f in zip(values, batched)]
        t = time.perf_counter()
        out = bound.run_each(sliced, batched, hi - lo)
        seconds = time.perf_counter() - t
        if hi > lo:
            self._single_runs += 1
            if self._single_runs > 1:  # the first run may compile kernels (eager traces)
                self._singles.append(seconds / (hi - lo))
        if hot and self._tiers is not None and not self._tiers.started:
            self._tiers.ran(seconds, ("run",), self._feeds(bound, values, batched, lo))
        return out

    def _feeds(self, bound, values, batched, lo):
        """The block program's arguments for members ``lo:lo + size`` of ``values`` (padded
        with zeros past the end)."""
        size = self.size
        feeds = list(bound.boundary)
        for v, f in zip(values, batched):
            if f:
                # C-contiguous, as the program was warmed with (Numba compiles kernels per
                # memory layout: a strided block would compile them again)
                part = np.ascontiguousarray(v[lo:lo + size])
                if len(part) < size:
                    part = np.concatenate(
                        [part, np.zeros((size - len(part),) + part.shape[1:], part.dtype)])
                v = part
            feeds.append(v)
        return feeds

    def _block(self, program, bound, values, batched, lo, hi):
        feeds = self._feeds(bound, values, batched, lo)
        t = time.perf_counter()
        out = program.fn(*feeds)
        self._block_runs += 1
        if self._block_runs > 1:  # the first run may compile kernels (eager traces)
            self._blocks.append(time.perf_counter() - t)
        n = hi - lo
        return [np.asarray(v)[:n] if f else np.broadcast_to(v, (n,) + np.shape(v))
                for v, f in zip(out, program.fn.fetch_batched)]


def _build(runner_ref, size, flags):
    """The block program of the split ``runner_ref()`` for batch ``flags`` (None: it cannot
    be batched, or compiling failed: the batch then runs one by one)."""
    runner = runner_ref()
    if runner is None:
        return None
    try:
        fn = runner.batched_apply(size, [False] * len(runner.split.boundary) + list(flags))
    except Exception:  # noqa: BLE001 - LoweringFailed and the like: run one by one
        fn = None
    return None if fn is None else _Program(fn)


def _concat(parts):
    parts = [p for p in parts if p and len(p[0])] or parts[:1]
    if len(parts) == 1:
        return [np.asarray(v) for v in parts[0]]
    return [np.concatenate([np.asarray(p[i]) for p in parts]) for i in range(len(parts[0]))]
