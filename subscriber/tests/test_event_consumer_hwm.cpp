// SPDX-License-Identifier: Apache-2.0
// The zmq_setsockopt interposer of event_consumer_hwm.cpp (linked into this test binary as into
// hdbbench-es): ZMQ_SNDHWM of SUB sockets becomes the configured value, nothing else changes.
#include <gtest/gtest.h>
#include <zmq.h>

#include <memory>

#include "event_consumer_hwm.h"

using namespace hdbbench;

namespace {

struct ContextDeleter {
    void operator()(void *c) const { zmq_ctx_term(c); }
};
struct SocketDeleter {
    void operator()(void *s) const { zmq_close(s); }
};
using Context = std::unique_ptr<void, ContextDeleter>;
using Socket = std::unique_ptr<void, SocketDeleter>;

int get_int(void *socket, int option) {
    int v = -2;
    size_t size = sizeof v;
    EXPECT_EQ(zmq_getsockopt(socket, option, &v, &size), 0);
    return v;
}

// What cppTango's ZmqEventConsumer does when it creates a socket: SNDHWM = SUB_SEND_HWM.
int set_tango_sndhwm(void *socket) {
    const int tango = static_cast<int>(kTangoSubSendHwm);
    return zmq_setsockopt(socket, ZMQ_SNDHWM, &tango, sizeof tango);
}

}  // namespace

TEST(EventConsumerHwm, SubSocketsGetTheConfiguredSendLimit) {
    Context ctx(zmq_ctx_new());
    set_event_sub_send_hwm(0);
    Socket unlimited(zmq_socket(ctx.get(), ZMQ_SUB));
    ASSERT_EQ(set_tango_sndhwm(unlimited.get()), 0);
    EXPECT_EQ(get_int(unlimited.get(), ZMQ_SNDHWM), 0);
    EXPECT_EQ(applied_event_sub_send_hwm(), std::optional<std::uint32_t>(0));

    set_event_sub_send_hwm(250);
    Socket low(zmq_socket(ctx.get(), ZMQ_SUB));
    ASSERT_EQ(set_tango_sndhwm(low.get()), 0);
    EXPECT_EQ(get_int(low.get(), ZMQ_SNDHWM), 250);
    EXPECT_EQ(applied_event_sub_send_hwm(), std::optional<std::uint32_t>(250));
    set_event_sub_send_hwm(0);
}

TEST(EventConsumerHwm, OtherSocketsAndOptionsPassUnchanged) {
    Context ctx(zmq_ctx_new());
    set_event_sub_send_hwm(0);
    Socket pub(zmq_socket(ctx.get(), ZMQ_PUB));  // a device server's publisher keeps its limit
    ASSERT_EQ(set_tango_sndhwm(pub.get()), 0);
    EXPECT_EQ(get_int(pub.get(), ZMQ_SNDHWM), 10000);
    Socket sub(zmq_socket(ctx.get(), ZMQ_SUB));
    const int rcv = 1234;
    ASSERT_EQ(zmq_setsockopt(sub.get(), ZMQ_RCVHWM, &rcv, sizeof rcv), 0);
    EXPECT_EQ(get_int(sub.get(), ZMQ_RCVHWM), 1234);
    const char topic[] = "tango://h:1/a/b/c/d.idl5_archive";
    EXPECT_EQ(zmq_setsockopt(sub.get(), ZMQ_SUBSCRIBE, topic, sizeof topic - 1), 0);
    EXPECT_EQ(zmq_setsockopt(nullptr, ZMQ_SNDHWM, &rcv, sizeof rcv), -1);  // libzmq's own error
    EXPECT_EQ(zmq_errno(), ENOTSOCK);
}
