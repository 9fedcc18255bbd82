// SPDX-License-Identifier: Apache-2.0
// Write-ahead log of the event queue (spool_mode=write_ahead). Every record gets a sequence number
// and is appended to a memory buffer before it is queued; sync() (the flusher thread every
// spool_sync_ms, or the producer itself when spool_sync_ms=0) writes the buffer to the current
// segment and fsyncs it. The writer loop reports the last committed sequence number (commit());
// sync() persists it in `checkpoint` (written aside and renamed) and deletes segments whose records
// are all committed. At start-up the records past the checkpoint are replayed.
//
// Segment file  wal-<n>.hwl = "HDBWAL01" then records framed as in the spool
//   u32 payload_length | u32 crc32(payload) | payload, the payload ending with the sequence number.
// A torn or corrupt record ends a segment (a crash during a write).
//
// A filesystem without room does not stop the subscriber: the records of a failed write stay queued
// in memory, are counted as unlogged, and the next sync() tries again.
//
// Thread safety: append()/commit() may be called from any thread (the queue calls append() under its
// own lock, which keeps sequence order = queue order); sync() serialises the file I/O.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>

#include "record.h"
#include "spool.h"

namespace hdbbench {

struct WalOptions {
    std::string dir;
    std::chrono::milliseconds sync_interval{100};  // 0: every append is synced before push returns
    std::uint64_t segment_bytes = 16ull << 20;     // a segment is closed (and later deleted) past this size
};

class WriteAheadLog {
public:
    // Creates dir, reads the checkpoint and indexes the segments left by a previous run. Throws SpoolError.
    explicit WriteAheadLog(WalOptions opts);
    ~WriteAheadLog();
    WriteAheadLog(const WriteAheadLog &) = delete;
    WriteAheadLog &operator=(const WriteAheadLog &) = delete;

    // Hands the records past the checkpoint, oldest first (sequence numbers set), to `sink`; returns
    // how many. Call once, before the first append().
    std::uint64_t replay(const std::function<void(Record &&)> &sink);

    // Set r.wal_seq and buffer the record. Cheap: no system call.
    void append(Record &r);
    // When sync_interval is 0: write and fsync up to `seq` before returning.
    void sync_through(std::uint64_t seq);
    // Write the buffer, fsync, persist the checkpoint, delete committed segments.
    void sync();
    // Every record with a sequence number <= seq is stored in the database.
    void commit(std::uint64_t seq);

    bool sync_each_append() const { return opts_.sync_interval.count() == 0; }
    std::chrono::milliseconds sync_interval() const { return opts_.sync_interval; }
    std::uint64_t unlogged() const { return unlogged_; }    // records whose log write failed
    std::uint64_t logged() const { return logged_; }        // records written and fsynced
    std::uint64_t synced_seq() const { return synced_seq_; }
    bool failing() const { return failing_; }               // the last write failed
    std::uint64_t checkpoint() const { return persisted_checkpoint_; }
    std::size_t segment_count();
    std::string last_error();
    const std::string &dir() const { return opts_.dir; }

private:
    struct Segment {
        std::uint64_t number;
        std::string path;
        std::uint64_t max_seq;  // highest sequence number written to it
    };
    std::string segment_path(std::uint64_t number) const;
    void load_checkpoint();
    void index_segments();
    void scan_segment(Segment &seg, const std::function<void(Record &&)> *sink, std::uint64_t *replayed);
    bool ensure_segment();                       // io_mutex_ held; false: no space (errno kept)
    bool write_buffer(const std::string &data);  // io_mutex_ held; false: failed (the segment is cut back)
    void persist_checkpoint();                   // io_mutex_ held
    void delete_committed_segments();            // io_mutex_ held
    void set_error(const std::string &e);

    const WalOptions opts_;
    // Buffer side (append), guarded by buf_mutex_.
    std::mutex buf_mutex_;
    std::string buffer_;
    std::uint64_t buffer_records_ = 0, buffer_last_seq_ = 0, next_seq_ = 1;
    // File side (sync), guarded by io_mutex_.
    std::mutex io_mutex_;
    std::string io_buffer_;         // the buffer being written
    std::deque<Segment> segments_;  // oldest first; the last one is written while fd_ >= 0
    int fd_ = -1;
    std::uint64_t fd_size_ = 0, next_segment_ = 1;
    std::atomic<std::uint64_t> synced_seq_{0}, committed_{0}, persisted_checkpoint_{0};
    std::atomic<std::uint64_t> unlogged_{0}, logged_{0};
    std::atomic<bool> failing_{false};
    std::mutex error_mutex_;
    std::string last_error_;
};

}  // namespace hdbbench
