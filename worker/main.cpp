// convoy-worker: one worker process; joins a controller from any host.
#include "worker/cli.hpp"

int main(int argc, char** argv) { return convoy::worker::worker_main(argc, argv); }
