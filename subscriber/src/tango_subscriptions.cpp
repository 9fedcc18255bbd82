// SPDX-License-Identifier: Apache-2.0
#include "tango_subscriptions.h"

#include <tango.h>

namespace hdbbench {

namespace {

std::string describe(const Tango::DevErrorList &errors) {
    if (errors.length() == 0) return "unknown error";
    return std::string(errors[0].desc.in());
}

std::string describe(const Tango::DevFailed &e) { return describe(e.errors); }

template <typename T, typename Out>
bool extract_into(Tango::DeviceAttribute &da, bool set_part, Values &out) {
    std::vector<T> tmp;
    bool ok = false;
    try {
        ok = set_part ? da.extract_set(tmp) : da.extract_read(tmp);
    } catch (const Tango::DevFailed &) {
        ok = false;
    }
    if (!ok || tmp.empty()) return false;
    std::vector<Out> v;
    v.reserve(tmp.size());
    for (const auto &x : tmp) v.push_back(static_cast<Out>(x));
    out = std::move(v);
    return true;
}

bool extract_encoded(Tango::DeviceAttribute &da, bool set_part, Values &out) {
    std::string format;
    std::vector<unsigned char> data;
    bool ok = false;
    try {
        ok = set_part ? da.extract_set(format, data) : da.extract_read(format, data);
    } catch (const Tango::DevFailed &) {
        ok = false;
    }
    if (!ok) return false;
    out = std::vector<std::string>{format, std::string(data.begin(), data.end())};
    return true;
}

bool extract_part(Tango::DeviceAttribute &da, int type, bool set_part, Values &out) {
    switch (type) {
        case kDevBoolean: return extract_into<bool, std::int64_t>(da, set_part, out);
        case kDevUChar: return extract_into<unsigned char, std::int64_t>(da, set_part, out);
        case kDevShort:
        case kDevEnum: return extract_into<short, std::int64_t>(da, set_part, out);
        case kDevUShort: return extract_into<unsigned short, std::int64_t>(da, set_part, out);
        case kDevLong: return extract_into<Tango::DevLong, std::int64_t>(da, set_part, out);
        case kDevULong: return extract_into<Tango::DevULong, std::int64_t>(da, set_part, out);
        case kDevLong64: return extract_into<Tango::DevLong64, std::int64_t>(da, set_part, out);
        case kDevULong64: return extract_into<Tango::DevULong64, std::uint64_t>(da, set_part, out);
        case kDevFloat: return extract_into<float, double>(da, set_part, out);
        case kDevDouble: return extract_into<double, double>(da, set_part, out);
        case kDevString: return extract_into<std::string, std::string>(da, set_part, out);
        case kDevState: {
            if (extract_into<Tango::DevState, std::int64_t>(da, set_part, out)) return true;
            if (set_part) return false;
            Tango::DevState s;
            try {
                if (da >> s) {
                    out = std::vector<std::int64_t>{static_cast<std::int64_t>(s)};
                    return true;
                }
            } catch (const Tango::DevFailed &) {
            }
            return false;
        }
        case kDevEncoded: return extract_encoded(da, set_part, out);
        default: return false;
    }
}

class EventCallback : public Tango::CallBack {
public:
    EventCallback(EventSink &sink, const AttributePtr &a) : sink_(sink), attribute_(a) {}

    void push_event(Tango::EventData *ev) override {
        AttributePtr a = attribute_.lock();
        if (!a || !ev) return;
        try {
            if (ev->err || !ev->attr_value) {
                sink_.on_error(a, describe(ev->errors), now_us());
                return;
            }
            Record r = to_record(a, *ev->attr_value);
            sink_.on_data(a, std::move(r));
        } catch (const Tango::DevFailed &ex) {
            sink_.on_error(a, describe(ex), now_us());
        } catch (const std::exception &ex) {
            sink_.on_error(a, ex.what(), now_us());
        }
    }

    void push_event(Tango::AttrConfEventData *ev) override {
        AttributePtr a = attribute_.lock();
        if (!a || !ev) return;
        if (ev->err || !ev->attr_conf) {
            sink_.on_config_error(a, describe(ev->errors));
            return;
        }
        const Tango::AttributeInfoEx &c = *ev->attr_conf;
        ParamInfo p;
        p.label = c.label;
        p.unit = c.unit;
        p.standard_unit = c.standard_unit;
        p.display_unit = c.display_unit;
        p.format = c.format;
        p.description = c.description;
        p.archive_rel_change = c.events.arch_event.archive_rel_change;
        p.archive_abs_change = c.events.arch_event.archive_abs_change;
        p.archive_period = c.events.arch_event.archive_period;
        p.enum_labels = c.enum_labels;
        sink_.on_config(a, {c.data_type, static_cast<int>(c.data_format), static_cast<int>(c.writable)}, p);
    }

private:
    static Record to_record(const AttributePtr &a, Tango::DeviceAttribute &da) {
        Record r;
        r.kind = RecordKind::Data;
        r.att_name = a->name();
        r.recv_time = now_us();
        const AttributeTypes known = a->types();
        int write_type = known.write_type;
        if (known.data_type != kUnknown) r.data_type = static_cast<std::int8_t>(known.data_type);
        if (known.data_format != kUnknown) r.data_format = static_cast<std::int8_t>(known.data_format);
        const int t = da.get_type();
        if (is_supported_type(t)) r.data_type = static_cast<std::int8_t>(t);
        const Tango::AttrDataFormat f = da.get_data_format();
        if (f != Tango::FMT_UNKNOWN) r.data_format = static_cast<std::int8_t>(f);
        const Tango::TimeVal &tv = da.get_date();
        r.data_time = TimePoint(std::chrono::microseconds(static_cast<std::int64_t>(tv.tv_sec) * 1000000 + tv.tv_usec));
        r.quality = static_cast<std::int16_t>(da.get_quality());
        if (write_type == kUnknown) write_type = da.get_written_dim_x() > 0 ? kReadWrite : kRead;
        r.write_type = static_cast<std::int8_t>(write_type);
        fill_record_values(da, write_type, r);
        return r;
    }

    EventSink &sink_;
    std::weak_ptr<Attribute> attribute_;
};

struct TangoSubscription {
    std::shared_ptr<Tango::DeviceProxy> proxy;
    std::unique_ptr<EventCallback> callback;
    int conf_id = -1;
    int data_id = -1;
};

void release(TangoSubscription &sub) {
    if (!sub.proxy) return;
    for (int id : {sub.data_id, sub.conf_id}) {
        if (id < 0) continue;
        try {
            sub.proxy->unsubscribe_event(id);
        } catch (const Tango::DevFailed &) {
        }
    }
}

}  // namespace

void fill_record_values(Tango::DeviceAttribute &da, int write_type, Record &r) {
    da.reset_exceptions(Tango::DeviceAttribute::isempty_flag);
    da.reset_exceptions(Tango::DeviceAttribute::wrongtype_flag);
    r.dim_x_r = static_cast<std::uint32_t>(std::max(0, da.get_dim_x()));
    r.dim_y_r = static_cast<std::uint32_t>(std::max(0, da.get_dim_y()));
    r.dim_x_w = static_cast<std::uint32_t>(std::max(0, da.get_written_dim_x()));
    r.dim_y_w = static_cast<std::uint32_t>(std::max(0, da.get_written_dim_y()));
    if (r.quality == Tango::ATTR_INVALID) return;  // HDB++: invalid quality stores NULL values
    const int type = r.data_type;
    if (write_type == kWrite) {
        if (!extract_part(da, type, true, r.value_w)) extract_part(da, type, false, r.value_w);
        if (r.dim_x_w == 0) {
            r.dim_x_w = r.dim_x_r;
            r.dim_y_w = r.dim_y_r;
        }
        r.dim_x_r = r.dim_y_r = 0;
        return;
    }
    extract_part(da, type, false, r.value_r);
    if (write_type == kReadWrite || write_type == kReadWithWrite) extract_part(da, type, true, r.value_w);
}

TangoSubscriptions::TangoSubscriptions(EventSink &sink, bool change_as_fallback)
    : sink_(sink), change_as_fallback_(change_as_fallback) {}

TangoSubscriptions::~TangoSubscriptions() = default;

std::shared_ptr<Tango::DeviceProxy> TangoSubscriptions::proxy(const std::string &device) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = proxies_.find(device);
    if (it != proxies_.end()) return it->second;
    std::string name = device;  // cppTango 9.3 takes a non-const reference
    auto dp = std::make_shared<Tango::DeviceProxy>(name);
    proxies_[device] = dp;
    return dp;
}

Subscription TangoSubscriptions::subscribe(const AttributePtr &a) {
    const NameParts p = split_attribute_name(a->name());
    const std::string device = (p.cs_name.empty() ? "" : "tango://" + p.cs_name + "/") + p.device();
    auto sub = std::make_shared<TangoSubscription>();
    Subscription out;
    try {
        sub->proxy = proxy(device);
        sub->callback = std::make_unique<EventCallback>(sink_, a);
        sub->conf_id = sub->proxy->subscribe_event(p.name, Tango::ATTR_CONF_EVENT, sub->callback.get(), true);
        try {
            sub->data_id = sub->proxy->subscribe_event(p.name, Tango::ARCHIVE_EVENT, sub->callback.get(), false);
        } catch (const Tango::DevFailed &ex) {
            out.warning = describe(ex);
            if (change_as_fallback_) {
                try {
                    sub->data_id = sub->proxy->subscribe_event(p.name, Tango::CHANGE_EVENT, sub->callback.get(), false);
                    out.change_event = true;
                    out.warning.clear();
                } catch (const Tango::DevFailed &) {
                }
            }
            if (sub->data_id < 0) {
                // The device may not be up: a stateless subscription makes Tango retry by itself.
                sub->data_id = sub->proxy->subscribe_event(p.name, Tango::ARCHIVE_EVENT, sub->callback.get(), true);
            }
        }
        out.handle = sub;
        return out;
    } catch (const Tango::DevFailed &ex) {
        release(*sub);
        throw std::runtime_error(describe(ex));
    }
}

void TangoSubscriptions::unsubscribe(std::shared_ptr<void> handle) {
    if (handle) release(*std::static_pointer_cast<TangoSubscription>(handle));
}

}  // namespace hdbbench
