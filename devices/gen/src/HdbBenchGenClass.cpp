// SPDX-License-Identifier: Apache-2.0
// Tango class boilerplate of HdbBenchGen: statistics attributes, commands, properties, device factory.
#include <tango.h>

#include <functional>

#include "HdbBenchGen.h"

namespace HdbBenchGen_ns {

namespace {

HdbBenchGen &dev_of(Tango::DeviceImpl *d) { return *static_cast<HdbBenchGen *>(d); }

class StatScalar : public Tango::Attr {
public:
    StatScalar(const char *name, long type, const char *unit, const char *desc) : Tango::Attr(name, type, Tango::READ) {
        Tango::UserDefaultAttrProp p;
        if (*unit) p.set_unit(unit);
        p.set_description(desc);
        set_default_properties(p);
    }
    void read(Tango::DeviceImpl *dev, Tango::Attribute &att) override { dev_of(dev).read_statistic(att); }
};

class StatSpectrum : public Tango::SpectrumAttr {
public:
    StatSpectrum(const char *name, long type, const char *unit, const char *desc)
        : Tango::SpectrumAttr(name, type, Tango::READ, 100000) {
        Tango::UserDefaultAttrProp p;
        if (*unit) p.set_unit(unit);
        p.set_description(desc);
        set_default_properties(p);
    }
    void read(Tango::DeviceImpl *dev, Tango::Attribute &att) override { dev_of(dev).read_statistic(att); }
};

using Exec = std::function<void(HdbBenchGen &, Tango::Command &, const CORBA::Any &)>;

class Cmd : public Tango::Command {
public:
    Cmd(const char *name, Tango::CmdArgType in, const char *in_desc, Exec exec)
        : Tango::Command(name, in, Tango::DEV_VOID, in_desc, "", Tango::OPERATOR), exec_(std::move(exec)) {}
    CORBA::Any *execute(Tango::DeviceImpl *dev, const CORBA::Any &in) override {
        exec_(dev_of(dev), *this, in);
        return insert();
    }

private:
    Exec exec_;
};

std::vector<std::string> strings_of(const Tango::DevVarStringArray &arr) {
    std::vector<std::string> out;
    for (CORBA::ULong i = 0; i < arr.length(); ++i) out.emplace_back(arr[i].in());
    return out;
}

void throw_bad(const char *what, const char *origin) { Tango::Except::throw_exception("HdbBench_BadArgument", what, origin); }

}  // namespace

class HdbBenchGenClass : public Tango::DeviceClass {
public:
    static HdbBenchGenClass *init(const char *name) {
        if (!instance_) {
            std::string n(name);
            instance_ = new HdbBenchGenClass(n);
        }
        return instance_;
    }

protected:
    explicit HdbBenchGenClass(std::string &name) : Tango::DeviceClass(name) {}

    void command_factory() override {
        using T = Tango::CmdArgType;
        auto add = [this](Cmd *c) { command_list.push_back(c); };
        add(new Cmd("Start", T::DEV_VOID, "start every generated attribute (schedule from now)",
                    [](HdbBenchGen &d, Tango::Command &, const CORBA::Any &) { d.start(nullptr); }));
        add(new Cmd("Stop", T::DEV_VOID, "stop every generated attribute",
                    [](HdbBenchGen &d, Tango::Command &, const CORBA::Any &) { d.stop(nullptr); }));
        add(new Cmd("Reset", T::DEV_VOID, "stop and rewind to event 0 with zeroed statistics",
                    [](HdbBenchGen &d, Tango::Command &, const CORBA::Any &) { d.reset(); }));
        add(new Cmd("StartAttributes", T::DEVVAR_STRINGARRAY, "attribute names",
                    [](HdbBenchGen &d, Tango::Command &c, const CORBA::Any &in) {
                        const Tango::DevVarStringArray *arr = nullptr;
                        c.extract(in, arr);
                        const auto names = strings_of(*arr);
                        d.start(&names);
                    }));
        add(new Cmd("StopAttributes", T::DEVVAR_STRINGARRAY, "attribute names",
                    [](HdbBenchGen &d, Tango::Command &c, const CORBA::Any &in) {
                        const Tango::DevVarStringArray *arr = nullptr;
                        c.extract(in, arr);
                        const auto names = strings_of(*arr);
                        d.stop(&names);
                    }));
        add(new Cmd("SetRate", T::DEV_DOUBLE, "events/s for every push-mode attribute",
                    [](HdbBenchGen &d, Tango::Command &c, const CORBA::Any &in) {
                        Tango::DevDouble rate = 0;
                        c.extract(in, rate);
                        d.set_rate(rate, nullptr);
                    }));
        add(new Cmd("SetAttributeRate", T::DEVVAR_DOUBLESTRINGARRAY, "[[rate_hz], [name, ...]]: one rate for the names",
                    [](HdbBenchGen &d, Tango::Command &c, const CORBA::Any &in) {
                        const Tango::DevVarDoubleStringArray *arg = nullptr;
                        c.extract(in, arg);
                        if (arg->dvalue.length() != 1) throw_bad("give exactly one rate", "SetAttributeRate");
                        const auto names = strings_of(arg->svalue);
                        d.set_rate(arg->dvalue[0], &names);
                    }));
        add(new Cmd("Burst", T::DEV_LONG64, "n: emit n extra events now on every push-mode attribute",
                    [](HdbBenchGen &d, Tango::Command &c, const CORBA::Any &in) {
                        Tango::DevLong64 n = 0;
                        c.extract(in, n);
                        d.burst(n, nullptr);
                    }));
        add(new Cmd("BurstAttributes", T::DEVVAR_LONGSTRINGARRAY, "[[n], [name, ...]]: n extra events on the names",
                    [](HdbBenchGen &d, Tango::Command &c, const CORBA::Any &in) {
                        const Tango::DevVarLongStringArray *arg = nullptr;
                        c.extract(in, arg);
                        if (arg->lvalue.length() != 1) throw_bad("give exactly one count", "BurstAttributes");
                        const auto names = strings_of(arg->svalue);
                        d.burst(arg->lvalue[0], &names);
                    }));
    }

    void attribute_factory(std::vector<Tango::Attr *> &list) override {
        list.push_back(new StatScalar("Running", Tango::DEV_BOOLEAN, "", "true while any generated attribute is started"));
        list.push_back(new StatScalar("EmitterSeed", Tango::DEV_LONG64, "", "seed of the generated sequences"));
        list.push_back(new StatSpectrum("GeneratedAttributes", Tango::DEV_STRING, "",
                                        "generated attribute names: the order of the *List attributes"));
        list.push_back(new StatSpectrum("EventsEmittedList", Tango::DEV_ULONG64, "", "events emitted per attribute"));
        list.push_back(new StatSpectrum("ErrorsEmittedList", Tango::DEV_ULONG64, "", "error events emitted per attribute"));
        list.push_back(new StatSpectrum("ChecksumList", Tango::DEV_ULONG64, "",
                                        "per attribute: sum mod 2**64 of the emitted events' digests"));
        list.push_back(new StatSpectrum("AchievedRateList", Tango::DEV_DOUBLE, "events/s", "achieved rate per attribute (last 5 s)"));
        list.push_back(new StatSpectrum("TargetRateList", Tango::DEV_DOUBLE, "events/s", "configured rate per attribute"));
        list.push_back(new StatScalar("EventsEmittedTotal", Tango::DEV_ULONG64, "", "events emitted by all generated attributes"));
        list.push_back(new StatScalar("AchievedRate", Tango::DEV_DOUBLE, "events/s", "achieved rate of the whole device (last 5 s)"));
        list.push_back(new StatScalar("MaxLag", Tango::DEV_DOUBLE, "s", "largest delay of a push-mode attribute behind its schedule"));
        list.push_back(new StatScalar("PushFailures", Tango::DEV_ULONG64, "", "pushes that raised (the event is counted as emitted)"));
        list.push_back(new StatScalar("Statistics", Tango::DEV_STRING, "", "JSON: every statistic per attribute, and the device totals"));
    }

    void device_factory(const Tango::DevVarStringArray *devlist) override {
        for (CORBA::ULong i = 0; i < devlist->length(); ++i) {
            std::string name((*devlist)[i].in());
            auto *dev = new HdbBenchGen(this, name);
            device_list.push_back(dev);
            if (Tango::Util::_UseDb && !Tango::Util::_FileDb) export_device(dev);
            else export_device(dev, dev->get_name().c_str());
        }
    }

private:
    static HdbBenchGenClass *instance_;
};

HdbBenchGenClass *HdbBenchGenClass::instance_ = nullptr;

Tango::DeviceClass *make_class() { return HdbBenchGenClass::init("HdbBenchGen"); }

}  // namespace HdbBenchGen_ns

void Tango::DServer::class_factory() { add_class(HdbBenchGen_ns::make_class()); }
