// python/src/common.cpp: the helpers common.hpp declares for every binding file.
#include "common.hpp"

#include <nanobind/stl/string.h>

#include "warpath/core/memory.hpp"

namespace warpath::py {

Answers answers_for(nb::object out, size_t n, const char* items) {
  if (out.is_none()) {
    auto owner = std::make_unique<PinnedVector<uint32_t>>(n);
    uint32_t* d = owner->data();
    return {d, nb::cast(owned<uint32_t>(std::move(owner), d, {n}))};
  }
  nb::ndarray<uint32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> o;
  if (!nb::try_cast(out, o, /*convert=*/false))
    invalid("out must be a writable, contiguous 1-D uint32 array");
  if (o.shape(0) < n)
    invalid("out has " + std::to_string(o.shape(0)) + " elements for " + std::to_string(n) + " " +
            items);
  return {o.data(), std::move(out)};
}

nb::list engine_list(const std::vector<EngineInfo>& engines) {
  nb::list out;
  for (const EngineInfo& e : engines) {
    nb::dict d;
    d["id"]          = std::string(e.id);
    d["description"] = std::string(e.description);
    d["priority"]    = e.priority;
    d["available"]   = e.available ? e.available() : true;
    out.append(d);
  }
  return out;
}

}  // namespace warpath::py
