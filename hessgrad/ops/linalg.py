"""Products: matmul (numpy semantics, 1-D and batched) and einsum (opt_einsum paths, cached)."""

import functools

import numpy as np
import opt_einsum

from ..engine.registry import PerInput, primitive
from ..engine.tensor import shape_of
from .core import sum_to, unbroadcast
from .shape import expand_dims, getitem, swapaxes


def _check_matmul(a, b):
    sa, sb = np.shape(a), np.shape(b)
    if not sa or not sb:
        raise ValueError(f"matmul: operands must be at least 1-D, got shapes {sa} and {sb}")
    ka = sa[-1]
    kb = sb[0] if len(sb) == 1 else sb[-2]
    if ka != kb:
        raise ValueError(f"matmul: contraction dimensions differ: a has shape {sa}, "
                         f"b has shape {sb} ({ka} != {kb})")
    return np.matmul(a, b)


def _matmul_vjp_a(g, ans, a, b):
    sa, sb = shape_of(a), shape_of(b)
    if len(sb) == 1:                       # (..., k) @ (k,) -> (...)
        return unbroadcast(expand_dims(g, -1) * b, a)
    if len(sa) == 1:                       # (k,) @ (..., k, m) -> (..., m)
        return sum_to(getitem(matmul(b, expand_dims(g, -1)), index=(Ellipsis, 0)), shape=sa)
    return unbroadcast(matmul(g, swapaxes(b, -1, -2)), a)


def _matmul_vjp_b(g, ans, a, b):
    sa, sb = shape_of(a), shape_of(b)
    if len(sa) == 1 and len(sb) == 1:      # inner product
        return g * a
    if len(sa) == 1:                       # (k,) @ (..., k, m): outer product of a and g
        return unbroadcast(expand_dims(a, -1) * expand_dims(g, -2), b)
    if len(sb) == 1:                       # (..., n, k) @ (k,) -> (..., n)
        return sum_to(getitem(matmul(swapaxes(a, -1, -2), expand_dims(g, -1)),
                              index=(Ellipsis, 0)), shape=sb)
    return unbroadcast(matmul(swapaxes(a, -1, -2), g), b)


matmul = primitive("matmul", _check_matmul, vjp=[_matmul_vjp_a, _matmul_vjp_b],
                   jvp=[lambda t, ans, a, b: matmul(t, b), lambda t, ans, a, b: matmul(a, t)])


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
        return _embed(grad, kept, target, shape_of(operands[k]))
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


_einsum = primitive("einsum", _einsum_forward, vjp=PerInput(_einsum_operand_vjp),
                    jvp=PerInput(_einsum_jvp))


def einsum(subscripts, *operands):
    """numpy's ``einsum`` (explicit or implicit form, ellipses), contracted by opt_einsum
    with a cached path; differentiable in every operand."""
    inputs, out = parse_subscripts(subscripts, [shape_of(o) for o in operands])
    return _einsum(*operands, spec=",".join(inputs) + "->" + out)
