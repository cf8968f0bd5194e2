"""Primitives by family. Importing this package registers every op and Tensor's operators."""

from . import (core, decompositions, elementwise, linalg, overloads, reduction, shape,  # noqa: F401
               signal, sorting)
from . import batching  # noqa: E402,F401 - after every family: it annotates their primitives
