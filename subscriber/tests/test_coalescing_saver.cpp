// SPDX-License-Identifier: Apache-2.0
// The AttributeList saver: a burst of requests costs few saves, every request is saved by the time
// stop() returns, and a save sees the state of the latest request made before it began.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "coalescing_saver.h"

using hdbbench::CoalescingSaver;
using namespace std::chrono_literals;

namespace {

// What a save writes: the list as it is when the save runs (as the subscriber reads its registry).
struct FakeList {
    std::mutex mutex;
    int current = 0;
    std::vector<int> written;
    void change(int v) {
        std::lock_guard<std::mutex> lock(mutex);
        current = v;
    }
    void save() {
        std::lock_guard<std::mutex> lock(mutex);
        written.push_back(current);
    }
};

}  // namespace

TEST(CoalescingSaver, ABurstOfRequestsSharesFewSaves) {
    FakeList list;
    CoalescingSaver saver([&] { list.save(); }, 200ms);
    saver.start();
    for (int i = 1; i <= 1000; ++i) {
        list.change(i);
        saver.request();
    }
    saver.stop();
    ASSERT_FALSE(list.written.empty());
    EXPECT_EQ(list.written.back(), 1000);  // the last request is saved
    EXPECT_LT(list.written.size(), 1000u / 10);
    EXPECT_EQ(saver.saves(), list.written.size());
}

TEST(CoalescingSaver, StopSavesAPendingRequestAtOnce) {
    FakeList list;
    CoalescingSaver saver([&] { list.save(); }, 1h);  // the thread would never get to it
    saver.start();
    list.change(7);
    saver.request();
    saver.stop();
    ASSERT_EQ(list.written.size(), 1u);
    EXPECT_EQ(list.written[0], 7);
}

TEST(CoalescingSaver, NothingRequestedNothingSaved) {
    FakeList list;
    CoalescingSaver saver([&] { list.save(); }, 10ms);
    saver.start();
    std::this_thread::sleep_for(50ms);
    saver.stop();
    EXPECT_TRUE(list.written.empty());
}

TEST(CoalescingSaver, FlushSavesNowAndOnlyOnce) {
    FakeList list;
    CoalescingSaver saver([&] { list.save(); }, 1h);
    saver.start();
    list.change(3);
    saver.request();
    saver.flush();
    saver.flush();  // nothing new was requested
    ASSERT_EQ(list.written.size(), 1u);
    EXPECT_EQ(list.written[0], 3);
    saver.stop();
    EXPECT_EQ(list.written.size(), 1u);
}

TEST(CoalescingSaver, RequestsAfterASaveGetTheirOwn) {
    FakeList list;
    CoalescingSaver saver([&] { list.save(); }, 5ms);
    saver.start();
    list.change(1);
    saver.request();
    saver.flush();
    list.change(2);
    saver.request();
    saver.stop();
    ASSERT_EQ(list.written.size(), 2u);
    EXPECT_EQ(list.written[1], 2);
}
