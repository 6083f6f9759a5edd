// warpath: the command-line front end. Subcommands live in cmd_<name>.cpp.
#include <cstdio>
#include <exception>

#include "commands.hpp"
#include "warpath/core/version.hpp"

namespace warpath::cli {

int fail(const Status& status) { return fail(status.message()); }
int fail(const std::string& message) {
  std::fprintf(stderr, "warpath: %s\n", message.c_str());
  return 1;
}

}  // namespace warpath::cli

int main(int argc, char** argv) {
  using namespace warpath::cli;
  CLI::App app{"warpath: GPU-accelerated software packet processing (CPU and CUDA engines)",
               "warpath"};
  app.set_version_flag("--version", warpath::version());
  app.require_subcommand(1);
  Runner run;
  add_demo(app, run);
  add_info(app, run);
  add_parse(app, run);
  add_gen(app, run);
  add_selftest(app, run);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "warpath: %s\nRun 'warpath --help' or 'warpath <command> --help'.\n",
                 e.what());
    return 2;
  }
  try {
    return run ? run() : 2;
  } catch (const std::exception& e) {  // a bug, not an input problem: still no stack trace
    std::fprintf(stderr, "warpath: internal error: %s\n", e.what());
    return 70;
  }
}
