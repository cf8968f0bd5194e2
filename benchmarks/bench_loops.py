"""Loops in compiled graphs, in one run, single-threaded.

Gradients through loops: an RNN written with ``hessgrad.scan`` (one ``while`` node and
TensorArrays in graph mode), side by side with the same recurrence unrolled, JAX
(``jit(grad)`` of ``lax.scan``), PyTorch eager (a Python loop) and a hand-written numpy
backward pass.

The loss is ``sum(h_t ** 2)`` over the hidden states ``h_t = tanh(h_{t-1} W + x_t)`` of a
T-step sequence (hidden size 64), differentiated w.r.t. ``W`` and the inputs ``x``. T grows
to show the cost per step: the reverse loop takes and adds rows of the TensorArrays'
cotangents in place, so it stays flat in T (it grew linearly with T before: O(T^2) in all).

Loops of independent iterations (``hessgrad.ops.loop_rows``): TensorFlow's ``hessians`` (a
``while_loop`` writing one Hessian row per iteration) of the extended Rosenbrock function and
``map_fn`` of a small tanh layer over the rows of a matrix, run as batches of rows, beside
the same loops run step by step, ``hessgrad.function(hessian)`` (jacfwd of the gradient), JAX
(``jit(hessian)``; ``jit`` of ``lax.map`` and of ``vmap``) and a numpy reference.

Run from the repository root (see benchmarks/README.md)::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_loops.py [--quick]
"""

import harness  # first: pins every engine to one thread before numpy is loaded

import numpy as np  # noqa: E402

import hessgrad as hg  # noqa: E402
import hessgrad.numpy as hnp  # noqa: E402
from hessgrad.ops import control_flow  # noqa: E402

HIDDEN = 64


def scan_loss(w, xs):
    hs = hg.scan(lambda h, x: hnp.tanh(h @ w + x), xs, initializer=np.zeros(HIDDEN))
    return hnp.sum(hs ** 2)


def unrolled_loss(w, xs):
    h, total = np.zeros(HIDDEN), 0.0
    for t in range(xs.shape[0]):
        h = hnp.tanh(h @ w + xs[t])
        total = total + hnp.sum(h ** 2)
    return total


def numpy_grads(w, xs):
    """The hand-written backward pass (backpropagation through time)."""
    hs, h = [], np.zeros(HIDDEN)
    for x in xs:
        h = np.tanh(h @ w + x)
        hs.append(h)
    gw, gx, gh = np.zeros_like(w), np.zeros_like(xs), np.zeros(HIDDEN)
    for t in reversed(range(len(xs))):
        gh = gh + 2.0 * hs[t]
        ga = gh * (1.0 - hs[t] ** 2)
        gw += np.outer(hs[t - 1] if t else np.zeros(HIDDEN), ga)
        gx[t] = ga
        gh = ga @ w.T
    return gw, gx


def engines_for(peers, w, xs, unrolled):
    both = (0, 1)
    traced = hg.function(hg.grad(scan_loss, argnums=both))
    engines = [("hessgrad function(grad(scan))", lambda: traced(w, xs))]
    if unrolled:
        traced_unrolled = hg.function(hg.grad(unrolled_loss, argnums=both))
        engines.append(("hessgrad function(grad(unrolled))", lambda: traced_unrolled(w, xs)))
    eager = hg.grad(scan_loss, argnums=both)
    engines.append(("hessgrad grad(scan), eager", lambda: eager(w, xs)))
    if peers["jax"]:
        jax, jnp = peers["jax"]

        def jax_loss(w, xs):
            def step(h, x):
                h = jnp.tanh(h @ w + x)
                return h, h
            _, hs = jax.lax.scan(step, jnp.zeros(HIDDEN), xs)
            return jnp.sum(hs ** 2)
        j_g = jax.jit(jax.grad(jax_loss, argnums=both))
        jw, jxs = jnp.asarray(w), jnp.asarray(xs)
        engines.append(("jax jit(grad(lax.scan))",
                        lambda: jax.block_until_ready(j_g(jw, jxs))))
    if peers["torch"]:
        torch = peers["torch"]
        tw = torch.from_numpy(w).requires_grad_(True)
        txs = torch.from_numpy(xs).requires_grad_(True)

        def torch_eager():
            h, total = torch.zeros(HIDDEN, dtype=torch.float64), 0.0
            for t in range(txs.shape[0]):
                h = torch.tanh(h @ tw + txs[t])
                total = total + torch.sum(h ** 2)
            return torch.autograd.grad(total, (tw, txs))
        engines.append(("torch eager loop", torch_eager))
    return engines


def rosen(x):
    return hnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def step_by_step(fn):
    """``fn`` with loops of independent iterations run one iteration at a time."""
    def run(*args):
        batched, control_flow.run_rows = control_flow.run_rows, lambda *a: None
        try:
            return fn(*args)
        finally:
            control_flow.run_rows = batched
    return run


def rows_loop_cases(bench, rng):
    from scipy.optimize import rosen_hess
    jax = bench.peers["jax"]
    for n in ((100,) if bench.quick else (100, 1000)):
        x = rng.uniform(-2, 2, n)
        hessians = hg.function(lambda x: hg.hessians(rosen(x), x)[0])
        hessian = hg.function(hg.hessian(rosen))
        engines = [("hessgrad function(hessians), rows batched", lambda: hessians(x)),
                   ("hessgrad function(hessians), step by step",
                    lambda: step_by_step(hessians)(x)),
                   ("hessgrad function(hessian)", lambda: hessian(x))]
        if jax:
            jx, jnp = jax
            j_h = jx.jit(jx.hessian(lambda x: jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 +
                                                      (1.0 - x[:-1]) ** 2)))
            engines.append(("jax jit(hessian)", lambda: jx.block_until_ready(j_h(x))))
        bench.case(f"hessians (a while_loop of rows) of Rosenbrock, n={n}",
                   ("scipy rosen_hess", lambda: rosen_hess(x)), engines, rtol=1e-10)
    w = rng.standard_normal((32, 32)) / 6
    for m in ((200,) if bench.quick else (200, 2000)):
        xs = rng.standard_normal((m, 32))
        mapped = hg.function(lambda xs: hg.map_fn(lambda r: hnp.sum(hnp.tanh(w @ r)), xs))
        engines = [("hessgrad function(map_fn), rows batched", lambda: mapped(xs)),
                   ("hessgrad function(map_fn), step by step", lambda: step_by_step(mapped)(xs))]
        if jax:
            jx, jnp = jax
            jw, jxs = jnp.asarray(w), jnp.asarray(xs)

            def row(r):
                return jnp.sum(jnp.tanh(jw @ r))
            j_map, j_vmap = jx.jit(lambda xs: jx.lax.map(row, xs)), jx.jit(jx.vmap(row))
            engines += [("jax jit(lax.map)", lambda: jx.block_until_ready(j_map(jxs))),
                        ("jax jit(vmap)", lambda: jx.block_until_ready(j_vmap(jxs)))]
        bench.case(f"map_fn of sum(tanh(W r)) over {m} rows r, W 32 x 32",
                   ("numpy tanh(X W^T).sum(1)", lambda: np.tanh(xs @ w.T).sum(1)), engines,
                   rtol=1e-12)


def main():
    args = harness.parser(__doc__.splitlines()[0]).parse_args()
    bench = harness.Bench("bench_loops", args)
    rng = np.random.default_rng(0)
    w = rng.standard_normal((HIDDEN, HIDDEN)) * 0.1
    per_step = []
    for steps in ((20, 100) if args.quick else (100, 400, 1600)):
        xs = rng.standard_normal((steps, HIDDEN))
        medians = bench.case(
            f"RNN scan, T={steps}, hidden {HIDDEN}: gradient w.r.t. W and x",
            ("numpy hand-written BPTT", lambda: numpy_grads(w, xs)),
            engines_for(bench.peers, w, xs, unrolled=steps <= 400), rtol=1e-9)
        per_step.append((steps, medians))
    names = [n for n in per_step[0][1] if all(n in m for _, m in per_step)]
    bench.summary("microseconds per step (median / T)", ("engine",) + tuple(
        f"T={steps}" for steps, _ in per_step),
        [(n,) + tuple(f"{m[n] / steps * 1e6:.1f}" for steps, m in per_step) for n in names])
    rows_loop_cases(bench, rng)
    bench.finish()


if __name__ == "__main__":
    main()
