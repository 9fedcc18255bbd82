// SPDX-License-Identifier: Apache-2.0
// The send high-water mark of Tango's event consumer's SUB sockets (LibConfiguration
// `event_sub_send_hwm`), applied by interposing zmq_setsockopt (event_consumer_hwm.cpp).
#pragma once

#include <cstdint>
#include <optional>

namespace hdbbench {

// cppTango's own value (SUB_SEND_HWM in tango_const.h, 9.3.4).
constexpr std::uint32_t kTangoSubSendHwm = 10000;

// The ZMQ_SNDHWM to give every SUB socket that is configured from now on; 0 = unlimited.
// Process-wide: Tango has one event consumer per process, and it sets the option once, when it
// creates its sockets (at the first subscription); a later change does not reach them.
void set_event_sub_send_hwm(std::uint32_t value);

// The value actually given to the event consumer's sockets, or nothing while none was created.
std::optional<std::uint32_t> applied_event_sub_send_hwm();

}  // namespace hdbbench
