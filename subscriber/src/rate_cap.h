// SPDX-License-Identifier: Apache-2.0
// RateCap: the schedule of LibConfiguration's max_events_per_s, which makes the writer slow on
// purpose (a contestant that fails the saturation verdicts). Tango-free and clock-free: every call
// takes the current time, so the schedule is testable on a fake clock.
//
// Schedule: a batch of n events occupies n/N s of the schedule, and the next batch may not start
// before the end of that slot. The first slot starts at the first report. A writer that fell behind
// the schedule (idle queue, slow write) may start its next slot at most `credit_events`/N s in the
// past, so it never catches up by more than that many events (one batch) at once.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "record.h"

namespace hdbbench {

class RateCap {
public:
    using time_point = std::chrono::steady_clock::time_point;
    // Above one event per nanosecond a cap means nothing; the configuration refuses it.
    static constexpr std::uint64_t kMaxEventsPerS = 1'000'000'000;

    // events_per_s 0: no cap (next_allowed() returns `now`). credit_events: the burst a writer that
    // fell behind may catch up with, normally one batch (capped_batch_size()).
    RateCap(std::uint64_t events_per_s, std::size_t credit_events);

    // `events_written` events were written by `now`: the earliest time the next batch may start.
    time_point next_allowed(std::size_t events_written, time_point now);

    bool active() const { return events_per_s_ != 0; }

private:
    // How long `events` events take at the cap, exact to the nanosecond (no drift over a long run).
    std::chrono::nanoseconds span(std::uint64_t events) const;

    std::uint64_t events_per_s_;
    std::chrono::nanoseconds credit_{0};
    bool started_ = false;
    // The schedule is anchor_ + span(scheduled_): counted from an anchor rather than summed slot by
    // slot, so that rounding each slot to nanoseconds does not accumulate.
    time_point anchor_{};
    std::uint64_t scheduled_ = 0;
};

// The batch size under a cap: at most max(1, N/10) records, so that one batch is a tenth of a
// second of the schedule and the writer waits in short steps (a 1000-record batch at N=500 would
// otherwise stall 2 s at a time). Without a cap (N=0), batch_size unchanged.
std::size_t capped_batch_size(std::size_t batch_size, std::uint64_t events_per_s);

// What the cap counts: data and error events. Attribute configuration (att_parameter) and history
// (att_history) records ride along in the batches without taking a share of the rate.
std::size_t count_events(const std::vector<Record> &batch);

}  // namespace hdbbench
