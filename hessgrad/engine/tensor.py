"""Tensor (an eager value or a symbolic graph output) and Variable (mutable, trainable state)."""

import itertools
import math
import sys

import numpy as np

from .state import THREAD

_variable_ids = itertools.count()


class Tensor:
    """An n-dimensional array that operations can be differentiated through.

    Eager tensors hold a numpy value. Symbolic tensors (graph mode) hold the graph node that
    computes them and output index, plus a static shape and dtype, and may be *weak*: see
    :attr:`weak`. Arithmetic, indexing and numpy methods are installed by ``hessgrad.ops``.
    """

    # ``_mut``: None, or what in-place writes need to know (see :class:`Written`): the
    # array's newest value once written, its base if it is a view, its live views.
    __slots__ = ("_value", "_node", "_index", "_shape", "_dtype", "_weak", "_mut",
                 "__weakref__")
    __array_priority__ = 1000

    def __init__(self, value=None, node=None, index=0, shape=None, dtype=None):
        self._value = value
        self._node = node
        self._index = index
        self._shape = shape
        self._dtype = dtype
        self._weak = False
        self._mut = None

    # --- static facts -----------------------------------------------------------------
    @property
    def is_symbolic(self):
        return self._value is None

    @property
    def shape(self):
        v = self._value
        return v.shape if v is not None else self._shape

    @property
    def dtype(self):
        v = self._value
        return v.dtype if v is not None else self._dtype

    def _dtype_kind(self):
        v = self._value
        return v.dtype.kind if v is not None else self._dtype.kind

    @property
    def weak(self):
        """Whether this symbolic tensor stands for a Python scalar: a ``float`` or ``complex``
        argument of a traced :func:`hessgrad.function`, or Python operators applied to such
        (``s * 2.0``, ``s > 0``). numpy 2 lets Python scalars take the dtype of the arrays
        they meet (``float32_array * 0.5`` is float32), and graphs do the same with weak
        tensors (see ``Graph._promote_weak``). Its ``dtype`` is the one numpy gives the
        scalar alone (float64, complex128, bool)."""
        return self._weak

    @property
    def ndim(self):
        shape = self.shape
        return None if shape is None else len(shape)

    @property
    def size(self):
        shape = self.shape
        if shape is None or None in shape:
            return None
        return int(math.prod(shape))

    @property
    def graph(self):
        return None if self._node is None else self._node.graph

    @property
    def op(self):
        """The graph node that produces a symbolic tensor."""
        return self._node

    @property
    def name(self):
        if self._node is None:
            return None
        return f"{self._node.name}:{self._index}"

    def __len__(self):
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        if shape[0] is None:
            raise TypeError(f"len() of tensor {self.name} whose first dimension is unknown")
        return shape[0]

    # --- values -----------------------------------------------------------------------
    def numpy(self):
        """The value as a numpy array (eager tensors only)."""
        if self._value is None:
            raise TypeError(
                f"symbolic tensor {self.name} has no value while a graph is being built; "
                "run the graph (hessgrad.function, Graph.run) to get one")
        return self._value

    def __array__(self, dtype=None, copy=None):
        value = np.asarray(self._converted(
            "conversion to a numpy array (numpy.array, numpy.asarray, an ndarray method or a "
            "numpy function)"))
        return value if dtype is None else value.astype(dtype, copy=False)

    def _refuse_if_differentiated(self, what):
        """Raise when a recorder differentiates this tensor: ``what`` would hand out a plain
        number or array, which carries no gradient, so the derivative would silently miss
        this path. A tensor nothing differentiates converts freely."""
        recorders = THREAD.state.recorders
        if recorders and any(getattr(r, "tracks", _never)(self) for r in recorders):
            _refuse(ConcretizationError(
                f"{what} of a tensor that is being differentiated would silently drop its gradient "
                "(a plain number or numpy array carries none): the derivative would miss "
                "this path. Use hessgrad ops on the tensor (hessgrad.numpy: hnp.exp, "
                "hnp.where, ...), compare the tensor itself to branch on it (`if t > 0:`), "
                "create arrays that receive such values with hessgrad.numpy (hnp.zeros, "
                "hnp.empty, ...) instead of numpy, or convert hessgrad.stop_gradient(t) if a "
                "constant is meant"))

    def _concrete(self, what):
        """The value, for ``what``; a symbolic tensor has none (ConcretizationError)."""
        if self._value is None:
            _refuse(ConcretizationError(
                f"{what} of symbolic tensor {self.name} is not known while a function is "
                "traced; use hessgrad ops (hg.cond, hg.where, hg.while_loop) for "
                "data-dependent control flow, hessgrad.numpy arrays (not numpy's) to write "
                "values into, or run eagerly"))
        return self._value

    def _converted(self, what):
        """The value handed out as a plain number or array by ``what``: refused for a tensor
        being differentiated (see ``_refuse_if_differentiated``)."""
        value = self._concrete(what)
        self._refuse_if_differentiated(what)
        return value

    def _guarded(self, convert, what):
        """``convert`` of a symbolic tensor's value at the point its graph is traced at, kept
        as a guard of the trace (see ``Graph.guard``); else ConcretizationError."""
        node = self._node
        result = None if node is None else node.graph.guard(self, convert)
        if result is None:
            self._concrete(what)
        return result

    def __bool__(self):  # control flow: the branch taken has its own derivative
        value = self._value
        if value is None:
            return self._guarded(bool, "the truth value")
        return bool(value)

    def __float__(self):
        return float(self._converted("float()"))

    def __int__(self):  # piecewise constant: its derivative, zero, is not lost
        value = self._value
        if value is None:
            return self._guarded(int, "int()")
        return int(value)

    def __index__(self):
        if self.dtype.kind not in "iub":
            raise TypeError(f"only integer tensors can be used as an index, not {self.dtype}")
        value = self._value
        if value is None:
            return self._guarded(int, "the index value")
        return int(value)

    def __complex__(self):
        return complex(self._converted("complex()"))

    def item(self, *args):
        value = self._value
        if value is None or value.dtype.kind in "fc":
            value = self._converted("item()")
        return value.item(*args)

    def tolist(self):
        value = self._value
        if value is None or value.dtype.kind in "fc":
            value = self._converted("tolist()")
        return value.tolist()

    def __trunc__(self):  # math.trunc: as int()
        return self.__int__()

    # Hashing stays by identity: the engine keys records by tensor (a numpy array is not
    # hashable at all, and a value hash would change when a tensor is written in place).
    __hash__ = object.__hash__

    def __repr__(self):
        if self._value is None:
            return f"<hessgrad.Tensor {self.name!r} shape={self.shape} dtype={self.dtype}>"
        body = np.array2string(self._value, separator=", ", prefix="hessgrad.Tensor(")
        return f"hessgrad.Tensor({body}, dtype={self._value.dtype})"

    # An eager tensor prints and formats as its numpy value does (``print(loss(w))``,
    # ``f"{loss(w):.3f}"``: a 0-d tensor as a numpy scalar, others as numpy arrays, which take
    # no format spec); ``repr`` says it is a tensor. Printing hands out no number that could
    # lose a derivative, so a tensor being differentiated prints too.
    def _printed(self):
        value = self._value
        return value[()] if value.ndim == 0 else value

    def __str__(self):
        if self._value is None:
            return repr(self)
        return str(self._printed())

    def __format__(self, spec):
        if self._value is None:
            if not spec:
                return repr(self)
            self._concrete(f"format(..., {spec!r})")
        return format(self._printed(), spec)

    def __reduce__(self):
        """Pickled as its value (an eager tensor; a symbolic one has none to pickle)."""
        value = self._concrete("pickling")
        return _unpickle_tensor, (np.array(value), self._weak)


def _unpickle_tensor(value, weak=False):
    t = Tensor(value)
    t._weak = weak
    return t


def _unpickle_variable(value, trainable, name):
    return Variable(value, trainable=trainable, name=name)


class Variable(Tensor):
    """Mutable state that tapes watch automatically when it is read (when ``trainable``).

    >>> import hessgrad as hg
    >>> v = hg.Variable(2.0)
    >>> with hg.GradientTape() as tape:
    ...     y = v * v
    >>> float(tape.gradient(y, v))
    4.0
    """

    __slots__ = ("trainable", "_var_name", "_uid")

    def __init__(self, initial_value, trainable=True, name=None, dtype=None):
        value = initial_value.numpy() if isinstance(initial_value, Tensor) else initial_value
        super().__init__(np.array(value, dtype=dtype))
        # Read-only storage, replaced (never written) by assign: a value handed out (a
        # fetch, a recorded read) can neither change later nor be changed by its holder.
        self._value.flags.writeable = False
        self.trainable = bool(trainable)
        self._uid = next(_variable_ids)
        self._var_name = name or f"Variable_{self._uid}"

    @property
    def name(self):
        return self._var_name

    def __reduce__(self):
        return _unpickle_variable, (np.array(self._value), self.trainable, self._var_name)

    def assign(self, value):
        """Replace the value (same shape and dtype); returns the variable."""
        new = np.asarray(value.numpy() if isinstance(value, Tensor) else value)
        if new.shape != self._value.shape:
            raise ValueError(
                f"Variable.assign: {self._var_name} has shape {self._value.shape}, "
                f"the new value has shape {new.shape}")
        # A new array, never an in-place write: tapes keep the old value alive if they need it.
        self._value = new.astype(self._value.dtype, copy=True)
        self._value.flags.writeable = False
        return self

    def assign_add(self, delta):
        return self.assign(self._value + np.asarray(delta))

    def assign_sub(self, delta):
        return self.assign(self._value - np.asarray(delta))

    def value(self):
        """The current value as a Tensor: a differentiable read (watched by tapes, a live
        input of graphs and traced functions), as TensorFlow's."""
        from .dispatch import READ, bind  # dispatch imports this module
        return bind(READ, (self,), {})

    read_value = value

    def numpy(self):
        """A copy of the current value (as TensorFlow's)."""
        return self._value.copy()

    def __repr__(self):
        return f"<hessgrad.Variable {self._var_name!r} shape={self.shape} dtype={self.dtype} " \
               f"numpy={self._value!r}>"


class Written(Tensor):
    """A tensor written in place after it was made (``a[i] = v``, ``a += b``, ``np.add.at``, or
    a view of an array so written): the object now stands for its newest value,
    :func:`current`, a plain Tensor that the ops layer computes (``t._mut.value()``).

    Writes are functional under the hood: each makes a new tensor. The written object keeps
    in its slots the value it had when it was made, which is what the recorders saw when they
    recorded the ops that read it before the write (tape records, graph nodes hold the
    object): those records stay true. Every op applied to it from now on reads its newest
    value (``bind`` resolves it), and so do its public attributes (shape, ``numpy()``,
    ``float()``, ...). The backprop core runs a recorded op's rules inside
    :class:`as_recorded`, where its written operands stand for their recorded values again.
    A write never changes a tensor's dtype, graph, or whether it is symbolic; only an eager
    array's ``resize`` changes its shape.
    """

    __slots__ = ()
    count = 0  # tensors ever written: the backprop core looks for them only when nonzero

    def __repr__(self):
        return repr(current(self))

    def __str__(self):
        return str(current(self))

    def __format__(self, spec):
        return format(current(self), spec)

    def __reduce__(self):
        return current(self).__reduce__()


def _delegate(name):
    attribute = getattr(Tensor, name)
    if isinstance(attribute, property):
        return property(lambda self: getattr(current(self), name), doc=attribute.__doc__)

    def method(self, *args, **kwargs):
        return getattr(current(self), name)(*args, **kwargs)
    method.__name__ = name
    method.__doc__ = attribute.__doc__
    return method


for _name in ("shape", "dtype", "_dtype_kind", "numpy", "__array__", "__bool__", "__float__",
              "__int__", "__index__", "__complex__", "__trunc__", "item", "tolist", "_concrete",
              "_converted", "_refuse_if_differentiated"):
    setattr(Written, _name, _delegate(_name))


def current(t):
    """What ``t`` stands for now: ``t`` itself, or for a tensor written in place (see
    :class:`Written`) its newest value, a plain Tensor. Other values are returned as they are.
    """
    return t._mut.value() if type(t) is Written else t


def mark_written(t):
    """From now on ``t`` (a Tensor whose ``_mut`` the ops layer has set) stands for
    ``t._mut.value()``; see :class:`Written`."""
    if type(t) is Written:
        return
    if type(t) is not Tensor:
        raise TypeError(f"a {type(t).__name__} cannot be written in place")
    t.__class__ = Written
    Written.count += 1


class as_recorded:
    """Context in which ``tensors`` (those of them written in place) stand for the values
    they had when made, as the records that hold them mean: the backprop core runs an op's
    rules inside it, so that they read the op's operands and results as they were recorded.
    """

    __slots__ = ("tensors",)

    def __init__(self, tensors):
        self.tensors = [t for t in tensors if type(t) is Written]

    def __enter__(self):
        for t in self.tensors:
            t.__class__ = Tensor
        return self

    def __exit__(self, *exc):
        for t in self.tensors:
            t.__class__ = Written


class ConcretizationError(TypeError):
    """A traced (symbolic) tensor's value was needed by Python code while tracing."""


class GuardFailed(ConcretizationError):
    """A trace ran at a point where a Python branch on a value goes another way than where it
    was traced (see ``Graph.guard``): its results would be those of the other branch."""


def _never(t):
    return False


def _is_scipy(frame):
    return frame.f_globals.get("__name__", "").startswith("scipy.")


def scipy_caller():
    """``(public module, function)`` of the SciPy function whose code converts a tensor, when
    the conversion happens inside SciPy (``scipy.linalg.expm(t)``: ``("scipy.linalg",
    "expm")``), else None: the refusal then names hessgrad's differentiable version. The
    entry point is the outermost SciPy frame that is neither in a private package
    (``scipy._lib``'s decorators) nor a local function (a wrapper)."""
    frame = sys._getframe(1)
    while frame is not None and not _is_scipy(frame):
        if not frame.f_globals.get("__name__", "").startswith(("hessgrad.", "numpy")):
            return None  # user code converted the tensor itself
        frame = frame.f_back
    frames = []
    while frame is not None and _is_scipy(frame):
        frames.append(frame)
        frame = frame.f_back
    for entry in reversed(frames):  # outermost first
        parts = entry.f_globals["__name__"].split(".")
        name = getattr(entry.f_code, "co_qualname", entry.f_code.co_name)
        if not parts[1].startswith("_") and "<locals>" not in name:
            return ".".join(parts[:2]), name
        for value in entry.f_locals.values():  # a decorator's wrapper: the function it wraps
            module = getattr(value, "__module__", None) or ""
            fname = getattr(value, "__name__", "")
            if callable(value) and module.startswith("scipy.") and \
                    not module.split(".")[1].startswith("_") and not fname.startswith("_"):
                return ".".join(module.split(".")[:2]), fname
    return None


def _scipy_hint():
    caller = scipy_caller()
    if caller is None:
        return ""
    module, function = caller
    target = f"hessgrad.{module}"
    if "." in function:  # a method (scipy.stats.norm.logpdf runs rv_continuous.logpdf)
        method = function.rsplit(".", 1)[-1]
        example = f", e.g. {target}.norm.{method} for {module}.norm.{method}" \
            if module == "scipy.stats" else ""
        return (f" It happened inside SciPy ({module}: {function}); use the object of the "
                f"same name in {target} (import {target}){example}")
    return (f" It happened inside SciPy ({module}.{function}); use {target}.{function}, its "
            f"differentiable version")


def _refuse(error):
    """Raise ``error``, remembering it: numpy turns an error raised while it converts an
    element (``a[i] = t`` into a numpy array) into its own "setting an array element with a
    sequence"; the recorder or graph around the call then raises ``error`` from that (see
    ``engine.state.reraise_refused``). A conversion inside SciPy names hessgrad.scipy's
    version of the function."""
    hint = _scipy_hint()
    if hint:
        error = type(error)(str(error) + "." + hint)
    THREAD.state.refused = error
    raise error


def is_tensor(x):
    """True when ``x`` is a hessgrad ``Tensor`` (eager, symbolic or a ``Variable``)."""
    return isinstance(x, Tensor)


def shape_of(x):
    """Static shape of a tensor or array-like."""
    return x.shape if isinstance(x, Tensor) else np.shape(x)


def shapes_compatible(a, b):
    """Whether static shapes ``a`` and ``b`` can be the same: None (unknown) matches any shape,
    a None dimension any length."""
    return a is None or b is None or len(a) == len(b) and all(
        x is None or y is None or x == y for x, y in zip(a, b))


def dtype_of(x):
    if isinstance(x, Tensor):
        return x.dtype
    if isinstance(x, (list, tuple)):  # np.result_type would read a list as a dtype spec
        x = np.asarray(x)
    return np.result_type(x)


def is_differentiable_dtype(dtype):
    return dtype is not None and np.dtype(dtype).kind in "fc"


def owned(value):
    """``value`` as a result a numpy caller may modify: gradients can be read-only broadcast
    views inside the engine (the gradient of a sum is its upstream gradient broadcast), and
    those are copied."""
    if type(value) is np.ndarray and not value.flags.writeable:
        return value.copy()
    return value
