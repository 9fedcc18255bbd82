// SPDX-License-Identifier: Apache-2.0
#include "HdbEventSubscriber.h"

#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>

#include "config.h"
#include "event_consumer_hwm.h"
#include "event_queue.h"
#include "metrics_exposition.h"
#include "null_writer.h"
#include "spool.h"
#include "writer.h"
#include "writer_registry.h"

namespace HdbEventSubscriber_ns {

using namespace hdbbench;

namespace {
constexpr std::size_t kMaxSpectrum = 10000;  // max_dim_x of the spectrum attributes
// AttributeAdd, AttributeRemove and the strategy/TTL commands save the AttributeList property within
// this delay, once for a whole burst (see coalescing_saver.h).
constexpr std::chrono::milliseconds kAttributeListSaveDelay{500};

template <typename Buffer, typename Values>
void set_spectrum(Tango::Attribute &att, Buffer &b, const Values &v) {
    b.assign(v.begin(), v.begin() + static_cast<long>(std::min<std::size_t>(v.size(), kMaxSpectrum)));
    att.set_value(b.data(), static_cast<long>(b.size()));
}

[[noreturn]] void throw_tango(const std::string &msg, const char *origin) {
    Tango::Except::throw_exception("HdbEventSubscriber_Error", msg, origin);
}

int level_number(const std::string &l) {
    if (l == "disabled") return 0;
    if (l == "error") return 1;
    if (l == "warning") return 2;
    if (l == "info") return 3;
    return 4;
}

template <typename T>
void get_prop(Tango::DbData &data, const char *name, T &out) {
    for (auto &d : data)
        if (to_lower(d.name) == to_lower(name) && !d.is_empty()) d >> out;
}

int parse_enum_arg(const std::string &s, const std::vector<std::string> &names) {
    if (s.empty()) return kUnknown;
    try {
        std::size_t pos = 0;
        const int v = std::stoi(s, &pos);
        if (pos == s.size()) return v;
    } catch (const std::exception &) {
    }
    const std::string u = to_upper(s);
    for (std::size_t i = 0; i < names.size(); ++i)
        if (names[i] == u) return static_cast<int>(i);
    throw std::invalid_argument("cannot parse '" + s + "'");
}
}  // namespace

HdbEventSubscriber::HdbEventSubscriber(Tango::DeviceClass *cl, std::string &name) : TANGO_BASE_CLASS(cl, name.c_str()) {
    init_device();
}

HdbEventSubscriber::~HdbEventSubscriber() { delete_device(); }

void HdbEventSubscriber::log(const std::string &level, const std::string &msg) {
    if (level_number(level) > log_level_) return;
    const std::time_t t = std::time(nullptr);
    char ts[32];
    std::tm tm{};
    gmtime_r(&t, &tm);
    std::strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
    std::cerr << ts << " " << get_name() << " " << level << ": " << msg << std::endl;
}

void HdbEventSubscriber::read_properties() {
    contexts_list_ = {"ALWAYS:Always stored", "RUN:Always stored during run", "SHUTDOWN:Stored during shutdown",
                      "SERVICE:Stored during maintenance activities"};
    if (!Tango::Util::_UseDb) return;
    const char *names[] = {"SubscribeRetryPeriod", "StatisticsTimeWindow", "CheckPeriodicTimeoutDelay",
                           "LibConfiguration", "ContextsList", "DefaultStrategy", "SubscribeChangeAsFallback"};
    Tango::DbData cls;
    for (const char *n : names) cls.push_back(Tango::DbDatum(n));
    get_device_class()->get_db_class()->get_property(cls);
    Tango::DbData dev = cls;
    for (auto &d : dev) d = Tango::DbDatum(d.name);
    dev.push_back(Tango::DbDatum("AttributeList"));
    dev.push_back(Tango::DbDatum("AttributeListFile"));
    get_db_device()->get_property(dev);
    for (Tango::DbData *data : {&cls, &dev}) {
        get_prop(*data, "SubscribeRetryPeriod", subscribe_retry_period_);
        get_prop(*data, "StatisticsTimeWindow", statistics_time_window_);
        get_prop(*data, "CheckPeriodicTimeoutDelay", check_periodic_timeout_delay_);
        get_prop(*data, "LibConfiguration", lib_configuration_);
        get_prop(*data, "ContextsList", contexts_list_);
        get_prop(*data, "DefaultStrategy", default_strategy_);
        get_prop(*data, "SubscribeChangeAsFallback", subscribe_change_as_fallback_);
    }
    get_prop(dev, "AttributeList", attribute_list_);
    get_prop(dev, "AttributeListFile", attribute_list_file_);
}

ArchiverOptions HdbEventSubscriber::archiver_options() const {
    ArchiverOptions opts;
    opts.subscribe_retry_period = std::chrono::seconds(std::max<Tango::DevLong>(1, subscribe_retry_period_));
    opts.statistics_window = std::chrono::seconds(std::max<Tango::DevLong>(1, statistics_time_window_));
    opts.periodic_timeout_delay = std::chrono::seconds(std::max<Tango::DevLong>(0, check_periodic_timeout_delay_));
    opts.contexts.clear();
    for (const auto &c : contexts_list_) {
        const std::string label = to_upper(trim(c.substr(0, c.find(':'))));
        if (!label.empty()) opts.contexts.push_back(label);
    }
    if (std::find(opts.contexts.begin(), opts.contexts.end(), "ALWAYS") == opts.contexts.end())
        opts.contexts.insert(opts.contexts.begin(), "ALWAYS");
    opts.default_strategy.clear();
    for (const auto &c : split(default_strategy_, '|'))
        if (!trim(c).empty()) opts.default_strategy.push_back(to_upper(trim(c)));
    if (opts.default_strategy.empty()) opts.default_strategy = {"ALWAYS"};
    return opts;
}

std::string HdbEventSubscriber::default_cs() const {
    if (!Tango::Util::_UseDb) return {};
    Tango::Database *db = Tango::Util::instance()->get_database();
    return to_lower(db->get_db_host() + ":" + db->get_db_port());
}

void HdbEventSubscriber::show_our_statistics(bool show) {
    if (show && our_attributes_.empty()) {
        for (Tango::Attr *a : statistic_attributes(true)) {
            our_attributes_.push_back(a->get_name());
            add_attribute(a);
        }
    } else if (!show) {
        for (std::string name : our_attributes_) remove_attribute(name, true, false);
        our_attributes_.clear();
    }
}

void HdbEventSubscriber::add_attribute_list() {
    std::vector<std::string> lines = attribute_list_;
    if (!attribute_list_file_.empty()) {
        std::ifstream f(attribute_list_file_);
        if (!f) log("error", "cannot read AttributeListFile " + attribute_list_file_);
        for (std::string l; std::getline(f, l);)
            if (!trim(l).empty() && trim(l)[0] != '#') lines.push_back(l);
    }
    const std::string cs = default_cs();
    for (const auto &l : lines) {
        try {
            AttributeSpec s = parse_attribute_line(l);
            s.name = normalise_attribute_name(s.name, cs);
            // Listed attributes are configured already: their att_conf row is not created here.
            registry().add(s, AttributeTypes{}, false);
        } catch (const std::exception &e) {
            log("error", "AttributeList line '" + l + "' ignored: " + e.what());
            ignored_lines_.push_back("'" + l + "' (" + e.what() + ")");
        }
    }
}

void HdbEventSubscriber::start_metrics(std::uint16_t port) {
    if (port == 0) return;
    // The thread renders the archiver's immutable snapshot (rebuilt first when stale, as for a Tango
    // read): nothing of the device is touched.
    Archiver *core = archiver_.get();
    const std::string device = to_lower(get_name());
    const bool strict = strict_;
    try {
        metrics_ = std::make_unique<MetricsServer>(
            port, [core, device, strict] { return render_metrics(*core->fresh_snapshot(), device, strict); },
            kMetricsContentType);
        log("info", "metrics at http://127.0.0.1:" + std::to_string(metrics_->port()) + "/metrics");
    } catch (const std::exception &e) {
        // Archiving goes on without the endpoint; the state says so until an Init with a free port.
        metrics_error_ = std::string("Metrics endpoint off (LibConfiguration metrics_port=") + std::to_string(port) +
                         "): " + e.what() + "; free the port or choose another, then Init.";
        log("error", metrics_error_);
    }
}

void HdbEventSubscriber::init_device() {
    fault_.clear();
    metrics_error_.clear();
    ignored_lines_.clear();
    set_state(Tango::INIT);
    set_status("Initialising");
    attribute_list_.clear();
    lib_configuration_.clear();
    try {
        read_properties();
    } catch (const Tango::DevFailed &e) {
        fault_ = "Cannot read properties: " + std::string(e.errors[0].desc.in());
    }
    LibConfig lib;
    std::unique_ptr<Writer> writer;
    std::unique_ptr<EventQueue> queue;
    try {
        lib = LibConfig::parse(lib_configuration_);
        log_level_ = level_number(lib.logging_level);
        writer = make_writer(lib);
        queue = make_event_queue(lib);
    } catch (const std::exception &e) {
        if (fault_.empty()) fault_ = std::string("Bad configuration: ") + e.what();
        writer = std::make_unique<NullWriter>();
        queue = std::make_unique<EventQueue>(lib.queue_capacity, nullptr);
    }
    strict_ = lib.hdbpp_strict;
    show_our_statistics(!strict_);
    archiver_ = std::make_unique<Archiver>(archiver_options(), lib, std::move(writer), std::move(queue),
                                           [this](const std::string &l, const std::string &m) { log(l, m); });
    if (!fault_.empty()) {
        log("error", fault_);
        set_state(Tango::FAULT);
        set_status(fault_);
        archiver_->refresh_snapshot();
        snap_ = archiver_->snapshot();
        return;  // no writer thread: the device stays FAULT until Init with a good configuration
    }
    list_saver_ = std::make_unique<CoalescingSaver>([this] { write_attribute_list(); }, kAttributeListSaveDelay);
    list_saver_->start();
    // Before the first subscription: Tango creates its one event consumer then, and the consumer's
    // sockets take the value once (event_consumer_hwm.h). An Init cannot change it afterwards.
    set_event_sub_send_hwm(lib.event_sub_send_hwm);
    if (const auto applied = applied_event_sub_send_hwm(); applied && *applied != lib.event_sub_send_hwm)
        log("warning", "event_sub_send_hwm=" + std::to_string(lib.event_sub_send_hwm) +
                           " takes effect at the next start of the process; Tango's event consumer keeps " +
                           std::to_string(*applied));
    subscriptions_ = std::make_unique<TangoSubscriptions>(*archiver_, subscribe_change_as_fallback_);
    archiver_->set_backend(subscriptions_.get());
    add_attribute_list();
    archiver_->start_threads();
    archiver_->refresh_snapshot();
    snap_ = archiver_->snapshot();
    start_metrics(lib.metrics_port);
    log("info", "started with " + std::to_string(snap_->all.size()) + " attributes, backend " +
                    lib.backend + (strict_ ? " (strict)" : ""));
}

void HdbEventSubscriber::delete_device() {
    metrics_.reset();  // its thread reads the archiver's snapshots: stopped before the archiver goes
    list_saver_.reset();  // saves a pending AttributeList while the registry is still there
    if (archiver_) archiver_->stop_threads();
    archiver_.reset();
    subscriptions_.reset();
}

hdbbench::Archiver &HdbEventSubscriber::archiver() {
    if (!archiver_) throw_tango("subscriber not initialised", "HdbEventSubscriber::archiver");
    return *archiver_;
}

void HdbEventSubscriber::always_executed_hook() {
    if (!archiver_) return;
    snap_ = archiver_->fresh_snapshot();  // once per request: the attributes read in it agree
    if (!fault_.empty()) {
        set_state(Tango::FAULT);
        set_status(fault_);
        return;
    }
    const ArchiverSnapshot &s = *snap_;
    std::string status;
    Tango::DevState state = Tango::ON;
    if (!s.db_connected) {
        state = Tango::ALARM;
        status = "Database unreachable (" + (s.db_error.empty() ? std::string("connecting") : s.db_error) +
                 "); retrying with back-off. " + std::to_string(s.pending_events) + " events pending, " +
                 std::to_string(s.spooled_events) + " in the disk spool.";
    } else if (!s.nok.empty()) {
        state = Tango::ALARM;
        status = std::to_string(s.nok.size()) + " attribute(s) in error (see AttributeNokList/AttributeErrorList).";
        for (std::size_t i = 0; i < s.errors.size() && i < s.all.size(); ++i) {
            if (s.errors[i].empty()) continue;
            status += " First: " + s.all[i] + ": " + s.errors[i];
            break;
        }
    } else if (!s.all.empty() && s.stopped.size() == s.all.size()) {
        state = Tango::OFF;
        status = "All attributes stopped.";
    } else {
        status = "Archiving " + std::to_string(s.started.size()) + " attribute(s).";
    }
    if (!ignored_lines_.empty()) {
        status += " " + std::to_string(ignored_lines_.size()) + " AttributeList line(s) ignored: " + ignored_lines_[0] +
                  (ignored_lines_.size() > 1 ? " ..." : "") + ".";
        if (state == Tango::ON || state == Tango::OFF) state = Tango::ALARM;
    }
    if (s.lost_events) {
        status += " " + std::to_string(s.lost_events) + " events LOST (queue full: " + std::to_string(s.lost_queue_full) +
                  ", spool's filesystem full: " + std::to_string(s.lost_spool_full) + "; last: " + s.queue_error + ").";
        if (state == Tango::ON) state = Tango::ALARM;
    }
    if (s.wal_failing) {  // records are queued, but a crash now would lose them
        status += " Write-ahead log failing, " + std::to_string(s.wal_unlogged) + " events unlogged so far (" +
                  s.queue_error + ").";
        if (state == Tango::ON) state = Tango::ALARM;
    }
    if (!metrics_error_.empty()) {
        status += " " + metrics_error_;
        if (state == Tango::ON || state == Tango::OFF) state = Tango::ALARM;
    }
    set_state(state);
    set_status(status);
}

void HdbEventSubscriber::read_attr_hardware(std::vector<long> &) {
    if (archiver_) snap_ = archiver_->snapshot();
}

void HdbEventSubscriber::set_value_LONG(Tango::Attribute &att, std::uint64_t v) {
    auto &b = long_buf_[att.get_name()];
    b.assign(1, static_cast<Tango::DevLong>(std::min<std::uint64_t>(v, INT32_MAX)));
    att.set_value(b.data());
}

void HdbEventSubscriber::set_value_LONG64(Tango::Attribute &att, std::uint64_t v) {
    auto &b = long64_buf_[att.get_name()];
    b.assign(1, static_cast<Tango::DevLong64>(v));
    att.set_value(b.data());
}

void HdbEventSubscriber::set_value_DOUBLE(Tango::Attribute &att, double v) {
    auto &b = double_buf_[att.get_name()];
    b.assign(1, v);
    att.set_value(b.data());
}

void HdbEventSubscriber::set_value_BOOLEAN(Tango::Attribute &att, bool v) {
    Tango::DevBoolean &b = bool_buf_[att.get_name()];
    b = v;
    att.set_value(&b);
}

void HdbEventSubscriber::set_value_STRINGS(Tango::Attribute &att, const std::vector<std::string> &v) {
    auto &b = string_buf_[att.get_name()];
    b.assign(v.begin(), v.begin() + static_cast<long>(std::min<std::size_t>(v.size(), kMaxSpectrum)));
    auto &p = string_ptr_buf_[att.get_name()];
    p.clear();
    for (auto &x : b) p.push_back(const_cast<char *>(x.c_str()));
    att.set_value(p.data(), static_cast<long>(p.size()));
}

void HdbEventSubscriber::set_value_DOUBLES(Tango::Attribute &att, const std::vector<double> &v) {
    set_spectrum(att, double_buf_[att.get_name()], v);
}

void HdbEventSubscriber::set_value_LONGS(Tango::Attribute &att, const std::vector<std::int32_t> &v) {
    set_spectrum(att, long_buf_[att.get_name()], v);
}

void HdbEventSubscriber::set_value_ULONGS(Tango::Attribute &att, const std::vector<std::uint32_t> &v) {
    set_spectrum(att, ulong_buf_[att.get_name()], v);
}

void HdbEventSubscriber::read_attribute(Tango::Attribute &att) {
    if (!snap_) throw_tango("no statistics yet", "HdbEventSubscriber::read_attribute");
    const ArchiverSnapshot &s = *snap_;
    const std::string n = att.get_name();
    if (n == "Context") {
        set_value(att, std::vector<std::string>{archiver().registry().context()});
        return;
    }
    const std::vector<std::string> &contexts = archiver().registry().contexts();
#define HDB_STATISTIC(name, origin, kind, unit, description, value) \
    if (n == #name) return set_value_##kind(att, value);
#include "statistics.def"
#undef HDB_STATISTIC
    throw_tango("unknown attribute " + n, "HdbEventSubscriber::read_attribute");
}

void HdbEventSubscriber::write_context(Tango::WAttribute &att) {
    Tango::DevString v = nullptr;
    att.get_write_value(v);
    try {
        registry().set_context(v ? v : "");
    } catch (const std::exception &e) {
        throw_tango(e.what(), "HdbEventSubscriber::write_Context");
    }
}

void HdbEventSubscriber::save_attribute_list() {
    if (list_saver_) list_saver_->request();
    else write_attribute_list();
}

void HdbEventSubscriber::write_attribute_list() {
    if (!Tango::Util::_UseDb || !archiver_) return;
    std::vector<std::string> lines;
    for (const auto &s : archiver_->registry().specs()) lines.push_back(s.to_line());
    Tango::DbData data;
    Tango::DbDatum d("AttributeList");
    d << lines;
    data.push_back(d);
    try {
        get_db_device()->put_property(data);
    } catch (const Tango::DevFailed &e) {
        log("error", "cannot save AttributeList: " + std::string(e.errors[0].desc.in()));
    }
}

#define HDB_GUARD(origin, body)                                   \
    try {                                                         \
        body;                                                     \
    } catch (const Tango::DevFailed &) {                          \
        throw;                                                    \
    } catch (const std::exception &e) {                           \
        throw_tango(e.what(), origin);                            \
    }

void HdbEventSubscriber::attribute_add(const std::vector<std::string> &args) {
    HDB_GUARD("HdbEventSubscriber::AttributeAdd", {
        if (args.empty() || trim(args[0]).empty()) throw std::invalid_argument("AttributeAdd needs at least a name");
        std::string line = trim(args[0]);
        AttributeSpec s = parse_attribute_line(line);
        if (args.size() > 1 && !trim(args[1]).empty()) {
            s.strategy.clear();
            for (const auto &c : split(args[1], '|'))
                if (!trim(c).empty()) s.strategy.push_back(to_upper(trim(c)));
        }
        const int type = args.size() > 2 ? parse_enum_arg(trim(args[2]), {}) : kUnknown;
        const int format = args.size() > 3 ? parse_enum_arg(trim(args[3]), {"SCALAR", "SPECTRUM", "IMAGE"}) : kUnknown;
        const int write = args.size() > 4
                              ? parse_enum_arg(trim(args[4]), {"READ", "READ_WITH_WRITE", "WRITE", "READ_WRITE"})
                              : kUnknown;
        s.name = normalise_attribute_name(s.name, default_cs());
        // As HDB++ does, AttributeAdd creates the att_conf row (queued `add` event) and keeps the
        // name in the AttributeList property.
        if (registry().has(s.name)) {
            registry().announce(s.name);
            if (!s.strategy.empty()) registry().set_strategy(s.name, s.strategy);
            else registry().set_mode(s.name, AttrMode::Started);
        } else {
            registry().add(s, {is_supported_type(type) ? type : kUnknown, format, write}, true);
        }
        save_attribute_list();
    })
}

void HdbEventSubscriber::attribute_remove(const std::string &name) {
    HDB_GUARD("HdbEventSubscriber::AttributeRemove", { registry().remove(name); save_attribute_list(); })
}
void HdbEventSubscriber::attribute_start(const std::string &name) {
    HDB_GUARD("HdbEventSubscriber::AttributeStart", registry().set_mode(name, AttrMode::Started))
}
void HdbEventSubscriber::attribute_stop(const std::string &name) {
    HDB_GUARD("HdbEventSubscriber::AttributeStop", registry().set_mode(name, AttrMode::Stopped))
}
void HdbEventSubscriber::attribute_pause(const std::string &name) {
    HDB_GUARD("HdbEventSubscriber::AttributePause", registry().set_mode(name, AttrMode::Paused))
}
void HdbEventSubscriber::start() { HDB_GUARD("HdbEventSubscriber::Start", registry().set_mode_all(AttrMode::Started)) }
void HdbEventSubscriber::stop() { HDB_GUARD("HdbEventSubscriber::Stop", registry().set_mode_all(AttrMode::Stopped)) }
void HdbEventSubscriber::pause() { HDB_GUARD("HdbEventSubscriber::Pause", registry().set_mode_all(AttrMode::Paused)) }
void HdbEventSubscriber::stop_faulty() { HDB_GUARD("HdbEventSubscriber::StopFaulty", registry().stop_faulty()) }
void HdbEventSubscriber::reset_statistics() {
    HDB_GUARD("HdbEventSubscriber::ResetStatistics", archiver().reset_statistics())
}

std::string HdbEventSubscriber::attribute_status(const std::string &name) {
    std::string out;
    HDB_GUARD("HdbEventSubscriber::AttributeStatus", out = registry().status(name))
    return out;
}

void HdbEventSubscriber::set_attribute_strategy(const std::vector<std::string> &args) {
    HDB_GUARD("HdbEventSubscriber::SetAttributeStrategy", {
        if (args.size() < 2) throw std::invalid_argument("SetAttributeStrategy needs [name, context, ...]");
        registry().set_strategy(args[0], std::vector<std::string>(args.begin() + 1, args.end()));
        save_attribute_list();
    })
}

std::string HdbEventSubscriber::get_attribute_strategy(const std::string &name) {
    std::string out;
    HDB_GUARD("HdbEventSubscriber::GetAttributeStrategy", out = registry().strategy(name))
    return out;
}

void HdbEventSubscriber::set_attribute_ttl(const std::vector<std::string> &args) {
    HDB_GUARD("HdbEventSubscriber::SetAttributeTTL", {
        if (args.size() != 2) throw std::invalid_argument("SetAttributeTTL needs [name, ttl_hours]");
        std::size_t pos = 0;
        const long ttl = std::stol(args[1], &pos);
        if (pos != args[1].size() || ttl < 0) throw std::invalid_argument("bad ttl '" + args[1] + "'");
        registry().set_ttl(args[0], static_cast<std::uint32_t>(ttl));
        save_attribute_list();
    })
}

Tango::DevULong HdbEventSubscriber::get_attribute_ttl(const std::string &name) {
    Tango::DevULong out = 0;
    HDB_GUARD("HdbEventSubscriber::GetAttributeTTL", out = registry().ttl(name))
    return out;
}

}  // namespace HdbEventSubscriber_ns
