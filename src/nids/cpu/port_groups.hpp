// src/nids/cpu/port_groups.hpp: prefilter databases per port group, Suricata's signature group
// heads. Most rules name their ports ($HTTP_PORTS, 445, ...) and a direction (flow:to_server),
// so a unit would scan its group's whole database and then drop at the port and header tests
// most of what the scan found. A port group's database holds only the fast patterns of the
// group's rules that the unit's port groups (PortFilter::group_allowed) and direction allow:
// a superset of the rules that can match the unit, so the same alerts, from a smaller scan.
// ET Open over HTTP traffic with clients on ephemeral ports: 182 of the TCP stream group's
// 1,268 patterns towards the server, 110 towards the client; the NIDS bench's detection about
// twice as fast (docs/adr/0013-nids.md).
//
// A database is compiled on first use, once per image (PrefilterCache, shared by the image's
// detectors; pairs with the same rules share one), and each detector scans its own clone
// (Matcher::clone: its own scratch). A compile stalls the detector that needs it (2-20 ms
// for ET Open's sets), not the image's other detectors. Bounded, against traffic that would
// visit every port (a scan): at most kMaxDatabases per image, kMaxBytes of their databases
// (each in the mode it was made for: a block database made later is not counted) and
// kMaxCompileNs of compiling; past that, and for sets that keep most of their group, the
// group's own database serves (the port filter and the header test keep the answers the same).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>  // std::mutex, std::once_flag
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

/// An image's prefilter databases by key, each compiled once and cloned by every detector
/// (port groups' by group and rule set; rule and app groups' in an unbounded one:
/// shared_matcher); thread-safe.
class PrefilterCache {
 public:
  /// `bounded`: the bounds below hold (port groups: their number grows with the traffic);
  /// unbounded for a fixed set of databases (the rule groups', the app groups').
  explicit PrefilterCache(bool bounded = true) : bounded_(bounded) {}
  static constexpr size_t kMaxDatabases   = 128;
  static constexpr size_t kMaxBytes       = size_t(64) << 20;  ///< database_bytes() summed
  static constexpr uint64_t kMaxCompileNs = 1000000000;        ///< 1 s of compiling in all
  /// The database for `key`, made by `make` (null: none) on the first call for the key, while
  /// the bounds hold; nullptr past them. A call for a key being made waits for it; calls for
  /// other keys do not. `made`: whether this call made it.
  std::shared_ptr<const PortDbSource> get(
      const std::string& key, const std::function<std::unique_ptr<PortDbSource>()>& make,
      bool& made);
  /// Databases made or being made (a set the engine could not take counted too).
  size_t size();

 private:
  struct Entry {
    std::once_flag once;
    std::shared_ptr<const PortDbSource> source;  // null: the engine could not take the set
  };
  bool bounded_;
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<Entry>> map_;
  size_t made_ = 0, bytes_ = 0;
  uint64_t compile_ns_ = 0;
};

/// A detector's own matcher for `patterns`: a clone of the one the image's `cache` holds under
/// `key` (compiled there by the first detector that asks, with make_stream_matcher when
/// `streaming`), or compiled for it alone where the cache or the engine cannot share.
Result<std::unique_ptr<pattern::Matcher>> shared_matcher(PrefilterCache& cache,
                                                          const std::string& key,
                                                          const std::string& engine,
                                                          const std::vector<pattern::Pattern>& patterns,
                                                          bool streaming);

/// A detector's port group database: its own clone of the image's.
struct PortDb {
  std::shared_ptr<const PortDbSource> source;  ///< its pattern ids' rules: source->by_pattern
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
