// Tests no one here wrote: every node model of Debian's libonnx-testdata
// (/usr/share/libonnx-testdata/data/node, one ONNX file per operator case)
// either imports, compiles and runs, or is refused with exit 2 by a message
// that names an op type of the model. In four shards so ctest runs them
// side by side.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "support/e2e.hpp"

using namespace npusim::test;
namespace fs = std::filesystem;

namespace {

const std::string kTestData = "/usr/share/libonnx-testdata/data/node";
constexpr int kShards = 4;

std::vector<std::string> node_models() {
    std::vector<std::string> v;
    for (const auto& d : fs::directory_iterator(kTestData))
        if (fs::exists(d.path() / "model.onnx")) v.push_back((d.path() / "model.onnx").string());
    std::sort(v.begin(), v.end());
    return v;
}

std::set<std::string> op_types(const std::string& file) {
    ::onnx::ModelProto m;
    std::ifstream in(file, std::ios::binary);
    std::set<std::string> ops;
    if (m.ParseFromIstream(&in))
        for (const auto& n : m.graph().node()) ops.insert(n.op_type());
    return ops;
}

// Runs every model of one shard; returns how many ran.
int walk(int shard) {
    REQUIRE(fs::is_directory(kTestData));  // libonnx-testdata (.ci/run installs it)
    const auto models = node_models();
    REQUIRE(models.size() > 800);
    TempDir tmp;
    const std::string chip = std::string(NPUSIM_SOURCE_DIR) + "/configs/chips/ax300.json";
    int ran = 0, refused = 0;
    for (std::size_t i = static_cast<std::size_t>(shard); i < models.size(); i += kShards) {
        const Result r = run_npusim(tmp, {"run", "--chip", chip, "--workload", models[i], "-q"});
        CAPTURE(models[i], r.code, r.err);
        if (r.code == 0) {
            ++ran;
            continue;
        }
        REQUIRE(r.code == 2);
        // One line, naming an op type of the model.
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        bool named = false;
        for (const auto& op : op_types(models[i])) named = named || r.err.find(op) != std::string::npos;
        CHECK(named);
        ++refused;
    }
    WARN("shard " << shard << ": " << ran << " ran, " << refused << " refused");
    return ran;
}

}  // namespace

TEST_CASE("onnx testdata: node models, shard 1 of 4: each runs or is refused naming its op", "[slow][onnx][testdata]") {
    CHECK(walk(0) >= 150);  // 4 x 150: at least 600 of the 932 run
}
TEST_CASE("onnx testdata: node models, shard 2 of 4: each runs or is refused naming its op", "[slow][onnx][testdata]") {
    CHECK(walk(1) >= 150);  // 4 x 150: at least 600 of the 932 run
}
TEST_CASE("onnx testdata: node models, shard 3 of 4: each runs or is refused naming its op", "[slow][onnx][testdata]") {
    CHECK(walk(2) >= 150);  // 4 x 150: at least 600 of the 932 run
}
TEST_CASE("onnx testdata: node models, shard 4 of 4: each runs or is refused naming its op", "[slow][onnx][testdata]") {
    CHECK(walk(3) >= 150);  // 4 x 150: at least 600 of the 932 run
}
