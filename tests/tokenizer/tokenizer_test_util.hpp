// Helpers of the tokenizer tests: the real tokenizer files and the reference (Hugging Face
// `tokenizers`) that scripts/tokenizers installs into the cache folder, and the reference ids.
#pragma once

#include <doctest/doctest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace convoy::test {

// Runs cmd under /bin/sh; returns its exit status and stdout (stderr is passed through).
inline int run_capture(const std::string& cmd, std::string& out) {
  out.clear();
  FILE* pipe = ::popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  const int status = ::pclose(pipe);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

inline std::string quoted(const std::string& s) {
  std::string q = "'";
  for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// scripts/tokenizers ARG's output (a folder, or the reference's python), or "" when it could
// not install (npm or PyPI unreachable): then *why holds the line to print.
inline std::string tokenizers_script(const std::string& arg, std::string* why) {
  std::string out;
  const int rc = run_capture(std::string(CONVOY_SOURCE_DIR) + "/scripts/tokenizers " + arg, out);
  if (rc != 0) {
    *why = "scripts/tokenizers " + arg + " failed (exit " + std::to_string(rc) +
           "; npm or PyPI unreachable?)";
    return "";
  }
  return out;
}

// The contents of tokenizer.json's added_tokens.
inline std::vector<std::string> added_token_contents(const std::filesystem::path& json) {
  std::ifstream in(json, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  rapidjson::Document doc;
  doc.Parse(ss.str().c_str());
  REQUIRE(doc.IsObject());
  std::vector<std::string> out;
  for (const auto& a : doc["added_tokens"].GetArray()) {
    out.emplace_back(a["content"].GetString(), a["content"].GetStringLength());
  }
  return out;
}

inline void write_jsonl(const std::filesystem::path& path, const std::vector<std::string>& docs) {
  std::ofstream out(path, std::ios::binary);
  for (const std::string& d : docs) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    w.String(d.data(), static_cast<rapidjson::SizeType>(d.size()));
    out << buf.GetString() << '\n';
  }
  REQUIRE(out.good());
}

// One string per line of path, each a JSON string.
inline std::vector<std::string> read_jsonl_strings(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    rapidjson::Document d;
    d.Parse(line.c_str(), line.size());
    REQUIRE(d.IsString());
    out.emplace_back(d.GetString(), d.GetStringLength());
  }
  return out;
}

// One vector of ids per line of path (scripts/tokenizer_ids.py's output).
inline std::vector<std::vector<std::uint32_t>> read_id_lines(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::vector<std::uint32_t>> out;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::vector<std::uint32_t> ids;
    std::uint32_t id = 0;
    while (ls >> id) ids.push_back(id);
    out.push_back(std::move(ids));
  }
  return out;
}

}  // namespace convoy::test
