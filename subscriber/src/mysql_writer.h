// SPDX-License-Identifier: Apache-2.0
// MySQL / MariaDB writer (MariaDB C connector). Tables att_<scalar|array>_<type>_<ro|rw> of
// schemas/mysql/schema.sql; arrays one row per element (idx, dim_x_r, dim_y_r[, dim_x_w, dim_y_w]),
// or one row per event with JSON values when the table has no `idx` column (json_array layout).
// Rows go through prepared multi-row INSERTs (values are bound, never pasted into SQL text), at most
// `batch_size` rows per statement and well under max_allowed_packet. With ignore_duplicates=1
// (the default) they are INSERT IGNORE; otherwise a duplicate fails its statement, and the batch is
// retried record by record, where a duplicate key counts as a duplicate and not as an error.
// Columns are discovered from the catalog, so `lightschema` tables (no recv_time) work as they are.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "writer.h"

struct st_mysql;
struct st_mysql_stmt;

namespace hdbbench {

class MySqlParams;

// The MySQL writer's own LibConfiguration keys (its key table in mysql_writer.cpp). lightschema and
// json_array, libhdb++mysql's layout switches, are checked (it needs integers) and otherwise ignored:
// the layout is read from the catalog.
struct MySqlSettings {
    bool ignore_duplicates = true;  // INSERT IGNORE
    // Throws ConfigError naming a key with a bad value.
    static MySqlSettings parse(const LibConfig &cfg);
};

// Table name of the MySQL layout: att_<scalar|array>_<type>_<ro|rw>.
std::string mysql_table_name(int type, int format, int write_type);

// Registered as `mysql` (alias mariadb; libname *mysql* or *maria*).
class MySqlWriter : public BatchWriter {
public:
    MySqlWriter(LibConfig cfg, MySqlSettings settings);
    ~MySqlWriter() override;
    std::string name() const override { return "mysql"; }
    void connect() override;
    bool connected() const override;
    void disconnect() override;

private:
    struct TableInfo {
        bool exists = false;
        std::vector<std::string> columns;  // in ordinal order
        bool has(const std::string &c) const;
    };
    // What fills one column of a data table's rows.
    enum class Fill : std::uint8_t {
        AttConfId, DataTime, RecvTime, Idx, DimXR, DimYR, DimXW, DimYW, Quality, ErrorDescId,
        ValueR, ValueW,  // one element (scalars, or arrays one row per element)
        JsonR, JsonW,    // the whole value as a JSON array (array tables without idx)
        FormatR, FormatW
    };
    // How a data table's rows are bound, resolved once per table (per connection) from its columns,
    // so that binding a row is a switch per column, not name comparisons.
    struct TablePlan {
        std::string table;
        bool exists = false;
        bool per_element = false;  // arrays one row per element (the table has idx)
        std::vector<Fill> fills;   // the columns we fill, in the table's order; others keep their defaults
        std::string head;          // INSERT [IGNORE] INTO `table` (columns) VALUES
        std::string tuple;         // (?, ?, ...)
        std::size_t max_rows = 1;  // rows per statement
    };
    using Row = std::vector<std::optional<std::string>>;

    [[noreturn]] void fail(const std::string &what, unsigned err, const std::string &msg);
    void simple(const std::string &sql);
    st_mysql_stmt *statement(const std::string &sql);
    // Execute a prepared statement with bound parameters; returns the affected row count.
    std::uint64_t exec(const std::string &sql, MySqlParams &params, std::uint64_t *insert_id = nullptr);
    std::vector<Row> query(const std::string &sql, MySqlParams &params);
    const TableInfo &table_info(const std::string &table);
    const TablePlan &table_plan(const TableKey &t);
    unsigned att_id(const Record &r, bool may_create = true);
    unsigned error_desc_id(const std::string &desc);
    unsigned history_event_id(const std::string &event);
    void insert_history(unsigned att, unsigned event_id, TimePoint t);

    bool resolve_attribute(const Record &r, bool may_create) override { return att_id(r, may_create) != 0; }
    std::optional<TableKey> data_table(const Record &r) const override;
    void prepare_error_desc(const std::string &desc) override { error_desc_id(desc); }
    void prepare_meta(const Record &r) override;
    void prepare_table(const TableKey &t) override { table_plan(t); }
    void begin() override;
    void store_meta(const Record &r) override;
    // Returns the number of records (events) the table already had.
    std::size_t store_table(const TableKey &t, const std::vector<Record> &batch,
                            const std::vector<std::size_t> &idx) override;
    void commit() override;
    void rollback() noexcept override;
    void clear_last_error() override { last_errno_ = 0; }
    // ignore_duplicates=0 and the row is already stored.
    bool last_error_was_duplicate() const override;

    void store_param(const Record &r, unsigned att);
    void store_history(const Record &r, unsigned att);

    MySqlSettings settings_;
    st_mysql *conn_ = nullptr;
    bool alive_ = false;
    unsigned last_errno_ = 0;
    std::uint64_t max_statement_bytes_ = 4u << 20;
    std::map<std::string, st_mysql_stmt *> stmts_;              // per connection
    std::unordered_map<std::string, unsigned> att_ids_;
    std::unordered_map<std::string, unsigned> error_ids_;
    std::unordered_map<std::string, unsigned> event_ids_;        // per connection
    std::unordered_map<std::string, unsigned> data_type_ids_;    // per connection
    std::map<std::string, TableInfo> tables_;                    // per connection
    std::map<TableKey, TablePlan> plans_;                        // per connection
};

// MySQL error numbers that mean the connection (or the server) is gone: the batch is kept and
// retried after reconnecting.
bool mysql_error_is_connection_lost(unsigned err);
// At most `max_chars` UTF-8 characters of `s` (VARCHAR lengths count characters).
std::string utf8_truncate(const std::string &s, std::size_t max_chars);

}  // namespace hdbbench
