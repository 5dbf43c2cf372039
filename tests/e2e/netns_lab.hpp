// Hosts made of Linux network namespaces, for multi-host tests on one machine: a "switch"
// namespace holding a bridge, and one namespace per host joined to it by a veth pair. The hosts'
// addresses exist only inside these namespaces (none has a route out, and nothing is attached to
// the root namespace), so no test traffic can leave them. Needs root; everything is removed when
// the lab goes out of scope.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string>
#include <vector>

#include "e2e/subprocess.hpp"

namespace convoy::test {

class NetnsLab {
 public:
  struct Result {
    int rc = -1;
    std::string output;
  };

  // `tag` keeps the names of concurrent labs apart; the pid is added too.
  explicit NetnsLab(const std::string& tag)
      : prefix_("cvy-" + std::to_string(::getpid()) + "-" + tag) {
    ip_ = find_ip();
    if (::geteuid() != 0) {
      error_ = "network namespaces need root (running as uid " + std::to_string(::geteuid()) + ")";
      return;
    }
    if (ip_.empty()) {
      error_ = "the ip command (iproute2) is not installed";
      return;
    }
    remove_stale();
    const std::string sw = prefix_ + "-sw";
    if (!step({"netns", "add", sw})) return;
    namespaces_.push_back(sw);
    if (!step({"-n", sw, "link", "set", "lo", "up"})) return;
    if (!step({"-n", sw, "link", "add", "br0", "type", "bridge"})) return;
    step({"-n", sw, "link", "set", "br0", "up"});
  }

  ~NetnsLab() {
    // Deleting a namespace destroys the veth ends inside it; its processes must be gone first
    // (the owners of the Subprocesses run in it are declared after the lab).
    for (auto it = namespaces_.rbegin(); it != namespaces_.rend(); ++it) {
      run({ip_, "netns", "del", *it});
    }
  }
  NetnsLab(const NetnsLab&) = delete;
  NetnsLab& operator=(const NetnsLab&) = delete;

  // Empty when the lab is usable; else why not (the caller skips).
  const std::string& error() const { return error_; }

  // A host `name` with `address` (CIDR, e.g. 10.213.0.1/24) on the lab's bridge. Its namespace.
  std::string add_host(const std::string& name, const std::string& address) {
    if (!error_.empty()) return "";
    const std::string ns = prefix_ + "-" + name;
    const std::string sw = prefix_ + "-sw";
    const std::string port = "p" + std::to_string(namespaces_.size());
    if (!step({"netns", "add", ns})) return "";
    namespaces_.push_back(ns);
    if (!step(
            {"-n", sw, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns}) ||
        !step({"-n", sw, "link", "set", port, "master", "br0"}) ||
        !step({"-n", sw, "link", "set", port, "up"}) ||
        !step({"-n", ns, "addr", "add", address, "dev", "eth0"}) ||
        !step({"-n", ns, "link", "set", "eth0", "up"}) ||
        !step({"-n", ns, "link", "set", "lo", "up"})) {
      return "";
    }
    return ns;
  }

  // Cuts `ns`'s only link, as a pulled cable would.
  Result link_down(const std::string& ns) {
    return run({ip_, "-n", ns, "link", "set", "eth0", "down"});
  }

  // argv run inside `ns` (ip netns exec execs in place: the child's pid is the program's).
  std::vector<std::string> in(const std::string& ns, std::vector<std::string> argv) const {
    std::vector<std::string> out = {ip_, "netns", "exec", ns};
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
  }

  // Same, in a UTS namespace of its own whose hostname is `hostname`: a host with its own name.
  std::vector<std::string> on_host(const std::string& ns, const std::string& hostname,
                                   std::vector<std::string> argv) const {
    std::vector<std::string> out = in(ns, {"/usr/bin/unshare", "--uts", "/bin/sh", "-c",
                                           "hostname \"$0\" && exec \"$@\"", hostname});
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
  }

  static Result run(std::vector<std::string> argv, double timeout_s = 20) {
    Subprocess p(std::move(argv));
    auto rc = p.wait(timeout_s);
    return {rc.value_or(-1), p.output()};
  }

 private:
  bool step(std::vector<std::string> args) {
    args.insert(args.begin(), ip_);
    std::string shown;
    for (const auto& a : args) shown += (shown.empty() ? "" : " ") + a;
    Result r = run(std::move(args));
    if (r.rc != 0) error_ = "`" + shown + "` failed (" + std::to_string(r.rc) + "): " + r.output;
    return r.rc == 0;
  }

  static std::string find_ip() {
    for (const char* p : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"}) {
      if (::access(p, X_OK) == 0) return p;
    }
    return "";
  }

  // Namespaces a killed test run left behind (cvy-PID-*, PID no longer running).
  void remove_stale() const {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/run/netns", ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("cvy-", 0) != 0) continue;
      const size_t dash = name.find('-', 4);
      if (dash == std::string::npos) continue;
      const std::string digits = name.substr(4, dash - 4);
      if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) continue;
      const pid_t pid = static_cast<pid_t>(std::stol(digits));
      if (::kill(pid, 0) != 0 && errno == ESRCH) run({ip_, "netns", "del", name});
    }
  }

  std::string prefix_;
  std::string ip_;
  std::string error_;
  std::vector<std::string> namespaces_;  // in creation order; the switch first
};

}  // namespace convoy::test
