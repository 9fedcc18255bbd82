# SPDX-License-Identifier: Apache-2.0
"""The counter-based draws and exact arithmetic both generator engines share (devices/spec/value-function.md).

Every random number of event k of an attribute is ``draw(k, slot)``, a splitmix64-style hash of
(seed, attribute key, k, slot): no generator state, so any event is computed on its own and the C++
device (devices/gen/) computes the very same 64-bit words. Floating-point steps use only IEEE
operations that are correctly rounded everywhere (+ - * /, sqrt, floor, abs, rint): no libm
transcendental, whose last bit differs between numpy and the C library — hence `sin2pi`, a fixed
polynomial. The specification is the reference; `devices/spec/value-vectors.json` pins it.
"""

from __future__ import annotations

import numpy as np

M64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15
_MUL1, _MUL2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
_FNV_OFFSET, _FNV_PRIME = 0xCBF29CE484222325, 0x100000001B3
SLOT_ERROR, SLOT_QUALITY, SLOT_VALUE = 0, 1, 2   # slot of the error draw, quality draw, element 0's draw
WALK_QUANTUM = 1 << 20                          # float walks: steps are integers in [-Q, Q] times a scale
TWO_PI = 6.283185307179586
# sin(x) = x * (1 + x²·S[0] + x⁴·S[1] + ...), Taylor terms -1/3!, 1/5!, ..., -1/15!: each a correctly
# rounded quotient of exact doubles, so every language gets the same bits.
SIN_TERMS = tuple((-1.0 if i % 2 == 0 else 1.0) / float(np.prod(np.arange(1, 2 * i + 4, dtype=np.float64)))
                  for i in range(7))

_U64 = np.uint64


def mix64(z: int) -> int:
    """The splitmix64 finaliser on a Python int (mod 2**64)."""
    z &= M64
    z = ((z ^ (z >> 30)) * _MUL1) & M64
    z = ((z ^ (z >> 27)) * _MUL2) & M64
    return z ^ (z >> 31)


def mix64_array(z: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser on a uint64 array (numpy's uint64 arithmetic wraps mod 2**64)."""
    z = (z ^ (z >> _U64(30))) * _U64(_MUL1)
    z = (z ^ (z >> _U64(27))) * _U64(_MUL2)
    return z ^ (z >> _U64(31))


def fnv1a64(data: bytes) -> int:
    h = _FNV_OFFSET
    for byte in data:
        h = ((h ^ byte) * _FNV_PRIME) & M64
    return h


def stream_base(seed: int, key: str) -> int:
    """The 64-bit word of one attribute's stream: seed and the lower-case "<device>/<attribute>" key."""
    return mix64(mix64((seed + GAMMA) & M64) ^ fnv1a64(key.encode()))


def schedule_phase(seed: int, key: str) -> float:
    """The attribute's phase with ``phases = "seeded"``: a fraction of its period in [0, 1).

    unit(mix64(base)) is the word of counter 0, which no event draws from (event k uses counter k + 1),
    so the phase is independent of the values and the same for any rate.
    """
    return (mix64(stream_base(seed, key)) >> 11) * 2.0 ** -53


def event_words(base: int, ks: np.ndarray) -> np.ndarray:
    """word(k) = mix64(base + (k + 1)·GAMMA) for each k (uint64)."""
    k1 = ks.astype(np.uint64) + _U64(1)
    return mix64_array(_U64(base) + k1 * _U64(GAMMA))


def draws(words: np.ndarray, first_slot: int, count: int) -> np.ndarray:
    """draw(k, slot) = mix64(word(k) + (slot + 1)·GAMMA) for slots first_slot..first_slot+count-1: (n, count)."""
    slots = np.arange(first_slot + 1, first_slot + 1 + count, dtype=np.uint64) * _U64(GAMMA)
    return mix64_array(words[:, None] + slots[None, :])


def unit(w: np.ndarray) -> np.ndarray:
    """A uniform double in [0, 1) from the top 53 bits of a word (exact)."""
    return (w >> _U64(11)).astype(np.float64) * (2.0 ** -53)


def below(w: np.ndarray, n: int) -> np.ndarray:
    """An integer in [0, n) from a word: w mod n (the bias, < n/2**64, does not matter here)."""
    return w % _U64(n)


def sin2pi(t: np.ndarray) -> np.ndarray:
    """sin(2πt) with a fixed polynomial after exact range reduction (error < 1e-9)."""
    r = t - np.floor(t)                       # [0, 1)
    neg = r >= 0.5
    r = np.where(neg, r - 0.5, r)             # [0, 0.5): sin(2π(r + ½)) = -sin(2πr)
    r = np.where(r > 0.25, 0.5 - r, r)        # [0, 0.25]: sin(π - x) = sin(x)
    x = TWO_PI * r
    x2 = x * x
    acc = np.full_like(x2, SIN_TERMS[-1])
    for term in SIN_TERMS[-2::-1]:
        acc = term + x2 * acc
    s = x * (1.0 + x2 * acc)
    return np.where(neg, -s, s)


def fold(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Reflect x into [lo, hi] (a triangle wave of period 2·(hi - lo))."""
    span = hi - lo
    if span <= 0:
        return np.full_like(x, lo)
    t = (x - lo) / (2 * span)
    m = (t - np.floor(t)) * (2 * span)
    return (lo + span) - np.abs(m - span)


def py_mod(x: np.ndarray, m: float) -> np.ndarray:
    """Floating modulo with the sign of the divisor (numpy's and Python's %)."""
    return np.mod(x, m)
