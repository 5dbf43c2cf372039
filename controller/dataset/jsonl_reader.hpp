// Shared by the file datasets (jsonl, mooncake): reading JSONL rows with their line numbers and
// byte offsets, reading a row back by its offset, typed field access that reports
// `FILE:LINE: what is wrong` as ConfigError, the wire-size bounds every conversation must meet,
// and the finishing step that fills what a row left to the configuration.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/dataset/corpus.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

// Row values a file left unset; finish_file_conversation replaces them with configured draws.
inline constexpr int64_t kUnsetMaxTokens = -1;
inline constexpr double kUnsetDelayMs = -1;

// Think time (jsonl delay_ms, mooncake delay) is at most this: about 11.6 days.
inline constexpr double kMaxDelayMs = 1e9;
// One conversation's Assign entry may weigh at most this on the wire: the message limit less room
// for the envelope and the Assign around it.
inline constexpr uint64_t kMaxConversationWireBytes = proto::kMaxMessageBytes - (64u << 10);

// The bytes a file's rows are read back from, by the offset the validating pass recorded.
class RowSource {
 public:
  virtual ~RowSource() = default;
  // The line that starts at byte `offset`, without its '\n'. Throws std::runtime_error when it
  // cannot be read.
  virtual std::string line_at(uint64_t offset) const = 0;
};

// A file, kept open (so a file renamed over it mid-run does not change what is read).
std::shared_ptr<const RowSource> open_row_file(const std::string& path);
// Text held in memory (tests, small inputs).
std::shared_ptr<const RowSource> row_text(std::string text);

class JsonlReader {
 public:
  // Streams `in`, validating every row: its JSON, that every string (keys included) is valid
  // UTF-8 and that no object repeats a key.
  JsonlReader(std::istream& in, std::string source) : in_(&in), source_(std::move(source)) {}
  // Reads back one row that a validating pass already accepted, at byte `offset`; a failure then
  // means the file changed under the run and throws std::runtime_error.
  JsonlReader(std::string source, uint64_t offset) : source_(std::move(source)), offset_(offset) {}
  // Validating one value cut from a larger document (a ShareGPT array element that starts on
  // `line`): errors are ConfigError "SOURCE:LINE: what"; next() is not used.
  JsonlReader(std::string source, int64_t line, uint64_t offset)
      : source_(std::move(source)), line_(line), offset_(offset), embedded_(true) {}

  // Parses the next non-blank line into `row` (an object); false at the end of the input.
  // Throws ConfigError on invalid JSON or a row that is not an object.
  bool next(rapidjson::Document& row);
  // Read-back mode: parses `text` (the row at the constructor's offset) into `row`.
  void parse_back(const std::string& text, rapidjson::Document& row) const;

  int64_t line() const { return line_; }
  uint64_t offset() const { return offset_; }  // of the current row's first byte
  const std::string& source() const { return source_; }
  // ConfigError "SOURCE:LINE: what" (read-back mode: std::runtime_error).
  [[noreturn]] void fail(const std::string& what) const;

 private:
  void parse_into(std::string_view view, rapidjson::Document& row) const;

  std::istream* in_ = nullptr;  // null in read-back mode
  std::string source_;
  std::string text_;
  int64_t line_ = 0;
  uint64_t offset_ = 0;
  uint64_t next_offset_ = 0;
  bool embedded_ = false;  // a validating reader without a stream (the constructor above)
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

  // A string of at most proto::kMaxStringBytes bytes.
  std::optional<std::string> string(std::string_view key, bool non_empty) const;
  // A string, or an integer written as its decimal text (ids).
  std::optional<std::string> id(std::string_view key) const;
  std::optional<int64_t> integer(std::string_view key, int64_t min) const;
  std::optional<int64_t> integer(std::string_view key, int64_t min, int64_t max,
                                 const std::string& why_max) const;
  std::optional<double> number(std::string_view key, double min) const;
  std::optional<double> number(std::string_view key, double min, double max,
                               const std::string& why_max) const;
  // A JSON object, serialized compactly (at most proto::kMaxStringBytes bytes).
  std::optional<std::string> object_json(std::string_view key) const;
  // An OpenAI chat messages array: non-empty, each {"role": system|user|assistant|tool,
  // "content": string|array|null, ...}; serialized compactly (at most proto::kMaxStringBytes
  // bytes). `tokens_est` gets the estimate of its text content.
  std::optional<std::string> messages_json(std::string_view key, int64_t& tokens_est) const;
  // An array of non-negative integers.
  std::optional<std::vector<uint64_t>> id_list(std::string_view key) const;

  [[noreturn]] void fail(std::string_view key, const std::string& what) const;
  const JsonlReader& reader() const { return reader_; }

 private:
  // Fails when a string value of `bytes` bytes could not cross the wire.
  void check_wire_string(std::string_view key, size_t bytes) const;

  const rapidjson::Value& object_;
  const JsonlReader& reader_;
  std::string where_;
};

std::string to_compact_json(const rapidjson::Value& value);

// Fails on the first string (or key) that is not valid UTF-8 and on the first object that
// repeats a key, naming its path ("turns[1].text"); also on nesting deeper than 64.
void check_row_text(const rapidjson::Value& row, const JsonlReader& reader);

// An upper bound of what `conversation` weighs inside an Assign (msgpack), its sub-agents
// included (the whole family crosses in one Assign entry), plus `extra_bytes` of text still to be
// generated.
uint64_t wire_bytes_bound(const proto::Conversation& conversation, uint64_t extra_bytes = 0);
// The same bound for one sub-agent (its ids, system prompt and turns).
uint64_t subagent_wire_bytes_bound(const proto::SubAgent& subagent);
// The same bound for one turn.
uint64_t turn_wire_bytes_bound(const proto::Turn& turn);

// "N bytes (M MiB)" for messages about sizes.
std::string describe_bytes(uint64_t bytes);

// The largest value a configured draw is expected to take, for wire-size checks: the smaller of
// max and mean + 6 stddev (a draw beyond that has odds below one in a hundred million).
double draw_upper_bound(const Distribution& d);

// Throws ConfigError naming the config file and key when a value drawn from dataset.* for a file
// dataset could not cross the wire (with history: recorded, a generated reply of
// output_tokens tokens).
void check_file_draws(const Config& config);

// The bytes of the reply history: recorded generates for turn k (0 when none is generated).
uint64_t generated_reply_bytes(const proto::Turn& turn, size_t k, size_t turns,
                               const Config& config);

// Sets index, ids (conversation_id "conv-<index>" when empty, the correlation id from seed +
// index), replaces kUnsetMaxTokens with an output_tokens draw and kUnsetDelayMs with a
// think_time_ms draw (turn 0: delay 0), and with history: recorded gives non-final turns without
// a reply one cut from the corpus.
void finish_file_conversation(proto::Conversation& conversation, uint64_t index,
                              const Config& config, const Corpus& corpus);

// The same for sub-agent `position` of the family that runs as conversation `lead_index`: its
// correlation id (subagent_correlation_id), conversation_id "<lead id>/sub<position>" when
// empty, and its draws on streams of its own (seed, lead index, position), so adding a sub-agent
// never shifts the lead's draws.
void finish_file_subagent(proto::SubAgent& subagent, uint64_t lead_index, uint64_t position,
                          const std::string& lead_id, const Config& config, const Corpus& corpus);

// dataset.conversations when given, else no limit: a file dataset runs whole unless cut.
uint64_t file_conversation_limit(const Config& config);

// Identifies a string by two independent 64-bit hashes: a collision between two different ids
// has odds around 2^-128 per pair, so the validating pass keeps no id text.
struct IdHash {
  uint64_t a = 0;
  uint64_t b = 0;
  bool operator==(const IdHash&) const = default;
};
IdHash hash_id(std::string_view id);
struct IdHashHasher {
  size_t operator()(const IdHash& h) const { return static_cast<size_t>(h.a); }
};

}  // namespace convoy::controller
