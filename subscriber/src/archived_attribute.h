// SPDX-License-Identifier: Apache-2.0
// One archived attribute: its specification (name, strategy, TTL), archiving mode, subscription
// state and counters. Every field is private and guarded by the attribute's own mutex; callers use
// the methods below, which lock for their own duration, and read copies (AttributeView).
// Tango-free: the Tango layer sees an attribute only through name() and types().
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "config.h"
#include "record.h"

namespace hdbbench {

enum class AttrMode { Started, Paused, Stopped };

struct AttributeTypes {
    int data_type = kUnknown, data_format = kUnknown, write_type = kUnknown;
};

// What changing the mode asks of the caller.
struct ModeChange {
    std::optional<Record> history;  // history event to queue
    bool subscribe = false;         // the attribute needs a subscription
    bool unsubscribe = false;       // its subscription must go
};

// Rows stored for one attribute in one batch.
struct StoredRows {
    std::uint64_t rows = 0;
    double commit_s = 0;                                // the batch's commit time
    double proc_min_s = -1, proc_max_s = -1, proc_sum_s = 0;  // reception → commit, per row
};

// What the subscription watchdog needs of a started, subscribed attribute (AttributeRegistry).
struct Liveness {
    std::chrono::steady_clock::time_point subscribed_at, last_event;
    std::uint64_t events_since_subscribed = 0;  // the initial value that Tango reads while subscribing excluded
    std::chrono::milliseconds archive_period{0};  // the expected period, 0 when the configuration gives none
    bool silent_resubscribed = false;  // resubscribed for a silence since its last event
};

// A copy of an attribute's state, for snapshots and status texts.
struct AttributeView {
    AttributeSpec spec;
    AttrMode mode = AttrMode::Stopped;
    bool subscribed = false, using_change_event = false, periodic_timeout = false, faulty = false;
    std::string error;  // why it is faulty ("" when it is not)
    std::string subscribe_error;
    std::uint64_t events = 0, ok = 0, nok = 0, db_errors = 0;
    std::uint64_t resubscribes = 0;  // by the watchdog, since the attribute was added (not reset)
    double store_time_min_s = -1, store_time_max_s = -1, proc_time_min_s = -1, proc_time_max_s = -1;
    double store_time_sum_s = 0, proc_time_sum_s = 0;
    double record_freq = 0, failure_freq = 0, record_freq_inst = 0, failure_freq_inst = 0;
};

class Attribute {
public:
    Attribute(AttributeSpec spec, AttributeTypes types, AttrMode mode);
    Attribute(const Attribute &) = delete;
    Attribute &operator=(const Attribute &) = delete;

    const std::string &name() const { return name_; }
    AttributeTypes types() const;
    AttributeSpec spec() const;
    AttrMode mode() const;
    AttributeView view() const;

    // Registry side.
    ModeChange set_mode(AttrMode m);
    void set_strategy(std::vector<std::string> contexts);
    Record set_ttl(std::uint32_t hours);  // returns the update_ttl history record
    Record history(const char *event);
    // The `add` event that creates the att_conf row (AttributeAdd): now when the type is known, else
    // with the first configuration event. Attributes of the AttributeList are expected to exist.
    std::optional<Record> announce();
    bool faulty_for_stop() const;
    bool needs_subscription() const;
    bool stop_on_shutdown() const;  // started with a known type: gets a `stop` event at clean shutdown

    // Subscription side.
    void subscribed(std::shared_ptr<void> handle, bool change_event, const std::string &warning);
    void subscription_failed(const std::string &error);
    std::shared_ptr<void> take_subscription();
    // Started and subscribed: what the watchdog judges; else nothing.
    std::optional<Liveness> liveness() const;
    // The watchdog drops the subscription (the next pass subscribes again); `silent`: the attribute
    // never delivered since subscribing (that reason is acted on once until it delivers).
    std::shared_ptr<void> take_for_resubscription(bool silent);

    // Event side: each returns the records to queue (none when the event is dropped).
    bool accept_data(Record &r);
    std::optional<Record> accept_error(const std::string &desc, TimePoint when);
    std::vector<Record> accept_config(AttributeTypes types, const ParamInfo &param);
    void config_error(const std::string &desc);

    // Statistics side.
    void account_stored(const StoredRows &s);
    void account_rejected(std::uint64_t n, const std::string &error);
    void tick(double second_s, bool window_done, std::chrono::steady_clock::time_point now,
              std::chrono::seconds periodic_delay);
    void reset_statistics();

private:
    Record record_locked(RecordKind kind) const;  // a record of this attribute, its types and TTL
    Record history_locked(const char *event);
    bool faulty_locked() const;
    std::string error_locked() const;

    const std::string name_;
    mutable std::mutex mutex_;
    AttributeSpec spec_;
    AttributeTypes types_;
    AttrMode mode_;
    bool subscribed_ = false, using_change_event_ = false;
    std::string subscribe_error_;     // last subscription / event error
    std::string db_error_;            // last reason the database refused a row
    bool error_since_good_ = false;   // an error row was already queued since the last good event
    bool start_history_pending_ = false;
    bool add_pending_ = false;
    std::chrono::milliseconds archive_period_{0};
    std::chrono::steady_clock::time_point last_event_{};
    std::chrono::steady_clock::time_point subscribed_at_{};
    std::uint64_t events_since_subscribed_ = 0, resubscribes_ = 0;
    bool silent_resubscribed_ = false;
    bool periodic_timeout_ = false;
    TimePoint last_history_time_{};
    std::shared_ptr<const ParamInfo> last_param_;
    std::shared_ptr<void> subscription_;  // the subscription layer's handle, opaque here
    std::uint64_t events_ = 0, ok_ = 0, nok_ = 0, db_errors_ = 0;
    double store_time_min_s_ = -1, store_time_max_s_ = -1, proc_time_min_s_ = -1, proc_time_max_s_ = -1;
    double store_time_sum_s_ = 0, proc_time_sum_s_ = 0;
    std::uint64_t ok_window_start_ = 0, nok_window_start_ = 0, ok_sec_start_ = 0, nok_sec_start_ = 0;
    double record_freq_ = 0, failure_freq_ = 0, record_freq_inst_ = 0, failure_freq_inst_ = 0;
};

using AttributePtr = std::shared_ptr<Attribute>;

}  // namespace hdbbench
