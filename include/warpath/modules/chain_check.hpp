// include/warpath/modules/chain_check.hpp
//
// The differential check of chains, for the self-test (selftest/selftest.hpp) and the tests: a
// chain of three modules with a context key splitting the batch (acl with goto:inspect rules
// -> ttl-filter(when=inspect) -> router) shaded on the offload place's engines, frame by frame
// at several batch sizes, against the same chain on the reference engines (ref.linear,
// ref.lpm) run one packet per frame, and again through the offload master, three frames a
// launch (runtime/chain_run.hpp runs them). Pseudo engines of the "modules" library:
//   cpu.chain    the offload place on cpu.* engines (offload_device=cpu)
//   cuda.chain   the offload place on cuda.* engines: what a GPU machine checks
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/core/registry.hpp"
#include "warpath/packet/batch.hpp"
#include "warpath/runtime/chain_run.hpp"

namespace warpath::runtime {

std::vector<EngineInfo> chain_engines();
CheckReport check_chain_engine(std::string_view id, uint64_t seed, uint64_t items);

}  // namespace warpath::runtime
