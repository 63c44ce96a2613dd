// The one table of statistics keys (docs/statistics.md): every key a run's
// stats file can hold, as a pattern with its kind, unit, how a run on several
// ranks merges it, and its meaning. Stats::set checks each key against it (an
// unknown key is a programming error), System::collect merges ranks by its
// rule, and `npusim stats-reference` and the key tables of
// docs/statistics.md are rendered from it, so none of them can disagree.
#pragma once
#include <string>
#include <vector>

namespace npusim {

enum class StatKind {
    count,     // an integer number of things (tasks, lines, writes)
    cycles,    // core-clock cycles, an integer
    ps,        // picoseconds, an integer
    ns,        // nanoseconds, floating point
    bytes,     // an integer
    fraction,  // a share between 0 and 1 (utilization, hit rate)
    ratio,     // a quotient that may exceed 1
    rate,      // a quantity per second or GHz
    number,    // a number in another key's unit (a chip key's value)
    index,     // an ordinal or id (a rank, a phase's position), an integer
    flag,      // 0 or 1
    text,
    list,      // a JSON array
    object,    // a JSON object
};

// How System::collect turns the ranks' values of a key into one.
enum class RankMerge {
    sum,        // summed over the ranks (integers)
    max,        // the largest rank's (integers)
    mean,       // averaged over the ranks that report it
    last_rank,  // the rank that ends last (a JSON value)
    whole,      // not merged: computed once for the whole run
};

// Where the value comes from.
enum class StatSource {
    key,        // Stats::set / set_json under the key itself
    field,      // a field inside a set_json value (ops[].name)
    after_run,  // added to the file after the run (--what-would-help)
};

struct StatSpec {
    // Dotted path; `<name>` stands for one name (`cores.<core>.tasks`),
    // `{a,b}` for one of those, `[]` for each element of a list.
    std::string pattern;
    StatKind kind = StatKind::count;
    std::string unit;     // as the docs show it: "cycles", "B", "tasks" ("" = none)
    RankMerge merge = RankMerge::sum;
    std::string meaning;  // Markdown, one line
    std::string example;  // from the docs' example run ("" = none)
    std::string section;  // the docs table it belongs to (stats_sections())
    StatSource source = StatSource::key;
};

struct StatSection {
    std::string id;     // "units.core"
    std::string title;  // "Per unit type: cores"
};

const std::vector<StatSpec>& stat_keys();
const std::vector<StatSection>& stat_sections();

// The row whose pattern `key` matches, or nullptr. Rows of fields inside
// JSON values match their paths too (`ops[].name`).
const StatSpec* find_stat(const std::string& key);

// The row of a key a writer sets (Stats::set / set_json): throws
// std::logic_error naming the key when no row matches. Memoised per thread:
// runs on many ranks set the same keys again and again.
const StatSpec& stat_spec(const std::string& key);

const char* to_string(StatKind k);
const char* to_string(RankMerge m);

// Does `pattern` have rows under `prefix` (`units.cube` matches
// `units.{cube,vector}.count`; `cores.cube0` matches `cores.<core>.tasks`)?
bool stat_pattern_under(const std::string& pattern, const std::string& prefix);

// The Markdown table of one section's rows (docs/statistics.md).
std::string stat_section_table(const std::string& section);
// The whole reference, one heading and table per section, rows under `prefix` only ("" = all).
std::string stats_reference_markdown(const std::string& prefix = "");
// The same rows as a JSON array of {key, kind, unit, ranks, source, meaning, example, section}.
std::string stats_reference_json(const std::string& prefix = "");
// `doc` with the text between each `<!-- stats-reference:begin SECTION -->`
// and `<!-- stats-reference:end -->` replaced by that section's table.
std::string render_statistics_doc(const std::string& doc);

}  // namespace npusim
