"""Graph optimizer passes over a :class:`~hessgrad.compiler.ir.Program`.

* ``simplify``: one forward sweep that folds ops whose inputs became constants, rewrites
  gradient-graph idioms (``ones_like`` of a known shape, multiply by ones, add zeros,
  transpose of transpose, reshape of reshape, ``sum_to(broadcast_to(x))``, no-op
  reshapes/casts/identities) and merges common subexpressions (same primitive, same inputs,
  equal params).
* ``dead_code``: drops ops none of whose outputs reach a fetch.
* ``diagonal_products``: a matrix product with a diagonal factor (a Jacobian's identity
  basis, scaled) and a constant becomes a row or column scaling.
* ``accumulate``: ``add_n`` over ``scatter_add``s of basic slices becomes one buffer that
  every term is added into in place (no zero-filled array per term).

Every rewrite keeps shapes and dtypes and the numbers (up to rounding: ``sum_to`` of a
broadcast becomes a multiplication by the count).
"""

import numpy as np

from ..engine.registry import PRIMITIVES, get
from ..ops.core import is_basic_index
from .ir import Op, known, size_of


_BINARY = {"add", "subtract", "multiply", "divide", "power", "maximum", "minimum",
           "logaddexp"}


def has_effects(name):
    """Ops that make or update buffers in place (``Primitive.effects``, ``writes``): never
    folded, merged or dropped."""
    prim = PRIMITIVES.get(name)
    return prim is not None and (prim.effects or prim.writes is not None)


# --- keys for common-subexpression elimination --------------------------------------------
def _param_key(v):
    if isinstance(v, (tuple, list)):
        return (type(v).__name__,) + tuple(_param_key(x) for x in v)
    if isinstance(v, dict):
        return ("dict",) + tuple((k, _param_key(x)) for k, x in sorted(v.items()))
    if isinstance(v, slice):
        return ("slice", _param_key(v.start), _param_key(v.stop), _param_key(v.step))
    if isinstance(v, np.ndarray):
        if v.size <= 4096:
            return ("nd", v.dtype.str, v.shape, v.tobytes())
        return ("id", id(v))
    if isinstance(v, np.dtype):
        return ("dtype", v.str)
    if isinstance(v, type):
        return ("type", v.__module__, v.__qualname__)
    try:
        hash(v)
    except TypeError:
        return ("id", id(v))
    return (type(v).__name__, v)


def _const_key(value):
    if isinstance(value, (bool, int, float, complex)):
        return ("py", type(value).__name__, value)
    a = np.asarray(value)
    if a.size <= 16:
        return ("k", type(value).__name__, a.dtype.str, a.shape, a.tobytes())
    return ("c", id(value))


# --- constant tests -------------------------------------------------------------------------
def _all_equal(value, x):
    a = np.asarray(value)
    if a.dtype.kind not in "biufc":
        return False
    return a.size > 0 and bool(np.all(a == x))


# Constants up to this size are looked at for :func:`diagonal_of` (it scans them once).
DIAGONAL_MAX_SIZE = 1 << 22
_F64 = np.dtype(np.float64)


def diagonal_of(value):
    """``(offset, values)`` when ``value`` is a float64 matrix that is zero off one diagonal
    (a folded slice of an identity basis, scaled: what Jacobians push through a function):
    ``values[i]`` is its entry in row i (0.0 where the diagonal has none); None otherwise."""
    if not (isinstance(value, np.ndarray) and value.ndim == 2 and value.dtype == _F64) or \
            min(value.shape) < 2 or value.size > DIAGONAL_MAX_SIZE:
        return None
    rows, cols = np.nonzero(value)
    if not len(rows) or np.any(cols - rows != cols[0] - rows[0]):
        return None
    values = np.zeros(value.shape[0])
    values[rows] = value[rows, cols]
    return int(cols[0] - rows[0]), values


class _Sweep:
    def __init__(self, prog):
        self.prog = prog
        self.alias = {}
        self.producer = {}
        self.seen = {}
        self.changed = False
        self._fill_cache = {}

    def resolve(self, v):
        while v in self.alias:
            v = self.alias[v]
        return v

    def is_fill(self, v, x):
        if v not in self.prog.consts:
            return False
        key = (v, x)
        if key not in self._fill_cache:
            self._fill_cache[key] = _all_equal(self.prog.consts[v], x)
        return self._fill_cache[key]

    def same_type(self, a, b):
        """Values ``a`` and ``b`` have the same known shape and dtype."""
        p = self.prog
        return known(p.shape(a)) and p.shape(a) == p.shape(b) and \
            p.dtype(a) is not None and p.dtype(a) == p.dtype(b)

    def run(self):
        prog = self.prog
        new_ops = []
        for op in prog.ops:
            op.args = [self.resolve(a) for a in op.args]
            replacement = self.fold(op)
            if replacement is None:
                replacement = self.rewrite(op)
            if replacement is None:
                replacement = self.cse(op)
            if replacement is False:  # the op is gone: its outputs are aliases or constants
                self.changed = True
                continue
            if replacement is not op:
                self.changed = True
            for o in replacement.outs:
                self.producer[o] = replacement
            new_ops.append(replacement)
        prog.ops = new_ops
        prog.fetches = [self.resolve(v) for v in prog.fetches]
        return self.changed

    # --- folding ---------------------------------------------------------------------------
    def fold(self, op):
        prog = self.prog
        if has_effects(op.name) or not all(a in prog.consts for a in op.args):
            return None
        try:
            result = op.fn(*[prog.consts[a] for a in op.args], **op.params)
        except Exception:  # noqa: BLE001 - keep the op: it fails at run time as before
            return None
        for o, r in zip(op.outs, result if op.multi else (result,)):
            prog.consts[o] = r
        return False

    # --- algebraic rewrites ----------------------------------------------------------------
    def to(self, op, v):
        """Replace the (single) output of ``op`` by ``v``."""
        self.alias[op.outs[0]] = v
        return False

    def rewrite(self, op):
        prog, name, args = self.prog, op.name, op.args
        if op.multi:
            return None
        out = op.outs[0]
        if name in ("ones_like", "zeros_like") and known(prog.shape(out)) and \
                prog.dtype(out) is not None:
            fill = np.ones if name == "ones_like" else np.zeros
            prog.consts[out] = fill(prog.shape(out), prog.dtype(out))
            return False
        if name in ("identity", "stop_gradient"):
            return self.to(op, args[0])
        if name in ("reshape", "broadcast_to", "sum_to", "cast", "transpose", "getitem") and \
                self.same_type(args[0], out) and self._is_noop(op):
            return self.to(op, args[0])
        if name == "multiply":
            for a, b in ((args[0], args[1]), (args[1], args[0])):
                if self.is_fill(b, 1) and self.same_type(a, out):
                    return self.to(op, a)
        if name == "divide" and self.is_fill(args[1], 1) and self.same_type(args[0], out):
            return self.to(op, args[0])
        if name == "add":
            for a, b in ((args[0], args[1]), (args[1], args[0])):
                if self.is_fill(b, 0) and self.same_type(a, out):
                    return self.to(op, a)
        if name == "subtract" and self.is_fill(args[1], 0) and self.same_type(args[0], out):
            return self.to(op, args[0])
        if name == "add_n":
            keep = [a for a in args if not self.is_fill(a, 0)]
            if len(keep) == 1 and self.same_type(keep[0], out):
                return self.to(op, keep[0])
            if 2 <= len(keep) < len(args) and any(self.same_type(a, out) for a in keep):
                return Op("add_n", op.fn, keep, op.params, op.outs, False, op.node, op.nodes)
        if name in _BINARY and len(args) == 2:
            changed = self.scalarize(op)
            if changed is not None:
                return changed
        if name == "matmul" and self._is_outer(args) and prog.dtype(args[0]) == prog.dtype(out):
            # (m, 1) @ (1, n): an outer product, no sum: the same numbers as a broadcast
            # multiply, which numpy runs without a GEMM call and fusion can absorb
            return Op("multiply", get("multiply").forward, list(args), {}, op.outs, False,
                      op.node, op.nodes)
        src = self.producer.get(args[0]) if args else None
        if src is None or src.multi:
            return None
        if name == "negative" and src.name == "negative" and self.same_type(src.args[0], out):
            return self.to(op, src.args[0])
        if name == "transpose" and src.name == "transpose" and known(prog.shape(src.args[0])):
            nd = len(prog.shape(src.args[0]))
            inner = src.params.get("axes")
            inner = tuple(reversed(range(nd))) if inner is None else \
                tuple(a % nd for a in inner)
            outer = op.params.get("axes")
            outer = tuple(reversed(range(nd))) if outer is None else \
                tuple(a % nd for a in outer)
            axes = tuple(inner[j] for j in outer)
            if axes == tuple(range(nd)):
                return self.to(op, src.args[0])
            return Op("transpose", op.fn, [src.args[0]], {"axes": axes}, op.outs, False,
                      op.node, op.nodes)
        if name == "reshape" and src.name == "reshape":
            if self.same_type(src.args[0], out):
                return self.to(op, src.args[0])
            return Op("reshape", op.fn, [src.args[0]], op.params, op.outs, False, op.node,
                      op.nodes)
        if name == "sum_to" and src.name == "broadcast_to" and \
                self.same_type(src.args[0], out):
            x = src.args[0]
            k = size_of(prog.shape(src.outs[0])) // max(size_of(prog.shape(x)), 1)
            if k == 1:
                return self.to(op, x)
            if prog.dtype(x).kind == "f":
                return Op("multiply", get("multiply").forward, [x, prog.new_const(float(k))],
                          {}, op.outs, False, op.node, op.nodes)
        return None

    def _is_outer(self, args):
        a, b = (self.prog.shape(v) for v in args)
        return known(a) and known(b) and len(a) == 2 and len(b) == 2 and a[1] == 1 and \
            b[0] == 1 and self.prog.dtype(args[0]) == self.prog.dtype(args[1])

    def scalarize(self, op):
        """A constant array holding one value everywhere, against an operand that has the
        output's shape, becomes a numpy scalar of its dtype (same result dtype, less memory
        traffic, and a literal in fused kernels)."""
        prog, out = self.prog, op.outs[0]
        for i in (0, 1):
            c, other = op.args[i], op.args[1 - i]
            if c not in prog.consts or not self.same_type(other, out):
                continue
            value = prog.consts[c]
            if not isinstance(value, np.ndarray) or value.ndim == 0 or value.size == 0 or \
                    value.dtype.kind not in "biuf":
                continue
            first = value.reshape(-1)[0]
            if not self.is_fill(c, first):
                continue
            args = list(op.args)
            args[i] = prog.new_const(value.dtype.type(first))
            return Op(op.name, op.fn, args, op.params, op.outs, False, op.node, op.nodes)
        return None

    def _is_noop(self, op):
        name, params = op.name, op.params
        if name == "cast":
            return np.dtype(params["dtype"]) == self.prog.dtype(op.args[0])
        if name == "transpose":
            axes = params.get("axes")
            nd = len(self.prog.shape(op.args[0]))
            return axes is not None and tuple(a % nd for a in axes) == tuple(range(nd))
        if name == "getitem":
            index = params["index"]
            parts = index if isinstance(index, tuple) else (index,)
            return all((isinstance(p, slice) and p == slice(None)) or p is Ellipsis
                       for p in parts)
        return True  # reshape / broadcast_to / sum_to to the same shape

    # --- common subexpressions -------------------------------------------------------------
    def cse(self, op):
        if has_effects(op.name) or op.name in ("while", "cond"):
            return op
        prog = self.prog
        try:
            key = (op.name, op.fn,
                   tuple(_const_key(prog.consts[a]) if a in prog.consts else ("v", a)
                         for a in op.args),
                   _param_key(op.params))
            hash(key)
        except TypeError:
            return op
        first = self.seen.get(key)
        if first is None:
            self.seen[key] = op
            return op
        for o, p in zip(op.outs, first.outs):
            self.alias[o] = p
        return False


def simplify(prog, rounds=4):
    """Fold, rewrite and merge until nothing changes (at most ``rounds`` sweeps)."""
    for _ in range(rounds):
        if not _Sweep(prog).run():
            break
        dead_code(prog)
    return prog


def dead_code(prog):
    live = set(prog.fetches)
    kept = []
    for op in reversed(prog.ops):
        if has_effects(op.name) or live.intersection(op.outs):
            kept.append(op)
            live.update(op.args)
    prog.ops = kept[::-1]
    return prog


def _accumulate(*terms, shape, dtype, indices):
    """Sum of ``terms``, where ``indices[k]`` (if not None) places term k in a slice."""
    out = np.zeros(shape, dtype)
    for index, term in zip(indices, terms):
        target = out if index is None else out[index]
        if isinstance(target, np.ndarray):  # a view: add in place
            np.add(target, term, out=target)
        else:  # an integer index picked one element
            out[index] = target + term
    return out


def accumulate(prog):
    """``add_n(scatter_add(g1, i1), scatter_add(g2, i2), h)`` -> one buffer, added into."""
    users = prog.consumers()
    producer = {o: op for op in prog.ops for o in op.outs}
    fetched = set(prog.fetches)
    changed = False
    for k, op in enumerate(prog.ops):
        if op.name != "add_n" or not known(prog.shape(op.outs[0])):
            continue
        dtype = prog.dtype(op.outs[0])
        terms, indices, nodes = [], [], list(op.nodes)
        for a in op.args:
            src = producer.get(a)
            if src is not None and src.name == "scatter_add" and a not in fetched and \
                    users.get(a) == [k] and op.args.count(a) == 1 and \
                    is_basic_index(src.params["index"]) and prog.dtype(a) == dtype and \
                    tuple(src.params["shape"]) == prog.shape(op.outs[0]):
                terms.append(src.args[0])
                index = src.params["index"]
                # None among the indices means "the whole buffer"; x[None] is x[(None,)]
                indices.append((None,) if index is None else index)
                nodes.extend(src.nodes)
            else:
                terms.append(a)
                indices.append(None)
        if all(i is None for i in indices):
            continue
        prog.ops[k] = Op("accumulate", _accumulate, terms,
                         {"shape": prog.shape(op.outs[0]), "dtype": dtype,
                          "indices": tuple(indices)}, op.outs, False, op.node, nodes)
        changed = True
    if changed:
        dead_code(prog)
    return prog


def _diagonal_entries(prog, v, producer):
    """``(values, ops)`` when ``v`` is a square float64 matrix zero off its main diagonal: a
    diagonal constant, or one times a vector or scalar (a Jacobian's basis scaled by a
    derivative). ``values`` holds its diagonal, computed by the new ``ops``."""
    shape = prog.shape(v)
    if not known(shape) or len(shape) != 2 or shape[0] != shape[1] or prog.dtype(v) != _F64:
        return None
    n = shape[0]
    if v in prog.consts:
        found = diagonal_of(prog.consts[v])
        return (prog.new_const(found[1]), []) if found and found[0] == 0 else None
    src = producer.get(v)
    if src is None or src.name != "multiply" or src.params:
        return None
    for c, x in (src.args, src.args[::-1]):
        found = diagonal_of(prog.consts.get(c))
        if found is None or found[0] != 0 or prog.shape(c) != shape or \
                prog.dtype(x) != _F64 or prog.shape(x) not in ((), (n,), (1, n), (n, 1)):
            continue
        ops = []
        if len(prog.shape(x)) == 2:  # entry (i, i) is x's i-th either way
            flat = prog.new_value((n,), _F64)
            ops.append(Op("reshape", get("reshape").forward, [x], {"shape": (n,)}, (flat,),
                          False, src.node))
            x = flat
        values = prog.new_value((n,), _F64)
        ops.append(Op("multiply", get("multiply").forward, [prog.new_const(found[1]), x], {},
                      (values,), False, src.node))
        return values, ops
    return None


def diagonal_products(prog):
    """``matmul(D, B)`` with ``D`` zero off its diagonal (see :func:`_diagonal_entries`) and
    ``B`` a finite constant becomes ``diag(D)[:, None] * B`` (and ``A @ D``, ``A * diag(D)``):
    a traced reverse-mode Jacobian multiplies its identity basis into the weights, O(n^3)
    work for an O(n^2) result. The same numbers: the dense product only adds zeros (it would
    differ for an infinite or NaN entry of ``B``, hence constants only)."""
    producer = {o: op for op in prog.ops for o in op.outs}
    out_ops, changed = [], False
    for op in prog.ops:
        if op.name == "matmul" and not op.params and prog.dtype(op.outs[0]) == _F64 and \
                all(known(prog.shape(a)) and len(prog.shape(a)) == 2 for a in op.args):
            a, b = op.args
            rewrite = None
            for diag, other, left in ((a, b, True), (b, a, False)):
                value = prog.consts.get(other)
                if not isinstance(value, np.ndarray) or value.dtype != _F64 or \
                        not np.all(np.isfinite(value)):
                    continue
                found = _diagonal_entries(prog, diag, producer)
                if found is not None:
                    rewrite = (found, other, left)
                    break
            if rewrite is not None:
                (values, ops), other, left = rewrite
                if left:  # rows of B scaled: diag[:, None] * B
                    column = prog.new_value((prog.shape(other)[0], 1), _F64)
                    ops.append(Op("reshape", get("reshape").forward, [values],
                                  {"shape": (-1, 1)}, (column,), False, op.node))
                    values = column
                out_ops += ops
                out_ops.append(Op("multiply", get("multiply").forward,
                                  [values, other] if left else [other, values], {}, op.outs,
                                  False, op.node, op.nodes))
                changed = True
                continue
        out_ops.append(op)
    prog.ops = out_ops
    if changed:
        dead_code(prog)
    return prog


def freeze_fetched_consts(prog):
    """A fetched constant (a folded linear gradient, a zero Hessian) is the same array at every
    call: hand it out as a read-only view, so that the boundary copies it for the caller
    (``engine.tensor.owned``) and an in-place update of one result cannot change the next."""
    for v in prog.fetches:
        c = prog.consts.get(v)
        if isinstance(c, np.ndarray) and c.flags.writeable:
            c = c.view()
            c.flags.writeable = False
            prog.consts[v] = c
    return prog


def optimize(prog):
    """The default pipeline."""
    dead_code(prog)
    simplify(prog)
    diagonal_products(prog)
    accumulate(prog)
    freeze_fetched_consts(prog)
    return prog
