"""Straight-line Python for an optimized program: one function, locals instead of an env list.

Forward functions, params and constants are bound in the function's globals; intermediates
are deleted right after their last use; an op that declares a function taking ``out=``
(``Lowering.call``: a numpy ufunc) whose input is a buffer that this run created
(``Lowering.fresh``), that nothing else refers to (every reader declares ``no_alias``) and
that dies at that op writes its result into it (``np.add(a, b, out=a)``). Binary ops on 0-d
integers whose scalar form is one Python operator are written as that operator. A failure
gets the same note as the Plan's ("while running graph node ..."), found from the line that
raised, at no cost when nothing fails.
"""

import numpy as np

from ..engine.tensor import Tensor
from .ir import known
from .scalar import python_operator


def _feed_value(v, dtype, shape, name):
    v = np.asarray(v.numpy() if isinstance(v, Tensor) else v, dtype=dtype)
    if shape is not None and (len(shape) != v.ndim or any(
            d is not None and d != e for d, e in zip(shape, v.shape))):
        raise ValueError(f"Graph.run: placeholder {name} has shape {shape}, "
                         f"fed a value of shape {v.shape}")
    return v


def feed_checks(prog, ns, contiguous=False):
    """Lines that validate and convert each feed ``v<slot>`` but the program's trusted ones
    (binding what they use in ``ns``). With ``contiguous`` (a whole-graph kernel takes every
    feed) a fed array is also made C-contiguous; without, feeds no op reads are skipped. A
    value of the right kind passes after a few attribute tests: loops run their blocks'
    checks every iteration."""
    ns.update(_ndarray=np.ndarray, _feed=_feed_value)
    lines = []
    read = None if contiguous else {a for op in prog.ops for a in op.args} | set(prog.fetches)
    for j, (s, dtype, shape, fname) in enumerate(zip(prog.feeds, prog.plan.feed_dtypes,
                                                     prog.plan.feed_shapes,
                                                     prog.plan.feed_names)):
        if s in prog.trusted or read is not None and s not in read:
            continue
        ns[f"_D{j}"], ns[f"_S{j}"], ns[f"_N{j}"] = np.dtype(dtype), shape, fname
        convert = f"_feed(v{s}, _D{j}, _S{j}, _N{j})"
        if contiguous:
            convert = f"_np.asarray({convert}, order=\"C\")"
        if shape is None:
            lines.append(f"v{s} = {convert}")
            continue
        if None in shape:  # the known dimensions, one by one
            tests = [f"v{s}.ndim != {len(shape)}"] + [
                f"v{s}.shape[{d}] != {n}" for d, n in enumerate(shape) if n is not None]
        else:
            tests = [f"v{s}.shape != _S{j}"]
        if contiguous:
            tests.append(f"not v{s}.flags.c_contiguous")
        wrong = f"type(v{s}) is not _ndarray or v{s}.dtype != _D{j} or " + " or ".join(tests)
        if shape == () and not contiguous:
            # numpy's 0-d results are scalars: one of the dtype's type is used as it is
            ns[f"_T{j}"] = np.dtype(dtype).type
            wrong = f"type(v{s}) is not _T{j} and ({wrong})"
        lines.append(f"if {wrong}:")
        lines.append(f"    v{s} = {convert}")
    return lines


def _note_for(op):
    node = op.node
    where = f"while running graph node {node.name} (op {node.prim.name})"
    if getattr(op.prim, "group", False):
        where += f" in a {op.name} kernel of " + ", ".join(
            f"{n.name} ({n.prim.name})" for n in op.nodes)
    return where


def _integer_operator(prog, op):
    """The Python operator of an op over two 0-d integer values (booleans too, compared),
    one of them computed at run time: a numpy scalar, so the operator runs numpy's ufunc;
    None for another op."""
    if op.params or op.multi or len(op.args) != 2 or prog.shape(op.outs[0]) != () or \
            all(a in prog.consts for a in op.args):
        return None
    found = _OPERATORS.get(op.prim, False)
    if found is False:
        found = _OPERATORS[op.prim] = python_operator(op.prim)
    if found is None:
        return None
    for a in op.args:
        dtype = prog.dtype(a)
        if prog.shape(a) != () or dtype is None or dtype.kind not in found[1]:
            return None
    return found[0]


_OPERATORS = {}  # primitive -> python_operator(primitive), found once


class Generated:
    """The generated function with its source and the line -> op map for error notes."""

    def __init__(self, fn, source, line_ops):
        self.fn = fn
        self.source = source
        self.line_ops = line_ops


def generate(prog, kernel_calls=None, name="compiled_graph"):
    """Python source for ``prog``; ``kernel_calls[id(op)]`` gives a fused op's call (a
    function ``(arg_names) -> expression``), the objects it needs bound and lines to run
    after it."""
    kernel_calls = kernel_calls or {}
    ns = {"_np": np}
    consts = prog.consts
    fetched = set(prog.fetches)

    def ref(v):
        if v in consts:
            value = consts[v]
            if type(value) in (int, bool) or (type(value) is float and np.isfinite(value)):
                return repr(value)
            ns[f"c{v}"] = value
            return f"c{v}"
        return f"v{v}"

    # last use of every value; fetched values live to the end
    last = {}
    for k, op in enumerate(prog.ops):
        for a in op.args:
            last[a] = k
    users = prog.consumers()
    producer = {o: op for op in prog.ops for o in op.outs}

    def owned(v):
        """A buffer this run made, referenced by nobody else, that no view can outlive."""
        src = producer.get(v)
        if src is None or not src.prim.lowering.fresh or v in fetched or v in consts:
            return False
        shape = prog.shape(v)
        if not known(shape) or len(shape) == 0:
            return False
        return all(prog.ops[u].prim.lowering.no_alias for u in users.get(v, ()))

    lines = []
    line_ops = {}
    feed_names = [f"v{s}" for s in prog.feeds]
    body = feed_checks(prog, ns)
    for j, (s, var) in enumerate(prog.variables):
        ns[f"_var{j}"] = var
        body.append(f"v{s} = _var{j}._value")
    body_ops = []  # (line index in body, op)
    for k, op in enumerate(prog.ops):
        outs = ", ".join(f"v{o}" for o in op.outs)
        if op.multi:
            outs += "," if len(op.outs) == 1 else ""
        args = [ref(a) for a in op.args]
        low = op.prim.lowering
        call, post, operator = None, (), _integer_operator(prog, op)
        if id(op) in kernel_calls:
            make, bound, post = kernel_calls[id(op)]
            ns.update(bound)
            call = make(args)
        elif operator is not None:
            call = f"({args[0]} {operator} {args[1]})"
        elif low.call is not None and not op.params and not op.multi:
            out_shape, out_dtype = prog.shape(op.outs[0]), prog.dtype(op.outs[0])
            ns[f"u{k}"] = low.call
            target = None
            if known(out_shape):
                for a in op.args:
                    if last.get(a) == k and owned(a) and prog.shape(a) == out_shape and \
                            prog.dtype(a) == out_dtype:
                        target = a
                        break
            if target is not None:
                call = f"u{k}({', '.join(args)}, out=v{target})"
            elif known(out_shape):  # shapes checked at trace time: the bare ufunc
                call = f"u{k}({', '.join(args)})"
        elif low.specialize is not None and not op.params and \
                all(known(prog.shape(a)) for a in op.args):
            ns[f"u{k}"] = low.specialize(*[prog.shape(a) for a in op.args],
                                         *[prog.dtype(a) for a in op.args])
            call = f"u{k}({', '.join(args)})"
        if call is None:
            ns[f"F{k}"] = op.fn
            kw = []
            for j, (pname, pvalue) in enumerate(op.params.items()):
                ns[f"p{k}_{j}"] = pvalue
                kw.append(f"{pname}=p{k}_{j}")
            call = f"F{k}({', '.join(args + kw)})"
        body_ops.append((len(body), op))
        body.append(f"{outs} = {call}")
        body.extend(post)
        dead = sorted({a for a in op.args if last.get(a) == k and a not in fetched
                       and a not in consts})
        dead += [o for o in op.outs if o not in last and o not in fetched]
        if dead:
            body.append("del " + ", ".join(f"v{d}" for d in dead))
    body.append("return [" + ", ".join(ref(v) for v in prog.fetches) + "]")

    lines.append(f"def {name}({', '.join(feed_names)}):")
    lines.append("    try:")
    first_body_line = len(lines) + 1  # 1-based line number of body[0]
    lines.extend("        " + b for b in body)
    lines.append("    except Exception as exc:")
    lines.append("        _annotate(exc)")
    lines.append("        raise")
    for index, op in body_ops:
        line_ops[first_body_line + index] = op
    source = "\n".join(lines) + "\n"

    def annotate(exc):
        tb = exc.__traceback__
        op = line_ops.get(tb.tb_lineno) if tb is not None else None
        if op is not None and op.node is not None:
            exc.add_note(_note_for(op))

    ns["_annotate"] = annotate
    code = compile(source, f"<hessgrad compiled graph {name}>", "exec")
    exec(code, ns)  # noqa: S102 - our own generated source
    return Generated(ns[name], source, line_ops)
