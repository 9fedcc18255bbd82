// SPDX-License-Identifier: Apache-2.0
#include "writer.h"

#include <cstdio>
#include <map>
#include <tuple>
#include <unordered_map>

namespace hdbbench {

namespace {
struct KeyHash {
    std::size_t operator()(const std::pair<std::string, std::int64_t> &k) const {
        return std::hash<std::string>()(k.first) ^ (std::hash<std::int64_t>()(k.second) * 0x9E3779B97F4A7C15ull);
    }
};
}  // namespace

DedupResult dedup_batch(std::vector<Record> &batch) {
    DedupResult res;
    std::unordered_map<std::pair<std::string, std::int64_t>, std::size_t, KeyHash> seen;
    // Data rows first claim their instants, so that an error row never displaces a value.
    std::vector<bool> keep(batch.size(), true);
    for (std::size_t i = 0; i < batch.size(); ++i) {
        const Record &r = batch[i];
        if (r.kind != RecordKind::Data) continue;
        auto key = std::make_pair(r.att_name, static_cast<std::int64_t>(r.data_time.time_since_epoch().count()));
        if (!seen.emplace(std::move(key), i).second) {
            keep[i] = false;
            ++res.dropped;
        }
    }
    for (std::size_t i = 0; i < batch.size(); ++i) {
        Record &r = batch[i];
        if (r.kind != RecordKind::Error) continue;
        std::int64_t t = r.data_time.time_since_epoch().count();
        int tries = 0;
        while (seen.count({r.att_name, t}) && tries < 1000) {
            --t;
            ++tries;
        }
        if (tries == 1000) {
            keep[i] = false;
            ++res.dropped;
            continue;
        }
        if (tries) {
            r.data_time = TimePoint(std::chrono::microseconds(t));
            ++res.shifted;
        }
        seen.emplace(std::make_pair(r.att_name, t), i);
    }
    for (std::size_t i = 0; i < batch.size(); ++i)
        if (keep[i]) res.keep.push_back(i);
    return res;
}

bool is_add_event(const Record &r) { return r.kind == RecordKind::History && r.text == kAddEvent; }

bool may_create_conf(const Record &r, const LibConfig &cfg) { return !cfg.hdbpp_strict || is_add_event(r); }

bool to_store(const Record &r, bool has_conf, const LibConfig &cfg, WriteResult &res) {
    if (!has_conf) {
        res.rejected.push_back({r.att_name, may_create_conf(r, cfg) ? "attribute type unknown and not in att_conf"
                                                                    : "This attribute [" + r.att_name +
                                                                          "] does not exist in the database. Unable to "
                                                                          "work with this attribute until it is added."});
        return false;
    }
    return !is_add_event(r);
}

TimePoint add_event_time(const Record &r) {
    TimePoint t = now_us();
    const TimePoint own = r.kind == RecordKind::History ? r.data_time : r.recv_time;
    if (own.time_since_epoch().count() > 0 && own < t) t = own;
    return t - std::chrono::microseconds(1);
}

std::string json_quote(const std::string &s) {
    std::string o = "\"";
    for (unsigned char c : s) {
        switch (c) {
            case '"': o += "\\\""; break;
            case '\\': o += "\\\\"; break;
            case '\n': o += "\\n"; break;
            case '\r': o += "\\r"; break;
            case '\t': o += "\\t"; break;
            default:
                if (c < 0x20) {
                    char b[8];
                    std::snprintf(b, sizeof b, "\\u%04x", c);
                    o += b;
                } else {
                    o += static_cast<char>(c);
                }
        }
    }
    return o + "\"";
}

bool message_says_no_space(const std::string &msg) {
    return msg.find("No space left on device") != std::string::npos || msg.find("Errcode: 28") != std::string::npos ||
           msg.find("errno: 28") != std::string::npos || msg.find("Disk full") != std::string::npos;
}

bool BatchWriter::TableKey::operator<(const TableKey &o) const {
    return std::tie(type, format, rw) < std::tie(o.type, o.format, o.rw);
}

void BatchWriter::store(const std::vector<Record> &batch, const std::vector<std::size_t> &idx, WriteResult &res) {
    std::map<TableKey, std::vector<std::size_t>> by_table;
    std::vector<std::size_t> meta;
    for (std::size_t i : idx) {
        const Record &r = batch[i];
        if (!to_store(r, resolve_attribute(r, may_create_conf(r, cfg_)), cfg_, res)) continue;
        if (r.kind == RecordKind::Error) prepare_error_desc(r.text);
        if (r.kind == RecordKind::Data || r.kind == RecordKind::Error) {
            const std::optional<TableKey> t = data_table(r);
            if (!t) {
                res.rejected.push_back({r.att_name, "unsupported data type " + std::to_string(r.data_type) +
                                                        "/format " + std::to_string(r.data_format)});
                continue;
            }
            by_table[*t].push_back(i);
        } else {
            prepare_meta(r);
            meta.push_back(i);
        }
    }
    for (const auto &kv : by_table) prepare_table(kv.first);
    begin();
    try {
        for (std::size_t i : meta) store_meta(batch[i]);
        std::size_t rows = 0, dups = 0;
        for (const auto &[table, list] : by_table) {
            dups += store_table(table, batch, list);
            rows += list.size();
        }
        commit();
        res.data_rows += rows;
        res.duplicates += dups;
    } catch (const DbError &e) {
        if (!e.connection_lost()) rollback();
        throw;
    }
}

WriteResult BatchWriter::write_batch(std::vector<Record> &batch) {
    if (!connected()) throw DbError("not connected", true);
    WriteResult res;
    const DedupResult dd = dedup_batch(batch);
    res.duplicates = dd.dropped;
    try {
        store(batch, dd.keep, res);
        return res;
    } catch (const DbError &e) {
        if (e.connection_lost()) throw;
    }
    // A bad row failed the batch: store record by record so that only the bad ones are rejected.
    res = WriteResult{};
    res.duplicates = dd.dropped;
    for (std::size_t i : dd.keep) {
        clear_last_error();
        try {
            store(batch, {i}, res);
        } catch (const DbError &e) {
            if (e.connection_lost()) throw;
            if (last_error_was_duplicate()) {
                ++res.duplicates;
                continue;
            }
            res.rejected.push_back({batch[i].att_name, e.what()});
        }
    }
    return res;
}

}  // namespace hdbbench
