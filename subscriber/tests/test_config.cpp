// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "config.h"
#include "mysql_writer.h"
#include "pg_writer.h"

using namespace hdbbench;

TEST(LibConfig, HdbppKeysAndOurs) {
    const auto c = LibConfig::parse({"libname=libhdb++timescale.so", "connect_string=host=h port=5 dbname=hdb",
                                     "batch_size=250", "ignore_duplicates=0", "lightschema=1", "logging_level=DEBUG",
                                     "# comment", "", "flush_interval_ms=20", "queue_capacity=10",
                                     "spool_dir=/tmp/x", "spool_limit_mb=5", "log_file=true"});
    EXPECT_EQ(c.backend, "timescaledb");
    EXPECT_EQ(pg_conninfo(c, PgSettings::parse(c)), "host=h port=5 dbname=hdb");
    EXPECT_EQ(c.batch_size, 250u);
    EXPECT_FALSE(MySqlSettings::parse(c).ignore_duplicates);
    EXPECT_FALSE(c.hdbpp_strict);
    EXPECT_EQ(c.logging_level, "debug");
    EXPECT_EQ(c.flush_interval.count(), 20);
    EXPECT_EQ(c.queue_capacity, 10u);
    EXPECT_EQ(c.spool_dir, "/tmp/x");
    EXPECT_EQ(c.spool_limit_mb, 5u);
    EXPECT_EQ(c.raw.at("log_file"), "true");
}

TEST(LibConfig, MysqlFromLibnameAndQuotedConninfo) {
    const auto m = LibConfig::parse({"libname=libhdb++mysql.so", "host=127.0.0.1", "port=3306", "user=u",
                                     "password=p w'x", "dbname=hdbpp"});
    EXPECT_EQ(m.backend, "mysql");
    EXPECT_EQ(m.port, 3306);
    const auto p = LibConfig::parse({"backend=postgresql", "host=h", "password=p w'x", "dbname=d"});
    EXPECT_EQ(pg_conninfo(p, PgSettings::parse(p)), "host='h' password='p w\\'x' dbname='d'");
}

TEST(LibConfig, Errors) {
    EXPECT_THROW(LibConfig::parse({"batch_size=0"}), ConfigError);
    EXPECT_THROW(LibConfig::parse({"batch_size=-3"}), ConfigError);
    EXPECT_THROW(LibConfig::parse({"noequals"}), ConfigError);
    EXPECT_THROW(LibConfig::parse({"backend=oracle"}), ConfigError);
    EXPECT_THROW(LibConfig::parse({"ignore_duplicates=maybe"}), ConfigError);
    EXPECT_THROW(LibConfig::parse({"lightschema=yes please"}), ConfigError);  // libhdb++mysql needs an integer
    EXPECT_THROW(LibConfig::parse({"json_array=x"}), ConfigError);
    EXPECT_TRUE(LibConfig::parse({"hdbpp_strict=1", "json_array=0"}).hdbpp_strict);
    EXPECT_THROW(LibConfig::parse({"backend=mysql"}), ConfigError);  // dbname mandatory
}

TEST(AttributeLine, Parse) {
    const auto a = parse_attribute_line("tango://Host:10000/Sys/TG_Test/1/Double_Scalar;strategy=RUN|shutdown;ttl=48");
    EXPECT_EQ(a.name, "tango://host:10000/sys/tg_test/1/double_scalar");
    EXPECT_EQ(a.strategy, (std::vector<std::string>{"RUN", "SHUTDOWN"}));
    EXPECT_EQ(a.ttl_hours, 48u);
    EXPECT_EQ(a.to_line(), "tango://host:10000/sys/tg_test/1/double_scalar;strategy=RUN|SHUTDOWN;ttl=48");
    const auto p = split_attribute_name(a.name);
    EXPECT_EQ(p.cs_name, "host:10000");
    EXPECT_EQ(p.device(), "sys/tg_test/1");
    EXPECT_EQ(p.name, "double_scalar");
    EXPECT_THROW(parse_attribute_line("a/b/c"), ConfigError);
    EXPECT_THROW(parse_attribute_line("a/b/c/d;ttl=x"), ConfigError);
    EXPECT_EQ(normalise_attribute_name("A/B/C/D", "h:1"), "tango://h:1/a/b/c/d");
}

TEST(LibConfig, EventSubSendHwm) {
    EXPECT_EQ(LibConfig::parse({}).event_sub_send_hwm, 0u);  // default: unlimited
    EXPECT_EQ(LibConfig::parse({"event_sub_send_hwm=10000"}).event_sub_send_hwm, 10000u);
    EXPECT_EQ(LibConfig::parse({"EVENT_SUB_SEND_HWM = 0"}).event_sub_send_hwm, 0u);
    EXPECT_EQ(LibConfig::parse({"event_sub_send_hwm=2147483647"}).event_sub_send_hwm, 2147483647u);
    const auto strict = LibConfig::parse({"hdbpp_strict=1", "event_sub_send_hwm=300"});
    EXPECT_TRUE(strict.hdbpp_strict);
    EXPECT_EQ(strict.event_sub_send_hwm, 300u);  // strict mode takes the key the same way
    EXPECT_THROW(LibConfig::parse({"event_sub_send_hwm=-1"}), ConfigError);
    EXPECT_THROW(LibConfig::parse({"event_sub_send_hwm=2147483648"}), ConfigError);  // libzmq's int
    EXPECT_THROW(LibConfig::parse({"event_sub_send_hwm=10k"}), ConfigError);
    EXPECT_THROW(LibConfig::parse({"event_sub_send_hwm="}), ConfigError);
}

TEST(LibConfig, MetricsPort) {
    EXPECT_EQ(LibConfig::parse({}).metrics_port, 0u);  // default: no endpoint
    EXPECT_EQ(LibConfig::parse({"metrics_port=9100"}).metrics_port, 9100u);
    EXPECT_EQ(LibConfig::parse({"metrics_port=65535"}).metrics_port, 65535u);
    EXPECT_EQ(LibConfig::parse({"hdbpp_strict=1", "metrics_port=9100"}).metrics_port, 9100u);
    EXPECT_THROW(LibConfig::parse({"metrics_port=65536"}), ConfigError);
    EXPECT_THROW(LibConfig::parse({"metrics_port=-1"}), ConfigError);
    EXPECT_THROW(LibConfig::parse({"metrics_port=http"}), ConfigError);
}

TEST(LibConfig, ResubscribeSilent) {
    EXPECT_FALSE(LibConfig::parse({}).resubscribe_silent);
    EXPECT_TRUE(LibConfig::parse({"resubscribe_silent=1"}).resubscribe_silent);
    EXPECT_THROW(LibConfig::parse({"resubscribe_silent=2"}), ConfigError);
}
