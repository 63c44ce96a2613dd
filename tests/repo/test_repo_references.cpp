// The repository stands alone (docs/design.md §3): no source, doc, chip
// note, model or stream refers to a design document or a folder outside the
// repository, every docs/<name>.md mentioned exists, and every
// "docs/design.md §N" cited is a numbered heading of docs/design.md.
// Plain C++; reads the source tree, runs nothing.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/build_paths.hpp"

namespace {

namespace fs = std::filesystem;

// The names the references must no longer use, spelled in pieces so this
// file does not trip its own check.
const std::string kOldDesign = std::string("DES") + "IGN";
const std::string kOldFacts = std::string("hardware-") + "facts";
const std::string kOutside = std::string("../") + "shared";

// What one line refers to.
struct LineRefs {
    std::vector<std::string> outside;   // references that leave the repository
    std::vector<std::string> docs;      // docs/<name>.md paths mentioned
    std::vector<std::string> sections;  // docs/design.md sections cited
};

// "§" as written in text, or as a JSON \u escape (json.dumps writes it so in models/).
const std::string kSect = "(?:\xC2\xA7|\\\\u00a7)";
const std::string kNum = R"((\d+(?:\.\d+)*))";

LineRefs scan_line(const std::string& line, bool in_design_doc) {
    LineRefs r;
    // The old design document, by file name or by section ("X §1.2", "X 1.2",
    // or the word ending a line that a section number continues).
    static const std::regex old_design("\\b" + kOldDesign + "(\\.md|\\s+" + kSect + "|\\s+\\d|\\s*$)");
    for (auto it = std::sregex_iterator(line.begin(), line.end(), old_design); it != std::sregex_iterator(); ++it)
        r.outside.push_back(it->str());
    for (std::size_t at = line.find(kOldFacts); at != std::string::npos; at = line.find(kOldFacts, at + 1))
        if (at < 5 || line.compare(at - 5, 5, "docs/") != 0) r.outside.push_back(kOldFacts + " without docs/");
    if (line.find(kOutside) != std::string::npos) r.outside.push_back(kOutside);

    static const std::regex doc_path(R"((?:^|[^\w-])(docs/[\w-]+\.md))");
    for (auto it = std::sregex_iterator(line.begin(), line.end(), doc_path); it != std::sregex_iterator(); ++it)
        r.docs.push_back((*it)[1].str());

    // "docs/design.md §1.3, §2 Links" cites 1.3 and 2; inside docs/design.md
    // every bare "§N" is a citation of its own sections.
    static const std::regex cited("docs/design\\.md,? " + kSect + kNum);
    static const std::regex more("^(?:,| and|;)\\s*" + kSect + kNum);
    static const std::regex bare(kSect + kNum);
    if (in_design_doc) {
        for (auto it = std::sregex_iterator(line.begin(), line.end(), bare); it != std::sregex_iterator(); ++it)
            r.sections.push_back((*it)[1].str());
        return r;
    }
    for (auto it = std::sregex_iterator(line.begin(), line.end(), cited); it != std::sregex_iterator(); ++it) {
        r.sections.push_back((*it)[1].str());
        std::string rest = it->suffix().str();
        std::smatch m;
        while (std::regex_search(rest, m, more)) {
            r.sections.push_back(m[1].str());
            rest = m.suffix().str();
        }
    }
    return r;
}

// The numbered headings of docs/design.md: "## 4. External contract" -> "4",
// "### 4.3 Task-descriptor stream" -> "4.3".
std::set<std::string> design_sections(const std::string& text) {
    static const std::regex heading(R"(^#+ (\d+(?:\.\d+)*)\.? )");
    std::set<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        std::smatch m;
        if (std::regex_search(line, m, heading)) out.insert(m[1].str());
    }
    return out;
}

// Every problem of one file's text, as "LABEL:LINE: what".
std::vector<std::string> problems_in(const std::string& label, const std::string& text, bool in_design_doc,
                                     const std::set<std::string>& sections, const fs::path& root) {
    std::vector<std::string> out;
    std::istringstream in(text);
    int n = 0;
    for (std::string line; std::getline(in, line);) {
        ++n;
        const std::string at = label + ":" + std::to_string(n) + ": ";
        const LineRefs r = scan_line(line, in_design_doc);
        for (const auto& o : r.outside) out.push_back(at + "refers outside the repository: '" + o + "'");
        for (const auto& d : r.docs)
            if (!fs::is_regular_file(root / d)) out.push_back(at + "no such file: " + d);
        for (const auto& s : r.sections)
            if (!sections.count(s)) out.push_back(at + "docs/design.md has no section " + s);
    }
    return out;
}

std::string read_file(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// The repository's own text files: sources, tests, tools, docs, chip and
// study files, models, streams and the README. Build trees, hidden folders,
// the fuzz seed corpus and binary files (images, fuzz inputs) are skipped.
std::vector<fs::path> text_files(const fs::path& root) {
    std::vector<fs::path> out{root / "README.md"};
    for (const char* top : {"sim", "tests", "tools", "docs", "configs", "models", "traces"}) {
        for (auto it = fs::recursive_directory_iterator(root / top); it != fs::recursive_directory_iterator(); ++it) {
            const fs::path& p = it->path();
            const std::string name = p.filename().string();
            if (it->is_directory()) {
                if (name.rfind("build", 0) == 0 || name[0] == '.' || p == root / "tests" / "fuzz" / "corpus")
                    it.disable_recursion_pending();
                continue;
            }
            if (!it->is_regular_file()) continue;
            if (read_file(p).find('\0') != std::string::npos) continue;
            out.push_back(p);
        }
    }
    return out;
}

std::string joined(const std::vector<std::string>& lines) {
    std::string s;
    for (const auto& l : lines) s += l + "\n";
    return s;
}

}  // namespace

TEST_CASE("repo: every reference points inside the repository", "[repo]") {
    const fs::path root = NPUSIM_SOURCE_DIR;
    const fs::path design = root / "docs" / "design.md";
    REQUIRE(fs::is_regular_file(design));
    const std::set<std::string> sections = design_sections(read_file(design));
    // The sections sources cite most: if these are gone the headings changed shape.
    for (const char* s : {"1", "1.1", "1.2", "1.3", "2", "3", "4.1", "4.2", "4.3", "4.4", "4.5", "4.6", "5"})
        CHECK(sections.count(s) == 1);
    REQUIRE(fs::is_regular_file(root / "docs/hardware-facts.md"));

    const std::vector<fs::path> files = text_files(root);
    REQUIRE(files.size() > 100);  // the walk found the tree, not an empty folder
    std::vector<std::string> problems;
    for (const auto& p : files) {
        const auto found = problems_in(fs::relative(p, root).string(), read_file(p), p == design, sections, root);
        problems.insert(problems.end(), found.begin(), found.end());
    }
    INFO(joined(problems));
    CHECK(problems.empty());
}

TEST_CASE("repo: the reference check catches bad references", "[repo]") {
    const fs::path root = NPUSIM_SOURCE_DIR;
    const std::set<std::string> sections = {"1", "1.1", "2", "4.3"};
    const auto check = [&](const std::string& line) {
        return problems_in("sim/x.hpp", "// fine\n" + line + "\n", false, sections, root);
    };

    // Each old way of citing the design is caught and named by file:line.
    const auto old_file = check("// see " + kOldDesign + ".md for the rules");
    REQUIRE(old_file.size() == 1);
    CHECK(old_file[0].rfind("sim/x.hpp:2: refers outside the repository", 0) == 0);
    CHECK(check("// (" + kOldDesign + " \xC2\xA7" "4.3)").size() == 1);
    CHECK(check("\"notes\": \"reference case (" + kOldDesign + " 1.1)\"").size() == 1);
    CHECK(check("// what the host does (" + kOldDesign).size() == 1);
    CHECK(check("// figures from " + kOldFacts + ".md").size() == 1);
    CHECK(check("// " + kOldFacts + " \"Vendor MoE dispatch kernel\"").size() == 1);
    CHECK(check("// copied from " + kOutside + "/notes").size() == 1);

    // A citation of a section docs/design.md does not have, also later in a list.
    CHECK(check("// (docs/design.md \xC2\xA7" "9.9)").size() == 1);
    CHECK(check("// (docs/design.md \xC2\xA7" "1.1, \xC2\xA7" "7 Links)").size() == 1);
    CHECK(check("\"notes\": \"docs/design.md \\u00a7" "3.1 reference\"").size() == 1);
    // A doc page that does not exist.
    CHECK(check("// see docs/no-such-" "page.md").size() == 1);

    // Good references pass.
    CHECK(check("// (docs/design.md \xC2\xA7" "1.1, \xC2\xA7" "2 Links; docs/hardware-facts.md)").empty());
    CHECK(check("\"notes\": \"docs/design.md \\u00a7" "4.3 stream\"").empty());
    CHECK(check("// docs/task-streams.md, and the DESIGNER of the chip").empty());
    // Inside the design doc a bare section mark is checked too.
    CHECK(problems_in("docs/design.md", "see \xC2\xA7" "4.3 and \xC2\xA7" "8\n", true, sections, root).size() == 1);
}
