// SPDX-License-Identifier: Apache-2.0
// The archiver core, free of Tango: the attribute registry (strategies, contexts, TTL, start/stop/
// pause), the event path (callbacks → EventQueue → writer thread → Writer), and statistics published
// as immutable snapshots. The Tango layer plugs in through SubscriptionBackend and feeds events with
// on_data/on_error/on_config.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config.h"
#include "event_queue.h"
#include "histogram.h"
#include "record.h"
#include "stoppable_thread.h"
#include "writer.h"

namespace hdbbench {

enum class AttrMode { Started, Paused, Stopped };

// One archived attribute. Fields are guarded by `mutex`; the Tango layer keeps its subscription
// handle in `subscription` (opaque here).
struct AttributeEntry {
    explicit AttributeEntry(AttributeSpec s) : spec(std::move(s)) {}
    mutable std::mutex mutex;
    AttributeSpec spec;
    int data_type = kUnknown, data_format = kUnknown, write_type = kUnknown;
    AttrMode mode = AttrMode::Stopped;
    bool subscribed = false;          // archive (or change) event subscription in place
    bool using_change_event = false;
    std::string subscribe_error;      // last subscription / event error
    bool error_since_good = false;    // an error row was already queued since the last good event
    bool start_history_pending = false;
    std::chrono::milliseconds archive_period{0};
    std::chrono::steady_clock::time_point last_event{};
    bool periodic_timeout = false;
    TimePoint last_history_time{};
    std::shared_ptr<ParamInfo> last_param;
    // counters
    std::uint64_t events = 0;        // events received (data + error)
    std::uint64_t ok = 0;            // rows stored
    std::uint64_t nok = 0;           // error events + rejected rows
    std::uint64_t db_errors = 0;     // rows rejected by the database
    double store_time_min_s = -1, store_time_max_s = -1, proc_time_min_s = -1, proc_time_max_s = -1;
    double store_time_sum_s = 0, proc_time_sum_s = 0;
    std::uint64_t ok_window_start = 0, nok_window_start = 0, ok_sec_start = 0, nok_sec_start = 0;
    double record_freq = 0, failure_freq = 0, record_freq_inst = 0, failure_freq_inst = 0;
    std::shared_ptr<void> subscription;
};
using EntryPtr = std::shared_ptr<AttributeEntry>;

class SubscriptionBackend {
public:
    virtual ~SubscriptionBackend() = default;
    // Subscribe the configuration then the archive event. Throws std::exception with a message on failure.
    virtual void subscribe(const EntryPtr &e) = 0;
    virtual void unsubscribe(const EntryPtr &e) = 0;
};

struct ArchiverOptions {
    std::chrono::seconds subscribe_retry_period{60};
    std::chrono::seconds statistics_window{60};
    std::chrono::seconds periodic_timeout_delay{5};
    std::chrono::seconds polling_period{3};
    std::vector<std::string> contexts{"ALWAYS", "RUN", "SHUTDOWN", "SERVICE"};
    std::vector<std::string> default_strategy{"ALWAYS"};
    bool subscribe_change_as_fallback = false;
};

// Percentiles of a duration over the statistics window, in seconds.
struct AgeFigures {
    double p50_s = 0, p99_s = 0, max_s = 0;
};

// Everything the device publishes, computed by the statistics thread.
struct ArchiverSnapshot {
    std::vector<std::string> all, ok, nok, pending, started, stopped, paused, errors, strategies;
    std::vector<double> record_freq_list, failure_freq_list, record_freq_inst_list, failure_freq_inst_list;
    std::vector<std::int32_t> event_number_list;
    std::vector<std::uint32_t> ttl_list;
    double max_store_time_s = 0, min_store_time_s = 0, max_processing_time_s = 0, min_processing_time_s = 0;
    double record_freq = 0, failure_freq = 0, record_freq_inst = 0, failure_freq_inst = 0;
    double seconds_since_reset = 0;
    // queue / writer
    std::uint64_t pending_events = 0, max_pending_events = 0, spooled_events = 0, spooled_total = 0,
                  lost_events = 0, reconnects = 0, db_errors = 0, rows_stored = 0, duplicates = 0;
    std::uint64_t spool_bytes = 0;
    double pending_age_s = 0;
    AgeFigures event_age;           // commit time - source timestamp
    AgeFigures reception_age;       // reception time - source timestamp: the device's and Tango's share
    AgeFigures time_in_subscriber;  // commit time - reception time: queue, batching and commit
    std::uint64_t last_batch_size = 0;
    double last_batch_commit_s = 0, mean_batch_size = 0, mean_batch_commit_s = 0;
    double rows_per_s_inst = 0, rows_per_s_window = 0;
    bool db_connected = false;
    std::string db_error;
    std::string queue_error;
};

class Archiver {
public:
    using Logger = std::function<void(const std::string &level, const std::string &msg)>;
    Archiver(ArchiverOptions opts, LibConfig lib, std::unique_ptr<Writer> writer, std::unique_ptr<EventQueue> queue,
             Logger log);
    ~Archiver();
    void set_backend(SubscriptionBackend *b) { backend_ = b; }
    void start_threads();
    void stop_threads();

    // Registry (throw std::invalid_argument for unknown names / bad input).
    void add_attribute(const AttributeSpec &spec, int data_type = kUnknown, int data_format = kUnknown,
                       int write_type = kUnknown);
    void remove_attribute(const std::string &name);
    void start_attribute(const std::string &name);
    void stop_attribute(const std::string &name);
    void pause_attribute(const std::string &name);
    void start_all();
    void stop_all();
    void pause_all();
    void stop_faulty();
    void set_strategy(const std::string &name, const std::vector<std::string> &contexts);
    std::string get_strategy(const std::string &name) const;
    void set_ttl(const std::string &name, std::uint32_t hours);
    std::uint32_t get_ttl(const std::string &name) const;
    void set_context(const std::string &ctx);
    std::string context() const;
    std::string attribute_status(const std::string &name) const;
    void reset_statistics();
    std::vector<AttributeSpec> specs() const;
    bool has_attribute(const std::string &name) const;
    const ArchiverOptions &options() const { return opts_; }
    std::string normalise(const std::string &name) const;

    // Event path, called by the Tango callbacks (copy + enqueue only).
    void on_data(const EntryPtr &e, Record &&r);
    void on_error(const EntryPtr &e, const std::string &desc, TimePoint when);
    void on_config(const EntryPtr &e, int data_type, int data_format, int write_type, ParamInfo param);
    void on_subscribe_result(const EntryPtr &e, bool ok, const std::string &error);

    std::shared_ptr<const ArchiverSnapshot> snapshot() const;
    void refresh_snapshot();  // recompute now

private:
    class WriterThread;
    class SubscribeThread;
    class StatsThread;
    EntryPtr find(const std::string &name) const;
    void set_mode(const EntryPtr &e, AttrMode m);
    bool strategy_matches(const AttributeSpec &s) const;
    void push_history(const EntryPtr &e, const char *event);
    Record history_record(AttributeEntry &e, const char *event);
    void writer_loop(StoppableThread &self);
    void subscribe_pass();
    void stats_tick();
    void account_batch(const std::vector<Record> &batch, const WriteResult &res, std::chrono::duration<double> commit,
                       TimePoint commit_time);

    ArchiverOptions opts_;
    LibConfig lib_;
    std::unique_ptr<Writer> writer_;
    std::unique_ptr<EventQueue> queue_;
    Logger log_;
    SubscriptionBackend *backend_ = nullptr;

    mutable std::mutex registry_mutex_;
    std::map<std::string, EntryPtr> entries_;
    std::string context_ = "ALWAYS";

    std::unique_ptr<WriterThread> writer_thread_;
    std::unique_ptr<SubscribeThread> subscribe_thread_;
    std::unique_ptr<StatsThread> stats_thread_;

    // writer-side statistics (written by the writer thread)
    mutable std::mutex stats_mutex_;
    WindowedHistogram event_age_us_, reception_age_us_, in_subscriber_us_;
    std::atomic<std::uint64_t> rows_stored_{0}, reconnects_{0}, db_errors_{0}, duplicates_{0};
    std::atomic<std::size_t> inflight_{0};
    std::atomic<std::int64_t> inflight_oldest_us_{0};
    std::atomic<bool> db_connected_{false};
    std::string db_error_;  // guarded by stats_mutex_
    std::uint64_t last_batch_size_ = 0;
    double last_batch_commit_s_ = 0;
    struct SecondSlot {
        std::int64_t second = -1;
        std::uint64_t rows = 0, batches = 0;
        double commit_s = 0;
    };
    std::vector<SecondSlot> seconds_;  // ring, one slot per second of the window
    std::chrono::steady_clock::time_point reset_time_;
    std::uint64_t rows_last_second_ = 0;

    mutable std::mutex snapshot_mutex_;
    std::shared_ptr<const ArchiverSnapshot> snapshot_;
    std::chrono::steady_clock::time_point last_window_, last_second_;
};

}  // namespace hdbbench
