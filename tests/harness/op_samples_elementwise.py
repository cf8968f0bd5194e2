"""Samples of elementwise functions: unary by domain (a 2x3 array, 0-d, size 0, a length-1
axis), binary with broadcasting, 0-d and size-0 operands, and their tuple-valued relatives."""

import numpy as np

from op_arrays import (BIG, BOOLS, CPLX, DIVISOR, E, FRAC, INTS, NATS, POS, POS0, S0, UNIT,
                       X, Y)
from op_sample import sample


def unary(names, main, zero_d=S0, **options):
    """Each name on ``main``, a 0-d value, a size-0 and a size-1 array of the same domain
    (hessgrad's top-level ``hg.*`` ops, the primitives under the numpy names: ``main`` and
    0-d only)."""
    first = np.ravel(main)[:1]
    out = []
    for name in names.split():
        out += [sample(name, main, **options), sample(name, zero_d, **options)]
        if not name.startswith("hg."):
            out += [sample(name, E, **options), sample(name, first.reshape(1, 1), **options)]
    return out


TAN = X * 0.8  # away from pi/2

SAMPLES = []
# smooth everywhere
SAMPLES += unary("sin cos arctan atan sinh cosh tanh exp exp2 expm1 negative positive square "
                 "deg2rad rad2deg degrees radians sinc i0 conj conjugate real imag "
                 "nan_to_num real_if_close hg.erf hg.softplus hg.sigmoid hg.sin hg.cos hg.exp "
                 "hg.expm1 hg.tanh hg.negative hg.square hg.identity hg.ones_like "
                 "hg.zeros_like", X)
SAMPLES += unary("hg.stop_gradient", X, derivatives=False)  # its gradient is 0 by design
SAMPLES += unary("tan", TAN)
# a kink or pole at 0 only: samples have no zero
SAMPLES += unary("cbrt reciprocal abs absolute fabs sign angle hg.abs hg.sign", X)
# positive domain
SAMPLES += unary("log log2 log10 sqrt hg.log hg.sqrt", POS, POS0)
SAMPLES += unary("log1p hg.log1p arcsin arccos arctanh asin acos atanh arcsinh asinh", UNIT)
SAMPLES += unary("arccosh acosh", BIG, np.array(1.7))
# piecewise constant: samples away from integers and halves
SAMPLES += unary("floor ceil rint trunc fix round around", FRAC)
SAMPLES += [sample("round", FRAC, 1), sample("around", FRAC * 3, decimals=-1),
            sample("modf", FRAC), sample("modf", S0), sample("frexp", FRAC),
            sample("frexp", E)]
# boolean-valued
SAMPLES += unary("signbit isfinite isnan isinf isneginf isposinf isreal iscomplex "
                 "logical_not", X)
SAMPLES += [sample("spacing", X, derivatives=False), sample("spacing", S0, derivatives=False),
            sample("isreal", CPLX), sample("iscomplex", CPLX), sample("angle", CPLX),
            sample("real", CPLX), sample("imag", CPLX), sample("conj", CPLX),
            sample("angle", X, deg=True), sample("nan_to_num", np.array([0.5, np.inf, -np.inf]),
                                                   posinf=2.0, neginf=-3.0)]


def binary(names, a, b, **options):
    """Each name with broadcasting, a 0-d operand, size-0 operands and a size-1 one (the
    ``hg.*`` primitives: broadcasting and 0-d only)."""
    out = []
    for name in names.split():
        out += [sample(name, a, b, **options),
                sample(name, np.asarray(np.ravel(a)[1]), b, **options)]
        if not name.startswith("hg."):
            out += [sample(name, a[:0], b, **options), sample(name, a, b[:1], **options)]
    return out


SAMPLES += binary("add subtract multiply arctan2 atan2 hypot logaddexp logaddexp2 maximum "
                  "minimum fmax fmin hg.add hg.subtract hg.multiply hg.maximum hg.minimum "
                  "hg.logaddexp", X, Y)
SAMPLES += binary("divide true_divide copysign", X, DIVISOR)
SAMPLES += binary("hg.divide", X, DIVISOR)
SAMPLES += binary("power pow float_power hg.power", POS, Y)
SAMPLES += binary("fmod remainder mod floor_divide divmod", FRAC, DIVISOR)
SAMPLES += binary("heaviside", X, Y)
SAMPLES += binary("less less_equal greater greater_equal equal not_equal logical_and "
                  "logical_or logical_xor isclose hg.less hg.less_equal hg.greater "
                  "hg.greater_equal hg.equal hg.not_equal", X, Y)
SAMPLES += [sample("ldexp", X, np.array([1, -2, 3])), sample("ldexp", S0, np.array(2)),
            sample("nextafter", X, Y, derivatives=False),
            sample("power", X, 3.0), sample("power", X, 2), sample("float_power", POS, 0.5),
            # Python bools: eager only
            sample("allclose", X, X + 1e-9, traceable=False),
            sample("allclose", X, Y, traceable=False), sample("array_equal", X, X, traceable=False),
            sample("array_equiv", X, X[:1], traceable=False),
            sample("isclose", X, X + 1e-12, rtol=0.0, atol=1e-10),
            sample("equal", X, X.copy())]
# integer functions (values only)
SAMPLES += [sample(name, INTS, np.array([2, 3, 1])) for name in
            "gcd lcm bitwise_and bitwise_or bitwise_xor".split()]
SAMPLES += [sample(name, NATS, np.array([1, 2, 0, 3])) for name in
            "left_shift right_shift bitwise_left_shift bitwise_right_shift".split()]
SAMPLES += [sample(name, arg) for name in
            "invert bitwise_not bitwise_invert bitwise_count".split() for arg in (INTS, BOOLS)]
SAMPLES += [sample("logical_and", BOOLS, BOOLS[::-1]), sample("gcd", NATS, np.array(6)),
            sample("clip", X, -0.5, 0.9), sample("clip", X, Y - 0.05, None),
            sample("clip", S0, 0.0, 1.0), sample("clip", E, 0.0, 1.0),
            sample("where", X > 0, X, Y), sample("where", BOOLS, X, 0.0),
            sample("hg.where", X > 0, X, Y), sample("where", np.array(True), S0, X)]
