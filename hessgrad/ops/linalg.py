"""Products: matmul (numpy semantics, 1-D and batched) and einsum (opt_einsum paths, cached),
and the products built from them: tensordot, dot, inner, outer, vdot, kron, cross."""

import functools

import numpy as np
import opt_einsum

from ..engine.batching import plain_values
from ..engine.dispatch import bind
from ..engine.facts import Lowering
from ..engine.registry import PerInput, primitive
from ..engine.tensor import dtype_of, shape_of
from .batching import align, core_ndim, new_letter, static_shape
from .core import REAL_FLOATS, broadcast_to, reshape, stack, sum_to, unbroadcast
from .elementwise import conjugate, multiply
from .patterns import UNKNOWN, broadcast_rows, contraction
from .shape_rules import stand_in, static_broadcast
from .reduction import sum as reduce_sum
from .shape import expand_dims, getitem, swapaxes


def matmul_kernel(a_shape, b_shape, a_dtype, b_dtype):
    """The numpy function that computes ``matmul`` of checked operands of these shapes and
    dtypes: an outer product ``(n, 1) @ (1, m)`` of one real float dtype (a dense layer's
    gradient for one output) as a broadcast product, the same products BLAS computes in
    about half its time; else ``np.matmul``."""
    if len(a_shape) == len(b_shape) == 2 and a_shape[1] == 1 and a_dtype is not None and \
            a_dtype == b_dtype and a_dtype in REAL_FLOATS:
        return np.multiply
    return np.matmul


def _check_matmul(a, b):
    sa, sb = np.shape(a), np.shape(b)
    if not sa or not sb:
        raise ValueError(f"matmul: operands must be at least 1-D, got shapes {sa} and {sb}")
    ka = sa[-1]
    kb = sb[0] if len(sb) == 1 else sb[-2]
    if ka != kb:
        raise ValueError(f"matmul: contraction dimensions differ: a has shape {sa}, "
                         f"b has shape {sb} ({ka} != {kb})")
    return matmul_kernel(sa, sb, getattr(a, "dtype", None), getattr(b, "dtype", None))(a, b)


def _matmul_vjp_a(g, ans, a, b):
    sa, sb = shape_of(a), shape_of(b)
    if len(sb) == 1:                       # (..., k) @ (k,) -> (...)
        return unbroadcast(expand_dims(g, -1) * b, a)
    if len(sa) == 1:                       # (k,) @ (..., k, m) -> (..., m)
        if len(sb) == 2:                   # B g: one matrix-vector product
            return matmul(b, g)
        return sum_to(getitem(matmul(b, expand_dims(g, -1)), index=(Ellipsis, 0)), shape=sa)
    return unbroadcast(matmul(g, swapaxes(b, -1, -2)), a)


def _matmul_vjp_b(g, ans, a, b):
    sa, sb = shape_of(a), shape_of(b)
    if len(sa) == 1 and len(sb) == 1:      # inner product
        return g * a
    if len(sa) == 1:                       # (k,) @ (..., k, m): outer product of a and g
        return unbroadcast(expand_dims(a, -1) * expand_dims(g, -2), b)
    if len(sb) == 1:                       # (..., n, k) @ (k,) -> (..., n)
        if len(sa) == 2:                   # g^T A: one matrix-vector product, A read by rows
            return matmul(g, a)
        return sum_to(getitem(matmul(swapaxes(a, -1, -2), expand_dims(g, -1)),
                              index=(Ellipsis, 0)), shape=sb)
    return unbroadcast(matmul(swapaxes(a, -1, -2), g), b)


def _matmul_batch(prim, args, flags, params, k):
    """Batched matmul by ops: one product where a GEMM can take the batch (a batched left
    operand against a matrix; vectors against one matrix as the rows of a product), a
    broadcast product of aligned operands otherwise."""
    a, b = args
    fa, fb = flags
    na, nb = core_ndim(a, fa), core_ndim(b, fb)
    if fa and not fb and nb <= 2:
        return matmul(a, b)  # (k, ..., n, p) @ (p, m) or (p,): one product
    if fb and not fa and na <= 2 and nb == 1:
        # a @ v for k vectors: the rows of V a^T (a vector a: V a)
        return matmul(b, swapaxes(a, -1, -2) if na == 2 else a)
    if fa and fb and na == nb == 1:
        return reduce_sum(a * b, axis=1)
    # Vectors become matrices (a row on the left, a column on the right), the batched
    # operands' core axes line up behind the batch axis, one broadcast matmul, and the unit
    # axes of the vectors are dropped again.
    if na == 1:
        sa = static_shape(a)
        a = reshape(a, shape=sa[:-1] + (1, sa[-1]))
    if nb == 1:
        sb = static_shape(b)
        b = reshape(b, shape=sb + (1,))
    out = matmul(*align([a, b], [fa, fb]))
    if na == 1 or nb == 1:
        so = static_shape(out)
        out = reshape(out, shape=so[:-2] + ((so[-2],) if na > 1 else ()) +
                      ((so[-1],) if nb > 1 else ()))
    return out


def _unit_rows(v):
    """``j`` such that row ``r`` of the 2-D batch ``v`` is the unit vector ``e_j[r]``, or None.
    Dense Hessians feed such blocks of basis vectors; ``A @ e_j`` is then a column of ``A``,
    gathered instead of multiplied (the check costs one pass over ``v``)."""
    if v.ndim != 2 or not len(v) or np.count_nonzero(v) != len(v):
        return None
    rows, cols = np.nonzero(v)
    if not np.array_equal(rows, np.arange(len(v))) or not np.all(v[rows, cols] == 1):
        return None
    if cols[-1] - cols[0] == len(cols) - 1 and np.all(np.diff(cols) == 1):
        return slice(int(cols[0]), int(cols[-1]) + 1)  # consecutive: a view, no copy
    return cols


def _matmul_batch_values(prim, args, flags, params, k):
    """Batched matmul on arrays: a block of unit vectors against a matrix picks its columns
    (or rows) instead of multiplying; the other cases one GEMM each where one can take the
    batch."""
    a, b = args
    fa, fb = flags
    na, nb = np.ndim(a) - fa, np.ndim(b) - fb
    dtype = np.result_type(a, b)
    if fb and not fa and na == 2 and nb == 1 and (j := _unit_rows(b)) is not None:
        return a[:, j].T.astype(dtype, copy=False)     # A @ e_j = A[:, j]
    if fa and not fb and na == 1 and nb == 2 and (j := _unit_rows(a)) is not None:
        return b[j].astype(dtype, copy=False)          # e_j @ B = B[j]
    if fa and not fb and nb <= 2 and na >= 1:
        # (k, ..., n, p) @ (p, m): one GEMM over all leading rows; @ (p,): one GEMV
        return np.matmul(a, b)
    if fb and not fa and na == 2 and (nb == 1 or (nb == 2 and b.shape[2] == 1)):
        # A @ v for k vectors (or (p, 1) columns): the rows of V A^T, one GEMM, no copies
        out = np.matmul(b if nb == 1 else b[:, :, 0], a.T)
        return out if nb == 1 else out[:, :, None]
    if fb and not fa and na == 2 and nb == 2:
        # A @ (k, p, m): stack the batch into the columns of one GEMM
        out = np.matmul(a, np.moveaxis(b, 0, 1).reshape(b.shape[1], k * b.shape[2]))
        return np.moveaxis(out.reshape(a.shape[0], k, b.shape[2]), 1, 0)
    with plain_values():
        return _matmul_batch(prim, args, flags, params, k)


def _matmul_as_einsum(sa, sb):
    """matmul as einsum over explicitly broadcast batch axes: (spec, shape_a, shape_b)."""
    a1, b1 = len(sa) == 1, len(sb) == 1
    ca = (1,) + tuple(sa) if a1 else tuple(sa)
    cb = tuple(sb) + (1,) if b1 else tuple(sb)
    batch = np.broadcast_shapes(ca[:-2], cb[:-2])
    letters = "abcdefghijklmnopqrstuvw"[:len(batch)]
    spec_a = letters + ("j" if a1 else "ij")
    spec_b = letters + ("j" if b1 else "jk")
    out = letters + ("" if a1 else "i") + ("" if b1 else "k")
    full_a = batch + (tuple(sa) if a1 else tuple(sa[-2:]))
    full_b = batch + (tuple(sb) if b1 else tuple(sb[-2:]))
    return f"{spec_a},{spec_b}->{out}", full_a, full_b


def _matmul_pattern(step):
    sa, sb = step.in_shapes
    spec, full_a, full_b = _matmul_as_einsum(sa, sb)
    deps = [broadcast_rows(d, s, f) for d, s, f in zip(step.deps, (sa, sb), (full_a, full_b))]
    values = [v if v is UNKNOWN else np.broadcast_to(v, f)
              for v, f in zip(step.values, (full_a, full_b))]
    return contraction(step, spec, deps, values, [full_a, full_b])


def _matmul_shape(a, b):
    sa, sb = shape_of(a), shape_of(b)
    dtype = np.result_type(stand_in(a), stand_in(b))
    if sa is None or sb is None:
        return None, dtype
    if not sa or not sb:
        raise ValueError(f"matmul: operands must be at least 1-D, got shapes {sa} and {sb}")
    ka, kb = sa[-1], sb[0] if len(sb) == 1 else sb[-2]
    if ka is not None and kb is not None and ka != kb:
        raise ValueError(f"matmul: contraction dimensions differ: a has shape {sa}, "
                         f"b has shape {sb} ({ka} != {kb})")
    batch = static_broadcast("matmul", [tuple(sa[:-2]), tuple(sb[:-2])], ("a", "b"))
    return batch + tuple(sa[-2:-1]) + tuple(sb[-1:] if len(sb) > 1 else ()), dtype


def _outer_product(sweep, op):
    """A compiler rewrite: (m, 1) @ (1, n) is an outer product, no sum: the same numbers as a
    broadcast multiply, which numpy runs without a GEMM call and fusion can absorb."""
    a, b = (sweep.shape(v) for v in op.args)
    if op.params or a is None or b is None or not (len(a) == len(b) == 2 and a[1] == 1 and
                                                   b[0] == 1) or \
            not sweep.dtype(op.args[0]) == sweep.dtype(op.args[1]) == sweep.dtype(op.outs[0]):
        return None
    return [op.replace(prim=multiply.primitive)]


matmul = primitive("matmul", _check_matmul, vjp=[_matmul_vjp_a, _matmul_vjp_b],
                   jvp=[lambda t, ans, a, b: matmul(t, b), lambda t, ans, a, b: matmul(a, t)],
                   batch=_matmul_batch, batch_values=_matmul_batch_values,
                   sparsity=_matmul_pattern, shape_rule=_matmul_shape,
                   lowering=Lowering(fresh=True, specialize=matmul_kernel),
                   rewrites=(_outer_product,),
                   doc=("Matrix product ``a @ b`` with numpy's ``matmul`` rules (1-d operands, "
                        "batched stacks)."))


# --- einsum -------------------------------------------------------------------------------
def parse_subscripts(subscripts, shapes):
    """Explicit ``(inputs, output)`` index strings; ellipses expanded to fresh letters."""
    spec = subscripts.replace(" ", "")
    if "->" in spec:
        lhs, out = spec.split("->")
    else:
        lhs, out = spec, None
    inputs = lhs.split(",")
    if len(inputs) != len(shapes):
        raise ValueError(f"einsum: subscripts {subscripts!r} name {len(inputs)} operands, "
                         f"got {len(shapes)}")
    used = set(spec) - set(".,->")
    free = iter(c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                if c not in used)
    ell_len = max([len(s) - (len(term) - 3) for term, s in zip(inputs, shapes)
                   if "..." in term] or [0])
    ell = "".join(next(free) for _ in range(ell_len))
    expanded = []
    for term, shape in zip(inputs, shapes):
        if "..." in term:
            n = len(shape) - (len(term) - 3)
            term = term.replace("...", ell[ell_len - n:])
        if len(term) != len(shape):
            raise ValueError(f"einsum: operand with subscripts {term!r} has shape {shape}")
        expanded.append(term)
    sizes = {}
    for term, shape in zip(expanded, shapes):
        for c, n in zip(term, shape):
            m = sizes.setdefault(c, n)
            if m != n and 1 not in (m, n):  # size 1 broadcasts, as in numpy
                raise ValueError(f"einsum: subscript {c!r} has size {m} in one operand and "
                                 f"{n} in another ({subscripts!r} with operand shapes "
                                 f"{[tuple(s) for s in shapes]})")
    if out is None:
        counts = {}
        for c in "".join(expanded):
            counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
    return expanded, out


@functools.lru_cache(maxsize=1024)
def _contract_expression(spec, shapes):
    return opt_einsum.contract_expression(spec, *shapes)


def _einsum_forward(*operands, spec):
    shapes = tuple(np.shape(o) for o in operands)
    return _contract_expression(spec, shapes)(*operands)


def _einsum_operand_vjp(k):
    def vjp(g, ans, *operands, spec):
        inputs, out = spec.split("->")
        terms = inputs.split(",")
        target = terms[k]
        others = [(t, o) for i, (t, o) in enumerate(zip(terms, operands)) if i != k]
        # Letters of operand k that appear nowhere else were summed out: broadcast them back.
        available = set(out).union(*[set(t) for t, _ in others])
        kept = "".join(dict.fromkeys(c for c in target if c in available))
        sub = ",".join([out] + [t for t, _ in others]) + "->" + kept
        grad = einsum_explicit(sub, g, *[o for _, o in others])
        shape = shape_of(operands[k])
        grad = _embed(grad, kept, target, shape)
        got = shape_of(grad)
        if got == shape:
            return grad
        # Size-1 broadcasting between operands: the gradient of an operand's size-1 axis sums
        # over that axis, and an axis that met only size 1 elsewhere is spread back over it.
        grad = sum_to(grad, shape=tuple(1 if n == 1 else m for n, m in zip(shape, got)))
        return broadcast_to(grad, shape=shape)
    return vjp


def _embed(grad, kept, target, shape):
    """Lay ``grad`` (indexed by ``kept``) out over operand indices ``target``, which may
    repeat a letter (a diagonal: multiply by an identity) or hold letters that were summed
    away (broadcast: multiply by ones)."""
    if kept == target:
        return grad
    sizes = dict(zip(target, shape))
    fresh = iter(c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                 if c not in target)
    out, factors, constants, seen = [], [], [], set()
    for c in target:
        if c in seen:  # a repeated letter: a fresh letter tied to it by an identity matrix
            d = next(fresh)
            out.append(d)
            factors.append(c + d)
            constants.append(np.eye(sizes[c]))
        else:
            seen.add(c)
            out.append(c)
            if c not in kept:
                factors.append(c)
                constants.append(np.ones(sizes[c]))
    return einsum_explicit(",".join([kept] + factors) + "->" + "".join(out), grad, *constants)


def einsum_explicit(spec, *operands):
    return _einsum(*operands, spec=spec)


def _einsum_jvp(k):
    def jvp(t, ans, *operands, spec):
        ops = list(operands)
        ops[k] = t
        return _einsum(*ops, spec=spec)
    return jvp


def _einsum_batch(prim, args, flags, params, k):
    """A subscript letter for the batch axis, in front of every batched operand's and of the
    output's subscripts."""
    spec = params["spec"]
    inputs, out = spec.split("->")
    letter = new_letter(spec)
    terms = [letter + t if f else t for t, f in zip(inputs.split(","), flags)]
    return bind(prim, tuple(args), dict(params, spec=",".join(terms) + "->" + letter + out))


def _einsum_shape(*operands, spec):
    dtype = np.result_type(*[stand_in(o) for o in operands])
    inputs, out = spec.split("->")
    sizes = {}
    for term, o in zip(inputs.split(","), operands):
        shape = shape_of(o)
        if shape is None:
            return None, dtype
        for letter, d in zip(term, shape):
            known = sizes.get(letter, 1)
            if known == 1 or known is None and d != 1:  # size-1 axes broadcast
                sizes[letter] = d
    return tuple(sizes.get(letter) for letter in out), dtype


_einsum = primitive("einsum", _einsum_forward, vjp=PerInput(_einsum_operand_vjp),
                    jvp=PerInput(_einsum_jvp), batch=_einsum_batch, shape_rule=_einsum_shape,
                    sparsity=lambda step: contraction(step, step.params["spec"], step.deps,
                                                      step.values, step.in_shapes))


def einsum(subscripts, *operands):
    """numpy's ``einsum`` (explicit or implicit form, ellipses), contracted by opt_einsum
    with a cached path; differentiable in every operand."""
    inputs, out = parse_subscripts(subscripts, [shape_of(o) for o in operands])
    return _einsum(*operands, spec=",".join(inputs) + "->" + out)


# --- products built from matmul and einsum (not primitives: their rules come for free) ----
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _ndim(x):
    return len(shape_of(x))


def _norm_axis(name, axis, ndim, arg):
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"{name}: axis {axis} is out of bounds for {arg} of "
                                      f"dimension {ndim}")
    return axis % ndim


def tensordot(a, b, axes=2):
    """numpy's ``tensordot``: sum products over ``axes`` (an int N: the last N axes of ``a``
    with the first N of ``b``; or a pair of axis sequences), as one einsum."""
    sa, sb = shape_of(a), shape_of(b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > len(sa) or n > len(sb):
            raise ValueError(f"tensordot: axes={n} is invalid for a of shape {sa} and b of "
                             f"shape {sb}")
        axes_a, axes_b = list(range(len(sa) - n, len(sa))), list(range(n))
    else:
        try:
            axes_a, axes_b = axes
        except (TypeError, ValueError):
            raise ValueError(f"tensordot: axes must be an int or a pair of axis sequences, "
                             f"got {axes!r}") from None
        axes_a = [axes_a] if isinstance(axes_a, (int, np.integer)) else list(axes_a)
        axes_b = [axes_b] if isinstance(axes_b, (int, np.integer)) else list(axes_b)
        if len(axes_a) != len(axes_b):
            raise ValueError(f"tensordot: axes {axes!r} pair {len(axes_a)} axes of a with "
                             f"{len(axes_b)} axes of b")
        axes_a = [_norm_axis("tensordot", x, len(sa), "a") for x in axes_a]
        axes_b = [_norm_axis("tensordot", x, len(sb), "b") for x in axes_b]
    if len(sa) + len(sb) > len(_LETTERS):
        raise ValueError(f"tensordot: too many dimensions ({len(sa)} + {len(sb)})")
    for i, j in zip(axes_a, axes_b):
        if sa[i] != sb[j]:
            raise ValueError(f"tensordot: shape mismatch for sum: a has shape {sa}, b has "
                             f"shape {sb} (axis {i} of a has length {sa[i]}, axis {j} of b "
                             f"has length {sb[j]})")
    la = list(_LETTERS[:len(sa)])
    lb = list(_LETTERS[len(sa):len(sa) + len(sb)])
    for i, j in zip(axes_a, axes_b):
        lb[j] = la[i]
    out = [c for i, c in enumerate(la) if i not in axes_a] + \
        [c for j, c in enumerate(lb) if j not in axes_b]
    return einsum_explicit("".join(la) + "," + "".join(lb) + "->" + "".join(out), a, b)


def dot(a, b):
    """numpy's ``dot`` for every combination of dimensions: a product with a scalar, matmul
    when either side is a vector or both are matrices, else ``a``'s last axis with ``b``'s
    second-to-last."""
    sa, sb = shape_of(a), shape_of(b)
    if not sa or not sb:
        return a * b
    k_b = sb[0] if len(sb) == 1 else sb[-2]
    if sa[-1] != k_b:
        raise ValueError(f"dot: shapes {sa} and {sb} not aligned: {sa[-1]} (dim "
                         f"{len(sa) - 1}) != {k_b} (dim {max(len(sb) - 2, 0)})")
    if len(sa) <= 2 and len(sb) <= 2 or len(sb) == 1 or len(sa) == 1:
        return matmul(a, b)
    return tensordot(a, b, axes=([-1], [-2]))


def inner(a, b):
    """numpy's ``inner``: sum over the last axes (a product with a scalar)."""
    sa, sb = shape_of(a), shape_of(b)
    if not sa or not sb:
        return a * b
    if sa[-1] != sb[-1]:
        raise ValueError(f"inner: last dimensions of a (shape {sa}) and b (shape {sb}) differ")
    return tensordot(a, b, axes=([-1], [-1]))


def outer(a, b):
    """numpy's ``outer`` of the flattened inputs."""
    return reshape(a, shape=(-1, 1)) * reshape(b, shape=(1, -1))


def vdot(a, b):
    """numpy's ``vdot``: the dot product of the flattened inputs, the first one conjugated
    when it is complex."""
    sa, sb = shape_of(a), shape_of(b)
    if int(np.prod(sa)) != int(np.prod(sb)):
        raise ValueError(f"vdot: a (shape {sa}) and b (shape {sb}) have different sizes")
    if dtype_of(a).kind == "c":
        a = conjugate(a)
    return matmul(reshape(a, shape=(-1,)), reshape(b, shape=(-1,)))


def kron(a, b):
    """numpy's ``kron``: block ``(i, j)`` of the result is ``a[i, j] * b`` (any ndim)."""
    sa, sb = tuple(shape_of(a)), tuple(shape_of(b))
    nd = max(len(sa), len(sb))
    if 2 * nd > len(_LETTERS):
        raise ValueError(f"kron: too many dimensions ({sa} and {sb})")
    sa, sb = (1,) * (nd - len(sa)) + sa, (1,) * (nd - len(sb)) + sb
    la, lb = _LETTERS[:nd], _LETTERS[nd:2 * nd]
    spec = f"{la},{lb}->" + "".join(x + y for x, y in zip(la, lb))
    prod = einsum_explicit(spec, reshape(a, shape=sa), reshape(b, shape=sb))
    return reshape(prod, shape=tuple(x * y for x, y in zip(sa, sb)))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """numpy's ``cross`` for 3-vectors along ``axisa``/``axisb`` (or ``axis``), the result's
    vector axis at ``axisc``; the other dimensions broadcast."""
    if axis is not None:
        axisa = axisb = axisc = axis
    sa, sb = shape_of(a), shape_of(b)
    if not sa or not sb:
        raise ValueError(f"cross: a (shape {sa}) and b (shape {sb}) must be at least 1-D")
    axisa = _norm_axis("cross", axisa, len(sa), "a")
    axisb = _norm_axis("cross", axisb, len(sb), "b")
    if sa[axisa] != 3 or sb[axisb] != 3:
        raise ValueError(f"cross: only 3-vectors are supported: a has shape {sa} (axisa="
                         f"{axisa}), b has shape {sb} (axisb={axisb})")

    def parts(x, ax):
        index = (slice(None),) * ax
        return [getitem(x, index=index + (i,)) for i in range(3)]

    a0, a1, a2 = parts(a, axisa)
    b0, b1, b2 = parts(b, axisb)
    comps = [a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0]
    nd = len(shape_of(comps[0])) + 1
    return stack(*comps, axis=_norm_axis("cross", axisc, nd, "the result"))
