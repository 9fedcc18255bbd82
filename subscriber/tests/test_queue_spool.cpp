// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>
#include <unistd.h>

#include "event_queue.h"
#include "spool.h"

using namespace hdbbench;
namespace fs = std::filesystem;

namespace {
std::string temp_dir(const std::string &name) {
    const auto d = fs::temp_directory_path() / ("hdbbench-es-test-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(d);
    return d.string();
}

Record make(int i) {
    Record r;
    r.kind = RecordKind::Data;
    r.att_name = "tango://h:1/a/b/c/x" + std::to_string(i % 3);
    r.data_type = kDevDouble;
    r.data_format = kSpectrum;
    r.write_type = kReadWrite;
    r.quality = static_cast<std::int16_t>(i % 5);
    r.data_time = TimePoint(std::chrono::microseconds(1700000000000000LL + i));
    r.recv_time = r.data_time + std::chrono::microseconds(10);
    r.value_r = std::vector<double>{i * 1.5, -2.0};
    r.value_w = std::vector<double>{3.25};
    r.dim_x_r = 2;
    r.dim_x_w = 1;
    return r;
}
}  // namespace

TEST(Spool, SerializationRoundTripEveryKind) {
    std::vector<Record> recs;
    recs.push_back(make(1));
    Record s;
    s.kind = RecordKind::Data;
    s.data_type = kDevString;
    s.value_r = std::vector<std::string>{"a", std::string("b\0c", 3)};
    recs.push_back(s);
    Record u;
    u.data_type = kDevULong64;
    u.value_r = std::vector<std::uint64_t>{18446744073709551615ull};
    u.value_w = std::vector<std::int64_t>{-5};
    recs.push_back(u);
    Record e;
    e.kind = RecordKind::Error;
    e.text = "missed events";
    recs.push_back(e);
    Record p;
    p.kind = RecordKind::Param;
    auto pi = std::make_shared<ParamInfo>();
    pi->label = "L";
    pi->archive_period = "1000";
    pi->enum_labels = {"OFF", "ON"};
    p.param = pi;
    recs.push_back(p);
    for (const auto &r : recs) EXPECT_EQ(deserialize_record(serialize_record(r)), r);
    EXPECT_THROW(deserialize_record(serialize_record(recs[0]).substr(0, 10)), SpoolError);
}

TEST(Spool, AppendPopInOrderAcrossSegmentsAndReopen) {
    const auto dir = temp_dir("spool");
    {
        Spool s(dir, 100 << 20, 4096);  // small segments: many files
        for (int i = 0; i < 500; ++i) ASSERT_EQ(s.append(make(i)), SpoolAppend::Appended);
        EXPECT_EQ(s.count(), 500u);
        for (int i = 0; i < 200; ++i) {
            auto r = s.pop();
            ASSERT_TRUE(r);
            EXPECT_EQ(*r, make(i));
        }
        for (int i = 500; i < 600; ++i) ASSERT_EQ(s.append(make(i)), SpoolAppend::Appended);
    }
    // A new process finds what was left (segments already read completely were deleted).
    Spool s(dir, 100 << 20, 4096);
    EXPECT_GE(s.count(), 400u);
    std::optional<Record> r;
    int first = -1, last = -1, n = 0;
    while ((r = s.pop())) {
        const int i = static_cast<int>(r->data_time.time_since_epoch().count() - 1700000000000000LL);
        if (first < 0) first = i;
        EXPECT_TRUE(last < 0 || i == last + 1);
        last = i;
        ++n;
    }
    EXPECT_EQ(last, 599);
    EXPECT_LE(first, 200);
    EXPECT_TRUE(s.empty());
    fs::remove_all(dir);
}

TEST(Spool, LimitAndTornTail) {
    const auto dir = temp_dir("limit");
    {
        Spool s(dir, 1000, 4096);
        int accepted = 0;
        for (int i = 0; i < 100; ++i) accepted += s.append(make(i)) == SpoolAppend::Appended ? 1 : 0;
        EXPECT_GT(accepted, 0);
        EXPECT_LT(accepted, 100);
        EXPECT_LE(s.bytes(), 1000u);
    }
    // Tear the last record: it is ignored at reopen, the others survive.
    std::string seg;
    for (const auto &e : fs::directory_iterator(dir)) seg = e.path().string();
    const auto size = fs::file_size(seg);
    fs::resize_file(seg, size - 3);
    Spool s(dir, 1000, 4096);
    const auto n = s.count();
    EXPECT_GT(n, 0u);
    std::uint64_t popped = 0;
    while (s.pop()) ++popped;
    EXPECT_EQ(popped, n);
    fs::remove_all(dir);
}

TEST(EventQueue, MemoryThenSpoolKeepsOrderAndCountsLoss) {
    const auto dir = temp_dir("queue");
    EventQueue q(10, std::make_unique<Spool>(dir, 20000, 4096));
    for (int i = 0; i < 100; ++i) q.push(make(i));
    auto s = q.snapshot();
    EXPECT_EQ(s.in_memory, 10u);
    EXPECT_EQ(s.lost, 0u);
    EXPECT_EQ(s.pending(), 100u);
    ASSERT_TRUE(s.oldest_recv);
    EXPECT_EQ(*s.oldest_recv, make(0).recv_time);
    int next = 0;
    while (next < 100) {
        auto batch = q.pop_batch(7, std::chrono::milliseconds(0), std::chrono::milliseconds(10));
        ASSERT_FALSE(batch.empty());
        for (const auto &r : batch) EXPECT_EQ(r, make(next++));
    }
    EXPECT_EQ(q.snapshot().pending(), 0u);
    // Memory is used again once the spool is drained.
    q.push(make(1000));
    EXPECT_EQ(q.snapshot().in_memory, 1u);
    // Without room anywhere, events are counted as lost.
    EventQueue small(2, nullptr);
    for (int i = 0; i < 5; ++i) small.push(make(i));
    EXPECT_EQ(small.snapshot().lost, 3u);
    fs::remove_all(dir);
}

TEST(EventQueue, PopWaitsAndCloseWakes) {
    EventQueue q(100, nullptr);
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_TRUE(q.pop_batch(10, std::chrono::milliseconds(0), std::chrono::milliseconds(30)).empty());
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(25));
    std::thread t([&q] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        q.push(make(1));
    });
    auto b = q.pop_batch(10, std::chrono::milliseconds(5), std::chrono::milliseconds(2000));
    t.join();
    EXPECT_EQ(b.size(), 1u);
    q.close();
    EXPECT_TRUE(q.pop_batch(10, std::chrono::milliseconds(100), std::chrono::milliseconds(2000)).empty());
}
