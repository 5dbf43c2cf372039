#include "controller/cli/keygen.hpp"

#include <sys/stat.h>
#include <zmq.h>

#include <filesystem>
#include <fstream>
#include <iostream>

namespace convoy::controller {

namespace {

struct KeyPair {
  std::string public_key;
  std::string secret_key;
};

KeyPair make_pair() {
  char pub[41] = {}, sec[41] = {};
  if (zmq_curve_keypair(pub, sec) != 0) {
    throw std::runtime_error(std::string("zmq_curve_keypair: ") + zmq_strerror(zmq_errno()));
  }
  return {pub, sec};
}

void write_file(const std::filesystem::path& path, const std::string& content, bool secret) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + path.string());
  out << content;
  out.close();
  ::chmod(path.c_str(), secret ? 0600 : 0644);
}

}  // namespace

int write_curve_keys(const std::string& dir, int workers) {
  if (!zmq_has("curve")) {
    std::cerr << "convoy: error: this libzmq was built without CURVE support\n";
    return 2;
  }
  try {
    std::filesystem::create_directories(dir);
    KeyPair controller = make_pair();
    write_file(std::filesystem::path(dir) / "controller.key",
               "public = " + controller.public_key + "\nsecret = " + controller.secret_key + "\n",
               true);
    write_file(std::filesystem::path(dir) / "controller.pub",
               "public = " + controller.public_key + "\n", false);
    std::string authorized;
    for (int i = 0; i < workers; ++i) {
      KeyPair w = make_pair();
      write_file(std::filesystem::path(dir) / ("worker-" + std::to_string(i) + ".key"),
                 "public = " + w.public_key + "\nsecret = " + w.secret_key + "\n", true);
      authorized += w.public_key + "\n";
    }
    write_file(std::filesystem::path(dir) / "authorized_workers", authorized, false);
  } catch (const std::exception& e) {
    std::cerr << "convoy: error: " << e.what() << "\n";
    return 2;
  }
  std::cout << "wrote controller.key, controller.pub, " << workers
            << " worker key pair(s) and authorized_workers into " << dir << "\n";
  return 0;
}

}  // namespace convoy::controller
