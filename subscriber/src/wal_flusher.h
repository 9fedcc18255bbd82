// SPDX-License-Identifier: Apache-2.0
// The write-ahead log's flusher (thread `hdb-wal-flush`): every spool_sync_ms it writes and fsyncs
// what the event callbacks appended, persists the writer's checkpoint and deletes committed segments.
// With spool_sync_ms=0 the callbacks sync themselves; the flusher then only keeps the checkpoint and
// the segments up to date (every kIdlePeriod).
#pragma once

#include <chrono>

#include "stoppable_thread.h"
#include "wal.h"

namespace hdbbench {

class WalFlusher : private StoppableThread {
public:
    static constexpr std::chrono::milliseconds kIdlePeriod{100};
    explicit WalFlusher(WriteAheadLog &wal) : wal_(wal) {}
    ~WalFlusher() override;
    void start();
    // Stop after a last sync (records appended so far are logged, the checkpoint persisted).
    void stop();

private:
    void run() override;
    WriteAheadLog &wal_;
};

}  // namespace hdbbench
