// check_stream_fits_chip: a parsed task stream against a chip. The first 8
// bytes pick the chip (core counts, buffer sizes, layout, within the schema's
// ranges); the rest is the stream.
#include <sstream>

#include "common/errors.hpp"
#include "fuzzing.hpp"
#include "chip/chip_params.hpp"
#include "tasks/stream_checks.hpp"
#include "tasks/stream_reader.hpp"

using namespace npusim;

NPUSIM_FUZZ_TARGET(stream_checks) {
    if (size < 8) return 0;
    ChipParams chip;
    chip.name = "fuzz";
    chip.cube.count = data[0] % 9;
    chip.vector.count = data[1] % 9;
    chip.scalar.count = 1 + data[2] % 2;
    chip.buffers.ub_kb = 1 + data[3] * 4;
    chip.buffers.l1_kb = 1 + data[4] * 16;
    chip.layout = (data[5] & 1) ? CoreLayout::coupled : CoreLayout::split;
    chip.cube.shape_k = 1 + data[6] % 64;
    chip.vector.tile_kb = 1 + data[7] % 64;
    std::istringstream in(std::string(reinterpret_cast<const char*>(data + 8), size - 8));
    try {
        const TaskStream ts = parse_task_stream(in, "stream.jsonl");
        check_stream_fits_chip(ts, chip);
    } catch (const InputError& e) {
        const std::string msg = e.what();
        NPUSIM_FUZZ_CHECK(msg.rfind("stream.jsonl", 0) == 0, "message does not start with the file: " + msg);
    }
    return 0;
}
