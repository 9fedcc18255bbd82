// SPDX-License-Identifier: Apache-2.0
// The event sequence of one attribute, computed in order (value-function.md): values, quality, error, digest.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spec.h"

namespace hdbgen {

class Stream {
public:
    Stream(uint64_t seed, const std::string &key, const AttrSpec &spec);

    void rewind();  // the next event is event 0 again
    void next();    // compute the next event; the accessors below then describe it
    uint64_t k() const { return k_; }
    uint64_t next_k() const { return next_k_; }
    bool error() const { return error_; }
    uint8_t quality() const { return quality_; }  // kInvalid for an error event
    bool has_value() const { return !error_ && quality_ != kInvalid; }
    uint64_t digest() const { return digest_; }
    const std::string &canonical_bytes() const { return canonical_; }

    // The model value (also computed for INVALID and error events, e.g. for a set point):
    // typed elements in native little-endian order for every kind but strings; the payload bytes of
    // DevEncoded; the strings of DevString.
    const std::vector<uint8_t> &raw() const { return raw_; }
    const std::vector<std::string> &strings() const { return strings_; }
    const std::string &encoded_format() const { return encoded_format_; }
    const AttrSpec &spec() const { return spec_; }

private:
    void numeric_values(uint64_t word);
    void choice_values(uint64_t word);
    void string_values(uint64_t word);
    void encoded_values(uint64_t word);
    double grid(uint64_t word, int64_t j);
    void store_numeric(int64_t j, double g);
    void build_canonical();

    AttrSpec spec_;
    uint64_t base_;
    int64_t m_;
    std::vector<int64_t> walk_sums_;
    std::vector<uint32_t> choice_codes_;  // DevState codes or enum indices of the choices
    uint64_t k_ = 0, next_k_ = 0;
    bool error_ = false;
    uint8_t quality_ = kValid;
    uint64_t digest_ = 0;
    std::vector<uint8_t> raw_;
    std::vector<std::string> strings_;
    std::string encoded_format_;
    std::string canonical_;
};

}  // namespace hdbgen
