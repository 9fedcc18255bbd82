// SPDX-License-Identifier: Apache-2.0
// The ClickHouse writer's encoding, without a server: ids as the Python side computes them
// (hdbbench/backends/clickhouse/tables.py), table names, and RowBinary rows of every shape.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
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

// Little-endian bytes of a value, as RowBinary holds it.
template <typename T>
std::string le(T v) {
    std::string o(sizeof(T), '\0');
    std::memcpy(o.data(), &v, sizeof(T));  // the test machines are little-endian, as the writer's output
    return o;
}
const std::string kHead = le<std::uint64_t>(966422678611846007ULL) + le<std::int64_t>(kT0);
const std::string kNull(1, '\1');
const std::string kPresent(1, '\0');

std::string row(const Record &r) {
    std::string out;
    clickhouse_data_row(r, out);
    return out;
}

TEST(ClickHouseWriter, ScalarRowsHoldNullsAndExactValues) {
    Record r = record(kDevDouble, kScalar, kReadWrite);
    r.value_r = std::vector<double>{0.1};
    r.value_w = std::vector<double>{std::numeric_limits<double>::quiet_NaN()};
    const std::string got = row(r);
    ASSERT_EQ(got.size(), kHead.size() + 9 + 9 + 1 + 1);
    EXPECT_EQ(got.substr(0, 16 + 9), kHead + kPresent + le(0.1));  // the double's own bits
    double w = 0;
    std::memcpy(&w, got.data() + 26, 8);
    EXPECT_TRUE(std::isnan(w));
    EXPECT_EQ(got.substr(34), le<std::int8_t>(0) + kNull);
    Record ro = record(kDevShort, kScalar, kRead);
    ro.value_r = std::vector<std::int64_t>{-5};
    ro.value_w = std::vector<std::int64_t>{9};  // a READ attribute stores no write value
    EXPECT_EQ(row(ro), kHead + kPresent + le<std::int16_t>(-5) + kNull + le<std::int8_t>(0) + kNull);
    Record f = record(kDevFloat, kScalar, kRead);
    f.value_r = std::vector<double>{static_cast<double>(1.1f)};
    EXPECT_EQ(row(f), kHead + kPresent + le(1.1f) + kNull + le<std::int8_t>(0) + kNull);
}

TEST(ClickHouseWriter, ErrorRowsNameTheirDescriptionById) {
    Record r = record(kDevDouble, kSpectrum, kRead);
    r.kind = RecordKind::Error;
    r.quality = kQualityInvalid;
    r.text = "Read error";
    const std::string zero = le<std::uint32_t>(0);
    EXPECT_EQ(row(r), kHead + std::string(2, '\0') + zero + zero + zero + zero + le<std::int8_t>(1) + kPresent +
                          le<std::uint64_t>(4437985368302804847ULL));
}

TEST(ClickHouseWriter, StringArraysHoldTheirBytes) {
    Record r = record(kDevString, kSpectrum, kRead);
    r.value_r = std::vector<std::string>{"a'b", std::string(200, 'x')};
    const std::string got = row(r);
    // varint 2 elements; "a'b" (length 3); 200 bytes (varint 0xC8 0x01)
    EXPECT_EQ(got.substr(16, 1 + 1 + 3 + 2), std::string("\2\3a'b\xC8\1", 7));
    EXPECT_EQ(got.substr(16 + 7, 200), std::string(200, 'x'));
    EXPECT_EQ(got.substr(16 + 207), std::string(1, '\0') + le<std::uint32_t>(2) + le<std::uint32_t>(0) +
                                        le<std::uint32_t>(0) + le<std::uint32_t>(0) + le<std::int8_t>(0) + kNull);
    EXPECT_EQ(clickhouse_tsv_text("x\ny\\"), "x\\ny\\\\");
}

TEST(ClickHouseWriter, ImagesKeepTheirDimensions) {
    Record r = record(kDevUChar, kImage, kRead);
    r.value_r = std::vector<std::int64_t>{1, 2, 3, 4, 5, 6};
    r.dim_x_r = 3;
    r.dim_y_r = 2;
    EXPECT_EQ(row(r), kHead + std::string("\6\1\2\3\4\5\6", 7) + std::string(1, '\0') + le<std::uint32_t>(3) +
                          le<std::uint32_t>(2) + le<std::uint32_t>(0) + le<std::uint32_t>(0) + le<std::int8_t>(0) + kNull);
}
