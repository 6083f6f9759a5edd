// src/io/route_load.cpp: route, update and address files from disk (.gz and .xz allowed).
#include "warpath/io/text_file.hpp"
#include "warpath/lookup/route.hpp"

namespace warpath::lookup {

Result<RouteTable> load_routes(const std::string& path) {
  auto text = io::read_text_file(path);
  if (!text.is_ok()) return text.status();
  return parse_routes(path, text.value());
}

Result<std::vector<RouteUpdate>> load_route_updates(const std::string& path, RouteTable& table) {
  auto text = io::read_text_file(path);
  if (!text.is_ok()) return text.status();
  return parse_route_updates(path, text.value(), table);
}

Result<std::vector<Address>> load_addresses(const std::string& path) {
  auto text = io::read_text_file(path);
  if (!text.is_ok()) return text.status();
  return parse_addresses(path, text.value());
}

}  // namespace warpath::lookup
