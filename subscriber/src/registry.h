// SPDX-License-Identifier: Apache-2.0
// The attribute registry: which attributes this subscriber archives, their strategies (contexts),
// TTL and mode (started/paused/stopped), and the subscribe/retry pass. It queues the history events
// its commands cause through `push`; it never touches the database.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "archived_attribute.h"
#include "logger.h"
#include "subscription.h"

namespace hdbbench {

// What one written batch did to each attribute (computed by Statistics, applied here).
struct BatchAccount {
    struct Rejected {
        std::uint64_t rows = 0;
        std::string error;
    };
    std::unordered_map<std::string, StoredRows> stored;
    std::unordered_map<std::string, Rejected> rejected;
};

class AttributeRegistry {
public:
    using Push = std::function<void(Record &&)>;
    AttributeRegistry(std::vector<std::string> contexts, std::vector<std::string> default_strategy, Push push,
                      Logger log);
    void set_backend(SubscriptionBackend *b) { backend_ = b; }
    void set_wake(std::function<void()> wake) { wake_ = std::move(wake); }

    // Commands (throw std::invalid_argument for unknown names / bad input).
    // `announce`: assigned by AttributeAdd, so the `add` event is queued (see Attribute).
    void add(const AttributeSpec &spec, AttributeTypes types, bool announce);
    void announce(const std::string &name);
    void remove(const std::string &name);
    void set_mode(const std::string &name, AttrMode m);
    void set_mode_all(AttrMode m);
    void stop_faulty();
    void set_strategy(const std::string &name, const std::vector<std::string> &contexts);
    std::string strategy(const std::string &name) const;
    void set_ttl(const std::string &name, std::uint32_t hours);
    std::uint32_t ttl(const std::string &name) const;
    void set_context(const std::string &ctx);
    std::string context() const;
    std::string status(const std::string &name) const;
    bool has(const std::string &name) const;
    std::vector<AttributeSpec> specs() const;
    const std::vector<std::string> &contexts() const { return contexts_; }
    // The strategy as HDB++ prints it (ALWAYS|RUN), the default one when the attribute has none.
    std::string strategy_text(const AttributeSpec &s) const;

    // Subscription thread.
    void subscribe_pass(const std::function<bool()> &stopping);
    // The watchdog, run before each subscribe pass: drops the subscription of every started attribute
    // that looks lost, so that the pass subscribes it again. Lost: no event for more than
    // kSilentPeriods times its archive period, or no event at all since it subscribed (`grace` ago
    // or more) while another attribute of its device delivered since then. Tango reports no error
    // when its event consumer loses a subscription (subscriber/README.md, "Tango's event consumer
    // limit"); this is the net under it. Returns how many were dropped.
    static constexpr int kSilentPeriods = 3;
    std::size_t resubscribe_silent(std::chrono::steady_clock::time_point now, std::chrono::seconds grace);
    void unsubscribe_all();
    // Clean shutdown: a `stop` event for every started attribute (else the next start records `crash`).
    void queue_shutdown_history();

    // Statistics side.
    void account(const BatchAccount &batch);
    void tick(double second_s, bool window_done, std::chrono::seconds periodic_delay);
    void reset_statistics();
    std::vector<AttributeView> views() const;

private:
    AttributePtr find(const std::string &name) const;
    std::vector<AttributePtr> all() const;
    bool strategy_matches(const std::vector<std::string> &strategy) const;  // caller holds mutex_
    std::vector<std::string> checked_contexts(const std::vector<std::string> &contexts) const;
    void apply_mode(const AttributePtr &a, AttrMode m);
    void unsubscribe(const AttributePtr &a);

    const std::vector<std::string> contexts_, default_strategy_;
    Push push_;
    Logger log_;
    SubscriptionBackend *backend_ = nullptr;
    std::function<void()> wake_;
    mutable std::mutex mutex_;
    std::map<std::string, AttributePtr> attributes_;
    std::string context_ = "ALWAYS";
};

}  // namespace hdbbench
