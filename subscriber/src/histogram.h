// SPDX-License-Identifier: Apache-2.0
// Log-bucket latency histogram (HDR-style: 16 linear sub-buckets per power of two, so the
// relative error of a percentile is below 1/16), and a sliding-window version made of slots.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <vector>

namespace hdbbench {

class LogHistogram {
public:
    static constexpr int kSubBits = 4;
    static constexpr int kSub = 1 << kSubBits;
    static constexpr int kMaxExp = 44;  // values up to 2^44 µs (≈200 days)
    static constexpr int kBuckets = kSub + (kMaxExp - kSubBits + 1) * kSub;

    void record(std::uint64_t value, std::uint64_t count = 1);
    void merge(const LogHistogram &o);
    void reset();
    std::uint64_t count() const { return count_; }
    std::uint64_t max() const { return max_; }
    std::uint64_t min() const { return count_ ? min_ : 0; }
    double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0; }
    // Value at quantile q in [0,1]: the midpoint of the bucket holding it (clamped to [min,max]); 0 when empty.
    std::uint64_t quantile(double q) const;

    static int bucket_of(std::uint64_t v);
    static std::uint64_t bucket_low(int b);
    static std::uint64_t bucket_high(int b);  // inclusive

private:
    std::array<std::uint64_t, kBuckets> counts_{};
    std::uint64_t count_ = 0, max_ = 0, min_ = UINT64_MAX, sum_ = 0;
};

// Histogram over the last `window`, kept as `slots` rotating sub-histograms. Thread-safe.
class WindowedHistogram {
public:
    using Clock = std::chrono::steady_clock;
    WindowedHistogram(std::chrono::milliseconds window, int slots = 12);
    void set_window(std::chrono::milliseconds window);
    void record(std::uint64_t value, Clock::time_point now = Clock::now());
    // Everything `h` holds, as recorded at `now`: one lock for a whole batch of values.
    void add(const LogHistogram &h, Clock::time_point now = Clock::now());
    LogHistogram snapshot(Clock::time_point now = Clock::now()) const;
    void reset();

private:
    std::int64_t epoch_of(Clock::time_point t) const;
    LogHistogram &slot_locked(Clock::time_point now);
    mutable std::mutex mutex_;
    std::chrono::milliseconds slot_len_;
    std::vector<LogHistogram> slots_;
    std::vector<std::int64_t> epochs_;
};

}  // namespace hdbbench
