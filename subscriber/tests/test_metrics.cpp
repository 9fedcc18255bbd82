// SPDX-License-Identifier: Apache-2.0
// The Prometheus exposition of the statistics (names from statistics.def, strict mode) and the
// small HTTP server that serves it, over real loopback sockets.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "metrics_exposition.h"
#include "metrics_server.h"

using namespace hdbbench;

namespace {

// One request over a fresh connection; the whole reply (the server closes the connection).
std::string http(std::uint16_t port, const std::string &request) {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM, 0));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd.get(), reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0) return "connect failed";
    if (::send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size()))
        return "send failed";
    std::string reply;
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd.get(), buf, sizeof buf, 0)) > 0;) reply.append(buf, static_cast<std::size_t>(n));
    return reply;
}

ArchiverSnapshot sample_snapshot() {
    ArchiverSnapshot s;
    s.all = {"tango://h:1/a/b/c/x", "tango://h:1/a/b/c/y"};
    s.ok = {"tango://h:1/a/b/c/x"};
    s.nok = {"tango://h:1/a/b/c/y"};
    s.pending_events = 7;
    s.max_pending_events = 9;
    s.rows_stored = 42;
    s.record_freq = 0.1;
    s.event_age.p99_s = 1.5;
    s.db_connected = true;
    return s;
}

}  // namespace

TEST(Metrics, SnakeCaseFollowsTheGeneratorsRule) {
    EXPECT_EQ(snake_case("AttributePendingNumber"), "attribute_pending_number");
    EXPECT_EQ(snake_case("AttributeTTLList"), "attribute_ttl_list");
    EXPECT_EQ(snake_case("EventAgeAtCommitP50"), "event_age_at_commit_p50");
    EXPECT_EQ(snake_case("DbConnected"), "db_connected");
    EXPECT_EQ(metric_name("RowsStoredNumber", true), "hdbbench_rows_stored_number");
    EXPECT_EQ(metric_name("AttributeRecordFreq", false), "hdbpp_attribute_record_freq");
}

TEST(Metrics, RendersEveryScalarWithTheDeviceLabel) {
    const std::string text = render_metrics(sample_snapshot(), "archiving/es/1", false);
    const std::string l = "{device=\"archiving/es/1\"} ";
    EXPECT_NE(text.find("# TYPE hdbpp_attribute_number gauge\nhdbpp_attribute_number" + l + "2\n"), std::string::npos);
    EXPECT_NE(text.find("hdbpp_attribute_nok_number" + l + "1\n"), std::string::npos);
    EXPECT_NE(text.find("hdbpp_attribute_pending_number" + l + "7\n"), std::string::npos);
    EXPECT_NE(text.find("hdbpp_attribute_max_pending_number" + l + "9\n"), std::string::npos);
    EXPECT_NE(text.find("hdbpp_attribute_record_freq" + l + "0.1\n"), std::string::npos);
    EXPECT_NE(text.find("hdbpp_attribute_record_freq_inst" + l), std::string::npos);  // HDB++'s newer ones too
    EXPECT_NE(text.find("hdbbench_rows_stored_number" + l + "42\n"), std::string::npos);
    EXPECT_NE(text.find("hdbbench_event_age_at_commit_p99" + l + "1.5\n"), std::string::npos);
    EXPECT_NE(text.find("hdbbench_db_connected" + l + "1\n"), std::string::npos);
    EXPECT_NE(text.find("# HELP hdbpp_attribute_pending_number events waiting to be stored now (events)\n"),
              std::string::npos);
    EXPECT_EQ(text.find("attribute_list"), std::string::npos);  // spectra stay with Tango
    EXPECT_EQ(text.find("contexts_list"), std::string::npos);
}

TEST(Metrics, StrictServesHdbppOnly) {
    const std::string text = render_metrics(sample_snapshot(), "archiving/es/1", true);
    EXPECT_NE(text.find("hdbpp_attribute_number{"), std::string::npos);
    EXPECT_NE(text.find("hdbpp_attribute_record_freq_inst{"), std::string::npos);
    EXPECT_EQ(text.find("hdbbench_"), std::string::npos);
}

TEST(Metrics, LabelValuesAreEscaped) {
    const std::string text = render_metrics(sample_snapshot(), "a\"b\\c", true);
    EXPECT_NE(text.find("{device=\"a\\\"b\\\\c\"}"), std::string::npos);
}

TEST(MetricsServer, ServesMetricsAndRefusesTheRest) {
    int renders = 0;
    MetricsServer server(0, [&renders] { return "m{device=\"d\"} " + std::to_string(++renders) + "\n"; },
                         kMetricsContentType);
    ASSERT_GT(server.port(), 0);
    const std::string ok = http(server.port(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_EQ(ok.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << ok;
    EXPECT_NE(ok.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"), std::string::npos);
    EXPECT_NE(ok.find("\r\n\r\nm{device=\"d\"} 1\n"), std::string::npos) << ok;
    // Each scrape renders anew; a query string is ignored.
    EXPECT_NE(http(server.port(), "GET /metrics?x=1 HTTP/1.0\r\n\r\n").find("m{device=\"d\"} 2\n"), std::string::npos);
    const std::string head = http(server.port(), "HEAD /metrics HTTP/1.1\r\n\r\n");
    EXPECT_EQ(head.rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
    EXPECT_EQ(head.find("m{"), std::string::npos);
    EXPECT_EQ(http(server.port(), "GET /other HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 404", 0), 0u);
    EXPECT_EQ(http(server.port(), "POST /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 405", 0), 0u);
    EXPECT_EQ(http(server.port(), "nonsense\r\n\r\n").rfind("HTTP/1.1 400", 0), 0u);
}

TEST(MetricsServer, APortInUseIsOneClearError) {
    MetricsServer first(0, [] { return std::string(); }, kMetricsContentType);
    try {
        MetricsServer second(first.port(), [] { return std::string(); }, kMetricsContentType);
        FAIL() << "a second server bound the same port";
    } catch (const MetricsServerError &e) {
        const std::string what = e.what();
        EXPECT_EQ(what, "cannot listen on 127.0.0.1:" + std::to_string(first.port()) + ": Address already in use");
    }
    // The first one still serves.
    EXPECT_EQ(http(first.port(), "GET /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 200 OK", 0), 0u);
}

TEST(MetricsServer, ARenderingErrorIsA500) {
    MetricsServer server(0, []() -> std::string { throw std::runtime_error("no snapshot"); }, kMetricsContentType);
    const std::string reply = http(server.port(), "GET /metrics HTTP/1.1\r\n\r\n");
    EXPECT_EQ(reply.rfind("HTTP/1.1 500", 0), 0u) << reply;
    EXPECT_NE(reply.find("no snapshot"), std::string::npos);
}

TEST(MetricsServer, ASilentClientDoesNotKeepTheSlot) {
    MetricsServer server(0, [] { return std::string("m 1\n"); }, kMetricsContentType);
    UniqueFd silent(::socket(AF_INET, SOCK_STREAM, 0));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(server.port());
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(silent.get(), reinterpret_cast<sockaddr *>(&addr), sizeof addr), 0);
    // Accepted first, it sends nothing; the server gives up on it and serves the next client.
    EXPECT_EQ(http(server.port(), "GET /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 200 OK", 0), 0u);
}
