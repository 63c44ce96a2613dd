#include "common/json_file.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"

namespace npusim {
namespace {

namespace fs = std::filesystem;

// Feeds the parser from a string while recording how far it has read, so an
// error found in a parser callback (a duplicate key) or outside nlohmann's
// parse_error (number overflow) still gets a position: nlohmann gives
// callbacks none.
class TrackingIterator {
public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = const char&;

    TrackingIterator(const char* p, const char** reached) : p_(p), reached_(reached) {}
    reference operator*() const { return *p_; }
    TrackingIterator& operator++() {
        *reached_ = ++p_;
        return *this;
    }
    TrackingIterator operator++(int) {
        TrackingIterator before = *this;
        ++*this;
        return before;
    }
    bool operator==(const TrackingIterator& o) const { return p_ == o.p_; }
    bool operator!=(const TrackingIterator& o) const { return p_ != o.p_; }

private:
    const char* p_;
    const char** reached_;
};

// Offset of the opening quote of the string whose closing quote is at
// `close` (strings cannot span lines), or `close` when there is none.
std::size_t string_start(const std::string& text, std::size_t close) {
    for (std::size_t j = close; j-- > 0;) {
        if (text[j] == '\n') break;
        if (text[j] != '"') continue;
        std::size_t slashes = 0;
        while (j >= slashes + 1 && text[j - slashes - 1] == '\\') ++slashes;
        if (slashes % 2 == 0) return j;
    }
    return close;
}

// Offset (0-based) to report for a parse error. nlohmann's byte is 1-based
// and names the last character read, i.e. the end of the offending token; when
// that token is a string (typically a key after a missing comma) step back to
// its opening quote, which is where an editor should jump.
std::size_t error_offset(const std::string& text, std::size_t byte) {
    const std::size_t off = byte == 0 ? 0 : byte - 1;
    if (off >= text.size()) return text.size();  // unexpected end of input
    if (text[off] != '"' || off == 0) return off;
    return string_start(text, off);
}

// nlohmann's message without its "[json.exception.out_of_range.406] " tag.
std::string without_tag(std::string what) {
    const auto br = what.find("] ");
    if (what.rfind("[json.exception", 0) == 0 && br != std::string::npos) what = what.substr(br + 2);
    return what;
}

// A duplicate key, found by the parser callback: the parse stops there.
struct DuplicateKey {
    std::string path, key;  // path of the object holding it ("" = the top level)
    std::size_t offset;     // of the key's opening quote
};

// Builds the document from nlohmann's SAX events and throws DuplicateKey
// when an object repeats a key (nlohmann would silently keep the last
// value). Linear in the file: nlohmann's callback parser scans an object's
// members each time one of them ends, and its ordered_json looks a new key
// up among all before it; here keys are checked once, in a set, and
// appended.
template <class Json>
class RejectDuplicateKeys {
public:
    RejectDuplicateKeys(Json& out, const std::string& text, const char* const* reached)
        : dom_(out), text_(text), reached_(reached) {}

    using number_integer_t = typename Json::number_integer_t;
    using number_unsigned_t = typename Json::number_unsigned_t;
    using number_float_t = typename Json::number_float_t;
    using string_t = typename Json::string_t;
    using binary_t = typename Json::binary_t;

    bool null() { return value(), dom_.null(); }
    bool boolean(bool v) { return value(), dom_.boolean(v); }
    bool number_integer(number_integer_t v) { return value(), dom_.number_integer(v); }
    bool number_unsigned(number_unsigned_t v) { return value(), dom_.number_unsigned(v); }
    bool number_float(number_float_t v, const string_t& s) { return value(), dom_.number_float(v, s); }
    bool string(string_t& v) { return value(), dom_.string(v); }
    bool binary(binary_t& v) { return value(), dom_.binary(v); }
    bool start_object(std::size_t n) { return open(true), dom_.start_object(n); }
    bool end_object() { return close(), dom_.end_object(); }
    bool start_array(std::size_t n) { return open(false), dom_.start_array(n); }
    bool end_array() { return close(), dom_.end_array(); }
    bool key(string_t& k) {
        Frame& f = fs_.back();
        if (!f.keys.insert(k).second) {
            std::string path;
            for (std::size_t i = 0; i + 1 < fs_.size(); ++i) {
                if (fs_[i].object) path += (path.empty() ? "" : ".") + fs_[i].key;
                else path += "[" + std::to_string(fs_[i].index) + "]";
            }
            // The lexer has just read the key's closing quote.
            const auto close_quote = static_cast<std::size_t>(*reached_ - text_.data()) - 1;
            throw DuplicateKey{std::move(path), k, string_start(text_, close_quote)};
        }
        f.key = k;
        return dom_.key(k);
    }
    template <class Exception>
    bool parse_error(std::size_t pos, const std::string& token, const Exception& e) {
        return dom_.parse_error(pos, token, e);
    }

private:
    struct Frame {
        bool object = false;
        std::string key;        // current key (objects)
        std::size_t index = 0;  // current element (arrays)
        std::set<std::string> keys;
    };
    void value() {
        if (!fs_.empty() && !fs_.back().object) ++fs_.back().index;
    }
    void open(bool object) {
        fs_.emplace_back();
        fs_.back().object = object;
    }
    void close() {
        if (!fs_.empty()) fs_.pop_back();
        value();
    }

    // The document so far: the open objects and arrays, and where the
    // value after the last key goes.
    class Dom {
    public:
        explicit Dom(Json& root) : root_(root) {}
        template <class V>
        bool put(V&& v) {
            place(Json(std::forward<V>(v)));
            return true;
        }
        bool null() { return put(nullptr); }
        bool boolean(bool v) { return put(v); }
        bool number_integer(number_integer_t v) { return put(v); }
        bool number_unsigned(number_unsigned_t v) { return put(v); }
        bool number_float(number_float_t v, const string_t&) { return put(v); }
        bool string(string_t& v) { return put(std::move(v)); }
        bool binary(binary_t& v) { return put(std::move(v)); }
        bool start_object(std::size_t) { return open(Json::value_t::object); }
        bool start_array(std::size_t) { return open(Json::value_t::array); }
        bool end_object() { return stack_.pop_back(), true; }
        bool end_array() { return stack_.pop_back(), true; }
        bool key(string_t& k) {
            auto* obj = stack_.back()->template get_ptr<typename Json::object_t*>();
            if constexpr (std::is_same_v<Json, nlohmann::ordered_json>) {
                obj->emplace_back(std::move(k), Json());  // no look-up: keys are unique here
                slot_ = &obj->back().second;
            } else {
                slot_ = &(*obj)[std::move(k)];
            }
            return true;
        }
        template <class Exception>
        bool parse_error(std::size_t, const std::string&, const Exception& e) {
            throw e;
        }

    private:
        Json* place(Json&& v) {
            if (stack_.empty()) return &(root_ = std::move(v));
            if (stack_.back()->is_array()) {
                auto* a = stack_.back()->template get_ptr<typename Json::array_t*>();
                a->push_back(std::move(v));
                return &a->back();
            }
            *slot_ = std::move(v);
            return slot_;
        }
        bool open(typename Json::value_t t) {
            stack_.push_back(place(Json(t)));
            return true;
        }
        Json& root_;
        std::vector<Json*> stack_;
        Json* slot_ = nullptr;
    };

    Dom dom_;
    const std::string& text_;
    const char* const* reached_;
    std::vector<Frame> fs_;
};

// Where in FILE a text offset is: LINE:COL of the file, or of line `line`
// of a JSON Lines file (one value per line, so the offset is the column).
struct Where {
    const std::string& text;
    const std::string& file;
    std::size_t line;  // 0: the text is the whole file

    std::string at(std::size_t off) const {
        if (line == 0) return file + ":" + line_col(text, off);
        return file + ":" + std::to_string(line) + ":" + std::to_string(off + 1);
    }
};

template <class Json>
Json parse_checked(const std::string& text, const Where& where, const JsonFileSpec& spec) {
    // Before parsing: nlohmann recurses per level, and so do the callers.
    if (const auto deep = json_too_deep_at(text); deep != std::string::npos)
        throw InputError(where.at(deep) + ": invalid JSON: nested deeper than " + std::to_string(kMaxJsonDepth) +
                         " levels");
    const char* reached = text.data();
    Json doc;
    try {
        RejectDuplicateKeys<Json> sax(doc, text, &reached);
        Json::sax_parse(TrackingIterator(text.data(), &reached), TrackingIterator(text.data() + text.size(), &reached),
                        &sax);
    } catch (const DuplicateKey& e) {
        throw InputError(where.at(e.offset) + ": duplicate key '" + e.key + "' " +
                         (e.path.empty() ? "at the top level" : "in " + e.path) + " (each key may appear once)");
    } catch (const nlohmann::json::parse_error& e) {
        throw InputError(where.at(error_offset(text, e.byte)) + ": invalid JSON: " + parse_error_reason(e.what()));
    } catch (const nlohmann::json::exception& e) {
        // Number overflow ("1e400") comes without a position; the parser has
        // just read past the literal the message quotes.
        const std::string what = without_tag(e.what());
        const auto q1 = what.find('\''), q2 = what.rfind('\'');
        const auto read = static_cast<std::size_t>(reached - text.data());
        const auto at = q1 < q2 ? text.rfind(what.substr(q1 + 1, q2 - q1 - 1), read) : std::string::npos;
        throw InputError((at == std::string::npos ? where.file : where.at(at)) + ": invalid JSON: " + what);
    }
    if (spec.object && !doc.is_object())
        throw InputError(where.at(text.find_first_not_of(" \t\r\n")) + ": expected a JSON object at the top level of the " +
                         spec.what + ", got " + json_kind(doc));
    return doc;
}

std::string size_text(std::size_t bytes) {
    if (bytes >= (std::size_t(1) << 30) && bytes % (std::size_t(1) << 30) == 0)
        return std::to_string(bytes >> 30) + " GiB";
    if (bytes >= (std::size_t(1) << 20) && bytes % (std::size_t(1) << 20) == 0)
        return std::to_string(bytes >> 20) + " MiB";
    return std::to_string(bytes) + " bytes";
}

}  // namespace

template <class Json>
Json parse_json_text(const std::string& text, const std::string& file, const JsonFileSpec& spec) {
    if (text.find_first_not_of(" \t\r\n") == std::string::npos)
        throw InputError(file + ": empty " + spec.what + " (expected a JSON " + (spec.object ? "object" : "value") + ")" +
                         spec.note);
    if (const auto nul = text.find('\0'); nul != std::string::npos)
        throw InputError(file + ": not a JSON text file (binary data at byte " + std::to_string(nul + 1) + ")" +
                         spec.note);
    return parse_checked<Json>(text, Where{text, file, 0}, spec);
}

template <class Json>
Json read_json_file(const std::string& file, const JsonFileSpec& spec) {
    const std::string too_large = file + ": larger than " + size_text(spec.max_bytes) + ", which no " + spec.what + " is" +
                                  spec.note;
    std::error_code ec;
    if (fs::is_directory(file, ec)) throw InputError(file + ": cannot open " + spec.what + " (it is a directory)" + spec.note);
    std::ifstream in(file, std::ios::binary);
    if (!in) throw InputError(file + ": cannot open " + spec.what + spec.note);
    // A regular file's size says it at once; devices like /dev/zero have
    // none, so the read is bounded too.
    if (fs::is_regular_file(file, ec) && fs::file_size(file, ec) > spec.max_bytes && !ec) throw InputError(too_large);
    std::string text;
    if (!read_bounded(in, text, spec.max_bytes)) throw InputError(too_large);
    if (in.bad()) throw InputError(file + ": cannot read " + spec.what + spec.note);
    return parse_json_text<Json>(text, file, spec);
}

nlohmann::json parse_json_line(const std::string& text, const std::string& file, std::size_t line) {
    JsonFileSpec spec;
    spec.object = false;
    return parse_checked<nlohmann::json>(text, Where{text, file, line}, spec);
}

template <class Json>
std::string json_kind(const Json& v) {
    if (v.is_object()) return "an object";
    if (v.is_array()) return "a list";
    if (v.is_string()) return "a string";
    if (v.is_boolean()) return "a boolean";
    if (v.is_null()) return "null";
    if (v.is_number()) return "a number";
    return "a value";  // a discarded value
}

template nlohmann::json read_json_file<nlohmann::json>(const std::string&, const JsonFileSpec&);
template nlohmann::ordered_json read_json_file<nlohmann::ordered_json>(const std::string&, const JsonFileSpec&);
template nlohmann::json parse_json_text<nlohmann::json>(const std::string&, const std::string&, const JsonFileSpec&);
template nlohmann::ordered_json parse_json_text<nlohmann::ordered_json>(const std::string&, const std::string&,
                                                                         const JsonFileSpec&);
template std::string json_kind<nlohmann::json>(const nlohmann::json&);
template std::string json_kind<nlohmann::ordered_json>(const nlohmann::ordered_json&);

}  // namespace npusim
