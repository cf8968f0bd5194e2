"""A small optimized program as ONE compiled function, called from a thin Python wrapper.

For small arrays each numpy call costs far more than its arithmetic (about 0.7 us), so a
program whose every op has a translation here, whose shapes and dtypes are static
(float64 or bool) and whose values are small becomes one kernel (:mod:`.loops`), compiled by
:mod:`.native` (llvmlite directly, about 0.15 ms per statement) or, where that back end does
not cover it, by Numba from its Python text (:mod:`hessgrad.kernels.loader`, 2-3 ms per
statement, cached on disk):

* ops with a scalar form (``prim.lowering.scalar``) over the same shape are scalar statements
  in one loop nest over that shape (a *loop*); a value leaves its loop as an array only when
  something outside it reads it;
* the translations registered below per primitive: reductions accumulate into their result
  inside the loop of their operand (:mod:`.reductions`), scatters (``accumulate``,
  ``scatter_add`` of basic indices) add each term into a zero-filled buffer inside the loop
  of the term, ``matmul`` is a dot product per output element (an inner loop), ``cast``
  converts per element; basic-index ``getitem``, ``transpose``, ``broadcast_to`` and
  reshapes that only add or drop unit axes are *views*: index maps applied where they are
  read, never copied; other reshapes act on the (C-contiguous) array of their operand.

Ops are visited in a topological order that keeps ops of one loop shape together
(:func:`_schedule`), and loops stay open while later ops can join them: an op that reads a
value whose loop is still open closes that loop first (its statements are emitted then), so
the function runs every op in a valid order. The size limits are in
:mod:`hessgrad.kernels.tuning` (``MAX_SIZE``, ``MAX_SIZE_SIMD`` with an op whose numpy loop is
SIMD, ``MAX_OPS``, ``MAX_NATIVE_OPS``, ``MIN_OPS``, ``MAX_MATMUL``). Results equal numpy's up
to rounding (sums add in another order; matmul is not BLAS; the kernels call the C library's
transcendental functions, not numpy's SIMD ones).
"""

import heapq
import warnings
from collections import Counter

import numpy as np

from ..engine.registry import BROADCAST_TO, CAST, RESHAPE, SUM_TO, TRANSPOSE
from ..kernels import tuning
from ..ops import reduction
from ..ops.core import getitem, scatter_add
from ..ops.linalg import matmul
from .accumulate import ACCUMULATE
from .codegen import feed_checks
from .indexing import OutOfRange, basic_index, is_basic
from .ir import known, size_of
from .loops import AddTo, Alloc, Assign, For, Kernel, Reshape, Store, nest, python_source
from .reductions import reduced
from .scalar import F64, Array, Binary, Const, Load, Select, Var, literal, scalar_form, \
    scalar_op

_BOOL = np.dtype(bool)
_TRANSLATIONS = {}  # primitive -> (emit(builder, op), where its loop is: "out", "operand", None)


def translates(*prims, loop="out"):
    """Register ``emit(builder, op)`` for ``prims``; ``loop``: the op runs in the loop over its
    result's shape ("out"), its operand's ("operand"), or none of its own (None)."""
    def add(emit):
        for prim in prims:
            _TRANSLATIONS[prim] = (emit, loop)
        return emit
    return add


class Unsupported(Exception):
    """The program has an op, shape or dtype the whole-graph path does not translate."""


class _Loop:
    """One loop nest over ``shape`` whose ops run one element at a time."""

    def __init__(self, shape, order):
        self.shape = shape
        self.order = order
        self.index = [f"i{d}" for d in range(len(shape))]
        self.members = {}  # value -> the scalar variable holding it in the body (ordered)
        self.reads = Counter()  # (id(op), value) -> times an op computed here read it here
        self.pre = []  # statements before the loop (buffers, accumulators)
        self.body = []
        self.post = []
        self.loads = {}  # (array name, index) -> the variable it was loaded into
        self.open = True


class _Builder:
    def __init__(self, prog):
        self.prog = prog
        simd = any(op.prim.lowering.simd for op in prog.ops)
        self.max_size = tuning.MAX_SIZE_SIMD if simd else tuning.MAX_SIZE
        self.users = prog.consumers()
        self.fetched = set(prog.fetches)
        self.body = []
        self.loops = {}  # shape -> the open loop over it
        self.count = 0
        self.writers = {}  # value -> loops that compute or accumulate it
        self.views = {}  # value -> (base value, index map)
        self.arrays = {}  # value -> the Array holding it
        self.loads = 0  # names of loaded elements are unique: one Numba type each
        self.kind = {}  # fetched op output -> the op (the type of a 0-d result)

    # --- values --------------------------------------------------------------------------
    def check(self, v):
        shape, dtype = self.prog.shape(v), self.prog.dtype(v)
        if v in self.prog.consts and literal(self.prog.consts[v]) is not None:
            return
        if not known(shape) or dtype not in (F64, _BOOL) or size_of(shape) > self.max_size:
            raise Unsupported(f"value {v}: shape {shape}, dtype {dtype}")

    def array(self, v, shape=None):
        """The array ``v`` is (or, given a ``shape``, becomes)."""
        if v not in self.arrays:
            self.arrays[v] = Array(f"v{v}", self.prog.shape(v) if shape is None else shape,
                                   self.prog.dtype(v))
        return self.arrays[v]

    def deps(self, v):
        """The open loops that must be emitted before ``v`` can be read as an array."""
        while v in self.views:
            v = self.views[v][0]
        return [g for g in self.writers.get(v, ()) if g.open]

    def read(self, v, index, loop, cache=True):
        """Element ``index`` (affine indices) of ``v`` inside ``loop``."""
        while v in self.views:
            v, imap = self.views[v]
            index = imap(index)
        prog = self.prog
        if v in prog.consts:
            const = literal(prog.consts[v])
            if const is not None:
                return const
        if v in loop.members:
            return loop.members[v]
        if prog.shape(v) == ():
            return Var(f"v{v}", prog.dtype(v))  # a 0-d value is a scalar
        load = Load(self.array(v), index)
        if not cache:
            return load
        key = (load.array.name, tuple(i.key() for i in load.index))
        if key not in loop.loads:
            loop.loads[key] = Var(f"l{self.loads}", load.type)
            self.loads += 1
            loop.body.append(Assign(loop.loads[key], load))
        return loop.loads[key]

    def read_broadcast(self, v, loop):
        """``v`` read at the current element of ``loop``, broadcast to its shape."""
        shape, out = self.prog.shape(v), loop.shape
        lead = len(out) - len(shape)
        index = [0 if d == 1 and out[lead + j] != 1 else loop.index[lead + j]
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
        for v, var in loop.members.items():
            # stored unless all its reads are in this loop: an accumulate's other terms
            # may run in later loops
            users = (prog.ops[k] for k in self.users.get(v, ()))
            if v in self.fetched or any(loop.reads[id(op), v] < op.args.count(v)
                                        for op in users):
                if loop.shape == ():
                    stores.append(Assign(Var(f"v{v}", var.type), var))
                else:
                    loop.pre.append(Alloc(self.array(v), zero=False))
                    stores.append(Store(Load(self.array(v), loop.index), var))
        self.body += loop.pre + nest(loop.shape, loop.index, loop.body + stores) + loop.post

    def member(self, op, loop, expr):
        (out,) = op.outs
        var = Var(f"s{out}", expr.type)
        loop.body.append(Assign(var, expr))
        loop.members[out] = var
        loop.reads.update((id(op), a) for a in op.args)
        self.writers[out] = [loop]

    # --- ops -----------------------------------------------------------------------------
    def emit(self, op):
        for v in op.args:
            self.check(v)
        for v in op.outs:
            self.check(v)
        if op.multi:
            raise Unsupported(op.name)
        translation = _TRANSLATIONS.get(op.prim)
        if translation is not None:
            translation[0](self, op)
        elif scalar_op(self.prog, op):
            loop = self.enter(self.prog.shape(op.outs[0]), op.args)
            self.member(op, loop, scalar_form(
                op.prim, [self.read_broadcast(a, loop) for a in op.args]))
        else:
            raise Unsupported(op.name)
        if op.outs[0] in self.fetched:
            self.kind[op.outs[0]] = op

    def materialize(self, v):
        """Make the view ``v`` an array of its own, copied in a loop."""
        loop = self.enter(self.prog.shape(v), [v])
        expr = self.read_broadcast(v, loop)
        del self.views[v]
        var = Var(f"s{v}", expr.type)
        loop.body.append(Assign(var, expr))
        loop.members[v] = var
        self.writers[v] = [loop]
        self.close(loop)  # keeps ``v`` as an array: it is fetched or read as a whole

    def finish(self):
        for v in self.prog.fetches:
            if v in self.views:
                self.materialize(v)
        for loop in sorted(self.loops.values(), key=lambda g: g.order):
            if loop.open:
                self.close(loop)


# --- translations registered per primitive --------------------------------------------------
@translates(CAST.prim)
def _cast(b, op):
    to = np.dtype(op.params["dtype"])
    if to not in (F64, _BOOL):
        raise Unsupported(f"cast to {to}")
    loop = b.enter(b.prog.shape(op.outs[0]), op.args)
    x = b.read_broadcast(op.args[0], loop)
    if b.prog.dtype(op.args[0]) != to:
        x = Select(x, 1.0, 0.0) if to == F64 else Binary("!=", x, Const(0))
    b.member(op, loop, x)


@translates(reduction.sum.primitive, reduction.mean.primitive, SUM_TO.prim, loop="operand")
def _reduction(b, op):
    prog, (x,), out = b.prog, op.args, op.outs[0]
    found = reduced(prog, op)
    if found is None:
        raise Unsupported(f"{op.name} {op.params}")
    (kept, divides), out_shape = found, prog.shape(out)
    if divides and out_shape != ():
        raise Unsupported("mean over some axes")
    loop = b.enter(prog.shape(x), [x])
    value = b.read_broadcast(x, loop)
    if out_shape == ():
        total = Var(f"v{out}")
        loop.pre.append(Assign(total, Const(0.0)))
        loop.body.append(AddTo(total, value))
        if divides:
            loop.post.append(Assign(total, total / Const(float(size_of(prog.shape(x))))))
    else:
        loop.pre.append(Alloc(b.array(out), zero=True))
        index = [0 if d is None else loop.index[d] for d in kept]
        loop.body.append(AddTo(Load(b.array(out), index), value))
    loop.reads[id(op), x] += 1
    b.writers[out] = [loop]


@translates(ACCUMULATE, scatter_add.primitive, loop=None)
def _scatter(b, op):
    prog, out = b.prog, op.outs[0]
    out_shape = prog.shape(out)
    if op.prim is ACCUMULATE:
        indices = op.params["indices"]
    else:
        indices = (op.params["index"],)
        if tuple(op.params["shape"]) != out_shape:
            raise Unsupported("scatter_add shape")
    if out_shape == ():
        raise Unsupported(f"{op.name} into a 0-d value")
    target = b.array(out)
    b.body.append(Alloc(target, zero=True))
    b.writers[out] = []
    for term, index in zip(op.args, indices):
        shape = prog.shape(term)
        if index is None:
            into, imap = out_shape, (lambda idx: idx)
        elif not is_basic(index):
            raise Unsupported(f"{op.name} at an advanced index")
        else:
            into, imap = _basic_index(index, out_shape)
        if into != shape:
            raise Unsupported(f"{op.name}: term of shape {shape} into {into}")
        loop = b.enter(shape, [term])
        value = b.read_broadcast(term, loop)
        loop.body.append(AddTo(Load(target, imap(loop.index)), value))
        loop.reads[id(op), term] += 1
        if loop not in b.writers[out]:  # two terms over one shape share a loop
            b.writers[out].append(loop)


@translates(matmul.primitive)
def _matmul(b, op):
    prog, (x, y), out = b.prog, op.args, op.outs[0]
    sa, sb = prog.shape(x), prog.shape(y)
    if len(sa) > 2 or len(sb) > 2 or not sa or not sb or prog.dtype(out) != F64 or \
            size_of(prog.shape(out)) * sa[-1] > tuning.MAX_MATMUL:
        raise Unsupported(f"matmul of shapes {sa}, {sb}")
    loop = b.enter(prog.shape(out), [], arrays=[x, y])
    k = f"k{out}"
    rows = loop.index[:1] if len(sa) == 2 else []
    cols = loop.index[-1:] if len(sb) == 2 else []
    left = b.read(x, rows + [k], loop, cache=False)
    right = b.read(y, [k] + cols, loop, cache=False)
    total = Var(f"s{out}")
    loop.body += [Assign(total, Const(0.0)), For(k, sa[-1], [AddTo(total, left * right)])]
    loop.members[out] = total
    loop.reads.update((id(op), v) for v in (x, y))
    b.writers[out] = [loop]


@translates(getitem.primitive, loop=None)
def _getitem(b, op):
    if not is_basic(op.params["index"]):
        raise Unsupported("advanced index")
    b.views[op.outs[0]] = (op.args[0], _basic_index(op.params["index"],
                                                    b.prog.shape(op.args[0]))[1])


@translates(TRANSPOSE.prim, loop=None)
def _transpose(b, op):
    nd = len(b.prog.shape(op.args[0]))
    axes = op.params.get("axes")
    axes = tuple(reversed(range(nd))) if axes is None else tuple(a % nd for a in axes)

    def imap(idx):
        base = [None] * len(axes)
        for j, a in enumerate(axes):
            base[a] = idx[j]
        return base
    b.views[op.outs[0]] = (op.args[0], imap)


@translates(BROADCAST_TO.prim, loop=None)
def _broadcast_to(b, op):
    shape, out_shape = b.prog.shape(op.args[0]), b.prog.shape(op.outs[0])
    lead = len(out_shape) - len(shape)
    b.views[op.outs[0]] = (op.args[0], lambda idx: [
        0 if d == 1 and out_shape[lead + j] != 1 else idx[lead + j]
        for j, d in enumerate(shape)])


@translates(RESHAPE.prim, loop=None)
def _reshape(b, op):
    x, out = op.args[0], op.outs[0]
    shape, out_shape = b.prog.shape(x), b.prog.shape(out)
    if [d for d in shape if d != 1] == [d for d in out_shape if d != 1]:
        # a reshape that adds or drops unit axes: the other axes keep their order
        def imap(idx):
            inner = iter(i for i, d in zip(idx, out_shape) if d != 1)
            return [0 if d == 1 else next(inner) for d in shape]
        b.views[out] = (x, imap)
        return
    if x in b.views:  # another reshape: of the C-contiguous array of x
        b.materialize(x)
    for g in b.deps(x):
        b.close(g)
    b.body.append(Reshape(b.array(out), b.array(x)))
    b.writers[out] = []


def _basic_index(index, shape):
    try:
        return basic_index(index, shape)
    except OutOfRange as exc:
        raise Unsupported(str(exc)) from None


def _loop_shape(prog, op):
    """The shape of the loop ``op`` runs in (None for views and other loop-free ops)."""
    translation = _TRANSLATIONS.get(op.prim)
    where = "out" if translation is None else translation[1]
    if op.multi or where is None:
        return None
    return prog.shape(op.args[0] if where == "operand" else op.outs[0])


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


def kernel_of(prog):
    """``(kernel, array constants passed to it, values it returns, the op of each fetched op
    output)`` for ``prog``; raises :class:`Unsupported`."""
    if not tuning.MIN_OPS <= len(prog.ops) <= tuning.MAX_NATIVE_OPS or prog.variables:
        raise Unsupported(f"{len(prog.ops)} ops, or reads Variables")
    b = _Builder(prog)
    for s in prog.feeds:
        b.check(s)
    for op in _schedule(prog):
        b.emit(op)
    b.finish()
    used = {a for op in prog.ops for a in op.args}
    arrays = sorted(v for v in used if v in prog.consts and literal(prog.consts[v]) is None)
    params, head = [], []
    for v in prog.feeds + arrays:
        if prog.shape(v) == ():  # a 0-d array in, a scalar inside
            params.append(Array(f"a{v}", (), prog.dtype(v)))
            head.append(Assign(Var(f"v{v}", prog.dtype(v)), Load(params[-1], ())))
        else:
            params.append(b.array(v))
    results = [v for v in dict.fromkeys(prog.fetches) if v not in prog.consts and
               v not in prog.feeds]
    returned = [b.arrays[v] if v in b.arrays else Var(f"v{v}", prog.dtype(v))
                for v in results]
    return Kernel(params, head + b.body, returned), arrays, results, b.kind


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


def _native_kernel(kernel, ksource):
    """``kernel`` compiled to machine code by llvmlite (:mod:`.native`); None when it is
    outside what that back end lowers."""
    try:
        from . import native
    except ImportError:  # no llvmlite, or an ndarray layout it cannot read
        return None
    try:
        return native.NativeKernel(kernel, ksource)
    except native.Unsupported:
        return None


def build(prog):
    """A :class:`WholeGraph` for ``prog`` (its kernel compiled by :mod:`.native`, or by Numba
    when the native back end does not cover it), or None when neither can (Numba missing, or
    some op, shape or dtype not supported): the caller then takes the per-op path."""
    from ..kernels import loader

    if not loader.available():
        return None
    try:
        kernel, arrays, results, kind = kernel_of(prog)
    except Unsupported:
        return None
    ksource = python_source(kernel)
    ns = {"_np": np}
    for c in arrays:
        ns[f"v{c}"] = np.asarray(prog.consts[c], order="C")
    args = [f"v{s}" for s in prog.feeds] + [f"v{c}" for c in arrays]
    backend, compiled = "native", _native_kernel(kernel, ksource)
    if compiled is not None:  # no exceptions to annotate: it only computes
        call, texts = compiled.call_lines(args, ns)
    elif len(prog.ops) <= tuning.MAX_OPS:
        backend, compiled = "numba", _numba_kernel(prog, ksource,
                                                   [ns[f"v{c}"] for c in arrays])
        ns["_K"] = compiled
        call = ["try:", f"    _r = _K({', '.join(args)})", "except Exception as exc:",
                "    exc.add_note(_NOTE)", "    raise"]
        texts = [f"_r[{j}]" for j in range(len(results))]
    if compiled is None:
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
                op = kind.get(v)
                box = "_np.asarray" if op is not None and op.prim.lowering.array_0d else \
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
