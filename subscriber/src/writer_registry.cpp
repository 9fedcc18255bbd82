// SPDX-License-Identifier: Apache-2.0
#include "writer_registry.h"

#include <algorithm>
#include <stdexcept>

namespace hdbbench {

namespace {
std::string joined(const std::vector<std::string> &v, const char *sep) {
    std::string s;
    for (const auto &x : v) s += (s.empty() ? "" : sep) + x;
    return s;
}
}  // namespace

WriterRegistry &WriterRegistry::global() {
    static WriterRegistry registry;
    return registry;
}

void WriterRegistry::add(WriterEntry e) {
    e.name = to_lower(e.name);
    for (auto &a : e.aliases) a = to_lower(a);
    for (auto &p : e.libname_patterns) p = to_lower(p);
    if (e.name.empty() || !e.create) throw std::logic_error("writer registry: a writer needs a name and a factory");
    std::vector<std::string> names = e.aliases;
    names.push_back(e.name);
    for (const auto &n : names)
        if (find(n)) throw std::logic_error("writer registry: backend name '" + n + "' registered twice");
    if (e.is_default)
        for (const auto &other : entries_)
            if (other.is_default)
                throw std::logic_error("writer registry: " + e.name + " and " + other.name + " both claim the default");
    for (const auto &k : e.keys)
        if (LibConfig::is_common_key(k))
            throw std::logic_error("writer registry: " + e.name + " declares the common key '" + k + "'");
    const auto at = std::lower_bound(entries_.begin(), entries_.end(), e.name,
                                     [](const WriterEntry &x, const std::string &n) { return x.name < n; });
    entries_.insert(at, std::move(e));
}

const WriterEntry *WriterRegistry::find(const std::string &name_or_alias) const {
    const std::string n = to_lower(trim(name_or_alias));
    for (const auto &e : entries_)
        if (e.name == n || std::find(e.aliases.begin(), e.aliases.end(), n) != e.aliases.end()) return &e;
    return nullptr;
}

const WriterEntry *WriterRegistry::find_by_libname(const std::string &libname) const {
    const std::string l = to_lower(libname);
    const WriterEntry *best = nullptr;
    std::size_t best_len = 0;
    for (const auto &e : entries_)  // in name order: a tie keeps the first
        for (const auto &p : e.libname_patterns)
            if (!p.empty() && p.size() > best_len && l.find(p) != std::string::npos) {
                best = &e;
                best_len = p.size();
            }
    return best;
}

std::vector<std::string> WriterRegistry::names() const {
    std::vector<std::string> n;
    for (const auto &e : entries_) n.push_back(e.name);
    return n;
}

const WriterEntry &WriterRegistry::resolve(const LibConfig &cfg) const {
    const WriterEntry *chosen = nullptr;
    if (const auto b = cfg.raw.find("backend"); b != cfg.raw.end()) {
        chosen = find(b->second);
        if (!chosen) {
            std::vector<std::string> aliases;
            for (const auto &e : entries_)
                for (const auto &a : e.aliases) aliases.push_back(a + "=" + e.name);
            throw ConfigError("LibConfiguration: unknown backend '" + b->second + "' (backend=" + joined(names(), "|") +
                              (aliases.empty() ? "" : "; aliases " + joined(aliases, ", ")) + ")");
        }
    } else if (!cfg.libname.empty()) {
        chosen = find_by_libname(cfg.libname);
    }
    if (!chosen) {
        const auto d = std::find_if(entries_.begin(), entries_.end(), [](const WriterEntry &e) { return e.is_default; });
        if (d == entries_.end())
            throw ConfigError("LibConfiguration: no backend given and no default writer (backend=" +
                              joined(names(), "|") + ")");
        chosen = &*d;
    }
    for (const auto &e : entries_)
        if (e.check_keys) e.check_keys(cfg);
    if (chosen->check_chosen) chosen->check_chosen(cfg);
    return *chosen;
}

std::unique_ptr<Writer> WriterRegistry::create(const LibConfig &cfg) const {
    const WriterEntry *e = find(cfg.backend);
    if (!e)
        throw ConfigError("LibConfiguration: unknown backend '" + cfg.backend + "' (backend=" + joined(names(), "|") +
                          ")");
    return e->create(cfg);
}

std::unique_ptr<Writer> make_writer(const LibConfig &cfg) { return WriterRegistry::global().create(cfg); }

}  // namespace hdbbench
