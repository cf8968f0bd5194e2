"""Random programs for the harness: 3-30 statements composing hessgrad.numpy functions
(elementwise math, reductions with every axis form, reshapes, joins, sorting, products,
indexing, ``.at[]`` updates) on one input, written as Python source, compared compiled
(``hg.function``, kernels on and forced) against eager for value, gradient and HVP.

A program is source text, so a failure is its own reproducer: :func:`reproducer` writes a
script that needs only hessgrad and raises where the modes disagree (:data:`CHECK` is both the
check the harness runs and the text written into that script)."""

import numpy as np

UNARY = ["hnp.sin({a})", "hnp.cos({a})", "hnp.tanh({a})", "hnp.arctan({a})",
         "hnp.log1p({a} * {a})", "hnp.sqrt(1.0 + {a} * {a})", "hg.erf({a})",
         "hg.softplus({a})", "hnp.exp(-{a} * {a})", "hnp.abs({a})", "hnp.maximum({a}, 0.1)",
         "hnp.square({a})", "hg.sigmoid({a})", "hnp.clip({a}, -0.5, 0.8)", "-{a}",
         "{a} ** 3", "hnp.cbrt({a})"]
BINARY = ["{a} + {b}", "{a} * {b}", "{a} - {b}", "hnp.maximum({a}, {b})",
          "{a} / (1.0 + {b} * {b})", "hnp.hypot({a}, {b})", "hnp.arctan2({a}, {b})",
          "hnp.where({a} > {b}, {a}, {b} * 2.0)", "hnp.logaddexp({a}, {b})"]
REDUCTIONS = ["sum", "mean", "max", "min", "std", "var", "median", "ptp", "prod"]
MAX_SIZE = 24


class Program:
    """A random program: ``source`` defines ``f(x)``; ``x`` is its input."""

    def __init__(self, seed, statements=None, empty=True):
        self.seed = seed
        rng = np.random.default_rng(seed)
        n = int(rng.integers(3, 31)) if statements is None else statements
        shapes = [(), (1,), (4,), (5,), (2, 3), (3, 1), (1, 1), (2, 2, 2)]
        if empty:
            shapes.append((0, 3))
        shape = shapes[int(rng.integers(len(shapes)))]
        self.x = np.round(rng.uniform(-1.5, 1.5, shape), 3) + rng.uniform(0, 1e-3, shape)
        self.vars = {"x": shape}
        self.lines = []
        while len(self.lines) < n:
            line = self._statement(rng)
            if line is not None:
                self.lines.append(line)
        last = list(self.vars)[-2:]
        result = " + ".join(f"hnp.sum(hnp.sin({v}))" if k else f"0.5 * hnp.sum({v} * {v})"
                            for k, v in enumerate(last))
        body = "\n".join(f"    {line}" for line in self.lines)
        self.source = f"def f(x):\n{body}\n    return {result}\n"

    def _pick(self, rng, ok=lambda shape: True):
        names = [v for v, s in self.vars.items() if ok(s)]
        return names[int(rng.integers(len(names)))] if names else None

    def _new(self, expr, shape):
        if int(np.prod(shape)) > MAX_SIZE:
            return None
        name = f"v{len(self.vars)}"
        self.vars[name] = tuple(shape)
        return f"{name} = {expr}"

    def _statement(self, rng):
        kind = rng.choice(["unary", "binary", "reduce", "shape", "product", "index", "sort"],
                          p=[0.22, 0.22, 0.16, 0.14, 0.08, 0.1, 0.08])
        a = self._pick(rng)
        s = self.vars[a]
        choose = lambda items: items[int(rng.integers(len(items)))]  # noqa: E731
        if kind == "unary":
            return self._new(choose(UNARY).format(a=a), s)
        if kind == "binary":
            b = self._pick(rng, lambda t: t == s or t == () or _broadcasts(t, s))
            return self._new(choose(BINARY).format(a=a, b=b), np.broadcast_shapes(s, self.vars[b]))
        if kind == "reduce":
            return self._reduce(rng, a, s, choose)
        if kind == "shape":
            return self._shape(rng, a, s, choose)
        if kind == "product":
            if len(s) == 2:
                return self._new(*choose([(f"{a} @ {a}.T", (s[0], s[0])),
                                          (f"hnp.matmul({a}.T, {a})", (s[1], s[1]))]))
            if len(s) == 1:
                return self._new(*choose([(f"hnp.dot({a}, {a})", ()),
                                          (f"hnp.outer({a}, {a})", (s[0], s[0]))]))
            return None
        if kind == "index":
            return self._index(rng, a, s, choose)
        if len(s) == 0:
            return self._new(f"hnp.sort(hnp.reshape({a}, (1,)))", (1,))
        axis = int(rng.integers(-len(s), len(s)))
        return self._new(*choose([(f"hnp.sort({a}, axis={axis})", s),
                                  (f"hnp.cumsum({a}, axis={axis})", s),
                                  (f"hnp.cumprod({a}, axis={axis})", s)]))

    def _reduce(self, rng, a, s, choose):
        name = choose(REDUCTIONS)
        forms = [None] + list(range(-len(s), len(s)))
        if len(s) >= 2:
            forms.append((0, -1))
        axis = forms[int(rng.integers(len(forms)))]
        keep = bool(rng.integers(2))
        axes = range(len(s)) if axis is None else [axis] if isinstance(axis, int) else axis
        axes = {k % len(s) for k in axes} if s else set()
        out = tuple(1 if k in axes else d for k, d in enumerate(s) if keep or k not in axes)
        count = int(np.prod([s[k] for k in axes])) if axes else 1
        if count == 0 and name in ("max", "min", "median", "ptp", "mean", "std", "var"):
            return None  # numpy raises or warns: no value to compare
        extra = ""
        if name in ("std", "var") and count > 1 and rng.integers(2):
            extra = ", ddof=1"
        if name == "median":
            keep = False
            out = tuple(d for k, d in enumerate(s) if k not in axes)
        return self._new(f"hnp.{name}({a}, axis={axis!r}{extra}, keepdims={keep})"
                         if name != "median" else f"hnp.median({a}, axis={axis!r})", out)

    def _shape(self, rng, a, s, choose):
        size = int(np.prod(s))
        options = [(f"hnp.reshape({a}, (-1,))", (size,)),
                   (f"hnp.reshape({a}, (1, {size}))", (1, size)),
                   (f"hnp.expand_dims({a}, 0)", (1,) + s),
                   (f"hnp.concatenate([{a}, {a}], axis=None)", (2 * size,)),
                   (f"hnp.stack([{a}, 2.0 * {a}], axis=-1)", s + (2,))]
        if len(s) >= 1:
            axis = int(rng.integers(-len(s), len(s)))
            options += [(f"{a}.T", s[::-1]),
                        (f"hnp.flip({a}, axis={axis})", s),
                        (f"hnp.roll({a}, 1, axis={axis})", s),
                        (f"hnp.tile({a}, 2)", s[:-1] + (2 * s[-1],)),
                        (f"hnp.diff({a}, axis={axis})",
                                  tuple(max(d - 1, 0) if k == axis % len(s) else d
                                        for k, d in enumerate(s)))]
        if 1 in s:
            options.append((f"hnp.squeeze({a})", tuple(d for d in s if d != 1)))
        if len(s) >= 2:
            options.append((f"hnp.swapaxes({a}, 0, -1)", (s[-1],) + s[1:-1] + (s[0],)))
        return self._new(*choose(options))

    def _index(self, rng, a, s, choose):
        if not s or s[0] == 0:
            return None
        n = s[0]
        k = int(rng.integers(n))
        options = [(f"{a}[{k}]", s[1:]), (f"{a}[::-1]", s),
                   (f"{a}[{n - 1}:]", (1,) + s[1:]),
                   (f"{a}.at[{k}].set(0.5)", s), (f"{a}.at[{k}].add({a}[0])", s),
                   (f"{a}.at[{k}:].multiply(1.5)", s),
                   (f"{a}[np.array([{k}, 0, {k}])]", (3,) + s[1:])]
        return self._new(*choose(options))


def _broadcasts(t, s):
    try:
        return np.broadcast_shapes(t, s) == s
    except ValueError:
        return False


# The check: compiled against eager, as text so that a reproducer runs exactly it.
CHECK = '''
def check(f, x, forced=True, rtol=1e-8):
    """Compiled (kernels on; with ``forced``, also fused kernels forced on small arrays: a
    Numba compilation per program) against eager: value, gradient and HVP. Returns the
    disagreements."""
    from hessgrad.kernels import tuning
    problems = []
    v = np.random.default_rng(0).standard_normal(np.shape(x))

    def close(mode, got, want):
        got, want = np.asarray(got), np.asarray(want)
        tol = rtol * max(1.0, float(np.max(np.abs(want)))) if want.size else 0.0
        if got.shape != want.shape or not np.allclose(got, want, rtol=rtol, atol=tol,
                                                       equal_nan=True):
            problems.append(f"{mode}: {got!r}, eager {want!r}")

    value, gradient = hg.value_and_grad(f)(x)  # on tensors: x.at[...] needs one
    want = [value, gradient, hg.hvp(f)(x, v)]
    for forced in (False, True) if forced else (False,):
        saved = tuning.MIN_SIZE
        tuning.MIN_SIZE = 1 if forced else saved
        try:
            name = "forced kernels" if forced else "kernels"
            for mode, fn, args, w in (("value", f, (x,), want[0]),
                                      ("gradient", hg.grad(f), (x,), want[1]),
                                      ("hvp", hg.hvp(f), (x, v), want[2])):
                try:
                    close(f"{name} {mode}", hg.function(fn, compile="eager")(*args), w)
                except Exception as e:
                    problems.append(f"{name} {mode}: {type(e).__name__}: {e}")
        finally:
            tuning.MIN_SIZE = saved
    return problems
'''

HEADER = "import numpy as np\nimport hessgrad as hg\nimport hessgrad.numpy as hnp\n"


def namespace():
    """The names a program and :data:`CHECK` use."""
    env = {}
    exec(HEADER + CHECK, env)  # noqa: S102 - our own generated text
    return env


def run(program, forced=True):
    """The disagreements of ``program`` (an eager crash or a non-finite value: none, it is
    not a valid test), as a list of strings."""
    env = namespace()
    exec(program.source, env)  # noqa: S102
    f = env["f"]
    try:
        with np.errstate(all="ignore"):
            value, gradient = env["hg"].value_and_grad(f)(program.x)
            if not np.all(np.isfinite(value)) or not np.all(np.isfinite(gradient)):
                return []
    except Exception as e:  # noqa: BLE001 - the eager run itself fails: also a finding
        return [f"eager: {type(e).__name__}: {e}"]
    return env["check"](f, program.x, forced)


def reproducer(program, problems):
    """A standalone script reproducing ``program``'s disagreements."""
    found = "\n".join(f"#   {p[:300]}" for p in problems)
    return (f"# hessgrad random program, seed {program.seed}: compiled and eager disagree.\n"
            f"# Found:\n{found}\n{HEADER}{CHECK}\n{program.source}\n"
            f"x = np.array({program.x.tolist()!r}).reshape({program.x.shape!r})\n\n"
            "if __name__ == '__main__':\n"
            "    problems = check(f, x)\n"
            "    print('\\n'.join(problems) or 'all modes agree')\n"
            "    raise SystemExit(1 if problems else 0)\n")
