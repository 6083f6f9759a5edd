// warpath: the command-line front end. Subcommands live in cmd_<name>.cpp.
#include <algorithm>
#include <cstdio>
#include <exception>

#include "commands.hpp"
#include "warpath/core/version.hpp"
#include "warpath/io/capture_input.hpp"

namespace warpath::cli {

int fail(const Status& status) {
  fail(status.message());
  // An unknown engine id is a usage error, like a bad flag.
  return status.code() == Errc::kNotFound ? 2 : 1;
}
/// An error message as one printable line: bytes of a binary file quoted in it (a capture
/// given as a rule file) become \xNN, valid UTF-8 stays, and it is cut at 1,000 bytes.
std::string printable(const std::string& m) {
  std::string out;
  for (size_t i = 0; i < m.size() && out.size() < 1000;) {
    const auto c = static_cast<unsigned char>(m[i]);
    size_t n     = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    bool utf8    = n > 1 && i + n <= m.size();
    for (size_t k = 1; utf8 && k < n; ++k) utf8 = (static_cast<unsigned char>(m[i + k]) >> 6) == 2;
    if (c >= 0x20 && c != 0x7f && (n == 1 || utf8)) {
      out.append(m, i, n);
      i += n;
      continue;
    }
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\x%02x", c);
    out += hex;
    ++i;
  }
  if (out.size() >= 1000) out += "...";
  return out;
}

int fail(const std::string& message) {
  std::fprintf(stderr, "warpath: %s\n", printable(message).c_str());
  return 1;
}

void print_warnings(const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings)
    std::fprintf(stderr, "warpath: warning: %s\n", printable(w).c_str());
}

int strict_exit(bool strict, const std::vector<std::string>& warnings) {
  if (!strict || warnings.empty()) return 0;
  return fail("--strict: " + std::to_string(warnings.size()) + " warning(s), above");
}

void add_strict_flag(CLI::App* cmd, bool& strict, const std::string& what, const std::string& done) {
  cmd->add_flag("--strict", strict,
                "Exit 1 when the capture is damaged (by default " + what +
                    " of the packets before the damaged record " + done +
                    ", with a warning naming it)");
}

void add_progress_flag(CLI::App* cmd, bool& progress) {
  cmd->add_flag("--progress", progress,
                "Show the progress line (packets, bytes, rate) even when stderr is not a terminal");
}

void add_shard_option(CLI::App* cmd, std::string& shard) {
  cmd->add_option("--shard", shard,
                  "K/N: only part K (from 0) of N of the capture, cut by a symmetric hash of "
                  "the flow key so that each flow is whole in one part; the N parts' outputs "
                  "together are the whole run's (docs/cluster.md)")
      ->check([](const std::string& text) {
        auto s = warpath::io::parse_shard(text);
        return s.is_ok() ? std::string() : s.status().message();
      });
}

}  // namespace warpath::cli

namespace {

int run_main(int argc, char** argv) {
  using namespace warpath::cli;
  CLI::App app{"warpath: GPU-accelerated software packet processing (CPU and CUDA engines)",
               "warpath"};
  app.set_version_flag("--version", warpath::version());
  app.require_subcommand(1);
  Runner run;
  add_demo(app, run);
  add_info(app, run);
  add_parse(app, run);
  add_flows(app, run);
  add_defrag(app, run);
  add_reassemble(app, run);
  add_patterns(app, run);
#if defined(WARPATH_HAVE_NIDS)
  add_nids(app, run);
#endif
  add_gen(app, run);
  add_selftest(app, run);
  add_lookup(app, run);
  add_classify(app, run);
  add_bench(app, run);
  add_route(app, run);
  add_run(app, run);
  add_modules(app, run);
  add_docs(app, run);
  add_report(app, run);
  add_cluster(app, run);
  // CLI11 reports a mistyped command as "a subcommand is required"; name it instead.
  const auto known      = app.get_subcommands([](CLI::App*) { return true; });
  const bool is_command = argc > 1 && std::any_of(known.begin(), known.end(), [&](CLI::App* c) {
                            return c->check_name(argv[1]);
                          });
  if (argc > 1 && argv[1][0] != '-' && !is_command) {
    std::fprintf(stderr, "warpath: unknown command '%s'\nRun 'warpath --help' for the commands.\n",
                 argv[1]);
    return 2;
  }
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

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_main(argc, argv);
  } catch (...) {  // CLI11 set-up failing is a bug; still one line and no stack trace
    std::fprintf(stderr, "warpath: internal error\n");
    return 70;
  }
}
