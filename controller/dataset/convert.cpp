#include "controller/dataset/convert.hpp"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <unordered_set>

#include "controller/config/config.hpp"
#include "controller/dataset/aiperf_jsonl.hpp"
#include "controller/dataset/jsonl_reader.hpp"
#include "controller/dataset/sharegpt.hpp"

namespace convoy::controller {

namespace {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void put_string(JsonWriter& w, const std::string& s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void put_message(JsonWriter& w, const char* role, const std::string& content) {
  w.StartObject();
  w.Key("role");
  w.String(role);
  w.Key("content");
  put_string(w, content);
  w.EndObject();
}

// One turn as convoy JSONL; `system` (turn 0 of a conversation with a system prompt) makes it a
// "messages" turn: [{system}, {user}].
void put_turn(JsonWriter& w, const proto::Turn& turn, const std::string& system) {
  w.StartObject();
  if (!system.empty()) {
    w.Key("messages");
    w.StartArray();
    put_message(w, "system", system);
    put_message(w, "user", turn.user_text);
    w.EndArray();
  } else if (!turn.messages_json.empty()) {
    w.Key("messages");
    w.RawValue(turn.messages_json.data(), turn.messages_json.size(), rapidjson::kArrayType);
  } else {
    w.Key("text");
    put_string(w, turn.user_text);
  }
  if (turn.max_tokens != kUnsetMaxTokens) {
    w.Key("max_tokens");
    w.Int64(turn.max_tokens);
  }
  if (turn.delay_ms != kUnsetDelayMs) {
    w.Key("delay_ms");
    w.Double(turn.delay_ms);
  }
  if (!turn.extra_json.empty()) {
    w.Key("extra");
    w.RawValue(turn.extra_json.data(), turn.extra_json.size(), rapidjson::kObjectType);
  }
  if (!turn.recorded_reply.empty()) {
    w.Key("reply");
    put_string(w, turn.recorded_reply);
  }
  w.EndObject();
}

// The first non-blank line of the file (the BOM left out), at most 64 MiB.
std::string first_line(std::istream& in) {
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
    if (line.find_first_not_of(" \t\r") != std::string::npos) return line;
  }
  return "";
}

// The raw conversations of `path` as `format` (ids as in the file, unset values left unset).
std::unique_ptr<Dataset> open_raw(const std::string& path, const std::string& format,
                                  std::vector<std::string>& mappings) {
  Config config;  // defaults: no cut, no max_turns; the estimate counts the replies
  FileDatasetOptions options;
  options.raw = true;
  if (format == "sharegpt") {
    SharegptStats stats;
    options.stats = &stats;
    auto dataset = open_sharegpt_dataset(path, config, options);
    mappings = describe_sharegpt_stats(stats, config);
    mappings.push_back("max_tokens counted by the 4-bytes estimate (convert has no tokenizer)");
    return dataset;
  }
  if (format == "aiperf_single_turn" || format == "aiperf_multi_turn") {
    AiperfStats stats;
    auto dataset =
        open_aiperf_dataset(path, format == "aiperf_multi_turn", config, options, &stats);
    mappings = describe_aiperf_stats(stats);
    return dataset;
  }
  throw ConfigError("--from: \"" + format +
                    "\" is not one of sharegpt, aiperf_single_turn, aiperf_multi_turn");
}

}  // namespace

std::string detect_dataset_format(const std::string& path, std::string& why) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open: " + std::strerror(errno));
  const std::string line = first_line(in);
  const size_t at = line.find_first_not_of(" \t\r");
  if (at != std::string::npos && line[at] == '[') {
    why = "the file is a JSON array";
    return "sharegpt";
  }
  rapidjson::Document row;
  row.Parse(line.data(), line.size());
  const std::string pass_from =
      " (pass --from sharegpt|aiperf_single_turn|aiperf_multi_turn to say which)";
  if (row.HasParseError() || !row.IsObject()) {
    throw ConfigError(path +
                      ":1: cannot tell the format: the first line is neither a JSON array "
                      "nor a JSON object" +
                      pass_from);
  }
  if (row.HasMember("turns")) {
    why = "the first row has \"turns\"";
    return "aiperf_multi_turn";
  }
  if (row.HasMember("input_length") || row.HasMember("hash_ids")) {
    throw ConfigError(path +
                      ":1: this is a Mooncake trace: dataset.type mooncake reads it as it "
                      "is, no conversion needed");
  }
  if (row.HasMember("text") || row.HasMember("texts")) {
    why = "the first row has \"" + std::string(row.HasMember("text") ? "text" : "texts") + "\"";
    return "aiperf_single_turn";
  }
  throw ConfigError(path + ":1: cannot tell the format from the first row" + pass_from);
}

uint64_t convert_dataset(const std::string& in_path, const std::string& out_path,
                         const std::optional<std::string>& from, std::ostream& report) {
  std::error_code ec;
  if (std::filesystem::equivalent(in_path, out_path, ec)) {
    throw ConfigError(out_path + ": OUT is IN: write the converted file elsewhere");
  }
  std::string format;
  if (from) {
    format = *from;
    report << "format: " << format << " (--from)\n";
  } else {
    std::string why;
    format = detect_dataset_format(in_path, why);
    report << "format: " << format << " (detected: " << why << ")\n";
  }
  std::vector<std::string> mappings;
  const auto dataset = open_raw(in_path, format, mappings);  // validates all before writing
  for (const auto& m : mappings) report << "  " << m << "\n";

  std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error(out_path + ": cannot write: " + std::strerror(errno));
  std::unordered_set<std::string> ids;
  uint64_t renamed = 0;
  uint64_t turns = 0;
  for (uint64_t i = 0; i < dataset->size(); ++i) {
    const proto::Conversation c = dataset->conversation(i);
    rapidjson::StringBuffer buffer;
    JsonWriter w(buffer);
    w.StartObject();
    std::string id = c.conversation_id;
    // convoy JSONL ids are unique: a repeated one gets "~<n>" (n: its position in the file).
    if (!id.empty() && !ids.insert(id).second) {
      id += "~" + std::to_string(i);
      ++renamed;
    }
    if (!id.empty()) {
      w.Key("conversation_id");
      put_string(w, id);
    }
    w.Key("turns");
    w.StartArray();
    for (size_t k = 0; k < c.turns.size(); ++k)
      put_turn(w, c.turns[k], k == 0 ? c.system_prompt : "");
    w.EndArray();
    w.EndObject();
    out.write(buffer.GetString(), static_cast<std::streamsize>(buffer.GetSize()));
    out.put('\n');
    turns += c.turns.size();
  }
  out.close();
  if (!out) throw std::runtime_error(out_path + ": cannot write: " + std::strerror(errno));
  if (renamed > 0) {
    report << "  repeated id -> conversation_id \"<id>~<n>\" (convoy JSONL ids are unique): "
           << renamed << " conversations\n";
  }
  report << "wrote " << dataset->size() << " conversations, " << turns << " turns to " << out_path
         << " (load it with dataset.type: jsonl)\n";
  return dataset->size();
}

}  // namespace convoy::controller
