"""hessgrad.numpy.vectorize: numpy's generalized-ufunc semantics (broadcast loop dimensions,
signatures, excluded arguments) on hessgrad.vmap, against numpy.vectorize's loop and
jax.numpy.vectorize, differentiable to second order."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.engine.state import THREAD
from hessgrad.testing import check_grads

rng = np.random.default_rng(0)


def r(*shape):
    return rng.standard_normal(shape)


def _numpy(f, signature=None, excluded=None):
    """numpy.vectorize of ``f`` run on hessgrad values (a Python loop), results as arrays."""
    def plain(*args, **kwargs):
        out = f(*args, **kwargs)
        if isinstance(out, tuple):
            return tuple(np.asarray(o.numpy() if isinstance(o, hg.Tensor) else o) for o in out)
        return np.asarray(out.numpy() if isinstance(out, hg.Tensor) else out)
    return np.vectorize(plain, signature=signature, excluded=excluded or set())


CASES = [
    ("scalar-broadcast", lambda a, b: hnp.sin(a) * b + a ** 2, None, (r(4, 1), r(3))),
    ("scalar-0d-and-array", lambda a, b: a * hnp.exp(b), None, (np.float64(0.5), r(2, 3))),
    ("matvec", lambda m, v: m @ v, "(m,n),(n)->(m)", (r(2, 1, 3, 4), r(5, 4))),
    ("shared-matrix", lambda m, v: hnp.tanh(m @ v), "(m,n),(n)->(m)", (r(3, 4), r(6, 4))),
    ("two-outputs", lambda v: (hnp.sum(v ** 2), v / hnp.sqrt(hnp.sum(v ** 2))), "(n)->(),(n)",
     (r(3, 4),)),
    ("new-output-dim", lambda a, b: hnp.stack([a + b, a * b]), "(),()->(k)", (r(4, 1), r(1, 3))),
    ("solve", lambda m, b: hnp.linalg.solve(m @ m.T + np.eye(3), b), "(n,n),(n)->(n)",
     (r(2, 3, 3), r(4, 1, 3))),
    ("no-loop", lambda m, v: m @ v, "(m,n),(n)->(m)", (r(3, 4), r(4))),
]
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("name,f,signature,args", CASES, ids=IDS)
def test_equals_numpy_vectorize(name, f, signature, args):
    got = hnp.vectorize(f, signature=signature)(*args)
    want = _numpy(f, signature)(*args)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        assert isinstance(g, np.ndarray) and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,f,signature,args", CASES, ids=IDS)
def test_against_jax(name, f, signature, args):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    jf = {"scalar-broadcast": lambda a, b: jnp.sin(a) * b + a ** 2,
          "scalar-0d-and-array": lambda a, b: a * jnp.exp(b),
          "matvec": lambda m, v: m @ v, "no-loop": lambda m, v: m @ v,
          "shared-matrix": lambda m, v: jnp.tanh(m @ v),
          "two-outputs": lambda v: (jnp.sum(v ** 2), v / jnp.sqrt(jnp.sum(v ** 2))),
          "new-output-dim": lambda a, b: jnp.stack([a + b, a * b]),
          "solve": lambda m, b: jnp.linalg.solve(m @ m.T + jnp.eye(3), b)}[name]
    want = jnp.vectorize(jf, signature=signature)(*args)
    got = hnp.vectorize(f, signature=signature)(*args)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-10, atol=1e-12)


def test_derivatives_first_and_second_order():
    matvec = hnp.vectorize(lambda m, v: hnp.tanh(m @ v), signature="(m,n),(n)->(m)")
    check_grads(matvec, (r(2, 1, 3, 4), r(5, 4)), order=2, modes=("fwd", "rev"))
    scalar = hnp.vectorize(lambda a, b: hnp.sin(a) * b)
    check_grads(scalar, (r(4, 1), r(3)), order=2, modes=("fwd", "rev"))


def test_gradient_against_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    M, V = r(2, 3, 4), r(2, 4)
    fh = hnp.vectorize(lambda m, v: hnp.sum(hnp.tanh(m @ v) ** 2), signature="(m,n),(n)->()")
    fj = jnp.vectorize(lambda m, v: jnp.sum(jnp.tanh(m @ v) ** 2), signature="(m,n),(n)->()")
    got = hg.hessian(lambda v: hnp.sum(fh(M, v)))(V)
    want = jax.hessian(lambda v: jnp.sum(fj(M, v)))(V)
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-10, atol=1e-12)


def test_excluded_positions_and_keywords():
    f = hnp.vectorize(lambda x, p, scale=1.0, shift=0.0: scale * x ** p + shift,
                      excluded={1, "shift"})
    x = np.arange(4.0).reshape(2, 2)
    # the excluded shift reaches every call whole: each member's result has its shape
    np.testing.assert_allclose(f(x, 2, shift=np.array([1.0, 2.0])),
                               x[..., None] ** 2 + np.array([1.0, 2.0]))
    # a keyword argument that is not excluded is vectorized (broadcast) like a positional one
    np.testing.assert_allclose(f(x, 3, scale=np.array([[1.0], [2.0]])),
                               np.array([[1.0], [2.0]]) * x ** 3)
    # None positional arguments are passed as they are
    g = hnp.vectorize(lambda x, y: x * 2 if y is None else x * y)
    np.testing.assert_allclose(g(x, None), 2 * x)


def test_traces_are_kept_between_calls():
    calls = []

    def f(a, b):
        if isinstance(a, hg.Tensor) and a.is_symbolic and not THREAD.state.capturing:
            calls.append(1)
        return a * b
    vf = hnp.vectorize(f)
    for _ in range(3):
        vf(r(4, 1), r(3))
    assert len(calls) == 1


def test_tensors_in_tensors_out():
    out = hnp.vectorize(lambda a: a * 2)(hg.constant(r(3)))
    assert isinstance(out, hg.Tensor)


def test_errors():
    matvec = hnp.vectorize(lambda m, v: m @ v, signature="(m,n),(n)->(m)")
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'n': 4 vs 3"):
        matvec(r(5, 3, 4), r(3))
    with pytest.raises(ValueError, match=r"argument 1 has shape \(\), which does not have enough "
                                         r"dimensions for its core dimensions \('n',\)"):
        matvec(r(3, 4), np.float64(1.0))
    with pytest.raises(TypeError, match="wrong number of positional arguments: expected 2, "
                                        "got 3"):
        matvec(r(3, 4), r(4), r(4))
    with pytest.raises(TypeError, match=r"keyword arguments \['v'\] are not part of the "
                                        "signature"):
        matvec(r(3, 4), v=r(4))
    with pytest.raises(ValueError, match=r"loop dimensions \[\(2,\), \(3,\)\].*do not "
                                         "broadcast"):
        hnp.vectorize(lambda a, b: a + b)(r(2), r(3))
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
        hnp.vectorize(lambda a: a, signature="(n)->(")
    with pytest.raises(ValueError, match="contains negative numbers"):
        hnp.vectorize(lambda a: a, excluded={-1})
    with pytest.raises(TypeError, match="excluded must hold ints"):
        hnp.vectorize(lambda a: a, excluded={1.5})
    with pytest.raises(TypeError, match="must return a tuple of 2 outputs"):
        hnp.vectorize(lambda v: v, signature="(n)->(),(n)")(r(3, 2))
    with pytest.raises(ValueError, match=r"output 0 has core shape \(2,\) per member, but the "
                                         r"signature gives it core dimensions \(\)"):
        hnp.vectorize(lambda v: v, signature="(n)->()")(r(3, 2))
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'n': 2 vs 4"):
        hnp.vectorize(lambda v: hnp.concatenate([v, v]), signature="(n)->(n)")(r(3, 2))
