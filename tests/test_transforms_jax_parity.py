"""The functional API where JAX users rely on its conventions: the expected values are JAX's
(computed by hand here, so the suite does not need JAX)."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp


# --- closures over the argument of an outer transform --------------------------------------
# An inner transform called with plain numbers, whose f closes over the outer argument, must
# keep the dependence on it: d/dx [x * d/dy (x y)] = d/dx x^2 = 2x (JAX: 3.0 at x = 1.5).

@pytest.mark.parametrize("outer", ["grad", "jacfwd", "jacrev"])
@pytest.mark.parametrize("inner", ["grad", "jacfwd", "jacrev"])
def test_inner_transform_closing_over_outer_argument(outer, inner):
    f = getattr(hg, outer)(lambda x: x * getattr(hg, inner)(lambda y: x * y)(1.0))
    np.testing.assert_allclose(f(1.5), 3.0)


def test_closures_in_jvp_vjp_linearize_hessian_hvp():
    x = np.array([0.5, -1.0, 2.0])
    v = np.array([1.0, 2.0, -1.0])
    # d/dx of the tangent x * 1 of y -> x y
    assert float(hg.jvp(lambda x: hg.jvp(lambda y: x * y, (2.0,), (1.0,))[1],
                        (3.0,), (1.0,))[1]) == 1.0
    np.testing.assert_allclose(hg.grad(lambda x: hnp.sum(
        hg.vjp(lambda y: x * y, np.ones(3))[1](np.ones(3))[0]))(x), np.ones(3))
    assert float(hg.grad(lambda x: hg.linearize(lambda y: x * y ** 2, 2.0)[1](1.0))(1.5)) == 4.0
    # the Hessian of sum(x y^3) at y = 1 is diag(6 x): its sum has gradient 6
    np.testing.assert_allclose(hg.grad(lambda x: hnp.sum(
        hg.hessian(lambda y: hnp.sum(x * y ** 3))(np.ones(3))))(x), np.full(3, 6.0))
    # H v = 6 x y v at y = 1: the gradient of its sum is 6 v
    for product in (lambda f, y: hg.hvp(f)(y, v), lambda f, y: hg.make_hvp(f)(y)(v)):
        np.testing.assert_allclose(hg.grad(lambda x: hnp.sum(
            product(lambda y: hnp.sum(x * y ** 3), np.ones(3))))(x), 6.0 * v)


def test_closures_inside_function_and_tape():
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(hg.function(
        lambda x: hg.grad(lambda y: hnp.sum(x * y ** 2))(np.ones(3)))(x), 2.0 * x)
    np.testing.assert_allclose(hg.function(
        lambda x: hg.hessian(lambda y: hnp.sum(x * y ** 3))(np.ones(3)))(x), np.diag(6.0 * x))
    t = hg.constant(3.0)
    with hg.GradientTape() as tape:
        tape.watch(t)
        g = hg.grad(lambda y: t * y * y)(1.0)  # 2 t
    assert float(g) == 6.0 and float(tape.gradient(g, t)) == 2.0


# --- outputs that are not one number ------------------------------------------------------

def test_hessian_of_structured_output_is_jacfwd_of_jacrev():
    x = np.array([0.5, -1.0, 2.0])
    h_sum, h_sq = hg.hessian(lambda x: (hnp.sum(x ** 3), x ** 2))(x)
    np.testing.assert_allclose(h_sum, np.diag(6.0 * x))
    np.testing.assert_allclose(h_sq, 2.0 * np.einsum("ij,ik->ijk", np.eye(3), np.eye(3)))


def test_grad_of_a_function_returning_no_number_raises():
    with pytest.raises(TypeError, match="grad requires a function returning a number, but it "
                                        "returned NoneType"):
        hg.grad(lambda x: None)(np.ones(3))
    with pytest.raises(TypeError, match="returned str"):
        hg.grad(lambda x: "loss")(np.ones(3))
    with pytest.raises(TypeError, match="returned a tuple of 2; if it returns .value, aux., "
                                        "pass has_aux=True"):
        hg.grad(lambda x: (hnp.sum(x), x))(np.ones(3))


# --- None in arguments and results: a structure with no leaves ----------------------------

def test_none_leaves_have_no_derivatives():
    x = np.array([1.0, 2.0, 3.0])
    v = np.ones(3)
    p = {"a": x, "b": None}
    f = lambda p: hnp.sum(p["a"] ** 3)  # noqa: E731
    g = hg.grad(f)(p)
    assert g["b"] is None
    np.testing.assert_allclose(g["a"], 3 * x ** 2)
    assert hg.grad(lambda q: hnp.sum(q[0] ** 2))((x, None))[1] is None
    assert hg.grad(lambda x, opt: hnp.sum(x ** 2), argnums=1)(x, None) is None
    for jac in (hg.jacrev, hg.jacfwd):
        J = jac(lambda x: {"y": 2 * x, "none": None})(x)
        assert J["none"] is None
        np.testing.assert_allclose(J["y"], 2 * np.eye(3))
    y, t = hg.jvp(lambda p: {"y": 2 * p["a"], "z": None}, (p,), ({"a": v, "b": None},))
    assert y["z"] is None and t["z"] is None
    np.testing.assert_allclose(t["y"], 2 * v)
    _, pullback = hg.vjp(lambda p: {"y": 2 * p["a"], "z": None}, p)
    (ct,) = pullback({"y": v, "z": None})
    assert ct["b"] is None
    np.testing.assert_allclose(ct["a"], 2 * v)
    hv = hg.hvp(f)(p, {"a": v, "b": None})
    assert hv["b"] is None
    np.testing.assert_allclose(hv["a"], 6 * x)
    H = hg.hessian(f)(p)
    assert H["b"] is None and H["a"]["b"] is None
    np.testing.assert_allclose(H["a"]["a"], np.diag(6 * x))


# --- user mistakes: clear errors, never leaves paired with the wrong ones -------------------

def test_tangents_cotangents_and_vectors_must_be_structured_like_their_arguments():
    x = np.array([1.0, 2.0, 3.0])
    p = {"w": np.ones((3, 2)), "b": np.ones(2)}
    f = lambda p: hnp.sum(hnp.tanh(hnp.dot(x, p["w"]) + p["b"]) ** 2)  # noqa: E731
    with pytest.raises(TypeError, match=r"jvp: primals and tangents must be tuples or lists.*"
                                        r"got ndarray and ndarray"):
        hg.jvp(lambda x: 2 * x, x, x)
    with pytest.raises(ValueError, match=r"jvp: tangents\[0\] has shape \(4,\), expected "
                                         r"\(3,\), the shape of primals\[0\]"):
        hg.jvp(lambda x: 2 * x, (x,), (np.ones(4),))
    with pytest.raises(ValueError, match=r"jvp: tangents\[0\] is a list of 2, expected a dict "
                                         r"with keys \['b', 'w'\] like primals\[0\]"):
        hg.jvp(f, (p,), ([p["b"], p["w"]],))
    # a cotangent with another key was used for the output's "b" (silently wrong)
    _, pullback = hg.vjp(lambda x: {"a": x, "b": 2 * x}, x)
    with pytest.raises(ValueError, match=r"vjp: cotangent is a dict of 2 with keys \['a', 'c'\], "
                                         r"expected a dict with keys \['a', 'b'\]"):
        pullback({"a": x, "c": x})
    with pytest.raises(ValueError, match=r"hvp: v is a dict of 1 with keys \['w'\], expected a "
                                         r"dict with keys \['b', 'w'\] like args\[0\]"):
        hg.hvp(f)(p, {"w": p["w"]})
    with pytest.raises(TypeError, match=r"hvp: call as hvp\(f\)\(\*args, v\)"):
        hg.hvp(f)(p)
    with pytest.raises(ValueError, match=r"jvp: tangents\[0\] is a list of 3, expected an "
                                         r"array like primals\[0\]"):
        hg.jvp(lambda x: 2 * x, (x,), ([1.0, 0.0, 0.0],))  # as JAX: a list is a structure


@pytest.mark.parametrize("argnums", [1.0, "x", (), (0, 1.5)])
def test_argnums_must_be_ints(argnums):
    with pytest.raises(TypeError, match="grad: argnums must be an int or a non-empty tuple "
                                        "of ints, got"):
        hg.grad(lambda x, y: hnp.sum(x * y), argnums=argnums)(np.ones(2), np.ones(2))


# --- JAX's has_aux and holomorphic arguments ------------------------------------------------

def test_has_aux_of_jvp_linearize_and_hessian():
    x = np.array([1.0, 2.0, 3.0])
    v = np.array([1.0, 0.0, -1.0])
    f = lambda x: (x ** 2, {"s": hnp.sum(x)})  # noqa: E731
    y, t, aux = hg.jvp(f, (x,), (v,), has_aux=True)
    np.testing.assert_allclose(t, 2 * x * v)
    assert float(aux["s"]) == 6.0 and isinstance(aux["s"], (np.ndarray, np.generic))
    y, f_jvp, aux = hg.linearize(f, x, has_aux=True)
    np.testing.assert_allclose(f_jvp(v), 2 * x * v)
    assert float(aux["s"]) == 6.0
    H, aux = hg.hessian(lambda x: (hnp.sum(x ** 3), x[0]), has_aux=True)(x)
    np.testing.assert_allclose(H, np.diag(6 * x))
    assert float(aux) == 1.0


def test_holomorphic():
    z = np.array([1.0 + 2.0j, 3.0 - 1.0j])
    np.testing.assert_allclose(hg.grad(lambda z: z ** 2, holomorphic=True)(3.0 + 4.0j),
                               6.0 + 8.0j)
    for jac in (hg.jacrev, hg.jacfwd):
        np.testing.assert_allclose(jac(lambda z: z ** 2, holomorphic=True)(z), np.diag(2 * z))
    np.testing.assert_allclose(hg.hessian(lambda z: hnp.sum(z ** 3), holomorphic=True)(z),
                               np.diag(6 * z))
    with pytest.raises(TypeError, match="grad with holomorphic=True requires inputs with "
                                        "complex dtype, but got float64"):
        hg.grad(lambda z: z ** 2, holomorphic=True)(3.0)
    # forward mode pushes real unit tangents only: for non-holomorphic f (|z|) it would give
    # the derivative along the real axis, which jacrev does not (JAX refuses it as well)
    with pytest.raises(TypeError, match="jacfwd of complex inputs requires holomorphic=True"):
        hg.jacfwd(lambda z: hnp.abs(z))(z)


def test_hessian_blocks_have_the_dtype_of_their_row_argument():
    # H[i][j] is the derivative of gradient i (dtype of argument i) w.r.t. argument j
    x, y = np.array([0.5, -1.0], np.float32), np.array([2.0, 1.0])
    H = hg.hessian(lambda x, y: hnp.sum(x ** 2 * y), argnums=(0, 1))(x, y)
    assert [[b.dtype for b in row] for row in H] == [[np.float32] * 2, [np.float64] * 2]
    np.testing.assert_allclose(H[0][1], np.diag(2 * x))
    np.testing.assert_allclose(H[1][0], np.diag(2 * x))


@pytest.mark.parametrize("argnums", [(0, 0), (1, -1)])
def test_argnums_naming_an_argument_twice_raises(argnums):
    # the first of the two gradients came back as zeros
    with pytest.raises(ValueError, match=r"grad: argnums=.* names an argument twice"):
        hg.grad(lambda x, y: hnp.sum(x * y), argnums=argnums)(np.ones(2), np.ones(2))


def test_make_hvp_refuses_none_leaves_clearly():
    # it said "hvp: v['b'] is an array, expected None", of a vector the caller never passed
    with pytest.raises(TypeError, match=r"make_hvp: argument\(s\) \[0\] hold None leaves"):
        hg.make_hvp(lambda p: hnp.sum(p["a"] ** 3))({"a": np.ones(2), "b": None})
