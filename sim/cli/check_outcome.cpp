#include "cli/check_outcome.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/markup_escape.hpp"
#include "common/errors.hpp"
#include "common/output_file.hpp"
#include "common/version.hpp"

namespace npusim::cli {

namespace {

std::string text(const study::ojson& v) { return v.is_null() ? "missing" : v.dump(); }

// One line per metric out of tolerance, as the table says it.
std::string metric_message(const study::Comparison& c) {
    if (!c.problem.empty()) return fmt::format("{}: {}", c.metric, c.problem);
    if (c.numeric)
        return fmt::format("{}: expected {}, actual {}, delta {}, tolerance {}", c.metric, text(c.expected), text(c.actual),
                           c.delta, c.allowed);
    return fmt::format("{}: expected {}, actual {}", c.metric, text(c.expected), text(c.actual));
}

}  // namespace

const char* to_string(GoldenOutcome::Status s) {
    switch (s) {
        case GoldenOutcome::Status::pass: return "pass";
        case GoldenOutcome::Status::fail: return "fail";
        case GoldenOutcome::Status::error: return "error";
    }
    return "?";
}

void write_check_junit(const std::string& file, const std::vector<GoldenOutcome>& outcomes,
                       const std::vector<std::string>& sets) {
    std::size_t failures = 0, errors = 0;
    for (const auto& o : outcomes) {
        failures += o.status == GoldenOutcome::Status::fail;
        errors += o.status == GoldenOutcome::Status::error;
    }
    std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    x += fmt::format("<testsuites name=\"npusim check\" tests=\"{}\" failures=\"{}\" errors=\"{}\">\n", outcomes.size(),
                     failures, errors);
    x += fmt::format("  <testsuite name=\"goldens\" tests=\"{}\" failures=\"{}\" errors=\"{}\">\n", outcomes.size(),
                     failures, errors);
    x += "    <properties>\n";
    x += fmt::format("      <property name=\"npusim.version\" value=\"{}\"/>\n", escape_markup(version(), Markup::xml));
    for (const auto& s : sets) x += fmt::format("      <property name=\"set\" value=\"{}\"/>\n", escape_markup(s, Markup::xml));
    x += "    </properties>\n";
    for (const auto& o : outcomes) {
        x += fmt::format("    <testcase classname=\"npusim.check\" name=\"{}\" file=\"{}\"", escape_markup(o.name, Markup::xml),
                         escape_markup(o.file, Markup::xml));
        std::string body;
        if (o.status == GoldenOutcome::Status::error) {
            body += fmt::format("      <error type=\"broken golden\" message=\"{}\"/>\n", escape_markup(o.message, Markup::xml));
        } else if (!o.message.empty()) {
            body += fmt::format("      <failure type=\"run failed\" message=\"{}\"/>\n", escape_markup(o.message, Markup::xml));
        } else {
            for (const auto& c : o.metrics)
                if (!c.pass)
                    body += fmt::format("      <failure type=\"out of tolerance\" message=\"{}\"/>\n",
                                        escape_markup(metric_message(c), Markup::xml));
        }
        body += fmt::format("      <system-out>{}</system-out>\n", escape_markup(o.run, Markup::xml));
        x += ">\n" + body + "    </testcase>\n";
    }
    x += "  </testsuite>\n</testsuites>\n";
    write_output_file(file, x);
}

void write_check_json(const std::string& file, const std::string& target, const std::vector<GoldenOutcome>& outcomes,
                      const std::vector<std::string>& sets) {
    study::ojson doc;
    doc["version"] = version();
    doc["goldens_from"] = target;
    doc["set"] = sets;
    std::size_t counts[3] = {0, 0, 0};
    study::ojson list = study::ojson::array();
    for (const auto& o : outcomes) {
        ++counts[static_cast<int>(o.status)];
        study::ojson g;
        g["name"] = o.name;
        g["file"] = o.file;
        g["run"] = o.run;
        g["status"] = to_string(o.status);
        if (!o.message.empty()) g["message"] = o.message;
        study::ojson ms = study::ojson::array();
        for (const auto& c : o.metrics) {
            study::ojson m;
            m["metric"] = c.metric;
            m["expected"] = c.expected;
            m["actual"] = c.actual;
            if (c.numeric) {
                m["delta"] = c.delta;
                m["tolerance"] = c.allowed;
            }
            m["pass"] = c.pass;
            if (!c.problem.empty()) m["problem"] = c.problem;
            ms.push_back(m);
        }
        g["metrics"] = ms;
        list.push_back(g);
    }
    doc["passed"] = counts[0];
    doc["failed"] = counts[1];
    doc["errors"] = counts[2];
    doc["goldens"] = list;
    write_output_file(file, doc.dump(2) + "\n");
}

}  // namespace npusim::cli
