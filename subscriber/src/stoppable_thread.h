// SPDX-License-Identifier: Apache-2.0
// Base of the worker threads (subscribe/retry, writer, statistics): run() loops until stop() is
// asked; wait_for() sleeps but returns early on stop or wake.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include <pthread.h>

namespace hdbbench {

class StoppableThread {
public:
    virtual ~StoppableThread() { join(); }
    StoppableThread() = default;
    StoppableThread(const StoppableThread &) = delete;
    StoppableThread &operator=(const StoppableThread &) = delete;

    // `name` (at most 15 characters) labels the thread in top, perf and /proc, so that the CPU of
    // the writer can be told apart from Tango's event reception.
    void start(std::string name = {}) {
        stop_ = false;
        thread_ = std::thread([this, name = std::move(name)] {
            if (!name.empty()) pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
            run();
        });
    }
    void request_stop() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
        }
        cv_.notify_all();
    }
    void wake() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            woken_ = true;
        }
        cv_.notify_all();
    }
    void join() {
        if (thread_.joinable()) thread_.join();
    }
    void stop() {
        request_stop();
        join();
    }
    bool stopping() const { return stop_; }

protected:
    virtual void run() = 0;
    // Sleep up to d; true if stop was requested.
    template <typename Rep, typename Period>
    bool wait_for(std::chrono::duration<Rep, Period> d) {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait_for(lock, d, [this] { return stop_.load() || woken_; });
        woken_ = false;
        return stop_;
    }

private:
    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable cv_;
    std::atomic<bool> stop_{false};
    bool woken_ = false;
};

}  // namespace hdbbench
