"""Batching rules of control flow: a ``while`` or ``cond`` node and the TensorArray buffer ops
run on a whole batch at once (``Plan.run_batched``: ``Function.map``, batched Hessian-vector
products, ``hg.vmap``), with JAX's semantics for batched control flow.

``while``. The loop variables' batch flags are brought to a fixed point first (a variable
the body mixes with a batched one is batched from the start: it is broadcast before the
loop). Then:

* The predicate does not depend on the batch (a fixed trip count ``i < n``: scan, map_fn,
  Hessian rows): the loop runs as it would unbatched, its body on the batched state; no
  member ever differs from another in its trip count, nothing is masked.
* The predicate is batched: every variable is batched, and the body runs on the whole batch
  while any member's predicate holds; members whose predicate is false keep their state
  (a select per variable) and are *inactive* while the body runs: the TensorArray writes of
  the body skip them (they write in place), reads and nested loops and branches do not run
  for them (a nested loop starts with the enclosing loop's inactive members inactive).

``cond``. An unbatched predicate runs one branch on the batch. A batched one runs each branch
with the members that take the other inactive, and selects per member (a branch that every
active member takes runs alone).

Histories (what the loop's VJP reads) have per member the rows of its own trip count, the rest
zeros, as run member by member; the trip count output stays per member.

Whatever cannot be batched so -- an op that raises on the state of an inactive member (its
index is out of range once it has finished), shapes that change differently between members
-- runs once per member (``engine.graph.run_members``), which is always correct: a batched
attempt that raises is discarded and the node runs member by member (its TensorArray writes,
the same values at the same places, are simply repeated).
"""

import threading

import numpy as np

from ..engine.graph import run_members
from .control_flow import (_check_index, _cond, _while, tensor_array_clear, tensor_array_read,
                           tensor_array_read_adjoint, tensor_array_write)

_LOCAL = threading.local()


def active_members():
    """The (k,) boolean mask of the batch members an enclosing batched loop or branch still
    runs, or None when all do."""
    return getattr(_LOCAL, "mask", None)


class _Masked:
    """Context in which only the members flagged in ``mask`` are active (None: all)."""

    __slots__ = ("mask", "saved")

    def __init__(self, mask):
        self.mask = mask

    def __enter__(self):
        self.saved = getattr(_LOCAL, "mask", None)
        _LOCAL.mask = self.mask

    def __exit__(self, *exc):
        _LOCAL.mask = self.saved


class _Unbatchable(Exception):
    """Batched values that cannot be combined (members' shapes differ): run per member."""


def _batch_size(args, flags):
    return next(len(a) for a, f in zip(args, flags) if f)


def _batched(value, k, copy=False):
    """``value`` with a leading batch axis of length ``k`` (a read-only view unless ``copy``:
    a TensorArray buffer is written in place)."""
    value = np.asarray(value)
    out = np.broadcast_to(value, (k,) + value.shape)
    return np.array(out) if copy else out


def _pad_rows(a, rows):
    """``a`` (batched) with zero rows appended along axis 1 up to ``rows`` (a grown buffer)."""
    if a.shape[1] == rows:
        return a
    return np.concatenate([a, np.zeros((a.shape[0], rows - a.shape[1]) + a.shape[2:],
                                       a.dtype)], axis=1)


def _select(mask, new, old):
    """Per member: ``new`` where ``mask``, else ``old`` (both batched). Buffers that grew in
    one of them are padded; other shapes must agree."""
    if new is old:
        return new
    if new.shape != old.shape:
        if new.ndim != old.ndim or new.ndim < 2 or new.shape[2:] != old.shape[2:]:
            raise _Unbatchable(f"shapes {new.shape[1:]} and {old.shape[1:]} per member")
        rows = max(new.shape[1], old.shape[1])
        new, old = _pad_rows(new, rows), _pad_rows(old, rows)
    return np.where(mask.reshape(mask.shape + (1,) * (new.ndim - 1)), new, old)


# --- per member: the fallback -----------------------------------------------------------
def _while_members(forward, args, flags, params):
    """The loop once per member; the histories (and grown TensorArray buffers) of members
    that ran longer are longer: shorter ones are padded with zeros, which no member reads (its
    reverse loop reads its own trip count of rows, its TensorArray its own size)."""
    n_vars, loop = params["n_vars"], params["loop"]
    outs = run_members(_while.primitive, forward, args, flags, params, active_members())
    stacked = []
    for i, parts in enumerate(zip(*outs)):
        if parts[0] is None:  # a history nobody asked for
            stacked.append(None)
            continue
        shapes = [np.shape(p) for p in parts]
        if len(set(shapes)) > 1:
            if i < n_vars and i not in loop.buffers:
                raise ValueError(f"while_loop: on a batch (Function.map, batched products), "
                                 f"loop variable {i} ends with a shape that differs between "
                                 f"batch members ({sorted(set(shapes))}); call the function "
                                 "once per member")
            longest = max(s[0] for s in shapes)
            parts = [np.concatenate([p, np.zeros((longest - len(p),) + p.shape[1:], p.dtype)])
                     for p in parts]
        stacked.append(np.stack(parts))
    return tuple(stacked)


# --- while ----------------------------------------------------------------------------------
def _while_batched(forward, args, flags, **params):
    """The ``while`` node on a batch: one loop for all members (see the module docstring)."""
    try:
        return _batched_loop(args, flags, **params)
    except Exception:  # noqa: BLE001 - per member is always correct (and re-raises real errors)
        return _while_members(forward, args, flags, params)


def _state_flags(cond_plan, body_plan, flags, n_vars):
    """The loop variables' batch flags at their fixed point, and whether the predicate is
    batched: a variable is batched when it enters batched or the body makes it so from a
    batched one, and all are when the predicate is (members then stop at different times)."""
    state, captures = list(flags[:n_vars]), list(flags[n_vars:])
    while True:
        out = body_plan.batched_fetches(state + captures)
        new = [a or b for a, b in zip(state, out)]
        if cond_plan.batched_fetches(new + captures)[0]:
            new = [True] * n_vars
        if new == state:
            return state, cond_plan.batched_fetches(state + captures)[0]
        state = new


def _batched_loop(args, flags, *, n_vars, cond_plan, body_plan, maximum_iterations, record,
                  loop, rows_plan=None):  # rows_plan: unused, a batch's loop steps
    k = _batch_size(args, flags)
    buffers = loop.buffers
    state_flags, pred_batched = _state_flags(cond_plan, body_plan, flags, n_vars)
    # A buffer stays shared when only unbatched values are written into it; it is copied
    # all the same: were the batch to fall back to members, they must find it unwritten.
    state = [_batched(v, k, copy=j in buffers) if f and not f0 else
             np.array(v) if j in buffers and not f else v
             for j, (v, f, f0) in enumerate(zip(args[:n_vars], state_flags, flags))]
    captures = list(args[n_vars:])
    run_flags = state_flags + list(flags[n_vars:])
    history = [] if record.on else None
    per_member = [np.shape(v)[1:] if f else np.shape(v) for v, f in zip(state, state_flags)]
    if pred_batched:
        state, count = _masked_loop(state, captures, run_flags, k, cond_plan, body_plan,
                                    maximum_iterations, buffers, history)
    else:
        state, count = _common_loop(state, captures, run_flags, k, cond_plan, body_plan,
                                    maximum_iterations, buffers, history)
        count = np.full(k, count, np.int64)
    saved = []
    for j in loop.recorded:
        if history is None:
            saved.append(None)  # nothing consumes it: no gradient was asked for
        elif not history:
            saved.append(np.zeros((k, 0) + per_member[j], np.result_type(state[j])))
        elif state_flags[j]:
            rows = np.stack([h[j] for h in history], axis=1)
            if pred_batched:  # rows past a member's own trip count: zeros, as per member
                rows[np.arange(len(history)) >= count[:, None]] = 0
            saved.append(rows)
        else:
            saved.append(_batched(np.stack([h[j] for h in history]), k))
    state = [v if f else _batched(v, k) for v, f in zip(state, state_flags)]
    return tuple(state) + (count,) + tuple(saved)


def _body(body_plan, state, captures, run_flags, k, buffers):
    """One run of the body; results the flags say are batched but came out unbatched (a
    variable reset to a constant) are broadcast, so that the flags hold at every iteration."""
    new, new_flags = body_plan.run_flagged(state + captures, run_flags)
    if any(nf and not f for nf, f in zip(new_flags, run_flags)):
        raise _Unbatchable("the body batched a variable its flags did not")
    return [v if nf or not f else _batched(v, k, copy=j in buffers)
            for j, (v, nf, f) in enumerate(zip(new, new_flags, run_flags))]


def _common_loop(state, captures, run_flags, k, cond_plan, body_plan, maximum_iterations,
                 buffers, history):
    """An unbatched predicate: every member runs the same number of iterations."""
    count = 0
    while maximum_iterations is None or count < maximum_iterations:
        (pred,), _ = cond_plan.run_flagged(state + captures, run_flags)
        if not bool(np.asarray(pred)):
            break
        if history is not None:
            history.append(state)
        state = _body(body_plan, state, captures, run_flags, k, buffers)
        count += 1
    return state, count


def _masked_loop(state, captures, run_flags, k, cond_plan, body_plan, maximum_iterations,
                 buffers, history):
    """A batched predicate (all variables batched): the body runs while any member's
    predicate holds; the others are inactive and keep their state."""
    outer = active_members()
    count = np.zeros(k, np.int64)
    while True:
        (pred,), _ = cond_plan.run_flagged(state + captures, run_flags)
        active = np.array(np.broadcast_to(np.asarray(pred, bool), (k,)))
        if maximum_iterations is not None:
            active &= count < maximum_iterations
        if outer is not None:
            active &= outer
        if not active.any():
            return state, count
        if history is not None:
            history.append(state)
        everyone = active.all()
        with _Masked(None if everyone else active):
            new = _body(body_plan, state, captures, run_flags, k, buffers)
        state = new if everyone else [_select(active, a, b) for a, b in zip(new, state)]
        count += active


# --- cond -------------------------------------------------------------------------------------
def _cond_batched(forward, args, flags, *, true_plan, false_plan, branches):
    """The ``cond`` node on a batch: one branch, or both and a select per member."""
    try:
        return _batched_cond(args, flags, true_plan, false_plan, branches)
    except Exception:  # noqa: BLE001 - per member is always correct (and re-raises real errors)
        params = dict(true_plan=true_plan, false_plan=false_plan, branches=branches)
        outs = run_members(_cond.primitive, forward, args, flags, params,
                           active_members())
        return tuple(np.stack(parts) for parts in zip(*outs))


def _branch(plan, captures, flags, k):
    outs, out_flags = plan.run_flagged(captures, flags)
    return [o if f else _batched(o, k) for o, f in zip(outs, out_flags)]


def _batched_cond(args, flags, true_plan, false_plan, branches):
    k = _batch_size(args, flags)
    pred, captures, cap_flags = args[0], list(args[1:]), list(flags[1:])
    if not flags[0]:
        return tuple(_branch(true_plan if bool(np.asarray(pred)) else false_plan, captures,
                             cap_flags, k))
    pred = np.asarray(pred, bool)
    outer = active_members()
    live = pred if outer is None else pred[outer]
    if live.all():  # every member that runs takes one branch: it alone runs
        return tuple(_branch(true_plan, captures, cap_flags, k))
    if not live.any():
        return tuple(_branch(false_plan, captures, cap_flags, k))
    # Both branches write the TensorArrays they capture, each for its own members: a shared
    # buffer gets one row per member first.
    for position in branches[1]:
        c = position - 1
        if not cap_flags[c]:
            captures[c], cap_flags[c] = _batched(captures[c], k, copy=True), True
    on_true = pred if outer is None else pred & outer
    on_false = ~pred if outer is None else ~pred & outer
    with _Masked(on_true):
        t = _branch(true_plan, captures, cap_flags, k)
    with _Masked(on_false):
        f = _branch(false_plan, captures, cap_flags, k)
    return tuple(_select(pred, a, b) for a, b in zip(t, f))


# --- TensorArray buffers ----------------------------------------------------------------------
def _live(mask, k):
    return np.arange(k) if mask is None else np.flatnonzero(mask)


def _row_index(rows_of, idx_core_ndim):
    return rows_of.reshape((-1,) + (1,) * idx_core_ndim)


def _write_batched(forward, args, flags, dynamic=False):
    """Writes in place into a buffer with a row per member; inactive members are not written
    (their index is not even checked: it may be past the end once they have finished)."""
    buf, idx, value = args
    fb, fi, fv = flags
    k = _batch_size(args, flags)
    idx, value = np.asarray(idx), np.asarray(value)
    rows = buf.shape[1] if fb else buf.shape[0]
    element = buf.shape[2:] if fb else buf.shape[1:]
    idx_core = idx.shape[1:] if fi else idx.shape
    if (value.shape[1:] if fv else value.shape) != idx_core + element:
        raise ValueError(f"TensorArray.write: value of shape "
                         f"{value.shape[1:] if fv else value.shape} does not match the element "
                         f"shape {element} (index shape {idx_core})")
    mask = active_members()
    live = _live(mask, k)
    live_idx = _check_index(idx[live] if fi else idx, rows, "TensorArray.write", dynamic)
    if not fb:  # a shared buffer gets one row per member (written in place from now on)
        buf = _batched(buf, k, copy=True)
    elif not buf.flags.writeable:  # a shared one broadcast over the batch (a loop's result)
        buf = np.array(buf)
    needed = int(np.max(live_idx)) + 1 if np.size(live_idx) and len(live) else 0
    if needed > rows:  # only when dynamic: grow geometrically (amortised O(1) writes)
        grown = np.zeros((k, max(needed, 2 * rows)) + element, buf.dtype)
        grown[:, :rows] = buf
        buf = grown
    if mask is None and not fi and type(live_idx) is int:
        buf[:, live_idx] = value  # the common case: one row, basic indexing
    else:
        buf[_row_index(live, len(idx_core)), live_idx] = value[live] if fv else value
    return buf


def _read_batched(forward, args, flags, prefix=False):
    """Reads per member; inactive members read row 0 (their index may be out of range)."""
    buf, idx = args
    fb, fi = flags
    k = _batch_size(args, flags)
    rows = buf.shape[1] if fb else buf.shape[0]
    mask = active_members()
    idx = np.asarray(idx)
    if prefix:  # stack(): one size for all members, or the shapes differ
        n = np.unique(idx[_live(mask, k)]) if fi else [idx]
        if len(n) != 1:
            raise _Unbatchable("TensorArray.stack: sizes differ between batch members")
        n = int(n[0])
        return np.array(buf[:, :n]) if fb else _batched(np.array(buf[:n]), k)
    if not fi:
        i = _check_index(idx, rows, "TensorArray.read")
        return np.array(buf[:, i]) if fb else _batched(np.array(buf[i]), k)
    if mask is not None:
        idx = np.where(mask.reshape((k,) + (1,) * (idx.ndim - 1)), idx, 0)
    idx = _check_index(idx, rows, "TensorArray.read")
    if not fb:
        return buf[idx]
    return buf[_row_index(np.arange(k), idx.ndim - 1), idx]


def _read_adjoint_batched(forward, args, flags, prefix=False):
    g, idx, like = args
    fg, fi, fl = flags
    k = _batch_size(args, flags)
    rows = like.shape[1] if fl else like.shape[0]
    idx = np.asarray(idx)
    if prefix and fi:
        raise _Unbatchable("TensorArray.stack: sizes differ between batch members")
    g = np.asarray(g)
    g = g if fg else _batched(g, k)
    idx_core = 1 if prefix else idx.ndim - (1 if fi else 0)
    out = np.zeros((k, rows) + g.shape[1 + idx_core:], g.dtype)
    if prefix:
        out[:, :int(idx)] = g
    elif not fi and idx_core == 0:
        out[:, int(idx)] = g
    else:
        if fi and (mask := active_members()) is not None:  # inactive: any row in range
            idx = np.where(mask.reshape((k,) + (1,) * idx_core), idx, 0)
        if idx_core == 0:  # one row per member (a loop's read at its counter): no repeats
            out[np.arange(k), idx] = g
        else:
            np.add.at(out, (_row_index(np.arange(k), idx_core), idx), g)  # repeats add up
    return out


def _clear_batched(forward, args, flags):
    g, idx, like = args
    fg, fi, fl = flags
    k = _batch_size(args, flags)
    rows = like.shape[1] if fl else like.shape[0]
    g = np.asarray(g)
    g = g if fg else _batched(g, k)
    out = np.zeros((k, rows) + g.shape[2:], g.dtype)
    m = min(rows, g.shape[1])
    out[:, :m] = g[:, :m]
    idx = np.asarray(idx)
    if fi:
        members = np.broadcast_to(_row_index(np.arange(k), idx.ndim - 1), idx.shape)
        inside = idx < rows
        out[members[inside], idx[inside]] = 0
    else:
        out[:, idx[idx < rows] if idx.ndim else (idx if idx < rows else [])] = 0
    return out


_while.primitive.batch_rule = _while_batched
_cond.primitive.batch_rule = _cond_batched
tensor_array_write.primitive.batch_rule = _write_batched
tensor_array_read.primitive.batch_rule = _read_batched
tensor_array_read_adjoint.primitive.batch_rule = _read_adjoint_batched
tensor_array_clear.primitive.batch_rule = _clear_batched
