// `convoy keygen DIR`: CurveZMQ key pairs for authenticated multi-host runs.
//   DIR/controller.key   the controller's pair ("public = ..." and "secret = ..."; mode 0600)
//   DIR/controller.pub   its public key only: give this to every worker host
//   DIR/worker-N.key     one pair per worker (mode 0600): copy one to each worker host
//   DIR/authorized_workers  the workers' public keys, one per line: the controller's allow-list
#pragma once

#include <string>

namespace convoy::controller {

// Returns the exit code; prints what it wrote, or why it could not.
int write_curve_keys(const std::string& dir, int workers);

}  // namespace convoy::controller
