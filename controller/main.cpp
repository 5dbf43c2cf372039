// convoy: the controller (run, controller, validate, keygen).
#include "controller/cli/cli.hpp"

int main(int argc, char** argv) { return convoy::controller::cli_main(argc, argv); }
