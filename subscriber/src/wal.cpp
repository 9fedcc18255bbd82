// SPDX-License-Identifier: Apache-2.0
#include "wal.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace hdbbench {

namespace {
constexpr char kMagic[8] = {'H', 'D', 'B', 'W', 'A', 'L', '0', '1'};
constexpr std::uint32_t kMaxPayload = 1u << 30;
constexpr const char *kCheckpoint = "checkpoint";

// Number n of a file named wal-<n>.hwl, or 0.
std::uint64_t segment_number(const std::string &name) {
    if (name.rfind("wal-", 0) != 0 || name.size() < 9 || name.substr(name.size() - 4) != ".hwl") return 0;
    try {
        return std::stoull(name.substr(4, name.size() - 8));
    } catch (const std::exception &) {
        return 0;
    }
}

// Frame r at the end of out, serialised in place (no temporary payload string).
void append_frame(std::string &out, const Record &r) {
    const std::size_t start = out.size();
    out.append(8, '\0');
    serialize_record_into(out, r);
    const char *payload = out.data() + start + 8;
    const std::size_t n = out.size() - start - 8;
    const std::uint32_t hdr[2] = {static_cast<std::uint32_t>(n), crc32(payload, n)};
    std::memcpy(out.data() + start, hdr, sizeof hdr);
}
}  // namespace

WriteAheadLog::WriteAheadLog(WalOptions opts) : opts_(std::move(opts)) {
    std::error_code ec;
    fs::create_directories(opts_.dir, ec);
    if (ec) throw SpoolError("write-ahead log: cannot create " + opts_.dir + ": " + ec.message());
    load_checkpoint();
    index_segments();
}

WriteAheadLog::~WriteAheadLog() {
    if (fd_ >= 0) ::close(fd_);
}

std::string WriteAheadLog::segment_path(std::uint64_t number) const {
    char name[48];
    std::snprintf(name, sizeof name, "wal-%020llu.hwl", static_cast<unsigned long long>(number));
    return (fs::path(opts_.dir) / name).string();
}

void WriteAheadLog::load_checkpoint() {
    std::ifstream in(fs::path(opts_.dir) / kCheckpoint);
    std::uint64_t seq = 0;
    if (in >> seq) {
        committed_ = seq;
        persisted_checkpoint_ = seq;
    }
}

void WriteAheadLog::index_segments() {
    std::vector<Segment> found;
    std::error_code ec;
    for (const auto &e : fs::directory_iterator(opts_.dir, ec)) {
        const std::uint64_t n = segment_number(e.path().filename().string());
        if (n) found.push_back({n, e.path().string(), 0});
    }
    if (ec) throw SpoolError("write-ahead log: cannot list " + opts_.dir + ": " + ec.message());
    std::sort(found.begin(), found.end(), [](const Segment &a, const Segment &b) { return a.number < b.number; });
    std::uint64_t max_seq = committed_;
    for (Segment &s : found) {
        scan_segment(s, nullptr, nullptr);
        max_seq = std::max(max_seq, s.max_seq);
        next_segment_ = std::max(next_segment_, s.number + 1);
        segments_.push_back(s);
    }
    next_seq_ = max_seq + 1;  // new records follow every record of the previous run
}

void WriteAheadLog::scan_segment(Segment &seg, const std::function<void(Record &&)> *sink, std::uint64_t *replayed) {
    std::ifstream in(seg.path, std::ios::binary);
    char magic[8];
    if (!in.read(magic, 8) || std::memcmp(magic, kMagic, 8) != 0) return;
    std::string payload;
    for (;;) {
        std::uint32_t hdr[2];
        if (!in.read(reinterpret_cast<char *>(hdr), sizeof hdr) || hdr[0] > kMaxPayload) return;
        payload.resize(hdr[0]);
        if (!in.read(payload.data(), hdr[0]) || crc32(payload.data(), payload.size()) != hdr[1]) return;
        Record r;
        try {
            r = deserialize_record(payload);
        } catch (const SpoolError &) {
            return;
        }
        seg.max_seq = std::max(seg.max_seq, r.wal_seq);
        if (sink && r.wal_seq > committed_) {
            (*sink)(std::move(r));
            ++*replayed;
        }
    }
}

std::uint64_t WriteAheadLog::replay(const std::function<void(Record &&)> &sink) {
    std::lock_guard<std::mutex> io(io_mutex_);
    std::uint64_t replayed = 0;
    for (Segment &s : segments_) scan_segment(s, &sink, &replayed);
    return replayed;
}

void WriteAheadLog::append(Record &r) {
    std::lock_guard<std::mutex> lock(buf_mutex_);
    r.wal_seq = next_seq_++;
    append_frame(buffer_, r);
    ++buffer_records_;
    buffer_last_seq_ = r.wal_seq;
}

void WriteAheadLog::sync_through(std::uint64_t seq) {
    if (synced_seq_ >= seq) return;  // a sync of another thread took it already
    sync();
}

void WriteAheadLog::commit(std::uint64_t seq) {
    std::uint64_t cur = committed_;
    while (seq > cur && !committed_.compare_exchange_weak(cur, seq)) {
    }
}

bool WriteAheadLog::ensure_segment() {
    if (fd_ >= 0 && fd_size_ < opts_.segment_bytes) return true;
    if (fd_ >= 0) {
        ::close(fd_);  // its data was fsynced by the sync that wrote it
        fd_ = -1;
    }
    const std::uint64_t n = next_segment_;
    const std::string path = segment_path(n);
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) return false;
    if (!write_all(fd_, kMagic, sizeof kMagic)) {
        const int err = errno;
        ::close(fd_);
        fd_ = -1;
        ::unlink(path.c_str());
        errno = err;
        return false;
    }
    // The new name must survive a machine crash too: fsync the directory (once per segment).
    const int dir_fd = ::open(opts_.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd >= 0) {
        ::fsync(dir_fd);
        ::close(dir_fd);
    }
    ++next_segment_;
    fd_size_ = sizeof kMagic;
    segments_.push_back({n, path, 0});
    return true;
}

bool WriteAheadLog::write_buffer(const std::string &data) {
    if (!ensure_segment()) return false;
    if (write_all(fd_, data.data(), data.size()) && ::fdatasync(fd_) == 0) {
        fd_size_ += data.size();
        return true;
    }
    // Cut the failed write off so that the segment keeps whole records only; if even that fails,
    // leave the segment (a torn tail ends it at replay) and start a new one next time.
    const int err = errno;
    if (::ftruncate(fd_, static_cast<off_t>(fd_size_)) != 0 || ::lseek(fd_, static_cast<off_t>(fd_size_), SEEK_SET) < 0) {
        ::close(fd_);
        fd_ = -1;
    }
    errno = err;
    return false;
}

void WriteAheadLog::sync() {
    std::lock_guard<std::mutex> io(io_mutex_);
    std::string &data = io_buffer_;
    data.clear();  // keeps its capacity: handed back to the appenders by the swap
    std::uint64_t records = 0, last_seq = 0;
    {
        std::lock_guard<std::mutex> lock(buf_mutex_);
        data.swap(buffer_);
        records = buffer_records_;
        last_seq = buffer_last_seq_;
        buffer_records_ = 0;
    }
    if (records) {
        if (write_buffer(data)) {
            logged_ += records;
            segments_.back().max_seq = last_seq;
            failing_ = false;
        } else {
            unlogged_ += records;  // still queued in memory: not lost unless the subscriber dies
            failing_ = true;
            set_error(std::string("write-ahead log: cannot write in ") + opts_.dir + ": " + std::strerror(errno));
        }
        synced_seq_ = last_seq;
    }
    persist_checkpoint();
    delete_committed_segments();
}

void WriteAheadLog::persist_checkpoint() {
    const std::uint64_t seq = committed_;
    if (seq == persisted_checkpoint_) return;
    const fs::path final_path = fs::path(opts_.dir) / kCheckpoint;
    const fs::path tmp = fs::path(opts_.dir) / "checkpoint.tmp";
    // Not fsynced: a stale checkpoint after a crash only replays records already stored (skipped as
    // duplicates); the rename keeps it whole.
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return;
    const std::string text = std::to_string(seq) + "\n";
    const bool ok = write_all(fd, text.data(), text.size());
    ::close(fd);
    if (ok && ::rename(tmp.c_str(), final_path.c_str()) == 0) persisted_checkpoint_ = seq;
}

void WriteAheadLog::delete_committed_segments() {
    const std::uint64_t cp = persisted_checkpoint_;
    const bool writing = fd_ >= 0;
    while (segments_.size() > (writing ? 1u : 0u) && segments_.front().max_seq <= cp) {
        ::unlink(segments_.front().path.c_str());
        segments_.pop_front();
    }
    // The write segment too, once it is full and committed: the next sync starts a new one.
    if (writing && segments_.size() == 1 && fd_size_ >= opts_.segment_bytes && segments_.front().max_seq <= cp) {
        ::close(fd_);
        fd_ = -1;
        ::unlink(segments_.front().path.c_str());
        segments_.pop_front();
    }
}

std::size_t WriteAheadLog::segment_count() {
    std::lock_guard<std::mutex> io(io_mutex_);
    return segments_.size();
}

void WriteAheadLog::set_error(const std::string &e) {
    std::lock_guard<std::mutex> lock(error_mutex_);
    last_error_ = e;
}

std::string WriteAheadLog::last_error() {
    std::lock_guard<std::mutex> lock(error_mutex_);
    return last_error_;
}

}  // namespace hdbbench
