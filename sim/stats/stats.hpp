// The one statistics registry of a run (docs/design.md §3, §4.4). Each
// hardware module puts its own numbers here under its own dotted key prefix
// (`report(Stats&, const RunSpan&)`, run_span.hpp); the owner of a run (die,
// kernel runtime, host runtime) `collect`s by asking its modules to report
// and adding the figures no single module owns. It goes out as nested JSON
// in key order, so equal runs give byte-identical files whatever order the
// modules report in. No JSON library here: it is included by every module.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <variant>

namespace npusim {

class Stats {
public:
    using Value = std::variant<std::int64_t, double, std::string>;

    // Every key is checked against the statistics schema (stats_schema.hpp):
    // a key without a row there throws std::logic_error naming it.
    void set(const std::string& key, std::int64_t v) { values_[checked(key)] = v; }
    void set(const std::string& key, std::uint64_t v) { values_[checked(key)] = static_cast<std::int64_t>(v); }
    void set(const std::string& key, int v) { values_[checked(key)] = static_cast<std::int64_t>(v); }
    void set(const std::string& key, double v) { values_[checked(key)] = v; }
    void set(const std::string& key, const std::string& v) { values_[checked(key)] = v; }
    void set(const std::string& key, const char* v) { values_[checked(key)] = std::string(v); }
    // A ready-made JSON value (e.g. the resolved config) under `key`.
    void set_json(const std::string& key, const std::string& json_text) { raw_[checked(key)] = json_text; }

    bool has(const std::string& key) const { return values_.count(key) != 0; }
    // The JSON text set under `key` by set_json, or null.
    const std::string* json(const std::string& key) const {
        auto it = raw_.find(key);
        return it == raw_.end() ? nullptr : &it->second;
    }
    // The number under `key`; throws std::logic_error naming the key when it
    // is absent or text: a reader that expects it never reads a silent 0.
    double number(const std::string& key) const;
    // The same for a key a run may not have (`units.cube.*` without Cube cores).
    double number_or(const std::string& key, double fallback) const;
    // Every plain value and every JSON value, in key order (to merge runs).
    const std::map<std::string, Value>& values() const { return values_; }
    const std::map<std::string, std::string>& json_values() const { return raw_; }

    std::string to_json(int indent = 2) const;

private:
    static const std::string& checked(const std::string& key);

    std::map<std::string, Value> values_;
    std::map<std::string, std::string> raw_;
};

}  // namespace npusim
