"""Graph colorings that compress sparse derivative matrices into a few products.

* :func:`star_coloring` colors the adjacency graph of a symmetric pattern so that the matrix
  is recovered *directly* from ``B = H S`` (``S`` the 0/1 seed matrix with one column per
  color): a distance-1 coloring in which every path on four vertices uses at least three
  colors (greedy, after Gebremedhin, Manne and Pothen, SIAM Review 2005, Algorithm 4.1).
  Then every nonzero ``H[i, j]`` is alone with its color in row ``i`` or ``H[j, i]`` is alone
  with its color in row ``j`` (:func:`star_recovery_index`).
* :func:`column_coloring` colors columns so that no two columns of one color share a row (a
  distance-2 coloring of the bipartite graph): ``J[i, j] = (J S)[i, color[j]]``.

The inner loops are compiled with Numba when it is installed.
"""

import numpy as np
import scipy.sparse as sp


def _star_loop(indptr, indices, order, n, limit):
    color = np.full(n, -1, np.int64)
    forbidden = np.full(n + 1, -1, np.int64)
    members = np.zeros(n + 1, np.int64)  # vertices per color
    for v in order:
        for p in range(indptr[v], indptr[v + 1]):
            w = indices[p]
            if w != v and color[w] >= 0:
                forbidden[color[w]] = v
        for p in range(indptr[v], indptr[v + 1]):
            w = indices[p]
            if w == v:
                continue
            cw = color[w]
            if cw < 0:
                # w is colored later: v must differ from every colored neighbor of w, or
                # the middle of a two-colored path could be w.
                for q in range(indptr[w], indptr[w + 1]):
                    x = indices[q]
                    if x != v and x != w and color[x] >= 0:
                        forbidden[color[x]] = v
            elif members[cw] > 1:
                # v - w - x - y would use two colors if v took x's color while x already
                # has a neighbor y != w colored like w (none when w is alone in its color:
                # a dense row's vertex costs nothing here).
                for q in range(indptr[w], indptr[w + 1]):
                    x = indices[q]
                    if x == v or x == w:
                        continue
                    cx = color[x]
                    if cx < 0 or forbidden[cx] == v:
                        continue
                    for r in range(indptr[x], indptr[x + 1]):
                        y = indices[r]
                        if y != w and y != x and color[y] == cw:
                            forbidden[cx] = v
                            break
        c = 0
        while forbidden[c] == v:
            c += 1
        if c > limit:        # more colors than an earlier order needed: give up
            return color, False
        color[v] = c
        members[c] += 1
    return color, True


def _distance2_loop(row_ptr, row_idx, col_ptr, col_idx, order, n, limit):
    """Greedy distance-2 coloring of the columns of ``A`` (CSR ``row_*``, CSC ``col_*``):
    column ``v`` avoids the colors of every column sharing a row with it. The work is the
    sum over rows of their squared lengths, with no column-by-column product formed."""
    color = np.full(n, -1, np.int64)
    forbidden = np.full(n + 1, -1, np.int64)
    for v in order:
        for p in range(col_ptr[v], col_ptr[v + 1]):
            r = col_idx[p]
            for q in range(row_ptr[r], row_ptr[r + 1]):
                w = row_idx[q]
                if w != v and color[w] >= 0:
                    forbidden[color[w]] = v
        c = 0
        while forbidden[c] == v:
            c += 1
        if c > limit:        # more colors than an earlier order needed: give up
            return color, False
        color[v] = c
    return color, True


def _distance2_degree_loop(row_ptr, row_idx, col_ptr, col_idx, n):
    """Per column: the number of columns sharing a row with it, itself included (the degree
    in the graph of ``A^T A``, whose diagonal holds the nonempty columns)."""
    degree = np.zeros(n, np.int64)
    mark = np.full(n, -1, np.int64)
    for v in range(n):
        d = 0
        for p in range(col_ptr[v], col_ptr[v + 1]):
            r = col_idx[p]
            for q in range(row_ptr[r], row_ptr[r + 1]):
                w = row_idx[q]
                if mark[w] != v:
                    mark[w] = v
                    d += 1
        degree[v] = d
    return degree


try:
    import numba as _numba

    _star_kernel = _numba.njit(cache=True, nogil=True)(_star_loop)
    _distance2_kernel = _numba.njit(cache=True, nogil=True)(_distance2_loop)
    _distance2_degree_kernel = _numba.njit(cache=True, nogil=True)(_distance2_degree_loop)
except ImportError:  # pragma: no cover - numba is optional
    _star_kernel = _star_loop
    _distance2_kernel, _distance2_degree_kernel = _distance2_loop, _distance2_degree_loop

ORDERS = ("natural", "largest_first", "best")


def _adjacency(pattern, what):
    pattern = sp.csr_matrix(pattern)
    if pattern.shape[0] != pattern.shape[1]:
        raise ValueError(f"{what}: the pattern must be square, got shape {pattern.shape}")
    pattern = sp.csr_matrix(pattern + pattern.T, dtype=bool)  # symmetric, as a graph
    pattern.sort_indices()
    return (pattern.indptr.astype(np.int64), pattern.indices.astype(np.int64),
            pattern.shape[0])


def _orders(indptr, n, order, what, degree=None):
    if order not in ORDERS:
        raise ValueError(f"{what}: order must be one of {ORDERS}, got {order!r}")
    natural = np.arange(n, dtype=np.int64)
    if order == "natural":
        return [natural]
    degree = np.diff(indptr) if degree is None else degree()
    largest = np.argsort(-degree, kind="stable").astype(np.int64)
    return {"largest_first": [largest], "best": [natural, largest]}[order]


def _best(kernel, arrays, n, orders):
    """The coloring with the fewest colors over ``orders`` (the first on ties). The last
    order runs first; the others give up as soon as they need more colors than it did
    (an order that colors a dense vertex last would need about one color per vertex)."""
    if not n:
        return np.zeros(0, np.int64)
    best, finished = kernel(*arrays, orders[-1], n, n)
    for o in orders[:-1]:
        colors, finished = kernel(*arrays, o, n, best.max())
        if finished:
            best = colors
    return best


def star_coloring(pattern, order="best"):
    """A star coloring of the symmetric ``pattern`` (diagonal ignored).

    Args:
        pattern: square sparse or dense matrix; its nonzeros (made symmetric) are the edges.
        order: "natural", "largest_first" (by degree) or "best" (both, fewer colors wins).
    Returns:
        An int64 array: the color (0, 1, ...) of every row/column.
    Raises:
        ValueError: the pattern is not square, or ``order`` is unknown.

    >>> import scipy.sparse as sp
    >>> from hessgrad.coloring import star_coloring
    >>> tridiagonal = sp.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(6, 6))
    >>> star_coloring(tridiagonal, order="natural")
    array([0, 1, 0, 2, 0, 1])
    """
    indptr, indices, n = _adjacency(pattern, "star_coloring")
    return _best(_star_kernel, (indptr, indices), n,
                 _orders(indptr, n, order, "star_coloring"))


def column_coloring(pattern, order="best"):
    """Colors of the columns of ``pattern`` such that no two columns of one color have a
    nonzero in the same row (so ``A = (A S)[:, color]`` entry by entry): a greedy
    distance-2 coloring on the rows and columns directly (``A^T A`` is never formed, so a
    dense row costs its length squared in time, not in memory).

    Args:
        pattern: sparse or dense matrix; its nonzeros are the entries.
        order: "natural", "largest_first" (by the number of columns sharing a row) or
            "best" (both, fewer colors wins).
    Returns:
        An int64 array: the color (0, 1, ...) of every column.
    Raises:
        ValueError: ``order`` is unknown.

    >>> import numpy as np
    >>> from hessgrad.coloring import column_coloring
    >>> column_coloring(np.array([[1, 1, 0, 0], [0, 0, 1, 1]]))
    array([0, 1, 0, 1])
    """
    a = sp.csr_matrix(pattern, dtype=bool)
    a.sum_duplicates()
    a.sort_indices()
    at = sp.csr_matrix(a.T)           # CSC of a, as CSR of its transpose
    at.sort_indices()
    arrays = (a.indptr.astype(np.int64), a.indices.astype(np.int64),
              at.indptr.astype(np.int64), at.indices.astype(np.int64))
    n = a.shape[1]

    def degree():
        return _distance2_degree_kernel(*arrays, n) if n else np.zeros(0, np.int64)
    return _best(_distance2_kernel, arrays, n,
                 _orders(None, n, order, "column_coloring", degree))


def seed_matrix(colors, dtype=np.float64):
    """The ``n x ncolors`` 0/1 matrix whose column ``c`` marks the indices of color ``c``."""
    colors = np.asarray(colors)
    k = int(colors.max()) + 1 if colors.size else 0
    seed = np.zeros((colors.size, k), dtype)
    seed[np.arange(colors.size), colors] = 1
    return seed


def is_star_coloring(pattern, colors):
    """Whether ``colors`` is a star coloring of ``pattern``: distance-1 proper and no path on
    four vertices colored with only two colors (a brute-force check, for tests)."""
    indptr, indices, n = _adjacency(pattern, "is_star_coloring")
    colors = np.asarray(colors)
    nbrs = [set(indices[indptr[v]:indptr[v + 1]]) - {v} for v in range(n)]
    for v in range(n):
        if any(colors[w] == colors[v] for w in nbrs[v]):
            return False
    for b in range(n):
        for c in nbrs[b]:
            for a in nbrs[b] - {c}:
                if colors[a] != colors[c]:
                    continue
                for d in nbrs[c] - {b, a}:
                    if colors[d] == colors[b]:
                        return False
    return True


def star_recovery_index(pattern, colors):
    """For each stored entry ``(i, j)`` of the CSR ``pattern`` (in order), the flat index into
    the compressed product ``B`` (laid out as ``ncolors x n``: ``B[c, r]`` at ``c * n + r``)
    that holds ``H[i, j]``.

    Raises:
        ValueError: the coloring does not allow direct recovery (not a star coloring).
    """
    pattern = sp.csr_matrix(pattern)
    n = pattern.shape[0]
    colors = np.asarray(colors, dtype=np.int64)
    k = int(colors.max()) + 1 if n else 0
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(pattern.indptr))
    cols = pattern.indices.astype(np.int64)
    full = sp.csr_matrix(pattern + pattern.T, dtype=bool)   # counts need both triangles
    full_rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(full.indptr))
    keys, counts = np.unique(full_rows * k + colors[full.indices], return_counts=True)

    def count(key):
        pos = np.searchsorted(keys, key)
        pos = np.minimum(pos, len(keys) - 1)
        return np.where(keys[pos] == key, counts[pos], 0)

    own = rows * k + colors[cols]
    other = cols * k + colors[rows]
    use_own = count(own) == 1
    if not np.all(use_own | (count(other) == 1)):
        raise ValueError("star_recovery_index: the coloring is not a star coloring of the "
                         "pattern; some entries cannot be recovered directly")
    return np.where(use_own, colors[cols] * n + rows, colors[rows] * n + cols)


def column_recovery_index(pattern, colors):
    """Flat indices into ``B`` (``ncolors x m``, ``B[c, i] = (A S)[i, c]``) of each stored
    entry ``(i, j)`` of the CSR ``pattern`` for a column coloring."""
    pattern = sp.csr_matrix(pattern)
    m = pattern.shape[0]
    rows = np.repeat(np.arange(m, dtype=np.int64), np.diff(pattern.indptr))
    return np.asarray(colors, dtype=np.int64)[pattern.indices] * m + rows
