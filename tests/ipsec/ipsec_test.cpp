// ESP: the crypto engines against published vectors and each other, the anti-replay window
// (RFC 4303 appendix A, ESN), the trailer, the SA file and the SA database.
#include "warpath/ipsec/ipsec.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ipsec/core/esp_core.hpp"
#include "ipsec/core/replay_window.hpp"
#include "ipsec/engines.hpp"
#include "ipsec/spd_index.hpp"
#include "packet/core/bytes.hpp"
#include "packet/core/parse_core.hpp"
#include "warpath/io/sa_file.hpp"
#include "warpath/runtime/chain.hpp"

namespace warpath::ipsec {
namespace {

std::vector<uint8_t> hex(std::string_view h) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) out.push_back(uint8_t(std::stoul(std::string(h.substr(i, 2)), nullptr, 16)));
  return out;
}

std::vector<std::string> engines() {
  std::vector<std::string> out;
  for (const EngineInfo& e : esp_engines())
    if (e.available()) out.emplace_back(e.id);
  out.push_back("validate:cpu.esp");
  return out;
}

std::unique_ptr<EspCrypto> engine(const std::string& id, const std::vector<SaKeys>& keys) {
  auto e = make_esp_crypto(id, {keys.data(), uint32_t(keys.size())});
  EXPECT_TRUE(e.is_ok()) << e.status().message();
  return e.is_ok() ? std::move(e).value() : nullptr;
}

// RFC 3686 section 6: the counter block is nonce | IV | 1, so an ESP packet whose IV field
// holds the vector's IV encrypts the vector's plaintext to its ciphertext.
TEST(Esp, Rfc3686VectorsOnEveryEngine) {
  struct V {
    const char *key, *nonce, *iv, *plain, *cipher;
  } vectors[] = {
      {"ae6852f8121067cc4bf7a5765577f39e", "00000030", "0000000000000000",
       "53696e676c6520626c6f636b206d7367", "e4095d4fb7a7b3792d6175a3261311b8"},
      {"7e24067817fae0d743d6ce1f32539163", "006cb6db", "c0543b59da48d90b",
       "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
       "5104a106168a72d9790d41ee8edad388eb2e1efc46da57c8fce630df9141be28"},
      {"776beff2851db06f4c8a0542c8696f6c6a81af1eec96b4d37fc1d689e6c1c104", "00000060",
       "db5672c97aa8f0b2", "53696e676c6520626c6f636b206d7367", "145ad01dbf824ec7560863dc71e3e0c0"},
  };
  for (const std::string& id : engines())
    for (const V& v : vectors) {
      SaKeys k;
      const auto key = hex(v.key), nonce = hex(v.nonce);
      k.key_bytes = uint8_t(key.size());
      std::copy(key.begin(), key.end(), k.key.begin());
      std::copy(nonce.begin(), nonce.end(), k.nonce.begin());
      k.auth_key_bytes = 20;
      std::vector<SaKeys> keys{k};
      auto e = engine(id, keys);
      ASSERT_TRUE(e);
      const auto plain = hex(v.plain), iv = hex(v.iv);
      std::vector<uint8_t> pkt(16 + plain.size() + 16);
      std::copy(iv.begin(), iv.end(), pkt.begin() + 8);
      std::copy(plain.begin(), plain.end(), pkt.begin() + 16);
      CryptoOp op{pkt.data(), uint32_t(plain.size()), 0, 0};
      ASSERT_TRUE(e->seal({&op, 1}).is_ok());
      EXPECT_EQ(std::vector<uint8_t>(pkt.begin() + 16, pkt.begin() + 16 + long(plain.size())), hex(v.cipher))
          << id << " key " << v.key;
    }
}

// The AES-CTR engines (flow-aes's): every available one, and cpu.ctr beside ref.ctr.
std::vector<std::string> ctr_ids() {
  std::vector<std::string> out;
  for (const EngineInfo& e : ctr_engines())
    if (e.available()) out.emplace_back(e.id);
  if (detail::have_ipsec_mb() && detail::have_openssl()) out.push_back("validate:cpu.ctr");
  return out;
}

// RFC 3686 section 6's vectors, whose counter blocks (nonce | IV | 1) are given whole.
TEST(Ctr, Rfc3686VectorsOnEveryEngine) {
  struct V {
    const char *key, *block, *plain, *cipher;
  } vectors[] = {
      {"ae6852f8121067cc4bf7a5765577f39e", "00000030000000000000000000000001",
       "53696e676c6520626c6f636b206d7367", "e4095d4fb7a7b3792d6175a3261311b8"},
      {"7e24067817fae0d743d6ce1f32539163", "006cb6dbc0543b59da48d90b00000001",
       "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
       "5104a106168a72d9790d41ee8edad388eb2e1efc46da57c8fce630df9141be28"},
      {"776beff2851db06f4c8a0542c8696f6c6a81af1eec96b4d37fc1d689e6c1c104",
       "00000060db5672c97aa8f0b200000001", "53696e676c6520626c6f636b206d7367",
       "145ad01dbf824ec7560863dc71e3e0c0"},
  };
  ASSERT_FALSE(ctr_ids().empty());
  for (const std::string& id : ctr_ids()) {
    auto c = make_ctr_cipher(id);
    ASSERT_TRUE(c.is_ok()) << c.status().message();
    for (const V& v : vectors) {
      const auto key = hex(v.key), block = hex(v.block);
      auto h = c.value()->add_key(key.data(), uint32_t(key.size()));
      ASSERT_TRUE(h.is_ok()) << h.status().message();
      std::vector<uint8_t> data = hex(v.plain);
      CtrOp op;
      op.key = h.value();
      std::copy(block.begin(), block.end(), op.counter);
      op.data = data.data();
      op.len  = uint32_t(data.size());
      ASSERT_TRUE(c.value()->apply({&op, 1}).is_ok());
      EXPECT_EQ(data, hex(v.cipher)) << id << " key " << v.key;
      // The same keystream from the middle of the first block (skip): the vector's tail.
      data    = hex(v.plain);
      op.skip = 5;
      op.data = data.data() + 5;
      op.len  = uint32_t(data.size() - 5);
      ASSERT_TRUE(c.value()->apply({&op, 1}).is_ok());
      const auto cipher = hex(v.cipher);
      EXPECT_EQ(std::vector<uint8_t>(data.begin() + 5, data.end()),
                std::vector<uint8_t>(cipher.begin() + 5, cipher.end()))
          << id << " key " << v.key << " from byte 5";
      c.value()->drop_key(h.value());
      EXPECT_FALSE(c.value()->live(h.value()));
    }
  }
}

// cpu.ctr against ref.ctr on random ranges: every length 0-300 and some long ones, every skip,
// counters whose low 32 or 64 bits are about to wrap (the library's own counting must not
// show), 16- and 32-byte keys, keys dropped and their handles reused, batches of 0, 1, the
// burst's edge (127, 128, 129) and more.
TEST(Ctr, EnginesAgreeWithTheReferenceOnRandomRanges) {
  if (!detail::have_ipsec_mb() || !detail::have_openssl())
    GTEST_SKIP() << "needs cpu.ctr and ref.ctr";
  std::mt19937_64 rng(41);
  auto cpu = make_ctr_cipher("cpu.ctr").value();
  auto ref = make_ctr_cipher("ref.ctr").value();
  std::vector<uint32_t> hc, hr;
  auto add = [&] {
    uint8_t key[32];
    for (auto& b : key) b = uint8_t(rng());
    const uint32_t bytes = rng() % 2 ? 32 : 16;
    hc.push_back(cpu->add_key(key, bytes).value());
    hr.push_back(ref->add_key(key, bytes).value());
  };
  for (int k = 0; k < 20; ++k) add();
  for (const uint32_t batch : {0u, 1u, 7u, 127u, 128u, 129u, 600u}) {
    for (int round = 0; round < 3; ++round) {
      std::vector<std::vector<uint8_t>> a(batch), b(batch);
      std::vector<CtrOp> oc(batch), orf(batch);
      for (uint32_t i = 0; i < batch; ++i) {
        const uint32_t len = rng() % 8 == 0 ? uint32_t(rng() % 9000) : uint32_t(rng() % 301);
        a[i].resize(len);
        for (auto& x : a[i]) x = uint8_t(rng());
        b[i]            = a[i];
        const size_t kk = rng() % hc.size();
        CtrOp& o        = oc[i];
        o.key           = hc[kk];
        for (auto& x : o.counter) x = uint8_t(rng());
        const int edge = int(rng() % 4);  // 0: random; 1: low 32 bits wrap; 2: low 64; 3: all 128
        if (edge >= 1)
          std::memset(o.counter + 12, 0xFF, 4), o.counter[15] = uint8_t(0xFF - rng() % 3);
        if (edge >= 2) std::memset(o.counter + 8, 0xFF, 4);
        if (edge == 3) std::memset(o.counter, 0xFF, 8);
        o.skip      = uint8_t(rng() % 16);
        o.data      = a[i].data();
        o.len       = len;
        orf[i]      = o;
        orf[i].key  = hr[kk];
        orf[i].data = b[i].data();
      }
      ASSERT_TRUE(cpu->apply({oc.data(), batch}).is_ok());
      ASSERT_TRUE(ref->apply({orf.data(), batch}).is_ok());
      for (uint32_t i = 0; i < batch; ++i)
        ASSERT_EQ(a[i], b[i]) << "batch " << batch << " range " << i << " len " << oc[i].len;
    }
    // Some keys go, new ones take their handles.
    for (int k = 0; k < 5; ++k) {
      const size_t kk = rng() % hc.size();
      cpu->drop_key(hc[kk]);
      ref->drop_key(hr[kk]);
      hc.erase(hc.begin() + long(kk));
      hr.erase(hr.begin() + long(kk));
      add();
    }
  }
}

TEST(Ctr, BadRangesAreErrorsWithNothingTouched) {
  for (const std::string& id : ctr_ids()) {
    auto c                = make_ctr_cipher(id).value();
    const uint8_t key[16] = {1};
    EXPECT_FALSE(c->add_key(key, 24).is_ok()) << id;
    EXPECT_FALSE(c->add_key(nullptr, 16).is_ok()) << id;
    const uint32_t h = c->add_key(key, 16).value();
    std::vector<uint8_t> data(40, 7);
    CtrOp ok, bad;
    ok.key = h, ok.data = data.data(), ok.len = 20;
    bad          = ok;
    bad.key      = h + 1;
    CtrOp two[2] = {ok, bad};
    EXPECT_FALSE(c->apply({two, 2}).is_ok()) << id;
    EXPECT_EQ(data, std::vector<uint8_t>(40, 7)) << id;  // the good range untouched too
    bad      = ok;
    bad.skip = 16;
    EXPECT_FALSE(c->apply({&bad, 1}).is_ok()) << id;
    bad      = ok;
    bad.data = nullptr;
    EXPECT_FALSE(c->apply({&bad, 1}).is_ok()) << id;
    c->drop_key(h);
    EXPECT_FALSE(c->apply({&ok, 1}).is_ok()) << id;
    EXPECT_TRUE(c->apply({}).is_ok()) << id;
  }
}

// HMAC vectors (RFC 2202 / RFC 4231): an ESP packet whose bytes are the vector's data and
// whose ICV is the truncated MAC must verify, and not with one bit flipped.
TEST(Esp, HmacVectorsOnEveryEngine) {
  struct V {
    Integrity integ;
    std::string key, data;
    const char* mac;
  } vectors[] = {
      {Integrity::kHmacSha1, std::string(20, '\xaa'), std::string(50, '\xdd'),
       "125d7342b9ac11cd91a39af48aa17b4f63f175d3"},
      {Integrity::kHmacSha1, "Jefe", "what do ya want for nothing?", "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"},
      {Integrity::kHmacSha256, "Jefe", "what do ya want for nothing?",
       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
  };
  for (const std::string& id : engines())
    for (const V& v : vectors) {
      SaKeys k;
      k.integrity      = v.integ;
      k.auth_key_bytes = uint8_t(v.key.size());
      std::memcpy(k.auth_key.data(), v.key.data(), v.key.size());
      k.icv_bytes = v.integ == Integrity::kHmacSha1 ? 12 : 16;
      std::vector<SaKeys> keys{k};
      auto e = engine(id, keys);
      ASSERT_TRUE(e);
      const auto mac = hex(v.mac);
      for (int flip = 0; flip < 2; ++flip) {
        std::vector<uint8_t> pkt(v.data.begin(), v.data.end());
        pkt.insert(pkt.end(), mac.begin(), mac.begin() + k.icv_bytes);
        if (flip) pkt[3] ^= 1;
        CryptoOp op{pkt.data(), uint32_t(v.data.size() - 16), 0, 0};
        uint8_t ok = 2;
        ASSERT_TRUE(e->open({&op, 1}, &ok).is_ok());
        EXPECT_EQ(ok, flip ? 0 : 1) << id << " " << v.mac;
      }
    }
}

// Every engine against ref.esp: every suite (CTR/GCM, 128/256, SHA-1/SHA-256, ESN), random
// lengths 0..1500, batches of 0, 1, the lane edges, a burst and past it, with tampering.
TEST(Esp, EnginesAgreeWithReference) {
  for (const std::string& id : engines()) {
    const CheckReport r = check_esp_engine(id, 7, 3000);
    EXPECT_TRUE(r.passed()) << id << ": " << r.detail;
    EXPECT_GE(r.items, 3000u);
  }
}

// Arguments are checked once for every engine (the non-virtual seal/open): an op naming an SA
// the engine was not built with, an op without a buffer and open without verdicts are errors
// naming the packet, and nothing of the batch is touched.
TEST(Esp, BadOpsAreErrorsOnEveryEngine) {
  const std::vector<SaKeys> keys = detail::every_suite(3);
  for (const std::string& id : engines()) {
    auto e = engine(id, keys);
    ASSERT_TRUE(e) << id;
    EXPECT_EQ(e->sa_count(), keys.size()) << id;
    std::vector<uint8_t> a(200, 0x11), b(200, 0x22);
    const std::vector<uint8_t> a0 = a, b0 = b;
    std::vector<CryptoOp> ops = {{a.data(), 64, 0, 0}, {b.data(), 64, uint32_t(keys.size()), 0}};
    Status s = e->seal({ops.data(), 2});
    EXPECT_EQ(s.code(), Errc::kInvalidArgument) << id;
    EXPECT_NE(s.message().find("packet 1 names SA 12 of 12"), std::string::npos) << id << ": " << s.message();
    EXPECT_EQ(a, a0) << id << ": the first packet was sealed before the check";
    ops[1] = {nullptr, 64, 0, 0};
    std::vector<uint8_t> ok(2, 7);
    s = e->open({ops.data(), 2}, ok.data());
    EXPECT_EQ(s.code(), Errc::kInvalidArgument) << id;
    EXPECT_NE(s.message().find("packet 1 has no buffer"), std::string::npos) << id << ": " << s.message();
    EXPECT_EQ(a, a0) << id;
    EXPECT_EQ(ok[0], 7) << id;
    ops[1] = {b.data(), 64, 99, 0};
    s = e->open({ops.data(), 2}, ok.data());
    EXPECT_EQ(s.code(), Errc::kInvalidArgument) << id;
    EXPECT_NE(s.message().find("packet 1 names SA 99 of 12"), std::string::npos) << id << ": " << s.message();
    EXPECT_EQ(a, a0) << id;
    EXPECT_EQ(ok[0], 7) << id;
    ops[1] = {b.data(), 64, 1, 0};
    s = e->open({ops.data(), 2}, nullptr);
    EXPECT_EQ(s.code(), Errc::kInvalidArgument) << id;
    EXPECT_NE(s.message().find("open without verdicts"), std::string::npos) << id << ": " << s.message();
    EXPECT_EQ(b, b0) << id;
    EXPECT_TRUE(e->seal({ops.data(), 0}).is_ok()) << id;
  }
}

// Every inner length from 0 to 1500 bytes, every suite, in one batch (past a burst): each
// engine seals exactly what ref.esp seals and opens it back.
TEST(Esp, EveryLengthEverySuiteRoundTrips) {
  std::mt19937_64 rng(5);
  const std::vector<SaKeys> suites = detail::every_suite(5);
  auto ref = make_esp_crypto("ref.esp", {suites.data(), uint32_t(suites.size())});
  ASSERT_TRUE(ref.is_ok());
  for (const std::string& id : engines()) {
    auto e = engine(id, suites);
    ASSERT_TRUE(e);
    for (uint32_t sa = 0; sa < suites.size(); ++sa) {
      std::vector<std::vector<uint8_t>> mine(1501), theirs(1501);
      std::vector<CryptoOp> ops(1501), ref_ops(1501);
      for (uint32_t len = 0; len <= 1500; ++len) {
        const uint32_t text = core::text_bytes(len);
        mine[len].resize(core::kEspHead + text + 16);
        core::write_esp_header(mine[len].data(), 0x4000 + sa, uint64_t(sa) << 32 | (len + 1));
        for (uint32_t b = 0; b < len; ++b) mine[len][core::kEspHead + b] = uint8_t(rng());
        core::write_trailer(mine[len].data() + core::kEspHead, len, core::kNextIpv6);
        theirs[len]  = mine[len];
        ops[len]     = {mine[len].data(), text, sa, sa};
        ref_ops[len] = {theirs[len].data(), text, sa, sa};
      }
      const auto plain = mine;
      ASSERT_TRUE(e->seal({ops.data(), 1501}).is_ok());
      ASSERT_TRUE(ref.value()->seal({ref_ops.data(), 1501}).is_ok());
      for (uint32_t len = 0; len <= 1500; ++len) ASSERT_EQ(mine[len], theirs[len]) << id << " sa " << sa << " len " << len;
      std::vector<uint8_t> ok(1501);
      ASSERT_TRUE(e->open({ops.data(), 1501}, ok.data()).is_ok());
      for (uint32_t len = 0; len <= 1500; ++len) {
        ASSERT_TRUE(ok[len]) << id << " sa " << sa << " len " << len;
        ASSERT_TRUE(std::equal(plain[len].begin(), plain[len].begin() + core::kEspHead + ops[len].text_len,
                               mine[len].begin()));
      }
    }
  }
}

// cpu.esp skips intel-ipsec-mb's job checks only for bursts of whole-word texts: texts of any
// other length (what a malformed inbound packet gives), alone or in a burst with whole-word
// ones, are sealed and opened as ref.esp does.
TEST(Esp, TextsOfAnyLengthMatchTheReference) {
  std::vector<SaKeys> suites = detail::every_suite(9);
  // Beside the file's suites: GCM with 8- and 12-byte ICVs (RFC 4106 allows them), and an SA
  // the job checks must see (HMAC-SHA1 with its full 20-byte tag: not what cpu.esp skips
  // them for), so whole bursts take the checked path because of their SA.
  for (uint8_t icv : {8, 12}) {
    SaKeys g    = suites.back();
    g.icv_bytes = icv;
    suites.push_back(g);
  }
  SaKeys full    = suites.front();
  full.icv_bytes = 20;
  suites.push_back(full);
  auto ref = make_esp_crypto("ref.esp", {suites.data(), uint32_t(suites.size())});
  ASSERT_TRUE(ref.is_ok());
  for (const std::string& id : engines()) {
    auto e = engine(id, suites);
    ASSERT_TRUE(e);
    for (const std::vector<uint32_t>& lens :
         {std::vector<uint32_t>{1, 2, 3, 5, 7, 13, 61}, std::vector<uint32_t>{4, 8, 3, 16, 64},
          std::vector<uint32_t>{4, 8, 16, 1500}}) {
      for (uint32_t sa = 0; sa < suites.size(); ++sa) {
        const uint32_t n = uint32_t(lens.size());
        std::vector<std::vector<uint8_t>> mine(n), theirs(n);
        std::vector<CryptoOp> ops(n), ref_ops(n);
        for (uint32_t k = 0; k < n; ++k) {
          mine[k].assign(core::kEspHead + lens[k] + 32, 0);
          core::write_esp_header(mine[k].data(), 0x4000 + sa, k + 1);
          for (uint32_t b = 0; b < lens[k]; ++b) mine[k][core::kEspHead + b] = uint8_t(b * 7 + k);
          theirs[k]  = mine[k];
          ops[k]     = {mine[k].data(), lens[k], sa, sa + 1};  // high sequence bits (ESN SAs)
          ref_ops[k] = {theirs[k].data(), lens[k], sa, sa + 1};
        }
        const auto plain = mine;
        ASSERT_TRUE(e->seal({ops.data(), n}).is_ok()) << id;
        ASSERT_TRUE(ref.value()->seal({ref_ops.data(), n}).is_ok());
        for (uint32_t k = 0; k < n; ++k)
          ASSERT_EQ(mine[k], theirs[k]) << id << " sa " << sa << " text " << lens[k];
        std::vector<uint8_t> ok(n);
        ASSERT_TRUE(e->open({ops.data(), n}, ok.data()).is_ok()) << id;
        for (uint32_t k = 0; k < n; ++k) {
          EXPECT_TRUE(ok[k]) << id << " sa " << sa << " text " << lens[k];
          EXPECT_TRUE(std::equal(plain[k].begin(), plain[k].begin() + core::kEspHead + lens[k],
                                 mine[k].begin()));
        }
      }
    }
  }
}

TEST(Esp, TrailerPaddingAndChecks) {
  for (uint32_t inner = 0; inner < 12; ++inner) {
    EXPECT_EQ(core::text_bytes(inner) % 4, 0u);
    std::vector<uint8_t> t(core::text_bytes(inner));
    core::write_trailer(t.data(), inner, 4);
    uint32_t len = 0;
    uint8_t nh   = 0;
    ASSERT_TRUE(core::read_trailer(t.data(), uint32_t(t.size()), len, nh));
    EXPECT_EQ(len, inner);
    EXPECT_EQ(nh, 4);
    if (core::pad_bytes(inner)) {
      t[inner] = 9;  // padding must be 1, 2, 3, ...
      EXPECT_FALSE(core::read_trailer(t.data(), uint32_t(t.size()), len, nh));
    }
  }
  uint8_t bad[4] = {0, 0, 7, 4};  // pad length past the text
  uint32_t len   = 0;
  uint8_t nh     = 0;
  EXPECT_FALSE(core::read_trailer(bad, 4, len, nh));
  // The sizes the kernel produced for an 84-byte ping (notes: 136 B with HMAC-SHA1-96, 140 B GCM).
  EXPECT_EQ(20 + core::kEspHead + core::text_bytes(84) + 12, 136u);
  EXPECT_EQ(20 + core::kEspHead + core::text_bytes(84) + 16, 140u);
}

// The SA's header template (esp-out's per-packet path) writes what the per-field writers do,
// for every TOS, DF, ID and a spread of lengths, both families; the ESP header is SPI, the
// low sequence number and the 64-bit IV, big-endian.
TEST(Esp, OuterHeaderTemplateMatchesTheFieldWriters) {
  std::mt19937 rng(7);
  for (bool v4 : {true, false}) {
    uint8_t src[16], dst[16];
    for (int k = 0; k < 16; ++k) src[k] = uint8_t(rng()), dst[k] = uint8_t(rng());
    const core::OuterHeader h = core::outer_header(v4, src, dst);
    for (int t = 0; t < 2000; ++t) {
      const uint8_t tos  = uint8_t(rng());
      const bool df      = rng() & 1;
      const uint16_t id  = uint16_t(rng());
      const uint32_t len = 60 + rng() % 65000;
      uint8_t want[40] = {}, got[40] = {};
      std::memset(got, 0xAB, sizeof got);  // the template must write every byte
      if (v4)
        core::write_outer_ipv4(want, len, tos, df, id, src, dst);
      else
        core::write_outer_ipv6(want, len - 40, tos, src, dst);
      core::write_outer(got, h, len, tos, df, id);
      ASSERT_EQ(0, std::memcmp(want, got, v4 ? 20 : 40)) << "v4 " << v4 << " len " << len;
      if (v4) EXPECT_EQ(packet::core::fold_checksum(packet::core::ones_sum(got, 20)), 0);
    }
  }
  uint8_t esp[16];
  core::write_esp_header(esp, 0x01020304u, 0x1112131405060708ull);
  const uint8_t want[16] = {1, 2, 3, 4, 5, 6, 7, 8, 0x11, 0x12, 0x13, 0x14, 5, 6, 7, 8};
  EXPECT_EQ(0, std::memcmp(esp, want, 16));
  uint8_t b[4];
  packet::core::store_be16(b, 0x1234);
  packet::core::store_be32(b, 0xA1B2C3D4u);
  EXPECT_EQ(packet::core::load_be32(b), 0xA1B2C3D4u);
  packet::core::store_be16(b + 2, 0xBEEF);
  EXPECT_EQ(b[2], 0xBE);
  EXPECT_EQ(b[3], 0xEF);
}

// Policy selectors: Prefix::contains (word compares under a mask) against the bit-by-bit
// definition, at every length of both families, on addresses that differ in one bit.
TEST(Esp, PrefixContainsMatchesTheBitDefinition) {
  std::mt19937 rng(11);
  for (uint8_t family : {uint8_t(4), uint8_t(6)}) {
    const unsigned bits = family == 4 ? 32 : 128;
    for (unsigned len = 0; len <= bits; ++len) {
      Prefix p;
      p.addr.family = family;
      for (unsigned k = 0; k < bits / 8; ++k) p.addr.bytes[k] = uint8_t(rng());
      p.len = uint8_t(len);
      for (unsigned flip = 0; flip <= bits; ++flip) {
        uint8_t a[16] = {};
        std::memcpy(a, p.addr.bytes.data(), bits / 8);
        if (flip < bits) a[flip / 8] ^= uint8_t(0x80 >> (flip % 8));
        const bool want = flip >= len;  // only a bit past the prefix may differ
        ASSERT_EQ(p.contains(family, a), want)
            << "family " << int(family) << " len " << len << " flip " << flip;
      }
      uint8_t same[16] = {};
      std::memcpy(same, p.addr.bytes.data(), bits / 8);
      EXPECT_FALSE(p.contains(family == 4 ? 6 : 4, same));
    }
  }
}

struct Window {
  uint32_t size;
  bool esn;
  uint64_t top = 0;
  std::vector<uint64_t> bitmap;
  Window(uint32_t w, bool e) : size(w), esn(e), bitmap((w + 63) / 64 + 1) {}
  // What a receiver does: infer, check, (ICV ok), update.
  core::ReplayCheck receive(uint32_t seq_lo, uint64_t* full = nullptr) {
    const uint64_t seq = core::infer_seq(top, size, esn, seq_lo);
    if (full) *full = seq;
    const auto c = core::replay_check(top, bitmap, size, seq);
    if (c == core::ReplayCheck::kOk) core::replay_update(top, bitmap, size, seq);
    return c;
  }
};

TEST(ReplayWindow, InOrderDuplicatesAndTooOld) {
  for (uint32_t w : {32u, 64u, 65u, 300u, 4096u}) {
    Window win(w, false);
    EXPECT_EQ(win.receive(0), core::ReplayCheck::kZero);
    for (uint32_t s = 1; s <= 5000; s += 2) EXPECT_EQ(win.receive(s), core::ReplayCheck::kOk);
    EXPECT_EQ(win.receive(4999), core::ReplayCheck::kReplay);
    EXPECT_EQ(win.receive(4998), w > 1 ? core::ReplayCheck::kOk : core::ReplayCheck::kTooOld);
    EXPECT_EQ(win.receive(4998), core::ReplayCheck::kReplay);
    const uint32_t edge = 4999 - w + 1;  // the left edge: seen when odd
    EXPECT_EQ(win.receive(edge), edge % 2 ? core::ReplayCheck::kReplay : core::ReplayCheck::kOk) << w;
    EXPECT_EQ(win.receive(4999 - w), core::ReplayCheck::kTooOld) << w;
    // A jump far ahead clears the window.
    EXPECT_EQ(win.receive(100000), core::ReplayCheck::kOk);
    EXPECT_EQ(win.receive(100000 - 1), core::ReplayCheck::kOk);
    EXPECT_EQ(win.receive(100000 - w + 1), core::ReplayCheck::kOk);
    EXPECT_EQ(win.receive(100000 - w), core::ReplayCheck::kTooOld);
  }
  // Without a window, everything but 0 is accepted (the kernel's default for manual SAs).
  Window off(0, false);
  EXPECT_EQ(off.receive(5), core::ReplayCheck::kOk);
  EXPECT_EQ(off.receive(5), core::ReplayCheck::kOk);
  EXPECT_EQ(off.receive(0), core::ReplayCheck::kZero);
}

TEST(ReplayWindow, ShiftKeepsBitsAcrossWords) {
  Window win(256, false);
  for (uint32_t s : {1u, 3u, 70u, 130u}) ASSERT_EQ(win.receive(s), core::ReplayCheck::kOk);
  ASSERT_EQ(win.receive(200), core::ReplayCheck::kOk);  // shifts by 70: crosses a word boundary
  for (uint32_t s : {1u, 3u, 70u, 130u, 200u}) EXPECT_EQ(win.receive(s), core::ReplayCheck::kReplay) << s;
  for (uint32_t s : {2u, 69u, 71u, 129u, 199u}) EXPECT_EQ(win.receive(s), core::ReplayCheck::kOk) << s;
}

// RFC 4303 A2.2: the high half follows the window across 2^32.
TEST(ReplayWindow, EsnInfersHighBitsAcrossTheWrap) {
  Window win(64, true);
  uint64_t full = 0;
  win.top = 0xFFFFFFF0ull;
  win.bitmap[0] = 1;
  EXPECT_EQ(win.receive(0xFFFFFFFFu, &full), core::ReplayCheck::kOk);
  EXPECT_EQ(full, 0xFFFFFFFFull);
  EXPECT_EQ(win.receive(3, &full), core::ReplayCheck::kOk);  // case A: ahead, next subspace
  EXPECT_EQ(full, 0x100000003ull);
  EXPECT_EQ(win.receive(0xFFFFFFFEu, &full), core::ReplayCheck::kOk);  // case B: behind, previous
  EXPECT_EQ(full, 0xFFFFFFFEull);
  EXPECT_EQ(win.receive(0xFFFFFFFFu, &full), core::ReplayCheck::kReplay);
  EXPECT_EQ(win.receive(0, &full), core::ReplayCheck::kOk);  // 2^32: a valid sequence number with ESN
  EXPECT_EQ(full, 0x100000000ull);
}

const char* kGoodSa = R"toml(# two suites, as in the kernel recipe
[[sa]]
src = "192.0.2.2"
dst = "192.0.2.1"
spi = 0x1001
dir = "in"
mode = "tunnel"
enc = "rfc3686(ctr(aes))"
enc_key = "0x00112233445566778899aabbccddeeffdeadbeef"
auth = "hmac(sha1)"
auth_key = "0x0102030405060708090a0b0c0d0e0f1011121314"
auth_trunc_bits = 96
replay_window = 64

[[sa]]
src = "192.0.2.1"
dst = "192.0.2.2"
spi = "0x00004001"
dir = "out"
aead = "rfc4106(gcm(aes))"
aead_key = "0x000102030405060708090a0b0c0d0e0fcafebabe"
icv_bits = 128
esn = true

[[policy]]
src = "10.2.0.0/24"
dst = "10.1.0.0/24"
dir = "in"
tmpl_src = "192.0.2.2"
tmpl_dst = "192.0.2.1"

[[policy]]
src = "10.1.0.0/24"
dst = "10.2.0.0/24"
proto = "udp"
dport = 53
dir = "out"
tmpl_src = "192.0.2.1"
tmpl_dst = "192.0.2.2"
spi = 0x4001
)toml";

TEST(SaFile, ReadsKernelStyleFields) {
  auto cfg = io::parse_sa_text("sa.toml", kGoodSa);
  ASSERT_TRUE(cfg.is_ok()) << cfg.status().message();
  ASSERT_EQ(cfg->sas.size(), 2u);
  const SaSpec& in = cfg->sas[0];
  EXPECT_EQ(in.spi, 0x1001u);
  EXPECT_EQ(in.keys.key_bytes, 16);
  EXPECT_EQ(in.keys.nonce[0], 0xde);
  EXPECT_EQ(in.keys.icv_bytes, 12);
  EXPECT_EQ(in.replay_window, 64u);
  EXPECT_EQ(in.where, "sa.toml:2");
  EXPECT_EQ(cfg->sas[1].keys.cipher, Cipher::kAesGcm);
  EXPECT_TRUE(cfg->sas[1].keys.esn);
  EXPECT_EQ(cfg->sas[1].keys.nonce[3], 0xbe);
  auto db = SaDatabase::build(std::move(cfg).value());
  ASSERT_TRUE(db.is_ok()) << db.status().message();
  const uint8_t local[4] = {192, 0, 2, 1}, other[4] = {192, 0, 2, 9};
  EXPECT_EQ(db->find_inbound(0x1001, 4, local), 0);
  EXPECT_EQ(db->find_inbound(0x1002, 4, local), -1);
  EXPECT_EQ(db->find_inbound(0x1001, 4, other), -1);
  EXPECT_TRUE(db->is_local(4, local));
  EXPECT_FALSE(db->is_local(4, other));
  const uint8_t local6[16] = {192, 0, 2, 1};  // IPv6 ::c000:201 is not 192.0.2.1
  EXPECT_FALSE(db->is_local(6, local6));
  const uint8_t a[4] = {10, 1, 0, 5}, b[4] = {10, 2, 0, 7};
  int32_t sa = -1;
  EXPECT_GE(db->match_out(4, a, b, 17, 999, 53, &sa), 0);
  EXPECT_EQ(db->sas()[size_t(sa)].spi, 0x4001u);
  EXPECT_LT(db->match_out(4, a, b, 6, 999, 53, &sa), 0);  // tcp: not selected
  EXPECT_TRUE(db->admits_in(0, 4, b, a, 6, 1, 2));
  EXPECT_FALSE(db->admits_in(0, 4, a, b, 6, 1, 2));
}

TEST(SaFile, ErrorsNameLineAndField) {
  struct Case {
    std::string from, to, want;
  } cases[] = {
      {"enc_key = \"0x00112233445566778899aabbccddeeffdeadbeef\"", "enc_key = \"0x0011\"",
       "sa.toml:9: sa.enc_key: 2 bytes"},
      {"auth_trunc_bits = 96", "auth_trunc_bits = 128", "sa.toml:12: sa.auth_trunc_bits: 128"},
      {"replay_window = 64", "replay_window = 5000", "sa.toml:13: sa.replay_window: 5000 is over 4096"},
      {"dir = \"in\"\nmode", "dir = \"sideways\"\nmode", "sa.toml:6: sa.dir: 'sideways'"},
      {"src = \"192.0.2.2\"", "src = \"192.0.2.300\"", "sa.toml:3: sa.src:"},
      {"icv_bits = 128", "icv_bits = 64", "sa.icv_bits: 64"},
      {"spi = 0x1001", "spix = 0x1001", "sa.toml:5: sa.spix: unknown field"},
      {"enc = \"rfc3686(ctr(aes))\"", "enc = \"cbc(aes)\"", "sa.enc: 'cbc(aes)'"},
      {"dst = \"10.1.0.0/24\"", "dst = \"10.1.0.1/24\"", "policy.dst: '10.1.0.1/24': host bits"},
      {"dport = 53", "dport = 70000", "policy.dport: 70000 is over 65535"},
      {"auth_key = \"0x0102", "auth_key = \"0xZZ02", "sa.auth_key: 'ZZ' is not hex"},
  };
  for (const Case& c : cases) {
    std::string text = kGoodSa;
    const size_t at  = text.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    text.replace(at, c.from.size(), c.to);
    auto cfg = io::parse_sa_text("sa.toml", text);
    ASSERT_FALSE(cfg.is_ok()) << c.to;
    EXPECT_NE(cfg.status().message().find(c.want), std::string::npos)
        << cfg.status().message() << " (wanted " << c.want << ")";
  }
  EXPECT_FALSE(io::parse_sa_text("x.toml", "[[sa]\n").is_ok());
  // Raw non-ASCII is refused before toml++ reads it (found by fuzz.readers.sa: the three bytes
  // EF BB 81 reach toml++'s __builtin_unreachable).
  for (const char* raw : {"\xef\xbb\x81", "# caf\xc3\xa9\n[[sa]]\n"}) {
    auto bad = io::parse_sa_text("x.toml", raw);
    ASSERT_FALSE(bad.is_ok());
    EXPECT_NE(bad.status().message().find("non-ASCII character"), std::string::npos)
        << bad.status().message();
  }
}

// A reload keeps indices: the same SA (direction, SPI, destination, keys) keeps its index, a
// changed or removed one is retired (never matched, its keys kept), a new one is appended.
TEST(SaDatabase, ReloadKeepsIndicesStable) {
  auto first = SaDatabase::build(io::parse_sa_text("sa.toml", kGoodSa).value());
  ASSERT_TRUE(first.is_ok());
  std::string text = kGoodSa;
  // The outbound GCM SA gets another key (so it is another SA); the inbound one stays.
  text.replace(text.find("0x000102030405060708090a0b0c0d0e0fcafebabe"), 42,
               "0xffeeddccbbaa99887766554433221100cafebabe");
  auto second = SaDatabase::build(io::parse_sa_text("sa.toml", text).value(), &first.value());
  ASSERT_TRUE(second.is_ok()) << second.status().message();
  const SaDatabase& a = first.value();
  const SaDatabase& b = second.value();
  ASSERT_EQ(b.sas().size(), 3u);
  EXPECT_TRUE(b.active(0) && !b.active(1) && b.active(2));
  EXPECT_EQ(b.sas()[0].spi, a.sas()[0].spi);
  EXPECT_EQ(b.sas()[1].keys.key, a.sas()[1].keys.key);  // retired, keys kept for packets in flight
  const uint8_t x[4] = {10, 1, 0, 5}, y[4] = {10, 2, 0, 7};
  int32_t sa = -1;
  ASSERT_GE(b.match_out(4, x, y, 17, 9, 53, &sa), 0);
  EXPECT_EQ(sa, 2);
  EXPECT_EQ(b.inbound_count(), 1u);
  EXPECT_EQ(b.outbound_count(), 1u);
  EXPECT_EQ(b.keys().size(), 3u);
}

// The policy lookup (a scan for a few policies, a tuple space past them: src/ipsec/
// spd_index.hpp) against a plain reading of the specification: the first policy by priority
// (ties in file order) whose selectors all hold, and for inbound, any policy naming the SA.
// Random sets of every size around the scan's limit, both families, prefixes of every length,
// protocols and ports named or not, priority ties; packets near the policies and far.
bool ref_bit(const uint8_t* a, unsigned b) { return a[b / 8] >> (7 - b % 8) & 1; }
bool ref_selects(const PolicySpec& p, uint8_t family, const uint8_t* src, const uint8_t* dst,
                 uint8_t proto, uint16_t sport, uint16_t dport, bool ports,
                 bool proto_known = true) {
  if (p.src.addr.family != family) return false;
  for (unsigned b = 0; b < p.src.len; ++b)
    if (ref_bit(p.src.addr.bytes.data(), b) != ref_bit(src, b)) return false;
  for (unsigned b = 0; b < p.dst.len; ++b)
    if (ref_bit(p.dst.addr.bytes.data(), b) != ref_bit(dst, b)) return false;
  if (!proto_known) return true;  // OPAQUE: addresses alone
  if (p.proto != 0 && p.proto != proto) return false;
  if (ports && p.sport != 0 && p.sport != sport) return false;
  if (ports && p.dport != 0 && p.dport != dport) return false;
  return true;
}

TEST(SaDatabase, PolicyLookupMatchesAPlainScanAtEverySize) {
  std::mt19937 rng(29);
  auto pick = [&rng](unsigned n) { return unsigned(rng() % n); };
  // Addresses from a small space, so that policies overlap and packets hit them.
  auto addr = [&](uint8_t family) {
    Addr a;
    a.family = family;
    if (family == 4) {
      a.bytes[0] = 10;
      a.bytes[1] = uint8_t(pick(3));
      a.bytes[2] = uint8_t(pick(4));
      a.bytes[3] = uint8_t(pick(256));
    } else {
      a.bytes[0] = 0x20, a.bytes[1] = 0x01, a.bytes[2] = 0x0d, a.bytes[3] = 0xb8;
      for (int k = 4; k < 16; k += 5) a.bytes[size_t(k)] = uint8_t(pick(3));
      a.bytes[15] = uint8_t(pick(256));
    }
    return a;
  };
  auto prefix = [&](uint8_t family) {
    Prefix p;
    p.addr              = addr(family);
    const unsigned bits = family == 4 ? 32 : 128;
    const unsigned how  = pick(8);  // any length, /0, or the space's own steps
    p.len               = uint8_t(how < 2    ? pick(bits + 1)
                                  : how == 2 ? 0
                                             : (family == 4 ? 8 + 8 * pick(4) : 32 + 32 * pick(4)));
    for (unsigned b = p.len; b < bits; ++b) p.addr.bytes[b / 8] &= uint8_t(~(0x80 >> (b % 8)));
    return p;
  };
  for (const size_t count : {size_t(1), size_t(2), detail::SpdIndex::kLinearMax,
                             detail::SpdIndex::kLinearMax + 1, size_t(40), size_t(400)}) {
    SaConfig cfg;
    // Four tunnels each way (SA 2t out, 2t + 1 in); policies name them by endpoints, some by
    // spi too. Tunnel 3 has tunnel 0's endpoints (a rekey's second SA): a policy without an
    // spi takes the first of the two.
    for (uint32_t t = 0; t < 4; ++t)
      for (const Dir dir : {Dir::kOut, Dir::kIn}) {
        SaSpec sa;
        sa.where        = "sa";
        sa.dir          = dir;
        sa.spi          = 0x1000 + t;
        sa.src          = parse_addr(dir == Dir::kOut ? "192.0.2.1" : "192.0.2.2").value();
        sa.dst          = parse_addr(dir == Dir::kOut ? "192.0.2.2" : "192.0.2.1").value();
        sa.src.bytes[3] = uint8_t(sa.src.bytes[3] + 10 * (t % 3));
        sa.dst.bytes[3] = uint8_t(sa.dst.bytes[3] + 10 * (t % 3));
        cfg.sas.push_back(sa);
      }
    // `count` outbound policies, then `count` inbound ones naming tunnel 0 (so both the
    // outbound list and that SA's list are exactly `count` long: scanned up to kLinearMax,
    // indexed past it), then one inbound policy per other tunnel.
    for (size_t k = 0; k < 2 * count + 3; ++k) {
      PolicySpec p;
      p.where = "policy " + std::to_string(k);
      p.dir                  = k < count ? Dir::kOut : Dir::kIn;
      const uint8_t fam      = pick(3) == 0 ? 6 : 4;
      p.src                  = prefix(fam);
      p.dst                  = prefix(fam);
      const uint8_t protos[] = {0, 0, 6, 17, 1, 132};
      p.proto                = protos[pick(6)];
      if (p.proto == 6 || p.proto == 17 || p.proto == 132) {
        const uint16_t ports[] = {0, 0, 53, 80, 0x8001};
        p.sport                = ports[pick(5)];
        p.dport                = ports[pick(5)];
      }
      p.priority       = int32_t(pick(4));  // ties, broken by file order
      const uint32_t t = k < count ? pick(4) : k < 2 * count ? 0 : uint32_t(k - 2 * count + 1);
      const SaSpec& sa = cfg.sas[2 * t + (p.dir == Dir::kIn ? 1 : 0)];
      p.tmpl_src       = sa.src;
      p.tmpl_dst       = sa.dst;
      p.spi            = pick(2) || t == 3 ? sa.spi : 0;  // tunnel 3 only by its spi
      cfg.policies.push_back(p);
    }
    // Each policy's SA as the specification reads it: the one its spi names, else the first
    // between its template's endpoints.
    auto sa_of = [&cfg](const PolicySpec& p) {
      for (size_t s = 0; s < cfg.sas.size(); ++s) {
        const SaSpec& x = cfg.sas[s];
        if (x.dir == p.dir && x.dst == p.tmpl_dst && (p.spi ? x.spi == p.spi : x.src == p.tmpl_src))
          return int32_t(s);
      }
      return -1;
    };
    auto built = SaDatabase::build(cfg);
    ASSERT_TRUE(built.is_ok()) << built.status().message();
    const SaDatabase& db                = built.value();
    const std::vector<PolicySpec>& pols = db.policies();  // out by priority, then in
    int hits = 0, unknown = 0, admits = 0;
    for (int q = 0; q < 4000; ++q) {
      const uint8_t fam = pick(3) == 0 ? 6 : 4;
      // Near a policy (its prefixes, random host bits) or anywhere in the space.
      Addr s = addr(fam), d = addr(fam);
      if (!pols.empty() && pick(2)) {
        const PolicySpec& near = pols[pick(unsigned(pols.size()))];
        if (near.src.addr.family == fam) {
          const unsigned bits = fam == 4 ? 32 : 128;
          for (unsigned b = 0; b < bits; ++b) {
            auto put = [b](Addr& a, bool v) {
              a.bytes[b / 8] =
                  uint8_t((a.bytes[b / 8] & ~(0x80 >> (b % 8))) | (v ? 0x80 >> (b % 8) : 0));
            };
            if (b < near.src.len) put(s, ref_bit(near.src.addr.bytes.data(), b));
            if (b < near.dst.len) put(d, ref_bit(near.dst.addr.bytes.data(), b));
          }
        }
      }
      const uint8_t protos[] = {6, 17, 1, 50, 132};
      const uint8_t proto    = protos[pick(5)];
      const uint16_t ports[] = {53, 80, 443, 0x8001};
      const uint16_t sport = ports[pick(4)], dport = ports[pick(4)];
      // Ports unknown (a later fragment) one time in eight, the upper layer too (OPAQUE:
      // extension headers the parser could not follow) one in eight.
      const unsigned knowledge = pick(8);
      const bool opaque = knowledge == 0, known = knowledge > 1;
      const uint8_t* a = s.bytes.data();
      const uint8_t* b = d.bytes.data();
      // Outbound: the first selecting policy, or kPortsUnknown when that one names ports (or,
      // OPAQUE, a protocol) the packet does not show.
      int32_t want = -1;
      for (size_t p = 0; p < pols.size() && want == -1; ++p)
        if (pols[p].dir == Dir::kOut &&
            ref_selects(pols[p], fam, a, b, proto, sport, dport, known, !opaque))
          want = (!known && (pols[p].sport || pols[p].dport)) || (opaque && pols[p].proto)
                     ? SaDatabase::kPortsUnknown
                     : int32_t(p);
      int32_t sa        = -1;
      const int32_t got = db.match_out(fam, a, b, proto, sport, dport, &sa, known, !opaque);
      ASSERT_EQ(got, want) << count << " policies, query " << q;
      hits += got >= 0;
      unknown += got == SaDatabase::kPortsUnknown;
      if (got >= 0) EXPECT_EQ(sa, sa_of(pols[size_t(got)])) << count << " policies, query " << q;
      // Inbound: any policy (of the SA, or of any SA) selecting the packet.
      for (int32_t in_sa : {-1, 1, 3, 5, 7}) {
        bool admit = false;
        for (const PolicySpec& p : pols) {
          if (p.dir != Dir::kIn) continue;
          if (in_sa >= 0) {
            const SaSpec& x = db.sas()[size_t(in_sa)];
            if (!(x.dst == p.tmpl_dst) || !(x.src == p.tmpl_src) || (p.spi && p.spi != x.spi))
              continue;
          }
          admit = admit || ref_selects(p, fam, a, b, proto, sport, dport, known, !opaque);
        }
        ASSERT_EQ(db.admits_in(in_sa, fam, a, b, proto, sport, dport, known, !opaque), admit)
            << count << " policies, query " << q << ", sa " << in_sa;
        admits += admit;
      }
      // Only inbound SAs have policies to admit through.
      EXPECT_FALSE(db.admits_in(0, fam, a, b, proto, sport, dport, known));
      EXPECT_FALSE(db.admits_in(int32_t(db.sas().size()), fam, a, b, proto, sport, dport, known));
    }
    // Not a test of misses alone: many queries are selected, some with their ports unknown.
    EXPECT_GT(hits, count > detail::SpdIndex::kLinearMax ? 500 : 0) << count << " policies";
    EXPECT_GT(admits, 300) << count << " policies";
    if (count >= 40) EXPECT_GT(unknown, 10) << count << " policies";
  }
}

TEST(SaDatabase, RefusesInconsistentConfigurations) {
  auto build = [](std::string text) {
    auto cfg = io::parse_sa_text("sa.toml", text);
    EXPECT_TRUE(cfg.is_ok()) << cfg.status().message();
    return SaDatabase::build(std::move(cfg).value()).status().message();
  };
  std::string t = kGoodSa;
  const std::string no_sa = build(std::string(t).replace(t.find("spi = 0x4001\n"), 13, "spi = 0x4002\n"));
  EXPECT_NE(no_sa.find(": no outbound SA with dst 192.0.2.2 and spi 16386"), std::string::npos) << no_sa;
  // The SA its spi names, from another source than the template's.
  const std::string other_src = build(
      std::string(t).replace(t.find("tmpl_src = \"192.0.2.1\"\ntmpl_dst = \"192.0.2.2\"\nspi"), 22,
                             "tmpl_src = \"192.0.2.7\""));
  EXPECT_NE(other_src.find("tmpl_src 192.0.2.7 is not the SA's src 192.0.2.1"), std::string::npos)
      << other_src;
  // Without an spi, an SA between the template's endpoints.
  const std::string no_ends = build(
      std::string(t).replace(t.find("tmpl_src = \"192.0.2.2\""), 22, "tmpl_src = \"192.0.2.9\""));
  EXPECT_NE(no_ends.find("no inbound SA with dst 192.0.2.1 and src 192.0.2.9"), std::string::npos)
      << no_ends;
  EXPECT_NE(build(std::string(t).replace(t.find("spi = 0x1001"), 12, "spi = 7")).find("reserved"), std::string::npos);
  // An inbound SA no policy admits anything through.
  std::string no_in = t.substr(0, t.find("[[policy]]")) + t.substr(t.find("[[policy]]", t.find("[[policy]]") + 1));
  EXPECT_NE(build(no_in).find("sa.toml:2: no `in` policy"), std::string::npos);
  // A tunnel for IPv6 must carry 1280-byte packets whole.
  std::string v6 = t + "\n[[sa]]\nsrc = \"2001:db8::1\"\ndst = \"2001:db8::2\"\nspi = 0x7001\ndir = \"out\"\n"
                       "aead = \"rfc4106(gcm(aes))\"\naead_key = \"0x000102030405060708090a0b0c0d0e0fcafebabe\"\n"
                       "mtu = 1300\n[[policy]]\nsrc = \"fd01::/64\"\ndst = \"fd02::/64\"\ndir = \"out\"\n"
                       "tmpl_src = \"2001:db8::1\"\ntmpl_dst = \"2001:db8::2\"\n";
  EXPECT_NE(build(v6).find("under IPv6's 1280"), std::string::npos) << build(v6);
  EXPECT_EQ(build(std::string(v6).replace(v6.find("mtu = 1300"), 10, "mtu = 1500")), "");
  // ESN needs a window on the inbound side.
  std::string esn_in = std::string(t).replace(t.find("replay_window = 64"), 18, "esn = true");
  EXPECT_NE(build(esn_in).find("esn needs replay_window"), std::string::npos);
  // The same (spi, dst) twice in one direction.
  std::string dup = t + "\n[[sa]]\nsrc = \"192.0.2.2\"\ndst = \"192.0.2.1\"\nspi = 0x1001\ndir = \"in\"\n"
                        "aead = \"rfc4106(gcm(aes))\"\naead_key = \"0x000102030405060708090a0b0c0d0e0fcafebabe\"\n";
  EXPECT_NE(build(dup).find("already defined at sa.toml:2"), std::string::npos);
  // Errors in file order: the duplicate first, then an SA after it with a reserved spi.
  const std::string two = build(
      dup +
      "\n[[sa]]\nsrc = \"192.0.2.2\"\ndst = \"192.0.2.1\"\nspi = 7\ndir = \"in\"\n"
      "aead = \"rfc4106(gcm(aes))\"\naead_key = \"0x000102030405060708090a0b0c0d0e0fcafebabe\"\n");
  EXPECT_NE(two.find("already defined at sa.toml:2"), std::string::npos) << two;
}

}  // namespace
}  // namespace warpath::ipsec

namespace warpath::ipsec {
namespace chain_paths {

using runtime::Chain;
using runtime::Frame;

const char* kPair = R"toml(
[[sa]]
src = "192.0.2.1"
dst = "192.0.2.2"
spi = 0x2001
dir = "out"
aead = "rfc4106(gcm(aes))"
aead_key = "0x000102030405060708090a0b0c0d0e0fcafebabe"
[[sa]]
src = "192.0.2.2"
dst = "192.0.2.1"
spi = 0x2001
dir = "in"
aead = "rfc4106(gcm(aes))"
aead_key = "0x000102030405060708090a0b0c0d0e0fcafebabe"
replay_window = 64
[[policy]]
src = "10.1.0.0/16"
dst = "10.2.0.0/16"
dir = "out"
tmpl_src = "192.0.2.1"
tmpl_dst = "192.0.2.2"
[[policy]]
src = "10.1.0.0/16"
dst = "10.2.0.0/16"
dir = "in"
tmpl_src = "192.0.2.2"
tmpl_dst = "192.0.2.1"
)toml";

std::unique_ptr<Chain> chain(const char* kind, runtime::TableSource& tables) {
  tables.load_sas = [](const std::string&) { return io::parse_sa_text("pair.toml", kPair); };
  runtime::BuildEnv env;
  env.tables = &tables;
  auto c     = Chain::build({runtime::ModuleSpec{kind, {{"sa", "pair.toml"}}, ""}}, env);
  EXPECT_TRUE(c.is_ok()) << c.status().message();
  return c.is_ok() ? std::move(c).value() : nullptr;
}

std::vector<uint8_t> udp_frame(uint32_t payload) {
  std::vector<uint8_t> f(14 + 28 + payload, 0);
  f[12]       = 0x08;
  uint8_t* ip = f.data() + 14;
  ip[0] = 0x45, ip[8] = 64, ip[9] = 17;
  core::store_be16(ip + 2, 28 + payload);
  const uint8_t src[4] = {10, 1, 0, 5}, dst[4] = {10, 2, 0, 1};
  std::memcpy(ip + 12, src, 4);
  std::memcpy(ip + 16, dst, 4);
  core::store_be16(ip + 10, packet::core::fold_checksum(packet::core::ones_sum(ip, 20)));
  core::store_be16(ip + 24, 8 + payload);
  for (uint32_t b = 0; b < payload; ++b) f[42 + b] = uint8_t(b * 7);
  return f;
}

// Runs `c` over `frames` in a frame with `headroom`; the packets after it and their reasons.
std::vector<std::vector<uint8_t>> through(Chain& c, const std::vector<std::vector<uint8_t>>& frames,
                                          uint32_t headroom, uint32_t cell, std::vector<std::string>& why) {
  Frame f(std::move(packet::PacketBatch::create(uint32_t(frames.size()), cell, 0, MemSpace::kHost, headroom)).value());
  c.make_slots(f);
  for (const auto& fr : frames) EXPECT_TRUE(f.batch.append(fr.data(), uint32_t(fr.size()), uint32_t(fr.size()), 0));
  EXPECT_TRUE(c.pre(f).is_ok());
  ExecContext ctx;
  EXPECT_TRUE(c.shade(f, runtime::Place::kCpu, ctx).is_ok());
  Chain::Scratch scratch;
  EXPECT_TRUE(c.post(f, scratch, nullptr).is_ok());
  std::vector<std::vector<uint8_t>> out;
  why.clear();
  for (uint32_t i = 0; i < f.size(); ++i) {
    out.emplace_back(f.batch.data(i), f.batch.data(i) + f.batch.meta(i).caplen);
    why.push_back(c.reasons()[f.reason[i]].name);
    // What the module left in the frame's parse results is what the parser reads there.
    if (why.back() == "no_verdict")
      EXPECT_TRUE(f.infos[i] == packet::core::parse_packet(f.batch.data(i), f.batch.meta(i).caplen,
                                                           f.batch.meta(i).len))
          << "packet " << i << " of " << c.describe();
  }
  return out;
}

// The frames with each IPv4 ESP packet's outer ID and header checksum zeroed: the ID counters
// (one per pair of tunnel endpoints) start at random, so two chains' packets differ there.
std::vector<std::vector<uint8_t>> without_outer_id(std::vector<std::vector<uint8_t>> frames) {
  for (auto& fr : frames)
    if (fr.size() >= 34 && fr[12] == 0x08 && fr[13] == 0x00 && fr[14 + 9] == 50)
      fr[18] = fr[19] = fr[24] = fr[25] = 0;
  return frames;
}

}  // namespace chain_paths

// Encapsulation into the frame's headroom (only the Ethernet header moves) and without any
// (the packet moves up) give the same bytes; esp-in opens them back to the packet as the
// gateway forwarded it (TTL - 1); a packet whose cell has no room left is dropped, no_room.
TEST(EspModules, HeadroomAndMovedPathsAgreeAndRoundTrip) {
  using namespace chain_paths;
  std::vector<std::vector<uint8_t>> in;
  for (uint32_t n : {0u, 1u, 2u, 3u, 57u, 500u, 1400u}) in.push_back(udp_frame(n));
  std::vector<std::string> why;
  runtime::TableSource t1, t2, t3;
  auto out1 = chain("esp-out", t1), out2 = chain("esp-out", t2), back = chain("esp-in", t3);
  ASSERT_TRUE(out1 && out2 && back);
  EXPECT_EQ(out1->headroom(), 64u + runtime::Chain::kL3Align);
  const auto a = through(*out1, in, out1->headroom(), 2048, why);
  const auto b = through(*out2, in, 0, 2048, why);
  EXPECT_EQ(without_outer_id(a), without_outer_id(b));
  for (size_t k = 1; k < a.size(); ++k)  // one SA's packets: consecutive outer IDs
    EXPECT_EQ(uint16_t(core::load_be16(a[k].data() + 18) - core::load_be16(a[0].data() + 18)), k);
  // Not first in its stage (a module before it could decide packets): the work moves from
  // pre and the shade (job mode) to post. The same bytes either way.
  {
    runtime::TableSource t4;
    t4.load_sas = [](const std::string&) { return io::parse_sa_text("pair.toml", kPair); };
    runtime::BuildEnv env;
    env.tables = &t4;
    auto late  = Chain::build({runtime::ModuleSpec{"ttl-filter", {{"min", "1"}}, ""},
                               runtime::ModuleSpec{"esp-out", {{"sa", "pair.toml"}}, ""}},
                              env);
    ASSERT_TRUE(late.is_ok()) << late.status().message();
    EXPECT_EQ(late.value()->jobs().size(), 0u);
    EXPECT_EQ(out1->jobs().size(), 1u);
    EXPECT_EQ(without_outer_id(through(*late.value(), in, 64, 2048, why)), without_outer_id(a));
  }
  std::vector<std::vector<uint8_t>> swapped = a;
  for (auto& fr : swapped) {  // to the inbound SA's side: swap the outer addresses
    std::swap_ranges(fr.begin() + 26, fr.begin() + 30, fr.begin() + 30);
    fr[24] = fr[25] = 0;
    core::store_be16(fr.data() + 24, packet::core::fold_checksum(packet::core::ones_sum(fr.data() + 14, 20)));
  }
  const auto opened = through(*back, swapped, 0, 2048, why);
  for (size_t k = 0; k < in.size(); ++k) {
    EXPECT_EQ(why[k], "no_verdict") << k;  // decapsulated, nothing after it decided
    std::vector<uint8_t> want = in[k];
    want[14 + 8] -= 1;  // the TTL, and the checksum with it
    want[14 + 10] = want[14 + 11] = 0;
    core::store_be16(want.data() + 24, packet::core::fold_checksum(packet::core::ones_sum(want.data() + 14, 20)));
    EXPECT_EQ(opened[k], want) << k;
  }
  // Opening them again: replays.
  through(*back, swapped, 0, 2048, why);
  for (const auto& w : why) EXPECT_EQ(w, "replay");
  // A 128-byte cell holding a 120-byte packet has no room for the tunnel headers.
  runtime::TableSource t4;
  auto small = chain("esp-out", t4);
  through(*small, {udp_frame(78)}, 0, 128, why);
  EXPECT_EQ(why[0], "no_room");
}

// An IPv6 tunnel carrying IPv4 and IPv6 (with VLAN tags): the module's parse results are the
// parser's (checked in through()), and the packets open back.
TEST(EspModules, Ipv6TunnelWithVlanTags) {
  using namespace chain_paths;
  const std::string v6 = R"toml(
[[sa]]
src = "2001:db8::1"
dst = "2001:db8::2"
spi = 0x6001
dir = "out"
enc = "rfc3686(ctr(aes))"
enc_key = "0x00112233445566778899aabbccddeeffdeadbeef"
auth = "hmac(sha256)"
auth_key = "0x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
auth_trunc_bits = 128
[[policy]]
src = "10.1.0.0/16"
dst = "10.2.0.0/16"
dir = "out"
tmpl_src = "2001:db8::1"
tmpl_dst = "2001:db8::2"
[[policy]]
src = "fd01::/64"
dst = "fd02::/64"
dir = "out"
tmpl_src = "2001:db8::1"
tmpl_dst = "2001:db8::2"
)toml";
  runtime::TableSource t;
  t.load_sas = [&](const std::string&) { return io::parse_sa_text("v6.toml", v6); };
  runtime::BuildEnv env;
  env.tables = &t;
  auto c     = Chain::build({runtime::ModuleSpec{"esp-out", {{"sa", "v6.toml"}}, ""}}, env);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  std::vector<std::vector<uint8_t>> in;
  for (uint32_t n : {0u, 100u, 1300u}) {
    std::vector<uint8_t> f = udp_frame(n);  // IPv4, then tagged
    f.insert(f.begin() + 12, {0x81, 0x00, 0x00, 0x07});
    in.push_back(f);
    std::vector<uint8_t> g(14 + 40 + 8 + n, 0);  // IPv6 UDP fd01::5 -> fd02::1
    g[12] = 0x86, g[13] = 0xdd, g[14] = 0x60;
    core::store_be16(g.data() + 18, 8 + n);
    g[20] = 17, g[21] = 64, g[22] = 0xfd, g[23] = 0x01, g[37] = 5, g[38] = 0xfd, g[39] = 0x02, g[53] = 1;
    core::store_be16(g.data() + 58, 8 + n);
    in.push_back(g);
  }
  std::vector<std::string> why;
  const auto out = through(*c.value(), in, 64, 2048, why);
  for (size_t k = 0; k < in.size(); ++k) {
    EXPECT_EQ(why[k], "no_verdict") << k;
    EXPECT_EQ(core::load_be16(out[k].data() + (k % 2 ? 12 : 16)), 0x86dd) << k;
  }
}

TEST(PacketBatchHeadroom, OffsetsRoomAndCells) {
  auto b = packet::PacketBatch::create(4, 2048, 0, MemSpace::kHost, 64);
  ASSERT_TRUE(b.is_ok());
  const std::vector<uint8_t> p(1984, 1), q(1985, 2);
  ASSERT_TRUE(b->append(p.data(), uint32_t(p.size()), uint32_t(p.size()), 0));  // fills one cell
  ASSERT_TRUE(b->append(q.data(), uint32_t(q.size()), uint32_t(q.size()), 0));  // needs two
  EXPECT_EQ(b->meta(0).offset, 64u);
  EXPECT_EQ(b->headroom(0), 64u);
  EXPECT_EQ(b->room(0), 1984u);
  EXPECT_EQ(b->meta(1).offset, 2048u + 64);
  EXPECT_EQ(b->room(1), 2u * 2048 - 64);
  EXPECT_FALSE(packet::PacketBatch::create(4, 2048, 0, MemSpace::kHost, 2048).is_ok());
  // Any headroom below the cell: the chains' 64 + 2 puts an untagged frame's IP header on a
  // 16-byte boundary (Chain::kL3Align), and a 1982-byte packet still fills one cell.
  auto c = packet::PacketBatch::create(4, 2048, 0, MemSpace::kHost, 66);
  ASSERT_TRUE(c.is_ok());
  ASSERT_TRUE(c->append(p.data(), 1982, 1982, 0));
  ASSERT_TRUE(c->append(p.data(), 1983, 1983, 0));
  EXPECT_EQ(c->meta(0).offset, 66u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(c->data(0) + 14) % 16, 0u);
  EXPECT_EQ(c->room(0), 1982u);
  EXPECT_EQ(c->meta(1).offset, 2048u + 66);
  EXPECT_EQ(c->room(1), 2u * 2048 - 66);
}

// The pipeline's chains: no headroom unless a module prepends; then 64n + 2.
TEST(PacketBatchHeadroom, ChainsAlignTheIpHeader) {
  using namespace chain_paths;
  runtime::TableSource t;
  auto out = chain("esp-out", t);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->headroom() % 64, runtime::Chain::kL3Align);
  runtime::TableSource t2;
  auto in = chain("esp-in", t2);  // strips headers, prepends nothing
  ASSERT_TRUE(in);
  EXPECT_EQ(in->headroom(), 0u);
}

}  // namespace warpath::ipsec

#include "ipsec/core/crypto_core.hpp"

namespace warpath::ipsec {
namespace {

// GHASH's table multiplication (Shoup, 4 bits at a time) equals the bit-by-bit definition.
TEST(EspDeviceBodies, GhashTablesMatchTheDefinition) {
  std::mt19937_64 rng(3);
  for (int round = 0; round < 200; ++round) {
    const uint64_t hh = rng(), hl = rng();
    uint64_t mh[16], ml[16];
    core::ghash_table(hh, hl, mh, ml);
    uint64_t ah = rng(), al = rng(), bh = ah, bl = al;
    core::gf128_mul(ah, al, hh, hl);
    core::gf128_mul_table(bh, bl, mh, ml);
    ASSERT_EQ(ah, bh) << round;
    ASSERT_EQ(al, bl) << round;
  }
}

// cuda.esp's crypto (src/ipsec/core/crypto_core.hpp) run on the host against ref.esp (OpenSSL):
// the GPU's bodies are checked here, without a GPU, for every suite, length class and tamper.
// cuda.ctr's body (core::aes_ctr_range) on the host against ref.ctr: every skip, lengths
// around the block, counters whose low 32, 64 or all 128 bits are about to wrap, both key sizes.
TEST(EspDeviceBodies, CtrRangeMatchesRefCtrOnTheHost) {
  if (!detail::have_openssl()) GTEST_SKIP() << "needs ref.ctr (OpenSSL)";
  core::AesTable table;
  core::aes_table_build(table);
  std::mt19937_64 rng(53);
  auto ref = make_ctr_cipher("ref.ctr").value();
  for (int round = 0; round < 400; ++round) {
    uint8_t key[32];
    for (auto& b : key) b = uint8_t(rng());
    const uint32_t bytes = round % 2 ? 32 : 16;
    core::AesKey k;
    core::aes_expand(key, bytes, table, k);
    const uint32_t h = ref->add_key(key, bytes).value();
    CtrOp op;
    op.key = h;
    for (auto& b : op.counter) b = uint8_t(rng());
    const int edge = round % 4;  // 0: random; 1: low 32 bits wrap; 2: low 64; 3: all 128
    if (edge >= 1)
      std::memset(op.counter + 12, 0xFF, 4), op.counter[15] = uint8_t(0xFF - rng() % 2);
    if (edge >= 2) std::memset(op.counter + 8, 0xFF, 4);
    if (edge == 3) std::memset(op.counter, 0xFF, 8);
    op.skip = uint8_t(round % 16);
    std::vector<uint8_t> a(rng() % 3 ? rng() % 70 : rng() % 1501);
    for (auto& b : a) b = uint8_t(rng());
    std::vector<uint8_t> b = a;
    op.data                = b.data();
    op.len                 = uint32_t(b.size());
    ASSERT_TRUE(ref->apply({&op, 1}).is_ok());
    // At 16-byte alignment and off it (then bytes up to the first 16-byte boundary, words
    // after it: with `skip`, keystream shifted across two blocks either way).
    const uint32_t shift = round % 3 ? 0 : 1 + round % 15;
    std::vector<uint8_t> at(a.size() + 16);
    std::copy(a.begin(), a.end(), at.begin() + shift);
    core::aes_ctr_range(k, table, op.counter, op.skip, a.data(), uint32_t(a.size()));
    ASSERT_EQ(a, b) << "round " << round << " skip " << int(op.skip) << " len " << a.size();
    core::aes_ctr_range(k, table, op.counter, op.skip, at.data() + shift, uint32_t(a.size()));
    ASSERT_TRUE(std::equal(b.begin(), b.end(), at.begin() + shift))
        << "round " << round << " shift " << shift;
    ref->drop_key(h);
  }
}

// The table AES against FIPS 197's own examples (Appendix C.1 and C.3) and its S-box entries.
TEST(EspDeviceBodies, AesMatchesFips197Examples) {
  core::AesTable table;
  core::aes_table_build(table);
  EXPECT_EQ(core::sub_byte(table, 0x00), 0x63);
  EXPECT_EQ(core::sub_byte(table, 0x01), 0x7c);
  EXPECT_EQ(core::sub_byte(table, 0x53), 0xed);
  EXPECT_EQ(core::sub_byte(table, 0xff), 0x16);
  uint8_t key[32], in[16], out[16];
  for (int i = 0; i < 32; ++i) key[i] = uint8_t(i);
  for (int i = 0; i < 16; ++i) in[i] = uint8_t(0x11 * i);
  const uint8_t want128[16] = {0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30,
                               0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a};
  const uint8_t want256[16] = {0x8e, 0xa2, 0xb7, 0xca, 0x51, 0x67, 0x45, 0xbf,
                               0xea, 0xfc, 0x49, 0x90, 0x4b, 0x49, 0x60, 0x89};
  core::AesKey k;
  core::aes_expand(key, 16, table, k);
  core::aes_encrypt(k, table, in, out);
  EXPECT_TRUE(std::equal(out, out + 16, want128));
  core::aes_expand(key, 32, table, k);
  core::aes_encrypt(k, table, in, out);
  EXPECT_TRUE(std::equal(out, out + 16, want256));
}

TEST(EspDeviceBodies, MatchOpensslOnTheHost) {
  core::AesTable table;
  core::aes_table_build(table);
  std::mt19937_64 rng(11);
  const std::vector<SaKeys> suites = detail::every_suite(11);
  std::vector<core::DeviceSa> dev(suites.size());
  for (size_t s = 0; s < suites.size(); ++s) {
    const SaKeys& k = suites[s];
    core::sa_prepare(k.key.data(), k.key_bytes, k.nonce.data(), k.cipher == Cipher::kAesGcm,
                     k.integrity == Integrity::kHmacSha256, k.auth_key.data(), k.auth_key_bytes,
                     k.icv_bytes, k.esn, table, dev[s]);
  }
  auto ref = make_esp_crypto("ref.esp", {suites.data(), uint32_t(suites.size())});
  ASSERT_TRUE(ref.is_ok());
  for (uint32_t inner : {0u, 1u, 2u, 13u, 14u, 15u, 16u, 17u, 55u, 56u, 63u, 64u, 100u, 1000u, 1500u}) {
    for (uint32_t s = 0; s < suites.size(); ++s) {
      const uint32_t text = core::text_bytes(inner);
      std::vector<uint8_t> a(core::kEspHead + text + 16);
      const uint64_t seq = (uint64_t(rng() % 3) << 32) | (rng() % 100000 + 1);
      core::write_esp_header(a.data(), 0x1000 + s, seq);
      for (uint32_t b = 0; b < inner; ++b) a[core::kEspHead + b] = uint8_t(rng());
      core::write_trailer(a.data() + core::kEspHead, inner, core::kNextIpv4);
      std::vector<uint8_t> b = a, plain = a;
      CryptoOp op{b.data(), text, s, uint32_t(seq >> 32)};
      ASSERT_TRUE(ref.value()->seal({&op, 1}).is_ok());
      // The same packet where a frame would put it (not 16-byte aligned: GHASH's and SHA's
      // byte-wise reads; CTR aligns itself).
      std::vector<uint8_t> shifted(a.size() + 16);
      const uint32_t shift = 1 + s % 15;
      std::copy(a.begin(), a.end(), shifted.begin() + shift);
      core::seal_packet(dev[s], table, a.data(), text, uint32_t(seq >> 32));
      ASSERT_EQ(a, b) << "suite " << s << " inner " << inner;
      core::seal_packet(dev[s], table, shifted.data() + shift, text, uint32_t(seq >> 32));
      ASSERT_TRUE(std::equal(a.begin(), a.end(), shifted.begin() + shift))
          << "suite " << s << " shift " << shift;
      EXPECT_TRUE(
          core::open_packet(dev[s], table, shifted.data() + shift, text, uint32_t(seq >> 32)));
      EXPECT_TRUE(std::equal(plain.begin(), plain.begin() + core::kEspHead + text,
                             shifted.begin() + shift));
      EXPECT_TRUE(core::open_packet(dev[s], table, a.data(), text, uint32_t(seq >> 32)));
      EXPECT_TRUE(std::equal(a.begin(), a.begin() + core::kEspHead + text, plain.begin()));
      b[rng() % (core::kEspHead + text + suites[s].icv_bytes)] ^= 0x10;
      EXPECT_FALSE(core::open_packet(dev[s], table, b.data(), text, uint32_t(seq >> 32)));
    }
  }
}

}  // namespace
}  // namespace warpath::ipsec
