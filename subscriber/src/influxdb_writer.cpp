// SPDX-License-Identifier: Apache-2.0
#include "influxdb_writer.h"

#include <curl/curl.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <mutex>

#include "writer_registry.h"

namespace hdbbench {

namespace {
const KeyTable<InfluxSettings> &influx_keys() {
    static const KeyTable<InfluxSettings> table{
        {"influxdb_timeout_ms", [](InfluxSettings &s, const std::string &k, const std::string &v) {
             s.timeout_ms = static_cast<long>(parse_uint(k, v, 1, 3600000));
         }},
    };
    return table;
}

WriterEntry influx_entry() {
    WriterEntry e;
    e.name = "influxdb";
    e.aliases = {"influx"};
    bind_keys(e, influx_keys());
    e.check_chosen = [](const LibConfig &cfg) {
        if (cfg.dbname.empty()) throw ConfigError("LibConfiguration: dbname is required by the influxdb writer");
        if (cfg.port <= 0) throw ConfigError("LibConfiguration: port (of the InfluxDB HTTP API) is required");
    };
    e.create = [](const LibConfig &cfg) { return std::make_unique<InfluxWriter>(cfg, InfluxSettings::parse(cfg)); };
    return e;
}
const WriterRegistrar registrar{influx_entry()};

std::once_flag curl_once;

std::size_t collect(char *data, std::size_t size, std::size_t n, void *out) {
    static_cast<std::string *>(out)->append(data, size * n);
    return size * n;
}

std::string url_encode(const std::string &s) {
    static const char *hex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

// The shortest-enough text that reads back as the same double (17 significant digits).
std::string real_text(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return buf;
}

const char *special_word(double x) { return std::isnan(x) ? "NaN" : (x > 0 ? "Infinity" : "-Infinity"); }

std::string json_element(int type, const Values &v, std::size_t i) {
    switch (value_class(type)) {
        case ValueClass::Int: {
            const std::int64_t x = std::get<std::vector<std::int64_t>>(v)[i];
            if (type == kDevBoolean) return x ? "true" : "false";
            return std::to_string(x);
        }
        case ValueClass::UInt: return std::to_string(std::get<std::vector<std::uint64_t>>(v)[i]);
        case ValueClass::Real: {
            const double x = std::get<std::vector<double>>(v)[i];
            return std::isfinite(x) ? real_text(x) : special_word(x);
        }
        case ValueClass::Text: return json_quote(std::get<std::vector<std::string>>(v)[i]);
    }
    return "null";
}

// One side of an event as a field (`value_r=...`), or empty when the side has no value.
std::string value_field(const char *side, const Record &r, const Values &v, std::uint32_t dim_x, std::uint32_t dim_y) {
    const int type = r.data_type;
    if (r.data_format != kScalar) {
        if (std::holds_alternative<std::monostate>(v)) return {};
        return std::string(side) + "=" +
               influx_string_field(influx_array_json(type, r.data_format, v, dim_x, dim_y));
    }
    if (element_count(type, v) == 0) return {};
    switch (value_class(type)) {
        case ValueClass::Int: {
            const std::int64_t x = std::get<std::vector<std::int64_t>>(v)[0];
            if (type == kDevBoolean) return std::string(side) + (x ? "=true" : "=false");
            return std::string(side) + "=" + std::to_string(x) + "i";
        }
        case ValueClass::Real: {
            const double x = std::get<std::vector<double>>(v)[0];
            if (!std::isfinite(x)) return std::string(side) + "_special=" + influx_string_field(special_word(x));
            return std::string(side) + "=" + real_text(x);
        }
        case ValueClass::Text: return std::string(side) + "=" + influx_string_field(std::get<std::vector<std::string>>(v)[0]);
        case ValueClass::UInt: return {};  // refused before (influx_cannot_hold)
    }
    return {};
}

// A tag value: commas, equal signs and spaces escaped (line protocol).
std::string tag_value(const std::string &s) {
    std::string out;
    for (char c : s) {
        if (c == ',' || c == '=' || c == ' ') out += '\\';
        out += c;
    }
    return out;
}

std::int64_t us_of(TimePoint t) { return t.time_since_epoch().count(); }
}  // namespace

InfluxSettings InfluxSettings::parse(const LibConfig &cfg) { return influx_keys().parse(cfg.raw); }

std::int64_t influx_att_conf_id(const std::string &att_name) {
    std::uint64_t h = 0xCBF29CE484222325ull;
    for (unsigned char c : att_name) {
        h ^= c;
        h *= 0x100000001B3ull;
    }
    const auto id = static_cast<std::int64_t>(h & ((std::uint64_t{1} << 53) - 1));
    return id ? id : 1;
}

std::string influx_string_field(const std::string &text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

std::string influx_measurement(int type, int format) {
    return std::string(format == kScalar ? "att_scalar_" : "att_array_") + type_suffix(type);
}

std::string influx_cannot_hold(int type) {
    if (type == kDevULong64) return "InfluxDB 1.6 has no unsigned 64-bit integer (DevULong64 cannot be stored)";
    if (type == kDevEncoded) return "InfluxDB 1.6 string fields hold text only (DevEncoded cannot be stored)";
    return {};
}

std::string influx_array_json(int type, int format, const Values &v, std::uint32_t dim_x, std::uint32_t dim_y) {
    const std::size_t n = element_count(type, v);
    const bool rows = format == kImage && dim_x > 0 && dim_y > 0 && static_cast<std::size_t>(dim_x) * dim_y == n;
    std::string o = "[";
    for (std::size_t i = 0; i < n; ++i) {
        if (rows && i % dim_x == 0) o += i ? ",[" : "[";
        else if (i) o += ',';
        o += json_element(type, v, i);
        if (rows && i % dim_x == dim_x - 1) o += ']';
    }
    return o + "]";
}

std::string influx_event_line(const Record &r) {
    std::string line = influx_measurement(r.data_type, r.data_format) +
                       ",att_conf_id=" + std::to_string(influx_att_conf_id(r.att_name)) +
                       " quality=" + std::to_string(r.quality) + "i";
    if (r.kind == RecordKind::Error) {
        line += ",error_desc=" + influx_string_field(r.text);
    } else {
        for (const std::string &f : {value_field("value_r", r, r.value_r, r.dim_x_r, r.dim_y_r),
                                     value_field("value_w", r, r.value_w, r.dim_x_w, r.dim_y_w)})
            if (!f.empty()) line += "," + f;
    }
    return line + " " + std::to_string(us_of(r.data_time));
}

// ------------------------------------------------------------------------------------- writer

InfluxWriter::InfluxWriter(LibConfig cfg, InfluxSettings settings)
    : cfg_(std::move(cfg)), settings_(settings),
      base_url_("http://" + cfg_.host + ":" + std::to_string(cfg_.port)) {
    std::call_once(curl_once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

InfluxWriter::~InfluxWriter() { disconnect(); }

void InfluxWriter::connect() {
    if (curl_) return;
    curl_ = curl_easy_init();
    if (!curl_) throw DbError("influxdb: curl_easy_init failed", true);
    try {
        const Response ping = request("/ping", {});
        if (ping.status != 204) throw DbError("influxdb: /ping answered " + std::to_string(ping.status), true);
    } catch (...) {
        disconnect();
        throw;
    }
}

void InfluxWriter::disconnect() {
    if (curl_) curl_easy_cleanup(static_cast<CURL *>(curl_));
    curl_ = nullptr;
}

InfluxWriter::Response InfluxWriter::request(const std::string &path, const std::string &body) {
    CURL *c = static_cast<CURL *>(curl_);
    Response res;
    const std::string url = base_url_ + path;
    const std::string credentials = cfg_.user + ":" + cfg_.password;
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, settings_.timeout_ms);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &res.body);
    if (!cfg_.user.empty()) {
        curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
        curl_easy_setopt(c, CURLOPT_USERPWD, credentials.c_str());
    }
    if (path == "/ping" || path.rfind("/query", 0) == 0) {
        curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    } else {
        curl_easy_setopt(c, CURLOPT_POST, 1L);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    }
    const CURLcode rc = curl_easy_perform(c);
    if (rc != CURLE_OK) throw DbError(std::string("influxdb: ") + curl_easy_strerror(rc) + " (" + url + ")", true);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &res.status);
    // Unreachable for now: the server fails (5xx: a full disk, the write cache over its limit) or refuses
    // our account (401/403, a setup error that a retry after reconfiguring can mend). Nothing was stored.
    if (res.status >= 500 || res.status == 401 || res.status == 403)
        throw DbError("influxdb: HTTP " + std::to_string(res.status) + ": " + res.body.substr(0, 300),
                      true);
    return res;
}

bool InfluxWriter::post(const std::vector<std::string> &lines, const std::string &rp, std::string &error) {
    if (lines.empty()) return true;
    std::string body;
    for (const std::string &l : lines) {
        body += l;
        body += '\n';
    }
    std::string path = "/write?db=" + url_encode(cfg_.dbname) + "&precision=u";
    if (!rp.empty()) path += "&rp=" + url_encode(rp);
    const Response res = request(path, body);
    if (res.status / 100 == 2) return true;
    error = "influxdb: HTTP " + std::to_string(res.status) + ": " + res.body.substr(0, 300);
    return false;
}

std::string InfluxWriter::conf_line(const Record &r) const {
    std::string line = "att_conf,att_name=" + tag_value(r.att_name) +
                       " att_conf_id=" + std::to_string(influx_att_conf_id(r.att_name)) + "i,data_type=" +
                       influx_string_field(influx_measurement(r.data_type, r.data_format).substr(4)) +
                       ",tango_type=" + std::to_string(r.data_type) + "i,format=" + std::to_string(r.data_format) +
                       "i,write_type=" + std::to_string(r.write_type) + "i";
    if (r.ttl_hours) line += ",ttl=" + std::to_string(r.ttl_hours) + "i";
    return line + " 0";  // time 0: registering again replaces the same point
}

std::string InfluxWriter::history_line(const std::string &att_name, const std::string &event, TimePoint at) const {
    return "att_history,att_conf_id=" + std::to_string(influx_att_conf_id(att_name)) +
           " event=" + influx_string_field(event) + " " + std::to_string(us_of(at));
}

std::string InfluxWriter::param_line(const Record &r) const {
    const ParamInfo empty;
    const ParamInfo &p = r.param ? *r.param : empty;
    std::string labels;
    for (std::size_t i = 0; i < p.enum_labels.size(); ++i) labels += (i ? "\n" : "") + p.enum_labels[i];
    std::string line = "att_parameter,att_conf_id=" + std::to_string(influx_att_conf_id(r.att_name)) + " ";
    const std::pair<const char *, const std::string *> fields[] = {
        {"label", &p.label}, {"unit", &p.unit}, {"standard_unit", &p.standard_unit},
        {"display_unit", &p.display_unit}, {"format", &p.format}, {"archive_rel_change", &p.archive_rel_change},
        {"archive_abs_change", &p.archive_abs_change}, {"archive_period", &p.archive_period},
        {"description", &p.description}, {"enum_labels", &labels}};
    bool first = true;
    for (const auto &[key, value] : fields) {
        line += (first ? "" : ",") + std::string(key) + "=" + influx_string_field(*value);
        first = false;
    }
    return line + " " + std::to_string(us_of(r.data_time));
}

bool InfluxWriter::stored_conf(const std::string &att_name) {
    // Strict mode: an attribute this process has not added may be in att_conf already (added before a
    // restart, or by another subscriber): look it up once, as HDB++ does in its att_conf table.
    std::string name;
    for (char c : att_name) {
        if (c == '\'' || c == '\\') name += '\\';
        name += c;
    }
    const std::string q = "SELECT att_conf_id FROM \"conf\".att_conf WHERE att_name = '" + name + "'";
    const Response res = request("/query?db=" + url_encode(cfg_.dbname) + "&q=" + url_encode(q), {});
    const bool found = res.status / 100 == 2 && res.body.find("\"values\"") != std::string::npos;
    if (found) registered_.insert(att_name);
    return found;
}

WriteResult InfluxWriter::write_batch(std::vector<Record> &batch) {
    if (!connected()) throw DbError("not connected", true);
    WriteResult res;
    const DedupResult dd = dedup_batch(batch);
    res.duplicates = dd.dropped;
    std::vector<std::string> conf, data;
    std::vector<std::size_t> conf_idx, data_idx;  // the record each line stores
    std::unordered_set<std::string> added;
    std::unordered_map<std::string, std::int64_t> last;  // this batch's last data time per attribute
    for (std::size_t i : dd.keep) {
        const Record &r = batch[i];
        bool has = registered_.count(r.att_name) || added.count(r.att_name) ||
                   (!may_create_conf(r, cfg_) && stored_conf(r.att_name));
        if (!has && may_create_conf(r, cfg_) && r.types_known()) {
            conf.push_back(conf_line(r));
            conf.push_back(history_line(r.att_name, kAddEvent, add_event_time(r)));
            conf_idx.insert(conf_idx.end(), {i, i});
            added.insert(r.att_name);
            has = true;
        }
        if (!to_store(r, has, cfg_, res)) continue;
        if (r.kind == RecordKind::Param) {
            conf.push_back(param_line(r));
            conf.push_back(history_line(r.att_name, "insert_param", r.data_time));
            conf_idx.insert(conf_idx.end(), {i, i});
            continue;
        }
        if (r.kind == RecordKind::History) {
            conf.push_back(history_line(r.att_name, r.text, r.data_time));
            conf_idx.push_back(i);
            continue;
        }
        const std::string why = r.types_known() ? influx_cannot_hold(r.data_type)
                                                : "unsupported data type " + std::to_string(r.data_type);
        if (!why.empty()) {
            res.rejected.push_back({r.att_name, why});
            continue;
        }
        // The same instant as the attribute's last stored event would replace it: a duplicate delivery.
        const std::int64_t t = us_of(r.data_time);
        const auto seen = last.find(r.att_name);
        const auto stored = last_us_.find(r.att_name);
        if ((seen != last.end() && seen->second == t) || (seen == last.end() && stored != last_us_.end() &&
                                                          stored->second == t)) {
            ++res.duplicates;
            continue;
        }
        last[r.att_name] = t;
        data.push_back(influx_event_line(r));
        data_idx.push_back(i);
    }
    // Configuration first, so that a stored event's attribute is always in att_conf. A refused line
    // (4xx: the server could not parse it) is retried alone, so that only the bad records are rejected;
    // rewriting a stored point replaces it with itself.
    auto store = [&](const std::vector<std::string> &lines, const std::vector<std::size_t> &idx, const std::string &rp,
                     bool events) {
        std::string error;
        if (post(lines, rp, error)) {
            if (events) res.data_rows += lines.size();
            return;
        }
        for (std::size_t k = 0; k < lines.size(); ++k) {
            if (post({lines[k]}, rp, error)) {
                if (events) ++res.data_rows;
            } else {
                res.rejected.push_back({batch[idx[k]].att_name, error});
            }
        }
    };
    store(conf, conf_idx, "conf", false);
    store(data, data_idx, "", true);
    registered_.insert(added.begin(), added.end());
    for (const auto &[name, t] : last) last_us_[name] = t;
    return res;
}

}  // namespace hdbbench
