// SPDX-License-Identifier: Apache-2.0
// A minimal HTTP server for Prometheus: GET /metrics on 127.0.0.1:<port>, one connection at a time,
// from a thread of its own (`hdb-metrics`). Plain POSIX sockets: a scrape every few seconds needs no
// HTTP library. The body comes from a callback (the device renders its latest immutable snapshot),
// so the server shares nothing mutable with the archiver.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>

namespace hdbbench {

class MetricsServerError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A file descriptor closed when it goes out of scope.
class UniqueFd {
public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) : fd_(fd) {}
    ~UniqueFd() { reset(); }
    UniqueFd(UniqueFd &&o) noexcept : fd_(o.release()) {}
    UniqueFd &operator=(UniqueFd &&o) noexcept {
        if (this != &o) reset(o.release());
        return *this;
    }
    UniqueFd(const UniqueFd &) = delete;
    UniqueFd &operator=(const UniqueFd &) = delete;
    int get() const { return fd_; }
    int release() {
        const int fd = fd_;
        fd_ = -1;
        return fd;
    }
    void reset(int fd = -1);

private:
    int fd_ = -1;
};

class MetricsServer {
public:
    using Render = std::function<std::string()>;  // the body of /metrics
    // A client that sends its request (or takes the reply) slower than this is dropped, so a stuck
    // client cannot hold the only connection slot.
    static constexpr std::chrono::milliseconds kClientTimeout{2000};

    // Listens on 127.0.0.1:port (0: a free port chosen by the kernel, for tests) and starts serving.
    // Throws MetricsServerError with one line saying why (e.g. the port is in use).
    MetricsServer(std::uint16_t port, Render render, std::string content_type);
    ~MetricsServer();  // stops the thread and closes the socket
    MetricsServer(const MetricsServer &) = delete;
    MetricsServer &operator=(const MetricsServer &) = delete;

    std::uint16_t port() const { return port_; }

private:
    void run();
    void serve(int client);

    Render render_;
    std::string content_type_;
    UniqueFd listen_, wake_read_, wake_write_;  // a byte on the wake pipe ends run()
    std::uint16_t port_ = 0;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

}  // namespace hdbbench
