// The one table of configuration keys (docs/design.md §4.2): every key of the run
// document with its type, unit, default, bounds and meaning. Validation,
// defaults, --set path checks, the ChipParams and WorkloadParams mappings
// and the Markdown reference (docs/configuration.md) are all driven from this
// table, so they cannot disagree.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chip/chip_params.hpp"
#include "config/workload_params.hpp"

namespace npusim {

enum class ValueType {
    integer,            // whole number (1.0 accepted and stored as 1; 1.5 rejected)
    number,             // any finite number
    boolean,
    string,
    enumeration,        // a string from KeySpec::allowed
    string_or_strings,  // a string or a list of strings ("notes")
    object,             // a free-form object whose keys the workload defines (checked where it is used)
};

struct Bound {
    double value = 0;
    bool inclusive = true;
};

struct KeySpec {
    std::string path;           // full dotted path: "chip.hbm.bandwidth_gbps"
    std::string workload_kind;  // workload keys: the kind they belong to; "" = every kind
    ValueType type = ValueType::number;
    std::string unit;           // "GB/s", "KB", "cycles", ... ("" = none)
    bool required = false;      // must be present; otherwise default_value is filled in
    nlohmann::json default_value;
    std::string default_note;   // shown in the docs instead of default_value when set
    std::optional<Bound> min, max;
    // What real chips have, with a wide margin: a value outside runs, with a
    // warning naming the key, unit and this range (a unit slip like
    // hbm.bandwidth_gbps = 1.6 meant as TB/s). Not set where no range is telling.
    std::optional<std::pair<double, double>> plausible;
    std::vector<std::string> allowed;  // enumeration values
    // A key read only when another key has one value (workload.kv_len only
    // in decode): {that key's path, the value}; given otherwise it is an
    // error, not silently ignored. Empty: always read.
    std::pair<std::string, nlohmann::json> only_with;
    std::string meaning;               // one line
    // Chip keys: copies the validated value into ChipParams. Empty for
    // workload keys and for keys the hardware does not read ("notes").
    std::function<void(ChipParams&, const nlohmann::json&)> apply;
    // Workload keys: the same into WorkloadParams (empty for "notes").
    std::function<void(WorkloadParams&, const nlohmann::json&)> apply_workload;
};

// A group of keys that gets its own section in the reference.
struct SectionSpec {
    std::string path;           // "chip", "chip.hbm", "workload"
    std::string workload_kind;  // for the workload sections: which kind
    std::string title;
    std::string meaning;
};

const std::vector<KeySpec>& config_keys();
const std::vector<SectionSpec>& config_sections();

// Workload kinds the loader accepts (the allowed values of workload.kind).
const std::vector<std::string>& workload_kinds();

// Does `key` apply to a workload of `kind`? (Chip keys always apply.)
bool key_applies(const KeySpec& key, const std::string& kind);

// The segments of a dotted key path ("chip.hbm.bandwidth_gbps"); empty
// segments are kept, for callers to reject with their own message.
std::vector<std::string> split_key_path(const std::string& path);

// The key at exactly `path` that applies to `kind`, or nullptr.
const KeySpec* find_key(const std::string& path, const std::string& kind);

// Is `path` a group (a proper prefix of some applicable key's path)?
bool is_group(const std::string& path, const std::string& kind);

// A key earlier versions had and what replaced it: "PATH is no longer a key:
// ..." for the error, or "" if `path` never was one.
std::string retired_key_message(const std::string& path);

// Names one level below group `path` (keys and sub-groups), for did-you-mean.
std::vector<std::string> child_names(const std::string& path, const std::string& kind);

// The did-you-mean of an unknown key `name` in group `path`: the closest
// sibling, a sibling it begins (`bandwidth` -> `bandwidth_gbps`), or for a
// graph workload a dimension of the graph (`workload.dims.NAME`).
std::string unknown_key_hint(const std::string& name, const std::string& path, const std::string& kind);

// "a number" / "an integer" / "true or false" / ... without unit or range.
std::string type_phrase(const KeySpec& key);

// "chip.hbm.bandwidth_gbps = 1.6 GB/s is far outside what real chips have
// (plausible: 50 to 20000 GB/s)" when `value` is outside the key's
// plausible range; "" otherwise.
std::string plausibility_warning(const KeySpec& key, double value);

// Number in the shortest form that reads back exactly (1.85, 4096, 1e+06).
std::string format_number(double v);

// docs/configuration.md, rendered from the table.
std::string configuration_reference_markdown();

}  // namespace npusim
