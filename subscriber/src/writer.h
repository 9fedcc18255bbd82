// SPDX-License-Identifier: Apache-2.0
// The one small interface behind which every database backend sits. Only the writer thread
// calls a Writer, so implementations need no locking.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "config.h"
#include "record.h"

namespace hdbbench {

class DbError : public std::runtime_error {
public:
    DbError(const std::string &what, bool connection_lost) : std::runtime_error(what), connection_lost_(connection_lost) {}
    // True when the connection is gone, or the database cannot take the batch for now (no space, out
    // of resources, lock wait timeout): the batch was not stored and is retried after reconnecting.
    bool connection_lost() const { return connection_lost_; }

private:
    bool connection_lost_;
};

// True when a database error message reports an operating system "no space" error (errno 28, as
// PostgreSQL and MariaDB quote it): the database is full for now, the rows are not bad.
bool message_says_no_space(const std::string &msg);

struct RejectedRecord {
    std::string att_name;
    std::string error;
};

struct WriteResult {
    std::size_t data_rows = 0;        // data and error rows handed to the database
    std::size_t duplicates = 0;       // rows the database already had (ON CONFLICT DO NOTHING / INSERT IGNORE)
    std::vector<RejectedRecord> rejected;  // records that failed on their own (bad row); the rest is stored
};

class Writer {
public:
    virtual ~Writer() = default;
    virtual std::string name() const = 0;
    // Connect (or reconnect). Throws DbError.
    virtual void connect() = 0;
    virtual bool connected() const = 0;
    virtual void disconnect() = 0;
    // Store a batch in order. Either everything but `rejected` is committed, or DbError(connection_lost)
    // is thrown and nothing can be assumed: the caller retries the same batch, and the writer makes the
    // retry idempotent (no duplicates).
    virtual WriteResult write_batch(std::vector<Record> &batch) = 0;
};

// The batch policy every SQL writer shares: de-duplicate the batch, store it in one transaction, and
// when the database refuses it (other than by losing the connection) store it record by record, so
// that only the bad records are rejected. The store itself is one skeleton too (store() below): a
// writer supplies the backend's parts as hooks, called in this order for a set of records:
// resolve_attribute per record (its att_conf row); then, in autocommit, as identifiers must exist
// whatever happens to the data transaction, prepare_error_desc (error records), prepare_meta
// (history/parameter records) and prepare_table (once per data table); then begin, store_meta per
// history/parameter record, store_table per data table and commit; rollback when a bad row (not a
// lost connection) failed the transaction.
class BatchWriter : public Writer {
public:
    explicit BatchWriter(LibConfig cfg) : cfg_(std::move(cfg)) {}
    WriteResult write_batch(std::vector<Record> &batch) final;

protected:
    // A data table of the backend's layout: the records of one key go to one table.
    struct TableKey {
        int type = 0;
        int format = 0;
        bool rw = false;  // the layout splits tables by write type (MySQL); false when it does not
        bool operator<(const TableKey &o) const;
    };

    // Whether r's attribute has its att_conf row, looked up or, when may_create, created from r.
    virtual bool resolve_attribute(const Record &r, bool may_create) = 0;
    // The table of a data/error record; nullopt when the layout has none for its type/format.
    virtual std::optional<TableKey> data_table(const Record &r) const = 0;
    virtual void prepare_error_desc(const std::string &desc) = 0;
    virtual void prepare_meta(const Record &r) = 0;
    virtual void prepare_table(const TableKey &t) = 0;
    virtual void begin() = 0;
    virtual void store_meta(const Record &r) = 0;
    // Stores the data/error records `idx` of `batch` into table t; returns how many the table had already.
    virtual std::size_t store_table(const TableKey &t, const std::vector<Record> &batch,
                                    const std::vector<std::size_t> &idx) = 0;
    virtual void commit() = 0;
    // Best effort, after a bad row failed the transaction (the connection is still there).
    virtual void rollback() noexcept = 0;
    virtual void clear_last_error() {}
    // Whether the last error was a row already stored (counted as a duplicate, not as a rejection).
    virtual bool last_error_was_duplicate() const { return false; }

    LibConfig cfg_;

private:
    // Stores the records `idx` of `batch` in one transaction. Throws DbError.
    void store(const std::vector<Record> &batch, const std::vector<std::size_t> &idx, WriteResult &res);
};

// Within one batch, (att_name, data_time) must be unique among data/error rows. A second data row
// with the key of a first one is dropped (it is a duplicate delivery); an error row that collides is
// moved back 1 µs at a time to a free instant (at most 1000 µs, else dropped). Returns the indexes of
// the records to store, in order, and counts the dropped ones.
struct DedupResult {
    std::vector<std::size_t> keep;
    std::size_t dropped = 0;
    std::size_t shifted = 0;
};
DedupResult dedup_batch(std::vector<Record> &batch);

// The `add` history event of an attribute: it creates the att_conf row and stores nothing else.
bool is_add_event(const Record &r);
// Whether storing r may create its attribute's att_conf row: always, except in strict mode, where
// only the `add` event (AttributeAdd) may, as in HDB++.
bool may_create_conf(const Record &r, const LibConfig &cfg);
// Whether r goes on to be stored once its attribute's att_conf row was looked up (has_conf): not
// when the row is missing (r is rejected, in hdbpp-es's words in strict mode), nor for an `add`
// event, whose work (the row and its `add` history) is then done.
bool to_store(const Record &r, bool has_conf, const LibConfig &cfg, WriteResult &res);

// Time of the `add` history event of an attribute first seen with record r: just before r
// (its reception, or its own time for history records), so that `add` precedes `start`.
TimePoint add_event_time(const Record &r);

// Minimal JSON string quoting.
std::string json_quote(const std::string &s);

}  // namespace hdbbench
