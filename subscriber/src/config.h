// SPDX-License-Identifier: Apache-2.0
// Parsing of the LibConfiguration property (key=value lines, HDB++ keys plus ours) and of the
// AttributeList lines (tango://host:port/d/f/m/attr;strategy=RUN|SHUTDOWN;ttl=<hours>).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace hdbbench {

class ConfigError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// overflow: the disk spool takes records only when memory is full (or records are spooled already).
// write_ahead: every record is also appended to a log in spool_dir before it is queued.
enum class SpoolMode { Overflow = 0, WriteAhead = 1 };

// The common settings; a writer's own keys (connect_string, ignore_duplicates, ...) are parsed by
// that writer from `raw` (writer_registry.h).
struct LibConfig {
    // The chosen writer's registered name (timescaledb, mysql, ...): from `backend`, else `libname`,
    // else the default writer. Set by parse.
    std::string backend;
    std::string libname;
    std::string host = "127.0.0.1";
    int port = 0;                 // 0: backend default
    std::string user, password, dbname;
    std::size_t batch_size = 1000;
    // HDB++ strict mode (ours): att_conf rows are created only by AttributeAdd (its `add` event);
    // events of any other attribute missing from att_conf are refused, as hdbpp-es refuses them.
    bool hdbpp_strict = false;
    std::string logging_level = "error";
    std::chrono::milliseconds flush_interval{10};  // short: under load batches fill anyway; idle, latency wins
    std::size_t queue_capacity = 200000;
    std::string spool_dir;        // empty: no disk spool (memory only)
    std::uint64_t spool_limit_mb = 1024;
    SpoolMode spool_mode = SpoolMode::Overflow;
    std::chrono::milliseconds spool_sync_ms{100};  // write_ahead: flush+fsync period (0: every record)
    std::chrono::milliseconds reconnect_min{250};
    std::chrono::milliseconds reconnect_max{30000};
    // A contestant that fails on purpose (ours; off by default): a batch whose connection was lost is
    // dropped, counted as rejected rows (DbErrorNumber), instead of kept and written again once
    // reconnected. The fault trials' accounting must then blame the subscriber, not replication.
    bool drop_batch_on_lost_connection = false;
    // Writer rate cap in data/error events per second (ours; 0: none): a subscriber slow on purpose,
    // the contestant that the tests of the saturation verdicts expect to fail (rate_cap.h).
    std::uint64_t max_events_per_s = 0;
    // ZMQ_SNDHWM of Tango's event consumer's SUB sockets (0: unlimited). cppTango sets 10,000, and libzmq
    // silently drops the subscriptions replayed to a newly connected device server beyond it; see
    // event_consumer_hwm.h. Process-wide: it applies when the consumer is created (first subscription).
    std::uint32_t event_sub_send_hwm = 0;
    // The subscription watchdog (AttributeRegistry::resubscribe_silent): off by default, as a
    // re-subscription reads the attribute again (one more initial-value event).
    bool resubscribe_silent = false;
    // Port of the Prometheus endpoint GET /metrics on 127.0.0.1 (metrics_server.h); 0: none.
    std::uint16_t metrics_port = 0;
    std::map<std::string, std::string> raw;  // every key as given

    // Parse key=value lines; blank lines and lines starting with '#' are ignored. The writer is
    // resolved through the writer registry, which also checks every writer's own keys.
    // Throws ConfigError on a malformed line, a bad value or an unknown backend.
    static LibConfig parse(const std::vector<std::string> &lines);
    // Whether key (lower case) is one of the common keys parsed here rather than by a writer.
    static bool is_common_key(const std::string &key);
};

// Value parsers of the key tables: they throw ConfigError naming the key.
bool parse_bool(const std::string &key, const std::string &v);
std::uint64_t parse_uint(const std::string &key, const std::string &v, std::uint64_t min_value,
                         std::uint64_t max_value = std::numeric_limits<std::uint64_t>::max());

// A table of LibConfiguration keys: key -> parser/setter into a settings struct. The common keys
// (config.cpp) and each writer's own keys are such tables. A setter throws ConfigError naming its
// key on a bad value (parse_bool and parse_uint do).
template <typename Settings>
class KeyTable {
public:
    using Setter = std::function<void(Settings &, const std::string &key, const std::string &value)>;

    KeyTable(std::initializer_list<std::pair<const std::string, Setter>> entries) : setters_(entries) {}

    // Applies one key=value to s; false when the key is not in this table (key in lower case).
    bool apply(Settings &s, const std::string &key, const std::string &value) const {
        const auto it = setters_.find(key);
        if (it == setters_.end()) return false;
        it->second(s, key, value);
        return true;
    }
    // Settings from defaults and the keys of this table that `raw` holds.
    Settings parse(const std::map<std::string, std::string> &raw) const {
        Settings s{};
        for (const auto &[key, setter] : setters_) {
            const auto it = raw.find(key);
            if (it != raw.end()) setter(s, key, it->second);
        }
        return s;
    }
    bool has(const std::string &key) const { return setters_.count(key) > 0; }
    std::vector<std::string> keys() const {
        std::vector<std::string> k;
        for (const auto &kv : setters_) k.push_back(kv.first);
        return k;
    }

private:
    std::map<std::string, Setter> setters_;
};

struct AttributeSpec {
    std::string name;                     // normalised full name, lower case
    std::vector<std::string> strategy;    // contexts, upper case; empty: default strategy
    std::uint32_t ttl_hours = 0;
    // Back to the property line form.
    std::string to_line() const;
};

// Parse one AttributeList line. Throws ConfigError.
AttributeSpec parse_attribute_line(const std::string &line);

struct NameParts {
    std::string cs_name;  // host:port ('' when the name has none)
    std::string domain, family, member, name;
    std::string device() const { return domain + "/" + family + "/" + member; }
};
// Split tango://host:port/d/f/m/a (or d/f/m/a). Throws ConfigError when it is not 4 parts.
NameParts split_attribute_name(const std::string &full);
// Lower-case the name and add tango://<default_cs>/ when no host is given.
std::string normalise_attribute_name(const std::string &name, const std::string &default_cs = "");

std::string to_lower(std::string s);
std::string to_upper(std::string s);
std::string trim(const std::string &s);
std::vector<std::string> split(const std::string &s, char sep);

}  // namespace hdbbench
