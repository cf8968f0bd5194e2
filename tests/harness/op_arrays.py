"""Shared sample arrays of the harness, each with the domain it respects (small, distinct
values: no ties, no kinks, at least 0.05 from every boundary the functions below have)."""

import numpy as np

rng = np.random.default_rng(40)
X = np.array([[0.61, -1.37, 0.83], [-0.44, 1.52, -0.29]])  # general reals, none near 0
Y = np.array([-0.77, 0.58, 1.21])                           # broadcasts against X
X3 = np.array([[[0.31, -0.92], [1.17, -0.26]], [[0.74, 0.12], [-1.08, 0.47]]])  # 2x2x2
V4 = np.array([0.52, -1.13, 0.27, 1.46])                     # a vector
S0 = np.array(0.37)                                         # 0-d
E = np.zeros((0, 3))                                        # size 0
E0 = np.zeros((0,))
ONE = np.array([0.58])                                      # size 1
COL = np.array([[0.42], [-0.63]])                           # a length-1 axis (2x1)
ROW = np.array([[0.42, -0.63, 1.14]])                       # a length-1 axis (1x3)
POS = rng.uniform(0.5, 2.5, (2, 3))                         # logarithms, roots
POS0 = np.array(1.31)
UNIT = rng.uniform(-0.9, 0.9, (2, 3))                       # arcsin, arccos, arctanh
BIG = rng.uniform(1.2, 3.0, (2, 3))                         # arccosh
FRAC = np.array([[0.37, -1.23, 2.19], [3.61, -0.52, 1.77]])  # away from integers and halves
DIVISOR = np.array([0.71, -1.33, 2.47])
A2 = np.array([[1.3, 0.4], [-0.2, 0.9]])                   # well-conditioned, det 1.25
A3 = np.array([[2.1, 0.3, -0.5], [0.4, 1.7, 0.2], [-0.3, 0.6, 1.9]])
SPD3 = A3 @ A3.T + np.eye(3)                                # symmetric positive definite
SPD2 = A2 @ A2.T + np.eye(2)
SYM3 = np.array([[1.0, 0.4, -0.3], [0.4, -0.7, 0.5], [-0.3, 0.5, 2.1]])  # distinct eigenvalues
STACK = np.stack([A2, A2.T + 0.5 * np.eye(2)])              # a stack of two 2x2 matrices
TALL = np.array([[1.2, -0.3], [0.5, 0.9], [-0.7, 0.4]])     # 3x2, full rank, distinct s.v.
INTS = np.array([[3, -1, 4], [1, -5, 9]])
NATS = np.array([12, 18, 7, 30])
BOOLS = np.array([[True, False, True], [False, False, True]])
CPLX = X + 0.3j * Y
