// SPDX-License-Identifier: Apache-2.0
#include "json.h"

#include <cmath>
#include <cstdlib>

namespace hdbgen {

class JsonParser {
public:
    explicit JsonParser(const std::string &text) : s_(text) {}

    Json document() {
        Json v = value();
        skip_space();
        if (pos_ != s_.size()) fail("trailing characters");
        return v;
    }

private:
    const std::string &s_;
    size_t pos_ = 0;

    [[noreturn]] void fail(const std::string &what) const {
        throw std::runtime_error("JSON: " + what + " at offset " + std::to_string(pos_));
    }
    void skip_space() {
        while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t')) ++pos_;
    }
    bool take(char c) {
        skip_space();
        if (pos_ < s_.size() && s_[pos_] == c) {
            ++pos_;
            return true;
        }
        return false;
    }
    void expect(char c) {
        if (!take(c)) fail(std::string("expected '") + c + "'");
    }
    bool literal(const char *word) {
        const std::string w(word);
        if (s_.compare(pos_, w.size(), w) == 0) {
            pos_ += w.size();
            return true;
        }
        return false;
    }

    Json value() {
        skip_space();
        if (pos_ >= s_.size()) fail("unexpected end");
        Json v;
        const char c = s_[pos_];
        if (c == '{') {
            ++pos_;
            v.kind_ = Json::Kind::Object;
            if (take('}')) return v;
            do {
                skip_space();
                std::string key = string_literal();
                expect(':');
                v.object_[key] = value();
            } while (take(','));
            expect('}');
        } else if (c == '[') {
            ++pos_;
            v.kind_ = Json::Kind::Array;
            if (take(']')) return v;
            do v.array_.push_back(value());
            while (take(','));
            expect(']');
        } else if (c == '"') {
            v.kind_ = Json::Kind::String;
            v.string_ = string_literal();
        } else if (literal("true")) {
            v.kind_ = Json::Kind::Bool;
            v.bool_ = true;
        } else if (literal("false")) {
            v.kind_ = Json::Kind::Bool;
        } else if (literal("null")) {
        } else {
            v.kind_ = Json::Kind::Number;
            const char *start = s_.c_str() + pos_;
            char *end = nullptr;
            v.number_ = std::strtod(start, &end);  // correctly rounded, as Python's float()
            if (end == start) fail("unexpected character");
            pos_ += static_cast<size_t>(end - start);
        }
        return v;
    }

    static void put_utf8(std::string &out, unsigned cp) {
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        }
    }

    unsigned hex4() {
        if (pos_ + 4 > s_.size()) fail("short \\u escape");
        const unsigned v = static_cast<unsigned>(std::stoul(s_.substr(pos_, 4), nullptr, 16));
        pos_ += 4;
        return v;
    }

    std::string string_literal() {
        if (pos_ >= s_.size() || s_[pos_] != '"') fail("expected a string");
        ++pos_;
        std::string out;
        while (true) {
            if (pos_ >= s_.size()) fail("unterminated string");
            const char c = s_[pos_++];
            if (c == '"') break;
            if (c != '\\') {
                out += c;
                continue;
            }
            if (pos_ >= s_.size()) fail("unterminated escape");
            const char e = s_[pos_++];
            switch (e) {
                case '"': out += '"'; break;
                case '\\': out += '\\'; break;
                case '/': out += '/'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u': {
                    unsigned cp = hex4();
                    if (cp >= 0xD800 && cp < 0xDC00 && s_.compare(pos_, 2, "\\u") == 0) {
                        pos_ += 2;
                        const unsigned lo = hex4();
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    }
                    put_utf8(out, cp);
                    break;
                }
                default: fail("bad escape");
            }
        }
        return out;
    }
};

Json Json::parse(const std::string &text) { return JsonParser(text).document(); }

bool Json::boolean() const {
    if (kind_ != Kind::Bool) throw std::runtime_error("JSON: not a boolean");
    return bool_;
}

double Json::number() const {
    if (kind_ != Kind::Number) throw std::runtime_error("JSON: not a number");
    return number_;
}

long long Json::integer() const {
    const double v = number();
    if (std::floor(v) != v) throw std::runtime_error("JSON: not an integer");
    return static_cast<long long>(v);
}

const std::string &Json::string() const {
    if (kind_ != Kind::String) throw std::runtime_error("JSON: not a string");
    return string_;
}

const std::vector<Json> &Json::array() const {
    if (kind_ != Kind::Array) throw std::runtime_error("JSON: not an array");
    return array_;
}

const std::map<std::string, Json> &Json::object() const {
    if (kind_ != Kind::Object) throw std::runtime_error("JSON: not an object");
    return object_;
}

bool Json::has(const std::string &key) const { return kind_ == Kind::Object && object_.count(key) > 0; }

const Json &Json::operator[](const std::string &key) const {
    const auto &obj = object();
    auto it = obj.find(key);
    if (it == obj.end()) throw std::runtime_error("JSON: missing key '" + key + "'");
    return it->second;
}

}  // namespace hdbgen
