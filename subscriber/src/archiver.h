// SPDX-License-Identifier: Apache-2.0
// The archiver core, free of Tango, assembled from its roles as hdbpp-es splits its threads:
//   AttributeRegistry (registry.h)   attributes, strategies/contexts, TTL, modes; subscribe/retry thread
//   WriterLoop (writer_loop.h)       the only database user: batches from the EventQueue to a Writer
//   WalFlusher (wal_flusher.h)       write-ahead mode: syncs the queue's log every spool_sync_ms
//   Statistics (statistics.h)        batch accounting and the immutable snapshot, refreshed each second
//                                    and, for a read, when it is older than snapshot_freshness
//   subscription.h                   the interfaces the Tango layer implements (SubscriptionBackend) or
//                                    calls (EventSink, implemented here: copy and enqueue only)
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "config.h"
#include "event_queue.h"
#include "logger.h"
#include "registry.h"
#include "statistics.h"
#include "stoppable_thread.h"
#include "subscription.h"
#include "wal_flusher.h"
#include "writer.h"
#include "writer_loop.h"

namespace hdbbench {

struct ArchiverOptions {
    std::chrono::seconds subscribe_retry_period{60};
    std::chrono::seconds statistics_window{60};
    std::chrono::seconds periodic_timeout_delay{5};
    std::vector<std::string> contexts{"ALWAYS", "RUN", "SHUTDOWN", "SERVICE"};
    std::vector<std::string> default_strategy{"ALWAYS"};
    // A read is answered from a snapshot at most this old (fresh_snapshot). HDB++ clients read live
    // figures (hdbpp-es answers AttributePendingNumber from its queue at each read); with the stats
    // thread's once-a-second snapshot alone, a drain or a delivery proof waits for its tick.
    std::chrono::milliseconds snapshot_freshness{100};
};

class Archiver : public EventSink {
public:
    Archiver(ArchiverOptions opts, const LibConfig &lib, std::unique_ptr<Writer> writer,
             std::unique_ptr<EventQueue> queue, Logger log);
    ~Archiver() override;
    void set_backend(SubscriptionBackend *b) { registry_.set_backend(b); }
    void start_threads();
    void stop_threads();

    AttributeRegistry &registry() { return registry_; }
    const AttributeRegistry &registry() const { return registry_; }
    void reset_statistics();

    // EventSink: called by the Tango callbacks.
    void on_data(const AttributePtr &a, Record &&r) override;
    void on_error(const AttributePtr &a, const std::string &desc, TimePoint when) override;
    void on_config(const AttributePtr &a, AttributeTypes types, const ParamInfo &param) override;
    void on_config_error(const AttributePtr &a, const std::string &desc) override;

    std::shared_ptr<const ArchiverSnapshot> snapshot() const { return statistics_.snapshot(); }
    void refresh_snapshot();  // recompute now
    // The snapshot, recomputed first when older than snapshot_freshness: at most one rebuild per
    // period whatever the read rate (a rebuild's cost grows with the attributes; not yet measured
    // at a facility's 10,000).
    std::shared_ptr<const ArchiverSnapshot> fresh_snapshot();

private:
    class Periodic;
    void stats_tick();
    void rebuild_snapshot();  // caller holds refresh_mutex_

    const ArchiverOptions opts_;
    const WriterLoopOptions writer_opts_;
    const bool resubscribe_silent_;  // LibConfiguration resubscribe_silent: the watchdog runs before each pass
    Logger log_;
    std::unique_ptr<EventQueue> queue_;
    AttributeRegistry registry_;
    Statistics statistics_;
    std::unique_ptr<Writer> writer_;  // until the writer loop starts and takes it
    std::unique_ptr<WriterLoop> writer_loop_;
    std::unique_ptr<WalFlusher> wal_flusher_;  // write-ahead mode only
    std::unique_ptr<Periodic> subscribe_thread_, stats_thread_;
    std::chrono::steady_clock::time_point last_window_, last_second_;
    // One rebuild at a time, so that a later snapshot is never replaced by one built before it
    // (a reader would see RowsStoredNumber go back).
    std::mutex refresh_mutex_;
    std::chrono::steady_clock::time_point refreshed_{};  // guarded by refresh_mutex_
};

}  // namespace hdbbench
