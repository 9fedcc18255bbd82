// SPDX-License-Identifier: Apache-2.0
// One generated attribute, as the JSON AttrSpec of hdbbench/load/emitter/spec.py (the device property Attributes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "json.h"

namespace hdbgen {

enum class Kind { Bool, Int, Float, String, State, Enum, Encoded };
enum class Type { Boolean, UChar, Short, UShort, Long, ULong, Long64, ULong64, Float, Double, String, State, Enum, Encoded };
enum class Format { Scalar, Spectrum, Image };
enum class Model { Constant, Sine, Step, Noise, Walk, Counter, Cycle };

struct TypeInfo {
    Type type;
    const char *name;    // Tango name, e.g. "DevDouble"
    int tango_number;    // CmdArgType
    Kind kind;
    int size;            // bytes per element in the digest payload (0: strings, encoded)
    double lo, hi;       // integer range clipped to +-2^53 (integer types)
};

const TypeInfo &type_info(Type t);

// Quality numbers of Tango's AttrQuality.
constexpr uint8_t kValid = 0, kInvalid = 1, kAlarm = 2, kWarning = 4;
extern const char *const kStateNames[14];
extern const char *const kErrorReason;

struct AttrSpec {
    std::string name;
    Type type = Type::Double;
    Format format = Format::Scalar;
    bool read_write = false;
    bool push = true;                 // mode "push" (the C++ engine refuses "poll")
    double rate_hz = 1.0;
    int64_t dim_x = 1, dim_y = 0;
    Model model = Model::Walk;
    double offset = 0.0, amplitude = 1.0;
    int64_t period = 100, levels = 2;
    double step = 0.1;
    std::vector<std::string> labels;  // as given
    std::string text;
    double p_error = 0, p_invalid = 0, p_alarm = 0, p_warning = 0;

    const TypeInfo &info() const { return type_info(type); }
    Kind kind() const { return info().kind; }
    int64_t elements() const;                  // values per event (1 for a scalar)
    std::vector<std::string> choices() const;  // of state/enum models
    // Dimensions of the digest and of the Tango value: (1, 0), (n, 0) or (x, y).
    int64_t dim_x_out() const { return format == Format::Scalar ? 1 : dim_x; }
    int64_t dim_y_out() const { return format == Format::Image ? dim_y : 0; }
};

// Parse and check one spec (a JSON object as AttrSpec.to_json writes it); throws std::runtime_error
// "attribute 'name': problem".
AttrSpec parse_spec(const Json &obj);
AttrSpec parse_spec(const std::string &json_line);

}  // namespace hdbgen
