// SPDX-License-Identifier: Apache-2.0
// MySQL / MariaDB writer (MariaDB C connector). Tables att_<scalar|array>_<type>_<ro|rw>; arrays one
// row per element (idx, dim_x_r, dim_y_r[, dim_x_w, dim_y_w]). Rows go through multi-row prepared
// INSERTs (values are bound, never pasted into SQL); INSERT IGNORE makes replays and colliding error
// rows harmless.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "writer.h"

struct st_mysql;

namespace hdbbench {

class MySqlWriter : public Writer {
public:
    explicit MySqlWriter(LibConfig cfg);
    ~MySqlWriter() override;
    std::string name() const override { return "mysql"; }
    void connect() override;
    bool connected() const override;
    void disconnect() override;
    WriteResult write_batch(std::vector<Record> &batch) override;

private:
    struct TableInfo {
        bool exists = false;
        std::vector<std::string> columns;
        bool has(const std::string &c) const;
    };
    struct Bound;
    [[noreturn]] void fail(const std::string &what);
    void query(const std::string &sql);
    // Prepared statement execution with string/NULL parameters; returns rows of strings for SELECTs.
    std::vector<std::vector<std::string>> exec(const std::string &sql, const std::vector<const std::string *> &params,
                                               std::size_t *affected = nullptr);
    void exec_bound(const std::string &sql, Bound &b, std::size_t *affected);
    const TableInfo &table_info(const std::string &table);
    unsigned att_id(const Record &r);
    unsigned error_desc_id(const std::string &desc);
    unsigned history_event_id(const std::string &event);
    void store(std::vector<Record> &batch, const std::vector<std::size_t> &idx, WriteResult &res);
    std::size_t store_table(const std::string &table, int type, int format, bool rw, std::vector<Record> &batch,
                            const std::vector<std::size_t> &idx);

    LibConfig cfg_;
    st_mysql *conn_ = nullptr;
    std::unordered_map<std::string, unsigned> att_ids_;
    std::unordered_map<std::string, unsigned> error_ids_;
    std::unordered_map<std::string, unsigned> event_ids_;
    std::map<std::string, TableInfo> tables_;
};

}  // namespace hdbbench
