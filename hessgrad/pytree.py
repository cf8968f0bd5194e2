"""Pytrees, as JAX names them: nested dicts, lists, tuples and namedtuples of arrays.

``tree_flatten``, ``tree_unflatten``, ``tree_leaves``, ``tree_map``, ``tree_structure`` and
``ravel_pytree`` (one flat vector for a whole tree, and the function that rebuilds the
tree from such a vector) follow ``jax.tree_util`` and ``jax.flatten_util``:

* dicts are flattened in sorted-key order (the order of :mod:`hessgrad.engine.nest`, which
  every transform uses: a gradient's leaves line up with the parameters'), lists, tuples and
  namedtuples in their order;
* ``None`` is an empty subtree (no leaf), as in JAX;
* everything else is a leaf: numpy arrays and scalars, Python numbers, hessgrad Tensors.

``ravel_pytree`` works on Tensors too (inside ``grad``, ``hessian``, a trace): the flat vector
and the rebuilt leaves are then Tensors, so ``f(unravel(flat))`` can be differentiated.

>>> import hessgrad as hg
>>> flat, unravel = hg.ravel_pytree({"w": np.ones((2, 2)), "b": np.zeros(2)})
>>> flat
array([0., 0., 1., 1., 1., 1.])
>>> unravel(np.arange(6.0))["w"]
array([[2., 3.],
       [4., 5.]])
"""

import numpy as np

from .engine.nest import pack_as, structure_key
from .engine.tensor import Tensor, Written, current
from .ops.core import convert_to_tensor
from .ops.shape import concatenate, reshape_to

_LEAF = object()  # a leaf's place in a tree's skeleton


def _flatten(tree, is_leaf, leaves, skeleton_leaves):
    """Append ``tree``'s leaves (and, per nest leaf position, _LEAF or None)."""
    if tree is None:
        skeleton_leaves.append(None)
    elif is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        skeleton_leaves.append(_LEAF)
    elif isinstance(tree, (list, tuple)):
        for x in tree:
            _flatten(x, is_leaf, leaves, skeleton_leaves)
    elif isinstance(tree, dict):
        for k in sorted(tree):
            _flatten(tree[k], is_leaf, leaves, skeleton_leaves)
    else:
        leaves.append(current(tree) if type(tree) is Written else tree)
        skeleton_leaves.append(_LEAF)


def _skeleton(tree, is_leaf):
    """``tree`` with its subtrees chosen by ``is_leaf`` replaced by one placeholder each (so
    that :func:`hessgrad.engine.nest.pack_as` sees them as leaves)."""
    if is_leaf is not None and tree is not None and is_leaf(tree):
        return _LEAF
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return type(tree)(*[_skeleton(x, is_leaf) for x in tree])
    if isinstance(tree, (list, tuple)):
        return type(tree)([_skeleton(x, is_leaf) for x in tree])
    if isinstance(tree, dict):
        return type(tree)((k, _skeleton(tree[k], is_leaf)) for k in tree)
    return tree


class PyTreeDef:
    """The structure of a pytree without its leaves (what ``tree_flatten`` returns beside
    them): ``num_leaves``, ``unflatten(leaves)``; equal for trees that flatten alike."""

    def __init__(self, skeleton, slots):
        self._skeleton = skeleton   # the tree, as nest.pack_as rebuilds it
        self._slots = slots         # per nest leaf: _LEAF (a leaf of the tree) or None
        self.num_leaves = sum(s is _LEAF for s in slots)
        self._key = structure_key(skeleton, slots) + repr([s is _LEAF for s in slots])

    def unflatten(self, leaves):
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"tree_unflatten: the structure has {self.num_leaves} leaves, "
                             f"got {len(leaves)}")
        it = iter(leaves)
        return pack_as(self._skeleton, [next(it) if s is _LEAF else None
                                        for s in self._slots])

    def __eq__(self, other):
        return isinstance(other, PyTreeDef) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        stars = pack_as(self._skeleton, ["*" if s is _LEAF else None for s in self._slots])
        return f"PyTreeDef({stars!r})"


def tree_flatten(tree, is_leaf=None):
    """``(leaves, treedef)``: the leaves of ``tree`` in order (dicts by sorted key, ``None``
    holds none) and its structure, which :func:`tree_unflatten` rebuilds it from."""
    leaves, slots = [], []
    _flatten(tree, is_leaf, leaves, slots)
    return leaves, PyTreeDef(_skeleton(tree, is_leaf), slots)


def tree_unflatten(treedef, leaves):
    """The tree of structure ``treedef`` with ``leaves`` in :func:`tree_flatten` order."""
    return treedef.unflatten(leaves)


def tree_leaves(tree, is_leaf=None):
    """The leaves of ``tree`` in :func:`tree_flatten` order."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    """The :class:`PyTreeDef` of ``tree``."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f, tree, *rest, is_leaf=None):
    """A tree like ``tree`` with ``f(leaf, *corresponding leaves of rest)`` at each leaf; the
    trees in ``rest`` have ``tree``'s structure (or, as in JAX, a leaf of ``tree`` may be a
    whole subtree in them, passed to ``f`` as it is)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = [_leaves_like(treedef, tree, r, is_leaf) for r in rest]
    return treedef.unflatten(f(*xs) for xs in zip(leaves, *others))


def _leaves_like(treedef, tree, other, is_leaf):
    leaves, other_def = tree_flatten(other, is_leaf)
    if other_def != treedef:
        raise ValueError(f"tree_map: a tree has structure {other_def}, expected {treedef} "
                         "(that of the first tree)")
    return leaves


def ravel_pytree(tree):
    """``(flat, unravel)``: the leaves of ``tree`` raveled into one 1-D vector (dtype: their
    common type; float64 for an empty tree) and the function that rebuilds a tree of the same
    structure, shapes and dtypes from such a vector (``jax.flatten_util.ravel_pytree``).

    With Tensor leaves (inside a transform or a trace) ``flat`` is a Tensor; ``unravel``
    accepts numpy vectors and Tensors, slicing and reshaping with differentiable ops."""
    leaves, treedef = tree_flatten(tree)
    shapes = [tuple(np.shape(x)) for x in leaves]
    dtypes = [np.result_type(x.dtype if isinstance(x, Tensor) else x) for x in leaves]
    dtype = np.result_type(*dtypes) if dtypes else np.dtype(np.float64)
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    offsets = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)]).tolist()
    if any(isinstance(x, Tensor) for x in leaves):
        parts = [reshape_to(convert_to_tensor(x, dtype=dtype) if not isinstance(x, Tensor)
                            or x.dtype != dtype else x, (-1,)) for x in leaves]
        flat = concatenate(*parts, axis=0) if len(parts) > 1 else parts[0]
    elif leaves:
        flat = np.concatenate([np.asarray(x, dtype=dtype).reshape(-1) for x in leaves])
    else:
        flat = np.zeros(0, dtype)
    return flat, _Unravel(treedef, shapes, dtypes, offsets, dtype)


class _Unravel:
    """A flat vector -> the tree (see :func:`ravel_pytree`); ``size``: the vector's length."""

    def __init__(self, treedef, shapes, dtypes, offsets, dtype):
        self.treedef, self.shapes, self.dtypes = treedef, shapes, dtypes
        self.offsets, self.dtype = offsets, dtype
        self.size = offsets[-1]

    def __call__(self, flat):
        if np.ndim(flat) != 1 or np.shape(flat)[0] != self.size:
            raise ValueError(f"unravel: expected a vector of {self.size} entries, got shape "
                             f"{np.shape(flat)}")
        tensor = isinstance(flat, Tensor)
        if not tensor:
            flat = np.asarray(flat)
        leaves = []
        for shape, dtype, lo, hi in zip(self.shapes, self.dtypes, self.offsets,
                                        self.offsets[1:]):
            if tensor:
                leaf = reshape_to(flat[lo:hi], shape)
                if leaf.dtype != dtype:
                    leaf = convert_to_tensor(leaf, dtype=dtype)
            else:
                leaf = flat[lo:hi].reshape(shape)
                if leaf.dtype != dtype:
                    leaf = leaf.real.astype(dtype) if dtype.kind != "c" else leaf.astype(dtype)
            leaves.append(leaf)
        return self.treedef.unflatten(leaves)

    def __repr__(self):
        return f"<unravel to {self.treedef!r}, {self.size} entries>"
