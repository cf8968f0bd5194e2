"""Benchmark hessgrad.distributed on a LocalCluster against one process.

1. Per-matvec overhead: a sharded Hessian-vector product (1, 2 and 4 shards on 2 workers)
   against the local ``HessianOperator.matvec`` of the same objective, next to the round trip
   of an empty Dask task.
2. Dense Hessian columns: ``replicated(f, data).hessian(x)`` (column blocks, each a batched
   HVP) on 1 worker and on 2 workers, and ``hessgrad.hessian`` in this process; the
   speed-up of 2 workers over 1.
3. The scaling model of docs/distributed.md with the measured constants:
   ``T(p) = T_col * n / p + t_task * ceil(n / b) / p + t_setup``.

Run from the repository root: ``python benchmarks/bench_distributed.py [--quick] [--json F]``.
Timings are medians of repeated measurements; every distributed result is checked against
the local one first.
"""

import harness  # noqa: F401 - first: pins BLAS to one thread (inherited by the workers)

import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import hessgrad as hg  # noqa: E402
import hessgrad.distributed as hgd  # noqa: E402
import hessgrad.numpy as hnp  # noqa: E402


def make_mlp_loss():
    # A one-hidden-layer network's loss in its flattened weights: HVPs are matrix products.
    def loss(w, X, y, hidden):
        d = X.shape[1]
        h = hidden.shape[0]
        W1 = hnp.reshape(w[:d * h], (d, h))
        w2 = w[d * h:]
        z = hnp.tanh(hnp.matmul(X, W1))
        return 0.5 * hnp.sum((hnp.matmul(z, w2) - y) ** 2)
    return loss


def problem(rows, d, h, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((rows, d))
    y = rng.standard_normal(rows)
    w = 0.3 * rng.standard_normal(d * h + h)
    return make_mlp_loss(), X, y, np.zeros(h), w


def median_time(fn, repeats, min_time=0.2):
    fn()  # warm-up (and folding on the workers)
    times = []
    for _ in range(repeats):
        loops, t = 0, 0.0
        start = time.perf_counter()
        while t < min_time or loops == 0:
            fn()
            loops += 1
            t = time.perf_counter() - start
        times.append(t / loops)
    return statistics.median(times)


def noop():
    return 0


def bench_matvec(client, quick, repeats):
    rows, d, h = (2000, 20, 10) if quick else (8000, 30, 20)
    loss, X, y, hidden, w = problem(rows, d, h)
    v = np.random.default_rng(1).standard_normal(w.size)
    local = hg.HessianOperator(loss, w, args=(X, y, hidden))
    ref = local.matvec(v)
    out = {"n": int(w.size), "rows": rows,
           "local_matvec": median_time(lambda: local.matvec(v), repeats),
           "empty_task": median_time(lambda: client.submit(noop, pure=False).result(),
                                     repeats)}
    for shards in (1, 2, 4):
        bounds = np.linspace(0, rows, shards + 1).astype(int)
        data = [(X[a:b], y[a:b], hidden) for a, b in zip(bounds, bounds[1:])]
        with hgd.sharded(loss, data, client) as F:
            op = F.hessian_operator(w)
            np.testing.assert_allclose(op.matvec(v), ref, rtol=1e-9, atol=1e-9)
            out[f"sharded_matvec_{shards}"] = median_time(lambda: op.matvec(v), repeats)
    return out


def bench_columns(clients, quick, repeats):
    rows, d, h = (1000, 20, 10) if quick else (3000, 40, 12)
    loss, X, y, hidden, w = problem(rows, d, h, seed=2)
    n = w.size
    ref = hg.hessian(loss)(w, X, y, hidden)
    local_runs = []
    for k in range(repeats):  # a new point each run: trace + fold + columns, as below
        start = time.perf_counter()
        hg.hessian(loss)(w + 1e-3 * (k + 1), X, y, hidden)
        local_runs.append(time.perf_counter() - start)
    out = {"n": int(n), "rows": rows, "local_hessian": statistics.median(local_runs)}
    # Per-column HVP cost on one process (batched, folded): the model's T_col.
    apply = hg.make_hvp(loss)(w, X, y, hidden)
    E = np.eye(n)[:32]
    out["t_col"] = median_time(lambda: apply.batched(E), repeats) / 32
    for workers, client in clients.items():
        with hgd.replicated(loss, X, y, hidden, client=client, progress=False) as F:
            op = F.hessian_operator(w)
            b = op.block_size(n)
            H = F.hessian(w)  # warm: trace + fold once per worker
            np.testing.assert_allclose(H, ref, rtol=1e-9, atol=1e-9)
            runs = []
            for _ in range(repeats):
                # A new point each run so every worker folds again, as a user's job would.
                x = w + 1e-3 * (len(runs) + 1)
                start = time.perf_counter()
                F.hessian(x)
                runs.append(time.perf_counter() - start)
            out[f"columns_{workers}w"] = statistics.median(runs)
            # The same point again: the workers' folded HVPs are reused (column throughput).
            out[f"columns_folded_{workers}w"] = median_time(lambda: F.hessian(x), repeats,
                                                            min_time=0.0)
            out[f"block_size_{workers}w"] = b
    out["speedup_2_over_1"] = out["columns_1w"] / out["columns_2w"]
    out["speedup_folded_2_over_1"] = out["columns_folded_1w"] / out["columns_folded_2w"]
    return out


def main(argv=None):
    p = harness.parser(__doc__.splitlines()[0])
    args = p.parse_args(argv)
    repeats = 3 if args.quick else 5
    import distributed

    clusters, clients = [], {}
    for workers in (1, 2):
        c = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                     host="127.0.0.1", dashboard_address=":0")
        clusters.append(c)
        clients[workers] = distributed.Client(c)
    try:
        mv = bench_matvec(clients[2], args.quick, repeats)
        cols = bench_columns(clients, args.quick, repeats)
    finally:
        for c in clients.values():
            c.close()
        for c in clusters:
            c.close()

    ms = lambda t: f"{1e3 * t:8.2f} ms"  # noqa: E731
    print(f"per-matvec overhead (n = {mv['n']}, {mv['rows']} rows, 2 workers)")
    print(f"  local HessianOperator.matvec  {ms(mv['local_matvec'])}")
    print(f"  empty Dask task round trip    {ms(mv['empty_task'])}")
    for s in (1, 2, 4):
        t = mv[f"sharded_matvec_{s}"]
        print(f"  sharded matvec, {s} shard(s)    {ms(t)}   overhead "
              f"{ms(t - mv['local_matvec'] / min(s, 2))}")
    print(f"\ndense Hessian by column blocks (n = {cols['n']}, {cols['rows']} rows)")
    print(f"  hessgrad.hessian, this process {cols['local_hessian']:8.3f} s")
    print("                                  new point   same point (folded HVPs reused)")
    for workers in (1, 2):
        print(f"  {workers} worker(s), block {cols[f'block_size_{workers}w']:3d}        "
              f"{cols[f'columns_{workers}w']:8.3f} s   {cols[f'columns_folded_{workers}w']:8.3f} s")
    print(f"  speed-up 2 workers / 1 worker  {cols['speedup_2_over_1']:8.2f} x   "
          f"{cols['speedup_folded_2_over_1']:8.2f} x")
    t_task = mv["empty_task"]
    n, b = cols["n"], cols["block_size_2w"]
    print(f"\nscaling model T(p) = T_col*n/p + t_task*ceil(n/b)/p + t_setup with "
          f"T_col = {1e3 * cols['t_col']:.3f} ms, t_task = {1e3 * t_task:.1f} ms, b = {b}:")
    setup = max(0.0, cols["columns_1w"] - cols["t_col"] * n - t_task * -(-n // b))
    for p_ in (1, 2, 8, 32, 128):
        model = cols["t_col"] * n / p_ + t_task * -(-n // b) / p_ + setup
        print(f"  p = {p_:4d}: {model:8.3f} s")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"matvec": mv, "columns": cols, "setup": setup}, fh, indent=1)
    return {"matvec": mv, "columns": cols}


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
