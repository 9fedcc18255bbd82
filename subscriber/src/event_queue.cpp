// SPDX-License-Identifier: Apache-2.0
#include "event_queue.h"

#include <algorithm>

namespace hdbbench {

EventQueue::EventQueue(std::size_t capacity, std::unique_ptr<Spool> spool)
    : capacity_(std::max<std::size_t>(1, capacity)), spool_(std::move(spool)) {
    if (spool_) max_pending_ = spool_->count();
}

void EventQueue::push(Record r) {
    std::unique_lock<std::mutex> lock(mutex_);
    const bool spool_active = spool_ && !spool_->empty();
    if (!spool_active && mem_.size() < capacity_) {
        mem_.push_back(std::move(r));
        ++pushed_;
    } else if (spool_) {
        try {
            if (spool_->append(r)) {
                ++pushed_;
                ++spooled_total_;
            } else {
                ++lost_;
                last_error_ = "spool limit reached";
            }
        } catch (const SpoolError &e) {
            ++lost_;
            ++spool_errors_;
            last_error_ = e.what();
        }
    } else {
        ++lost_;
        last_error_ = "queue full and no spool configured";
    }
    const std::uint64_t pending = available_locked();
    max_pending_ = std::max(max_pending_, pending);
    if (consumer_waiting_ && pending >= wake_threshold_) {
        lock.unlock();
        cv_.notify_one();
    }
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
    s.last_error = last_error_;
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

}  // namespace hdbbench
