// SPDX-License-Identifier: Apache-2.0
// The write-ahead log and the loss reasons of the event queue: checkpoints delete segments, a
// SIGKILLed process loses nothing it had synced, a full filesystem drops (overflow mode) or leaves
// unlogged (write-ahead mode) without stopping the queue, and the LibConfiguration keys.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "event_queue.h"
#include "pg_writer.h"
#include "wal.h"
#include "wal_flusher.h"

using namespace hdbbench;
namespace fs = std::filesystem;

namespace {
constexpr std::int64_t kBase = 1700000000000000LL;

std::string temp_dir(const std::string &name) {
    const auto d = fs::temp_directory_path() / ("hdbbench-es-wal-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(d);
    return d.string();
}

// Record number i: its data_time tells it apart after a round trip through the log.
Record make(std::int64_t i) {
    Record r;
    r.att_name = "tango://h:1/a/b/c/x" + std::to_string(i % 3);
    r.data_type = kDevDouble;
    r.data_format = kScalar;
    r.write_type = kRead;
    r.data_time = TimePoint(std::chrono::microseconds(kBase + i));
    r.recv_time = r.data_time;
    r.value_r = std::vector<double>{static_cast<double>(i)};
    r.dim_x_r = 1;
    return r;
}

std::int64_t number_of(const Record &r) { return r.data_time.time_since_epoch().count() - kBase; }

std::size_t files_named(const std::string &dir, const std::string &prefix) {
    std::size_t n = 0;
    for (const auto &e : fs::directory_iterator(dir))
        if (e.path().filename().string().rfind(prefix, 0) == 0) ++n;
    return n;
}

std::vector<Record> replay_all(const std::string &dir) {
    WriteAheadLog wal(WalOptions{dir, std::chrono::milliseconds(100)});
    std::vector<Record> out;
    wal.replay([&out](Record &&r) { out.push_back(std::move(r)); });
    return out;
}

// Files larger than `bytes` cannot be written (EFBIG) while this lives: a full filesystem in small.
class FileSizeLimit {
public:
    explicit FileSizeLimit(rlim_t bytes) {
        old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
        getrlimit(RLIMIT_FSIZE, &old_);
        rlimit l = old_;
        l.rlim_cur = bytes;
        setrlimit(RLIMIT_FSIZE, &l);
    }
    ~FileSizeLimit() { lift(); }
    void lift() {
        setrlimit(RLIMIT_FSIZE, &old_);
        std::signal(SIGXFSZ, old_handler_);
    }

private:
    rlimit old_{};
    void (*old_handler_)(int) = SIG_DFL;
};
}  // namespace

TEST(WriteAheadLog, CheckpointDeletesCommittedSegments) {
    const std::string dir = temp_dir("ckpt");
    {
        WriteAheadLog wal(WalOptions{dir, std::chrono::milliseconds(100), 4096});
        std::uint64_t last = 0;
        for (int i = 0; i < 400; ++i) {
            Record r = make(i);
            wal.append(r);
            last = r.wal_seq;
            if (i % 20 == 19) wal.sync();
        }
        wal.sync();
        ASSERT_GT(files_named(dir, "wal-"), 3u);
        wal.commit(200);  // half: the segments holding 201..400 stay
        wal.sync();
        const std::size_t half = files_named(dir, "wal-");
        EXPECT_GT(half, 1u);
        EXPECT_EQ(replay_all(dir).front().wal_seq, 201u);
        wal.commit(last);
        wal.sync();
        EXPECT_LT(files_named(dir, "wal-"), half);
        EXPECT_LE(files_named(dir, "wal-"), 1u);  // at most the segment being written
        std::ifstream cp(fs::path(dir) / "checkpoint");
        std::uint64_t persisted = 0;
        cp >> persisted;
        EXPECT_EQ(persisted, last);
    }
    EXPECT_TRUE(replay_all(dir).empty());
    fs::remove_all(dir);
}

TEST(WriteAheadLog, QueueReplaysUncommittedInOrderThenContinues) {
    const std::string dir = temp_dir("queue");
    {
        EventQueue q(1000, nullptr, std::make_unique<WriteAheadLog>(WalOptions{dir, std::chrono::milliseconds(0)}));
        for (int i = 0; i < 30; ++i) q.push(make(i));
        auto batch = q.pop_batch(10, std::chrono::milliseconds(0), std::chrono::milliseconds(0));
        ASSERT_EQ(batch.size(), 10u);
        q.committed(batch);
        q.wal()->sync();
    }  // "crash": 20 records queued, not stored
    EventQueue q(1000, nullptr, std::make_unique<WriteAheadLog>(WalOptions{dir, std::chrono::milliseconds(0)}));
    EXPECT_EQ(q.snapshot().wal_replayed, 20u);
    q.push(make(30));
    auto batch = q.pop_batch(100, std::chrono::milliseconds(0), std::chrono::milliseconds(0));
    ASSERT_EQ(batch.size(), 21u);
    for (std::size_t i = 0; i < batch.size(); ++i) EXPECT_EQ(number_of(batch[i]), static_cast<std::int64_t>(10 + i));
    EXPECT_GT(batch.back().wal_seq, batch[19].wal_seq);  // new records follow the replayed ones
    fs::remove_all(dir);
}

namespace {
// Child: pushes records through a write-ahead queue (its flusher running, a consumer committing
// now and then) and reports on `report_fd` each sequence number known synced, until killed.
[[noreturn]] void crash_child(const std::string &dir, std::chrono::milliseconds sync, int report_fd) {
    auto q = std::make_unique<EventQueue>(1u << 20, nullptr,
                                          std::make_unique<WriteAheadLog>(WalOptions{dir, sync, 64 << 10}));
    WalFlusher flusher(*q->wal());
    flusher.start();
    std::uint64_t reported = 0;
    for (std::int64_t i = 0;; ++i) {
        q->push(make(i));
        if (i % 500 == 499) {  // a slow writer: commits a little of what is queued
            auto b = q->pop_batch(100, std::chrono::milliseconds(0), std::chrono::milliseconds(0));
            q->committed(b);
        }
        const std::uint64_t synced = q->wal()->synced_seq();
        if (synced > reported && ::write(report_fd, &synced, sizeof synced) == sizeof synced) reported = synced;
    }
}

// Kill the child once it has synced `enough` records (each record synced alone costs an fsync).
void check_recovery_after_kill(std::chrono::milliseconds sync, std::uint64_t enough) {
    const std::string dir = temp_dir("kill" + std::to_string(sync.count()));
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ::close(fds[0]);
        crash_child(dir, sync, fds[1]);
    }
    ::close(fds[1]);
    std::uint64_t last_synced = 0, v = 0;
    while (last_synced < enough && ::read(fds[0], &v, sizeof v) == sizeof v) last_synced = v;
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    while (::read(fds[0], &v, sizeof v) == sizeof v) last_synced = v;  // reports written before the kill
    ::close(fds[0]);
    ASSERT_TRUE(WIFSIGNALED(status));
    ASSERT_GE(last_synced, enough);

    const std::vector<Record> replayed = replay_all(dir);
    ASSERT_FALSE(replayed.empty());
    // Everything past the checkpoint, in order, up to at least the last reported sync.
    for (std::size_t i = 1; i < replayed.size(); ++i) ASSERT_EQ(replayed[i].wal_seq, replayed[i - 1].wal_seq + 1);
    for (const Record &r : replayed) ASSERT_EQ(number_of(r) + 1, static_cast<std::int64_t>(r.wal_seq));
    EXPECT_GE(replayed.back().wal_seq, last_synced);
    std::ifstream cp(fs::path(dir) / "checkpoint");
    std::uint64_t checkpoint = 0;
    cp >> checkpoint;
    EXPECT_EQ(replayed.front().wal_seq, checkpoint + 1);
    fs::remove_all(dir);
}
}  // namespace

TEST(WriteAheadLog, SigkillLosesNothingSyncedEachRecord) { check_recovery_after_kill(std::chrono::milliseconds(0), 1500); }

TEST(WriteAheadLog, SigkillLosesNothingSyncedPeriodic) { check_recovery_after_kill(std::chrono::milliseconds(10), 20000); }

TEST(NoSpace, OverflowSpoolDropsAndCountsThenRecovers) {
    const std::string dir = temp_dir("nospace-overflow");
    EventQueue q(1, std::make_unique<Spool>(dir, 1u << 30));
    FileSizeLimit limit(4096);
    for (int i = 0; i < 200; ++i) q.push(make(i));
    QueueSnapshot s = q.snapshot();
    EXPECT_GT(s.lost_spool_full, 0u);
    EXPECT_EQ(s.lost, s.lost_spool_full);
    EXPECT_EQ(s.lost_queue_full, 0u);
    EXPECT_EQ(s.pushed + s.lost, 200u);
    limit.lift();  // space returns
    for (int i = 200; i < 210; ++i) q.push(make(i));
    EXPECT_EQ(q.snapshot().lost, s.lost);
    std::vector<Record> all;
    for (;;) {
        auto b = q.pop_batch(1000, std::chrono::milliseconds(0), std::chrono::milliseconds(0));
        if (b.empty()) break;
        all.insert(all.end(), b.begin(), b.end());
    }
    EXPECT_EQ(all.size(), s.pushed + 10);  // whole records only: the failed ones were cut off
    for (std::size_t i = 1; i < all.size(); ++i) EXPECT_LT(number_of(all[i - 1]), number_of(all[i]));
    EXPECT_EQ(number_of(all.back()), 209);
    fs::remove_all(dir);
}

TEST(NoSpace, WriteAheadKeepsRecordsQueuedAndUnlogged) {
    const std::string dir = temp_dir("nospace-wal");
    EventQueue q(1000, nullptr, std::make_unique<WriteAheadLog>(WalOptions{dir, std::chrono::milliseconds(100)}));
    FileSizeLimit limit(4096);
    for (int i = 0; i < 200; ++i) q.push(make(i));
    q.wal()->sync();
    QueueSnapshot s = q.snapshot();
    EXPECT_EQ(s.in_memory, 200u);
    EXPECT_EQ(s.lost, 0u);
    EXPECT_EQ(s.wal_unlogged, 200u);
    EXPECT_TRUE(s.wal_failing);
    limit.lift();
    const std::uint64_t logged = q.wal()->logged();
    for (int i = 200; i < 210; ++i) q.push(make(i));
    q.wal()->sync();  // logging resumes by itself
    EXPECT_EQ(q.wal()->logged(), logged + 10);
    EXPECT_EQ(q.snapshot().wal_unlogged, 200u);
    EXPECT_FALSE(q.snapshot().wal_failing);
    const auto replayed = replay_all(dir);
    ASSERT_EQ(replayed.size(), 10u);
    EXPECT_EQ(number_of(replayed.front()), 200);
    fs::remove_all(dir);
}

TEST(LossReasons, QueueFullWithoutSpool) {
    EventQueue q(2, nullptr);
    for (int i = 0; i < 5; ++i) q.push(make(i));
    const QueueSnapshot s = q.snapshot();
    EXPECT_EQ(s.lost_queue_full, 3u);
    EXPECT_EQ(s.lost, 3u);
    EXPECT_EQ(s.lost_spool_full, 0u);
    EXPECT_EQ(s.capacity, 2u);
    EXPECT_EQ(s.max_in_memory, 2u);
}

TEST(LossReasons, SpoolLimitCountsAsQueueFull) {
    const std::string dir = temp_dir("limit");
    EventQueue q(1, std::make_unique<Spool>(dir, 300));
    for (int i = 0; i < 20; ++i) q.push(make(i));
    const QueueSnapshot s = q.snapshot();
    EXPECT_GT(s.lost_queue_full, 0u);
    EXPECT_EQ(s.lost, s.lost_queue_full);
    fs::remove_all(dir);
}

TEST(LibConfigSpoolMode, KeysAndErrors) {
    const LibConfig d = LibConfig::parse({"backend=null"});
    EXPECT_EQ(d.spool_mode, SpoolMode::Overflow);
    EXPECT_EQ(d.spool_sync_ms.count(), 100);
    const LibConfig w = LibConfig::parse({"backend=null", "spool_dir=/tmp/x", "spool_mode=write_ahead", "spool_sync_ms=0"});
    EXPECT_EQ(w.spool_mode, SpoolMode::WriteAhead);
    EXPECT_EQ(w.spool_sync_ms.count(), 0);
    EXPECT_THROW(LibConfig::parse({"backend=null", "spool_mode=write_ahead"}), ConfigError);
    EXPECT_THROW(LibConfig::parse({"backend=null", "spool_dir=/tmp/x", "spool_mode=wal"}), ConfigError);
    EXPECT_THROW(LibConfig::parse({"backend=null", "spool_sync_ms=-1"}), ConfigError);
    EXPECT_THROW(LibConfig::parse({"backend=null", "spool_sync_ms=10ms"}), ConfigError);
    EXPECT_THROW(LibConfig::parse({"backend=null", "spool_sync_ms=99999999999"}), ConfigError);
    try {
        LibConfig::parse({"backend=null", "spool_mode=write_ahead"});
    } catch (const ConfigError &e) {
        EXPECT_NE(std::string(e.what()).find("spool_dir"), std::string::npos);
    }
}

TEST(Crc32, KnownValuesAnyLengthAndAlignment) {
    EXPECT_EQ(crc32("123456789", 9), 0xCBF43926u);
    const std::string fox = "The quick brown fox jumps over the lazy dog";
    EXPECT_EQ(crc32(fox.data(), fox.size()), 0x414FA339u);
    const std::string shifted = "x" + fox;  // unaligned start
    EXPECT_EQ(crc32(shifted.data() + 1, fox.size()), 0x414FA339u);
    EXPECT_EQ(crc32("", 0), 0u);
}

TEST(TransientDbErrors, NoSpaceAndLockTimeoutAreRetriedNotRejected) {
    EXPECT_TRUE(pg_error_is_transient("53100", "could not extend file"));      // disk_full
    EXPECT_TRUE(pg_error_is_transient("53200", "out of memory"));
    EXPECT_TRUE(pg_error_is_transient("55P03", "canceling statement due to lock timeout"));
    EXPECT_TRUE(pg_error_is_transient(nullptr, "could not write to file \"base/1/2\": No space left on device"));
    EXPECT_FALSE(pg_error_is_transient("23505", "duplicate key value violates unique constraint"));
    EXPECT_FALSE(pg_error_is_transient("22P02", "invalid input syntax"));
    EXPECT_FALSE(pg_error_is_transient(nullptr, "value too long"));
    EXPECT_TRUE(message_says_no_space("Error writing file './hdb/att.MAI' (Errcode: 28 \"No space left on device\")"));
    EXPECT_FALSE(message_says_no_space("Data too long for column 'value_r'"));
}
