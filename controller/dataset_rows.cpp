#include "controller/dataset_rows.hpp"

#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "controller/ids.hpp"
#include "controller/rng.hpp"

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
  while (std::getline(in_, text_)) {
    ++line_;
    std::string_view view(text_);
    if (line_ == 1 && view.substr(0, 3) == "\xEF\xBB\xBF") view.remove_prefix(3);  // BOM
    if (is_blank(view)) continue;
    // A fresh document per row: a reused one keeps every earlier row's allocations.
    rapidjson::Document fresh;
    fresh.Parse(view.data(), view.size());
    row.Swap(fresh);
    if (row.HasParseError()) {
      fail("invalid JSON at column " + std::to_string(row.GetErrorOffset() + 1) + ": " +
           rapidjson::GetParseError_En(row.GetParseError()));
    }
    if (!row.IsObject()) fail(std::string("a row must be a JSON object, not ") + type_name(row));
    return true;
  }
  return false;
}

void JsonlReader::fail(const std::string& what) const {
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

std::optional<double> Fields::number(std::string_view key, double min) const {
  const auto* v = get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->IsNumber()) fail(key, std::string("expected a number, got ") + type_name(*v));
  const double value = v->GetDouble();
  if (!(value >= min))
    fail(key, "must be >= " + format_number(min) + ", got " + format_number(value));
  return value;
}

std::optional<std::string> Fields::object_json(std::string_view key) const {
  const auto* v = get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->IsObject()) fail(key, std::string("expected an object, got ") + type_name(*v));
  return to_compact_json(*v);
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
  return to_compact_json(*v);
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

void finish_file_dataset(std::vector<proto::Conversation>& conversations, const Config& config,
                         const Corpus& corpus) {
  // A file dataset runs whole unless dataset.conversations was given.
  const auto limit = config.dataset.conversations_set
                         ? static_cast<size_t>(std::max<int64_t>(config.dataset.conversations, 0))
                         : std::numeric_limits<size_t>::max();
  if (conversations.size() > limit) conversations.resize(limit);
  const bool recorded = config.dataset.history == HistoryMode::kRecorded;
  for (size_t i = 0; i < conversations.size(); ++i) {
    auto& conversation = conversations[i];
    const auto index = static_cast<uint64_t>(i);
    conversation.index = index;
    if (conversation.conversation_id.empty()) {
      conversation.conversation_id = default_conversation_id(index);
    }
    conversation.correlation_id = correlation_id(config.seed, index);
    Rng shape(config.seed, index, Stream::kShape);
    for (size_t k = 0; k < conversation.turns.size(); ++k) {
      auto& turn = conversation.turns[k];
      if (turn.max_tokens == kUnsetMaxTokens) {
        turn.max_tokens = draw_integer(config.dataset.output_tokens, shape, 1);
      }
      if (k == 0) {
        turn.delay_ms = 0;
      } else if (turn.delay_ms == kUnsetDelayMs) {
        turn.delay_ms = draw_real(config.dataset.think_time_ms, shape, 0);
      }
      if (recorded && k + 1 < conversation.turns.size() && turn.recorded_reply.empty()) {
        const int64_t reply_tokens = turn.max_tokens > 0 ? turn.max_tokens : 1;
        Rng text(config.seed, index, k, Stream::kReply);
        turn.recorded_reply = corpus.excerpt(text.next_u64(), bytes_for_tokens(reply_tokens));
      }
    }
  }
}

}  // namespace convoy::controller
