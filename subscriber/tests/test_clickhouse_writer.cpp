// SPDX-License-Identifier: Apache-2.0
// The ClickHouse writer's encoding, without a server: ids as the Python side computes them
// (hdbbench/backends/clickhouse/tables.py), table names, and TabSeparated rows of every shape.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "clickhouse_writer.h"
#include "writer_registry.h"

using namespace hdbbench;

namespace {
constexpr std::int64_t kT0 = 1700000000LL * 1000000 + 7;  // µs

Record record(int type, int format, int write_type) {
    Record r;
    r.kind = RecordKind::Data;
    r.att_name = "tango://h:10000/a/b/c/d";
    r.data_type = static_cast<std::int8_t>(type);
    r.data_format = static_cast<std::int8_t>(format);
    r.write_type = static_cast<std::int8_t>(write_type);
    r.data_time = TimePoint(std::chrono::microseconds(kT0));
    return r;
}
}  // namespace

TEST(ClickHouseWriter, IdsAreThePythonSidesFnv1a) {
    // Values of hdbbench.backends.clickhouse.tables.fnv1a64.
    EXPECT_EQ(clickhouse_id("tango://h:10000/a/b/c/d"), 966422678611846007ULL);
    EXPECT_EQ(clickhouse_id(""), 5472609002491880229ULL);
    EXPECT_EQ(clickhouse_id("Read error"), 4437985368302804847ULL);
}

TEST(ClickHouseWriter, TablesByTypeAndFormatFamily) {
    EXPECT_EQ(clickhouse_table_name(kDevDouble, kScalar), "att_scalar_devdouble");
    EXPECT_EQ(clickhouse_table_name(kDevString, kSpectrum), "att_array_devstring");
    EXPECT_EQ(clickhouse_table_name(kDevUChar, kImage), "att_array_devuchar");
    EXPECT_NE(WriterRegistry::global().find("clickhouse"), nullptr);
}

TEST(ClickHouseWriter, ScalarRowsHoldNullsAndNonFiniteValues) {
    Record r = record(kDevDouble, kScalar, kReadWrite);
    r.value_r = std::vector<double>{0.1};
    r.value_w = std::vector<double>{std::numeric_limits<double>::quiet_NaN()};
    EXPECT_EQ(clickhouse_data_row(r), "966422678611846007\t1700000000000007\t0.10000000000000001\tnan\t0\t\\N");
    Record ro = record(kDevLong64, kScalar, kRead);
    ro.value_r = std::vector<std::int64_t>{-5};
    ro.value_w = std::vector<std::int64_t>{9};  // a READ attribute stores no write value
    EXPECT_EQ(clickhouse_data_row(ro), "966422678611846007\t1700000000000007\t-5\t\\N\t0\t\\N");
}

TEST(ClickHouseWriter, ErrorRowsNameTheirDescriptionById) {
    Record r = record(kDevDouble, kSpectrum, kRead);
    r.kind = RecordKind::Error;
    r.quality = kQualityInvalid;
    r.text = "Read error";
    EXPECT_EQ(clickhouse_data_row(r),
              "966422678611846007\t1700000000000007\t[]\t[]\t0\t0\t0\t0\t1\t4437985368302804847");
}

TEST(ClickHouseWriter, StringArraysAreQuotedAndEscaped) {
    Record r = record(kDevString, kSpectrum, kRead);
    r.value_r = std::vector<std::string>{"a'b", "tab\there", "back\\slash"};
    EXPECT_EQ(clickhouse_data_row(r), "966422678611846007\t1700000000000007\t['a\\'b','tab\\there','back\\\\slash']"
                                      "\t[]\t3\t0\t0\t0\t0\t\\N");
    EXPECT_EQ(clickhouse_tsv_text("x\ny\\"), "x\\ny\\\\");
}

TEST(ClickHouseWriter, ImagesKeepTheirDimensions) {
    Record r = record(kDevUChar, kImage, kRead);
    r.value_r = std::vector<std::int64_t>{1, 2, 3, 4, 5, 6};
    r.dim_x_r = 3;
    r.dim_y_r = 2;
    EXPECT_EQ(clickhouse_data_row(r), "966422678611846007\t1700000000000007\t[1,2,3,4,5,6]\t[]\t3\t2\t0\t0\t0\t\\N");
}
