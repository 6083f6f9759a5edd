// include/warpath/io/sa_file.hpp
//
// The SA file of the IPsec gateway: TOML whose fields follow `ip xfrm state` and
// `ip xfrm policy`, so a key pasted from an `ip xfrm state add` line works unchanged.
//
//   [[sa]]
//   src = "192.0.2.1"          dst = "192.0.2.2"      # tunnel endpoints
//   spi = 0x2001               dir = "out"            # "in" | "out"
//   mode = "tunnel"                                   # the only mode
//   enc = "rfc3686(ctr(aes))"  enc_key = "0x<key><4-byte nonce>"     # 20 or 36 bytes
//   auth = "hmac(sha1)"        auth_key = "0x<20 bytes>"   auth_trunc_bits = 96
//     (or auth = "hmac(sha256)", a key of up to 64 bytes, auth_trunc_bits = 128)
//   # or, instead of enc/auth:
//   aead = "rfc4106(gcm(aes))" aead_key = "0x<key><4-byte salt>"     icv_bits = 128
//   replay_window = 64         # inbound; default 0 (off), as the kernel's; at most 4096
//   esn = true                 # 64-bit sequence numbers (the kernel's `flag esn`)
//   replay_oseq = 0            # outbound: the last sequence number already sent (restart a
//                              # gateway with the count its last run reported, or rekey)
//   replay_seq = 0             # inbound: the highest sequence number already received
//   soft_packet_limit, hard_packet_limit, soft_byte_limit, hard_byte_limit   # lifetimes
//   mtu = 1500                 # outbound: largest outer packet (larger: dropped, too_big)
//
//   [[policy]]
//   src = "10.1.0.0/24"  dst = "10.2.0.0/24"   # selectors (IPv4 or IPv6 prefixes)
//   proto = "udp"  sport = 0  dport = 53       # optional: tcp, udp, icmp, ipv6-icmp, sctp or a number
//   dir = "out"                                # out: protect with the SA; in: must arrive through it
//   tmpl_src = "192.0.2.1"  tmpl_dst = "192.0.2.2"  spi = 0x2001   # the SA (spi optional)
//   priority = 0                               # lower first; ties in file order
//
// Errors are kParseError "file:line: sa.enc_key: reason" (or SaDatabase::build's, which name
// the entry's line).
#pragma once
#include <string>
#include <string_view>

#include "warpath/core/status.hpp"
#include "warpath/ipsec/ipsec.hpp"

namespace warpath::io {

Result<ipsec::SaConfig> parse_sa_text(std::string_view name, std::string_view text);
Result<ipsec::SaConfig> read_sa_file(const std::string& path);

}  // namespace warpath::io
