// SPDX-License-Identifier: Apache-2.0
#include "mysql_writer.h"

namespace hdbbench {

MySqlWriter::MySqlWriter(LibConfig cfg) : cfg_(std::move(cfg)) {}
MySqlWriter::~MySqlWriter() { disconnect(); }
bool MySqlWriter::connected() const { return false; }
void MySqlWriter::disconnect() {}
void MySqlWriter::connect() { throw DbError("mysql writer not implemented yet", true); }
WriteResult MySqlWriter::write_batch(std::vector<Record> &) { throw DbError("mysql writer not implemented yet", true); }

}  // namespace hdbbench
