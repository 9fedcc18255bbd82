// SPDX-License-Identifier: Apache-2.0
#include "writer_loop.h"

#include <algorithm>
#include <optional>

#include "rate_cap.h"

namespace hdbbench {

using steady = std::chrono::steady_clock;

WriterLoop::WriterLoop(std::unique_ptr<Writer> writer, EventQueue &queue, WriterLoopOptions opts,
                       BatchObserver observer, Logger log)
    : writer_(std::move(writer)), queue_(queue), opts_(opts), observer_(std::move(observer)),
      log_(quiet_if_empty(std::move(log))) {}

WriterLoop::~WriterLoop() { stop(); }

void WriterLoop::start() { StoppableThread::start("hdb-writer"); }

void WriterLoop::stop() {
    request_stop();
    queue_.close();
    join();
}

WriterState WriterLoop::state() const {
    WriterState s;
    s.connected = connected_;
    s.reconnects = reconnects_;
    s.inflight = inflight_;
    if (s.inflight) s.inflight_oldest = TimePoint(std::chrono::microseconds(inflight_oldest_us_.load()));
    std::lock_guard<std::mutex> lock(error_mutex_);
    s.error = error_;
    return s;
}

void WriterLoop::set_error(const std::string &e) {
    std::lock_guard<std::mutex> lock(error_mutex_);
    if (!e.empty() && e != error_) log_("error", e);
    error_ = e;
}

bool WriterLoop::ensure_connected(std::chrono::milliseconds &backoff, bool &ever_connected) {
    if (writer_->connected()) return true;
    try {
        writer_->connect();
        connected_ = true;
        backoff = opts_.reconnect_min;
        set_error("");
        log_("info", std::string(ever_connected ? "re" : "") + "connected to " + writer_->name());
        ever_connected = true;
        return true;
    } catch (const std::exception &e) {
        connected_ = false;
        set_error(e.what());
        if (!stopping()) wait_for(backoff);
        backoff = std::min(opts_.reconnect_max, backoff * 2);
        return false;
    }
}

bool WriterLoop::write(std::vector<Record> &batch) {
    inflight_oldest_us_ = batch.front().recv_time.time_since_epoch().count();
    inflight_ = batch.size();
    const auto t0 = steady::now();
    WriteResult res;
    auto reject_all = [&](const std::string &why) {
        res = WriteResult{};
        for (const auto &r : batch) res.rejected.push_back({r.att_name, why});
        log_("error", "batch rejected: " + why);
    };
    try {
        res = writer_->write_batch(batch);
    } catch (const DbError &e) {
        if (e.connection_lost()) {
            writer_->disconnect();
            connected_ = false;
            ++reconnects_;
            {
                std::lock_guard<std::mutex> lock(error_mutex_);
                error_ = e.what();
            }
            if (!opts_.drop_batch_on_lost_connection) {
                log_("error", std::string("database unavailable, batch kept for retry: ") + e.what());
                return false;
            }
            reject_all(std::string("dropped on a lost connection (drop_batch_on_lost_connection): ") + e.what());
        } else {
            reject_all(e.what());
        }
    } catch (const std::exception &e) {
        reject_all(e.what());
    }
    const double commit_s = std::chrono::duration<double>(steady::now() - t0).count();
    if (!res.rejected.empty())
        log_("error", "rows rejected by the database (" + std::to_string(res.rejected.size()) +
                          "), first: " + res.rejected.front().att_name + ": " + res.rejected.front().error);
    observer_(batch, res, commit_s, now_us());
    queue_.committed(batch);
    inflight_ = 0;
    return true;
}

bool WriterLoop::wait_until(steady::time_point t) {
    // wait_for() also returns when woken, hence the loop until the time is reached.
    for (auto now = steady::now(); now < t; now = steady::now())
        if (wait_for(t - now)) return false;
    return true;
}

void WriterLoop::run() {
    std::chrono::milliseconds backoff = opts_.reconnect_min;
    std::vector<Record> batch;
    bool ever_connected = false;
    std::optional<steady::time_point> stop_deadline;
    const std::size_t batch_size = capped_batch_size(opts_.batch_size, opts_.max_events_per_s);
    RateCap cap(opts_.max_events_per_s, batch_size);
    std::optional<steady::time_point> next_batch_at;
    for (;;) {
        if (stopping()) {
            if (!stop_deadline) stop_deadline = steady::now() + opts_.drain_at_stop;
            if (!connected_ || steady::now() > *stop_deadline) break;
            if (batch.empty()) {
                // The drain is not capped (drain_at_stop bounds it): full batches.
                batch = queue_.pop_batch(opts_.batch_size, std::chrono::milliseconds(0), std::chrono::milliseconds(0));
                if (batch.empty()) break;
            }
        }
        if (!ensure_connected(backoff, ever_connected)) {
            if (stopping()) break;
            continue;
        }
        if (batch.empty()) {
            // Events wait in the queue (and are lost when it is full) while the cap holds the writer.
            if (next_batch_at && !wait_until(*next_batch_at)) continue;
            batch = queue_.pop_batch(batch_size, opts_.flush_interval, std::chrono::milliseconds(500));
            if (batch.empty()) continue;
        }
        const std::size_t events = cap.active() ? count_events(batch) : 0;
        if (write(batch)) {
            batch.clear();
            if (cap.active()) next_batch_at = cap.next_allowed(events, steady::now());
        }
    }
    inflight_ = 0;
}

}  // namespace hdbbench
