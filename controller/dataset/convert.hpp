// `convoy dataset convert IN OUT`: ShareGPT, AIPerf single_turn and multi_turn -> convoy's own
// JSONL (docs/datasets.md "jsonl"), naming every mapping it applied.
#pragma once

#include <optional>
#include <ostream>
#include <string>

namespace convoy::controller {

// The format of the file at `path` by its first bytes: "sharegpt" (a JSON array),
// "aiperf_multi_turn" (a first row with "turns"), "aiperf_single_turn" (a first row with "text"
// or "texts"). `why` says what decided it. Throws ConfigError when it cannot tell (a Mooncake
// trace, convoy's own JSONL, anything else), naming --from.
std::string detect_dataset_format(const std::string& path, std::string& why);

// Reads `in_path` as `from` (detected when empty; the report says so), validating it whole as
// dataset.type `from` does (ConfigError "FILE:LINE: key: what is wrong": nothing written), and
// writes one convoy JSONL row per conversation to `out_path`: {"conversation_id", "turns":
// [{"text" | "messages", "max_tokens", "delay_ms", "extra", "reply"}]}. `report` gets the format,
// one line per mapping applied with its count, and what was written. Returns the number of
// conversations written. Throws std::runtime_error when `out_path` cannot be written.
uint64_t convert_dataset(const std::string& in_path, const std::string& out_path,
                         const std::optional<std::string>& from, std::ostream& report);

}  // namespace convoy::controller
