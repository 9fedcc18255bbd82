// SPDX-License-Identifier: Apache-2.0
#include "spool.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace hdbbench {

namespace {
constexpr char kMagic[8] = {'H', 'D', 'B', 'S', 'P', 'L', '0', '1'};
constexpr std::uint32_t kMaxPayload = 1u << 30;

class Out {
public:
    explicit Out(std::string &s) : s_(s) {}
    template <typename T>
    void pod(T v) {
        static_assert(std::is_trivially_copyable_v<T>);
        char b[sizeof(T)];
        std::memcpy(b, &v, sizeof(T));  // hosts are little endian (x86-64, aarch64)
        s_.append(b, sizeof(T));
    }
    void str(const std::string &v) {
        pod<std::uint32_t>(static_cast<std::uint32_t>(v.size()));
        s_.append(v);
    }
    void values(const Values &v) {
        pod<std::uint8_t>(static_cast<std::uint8_t>(v.index()));
        std::visit([this](const auto &x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (!std::is_same_v<T, std::monostate>) {
                pod<std::uint32_t>(static_cast<std::uint32_t>(x.size()));
                if constexpr (std::is_same_v<T, std::vector<std::string>>) {
                    for (const auto &e : x) str(e);
                } else {
                    s_.append(reinterpret_cast<const char *>(x.data()), x.size() * sizeof(typename T::value_type));
                }
            }
        }, v);
    }

private:
    std::string &s_;
};

class In {
public:
    explicit In(const std::string &s) : s_(s) {}
    template <typename T>
    T pod() {
        need(sizeof(T));
        T v;
        std::memcpy(&v, s_.data() + p_, sizeof(T));
        p_ += sizeof(T);
        return v;
    }
    std::string str() {
        const auto n = pod<std::uint32_t>();
        need(n);
        std::string v = s_.substr(p_, n);
        p_ += n;
        return v;
    }
    template <typename E>
    std::vector<E> vec() {
        const auto n = pod<std::uint32_t>();
        need(static_cast<std::size_t>(n) * sizeof(E));
        std::vector<E> v(n);
        if (n) std::memcpy(v.data(), s_.data() + p_, n * sizeof(E));
        p_ += n * sizeof(E);
        return v;
    }
    Values values() {
        switch (pod<std::uint8_t>()) {
            case 0: return std::monostate{};
            case 1: return vec<std::int64_t>();
            case 2: return vec<std::uint64_t>();
            case 3: return vec<double>();
            case 4: {
                const auto n = pod<std::uint32_t>();
                std::vector<std::string> v;
                v.reserve(std::min<std::uint32_t>(n, 1u << 16));
                for (std::uint32_t i = 0; i < n; ++i) v.push_back(str());
                return v;
            }
            default: throw SpoolError("spool: bad value tag");
        }
    }
    bool at_end() const { return p_ == s_.size(); }

private:
    void need(std::size_t n) const {
        if (s_.size() - p_ < n) throw SpoolError("spool: truncated record");
    }
    const std::string &s_;
    std::size_t p_ = 0;
};

// CRC-32 (IEEE, reflected, polynomial 0xEDB88320), eight bytes per step ("slicing by 8"): table k
// gives the CRC of a byte followed by k zero bytes, so eight lookups replace eight dependent steps.
using CrcTables = std::array<std::array<std::uint32_t, 256>, 8>;

CrcTables make_crc_tables() {
    CrcTables t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
        std::uint32_t c = i;
        for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        t[0][i] = c;
    }
    for (std::size_t k = 1; k < 8; ++k)
        for (std::uint32_t i = 0; i < 256; ++i) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFFu];
    return t;
}
}  // namespace

std::uint32_t crc32(const void *data, std::size_t n) {
    static const CrcTables t = make_crc_tables();
    std::uint32_t c = 0xFFFFFFFFu;
    const auto *p = static_cast<const unsigned char *>(data);
    for (; n >= 8; n -= 8, p += 8) {
        std::uint32_t lo, hi;
        std::memcpy(&lo, p, 4);  // little endian hosts, as the record format
        std::memcpy(&hi, p + 4, 4);
        lo ^= c;
        c = t[7][lo & 0xFFu] ^ t[6][(lo >> 8) & 0xFFu] ^ t[5][(lo >> 16) & 0xFFu] ^ t[4][lo >> 24] ^
            t[3][hi & 0xFFu] ^ t[2][(hi >> 8) & 0xFFu] ^ t[1][(hi >> 16) & 0xFFu] ^ t[0][hi >> 24];
    }
    for (; n > 0; --n, ++p) c = t[0][(c ^ *p) & 0xFFu] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

std::string serialize_record(const Record &r) {
    std::string s;
    s.reserve(r.approx_bytes());
    serialize_record_into(s, r);
    return s;
}

void serialize_record_into(std::string &s, const Record &r) {
    Out o(s);
    o.pod<std::uint8_t>(static_cast<std::uint8_t>(r.kind));
    o.pod<std::int8_t>(r.data_type);
    o.pod<std::int8_t>(r.data_format);
    o.pod<std::int8_t>(r.write_type);
    o.pod<std::int16_t>(r.quality);
    o.pod<std::uint32_t>(r.ttl_hours);
    o.str(r.att_name);
    o.pod<std::int64_t>(r.data_time.time_since_epoch().count());
    o.pod<std::int64_t>(r.recv_time.time_since_epoch().count());
    o.pod<std::uint32_t>(r.dim_x_r);
    o.pod<std::uint32_t>(r.dim_y_r);
    o.pod<std::uint32_t>(r.dim_x_w);
    o.pod<std::uint32_t>(r.dim_y_w);
    o.values(r.value_r);
    o.values(r.value_w);
    o.str(r.text);
    o.pod<std::uint8_t>(r.param ? 1 : 0);
    if (r.param) {
        const ParamInfo &p = *r.param;
        for (const std::string *f : {&p.label, &p.unit, &p.standard_unit, &p.display_unit, &p.format,
                                     &p.archive_rel_change, &p.archive_abs_change, &p.archive_period, &p.description})
            o.str(*f);
        o.pod<std::uint32_t>(static_cast<std::uint32_t>(p.enum_labels.size()));
        for (const auto &l : p.enum_labels) o.str(l);
    }
    if (r.wal_seq) o.pod<std::uint64_t>(r.wal_seq);  // optional trailer: records without it stay readable
}

Record deserialize_record(const std::string &payload) {
    In in(payload);
    Record r;
    const auto kind = in.pod<std::uint8_t>();
    if (kind > 3) throw SpoolError("spool: bad record kind");
    r.kind = static_cast<RecordKind>(kind);
    r.data_type = in.pod<std::int8_t>();
    r.data_format = in.pod<std::int8_t>();
    r.write_type = in.pod<std::int8_t>();
    r.quality = in.pod<std::int16_t>();
    r.ttl_hours = in.pod<std::uint32_t>();
    r.att_name = in.str();
    r.data_time = TimePoint(std::chrono::microseconds(in.pod<std::int64_t>()));
    r.recv_time = TimePoint(std::chrono::microseconds(in.pod<std::int64_t>()));
    r.dim_x_r = in.pod<std::uint32_t>();
    r.dim_y_r = in.pod<std::uint32_t>();
    r.dim_x_w = in.pod<std::uint32_t>();
    r.dim_y_w = in.pod<std::uint32_t>();
    r.value_r = in.values();
    r.value_w = in.values();
    r.text = in.str();
    if (in.pod<std::uint8_t>()) {
        auto p = std::make_shared<ParamInfo>();
        for (std::string *f : {&p->label, &p->unit, &p->standard_unit, &p->display_unit, &p->format,
                               &p->archive_rel_change, &p->archive_abs_change, &p->archive_period, &p->description})
            *f = in.str();
        const auto n = in.pod<std::uint32_t>();
        for (std::uint32_t i = 0; i < n; ++i) p->enum_labels.push_back(in.str());
        r.param = std::move(p);
    }
    if (!in.at_end()) r.wal_seq = in.pod<std::uint64_t>();
    if (!in.at_end()) throw SpoolError("spool: trailing bytes in record");
    return r;
}

Spool::Spool(std::string dir, std::uint64_t limit_bytes, std::uint64_t segment_bytes)
    : dir_(std::move(dir)), limit_bytes_(limit_bytes), segment_bytes_(std::max<std::uint64_t>(segment_bytes, 4096)) {
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec) throw SpoolError("spool: cannot create " + dir_ + ": " + ec.message());
    std::vector<Segment> found;
    for (const auto &e : fs::directory_iterator(dir_, ec)) {
        const std::string n = e.path().filename().string();
        if (n.rfind("spool-", 0) != 0 || n.size() < 11 || n.substr(n.size() - 4) != ".hsp") continue;
        try {
            found.push_back({std::stoull(n.substr(6, n.size() - 10)), e.path().string()});
        } catch (const std::exception &) {
        }
    }
    if (ec) throw SpoolError("spool: cannot list " + dir_ + ": " + ec.message());
    std::sort(found.begin(), found.end(), [](const Segment &a, const Segment &b) { return a.seq < b.seq; });
    for (const auto &s : found) {
        std::uint64_t b = 0;
        const std::uint64_t n = scan_segment(s.path, b);
        segments_.push_back(s);
        count_ += n;
        bytes_ += b;
        recovered_ += n;
        next_seq_ = std::max(next_seq_, s.seq + 1);
    }
}

bool is_no_space_errno(int err) { return err == ENOSPC || err == EDQUOT || err == EFBIG; }

bool write_all(int fd, const void *buf, std::size_t n) {
    const char *data = static_cast<const char *>(buf);
    while (n > 0) {
        const ssize_t w = ::write(fd, data, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        if (w == 0) {
            errno = ENOSPC;
            return false;
        }
        data += w;
        n -= static_cast<std::size_t>(w);
    }
    return true;
}

Spool::~Spool() {
    if (writer_ >= 0) ::close(writer_);
    if (reader_) std::fclose(reader_);
}

std::string Spool::segment_path(std::uint64_t seq) const {
    char name[48];
    std::snprintf(name, sizeof name, "spool-%020llu.hsp", static_cast<unsigned long long>(seq));
    return (fs::path(dir_) / name).string();
}

std::uint64_t Spool::scan_segment(const std::string &path, std::uint64_t &bytes) {
    std::FILE *f = std::fopen(path.c_str(), "rb");
    if (!f) return 0;
    char magic[8];
    std::uint64_t n = 0;
    if (std::fread(magic, 1, 8, f) == 8 && std::memcmp(magic, kMagic, 8) == 0) {
        std::string payload;
        for (;;) {
            std::uint32_t hdr[2];
            if (std::fread(hdr, sizeof hdr, 1, f) != 1) break;
            if (hdr[0] > kMaxPayload) break;
            payload.resize(hdr[0]);
            if (hdr[0] && std::fread(payload.data(), 1, hdr[0], f) != hdr[0]) break;
            if (crc32(payload.data(), payload.size()) != hdr[1]) break;
            ++n;
            bytes += hdr[0] + sizeof hdr;
        }
    }
    std::fclose(f);
    return n;
}

bool Spool::open_write_segment() {
    const std::uint64_t seq = next_seq_;
    const std::string path = segment_path(seq);
    writer_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (writer_ < 0) {
        if (is_no_space_errno(errno)) return false;
        throw SpoolError("spool: cannot create " + path + ": " + std::strerror(errno));
    }
    if (!write_all(writer_, kMagic, 8)) {
        const int err = errno;
        ::close(writer_);
        writer_ = -1;
        std::error_code ec;
        fs::remove(path, ec);
        if (is_no_space_errno(err)) return false;
        throw SpoolError("spool: cannot write " + path + ": " + std::strerror(err));
    }
    ++next_seq_;
    write_seg_size_ = 8;
    segments_.push_back({seq, path});
    return true;
}

SpoolAppend Spool::append(const Record &r) {
    const std::string payload = serialize_record(r);
    const std::uint64_t rec_bytes = payload.size() + 8;
    if (bytes_ + rec_bytes > limit_bytes_) return SpoolAppend::LimitReached;
    if (writer_ >= 0 && write_seg_size_ >= segment_bytes_) {
        ::close(writer_);
        writer_ = -1;
    }
    if (writer_ < 0 && !open_write_segment()) return SpoolAppend::NoSpace;
    const std::uint32_t hdr[2] = {static_cast<std::uint32_t>(payload.size()), crc32(payload.data(), payload.size())};
    std::string frame(reinterpret_cast<const char *>(hdr), sizeof hdr);
    frame += payload;
    if (!write_all(writer_, frame.data(), frame.size())) {
        const int err = errno;
        // Cut a partial record off, so that the reader and later appends see whole records only.
        if (::ftruncate(writer_, static_cast<off_t>(write_seg_size_)) != 0 ||
            ::lseek(writer_, static_cast<off_t>(write_seg_size_), SEEK_SET) < 0)
            throw SpoolError("spool: cannot cut back " + segments_.back().path + ": " + std::strerror(errno));
        if (is_no_space_errno(err)) return SpoolAppend::NoSpace;
        throw SpoolError("spool: write failed in " + segments_.back().path + ": " + std::strerror(err));
    }
    write_seg_size_ += rec_bytes;
    ++count_;
    bytes_ += rec_bytes;
    return SpoolAppend::Appended;
}

void Spool::finish_read_segment() {
    if (reader_) {
        std::fclose(reader_);
        reader_ = nullptr;
    }
    if (!segments_.empty()) {
        std::error_code ec;
        fs::remove(segments_.front().path, ec);
        segments_.pop_front();
    }
}

bool Spool::read_next(Record &out, std::uint64_t &rec_bytes) {
    for (;;) {
        if (segments_.empty()) return false;
        const bool is_write_seg = writer_ >= 0 && segments_.size() == 1;
        if (!reader_) {
            reader_ = std::fopen(segments_.front().path.c_str(), "rb");
            char magic[8];
            if (!reader_ || std::fread(magic, 1, 8, reader_) != 8 || std::memcmp(magic, kMagic, 8) != 0) {
                if (is_write_seg) {  // cannot happen: the magic is written at creation
                    if (reader_) std::fclose(reader_);
                    reader_ = nullptr;
                    return false;
                }
                ++corrupt_;
                finish_read_segment();
                continue;
            }
        }
        const long pos = std::ftell(reader_);
        std::uint32_t hdr[2];
        std::string payload;
        bool ok = std::fread(hdr, sizeof hdr, 1, reader_) == 1 && hdr[0] <= kMaxPayload;
        if (ok) {
            payload.resize(hdr[0]);
            ok = hdr[0] == 0 || std::fread(payload.data(), 1, hdr[0], reader_) == hdr[0];
        }
        if (!ok) {
            if (is_write_seg) {  // caught up with the writer
                std::clearerr(reader_);
                std::fseek(reader_, pos, SEEK_SET);
                return false;
            }
            finish_read_segment();  // end of an old segment (or a torn tail)
            continue;
        }
        if (crc32(payload.data(), payload.size()) != hdr[1]) {
            ++corrupt_;
            if (is_write_seg) return false;
            finish_read_segment();
            continue;
        }
        try {
            out = deserialize_record(payload);
        } catch (const SpoolError &) {
            ++corrupt_;
            rec_bytes = payload.size() + 8;
            count_ = count_ ? count_ - 1 : 0;
            bytes_ = bytes_ >= rec_bytes ? bytes_ - rec_bytes : 0;
            continue;
        }
        rec_bytes = payload.size() + 8;
        return true;
    }
}

std::optional<TimePoint> Spool::oldest_recv_time() {
    if (count_ == 0) return std::nullopt;
    if (!peeked_) {
        Record r;
        std::uint64_t b = 0;
        if (!read_next(r, b)) return std::nullopt;
        peeked_ = std::move(r);
        peeked_bytes_ = b;
    }
    return peeked_->recv_time;
}

std::optional<Record> Spool::pop() {
    if (count_ == 0) return std::nullopt;
    std::optional<Record> out;
    std::uint64_t b = 0;
    if (peeked_) {
        out = std::move(peeked_);
        peeked_.reset();
        b = peeked_bytes_;
    } else {
        Record r;
        if (!read_next(r, b)) {
            // The counters promised more than the files hold (torn tail): resynchronise.
            corrupt_ += count_;
            count_ = 0;
            bytes_ = 0;
        } else {
            out = std::move(r);
        }
    }
    if (out) {
        --count_;
        bytes_ = bytes_ >= b ? bytes_ - b : 0;
    }
    if (count_ == 0) {  // everything read: start afresh
        if (writer_ >= 0) {
            ::close(writer_);
            writer_ = -1;
        }
        while (!segments_.empty()) finish_read_segment();
        bytes_ = 0;
    }
    return out;
}

}  // namespace hdbbench
