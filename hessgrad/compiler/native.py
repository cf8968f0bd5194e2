"""Whole-graph kernels compiled straight to machine code with llvmlite, without Numba's frontend.

Numba spends about 2-3 ms per statement of a whole-graph kernel in its own passes (bytecode
analysis, type inference, lowering) before LLVM sees it: a 500-op gradient took 0.5-3 s to
compile cold here, the 1300-op HVP of a 200-op chain 4.7 s. This back end lowers the kernel's
typed loop representation (:mod:`.loops`: loops over static ranges, float64 and bool scalar
arithmetic, ``math`` functions and the :mod:`hessgrad.kernels.scalar` helpers, loads and
stores of C-contiguous arrays at affine indices) to LLVM IR and compiles it at ``-O2``: about
0.15 ms per statement (the chain's HVP in 0.2 s), so it is the default, with Numba (the same
kernel as Python text) as the fallback for what it does not lower.

The machine code computes what Numba's does (the same IEEE operations in the same order, the
same C library calls, no fast-math): the tests find the same bits, and numpy's results up to
rounding. Arrays the kernel allocates become its parameters (returned ones) or slices of one
scratch array, allocated by the Python wrapper; scalar results come back through a float64
array. The kernel takes the array objects themselves (ctypes passes them for free) and reads
their data pointers. What it does not lower raises :class:`Unsupported`.
"""

import ctypes
import hashlib
import json
import math

import numpy as np

from ..kernels import scalar as helpers
from ..kernels.llvm import DATA_OFFSET as _DATA_OFFSET
from ..kernels.llvm import compile_ir, llvm as _llvm, load_cached
from . import loops, scalar

_F64 = np.dtype(np.float64)
_BOOL = np.dtype(bool)

# calls lowered to an LLVM intrinsic (as Numba lowers them), or to the C library's function
_INTRINSICS = {math.sin: "llvm.sin", math.cos: "llvm.cos", math.exp: "llvm.exp",
               math.log: "llvm.log", math.sqrt: "llvm.sqrt", math.fabs: "llvm.fabs",
               abs: "llvm.fabs"}
_LIBM = (math.tan, math.tanh, math.sinh, math.cosh, math.atan, math.log1p, math.expm1)
_ORDERED = {">": ">", "<": "<", ">=": ">=", "<=": "<=", "==": "=="}
_LN2 = math.log(2.0)


class Unsupported(Exception):
    """Raised for a kernel outside what this back end lowers (the caller falls back)."""


_UNUSED = np.empty(8)  # passed for a scratch or scalar array a kernel does not have


class _Array:
    """A C-contiguous array seen by the kernel: its data pointer, shape, strides, dtype."""

    def __init__(self, ptr, array):
        self.ptr, self.shape, self.dtype = ptr, array.shape, array.dtype
        self.strides = array.strides()


class _Translator:
    """One kernel function: ``void kernel(i8* params..., i8* outputs..., i8* scratch,
    i8* scalars)``."""

    def __init__(self, kernel):
        llvm, ir = _llvm()
        self.ir = ir
        self.f64, self.i1, self.i8, self.i64 = (ir.DoubleType(), ir.IntType(1), ir.IntType(8),
                                                ir.IntType(64))
        self.module = ir.Module(name="hessgrad_native")
        self.module.triple = llvm.get_process_triple()
        self.kernel = kernel
        self.outputs = {}  # returned buffers: name -> (Array, zeroed), in call order
        self.scratch = {}  # the others: name -> (byte offset in the scratch array, zeroed)
        self.scratch_bytes = 0
        self.vars = {}  # scalar locals: name -> alloca (loop indices: their phi)
        self.arrays = {}  # name -> _Array
        self.functions = {}

    # --- setup ----------------------------------------------------------------------------
    def translate(self):
        """The LLVM IR text of the kernel."""
        ir, kernel = self.ir, self.kernel
        buffers = self._buffers()
        n_ptr = len(kernel.params) + len(self.outputs) + 2
        ptr = self.i8.as_pointer()
        self.fn = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [ptr] * n_ptr),
                              name="kernel")
        self.entry = self.fn.append_basic_block("entry")
        body = self.fn.append_basic_block("body")
        self.b = ir.IRBuilder(body)
        args = [self.data(a) for a in self.fn.args]
        for array in kernel.params:
            self.arrays[array.name] = _Array(args.pop(0), array)
        for name, (array, _) in self.outputs.items():
            self.arrays[name] = _Array(args.pop(0), array)
        start = self.b.ptrtoint(args.pop(0), self.i64)  # aligned to 64 bytes
        aligned = self.b.and_(self.b.add(start, ir.Constant(self.i64, 63)),
                              ir.Constant(self.i64, -64))
        scratch = self.b.inttoptr(aligned, ptr)
        for name, (offset, _) in self.scratch.items():
            self.arrays[name] = _Array(self.b.gep(scratch, [ir.Constant(self.i64, offset)]),
                                       buffers[name])
        self.result_ptr = self.b.bitcast(args.pop(0), self.f64.as_pointer())
        for stmt in kernel.body:
            self.statement(stmt)
        self.ret()
        ir.IRBuilder(self.entry).branch(body)
        return str(self.module)

    def data(self, array_object):
        """The data pointer of the ndarray object ``array_object`` points to."""
        field = self.b.gep(array_object, [self.ir.Constant(self.i64, _DATA_OFFSET)])
        return self.b.load(self.b.bitcast(field, self.i8.as_pointer().as_pointer()))

    def _buffers(self):
        """Find the arrays the kernel allocates: returned ones (directly or reshaped) become
        output parameters, the others slices of one scratch array (64-byte aligned)."""
        buffers, zeroed, alias = {}, {}, {}
        for stmt in self.kernel.body:
            if isinstance(stmt, loops.Alloc):
                buffers[stmt.array.name], zeroed[stmt.array.name] = stmt.array, stmt.zero
            elif isinstance(stmt, loops.Reshape):
                alias[stmt.array.name] = stmt.base.name
        returned = set()
        for r in self.kernel.results:
            name = r.name
            while name in alias:
                name = alias[name]
            returned.add(name)
        for name, array in buffers.items():
            if name in returned:
                self.outputs[name] = (array, zeroed[name])
            else:
                self.scratch[name] = (self.scratch_bytes, zeroed[name])
                size = int(np.prod(array.shape, dtype=np.int64)) * array.dtype.itemsize
                self.scratch_bytes += -(-size // 64) * 64
        return buffers

    # --- statements -----------------------------------------------------------------------
    def statement(self, stmt):
        kind = type(stmt)
        if kind is loops.Assign:
            self.set_var(stmt.var.name, self.expr(stmt.value))
        elif kind is loops.AddTo:
            if isinstance(stmt.target, scalar.Load):
                old = self.load(stmt.target)
                self.store(stmt.target, self.arith("+", old, self.expr(stmt.value)))
            else:
                name = stmt.target.name
                self.set_var(name, self.arith("+", self.get_var(name), self.expr(stmt.value)))
        elif kind is loops.Store:
            self.store(stmt.target, self.expr(stmt.value))
        elif kind is loops.For:
            self.loop(stmt)
        elif kind is loops.Alloc:
            name = stmt.array.name
            if name in self.scratch and self.scratch[name][1]:
                self.zero_fill(self.arrays[name])
            # outputs are allocated (zero-filled where asked) by the wrapper
        elif kind is loops.Reshape:  # of a C-contiguous array: the same data
            base = self.arrays[stmt.base.name]
            self.arrays[stmt.array.name] = _Array(base.ptr, stmt.array)
        else:
            raise Unsupported(type(stmt).__name__)

    def set_var(self, name, value):
        slot = self.vars.get(name)
        if slot is None:
            slot = self.vars[name] = self.ir.IRBuilder(self.entry).alloca(value.type,
                                                                            name=name)
        elif slot.type.pointee != value.type:
            value = self.as_f64(value)
            if slot.type.pointee != value.type:
                raise Unsupported(f"{name} changes type")
        self.b.store(value, slot)

    def get_var(self, name):
        if name not in self.vars:
            raise Unsupported(f"{name} read before it is set")
        return self.b.load(self.vars[name])

    def loop(self, stmt):
        ir, b = self.ir, self.b
        n = ir.Constant(self.i64, stmt.n)
        pre = b.block
        head = self.fn.append_basic_block("head")
        body = self.fn.append_basic_block("loop")
        done = self.fn.append_basic_block("done")
        b.branch(head)
        b.position_at_end(head)
        index = b.phi(self.i64, name=stmt.var)
        index.add_incoming(ir.Constant(self.i64, 0), pre)
        b.cbranch(b.icmp_signed("<", index, n), body, done)
        b.position_at_end(body)
        saved = self.vars.get(stmt.var)
        self.vars[stmt.var] = index  # an SSA value, never stored to
        for s in stmt.body:
            self.statement(s)
        index.add_incoming(b.add(index, ir.Constant(self.i64, 1)), b.block)
        b.branch(head)
        b.position_at_end(done)
        if saved is None:
            del self.vars[stmt.var]

    def ret(self):
        b = self.b
        for j, r in enumerate(self.kernel.results):
            if isinstance(r, scalar.Array):
                continue  # the buffer (or a reshape of it) is the result
            value = self.as_f64(self.get_var(r.name))
            b.store(value, b.gep(self.result_ptr, [self.ir.Constant(self.i64, j)]))
        b.ret_void()

    # --- memory ---------------------------------------------------------------------------
    def element_ptr(self, load):
        ir, b = self.ir, self.b
        array = self.arrays.get(load.array.name)
        if array is None or len(load.index) != len(array.shape):
            raise Unsupported(f"{load.py()} of an array it does not have")
        offset = ir.Constant(self.i64, 0)
        for part, stride in zip(load.index, array.strides):
            offset = b.add(offset, b.mul(self.index_expr(part), ir.Constant(self.i64, stride)))
        elem = self.f64 if array.dtype == _F64 else self.i8
        return b.gep(b.bitcast(array.ptr, elem.as_pointer()), [offset]), array.dtype

    def index_expr(self, affine):
        ir, b = self.ir, self.b
        total = ir.Constant(self.i64, affine.offset)
        for var, coef in affine.terms:
            value = self.vars.get(var)
            if value is None or value.type != self.i64:
                raise Unsupported(f"index {var}")
            term = value if coef == 1 else b.mul(value, ir.Constant(self.i64, coef))
            total = b.add(total, term)
        return total

    def load(self, load):
        ptr, dtype = self.element_ptr(load)
        value = self.b.load(ptr)
        if dtype == _BOOL:
            return self.b.icmp_unsigned("!=", value, self.ir.Constant(self.i8, 0))
        return value

    def store(self, target, value):
        ptr, dtype = self.element_ptr(target)
        if dtype == _BOOL:
            value = self.b.zext(self.truth(value), self.i8)
        else:
            value = self.as_f64(value)
        self.b.store(value, ptr)

    def zero_fill(self, array):
        ir = self.ir
        size = int(np.prod(array.shape, dtype=np.int64)) * array.dtype.itemsize
        memset = self.module.declare_intrinsic("llvm.memset",
                                               [self.i8.as_pointer(), self.i64])
        self.b.call(memset, [array.ptr, ir.Constant(self.i8, 0), ir.Constant(self.i64, size),
                             ir.Constant(self.i1, 0)])

    # --- expressions ----------------------------------------------------------------------
    def expr(self, e):
        ir, b, kind = self.ir, self.b, type(e)
        if e.type == scalar.INT:
            raise Unsupported("Python arithmetic on booleans")
        if kind is scalar.Const:
            return ir.Constant(self.i1, int(e.value)) if e.type == _BOOL else \
                ir.Constant(self.f64, float(e.value))
        if kind is scalar.Var:
            return self.get_var(e.name)
        if kind is scalar.Load:
            return self.load(e)
        if kind is scalar.Binary:
            lower = self.compare if e.op in scalar.COMPARISONS else self.arith
            return lower(e.op, self.expr(e.x), self.expr(e.y))
        if kind is scalar.Unary:
            x = self.expr(e.x)
            if e.op == "not ":
                return b.xor(self.truth(x), ir.Constant(self.i1, 1))
            return b.fneg(x) if e.op == "-" else x
        if kind is scalar.Select:
            cond = self.truth(self.expr(e.test))
            yes, no = self.expr(e.yes), self.expr(e.no)
            if yes.type != no.type:
                yes, no = self.as_f64(yes), self.as_f64(no)
            return b.select(cond, yes, no)
        if kind is scalar.Call:
            return self.call(e.fn, [self.as_f64(self.expr(a)) for a in e.args])
        raise Unsupported(kind.__name__)

    def as_f64(self, x):
        return self.b.uitofp(x, self.f64) if x.type == self.i1 else x

    def truth(self, x):
        if x.type == self.i1:
            return x
        return self.b.fcmp_unordered("!=", x, self.ir.Constant(self.f64, 0.0))  # NaN is true

    def arith(self, op, x, y):
        b = self.b
        x, y = self.as_f64(x), self.as_f64(y)
        if op == "+":
            return b.fadd(x, y)
        if op == "-":
            return b.fsub(x, y)
        if op == "*":
            return b.fmul(x, y)
        if op == "/":
            return b.fdiv(x, y)
        if op == "**":
            return b.call(self.intrinsic("llvm.pow"), [x, y])
        raise Unsupported(op)

    def compare(self, op, x, y):
        if x.type == self.i1 and y.type == self.i1 and op in ("==", "!="):
            return self.b.icmp_unsigned(op, x, y)
        x, y = self.as_f64(x), self.as_f64(y)
        if op == "!=":
            return self.b.fcmp_unordered("!=", x, y)  # NaN != anything
        if op not in _ORDERED:
            raise Unsupported(op)
        return self.b.fcmp_ordered(_ORDERED[op], x, y)

    def intrinsic(self, name):
        if name not in self.functions:
            self.functions[name] = self.module.declare_intrinsic(name, [self.f64])
        return self.functions[name]

    def libm(self, fn):
        if fn not in self.functions:
            ty = self.ir.FunctionType(self.f64, [self.f64])
            self.functions[fn] = self.ir.Function(self.module, ty, name=fn.__name__)
        return self.functions[fn]

    def call(self, fn, args):
        b = self.b
        if fn in _INTRINSICS and len(args) == 1:
            return b.call(self.intrinsic(_INTRINSICS[fn]), args)
        if fn in _LIBM and len(args) == 1:
            return b.call(self.libm(fn), args)
        if fn in scalar.PREDICATES:
            (x,) = args
            if fn is math.isnan:
                return b.fcmp_unordered("uno", x, x)
            mag = b.call(self.intrinsic("llvm.fabs"), [x])
            inf = self.ir.Constant(self.f64, math.inf)
            return b.fcmp_ordered("==" if fn is math.isinf else "<", mag, inf)
        helper = _HELPERS.get(fn)
        if helper is None or len(args) != helper[1]:
            raise Unsupported(f"call {getattr(fn, '__name__', fn)}")
        return helper[0](self, *args)


# --- the helpers of hessgrad.kernels.scalar, branch for branch, per function object -------------
def _const(t, c):
    return t.ir.Constant(t.f64, c)


def _sign(t, x):
    b = t.b
    neg = b.select(b.fcmp_ordered("<", x, _const(t, 0.0)), _const(t, -1.0), x)
    return b.select(b.fcmp_ordered(">", x, _const(t, 0.0)), _const(t, 1.0), neg)


def _sigmoid(t, x):
    b = t.b
    e = b.call(t.intrinsic("llvm.exp"), [b.fneg(b.call(t.intrinsic("llvm.fabs"), [x]))])
    den = b.fadd(_const(t, 1.0), e)
    return b.select(b.fcmp_ordered(">=", x, _const(t, 0.0)), b.fdiv(_const(t, 1.0), den),
                    b.fdiv(e, den))


def _extremum(keep):
    def lower(t, x, y):
        b = t.b
        pick = b.select(b.fcmp_ordered(keep, x, y), x, y)
        pick = b.select(b.fcmp_unordered("uno", y, y), y, pick)
        return b.select(b.fcmp_unordered("uno", x, x), x, pick)
    return lower


def _logaddexp(t, x, y):
    b = t.b
    d = b.fsub(x, y)
    exp, log1p = t.intrinsic("llvm.exp"), t.libm(math.log1p)
    pos = b.fadd(x, b.call(log1p, [b.call(exp, [b.fneg(d)])]))
    neg = b.fadd(y, b.call(log1p, [b.call(exp, [d])]))
    out = b.select(b.fcmp_ordered("<=", d, _const(t, 0.0)), neg, d)  # else NaN: d
    out = b.select(b.fcmp_ordered(">", d, _const(t, 0.0)), pos, out)
    return b.select(b.fcmp_ordered("==", x, y), b.fadd(x, _const(t, _LN2)), out)


# helper -> (lowering, arity)
_HELPERS = {helpers.sign: (_sign, 1), helpers.sigmoid: (_sigmoid, 1),
            helpers.maximum: (_extremum(">="), 2), helpers.minimum: (_extremum("<="), 2),
            helpers.logaddexp: (_logaddexp, 2)}


def _own_digest():
    """A digest of the sources that decide the machine code (this module and the expression
    types): a kernel compiled by an older version of them is never loaded."""
    digest = hashlib.sha256()
    for path in (__file__, scalar.__file__):
        with open(path, "rb") as fh:
            digest.update(fh.read())
    return digest.hexdigest()


_TRANSLATOR_VERSION = _own_digest()


class NativeKernel:
    """A :class:`~.loops.Kernel` compiled; :meth:`call_lines` writes the Python that calls it.
    ``source``: its Python text (:func:`~.loops.python_source`), the key of its machine code
    in the disk cache. Keeps its LLVM execution engine (the machine code) alive."""

    def __init__(self, kernel, source):
        # A kernel compiled by an earlier process is loaded without lowering it again: the
        # disk cache keeps its machine code and the layout of its parameters.
        key = "\n".join([
            "hessgrad native kernel", _TRANSLATOR_VERSION, str(_DATA_OFFSET), source,
            repr([(p.name, p.shape, p.dtype.str) for p in kernel.params]),
            repr([np.dtype(r.dtype if isinstance(r, scalar.Array) else r.type).str
                  for r in kernel.results])])
        cached = load_cached(key)
        if cached is not None:
            self._engine, layout = cached[0], json.loads(cached[1])
        else:
            layout = self._translate(kernel)
            self._engine = compile_ir(self.ir, key=key, extra=json.dumps(layout).encode())
        # what each call allocates: returned buffers (np.zeros or np.empty, shape, dtype)
        self._outputs = [((np.zeros if zeroed else np.empty), tuple(shape), np.dtype(dtype))
                         for zeroed, shape, dtype in layout["outputs"]]
        self._scratch_bytes = layout["scratch_bytes"]
        # each result: ("buffer", output index, shape) or ("scalar", slot, dtype)
        self._results = [(kind, j, tuple(shape) if kind == "buffer" else np.dtype(shape))
                         for kind, j, shape in layout["results"]]
        # scalar results are stored at their position among the results
        self._n_scalars = len(self._results) if any(
            kind == "scalar" for kind, _, _ in self._results) else 0
        address = self._engine.get_function_address("kernel")  # the code lives as long
        self._fn = ctypes.CFUNCTYPE(None, *[ctypes.py_object] * (
            len(kernel.params) + len(self._outputs) + 2))(address)

    def _translate(self, kernel):
        """Lower ``kernel`` to LLVM IR (``self.ir``); returns the layout of its parameters
        and results as plain data (what the disk cache keeps)."""
        translator = _Translator(kernel)
        try:
            self.ir = translator.translate()
        except (KeyError, ValueError, AttributeError, TypeError) as exc:
            raise Unsupported(f"{type(exc).__name__}: {exc}") from exc
        outputs = list(translator.outputs)
        results = []
        for j, r in enumerate(kernel.results):
            if not isinstance(r, scalar.Array):
                results.append(("scalar", j, np.dtype(r.type).str))
                continue
            array = translator.arrays[r.name]
            owner = next((k for k, out in enumerate(outputs)
                          if translator.arrays[out].ptr is array.ptr), None)
            if owner is None:
                raise Unsupported(f"result {r.name} is not an output of the kernel")
            results.append(("buffer", owner, [int(d) for d in array.shape]))
        return {"outputs": [(bool(zeroed), [int(d) for d in array.shape], array.dtype.str)
                            for array, zeroed in translator.outputs.values()],
                "scratch_bytes": int(translator.scratch_bytes), "results": results}

    def call_lines(self, args, ns):
        """Python lines that call the kernel on the arrays named in ``args`` (binding what
        they use in ``ns``), and the expression of each result after them."""
        ns.update(_K=self._fn, _UNUSED=_UNUSED, _KERNEL=self)  # _KERNEL: keeps the code alive
        lines, names = [], []
        for k, (alloc, shape, dtype) in enumerate(self._outputs):
            ns[f"_O{k}"], ns[f"_OS{k}"], ns[f"_OT{k}"] = alloc, shape, dtype
            lines.append(f"o{k} = _O{k}(_OS{k}, _OT{k})")
            names.append(f"o{k}")
        for name, words in (("_scratch", self._scratch_bytes // 8 + 8 if self._scratch_bytes
                             else 0), ("_scalars", self._n_scalars)):
            lines.append(f"{name} = _np.empty({words})" if words else f"{name} = _UNUSED")
        lines.append(f"_K({', '.join(list(args) + names)}, _scratch, _scalars)")
        texts = []
        for kind, j, shape in self._results:
            if kind == "scalar":  # ``shape`` is the scalar's dtype
                texts.append(f"_scalars[{j}]" if shape == _F64 else f"(_scalars[{j}] != 0.0)")
            else:
                same = self._outputs[j][1] == shape
                texts.append(f"o{j}" if same else f"o{j}.reshape({shape!r})")
        return lines, texts
