// SPDX-License-Identifier: Apache-2.0
// The unit of work of the subscriber: one archived event (data or error), one attribute
// configuration (att_parameter) or one history event (att_history). Records are plain values,
// independent of Tango, so the queue, the spool and the writers are testable without a server.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace hdbbench {

using Clock = std::chrono::system_clock;
using TimePoint = std::chrono::time_point<Clock, std::chrono::microseconds>;

inline TimePoint now_us() { return std::chrono::time_point_cast<std::chrono::microseconds>(Clock::now()); }

// Tango type numbers (reference §4); kept here so that the core does not include Tango.
enum TangoType : int {
    kDevBoolean = 1, kDevShort = 2, kDevLong = 3, kDevFloat = 4, kDevDouble = 5, kDevUShort = 6,
    kDevULong = 7, kDevString = 8, kDevState = 19, kDevUChar = 22, kDevLong64 = 23, kDevULong64 = 24,
    kDevEncoded = 28, kDevEnum = 29
};
enum DataFormat : int { kScalar = 0, kSpectrum = 1, kImage = 2 };
enum WriteType : int { kRead = 0, kReadWithWrite = 1, kWrite = 2, kReadWrite = 3 };
constexpr int kUnknown = -1;
constexpr int16_t kQualityValid = 0;
constexpr int16_t kQualityInvalid = 1;

bool is_supported_type(int type);
// "devdouble" etc.; empty for an unknown type.
std::string type_suffix(int type);
// "DEV_DOUBLE" etc. as in att_conf_type.type.
std::string type_name(int type);
// Storage class of the values of a type in a Record.
enum class ValueClass { Int, UInt, Real, Text };
ValueClass value_class(int type);

// Values: integers (bool, uchar, short, ushort, long, ulong, long64, state, enum) as int64,
// DevULong64 as uint64, float/double as double (float→double→float is exact), strings as text.
// DevEncoded is a text vector {format, bytes, format, bytes, ...}.
using Values = std::variant<std::monostate, std::vector<int64_t>, std::vector<uint64_t>,
                            std::vector<double>, std::vector<std::string>>;

inline std::size_t values_size(const Values &v) {
    return std::visit([](const auto &x) -> std::size_t {
        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::monostate>) return 0;
        else return x.size();
    }, v);
}
inline bool values_empty(const Values &v) { return values_size(v) == 0; }
// Number of value elements of v for the type (DevEncoded holds format/bytes pairs); 0 when the
// variant does not hold the type's storage class (a malformed record stores NULL rather than crash).
std::size_t element_count(int type, const Values &v);

// Attribute configuration fields stored in att_parameter.
struct ParamInfo {
    std::string label, unit, standard_unit, display_unit, format;
    std::string archive_rel_change, archive_abs_change, archive_period, description;
    std::vector<std::string> enum_labels;
    bool operator==(const ParamInfo &o) const;
};

enum class RecordKind : uint8_t { Data = 0, Error = 1, Param = 2, History = 3 };

// The history event that creates an attribute's att_conf row (HDB++ writes it from AttributeAdd).
inline constexpr const char *kAddEvent = "add";

struct Record {
    RecordKind kind = RecordKind::Data;
    int8_t data_type = kUnknown;
    int8_t data_format = kUnknown;
    int8_t write_type = kUnknown;
    int16_t quality = kQualityValid;
    uint32_t ttl_hours = 0;             // att_conf.ttl at creation, new ttl for update_ttl
    std::string att_name;               // tango://host:port/domain/family/member/name
    TimePoint data_time{};              // source timestamp (event_time for history, recv_time for param)
    TimePoint recv_time{};              // when the subscriber received it
    uint32_t dim_x_r = 0, dim_y_r = 0, dim_x_w = 0, dim_y_w = 0;
    Values value_r, value_w;
    std::string text;                   // error description (Error) or history event name (History)
    std::shared_ptr<const ParamInfo> param;  // Param only
    uint64_t wal_seq = 0;               // position in the write-ahead log (0: not logged); not compared

    bool types_known() const {
        return is_supported_type(data_type) && data_format >= 0 && data_format <= 2 && write_type >= 0 &&
               write_type <= 3;
    }
    // Approximate memory footprint, used for spool accounting and statistics.
    std::size_t approx_bytes() const;
};

bool operator==(const Record &a, const Record &b);

}  // namespace hdbbench
