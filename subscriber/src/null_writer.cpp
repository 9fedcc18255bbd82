// SPDX-License-Identifier: Apache-2.0
#include "null_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "writer_registry.h"

namespace hdbbench {

namespace {
// Source times listed per attribute and rewrite period at most: the visibility watch samples them,
// and a fast attribute must not make the file large.
constexpr std::size_t kRecentCap = 256;

const KeyTable<NullSettings> &null_keys() {
    static const KeyTable<NullSettings> table{
        {"counts_dir", [](NullSettings &s, const std::string &, const std::string &v) { s.counts_dir = v; }},
    };
    return table;
}

WriterEntry null_entry() {
    WriterEntry e;
    e.name = "null";
    e.aliases = {"none"};
    bind_keys(e, null_keys());
    e.create = [](const LibConfig &cfg) { return std::make_unique<NullWriter>(cfg, NullSettings::parse(cfg)); };
    return e;
}
const WriterRegistrar registrar{null_entry()};

std::int64_t floor_ms(std::int64_t us) { return us >= 0 ? us / 1000 : -((-us + 999) / 1000); }

void add_number(std::string &out, std::int64_t v) {
    out += ' ';
    out += std::to_string(v);
}

bool write_all(int fd, const std::string &text) {
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<std::size_t>(n);
    }
    return true;
}
}  // namespace

NullSettings NullSettings::parse(const LibConfig &cfg) { return null_keys().parse(cfg.raw); }

// ------------------------------------------------------------------------------------- counts

int NullCounts::index_of(const Record &r, bool may_create) {
    const auto it = index_.find(r.att_name);
    if (it != index_.end()) return static_cast<int>(it->second);
    if (!may_create || !r.types_known()) return -1;  // as a database needs the types for att_conf
    Attr a;
    a.name = r.att_name;
    a.type = r.data_type;
    a.format = r.data_format;
    a.write_type = r.write_type;
    const auto idx = static_cast<std::uint32_t>(attrs_.size());
    attrs_.push_back(std::move(a));
    index_.emplace(r.att_name, idx);
    ++totals_.attributes;
    ++totals_.history;  // its `add` history event, as a database writes it with the att_conf row
    return static_cast<int>(idx);
}

std::uint32_t NullCounts::desc_index(const std::string &desc) {
    const auto it = desc_index_.find(desc);
    if (it != desc_index_.end()) return it->second;
    const auto idx = static_cast<std::uint32_t>(descs_.size());
    descs_.push_back(desc);
    desc_index_.emplace(desc, idx);
    return idx;
}

void NullCounts::count_data(Attr &a, std::int64_t t_us) {
    const std::int64_t ms = floor_ms(t_us);
    if (ms != a.ms) {  // events mostly come in source-time order: one bucket at a time
        if (a.in_ms) a.left.emplace_back(a.ms, a.in_ms);
        a.ms = ms;
        a.in_ms = 0;
    }
    ++a.in_ms;
}

void NullCounts::count_error(std::uint32_t att, const Record &r) {
    // Error events are rare: a map keyed by (attribute, description, millisecond) is cheap enough.
    const std::int64_t ms = floor_ms(r.data_time.time_since_epoch().count());
    ++error_buckets_[std::make_tuple(att, desc_index(r.text), ms)];
}

WriteResult NullCounts::add(const std::vector<Record> &batch, const LibConfig &cfg) {
    WriteResult res;
    for (const Record &r : batch) {
        const int idx = index_of(r, may_create_conf(r, cfg));
        if (!to_store(r, idx >= 0, cfg, res)) continue;
        Attr &a = attrs_[static_cast<std::size_t>(idx)];
        if (r.kind == RecordKind::Param) {
            ++totals_.params;
            continue;
        }
        if (r.kind == RecordKind::History) {
            ++totals_.history;
            continue;
        }
        if (!r.types_known()) {
            res.rejected.push_back({r.att_name, "unsupported data type " + std::to_string(r.data_type) + "/format " +
                                                    std::to_string(r.data_format)});
            continue;
        }
        // A database keeps one row per (attribute, source time): the same instant again is a
        // duplicate delivery (a re-subscription's first value), not a new event.
        const std::int64_t t_us = r.data_time.time_since_epoch().count();
        std::int64_t &last = r.kind == RecordKind::Data ? a.last_data_us : a.last_error_us;
        if (t_us == last) {
            ++res.duplicates;
            continue;
        }
        last = t_us;
        if (r.kind == RecordKind::Data) {
            count_data(a, t_us);
            ++totals_.data;
        } else {
            count_error(static_cast<std::uint32_t>(idx), r);
            ++totals_.errors;
        }
        ++res.data_rows;
        if (!a.bucket_dirty && r.kind == RecordKind::Data) {
            a.bucket_dirty = true;
            bucket_dirty_.push_back(static_cast<std::uint32_t>(idx));
        }
        if (a.recent.size() < kRecentCap) a.recent.push_back(t_us);
        if (!a.recent_dirty) {
            a.recent_dirty = true;
            recent_dirty_.push_back(static_cast<std::uint32_t>(idx));
        }
    }
    totals_.duplicates += res.duplicates;
    totals_.rejected += res.rejected.size();
    ++changes_;
    return res;
}

std::string NullCounts::take_journal(bool with_buckets) {
    std::string out;
    for (; journaled_attrs_ < attrs_.size(); ++journaled_attrs_) {
        const Attr &a = attrs_[journaled_attrs_];
        out += "a";
        for (const std::int64_t v : {static_cast<std::int64_t>(journaled_attrs_), std::int64_t{a.type},
                                     std::int64_t{a.format}, std::int64_t{a.write_type}})
            add_number(out, v);
        out += ' ' + a.name + '\n';
    }
    for (; journaled_descs_ < descs_.size(); ++journaled_descs_)
        out += "x " + std::to_string(journaled_descs_) + ' ' + json_quote(descs_[journaled_descs_]) + '\n';
    if (!with_buckets) return out;
    for (const std::uint32_t idx : bucket_dirty_) {
        Attr &a = attrs_[idx];
        a.bucket_dirty = false;
        if (a.in_ms) a.left.emplace_back(a.ms, a.in_ms);
        a.in_ms = 0;
        for (const auto &[ms, events] : a.left) {
            out += 'd';
            add_number(out, idx);
            add_number(out, ms);
            add_number(out, events);
            out += '\n';
        }
        a.left.clear();
    }
    bucket_dirty_.clear();
    for (const auto &[key, events] : error_buckets_) {
        out += 'e';
        add_number(out, std::get<0>(key));
        add_number(out, std::get<1>(key));
        add_number(out, std::get<2>(key));
        add_number(out, events);
        out += '\n';
    }
    error_buckets_.clear();
    return out;
}

std::string NullCounts::take_counts_file(TimePoint now) {
    std::string out = "hdbbench-null-counts 1\nwritten_us " + std::to_string(now.time_since_epoch().count()) +
                      " rewrites " + std::to_string(++rewrites_) + "\nevents";
    for (const std::uint64_t v : {totals_.data, totals_.errors, totals_.params, totals_.history, totals_.duplicates,
                                  totals_.rejected, totals_.attributes})
        add_number(out, static_cast<std::int64_t>(v));
    out += '\n';
    // The last two periods' source times: a watch that misses one rewrite still sees every event.
    std::vector<std::uint32_t> listed = recent_dirty_;
    for (const std::uint32_t idx : previous_)
        if (!attrs_[idx].recent_dirty) listed.push_back(idx);
    for (const std::uint32_t idx : listed) {
        Attr &a = attrs_[idx];
        out += "r";
        add_number(out, idx);
        for (const std::int64_t t : a.previous) add_number(out, t);
        for (const std::int64_t t : a.recent) add_number(out, t);
        out += '\n';
        a.previous.swap(a.recent);
        a.recent.clear();
        a.recent_dirty = false;
    }
    // Listed now only through `previous`: nothing left to list next time.
    previous_.clear();
    for (const std::uint32_t idx : listed)
        if (!attrs_[idx].previous.empty()) previous_.push_back(idx);
    recent_dirty_.clear();
    return out;
}

// ------------------------------------------------------------------------------------- writer

NullWriter::NullWriter() = default;

NullWriter::NullWriter(LibConfig cfg, NullSettings settings) : cfg_(std::move(cfg)), settings_(std::move(settings)) {
    stem_ = std::to_string(::getpid()) + "-" + std::to_string(now_us().time_since_epoch().count());
}

NullWriter::~NullWriter() { disconnect(); }

std::string NullWriter::path(const char *suffix) const { return settings_.counts_dir + "/" + stem_ + suffix; }

void NullWriter::connect() {
    if (connected_) return;
    if (settings_.counts_dir.empty()) {
        connected_ = true;
        return;
    }
    struct stat st {};
    if (::stat(settings_.counts_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        throw DbError("null backend: counts_dir " + settings_.counts_dir +
                          " is not a directory (hdbbench creates it with the database)",
                      true);
    journal_fd_ = ::open(path(".journal").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (journal_fd_ < 0)
        throw DbError("null backend: cannot open " + path(".journal") + ": " + std::strerror(errno), true);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        error_.clear();
    }
    flush(true);  // the files exist from now on: the "database" is connected
    std::string error;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        error = error_;
    }
    if (!error.empty()) {
        ::close(journal_fd_);
        journal_fd_ = -1;
        throw DbError(error, true);
    }
    connected_ = true;
    // Named as the writer loop's thread: a run sums the CPU of the threads by name, and publishing the
    // counts is this writer's work, not Tango's reception (hdbbench.trials.insertion.SUBSCRIBER_THREADS).
    flusher_.start("hdb-writer");
}

void NullWriter::disconnect() {
    if (!connected_) return;
    flusher_.stop();
    flush(true);  // at close: everything counted reaches the files
    if (journal_fd_ >= 0) ::close(journal_fd_);
    journal_fd_ = -1;
    connected_ = false;
}

WriteResult NullWriter::write_batch(std::vector<Record> &batch) {
    if (!connected_) throw DbError("not connected", true);
    std::lock_guard<std::mutex> lock(mutex_);
    if (!error_.empty()) throw DbError(error_, true);  // the files are the database: it is gone
    return counts_.add(batch, cfg_);
}

NullTotals NullWriter::totals() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return counts_.totals();
}

void NullWriter::Flusher::run() {
    while (!wait_for(kRewritePeriod)) writer_.flush(false);
}

void NullWriter::flush(bool everything) {
    if (settings_.counts_dir.empty() || journal_fd_ < 0) return;
    std::lock_guard<std::mutex> one_at_a_time(flush_mutex_);
    const auto now = std::chrono::steady_clock::now();
    std::string journal, counts;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        const bool idle = counts_.changes() == changes_at_tick_;
        const bool changed = !idle;
        changes_at_tick_ = counts_.changes();
        // Buckets go to the journal once a second under load (a line then sums a second's events of a bucket),
        // and at once when the events pause, so that a count read after the load is complete.
        const bool buckets = counts_.buckets_pending() &&
                             (everything || idle || now - last_journal_ >= kJournalPeriod);
        if (buckets) last_journal_ = now;
        journal = unwritten_ + counts_.take_journal(buckets);
        unwritten_.clear();
        if (everything || changed || counts_.recent_listed())  // once more after a change: times age out
            counts = counts_.take_counts_file(now_us());
    }
    if (!journal.empty() && !append_journal(journal)) {
        std::lock_guard<std::mutex> lock(mutex_);
        unwritten_ = journal;  // before the next append: the journal loses nothing
        error_ = "null backend: cannot append to " + path(".journal") + ": " + std::strerror(errno);
        return;  // the .counts file never names what the journal does not hold yet
    }
    if (!counts.empty() && !rewrite_counts(counts)) {
        std::lock_guard<std::mutex> lock(mutex_);
        error_ = "null backend: cannot rewrite " + path(".counts") + ": " + std::strerror(errno);
    }
}

bool NullWriter::append_journal(const std::string &text) { return write_all(journal_fd_, text); }

bool NullWriter::rewrite_counts(const std::string &text) {
    const std::string tmp = path(".counts.tmp"), final_path = path(".counts");
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return false;
    const bool ok = write_all(fd, text);
    ::close(fd);
    // rename() replaces the file whole: a reader sees the previous counts or these, never a mix.
    return ok && ::rename(tmp.c_str(), final_path.c_str()) == 0;
}

}  // namespace hdbbench
