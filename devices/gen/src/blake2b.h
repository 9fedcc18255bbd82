// SPDX-License-Identifier: Apache-2.0
// BLAKE2b (RFC 7693) with an 8-byte output and no key: the event digest of value-function.md.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hdbgen {

// The digest as Python's int.from_bytes(blake2b(data, digest_size=8).digest(), "little").
uint64_t blake2b64(const void *data, size_t size);

}  // namespace hdbgen
