// SPDX-License-Identifier: Apache-2.0
// The `null` backend: a writer that stores no values, only counts, so that a run measures Tango's
// delivery and the subscriber alone (TSBS's null target). It also stands in while the device's
// configuration is bad (state FAULT), counting in memory.
//
// What it counts (NullCounts): data and error events per attribute and per millisecond of source
// time (a database answers "events with since <= data_time < until" exactly; to the millisecond is
// close enough for the bounds a run asks about, which are instants of its own clock), error events by
// description, attribute registrations (the att_conf equivalent, with its `add` history event),
// parameter and history events, duplicates (an event at the same source time as its attribute's
// previous one: a re-subscription's first value). With `counts_dir` set, the counts leave the process
// as two files of <counts_dir>/ named after the process, <pid>-<start µs>, so that the subscribers of
// one database never write the same file; hdbbench.backends.null reads them:
//
//   <stem>.journal  append-only, the "tables": attribute and description registrations and bucket
//                   deltas (the sum of a bucket's lines is its count). Appended about once a second
//                   while events keep coming (a second's events of a bucket in one line), at once when
//                   they pause (no batch for one rewrite period) or an attribute or description is new,
//                   and at close; one write() per append, so a reader ignores a last line without its
//                   newline.
//                     a <idx> <type> <format> <write type> <attribute>
//                     x <desc idx> <description as a JSON string>
//                     d <idx> <ms> <events>
//                     e <idx> <desc idx> <ms> <events>
//   <stem>.counts   rewritten whole (tmp + rename) every `kRewritePeriod` while something changes, and
//                   at close: the totals (the database's inserted-row counter) and the source times of
//                   the data/error events counted in the last two rewrite periods, by attribute index
//                   (what the visibility watch polls). It never names an index the journal lacks.
//                     hdbbench-null-counts 1
//                     written_us <wall clock µs> rewrites <n>
//                     events <data> <errors> <params> <history> <duplicates> <rejected> <attributes>
//                     r <idx> <source µs> <source µs> ...
//
// Hot path: per event one hash lookup of its attribute name (its index, resolved at registration)
// and integer work; the text is produced by the flusher thread, in proportion to what changed.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "stoppable_thread.h"
#include "writer.h"

namespace hdbbench {

// The null writer's own LibConfiguration keys (its key table in null_writer.cpp).
struct NullSettings {
    std::string counts_dir;  // directory of the count files; empty: counts stay in memory
    static NullSettings parse(const LibConfig &cfg);
};

struct NullTotals {
    std::uint64_t data = 0, errors = 0, params = 0, history = 0, duplicates = 0, rejected = 0, attributes = 0;
};

// The counts themselves, without threads or files (what the writer and the flusher share, under a lock).
class NullCounts {
public:
    // Counts a batch as a database stores it (strict mode refuses unknown attributes, as HDB++ does).
    WriteResult add(const std::vector<Record> &batch, const LibConfig &cfg);
    // The journal lines of what changed since the last call (registrations always, the bucket
    // deltas only when `with_buckets`); empty when nothing did.
    std::string take_journal(bool with_buckets);
    // Whether bucket deltas wait for the journal; whether attributes or descriptions are new.
    bool buckets_pending() const { return !bucket_dirty_.empty() || !error_buckets_.empty(); }
    bool registrations_pending() const { return journaled_attrs_ < attrs_.size() || journaled_descs_ < descs_.size(); }
    // Whether the .counts file lists source times (rewritten again until they have aged out).
    bool recent_listed() const { return !recent_dirty_.empty() || !previous_.empty(); }
    // The whole .counts file; the recent source times then move one generation back.
    std::string take_counts_file(TimePoint now);
    NullTotals totals() const { return totals_; }
    std::uint64_t changes() const { return changes_; }  // grows with every batch that counted something

private:
    struct Attr {
        std::string name;
        int type = kUnknown, format = kUnknown, write_type = kUnknown;
        std::int64_t last_data_us = std::numeric_limits<std::int64_t>::min();  // duplicates
        std::int64_t last_error_us = std::numeric_limits<std::int64_t>::min();
        std::int64_t ms = std::numeric_limits<std::int64_t>::min();  // the bucket being counted...
        std::uint32_t in_ms = 0;                                       // ...and its events
        std::vector<std::pair<std::int64_t, std::uint32_t>> left;         // earlier buckets not journaled
        std::vector<std::int64_t> recent, previous;  // source µs counted this rewrite period, and the last
        bool bucket_dirty = false, recent_dirty = false;
    };
    // The attribute of r, created from r when may_create; -1 when it has none.
    int index_of(const Record &r, bool may_create);
    std::uint32_t desc_index(const std::string &desc);
    void count_data(Attr &a, std::int64_t t_us);
    void count_error(std::uint32_t att, const Record &r);

    std::vector<Attr> attrs_;
    std::unordered_map<std::string, std::uint32_t> index_;
    std::vector<std::string> descs_;
    std::unordered_map<std::string, std::uint32_t> desc_index_;
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::int64_t>, std::uint32_t> error_buckets_;
    std::vector<std::uint32_t> bucket_dirty_, recent_dirty_, previous_;
    std::size_t journaled_attrs_ = 0, journaled_descs_ = 0;
    NullTotals totals_;
    std::uint64_t changes_ = 0, rewrites_ = 0;
};

class NullWriter : public Writer {
public:
    NullWriter();  // counts in memory only (the device's placeholder while its configuration is bad)
    NullWriter(LibConfig cfg, NullSettings settings);
    ~NullWriter() override;
    NullWriter(const NullWriter &) = delete;
    NullWriter &operator=(const NullWriter &) = delete;

    std::string name() const override { return "null"; }
    // Needs counts_dir to exist (hdbbench creates it with the "database"); throws DbError otherwise.
    void connect() override;
    bool connected() const override { return connected_; }
    void disconnect() override;  // writes the files a last time
    // Throws DbError(connection lost) while the files cannot be written: the batch is kept and retried.
    WriteResult write_batch(std::vector<Record> &batch) override;

    NullTotals totals() const;
    // File stem in counts_dir: "<pid>-<start µs>".
    const std::string &stem() const { return stem_; }

    static constexpr std::chrono::milliseconds kRewritePeriod{20};
    static constexpr std::chrono::milliseconds kJournalPeriod{1000};

private:
    class Flusher : public StoppableThread {
    public:
        explicit Flusher(NullWriter &w) : writer_(w) {}
        ~Flusher() override { stop(); }
        using StoppableThread::start;
        using StoppableThread::stop;

    private:
        void run() override;
        NullWriter &writer_;
    };

    // One flusher tick (`final`: everything, at close). Records a failure in error_.
    void flush(bool final);
    bool append_journal(const std::string &text);
    bool rewrite_counts(const std::string &text);
    std::string path(const char *suffix) const;

    LibConfig cfg_;
    NullSettings settings_;
    std::string stem_;
    bool connected_ = false;
    int journal_fd_ = -1;
    mutable std::mutex mutex_;  // counts_, error_, unwritten_ and the flush bookkeeping
    NullCounts counts_;
    std::string error_;      // why the files cannot be written (reported by write_batch)
    std::string unwritten_;  // journal text a failed append left, written before the next
    std::uint64_t changes_at_tick_ = 0;
    std::chrono::steady_clock::time_point last_journal_{};
    std::mutex flush_mutex_;  // one flush at a time (the flusher's tick, disconnect)
    Flusher flusher_{*this};
};

}  // namespace hdbbench
