// src/nids/app/label_probe.hpp: protocol detection by content for the application protocols
// warpath detects without parsing them (FTP, SMTP, SSH, SMB): Suricata's detection patterns,
// so that `alert ftp|smtp|ssh|smb` rules and app-layer-protocol see the flows Suricata would
// say speak them; their rules look at the stream (internal).
#pragma once
#include <cstddef>
#include <cstdint>

#include "nids/app/http_flow.hpp"
#include "warpath/nids/app_layer.hpp"

namespace warpath::nids::detail {

/// What direction `dir`'s first `len` bytes say of `layer` (one of the label-only protocols):
/// kYes when one of its patterns is there, kMore while one still may be, else kNo.
///   FTP   client: FEAT, "USER ", "PASS ", "PORT " (any case); server: "220 (" (any case)
///   SMTP  client: EHLO, HELO, QUIT (any case)
///   SSH   either side: "SSH-"
///   SMB   either side: FF, FE or FD then "SMB" after the 4-byte NetBIOS session header
Probe probe_label(AppLayer layer, uint8_t dir, const uint8_t* data, size_t len) noexcept;

}  // namespace warpath::nids::detail
