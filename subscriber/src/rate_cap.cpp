// SPDX-License-Identifier: Apache-2.0
#include "rate_cap.h"

#include <algorithm>

namespace hdbbench {

RateCap::RateCap(std::uint64_t events_per_s, std::size_t credit_events)
    : events_per_s_(std::min(events_per_s, kMaxEventsPerS)) {
    if (active()) credit_ = span(credit_events);
}

std::chrono::nanoseconds RateCap::span(std::uint64_t events) const {
    // Split in whole seconds and a remainder so that the product stays within 64 bits:
    // (events % N) < N <= 1e9, times 1e9 < 2^63.
    constexpr std::uint64_t ns_per_s = 1'000'000'000;
    const std::uint64_t whole_s = events / events_per_s_;
    const std::uint64_t rest_ns = (events % events_per_s_) * ns_per_s / events_per_s_;
    return std::chrono::seconds(static_cast<std::chrono::seconds::rep>(whole_s)) +
           std::chrono::nanoseconds(static_cast<std::chrono::nanoseconds::rep>(rest_ns));
}

RateCap::time_point RateCap::next_allowed(std::size_t events_written, time_point now) {
    if (!active()) return now;
    if (!started_) {
        started_ = true;
        anchor_ = now;
        scheduled_ = 0;
    } else if (const time_point earliest_slot = now - credit_; anchor_ + span(scheduled_) < earliest_slot) {
        // Behind the schedule by more than the credit: the time unused is forfeited, not saved up
        // for a burst.
        anchor_ = earliest_slot;
        scheduled_ = 0;
    }
    scheduled_ += events_written;
    return anchor_ + span(scheduled_);
}

std::size_t capped_batch_size(std::size_t batch_size, std::uint64_t events_per_s) {
    if (events_per_s == 0) return batch_size;
    const std::uint64_t tenth = std::max<std::uint64_t>(1, events_per_s / 10);
    return static_cast<std::size_t>(std::min<std::uint64_t>(batch_size, tenth));
}

std::size_t count_events(const std::vector<Record> &batch) {
    return static_cast<std::size_t>(std::count_if(batch.begin(), batch.end(), [](const Record &r) {
        return r.kind == RecordKind::Data || r.kind == RecordKind::Error;
    }));
}

}  // namespace hdbbench
