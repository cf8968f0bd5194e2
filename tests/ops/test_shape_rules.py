"""Shape rules (``Primitive.shape_rule``) agree with the forward: the shape and dtype a traced
graph assigns to a node are those of the array the op computes, for every dtype a family
promotes differently, 0-d and empty operands, negative axes, keepdims and flattening axes."""

import numpy as np
import pytest

from hessgrad.engine.registry import PRIMITIVES

F32 = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7
I32 = np.arange(6, dtype=np.int32).reshape(2, 3)
B = np.array([[True, False, True], [False, False, True]])
C = np.array([1 + 2j, -0.5j, 3.0])
E = np.zeros((0, 3))
S = np.float64(0.7)

CASES = [  # (primitive, operands, params)
    ("exp", (F32,), {}), ("exp", (I32,), {}), ("exp", (S,), {}), ("exp", (E,), {}),
    ("absolute", (C,), {}), ("sign", (I32,), {}), ("round", (F32,), {"decimals": 2}),
    ("add", (F32, 2.5), {}), ("add", (I32, 2), {}), ("add", (E, I32[0]), {}),
    ("multiply", (F32[0], np.ones((3, 1))), {}), ("power", (I32, 2), {}),
    ("add_n", (F32, F32[0], 1.0), {}), ("isnan", (F32,), {}), ("erf", (C,), {}),
    ("sum", (I32,), {"axis": None, "keepdims": False}), ("sum", (B,), {"axis": 1}),
    ("sum", (F32,), {"axis": (0, -1), "keepdims": True}), ("mean", (I32,), {"axis": -1}),
    ("max", (F32,), {"axis": 1}), ("prod", (S,), {}), ("logsumexp", (F32,), {"axis": 2}),
    ("count_nonzero", (B,), {"axis": 0, "keepdims": True}), ("any", (B,), {}),
    ("nanmean", (F32,), {"axis": (0, 1)}), ("sum", (E,), {"axis": 0}),
    ("argmax", (F32,), {"axis": None, "keepdims": True}), ("argmin", (F32,), {"axis": -2}),
    ("cumsum", (B,), {"axis": 1}), ("cumsum", (F32,), {"axis": None}),
    ("cumprod", (I32,), {"axis": 0}), ("sort", (F32,), {"axis": -1}),
    ("argsort", (F32,), {"axis": 0}),
    ("linear_recurrence", (F32, F32), {"axis": 1}),
    ("reshape", (F32,), {"shape": (4, -1)}), ("reshape", (E,), {"shape": (3, 0)}),
    ("reshape", (S,), {"shape": -1}), ("broadcast_to", (I32[0],), {"shape": (5, 3)}),
    ("sum_to", (F32,), {"shape": (3, 1)}), ("transpose", (F32,), {"axes": (2, 0, 1)}),
    ("transpose", (F32,), {}), ("stack", (I32, I32), {"axis": -1}),
    ("concatenate", (F32, F32[:1]), {"axis": 0}), ("concatenate", (E, I32), {"axis": -2}),
    ("cast", (F32,), {"dtype": np.int16}), ("zeros_like", (B,), {}),
    ("zeros", (), {"shape": (2, 0), "dtype": np.float32}), ("fill", (), {
        "shape": 3, "value": 2, "dtype": np.int8}),
    ("matmul", (F32, F32[0].T), {}), ("matmul", (F32[0, 0], F32[0].T), {}),
    ("matmul", (I32, np.ones(3, np.float32)), {}), ("matmul", (F32[:, None], F32[0].T), {}),
    ("einsum", (F32, np.ones((1, 4))), {"spec": "abc,xc->ba"}),
    ("einsum", (I32, I32), {"spec": "ij,ij->"}),
    ("rot90", (F32,), {"k": 1, "axes": (2, 0)}),
    ("convolve", (F32[0, 0], np.ones(2, np.float32)), {}),
    ("searchsorted", (np.arange(5.0), F32), {}), ("digitize", (F32, np.arange(3.0)), {}),
    ("tie_groups", (np.sort(F32, axis=1),), {"axis": 1}),
    ("lexsort", (I32,), {}),
    ("setitem", (F32, 2), {"index": (0, slice(1, None))}),
    ("setitem", (I32, np.int32(5)), {"index": np.array([1, 1])}), ("setitem", (S, 1.0), {"index": ()}),
]


@pytest.mark.parametrize("name,operands,params", CASES,
                         ids=[f"{c[0]}-{k}" for k, c in enumerate(CASES)])
def test_shape_rule_matches_the_forward(name, operands, params):
    prim = PRIMITIVES[name]
    assert prim.shape_rule is not None, f"{name} has no shape rule"
    shape, dtype = prim.shape_rule(*operands, **params)
    out = np.asarray(prim.forward(*operands, **params))
    assert (shape, np.dtype(dtype)) == (out.shape, out.dtype)
