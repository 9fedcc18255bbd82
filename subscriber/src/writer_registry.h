// SPDX-License-Identifier: Apache-2.0
// The writer registry: a backend is a string key (`backend=...` in LibConfiguration, or guessed from
// `libname`), and each writer file registers itself under it, with its aliases, the libname patterns
// it answers to and the LibConfiguration keys of its own (a key table). Nothing outside a writer's
// file names that writer: adding a backend is one writer file and one line in CMakeLists.txt.
//
// Registration is static (a WriterRegistrar object in each writer's .cpp). A static library would
// drop such a file from the link, as nothing refers to it, so the writers are an OBJECT library whose
// objects CMake puts on the link line of every target that links the core (CMakeLists.txt).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config.h"
#include "writer.h"

namespace hdbbench {

// What a writer file registers.
struct WriterEntry {
    std::string name;                           // the canonical `backend` value, lower case
    std::vector<std::string> aliases;           // other `backend` values that select it
    std::vector<std::string> libname_patterns;  // substrings of a lower-cased `libname` that select it
    bool is_default = false;                    // chosen when neither `backend` nor `libname` selects one
    std::vector<std::string> keys;              // its own LibConfiguration keys
    // Parses its own keys from cfg.raw: throws ConfigError naming a key with a bad value. Called for
    // every registered writer, chosen or not, so a bad value is refused whatever the backend (as when
    // all keys were parsed in one place; a LibConfiguration that switches backend stays well-formed).
    std::function<void(const LibConfig &)> check_keys;
    // What the writer needs of the whole configuration when it is the one chosen (may be empty).
    std::function<void(const LibConfig &)> check_chosen;
    std::function<std::unique_ptr<Writer>(const LibConfig &)> create;
};

// Binds a writer's key table to its entry: keys and check_keys. The table must outlive the entry
// (a function-local static of the writer's file).
template <typename Settings>
void bind_keys(WriterEntry &e, const KeyTable<Settings> &table) {
    e.keys = table.keys();
    e.check_keys = [&table](const LibConfig &cfg) { (void)table.parse(cfg.raw); };
}

class WriterRegistry {
public:
    // The registry the writer files fill at static initialisation (constructed on first use, so the
    // order in which the files initialise does not matter).
    static WriterRegistry &global();

    // Throws std::logic_error when the name or an alias is already taken, a second writer claims to
    // be the default, or a writer's key is a common key: programming errors, found at start-up.
    void add(WriterEntry e);

    // By name or alias, case-insensitive; nullptr when unknown.
    const WriterEntry *find(const std::string &name_or_alias) const;
    // The writer whose longest libname pattern occurs in libname (ties: the first name in order);
    // nullptr when none does.
    const WriterEntry *find_by_libname(const std::string &libname) const;
    // Registered names, sorted.
    std::vector<std::string> names() const;

    // The writer cfg selects: `backend` (cfg.raw), else `libname`, else the default. Checks every
    // writer's own keys and the chosen writer's needs. Throws ConfigError (an unknown backend names
    // the key and the known names).
    const WriterEntry &resolve(const LibConfig &cfg) const;
    // The writer of cfg.backend (resolved by LibConfig::parse). Throws ConfigError.
    std::unique_ptr<Writer> create(const LibConfig &cfg) const;

private:
    std::vector<WriterEntry> entries_;  // sorted by name
};

// Static registration: `const WriterRegistrar registrar{entry};` at namespace scope in a writer's .cpp.
struct WriterRegistrar {
    explicit WriterRegistrar(WriterEntry e) { WriterRegistry::global().add(std::move(e)); }
};

// The writer for cfg.backend, from the global registry. Throws ConfigError.
std::unique_ptr<Writer> make_writer(const LibConfig &cfg);

}  // namespace hdbbench
