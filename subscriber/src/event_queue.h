// SPDX-License-Identifier: Apache-2.0
// Bounded event queue with disk overflow. Producers (Tango callbacks) never block on the database:
// a record goes to memory while there is room and nothing is spooled, otherwise to the disk spool
// (so the order is kept), and is lost (and counted) only when the spool limit is reached too.
// One consumer (the writer thread) takes batches: memory first, then the spool.
// With a write-ahead log (spool_mode=write_ahead) every record is also appended to the log before it
// is queued, the writer reports committed batches (committed()), and the log's records past the
// checkpoint are queued again at construction.
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

#include "config.h"
#include "record.h"
#include "spool.h"
#include "wal.h"

namespace hdbbench {

struct QueueSnapshot {
    std::size_t in_memory = 0;
    std::uint64_t in_spool = 0;
    std::uint64_t spool_bytes = 0;
    std::uint64_t pushed = 0;            // records accepted since start (memory or spool)
    std::uint64_t spooled_total = 0;     // records written to the spool since start
    std::uint64_t lost = 0;              // records dropped, every reason
    std::uint64_t lost_queue_full = 0;   // dropped: memory full and no spool room (none, or its limit)
    std::uint64_t lost_spool_full = 0;   // dropped: the spool's filesystem refused the write
    std::uint64_t wal_replayed = 0;      // records queued again from the write-ahead log at start
    std::uint64_t wal_unlogged = 0;      // records queued although their log write failed
    bool write_ahead = false;
    bool wal_failing = false;            // the log's last write failed (records go unlogged now)
    std::size_t capacity = 0;            // memory queue capacity (records)
    std::uint64_t max_in_memory = 0;     // high-water mark of in_memory since start
    std::uint64_t spool_errors = 0;
    std::uint64_t max_pending = 0;       // high-water mark of in_memory + in_spool
    std::optional<TimePoint> oldest_recv;  // recv_time of the oldest queued record
    std::string last_error;
    std::uint64_t pending() const { return in_memory + in_spool; }
};

class EventQueue {
public:
    // spool and wal may be null (memory only; no write-ahead log). The log's records past its
    // checkpoint are queued now, before any push.
    EventQueue(std::size_t capacity, std::unique_ptr<Spool> spool, std::unique_ptr<WriteAheadLog> wal = nullptr);
    void push(Record r);
    // The writer stored `batch` (or rejected rows of it for good): the log may forget it.
    void committed(const std::vector<Record> &batch);
    WriteAheadLog *wal() { return wal_.get(); }
    // Wait up to `wait` for a first record, then up to `linger` more for the batch to fill to `max`.
    // Returns an empty vector on timeout or after close().
    std::vector<Record> pop_batch(std::size_t max, std::chrono::milliseconds linger, std::chrono::milliseconds wait);
    void close();
    QueueSnapshot snapshot();
    void reset_max_pending();
    std::size_t capacity() const { return capacity_; }

private:
    std::size_t available_locked() const { return mem_.size() + (spool_ ? spool_->count() : 0); }
    void enqueue_locked(Record &&r);
    void spool_locked(Record &&r);
    void lose_locked(std::uint64_t &reason_counter, std::string why);
    std::mutex mutex_;
    std::condition_variable cv_;
    std::size_t capacity_;
    std::deque<Record> mem_;
    std::unique_ptr<Spool> spool_;
    std::unique_ptr<WriteAheadLog> wal_;
    bool closed_ = false;
    bool consumer_waiting_ = false;
    std::size_t wake_threshold_ = 1;
    std::uint64_t pushed_ = 0, spooled_total_ = 0, lost_ = 0, spool_errors_ = 0, max_pending_ = 0;
    std::uint64_t lost_queue_full_ = 0, lost_spool_full_ = 0, lost_other_ = 0, wal_replayed_ = 0, max_in_memory_ = 0;
    std::string last_error_;
};

// The queue LibConfiguration asks for: spool_dir's spool (overflow mode), or in write-ahead mode the
// log in <spool_dir>/wal and an overflow spool in <spool_dir>/wal/overflow, emptied at start (the
// log holds its records). Throws SpoolError.
std::unique_ptr<EventQueue> make_event_queue(const LibConfig &lib);

}  // namespace hdbbench
