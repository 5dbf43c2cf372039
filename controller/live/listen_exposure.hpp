// A listen address any other host may reach: workers.listen without workers.curve_keys, and
// output.metrics_listen, print the same warning (one function), so an exposed run says so.
#pragma once

#include <string_view>

namespace convoy::live {

// True for 127.x.y.z, localhost and ::1 ("[::1]" too): only this host reaches them. A wildcard
// (*, 0.0.0.0, [::]), any other address and an interface name are not loopback.
bool loopback_host(std::string_view host);

// Warns "KEY ADDRESS is not a loopback address<why>" unless `host` is loopback; `why` says what
// a host that reaches it can do (": any host that reaches it can ..."). True when it warned.
bool warn_unless_loopback(std::string_view key, std::string_view address, std::string_view host,
                          std::string_view why);

}  // namespace convoy::live
