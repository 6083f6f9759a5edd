// python/src/module.cpp: the extension module warpath._warpath. The package's public names are
// in python/warpath/__init__.py, which wraps these in the shapes numpy users expect.
#include <nanobind/stl/string.h>

#include "common.hpp"
#include "warpath/classify/classifier.hpp"
#include "warpath/core/cuda_device.hpp"
#include "warpath/core/version.hpp"
#include "warpath/lookup/fib.hpp"
#include "warpath/pattern/pattern.hpp"

NB_MODULE(_warpath, m) {
  namespace py = warpath::py;
  m.doc() = "warpath's engines (the compiled half of the warpath package).";
  py::bind_errors(m);
  py::bind_lookup(m);
  py::bind_classify(m);
  py::bind_pattern(m);
  py::bind_capture(m);
  py::bind_flow(m);
  py::bind_stream(m);
  py::bind_nids(m);
  py::bind_chain(m);
  m.def("_engines_lookup", [] { return py::engine_list(warpath::lookup::fib_engines()); });
  m.def("_engines_classify",
        [] { return py::engine_list(warpath::classify::classifier_engines()); });
  m.def("_engines_pattern", [] { return py::engine_list(warpath::pattern::pattern_engines()); });
  m.attr("__version__") = warpath::version();
  m.def("build_info", [] {
    const warpath::BuildInfo b = warpath::build_info();
    nanobind::dict d;
    d["version"]    = warpath::version();
    d["cuda"]       = warpath::built_with_cuda();
    d["compiler"]   = b.compiler;
    d["build_type"] = b.build_type;
    d["cuda_archs"] = b.cuda_archs;
    d["git_commit"] = b.git_commit;
    return d;
  }, "How this warpath was built: version, CUDA, compiler, build type, commit.");
  m.def("cuda_devices", [] { return warpath::cuda_device_count(); },
        "GPUs this process sees (0 without CUDA or a GPU).");
}
