"""Whole-graph kernels compiled straight to machine code with llvmlite, without Numba's frontend.

Numba spends about 2-3 ms per statement of a whole-graph kernel in its own passes (bytecode
analysis, type inference, lowering) before LLVM sees it: a 500-op gradient took 0.5-3 s to
compile cold here, the 1300-op HVP of a 200-op chain 4.7 s. This module translates the kernel
text that :mod:`.wholegraph` writes -- a small fixed subset of Python: ``for`` loops over
static ranges, float64 and bool scalar arithmetic, ``math`` functions and the
:mod:`hessgrad.kernels.scalar` helpers, loads and stores of C-contiguous arrays at static
index expressions -- into LLVM IR and compiles it at ``-O2``: about 0.15 ms per statement
(the chain's HVP in 0.2 s), so it is the default, with Numba as the fallback for text outside
the subset.

The machine code computes what Numba's would (the same IEEE operations in the same order,
the same C library calls, no fast-math): the tests find the same bits, and numpy's results
up to rounding. Arrays the kernel allocates become its parameters (returned ones) or slices
of one scratch array, allocated by the Python wrapper; scalar results come back through a
float64 array. The kernel takes the array objects themselves (ctypes passes them for free)
and reads their data pointers. Text outside the subset raises :class:`Unsupported`.
"""

import ast
import ctypes
import hashlib
import json
import math

import numpy as np

from ..kernels.llvm import DATA_OFFSET as _DATA_OFFSET
from ..kernels.llvm import compile_ir, llvm as _llvm, load_cached

_F64 = np.dtype(np.float64)
_BOOL = np.dtype(bool)

# math.<name> -> LLVM intrinsic (as Numba lowers them) or C library function
_INTRINSICS = {"sin": "llvm.sin", "cos": "llvm.cos", "exp": "llvm.exp", "log": "llvm.log",
               "sqrt": "llvm.sqrt", "fabs": "llvm.fabs"}
_LIBM = {"tan", "tanh", "sinh", "cosh", "atan", "log1p", "expm1"}
_ORDERED = {ast.Gt: ">", ast.Lt: "<", ast.GtE: ">=", ast.LtE: "<=", ast.Eq: "=="}
_LN2 = math.log(2.0)


class Unsupported(Exception):
    """Raised for kernel text outside the translated subset (the caller falls back)."""


_UNUSED = np.empty(8)  # passed for a scratch or scalar array a kernel does not have


class _Array:
    """A C-contiguous array seen by the kernel: its data pointer, shape and dtype."""

    def __init__(self, ptr, shape, dtype):
        self.ptr, self.shape, self.dtype = ptr, tuple(shape), np.dtype(dtype)
        strides, step = [], 1
        for n in reversed(self.shape):
            strides.append(step)
            step *= n
        self.strides = tuple(reversed(strides))


class _Translator:
    """One kernel function: ``void kernel(i8* p0, i8* p1, ...)``."""

    def __init__(self, tree, arg_specs):
        llvm, ir = _llvm()
        self.ir = ir
        self.f64, self.i1, self.i8, self.i64 = (ir.DoubleType(), ir.IntType(1), ir.IntType(8),
                                                ir.IntType(64))
        self.module = ir.Module(name="hessgrad_native")
        self.module.triple = llvm.get_process_triple()
        self.tree = tree
        self.arg_specs = arg_specs  # parameter name -> (shape, dtype), in call order
        self.outputs = {}  # returned buffers: name -> (shape, dtype, zeroed), in call order
        self.scratch = {}  # the others: name -> (byte offset in the scratch array, zeroed)
        self.scratch_bytes = 0
        self.vars = {}  # scalar locals: name -> alloca (loop indices: their phi)
        self.arrays = {}  # name -> _Array
        self.functions = {}

    # --- setup ----------------------------------------------------------------------------
    def translate(self):
        """The LLVM IR text of ``void kernel(i8* params..., i8* outputs..., i8* scratch,
        i8* scalars)``."""
        ir = self.ir
        fn_def = next(n for n in self.tree.body if isinstance(n, ast.FunctionDef))
        if [a.arg for a in fn_def.args.args] != list(self.arg_specs):
            raise Unsupported("kernel parameters do not match the feeds")
        ret = fn_def.body[-1]
        if not isinstance(ret, ast.Return) or not isinstance(ret.value, ast.Tuple):
            raise Unsupported("kernel without a tuple return")
        self.results = [e.id for e in ret.value.elts]
        buffers = self._buffers(fn_def.body)
        n_ptr = len(self.arg_specs) + len(self.outputs) + 2
        ptr = self.i8.as_pointer()
        self.fn = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [ptr] * n_ptr),
                              name="kernel")
        self.entry = self.fn.append_basic_block("entry")
        body = self.fn.append_basic_block("body")
        self.b = ir.IRBuilder(body)
        args = [self.data(a) for a in self.fn.args]
        for name, (shape, dtype) in self.arg_specs.items():
            self.arrays[name] = _Array(args.pop(0), shape, dtype)
        for name, (shape, dtype, _) in self.outputs.items():
            self.arrays[name] = _Array(args.pop(0), shape, dtype)
        start = self.b.ptrtoint(args.pop(0), self.i64)  # aligned to 64 bytes
        aligned = self.b.and_(self.b.add(start, ir.Constant(self.i64, 63)),
                              ir.Constant(self.i64, -64))
        scratch = self.b.inttoptr(aligned, ptr)
        for name, (offset, _) in self.scratch.items():
            shape, dtype, _ = buffers[name]
            self.arrays[name] = _Array(self.b.gep(scratch, [ir.Constant(self.i64, offset)]),
                                       shape, dtype)
        self.result_ptr = self.b.bitcast(args.pop(0), self.f64.as_pointer())
        for stmt in fn_def.body:
            self.statement(stmt)
        ir.IRBuilder(self.entry).branch(body)
        return str(self.module)

    def data(self, array_object):
        """The data pointer of the ndarray object ``array_object`` points to."""
        field = self.b.gep(array_object, [self.ir.Constant(self.i64, _DATA_OFFSET)])
        return self.b.load(self.b.bitcast(field, self.i8.as_pointer().as_pointer()))

    def _buffers(self, body):
        """Find the arrays the kernel allocates: returned ones (directly or reshaped) become
        output parameters, the others slices of one scratch array (64-byte aligned)."""
        buffers, alias = {}, {}
        for stmt in body:
            if not (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) and
                    isinstance(stmt.value.func, ast.Attribute)):
                continue
            func, (target,) = stmt.value.func, stmt.targets
            if not isinstance(func.value, ast.Name):
                continue
            if func.value.id == "np" and func.attr in ("empty", "zeros"):
                dtype = _BOOL if len(stmt.value.args) > 1 and \
                    ast.unparse(stmt.value.args[1]) == "np.bool_" else _F64
                buffers[target.id] = (tuple(ast.literal_eval(stmt.value.args[0])), dtype,
                                      func.attr == "zeros")
            elif func.attr == "reshape":
                alias[target.id] = func.value.id
        returned = set()
        for name in self.results:
            while name in alias:
                name = alias[name]
            returned.add(name)
        for name, (shape, dtype, zeroed) in buffers.items():
            if name in returned:
                self.outputs[name] = (shape, dtype, zeroed)
            else:
                self.scratch[name] = (self.scratch_bytes, zeroed)
                size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
                self.scratch_bytes += -(-size // 64) * 64
        return buffers

    # --- statements -----------------------------------------------------------------------
    def statement(self, stmt):
        if isinstance(stmt, ast.Assign):
            (target,) = stmt.targets
            if isinstance(target, ast.Subscript):
                self.store(target, self.expr(stmt.value))
            else:
                self.assign(target.id, stmt.value)
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add):
            if isinstance(stmt.target, ast.Subscript):
                old = self.load(stmt.target)
                self.store(stmt.target, self.arith(ast.Add(), old, self.expr(stmt.value)))
            else:
                name = stmt.target.id
                self.set_var(name, self.arith(ast.Add(), self.get_var(name),
                                              self.expr(stmt.value)))
        elif isinstance(stmt, ast.For):
            self.loop(stmt)
        elif isinstance(stmt, ast.Return):
            self.ret(stmt)
        else:
            raise Unsupported(ast.unparse(stmt))

    def assign(self, name, value):
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
            func = value.func
            if isinstance(func.value, ast.Name) and func.value.id == "np":
                if name in self.scratch and self.scratch[name][1]:
                    self.zero_fill(self.arrays[name])
                return  # allocated by the wrapper (outputs zero-filled there)
            if func.attr == "reshape":  # of a C-contiguous array: the same data
                base = self.arrays[func.value.id]
                self.arrays[name] = _Array(base.ptr, ast.literal_eval(value.args[0]),
                                           base.dtype)
                return
        self.set_var(name, self.expr(value))

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
        it = stmt.iter
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and
                it.func.id == "range" and len(it.args) == 1 and stmt.orelse == []):
            raise Unsupported(ast.unparse(stmt))
        n = ir.Constant(self.i64, ast.literal_eval(it.args[0]))
        pre = b.block
        head = self.fn.append_basic_block("head")
        body = self.fn.append_basic_block("loop")
        done = self.fn.append_basic_block("done")
        b.branch(head)
        b.position_at_end(head)
        index = b.phi(self.i64, name=stmt.target.id)
        index.add_incoming(ir.Constant(self.i64, 0), pre)
        b.cbranch(b.icmp_signed("<", index, n), body, done)
        b.position_at_end(body)
        saved = self.vars.get(stmt.target.id)
        self.vars[stmt.target.id] = index  # an SSA value, never stored to
        for s in stmt.body:
            self.statement(s)
        index.add_incoming(b.add(index, ir.Constant(self.i64, 1)), b.block)
        b.branch(head)
        b.position_at_end(done)
        if saved is None:
            del self.vars[stmt.target.id]

    def ret(self, stmt):
        b = self.b
        for j, name in enumerate(self.results):
            if name in self.arrays:
                continue  # the buffer (or a reshape of it) is the result
            value = self.as_f64(self.get_var(name))
            b.store(value, b.gep(self.result_ptr, [self.ir.Constant(self.i64, j)]))
        b.ret_void()

    # --- memory ---------------------------------------------------------------------------
    def element_ptr(self, node):
        ir, b = self.ir, self.b
        array = self.arrays.get(getattr(node.value, "id", None))
        if array is None:
            raise Unsupported(ast.unparse(node))
        index = node.slice
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        if len(parts) != len(array.shape):
            raise Unsupported(f"{ast.unparse(node)} for shape {array.shape}")
        offset = ir.Constant(self.i64, 0)
        for part, stride in zip(parts, array.strides):
            offset = b.add(offset, b.mul(self.index_expr(part), ir.Constant(self.i64, stride)))
        elem = self.f64 if array.dtype == _F64 else self.i8
        return b.gep(b.bitcast(array.ptr, elem.as_pointer()), [offset]), array.dtype

    def index_expr(self, node):
        ir, b = self.ir, self.b
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return ir.Constant(self.i64, node.value)
        if isinstance(node, ast.Name):
            value = self.vars.get(node.id)
            if value is None or value.type != self.i64:
                raise Unsupported(f"index {node.id}")
            return value
        if isinstance(node, ast.BinOp) and type(node.op) in (ast.Add, ast.Mult):
            left, right = self.index_expr(node.left), self.index_expr(node.right)
            return b.add(left, right) if isinstance(node.op, ast.Add) else b.mul(left, right)
        raise Unsupported(f"index {ast.unparse(node)}")

    def load(self, node):
        ptr, dtype = self.element_ptr(node)
        value = self.b.load(ptr)
        if dtype == _BOOL:
            return self.b.icmp_unsigned("!=", value, self.ir.Constant(self.i8, 0))
        return value

    def store(self, node, value):
        ptr, dtype = self.element_ptr(node)
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
    def expr(self, node):
        ir, b = self.ir, self.b
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool):
                return ir.Constant(self.i1, int(node.value))
            if isinstance(node.value, (int, float)):
                return ir.Constant(self.f64, float(node.value))
        elif isinstance(node, ast.Name):
            return self.get_var(node.id)
        elif isinstance(node, ast.Subscript):
            return self.load(node)
        elif isinstance(node, ast.Attribute) and ast.unparse(node) in ("math.nan", "math.inf"):
            return ir.Constant(self.f64, math.nan if node.attr == "nan" else math.inf)
        elif isinstance(node, ast.BinOp):
            return self.arith(node.op, self.expr(node.left), self.expr(node.right))
        elif isinstance(node, ast.UnaryOp):
            x = self.expr(node.operand)
            if isinstance(node.op, ast.Not):
                return b.xor(self.truth(x), ir.Constant(self.i1, 1))
            if x.type == self.i1:
                raise Unsupported("arithmetic on a bool")
            if isinstance(node.op, ast.USub):
                return b.fneg(x)
            if isinstance(node.op, ast.UAdd):
                return x
        elif isinstance(node, ast.Compare) and len(node.ops) == 1:
            return self.compare(node.ops[0], self.expr(node.left),
                                self.expr(node.comparators[0]))
        elif isinstance(node, ast.IfExp):
            cond = self.truth(self.expr(node.test))
            yes, no = self.expr(node.body), self.expr(node.orelse)
            if yes.type != no.type:
                yes, no = self.as_f64(yes), self.as_f64(no)
            return b.select(cond, yes, no)
        elif isinstance(node, ast.Call):
            return self.call(node)
        raise Unsupported(ast.unparse(node))

    def as_f64(self, x):
        return self.b.uitofp(x, self.f64) if x.type == self.i1 else x

    def truth(self, x):
        if x.type == self.i1:
            return x
        return self.b.fcmp_unordered("!=", x, self.ir.Constant(self.f64, 0.0))  # NaN is true

    def arith(self, op, x, y):
        b = self.b
        if x.type == self.i1 and y.type == self.i1:
            raise Unsupported("arithmetic on two bools")
        x, y = self.as_f64(x), self.as_f64(y)
        if isinstance(op, ast.Add):
            return b.fadd(x, y)
        if isinstance(op, ast.Sub):
            return b.fsub(x, y)
        if isinstance(op, ast.Mult):
            return b.fmul(x, y)
        if isinstance(op, ast.Div):
            return b.fdiv(x, y)
        if isinstance(op, ast.Pow):
            return b.call(self.intrinsic("llvm.pow", 2), [x, y])
        raise Unsupported(type(op).__name__)

    def compare(self, op, x, y):
        if x.type == self.i1 and y.type == self.i1 and type(op) in (ast.Eq, ast.NotEq):
            return self.b.icmp_unsigned("==" if isinstance(op, ast.Eq) else "!=", x, y)
        x, y = self.as_f64(x), self.as_f64(y)
        if isinstance(op, ast.NotEq):
            return self.b.fcmp_unordered("!=", x, y)  # NaN != anything
        if type(op) not in _ORDERED:
            raise Unsupported(type(op).__name__)
        return self.b.fcmp_ordered(_ORDERED[type(op)], x, y)

    def intrinsic(self, name, arity=1):
        key = (name, arity)
        if key not in self.functions:
            self.functions[key] = self.module.declare_intrinsic(name, [self.f64])
        return self.functions[key]

    def libm(self, name, arity=1):
        key = (name, arity)
        if key not in self.functions:
            ty = self.ir.FunctionType(self.f64, [self.f64] * arity)
            self.functions[key] = self.ir.Function(self.module, ty, name=name)
        return self.functions[key]

    def call(self, node):
        b, f64 = self.b, self.f64
        text = ast.unparse(node.func)
        args = [self.as_f64(self.expr(a)) for a in node.args]
        mod, _, name = text.rpartition(".")
        if text == "abs":
            return b.call(self.intrinsic("llvm.fabs"), args)
        if mod == "math" and name in _INTRINSICS:
            return b.call(self.intrinsic(_INTRINSICS[name]), args)
        if mod == "math" and name in _LIBM:
            return b.call(self.libm(name), args)
        if mod == "math" and name in ("isnan", "isinf", "isfinite"):
            (x,) = args
            if name == "isnan":
                return b.fcmp_unordered("uno", x, x)
            mag = b.call(self.intrinsic("llvm.fabs"), [x])
            inf = self.ir.Constant(f64, math.inf)
            return b.fcmp_ordered("==" if name == "isinf" else "<", mag, inf)
        if mod == "_k":
            return self.helper(name, args)
        raise Unsupported(f"call {text}")

    def helper(self, name, args):
        """The scalar helpers of :mod:`hessgrad.kernels.scalar`, branch for branch."""
        ir, b, f64 = self.ir, self.b, self.f64

        def const(c):
            return ir.Constant(f64, c)

        if name == "sign" and len(args) == 1:
            (x,) = args
            neg = b.select(b.fcmp_ordered("<", x, const(0.0)), const(-1.0), x)
            return b.select(b.fcmp_ordered(">", x, const(0.0)), const(1.0), neg)
        if name == "sigmoid" and len(args) == 1:
            (x,) = args
            e = b.call(self.intrinsic("llvm.exp"),
                       [b.fneg(b.call(self.intrinsic("llvm.fabs"), [x]))])
            den = b.fadd(const(1.0), e)
            return b.select(b.fcmp_ordered(">=", x, const(0.0)), b.fdiv(const(1.0), den),
                            b.fdiv(e, den))
        if name in ("maximum", "minimum") and len(args) == 2:
            x, y = args
            keep_x = b.fcmp_ordered(">=" if name == "maximum" else "<=", x, y)
            pick = b.select(keep_x, x, y)
            pick = b.select(b.fcmp_unordered("uno", y, y), y, pick)
            return b.select(b.fcmp_unordered("uno", x, x), x, pick)
        if name == "logaddexp" and len(args) == 2:
            x, y = args
            d = b.fsub(x, y)
            exp, log1p = self.intrinsic("llvm.exp"), self.libm("log1p")
            pos = b.fadd(x, b.call(log1p, [b.call(exp, [b.fneg(d)])]))
            neg = b.fadd(y, b.call(log1p, [b.call(exp, [d])]))
            out = b.select(b.fcmp_ordered("<=", d, const(0.0)), neg, d)  # else NaN: d
            out = b.select(b.fcmp_ordered(">", d, const(0.0)), pos, out)
            return b.select(b.fcmp_ordered("==", x, y), b.fadd(x, const(_LN2)), out)
        raise Unsupported(f"_k.{name}")


def _own_digest():
    """A digest of this module's source: a cached kernel translated by an older version of
    the translator is never loaded."""
    with open(__file__, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


_TRANSLATOR_VERSION = _own_digest()


class NativeKernel:
    """The kernel text ``source`` compiled; :meth:`call_lines` writes the Python that calls
    it. ``arg_specs``: parameter name -> (shape, dtype); ``result_dtypes``: the dtype of each
    returned value. Keeps its LLVM execution engine (the machine code) alive."""

    def __init__(self, source, arg_specs, result_dtypes):
        # A kernel compiled by an earlier process is loaded without translating the text:
        # the disk cache keeps its machine code and the layout of its parameters.
        key = "\n".join([
            "hessgrad native kernel", _TRANSLATOR_VERSION, str(_DATA_OFFSET), source,
            repr([(k, s, np.dtype(d).str) for k, (s, d) in arg_specs.items()]),
            repr([np.dtype(d).str for d in result_dtypes])])
        cached = load_cached(key)
        if cached is not None:
            self._engine, layout = cached[0], json.loads(cached[1])
        else:
            layout = self._translate(source, arg_specs, result_dtypes)
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
            len(arg_specs) + len(self._outputs) + 2))(address)

    def _translate(self, source, arg_specs, result_dtypes):
        """Translate ``source`` to IR (``self.ir``); returns the layout of its parameters
        and results as plain data (what the disk cache keeps)."""
        translator = _Translator(ast.parse(source), arg_specs)
        try:
            self.ir = translator.translate()
        except (KeyError, ValueError, AttributeError, TypeError) as exc:
            raise Unsupported(f"{type(exc).__name__}: {exc}") from exc
        outputs = list(translator.outputs.items())
        results = []
        for j, name in enumerate(translator.results):
            array = translator.arrays.get(name)
            if array is None:
                results.append(("scalar", j, np.dtype(result_dtypes[j]).str))
                continue
            owner = next((k for k, (out, _) in enumerate(outputs)
                          if translator.arrays[out].ptr is array.ptr), None)
            if owner is None:
                raise Unsupported(f"result {name} is not an output of the kernel")
            results.append(("buffer", owner, [int(d) for d in array.shape]))
        return {"outputs": [(bool(zeroed), [int(d) for d in shape], np.dtype(dtype).str)
                            for _, (shape, dtype, zeroed) in outputs],
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
