"""Constrained optimization: the sparse constraint Jacobian and the sparse Hessian of the
Lagrangian that hessgrad hands IPOPT (hessgrad.ipopt) and SciPy (hessgrad.scipy.constraint),
checked on the constrained corpus against dense hessgrad and finite differences, with the
pattern checked to hold every structural nonzero at several points; then IPOPT on every
corpus problem against its known optimum, and the driver's API."""

import sys

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, NonlinearConstraint, minimize as sp_minimize

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad import ipopt
from hessgrad import problems_constrained as pc

needs_ipopt = pytest.mark.skipif(
    not ipopt.available(),
    reason="cyipopt is not installed: pip install -e '.[ipopt]' (the cyipopt-wheels package)")

# scalable problems at a few dozen variables (the checks below are dense)
SMALL = {"hanging_chain": 30, "goddard": 125, "minsurf": 49, "torsion": 49, "lq_control": 60,
         "vanderpol": 60, "car_race": 61, "pde_control": 72, "portfolio": 12, "thomson": 24}
NAMES = pc.names()


def small(name):
    return pc.get(name, n=SMALL.get(name))


def points(p, count=3, seed=0):
    """Random points around x0, inside the bounds (where the functions are defined: the
    Goddard drag grows as exp(-500 (h - 1)) below h = 1)."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        x = p.x0 + 0.1 * (1.0 + np.abs(p.x0)) * rng.standard_normal(p.n)
        yield np.clip(x, p.lb, p.ub)


def fd_jacobian(c, x, h=1e-6):
    cols = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = h * max(1.0, abs(x[j]))
        cols.append((np.asarray(c(x + e)) - np.asarray(c(x - e))) / (2 * e[j]))
    return np.column_stack(cols)


def fd_hessian_of_grad(grad, x, h=1e-6):
    H = fd_jacobian(grad, x, h)
    return 0.5 * (H + H.T)


def close(actual, expected, rtol, what):
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * scale, err_msg=what)


def lagrangian(p):
    """``L(x, sigma, lam)``, written out directly from the problem."""
    if p.constraint is None:
        return lambda x, sigma, lam: sigma * p.fun(x)
    return lambda x, sigma, lam: sigma * p.fun(x) + hnp.sum(lam * p.constraint(x))


# --- the corpus: every derivative IPOPT sees ---------------------------------------------------
def test_the_corpus_is_large_and_varied():
    assert len(NAMES) >= 25
    families = {pc.describe()[name][1] for name in NAMES}
    assert {"hock-schittkowski", "optimal control", "pde", "mechanics", "finance"} <= families
    assert len(pc.names("hock-schittkowski")) >= 20
    assert sum(pc.get(name).minimum is not None for name in NAMES) == len(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_corpus_jacobian_and_lagrangian_hessian(name):
    p = small(name)
    q = ipopt.nlp(p.fun, p.x0, constraints=p.constraints, bounds=p.bounds)
    assert (q.n, q.m) == (p.n, p.m)
    jr, jc = q.jacobianstructure()
    hr, hc = q.hessianstructure()
    assert np.all(hr >= hc)                                   # IPOPT's lower triangle
    assert len(set(zip(hr.tolist(), hc.tolist()))) == len(hr)  # each entry once
    assert len(set(zip(jr.tolist(), jc.tolist()))) == len(jr)
    in_jac = np.zeros((p.m, p.n), bool)
    in_jac[jr, jc] = True
    in_hess = np.zeros((p.n, p.n), bool)
    in_hess[hr, hc] = in_hess[hc, hr] = True
    rng = np.random.default_rng(1)
    f_traced = hg.function(p.fun)
    c_traced = hg.function(p.constraint) if p.m else None
    L = lagrangian(p)
    grad_L = hg.function(hg.grad(L))
    hess_L = hg.hessian(L, detect_sparsity=False)
    for k, x in enumerate(points(p)):
        what = f"{name} at point {k}"
        # objective gradient
        g = q.gradient(x)
        close(g, hg.grad(p.fun)(x), 1e-12, what + ": gradient vs dense")
        close(g, fd_jacobian(lambda z: f_traced(z)[None], x)[0], 1e-6, what + ": gradient vs FD")
        # constraint values and Jacobian
        if p.m:
            close(q.constraints(x), np.asarray(p.constraint(x)), 1e-14, what + ": c(x)")
            J = q.jacobian_matrix(x).toarray()
            dense = hg.jacrev(p.constraint)(x)
            assert not (dense != 0)[~in_jac].any(), what + ": Jacobian pattern misses a nonzero"
            close(J, dense, 1e-12, what + ": Jacobian vs dense")
            close(J, fd_jacobian(c_traced, x), 1e-6, what + ": Jacobian vs FD")
        # the Lagrangian's Hessian, at random multipliers
        sigma, lam = rng.uniform(0.5, 2.0), rng.standard_normal(p.m)
        H = q.hessian_matrix(x, lam, sigma).toarray()
        dense = hess_L(x, sigma, lam)
        assert not (dense != 0)[~in_hess].any(), what + ": Hessian pattern misses a nonzero"
        close(H, dense, 1e-11, what + ": Lagrangian Hessian vs dense")
        close(H, fd_hessian_of_grad(lambda z: grad_L(z, sigma, lam), x), 1e-6,
              what + ": Lagrangian Hessian vs FD")


@pytest.mark.parametrize("name", ["hanging_chain", "goddard", "car_race", "pde_control"])
def test_one_colored_computation_whatever_the_number_of_constraints(name):
    # one batched product of ncolors HVPs per Hessian, not a Hessian per constraint: the
    # colors stay a handful as the number of constraints grows tenfold
    colors = []
    for n in (SMALL[name], 10 * SMALL[name]):
        p = pc.get(name, n=n)
        q = ipopt.nlp(p.fun, p.x0, constraints=p.constraints, bounds=p.bounds)
        H = q.hessian_sparsity
        before = H.nhvp
        q.hessian(p.x0, np.ones(p.m), 1.0)
        info = q.info()
        assert H.nhvp - before == info["hess_colors"] < p.m
        assert info["jac_lower_bound"] <= info["jac_colors"] <= info["jac_lower_bound"] + 3
        colors.append(info["hess_colors"])
    assert colors[0] == colors[1], colors


def test_linear_constraints_contribute_no_hessian():
    f = lambda x: hnp.sum(x[1:] * x[:-1])  # noqa: E731 - tridiagonal Hessian
    A = sp.random(5, 8, density=0.5, random_state=0, format="csr") + sp.eye(5, 8)
    q = ipopt.nlp(f, np.ones(8), constraints=[LinearConstraint(A, -1.0, 1.0),
                                              LinearConstraint(A.toarray(), 0.0, np.inf)])
    rows, cols = q.hessianstructure()
    assert sorted(zip(rows.tolist(), cols.tolist())) == [(i + 1, i) for i in range(7)]
    J = q.jacobian_matrix(np.arange(8.0)).toarray()
    np.testing.assert_array_equal(J, np.vstack([A.toarray(), A.toarray()]))
    np.testing.assert_allclose(q.constraints(np.arange(8.0)),
                               np.concatenate([A @ np.arange(8.0)] * 2))


def test_values_at_one_point_come_from_one_run_and_the_trace_is_made_once():
    calls = {"f": 0, "c": 0}

    def f(x):
        calls["f"] += 1
        return hnp.sum(x ** 2)

    def c(x):
        calls["c"] += 1
        return x[1:] * x[:-1]
    q = ipopt.nlp(f, np.ones(6), constraints=[{"type": "eq", "fun": c}])
    traced = dict(calls)
    runs = []
    values = q._values
    q._values = lambda x: runs.append(1) or values(x)
    x = np.linspace(0.5, 1.5, 6)
    q.objective(x), q.constraints(x), q.objective(x), q.gradient(x), q.jacobian(x)
    q.hessian(x, np.ones(5), 1.0)
    assert len(runs) == 1                                      # f and c: one program run
    q.objective(x + 1.0)
    assert len(runs) == 2                                      # a new point: a new run
    assert calls == traced                                     # the user's code never ran again


def test_structure_and_values_of_sparse_hessians_and_jacobians():
    def f(x, w):
        return hnp.sum(w * x[1:] * x[:-1] ** 2) + hnp.sum(x ** 4)
    x, w = np.linspace(-1.0, 1.0, 30), np.linspace(1.0, 2.0, 29)
    dense = hg.hessian(f, detect_sparsity=False)(x, w)
    for threshold in (0.25, 0.0):                    # the colored path and the dense path
        H = hg.sparse_hessian(f, dense_threshold=threshold)
        for triangle in (None, "lower"):
            rows, cols = H.structure(x, w, triangle=triangle)
            np.testing.assert_allclose(H.values(x, w, triangle=triangle), dense[rows, cols],
                                       rtol=1e-13)
            assert triangle is None or np.all(rows >= cols)
        assert len(H.structure(x, w)[0]) == 3 * 30 - 2
        assert len(H.structure(x, w, triangle="lower")[0]) == 2 * 30 - 1
    with pytest.raises(ValueError, match="triangle must be None or 'lower', got 'upper'"):
        H.values(x, w, triangle="upper")
    plain = hg.sparse_hessian(f, jit_kernels=False)        # no Numba kernels: same values
    np.testing.assert_allclose(plain.values(x, w), dense[plain.structure(x, w)], rtol=1e-13)
    g = lambda x: hnp.sum(x) ** 3 + hnp.sum(x ** 4)  # noqa: E731 - every pair interacts
    full = hg.sparse_hessian(g, dense_threshold=1.0)
    z = np.linspace(0.1, 1.0, 12)
    assert full.info(z)["ncolors"] == 12 and full.info(z)["density"] == 1.0
    np.testing.assert_allclose(full(z).toarray(), hg.hessian(g, detect_sparsity=False)(z),
                               rtol=1e-13)
    c = lambda x: hnp.concatenate([x[1:] ** 2 - x[:-1], hnp.sum(x)[None]])  # noqa: E731
    dense = hg.jacrev(c)(x)
    for threshold in (0.25, 0.0):
        J = hg.sparse_jacobian(c, dense_threshold=threshold)
        rows, cols = J.structure(x)
        assert len(rows) == 2 * 29 + 30              # the detected pattern on both paths
        np.testing.assert_allclose(J.values(x), dense[rows, cols], rtol=1e-13)


# --- hessgrad.scipy.constraint with trust-constr -----------------------------------------------
# trust-constr stops at its barrier's parameter (bounds), 1e-5 from HS071's optimum by default
TIGHT = {"gtol": 1e-12, "xtol": 1e-14, "barrier_tol": 1e-12, "initial_barrier_parameter": 1e-2}

def test_scipy_constraint_drives_trust_constr_to_hs071():
    p = pc.get("hs071")
    obj = hg.scipy.objective(p.fun, sparse_hessian=True)
    con = hg.scipy.constraint(p.constraint, p.cl, p.cu)
    x = np.array([1.5, 4.0, 3.5, 1.5])
    v = np.array([0.7, -1.3])
    np.testing.assert_allclose(con.fun(x), np.asarray(p.constraint(x)), rtol=1e-15)
    assert sp.issparse(con.jac(x)) and sp.issparse(con.hess(x, v))
    np.testing.assert_allclose(con.jac(x).toarray(), hg.jacrev(p.constraint)(x), rtol=1e-13)
    np.testing.assert_allclose(
        con.hess(x, v).toarray(),
        hg.hessian(lambda z: hnp.sum(v * p.constraint(z)), detect_sparsity=False)(x),
        rtol=1e-13)
    res = sp_minimize(obj.fun, p.x0, jac=obj.jac, hess=obj.hess, method="trust-constr",
                      constraints=[con], bounds=p.bounds, options=TIGHT)
    assert res.fun == pytest.approx(p.minimum, rel=1e-7)
    assert con.nhev > 0 and con.njev > 0


def test_scipy_constraint_sees_a_changed_global():
    state = {"scale": 1.0}

    def c(x):
        return state["scale"] * x ** 2
    con = hg.scipy.constraint(c, 0.0, 1.0)
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(con.jac(x).toarray(), np.diag([2.0, 4.0]))
    state["scale"] = 3.0                      # the capture check notices: no stale trace
    np.testing.assert_allclose(con.jac(x).toarray(), np.diag([6.0, 12.0]))
    np.testing.assert_allclose(con.hess(x, np.ones(2)).toarray(), np.diag([6.0, 6.0]))
    np.testing.assert_allclose(con.fun(x), [3.0, 12.0])


def test_scipy_constraint_errors():
    with pytest.raises(TypeError, match="constraint: c must be callable, got int"):
        hg.scipy.constraint(3, 0, 1)
    con = hg.scipy.constraint(lambda x: x ** 2, 0, 1)
    with pytest.raises(TypeError, match=r"constraint.jac: x must be a real array, got dtype "
                                        r"complex128 \(shape \(2,\)\)"):
        con.jac(np.zeros(2, complex))


# --- IPOPT --------------------------------------------------------------------------------------
@needs_ipopt
@pytest.mark.parametrize("name", NAMES)
def test_ipopt_reaches_the_known_optimum(name):
    p = pc.get(name)
    res = ipopt.minimize(p.fun, p.x0, bounds=p.bounds, constraints=p.constraints)
    assert res.success, (name, res.message)
    tol = max(p.rtol, 1e-6) * max(1.0, abs(p.minimum))
    assert abs(res.fun - p.minimum) <= tol, (name, res.fun, p.minimum)
    if p.minimizer is not None:
        np.testing.assert_allclose(res.x, p.minimizer, atol=2e-5 * max(1, np.abs(
            p.minimizer).max()), err_msg=name)
    assert np.all(res.x >= p.lb - 1e-7) and np.all(res.x <= p.ub + 1e-7)
    if p.m:
        g = np.asarray(p.constraint(res.x))
        assert np.all(g >= p.cl - 1e-6) and np.all(g <= p.cu + 1e-6)
        # the multipliers satisfy stationarity: grad f + J^T lam - z_L + z_U = 0
        J = hg.jacrev(p.constraint)(res.x)
        residual = res.jac + J.T @ res.mult_g - res.mult_x_L + res.mult_x_U
        assert np.abs(residual).max() <= 1e-5 * max(1.0, np.abs(res.jac).max()), name


@needs_ipopt
def test_ipopt_accepts_scipys_constraint_forms_and_returns_multipliers():
    # HS071 stated four ways; the same solution and multipliers every time
    f = pc.get("hs071").fun
    prod = lambda x, shift: hnp.prod(x) - shift  # noqa: E731
    norm2 = lambda x: hnp.sum(x ** 2)  # noqa: E731
    forms = [
        [{"type": "ineq", "fun": prod, "args": (25.0,)}, {"type": "eq",
                                                           "fun": lambda x: norm2(x) - 40}],
        [NonlinearConstraint(lambda x: prod(x, 25.0), 0, np.inf),
         NonlinearConstraint(norm2, 40, 40)],
        [hg.scipy.constraint(lambda x: prod(x, 0.0), 25, np.inf),
         hg.scipy.constraint(lambda x: norm2(x)[None], [40], [40])],
        NonlinearConstraint(lambda x: hnp.stack([prod(x, 0.0), norm2(x)]), [25, 40],
                            [np.inf, 40]),
    ]
    bounds = [Bounds(1, 5), [(1, 5)] * 4, Bounds(np.ones(4), np.full(4, 5.0)), [(1, 5)] * 4]
    results = [ipopt.minimize(f, [1, 5, 5, 1], bounds=b, constraints=c)
               for b, c in zip(bounds, forms)]
    for res in results:
        assert res.success and res.nit == 8
        np.testing.assert_allclose(res.x, results[0].x, rtol=1e-7)
        np.testing.assert_allclose(res.mult_g, results[0].mult_g, rtol=1e-7)
    assert [v.shape for v in results[0].v] == [(1,), (1,)]
    assert results[3].v[0].shape == (2,)
    # the signs are trust-constr's: the same problem through SciPy
    obj = hg.scipy.objective(f, sparse_hessian=True)
    tc = sp_minimize(obj.fun, np.array([1.0, 5, 5, 1]), jac=obj.jac, hess=obj.hess,
                     method="trust-constr", bounds=Bounds(1, 5), constraints=forms[2],
                     options=TIGHT)
    np.testing.assert_allclose(np.concatenate(tc.v[:2]), results[0].mult_g, rtol=1e-5)
    np.testing.assert_allclose(np.concatenate(results[2].constr), [25, 40], rtol=1e-7)
    np.testing.assert_allclose(np.concatenate(results[0].constr), [0, 0], atol=1e-7)


@needs_ipopt
def test_ipopt_with_linear_constraints_and_bounds_only():
    # HS035's linear inequality as a LinearConstraint; torsion: bounds only (m = 0)
    p = pc.get("hs035")
    res = ipopt.minimize(p.fun, p.x0, bounds=Bounds(0, np.inf),
                         constraints=LinearConstraint([[1.0, 1.0, 2.0]], -np.inf, 3.0))
    assert res.fun == pytest.approx(1 / 9, abs=1e-8)
    assert res.sparsity["hess_nnz"] == 5 and res.sparsity["jac_nnz"] == 3
    np.testing.assert_allclose(res.mult_g, [2 / 9], rtol=1e-6)  # x1 + x2 + 2 x3 <= 3 active
    p = pc.get("torsion")
    res = ipopt.minimize(p.fun, p.x0, bounds=list(zip(p.lb, p.ub)))
    assert res.success and res.fun == pytest.approx(p.minimum, rel=1e-7)
    assert res.mult_g.shape == (0,) and res.v == [] and res.sparsity["jac_nnz"] == 0


@needs_ipopt
def test_ipopt_each_solve_traces_afresh():
    target = {"value": 1.0}

    def f(x):
        return hnp.sum((x - target["value"]) ** 2)
    res = ipopt.minimize(f, np.zeros(3), constraints={"type": "ineq", "fun": lambda x: x[0]})
    np.testing.assert_allclose(res.x, np.ones(3), atol=1e-7)
    target["value"] = 2.0                    # read from a global: the next solve sees it
    res = ipopt.minimize(f, np.zeros(3), constraints={"type": "ineq", "fun": lambda x: x[0]})
    np.testing.assert_allclose(res.x, np.full(3, 2.0), atol=1e-7)


@needs_ipopt
def test_ipopt_result_reports_iterations_timing_and_options():
    p = pc.get("hanging_chain")
    res = ipopt.minimize(p.fun, p.x0, constraints=p.constraints,
                         options={"maxiter": 3, "disp": 0})
    assert res.status == -1 and not res.success and res.nit == 3
    assert res.message.startswith("Maximum number of iterations exceeded")
    assert [it[0] for it in res.iterations] == [0, 1, 2, 3]
    assert set(res.eval_time) == set(res.ncalls) == set(ipopt.NLP.KINDS)
    assert res.ncalls["hessian"] == res.nhev == 3 and res.setup_time > 0
    with pytest.raises(TypeError, match="IPOPT refused option mu_strategy"):
        ipopt.minimize(p.fun, p.x0, constraints=p.constraints,
                       options={"mu_strategy": 3})


def test_ipopt_errors_name_the_argument():
    f = lambda x: hnp.sum(x ** 2)  # noqa: E731
    with pytest.raises(TypeError, match="minimize: jac= is not supported"):
        ipopt.minimize(f, np.ones(2), jac=lambda x: 2 * x)
    with pytest.raises(TypeError, match="minimize: method= is not supported"):
        ipopt.minimize(f, np.ones(2), method="SLSQP")
    with pytest.raises(TypeError, match="minimize: callback= is not supported"):
        ipopt.minimize(f, np.ones(2), callback=print)
    with pytest.raises(TypeError, match="minimize: fun must be callable, got int"):
        ipopt.nlp(3, np.ones(2))
    with pytest.raises(ValueError, match=r"minimize: x0 must be 1-D, got shape \(2, 2\)"):
        ipopt.nlp(f, np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"minimize: fun must return a scalar, got shape "
                                         r"\(2,\)"):
        ipopt.nlp(lambda x: x ** 2, np.ones(2))
    with pytest.raises(ValueError, match=r"minimize: constraints\[0\]\['type'\] must be "
                                         r"'eq' or 'ineq', got 'le'"):
        ipopt.nlp(f, np.ones(2), constraints=[{"type": "le", "fun": f}])
    with pytest.raises(TypeError, match=r"minimize: constraints\[1\] must be a dict, a "
                                        r"NonlinearConstraint or a LinearConstraint, got str"):
        ipopt.nlp(f, np.ones(2), constraints=[{"type": "eq", "fun": f}, "x >= 0"])
    with pytest.raises(ValueError, match=r"minimize: constraints\[0\]: lb has shape \(3,\), "
                                         r"which does not broadcast to the constraint's 1 "
                                         r"values"):
        ipopt.nlp(f, np.ones(2), constraints=[NonlinearConstraint(f, np.zeros(3), 1.0)])
    with pytest.raises(ValueError, match=r"minimize: constraints\[0\]: A has shape \(1, 3\), "
                                         r"expected 2 columns"):
        ipopt.nlp(f, np.ones(2), constraints=[LinearConstraint(np.ones((1, 3)), 0, 1)])
    with pytest.raises(ValueError, match=r"minimize: bounds have shapes \(3,\) and \(3,\), "
                                         r"which do not broadcast to x0's 2 entries"):
        ipopt.nlp(f, np.ones(2), bounds=Bounds(np.zeros(3), np.ones(3)))
    with pytest.raises(ValueError, match="minimize: tol must be positive"):
        ipopt._options({}, -1.0)


def test_a_missing_cyipopt_says_which_extra_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "cyipopt", None)     # import cyipopt raises ImportError
    assert not ipopt.available()
    with pytest.raises(ImportError, match=r"pip install 'hessgrad\[ipopt\]' installs it \(the "
                                          r"PyPI package cyipopt-wheels"):
        ipopt.minimize(lambda x: hnp.sum(x ** 2), np.ones(2))
