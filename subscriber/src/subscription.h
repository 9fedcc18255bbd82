// SPDX-License-Identifier: Apache-2.0
// The two small interfaces between the archiver core and the Tango layer, both Tango-free:
// SubscriptionBackend (the core asks for subscriptions) and EventSink (the Tango callbacks hand over
// what they received; copy and enqueue only).
#pragma once

#include <memory>
#include <string>

#include "archived_attribute.h"
#include "record.h"

namespace hdbbench {

struct Subscription {
    std::shared_ptr<void> handle;  // kept by the attribute, given back to unsubscribe()
    bool change_event = false;     // subscribed to CHANGE events as the fallback of ARCHIVE events
    std::string warning;           // why the ARCHIVE subscription is not in place yet ("" when it is)
};

class SubscriptionBackend {
public:
    virtual ~SubscriptionBackend() = default;
    // Subscribe the configuration then the archive event. Throws std::exception with a message on failure.
    virtual Subscription subscribe(const AttributePtr &attribute) = 0;
    virtual void unsubscribe(std::shared_ptr<void> handle) = 0;
};

class EventSink {
public:
    virtual ~EventSink() = default;
    virtual void on_data(const AttributePtr &attribute, Record &&r) = 0;
    virtual void on_error(const AttributePtr &attribute, const std::string &desc, TimePoint when) = 0;
    virtual void on_config(const AttributePtr &attribute, AttributeTypes types, const ParamInfo &param) = 0;
    virtual void on_config_error(const AttributePtr &attribute, const std::string &desc) = 0;
};

}  // namespace hdbbench
