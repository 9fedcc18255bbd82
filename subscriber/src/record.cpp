// SPDX-License-Identifier: Apache-2.0
#include "record.h"

namespace hdbbench {

bool is_supported_type(int type) { return !type_suffix(type).empty(); }

std::string type_suffix(int type) {
    switch (type) {
        case kDevBoolean: return "devboolean";
        case kDevShort: return "devshort";
        case kDevLong: return "devlong";
        case kDevFloat: return "devfloat";
        case kDevDouble: return "devdouble";
        case kDevUShort: return "devushort";
        case kDevULong: return "devulong";
        case kDevString: return "devstring";
        case kDevState: return "devstate";
        case kDevUChar: return "devuchar";
        case kDevLong64: return "devlong64";
        case kDevULong64: return "devulong64";
        case kDevEncoded: return "devencoded";
        case kDevEnum: return "devenum";
        default: return {};
    }
}

std::string type_name(int type) {
    std::string s = type_suffix(type);
    if (s.empty()) return s;
    std::string out = "DEV_";
    for (std::size_t i = 3; i < s.size(); ++i)
        out += (s[i] >= 'a' && s[i] <= 'z') ? static_cast<char>(s[i] - 'a' + 'A') : s[i];
    return out;
}

ValueClass value_class(int type) {
    switch (type) {
        case kDevULong64: return ValueClass::UInt;
        case kDevFloat:
        case kDevDouble: return ValueClass::Real;
        case kDevString:
        case kDevEncoded: return ValueClass::Text;
        default: return ValueClass::Int;
    }
}

bool ParamInfo::operator==(const ParamInfo &o) const {
    return label == o.label && unit == o.unit && standard_unit == o.standard_unit &&
           display_unit == o.display_unit && format == o.format && archive_rel_change == o.archive_rel_change &&
           archive_abs_change == o.archive_abs_change && archive_period == o.archive_period &&
           description == o.description && enum_labels == o.enum_labels;
}

namespace {
std::size_t values_bytes(const Values &v) {
    return std::visit([](const auto &x) -> std::size_t {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) return 0;
        else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
            std::size_t n = 0;
            for (const auto &s : x) n += s.size() + sizeof(std::string);
            return n;
        } else return x.size() * sizeof(typename T::value_type);
    }, v);
}
}  // namespace

std::size_t Record::approx_bytes() const {
    std::size_t n = sizeof(Record) + att_name.size() + text.size() + values_bytes(value_r) + values_bytes(value_w);
    if (param) n += sizeof(ParamInfo) + param->description.size() + param->label.size();
    return n;
}

bool operator==(const Record &a, const Record &b) {
    const bool params_equal = (!a.param && !b.param) || (a.param && b.param && *a.param == *b.param);
    return a.kind == b.kind && a.data_type == b.data_type && a.data_format == b.data_format &&
           a.write_type == b.write_type && a.quality == b.quality && a.ttl_hours == b.ttl_hours &&
           a.att_name == b.att_name && a.data_time == b.data_time && a.recv_time == b.recv_time &&
           a.dim_x_r == b.dim_x_r && a.dim_y_r == b.dim_y_r && a.dim_x_w == b.dim_x_w && a.dim_y_w == b.dim_y_w &&
           a.value_r == b.value_r && a.value_w == b.value_w && a.text == b.text && params_equal;
}

std::size_t element_count(int type, const Values &v) {
    switch (value_class(type)) {
        case ValueClass::Int: return std::holds_alternative<std::vector<std::int64_t>>(v) ? values_size(v) : 0;
        case ValueClass::UInt: return std::holds_alternative<std::vector<std::uint64_t>>(v) ? values_size(v) : 0;
        case ValueClass::Real: return std::holds_alternative<std::vector<double>>(v) ? values_size(v) : 0;
        case ValueClass::Text:
            if (!std::holds_alternative<std::vector<std::string>>(v)) return 0;
            return type == kDevEncoded ? values_size(v) / 2 : values_size(v);
    }
    return 0;
}

}  // namespace hdbbench
