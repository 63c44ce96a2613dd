#include "compiler/attention_layout.hpp"

#include <string>
#include <vector>

#include "common/did_you_mean.hpp"
#include "common/errors.hpp"

namespace npusim::compiler {

bool seq_major(const Node& n) {
    const auto it = n.attrs.find("layout");
    if (it == n.attrs.end()) return false;
    if (it->second.kind == Attr::Kind::string && (it->second.s == "BNSD" || it->second.s == "BSND"))
        return it->second.s == "BSND";
    const std::string got =
        it->second.kind == Attr::Kind::string ? "\"" + it->second.s + "\"" : std::string("a non-string");
    throw InputError(
        "node " + n.name + ": attrs.layout: expected \"BNSD\" or \"BSND\", got " + got +
        (it->second.kind == Attr::Kind::string ? did_you_mean(it->second.s, {"BNSD", "BSND"}) : std::string()));
}

AttentionDims attention_dims(const Shape& s, bool seq_major) {
    AttentionDims a;
    const std::size_t n = s.size();
    if (n < 2) return a;
    a.d = s[n - 1];
    const std::size_t seq_axis = seq_major && n >= 3 ? n - 3 : n - 2;
    a.seq = s[seq_axis];
    for (std::size_t i = 0; i + 1 < n; ++i)
        if (i != seq_axis) a.heads *= s[i];
    if (seq_major && n >= 3) a.per_row = s[n - 2];
    return a;
}

}  // namespace npusim::compiler
