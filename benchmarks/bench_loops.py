"""Gradients through loops: an RNN written with ``hessgrad.scan`` (one ``while`` node and
TensorArrays in graph mode), side by side with the same recurrence unrolled, JAX
(``jit(grad)`` of ``lax.scan``), PyTorch eager (a Python loop) and a hand-written numpy
backward pass, in one run, single-threaded.

The loss is ``sum(h_t ** 2)`` over the hidden states ``h_t = tanh(h_{t-1} W + x_t)`` of a
T-step sequence (hidden size 64), differentiated w.r.t. ``W`` and the inputs ``x``. T grows
to show the cost per step: the reverse loop takes and adds rows of the TensorArrays'
cotangents in place, so it stays flat in T (it grew linearly with T before: O(T^2) in all).

Run from the repository root (see benchmarks/README.md)::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_loops.py [--quick]
"""

import harness  # first: pins every engine to one thread before numpy is loaded

import numpy as np  # noqa: E402

import hessgrad as hg  # noqa: E402
import hessgrad.numpy as hnp  # noqa: E402

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
    bench.finish()


if __name__ == "__main__":
    main()
