// SPDX-License-Identifier: Apache-2.0
#include "clickhouse_writer.h"

#include <curl/curl.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <mutex>
#include <utility>

#include "writer_registry.h"

namespace hdbbench {

namespace {

constexpr int kDefaultHttpPort = 8123;
constexpr long kTimeoutMs = 60000;  // one insert; a server that takes longer is treated as gone
const char *const kScalarColumns = "att_conf_id, data_time, value_r, value_w, quality, att_error_desc_id";
const char *const kArrayColumns =
    "att_conf_id, data_time, value_r, value_w, dim_x_r, dim_y_r, dim_x_w, dim_y_w, quality, att_error_desc_id";

std::once_flag curl_once;

struct ClickHouseSettings {};  // no keys of its own: host, port, user, password and dbname are common keys

const KeyTable<ClickHouseSettings> &clickhouse_keys() {
    static const KeyTable<ClickHouseSettings> table{};
    return table;
}

WriterEntry clickhouse_entry() {
    WriterEntry e;
    e.name = "clickhouse";
    e.libname_patterns = {"clickhouse"};
    bind_keys(e, clickhouse_keys());
    e.check_chosen = [](const LibConfig &cfg) {
        if (cfg.dbname.empty()) throw ConfigError("LibConfiguration: clickhouse needs dbname");
    };
    e.create = [](const LibConfig &cfg) { return std::make_unique<ClickHouseWriter>(cfg); };
    return e;
}
const WriterRegistrar registrar{clickhouse_entry()};

std::size_t collect(char *data, std::size_t size, std::size_t n, void *out) {
    static_cast<std::string *>(out)->append(data, size * n);
    return size * n;
}

std::string url_escape(const std::string &s) {
    static const char *hex = "0123456789ABCDEF";
    std::string o;
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
            o += static_cast<char>(c);
        } else {
            o += '%';
            o += hex[c >> 4];
            o += hex[c & 15];
        }
    }
    return o;
}

// Text of an array of strings (enum labels of att_parameter, a TabSeparated field).
std::string text_array(const std::vector<std::string> &items) {
    std::string o = "[";
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) o += ',';
        o += '\'';
        for (char c : clickhouse_tsv_text(items[i])) {
            if (c == '\'') o += '\\';
            o += c;
        }
        o += '\'';
    }
    return o + "]";
}

// RowBinary: little-endian fixed-width values, varint lengths (hdbbench/backends/clickhouse/rowbinary.py).
template <typename T>
void put(std::string &out, T v) {
    std::uint64_t bits = 0;
    static_assert(sizeof(T) <= sizeof bits, "at most 8 bytes");
    std::memcpy(&bits, &v, sizeof(T));
    for (std::size_t i = 0; i < sizeof(T); ++i) out += static_cast<char>((bits >> (8 * i)) & 0xff);
}

void put_varint(std::string &out, std::uint64_t n) {
    do {
        const auto byte = static_cast<unsigned char>(n & 0x7f);
        n >>= 7;
        out += static_cast<char>(n ? byte | 0x80 : byte);
    } while (n);
}

void put_string(std::string &out, const std::string &s) {
    put_varint(out, s.size());
    out += s;
}

// Element i of v as the column type of `type` holds it (tables.py VALUE_TYPES).
void put_element(std::string &out, int type, const Values &v, std::size_t i) {
    if (const auto *text = std::get_if<std::vector<std::string>>(&v)) return put_string(out, (*text)[i]);
    if (const auto *real = std::get_if<std::vector<double>>(&v)) {
        if (type == kDevFloat) return put(out, static_cast<float>((*real)[i]));
        return put(out, (*real)[i]);
    }
    const std::int64_t n = std::holds_alternative<std::vector<std::uint64_t>>(v)
                               ? static_cast<std::int64_t>(std::get<std::vector<std::uint64_t>>(v)[i])
                               : std::get<std::vector<std::int64_t>>(v)[i];
    switch (type) {
        case kDevBoolean: case kDevUChar: case kDevState: return put(out, static_cast<std::uint8_t>(n));
        case kDevShort: case kDevEnum: return put(out, static_cast<std::int16_t>(n));
        case kDevUShort: return put(out, static_cast<std::uint16_t>(n));
        case kDevLong: return put(out, static_cast<std::int32_t>(n));
        case kDevULong: return put(out, static_cast<std::uint32_t>(n));
        case kDevULong64: return put(out, static_cast<std::uint64_t>(n));
        default: return put(out, n);
    }
}

// The number of elements of v usable for `type` (0 when the variant holds another class: stored as NULL / []).
std::size_t usable(int type, const Values &v, bool present) { return present ? element_count(type, v) : 0; }

void put_nullable(std::string &out, int type, const Values &v, bool present) {
    if (usable(type, v, present) == 0) {
        out += '\1';
        return;
    }
    out += '\0';
    put_element(out, type, v, 0);
}

void put_array(std::string &out, int type, const Values &v, std::size_t n) {
    put_varint(out, n);
    for (std::size_t i = 0; i < n; ++i) put_element(out, type, v, i);
}

std::pair<std::uint32_t, std::uint32_t> dims(int format, std::size_t n, std::uint32_t dim_x, std::uint32_t dim_y) {
    if (format == kImage && dim_y > 0 && static_cast<std::size_t>(dim_x) * dim_y == n) return {dim_x, dim_y};
    return {static_cast<std::uint32_t>(n), 0};
}

std::int64_t micros(TimePoint t) { return static_cast<std::int64_t>(t.time_since_epoch().count()); }

}  // namespace

std::uint64_t clickhouse_id(const std::string &name) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char c : name) {
        h ^= c;
        h *= 0x100000001b3ULL;
    }
    return h & 0x7fffffffffffffffULL;
}

std::string clickhouse_table_name(int type, int format) {
    return std::string("att_") + (format == kScalar ? "scalar_" : "array_") + type_suffix(type);
}

std::string clickhouse_tsv_text(const std::string &s) {
    std::string o;
    o.reserve(s.size());
    for (char c : s) {
        switch (c) {
            case '\\': o += "\\\\"; break;
            case '\t': o += "\\t"; break;
            case '\n': o += "\\n"; break;
            case '\r': o += "\\r"; break;
            case '\0': o += "\\0"; break;
            default: o += c;
        }
    }
    return o;
}

void clickhouse_data_row(const Record &r, std::string &out) {
    const bool error = r.kind == RecordKind::Error;
    const bool write_side = r.write_type != kRead;
    const int type = r.data_type;
    put(out, clickhouse_id(r.att_name));
    put(out, micros(r.data_time));
    if (r.data_format == kScalar) {
        put_nullable(out, type, r.value_r, !error);
        put_nullable(out, type, r.value_w, !error && write_side);
    } else {
        const std::size_t nr = usable(type, r.value_r, !error);
        const std::size_t nw = usable(type, r.value_w, !error && write_side);
        put_array(out, type, r.value_r, nr);
        put_array(out, type, r.value_w, nw);
        const auto [xr, yr] = dims(r.data_format, nr, r.dim_x_r, r.dim_y_r);
        const auto [xw, yw] = dims(r.data_format, nw, r.dim_x_w, r.dim_y_w);
        for (const std::uint32_t d : {xr, yr, xw, yw}) put(out, d);
    }
    put(out, static_cast<std::int8_t>(r.quality));
    if (error) {
        out += '\0';
        put(out, clickhouse_id(r.text));
    } else {
        out += '\1';
    }
}

ClickHouseWriter::ClickHouseWriter(LibConfig cfg) : BatchWriter(std::move(cfg)) {
    url_ = "http://" + cfg_.host + ':' + std::to_string(cfg_.port ? cfg_.port : kDefaultHttpPort) +
           "/?database=" + url_escape(cfg_.dbname);
}

ClickHouseWriter::~ClickHouseWriter() { disconnect(); }

void ClickHouseWriter::connect() {
    std::call_once(curl_once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    if (!curl_) curl_ = curl_easy_init();
    if (!curl_) throw DbError("clickhouse: curl_easy_init failed", true);
    try {
        post("SELECT 1");
    } catch (const DbError &e) {
        disconnect();
        throw DbError(e.what(), true);  // a server that refuses even this is not there for us
    }
}

void ClickHouseWriter::disconnect() {
    if (curl_) curl_easy_cleanup(static_cast<CURL *>(curl_));
    curl_ = nullptr;
}

std::string ClickHouseWriter::post(const std::string &query, const std::string &body) {
    if (!curl_) throw DbError("clickhouse: not connected", true);
    CURL *c = static_cast<CURL *>(curl_);
    const std::string url = body.empty() ? url_ : url_ + "&query=" + url_escape(query);
    const std::string &payload = body.empty() ? query : body;
    const std::string credentials = cfg_.user + ':' + cfg_.password;
    std::string response;
    curl_easy_reset(c);  // keeps the connection for the next request
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, kTimeoutMs);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(c, CURLOPT_USERPWD, credentials.c_str());
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, payload.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(payload.size()));
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &response);
    const CURLcode rc = curl_easy_perform(c);
    if (rc != CURLE_OK) throw DbError(std::string("clickhouse: ") + curl_easy_strerror(rc), true);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) {
        // A full disk, or more parts than merges keep up with ("Too many parts", code 252), is "for
        // now", as a full disk is on the SQL servers: the batch is kept and retried.
        const bool for_now = message_says_no_space(response) || response.find("Code: 252") != std::string::npos ||
                             status == 503;
        throw DbError("clickhouse: HTTP " + std::to_string(status) + ": " + response.substr(0, 500), for_now);
    }
    return response;
}

bool ClickHouseWriter::resolve_attribute(const Record &r, bool may_create) {
    if (known_attributes_.count(r.att_name)) return true;
    // The layout holds no DevEncoded: no att_conf row naming a table that does not exist; its events
    // are refused by data_table, in a line that names the type.
    if (r.data_type == kDevEncoded) return true;
    const std::uint64_t id = clickhouse_id(r.att_name);
    const bool exists = post("SELECT count() FROM att_conf WHERE att_conf_id = " + std::to_string(id)) != "0\n";
    if (!exists) {
        if (!may_create || !r.types_known()) return false;
        // cs_name, domain, family, member, name as split_att_name splits them (hdbbench.model.hdbtypes).
        std::string rest = r.att_name, cs;
        if (rest.size() > 8 && (rest.compare(0, 8, "tango://") == 0 || rest.compare(0, 8, "TANGO://") == 0)) {
            const std::size_t slash = rest.find('/', 8);
            cs = rest.substr(8, slash == std::string::npos ? std::string::npos : slash - 8);
            rest = slash == std::string::npos ? std::string() : rest.substr(slash + 1);
        }
        std::string parts[4];
        for (int k = 0; k < 3; ++k) {
            const std::size_t slash = rest.find('/');
            parts[k] = rest.substr(0, slash);
            rest = slash == std::string::npos ? std::string() : rest.substr(slash + 1);
        }
        parts[3] = rest;
        std::string row = std::to_string(id) + '\t' + clickhouse_tsv_text(r.att_name) + '\t' +
                          clickhouse_table_name(r.data_type, r.data_format) + '\t' + std::to_string(r.data_type) +
                          '\t' + std::to_string(r.data_format) + '\t' + std::to_string(r.write_type) + '\t' +
                          clickhouse_tsv_text(cs);
        for (const auto &p : parts) row += '\t' + clickhouse_tsv_text(p);
        row += '\t' + std::to_string(r.ttl_hours) + '\n';
        post("INSERT INTO att_conf (att_conf_id, att_name, table_name, att_conf_type_id, att_conf_format_id, "
             "att_conf_write_id, cs_name, domain, family, member, name, ttl) FORMAT TabSeparated",
             row);
        post("INSERT INTO att_history (att_conf_id, event_time, event) FORMAT TabSeparated",
             std::to_string(id) + '\t' + std::to_string(micros(add_event_time(r))) + "\tadd\n");
    }
    known_attributes_.insert(r.att_name);
    return true;
}

std::optional<BatchWriter::TableKey> ClickHouseWriter::data_table(const Record &r) const {
    if (!r.types_known() || r.data_type == kDevEncoded) return std::nullopt;  // the layout holds no DevEncoded
    return TableKey{r.data_type, r.data_format, false};
}

void ClickHouseWriter::prepare_error_desc(const std::string &desc) {
    const std::uint64_t id = clickhouse_id(desc);
    if (known_errors_.count(id)) return;
    post("INSERT INTO att_error_desc (att_error_desc_id, error_desc) FORMAT TabSeparated",
         std::to_string(id) + '\t' + clickhouse_tsv_text(desc) + '\n');
    known_errors_.insert(id);
}

void ClickHouseWriter::begin() {
    history_rows_.clear();
    parameter_rows_.clear();
}

void ClickHouseWriter::store_meta(const Record &r) {
    const std::string id = std::to_string(clickhouse_id(r.att_name));
    if (r.kind == RecordKind::History) {
        // A mutation, applied by the server in the background (ClickHouse has no UPDATE statement);
        // repeating it on a retried batch sets the same value.
        if (r.text == "update_ttl")
            post("ALTER TABLE att_conf UPDATE ttl = " + std::to_string(r.ttl_hours) + " WHERE att_conf_id = " + id);
        history_rows_ += id + '\t' + std::to_string(micros(r.data_time)) + '\t' + clickhouse_tsv_text(r.text) + '\n';
        return;
    }
    const ParamInfo empty;
    const ParamInfo &p = r.param ? *r.param : empty;
    std::string row = id + '\t' + std::to_string(micros(r.data_time));
    for (const std::string *f : {&p.label, &p.unit, &p.standard_unit, &p.display_unit, &p.format,
                                 &p.archive_rel_change, &p.archive_abs_change, &p.archive_period, &p.description})
        row += '\t' + clickhouse_tsv_text(*f);
    row += '\t' + text_array(p.enum_labels) + '\n';
    parameter_rows_ += row;
    history_rows_ += id + '\t' + std::to_string(micros(r.data_time)) + "\tinsert_param\n";
}

std::size_t ClickHouseWriter::store_table(const TableKey &t, const std::vector<Record> &batch,
                                          const std::vector<std::size_t> &idx) {
    std::string body;
    for (std::size_t i : idx) clickhouse_data_row(batch[i], body);
    post("INSERT INTO " + clickhouse_table_name(t.type, t.format) + " (" +
             (t.format == kScalar ? kScalarColumns : kArrayColumns) + ") FORMAT RowBinary",
         body);
    return 0;  // ClickHouse reports no duplicates (the table has no unique key)
}

void ClickHouseWriter::commit() {
    if (!parameter_rows_.empty())
        post("INSERT INTO att_parameter (att_conf_id, recv_time, label, unit, standard_unit, display_unit, format, "
             "archive_rel_change, archive_abs_change, archive_period, description, enum_labels) FORMAT TabSeparated",
             parameter_rows_);
    if (!history_rows_.empty())
        post("INSERT INTO att_history (att_conf_id, event_time, event) FORMAT TabSeparated", history_rows_);
    begin();
}

void ClickHouseWriter::rollback() noexcept { begin(); }

}  // namespace hdbbench
