// The encode pipeline of Hugging Face `tokenizers` (tokenizer/mod.rs, added_vocabulary.rs):
// added tokens found in the raw text; each remaining segment normalized, then searched for
// normalized added tokens; each text piece pre-tokenized; each pre-token encoded by the model.
#include "tokenizer/tokenizer.hpp"

#include <filesystem>

#include "tokenizer/impl.hpp"
#include "tokenizer/unicode.hpp"

namespace convoy::tokenizer {

namespace {

void encode_text(const Tokenizer::Impl& impl, std::string_view text, bool first_segment,
                 std::vector<std::uint32_t>& out) {
  Pieces pieces;
  pieces.arena.assign(text);
  pieces.spans.emplace_back(0, text.size());
  pre_tokenize(impl.pre_tokenizers, first_segment, pieces);
  for (std::size_t k = 0; k < pieces.spans.size(); ++k)
    impl.bpe->tokenize_long(pieces.view(k), out);
}

void encode_segment(const Tokenizer::Impl& impl, std::string_view raw, bool first_segment,
                    std::vector<std::uint32_t>& out) {
  std::string norm(raw);
  normalize(impl.normalizers, norm);
  if (norm.empty()) return;
  if (impl.normalized_added.empty()) {
    encode_text(impl, norm, first_segment, out);
    return;
  }
  std::vector<Segment> segments;
  impl.normalized_added.split(norm, segments);
  for (const Segment& s : segments) {
    if (s.id != kNoId) {
      out.push_back(s.id);
    } else {
      encode_text(impl, std::string_view(norm).substr(s.begin, s.end - s.begin),
                  first_segment && s.begin == 0, out);
    }
  }
}

}  // namespace

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;

std::unique_ptr<Tokenizer> Tokenizer::load(const std::string& path) {
  std::error_code ec;
  std::string file = path;
  if (std::filesystem::is_directory(path, ec)) {
    file = (std::filesystem::path(path) / "tokenizer.json").string();
    if (!std::filesystem::exists(file, ec)) {
      throw LoadError(path + ": a folder without tokenizer.json");
    }
  }
  return std::unique_ptr<Tokenizer>(new Tokenizer(load_impl(file)));
}

std::unique_ptr<Tokenizer> Tokenizer::load_json(std::string json, const std::string& name) {
  return std::unique_ptr<Tokenizer>(new Tokenizer(parse_impl(std::move(json), name)));
}

std::vector<std::uint32_t> Tokenizer::encode(std::string_view text) const {
  std::string repaired;
  if (!utf8_valid(text)) {
    repaired = utf8_repair(text);
    text = repaired;
  }
  std::vector<std::uint32_t> out;
  out.reserve(text.size() / 3 + 4);
  if (impl_->raw_added.empty()) {
    encode_segment(*impl_, text, true, out);
    return out;
  }
  std::vector<Segment> segments;
  impl_->raw_added.split(text, segments);
  for (const Segment& s : segments) {
    if (s.id != kNoId) {
      out.push_back(s.id);
    } else {
      encode_segment(*impl_, text.substr(s.begin, s.end - s.begin), s.begin == 0, out);
    }
  }
  return out;
}

std::size_t Tokenizer::count(std::string_view text) const { return encode(text).size(); }

std::string Tokenizer::decode(std::span<const std::uint32_t> ids) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (const std::uint32_t id : ids) {
    if (id < impl_->id_to_token.size() && !impl_->id_to_token[id].empty()) {
      tokens.push_back(impl_->id_to_token[id]);
    }
  }
  return decode_tokens(impl_->decoders, std::move(tokens));
}

std::size_t Tokenizer::vocab_size() const { return impl_->id_to_token.size(); }

std::string_view Tokenizer::model_type() const { return "BPE"; }

}  // namespace convoy::tokenizer
