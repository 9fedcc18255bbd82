// SPDX-License-Identifier: Apache-2.0
// Statistics: what the writer's batches did (rows, ages, commit times over the statistics window),
// and the immutable snapshot the device publishes, rebuilt once a second from the registry's views,
// the queue and the writer loop. Readers share the latest snapshot; nobody writes into it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "archived_attribute.h"
#include "event_queue.h"
#include "histogram.h"
#include "registry.h"
#include "writer.h"

namespace hdbbench {

// Percentiles of a duration over the statistics window, in seconds.
struct AgeFigures {
    double p50_s = 0, p99_s = 0, max_s = 0;
};

// The writer loop's own state, read by the statistics.
struct WriterState {
    bool connected = false;
    std::string error;                   // why the database is not reachable ("" when it is)
    std::uint64_t reconnects = 0;        // connections lost
    std::size_t inflight = 0;            // records of the batch being written
    std::optional<TimePoint> inflight_oldest;
};

// Everything the device publishes.
struct ArchiverSnapshot {
    std::vector<std::string> all, ok, nok, pending, started, stopped, paused, errors, strategies;
    std::vector<double> record_freq_list, failure_freq_list, record_freq_inst_list, failure_freq_inst_list;
    std::vector<std::int32_t> event_number_list;
    std::vector<std::uint32_t> ttl_list;
    double max_store_time_s = 0, min_store_time_s = 0, max_processing_time_s = 0, min_processing_time_s = 0;
    double record_freq = 0, failure_freq = 0, record_freq_inst = 0, failure_freq_inst = 0;
    double seconds_since_reset = 0;
    // queue / writer
    std::uint64_t pending_events = 0, max_pending_events = 0, spooled_events = 0, spooled_total = 0,
                  lost_events = 0, reconnects = 0, db_errors = 0, rows_stored = 0, duplicates = 0;
    std::uint64_t resubscribes = 0;  // by the subscription watchdog (AttributeRegistry::resubscribe_silent)
    std::uint64_t spool_bytes = 0;
    std::uint64_t lost_queue_full = 0, lost_spool_full = 0, wal_replayed = 0, wal_unlogged = 0;
    std::uint64_t spool_mode = 0;  // 0 overflow, 1 write_ahead
    bool wal_failing = false;
    std::uint64_t memory_queue_capacity = 0, memory_queue_max = 0;
    double pending_age_s = 0;
    AgeFigures event_age;           // commit time - source timestamp
    AgeFigures reception_age;       // reception time - source timestamp: the device's and Tango's share
    AgeFigures time_in_subscriber;  // commit time - reception time: queue, batching and commit
    std::uint64_t last_batch_size = 0;
    double last_batch_commit_s = 0, mean_batch_size = 0, mean_batch_commit_s = 0;
    double rows_per_s_inst = 0, rows_per_s_window = 0;
    bool db_connected = false;
    std::string db_error;
    std::string queue_error;
};

class Statistics {
public:
    using StrategyText = std::function<std::string(const AttributeSpec &)>;
    explicit Statistics(std::chrono::seconds window);

    // Called by the writer loop after each batch; returns what the batch did per attribute.
    BatchAccount account_batch(const std::vector<Record> &batch, const WriteResult &res, double commit_s,
                               TimePoint commit_time);
    void reset();
    // Rebuild the published snapshot.
    void publish(const std::vector<AttributeView> &attributes, const StrategyText &strategy_text, QueueSnapshot queue,
                 const WriterState &writer);
    std::shared_ptr<const ArchiverSnapshot> snapshot() const;

private:
    struct SecondSlot {
        std::int64_t second = -1;
        std::uint64_t rows = 0, batches = 0;
        double commit_s = 0;
    };
    void fill_batches(ArchiverSnapshot &s) const;  // caller holds mutex_

    WindowedHistogram event_age_us_, reception_age_us_, in_subscriber_us_;
    std::atomic<std::uint64_t> rows_stored_{0}, db_errors_{0}, duplicates_{0};
    mutable std::mutex mutex_;  // guards what follows
    std::uint64_t last_batch_size_ = 0;
    double last_batch_commit_s_ = 0;
    std::vector<SecondSlot> seconds_;  // ring, one slot per second of the window
    std::chrono::steady_clock::time_point reset_time_;
    std::shared_ptr<const ArchiverSnapshot> snapshot_;
};

}  // namespace hdbbench
