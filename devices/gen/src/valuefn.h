// SPDX-License-Identifier: Apache-2.0
// The draws and exact arithmetic of devices/spec/value-function.md (the Python twin: hdbbench/model/valuefn.py).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

namespace hdbgen {

constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ULL;
constexpr uint64_t kSlotError = 0, kSlotQuality = 1, kSlotValue = 2;
constexpr int64_t kWalkQuantum = int64_t{1} << 20;

inline uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

inline uint64_t fnv1a64(const std::string &data) {
    uint64_t h = 0xCBF29CE484222325ULL;
    for (unsigned char c : data) h = (h ^ c) * 0x100000001B3ULL;
    return h;
}

inline uint64_t stream_base(uint64_t seed, const std::string &key) {
    return mix64(mix64(seed + kGamma) ^ fnv1a64(key));
}

inline uint64_t event_word(uint64_t base, uint64_t k) { return mix64(base + (k + 1) * kGamma); }

inline uint64_t draw(uint64_t word, uint64_t slot) { return mix64(word + (slot + 1) * kGamma); }

inline double unit(uint64_t w) { return static_cast<double>(w >> 11) * 0x1.0p-53; }

// The attribute's phase with Phases = seeded, a fraction of its period in [0, 1): the word of counter 0,
// which no event draws from (event k uses counter k + 1).
inline double schedule_phase(uint64_t seed, const std::string &key) {
    return unit(mix64(stream_base(seed, key)));
}

inline double sin2pi(double t) {
    constexpr double kTwoPi = 6.283185307179586;
    constexpr double kTerms[7] = {-1.0 / 6.0, 1.0 / 120.0, -1.0 / 5040.0, 1.0 / 362880.0,
                                  -1.0 / 39916800.0, 1.0 / 6227020800.0, -1.0 / 1307674368000.0};
    double r = t - std::floor(t);
    const bool neg = r >= 0.5;
    if (neg) r = r - 0.5;
    if (r > 0.25) r = 0.5 - r;
    const double x = kTwoPi * r;
    const double x2 = x * x;
    double acc = kTerms[6];
    for (int i = 5; i >= 0; --i) acc = kTerms[i] + x2 * acc;
    const double s = x * (1.0 + x2 * acc);
    return neg ? -s : s;
}

inline double fold(double x, double lo, double hi) {
    const double span = hi - lo;
    if (span <= 0) return lo;
    const double t = (x - lo) / (2 * span);
    const double m = (t - std::floor(t)) * (2 * span);
    return (lo + span) - std::fabs(m - span);
}

// Floored modulo (the result has the divisor's sign), as numpy's mod and Python's %.
inline double py_mod(double x, double m) {
    double r = std::fmod(x, m);
    if (r != 0 && ((r < 0) != (m < 0))) r += m;
    return r;
}

inline int64_t py_mod_int(int64_t x, int64_t m) {
    int64_t r = x % m;
    if (r != 0 && ((r < 0) != (m < 0))) r += m;
    return r;
}

// Round half to even (Python's round, numpy's rint) in the default rounding mode.
inline double round_even(double x) { return std::nearbyint(x); }

}  // namespace hdbgen
