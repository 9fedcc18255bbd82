// SPDX-License-Identifier: Apache-2.0
#include "spec.h"

#include <cmath>
#include <set>
#include <stdexcept>

namespace hdbgen {

namespace {

constexpr double k53 = 9007199254740992.0;  // 2^53: 64-bit types stay within exact doubles

const TypeInfo kTypes[] = {
    {Type::Boolean, "DevBoolean", 1, Kind::Bool, 1, 0, 1},
    {Type::UChar, "DevUChar", 22, Kind::Int, 1, 0, 255},
    {Type::Short, "DevShort", 2, Kind::Int, 2, -32768, 32767},
    {Type::UShort, "DevUShort", 6, Kind::Int, 2, 0, 65535},
    {Type::Long, "DevLong", 3, Kind::Int, 4, -2147483648.0, 2147483647.0},
    {Type::ULong, "DevULong", 7, Kind::Int, 4, 0, 4294967295.0},
    {Type::Long64, "DevLong64", 23, Kind::Int, 8, -k53, k53},
    {Type::ULong64, "DevULong64", 24, Kind::Int, 8, 0, k53},
    {Type::Float, "DevFloat", 4, Kind::Float, 4, 0, 0},
    {Type::Double, "DevDouble", 5, Kind::Float, 8, 0, 0},
    {Type::String, "DevString", 8, Kind::String, 0, 0, 0},
    {Type::State, "DevState", 19, Kind::State, 4, 0, 0},
    {Type::Enum, "DevEnum", 29, Kind::Enum, 2, 0, 0},
    {Type::Encoded, "DevEncoded", 28, Kind::Encoded, 0, 0, 0},
};

const std::vector<std::string> kDefaultStates = {"ON", "MOVING", "STANDBY", "ALARM", "FAULT"};
const std::vector<std::string> kDefaultEnumLabels = {"OFF", "ON", "FAULT"};

struct ModelName {
    Model model;
    const char *name;
};
const ModelName kModels[] = {{Model::Constant, "constant"}, {Model::Sine, "sine"}, {Model::Step, "step"},
                             {Model::Noise, "noise"}, {Model::Walk, "walk"}, {Model::Counter, "counter"},
                             {Model::Cycle, "cycle"}};

// The models each kind allows, and its default (hdbbench/load/emitter/types.py MODELS and DEFAULT_MODEL).
std::set<Model> models_of(Kind k) {
    switch (k) {
        case Kind::Bool: return {Model::Constant, Model::Step, Model::Noise, Model::Sine};
        case Kind::Int:
        case Kind::Float: return {Model::Constant, Model::Sine, Model::Step, Model::Noise, Model::Walk, Model::Counter};
        case Kind::String: return {Model::Constant, Model::Counter, Model::Cycle, Model::Noise};
        case Kind::State:
        case Kind::Enum: return {Model::Constant, Model::Cycle, Model::Step, Model::Noise};
        case Kind::Encoded: return {Model::Constant, Model::Counter, Model::Noise};
    }
    return {};
}

Model default_model(Kind k) {
    switch (k) {
        case Kind::Bool: return Model::Step;
        case Kind::Int:
        case Kind::Float: return Model::Walk;
        case Kind::String:
        case Kind::Encoded: return Model::Counter;
        case Kind::State:
        case Kind::Enum: return Model::Cycle;
    }
    return Model::Walk;
}

}  // namespace

const char *const kStateNames[14] = {"ON", "OFF", "CLOSE", "OPEN", "INSERT", "EXTRACT", "MOVING",
                                     "STANDBY", "FAULT", "INIT", "RUNNING", "ALARM", "DISABLE", "UNKNOWN"};
const char *const kErrorReason = "HdbBench_SimulatedError";

const TypeInfo &type_info(Type t) { return kTypes[static_cast<int>(t)]; }

int64_t AttrSpec::elements() const {
    if (format == Format::Spectrum) return dim_x;
    if (format == Format::Image) return dim_x * dim_y;
    return 1;
}

std::vector<std::string> AttrSpec::choices() const {
    if (!labels.empty()) return labels;
    if (kind() == Kind::Enum) return kDefaultEnumLabels;
    if (kind() == Kind::State) return kDefaultStates;
    return labels;
}

AttrSpec parse_spec(const Json &o) {
    AttrSpec s;
    s.name = o["name"].string();
    auto fail = [&](const std::string &msg) { return std::runtime_error("attribute '" + s.name + "': " + msg); };
    try {
        const std::string type = o["type"].string();
        bool found = false;
        for (const auto &t : kTypes)
            if (type == t.name) {
                s.type = t.type;
                found = true;
            }
        if (!found) throw fail("unknown type " + type);
        const std::string fmt = o["format"].string();
        if (fmt == "SCALAR") s.format = Format::Scalar;
        else if (fmt == "SPECTRUM") s.format = Format::Spectrum;
        else if (fmt == "IMAGE") s.format = Format::Image;
        else throw fail("unknown format " + fmt);
        const std::string write = o["write"].string();
        if (write != "READ" && write != "READ_WRITE") throw fail("unknown write type " + write);
        s.read_write = write == "READ_WRITE";
        const std::string mode = o["mode"].string();
        if (mode == "poll") throw fail("mode 'poll' is served by the Python engine only (HdbBenchSim)");
        if (mode != "push") throw fail("unknown mode " + mode);
        s.rate_hz = o["rate_hz"].number();
        s.dim_x = o["dim_x"].integer();
        s.dim_y = o["dim_y"].integer();
        const std::string model = o["model"].string();
        s.model = default_model(s.kind());
        if (!model.empty()) {
            found = false;
            for (const auto &m : kModels)
                if (model == m.name) {
                    s.model = m.model;
                    found = true;
                }
            if (!found) throw fail("unknown model " + model);
        }
        if (!models_of(s.kind()).count(s.model)) throw fail("model " + model + " does not fit " + type);
        s.offset = o["offset"].number();
        s.amplitude = o["amplitude"].number();
        s.period = o["period"].integer();
        s.levels = o["levels"].integer();
        s.step = o["step"].number();
        for (const auto &l : o["labels"].array()) s.labels.push_back(l.string());
        s.text = o["text"].string();
        s.p_error = o["p_error"].number();
        s.p_invalid = o["p_invalid"].number();
        s.p_alarm = o["p_alarm"].number();
        s.p_warning = o["p_warning"].number();
    } catch (const std::runtime_error &e) {
        const std::string what = e.what();
        if (what.rfind("attribute '", 0) == 0) throw;
        throw fail(what);
    }
    if (!(std::isfinite(s.rate_hz) && s.rate_hz > 0)) throw fail("rate_hz must be > 0");
    if ((s.format != Format::Scalar || s.kind() == Kind::Encoded) && s.dim_x < 1) throw fail("dim_x must be >= 1");
    if (s.format == Format::Image && s.dim_y < 1) throw fail("image dim_y must be >= 1");
    if (s.kind() == Kind::Encoded && s.format != Format::Scalar) throw fail("DevEncoded is SCALAR only");
    if (s.elements() > (int64_t{1} << 24)) throw fail("too many elements");
    if (s.period < 1 || s.levels < 1) throw fail("period and levels must be >= 1");
    if (s.kind() == Kind::String && s.model == Model::Cycle && s.labels.empty()) throw fail("cycle needs labels");
    if (s.kind() == Kind::State)
        for (const auto &c : s.choices()) {
            bool ok = false;
            for (const char *n : kStateNames) ok = ok || c == n;
            if (!ok) throw fail("unknown DevState name " + c);
        }
    return s;
}

AttrSpec parse_spec(const std::string &json_line) { return parse_spec(Json::parse(json_line)); }

}  // namespace hdbgen
