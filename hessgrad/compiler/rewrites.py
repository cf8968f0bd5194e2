"""Rewrites registered per primitive object that are not facts of one op's algebra: they
look at an op's operands to replace it by a cheaper equal computation. The simplify pass
(:mod:`.simplify`) applies them."""

from ..engine.registry import BROADCAST_TO, SUM_TO
from ..ops.elementwise import multiply
from ..ops.linalg import matmul
from .ir import known, size_of
from .rewrite import Rules

REWRITES = Rules()


@REWRITES.register(matmul.primitive)
def outer_product(sweep, op):
    """(m, 1) @ (1, n): an outer product, no sum: the same numbers as a broadcast multiply,
    which numpy runs without a GEMM call and fusion can absorb."""
    prog = sweep.prog
    a, b = (prog.shape(v) for v in op.args)
    if op.params or not (known(a) and known(b) and len(a) == 2 and len(b) == 2 and
                         a[1] == 1 and b[0] == 1) or \
            not prog.dtype(op.args[0]) == prog.dtype(op.args[1]) == prog.dtype(op.outs[0]):
        return None
    return [op.replace(prim=multiply.primitive)]


@REWRITES.register(SUM_TO.prim)
def sum_of_broadcast(sweep, op):
    """``sum_to(broadcast_to(x))`` back to x's type: x times the number of copies (equal up
    to rounding: the sum added them one by one)."""
    prog = sweep.prog
    src = sweep.producer.get(op.args[0])
    if src is None or src.prim is not BROADCAST_TO.prim or src.multi or \
            not sweep.same_type(src.args[0], op.outs[0]):
        return None
    x = src.args[0]
    k = size_of(prog.shape(src.outs[0])) // max(size_of(prog.shape(x)), 1)
    if k == 1:
        return sweep.to(op, x)
    if prog.dtype(x).kind != "f":
        return None
    return [op.replace(prim=multiply.primitive, args=[x, prog.new_const(float(k))], params={})]
