// SPDX-License-Identifier: Apache-2.0
// The writer registry: backends by name, alias and libname; their own keys parsed by their tables;
// the errors an operator sees (unknown backend, bad value) name the key. The global registry is the
// one the writer files fill at start-up; a local one tests the registry's own rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "config.h"
#include "mysql_writer.h"
#include "null_writer.h"
#include "pg_writer.h"
#include "writer_registry.h"

using namespace hdbbench;

namespace {

std::string config_error(const std::vector<std::string> &lines) {
    try {
        LibConfig::parse(lines);
    } catch (const ConfigError &e) {
        return e.what();
    }
    ADD_FAILURE() << "no ConfigError for " << (lines.empty() ? std::string() : lines.front());
    return {};
}

bool has(const std::vector<std::string> &v, const std::string &x) { return std::find(v.begin(), v.end(), x) != v.end(); }

LibConfig with_raw(std::map<std::string, std::string> raw) {
    LibConfig c;
    c.raw = std::move(raw);
    return c;
}

// A writer of a test registry, with a key table of its own.
struct FakeSettings {
    std::uint64_t depth = 7;
};
const KeyTable<FakeSettings> &fake_keys() {
    static const KeyTable<FakeSettings> table{
        {"fake_depth", [](FakeSettings &s, const std::string &k, const std::string &v) { s.depth = parse_uint(k, v, 1, 9); }},
    };
    return table;
}
WriterEntry fake_entry(const std::string &name, std::vector<std::string> aliases, std::vector<std::string> patterns) {
    WriterEntry e;
    e.name = name;
    e.aliases = std::move(aliases);
    e.libname_patterns = std::move(patterns);
    e.create = [](const LibConfig &) { return std::make_unique<NullWriter>(); };
    return e;
}

}  // namespace

TEST(WriterRegistry, LookupByNameAndAlias) {
    const WriterRegistry &r = WriterRegistry::global();
    EXPECT_EQ(r.names(), (std::vector<std::string>{"clickhouse", "influxdb", "mysql", "null", "postgresql", "timescaledb"}));
    for (const auto &[given, name] : std::vector<std::pair<std::string, std::string>>{
             {"timescaledb", "timescaledb"}, {"TimescaleDB", "timescaledb"}, {"timescale", "timescaledb"},
             {"postgresql", "postgresql"}, {"postgres", "postgresql"}, {"pg", "postgresql"},
             {"mysql", "mysql"}, {"MariaDB", "mysql"}, {"null", "null"}, {"none", "null"}}) {
        const WriterEntry *e = r.find(given);
        ASSERT_NE(e, nullptr) << given;
        EXPECT_EQ(e->name, name) << given;
    }
    EXPECT_EQ(r.find("oracle"), nullptr);
    EXPECT_EQ(LibConfig::parse({"backend=MariaDB", "dbname=hdb"}).backend, "mysql");
    EXPECT_EQ(LibConfig::parse({"backend = pg"}).backend, "postgresql");
    EXPECT_EQ(LibConfig::parse({"backend=none"}).backend, "null");
}

TEST(WriterRegistry, LookupByLibname) {
    const WriterRegistry &r = WriterRegistry::global();
    EXPECT_EQ(r.find_by_libname("libhdb++mysql.so.6")->name, "mysql");
    EXPECT_EQ(r.find_by_libname("/usr/lib/libhdb++MariaDB.so")->name, "mysql");
    EXPECT_EQ(r.find_by_libname("libhdb++postgres.so")->name, "postgresql");
    EXPECT_EQ(r.find_by_libname("libhdb++timescale.so.2")->name, "timescaledb");
    EXPECT_EQ(r.find_by_libname("libhdb++cassandra.so"), nullptr);
    // Through LibConfig: libname selects when backend is absent; backend wins; neither: the default.
    EXPECT_EQ(LibConfig::parse({"libname=libhdb++mysql.so", "dbname=hdb"}).backend, "mysql");
    EXPECT_EQ(LibConfig::parse({"libname=libhdb++postgres.so"}).backend, "postgresql");
    EXPECT_EQ(LibConfig::parse({"libname=libhdb++mysql.so", "backend=null"}).backend, "null");
    EXPECT_EQ(LibConfig::parse({"libname=libhdb++cassandra.so"}).backend, "timescaledb");
    EXPECT_EQ(LibConfig::parse({}).backend, "timescaledb");
}

TEST(WriterRegistry, UnknownBackendNamesTheKeyAndTheKnownNames) {
    const std::string msg = config_error({"backend=oracle"});
    EXPECT_NE(msg.find("backend"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'oracle'"), std::string::npos) << msg;
    for (const char *known : {"timescaledb", "postgresql", "mysql", "null"})
        EXPECT_NE(msg.find(known), std::string::npos) << known << " in " << msg;
    EXPECT_NE(config_error({"backend="}).find("backend"), std::string::npos);
}

TEST(WriterRegistry, CreatesTheChosenWriter) {
    for (const auto &[lines, name] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{}, "timescaledb"},
             {{"backend=postgres"}, "postgresql"},
             {{"backend=mysql", "dbname=hdb"}, "mysql"},
             {{"backend=null"}, "null"}}) {
        const auto w = make_writer(LibConfig::parse(lines));  // constructing does not connect
        ASSERT_NE(w, nullptr);
        EXPECT_EQ(w->name(), name);
    }
    LibConfig unknown;
    unknown.backend = "oracle";
    EXPECT_THROW(make_writer(unknown), ConfigError);
}

TEST(WriterRegistry, WritersParseTheirOwnKeys) {
    const WriterRegistry &r = WriterRegistry::global();
    EXPECT_EQ(r.find("timescaledb")->keys, std::vector<std::string>{"connect_string"});
    EXPECT_EQ(r.find("postgresql")->keys, std::vector<std::string>{"connect_string"});
    const auto mysql_keys = r.find("mysql")->keys;
    EXPECT_TRUE(has(mysql_keys, "ignore_duplicates") && has(mysql_keys, "lightschema") && has(mysql_keys, "json_array"));
    EXPECT_EQ(r.find("null")->keys, std::vector<std::string>{"counts_dir"});
    // Their keys are no longer common ones.
    for (const char *k : {"connect_string", "ignore_duplicates", "lightschema", "json_array"})
        EXPECT_FALSE(LibConfig::is_common_key(k)) << k;
    EXPECT_TRUE(LibConfig::is_common_key("dbname"));

    const LibConfig pg = LibConfig::parse({"backend=postgresql", "connect_string=host=h dbname=x", "dbname=ignored"});
    EXPECT_EQ(PgSettings::parse(pg).connect_string, "host=h dbname=x");
    EXPECT_EQ(pg_conninfo(pg, PgSettings::parse(pg)), "host=h dbname=x");
    const LibConfig built = LibConfig::parse({"host=db", "port=5433", "user=u", "dbname=hdb"});
    EXPECT_EQ(pg_conninfo(built, PgSettings::parse(built)), "host='db' port='5433' user='u' dbname='hdb'");

    EXPECT_TRUE(MySqlSettings::parse(with_raw({})).ignore_duplicates);  // default: INSERT IGNORE
    EXPECT_FALSE(MySqlSettings::parse(with_raw({{"ignore_duplicates", "0"}})).ignore_duplicates);
    EXPECT_TRUE(MySqlSettings::parse(with_raw({{"ignore_duplicates", "on"}, {"lightschema", "1"}})).ignore_duplicates);
    // The mysql writer needs dbname, checked only when it is the one chosen.
    EXPECT_NE(config_error({"libname=libhdb++mysql.so"}).find("dbname"), std::string::npos);
    EXPECT_EQ(LibConfig::parse({"backend=null"}).backend, "null");
}

TEST(WriterRegistry, BadValueOfAWritersKeyNamesTheKey) {
    // Whatever the backend: a writer's keys are checked even when another writer is chosen.
    for (const auto &[line, key] : std::vector<std::pair<std::string, std::string>>{
             {"ignore_duplicates=maybe", "ignore_duplicates"},
             {"lightschema=yes please", "lightschema"},
             {"json_array=2", "json_array"}}) {
        for (const char *backend : {"backend=mysql", "backend=timescaledb", "backend=null"}) {
            const std::string msg = config_error({backend, "dbname=hdb", line});
            EXPECT_NE(msg.find(key), std::string::npos) << line << " with " << backend << ": " << msg;
        }
        EXPECT_THROW(MySqlSettings::parse(with_raw({{key, line.substr(line.find('=') + 1)}})), ConfigError);
    }
}

TEST(WriterRegistry, OwnRules) {
    WriterRegistry r;
    WriterEntry a = fake_entry("Alpha", {"first"}, {"alp"});
    a.is_default = true;
    bind_keys(a, fake_keys());
    int chosen_checks = 0;
    a.check_chosen = [&chosen_checks](const LibConfig &) { ++chosen_checks; };
    r.add(std::move(a));
    r.add(fake_entry("beta", {}, {"alpha-beta"}));
    EXPECT_EQ(r.names(), (std::vector<std::string>{"alpha", "beta"}));  // names in lower case

    // The longest matching libname pattern wins.
    EXPECT_EQ(r.find_by_libname("lib-alpha.so")->name, "alpha");
    EXPECT_EQ(r.find_by_libname("lib-ALPHA-BETA.so")->name, "beta");

    EXPECT_EQ(r.resolve(with_raw({{"backend", "FIRST"}})).name, "alpha");
    EXPECT_EQ(chosen_checks, 1);
    EXPECT_EQ(r.resolve(with_raw({{"backend", "beta"}})).name, "beta");
    EXPECT_EQ(chosen_checks, 1);  // only the chosen writer's needs are checked
    EXPECT_EQ(r.resolve(with_raw({})).name, "alpha");  // the default
    EXPECT_EQ(fake_keys().parse({{"fake_depth", "3"}}).depth, 3u);
    EXPECT_EQ(fake_keys().parse({}).depth, 7u);
    // The keys of a writer not chosen are checked all the same.
    try {
        r.resolve(with_raw({{"backend", "beta"}, {"fake_depth", "10"}}));
        ADD_FAILURE() << "fake_depth=10 accepted";
    } catch (const ConfigError &e) {
        EXPECT_NE(std::string(e.what()).find("fake_depth"), std::string::npos) << e.what();
    }

    EXPECT_THROW(r.add(fake_entry("alpha", {}, {})), std::logic_error);      // name taken
    EXPECT_THROW(r.add(fake_entry("gamma", {"FIRST"}, {})), std::logic_error);  // alias taken
    WriterEntry second_default = fake_entry("gamma", {}, {});
    second_default.is_default = true;
    EXPECT_THROW(r.add(std::move(second_default)), std::logic_error);
    WriterEntry common = fake_entry("gamma", {}, {});
    common.keys = {"batch_size"};
    EXPECT_THROW(r.add(std::move(common)), std::logic_error);  // a common key is not a writer's

    WriterRegistry empty;
    EXPECT_THROW(empty.resolve(with_raw({})), ConfigError);  // no default
}
