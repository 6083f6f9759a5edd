// src/nids/cpu/port_groups.hpp: prefilter databases per port group, Suricata's signature group
// heads. Most rules name their ports ($HTTP_PORTS, 445, ...), so a unit would scan its group's
// whole database and then drop at the port filter most of what the scan found. A port group's
// database holds only the fast patterns of the group's rules that the unit's port groups
// (PortFilter::group_allowed) allow: the same candidates after the port filter, from a
// smaller scan. ET Open over HTTP traffic: about 250 of the TCP stream group's 1,268 patterns,
// 24 of the TCP packet group's 91; the NIDS bench's detection about a third faster
// (docs/adr/0013-nids.md).
//
// A database is compiled on first use, once per image (PrefilterCache, shared by the image's
// detectors; pairs with the same rules share one), and each detector scans its own clone
// (Matcher::clone: its own scratch). Bounded, against traffic that would visit every port
// (a scan): at most kMaxDatabases per image and kMaxBytes of them; past that, and for sets
// that keep most of their group, the group's own database serves (the port filter keeps the
// answers the same).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "nids/cpu/rule_groups.hpp"

namespace warpath::nids::detail {

/// A port group's database as the image keeps it.
struct PortDbSource {
  std::vector<uint32_t> by_pattern;         ///< pattern id -> rule, ascending
  std::vector<pattern::Pattern> patterns;   ///< to compile again for an engine that cannot clone
  std::unique_ptr<pattern::Matcher> proto;  ///< never scanned: the detectors scan clones
};

/// The image's port group databases, by key (group and rule set); thread-safe.
class PrefilterCache {
 public:
  static constexpr size_t kMaxDatabases = 128;
  static constexpr size_t kMaxBytes     = size_t(64) << 20;  ///< their block databases' bytes
  /// The database for `key`, made by `make` (null: none) on the first call for the key, at
  /// most kMaxDatabases of them and kMaxBytes; nullptr past that. `made`: whether this call
  /// made it.
  std::shared_ptr<const PortDbSource> get(
      const std::string& key, const std::function<std::unique_ptr<PortDbSource>()>& make,
      bool& made);
  /// Databases made so far (those the bound refused not counted).
  size_t size();

 private:
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const PortDbSource>> map_;  // null: none
  size_t made_ = 0, bytes_ = 0;
};

/// A detector's port group database: its own clone of the image's.
struct PortDb {
  std::shared_ptr<const PortDbSource> source;
  std::vector<uint32_t> by_pattern;  ///< the source's
  std::unique_ptr<pattern::Matcher> prefilter;
};

/// A detector's port group databases.
class PortGroups {
 public:
  /// A port group's database is used when it keeps at most this share of its group's patterns
  /// (in eighths): nearer the whole group, the smaller scan is not worth a database.
  static constexpr size_t kMaxShareEighths = 6;

  PortGroups(const Image& img, std::string engine) : img_(img), engine_(std::move(engine)) {}

  /// The database of group `g` (kind, class) over the rules `allowed` (a PortFilter set, here a
  /// port group's: PortFilter::group_allowed) keeps, or nullptr when the group's own database
  /// is to be used.
  const PortDb* get(int kind, int cls, const Group& g, const uint64_t* allowed);

  /// Databases this detector scans, and the time it spent getting them (compiling those the
  /// image did not have yet, cloning).
  uint64_t databases() const noexcept { return databases_; }
  uint64_t compile_ns() const noexcept { return compile_ns_; }

 private:
  const Image& img_;
  std::string engine_;
  std::unordered_map<std::string, std::unique_ptr<PortDb>> dbs_;  // null: the group's own
  uint64_t databases_ = 0, compile_ns_ = 0;
};

}  // namespace warpath::nids::detail
