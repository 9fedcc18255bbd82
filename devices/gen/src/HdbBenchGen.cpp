// SPDX-License-Identifier: Apache-2.0
#include "HdbBenchGen.h"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <sstream>

#include "stream.h"

namespace HdbBenchGen_ns {

namespace {

constexpr size_t kStepBudget = 2000;     // events per take: the group lock is released regularly for commands
constexpr size_t kMonitorChunk = 64;     // events pushed per hold of the device monitor
constexpr int64_t kIdleWaitUs = 50000;   // longest sleep: bounds the reaction to shutdown
constexpr int64_t kMinSleepUs = 100;     // below this a sleep costs more than it saves: keep pushing

static_assert(sizeof(Tango::DevBoolean) == 1, "DevBoolean is one byte (the digest payload)");
static_assert(sizeof(Tango::DevState) == 4, "DevState is four bytes (the digest payload)");

int64_t now_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

timeval to_timeval(int64_t us) {
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(us / 1000000);
    tv.tv_usec = static_cast<suseconds_t>(us % 1000000);
    return tv;
}

Tango::DevFailed make_simulated_error() {
    Tango::DevErrorList errors;
    errors.length(1);
    errors[0].reason = CORBA::string_dup(hdbgen::kErrorReason);
    errors[0].desc = CORBA::string_dup("simulated error event");
    errors[0].origin = CORBA::string_dup("HdbBenchGen");
    errors[0].severity = Tango::ERR;
    return Tango::DevFailed(errors);
}

std::string json_escape(const std::string &s) {
    std::string out;
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

std::string json_number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

class MonitorHold {
public:
    explicit MonitorHold(Tango::TangoMonitor &m) : m_(m) { m_.get_monitor(); }
    ~MonitorHold() { m_.rel_monitor(); }
    MonitorHold(const MonitorHold &) = delete;
    MonitorHold &operator=(const MonitorHold &) = delete;

private:
    Tango::TangoMonitor &m_;
};

// Set a typed value (or set point) from the generator's native little-endian element bytes.
template <class T>
T *typed(const uint8_t *p) {
    return reinterpret_cast<T *>(const_cast<uint8_t *>(p));
}

}  // namespace

HdbBenchGen::HdbBenchGen(Tango::DeviceClass *cl, std::string &name) : TANGO_BASE_CLASS(cl, name.c_str()) {
    init_device();
}

// At server shutdown only the pushing threads are stopped: Tango deletes the attributes itself.
HdbBenchGen::~HdbBenchGen() { stop_pushers(); }

void HdbBenchGen::stop_pushers() {
    if (scheduler_) scheduler_->quit();
    for (auto &t : threads_)
        if (t.joinable()) t.join();
    threads_.clear();
}

void HdbBenchGen::read_properties() {
    Tango::DbData data;
    for (const char *n : {"Attributes", "Seed", "AutoStart", "Timestamps", "PushThreads", "Phases"})
        data.push_back(Tango::DbDatum(n));
    if (Tango::Util::instance()->_UseDb) get_db_device()->get_property(data);
    attributes_prop_.clear();
    if (!data[0].is_empty()) data[0] >> attributes_prop_;
    if (!data[1].is_empty()) data[1] >> seed_;
    if (!data[2].is_empty()) data[2] >> auto_start_;
    if (!data[3].is_empty()) data[3] >> timestamps_;
    if (!data[4].is_empty()) data[4] >> push_threads_;
    if (!data[5].is_empty()) data[5] >> phases_;
}

void HdbBenchGen::init_device() {
    simulated_error_ = make_simulated_error();
    fault_.clear();
    push_failures_ = 0;
    std::vector<hdbgen::AttrSpec> specs;
    try {
        read_properties();
        if (timestamps_ != "schedule" && timestamps_ != "push")
            throw std::runtime_error("Timestamps must be 'schedule' or 'push', got '" + timestamps_ + "'");
        if (phases_ != "aligned" && phases_ != "seeded")
            throw std::runtime_error("Phases must be 'aligned' or 'seeded', got '" + phases_ + "'");
        if (push_threads_ < 1 || push_threads_ > 64) throw std::runtime_error("PushThreads must be in 1..64");
        for (const auto &line : attributes_prop_)
            if (line.find_first_not_of(" \t\r\n") != std::string::npos) specs.push_back(hdbgen::parse_spec(line));
        scheduler_ = std::make_unique<hdbgen::Scheduler>(static_cast<uint64_t>(seed_), get_name(), specs,
                                                         timestamps_ == "push", push_threads_,
                                                         phases_ == "seeded" ? hdbgen::Phases::Seeded
                                                                             : hdbgen::Phases::Aligned);
    } catch (const std::exception &e) {
        // Never exit on a bad configuration: FAULT with the reason, no generated attributes.
        fault_ = std::string("bad Attributes, Timestamps, Phases or PushThreads property: ") + e.what();
        specs.clear();
        scheduler_ = std::make_unique<hdbgen::Scheduler>(static_cast<uint64_t>(seed_), get_name(), specs, false, 1);
    } catch (const Tango::DevFailed &e) {
        fault_ = std::string("cannot read the properties: ") + e.errors[0].desc.in();
        specs.clear();
        scheduler_ = std::make_unique<hdbgen::Scheduler>(static_cast<uint64_t>(seed_), get_name(), specs, false, 1);
    }
    const size_t n = scheduler_->size();
    generated_.assign(n, nullptr);
    generated_names_.clear();
    read_events_.assign(n, {});
    read_strings_.assign(n, {});
    read_encoded_format_.assign(n, "");
    for (size_t i = 0; i < n; ++i) add_generated(i);
    for (int g = 0; g < scheduler_->groups(); ++g) threads_.emplace_back([this, g] { pusher(g); });
    if (auto_start_ && fault_.empty()) start(nullptr);
    update_state();
}

void HdbBenchGen::delete_device() {
    stop_pushers();
    for (const auto &name : generated_names_) {
        try {
            std::string n = name;
            remove_attribute(n, false, false);
        } catch (const Tango::DevFailed &) {
        }
    }
    generated_names_.clear();
    generated_.clear();
}

// ------------------------------------------------------------------------------------- attributes

namespace {

class GeneratedScalar : public Tango::Attr {
public:
    GeneratedScalar(const char *name, long type, Tango::AttrWriteType w) : Tango::Attr(name, type, w) {}
    void read(Tango::DeviceImpl *d, Tango::Attribute &att) override { static_cast<HdbBenchGen *>(d)->read_generated(att); }
    void write(Tango::DeviceImpl *, Tango::WAttribute &) override {}  // Tango keeps the set point
};

class GeneratedSpectrum : public Tango::SpectrumAttr {
public:
    GeneratedSpectrum(const char *name, long type, Tango::AttrWriteType w, long x) : Tango::SpectrumAttr(name, type, w, x) {}
    void read(Tango::DeviceImpl *d, Tango::Attribute &att) override { static_cast<HdbBenchGen *>(d)->read_generated(att); }
    void write(Tango::DeviceImpl *, Tango::WAttribute &) override {}
};

class GeneratedImage : public Tango::ImageAttr {
public:
    GeneratedImage(const char *name, long type, Tango::AttrWriteType w, long x, long y) : Tango::ImageAttr(name, type, w, x, y) {}
    void read(Tango::DeviceImpl *d, Tango::Attribute &att) override { static_cast<HdbBenchGen *>(d)->read_generated(att); }
    void write(Tango::DeviceImpl *, Tango::WAttribute &) override {}
};

}  // namespace

void HdbBenchGen::add_generated(size_t i) {
    const hdbgen::AttrSpec &s = scheduler_->spec(i);
    const long type = s.info().tango_number;
    const Tango::AttrWriteType w = s.read_write ? Tango::READ_WRITE : Tango::READ;
    Tango::Attr *attr = nullptr;
    if (s.format == hdbgen::Format::Scalar) attr = new GeneratedScalar(s.name.c_str(), type, w);
    else if (s.format == hdbgen::Format::Spectrum) attr = new GeneratedSpectrum(s.name.c_str(), type, w, static_cast<long>(s.dim_x));
    else attr = new GeneratedImage(s.name.c_str(), type, w, static_cast<long>(s.dim_x), static_cast<long>(s.dim_y));
    if (s.kind() == hdbgen::Kind::Enum) {
        Tango::UserDefaultAttrProp p;
        std::vector<std::string> labels = s.choices();
        p.set_enum_labels(labels);
        attr->set_default_properties(p);
    }
    add_attribute(attr);
    generated_names_.push_back(s.name);
    generated_[i] = &get_device_attr()->get_attr_by_name(s.name.c_str());
    // Code-pushed archive events, every one sent: Tango does not check the archive criteria.
    set_archive_event(s.name, true, false);
    if (s.read_write && s.kind() != hdbgen::Kind::Encoded) init_set_point(i);
}

void HdbBenchGen::init_set_point(size_t i) {
    // A deterministic set point (the model value of event 0 of the "placeholder" stream, as the Python
    // device), so value_w is never 'uninitialised' and both engines store the same w_value.
    const hdbgen::AttrSpec &s = scheduler_->spec(i);
    hdbgen::Stream placeholder(static_cast<uint64_t>(seed_), "placeholder", s);
    placeholder.next();
    const long x = static_cast<long>(s.dim_x_out()), y = static_cast<long>(s.dim_y_out());
    const uint8_t *p = placeholder.raw().data();
    try {
        Tango::WAttribute &wa = get_device_attr()->get_w_attr_by_name(s.name.c_str());
        switch (s.type) {
            case hdbgen::Type::Boolean: wa.set_write_value(typed<Tango::DevBoolean>(p), x, y); break;
            case hdbgen::Type::UChar: wa.set_write_value(typed<Tango::DevUChar>(p), x, y); break;
            case hdbgen::Type::Short: wa.set_write_value(typed<Tango::DevShort>(p), x, y); break;
            case hdbgen::Type::UShort: wa.set_write_value(typed<Tango::DevUShort>(p), x, y); break;
            case hdbgen::Type::Long: wa.set_write_value(typed<Tango::DevLong>(p), x, y); break;
            case hdbgen::Type::ULong: wa.set_write_value(typed<Tango::DevULong>(p), x, y); break;
            case hdbgen::Type::Long64: wa.set_write_value(typed<Tango::DevLong64>(p), x, y); break;
            case hdbgen::Type::ULong64: wa.set_write_value(typed<Tango::DevULong64>(p), x, y); break;
            case hdbgen::Type::Float: wa.set_write_value(typed<Tango::DevFloat>(p), x, y); break;
            case hdbgen::Type::Double: wa.set_write_value(typed<Tango::DevDouble>(p), x, y); break;
            case hdbgen::Type::State: wa.set_write_value(typed<Tango::DevState>(p), x, y); break;
            case hdbgen::Type::Enum: wa.set_write_value(typed<Tango::DevShort>(p), x, y); break;
            case hdbgen::Type::String: {
                std::vector<std::string> v = placeholder.strings();
                wa.set_write_value(v, x, y);
                break;
            }
            case hdbgen::Type::Encoded: break;
        }
    } catch (const Tango::DevFailed &e) {
        WARN_STREAM << s.name << ": cannot set the initial set point: " << e.errors[0].desc.in() << std::endl;
    }
}

void HdbBenchGen::read_generated(Tango::Attribute &att) {
    const int found = scheduler_->find(att.get_name());
    if (found < 0) Tango::Except::throw_exception("HdbBench_UnknownAttribute", att.get_name(), "HdbBenchGen");
    const auto i = static_cast<size_t>(found);
    const hdbgen::AttrSpec &s = scheduler_->spec(i);
    hdbgen::LastEvent &ev = read_events_[i] = scheduler_->last_event(i);
    if (!ev.valid) {
        att.set_quality(Tango::ATTR_INVALID);
        return;
    }
    if (ev.error) throw make_simulated_error();
    timeval tv = to_timeval(ev.ts_us);
    const auto q = static_cast<Tango::AttrQuality>(ev.quality);
    const long x = static_cast<long>(s.dim_x_out()), y = static_cast<long>(s.dim_y_out());
    const uint8_t *p = ev.bytes.data();
    switch (s.type) {
        case hdbgen::Type::Boolean: att.set_value_date_quality(typed<Tango::DevBoolean>(p), tv, q, x, y); break;
        case hdbgen::Type::UChar: att.set_value_date_quality(typed<Tango::DevUChar>(p), tv, q, x, y); break;
        case hdbgen::Type::Short:
        case hdbgen::Type::Enum: att.set_value_date_quality(typed<Tango::DevShort>(p), tv, q, x, y); break;
        case hdbgen::Type::UShort: att.set_value_date_quality(typed<Tango::DevUShort>(p), tv, q, x, y); break;
        case hdbgen::Type::Long: att.set_value_date_quality(typed<Tango::DevLong>(p), tv, q, x, y); break;
        case hdbgen::Type::ULong: att.set_value_date_quality(typed<Tango::DevULong>(p), tv, q, x, y); break;
        case hdbgen::Type::Long64: att.set_value_date_quality(typed<Tango::DevLong64>(p), tv, q, x, y); break;
        case hdbgen::Type::ULong64: att.set_value_date_quality(typed<Tango::DevULong64>(p), tv, q, x, y); break;
        case hdbgen::Type::Float: att.set_value_date_quality(typed<Tango::DevFloat>(p), tv, q, x, y); break;
        case hdbgen::Type::Double: att.set_value_date_quality(typed<Tango::DevDouble>(p), tv, q, x, y); break;
        case hdbgen::Type::State: att.set_value_date_quality(typed<Tango::DevState>(p), tv, q, x, y); break;
        case hdbgen::Type::String: {
            auto &ptrs = read_strings_[i];
            ptrs.clear();
            for (auto &str : ev.strings) ptrs.push_back(const_cast<char *>(str.c_str()));
            att.set_value_date_quality(ptrs.data(), tv, q, x, y);
            break;
        }
        case hdbgen::Type::Encoded: {
            read_encoded_format_[i] = s.text.empty() ? "raw" : s.text;
            Tango::DevString fmt = const_cast<char *>(read_encoded_format_[i].c_str());
            att.set_value_date_quality(&fmt, typed<Tango::DevUChar>(p), static_cast<long>(ev.bytes.size()), tv, q);
            break;
        }
    }
}

// ------------------------------------------------------------------------------------- pushing

void HdbBenchGen::pusher(int group) {
    // Tango's push needs an omniORB thread identity in a thread Tango did not create.
    omni_thread::ensure_self omni_identity;
    hdbgen::Batch batch;
    std::vector<Tango::DevString> string_ptrs;
    while (true) {
        batch.clear();
        const int64_t next = scheduler_->take_due(group, now_us(), kStepBudget, batch);
        if (!batch.items.empty()) push_batch(batch, string_ptrs);
        if (batch.items.size() >= kStepBudget) continue;  // more is due now
        const int64_t now = now_us();
        if (next - now <= kMinSleepUs) {
            if (!scheduler_->wait(group, now)) return;  // a zero wait: only to notice quit
            continue;
        }
        if (!scheduler_->wait(group, std::min(next, now + kIdleWaitUs))) return;
    }
}

void HdbBenchGen::push_batch(hdbgen::Batch &batch, std::vector<Tango::DevString> &string_ptrs) {
    size_t i = 0;
    while (i < batch.items.size()) {
        // The monitor guards set_value + fire_archive_event against a concurrent read of the attribute
        // (the device's monitor: the server runs with the default serialisation by device).
        MonitorHold hold(get_dev_monitor());
        for (size_t n = 0; n < kMonitorChunk && i < batch.items.size(); ++n, ++i) push_one(batch, batch.items[i], string_ptrs);
    }
}

void HdbBenchGen::push_one(const hdbgen::Batch &batch, const hdbgen::PushItem &it,
                           std::vector<Tango::DevString> &string_ptrs) {
    const hdbgen::AttrSpec &s = scheduler_->spec(it.attr);
    Tango::Attribute &att = *generated_[it.attr];
    const int64_t ts = scheduler_->stamp_at_push() ? scheduler_->stamp_now(it.attr, now_us()) : it.ts_us;
    try {
        if (it.error) {
            att.fire_archive_event(&simulated_error_);
            return;
        }
        timeval tv = to_timeval(ts);
        const auto q = static_cast<Tango::AttrQuality>(it.quality);
        const long x = static_cast<long>(s.dim_x_out()), y = static_cast<long>(s.dim_y_out());
        const uint8_t *p = batch.bytes.data() + it.offset;
        switch (s.type) {
            case hdbgen::Type::Boolean: att.set_value_date_quality(typed<Tango::DevBoolean>(p), tv, q, x, y); break;
            case hdbgen::Type::UChar: att.set_value_date_quality(typed<Tango::DevUChar>(p), tv, q, x, y); break;
            case hdbgen::Type::Short:
            case hdbgen::Type::Enum: att.set_value_date_quality(typed<Tango::DevShort>(p), tv, q, x, y); break;
            case hdbgen::Type::UShort: att.set_value_date_quality(typed<Tango::DevUShort>(p), tv, q, x, y); break;
            case hdbgen::Type::Long: att.set_value_date_quality(typed<Tango::DevLong>(p), tv, q, x, y); break;
            case hdbgen::Type::ULong: att.set_value_date_quality(typed<Tango::DevULong>(p), tv, q, x, y); break;
            case hdbgen::Type::Long64: att.set_value_date_quality(typed<Tango::DevLong64>(p), tv, q, x, y); break;
            case hdbgen::Type::ULong64: att.set_value_date_quality(typed<Tango::DevULong64>(p), tv, q, x, y); break;
            case hdbgen::Type::Float: att.set_value_date_quality(typed<Tango::DevFloat>(p), tv, q, x, y); break;
            case hdbgen::Type::Double: att.set_value_date_quality(typed<Tango::DevDouble>(p), tv, q, x, y); break;
            case hdbgen::Type::State: att.set_value_date_quality(typed<Tango::DevState>(p), tv, q, x, y); break;
            case hdbgen::Type::String: {
                string_ptrs.clear();
                for (size_t j = 0; j < it.size; ++j)
                    string_ptrs.push_back(const_cast<char *>(batch.strings[it.offset + j].c_str()));
                att.set_value_date_quality(string_ptrs.data(), tv, q, x, y);
                break;
            }
            case hdbgen::Type::Encoded: {
                const std::string &format = read_encoded_format_[it.attr] = s.text.empty() ? "raw" : s.text;
                Tango::DevString fmt = const_cast<char *>(format.c_str());
                att.set_value_date_quality(&fmt, typed<Tango::DevUChar>(p), static_cast<long>(it.size), tv, q);
                break;
            }
        }
        att.fire_archive_event();
    } catch (const Tango::DevFailed &e) {
        // The pusher survives; the failure is counted (the event counts as emitted).
        push_failures_ += 1;
        std::lock_guard<std::mutex> lock(failure_mutex_);
        last_push_failure_ = s.name + " k=" + std::to_string(it.k) + ": " + e.errors[0].desc.in();
    }
}

// ------------------------------------------------------------------------------------- commands

std::vector<size_t> HdbBenchGen::checked(const std::vector<std::string> &names) const {
    std::vector<size_t> out;
    for (const auto &n : names) {
        const int i = scheduler_->find(n);
        if (i < 0) Tango::Except::throw_exception("HdbBench_UnknownAttribute", "no generated attribute '" + n + "'", "HdbBenchGen");
        out.push_back(static_cast<size_t>(i));
    }
    return out;
}

void HdbBenchGen::start(const std::vector<std::string> *names) {
    if (names) {
        const auto which = checked(*names);
        scheduler_->start(&which, now_us());
    } else {
        scheduler_->start(nullptr, now_us());
    }
    update_state();
}

void HdbBenchGen::stop(const std::vector<std::string> *names) {
    if (names) {
        const auto which = checked(*names);
        scheduler_->stop(&which);
    } else {
        scheduler_->stop(nullptr);
    }
    update_state();
}

void HdbBenchGen::reset() {
    scheduler_->reset();
    push_failures_ = 0;
    update_state();
}

void HdbBenchGen::set_rate(double rate_hz, const std::vector<std::string> *names) {
    if (!(std::isfinite(rate_hz) && rate_hz > 0))
        Tango::Except::throw_exception("HdbBench_BadArgument", "rate must be > 0, got " + json_number(rate_hz), "HdbBenchGen");
    if (names) {
        const auto which = checked(*names);
        scheduler_->set_rate(rate_hz, &which, now_us());
    } else {
        scheduler_->set_rate(rate_hz, nullptr, now_us());
    }
}

void HdbBenchGen::burst(int64_t n, const std::vector<std::string> *names) {
    if (n < 0) Tango::Except::throw_exception("HdbBench_BadArgument", "burst size must be >= 0", "HdbBenchGen");
    if (names) {
        const auto which = checked(*names);
        scheduler_->burst(static_cast<uint64_t>(n), &which);
    } else {
        scheduler_->burst(static_cast<uint64_t>(n), nullptr);
    }
}

void HdbBenchGen::update_state() {
    if (!fault_.empty()) {
        set_state(Tango::FAULT);
        set_status(fault_);
        return;
    }
    const bool running = scheduler_->any_running();
    set_state(running ? Tango::RUNNING : Tango::STANDBY);
    set_status(std::to_string(scheduler_->size()) + " generated attributes, " + (running ? "emitting" : "stopped") +
               " (seed " + std::to_string(seed_) + ", C++ engine)");
}

// ------------------------------------------------------------------------------------- statistics

std::string HdbBenchGen::statistics_json() {
    const int64_t now = now_us();
    const auto stats = scheduler_->stats(now);
    uint64_t total = 0;
    for (const auto &s : stats) total += s.emitted;
    std::string failure;
    {
        std::lock_guard<std::mutex> lock(failure_mutex_);
        failure = last_push_failure_;
    }
    std::ostringstream out;
    out << "{\"device\":\"" << json_escape(get_name()) << "\",\"engine\":\"cpp\",\"seed\":" << seed_
        << ",\"time\":" << json_number(static_cast<double>(now) / 1e6) << ",\"events_emitted_total\":" << total
        << ",\"push_failures\":" << push_failures_.load() << ",\"last_push_failure\":\"" << json_escape(failure)
        << "\",\"push_threads\":" << scheduler_->groups() << ",\"attributes\":[";
    for (size_t i = 0; i < stats.size(); ++i) {
        const auto &s = stats[i];
        char checksum[48];
        std::snprintf(checksum, sizeof checksum, "%" PRIu64 ":%016" PRIx64, s.emitted, s.checksum_sum);
        out << (i ? "," : "") << "{\"name\":\"" << json_escape(s.name) << "\",\"mode\":\"push\",\"running\":"
            << (s.running ? "true" : "false") << ",\"target_rate_hz\":" << json_number(s.target_rate_hz)
            << ",\"achieved_rate_hz\":" << json_number(s.achieved_rate_hz) << ",\"emitted\":" << s.emitted
            << ",\"errors\":" << s.errors << ",\"checksum\":\"" << checksum << "\",\"checksum_sum\":" << s.checksum_sum
            << ",\"lag_s\":" << json_number(s.lag_s) << "}";
    }
    out << "]}";
    return out.str();
}

void HdbBenchGen::read_statistic(Tango::Attribute &att) {
    const std::string n = att.get_name();
    if (n == "Running") {
        running_buf_ = scheduler_->any_running();
        att.set_value(&running_buf_);
    } else if (n == "EmitterSeed") {
        seed_buf_ = seed_;
        att.set_value(&seed_buf_);
    } else if (n == "GeneratedAttributes") {
        names_buf_.clear();
        for (size_t i = 0; i < scheduler_->size(); ++i) names_buf_.push_back(const_cast<char *>(scheduler_->spec(i).name.c_str()));
        att.set_value(names_buf_.data(), static_cast<long>(names_buf_.size()));
    } else if (n == "EventsEmittedTotal") {
        total_buf_ = scheduler_->total_emitted();
        att.set_value(&total_buf_);
    } else if (n == "PushFailures") {
        failures_buf_ = push_failures_.load();
        att.set_value(&failures_buf_);
    } else if (n == "Statistics") {
        statistics_buf_ = statistics_json();
        statistics_ptr_ = const_cast<char *>(statistics_buf_.c_str());
        att.set_value(&statistics_ptr_);
    } else {
        const auto stats = scheduler_->stats(now_us());
        emitted_buf_.clear(), errors_buf_.clear(), checksum_buf_.clear(), achieved_buf_.clear(), target_buf_.clear();
        rate_buf_ = lag_buf_ = 0;
        for (const auto &s : stats) {
            emitted_buf_.push_back(s.emitted);
            errors_buf_.push_back(s.errors);
            checksum_buf_.push_back(s.checksum_sum);
            achieved_buf_.push_back(s.achieved_rate_hz);
            target_buf_.push_back(s.target_rate_hz);
            rate_buf_ += s.achieved_rate_hz;
            lag_buf_ = std::max(lag_buf_, s.lag_s);
        }
        const auto len = static_cast<long>(stats.size());
        if (n == "EventsEmittedList") att.set_value(emitted_buf_.data(), len);
        else if (n == "ErrorsEmittedList") att.set_value(errors_buf_.data(), len);
        else if (n == "ChecksumList") att.set_value(checksum_buf_.data(), len);
        else if (n == "AchievedRateList") att.set_value(achieved_buf_.data(), len);
        else if (n == "TargetRateList") att.set_value(target_buf_.data(), len);
        else if (n == "AchievedRate") att.set_value(&rate_buf_);
        else if (n == "MaxLag") att.set_value(&lag_buf_);
        else Tango::Except::throw_exception("HdbBench_UnknownAttribute", n, "HdbBenchGen::read_statistic");
    }
}

}  // namespace HdbBenchGen_ns
