#include "tokenizer/tokenizer.hpp"

namespace convoy::tokenizer {

struct Tokenizer::Impl {};

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;

std::unique_ptr<Tokenizer> Tokenizer::load(const std::string& path) {
  throw LoadError(path + ": not implemented yet");
}
std::vector<std::uint32_t> Tokenizer::encode(std::string_view /*text*/) const { return {}; }
std::size_t Tokenizer::count(std::string_view text) const { return encode(text).size(); }
std::string Tokenizer::decode(std::span<const std::uint32_t> /*ids*/) const { return {}; }
std::size_t Tokenizer::vocab_size() const { return 0; }
std::string_view Tokenizer::model_type() const { return "BPE"; }

}  // namespace convoy::tokenizer
