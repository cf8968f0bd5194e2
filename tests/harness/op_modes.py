"""The op-by-op harness's runner: one sample through every mode, compared.

Values: eager, numpy's own function (SciPy's for ``hessgrad.scipy``), ``hg.function``
(compiled with kernels, without kernels, the plain plan; optionally with fused kernels forced
on for every size), ``Graph`` with placeholders and ``vmap`` over two points. Derivatives, of a
scalar *head* of the outputs (``sum(w1 * y + w2 * y**2)`` over every float leaf, real and imaginary parts: quadratic, so even a linear op has a
Hessian): the gradient eagerly, on a ``GradientTape``, in a ``Graph`` (``hg.gradients``),
compiled in each ``hg.function`` flavour and under ``vmap``; HVPs in every ``hg.hvp`` mode,
compiled, nested tapes and graph mode; Hessians dense (with and without sparsity detection,
compiled, graph ``hg.hessians``) and sparse (``hg.sparse_hessian``). Every mode is compared
with the eager one, and the eager ones with central finite differences: the gradient along a
direction, the HVP as a difference of gradients, and ``v.Hv`` as a second difference of values
(finite differences to second order, independent of every derivative rule).

:func:`check` returns the list of disagreements (empty: all modes agree), each naming its mode.
``every_mode=False`` runs the *core* modes only (eager, numpy, ``hg.function`` with its default
kernels, ``Graph`` values, gradients and HVPs, ``GradientTape``, ``vmap``, every ``hg.hvp``
mode, nested tapes, dense, compiled and sparse Hessians, finite differences): the catalog
runs every mode on each function's first sample and the core on its others, to keep the
default test run short (``HESSGRAD_HARNESS=full`` runs every mode on every sample).
"""

import contextlib
import warnings

import numpy as np

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.kernels import tuning
from hessgrad.engine.nest import flatten

# Modes agree up to rounding (the compiler reorders sums): relative to the result's scale.
MODE_RTOL = 1e-9
# Central differences: step and tolerance for first derivatives, and for second ones.
FD_STEP, FD_TOL = 1e-6, 1e-6
FD2_STEP, FD2_TOL = 1e-4, 1e-4
HVP_MODES = ("auto", "fwd-rev", "rev-rev", "rev-fwd")
MAX_HESSIAN_SIZE = 64  # inputs with more elements: no dense Hessians (n HVPs each)


@contextlib.contextmanager
def kernels_forced():
    """Fused Numba kernels for every elementwise group, however small (by default groups of
    fewer than ``tuning.MIN_SIZE`` elements stay on numpy, and the harness's arrays are
    small)."""
    saved, tuning.MIN_SIZE = tuning.MIN_SIZE, 1
    try:
        yield
    finally:
        tuning.MIN_SIZE = saved


def compiled(fn, flavour):
    """``fn`` under ``hg.function`` in a flavour: "kernels", "nokernels", "plan", "forced"."""
    flags = {"kernels": {}, "forced": {}, "nokernels": {"jit_kernels": False},
             "plan": {"optimize": False}}[flavour]
    function = hg.function(fn, compile="eager", **flags)  # compiled at once, not when hot
    if flavour != "forced":
        return function

    def run(*args):
        with kernels_forced():
            return function(*args)
    return run


FLAVOURS = ("kernels", "nokernels", "plan")  # "forced" too with forced_kernels=True
CORE_FLAVOURS = ("kernels",)


def leaves(out):
    """The outputs as a list of numpy arrays."""
    return [np.asarray(v.numpy() if isinstance(v, hg.Tensor) else v) for v in flatten(out)]


def scale(a):
    """The size of ``a``'s finite values (at least 1): infinities are compared exactly."""
    a = np.abs(np.asarray(a))
    a = a[np.isfinite(a)]
    return max(1.0, float(np.max(a))) if a.size else 1.0


class Report:
    """Disagreements found, each a line naming its mode."""

    def __init__(self, every_mode=True, forced_kernels=False):
        self.lines, self.every_mode = [], every_mode
        self.flavours = (FLAVOURS + ("forced",) * forced_kernels if every_mode else
                         CORE_FLAVOURS)

    def fail(self, mode, message):
        self.lines.append(f"{mode}: {message}")

    def compare(self, mode, got, want, rtol=MODE_RTOL, what="values"):
        got, want = leaves(got), leaves(want)
        if len(got) != len(want):
            return self.fail(mode, f"{len(got)} outputs, expected {len(want)}")
        for k, (g, w) in enumerate(zip(got, want)):
            if g.shape != w.shape:
                return self.fail(mode, f"{what}[{k}] shape {g.shape}, expected {w.shape}")
            if w.dtype.kind in "biu" or g.dtype.kind in "biu":
                if not np.array_equal(g, w):
                    return self.fail(mode, f"{what}[{k}] {g!r}, expected {w!r}")
            elif not np.allclose(g, w, rtol=rtol, atol=rtol * scale(w), equal_nan=True):
                return self.fail(mode, f"{what}[{k}] {g!r}, expected {w!r}")

    def run(self, mode, thunk):
        """``thunk()``, or None with the exception reported; a compiler's fallback warning
        ("graph compilation failed ...; running the uncompiled plan") is reported too."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = thunk()
            except Exception as e:  # noqa: BLE001 - every crash is a finding, named by its mode
                self.fail(mode, f"{type(e).__name__}: {e}")
                result = None
        for w in caught:
            if "compilation failed" in str(w.message):
                self.fail(mode, f"warning: {w.message}")
        return result


def check(sample, every_mode=True, forced_kernels=False):
    """Every mode (or the core ones) on ``sample``; the list of disagreements.
    ``forced_kernels``: also ``hg.function`` with fused kernels forced on small arrays (a
    Numba compilation per new kernel, seconds on a cold cache: the long runs only)."""
    report = Report(every_mode, forced_kernels)
    inputs = sample.inputs()
    want = report.run("eager", lambda: sample.call(*inputs))
    if want is None:
        return report.lines
    if not sample.traceable:
        twin = sample.numpy_twin()
        if twin is not None:
            report.compare("numpy", want, twin(*sample.args, **sample.kwargs),
                           rtol=sample.reference_rtol or MODE_RTOL)
        return report.lines
    check_values(sample, inputs, want, report)
    if sample.differentiable() and any(v.dtype.kind in "fc" for v in leaves(want)):
        check_derivatives(sample, inputs, want, report)
    return report.lines


def second_point(inputs, seed=3):
    """A point near ``inputs`` (within 1e-2 per element: the samples' domains allow it)."""
    rng = np.random.default_rng(seed)
    return [a + 1e-2 * rng.uniform(-1, 1, a.shape).astype(a.dtype) if a.dtype.kind in "fc"
            else a for a in inputs]


def check_values(sample, inputs, want, report):
    twin = sample.numpy_twin()
    if twin is not None:
        expected = report.run("numpy", lambda: twin(*sample.args, **sample.kwargs))
        if expected is not None:
            report.compare("numpy", want, expected, rtol=sample.reference_rtol or MODE_RTOL)
    for flavour in report.flavours:
        got = report.run(f"function-{flavour}",
                         lambda: compiled(sample.call, flavour)(*inputs))
        if got is not None:
            report.compare(f"function-{flavour}", got, want)
    if not inputs:
        return  # a constructor of constants: nothing to feed a graph or batch
    got = report.run("graph", lambda: in_graph(sample.call, inputs))
    if got is not None:
        report.compare("graph", got, want)
    other = second_point(inputs)
    batched = report.run("vmap", lambda: hg.vmap(sample.call)(
        *[np.stack([a, b]) for a, b in zip(inputs, other)]))
    if batched is not None:
        report.compare("vmap[0]", [v[0] for v in leaves(batched)], want)
        at_other = report.run("eager(second point)", lambda: sample.call(*other))
        if at_other is not None:
            report.compare("vmap[1]", [v[1] for v in leaves(batched)], at_other)


def in_graph(fn, inputs, extra=()):
    """``fn(*placeholders)`` built in a ``Graph`` and run on ``inputs``; ``extra(graph
    outputs, placeholders) -> more fetches`` adds derived tensors (gradients)."""
    with hg.Graph().as_default() as graph:
        holders = [hg.placeholder(a.dtype, a.shape) for a in inputs]
        outputs = fn(*holders)
        fetches = extra(outputs, holders) if callable(extra) else outputs
        return graph.run(fetches, dict(zip(holders, inputs)))


class Objective:
    """The scalar ``F(x)`` whose derivatives are checked: the sample's inputs packed into one
    array ``x`` (the input itself when there is one; else their concatenation, flattened),
    then the head of the outputs."""

    def __init__(self, sample, inputs, want):
        self.sample, self.shapes = sample, [a.shape for a in inputs]
        self.x = inputs[0] if len(inputs) == 1 else np.concatenate([a.ravel() for a in inputs])
        rng = np.random.default_rng(11)
        self.weights = [(rng.uniform(0.5, 1.5, v.shape), rng.uniform(-0.5, 0.5, v.shape))
                        for v in leaves(want)]

    def unpack(self, x):
        if len(self.shapes) == 1:
            return [x]
        parts, start = [], 0
        for shape in self.shapes:
            size = int(np.prod(shape))
            parts.append(hnp.reshape(x[start:start + size], shape))
            start += size
        return parts

    def __call__(self, x):
        total = 0.0
        for y, (w1, w2) in zip(flatten(self.sample.call(*self.unpack(x))), self.weights):
            if not hasattr(y, "dtype"):
                continue  # a Python flag among the outputs (cho_factor's ``lower``)
            kind = np.dtype(y.dtype).kind
            if kind not in "fc":
                continue
            parts = [hnp.real(y), hnp.imag(y)] if kind == "c" else [y]
            for part in parts:
                total = total + hnp.sum(w1 * part + w2 * part * part)
        return total


def check_derivatives(sample, inputs, want, report):
    F = Objective(sample, inputs, want)
    x = F.x
    rng = np.random.default_rng(5)
    v = rng.standard_normal(x.shape)
    g = report.run("grad", lambda: np.asarray(hg.grad(F)(x)))
    if g is None:
        return
    check_gradients(F, x, g, report)
    fd = (F(x + FD_STEP * v) - F(x - FD_STEP * v)) / (2 * FD_STEP)
    report.compare("grad vs finite differences", np.sum(g * v), fd, rtol=FD_TOL)
    hv = report.run("hvp", lambda: np.asarray(hg.hvp(F)(x, v)))
    if hv is None:
        return
    check_hvps(F, x, v, hv, report)
    fd_hv = report.run("grad(x +- hv)", lambda: (hg.grad(F)(x + FD_STEP * v) -
                                               hg.grad(F)(x - FD_STEP * v)) / (2 * FD_STEP))
    if fd_hv is not None:
        report.compare("hvp vs finite differences of grad", hv, fd_hv, rtol=FD_TOL * 10)
    fd2 = (F(x + FD2_STEP * v) - 2 * F(x) + F(x - FD2_STEP * v)) / FD2_STEP ** 2
    report.compare("v.Hv vs second differences of values", np.sum(v * hv), fd2, rtol=FD2_TOL)
    if sample.hessians and x.size <= MAX_HESSIAN_SIZE:
        check_hessians(F, x, v, hv, report)


def zero_gradients(y, xs):
    """``hg.gradients`` with zeros, not None, for an x that ``y`` does not depend on."""
    return hg.gradients(y, xs, unconnected_gradients="zero")


def check_gradients(F, x, g, report):
    def taped():
        with hg.GradientTape() as tape:
            xt = hg.constant(x)
            tape.watch(xt)
            y = F(xt)
        return tape.gradient(y, xt, unconnected_gradients="zero")
    modes = {"tape": taped,
             "graph gradients": lambda: in_graph(F, [x], lambda y, p: zero_gradients(y, p)[0])}
    for flavour in report.flavours:
        modes[f"function-{flavour}(grad)"] = lambda flavour=flavour: \
            compiled(hg.grad(F), flavour)(x)
    for mode, thunk in modes.items():
        got = report.run(mode, thunk)
        if got is not None:
            report.compare(mode, got, g, what="gradient")
    other = second_point([x])[0]
    batched = report.run("vmap(grad)", lambda: hg.vmap(hg.grad(F))(np.stack([x, other])))
    if batched is not None:
        report.compare("vmap(grad)[0]", np.asarray(batched)[0], g, what="gradient")
        g_other = report.run("grad(second point)", lambda: hg.grad(F)(other))
        if g_other is not None:
            report.compare("vmap(grad)[1]", np.asarray(batched)[1], g_other, what="gradient")


def check_hvps(F, x, v, hv, report):
    def taped():
        xt = hg.constant(x)
        with hg.GradientTape() as outer:
            outer.watch(xt)
            with hg.GradientTape() as inner:
                inner.watch(xt)
                y = F(xt)
            gv = hnp.sum(inner.gradient(y, xt, unconnected_gradients="zero") * v)
        return outer.gradient(gv, xt, unconnected_gradients="zero")

    def graph(y, p):
        (gradient,) = zero_gradients(y, p)
        return zero_gradients(hnp.sum(gradient * v), p)[0]
    modes = {f"hvp-{m}": lambda m=m: hg.hvp(F, mode=m)(x, v) for m in HVP_MODES}
    modes["nested tapes"] = taped
    modes["graph hvp"] = lambda: in_graph(F, [x], graph)
    for flavour in ("kernels", "nokernels") if report.every_mode else CORE_FLAVOURS:
        modes[f"function-{flavour}(hvp)"] = lambda flavour=flavour: \
            compiled(hg.hvp(F), flavour)(x, v)
    for mode, thunk in modes.items():
        got = report.run(mode, thunk)
        if got is not None:
            report.compare(mode, got, hv, what="hvp")


def graph_hessian(y, holders):
    """``hg.hessians`` of ``y``, zeros where it is None (``y`` does not depend on x: TF's
    semantics)."""
    (h,) = hg.hessians(y, holders[0])
    shape = tuple(holders[0].shape)
    return hnp.zeros(shape + shape) if h is None else h


def check_hessians(F, x, v, hv, report):
    n = x.size
    dense = report.run("hessian", lambda: np.asarray(hg.hessian(F)(x)))
    if dense is None:
        return
    report.compare("hessian", dense.reshape(n, n) @ v.ravel(), hv.ravel(), what="H v")
    report.compare("hessian symmetric", dense.reshape(n, n), dense.reshape(n, n).T,
                   what="hessian")
    modes = {"sparse_hessian": lambda: hg.sparse_hessian(F)(x).toarray().reshape(dense.shape),
             "function-kernels(hessian)": lambda: compiled(hg.hessian(F), "kernels")(x)}
    if report.every_mode:
        modes.update({
            "hessian(detect_sparsity=False)": lambda: hg.hessian(F, detect_sparsity=False)(x),
            "graph hessians": lambda: in_graph(F, [x], graph_hessian),
        })
    for mode, thunk in modes.items():
        got = report.run(mode, thunk)
        if got is not None:
            report.compare(mode, got, dense, what="hessian")
