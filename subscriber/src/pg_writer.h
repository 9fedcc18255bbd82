// SPDX-License-Identifier: Apache-2.0
// TimescaleDB / PostgreSQL writer (libpq). One writer for both: the schemas differ only by hypertables.
// Data rows go by binary COPY into per-table temporary staging tables, then
// INSERT INTO att_<format>_<type> SELECT ... ON CONFLICT DO NOTHING, in one transaction per batch:
// a duplicate (replay, error row on a data row's instant) never fails the batch nor creates a duplicate.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "pgcopy.h"
#include "writer.h"

struct pg_conn;
struct pg_result;

namespace hdbbench {

// True for a PostgreSQL error after which the same batch can succeed later (kept and retried, not
// rejected): SQLSTATE class 53 (disk full, out of memory, ...), 55P03 (lock timeout), or errno 28
// quoted in the message. sqlstate may be null.
bool pg_error_is_transient(const char *sqlstate, const std::string &msg);

// The PostgreSQL writer's own LibConfiguration keys (its key table in pg_writer.cpp).
struct PgSettings {
    std::string connect_string;  // libpq conninfo; empty: built from the common host, port, ... keys
    // Throws ConfigError naming a key with a bad value.
    static PgSettings parse(const LibConfig &cfg);
};

// libpq conninfo: connect_string, else host/port/user/password/dbname (values quoted).
std::string pg_conninfo(const LibConfig &cfg, const PgSettings &s);

// Table name of the PostgreSQL/TimescaleDB layout: att_<scalar|array|image>_<type>.
std::string pg_table_name(int type, int format);

// Registered as `timescaledb` (the default; libname *timescale*) and `postgresql` (libname *postgres*).
class PgWriter : public BatchWriter {
public:
    PgWriter(LibConfig cfg, PgSettings settings);
    ~PgWriter() override;
    std::string name() const override { return cfg_.backend; }
    void connect() override;
    bool connected() const override;
    void disconnect() override;

private:
    struct TableInfo {
        bool exists = false;
        std::map<std::string, std::string> columns;  // name -> format_type
    };
    class Result;
    Result exec(const std::string &sql, const std::vector<const char *> &params = {});
    // Throws DbError; res (when given) supplies the SQLSTATE that tells a transient error.
    [[noreturn]] void fail(const std::string &what, const pg_result *res = nullptr);
    const TableInfo &table_info(const std::string &table);
    void ensure_stage(int type, int format);
    int att_id(const Record &r, bool may_create = true);
    int error_desc_id(const std::string &desc);
    int history_event_id(const std::string &event);

    bool resolve_attribute(const Record &r, bool may_create) override { return att_id(r, may_create) != 0; }
    std::optional<TableKey> data_table(const Record &r) const override;
    void prepare_error_desc(const std::string &desc) override { error_desc_id(desc); }
    void prepare_meta(const Record &r) override;
    void prepare_table(const TableKey &t) override;
    void begin() override;
    void store_meta(const Record &r) override;
    std::size_t store_table(const TableKey &t, const std::vector<Record> &batch,
                            const std::vector<std::size_t> &idx) override;
    void commit() override;
    void rollback() noexcept override;

    void store_param(const Record &r, int att);
    void store_history(const Record &r, int att);
    bool copy_buffer(const std::string &target, const pgcopy::Buffer &b);  // false: unique violation
    static bool direct_copy_ok(int type, int format, const TableInfo &ti);

    PgSettings settings_;
    pg_conn *conn_ = nullptr;
    std::unordered_map<std::string, int> att_ids_;
    std::unordered_map<int, std::vector<std::string>> enum_labels_;
    std::unordered_map<std::string, int> error_ids_;
    std::unordered_map<std::string, int> event_ids_;
    std::map<std::string, TableInfo> tables_;   // per connection
    std::set<std::string> stages_;              // per connection
};

// "2024-01-02 03:04:05.123456+00"
std::string pg_timestamp(TimePoint t);
// Text form of a text[] value: {"a","b\"c"}.
std::string pg_text_array(const std::vector<std::string> &v);

}  // namespace hdbbench
