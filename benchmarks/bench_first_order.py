"""Value and gradient, side by side with peers, as ratios, in one run.

Cases: extended Rosenbrock (n = 10, 1000, 100000), L2-regularised logistic regression
(10,000 rows; d = 100 and d = 1000), and the eager per-op overhead (the gradient of a chain
of 200 elementwise ops on a length-10 vector, in microseconds per op).

Engines: hessgrad eager (``value_and_grad``, ``grad``), hessgrad graph
(``function(grad(f))``), autograd, JAX (``jit`` of ``grad``), PyTorch (``autograd.grad``
and ``torch.func.grad``), and the hand-written numpy reference every engine is checked
against. Peers that are not installed are skipped with a note.

Run from the repository root (see benchmarks/README.md)::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_first_order.py
"""

import harness  # first: pins every engine to one thread before numpy is loaded

import numpy as np  # noqa: E402

import hessgrad as hg  # noqa: E402
import hessgrad.numpy as hnp  # noqa: E402
import problems as P  # noqa: E402

CHAIN = 200      # elementwise ops in the per-op overhead chain
CHAIN_N = 10


def grad_engines(peers, f_hg, f_ag, f_jax, f_torch, args):
    """The engines for the gradient w.r.t. the first of ``args`` (numpy arrays)."""
    engines = [
        ("hessgrad value_and_grad", lambda: hg.value_and_grad(f_hg)(*args)),
        ("hessgrad grad", lambda: hg.grad(f_hg)(*args)),
    ]
    traced = hg.function(hg.grad(f_hg))
    engines.append(("hessgrad function(grad)", lambda: traced(*args)))
    if peers["autograd"]:
        autograd, _ = peers["autograd"]
        ag_vg, ag_g = autograd.value_and_grad(f_ag), autograd.grad(f_ag)
        engines += [("autograd value_and_grad", lambda: ag_vg(*args)),
                    ("autograd grad", lambda: ag_g(*args))]
    if peers["jax"]:
        jax, jnp = peers["jax"]
        jargs = [jax.device_put(jnp.asarray(a)) for a in args]
        j_g, j_vg = jax.jit(jax.grad(f_jax)), jax.jit(jax.value_and_grad(f_jax))
        engines += [("jax jit(grad)", lambda: j_g(*jargs).block_until_ready()),
                    ("jax jit(value_and_grad)",
                     lambda: jax.block_until_ready(j_vg(*jargs)))]
    if peers["torch"]:
        torch = peers["torch"]
        targs = [torch.from_numpy(np.ascontiguousarray(a)) for a in args]
        x_leaf = targs[0].clone().requires_grad_(True)
        rest = targs[1:]

        def torch_autograd():
            y = f_torch(x_leaf, *rest)
            (g,) = torch.autograd.grad(y, x_leaf)
            return y.detach(), g
        t_g = torch.func.grad(f_torch)
        engines += [("torch autograd.grad", torch_autograd),
                    ("torch.func.grad", lambda: t_g(*targs))]
    return engines


def chain_engines(peers):
    """Gradient of sum(chain(x)), chain alternating sin(x) and x * 1.01."""
    x = np.linspace(0.1, 1.0, CHAIN_N)

    def chain(x, sin):
        for i in range(CHAIN):
            x = sin(x) if i % 2 == 0 else x * 1.01
        return x

    def np_grad():  # the hand-written reference: forward storing inputs, then backward
        inputs, h = [], x
        for i in range(CHAIN):
            inputs.append(h)
            h = np.sin(h) if i % 2 == 0 else h * 1.01
        g = np.ones_like(h)
        for i in reversed(range(CHAIN)):
            g = g * np.cos(inputs[i]) if i % 2 == 0 else g * 1.01
        return g

    engines = [("hessgrad grad (eager)",
                lambda: hg.grad(lambda x: hnp.sum(chain(x, hnp.sin)))(x))]
    if peers["autograd"]:
        autograd, anp = peers["autograd"]
        g = autograd.grad(lambda x: anp.sum(chain(x, anp.sin)))
        engines.append(("autograd grad", lambda: g(x)))
    if peers["torch"]:
        torch = peers["torch"]
        xt = torch.from_numpy(x).requires_grad_(True)

        def torch_eager():
            (g,) = torch.autograd.grad(torch.sum(chain(xt, torch.sin)), xt)
            return g
        engines.append(("torch eager autograd.grad", torch_eager))
    if peers["jax"]:
        jax, jnp = peers["jax"]
        xj = jnp.asarray(x)
        gj = jax.grad(lambda x: jnp.sum(chain(x, jnp.sin)))  # no jit: op-by-op dispatch
        engines.append(("jax grad (no jit)", lambda: gj(xj).block_until_ready()))
    return ("numpy hand-written backward", np_grad), engines


def main():
    args = harness.parser(__doc__.splitlines()[0]).parse_args()
    bench = harness.Bench("bench_first_order", args)
    peers = bench.peers

    for n in ((10, 1000) if args.quick else (10, 1000, 100000)):
        x = P.rosen_point(n)
        engines = grad_engines(peers, *P.per_engine(peers, P.rosen_for), [x])
        bench.case(f"Rosenbrock n={n}: value and gradient",
                   ("numpy rosen + rosen_der", lambda: P.np_rosen_value_and_grad(x)),
                   engines)

    m = 1000 if args.quick else 10000
    for d in ((100,) if args.quick else (100, 1000)):
        X, y, w = P.logistic_data(m, d)
        engines = grad_engines(peers, *P.per_engine(peers, P.logistic_for, P.logistic_torch),
                               [w, X, y])
        bench.case(f"logistic m={m} d={d}: value and gradient",
                   ("numpy hand-written", lambda: P.np_logistic_value_and_grad(w, X, y)),
                   engines)

    reference, engines = chain_engines(peers)
    bench.case(f"eager per-op overhead: gradient of a {CHAIN}-op elementwise chain, "
               f"n={CHAIN_N}", reference, engines, per=(CHAIN, "us/op"))
    chain_overhead(bench, reference, engines)
    bench.finish()


def chain_overhead(bench, reference, engines):
    """Per-op overhead beyond the numpy reference, (best engine call - best reference call)
    / CHAIN, from interleaved rounds: the medians above drift with the machine's load."""
    fns = {reference[0]: reference[1], **dict(engines)}
    best = harness.interleaved_best(fns, rounds=5 if bench.quick else 25)
    overhead = {name: (t - best[reference[0]]) / CHAIN * 1e6 for name, t in best.items()}
    base = overhead.get("autograd grad")
    rows = [(name, f"{best[name] * 1e6:.0f}", f"{overhead[name]:.2f}",
             "-" if base is None else f"{overhead[name] / base:.2f}")
            for name in list(fns)[1:]]
    bench.summary("eager per-op overhead, best of interleaved rounds",
                  ("engine", "best call us", "overhead us/op", "/ autograd"), rows)


if __name__ == "__main__":
    main()
