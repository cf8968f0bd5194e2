"""TensorArray buffer primitives (graph mode) with their batching rules.

A graph-mode TensorArray is one loop-carried buffer tensor of shape ``(capacity,) +
element_shape`` (plus a size tensor when ``dynamic_size``). Writes update the buffer *in place*
(no O(size) copy per write, so a 5000 x 5000 Hessian is built in one 200 MB buffer). That is
sound because a TensorArray flow value is used once: after ``ta2 = ta.write(i, v)`` the old
``ta`` must not be read again, and each element is written at most once (TensorFlow's rules).
No rule reads a buffer's forward value (reads, writes and their adjoints are linear), so the
aliasing cannot corrupt gradients either.

On a batch each op runs once for all members (its rule below): a buffer with a row per member,
written in place; inactive members (see :mod:`.members`) are neither written nor checked.
"""

import threading

import numpy as np

from ...engine.batching import per_member
from ...engine.registry import primitive
from ..patterns import dense
from ...engine.tensor import Tensor, shape_of
from ..elementwise import add
from .members import Unbatchable, active_members, batched


# --- batching rules (on values: buffers are written in place) -------------------------------
def _live(mask, k):
    return np.arange(k) if mask is None else np.flatnonzero(mask)


def _row_index(rows_of, idx_core_ndim):
    return rows_of.reshape((-1,) + (1,) * idx_core_ndim)


def _write_batch(prim, args, flags, params, k):
    """Writes in place into a buffer with a row per member; inactive members are not written
    (their index is not even checked: it may be past the end once they have finished)."""
    buf, idx, value = args
    fb, fi, fv = flags
    dynamic = params.get("dynamic", False)
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
    live_idx = check_index(idx[live] if fi else idx, rows, "TensorArray.write", dynamic)
    if not fb:  # a shared buffer gets one row per member (written in place from now on)
        buf = batched(buf, k, copy=True)
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


def _read_batch(prim, args, flags, params, k):
    """Reads per member; inactive members read row 0 (their index may be out of range)."""
    buf, idx = args
    fb, fi = flags
    prefix = params.get("prefix", False)
    rows = buf.shape[1] if fb else buf.shape[0]
    mask = active_members()
    idx = np.asarray(idx)
    if prefix:  # stack(): one size for all members, or the shapes differ
        n = np.unique(idx[_live(mask, k)]) if fi else [idx]
        if len(n) != 1:
            raise Unbatchable("TensorArray.stack: sizes differ between batch members")
        n = int(n[0])
        return np.array(buf[:, :n]) if fb else batched(np.array(buf[:n]), k)
    if not fi:
        i = check_index(idx, rows, "TensorArray.read")
        return np.array(buf[:, i]) if fb else batched(np.array(buf[i]), k)
    if mask is not None:
        idx = np.where(mask.reshape((k,) + (1,) * (idx.ndim - 1)), idx, 0)
    idx = check_index(idx, rows, "TensorArray.read")
    if not fb:
        return buf[idx]
    return buf[_row_index(np.arange(k), idx.ndim - 1), idx]


def _read_adjoint_batch(prim, args, flags, params, k):
    g, idx, like = args
    fg, fi, fl = flags
    prefix = params.get("prefix", False)
    rows = like.shape[1] if fl else like.shape[0]
    idx = np.asarray(idx)
    if prefix and fi:
        raise Unbatchable("TensorArray.stack: sizes differ between batch members")
    g = np.asarray(g)
    g = g if fg else batched(g, k)
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


def _clear_batch(prim, args, flags, params, k):
    g, idx, like = args
    fg, fi, fl = flags
    rows = like.shape[1] if fl else like.shape[0]
    g = np.asarray(g)
    g = g if fg else batched(g, k)
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


def _writes_buffer(params):  # the ops that write their first input (the buffer) in place
    return (0,)


# --- the primitives ----------------------------------------------------------------------------
def _rows(x):
    return x.shape[0] if type(x) is np.ndarray else np.shape(x)[0]


def check_index(idx, rows, what, dynamic=False):
    """``idx`` checked to be integer rows inside a TensorArray of ``rows`` rows (below 0 only
    when ``dynamic``): a Python int for one row (numpy's basic indexing, far faster than a 0-d
    index array), else an integer array."""
    if type(idx) is not int and not isinstance(idx, np.integer):  # (a loop's counter is one)
        idx = np.asarray(idx)
        if idx.dtype.kind not in "iu":
            raise TypeError(f"{what}: index must be an integer, got dtype {idx.dtype}")
        if idx.ndim:
            if idx.size and (idx.min() < 0 or (not dynamic and idx.max() >= rows)):
                raise IndexError(f"{what}: index {idx.tolist()} is out of range for a "
                                 f"TensorArray of size {rows}")
            return idx
    i = int(idx)
    if i < 0 or not dynamic and i >= rows:
        raise IndexError(f"{what}: index {i} is out of range for a TensorArray of size {rows}")
    return i


def _ta_buffer(shape, dtype):
    return np.zeros(shape, dtype)


# a fresh buffer per run (effects: never folded), which writes update in place
tensor_array_buffer = primitive("tensor_array_buffer", _ta_buffer, nondiff=True, effects=True,
                                shape_rule=lambda shape, dtype: (tuple(shape), np.dtype(dtype)),
                                batch=per_member)


def _ta_write(buf, idx, value, dynamic=False):
    rows = _rows(buf)
    idx = check_index(idx, rows, "TensorArray.write", dynamic)
    value = np.asarray(value)
    one = type(idx) is int  # a loop's write at its counter: the common case, kept short
    if value.shape != (buf.shape[1:] if one else np.shape(idx) + buf.shape[1:]):
        raise ValueError(f"TensorArray.write: value of shape {value.shape} does not match the "
                         f"element shape {buf.shape[1:]} (index shape {np.shape(idx)})")
    needed = idx + 1 if one else int(np.max(idx)) + 1 if idx.size else 0
    if needed > rows:  # only when dynamic: grow geometrically (amortised O(1) writes)
        grown = np.zeros((max(needed, 2 * rows),) + buf.shape[1:], buf.dtype)
        grown[:rows] = buf
        buf = grown
    buf[idx] = value  # in place: a TensorArray flow value is used once (module docstring)
    return buf


def _ta_write_shape(buf, idx, value, dynamic=False):
    shape = shape_of(buf)
    if dynamic and shape is not None:
        shape = (None,) + tuple(shape[1:])
    return shape, buf.dtype


tensor_array_write = primitive(
    "tensor_array_write", _ta_write,
    vjp=[lambda g, ans, buf, idx, value, dynamic=False: tensor_array_clear(g, idx, buf),
         None,
         lambda g, ans, buf, idx, value, dynamic=False: tensor_array_read(g, idx)],
    # Linear, but its tangent must not be written in place (a tangent may be shared):
    jvp=[lambda t, ans, buf, idx, value, dynamic=False: tensor_array_clear(t, idx, ans),
         None,
         lambda t, ans, buf, idx, value, dynamic=False: tensor_array_read_adjoint(t, idx, ans)],
    shape_rule=_ta_write_shape, writes=_writes_buffer, batch_values=_write_batch, sparsity=dense)


def _ta_read(buf, idx, prefix=False):
    if prefix:  # the first ``idx`` rows: TensorArray.stack
        return np.array(buf[:int(idx)])
    idx = check_index(idx, _rows(buf), "TensorArray.read")
    row = buf[idx]
    # A row at one index is a view (copied: the buffer is written in place later), or of a
    # 1-D buffer a numpy scalar, immutable (so a loop counter read back stays one); rows at
    # an index array are numpy's fresh copy.
    return row.copy() if type(idx) is int and type(row) is np.ndarray else row


def _ta_read_shape(buf, idx, prefix=False):
    shape = shape_of(buf)
    if shape is None:
        return None, buf.dtype
    if prefix:
        n = idx if not isinstance(idx, Tensor) else None
        return (None if n is None else int(n),) + tuple(shape[1:]), buf.dtype
    return tuple(shape_of(idx)) + tuple(shape[1:]), buf.dtype


tensor_array_read = primitive(
    "tensor_array_read", _ta_read,
    vjp=[lambda g, ans, buf, idx, prefix=False: tensor_array_read_adjoint(g, idx, buf,
                                                                          prefix=prefix),
         None],
    jvp=[lambda t, ans, buf, idx, prefix=False: tensor_array_read(t, idx, prefix=prefix), None],
    shape_rule=_ta_read_shape, effects=True, batch_values=_read_batch, sparsity=dense)


def _ta_read_adjoint(g, idx, like, prefix=False):
    out = np.zeros((_rows(like),) + np.shape(g)[np.ndim(idx) if not prefix else 1:],
                   np.result_type(g))
    if prefix:
        out[:int(idx)] = g
    elif np.ndim(idx) == 0:
        out[int(idx)] = g
    else:
        np.add.at(out, np.asarray(idx), g)  # repeated indices add up
    return out


tensor_array_read_adjoint = primitive(
    "tensor_array_read_adjoint", _ta_read_adjoint,
    vjp=[lambda g, ans, gy, idx, like, prefix=False: tensor_array_read(g, idx, prefix=prefix),
         None, None],
    jvp=[lambda t, ans, g, idx, like, prefix=False: tensor_array_read_adjoint(t, idx, like,
                                                                             prefix=prefix),
         None, None],
    shape_rule=lambda g, idx, like, prefix=False: (shape_of(like), g.dtype), effects=True,
    batch_values=_read_adjoint_batch, sparsity=dense)


def _ta_clear(g, idx, like):
    """``g`` resized to the rows of ``like`` with rows ``idx`` zeroed (a write's adjoint)."""
    rows = _rows(like)
    out = np.zeros((rows,) + np.shape(g)[1:], np.result_type(g))
    m = min(rows, _rows(g))
    out[:m] = g[:m]
    idx = np.asarray(idx)
    out[idx[idx < rows] if idx.ndim else (idx if idx < rows else [])] = 0
    return out


def _ta_clear_shape(g, idx, like):
    gs, ls = shape_of(g), shape_of(like)
    if gs is None or ls is None:
        return None, g.dtype
    return (ls[0],) + tuple(gs[1:]), g.dtype


tensor_array_clear = primitive(
    "tensor_array_clear", _ta_clear,
    vjp=[lambda gg, ans, g, idx, like: tensor_array_clear(gg, idx, g), None, None],
    jvp=[lambda t, ans, g, idx, like: tensor_array_clear(t, idx, like), None, None],
    shape_rule=_ta_clear_shape, effects=True, batch_values=_clear_batch, sparsity=dense)


# --- cotangent buffers updated in place by a reverse loop -----------------------------------
# The reverse loop of a ``while`` that writes (or reads) a TensorArray carries the buffer's
# cotangent, and each iteration takes one row out of it (a write's adjoint) or adds one row
# into it (a read's adjoint). Done functionally, every iteration copies the whole buffer:
# O(T^2) for T steps. These two ops update the cotangent in place instead, when the running
# loop owns it: ``_while_forward`` copies such loop variables once on entry and lists the
# copies here (not while it records a history, which would alias them). By construction
# (see ``_while_vjp``) each such variable has this one op as its only consumer per iteration.
class _Owned(threading.local):
    ids = None  # id -> array, for the arrays the innermost running loop owns; or None


_OWNED = _Owned()


def _ta_pop(g, idx, like):
    """``(g[idx], g with rows idx zeroed)``: a write's adjoint, both parts at once."""
    owned = _OWNED.ids
    if owned is not None and id(g) in owned and _rows(g) == _rows(like):
        i = check_index(idx, _rows(g), "TensorArray gradient")
        row = np.array(g[i])
        g[i] = 0
        return row, g
    return _ta_read(g, idx), _ta_clear(g, idx, like)


def _ta_pop_vjp(g, ans, cot, idx, like):
    g_row, g_rest = g
    parts = []
    if g_row is not None:
        parts.append(tensor_array_read_adjoint(g_row, idx, cot))
    if g_rest is not None:
        parts.append(tensor_array_clear(g_rest, idx, cot))
    grad = None if not parts else parts[0] if len(parts) == 1 else add(*parts)
    return grad, None, None


tensor_array_pop = primitive(
    "tensor_array_pop", _ta_pop, vjp=_ta_pop_vjp,
    jvp=[lambda t, ans, g, idx, like: tensor_array_pop(t, idx, like), None, None],
    multiple_results=True, none_grads_ok=True,
    shape_rule=lambda g, idx, like: [_ta_read_shape(g, idx), _ta_clear_shape(g, idx, like)],
    writes=_writes_buffer, batch=per_member, sparsity=dense)


def _ta_accumulate(acc, idx, row):
    """``acc`` plus ``row`` added at rows ``idx``: a read's adjoint added into ``acc``."""
    dtype = np.result_type(acc, row)
    owned = _OWNED.ids
    if not (owned is not None and id(acc) in owned and acc.dtype == dtype):
        acc = np.array(acc, dtype=dtype)
    i = check_index(idx, _rows(acc), "TensorArray gradient")
    if type(i) is int:
        acc[i] += row
    else:
        np.add.at(acc, i, row)  # repeated indices add up
    return acc


def _ta_accumulate_jvp(tangents, ans, acc, idx, row):
    t_acc, _, t_row = tangents
    if t_row is None:
        return t_acc
    if t_acc is None:
        return tensor_array_read_adjoint(t_row, idx, acc)
    return tensor_array_accumulate(t_acc, idx, t_row)


tensor_array_accumulate = primitive(
    "tensor_array_accumulate", _ta_accumulate,
    vjp=[lambda g, ans, acc, idx, row: g, None,
         lambda g, ans, acc, idx, row: tensor_array_read(g, idx)],
    jvp=_ta_accumulate_jvp,
    shape_rule=lambda acc, idx, row: (shape_of(acc), np.result_type(acc.dtype, row.dtype)),
    writes=_writes_buffer, batch=per_member, sparsity=dense)
