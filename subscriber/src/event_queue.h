// SPDX-License-Identifier: Apache-2.0
// Bounded event queue with disk overflow. Producers (Tango callbacks) never block on the database:
// a record goes to memory while there is room and nothing is spooled, otherwise to the disk spool
// (so the order is kept), and is lost (and counted) only when the spool limit is reached too.
// One consumer (the writer thread) takes batches: memory first, then the spool.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "record.h"
#include "spool.h"

namespace hdbbench {

struct QueueSnapshot {
    std::size_t in_memory = 0;
    std::uint64_t in_spool = 0;
    std::uint64_t spool_bytes = 0;
    std::uint64_t pushed = 0;            // records accepted since start (memory or spool)
    std::uint64_t spooled_total = 0;     // records written to the spool since start
    std::uint64_t lost = 0;              // records dropped: queue full and spool full/absent/failing
    std::uint64_t spool_errors = 0;
    std::uint64_t max_pending = 0;       // high-water mark of in_memory + in_spool
    std::optional<TimePoint> oldest_recv;  // recv_time of the oldest queued record
    std::string last_error;
    std::uint64_t pending() const { return in_memory + in_spool; }
};

class EventQueue {
public:
    // spool may be null (memory only).
    EventQueue(std::size_t capacity, std::unique_ptr<Spool> spool);
    void push(Record r);
    // Wait up to `wait` for a first record, then up to `linger` more for the batch to fill to `max`.
    // Returns an empty vector on timeout or after close().
    std::vector<Record> pop_batch(std::size_t max, std::chrono::milliseconds linger, std::chrono::milliseconds wait);
    void close();
    QueueSnapshot snapshot();
    void reset_max_pending();
    std::size_t capacity() const { return capacity_; }

private:
    std::size_t available_locked() const { return mem_.size() + (spool_ ? spool_->count() : 0); }
    std::mutex mutex_;
    std::condition_variable cv_;
    std::size_t capacity_;
    std::deque<Record> mem_;
    std::unique_ptr<Spool> spool_;
    bool closed_ = false;
    bool consumer_waiting_ = false;
    std::size_t wake_threshold_ = 1;
    std::uint64_t pushed_ = 0, spooled_total_ = 0, lost_ = 0, spool_errors_ = 0, max_pending_ = 0;
    std::string last_error_;
};

}  // namespace hdbbench
