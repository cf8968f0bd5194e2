"""Compiled inner loops (a leaf: imports numpy, scipy, numba and llvmlite only).

``scalar`` holds the per-element helpers generated kernels call (numpy's semantics for NaN,
overflow and ties); ``loader`` compiles a kernel's generated source with Numba once per
process and caches the machine code on disk; ``llvm`` JIT-compiles LLVM IR text with
llvmlite for :mod:`hessgrad.compiler.native` and ``vecmath``, its machine code cached on disk
too; ``vecmath`` holds vectorised float64 ``tanh``, ``sigmoid`` and ``logaddexp``;
``products`` computes two matrix-vector products with one matrix in one pass over it.
"""
