// CurveZMQ for authenticated multi-host runs: key files written by `convoy keygen`, socket
// setup for both sides, and a ZAP handler on the controller that admits only authorized workers.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <vector>
#include <zmq.hpp>

namespace convoy {

struct CurveKeyPair {
  std::string public_z85;  // 40 characters
  std::string secret_z85;  // "" for a public-key-only file
};

// Reads a key file ("public = Z85" and optionally "secret = Z85" lines). Throws
// std::runtime_error naming the file and what is wrong.
CurveKeyPair read_curve_key_file(const std::string& path);
// One Z85 public key per line; blank lines and # comments are skipped.
std::vector<std::string> read_authorized_keys(const std::string& path);

void make_curve_server(zmq::socket_t& socket, const CurveKeyPair& server);
void make_curve_client(zmq::socket_t& socket, const CurveKeyPair& client,
                       const std::string& server_public_z85);

// A fresh random secret (`bytes` of the OS's CSPRNG, as hex): the per-worker results token.
std::string random_token(size_t bytes = 16);
// Compares two secrets in time that depends only on their lengths, not on where they differ.
bool tokens_equal(std::string_view a, std::string_view b) noexcept;

// Answers ZAP requests (RFC 27) on inproc://zeromq.zap.01 of `ctx` from its own thread: CURVE
// clients whose public key is in the allow-list get 200, everyone else 400 and a log line with
// their address. Construct before binding the server sockets; destroy before the context.
class ZapAuthenticator {
 public:
  ZapAuthenticator(zmq::context_t& ctx, const std::vector<std::string>& authorized_z85);
  ~ZapAuthenticator();
  ZapAuthenticator(const ZapAuthenticator&) = delete;
  ZapAuthenticator& operator=(const ZapAuthenticator&) = delete;

  int64_t refused() const { return refused_.load(); }

 private:
  void serve();

  zmq::socket_t socket_;
  std::unordered_set<std::string> authorized_;  // Z85 public keys
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> refused_{0};
  std::thread thread_;
};

}  // namespace convoy
