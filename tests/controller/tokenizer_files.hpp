// The real tokenizer.json files the exact-token tests use: installed from npm by
// scripts/tokenizers into the cache folder (never the checkout).
#pragma once

#include <doctest/doctest.h>

#include <cstdio>
#include <memory>
#include <string>

namespace convoy::test {

// The models/ folder of tokenizer `name` (qwen3, llama3_1, deepseek_v3, gptoss, gemma3, llama2).
// Fails the test when scripts/tokenizers cannot install it (npm unreachable).
inline std::string tokenizer_folder(const std::string& name) {
  const std::string command = std::string(CONVOY_SOURCE_DIR) + "/scripts/tokenizers " + name;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), &::pclose);
  REQUIRE(pipe);
  std::string out;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe.get()) != nullptr) out += buffer;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  REQUIRE_MESSAGE(!out.empty(), command, " printed no folder");
  return out;
}

inline const char* const kTokenizerNames[] = {"qwen3",  "llama3_1", "deepseek_v3",
                                              "gptoss", "gemma3",   "llama2"};

}  // namespace convoy::test
