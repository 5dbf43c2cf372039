#include "controller/live/listen_exposure.hpp"

#include "common/log.hpp"

namespace convoy::live {

bool loopback_host(std::string_view host) {
  return host.rfind("127.", 0) == 0 || host == "localhost" || host == "::1" || host == "[::1]";
}

bool warn_unless_loopback(std::string_view key, std::string_view address, std::string_view host,
                          std::string_view why) {
  if (loopback_host(host)) return false;
  log_warn(key, " ", address, " is not a loopback address", why);
  return true;
}

}  // namespace convoy::live
