// SPDX-License-Identifier: Apache-2.0
#include "archiver.h"

#include <algorithm>
#include <functional>

namespace hdbbench {

using steady = std::chrono::steady_clock;

namespace {
WriterLoopOptions writer_options(const LibConfig &lib) {
    WriterLoopOptions o;
    o.batch_size = lib.batch_size;
    o.flush_interval = lib.flush_interval;
    o.reconnect_min = lib.reconnect_min;
    o.reconnect_max = lib.reconnect_max;
    o.max_events_per_s = lib.max_events_per_s;
    o.drop_batch_on_lost_connection = lib.drop_batch_on_lost_connection;
    return o;
}
}  // namespace

// A named thread that runs `tick` every `period` (or sooner when woken) until stopped.
class Archiver::Periodic : public StoppableThread {
public:
    Periodic(std::chrono::seconds period, std::function<void(const std::function<bool()> &)> tick)
        : period_(period), tick_(std::move(tick)) {}
    ~Periodic() override { stop(); }
    using StoppableThread::wake;

protected:
    void run() override {
        const std::function<bool()> stopping = [this] { return this->stopping(); };
        do {
            tick_(stopping);
        } while (!wait_for(period_));
    }

private:
    std::chrono::seconds period_;
    std::function<void(const std::function<bool()> &)> tick_;
};

Archiver::Archiver(ArchiverOptions opts, const LibConfig &lib, std::unique_ptr<Writer> writer,
                   std::unique_ptr<EventQueue> queue, Logger log)
    : opts_(std::move(opts)), writer_opts_(writer_options(lib)), resubscribe_silent_(lib.resubscribe_silent), log_(quiet_if_empty(std::move(log))),
      queue_(std::move(queue)),
      registry_(opts_.contexts, opts_.default_strategy, [this](Record &&r) { queue_->push(std::move(r)); }, log_),
      statistics_(opts_.statistics_window), writer_(std::move(writer)), last_window_(steady::now()),
      last_second_(steady::now()) {
    registry_.set_wake([this] {
        if (subscribe_thread_) subscribe_thread_->wake();
    });
}

Archiver::~Archiver() { stop_threads(); }

void Archiver::start_threads() {
    if (!wal_flusher_ && queue_->wal()) {
        wal_flusher_ = std::make_unique<WalFlusher>(*queue_->wal());
        wal_flusher_->start();
    }
    if (!writer_loop_ && writer_) {
        auto observe = [this](const std::vector<Record> &batch, const WriteResult &res, double commit_s,
                              TimePoint commit_time) {
            registry_.account(statistics_.account_batch(batch, res, commit_s, commit_time));
        };
        writer_loop_ = std::make_unique<WriterLoop>(std::move(writer_), *queue_, writer_opts_, observe, log_);
        writer_loop_->start();
    }
    if (!stats_thread_) {
        stats_thread_ = std::make_unique<Periodic>(std::chrono::seconds(1), [this](const auto &) { stats_tick(); });
        stats_thread_->start("hdb-stats");
    }
    if (!subscribe_thread_) {
        subscribe_thread_ = std::make_unique<Periodic>(
            opts_.subscribe_retry_period, [this](const auto &stopping) {
                if (resubscribe_silent_) registry_.resubscribe_silent(steady::now(), opts_.subscribe_retry_period);
                registry_.subscribe_pass(stopping);
            });
        subscribe_thread_->start("hdb-subscribe");
    }
}

void Archiver::stop_threads() {
    subscribe_thread_.reset();
    registry_.unsubscribe_all();
    stats_thread_.reset();
    if (writer_loop_) {
        registry_.queue_shutdown_history();
        writer_loop_->stop();
    }
    writer_loop_.reset();
    wal_flusher_.reset();  // after the writer: its last sync persists the final checkpoint
}

void Archiver::reset_statistics() {
    registry_.reset_statistics();
    statistics_.reset();
    queue_->reset_max_pending();
}

void Archiver::on_data(const AttributePtr &a, Record &&r) {
    if (a->accept_data(r)) queue_->push(std::move(r));
}

void Archiver::on_error(const AttributePtr &a, const std::string &desc, TimePoint when) {
    if (auto r = a->accept_error(desc, when)) queue_->push(std::move(*r));
}

void Archiver::on_config(const AttributePtr &a, AttributeTypes types, const ParamInfo &param) {
    for (auto &r : a->accept_config(types, param)) queue_->push(std::move(r));
}

void Archiver::on_config_error(const AttributePtr &a, const std::string &desc) { a->config_error(desc); }

void Archiver::stats_tick() {
    const auto now = steady::now();
    const bool window_done = now - last_window_ >= opts_.statistics_window;
    const double second_s = std::max(1e-3, std::chrono::duration<double>(now - last_second_).count());
    last_second_ = now;
    if (window_done) last_window_ = now;
    registry_.tick(second_s, window_done, opts_.periodic_timeout_delay);
    refresh_snapshot();
}

void Archiver::refresh_snapshot() {
    std::lock_guard<std::mutex> lock(refresh_mutex_);
    rebuild_snapshot();
}

std::shared_ptr<const ArchiverSnapshot> Archiver::fresh_snapshot() {
    {
        std::lock_guard<std::mutex> lock(refresh_mutex_);
        if (steady::now() - refreshed_ >= opts_.snapshot_freshness) rebuild_snapshot();
    }
    return snapshot();
}

void Archiver::rebuild_snapshot() {
    const WriterState writer = writer_loop_ ? writer_loop_->state() : WriterState{};
    statistics_.publish(registry_.views(), [this](const AttributeSpec &s) { return registry_.strategy_text(s); },
                        queue_->snapshot(), writer);
    refreshed_ = steady::now();
}

}  // namespace hdbbench
