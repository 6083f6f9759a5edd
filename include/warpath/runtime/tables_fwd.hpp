// include/warpath/runtime/tables_fwd.hpp: the tables the runtime passes around by pointer
// (routes, neighbours, rules, SAs), declared without their headers.
#pragma once

namespace warpath::lookup {
struct RouteTable;
}
namespace warpath::forward {
struct RouterConfig;
}
namespace warpath::ipsec {
struct SaConfig;
}
namespace warpath::classify {
struct RuleSet;
}
