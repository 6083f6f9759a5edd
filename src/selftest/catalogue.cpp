// src/selftest/catalogue.cpp: the engine catalogue (see include/warpath/selftest/catalogue.hpp).
#include "warpath/selftest/catalogue.hpp"

#include "warpath/classify/check.hpp"
#include "warpath/defrag/defrag.hpp"
#include "warpath/flow/flow.hpp"
#include "warpath/ipsec/ipsec.hpp"
#include "warpath/lookup/check.hpp"
#include "warpath/openflow/flow_lookup.hpp"
#include "warpath/packet/parser.hpp"
#include "warpath/pattern/pattern.hpp"
#include "warpath/modules/chain_check.hpp"
#include "warpath/stream/flowstream.hpp"
#include "warpath/stream/stream.hpp"
#if defined(WARPATH_HAVE_NIDS)  // built where PCRE2 is (its pcre keyword)
#include "warpath/nids/detect.hpp"
#endif

namespace warpath {

const std::vector<EngineFamily>& engine_families() {
  static const std::vector<EngineFamily> modules = {
    {"packet", &packet::parser_engines, &packet::check_parser_engine},
    {"lookup", &lookup::fib_engines, &lookup::check_fib_engine},
    {"classify", &classify::classifier_engines, &classify::check_classifier_engine},
    {"defrag", &defrag::defrag_engines, &defrag::check_defrag_engine},
    {"flow", &flow::flow_engines, &flow::check_flow_engine},
    {"stream", &stream::stream_engines, &stream::check_stream_engine},
    {"flowstream", &stream::flowstream_engines, &stream::check_flowstream_engine},
    {"pattern", &pattern::pattern_engines, &pattern::check_pattern_engine},
    {"ipsec", &ipsec::esp_engines, &ipsec::check_esp_engine},
    {"aes-ctr", &ipsec::ctr_engines, &ipsec::check_ctr_engine},
    {"openflow", &openflow::flow_table_engines, &openflow::check_flow_table_engine},
#if defined(WARPATH_HAVE_NIDS)
    {"nids", &nids::nids_engines, &nids::check_nids_engine},
#endif
    {"runtime", &runtime::chain_engines, &runtime::check_chain_engine},
  };
  return modules;
}

}  // namespace warpath
