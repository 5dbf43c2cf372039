// The controller's dataset layer: Config -> conversations (the dataset.* keys; the file
// formats and the token estimate are in docs/datasets.md).
//
// Memory does not grow with the dataset's text: synthetic conversations are generated when they
// are asked for, and file datasets are validated in one streaming pass that keeps only the byte
// offset of each row, then read back row by row.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/dataset/exact_text.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

// An indexed, immutable list of conversations. conversation(i) is a pure function of the config
// and i (and the file's bytes): the same config gives the same conversations, byte for byte, in
// any order and whatever runs them.
class Dataset {
 public:
  virtual ~Dataset() = default;

  // open_dataset never returns an empty dataset.
  virtual uint64_t size() const = 0;
  // index < size(). Generates (synthetic) or reads back (files) conversation `index`, with its
  // ids, draws and text. May throw std::runtime_error when a file changed under the run.
  virtual proto::Conversation conversation(uint64_t index) const = 0;
  // load.mode trace: the intended start of conversation `index`, in ns after the earliest one;
  // 0 in other modes. Cheap (no text is built).
  virtual int64_t start_ns(uint64_t index) const = 0;
};

// Opens and validates the configured dataset. Throws ConfigError ("FILE:LINE: key: what is
// wrong") for a malformed dataset or one that has no conversations, or whose conversations could
// not cross the wire (proto::kMaxStringBytes per string, kMaxConversationWireBytes in all);
// nothing has been sent then.
//
// dataset.tokenizer: `plan` when given (the run learns it from the target for tokenizer: server
// and count_chat_template), else the local tokenizer.json is loaded here (ConfigError when it is
// not a tokenizer convoy reads); with tokenizer: server and no plan, the dataset is opened under
// the estimate (convoy validate sends nothing). Synthetic text is then exact; file rows have
// their ISL counted by a local tokenizer.
std::unique_ptr<Dataset> open_dataset(const Config& config,
                                      std::shared_ptr<const TokenPlan> plan = nullptr);

// Every conversation of `dataset`, index i at position i (for small datasets and tests).
std::vector<proto::Conversation> materialize(const Dataset& dataset);

// materialize(*open_dataset(config)).
std::vector<proto::Conversation> load_dataset(const Config& config);

// dataset.path as it opens: as given when that exists (absolute, or relative to the current
// directory), else relative to the folder of the config file. Throws ConfigError when unset.
std::string resolve_dataset_path(const Config& config);

}  // namespace convoy::controller
