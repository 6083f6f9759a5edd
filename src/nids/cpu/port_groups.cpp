// Prefilter databases per port group (src/nids/cpu/port_groups.hpp).
#include "nids/cpu/port_groups.hpp"

#include <bit>
#include <chrono>
#include <cstring>

namespace warpath::nids::detail {

std::shared_ptr<PrefilterCache> make_prefilter_cache(bool bounded) {
  return std::make_shared<PrefilterCache>(bounded);
}

Result<std::unique_ptr<pattern::Matcher>> shared_matcher(PrefilterCache& cache,
                                                          const std::string& key,
                                                          const std::string& engine,
                                                          const std::vector<pattern::Pattern>& patterns,
                                                          bool streaming) {
  auto compile = [&] {
    return streaming ? pattern::make_stream_matcher(engine, patterns)
                     : pattern::make_matcher(engine, patterns);
  };
  // An engine whose matchers cannot clone (cpu.ac, cuda.ac: Matcher::clone kNotSupported)
  // leaves nothing in the image: the first detector keeps what it compiled (`mine`), the others
  // compile their own, and no prototype holds memory (device memory for cuda.ac) unused.
  std::unique_ptr<pattern::Matcher> mine;
  bool made = false;
  std::shared_ptr<const PortDbSource> src = cache.get(
      key,
      [&]() -> std::unique_ptr<PortDbSource> {
        auto m = compile();
        if (!m.is_ok()) return nullptr;
        if (!(*m)->clone().is_ok()) {
          mine = std::move(*m);
          return nullptr;
        }
        auto s   = std::make_unique<PortDbSource>();
        s->proto = std::move(*m);
        return s;
      },
      made);
  if (mine) return mine;
  if (src)
    if (auto c = src->proto->clone(); c.is_ok()) return c;
  return compile();  // not shared (past the bounds, or an engine that cannot clone): its own
}

std::shared_ptr<const PortDbSource> PrefilterCache::get(
    const std::string& key, const std::function<std::unique_ptr<PortDbSource>()>& make,
    bool& made) {
  made = false;
  std::shared_ptr<Entry> e;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = map_.find(key); it != map_.end()) {
      e = it->second;
    } else {
      // Past the bounds: not remembered (the bounds hold either way).
      if (bounded_ &&
          (made_ >= kMaxDatabases || bytes_ >= kMaxBytes || compile_ns_ >= kMaxCompileNs))
        return nullptr;
      ++made_;
      e = std::make_shared<Entry>();
      map_.emplace(key, e);
    }
  }
  // Compiled outside the lock: a detector needing another database does not wait for it.
  std::call_once(e->once, [&] {
    made          = true;
    const auto t0 = std::chrono::steady_clock::now();
    e->source     = make();
    const auto ns = uint64_t(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
            .count());
    std::lock_guard<std::mutex> lock(mu_);
    compile_ns_ += ns;
    if (e->source) bytes_ += e->source->proto->database_bytes();
  });
  return e->source;
}

size_t PrefilterCache::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return made_;
}

const PortDb* PortGroups::get(int kind, int cls, const Group& g, const uint64_t* allowed) {
  const size_t words = g.members.size();
  std::string key(2 + words * sizeof(uint64_t), '\0');
  key[0]      = char(kind);
  key[1]      = char(cls);
  size_t kept = 0;
  for (size_t w = 0; w < words; ++w) {
    const uint64_t m = g.members[w] & allowed[w];
    std::memcpy(&key[2 + w * sizeof(uint64_t)], &m, sizeof m);
    kept += size_t(std::popcount(m));
  }
  if (kept == 0 || kept * 8 > g.by_pattern.size() * kMaxShareEighths) return nullptr;
  if (auto it = dbs_.find(key); it != dbs_.end()) return it->second.get();

  const auto t0 = std::chrono::steady_clock::now();
  auto make     = [&]() -> std::unique_ptr<PortDbSource> {
    auto src = std::make_unique<PortDbSource>();
    for (uint32_t rule : g.by_pattern)  // ascending, as the group's
      if (allowed[rule / 64] >> (rule % 64) & 1) {
        src->patterns.push_back(
                prefilter_pattern(*img_.fast_pattern(rule), uint32_t(src->by_pattern.size())));
        src->by_pattern.push_back(rule);
      }
    // A stream group's scans are its streams': its streaming database alone, now.
    auto m = kind == 2 ? pattern::make_stream_matcher(engine_, src->patterns)
                       : pattern::make_matcher(engine_, src->patterns);
    if (!m.is_ok()) return nullptr;  // a set the engine cannot take: the group's database
    src->proto = std::move(*m);
    return src;
  };
  bool made                               = false;
  std::shared_ptr<const PortDbSource> src = img_.prefilter_cache().get(key, make, made);
  std::unique_ptr<PortDb> db;
  if (src) {
    db         = std::make_unique<PortDb>();
    db->source = src;
    auto c     = src->proto->clone();
    if (!c.is_ok()) c = pattern::make_matcher(engine_, src->patterns);  // cannot share: again
    if (c.is_ok())
      db->prefilter = std::move(*c);
    else
      db.reset();
  }
  compile_ns_ += uint64_t(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
          .count());
  if (db) ++databases_;
  auto& slot = dbs_[key];
  slot       = std::move(db);
  return slot.get();
}

}  // namespace warpath::nids::detail
