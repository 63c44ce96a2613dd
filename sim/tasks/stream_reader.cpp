#include "tasks/stream_reader.hpp"

#include <cmath>
#include <fstream>
#include <istream>
#include <algorithm>
#include <filesystem>
#include <limits>
#include <string_view>
#include <memory>
#include <ostream>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/did_you_mean.hpp"
#include "common/errors.hpp"
#include "common/input_limits.hpp"
#include "common/memory_budget.hpp"
#include "common/json_file.hpp"

namespace npusim {
namespace {

using json = nlohmann::json;

// Guards against absurd sizes before anything is allocated from them.
constexpr std::uint64_t kMaxBytes = 1ULL << 44;   // 16 TiB per task
constexpr std::uint64_t kMaxDim = 1ULL << 24;     // matmul m/n/k
constexpr std::uint64_t kMaxCycles = 1ULL << 40;
constexpr std::size_t kMaxTasks = 50'000'000;
constexpr std::uint32_t kMaxEventCount = 1u << 30;
constexpr std::size_t kMaxLineBytes = std::size_t(16) << 20;  // one task line
constexpr std::uint64_t kMaxRank = 1u << 20;

const std::vector<std::string> kTaskKeys = {"id", "core_type", "kernel", "stream", "wait", "signal",
                                            "params", "priority", "core", "op", "tile", "rank",
                                            "wait_memory"};
const std::vector<std::string> kEventKeys = {"event", "count"};
const std::vector<std::string> kProgramKeys = {"program", "name", "blocks", "args"};
const std::vector<std::string> kRowTableKeys = {"rows_table", "rows"};
const std::vector<std::string> kValidRowsKeys = {"table", "first", "rows", "group_rows"};
const std::vector<std::string> kCommonParams = {"src", "dst", "addr", "out_addr", "ub_bytes",
                                                "l1_bytes", "reads", "writes"};

class LineReader {
public:
    LineReader(const std::string& file, std::size_t line) : file_(file), line_(line) {}

    [[noreturn]] void fail(const std::string& what) const {
        throw InputError(fmt::format("{}:{}: {}{}", file_, line_, where_, what));
    }
    void set_task(const std::string& id) { where_ = fmt::format("task '{}': ", id); }

    std::string text(const json& j, const char* key) const {
        if (j.is_string()) return j.get<std::string>();
        if (j.is_number_unsigned()) return std::to_string(j.get<std::uint64_t>());
        if (j.is_number_integer()) return std::to_string(j.get<std::int64_t>());
        fail(fmt::format("{}: expected a string or integer id, got {}", key, describe(j)));
    }

    std::uint64_t uint(const json& j, const std::string& key, std::uint64_t lo, std::uint64_t hi) const {
        if (j.is_number_unsigned() || (j.is_number_integer() && j.get<std::int64_t>() >= 0)) {
            const auto v = j.get<std::uint64_t>();
            if (v >= lo && v <= hi) return v;
        } else if (j.is_number_float()) {
            const double d = j.get<double>();
            // Range first: casting a double outside int64 is undefined.
            if (d >= 0 && d < 18446744073709551616.0 && std::floor(d) == d) {
                const auto v = static_cast<std::uint64_t>(d);
                if (v >= lo && v <= hi) return v;
            }
        }
        fail(fmt::format("{}: expected an integer in [{}, {}], got {}", key, lo, hi, describe(j)));
    }

    double positive(const json& j, const std::string& key) const {
        if (j.is_number()) {
            const double d = j.get<double>();
            if (d > 0 && d <= 1e9) return d;
        }
        fail(fmt::format("{}: expected a number > 0, got {}", key, describe(j)));
    }

    template <class E>
    E choice(const json& j, const std::string& key, const std::vector<std::pair<std::string, E>>& options) const {
        std::vector<std::string> names;
        for (const auto& [n, e] : options) {
            if (j.is_string() && j.get<std::string>() == n) return e;
            names.push_back(n);
        }
        std::string list;
        for (const auto& n : names) list += (list.empty() ? "" : " | ") + n;
        std::string hint = j.is_string() ? did_you_mean(j.get<std::string>(), names) : "";
        fail(fmt::format("{}: expected one of {}, got {}{}", key, list, describe(j), hint));
    }

    void check_keys(const json& obj, const std::vector<std::string>& allowed, const std::string& prefix) const {
        for (auto it = obj.begin(); it != obj.end(); ++it) {
            bool ok = false;
            for (const auto& a : allowed) ok = ok || a == it.key();
            if (!ok) fail(fmt::format("{}{}: unknown key{}", prefix, it.key(), did_you_mean(it.key(), allowed)));
        }
    }

    static std::string describe(const json& j) {
        std::string s = j.dump();
        if (s.size() > 40) s = s.substr(0, 37) + "...";
        return fmt::format("{} {}", j.type_name(), s);
    }

private:
    const std::string& file_;
    std::size_t line_;
    std::string where_;
};

const std::vector<std::pair<std::string, Space>> kSpaces = {
    {"hbm", Space::hbm}, {"l2", Space::l2}, {"ub", Space::ub}, {"l1", Space::l1}};

}  // namespace

// Named, not anonymous: TaskStreamParser::Impl holds a Reader, and a class
// holding an anonymous-namespace type warns (-Wsubobject-linkage) when the
// source compiles inside a unity batch (CMakeLists.txt).
namespace stream_reader_detail {

struct Reader {
    TaskStream ts;
    std::unordered_map<std::string, EventIndex> event_index;
    std::unordered_map<std::string, std::uint32_t> stream_index;
    std::unordered_map<std::string, std::size_t> task_lines;
    std::unordered_map<std::string, std::uint32_t> program_index;
    std::unordered_map<std::string, std::uint32_t> table_index;

    EventIndex event(const std::string& id) {
        auto [it, inserted] = event_index.emplace(id, static_cast<EventIndex>(ts.events.size()));
        if (inserted) ts.events.push_back(EventDecl{id, 1, 0});
        return it->second;
    }

    std::vector<EventIndex> event_list(const LineReader& r, const json& j, const char* key) {
        if (!j.is_array()) r.fail(fmt::format("{}: expected an array of event ids, got {}", key, LineReader::describe(j)));
        std::vector<EventIndex> out;
        out.reserve(j.size());
        for (std::size_t i = 0; i < j.size(); ++i)
            out.push_back(event(r.text(j[i], fmt::format("{}[{}]", key, i).c_str())));
        return out;
    }

    std::vector<Region> regions(const LineReader& r, const json& j, const std::string& key) {
        if (!j.is_array()) r.fail(fmt::format("{}: expected an array of {{space, addr, bytes}}, got {}", key, LineReader::describe(j)));
        std::vector<Region> out;
        for (std::size_t i = 0; i < j.size(); ++i) {
            const std::string k = fmt::format("{}[{}]", key, i);
            const json& e = j[i];
            if (!e.is_object()) r.fail(fmt::format("{}: expected an object {{space, addr, bytes}}", k));
            r.check_keys(e, {"space", "addr", "bytes", "rows", "stride"}, k + ".");
            for (const char* req : {"space", "addr", "bytes"})
                if (!e.contains(req)) r.fail(fmt::format("{}.{}: missing", k, req));
            Region reg;
            reg.space = r.choice(e["space"], k + ".space", kSpaces);
            reg.addr = r.uint(e["addr"], k + ".addr", 0, std::numeric_limits<std::int64_t>::max());
            reg.bytes = r.uint(e["bytes"], k + ".bytes", 0, kMaxBytes);
            // A strided region: `rows` rows of `bytes`, `stride` apart.
            if (e.contains("rows")) reg.rows = static_cast<std::uint32_t>(r.uint(e["rows"], k + ".rows", 1, 1u << 30));
            if (e.contains("stride") != (reg.rows > 1 || e.contains("rows")))
                r.fail(fmt::format("{}: \"rows\" and \"stride\" go together (rows of bytes, stride apart)", k));
            if (e.contains("stride")) {
                reg.stride = r.uint(e["stride"], k + ".stride", 0, kMaxBytes);
                if (reg.rows > 1 && reg.stride < reg.bytes)
                    r.fail(fmt::format("{}.stride: {} is less than the {} bytes of a row (rows must not overlap)", k,
                                       reg.stride, reg.bytes));
            }
            if (reg.end() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) || reg.total() > kMaxBytes)
                r.fail(fmt::format("{}: {} rows of {} B, {} apart, reach past the address space", k, reg.rows, reg.bytes,
                                   reg.stride));
            out.push_back(reg);
        }
        return out;
    }

    // [m, n, k] of a Cube plan: positive extents, up to a padded dimension
    // (whether they fit the chip is the core's check).
    static void triple(const LineReader& r, const json& j, const std::string& key, std::uint32_t& m, std::uint32_t& n,
                       std::uint32_t& k) {
        if (!j.is_array() || j.size() != 3)
            r.fail(fmt::format("{}: expected [m, n, k] (three integers), got {}", key, LineReader::describe(j)));
        m = static_cast<std::uint32_t>(r.uint(j[0], key + "[0]", 1, 2 * kMaxDim));
        n = static_cast<std::uint32_t>(r.uint(j[1], key + "[1]", 1, 2 * kMaxDim));
        k = static_cast<std::uint32_t>(r.uint(j[2], key + "[2]", 1, 2 * kMaxDim));
    }

    void read_params(const LineReader& r, const json& p, Task& t) {
        if (!p.is_object()) r.fail(fmt::format("params: expected an object, got {}", LineReader::describe(p)));
        std::vector<std::string> allowed = kCommonParams;
        std::vector<std::string> required;
        switch (t.kernel) {
            case Kernel::matmul:
                for (const char* k : {"m", "n", "k", "dtype", "a_bytes", "l0_tile", "l1_block", "l1_keep", "valid_rows"})
                    allowed.push_back(k);
                required = {"m", "n", "k"};
                break;
            case Kernel::vector:
                for (const char* k : {"bytes", "out_bytes", "cycles_per_repeat", "dtype", "row_bytes", "ub_chunk", "valid_rows"})
                    allowed.push_back(k);
                required = {"bytes"};
                break;
            case Kernel::copy:
                for (const char* k : {"bytes", "dst_rank", "dst_addr", "flag", "ub_chunk"}) allowed.push_back(k);
                required = {"bytes"};
                break;
            case Kernel::scalar:
                allowed.push_back("cycles");
                required = {"cycles"};
                break;
            case Kernel::program:
                allowed = {"program", "block", "reads", "writes"};
                required = {"program", "block"};
                break;
        }
        r.check_keys(p, allowed, "params.");
        for (const auto& k : required)
            if (!p.contains(k)) r.fail(fmt::format("params.{}: missing (kernel '{}' needs it)", k, to_string(t.kernel)));
        KernelParams& kp = t.params;
        for (auto it = p.begin(); it != p.end(); ++it) {
            const std::string key = "params." + it.key();
            const json& v = it.value();
            const std::string& k = it.key();
            if (k == "m") kp.m = r.uint(v, key, 1, kMaxDim);
            else if (k == "n") kp.n = r.uint(v, key, 1, kMaxDim);
            else if (k == "k") kp.k = r.uint(v, key, 1, kMaxDim);
            else if (k == "dtype" && t.kernel == Kernel::vector)
                kp.dtype = r.choice(v, key, std::vector<std::pair<std::string, DType>>{
                                                {"fp16", DType::fp16}, {"bf16", DType::bf16}, {"int8", DType::int8}, {"fp32", DType::fp32}});
            else if (k == "dtype")
                kp.dtype = r.choice(v, key, std::vector<std::pair<std::string, DType>>{
                                                {"fp16", DType::fp16}, {"bf16", DType::bf16}, {"int8", DType::int8}});
            else if (k == "row_bytes") kp.row_bytes = r.uint(v, key, 1, kMaxBytes);
            else if (k == "ub_chunk") kp.ub_chunk = static_cast<std::uint32_t>(r.uint(v, key, 1, 0xffffffffu));
            else if (k == "a_bytes") kp.a_bytes = r.uint(v, key, 1, kMaxBytes);
            else if (k == "l0_tile") triple(r, v, key, kp.blocking.m0, kp.blocking.n0, kp.blocking.k0);
            else if (k == "l1_block") triple(r, v, key, kp.blocking.m1, kp.blocking.n1, kp.blocking.k1);
            else if (k == "l1_keep") {
                const int keep = r.choice(v, key, std::vector<std::pair<std::string, int>>{{"a", 1}, {"b", 2}, {"ab", 3}});
                kp.blocking.keep_a = keep & 1;
                kp.blocking.keep_b = keep & 2;
            }
            else if (k == "bytes") kp.bytes = r.uint(v, key, 1, kMaxBytes);
            else if (k == "out_bytes") kp.out_bytes = r.uint(v, key, 0, kMaxBytes);
            else if (k == "cycles_per_repeat") kp.cycles_per_repeat = r.positive(v, key);
            else if (k == "cycles") kp.cycles = r.uint(v, key, 0, kMaxCycles);
            else if (k == "src") kp.src = r.choice(v, key, kSpaces);
            else if (k == "dst") kp.dst = r.choice(v, key, kSpaces);
            else if (k == "addr") { kp.addr = r.uint(v, key, 0, std::numeric_limits<std::int64_t>::max()); kp.has_addr = true; }
            else if (k == "out_addr") { kp.out_addr = r.uint(v, key, 0, std::numeric_limits<std::int64_t>::max()); kp.has_out_addr = true; }
            else if (k == "ub_bytes") kp.ub_bytes = r.uint(v, key, 0, kMaxBytes);
            else if (k == "l1_bytes") kp.l1_bytes = r.uint(v, key, 0, kMaxBytes);
            else if (k == "dst_rank") {
                t.remote.dst_rank = static_cast<std::int32_t>(r.uint(v, key, 0, kMaxRank));
                ts.cross_rank = true;
            } else if (k == "dst_addr") t.remote.addr = r.uint(v, key, 0, std::numeric_limits<std::int64_t>::max());
            else if (k == "flag") {
                t.remote.flag = r.uint(v, key, 0, std::numeric_limits<std::uint64_t>::max());
                t.remote.has_flag = true;
            } else if (k == "program") kp.program = program(r, v, key);
            else if (k == "block") kp.block = static_cast<std::uint32_t>(r.uint(v, key, 0, 1u << 20));
            else if (k == "valid_rows") valid_rows(r, v, key, kp);
            else if (k == "reads") t.reads = regions(r, v, key);
            else if (k == "writes") t.writes = regions(r, v, key);
        }
        if (t.kernel == Kernel::program && kp.block >= ts.programs[kp.program].blocks)
            r.fail(fmt::format("params.block: {} is out of range: program '{}' has {} block(s) (0..{})", kp.block,
                               ts.programs[kp.program].id, ts.programs[kp.program].blocks, ts.programs[kp.program].blocks - 1));
        // A Cube plan is a base tile and an L1 block together.
        if (t.kernel == Kernel::matmul && (p.contains("l0_tile") || p.contains("l1_block") || p.contains("l1_keep")))
            for (const char* part : {"l0_tile", "l1_block"})
                if (!p.contains(part)) r.fail(fmt::format("params.{}: missing (a Cube plan has l0_tile and l1_block)", part));
        if (t.kernel == Kernel::vector && !p.contains("out_bytes")) kp.out_bytes = kp.bytes;
        // A row is whole elements (its lanes are counted in elements).
        if (kp.row_bytes % static_cast<std::uint64_t>(dtype_bytes(kp.dtype)) != 0)
            r.fail(fmt::format("params.row_bytes: {} is not a whole number of {} elements ({} B each)", kp.row_bytes,
                               to_string(kp.dtype), dtype_bytes(kp.dtype)));
        if (t.kernel == Kernel::copy) kp.out_bytes = kp.bytes;
        if (t.kernel == Kernel::copy && (p.contains("dst_addr") || p.contains("flag")) && !p.contains("dst_rank"))
            r.fail(fmt::format("params.{}: only a copy with a dst_rank writes another rank's GM (add \"dst_rank\")",
                               p.contains("flag") ? "flag" : "dst_addr"));
        // A remote write lands where dst_addr says, else at out_addr.
        if (t.remote.dst_rank >= 0 && !p.contains("dst_addr")) t.remote.addr = kp.has_out_addr ? kp.out_addr : 0;
    }

    std::vector<MemoryWait> memory_waits(const LineReader& r, const json& j) {
        const bool list = j.is_array();
        if (!list && !j.is_object())
            r.fail(fmt::format("wait_memory: expected {{\"addr\", \"value\", \"blocks\"}} or a list of them, got {}",
                               LineReader::describe(j)));
        std::vector<MemoryWait> out;
        const std::size_t n = list ? j.size() : 1;
        for (std::size_t i = 0; i < n; ++i) {
            const json& e = list ? j[i] : j;
            const std::string k = list ? fmt::format("wait_memory[{}]", i) : std::string("wait_memory");
            if (!e.is_object()) r.fail(fmt::format("{}: expected an object {{addr, value, blocks}}", k));
            r.check_keys(e, {"addr", "value", "blocks"}, k + ".");
            for (const char* req : {"addr", "value"})
                if (!e.contains(req)) r.fail(fmt::format("{}.{}: missing", k, req));
            MemoryWait w;
            w.addr = r.uint(e["addr"], k + ".addr", 0, std::numeric_limits<std::int64_t>::max());
            w.value = r.uint(e["value"], k + ".value", 0, std::numeric_limits<std::uint64_t>::max());
            if (e.contains("blocks")) w.blocks = static_cast<std::uint32_t>(r.uint(e["blocks"], k + ".blocks", 1, 1u << 24));
            out.push_back(w);
        }
        return out;
    }

    void valid_rows(const LineReader& r, const json& j, const std::string& key, KernelParams& kp) {
        if (!j.is_object()) r.fail(fmt::format("{}: expected {{\"table\", \"first\", \"rows\", \"group_rows\"}}, got {}", key,
                                               LineReader::describe(j)));
        r.check_keys(j, kValidRowsKeys, key + ".");
        for (const char* req : {"table", "first", "rows", "group_rows"})
            if (!j.contains(req)) r.fail(fmt::format("{}.{}: missing", key, req));
        const std::string id = r.text(j["table"], (key + ".table").c_str());
        const auto it = table_index.find(id);
        if (it == table_index.end()) {
            std::vector<std::string> ids;
            for (const auto& d : ts.row_tables) ids.push_back(d.id);
            r.fail(fmt::format("{}.table: no row table '{}' declared before this line (a line {{\"rows_table\": ID, "
                               "\"rows\": [[...], ...]}} declares one){}",
                               key, id, did_you_mean(id, ids)));
        }
        kp.rows_table = it->second + 1;
        kp.rows_first = static_cast<std::uint32_t>(r.uint(j["first"], key + ".first", 0, 0xffffffffu));
        kp.rows_span = static_cast<std::uint32_t>(r.uint(j["rows"], key + ".rows", 1, 0xffffffffu));
        kp.rows_group = static_cast<std::uint32_t>(r.uint(j["group_rows"], key + ".group_rows", 1, 0xffffffffu));
    }

    void read_row_table_line(LineReader& r, const json& j, std::size_t line) {
        r.check_keys(j, kRowTableKeys, "");
        RowTable d;
        d.id = r.text(j["rows_table"], "rows_table");
        if (!j.contains("rows")) r.fail(fmt::format("rows_table '{}': missing 'rows' (one list per rank, or one for all)", d.id));
        const json& rows = j["rows"];
        if (!rows.is_array() || rows.empty())
            r.fail(fmt::format("rows: expected a non-empty list of lists of row counts, got {}", LineReader::describe(rows)));
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const std::string key = fmt::format("rows[{}]", i);
            if (!rows[i].is_array()) r.fail(fmt::format("{}: expected a list of row counts, got {}", key, LineReader::describe(rows[i])));
            std::vector<std::uint32_t> v;
            for (std::size_t g = 0; g < rows[i].size(); ++g)
                v.push_back(static_cast<std::uint32_t>(r.uint(rows[i][g], fmt::format("{}[{}]", key, g), 0, 0xffffffffu)));
            d.per_rank.push_back(std::move(v));
        }
        d.line = static_cast<std::uint32_t>(line);
        auto [it, fresh] = table_index.emplace(d.id, static_cast<std::uint32_t>(ts.row_tables.size()));
        if (!fresh) r.fail(fmt::format("rows_table '{}' declared twice (first on line {})", d.id, ts.row_tables[it->second].line));
        ts.row_tables.push_back(std::move(d));
    }

    std::uint32_t program(const LineReader& r, const json& j, const std::string& key) {
        const std::string id = r.text(j, key.c_str());
        const auto it = program_index.find(id);
        if (it != program_index.end()) return it->second;
        std::vector<std::string> ids;
        for (const auto& d : ts.programs) ids.push_back(d.id);
        r.fail(fmt::format("{}: no program '{}' declared before this line (a line {{\"program\": ID, \"name\", "
                           "\"blocks\", \"args\"}} declares one){}",
                           key, id, did_you_mean(id, ids)));
    }

    void read_program_line(LineReader& r, const json& j, std::size_t line) {
        r.check_keys(j, kProgramKeys, "");
        ProgramDecl d;
        d.id = r.text(j["program"], "program");
        for (const char* req : {"name", "blocks"})
            if (!j.contains(req)) r.fail(fmt::format("program '{}': missing '{}'", d.id, req));
        if (!j["name"].is_string()) r.fail(fmt::format("name: expected a string, got {}", LineReader::describe(j["name"])));
        d.name = j["name"].get<std::string>();
        d.blocks = static_cast<std::uint32_t>(r.uint(j["blocks"], "blocks", 1, 1u << 16));
        if (j.contains("args")) {
            if (!j["args"].is_object()) r.fail(fmt::format("args: expected an object, got {}", LineReader::describe(j["args"])));
            d.args = j["args"].dump();
        } else {
            d.args = "{}";
        }
        d.line = static_cast<std::uint32_t>(line);
        auto [it, fresh] = program_index.emplace(d.id, static_cast<std::uint32_t>(ts.programs.size()));
        if (!fresh) r.fail(fmt::format("program '{}' declared twice (first on line {})", d.id, ts.programs[it->second].line));
        ts.programs.push_back(std::move(d));
    }

    void read_event_line(LineReader& r, const json& j, std::size_t line) {
        r.check_keys(j, kEventKeys, "");
        const std::string id = r.text(j["event"], "event");
        const EventIndex e = event(id);
        if (ts.events[e].line != 0)
            r.fail(fmt::format("event '{}' declared twice (first on line {})", id, ts.events[e].line));
        ts.events[e].line = static_cast<std::uint32_t>(line);
        if (j.contains("count")) ts.events[e].count = static_cast<std::uint32_t>(r.uint(j["count"], "count", 1, kMaxEventCount));
    }

    void read_task_line(LineReader& r, const json& j, std::size_t line) {
        if (!j.contains("id")) {
            r.check_keys(j, kTaskKeys, "");
            r.fail("missing 'id' (every task line needs id, core_type, kernel, stream, wait, signal, params)");
        }
        Task t;
        t.id = r.text(j["id"], "id");
        r.set_task(t.id);
        r.check_keys(j, kTaskKeys, "");
        for (const char* req : {"core_type", "kernel", "stream", "wait", "signal", "params"})
            if (!j.contains(req)) r.fail(fmt::format("missing '{}'", req));
        if (ts.tasks.size() >= kMaxTasks) r.fail(fmt::format("more than {} tasks in one stream", kMaxTasks));
        auto [pos, fresh] = task_lines.emplace(t.id, line);
        if (!fresh) r.fail(fmt::format("duplicate task id (first on line {})", pos->second));
        t.line = static_cast<std::uint32_t>(line);
        t.core_type = r.choice(j["core_type"], "core_type", std::vector<std::pair<std::string, CoreType>>{
                                                                {"cube", CoreType::cube}, {"vector", CoreType::vector}, {"scalar", CoreType::scalar}});
        t.kernel = r.choice(j["kernel"], "kernel", std::vector<std::pair<std::string, Kernel>>{
                                                       {"matmul", Kernel::matmul}, {"vector", Kernel::vector}, {"copy", Kernel::copy},
                                                       {"scalar", Kernel::scalar}, {"program", Kernel::program}});
        const CoreType needed = t.kernel == Kernel::matmul   ? CoreType::cube
                                : t.kernel == Kernel::scalar ? CoreType::scalar
                                                             : CoreType::vector;
        if (needed != t.core_type)
            r.fail(fmt::format("kernel '{}' runs on a {} core, but core_type is '{}'", to_string(t.kernel),
                               to_string(needed), to_string(t.core_type)));
        const std::string stream = r.text(j["stream"], "stream");
        auto [sit, new_stream] = stream_index.emplace(stream, static_cast<std::uint32_t>(ts.streams.size()));
        if (new_stream) ts.streams.push_back(stream);
        t.stream = sit->second;
        t.wait = event_list(r, j["wait"], "wait");
        t.signal = event_list(r, j["signal"], "signal");
        if (j.contains("priority")) {
            const json& p = j["priority"];
            // Unsigned first: 2^64 - 5 read as int64 would pass as -5.
            const bool ok = p.is_number_unsigned() ? p.get<std::uint64_t>() <= 1000000
                                                   : p.is_number_integer() && p.get<std::int64_t>() >= -1000000 &&
                                                         p.get<std::int64_t>() <= 1000000;
            if (!ok)
                r.fail(fmt::format("priority: expected an integer in [-1000000, 1000000], got {}", LineReader::describe(p)));
            t.priority = static_cast<std::int32_t>(p.get<std::int64_t>());
        }
        if (j.contains("core")) t.core = static_cast<std::int32_t>(r.uint(j["core"], "core", 0, 1u << 20));
        if (j.contains("op")) t.op = ts.intern(r.text(j["op"], "op"));
        if (j.contains("tile")) t.tile = ts.intern(r.text(j["tile"], "tile"));
        if (j.contains("rank")) {
            t.rank = static_cast<std::int32_t>(r.uint(j["rank"], "rank", 0, kMaxRank));
            ts.cross_rank = true;
        }
        if (j.contains("wait_memory")) {
            t.wait_memory = memory_waits(r, j["wait_memory"]);
            ts.cross_rank = true;
        }
        read_params(r, j["params"], t);
        ts.tasks.push_back(std::move(t));
    }
};

}  // namespace stream_reader_detail
using stream_reader_detail::Reader;

struct TaskStreamParser::Impl {
    Reader rd;
    std::size_t line = 0;
    bool own_output = false;
};

TaskStreamParser::TaskStreamParser(const std::string& file, std::size_t expected_tasks, bool own_output)
    : impl_(std::make_unique<Impl>()) {
    impl_->rd.ts.file = file;
    impl_->rd.ts.tasks.reserve(expected_tasks);
    impl_->own_output = own_output;
}
TaskStreamParser::~TaskStreamParser() = default;

void TaskStreamParser::line(const std::string& text) {
    Reader& rd = impl_->rd;
    const std::size_t line = ++impl_->line;
    const std::string& file = rd.ts.file;
    if (text.find_first_not_of(" \t\r") == std::string::npos) return;
    LineReader r(file, line);
    // Our own writer's lines need no position tracking or duplicate-key
    // watch (std::map keys are unique); the checks below still apply.
    const json j = impl_->own_output ? json::parse(text) : parse_json_line(text, file, line);
    if (!j.is_object()) r.fail(fmt::format("expected a JSON object (a task or an event declaration), got {}", LineReader::describe(j)));
    if (j.contains("event")) rd.read_event_line(r, j, line);
    else if (j.contains("program") && !j.contains("id")) rd.read_program_line(r, j, line);
    else if (j.contains("rows_table") && !j.contains("id")) rd.read_row_table_line(r, j, line);
    else rd.read_task_line(r, j, line);
}

TaskStream TaskStreamParser::finish() {
    if (impl_->rd.ts.tasks.empty()) throw InputError(fmt::format("{}: the stream holds no tasks", impl_->rd.ts.file));
    return std::move(impl_->rd.ts);
}

TaskStream parse_task_stream(std::istream& in, const std::string& file) {
    TaskStreamParser parser(file);
    std::string text;
    std::size_t line = 0;
    bool too_long = false;
    while (getline_bounded(in, text, kMaxLineBytes, too_long)) {
        ++line;
        if (too_long)
            throw InputError(fmt::format("{}:{}: line longer than {} MiB (one task or event per line; is this a task stream?)",
                                         file, line, kMaxLineBytes >> 20));
        parser.line(text);
    }
    return parser.finish();
}

TaskStream read_task_stream(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw InputError(fmt::format("{}: cannot open task stream", file));
    // One task (or event) per line: count the lines before holding any.
    std::error_code ec;
    if (std::filesystem::is_regular_file(file, ec)) {
        std::uint64_t lines = 0;
        char buf[1 << 16];
        while (in.read(buf, sizeof buf) || in.gcount() > 0) {
            for (std::streamsize i = 0; i < in.gcount(); ++i) lines += buf[i] == '\n';
            if (in.eof()) break;
        }
        check_memory_budget(fmt::format("{}: {} lines of tasks", file, lines), lines * kStreamBytesPerTask,
                            "no --set shrinks a stream file: use a shorter one (fewer tasks, e.g. compiled with a "
                            "lower --set workload.batch=N)");
        in.clear();
        in.seekg(0);
    }
    return parse_task_stream(in, file);
}

std::string event_declaration_lines(const TaskStream& ts) {
    std::string out;
    for (const auto& d : ts.programs)
        out += json{{"program", d.id}, {"name", d.name}, {"blocks", d.blocks}, {"args", json::parse(d.args)}}.dump() + '\n';
    for (const auto& d : ts.row_tables) out += json{{"rows_table", d.id}, {"rows", d.per_rank}}.dump() + '\n';
    for (const auto& e : ts.events)
        if (e.count != 1) out += json{{"event", e.id}, {"count", e.count}}.dump() + '\n';
    return out;
}

namespace {

// What nlohmann's dump() writes for a string, without building a json value
// for the common case (printable ASCII with nothing to escape).
void put_string(std::string& out, const std::string& text) {
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u >= 0x7f || c == '"' || c == '\\') {
            out += json(text).dump();  // escapes and UTF-8 checks as nlohmann does
            return;
        }
    }
    out += '"';
    out += text;
    out += '"';
}

// One JSON object as nlohmann's dump() of a std::map-backed json writes it:
// keys in std::string order, no spaces. Values are already JSON text.
class ObjectText {
public:
    void add(const char* key, std::string value) { fields_.emplace_back(key, std::move(value)); }
    void add(const char* key, std::uint64_t v) { add(key, fmt::format("{}", v)); }
    void add_int(const char* key, std::int64_t v) { add(key, fmt::format("{}", v)); }
    void add_text(const char* key, const std::string& text) {
        std::string v;
        put_string(v, text);
        add(key, std::move(v));
    }
    void write(std::string& out) {
        std::sort(fields_.begin(), fields_.end(),
                  [](const auto& x, const auto& y) { return std::string_view(x.first) < std::string_view(y.first); });
        out += '{';
        for (std::size_t i = 0; i < fields_.size(); ++i) {
            if (i) out += ',';
            out += '"';
            out += fields_[i].first;
            out += "\":";
            out += fields_[i].second;
        }
        out += '}';
    }

private:
    std::vector<std::pair<const char*, std::string>> fields_;
};

std::string region_list(const std::vector<Region>& rs) {
    std::string out = "[";
    for (std::size_t i = 0; i < rs.size(); ++i) {
        if (i) out += ',';
        if (rs[i].rows > 1)
            out += fmt::format(R"({{"addr":{},"bytes":{},"rows":{},"space":"{}","stride":{}}})", rs[i].addr, rs[i].bytes,
                               rs[i].rows, to_string(rs[i].space), rs[i].stride);
        else
            out += fmt::format(R"({{"addr":{},"bytes":{},"space":"{}"}})", rs[i].addr, rs[i].bytes, to_string(rs[i].space));
    }
    return out + "]";
}

std::string event_ids(const TaskStream& ts, const std::vector<EventIndex>& es) {
    std::string out = "[";
    for (std::size_t i = 0; i < es.size(); ++i) {
        if (i) out += ',';
        put_string(out, ts.events[es[i]].id);
    }
    return out + "]";
}

}  // namespace

// Written directly rather than through a json value (the compiler writes
// every task twice, a million of them at most): byte for byte what
// json::dump() gives, which tests check by parsing and dumping lines again.
std::string task_line(const TaskStream& ts, const Task& t) {
    const KernelParams& p = t.params;
    ObjectText pj;
    switch (t.kernel) {
        case Kernel::matmul:
            pj.add("m", p.m);
            pj.add("n", p.n);
            pj.add("k", p.k);
            pj.add_text("dtype", to_string(p.dtype));
            if (p.a_bytes) pj.add("a_bytes", p.a_bytes);
            if (p.blocking.set()) {
                const CubeBlocking& b = p.blocking;
                pj.add("l0_tile", fmt::format("[{},{},{}]", b.m0, b.n0, b.k0));
                pj.add("l1_block", fmt::format("[{},{},{}]", b.m1, b.n1, b.k1));
                if (b.keep_a || b.keep_b) pj.add_text("l1_keep", b.keep_a && b.keep_b ? "ab" : b.keep_a ? "a" : "b");
            }
            break;
        case Kernel::vector:
            pj.add("bytes", p.bytes);
            pj.add("out_bytes", p.out_bytes);
            pj.add("cycles_per_repeat", json(p.cycles_per_repeat).dump());  // nlohmann's float format
            if (p.dtype != DType::fp16) pj.add_text("dtype", to_string(p.dtype));
            if (p.row_bytes) pj.add("row_bytes", p.row_bytes);
            if (p.ub_chunk) pj.add("ub_chunk", p.ub_chunk);
            break;
        case Kernel::copy:
            pj.add("bytes", p.bytes);
            if (p.ub_chunk) pj.add("ub_chunk", p.ub_chunk);
            if (t.remote.dst_rank >= 0) {
                pj.add_int("dst_rank", t.remote.dst_rank);
                pj.add("dst_addr", t.remote.addr);
                if (t.remote.has_flag) pj.add("flag", t.remote.flag);
            }
            break;
        case Kernel::scalar: pj.add("cycles", p.cycles); break;
        case Kernel::program:
            pj.add_text("program", ts.programs[p.program].id);
            pj.add("block", p.block);
            break;
    }
    if (t.kernel != Kernel::scalar && t.kernel != Kernel::program) {
        pj.add_text("src", to_string(p.src));
        pj.add_text("dst", to_string(p.dst));
    }
    if (p.has_addr) pj.add("addr", p.addr);
    if (p.has_out_addr) pj.add("out_addr", p.out_addr);
    if (p.ub_bytes) pj.add("ub_bytes", p.ub_bytes);
    if (p.l1_bytes) pj.add("l1_bytes", p.l1_bytes);
    if (p.rows_table) {
        std::string v;
        put_string(v, ts.row_tables[p.rows_table - 1].id);
        pj.add("valid_rows", fmt::format(R"({{"first":{},"group_rows":{},"rows":{},"table":{}}})", p.rows_first, p.rows_group,
                                         p.rows_span, v));
    }
    if (!t.reads.empty()) pj.add("reads", region_list(t.reads));
    if (!t.writes.empty()) pj.add("writes", region_list(t.writes));

    ObjectText j;
    j.add_text("id", t.id);
    j.add_text("core_type", to_string(t.core_type));
    j.add_text("kernel", to_string(t.kernel));
    j.add_text("stream", ts.streams[t.stream]);
    j.add("wait", event_ids(ts, t.wait));
    j.add("signal", event_ids(ts, t.signal));
    if (t.priority != 0) j.add_int("priority", t.priority);
    if (t.core >= 0) j.add_int("core", t.core);
    if (t.op) j.add_text("op", ts.name(t.op));
    if (t.tile) j.add_text("tile", ts.name(t.tile));
    if (ts.cross_rank) j.add_int("rank", t.rank);
    if (!t.wait_memory.empty()) {
        std::string w = "[";
        for (std::size_t i = 0; i < t.wait_memory.size(); ++i)
            w += fmt::format(R"({}{{"addr":{},"blocks":{},"value":{}}})", i ? "," : "", t.wait_memory[i].addr,
                             t.wait_memory[i].blocks, t.wait_memory[i].value);
        j.add("wait_memory", w + "]");
    }
    std::string params;
    pj.write(params);
    j.add("params", std::move(params));
    std::string out;
    out.reserve(256);
    j.write(out);
    out += '\n';
    return out;
}

void write_task_stream(const TaskStream& ts, std::ostream& out) {
    out << event_declaration_lines(ts);
    for (const auto& t : ts.tasks) out << task_line(ts, t);
}

}  // namespace npusim
