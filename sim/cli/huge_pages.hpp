// Transparent huge pages for the simulator's memory (see huge_pages.cpp).
#pragma once

namespace npusim::cli {

// Re-executes this program once with glibc's malloc backed by transparent
// huge pages, unless already so, disabled by NPUSIM_NO_HUGEPAGES, or the
// kernel has THP off. Returns only if it did not re-execute.
void reexec_with_huge_pages(char* argv[]);

}  // namespace npusim::cli
