// SPDX-License-Identifier: Apache-2.0
#include "event_queue.h"

#include <algorithm>
#include <filesystem>

namespace hdbbench {

EventQueue::EventQueue(std::size_t capacity, std::unique_ptr<Spool> spool, std::unique_ptr<WriteAheadLog> wal)
    : capacity_(std::max<std::size_t>(1, capacity)), spool_(std::move(spool)), wal_(std::move(wal)) {
    if (spool_) max_pending_ = spool_->count();
    if (wal_) {
        std::lock_guard<std::mutex> lock(mutex_);
        wal_replayed_ = wal_->replay([this](Record &&r) { enqueue_locked(std::move(r)); });
    }
}

void EventQueue::lose_locked(std::uint64_t &reason_counter, std::string why) {
    ++lost_;
    ++reason_counter;
    last_error_ = std::move(why);
}

void EventQueue::spool_locked(Record &&r) {
    try {
        switch (spool_->append(r)) {
            case SpoolAppend::Appended:
                ++pushed_;
                ++spooled_total_;
                return;
            case SpoolAppend::LimitReached:
                return lose_locked(lost_queue_full_, "spool limit reached");
            case SpoolAppend::NoSpace:
                return lose_locked(lost_spool_full_, "no space left for the spool in " + spool_->dir());
        }
    } catch (const SpoolError &e) {
        ++spool_errors_;
        lose_locked(lost_other_, e.what());
    }
}

// Memory while there is room and nothing is spooled (keeps the order), else the spool, else lost.
void EventQueue::enqueue_locked(Record &&r) {
    const bool spool_active = spool_ && !spool_->empty();
    if (!spool_active && mem_.size() < capacity_) {
        mem_.push_back(std::move(r));
        ++pushed_;
        max_in_memory_ = std::max<std::uint64_t>(max_in_memory_, mem_.size());
    } else if (spool_) {
        spool_locked(std::move(r));
    } else {
        lose_locked(lost_queue_full_, "queue full and no spool configured");
    }
    max_pending_ = std::max<std::uint64_t>(max_pending_, available_locked());
}

void EventQueue::push(Record r) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (wal_) wal_->append(r);  // under the queue's lock: log order = queue order
    const std::uint64_t seq = r.wal_seq;
    enqueue_locked(std::move(r));
    const bool wake = consumer_waiting_ && available_locked() >= wake_threshold_;
    lock.unlock();
    if (wake) cv_.notify_one();
    if (wal_ && wal_->sync_each_append()) wal_->sync_through(seq);
}

void EventQueue::committed(const std::vector<Record> &batch) {
    if (!wal_) return;
    std::uint64_t seq = 0;
    for (const Record &r : batch) seq = std::max(seq, r.wal_seq);
    if (seq) wal_->commit(seq);
}

std::vector<Record> EventQueue::pop_batch(std::size_t max, std::chrono::milliseconds linger,
                                          std::chrono::milliseconds wait) {
    std::vector<Record> out;
    std::unique_lock<std::mutex> lock(mutex_);
    auto ready = [this] { return closed_ || available_locked() > 0; };
    if (!ready()) {
        consumer_waiting_ = true;
        wake_threshold_ = 1;
        cv_.wait_for(lock, wait, ready);
        consumer_waiting_ = false;
    }
    if (available_locked() == 0) return out;
    if (available_locked() < max && !closed_ && linger.count() > 0) {
        consumer_waiting_ = true;
        wake_threshold_ = max;
        cv_.wait_for(lock, linger, [this, max] { return closed_ || available_locked() >= max; });
        consumer_waiting_ = false;
    }
    const std::size_t n = std::min<std::size_t>(max, available_locked());
    out.reserve(n);
    while (out.size() < n && !mem_.empty()) {
        out.push_back(std::move(mem_.front()));
        mem_.pop_front();
    }
    while (out.size() < n && spool_ && !spool_->empty()) {
        try {
            auto r = spool_->pop();
            if (!r) break;
            out.push_back(std::move(*r));
        } catch (const SpoolError &e) {
            ++spool_errors_;
            last_error_ = e.what();
            break;
        }
    }
    return out;
}

void EventQueue::close() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        closed_ = true;
    }
    cv_.notify_all();
}

QueueSnapshot EventQueue::snapshot() {
    std::lock_guard<std::mutex> lock(mutex_);
    QueueSnapshot s;
    s.in_memory = mem_.size();
    s.in_spool = spool_ ? spool_->count() : 0;
    s.spool_bytes = spool_ ? spool_->bytes() : 0;
    s.pushed = pushed_;
    s.spooled_total = spooled_total_;
    s.lost = lost_;
    s.spool_errors = spool_errors_;
    s.max_pending = max_pending_;
    s.lost_queue_full = lost_queue_full_;
    s.lost_spool_full = lost_spool_full_;
    s.wal_replayed = wal_replayed_;
    s.wal_unlogged = wal_ ? wal_->unlogged() : 0;
    s.write_ahead = wal_ != nullptr;
    s.wal_failing = wal_ && wal_->failing();
    s.capacity = capacity_;
    s.max_in_memory = max_in_memory_;
    s.last_error = last_error_;
    if (s.wal_failing) s.last_error = wal_->last_error();
    if (!mem_.empty()) {
        s.oldest_recv = mem_.front().recv_time;
    } else if (spool_ && !spool_->empty()) {
        try {
            s.oldest_recv = spool_->oldest_recv_time();
        } catch (const SpoolError &e) {
            last_error_ = e.what();
        }
    }
    return s;
}

void EventQueue::reset_max_pending() {
    std::lock_guard<std::mutex> lock(mutex_);
    max_pending_ = available_locked();
}

std::unique_ptr<EventQueue> make_event_queue(const LibConfig &lib) {
    namespace fs = std::filesystem;
    const std::uint64_t limit = lib.spool_limit_mb << 20;
    if (lib.spool_dir.empty()) return std::make_unique<EventQueue>(lib.queue_capacity, nullptr);
    if (lib.spool_mode == SpoolMode::Overflow)
        return std::make_unique<EventQueue>(lib.queue_capacity, std::make_unique<Spool>(lib.spool_dir, limit));
    const fs::path wal_dir = fs::path(lib.spool_dir) / "wal";
    const fs::path overflow_dir = wal_dir / "overflow";
    std::error_code ec;
    fs::remove_all(overflow_dir, ec);  // every record of it is in the log, replayed below
    if (ec) throw SpoolError("spool: cannot empty " + overflow_dir.string() + ": " + ec.message());
    auto wal = std::make_unique<WriteAheadLog>(WalOptions{wal_dir.string(), lib.spool_sync_ms});
    return std::make_unique<EventQueue>(lib.queue_capacity, std::make_unique<Spool>(overflow_dir.string(), limit),
                                        std::move(wal));
}

}  // namespace hdbbench
