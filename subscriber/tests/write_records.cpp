// SPDX-License-Identifier: Apache-2.0
// hdbbench-es-write-records: records given on stdin go through the subscriber's real writer
// (PgWriter or MysqlWriter, chosen by the LibConfiguration) into the database, in one batch. The
// property tests (tests/test_properties_subscriber.py) feed it random values and read them back.
//
//   hdbbench-es-write-records --lib backend=mysql --lib host=... < records.txt
//
// One record per line, fields separated by one space:
//   kind type format write quality att_name data_time_us dim_x_r dim_y_r dim_x_w dim_y_w text value_r value_w
// kind: 0 data, 1 error; att_name and text: hex of their bytes ("-" for empty); a value: "none" or
// <class>:<count>:<elements separated by ','> with class i (int64, decimal), u (uint64, decimal),
// d (double, the 16 hex digits of its bits, so NaN and infinities pass exactly) or s (hex of bytes).
// Prints one line: {"stored": <data rows>, "duplicates": n, "rejected": n}; each rejection on stderr.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "config.h"
#include "record.h"
#include "writer.h"
#include "writer_registry.h"

using namespace hdbbench;

namespace {

std::string unhex(const std::string &h) {
    if (h == "-") return {};
    if (h.size() % 2) throw std::runtime_error("odd hex length");
    std::string out;
    for (std::size_t i = 0; i < h.size(); i += 2) out += static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16));
    return out;
}

Values parse_values(const std::string &field) {
    if (field == "none") return std::monostate{};
    const auto head = field.find(':'), second = field.find(':', head + 1);
    if (head == std::string::npos || second == std::string::npos) throw std::runtime_error("bad value " + field);
    const char cls = field[0];
    const std::size_t count = std::stoul(field.substr(head + 1, second - head - 1));
    const std::vector<std::string> items = count ? split(field.substr(second + 1), ',') : std::vector<std::string>{};
    if (items.size() != count) throw std::runtime_error("count mismatch in " + field.substr(0, 40));
    switch (cls) {
    case 'i': {
        std::vector<int64_t> v;
        for (const auto &x : items) v.push_back(std::stoll(x));
        return v;
    }
    case 'u': {
        std::vector<uint64_t> v;
        for (const auto &x : items) v.push_back(std::stoull(x));
        return v;
    }
    case 'd': {
        std::vector<double> v;
        for (const auto &x : items) {
            const uint64_t bits = std::stoull(x, nullptr, 16);
            double d;
            std::memcpy(&d, &bits, sizeof d);
            v.push_back(d);
        }
        return v;
    }
    case 's': {
        std::vector<std::string> v;
        for (const auto &x : items) v.push_back(unhex(x.empty() ? "-" : x));
        return v;
    }
    default:
        throw std::runtime_error(std::string("unknown value class ") + cls);
    }
}

Record parse_record(const std::string &line) {
    const auto f = split(line, ' ');
    if (f.size() != 14) throw std::runtime_error("expected 14 fields, got " + std::to_string(f.size()));
    Record r;
    r.kind = static_cast<RecordKind>(std::stoi(f[0]));
    r.data_type = static_cast<int8_t>(std::stoi(f[1]));
    r.data_format = static_cast<int8_t>(std::stoi(f[2]));
    r.write_type = static_cast<int8_t>(std::stoi(f[3]));
    r.quality = static_cast<int16_t>(std::stoi(f[4]));
    r.att_name = unhex(f[5]);
    r.data_time = TimePoint(std::chrono::microseconds(std::stoll(f[6])));
    r.recv_time = now_us();
    r.dim_x_r = static_cast<uint32_t>(std::stoul(f[7]));
    r.dim_y_r = static_cast<uint32_t>(std::stoul(f[8]));
    r.dim_x_w = static_cast<uint32_t>(std::stoul(f[9]));
    r.dim_y_w = static_cast<uint32_t>(std::stoul(f[10]));
    r.text = unhex(f[11]);
    r.value_r = parse_values(f[12]);
    r.value_w = parse_values(f[13]);
    return r;
}

}  // namespace

int main(int argc, char **argv) {
    std::vector<std::string> lib;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::string(argv[i]) != "--lib") {
            std::cerr << "usage: hdbbench-es-write-records --lib key=value ... < records\n";
            return 2;
        }
        lib.push_back(argv[i + 1]);
    }
    try {
        std::vector<Record> batch;
        std::string line;
        while (std::getline(std::cin, line))
            if (!line.empty()) batch.push_back(parse_record(line));
        auto writer = make_writer(LibConfig::parse(lib));
        writer->connect();
        const WriteResult res = writer->write_batch(batch);
        for (const auto &r : res.rejected) std::cerr << "rejected " << r.att_name << ": " << r.error << "\n";
        std::printf("{\"stored\": %zu, \"duplicates\": %zu, \"rejected\": %zu}\n", res.data_rows, res.duplicates,
                    res.rejected.size());
        return 0;
    } catch (const std::exception &e) {
        std::cerr << "write-records: " << e.what() << "\n";
        return 1;
    }
}
