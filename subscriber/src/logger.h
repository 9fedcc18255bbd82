// SPDX-License-Identifier: Apache-2.0
// How the core logs: a function of (level, message) given by the Tango layer (or a test).
#pragma once

#include <functional>
#include <string>

namespace hdbbench {

using Logger = std::function<void(const std::string &level, const std::string &msg)>;

inline Logger quiet_if_empty(Logger log) {
    if (log) return log;
    return [](const std::string &, const std::string &) {};
}

}  // namespace hdbbench
