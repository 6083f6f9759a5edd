// src/runtime/chain_text.cpp: the one-line form of a chain and the preset applications
// (chain.hpp).
#include <atomic>
#include <cctype>

#include "warpath/runtime/chain.hpp"

namespace warpath::runtime {
namespace {

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}

class ChainParser {
 public:
  explicit ChainParser(std::string_view t) : t_(t) {}

  Result<std::vector<ModuleSpec>> parse() {
    std::vector<ModuleSpec> specs;
    for (;;) {
      ModuleSpec spec;
      WARPATH_TRY(module(spec));
      spec.where = "";
      specs.push_back(std::move(spec));
      skip();
      if (at_end()) break;
      if (t_.substr(p_, 2) != "->") return error("expected '->' or the end of the chain");
      p_ += 2;
    }
    return specs;
  }

 private:
  bool at_end() const { return p_ >= t_.size(); }
  void skip() {
    while (!at_end() && std::isspace(static_cast<unsigned char>(t_[p_]))) ++p_;
  }
  Status error(const std::string& why) const {
    return Status(Errc::kParseError, "chain: column " + std::to_string(p_ + 1) + ": " + why);
  }
  Result<std::string> name(const char* what) {
    skip();
    const size_t start = p_;
    // a name, but not the '-' of a following '->'
    while (!at_end() && name_char(t_[p_]) && t_.substr(p_, 2) != "->") ++p_;
    if (p_ == start) return error(std::string("expected ") + what);
    return std::string(t_.substr(start, p_ - start));
  }
  Status module(ModuleSpec& spec) {
    WARPATH_ASSIGN_OR_RETURN(spec.kind, name("a module name"));
    skip();
    if (at_end() || t_[p_] != '(') return Status::ok();
    ++p_;
    skip();
    if (!at_end() && t_[p_] == ')') {
      ++p_;
      return Status::ok();
    }
    for (;;) {
      WARPATH_ASSIGN_OR_RETURN(std::string key, name("an argument name"));
      skip();
      if (at_end() || t_[p_] != '=') return error("expected '=' after '" + key + "'");
      ++p_;
      skip();
      std::string value;
      if (!at_end() && t_[p_] == '"') {
        const size_t close = t_.find('"', p_ + 1);
        if (close == std::string_view::npos) return error("unterminated quoted value");
        value = std::string(t_.substr(p_ + 1, close - p_ - 1));
        p_    = close + 1;
      } else {
        const size_t start = p_;
        while (!at_end() && t_[p_] != ',' && t_[p_] != ')') ++p_;
        size_t end = p_;
        while (end > start && std::isspace(static_cast<unsigned char>(t_[end - 1]))) --end;
        value = std::string(t_.substr(start, end - start));
      }
      spec.args.emplace_back(std::move(key), std::move(value));
      skip();
      if (at_end()) return error("expected ',' or ')'");
      if (t_[p_] == ')') {
        ++p_;
        return Status::ok();
      }
      if (t_[p_] != ',') return error("expected ',' or ')'");
      ++p_;
    }
  }

  std::string_view t_;
  size_t p_ = 0;
};

bool needs_quotes(const std::string& v) {
  for (char c : v)
    if (c == ',' || c == ')' || c == '(' || std::isspace(static_cast<unsigned char>(c)))
      return true;
  return v.empty();
}

}  // namespace

Result<std::vector<ModuleSpec>> parse_chain(std::string_view text) {
  return ChainParser(text).parse();
}

std::string format_chain(const std::vector<ModuleSpec>& specs) {
  std::string s;
  for (const ModuleSpec& m : specs) {
    if (!s.empty()) s += " -> ";
    s += m.kind;
    if (m.args.empty()) continue;
    s += "(";
    for (size_t i = 0; i < m.args.size(); ++i) {
      const auto& [k, v] = m.args[i];
      s += (i ? ", " : "") + k + "=" + (needs_quotes(v) ? "\"" + v + "\"" : v);
    }
    s += ")";
  }
  return s;
}

std::vector<ModuleSpec> preset_chain(const RunConfig& config, const TableSource& tables) {
  const PresetCatalog& p = presets();
  return p.chain ? p.chain(config, tables) : std::vector<ModuleSpec>{};
}

}  // namespace warpath::runtime
