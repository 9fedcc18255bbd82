// SPDX-License-Identifier: Apache-2.0
// A small JSON reader: enough for the attribute specs of the Attributes property and the test vectors.
#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace hdbgen {

class Json {
public:
    enum class Kind { Null, Bool, Number, String, Array, Object };

    static Json parse(const std::string &text);  // throws std::runtime_error naming the offset

    Kind kind() const { return kind_; }
    bool is_null() const { return kind_ == Kind::Null; }
    bool boolean() const;
    double number() const;
    long long integer() const;  // a number that must be an exact integer
    const std::string &string() const;
    const std::vector<Json> &array() const;
    const std::map<std::string, Json> &object() const;
    bool has(const std::string &key) const;
    const Json &operator[](const std::string &key) const;  // throws if missing
    const Json &operator[](size_t i) const { return array().at(i); }

private:
    friend class JsonParser;
    Kind kind_ = Kind::Null;
    bool bool_ = false;
    double number_ = 0;
    std::string string_;
    std::vector<Json> array_;
    std::map<std::string, Json> object_;
};

}  // namespace hdbgen
