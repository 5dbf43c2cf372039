// Tokenizer::Impl: what load.cpp reads from tokenizer.json and tokenizer.cpp runs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tokenizer/added.hpp"
#include "tokenizer/bpe.hpp"
#include "tokenizer/pipeline.hpp"
#include "tokenizer/tokenizer.hpp"

namespace convoy::tokenizer {

struct Tokenizer::Impl {
  std::string path;  // the tokenizer.json read
  std::vector<NormalizerStep> normalizers;
  std::vector<PreTokenizerStep> pre_tokenizers;
  std::vector<DecoderStep> decoders;
  std::unique_ptr<Bpe> bpe;
  AddedMatcher raw_added;                // added tokens with normalized: false (found in the input)
  AddedMatcher normalized_added;         // normalized: true (found in each normalized segment)
  std::vector<std::string> id_to_token;  // vocabulary and added tokens by id ("" for a gap)
};

// Reads path (a tokenizer.json). Throws LoadError.
std::unique_ptr<Tokenizer::Impl> load_impl(const std::string& path);
// Reads text (a tokenizer.json's content, parsed in place); name is the file for messages.
std::unique_ptr<Tokenizer::Impl> parse_impl(std::string text, const std::string& name);

}  // namespace convoy::tokenizer
