"""Matrix functions and decompositions: inv, solve, solve_triangular, det, slogdet, pinv,
cholesky, eigh, eigvalsh, qr, svd, svdvals, matrix_rank.

Every op works on stacks of matrices (``(..., m, n)``). Rules are written with hessgrad ops
(the derivative of a solve is another solve, the derivative of a factorisation uses the
factors), so second and higher derivatives come for free.

Ops that read part of their input (``cholesky``, ``eigh``, ``eigvalsh``: the lower triangle,
as LAPACK does for numpy; ``solve_triangular``: the triangle it is told) are differentiated as
the functions they compute: ``eigh(a)`` is ``eigh(H(a))`` with ``H(a) = tril(a, -1) +
tril(a, -1)^H + Re(diag(a))`` (LAPACK ignores the upper triangle and the imaginary parts of the
diagonal), so a tangent ``t`` enters as ``H(t)`` and a gradient is ``H^T(g) = tril(g + g^H, -1)
+ Re(diag(g))``: lower triangular, not symmetric. For a symmetric matrix parametrised by all
its entries, differentiate ``f((A + A^H) / 2)`` to get the symmetric gradient.

Complex input follows JAX: a JVP is R-linear, a VJP is its transpose under the pairing
``Re(sum(g * t))`` (no conjugation), so the gradient of a real loss is ``dL/dx - i dL/dy``.

Degenerate spectra: the derivatives of eigenvectors (``eigh``) and of singular vectors
(``svd``) divide by eigenvalue / squared-singular-value gaps and are infinite or NaN when
two of them coincide (the vectors are not differentiable there). Eigenvalues (``eigvalsh``)
and singular values (``svdvals``) have their own ops whose first derivative stays finite;
their second derivatives go through the vectors' and are NaN there too, as in JAX. Complex
eigen- and singular vectors also have a free phase: only phase-invariant functions of them
(``|V|^2``, ``V V^H``, ``U Vh``) have derivatives, as in JAX.
"""

import numpy as np

from ..engine.dispatch import bind
from ..engine.tensor import dtype_of, shape_of
from .batching import aligned, static_shape
from .core import getitem, reshape, unbroadcast
from .elementwise import conjugate, divide, less, real, where
from .families import stacked
from .linalg import matmul
from .reduction import sum as reduce_sum
from .shape import expand_dims, swapaxes, transpose

LinAlgError = np.linalg.LinAlgError


# --- shapes, checks and small helpers ------------------------------------------------------
def _check_matrix(name, arg, shape, square=True):
    if len(shape) < 2:
        raise ValueError(f"{name}: {arg} has shape {tuple(shape)} but must be at least 2-D "
                         "(a matrix or a stack of matrices)")
    if square and shape[-1] != shape[-2]:
        raise ValueError(f"{name}: {arg} has shape {tuple(shape)} but must be square "
                         "(its last two dimensions must be equal)")


def _float_dtype(x):
    dt = np.dtype(dtype_of(x))
    return dt if dt.kind in "fc" else np.dtype(np.float64)


def _batch(name, a_shape, b_shape):
    try:
        return np.broadcast_shapes(tuple(a_shape[:-2]), tuple(b_shape[:-2]))
    except ValueError:
        raise ValueError(f"{name}: the stacked dimensions of a (shape {tuple(a_shape)}) and b "
                         f"(shape {tuple(b_shape)}) do not broadcast") from None


def _check_solve(name, a_shape, b_shape):
    _check_matrix(name, "a", a_shape)
    if len(b_shape) < 2 or b_shape[-2] != a_shape[-1]:
        raise ValueError(f"{name}: a has shape {tuple(a_shape)} and b has shape "
                         f"{tuple(b_shape)}; b must be (..., {a_shape[-1]}, k)")
    return _batch(name, a_shape, b_shape) + tuple(b_shape[-2:])


def _guard(name, what):
    """Run a LAPACK call, re-raising its failure with the op's name."""
    def run(fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except LinAlgError as exc:
            raise LinAlgError(f"{name}: {what} ({exc})") from None
    return run


def _T(x):
    return swapaxes(x, -1, -2)


def _conj(x):
    """``conj(x)``; no op for a real ``x`` (so real rules build no extra nodes)."""
    return conjugate(x) if dtype_of(x).kind == "c" else x


def _H(x):
    """The conjugate transpose of a stack of matrices."""
    return _conj(_T(x))


def _real_part(x):
    return real(x) if dtype_of(x).kind == "c" else x


def _from_lower(x):
    """The Hermitian (real: symmetric) matrix LAPACK reads from the lower triangle of ``x``:
    ``tril(x, -1) + tril(x, -1)^H + Re(diag(x))``. It is R-linear, so it is also how a tangent
    of ``x`` enters an op that reads the lower triangle."""
    low = x * _tri_mask(shape_of(x)[-1], x, -1)
    return low + _H(low) + _diag_embed(_real_part(_diag_part(x)))


def _from_lower_transpose(g):
    """The transpose of :func:`_from_lower` under the pairing ``Re(sum(g * t))``:
    ``tril(g + g^H, -1) + Re(diag(g))``, a lower triangular gradient."""
    low = (g + _H(g)) * _tri_mask(shape_of(g)[-1], g, -1)
    return low + _diag_embed(_real_part(_diag_part(g)))


def _real_diagonal(x):
    """``x`` less the imaginary part of its diagonal (``x`` itself when real)."""
    if dtype_of(x).kind != "c":
        return x
    d = _diag_part(x)
    return x - _diag_embed(d - real(d))


def _real_dtype(dt):
    """float64 for complex128 (the dtype of eigenvalues, singular values, log|det|)."""
    return np.empty(0, dtype=dt).real.dtype


def _eye(n, like):
    return np.eye(n, dtype=_float_dtype(like))


def _tri_mask(n, like, k=0, lower=True):
    m = np.tril(np.ones((n, n)), k) if lower else np.triu(np.ones((n, n)), -k)
    return m.astype(_float_dtype(like))


def _diag_part(x):
    """The diagonal of a stack of square matrices, ``(..., n, n) -> (..., n)``."""
    n = shape_of(x)[-1]
    return reduce_sum(x * _eye(n, x), axis=-1)


def _diag_embed(v):
    """``(..., n) -> (..., n, n)`` with ``v`` on the diagonal."""
    n = shape_of(v)[-1]
    return expand_dims(v, -1) * _eye(n, v)


def _row(v):     # (..., n) -> (..., 1, n): scales the columns of a matrix
    return expand_dims(v, -2)


def _col(v):     # (..., n) -> (..., n, 1): scales the rows of a matrix
    return expand_dims(v, -1)


def _gap_inverse(w):
    """``F[..., i, j] = 1 / (w_j - w_i)`` off the diagonal, 0 on it."""
    n = shape_of(w)[-1]
    off = ~np.eye(n, dtype=bool)
    diff = _row(w) - _col(w)
    return where(off, divide(1.0, where(off, diff, 1.0)), 0.0)


def _add(*terms):
    terms = [t for t in terms if t is not None]
    out = terms[0]
    for t in terms[1:]:
        out = out + t
    return out


def hermitian_from_lower(a):
    """The Hermitian (real: symmetric) matrix that LAPACK's symmetric routines (numpy's
    ``eigh``, ``eigvalsh``, ``cholesky``, ``pinv``/``svd``/``matrix_rank`` with
    ``hermitian=True``) read from ``a``: ``tril(a, -1) + tril(a, -1)^H + Re(diag(a))``.
    Linear, made of hessgrad ops: composing with it gives their derivatives for any ``a``.

    >>> import numpy as np
    >>> hermitian_from_lower(np.array([[1.0, 5.0], [2.0, 3.0]])).numpy()
    array([[1., 2.],
           [2., 3.]])
    """
    _check_matrix("hermitian_from_lower", "a", shape_of(a))
    return _from_lower(a)


# --- inverse and linear solves -------------------------------------------------------------
def _inv_forward(a):
    _check_matrix("inv", "a", np.shape(a))
    return _guard("inv", f"a of shape {np.shape(a)} is singular")(np.linalg.inv, a)


def _same_shape(name, arg="a", square=True):
    def rule(a, **params):
        _check_matrix(name, arg, shape_of(a), square)
        return tuple(shape_of(a)), _float_dtype(a)
    return rule


inv = stacked(
    "inv", _inv_forward,
    vjp=[lambda g, ans, a: -matmul(_T(ans), matmul(g, _T(ans)))],
    jvp=[lambda t, ans, a: -matmul(ans, matmul(t, ans))],
    shape_rule=_same_shape("inv"))


def _solve_batch(prim, args, flags, params, k):
    """One matrix and a batch of right-hand sides: more columns of one solve (one
    factorization, not one per member); else a stack of solves."""
    a, b = args
    if flags[1] and not flags[0] and len(static_shape(a)) == 2 and len(static_shape(b)) == 3:
        _, n, m = static_shape(b)
        columns = reshape(transpose(b, axes=(1, 0, 2)), shape=(n, k * m))
        x = bind(prim, (a, columns), params)
        return transpose(reshape(x, shape=(n, k, m)), axes=(1, 0, 2))
    return aligned(prim, args, flags, params, k)


def _solve_forward(a, b):
    _check_solve("solve", np.shape(a), np.shape(b))
    return _guard("solve", f"a of shape {np.shape(a)} is singular")(np.linalg.solve, a, b)


def _solve_vjp(g, ans, a, b):
    gb = solve(_T(a), g)
    return [unbroadcast(-matmul(gb, _T(ans)), a), unbroadcast(gb, b)]


solve = stacked(
    "solve", _solve_forward, vjp=_solve_vjp, batch=_solve_batch,
    jvp=[lambda t, ans, a, b: -solve(a, matmul(t, ans)), lambda t, ans, a, b: solve(a, t)],
    shape_rule=lambda a, b: (_check_solve("solve", shape_of(a), shape_of(b)),
                             np.result_type(_float_dtype(a), _float_dtype(b))))
solve.__doc__ = """``x`` with ``a @ x = b`` for square ``a`` (..., n, n) and ``b`` (..., n, k),
stacked dimensions broadcast. Derivatives: ``db -> solve(a, db)``,
``da -> -solve(a, da @ x)``; the gradient of ``b`` is ``solve(a.T, g)``."""


def _solve_triangular_forward(a, b, lower=True):
    _check_solve("solve_triangular", np.shape(a), np.shape(b))
    tri = np.tril(a) if lower else np.triu(a)
    return _guard("solve_triangular", f"a of shape {np.shape(a)} is singular")(
        np.linalg.solve, tri, b)


def _solve_triangular_vjp(g, ans, a, b, lower=True):
    gb = solve_triangular(_T(a), g, lower=not lower)
    mask = _tri_mask(shape_of(a)[-1], a, lower=lower)
    return [unbroadcast(-matmul(gb, _T(ans)) * mask, a), unbroadcast(gb, b)]


def _solve_triangular_jvp_a(t, ans, a, b, lower=True):
    mask = _tri_mask(shape_of(a)[-1], a, lower=lower)
    return -solve_triangular(a, matmul(t * mask, ans), lower=lower)


solve_triangular = stacked(
    "solve_triangular", _solve_triangular_forward, vjp=_solve_triangular_vjp,
    batch=_solve_batch,
    jvp=[_solve_triangular_jvp_a,
         lambda t, ans, a, b, lower=True: solve_triangular(a, t, lower=lower)],
    shape_rule=lambda a, b, lower=True: (
        _check_solve("solve_triangular", shape_of(a), shape_of(b)),
        np.result_type(_float_dtype(a), _float_dtype(b))))
solve_triangular.__doc__ = """``x`` with ``tri(a) @ x = b`` where ``tri`` keeps the lower
(``lower=True``) or upper triangle of ``a``; the other triangle is ignored (and gets a zero
gradient)."""


# --- determinants ---------------------------------------------------------------------------
def _det_forward(a):
    _check_matrix("det", "a", np.shape(a))
    return np.linalg.det(a)


def _det_like(a, **params):
    _check_matrix("det", "a", shape_of(a))
    return tuple(shape_of(a)[:-2]), _float_dtype(a)


det = stacked(
    "det", _det_forward,
    # d det(A) = det(A) tr(A^-1 dA); undefined (inv fails) at singular A: documented.
    vjp=[lambda g, ans, a: _col(_col(g * ans)) * _T(inv(a))],
    jvp=[lambda t, ans, a: ans * reduce_sum(_T(inv(a)) * t, axis=(-2, -1))],
    shape_rule=_det_like)


def _slogdet_forward(a):
    _check_matrix("slogdet", "a", np.shape(a))
    sign, logabsdet = np.linalg.slogdet(a)
    return np.asarray(sign), np.asarray(logabsdet)


def _slogdet_vjp(g, ans, a):
    g_sign, g_log = g
    terms = [] if g_log is None else [_real_part(g_log)]
    if g_sign is not None and dtype_of(a).kind == "c":
        # the transpose of d sign = sign * i Im(tau): tau gets i Im(g_sign * sign)
        gs = g_sign * ans[0]
        terms.append(gs - real(gs))
    if not terms:
        return None
    return _col(_col(_add(*terms))) * _T(inv(a))


def _slogdet_jvp(t, ans, a):
    # tau = tr(A^-1 dA). log|det| is real: its tangent is Re(tau). A real sign is piecewise
    # constant (tangent None); a complex sign det/|det| turns by i Im(tau), as in JAX.
    tau = reduce_sum(_T(inv(a)) * t, axis=(-2, -1))
    if dtype_of(tau).kind != "c":
        return (None, tau)
    return ((tau - real(tau)) * ans[0], real(tau))


slogdet = stacked(
    "slogdet", _slogdet_forward, vjp=[_slogdet_vjp], jvp=[_slogdet_jvp],
    multiple_results=True, none_grads_ok=True,
    shape_rule=lambda a: [_det_like(a), (_det_like(a)[0], _real_dtype(_det_like(a)[1]))])


# --- pseudo-inverse ------------------------------------------------------------------------
def _pinv_forward(a, rcond=1e-15):
    _check_matrix("pinv", "a", np.shape(a), square=False)
    return np.linalg.pinv(a, rtol=rcond)


def _projector_terms_kept(a, rcond):
    """Constant masks ``(rows, cols)``, each ``(..., 1, 1)``: whether ``I - A X`` (rank < m)
    and ``I - X A`` (rank < n) are nonzero for ``X = pinv(A)``, the rank counted with the
    forward's cutoff. Where the rank is full they vanish identically around ``A`` (pinv is
    differentiable only where its rank is locally constant), and so do all their
    derivatives; computed, ``I - A X`` is rounding noise of size ``eps * cond(A)``, which
    pinv's rules multiply by ``X X^H`` (``cond(A)^2``) and second derivatives amplify further.
    So their terms are dropped there (the inverse's rule is left), not computed."""
    m, n = shape_of(a)[-2:]
    if not m or not n:
        return True, True
    rank = expand_dims(expand_dims(matrix_rank(a, rtol=rcond), -1), -1)
    return less(rank, m), less(rank, n)


def _pinv_vjp(g, ans, a, rcond=1e-15):
    # dX = -X dA X + X X^H dA^H (I - A X) + (I - X A) dA^H X^H X for X = pinv(A) of constant
    # rank; its transpose (the dA^H terms transpose to conjugates), with (I - A X) G^T written
    # as G^T - A (X G^T) to avoid identities, each projector term only where it is not
    # identically zero (see _projector_terms_kept).
    x, gt = ans, _T(g)
    rows, cols = _projector_terms_kept(a, rcond)
    left = gt - matmul(a, matmul(x, gt))          # (I - A X) G^T
    right = gt - matmul(matmul(gt, x), a)         # G^T (I - X A)
    return -matmul(_T(x), matmul(g, _T(x))) + _conj(
        where(rows, matmul(left, matmul(x, _H(x))), 0.0) +
        where(cols, matmul(matmul(_H(x), x), right), 0.0))


def _pinv_jvp(t, ans, a, rcond=1e-15):
    x, th = ans, _H(t)
    rows, cols = _projector_terms_kept(a, rcond)
    return -matmul(x, matmul(t, x)) \
        + where(rows, matmul(matmul(x, _H(x)), th - matmul(matmul(th, a), x)), 0.0) \
        + where(cols, matmul(th - matmul(x, matmul(a, th)), matmul(_H(x), x)), 0.0)


def _pinv_shape(a, rcond=1e-15):
    s = shape_of(a)
    _check_matrix("pinv", "a", s, square=False)
    return tuple(s[:-2]) + (s[-1], s[-2]), _float_dtype(a)


pinv = stacked("pinv", _pinv_forward, vjp=[_pinv_vjp], jvp=[_pinv_jvp],
                 shape_rule=_pinv_shape)
pinv.__doc__ = """Moore-Penrose pseudo-inverse (singular values below ``rcond * s_max`` are
treated as zero). Differentiable where the rank is locally constant (e.g. full rank):
``dX = -X dA X + X X^H dA^H (I - A X) + (I - X A) dA^H X^H X``, the projector terms only
where the rank is not full on their side (where they vanish identically, computing them
would add rounding noise that second derivatives amplify by ``cond(A)^2``)."""


def _matrix_rank_forward(a, tol=None, rtol=None):
    _check_matrix("matrix_rank", "a", np.shape(a), square=False)
    return np.asarray(np.linalg.matrix_rank(a, tol=tol, rtol=rtol))


matrix_rank = stacked(
    "matrix_rank", _matrix_rank_forward, nondiff=True,
    shape_rule=lambda a, tol=None, rtol=None: (tuple(shape_of(a)[:-2]), np.dtype(np.int64)))


# --- Cholesky ------------------------------------------------------------------------------
def _cholesky_forward(a):
    _check_matrix("cholesky", "a", np.shape(a))
    return _guard("cholesky", f"a of shape {np.shape(a)} is not positive definite")(
        np.linalg.cholesky, a)


def _phi(x):
    """The lower triangle of ``x`` with its diagonal halved."""
    n = shape_of(x)[-1]
    return x * (_tri_mask(n, x, -1) + 0.5 * _eye(n, x))


def _l_inv_sym_l_inv_h(l, s):
    """``L^-1 S L^-H`` for Hermitian (real: symmetric) ``S``."""
    y = solve_triangular(l, s, lower=True)                   # L^-1 S
    return solve_triangular(l, _H(y), lower=True)            # L^-1 (L^-1 S)^H


def _cholesky_vjp(g, ans, a):
    # the transpose of dA -> L Phi(L^-1 H(dA) L^-H): H^T(L^-T Phi(L^T G) conj(L)^-1)
    p = _phi(matmul(_T(ans), g))
    z = solve_triangular(_T(ans), p, lower=False)            # L^-T P
    s = _T(solve_triangular(_H(ans), _T(z), lower=False))    # L^-T P conj(L)^-1
    return _from_lower_transpose(s)


cholesky = stacked(
    "cholesky", _cholesky_forward, vjp=[_cholesky_vjp],
    jvp=[lambda t, ans, a: matmul(ans, _phi(_l_inv_sym_l_inv_h(ans, _from_lower(t))))],
    shape_rule=_same_shape("cholesky"))
cholesky.__doc__ = """Lower Cholesky factor ``L`` of the Hermitian (real: symmetric) positive
definite matrix held in the lower triangle of ``a``: ``H(a) = L L^H`` with ``H(a) = tril(a, -1)
+ tril(a, -1)^H + Re(diag(a))`` (the strict upper triangle and the diagonal's imaginary parts
are not read, as in LAPACK). Derivative ``dL = L Phi(L^-1 H(dA) L^-H)``, Phi = lower triangle
with halved diagonal; the gradient is lower triangular."""


# --- symmetric eigendecomposition -------------------------------------------------------------
def _eigh_forward(a):
    _check_matrix("eigh", "a", np.shape(a))
    w, v = _guard("eigh", "eigenvalues did not converge")(np.linalg.eigh, a)
    return w, v


def _eig_shapes(name):
    def rule(a):
        s = shape_of(a)
        _check_matrix(name, "a", s)
        dt = _float_dtype(a)
        return [(tuple(s[:-1]), _real_dtype(dt)), (tuple(s), dt)]
    return rule


# The rules below are JAX's for complex input: a JVP is R-linear and a VJP is its transpose
# under the pairing Re(sum(g * t)) (no conjugation), so where the JVP reads V^H dA V the VJP
# writes conj(V) G V^T.
def _eigh_vjp(g, ans, a):
    gw, gv = g
    w, v = ans
    inner = []
    if gw is not None:
        inner.append(_diag_embed(_real_part(gw)))   # w is real: only Re(gw) reaches it
    if gv is not None:
        inner.append(_gap_inverse(w) * matmul(_T(v), gv))
    if not inner:
        return None
    return _from_lower_transpose(matmul(_conj(v), matmul(_add(*inner), _T(v))))


def _eigh_jvp(t, ans, a):
    w, v = ans
    p = matmul(_H(v), matmul(_from_lower(t), v))
    return (_real_part(_diag_part(p)), matmul(v, _gap_inverse(w) * p))


eigh = stacked("eigh", _eigh_forward, vjp=[_eigh_vjp], jvp=[_eigh_jvp],
                 multiple_results=True, none_grads_ok=True, shape_rule=_eig_shapes("eigh"))
eigh.__doc__ = """Eigenvalues (ascending, real) and eigenvectors (columns) of the Hermitian
(real: symmetric) matrix held in the lower triangle of ``a``, ``H(a) = tril(a, -1) +
tril(a, -1)^H + Re(diag(a))`` (the strict upper triangle and the diagonal's imaginary parts
are not read, as in LAPACK). With ``P = V^H H(dA) V``: ``dw = diag(P)``, ``dV = V (F * P)``
with ``F_ij = 1 / (w_j - w_i)``: eigenvector derivatives need distinct eigenvalues; gradients
are lower triangular. Complex eigenvectors have an arbitrary phase per column (``dV`` keeps
``diag(V^H dV)`` zero, as JAX does): only functions invariant to it (``|V|^2``, ``V V^H``)
have meaningful derivatives."""


def _eigvalsh_forward(a):
    _check_matrix("eigvalsh", "a", np.shape(a))
    return _guard("eigvalsh", "eigenvalues did not converge")(np.linalg.eigvalsh, a)


def _eigvalsh_vjp(g, ans, a):
    v = eigh(a)[1]
    return _from_lower_transpose(matmul(_conj(v) * _row(_real_part(g)), _T(v)))


def _eigvalsh_jvp(t, ans, a):
    v = eigh(a)[1]
    return _real_part(_diag_part(matmul(_H(v), matmul(_from_lower(t), v))))


eigvalsh = stacked("eigvalsh", _eigvalsh_forward, vjp=[_eigvalsh_vjp], jvp=[_eigvalsh_jvp],
                     shape_rule=lambda a: _eig_shapes("eigvalsh")(a)[0])
eigvalsh.__doc__ = """Eigenvalues (ascending, real) of the Hermitian matrix held in the lower
triangle of ``a``, as :func:`eigh` reads it (``dw = Re diag(V^H H(dA) V)``, a lower triangular
gradient); the first derivative stays finite at repeated eigenvalues."""


# --- QR ------------------------------------------------------------------------------------
def _qr_forward(a):
    _check_matrix("qr", "a", np.shape(a), square=False)
    q, r = np.linalg.qr(a, mode="reduced")
    return q, r


def _qr_shapes(a):
    s = shape_of(a)
    _check_matrix("qr", "a", s, square=False)
    m, n = s[-2:]
    k = min(m, n)
    dt = _float_dtype(a)
    return [(tuple(s[:-2]) + (m, k), dt), (tuple(s[:-2]) + (k, n), dt)]


def _qr_check_tall(a):
    m, n = shape_of(a)[-2:]
    if m < n:
        raise NotImplementedError(f"qr: derivatives are implemented for square and tall a "
                                  f"(m >= n); a has shape {tuple(shape_of(a))}")


def _right_r_inv(x, r):
    """``x R^-1`` for upper triangular ``R``."""
    return _T(solve_triangular(_T(r), _T(x), lower=True))


def _qr_vjp(g, ans, a):
    # The transpose of _qr_jvp: dQ = B - Q U, dR = U R with B = dA R^-1, X = Q^H B and
    # U = X - Omega(X), Omega(X) = low(X) - low(X)^H + i Im(diag X) (low: strictly lower).
    _qr_check_tall(a)
    gq, gr = g
    q, r = ans
    if gq is None and gr is None:
        return None
    u_terms = []
    if gr is not None:
        u_terms.append(matmul(gr, _T(r)))
    if gq is not None:
        u_terms.append(-matmul(_T(q), gq))
    gu = _add(*u_terms)
    n = shape_of(r)[-1]
    mask = _tri_mask(n, gu, -1)
    # gU - Omega^T(gU), the transpose of i Im(diag) included
    gx = _real_diagonal(gu - gu * mask + _H(gu) * mask)
    b = matmul(_conj(q), gx) if gq is None else gq + matmul(_conj(q), gx)
    # b R^-T: solve R y^T = b^T
    return _T(solve_triangular(r, _T(b), lower=False))


def _qr_jvp(t, ans, a):
    _qr_check_tall(a)
    q, r = ans
    b = _right_r_inv(t, r)                                # dA R^-1
    x = matmul(_H(q), b)                                  # Q^H dA R^-1
    n = shape_of(r)[-1]
    low = x * _tri_mask(n, x, -1)
    upper = _real_diagonal(x - low + _H(low))            # X - Omega: upper, real diagonal
    return (b - matmul(q, upper), matmul(upper, r))


qr = stacked("qr", _qr_forward, vjp=[_qr_vjp], jvp=[_qr_jvp], multiple_results=True,
               none_grads_ok=True, shape_rule=_qr_shapes)
qr.__doc__ = """Reduced QR factorisation ``a = Q R`` (Q: (..., m, k), R: (..., k, n),
k = min(m, n)); derivatives for m >= n and full column rank."""


def _qr_complete_forward(a):
    _check_matrix("qr", "a", np.shape(a), square=False)
    q, r = np.linalg.qr(a, mode="complete")
    return q, r


def _qr_complete_shapes(a):
    (q_thin, dt), (r_thin, _) = _qr_shapes(a)  # (..., m, k), (..., k, n)
    m = q_thin[-2]
    return [(q_thin[:-1] + (m,), dt), (r_thin[:-2] + (m, r_thin[-1]), dt)]


def _qr_complete_undefined(a):
    return NotImplementedError(
        f"qr: with mode='complete' and a tall a (shape {tuple(shape_of(a))}) the completed "
        "columns of Q are not unique, so Q has no derivative; use mode='reduced' (or R "
        "alone: its rows below the diagonal block are zeros)")


def _qr_complete_vjp(g, ans, a):
    # R = [R_reduced; 0]: its gradient is the reduced factorisation's; Q's extra columns
    # have none
    gq, gr = g
    if gq is not None:
        raise _qr_complete_undefined(a)
    if gr is None:
        return None
    # the reduced factors afresh (not Q's first columns: a second derivative would go
    # through the complete Q)
    n = shape_of(a)[-1]
    return _qr_vjp((None, getitem(gr, index=(Ellipsis, slice(None, n), slice(None)))), qr(a), a)


def _qr_complete_jvp(t, ans, a):
    raise _qr_complete_undefined(a)


# numpy's mode='complete' for a tall matrix: the values, and the gradient through R alone
qr_complete = stacked("qr_complete", _qr_complete_forward, vjp=[_qr_complete_vjp],
                      jvp=[_qr_complete_jvp], multiple_results=True, none_grads_ok=True,
                      shape_rule=_qr_complete_shapes)


# --- SVD -----------------------------------------------------------------------------------
def _svd_forward(a):
    _check_matrix("svd", "a", np.shape(a), square=False)
    u, s, vh = _guard("svd", "did not converge")(np.linalg.svd, a, full_matrices=False)
    return u, s, vh


def _svd_shapes(a):
    s = shape_of(a)
    _check_matrix("svd", "a", s, square=False)
    m, n = s[-2:]
    k = min(m, n)
    lead, dt = tuple(s[:-2]), _float_dtype(a)
    return [(lead + (m, k), dt), (lead + (k,), _real_dtype(dt)), (lead + (k, n), dt)]


def _svd_vjp(g, ans, a):
    # The transpose of _svd_jvp: where the JVP reads U^H dA V, this writes conj(U) G V^T.
    gu, gs, gvh = g
    u, s, vh = ans
    inner, outer = [], []
    if gs is not None:
        inner.append(_diag_embed(_real_part(gs)))
    if gu is not None or gvh is not None:
        f = _gap_inverse(s * s)                          # 1 / (s_j^2 - s_i^2)
    if gu is not None:
        utgu = matmul(_T(u), gu)
        inner.append((f * (utgu - _H(utgu))) * _row(s))
        if dtype_of(utgu).kind == "c":                   # dU's i Im(diag(U^H dA V)) / s
            d = _diag_part(utgu)
            inner.append(_diag_embed((d - real(d)) / s))
        # (I - conj(U) U^T) gU S^-1
        outer.append(matmul((gu - matmul(_conj(u), utgu)) / _row(s), _conj(vh)))
    if gvh is not None:
        vtgv = matmul(_conj(vh), _H(gvh))                # V^T gV with gV = gVh^H
        inner.append(_col(s) * (f * (vtgv - _H(vtgv))))
        # S^-1 gVh (I - conj(V) V^T)
        outer.append(matmul(_conj(u), (gvh - matmul(matmul(gvh, _T(vh)), _conj(vh)))
                            / _col(s)))
    if not inner:
        return None
    return _add(matmul(_conj(u), matmul(_add(*inner), _conj(vh))), *outer)


def _svd_jvp(t, ans, a):
    u, s, vh = ans
    v = _H(vh)
    dp = matmul(_H(u), matmul(t, v))                     # U^H dA V
    f = _gap_inverse(s * s)
    ds = _diag_part(dp)
    dps, sdp = dp * _row(s), _col(s) * dp
    inner_u = f * (dps + _H(dps))
    if dtype_of(dp).kind == "c":
        # the phase of each (u_i, v_i) pair is free: dU takes i Im(dP_ii) / s_i, dV none
        inner_u = inner_u + _diag_embed((ds - real(ds)) / s)
        ds = real(ds)
    du = matmul(u, inner_u) + (matmul(t, v) - matmul(u, dp)) / _row(s)
    dv = matmul(v, f * (sdp + _H(sdp))) + \
        (matmul(_H(t), u) - matmul(v, _H(dp))) / _row(s)
    return (du, ds, _H(dv))


svd = stacked("svd", _svd_forward, vjp=[_svd_vjp], jvp=[_svd_jvp], multiple_results=True,
                none_grads_ok=True, shape_rule=_svd_shapes)
svd.__doc__ = """Thin SVD ``a = U diag(s) Vh`` (``full_matrices=False``); singular vector
derivatives need distinct, nonzero singular values. For complex ``a`` each pair of singular
vectors has a free common phase (``dU`` takes it, as in JAX): only functions invariant to it
(``U Vh``, ``|U|^2``, ``U U^H``) have meaningful derivatives."""


def _svd_full_forward(a):
    _check_matrix("svd", "a", np.shape(a), square=False)
    return tuple(_guard("svd", "did not converge")(np.linalg.svd, a, full_matrices=True))


def _svd_full_shapes(a):
    (u_thin, dt), s, (vh_thin, _) = _svd_shapes(a)  # (..., m, k), (..., k), (..., k, n)
    m, n = u_thin[-2], vh_thin[-1]
    return [(u_thin[:-1] + (m,), dt), s, (vh_thin[:-2] + (n, n), dt)]


def _svd_full_undefined(a):
    return NotImplementedError(
        f"svd: with full_matrices=True and a non-square a (shape {tuple(shape_of(a))}) the "
        "completed singular vectors are not unique, so they have no derivative; pass "
        "full_matrices=False (or compute_uv=False for the singular values alone)")


def _svd_full_vjp(g, ans, a):
    gu, gs, gvh = g
    if gu is not None or gvh is not None:
        raise _svd_full_undefined(a)
    return None if gs is None else _svdvals_vjp(gs, None, a)


def _svd_full_jvp(t, ans, a):
    raise _svd_full_undefined(a)


# numpy's default for a non-square matrix: the values and the singular values' gradient
svd_full = stacked("svd_full", _svd_full_forward, vjp=[_svd_full_vjp], jvp=[_svd_full_jvp],
                     multiple_results=True, none_grads_ok=True, shape_rule=_svd_full_shapes)


def _svdvals_forward(a):
    _check_matrix("svdvals", "a", np.shape(a), square=False)
    return _guard("svdvals", "did not converge")(np.linalg.svd, a, compute_uv=False)


def _svdvals_vjp(g, ans, a):
    u, _, vh = svd(a)
    return _conj(matmul(u * _row(_real_part(g)), vh))    # conj(U) diag(g) V^T


def _svdvals_jvp(t, ans, a):
    u, _, vh = svd(a)
    return _real_part(_diag_part(matmul(_H(u), matmul(t, _H(vh)))))


svdvals = stacked("svdvals", _svdvals_forward, vjp=[_svdvals_vjp], jvp=[_svdvals_jvp],
                    shape_rule=lambda a: _svd_shapes(a)[1])


__all__ = ["inv", "solve", "solve_triangular", "det", "slogdet", "pinv", "matrix_rank",
           "cholesky", "eigh", "eigvalsh", "qr", "svd", "svdvals", "hermitian_from_lower",
           "LinAlgError"]
