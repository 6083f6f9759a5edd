// src/runtime/modules/builtin_modules.hpp: the module kinds warpath ships (module.hpp's
// registry starts with these). One file per module: <kind>_module.cpp.
#pragma once
#include <vector>

#include "warpath/runtime/module.hpp"

namespace warpath::runtime {

ModuleInfo acl_module_info();
ModuleInfo defrag_module_info();
ModuleInfo esp_in_module_info();
ModuleInfo esp_out_module_info();
ModuleInfo flow_module_info();
ModuleInfo flow_aes_module_info();
ModuleInfo match_module_info();
#if defined(WARPATH_HAVE_NIDS)  // built where PCRE2 is (the rules' pcre)
ModuleInfo l7_module_info();
ModuleInfo nids_module_info();
#endif
ModuleInfo router_module_info();
ModuleInfo stream_module_info();
ModuleInfo switch_module_info();
ModuleInfo ttl_filter_module_info();
ModuleInfo wire_module_info();

inline std::vector<ModuleInfo> builtin_module_kinds() {
  std::vector<ModuleInfo> v;
  v.push_back(acl_module_info());
  v.push_back(defrag_module_info());
  v.push_back(esp_in_module_info());
  v.push_back(esp_out_module_info());
  v.push_back(flow_module_info());
  v.push_back(flow_aes_module_info());
  v.push_back(match_module_info());
#if defined(WARPATH_HAVE_NIDS)
  v.push_back(l7_module_info());
  v.push_back(nids_module_info());
#endif
  v.push_back(router_module_info());
  v.push_back(stream_module_info());
  v.push_back(switch_module_info());
  v.push_back(ttl_filter_module_info());
  v.push_back(wire_module_info());
  return v;
}

}  // namespace warpath::runtime
