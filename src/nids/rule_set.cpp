// Rule files and directories into a rule set, with a report of what did not load; the
// classification table.
#include <algorithm>
#include <filesystem>
#include <set>

#include "warpath/io/text_file.hpp"
#include "warpath/nids/rule.hpp"

namespace warpath::nids {
namespace {

// Suricata's shipped classification.config (the same table ET Open distributes).
constexpr std::string_view kDefaultClassification = R"(
config classification: not-suspicious,Not Suspicious Traffic,3
config classification: unknown,Unknown Traffic,3
config classification: bad-unknown,Potentially Bad Traffic, 2
config classification: attempted-recon,Attempted Information Leak,2
config classification: successful-recon-limited,Information Leak,2
config classification: successful-recon-largescale,Large Scale Information Leak,2
config classification: attempted-dos,Attempted Denial of Service,2
config classification: successful-dos,Denial of Service,2
config classification: attempted-user,Attempted User Privilege Gain,1
config classification: unsuccessful-user,Unsuccessful User Privilege Gain,1
config classification: successful-user,Successful User Privilege Gain,1
config classification: attempted-admin,Attempted Administrator Privilege Gain,1
config classification: successful-admin,Successful Administrator Privilege Gain,1
config classification: rpc-portmap-decode,Decode of an RPC Query,2
config classification: shellcode-detect,Executable code was detected,1
config classification: string-detect,A suspicious string was detected,3
config classification: suspicious-filename-detect,A suspicious filename was detected,2
config classification: suspicious-login,An attempted login using a suspicious username was detected,2
config classification: system-call-detect,A system call was detected,2
config classification: tcp-connection,A TCP connection was detected,4
config classification: trojan-activity,A Network Trojan was detected, 1
config classification: unusual-client-port-connection,A client was using an unusual port,2
config classification: network-scan,Detection of a Network Scan,3
config classification: denial-of-service,Detection of a Denial of Service Attack,2
config classification: non-standard-protocol,Detection of a non-standard protocol or event,2
config classification: protocol-command-decode,Generic Protocol Command Decode,3
config classification: web-application-activity,access to a potentially vulnerable web application,2
config classification: web-application-attack,Web Application Attack,1
config classification: misc-activity,Misc activity,3
config classification: misc-attack,Misc Attack,2
config classification: icmp-event,Generic ICMP event,3
config classification: policy-violation,Potential Corporate Privacy Violation,1
config classification: default-login-attempt,Attempt to login by a default username and password,2
config classification: targeted-activity,Targeted Malicious Activity was Detected,1
config classification: exploit-kit,Exploit Kit Activity Detected,1
config classification: external-ip-check,Device Retrieving External IP Address Detected,2
config classification: domain-c2,Domain Observed Used for C2 Detected,1
config classification: pup-activity,Possibly Unwanted Program Detected,2
config classification: credential-theft,Successful Credential Theft Detected,1
config classification: social-engineering,Possible Social Engineering Attempted,2
config classification: coin-mining,Crypto Currency Mining Activity Detected,2
config classification: command-and-control,Malware Command and Control Activity Detected,1
)";

bool is_rule_start(std::string_view s) {
  for (std::string_view a : {"alert", "drop", "pass", "reject", "rejectsrc", "rejectdst",
                             "rejectboth", "log", "sdrop"})
    if (s.starts_with(a) && s.size() > a.size() && (s[a.size()] == ' ' || s[a.size()] == '\t'))
      return true;
  return false;
}

uint32_t sid_of(std::string_view text) {
  size_t p = text.find("sid:");
  while (p != std::string_view::npos && p > 0 && text[p - 1] != ';' && text[p - 1] != ' ' &&
         text[p - 1] != '(')
    p = text.find("sid:", p + 1);
  if (p == std::string_view::npos) return 0;
  uint64_t v = 0;
  std::string_view rest = text.substr(p + 4);
  rest = io::trim(rest.substr(0, rest.find(';')));
  return io::parse_number(rest, 0xffffffffu, v) ? uint32_t(v) : 0;
}

}  // namespace

const Classification& default_classification() {
  static const Classification table = [] {
    auto c = parse_classification(kDefaultClassification, "built-in classification");
    return c.is_ok() ? *c : Classification{};
  }();
  return table;
}

Result<Classification> parse_classification(std::string_view text, std::string_view name) {
  Classification out;
  io::LineCursor lines(text);
  std::string_view line;
  while (lines.next(line)) {
    line = io::trim(line);
    if (line.empty() || line[0] == '#') continue;
    const std::string where = std::string(name) + ":" + std::to_string(lines.line_number());
    constexpr std::string_view kPrefix = "config classification:";
    if (!line.starts_with(kPrefix)) return Status(Errc::kParseError, where + ": expected 'config classification:'");
    std::string_view rest = line.substr(kPrefix.size());
    const size_t c1 = rest.find(','), c2 = rest.rfind(',');
    if (c1 == std::string_view::npos || c1 == c2)
      return Status(Errc::kParseError, where + ": expected NAME,DESCRIPTION,PRIORITY");
    uint64_t prio = 0;
    if (!io::parse_number(io::trim(rest.substr(c2 + 1)), 255, prio) || prio == 0)
      return Status(Errc::kParseError, where + ": priority must be 1..255");
    out[std::string(io::trim(rest.substr(0, c1)))] =
        ClassType{std::string(io::trim(rest.substr(c1 + 1, c2 - c1 - 1))), int32_t(prio)};
  }
  return out;
}

uint32_t RuleSet::syntax_errors() const {
  uint32_t n = 0;
  for (const FileReport& f : files)
    for (const RuleProblem& p : f.problems) n += p.syntax;
  return n;
}

uint32_t RuleSet::skipped() const {
  uint32_t n = 0;
  for (const FileReport& f : files)
    for (const RuleProblem& p : f.problems) n += !p.syntax;
  return n;
}

void add_rules_text(RuleSet& set, std::string_view text, std::string_view name, const Vars& vars) {
  FileReport report;
  report.path = std::string(name);
  std::set<std::pair<uint32_t, uint32_t>> seen;
  for (const Rule& r : set.rules) seen.insert({r.gid, r.sid});
  io::LineCursor lines(text);
  std::string_view line;
  std::string joined;
  uint64_t first_line = 0;
  while (lines.next(line)) {
    std::string_view t = io::trim(line);
    if (joined.empty()) first_line = lines.line_number();
    if (!t.empty() && t.back() == '\\') {  // continued on the next line
      joined.append(t.substr(0, t.size() - 1));
      continue;
    }
    joined.append(t);
    std::string_view rule = io::trim(joined);
    const std::string where = std::string(name) + ":" + std::to_string(first_line);
    if (rule.empty()) {
      joined.clear();
      continue;
    }
    if (rule[0] == '#') {
      std::string_view body = io::trim(rule.substr(1));
      if (is_rule_start(body)) ++report.disabled;
      joined.clear();
      continue;
    }
    ++report.rules;
    auto parsed = parse_rule(rule, vars, where);
    if (!parsed.is_ok()) {
      report.problems.push_back({where, sid_of(rule), parsed.status().message(),
                                 parsed.status().code() != Errc::kNotSupported});
    } else if (!seen.insert({parsed->gid, parsed->sid}).second) {
      report.problems.push_back({where, parsed->sid, "duplicate sid " + std::to_string(parsed->sid), true});
    } else {
      ++report.loaded;
      set.rules.push_back(std::move(*parsed));
    }
    joined.clear();
  }
  set.files.push_back(std::move(report));
}

Result<std::vector<Action>> parse_action_order(std::string_view text) {
  std::vector<Action> order;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != ',') continue;
    const std::string_view w = io::trim(text.substr(start, i - start));
    start = i + 1;
    Action a;
    if (w == "pass") a = Action::kPass;
    else if (w == "drop" || w == "reject") a = Action::kDrop;
    else if (w == "alert") a = Action::kAlert;
    else return Status(Errc::kInvalidArgument, "action order: unknown action '" + std::string(w) + "'");
    if (std::find(order.begin(), order.end(), a) == order.end()) order.push_back(a);
  }
  if (order.size() != 3)
    return Status(Errc::kInvalidArgument, "action order must name pass, drop and alert");
  return order;
}

Result<RuleSet> load_rules(const std::vector<std::string>& paths, const Vars& vars,
                           const std::function<Result<std::string>(const std::string&)>& read) {
  RuleSet set;
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (!std::filesystem::is_directory(p, ec)) {
      files.push_back(p);
      continue;
    }
    std::vector<std::string> in_dir;
    for (const auto& e : std::filesystem::directory_iterator(p, ec)) {
      const std::string f = e.path().string();
      if (e.is_regular_file() && (f.ends_with(".rules") || f.ends_with(".rules.gz"))) in_dir.push_back(f);
    }
    if (ec) return Status(Errc::kIoError, p + ": " + ec.message());
    if (in_dir.empty()) return Status(Errc::kNotFound, p + ": no *.rules files");
    std::sort(in_dir.begin(), in_dir.end());
    files.insert(files.end(), in_dir.begin(), in_dir.end());
  }
  for (const std::string& f : files) {
    WARPATH_ASSIGN_OR_RETURN(std::string text, read(f));
    add_rules_text(set, text, f, vars);
  }
  return set;
}

std::string reason_key(const RuleProblem& p) {
  if (p.syntax) return "syntax error";
  std::string_view r = p.reason;
  if (r.starts_with("app-layer proto ")) return std::string(r);
  const size_t cut = r.find_first_of(" (");
  return std::string(r.substr(0, cut));
}

}  // namespace warpath::nids
