// SPDX-License-Identifier: Apache-2.0
#include "config.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "rate_cap.h"

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

namespace {
bool parse_bool(const std::string &key, const std::string &v) {
    const std::string l = to_lower(v);
    if (l == "1" || l == "true" || l == "yes" || l == "on") return true;
    if (l == "0" || l == "false" || l == "no" || l == "off") return false;
    throw ConfigError("LibConfiguration: " + key + " must be 0 or 1, got '" + v + "'");
}
std::uint64_t parse_uint(const std::string &key, const std::string &v, std::uint64_t min_value) {
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
    return x;
}
// libpq conninfo value quoting: single quotes, backslash-escaped ' and backslash.
std::string pq_quote(const std::string &v) {
    std::string out = "'";
    for (char c : v) {
        if (c == '\'' || c == '\\') out += '\\';
        out += c;
    }
    return out + "'";
}
}  // namespace

std::string backend_name(Backend b) {
    switch (b) {
        case Backend::TimescaleDB: return "timescaledb";
        case Backend::PostgreSQL: return "postgresql";
        case Backend::MySQL: return "mysql";
        case Backend::Null: return "null";
    }
    return "?";
}

LibConfig LibConfig::parse(const std::vector<std::string> &lines) {
    LibConfig c;
    bool backend_given = false;
    for (const auto &raw_line : lines) {
        const std::string line = trim(raw_line);
        if (line.empty() || line[0] == '#') continue;
        const auto eq = line.find('=');
        if (eq == std::string::npos || eq == 0)
            throw ConfigError("LibConfiguration: expected key=value, got '" + line + "'");
        const std::string key = to_lower(trim(line.substr(0, eq)));
        const std::string v = trim(line.substr(eq + 1));
        c.raw[key] = v;
        if (key == "backend") {
            const std::string b = to_lower(v);
            if (b == "timescaledb" || b == "timescale") c.backend = Backend::TimescaleDB;
            else if (b == "postgresql" || b == "postgres" || b == "pg") c.backend = Backend::PostgreSQL;
            else if (b == "mysql" || b == "mariadb") c.backend = Backend::MySQL;
            else if (b == "null" || b == "none") c.backend = Backend::Null;
            else throw ConfigError("LibConfiguration: unknown backend '" + v + "' (timescaledb|postgresql|mysql|null)");
            backend_given = true;
        } else if (key == "libname") {
            c.libname = v;
        } else if (key == "connect_string") {
            c.connect_string = v;
        } else if (key == "host") {
            c.host = v;
        } else if (key == "port") {
            c.port = static_cast<int>(parse_uint(key, v, 1));
            if (c.port > 65535) throw ConfigError("LibConfiguration: port out of range: " + v);
        } else if (key == "user") {
            c.user = v;
        } else if (key == "password") {
            c.password = v;
        } else if (key == "dbname") {
            c.dbname = v;
        } else if (key == "batch_size") {
            c.batch_size = parse_uint(key, v, 1);
        } else if (key == "ignore_duplicates") {
            c.ignore_duplicates = parse_bool(key, v);
        } else if (key == "lightschema" || key == "json_array") {
            // libhdb++mysql's layout switches: the MySQL writer reads the layout from the catalog,
            // so they are checked (libhdb++mysql needs integers) and otherwise ignored.
            parse_bool(key, v);
        } else if (key == "hdbpp_strict") {
            c.hdbpp_strict = parse_bool(key, v);
        } else if (key == "logging_level") {
            const std::string l = to_lower(v);
            static const char *ok[] = {"error", "warning", "info", "debug", "trace", "disabled"};
            if (std::find(std::begin(ok), std::end(ok), l) == std::end(ok))
                throw ConfigError("LibConfiguration: bad logging_level '" + v + "'");
            c.logging_level = l;
        } else if (key == "flush_interval_ms") {
            c.flush_interval = std::chrono::milliseconds(parse_uint(key, v, 1));
        } else if (key == "queue_capacity") {
            c.queue_capacity = parse_uint(key, v, 1);
        } else if (key == "spool_dir") {
            c.spool_dir = v;
        } else if (key == "spool_limit_mb") {
            c.spool_limit_mb = parse_uint(key, v, 0);
        } else if (key == "spool_mode") {
            const std::string m = to_lower(v);
            if (m == "overflow") c.spool_mode = SpoolMode::Overflow;
            else if (m == "write_ahead") c.spool_mode = SpoolMode::WriteAhead;
            else throw ConfigError("LibConfiguration: bad spool_mode '" + v + "' (overflow|write_ahead)");
        } else if (key == "spool_sync_ms") {
            const std::uint64_t ms = parse_uint(key, v, 0);
            if (ms > 3600000) throw ConfigError("LibConfiguration: spool_sync_ms must be <= 3600000, got '" + v + "'");
            c.spool_sync_ms = std::chrono::milliseconds(ms);
        } else if (key == "reconnect_min_ms") {
            c.reconnect_min = std::chrono::milliseconds(parse_uint(key, v, 1));
        } else if (key == "reconnect_max_ms") {
            c.reconnect_max = std::chrono::milliseconds(parse_uint(key, v, 1));
        } else if (key == "max_events_per_s") {
            c.max_events_per_s = parse_uint(key, v, 0);
            if (c.max_events_per_s > RateCap::kMaxEventsPerS)
                throw ConfigError("LibConfiguration: max_events_per_s must be <= " +
                                  std::to_string(RateCap::kMaxEventsPerS) + ", got '" + v + "'");
        } else if (key == "metrics_port") {
            const std::uint64_t mp = parse_uint(key, v, 0);
            if (mp > 65535) throw ConfigError("LibConfiguration: metrics_port must be <= 65535 (0: off), got '" + v + "'");
            c.metrics_port = static_cast<std::uint16_t>(mp);
        } else if (key == "resubscribe_silent") {
            c.resubscribe_silent = parse_bool(key, v);
        } else if (key == "event_sub_send_hwm") {
            // libzmq takes the high-water mark as an int.
            const std::uint64_t hwm = parse_uint(key, v, 0);
            if (hwm > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
                throw ConfigError("LibConfiguration: event_sub_send_hwm must be <= " +
                                  std::to_string(std::numeric_limits<int>::max()) + ", got '" + v + "'");
            c.event_sub_send_hwm = static_cast<std::uint32_t>(hwm);
        }
        // Other keys (log_file, log_console, log_syslog, log_file_name, ...) are accepted and kept in raw.
    }
    if (!backend_given && !c.libname.empty()) {
        const std::string l = to_lower(c.libname);
        if (l.find("mysql") != std::string::npos || l.find("maria") != std::string::npos) c.backend = Backend::MySQL;
        else if (l.find("postgres") != std::string::npos) c.backend = Backend::PostgreSQL;
    }
    if (c.reconnect_max < c.reconnect_min) c.reconnect_max = c.reconnect_min;
    if (c.spool_mode == SpoolMode::WriteAhead && c.spool_dir.empty())
        throw ConfigError("LibConfiguration: spool_mode=write_ahead needs spool_dir");
    if (c.backend == Backend::MySQL && c.dbname.empty() && c.connect_string.empty())
        throw ConfigError("LibConfiguration: the mysql backend needs dbname");
    return c;
}

std::string LibConfig::pg_conninfo() const {
    if (!connect_string.empty()) return connect_string;
    std::string s;
    auto add = [&s](const char *k, const std::string &v) {
        if (v.empty()) return;
        if (!s.empty()) s += ' ';
        s += k;
        s += '=';
        s += pq_quote(v);
    };
    add("host", host);
    add("port", port ? std::to_string(port) : std::string());
    add("user", user);
    add("password", password);
    add("dbname", dbname);
    return s;
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
