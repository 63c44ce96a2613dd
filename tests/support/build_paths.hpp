// Where the tests find the source tree, the two binaries and the generated
// layer table. The paths are compiled into tests/build_paths.cpp alone, so
// every other test source compiles to the same object from any clone and
// ccache shares it between CI's fresh clones (CCACHE_BASEDIR).
#pragma once

namespace npusim::test {
const char* source_dir();
const char* npusim_bin();
const char* tests_bin();
const char* layers_file();
}  // namespace npusim::test

#define NPUSIM_SOURCE_DIR (::npusim::test::source_dir())
#define NPUSIM_BIN (::npusim::test::npusim_bin())
#define NPUSIM_TESTS_BIN (::npusim::test::tests_bin())
#define NPUSIM_LAYERS_FILE (::npusim::test::layers_file())
