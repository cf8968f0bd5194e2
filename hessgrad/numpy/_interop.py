"""Tensors behave like ndarrays: methods, numpy's dispatch protocols, Python builtins."""
