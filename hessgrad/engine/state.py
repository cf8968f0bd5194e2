"""Engine state, one per thread: the active recorders (tapes, accumulators) and graph stack.

Per thread as in TensorFlow and JAX: a tape records only the ops of the thread that entered
it, and one thread's backward pass cannot turn another's results into plain values. Hot paths
read ``THREAD.state`` once (one thread-local lookup) and then its slots.
"""

import threading


class _State:
    __slots__ = ("recorders", "limit", "graphs", "plain_values", "capturing", "lift",
                 "refused")

    def __init__(self):
        self.recorders = []   # active GradientTapes and ForwardAccumulators, outermost first
        self.limit = None     # while recorder i computes a rule, only recorders[:i] observe ops
        self.graphs = []      # graphs being built, innermost last
        # True during a backward pass that nothing records (first order): ops return numpy
        # values, not Tensors, as no one will differentiate them (see backprop)
        self.plain_values = False
        self.capturing = 0    # active capture logs (they observe constant ops too)
        self.lift = None      # while programs are traced under a capture key (see capture)
        self.refused = None   # the last refused conversion of a tensor (reraise_refused)


class _PerThread(threading.local):
    def __init__(self):  # runs on each thread's first access
        self.state = _State()


THREAD = _PerThread()


def reraise_refused(exc):
    """Leaving a recorder's or a graph's ``with`` block on ``exc``: when numpy replaced a
    refused conversion of a tensor by its own ValueError (``a[i] = t`` with ``a`` a numpy
    array), raise the refusal, which says what to do, from it."""
    state = THREAD.state
    refused, state.refused = state.refused, None
    if refused is not None and isinstance(exc, ValueError) and exc is not refused:
        raise refused from exc


class Recorder:
    """Something that observes ops while active (``with recorder:``): tapes, forward-mode
    accumulators, variable watchers. Subclasses define ``observe``."""

    paused = False
    _recording = False
    sees_constants = False  # observes constant ops and constants too (capture logs)
    # True for a recorder whose observe_one is exactly: if an input's id is a key of
    # ``self._tracked``, append ``(prim, args, params, (out,), None)`` to ``self._records``
    # and track a floating ``out`` by its id. ``bind_eager`` then does that inline.
    tracks_inline = False

    def observe(self, prim, args, params, outs, node, level):
        raise NotImplementedError

    def observe_one(self, prim, args, params, out):
        """``observe`` of an eager op with one result, when this is the only recorder."""
        self.observe(prim, args, params, (out,), None, 0)

    def observe_write(self, value, what):
        """An array whose value is ``value`` is about to be written in place (``what``
        names the write); a recorder that sees constants (a capture log) may refuse it by
        raising. The others are not asked."""

    def __enter__(self):
        if self._recording:
            raise ValueError(f"{type(self).__name__} is already recording; it cannot be "
                             "entered again while active")
        self._active_in = THREAD.state.recorders  # the entering thread's (exit may run elsewhere)
        self._active_in.append(self)
        self._recording = True
        THREAD.state.refused = None
        return self

    def __exit__(self, *exc):
        if self._recording:
            self._active_in.remove(self)
            self._recording = False
        reraise_refused(exc[1])


class paused_from:
    """Context in which only the recorders outside position ``index`` observe ops."""

    __slots__ = ("index", "saved")

    def __init__(self, index):
        self.index = index

    def __enter__(self):
        state = THREAD.state
        self.saved = state.limit
        state.limit = self.index if self.saved is None else min(self.saved, self.index)

    def __exit__(self, *exc):
        THREAD.state.limit = self.saved
