"""Control flow with TensorFlow's semantics: ``while_loop``, ``cond`` and ``TensorArray``.

Eager mode runs them at once: ``while_loop`` is a Python loop calling ``body``, ``cond`` calls
the branch its concrete predicate picks, and an eager ``TensorArray`` is a list of tensors that
``stack()`` joins with the ``stack`` op. Tapes and accumulators see every op, so derivatives of
any order come for free.

Graph mode (``with hg.Graph().as_default()`` or a traced ``hg.function``): the trip count and
the predicate are unknown at trace time, so each loop body, loop condition and branch is traced
once into the same graph as a *block* (:mod:`.blocks`), and one ``while`` (:mod:`.loops`)
or ``cond`` (:mod:`.branches`) node runs the blocks' plans. A graph-mode TensorArray is one buffer
tensor written in place (:mod:`.buffers`, :mod:`.tensor_array`). Their rules (VJP, JVP,
batching) are declared with them; batched loops and branches mask the members that have
finished (:mod:`.members`); a loop of independent iterations runs as batches of rows
(:mod:`.rows`). ``scan``, ``foldl``, ``foldr`` and ``map_fn`` are built from them
(:mod:`.functional`).

Limits: gradient rules need static shapes, so tensors whose shape is only known at run time (a
``shape_invariants`` dimension set to None, ``stack()`` of a ``dynamic_size`` TensorArray) can
be computed but not differentiated in graph mode.
"""

from .branches import cond
from .buffers import (tensor_array_accumulate, tensor_array_buffer, tensor_array_clear,
                      tensor_array_pop, tensor_array_read, tensor_array_read_adjoint,
                      tensor_array_write)
from .functional import foldl, foldr, map_fn, scan
from .loops import while_loop
from .tensor_array import TensorArray

__all__ = ["while_loop", "cond", "TensorArray", "scan", "foldl", "foldr", "map_fn",
           "tensor_array_buffer", "tensor_array_write", "tensor_array_read",
           "tensor_array_read_adjoint", "tensor_array_clear", "tensor_array_pop",
           "tensor_array_accumulate"]
