// SPDX-License-Identifier: Apache-2.0
// The `null` backend: a writer that stores nothing (it measures the Tango side alone). The device
// also uses one as a placeholder while its configuration is bad (state FAULT).
#pragma once

#include <string>
#include <vector>

#include "writer.h"

namespace hdbbench {

class NullWriter : public Writer {
public:
    std::string name() const override { return "null"; }
    void connect() override { connected_ = true; }
    bool connected() const override { return connected_; }
    void disconnect() override { connected_ = false; }
    WriteResult write_batch(std::vector<Record> &batch) override;

private:
    bool connected_ = false;
};

}  // namespace hdbbench
