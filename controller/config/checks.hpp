// Checks of strings and files a configuration names (so a bad path fails at load, not mid-run),
// kept out of config.cpp: each returns "" when the value is fine, else the reason, for
// Section::check to report at the key with FILE:LINE.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <vector>

#include "controller/config/config.hpp"
#include "controller/config/yaml_util.hpp"

namespace convoy::config_detail {

// workers.listen / results_listen: tcp://HOST:PORT or ipc://PATH.
bool is_endpoint(std::string_view e);
// Why ZeroMQ could not bind the (well-formed) endpoint `e`, or "" when it can try.
std::string bind_problem(std::string_view e);
// output.metrics_listen: why HOST:PORT cannot be served, or nullopt.
std::optional<std::string> listen_address_problem(const std::string& e);

// A URL with a space or a control character passes curl's parser on some versions and then
// fails every request; refused at load, saying which character and where.
std::string url_problem(std::string_view url);

// Control characters (a newline, a tab, ...) in a name that goes into console lines, CSV and
// folder names.
std::string control_char_problem(std::string_view text);

// The top-level name, used as a folder name: no '/', '\', control characters, and not "." or
// "..", which name folders that exist already.
std::string folder_name_problem(std::string_view name);

// workers.curve_keys (an existing folder): the files `convoy keygen` writes that this run reads:
// controller.key and authorized_workers, and with local workers controller.pub and worker-0.key.
// Each must exist and parse; the reason names the file. Reads the files, nothing else.
std::string curve_keys_problem(const std::string& dir, int local_workers);

// Keys given under `load` that the chosen profile never reads: load.rate, load.arrival and
// load.burstiness outside rate mode (or in a stage list, sweep or search that sets its own),
// load.burstiness with an arrival other than gamma, load.mode in a sweep or search that varies
// the other thing, a rate stage's burstiness without gamma arrival. A default value, or one every
// rate stage has anyway, is not warned about: the resolved config (every key written) loads
// quietly. Silence would let a user
// believe the value shaped the run. Appends one warning per key, "FILE:LINE: load.rate: ignored:
// why" (or "--set ...: ..."), to `warnings`; `load` is the resolved section of `src`.
void warn_ignored_load_keys(const yaml_util::Source& src, const LoadConfig& load,
                            std::vector<std::string>& warnings);

// dataset.turns, dataset.input_tokens and dataset.shared_prefix_tokens given (not at their
// default) with a jsonl or mooncake dataset, whose rows say every turn: one warning each, as for
// the load keys above.
void warn_ignored_dataset_keys(const yaml_util::Source& src, const DatasetConfig& dataset,
                               std::vector<std::string>& warnings);

// output.metrics_linger_s above 0 without output.metrics_listen: there is no live /metrics to
// keep up, so the run would not wait; one warning, as for the load keys above.
void warn_ignored_output_keys(const yaml_util::Source& src, const OutputConfig& output,
                              std::vector<std::string>& warnings);

}  // namespace convoy::config_detail
