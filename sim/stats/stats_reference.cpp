// The statistics reference rendered from the schema: the Markdown tables of
// docs/statistics.md, `npusim stats-reference` and its --json.
#include "stats/stats_schema.hpp"

#include <nlohmann/json.hpp>

#include "common/errors.hpp"

namespace npusim {
namespace {

// Where a row comes from, in the Ranks column: its merge rule, or why it has none.
std::string ranks_cell(const StatSpec& s) {
    switch (s.source) {
        case StatSource::key: return to_string(s.merge);
        case StatSource::field: return "";
        case StatSource::after_run: return "after run";
    }
    return "";
}

std::string table(const std::vector<const StatSpec*>& rows) {
    bool examples = false;
    for (const StatSpec* s : rows) examples = examples || !s->example.empty();
    std::string out = examples ? "| Key | Kind | Unit | Ranks | Meaning | Example |\n|---|---|---|---|---|---|\n"
                               : "| Key | Kind | Unit | Ranks | Meaning |\n|---|---|---|---|---|\n";
    for (const StatSpec* s : rows) {
        out += "| `" + s->pattern + "` | " + to_string(s->kind) + " | " + s->unit + " | " + ranks_cell(*s) + " | " +
               s->meaning + " |";
        if (examples) out += " " + s->example + " |";
        out += "\n";
    }
    return out;
}

std::vector<const StatSpec*> rows_of(const std::string& section, const std::string& prefix) {
    std::vector<const StatSpec*> rows;
    for (const StatSpec& s : stat_keys())
        if (s.section == section && (prefix.empty() || stat_pattern_under(s.pattern, prefix))) rows.push_back(&s);
    return rows;
}

}  // namespace

std::string stat_section_table(const std::string& section) {
    const std::vector<const StatSpec*> rows = rows_of(section, "");
    if (rows.empty()) throw InputError("no statistics section '" + section + "'");
    return table(rows);
}

std::string stats_reference_markdown(const std::string& prefix) {
    std::string out;
    for (const StatSection& sec : stat_sections()) {
        const std::vector<const StatSpec*> rows = rows_of(sec.id, prefix);
        if (rows.empty()) continue;
        out += (out.empty() ? "" : "\n") + ("## " + sec.title + "\n\n") + table(rows);
    }
    return out;
}

std::string stats_reference_json(const std::string& prefix) {
    nlohmann::json out = nlohmann::json::array();
    for (const StatSpec& s : stat_keys())
        if (prefix.empty() || stat_pattern_under(s.pattern, prefix))
            out.push_back({{"key", s.pattern}, {"kind", to_string(s.kind)}, {"unit", s.unit}, {"ranks", ranks_cell(s)},
                           {"meaning", s.meaning}, {"example", s.example}, {"section", s.section}});
    return out.dump(2) + "\n";
}

std::string render_statistics_doc(const std::string& doc) {
    const std::string begin = "<!-- stats-reference:begin ", end = "<!-- stats-reference:end -->";
    std::string out;
    std::size_t at = 0;
    for (std::size_t b; (b = doc.find(begin, at)) != std::string::npos;) {
        const std::size_t line_end = doc.find('\n', b);
        const std::size_t close = doc.find(" -->", b);
        const std::size_t e = doc.find(end, b);
        if (line_end == std::string::npos || close > line_end || e == std::string::npos)
            throw InputError("statistics doc: '" + begin + "SECTION -->' without its '" + end + "'");
        const std::string section = doc.substr(b + begin.size(), close - b - begin.size());
        out += doc.substr(at, line_end + 1 - at) + stat_section_table(section);
        at = e;
    }
    return out + doc.substr(at);
}

}  // namespace npusim
