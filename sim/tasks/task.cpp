#include "tasks/task.hpp"

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

NameIndex TaskStream::intern(const std::string& s) {
    if (s.empty()) return 0;
    auto [it, inserted] = name_index.emplace(s, static_cast<NameIndex>(names.size()));
    if (inserted) names.push_back(s);
    return it->second;
}

}  // namespace npusim
