// SPDX-License-Identifier: Apache-2.0
// The C++ engine against devices/spec/value-vectors.json (written from the Python reference).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

#include "blake2b.h"
#include "scheduler.h"
#include "spec.h"
#include "stream.h"
#include "valuefn.h"

using namespace hdbgen;

namespace {

const Json &vectors() {
    static const Json doc = [] {
        std::ifstream in(HDBGEN_VECTORS);
        std::stringstream text;
        text << in.rdbuf();
        return Json::parse(text.str());
    }();
    return doc;
}

uint64_t hex64(const Json &j) { return std::stoull(j.string(), nullptr, 16); }

double bits_to_double(const Json &j) {
    const uint64_t b = hex64(j);
    double d;
    std::memcpy(&d, &b, sizeof d);
    return d;
}

std::string to_hex(const std::string &bytes) {
    static const char *digits = "0123456789abcdef";
    std::string out;
    for (unsigned char c : bytes) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

std::string from_hex(const std::string &hex) {
    std::string out;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    return out;
}

uint64_t seed() { return static_cast<uint64_t>(vectors()["seed"].integer()); }

}  // namespace

TEST(Primitives, Mix64FnvAndStreamBase) {
    const Json &p = vectors()["primitives"];
    for (const auto &row : p["mix64"].array()) EXPECT_EQ(mix64(hex64(row[0])), hex64(row[1]));
    for (const auto &row : p["fnv1a64"].array()) EXPECT_EQ(fnv1a64(row[0].string()), hex64(row[1]));
    for (const auto &row : p["stream_base"].array())
        EXPECT_EQ(stream_base(static_cast<uint64_t>(row[0].integer()), row[1].string()), hex64(row[2]));
}

TEST(Primitives, EventWordsDrawsAndUnits) {
    const Json &p = vectors()["primitives"];
    const uint64_t base = hex64(p["event_word"][0][0]);
    for (const auto &row : p["event_word"].array())
        EXPECT_EQ(event_word(base, static_cast<uint64_t>(row[1].integer())), hex64(row[2]));
    for (const auto &row : p["draw"].array()) {
        const uint64_t w = event_word(base, static_cast<uint64_t>(row[0].integer()));
        EXPECT_EQ(draw(w, static_cast<uint64_t>(row[1].integer())), hex64(row[2]));
    }
    for (const auto &row : p["unit"].array()) EXPECT_EQ(unit(hex64(row[0])), bits_to_double(row[1]));
}

TEST(Primitives, Sin2PiIsBitExact) {
    for (const auto &row : vectors()["primitives"]["sin2pi"].array()) {
        const double t = bits_to_double(row[0]);
        EXPECT_EQ(sin2pi(t), bits_to_double(row[1])) << "t = " << t;
    }
}

TEST(Primitives, SchedulePhaseIsBitExact) {
    for (const auto &row : vectors()["primitives"]["schedule_phase"].array()) {
        const double phase = schedule_phase(static_cast<uint64_t>(row[0].integer()), row[1].string());
        EXPECT_EQ(phase, bits_to_double(row[2])) << row[1].string();
        EXPECT_TRUE(phase >= 0.0 && phase < 1.0);
    }
}

// The script the Python Emitter ran (make_vectors.py): the same events at the same times, each phase mode.
class Schedules : public ::testing::TestWithParam<size_t> {};

TEST_P(Schedules, TimestampsAndChecksumsMatchThePythonEmitter) {
    const Json &sched = vectors()["schedules"][GetParam()];
    std::vector<AttrSpec> specs;
    for (const auto &s : sched["specs"].array()) specs.push_back(parse_spec(s));
    const Phases phases = sched["phases"].string() == "seeded" ? Phases::Seeded : Phases::Aligned;
    Scheduler sch(seed(), vectors()["device"].string(), specs, false, 1, phases);
    const int64_t t0 = vectors()["t0_us"].integer();
    auto names = [&](const Json &list) {
        std::vector<size_t> out;
        for (const auto &n : list.array()) out.push_back(static_cast<size_t>(sch.find(n.string())));
        return out;
    };
    std::vector<std::vector<std::pair<uint64_t, int64_t>>> got(specs.size());
    int64_t now = t0;
    for (const auto &op : vectors()["schedule_script"].array()) {
        const std::string what = op[0].string();
        if (what == "start") {
            sch.start(nullptr, now = t0 + op[1].integer());
        } else if (what == "take") {
            Batch batch;
            sch.take_due(0, now = t0 + op[1].integer(), SIZE_MAX, batch);
            for (const auto &it : batch.items) got[it.attr].emplace_back(it.k, it.ts_us);
        } else if (what == "rate") {
            const std::vector<size_t> which = names(op[3]);
            sch.set_rate(op[1].number(), which.empty() ? nullptr : &which, now = t0 + op[2].integer());
        } else {
            const std::vector<size_t> which = names(op[2]);
            sch.burst(static_cast<uint64_t>(op[1].integer()), which.empty() ? nullptr : &which);
        }
    }
    const auto stats = sch.stats(now);
    for (size_t i = 0; i < specs.size(); ++i) {
        const auto &want = sched["events"][i].array();
        ASSERT_EQ(got[i].size(), want.size()) << specs[i].name;
        for (size_t j = 0; j < want.size(); ++j) {
            EXPECT_EQ(got[i][j].first, static_cast<uint64_t>(want[j][0].integer())) << specs[i].name << " #" << j;
            EXPECT_EQ(got[i][j].second, want[j][1].integer()) << specs[i].name << " #" << j;
        }
        EXPECT_EQ(stats[i].emitted, static_cast<uint64_t>(sched["checksums"][i][0].integer())) << specs[i].name;
        EXPECT_EQ(stats[i].checksum_sum, hex64(sched["checksums"][i][1])) << specs[i].name;
    }
}

INSTANTIATE_TEST_SUITE_P(ValueVectors, Schedules, ::testing::Range<size_t>(0, vectors()["schedules"].array().size()),
                         [](const ::testing::TestParamInfo<size_t> &info) {
                             return vectors()["schedules"][info.param]["phases"].string();
                         });

TEST(Primitives, Blake2b64MatchesHashlib) {
    for (const auto &row : vectors()["primitives"]["blake2b64"].array()) {
        const std::string data = from_hex(row[0].string());
        const uint64_t d = blake2b64(data.data(), data.size());
        std::string le(8, '\0');
        for (int i = 0; i < 8; ++i) le[i] = static_cast<char>((d >> (8 * i)) & 0xFF);
        EXPECT_EQ(to_hex(le), row[1].string());
    }
}

class Cases : public ::testing::TestWithParam<size_t> {};

TEST_P(Cases, EventsQualitiesDigestsAndChecksum) {
    const Json &c = vectors()["cases"][GetParam()];
    const AttrSpec spec = parse_spec(c["spec"]);
    const std::string key = vectors()["device"].string() + "/" + spec.name;
    std::string lower = key;
    for (auto &ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    Stream stream(seed(), lower, spec);
    const auto &events = c["events"].array();
    const auto &bytes = c["bytes"].array();
    const auto count = static_cast<uint64_t>(c["checksum"]["count"].integer());
    size_t next = 0;
    uint64_t sum = 0;
    for (uint64_t k = 0; k < count; ++k) {
        stream.next();
        sum += stream.digest();
        if (k < bytes.size()) {
            EXPECT_EQ(to_hex(stream.canonical_bytes()), bytes[k].string()) << spec.name << " k=" << k;
        }
        if (next < events.size() && static_cast<uint64_t>(events[next][0].integer()) == k) {
            const auto &e = events[next++];
            EXPECT_EQ(stream.quality(), e[1].integer()) << spec.name << " k=" << k;
            EXPECT_EQ(stream.error(), e[2].integer() == 1) << spec.name << " k=" << k;
            EXPECT_EQ(stream.digest(), hex64(e[3])) << spec.name << " k=" << k;
        }
    }
    EXPECT_EQ(next, events.size());
    EXPECT_EQ(sum, hex64(c["checksum"]["sum"])) << spec.name;
    // Rewound, the stream repeats itself.
    stream.rewind();
    stream.next();
    EXPECT_EQ(stream.digest(), hex64(events[0][3])) << spec.name;
}

TEST_P(Cases, PlaceholderIsEventZeroOfThePlaceholderStream) {
    const Json &c = vectors()["cases"][GetParam()];
    AttrSpec spec = parse_spec(c["spec"]);
    spec.p_error = spec.p_invalid = spec.p_alarm = spec.p_warning = 0;  // the raw model value, VALID
    Stream stream(seed(), "placeholder", spec);
    stream.next();
    EXPECT_EQ(to_hex(stream.canonical_bytes()), c["placeholder_bytes"].string()) << spec.name;
}

INSTANTIATE_TEST_SUITE_P(ValueVectors, Cases, ::testing::Range<size_t>(0, vectors()["cases"].array().size()),
                         [](const ::testing::TestParamInfo<size_t> &info) {
                             return vectors()["cases"][info.param]["spec"]["name"].string();
                         });

TEST(Spec, RefusesPollModeAndUnknownTypesNamingTheAttribute) {
    const std::string base = R"({"name":"x","type":"DevDouble","format":"SCALAR","write":"READ","mode":"poll",)"
                             R"("rate_hz":1.0,"dim_x":1,"dim_y":0,"model":"","offset":0.0,"amplitude":1.0,"period":100,)"
                             R"("levels":2,"step":0.1,"labels":[],"text":"","p_error":0,"p_invalid":0,"p_alarm":0,"p_warning":0})";
    try {
        parse_spec(base);
        FAIL() << "poll mode accepted";
    } catch (const std::runtime_error &e) {
        EXPECT_NE(std::string(e.what()).find("attribute 'x'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("poll"), std::string::npos) << e.what();
    }
    std::string bad_type = base;
    bad_type.replace(bad_type.find("DevDouble"), 9, "DevNothing");
    bad_type.replace(bad_type.find("\"poll\""), 6, "\"push\"");
    EXPECT_THROW(parse_spec(bad_type), std::runtime_error);
}
