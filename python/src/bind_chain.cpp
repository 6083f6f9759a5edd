// python/src/bind_chain.cpp: a chain of modules between ports (include/warpath/runtime/
// pipeline.hpp), as `warpath run --chain TEXT --port NAME=SPEC ...` runs it, with the report
// `warpath run --json` writes after its provenance header (runtime/system/report_json.hpp).
// Threads are not pinned (a Python process shares its cores) unless cpus are given.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <Python.h>

#include <atomic>

#include "common.hpp"
#include "runtime/system/report_json.hpp"
#include "warpath/runtime/chain.hpp"
#include "warpath/runtime/pipeline.hpp"
#include "warpath/runtime/port.hpp"

namespace warpath::py {
namespace {

struct ChainArgs {
  std::string chain;
  std::vector<std::pair<std::string, std::string>> ports;
  std::string engine = "auto", schedule = runtime::RunConfig{}.schedule;  // the CLI's defaults
  std::vector<int> cpus;
  uint32_t workers = 1, batch = runtime::RunConfig{}.batch;
  double duration  = 0;
  uint64_t seed    = runtime::RunConfig{}.seed;
  bool zero_copy   = true;
};

std::string run_chain(const ChainArgs& a) {
  runtime::RunConfig c;
  auto parsed = runtime::parse_chain(a.chain);
  if (!parsed) throw StatusError(Status(parsed.status().code(), "chain: " + parsed.status().message()));
  c.chain = std::move(*parsed);
  for (auto& m : c.chain) m.where = "chain";
  if (a.ports.empty()) invalid("a chain needs ports: [('in', 'pcap:IN.pcap:'), ...]");
  c.ports = a.ports;
  if (!runtime::parse_offload(a.engine, c.engine))
    invalid("engine '" + a.engine + "': cpu, gpu or auto");
  c.workers     = a.workers;
  c.batch       = a.batch;
  c.duration_s  = a.duration;
  c.seed        = a.seed;
  c.schedule    = a.schedule;
  c.progress    = false;
  c.pin_threads = !a.cpus.empty();
  c.cpus        = a.cpus;
  c.zero_copy   = a.zero_copy;
  check(c.validate());
  runtime::RunInputs in;
  runtime::set_file_loaders(in);
  check(runtime::open_run_ports(c, in));
  // Ctrl-C stops the run (drained, as the CLI's SIGINT does) and raises KeyboardInterrupt.
  std::atomic<bool> stop{false};
  bool interrupted = false;
  runtime::RunHooks hooks;
  hooks.stop                = &stop;
  hooks.progress_interval_s = 0.2;
  hooks.progress            = [&](const runtime::RunReport&) {
    nb::gil_scoped_acquire locked;
    if (PyErr_CheckSignals() != 0) {
      PyErr_Clear();
      interrupted = true;
      stop.store(true);
    }
  };
  runtime::RunReport report;
  {
    nb::gil_scoped_release unlocked;
    report = take(runtime::run(c, in, hooks));
  }
  if (interrupted) {
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw nb::python_error();
  }
  if (!report.errors.empty()) {  // what went wrong after the run started: every line of it
    std::string all;
    for (const std::string& e : report.errors) all += (all.empty() ? "" : "; ") + e;
    throw StatusError(Status(Errc::kIoError, all));
  }
  return runtime::run_report_body(c, report).dump();
}

}  // namespace

void bind_chain(nb::module_& m) {
  nb::class_<ChainArgs>(m, "_ChainArgs", "A chain run's settings (see warpath.Chain).")
      .def(nb::init<>())
      .def_rw("chain", &ChainArgs::chain)
      .def_rw("ports", &ChainArgs::ports)
      .def_rw("engine", &ChainArgs::engine)
      .def_rw("schedule", &ChainArgs::schedule)
      .def_rw("cpus", &ChainArgs::cpus)
      .def_rw("workers", &ChainArgs::workers)
      .def_rw("batch", &ChainArgs::batch)
      .def_rw("duration", &ChainArgs::duration)
      .def_rw("seed", &ChainArgs::seed)
      .def_rw("zero_copy", &ChainArgs::zero_copy);
  m.def("_run_chain", &run_chain, nb::arg("args"),
        "Runs a chain between ports: the report as JSON text.");
}

}  // namespace warpath::py
