// SPDX-License-Identifier: Apache-2.0
// The LibConfiguration and AttributeList parsers never crash on random input: every line made of
// random bytes and fragments of real keys is either accepted or refused with ConfigError, never with
// another exception (a std::stoul out_of_range, say) or a crash. A seeded PRNG keeps CI reproducible.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "config.h"
#include "pg_writer.h"

using namespace hdbbench;

namespace {

const std::vector<std::string> kFragments = {
    "libname=", "backend=", "connect_string=", "host=", "port=", "user=", "password=", "dbname=",
    "batch_size=", "ignore_duplicates=", "lightschema=", "logging_level=", "flush_interval_ms=",
    "queue_capacity=", "spool_dir=", "spool_limit_mb=", "hdbpp_strict=", "json_array=", "reconnect_min_ms=", "max_events_per_s=",
    "tango://", "host:10000/", "a/b/c/d", ";strategy=", ";ttl=", "|", "RUN", "SHUTDOWN", "=", ";", "/", ":",
    "#", " ", "\t", "'", "\"", "\\", "--", "0", "1", "-1", "18446744073709551616", "99999999999999999999999",
    "4294967296", "nan", "inf", "1e308", "timescaledb", "mysql", "postgresql", "DEBUG", "\xc3\xa9", "\xf0\x9d\x84\x9e",
    "\xff", std::string(1, '\0'), std::string(300, 'x')};

std::string random_line(std::mt19937_64 &rng) {
    std::uniform_int_distribution<int> pieces(0, 8), pick(0, static_cast<int>(kFragments.size()) - 1),
        byte(0, 255), coin(0, 3);
    std::string line;
    for (int i = pieces(rng); i > 0; --i) {
        if (coin(rng) == 0) line += static_cast<char>(byte(rng));
        else line += kFragments[static_cast<std::size_t>(pick(rng))];
    }
    return line;
}

struct Outcomes {
    int accepted = 0, refused = 0;
};

template <typename F>
void refused_cleanly_or_accepted(F &&parse, const std::string &what, Outcomes &outcomes) {
    try {
        parse();
        ++outcomes.accepted;
    } catch (const ConfigError &) {
        ++outcomes.refused;  // a clear refusal
    } catch (const std::exception &e) {
        ADD_FAILURE() << what << ": " << typeid(e).name() << ": " << e.what();
    }
}

}  // namespace

TEST(ParserFuzz, LibConfigurationLines) {
    std::mt19937_64 rng(20261123);
    std::uniform_int_distribution<int> lines(0, 6);
    Outcomes outcomes;
    for (int round = 0; round < 20000; ++round) {
        std::vector<std::string> config;
        for (int i = lines(rng); i > 0; --i) config.push_back(random_line(rng));
        refused_cleanly_or_accepted(
            [&] {
                const LibConfig c = LibConfig::parse(config);
                (void)pg_conninfo(c, PgSettings::parse(c));
            },
            "LibConfiguration line " + (config.empty() ? std::string() : config.front()), outcomes);
    }
    // Both paths are exercised, so the loop tests the parser rather than its first refusal.
    EXPECT_GT(outcomes.accepted, 100);
    EXPECT_GT(outcomes.refused, 100);
}

TEST(ParserFuzz, AttributeListLines) {
    std::mt19937_64 rng(11232026);
    Outcomes outcomes, names;
    for (int round = 0; round < 20000; ++round) {
        const std::string line = (round % 2 ? "tango://h:1/a/b/c/" : "") + random_line(rng);
        refused_cleanly_or_accepted(
            [&] {
                const AttributeSpec spec = parse_attribute_line(line);
                // What is accepted survives the round trip through its property line.
                const AttributeSpec again = parse_attribute_line(spec.to_line());
                EXPECT_EQ(again.name, spec.name) << line;
                EXPECT_EQ(again.strategy, spec.strategy) << line;
                EXPECT_EQ(again.ttl_hours, spec.ttl_hours) << line;
                (void)split_attribute_name(spec.name);
            },
            "AttributeList line " + line, outcomes);
        refused_cleanly_or_accepted([&] { (void)normalise_attribute_name(line, "h:1"); }, "name " + line, names);
    }
    EXPECT_GT(outcomes.accepted, 100);
    EXPECT_GT(outcomes.refused, 100);
}
