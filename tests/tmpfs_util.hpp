// A small tmpfs for tests of full disks: mounted at a fresh path, unmounted at scope exit. Needs
// root (CAP_SYS_ADMIN); where it cannot be mounted, skipped() says why and the test skips.
#pragma once

#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

#include "test_util.hpp"

namespace convoy::test {

class Tmpfs {
 public:
  // `size` in mount(8) syntax, e.g. "256k".
  Tmpfs(const std::string& name, const std::string& size) : path_(fresh_dir(name)) {
    if (::geteuid() != 0) {
      skipped_ = "needs root to mount a tmpfs";
      return;
    }
    const std::string options = "size=" + size;
    if (::mount("tmpfs", path_.c_str(), "tmpfs", 0, options.c_str()) != 0) {
      skipped_ = std::string("cannot mount a tmpfs: ") + std::strerror(errno);
      return;
    }
    mounted_ = true;
  }
  ~Tmpfs() {
    if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  Tmpfs(const Tmpfs&) = delete;
  Tmpfs& operator=(const Tmpfs&) = delete;

  const std::filesystem::path& path() const { return path_; }
  const std::string& skipped() const { return skipped_; }

 private:
  std::filesystem::path path_;
  bool mounted_ = false;
  std::string skipped_;
};

}  // namespace convoy::test
