// tests/core/validating_test.cpp: ValidatingPair (src/core/validating.hpp), the base of every
// validate:<engine> wrapper, on a toy interface: the wrapper's id, the first difference of a
// batch, lists of records, counters, and updates applied to both.
#include "core/validating.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace warpath {
namespace {

// A toy engine: answers x * factor for each key; "insert" refuses negative values.
struct Doubler {
  virtual ~Doubler()                                  = default;
  virtual std::string_view id() const noexcept        = 0;
  virtual Status answer(const std::vector<int>& keys, std::vector<int>& out) const = 0;
  virtual Status insert(int v)                        = 0;
};

class Toy final : public Doubler {
 public:
  Toy(std::string id, int factor, bool refuse_all = false)
      : id_(std::move(id)), factor_(factor), refuse_all_(refuse_all) {}
  std::string_view id() const noexcept override { return id_; }
  Status answer(const std::vector<int>& keys, std::vector<int>& out) const override {
    out.clear();
    for (int k : keys) out.push_back(k == 7 ? k * factor_ : k * 2);  // differ only at 7
    return Status::ok();
  }
  Status insert(int v) override {
    if (refuse_all_ || v < 0) return Status(refuse_code, "no");
    inserted.push_back(v);
    return Status::ok();
  }
  std::vector<int> inserted;
  Errc refuse_code = Errc::kInvalidArgument;

 private:
  std::string id_;
  int factor_;
  bool refuse_all_;
};

struct Rec {
  int v = 0;
  bool operator==(const Rec& o) const { return v == o.v; }
};

class ValidatingToy final : public ValidatingPair<Doubler> {
 public:
  ValidatingToy(std::unique_ptr<Toy> e, std::unique_ptr<Toy> r)
      : ValidatingPair(std::move(e), std::move(r), "ref.toy") {}
  Status answer(const std::vector<int>& keys, std::vector<int>& out) const override {
    std::vector<int> want;
    WARPATH_TRY(engine_->answer(keys, out));
    WARPATH_TRY(ref_->answer(keys, want));
    return first_difference(
        uint32_t(keys.size()), "key", [&](uint32_t i) { return out[i] == want[i]; },
        [&](uint32_t i) {
          return ": got " + std::to_string(out[i]) + ", want " + std::to_string(want[i]);
        });
  }
  Status insert(int v) override {
    return update_both([&](Doubler& d) { return d.insert(v); });
  }
  Status records(const std::vector<Rec>& got, size_t from, const std::vector<Rec>& want) const {
    return same_records(got, from, want, "records",
                        [](const Rec& r) { return "v=" + std::to_string(r.v); });
  }
  Status counters(int a, int b) const { return same_counters(a, b); }
};

TEST(ValidatingPair, TheIdNamesTheEngine) {
  ValidatingToy v(std::make_unique<Toy>("cpu.toy", 2), std::make_unique<Toy>("ref.toy", 2));
  EXPECT_EQ(v.id(), "validate:cpu.toy");
}

TEST(ValidatingPair, TheFirstDifferenceOfABatchNamesItsItemAndBothAnswers) {
  ValidatingToy same(std::make_unique<Toy>("cpu.toy", 2), std::make_unique<Toy>("ref.toy", 2));
  std::vector<int> out;
  EXPECT_TRUE(same.answer({1, 7, 7}, out).is_ok());
  EXPECT_TRUE(same.answer({}, out).is_ok());  // an empty batch

  ValidatingToy bad(std::make_unique<Toy>("cpu.toy", 3), std::make_unique<Toy>("ref.toy", 2));
  EXPECT_TRUE(bad.answer({1, 2, 3}, out).is_ok());
  const Status s = bad.answer({1, 2, 7, 7}, out);
  EXPECT_EQ(s.code(), Errc::kInvalidArgument);
  EXPECT_NE(s.message().find("cpu.toy differs from ref.toy at key 2: got 21, want 14"),
            std::string::npos)
      << s.message();
}

TEST(ValidatingPair, RecordsAreComparedByCountThenInOrder) {
  ValidatingToy v(std::make_unique<Toy>("cpu.toy", 2), std::make_unique<Toy>("ref.toy", 2));
  const std::vector<Rec> got = {{9}, {1}, {2}};  // the first was there before (from = 1)
  EXPECT_TRUE(v.records(got, 1, {{1}, {2}}).is_ok());
  const Status fewer = v.records(got, 1, {{1}, {2}, {3}});
  EXPECT_NE(fewer.message().find("cpu.toy gave 2 records, ref.toy 3"), std::string::npos)
      << fewer.message();
  const Status other = v.records(got, 1, {{1}, {5}});
  EXPECT_NE(other.message().find("cpu.toy records #1: v=2, ref.toy v=5"), std::string::npos)
      << other.message();
  EXPECT_TRUE(v.counters(4, 4).is_ok());
  EXPECT_NE(v.counters(4, 5).message().find("cpu.toy: counters differ from ref.toy"),
            std::string::npos);
}

TEST(ValidatingPair, UpdatesGoToBothAndDisagreementIsAnError) {
  auto e = std::make_unique<Toy>("cpu.toy", 2);
  auto r = std::make_unique<Toy>("ref.toy", 2);
  Toy* ep = e.get();
  Toy* rp = r.get();
  ValidatingToy v(std::move(e), std::move(r));
  EXPECT_TRUE(v.insert(5).is_ok());
  EXPECT_EQ(ep->inserted, std::vector<int>{5});
  EXPECT_EQ(rp->inserted, std::vector<int>{5});
  // Both refuse alike: the engine's own error, not a difference.
  const Status both = v.insert(-1);
  EXPECT_EQ(both.code(), Errc::kInvalidArgument);
  EXPECT_EQ(both.message(), "no");

  // An engine that takes no updates answers alone; the reference is not changed.
  auto fixed = std::make_unique<Toy>("cpu.fixed", 2, /*refuse_all=*/true);
  fixed->refuse_code = Errc::kNotSupported;
  auto ref2  = std::make_unique<Toy>("ref.toy", 2);
  Toy* r2    = ref2.get();
  ValidatingToy frozen(std::move(fixed), std::move(ref2));
  EXPECT_EQ(frozen.insert(4).code(), Errc::kNotSupported);
  EXPECT_TRUE(r2->inserted.empty());

  ValidatingToy split(std::make_unique<Toy>("cpu.toy", 2),
                      std::make_unique<Toy>("ref.toy", 2, /*refuse_all=*/true));
  const Status s = split.insert(3);
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("cpu.toy answered 'ok' to an update, ref.toy"), std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace warpath
