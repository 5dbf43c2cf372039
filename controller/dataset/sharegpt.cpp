#include "controller/dataset/sharegpt.hpp"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "controller/dataset/jsonl_reader.hpp"

namespace convoy::controller {

namespace {

// Elements nest at most this deep inside the array (a message is 2 levels down): a deeper file
// is refused before the parser's recursion could exhaust the stack.
constexpr int kMaxSharegptDepth = 64;

// The bytes a validated element is read back from, by its range.
class ByteRanges {
 public:
  virtual ~ByteRanges() = default;
  // Exactly `length` bytes at `offset`; throws std::runtime_error when they cannot be read.
  virtual std::string range(uint64_t offset, uint64_t length) const = 0;
};

class FileRanges final : public ByteRanges {
 public:
  explicit FileRanges(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw ConfigError(path + ": cannot open dataset.path: " + std::strerror(errno));
  }
  ~FileRanges() override { ::close(fd_); }
  FileRanges(const FileRanges&) = delete;
  FileRanges& operator=(const FileRanges&) = delete;

  std::string range(uint64_t offset, uint64_t length) const override {
    std::string bytes(length, '\0');
    uint64_t done = 0;
    while (done < length) {
      const ssize_t n =
          ::pread(fd_, bytes.data() + done, length - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        throw std::runtime_error(path_ + ": cannot read back the conversation at byte " +
                                 std::to_string(offset) +
                                 " (was the file changed during the run?)");
      }
      done += static_cast<uint64_t>(n);
    }
    return bytes;
  }

 private:
  std::string path_;
  int fd_ = -1;
};

class TextRanges final : public ByteRanges {
 public:
  explicit TextRanges(std::string text) : text_(std::move(text)) {}
  std::string range(uint64_t offset, uint64_t length) const override {
    if (offset + length > text_.size()) throw std::runtime_error("range past the end of the text");
    return text_.substr(offset, length);
  }

 private:
  std::string text_;
};

// A rapidjson input stream over std::istream that counts lines and, while an element is open,
// keeps a copy of the bytes it hands out (one element at a time: memory stays flat).
class CountingStream {
 public:
  using Ch = char;
  explicit CountingStream(std::istream& in) : in_(in) {
    fill();
    if (end_ - pos_ >= 3 && std::memcmp(buffer_.data() + pos_, "\xEF\xBB\xBF", 3) == 0) pos_ += 3;
  }
  Ch Peek() {
    if (pos_ == end_) fill();
    return pos_ == end_ ? '\0' : buffer_[pos_];
  }
  Ch Take() {
    const Ch c = Peek();
    if (pos_ == end_) return c;
    ++pos_;
    if (capture_ != nullptr) capture_->push_back(c);
    if (c == '\n') ++line_;
    return c;
  }
  size_t Tell() const { return static_cast<size_t>(consumed_ + pos_); }
  Ch* PutBegin() { return nullptr; }
  void Put(Ch) {}
  void Flush() {}
  size_t PutEnd(Ch*) { return 0; }

  int64_t line() const { return line_; }
  void capture(std::string* into) { capture_ = into; }

 private:
  void fill() {
    consumed_ += end_;
    pos_ = end_ = 0;
    buffer_.resize(64u << 10);
    in_.read(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    end_ = static_cast<size_t>(in_.gcount());
  }

  std::istream& in_;
  std::string buffer_;
  size_t pos_ = 0;
  size_t end_ = 0;
  uint64_t consumed_ = 0;  // bytes of the stream before buffer_
  int64_t line_ = 1;
  std::string* capture_ = nullptr;
};

// Adds the counters of one element to `total`.
void add_stats(SharegptStats& total, const SharegptStats& one) {
  total.turns += one.turns;
  total.system_prompts += one.system_prompts;
  total.unpaired += one.unpaired;
  total.empty_pairs += one.empty_pairs;
  total.other_roles += one.other_roles;
  total.cut_turns += one.cut_turns;
  total.positional += one.positional;
}

struct SharegptMessage {
  std::string from;
  std::string value;
};

// The element's messages, each {"from": string, "value": string} (other keys ignored, as vLLM
// and AIPerf ignore them).
std::vector<SharegptMessage> read_messages(const Fields& fields) {
  const auto* list = fields.get("conversations");
  if (list == nullptr) {
    fields.fail("conversations", "required: the messages [{\"from\", \"value\"}, ...]");
  }
  if (!list->IsArray()) fields.fail("conversations", "expected an array of {\"from\", \"value\"}");
  std::vector<SharegptMessage> messages;
  for (rapidjson::SizeType k = 0; k < list->Size(); ++k) {
    const std::string at = "conversations[" + std::to_string(k) + "]";
    if (!(*list)[k].IsObject()) fields.fail(at, "expected an object {\"from\", \"value\"}");
    const Fields message((*list)[k], fields.reader(), at + ".");
    auto from = message.string("from", false);
    if (!from) message.fail("from", "required (human, gpt or system)");
    auto value = message.string("value", false);
    if (!value) message.fail("value", "required: the message's text");
    messages.push_back({std::move(*from), std::move(*value)});
  }
  return messages;
}

bool is_role(const SharegptMessage& m) { return m.from == "human" || m.from == "gpt"; }

// Human -> gpt pairs as AIPerf 0.13.0 pairs them; a leading system message becomes `system`.
std::vector<std::pair<std::string, std::string>> pair_messages(
    std::vector<SharegptMessage>& messages, std::string& system, SharegptStats& stats) {
  std::vector<std::pair<std::string, std::string>> pairs;
  if (std::none_of(messages.begin(), messages.end(), is_role)) {
    // No roles at all: the first two values are one pair (AIPerf's rule for such files).
    if (messages.size() < 2) return pairs;
    ++stats.positional;
    stats.other_roles += messages.size() - 2;
    if (messages[0].value.empty() || messages[1].value.empty()) {
      ++stats.empty_pairs;
      return pairs;
    }
    pairs.emplace_back(std::move(messages[0].value), std::move(messages[1].value));
    return pairs;
  }
  size_t first = 0;
  if (messages[0].from == "system") {
    first = 1;
    if (!messages[0].value.empty()) {
      system = std::move(messages[0].value);
      ++stats.system_prompts;
    }
  }
  std::vector<SharegptMessage*> roles;
  for (size_t k = first; k < messages.size(); ++k) {
    if (is_role(messages[k])) {
      roles.push_back(&messages[k]);
    } else {
      ++stats.other_roles;
    }
  }
  size_t i = 0;
  while (i + 1 < roles.size()) {
    if (roles[i]->from == "human" && roles[i + 1]->from == "gpt") {
      if (roles[i]->value.empty() || roles[i + 1]->value.empty()) {
        ++stats.empty_pairs;
      } else {
        pairs.emplace_back(std::move(roles[i]->value), std::move(roles[i + 1]->value));
      }
      i += 2;
    } else {
      ++stats.unpaired;
      ++i;
    }
  }
  stats.unpaired += roles.size() - i;
  return pairs;
}

// One element's conversation before finish_file_conversation, or nullopt when it has no pair.
// `count_replies`: max_tokens by options.counter (read back); the validating pass uses the
// estimate, which only the wire check reads.
std::optional<proto::Conversation> parse_element(const Fields& fields, const Config& config,
                                                 const FileDatasetOptions& options,
                                                 bool count_replies, SharegptStats& stats) {
  std::vector<SharegptMessage> messages = read_messages(fields);
  proto::Conversation conversation;
  auto pairs = pair_messages(messages, conversation.system_prompt, stats);
  if (pairs.empty()) return std::nullopt;
  if (config.dataset.max_turns && pairs.size() > static_cast<size_t>(*config.dataset.max_turns)) {
    stats.cut_turns += pairs.size() - static_cast<size_t>(*config.dataset.max_turns);
    pairs.resize(static_cast<size_t>(*config.dataset.max_turns));
  }
  stats.turns += pairs.size();
  const bool keep_replies = options.raw || config.dataset.history == HistoryMode::kRecorded;
  for (size_t k = 0; k < pairs.size(); ++k) {
    auto& [human, gpt] = pairs[k];
    proto::Turn turn;
    turn.input_tokens_est = estimate_tokens(human);
    turn.user_text = std::move(human);
    if (config.dataset.output_tokens_set && !options.raw) {
      turn.max_tokens = kUnsetMaxTokens;
    } else {
      const bool tokenizer = count_replies && options.counter;
      turn.max_tokens =
          std::max<int64_t>(1, tokenizer ? options.counter->count(gpt) : estimate_tokens(gpt));
    }
    turn.delay_ms = kUnsetDelayMs;
    if (keep_replies && k + 1 < pairs.size()) turn.recorded_reply = std::move(gpt);
    conversation.turns.push_back(std::move(turn));
  }
  if (auto id = fields.id("id")) conversation.conversation_id = std::move(*id);
  return conversation;
}

class SharegptDataset final : public Dataset {
 public:
  SharegptDataset(std::string source, std::shared_ptr<const ByteRanges> bytes,
                  std::vector<uint64_t> starts, std::vector<uint64_t> lengths, const Config& config,
                  const FileDatasetOptions& options, const Corpus& corpus)
      : source_(std::move(source)),
        bytes_(std::move(bytes)),
        starts_(std::move(starts)),
        lengths_(std::move(lengths)),
        config_(config),
        options_(options),
        corpus_(corpus) {
    options_.stats = nullptr;
  }

  uint64_t size() const override { return starts_.size(); }
  int64_t start_ns(uint64_t /*index*/) const override { return 0; }

  proto::Conversation conversation(uint64_t index) const override {
    const std::string text = bytes_->range(starts_.at(index), lengths_.at(index));
    rapidjson::Document element;
    element.Parse(text.data(), text.size());
    const JsonlReader reader(source_, starts_[index]);  // read-back: errors are runtime_error
    if (element.HasParseError() || !element.IsObject()) reader.fail("not a JSON object");
    SharegptStats ignored;
    auto conversation = parse_element(Fields(element, reader), config_, options_, true, ignored);
    if (!conversation) reader.fail("no human -> gpt pair");
    conversation->index = index;
    if (!options_.raw) finish_file_conversation(*conversation, index, config_, corpus_);
    return std::move(*conversation);
  }

 private:
  std::string source_;
  std::shared_ptr<const ByteRanges> bytes_;
  std::vector<uint64_t> starts_;   // of each kept element's '{'
  std::vector<uint64_t> lengths_;  // of each kept element, '{' to '}'
  Config config_;
  FileDatasetOptions options_;
  const Corpus& corpus_;
};

// The SAX pass: finds each element of the top-level array, validates it as it closes, and keeps
// the byte range of each kept one.
class IndexHandler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, IndexHandler> {
 public:
  IndexHandler(CountingStream& stream, const std::string& source, const Config& config,
               const FileDatasetOptions& options)
      : stream_(stream), source_(source), config_(config), options_(options) {}

  bool Default() { return depth_ > 1 || not_an_element("a value"); }
  bool StartArray() {
    if (depth_ == 1) return not_an_element("an array");
    return open();
  }
  bool EndArray(rapidjson::SizeType) {
    --depth_;
    return true;
  }
  bool StartObject() {
    if (depth_ == 0) fail(stream_.line(), "the file must be a JSON array of conversations");
    if (depth_ == 1) {
      element_start_ = stream_.Tell() - 1;
      element_line_ = stream_.line();
      element_.assign(1, '{');
      stream_.capture(&element_);
    }
    return open();
  }
  bool EndObject(rapidjson::SizeType) {
    if (--depth_ == 1) {
      stream_.capture(nullptr);
      on_element();
    }
    return true;
  }

  [[noreturn]] void fail(int64_t line, const std::string& what) const {
    throw ConfigError(source_ + ":" + std::to_string(line) + ": " + what);
  }

  bool too_deep = false;
  SharegptStats stats;
  std::vector<uint64_t> starts;
  std::vector<uint64_t> lengths;

 private:
  bool open() {
    if (++depth_ > kMaxSharegptDepth + 1) {
      too_deep = true;
      return false;
    }
    return true;
  }
  bool not_an_element(const char* what) {
    if (depth_ == 0) fail(stream_.line(), "the file must be a JSON array of conversations");
    fail(stream_.line(), "element " + std::to_string(stats.elements) + ": expected an object " +
                             "{\"conversations\": [...]}, got " + what);
  }

  void on_element() {
    ++stats.elements;
    rapidjson::Document element;
    element.Parse(element_.data(), element_.size());
    const JsonlReader reader(source_, element_line_, element_start_);
    check_row_text(element, reader);
    const Fields fields(element, reader);
    SharegptStats one;
    const auto conversation = parse_element(fields, config_, options_, false, one);
    add_stats(stats, one);
    if (!conversation) {
      ++stats.skipped;
      if (stats.first_skipped_line == 0) stats.first_skipped_line = element_line_;
      return;
    }
    // The ids are set later: a correlation id is 36 bytes, a default id "conv-<index>" < 32.
    const uint64_t bytes = wire_bytes_bound(*conversation, 36 + 32);
    if (bytes > kMaxConversationWireBytes) {
      fields.fail("conversations", "the conversation would be " + describe_bytes(bytes) +
                                       " on the wire, more than one conversation may be (" +
                                       describe_bytes(kMaxConversationWireBytes) + ")");
    }
    if (stats.conversations++ < file_conversation_limit(config_)) {
      starts.push_back(element_start_);
      lengths.push_back(element_.size());
    }
  }

  CountingStream& stream_;
  const std::string& source_;
  const Config& config_;
  const FileDatasetOptions& options_;
  int depth_ = 0;
  std::string element_;  // the open element's bytes
  uint64_t element_start_ = 0;
  int64_t element_line_ = 0;
};

std::unique_ptr<Dataset> index_sharegpt(std::istream& in, const std::string& source,
                                        std::shared_ptr<const ByteRanges> bytes,
                                        const Config& config, const FileDatasetOptions& options,
                                        const Corpus& corpus) {
  CountingStream stream(in);
  IndexHandler handler(stream, source, config, options);
  rapidjson::Reader parser;
  const auto result = parser.Parse(stream, handler);
  if (handler.too_deep) {
    handler.fail(stream.line(), "nested deeper than " + std::to_string(kMaxSharegptDepth) +
                                    " levels inside an element");
  }
  if (result.IsError()) {
    handler.fail(stream.line(), std::string("invalid JSON: ") +
                                    rapidjson::GetParseError_En(result.Code()) + " (byte " +
                                    std::to_string(result.Offset()) + ")");
  }
  if (options.stats != nullptr) *options.stats = handler.stats;
  if (handler.stats.conversations == 0) {
    throw ConfigError(source + ": no conversation with a human -> gpt pair (" +
                      std::to_string(handler.stats.elements) + " element(s), " +
                      std::to_string(handler.stats.skipped) + " skipped)");
  }
  handler.starts.shrink_to_fit();
  handler.lengths.shrink_to_fit();
  return std::make_unique<SharegptDataset>(source, std::move(bytes), std::move(handler.starts),
                                           std::move(handler.lengths), config, options, corpus);
}

std::string count_line(uint64_t n, const std::string& what) {
  return std::to_string(n) + " " + what;
}

}  // namespace

std::vector<std::string> describe_sharegpt_stats(const SharegptStats& s, const Config& config) {
  std::vector<std::string> lines;
  const bool fixed = config.dataset.output_tokens_set;
  lines.push_back("from=human -> the turn's user text: " + count_line(s.turns, "turns"));
  lines.push_back(std::string("from=gpt -> ") +
                  (fixed ? "max_tokens drawn from dataset.output_tokens (set); the reply"
                         : "max_tokens = the reply's length in tokens; the reply") +
                  " kept for history: recorded: " + count_line(s.turns, "turns"));
  if (s.system_prompts > 0) {
    lines.push_back("from=system (first message) -> the conversation's system prompt: " +
                    count_line(s.system_prompts, "conversations"));
  }
  if (s.positional > 0) {
    lines.push_back("no human/gpt roles -> the first two values as one pair (AIPerf's rule): " +
                    count_line(s.positional, "elements"));
  }
  if (s.skipped > 0) {
    lines.push_back("skipped (no human -> gpt pair with both values non-empty): " +
                    count_line(s.skipped, "elements") + ", the first on line " +
                    std::to_string(s.first_skipped_line));
  }
  if (s.unpaired > 0) {
    lines.push_back(
        "dropped unpaired human/gpt messages (e.g. a conversation starting with gpt), "
        "as AIPerf drops them: " +
        count_line(s.unpaired, "messages"));
  }
  if (s.empty_pairs > 0) {
    lines.push_back("dropped pairs with an empty value: " + count_line(s.empty_pairs, "pairs"));
  }
  if (s.other_roles > 0) {
    lines.push_back("ignored messages from other roles (not human, gpt or a leading system): " +
                    count_line(s.other_roles, "messages"));
  }
  if (s.cut_turns > 0) {
    lines.push_back("dataset.max_turns " + std::to_string(config.dataset.max_turns.value_or(0)) +
                    " -> cut " + count_line(s.cut_turns, "turns"));
  }
  return lines;
}

std::unique_ptr<Dataset> index_sharegpt_text(std::istream& in, const std::string& source,
                                             std::string text, const Config& config,
                                             const FileDatasetOptions& options,
                                             const Corpus& corpus) {
  return index_sharegpt(in, source, std::make_shared<TextRanges>(std::move(text)), config, options,
                        corpus);
}

std::unique_ptr<Dataset> open_sharegpt_dataset(const std::string& path, const Config& config,
                                               const FileDatasetOptions& options,
                                               const Corpus& corpus) {
  auto bytes = std::make_shared<FileRanges>(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open dataset.path");
  return index_sharegpt(in, path, std::move(bytes), config, options, corpus);
}

std::vector<proto::Conversation> parse_sharegpt_dataset(std::istream& in, const std::string& source,
                                                        const Config& config,
                                                        const FileDatasetOptions& options,
                                                        const Corpus& corpus) {
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream again(text);
  return materialize(*index_sharegpt_text(again, source, std::move(text), config, options, corpus));
}

}  // namespace convoy::controller
