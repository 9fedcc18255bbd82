// SPDX-License-Identifier: Apache-2.0
#include "pg_writer.h"

#include <libpq-fe.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>

#include "pgcopy.h"
#include "writer_registry.h"

namespace hdbbench {

namespace {
const KeyTable<PgSettings> &pg_keys() {
    static const KeyTable<PgSettings> table{
        {"connect_string", [](PgSettings &s, const std::string &, const std::string &v) { s.connect_string = v; }},
    };
    return table;
}

WriterEntry pg_entry(std::string name, std::vector<std::string> aliases, std::vector<std::string> libname_patterns,
                     bool is_default) {
    WriterEntry e;
    e.name = std::move(name);
    e.aliases = std::move(aliases);
    e.libname_patterns = std::move(libname_patterns);
    e.is_default = is_default;
    bind_keys(e, pg_keys());
    e.create = [](const LibConfig &cfg) { return std::make_unique<PgWriter>(cfg, PgSettings::parse(cfg)); };
    return e;
}

// One writer for both: the schemas differ only by hypertables. TimescaleDB is HDB++'s reference
// backend here, hence the default (libname libhdb++timescale.so*).
const WriterRegistrar timescaledb{pg_entry("timescaledb", {"timescale"}, {"timescale"}, true)};
const WriterRegistrar postgresql{pg_entry("postgresql", {"postgres", "pg"}, {"postgres"}, false)};

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

PgSettings PgSettings::parse(const LibConfig &cfg) { return pg_keys().parse(cfg.raw); }

std::string pg_conninfo(const LibConfig &cfg, const PgSettings &s) {
    if (!s.connect_string.empty()) return s.connect_string;
    std::string ci;
    auto add = [&ci](const char *k, const std::string &v) {
        if (v.empty()) return;
        if (!ci.empty()) ci += ' ';
        ci += k;
        ci += '=';
        ci += pq_quote(v);
    };
    add("host", cfg.host);
    add("port", cfg.port ? std::to_string(cfg.port) : std::string());
    add("user", cfg.user);
    add("password", cfg.password);
    add("dbname", cfg.dbname);
    return ci;
}

std::string pg_table_name(int type, int format) {
    const char *f = format == kScalar ? "scalar" : format == kSpectrum ? "array" : "image";
    return std::string("att_") + f + "_" + type_suffix(type);
}

std::string pg_timestamp(TimePoint t) {
    const auto us = t.time_since_epoch().count();
    std::int64_t secs = us / 1000000;
    std::int64_t frac = us % 1000000;
    if (frac < 0) {
        frac += 1000000;
        --secs;
    }
    const std::time_t tt = static_cast<std::time_t>(secs);
    std::tm tm{};
    gmtime_r(&tt, &tm);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%02d.%06lld+00", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long long>(frac));
    return buf;
}

std::string pg_text_array(const std::vector<std::string> &v) {
    std::string s = "{";
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (i) s += ',';
        s += '"';
        for (char c : v[i]) {
            if (c == '"' || c == '\\') s += '\\';
            s += c;
        }
        s += '"';
    }
    return s + "}";
}

class PgWriter::Result {
public:
    explicit Result(PGresult *r) : r_(r, &PQclear) {}
    PGresult *get() const { return r_.get(); }
    int rows() const { return PQntuples(r_.get()); }
    bool is_null(int row, int col) const { return PQgetisnull(r_.get(), row, col) != 0; }
    std::string str(int row, int col) const { return PQgetvalue(r_.get(), row, col); }
    int integer(int row, int col) const { return std::stoi(str(row, col)); }
    std::size_t affected() const {
        const char *n = PQcmdTuples(r_.get());
        return (n && *n) ? std::stoul(n) : 0;
    }

private:
    std::unique_ptr<PGresult, decltype(&PQclear)> r_;
};

// Errors after which the same batch can succeed later (kept and retried, not rejected): class 53
// (insufficient resources: disk full, out of memory, too many connections), 55P03 (lock not
// available, a lock_timeout), or an operating system "no space" in the message.
bool pg_error_is_transient(const char *sqlstate, const std::string &msg) {
    const std::string st = sqlstate ? sqlstate : "";
    return st.rfind("53", 0) == 0 || st == "55P03" || message_says_no_space(msg);
}

namespace {

// Staging column type of the values of a Tango type, with its element OID.
struct StageType {
    const char *sql;
    pgcopy::Oid oid;
};
StageType stage_type(int type) {
    switch (type) {
        case kDevBoolean: return {"boolean", pgcopy::kBool};
        case kDevUChar: return {"smallint", pgcopy::kInt2};
        case kDevShort: return {"smallint", pgcopy::kInt2};
        case kDevUShort: return {"integer", pgcopy::kInt4};
        case kDevLong: return {"integer", pgcopy::kInt4};
        case kDevULong: return {"bigint", pgcopy::kInt8};
        case kDevLong64: return {"bigint", pgcopy::kInt8};
        case kDevULong64: return {"numeric", pgcopy::kNumeric};
        case kDevFloat: return {"real", pgcopy::kFloat4};
        case kDevDouble: return {"double precision", pgcopy::kFloat8};
        case kDevString: return {"text", pgcopy::kText};
        case kDevState: return {"integer", pgcopy::kInt4};
        case kDevEncoded: return {"bytea", pgcopy::kBytea};
        case kDevEnum: return {"smallint", pgcopy::kInt2};
        default: return {"text", pgcopy::kText};
    }
}

// One element of `v` at index i as a COPY field of the staging type.
void emit_element(pgcopy::Buffer &b, int type, const Values &v, std::size_t i) {
    switch (type) {
        case kDevBoolean: b.boolean(std::get<std::vector<std::int64_t>>(v)[i] != 0); return;
        case kDevUChar:
        case kDevShort:
        case kDevEnum: b.int2(static_cast<std::int16_t>(std::get<std::vector<std::int64_t>>(v)[i])); return;
        case kDevUShort:
        case kDevLong:
        case kDevState: b.int4(static_cast<std::int32_t>(std::get<std::vector<std::int64_t>>(v)[i])); return;
        case kDevULong:
        case kDevLong64: b.int8(std::get<std::vector<std::int64_t>>(v)[i]); return;
        case kDevULong64: b.numeric_u64(std::get<std::vector<std::uint64_t>>(v)[i]); return;
        case kDevFloat: b.float4(static_cast<float>(std::get<std::vector<double>>(v)[i])); return;
        case kDevDouble: b.float8(std::get<std::vector<double>>(v)[i]); return;
        case kDevString: b.bytes(std::get<std::vector<std::string>>(v)[i]); return;
        case kDevEncoded: b.bytes(std::get<std::vector<std::string>>(v)[2 * i + 1]); return;
        default: b.null();
    }
}

void emit_value(pgcopy::Buffer &b, int type, int format, const Values &v, std::uint32_t dim_x, std::uint32_t dim_y) {
    const std::size_t n = element_count(type, v);
    if (n == 0) {
        // An empty spectrum or image is '{}', not NULL: NULL means "no value" (schemas/README.md).
        if (format != kScalar && !std::holds_alternative<std::monostate>(v))
            b.array(stage_type(type).oid, {}, 0, [](std::size_t) {});
        else
            b.null();
        return;
    }
    if (format == kScalar) {
        emit_element(b, type, v, 0);
        return;
    }
    std::vector<std::uint32_t> dims;
    if (format == kImage && dim_y > 0 && static_cast<std::size_t>(dim_x) * dim_y == n)
        dims = {dim_y, dim_x};
    else
        dims = {static_cast<std::uint32_t>(n)};
    b.array(stage_type(type).oid, dims, n, [&](std::size_t i) { emit_element(b, type, v, i); });
}

void emit_labels(pgcopy::Buffer &b, int format, const Values &v, const std::vector<std::string> *labels) {
    const std::size_t n = element_count(kDevEnum, v);
    if (n == 0 && labels && format != kScalar && !std::holds_alternative<std::monostate>(v)) {
        b.array(pgcopy::kText, {}, 0, [](std::size_t) {});  // as the value: an empty array, not NULL
        return;
    }
    if (n == 0 || !labels) {
        b.null();
        return;
    }
    const auto &vals = std::get<std::vector<std::int64_t>>(v);
    auto label_of = [&](std::size_t i) -> const std::string * {
        const auto x = vals[i];
        if (x < 0 || static_cast<std::size_t>(x) >= labels->size()) return nullptr;
        return &(*labels)[static_cast<std::size_t>(x)];
    };
    if (format == kScalar) {
        const std::string *l = label_of(0);
        if (l) b.bytes(*l);
        else b.null();
        return;
    }
    // Arrays of labels: an out-of-range value gives an empty label (arrays here carry no NULLs).
    b.array(pgcopy::kText, {static_cast<std::uint32_t>(n)}, n, [&](std::size_t i) {
        const std::string *l = label_of(i);
        b.bytes(l ? *l : std::string());
    });
}

std::string stage_name(const std::string &table) { return "hb_stage_" + table.substr(4); }
}  // namespace

PgWriter::PgWriter(LibConfig cfg, PgSettings settings)
    : BatchWriter(std::move(cfg)), settings_(std::move(settings)) {}

PgWriter::~PgWriter() { disconnect(); }

bool PgWriter::connected() const { return conn_ && PQstatus(conn_) == CONNECTION_OK; }

void PgWriter::disconnect() {
    if (conn_) PQfinish(conn_);
    conn_ = nullptr;
    tables_.clear();
    stages_.clear();
}

void PgWriter::connect() {
    disconnect();
    std::string ci = pg_conninfo(cfg_, settings_);
    const bool uri = ci.rfind("postgres", 0) == 0;
    if (!uri && ci.find("connect_timeout") == std::string::npos) ci += " connect_timeout=5";
    if (!uri && ci.find("application_name") == std::string::npos) ci += " application_name=hdbbench-es";
    conn_ = PQconnectdb(ci.c_str());
    if (PQstatus(conn_) != CONNECTION_OK) {
        std::string msg = PQerrorMessage(conn_);
        while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
        PQfinish(conn_);
        conn_ = nullptr;
        throw DbError("cannot connect to PostgreSQL: " + msg, true);
    }
    exec("SET TIME ZONE 'UTC'");
    event_ids_.clear();
    Result r = exec("SELECT event, att_history_event_id FROM att_history_event");
    for (int i = 0; i < r.rows(); ++i) event_ids_[r.str(i, 0)] = r.integer(i, 1);
}

void PgWriter::fail(const std::string &what, const PGresult *res) {
    std::string msg = conn_ ? PQerrorMessage(conn_) : "not connected";
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
    const bool lost = !conn_ || PQstatus(conn_) != CONNECTION_OK || pg_error_is_transient(state, msg);
    throw DbError(what + ": " + msg, lost);
}

PgWriter::Result PgWriter::exec(const std::string &sql, const std::vector<const char *> &params) {
    if (!conn_) throw DbError("not connected", true);
    Result r(PQexecParams(conn_, sql.c_str(), static_cast<int>(params.size()), nullptr, params.data(), nullptr,
                          nullptr, 0));
    const auto st = PQresultStatus(r.get());
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        std::string msg = PQresultErrorMessage(r.get());
        while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
        const bool lost = PQstatus(conn_) != CONNECTION_OK ||
                          pg_error_is_transient(PQresultErrorField(r.get(), PG_DIAG_SQLSTATE), msg);
        throw DbError(msg.empty() ? "query failed" : msg, lost);
    }
    return r;
}

const PgWriter::TableInfo &PgWriter::table_info(const std::string &table) {
    auto it = tables_.find(table);
    if (it != tables_.end()) return it->second;
    TableInfo info;
    Result r = exec(
        "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
        "JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE c.relname = $1 AND n.nspname = ANY (current_schemas(false)) AND a.attnum > 0 AND NOT a.attisdropped",
        {table.c_str()});
    for (int i = 0; i < r.rows(); ++i) info.columns[r.str(i, 0)] = r.str(i, 1);
    info.exists = !info.columns.empty();
    return tables_.emplace(table, std::move(info)).first->second;
}

void PgWriter::ensure_stage(int type, int format) {
    const std::string table = pg_table_name(type, format);
    const std::string stage = stage_name(table);
    if (stages_.count(stage)) return;
    const std::string t = std::string(stage_type(type).sql) + (format == kScalar ? "" : "[]");
    std::string sql = "CREATE TEMP TABLE IF NOT EXISTS " + stage +
                      " (att_conf_id integer, data_time timestamptz, value_r " + t + ", value_w " + t +
                      ", quality smallint, att_error_desc_id integer, details json";
    if (type == kDevEnum) {
        const std::string lt = format == kScalar ? "text" : "text[]";
        sql += ", value_r_label " + lt + ", value_w_label " + lt;
    }
    sql += ") ON COMMIT DELETE ROWS";
    exec(sql);
    stages_.insert(stage);
}

int PgWriter::history_event_id(const std::string &event) {
    auto it = event_ids_.find(event);
    if (it != event_ids_.end()) return it->second;
    exec("INSERT INTO att_history_event (event) SELECT $1::text WHERE NOT EXISTS "
         "(SELECT 1 FROM att_history_event WHERE event = $1::text)",
         {event.c_str()});
    Result r = exec("SELECT att_history_event_id FROM att_history_event WHERE event = $1", {event.c_str()});
    if (r.rows() == 0) throw DbError("history event '" + event + "' missing", false);
    return event_ids_[event] = r.integer(0, 0);
}

int PgWriter::att_id(const Record &rec, bool may_create) {
    auto it = att_ids_.find(rec.att_name);
    if (it != att_ids_.end()) return it->second;
    Result r = exec("SELECT att_conf_id FROM att_conf WHERE att_name = $1", {rec.att_name.c_str()});
    if (r.rows() > 0) return att_ids_[rec.att_name] = r.integer(0, 0);
    if (!may_create || !rec.types_known()) return 0;
    const NameParts p = split_attribute_name(rec.att_name);
    const std::string type = std::to_string(rec.data_type), format = std::to_string(rec.data_format),
                      write = std::to_string(rec.write_type), table = pg_table_name(rec.data_type, rec.data_format),
                      ttl = std::to_string(rec.ttl_hours);
    Result ins = exec(
        "INSERT INTO att_conf (att_name, att_conf_type_id, att_conf_format_id, att_conf_write_id, table_name, "
        "cs_name, domain, family, member, name, ttl) VALUES ($1, "
        "(SELECT att_conf_type_id FROM att_conf_type WHERE type_num = $2::smallint), "
        "(SELECT att_conf_format_id FROM att_conf_format WHERE format_num = $3::smallint), "
        "(SELECT att_conf_write_id FROM att_conf_write WHERE write_num = $4::smallint), "
        "$5, $6, $7, $8, $9, $10, $11::integer) ON CONFLICT (att_name) DO NOTHING RETURNING att_conf_id",
        {rec.att_name.c_str(), type.c_str(), format.c_str(), write.c_str(), table.c_str(), p.cs_name.c_str(),
         p.domain.c_str(), p.family.c_str(), p.member.c_str(), p.name.c_str(), ttl.c_str()});
    int id = 0;
    if (ins.rows() > 0) {
        id = ins.integer(0, 0);
        const std::string ids = std::to_string(id), ev = std::to_string(history_event_id("add")),
                          t = pg_timestamp(add_event_time(rec));
        exec("INSERT INTO att_history (att_conf_id, att_history_event_id, event_time) VALUES ($1, $2, $3) "
             "ON CONFLICT DO NOTHING",
             {ids.c_str(), ev.c_str(), t.c_str()});
    } else {
        Result again = exec("SELECT att_conf_id FROM att_conf WHERE att_name = $1", {rec.att_name.c_str()});
        if (again.rows() == 0) throw DbError("att_conf row for " + rec.att_name + " vanished", false);
        id = again.integer(0, 0);
    }
    return att_ids_[rec.att_name] = id;
}

int PgWriter::error_desc_id(const std::string &desc) {
    auto it = error_ids_.find(desc);
    if (it != error_ids_.end()) return it->second;
    Result ins = exec("INSERT INTO att_error_desc (error_desc) VALUES ($1) ON CONFLICT (error_desc) DO NOTHING "
                      "RETURNING att_error_desc_id",
                      {desc.c_str()});
    if (ins.rows() > 0) return error_ids_[desc] = ins.integer(0, 0);
    Result r = exec("SELECT att_error_desc_id FROM att_error_desc WHERE error_desc = $1", {desc.c_str()});
    if (r.rows() == 0) throw DbError("att_error_desc row vanished", false);
    return error_ids_[desc] = r.integer(0, 0);
}

void PgWriter::store_param(const Record &r, int att) {
    const ParamInfo &p = *r.param;
    const std::string id = std::to_string(att), t = pg_timestamp(r.recv_time), labels = pg_text_array(p.enum_labels);
    const TableInfo &ti = table_info("att_parameter");
    const bool has_enum = ti.columns.count("enum_labels") > 0;
    std::string sql =
        "INSERT INTO att_parameter (att_conf_id, recv_time, label, unit, standard_unit, display_unit, format, "
        "archive_rel_change, archive_abs_change, archive_period, description";
    // att_parameter has no key: a replayed batch (commit done, acknowledgement lost) must not add a
    // second identical row, so the row goes in only if the attribute has none at that instant.
    sql += std::string(has_enum ? ", enum_labels" : "") +
           ") SELECT $1::integer, $2::timestamptz, $3::text, $4::text, $5::text, $6::text, $7::text, $8::text, "
           "$9::text, $10::text, $11::text" +
           (has_enum ? ", $12::text[]" : "") +
           " WHERE NOT EXISTS (SELECT 1 FROM att_parameter WHERE att_conf_id = $1::integer AND recv_time = "
           "$2::timestamptz)";
    std::vector<const char *> params = {id.c_str(), t.c_str(), p.label.c_str(), p.unit.c_str(),
                                        p.standard_unit.c_str(), p.display_unit.c_str(), p.format.c_str(),
                                        p.archive_rel_change.c_str(), p.archive_abs_change.c_str(),
                                        p.archive_period.c_str(), p.description.c_str()};
    if (has_enum) params.push_back(labels.c_str());
    exec(sql, params);
    enum_labels_[att] = p.enum_labels;
}

void PgWriter::store_history(const Record &r, int att) {
    const std::string id = std::to_string(att);
    if (r.text == "start") {
        Result last = exec(
            "SELECT e.event FROM att_history h JOIN att_history_event e USING (att_history_event_id) "
            "WHERE h.att_conf_id = $1 ORDER BY h.event_time DESC LIMIT 1",
            {id.c_str()});
        if (last.rows() > 0 && last.str(0, 0) == "start") {
            const std::string ev = std::to_string(history_event_id("crash")),
                              t = pg_timestamp(r.data_time - std::chrono::microseconds(1));
            exec("INSERT INTO att_history (att_conf_id, att_history_event_id, event_time) VALUES ($1,$2,$3) "
                 "ON CONFLICT DO NOTHING",
                 {id.c_str(), ev.c_str(), t.c_str()});
        }
    } else if (r.text == "update_ttl") {
        const std::string ttl = std::to_string(r.ttl_hours);
        exec("UPDATE att_conf SET ttl = $2::integer WHERE att_conf_id = $1", {id.c_str(), ttl.c_str()});
    }
    const std::string ev = std::to_string(history_event_id(r.text)), t = pg_timestamp(r.data_time);
    exec("INSERT INTO att_history (att_conf_id, att_history_event_id, event_time) VALUES ($1,$2,$3) "
         "ON CONFLICT DO NOTHING",
         {id.c_str(), ev.c_str(), t.c_str()});
}

bool PgWriter::copy_buffer(const std::string &target, const pgcopy::Buffer &b) {
    {
        Result r(PQexec(conn_, ("COPY " + target + " FROM STDIN (FORMAT binary)").c_str()));
        if (PQresultStatus(r.get()) != PGRES_COPY_IN) fail("COPY into " + target, r.get());
    }
    if (PQputCopyData(conn_, b.data().data(), static_cast<int>(b.size())) != 1) fail("COPY data");
    if (PQputCopyEnd(conn_, nullptr) != 1) fail("COPY end");
    Result r(PQgetResult(conn_));
    const bool ok = PQresultStatus(r.get()) == PGRES_COMMAND_OK;
    const char *state = ok ? nullptr : PQresultErrorField(r.get(), PG_DIAG_SQLSTATE);
    std::string msg = ok ? "" : PQresultErrorMessage(r.get());
    while (PGresult *extra = PQgetResult(conn_)) PQclear(extra);
    if (ok) return true;
    if (state != nullptr && std::string(state) == "23505") return false;  // unique_violation
    throw DbError("COPY into " + target + ": " + msg,
                  PQstatus(conn_) != CONNECTION_OK || pg_error_is_transient(state, msg));
}

bool PgWriter::direct_copy_ok(int type, int format, const TableInfo &ti) {
    // Unsigned types (numeric domains) and enums (label columns) need the casts of the staging path.
    if (type == kDevUChar || type == kDevUShort || type == kDevULong || type == kDevULong64 || type == kDevEnum) {
        return false;
    }
    const std::string value = std::string(stage_type(type).sql) + (format == kScalar ? "" : "[]");
    const std::map<std::string, std::string> want = {
        {"att_conf_id", "integer"}, {"data_time", "timestamp with time zone"}, {"value_r", value},
        {"value_w", value}, {"quality", "smallint"}, {"att_error_desc_id", "integer"}, {"details", "json"}};
    return ti.columns == want;
}

std::size_t PgWriter::store_table(const TableKey &t, const std::vector<Record> &batch,
                                  const std::vector<std::size_t> &idx) {
    const int type = t.type, format = t.format;
    const std::string table = pg_table_name(type, format);
    const TableInfo &ti = table_info(table);
    if (!ti.exists) throw DbError("table " + table + " does not exist", false);
    const std::string stage = stage_name(table);
    const bool is_enum = type == kDevEnum;
    pgcopy::Buffer b;
    for (std::size_t i : idx) {
        const Record &r = batch[i];
        const int att = att_ids_.at(r.att_name);
        b.begin_row(is_enum ? 9 : 7);
        b.int4(att);
        b.timestamptz(r.data_time);
        if (r.kind == RecordKind::Error) {
            b.null();
            b.null();
        } else {
            emit_value(b, type, format, r.value_r, r.dim_x_r, r.dim_y_r);
            emit_value(b, type, format, r.value_w, r.dim_x_w, r.dim_y_w);
        }
        b.int2(r.quality);
        if (r.kind == RecordKind::Error) b.int4(error_ids_.at(r.text));
        else b.null();
        if (type == kDevEncoded && r.kind == RecordKind::Data) {
            // The DevEncoded format string has no column of its own: keep it in details.
            const auto *rv = std::get_if<std::vector<std::string>>(&r.value_r);
            const auto *wv = std::get_if<std::vector<std::string>>(&r.value_w);
            std::string d = "{";
            if (rv && !rv->empty()) d += "\"format_r\":" + json_quote((*rv)[0]);
            if (wv && !wv->empty()) d += std::string(d.size() > 1 ? "," : "") + "\"format_w\":" + json_quote((*wv)[0]);
            d += "}";
            if (d.size() > 2) b.bytes(d);
            else b.null();
        } else {
            b.null();
        }
        if (is_enum) {
            auto it = enum_labels_.find(att);
            const std::vector<std::string> *labels = it == enum_labels_.end() ? nullptr : &it->second;
            if (r.kind == RecordKind::Error) {
                b.null();
                b.null();
            } else {
                emit_labels(b, format, r.value_r, labels);
                emit_labels(b, format, r.value_w, labels);
            }
        }
    }
    b.finish();
    if (direct_copy_ok(type, format, ti)) {
        // Fast path: COPY straight into the table. A row that is already stored (a replay after a
        // lost commit acknowledgement) makes it fail as a whole; the staging path then skips it.
        exec("SAVEPOINT direct_copy");
        if (copy_buffer(table + " (att_conf_id, data_time, value_r, value_w, quality, att_error_desc_id, details)",
                        b)) {
            exec("RELEASE SAVEPOINT direct_copy");
            return 0;
        }
        exec("ROLLBACK TO SAVEPOINT direct_copy");
    }
    if (!copy_buffer(stage, b)) throw DbError("COPY into " + stage + ": unexpected unique violation", false);
    static const char *cols[] = {"att_conf_id", "data_time", "value_r", "value_w", "quality",
                                 "att_error_desc_id", "details", "value_r_label", "value_w_label"};
    std::string ins = "INSERT INTO " + table + " (", sel;
    bool first = true;
    for (std::size_t c = 0; c < (is_enum ? 9u : 7u); ++c) {
        auto col = ti.columns.find(cols[c]);
        if (col == ti.columns.end()) continue;
        if (!first) {
            ins += ", ";
            sel += ", ";
        }
        first = false;
        ins += cols[c];
        sel += std::string(cols[c]) + "::" + col->second;
    }
    ins += ") SELECT " + sel + " FROM " + stage + " ORDER BY att_conf_id, data_time ON CONFLICT DO NOTHING";
    Result r = exec(ins);
    const std::size_t inserted = r.affected();
    return idx.size() - std::min(idx.size(), inserted);
}

std::optional<BatchWriter::TableKey> PgWriter::data_table(const Record &r) const {
    if (!is_supported_type(r.data_type) || r.data_format < 0 || r.data_format > 2) return std::nullopt;
    return TableKey{r.data_type, r.data_format, false};
}

void PgWriter::prepare_meta(const Record &r) {
    if (r.kind == RecordKind::History) history_event_id(r.text);
    if (r.kind == RecordKind::Param) table_info("att_parameter");
}

void PgWriter::prepare_table(const TableKey &t) {
    ensure_stage(t.type, t.format);
    table_info(pg_table_name(t.type, t.format));
}

void PgWriter::begin() { exec("BEGIN"); }

void PgWriter::store_meta(const Record &r) {
    if (r.kind == RecordKind::Param) store_param(r, att_ids_.at(r.att_name));
    else store_history(r, att_ids_.at(r.att_name));
}

void PgWriter::commit() { exec("COMMIT"); }

void PgWriter::rollback() noexcept {
    if (conn_) PQclear(PQexec(conn_, "ROLLBACK"));
}

}  // namespace hdbbench
