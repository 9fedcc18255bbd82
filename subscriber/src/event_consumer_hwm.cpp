// SPDX-License-Identifier: Apache-2.0
// Why this file defines zmq_setsockopt:
// cppTango (9.3.4 here; reference §1c: up to 10.3.3) receives every event of a process on one ZeroMQ
// SUB socket of its ZmqEventConsumer, and it sets that socket's ZMQ_SNDHWM (and its heartbeat SUB socket's) to
// SUB_SEND_HWM = 10,000, with no property or environment variable to change it. When the socket
// connects to one more device server (or reconnects after a restart), libzmq's XSUB first replays
// every topic already subscribed, for all servers, into the new connection's send queue: what
// exceeds the limit is dropped silently, and so are the next subscriptions to that server until the
// queue drains. With two topics per archived attribute, past ~5,000 attributes per process some
// attributes subscribe without error and never deliver an event.
//
// libtango.so.9 calls zmq_setsockopt through its PLT (cppzmq's socket_t::setsockopt is inline), so
// the definition below, exported by the executable, is the one it reaches. It replaces the value of
// ZMQ_SNDHWM on SUB sockets only (the consumer's; the device server's own PUB sockets keep theirs)
// and forwards every call to libzmq's zmq_setsockopt.
#include "event_consumer_hwm.h"

#include <dlfcn.h>
#include <zmq.h>

#include <atomic>
#include <cerrno>
#include <cstdio>

namespace hdbbench {
namespace {

using SetSockOpt = int (*)(void *, int, const void *, size_t);

std::atomic<std::uint32_t> g_requested{0};
constexpr std::int64_t kNotApplied = -1;
std::atomic<std::int64_t> g_applied{kNotApplied};

SetSockOpt real_setsockopt() {
    static const SetSockOpt real = reinterpret_cast<SetSockOpt>(dlsym(RTLD_NEXT, "zmq_setsockopt"));
    return real;
}

bool is_sub_socket(void *socket) {
    int type = -1;
    size_t size = sizeof type;
    return zmq_getsockopt(socket, ZMQ_TYPE, &type, &size) == 0 && type == ZMQ_SUB;
}

}  // namespace

void set_event_sub_send_hwm(std::uint32_t value) { g_requested.store(value); }

std::optional<std::uint32_t> applied_event_sub_send_hwm() {
    const std::int64_t v = g_applied.load();
    if (v == kNotApplied) return std::nullopt;
    return static_cast<std::uint32_t>(v);
}

}  // namespace hdbbench

extern "C" int zmq_setsockopt(void *socket, int option, const void *optval, size_t optvallen) {
    const hdbbench::SetSockOpt real = hdbbench::real_setsockopt();
    if (real == nullptr) {
        errno = ENOSYS;
        return -1;
    }
    if (option == ZMQ_SNDHWM && optval != nullptr && optvallen == sizeof(int) && hdbbench::is_sub_socket(socket)) {
        const std::uint32_t wanted = hdbbench::g_requested.load();
        const int value = static_cast<int>(wanted);  // the configuration bounds it to INT_MAX
        const int rc = real(socket, option, &value, sizeof value);
        if (rc == 0) {
            const std::int64_t before = hdbbench::g_applied.exchange(wanted);
            if (before != static_cast<std::int64_t>(wanted))  // once per process and value: the log stays short
                std::fprintf(stderr, "hdbbench-es: Tango event consumer's SUB socket ZMQ_SNDHWM %d -> %u "
                                     "(event_sub_send_hwm; 0 = unlimited)\n",
                             *static_cast<const int *>(optval), wanted);
        }
        return rc;
    }
    return real(socket, option, optval, optvallen);
}
