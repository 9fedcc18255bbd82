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
    EventCallback(Archiver &a, const EntryPtr &e) : archiver_(a), entry_(e) {}

    void push_event(Tango::EventData *ev) override {
        EntryPtr e = entry_.lock();
        if (!e || !ev) return;
        try {
            if (ev->err || !ev->attr_value) {
                archiver_.on_error(e, describe(ev->errors), now_us());
                return;
            }
            Tango::DeviceAttribute &da = *ev->attr_value;
            Record r;
            r.kind = RecordKind::Data;
            r.att_name = e->spec.name;
            r.recv_time = now_us();
            int write_type;
            {
                std::lock_guard<std::mutex> lock(e->mutex);
                write_type = e->write_type;
                if (e->data_type != kUnknown) r.data_type = static_cast<std::int8_t>(e->data_type);
                if (e->data_format != kUnknown) r.data_format = static_cast<std::int8_t>(e->data_format);
            }
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
            archiver_.on_data(e, std::move(r));
        } catch (const Tango::DevFailed &ex) {
            archiver_.on_error(e, describe(ex), now_us());
        } catch (const std::exception &ex) {
            archiver_.on_error(e, ex.what(), now_us());
        }
    }

    void push_event(Tango::AttrConfEventData *ev) override {
        EntryPtr e = entry_.lock();
        if (!e || !ev) return;
        if (ev->err || !ev->attr_conf) {
            std::lock_guard<std::mutex> lock(e->mutex);
            e->subscribe_error = describe(ev->errors);
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
        archiver_.on_config(e, c.data_type, static_cast<int>(c.data_format), static_cast<int>(c.writable), std::move(p));
    }

private:
    Archiver &archiver_;
    std::weak_ptr<AttributeEntry> entry_;
};

struct Subscription {
    std::shared_ptr<Tango::DeviceProxy> proxy;
    std::unique_ptr<EventCallback> callback;
    int conf_id = -1;
    int data_id = -1;
};

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

TangoSubscriptions::TangoSubscriptions(Archiver &archiver, bool change_as_fallback)
    : archiver_(archiver), change_as_fallback_(change_as_fallback) {}

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

void TangoSubscriptions::subscribe(const EntryPtr &e) {
    const NameParts p = split_attribute_name(e->spec.name);
    const std::string device = (p.cs_name.empty() ? "" : "tango://" + p.cs_name + "/") + p.device();
    auto sub = std::make_shared<Subscription>();
    std::string error;
    try {
        sub->proxy = proxy(device);
        sub->callback = std::make_unique<EventCallback>(archiver_, e);
        sub->conf_id = sub->proxy->subscribe_event(p.name, Tango::ATTR_CONF_EVENT, sub->callback.get(), true);
        bool change = false;
        try {
            sub->data_id = sub->proxy->subscribe_event(p.name, Tango::ARCHIVE_EVENT, sub->callback.get(), false);
        } catch (const Tango::DevFailed &ex) {
            error = describe(ex);
            if (change_as_fallback_) {
                try {
                    sub->data_id = sub->proxy->subscribe_event(p.name, Tango::CHANGE_EVENT, sub->callback.get(), false);
                    change = true;
                    error.clear();
                } catch (const Tango::DevFailed &) {
                }
            }
            if (sub->data_id < 0) {
                // The device may not be up: a stateless subscription makes Tango retry by itself.
                sub->data_id = sub->proxy->subscribe_event(p.name, Tango::ARCHIVE_EVENT, sub->callback.get(), true);
            }
        }
        {
            std::lock_guard<std::mutex> lock(e->mutex);
            e->subscription = sub;
            e->using_change_event = change;
        }
        archiver_.on_subscribe_result(e, true, error);
    } catch (const Tango::DevFailed &ex) {
        if (sub->proxy) {
            for (int id : {sub->data_id, sub->conf_id}) {
                if (id < 0) continue;
                try {
                    sub->proxy->unsubscribe_event(id);
                } catch (const Tango::DevFailed &) {
                }
            }
        }
        throw std::runtime_error(describe(ex));
    }
}

void TangoSubscriptions::unsubscribe(const EntryPtr &e) {
    std::shared_ptr<void> any;
    {
        std::lock_guard<std::mutex> lock(e->mutex);
        any.swap(e->subscription);
        e->subscribed = false;
    }
    if (!any) return;
    auto sub = std::static_pointer_cast<Subscription>(any);
    for (int id : {sub->data_id, sub->conf_id}) {
        if (id < 0) continue;
        try {
            sub->proxy->unsubscribe_event(id);
        } catch (const Tango::DevFailed &) {
        }
    }
}

}  // namespace hdbbench
