"""GradientTape: records eager (or traced) ops that touch watched tensors; differentiates them."""

import numpy as np

from .backprop import UnconnectedGradients, backprop, check_seeds, check_unconnected, \
    unconnected_gradient
from .dispatch import READ, bind
from .graph import substituted
from .nest import flatten, pack_as
from .batching import stacked_rows
from .registry import RESHAPE, TRANSPOSE, ZEROS
from .state import THREAD, Recorder, paused_from
from .tensor import Tensor, Variable, Written, current, is_differentiable_dtype


class GradientTape(Recorder):
    """Record operations for automatic differentiation (TensorFlow's semantics).

    Args:
        persistent: allow several ``gradient``/``jacobian`` calls; otherwise the tape's
            memory is released by the first.
        watch_accessed_variables: watch every trainable Variable read while recording.

    >>> import hessgrad as hg
    >>> x = hg.constant(3.0)
    >>> with hg.GradientTape() as g:
    ...     g.watch(x)
    ...     with hg.GradientTape() as gg:
    ...         gg.watch(x)
    ...         y = x * x
    ...     dy_dx = gg.gradient(y, x)
    >>> float(dy_dx), float(g.gradient(dy_dx, x))
    (6.0, 2.0)
    """

    tracks_inline = True  # observe_one below is the one bind_eager inlines (see Recorder)

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = persistent
        self._watch_accessed_variables = watch_accessed_variables
        # id(tensor) -> tensor, for the watched tensors and the float outputs of recorded ops
        # (what depends on a watched tensor); holding the tensor keeps its id from being reused
        self._tracked = {}
        self._watched = {}      # id(tensor) -> tensor, the watched ones
        self._records = []      # the recorded ops (backprop.record), in creation order
        self._variables = {}    # id(Variable) -> Variable, in the order they were watched
        # id(tensor) -> (tensor, its value when watched) for a tensor watched after it was
        # written in place: as a source it means that value (see gradient)
        self._watched_as = {}
        self._used = False

    # --- context ---------------------------------------------------------------------------
    def __enter__(self):
        if self._recording:
            raise ValueError("Tape is still recording, This can happen if you try to re-enter "
                             "an already-active tape.")
        return super().__enter__()

    def stop_recording(self):
        """Context manager in which this tape records nothing."""
        if not self._recording:
            raise ValueError("Tape must be recording when stop_recording is called.")
        return _Paused(self)

    def reset(self):
        """Forget everything recorded so far (the tape keeps recording if it was)."""
        self._tracked.clear()
        self._watched.clear()
        self._records.clear()
        self._variables.clear()
        self._watched_as.clear()
        self._used = False

    # --- watching --------------------------------------------------------------------------
    def watch(self, tensor):
        """Track a tensor (or a nested structure of them) for differentiation."""
        if type(tensor) is Tensor and tensor._value is not None and not THREAD.state.graphs:
            if tensor._value.dtype.kind in "fc":  # one eager tensor: nothing to substitute
                self._tracked.setdefault(id(tensor), tensor)
                self._watched.setdefault(id(tensor), tensor)
            return
        for t in substituted([tensor] if isinstance(tensor, Tensor) else
                             flatten(tensor, as_written=False)):
            if not isinstance(t, Tensor):
                raise ValueError(f"GradientTape.watch: passed in {t!r}, which is not a Tensor "
                                 "or Variable; convert it with hg.constant first")
            if type(t) is Written:  # written in place: its value now is what is watched
                value = current(t)
                self._watched_as[id(t)] = (t, value)
                t = value
            if not is_differentiable_dtype(t.dtype):
                continue  # integer and boolean tensors are constants (TensorFlow warns)
            self._tracked.setdefault(id(t), t)
            self._watched.setdefault(id(t), t)
            if isinstance(t, Variable):
                self._variables.setdefault(id(t), t)

    def watched_variables(self):
        """The Variables this tape watches, in the order they were first watched."""
        return tuple(self._variables.values())

    def observe(self, prim, args, params, outs, node, level):
        tracked = self._tracked
        if prim is READ:
            if id(outs[0]) in tracked:  # a graph's cached variable read, shown again
                return node
            var = args[0]
            if type(var) is Variable and id(var) not in tracked and \
                    self._watch_accessed_variables and var.trainable:
                self.watch(var)
        for a in args:
            if id(a) in tracked:  # only tensors are tracked, and live objects' ids differ
                break
        else:
            return node
        self._records.append((prim, args, params, outs, node))  # backprop.record, inlined
        for o in outs:
            v = o._value  # o._dtype_kind(), inlined: this runs for every recorded op
            if (v.dtype if v is not None else o._dtype).kind in "fc":  # ints are constants
                tracked[id(o)] = o
        return node

    def observe_one(self, prim, args, params, out):
        # observe() for the commonest call (one eager result, one recorder), without the
        # loops over outputs and the variable-read check (READ has its own path)
        if prim is READ:
            self.observe(prim, args, params, (out,), None, 0)
            return
        tracked = self._tracked
        for a in args:
            if id(a) in tracked:
                break
        else:
            return
        self._records.append((prim, args, params, (out,), None))
        if out._value.dtype.kind in "fc":
            tracked[id(out)] = out

    def tracks(self, t):
        """Whether gradients of ``t`` with respect to watched tensors are being recorded."""
        return id(t) in self._tracked

    # --- differentiation -------------------------------------------------------------------
    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """Gradient of ``target`` (summed, a tensor or nested structure) w.r.t. ``sources``.

        Args:
            target: a tensor or nested structure of tensors.
            sources: a tensor, Variable or nested structure of them.
            output_gradients: incoming gradients, one per target (None for ones).
            unconnected_gradients: 'none' (return None) or 'zero' (zeros of the source's shape).
        Returns:
            Gradients with the same structure as ``sources``.
        Raises:
            RuntimeError: a non-persistent tape is used twice.
            ValueError: a source is not a tensor.
        """
        unconnected = check_unconnected(unconnected_gradients)
        if self._used and not self._persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one "
                               "set of gradients (or jacobians)")
        targets = substituted([target] if isinstance(target, Tensor) else flatten(target))
        single = isinstance(sources, Tensor)
        flat_sources = self._sources(
            substituted([sources] if single else flatten(sources, as_written=False)))
        for s in flat_sources:
            if not isinstance(s, Tensor):
                raise ValueError(f"GradientTape.gradient: source {s!r} is not a Tensor or "
                                 "Variable; watch a hg.constant or hg.Variable instead")
        if output_gradients is None:
            target_grads = [None] * len(targets)
        else:
            target_grads = flatten(output_gradients)
            if len(target_grads) != len(targets):
                raise ValueError(f"GradientTape.gradient: {len(targets)} targets but "
                                 f"{len(target_grads)} output_gradients")
            target_grads = check_seeds(targets, target_grads, "GradientTape.gradient",
                                       "output_gradients")
        targets = [t if isinstance(t, Tensor) else Tensor(None) for t in targets]
        grads = self._backprop(targets, target_grads, flat_sources, unconnected)
        if not self._persistent:
            self._release()
        return grads[0] if single else pack_as(sources, grads)

    def _sources(self, sources):
        """Sources as differentiated: a tensor written in place after it was made (or
        watched) means the value it had then, which is what the ops recorded before the write
        read; one watched after a write, the value it had when watched."""
        if not self._watched_as:
            return sources
        out = []
        for s in sources:
            entry = self._watched_as.get(id(s))
            out.append(entry[1] if entry is not None and entry[0] is s else s)
        return out

    def _backprop(self, targets, target_grads, sources, unconnected):
        # As in TensorFlow, a source the tape never tracked (not watched, not computed from a
        # watched tensor) gets no gradient, even where a target depends on it.
        live = [s for s in sources if id(s) in self._tracked]
        if len(live) < len(sources):
            grads = dict(zip(map(id, live), self._backprop(targets, target_grads, live,
                                                            unconnected))) if live else {}
            self._used = True
            return [grads[id(s)] if id(s) in grads else unconnected_gradient(s, unconnected)
                    for s in sources]
        self._used = True
        was_paused, self.paused = self.paused, True
        recorders = THREAD.state.recorders
        # Innermost recorder: hide it (and nothing else) so that ops of the backward pass skip
        # the recorders entirely unless an outer one is active.
        innermost = bool(recorders) and recorders[-1] is self
        # When every watched tensor is a source and every source is tracked, what depends on
        # the sources is exactly what the tape tracks: the core need not find it again.
        source_ids = {id(s) for s in sources}
        tracked = self._tracked
        connected = tracked if all(i in source_ids for i in self._watched) and all(
            id(s) in tracked for s in sources if s._dtype_kind() in "fc") else None
        try:
            if innermost:
                with paused_from(len(recorders) - 1):
                    return backprop(targets, target_grads, sources, records=self._records,
                                    connected=connected, unconnected=unconnected)
            return backprop(targets, target_grads, sources, records=self._records,
                            connected=connected, unconnected=unconnected)
        finally:
            self.paused = was_paused

    def recorded_primitives(self):
        """The primitives of the ops this tape has recorded (a set)."""
        return {record[0] for record in self._records}

    def _release(self):
        self._tracked = {}
        self._watched = {}
        self._records = []
        self._watched_as = {}

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """Jacobian of ``target`` w.r.t. each source: shape ``target.shape + source.shape``.

        One VJP per element of ``target``. With ``experimental_use_pfor`` (the default, as in
        TensorFlow) they run as one batch: the backward pass is traced once and replayed on
        the batch of one-hot cotangents (as TensorFlow's pfor and JAX's ``vmap`` of ``vjp``
        do; see :func:`hessgrad.engine.batching.map_rows`); otherwise one at a time, in order.
        """
        del parallel_iterations
        unconnected = check_unconnected(unconnected_gradients)
        if self._used and not self._persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one "
                               "set of gradients (or jacobians)")
        flat_sources = self._sources(flatten(sources, as_written=False))
        target = current(target)
        shape, n = tuple(target.shape), target.size
        seeds = np.eye(n, dtype=target.dtype).reshape((n,) + shape)
        per_source = self._rows(lambda ct: self._backprop([target], [ct], flat_sources,
                                                          UnconnectedGradients.NONE),
                                seeds, len(flat_sources), experimental_use_pfor)
        result = []
        for s, jac in zip(flat_sources, per_source):
            if jac is None:
                if unconnected == UnconnectedGradients.NONE:
                    result.append(None)
                    continue
                jac = bind(ZEROS.prim, (), {"shape": (n,) + tuple(s.shape), "dtype": s.dtype})
            result.append(bind(RESHAPE.prim, (jac,), {"shape": shape + tuple(s.shape)}))
        if not self._persistent:
            self._release()
        return pack_as(sources, result)

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """Per-example Jacobians: ``target`` (b, ...) and ``source`` (b, ...) give (b, ..., ...).

        Assumes example i of ``target`` depends only on example i of ``source`` (TensorFlow's
        contract), so row j of every example comes from one VJP of the summed batch; those
        VJPs run as one batch or one at a time as in :meth:`jacobian`.
        """
        del parallel_iterations
        check_unconnected(unconnected_gradients)  # validated; a batch Jacobian is always dense
        if self._used and not self._persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one "
                               "set of gradients (or jacobians)")
        target, source = current(target), self._sources([source])[0]
        tshape, sshape = tuple(target.shape), tuple(source.shape)
        if not tshape or not sshape or tshape[0] != sshape[0]:
            raise ValueError(f"GradientTape.batch_jacobian: target shape {tshape} and source "
                             f"shape {sshape} must share a leading batch dimension")
        batch = tshape[0]
        m = 1
        for d in tshape[1:]:
            m *= d
        seeds = np.zeros((m, batch, m), target.dtype)
        seeds[np.arange(m), :, np.arange(m)] = 1  # seed j: entry j of every example
        reshape = RESHAPE.prim
        (g,) = self._rows(lambda ct: self._backprop(
            [target], [bind(reshape, (ct,), {"shape": tshape})], [source],
            UnconnectedGradients.ZERO), seeds, 1, experimental_use_pfor)
        if g is None:  # no rows (m = 0)
            g = bind(ZEROS.prim, (), {"shape": (0,) + sshape, "dtype": source.dtype})
        inner = 1
        for d in sshape[1:]:
            inner *= d
        jac = bind(TRANSPOSE.prim, (bind(reshape, (g,), {"shape": (m, batch, inner)}),),
                   {"axes": (1, 0, 2)})
        if not self._persistent:
            self._release()
        return bind(reshape, (jac,), {"shape": tshape + sshape[1:]})

    def _rows(self, pullback, seeds, n_sources, vectorize):
        """Per source, ``pullback`` of every row of ``seeds`` stacked (None where no
        gradient reaches the source)."""
        self._used = True
        return stacked_rows(pullback, seeds, vectorize) or [None] * n_sources


class _Paused:
    __slots__ = ("tape", "saved")

    def __init__(self, tape):
        self.tape = tape

    def __enter__(self):
        self.saved = self.tape.paused
        self.tape.paused = True

    def __exit__(self, *exc):
        self.tape.paused = self.saved
