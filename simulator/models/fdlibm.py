"""`Math.exp` as V8 computes it: a Python transcription of fdlibm's `e_exp.c` as V8 carries it
(`src/base/ieee754.cc`, `ieee754::exp`, with its own `exp(1) = Math.E`), so that a model
compiled to Python gets V8's very doubles rather than the platform libm's, which differ in the
last bit for about one argument in ten.

(V8's `Math.pow` is not fdlibm's: with its default `--use-std-math-pow` it calls the C
library's `pow` after ECMAScript's special cases, see `js_compiler.js_pow`; V8's `Math.log`
is LLVM libc's, not transcribed here, so the compiler refuses it.)

The algorithms are Sun Microsystems' fdlibm, under this notice:

    Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved.

    Developed at SunSoft, a Sun Microsystems, Inc. business.
    Permission to use, copy, modify, and distribute this
    software is freely granted, provided that this notice
    is preserved.

Python's float operations are IEEE doubles rounded to nearest, as C's are without fused
multiply-add (V8's x64 build does not contract these into FMA: the property tests would see
it); each C operation is one Python operation here, in the same order, and the 32-bit words of
a double are read and written through `struct`. The property tests
(tests/simulator/models/test_js_compiler.py) compare results bit for bit with V8's.
"""

from __future__ import annotations

import math
import struct

_D = struct.Struct("<d")
_Q = struct.Struct("<Q")


def _words(x: float) -> tuple[int, int]:
    """The high word (as C's signed int32) and the low word (unsigned) of x."""
    bits = _Q.unpack(_D.pack(x))[0]
    high = bits >> 32
    return (high - 0x100000000 if high & 0x80000000 else high), bits & 0xFFFFFFFF


def _from_words(high: int, low: int) -> float:
    return _D.unpack(_Q.pack(((high & 0xFFFFFFFF) << 32) | (low & 0xFFFFFFFF)))[0]


_EXP_HALF = (0.5, -0.5)
_EXP_O_THRESHOLD = 7.09782712893383973096e02
_EXP_U_THRESHOLD = -7.45133219101941108420e02
_LN2_HI = (6.93147180369123816490e-01, -6.93147180369123816490e-01)
_LN2_LO = (1.90821492927058770002e-10, -1.90821492927058770002e-10)
_INVLN2 = 1.44269504088896338700e00
_P1 = 1.66666666666666019037e-01
_P2 = -2.77777777770155933842e-03
_P3 = 6.61375632143793436117e-05
_P4 = -1.65339022054652515390e-06
_P5 = 4.13813679705723846039e-08
_E = 2.718281828459045
_TWOM1000 = 9.33263618503218878990e-302
_TWO1023 = 8.988465674311579539e307


def exp(x: float) -> float:
    """fdlibm's exp with V8's exp(1) = Math.E."""
    hx = _words(x)[0]
    xsb = (hx >> 31) & 1
    hx &= 0x7FFFFFFF
    k = 0
    hi = lo = 0.0
    if hx >= 0x40862E42:  # |x| >= 709.78...
        if hx >= 0x7FF00000:
            if x != x:
                return x + x
            return x if xsb == 0 else 0.0
        if x > _EXP_O_THRESHOLD:
            return math.inf
        if x < _EXP_U_THRESHOLD:
            return 0.0
    if hx > 0x3FD62E42:  # |x| > 0.5 ln2
        if hx < 0x3FF0A2B2:  # and |x| < 1.5 ln2
            if x == 1.0:
                return _E
            hi = x - _LN2_HI[xsb]
            lo = _LN2_LO[xsb]
            k = 1 - xsb - xsb
        else:
            k = int(_INVLN2 * x + _EXP_HALF[xsb])  # C's conversion truncates
            t = float(k)
            hi = x - t * _LN2_HI[0]
            lo = t * _LN2_LO[0]
        x = hi - lo
    elif hx < 0x3E300000:  # |x| < 2**-28 (C tests huge + x > 1 only to raise inexact)
        return 1.0 + x
    t = x * x
    if k >= -1021:
        twopk = _from_words(0x3FF00000 + (k << 20), 0)
    else:
        twopk = _from_words(0x3FF00000 + ((k + 1000) << 20), 0)
    c = x - t * (_P1 + t * (_P2 + t * (_P3 + t * (_P4 + t * _P5))))
    if k == 0:
        return 1.0 - ((x * c) / (c - 2.0) - x)
    y = 1.0 - ((lo - (x * c) / (2.0 - c)) - hi)
    if k >= -1021:
        if k == 1024:
            return y * 2.0 * _TWO1023
        return y * twopk
    return y * twopk * _TWOM1000
