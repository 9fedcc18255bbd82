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

class MySqlWriter : public BatchWriter {
public:
    explicit MySqlWriter(LibConfig cfg);
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
    using Row = std::vector<std::optional<std::string>>;

    [[noreturn]] void fail(const std::string &what, unsigned err, const std::string &msg);
    void simple(const std::string &sql);
    st_mysql_stmt *statement(const std::string &sql);
    // Execute a prepared statement with bound parameters; returns the affected row count.
    std::uint64_t exec(const std::string &sql, MySqlParams &params, std::uint64_t *insert_id = nullptr);
    std::vector<Row> query(const std::string &sql, MySqlParams &params);
    const TableInfo &table_info(const std::string &table);
    unsigned att_id(const Record &r, bool may_create = true);
    unsigned error_desc_id(const std::string &desc);
    unsigned history_event_id(const std::string &event);
    void insert_history(unsigned att, unsigned event_id, TimePoint t);
    void store(std::vector<Record> &batch, const std::vector<std::size_t> &idx, WriteResult &res) override;
    void clear_last_error() override { last_errno_ = 0; }
    // ignore_duplicates=0 and the row is already stored.
    bool last_error_was_duplicate() const override;
    void store_param(const Record &r, unsigned att);
    void store_history(const Record &r, unsigned att);
    // Returns the number of records (events) the table already had.
    std::size_t store_table(const std::string &table, int type, int format, bool rw, std::vector<Record> &batch,
                            const std::vector<std::size_t> &idx);

    LibConfig cfg_;
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
};

// MySQL error numbers that mean the connection (or the server) is gone: the batch is kept and
// retried after reconnecting.
bool mysql_error_is_connection_lost(unsigned err);
// At most `max_chars` UTF-8 characters of `s` (VARCHAR lengths count characters).
std::string utf8_truncate(const std::string &s, std::size_t max_chars);

}  // namespace hdbbench
