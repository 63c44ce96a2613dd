#include "tasks/task.hpp"

#include <algorithm>

namespace npusim {

const char* to_string(Kernel k) {
    switch (k) {
        case Kernel::matmul: return "matmul";
        case Kernel::vector: return "vector";
        case Kernel::copy: return "copy";
        case Kernel::scalar: return "scalar";
        case Kernel::program: return "program";
    }
    return "?";
}

namespace {
// Whether some row of `r` meets [lo, hi).
bool meets(const Region& r, std::uint64_t lo, std::uint64_t hi) {
    if (r.rows <= 1 || r.stride == 0) return r.addr < hi && r.addr + r.bytes > lo;
    // Rows j with addr + j·stride < hi and addr + j·stride + bytes > lo.
    const std::uint64_t first = lo + 1 > r.addr + r.bytes ? (lo + 1 - r.addr - r.bytes + r.stride - 1) / r.stride : 0;
    if (hi <= r.addr) return false;
    const std::uint64_t last = std::min<std::uint64_t>((hi - 1 - r.addr) / r.stride, r.rows - 1);
    return first <= last;
}

// Two regions of rows at one stride s meet when some row difference k =
// j - i (every k in [-(a.rows - 1), b.rows - 1] is one) puts b's row j
// within (-b.bytes, a.bytes) bytes of a's row i: (b.addr - a.addr) + k·s in
// that open interval. A range of k, found by two divisions.
bool same_stride_meet(const Region& a, const Region& b) {
    using I = __int128;
    const I s = static_cast<I>(a.stride), d = static_cast<I>(b.addr) - static_cast<I>(a.addr);
    const auto floor_div = [s](I x) { return x >= 0 ? x / s : -((-x + s - 1) / s); };
    const I k_lo = std::max<I>(floor_div(-static_cast<I>(b.bytes) - d) + 1, -static_cast<I>(a.rows - 1));
    const I k_hi = std::min<I>(-floor_div(d - static_cast<I>(a.bytes)) - 1, static_cast<I>(b.rows - 1));
    return k_lo <= k_hi;
}
}  // namespace

bool overlaps(const Region& a, const Region& b) {
    if (a.space != b.space || a.bytes == 0 || b.bytes == 0) return false;
    if (a.addr >= b.end() || b.addr >= a.end()) return false;
    if (a.rows > 1 && b.rows > 1 && a.stride > 0 && a.stride == b.stride) return same_stride_meet(a, b);
    const Region& few = a.rows <= b.rows ? a : b;
    const Region& many = a.rows <= b.rows ? b : a;
    for (std::uint32_t i = 0; i < few.rows; ++i) {
        const std::uint64_t lo = few.addr + i * few.stride;
        if (meets(many, lo, lo + few.bytes)) return true;
    }
    return false;
}

NameIndex TaskStream::intern(const std::string& s) {
    if (s.empty()) return 0;
    auto [it, inserted] = name_index.emplace(s, static_cast<NameIndex>(names.size()));
    if (inserted) names.push_back(s);
    return it->second;
}

double valid_row_share(const KernelParams& p, const std::vector<RowTable>& tables, int rank) {
    if (p.rows_table == 0 || p.rows_span == 0) return 1.0;
    const std::vector<std::uint32_t>& rows = tables[p.rows_table - 1].of(rank);
    const std::uint64_t lo = p.rows_first, hi = lo + p.rows_span, group = std::max<std::uint32_t>(p.rows_group, 1);
    std::uint64_t valid = 0;
    for (std::uint64_t g = lo / group; g < rows.size() && g * group < hi; ++g) {
        const std::uint64_t a = std::max(lo, g * group), b = std::min(hi, g * group + rows[g]);
        if (b > a) valid += b - a;
    }
    return static_cast<double>(valid) / static_cast<double>(p.rows_span);
}

}  // namespace npusim
