"""Products: dot, matmul, einsum, tensordot, inner, outer, kron, cross, vdot."""

from ..ops import linalg as _la

matmul, einsum = _la.matmul, _la.einsum

__all__ = ["matmul", "einsum"]
