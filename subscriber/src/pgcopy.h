// SPDX-License-Identifier: Apache-2.0
// Encoder of PostgreSQL's binary COPY format (header, tuples, trailer), including 1-D/2-D arrays,
// numeric (for the unsigned 64-bit domain) and timestamptz. Values are data, never SQL text.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "record.h"

namespace hdbbench::pgcopy {

// Type OIDs of the built-in types used in the staging tables.
enum Oid : std::uint32_t {
    kBool = 16, kBytea = 17, kInt8 = 20, kInt2 = 21, kInt4 = 23, kText = 25, kJson = 114,
    kFloat4 = 700, kFloat8 = 701, kTimestampTz = 1184, kNumeric = 1700
};

constexpr std::int64_t kPgEpochOffsetUs = 946684800000000LL;  // 2000-01-01 - 1970-01-01

class Buffer {
public:
    Buffer();
    void begin_row(std::int16_t nfields) { be16(nfields); }
    void null() { be32(static_cast<std::uint32_t>(-1)); }
    void boolean(bool v) { be32(1); buf_.push_back(v ? 1 : 0); }
    void int2(std::int16_t v) { be32(2); be16(v); }
    void int4(std::int32_t v) { be32(4); be32(static_cast<std::uint32_t>(v)); }
    void int8(std::int64_t v) { be32(8); be64(static_cast<std::uint64_t>(v)); }
    void float4(float v) { std::uint32_t u; std::memcpy(&u, &v, 4); be32(4); be32(u); }
    void float8(double v) { std::uint64_t u; std::memcpy(&u, &v, 8); be32(8); be64(u); }
    void bytes(const std::string &v) { be32(static_cast<std::uint32_t>(v.size())); buf_.append(v); }
    void timestamptz(TimePoint t) { int8(t.time_since_epoch().count() - kPgEpochOffsetUs); }
    void numeric_u64(std::uint64_t v);
    // Array of `oid` elements with dims (outer first); `emit(i)` writes element i as a field.
    template <typename F>
    void array(Oid oid, const std::vector<std::uint32_t> &dims, std::size_t n, F emit) {
        const std::size_t len_pos = buf_.size();
        be32(0);  // length placeholder
        be32(static_cast<std::uint32_t>(dims.size()));
        be32(0);  // no NULL elements
        be32(oid);
        for (auto d : dims) {
            be32(d);
            be32(1);  // lower bound
        }
        for (std::size_t i = 0; i < n; ++i) emit(i);
        const auto len = static_cast<std::uint32_t>(buf_.size() - len_pos - 4);
        put_be32_at(len_pos, len);
    }
    void finish() { be16(-1); }
    const std::string &data() const { return buf_; }
    std::size_t size() const { return buf_.size(); }
    void clear();

    // Raw big-endian writers, public for array element encoding.
    void be16(std::int16_t v) { const auto u = __builtin_bswap16(static_cast<std::uint16_t>(v)); buf_.append(reinterpret_cast<const char *>(&u), 2); }
    void be32(std::uint32_t v) { const auto u = __builtin_bswap32(v); buf_.append(reinterpret_cast<const char *>(&u), 4); }
    void be64(std::uint64_t v) { const auto u = __builtin_bswap64(v); buf_.append(reinterpret_cast<const char *>(&u), 8); }

private:
    void put_be32_at(std::size_t pos, std::uint32_t v) { const auto u = __builtin_bswap32(v); std::memcpy(&buf_[pos], &u, 4); }
    std::string buf_;
};

}  // namespace hdbbench::pgcopy
