#include "controller/dataset/jsonl_reader.hpp"

#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "common/hash.hpp"
#include "common/utf8.hpp"
#include "controller/dataset/ids.hpp"
#include "controller/dataset/rng.hpp"

namespace convoy::controller {

namespace {

bool is_blank(std::string_view text) {
  return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

const char* type_name(const rapidjson::Value& v) {
  if (v.IsNull()) return "null";
  if (v.IsBool()) return "a boolean";
  if (v.IsNumber()) return "a number";
  if (v.IsString()) return "a string";
  if (v.IsArray()) return "an array";
  return "an object";
}

std::string in_quotes(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  out += s;
  out += '"';
  return out;
}

// Integral JSON numbers, including 12.0 (Python writers produce those).
std::optional<int64_t> as_integer(const rapidjson::Value& v) {
  if (v.IsInt64()) return v.GetInt64();
  if (v.IsDouble()) {
    const double d = v.GetDouble();
    if (std::floor(d) == d && std::fabs(d) < 9.0e15) return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

std::string format_number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

bool valid_role(std::string_view role) {
  return role == "system" || role == "user" || role == "assistant" || role == "tool";
}

}  // namespace

bool JsonlReader::next(rapidjson::Document& row) {
  while (std::getline(*in_, text_)) {
    ++line_;
    offset_ = next_offset_;
    next_offset_ += text_.size() + 1;
    std::string_view view(text_);
    if (line_ == 1 && view.substr(0, 3) == "\xEF\xBB\xBF") view.remove_prefix(3);  // BOM
    if (is_blank(view)) continue;
    parse_into(view, row);
    check_row_text(row, *this);
    return true;
  }
  return false;
}

void JsonlReader::parse_back(const std::string& text, rapidjson::Document& row) const {
  std::string_view view(text);
  if (offset_ == 0 && view.substr(0, 3) == "\xEF\xBB\xBF") view.remove_prefix(3);
  parse_into(view, row);
}

void JsonlReader::parse_into(std::string_view view, rapidjson::Document& row) const {
  // A fresh document per row: a reused one keeps every earlier row's allocations. Iterative
  // parsing: a deeply nested row cannot exhaust the stack.
  rapidjson::Document fresh;
  fresh.Parse<rapidjson::kParseIterativeFlag>(view.data(), view.size());
  row.Swap(fresh);
  if (row.HasParseError()) {
    fail("invalid JSON at column " + std::to_string(row.GetErrorOffset() + 1) + ": " +
         rapidjson::GetParseError_En(row.GetParseError()));
  }
  if (!row.IsObject()) fail(std::string("a row must be a JSON object, not ") + type_name(row));
}

void JsonlReader::fail(const std::string& what) const {
  if (in_ == nullptr && !embedded_) {
    throw std::runtime_error(source_ + ": the row at byte " + std::to_string(offset_) +
                             " no longer reads as it did when validated (was the file changed "
                             "during the run?): " +
                             what);
  }
  throw ConfigError(source_ + ":" + std::to_string(line_) + ": " + what);
}

void Fields::fail(std::string_view key, const std::string& what) const {
  reader_.fail(where_ + std::string(key) + ": " + what);
}

void Fields::allow_only(std::initializer_list<std::string_view> allowed) const {
  for (const auto& member : object_.GetObject()) {
    const std::string_view key(member.name.GetString(), member.name.GetStringLength());
    bool known = false;
    for (const auto a : allowed) known = known || a == key;
    if (known) continue;
    std::string list;
    for (const auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    fail(key, "unknown key (expected one of: " + list + ")");
  }
}

const rapidjson::Value* Fields::get(std::string_view key) const {
  const auto it = object_.FindMember(rapidjson::Value(
      rapidjson::StringRef(key.data(), static_cast<rapidjson::SizeType>(key.size()))));
  return it == object_.MemberEnd() ? nullptr : &it->value;
}

bool Fields::has(std::string_view key) const { return get(key) != nullptr; }

std::optional<std::string> Fields::string(std::string_view key, bool non_empty) const {
  const auto* v = get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->IsString()) fail(key, std::string("expected a string, got ") + type_name(*v));
  if (non_empty && v->GetStringLength() == 0) fail(key, "must not be empty");
  check_wire_string(key, v->GetStringLength());
  return std::string(v->GetString(), v->GetStringLength());
}

std::optional<std::string> Fields::id(std::string_view key) const {
  const auto* v = get(key);
  if (v == nullptr) return std::nullopt;
  if (v->IsInt64()) return std::to_string(v->GetInt64());
  return string(key, true);
}

std::optional<int64_t> Fields::integer(std::string_view key, int64_t min) const {
  const auto* v = get(key);
  if (v == nullptr) return std::nullopt;
  const auto value = as_integer(*v);
  if (!value) fail(key, std::string("expected an integer, got ") + type_name(*v));
  if (*value < min)
    fail(key, "must be >= " + std::to_string(min) + ", got " + std::to_string(*value));
  return value;
}

std::optional<int64_t> Fields::integer(std::string_view key, int64_t min, int64_t max,
                                       const std::string& why_max) const {
  const auto* v = get(key);
  if (v == nullptr) return std::nullopt;
  // A huge integral double (1e12) is still an integer: say it is too large, not mistyped.
  if (v->IsNumber() && !(v->GetDouble() <= static_cast<double>(max))) {
    const auto exact = as_integer(*v);
    fail(key, "must be <= " + std::to_string(max) + ", got " +
                  (exact ? std::to_string(*exact) : format_number(v->GetDouble())) + " (" +
                  why_max + ")");
  }
  return integer(key, min);
}

std::optional<double> Fields::number(std::string_view key, double min) const {
  const auto* v = get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->IsNumber()) fail(key, std::string("expected a number, got ") + type_name(*v));
  const double value = v->GetDouble();
  if (!(value >= min))
    fail(key, "must be >= " + format_number(min) + ", got " + format_number(value));
  return value;
}

std::optional<double> Fields::number(std::string_view key, double min, double max,
                                     const std::string& why_max) const {
  const auto value = number(key, min);
  if (value && !(std::isfinite(*value) && *value <= max)) {
    fail(key, "must be <= " + format_number(max) + ", got " + format_number(*value) + " (" +
                  why_max + ")");
  }
  return value;
}

std::optional<std::string> Fields::object_json(std::string_view key) const {
  const auto* v = get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->IsObject()) fail(key, std::string("expected an object, got ") + type_name(*v));
  std::string json = to_compact_json(*v);
  check_wire_string(key, json.size());
  return json;
}

std::optional<std::string> Fields::messages_json(std::string_view key, int64_t& tokens_est) const {
  const auto* v = get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->IsArray()) fail(key, std::string("expected an array of messages, got ") + type_name(*v));
  if (v->Empty()) fail(key, "must not be empty");
  size_t text_bytes = 0;
  for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
    const auto& message = (*v)[i];
    const std::string at = std::string(key) + "[" + std::to_string(i) + "]";
    if (!message.IsObject()) fail(at, std::string("expected an object, got ") + type_name(message));
    const Fields m(message, reader_, where_ + at + ".");
    const auto role = m.string("role", true);
    if (!role) fail(at, "\"role\" is required");
    if (!valid_role(*role)) {
      m.fail("role", in_quotes(*role) + " is not one of system, user, assistant, tool");
    }
    const auto* content = m.get("content");
    if (content == nullptr) {
      if (*role != "assistant" || !m.has("tool_calls")) fail(at, "\"content\" is required");
      continue;
    }
    if (content->IsString()) {
      text_bytes += content->GetStringLength();
    } else if (content->IsArray()) {
      for (const auto& part : content->GetArray()) {
        if (!part.IsObject()) m.fail("content", "parts must be objects");
        const auto text = part.FindMember("text");
        if (text != part.MemberEnd() && text->value.IsString()) {
          text_bytes += text->value.GetStringLength();
        }
      }
    } else if (!(content->IsNull() && *role == "assistant")) {
      m.fail("content",
             std::string("expected a string or an array of parts, got ") + type_name(*content));
    }
  }
  tokens_est = static_cast<int64_t>((text_bytes + kBytesPerToken - 1) / kBytesPerToken);
  std::string json = to_compact_json(*v);
  check_wire_string(key, json.size());
  return json;
}

std::optional<std::vector<uint64_t>> Fields::id_list(std::string_view key) const {
  const auto* v = get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->IsArray()) fail(key, std::string("expected an array of integers, got ") + type_name(*v));
  std::vector<uint64_t> ids;
  ids.reserve(v->Size());
  for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
    const auto& item = (*v)[i];
    if (!item.IsUint64()) {
      fail(std::string(key) + "[" + std::to_string(i) + "]",
           std::string("expected a non-negative integer, got ") + type_name(item));
    }
    ids.push_back(item.GetUint64());
  }
  return ids;
}

std::string to_compact_json(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

void Fields::check_wire_string(std::string_view key, size_t bytes) const {
  if (bytes <= proto::kMaxStringBytes) return;
  fail(key, describe_bytes(bytes) + " is longer than one string may be on the wire (" +
                describe_bytes(proto::kMaxStringBytes) + ")");
}

namespace {

constexpr int kMaxRowDepth = 64;

void check_text_at(const rapidjson::Value& v, const std::string& path, int depth,
                   const JsonlReader& reader) {
  auto fail = [&](const std::string& where, const std::string& what) {
    reader.fail((where.empty() ? std::string() : where + ": ") + what);
  };
  if (depth > kMaxRowDepth) fail(path, "nested deeper than " + std::to_string(kMaxRowDepth));
  if (v.IsString()) {
    const size_t bad = find_invalid_utf8(std::string_view(v.GetString(), v.GetStringLength()));
    if (bad != std::string_view::npos) {
      fail(path, "invalid UTF-8 at byte " + std::to_string(bad) + " of the string");
    }
  } else if (v.IsArray()) {
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
      check_text_at(v[i], path + "[" + std::to_string(i) + "]", depth + 1, reader);
    }
  } else if (v.IsObject()) {
    std::vector<std::string_view> keys;
    keys.reserve(v.MemberCount());
    for (const auto& member : v.GetObject()) {
      const std::string_view key(member.name.GetString(), member.name.GetStringLength());
      const std::string at = path.empty() ? std::string(key) : path + "." + std::string(key);
      if (find_invalid_utf8(key) != std::string_view::npos) {
        fail(path, "a key is not valid UTF-8");
      }
      keys.push_back(key);
      check_text_at(member.value, at, depth + 1, reader);
    }
    std::sort(keys.begin(), keys.end());
    const auto dup = std::adjacent_find(keys.begin(), keys.end());
    if (dup != keys.end()) {
      const std::string at = path.empty() ? std::string(*dup) : path + "." + std::string(*dup);
      fail(at, "duplicate key");
    }
  }
}

// msgpack framing: a map or array header, a str header, an int: at most this many bytes each.
constexpr uint64_t kHeaderBytes = 9;
// A Turn's and a Conversation's field names and scalar values, generously.
constexpr uint64_t kTurnOverheadBytes = 7 * (16 + kHeaderBytes) + 4 * kHeaderBytes;
constexpr uint64_t kConversationOverheadBytes = 10 * (16 + kHeaderBytes) + 8 * kHeaderBytes;
constexpr uint64_t kSubagentOverheadBytes = 6 * (16 + kHeaderBytes) + 4 * kHeaderBytes;

class FileRowSource final : public RowSource {
 public:
  explicit FileRowSource(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      throw ConfigError(path + ": cannot open dataset.path: " + std::strerror(errno));
    }
  }
  ~FileRowSource() override { ::close(fd_); }
  FileRowSource(const FileRowSource&) = delete;
  FileRowSource& operator=(const FileRowSource&) = delete;

  std::string line_at(uint64_t offset) const override {
    std::string line;
    size_t chunk = 16u << 10;
    for (;;) {
      const size_t old = line.size();
      line.resize(old + chunk);
      const ssize_t n = ::pread(fd_, line.data() + old, chunk, static_cast<off_t>(offset + old));
      if (n < 0) {
        if (errno == EINTR) {
          line.resize(old);
          continue;
        }
        throw std::runtime_error(path_ + ": cannot read back the row at byte " +
                                 std::to_string(offset) + ": " + std::strerror(errno));
      }
      const auto got = static_cast<size_t>(n);
      const size_t newline = line.find('\n', old);
      if (newline < old + got) {
        line.resize(newline);
        return line;
      }
      line.resize(old + got);
      if (got == 0) return line;  // the last line has no '\n'
      chunk = std::min<size_t>(chunk * 2, 16u << 20);
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
};

class TextRowSource final : public RowSource {
 public:
  explicit TextRowSource(std::string text) : text_(std::move(text)) {}
  std::string line_at(uint64_t offset) const override {
    if (offset > text_.size()) throw std::runtime_error("row offset past the end of the text");
    const size_t end = text_.find('\n', offset);
    return text_.substr(offset, end == std::string::npos ? std::string::npos : end - offset);
  }

 private:
  std::string text_;
};

}  // namespace

void check_row_text(const rapidjson::Value& row, const JsonlReader& reader) {
  check_text_at(row, "", 0, reader);
}

std::shared_ptr<const RowSource> open_row_file(const std::string& path) {
  return std::make_shared<FileRowSource>(path);
}

std::shared_ptr<const RowSource> row_text(std::string text) {
  return std::make_shared<TextRowSource>(std::move(text));
}

uint64_t turn_wire_bytes_bound(const proto::Turn& turn) {
  return kTurnOverheadBytes + turn.user_text.size() + turn.messages_json.size() +
         turn.extra_json.size() + turn.recorded_reply.size();
}

uint64_t subagent_wire_bytes_bound(const proto::SubAgent& subagent) {
  uint64_t bytes = kSubagentOverheadBytes + subagent.conversation_id.size() +
                   subagent.correlation_id.size() + subagent.system_prompt.size();
  for (const auto& turn : subagent.turns) bytes += turn_wire_bytes_bound(turn);
  return bytes;
}

uint64_t wire_bytes_bound(const proto::Conversation& conversation, uint64_t extra_bytes) {
  uint64_t bytes = kConversationOverheadBytes + conversation.conversation_id.size() +
                   conversation.correlation_id.size() + conversation.system_prompt.size() +
                   extra_bytes;
  for (const auto& turn : conversation.turns) bytes += turn_wire_bytes_bound(turn);
  for (const auto& subagent : conversation.subagents) bytes += subagent_wire_bytes_bound(subagent);
  return bytes;
}

std::string describe_bytes(uint64_t bytes) {
  std::ostringstream out;
  out << bytes << " bytes";
  if (bytes >= (1u << 20)) {
    out.precision(3);
    out << " (" << static_cast<double>(bytes) / (1u << 20) << " MiB)";
  }
  return out.str();
}

double draw_upper_bound(const Distribution& d) {
  if (!d.mix.empty()) {  // a mixture: its highest component's bound
    double bound = 0;
    for (const auto& c : d.mix) {
      if (c.weight > 0) {
        bound = std::max(bound, draw_upper_bound(Distribution{c.mean, c.stddev, c.min, c.max}));
      }
    }
    return bound;
  }
  const double tail = d.mean + 6 * std::max(d.stddev, 0.0);
  const double hi = d.max ? std::min(*d.max, tail) : tail;
  return std::max(hi, d.min.value_or(hi));  // a min above the max wins, as in draw_real
}

void check_file_draws(const Config& config) {
  if (config.dataset.history != HistoryMode::kRecorded) return;
  const double tokens = draw_upper_bound(config.dataset.output_tokens);
  const double bytes = tokens * static_cast<double>(kBytesPerToken);
  if (bytes <= static_cast<double>(proto::kMaxStringBytes)) return;
  throw ConfigError(
      (config.source_path.empty() ? "" : config.source_path + ": ") +
      "dataset.output_tokens: with history: recorded, rows without max_tokens get a reply of "
      "up to " +
      format_number(tokens) + " tokens, longer than one string may be on the wire (" +
      describe_bytes(proto::kMaxStringBytes) + ")");
}

uint64_t generated_reply_bytes(const proto::Turn& turn, size_t k, size_t turns,
                               const Config& config) {
  if (config.dataset.history != HistoryMode::kRecorded || k + 1 >= turns) return 0;
  if (!turn.recorded_reply.empty()) return 0;
  if (turn.max_tokens == kUnsetMaxTokens) {
    const double bound = draw_upper_bound(config.dataset.output_tokens);
    return bytes_for_tokens(static_cast<int64_t>(std::min(std::ceil(bound), 1e9)));
  }
  return bytes_for_tokens(std::max<int64_t>(turn.max_tokens, 1));
}

namespace {

// Fills what the rows left to the configuration, drawn from (seed, index) as the lead's draws
// always were; a sub-agent passes a seed of its own.
void finish_turns(std::vector<proto::Turn>& turns, uint64_t seed, uint64_t index,
                  const Config& config, const Corpus& corpus) {
  const bool recorded = config.dataset.history == HistoryMode::kRecorded;
  Rng shape(seed, index, Stream::kShape);
  for (size_t k = 0; k < turns.size(); ++k) {
    auto& turn = turns[k];
    if (turn.max_tokens == kUnsetMaxTokens) {
      turn.max_tokens = draw_integer(config.dataset.output_tokens, shape, 1);
    }
    if (k == 0) {
      turn.delay_ms = 0;
    } else if (turn.delay_ms == kUnsetDelayMs) {
      turn.delay_ms = draw_real(config.dataset.think_time_ms, shape, 0);
    }
    if (recorded && k + 1 < turns.size() && turn.recorded_reply.empty()) {
      const int64_t reply_tokens = turn.max_tokens > 0 ? turn.max_tokens : 1;
      Rng text(seed, index, k, Stream::kReply);
      turn.recorded_reply = corpus.excerpt(text.next_u64(), bytes_for_tokens(reply_tokens));
    }
  }
}

}  // namespace

void finish_file_conversation(proto::Conversation& conversation, uint64_t index,
                              const Config& config, const Corpus& corpus) {
  conversation.index = index;
  if (conversation.conversation_id.empty()) {
    conversation.conversation_id = default_conversation_id(index);
  }
  conversation.correlation_id = correlation_id(config.seed, index);
  finish_turns(conversation.turns, config.seed, index, config, corpus);
}

void finish_file_subagent(proto::SubAgent& subagent, uint64_t lead_index, uint64_t position,
                          const std::string& lead_id, const Config& config, const Corpus& corpus) {
  if (subagent.conversation_id.empty()) {
    subagent.conversation_id = default_subagent_id(lead_id, position);
  }
  subagent.correlation_id = subagent_correlation_id(config.seed, lead_index, position);
  finish_turns(subagent.turns, derive_seed(config.seed, lead_index, Stream::kSubagentText),
               position, config, corpus);
}

uint64_t file_conversation_limit(const Config& config) {
  return config.dataset.conversations_set
             ? static_cast<uint64_t>(std::max<int64_t>(config.dataset.conversations, 0))
             : std::numeric_limits<uint64_t>::max();
}

IdHash hash_id(std::string_view id) {
  // Two unrelated functions: std::hash (murmur in libstdc++) and FNV-1a through a finalizer.
  return IdHash{std::hash<std::string_view>{}(id), splitmix64(fnv1a64(id))};
}

}  // namespace convoy::controller
