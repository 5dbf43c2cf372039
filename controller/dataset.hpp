// The controller's dataset layer: Config -> conversations (DESIGN.md §2 dataset, §5; the file
// formats and the token estimate are in docs/datasets.md).
#pragma once

#include <string>
#include <vector>

#include "common/config.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

// Every conversation of the configured dataset, index i at position i. Deterministic: the same
// config gives the same conversations (byte for byte), whatever runs them. Throws ConfigError
// ("FILE:LINE: what is wrong") for a malformed dataset; nothing has been sent then.
//
// For large synthetic runs generate lazily instead: make_synthetic_conversation(config, i)
// (controller/synthetic.hpp) is element i of this list.
std::vector<proto::Conversation> load_dataset(const Config& config);

// dataset.path as it opens: as given when that exists (absolute, or relative to the current
// directory), else relative to the folder of the config file. Throws ConfigError when unset.
std::string resolve_dataset_path(const Config& config);

}  // namespace convoy::controller
