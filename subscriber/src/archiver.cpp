// SPDX-License-Identifier: Apache-2.0
#include "archiver.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

namespace hdbbench {

using steady = std::chrono::steady_clock;

namespace {
template <typename F>
void for_each_entry(std::mutex &m, const std::map<std::string, EntryPtr> &entries, F f);
}  // namespace
using dsec = std::chrono::duration<double>;

std::chrono::milliseconds window_ms(std::chrono::seconds s) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(s);
}

std::uint64_t non_negative_us(std::chrono::microseconds d) {
    return static_cast<std::uint64_t>(std::max<std::int64_t>(0, d.count()));
}

AgeFigures age_figures(const LogHistogram &h) {
    return {static_cast<double>(h.quantile(0.5)) * 1e-6, static_cast<double>(h.quantile(0.99)) * 1e-6,
            static_cast<double>(h.max()) * 1e-6};
}

class Archiver::WriterThread : public StoppableThread {
public:
    explicit WriterThread(Archiver &a) : a_(a) {}
    ~WriterThread() override { stop(); }
    bool sleep(std::chrono::milliseconds d) { return wait_for(d); }

protected:
    void run() override { a_.writer_loop(*this); }

private:
    Archiver &a_;
};

class Archiver::SubscribeThread : public StoppableThread {
public:
    explicit SubscribeThread(Archiver &a) : a_(a) {}
    ~SubscribeThread() override { stop(); }

protected:
    void run() override {
        while (!stopping()) {
            a_.subscribe_pass();
            if (wait_for(a_.opts_.subscribe_retry_period)) break;
        }
    }

private:
    Archiver &a_;
};

class Archiver::StatsThread : public StoppableThread {
public:
    explicit StatsThread(Archiver &a) : a_(a) {}
    ~StatsThread() override { stop(); }

protected:
    void run() override {
        while (!wait_for(std::chrono::seconds(1))) a_.stats_tick();
    }

private:
    Archiver &a_;
};

Archiver::Archiver(ArchiverOptions opts, LibConfig lib, std::unique_ptr<Writer> writer,
                   std::unique_ptr<EventQueue> queue, Logger log)
    : opts_(std::move(opts)), lib_(std::move(lib)), writer_(std::move(writer)), queue_(std::move(queue)),
      log_(std::move(log)), event_age_us_(window_ms(opts_.statistics_window)),
      reception_age_us_(window_ms(opts_.statistics_window)), in_subscriber_us_(window_ms(opts_.statistics_window)),
      seconds_(static_cast<std::size_t>(std::max<long>(1, static_cast<long>(opts_.statistics_window.count())))),
      reset_time_(steady::now()), snapshot_(std::make_shared<ArchiverSnapshot>()), last_window_(steady::now()),
      last_second_(steady::now()) {
    if (!log_) log_ = [](const std::string &, const std::string &) {};
}

Archiver::~Archiver() { stop_threads(); }

void Archiver::start_threads() {
    if (!writer_thread_) {
        writer_thread_ = std::make_unique<WriterThread>(*this);
        writer_thread_->start("hdb-writer");
    }
    if (!stats_thread_) {
        stats_thread_ = std::make_unique<StatsThread>(*this);
        stats_thread_->start("hdb-stats");
    }
    if (!subscribe_thread_) {
        subscribe_thread_ = std::make_unique<SubscribeThread>(*this);
        subscribe_thread_->start("hdb-subscribe");
    }
}

void Archiver::stop_threads() {
    if (subscribe_thread_) subscribe_thread_->stop();
    subscribe_thread_.reset();
    if (backend_) {
        std::vector<EntryPtr> all;
        {
            std::lock_guard<std::mutex> lock(registry_mutex_);
            for (auto &[n, e] : entries_) all.push_back(e);
        }
        for (auto &e : all) {
            try {
                backend_->unsubscribe(e);
            } catch (const std::exception &ex) {
                log_("warning", "unsubscribe " + e->spec.name + ": " + ex.what());
            }
        }
    }
    if (stats_thread_) stats_thread_->stop();
    stats_thread_.reset();
    if (writer_thread_) {
        // A clean shutdown records "stop" for the archived attributes (else the next start records "crash").
        for_each_entry(registry_mutex_, entries_, [this](const EntryPtr &e) {
            bool started;
            {
                std::lock_guard<std::mutex> lock(e->mutex);
                started = e->mode == AttrMode::Started && e->data_type != kUnknown;
            }
            if (started) push_history(e, "stop");
        });
        writer_thread_->request_stop();
        queue_->close();
        writer_thread_->join();
    }
    writer_thread_.reset();
}

std::string Archiver::normalise(const std::string &name) const { return to_lower(trim(name)); }

EntryPtr Archiver::find(const std::string &name) const {
    std::lock_guard<std::mutex> lock(registry_mutex_);
    const std::string n = normalise(name);
    auto it = entries_.find(n);
    if (it != entries_.end()) return it->second;
    // Accept d/f/m/a without the tango://host:port prefix when it is unambiguous.
    EntryPtr found;
    for (const auto &[k, e] : entries_) {
        if (k.size() > n.size() && k.compare(k.size() - n.size(), n.size(), n) == 0 && k[k.size() - n.size() - 1] == '/') {
            if (found) throw std::invalid_argument("ambiguous attribute name " + name);
            found = e;
        }
    }
    if (!found) throw std::invalid_argument("attribute " + name + " is not archived by this subscriber");
    return found;
}

bool Archiver::has_attribute(const std::string &name) const {
    try {
        find(name);
        return true;
    } catch (const std::invalid_argument &) {
        return false;
    }
}

bool Archiver::strategy_matches(const AttributeSpec &s) const {
    const auto &strat = s.strategy.empty() ? opts_.default_strategy : s.strategy;
    for (const auto &c : strat)
        if (c == "ALWAYS" || c == context_) return true;
    return false;
}

Record Archiver::history_record(AttributeEntry &e, const char *event) {
    Record r;
    r.kind = RecordKind::History;
    r.att_name = e.spec.name;
    r.data_type = static_cast<std::int8_t>(e.data_type);
    r.data_format = static_cast<std::int8_t>(e.data_format);
    r.write_type = static_cast<std::int8_t>(e.write_type);
    r.ttl_hours = e.spec.ttl_hours;
    TimePoint t = now_us();
    if (t <= e.last_history_time) t = e.last_history_time + std::chrono::microseconds(1);
    e.last_history_time = t;
    r.data_time = t;
    r.recv_time = t;
    r.text = event;
    return r;
}

void Archiver::push_history(const EntryPtr &e, const char *event) {
    Record r;
    {
        std::lock_guard<std::mutex> lock(e->mutex);
        r = history_record(*e, event);
    }
    queue_->push(std::move(r));
}

void Archiver::add_attribute(const AttributeSpec &spec_in, int data_type, int data_format, int write_type) {
    AttributeSpec spec = spec_in;
    spec.name = normalise(spec.name);
    split_attribute_name(spec.name);  // validates, throws ConfigError
    for (const auto &c : spec.strategy)
        if (c != "ALWAYS" && std::find(opts_.contexts.begin(), opts_.contexts.end(), c) == opts_.contexts.end())
            throw std::invalid_argument("context " + c + " is not in ContextsList");
    EntryPtr e;
    bool start = false;
    {
        std::lock_guard<std::mutex> lock(registry_mutex_);
        if (entries_.count(spec.name)) throw std::invalid_argument("attribute " + spec.name + " is already archived");
        e = std::make_shared<AttributeEntry>(spec);
        e->data_type = data_type;
        e->data_format = data_format;
        e->write_type = write_type;
        start = strategy_matches(spec);
        e->mode = start ? AttrMode::Started : AttrMode::Stopped;
        e->start_history_pending = start;
        entries_.emplace(spec.name, e);
    }
    if (subscribe_thread_) subscribe_thread_->wake();
}

void Archiver::remove_attribute(const std::string &name) {
    EntryPtr e = find(name);
    if (backend_) backend_->unsubscribe(e);
    {
        std::lock_guard<std::mutex> lock(e->mutex);
        e->mode = AttrMode::Stopped;
        e->subscribed = false;
    }
    push_history(e, "remove");
    std::lock_guard<std::mutex> lock(registry_mutex_);
    entries_.erase(e->spec.name);
}

void Archiver::set_mode(const EntryPtr &e, AttrMode m) {
    const char *event = nullptr;
    bool need_subscribe = false, need_unsubscribe = false;
    {
        std::lock_guard<std::mutex> lock(e->mutex);
        if (e->mode == m) return;
        const AttrMode old = e->mode;
        e->mode = m;
        if (m == AttrMode::Started) {
            event = "start";
            need_subscribe = !e->subscribed;
        } else if (m == AttrMode::Paused) {
            event = "pause";
            need_subscribe = !e->subscribed;  // paused stays subscribed
        } else {
            event = "stop";
            need_unsubscribe = e->subscribed || old != AttrMode::Stopped;
        }
        if (e->data_type == kUnknown && m == AttrMode::Started) {
            e->start_history_pending = true;  // written when the type is known (first config event)
            event = nullptr;
        }
    }
    if (event) push_history(e, event);
    if (need_unsubscribe && backend_) {
        backend_->unsubscribe(e);
        std::lock_guard<std::mutex> lock(e->mutex);
        e->subscribed = false;
    }
    if (need_subscribe && subscribe_thread_) subscribe_thread_->wake();
}

void Archiver::start_attribute(const std::string &name) { set_mode(find(name), AttrMode::Started); }
void Archiver::stop_attribute(const std::string &name) { set_mode(find(name), AttrMode::Stopped); }
void Archiver::pause_attribute(const std::string &name) { set_mode(find(name), AttrMode::Paused); }

namespace {
template <typename F>
void for_each_entry(std::mutex &m, const std::map<std::string, EntryPtr> &entries, F f) {
    std::vector<EntryPtr> all;
    {
        std::lock_guard<std::mutex> lock(m);
        for (const auto &[n, e] : entries) all.push_back(e);
    }
    for (auto &e : all) f(e);
}
}  // namespace

void Archiver::start_all() { for_each_entry(registry_mutex_, entries_, [this](const EntryPtr &e) { set_mode(e, AttrMode::Started); }); }
void Archiver::stop_all() { for_each_entry(registry_mutex_, entries_, [this](const EntryPtr &e) { set_mode(e, AttrMode::Stopped); }); }
void Archiver::pause_all() { for_each_entry(registry_mutex_, entries_, [this](const EntryPtr &e) { set_mode(e, AttrMode::Paused); }); }

void Archiver::stop_faulty() {
    for_each_entry(registry_mutex_, entries_, [this](const EntryPtr &e) {
        bool faulty;
        {
            std::lock_guard<std::mutex> lock(e->mutex);
            faulty = e->mode == AttrMode::Started &&
                     (!e->subscribed || !e->subscribe_error.empty() || e->error_since_good || e->periodic_timeout);
        }
        if (faulty) set_mode(e, AttrMode::Stopped);
    });
}

void Archiver::set_strategy(const std::string &name, const std::vector<std::string> &contexts) {
    EntryPtr e = find(name);
    std::vector<std::string> ctx;
    for (const auto &c : contexts) {
        const std::string u = to_upper(trim(c));
        if (u.empty()) continue;
        if (u != "ALWAYS" && std::find(opts_.contexts.begin(), opts_.contexts.end(), u) == opts_.contexts.end())
            throw std::invalid_argument("context " + u + " is not in ContextsList");
        ctx.push_back(u);
    }
    bool start;
    {
        std::lock_guard<std::mutex> lock(e->mutex);
        e->spec.strategy = ctx;
    }
    {
        std::lock_guard<std::mutex> lock(registry_mutex_);
        start = strategy_matches(e->spec);
    }
    set_mode(e, start ? AttrMode::Started : AttrMode::Stopped);
}

std::string Archiver::get_strategy(const std::string &name) const {
    EntryPtr e = find(name);
    std::lock_guard<std::mutex> lock(e->mutex);
    const auto &s = e->spec.strategy.empty() ? opts_.default_strategy : e->spec.strategy;
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "|" : "") + s[i];
    return out;
}

void Archiver::set_ttl(const std::string &name, std::uint32_t hours) {
    EntryPtr e = find(name);
    Record r;
    {
        std::lock_guard<std::mutex> lock(e->mutex);
        e->spec.ttl_hours = hours;
        r = history_record(*e, "update_ttl");
        r.ttl_hours = hours;
    }
    queue_->push(std::move(r));
}

std::uint32_t Archiver::get_ttl(const std::string &name) const {
    EntryPtr e = find(name);
    std::lock_guard<std::mutex> lock(e->mutex);
    return e->spec.ttl_hours;
}

void Archiver::set_context(const std::string &ctx_in) {
    const std::string ctx = to_upper(trim(ctx_in));
    if (ctx != "ALWAYS" && std::find(opts_.contexts.begin(), opts_.contexts.end(), ctx) == opts_.contexts.end())
        throw std::invalid_argument("context " + ctx + " is not in ContextsList");
    {
        std::lock_guard<std::mutex> lock(registry_mutex_);
        context_ = ctx;
    }
    for_each_entry(registry_mutex_, entries_, [this](const EntryPtr &e) {
        AttributeSpec s;
        AttrMode m;
        {
            std::lock_guard<std::mutex> lock(e->mutex);
            s = e->spec;
            m = e->mode;
        }
        bool match;
        {
            std::lock_guard<std::mutex> lock(registry_mutex_);
            match = strategy_matches(s);
        }
        if (match && m == AttrMode::Stopped) set_mode(e, AttrMode::Started);
        else if (!match && m != AttrMode::Stopped) set_mode(e, AttrMode::Stopped);
    });
}

std::string Archiver::context() const {
    std::lock_guard<std::mutex> lock(registry_mutex_);
    return context_;
}

std::vector<AttributeSpec> Archiver::specs() const {
    std::vector<AttributeSpec> out;
    for_each_entry(registry_mutex_, entries_, [&out](const EntryPtr &e) {
        std::lock_guard<std::mutex> lock(e->mutex);
        out.push_back(e->spec);
    });
    return out;
}

std::string Archiver::attribute_status(const std::string &name) const {
    EntryPtr e = find(name);
    std::lock_guard<std::mutex> lock(e->mutex);
    std::ostringstream s;
    const char *mode = e->mode == AttrMode::Started ? "STARTED" : e->mode == AttrMode::Paused ? "PAUSED" : "STOPPED";
    s << "Event status       : " << (e->subscribe_error.empty() ? std::string("Event received") : e->subscribe_error)
      << "\n";
    s << "Archiving          : " << mode << "\n";
    s << "Subscribed         : " << (e->subscribed ? (e->using_change_event ? "yes (CHANGE event fallback)" : "yes")
                                                   : "no")
      << "\n";
    s << "Periodic timeout   : " << (e->periodic_timeout ? "yes" : "no") << "\n";
    s << "Events received    : " << e->events << "\n";
    s << "Events OK          : " << e->ok << "\n";
    s << "Events NOK         : " << e->nok << "\n";
    s << "DB ERRORS          : " << e->db_errors << "\n";
    s << "Store time AVG     : " << (e->ok ? e->store_time_sum_s / static_cast<double>(e->ok) : 0.0) << " s\n";
    s << "Processing time AVG: " << (e->ok ? e->proc_time_sum_s / static_cast<double>(e->ok) : 0.0) << " s\n";
    s << "Store time MIN/MAX : " << std::max(0.0, e->store_time_min_s) << " / " << std::max(0.0, e->store_time_max_s)
      << " s\n";
    s << "Processing MIN/MAX : " << std::max(0.0, e->proc_time_min_s) << " / " << std::max(0.0, e->proc_time_max_s)
      << " s\n";
    s << "Record freq        : " << e->record_freq << " /window, " << e->record_freq_inst << " /s\n";
    s << "Failure freq       : " << e->failure_freq << " /window, " << e->failure_freq_inst << " /s\n";
    s << "Strategy           : ";
    const auto &st = e->spec.strategy.empty() ? opts_.default_strategy : e->spec.strategy;
    for (std::size_t i = 0; i < st.size(); ++i) s << (i ? "|" : "") << st[i];
    s << "\nTTL                : " << e->spec.ttl_hours << " h";
    return s.str();
}

void Archiver::reset_statistics() {
    for_each_entry(registry_mutex_, entries_, [](const EntryPtr &e) {
        std::lock_guard<std::mutex> lock(e->mutex);
        e->events = e->ok = e->nok = e->db_errors = 0;
        e->store_time_min_s = e->store_time_max_s = e->proc_time_min_s = e->proc_time_max_s = -1;
        e->store_time_sum_s = e->proc_time_sum_s = 0;
        e->ok_window_start = e->nok_window_start = e->ok_sec_start = e->nok_sec_start = 0;
        e->record_freq = e->failure_freq = e->record_freq_inst = e->failure_freq_inst = 0;
    });
    event_age_us_.reset();
    reception_age_us_.reset();
    in_subscriber_us_.reset();
    queue_->reset_max_pending();
    std::lock_guard<std::mutex> lock(stats_mutex_);
    reset_time_ = steady::now();
    for (auto &s : seconds_) s = SecondSlot{};
}

// ---- event path -------------------------------------------------------------------------------

void Archiver::on_data(const EntryPtr &e, Record &&r) {
    {
        std::lock_guard<std::mutex> lock(e->mutex);
        if (e->mode != AttrMode::Started) return;  // stopped/paused: dropped, as HDB++ does
        ++e->events;
        e->error_since_good = false;
        e->subscribe_error.clear();
        e->periodic_timeout = false;
        e->last_event = steady::now();
        if (e->write_type != kUnknown) r.write_type = static_cast<std::int8_t>(e->write_type);
        r.ttl_hours = e->spec.ttl_hours;
    }
    queue_->push(std::move(r));
}

void Archiver::on_error(const EntryPtr &e, const std::string &desc, TimePoint when) {
    Record r;
    {
        std::lock_guard<std::mutex> lock(e->mutex);
        e->subscribe_error = desc;
        if (e->mode != AttrMode::Started) return;
        ++e->events;
        ++e->nok;
        e->last_event = steady::now();
        if (e->error_since_good || e->data_type == kUnknown) return;  // only the first error after a good event
        e->error_since_good = true;
        r.kind = RecordKind::Error;
        r.att_name = e->spec.name;
        r.data_type = static_cast<std::int8_t>(e->data_type);
        r.data_format = static_cast<std::int8_t>(e->data_format);
        r.write_type = static_cast<std::int8_t>(e->write_type);
        r.ttl_hours = e->spec.ttl_hours;
        r.quality = kQualityInvalid;
        r.data_time = when;
        r.recv_time = now_us();
        r.text = desc;
    }
    queue_->push(std::move(r));
}

void Archiver::on_config(const EntryPtr &e, int data_type, int data_format, int write_type, ParamInfo param) {
    std::vector<Record> out;
    {
        std::lock_guard<std::mutex> lock(e->mutex);
        e->data_type = data_type;
        e->data_format = data_format;
        e->write_type = write_type;
        try {
            const long ms = param.archive_period.empty() ? 0 : std::stol(param.archive_period);
            e->archive_period = std::chrono::milliseconds(ms > 0 ? ms : 0);
        } catch (const std::exception &) {
            e->archive_period = std::chrono::milliseconds(0);
        }
        if (e->start_history_pending && e->mode == AttrMode::Started) {
            e->start_history_pending = false;
            out.push_back(history_record(*e, "start"));
        }
        if (!e->last_param || !(*e->last_param == param)) {
            e->last_param = std::make_shared<ParamInfo>(param);
            Record r;
            r.kind = RecordKind::Param;
            r.att_name = e->spec.name;
            r.data_type = static_cast<std::int8_t>(data_type);
            r.data_format = static_cast<std::int8_t>(data_format);
            r.write_type = static_cast<std::int8_t>(write_type);
            r.ttl_hours = e->spec.ttl_hours;
            r.recv_time = r.data_time = now_us();
            r.param = e->last_param;
            out.push_back(std::move(r));
        }
    }
    for (auto &r : out) queue_->push(std::move(r));
}

void Archiver::on_subscribe_result(const EntryPtr &e, bool ok, const std::string &error) {
    std::lock_guard<std::mutex> lock(e->mutex);
    e->subscribed = ok;
    e->subscribe_error = error;
    if (ok) e->last_event = steady::now();
}

void Archiver::subscribe_pass() {
    if (!backend_) return;
    std::vector<EntryPtr> todo;
    for_each_entry(registry_mutex_, entries_, [&todo](const EntryPtr &e) {
        std::lock_guard<std::mutex> lock(e->mutex);
        if (e->mode != AttrMode::Stopped && !e->subscribed) todo.push_back(e);
    });
    for (auto &e : todo) {
        if (subscribe_thread_ && subscribe_thread_->stopping()) return;
        try {
            backend_->subscribe(e);
        } catch (const std::exception &ex) {
            on_subscribe_result(e, false, ex.what());
            log_("warning", "subscription of " + e->spec.name + " failed: " + ex.what());
        }
    }
}

// ---- writer thread ------------------------------------------------------------------------------

void Archiver::writer_loop(StoppableThread &self_base) {
    auto &self = static_cast<WriterThread &>(self_base);
    std::chrono::milliseconds backoff = lib_.reconnect_min;
    std::vector<Record> batch;
    bool ever_connected = false;
    const auto drain_deadline_after_stop = std::chrono::seconds(5);
    std::optional<steady::time_point> stop_deadline;
    for (;;) {
        if (self.stopping()) {
            if (!stop_deadline) stop_deadline = steady::now() + drain_deadline_after_stop;
            if (!db_connected_ || steady::now() > *stop_deadline) break;
            if (batch.empty()) {
                batch = queue_->pop_batch(lib_.batch_size, std::chrono::milliseconds(0), std::chrono::milliseconds(0));
                if (batch.empty()) break;
            }
        }
        if (!writer_->connected()) {
            try {
                writer_->connect();
                db_connected_ = true;
                backoff = lib_.reconnect_min;
                {
                    std::lock_guard<std::mutex> lock(stats_mutex_);
                    db_error_.clear();
                }
                log_("info", std::string(ever_connected ? "re" : "") + "connected to " + writer_->name());
                ever_connected = true;
            } catch (const std::exception &e) {
                db_connected_ = false;
                {
                    std::lock_guard<std::mutex> lock(stats_mutex_);
                    if (db_error_ != e.what()) log_("error", e.what());
                    db_error_ = e.what();
                }
                if (self.stopping() || self.sleep(backoff)) {
                    if (self.stopping()) break;
                }
                backoff = std::min(lib_.reconnect_max, backoff * 2);
                continue;
            }
        }
        if (batch.empty()) {
            batch = queue_->pop_batch(lib_.batch_size, lib_.flush_interval, std::chrono::milliseconds(500));
            if (batch.empty()) continue;
        }
        inflight_ = batch.size();
        inflight_oldest_us_ = batch.front().recv_time.time_since_epoch().count();
        const auto t0 = steady::now();
        WriteResult res;
        try {
            res = writer_->write_batch(batch);
        } catch (const DbError &e) {
            if (e.connection_lost()) {
                writer_->disconnect();
                db_connected_ = false;
                ++reconnects_;
                {
                    std::lock_guard<std::mutex> lock(stats_mutex_);
                    db_error_ = e.what();
                }
                log_("error", std::string("database connection lost, batch kept for retry: ") + e.what());
                continue;  // keep the batch, reconnect with back-off
            }
            res = WriteResult{};
            for (const auto &r : batch) res.rejected.push_back({r.att_name, e.what()});
            log_("error", std::string("batch rejected: ") + e.what());
        } catch (const std::exception &e) {
            res = WriteResult{};
            for (const auto &r : batch) res.rejected.push_back({r.att_name, e.what()});
            log_("error", std::string("batch rejected: ") + e.what());
        }
        const auto commit = steady::now() - t0;
        account_batch(batch, res, commit, now_us());
        batch.clear();
        inflight_ = 0;
    }
    inflight_ = 0;
}

void Archiver::account_batch(const std::vector<Record> &batch, const WriteResult &res,
                             std::chrono::duration<double> commit, TimePoint commit_time) {
    const double commit_s = commit.count();
    std::unordered_map<std::string, std::size_t> rejected;
    for (const auto &r : res.rejected) ++rejected[r.att_name];
    if (!res.rejected.empty()) {
        db_errors_ += res.rejected.size();
        log_("error", "rows rejected by the database (" + std::to_string(res.rejected.size()) +
                          "), first: " + res.rejected.front().att_name + ": " + res.rejected.front().error);
    }
    duplicates_ += res.duplicates;
    struct Acc {
        std::uint64_t n = 0;
        double proc_min = -1, proc_max = -1, proc_sum = 0;
    };
    std::unordered_map<std::string, Acc> per_attr;
    std::uint64_t stored = 0;
    LogHistogram event_age, reception_age, in_subscriber;  // this batch, merged into the windows at once
    for (const auto &r : batch) {
        if (r.kind != RecordKind::Data && r.kind != RecordKind::Error) continue;
        if (rejected.count(r.att_name) && rejected[r.att_name] > 0) continue;
        ++stored;
        if (r.kind != RecordKind::Data) continue;
        // Age at commit = age at reception (device + Tango delivery) + time in the subscriber.
        event_age.record(non_negative_us(commit_time - r.data_time));
        reception_age.record(non_negative_us(r.recv_time - r.data_time));
        in_subscriber.record(non_negative_us(commit_time - r.recv_time));
        const double proc_s = std::max<double>(0, static_cast<double>((commit_time - r.recv_time).count()) * 1e-6);
        Acc &a = per_attr[r.att_name];
        ++a.n;
        a.proc_sum += proc_s;
        a.proc_min = a.proc_min < 0 ? proc_s : std::min(a.proc_min, proc_s);
        a.proc_max = std::max(a.proc_max, proc_s);
    }
    const auto now = steady::now();
    event_age_us_.add(event_age, now);
    reception_age_us_.add(reception_age, now);
    in_subscriber_us_.add(in_subscriber, now);
    rows_stored_ += stored;
    {
        std::lock_guard<std::mutex> lock(registry_mutex_);
        for (auto &[name, a] : per_attr) {
            auto it = entries_.find(name);
            if (it == entries_.end()) continue;
            AttributeEntry &e = *it->second;
            std::lock_guard<std::mutex> el(e.mutex);
            e.ok += a.n;
            e.store_time_sum_s += commit_s * static_cast<double>(a.n);
            e.store_time_min_s = e.store_time_min_s < 0 ? commit_s : std::min(e.store_time_min_s, commit_s);
            e.store_time_max_s = std::max(e.store_time_max_s, commit_s);
            e.proc_time_sum_s += a.proc_sum;
            e.proc_time_min_s = e.proc_time_min_s < 0 ? a.proc_min : std::min(e.proc_time_min_s, a.proc_min);
            e.proc_time_max_s = std::max(e.proc_time_max_s, a.proc_max);
        }
        for (auto &[name, n] : rejected) {
            auto it = entries_.find(name);
            if (it == entries_.end()) continue;
            std::lock_guard<std::mutex> el(it->second->mutex);
            it->second->nok += n;
            it->second->db_errors += n;
        }
    }
    std::lock_guard<std::mutex> lock(stats_mutex_);
    last_batch_size_ = batch.size();
    last_batch_commit_s_ = commit_s;
    const std::int64_t sec = std::chrono::duration_cast<std::chrono::seconds>(steady::now().time_since_epoch()).count();
    SecondSlot &slot = seconds_[static_cast<std::size_t>(sec % static_cast<std::int64_t>(seconds_.size()))];
    if (slot.second != sec) slot = SecondSlot{sec, 0, 0, 0};
    slot.rows += stored;
    slot.batches += 1;
    slot.commit_s += commit_s;
}

// ---- statistics ------------------------------------------------------------------------------------

void Archiver::stats_tick() {
    const auto now = steady::now();
    const bool window_done = now - last_window_ >= opts_.statistics_window;
    const double sec_len = std::max(1e-3, dsec(now - last_second_).count());
    last_second_ = now;
    if (window_done) last_window_ = now;
    for_each_entry(registry_mutex_, entries_, [&](const EntryPtr &e) {
        std::lock_guard<std::mutex> lock(e->mutex);
        e->record_freq_inst = static_cast<double>(e->ok - std::min(e->ok, e->ok_sec_start)) / sec_len;
        e->failure_freq_inst = static_cast<double>(e->nok - std::min(e->nok, e->nok_sec_start)) / sec_len;
        e->ok_sec_start = e->ok;
        e->nok_sec_start = e->nok;
        if (window_done) {
            e->record_freq = static_cast<double>(e->ok - std::min(e->ok, e->ok_window_start));
            e->failure_freq = static_cast<double>(e->nok - std::min(e->nok, e->nok_window_start));
            e->ok_window_start = e->ok;
            e->nok_window_start = e->nok;
        }
        if (e->mode == AttrMode::Started && e->subscribed && e->archive_period.count() > 0 &&
            now - e->last_event > e->archive_period + opts_.periodic_timeout_delay)
            e->periodic_timeout = true;
    });
    refresh_snapshot();
}

void Archiver::refresh_snapshot() {
    auto s = std::make_shared<ArchiverSnapshot>();
    double ok_inst = 0, nok_inst = 0;
    for_each_entry(registry_mutex_, entries_, [&](const EntryPtr &e) {
        std::lock_guard<std::mutex> lock(e->mutex);
        const std::string &n = e->spec.name;
        s->all.push_back(n);
        const bool faulty = e->mode == AttrMode::Started &&
                            (!e->subscribed || e->error_since_good || e->periodic_timeout || e->db_errors > 0);
        if (e->mode == AttrMode::Started) s->started.push_back(n);
        else if (e->mode == AttrMode::Paused) s->paused.push_back(n);
        else s->stopped.push_back(n);
        if (e->mode != AttrMode::Stopped) {
            if (faulty) {
                s->nok.push_back(n);
                std::string err = e->periodic_timeout ? "Timeout on periodic event"
                                  : !e->subscribe_error.empty() ? e->subscribe_error
                                  : e->db_errors ? "Storing Error"
                                  : !e->subscribed ? "Not subscribed" : "Error";
                s->errors.push_back(err);
            } else {
                s->ok.push_back(n);
                s->errors.push_back("");
            }
            if (!e->subscribed) s->pending.push_back(n);
        } else {
            s->errors.push_back("");
        }
        const auto &st = e->spec.strategy.empty() ? opts_.default_strategy : e->spec.strategy;
        std::string strat;
        for (std::size_t i = 0; i < st.size(); ++i) strat += (i ? "|" : "") + st[i];
        s->strategies.push_back(strat);
        s->record_freq_list.push_back(e->record_freq);
        s->failure_freq_list.push_back(e->failure_freq);
        s->record_freq_inst_list.push_back(e->record_freq_inst);
        s->failure_freq_inst_list.push_back(e->failure_freq_inst);
        s->event_number_list.push_back(static_cast<std::int32_t>(std::min<std::uint64_t>(e->events, INT32_MAX)));
        s->ttl_list.push_back(e->spec.ttl_hours);
        s->record_freq += e->record_freq;
        s->failure_freq += e->failure_freq;
        ok_inst += e->record_freq_inst;
        nok_inst += e->failure_freq_inst;
        if (e->store_time_max_s >= 0) {
            s->max_store_time_s = std::max(s->max_store_time_s, e->store_time_max_s);
            s->min_store_time_s = s->min_store_time_s == 0 ? e->store_time_min_s : std::min(s->min_store_time_s, e->store_time_min_s);
        }
        if (e->proc_time_max_s >= 0) {
            s->max_processing_time_s = std::max(s->max_processing_time_s, e->proc_time_max_s);
            s->min_processing_time_s = s->min_processing_time_s == 0 ? e->proc_time_min_s
                                                                      : std::min(s->min_processing_time_s, e->proc_time_min_s);
        }
    });
    s->record_freq_inst = ok_inst;
    s->failure_freq_inst = nok_inst;
    const QueueSnapshot q = queue_->snapshot();
    const std::size_t inflight = inflight_;
    s->pending_events = q.pending() + inflight;
    s->max_pending_events = std::max<std::uint64_t>(q.max_pending, s->pending_events);
    s->spooled_events = q.in_spool;
    s->spooled_total = q.spooled_total;
    s->spool_bytes = q.spool_bytes;
    s->lost_events = q.lost;
    s->queue_error = q.last_error;
    const TimePoint now = now_us();
    std::optional<TimePoint> oldest = q.oldest_recv;
    if (inflight) oldest = TimePoint(std::chrono::microseconds(inflight_oldest_us_.load()));
    s->pending_age_s = oldest ? std::max(0.0, static_cast<double>((now - *oldest).count()) * 1e-6) : 0.0;
    s->event_age = age_figures(event_age_us_.snapshot());
    s->reception_age = age_figures(reception_age_us_.snapshot());
    s->time_in_subscriber = age_figures(in_subscriber_us_.snapshot());
    s->reconnects = reconnects_;
    s->db_errors = db_errors_;
    s->rows_stored = rows_stored_;
    s->duplicates = duplicates_;
    s->db_connected = db_connected_;
    {
        std::lock_guard<std::mutex> lock(stats_mutex_);
        s->db_error = db_error_;
        s->last_batch_size = last_batch_size_;
        s->last_batch_commit_s = last_batch_commit_s_;
        s->seconds_since_reset = dsec(steady::now() - reset_time_).count();
        const std::int64_t sec =
            std::chrono::duration_cast<std::chrono::seconds>(steady::now().time_since_epoch()).count();
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
        s->rows_per_s_inst = static_cast<double>(last_rows);
        const double span = std::min<double>(static_cast<double>(n), std::max(1.0, s->seconds_since_reset));
        s->rows_per_s_window = static_cast<double>(rows) / span;
        s->mean_batch_size = batches ? static_cast<double>(rows) / static_cast<double>(batches) : 0;
        s->mean_batch_commit_s = batches ? commit / static_cast<double>(batches) : 0;
    }
    std::lock_guard<std::mutex> lock(snapshot_mutex_);
    snapshot_ = std::move(s);
}

std::shared_ptr<const ArchiverSnapshot> Archiver::snapshot() const {
    std::lock_guard<std::mutex> lock(snapshot_mutex_);
    return snapshot_;
}

}  // namespace hdbbench
