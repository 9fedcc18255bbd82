// SPDX-License-Identifier: Apache-2.0
#include "registry.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace hdbbench {

using Lock = std::lock_guard<std::mutex>;

namespace {
std::string join(const std::vector<std::string> &parts, const char *sep) {
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
    return out;
}

const char *mode_name(AttrMode m) {
    return m == AttrMode::Started ? "STARTED" : m == AttrMode::Paused ? "PAUSED" : "STOPPED";
}
}  // namespace

AttributeRegistry::AttributeRegistry(std::vector<std::string> contexts, std::vector<std::string> default_strategy,
                                     Push push, Logger log)
    : contexts_(std::move(contexts)), default_strategy_(std::move(default_strategy)), push_(std::move(push)),
      log_(quiet_if_empty(std::move(log))) {}

AttributePtr AttributeRegistry::find(const std::string &name) const {
    Lock lock(mutex_);
    const std::string n = to_lower(trim(name));
    auto it = attributes_.find(n);
    if (it != attributes_.end()) return it->second;
    // Accept d/f/m/a without the tango://host:port prefix when it is unambiguous.
    AttributePtr found;
    for (const auto &[k, a] : attributes_) {
        if (k.size() > n.size() && k.compare(k.size() - n.size(), n.size(), n) == 0 && k[k.size() - n.size() - 1] == '/') {
            if (found) throw std::invalid_argument("ambiguous attribute name " + name);
            found = a;
        }
    }
    if (!found) throw std::invalid_argument("attribute " + name + " is not archived by this subscriber");
    return found;
}

std::vector<AttributePtr> AttributeRegistry::all() const {
    Lock lock(mutex_);
    std::vector<AttributePtr> out;
    out.reserve(attributes_.size());
    for (const auto &[n, a] : attributes_) out.push_back(a);
    return out;
}

bool AttributeRegistry::has(const std::string &name) const {
    try {
        find(name);
        return true;
    } catch (const std::invalid_argument &) {
        return false;
    }
}

bool AttributeRegistry::strategy_matches(const std::vector<std::string> &strategy) const {
    for (const auto &c : strategy.empty() ? default_strategy_ : strategy)
        if (c == "ALWAYS" || c == context_) return true;
    return false;
}

std::vector<std::string> AttributeRegistry::checked_contexts(const std::vector<std::string> &contexts) const {
    std::vector<std::string> out;
    for (const auto &c : contexts) {
        const std::string u = to_upper(trim(c));
        if (u.empty()) continue;
        if (u != "ALWAYS" && std::find(contexts_.begin(), contexts_.end(), u) == contexts_.end())
            throw std::invalid_argument("context " + u + " is not in ContextsList");
        out.push_back(u);
    }
    return out;
}

std::string AttributeRegistry::strategy_text(const AttributeSpec &s) const {
    return join(s.strategy.empty() ? default_strategy_ : s.strategy, "|");
}

void AttributeRegistry::add(const AttributeSpec &spec_in, AttributeTypes types, bool announce) {
    AttributeSpec spec = spec_in;
    spec.name = to_lower(trim(spec.name));
    split_attribute_name(spec.name);  // validates, throws ConfigError
    spec.strategy = checked_contexts(spec.strategy);
    {
        Lock lock(mutex_);
        if (attributes_.count(spec.name)) throw std::invalid_argument("attribute " + spec.name + " is already archived");
        const AttrMode mode = strategy_matches(spec.strategy) ? AttrMode::Started : AttrMode::Stopped;
        auto a = std::make_shared<Attribute>(spec, types, mode);
        if (announce)
            if (auto r = a->announce()) push_(std::move(*r));
        attributes_.emplace(spec.name, std::move(a));
    }
    if (wake_) wake_();
}

void AttributeRegistry::announce(const std::string &name) {
    if (auto r = find(name)->announce()) push_(std::move(*r));
}

void AttributeRegistry::unsubscribe(const AttributePtr &a) {
    std::shared_ptr<void> handle = a->take_subscription();
    if (backend_ && handle) backend_->unsubscribe(std::move(handle));
}

void AttributeRegistry::remove(const std::string &name) {
    AttributePtr a = find(name);
    a->set_mode(AttrMode::Stopped);  // its `stop` is superseded by `remove`
    unsubscribe(a);
    push_(a->history("remove"));
    Lock lock(mutex_);
    attributes_.erase(a->name());
}

void AttributeRegistry::apply_mode(const AttributePtr &a, AttrMode m) {
    ModeChange change = a->set_mode(m);
    if (change.history) push_(std::move(*change.history));
    if (change.unsubscribe) unsubscribe(a);
    if (change.subscribe && wake_) wake_();
}

void AttributeRegistry::set_mode(const std::string &name, AttrMode m) { apply_mode(find(name), m); }

void AttributeRegistry::set_mode_all(AttrMode m) {
    for (const auto &a : all()) apply_mode(a, m);
}

void AttributeRegistry::stop_faulty() {
    for (const auto &a : all())
        if (a->faulty_for_stop()) apply_mode(a, AttrMode::Stopped);
}

void AttributeRegistry::set_strategy(const std::string &name, const std::vector<std::string> &contexts) {
    AttributePtr a = find(name);
    std::vector<std::string> checked = checked_contexts(contexts);
    bool start;
    {
        Lock lock(mutex_);
        start = strategy_matches(checked);
    }
    a->set_strategy(std::move(checked));
    apply_mode(a, start ? AttrMode::Started : AttrMode::Stopped);
}

std::string AttributeRegistry::strategy(const std::string &name) const { return strategy_text(find(name)->spec()); }

void AttributeRegistry::set_ttl(const std::string &name, std::uint32_t hours) { push_(find(name)->set_ttl(hours)); }

std::uint32_t AttributeRegistry::ttl(const std::string &name) const { return find(name)->spec().ttl_hours; }

void AttributeRegistry::set_context(const std::string &ctx_in) {
    const std::string ctx = to_upper(trim(ctx_in));
    if (ctx != "ALWAYS" && std::find(contexts_.begin(), contexts_.end(), ctx) == contexts_.end())
        throw std::invalid_argument("context " + ctx + " is not in ContextsList");
    {
        Lock lock(mutex_);
        context_ = ctx;
    }
    for (const auto &a : all()) {
        const std::vector<std::string> strategy = a->spec().strategy;
        bool match;
        {
            Lock lock(mutex_);
            match = strategy_matches(strategy);
        }
        const AttrMode m = a->mode();
        if (match && m == AttrMode::Stopped) apply_mode(a, AttrMode::Started);
        else if (!match && m != AttrMode::Stopped) apply_mode(a, AttrMode::Stopped);
    }
}

std::string AttributeRegistry::context() const {
    Lock lock(mutex_);
    return context_;
}

std::vector<AttributeSpec> AttributeRegistry::specs() const {
    std::vector<AttributeSpec> out;
    for (const auto &a : all()) out.push_back(a->spec());
    return out;
}

std::string AttributeRegistry::status(const std::string &name) const {
    const AttributeView v = find(name)->view();
    auto avg = [&v](double sum) { return v.ok ? sum / static_cast<double>(v.ok) : 0.0; };
    std::ostringstream s;
    s << "Event status       : " << (v.subscribe_error.empty() ? std::string("Event received") : v.subscribe_error)
      << "\n";
    s << "Archiving          : " << mode_name(v.mode) << "\n";
    s << "Subscribed         : "
      << (v.subscribed ? (v.using_change_event ? "yes (CHANGE event fallback)" : "yes") : "no") << "\n";
    s << "Periodic timeout   : " << (v.periodic_timeout ? "yes" : "no") << "\n";
    s << "Events received    : " << v.events << "\n";
    s << "Events OK          : " << v.ok << "\n";
    s << "Events NOK         : " << v.nok << "\n";
    s << "DB ERRORS          : " << v.db_errors << "\n";
    s << "Store time AVG     : " << avg(v.store_time_sum_s) << " s\n";
    s << "Processing time AVG: " << avg(v.proc_time_sum_s) << " s\n";
    s << "Store time MIN/MAX : " << std::max(0.0, v.store_time_min_s) << " / " << std::max(0.0, v.store_time_max_s)
      << " s\n";
    s << "Processing MIN/MAX : " << std::max(0.0, v.proc_time_min_s) << " / " << std::max(0.0, v.proc_time_max_s)
      << " s\n";
    s << "Record freq        : " << v.record_freq << " /window, " << v.record_freq_inst << " /s\n";
    s << "Failure freq       : " << v.failure_freq << " /window, " << v.failure_freq_inst << " /s\n";
    s << "Strategy           : " << strategy_text(v.spec) << "\n";
    s << "TTL                : " << v.spec.ttl_hours << " h";
    return s.str();
}

void AttributeRegistry::subscribe_pass(const std::function<bool()> &stopping) {
    if (!backend_) return;
    for (const auto &a : all()) {
        if (!a->needs_subscription()) continue;
        if (stopping()) return;
        try {
            Subscription sub = backend_->subscribe(a);
            a->subscribed(std::move(sub.handle), sub.change_event, sub.warning);
        } catch (const std::exception &ex) {
            a->subscription_failed(ex.what());
            log_("warning", "subscription of " + a->name() + " failed: " + ex.what());
        }
    }
}

std::size_t AttributeRegistry::resubscribe_silent(std::chrono::steady_clock::time_point now,
                                                  std::chrono::seconds grace) {
    struct Watched {
        AttributePtr attribute;
        Liveness live;
        std::string device;
    };
    std::vector<Watched> watched;
    std::map<std::string, std::chrono::steady_clock::time_point> device_last_delivery;
    for (const auto &a : all()) {
        const auto live = a->liveness();
        if (!live) continue;
        std::string device;
        try {
            const NameParts p = split_attribute_name(a->name());
            device = p.cs_name + "/" + p.device();
        } catch (const ConfigError &) {
            continue;  // names are validated when added
        }
        if (live->events_since_subscribed > 0) {
            auto &last = device_last_delivery[device];
            last = std::max(last, live->last_event);
        }
        watched.push_back({a, *live, std::move(device)});
    }
    std::size_t dropped = 0;
    for (const auto &w : watched) {
        const Liveness &l = w.live;
        std::string why;
        bool silent = false;
        if (l.archive_period.count() > 0 && now - l.last_event > kSilentPeriods * l.archive_period) {
            why = "no event for " +
                  std::to_string(std::chrono::duration_cast<std::chrono::seconds>(now - l.last_event).count()) +
                  " s, more than " + std::to_string(kSilentPeriods) + " times its archive period";
        } else if (l.events_since_subscribed == 0 && !l.silent_resubscribed && now - l.subscribed_at >= grace) {
            const auto it = device_last_delivery.find(w.device);
            if (it != device_last_delivery.end() && it->second > l.subscribed_at) {
                why = "no event since it subscribed, while other attributes of its device deliver";
                silent = true;
            }
        }
        if (why.empty()) continue;
        std::shared_ptr<void> handle = w.attribute->take_for_resubscription(silent);
        if (backend_ && handle) {
            try {
                backend_->unsubscribe(std::move(handle));
            } catch (const std::exception &ex) {
                log_("warning", "unsubscribe " + w.attribute->name() + ": " + ex.what());
            }
        }
        log_("warning", "subscribing " + w.attribute->name() + " again: " + why);
        ++dropped;
    }
    return dropped;
}

void AttributeRegistry::unsubscribe_all() {
    for (const auto &a : all()) {
        try {
            unsubscribe(a);
        } catch (const std::exception &ex) {
            log_("warning", "unsubscribe " + a->name() + ": " + ex.what());
        }
    }
}

void AttributeRegistry::queue_shutdown_history() {
    for (const auto &a : all())
        if (a->stop_on_shutdown()) push_(a->history("stop"));
}

void AttributeRegistry::account(const BatchAccount &batch) {
    Lock lock(mutex_);
    for (const auto &[name, rows] : batch.stored) {
        auto it = attributes_.find(name);
        if (it != attributes_.end()) it->second->account_stored(rows);
    }
    for (const auto &[name, rejected] : batch.rejected) {
        auto it = attributes_.find(name);
        if (it != attributes_.end()) it->second->account_rejected(rejected.rows, rejected.error);
    }
}

void AttributeRegistry::tick(double second_s, bool window_done, std::chrono::seconds periodic_delay) {
    const auto now = std::chrono::steady_clock::now();
    for (const auto &a : all()) a->tick(second_s, window_done, now, periodic_delay);
}

void AttributeRegistry::reset_statistics() {
    for (const auto &a : all()) a->reset_statistics();
}

std::vector<AttributeView> AttributeRegistry::views() const {
    std::vector<AttributeView> out;
    for (const auto &a : all()) out.push_back(a->view());
    return out;
}

}  // namespace hdbbench
