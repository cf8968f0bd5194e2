"""Compiled hessgrad.function (optimizer + generated code + Numba kernels) side by side with
hessgrad without kernels, hessgrad eager, JAX jit, autograd, PyTorch (if installed) and
hand-written numpy, in one run, single-threaded.

Run:  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_compiled.py [--quick]

Prints the median time per call of each engine for value, gradient, HVP, HVP at a fixed x
(make_hvp / linearize) and the dense Hessian (small problems), the first-call time (trace +
compile) of the gradient separately, and the geometric-mean ratios hessgrad compiled / JAX jit
and hessgrad eager / autograd (the targets). The engines take turns, round by round, so that a
slow phase of the machine slows all of them alike.
The machine may be shared and noisy: read medians and ratios, not single numbers.
"""

import os
import sys

os.environ.update({"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                   "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false "
                                "intra_op_parallelism_threads=1",
                   "JAX_ENABLE_X64": "1", "JAX_PLATFORMS": "cpu"})

import argparse  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import hessgrad as hg  # noqa: E402
import hessgrad.numpy as hnp  # noqa: E402

try:
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
except ImportError:  # pragma: no cover
    jax = None
try:
    import autograd
    import autograd.numpy as anp
except ImportError:  # pragma: no cover
    autograd = None
try:
    import torch
    import torch.func as tf
    torch.set_num_threads(1)
except ImportError:  # pragma: no cover
    torch = None


# --- problems, each written once against a small namespace -------------------------------
class NS:
    def __init__(self, **kw):
        self.__dict__.update(kw)


HNP = NS(sum=hnp.sum, mean=hnp.mean, tanh=hnp.tanh, sin=hnp.sin,
         softplus=lambda z: hnp.logaddexp(0.0, z), reshape=hnp.reshape)
if jax is not None:
    JNP = NS(sum=jnp.sum, mean=jnp.mean, tanh=jnp.tanh, sin=jnp.sin,
             softplus=lambda z: jnp.logaddexp(0.0, z), reshape=jnp.reshape)
if autograd is not None:
    ANP = NS(sum=anp.sum, mean=anp.mean, tanh=anp.tanh, sin=anp.sin,
             softplus=lambda z: anp.logaddexp(0.0, z), reshape=anp.reshape)
if torch is not None:
    TNP = NS(sum=torch.sum, mean=torch.mean, tanh=torch.tanh, sin=torch.sin,
             softplus=torch.nn.functional.softplus, reshape=torch.reshape)


def rosenbrock(xp, data):
    def f(x):
        odd, even = x[0::2], x[1::2]
        return xp.sum(100.0 * (even - odd ** 2) ** 2 + (1.0 - odd) ** 2)
    return f


def rosen_numpy(data):
    def value(x):
        odd, even = x[0::2], x[1::2]
        return np.sum(100.0 * (even - odd ** 2) ** 2 + (1.0 - odd) ** 2)

    def grad(x):
        odd, even = x[0::2], x[1::2]
        r = even - odd ** 2
        g = np.empty_like(x)
        g[0::2] = -400.0 * r * odd - 2.0 * (1.0 - odd)
        g[1::2] = 200.0 * r
        return g

    def hvp(x, v):
        odd, even = x[0::2], x[1::2]
        vo, ve = v[0::2], v[1::2]
        out = np.empty_like(x)
        out[0::2] = (1200.0 * odd ** 2 - 400.0 * even + 2.0) * vo - 400.0 * odd * ve
        out[1::2] = -400.0 * odd * vo + 200.0 * ve
        return out

    def hessian(x):
        n = x.size
        return np.stack([hvp(x, e) for e in np.eye(n)], axis=1)
    return dict(value=value, grad=grad, hvp=hvp, hessian=hessian)


def logistic(xp, data):
    X, y = data

    def f(w):
        return xp.mean(xp.softplus(-y * (X @ w))) + 5e-4 * xp.sum(w * w)
    return f


def logistic_numpy(data):
    X, y = data
    m = len(y)

    def value(w):
        return np.mean(np.logaddexp(0.0, -y * (X @ w))) + 5e-4 * np.sum(w * w)

    def grad(w):
        z = -y * (X @ w)
        s = 0.5 * (1.0 + np.tanh(0.5 * z))
        return X.T @ (-y * s) / m + 1e-3 * w

    def hvp(w, v):
        z = -y * (X @ w)
        s = 0.5 * (1.0 + np.tanh(0.5 * z))
        return X.T @ (s * (1 - s) * (X @ v)) / m + 1e-3 * v

    def hessian(w):
        z = -y * (X @ w)
        s = 0.5 * (1.0 + np.tanh(0.5 * z))
        return (X.T * (s * (1 - s))) @ X / m + 1e-3 * np.eye(len(w))
    return dict(value=value, grad=grad, hvp=hvp, hessian=hessian)


MLP_SIZES = (10, 40, 32, 1)


def _mlp_shapes():
    shapes, k = [], 0
    for a, b in zip(MLP_SIZES[:-1], MLP_SIZES[1:]):
        shapes.append(((k, k + a * b), (a, b)))
        k += a * b
        shapes.append(((k, k + b), (b,)))
        k += b
    return shapes, k


def mlp(xp, data):
    X, y = data
    shapes, _ = _mlp_shapes()

    def f(w):
        h = X
        for layer in range(len(shapes) // 2):
            (a0, a1), ws = shapes[2 * layer]
            (b0, b1), _ = shapes[2 * layer + 1]
            h = h @ xp.reshape(w[a0:a1], ws) + w[b0:b1]
            if layer < len(shapes) // 2 - 1:
                h = xp.tanh(h)
        r = h[:, 0] - y
        return xp.mean(r * r)
    return f


def mlp_numpy(data):
    X, y = data
    shapes, n = _mlp_shapes()
    L = len(shapes) // 2

    def unpack(w):
        return [(w[a0:a1].reshape(ws), w[b0:b1]) for ((a0, a1), ws), ((b0, b1), _)
                in zip(shapes[0::2], shapes[1::2])]

    def value(w):
        h = X
        for i, (W, b) in enumerate(unpack(w)):
            h = h @ W + b
            if i < L - 1:
                h = np.tanh(h)
        r = h[:, 0] - y
        return np.mean(r * r)

    def grad(w):
        params = unpack(w)
        hs = [X]
        h = X
        for i, (W, b) in enumerate(params):
            h = h @ W + b
            if i < L - 1:
                h = np.tanh(h)
            hs.append(h)
        g = (2.0 / len(y)) * (hs[-1][:, 0] - y)[:, None]
        out = []
        for i in reversed(range(L)):
            W, b = params[i]
            out.append((hs[i].T @ g, g.sum(0)))
            if i:
                g = (g @ W.T) * (1 - hs[i] ** 2)
        flat = []
        for gw, gb in reversed(out):
            flat += [gw.ravel(), gb]
        return np.concatenate(flat)
    return dict(value=value, grad=grad)


CHAIN_OPS = 200


def chain(xp, data):
    def f(x):
        for i in range(CHAIN_OPS // 4):
            x = xp.sin(x) * 0.9 + 0.1
            x = xp.tanh(x) * 1.1
        return xp.sum(x)
    return f


def chain_numpy(data):
    def value(x):
        for i in range(CHAIN_OPS // 4):
            x = np.tanh(np.sin(x) * 0.9 + 0.1) * 1.1
        return np.sum(x)

    def grad(x):
        d = np.ones_like(x)
        for i in range(CHAIN_OPS // 4):
            s = np.sin(x) * 0.9 + 0.1
            t = np.tanh(s)
            d = d * np.cos(x) * 0.9 * (1 - t * t) * 1.1
            x = t * 1.1
        return d
    return dict(value=value, grad=grad)


def problems(quick):
    rng = np.random.default_rng(0)
    out = []
    for n in (10, 1000, 100000):
        x = np.where(np.arange(n) % 2 == 0, -1.2, 1.0) + 0.01 * rng.standard_normal(n)
        out.append((f"rosenbrock n={n}", rosenbrock, rosen_numpy, None, x, n <= 1000))
    for d in ((100,) if quick else (100, 1000)):
        X = rng.standard_normal((10000, d)) / math.sqrt(d)
        y = np.sign(X @ rng.standard_normal(d) + 0.1 * rng.standard_normal(10000))
        out.append((f"logistic 10000x{d}", logistic, logistic_numpy, (X, y),
                    0.1 * rng.standard_normal(d), d <= 100))
    X = rng.standard_normal((1000, MLP_SIZES[0]))
    y = np.sin(X.sum(1))
    out.append((f"tanh MLP {_mlp_shapes()[1]} params", mlp, mlp_numpy, (X, y),
                0.2 * rng.standard_normal(_mlp_shapes()[1]), False))
    out.append((f"chain {CHAIN_OPS} ops n=10", chain, chain_numpy, None,
                rng.uniform(-1, 1, 10), True))
    return out


# --- engines ------------------------------------------------------------------------------
def hessgrad_engine(make, data, x, flags, env=None):
    f = make(HNP, data)

    def with_env(fn):
        if not env:
            return fn

        def run(*a):
            old = {k: os.environ.get(k) for k in env}
            os.environ.update(env)
            try:
                return fn(*a)
            finally:
                for k, o in old.items():
                    os.environ.pop(k) if o is None else os.environ.__setitem__(k, o)
        return run
    if flags is None:  # eager
        return dict(value=f, grad=hg.grad(f), hvp=hg.hvp(f),
                    make_hvp=lambda x: (lambda v: hg.hvp(f)(x, v)))
    value = hg.function(f, **flags)
    grad = hg.function(hg.grad(f), **flags)
    hvp = hg.function(hg.hvp(f), **flags)
    return dict(value=value, grad=grad, hvp=hvp, make_hvp=with_env(hg.make_hvp(f)),
                hessian=with_env(hg.hessian(f)))


def jax_engine(make, data, x):
    data = None if data is None else tuple(jnp.asarray(d) for d in data)
    f = make(JNP, data)
    g = jax.grad(f)

    def blocking(fn):
        # JAX dispatches asynchronously: without waiting for the result, a call's time
        # would leave out its computation, which would then overlap the next engine's.
        return lambda *a: jax.block_until_ready(fn(*a))

    def make_hvp(x):
        _, lin = jax.linearize(g, x)
        return blocking(jax.jit(lin))
    return dict(value=blocking(jax.jit(f)), grad=blocking(jax.jit(g)),
                hvp=blocking(jax.jit(lambda x, v: jax.jvp(g, (x,), (v,))[1])),
                make_hvp=make_hvp, hessian=blocking(jax.jit(jax.hessian(f))))


def autograd_engine(make, data, x):
    f = make(ANP, data)
    return dict(value=f, grad=autograd.grad(f), hvp=autograd.hessian_vector_product(f),
                make_hvp=lambda x: autograd.make_hvp(f)(x)[0], hessian=autograd.hessian(f))


def torch_engine(make, data, x):
    data = None if data is None else tuple(torch.from_numpy(d) for d in data)
    f = make(TNP, data)
    g = tf.grad(f)

    def wrap(fn):
        def run(*a):
            out = fn(*[torch.from_numpy(np.asarray(t)) for t in a])
            return out.numpy() if hasattr(out, "numpy") else out
        return run

    def make_hvp(x):
        _, lin = tf.linearize(g, torch.from_numpy(x))
        return wrap(lin)
    return dict(value=wrap(f), grad=wrap(g),
                hvp=wrap(lambda x, v: tf.jvp(g, (x,), (v,))[1]), make_hvp=make_hvp,
                hessian=wrap(tf.hessian(f)))


# --- timing -------------------------------------------------------------------------------
def calibrate(fn, target):
    """Calls per measurement so that one measurement takes about ``target`` seconds (the
    first call must already have happened)."""
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= target or number >= 10**5:
            return number
        number = max(number * 2, int(number * target / max(elapsed, 1e-9) * 0.6))


def measure_interleaved(calls, target, repeats):
    """Median seconds per call of each of ``calls`` (a dict), the engines taking turns for
    ``repeats`` rounds: on a shared machine a slow phase then slows every engine of the
    round alike, so that the ratios between engines hold even when the times do not."""
    numbers = {e: calibrate(fn, target) for e, fn in calls.items()}
    times = {e: [] for e in calls}
    for _ in range(repeats):
        for e, fn in calls.items():
            number = numbers[e]
            start = time.perf_counter()
            for _ in range(number):
                fn()
            times[e].append((time.perf_counter() - start) / number)
    return {e: float(np.median(ts)) for e, ts in times.items()}


def fmt(t):
    if t is None:
        return "-"
    if t < 1e-3:
        return f"{t * 1e6:.1f}us"
    if t < 1:
        return f"{t * 1e3:.2f}ms"
    return f"{t:.2f}s"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", metavar="TEXT", default="",
                        help="run only the problems whose label contains TEXT")
    args = parser.parse_args()
    target, repeats = (0.03, 3) if args.quick else (0.1, 5)
    tasks = ("value", "grad", "hvp", "make_hvp", "hessian")
    engines = ["hg compiled", "hg no kernels", "hg plan", "hg eager", "numpy"]
    if jax is not None:
        engines.insert(4, "jax jit")
    if autograd is not None:
        engines.insert(-1, "autograd")
    if torch is not None:
        engines.insert(-1, "torch")
    # The targets: geometric means of these ratios over the problems where both ran.
    pairs = {"hessgrad compiled / JAX jit": ("hg compiled", "jax jit",
                                             ("grad", "hvp", "make_hvp", "hessian")),
             "hessgrad eager / autograd": ("hg eager", "autograd", ("grad", "hvp"))}
    ratios = {(title, t): [] for title, (_, _, ts) in pairs.items() for t in ts}
    first_calls = []
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, single-threaded; "
          "medians per call")
    for label, make, make_np, data, x, small in problems(args.quick):
        if args.only not in label:
            continue
        v = np.random.default_rng(1).standard_normal(x.shape)
        built = {
            # compiled at the first call: the timed calls are the compiled program's
            # (benchmarks/first_and_tenth.py times the default, tiered compilation)
            "hg compiled": lambda: hessgrad_engine(make, data, x, {"compile": "eager"},
                                                   {"HESSGRAD_COMPILE": "eager"}),
            "hg no kernels": lambda: hessgrad_engine(
                make, data, x, {"jit_kernels": False, "compile": "eager"},
                {"HESSGRAD_JIT_KERNELS": "0", "HESSGRAD_COMPILE": "eager"}),
            "hg plan": lambda: hessgrad_engine(make, data, x, {"optimize": False},
                                               {"HESSGRAD_COMPILE": "0"}),
            "hg eager": lambda: hessgrad_engine(make, data, x, None),
            "jax jit": lambda: jax_engine(make, data, x),
            "autograd": lambda: autograd_engine(make, data, x),
            "torch": lambda: torch_engine(make, data, x),
            "numpy": lambda: dict(make_np(data), make_hvp=(
                lambda x, h=make_np(data).get("hvp"): None if h is None else
                (lambda v: h(x, v)))),
        }
        print(f"\n== {label}")
        print(f"{'task':10s}" + "".join(f"{e:>15s}" for e in engines))
        reference = {}
        calls = {}  # task -> engine -> call, timed together once every engine is warm
        table = {}
        for e in engines:
            try:
                fns = built[e]()
            except Exception as exc:  # noqa: BLE001
                print(f"  {e}: unavailable ({exc})")
                continue
            for task in tasks:
                fn = fns.get(task)
                if fn is None or (task == "hessian" and not small) or \
                        (e == "autograd" and task == "hessian" and x.size > 200) or \
                        (e in ("hg plan", "hg eager", "autograd", "torch") and x.size >= 10**5
                         and task != "value" and task != "grad"):
                    continue
                if task == "make_hvp":
                    start = time.perf_counter()
                    op = fn(x)
                    if op is None:
                        continue
                    out = op(v)
                    first = time.perf_counter() - start
                    call = (lambda op=op: op(v))
                elif task == "hvp":
                    start = time.perf_counter()
                    out = fn(x, v)
                    first = time.perf_counter() - start
                    call = (lambda fn=fn: fn(x, v))
                else:
                    start = time.perf_counter()
                    out = fn(x)
                    first = time.perf_counter() - start
                    call = (lambda fn=fn: fn(x))
                out = np.asarray(out, dtype=np.float64)
                if task in reference:
                    ok = np.allclose(out, reference[task], rtol=1e-6,
                                     atol=1e-8 * max(1.0, np.max(np.abs(reference[task]))))
                    if not ok:
                        print(f"  MISMATCH: {e} {task}")
                else:
                    reference[task] = out
                if task == "grad":
                    first_calls.append((label, e, first))
                calls.setdefault(task, {})[e] = call
        for task, by_engine in calls.items():
            for e, t in measure_interleaved(by_engine, target, repeats).items():
                table[(task, e)] = t
        for task in tasks:
            row = [table.get((task, e)) for e in engines]
            if all(t is None for t in row):
                continue
            print(f"{task:10s}" + "".join(f"{fmt(t):>15s}" for t in row))
            for title, (ours, peer, _) in pairs.items():
                mine, theirs = table.get((task, ours)), table.get((task, peer))
                if (title, task) in ratios and mine and theirs:
                    ratios[(title, task)].append(mine / theirs)
        firsts = [f"{e}: {fmt(t)}" for (lab, e, t) in first_calls if lab == label]
        print("first gradient call (trace + compile): " + ", ".join(firsts))
    for title in pairs:
        rows = [(task, rs) for (t, task), rs in ratios.items() if t == title and rs]
        if rows:
            print(f"\ngeometric-mean ratio {title} (lower is better):")
        for task, rs in rows:
            gm = math.exp(sum(math.log(r) for r in rs) / len(rs))
            print(f"  {task:10s} {gm:6.2f}  over {len(rs)} problems "
                  f"({', '.join(f'{r:.2f}' for r in rs)})")


if __name__ == "__main__":
    main()
