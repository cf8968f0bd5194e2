"""hessgrad.vmap side by side with a Python loop of hessgrad calls, JAX (jit(vmap) and vmap
without jit) and torch.func.vmap (if installed), in one run, single-threaded.

1. Per-example gradients of a logistic loss, m = 1000 examples x d = 100 features:
   ``vmap(grad(loss), in_axes=(None, 0, 0))(w, X, y)``; reference: the analytic
   ``-y_i sigmoid(-y_i x_i.w) x_i`` rows.
2. A batch of 100 Hessian-vector products of Rosenbrock n = 1000 at one point:
   ``vmap(lambda v: hvp(f)(x, v))(V)``; also hessgrad's ``make_hvp(f)(x).batched(V)``;
   reference: ``scipy.optimize.rosen_hess_prod`` per vector.
3. The differentiable path: the gradient of ``sum(vmap(loss)(w, X, y))`` w.r.t. ``w`` (vmap
   under a tape replays the per-example graph with differentiable batched ops, tracing at
   every call), beside ``grad`` of the same loss written on the whole batch.
4. Batched control flow: vmap of a T = 50-step ``scan`` (a tanh recurrence with d = 8) over
   k = 100 members (one loop on the batch, not one per member); reference: the same
   recurrence in numpy on the whole batch.
5. The dense Hessian of a scan-based objective (T = 25 steps, d = 8: n = 200), built from
   batched Hessian-vector products that run the scan's forward, JVP and reverse loops on the
   batch of tangents; reference: hessgrad's Hessian-vector products one column at a time.

hessgrad's vmap objects are built once (their traces are cached per signature, as a user
keeps one in a loop); its first calls (trace and compilation) are reported separately.

Run from the repository root (see benchmarks/README.md)::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_vmap.py [--quick]
"""

import harness  # first: pins every engine to one thread before numpy is loaded

import time  # noqa: E402

import numpy as np  # noqa: E402
from scipy.optimize import rosen_hess_prod  # noqa: E402
from scipy.special import expit  # noqa: E402

import hessgrad as hg  # noqa: E402
import hessgrad.numpy as hnp  # noqa: E402
import problems as P  # noqa: E402


def example_loss(xp):
    """The logistic loss of one example ``(x, y)``, y in {-1, +1}."""
    def loss(w, x, y):
        return xp.logaddexp(0.0, -y * xp.dot(x, w))
    return loss


def rosen(xp):
    def f(x):
        return xp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    return f


def torch_loss(torch):
    def loss(w, x, y):
        return torch.nn.functional.softplus(-y * torch.dot(x, w))
    return loss


def per_example_engines(peers, w, X, y):
    loss = example_loss(hnp)
    per_example = hg.vmap(hg.grad(loss), in_axes=(None, 0, 0))
    g = hg.grad(loss)
    traced = hg.function(g)
    engines = [("hessgrad vmap(grad)", lambda: per_example(w, X, y)),
               ("hessgrad loop of grad", lambda: np.stack([g(w, X[i], y[i])
                                                           for i in range(len(y))])),
               ("hessgrad loop of function(grad)",
                lambda: np.stack([traced(w, X[i], y[i]) for i in range(len(y))]))]
    if peers["jax"]:
        jax, jnp = peers["jax"]
        jloss = example_loss(jnp)
        vg = jax.vmap(jax.grad(jloss), in_axes=(None, 0, 0))
        jitted = jax.jit(vg)
        jw, jX, jy = (jnp.asarray(a) for a in (w, X, y))
        engines += [("jax jit(vmap(grad))", lambda: jitted(jw, jX, jy).block_until_ready()),
                    ("jax vmap(grad), no jit", lambda: vg(jw, jX, jy).block_until_ready())]
    if peers["torch"]:
        torch = peers["torch"]
        tvg = torch.func.vmap(torch.func.grad(torch_loss(torch)), in_dims=(None, 0, 0))
        tw, tX, ty = (torch.from_numpy(a) for a in (w, X, y))
        engines.append(("torch.func vmap(grad)", lambda: tvg(tw, tX, ty)))
    return engines


def hvp_engines(peers, x, V):
    f = rosen(hnp)
    batched = hg.vmap(lambda v: hg.hvp(f)(x, v))
    product = hg.hvp(f)
    engines = [("hessgrad vmap(hvp)", lambda: batched(V)),
               ("hessgrad loop of hvp", lambda: np.stack([product(x, v) for v in V])),
               ("hessgrad make_hvp(f)(x).batched", lambda: hg.make_hvp(f)(x).batched(V))]
    if peers["jax"]:
        jax, jnp = peers["jax"]
        jf = rosen(jnp)
        jx = jnp.asarray(x)
        vh = jax.vmap(lambda v: jax.jvp(jax.grad(jf), (jx,), (v,))[1])
        jitted = jax.jit(vh)
        jV = jnp.asarray(V)
        engines += [("jax jit(vmap(jvp(grad)))", lambda: jitted(jV).block_until_ready()),
                    ("jax vmap(jvp(grad)), no jit", lambda: vh(jV).block_until_ready())]
    if peers["torch"]:
        torch = peers["torch"]
        tf_ = rosen(torch)
        tx = torch.from_numpy(x)
        tvh = torch.func.vmap(lambda v: torch.func.jvp(torch.func.grad(tf_), (tx,), (v,))[1])
        tV = torch.from_numpy(V)
        engines.append(("torch.func vmap(jvp(grad))", lambda: tvh(tV)))
    return engines


def summed_grad_engines(peers, w, X, y):
    loss = example_loss(hnp)
    mapped = hg.vmap(loss, in_axes=(None, 0, 0))
    engines = [("hessgrad grad(sum(vmap(loss)))",
                lambda: hg.grad(lambda w: hnp.sum(mapped(w, X, y)))(w)),
               ("hessgrad grad(sum(loss on the batch))",
                lambda: hg.grad(lambda w: hnp.sum(hnp.logaddexp(0.0, -y * (X @ w))))(w))]
    if peers["jax"]:
        jax, jnp = peers["jax"]
        jloss = example_loss(jnp)
        jg = jax.grad(lambda w, X, y: jnp.sum(jax.vmap(jloss, in_axes=(None, 0, 0))(w, X, y)))
        jitted = jax.jit(jg)
        jw, jX, jy = (jnp.asarray(a) for a in (w, X, y))
        engines += [("jax jit(grad(sum(vmap)))", lambda: jitted(jw, jX, jy).block_until_ready()),
                    ("jax grad(sum(vmap)), no jit", lambda: jg(jw, jX, jy).block_until_ready())]
    return engines


def rnn_scan(xp, scan, W):
    """The states of ``a_t = tanh(W a_{t-1} + x_t)`` from ``a_0 = 0`` over the rows of x."""
    def f(x):
        return scan(lambda a, e: xp.tanh(W @ a + e), x, xp.zeros(W.shape[0]))
    return f


def jax_scan(jax):
    def scan(fn, xs, init):
        return jax.lax.scan(lambda a, e: (fn(a, e),) * 2, init, xs)[1]
    return scan


def scan_engines(peers, W, Xs):
    f = rnn_scan(hnp, hg.scan, W)
    mapped = hg.vmap(f)
    traced = hg.function(f)
    engines = [("hessgrad vmap(scan)", lambda: mapped(Xs)),
               ("hessgrad function(scan).map", lambda: traced.map(Xs)),
               ("hessgrad loop of function(scan)", lambda: np.stack([traced(x) for x in Xs]))]
    if peers["jax"]:
        jax, jnp = peers["jax"]
        jf = jax.vmap(rnn_scan(jnp, jax_scan(jax), jnp.asarray(W)))
        jitted = jax.jit(jf)
        jX = jnp.asarray(Xs)
        engines += [("jax jit(vmap(scan))", lambda: jitted(jX).block_until_ready()),
                     ("jax vmap(scan), no jit", lambda: jf(jX).block_until_ready())]
    return engines


def scan_objective(xp, scan, W, T):
    states = rnn_scan(xp, scan, W)

    def f(x):
        return xp.sum(states(xp.reshape(x, (T, W.shape[0]))) ** 2)
    return f


def scan_hessian_engines(peers, W, T, x):
    f = scan_objective(hnp, hg.scan, W, T)
    engines = [("hessgrad hessian (batched HVPs)", lambda: hg.hessian(f)(x))]
    if peers["jax"]:
        jax, jnp = peers["jax"]
        jh = jax.hessian(scan_objective(jnp, jax_scan(jax), jnp.asarray(W), T))
        jitted = jax.jit(jh)
        jx = jnp.asarray(x)
        engines += [("jax jit(hessian)", lambda: jitted(jx).block_until_ready()),
                    ("jax hessian, no jit", lambda: jh(jx).block_until_ready())]
    return engines


def first_calls(w, X, y, x, V):
    """Seconds of the first three calls of a fresh vmap object: the first traces, compiles
    the program without Numba kernels and runs it; the second compiles the kernels for this
    batch size (Numba's own start-up, about a second, comes with the first kernel of the
    process); the third only runs."""
    rows = []
    for label, make, args in (
            ("vmap(grad(loss)) m=%d" % len(y),
             lambda: hg.vmap(hg.grad(example_loss(hnp)), in_axes=(None, 0, 0)), (w, X, y)),
            ("vmap(hvp) k=%d n=%d" % V.shape,
             lambda: hg.vmap(lambda v: hg.hvp(rosen(hnp))(x, v)), (V,))):
        mapped = make()
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            mapped(*args)
            times.append(harness.fmt_time(time.perf_counter() - t0))
        rows.append((label, *times))
    return rows


def main():
    args = harness.parser(__doc__.splitlines()[0]).parse_args()
    bench = harness.Bench("bench_vmap", args)
    peers = bench.peers

    m, d = (200, 20) if args.quick else (1000, 100)
    X, y, w = P.logistic_data(m, d)

    def reference_per_example():
        return (-y * expit(-y * (X @ w)))[:, None] * X

    bench.case(f"per-example logistic gradients m={m} d={d}",
               ("numpy analytic -y s x rows", reference_per_example),
               per_example_engines(peers, w, X, y), per=(m, "us/example"))

    n, k = (100, 20) if args.quick else (1000, 100)
    x = P.rosen_point(n)
    V = np.random.default_rng(1).standard_normal((k, n))
    bench.case(f"Rosenbrock n={n}: {k} Hessian-vector products",
               ("numpy scipy rosen_hess_prod per vector",
                lambda: np.stack([rosen_hess_prod(x, v) for v in V])),
               hvp_engines(peers, x, V), rtol=1e-6, atol=1e-9, per=(k, "us/product"))

    bench.case(f"gradient of a summed per-example loss m={m} d={d} (differentiable path)",
               ("numpy analytic X^T (-y s)",
                lambda: X.T @ (-y * expit(-y * (X @ w)))),
               summed_grad_engines(peers, w, X, y))

    T, d, k = (20, 4, 20) if args.quick else (50, 8, 100)
    rng = np.random.default_rng(2)
    W = rng.standard_normal((d, d)) * 0.5
    Xs = rng.standard_normal((k, T, d))

    def reference_scan():
        a, out = np.zeros((k, d)), []
        for t in range(T):
            a = np.tanh(a @ W.T + Xs[:, t])
            out.append(a)
        return np.stack(out, axis=1)

    bench.case(f"vmap of a {T}-step scan (d={d}) over {k} members",
               ("numpy recurrence on the whole batch", reference_scan),
               scan_engines(peers, W, Xs), per=(k, "us/member"))

    T = 10 if args.quick else 25
    xh = rng.standard_normal(T * d) * 0.5
    column = hg.function(hg.hvp(scan_objective(hnp, hg.scan, W, T)))
    bench.case(f"dense Hessian of a {T}-step scan objective (n={T * d})",
               ("hessgrad function(hvp), one column at a time",
                lambda: np.stack([column(xh, e) for e in np.eye(T * d)])),
               scan_hessian_engines(peers, W, T, xh), rtol=1e-9, atol=1e-12)

    bench.summary("hessgrad: the first calls of a new vmap object", ("case", "first call",
                  "second call", "third call"), first_calls(w, X, y, x, V))
    bench.finish()


if __name__ == "__main__":
    main()
