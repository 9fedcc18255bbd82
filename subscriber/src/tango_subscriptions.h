// SPDX-License-Identifier: Apache-2.0
// Tango side of the event path: subscriptions (configuration event, then ARCHIVE event, CHANGE as
// fallback, stateless so that devices not yet up are retried by Tango) and the callbacks, which only
// convert the Tango event into a Record and hand it to the core's EventSink.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "subscription.h"

namespace Tango {
class DeviceProxy;
class DeviceAttribute;
}  // namespace Tango

namespace hdbbench {

class TangoSubscriptions : public SubscriptionBackend {
public:
    TangoSubscriptions(EventSink &sink, bool change_as_fallback);
    ~TangoSubscriptions() override;
    Subscription subscribe(const AttributePtr &attribute) override;
    void unsubscribe(std::shared_ptr<void> handle) override;

private:
    std::shared_ptr<Tango::DeviceProxy> proxy(const std::string &device);
    EventSink &sink_;
    bool change_as_fallback_;
    std::mutex mutex_;
    std::map<std::string, std::shared_ptr<Tango::DeviceProxy>> proxies_;
};

// Convert the value part of a Tango DeviceAttribute (exposed for reuse). write_type decides which of
// the read/set parts go to value_r / value_w.
void fill_record_values(Tango::DeviceAttribute &da, int write_type, Record &r);

}  // namespace hdbbench
