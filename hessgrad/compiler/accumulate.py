"""The accumulate pass: a sum (``add_n``) of gradients that ``scatter_add`` placed into slices
of zeros becomes one buffer that every term is added into in place (no zero-filled array
per term): ``add_n(scatter_add(g1, i1), scatter_add(g2, i2), h)`` -> ``accumulate``."""

import numpy as np

from ..engine.facts import Lowering
from ..engine.registry import ADD_N
from ..ops.core import scatter_add
from .indexing import is_basic
from .ir import Internal, known
from .rewrite import Rules, sweep


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


def _behind_batch(index):
    """A basic index of the core axes applied behind the batch axis."""
    return (slice(None),) + (index if isinstance(index, tuple) else (index,))


def _batched(prog, op, k):
    """The op with a leading batch axis of length ``k`` (unbatched terms broadcast)."""
    return [op.replace(params={**op.params, "shape": (k,) + tuple(op.params["shape"]),
                               "indices": tuple(None if i is None else _behind_batch(i)
                                                for i in op.params["indices"])})]


ACCUMULATE = Internal("accumulate", Lowering(fresh=True, array_0d=True), batch=_batched)


ACCUMULATIONS = Rules()


@ACCUMULATIONS.register(ADD_N.prim)
def scattered_terms(sweep, op):
    """An ``add_n`` of ``scatter_add``s of basic indices (each read only there) as an
    ``accumulate`` of their terms."""
    prog, out = sweep.prog, op.outs[0]
    if not known(prog.shape(out)):
        return None
    dtype = prog.dtype(out)
    terms, indices, nodes = [], [], list(op.nodes)
    for a in op.args:
        src = sweep.producer.get(a)
        if src is not None and src.prim is scatter_add.primitive and a not in sweep.fetched \
                and sweep.users.get(a) == [sweep.index] and op.args.count(a) == 1 and \
                is_basic(src.params["index"]) and prog.dtype(a) == dtype and \
                tuple(src.params["shape"]) == prog.shape(out):
            terms.append(src.args[0])
            index = src.params["index"]
            # None among the indices means "the whole buffer"; x[None] is x[(None,)]
            indices.append((None,) if index is None else index)
            nodes.extend(src.nodes)
        else:
            terms.append(a)
            indices.append(None)
    if all(i is None for i in indices):
        return None
    return [op.replace(prim=ACCUMULATE, fn=_accumulate, args=terms, nodes=nodes,
                       params={"shape": prog.shape(out), "dtype": dtype,
                               "indices": tuple(indices)})]


def accumulate(prog):
    """Rewrite every such ``add_n`` of ``prog``; returns how many."""
    return sweep(prog, (ACCUMULATIONS,))
