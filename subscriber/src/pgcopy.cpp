// SPDX-License-Identifier: Apache-2.0
#include "pgcopy.h"

namespace hdbbench::pgcopy {

namespace {
const char kSignature[] = "PGCOPY\n\377\r\n";  // 11 bytes with the trailing NUL
}

Buffer::Buffer() { clear(); }

void Buffer::clear() {
    buf_.clear();
    buf_.append(kSignature, 11);
    be32(0);  // flags
    be32(0);  // header extension length
}

void Buffer::numeric_u64(std::uint64_t v) {
    // numeric: ndigits, weight, sign, dscale, then base-10000 digits, most significant first.
    std::int16_t digits[5];
    int n = 0;
    while (v) {
        digits[n++] = static_cast<std::int16_t>(v % 10000);
        v /= 10000;
    }
    int low = 0;  // trailing zero digits can be dropped (weight keeps the magnitude)
    while (low < n && digits[low] == 0) ++low;
    const int nd = n - low;
    be32(static_cast<std::uint32_t>(8 + 2 * nd));
    be16(static_cast<std::int16_t>(nd));
    be16(static_cast<std::int16_t>(n ? n - 1 : 0));
    be16(0);  // positive
    be16(0);  // dscale
    for (int i = n - 1; i >= low; --i) be16(digits[i]);
}

}  // namespace hdbbench::pgcopy
