// l7-filter pattern files into an L7 set (include/warpath/nids/l7.hpp).
#include "warpath/nids/l7.hpp"

#include "warpath/io/text_file.hpp"

namespace warpath::nids {

Result<L7Set> parse_l7(std::string_view text, std::string_view name) {
  L7Set set;
  io::LineCursor lines(text);
  std::string_view line;
  std::string pending;  // a .pat file's protocol name, waiting for its regex line
  while (lines.next(line)) {
    const std::string where = std::string(name) + ":" + std::to_string(lines.line_number());
    std::string_view t = io::trim(line);
    if (t.empty() || t[0] == '#') continue;
    std::string proto, regex;
    if (t.find('\t') != std::string_view::npos) {  // the table: dir name attributes regex
      std::vector<std::string_view> f;
      size_t start = 0;
      for (size_t i = 0; i <= line.size(); ++i)
        if (i == line.size() || line[i] == '\t') {
          f.push_back(line.substr(start, i - start));
          start = i + 1;
        }
      if (f.size() != 4) return Status(Errc::kParseError, where + ": expected 4 tab-separated columns");
      proto = std::string(io::trim(f[1]));
      regex = std::string(f[3]);
      if (f[2].find("overmatch") != std::string_view::npos) {  // l7-filter's own warning
        set.skipped.push_back(proto + ": l7-filter marks it overmatch (it matches other protocols' traffic)");
        continue;
      }
    } else if (pending.empty()) {  // a .pat file: the protocol's name first
      pending = std::string(t);
      continue;
    } else {
      proto = std::move(pending);
      pending.clear();
      regex = std::string(line);
    }
    if (proto.empty() || regex.empty()) return Status(Errc::kParseError, where + ": empty name or pattern");
    if (proto == "unknown" || proto == "unset") {  // l7-filter's catch-alls: "unknown" is the default here
      set.skipped.push_back(proto + ": a catch-all (flows no pattern matches are unknown)");
      continue;
    }
    pattern::Pattern p;
    p.id         = uint32_t(set.patterns.size());
    p.expression = regex;
    p.flags      = pattern::kCaseless | pattern::kDotAll;  // l7-filter: caseless, . is any byte
    p.where      = where + " (" + proto + ")";
    if (Status s = pattern::check_pattern(p); !s.is_ok()) {
      set.skipped.push_back(proto + ": " + s.message());
      continue;
    }
    p.id = uint32_t(set.patterns.size());
    set.names.push_back(std::move(proto));
    set.patterns.push_back(std::move(p));
  }
  if (!pending.empty()) return Status(Errc::kParseError, std::string(name) + ": protocol '" + pending + "' has no pattern line");
  return set;
}

bool l7_classify(L7Flow& f, const uint8_t* data, uint32_t len, pattern::Matcher& m,
                 std::vector<pattern::Match>& scratch) {
  if (f.done || !len) return false;
  for (uint32_t k = 0; k < len && f.bytes.size() < kL7MaxBytes; ++k)
    if (data[k]) f.bytes.push_back(char(data[k]));
  ++f.packets;
  scratch.clear();
  if (m.scan(reinterpret_cast<const uint8_t*>(f.bytes.data()), f.bytes.size(), scratch).is_ok())
    for (const pattern::Match& x : scratch)
      if (f.label < 0 || int32_t(x.id) < f.label) f.label = int32_t(x.id);
  if (f.label < 0 && f.packets < kL7MaxPackets && f.bytes.size() < kL7MaxBytes) return false;
  f.done = true;
  std::string().swap(f.bytes);
  return true;
}

}  // namespace warpath::nids
