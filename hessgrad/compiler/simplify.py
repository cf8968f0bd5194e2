"""The simplify pass: sweeps that fold constants, apply what primitives declare about their
algebra (``prim.algebra``) and the rewrite rules they declare (``prim.rewrites``), and merge
common subexpressions, until nothing changes. Each step is exact, or says where it is not
(``sum_to`` of a broadcast rounds differently, a constant power is products within an ulp
or two)."""

import numpy as np

from ..kernels import tuning
from .ir import dead_code, has_effects, known
from .rewrite import Sweep, declared


def fold(sweep, op):
    """An op whose operands are all constants becomes its results (as constants)."""
    prog = sweep.prog
    if has_effects(op) or not all(a in prog.consts for a in op.args):
        return None
    try:
        result = op.fn(*[prog.consts[a] for a in op.args], **op.params)
    except Exception:  # noqa: BLE001 - keep the op: it fails at run time as before
        return None
    for o, r in zip(op.outs, result if op.multi else (result,)):
        prog.consts[o] = r
    return []


def algebra(sweep, op):
    """The primitive's declared facts (:class:`hessgrad.engine.facts.Algebra`): constant
    fills, forwarding, no-op params, identity elements, involutions and compositions."""
    alg, prog, args = op.prim.algebra, sweep.prog, op.args
    if op.multi:
        return None
    out = op.outs[0]
    if alg.fill_value is not None and known(prog.shape(out)) and prog.dtype(out) is not None:
        prog.consts[out] = np.full(prog.shape(out), alg.fill_value, prog.dtype(out))
        return []
    if alg.forwards:
        return sweep.to(op, args[0])
    if alg.noop and _is_noop(sweep, op, args[0] if args else None):
        return sweep.to(op, args[0])
    if alg.unit is not None:
        keep = [a for j, a in enumerate(args) if not (
            (alg.unit_at is None or j in alg.unit_at) and sweep.is_fill(a, alg.unit))]
        if len(keep) == 1 < len(args) and sweep.same_type(keep[0], out):
            return sweep.to(op, keep[0])
        if 2 <= len(keep) < len(args) and any(sweep.same_type(a, out) for a in keep):
            return [op.replace(args=keep)]
    src = sweep.producer.get(args[0]) if args else None
    if src is None or src.prim is not op.prim or src.multi:
        return None
    if alg.involution and sweep.same_type(src.args[0], out):
        return sweep.to(op, src.args[0])
    if alg.compose is not None:
        params = alg.compose(src.params, op.params, prog.shape(src.args[0]))
        if params is not None:
            new = op.replace(args=[src.args[0]], params=params)
            return sweep.to(op, src.args[0]) if _is_noop(sweep, new, src.args[0]) else [new]
    return None


def _is_noop(sweep, op, x):
    """``op`` returns its operand ``x`` as it is (its declared no-op params, same type)."""
    noop = op.prim.algebra.noop
    return bool(noop) and x is not None and sweep.same_type(x, op.outs[0]) and \
        (noop is True or noop(op.params, sweep.prog.shape(x)))


def scalarize(sweep, op):
    """A constant array holding one value everywhere, operand of a binary elementwise op
    whose other operand has the result's type, becomes a numpy scalar of its dtype (same
    result, less memory traffic, and a literal in fused kernels)."""
    prog = sweep.prog
    if not op.prim.algebra.elementwise or len(op.args) != 2 or op.multi:
        return None
    for i in (0, 1):
        c, other = op.args[i], op.args[1 - i]
        if c not in prog.consts or not sweep.same_type(other, op.outs[0]):
            continue
        value = prog.consts[c]
        if not isinstance(value, np.ndarray) or value.ndim == 0 or value.size == 0 or \
                value.dtype.kind not in "biuf":
            continue
        first = value.reshape(-1)[0]
        if not sweep.is_fill(c, first):
            continue
        args = list(op.args)
        args[i] = prog.new_const(value.dtype.type(first))
        return [op.replace(args=args)]
    return None


def cse(sweep, op):
    """An op equal to an earlier one (same primitive and forward, equal operands and params)
    is dropped: its outputs are the earlier one's."""
    if has_effects(op):
        return None
    prog = sweep.prog
    try:
        key = (op.prim, op.fn,
               tuple(_const_key(prog.consts[a]) if a in prog.consts else ("v", a)
                     for a in op.args),
               _param_key(op.params))
        hash(key)
    except TypeError:
        return None
    first = sweep.seen.setdefault(key, op)
    if first is op:
        return None
    for o, p in zip(op.outs, first.outs):
        sweep.alias[o] = p
    return []


def _param_key(v):
    if isinstance(v, (tuple, list)):
        return (type(v).__name__,) + tuple(_param_key(x) for x in v)
    if isinstance(v, dict):
        return ("dict",) + tuple((k, _param_key(x)) for k, x in sorted(v.items()))
    if isinstance(v, slice):
        return ("slice", _param_key(v.start), _param_key(v.stop), _param_key(v.step))
    if isinstance(v, np.ndarray):
        if v.size <= tuning.CSE_PARAM_MAX_SIZE:
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
    if a.size <= tuning.CSE_CONST_MAX_SIZE:
        return ("k", type(value).__name__, a.dtype.str, a.shape, a.tobytes())
    return ("c", id(value))


# the steps of a sweep, in order: the first that rewrites an op wins
STEPS = {"fold": fold, "algebra": algebra, "rewrites": declared, "scalarize": scalarize,
         "cse": cse}


def simplify(prog, steps=tuple(STEPS.values()), rounds=4):
    """Sweep ``steps`` over ``prog`` until nothing changes (at most ``rounds`` times),
    dropping dead code after each; returns the number of sweeps that changed something."""
    changed = 0
    for _ in range(rounds):
        if not Sweep(prog, steps).run():
            break
        changed += 1
        dead_code(prog)
    return changed
