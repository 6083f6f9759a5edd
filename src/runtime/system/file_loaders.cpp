// set_file_loaders(): the file loaders of warpath_io a run's modules read their tables with
// (include/warpath/runtime/pipeline.hpp, RunInputs).
#include "warpath/classify/rule.hpp"
#include "warpath/io/sa_file.hpp"
#include "warpath/io/text_file.hpp"
#include "warpath/lookup/route.hpp"
#include "warpath/runtime/pipeline.hpp"

namespace warpath::runtime {

void set_file_loaders(RunInputs& in) {
  in.load_routes = [](const std::string& path) { return lookup::load_routes(path); };
  in.load_rules  = [](const std::string& path, std::string_view format) {
    return classify::load_rules(path, format);
  };
  in.read_text = [](const std::string& path) { return io::read_text_file(path); };
  in.load_sas  = [](const std::string& path) { return io::read_sa_file(path); };
}

}  // namespace warpath::runtime
