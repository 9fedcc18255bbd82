// SPDX-License-Identifier: Apache-2.0
// The writer's rate cap (LibConfiguration max_events_per_s): its schedule on a fake clock (no sleeps,
// no wall-time assertions), the batch-size rule, what counts as an event, the key's parsing, and
// the writer loop under a cap (batch sizes, and a stop that does not wait for the schedule).
#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>

#include "config.h"
#include "rate_cap.h"
#include "writer_loop.h"

using namespace hdbbench;
using namespace std::chrono_literals;

namespace {

using time_point = RateCap::time_point;
const time_point kT0 = time_point(std::chrono::hours(1000));

Record record(RecordKind kind) {
    Record r;
    r.kind = kind;
    r.att_name = "tango://h:1/sim/dev/1/value";
    r.data_type = kDevDouble;
    r.data_format = kScalar;
    r.write_type = kRead;
    r.value_r = std::vector<double>{1.0};
    r.dim_x_r = 1;
    r.data_time = r.recv_time = now_us();
    return r;
}

}  // namespace

TEST(RateCap, BatchesFollowTheScheduleFromTheFirstReport) {
    RateCap cap(1000, 100);
    time_point now = kT0;
    for (int k = 1; k <= 50; ++k) {
        const time_point next = cap.next_allowed(100, now);
        EXPECT_EQ(next, kT0 + k * 100ms) << "batch " << k;
        now = next;  // an instant writer starts each batch as soon as it may
    }
}

TEST(RateCap, WriteTimeWithinTheSlotDoesNotSlowTheRate) {
    RateCap cap(1000, 100);
    time_point next = cap.next_allowed(100, kT0);
    for (int k = 2; k <= 20; ++k) {
        next = cap.next_allowed(100, next + 30ms);  // each write takes 30 ms of its 100-ms slot
        EXPECT_EQ(next, kT0 + k * 100ms) << "batch " << k;
    }
}

TEST(RateCap, AWriterSlowerThanTheCapNeverWaits) {
    RateCap cap(1000, 100);
    time_point now = kT0;
    cap.next_allowed(100, now);
    for (int k = 0; k < 10; ++k) {
        now += 300ms;  // 100 events take 300 ms to write: 333 events/s, below the cap
        EXPECT_LE(cap.next_allowed(100, now), now);
    }
}

TEST(RateCap, IdleTimeGivesAtMostOneBatchOfCredit) {
    for (const auto idle : {std::chrono::nanoseconds(10s), std::chrono::nanoseconds(std::chrono::hours(24))}) {
        RateCap cap(1000, 100);
        cap.next_allowed(100, kT0);  // next batch allowed at kT0 + 100 ms, but the queue stays empty
        const time_point back = kT0 + idle;
        // The batch that ends the idle period and one more full batch may go at once...
        EXPECT_EQ(cap.next_allowed(100, back), back);
        // ...then the schedule holds again, however long the idle period was.
        EXPECT_EQ(cap.next_allowed(100, back), back + 100ms);
        EXPECT_EQ(cap.next_allowed(100, back + 100ms), back + 200ms);
    }
}

TEST(RateCap, SmallBatchesAfterIdleShareTheSameCredit) {
    RateCap cap(1000, 100);
    cap.next_allowed(100, kT0);
    const time_point back = kT0 + 10s;
    // 10 events used 10 ms of the 100 ms of credit; the next full batch ends 10 ms after `back`.
    EXPECT_LE(cap.next_allowed(10, back), back);
    EXPECT_EQ(cap.next_allowed(100, back), back + 10ms);
}

TEST(RateCap, NoDriftWhenSlotsAreNotWholeNanoseconds) {
    RateCap cap(3000, 300);  // one event: 333,333.33 ns
    time_point next = cap.next_allowed(1, kT0);
    for (int i = 1; i < 3000; ++i) next = cap.next_allowed(1, next);
    EXPECT_EQ(next, kT0 + 1s);
}

TEST(RateCap, RecordsThatAreNotEventsTakeNoTime) {
    RateCap cap(1000, 100);
    const time_point next = cap.next_allowed(100, kT0);
    EXPECT_EQ(cap.next_allowed(0, next), next);  // a batch of att_parameter/att_history records only
}

TEST(RateCap, ZeroMeansNoCap) {
    RateCap cap(0, 1000);
    EXPECT_FALSE(cap.active());
    for (int k = 0; k < 5; ++k) EXPECT_EQ(cap.next_allowed(1000000, kT0 + k * 1ms), kT0 + k * 1ms);
}

TEST(RateCap, HugeCapsDoNotOverflow) {
    RateCap top(RateCap::kMaxEventsPerS, 1000);
    EXPECT_EQ(top.next_allowed(1000000, kT0), kT0 + 1ms);
    RateCap beyond(std::numeric_limits<std::uint64_t>::max(), 1000);  // clamped to kMaxEventsPerS
    EXPECT_EQ(beyond.next_allowed(1000000, kT0), kT0 + 1ms);
}

TEST(RateCap, BatchSizeIsATenthOfASecondOfTheCap) {
    EXPECT_EQ(capped_batch_size(1000, 0), 1000u);   // no cap: as configured
    EXPECT_EQ(capped_batch_size(1000, 500), 50u);
    EXPECT_EQ(capped_batch_size(1000, 3000), 300u);
    EXPECT_EQ(capped_batch_size(20, 3000), 20u);    // never above batch_size
    EXPECT_EQ(capped_batch_size(1000, 5), 1u);      // at least one record
}

TEST(RateCap, OnlyDataAndErrorRecordsAreEvents) {
    const std::vector<Record> batch = {record(RecordKind::Data), record(RecordKind::Param),
                                       record(RecordKind::Error), record(RecordKind::History),
                                       record(RecordKind::Data)};
    EXPECT_EQ(count_events(batch), 3u);
}

TEST(RateCap, ConfigurationKey) {
    EXPECT_EQ(LibConfig::parse({"backend=null"}).max_events_per_s, 0u);
    EXPECT_EQ(LibConfig::parse({"backend=null", "max_events_per_s=3000"}).max_events_per_s, 3000u);
    EXPECT_EQ(LibConfig::parse({"backend=null", "MAX_EVENTS_PER_S = 0"}).max_events_per_s, 0u);
    for (const char *bad : {"max_events_per_s=-1", "max_events_per_s=3k", "max_events_per_s=",
                            "max_events_per_s=1e3", "max_events_per_s=1000000001",
                            "max_events_per_s=99999999999999999999999"}) {
        try {
            LibConfig::parse({"backend=null", bad});
            ADD_FAILURE() << bad << " was accepted";
        } catch (const ConfigError &e) {
            EXPECT_NE(std::string(e.what()).find("max_events_per_s"), std::string::npos) << e.what();
        }
    }
}

namespace {

class CountingWriter : public Writer {
public:
    struct Control {
        std::mutex mutex;
        std::vector<std::size_t> batch_sizes;
        std::size_t stored = 0;
    };
    explicit CountingWriter(std::shared_ptr<Control> c) : c_(std::move(c)) {}
    std::string name() const override { return "counting"; }
    void connect() override { connected_ = true; }
    bool connected() const override { return connected_; }
    void disconnect() override { connected_ = false; }
    WriteResult write_batch(std::vector<Record> &batch) override {
        std::lock_guard<std::mutex> lock(c_->mutex);
        c_->batch_sizes.push_back(batch.size());
        c_->stored += batch.size();
        return {};
    }

private:
    std::shared_ptr<Control> c_;
    bool connected_ = false;
};

// Poll until pred() holds; the bound only keeps a broken build from hanging, it measures nothing.
template <typename Pred>
bool eventually(Pred pred) {
    for (int i = 0; i < 2000; ++i) {
        if (pred()) return true;
        std::this_thread::sleep_for(10ms);
    }
    return pred();
}

}  // namespace

TEST(RateCapWriterLoop, BatchesAreCappedAtATenthOfTheRate) {
    auto control = std::make_shared<CountingWriter::Control>();
    EventQueue queue(1000, nullptr);
    WriterLoopOptions opts;
    opts.batch_size = 1000;
    opts.max_events_per_s = 200;  // batches of at most 20 records
    WriterLoop loop(std::make_unique<CountingWriter>(control), queue, opts,
                    [](const std::vector<Record> &, const WriteResult &, double, TimePoint) {}, Logger{});
    for (int i = 0; i < 60; ++i) queue.push(record(RecordKind::Data));
    loop.start();
    EXPECT_TRUE(eventually([&] {
        std::lock_guard<std::mutex> lock(control->mutex);
        return control->stored == 60;
    }));
    loop.stop();
    std::lock_guard<std::mutex> lock(control->mutex);
    for (std::size_t n : control->batch_sizes) EXPECT_LE(n, 20u);
}

TEST(RateCapWriterLoop, StopDoesNotWaitForTheScheduleAndDrainsWhatIsQueued) {
    auto control = std::make_shared<CountingWriter::Control>();
    EventQueue queue(1000, nullptr);
    WriterLoopOptions opts;
    opts.max_events_per_s = 1;  // one event, then a 1-s wait for the next
    WriterLoop loop(std::make_unique<CountingWriter>(control), queue, opts,
                    [](const std::vector<Record> &, const WriteResult &, double, TimePoint) {}, Logger{});
    loop.start();
    queue.push(record(RecordKind::Data));
    ASSERT_TRUE(eventually([&] {
        std::lock_guard<std::mutex> lock(control->mutex);
        return control->stored == 1;
    }));
    // Capped, these would take 50 s, ten times drain_at_stop: stop writes them all at once.
    for (int i = 0; i < 50; ++i) queue.push(record(RecordKind::Data));
    loop.stop();
    std::lock_guard<std::mutex> lock(control->mutex);
    EXPECT_EQ(control->stored, 51u);
}
