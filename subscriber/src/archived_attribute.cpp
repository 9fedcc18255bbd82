// SPDX-License-Identifier: Apache-2.0
#include "archived_attribute.h"

#include <algorithm>

namespace hdbbench {

using steady = std::chrono::steady_clock;
using Lock = std::lock_guard<std::mutex>;

namespace {
double min_of(double current, double v) { return current < 0 ? v : std::min(current, v); }
}  // namespace

Attribute::Attribute(AttributeSpec spec, AttributeTypes types, AttrMode mode)
    : name_(spec.name), spec_(std::move(spec)), types_(types), mode_(mode),
      start_history_pending_(mode == AttrMode::Started) {}

AttributeTypes Attribute::types() const {
    Lock lock(mutex_);
    return types_;
}

AttributeSpec Attribute::spec() const {
    Lock lock(mutex_);
    return spec_;
}

AttrMode Attribute::mode() const {
    Lock lock(mutex_);
    return mode_;
}

bool Attribute::faulty_locked() const {
    return mode_ == AttrMode::Started && (!subscribed_ || error_since_good_ || periodic_timeout_ || db_errors_ > 0);
}

std::string Attribute::error_locked() const {
    if (!faulty_locked()) return {};
    if (periodic_timeout_) return "Timeout on periodic event";
    if (!subscribe_error_.empty()) return subscribe_error_;
    if (db_errors_) return db_error_.empty() ? "Storing Error" : db_error_;
    if (!subscribed_) return "Not subscribed";
    return "Error";
}

AttributeView Attribute::view() const {
    Lock lock(mutex_);
    AttributeView v;
    v.spec = spec_;
    v.mode = mode_;
    v.subscribed = subscribed_;
    v.using_change_event = using_change_event_;
    v.periodic_timeout = periodic_timeout_;
    v.faulty = faulty_locked();
    v.error = error_locked();
    v.subscribe_error = db_errors_ && subscribe_error_.empty() ? db_error_ : subscribe_error_;
    v.events = events_;
    v.ok = ok_;
    v.nok = nok_;
    v.db_errors = db_errors_;
    v.resubscribes = resubscribes_;
    v.store_time_min_s = store_time_min_s_;
    v.store_time_max_s = store_time_max_s_;
    v.proc_time_min_s = proc_time_min_s_;
    v.proc_time_max_s = proc_time_max_s_;
    v.store_time_sum_s = store_time_sum_s_;
    v.proc_time_sum_s = proc_time_sum_s_;
    v.record_freq = record_freq_;
    v.failure_freq = failure_freq_;
    v.record_freq_inst = record_freq_inst_;
    v.failure_freq_inst = failure_freq_inst_;
    return v;
}

Record Attribute::record_locked(RecordKind kind) const {
    Record r;
    r.kind = kind;
    r.att_name = name_;
    r.data_type = static_cast<std::int8_t>(types_.data_type);
    r.data_format = static_cast<std::int8_t>(types_.data_format);
    r.write_type = static_cast<std::int8_t>(types_.write_type);
    r.ttl_hours = spec_.ttl_hours;
    return r;
}

Record Attribute::history_locked(const char *event) {
    Record r = record_locked(RecordKind::History);
    TimePoint t = now_us();
    if (t <= last_history_time_) t = last_history_time_ + std::chrono::microseconds(1);
    last_history_time_ = t;
    r.data_time = t;
    r.recv_time = t;
    r.text = event;
    return r;
}

Record Attribute::history(const char *event) {
    Lock lock(mutex_);
    return history_locked(event);
}

std::optional<Record> Attribute::announce() {
    Lock lock(mutex_);
    if (types_.data_type == kUnknown) {
        add_pending_ = true;  // queued with the first configuration event
        return std::nullopt;
    }
    return history_locked(kAddEvent);
}

ModeChange Attribute::set_mode(AttrMode m) {
    Lock lock(mutex_);
    ModeChange change;
    if (mode_ == m) return change;
    const AttrMode old = mode_;
    mode_ = m;
    const char *event = "stop";
    if (m == AttrMode::Started) {
        event = "start";
        change.subscribe = !subscribed_;
    } else if (m == AttrMode::Paused) {
        event = "pause";
        change.subscribe = !subscribed_;  // paused stays subscribed
    } else {
        change.unsubscribe = subscribed_ || old != AttrMode::Stopped;
    }
    if (types_.data_type == kUnknown && m == AttrMode::Started) {
        start_history_pending_ = true;  // written when the type is known (first configuration event)
        return change;
    }
    change.history = history_locked(event);
    return change;
}

void Attribute::set_strategy(std::vector<std::string> contexts) {
    Lock lock(mutex_);
    spec_.strategy = std::move(contexts);
}

Record Attribute::set_ttl(std::uint32_t hours) {
    Lock lock(mutex_);
    spec_.ttl_hours = hours;
    Record r = history_locked("update_ttl");
    r.ttl_hours = hours;
    return r;
}

bool Attribute::faulty_for_stop() const {
    Lock lock(mutex_);
    return mode_ == AttrMode::Started && (!subscribed_ || !subscribe_error_.empty() || error_since_good_ || periodic_timeout_);
}

bool Attribute::needs_subscription() const {
    Lock lock(mutex_);
    return mode_ != AttrMode::Stopped && !subscribed_;
}

bool Attribute::stop_on_shutdown() const {
    Lock lock(mutex_);
    return mode_ == AttrMode::Started && types_.data_type != kUnknown;
}

void Attribute::subscribed(std::shared_ptr<void> handle, bool change_event, const std::string &warning) {
    Lock lock(mutex_);
    subscription_ = std::move(handle);
    using_change_event_ = change_event;
    subscribed_ = true;
    subscribe_error_ = warning;
    last_event_ = subscribed_at_ = steady::now();
    events_since_subscribed_ = 0;  // Tango delivered the initial value inside the subscription call
}

void Attribute::subscription_failed(const std::string &error) {
    Lock lock(mutex_);
    subscribed_ = false;
    subscribe_error_ = error;
}

std::shared_ptr<void> Attribute::take_subscription() {
    Lock lock(mutex_);
    subscribed_ = false;
    return std::move(subscription_);
}

std::optional<Liveness> Attribute::liveness() const {
    Lock lock(mutex_);
    if (mode_ != AttrMode::Started || !subscribed_) return std::nullopt;
    return Liveness{subscribed_at_, last_event_, events_since_subscribed_, archive_period_, silent_resubscribed_};
}

std::shared_ptr<void> Attribute::take_for_resubscription(bool silent) {
    Lock lock(mutex_);
    subscribed_ = false;
    ++resubscribes_;
    if (silent) silent_resubscribed_ = true;
    return std::move(subscription_);
}

bool Attribute::accept_data(Record &r) {
    Lock lock(mutex_);
    if (mode_ != AttrMode::Started) return false;  // stopped/paused: dropped, as HDB++ does
    ++events_;
    error_since_good_ = false;
    subscribe_error_.clear();
    periodic_timeout_ = false;
    last_event_ = steady::now();
    ++events_since_subscribed_;
    silent_resubscribed_ = false;
    if (types_.write_type != kUnknown) r.write_type = static_cast<std::int8_t>(types_.write_type);
    r.ttl_hours = spec_.ttl_hours;
    return true;
}

std::optional<Record> Attribute::accept_error(const std::string &desc, TimePoint when) {
    Lock lock(mutex_);
    subscribe_error_ = desc;
    if (mode_ != AttrMode::Started) return std::nullopt;
    ++events_;
    ++nok_;
    last_event_ = steady::now();
    ++events_since_subscribed_;
    silent_resubscribed_ = false;
    if (error_since_good_ || types_.data_type == kUnknown) return std::nullopt;  // only the first after a good one
    error_since_good_ = true;
    Record r = record_locked(RecordKind::Error);
    r.quality = kQualityInvalid;
    r.data_time = when;
    r.recv_time = now_us();
    r.text = desc;
    return r;
}

std::vector<Record> Attribute::accept_config(AttributeTypes types, const ParamInfo &param) {
    Lock lock(mutex_);
    std::vector<Record> out;
    types_ = types;
    try {
        const long ms = param.archive_period.empty() ? 0 : std::stol(param.archive_period);
        archive_period_ = std::chrono::milliseconds(ms > 0 ? ms : 0);
    } catch (const std::exception &) {
        archive_period_ = std::chrono::milliseconds(0);
    }
    if (add_pending_) {
        add_pending_ = false;
        out.push_back(history_locked(kAddEvent));
    }
    if (start_history_pending_ && mode_ == AttrMode::Started) {
        start_history_pending_ = false;
        out.push_back(history_locked("start"));
    }
    if (!last_param_ || !(*last_param_ == param)) {
        last_param_ = std::make_shared<ParamInfo>(param);
        Record r = record_locked(RecordKind::Param);
        r.recv_time = r.data_time = now_us();
        r.param = last_param_;
        out.push_back(std::move(r));
    }
    return out;
}

void Attribute::config_error(const std::string &desc) {
    Lock lock(mutex_);
    subscribe_error_ = desc;
}

void Attribute::account_stored(const StoredRows &s) {
    Lock lock(mutex_);
    ok_ += s.rows;
    store_time_sum_s_ += s.commit_s * static_cast<double>(s.rows);
    store_time_min_s_ = min_of(store_time_min_s_, s.commit_s);
    store_time_max_s_ = std::max(store_time_max_s_, s.commit_s);
    proc_time_sum_s_ += s.proc_sum_s;
    proc_time_min_s_ = min_of(proc_time_min_s_, s.proc_min_s);
    proc_time_max_s_ = std::max(proc_time_max_s_, s.proc_max_s);
}

void Attribute::account_rejected(std::uint64_t n, const std::string &error) {
    Lock lock(mutex_);
    nok_ += n;
    db_errors_ += n;
    db_error_ = error;
}

void Attribute::tick(double second_s, bool window_done, steady::time_point now, std::chrono::seconds periodic_delay) {
    Lock lock(mutex_);
    record_freq_inst_ = static_cast<double>(ok_ - std::min(ok_, ok_sec_start_)) / second_s;
    failure_freq_inst_ = static_cast<double>(nok_ - std::min(nok_, nok_sec_start_)) / second_s;
    ok_sec_start_ = ok_;
    nok_sec_start_ = nok_;
    if (window_done) {
        record_freq_ = static_cast<double>(ok_ - std::min(ok_, ok_window_start_));
        failure_freq_ = static_cast<double>(nok_ - std::min(nok_, nok_window_start_));
        ok_window_start_ = ok_;
        nok_window_start_ = nok_;
    }
    if (mode_ == AttrMode::Started && subscribed_ && archive_period_.count() > 0 &&
        now - last_event_ > archive_period_ + periodic_delay)
        periodic_timeout_ = true;
}

void Attribute::reset_statistics() {
    Lock lock(mutex_);
    events_ = ok_ = nok_ = db_errors_ = 0;
    store_time_min_s_ = store_time_max_s_ = proc_time_min_s_ = proc_time_max_s_ = -1;
    store_time_sum_s_ = proc_time_sum_s_ = 0;
    ok_window_start_ = nok_window_start_ = ok_sec_start_ = nok_sec_start_ = 0;
    record_freq_ = failure_freq_ = record_freq_inst_ = failure_freq_inst_ = 0;
}

}  // namespace hdbbench
