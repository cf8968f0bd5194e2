"""Primitives by family. Importing this package registers every op and Tensor's operators."""

from . import (control_flow, core, decompositions, eig, elementwise, fft,  # noqa: F401
               integer, linalg, matrix_functions, overloads, reduction, shape, signal,
               sorting, special)
