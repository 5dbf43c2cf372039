#include "common/curve.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "common/log.hpp"

namespace convoy {

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

bool valid_z85_key(const std::string& k) {
  uint8_t bin[32];
  return k.size() == 40 && zmq_z85_decode(bin, k.c_str()) != nullptr;
}

}  // namespace

std::string random_token(size_t bytes) {
  std::vector<unsigned char> raw(bytes);
  size_t got = 0;
  while (got < bytes) {
    ssize_t n = ::getrandom(raw.data() + got, bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(std::string("getrandom: ") + std::strerror(errno));
    got += static_cast<size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes);
  for (unsigned char c : raw) {
    out += kHex[c >> 4];
    out += kHex[c & 0x0f];
  }
  return out;
}

bool tokens_equal(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  volatile unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = static_cast<unsigned char>(
        diff | (static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i])));
  }
  return diff == 0;
}

CurveKeyPair read_curve_key_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read CURVE key file " + path);
  CurveKeyPair pair;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    size_t eq = line.find('=');
    if (eq == std::string::npos) {
      throw std::runtime_error(path + ":" + std::to_string(lineno) + ": expected 'public = KEY'");
    }
    std::string name = trim(line.substr(0, eq)), value = trim(line.substr(eq + 1));
    if (!valid_z85_key(value)) {
      throw std::runtime_error(path + ":" + std::to_string(lineno) + ": " + name +
                               " is not a 40-character Z85 key");
    }
    if (name == "public") {
      pair.public_z85 = value;
    } else if (name == "secret") {
      pair.secret_z85 = value;
    } else {
      throw std::runtime_error(path + ":" + std::to_string(lineno) + ": unknown field '" + name +
                               "'");
    }
  }
  if (pair.public_z85.empty()) throw std::runtime_error(path + ": no public key");
  return pair;
}

std::vector<std::string> read_authorized_keys(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read authorized keys file " + path);
  std::vector<std::string> keys;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    if (!valid_z85_key(line)) {
      throw std::runtime_error(path + ":" + std::to_string(lineno) +
                               ": not a 40-character Z85 public key");
    }
    keys.push_back(line);
  }
  return keys;
}

void make_curve_server(zmq::socket_t& socket, const CurveKeyPair& server) {
  if (server.secret_z85.empty()) throw std::runtime_error("the controller key has no secret");
  socket.set(zmq::sockopt::curve_server, 1);
  socket.set(zmq::sockopt::curve_secretkey, server.secret_z85);
  socket.set(zmq::sockopt::zap_domain, "convoy");
}

void make_curve_client(zmq::socket_t& socket, const CurveKeyPair& client,
                       const std::string& server_public_z85) {
  if (client.secret_z85.empty()) throw std::runtime_error("the worker key has no secret");
  socket.set(zmq::sockopt::curve_serverkey, server_public_z85);
  socket.set(zmq::sockopt::curve_publickey, client.public_z85);
  socket.set(zmq::sockopt::curve_secretkey, client.secret_z85);
}

ZapAuthenticator::ZapAuthenticator(zmq::context_t& ctx, const std::vector<std::string>& authorized)
    : socket_(ctx, zmq::socket_type::rep), authorized_(authorized.begin(), authorized.end()) {
  socket_.set(zmq::sockopt::linger, 0);
  socket_.bind("inproc://zeromq.zap.01");
  thread_ = std::thread([this] { serve(); });
}

ZapAuthenticator::~ZapAuthenticator() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void ZapAuthenticator::serve() {
  while (!stop_) {
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    try {
      if (zmq::poll(&item, 1, std::chrono::milliseconds(100)) == 0) continue;
      std::vector<zmq::message_t> frames;
      for (;;) {
        zmq::message_t f;
        if (!socket_.recv(f, zmq::recv_flags::none)) break;
        bool more = f.more();
        frames.push_back(std::move(f));
        if (!more) break;
      }
      // version, request id, domain, address, identity, mechanism, credentials...
      if (frames.size() < 6) continue;
      std::string version = frames[0].to_string(), request_id = frames[1].to_string();
      std::string address = frames[3].to_string(), mechanism = frames[5].to_string();
      bool ok = false;
      std::string client_key;
      if (mechanism == "CURVE" && frames.size() >= 7 && frames[6].size() == 32) {
        char z85[41] = {};
        zmq_z85_encode(z85, static_cast<const uint8_t*>(frames[6].data()), 32);
        client_key = z85;
        ok = authorized_.count(client_key) > 0;
      }
      if (!ok) {
        ++refused_;
        log_warn("refused a worker connection from ", log_escape(address), ": ",
                 client_key.empty() ? "no CURVE key" : "key " + client_key + " not authorized");
      }
      const std::string status = ok ? "200" : "400";
      const std::string text = ok ? "OK" : "not authorized";
      socket_.send(zmq::buffer(version), zmq::send_flags::sndmore);
      socket_.send(zmq::buffer(request_id), zmq::send_flags::sndmore);
      socket_.send(zmq::buffer(status), zmq::send_flags::sndmore);
      socket_.send(zmq::buffer(text), zmq::send_flags::sndmore);
      socket_.send(zmq::buffer(client_key), zmq::send_flags::sndmore);
      socket_.send(zmq::str_buffer(""), zmq::send_flags::none);
    } catch (const zmq::error_t& e) {
      if (e.num() == ETERM) return;
      log_warn("ZAP handler: ", e.what());
    }
  }
}

}  // namespace convoy
