// Text made safe inside HTML or XML markup (the run report's page, the JUnit
// file of `npusim check`): one escaper for both.
#pragma once
#include <string>

namespace npusim {

enum class Markup {
    html,  // & < > "
    xml,   // also ', and control characters XML 1.0 forbids become spaces
};

std::string escape_markup(const std::string& s, Markup m);

}  // namespace npusim
