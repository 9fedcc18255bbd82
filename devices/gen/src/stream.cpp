// SPDX-License-Identifier: Apache-2.0
#include "stream.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "blake2b.h"
#include "valuefn.h"

namespace hdbgen {

namespace {

template <class T>
void put(std::vector<uint8_t> &raw, int64_t j, T v) {
    std::memcpy(raw.data() + static_cast<size_t>(j) * sizeof(T), &v, sizeof(T));
}

void put_u32(std::string &out, uint32_t v) {
    for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

int64_t integer_step(double step) { return std::max<int64_t>(1, static_cast<int64_t>(round_even(step))); }

}  // namespace

Stream::Stream(uint64_t seed, const std::string &key, const AttrSpec &spec)
    : spec_(spec), base_(stream_base(seed, key)), m_(spec.elements()) {
    if (spec_.kind() == Kind::State || spec_.kind() == Kind::Enum) {
        const auto choices = spec_.choices();
        for (size_t i = 0; i < choices.size(); ++i) {
            uint32_t code = static_cast<uint32_t>(i);
            if (spec_.kind() == Kind::State)
                for (uint32_t s = 0; s < 14; ++s)
                    if (choices[i] == kStateNames[s]) code = s;
            choice_codes_.push_back(code);
        }
    }
    if (spec_.kind() == Kind::Encoded) {
        encoded_format_ = spec_.text.empty() ? "raw" : spec_.text;
        raw_.resize(static_cast<size_t>(std::max<int64_t>(spec_.dim_x, 8)));
    } else if (spec_.kind() == Kind::String) {
        strings_.resize(static_cast<size_t>(m_));
    } else {
        raw_.resize(static_cast<size_t>(m_ * spec_.info().size));
    }
    rewind();
}

void Stream::rewind() {
    walk_sums_.assign(static_cast<size_t>(m_), 0);
    next_k_ = 0;
}

void Stream::next() {
    k_ = next_k_++;
    const uint64_t word = event_word(base_, k_);
    error_ = unit(draw(word, kSlotError)) < spec_.p_error;
    const double u = unit(draw(word, kSlotQuality));
    const double c1 = spec_.p_invalid, c2 = c1 + spec_.p_alarm, c3 = c2 + spec_.p_warning;
    quality_ = u < c1 ? kInvalid : u < c2 ? kAlarm : u < c3 ? kWarning : kValid;
    if (error_) quality_ = kInvalid;
    switch (spec_.kind()) {
        case Kind::Bool:
        case Kind::Int:
        case Kind::Float: numeric_values(word); break;
        case Kind::State:
        case Kind::Enum: choice_values(word); break;
        case Kind::String: string_values(word); break;
        case Kind::Encoded: encoded_values(word); break;
    }
    build_canonical();
    digest_ = blake2b64(canonical_.data(), canonical_.size());
}

double Stream::grid(uint64_t word, int64_t j) {
    const auto &s = spec_;
    const double k = static_cast<double>(k_), jj = static_cast<double>(j);
    switch (s.model) {
        case Model::Constant: return s.offset;
        case Model::Sine: return s.offset + s.amplitude * sin2pi(k / static_cast<double>(s.period) + jj / static_cast<double>(m_));
        case Model::Step: {
            const int64_t level = (static_cast<int64_t>(k_) / s.period + j) % s.levels;
            return s.offset + s.amplitude * static_cast<double>(level);
        }
        case Model::Noise: return s.offset + s.amplitude * (2.0 * unit(draw(word, kSlotValue + j)) - 1.0);
        case Model::Counter: {
            const double inc = s.kind() == Kind::Float ? s.step : static_cast<double>(integer_step(s.step));
            return (s.offset + inc * k) + jj;
        }
        case Model::Walk: {
            const uint64_t w = draw(word, kSlotValue + j);
            double path;
            if (s.kind() == Kind::Float) {
                const int64_t q = kWalkQuantum;
                walk_sums_[j] += static_cast<int64_t>(w % static_cast<uint64_t>(2 * q + 1)) - q;
                const double scale = s.step * std::sqrt(3.0) / static_cast<double>(q);
                path = s.offset + scale * static_cast<double>(walk_sums_[j]);
            } else {
                const int64_t st = integer_step(s.step);
                walk_sums_[j] += static_cast<int64_t>(w % static_cast<uint64_t>(2 * st + 1)) - st;
                path = s.offset + static_cast<double>(walk_sums_[j]);
            }
            return fold(path, s.offset - s.amplitude, s.offset + s.amplitude);
        }
        case Model::Cycle: break;
    }
    throw std::logic_error("model without a numeric value");
}

void Stream::store_numeric(int64_t j, double g) {
    const auto &info = spec_.info();
    if (info.kind == Kind::Bool) {
        put<uint8_t>(raw_, j, spec_.model == Model::Constant ? g != 0 : g > spec_.offset);
        return;
    }
    if (info.kind == Kind::Float) {
        if (spec_.type == Type::Float) put<float>(raw_, j, static_cast<float>(g));
        else put<double>(raw_, j, g);
        return;
    }
    if (spec_.model == Model::Counter) {
        const double span = (info.hi - info.lo) + 1;  // wrap counters around the type's range
        g = py_mod(g - info.lo, span) + info.lo;
    }
    const double v = std::min(std::max(round_even(g), info.lo), info.hi);
    switch (spec_.type) {
        case Type::UChar: put<uint8_t>(raw_, j, static_cast<uint8_t>(v)); break;
        case Type::Short: put<int16_t>(raw_, j, static_cast<int16_t>(v)); break;
        case Type::UShort: put<uint16_t>(raw_, j, static_cast<uint16_t>(v)); break;
        case Type::Long: put<int32_t>(raw_, j, static_cast<int32_t>(v)); break;
        case Type::ULong: put<uint32_t>(raw_, j, static_cast<uint32_t>(v)); break;
        case Type::Long64: put<int64_t>(raw_, j, static_cast<int64_t>(v)); break;
        case Type::ULong64: put<uint64_t>(raw_, j, static_cast<uint64_t>(v)); break;
        default: throw std::logic_error("not an integer type");
    }
}

void Stream::numeric_values(uint64_t word) {
    for (int64_t j = 0; j < m_; ++j) store_numeric(j, grid(word, j));
}

void Stream::choice_values(uint64_t word) {
    const auto c = static_cast<int64_t>(choice_codes_.size());
    for (int64_t j = 0; j < m_; ++j) {
        int64_t i = 0;
        switch (spec_.model) {
            case Model::Constant: i = py_mod_int(static_cast<int64_t>(std::trunc(spec_.offset)), c); break;
            case Model::Cycle: i = (static_cast<int64_t>(k_) + j) % c; break;
            case Model::Step: i = (static_cast<int64_t>(k_) / spec_.period + j) % c; break;
            default: i = static_cast<int64_t>(draw(word, kSlotValue + j) % static_cast<uint64_t>(c)); break;
        }
        if (spec_.kind() == Kind::State) put<uint32_t>(raw_, j, choice_codes_[i]);
        else put<int16_t>(raw_, j, static_cast<int16_t>(i));
    }
}

void Stream::string_values(uint64_t word) {
    const auto &labels = spec_.labels;
    const auto n = static_cast<int64_t>(labels.size());
    for (int64_t j = 0; j < m_; ++j) {
        std::string &out = strings_[j];
        switch (spec_.model) {
            case Model::Constant: out = spec_.text; break;
            case Model::Counter:
                out = spec_.text + std::to_string(k_);
                if (m_ != 1) out += "." + std::to_string(j);
                break;
            case Model::Cycle: out = labels[(static_cast<int64_t>(k_) + j) % n]; break;
            default: {
                const uint64_t w = draw(word, kSlotValue + j);
                if (n > 0) {
                    out = labels[w % static_cast<uint64_t>(n)];
                } else {
                    char hex[24];
                    std::snprintf(hex, sizeof hex, "%08" PRIx64, w >> 32);
                    out = spec_.text + hex;
                }
            }
        }
    }
}

void Stream::encoded_values(uint64_t word) {
    const size_t size = raw_.size();
    if (spec_.model == Model::Noise) {
        for (size_t i = 0; i < size; ++i) raw_[i] = static_cast<uint8_t>(draw(word, kSlotValue + i) & 0xFF);
        return;
    }
    const uint64_t head = spec_.model == Model::Counter ? k_ : 0;
    for (size_t i = 0; i < 8; ++i) raw_[i] = static_cast<uint8_t>((head >> (8 * i)) & 0xFF);
    const int64_t base = static_cast<int64_t>(std::trunc(spec_.offset));
    for (size_t i = 8; i < size; ++i) raw_[i] = static_cast<uint8_t>(py_mod_int(base + static_cast<int64_t>(i - 8), 256));
}

void Stream::build_canonical() {
    canonical_.clear();
    if (error_) {
        canonical_ = std::string("e") + kErrorReason;
        return;
    }
    canonical_ += 'v';
    canonical_ += static_cast<char>(quality_);
    if (quality_ == kInvalid) return;
    put_u32(canonical_, static_cast<uint32_t>(spec_.dim_x_out()));
    put_u32(canonical_, static_cast<uint32_t>(spec_.dim_y_out()));
    if (spec_.kind() == Kind::String) {
        for (const auto &s : strings_) {
            canonical_ += s;
            canonical_ += '\0';
        }
    } else if (spec_.kind() == Kind::Encoded) {
        canonical_ += encoded_format_;
        canonical_ += '\0';
        canonical_.append(reinterpret_cast<const char *>(raw_.data()), raw_.size());
    } else {
        canonical_.append(reinterpret_cast<const char *>(raw_.data()), raw_.size());
    }
}

}  // namespace hdbgen
