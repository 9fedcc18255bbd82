// SPDX-License-Identifier: Apache-2.0
// hdbbench-es-writer-bench: the subscriber's database writer alone, fed from a synthetic in-process
// source (no Tango), to compare with a raw bulk load of the same rows (benchmarks/subscriber_writer.py).
//
//   hdbbench-es-writer-bench --lib backend=timescaledb --lib connect_string=...
//       --format scalar|spectrum --elements 1000 --attributes 100 --events 200000 --batch 1000
//
// Events: attribute a, event k has data_time = t0 + k ms, value_r = a + k/1000 (spectra: element i
// adds i), quality VALID. One JSON line on stdout: events, rows, seconds, events_per_s, rows_per_s.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "config.h"
#include "record.h"
#include "writer.h"
#include "writer_registry.h"

using namespace hdbbench;

int main(int argc, char **argv) {
    std::vector<std::string> lib;
    std::string format = "scalar", prefix = "tango://127.0.0.1:10000/bench/writer/dev";
    std::size_t elements = 1000, attributes = 100, events = 100000, batch = 1000;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string k = argv[i], v = argv[i + 1];
        if (k == "--lib") lib.push_back(v);
        else if (k == "--format") format = v;
        else if (k == "--elements") elements = std::stoul(v);
        else if (k == "--attributes") attributes = std::stoul(v);
        else if (k == "--events") events = std::stoul(v);
        else if (k == "--batch") batch = std::stoul(v);
        else if (k == "--prefix") prefix = v;
        else {
            std::cerr << "unknown option " << k << "\n";
            return 2;
        }
    }
    if (format != "scalar" && format != "spectrum") {
        std::cerr << "--format scalar|spectrum\n";
        return 2;
    }
    try {
        LibConfig cfg = LibConfig::parse(lib);
        auto writer = make_writer(cfg);
        writer->connect();
        const bool spectrum = format == "spectrum";
        const TimePoint t0 = now_us() - std::chrono::hours(1);
        std::vector<std::string> names;
        for (std::size_t a = 0; a < attributes; ++a) names.push_back(prefix + "/" + format + "_" + std::to_string(a));
        // Register the attributes (att_conf) before timing: one record each, at t0 - 1 s.
        {
            std::vector<Record> reg;
            for (std::size_t a = 0; a < attributes; ++a) {
                Record r;
                r.kind = RecordKind::Data;
                r.data_type = kDevDouble;
                r.data_format = spectrum ? kSpectrum : kScalar;
                r.write_type = kRead;
                r.att_name = names[a];
                r.data_time = t0 - std::chrono::seconds(1);
                r.recv_time = now_us();
                r.value_r = std::vector<double>(spectrum ? elements : 1, 0.0);
                r.dim_x_r = static_cast<std::uint32_t>(spectrum ? elements : 1);
                reg.push_back(std::move(r));
            }
            writer->write_batch(reg);
        }
        std::size_t done = 0, rows = 0, dups = 0, rejected = 0;
        std::vector<Record> b;
        double build_s = 0, write_s = 0;
        while (done < events) {
            const auto c0 = std::chrono::steady_clock::now();
            b.clear();
            for (std::size_t j = 0; j < batch && done + j < events; ++j) {
                const std::size_t n = done + j, a = n % attributes, k = n / attributes;
                Record r;
                r.kind = RecordKind::Data;
                r.data_type = kDevDouble;
                r.data_format = spectrum ? kSpectrum : kScalar;
                r.write_type = kRead;
                r.att_name = names[a];
                r.data_time = t0 + std::chrono::milliseconds(k);
                r.recv_time = r.data_time;
                const double base = static_cast<double>(a) + static_cast<double>(k) / 1000.0;
                if (spectrum) {
                    std::vector<double> v(elements);
                    for (std::size_t i = 0; i < elements; ++i) v[i] = base + static_cast<double>(i);
                    r.value_r = std::move(v);
                    r.dim_x_r = static_cast<std::uint32_t>(elements);
                } else {
                    r.value_r = std::vector<double>{base};
                    r.dim_x_r = 1;
                }
                b.push_back(std::move(r));
            }
            const auto c1 = std::chrono::steady_clock::now();
            WriteResult res = writer->write_batch(b);
            const auto c2 = std::chrono::steady_clock::now();
            build_s += std::chrono::duration<double>(c1 - c0).count();
            write_s += std::chrono::duration<double>(c2 - c1).count();
            done += b.size();
            rows += res.data_rows;
            dups += res.duplicates;
            rejected += res.rejected.size();
        }
        std::printf("{\"backend\": \"%s\", \"format\": \"%s\", \"elements\": %zu, \"attributes\": %zu, \"events\": %zu, "
                    "\"batch\": %zu, \"stored\": %zu, \"duplicates\": %zu, \"rejected\": %zu, \"write_s\": %.4f, "
                    "\"build_s\": %.4f, \"events_per_s\": %.1f}\n",
                    cfg.backend.c_str(), format.c_str(), spectrum ? elements : 1, attributes, done,
                    batch, rows, dups, rejected, write_s, build_s, static_cast<double>(done) / write_s);
        return rejected == 0 ? 0 : 1;
    } catch (const std::exception &e) {
        std::cerr << "writer bench: " << e.what() << "\n";
        return 1;
    }
}
