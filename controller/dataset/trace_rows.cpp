#include "controller/dataset/trace_rows.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string_view>

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

// Appends `file` to `out`, decompressed when it starts with gzip's magic bytes (concatenated
// gzip members too); returns the number of lines it added ('\n' count, plus one for an unended
// last line). Throws ConfigError naming `file` when it cannot be read.
int64_t append_plain(const std::string& file, std::ostream& out) {
  gzFile in = gzopen(file.c_str(), "rb");  // reads plain files through as they are
  if (in == nullptr) throw ConfigError(file + ": cannot open dataset.path");
  std::vector<char> buffer(1 << 16);
  int64_t lines = 0;
  char last = '\n';
  for (;;) {
    const int n = gzread(in, buffer.data(), static_cast<unsigned>(buffer.size()));
    if (n < 0) {
      int code = 0;
      const std::string why = gzerror(in, &code);
      gzclose(in);
      throw ConfigError(file + ": cannot read the gzip data (" + why + ")");
    }
    if (n == 0) {
      int code = Z_OK;
      const std::string why = gzerror(in, &code);
      if (code != Z_OK) {  // a cut stream ends in Z_BUF_ERROR ("unexpected end of file")
        gzclose(in);
        throw ConfigError(file + ": cannot read the gzip data (" + why + ")");
      }
      break;
    }
    out.write(buffer.data(), n);
    lines += std::count(buffer.data(), buffer.data() + n, '\n');
    last = buffer[static_cast<size_t>(n) - 1];
  }
  gzclose(in);
  if (last != '\n') {
    out.put('\n');  // the next file starts on a line of its own
    ++lines;
  }
  return lines;
}

bool is_gzip(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  unsigned char magic[2] = {0, 0};
  in.read(reinterpret_cast<char*>(magic), 2);
  return in.gcount() == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

bool ends_with(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

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

TempFile::TempFile(const std::string& prefix) {
  std::string name = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  const int fd = mkstemp(name.data());
  if (fd < 0) throw std::runtime_error("cannot create a temporary file in " + name);
  ::close(fd);
  path_ = std::move(name);
}

TempFile::~TempFile() {
  std::error_code ec;
  std::filesystem::remove(path_, ec);
}

TraceText::TraceText(const std::string& path) : path_(path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> files;
  if (fs::is_directory(path, ec)) {
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      const std::string name = entry.path().filename().string();
      if (entry.is_regular_file(ec) &&
          (ends_with(name, ".jsonl") || ends_with(name, ".jsonl.gz"))) {
        files.push_back(entry.path().string());
      }
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) {
      throw ConfigError(path + ": dataset.path is a folder without *.jsonl or *.jsonl.gz files");
    }
  } else if (is_gzip(path)) {
    files.push_back(path);
  } else {
    return;  // plain: read in place
  }
  temp_ = std::make_unique<TempFile>("convoy-trace-text");
  std::ofstream out(temp_->path(), std::ios::binary | std::ios::trunc);
  int64_t line = 1;
  for (const std::string& file : files) {
    segments_.push_back(Segment{file, line});
    line += append_plain(file, out);
  }
  out.flush();
  if (!out) throw std::runtime_error("cannot write the temporary file " + temp_->path());
}

const std::string& TraceText::plain_path() const { return temp_ ? temp_->path() : path_; }

std::string TraceText::locate(const std::string& message) const {
  if (segments_.size() < 2 || message.rfind(path_ + ":", 0) != 0) return message;
  const size_t at = path_.size() + 1;
  const size_t colon = message.find(':', at);
  if (colon == std::string::npos || colon == at) return message;
  const std::string digits = message.substr(at, colon - at);
  if (digits.find_first_not_of("0123456789") != std::string::npos) return message;
  const int64_t line = std::stoll(digits);
  auto it = std::upper_bound(segments_.begin(), segments_.end(), line,
                             [](int64_t l, const Segment& s) { return l < s.first_line; });
  if (it == segments_.begin()) return message;
  --it;
  return it->file + ":" + std::to_string(line - it->first_line + 1) + message.substr(colon);
}

std::unique_ptr<Dataset> index_trace_rows(const std::string& source,
                                          const std::function<int64_t(std::ostream&)>& map,
                                          const Config& config, const Corpus& corpus) {
  const TempFile mapped("convoy-trace-rows");
  int64_t block_tokens = 0;
  {
    std::ofstream out(mapped.path(), std::ios::binary | std::ios::trunc);
    block_tokens = map(out);
    out.flush();
    if (!out) throw std::runtime_error("cannot write the temporary file " + mapped.path());
  }
  auto rows = open_row_file(mapped.path());
  std::ifstream again(mapped.path(), std::ios::binary);
  return index_mooncake_trace(again, source + " (as Mooncake rows)", std::move(rows), config,
                              corpus, block_tokens);
}

}  // namespace convoy::controller
