// dataset.text: random_tokens: every synthetic text holds exactly its drawn tokens by the six real
// tokenizers (encoded again), words are drawn from the vocabulary, and two conversations share
// no prefix longer than the tag's first tokens.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/dataset/dataset.hpp"
#include "controller/dataset/random_tokens.hpp"
#include "controller/dataset/token_plan.hpp"
#include "controller/tokenizer_files.hpp"
#include "dataset_test_util.hpp"
#include "test_util.hpp"
#include "tokenizer/tokenizer.hpp"

namespace convoy::controller {
namespace {

Config random_config(const std::string& tokenizer, const std::string& extra) {
  return parse_config("dataset:\n  tokenizer: " + tokenizer + "\n  text: random_tokens\n" + extra,
                      "", {});
}

size_t common_prefix(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  const auto [ia, ib] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return static_cast<size_t>(ia - a.begin());
}

class SpacedWordCounter final : public TokenCounter {
 public:
  int64_t count(std::string_view text) const override {
    std::istringstream words{std::string(text)};
    int64_t n = 0;
    for (std::string w; words >> w;) ++n;
    return n;
  }
  std::string source() const override { return "a word counter"; }
};

}  // namespace

TEST_CASE("dataset.text random_tokens: every text holds exactly its draw, by six tokenizers") {
  for (const char* name : test::kTokenizerNames) {
    const std::string folder = test::tokenizer_folder(name);
    INFO(name);
    const auto t = tokenizer::Tokenizer::load(folder);
    const Config config =
        random_config(folder,
                      "  conversations: 60\n  input_tokens: {mean: 300, stddev: 150, min: 20}\n"
                      "  shared_prefix_tokens: 64\n  history: recorded\n"
                      "  output_tokens: {mean: 40, stddev: 30, min: 1}\n"
                      "  prefixes: {pool: 4, tokens: 32, per_conversation: 2}\n"
                      "  subagents: {probability: 0.3}\n");
    const auto plan = local_token_plan(config);
    REQUIRE(plan->random);
    MESSAGE(std::string(name) << ": " << plan->random->words() << " single-token words of "
                              << t->vocab_size() << " ids");
    const auto dataset = open_dataset(config, plan);
    for (uint64_t i = 0; i < dataset->size(); ++i) {
      const proto::Conversation c = dataset->conversation(i);
      CHECK(static_cast<int64_t>(t->count(c.system_prompt)) == 64 + 2 * 32);
      auto check_turns = [&](const std::vector<proto::Turn>& turns) {
        for (size_t k = 0; k < turns.size(); ++k) {
          INFO("conversation " << i << " turn " << k << ": " << turns[k].user_text.substr(0, 80));
          CHECK(static_cast<int64_t>(t->count(turns[k].user_text)) == turns[k].input_tokens_est);
          if (!turns[k].recorded_reply.empty()) {
            CHECK(static_cast<int64_t>(t->count(turns[k].recorded_reply)) == turns[k].max_tokens);
          }
        }
      };
      check_turns(c.turns);
      for (const auto& child : c.subagents) check_turns(child.turns);
    }
  }
}

TEST_CASE(
    "dataset.text random_tokens: conversations share no prefix, the same seed the same text") {
  const std::string folder = test::tokenizer_folder("qwen3");
  const auto t = tokenizer::Tokenizer::load(folder);
  const Config config = random_config(folder,
                                      "  conversations: 40\n  turns: {mean: 2, stddev: 0}\n"
                                      "  input_tokens: {mean: 200, stddev: 0}\n");
  const auto plan = local_token_plan(config);
  const auto dataset = open_dataset(config, plan);
  std::vector<std::vector<uint32_t>> first;
  std::vector<std::vector<uint32_t>> second;
  std::set<std::string> words;
  for (uint64_t i = 0; i < dataset->size(); ++i) {
    const proto::Conversation c = dataset->conversation(i);
    CHECK(testing::packed(c) == testing::packed(dataset->conversation(i)));
    first.push_back(t->encode(c.turns[0].user_text));
    second.push_back(t->encode(c.turns[1].user_text));
    std::istringstream in(c.turns[0].user_text + " " + c.turns[1].user_text);
    for (std::string w; in >> w;) words.insert(w);
  }
  size_t longest = 0;
  for (size_t a = 0; a < first.size(); ++a) {
    for (size_t b = a + 1; b < first.size(); ++b) {
      longest = std::max(
          {longest, common_prefix(first[a], first[b]), common_prefix(second[a], second[b])});
    }
  }
  MESSAGE("longest prefix two conversations share: " << longest << " tokens");
  CHECK(longest <= 3);  // "[c" and a digit of the tag at most
  // Uniform draws: n draws from W words give W (1 - e^(-n/W)) distinct ones on average.
  const auto w = static_cast<double>(plan->random->words());
  const double expected = w * (1 - std::exp(-16000.0 / w));
  MESSAGE(words.size() << " distinct words in 16,000 draws from " << w << ", expected "
                       << expected);
  CHECK(static_cast<double>(words.size()) > 0.97 * expected);
}

TEST_CASE("random_tokens draws only single-token words and refuses a vocabulary without any") {
  const SpacedWordCounter counter;
  const std::vector<std::string> vocab = {" the", "<|end|>", " a1", "x", " Hello", "  b", " cat"};
  const RandomTokens random(counter, static_cast<uint32_t>(vocab.size()),
                            [&](uint32_t id) { return vocab[id]; });
  CHECK(random.words() == 3);
  std::string text;
  random.append(text, 7, 500, false);
  CHECK(text.starts_with(' '));  // this counter counts a leading space as nothing
  CHECK(counter.count(text) == 500);
  std::istringstream in(text);
  for (std::string w; in >> w;) CHECK((w == "the" || w == "Hello" || w == "cat"));
  CHECK_THROWS_AS(random.append(text, 7, -1, true), ExactTokensError);
  const std::vector<std::string> none = {"<s>", "1", " 2"};
  CHECK(test::error_message<ConfigError>(
            [&] { RandomTokens(counter, 3, [&](uint32_t id) { return none[id]; }); }) ==
        "dataset.text: random_tokens: a word counter has no token that is a space and "
        "letters after other text and one token opening a text");
}

TEST_CASE("random_tokens opens a text without its space where the tokenizer adds one") {
  // As Llama 2's Metaspace normalizer: a space opening a text is a token of its own.
  struct LeadingSpaceCounter final : TokenCounter {
    int64_t count(std::string_view text) const override {
      const SpacedWordCounter words;
      return words.count(text) + (text.starts_with(' ') ? 1 : 0);
    }
    std::string source() const override { return "a leading-space counter"; }
  };
  const LeadingSpaceCounter counter;
  const std::vector<std::string> vocab = {" the", " Hello", " cat"};
  const RandomTokens random(counter, 3, [&](uint32_t id) { return vocab[id]; });
  CHECK(random.openers() == 3);
  std::string opening;
  random.append(opening, 3, 40, false);
  CHECK_FALSE(opening.starts_with(' '));
  CHECK(counter.count(opening) == 40);
  std::string after = "x";
  random.append(after, 4, 40, true);
  CHECK(counter.count(after) == 41);
}

}  // namespace convoy::controller
