//===- json.cpp - A reader for the flat JSON of kernel descriptions -------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "json.h"

#include <cctype>
#include <cstdlib>

namespace {
struct Parser {
  explicit Parser(const std::string &text) : text(text) {}

  const std::string &text;
  size_t pos = 0;
  std::string error;

  void skipSpace() {
    while (pos < text.size() &&
           std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }

  bool expect(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    error =
        std::string("expected '") + c + "' at offset " + std::to_string(pos);
    return false;
  }

  bool parseString(std::string &out) {
    if (!expect('"'))
      return false;
    while (pos < text.size() && text[pos] != '"') {
      if (text[pos] == '\\' && pos + 1 < text.size())
        ++pos; // Kernel names and paths need no escapes beyond \" and \\.
      out += text[pos++];
    }
    return expect('"');
  }

  bool parseValue(JsonValue &out) {
    skipSpace();
    if (pos >= text.size()) {
      error = "unexpected end";
      return false;
    }
    if (text[pos] == '"') {
      out.kind = JsonValue::String;
      return parseString(out.string);
    }
    if (text[pos] == '[') {
      ++pos;
      out.kind = JsonValue::Array;
      skipSpace();
      if (pos < text.size() && text[pos] == ']') {
        ++pos;
        return true;
      }
      do {
        out.items.emplace_back();
        if (!parseValue(out.items.back()))
          return false;
        skipSpace();
      } while (pos < text.size() && text[pos] == ',' && ++pos);
      return expect(']');
    }
    char *end = nullptr;
    out.kind = JsonValue::Number;
    out.number = std::strtod(text.c_str() + pos, &end);
    if (end == text.c_str() + pos) {
      error = "bad value at offset " + std::to_string(pos);
      return false;
    }
    pos = end - text.c_str();
    return true;
  }
};
} // namespace

bool parseFlatJson(const std::string &text,
                   std::map<std::string, JsonValue> &out, std::string &error) {
  Parser p(text);
  bool ok = p.expect('{');
  p.skipSpace();
  if (ok && p.pos < text.size() && text[p.pos] == '}') {
    ++p.pos;
  } else {
    while (ok) {
      std::string key;
      JsonValue value;
      ok = p.parseString(key) && p.expect(':') && p.parseValue(value);
      if (!ok)
        break;
      out[key] = value;
      p.skipSpace();
      if (p.pos < text.size() && text[p.pos] == ',') {
        ++p.pos;
        continue;
      }
      ok = p.expect('}');
      break;
    }
  }
  error = p.error;
  return ok;
}
