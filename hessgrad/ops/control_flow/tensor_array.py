"""``TensorArray``: a list of same-shaped tensors written and read by index (TensorFlow's).

Eagerly it is a Python list of tensors (``stack()`` joins them with the ``stack`` op). In graph
mode it is one buffer tensor (see :mod:`.buffers`) that ``while_loop`` and ``cond`` carry as
its *flow* tensors (the buffer, and its size when ``dynamic_size``).
"""

import numpy as np

from ...engine.graph import get_default_graph
from ...engine.nest import flatten, pack_as
from ...engine.tensor import Tensor
from ..core import constant, convert_to_tensor, reshape, stack, unstack, zeros
from ..elementwise import add, maximum
from ..shape import concatenate
from .blocks import compatible, concrete_int
from .buffers import tensor_array_buffer, tensor_array_read, tensor_array_write


class TensorArray:
    """A list of same-shaped tensors written and read by index, usable in loops (TensorFlow's
    ``tf.TensorArray``). ``write``, ``scatter`` and ``unstack`` return the new TensorArray;
    use it instead of the old one.

    Eagerly it is a Python list of tensors (differentiable through ``stack``). In graph mode
    it is one buffer tensor written in place; see the module docstring for the rules.

    Args:
        dtype: element dtype.
        size: number of elements (an int); 0 by default.
        dynamic_size: allow writes past ``size`` (the array grows).
        clear_after_read: accepted for compatibility (reads never clear).
        element_shape: the shape of each element; needed in graph mode before the first
            write when the array enters a ``while_loop``.

    >>> import hessgrad as hg
    >>> ta = hg.TensorArray("float64", size=3)
    >>> for i in range(3):
    ...     ta = ta.write(i, hg.constant([i, i + 0.5]))
    >>> ta.stack().numpy()
    array([[0. , 0.5],
           [1. , 1.5],
           [2. , 2.5]])
    """

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        del clear_after_read, tensor_array_name, handle, flow, colocate_with_first_write_call
        del name
        self._dtype = np.dtype(dtype)
        self._dynamic = bool(dynamic_size)
        self._infer_shape = infer_shape
        self._element_shape = None if element_shape is None else tuple(
            None if d is None else int(d) for d in element_shape)
        n = concrete_int(size if size is not None else 0, "TensorArray: size")
        if n < 0:
            raise ValueError(f"TensorArray: size must be >= 0, got {n}")
        self._graph = get_default_graph()
        self._items = None   # eager: list of tensors (None where unwritten)
        self._buf = None     # graph: the buffer tensor
        self._n = n          # graph: static size (int) or, when dynamic, a size tensor
        self._size0 = n
        if self._graph is None:
            self._items = [None] * n
        else:
            if self._dynamic:
                self._n = constant(n, dtype=np.int64)
            if self._full_shape() is not None:
                self._buf = tensor_array_buffer(shape=(n,) + self._element_shape,
                                                dtype=self._dtype)

    def _full_shape(self):
        es = self._element_shape
        return None if es is None or None in es else es

    def _copy(self, **changes):
        new = object.__new__(TensorArray)
        new.__dict__.update(self.__dict__)
        new.__dict__.update(changes)
        return new

    # --- static facts --------------------------------------------------------------------
    @property
    def dtype(self):
        return self._dtype

    @property
    def element_shape(self):
        return self._element_shape

    @property
    def dynamic_size(self):
        return self._dynamic

    def __repr__(self):
        mode = "eager" if self._graph is None else "graph"
        return f"<hessgrad.TensorArray {mode} dtype={self._dtype} " \
               f"element_shape={self._element_shape}>"

    # --- loop plumbing (graph mode) ---------------------------------------------------------
    def _flows(self, what):
        if self._graph is None:
            raise TypeError(f"{what}: an eager TensorArray cannot enter a graph-mode loop; "
                            "create it inside the graph")
        if self._buf is None:
            raise ValueError(f"{what}: TensorArray has no element_shape yet; pass a fully "
                             "known element_shape (or write once) before the loop")
        return [self._buf, self._n] if self._dynamic else [self._buf]

    def _invariants(self):
        shape = tuple(self._buf.shape)
        if self._dynamic:  # the buffer grows: its length is not a loop invariant
            return [(None,) + shape[1:], ()]
        return [shape]

    def _with_flows(self, flows):
        if self._dynamic:
            return self._copy(_buf=flows[0], _n=flows[1])
        return self._copy(_buf=flows[0])

    def _check_value(self, value, lead, what):
        value = convert_to_tensor(value, dtype=self._dtype)
        shape = value.shape
        if shape is not None:
            shape = tuple(shape)[lead:]
            es = self._element_shape
            if es is not None and self._infer_shape and not compatible(shape, es):
                raise ValueError(f"TensorArray.{what}: value of element shape {shape} is not "
                                 f"compatible with the array's element shape {es}")
        return value, shape

    # --- API -----------------------------------------------------------------------------
    def write(self, index, value, name=None):
        """The TensorArray with ``value`` written at ``index``."""
        del name
        value, shape = self._check_value(value, 0, "write")
        if self._graph is None:
            return self._eager_put([int(index)], [value], shape, "write")
        return self._graph_write(index, value, shape, 0)

    def _eager_put(self, indices, values, shape, what):
        """The eager TensorArray with ``values`` at ``indices`` (one copy of the list)."""
        items = list(self._items)
        for i, value in zip(indices, values):
            if i < 0 or (i >= len(items) and not self._dynamic):
                raise IndexError(f"TensorArray.{what}: index {i} is out of range for a "
                                 f"TensorArray of size {len(items)}")
            items.extend([None] * (i + 1 - len(items)))
            items[i] = value
        es = self._element_shape if self._element_shape is not None else shape
        return self._copy(_items=items, _element_shape=es)

    def _graph_write(self, index, value, shape, lead):
        new = self
        if new._buf is None:
            if shape is None or None in shape:
                raise ValueError("TensorArray.write: the element shape must be known in graph "
                                 "mode; pass element_shape")
            new = self._copy(_element_shape=shape)
            new._buf = tensor_array_buffer(shape=(self._initial_rows(),) + shape,
                                           dtype=self._dtype)
        index = convert_to_tensor(index) if not isinstance(index, (int, np.integer)) else index
        buf = tensor_array_write(new._buf, index, value, dynamic=self._dynamic)
        n = new._n
        if self._dynamic:
            top = add(reduce_max_int(index), 1)
            n = maximum(n, top)
        return new._copy(_buf=buf, _n=n)

    def _initial_rows(self):
        return self._size0

    def read(self, index, name=None):
        """The element at ``index``."""
        del name
        if self._graph is None:
            i = int(index)
            if not 0 <= i < len(self._items):
                raise IndexError(f"TensorArray.read: index {i} is out of range for a "
                                 f"TensorArray of size {len(self._items)}")
            return self._eager_item(i, "read")
        self._require_buffer("read")
        return tensor_array_read(self._buf, index)

    def _eager_item(self, i, what):
        item = self._items[i]
        if item is None:
            if self._full_shape() is None:
                raise ValueError(f"TensorArray.{what}: element {i} was never written and the "
                                 "element shape is unknown")
            return zeros(shape=self._full_shape(), dtype=self._dtype)
        return item

    def _require_buffer(self, what):
        if self._buf is None:
            raise ValueError(f"TensorArray.{what}: nothing was written and element_shape is "
                             "unknown")

    def stack(self, name=None):
        """All elements stacked along a new first axis."""
        del name
        if self._graph is None:
            if not self._items:
                es = self._full_shape()
                return zeros(shape=(0,) + (es or ()), dtype=self._dtype)
            return stack(*[self._eager_item(i, "stack") for i in range(len(self._items))],
                         axis=0)
        self._require_buffer("stack")
        return tensor_array_read(self._buf, self._n, prefix=True)

    def gather(self, indices, name=None):
        """The elements at ``indices``, stacked."""
        del name
        if self._graph is None:
            idx = np.asarray(indices.numpy() if isinstance(indices, Tensor) else indices)
            parts = [self.read(int(i)) for i in idx.reshape(-1)]
            if not parts:
                return zeros(shape=(0,) + (self._full_shape() or ()), dtype=self._dtype)
            return stack(*parts, axis=0)
        self._require_buffer("gather")
        return tensor_array_read(self._buf, convert_to_tensor(indices))

    def scatter(self, indices, value, name=None):
        """The TensorArray with ``value[k]`` written at ``indices[k]``."""
        del name
        value, shape = self._check_value(value, 1, "scatter")
        if self._graph is None:
            idx = np.asarray(indices.numpy() if isinstance(indices, Tensor) else indices)
            idx = idx.reshape(-1)
            if value.shape[0] != idx.size:
                raise ValueError(f"TensorArray.scatter: {idx.size} indices but value has "
                                 f"shape {value.shape}")
            # One unstack op, not a slice per row: its gradient is one stack of the rows'
            # gradients, where a slice per row made a full-size gradient each (O(rows^2)).
            rows = unstack(value, axis=0) if idx.size else ()
            return self._eager_put(idx.tolist(), rows, shape, "scatter")
        return self._graph_write(convert_to_tensor(np.asarray(indices, dtype=np.int64)
                                                   if not isinstance(indices, Tensor)
                                                   else indices), value, shape, 1)

    def unstack(self, value, name=None):
        """The TensorArray holding the rows of ``value`` at 0, 1, ..."""
        del name
        value = convert_to_tensor(value, dtype=self._dtype)
        if value.shape is None or value.shape[0] is None:
            raise ValueError("TensorArray.unstack: the first dimension of value must be known")
        return self.scatter(np.arange(value.shape[0]), value)

    def size(self, name=None):
        """The number of elements (an int32 tensor)."""
        del name
        if self._graph is None:
            return constant(len(self._items), dtype=np.int32)
        if self._dynamic:
            return self._n
        return constant(self._n, dtype=np.int32)

    def concat(self, name=None):
        """All elements concatenated along their first axis."""
        del name
        if self._graph is None:
            items = [self._eager_item(i, "concat") for i in range(len(self._items))]
            if not items:
                return zeros(shape=(0,) + (self._full_shape() or ())[1:], dtype=self._dtype)
            return concatenate(*items, axis=0)
        stacked = self.stack()
        es = self._element_shape
        return reshape(stacked, shape=(-1,) + tuple(es[1:]))

    def identity(self):
        return self

    def close(self, name=None):
        return None


def reduce_max_int(index):
    """The largest of an integer index (scalar or 1-D) -- for a dynamic TensorArray's size."""
    from ..reduction import max as reduce_max
    if isinstance(index, Tensor):
        return reduce_max(index) if index.shape != () else index
    return int(np.max(index))


# --- TensorArrays among loop variables and branch results ---------------------------------
def leaf_in_loop(x):
    return x if isinstance(x, TensorArray) else convert_to_tensor(x)


def to_flat(leaves, what):
    flat, kinds = [], []
    for leaf in leaves:
        if isinstance(leaf, TensorArray):
            flat.extend(leaf._flows(what))
            kinds.append(leaf)
        else:
            flat.append(leaf)
            kinds.append(None)
    return flat, kinds


def from_flat(flat, kinds):
    leaves, k = [], 0
    for kind in kinds:
        if kind is None:
            leaves.append(flat[k])
            k += 1
        else:
            n = len(kind._flows("while_loop"))
            leaves.append(kind._with_flows(flat[k:k + n]))
            k += n
    return leaves


def describe(structure):
    n = len(flatten(structure))
    kinds = ["TensorArray" if isinstance(x, TensorArray) else "Tensor" for x in flatten(structure)]
    return repr(pack_as(structure, kinds)) if n else repr(structure)
