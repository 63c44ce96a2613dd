// What libonnx's Conv shape inference assumes, checked before it runs.
#pragma once
#include "onnx/model_file.hpp"

namespace npusim::onnx_import {

// libonnx takes a convolution's window from its weight's dims when
// kernel_shape is absent and indexes the input's spatial dims with it
// unchecked: a weight of higher rank than the input is a SIGSEGV. So, once
// the graph inputs' dims are bound: each Conv, ConvTranspose, ConvInteger
// and QLinearConv whose weight is an initializer or a graph input must have
// a weight of rank >= 3 with windows >= 1, an input of the same rank when
// that is known, and window attributes of its spatial rank; kernel_shape is
// filled in from the weight (as ONNX infers it), so libonnx checks it
// against inputs known only by inference. A computed weight needs its
// kernel_shape given. Throws InputError naming the file, node and attribute.
void check_conv_windows(LoadedModel& m);

}  // namespace npusim::onnx_import
