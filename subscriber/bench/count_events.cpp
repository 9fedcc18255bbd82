// SPDX-License-Identifier: Apache-2.0
// hdbbench-count-events: the bare C++ client of the end-to-end benchmark. It subscribes to the ARCHIVE
// events of the attributes named on standard input (one per line), counts what arrives for the given
// number of seconds, and prints one JSON line: data events, error events, and how many of those were
// "missed events" errors (ZeroMQ dropped events). It stores nothing: its rate is the ceiling that
// Tango event delivery allows a C++ subscriber on this machine.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <tango.h>

namespace {

class Counter : public Tango::CallBack {
public:
    void push_event(Tango::EventData *ev) override {
        if (!ev->err) {
            data.fetch_add(1, std::memory_order_relaxed);
            return;
        }
        errors.fetch_add(1, std::memory_order_relaxed);
        if (ev->errors.length() > 0 && std::string(ev->errors[0].reason.in()) == "API_MissedEvents") {
            missed.fetch_add(1, std::memory_order_relaxed);
        }
    }
    std::atomic<long long> data{0}, errors{0}, missed{0};
};

}  // namespace

int main(int argc, char **argv) {
    if (argc != 2) {
        std::cerr << "usage: hdbbench-count-events <seconds>  (attribute names on standard input)\n";
        return 2;
    }
    const double seconds = std::stod(argv[1]);
    std::vector<std::string> names;
    for (std::string line; std::getline(std::cin, line);) {
        if (!line.empty()) names.push_back(line);
    }
    Counter counter;
    std::vector<std::pair<std::unique_ptr<Tango::AttributeProxy>, int>> subscriptions;
    try {
        for (const auto &name : names) {
            auto proxy = std::make_unique<Tango::AttributeProxy>(name.c_str());
            const int id = proxy->subscribe_event(Tango::ARCHIVE_EVENT, &counter, false);
            subscriptions.emplace_back(std::move(proxy), id);
        }
        // The initial events of the subscriptions are not part of the measured load.
        counter.data = 0;
        counter.errors = 0;
        counter.missed = 0;
        std::printf("{\"subscribed\": %zu}\n", subscriptions.size());
        std::fflush(stdout);
        std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
        const long long data = counter.data, errors = counter.errors, missed = counter.missed;
        for (auto &[proxy, id] : subscriptions) proxy->unsubscribe_event(id);
        std::printf("{\"data_events\": %lld, \"error_events\": %lld, \"missed_event_errors\": %lld, \"seconds\": %g}\n",
                    data, errors, missed, seconds);
    } catch (const Tango::DevFailed &e) {
        std::fprintf(stderr, "hdbbench-count-events: %s\n", e.errors[0].desc.in());
        return 1;
    }
    Tango::ApiUtil::cleanup();
    return 0;
}
