// SPDX-License-Identifier: Apache-2.0
// hdbbench-es-spool-bench: CPU per event of the subscriber's event path (EventQueue::push, as the
// Tango callbacks call it) in overflow mode and in write-ahead mode, without Tango or a database.
// One producer thread pushes scalar double records as fast as it can; a fake writer thread takes
// batches of 1000 and reports them committed; in write-ahead mode the flusher thread runs as in
// the subscriber.
//
//   hdbbench-es-spool-bench --dir /var/tmp/spool-bench [--events 200000] [--sync 0,10,100,1000] [--rate 0]
//
// --rate R paces the producer at R events/s (0: as fast as it can). At a steady rate the flusher's
// fsyncs are shared by the events of one sync interval, as in a subscriber under a given load; flat
// out, a run is shorter than a few intervals and that share is not measured.
// Modes: overflow (memory only, the spool idle), overflow_spooling (queue_capacity 1: every record
// written to and read back from the spool, as during a database outage), write_ahead per sync.
// One JSON line per mode on stdout: mode, spool_sync_ms, events, producer CPU µs/event (the
// callback's share), process CPU µs/event (producer + writer + flusher), wall seconds.
// spool_sync_ms=0 fsyncs every record: it runs events/20 records to keep the run short.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "event_queue.h"
#include "wal_flusher.h"

using namespace hdbbench;

namespace {
double cpu_s(int who) {
    rusage u{};
    getrusage(who, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

Record make(std::size_t i) {
    Record r;
    r.att_name = "tango://127.0.0.1:10000/bench/spool/dev/a" + std::to_string(i % 100);
    r.data_type = kDevDouble;
    r.data_format = kScalar;
    r.write_type = kRead;
    r.data_time = now_us();
    r.recv_time = r.data_time;
    r.value_r = std::vector<double>{static_cast<double>(i)};
    r.dim_x_r = 1;
    return r;
}

struct Figures {
    double producer_cpu_s = 0, process_cpu_s = 0, wall_s = 0;
};

// Push `events` records, paced at `rate` events/s when rate > 0.
void produce(EventQueue &q, std::size_t events, double rate) {
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < events; ++i) {
        if (rate > 0 && i % 64 == 0)
            std::this_thread::sleep_until(t0 + std::chrono::duration<double>(static_cast<double>(i) / rate));
        q.push(make(i));
    }
}

Figures run(EventQueue &q, std::size_t events, double rate) {
    std::unique_ptr<WalFlusher> flusher;
    if (q.wal()) {
        flusher = std::make_unique<WalFlusher>(*q.wal());
        flusher->start();
    }
    std::size_t taken = 0;
    std::thread writer([&] {
        while (taken < events) {
            auto b = q.pop_batch(1000, std::chrono::milliseconds(10), std::chrono::milliseconds(100));
            taken += b.size();
            q.committed(b);
        }
    });
    Figures f;
    const double proc0 = cpu_s(RUSAGE_SELF);
    const auto t0 = std::chrono::steady_clock::now();
    const double prod0 = cpu_s(RUSAGE_THREAD);
    produce(q, events, rate);
    f.producer_cpu_s = cpu_s(RUSAGE_THREAD) - prod0;
    writer.join();
    flusher.reset();
    f.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    f.process_cpu_s = cpu_s(RUSAGE_SELF) - proc0;
    return f;
}

void report(const char *mode, long sync_ms, std::size_t events, const Figures &f) {
    std::printf("{\"mode\": \"%s\", \"spool_sync_ms\": %ld, \"events\": %zu, \"producer_cpu_us_per_event\": %.3f, "
                "\"process_cpu_us_per_event\": %.3f, \"wall_s\": %.3f}\n",
                mode, sync_ms, events, f.producer_cpu_s * 1e6 / static_cast<double>(events),
                f.process_cpu_s * 1e6 / static_cast<double>(events), f.wall_s);
    std::fflush(stdout);
}
}  // namespace

int main(int argc, char **argv) {
    std::string dir, syncs = "0,10,100,1000";
    std::size_t events = 200000;
    double rate = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string k = argv[i], v = argv[i + 1];
        if (k == "--dir") dir = v;
        else if (k == "--events") events = std::stoul(v);
        else if (k == "--sync") syncs = v;
        else if (k == "--rate") rate = std::stod(v);
        else {
            std::fprintf(stderr, "spool-bench: unknown option %s\n", k.c_str());
            return 2;
        }
    }
    if (dir.empty()) {
        std::fprintf(stderr, "spool-bench: --dir is required\n");
        return 2;
    }
    namespace fs = std::filesystem;
    LibConfig lib;
    lib.queue_capacity = events + 1;  // the queue never overflows: the cost of the mode alone
    lib.spool_dir = dir;
    fs::remove_all(dir);
    report("overflow", -1, events, run(*make_event_queue(lib), events, rate));
    lib.queue_capacity = 1;  // every record through the disk spool (a database outage)
    fs::remove_all(dir);
    report("overflow_spooling", -1, events, run(*make_event_queue(lib), events, rate));
    lib.queue_capacity = events + 1;
    for (const std::string &s : split(syncs, ',')) {
        fs::remove_all(dir);
        lib.spool_mode = SpoolMode::WriteAhead;
        lib.spool_sync_ms = std::chrono::milliseconds(std::stol(s));
        const std::size_t n = lib.spool_sync_ms.count() == 0 ? std::max<std::size_t>(1, events / 20) : events;
        report("write_ahead", lib.spool_sync_ms.count(), n, run(*make_event_queue(lib), n, rate));
    }
    fs::remove_all(dir);
    return 0;
}
