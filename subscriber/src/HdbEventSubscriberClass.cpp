// SPDX-License-Identifier: Apache-2.0
// Tango class boilerplate of HdbEventSubscriber: attribute and command descriptions, device factory.
#include <tango.h>

#include <functional>

#include "HdbEventSubscriber.h"

namespace HdbEventSubscriber_ns {

namespace {

HdbEventSubscriber &dev_of(Tango::DeviceImpl *d) { return *static_cast<HdbEventSubscriber *>(d); }

class ScalarAttr : public Tango::Attr {
public:
    ScalarAttr(const char *name, long type, const char *unit = "", const char *desc = "")
        : Tango::Attr(name, type, Tango::READ) {
        Tango::UserDefaultAttrProp p;
        if (*unit) p.set_unit(unit);
        if (*desc) p.set_description(desc);
        set_default_properties(p);
    }
    void read(Tango::DeviceImpl *dev, Tango::Attribute &att) override { dev_of(dev).read_attribute(att); }
};

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

class SpectrumAttrR : public Tango::SpectrumAttr {
public:
    SpectrumAttrR(const char *name, long type, const char *desc = "") : Tango::SpectrumAttr(name, type, Tango::READ, 10000) {
        if (*desc) {
            Tango::UserDefaultAttrProp p;
            p.set_description(desc);
            set_default_properties(p);
        }
    }
    void read(Tango::DeviceImpl *dev, Tango::Attribute &att) override { dev_of(dev).read_attribute(att); }
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
        {
            auto h = std::make_shared<Holder>();
            auto *c = new Cmd("AttributeStatus", T::DEV_STRING, T::DEV_STRING, "attribute name", "status",
                              [h](HdbEventSubscriber &d, const CORBA::Any &in) {
                                  const std::string s = d.attribute_status(string_in(*h->c, in));
                                  return h->c->insert(CORBA::string_dup(s.c_str()));
                              });
            h->c = c;
            add(c);
        }
        {
            auto h = std::make_shared<Holder>();
            auto *c = new Cmd("GetAttributeStrategy", T::DEV_STRING, T::DEV_STRING, "attribute name", "contexts",
                              [h](HdbEventSubscriber &d, const CORBA::Any &in) {
                                  const std::string s = d.get_attribute_strategy(string_in(*h->c, in));
                                  return h->c->insert(CORBA::string_dup(s.c_str()));
                              });
            h->c = c;
            add(c);
        }
        {
            auto h = std::make_shared<Holder>();
            auto *c = new Cmd("GetAttributeTTL", T::DEV_STRING, T::DEV_ULONG, "attribute name", "ttl in hours (0: forever)",
                              [h](HdbEventSubscriber &d, const CORBA::Any &in) {
                                  const Tango::DevULong v = d.get_attribute_ttl(string_in(*h->c, in));
                                  return h->c->insert(v);
                              });
            h->c = c;
            add(c);
        }
    }

    void attribute_factory(std::vector<Tango::Attr *> &list) override {
        for (const char *n : {"AttributeNumber", "AttributeOkNumber", "AttributeNokNumber", "AttributePendingNumber",
                              "AttributeMaxPendingNumber", "AttributeStartedNumber", "AttributeStoppedNumber",
                              "AttributePausedNumber"})
            list.push_back(new ScalarAttr(n, Tango::DEV_LONG));
        for (const char *n : {"AttributeMaxStoreTime", "AttributeMinStoreTime", "AttributeMaxProcessingTime",
                              "AttributeMinProcessingTime", "StatisticsResetTime"})
            list.push_back(new ScalarAttr(n, Tango::DEV_DOUBLE, "s"));
        list.push_back(new ScalarAttr("AttributeRecordFreq", Tango::DEV_DOUBLE, "events/window"));
        list.push_back(new ScalarAttr("AttributeFailureFreq", Tango::DEV_DOUBLE, "events/window"));
        list.push_back(new ScalarAttr("AttributeRecordFreqInst", Tango::DEV_DOUBLE, "events/s"));
        list.push_back(new ScalarAttr("AttributeFailureFreqInst", Tango::DEV_DOUBLE, "events/s"));
        list.push_back(new ContextAttr());
        for (const char *n : {"AttributeList", "AttributeOkList", "AttributeNokList", "AttributePendingList",
                              "AttributeStartedList", "AttributeStoppedList", "AttributePausedList",
                              "AttributeErrorList", "AttributeStrategyList", "ContextsList"})
            list.push_back(new SpectrumAttrR(n, Tango::DEV_STRING));
        for (const char *n : {"AttributeRecordFreqList", "AttributeFailureFreqList", "AttributeRecordFreqInstList",
                              "AttributeFailureFreqInstList"})
            list.push_back(new SpectrumAttrR(n, Tango::DEV_DOUBLE));
        list.push_back(new SpectrumAttrR("AttributeEventNumberList", Tango::DEV_LONG));
        list.push_back(new SpectrumAttrR("AttributeTTLList", Tango::DEV_ULONG));
        // beyond HDB++
        list.push_back(new ScalarAttr("PendingEventNumber", Tango::DEV_LONG64, "events",
                                      "events waiting: memory queue + disk spool + batch being written"));
        list.push_back(new ScalarAttr("PendingEventAge", Tango::DEV_DOUBLE, "s", "age of the oldest waiting event"));
        list.push_back(new ScalarAttr("EventAgeAtCommitP50", Tango::DEV_DOUBLE, "s",
                                      "median of commit time - source timestamp over the statistics window"));
        list.push_back(new ScalarAttr("EventAgeAtCommitP99", Tango::DEV_DOUBLE, "s",
                                      "99th percentile of commit time - source timestamp over the statistics window"));
        list.push_back(new ScalarAttr("EventAgeAtCommitMax", Tango::DEV_DOUBLE, "s",
                                      "maximum of commit time - source timestamp over the statistics window"));
        // The age at commit split in two: what the event brought with it, and what the subscriber added.
        for (const char *q : {"P50", "P99", "Max"}) {
            const std::string reception = std::string("EventAgeAtReception") + q, inside = std::string("TimeInSubscriber") + q;
            const std::string reception_desc = std::string(q) + " of reception time - source timestamp (device and Tango "
                                               "delivery) over the statistics window";
            const std::string inside_desc = std::string(q) + " of commit time - reception time (queue, batching, "
                                            "commit) over the statistics window";
            list.push_back(new ScalarAttr(reception.c_str(), Tango::DEV_DOUBLE, "s", reception_desc.c_str()));
            list.push_back(new ScalarAttr(inside.c_str(), Tango::DEV_DOUBLE, "s", inside_desc.c_str()));
        }
        list.push_back(new ScalarAttr("LastBatchSize", Tango::DEV_LONG64, "records"));
        list.push_back(new ScalarAttr("LastBatchCommitTime", Tango::DEV_DOUBLE, "s"));
        list.push_back(new ScalarAttr("MeanBatchSize", Tango::DEV_DOUBLE, "rows", "over the statistics window"));
        list.push_back(new ScalarAttr("MeanBatchCommitTime", Tango::DEV_DOUBLE, "s", "over the statistics window"));
        list.push_back(new ScalarAttr("RowsStoredPerSecInst", Tango::DEV_DOUBLE, "rows/s", "during the last second"));
        list.push_back(new ScalarAttr("RowsStoredPerSecWindow", Tango::DEV_DOUBLE, "rows/s", "over the statistics window"));
        list.push_back(new ScalarAttr("RowsStoredNumber", Tango::DEV_LONG64, "rows", "since start"));
        list.push_back(new ScalarAttr("DuplicateRowNumber", Tango::DEV_LONG64, "rows",
                                      "rows skipped because already stored (replays, colliding error rows)"));
        list.push_back(new ScalarAttr("SpooledEventNumber", Tango::DEV_LONG64, "events", "events now in the disk spool"));
        list.push_back(new ScalarAttr("SpooledEventTotal", Tango::DEV_LONG64, "events", "events ever spooled"));
        list.push_back(new ScalarAttr("SpoolSize", Tango::DEV_DOUBLE, "MiB"));
        list.push_back(new ScalarAttr("LostEventNumber", Tango::DEV_LONG64, "events",
                                      "events dropped because queue and spool were full"));
        list.push_back(new ScalarAttr("ReconnectNumber", Tango::DEV_LONG64, "", "database connections lost"));
        list.push_back(new ScalarAttr("DbErrorNumber", Tango::DEV_LONG64, "rows", "rows rejected by the database"));
        list.push_back(new ScalarAttr("DbConnected", Tango::DEV_BOOLEAN));
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

Tango::DeviceClass *make_class() { return HdbEventSubscriberClass::init("HdbEventSubscriber"); }

}  // namespace HdbEventSubscriber_ns

void Tango::DServer::class_factory() { add_class(HdbEventSubscriber_ns::make_class()); }
