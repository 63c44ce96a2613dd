// Zeroed memory for large per-die arrays (the L2 model's tags), carved from
// chunks the kernel may back with transparent huge pages.
//
// Why: a supernode builds hundreds of dies, each with a tag array of a few
// hundred KB that its run touches all over. From malloc each array is its
// own mapping of 4 KB pages: tens of thousands of page faults and TLB
// misses on every lookup. Carved one after another from 2 MB-aligned
// chunks, they share huge pages. A page no array touches is still never
// backed (fresh chunks are mapped, not written). Freed blocks are kept by
// size and reused (zeroed again): a die built and dropped many times, as
// the compiler's die probe does, reuses its block. Nothing goes back to the
// system before exit: a process builds dies of one or a few L2 sizes.
#pragma once
#include <cstddef>

namespace npusim {

// `bytes` of zeroed memory aligned to 64 B; throws std::bad_alloc.
void* huge_page_alloc(std::size_t bytes);
// Returns a block huge_page_alloc(bytes) gave, for reuse.
void huge_page_free(void* p, std::size_t bytes) noexcept;

}  // namespace npusim
