"""Process-wide engine state: the active recorders (tapes, accumulators) and graph stack."""


class _State:
    __slots__ = ("recorders", "limit", "graphs", "plain_values")

    def __init__(self):
        self.recorders = []   # active GradientTapes and ForwardAccumulators, outermost first
        self.limit = None     # while recorder i computes a rule, only recorders[:i] observe ops
        self.graphs = []      # graphs being built, innermost last
        # True during a backward pass that nothing records (first order): ops return numpy
        # values, not Tensors, as no one will differentiate them (see backprop)
        self.plain_values = False


STATE = _State()


class Recorder:
    """Something that observes ops while active (``with recorder:``): tapes, forward-mode
    accumulators, variable watchers. Subclasses define ``observe``."""

    paused = False
    _recording = False

    def observe(self, prim, args, params, outs, node, level):
        raise NotImplementedError

    def __enter__(self):
        if self._recording:
            raise ValueError(f"{type(self).__name__} is already recording; it cannot be "
                             "entered again while active")
        STATE.recorders.append(self)
        self._recording = True
        return self

    def __exit__(self, *exc):
        if self._recording:
            STATE.recorders.remove(self)
            self._recording = False


class paused_from:
    """Context in which only the recorders outside position ``index`` observe ops."""

    __slots__ = ("index", "saved")

    def __init__(self, index):
        self.index = index

    def __enter__(self):
        self.saved = STATE.limit
        STATE.limit = self.index if self.saved is None else min(self.saved, self.index)

    def __exit__(self, *exc):
        STATE.limit = self.saved
