// SPDX-License-Identifier: Apache-2.0
#include "mysql_writer.h"

#include <errmsg.h>
#include <mysql.h>
#include <mysqld_error.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <ctime>
#include <deque>
#include <memory>

#include "writer_registry.h"

namespace hdbbench {

namespace {
const KeyTable<MySqlSettings> &mysql_keys() {
    static const KeyTable<MySqlSettings> table{
        {"ignore_duplicates", [](MySqlSettings &s, const std::string &k, const std::string &v) {
             s.ignore_duplicates = parse_bool(k, v);
         }},
        {"lightschema", [](MySqlSettings &, const std::string &k, const std::string &v) { parse_bool(k, v); }},
        {"json_array", [](MySqlSettings &, const std::string &k, const std::string &v) { parse_bool(k, v); }},
    };
    return table;
}

WriterEntry mysql_entry() {
    WriterEntry e;
    e.name = "mysql";
    e.aliases = {"mariadb"};
    e.libname_patterns = {"mysql", "maria"};
    bind_keys(e, mysql_keys());
    // Found at Init (state FAULT) rather than at every reconnection attempt.
    e.check_chosen = [](const LibConfig &cfg) {
        if (cfg.dbname.empty()) throw ConfigError("LibConfiguration: the mysql backend needs dbname");
    };
    e.create = [](const LibConfig &cfg) { return std::make_unique<MySqlWriter>(cfg, MySqlSettings::parse(cfg)); };
    return e;
}
const WriterRegistrar registrar{mysql_entry()};
}  // namespace

MySqlSettings MySqlSettings::parse(const LibConfig &cfg) { return mysql_keys().parse(cfg.raw); }

std::string mysql_table_name(int type, int format, int write_type) {
    const char *f = format == kScalar ? "scalar" : "array";
    return std::string("att_") + f + "_" + type_suffix(type) + (write_type == kRead ? "_ro" : "_rw");
}

// Bound parameters of one statement execution. Slots are filled first, then bound: the slot
// vector never grows while MYSQL_BINDs point into it.
class MySqlParams {
public:
    void reserve(std::size_t n) { slots_.reserve(n); }
    std::size_t size() const { return slots_.size(); }
    std::uint64_t bytes() const { return bytes_; }
    void clear() {
        slots_.clear();
        owned_.clear();
        bytes_ = 0;
    }
    void null() { add(MYSQL_TYPE_NULL).len = 0; }
    void integer(std::int64_t v) { add(MYSQL_TYPE_LONGLONG).i = v; }
    void uinteger(std::uint64_t v) {
        Slot &s = add(MYSQL_TYPE_LONGLONG);
        s.u = v;
        s.is_unsigned = true;
    }
    // NaN and infinities have no MariaDB representation: stored as NULL (as libhdbpp-mysql does).
    void real(double v) {
        if (!std::isfinite(v)) return null();
        add(MYSQL_TYPE_DOUBLE).d = v;
    }
    // The string must outlive the execution (a record of the batch, or a copy: see own()).
    void text(const std::string &v, bool blob = false) {
        Slot &s = add(blob ? MYSQL_TYPE_BLOB : MYSQL_TYPE_STRING);
        s.p = v.data();
        s.len = static_cast<unsigned long>(v.size());
        bytes_ += v.size();
    }
    void own(std::string v, bool blob = false) {
        owned_.push_back(std::move(v));
        text(owned_.back(), blob);
    }
    void time(TimePoint t) {
        Slot &s = add(MYSQL_TYPE_DATETIME);
        const auto us = t.time_since_epoch().count();
        std::int64_t secs = us / 1000000, frac = us % 1000000;
        if (frac < 0) {
            frac += 1000000;
            --secs;
        }
        const std::time_t tt = static_cast<std::time_t>(secs);
        std::tm tm{};
        gmtime_r(&tt, &tm);
        s.t.year = static_cast<unsigned>(tm.tm_year + 1900);
        s.t.month = static_cast<unsigned>(tm.tm_mon + 1);
        s.t.day = static_cast<unsigned>(tm.tm_mday);
        s.t.hour = static_cast<unsigned>(tm.tm_hour);
        s.t.minute = static_cast<unsigned>(tm.tm_min);
        s.t.second = static_cast<unsigned>(tm.tm_sec);
        s.t.second_part = static_cast<unsigned long>(frac);
        s.t.time_type = MYSQL_TIMESTAMP_DATETIME;
    }
    std::vector<MYSQL_BIND> binds() {
        std::vector<MYSQL_BIND> b(slots_.size());
        for (std::size_t i = 0; i < slots_.size(); ++i) {
            Slot &s = slots_[i];
            std::memset(&b[i], 0, sizeof(MYSQL_BIND));
            b[i].buffer_type = s.type;
            b[i].is_unsigned = s.is_unsigned;
            switch (s.type) {
                case MYSQL_TYPE_LONGLONG: b[i].buffer = s.is_unsigned ? static_cast<void *>(&s.u) : &s.i; break;
                case MYSQL_TYPE_DOUBLE: b[i].buffer = &s.d; break;
                case MYSQL_TYPE_DATETIME: b[i].buffer = &s.t; break;
                case MYSQL_TYPE_STRING:
                case MYSQL_TYPE_BLOB:
                    b[i].buffer = const_cast<char *>(s.p);
                    b[i].buffer_length = s.len;
                    b[i].length = &s.len;
                    break;
                default: break;
            }
        }
        return b;
    }

private:
    struct Slot {
        enum_field_types type = MYSQL_TYPE_NULL;
        bool is_unsigned = false;
        std::int64_t i = 0;
        std::uint64_t u = 0;
        double d = 0;
        MYSQL_TIME t{};
        const char *p = nullptr;
        unsigned long len = 0;
    };
    Slot &add(enum_field_types type) {
        slots_.emplace_back();
        slots_.back().type = type;
        bytes_ += 9;
        return slots_.back();
    }
    std::vector<Slot> slots_;
    std::deque<std::string> owned_;
    std::uint64_t bytes_ = 0;
};

bool mysql_error_is_connection_lost(unsigned err) {
    switch (err) {
        case CR_CONNECTION_ERROR:
        case CR_CONN_HOST_ERROR:
        case CR_SERVER_GONE_ERROR:
        case CR_SERVER_LOST:
        case CR_SERVER_LOST_EXTENDED:
        case CR_ERR_NET_READ:
        case CR_ERR_NET_WRITE:
        case CR_COMMANDS_OUT_OF_SYNC:
        case ER_SERVER_SHUTDOWN:
        case ER_CONNECTION_KILLED:
        case ER_QUERY_INTERRUPTED:
        case ER_LOCK_DEADLOCK:      // transient: retry the whole batch (idempotent)
        case ER_LOCK_WAIT_TIMEOUT:
        case ER_CON_COUNT_ERROR:
        case ER_OUT_OF_RESOURCES:
        case ER_CANT_CREATE_THREAD:
        case ER_DISK_FULL:         // the database's filesystem is full: the rows are fine, retry later
        case ER_RECORD_FILE_FULL:  // "table is full" (also a full tablespace filesystem)
            return true;
        default: return false;
    }
}

std::string utf8_truncate(const std::string &s, std::size_t max_chars) {
    std::size_t chars = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
            if (chars == max_chars) return s.substr(0, i);
            ++chars;
        }
    }
    return s;
}

namespace {
constexpr std::size_t kErrorDescChars = 255;

// Element i of v (which holds at least i+1 elements) as a bound parameter.
void bind_element(MySqlParams &p, int type, const Values &v, std::size_t i) {
    switch (value_class(type)) {
        case ValueClass::Int: {
            const std::int64_t x = std::get<std::vector<std::int64_t>>(v)[i];
            p.integer(type == kDevBoolean ? (x != 0) : x);
            return;
        }
        case ValueClass::UInt: p.uinteger(std::get<std::vector<std::uint64_t>>(v)[i]); return;
        case ValueClass::Real: p.real(std::get<std::vector<double>>(v)[i]); return;
        case ValueClass::Text: {
            const auto &s = std::get<std::vector<std::string>>(v);
            if (type == kDevEncoded) p.text(s[2 * i + 1], true);
            else p.text(s[i]);
            return;
        }
    }
}

void bind_format(MySqlParams &p, const Values &v, std::size_t i) {
    const auto *s = std::get_if<std::vector<std::string>>(&v);
    if (s && s->size() >= 2 * i + 2) p.text((*s)[2 * i]);
    else p.null();
}

std::string json_number(double x) {
    if (!std::isfinite(x)) return "null";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return buf;
}

// The whole value as a JSON array (json_array layout).
std::string json_values(int type, const Values &v) {
    const std::size_t n = element_count(type, v);
    std::string o = "[";
    for (std::size_t i = 0; i < n; ++i) {
        if (i) o += ',';
        switch (value_class(type)) {
            case ValueClass::Int: {
                const std::int64_t x = std::get<std::vector<std::int64_t>>(v)[i];
                o += std::to_string(type == kDevBoolean ? (x != 0) : x);
                break;
            }
            case ValueClass::UInt: o += std::to_string(std::get<std::vector<std::uint64_t>>(v)[i]); break;
            case ValueClass::Real: o += json_number(std::get<std::vector<double>>(v)[i]); break;
            case ValueClass::Text: {
                const auto &s = std::get<std::vector<std::string>>(v);
                o += json_quote(type == kDevEncoded ? s[2 * i + 1] : s[i]);
                break;
            }
        }
    }
    return o + "]";
}

// (dim_x, dim_y) as stored: spectra dim_y 0; images as received when consistent.
std::pair<std::uint32_t, std::uint32_t> dims_of(int format, std::size_t n, std::uint32_t dim_x, std::uint32_t dim_y) {
    if (format == kImage && dim_y > 0 && static_cast<std::size_t>(dim_x) * dim_y == n) return {dim_x, dim_y};
    return {static_cast<std::uint32_t>(n), 0};
}

std::string quote_ident(const std::string &name) {
    std::string o = "`";
    for (char c : name) {
        if (c == '`') o += '`';
        o += c;
    }
    return o + "`";
}
}  // namespace

bool MySqlWriter::TableInfo::has(const std::string &c) const {
    return std::find(columns.begin(), columns.end(), c) != columns.end();
}

MySqlWriter::MySqlWriter(LibConfig cfg, MySqlSettings settings)
    : BatchWriter(std::move(cfg)), settings_(settings) {}

MySqlWriter::~MySqlWriter() { disconnect(); }

bool MySqlWriter::connected() const { return conn_ != nullptr && alive_; }

void MySqlWriter::disconnect() {
    for (auto &kv : stmts_) mysql_stmt_close(kv.second);
    stmts_.clear();
    if (conn_) mysql_close(conn_);
    conn_ = nullptr;
    alive_ = false;
    tables_.clear();
    plans_.clear();
    event_ids_.clear();
    data_type_ids_.clear();
}

void MySqlWriter::connect() {
    disconnect();
    if (cfg_.dbname.empty()) throw ConfigError("LibConfiguration: dbname is required for the mysql backend");
    conn_ = mysql_init(nullptr);
    if (!conn_) throw DbError("mysql_init failed (out of memory)", true);
    const unsigned connect_timeout_s = 5, io_timeout_s = 60;
    mysql_options(conn_, MYSQL_OPT_CONNECT_TIMEOUT, &connect_timeout_s);
    mysql_options(conn_, MYSQL_OPT_READ_TIMEOUT, &io_timeout_s);
    mysql_options(conn_, MYSQL_OPT_WRITE_TIMEOUT, &io_timeout_s);
    mysql_options(conn_, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    mysql_options(conn_, MYSQL_READ_DEFAULT_GROUP, nullptr);
    const unsigned port = cfg_.port > 0 ? static_cast<unsigned>(cfg_.port) : 3306;
    if (!mysql_real_connect(conn_, cfg_.host.c_str(), cfg_.user.c_str(), cfg_.password.c_str(), cfg_.dbname.c_str(),
                            port, nullptr, 0)) {
        const std::string msg = mysql_error(conn_);
        const unsigned err = mysql_errno(conn_);
        mysql_close(conn_);
        conn_ = nullptr;
        // Access denied / unknown database are configuration errors, but the operator may fix them
        // on the server: keep retrying like a lost connection, with the reason in the status.
        throw DbError("cannot connect to MySQL/MariaDB at " + cfg_.host + ":" + std::to_string(port) + " (error " +
                          std::to_string(err) + "): " + msg,
                      true);
    }
    alive_ = true;
    simple("SET time_zone = '+00:00'");
    MySqlParams none;
    for (const Row &r : query("SELECT data_type, att_conf_data_type_id FROM att_conf_data_type", none))
        if (r[0] && r[1]) data_type_ids_[*r[0]] = static_cast<unsigned>(std::stoul(*r[1]));
    for (const Row &r : query("SELECT event, att_history_event_id FROM att_history_event", none))
        if (r[0] && r[1]) event_ids_[*r[0]] = static_cast<unsigned>(std::stoul(*r[1]));
    const auto packet = query("SELECT @@max_allowed_packet", none);
    if (!packet.empty() && packet[0][0]) {
        const std::uint64_t max_packet = std::stoull(*packet[0][0]);
        max_statement_bytes_ = std::max<std::uint64_t>(64u << 10, std::min<std::uint64_t>(max_packet / 2, 16u << 20));
    }
}

void MySqlWriter::fail(const std::string &what, unsigned err, const std::string &msg) {
    last_errno_ = err;
    const bool lost = mysql_error_is_connection_lost(err) || message_says_no_space(msg);
    if (lost) alive_ = false;
    throw DbError(what + " (error " + std::to_string(err) + "): " + msg, lost);
}

void MySqlWriter::simple(const std::string &sql) {
    if (!conn_) throw DbError("not connected", true);
    if (mysql_real_query(conn_, sql.data(), static_cast<unsigned long>(sql.size())) != 0)
        fail(sql.substr(0, 60), mysql_errno(conn_), mysql_error(conn_));
    if (MYSQL_RES *r = mysql_store_result(conn_)) mysql_free_result(r);
}

st_mysql_stmt *MySqlWriter::statement(const std::string &sql) {
    auto it = stmts_.find(sql);
    if (it != stmts_.end()) return it->second;
    if (!conn_) throw DbError("not connected", true);
    if (stmts_.size() >= 256) {  // multi-row statements of many sizes: keep the cache bounded
        for (auto &kv : stmts_) mysql_stmt_close(kv.second);
        stmts_.clear();
    }
    MYSQL_STMT *st = mysql_stmt_init(conn_);
    if (!st) fail("mysql_stmt_init", mysql_errno(conn_), mysql_error(conn_));
    if (mysql_stmt_prepare(st, sql.data(), static_cast<unsigned long>(sql.size())) != 0) {
        const unsigned err = mysql_stmt_errno(st);
        const std::string msg = mysql_stmt_error(st);
        mysql_stmt_close(st);
        fail("prepare " + sql.substr(0, 80), err, msg);
    }
    stmts_.emplace(sql, st);
    return st;
}

std::uint64_t MySqlWriter::exec(const std::string &sql, MySqlParams &params, std::uint64_t *insert_id) {
    MYSQL_STMT *st = statement(sql);
    std::vector<MYSQL_BIND> b = params.binds();
    if (mysql_stmt_param_count(st) != b.size())
        throw DbError("internal: " + std::to_string(b.size()) + " parameters for " + sql.substr(0, 80), false);
    if ((!b.empty() && mysql_stmt_bind_param(st, b.data()) != 0) || mysql_stmt_execute(st) != 0)
        fail(sql.substr(0, 80), mysql_stmt_errno(st), mysql_stmt_error(st));
    const my_ulonglong n = mysql_stmt_affected_rows(st);
    if (insert_id) *insert_id = mysql_stmt_insert_id(st);
    return n == static_cast<my_ulonglong>(-1) ? 0 : n;
}

std::vector<MySqlWriter::Row> MySqlWriter::query(const std::string &sql, MySqlParams &params) {
    MYSQL_STMT *st = statement(sql);
    std::vector<MYSQL_BIND> b = params.binds();
    if (mysql_stmt_param_count(st) != b.size())
        throw DbError("internal: " + std::to_string(b.size()) + " parameters for " + sql.substr(0, 80), false);
    if ((!b.empty() && mysql_stmt_bind_param(st, b.data()) != 0) || mysql_stmt_execute(st) != 0)
        fail(sql.substr(0, 80), mysql_stmt_errno(st), mysql_stmt_error(st));
    std::vector<Row> rows;
    const unsigned ncol = mysql_stmt_field_count(st);
    if (ncol == 0) return rows;
    constexpr unsigned long kBuf = 1024;
    std::vector<std::vector<char>> bufs(ncol, std::vector<char>(kBuf));
    std::vector<unsigned long> lengths(ncol);
    std::vector<my_bool> nulls(ncol), errors(ncol);
    std::vector<MYSQL_BIND> rb(ncol);
    for (unsigned c = 0; c < ncol; ++c) {
        std::memset(&rb[c], 0, sizeof(MYSQL_BIND));
        rb[c].buffer_type = MYSQL_TYPE_STRING;
        rb[c].buffer = bufs[c].data();
        rb[c].buffer_length = kBuf;
        rb[c].length = &lengths[c];
        rb[c].is_null = &nulls[c];
        rb[c].error = &errors[c];
    }
    if (mysql_stmt_bind_result(st, rb.data()) != 0 || mysql_stmt_store_result(st) != 0)
        fail(sql.substr(0, 80), mysql_stmt_errno(st), mysql_stmt_error(st));
    for (;;) {
        const int rc = mysql_stmt_fetch(st);
        if (rc == MYSQL_NO_DATA) break;
        if (rc == 1) {
            const unsigned err = mysql_stmt_errno(st);
            const std::string msg = mysql_stmt_error(st);
            mysql_stmt_free_result(st);
            fail(sql.substr(0, 80), err, msg);
        }
        Row row(ncol);
        for (unsigned c = 0; c < ncol; ++c) {
            if (nulls[c]) continue;
            if (lengths[c] <= kBuf) {
                row[c] = std::string(bufs[c].data(), lengths[c]);
                continue;
            }
            std::string big(lengths[c], '\0');
            MYSQL_BIND one;
            std::memset(&one, 0, sizeof one);
            unsigned long len = 0;
            one.buffer_type = MYSQL_TYPE_STRING;
            one.buffer = big.data();
            one.buffer_length = lengths[c];
            one.length = &len;
            mysql_stmt_fetch_column(st, &one, c, 0);
            row[c] = std::move(big);
        }
        rows.push_back(std::move(row));
    }
    mysql_stmt_free_result(st);
    return rows;
}

const MySqlWriter::TableInfo &MySqlWriter::table_info(const std::string &table) {
    auto it = tables_.find(table);
    if (it != tables_.end()) return it->second;
    TableInfo info;
    MySqlParams p;
    p.text(table);
    for (const Row &r : query("SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() "
                              "AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION",
                              p))
        if (r[0]) info.columns.push_back(*r[0]);
    info.exists = !info.columns.empty();
    return tables_.emplace(table, std::move(info)).first->second;
}

unsigned MySqlWriter::history_event_id(const std::string &event) {
    auto it = event_ids_.find(event);
    if (it != event_ids_.end()) return it->second;
    MySqlParams p;
    p.text(event);
    auto rows = query("SELECT att_history_event_id FROM att_history_event WHERE event = ?", p);
    if (rows.empty()) {
        MySqlParams ins;
        ins.text(event);
        exec("INSERT INTO att_history_event (event) VALUES (?)", ins);
        rows = query("SELECT att_history_event_id FROM att_history_event WHERE event = ?", p);
    }
    if (rows.empty() || !rows[0][0]) throw DbError("history event '" + event + "' missing", false);
    return event_ids_[event] = static_cast<unsigned>(std::stoul(*rows[0][0]));
}

void MySqlWriter::insert_history(unsigned att, unsigned event_id, TimePoint t) {
    MySqlParams p;
    p.integer(att);
    p.time(t);
    p.integer(event_id);
    exec("INSERT IGNORE INTO att_history (att_conf_id, time, att_history_event_id) VALUES (?, ?, ?)", p);
}

unsigned MySqlWriter::att_id(const Record &rec, bool may_create) {
    auto it = att_ids_.find(rec.att_name);
    if (it != att_ids_.end()) return it->second;
    const std::string select = "SELECT att_conf_id FROM att_conf WHERE att_name = ?";
    MySqlParams name;
    name.text(rec.att_name);
    auto rows = query(select, name);
    if (!rows.empty() && rows[0][0]) return att_ids_[rec.att_name] = static_cast<unsigned>(std::stoul(*rows[0][0]));
    if (!may_create || !rec.types_known()) return 0;
    const std::string kind = mysql_table_name(rec.data_type, rec.data_format, rec.write_type).substr(4);
    auto kt = data_type_ids_.find(kind);
    if (kt == data_type_ids_.end()) throw DbError("att_conf_data_type has no row '" + kind + "'", false);
    const NameParts parts = split_attribute_name(rec.att_name);
    MySqlParams p;
    p.text(rec.att_name);
    p.integer(kt->second);
    p.integer(rec.ttl_hours);
    p.text(parts.cs_name);
    p.text(parts.domain);
    p.text(parts.family);
    p.text(parts.member);
    p.text(parts.name);
    std::uint64_t new_id = 0;
    const std::uint64_t inserted =
        exec("INSERT IGNORE INTO att_conf (att_name, att_conf_data_type_id, att_ttl, facility, domain, family, member, "
             "name) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
             p, &new_id);
    unsigned id = 0;
    if (inserted == 1 && new_id > 0) {
        id = static_cast<unsigned>(new_id);
        insert_history(id, history_event_id("add"), add_event_time(rec));
    } else {
        rows = query(select, name);
        if (rows.empty() || !rows[0][0]) throw DbError("att_conf row for " + rec.att_name + " vanished", false);
        id = static_cast<unsigned>(std::stoul(*rows[0][0]));
    }
    return att_ids_[rec.att_name] = id;
}

unsigned MySqlWriter::error_desc_id(const std::string &desc) {
    auto it = error_ids_.find(desc);
    if (it != error_ids_.end()) return it->second;
    const std::string d = utf8_truncate(desc, kErrorDescChars);
    MySqlParams p;
    p.text(d);
    exec("INSERT IGNORE INTO att_error_desc (error_desc) VALUES (?)", p);
    auto rows = query("SELECT att_error_desc_id FROM att_error_desc WHERE error_desc = ?", p);
    if (rows.empty() || !rows[0][0]) throw DbError("att_error_desc row vanished", false);
    return error_ids_[desc] = static_cast<unsigned>(std::stoul(*rows[0][0]));
}

void MySqlWriter::store_param(const Record &r, unsigned att) {
    const ParamInfo &pi = *r.param;
    const bool has_enum = table_info("att_parameter").has("enum_labels");
    MySqlParams p;
    p.integer(att);
    p.time(r.recv_time);
    for (const std::string *s : {&pi.label, &pi.unit, &pi.standard_unit, &pi.display_unit, &pi.format,
                                 &pi.archive_rel_change, &pi.archive_abs_change, &pi.archive_period, &pi.description})
        p.text(*s);
    std::string sql =
        "INSERT IGNORE INTO att_parameter (att_conf_id, recv_time, label, unit, standard_unit, display_unit, format, "
        "archive_rel_change, archive_abs_change, archive_period, description";
    if (has_enum) {
        std::string labels = "[";
        for (std::size_t i = 0; i < pi.enum_labels.size(); ++i)
            labels += (i ? "," : "") + json_quote(pi.enum_labels[i]);
        p.own(labels + "]");
        sql += ", enum_labels) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    } else {
        sql += ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    }
    exec(sql, p);
}

void MySqlWriter::store_history(const Record &r, unsigned att) {
    if (r.text == "start") {
        MySqlParams p;
        p.integer(att);
        const auto last =
            query("SELECT att_history_event_id FROM att_history WHERE att_conf_id = ? ORDER BY time DESC LIMIT 1", p);
        if (!last.empty() && last[0][0] && std::stoul(*last[0][0]) == history_event_id("start"))
            insert_history(att, history_event_id("crash"), r.data_time - std::chrono::microseconds(1));
    } else if (r.text == "update_ttl") {
        MySqlParams p;
        p.integer(r.ttl_hours);
        p.integer(att);
        exec("UPDATE att_conf SET att_ttl = ? WHERE att_conf_id = ?", p);
    }
    insert_history(att, history_event_id(r.text), r.data_time);
}

const MySqlWriter::TablePlan &MySqlWriter::table_plan(const TableKey &t) {
    auto it = plans_.find(t);
    if (it != plans_.end()) return it->second;
    TablePlan plan;
    plan.table = mysql_table_name(t.type, t.format, t.rw ? kReadWrite : kRead);
    const TableInfo &ti = table_info(plan.table);
    plan.exists = ti.exists;
    const bool array = t.format != kScalar;
    plan.per_element = array && ti.has("idx");
    const bool json = array && !plan.per_element;
    static const std::pair<const char *, Fill> known[] = {
        {"att_conf_id", Fill::AttConfId}, {"data_time", Fill::DataTime}, {"recv_time", Fill::RecvTime},
        {"idx", Fill::Idx},               {"dim_x_r", Fill::DimXR},      {"dim_y_r", Fill::DimYR},
        {"value_r", Fill::ValueR},        {"dim_x_w", Fill::DimXW},      {"dim_y_w", Fill::DimYW},
        {"value_w", Fill::ValueW},        {"quality", Fill::Quality},    {"att_error_desc_id", Fill::ErrorDescId},
        {"format_r", Fill::FormatR},      {"format_w", Fill::FormatW}};
    std::string names;
    for (const std::string &c : ti.columns) {
        const auto k = std::find_if(std::begin(known), std::end(known), [&c](const auto &x) { return c == x.first; });
        if (k == std::end(known)) continue;
        Fill f = k->second;
        if (json && f == Fill::ValueR) f = Fill::JsonR;
        if (json && f == Fill::ValueW) f = Fill::JsonW;
        plan.fills.push_back(f);
        names += (names.empty() ? "" : ", ") + quote_ident(c);
    }
    plan.head = std::string(settings_.ignore_duplicates ? "INSERT IGNORE INTO " : "INSERT INTO ") +
                quote_ident(plan.table) + " (" + names + ") VALUES ";
    plan.tuple = "(";
    for (std::size_t i = 0; i < plan.fills.size(); ++i) plan.tuple += i ? ", ?" : "?";
    plan.tuple += ")";
    // At most 65535 placeholders per statement (the protocol's limit).
    plan.max_rows = std::max<std::size_t>(
        1, std::min<std::size_t>(cfg_.batch_size ? cfg_.batch_size : 1000,
                                 65535 / std::max<std::size_t>(1, plan.fills.size())));
    return plans_.emplace(t, std::move(plan)).first->second;
}

std::size_t MySqlWriter::store_table(const TableKey &t, const std::vector<Record> &batch,
                                     const std::vector<std::size_t> &idx) {
    const TablePlan &plan = table_plan(t);
    if (!plan.exists) throw DbError("table " + plan.table + " does not exist", false);
    const int type = t.type, format = t.format;
    MySqlParams params;
    params.reserve(std::min<std::size_t>(plan.max_rows, 4096) * plan.fills.size());
    std::size_t rows_in_chunk = 0, rows_sent = 0;
    std::uint64_t affected = 0;
    auto flush = [&] {
        if (rows_in_chunk == 0) return;
        std::string sql = plan.head;
        sql.reserve(plan.head.size() + rows_in_chunk * (plan.tuple.size() + 1));
        for (std::size_t i = 0; i < rows_in_chunk; ++i) {
            if (i) sql += ',';
            sql += plan.tuple;
        }
        affected += exec(sql, params);
        rows_sent += rows_in_chunk;
        params.clear();
        rows_in_chunk = 0;
    };

    for (std::size_t i : idx) {
        const Record &r = batch[i];
        const unsigned att = att_ids_.at(r.att_name);
        const bool err = r.kind == RecordKind::Error;
        const unsigned err_id = err ? error_ids_.at(r.text) : 0;
        const std::size_t nr = err ? 0 : element_count(type, r.value_r);
        const std::size_t nw = (err || !t.rw) ? 0 : element_count(type, r.value_w);
        const auto [dxr, dyr] = dims_of(format, nr, r.dim_x_r, r.dim_y_r);
        const auto [dxw, dyw] = dims_of(format, nw, r.dim_x_w, r.dim_y_w);
        // Scalars and JSON arrays are one row (e = 0 below); arrays with idx one row per element.
        const std::size_t nrows = plan.per_element ? std::max<std::size_t>({nr, nw, 1}) : 1;
        for (std::size_t e = 0; e < nrows; ++e) {
            if (rows_in_chunk >= plan.max_rows || params.bytes() >= max_statement_bytes_) flush();
            for (const Fill f : plan.fills) {
                switch (f) {
                    case Fill::AttConfId: params.integer(att); break;
                    case Fill::DataTime: params.time(r.data_time); break;
                    case Fill::RecvTime: params.time(r.recv_time); break;
                    case Fill::Idx: params.integer(static_cast<std::int64_t>(e)); break;
                    case Fill::DimXR: params.integer(dxr); break;
                    case Fill::DimYR: params.integer(dyr); break;
                    case Fill::DimXW: params.integer(dxw); break;
                    case Fill::DimYW: params.integer(dyw); break;
                    case Fill::Quality: params.integer(r.quality); break;
                    case Fill::ErrorDescId: err ? params.integer(err_id) : params.null(); break;
                    case Fill::ValueR: e < nr ? bind_element(params, type, r.value_r, e) : params.null(); break;
                    case Fill::ValueW: e < nw ? bind_element(params, type, r.value_w, e) : params.null(); break;
                    // JSON layout: an empty array stays [], an absent value (INVALID, error) is NULL.
                    case Fill::JsonR:
                        if (err || std::holds_alternative<std::monostate>(r.value_r)) params.null();
                        else params.own(json_values(type, r.value_r));
                        break;
                    case Fill::JsonW:
                        if (err || std::holds_alternative<std::monostate>(r.value_w)) params.null();
                        else params.own(json_values(type, r.value_w));
                        break;
                    case Fill::FormatR: e < nr ? bind_format(params, r.value_r, e) : params.null(); break;
                    case Fill::FormatW: e < nw ? bind_format(params, r.value_w, e) : params.null(); break;
                }
            }
            ++rows_in_chunk;
        }
    }
    flush();
    // INSERT IGNORE: rows not inserted were already there. Events are counted, not element rows.
    const std::uint64_t missing = rows_sent > affected ? rows_sent - affected : 0;
    if (missing == 0 || rows_sent == 0) return 0;
    return std::min<std::size_t>(idx.size(), static_cast<std::size_t>((missing * idx.size() + rows_sent - 1) / rows_sent));
}

std::optional<BatchWriter::TableKey> MySqlWriter::data_table(const Record &r) const {
    if (!r.types_known()) return std::nullopt;
    return TableKey{r.data_type, r.data_format, r.write_type != kRead};
}

void MySqlWriter::prepare_meta(const Record &r) {
    if (r.kind == RecordKind::History) history_event_id(r.text);
    if (r.kind == RecordKind::Param) table_info("att_parameter");
}

void MySqlWriter::begin() { simple("START TRANSACTION"); }

void MySqlWriter::store_meta(const Record &r) {
    if (r.kind == RecordKind::Param) store_param(r, att_ids_.at(r.att_name));
    else store_history(r, att_ids_.at(r.att_name));
}

void MySqlWriter::commit() { simple("COMMIT"); }

void MySqlWriter::rollback() noexcept {
    if (!conn_) return;
    // The failed statement's error number tells a duplicate (last_error_was_duplicate): keep it.
    const unsigned saved = last_errno_;
    mysql_query(conn_, "ROLLBACK");
    last_errno_ = saved;
}

bool MySqlWriter::last_error_was_duplicate() const { return last_errno_ == ER_DUP_ENTRY; }

}  // namespace hdbbench
