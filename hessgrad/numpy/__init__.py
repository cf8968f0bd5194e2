"""``import hessgrad.numpy as np``: numpy's API over hessgrad primitives, differentiable to any
order in eager mode and inside ``hessgrad.function``.

Each family lives in its own module; this namespace gathers them. ``linalg`` and ``fft``
are submodules as in numpy; ``random`` is numpy.random itself (random numbers are constants
for differentiation), as in autograd.numpy.
"""

import sys as _sys

import numpy as _np

# numpy's version: this namespace follows the installed numpy's API and semantics (the
# primitives run numpy), so scripts that check ``np.__version__`` keep working
__version__ = _np.__version__

from ._constants import *  # noqa: F401,F403
from ._math import *  # noqa: F401,F403
from ._reductions import *  # noqa: F401,F403
from ._shapes import *  # noqa: F401,F403
from ._constructors import *  # noqa: F401,F403
from ._products import *  # noqa: F401,F403
from ._nan_functions import *  # noqa: F401,F403
from ._calculus import *  # noqa: F401,F403
from ._statistics import *  # noqa: F401,F403
from ._comparisons import *  # noqa: F401,F403
from ._polynomials import *  # noqa: F401,F403
from ._floating_point import *  # noqa: F401,F403
from ._selection import *  # noqa: F401,F403
from ._array_manipulation import *  # noqa: F401,F403
from ._functional import *  # noqa: F401,F403
from ._updates import *  # noqa: F401,F403
from ._special import *  # noqa: F401,F403
from ._signal_processing import *  # noqa: F401,F403
from ._integer_math import *  # noqa: F401,F403
from ._sets import *  # noqa: F401,F403
from ._type_helpers import *  # noqa: F401,F403
from ._histograms import *  # noqa: F401,F403
from ._indices import *  # noqa: F401,F403
from ._vectorize import *  # noqa: F401,F403
from . import linalg  # noqa: F401
from . import fft  # noqa: F401
from . import _interop  # noqa: F401 - Tensor methods and the numpy dispatch protocols
from numpy import random  # noqa: E402,F401

# ``import hessgrad.numpy.random as npr`` works as ``import autograd.numpy.random as npr`` does
_sys.modules[__name__ + ".random"] = random
