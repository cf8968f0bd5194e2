"""``hessgrad.hessian``: the full Hessian, dense (batched Hessian-vector products, assembled
from a few colored ones when its sparsity allows) or sparse (``sparse=True``)."""

from .second_order import dense_hessian
from .sparse import sparse_hessian, structure_check


def hessian(f, argnums=0, *, has_aux=False, holomorphic=False, sparse=False,
            detect_sparsity=True, **sparse_options):
    """The full Hessian of scalar ``f``: shape ``arg.shape + arg.shape`` (blocks for a tuple
    ``argnums``: ``H[i][j]`` has shape ``args[i].shape + args[j].shape``). A nested argument
    (dict, list or tuple of arrays) gives JAX's layout: ``H[a][b]`` for its leaves ``a`` and
    ``b``, shape ``a.shape + b.shape`` (``H[i][a][j][b]`` for a tuple ``argnums``). For a
    non-scalar ``f``, as in JAX, ``jacfwd(jacrev(f))``: ``out.shape`` comes first. As in
    JAX, ``has_aux``: ``f`` returns ``(value, aux)`` and the result is ``(hessian, aux)``
    (``f`` runs once more for ``aux``); ``holomorphic`` states complex inputs (checked):
    as in JAX, complex inputs need it (without it only the real axes' second derivatives
    would be seen; ``hvp`` takes complex directions).

    ``sparse=True`` returns :func:`hessgrad.sparse_hessian` ``(f, **sparse_options)``
    instead: a ``scipy.sparse.csr_matrix`` of shape ``(x.size, x.size)`` w.r.t. the first
    argument, from a few batched HVPs (sparsity detection and coloring).

    Built from a traced Hessian-vector product (forward-over-reverse, traced once per argument
    signature) run on batches of basis vectors at once: the forward pass and gradient run
    once per call, the tangent part as matrix-matrix products. With ``detect_sparsity``
    (default) and one array argument, the Hessian's sparsity pattern is read off the traced
    graph once per signature (a cheap walk that gives up early on dense problems); when a
    coloring of it needs at most half as many products as columns (banded, block-diagonal,
    partially separable objectives), only those products run and the dense array is
    assembled from them: the same numbers, ``n / colors`` times less work (in a trace too,
    as in ``hg.function(hg.hessian(f))``, from 64 elements on). With tensor arguments or in a
    trace the products run as one batch (``vmap`` of the HVP), so the result nests and a
    traced Hessian stays one product big. ``hessian(f)`` of
    the same ``f`` (one of the 16 most recent) reuses the trace and structure while what
    ``f`` reads from outside its arguments is unchanged: ``f`` runs once eagerly at each call
    to check that (see ``hessgrad.tracing.capture``; pass a ``hessgrad.function`` to skip it).

    >>> import hessgrad as hg
    >>> import hessgrad.numpy as hnp
    >>> hg.hessian(lambda x: hnp.sum(x ** 3))(np.array([1.0, 2.0]))
    array([[ 6.,  0.],
           [ 0., 12.]])
    """
    if not callable(f):
        raise TypeError(f"hessian: f must be callable, got {type(f).__name__}")
    if sparse:
        if has_aux or holomorphic:
            raise ValueError("hessian: sparse=True supports neither has_aux nor holomorphic")
        if argnums != 0:
            raise ValueError(f"hessian: sparse=True supports argnums=0 only, got {argnums!r}")
        return sparse_hessian(f, **sparse_options)
    if sparse_options:
        raise TypeError(f"hessian: unexpected keyword arguments {sorted(sparse_options)} "
                        "(they are options of sparse=True)")
    return dense_hessian(f, argnums, has_aux=has_aux, holomorphic=holomorphic,
                         structure=structure_check if detect_sparsity else None)
