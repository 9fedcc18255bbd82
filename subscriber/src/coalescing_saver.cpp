// SPDX-License-Identifier: Apache-2.0
#include "coalescing_saver.h"

#include <pthread.h>

#include <utility>

namespace hdbbench {

CoalescingSaver::CoalescingSaver(std::function<void()> save, std::chrono::milliseconds delay)
    : save_(std::move(save)), delay_(delay) {}

CoalescingSaver::~CoalescingSaver() { stop(); }

void CoalescingSaver::start() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = false;
    }
    thread_ = std::thread([this] {
        pthread_setname_np(pthread_self(), "hdb-list-save");
        run();
    });
}

void CoalescingSaver::request() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        pending_ = true;
    }
    changed_.notify_all();
}

bool CoalescingSaver::save_pending() {
    std::lock_guard<std::mutex> one_at_a_time(save_mutex_);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!pending_) return false;
        pending_ = false;  // a request from now on needs another save: this one may miss it
    }
    save_();
    std::lock_guard<std::mutex> lock(mutex_);
    ++saves_;
    return true;
}

void CoalescingSaver::flush() { save_pending(); }

void CoalescingSaver::stop() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    changed_.notify_all();
    if (thread_.joinable()) thread_.join();
    flush();
}

std::uint64_t CoalescingSaver::saves() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return saves_;
}

void CoalescingSaver::run() {
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(mutex_);
            changed_.wait(lock, [this] { return stop_ || pending_; });
            if (stop_) return;  // stop() saves what is pending
            // Let `delay` pass (only stop ends it early): the requests of a burst share one save.
            if (changed_.wait_for(lock, delay_, [this] { return stop_; })) return;
        }
        save_pending();
    }
}

}  // namespace hdbbench
