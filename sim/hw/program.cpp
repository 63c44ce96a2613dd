#include "hw/program.hpp"

#include <map>

#include <fmt/format.h>

#include "common/did_you_mean.hpp"
#include "common/errors.hpp"

namespace npusim {

namespace {

// Registered factories, and the programs built from them. One process runs
// one simulation (SystemC cannot restart), so a cache that lives as long as
// the process holds the programs of that one run.
std::map<std::string, ProgramFactory>& factories() {
    static std::map<std::string, ProgramFactory> f;
    return f;
}

std::map<std::pair<std::string, std::string>, std::shared_ptr<const Program>>& built() {
    static std::map<std::pair<std::string, std::string>, std::shared_ptr<const Program>> b;
    return b;
}

}  // namespace

void register_program(const std::string& name, ProgramFactory make) { factories()[name] = make; }

std::vector<std::string> program_names() {
    std::vector<std::string> out;
    for (const auto& [name, f] : factories()) out.push_back(name);
    return out;
}

std::shared_ptr<const Program> program_for(const ProgramDecl& decl, const std::string& file, const ChipParams& chip) {
    const auto key = std::make_pair(decl.name, decl.args);
    auto it = built().find(key);
    if (it != built().end()) return it->second;
    const auto f = factories().find(decl.name);
    if (f == factories().end()) {
        const std::vector<std::string> names = program_names();
        std::string known;
        for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
        throw InputError(fmt::format("{}:{}: program '{}': no program named '{}' (known: {}){}", file, decl.line, decl.id,
                                     decl.name, known.empty() ? "none" : known, did_you_mean(decl.name, names)));
    }
    try {
        return built()[key] = f->second(decl.args, chip);
    } catch (const InputError& e) {
        throw InputError(fmt::format("{}:{}: program '{}' ({}): {}", file, decl.line, decl.id, decl.name, e.what()));
    }
}

}  // namespace npusim
