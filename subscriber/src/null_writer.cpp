// SPDX-License-Identifier: Apache-2.0
#include "null_writer.h"

#include <memory>

#include "writer_registry.h"

namespace hdbbench {

WriteResult NullWriter::write_batch(std::vector<Record> &batch) {
    WriteResult r;
    for (const auto &rec : batch)
        if (rec.kind == RecordKind::Data || rec.kind == RecordKind::Error) ++r.data_rows;
    return r;
}

namespace {
WriterEntry null_entry() {
    WriterEntry e;
    e.name = "null";
    e.aliases = {"none"};
    e.create = [](const LibConfig &) { return std::make_unique<NullWriter>(); };
    return e;
}
const WriterRegistrar registrar{null_entry()};
}  // namespace

}  // namespace hdbbench
