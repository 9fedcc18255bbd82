// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cmath>

#include "histogram.h"

using namespace hdbbench;

TEST(LogHistogram, BucketsCoverAndAreOrdered) {
    for (std::uint64_t v : {0ull, 1ull, 15ull, 16ull, 17ull, 31ull, 32ull, 1000ull, 123456789ull, 1ull << 40}) {
        const int b = LogHistogram::bucket_of(v);
        EXPECT_LE(LogHistogram::bucket_low(b), v);
        EXPECT_GE(LogHistogram::bucket_high(b), v);
    }
    for (int b = 1; b < LogHistogram::kBuckets; ++b)
        EXPECT_EQ(LogHistogram::bucket_low(b), LogHistogram::bucket_high(b - 1) + 1);
}

TEST(LogHistogram, QuantilesWithinRelativeError) {
    LogHistogram h;
    for (std::uint64_t v = 1; v <= 100000; ++v) h.record(v);
    EXPECT_EQ(h.count(), 100000u);
    EXPECT_EQ(h.max(), 100000u);
    EXPECT_EQ(h.min(), 1u);
    EXPECT_NEAR(static_cast<double>(h.quantile(0.5)), 50000.0, 50000.0 / 16);
    EXPECT_NEAR(static_cast<double>(h.quantile(0.99)), 99000.0, 99000.0 / 16);
    EXPECT_EQ(h.quantile(1.0), 100000u);
    EXPECT_EQ(LogHistogram().quantile(0.5), 0u);
}

TEST(WindowedHistogram, OldSlotsExpire) {
    using namespace std::chrono;
    WindowedHistogram w(milliseconds(1000), 10);
    const auto t0 = WindowedHistogram::Clock::time_point(seconds(1000));
    w.record(5, t0);
    w.record(7, t0 + milliseconds(500));
    EXPECT_EQ(w.snapshot(t0 + milliseconds(600)).count(), 2u);
    EXPECT_EQ(w.snapshot(t0 + milliseconds(1050)).count(), 1u);  // the first slot left the window
    EXPECT_EQ(w.snapshot(t0 + milliseconds(3000)).count(), 0u);
}

TEST(WindowedHistogram, AddMergesABatchIntoTheSlotOfItsTime) {
    using namespace std::chrono;
    WindowedHistogram w(milliseconds(1000), 10);
    const auto t0 = WindowedHistogram::Clock::time_point(seconds(1000));
    LogHistogram batch;
    for (std::uint64_t v : {3u, 900u, 40u}) batch.record(v);
    w.record(5, t0);
    w.add(batch, t0 + milliseconds(500));
    w.add(LogHistogram{}, t0 + milliseconds(550));  // an empty batch changes nothing
    const LogHistogram in_window = w.snapshot(t0 + milliseconds(600));
    EXPECT_EQ(in_window.count(), 4u);
    EXPECT_EQ(in_window.max(), 900u);
    EXPECT_EQ(in_window.min(), 3u);
    EXPECT_EQ(w.snapshot(t0 + milliseconds(1050)).count(), 3u);  // the batch stays with its own slot
}
