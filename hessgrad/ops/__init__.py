"""Primitives by family. Importing this package registers every op and Tensor's operators."""

from . import (core, decompositions, eig, elementwise, fft, integer, linalg,  # noqa: F401
               overloads, reduction, shape, signal, sorting, special)
from . import batching  # noqa: E402,F401 - after every family: it annotates their primitives

from ..engine.registry import PRIMITIVES  # noqa: E402

# Every primitive registered so far is hessgrad's own, and its rules work on numpy values too
# (they use only hessgrad ops and numpy-compatible methods); those registered later (user
# primitives, custom gradients) see Tensors.
for _prim in PRIMITIVES.values():
    _prim.array_rules = True
