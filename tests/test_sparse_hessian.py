"""sparse_hessian / sparse_jacobian: equal to the dense derivatives (to rounding), a handful
of colors on structured problems, cached analysis, dense fallback, SciPy integration."""


import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from scipy.optimize import minimize, rosen_hess

import hessgrad as hg
import hessgrad.numpy as hnp



def _load_corpus():
    import _hessgrad_tests_objectives_corpus as corpus  # registered by conftest.py
    return corpus


def rosen(x):
    return hnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def extended_rosenbrock(x):
    odd, even = x[0::2], x[1::2]
    return hnp.sum(100.0 * (even - odd ** 2) ** 2 + (1.0 - odd) ** 2)


def laplacian_energy(u):
    """Dirichlet energy of a 2-D grid function with a quartic term (5-point stencil)."""
    dx = u[1:, :] - u[:-1, :]
    dy = u[:, 1:] - u[:, :-1]
    return 0.5 * hnp.sum(dx ** 2) + 0.5 * hnp.sum(dy ** 2) + 0.25 * hnp.sum(u ** 4)


def chained(x):
    """Chained and partially separable terms of different widths."""
    return (hnp.sum(hnp.exp(x[:-2] * x[2:])) + hnp.sum((x[1:] - x[:-1]) ** 4)
            + hnp.sum(hnp.log1p(x[::3] ** 2)) + hnp.sum(hnp.sin(x[:-1]) * hnp.cos(x[1:])))


def _assert_equal_to_dense(f, x, sparse_h, rtol=1e-12):
    dense = hg.hessian(f)(x).reshape(x.size, x.size)
    assert sp.isspmatrix_csr(sparse_h) and sparse_h.shape == dense.shape
    scale = max(1.0, np.abs(dense).max())
    np.testing.assert_allclose(sparse_h.toarray(), dense, rtol=rtol, atol=rtol * scale)


def test_rosenbrock_matches_scipy_and_uses_three_colors():
    x = np.linspace(-1.2, 1.5, 200)
    H = hg.sparse_hessian(rosen)
    h = H(x)
    np.testing.assert_allclose(h.toarray(), rosen_hess(x), rtol=1e-13, atol=1e-10)
    info = H.info(x)
    assert info["ncolors"] == 3 and not info["dense"] and info["nnz"] == 3 * 200 - 2


def test_extended_rosenbrock():
    x = np.random.default_rng(1).standard_normal(60)
    H = hg.sparse_hessian(extended_rosenbrock)
    _assert_equal_to_dense(extended_rosenbrock, x, H(x))
    assert H.info(x)["ncolors"] <= 3


def test_laplacian_energy_on_a_grid():
    u = np.random.default_rng(2).standard_normal((12, 12))
    H = hg.sparse_hessian(laplacian_energy)
    _assert_equal_to_dense(laplacian_energy, u, H(u))
    assert H.info(u)["nnz"] == 144 + 2 * 2 * 12 * 11
    assert H.info(u)["ncolors"] <= 8


def test_chained_functions_and_the_column_coloring():
    x = np.random.default_rng(3).uniform(-1, 1, 40)
    for coloring in ("star", "column"):
        H = hg.sparse_hessian(chained, coloring=coloring)
        _assert_equal_to_dense(chained, x, H(x))
        assert H.info(x)["ncolors"] <= 7


def test_analysis_is_cached_per_shape_and_reused_at_other_points():
    H = hg.sparse_hessian(chained)
    x = np.random.default_rng(4).uniform(-1, 1, 30)
    H(x)
    pattern = H.pattern(x)
    for seed in range(3):
        z = np.random.default_rng(seed).uniform(-1, 1, 30)
        _assert_equal_to_dense(chained, z, H(z))
        assert H.pattern(z) is pattern
    assert len(H._plans) == 1
    H(np.zeros(31))
    assert len(H._plans) == 2


def test_hessian_sparse_keyword_and_float32():
    x = np.linspace(0.0, 1.0, 50)
    h = hg.hessian(rosen, sparse=True)(x)
    np.testing.assert_allclose(h.toarray(), rosen_hess(x), rtol=1e-13, atol=1e-10)
    h32 = hg.hessian(rosen, sparse=True)(x.astype(np.float32))
    assert h32.dtype == np.float32
    np.testing.assert_allclose(h32.toarray(), rosen_hess(x), rtol=1e-5, atol=1e-3)


def test_extra_arguments_are_data():
    def f(x, w):
        return hnp.sum(w[:-1] * x[1:] * x[:-1]) + hnp.sum(w * x ** 4)
    x, w = np.linspace(-1, 1, 20), np.linspace(1, 2, 20)
    H = hg.sparse_hessian(f)
    h = H(x, w)
    dense = hg.hessian(f)(x, w)
    np.testing.assert_allclose(h.toarray(), dense, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(H(x, 2 * w).toarray(), hg.hessian(f)(x, 2 * w), rtol=1e-13)


def test_a_numpy_bool_argument_selects_its_own_plan():
    # np.bool_ (e.g. lam > 0 on numpy scalars) is a static value of the trace, like a bool
    def f(x, flag):
        if flag:
            return hnp.sum(x[1:] * x[:-1] ** 2)      # tridiagonal Hessian
        return hnp.sum(x ** 4)                      # diagonal Hessian
    x = np.linspace(0.5, 1.5, 6)
    lam = np.float64(0.0)
    flags = [np.float64(1.0) > lam, lam > lam, np.float64(1.0) > lam]
    assert [type(flag) for flag in flags] == [np.bool_] * 3
    expected = {bool(flag): hg.hessian(f, detect_sparsity=False)(x, flag) for flag in flags[:2]}
    H, S = hg.hessian(f), hg.sparse_hessian(f)
    J = hg.sparse_jacobian(lambda x, flag: x ** 2 if flag else x[::-1] ** 3)
    jacobians = {True: np.diag(2 * x), False: np.fliplr(np.diag(3 * x[::-1] ** 2))}
    for flag in flags:
        np.testing.assert_allclose(H(x, flag), expected[bool(flag)], rtol=1e-13)
        np.testing.assert_allclose(S(x, flag).toarray(), expected[bool(flag)], rtol=1e-13)
        np.testing.assert_allclose(J(x, flag).toarray(), jacobians[bool(flag)], rtol=1e-13)


def test_the_nesting_of_arguments_selects_its_own_plan():
    # [a, b] and [a], [b] flatten alike but are traced apart: so are their plans
    def f(x, *rest):
        if len(rest) == 1:
            a, b = rest[0]
            return hnp.sum(a * x ** 4) + hnp.sum(b * x)
        (a,), (b,) = rest
        return hnp.sum(a[1:] * x[1:] * x[:-1] ** 2) + hnp.sum(b * x)
    x, a, b = np.linspace(0.5, 1.5, 6), np.linspace(1.0, 2.0, 6), np.ones(6)
    S = hg.sparse_hessian(f)
    J = hg.sparse_jacobian(lambda x, *rest: x ** 2 if len(rest) == 1 else x[::-1] ** 3)
    for args in [([a, b],), ([a], [b]), ([a, b],)]:
        dense = hg.hessian(f, detect_sparsity=False)(x, *args)
        np.testing.assert_allclose(S(x, *args).toarray(), dense, rtol=1e-13)
        jac = hg.jacfwd(lambda z: J.f(z, *args))(x)
        np.testing.assert_allclose(J(x, *args).toarray(), jac, rtol=1e-13)


def test_dense_pattern_falls_back_to_the_dense_hessian():
    f = lambda x: hnp.sum(x) ** 4 + hnp.sum(x ** 3)   # noqa: E731 - dense Hessian
    x = np.linspace(0.1, 1.0, 30)
    H = hg.sparse_hessian(f)
    h = H(x)
    assert H.info(x)["dense"]
    _assert_equal_to_dense(f, x, h)
    # an op without a sparsity rule: conservative (dense) pattern, still correct
    g = lambda x: hnp.sum(hnp.linalg.inv(hnp.reshape(x, (3, 3)) + 4 * np.eye(3)))  # noqa
    z = np.random.default_rng(0).uniform(-0.5, 0.5, 9)
    Hg = hg.sparse_hessian(g)
    _assert_equal_to_dense(g, z, Hg(z))
    assert Hg.info(z)["gave_up"] or Hg.info(z)["dense"]


def test_probe_method_finds_the_pattern_numerically():
    # sort has no exact rule (every output may depend on every input): the traced pattern is
    # dense; probing finds the diagonal of this separable function.
    f = lambda x: hnp.sum(hnp.sort(x) ** 2) + hnp.sum(x[1:] * x[:-1])  # noqa: E731
    x = np.random.default_rng(5).standard_normal(40)
    traced = hg.sparse_hessian(f)
    assert traced.info(x)["dense"]
    probed = hg.sparse_hessian(f, method="probe")
    info = probed.info(x)
    assert not info["dense"] and info["ncolors"] == 3
    _assert_equal_to_dense(f, x, probed(x))


def test_objective_with_sparse_hessian_drives_trust_constr():
    obj = hg.scipy.objective(rosen, sparse_hessian=True)
    x0 = np.full(30, -0.5)
    h = obj.hess(x0)
    assert sp.issparse(h)
    res = minimize(obj.fun, x0, jac=obj.jac, hess=obj.hess, method="trust-constr",
                   options={"gtol": 1e-10, "maxiter": 500})
    np.testing.assert_allclose(res.x, np.ones(30), atol=1e-6)
    dense = hg.scipy.objective(rosen)
    assert isinstance(dense.hess(x0), np.ndarray)


def test_bad_input_errors():
    with pytest.raises(ValueError, match="sparse_hessian: method must be one of"):
        hg.sparse_hessian(rosen, method="guess")
    with pytest.raises(ValueError, match="sparse_hessian: coloring must be one of"):
        hg.sparse_hessian(rosen, coloring="acyclic")
    with pytest.raises(ValueError, match="dense_threshold"):
        hg.sparse_hessian(rosen, dense_threshold=2.0)
    with pytest.raises(TypeError, match=r"sparse_hessian: argument x .*complex128.*\(3,\)"):
        hg.sparse_hessian(rosen)(np.zeros(3, complex))
    with pytest.raises(ValueError, match=r"f must return a scalar, got an output of shape "
                                         r"\(4,\) for x of shape \(4,\)"):
        hg.sparse_hessian(lambda x: x ** 2)(np.zeros(4))
    with pytest.raises(ValueError, match="sparse=True supports argnums=0 only"):
        hg.hessian(rosen, argnums=1, sparse=True)
    with pytest.raises(TypeError, match="options of sparse=True"):
        hg.hessian(rosen, coloring="star")
    with pytest.raises(ValueError, match="sparse_jacobian: mode must be one of"):
        hg.sparse_jacobian(lambda x: x, mode="both")
    # integers are refused, as hg.hessian and hg.jacobian do (no silent cast to float)
    with pytest.raises(TypeError, match=r"sparse_hessian: argument x .*int64.*\(3,\)"):
        hg.sparse_hessian(rosen)(np.arange(3, dtype=np.int64))
    with pytest.raises(TypeError):
        hg.hessian(rosen)(np.arange(3, dtype=np.int64))
    with pytest.raises(TypeError, match=r"sparse_jacobian: argument x .*int64.*\(3,\)"):
        hg.sparse_jacobian(lambda x: x ** 2)(np.arange(3, dtype=np.int64))
    # a non-callable f: the error names the function called
    for call, what in [(lambda: hg.hessian(3), "hessian"),
                       (lambda: hg.hessian(3, detect_sparsity=False), "hessian"),
                       (lambda: hg.hessian(3, sparse=True), "hessian"),
                       (lambda: hg.sparse_hessian(3), "sparse_hessian"),
                       (lambda: hg.sparse_jacobian(3), "sparse_jacobian")]:
        with pytest.raises(TypeError, match=f"^{what}: f must be callable, got int"):
            call()


# --- random partially separable functions -------------------------------------------------
ELEMENTS = [
    lambda v: hnp.exp(hnp.sum(v) * 0.3),
    lambda v: hnp.prod(v) if v.shape[0] > 1 else v[0] ** 3,
    lambda v: hnp.sum(v ** 2) ** 2,
    lambda v: hnp.sin(v[0]) * hnp.sum(v),
    lambda v: hnp.log1p(hnp.sum(v * v)),
]


@st.composite
def _separable(draw):
    n = draw(st.integers(2, 16))
    terms = draw(st.lists(st.tuples(st.integers(0, len(ELEMENTS) - 1),
                                    st.lists(st.integers(0, n - 1), min_size=1, max_size=3,
                                             unique=True)), min_size=1, max_size=6))
    seed = draw(st.integers(0, 2**31 - 1))
    return n, terms, seed


@settings(max_examples=25, deadline=None)
@given(_separable())
def test_random_partially_separable_functions(case):
    n, terms, seed = case

    def f(x):
        return sum(ELEMENTS[k](x[np.array(idx)]) for k, idx in terms)
    x = np.random.default_rng(seed).uniform(-1.0, 1.0, n)
    H = hg.sparse_hessian(f, dense_threshold=1.0)   # the compressed path even when dense
    pattern = H.pattern(x).toarray()
    possible = np.zeros((n, n), bool)
    for _, idx in terms:
        possible[np.ix_(idx, idx)] = True
    assert not (pattern & ~possible).any()         # nothing outside the element blocks
    dense = hg.hessian(f)(x)
    assert not ((np.abs(dense) > 0) & ~pattern).any()
    np.testing.assert_allclose(H(x).toarray(), dense, rtol=1e-12, atol=1e-12)


# --- the objectives corpus ------------------------------------------------------------------
CORPUS_NAMES = ["extended_rosenbrock", "rosenbrock", "powell_singular", "trid", "dixon_price",
                "wood", "quartic", "sum_squares", "brown", "levy", "rastrigin", "griewank",
                "chung_reynolds", "zakharov", "styblinski_tang", "alpine2", "schwefel12",
                "qing", "bard", "box3d", "helical_valley"]


@pytest.fixture(scope="module")
def corpus():
    objectives = {o.name: o for o in _load_corpus().load_corpus(hnp)}
    return {name: objectives[name] for name in CORPUS_NAMES if name in objectives}


def test_corpus_objectives(corpus):
    assert len(corpus) >= 15
    for name, obj in corpus.items():
        n = max([d for d in obj.dims if d <= 12] or [min(obj.dims)])
        x = np.asarray(obj.x0(n), dtype=np.float64)
        x = x + 0.1 * np.random.default_rng(0).standard_normal(x.shape)
        H = hg.sparse_hessian(obj.fn, dense_threshold=1.0)
        dense = hg.hessian(obj.fn)(x)
        pattern = H.pattern(x).toarray()
        assert not ((np.abs(dense) > 0) & ~pattern).any(), name
        scale = max(1.0, np.abs(dense).max())
        np.testing.assert_allclose(H(x).toarray(), dense, rtol=1e-11, atol=1e-11 * scale,
                                   err_msg=name)


# --- Jacobians ------------------------------------------------------------------------------
def residuals(x):
    return hnp.concatenate([10.0 * (x[1:] - x[:-1] ** 2), 1.0 - x[:-1], hnp.sum(x)[None]])


@pytest.mark.parametrize("mode", ["auto", "fwd", "rev"])
def test_sparse_jacobian_matches_dense(mode):
    x = np.random.default_rng(6).standard_normal(25)
    J = hg.sparse_jacobian(residuals, mode=mode, dense_threshold=1.0)
    dense = hg.jacrev(residuals)(x)
    np.testing.assert_allclose(J(x).toarray(), dense, rtol=1e-13, atol=1e-13)
    info = J.info(x)
    assert info["mode"] == mode or mode == "auto"


def test_sparse_jacobian_of_a_banded_map_uses_few_jvps():
    f = lambda x: x[2:] * x[:-2] - hnp.sin(x[1:-1])   # noqa: E731
    x = np.random.default_rng(7).standard_normal(300)
    J = hg.sparse_jacobian(f)
    np.testing.assert_allclose(J(x).toarray(), hg.jacrev(f)(x), rtol=1e-13, atol=1e-13)
    assert J.info(x)["ncolors"] <= 3 and not J.info(x)["dense"]


def test_probe_method_is_exact_at_the_point_it_probes_from():
    # Which entries are nonzero depends on the order of x: the random points near x sort
    # otherwise, and without x itself among the probes some of H(x)'s entries were dropped.
    f = lambda x: hnp.sum(hnp.sort(x) * hnp.arange(12.0) * x ** 2)  # noqa: E731
    x = np.random.default_rng(3).standard_normal(12)
    _assert_equal_to_dense(f, x, hg.sparse_hessian(f, method="probe")(x))


@pytest.mark.parametrize("shape", [(0, 3), (3, 0)])
@pytest.mark.parametrize("axis", [0, 1])
def test_scans_over_size_zero_arrays(shape, axis):
    """The pattern of a scan (cumsum, cumprod) of a size-0 array, also along an empty axis: an
    empty Hessian, as the dense one (found by the op-by-op harness)."""
    f = lambda x: hnp.sum(hnp.cumprod(x, axis=axis) ** 2) + hnp.sum(hnp.cumsum(x, axis=axis))
    assert hg.sparse_hessian(f)(np.zeros(shape)).shape == (0, 0)
