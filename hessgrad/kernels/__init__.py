"""Numba inner loops (a leaf: imports numpy and numba only).

``scalar`` holds the per-element helpers generated kernels call (numpy's semantics for NaN,
overflow and ties); ``loader`` compiles a kernel's generated source once per process and
caches the machine code on disk.
"""
