// SPDX-License-Identifier: Apache-2.0
// The InfluxDB writer's line protocol, without a server: ids (the same as hdbbench's Python), escaping,
// non-finite floats, arrays as JSON, the types it refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "influxdb_writer.h"

using namespace hdbbench;

namespace {
Record data(int type, int format, Values r, Values w = {}) {
    Record rec;
    rec.kind = RecordKind::Data;
    rec.data_type = static_cast<int8_t>(type);
    rec.data_format = static_cast<int8_t>(format);
    rec.write_type = kRead;
    rec.att_name = "tango://testhost:10000/test/devdouble/scalar/read";
    rec.data_time = TimePoint(std::chrono::microseconds(1700000000123456));
    rec.value_r = std::move(r);
    rec.value_w = std::move(w);
    return rec;
}
}  // namespace

TEST(InfluxWriter, IdsAreThoseOfThePythonBackend) {
    // hdbbench.backends.influxdb.tables.att_conf_id of the same names.
    EXPECT_EQ(influx_att_conf_id("tango://testhost:10000/test/devdouble/scalar/read"), 4334995495988549);
    EXPECT_EQ(influx_att_conf_id(""), 5239054864098085);
    EXPECT_EQ(influx_att_conf_id("d\xc3\xb6s \xe2\x9c\x93"), 4689552198852460);
}

TEST(InfluxWriter, StringFieldsEscapeQuotesAndBackslashes) {
    EXPECT_EQ(influx_string_field("a\"b\\c\nd"), "\"a\\\"b\\\\c\nd\"");
    EXPECT_EQ(influx_string_field(""), "\"\"");
}

TEST(InfluxWriter, ScalarLinesAreTypedAndNonFiniteFloatsGoToTheirWord) {
    EXPECT_EQ(influx_event_line(data(kDevDouble, kScalar, std::vector<double>{0.5})),
              "att_scalar_devdouble,att_conf_id=4334995495988549 quality=0i,value_r=0.5 1700000000123456");
    EXPECT_EQ(influx_event_line(data(kDevDouble, kScalar, std::vector<double>{std::nan("")})),
              "att_scalar_devdouble,att_conf_id=4334995495988549 quality=0i,value_r_special=\"NaN\" 1700000000123456");
    EXPECT_EQ(influx_event_line(data(kDevLong64, kScalar, std::vector<std::int64_t>{-9223372036854775807 - 1})),
              "att_scalar_devlong64,att_conf_id=4334995495988549 quality=0i,value_r=-9223372036854775808i "
              "1700000000123456");
    EXPECT_EQ(influx_event_line(data(kDevBoolean, kScalar, std::vector<std::int64_t>{1}, std::vector<std::int64_t>{0})),
              "att_scalar_devboolean,att_conf_id=4334995495988549 quality=0i,value_r=true,value_w=false "
              "1700000000123456");
    Record none = data(kDevString, kScalar, {});
    none.quality = kQualityInvalid;
    EXPECT_EQ(influx_event_line(none), "att_scalar_devstring,att_conf_id=4334995495988549 quality=1i 1700000000123456");
}

TEST(InfluxWriter, ErrorEventsCarryTheirDescription) {
    Record err = data(kDevDouble, kScalar, {});
    err.kind = RecordKind::Error;
    err.quality = kQualityInvalid;
    err.text = "Read \"error\"";
    EXPECT_EQ(influx_event_line(err), "att_scalar_devdouble,att_conf_id=4334995495988549 quality=1i,"
                                      "error_desc=\"Read \\\"error\\\"\" 1700000000123456");
}

TEST(InfluxWriter, ArraysAreJsonTextImagesAsRows) {
    const double inf = std::numeric_limits<double>::infinity();
    EXPECT_EQ(influx_array_json(kDevDouble, kSpectrum, std::vector<double>{1.5, -inf, std::nan("")}, 3, 0),
              "[1.5,-Infinity,NaN]");
    EXPECT_EQ(influx_array_json(kDevLong, kImage, std::vector<std::int64_t>{1, 2, 3, 4, 5, 6}, 3, 2),
              "[[1,2,3],[4,5,6]]");
    EXPECT_EQ(influx_array_json(kDevString, kSpectrum, std::vector<std::string>{"a\"", ""}, 2, 0), "[\"a\\\"\",\"\"]");
    EXPECT_EQ(influx_array_json(kDevLong, kSpectrum, std::vector<std::int64_t>{}, 0, 0), "[]");
    // An empty array is a value ("[]"); no value at all leaves the field out.
    EXPECT_EQ(influx_event_line(data(kDevLong, kSpectrum, std::vector<std::int64_t>{})),
              "att_array_devlong,att_conf_id=4334995495988549 quality=0i,value_r=\"[]\" 1700000000123456");
    EXPECT_EQ(influx_event_line(data(kDevLong, kSpectrum, {})),
              "att_array_devlong,att_conf_id=4334995495988549 quality=0i 1700000000123456");
}

TEST(InfluxWriter, RefusesWhatInfluxDbCannotHold) {
    EXPECT_FALSE(influx_cannot_hold(kDevULong64).empty());
    EXPECT_FALSE(influx_cannot_hold(kDevEncoded).empty());
    EXPECT_TRUE(influx_cannot_hold(kDevDouble).empty());
}
