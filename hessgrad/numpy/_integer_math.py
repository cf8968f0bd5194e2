"""Integer and bitwise ufuncs: ``gcd``, ``lcm``, ``bitwise_and/or/xor``, ``invert`` (alias
``bitwise_not``, ``bitwise_invert``), ``left_shift`` / ``right_shift`` (aliases
``bitwise_left_shift`` / ``bitwise_right_shift``), ``bitwise_count``. They take integer or
boolean arrays and tensors (eager or traced) and return constants for differentiation.
"""

import numpy as _np

from ..engine.tensor import dtype_of as _dtype_of
from ..ops import integer as _int
from ._math import _ufunc


def _integral(name, op, nin):
    """``op`` with numpy's refusal of float and complex inputs, naming the function."""
    def checked(*args):
        for k, a in enumerate(args):
            dtype = _np.dtype(_dtype_of(a))
            if dtype.kind not in "biu":
                raise TypeError(f"hessgrad.numpy.{name}: input {k} must be integer or boolean, "
                                f"got dtype {dtype}")
        return op(*args)
    return checked


# name: (op, inputs, summary, (example call, its printed result))
_TABLE = {
    "gcd": (_int.gcd, 2, "Greatest common divisor of |x1| and |x2|",
            ("gcd([12, 20], 8)", "[4, 4]")),
    "lcm": (_int.lcm, 2, "Lowest common multiple of |x1| and |x2|",
            ("lcm([4, 6], 10)", "[20, 30]")),
    "bitwise_and": (_int.bitwise_and, 2, "Bitwise AND x1 & x2",
                    ("bitwise_and([12, 5], 6)", "[4, 4]")),
    "bitwise_or": (_int.bitwise_or, 2, "Bitwise OR x1 | x2", ("bitwise_or([12, 5], 6)", "[14, 7]")),
    "bitwise_xor": (_int.bitwise_xor, 2, "Bitwise XOR x1 ^ x2",
                    ("bitwise_xor([12, 5], 6)", "[10, 3]")),
    "invert": (_int.invert, 1, "Bitwise NOT ~x (logical not for booleans)",
               ("invert([0, 5])", "[-1, -6]")),
    "left_shift": (_int.left_shift, 2, "Shift the bits of x1 left by x2",
                   ("left_shift([1, 3], 2)", "[4, 12]")),
    "right_shift": (_int.right_shift, 2, "Shift the bits of x1 right by x2",
                    ("right_shift([16, 7], 2)", "[4, 1]")),
    "bitwise_count": (_int.bitwise_count, 1, "Number of 1-bits in |x|",
                      ("bitwise_count([7, -8])", "[3, 1]")),
}

for _name, (_op, _nin, _summary, _example) in _TABLE.items():
    globals()[_name] = _ufunc(_name, _integral(_name, _op, _nin), _nin, _summary, _example)
del _name, _op, _nin, _summary, _example

# numpy's aliases (numpy 2's array-API names)
bitwise_not = bitwise_invert = invert  # noqa: F821
bitwise_left_shift, bitwise_right_shift = left_shift, right_shift  # noqa: F821

__all__ = sorted(list(_TABLE) + ["bitwise_not", "bitwise_invert", "bitwise_left_shift",
                                 "bitwise_right_shift"])
