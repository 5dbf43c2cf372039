#include "controller/config/checks.hpp"

#include <arpa/inet.h>
#include <net/if.h>

#include <array>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "common/curve.hpp"
#include "controller/config/yaml_util.hpp"

namespace convoy::config_detail {

namespace {

std::string hex_byte(unsigned char c) {
  static constexpr std::array<char, 17> kHex = {"0123456789abcdef"};
  return std::string("0x") + kHex[c >> 4] + kHex[c & 0xf];
}

// The first space or control character in `text`: "a space at offset 4", "a control character
// (0x0a, a line break) at offset 9"; "" when none.
std::string first_bad_char(std::string_view text, bool space_too) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::string at = " at offset " + std::to_string(i);
    if (c == ' ' && space_too) return "a space" + at;
    if (c < 0x20 || c == 0x7f) {
      const char* what = c == '\n' || c == '\r' ? ", a line break" : c == '\t' ? ", a tab" : "";
      return "a control character (" + hex_byte(c) + what + ")" + at;
    }
  }
  return {};
}

// Why output.metrics_listen refuses an IPv6 address: prometheus-cpp serves /metrics with
// civetweb, and Debian's libcivetweb is built without USE_IPV6 (mg_check_feature(8) is 0,
// `civetweb -I` lists no IPv6; its port parser rejects "[::1]:PORT"), so the run could only fail
// at start. tests/controller/live/live_ipv6_test.cpp fails once the linked civetweb can serve IPv6.
std::string ipv6_listen_refusal(const std::string& host, const std::string& port) {
  const std::string ipv4 = host == "[::1]"  ? "127.0.0.1:" + port
                           : host == "[::]" ? "*:" + port
                                            : "an IPv4 address of this host with port " + port;
  return "'" + host + "' is IPv6, which cannot be served: the HTTP server prometheus-cpp uses " +
         "(civetweb) is built without IPv6 here; listen on IPv4 instead, e.g. " + ipv4 +
         " (127.0.0.1: this host only, *: every interface)";
}

// The value at `key` of a mapping; an undefined node otherwise. (A node yaml-cpp returns for a
// missing key throws on every question but IsDefined.)
YAML::Node child_of(const YAML::Node& map, const char* key) {
  if (!map.IsDefined() || !map.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node n = map[key];
  return n.IsDefined() ? n : YAML::Node(YAML::NodeType::Undefined);
}

// A key given (present and not null) in the mapping `map`.
bool given_in(const YAML::Node& map, const char* key) {
  const YAML::Node n = child_of(map, key);
  return n.IsDefined() && !n.IsNull();
}

// Whether the profile reads load.rate, load.arrival and load.burstiness, and why not.
struct LoadKeyReaders {
  bool rate = false;
  bool arrival = false;
  bool burstiness = false;  // read only where arrivals are gamma
  std::string why;          // why an unread key is unread
  std::string burst_why;    // why burstiness is unread although arrival is read
};

LoadKeyReaders stage_list_readers(const YAML::Node& load, const LoadConfig& l) {
  LoadKeyReaders r;
  const YAML::Node list = child_of(load, "stages");
  for (std::size_t i = 0; i < l.stages.size(); ++i) {
    const StageConfig& st = l.stages[i];
    if (st.mode != LoadMode::kRate) continue;
    const YAML::Node node = list.IsSequence() && i < list.size() ? list[i] : YAML::Node();
    r.rate = r.rate || !given_in(node, "rate");
    r.arrival = r.arrival || !given_in(node, "arrival");
    r.burstiness = r.burstiness || (!given_in(node, "burstiness") && st.arrival == Arrival::kGamma);
  }
  r.why =
      "no stage of load.stages takes it from load (every rate stage sets its own, or no stage "
      "is mode rate)";
  r.burst_why = "it shapes gamma arrivals, and no rate stage that takes it has arrival gamma";
  return r;
}

LoadKeyReaders load_key_readers(const YAML::Node& load, const LoadConfig& l) {
  if (l.profile == ProfileKind::kStages) return stage_list_readers(load, l);
  LoadKeyReaders r;
  if (l.profile == ProfileKind::kSingle) {
    // Users mode reads load.rate (the users' rate: their gap) but no arrival process; a warmup
    // by rate takes load.arrival's.
    r.rate = l.mode == LoadMode::kRate || l.mode == LoadMode::kUsers;
    r.arrival = l.mode == LoadMode::kRate || (l.warmup && l.warmup->rate);
    r.why = l.mode == LoadMode::kUsers
                ? "load.mode is users: each user waits a fixed gap, load.concurrency / load.rate"
            : l.mode == LoadMode::kTrace
                ? "load.mode is trace: the dataset's timestamps say when conversations start"
                : "load.mode is concurrency: a closed loop of load.concurrency conversations in "
                  "flight (set load.mode: rate to offer load.rate conversations/s)";
  } else {
    const std::string key = l.profile == ProfileKind::kSweep ? "load.sweep" : "load.search";
    const LoadMode vary = l.sweep    ? l.sweep->vary
                          : l.search ? l.search->vary
                                     : LoadMode::kConcurrency;
    r.arrival = vary == LoadMode::kRate;
    r.why = vary == LoadMode::kRate ? key + " gives every step its own rate"
                                    : key + " varies concurrency: every step is a closed loop";
  }
  r.burstiness = r.arrival && l.arrival == Arrival::kGamma;
  r.burst_why =
      std::string("it shapes gamma arrivals, and load.arrival is ") + to_string(l.arrival);
  return r;
}

// load.mode where no step takes it: a sweep or search of the other kind; "" otherwise. (Stages
// that each name their own mode leave it unread too, but each names its mode in plain sight.)
std::string ignored_mode_reason(const LoadConfig& l) {
  std::optional<LoadMode> vary;
  if (l.sweep) vary = l.sweep->vary;
  if (l.search) vary = l.search->vary;
  if (!vary || *vary == l.mode) return {};
  return std::string(l.sweep ? "load.sweep" : "load.search") + " varies " + to_string(*vary) +
         ": every step is mode " + to_string(*vary);
}

// Whether every rate stage (at least one) has `same` as the top-level value: then the unread
// top-level key misleads no one. This is how `convoy validate` prints stages (each resolved,
// every key written), and that text loaded again must stay quiet.
template <class Same>
bool every_rate_stage(const LoadConfig& l, Same same) {
  bool any = false;
  for (const StageConfig& st : l.stages) {
    if (st.mode != LoadMode::kRate) continue;
    any = true;
    if (!same(st)) return false;
  }
  return any;
}

bool same_distribution(const Distribution& a, const Distribution& b) {
  return a.mean == b.mean && a.stddev == b.stddev && a.min == b.min && a.max == b.max &&
         a.mix == b.mix;
}
}  // namespace

bool is_endpoint(std::string_view e) {
  if (e.rfind("ipc://", 0) == 0) return e.size() > 6;
  if (e.rfind("tcp://", 0) != 0) return false;
  const std::string_view hostport = e.substr(6);
  const std::size_t colon = hostport.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  const std::string_view port = hostport.substr(colon + 1);
  if (port == "*") return true;
  auto p = yaml_util::parse_uint(port);
  return p && *p <= 65535 && !port.empty() && port.front() != '+';
}

// Why ZeroMQ could not bind the (well-formed) endpoint `e`, or "" when it can try: bind takes an
// IP address, * or a network interface name, never a host name to resolve.
std::string bind_problem(std::string_view e) {
  if (e.rfind("tcp://", 0) != 0) return "";
  const std::string_view hostport = e.substr(6);
  const std::string host(hostport.substr(0, hostport.rfind(':')));
  if (host == "*") return "";
  unsigned char addr[16];
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    if (::inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), addr) == 1) return "";
    return "'" + host + "' is not an IPv6 address";
  }
  if (::inet_pton(AF_INET, host.c_str(), addr) == 1) return "";
  if (::if_nametoindex(host.c_str()) != 0) return "";  // an interface name (eth0, lo)
  std::string hint = host == "localhost" ? "tcp://127.0.0.1:PORT" : "tcp://0.0.0.0:PORT";
  return "cannot bind '" + host + "': a listen address must be an IP address, * or an " +
         "interface name, not a host name (for example " + hint + ")";
}

// output.metrics_listen: HOST:PORT with HOST an IPv4 address or *, PORT 0-65535 ([IPv6] is
// refused, saying why).
std::optional<std::string> listen_address_problem(const std::string& e) {
  const std::string example = " (for example 127.0.0.1:9464)";
  const std::size_t colon = e.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == e.size()) {
    return "expected HOST:PORT, got '" + e + "'" + example;
  }
  const std::string host = e.substr(0, colon);
  const std::string port = e.substr(colon + 1);
  if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 ||
      std::stoi(port) > 65535) {
    return "'" + port + "' is not a port (0-65535; 0 takes a free one)";
  }
  unsigned char addr[16];
  if (host == "*") return std::nullopt;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    if (::inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), addr) == 1) {
      return ipv6_listen_refusal(host, port);
    }
    return "'" + host + "' is not an IPv6 address" + example;
  }
  if (::inet_pton(AF_INET, host.c_str(), addr) == 1) return std::nullopt;
  return "'" + host + "' is not an IP address: listen on an address, not a host name" + example;
}

std::string url_problem(std::string_view url) {
  const std::string bad = first_bad_char(url, true);
  if (bad.empty()) return {};
  return "the URL holds " + bad +
         "; a URL cannot carry it (percent-encode it, e.g. %20 for a space)";
}

std::string control_char_problem(std::string_view text) {
  const std::string bad = first_bad_char(text, false);
  if (bad.empty()) return {};
  return "holds " + bad + "; names appear in console lines, CSV and folder names";
}

std::string folder_name_problem(std::string_view name) {
  if (name == "." || name == "..") {
    return "'" + std::string(name) + "' names an existing folder (" +
           (name == "." ? "this one" : "the parent") +
           "), not a run: the output folder is named after it";
  }
  if (name.find_first_of("/\\") != std::string_view::npos) {
    return "is used in a folder name and must not contain '/' or '\\'";
  }
  return control_char_problem(name);
}

std::string curve_keys_problem(const std::string& dir, int local_workers) {
  namespace fs = std::filesystem;
  const std::string hint = " (write the folder with `convoy keygen " + dir + "`)";
  auto missing = [&](const fs::path& file) -> std::string {
    std::error_code ec;
    if (fs::is_regular_file(file, ec)) return {};
    return "key file '" + file.string() + "' does not exist" + hint;
  };
  const fs::path base(dir);
  try {
    const fs::path controller = base / "controller.key";
    if (auto why = missing(controller); !why.empty()) return why;
    if (read_curve_key_file(controller.string()).secret_z85.empty()) {
      return "key file '" + controller.string() + "' holds no secret key" + hint;
    }
    const fs::path authorized = base / "authorized_workers";
    if (auto why = missing(authorized); !why.empty()) return why;
    read_authorized_keys(authorized.string());
    if (local_workers > 0) {
      for (const char* name : {"controller.pub", "worker-0.key"}) {
        if (auto why = missing(base / name); !why.empty()) return why;
        read_curve_key_file((base / name).string());
      }
    }
  } catch (const std::runtime_error& e) {  // names the file and what is wrong in it
    return e.what();
  }
  return {};
}

void warn_ignored_load_keys(const yaml_util::Source& src, const LoadConfig& load,
                            std::vector<std::string>& warnings) {
  const YAML::Node node = child_of(src.root(), "load");
  if (!node.IsMap()) return;
  auto warn = [&](const std::string& path, const std::string& why) {
    warnings.push_back(src.message(path, path, "ignored: " + why));
  };
  // A default value is no belief to correct: the resolved config (`convoy validate`, summary.json)
  // writes every key, and loading it again must stay quiet.
  const LoadConfig defaults;
  const LoadKeyReaders r = load_key_readers(node, load);
  const bool rate_set = given_in(node, "rate") && load.rate != defaults.rate &&
                        !every_rate_stage(load, [&](const StageConfig& st) {
                          return !st.rate.ramp && st.rate.from == load.rate;
                        });
  const bool arrival_set =
      given_in(node, "arrival") && load.arrival != defaults.arrival &&
      !every_rate_stage(load, [&](const StageConfig& st) { return st.arrival == load.arrival; });
  const bool burstiness_set =
      given_in(node, "burstiness") && load.burstiness != defaults.burstiness &&
      !every_rate_stage(load,
                        [&](const StageConfig& st) { return st.burstiness == load.burstiness; });
  if (rate_set && !r.rate) warn("load.rate", r.why);
  if (arrival_set && !r.arrival) warn("load.arrival", r.why);
  if (burstiness_set && !r.burstiness) warn("load.burstiness", r.arrival ? r.burst_why : r.why);
  if (given_in(node, "mode") && load.mode != defaults.mode) {
    if (auto why = ignored_mode_reason(load); !why.empty()) warn("load.mode", why);
  }
  const YAML::Node list = child_of(node, "stages");
  for (std::size_t i = 0; list.IsSequence() && i < load.stages.size() && i < list.size(); ++i) {
    const StageConfig& st = load.stages[i];
    // The default, or load.burstiness copied into each stage (warned about once, at load).
    const bool copied = st.burstiness == defaults.burstiness || st.burstiness == load.burstiness;
    if (st.mode == LoadMode::kRate && st.arrival != Arrival::kGamma && !copied &&
        given_in(list[i], "burstiness")) {
      warn("load.stages[" + std::to_string(i) + "].burstiness",
           std::string("it shapes gamma arrivals, and this stage's arrival is ") +
               to_string(st.arrival));
    }
  }
}

void warn_ignored_dataset_keys(const yaml_util::Source& src, const DatasetConfig& dataset,
                               std::vector<std::string>& warnings) {
  if (dataset.type == DatasetType::kSynthetic) return;
  const YAML::Node node = child_of(src.root(), "dataset");
  const DatasetConfig defaults;
  const std::string why = std::string("ignored: a ") + to_string(dataset.type) +
                          " dataset's rows give every turn and prompt (synthetic datasets only)";
  auto warn = [&](const char* key) {
    const std::string path = std::string("dataset.") + key;
    warnings.push_back(src.message(path, path, why));
  };
  if (given_in(node, "turns") && !same_distribution(dataset.turns, defaults.turns)) warn("turns");
  if (given_in(node, "input_tokens") &&
      !same_distribution(dataset.input_tokens, defaults.input_tokens)) {
    warn("input_tokens");
  }
  if (given_in(node, "shared_prefix_tokens") &&
      dataset.shared_prefix_tokens != defaults.shared_prefix_tokens) {
    warn("shared_prefix_tokens");
  }
}

void warn_ignored_output_keys(const yaml_util::Source& src, const OutputConfig& output,
                              std::vector<std::string>& warnings) {
  if (output.metrics_linger_s <= 0 || output.metrics_listen) return;
  warnings.push_back(src.message("output.metrics_linger_s", "output.metrics_linger_s",
                                 "ignored: output.metrics_listen is not set, so there is no "
                                 "live /metrics to keep up after the run"));
}

}  // namespace convoy::config_detail
