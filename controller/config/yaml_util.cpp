#include "controller/config/yaml_util.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

#include "common/utf8.hpp"
#include "controller/config/config.hpp"
#include "controller/config/did_you_mean.hpp"
#include "controller/config/yaml_guard.hpp"

namespace convoy::yaml_util {

namespace {

std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    parts.emplace_back(path.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

// True when `path` is `prefix` or lies under it.
bool covers(std::string_view prefix, std::string_view path) {
  if (path.substr(0, prefix.size()) != prefix) return false;
  return path.size() == prefix.size() || path[prefix.size()] == '.' || path[prefix.size()] == '[';
}

// The value of `key` in a mapping (the first, if the key repeats); undefined when absent.
YAML::Node lookup(const YAML::Node& map, std::string_view key, YAML::Mark* key_mark = nullptr) {
  if (!map.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) {
      if (key_mark) *key_mark = it->first.Mark();
      return it->second;
    }
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

bool is_plain_string_tag(const YAML::Node& node) {
  return node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str";
}

std::string_view strip_plus(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  return text;
}

bool all_digits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

void write_json(const Source& source, const YAML::Node& node, const std::string& path,
                rapidjson::Writer<rapidjson::StringBuffer>& w) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      w.Null();
      return;
    case YAML::NodeType::Sequence: {
      w.StartArray();
      std::size_t i = 0;
      for (const auto& item : node) {
        write_json(source, item, path + "[" + std::to_string(i++) + "]", w);
      }
      w.EndArray();
      return;
    }
    case YAML::NodeType::Map: {
      w.StartObject();
      for (auto it = node.begin(); it != node.end(); ++it) {
        if (!it->first.IsScalar()) source.fail(path, "keys must be plain names");
        const std::string& key = it->first.Scalar();
        w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
        write_json(source, it->second, path + "." + key, w);
      }
      w.EndObject();
      return;
    }
    case YAML::NodeType::Scalar:
      break;
  }
  const std::string& text = node.Scalar();
  if (!is_plain_string_tag(node)) {
    if (text == "true" || text == "True" || text == "TRUE") return void(w.Bool(true));
    if (text == "false" || text == "False" || text == "FALSE") return void(w.Bool(false));
    if (auto i = parse_int(text)) return void(w.Int64(*i));
    if (auto u = parse_uint(text)) return void(w.Uint64(*u));
    if (auto d = parse_number(text)) return void(w.Double(*d));
  }
  w.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
}

// Walks every key and scalar under `node` (at dotted `path`); fails at the first that is not
// well-formed UTF-8, naming its line (its own mark) and key.
void check_utf8_under(const Source& source, const YAML::Node& node, const std::string& path) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence: {
      std::size_t i = 0;
      for (const auto& item : node)
        check_utf8_under(source, item, path + "[" + std::to_string(i++) + "]");
      return;
    }
    case YAML::NodeType::Map:
      for (auto it = node.begin(); it != node.end(); ++it) {
        // Copies: yaml-cpp's iterator hands out a temporary pair, so a reference would dangle.
        const YAML::Node key = it->first;
        if (key.IsScalar()) {
          const std::size_t bad = find_invalid_utf8(key.Scalar());
          if (bad != std::string_view::npos) {
            const YAML::Mark mark = key.Mark();
            const std::string shown =
                (path.empty() ? "" : path + ".") + sanitize_utf8(key.Scalar());
            source.fail_at(
                path, shown,
                "key is not valid UTF-8 (ill-formed byte at offset " + std::to_string(bad) + ")",
                &mark);
          }
          check_utf8_under(source, it->second, (path.empty() ? "" : path + ".") + key.Scalar());
        } else {
          check_utf8_under(source, key, path);
          check_utf8_under(source, it->second, path);
        }
      }
      return;
    case YAML::NodeType::Scalar: {
      const std::size_t bad = find_invalid_utf8(node.Scalar());
      if (bad == std::string_view::npos) return;
      const YAML::Mark mark = node.Mark();
      source.fail_at(path, sanitize_utf8(path),
                     "value is not valid UTF-8 (ill-formed byte at offset " + std::to_string(bad) +
                         "); convoy writes every string into JSON",
                     &mark);
    }
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return;
  }
}

}  // namespace

// --- Source -------------------------------------------------------------------------------

void Source::check_utf8() const { check_utf8_under(*this, root_, ""); }

void Source::apply_override(const std::string& text) {
  const std::size_t eq = text.find('=');
  const std::string where = "--set " + text + ": ";
  if (eq == std::string::npos || eq == 0) throw ConfigError(where + "expected key.path=value");
  const std::string path = text.substr(0, eq);
  const std::vector<std::string> parts = split_path(path);
  for (const auto& part : parts) {
    if (part.empty()) throw ConfigError(where + "empty key in '" + path + "'");
  }
  YAML::Node value;
  yaml_guard::check(text.substr(eq + 1), "--set " + text);
  try {
    value = YAML::Load(text.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    throw ConfigError(where + "invalid YAML value: " + e.msg);
  }
  if (!root_.IsDefined() || root_.IsNull()) root_.reset(YAML::Node(YAML::NodeType::Map));
  if (!root_.IsMap()) throw ConfigError(where + "the configuration is not a mapping");

  YAML::Node cur = root_;
  std::string walked;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    walked += (i ? "." : "") + parts[i];
    YAML::Node child = lookup(cur, parts[i]);
    if (!child.IsDefined() || child.IsNull()) {
      YAML::Node fresh(YAML::NodeType::Map);
      cur[parts[i]] = fresh;
      child.reset(fresh);
    } else if (!child.IsMap()) {
      throw ConfigError(where + "'" + walked + "' is " + describe(child) + ", not a mapping");
    }
    cur.reset(child);
  }
  cur[parts.back()] = value;
  overrides_.emplace_back(path, text);
}

bool Source::overridden(const std::string& path) const { return override_for(path) != nullptr; }

const std::pair<std::string, std::string>* Source::override_for(const std::string& path) const {
  for (auto it = overrides_.rbegin(); it != overrides_.rend(); ++it) {
    if (covers(it->first, path)) return &*it;
  }
  return nullptr;
}

int Source::line_of(const std::string& path, bool* created) const {
  int line = 0;
  YAML::Node cur = root_;
  for (const auto& part : split_path(path)) {
    // "stages[2]": the key, then list items by index (each item's own position).
    const std::size_t bracket = part.find('[');
    YAML::Mark mark = YAML::Mark::null_mark();
    YAML::Node next = lookup(cur, std::string_view(part).substr(0, bracket), &mark);
    if (!next.IsDefined()) return line;
    // Keys a --set inserted have no position in the file.
    if (created && mark.line < 0) *created = true;
    if (mark.line >= 0) line = mark.line + 1;
    for (std::size_t open = bracket; open != std::string::npos; open = part.find('[', open + 1)) {
      const std::size_t close = part.find(']', open);
      if (close == std::string::npos) return line;
      const auto index = parse_uint(std::string_view(part).substr(open + 1, close - open - 1));
      if (!index || !next.IsSequence() || *index >= next.size()) return line;
      next.reset(next[static_cast<std::size_t>(*index)]);
      if (next.Mark().line >= 0) line = next.Mark().line + 1;
    }
    cur.reset(next);
  }
  return line;
}

void Source::fail_at(const std::string& locate_path, const std::string& key_path,
                     const std::string& what, const YAML::Mark* mark) const {
  throw ConfigError(message(locate_path, key_path, what, mark));
}

std::string Source::message(const std::string& locate_path, const std::string& key_path,
                            const std::string& what, const YAML::Mark* mark) const {
  const auto* o = override_for(locate_path);
  bool created = false;
  const int found_line = line_of(locate_path, &created);
  if (!o && created) {  // a key only a --set wrote, e.g. a misspelt section
    for (auto it = overrides_.rbegin(); it != overrides_.rend() && !o; ++it) {
      if (covers(locate_path, it->first)) o = &*it;
    }
  }
  if (o) {
    const bool same_key = key_path.empty() || key_path == o->first;
    return "--set " + o->second + ": " + (same_key ? "" : key_path + ": ") + what;
  }
  const int line = mark && mark->line >= 0 ? mark->line + 1 : found_line;
  std::string message = file_;
  if (line > 0) message += ":" + std::to_string(line);
  message += ": ";
  if (!key_path.empty()) message += key_path + ": ";
  return message + what;
}

std::optional<std::string> Source::suggest_elsewhere(std::string_view key) const {
  for (const auto& known : known_paths_) {
    const std::size_t dot = known.rfind('.');
    const std::string_view last = dot == std::string::npos
                                      ? std::string_view(known)
                                      : std::string_view(known).substr(dot + 1);
    if (edit_distance(last, key) <= (key.size() <= 3 ? 0u : 1u)) return known;
  }
  return std::nullopt;
}

// --- Section ------------------------------------------------------------------------------

Section::Section(const Source& source, const YAML::Node& node, std::string path,
                 const std::vector<std::string_view>& keys)
    : source_(&source), node_(node), path_(std::move(path)) {
  if (!node_.IsDefined() || node_.IsNull()) {
    node_.reset(YAML::Node(YAML::NodeType::Map));
    return;
  }
  if (!node_.IsMap()) source.fail(path_, "expected a mapping, got " + describe(node_));
  std::vector<std::string> seen;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const YAML::Mark mark = it->first.Mark();
    if (!it->first.IsScalar()) {
      source.fail_at(path_, path_, "keys must be plain names, got " + describe(it->first), &mark);
    }
    const std::string& key = it->first.Scalar();
    const std::string key_path = this->path(key);
    for (const auto& s : seen) {
      if (s == key) source.fail_at(key_path, key_path, "duplicate key", &mark);
    }
    seen.push_back(key);
    bool known = false;
    for (auto k : keys) known = known || k == key;
    if (known) continue;
    std::string what = "unknown key";
    if (auto near = closest_match(key, keys)) {
      what += "; did you mean '" + this->path(*near) + "'?";
    } else if (auto elsewhere = source.suggest_elsewhere(key)) {
      what += "; did you mean '" + *elsewhere + "'?";
    }
    source.fail_at(key_path, key_path, what, &mark);
  }
}

std::string Section::path(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

YAML::Node Section::node(std::string_view key) const { return lookup(node_, key); }

Section Section::section(std::string_view key, const std::vector<std::string_view>& keys) const {
  return Section(*source_, node(key), path(key), keys);
}

namespace {

// A scalar's text, or a failure naming what was expected.
const std::string& scalar_or_fail(const Source& source, const YAML::Node& n,
                                  const std::string& path, const char* expected) {
  if (!n.IsScalar())
    source.fail(path, std::string("expected ") + expected + ", got " + describe(n));
  return n.Scalar();
}

int64_t to_int64(const Source& source, const YAML::Node& n, const std::string& path) {
  const std::string& text = scalar_or_fail(source, n, path, "an integer");
  auto v = parse_int(text);
  if (!v) source.fail(path, "expected an integer, got " + describe(n));
  return *v;
}

int to_int(const Source& source, const YAML::Node& n, const std::string& path) {
  const int64_t v = to_int64(source, n, path);
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
    source.fail(path, "out of range: " + std::to_string(v));
  }
  return static_cast<int>(v);
}

double to_double(const Source& source, const YAML::Node& n, const std::string& path) {
  const std::string& text = scalar_or_fail(source, n, path, "a number");
  auto v = parse_number(text);
  if (!v) source.fail(path, "expected a number, got " + describe(n));
  return *v;
}

}  // namespace

void Section::read(std::string_view key, std::string& out) const {
  const YAML::Node n = node(key);
  if (n.IsDefined()) out = scalar_or_fail(*source_, n, path(key), "a string");
}

void Section::read(std::string_view key, std::optional<std::string>& out) const {
  const YAML::Node n = node(key);
  if (!n.IsDefined()) return;
  if (n.IsNull()) {
    out.reset();
    return;
  }
  out = scalar_or_fail(*source_, n, path(key), "a string or null");
}

void Section::read(std::string_view key, bool& out) const {
  const YAML::Node n = node(key);
  if (!n.IsDefined()) return;
  auto v = n.IsScalar() ? parse_bool(n.Scalar()) : std::nullopt;
  if (!v) source_->fail(path(key), "expected true or false, got " + describe(n));
  out = *v;
}

void Section::read(std::string_view key, int64_t& out) const {
  const YAML::Node n = node(key);
  if (n.IsDefined()) out = to_int64(*source_, n, path(key));
}

void Section::read(std::string_view key, std::optional<int64_t>& out) const {
  const YAML::Node n = node(key);
  if (!n.IsDefined()) return;
  out = n.IsNull() ? std::nullopt : std::optional<int64_t>(to_int64(*source_, n, path(key)));
}

void Section::read(std::string_view key, int& out) const {
  const YAML::Node n = node(key);
  if (n.IsDefined()) out = to_int(*source_, n, path(key));
}

void Section::read(std::string_view key, std::optional<int>& out) const {
  const YAML::Node n = node(key);
  if (!n.IsDefined()) return;
  out = n.IsNull() ? std::nullopt : std::optional<int>(to_int(*source_, n, path(key)));
}

void Section::read(std::string_view key, uint64_t& out) const {
  const YAML::Node n = node(key);
  if (!n.IsDefined()) return;
  const std::string& text = scalar_or_fail(*source_, n, path(key), "a non-negative integer");
  auto v = parse_uint(text);
  if (!v) source_->fail(path(key), "expected a non-negative integer, got " + describe(n));
  out = *v;
}

void Section::read(std::string_view key, double& out) const {
  const YAML::Node n = node(key);
  if (n.IsDefined()) out = to_double(*source_, n, path(key));
}

void Section::read(std::string_view key, std::optional<double>& out) const {
  const YAML::Node n = node(key);
  if (!n.IsDefined()) return;
  out = n.IsNull() ? std::nullopt : std::optional<double>(to_double(*source_, n, path(key)));
}

std::optional<std::size_t> Section::read_choice(std::string_view key,
                                                const std::vector<std::string_view>& names) const {
  const YAML::Node n = node(key);
  if (!n.IsDefined()) return std::nullopt;
  if (n.IsScalar()) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] == n.Scalar()) return i;
    }
  }
  std::string allowed;
  for (auto name : names) allowed += (allowed.empty() ? "" : ", ") + std::string(name);
  std::string what = "expected one of " + allowed + ", got " + describe(n);
  if (n.IsScalar()) {
    if (auto near = closest_match(n.Scalar(), names)) what += "; did you mean '" + *near + "'?";
  }
  source_->fail(path(key), what);
}

// --- scalars ------------------------------------------------------------------------------

std::optional<int64_t> parse_int(std::string_view text) {
  const bool negative = !text.empty() && text.front() == '-';
  const std::string_view digits = negative ? text.substr(1) : strip_plus(text);
  if (!all_digits(digits)) return std::nullopt;
  int64_t v = 0;
  const std::string_view t = negative ? text : digits;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size()) return std::nullopt;
  return v;
}

std::optional<uint64_t> parse_uint(std::string_view text) {
  const std::string_view digits = strip_plus(text);
  if (!all_digits(digits)) return std::nullopt;
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_number(std::string_view text) {
  const std::string_view t = strip_plus(text);
  // YAML 1.2 core floats only: digits, '.', exponent; never "inf", "nan" or hex.
  const std::string_view body = !t.empty() && t.front() == '-' ? t.substr(1) : t;
  if (body.empty() || !((body.front() >= '0' && body.front() <= '9') || body.front() == '.')) {
    return std::nullopt;
  }
  for (char c : body) {
    const bool ok =
        (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+';
    if (!ok) return std::nullopt;
  }
  double v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<bool> parse_bool(std::string_view text) {
  static constexpr std::array<std::string_view, 9> kTrue = {"true", "True", "TRUE", "yes", "Yes",
                                                            "YES",  "on",   "On",   "ON"};
  static constexpr std::array<std::string_view, 9> kFalse = {"false", "False", "FALSE", "no", "No",
                                                             "NO",    "off",   "Off",   "OFF"};
  for (auto t : kTrue) {
    if (text == t) return true;
  }
  for (auto f : kFalse) {
    if (text == f) return false;
  }
  return std::nullopt;
}

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
      return "nothing";
    case YAML::NodeType::Null:
      return "null";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Scalar:
      break;
  }
  constexpr std::size_t kMaxShown = 60;
  const std::string& s = node.Scalar();
  return "'" + (s.size() > kMaxShown ? s.substr(0, kMaxShown) + "..." : s) + "'";
}

std::string to_json_object(const Source& source, const YAML::Node& node, const std::string& path) {
  if (!node.IsDefined() || node.IsNull()) return "{}";
  if (!node.IsMap()) source.fail(path, "expected a mapping, got " + describe(node));
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  write_json(source, node, path, writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string format_number(double v) {
  std::array<char, 64> buf{};
  const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  if (ec != std::errc()) return std::to_string(v);
  return std::string(buf.data(), end);
}

std::string quote(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (u < 0x20 || u == 0x7f) {
          out += "\\x";
          out += kHex[u >> 4];
          out += kHex[u & 0xf];
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace convoy::yaml_util
