// SPDX-License-Identifier: Apache-2.0
#include "statistics.h"

#include <algorithm>

namespace hdbbench {

using steady = std::chrono::steady_clock;
using dsec = std::chrono::duration<double>;

namespace {
std::chrono::milliseconds window_ms(std::chrono::seconds s) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(s);
}

std::uint64_t non_negative_us(std::chrono::microseconds d) {
    return static_cast<std::uint64_t>(std::max<std::int64_t>(0, d.count()));
}

double seconds_between(TimePoint from, TimePoint to) {
    return std::max(0.0, static_cast<double>((to - from).count()) * 1e-6);
}

AgeFigures age_figures(const LogHistogram &h) {
    return {static_cast<double>(h.quantile(0.5)) * 1e-6, static_cast<double>(h.quantile(0.99)) * 1e-6,
            static_cast<double>(h.max()) * 1e-6};
}

std::int64_t current_second() {
    return std::chrono::duration_cast<std::chrono::seconds>(steady::now().time_since_epoch()).count();
}

// The smallest positive of two minima (-1 or 0 mean "none yet").
double positive_min(double current, double v) { return current == 0 ? v : std::min(current, v); }

// The HDB++ per-attribute lists and totals of the snapshot.
void fill_attributes(ArchiverSnapshot &s, const std::vector<AttributeView> &attributes,
                     const Statistics::StrategyText &strategy_text) {
    for (const AttributeView &v : attributes) {
        const std::string &n = v.spec.name;
        s.all.push_back(n);
        if (v.mode == AttrMode::Started) s.started.push_back(n);
        else if (v.mode == AttrMode::Paused) s.paused.push_back(n);
        else s.stopped.push_back(n);
        if (v.mode != AttrMode::Stopped) {
            (v.faulty ? s.nok : s.ok).push_back(n);
            if (!v.subscribed) s.pending.push_back(n);
        }
        s.errors.push_back(v.mode != AttrMode::Stopped ? v.error : std::string());
        s.strategies.push_back(strategy_text(v.spec));
        s.record_freq_list.push_back(v.record_freq);
        s.failure_freq_list.push_back(v.failure_freq);
        s.record_freq_inst_list.push_back(v.record_freq_inst);
        s.failure_freq_inst_list.push_back(v.failure_freq_inst);
        s.event_number_list.push_back(static_cast<std::int32_t>(std::min<std::uint64_t>(v.events, INT32_MAX)));
        s.ttl_list.push_back(v.spec.ttl_hours);
        s.record_freq += v.record_freq;
        s.resubscribes += v.resubscribes;
        s.failure_freq += v.failure_freq;
        s.record_freq_inst += v.record_freq_inst;
        s.failure_freq_inst += v.failure_freq_inst;
        if (v.store_time_max_s >= 0) {
            s.max_store_time_s = std::max(s.max_store_time_s, v.store_time_max_s);
            s.min_store_time_s = positive_min(s.min_store_time_s, v.store_time_min_s);
        }
        if (v.proc_time_max_s >= 0) {
            s.max_processing_time_s = std::max(s.max_processing_time_s, v.proc_time_max_s);
            s.min_processing_time_s = positive_min(s.min_processing_time_s, v.proc_time_min_s);
        }
    }
}

// Queue and spool figures, with the batch being written counted as pending.
void fill_queue(ArchiverSnapshot &s, const QueueSnapshot &q, const WriterState &w) {
    s.pending_events = q.pending() + w.inflight;
    s.max_pending_events = std::max<std::uint64_t>(q.max_pending, s.pending_events);
    s.spooled_events = q.in_spool;
    s.spooled_total = q.spooled_total;
    s.spool_bytes = q.spool_bytes;
    s.lost_events = q.lost;
    s.lost_queue_full = q.lost_queue_full;
    s.lost_spool_full = q.lost_spool_full;
    s.wal_replayed = q.wal_replayed;
    s.wal_unlogged = q.wal_unlogged;
    s.spool_mode = q.write_ahead ? 1 : 0;
    s.wal_failing = q.wal_failing;
    s.memory_queue_capacity = q.capacity;
    s.memory_queue_max = q.max_in_memory;
    s.queue_error = q.last_error;
    const std::optional<TimePoint> oldest = w.inflight ? w.inflight_oldest : q.oldest_recv;
    s.pending_age_s = oldest ? seconds_between(*oldest, now_us()) : 0.0;
    s.reconnects = w.reconnects;
    s.db_connected = w.connected;
    s.db_error = w.error;
}
}  // namespace

Statistics::Statistics(std::chrono::seconds window)
    : event_age_us_(window_ms(window)), reception_age_us_(window_ms(window)), in_subscriber_us_(window_ms(window)),
      seconds_(static_cast<std::size_t>(std::max<long>(1, static_cast<long>(window.count())))),
      reset_time_(steady::now()), snapshot_(std::make_shared<ArchiverSnapshot>()) {}

BatchAccount Statistics::account_batch(const std::vector<Record> &batch, const WriteResult &res, double commit_s,
                                       TimePoint commit_time) {
    BatchAccount out;
    for (const auto &r : res.rejected) {
        BatchAccount::Rejected &x = out.rejected[r.att_name];
        if (!x.rows) x.error = r.error;
        ++x.rows;
    }
    db_errors_ += res.rejected.size();
    duplicates_ += res.duplicates;
    std::uint64_t stored = 0;
    LogHistogram event_age, reception_age, in_subscriber;  // this batch, merged into the windows at once
    for (const auto &r : batch) {
        if (r.kind != RecordKind::Data && r.kind != RecordKind::Error) continue;
        if (out.rejected.count(r.att_name)) continue;
        ++stored;
        if (r.kind != RecordKind::Data) continue;
        // Age at commit = age at reception (device + Tango delivery) + time in the subscriber.
        event_age.record(non_negative_us(commit_time - r.data_time));
        reception_age.record(non_negative_us(r.recv_time - r.data_time));
        in_subscriber.record(non_negative_us(commit_time - r.recv_time));
        const double proc_s = seconds_between(r.recv_time, commit_time);
        StoredRows &a = out.stored[r.att_name];
        ++a.rows;
        a.commit_s = commit_s;
        a.proc_sum_s += proc_s;
        a.proc_min_s = a.proc_min_s < 0 ? proc_s : std::min(a.proc_min_s, proc_s);
        a.proc_max_s = std::max(a.proc_max_s, proc_s);
    }
    const auto now = steady::now();
    event_age_us_.add(event_age, now);
    reception_age_us_.add(reception_age, now);
    in_subscriber_us_.add(in_subscriber, now);
    rows_stored_ += stored;
    std::lock_guard<std::mutex> lock(mutex_);
    last_batch_size_ = batch.size();
    last_batch_commit_s_ = commit_s;
    const std::int64_t sec = current_second();
    SecondSlot &slot = seconds_[static_cast<std::size_t>(sec % static_cast<std::int64_t>(seconds_.size()))];
    if (slot.second != sec) slot = SecondSlot{sec, 0, 0, 0};
    slot.rows += stored;
    slot.batches += 1;
    slot.commit_s += commit_s;
    return out;
}

void Statistics::reset() {
    event_age_us_.reset();
    reception_age_us_.reset();
    in_subscriber_us_.reset();
    std::lock_guard<std::mutex> lock(mutex_);
    reset_time_ = steady::now();
    for (auto &s : seconds_) s = SecondSlot{};
}

void Statistics::fill_batches(ArchiverSnapshot &s) const {
    s.last_batch_size = last_batch_size_;
    s.last_batch_commit_s = last_batch_commit_s_;
    s.seconds_since_reset = dsec(steady::now() - reset_time_).count();
    const std::int64_t sec = current_second();
    const auto n = static_cast<std::int64_t>(seconds_.size());
    std::uint64_t rows = 0, batches = 0, last_rows = 0;
    double commit = 0;
    for (const auto &slot : seconds_) {
        if (slot.second <= sec - n || slot.second > sec) continue;
        rows += slot.rows;
        batches += slot.batches;
        commit += slot.commit_s;
        if (slot.second == sec - 1) last_rows = slot.rows;
    }
    s.rows_per_s_inst = static_cast<double>(last_rows);
    const double span = std::min<double>(static_cast<double>(n), std::max(1.0, s.seconds_since_reset));
    s.rows_per_s_window = static_cast<double>(rows) / span;
    s.mean_batch_size = batches ? static_cast<double>(rows) / static_cast<double>(batches) : 0;
    s.mean_batch_commit_s = batches ? commit / static_cast<double>(batches) : 0;
}

void Statistics::publish(const std::vector<AttributeView> &attributes, const StrategyText &strategy_text,
                         QueueSnapshot queue, const WriterState &writer) {
    auto s = std::make_shared<ArchiverSnapshot>();
    fill_attributes(*s, attributes, strategy_text);
    fill_queue(*s, queue, writer);
    s->event_age = age_figures(event_age_us_.snapshot());
    s->reception_age = age_figures(reception_age_us_.snapshot());
    s->time_in_subscriber = age_figures(in_subscriber_us_.snapshot());
    s->db_errors = db_errors_;
    s->rows_stored = rows_stored_;
    s->duplicates = duplicates_;
    std::lock_guard<std::mutex> lock(mutex_);
    fill_batches(*s);
    snapshot_ = std::move(s);
}

std::shared_ptr<const ArchiverSnapshot> Statistics::snapshot() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return snapshot_;
}

}  // namespace hdbbench
