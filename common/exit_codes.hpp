// Process exit codes shared by convoy and convoy-worker (docs/architecture.md, "Exit codes").
#pragma once

namespace convoy {

inline constexpr int kExitOk = 0;
inline constexpr int kExitCriterionFailed = 1;  // the run completed but failed fail_on
inline constexpr int kExitBadInput = 2;         // bad flags or config; nothing was sent
inline constexpr int kExitIncomplete = 3;       // the run (or the worker) could not complete
inline constexpr int kExitInterrupted = 130;    // SIGINT, after writing partial results

}  // namespace convoy
