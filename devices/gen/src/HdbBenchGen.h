// SPDX-License-Identifier: Apache-2.0
// Tango shell of the C++ generator (class HdbBenchGen): the interface of devices/HdbBenchSim.py for
// code-pushed attributes, driven by hdbgen::Scheduler. Properties: Attributes (one JSON AttrSpec per
// element, as the launcher writes them for both engines), Seed, AutoStart, Timestamps, Phases, PushThreads.
#pragma once

#include <tango.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "scheduler.h"

namespace HdbBenchGen_ns {

class HdbBenchGen : public TANGO_BASE_CLASS {
public:
    HdbBenchGen(Tango::DeviceClass *cl, std::string &name);
    ~HdbBenchGen() override;
    void init_device() override;
    void delete_device() override;

    // Attributes.
    void read_generated(Tango::Attribute &att);
    void read_statistic(Tango::Attribute &att);

    // Commands.
    void start(const std::vector<std::string> *names);
    void stop(const std::vector<std::string> *names);
    void reset();
    void set_rate(double rate_hz, const std::vector<std::string> *names);
    void burst(int64_t n, const std::vector<std::string> *names);

private:
    void read_properties();
    void stop_pushers();
    void add_generated(size_t i);
    void init_set_point(size_t i);
    void pusher(int group);
    void push_batch(hdbgen::Batch &batch, std::vector<Tango::DevString> &string_ptrs);
    void push_one(const hdbgen::Batch &batch, const hdbgen::PushItem &item, std::vector<Tango::DevString> &string_ptrs);
    std::vector<size_t> checked(const std::vector<std::string> &names) const;
    void update_state();
    std::string statistics_json();

    // properties
    std::vector<std::string> attributes_prop_;
    Tango::DevLong64 seed_ = 1;
    bool auto_start_ = false;
    std::string timestamps_ = "schedule";
    std::string phases_ = "aligned";
    Tango::DevLong push_threads_ = 1;

    std::unique_ptr<hdbgen::Scheduler> scheduler_;
    std::vector<std::thread> threads_;
    std::vector<Tango::Attribute *> generated_;  // by scheduler index
    std::vector<std::string> generated_names_;
    std::string fault_;
    Tango::DevFailed simulated_error_;
    std::atomic<uint64_t> push_failures_{0};
    std::mutex failure_mutex_;
    std::string last_push_failure_;

    // read buffers, alive until Tango has copied the reply
    std::vector<hdbgen::LastEvent> read_events_;
    std::vector<std::vector<Tango::DevString>> read_strings_;
    std::vector<std::string> read_encoded_format_;
    Tango::DevBoolean running_buf_ = false;
    Tango::DevLong64 seed_buf_ = 0;
    Tango::DevULong64 total_buf_ = 0, failures_buf_ = 0;
    Tango::DevDouble rate_buf_ = 0, lag_buf_ = 0;
    std::vector<Tango::DevULong64> emitted_buf_, errors_buf_, checksum_buf_;
    std::vector<Tango::DevDouble> achieved_buf_, target_buf_;
    std::vector<Tango::DevString> names_buf_;
    std::string statistics_buf_;
    Tango::DevString statistics_ptr_ = nullptr;
};

}  // namespace HdbBenchGen_ns
