// SPDX-License-Identifier: Apache-2.0
// The writer loop (thread `hdb-writer`): the only user of the database. It takes batches from the
// EventQueue, stores them through its Writer, keeps a batch across a lost connection (reconnecting
// with exponential back-off) and reports every written batch to an observer. With a rate cap
// (max_events_per_s) it waits between batches so as to write no more than that many events a second.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "event_queue.h"
#include "logger.h"
#include "statistics.h"
#include "stoppable_thread.h"
#include "writer.h"

namespace hdbbench {

struct WriterLoopOptions {
    std::size_t batch_size = 1000;
    std::chrono::milliseconds flush_interval{10};
    std::chrono::milliseconds reconnect_min{250}, reconnect_max{30000};
    std::chrono::seconds drain_at_stop{5};  // how long stop() keeps writing what is queued
    // Data/error events per second at most (0: no cap); it also bounds the batch size (rate_cap.h).
    // Not applied to the drain at stop, which drain_at_stop bounds, so that Stop/Init stay prompt.
    std::uint64_t max_events_per_s = 0;
    // Drop (reject) a batch whose connection was lost instead of keeping it for a retry (config.h).
    bool drop_batch_on_lost_connection = false;
};

class WriterLoop : private StoppableThread {
public:
    // (batch, result, commit time in s, commit instant)
    using BatchObserver = std::function<void(const std::vector<Record> &, const WriteResult &, double, TimePoint)>;
    WriterLoop(std::unique_ptr<Writer> writer, EventQueue &queue, WriterLoopOptions opts, BatchObserver observer,
               Logger log);
    ~WriterLoop() override;
    void start();
    // Write what is queued (while connected, at most drain_at_stop), then stop.
    void stop();
    WriterState state() const;

private:
    void run() override;
    bool ensure_connected(std::chrono::milliseconds &backoff, bool &ever_connected);
    // Sleep until `t` (the rate cap's schedule); false when stop was requested meanwhile.
    bool wait_until(std::chrono::steady_clock::time_point t);
    // Write one batch; false when the connection was lost (the batch is kept for a retry).
    bool write(std::vector<Record> &batch);
    void set_error(const std::string &e);

    std::unique_ptr<Writer> writer_;
    EventQueue &queue_;
    const WriterLoopOptions opts_;
    BatchObserver observer_;
    Logger log_;
    std::atomic<bool> connected_{false};
    std::atomic<std::uint64_t> reconnects_{0};
    std::atomic<std::size_t> inflight_{0};
    std::atomic<std::int64_t> inflight_oldest_us_{0};
    mutable std::mutex error_mutex_;
    std::string error_;
};

}  // namespace hdbbench
