"""Distributed Newton-CG: logistic regression whose rows live on Dask workers.

The rows of an L2-regularised logistic regression are split into shards; each shard is sent
to a worker once (``hessgrad.distributed.sharded``) and stays there. ``scipy.optimize.minimize``
with ``method="Newton-CG"`` then runs unchanged: every ``fun``/``jac`` is one task per shard
and every ``hessp`` one Hessian-vector product per shard (each worker folds its shard's
Hessian at the current point once and reuses it), summed on the workers. The answer is
checked against the same minimisation on one machine.

    python examples/distributed_newton_cg.py                       # local 2-worker cluster
    python examples/distributed_newton_cg.py --scheduler tcp://host:8786 --rows 1000000
"""

import argparse
import time

import numpy as np
from scipy.optimize import minimize

import hessgrad as hg
import hessgrad.distributed as hgd
import hessgrad.numpy as hnp


def make_loss(l2):
    # Built in a function so that cloudpickle sends it by value: the workers need not be
    # able to import this file.
    def loss(w, X, y, share):
        """Logistic loss of one shard plus its share (rows / total rows) of the L2 term."""
        margins = -y * hnp.matmul(X, w)
        return hnp.sum(hnp.logaddexp(0.0, margins)) + l2 * hnp.sum(share) * hnp.sum(w * w)
    return loss


def make_data(rows, features, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((rows, features)) * np.logspace(0, 1, features)
    w_true = rng.standard_normal(features) / np.sqrt(features)
    y = np.where(X @ w_true + 0.5 * rng.standard_normal(rows) > 0, 1.0, -1.0)
    return X, y


def main(rows=2000, features=20, shards=4, workers=2, scheduler=None, l2=1.0, seed=0):
    X, y = make_data(rows, features, seed)
    loss = make_loss(l2)
    bounds = np.linspace(0, rows, shards + 1).astype(int)
    data = [(X[a:b], y[a:b], np.array([(b - a) / rows])) for a, b in zip(bounds, bounds[1:])]
    options = {"xtol": 1e-10, "maxiter": 200}
    x0 = np.zeros(features)

    start = time.perf_counter()
    # scheduler: None (a local cluster of `workers` processes), an address or a Client.
    with hgd.sharded(loss, data, scheduler, workers=workers) as F:
        setup = time.perf_counter() - start
        start = time.perf_counter()
        res = minimize(F.fun, x0, jac=F.jac, hessp=F.hessp, method="Newton-CG",
                       options=options)
        seconds = time.perf_counter() - start
        nhessp, nfev = F.nhessp, F.nfev

    local = hg.scipy.objective(lambda w: sum(loss(w, *d) for d in data))
    start = time.perf_counter()
    ref = minimize(local.fun, x0, jac=local.jac, hessp=local.hessp, method="Newton-CG",
                   options=options)
    local_seconds = time.perf_counter() - start
    diff = float(np.max(np.abs(res.x - ref.x)))

    where = (f"{workers} local workers" if scheduler is None else f"scheduler {scheduler}"
             if isinstance(scheduler, str) else "the given Dask client")
    print(f"logistic regression: {rows} rows x {features} features in {shards} shards "
          f"on {where}")
    print(f"  distributed Newton-CG: {res.nit} iterations, {nfev} value+gradient "
          f"evaluations, {nhessp} Hessian-vector products, {seconds:.2f} s "
          f"(+{setup:.1f} s to start the cluster and send the shards)")
    print(f"  one machine          : {ref.nit} iterations, {local_seconds:.2f} s")
    print(f"  loss {res.fun:.10g}, max |x - x_local| = {diff:.2e}")
    return {"nit": int(res.nit), "nhessp": nhessp, "fun": float(res.fun), "x": res.x,
            "x_local": ref.x, "max_diff": diff, "seconds": seconds,
            "local_seconds": local_seconds, "success": bool(res.success),
            "local_success": bool(ref.success)}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2, help="local worker processes")
    parser.add_argument("--scheduler", help="address of a running Dask scheduler")
    args = parser.parse_args()
    main(args.rows, args.features, args.shards, args.workers, args.scheduler)
