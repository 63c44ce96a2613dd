// The version of this build: the project version and, when the sources were
// a git checkout at configure time, its `git describe` (e.g.
// "0.16.0 (73fbe7d)"). `npusim --version` prints it; statistics, sweep rows
// and `check --json` carry it, so a result names the simulator that made it.
#pragma once

namespace npusim {

const char* version();

}  // namespace npusim
