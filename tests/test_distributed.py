"""hessgrad.distributed on a 2-worker LocalCluster: every result equals the single-machine
computation to rounding, errors are clear, and killing a worker mid-job changes nothing."""

import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import scipy.optimize

distributed = pytest.importorskip("distributed")

# Local Dask clusters (worker processes started and killed): left out of the quick subset.
pytestmark = pytest.mark.slow

import hessgrad as hg  # noqa: E402
import hessgrad.distributed as hgd  # noqa: E402
import hessgrad.numpy as hnp  # noqa: E402
import solvers  # noqa: E402


def make_logistic():
    # A nested function is pickled by value, so the workers need not import this module.
    def loss(w, A, y):
        return hnp.sum(hnp.logaddexp(0.0, -y * hnp.matmul(A, w))) + 0.05 * hnp.sum(w * w)
    return loss


def make_quartic():
    def loss(w, A):  # indefinite Hessian in places: exercises Lanczos beyond SPD
        z = hnp.matmul(A, w)
        return hnp.sum(z ** 4 - 3.0 * z ** 2)
    return loss


LOSS = make_logistic()
RNG = np.random.default_rng(0)
A = RNG.standard_normal((230, 12))
Y = np.sign(A @ RNG.standard_normal(12) + 0.5 * RNG.standard_normal(230))
SPLITS = [0, 70, 150, 230]  # three shards of unequal size
SHARDS = [(A[a:b], Y[a:b]) for a, b in zip(SPLITS, SPLITS[1:])]
X = 0.3 * RNG.standard_normal(12)


def total(x):
    """The single-machine objective: every shard's loss summed."""
    return sum(LOSS(x, *s) for s in SHARDS)


def local_hessian(x):
    return sum(hg.hessian(LOSS)(x, *s) for s in SHARDS)


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=":0")
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def F(client):
    with hgd.sharded(LOSS, SHARDS, client) as F:
        yield F


def test_value_and_gradient_equal_local(F):
    value, grad = F.value_and_grad(X)
    ref_value, ref_grad = hg.value_and_grad(lambda x: total(x))(X)
    np.testing.assert_allclose(value, ref_value, rtol=1e-13)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-12, atol=1e-13)
    assert F.fun(X) == value and np.array_equal(F.jac(X), grad)
    assert F.nfev == 1  # value and gradient of one x: one distributed evaluation


def test_hessian_operator_products(F):
    H = local_hessian(X)
    op = F.hessian_operator(X)
    assert op.shape == (12, 12) and op.dtype == np.float64
    v = RNG.standard_normal(12)
    np.testing.assert_allclose(op.matvec(v), H @ v, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(op.rmatvec(v), H @ v, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(op @ v, H @ v, rtol=1e-12, atol=1e-12)
    V = RNG.standard_normal((12, 5))
    np.testing.assert_allclose(op.matmat(V), H @ V, rtol=1e-12, atol=1e-12)
    assert op.nmatvec == 3 + 5
    np.testing.assert_allclose(F.hessp(X, v), H @ v, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(op.aslinearoperator() @ v, H @ v, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="12"):
        op.matvec(np.ones(5))


def test_dense_hessian_in_blocks_and_memmap(F, tmp_path):
    H = local_hessian(X)
    np.testing.assert_allclose(F.hess(X), H, rtol=1e-12, atol=1e-12)
    path = tmp_path / "H.npy"
    out = F.hessian(X, out=str(path), block_size=5, progress=True)  # 3 blocks x 3 shards
    np.testing.assert_allclose(np.load(path), H, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(out), H, rtol=1e-12, atol=1e-12)


def test_cg_and_newton_cg_run_unchanged(F):
    H = local_hessian(X)
    b = RNG.standard_normal(12)
    x, info = solvers.cg(F.hessian_operator(X), b, rtol=1e-12)
    assert info == 0
    np.testing.assert_allclose(x, np.linalg.solve(H, b), rtol=1e-9)
    local = hg.scipy.objective(lambda x: total(x))
    ref = scipy.optimize.minimize(local.fun, np.zeros(12), jac=local.jac, hessp=local.hessp,
                                  method="Newton-CG", options={"xtol": 1e-10})
    res = scipy.optimize.minimize(F.fun, np.zeros(12), jac=F.jac, hessp=F.hessp,
                                  method="Newton-CG", options={"xtol": 1e-10})
    assert res.success and res.nit == ref.nit
    np.testing.assert_allclose(res.x, ref.x, rtol=1e-9, atol=1e-10)
    mine = solvers.minimize(F.fun, np.zeros(12), jac=F.jac, hessp=F.hessp, gtol=1e-9)
    np.testing.assert_allclose(mine.x, ref.x, rtol=1e-7, atol=1e-8)


def test_trace_estimators(F):
    H = local_hessian(X)
    op = F.hessian_operator(X)
    est = F.hutchinson(X, 20, rng=3)
    Z = hgd.analytics.hutchinson_probes(12, 20, rng=3)
    samples = np.einsum("ij,jk,ik->i", Z, H, Z)
    np.testing.assert_allclose(est.trace, samples.mean(), rtol=1e-12)
    # the same probes whatever the blocks (they follow the cluster's size)
    for size in (1, 7, 20):
        op.block_size = lambda k, size=size: size
        np.testing.assert_allclose(hgd.analytics.hutchinson(op, 20, rng=3).trace, est.trace,
                                   rtol=1e-12)
    assert est.num_matvecs == 20 and est.std_error > 0
    np.testing.assert_allclose(F.hutchpp(X, 9, rng=1).trace, solvers.hutchpp(H, 9, rng=1).trace,
                               rtol=1e-10)


def _reference_quadrature(H, V0, steps):
    nodes, weights = [], []
    for v in V0:
        theta, S = np.linalg.eigh(solvers.lanczos(H, steps, v0=v).tridiagonal())
        nodes.append(theta)
        weights.append(S[0] ** 2)
    return np.array(nodes), np.array(weights)


def test_spectral_density_sharded_lockstep_and_replicated(client):
    loss = make_quartic()
    B = np.random.default_rng(1).standard_normal((40, 9))
    x = np.random.default_rng(2).standard_normal(9)
    H = hg.hessian(loss)(x, B)
    V0 = np.random.default_rng(5).integers(0, 2, size=(3, 9)) * 2.0 - 1.0
    nodes, weights = _reference_quadrature(H, V0, 6)
    with hgd.sharded(loss, [B[:15], B[15:]], client) as F:      # lockstep over shards
        sd = F.spectral_density(x, num_probes=3, lanczos_steps=6, rng=5)
    np.testing.assert_allclose(sd.nodes, nodes, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(sd.weights, weights, rtol=1e-8, atol=1e-10)
    with hgd.replicated(loss, B, client=client) as R:         # whole probes per task
        sd = R.spectral_density(x, num_probes=3, lanczos_steps=6, rng=5)
        np.testing.assert_allclose(sd.nodes, nodes, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(R.hessian(x, block_size=2), H, rtol=1e-12, atol=1e-12)
    with hgd.sharded(loss, [B], client) as one:  # full Lanczos: Hutchinson's v^T H v exactly
        full = one.spectral_density(x, num_probes=2, lanczos_steps=9, rng=0)
    V = np.random.default_rng(0).integers(0, 2, size=(2, 9)) * 2.0 - 1.0
    np.testing.assert_allclose(full.trace(lambda t: t), np.einsum("ij,jk,ik->", V, H, V) / 2,
                               rtol=1e-10)


def test_loaders_build_shards_on_workers(client, tmp_path):
    paths = []
    for i, (a, y) in enumerate(SHARDS):
        paths.append(str(tmp_path / f"shard{i}.npz"))
        np.savez(paths[-1], A=a, y=y)

    def read(path):
        with np.load(path) as z:
            return z["A"], z["y"]

    with hgd.sharded(LOSS, [hgd.loader(read, p) for p in paths], client) as F:
        np.testing.assert_allclose(F.jac(X), hg.grad(lambda x: total(x))(X), rtol=1e-12)
        np.testing.assert_allclose(F.hess(X), local_hessian(X), rtol=1e-12, atol=1e-12)
    bad = [hgd.loader(read, paths[0]), hgd.loader(lambda: (np.ones((4, 3)), np.ones(4)))]
    with pytest.raises(ValueError, match=r"shard 1 argument 0 has shape \(4, 3\)"):
        hgd.sharded(LOSS, bad, client)


def test_mismatched_shards_are_rejected(client):
    with pytest.raises(ValueError, match=r"shard 1 argument 0 has shape \(5, 3\).*\(6, 12\)"):
        hgd.sharded(LOSS, [(A[:6], Y[:6]), (np.ones((5, 3)), Y[:5])], client)
    with pytest.raises(ValueError, match="dtype float32"):
        hgd.sharded(LOSS, [(A[:6], Y[:6]), (A[6:9].astype(np.float32), Y[6:9])], client)
    with pytest.raises(ValueError, match="2 data arrays"):
        hgd.sharded(LOSS, [(A[:6],), (A[6:9], Y[6:9])], client)
    with pytest.raises(ValueError, match="empty"):
        hgd.sharded(LOSS, [], client)
    with pytest.raises(TypeError, match="shard 0 argument 0 must be an array"):
        hgd.sharded(LOSS, [("abc",)], client)


def test_modules_are_sent_to_the_workers(client, tmp_path, monkeypatch):
    # f defined in a module found only through this process's path is pickled by
    # reference: the workers must import it, and modules= sends them the file.
    (tmp_path / "hgd_test_shipped_mod.py").write_text(
        "import hessgrad.numpy as hnp\n\n"
        "def loss(w, A, y):\n"
        "    return hnp.sum(hnp.logaddexp(0.0, -y * hnp.matmul(A, w))) + 0.05 * hnp.sum(w * w)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import hgd_test_shipped_mod as mod

    with hgd.sharded(mod.loss, SHARDS, client,
                     modules=[str(tmp_path / "hgd_test_shipped_mod.py")]) as F:
        np.testing.assert_allclose(F.fun(X), total(X), rtol=1e-13)
    with pytest.raises(ValueError, match="modules must be paths of .py files"):
        hgd.sharded(LOSS, SHARDS, client, modules=[str(tmp_path / "nowhere.py")])


def test_unreachable_scheduler_is_a_clear_connection_error():
    with pytest.raises(ConnectionError, match=r"127\.0\.0\.1:9.*Hint"):
        hgd.sharded(LOSS, SHARDS, "tcp://127.0.0.1:9", timeout=1)


def test_closed_client_is_a_connection_error():
    c = distributed.Client(processes=False, n_workers=1, threads_per_worker=1,
                           dashboard_address=":0")
    c.close()
    with pytest.raises(ConnectionError, match="closed"):
        hgd.sharded(LOSS, SHARDS, c)


def test_dask_is_not_imported_with_hessgrad():
    code = ("import sys, hessgrad, hessgrad.distributed; "
            "assert 'distributed' not in sys.modules and 'dask' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


# ------------------------------------------------------------------ worker failures

def _kill_worker_when_busy(client, done, report, delay=0.2):
    """In a thread: once the scheduler has work in flight, SIGKILL one worker process."""
    def run():
        pids = client.run(os.getpid)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any(client.processing().values()):
            time.sleep(0.01)
        time.sleep(delay)
        report["mid_job"] = not done.is_set()
        os.kill(sorted(pids.values())[0], signal.SIGKILL)
        report["killed"] = True
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


@pytest.fixture
def fragile_client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=":0")
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_worker_killed_mid_hessian_and_mid_cg(fragile_client):
    client = fragile_client
    loss = make_logistic()
    rng = np.random.default_rng(7)
    n = 120
    B = rng.standard_normal((300, n))
    y = np.sign(rng.standard_normal(300))
    x = 0.1 * rng.standard_normal(n)
    H = hg.hessian(loss)(x, B[:150], y[:150]) + hg.hessian(loss)(x, B[150:], y[150:])

    # 1. Dense Hessian columns (shards replicated on both workers): Dask reschedules.
    with hgd.sharded(loss, [(B[:150], y[:150]), (B[150:], y[150:])], client) as F:
        done, report = threading.Event(), {}
        killer = _kill_worker_when_busy(client, done, report)
        got = F.hessian(x, block_size=2, progress=False)  # 60 blocks x 2 shards
        done.set()
        killer.join(30)
        assert report == {"mid_job": True, "killed": True}
        np.testing.assert_allclose(got, H, rtol=1e-12, atol=1e-12)

    # 2. CG with a single copy of each shard: the killed worker's shard is lost and is
    #    scattered again from the client's copy.
    client.wait_for_workers(2, timeout=60)
    b = rng.standard_normal(n)
    with hgd.sharded(loss, [(B[:150], y[:150]), (B[150:], y[150:])], client,
                     replicas=1) as F:
        op = F.hessian_operator(x)
        state = {"iterations": 0}

        def kill_at_third(xk):
            state["iterations"] += 1
            if state["iterations"] == 3:
                holder = next(iter(client.who_has(F.shard_futures()[0]).values()))[0]
                pid = client.run(os.getpid, workers=[holder])[holder]
                os.kill(pid, signal.SIGKILL)

        sol, info = solvers.cg(op, b, rtol=1e-10, callback=kill_at_third)
        assert info == 0 and state["iterations"] > 3
        np.testing.assert_allclose(sol, np.linalg.solve(H, b), rtol=1e-7)


def test_example_distributed_newton_cg(client, capsys):
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parent.parent / "examples" / \
        "distributed_newton_cg.py"
    spec = importlib.util.spec_from_file_location("hessgrad_example_distributed", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    r = example.main(rows=300, features=6, shards=3, scheduler=client)
    assert "distributed Newton-CG" in capsys.readouterr().out
    # SciPy's Newton-CG may end either run with "precision loss" at the last bits, so
    # compare the minimizers, not the success flags.
    assert r["nhessp"] > 0 and r["max_diff"] < 1e-6
