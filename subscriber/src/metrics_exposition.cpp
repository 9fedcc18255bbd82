// SPDX-License-Identifier: Apache-2.0
#include "metrics_exposition.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>

namespace hdbbench {

namespace {

enum class Origin { HDBPP, HDBPP_NEWER, OURS };

std::string escape_label(const std::string &v) {
    std::string out;
    for (char c : v) {
        if (c == '\\' || c == '"') out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out;
}

std::string escape_help(const std::string &v) {
    std::string out;
    for (char c : v) {
        if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}

// Shortest text that reads back as the same double, so a scraped value equals the attribute's.
std::string format_double(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, res.ptr);
}

class Exposition {
public:
    Exposition(const std::string &device, bool strict)
        : label_("{device=\"" + escape_label(device) + "\"}"), strict_(strict) {}

    void add(Origin origin, const char *name, const char *unit, const char *description, const std::string &value) {
        if (strict_ && origin == Origin::OURS) return;
        const std::string metric = metric_name(name, origin == Origin::OURS);
        std::string help = *description ? description : name;
        if (*unit) help += std::string(" (") + unit + ")";
        out_ += "# HELP " + metric + " " + escape_help(help) + "\n";
        out_ += "# TYPE " + metric + " gauge\n";  // gauges: ResetStatistics and restarts reset them
        out_ += metric + label_ + " " + value + "\n";
    }
    std::string take() { return std::move(out_); }

private:
    std::string label_;
    bool strict_;
    std::string out_;
};

// The value as the Tango attribute of that kind reads it (HdbEventSubscriber::set_value_<kind>).
std::string long_value(std::uint64_t v) { return std::to_string(std::min<std::uint64_t>(v, INT32_MAX)); }
std::string long64_value(std::uint64_t v) { return std::to_string(static_cast<std::int64_t>(v)); }
std::string double_value(double v) { return format_double(v); }
std::string boolean_value(bool v) { return v ? "1" : "0"; }

}  // namespace

std::string snake_case(const std::string &camel) {
    auto upper = [](char c) { return std::isupper(static_cast<unsigned char>(c)) != 0; };
    auto lower_or_digit = [](char c) {
        return std::islower(static_cast<unsigned char>(c)) != 0 || std::isdigit(static_cast<unsigned char>(c)) != 0;
    };
    std::string out;
    for (std::size_t i = 0; i < camel.size(); ++i) {
        const char c = camel[i];
        if (i > 0 && upper(c)) {
            const char prev = camel[i - 1];
            const bool next_lower = i + 1 < camel.size() && std::islower(static_cast<unsigned char>(camel[i + 1]));
            if (lower_or_digit(prev) || (upper(prev) && next_lower)) out += '_';
        }
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

std::string metric_name(const std::string &statistic, bool ours) {
    return (ours ? "hdbbench_" : "hdbpp_") + snake_case(statistic);
}

std::string render_metrics(const ArchiverSnapshot &s, const std::string &device, bool strict) {
    Exposition out(device, strict);
    // One macro per kind; spectra are skipped without evaluating their value.
#define HDB_METRIC_SCALAR(name, origin, unit, description, text) \
    out.add(Origin::origin, #name, unit, description, text);
#define HDB_METRIC_LONG(name, origin, unit, description, value) \
    HDB_METRIC_SCALAR(name, origin, unit, description, long_value(value))
#define HDB_METRIC_LONG64(name, origin, unit, description, value) \
    HDB_METRIC_SCALAR(name, origin, unit, description, long64_value(value))
#define HDB_METRIC_DOUBLE(name, origin, unit, description, value) \
    HDB_METRIC_SCALAR(name, origin, unit, description, double_value(value))
#define HDB_METRIC_BOOLEAN(name, origin, unit, description, value) \
    HDB_METRIC_SCALAR(name, origin, unit, description, boolean_value(value))
#define HDB_METRIC_STRINGS(name, origin, unit, description, value)
#define HDB_METRIC_DOUBLES(name, origin, unit, description, value)
#define HDB_METRIC_LONGS(name, origin, unit, description, value)
#define HDB_METRIC_ULONGS(name, origin, unit, description, value)
#define HDB_STATISTIC(name, origin, kind, unit, description, value) \
    HDB_METRIC_##kind(name, origin, unit, description, value)
#include "statistics.def"
#undef HDB_STATISTIC
#undef HDB_METRIC_SCALAR
#undef HDB_METRIC_LONG
#undef HDB_METRIC_LONG64
#undef HDB_METRIC_DOUBLE
#undef HDB_METRIC_BOOLEAN
#undef HDB_METRIC_STRINGS
#undef HDB_METRIC_DOUBLES
#undef HDB_METRIC_LONGS
#undef HDB_METRIC_ULONGS
    return out.take();
}

}  // namespace hdbbench
