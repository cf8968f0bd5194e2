"""Integer and bitwise elementwise primitives: gcd, lcm, the bitwise logic and shifts,
bit counts. Their results are integers (or booleans): constants for differentiation."""

import numpy as np

from .families import elementwise
from .elementwise import _nondiff_binary as _binary

gcd = _binary("gcd", np.gcd)
lcm = _binary("lcm", np.lcm)
bitwise_and = _binary("bitwise_and", np.bitwise_and)
bitwise_or = _binary("bitwise_or", np.bitwise_or)
bitwise_xor = _binary("bitwise_xor", np.bitwise_xor)
left_shift = _binary("left_shift", np.left_shift)
right_shift = _binary("right_shift", np.right_shift)
invert = elementwise("invert", np.invert, nondiff=True)
bitwise_count = elementwise("bitwise_count", np.bitwise_count, nondiff=True)

__all__ = ["gcd", "lcm", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift",
           "right_shift", "invert", "bitwise_count"]
