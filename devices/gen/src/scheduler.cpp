// SPDX-License-Identifier: Apache-2.0
#include "scheduler.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "valuefn.h"

namespace hdbgen {

namespace {

std::string lower(std::string s) {
    for (auto &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

int64_t round_even_i64(double x) { return static_cast<int64_t>(std::nearbyint(x)); }

Scheduler::Scheduler(uint64_t seed, const std::string &device, const std::vector<AttrSpec> &specs, bool stamp_at_push,
                     int groups, Phases phases)
    : stamp_at_push_(stamp_at_push) {
    std::vector<std::string> seen;
    for (const auto &s : specs) {
        const std::string low = lower(s.name);
        if (std::find(seen.begin(), seen.end(), low) != seen.end())
            throw std::runtime_error("duplicate attribute name " + s.name + " (Tango names are case-insensitive)");
        seen.push_back(low);
    }
    const int n_groups = std::max(1, std::min<int>(groups, static_cast<int>(std::max<size_t>(1, specs.size()))));
    for (int g = 0; g < n_groups; ++g) groups_.push_back(std::make_unique<Group>());
    for (size_t i = 0; i < specs.size(); ++i) {
        const int g = static_cast<int>(i % static_cast<size_t>(n_groups));
        const std::string key = lower(device + "/" + specs[i].name);
        const double phase = phases == Phases::Seeded ? schedule_phase(seed, key) : 0.0;
        attrs_.push_back(std::make_unique<Attr>(i, g, specs[i], seed, key, phase));
        groups_[g]->members.push_back(i);
    }
}

int Scheduler::find(const std::string &name) const {
    const std::string low = lower(name);
    for (const auto &a : attrs_)
        if (lower(a->spec.name) == low) return static_cast<int>(a->index);
    return -1;
}

template <class F>
void Scheduler::for_selected(const std::vector<size_t> *which, F f) {
    for (auto &gp : groups_) {
        std::lock_guard<std::mutex> lock(gp->mutex);
        bool touched = false;
        for (size_t i : gp->members) {
            if (which && std::find(which->begin(), which->end(), i) == which->end()) continue;
            f(*attrs_[i], *gp);
            touched = true;
        }
        if (touched) {
            gp->woken = true;
            gp->cv.notify_all();
        }
    }
}

void Scheduler::rearm(Attr &a, int64_t now_us) {
    // The schedule restarts from now; the phase (in due_us) keeps each attribute's fraction of the new
    // period, so a rate change does not line every attribute up again.
    a.generation += 1;
    a.epoch_k = a.stream.next_k();
    a.epoch_us = std::max(now_us, a.last_ts_us.load() + 1);
    groups_[a.group]->heap.push({a.due_us(a.epoch_k), a.index, a.generation});
}

void Scheduler::start(const std::vector<size_t> *which, int64_t now_us) {
    for_selected(which, [&](Attr &a, Group &) {
        if (!a.running) {
            a.running = true;
            rearm(a, now_us);
        }
    });
}

void Scheduler::stop(const std::vector<size_t> *which) {
    for_selected(which, [&](Attr &a, Group &) {
        a.running = false;
        a.generation += 1;
    });
}

void Scheduler::set_rate(double rate_hz, const std::vector<size_t> *which, int64_t now_us) {
    if (!(std::isfinite(rate_hz) && rate_hz > 0)) throw std::invalid_argument("rate must be > 0");
    for_selected(which, [&](Attr &a, Group &) {
        a.rate_hz = rate_hz;
        if (a.running) rearm(a, now_us);
    });
}

void Scheduler::burst(uint64_t n, const std::vector<size_t> *which) {
    for_selected(which, [&](Attr &a, Group &g) {
        a.burst_left += n;
        a.generation += 1;  // replaces the queued schedule entry, re-queued after the burst
        g.heap.push({0, a.index, a.generation});
    });
}

void Scheduler::reset() {
    for (auto &gp : groups_) {
        std::lock_guard<std::mutex> lock(gp->mutex);
        for (size_t i : gp->members) {
            Attr &a = *attrs_[i];
            a.stream.rewind();
            a.rate_hz = a.spec.rate_hz;
            a.running = false;
            a.epoch_us = 0;
            a.epoch_k = 0;
            a.burst_left = 0;
            a.generation += 1;
            a.count = a.sum = a.errors = 0;
            a.recent.clear();
            a.last = LastEvent();
        }
        gp->heap = {};
        gp->woken = true;
        gp->cv.notify_all();
    }
}

void Scheduler::quit() {
    quit_ = true;
    for (auto &gp : groups_) {
        std::lock_guard<std::mutex> lock(gp->mutex);
        gp->woken = true;
        gp->cv.notify_all();
    }
}

bool Scheduler::wait(int g, int64_t until_us) {
    Group &gp = *groups_[g];
    std::unique_lock<std::mutex> lock(gp.mutex);
    const auto deadline = std::chrono::system_clock::time_point(std::chrono::microseconds(until_us));
    gp.cv.wait_until(lock, deadline, [&] { return gp.woken || quit_.load(); });
    gp.woken = false;
    return !quit_;
}

int64_t Scheduler::take_due(int g, int64_t now_us, size_t budget, Batch &out) {
    Group &gp = *groups_[g];
    std::lock_guard<std::mutex> lock(gp.mutex);
    const size_t start = out.items.size();
    while (!gp.heap.empty() && gp.heap.top().due_us <= now_us && out.items.size() - start < budget) {
        const Entry e = gp.heap.top();
        gp.heap.pop();
        Attr &a = *attrs_[e.index];
        if (e.generation != a.generation) continue;
        take_attr(a, now_us, std::min(kMaxCatchUp, budget - (out.items.size() - start)), out);
    }
    while (!gp.heap.empty() && gp.heap.top().generation != attrs_[gp.heap.top().index]->generation) gp.heap.pop();
    return gp.heap.empty() ? INT64_MAX : gp.heap.top().due_us;
}

void Scheduler::take_attr(Attr &a, int64_t now_us, size_t limit, Batch &out) {
    size_t count = 0;
    while (a.burst_left && count < limit) {
        a.burst_left -= 1;
        take_one(a, std::max(now_us, a.last_ts_us.load() + 1), now_us, out);
        ++count;
    }
    if (a.running && !a.burst_left) {
        if (count) {  // a burst moved time on: the regular schedule restarts after it
            a.epoch_k = a.stream.next_k();
            a.epoch_us = a.last_ts_us.load() + round_even_i64(1e6 / a.rate_hz);
        }
        while (count < limit && a.due_us(a.stream.next_k()) <= now_us) {
            take_one(a, std::max(a.due_us(a.stream.next_k()), a.last_ts_us.load() + 1), now_us, out);
            ++count;
        }
    }
    Group &gp = *groups_[a.group];
    if (a.burst_left) gp.heap.push({now_us, a.index, a.generation});
    else if (a.running) gp.heap.push({a.due_us(a.stream.next_k()), a.index, a.generation});
}

void Scheduler::take_one(Attr &a, int64_t ts_us, int64_t now_us, Batch &out) {
    Stream &s = a.stream;
    s.next();
    a.count += 1;
    a.sum += s.digest();
    a.errors += s.error();
    a.last_ts_us = ts_us;
    if (a.recent.empty() || static_cast<double>(now_us) - a.recent.back().first * 1e6 >= 50000.0) {
        a.recent.emplace_back(static_cast<double>(now_us) / 1e6, a.count);
        if (a.recent.size() > 64) a.recent.pop_front();
    }
    PushItem item{a.index, s.k(), s.quality(), s.error(), ts_us, 0, 0};
    LastEvent &last = a.last;
    last.valid = true;
    last.error = s.error();
    last.quality = s.quality();
    last.ts_us = ts_us;
    if (a.spec.kind() == Kind::String) {
        item.offset = out.strings.size();
        item.size = s.strings().size();
        out.strings.insert(out.strings.end(), s.strings().begin(), s.strings().end());
        last.strings = s.strings();
    } else {
        out.bytes.resize((out.bytes.size() + 7) & ~size_t{7});  // elements aligned for Tango's typed pointers
        item.offset = out.bytes.size();
        item.size = s.raw().size();
        out.bytes.insert(out.bytes.end(), s.raw().begin(), s.raw().end());
        last.bytes = s.raw();
    }
    out.items.push_back(item);
}

int64_t Scheduler::stamp_now(size_t attr, int64_t now_us) {
    Attr &a = *attrs_[attr];
    const int64_t ts = std::max(now_us, a.last_pushed_us + 1);
    a.last_pushed_us = ts;
    a.last_ts_us = ts;
    return ts;
}

std::vector<AttrStats> Scheduler::stats(int64_t now_us) const {
    std::vector<AttrStats> out(attrs_.size());
    const double now_s = static_cast<double>(now_us) / 1e6;
    for (const auto &gp : groups_) {
        std::lock_guard<std::mutex> lock(gp->mutex);
        for (size_t i : gp->members) {
            const Attr &a = *attrs_[i];
            double rate = 0;
            std::pair<double, uint64_t> first{0, 0}, last{0, 0};
            size_t n = 0;
            for (const auto &r : a.recent) {
                if (now_s - r.first > 5.0) continue;
                if (n++ == 0) first = r;
                last = r;
            }
            if (n >= 2 && last.first > first.first)
                rate = static_cast<double>(last.second - first.second) / (last.first - first.first);
            double lag = 0;
            if (a.running) lag = std::max(0.0, (static_cast<double>(now_us) - static_cast<double>(a.due_us(a.stream.next_k()))) / 1e6);
            out[i] = {a.spec.name, a.running, a.rate_hz, rate, a.count, a.errors, a.sum, lag};
        }
    }
    return out;
}

uint64_t Scheduler::total_emitted() const {
    uint64_t n = 0;
    for (const auto &gp : groups_) {
        std::lock_guard<std::mutex> lock(gp->mutex);
        for (size_t i : gp->members) n += attrs_[i]->count;
    }
    return n;
}

bool Scheduler::any_running() const {
    for (const auto &gp : groups_) {
        std::lock_guard<std::mutex> lock(gp->mutex);
        for (size_t i : gp->members)
            if (attrs_[i]->running) return true;
    }
    return false;
}

LastEvent Scheduler::last_event(size_t attr) const {
    const Attr &a = *attrs_[attr];
    std::lock_guard<std::mutex> lock(groups_[a.group]->mutex);
    return a.last;
}

}  // namespace hdbgen
