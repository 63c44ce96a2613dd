// The build's absolute paths, defined for this source only (CMakeLists.txt).
#include "support/build_paths.hpp"

namespace npusim::test {
const char* source_dir() { return NPUSIM_BUILD_SOURCE_DIR; }
const char* npusim_bin() { return NPUSIM_BUILD_NPUSIM_BIN; }
const char* tests_bin() { return NPUSIM_BUILD_TESTS_BIN; }
const char* layers_file() { return NPUSIM_BUILD_LAYERS_FILE; }
}  // namespace npusim::test
