// SPDX-License-Identifier: Apache-2.0
// The generator's runtime on a fake clock: schedules, bursts, rewind, rates, lag.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "scheduler.h"

using namespace hdbgen;

namespace {

AttrSpec spec(const std::string &name, double rate_hz, double p_error = 0.0) {
    AttrSpec s;
    s.name = name;
    s.rate_hz = rate_hz;
    s.p_error = p_error;
    return s;
}

constexpr int64_t kT0 = 1'700'000'000'000'000;

}  // namespace

TEST(Scheduler, EventsCarryTheirScheduledTimesWhateverTheStepping) {
    Scheduler sch(11, "sim/test/d0", {spec("a", 10.0, 0.2), spec("b", 3.0)}, false, 1);
    sch.start(nullptr, kT0);
    Batch batch;
    int64_t now = kT0;
    for (int i = 0; i < 100; ++i) {  // 10 s in uneven steps
        now += 10'000 + (i * 7919) % 190'000;
        sch.take_due(0, now, 100000, batch);
    }
    std::vector<int64_t> a_ts;
    for (const auto &it : batch.items)
        if (it.attr == 0) a_ts.push_back(it.ts_us);
    ASSERT_GE(a_ts.size(), 90u);
    for (size_t k = 0; k < a_ts.size(); ++k) EXPECT_EQ(a_ts[k], kT0 + static_cast<int64_t>(k) * 100'000);
    const auto stats = sch.stats(now);
    EXPECT_EQ(stats[0].emitted, a_ts.size());
    EXPECT_GT(stats[0].errors, 0u);
}

TEST(Scheduler, BurstEmitsExactlyNAndResetRepeatsTheFirstRun) {
    Scheduler sch(3, "sim/test/d0", {spec("a", 1.0, 0.1), spec("b", 1.0)}, false, 2);
    uint64_t sums[2][2];
    for (auto &run : sums) {
        sch.reset();
        sch.burst(25, nullptr);
        Batch batch;
        for (int g = 0; g < sch.groups(); ++g) sch.take_due(g, kT0, 100000, batch);
        EXPECT_EQ(batch.items.size(), 50u);
        const auto stats = sch.stats(kT0);
        run[0] = stats[0].checksum_sum;
        run[1] = stats[1].checksum_sum;
        EXPECT_EQ(sch.total_emitted(), 50u);
    }
    EXPECT_EQ(sums[0][0], sums[1][0]);
    EXPECT_EQ(sums[0][1], sums[1][1]);
    EXPECT_NE(sums[0][0], sums[0][1]);
}

TEST(Scheduler, RateChangeRestartsTheScheduleAndLagIsReported) {
    Scheduler sch(1, "d/e/f", {spec("a", 10.0)}, false, 1);
    sch.start(nullptr, kT0);
    Batch batch;
    sch.take_due(0, kT0 + 1'000'000, 100000, batch);
    EXPECT_EQ(batch.items.size(), 11u);
    sch.set_rate(100.0, nullptr, kT0 + 1'000'000);
    batch.clear();
    sch.take_due(0, kT0 + 1'500'000, 100000, batch);
    ASSERT_EQ(batch.items.size(), 50u);
    EXPECT_EQ(batch.items[1].ts_us - batch.items[0].ts_us, 10'000);
    EXPECT_NEAR(sch.stats(kT0 + 2'500'000)[0].lag_s, 1.0, 0.011);  // nothing taken for a second
    sch.stop(nullptr);
    EXPECT_EQ(sch.stats(kT0 + 2'500'000)[0].lag_s, 0.0);
    EXPECT_FALSE(sch.any_running());
}

TEST(Scheduler, RefusesDuplicateNamesAndBadRates) {
    EXPECT_THROW(Scheduler(1, "d/e/f", {spec("a", 1.0), spec("A", 1.0)}, false, 1), std::runtime_error);
    Scheduler sch(1, "d/e/f", {spec("a", 1.0)}, false, 1);
    EXPECT_THROW(sch.set_rate(0.0, nullptr, kT0), std::invalid_argument);
    EXPECT_EQ(sch.find("A"), 0);
    EXPECT_EQ(sch.find("zz"), -1);
}

TEST(Scheduler, SeededPhasesSpreadAPeriodAlignedOnesCoincideAndRateChangesKeepThem) {
    std::vector<AttrSpec> specs;
    for (int i = 0; i < 40; ++i) specs.push_back(spec("a" + std::to_string(i), 2.0));
    const int64_t t1 = kT0 + 10'000'000;
    for (const Phases phases : {Phases::Aligned, Phases::Seeded}) {
        Scheduler sch(7, "sim/test/d0", specs, false, 1, phases);
        sch.start(nullptr, kT0);
        Batch first;
        sch.take_due(0, kT0 + 499'999, SIZE_MAX, first);  // one period: the first event of each attribute
        ASSERT_EQ(first.items.size(), specs.size());
        std::vector<int64_t> offsets;
        for (const auto &it : first.items) offsets.push_back(it.ts_us - kT0);
        std::sort(offsets.begin(), offsets.end());
        if (phases == Phases::Aligned) {
            EXPECT_EQ(offsets.front(), 0);
            EXPECT_EQ(offsets.back(), 0);
        } else {
            EXPECT_EQ(std::unique(offsets.begin(), offsets.end()), offsets.end());  // no two at once
            for (int64_t quarter = 0; quarter < 4; ++quarter)
                EXPECT_TRUE(std::any_of(offsets.begin(), offsets.end(), [&](int64_t o) {
                    return o >= quarter * 125'000 && o < (quarter + 1) * 125'000;
                })) << "no attribute in quarter " << quarter << " of the period";
        }
        Batch rest;
        sch.take_due(0, t1, SIZE_MAX, rest);
        sch.set_rate(4.0, nullptr, t1);  // a period of 250 ms: each keeps its fraction of the period
        Batch after;
        sch.take_due(0, t1 + 249'999, SIZE_MAX, after);
        ASSERT_EQ(after.items.size(), specs.size());
        for (size_t i = 0; i < after.items.size(); ++i) {
            const auto &it = after.items[i];
            const auto before = std::find_if(first.items.begin(), first.items.end(),
                                             [&](const PushItem &p) { return p.attr == it.attr; });
            EXPECT_NEAR(static_cast<double>(it.ts_us - t1) / 250'000.0,
                        static_cast<double>(before->ts_us - kT0) / 500'000.0, 4e-6) << sch.spec(it.attr).name;
        }
    }
}
