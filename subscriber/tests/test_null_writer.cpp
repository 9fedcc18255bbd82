// SPDX-License-Identifier: Apache-2.0
// The null writer: what it counts (per attribute and millisecond of source time, errors by description,
// duplicates, strict mode's refusals) and the two files it leaves in counts_dir (null_writer.h).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "null_writer.h"
#include "writer_registry.h"

using namespace hdbbench;
namespace fs = std::filesystem;

namespace {
constexpr std::int64_t kT0 = 1700000000LL * 1000000;  // a whole second, in µs
const std::string kA = "tango://h:1/a/b/c/x";
const std::string kB = "tango://h:1/a/b/c/y";

Record data(const std::string &att, std::int64_t t_us) {
    Record r;
    r.kind = RecordKind::Data;
    r.att_name = att;
    r.data_type = kDevDouble;
    r.data_format = kScalar;
    r.write_type = kRead;
    r.data_time = TimePoint(std::chrono::microseconds(t_us));
    r.recv_time = r.data_time;
    r.value_r = std::vector<double>{1.0};
    return r;
}

Record error(const std::string &att, std::int64_t t_us, const std::string &desc) {
    Record r = data(att, t_us);
    r.kind = RecordKind::Error;
    r.value_r = {};
    r.text = desc;
    return r;
}

Record history(const std::string &att, const std::string &event) {
    Record r = data(att, kT0);
    r.kind = RecordKind::History;
    r.text = event;
    return r;
}

std::vector<std::string> lines(const std::string &text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

bool has_line(const std::string &text, const std::string &line) {
    const auto l = lines(text);
    return std::find(l.begin(), l.end(), line) != l.end();
}

std::string read(const fs::path &p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

fs::path temp_dir(const std::string &name) {
    const auto d = fs::temp_directory_path() / ("hdbbench-es-null-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}
}  // namespace

TEST(NullCounts, CountsPerAttributeAndMillisecondOfSourceTime) {
    NullCounts c;
    std::vector<Record> batch{data(kA, kT0), data(kA, kT0 + 500), data(kA, kT0 + 1000), data(kB, kT0 + 10),
                              data(kA, kT0 - 1)};  // late: the millisecond before
    const WriteResult res = c.add(batch, LibConfig{});
    EXPECT_EQ(res.data_rows, 5u);
    EXPECT_TRUE(res.rejected.empty());
    const std::string journal = c.take_journal(true);
    EXPECT_TRUE(has_line(journal, "a 0 5 0 0 " + kA)) << journal;
    EXPECT_TRUE(has_line(journal, "a 1 5 0 0 " + kB)) << journal;
    const std::string s0 = std::to_string(kT0 / 1000);
    const std::string s1 = std::to_string(kT0 / 1000 + 1);
    const std::string before = std::to_string(kT0 / 1000 - 1);
    EXPECT_TRUE(has_line(journal, "d 0 " + s0 + " 2")) << journal;
    EXPECT_TRUE(has_line(journal, "d 0 " + s1 + " 1")) << journal;
    EXPECT_TRUE(has_line(journal, "d 0 " + before + " 1")) << journal;
    EXPECT_TRUE(has_line(journal, "d 1 " + s0 + " 1")) << journal;
    EXPECT_EQ(c.take_journal(true), "");  // journaled once
    EXPECT_EQ(c.totals().data, 5u);
    EXPECT_EQ(c.totals().attributes, 2u);
    EXPECT_EQ(c.totals().history, 2u);  // their `add` events

    // Deltas: the same millisecond again adds a line that sums with the first.
    c.add({data(kA, kT0 + 700)}, LibConfig{});
    EXPECT_TRUE(has_line(c.take_journal(true), "d 0 " + s0 + " 1"));
}

TEST(NullCounts, ErrorsByDescriptionDuplicatesAndMetaRecords) {
    NullCounts c;
    std::vector<Record> batch{data(kA, kT0),          data(kA, kT0),  // a duplicate delivery
                              error(kA, kT0, "lost"), error(kA, kT0 + 1, "lost"), error(kB, kT0 + 2, "said \"no\""),
                              history(kA, "start")};
    Record param = data(kA, kT0);
    param.kind = RecordKind::Param;
    batch.push_back(param);
    const WriteResult res = c.add(batch, LibConfig{});
    EXPECT_EQ(res.data_rows, 4u);  // 1 data + 3 errors (an error row at a data row's instant counts)
    EXPECT_EQ(res.duplicates, 1u);
    const NullTotals t = c.totals();
    EXPECT_EQ(t.data, 1u);
    EXPECT_EQ(t.errors, 3u);
    EXPECT_EQ(t.params, 1u);
    EXPECT_EQ(t.history, 3u);  // two `add`s and a `start`
    const std::string journal = c.take_journal(true);
    const std::string s0 = std::to_string(kT0 / 1000);
    EXPECT_TRUE(has_line(journal, "x 0 \"lost\"")) << journal;
    EXPECT_TRUE(has_line(journal, "x 1 \"said \\\"no\\\"\"")) << journal;
    EXPECT_TRUE(has_line(journal, "e 0 0 " + s0 + " 2")) << journal;
    EXPECT_TRUE(has_line(journal, "e 1 1 " + s0 + " 1")) << journal;
}

TEST(NullCounts, StrictModeRefusesAttributesNotAdded) {
    LibConfig strict;
    strict.hdbpp_strict = true;
    NullCounts c;
    WriteResult res = c.add({data(kA, kT0)}, strict);
    ASSERT_EQ(res.rejected.size(), 1u);
    EXPECT_NE(res.rejected[0].error.find("does not exist"), std::string::npos);
    res = c.add({history(kA, kAddEvent), data(kA, kT0)}, strict);
    EXPECT_TRUE(res.rejected.empty());
    EXPECT_EQ(res.data_rows, 1u);
    EXPECT_EQ(c.totals().attributes, 1u);
}

TEST(NullCounts, CountsFileListsTheLastTwoPeriodsSourceTimes) {
    NullCounts c;
    c.add({data(kA, kT0), data(kA, kT0 + 5)}, LibConfig{});
    const TimePoint now(std::chrono::microseconds(kT0 + 100));
    std::string first = c.take_counts_file(now);
    EXPECT_EQ(lines(first)[0], "hdbbench-null-counts 1");
    EXPECT_TRUE(has_line(first, "events 2 0 0 1 0 0 1")) << first;
    EXPECT_TRUE(has_line(first, "r 0 " + std::to_string(kT0) + " " + std::to_string(kT0 + 5))) << first;
    c.add({data(kA, kT0 + 9)}, LibConfig{});
    const std::string second = c.take_counts_file(now);
    EXPECT_TRUE(has_line(second, "r 0 " + std::to_string(kT0) + " " + std::to_string(kT0 + 5) + " " +
                                     std::to_string(kT0 + 9)))
        << second;
    EXPECT_TRUE(c.recent_listed());
    const std::string third = c.take_counts_file(now);  // nothing new: only the previous period's
    EXPECT_TRUE(has_line(third, "r 0 " + std::to_string(kT0 + 9))) << third;
    EXPECT_FALSE(has_line(c.take_counts_file(now), "r 0 " + std::to_string(kT0 + 9)));
    EXPECT_FALSE(c.recent_listed());
}

TEST(NullWriter, RegisteredWithItsOwnKey) {
    const WriterEntry *e = WriterRegistry::global().find("null");
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->keys, std::vector<std::string>{"counts_dir"});
    const LibConfig cfg = LibConfig::parse({"backend=null", "counts_dir=/some/where"});
    EXPECT_EQ(NullSettings::parse(cfg).counts_dir, "/some/where");
    EXPECT_EQ(make_writer(cfg)->name(), "null");
}

TEST(NullWriter, WritesItsFilesAndEverythingAtClose) {
    const fs::path dir = temp_dir("files");
    std::string stem;
    {
        NullWriter w(LibConfig::parse({"backend=null"}), NullSettings{dir.string()});
        stem = w.stem();
        w.connect();
        ASSERT_TRUE(w.connected());
        EXPECT_TRUE(fs::exists(dir / (stem + ".counts")));  // from the connection on
        std::vector<Record> batch{data(kA, kT0), data(kA, kT0 + 1), error(kB, kT0, "gone")};
        EXPECT_EQ(w.write_batch(batch).data_rows, 3u);
        EXPECT_EQ(w.totals().data, 2u);
    }  // closed: the last counts are written
    const std::string counts = read(dir / (stem + ".counts"));
    EXPECT_TRUE(has_line(counts, "events 2 1 0 2 0 0 2")) << counts;
    const std::string journal = read(dir / (stem + ".journal"));
    const std::string s0 = std::to_string(kT0 / 1000);
    EXPECT_TRUE(has_line(journal, "d 0 " + s0 + " 2")) << journal;
    EXPECT_TRUE(has_line(journal, "e 1 0 " + s0 + " 1")) << journal;
    EXPECT_FALSE(fs::exists(dir / (stem + ".counts.tmp")));
    fs::remove_all(dir);
}

TEST(NullWriter, AMissingDirectoryIsAnUnreachableDatabase) {
    const fs::path dir = temp_dir("missing") / "not-created";
    NullWriter w(LibConfig::parse({"backend=null"}), NullSettings{dir.string()});
    try {
        w.connect();
        ADD_FAILURE() << "connected to a missing directory";
    } catch (const DbError &e) {
        EXPECT_TRUE(e.connection_lost());  // retried with back-off, as a database that is down
        EXPECT_NE(std::string(e.what()).find("counts_dir"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(w.connected());
    fs::create_directories(dir);
    w.connect();  // the database is there now
    EXPECT_TRUE(w.connected());
    w.disconnect();
    fs::remove_all(dir.parent_path());
}

TEST(NullWriter, WithoutADirectoryItCountsInMemory) {
    NullWriter w;
    w.connect();
    std::vector<Record> batch{data(kA, kT0)};
    EXPECT_EQ(w.write_batch(batch).data_rows, 1u);
    EXPECT_EQ(w.totals().data, 1u);
}
