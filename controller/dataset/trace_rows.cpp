#include "controller/dataset/trace_rows.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "controller/dataset/jsonl_reader.hpp"
#include "controller/dataset/mooncake.hpp"

namespace convoy::controller {

namespace {

void write_ms(rapidjson::Writer<rapidjson::StringBuffer>& w, double ms) {
  if (ms == std::floor(ms) && std::fabs(ms) < 9e15) {
    w.Int64(static_cast<int64_t>(ms));
  } else {
    w.Double(ms);
  }
}

// A file removed when this goes out of scope (an open reader keeps its bytes readable).
struct TempRowsFile {
  std::string path;
  TempRowsFile() = default;
  TempRowsFile(const TempRowsFile&) = delete;
  TempRowsFile& operator=(const TempRowsFile&) = delete;
  ~TempRowsFile() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove(path, ec);
  }
};

}  // namespace

std::string mooncake_row_json(const TraceRow& row) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("session_id");
  w.String(row.session.c_str(), static_cast<rapidjson::SizeType>(row.session.size()));
  if (!row.parent_session.empty()) {
    w.Key("parent_session_id");
    w.String(row.parent_session.c_str(),
             static_cast<rapidjson::SizeType>(row.parent_session.size()));
    w.Key("spawn_after_turn");
    w.Uint(row.spawn_after_turn);
  } else {
    w.Key(row.first ? "timestamp" : "delay");
    write_ms(w, row.time_ms);
  }
  w.Key("input_length");
  w.Int64(row.input_length);
  if (!row.hash_ids.empty()) {
    w.Key("hash_ids");
    w.StartArray();
    for (const uint64_t h : row.hash_ids) w.Uint64(h);
    w.EndArray();
  }
  if (row.output_length) {
    w.Key("output_length");
    w.Int64(std::max<int64_t>(1, *row.output_length));  // a call that generated nothing: 1
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

NewInput new_input_tokens(int64_t input, int64_t previous_input, int64_t previous_output) {
  const int64_t added = input - previous_input - previous_output;
  if (added >= 1) return NewInput{added, true};
  return NewInput{1, added >= 0};
}

std::unique_ptr<Dataset> index_trace_rows(const std::string& source,
                                          const std::function<int64_t(std::ostream&)>& map,
                                          const Config& config, const Corpus& corpus) {
  TempRowsFile mapped;
  std::string name = (std::filesystem::temp_directory_path() / "convoy-trace-XXXXXX").string();
  const int fd = mkstemp(name.data());
  if (fd < 0) throw std::runtime_error("cannot create a temporary file for " + source);
  ::close(fd);
  mapped.path = name;
  int64_t block_tokens = 0;
  {
    std::ofstream out(mapped.path, std::ios::binary | std::ios::trunc);
    block_tokens = map(out);
    out.flush();
    if (!out) throw std::runtime_error("cannot write the temporary file " + mapped.path);
  }
  auto rows = open_row_file(mapped.path);
  std::ifstream again(mapped.path, std::ios::binary);
  return index_mooncake_trace(again, source + " (as Mooncake rows)", std::move(rows), config,
                              corpus, block_tokens);
}

}  // namespace convoy::controller
