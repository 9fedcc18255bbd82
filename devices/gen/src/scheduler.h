// SPDX-License-Identifier: Apache-2.0
// The runtime of one generator device, without Tango: per-attribute schedules (start, stop, rate, burst,
// rewind), the events due at a time generated into a batch, accounting (counts, checksums, achieved rate,
// lag). The port of hdbbench/load/emitter/pacing.py's Emitter; its rules are in devices/spec/value-function.md.
//
// Attributes are split round-robin into groups, one pushing thread each. A group's mutex guards its
// attributes; the batch a thread takes is pushed without any scheduler lock held, because Tango's push
// takes the device monitor that a command thread may hold while it waits for a group's mutex.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <queue>
#include <string>
#include <vector>

#include "spec.h"
#include "stream.h"

namespace hdbgen {

int64_t round_even_i64(double x);

struct PushItem {
    size_t attr;
    uint64_t k;
    uint8_t quality;
    bool error;
    int64_t ts_us;
    size_t offset;  // into Batch::bytes (or Batch::strings for DevString)
    size_t size;    // bytes (or strings)
};

struct Batch {
    std::vector<PushItem> items;
    std::vector<uint8_t> bytes;
    std::vector<std::string> strings;
    void clear() {
        items.clear();
        bytes.clear();
        strings.clear();
    }
};

// Phases = aligned: every attribute of a rate is due at the same instants (a burst each period, for
// stress); seeded: each is offset by schedule_phase(seed, key) of its period, as a facility's polling.
enum class Phases { Aligned, Seeded };

struct AttrStats {
    std::string name;
    bool running;
    double target_rate_hz, achieved_rate_hz;
    uint64_t emitted, errors, checksum_sum;
    double lag_s;
};

// The last event of an attribute, for synchronous reads.
struct LastEvent {
    bool valid = false;  // false before the first event
    bool error = false;
    uint8_t quality = kValid;
    int64_t ts_us = 0;
    std::vector<uint8_t> bytes;
    std::vector<std::string> strings;
};

class Scheduler {
public:
    static constexpr size_t kMaxCatchUp = 5000;  // events of one attribute per take: no starving the others

    Scheduler(uint64_t seed, const std::string &device, const std::vector<AttrSpec> &specs, bool stamp_at_push,
              int groups, Phases phases = Phases::Aligned);

    size_t size() const { return attrs_.size(); }
    int groups() const { return static_cast<int>(groups_.size()); }
    const AttrSpec &spec(size_t i) const { return attrs_[i]->spec; }
    int find(const std::string &name) const;  // case-insensitive; -1 if unknown

    // Control, from any thread. `which` null = every attribute.
    void start(const std::vector<size_t> *which, int64_t now_us);
    void stop(const std::vector<size_t> *which);
    void set_rate(double rate_hz, const std::vector<size_t> *which, int64_t now_us);
    void burst(uint64_t n, const std::vector<size_t> *which);
    void reset();  // stop, rewind to event 0, zero the statistics
    void quit();

    // Emission, from group g's thread only. Appends the events due at now_us (at most about `budget`)
    // to `out`; returns the time of the next due event (INT64_MAX when none).
    int64_t take_due(int g, int64_t now_us, size_t budget, Batch &out);
    // Wait until `until_us` (epoch µs), a control change of the group, or quit. False after quit.
    bool wait(int g, int64_t until_us);
    // Push-time stamping (Timestamps = push): strictly increasing per attribute.
    int64_t stamp_now(size_t attr, int64_t now_us);
    bool stamp_at_push() const { return stamp_at_push_; }

    // Statistics.
    std::vector<AttrStats> stats(int64_t now_us) const;
    uint64_t total_emitted() const;
    bool any_running() const;
    LastEvent last_event(size_t attr) const;

private:
    struct Attr {
        size_t index;
        int group;
        AttrSpec spec;
        Stream stream;
        double rate_hz;
        double phase;  // fraction of the period the schedule is offset by (0: aligned)
        bool running = false;
        int64_t epoch_us = 0;
        uint64_t epoch_k = 0;
        std::atomic<int64_t> last_ts_us{0};
        int64_t last_pushed_us = 0;  // pushing thread only
        uint64_t burst_left = 0;
        uint64_t generation = 0;
        uint64_t count = 0, sum = 0, errors = 0;
        std::deque<std::pair<double, uint64_t>> recent;  // (time s, count), one per >= 50 ms, at most 64
        LastEvent last;
        Attr(size_t i, int g, const AttrSpec &s, uint64_t seed, const std::string &key, double phase_)
            : index(i), group(g), spec(s), stream(seed, key, s), rate_hz(s.rate_hz), phase(phase_) {}
        int64_t due_us(uint64_t k) const {
            const double periods = static_cast<double>(static_cast<int64_t>(k - epoch_k)) + phase;
            return epoch_us + round_even_i64(periods * 1e6 / rate_hz);
        }
    };
    struct Entry {
        int64_t due_us;
        size_t index;
        uint64_t generation;
        bool operator>(const Entry &o) const {
            return due_us != o.due_us ? due_us > o.due_us : index > o.index;
        }
    };
    struct Group {
        mutable std::mutex mutex;
        std::condition_variable cv;
        bool woken = false;
        std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
        std::vector<size_t> members;
    };

    template <class F>
    void for_selected(const std::vector<size_t> *which, F f);
    void rearm(Attr &a, int64_t now_us);
    void take_attr(Attr &a, int64_t now_us, size_t limit, Batch &out);
    void take_one(Attr &a, int64_t ts_us, int64_t now_us, Batch &out);
    void notify(Group &g);

    bool stamp_at_push_;
    std::vector<std::unique_ptr<Attr>> attrs_;
    std::vector<std::unique_ptr<Group>> groups_;
    std::atomic<bool> quit_{false};
};

}  // namespace hdbgen
