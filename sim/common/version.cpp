#include "common/version.hpp"

#ifndef NPUSIM_VERSION_TEXT
#define NPUSIM_VERSION_TEXT "unknown"
#endif

namespace npusim {

const char* version() { return NPUSIM_VERSION_TEXT; }

}  // namespace npusim
