// SPDX-License-Identifier: Apache-2.0
// The subscriber's statistics in Prometheus's text exposition format (0.0.4), generated from
// statistics.def so that a metric's name always follows its attribute's: HDB++'s attributes become
// hdbpp_<snake_case> (AttributePendingNumber -> hdbpp_attribute_pending_number), ours
// hdbbench_<snake_case> (RowsStoredNumber -> hdbbench_rows_stored_number). hdbbench's exporter
// (hdbbench/subscribers/exporter.py) names the attributes of any HdbEventSubscriber by the same rule.
#pragma once

#include <string>

#include "statistics.h"

namespace hdbbench {

inline constexpr const char *kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

// AttributeTTLList -> attribute_ttl_list, EventAgeAtCommitP50 -> event_age_at_commit_p50 (the rule of
// subscriber/tools/gen_statistics.py's constant_name, lower-cased).
std::string snake_case(const std::string &camel);
// hdbpp_<snake_case> for HDB++'s statistics, hdbbench_<snake_case> for ours.
std::string metric_name(const std::string &statistic, bool ours);

// Every scalar statistic of the snapshot as a gauge labelled device="<device>" (spectra are per
// attribute and left to Tango). Strict (hdbpp_strict=1): HDB++'s only, as the device publishes.
std::string render_metrics(const ArchiverSnapshot &s, const std::string &device, bool strict);

}  // namespace hdbbench
