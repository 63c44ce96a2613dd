#include "chip/units.hpp"

namespace npusim {

const char* to_string(CoreType t) {
    switch (t) {
        case CoreType::cube: return "cube";
        case CoreType::vector: return "vector";
        case CoreType::scalar: return "scalar";
    }
    return "?";
}

const char* to_string(Space s) {
    switch (s) {
        case Space::hbm: return "hbm";
        case Space::l2: return "l2";
        case Space::ub: return "ub";
        case Space::l1: return "l1";
    }
    return "?";
}

const char* to_string(DType d) {
    switch (d) {
        case DType::fp16: return "fp16";
        case DType::bf16: return "bf16";
        case DType::int8: return "int8";
        case DType::fp32: return "fp32";
    }
    return "?";
}

int dtype_bytes(DType d) {
    switch (d) {
        case DType::int8: return 1;
        case DType::fp32: return 4;
        default: return 2;
    }
}

}  // namespace npusim
