// The layers the build enforces (docs/design.md §3): each sim/<layer> is
// a library that links only the layers it names. Static libraries cannot stop
// a source from including a header of a layer it does not link (every layer
// sees the same include root), so this test reads the table the build wrote
// (generated/layers.txt) and checks every #include of every source against it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/build_paths.hpp"

namespace fs = std::filesystem;

namespace {

struct Layer {
    bool systemc = false;
    std::vector<std::string> deps;
};
using LayerTable = std::map<std::string, Layer>;

LayerTable parse_table(std::istream& in) {
    LayerTable t;
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream s(line);
        std::string name, sc, deps;
        if (!(s >> name >> sc)) continue;
        s >> deps;
        Layer l;
        l.systemc = sc == "systemc=yes";
        deps = deps.substr(deps.find('=') + 1);
        std::stringstream ds(deps);
        for (std::string d; std::getline(ds, d, ',');)
            if (!d.empty()) l.deps.push_back(d);
        t[name] = l;
    }
    return t;
}

std::set<std::string> closure(const LayerTable& t, const std::string& layer) {
    std::set<std::string> seen;
    std::vector<std::string> todo{layer};
    while (!todo.empty()) {
        const std::string l = todo.back();
        todo.pop_back();
        auto it = t.find(l);
        if (it == t.end()) continue;
        for (const auto& d : it->second.deps)
            if (seen.insert(d).second) todo.push_back(d);
    }
    return seen;
}

bool links_systemc(const LayerTable& t, const std::string& layer) {
    if (t.at(layer).systemc) return true;
    for (const auto& d : closure(t, layer))
        if (t.count(d) && t.at(d).systemc) return true;
    return false;
}

// Violations in one source of `layer`: "file:line: what".
std::vector<std::string> check_source(const LayerTable& t, const std::string& layer, const std::string& file,
                                      std::istream& in) {
    static const std::regex quoted(R"re(^\s*#\s*include\s*"([a-z_0-9]+)/[^"]+")re");
    static const std::regex systemc(R"re(^\s*#\s*include\s*<(systemc|systemc\.h|tlm|tlm\.h|tlm_utils/[^>]+|sysc/[^>]+)>)re");
    const std::set<std::string> allowed = closure(t, layer);
    const bool sc = links_systemc(t, layer);
    std::vector<std::string> out;
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        std::smatch m;
        if (std::regex_search(line, m, quoted)) {
            const std::string used = m[1];
            if (used != layer && !allowed.count(used)) {
                std::string may;
                for (const auto& a : allowed) may += (may.empty() ? "" : ", ") + a;
                out.push_back(file + ":" + std::to_string(n) + ": layer " + layer + " includes " + used +
                              "/, but links only " + (may.empty() ? "nothing" : may));
            }
        } else if (std::regex_search(line, m, systemc) && !sc) {
            out.push_back(file + ":" + std::to_string(n) + ": layer " + layer + " includes <" + std::string(m[1]) +
                          ">, but links no SystemC");
        }
    }
    return out;
}

LayerTable read_built_table() {
    std::ifstream in(NPUSIM_LAYERS_FILE);
    REQUIRE(in.good());
    return parse_table(in);
}

}  // namespace

TEST_CASE("layers: every include of every source stays within the layers its library links", "[layers]") {
    const LayerTable t = read_built_table();
    REQUIRE(t.size() >= 15);
    std::vector<std::string> violations;
    int sources = 0;
    for (const auto& dir : fs::directory_iterator(fs::path(NPUSIM_SOURCE_DIR) / "sim")) {
        if (!dir.is_directory()) continue;
        const std::string layer = dir.path().filename().string();
        if (!t.count(layer)) {
            violations.push_back("sim/" + layer + "/: a folder that is no layer of the build (add sim/" + layer +
                                 "/CMakeLists.txt with npusim_layer and list it in NPUSIM_LAYER_ORDER)");
            continue;
        }
        for (const auto& f : fs::recursive_directory_iterator(dir.path())) {
            const std::string ext = f.path().extension().string();
            if (ext != ".cpp" && ext != ".hpp" && ext != ".in") continue;
            std::ifstream in(f.path());
            ++sources;
            const auto v = check_source(t, layer, fs::relative(f.path(), NPUSIM_SOURCE_DIR).string(), in);
            violations.insert(violations.end(), v.begin(), v.end());
        }
    }
    INFO("sources checked: " << sources);
    CHECK(sources > 150);
    for (const auto& v : violations) UNSCOPED_INFO(v);
    CHECK(violations.empty());
}

TEST_CASE("layers: the compiler links no SystemC and the hardware layers know nothing of the compiler", "[layers]") {
    const LayerTable t = read_built_table();
    for (const char* plain : {"common", "stats", "trace", "chip", "config", "tasks", "collective", "compiler", "report", "study"}) {
        INFO(plain);
        REQUIRE(t.count(plain));
        CHECK_FALSE(links_systemc(t, plain));
    }
    for (const char* sc : {"engine", "hw", "system", "moe"}) {
        INFO(sc);
        REQUIRE(t.count(sc));
        CHECK(links_systemc(t, sc));
        CHECK_FALSE(closure(t, sc).count("compiler"));
        CHECK_FALSE(closure(t, "compiler").count(sc));
    }
    // The die is one die with a port to the fabric: the supernode (mesh,
    // global memory, the System of dies) is a layer above it.
    CHECK_FALSE(closure(t, "hw").count("system"));
    CHECK(closure(t, "system").count("hw"));
    // The chip layer is the bottom of everything that times work.
    for (const char* user : {"hw", "compiler", "config", "tasks", "host", "moe"}) CHECK(closure(t, user).count("chip"));
    CHECK(closure(t, "chip") == std::set<std::string>{"common"});
}

TEST_CASE("layers: the check catches an include across layers and SystemC in a plain layer", "[layers]") {
    std::istringstream table("common systemc=no deps=\nchip systemc=no deps=common\nengine systemc=yes deps=common\n"
                             "hw systemc=yes deps=engine,chip,common\ncompiler systemc=no deps=chip,common\n");
    const LayerTable t = parse_table(table);
    std::istringstream good("#include \"chip/chip_params.hpp\"\n#include \"common/errors.hpp\"\n#include <vector>\n");
    CHECK(check_source(t, "compiler", "sim/compiler/x.cpp", good).empty());
    std::istringstream bad("// plan\n#include \"chip/chip_params.hpp\"\n#include \"hw/die.hpp\"\n  #include <systemc>\n");
    const auto v = check_source(t, "compiler", "sim/compiler/x.cpp", bad);
    REQUIRE(v.size() == 2);
    CHECK(v[0] == "sim/compiler/x.cpp:3: layer compiler includes hw/, but links only chip, common");
    CHECK(v[1] == "sim/compiler/x.cpp:4: layer compiler includes <systemc>, but links no SystemC");
    std::istringstream sc("#include <systemc>\n#include \"engine/wake_scheduler.hpp\"\n");
    CHECK(check_source(t, "hw", "sim/hw/y.cpp", sc).empty());
    // Transitive: hw links engine, engine links common.
    std::istringstream deep("#include \"common/split.hpp\"\n");
    CHECK(check_source(t, "hw", "sim/hw/y.cpp", deep).empty());
}
