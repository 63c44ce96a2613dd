// The hardware's vocabulary that a chip, a task and a timing formula share:
// core types, memory spaces and data types.
#pragma once
#include <cstdint>

namespace npusim {

enum class CoreType : std::uint8_t { cube, vector, scalar };
enum class Space : std::uint8_t { hbm, l2, ub, l1 };
enum class DType : std::uint8_t { fp16, bf16, int8, fp32 };

const char* to_string(CoreType t);
const char* to_string(Space s);
const char* to_string(DType d);
int dtype_bytes(DType d);
// Global memory (through L2) as opposed to a core-local buffer.
inline bool is_global(Space s) { return s == Space::hbm || s == Space::l2; }

}  // namespace npusim
