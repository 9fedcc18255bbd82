// SPDX-License-Identifier: Apache-2.0
#include "wal_flusher.h"

namespace hdbbench {

WalFlusher::~WalFlusher() { stop(); }

void WalFlusher::start() { StoppableThread::start("hdb-wal-flush"); }

void WalFlusher::stop() {
    StoppableThread::stop();
    wal_.sync();
}

void WalFlusher::run() {
    const auto period = wal_.sync_each_append() ? kIdlePeriod : wal_.sync_interval();
    while (!wait_for(period)) wal_.sync();
}

}  // namespace hdbbench
