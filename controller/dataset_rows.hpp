// Shared by the file datasets (jsonl, mooncake): reading JSONL rows with their line numbers,
// typed field access that reports `FILE:LINE: what is wrong` as ConfigError, and the
// finishing pass that fills what a row left to the configuration.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <initializer_list>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/config.hpp"
#include "controller/corpus.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

// Row values a file left unset; finish_file_dataset replaces them with configured draws.
inline constexpr int64_t kUnsetMaxTokens = -1;
inline constexpr double kUnsetDelayMs = -1;

class JsonlReader {
 public:
  JsonlReader(std::istream& in, std::string source) : in_(in), source_(std::move(source)) {}

  // Parses the next non-blank line into `row` (an object); false at the end of the input.
  // Throws ConfigError on invalid JSON or a row that is not an object.
  bool next(rapidjson::Document& row);

  int64_t line() const { return line_; }
  const std::string& source() const { return source_; }
  // ConfigError "SOURCE:LINE: what".
  [[noreturn]] void fail(const std::string& what) const;

 private:
  std::istream& in_;
  std::string source_;
  std::string text_;
  int64_t line_ = 0;
};

// Typed access to the fields of one JSON object; `where` prefixes messages ("turns[2]: ").
class Fields {
 public:
  Fields(const rapidjson::Value& object, const JsonlReader& reader, std::string where = "")
      : object_(object), reader_(reader), where_(std::move(where)) {}

  // Fails on any key not in `allowed`, naming the allowed ones.
  void allow_only(std::initializer_list<std::string_view> allowed) const;
  bool has(std::string_view key) const;
  const rapidjson::Value* get(std::string_view key) const;  // null when absent

  std::optional<std::string> string(std::string_view key, bool non_empty) const;
  // A string, or an integer written as its decimal text (ids).
  std::optional<std::string> id(std::string_view key) const;
  std::optional<int64_t> integer(std::string_view key, int64_t min) const;
  std::optional<double> number(std::string_view key, double min) const;
  // A JSON object, serialized compactly.
  std::optional<std::string> object_json(std::string_view key) const;
  // An OpenAI chat messages array: non-empty, each {"role": system|user|assistant|tool,
  // "content": string|array|null, ...}; serialized compactly. `tokens_est` gets the estimate
  // of its text content.
  std::optional<std::string> messages_json(std::string_view key, int64_t& tokens_est) const;
  // An array of non-negative integers.
  std::optional<std::vector<uint64_t>> id_list(std::string_view key) const;

  [[noreturn]] void fail(std::string_view key, const std::string& what) const;

 private:
  const rapidjson::Value& object_;
  const JsonlReader& reader_;
  std::string where_;
};

std::string to_compact_json(const rapidjson::Value& value);

// Keeps the first dataset.conversations, then sets index, ids (conversation_id "conv-<index>"
// when empty, correlation ids from seed + index), replaces kUnsetMaxTokens with an
// output_tokens draw and kUnsetDelayMs with a think_time_ms draw (turn 0: delay 0), and with
// history: recorded, gives non-final turns without a reply one cut from the corpus.
void finish_file_dataset(std::vector<proto::Conversation>& conversations, const Config& config,
                         const Corpus& corpus);

}  // namespace convoy::controller
