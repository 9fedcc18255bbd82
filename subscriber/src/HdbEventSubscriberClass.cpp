// SPDX-License-Identifier: Apache-2.0
// Tango class boilerplate of HdbEventSubscriber: attribute and command descriptions, device factory.
#include <tango.h>

#include <functional>

#include "HdbEventSubscriber.h"

namespace HdbEventSubscriber_ns {

namespace {

HdbEventSubscriber &dev_of(Tango::DeviceImpl *d) { return *static_cast<HdbEventSubscriber *>(d); }

void set_properties(Tango::Attr &attr, const char *unit, const char *desc) {
    Tango::UserDefaultAttrProp p;
    if (*unit) p.set_unit(unit);
    if (*desc) p.set_description(desc);
    attr.set_default_properties(p);
}

class ScalarAttr : public Tango::Attr {
public:
    ScalarAttr(const char *name, long type, const char *unit, const char *desc) : Tango::Attr(name, type, Tango::READ) {
        set_properties(*this, unit, desc);
    }
    void read(Tango::DeviceImpl *dev, Tango::Attribute &att) override { dev_of(dev).read_attribute(att); }
};

class SpectrumAttrR : public Tango::SpectrumAttr {
public:
    SpectrumAttrR(const char *name, long type, const char *unit, const char *desc)
        : Tango::SpectrumAttr(name, type, Tango::READ, 10000) {
        set_properties(*this, unit, desc);
    }
    void read(Tango::DeviceImpl *dev, Tango::Attribute &att) override { dev_of(dev).read_attribute(att); }
};

// One factory per kind of statistics.def.
Tango::Attr *make_LONG(const char *n, const char *u, const char *d) { return new ScalarAttr(n, Tango::DEV_LONG, u, d); }
Tango::Attr *make_LONG64(const char *n, const char *u, const char *d) { return new ScalarAttr(n, Tango::DEV_LONG64, u, d); }
Tango::Attr *make_DOUBLE(const char *n, const char *u, const char *d) { return new ScalarAttr(n, Tango::DEV_DOUBLE, u, d); }
Tango::Attr *make_BOOLEAN(const char *n, const char *u, const char *d) { return new ScalarAttr(n, Tango::DEV_BOOLEAN, u, d); }
Tango::Attr *make_STRINGS(const char *n, const char *u, const char *d) { return new SpectrumAttrR(n, Tango::DEV_STRING, u, d); }
Tango::Attr *make_DOUBLES(const char *n, const char *u, const char *d) { return new SpectrumAttrR(n, Tango::DEV_DOUBLE, u, d); }
Tango::Attr *make_LONGS(const char *n, const char *u, const char *d) { return new SpectrumAttrR(n, Tango::DEV_LONG, u, d); }
Tango::Attr *make_ULONGS(const char *n, const char *u, const char *d) { return new SpectrumAttrR(n, Tango::DEV_ULONG, u, d); }

enum class Origin { HDBPP, HDBPP_NEWER, OURS };

class ContextAttr : public Tango::Attr {
public:
    ContextAttr() : Tango::Attr("Context", Tango::DEV_STRING, Tango::READ_WRITE) {
        Tango::UserDefaultAttrProp p;
        p.set_description("Current context; writing it starts/stops the attributes whose strategy matches");
        set_default_properties(p);
        set_memorized();
        set_memorized_init(true);
    }
    void read(Tango::DeviceImpl *dev, Tango::Attribute &att) override { dev_of(dev).read_attribute(att); }
    void write(Tango::DeviceImpl *dev, Tango::WAttribute &att) override { dev_of(dev).write_context(att); }
};

using Exec = std::function<CORBA::Any *(HdbEventSubscriber &, const CORBA::Any &)>;

class Cmd : public Tango::Command {
public:
    Cmd(const char *name, Tango::CmdArgType in, Tango::CmdArgType out, const char *in_desc, const char *out_desc,
        Exec exec)
        : Tango::Command(name, in, out, in_desc, out_desc, Tango::OPERATOR), exec_(std::move(exec)) {}
    CORBA::Any *execute(Tango::DeviceImpl *dev, const CORBA::Any &in) override { return exec_(dev_of(dev), in); }

private:
    Exec exec_;
};

std::vector<std::string> strings_in(Tango::Command &c, const CORBA::Any &in) {
    const Tango::DevVarStringArray *arr = nullptr;
    c.extract(in, arr);
    std::vector<std::string> out;
    for (CORBA::ULong i = 0; i < arr->length(); ++i) out.emplace_back((*arr)[i].in());
    return out;
}

std::string string_in(Tango::Command &c, const CORBA::Any &in) {
    Tango::DevString s = nullptr;
    c.extract(in, s);
    return s ? s : "";
}

}  // namespace

class HdbEventSubscriberClass : public Tango::DeviceClass {
public:
    static HdbEventSubscriberClass *init(const char *name) {
        if (!instance_) {
            std::string n(name);
            instance_ = new HdbEventSubscriberClass(n);
        }
        return instance_;
    }

protected:
    explicit HdbEventSubscriberClass(std::string &name) : Tango::DeviceClass(name) {
        set_default_property();
    }

    void set_default_property() {}

    void command_factory() override {
        using T = Tango::CmdArgType;
        auto add = [this](Tango::Command *c) { command_list.push_back(c); };
        // The command object is needed to extract: capture it through a holder.
        struct Holder {
            Tango::Command *c = nullptr;
        };
        auto mk_strings_void = [&](const char *n, const char *desc,
                                   std::function<void(HdbEventSubscriber &, const std::vector<std::string> &)> f) {
            auto h = std::make_shared<Holder>();
            auto *c = new Cmd(n, T::DEVVAR_STRINGARRAY, T::DEV_VOID, desc, "", [h, f](HdbEventSubscriber &d, const CORBA::Any &in) {
                f(d, strings_in(*h->c, in));
                return h->c->insert();
            });
            h->c = c;
            add(c);
        };
        auto mk_string_void = [&](const char *n, const char *desc,
                                  std::function<void(HdbEventSubscriber &, const std::string &)> f) {
            auto h = std::make_shared<Holder>();
            auto *c = new Cmd(n, T::DEV_STRING, T::DEV_VOID, desc, "", [h, f](HdbEventSubscriber &d, const CORBA::Any &in) {
                f(d, string_in(*h->c, in));
                return h->c->insert();
            });
            h->c = c;
            add(c);
        };
        auto mk_void = [&](const char *n, std::function<void(HdbEventSubscriber &)> f) {
            auto h = std::make_shared<Holder>();
            auto *c = new Cmd(n, T::DEV_VOID, T::DEV_VOID, "", "", [h, f](HdbEventSubscriber &d, const CORBA::Any &) {
                f(d);
                return h->c->insert();
            });
            h->c = c;
            add(c);
        };
        mk_strings_void("AttributeAdd", "[name, strategy, data_type, data_format, write_type]; only name required",
                        [](HdbEventSubscriber &d, const std::vector<std::string> &a) { d.attribute_add(a); });
        mk_string_void("AttributeRemove", "attribute name", [](HdbEventSubscriber &d, const std::string &s) { d.attribute_remove(s); });
        mk_string_void("AttributeStart", "attribute name", [](HdbEventSubscriber &d, const std::string &s) { d.attribute_start(s); });
        mk_string_void("AttributeStop", "attribute name", [](HdbEventSubscriber &d, const std::string &s) { d.attribute_stop(s); });
        mk_string_void("AttributePause", "attribute name", [](HdbEventSubscriber &d, const std::string &s) { d.attribute_pause(s); });
        mk_void("Start", [](HdbEventSubscriber &d) { d.start(); });
        mk_void("Stop", [](HdbEventSubscriber &d) { d.stop(); });
        mk_void("Pause", [](HdbEventSubscriber &d) { d.pause(); });
        mk_void("ResetStatistics", [](HdbEventSubscriber &d) { d.reset_statistics(); });
        mk_void("StopFaulty", [](HdbEventSubscriber &d) { d.stop_faulty(); });
        mk_strings_void("SetAttributeStrategy", "[name, context1, context2, ...]",
                        [](HdbEventSubscriber &d, const std::vector<std::string> &a) { d.set_attribute_strategy(a); });
        mk_strings_void("SetAttributeTTL", "[name, ttl_hours]",
                        [](HdbEventSubscriber &d, const std::vector<std::string> &a) { d.set_attribute_ttl(a); });
        auto mk_query = [&](const char *n, T out_type, const char *out_desc, auto f) {
            auto h = std::make_shared<Holder>();
            auto *c = new Cmd(n, T::DEV_STRING, out_type, "attribute name", out_desc,
                              [h, f](HdbEventSubscriber &d, const CORBA::Any &in) {
                                  return h->c->insert(f(d, string_in(*h->c, in)));
                              });
            h->c = c;
            add(c);
        };
        mk_query("AttributeStatus", T::DEV_STRING, "status", [](HdbEventSubscriber &d, const std::string &s) {
            return CORBA::string_dup(d.attribute_status(s).c_str());
        });
        mk_query("GetAttributeStrategy", T::DEV_STRING, "contexts", [](HdbEventSubscriber &d, const std::string &s) {
            return CORBA::string_dup(d.get_attribute_strategy(s).c_str());
        });
        mk_query("GetAttributeTTL", T::DEV_ULONG, "ttl in hours (0: forever)",
                 [](HdbEventSubscriber &d, const std::string &s) { return d.get_attribute_ttl(s); });
    }

    void attribute_factory(std::vector<Tango::Attr *> &list) override {
        list = statistic_attributes(false);
        list.push_back(new ContextAttr());
    }

    void device_factory(const Tango::DevVarStringArray *devlist) override {
        for (CORBA::ULong i = 0; i < devlist->length(); ++i) {
            std::string name((*devlist)[i].in());
            auto *dev = new HdbEventSubscriber(this, name);
            device_list.push_back(dev);
            if (Tango::Util::_UseDb && !Tango::Util::_FileDb) export_device(dev);
            else export_device(dev, dev->get_name().c_str());
        }
    }

private:
    static HdbEventSubscriberClass *instance_;
};

HdbEventSubscriberClass *HdbEventSubscriberClass::instance_ = nullptr;

std::vector<Tango::Attr *> statistic_attributes(bool ours) {
    std::vector<Tango::Attr *> list;
#define HDB_STATISTIC(name, origin, kind, unit, description, value) \
    if ((Origin::origin == Origin::OURS) == ours) list.push_back(make_##kind(#name, unit, description));
#include "statistics.def"
#undef HDB_STATISTIC
    return list;
}

Tango::DeviceClass *make_class() { return HdbEventSubscriberClass::init("HdbEventSubscriber"); }

}  // namespace HdbEventSubscriber_ns

void Tango::DServer::class_factory() { add_class(HdbEventSubscriber_ns::make_class()); }
