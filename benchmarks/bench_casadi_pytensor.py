"""CasADi (SX, MX, generated C) and PyTensor (C, Numba) beside compiled hessgrad (issue 39):
value, gradient, HVP, HVP at a fixed x, dense and sparse Hessian on four problems of about
n = 1,000, in one run, single-threaded.

Run:  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_casadi_pytensor.py
          [--quick] [--only TEXT] [--skip casadi,pytensor,...] [--json FILE]

Problems: extended Rosenbrock (``scipy.optimize.rosen``, n = 1000), ARWHEAD (n = 1000, an
arrowhead Hessian), a p-Laplacian energy (p = 3) on a 32 x 32 grid of interior unknowns
(5-point stencil, forward differences, zero boundary, a linear load), and L2-regularised
logistic regression on a fixed 10,000 x 100 data matrix (a constant of each engine's graph).
Every engine's result is checked (``np.allclose``) against a hand-written numpy reference
before it is timed; one that disagrees (or raises) is printed as FAILED and is not timed.

Engines: ``hg compiled`` (``hg.function`` of the value, ``hg.grad``, ``hg.hvp`` and
``hg.hessian``; ``hg.make_hvp``; ``hg.sparse_hessian`` of ``hg.function(f)``; compiled at
the first call; ``hg plain f``: ``hg.sparse_hessian(f)`` of the plain Python ``f``, which
re-runs ``f`` eagerly at each call to check what it reads from outside), CasADi
``SX`` and ``MX`` (``casadi.Function`` called from Python with numpy inputs: its per-call
overhead counts, a user pays it), ``casadi C`` (``CodeGenerator`` then ``gcc -O3
-march=native -shared -fPIC``, loaded with ``casadi.external``; generated from SX, from MX for
the logistic loss, whose SX graph has 3 million nodes), ``casadi SX buffer`` and ``casadi C
buffer`` (the same functions called through ``Function.buffer()``, CasADi's low-overhead call
with numpy arrays bound by memoryview: no DM conversions), PyTensor ``C``
(``mode="FAST_RUN"``) and ``Numba`` (``mode="NUMBA"``). CasADi's HVP is forward over reverse (``jtimes`` of
``gradient``), PyTensor's ``hessian_vector_product`` (reverse over reverse); neither has a
"fixed x" mode: their HVP at a fixed x is the same function called with x fixed (CasADi's x
converted to a DM once). PyTensor has no sparse Hessian (``-``).

``--skip`` leaves out every engine whose label contains one of its comma-separated words
(``--skip "casadi C"`` both generated-C engines, ``--skip pytensor`` both PyTensor ones).

The engines of one task take turns, round by round (medians over the rounds), so that a slow
phase of a shared machine slows all of them alike: read ratios within the run.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402  (first: pins every engine to one thread)

# hessgrad's first call compiles (trace + compile), as in bench_compiled.py: the timed calls
# are the compiled program's, not the tiered start's
os.environ.setdefault("HESSGRAD_COMPILE", "eager")

import math  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import scipy.optimize as so  # noqa: E402
import scipy.sparse as sp  # noqa: E402

import hessgrad as hg  # noqa: E402
import hessgrad.numpy as hnp  # noqa: E402
from bench_sparse import rosen_hess_sparse  # noqa: E402

try:
    import casadi as ca
except ImportError:  # pragma: no cover
    ca = None
try:
    import pytensor
    import pytensor.tensor as pt
    from pytensor.gradient import hessian_vector_product as pt_hvp
except ImportError:  # pragma: no cover
    pytensor = None

TASKS = ("value", "grad", "hvp", "hvp_fixed", "hessian", "sparse")
TASK_NAMES = {"value": "value", "grad": "grad", "hvp": "HVP", "hvp_fixed": "HVP at fixed x",
              "hessian": "dense Hessian", "sparse": "sparse Hessian"}
ENGINES = ("hg compiled", "hg plain f", "casadi SX", "casadi MX", "casadi C", "casadi SX buffer",
           "casadi C buffer", "pytensor C", "pytensor Numba")
LAM = 1e-2           # logistic: 0.5 * LAM * ||w||^2
P, EPS = 3.0, 1e-2   # p-Laplacian exponent and regularisation


# --- namespaces: each problem is written once against these ------------------------------
class NS:
    def __init__(self, **kw):
        self.__dict__.update(kw)


HNP = NS(sum=hnp.sum, exp=hnp.exp, const=np.asarray,
         reshape=lambda a, shape: hnp.reshape(a, shape), pad0=lambda a: hnp.pad(a, 1),
         matvec=lambda A, w: A @ w, softplus=lambda z: hnp.logaddexp(0.0, z))


def _casadi_ns(kind):
    from casadi_problems import CasadiNumpy
    shim = CasadiNumpy()
    sym = getattr(ca, kind)

    def pad0(a):
        rows, cols = a.shape
        side, band = sym.zeros(rows, 1), sym.zeros(1, cols + 2)
        return ca.vertcat(band, ca.horzcat(side, a, side), band)

    def const(a):
        a = np.asarray(a, dtype=np.float64)
        return sym(ca.DM(a)) if kind == "MX" else ca.DM(a)
    return NS(sum=shim.sum, exp=ca.exp, const=const, reshape=shim.reshape, pad0=pad0,
              matvec=ca.mtimes, softplus=lambda z: ca.log(1.0 + ca.exp(z)))


if pytensor is not None:
    PTNS = NS(sum=pt.sum, exp=pt.exp, const=lambda a: pt.constant(np.asarray(a, np.float64)),
              reshape=lambda a, shape: pt.reshape(a, shape),
              pad0=lambda a: pt.set_subtensor(pt.zeros((a.shape[0] + 2, a.shape[1] + 2))
                                              [1:-1, 1:-1], a),
              matvec=lambda A, w: pt.dot(A, w), softplus=pt.softplus)


# --- problems ----------------------------------------------------------------------------
def rosen(xp, data):
    def f(x):
        return xp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    return f


def rosen_ref(data):
    return dict(value=so.rosen, grad=so.rosen_der, hvp=so.rosen_hess_prod,
                hessian=so.rosen_hess, sparse=rosen_hess_sparse)


def arwhead(xp, data):
    def f(x):
        head = x[:-1]
        return xp.sum(-4.0 * head + 3.0) + xp.sum((head ** 2 + x[-1] ** 2) ** 2)
    return f


def arwhead_ref(data):
    def value(x):
        h = x[:-1]
        return np.sum(-4.0 * h + 3.0) + np.sum((h ** 2 + x[-1] ** 2) ** 2)

    def grad(x):
        h, t = x[:-1], x[-1]
        q = h ** 2 + t ** 2
        return np.append(-4.0 + 4.0 * q * h, np.sum(4.0 * q * t))

    def parts(x):
        h, t = x[:-1], x[-1]
        q = h ** 2 + t ** 2
        return 4.0 * q + 8.0 * h ** 2, 8.0 * h * t, np.sum(4.0 * q + 8.0 * t ** 2)

    def hvp(x, v):
        d, a, c = parts(x)
        return np.append(d * v[:-1] + a * v[-1], a @ v[:-1] + c * v[-1])

    def sparse(x):
        d, a, c = parts(x)
        n = x.size
        rows = np.concatenate([np.arange(n - 1), np.arange(n - 1), np.full(n - 1, n - 1),
                               [n - 1]])
        cols = np.concatenate([np.arange(n - 1), np.full(n - 1, n - 1), np.arange(n - 1),
                               [n - 1]])
        return sp.csr_matrix((np.concatenate([d, a, a, [c]]), (rows, cols)), shape=(n, n))
    return dict(value=value, grad=grad, hvp=hvp, hessian=lambda x: sparse(x).toarray(),
                sparse=sparse)


def plaplace(xp, data):
    load, N = data
    h = 1.0 / (N + 1)
    c = xp.const(load * h ** 2)

    def f(u):
        U = xp.pad0(xp.reshape(u, (N, N)))
        gx = (U[1:, :-1] - U[:-1, :-1]) / h
        gy = (U[:-1, 1:] - U[:-1, :-1]) / h
        return (h ** 2 / P) * xp.sum((gx ** 2 + gy ** 2 + EPS) ** (P / 2)) - xp.sum(c * u)
    return f


def _difference_matrices(N):
    """gx = Dx u, gy = Dy u on the (N + 1)^2 cells, u the N x N interior (row-major)."""
    h = 1.0 / (N + 1)
    idx = -np.ones((N + 2, N + 2), dtype=np.int64)
    idx[1:-1, 1:-1] = np.arange(N * N).reshape(N, N)

    def diff(a, b):   # (node a - node b) / h on every cell; boundary nodes are zero
        rows, cols, vals = [], [], []
        for k, (ia, ib) in enumerate(zip(a.ravel(), b.ravel())):
            for node, s in ((ia, 1.0), (ib, -1.0)):
                if node >= 0:
                    rows.append(k)
                    cols.append(node)
                    vals.append(s / h)
        return sp.csr_matrix((vals, (rows, cols)), shape=(a.size, N * N))
    return diff(idx[1:, :-1], idx[:-1, :-1]), diff(idx[:-1, 1:], idx[:-1, :-1])


def plaplace_ref(data):
    load, N = data
    h = 1.0 / (N + 1)
    Dx, Dy = _difference_matrices(N)
    c = load * h ** 2

    def parts(u):
        gx, gy = Dx @ u, Dy @ u
        s = gx ** 2 + gy ** 2 + EPS
        return gx, gy, s, s ** (P / 2 - 1), (P - 2) * s ** (P / 2 - 2)

    def value(u):
        gx, gy, s, w, k = parts(u)
        return (h ** 2 / P) * np.sum(s ** (P / 2)) - c @ u

    def grad(u):
        gx, gy, s, w, k = parts(u)
        return h ** 2 * (Dx.T @ (w * gx) + Dy.T @ (w * gy)) - c

    def hvp(u, v):
        gx, gy, s, w, k = parts(u)
        dx, dy = Dx @ v, Dy @ v
        t = k * (gx * dx + gy * dy)
        return h ** 2 * (Dx.T @ (w * dx + t * gx) + Dy.T @ (w * dy + t * gy))

    def sparse(u):
        gx, gy, s, w, k = parts(u)
        d = sp.diags
        H = (Dx.T @ d(w + k * gx ** 2) @ Dx + Dy.T @ d(w + k * gy ** 2) @ Dy
             + Dx.T @ d(k * gx * gy) @ Dy + Dy.T @ d(k * gx * gy) @ Dx)
        return sp.csr_matrix(h ** 2 * H)
    return dict(value=value, grad=grad, hvp=hvp, hessian=lambda u: sparse(u).toarray(),
                sparse=sparse)


def logistic(xp, data):
    X, y = data
    A = xp.const(-y[:, None] * X)   # the margins' signs folded into the data: z = A w
    m = X.shape[0]

    def f(w):
        return xp.sum(xp.softplus(xp.matvec(A, w))) / m + (0.5 * LAM) * xp.sum(w * w)
    return f


def logistic_ref(data):
    X, y = data
    m, d = X.shape

    def sig(w):
        return 0.5 * (1.0 + np.tanh(0.5 * (-y * (X @ w))))

    def value(w):
        return np.mean(np.logaddexp(0.0, -y * (X @ w))) + 0.5 * LAM * (w @ w)

    def grad(w):
        return X.T @ (-y * sig(w)) / m + LAM * w

    def hvp(w, v):
        s = sig(w)
        return X.T @ (s * (1 - s) * (X @ v)) / m + LAM * v

    def hessian(w):
        s = sig(w)
        return (X.T * (s * (1 - s))) @ X / m + LAM * np.eye(d)
    return dict(value=value, grad=grad, hvp=hvp, hessian=hessian,
                sparse=lambda w: sp.csr_matrix(hessian(w)))


def problems(quick):
    rng = np.random.default_rng(0)
    n = 100 if quick else 1000
    N = 8 if quick else 32
    rows, d = (1000, 20) if quick else (10000, 100)
    x_rosen = np.where(np.arange(n) % 2 == 0, -1.2, 1.0) + 0.01 * rng.standard_normal(n)
    x_arw = 1.0 + 0.5 * rng.standard_normal(n)
    gi, gj = np.meshgrid(np.arange(1, N + 1), np.arange(1, N + 1), indexing="ij")
    h = 1.0 / (N + 1)
    load = (1.0 + np.sin(2 * np.pi * gi * h) * np.cos(np.pi * gj * h)).ravel()
    u = 0.1 * rng.standard_normal(N * N)
    X = rng.standard_normal((rows, d)) / math.sqrt(d)
    y = np.sign(X @ rng.standard_normal(d) + 0.1 * rng.standard_normal(rows))
    w = 0.1 * rng.standard_normal(d)
    return [(f"rosenbrock n={n}", rosen, rosen_ref, None, x_rosen),
            (f"arwhead n={n}", arwhead, arwhead_ref, None, x_arw),
            (f"p-laplace {N}x{N} (n={N * N})", plaplace, plaplace_ref, (load, N), u),
            (f"logistic {rows}x{d}", logistic, logistic_ref, (X, y), w)]


# --- engines: {task: builder}, builder() -> the callable ----------------------------------
def hessgrad_engine(make, data, x, label):
    f = make(HNP, data)
    flags = {"compile": "eager"}
    return {
        "value": lambda: hg.function(f, **flags),
        "grad": lambda: hg.function(hg.grad(f), **flags),
        "hvp": lambda: hg.function(hg.hvp(f), **flags),
        "hvp_fixed": lambda: hg.make_hvp(f),
        "hessian": lambda: hg.function(hg.hessian(f), **flags),
        # f as a hg.function: sparse_hessian then skips its per-call check of what f reads
        # from outside its arguments (an eager run of f; see hessgrad.tracing.capture)
        "sparse": lambda: hg.sparse_hessian(hg.function(f, **flags)),
    }


def hessgrad_plain_engine(make, data, x, label):
    """``hg.sparse_hessian(f)`` of the plain Python ``f``: the check included."""
    return {"sparse": lambda: hg.sparse_hessian(make(HNP, data))}


class CasadiBuild:
    """The SX or MX expressions of one problem, built once (lazily) for all its tasks."""

    def __init__(self, make, data, n, kind):
        self.make, self.data, self.n, self.kind = make, data, n, kind
        self._exprs = {}

    def expr(self, what):
        if not self._exprs:
            sym = getattr(ca, self.kind)
            x, v = sym.sym("x", self.n), sym.sym("v", self.n)
            f = self.make(_casadi_ns(self.kind), self.data)(x)
            self._exprs.update(x=x, v=v, f=f)
        e = self._exprs
        if what not in e:
            if what == "grad":
                e["grad"] = ca.gradient(e["f"], e["x"])
            elif what == "hvp":
                e["hvp"] = ca.jtimes(self.expr("grad"), e["x"], e["v"])
            elif what == "hessian":
                e["hessian"] = ca.hessian(e["f"], e["x"])[0]
        return e[what]

    def function(self, task):
        x, v = self.expr("x"), self.expr("v")
        if task == "value":
            return ca.Function("value", [x], [self.expr("f")])
        if task == "grad":
            return ca.Function("grad", [x], [self.expr("grad")])
        if task == "hvp":
            return ca.Function("hvp", [x, v], [self.expr("hvp")])
        if task == "hessian":
            return ca.Function("hessian", [x], [ca.densify(self.expr("hessian"))])
        if task == "sparse":
            return ca.Function("sparse", [x], [self.expr("hessian")])
        raise KeyError(task)


def compile_c(F, workdir):
    """``F`` generated as C, compiled with gcc -O3 -march=native, loaded as casadi.external."""
    name = F.name()
    # a folder per library: dlopen returns the library already loaded from the same path
    workdir = tempfile.mkdtemp(dir=workdir)
    cg = ca.CodeGenerator(f"{name}.c")
    cg.add(F)
    cg.generate(workdir + os.sep)
    src, lib = os.path.join(workdir, f"{name}.c"), os.path.join(workdir, f"{name}.so")
    subprocess.run(["gcc", "-O3", "-march=native", "-shared", "-fPIC", src, "-o", lib],
                   check=True)
    return ca.external(name, lib)


def _casadi_calls(task, F):
    """Python callables with numpy in and numpy out around a casadi.Function."""
    if task == "value":
        return lambda x: float(F(x))
    if task in ("grad",):
        return lambda x: F(x).full().ravel()
    if task == "hvp":
        return lambda x, v: F(x, v).full().ravel()
    if task == "hvp_fixed":
        def at(x):
            xd = ca.DM(x)
            return lambda v: F(xd, v).full().ravel()
        return at
    if task == "hessian":
        return lambda x: F(x).full()
    if task == "sparse":
        # the output's CCS pattern, fixed: for a symmetric H, CCS of H = CSR of H
        pattern = F.sparsity_out(0)
        indptr = np.asarray(pattern.colind(), dtype=np.int32)
        indices = np.asarray(pattern.row(), dtype=np.int32)
        shape = pattern.shape
        return lambda x: sp.csr_matrix((np.asarray(F(x).nonzeros()), indices, indptr),
                                       shape=shape)
    raise KeyError(task)


def _casadi_buffer_calls(task, F):
    """The same through ``Function.buffer()``: numpy arrays bound as the inputs and outputs
    (no conversion to and from DM; the outputs are written into preallocated arrays, which
    every call returns, not copies)."""
    buf, run = F.buffer()
    out = np.zeros(F.nnz_out(0))
    buf.set_res(0, memoryview(out))

    def call(*args):
        for i, a in enumerate(args):
            buf.set_arg(i, memoryview(a))
        run()
        return out
    if task == "value":
        return lambda x: float(call(x)[0])
    if task in ("grad", "hvp"):
        return call
    if task == "hvp_fixed":
        def at(x):
            x = np.array(x)   # the buffer keeps a pointer, not a reference: op keeps x

            def op(v):
                buf.set_arg(0, memoryview(x))
                buf.set_arg(1, memoryview(v))
                run()
                return out
            return op
        return at
    if task == "hessian":
        n = F.size1_out(0)
        return lambda x: call(x).reshape(n, n).T   # column-major dense output
    if task == "sparse":
        pattern = F.sparsity_out(0)
        indptr = np.asarray(pattern.colind(), dtype=np.int32)
        indices = np.asarray(pattern.row(), dtype=np.int32)
        return lambda x: sp.csr_matrix((call(x), indices, indptr), shape=pattern.shape)
    raise KeyError(task)


_QUICK = [False]
_CASADI = {}   # (problem, kind) -> CasadiBuild; (problem, "C", task) -> compiled Function


def casadi_engine(make, data, x, label, workdir):
    n = x.size
    big = make is logistic and not _QUICK[0]  # its SX graph: 3 million nodes
    gen_c = label.startswith("casadi C")
    kind = ("MX" if make is logistic else "SX") if gen_c else label.split()[1]
    build = _CASADI.setdefault((make, kind), CasadiBuild(make, data, n, kind))
    if big and kind == "SX":
        skip = {"hessian", "sparse"}   # 100 dense directions over a 3-million-node graph
    else:
        skip = set()
    wrap = _casadi_buffer_calls if label.endswith("buffer") else _casadi_calls

    def builder(task):
        def make_call():
            name = "hvp" if task == "hvp_fixed" else task
            if gen_c and task == "hessian":
                # the generated C of a densified SX output assigns every entry (10^6 lines
                # for gcc): the sparse function's result is scattered into numpy instead
                name = "sparse"
            key = (make, "C" if gen_c else kind, name)
            if key not in _CASADI:
                F = build.function(name)
                _CASADI[key] = compile_c(F, workdir) if gen_c else F
            if name != task and task == "hessian":
                sparse = wrap("sparse", _CASADI[key])
                return lambda x: sparse(x).toarray()
            return wrap(task, _CASADI[key])
        return make_call
    return {task: builder(task) for task in TASKS if task not in skip}


def pytensor_engine(make, data, x, label):
    mode = "NUMBA" if label.endswith("Numba") else "FAST_RUN"
    xs, vs = pt.vector("x", dtype="float64"), pt.vector("v", dtype="float64")
    f = make(PTNS, data)(xs)

    def fn(inputs, output):
        return pytensor.function(inputs, output, mode=mode)

    def hvp():
        F = fn([xs, vs], pt_hvp(f, xs, vs))
        return F

    def hvp_fixed():
        F = hvp()
        return lambda x: (lambda v: F(x, v))
    return {
        "value": lambda: (lambda F: lambda x: float(F(x)))(fn([xs], f)),
        "grad": lambda: fn([xs], pytensor.grad(f, xs)),
        "hvp": hvp,
        "hvp_fixed": hvp_fixed,
        "hessian": lambda: fn([xs], pytensor.gradient.hessian(f, xs)),
    }


# --- checking and timing -----------------------------------------------------------------
def _dense(a):
    return a.toarray() if sp.issparse(a) else np.asarray(a, dtype=np.float64)


def agree(out, ref, task):
    """(ok, message): np.allclose with atol relative to the reference's largest entry."""
    if task == "sparse" and not sp.issparse(out):
        return False, f"not a scipy sparse matrix: {type(out).__name__}"
    out, ref = _dense(out), _dense(ref)
    if out.shape != ref.shape:
        return False, f"shape {out.shape}, reference {ref.shape}"
    rtol = 1e-7 if task in ("value", "grad") else 1e-6
    atol = 1e-10 * max(float(np.max(np.abs(ref))), 1e-300)
    if not np.allclose(out, ref, rtol=rtol, atol=atol):
        err = np.abs(out - ref)
        return False, f"max abs error {err.max():.3e} (max |ref| {np.max(np.abs(ref)):.3e})"
    return True, ""


def measure_interleaved(calls, target, repeats, budget):
    """Median seconds per call of each of ``calls``, the engines taking turns for up to
    ``repeats`` rounds (fewer when a round would exceed the budget)."""
    loops, times = {}, {}
    for e, fn in calls.items():
        loops[e], t = harness.calibrate(fn, target, most=10 ** 6)
        t /= loops[e]
        times[e] = [t]
    per_round = sum(times[e][0] * loops[e] for e in calls)
    rounds = max(2, min(repeats - 1, int(budget / max(per_round, 1e-9))))
    for _ in range(rounds):
        for e, fn in calls.items():
            times[e].append(harness.timed(fn, loops[e]) / loops[e])
    return {e: (statistics.median(ts), ts, loops[e]) for e, ts in times.items()}


def fmt(t):
    return "-" if t is None else harness.fmt_time(t)


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def main():
    p = harness.parser(__doc__.splitlines()[0])
    p.add_argument("--only", metavar="TEXT", default="",
                   help="run only the problems whose label contains TEXT")
    args = p.parse_args()
    _QUICK[0] = args.quick
    # harness.Bench loads autograd/JAX/torch unless skipped: this script has none of them
    user_skip = args.skip
    args.skip = ",".join(s for s in ("autograd,jax,torch", user_skip) if s)
    if args.budget is None:
        args.budget = 1.0 if args.quick else 4.0
    if args.target is None:
        args.target = 0.02 if args.quick else 0.1
    bench = harness.Bench("bench_casadi_pytensor", args)
    skip = [s.strip() for s in user_skip.split(",") if s.strip()]
    versions = [f"casadi {ca.__version__}" if ca else "casadi: not installed",
                f"pytensor {pytensor.__version__} (cxx={pytensor.config.cxx!r}, "
                f"blas__ldflags={pytensor.config.blas__ldflags!r})" if pytensor
                else "pytensor: not installed"]
    print("# " + ", ".join(versions) + f", HESSGRAD_COMPILE={os.environ['HESSGRAD_COMPILE']}")
    engines = [e for e in ENGINES if not any(s in e for s in skip)]
    if ca is None:
        print("note: casadi is not installed; skipping the CasADi engines "
              "(pip install -e '.[bench]')")
        engines = [e for e in engines if not e.startswith("casadi")]
    if pytensor is None:
        print("note: pytensor is not installed; skipping the PyTensor engines "
              "(pip install -e '.[bench]')")
        engines = [e for e in engines if not e.startswith("pytensor")]
    if shutil.which("gcc") is None and any(e.startswith("casadi C") for e in engines):
        print("note: gcc not found; skipping the casadi C engines")
        engines = [e for e in engines if not e.startswith("casadi C")]
    workdir = tempfile.mkdtemp(prefix="bench_casadi_c_")
    table = {}      # (problem, task, engine) -> median seconds
    firsts = {}     # (problem, task, engine) -> build + first call seconds
    labels = []
    try:
        for label, make, make_ref, data, x in problems(args.quick):
            if args.only not in label:
                continue
            labels.append(label)
            run_problem(bench, label, make, make_ref, data, x, engines, workdir, table,
                        firsts, args)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    summarize(bench, labels, engines, table, firsts)
    bench.finish()


def run_problem(bench, label, make, make_ref, data, x, engines, workdir, table, firsts, args):
    print(f"\n== {label}", flush=True)
    v = np.random.default_rng(1).standard_normal(x.shape)
    ref = make_ref(data)
    truth = {"value": ref["value"](x), "grad": ref["grad"](x), "hvp": ref["hvp"](x, v),
             "hvp_fixed": ref["hvp"](x, v), "hessian": ref["hessian"](x),
             "sparse": ref["sparse"](x)}
    calls = {t: {} for t in TASKS}
    seconds = {}
    for e in engines:
        t0 = time.perf_counter()
        try:
            if e == "hg compiled":
                builders = hessgrad_engine(make, data, x, e)
            elif e == "hg plain f":
                builders = hessgrad_plain_engine(make, data, x, e)
            elif e.startswith("casadi"):
                builders = casadi_engine(make, data, x, e, workdir)
            else:
                builders = pytensor_engine(make, data, x, e)
        except Exception as exc:  # noqa: BLE001
            bench._fail(label, e, f"raised {type(exc).__name__}: {exc}")
            continue
        setup = time.perf_counter() - t0
        for task in TASKS:
            if task not in builders:
                continue
            start = time.perf_counter()
            try:
                fn = builders[task]()
                if task == "hvp_fixed":
                    op = fn(x)
                    out = op(v)
                    call = (lambda op=op: op(v))
                elif task == "hvp":
                    out = fn(x, v)
                    call = (lambda fn=fn: fn(x, v))
                else:
                    out = fn(x)
                    call = (lambda fn=fn: fn(x))
            except Exception as exc:  # noqa: BLE001
                bench._fail(f"{label} {TASK_NAMES[task]}", e,
                            f"raised {type(exc).__name__}: {str(exc)[:300]}")
                continue
            first = time.perf_counter() - start + setup
            setup = 0.0
            ok, msg = agree(out, truth[task], task)
            if not ok:
                bench._fail(f"{label} {TASK_NAMES[task]}", e, msg)
                continue
            firsts[(label, task, e)] = first
            start = time.perf_counter()
            call()
            seconds[(label, task, e)] = time.perf_counter() - start
            calls[task][e] = call
    for task in TASKS:
        if not calls[task]:
            continue
        slow = {e: c for e, c in calls[task].items()
                if seconds[(label, task, e)] > args.max_call}
        fast = {e: c for e, c in calls[task].items() if e not in slow}
        res = measure_interleaved(fast, args.target, args.repeats or 7, args.budget) \
            if fast else {}
        for e in slow:   # one run: its second call
            res[e] = (seconds[(label, task, e)], [seconds[(label, task, e)]], 1)
        for e, (med, ts, loops) in res.items():
            table[(label, task, e)] = med
            q = np.percentile(ts, [25, 75])
            bench.records.append({"case": f"{label} {TASK_NAMES[task]}", "engine": e,
                                  "median_s": med, "q1_s": float(q[0]), "q3_s": float(q[1]),
                                  "repeats": len(ts), "loops": loops,
                                  "first_call_s": firsts[(label, task, e)],
                                  "note": "1 run" if e in slow else ""})
    hg_ = "hg compiled"
    cols = [e for e in engines if any((label, t, e) in table for t in TASKS)]
    print(f"  {'median per call':16s}" + "".join(f"{e:>18s}" for e in cols))
    for task in TASKS:
        print(f"  {TASK_NAMES[task]:16s}" + "".join(
            f"{fmt(table.get((label, task, e))):>18s}" for e in cols))
    print(f"  {'/ hg compiled':16s}")
    for task in TASKS:
        base = table.get((label, task, hg_))
        ratios = [table[(label, task, e)] / base if base and (label, task, e) in table
                  else None for e in cols]
        print(f"  {TASK_NAMES[task]:16s}" + "".join(
            f"{'-' if r is None else f'{r:.3g}':>18s}" for r in ratios))
    print(f"  {'first call':16s} (build + trace + compile + one call)")
    for task in TASKS:
        print(f"  {TASK_NAMES[task]:16s}" + "".join(
            f"{fmt(firsts.get((label, task, e))):>18s}" for e in cols), flush=True)


def summarize(bench, labels, engines, table, firsts):
    hg_ = "hg compiled"
    rows = []
    for e in engines:
        if e == hg_:
            continue
        row = [e]
        for task in TASKS:
            ratios = [table[(lab, task, e)] / table[(lab, task, hg_)] for lab in labels
                      if (lab, task, e) in table and (lab, task, hg_) in table]
            gm = geomean(ratios)
            row.append("-" if gm is None else f"{gm:.3g} ({len(ratios)})")
        rows.append(row)
    bench.summary("geometric mean of peer time / hg compiled time over the problems "
                  "(number of problems); > 1: hessgrad is faster",
                  ["peer"] + [TASK_NAMES[t] for t in TASKS], rows)
    rows = []
    for lab in labels:
        rows.append([lab] + [fmt(firsts.get((lab, t, hg_))) for t in TASKS])
    bench.summary("hg compiled first calls (trace + compile + one call)",
                  ["problem"] + [TASK_NAMES[t] for t in TASKS], rows)


if __name__ == "__main__":
    main()
