"""``vectorize``: numpy's generalized-ufunc wrapper, built on :func:`hessgrad.vmap` (as
``jax.numpy.vectorize``): the loop over the broadcast leading dimensions is one batched run,
not a Python loop, and it is differentiable."""

import functools
import math
import re

import numpy as np

from ..engine.nest import flatten, pack_as
from ..engine.tensor import Tensor
from ..ops.core import broadcast_to, reshape
from ..vmap import vmap
from ._arraylike import asarray as _asarray

_DIMS = r"\(\s*(?:\w+\s*(?:,\s*\w+\s*)*)?\)"
_ARGS = rf"{_DIMS}(?:\s*,\s*{_DIMS})*"
_SIGNATURE = re.compile(rf"^\s*{_ARGS}\s*->\s*{_ARGS}\s*$")


def _parse_signature(signature):
    """``([core dims per input], [core dims per output])``, each a tuple of names."""
    if not isinstance(signature, str) or not _SIGNATURE.match(signature):
        raise ValueError(f"vectorize: not a valid gufunc signature: {signature!r} (expected "
                         "e.g. '(m,n),(n)->(m)')")
    inputs, outputs = signature.split("->")

    def parse(part):
        return [tuple(d.strip() for d in group.split(",") if d.strip())
                for group in re.findall(r"\(([^)]*)\)", part)]
    return parse(inputs), parse(outputs)


def _shape(x):
    return tuple(x.shape) if isinstance(x, Tensor) else np.shape(x)


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """A function that applies ``pyfunc`` to every element (or core sub-array) of its
    arguments, broadcasting their leading (loop) dimensions, as ``numpy.vectorize`` and
    ``jax.numpy.vectorize`` do; the loop is one :func:`hessgrad.vmap` run, differentiable
    like any other hessgrad function.

    Args:
        pyfunc: the function of one element (or of core arrays, with ``signature``).
        excluded: positions (ints) and keyword names (strs) of arguments passed to ``pyfunc``
            unchanged, not vectorized. Other keyword arguments are vectorized like positional
            ones (with a ``signature``, they must be excluded). None positional arguments are
            passed unchanged too.
        signature: a generalized-ufunc signature such as ``"(m,n),(n)->(m)"``: ``pyfunc`` gets
            and returns arrays with these core dimensions (checked, and sizes of a name must
            agree everywhere); without one it gets 0-d arrays and may return any shape.
    Returns:
        The vectorized function: its outputs have the broadcast loop shape in front of each
        output's core shape (a tuple of them for several outputs).
    Raises:
        TypeError: ``excluded`` holds something else than ints and strs; a call has the wrong
            number of arguments for the signature, or a result is not the tuple it declares.
        ValueError: a malformed signature or negative ``excluded`` position; an argument with
            fewer dimensions than its core dimensions, a core dimension of inconsistent size,
            loop dimensions that do not broadcast, an output of the wrong core shape.

    >>> import hessgrad.numpy as hnp
    >>> matvec = hnp.vectorize(lambda a, b: a @ b, signature="(m,n),(n)->(m)")
    >>> matvec(np.ones((2, 3, 4)), np.arange(4.0)).shape
    (2, 3)
    >>> matvec(np.eye(2)[None], np.array([[1.0, 2.0], [3.0, 4.0]]))
    array([[1., 2.],
           [3., 4.]])
    >>> hnp.vectorize(lambda x, p: x ** p, excluded={1})(np.arange(3.0), 2)
    array([0., 1., 4.])
    """
    if not callable(pyfunc):
        raise TypeError(f"vectorize: pyfunc must be callable, got {type(pyfunc).__name__}")
    excluded = frozenset(excluded or ())
    for e in excluded:
        if isinstance(e, bool) or not isinstance(e, (int, np.integer, str)):
            raise TypeError(f"vectorize: excluded must hold ints (positions) and strs (keyword "
                            f"names), got {e!r}")
        if not isinstance(e, str) and e < 0:
            raise ValueError(f"vectorize: excluded={set(excluded)!r} contains negative numbers")
    parsed = None if signature is None else _parse_signature(signature)
    return _Vectorized(pyfunc, excluded, signature, parsed)


class _Vectorized:
    def __init__(self, pyfunc, excluded, signature, parsed):
        functools.update_wrapper(self, pyfunc)
        self.pyfunc, self.excluded, self.signature, self.parsed = pyfunc, excluded, signature, \
            parsed
        self._maps = {}  # (in_axes, axis_size) -> the vmap of _member (it keeps the traces)

    def _where(self):
        return f"(vectorize with signature={self.signature!r}, excluded={set(self.excluded)!r})"

    def _member(self, dynamic, static_positional, static_kwargs, kw_names):
        """``pyfunc`` on one member: the dynamic values (positional ones, then the keyword
        ones named ``kw_names``) put back among the unchanged arguments."""
        n_positional = len(dynamic) - len(kw_names)
        values = iter(dynamic[:n_positional])
        args = [static_positional[i] if i in static_positional else next(values)
                for i in range(n_positional + len(static_positional))]
        kwargs = dict(zip(kw_names, dynamic[n_positional:]))
        kwargs.update(static_kwargs)
        return self.pyfunc(*args, **kwargs)

    def __call__(self, *args, **kwargs):
        static_positional = {i: a for i, a in enumerate(args) if i in self.excluded or a is None}
        dynamic = [a for i, a in enumerate(args) if i not in static_positional]
        static_kwargs = {k: v for k, v in kwargs.items() if k in self.excluded}
        kw_names = tuple(sorted(k for k in kwargs if k not in self.excluded))
        if self.parsed is not None:
            in_core, out_core = self.parsed
            if kw_names:
                raise TypeError(f"vectorize: keyword arguments {list(kw_names)} are not part "
                                f"of the signature; exclude them {self._where()}")
            if len(dynamic) != len(in_core):
                raise TypeError(f"vectorize: wrong number of positional arguments: expected "
                                f"{len(in_core)}, got {len(dynamic)} {self._where()}")
        else:
            in_core, out_core = [()] * (len(dynamic) + len(kw_names)), None
        dynamic += [kwargs[k] for k in kw_names]
        dynamic = [a if isinstance(a, Tensor) else _asarray(a, "vectorize", f"argument {j}")
                   for j, a in enumerate(dynamic)]
        sizes = {}
        loops = [self._loop_shape(a, core, sizes, j) for j, (a, core) in
                 enumerate(zip(dynamic, in_core))]
        try:
            loop = np.broadcast_shapes(*loops)
        except ValueError:
            raise ValueError(f"vectorize: the loop dimensions {loops} of the arguments (shapes "
                             f"{[_shape(a) for a in dynamic]}) do not broadcast "
                             f"{self._where()}") from None
        size = math.prod(loop)
        members, axes = [], []
        for a, a_loop, core in zip(dynamic, loops, in_core):
            core_shape = _shape(a)[len(a_loop):]
            if all(d == 1 for d in a_loop):  # the same for every member: not mapped
                members.append(_reshaped(a, core_shape))
                axes.append(None)
            else:
                if tuple(a_loop) != tuple(loop):
                    a = _broadcast(a, loop + core_shape)
                members.append(_reshaped(a, (size,) + core_shape))
                axes.append(0)
        key = (tuple(axes), None if any(ax is not None for ax in axes) else size)
        if key not in self._maps:
            self._maps[key] = vmap(self._member, in_axes=(key[0], None, None, None),
                                   axis_size=key[1])
        out = self._maps[key](tuple(members), static_positional, static_kwargs, kw_names)
        return self._shaped(out, loop, out_core, sizes)

    def _loop_shape(self, a, core, sizes, j):
        shape = _shape(a)
        if len(shape) < len(core):
            raise ValueError(f"vectorize: argument {j} has shape {shape}, which does not have "
                             f"enough dimensions for its core dimensions {core} "
                             f"{self._where()}")
        core_shape = shape[len(shape) - len(core):]
        self._bind_sizes(core, core_shape, sizes, f"argument {j}")
        return shape[:len(shape) - len(core)]

    def _bind_sizes(self, names, shape, sizes, what):
        for name, n in zip(names, shape):
            if sizes.setdefault(name, n) != n:
                raise ValueError(f"vectorize: inconsistent size for core dimension {name!r}: "
                                 f"{sizes[name]} vs {n} ({what} has core shape {shape}) "
                                 f"{self._where()}")

    def _shaped(self, out, loop, out_core, sizes):
        """The outputs with the flat loop axis reshaped to ``loop``, checked against the
        signature's output core dimensions."""
        if out_core is not None:
            if len(out_core) > 1:
                if not isinstance(out, tuple) or len(out) != len(out_core):
                    raise TypeError(f"vectorize: pyfunc must return a tuple of "
                                    f"{len(out_core)} outputs, got "
                                    f"{type(out).__name__} {self._where()}")
                outs = list(out)
            else:
                outs = [out]
            for j, (o, core) in enumerate(zip(outs, out_core)):
                shape = _shape(o)[1:]
                if len(shape) != len(core):
                    raise ValueError(f"vectorize: output {j} has core shape {shape} per member, "
                                     f"but the signature gives it core dimensions {core} "
                                     f"{self._where()}")
                self._bind_sizes(core, shape, sizes, f"output {j}")
        leaves = flatten(out)
        return pack_as(out, [None if v is None else _reshaped(v, loop + _shape(v)[1:])
                             for v in leaves])


def _reshaped(a, shape):
    if isinstance(a, Tensor):
        return a if tuple(a.shape) == tuple(shape) else reshape(a, shape=tuple(shape))
    return np.reshape(a, shape)


def _broadcast(a, shape):
    if isinstance(a, Tensor):
        return broadcast_to(a, shape=tuple(shape))
    return np.broadcast_to(a, shape)


__all__ = ["vectorize"]
