"""Samples of products and linear algebra: matmul-like products with broadcasting, stacks,
vectors and size-0 contractions; decompositions on their domains (SPD for cholesky,
symmetric with distinct eigenvalues for eigh, full rank with distinct singular values for svd)
and every ``ord`` of the norms."""

import numpy as np

from op_arrays import A2, A3, COL, E, E0, ROW, S0, SPD2, SPD3, STACK, SYM3, TALL, V4, X, X3, Y
from op_sample import sample

L = "linalg."
SAMPLES = [
    sample("matmul", X, Y), sample("matmul", Y, X.T), sample("matmul", X3, A2),
    sample("matmul", X, X.T), sample("matmul", E.T, E), sample("matmul", STACK, STACK),
    sample("matmul", COL, ROW), sample("hg.matmul", X, X.T), sample(L + "matmul", A2, X[:, :2]),
    sample("dot", X, Y), sample("dot", Y, Y), sample("dot", S0, X), sample("dot", X3, A2),
    sample("vdot", X, X * 2), sample("inner", X, Y), sample("inner", Y, Y),
    sample("outer", Y, V4), sample(L + "outer", Y, Y), sample("matvec", X, Y),
    sample("vecmat", Y[:2], X), sample("vecdot", X, Y), sample(L + "vecdot", X, X, axis=0),
    sample("tensordot", X3, A2, axes=1), sample("tensordot", X, X, axes=([0, 1], [0, 1])),
    sample("tensordot", X3, X3, axes=([0, 2], [2, 0])), sample(L + "tensordot", X, Y, axes=1),
    sample("kron", A2, X), sample("kron", Y, Y), sample("cross", Y, V4[:3]),
    sample("cross", X, X[::-1]), sample("cross", X.T, Y, axisa=0),
    sample(L + "cross", X, X * 1.5 - 0.2),
    sample("einsum", "ij,j->i", X, Y), sample("einsum", "ij,ij->", X, X),
    sample("einsum", "ii", A3), sample("einsum", "bij,jk->bik", X3, A2),
    sample("einsum", "i,j->ij", Y, V4), sample("einsum", "...j,j", X, Y),
    sample("einsum", "ij->ji", X), sample("hg.einsum", "ij,kj->ik", X, X),
    sample(L + "multi_dot", [X, X.T, A2], label="[2x3,3x2,2x2]"),
    sample(L + "multi_dot", [Y, X.T], label="[3,3x2]"),
    sample(L + "inv", A3), sample(L + "inv", STACK), sample(L + "inv", np.array([[1.7]])),
    sample(L + "solve", A3, Y), sample(L + "solve", A3, X.T), sample(L + "solve", STACK, STACK),
    sample(L + "det", A3), sample(L + "det", STACK), sample(L + "det", np.array([[0.8]])),
    sample(L + "slogdet", A3), sample(L + "slogdet", STACK),
    sample(L + "cholesky", SPD3), sample(L + "cholesky", np.stack([SPD2, SPD2 * 2])),
    sample(L + "cholesky", SPD3, upper=True),
    sample(L + "eigh", SYM3), sample(L + "eigvalsh", SYM3), sample(L + "eigvalsh", SPD3,
                                                                   UPLO="U"),
    sample(L + "eig", A3, derivatives=False, numpy=False), sample(L + "eigvals", A3, numpy=False),
    sample(L + "qr", TALL), sample(L + "qr", A3), sample(L + "qr", A3, mode="complete"),
    sample(L + "qr", TALL, mode="complete", derivatives=False),
    sample(L + "qr", TALL, mode="r"),
    sample(L + "svd", TALL, full_matrices=False), sample(L + "svd", TALL, compute_uv=False),
    sample(L + "svdvals", A3), sample(L + "pinv", TALL), sample(L + "pinv", A2),
    sample(L + "lstsq", TALL, Y, rcond=None), sample(L + "matrix_rank", TALL),
    sample(L + "matrix_power", A3, 3), sample(L + "matrix_power", A2, 0),
    sample(L + "matrix_power", A2, -2), sample(L + "tensorinv", A3.reshape(3, 3), ind=1),
    sample(L + "tensorsolve", A3, Y), sample(L + "cond", A3), sample(L + "cond", A3, "fro"),
    sample(L + "cond", A2, 1), sample(L + "cond", A2, -np.inf),
    sample(L + "norm", X), sample(L + "norm", Y), sample(L + "norm", X, "fro"),
    sample(L + "norm", X, "nuc"), sample(L + "norm", X, 1), sample(L + "norm", X, -1),
    sample(L + "norm", X, np.inf), sample(L + "norm", X, 2), sample(L + "norm", A2, -2),
    sample(L + "norm", Y, 1), sample(L + "norm", Y, 3), sample(L + "norm", Y, np.inf),
    sample(L + "norm", Y, -np.inf), sample(L + "norm", Y, 0.5),
    sample(L + "norm", X, axis=1), sample(L + "norm", X, axis=-1, keepdims=True),
    sample(L + "norm", X3, axis=(0, 2)), sample(L + "norm", S0), sample(L + "norm", E),
    sample(L + "vector_norm", X), sample(L + "vector_norm", X, ord=3, axis=0),
    sample(L + "vector_norm", X3, axis=(0, 1), keepdims=True), sample(L + "vector_norm", S0),
    sample(L + "matrix_norm", X3), sample(L + "matrix_norm", X, ord="nuc"),
    sample(L + "matrix_norm", X, ord=np.inf, keepdims=True),
]

# size-0 operands
Z00 = np.zeros((0, 0))
SAMPLES += [sample("matmul", np.zeros((2, 0)), np.zeros((0, 3))), sample(L + "solve", Z00, E0),
            sample(L + "det", Z00), sample(L + "inv", np.zeros((2, 0, 0))),
            sample(L + "cholesky", Z00), sample(L + "eigh", Z00), sample("outer", E0, Y),
            sample("einsum", "ij,jk,kl->il", X, X.T, A2, optimize=True),
            sample("tensordot", X, Y, 0), sample(L + "norm", X3, ord=2, axis=(1, 2)),
            sample(L + "norm", X3, "nuc", (0, 2))]
