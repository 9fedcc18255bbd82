// SPDX-License-Identifier: Apache-2.0
#include "histogram.h"

#include <algorithm>
#include <cmath>

namespace hdbbench {

int LogHistogram::bucket_of(std::uint64_t v) {
    if (v < static_cast<std::uint64_t>(kSub)) return static_cast<int>(v);
    int e = 63 - __builtin_clzll(v);
    if (e > kMaxExp) return kBuckets - 1;
    const int sub = static_cast<int>((v >> (e - kSubBits)) & (kSub - 1));
    return kSub + (e - kSubBits) * kSub + sub;
}

std::uint64_t LogHistogram::bucket_low(int b) {
    if (b < kSub) return static_cast<std::uint64_t>(b);
    const int e = (b - kSub) / kSub + kSubBits;
    const int sub = (b - kSub) % kSub;
    return (std::uint64_t{1} << e) + (static_cast<std::uint64_t>(sub) << (e - kSubBits));
}

std::uint64_t LogHistogram::bucket_high(int b) {
    if (b < kSub) return static_cast<std::uint64_t>(b);
    const int e = (b - kSub) / kSub + kSubBits;
    return bucket_low(b) + (std::uint64_t{1} << (e - kSubBits)) - 1;
}

void LogHistogram::record(std::uint64_t value, std::uint64_t count) {
    if (count == 0) return;
    counts_[static_cast<std::size_t>(bucket_of(value))] += count;
    count_ += count;
    sum_ += value * count;
    max_ = std::max(max_, value);
    min_ = std::min(min_, value);
}

void LogHistogram::merge(const LogHistogram &o) {
    for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += o.counts_[i];
    count_ += o.count_;
    sum_ += o.sum_;
    max_ = std::max(max_, o.max_);
    min_ = std::min(min_, o.min_);
}

void LogHistogram::reset() { *this = LogHistogram{}; }

std::uint64_t LogHistogram::quantile(double q) const {
    if (count_ == 0) return 0;
    q = std::clamp(q, 0.0, 1.0);
    auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_)));
    if (rank == 0) rank = 1;
    std::uint64_t seen = 0;
    for (int b = 0; b < kBuckets; ++b) {
        seen += counts_[static_cast<std::size_t>(b)];
        if (seen >= rank) {
            const std::uint64_t mid = bucket_low(b) + (bucket_high(b) - bucket_low(b)) / 2;
            return std::clamp(mid, min_, max_);
        }
    }
    return max_;
}

WindowedHistogram::WindowedHistogram(std::chrono::milliseconds window, int slots)
    : slot_len_(std::max<std::chrono::milliseconds::rep>(1, window.count() / std::max(1, slots))),
      slots_(static_cast<std::size_t>(std::max(1, slots))),
      epochs_(static_cast<std::size_t>(std::max(1, slots)), -1) {}

void WindowedHistogram::set_window(std::chrono::milliseconds window) {
    std::lock_guard<std::mutex> lock(mutex_);
    slot_len_ = std::chrono::milliseconds(
        std::max<std::chrono::milliseconds::rep>(1, window.count() / static_cast<long>(slots_.size())));
    for (auto &s : slots_) s.reset();
    std::fill(epochs_.begin(), epochs_.end(), -1);
}

std::int64_t WindowedHistogram::epoch_of(Clock::time_point t) const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count() / slot_len_.count();
}

LogHistogram &WindowedHistogram::slot_locked(Clock::time_point now) {
    const std::int64_t e = epoch_of(now);
    const auto i = static_cast<std::size_t>(e % static_cast<std::int64_t>(slots_.size()));
    if (epochs_[i] != e) {
        slots_[i].reset();
        epochs_[i] = e;
    }
    return slots_[i];
}

void WindowedHistogram::record(std::uint64_t value, Clock::time_point now) {
    std::lock_guard<std::mutex> lock(mutex_);
    slot_locked(now).record(value);
}

void WindowedHistogram::add(const LogHistogram &h, Clock::time_point now) {
    if (h.count() == 0) return;
    std::lock_guard<std::mutex> lock(mutex_);
    slot_locked(now).merge(h);
}

LogHistogram WindowedHistogram::snapshot(Clock::time_point now) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::int64_t e = epoch_of(now);
    const auto n = static_cast<std::int64_t>(slots_.size());
    LogHistogram out;
    for (std::size_t i = 0; i < slots_.size(); ++i)
        if (epochs_[i] >= 0 && epochs_[i] > e - n) out.merge(slots_[i]);
    return out;
}

void WindowedHistogram::reset() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto &s : slots_) s.reset();
    std::fill(epochs_.begin(), epochs_.end(), -1);
}

}  // namespace hdbbench
