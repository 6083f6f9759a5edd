// src/io/sa_file.cpp: the SA file (include/warpath/io/sa_file.hpp), read with toml++.
#include <toml++/toml.h>

#include <exception>
#include <string>

#include "warpath/io/sa_file.hpp"
#include "warpath/io/text_file.hpp"

namespace warpath::io {
namespace {

using ipsec::Cipher;
using ipsec::Dir;
using ipsec::Integrity;

class SaLoader {
 public:
  explicit SaLoader(std::string_view name) : name_(name) {}

  Result<ipsec::SaConfig> load(const toml::table& root) {
    for (auto&& [k, v] : root) {
      const std::string key(k.str());
      line_ = uint32_t(k.source().begin.line);
      if (key != "sa" && key != "policy")
        return err(key, "unknown table (known: [[sa]], [[policy]])");
      const toml::array* a = v.as_array();
      if (!a) return err(key, "must be an array of tables ([[" + key + "]])");
      for (const toml::node& e : *a) {
        const toml::table* t = e.as_table();
        if (e.source().begin.line) line_ = uint32_t(e.source().begin.line);
        if (!t) return err(key, "must be a table");
        WARPATH_TRY(key == "sa" ? sa(*t) : policy(*t));
      }
    }
    return std::move(out_);
  }

 private:
  Status err(const std::string& key, const std::string& why) const {
    return Status(Errc::kParseError, name_ + ":" + std::to_string(line_) + ": " + key + ": " + why);
  }
  std::string where() const { return name_ + ":" + std::to_string(line_); }

  Result<std::string> str(const toml::table& t, const char* table, const char* key, bool required) {
    const toml::node* n = t.get(key);
    if (!n) {
      if (required) return err(std::string(table) + "." + key, "missing");
      return std::string();
    }
    if (n->source().begin.line) line_ = uint32_t(n->source().begin.line);
    const auto* s = n->as_string();
    if (!s) return err(std::string(table) + "." + key, "must be a string");
    return std::string(s->get());
  }
  // An integer, or a "0x..." string (SPIs are written both ways).
  Result<uint64_t> num(const toml::table& t, const char* table, const char* key, uint64_t fallback,
                       uint64_t max) {
    const toml::node* n = t.get(key);
    if (!n) return fallback;
    if (n->source().begin.line) line_ = uint32_t(n->source().begin.line);
    const std::string full = std::string(table) + "." + key;
    uint64_t v = 0;
    if (const auto* i = n->as_integer()) {
      if (i->get() < 0) return err(full, "must not be negative");
      v = uint64_t(i->get());
    } else if (const auto* s = n->as_string()) {
      const std::string& text = s->get();
      size_t used = 0;
      try {
        v = std::stoull(text, &used, 0);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != text.size() || text.empty() || text[0] == '-')
        return err(full, "'" + text + "' is not a number");
    } else {
      return err(full, "must be an integer");
    }
    if (v > max) return err(full, std::to_string(v) + " is over " + std::to_string(max));
    return v;
  }
  Result<std::vector<uint8_t>> hex(const toml::table& t, const char* table, const char* key) {
    WARPATH_ASSIGN_OR_RETURN(std::string s, str(t, table, key, true));
    auto bytes = ipsec::parse_hex_bytes(s);
    if (!bytes.is_ok()) return err(std::string(table) + "." + key, bytes.status().message());
    return bytes;
  }
  Status check_keys(const toml::table& t, const char* table, std::initializer_list<const char*> known) {
    for (auto&& [k, v] : t) {
      bool ok = false;
      for (const char* n : known) ok = ok || k.str() == n;
      if (!ok) {
        line_ = uint32_t(k.source().begin.line);
        std::string list;
        for (const char* n : known) list += (list.empty() ? "" : ", ") + std::string(n);
        return err(std::string(table) + "." + std::string(k.str()), "unknown field (known: " + list + ")");
      }
    }
    return Status::ok();
  }
  Result<Dir> dir(const toml::table& t, const char* table) {
    WARPATH_ASSIGN_OR_RETURN(std::string d, str(t, table, "dir", true));
    if (d == "in") return Dir::kIn;
    if (d == "out") return Dir::kOut;
    if (d == "fwd")
      return err(std::string(table) + ".dir", "'fwd': a gateway's forwarded traffic uses in (decapsulated) and out");
    return err(std::string(table) + ".dir", "'" + d + "': must be in or out");
  }
  Result<ipsec::Addr> addr(const toml::table& t, const char* table, const char* key) {
    WARPATH_ASSIGN_OR_RETURN(std::string s, str(t, table, key, true));
    auto a = ipsec::parse_addr(s);
    if (!a.is_ok()) return err(std::string(table) + "." + key, a.status().message());
    return a.value();
  }
  Result<ipsec::Prefix> prefix(const toml::table& t, const char* table, const char* key) {
    WARPATH_ASSIGN_OR_RETURN(std::string s, str(t, table, key, true));
    auto p = ipsec::parse_prefix(s);
    if (!p.is_ok()) return err(std::string(table) + "." + key, p.status().message());
    return p.value();
  }

  Status sa(const toml::table& t) {
    const uint32_t start = line_;
    WARPATH_TRY(check_keys(t, "sa", {"src", "dst", "spi", "dir", "mode", "enc", "enc_key", "auth",
                                     "auth_key", "auth_trunc_bits", "aead", "aead_key", "icv_bits",
                                     "replay_window", "esn", "replay_oseq", "replay_seq", "soft_packet_limit",
                                     "hard_packet_limit", "soft_byte_limit", "hard_byte_limit", "mtu", "reqid"}));
    ipsec::SaSpec s;
    s.where = where();
    WARPATH_ASSIGN_OR_RETURN(s.src, addr(t, "sa", "src"));
    WARPATH_ASSIGN_OR_RETURN(s.dst, addr(t, "sa", "dst"));
    WARPATH_ASSIGN_OR_RETURN(uint64_t spi, num(t, "sa", "spi", 0, 0xFFFFFFFFu));
    if (!t.get("spi")) return err("sa.spi", "missing");
    s.spi = uint32_t(spi);
    WARPATH_ASSIGN_OR_RETURN(s.dir, dir(t, "sa"));
    WARPATH_ASSIGN_OR_RETURN(std::string mode, str(t, "sa", "mode", false));
    if (!mode.empty() && mode != "tunnel") return err("sa.mode", "'" + mode + "': only tunnel mode is supported");
    WARPATH_ASSIGN_OR_RETURN(std::string enc, str(t, "sa", "enc", false));
    WARPATH_ASSIGN_OR_RETURN(std::string aead, str(t, "sa", "aead", false));
    ipsec::SaKeys& k = s.keys;
    if (!enc.empty() == !aead.empty()) return err("sa", "give either enc (with auth) or aead");
    auto set_key = [&](const std::vector<uint8_t>& key, const char* field) -> Status {
      if (key.size() != 20 && key.size() != 36)
        return err(std::string("sa.") + field,
                   std::to_string(key.size()) + " bytes: must be a 16- or 32-byte AES key followed by the 4-byte " +
                       (k.cipher == Cipher::kAesGcm ? "salt" : "nonce") + " (20 or 36 bytes)");
      k.key_bytes = uint8_t(key.size() - 4);
      std::copy(key.begin(), key.end() - 4, k.key.begin());
      std::copy(key.end() - 4, key.end(), k.nonce.begin());
      return Status::ok();
    };
    if (!enc.empty()) {
      if (enc != "rfc3686(ctr(aes))")
        return err("sa.enc", "'" + enc + "': supported: rfc3686(ctr(aes)) (with auth), or aead rfc4106(gcm(aes))");
      k.cipher = Cipher::kAesCtr;
      WARPATH_ASSIGN_OR_RETURN(std::vector<uint8_t> key, hex(t, "sa", "enc_key"));
      WARPATH_TRY(set_key(key, "enc_key"));
      WARPATH_ASSIGN_OR_RETURN(std::string auth, str(t, "sa", "auth", true));
      if (auth == "hmac(sha1)") k.integrity = Integrity::kHmacSha1;
      else if (auth == "hmac(sha256)") k.integrity = Integrity::kHmacSha256;
      else return err("sa.auth", "'" + auth + "': supported: hmac(sha1), hmac(sha256)");
      WARPATH_ASSIGN_OR_RETURN(std::vector<uint8_t> akey, hex(t, "sa", "auth_key"));
      if (akey.size() > 64) return err("sa.auth_key", "longer than the hash's 64-byte block");
      k.auth_key_bytes = uint8_t(akey.size());
      std::copy(akey.begin(), akey.end(), k.auth_key.begin());
      const uint64_t want = k.integrity == Integrity::kHmacSha1 ? 96 : 128;
      WARPATH_ASSIGN_OR_RETURN(uint64_t bits, num(t, "sa", "auth_trunc_bits", want, 1024));
      if (bits != want)
        return err("sa.auth_trunc_bits", std::to_string(bits) + ": " + std::string(ipsec::integrity_name(k.integrity)) +
                                               " is used with " + std::to_string(want) + " (RFC 2404 / RFC 4868)");
      k.icv_bytes = uint8_t(want / 8);
    } else {
      if (aead != "rfc4106(gcm(aes))") return err("sa.aead", "'" + aead + "': supported: rfc4106(gcm(aes))");
      k.cipher    = Cipher::kAesGcm;
      k.integrity = Integrity::kNone;
      WARPATH_ASSIGN_OR_RETURN(std::vector<uint8_t> key, hex(t, "sa", "aead_key"));
      WARPATH_TRY(set_key(key, "aead_key"));
      WARPATH_ASSIGN_OR_RETURN(uint64_t bits, num(t, "sa", "icv_bits", 128, 1024));
      if (bits != 128) return err("sa.icv_bits", std::to_string(bits) + ": only 128-bit ICVs are supported");
      k.icv_bytes = 16;
      for (const char* f : {"auth", "auth_key", "auth_trunc_bits", "enc_key"})
        if (t.get(f)) return err(std::string("sa.") + f, "not with aead (GCM authenticates itself)");
    }
    if (const toml::node* n = t.get("esn")) {
      if (!n->as_boolean()) return err("sa.esn", "must be true or false");
      k.esn = n->as_boolean()->get();
    }
    WARPATH_ASSIGN_OR_RETURN(uint64_t w, num(t, "sa", "replay_window", 0, 4096));
    s.replay_window = uint32_t(w);
    if (w && s.dir == Dir::kOut) return err("sa.replay_window", "only inbound SAs check replays");
    WARPATH_ASSIGN_OR_RETURN(s.replay_oseq, num(t, "sa", "replay_oseq", 0, k.esn ? ~uint64_t(0) : 0xFFFFFFFFu));
    WARPATH_ASSIGN_OR_RETURN(s.replay_seq, num(t, "sa", "replay_seq", 0, k.esn ? ~uint64_t(0) : 0xFFFFFFFFu));
    if (s.replay_oseq && s.dir == Dir::kIn) return err("sa.replay_oseq", "outbound SAs only (inbound: replay_seq)");
    if (s.replay_seq && s.dir == Dir::kOut) return err("sa.replay_seq", "inbound SAs only (outbound: replay_oseq)");
    WARPATH_ASSIGN_OR_RETURN(s.soft_packets, num(t, "sa", "soft_packet_limit", 0, ~uint64_t(0)));
    WARPATH_ASSIGN_OR_RETURN(s.hard_packets, num(t, "sa", "hard_packet_limit", 0, ~uint64_t(0)));
    WARPATH_ASSIGN_OR_RETURN(s.soft_bytes, num(t, "sa", "soft_byte_limit", 0, ~uint64_t(0)));
    WARPATH_ASSIGN_OR_RETURN(s.hard_bytes, num(t, "sa", "hard_byte_limit", 0, ~uint64_t(0)));
    WARPATH_ASSIGN_OR_RETURN(uint64_t mtu, num(t, "sa", "mtu", 1500, 65535));
    if (mtu < 576 && s.src.family == 4) return err("sa.mtu", "under IPv4's minimum of 576");
    if (mtu < 1280 && s.src.family == 6) return err("sa.mtu", "under IPv6's minimum of 1280");
    s.mtu = uint16_t(mtu);
    line_ = start;
    out_.sas.push_back(std::move(s));
    return Status::ok();
  }

  Status policy(const toml::table& t) {
    WARPATH_TRY(check_keys(t, "policy", {"src", "dst", "proto", "sport", "dport", "dir", "tmpl_src",
                                         "tmpl_dst", "spi", "priority", "reqid", "mode"}));
    ipsec::PolicySpec p;
    p.where = where();
    WARPATH_ASSIGN_OR_RETURN(p.src, prefix(t, "policy", "src"));
    WARPATH_ASSIGN_OR_RETURN(p.dst, prefix(t, "policy", "dst"));
    if (const toml::node* n = t.get("proto")) {
      if (const auto* s = n->as_string()) {
        const std::string& v = s->get();
        if (v == "any") p.proto = 0;
        else if (v == "tcp") p.proto = 6;
        else if (v == "udp") p.proto = 17;
        else if (v == "icmp") p.proto = 1;
        else if (v == "ipv6-icmp") p.proto = 58;
        else if (v == "sctp") p.proto = 132;
        else {
          line_ = uint32_t(n->source().begin.line);
          return err("policy.proto", "'" + v + "': tcp, udp, icmp, ipv6-icmp, sctp, any or a number");
        }
      } else {
        WARPATH_ASSIGN_OR_RETURN(uint64_t v, num(t, "policy", "proto", 0, 255));
        p.proto = uint8_t(v);
      }
    }
    WARPATH_ASSIGN_OR_RETURN(uint64_t sport, num(t, "policy", "sport", 0, 65535));
    WARPATH_ASSIGN_OR_RETURN(uint64_t dport, num(t, "policy", "dport", 0, 65535));
    p.sport = uint16_t(sport);
    p.dport = uint16_t(dport);
    WARPATH_ASSIGN_OR_RETURN(p.dir, dir(t, "policy"));
    WARPATH_ASSIGN_OR_RETURN(p.tmpl_src, addr(t, "policy", "tmpl_src"));
    WARPATH_ASSIGN_OR_RETURN(p.tmpl_dst, addr(t, "policy", "tmpl_dst"));
    WARPATH_ASSIGN_OR_RETURN(uint64_t spi, num(t, "policy", "spi", 0, 0xFFFFFFFFu));
    p.spi = uint32_t(spi);
    if (const toml::node* n = t.get("priority")) {
      const auto* i = n->as_integer();
      if (!i) return err("policy.priority", "must be an integer");
      p.priority = int32_t(i->get());
    }
    out_.policies.push_back(std::move(p));
    return Status::ok();
  }

  std::string name_;
  uint32_t line_ = 1;
  ipsec::SaConfig out_;
};

}  // namespace

Result<ipsec::SaConfig> parse_sa_text(std::string_view name, std::string_view text) {
  WARPATH_TRY(check_toml_ascii(text, name));
  toml::table root;
  try {
    root = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    return Status(Errc::kParseError, std::string(name) + ":" + std::to_string(e.source().begin.line) +
                                         ": " + std::string(e.description()));
  }
  return SaLoader(name).load(root);
}

Result<ipsec::SaConfig> read_sa_file(const std::string& path) {
  WARPATH_ASSIGN_OR_RETURN(std::string text, read_text_file(path));
  return parse_sa_text(path, text);
}

}  // namespace warpath::io
