// SPDX-License-Identifier: Apache-2.0
#include "config.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "rate_cap.h"
#include "writer_registry.h"

namespace hdbbench {

std::string to_lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}
std::string to_upper(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return s;
}
std::string trim(const std::string &s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return {};
    const auto e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
}
std::vector<std::string> split(const std::string &s, char sep) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
        if (c == sep) {
            out.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    out.push_back(cur);
    return out;
}

bool parse_bool(const std::string &key, const std::string &v) {
    const std::string l = to_lower(v);
    if (l == "1" || l == "true" || l == "yes" || l == "on") return true;
    if (l == "0" || l == "false" || l == "no" || l == "off") return false;
    throw ConfigError("LibConfiguration: " + key + " must be 0 or 1, got '" + v + "'");
}

std::uint64_t parse_uint(const std::string &key, const std::string &v, std::uint64_t min_value,
                         std::uint64_t max_value) {
    std::size_t pos = 0;
    unsigned long long x = 0;
    try {
        if (v.empty() || v[0] == '-') throw std::invalid_argument("negative");
        x = std::stoull(v, &pos);
    } catch (const std::exception &) {
        throw ConfigError("LibConfiguration: " + key + " must be an unsigned integer, got '" + v + "'");
    }
    if (pos != v.size()) throw ConfigError("LibConfiguration: " + key + " must be an unsigned integer, got '" + v + "'");
    if (x < min_value)
        throw ConfigError("LibConfiguration: " + key + " must be >= " + std::to_string(min_value) + ", got '" + v + "'");
    if (x > max_value)
        throw ConfigError("LibConfiguration: " + key + " must be <= " + std::to_string(max_value) + ", got '" + v + "'");
    return x;
}

namespace {

using std::chrono::milliseconds;
using Keys = KeyTable<LibConfig>;

// The common keys (HDB++'s and ours); a writer's own keys are in its file's table.
const Keys &common_keys() {
    static const Keys table{
        // Resolved through the writer registry once every line is read: libname may come later.
        {"backend", [](LibConfig &, const std::string &, const std::string &) {}},
        {"libname", [](LibConfig &c, const std::string &, const std::string &v) { c.libname = v; }},
        {"host", [](LibConfig &c, const std::string &, const std::string &v) { c.host = v; }},
        {"port", [](LibConfig &c, const std::string &k, const std::string &v) {
             c.port = static_cast<int>(parse_uint(k, v, 1, 65535));
         }},
        {"user", [](LibConfig &c, const std::string &, const std::string &v) { c.user = v; }},
        {"password", [](LibConfig &c, const std::string &, const std::string &v) { c.password = v; }},
        {"dbname", [](LibConfig &c, const std::string &, const std::string &v) { c.dbname = v; }},
        {"batch_size", [](LibConfig &c, const std::string &k, const std::string &v) { c.batch_size = parse_uint(k, v, 1); }},
        {"hdbpp_strict", [](LibConfig &c, const std::string &k, const std::string &v) { c.hdbpp_strict = parse_bool(k, v); }},
        {"logging_level", [](LibConfig &c, const std::string &, const std::string &v) {
             const std::string l = to_lower(v);
             static const char *ok[] = {"error", "warning", "info", "debug", "trace", "disabled"};
             if (std::find(std::begin(ok), std::end(ok), l) == std::end(ok))
                 throw ConfigError("LibConfiguration: bad logging_level '" + v + "'");
             c.logging_level = l;
         }},
        {"flush_interval_ms", [](LibConfig &c, const std::string &k, const std::string &v) {
             c.flush_interval = milliseconds(parse_uint(k, v, 1));
         }},
        {"queue_capacity", [](LibConfig &c, const std::string &k, const std::string &v) {
             c.queue_capacity = parse_uint(k, v, 1);
         }},
        {"spool_dir", [](LibConfig &c, const std::string &, const std::string &v) { c.spool_dir = v; }},
        {"spool_limit_mb", [](LibConfig &c, const std::string &k, const std::string &v) {
             c.spool_limit_mb = parse_uint(k, v, 0);
         }},
        {"spool_mode", [](LibConfig &c, const std::string &, const std::string &v) {
             const std::string m = to_lower(v);
             if (m == "overflow") c.spool_mode = SpoolMode::Overflow;
             else if (m == "write_ahead") c.spool_mode = SpoolMode::WriteAhead;
             else throw ConfigError("LibConfiguration: bad spool_mode '" + v + "' (overflow|write_ahead)");
         }},
        {"spool_sync_ms", [](LibConfig &c, const std::string &k, const std::string &v) {
             c.spool_sync_ms = milliseconds(parse_uint(k, v, 0, 3600000));
         }},
        {"reconnect_min_ms", [](LibConfig &c, const std::string &k, const std::string &v) {
             c.reconnect_min = milliseconds(parse_uint(k, v, 1));
         }},
        {"reconnect_max_ms", [](LibConfig &c, const std::string &k, const std::string &v) {
             c.reconnect_max = milliseconds(parse_uint(k, v, 1));
         }},
        {"drop_batch_on_lost_connection", [](LibConfig &c, const std::string &k, const std::string &v) {
             c.drop_batch_on_lost_connection = parse_bool(k, v);
         }},
        {"max_events_per_s", [](LibConfig &c, const std::string &k, const std::string &v) {
             c.max_events_per_s = parse_uint(k, v, 0, RateCap::kMaxEventsPerS);
         }},
        {"resubscribe_silent", [](LibConfig &c, const std::string &k, const std::string &v) {
             c.resubscribe_silent = parse_bool(k, v);
         }},
        {"metrics_port", [](LibConfig &c, const std::string &k, const std::string &v) {
             c.metrics_port = static_cast<std::uint16_t>(parse_uint(k, v, 0, 65535));  // 0: no endpoint
         }},
        // libzmq takes the high-water mark as an int.
        {"event_sub_send_hwm", [](LibConfig &c, const std::string &k, const std::string &v) {
             c.event_sub_send_hwm =
                 static_cast<std::uint32_t>(parse_uint(k, v, 0, static_cast<std::uint64_t>(std::numeric_limits<int>::max())));
         }},
    };
    return table;
}

}  // namespace

bool LibConfig::is_common_key(const std::string &key) { return common_keys().has(key); }

LibConfig LibConfig::parse(const std::vector<std::string> &lines) {
    LibConfig c;
    for (const auto &raw_line : lines) {
        const std::string line = trim(raw_line);
        if (line.empty() || line[0] == '#') continue;
        const auto eq = line.find('=');
        if (eq == std::string::npos || eq == 0)
            throw ConfigError("LibConfiguration: expected key=value, got '" + line + "'");
        const std::string key = to_lower(trim(line.substr(0, eq)));
        const std::string v = trim(line.substr(eq + 1));
        c.raw[key] = v;
        // Writers' keys are parsed by the registry below; other keys (log_file, log_console,
        // log_syslog, ...) are accepted and kept in raw.
        common_keys().apply(c, key, v);
    }
    if (c.reconnect_max < c.reconnect_min) c.reconnect_max = c.reconnect_min;
    if (c.spool_mode == SpoolMode::WriteAhead && c.spool_dir.empty())
        throw ConfigError("LibConfiguration: spool_mode=write_ahead needs spool_dir");
    c.backend = WriterRegistry::global().resolve(c).name;
    return c;
}

std::string normalise_attribute_name(const std::string &name, const std::string &default_cs) {
    std::string n = to_lower(trim(name));
    if (n.rfind("tango://", 0) == 0) return n;
    if (default_cs.empty()) return n;
    return "tango://" + to_lower(default_cs) + "/" + n;
}

NameParts split_attribute_name(const std::string &full) {
    NameParts p;
    std::string rest = full;
    if (rest.rfind("tango://", 0) == 0) {
        rest = rest.substr(8);
        const auto slash = rest.find('/');
        if (slash == std::string::npos) throw ConfigError("bad attribute name '" + full + "'");
        p.cs_name = rest.substr(0, slash);
        rest = rest.substr(slash + 1);
    }
    const auto parts = split(rest, '/');
    if (parts.size() != 4) throw ConfigError("bad attribute name '" + full + "' (expected domain/family/member/name)");
    for (const auto &x : parts)
        if (x.empty()) throw ConfigError("bad attribute name '" + full + "'");
    p.domain = parts[0];
    p.family = parts[1];
    p.member = parts[2];
    p.name = parts[3];
    return p;
}

AttributeSpec parse_attribute_line(const std::string &line) {
    const auto fields = split(trim(line), ';');
    AttributeSpec a;
    a.name = to_lower(trim(fields.at(0)));
    if (a.name.empty()) throw ConfigError("empty attribute name in '" + line + "'");
    split_attribute_name(a.name);  // validates
    for (std::size_t i = 1; i < fields.size(); ++i) {
        const std::string f = trim(fields[i]);
        if (f.empty()) continue;
        const auto eq = f.find('=');
        if (eq == std::string::npos) throw ConfigError("expected key=value in '" + line + "'");
        const std::string k = to_lower(trim(f.substr(0, eq)));
        const std::string v = trim(f.substr(eq + 1));
        if (k == "strategy") {
            for (const auto &ctx : split(v, '|')) {
                const std::string c = to_upper(trim(ctx));
                if (!c.empty()) a.strategy.push_back(c);
            }
        } else if (k == "ttl") {
            try {
                std::size_t pos = 0;
                const long t = std::stol(v, &pos);
                if (pos != v.size() || t < 0) throw std::invalid_argument("ttl");
                a.ttl_hours = static_cast<std::uint32_t>(t);
            } catch (const std::exception &) {
                throw ConfigError("bad ttl in '" + line + "'");
            }
        }
        // unknown keys are ignored, as hdbpp-es does
    }
    return a;
}

std::string AttributeSpec::to_line() const {
    std::string s = name;
    if (!strategy.empty()) {
        s += ";strategy=";
        for (std::size_t i = 0; i < strategy.size(); ++i) {
            if (i) s += '|';
            s += strategy[i];
        }
    }
    if (ttl_hours) s += ";ttl=" + std::to_string(ttl_hours);
    return s;
}

}  // namespace hdbbench
