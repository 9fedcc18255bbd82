// SPDX-License-Identifier: Apache-2.0
// The `influxdb` backend, a what-if engine (no HDB++ library writes InfluxDB): InfluxDB 1.6's HTTP API,
// line protocol POSTed with libcurl, one request per batch for the events (and one for configuration
// records, to the `conf` retention policy). The layout is hdbbench/backends/influxdb/tables.py's:
//
//   att_<scalar|array>_<type>,att_conf_id=<id> quality=<q>i[,value_r=...][,value_w=...][,error_desc="..."] <µs>
//   att_conf,att_name=<name> att_conf_id=<id>i,data_type="...",tango_type=<t>i,format=<f>i,write_type=<w>i 0
//   att_history,att_conf_id=<id> event="<event>" <µs>
//   att_parameter,att_conf_id=<id> label="...",... <µs>
//
// att_conf_id is FNV-1a 64 of the attribute's name kept to 53 bits (the same function in Python), so
// every writer gives an attribute the same id without asking the server (a collision of two names is
// not checked here: it would cost a query per new attribute; the Python bulk writer refuses one). Scalars are typed fields;
// a NaN/±Inf float goes to value_*_special as its word (line protocol has no literal for it); an array
// is a string field holding its JSON text (an image as rows). DevULong64 and DevEncoded are rejected:
// InfluxDB 1.6 cannot hold them.
//
// Duplicates: InfluxDB replaces a point of the same series and time, so a second event of an attribute
// at the same microsecond would overwrite the first. Within a batch dedup_batch drops it (an error
// event moves back a microsecond); across batches an event at its attribute's last stored time is
// counted as a duplicate and not sent (a re-subscription's first value). Retried batches are idempotent.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "writer.h"

namespace hdbbench {

struct InfluxSettings {
    long timeout_ms = 30000;  // one HTTP request, connection included
    static InfluxSettings parse(const LibConfig &cfg);
};

// FNV-1a 64 of the name, kept to 53 bits, never 0 (hdbbench.backends.influxdb.tables.att_conf_id).
std::int64_t influx_att_conf_id(const std::string &att_name);
// A string field value: quoted, `\` and `"` escaped.
std::string influx_string_field(const std::string &text);
// The measurement of a record's type and format (att_scalar_devdouble, att_array_devlong).
std::string influx_measurement(int type, int format);
// Why InfluxDB 1.6 cannot hold a type, or empty.
std::string influx_cannot_hold(int type);
// The line of a data or error record (its type holdable).
std::string influx_event_line(const Record &r);
// The JSON text of an array value (NaN, Infinity, -Infinity as JavaScript's words; an image as rows).
std::string influx_array_json(int type, int format, const Values &v, std::uint32_t dim_x, std::uint32_t dim_y);

class InfluxWriter : public Writer {
public:
    InfluxWriter(LibConfig cfg, InfluxSettings settings);
    ~InfluxWriter() override;
    InfluxWriter(const InfluxWriter &) = delete;
    InfluxWriter &operator=(const InfluxWriter &) = delete;

    std::string name() const override { return "influxdb"; }
    void connect() override;  // GET /ping; throws DbError(connection lost)
    bool connected() const override { return curl_ != nullptr; }
    void disconnect() override;
    WriteResult write_batch(std::vector<Record> &batch) override;

private:
    struct Response {
        long status = 0;
        std::string body;
    };
    // One request; throws DbError(connection lost) when the server cannot be reached or fails (5xx,
    // authentication); returns 2xx and 4xx answers.
    Response request(const std::string &path, const std::string &body);
    // POST lines (to the data retention policy, or `rp`); a 4xx answer returns false and its message.
    bool post(const std::vector<std::string> &lines, const std::string &rp, std::string &error);
    // Whether att_conf holds the attribute (strict mode's lookup of attributes this process did not add).
    bool stored_conf(const std::string &att_name);
    std::string conf_line(const Record &r) const;
    std::string history_line(const std::string &att_name, const std::string &event, TimePoint at) const;
    std::string param_line(const Record &r) const;

    LibConfig cfg_;
    InfluxSettings settings_;
    std::string base_url_;
    void *curl_ = nullptr;  // CURL*
    std::unordered_set<std::string> registered_;            // attributes whose att_conf point is stored
    std::unordered_map<std::string, std::int64_t> last_us_;  // last stored data time per attribute
};

}  // namespace hdbbench
