#include <string>
#include <vector>

#include "app/cli.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return app::run_cli(args);
}
