// The `convoy` command line: run, controller, validate, keygen. Returns the process exit code.
#pragma once

namespace convoy::controller {

int cli_main(int argc, char** argv);

}  // namespace convoy::controller
