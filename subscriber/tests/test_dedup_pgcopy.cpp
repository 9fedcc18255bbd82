// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "mysql_writer.h"
#include "pg_writer.h"
#include "pgcopy.h"
#include "writer.h"

using namespace hdbbench;

namespace {
Record row(RecordKind k, const std::string &att, std::int64_t t) {
    Record r;
    r.kind = k;
    r.att_name = att;
    r.data_time = TimePoint(std::chrono::microseconds(t));
    return r;
}
}  // namespace

TEST(Dedup, ErrorRowSharingADataRowInstantIsShiftedNotDropped) {
    std::vector<Record> b = {row(RecordKind::Error, "a", 100), row(RecordKind::Data, "a", 100),
                             row(RecordKind::Data, "a", 99), row(RecordKind::Data, "b", 100)};
    const auto d = dedup_batch(b);
    EXPECT_EQ(d.keep.size(), 4u);
    EXPECT_EQ(d.shifted, 1u);
    EXPECT_EQ(d.dropped, 0u);
    EXPECT_EQ(b[0].data_time.time_since_epoch().count(), 98);  // 100 and 99 were taken by data rows
    // Idempotent: running it again on the same batch (a retry) changes nothing.
    const auto again = dedup_batch(b);
    EXPECT_EQ(again.shifted, 0u);
    EXPECT_EQ(again.keep.size(), 4u);
}

TEST(Dedup, DuplicateDataRowDropped) {
    std::vector<Record> b = {row(RecordKind::Data, "a", 5), row(RecordKind::Data, "a", 5),
                             row(RecordKind::History, "a", 5)};
    const auto d = dedup_batch(b);
    EXPECT_EQ(d.dropped, 1u);
    EXPECT_EQ(d.keep, (std::vector<std::size_t>{0, 2}));
}

TEST(PgCopy, HeaderTupleAndTrailer) {
    pgcopy::Buffer b;
    EXPECT_EQ(b.size(), 19u);
    EXPECT_EQ(b.data().substr(0, 11), std::string("PGCOPY\n\377\r\n\0", 11));
    b.begin_row(2);
    b.int4(1);
    b.null();
    b.finish();
    const std::string tail = b.data().substr(19);
    EXPECT_EQ(tail, std::string("\0\2\0\0\0\4\0\0\0\1\xff\xff\xff\xff\xff\xff", 16));
}

TEST(PgCopy, NumericAndTimestamp) {
    pgcopy::Buffer b;
    const std::size_t h = b.size();
    b.numeric_u64(18446744073709551615ull);  // 1844 6744 0737 0955 1615
    const std::string n = b.data().substr(h);
    ASSERT_EQ(n.size(), 4u + 8u + 10u);
    EXPECT_EQ(static_cast<unsigned char>(n[5]), 5);  // ndigits
    EXPECT_EQ(static_cast<unsigned char>(n[7]), 4);  // weight
    EXPECT_EQ((static_cast<unsigned char>(n[12]) << 8) | static_cast<unsigned char>(n[13]), 1844);
    pgcopy::Buffer z;
    z.numeric_u64(0);
    EXPECT_EQ(z.size() - h, 12u);
    pgcopy::Buffer t;
    t.timestamptz(TimePoint(std::chrono::microseconds(pgcopy::kPgEpochOffsetUs)));
    EXPECT_EQ(t.data().substr(h), std::string("\0\0\0\x08\0\0\0\0\0\0\0\0", 12));
}

TEST(PgText, TimestampAndArrayQuoting) {
    EXPECT_EQ(pg_timestamp(TimePoint(std::chrono::microseconds(1500000))), "1970-01-01 00:00:01.500000+00");
    EXPECT_EQ(pg_text_array({"a", "b\"c", "d\\"}), "{\"a\",\"b\\\"c\",\"d\\\\\"}");
    EXPECT_EQ(pg_table_name(kDevDouble, kImage), "att_image_devdouble");
    EXPECT_EQ(mysql_table_name(kDevDouble, kImage, kRead), "att_array_devdouble_ro");
    EXPECT_EQ(type_name(kDevULong64), "DEV_ULONG64");
}
