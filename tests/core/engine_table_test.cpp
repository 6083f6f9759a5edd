// tests/core/engine_table_test.cpp: EngineTable (src/core/engine_table.hpp), the one table per
// module of engines and their factories, on a toy interface: resolution (auto, the cpu/ref
// aliases, validate:), the errors for unknown and unavailable engines, a factory that gives no
// engine, the validating wrapper getting the factory's arguments, and traits found by id.
#include "core/engine_table.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace warpath {
namespace {

struct Toy {
  virtual ~Toy()                               = default;
  virtual std::string_view id() const noexcept = 0;
  virtual int answer() const                   = 0;
};

class Fixed final : public Toy {
 public:
  Fixed(std::string id, int v) : id_(std::move(id)), v_(v) {}
  std::string_view id() const noexcept override { return id_; }
  int answer() const override { return v_; }

 private:
  std::string id_;
  int v_;
};

// validate:<id>: remembers the argument the table passed on.
class Wrapped final : public Toy {
 public:
  Wrapped(std::unique_ptr<Toy> inner, int arg) : inner_(std::move(inner)), arg_(arg) {}
  std::string_view id() const noexcept override { return "validate:wrapped"; }
  int answer() const override { return inner_->answer() * 1000 + arg_; }

 private:
  std::unique_ptr<Toy> inner_;
  int arg_;
};

struct Traits {
  bool updates = false;
};

using Table = EngineTable<Toy(int), Traits>;

bool never() { return false; }

const Table& table() {
  static const Table t(
      "toy",
      {
          {{"ref.toy", "oracle", 0, engine_always},
           [](int a) -> Table::Made { return std::unique_ptr<Toy>(std::make_unique<Fixed>("ref.toy", a)); },
           {true}},
          {{"cpu.toy", "fast", 10, engine_always},
           [](int a) -> Table::Made { return std::unique_ptr<Toy>(std::make_unique<Fixed>("cpu.toy", a + 1)); }},
          {{"cpu.toy.slow", "slow", 5, engine_always},
           [](int a) -> Table::Made { return std::unique_ptr<Toy>(std::make_unique<Fixed>("cpu.toy.slow", a + 2)); }},
          {{"cpu.absent", "not on this machine", 20, never},
           [](int) -> Table::Made { return Status(Errc::kIoError, "must not be built"); }},
          {{"cpu.null", "a factory that gives nothing", 1, engine_always},
           [](int) -> Table::Made { return std::unique_ptr<Toy>(); }},
          {{"cpu.fails", "a factory that refuses", 1, engine_always},
           [](int) -> Table::Made { return Status(Errc::kCapacity, "too big"); }},
      },
      &Table::wrap<Wrapped>);
  return t;
}

TEST(EngineTable, ListsEveryEntryInOrder) {
  ASSERT_EQ(table().infos().size(), 6u);
  EXPECT_EQ(table().infos()[0].id, "ref.toy");
  EXPECT_EQ(table().infos()[3].id, "cpu.absent");
}

TEST(EngineTable, ResolvesAutoAndAliases) {
  // auto: the available engine of the highest priority (cpu.absent is higher but absent).
  auto a = table().make("auto", 1);
  ASSERT_TRUE(a.is_ok()) << a.status().message();
  EXPECT_EQ(a.value()->id(), "cpu.toy");
  EXPECT_EQ(a.value()->answer(), 2);
  auto r = table().make("ref", 1);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r.value()->id(), "ref.toy");
  auto s = table().make("cpu.toy.slow", 1);
  ASSERT_TRUE(s.is_ok());
  EXPECT_EQ(s.value()->answer(), 3);
}

TEST(EngineTable, ValidateWrapsWithTheArguments) {
  auto v = table().make("validate:cpu.toy.slow", 7);
  ASSERT_TRUE(v.is_ok()) << v.status().message();
  EXPECT_EQ(v.value()->id(), "validate:wrapped");
  EXPECT_EQ(v.value()->answer(), 9 * 1000 + 7);
}

TEST(EngineTable, Errors) {
  auto unknown = table().make("cpu.nope", 1);
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_EQ(unknown.status().code(), Errc::kNotFound);
  EXPECT_NE(unknown.status().message().find("unknown toy engine 'cpu.nope'"), std::string::npos)
      << unknown.status().message();
  EXPECT_NE(unknown.status().message().find("cpu.toy.slow"), std::string::npos);

  auto absent = table().make("cpu.absent", 1);
  ASSERT_FALSE(absent.is_ok());
  EXPECT_EQ(absent.status().code(), Errc::kNotSupported);
  EXPECT_NE(absent.status().message().find("not available"), std::string::npos);

  auto null = table().make("cpu.null", 1);
  ASSERT_FALSE(null.is_ok());
  EXPECT_EQ(null.status().code(), Errc::kNotSupported);
  EXPECT_EQ(null.status().message(), "cpu.null could not start");

  // A factory's own error passes through unchanged, and is not wrapped under validate:.
  auto fails = table().make("validate:cpu.fails", 1);
  ASSERT_FALSE(fails.is_ok());
  EXPECT_EQ(fails.status().code(), Errc::kCapacity);
  EXPECT_EQ(fails.status().message(), "too big");
}

TEST(EngineTable, TraitsByIdWithOrWithoutValidate) {
  ASSERT_NE(table().find("ref.toy"), nullptr);
  EXPECT_TRUE(table().find("ref.toy")->traits.updates);
  EXPECT_TRUE(table().find("validate:ref.toy")->traits.updates);
  EXPECT_FALSE(table().find("cpu.toy")->traits.updates);
  EXPECT_EQ(table().find("cpu.nope"), nullptr);
}

}  // namespace
}  // namespace warpath
