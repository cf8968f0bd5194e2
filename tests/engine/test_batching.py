"""Batched execution of traced graphs (``Function.map``, ``make_hvp(...).batched``) equals
running once per batch member, for every op with a batching rule and for the fallback."""

import warnings

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.ops import core

rng = np.random.default_rng(0)
A = rng.standard_normal((4, 3))
B = rng.standard_normal((2, 3, 5))

_ROT = np.array([[0.0, 3.0], [-3.0, 0.0]])
FUNCTIONS = {
    "elementwise-broadcast": lambda x: hnp.sin(x) * A + hnp.exp(x[:1]) / (2.0 + x ** 2),
    "where-maximum": lambda x: hnp.where(x > 0, x ** 3, -x) + hnp.maximum(x, 0.1 * x),
    "getitem-basic": lambda x: x[1:, ::-1] * x[0],
    "getitem-advanced": lambda x: x[np.array([0, 0, 2])] + x[np.array([1, 1, 1]), np.array([0, 2, 2])][:, None],
    "getitem-separated-advanced": lambda x: x[np.array([0, 1]), :, np.array([1, 0])],
    # an integer beside an array index is advanced too: separated by a slice, None or ...
    "getitem-int-slice-array": lambda x: x[1, :, np.array([0, 1, 1])]
    + x[np.array([1, 0, 1]), ..., 0],
    "getitem-int-none-array": lambda x: x[1, None, np.array([0, 2, 2])],
    "reductions": lambda x: hnp.sum(x, axis=0)[None, :] * hnp.mean(x ** 2, axis=-1, keepdims=True)
    + hnp.max(x, axis=1)[:, None],
    "reshape-transpose": lambda x: hnp.reshape(x, (3, 4)).T @ hnp.ones((3, 2)),
    "matmul-mat-vec": lambda x: A @ hnp.tanh(x[0]),
    "matmul-vec-mat": lambda x: hnp.tanh(x[:, 0]) @ A,
    "matmul-stacked": lambda x: hnp.matmul(hnp.reshape(x, (2, 2, 3)), B),
    "matmul-both": lambda x: x.T @ x,
    # a constant vector times a batched one, either side (the left one was contracted with
    # the batch axis)
    "matmul-vec-vec": lambda x: (A[0] @ hnp.tanh(x[0])) * x[1] + hnp.sin(x[2]) @ A[1],
    "matmul-vec-stacked": lambda x: A[0] @ hnp.reshape(x, (2, 3, 2)),
    "einsum": lambda x: hnp.einsum("ij,kj->ik", x, A)[:3, :3]
    + hnp.einsum("ii->i", x[:3, :3])[:, None],
    "concatenate-stack": lambda x: hnp.concatenate([x, A[:, :1] ** 2], axis=-1)
    + hnp.stack([x[:, 0], x[:, 1], x[:, 2], x[:, 0]], axis=1),
    "broadcast-sum_to": lambda x: hnp.sum(hnp.broadcast_to(x[:, :1], (2, 4, 3)), axis=0),
    # eig/eigvals of stacked matrices (a complex pair through phase-invariant functions)
    "eig-stacked": lambda x: hnp.real(hnp.linalg.eigvals(hnp.reshape(x, (3, 2, 2)) + _ROT) ** 2)
    [..., None] + hnp.abs(hnp.linalg.eig(hnp.reshape(x, (3, 2, 2)) + _ROT)[1]) ** 2,
    "ldexp-i0-nextafter": lambda x: hnp.ldexp(x, np.array([1, -1, 2])) * hnp.i0(x)
    + hnp.nextafter(x ** 2, 0.0),
    "logsumexp-det": lambda x: hg.reduce_logsumexp(x, axis=1) * hnp.linalg.det(
        x[:3, :3] + 3 * np.eye(3)),
    # a batched stack of matrices times one vector (ran once per member before)
    "matmul-batched-vec": lambda x: hnp.tanh(x) @ A[0]
    + hnp.reshape(hnp.reshape(x, (2, 2, 3)) @ A[1], (4,)),
    "along-axis": lambda x: hnp.cumsum(x, axis=1) * hnp.sort(x, axis=0)
    + hnp.stack(core.unstack(x, axis=1)[::-1], axis=1)[:, :2].sum() + hnp.cumprod(x, axis=0),
    "linalg-stacked": lambda x: hnp.linalg.solve(x[:3] @ x[:3].T + 3 * np.eye(3), x[3])
    + hnp.linalg.inv(x[1:] * x[1:] + np.eye(3)) @ x[0]
    * hnp.linalg.slogdet(x[:3] @ x[:3].T + np.eye(3))[1],
    # one matrix, a batch of right-hand sides: one solve with more columns
    "solve-shared-matrix": lambda x: hnp.linalg.solve(A[:3] @ A[:3].T + np.eye(3), x[:3].T ** 2),
}


def _x(name):
    shape = (2, 3, 2) if name in ("getitem-separated-advanced", "getitem-int-slice-array") \
        else (4, 3)
    if name in ("reshape-transpose", "eig-stacked"):
        shape = (4, 3)
    return rng.standard_normal(shape)


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_map_equals_loop(name):
    f = FUNCTIONS[name]
    x = _x(name)
    X = np.stack([x + 0.1 * j for j in range(5)])
    traced = hg.function(f)
    loop = np.stack([np.asarray(traced(X[j])) for j in range(5)])
    np.testing.assert_allclose(traced.map(X), loop, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_batched_hvp_equals_hvp_columns(name):
    f = FUNCTIONS[name]
    loss = lambda x: hnp.sum(f(x) ** 2)  # noqa: E731
    x = _x(name)
    V = rng.standard_normal((6,) + x.shape)
    product = hg.make_hvp(loss)(x)
    columns = np.stack([hg.hvp(loss)(x, V[j]) for j in range(6)])
    np.testing.assert_allclose(product.batched(V), columns, rtol=1e-10, atol=1e-10)


def test_hessian_in_chunks_matches_single_batch(monkeypatch):
    f = lambda x: hnp.sum(hnp.tanh(A @ x) ** 2) + hnp.sum(x ** 4)  # noqa: E731
    x = rng.standard_normal(3)
    full = hg.hessian(f)(x)
    monkeypatch.setattr(hg.engine.batching, "BATCH_BYTES", 1)  # one column per batch
    np.testing.assert_allclose(hg.hessian(f)(x), full, rtol=1e-12)


def test_operator_matmat_is_batched_and_counts_products():
    f = lambda x: hnp.sum(hnp.exp(A @ x))  # noqa: E731
    x = rng.standard_normal(3)
    H = hg.HessianOperator(f, x)
    dense = H.matmat(np.eye(3))
    assert H.nmatvec == 3
    np.testing.assert_allclose(dense, hg.hessian(f)(x), rtol=1e-12)


def test_map_errors():
    with pytest.raises(ValueError, match="leading batch axis"):
        hg.function(lambda x, y: x * y).map(np.ones((2, 3)), np.ones((3, 3)))


@pytest.mark.parametrize("V", [
    np.eye(5)[[3, 0, 4]],                           # unit rows: gathered columns
    np.eye(5)[[3, 0, 4]] * np.array([[1.0], [2.0], [1.0]]),   # a 2: multiplied
    np.eye(5)[[3, 3]] + np.eye(5)[[0, 1]],          # two ones in a row: multiplied
    np.zeros((3, 5)),                               # no ones at all
])
def test_matmul_batch_rule_gathers_unit_vectors_and_multiplies_the_rest(V):
    from hessgrad.engine.registry import get

    prim = get("matmul")

    def rule(args, flags):  # the rule on arrays
        return prim.batch_values(prim, args, flags, {}, len(V))
    A = np.arange(20.0).reshape(4, 5)
    np.testing.assert_array_equal(rule([A, V], [False, True]), (A @ V.T).T)
    B = np.arange(15.0).reshape(5, 3)
    np.testing.assert_array_equal(rule([V, B], [True, False]), V @ B)
    a = np.arange(5.0)
    np.testing.assert_array_equal(rule([a, V], [False, True]), V @ a)
    np.testing.assert_array_equal(rule([V, a], [True, False]), V @ a)


def _looped(x):
    def body(i, s):
        return i + 1, hnp.sin(s * x[::-1]) + s * 0.5
    _, s = hg.while_loop(lambda i, s: i < 3, body, (0, x))
    return hnp.sum(s ** 2)


def test_batched_hvp_of_a_while_loop_runs_member_by_member():
    # the loop's outputs have run-time shapes: no batched per-call program can be compiled
    x = np.array([0.2, -0.4, 0.5, 0.1])
    columns = np.stack([hg.hvp(_looped)(x, e) for e in np.eye(4)])
    product = hg.make_hvp(_looped)(x)
    np.testing.assert_allclose(product.batched(np.eye(4)), columns, rtol=1e-12)
    assert product.batched(np.zeros((0, 4))).shape == (0, 4)
    op = hg.HessianOperator(_looped, x)
    np.testing.assert_allclose(op.matmat(np.eye(4)[:, 1:3]), columns[1:3].T, rtol=1e-12)
    np.testing.assert_allclose(op.to_dense(), columns.T, rtol=1e-12)
    np.testing.assert_allclose(hg.hessian(_looped)(x), columns, rtol=1e-12)


def tensor_array_rows(x):
    ta = hg.TensorArray("float64", size=2, element_shape=x.shape).write(0, x).write(1, x * x)
    return ta.stack()


def until_large(x):  # the trip count depends on x: batch members run different numbers of times
    _, s = hg.while_loop(lambda i, s: hnp.sum(s ** 2) < 4.0,
                         lambda i, s: (i + 1, s * 1.5 + 0.1 * hnp.sin(x)), (0, x))
    return hnp.sum(s ** 3)


def row_by_branch(x):  # a branch writes the TensorArray it captures
    ta = hg.TensorArray("float64", size=2, element_shape=x.shape)
    ta = hg.cond(x[0] > 0.0, lambda: ta.write(0, x ** 2), lambda: ta.write(0, hnp.sin(x)))
    return ta.write(1, x * 3.0).stack()


def rows_in_loop(x):
    ta = hg.TensorArray("float64", size=3, element_shape=x.shape)
    _, ta = hg.while_loop(lambda i, ta: i < 3, lambda i, ta: (
        i + 1, ta.write(i, hnp.sin(x) * hg.cast(i + 1, "float64"))), (0, ta))
    return hnp.sum(ta.stack() ** 2 * x[0])


@pytest.mark.parametrize("f,transform", [
    (tensor_array_rows, None),          # the members wrote into one shared buffer
    (row_by_branch, None),
    (rows_in_loop, None),
    (rows_in_loop, hg.grad),
    (until_large, hg.grad),             # histories of different lengths could not be stacked
    (until_large, hg.hessian),
], ids=["tensor-array", "tensor-array-in-cond", "tensor-array-in-loop", "grad-tensor-array-in-loop",
        "grad-trip-counts-differ", "hessian-trip-counts-differ"])
def test_map_of_control_flow_equals_loop(f, transform):
    X = np.random.default_rng(7).standard_normal((6, 3))
    g = f if transform is None else transform(f)
    loop = np.stack([np.asarray(g(X[j]) if transform else hg.function(f)(X[j]))
                     for j in range(6)])
    np.testing.assert_allclose(hg.function(g).map(X), loop, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("optimize", [True, False])
def test_reduction_of_0d_members_with_an_axis(optimize):
    # numpy accepts axis=0 (or -1) for a 0-d array; the batching rule shifted it to axis 1 of
    # the (k,) batch (AxisError), and the compiler divided by the rank, 0 (it warned and ran
    # uncompiled)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        f = hg.function(lambda x: hg.reduce_sum(x, axis=0) * 2 + hg.reduce_max(x, axis=-1),
                        optimize=optimize)
        assert float(f(np.float64(3.0))) == 9.0
        np.testing.assert_array_equal(f.map(np.arange(3.0)), [0.0, 3.0, 6.0])


def test_matmul_rule_for_every_rank_combination():
    # every (batched?, rank) pair of operands, against the product member by member (some
    # combinations ran once per member before; now all are one broadcast matmul): the rule on
    # arrays, and the rule binding ops (here returning arrays)
    from hessgrad.engine.batching import plain_values
    from hessgrad.engine.registry import get
    prim = get("matmul")

    def by_ops(args, flags):
        with plain_values():
            return prim.batch(prim, args, flags, {}, k)
    k = 3
    for sa in [(4,), (2, 4), (5, 2, 4), (1, 2, 4)]:
        for sb in [(4,), (4, 3), (5, 4, 3), (2, 1, 4, 3)]:
            for fa, fb in [(True, False), (False, True), (True, True)]:
                a = rng.standard_normal(((k,) if fa else ()) + sa)
                b = rng.standard_normal(((k,) if fb else ()) + sb)
                try:
                    want = np.stack([np.matmul(a[j] if fa else a, b[j] if fb else b)
                                     for j in range(k)])
                except ValueError:  # stacked dimensions that do not broadcast
                    continue
                for rule in (by_ops, lambda args, flags: prim.batch_values(prim, args, flags,
                                                                            {}, k)):
                    got = rule([a, b], [fa, fb])
                    assert got.shape == want.shape, (sa, sb, fa, fb)
                    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_custom_gradient_results_pass_through_a_batch():
    @hg.custom_gradient
    def f(x):
        return (x * 2.0, hnp.sum(A)), lambda g, h: g

    traced = hg.function(lambda x: f(x)[0] + f(x)[1])
    X = rng.standard_normal((3, 4, 3))
    np.testing.assert_allclose(traced.map(X), 2.0 * X + A.sum())
