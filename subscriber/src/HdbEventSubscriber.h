// SPDX-License-Identifier: Apache-2.0
// Tango shell of the subscriber (class HdbEventSubscriber, interface of HDB++'s hdbpp-es). It reads
// properties, builds the Archiver core, forwards the commands to its registry and publishes its
// snapshot; the logic lives in the core (archiver.h).
#pragma once

#include <tango.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "archiver.h"
#include "coalescing_saver.h"
#include "metrics_server.h"
#include "tango_subscriptions.h"

namespace HdbEventSubscriber_ns {

class HdbEventSubscriber : public TANGO_BASE_CLASS {
public:
    HdbEventSubscriber(Tango::DeviceClass *cl, std::string &name);
    ~HdbEventSubscriber() override;
    void init_device() override;
    void delete_device() override;
    void always_executed_hook() override;
    void read_attr_hardware(std::vector<long> &attr_list) override;

    // Generic attribute access (dispatch on the attribute name).
    void read_attribute(Tango::Attribute &att);
    void write_context(Tango::WAttribute &att);

    // Commands.
    void attribute_add(const std::vector<std::string> &args);
    void attribute_remove(const std::string &name);
    void attribute_start(const std::string &name);
    void attribute_stop(const std::string &name);
    void attribute_pause(const std::string &name);
    void start();
    void stop();
    void pause();
    std::string attribute_status(const std::string &name);
    void reset_statistics();
    void set_attribute_strategy(const std::vector<std::string> &args);
    std::string get_attribute_strategy(const std::string &name);
    void set_attribute_ttl(const std::vector<std::string> &args);
    Tango::DevULong get_attribute_ttl(const std::string &name);
    void stop_faulty();

private:
    hdbbench::Archiver &archiver();
    hdbbench::AttributeRegistry &registry() { return archiver().registry(); }
    void read_properties();
    hdbbench::ArchiverOptions archiver_options() const;
    void add_attribute_list();
    void start_metrics(std::uint16_t port);
    // Our statistics beyond HDB++'s exist unless the subscriber is strict (hdbpp_strict=1).
    void show_our_statistics(bool show);
    std::string default_cs() const;
    void save_attribute_list();   // soon, by list_saver_ (one write for a burst of commands)
    void write_attribute_list();  // now
    void log(const std::string &level, const std::string &msg);

    void set_value_LONG(Tango::Attribute &att, std::uint64_t v);
    void set_value_LONG64(Tango::Attribute &att, std::uint64_t v);
    void set_value_DOUBLE(Tango::Attribute &att, double v);
    void set_value_BOOLEAN(Tango::Attribute &att, bool v);
    void set_value_STRINGS(Tango::Attribute &att, const std::vector<std::string> &v);
    void set_value_DOUBLES(Tango::Attribute &att, const std::vector<double> &v);
    void set_value_LONGS(Tango::Attribute &att, const std::vector<std::int32_t> &v);
    void set_value_ULONGS(Tango::Attribute &att, const std::vector<std::uint32_t> &v);
    void set_value(Tango::Attribute &att, const std::vector<std::string> &v) { set_value_STRINGS(att, v); }

    // properties (PollingThreadPeriod is not read: the statistics are refreshed every second)
    Tango::DevLong subscribe_retry_period_ = 60, statistics_time_window_ = 60, check_periodic_timeout_delay_ = 5;
    std::vector<std::string> lib_configuration_, contexts_list_, attribute_list_;
    std::string default_strategy_ = "ALWAYS", attribute_list_file_;
    bool subscribe_change_as_fallback_ = false;

    std::unique_ptr<hdbbench::Archiver> archiver_;
    std::unique_ptr<hdbbench::TangoSubscriptions> subscriptions_;
    std::unique_ptr<hdbbench::CoalescingSaver> list_saver_;  // destroyed (and flushed) before archiver_
    // GET /metrics (LibConfiguration metrics_port); it renders archiver_'s snapshots, so it is stopped first.
    std::unique_ptr<hdbbench::MetricsServer> metrics_;
    std::string metrics_error_;  // why the endpoint is off although asked for ("" otherwise): state ALARM
    std::string fault_;
    std::vector<std::string> ignored_lines_;  // AttributeList lines that could not be parsed
    int log_level_ = 1;  // 0 disabled, 1 error, 2 warning, 3 info, 4 debug
    bool strict_ = false;
    std::vector<std::string> our_attributes_;  // created by show_our_statistics(true)
    std::shared_ptr<const hdbbench::ArchiverSnapshot> snap_;

    // read buffers, one per attribute, alive until Tango has copied the reply
    std::map<std::string, std::vector<Tango::DevLong>> long_buf_;
    std::map<std::string, std::vector<Tango::DevULong>> ulong_buf_;
    std::map<std::string, std::vector<Tango::DevLong64>> long64_buf_;
    std::map<std::string, std::vector<Tango::DevDouble>> double_buf_;
    std::map<std::string, Tango::DevBoolean> bool_buf_;
    std::map<std::string, std::vector<std::string>> string_buf_;
    std::map<std::string, std::vector<Tango::DevString>> string_ptr_buf_;
};

// The statistics attributes of statistics.def: HDB++'s (created with the class) or ours (created per
// device unless it is strict).
std::vector<Tango::Attr *> statistic_attributes(bool ours);

}  // namespace HdbEventSubscriber_ns
