"""A small optimized program as ONE compiled function, called from a thin Python wrapper.

For small arrays each numpy call costs far more than its arithmetic (about 0.7 us), so a
program whose every op has a translation here, whose shapes and dtypes are static
(float64 or bool) and whose values are small becomes one function: kernel text written for
``@njit``, compiled by :mod:`.native` (llvmlite directly, about 0.15 ms per statement) or,
for text outside what that translates, by Numba (:mod:`hessgrad.kernels.loader`, 2-3 ms per
statement, cached on disk):

* elementwise ops over the same shape are scalar statements in one loop nest over that
  shape (a *loop*); a value leaves its loop as an array only when something outside it reads
  it. Reductions (``sum``, ``mean``, ``sum_to``) accumulate into their result inside the loop
  of their operand, scatters (``accumulate``, ``scatter_add`` of basic indices) add each term
  into a zero-filled buffer inside the loop of the term, ``matmul`` is a dot product per
  output element (an inner loop);
* basic-index ``getitem``, ``transpose``, ``broadcast_to`` and reshapes that only add or drop
  unit axes are *views*: index maps applied where they are read, never copied;
* other reshapes act on the (C-contiguous) array of their operand.

Ops are visited in a topological order that keeps ops of one loop shape together
(:func:`_schedule`), and loops stay open while later ops can join them: an op that reads a
value whose loop is still open closes that loop first (its code is emitted then), so the
function runs every op in a valid order. Programs of more than ``MAX_NATIVE_OPS`` ops (or
``MAX_OPS`` when Numba compiles them) keep the per-op path (with fused kernels for large
elementwise trees). So do programs with a value of more than ``MAX_SIZE`` elements, or
``MAX_SIZE_SIMD`` when they compute an op that numpy runs with SIMD transcendental loops
(these beat scalar libm calls from a few hundred elements on), and products of more than
``MAX_MATMUL`` multiply-adds (BLAS is faster). Results equal numpy's up to rounding (sums
add in another order; matmul is not BLAS; the kernels call the C library's transcendental
functions, not numpy's SIMD ones), so programs of fewer than ``MIN_OPS`` ops, which gain
little, stay on numpy.
"""

import heapq
import warnings
from collections import Counter

import numpy as np

from .codegen import feed_checks
from .fusion import ELEMENTWISE, PREFER_NUMPY, literal, scalar_op
from ..kernels import tuning
from .ir import known, size_of

_F64 = np.dtype(np.float64)
_BOOL = np.dtype(bool)

# predicates numpy computes on float64, as scalar templates
_PREDICATES = {"isfinite": "math.isfinite({0})", "isnan": "math.isnan({0})",
               "isinf": "math.isinf({0})", "logical_not": "(not {0})"}
# ops whose 0-d result numpy returns as a 0-d array (the others give numpy scalars)
_ARRAY_0D = {"where", "sum_to", "accumulate", "scatter_add", "broadcast_to", "reshape",
             "transpose", "cast"}


class Unsupported(Exception):
    """The program has an op, shape or dtype the whole-graph path does not translate."""


class _Loop:
    """One loop nest over ``shape`` whose ops run one element at a time."""

    def __init__(self, shape, order):
        self.shape = shape
        self.order = order
        self.index = [f"i{d}" for d in range(len(shape))]
        self.members = {}  # values held as the scalars s<n> of the body (a dict: ordered)
        self.reads = Counter()  # (id(op), value) -> times an op computed here read it here
        self.pre = []  # lines before the loop (buffers, accumulators)
        self.body = []
        self.post = []
        self.loads = {}  # array element text -> the scalar it was loaded into
        self.open = True


class _Emitter:
    def __init__(self, prog):
        self.prog = prog
        simd = any(op.name in PREFER_NUMPY for op in prog.ops)
        self.max_size = tuning.MAX_SIZE_SIMD if simd else tuning.MAX_SIZE
        self.users = prog.consumers()
        self.fetched = set(prog.fetches)
        self.lines = []
        self.loops = {}  # shape -> the open loop over it
        self.count = 0
        self.writers = {}  # value -> loops that compute or accumulate it
        self.views = {}  # value -> (base value, index map)
        self.loads = 0  # names of loaded elements are unique: one Numba type each
        self.kind = {}  # fetched op output -> op name (the type of a 0-d result)

    # --- values --------------------------------------------------------------------------
    def check(self, v):
        shape, dtype = self.prog.shape(v), self.prog.dtype(v)
        if v in self.prog.consts and literal(self.prog.consts[v]) is not None:
            return
        if not known(shape) or dtype not in (_F64, _BOOL) or size_of(shape) > self.max_size:
            raise Unsupported(f"value {v}: shape {shape}, dtype {dtype}")

    def deps(self, v):
        """The open loops that must be emitted before ``v`` can be read as an array."""
        while v in self.views:
            v = self.views[v][0]
        return [g for g in self.writers.get(v, ()) if g.open]

    def read(self, v, index, loop, cache=True):
        """Source text for element ``index`` (loop index names) of ``v`` inside ``loop``."""
        while v in self.views:
            v, imap = self.views[v]
            index = imap(index)
        prog = self.prog
        if v in prog.consts:
            text = literal(prog.consts[v])
            if text is not None:
                return text
        if v in loop.members:
            return f"s{v}"
        if prog.shape(v) == ():
            return f"v{v}"  # a 0-d value is a Numba scalar
        text = f"v{v}[{', '.join(index)}]"
        if not cache:
            return text
        if text not in loop.loads:
            loop.loads[text] = f"l{self.loads}"
            self.loads += 1
            loop.body.append(f"{loop.loads[text]} = {text}")
        return loop.loads[text]

    def read_broadcast(self, v, loop):
        """``v`` read at the current element of ``loop``, broadcast to its shape."""
        shape, out = self.prog.shape(v), loop.shape
        lead = len(out) - len(shape)
        index = ["0" if d == 1 and out[lead + j] != 1 else loop.index[lead + j]
                 for j, d in enumerate(shape)]
        return self.read(v, index, loop)

    # --- loops ---------------------------------------------------------------------------
    def enter(self, shape, reads, arrays=()):
        """The loop over ``shape`` an op reading ``reads`` (elementwise) and ``arrays`` (at
        other elements) runs in, after emitting every loop those values still wait for."""
        loop = self.loops.get(shape)
        waiting = {}
        for v in reads:
            direct = v not in self.views
            for g in self.deps(v):
                if not (g is loop and direct and v in loop.members):
                    waiting[id(g)] = g
        for v in arrays:
            for g in self.deps(v):
                waiting[id(g)] = g
        for g in sorted(waiting.values(), key=lambda g: g.order):
            self.close(g)
        if loop is None or not loop.open:
            loop = self.loops[shape] = _Loop(shape, self.count)
            self.count += 1
        return loop

    def close(self, loop):
        if not loop.open:  # already emitted (e.g. listed twice as a writer)
            return
        loop.open = False
        prog = self.prog
        stores = []
        for v in loop.members:
            # stored unless all its reads are in this loop: an accumulate's other terms
            # may run in later loops
            users = (prog.ops[k] for k in self.users.get(v, ()))
            if v in self.fetched or any(loop.reads[id(op), v] < op.args.count(v)
                                        for op in users):
                if loop.shape == ():
                    stores.append(f"v{v} = s{v}")
                else:
                    loop.pre.append(f"v{v} = np.empty({loop.shape!r}, {_dtype(prog, v)})")
                    stores.append(f"v{v}[{', '.join(loop.index)}] = s{v}")
        indent = ""
        self.lines.extend(loop.pre)
        for d, n in enumerate(loop.shape):
            self.lines.append(f"{indent}for i{d} in range({n}):")
            indent += "    "
        self.lines.extend(indent + line for line in loop.body + stores)
        self.lines.extend(loop.post)

    def member(self, op, loop, expr):
        (out,) = op.outs
        loop.body.append(f"s{out} = {expr}")
        loop.members[out] = None
        loop.reads.update((id(op), a) for a in op.args)
        self.writers[out] = [loop]

    # --- ops -----------------------------------------------------------------------------
    def emit(self, op):
        prog = self.prog
        for v in op.args:
            self.check(v)
        for v in op.outs:
            self.check(v)
        if op.multi:
            raise Unsupported(op.name)
        name, out = op.name, op.outs[0]
        if scalar_op(prog, op) or (name == "add_n" and prog.dtype(out) == _F64) or \
                (name in _PREDICATES and len(op.args) == 1 and not op.params and
                 (name == "logical_not" or prog.dtype(op.args[0]) == _F64)):
            self.elementwise(op)
        elif name == "cast" and np.dtype(op.params["dtype"]) in (_F64, _BOOL):
            self.elementwise(op)
        elif name in ("sum", "mean", "sum_to"):
            self.reduction(op)
        elif name in ("accumulate", "scatter_add"):
            self.scatter(op)
        elif name == "matmul":
            self.matmul(op)
        elif name in ("getitem", "transpose", "broadcast_to", "reshape"):
            self.view(op)
        else:
            raise Unsupported(name)
        if out in self.fetched:
            self.kind[out] = name

    def elementwise(self, op):
        prog, name = self.prog, op.name
        loop = self.enter(prog.shape(op.outs[0]), op.args)
        exprs = [self.read_broadcast(a, loop) for a in op.args]
        if name == "add_n":
            expr = "(" + " + ".join(exprs) + ")"  # numpy's order: ((a + b) + c) ...
        elif name == "cast":
            to = np.dtype(op.params["dtype"])
            expr = exprs[0] if prog.dtype(op.args[0]) == to else \
                ("(1.0 if {0} else 0.0)" if to == _F64 else "({0} != 0)").format(exprs[0])
        elif name in _PREDICATES:
            expr = _PREDICATES[name].format(*exprs)
        else:
            if name == "power":  # as numpy: pow() also for an integer exponent
                exprs[1] = _float_text(exprs[1])
            expr = ELEMENTWISE[name][1].format(*exprs)
        self.member(op, loop, expr)

    def reduction(self, op):
        prog, (x,), out = self.prog, op.args, op.outs[0]
        shape, out_shape = prog.shape(x), prog.shape(out)
        nd = len(shape)
        if prog.dtype(out) != _F64:
            raise Unsupported(f"{op.name} to {prog.dtype(out)}")
        if op.name == "sum_to":
            lead = nd - len(out_shape)
            kept = [None if d == 1 and shape[lead + j] != 1 else lead + j
                    for j, d in enumerate(out_shape)]
        else:
            if set(op.params) - {"axis", "keepdims"}:
                raise Unsupported(f"{op.name} {op.params}")
            axis = op.params.get("axis")
            axes = range(nd) if axis is None or not nd else \
                [a % nd for a in (axis if isinstance(axis, tuple) else (axis,))]  # 0-d: ()
            keep = op.params.get("keepdims", False)
            kept = [None if d in axes else d for d in range(nd) if keep or d not in axes]
            if op.name == "mean" and out_shape != ():
                raise Unsupported("mean over some axes")
        loop = self.enter(shape, [x])
        value = self.read_broadcast(x, loop)
        if out_shape == ():
            loop.pre.append(f"v{out} = 0.0")
            loop.body.append(f"v{out} += {value}")
        else:
            loop.pre.append(f"v{out} = np.zeros({out_shape!r})")
            index = ", ".join("0" if d is None else loop.index[d] for d in kept)
            loop.body.append(f"v{out}[{index}] += {value}")
        if op.name == "mean":
            loop.post.append(f"v{out} = v{out} / {float(size_of(shape))!r}")
        loop.reads[id(op), x] += 1
        self.writers[out] = [loop]

    def scatter(self, op):
        prog, out = self.prog, op.outs[0]
        out_shape = prog.shape(out)
        if op.name == "scatter_add":
            indices = (op.params["index"],)
            if tuple(op.params["shape"]) != out_shape:
                raise Unsupported("scatter_add shape")
        else:
            indices = op.params["indices"]
        if out_shape == ():
            raise Unsupported(f"{op.name} into a 0-d value")
        self.lines.append(f"v{out} = np.zeros({out_shape!r}, {_dtype(prog, out)})")
        self.writers[out] = []
        for term, index in zip(op.args, indices):
            shape = prog.shape(term)
            if index is None:
                target, imap = out_shape, (lambda idx: idx)
            elif not _is_basic(index):
                raise Unsupported(f"{op.name} at an advanced index")
            else:
                target, imap = _basic_index(index, out_shape)
            if target != shape:
                raise Unsupported(f"{op.name}: term of shape {shape} into {target}")
            loop = self.enter(shape, [term])
            value = self.read_broadcast(term, loop)
            loop.body.append(f"v{out}[{', '.join(imap(loop.index)) or '()'}] += {value}")
            loop.reads[id(op), term] += 1
            if loop not in self.writers[out]:  # two terms over one shape share a loop
                self.writers[out].append(loop)

    def matmul(self, op):
        prog, (a, b), out = self.prog, op.args, op.outs[0]
        sa, sb = prog.shape(a), prog.shape(b)
        if len(sa) > 2 or len(sb) > 2 or not sa or not sb or prog.dtype(out) != _F64 or \
                size_of(prog.shape(out)) * sa[-1] > tuning.MAX_MATMUL:
            raise Unsupported(f"matmul of shapes {sa}, {sb}")
        loop = self.enter(prog.shape(out), [], arrays=[a, b])
        k = f"k{out}"
        rows = loop.index[:1] if len(sa) == 2 else []
        cols = loop.index[-1:] if len(sb) == 2 else []
        left = self.read(a, rows + [k], loop, cache=False)
        right = self.read(b, [k] + cols, loop, cache=False)
        loop.body += [f"s{out} = 0.0", f"for {k} in range({sa[-1]}):",
                      f"    s{out} += {left} * {right}"]
        loop.members[out] = None
        loop.reads.update((id(op), v) for v in (a, b))
        self.writers[out] = [loop]

    def view(self, op):
        prog, x, out = self.prog, op.args[0], op.outs[0]
        shape, out_shape = prog.shape(x), prog.shape(op.outs[0])
        if op.name == "getitem":
            if not _is_basic(op.params["index"]):
                raise Unsupported("advanced index")
            _, imap = _basic_index(op.params["index"], shape)
        elif op.name == "transpose":
            axes = op.params.get("axes")
            axes = tuple(reversed(range(len(shape)))) if axes is None else \
                tuple(a % len(shape) for a in axes)

            def imap(idx, axes=axes):
                base = [None] * len(axes)
                for j, a in enumerate(axes):
                    base[a] = idx[j]
                return base
        elif op.name == "broadcast_to":
            lead = len(out_shape) - len(shape)

            def imap(idx, lead=lead):
                return ["0" if d == 1 and out_shape[lead + j] != 1 else idx[lead + j]
                        for j, d in enumerate(shape)]
        elif [d for d in shape if d != 1] == [d for d in out_shape if d != 1]:
            # a reshape that adds or drops unit axes: the other axes keep their order
            def imap(idx):
                inner = iter(i for i, d in zip(idx, out_shape) if d != 1)
                return ["0" if d == 1 else next(inner) for d in shape]
        else:  # another reshape: of the C-contiguous array of x
            if x in self.views:
                self.materialize(x)
            for g in self.deps(x):
                self.close(g)
            self.lines.append(f"v{out} = v{x}.reshape({out_shape!r})")
            self.writers[out] = []
            return
        self.views[out] = (x, imap)

    def materialize(self, v):
        """Make the view ``v`` an array of its own, copied in a loop."""
        loop = self.enter(self.prog.shape(v), [v])
        expr = self.read_broadcast(v, loop)
        del self.views[v]
        loop.body.append(f"s{v} = {expr}")
        loop.members[v] = None
        self.writers[v] = [loop]
        self.close(loop)  # keeps ``v`` as an array: it is fetched or read as a whole

    def finish(self):
        for v in self.prog.fetches:
            if v in self.views:
                self.materialize(v)
        for loop in sorted(self.loops.values(), key=lambda g: g.order):
            if loop.open:
                self.close(loop)


def _dtype(prog, v):
    return "np.bool_" if prog.dtype(v) == _BOOL else "np.float64"


def _float_text(text):
    """A literal integer exponent written as a float, so Numba calls pow() as numpy does."""
    try:
        return repr(float(int(text)))
    except ValueError:
        return text


def _is_basic(index):
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, slice) or
               (isinstance(p, (int, np.integer)) and not isinstance(p, (bool, np.bool_)))
               for p in parts)


def _basic_index(index, shape):
    """(shape of ``x[index]``, map from its element index (source texts) to the element of
    ``x``) for a basic index: integers, slices, None and Ellipsis."""
    parts = list(index) if isinstance(index, tuple) else [index]
    if Ellipsis in parts:
        at = parts.index(Ellipsis)
        fill = len(shape) - sum(p is not None for p in parts if p is not Ellipsis)
        parts[at:at + 1] = [slice(None)] * fill
    parts += [slice(None)] * (len(shape) - sum(p is not None for p in parts))
    result, plan, d = [], [], 0
    for p in parts:
        if p is None:
            result.append(1)
            plan.append(None)
            continue
        n = shape[d]
        if isinstance(p, slice):
            start, stop, step = p.indices(n)
            result.append(len(range(start, stop, step)))
            plan.append((start, step))
        else:
            if not -n <= p < n:
                raise Unsupported(f"index {p} out of range for size {n}")
            plan.append(int(p) % n)
        d += 1

    def imap(idx):
        base, out = [], iter(idx)
        for step in plan:
            if step is None:
                next(out)
            elif isinstance(step, int):
                base.append(str(step))
            else:
                i = next(out)
                start, stride = step
                # ``i`` may itself be a sum (a view of a view): multiply all of it
                term = i if stride == 1 else f"{stride} * {_atom(i)}"
                base.append(term if start == 0 else f"{start} + {term}")
        return base
    return tuple(result), imap


def _atom(text):
    """Index source text safe to multiply: a name or a number as is, else parenthesized."""
    return text if text.isidentifier() or text.lstrip("-").isdigit() else f"({text})"


def _loop_shape(prog, op):
    """The shape of the loop ``op`` runs in (None for views and other loop-free ops)."""
    if op.name in ("sum", "mean", "sum_to"):
        return prog.shape(op.args[0])
    if op.name in ("getitem", "transpose", "broadcast_to", "reshape", "accumulate",
                   "scatter_add") or op.multi:
        return None
    return prog.shape(op.outs[0])


def _schedule(prog):
    """``prog.ops`` in a topological order that runs the ops of one loop shape together.

    Program order interleaves shapes (a dense Hessian's batched tangents (k, n) with the
    primal values (n,) they read), and each switch closes a loop; this list scheduling keeps
    taking ready ops of the current shape (loop-free ops first, each group in program
    order), so a program has about one loop per shape and dependency level."""
    ops = prog.ops
    producer = {o: k for k, op in enumerate(ops) for o in op.outs}
    waiting = [len({producer[a] for a in op.args if a in producer}) for op in ops]
    users = [[] for _ in ops]
    for k, op in enumerate(ops):
        for j in {producer[a] for a in op.args if a in producer}:
            users[j].append(k)
    keys = [_loop_shape(prog, op) for op in ops]
    ready = {}

    def push(k):
        heapq.heappush(ready.setdefault(keys[k], []), k)

    for k, n in enumerate(waiting):
        if n == 0:
            push(k)
    order, current = [], None
    while any(ready.values()):
        if ready.get(None):
            key = None
        elif ready.get(current):
            key = current
        else:
            key = current = min((h[0], key) for key, h in ready.items() if h)[1]
        k = heapq.heappop(ready[key])
        order.append(ops[k])
        for u in users[k]:
            waiting[u] -= 1
            if waiting[u] == 0:
                push(u)
    return order


def kernel_source(prog):
    """(Numba module text, array constants passed to it, values it returns, op name of each
    fetched op output) for ``prog``; raises :class:`Unsupported`."""
    if not tuning.MIN_OPS <= len(prog.ops) <= tuning.MAX_NATIVE_OPS or prog.variables:
        raise Unsupported(f"{len(prog.ops)} ops, or reads Variables")
    em = _Emitter(prog)
    for s in prog.feeds:
        em.check(s)
    for op in _schedule(prog):
        em.emit(op)
    em.finish()
    used = {a for op in prog.ops for a in op.args}
    arrays = sorted(v for v in used if v in prog.consts and literal(prog.consts[v]) is None)
    params, head = [], []
    for v in prog.feeds + arrays:
        if prog.shape(v) == ():  # a 0-d array in, a Numba scalar inside
            params.append(f"a{v}")
            head.append(f"v{v} = a{v}[()]")
        else:
            params.append(f"v{v}")
    results = [v for v in dict.fromkeys(prog.fetches) if v not in prog.consts and
               v not in prog.feeds]
    body = head + em.lines + ["return (" + "".join(f"v{v}, " for v in results) + ")"]
    lines = ["import math", "import numpy as np", "from numba import njit",
             "from hessgrad.kernels import scalar as _k", "", "",
             '@njit(cache=True, error_model="numpy")',
             f"def kernel({', '.join(params)}):"] + ["    " + b for b in body]
    return "\n".join(lines) + "\n", arrays, results, em.kind


class WholeGraph:
    """The wrapper ``fn(*feeds) -> list of fetched values`` and its sources."""

    def __init__(self, fn, source, kernel_source, backend):
        self.fn = fn
        self.source = source
        self.kernel_source = kernel_source
        self.backend = backend  # "native" (llvmlite) or "numba"


def _numba_kernel(prog, ksource, const_arrays):
    """``ksource`` compiled by Numba (or loaded from its disk cache) for the argument types
    the wrapper passes; None when Numba cannot type it."""
    from numba import typeof
    from numba.core.errors import NumbaError

    from ..kernels import loader

    kernel = loader.load(ksource)
    samples = [np.zeros(prog.shape(s), prog.dtype(s)) for s in prog.feeds] + const_arrays
    try:
        kernel.compile(tuple(typeof(a) for a in samples))
    except NumbaError as exc:  # a translation Numba cannot type: a bug, but not the user's
        warnings.warn(f"hessgrad.compiler.wholegraph: Numba could not compile the whole "
                      f"graph ({type(exc).__name__}); running it op by op", RuntimeWarning,
                      stacklevel=3)
        return None
    return kernel


def _native_kernel(prog, ksource, arrays, results):
    """``ksource`` translated to LLVM IR and compiled by llvmlite (:mod:`.native`); None
    when the text is outside the translated subset."""
    try:
        from . import native
    except ImportError:  # no llvmlite, or an ndarray layout it cannot read
        return None
    specs = {}
    for v in list(prog.feeds) + list(arrays):
        name = f"a{v}" if prog.shape(v) == () else f"v{v}"
        specs[name] = (prog.shape(v), prog.dtype(v))
    try:
        return native.NativeKernel(ksource, specs, [prog.dtype(v) for v in results])
    except native.Unsupported:
        return None


def build(prog):
    """A :class:`WholeGraph` for ``prog`` (its kernel compiled by :mod:`.native`, or by Numba
    when the native translation does not cover it), or None when neither can (Numba
    missing, or some op, shape or dtype not supported): the caller then takes the per-op
    path."""
    from ..kernels import loader

    if not loader.available():
        return None
    try:
        ksource, arrays, results, kind = kernel_source(prog)
    except Unsupported:
        return None
    ns = {"_np": np}
    for c in arrays:
        ns[f"v{c}"] = np.asarray(prog.consts[c], order="C")
    args = [f"v{s}" for s in prog.feeds] + [f"v{c}" for c in arrays]
    backend, kernel = "native", _native_kernel(prog, ksource, arrays, results)
    if kernel is not None:  # no exceptions to annotate: it only computes
        call, texts = kernel.call_lines(args, ns)
    elif len(prog.ops) <= tuning.MAX_OPS:
        backend, kernel = "numba", _numba_kernel(prog, ksource, [ns[f"v{c}"] for c in arrays])
        ns["_K"] = kernel
        call = ["try:", f"    _r = _K({', '.join(args)})", "except Exception as exc:",
                "    exc.add_note(_NOTE)", "    raise"]
        texts = [f"_r[{j}]" for j in range(len(results))]
    if kernel is None:
        return None
    outs = []
    for v in prog.fetches:
        if v in prog.consts:
            ns[f"v{v}"] = prog.consts[v]
            outs.append(f"v{v}")
        elif v in prog.feeds:
            outs.append(f"v{v}")
        else:
            text = texts[results.index(v)]
            if prog.shape(v) == ():  # a scalar from the kernel: numpy's type instead
                box = "_np.asarray" if kind.get(v) in _ARRAY_0D else \
                    ("_np.bool_" if prog.dtype(v) == _BOOL else "_np.float64")
                text = f"{box}({text})"
            outs.append(text)
    lines = [f"def compiled_graph({', '.join(f'v{s}' for s in prog.feeds)}):"]
    lines += ["    " + line for line in feed_checks(prog, ns, contiguous=True) + call]
    lines.append(f"    return [{', '.join(outs)}]")
    ns["_NOTE"] = f"while running the whole graph ({len(prog.ops)} ops) as one Numba function"
    source = "\n".join(lines) + "\n"
    exec(compile(source, "<hessgrad whole graph>", "exec"), ns)  # noqa: S102 - our source
    return WholeGraph(ns["compiled_graph"], source, ksource, backend)
