"""Transforms of scalar functions (grad, value_and_grad, hvp, hessian) refuse outputs they
cannot differentiate, as JAX does: a complex output (they would silently differentiate its
real part) unless ``holomorphic=True``, and an integer or boolean one (they would silently
give zeros). ``check_grads`` checks complex functions as complex."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.engine.registry import primitive
from hessgrad.ops.elementwise import conjugate, cos
from hessgrad.testing import check_grads

Z = np.array([0.3 + 0.2j, 1.0 - 0.5j])
X = np.array([1.0, 2.0])

COMPLEX = r"requires real-valued outputs .* got complex128\. For holomorphic differentiation, " \
          r"pass holomorphic=True"
INTEGER = r"requires real-valued outputs .* got {}\. For differentiation of functions with " \
          r"integer outputs, use hessgrad.vjp"


def _holo(z):
    return hnp.sum(hnp.sin(z) * z)


SCALAR_TRANSFORMS = [
    ("grad", lambda f, **kw: lambda x: hg.grad(f, **kw)(x)),
    ("grad", lambda f, **kw: lambda x: hg.grad(f, argnums=(0,), **kw)(x)),
    ("grad", lambda f, **kw: lambda x: hg.value_and_grad(f, **kw)(x)),
    ("grad", lambda f, **kw: lambda x: hg.function(hg.grad(f, **kw))(x)),
    ("hvp", lambda f, **kw: lambda x: hg.hvp(f, **kw)(x, x)),
    ("hvp", lambda f, **kw: lambda x: hg.hvp(f, mode="fwd-rev", **kw)(x, x)),
    ("hvp", lambda f, **kw: lambda x: hg.hvp(f, mode="rev-rev", **kw)(x, x)),
    ("hvp", lambda f, **kw: lambda x: hg.hvp(f, mode="rev-fwd", **kw)(x, x)),
    ("hvp", lambda f, **kw: lambda x: hg.function(lambda y: hg.hvp(f, **kw)(y, y))(x)),
    ("hessian", lambda f, **kw: lambda x: hg.hessian(f, **kw)(x)),
    ("hessian", lambda f, **kw: lambda x: hg.hessian(f, **kw)(hg.constant(x))),
]
IDS = ["grad", "grad_argnums", "value_and_grad", "grad_traced", "hvp", "hvp_fwd_rev",
       "hvp_rev_rev", "hvp_rev_fwd", "hvp_traced", "hessian", "hessian_tensor"]


@pytest.mark.parametrize("name,transform", SCALAR_TRANSFORMS, ids=IDS)
def test_complex_output_raises_unless_holomorphic(name, transform):
    # (hessian names the complex input first, as JAX's jacfwd does)
    with pytest.raises(TypeError, match=f"{name} ({COMPLEX}|of complex inputs requires "
                                        "holomorphic=True)"):
        transform(_holo)(Z)
    with pytest.raises(TypeError, match=f"{name} {COMPLEX}"):  # complex output, real input
        transform(lambda x: hnp.sum(x ** 2) * (1 + 1j))(X)
    transform(_holo, holomorphic=True)(Z)  # the complex derivative
    with pytest.raises(TypeError, match=f"{name} with holomorphic=True requires outputs with "
                                        "complex dtype, but got float64"):
        transform(lambda z: hnp.sum(hnp.abs(z) ** 2), holomorphic=True)(Z)


@pytest.mark.parametrize("name,transform", SCALAR_TRANSFORMS, ids=IDS)
def test_integer_and_boolean_outputs_raise(name, transform):
    with pytest.raises(TypeError, match=f"{name} {INTEGER.format('bool')}"):
        transform(lambda x: hnp.sum(x) > 0)(X)
    with pytest.raises(TypeError, match=f"{name} {INTEGER.format('int64')}"):
        transform(lambda x: hnp.argmax(x * x))(X)


def test_real_outputs_of_complex_inputs_still_differentiate():
    g = hg.grad(lambda z: hnp.sum(hnp.abs(z) ** 2))(Z)
    np.testing.assert_allclose(g, 2 * np.conj(Z))  # dL/dx - i dL/dy
    np.testing.assert_allclose(hg.grad(lambda x: 3.0)(X), 0.0)  # a constant float is fine


def test_holomorphic_derivatives_are_complex_derivatives():
    np.testing.assert_allclose(hg.grad(_holo, holomorphic=True)(Z), np.cos(Z) * Z + np.sin(Z))
    second = 2 * np.cos(Z) - Z * np.sin(Z)
    np.testing.assert_allclose(hg.hvp(_holo, holomorphic=True)(Z, np.ones(2)), second)
    np.testing.assert_allclose(hg.hessian(_holo, holomorphic=True)(Z), np.diag(second))


def test_structurally_zero_hessian_still_checks_the_output():
    # a linear complex output has an empty Hessian pattern: no product runs
    x = np.arange(1.0, 70.0)
    with pytest.raises(TypeError, match=f"hessian {COMPLEX}"):
        hg.hessian(lambda x: hnp.sum(x) * 1j)(x)
    with pytest.raises(TypeError, match=f"hessian {INTEGER.format('int64')}"):
        hg.hessian(lambda x: hnp.argmax(x))(x)
    np.testing.assert_array_equal(hg.hessian(lambda x: hnp.sum(x) * 2.0)(x), 0.0)


# Jacobians and Hessians refuse what JAX refuses --------------------------------------------------
JACREV = [("jacrev", hg.jacrev), ("jacrev", hg.jacobian),
          ("jacrev", lambda f, **kw: hg.function(hg.jacrev(f, **kw))),
          ("jacrev", lambda f, **kw: lambda x: hg.jacrev(f, argnums=(0,), **kw)(x)[0])]


@pytest.mark.parametrize("name,jac", JACREV, ids=["jacrev", "jacobian", "traced", "argnums"])
def test_jacrev_refuses_complex_integer_and_boolean_outputs(name, jac):
    # it gave the Jacobian of the real part of a complex output, and zeros for integer ones
    with pytest.raises(TypeError, match=f"{name} {COMPLEX}"):
        jac(lambda x: x * (1 + 2j))(X)
    with pytest.raises(TypeError, match=f"{name} {COMPLEX}"):
        jac(lambda z: hnp.sin(z) * z)(Z)
    with pytest.raises(TypeError, match=f"{name} {COMPLEX}"):  # any complex leaf of a dict
        jac(lambda x: {"re": x ** 2, "c": x * 1j})(X)
    with pytest.raises(TypeError, match=f"{name} {INTEGER.format('bool')}"):
        jac(lambda x: x > 1.5)(X)
    with pytest.raises(TypeError, match=f"{name} {INTEGER.format('int64')}"):
        jac(lambda x: hnp.argsort(x))(X)
    with pytest.raises(TypeError, match=f"{name} with holomorphic=True requires outputs with "
                                        "complex dtype, but got float64"):
        jac(lambda z: hnp.abs(z) ** 2, holomorphic=True)(Z)
    np.testing.assert_allclose(jac(lambda z: hnp.sin(z) * z, holomorphic=True)(Z),
                               np.diag(np.cos(Z) * Z + np.sin(Z)))
    # a real output of complex input: dL/dx - i dL/dy, as JAX
    np.testing.assert_allclose(jac(lambda z: hnp.abs(z) ** 2)(Z), np.diag(2 * np.conj(Z)))


def test_jacfwd_takes_complex_outputs_of_real_inputs():
    # JAX's jacfwd too: real unit tangents give the whole (complex) derivative
    np.testing.assert_allclose(hg.jacfwd(lambda x: hnp.exp(1j * x))(X),
                               np.diag(1j * np.exp(1j * X)))


@pytest.mark.parametrize("hessian", [
    hg.hessian, lambda f: hg.function(hg.hessian(f)),
    lambda f: lambda z: hg.hessian(f)(hg.constant(z)),
    lambda f: lambda z: hg.hessian(f, argnums=(0,))(z)], ids=["eager", "traced", "tensor", "tuple"])
def test_hessian_of_complex_inputs_requires_holomorphic(hessian):
    # it gave the second derivatives along the real axes only (2 I for |z|^2, whose real
    # Hessian has 2 I in both x and y); JAX refuses through jacfwd
    with pytest.raises(TypeError, match="hessian of complex inputs requires holomorphic=True "
                                        r"\(as in JAX\), but got complex128 for argument 0"):
        hessian(lambda z: hnp.sum(hnp.abs(z) ** 2))(Z)
    with pytest.raises(TypeError, match="hessian of complex inputs requires holomorphic=True"):
        hessian(lambda z: hnp.sum(hnp.sin(z) * z).real)(Z)
    # the holomorphic second derivative, and an HVP along a complex direction, still work
    np.testing.assert_allclose(hg.hessian(_holo, holomorphic=True)(Z),
                               np.diag(2 * np.cos(Z) - Z * np.sin(Z)))
    v = np.array([1j, 0.5])
    np.testing.assert_allclose(hg.hvp(lambda z: hnp.sum(hnp.abs(z) ** 2))(Z, v), 2 * np.conj(v))


# check_grads checks complex functions as complex -----------------------------------------------
_wrong_conj_sin = primitive(  # d sin(z) = cos(z) dz, not conj(cos(z)) dz
    "test_wrong_conjugate_sin", np.sin,
    vjp=[lambda g, ans, x: g * conjugate(cos(x))], jvp=[lambda t, ans, x: t * conjugate(cos(x))])
_wrong_conj_sin_vjp = primitive(  # right JVP, conjugated VJP
    "test_wrong_conjugate_sin_vjp", np.sin,
    vjp=[lambda g, ans, x: g * conjugate(cos(x))], jvp=[lambda t, ans, x: t * cos(x)])


@pytest.mark.parametrize("f,z", [
    (lambda z: hnp.sin(z) * z, Z),
    (lambda z: hnp.abs(z) ** 2 + hnp.real(z * z), Z),        # real output of complex input
    (lambda x: hnp.exp(1j * x) * x, np.array([0.3, 1.2])),   # complex output of real input
    (lambda z: hnp.conj(z) * hnp.exp(z), Z[:, None] * Z),    # not holomorphic
])
def test_check_grads_passes_correct_complex_rules(f, z):
    check_grads(f, (z,), order=2)


@hg.custom_gradient
def _custom_conj_sin(z):  # the same mistake in a custom gradient
    return hnp.sin(z), lambda g: g * conjugate(cos(z))


@pytest.mark.parametrize("prim,modes,what", [
    (_wrong_conj_sin, ("fwd", "rev"), "forward-mode"),
    (_wrong_conj_sin, ("rev",), "reverse-mode"),
    (_wrong_conj_sin_vjp, ("fwd", "rev"), "reverse-mode"),
    (_custom_conj_sin, ("rev",), "reverse-mode"),
])
def test_check_grads_fails_a_wrong_conjugate_rule(prim, modes, what):
    with pytest.raises(AssertionError, match=f"check_grads: {what} derivative is wrong"):
        check_grads(lambda z: prim(z) * z, (Z,), modes=modes)
    check_grads(lambda x: prim(x) * x, (Z.real,), modes=modes)  # real input cannot tell
