// SPDX-License-Identifier: Apache-2.0
// Unit tests of the archiver core (registry, writer loop, statistics) against a fake of our own
// Writer interface and a fake subscription layer: events go in through the EventSink as the Tango
// callbacks hand them over, and what reaches the writer is checked record by record.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "archiver.h"

using namespace hdbbench;
using namespace std::chrono_literals;

namespace {

const std::string kName = "tango://h:1/sim/dev/1/value";

// Stores every batch in memory; can lose the connection or refuse an attribute's rows on request.
class FakeWriter : public Writer {
public:
    struct Control {
        std::mutex mutex;
        std::vector<Record> stored;
        int batches = 0, lose_connection = 0;
        std::set<std::string> refused;
    };
    explicit FakeWriter(std::shared_ptr<Control> c) : c_(std::move(c)) {}
    std::string name() const override { return "fake"; }
    void connect() override { connected_ = true; }
    bool connected() const override { return connected_; }
    void disconnect() override { connected_ = false; }
    WriteResult write_batch(std::vector<Record> &batch) override {
        std::lock_guard<std::mutex> lock(c_->mutex);
        if (c_->lose_connection > 0) {
            --c_->lose_connection;
            throw DbError("server closed the connection", true);
        }
        ++c_->batches;
        WriteResult res;
        for (auto &r : batch) {
            if (c_->refused.count(r.att_name)) res.rejected.push_back({r.att_name, "refused by the fake"});
            else c_->stored.push_back(r);
        }
        return res;
    }

private:
    std::shared_ptr<Control> c_;
    bool connected_ = false;
};

class FakeSubscriptions : public SubscriptionBackend {
public:
    Subscription subscribe(const AttributePtr &a) override {
        std::lock_guard<std::mutex> lock(mutex_);
        attributes_[a->name()] = a;
        ++subscribes_;
        return Subscription{std::make_shared<std::string>(a->name()), false, ""};
    }
    void unsubscribe(std::shared_ptr<void> handle) override {
        std::lock_guard<std::mutex> lock(mutex_);
        unsubscribed_.push_back(*std::static_pointer_cast<std::string>(handle));
    }
    AttributePtr attribute(const std::string &name) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = attributes_.find(name);
        return it == attributes_.end() ? nullptr : it->second;
    }
    std::vector<std::string> unsubscribed() {
        std::lock_guard<std::mutex> lock(mutex_);
        return unsubscribed_;
    }

private:
    std::mutex mutex_;
    std::map<std::string, AttributePtr> attributes_;
    std::vector<std::string> unsubscribed_;
    int subscribes_ = 0;
};

// Wait (bounded) until `done` holds; the tests assert behaviour, the bound only ends a hung test.
bool eventually(const std::function<bool()> &done, std::chrono::seconds limit = 10s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(5ms);
    }
    return true;
}

struct Core {
    std::shared_ptr<FakeWriter::Control> db = std::make_shared<FakeWriter::Control>();
    FakeSubscriptions tango;
    std::unique_ptr<Archiver> archiver;

    Core() {
        LibConfig lib;
        lib.flush_interval = 1ms;
        lib.reconnect_min = lib.reconnect_max = 1ms;
        ArchiverOptions opts;
        opts.subscribe_retry_period = 1s;
        archiver = std::make_unique<Archiver>(opts, lib, std::make_unique<FakeWriter>(db),
                                              std::make_unique<EventQueue>(1000, nullptr), nullptr);
        archiver->set_backend(&tango);
    }
    AttributeRegistry &registry() { return archiver->registry(); }

    void add(const std::string &name, bool announce, std::vector<std::string> strategy = {}) {
        AttributeSpec spec;
        spec.name = name;
        spec.strategy = std::move(strategy);
        registry().add(spec, AttributeTypes{}, announce);
        archiver->start_threads();
    }
    AttributePtr subscribed(const std::string &name) {
        EXPECT_TRUE(eventually([&] { return tango.attribute(name) != nullptr; }));
        return tango.attribute(name);
    }
    AttributePtr add_and_subscribe(const std::string &name, bool announce) {
        add(name, announce);
        return subscribed(name);
    }
    void configure(const AttributePtr &a) {
        archiver->on_config(a, {kDevDouble, kScalar, kRead}, ParamInfo{});
    }
    void send(const AttributePtr &a, double value) {
        Record r;
        r.att_name = a->name();
        r.data_type = kDevDouble;
        r.data_format = kScalar;
        r.recv_time = r.data_time = now_us();
        r.value_r = std::vector<double>{value};
        archiver->on_data(a, std::move(r));
    }
    std::vector<Record> stored() {
        std::lock_guard<std::mutex> lock(db->mutex);
        return db->stored;
    }
    // "add", "start", "param", "data" ... for the records stored so far.
    std::vector<std::string> kinds() {
        std::vector<std::string> out;
        for (const auto &r : stored()) {
            if (r.kind == RecordKind::History) out.push_back(r.text);
            else if (r.kind == RecordKind::Param) out.push_back("param");
            else out.push_back(r.kind == RecordKind::Data ? "data" : "error");
        }
        return out;
    }
    std::shared_ptr<const ArchiverSnapshot> snapshot() {
        archiver->refresh_snapshot();
        return archiver->snapshot();
    }
};

using Kinds = std::vector<std::string>;

}  // namespace

TEST(Archiver, AttributeAddQueuesAddBeforeStartParamAndData) {
    Core c;
    AttributePtr a = c.add_and_subscribe(kName, true);
    c.configure(a);
    c.send(a, 1.5);
    ASSERT_TRUE(eventually([&] { return c.stored().size() == 4; })) << c.stored().size();
    EXPECT_EQ(c.kinds(), (Kinds{"add", "start", "param", "data"}));
    EXPECT_EQ(std::get<std::vector<double>>(c.stored().back().value_r), std::vector<double>{1.5});
    ASSERT_TRUE(eventually([&] { return c.snapshot()->rows_stored == 1; }));
    const auto s = c.snapshot();
    EXPECT_EQ(s->all, std::vector<std::string>{kName});
    EXPECT_EQ(s->started.size(), 1u);
    EXPECT_EQ(s->ok.size(), 1u);
    EXPECT_TRUE(s->nok.empty());
    EXPECT_TRUE(s->db_connected);
}

TEST(Archiver, AttributeListEntriesAreNotAnnounced) {
    Core c;
    AttributePtr a = c.add_and_subscribe(kName, false);
    c.configure(a);
    c.send(a, 2.0);
    ASSERT_TRUE(eventually([&] { return c.stored().size() == 3; }));
    EXPECT_EQ(c.kinds(), (Kinds{"start", "param", "data"}));
}

TEST(Archiver, AnnouncingAKnownAttributeQueuesItsAddEvent) {
    Core c;
    AttributePtr a = c.add_and_subscribe(kName, false);
    c.configure(a);
    c.registry().announce(kName);  // AttributeAdd of an attribute the AttributeList already had
    ASSERT_TRUE(eventually([&] { return c.stored().size() == 3; }));
    EXPECT_EQ(c.kinds(), (Kinds{"start", "param", "add"}));
}

TEST(Archiver, StoppedAndPausedAttributesDropEvents) {
    Core c;
    AttributePtr a = c.add_and_subscribe(kName, true);
    c.configure(a);
    c.registry().set_mode(kName, AttrMode::Paused);
    c.send(a, 1.0);
    c.registry().set_mode(kName, AttrMode::Stopped);
    c.send(a, 2.0);
    ASSERT_TRUE(eventually([&] { return c.stored().size() == 5; }));
    EXPECT_EQ(c.kinds(), (Kinds{"add", "start", "param", "pause", "stop"}));
    EXPECT_EQ(c.tango.unsubscribed(), std::vector<std::string>{kName});  // pause stays subscribed
    EXPECT_EQ(c.snapshot()->stopped, std::vector<std::string>{kName});
}

TEST(Archiver, RefusedRowsMakeTheAttributeNokWithTheWritersReason) {
    Core c;
    c.db->refused.insert(kName);
    AttributePtr a = c.add_and_subscribe(kName, false);
    c.configure(a);
    c.send(a, 1.0);
    ASSERT_TRUE(eventually([&] { return c.snapshot()->db_errors >= 3; })) << c.snapshot()->db_errors;
    const auto s = c.snapshot();
    EXPECT_EQ(s->nok, std::vector<std::string>{kName});
    EXPECT_EQ(s->errors, std::vector<std::string>{"refused by the fake"});
    EXPECT_EQ(s->rows_stored, 0u);
    EXPECT_NE(c.registry().status(kName).find("refused by the fake"), std::string::npos);
}

TEST(Archiver, LostConnectionKeepsTheBatchAndStoresItOnce) {
    Core c;
    c.db->lose_connection = 3;
    AttributePtr a = c.add_and_subscribe(kName, false);
    c.configure(a);
    for (int i = 0; i < 10; ++i) c.send(a, i);
    ASSERT_TRUE(eventually([&] { return c.snapshot()->rows_stored == 10; }));
    std::vector<double> values;
    for (const auto &r : c.stored())
        if (r.kind == RecordKind::Data) values.push_back(std::get<std::vector<double>>(r.value_r)[0]);
    EXPECT_EQ(values, (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
    EXPECT_EQ(c.snapshot()->reconnects, 3u);
    EXPECT_EQ(c.snapshot()->pending_events, 0u);
}

TEST(Archiver, ALostConnectionDropsTheBatchWhenAskedAndCountsIt) {
    std::shared_ptr<FakeWriter::Control> db = std::make_shared<FakeWriter::Control>();
    LibConfig lib = LibConfig::parse({"drop_batch_on_lost_connection=1"});
    lib.flush_interval = 1ms;
    lib.reconnect_min = lib.reconnect_max = 1ms;
    FakeSubscriptions tango;
    Archiver archiver(ArchiverOptions{}, lib, std::make_unique<FakeWriter>(db),
                      std::make_unique<EventQueue>(1000, nullptr), nullptr);
    archiver.set_backend(&tango);
    AttributeSpec spec;
    spec.name = kName;
    archiver.registry().add(spec, AttributeTypes{}, false);
    archiver.start_threads();
    ASSERT_TRUE(eventually([&] { return tango.attribute(kName) != nullptr; }));
    AttributePtr a = tango.attribute(kName);
    archiver.on_config(a, {kDevDouble, kScalar, kRead}, ParamInfo{});
    auto stored = [&] {
        std::lock_guard<std::mutex> lock(db->mutex);
        return db->stored.size();
    };
    ASSERT_TRUE(eventually([&] { return stored() == 2; }));  // start, param
    {
        std::lock_guard<std::mutex> lock(db->mutex);
        db->lose_connection = 1;
    }
    Record r;
    r.att_name = kName;
    r.data_type = kDevDouble;
    r.data_format = kScalar;
    r.recv_time = r.data_time = now_us();
    r.value_r = std::vector<double>{1.0};
    archiver.on_data(a, std::move(r));
    archiver.refresh_snapshot();
    ASSERT_TRUE(eventually([&] {
        archiver.refresh_snapshot();
        return archiver.snapshot()->db_errors == 1;
    }));
    EXPECT_EQ(stored(), 2u);  // the data event's batch was dropped, not written again
    EXPECT_EQ(archiver.snapshot()->pending_events, 0u);
}

TEST(Archiver, ContextStartsAndStopsByStrategy) {
    Core c;
    c.add(kName, true, {"RUN"});
    EXPECT_EQ(c.registry().strategy(kName), "RUN");
    EXPECT_EQ(c.snapshot()->stopped, std::vector<std::string>{kName});  // context ALWAYS: a RUN attribute waits
    c.registry().set_context("RUN");
    AttributePtr a = c.subscribed(kName);  // subscribed once started
    EXPECT_EQ(a->mode(), AttrMode::Started);
    c.registry().set_context("SHUTDOWN");
    EXPECT_EQ(a->mode(), AttrMode::Stopped);
    EXPECT_THROW(c.registry().set_context("NOSUCH"), std::invalid_argument);
    EXPECT_THROW(c.registry().set_strategy(kName, {"NOSUCH"}), std::invalid_argument);
}

TEST(Archiver, TtlIsKeptAndQueuedAsUpdateTtl) {
    Core c;
    AttributePtr a = c.add_and_subscribe(kName, false);
    c.configure(a);
    c.registry().set_ttl("sim/dev/1/value", 48);  // the short name is accepted when unambiguous
    EXPECT_EQ(c.registry().ttl(kName), 48u);
    ASSERT_TRUE(eventually([&] { return c.stored().size() == 3; }));
    EXPECT_EQ(c.stored().back().text, "update_ttl");
    EXPECT_EQ(c.stored().back().ttl_hours, 48u);
}

TEST(Archiver, OnlyTheFirstErrorAfterAGoodEventIsQueued) {
    Core c;
    AttributePtr a = c.add_and_subscribe(kName, false);
    c.configure(a);
    c.archiver->on_error(a, "device down", now_us());
    c.archiver->on_error(a, "device down", now_us());
    c.send(a, 1.0);
    c.archiver->on_error(a, "device down again", now_us());
    ASSERT_TRUE(eventually([&] { return c.stored().size() == 5; }));
    EXPECT_EQ(c.kinds(), (Kinds{"start", "param", "error", "data", "error"}));
}

TEST(Archiver, CleanShutdownRecordsStopAndUnsubscribes) {
    Core c;
    AttributePtr a = c.add_and_subscribe(kName, false);
    c.configure(a);
    ASSERT_TRUE(eventually([&] { return c.stored().size() == 2; }));
    c.archiver->stop_threads();
    EXPECT_EQ(c.kinds(), (Kinds{"start", "param", "stop"}));
    EXPECT_EQ(c.tango.unsubscribed(), std::vector<std::string>{kName});
}

TEST(Archiver, RemoveForgetsTheAttribute) {
    Core c;
    AttributePtr a = c.add_and_subscribe(kName, false);
    c.configure(a);
    c.registry().remove(kName);
    EXPECT_FALSE(c.registry().has(kName));
    EXPECT_THROW(c.registry().remove(kName), std::invalid_argument);
    ASSERT_TRUE(eventually([&] { return c.stored().size() == 3; }));
    EXPECT_EQ(c.kinds(), (Kinds{"start", "param", "remove"}));
}

namespace {

struct WatchedRegistry {
    FakeSubscriptions backend;
    AttributeRegistry registry{{"ALWAYS", "RUN"}, {"ALWAYS"}, [](Record &&) {}, nullptr};
    explicit WatchedRegistry(const std::vector<std::string> &names) {
        registry.set_backend(&backend);
        for (const auto &n : names) registry.add(parse_attribute_line(n), AttributeTypes{}, false);
        registry.subscribe_pass([] { return false; });
    }
    void deliver(const std::string &name) {
        Record r;
        r.kind = RecordKind::Data;
        r.att_name = name;
        ASSERT_TRUE(backend.attribute(name)->accept_data(r));
    }
    std::uint64_t resubscribes(const std::string &name) {
        for (const auto &v : registry.views())
            if (v.spec.name == name) return v.resubscribes;
        return 0;
    }
};

const std::string kSilent = "tango://h:1/sim/dev/1/silent", kBusy = "tango://h:1/sim/dev/1/busy",
                  kOther = "tango://h:1/sim/dev/2/quiet";

}  // namespace

TEST(Watchdog, ResubscribesOnceWhatNeverDeliveredWhileItsDeviceDelivers) {
    WatchedRegistry w({kSilent, kBusy, kOther});
    w.deliver(kBusy);  // after every subscription: the device's event path works
    // Within the grace period nothing happens; after it the silent attribute of the delivering device
    // goes, not the one of a device that delivered nothing (its server may just be quiet).
    EXPECT_EQ(w.registry.resubscribe_silent(std::chrono::steady_clock::now(), 3600s), 0u);
    const auto later = std::chrono::steady_clock::now() + 10s;
    EXPECT_EQ(w.registry.resubscribe_silent(later, 5s), 1u);
    EXPECT_EQ(w.backend.unsubscribed(), std::vector<std::string>{kSilent});
    EXPECT_EQ(w.resubscribes(kSilent), 1u);
    EXPECT_EQ(w.registry.status(kSilent).find("Subscribed         : yes"), std::string::npos);
    w.registry.subscribe_pass([] { return false; });  // subscribed again by the next pass
    EXPECT_NE(w.registry.status(kSilent).find("Subscribed         : yes"), std::string::npos);
    w.deliver(kBusy);
    // Once until it delivers: an attribute that rarely changes is not churned every pass.
    EXPECT_EQ(w.registry.resubscribe_silent(later + 20s, 5s), 0u);
    w.deliver(kSilent);
    w.deliver(kBusy);
    EXPECT_EQ(w.registry.resubscribe_silent(later + 40s, 5s), 0u);  // it delivers: nothing to do
    EXPECT_EQ(w.resubscribes(kSilent), 1u);
    EXPECT_EQ(w.resubscribes(kBusy), 0u);
}

TEST(Watchdog, ResubscribesWhatIsSilentForThreeArchivePeriods) {
    WatchedRegistry w({kSilent});
    ParamInfo p;
    p.archive_period = "1000";  // ms
    w.backend.attribute(kSilent)->accept_config(AttributeTypes{5, 0, 0}, p);
    w.deliver(kSilent);
    const auto delivered = std::chrono::steady_clock::now();
    EXPECT_EQ(w.registry.resubscribe_silent(delivered + 2s, 1s), 0u);
    EXPECT_EQ(w.registry.resubscribe_silent(delivered + 4s, 1s), 1u);
    EXPECT_EQ(w.backend.unsubscribed(), std::vector<std::string>{kSilent});
    w.registry.subscribe_pass([] { return false; });
    // Periodic silence is judged again after each subscription (the period says events are due).
    EXPECT_EQ(w.registry.resubscribe_silent(std::chrono::steady_clock::now() + 4s, 1s), 1u);
    EXPECT_EQ(w.resubscribes(kSilent), 2u);
}

// A read is answered from a snapshot no older than snapshot_freshness (live figures, as hdbpp-es
// reads its queue), and reads within that period share one rebuild. No thread is started here,
// so nothing but the reads rebuilds the snapshot.
TEST(Archiver, ReadsSeeTheQueueWithoutWaitingForTheStatisticsTick) {
    for (const std::chrono::milliseconds freshness : {0ms, std::chrono::milliseconds(1h)}) {
        ArchiverOptions opts;
        opts.snapshot_freshness = freshness;
        auto queue = std::make_unique<EventQueue>(1000, nullptr);
        EventQueue *events = queue.get();
        Archiver archiver(opts, LibConfig{}, std::make_unique<FakeWriter>(std::make_shared<FakeWriter::Control>()),
                          std::move(queue), nullptr);
        EXPECT_EQ(archiver.fresh_snapshot()->pending_events, 0u);
        Record r;
        r.att_name = kName;
        events->push(std::move(r));
        const auto read = archiver.fresh_snapshot();
        EXPECT_EQ(read->pending_events, freshness == 0ms ? 1u : 0u) << "freshness " << freshness.count() << " ms";
        EXPECT_EQ(archiver.snapshot(), read);  // what the read rebuilt is the published snapshot
    }
}
