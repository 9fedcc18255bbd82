// SPDX-License-Identifier: Apache-2.0
// ClickHouse writer (a what-if engine, hdbbench/backends/clickhouse/): HDB++'s layout on MergeTree tables,
// att_<scalar|array>_<type>, written over HTTP with libcurl: one `INSERT ... FORMAT RowBinary`
// request per data table per batch, the configuration rows (TabSeparated text) (att_conf, att_history, att_parameter,
// att_error_desc) in requests of their own. Ids are FNV-1a (64 bits, top bit cleared) of the
// attribute name or error message, computed here as the Python side computes them (tables.py), so
// that several writers need no shared sequence. Data time is microseconds since the epoch (Int64).
//
// ClickHouse has no transactions: each insert is atomic for its table only. A request the server
// refuses (a bad row) fails the batch, which the batch policy retries record by record; the tables of
// the batch already stored are then stored again (duplicates), which well-formed records never cause.
// A request that gets no answer (connection refused, timeout) is a lost connection: the batch is kept
// and retried; ClickHouse 18.16 does not deduplicate inserts into non-replicated tables, so a retry of
// an insert that the server did store stores it twice.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>

#include "writer.h"

namespace hdbbench {

// The id of a name (attribute or error message): FNV-1a over its bytes, top bit cleared.
std::uint64_t clickhouse_id(const std::string &name);
// Table name of the layout: att_<scalar|array>_<type>.
std::string clickhouse_table_name(int type, int format);
// One TabSeparated field of a string (backslash, tab, newline, carriage return, NUL escaped).
std::string clickhouse_tsv_text(const std::string &s);
// Appends one data/error record to `out` in RowBinary, in the column order att_conf_id, data_time,
// value_r, value_w[, dim_x_r, dim_y_r, dim_x_w, dim_y_w], quality, att_error_desc_id. RowBinary, not
// text: ClickHouse 18.16's text parser does not read every double exactly
// (hdbbench/backends/clickhouse/rowbinary.py).
void clickhouse_data_row(const Record &r, std::string &out);

// Registered as `clickhouse`; keys host, port (the HTTP port), user, password, dbname.
class ClickHouseWriter : public BatchWriter {
public:
    explicit ClickHouseWriter(LibConfig cfg);
    ~ClickHouseWriter() override;
    std::string name() const override { return "clickhouse"; }
    void connect() override;
    bool connected() const override { return curl_ != nullptr; }
    void disconnect() override;

private:
    // POSTs `body` with `query` in the URL (or the query as body when body is empty); returns the
    // response. Throws DbError: lost connection when there is no answer, else a refused statement.
    std::string post(const std::string &query, const std::string &body = std::string());

    bool resolve_attribute(const Record &r, bool may_create) override;
    std::optional<TableKey> data_table(const Record &r) const override;
    void prepare_error_desc(const std::string &desc) override;
    void prepare_meta(const Record &) override {}
    void prepare_table(const TableKey &) override {}
    void begin() override;
    void store_meta(const Record &r) override;
    std::size_t store_table(const TableKey &t, const std::vector<Record> &batch,
                            const std::vector<std::size_t> &idx) override;
    void commit() override;
    void rollback() noexcept override;

    std::string url_;
    void *curl_ = nullptr;  // CURL*
    std::unordered_set<std::string> known_attributes_;
    std::unordered_set<std::uint64_t> known_errors_;
    std::string history_rows_, parameter_rows_;  // of the batch being stored, sent at commit
};

}  // namespace hdbbench
