#include "hw/fabric.hpp"

#include <algorithm>

namespace npusim {

namespace {
std::uint64_t round_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }
}  // namespace

std::uint32_t write_blocks(const WriteRequest& w, std::uint32_t block_bytes) {
    switch (w.kind) {
        case WriteKind::flag: return 1;
        case WriteKind::data_as_flag:
            return static_cast<std::uint32_t>(std::max<std::uint64_t>(1, (w.bytes + block_bytes - 9) / (block_bytes - 8)));
        case WriteKind::data: break;
    }
    return static_cast<std::uint32_t>(std::max<std::uint64_t>(1, (w.bytes + block_bytes - 1) / block_bytes));
}

std::uint64_t write_wire_bytes(const WriteRequest& w, std::uint32_t block_bytes, std::uint32_t header_bytes) {
    const std::uint64_t headers = static_cast<std::uint64_t>(write_blocks(w, block_bytes)) * header_bytes;
    switch (w.kind) {
        case WriteKind::flag:
            return std::min<std::uint64_t>(round_up(std::max<std::uint64_t>(w.bytes, 8), 32), block_bytes) + headers;
        case WriteKind::data_as_flag: return static_cast<std::uint64_t>(write_blocks(w, block_bytes)) * block_bytes + headers;
        case WriteKind::data: break;
    }
    return round_up(std::max<std::uint64_t>(w.bytes, 1), 32) + headers;
}

}  // namespace npusim
