// SPDX-License-Identifier: Apache-2.0
// The AttributeList saver (thread `hdb-list-save`). hdbpp-es rewrites its whole AttributeList property
// in the Tango database on every AttributeAdd, so assigning n attributes one by one costs n writes of up
// to n lines (quadratic: minutes for a few thousand attributes). Here a command only asks for a save;
// this thread performs it at most once per `delay`, with the list as it is then, so a burst of commands
// costs a few writes. A request made before stop() is always saved before stop() returns: a device
// shut down cleanly (Init, Kill, SIGTERM) never loses an assignment; only a crash within `delay` of the
// last command can (the harness's AttributeAdd then repeats: it is idempotent).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace hdbbench {

class CoalescingSaver {
public:
    CoalescingSaver(std::function<void()> save, std::chrono::milliseconds delay);
    ~CoalescingSaver();
    CoalescingSaver(const CoalescingSaver &) = delete;
    CoalescingSaver &operator=(const CoalescingSaver &) = delete;
    void start();
    // Ask for a save: done within `delay`, together with every other request made meanwhile.
    void request();
    // Save now if a request is pending; return when no request made before this call is unsaved.
    void flush();
    // flush(), then end the thread.
    void stop();
    std::uint64_t saves() const;

private:
    void run();
    bool save_pending();
    std::function<void()> save_;
    const std::chrono::milliseconds delay_;
    mutable std::mutex mutex_;
    std::condition_variable changed_;  // a request or stop
    std::thread thread_;
    bool stop_ = false;
    std::mutex save_mutex_;  // one save at a time (the thread's and a flush's)
    bool pending_ = false;
    std::uint64_t saves_ = 0;
};

}  // namespace hdbbench
