// Helpers for reading the YAML config: where a value came from (FILE:LINE or --set), typed
// scalar reads with clear messages, --set overrides, and YAML -> JSON for extra_body.
// Private to controller/config/; everything here throws ConfigError.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace convoy::yaml_util {

// The parsed document plus the origin of every override, so that a message can name the file
// and line a value came from, or the --set that wrote it.
class Source {
 public:
  Source(std::string file, const YAML::Node& root) : file_(std::move(file)), root_(root) {}

  const std::string& file() const { return file_; }
  const YAML::Node& root() const { return root_; }

  // Applies one "key.path=value" override onto the document (value parsed as YAML).
  void apply_override(const std::string& text);
  // True when `path` (dotted) or one of its parents was written by a --set.
  bool overridden(const std::string& path) const;

  // Throws ConfigError "FILE:LINE: key_path: ... not valid UTF-8 ..." at the first key or
  // scalar value anywhere in the document (after overrides) that is not well-formed UTF-8:
  // every string convoy reads from the file ends up in JSON output (summary.json's `run`).
  void check_utf8() const;

  // Every known dotted key, for "did you mean" across sections ("load.header_name").
  void set_known_paths(std::vector<std::string> paths) { known_paths_ = std::move(paths); }
  std::optional<std::string> suggest_elsewhere(std::string_view key) const;

  // Throws ConfigError "FILE:LINE: key_path: what" (or "--set k=v: [key_path: ]what"), locating
  // the line (or the --set) by `locate_path`, or by `mark` when given.
  [[noreturn]] void fail_at(const std::string& locate_path, const std::string& key_path,
                            const std::string& what, const YAML::Mark* mark = nullptr) const;
  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    fail_at(path, path, what);
  }
  // The text fail_at throws, for a warning: "FILE:LINE: key_path: what".
  std::string message(const std::string& locate_path, const std::string& key_path,
                      const std::string& what, const YAML::Mark* mark = nullptr) const;

 private:
  const std::pair<std::string, std::string>* override_for(const std::string& path) const;
  // 1-based line of the key at `path` (or of its nearest parent in the file); 0 when unknown.
  // A list item is named by index: "load.stages[1].rate".
  // `created` is set when a --set inserted a key on the path.
  int line_of(const std::string& path, bool* created = nullptr) const;

  std::string file_;
  YAML::Node root_;
  std::vector<std::pair<std::string, std::string>> overrides_;  // (path, "key.path=value")
  std::vector<std::string> known_paths_;
};

// One mapping of the document at a dotted path. Construction checks that the node is a mapping
// (null or absent = empty) with no unknown or duplicate keys.
class Section {
 public:
  Section(const Source& source, const YAML::Node& node, std::string path,
          const std::vector<std::string_view>& keys);

  const Source& source() const { return *source_; }
  std::string path(std::string_view key) const;  // "load.rate"
  // The value node; undefined when the key is absent.
  YAML::Node node(std::string_view key) const;
  bool present(std::string_view key) const { return node(key).IsDefined(); }

  Section section(std::string_view key, const std::vector<std::string_view>& keys) const;

  // Each read leaves `out` untouched when the key is absent. Null is an error for the plain
  // forms and resets the optional forms.
  void read(std::string_view key, std::string& out) const;
  void read(std::string_view key, std::optional<std::string>& out) const;
  void read(std::string_view key, bool& out) const;
  void read(std::string_view key, int64_t& out) const;
  void read(std::string_view key, std::optional<int64_t>& out) const;
  void read(std::string_view key, int& out) const;
  void read(std::string_view key, std::optional<int>& out) const;
  void read(std::string_view key, uint64_t& out) const;
  void read(std::string_view key, double& out) const;
  void read(std::string_view key, std::optional<double>& out) const;

  // An enum spelled as one of `names` (index = value).
  template <class E>
  void read_enum(std::string_view key, E& out, const std::vector<std::string_view>& names) const {
    if (auto index = read_choice(key, names)) out = static_cast<E>(*index);
  }
  // The same through a parser (the wire enums' proto::parse_*): `names` are what it accepts,
  // listed in the error.
  template <class E, class Parse>
  void read_enum(std::string_view key, E& out, const std::vector<std::string_view>& names,
                 Parse parse) const {
    if (auto index = read_choice(key, names)) {
      if (auto v = parse(names[*index])) out = *v;
    }
  }
  std::optional<std::size_t> read_choice(std::string_view key,
                                         const std::vector<std::string_view>& names) const;

  // Throws unless `ok`, naming this key.
  void check(bool ok, std::string_view key, const std::string& what) const {
    if (!ok) source_->fail(path(key), what);
  }

 private:
  const Source* source_;
  YAML::Node node_;
  std::string path_;
};

// Scalar parsing (plain text in, nullopt when the text is not of that type).
std::optional<int64_t> parse_int(std::string_view text);
std::optional<uint64_t> parse_uint(std::string_view text);
std::optional<double> parse_number(std::string_view text);  // finite only
std::optional<bool> parse_bool(std::string_view text);

// "a mapping", "a list", "null" or 'text', for "expected X, got Y".
std::string describe(const YAML::Node& node);

// A YAML mapping as a compact JSON object. Plain scalars are typed by the YAML 1.2 core schema
// (null, true/false, integers, floats); quoted scalars are strings.
std::string to_json_object(const Source& source, const YAML::Node& node, const std::string& path);

// Shortest text that reads back as the same double ("0.1", "600", "1e-07").
std::string format_number(double v);
// A YAML double-quoted scalar.
std::string quote(std::string_view s);

}  // namespace convoy::yaml_util
