// SPDX-License-Identifier: Apache-2.0
// Disk spool: an append-only sequence of segment files holding serialised Records.
//
// Segment file  spool-<seq>.hsp = "HDBSPL01" then records; a record is
//   u32 payload_length | u32 crc32(payload) | payload            (little endian)
// A record whose length or CRC does not match (a torn write at a crash) ends the segment.
// Each record is written with one write(2), so that a full filesystem refuses exactly that record:
// the segment is cut back to its last whole record and the caller counts the loss.
// Segments are read oldest first and deleted once fully read; segments left by a previous run
// are found at start-up and replayed first. The class is not thread-safe: the queue serialises it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <deque>
#include <optional>
#include <stdexcept>
#include <string>

#include "record.h"

namespace hdbbench {

class SpoolError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Serialisation, exposed for tests.
std::string serialize_record(const Record &r);
void serialize_record_into(std::string &out, const Record &r);  // appends to out
Record deserialize_record(const std::string &payload);  // throws SpoolError
std::uint32_t crc32(const void *data, std::size_t n);

// True for the errno values of a filesystem that has no room (ENOSPC, EDQUOT, EFBIG).
bool is_no_space_errno(int err);
// write(2) all of buf, retrying short writes; false with errno set on failure.
bool write_all(int fd, const void *buf, std::size_t n);

enum class SpoolAppend { Appended, LimitReached, NoSpace };

class Spool {
public:
    // limit_bytes 0 means the spool refuses everything. Throws SpoolError if dir cannot be created.
    Spool(std::string dir, std::uint64_t limit_bytes, std::uint64_t segment_bytes = 64ull << 20);
    ~Spool();
    Spool(const Spool &) = delete;
    Spool &operator=(const Spool &) = delete;

    // LimitReached when the limit would be exceeded, NoSpace when the filesystem refused the write (the
    // caller counts the loss; the next append tries again). Throws SpoolError on other I/O errors.
    SpoolAppend append(const Record &r);
    // Next record in append order, or nullopt when empty.
    std::optional<Record> pop();
    // recv_time of the oldest record still in the spool.
    std::optional<TimePoint> oldest_recv_time();

    std::uint64_t count() const { return count_; }
    bool empty() const { return count_ == 0; }
    std::uint64_t bytes() const { return bytes_; }          // bytes of unread records
    std::uint64_t corrupt_records() const { return corrupt_; }
    std::uint64_t recovered_records() const { return recovered_; }
    const std::string &dir() const { return dir_; }

private:
    struct Segment {
        std::uint64_t seq;
        std::string path;
    };
    std::string segment_path(std::uint64_t seq) const;
    bool open_write_segment();  // false: no space
    bool read_next(Record &out, std::uint64_t &rec_bytes);
    void finish_read_segment();
    std::uint64_t scan_segment(const std::string &path, std::uint64_t &bytes);

    std::string dir_;
    std::uint64_t limit_bytes_, segment_bytes_;
    std::deque<Segment> segments_;   // oldest first; the last one is the write segment when writer_ is open
    int writer_ = -1;  // file descriptor of the write segment
    std::uint64_t write_seg_size_ = 0;
    std::FILE *reader_ = nullptr;
    std::uint64_t next_seq_ = 1;
    std::uint64_t count_ = 0, bytes_ = 0, corrupt_ = 0, recovered_ = 0;
    std::optional<Record> peeked_;
    std::uint64_t peeked_bytes_ = 0;
};

}  // namespace hdbbench
