// target.models: several models or LoRA adapters in one run. Reading the list (with its
// FILE:LINE: key errors) and the one draw that gives each conversation its model, shared by the
// controller's assignment and its report so both name the same model for a conversation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "controller/config/yaml_util.hpp"
#include "proto/messages.hpp"

namespace convoy {

// target.models from the `target` section: a non-empty list of {name, weight} with unique
// names and weights > 0, exclusive with an explicit target.model (which then holds the first
// name, so everything that reads target.model sees a served one). Absent or null: unchanged.
// Throws ConfigError naming the item's key.
void read_target_models(const yaml_util::Section& target, proto::TargetSettings& t);

// Which entry of `models` conversation `conversation_index` uses: a draw by weight from a
// generator seeded by (seed, conversation index) only, so a conversation gets the same model
// whichever worker runs it and however many there are, and every turn and sub-agent of the
// family (one Conversation) keeps it. 0 for a list of one or none.
std::size_t model_index_for(const std::vector<proto::ModelWeight>& models, uint64_t seed,
                            uint64_t conversation_index);

// The model conversation `conversation_index` names: target.model without target.models.
const std::string& model_for(const proto::TargetSettings& t, uint64_t seed,
                             uint64_t conversation_index);

}  // namespace convoy
