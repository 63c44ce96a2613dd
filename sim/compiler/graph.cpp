#include "compiler/graph.hpp"

#include <limits>
#include <stdexcept>

#include "common/errors.hpp"

namespace npusim::compiler {

const char* to_string(Layout l) {
    switch (l) {
        case Layout::ND: return "ND";
        case Layout::NCHW: return "NCHW";
        case Layout::NC1HWC0: return "NC1HWC0";
        case Layout::FRACTAL_NZ: return "FRACTAL_NZ";
    }
    return "?";
}

std::int64_t elements(const Shape& s) {
    // Saturates instead of overflowing; the reader rejects anything near this.
    constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
    std::int64_t n = 1;
    for (const std::int64_t d : s) {
        if (d <= 0) return 0;
        if (n > kMax / d) return kMax;
        n *= d;
    }
    return n;
}

std::string to_string(const Shape& s) {
    std::string r = "[";
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i) r += ",";
        r += std::to_string(s[i]);
    }
    return r + "]";
}

std::int64_t Node::attr_int(const std::string& key, std::int64_t fallback) const {
    const auto it = attrs.find(key);
    if (it == attrs.end()) return fallback;
    const Attr& a = it->second;
    if (a.kind == Attr::Kind::integer) return a.i;
    if (a.kind == Attr::Kind::ints && a.list.size() == 1) return a.list[0];
    throw InputError("node " + name + ": attribute '" + key + "' is not an integer");
}

std::vector<std::int64_t> Node::attr_ints(const std::string& key, std::vector<std::int64_t> fallback) const {
    const auto it = attrs.find(key);
    if (it == attrs.end()) return fallback;
    const Attr& a = it->second;
    if (a.kind == Attr::Kind::ints) return a.list;
    if (a.kind == Attr::Kind::integer) return {a.i};
    throw InputError("node " + name + ": attribute '" + key + "' is not an integer or list of integers");
}

int Graph::tensor_index(const std::string& tname) const {
    for (std::size_t i = 0; i < tensors.size(); ++i)
        if (tensors[i].name == tname) return static_cast<int>(i);
    return -1;
}

}  // namespace npusim::compiler
