// SPDX-License-Identifier: Apache-2.0
#include "metrics_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace hdbbench {

namespace {

constexpr std::size_t kMaxRequestBytes = 8192;  // a scrape's request is a few hundred bytes
constexpr int kListenBacklog = 8;

std::string errno_text(int err) { return std::system_category().message(err); }

void set_timeouts(int fd, std::chrono::milliseconds timeout) {
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

bool send_all(int fd, const std::string &data) {
    std::size_t sent = 0;
    while (sent < data.size()) {
        const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;  // the client went away or timed out: nothing else to do
        sent += static_cast<std::size_t>(n);
    }
    return true;
}

std::string response(const std::string &status, const std::string &content_type, const std::string &body,
                     bool with_body, const std::string &extra_headers = {}) {
    std::string r = "HTTP/1.1 " + status + "\r\nContent-Type: " + content_type +
                    "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n" +
                    extra_headers + "\r\n";
    if (with_body) r += body;
    return r;
}

}  // namespace

void UniqueFd::reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
}

MetricsServer::MetricsServer(std::uint16_t port, Render render, std::string content_type)
    : render_(std::move(render)), content_type_(std::move(content_type)) {
    const std::string where = "127.0.0.1:" + std::to_string(port);
    listen_ = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (listen_.get() < 0) throw MetricsServerError("cannot create a socket: " + errno_text(errno));
    // A restarted subscriber may rebind while its old connections linger in TIME_WAIT; a port with a
    // listener is still refused (EADDRINUSE).
    const int one = 1;
    setsockopt(listen_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);  // loopback only: the house rule for servers
    if (::bind(listen_.get(), reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0)
        throw MetricsServerError("cannot listen on " + where + ": " + errno_text(errno));
    if (::listen(listen_.get(), kListenBacklog) != 0)
        throw MetricsServerError("cannot listen on " + where + ": " + errno_text(errno));
    socklen_t len = sizeof addr;
    if (::getsockname(listen_.get(), reinterpret_cast<sockaddr *>(&addr), &len) != 0)
        throw MetricsServerError("cannot read the address of " + where + ": " + errno_text(errno));
    port_ = ntohs(addr.sin_port);
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0)
        throw MetricsServerError("cannot create a pipe: " + errno_text(errno));
    wake_read_ = UniqueFd(pipe_fds[0]);
    wake_write_ = UniqueFd(pipe_fds[1]);
    thread_ = std::thread([this] {
        pthread_setname_np(pthread_self(), "hdb-metrics");
        run();
    });
}

MetricsServer::~MetricsServer() {
    stop_ = true;
    const char byte = 0;
    if (::write(wake_write_.get(), &byte, 1) < 0) {
        // The pipe is empty and ours: a failed write leaves run() to notice stop_ at its next wake-up.
    }
    if (thread_.joinable()) thread_.join();
}

void MetricsServer::run() {
    while (!stop_) {
        pollfd fds[2] = {{listen_.get(), POLLIN, 0}, {wake_read_.get(), POLLIN, 0}};
        const int n = ::poll(fds, 2, -1);
        if (n < 0) {
            if (errno == EINTR) continue;
            return;  // cannot happen with valid descriptors; nothing sensible to retry
        }
        if (stop_ || (fds[1].revents & POLLIN)) return;
        if (!(fds[0].revents & POLLIN)) continue;
        UniqueFd client(::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (client.get() < 0) continue;  // the client gave up before we accepted it
        serve(client.get());
    }
}

void MetricsServer::serve(int client) {
    set_timeouts(client, kClientTimeout);
    // The timeouts bound each recv(); the deadline bounds them all, so a client that trickles its
    // request cannot keep the only slot (nor delay an Init, which waits for this thread).
    const auto deadline = std::chrono::steady_clock::now() + kClientTimeout;
    std::string request;
    char buf[1024];
    while (request.find("\r\n\r\n") == std::string::npos && request.find("\n\n") == std::string::npos &&
           std::chrono::steady_clock::now() < deadline) {
        if (request.size() > kMaxRequestBytes) {
            send_all(client,
                     response("431 Request Header Fields Too Large", "text/plain", "request too large\n", true));
            return;
        }
        const ssize_t n = ::recv(client, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;  // closed, or too slow: answer what we have (a bare request line works)
        request.append(buf, static_cast<std::size_t>(n));
    }
    const std::string line = request.substr(0, request.find_first_of("\r\n"));
    const auto sp1 = line.find(' ');
    const auto sp2 = sp1 == std::string::npos ? std::string::npos : line.find(' ', sp1 + 1);
    if (sp1 == std::string::npos) {
        send_all(client, response("400 Bad Request", "text/plain", "bad request\n", true));
        return;
    }
    const std::string method = line.substr(0, sp1);
    std::string target = line.substr(sp1 + 1, sp2 == std::string::npos ? std::string::npos : sp2 - sp1 - 1);
    target = target.substr(0, target.find('?'));
    const bool head = method == "HEAD";
    if (method != "GET" && !head) {
        send_all(client,
                 response("405 Method Not Allowed", "text/plain", "GET /metrics\n", true, "Allow: GET, HEAD\r\n"));
        return;
    }
    if (target == "/metrics") {
        std::string body;
        try {
            body = render_();
        } catch (const std::exception &e) {
            send_all(client, response("500 Internal Server Error", "text/plain", std::string(e.what()) + "\n", !head));
            return;
        }
        send_all(client, response("200 OK", content_type_, body, !head));
    } else if (target == "/") {
        send_all(client, response("200 OK", "text/plain", "hdbbench-es: the statistics are at /metrics\n", !head));
    } else {
        send_all(client, response("404 Not Found", "text/plain", "not found: GET /metrics\n", !head));
    }
}

}  // namespace hdbbench
