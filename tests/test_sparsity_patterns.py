"""Sparsity detection (hessgrad.sparsity) and colorings (hessgrad.coloring).

Each row: a function, and whether the detected pattern must equal the nonzeros of the dense
Hessian at a random point ("exact") or only contain them ("superset", conservative rules).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.coloring import (column_coloring, column_recovery_index, is_star_coloring,
                               seed_matrix, star_coloring, star_recovery_index)
from hessgrad.sparsity import hessian_sparsity, jacobian_sparsity

_rng = np.random.default_rng(0)
A_BAND = np.diag(np.arange(1.0, 7.0)) + np.diag(np.ones(5), 1)          # upper bidiagonal
A_RECT = np.array([[1.0, 0, 0, 2, 0, 0], [0, 0, 3, 0, 0, 0], [0, 1, 0, 0, 0, 4]])
MASK = np.array([True, False, True, False, False, True])
C_ROW = np.array([[1.5, -2.0]])                      # shape (1, 2): broadcast along rows
C_32 = np.array([[0.5, 1.0], [2.0, -1.0], [1.5, 0.7]])

EXAMPLES = [
    # name, f on x of shape (6,), exact
    ("exp", lambda x: hnp.sum(hnp.exp(x)), True),
    ("power1_linear", lambda x: hnp.sum(x ** 1 + 3.0 * x), True),
    ("power0", lambda x: hnp.sum(x ** 0), True),
    ("power2", lambda x: hnp.sum(x ** 2), True),
    ("power_array", lambda x: hnp.sum(x ** np.array([1.0, 2.0, 1.0, 3.0, 0.0, 1.0])), True),
    ("power_variable_exponent", lambda x: hnp.sum(x[:3] ** x[3:]), True),
    ("product_neighbours", lambda x: hnp.sum(x[1:] * x[:-1]), True),
    ("product_self", lambda x: hnp.sum(x * x), True),
    ("divide", lambda x: hnp.sum(x[:-1] / x[1:]), True),
    ("divide_by_constant", lambda x: hnp.sum(x / 3.0) + hnp.sum(x[:2] ** 2), True),
    ("broadcast_row", lambda x: hnp.sum(hnp.reshape(x, (2, 3))[0:1, :] *
                                        hnp.reshape(x, (2, 3))), True),
    ("broadcast_scalar", lambda x: hnp.sum(x[0] * x[3:]), True),
    ("sum_block", lambda x: hnp.exp(hnp.sum(x[:3])) + hnp.sum(x[3:]), True),
    ("mean_rows", lambda x: hnp.sum(hnp.sin(hnp.mean(hnp.reshape(x, (3, 2)), axis=1))), True),
    ("max_piecewise_linear", lambda x: hnp.max(x) + hnp.sum(hnp.abs(x[:2]) * x[2:4]), False),
    ("logsumexp_rows", lambda x: hnp.sum(hg.reduce_logsumexp(hnp.reshape(x, (2, 3)),
                                                             axis=1)), True),
    ("getitem_fancy", lambda x: hnp.sum(hnp.exp(x[np.array([0, 0, 4])])), True),
    ("scatter", lambda x: hnp.sum(hnp.cos(hnp.zeros(6).at[np.array([1, 1, 5])].add(x[:3]))),
     True),
    ("reshape_transpose", lambda x: hnp.sum(hnp.transpose(hnp.reshape(x, (2, 3)))[0] *
                                            x[3:5]), True),
    ("concatenate_stack", lambda x: hnp.sum(hnp.concatenate([x[:2], hnp.ones(2)]) *
                                            hnp.stack([x[5], x[4], x[3], x[2]])), True),
    ("matmul_constant", lambda x: hnp.sum(hnp.matmul(A_RECT, x) ** 2), True),
    ("quadratic_form", lambda x: hnp.dot(x, hnp.matmul(A_BAND, x)), True),
    ("einsum", lambda x: hnp.einsum("i,ij,j->", x, A_BAND, x), True),
    # einsum broadcasts size-1 axes as numpy does (a constant or x, either position)
    ("einsum_broadcast_second", lambda x: hnp.sum(hnp.einsum("ij,ij->j", hnp.reshape(x, (3, 2)),
                                                             C_ROW) ** 3), True),
    ("einsum_broadcast_first", lambda x: hnp.sum(hnp.einsum("ij,ij->j", C_ROW,
                                                            hnp.reshape(x, (3, 2))) ** 3), True),
    ("einsum_broadcast_outer", lambda x: hnp.sum(hnp.einsum(
        "ij,ij->ij", hnp.reshape(x[:2], (2, 1)), hnp.reshape(x[2:5], (1, 3))) ** 2) + x[5] ** 3,
     True),
    ("einsum_ellipsis_broadcast", lambda x: hnp.sum(hnp.einsum(
        "...i,...i->...", hnp.reshape(x[:4], (2, 1, 2)), hnp.reshape(x[2:], (1, 2, 2))) ** 2),
     True),
    ("einsum_implicit_broadcast", lambda x: hnp.sum(hnp.einsum(
        "ij,jk", hnp.reshape(x, (2, 3)), hnp.reshape(x[4:], (1, 2))) ** 2), True),
    ("einsum_three_operands_broadcast", lambda x: hnp.sum(hnp.einsum(
        "ij,jk,ik->k", hnp.reshape(x[:2], (2, 1)), C_32, hnp.reshape(x[2:], (2, 2))) ** 2), True),
    ("matrix_matmul", lambda x: hnp.sum(hnp.matmul(hnp.reshape(x, (2, 3)),
                                                   hnp.reshape(x, (3, 2)))), True),
    ("where_constant", lambda x: hnp.sum(hnp.where(MASK, x, 0.0) * x[::-1]), True),
    # x ** 2 is computed for every element, then partly discarded: conservative
    ("where_discards", lambda x: hnp.sum(hnp.where(MASK, x ** 2, x)), False),
    ("where_data", lambda x: hnp.sum(hnp.where(x > 0, x ** 2, x)), False),
    ("cumsum", lambda x: hnp.sum(hnp.cumsum(x[:3]) ** 2), True),
    ("stop_gradient", lambda x: hnp.sum(hg.stop_gradient(x) * x), True),
    ("sign_floor_cut", lambda x: hnp.sum(hnp.sign(x) * x + hnp.floor(x) ** 2), True),
    ("linear_only", lambda x: hnp.sum(2.0 * x - hnp.concatenate([x[3:], x[:3]])), True),
    ("inv_no_rule", lambda x: hnp.sum(hnp.linalg.inv(hnp.reshape(x[:4], (2, 2)) +
                                                     3 * np.eye(2))), False),
    ("sort", lambda x: hnp.sum(hnp.sort(x) * np.arange(6.0)) + hnp.sum(x[:2] ** 3), False),
    # sorting moves elements within the sorted axis only: rows stay apart
    ("sort_rows", lambda x: hnp.sum(hnp.sort(hnp.reshape(x, (2, 3)), axis=1) ** 2
                                    * np.arange(3.0)), False),
    ("unstack_rows", lambda x: sum(r[0] * r[1] for r in hnp.unstack(hnp.reshape(x, (3, 2)))),
     True),
    ("convolve_constant", lambda x: hnp.sum(hnp.convolve(x, np.array([1.0, 0.0, 2.0])) ** 2),
     True),
    ("convolve_both", lambda x: hnp.sum(hnp.convolve(x[:3], x[3:]) ** 3), False),
    ("erf", lambda x: hnp.sum(hg.erf(x[:3]) * x[3:]), True),
    ("nanmean_rows", lambda x: hnp.sum(hnp.nanmean(hnp.reshape(x, (3, 2)), axis=0) ** 3), True),
    ("rot90", lambda x: hnp.sum(hnp.rot90(hnp.reshape(x, (2, 3)))[0] ** 2), True),
    ("ldexp_linear_in_x", lambda x: hnp.sum(hnp.ldexp(x, 2) ** 2), True),
    ("nextafter_steps_x", lambda x: hnp.sum(hnp.nextafter(x, 0.0) * x[::-1]), True),
    ("copysign_heaviside", lambda x: hnp.sum(hnp.copysign(x[:3], x[3:]) * x[3:])
     + hnp.sum(hnp.heaviside(x[:3], x[3:]) * x[:3]), False),
    # the modulus of a complex number is curved (abs of a real one is piecewise linear)
    ("abs_complex", lambda x: hnp.sum(hnp.abs(x[:3] + 1j * x[3:])), True),
    # Fourier transforms mix along their axes only: a batch of two stays block-diagonal
    ("rfft_rows", lambda x: hnp.sum(hnp.abs(hnp.fft.rfft(hnp.reshape(x, (2, 3)), axis=1)) ** 2
                                    * np.array([1.0, 2.5])), True),
    ("fft_columns_abs", lambda x: hnp.sum(hnp.abs(hnp.fft.fft(hnp.reshape(x, (3, 2)),
                                                                axis=0))), True),
    ("irfft_of_fft", lambda x: hnp.sum(hnp.tanh(hnp.fft.irfft(hnp.fft.fft(
        hnp.reshape(x, (2, 3)), axis=0), n=4))), True),
]


def _dense_hessian(f, x):
    # without detection: hg.hessian(f) itself relies on the pattern under test
    return hg.hessian(f, detect_sparsity=False)(x)


@pytest.mark.parametrize("name,f,exact", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_pattern_contains_the_hessian(name, f, exact):
    pattern = hessian_sparsity(f, np.zeros(6)).toarray()
    assert pattern.shape == (6, 6) and pattern.dtype == bool
    assert (pattern == pattern.T).all()
    for _ in range(2):
        x = _rng.uniform(0.5, 1.5, 6) * (_rng.choice([-1.0, 1.0], 6) if not exact else 1.0)
        dense = _dense_hessian(f, x)
        nonzero = np.abs(dense) > 0
        assert not (nonzero & ~pattern).any(), f"missed nonzeros {np.argwhere(nonzero & ~pattern)}"
        if exact:
            np.testing.assert_array_equal(pattern, nonzero)
        # both consumers of the pattern: the structured dense path and the compressed one
        np.testing.assert_allclose(hg.hessian(f)(x), dense, rtol=1e-12, atol=1e-12)
        sparse = hg.sparse_hessian(f, dense_threshold=1.0)(x).toarray()
        np.testing.assert_allclose(sparse, dense, rtol=1e-12, atol=1e-12)


def test_known_patterns():
    tri = hessian_sparsity(lambda x: hnp.sum(x[1:] * x[:-1]), np.zeros(4)).toarray()
    np.testing.assert_array_equal(tri, np.eye(4, k=1, dtype=bool) | np.eye(4, k=-1, dtype=bool))
    assert hessian_sparsity(lambda x: hnp.sum(x ** 1), np.zeros(5)).nnz == 0
    diag = hessian_sparsity(lambda x: hnp.sum(x ** 2), np.zeros(5)).toarray()
    np.testing.assert_array_equal(diag, np.eye(5, dtype=bool))


def test_sort_keeps_its_lines_apart():
    f = lambda x: hnp.sum(hnp.sort(hnp.reshape(x, (3, 2)), axis=0) ** 3)  # noqa: E731
    expected = np.kron(np.ones((3, 3)), np.eye(2)).astype(bool)   # columns are sorted apart
    np.testing.assert_array_equal(hessian_sparsity(f, np.zeros(6)).toarray(), expected)


def test_two_dimensional_inputs_and_extra_args():
    f = lambda x, w: hnp.sum(w * x[:, 0] * x[:, 1])         # noqa: E731 - a table row
    pattern = hessian_sparsity(f, np.zeros((3, 2)), args=(np.ones(3),)).toarray()
    expected = np.kron(np.eye(3), [[0, 1], [1, 0]]).astype(bool)
    np.testing.assert_array_equal(pattern, expected)


def test_jacobian_patterns():
    f = lambda x: hnp.concatenate([x[1:] ** 2 - x[:-1], hnp.sum(x[:2])[None]])  # noqa: E731
    pattern = jacobian_sparsity(f, np.zeros(4)).toarray()
    expected = np.array([[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1], [1, 1, 0, 0]], bool)
    np.testing.assert_array_equal(pattern, expected)
    np.testing.assert_array_equal(
        jacobian_sparsity(lambda x: hnp.matmul(A_RECT, x), np.zeros(6)).toarray(), A_RECT != 0)
    # out[i, j] = x[i] * x[2 + j]: both operands broadcast a size-1 axis
    outer = jacobian_sparsity(lambda x: hnp.einsum("ij,ij->ij", hnp.reshape(x[:2], (2, 1)),
                                                   hnp.reshape(x[2:5], (1, 3))), np.zeros(6))
    expected = np.zeros((2, 3, 6), bool)
    for i in range(2):
        expected[i, :, i] = True
        expected[i, np.arange(3), 2 + np.arange(3)] = True
    np.testing.assert_array_equal(outer.toarray(), expected.reshape(6, 6))


def test_errors_name_function_argument_and_shape():
    with pytest.raises(TypeError, match=r"hessian_sparsity: argument x .*int64.*\(3,\)"):
        hessian_sparsity(lambda x: hnp.sum(x), np.arange(3))
    with pytest.raises(ValueError, match=r"hessian_sparsity: f must return a scalar.*\(3,\)"):
        hessian_sparsity(lambda x: x ** 2, np.zeros(3))
    with pytest.raises(ValueError, match="star_coloring: the pattern must be square"):
        star_coloring(np.ones((2, 3)))
    with pytest.raises(ValueError, match="order must be one of"):
        star_coloring(np.eye(3), order="random")


# --- colorings -----------------------------------------------------------------------------
def test_star_coloring_of_tridiagonal_uses_three_colors():
    tri = sp.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(50, 50))
    colors = star_coloring(tri)
    assert colors.max() + 1 == 3
    assert is_star_coloring(tri, colors)


def test_star_coloring_of_a_grid_laplacian():
    m = 8
    t = sp.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(m, m))
    lap = sp.kron(t, sp.identity(m)) + sp.kron(sp.identity(m), t)
    colors = star_coloring(lap)
    assert is_star_coloring(lap, colors)
    assert colors.max() + 1 <= 8


@st.composite
def _symmetric_patterns(draw):
    n = draw(st.integers(1, 14))
    density = draw(st.floats(0.0, 0.5))
    seed = draw(st.integers(0, 2**31 - 1))
    a = np.random.default_rng(seed).random((n, n)) < density
    return a | a.T | np.eye(n, dtype=bool)


@settings(max_examples=60, deadline=None)
@given(_symmetric_patterns())
def test_star_coloring_recovers_every_entry(pattern):
    colors = star_coloring(pattern)
    assert is_star_coloring(pattern, colors)
    h = np.where(pattern, np.random.default_rng(1).standard_normal(pattern.shape), 0.0)
    h = h + h.T
    csr = sp.csr_matrix(pattern)
    compressed = (h @ seed_matrix(colors)).T               # ncolors x n
    values = compressed.reshape(-1)[star_recovery_index(csr, colors)]
    recovered = sp.csr_matrix((values, csr.indices, csr.indptr), shape=h.shape).toarray()
    np.testing.assert_array_equal(recovered, h)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.integers(1, 12), st.integers(0, 2**31 - 1))
def test_column_coloring_recovers_every_entry(m, n, seed):
    rng = np.random.default_rng(seed)
    pattern = rng.random((m, n)) < 0.3
    colors = column_coloring(pattern)
    a = np.where(pattern, rng.standard_normal((m, n)), 0.0)
    csr = sp.csr_matrix(pattern)
    values = (a @ seed_matrix(colors)).T.reshape(-1)[column_recovery_index(csr, colors)]
    recovered = sp.csr_matrix((values, csr.indices, csr.indptr), shape=(m, n)).toarray()
    np.testing.assert_array_equal(recovered, a)


def test_a_distance1_coloring_is_not_accepted_for_direct_recovery():
    path = sp.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(4, 4))
    with pytest.raises(ValueError, match="not a star coloring"):
        star_recovery_index(sp.csr_matrix(path), np.array([0, 1, 0, 1]))
    assert not is_star_coloring(path, np.array([0, 1, 0, 1]))


def _old_column_coloring(pattern, order):
    """The coloring of A^T A's graph as it was computed before (the gram formed)."""
    from hessgrad.coloring import _orders
    a = sp.csr_matrix(pattern, dtype=np.float64)
    gram = sp.csr_matrix(sp.csr_matrix(a.T @ a, dtype=bool), dtype=bool)
    gram.sort_indices()
    n = gram.shape[0]
    color = np.full(n, -1)
    (sequence,) = _orders(gram.indptr, n, order, "test")
    for v in sequence:                                   # the greedy, in Python
        taken = {color[w] for w in gram.indices[gram.indptr[v]:gram.indptr[v + 1]]
                 if w != v and color[w] >= 0}
        color[v] = min(set(range(n + 1)) - taken)
    return color


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.integers(1, 12), st.integers(0, 2**31 - 1))
def test_column_coloring_without_the_gram_gives_the_same_colors(m, n, seed):
    pattern = np.random.default_rng(seed).random((m, n)) < 0.3
    for order in ("natural", "largest_first"):
        np.testing.assert_array_equal(column_coloring(pattern, order=order),
                                      _old_column_coloring(pattern, order))


def test_colorings_with_a_dense_row_or_column():
    n = 400
    arrow = sp.lil_matrix((n, n))
    arrow.setdiag(1.0)
    arrow[n - 1, :] = 1.0                     # the last variable couples to every other
    arrow[:, n - 1] = 1.0
    arrow = sp.csr_matrix(arrow)
    # natural order colors the hub last and would need a color per vertex: it gives up
    # early and the largest-first coloring (hub first) is taken: two colors
    colors = star_coloring(arrow)
    assert colors.max() + 1 == 2 and is_star_coloring(arrow, colors)
    assert star_coloring(arrow, order="natural").max() + 1 == n
    band = sp.diags([1.0, 1.0], [0, 1], shape=(n - 1, n - 1))
    jac = sp.hstack([band, np.ones((n - 1, 1))]).tocsr()   # a dense column
    assert column_coloring(jac).max() + 1 == 3                # two band colors and its own
    assert column_coloring(jac.T).max() + 1 == n - 1          # a dense row: all distinct
