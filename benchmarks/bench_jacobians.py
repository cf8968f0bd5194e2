"""Dense Jacobians and Hessians built from the first-order transforms, side by side with
peers, in one run: ``jacrev``/``jacfwd`` of the gradient (the Hessian as a Jacobian) and of a
vector function, eagerly and traced (``hg.function``, ``jax.jit``), against autograd
(``jacobian``: one VJP per row), JAX and ``torch.func`` (``vmap`` of ``vjp``/``jvp``).

hessgrad runs the rows as one batch (the product traced once, replayed on all the basis
rows), so a traced Jacobian is one batched product whatever ``n`` is; a first-call table
gives the tracing + compile cost.

Cases: the Hessian of Rosenbrock (n = 100 and 400) as ``jac(grad(f))``, checked against
``scipy.optimize.rosen_hess``; the Jacobian of ``tanh(W x)`` with ``W`` 400 x 200, checked
against ``diag(1 - y**2) W``.

Run from the repository root (see benchmarks/README.md)::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_jacobians.py
"""

import harness  # first: pins every engine to one thread before numpy is loaded

import numpy as np  # noqa: E402

import hessgrad as hg  # noqa: E402
import problems as P  # noqa: E402


def engines_for(peers, fs, x, of_gradient):
    """``(label, fn)`` per engine: ``jacrev``/``jacfwd`` of ``f`` (of its gradient when
    ``of_gradient``), eager and traced."""
    f_hg, f_ag, f_jax, f_torch = fs
    inner = hg.grad(f_hg) if of_gradient else f_hg
    engines = []
    for name, jac in (("jacrev", hg.jacrev), ("jacfwd", hg.jacfwd)):
        eager, traced = jac(inner), hg.function(jac(inner))
        engines += [(f"hessgrad {name}", lambda eager=eager: eager(x)),
                    (f"hessgrad function({name})", lambda traced=traced: traced(x))]
    if of_gradient:
        hessian, traced = hg.hessian(f_hg), hg.function(hg.hessian(f_hg))
        engines += [("hessgrad hessian", lambda: hessian(x)),
                    ("hessgrad function(hessian)", lambda: traced(x))]
    if peers["autograd"]:
        autograd = peers["autograd"][0]
        ag_jac = autograd.jacobian(autograd.grad(f_ag) if of_gradient else f_ag)
        engines.append(("autograd jacobian (row by row)", lambda: ag_jac(x)))
    if peers["jax"]:
        jax, jnp = peers["jax"]
        jx = jax.device_put(jnp.asarray(x))
        j_inner = jax.grad(f_jax) if of_gradient else f_jax
        for name, jac in (("jacrev", jax.jacrev), ("jacfwd", jax.jacfwd)):
            eager, jitted = jac(j_inner), jax.jit(jac(j_inner))
            engines += [(f"jax {name} (no jit)",
                         lambda eager=eager: eager(jx).block_until_ready()),
                        (f"jax jit({name})", lambda jitted=jitted: jitted(jx).block_until_ready())]
    if peers["torch"]:
        torch = peers["torch"]
        tx = torch.from_numpy(np.ascontiguousarray(x))
        t_inner = torch.func.grad(f_torch) if of_gradient else f_torch
        for name, jac in (("jacrev", torch.func.jacrev), ("jacfwd", torch.func.jacfwd)):
            j = jac(t_inner)
            engines.append((f"torch.func.{name}", lambda j=j: j(tx)))
    return engines


def tanh_layer(xp, W):
    W = xp.asarray(W)  # each engine's array: JAX's jit traces W @ x only then
    return lambda x: xp.tanh(W @ x)


def main():
    args = harness.parser(__doc__.splitlines()[0]).parse_args()
    bench = harness.Bench("bench_jacobians", args)
    peers = bench.peers
    rosen_fs = P.per_engine(peers, P.rosen_for)
    for n in ((30,) if args.quick else (100, 400)):
        x = P.rosen_point(n)
        bench.case(f"Rosenbrock n={n}: Hessian as jac(grad(f))",
                   ("numpy scipy rosen_hess", lambda x=x: P.np_rosen_hessian(x)),
                   engines_for(peers, rosen_fs, x, True), rtol=1e-9, atol=1e-12)

    m, d = (40, 20) if args.quick else (400, 200)
    rng = np.random.default_rng(0)
    W = rng.standard_normal((m, d)) / np.sqrt(d)
    x = rng.standard_normal(d)
    layer_fs = P.per_engine(peers, lambda xp: tanh_layer(xp, W))
    bench.case(f"tanh(W x), W {m}x{d}: Jacobian",
               ("numpy analytic diag(1 - y^2) W",
                lambda: (1 - np.tanh(W @ x) ** 2)[:, None] * W),
               engines_for(peers, layer_fs, x, False), rtol=1e-9, atol=1e-12)

    rows = [(r["case"].split(":")[0], r["engine"], f"{1e3 * r['first_call_s']:.1f}")
            for r in bench.records if "function(" in r["engine"] or "jit(" in r["engine"]]
    bench.summary("first calls (tracing + compiling + one run), ms", ("case", "engine", "ms"),
                  rows, left=2)
    bench.finish()


if __name__ == "__main__":
    main()
