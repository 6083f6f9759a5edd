// bench/gpu/gpu_bench_crypto.cu: warpath-gpu-bench's ESP and AES-CTR rows (gpu_bench.cuh).
#include "gpu/gpu_bench.cuh"

namespace warpath::gpu_bench {

// ESP crypto (cuda.esp): sealing 1,420-byte inner packets with AES-128-GCM and with AES-128-CTR
// + HMAC-SHA1-96, kernel-only (packets resident on the device) and end to end (cuda.esp's seal:
// gather, copy up, kernel, copy down, scatter), at growing batches. Gbit/s = mpps * 1420 * 8 /
// 1000 (the issue's goal: >= 400 Gbit/s AES-128-GCM kernel-only on an H100). The largest batch
// is opened again and must verify.
Status run_esp(int repeat, std::vector<Row>& rows) {
  constexpr uint32_t kInner = 1420, kMax = 65536;
  for (const bool gcm : {true, false}) {
    ipsec::SaKeys k;
    k.cipher         = gcm ? ipsec::Cipher::kAesGcm : ipsec::Cipher::kAesCtr;
    k.integrity      = gcm ? ipsec::Integrity::kNone : ipsec::Integrity::kHmacSha1;
    k.auth_key_bytes = gcm ? 0 : 20;
    k.icv_bytes      = gcm ? 16 : 12;
    for (int i = 0; i < 32; ++i) k.key[size_t(i)] = uint8_t(i * 7 + 1);
    for (int i = 0; i < 20; ++i) k.auth_key[size_t(i)] = uint8_t(i + 1);
    const uint32_t text = ipsec::core::text_bytes(kInner);
    const uint32_t span = (ipsec::core::kEspHead + text + 16 + 15) / 16 * 16;
    std::vector<uint8_t> host(size_t(span) * kMax);
    std::vector<ipsec::detail::EspDeviceOp> ops(kMax);
    std::vector<ipsec::CryptoOp> host_ops(kMax);
    for (uint32_t p = 0; p < kMax; ++p) {
      uint8_t* e = host.data() + size_t(p) * span;
      ipsec::core::write_esp_header(e, 0x2001, p + 1);
      ipsec::core::write_trailer(e + ipsec::core::kEspHead, kInner, ipsec::core::kNextIpv4);
      ops[p]      = {p * span, text, 0, 0};
      host_ops[p] = {e, text, 0, 0};
    }
    void *d_sas = nullptr, *d_data = nullptr, *d_ops = nullptr;
    WARPATH_CUDA_TRY(cudaMalloc(&d_sas, sizeof(ipsec::core::DeviceSa)));
    WARPATH_CUDA_TRY(cudaMalloc(&d_data, host.size()));
    WARPATH_CUDA_TRY(cudaMalloc(&d_ops, ops.size() * sizeof(ops[0])));
    WARPATH_TRY(ipsec::detail::prepare_device_sas(&k, 1, static_cast<ipsec::core::DeviceSa*>(d_sas)));
    WARPATH_CUDA_TRY(cudaMemcpy(d_data, host.data(), host.size(), cudaMemcpyHostToDevice));
    WARPATH_CUDA_TRY(cudaMemcpy(d_ops, ops.data(), ops.size() * sizeof(ops[0]), cudaMemcpyHostToDevice));
    WARPATH_ASSIGN_OR_RETURN(auto engine, ipsec::make_esp_crypto("cuda.esp", {&k, 1}));
    const std::string name = gcm ? "esp.gcm128.seal.1420B" : "esp.ctr128-sha1.seal.1420B";
    for (uint32_t n = 256; n <= kMax; n *= 4) {
      WARPATH_ASSIGN_OR_RETURN(
          float kernel,
          time_kernel(
              repeat,
              [&] {
                return ipsec::detail::launch_esp(
                    static_cast<ipsec::core::DeviceSa*>(d_sas), static_cast<uint8_t*>(d_data),
                    static_cast<ipsec::detail::EspDeviceOp*>(d_ops), n, nullptr, nullptr);
              },
              launches_for(n)));
      double best_e2e = 1e30;
      for (int r = 0; r < repeat; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        WARPATH_TRY(engine->seal({host_ops.data(), n}));
        best_e2e = std::min(best_e2e, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      rows.push_back({name, n, kernel * 1e3, n / (kernel * 1e3), best_e2e * 1e3, n / (best_e2e * 1e3)});
    }
    // What was sealed last opens again (the ICVs verify).
    std::vector<uint8_t> ok(kMax);
    WARPATH_TRY(engine->open({host_ops.data(), kMax}, ok.data()));
    for (uint32_t p = 0; p < kMax; ++p)
      if (!ok[p]) return Status(Errc::kInvalidArgument, name + ": packet " + std::to_string(p) + " did not open");
    cudaFree(d_sas);
    cudaFree(d_data);
    cudaFree(d_ops);
  }
  return Status::ok();
}

// GASPP's AES application (cuda.ctr, the flow-aes module's GPU engine): AES-128-CTR over the
// 1,392-byte payloads of 1,420-byte packets of 1,024 flows (a key each), each range starting at
// a random byte of its block, kernel-only (ranges resident) and end to end (cuda.ctr's apply:
// gather, copy up, kernel, copy down, scatter). The end-to-end output must equal ref.ctr's.
Status run_ctr(int repeat, std::vector<Row>& rows) {
  constexpr uint32_t kLen = 1392, kMax = 65536, kKeys = 1024;
  WARPATH_ASSIGN_OR_RETURN(auto engine, ipsec::make_ctr_cipher("cuda.ctr"));
  std::vector<ipsec::core::AesKey> keys(kKeys);
  std::vector<uint32_t> handles(kKeys);
  ipsec::core::AesTable table;
  ipsec::core::aes_table_build(table);
  std::vector<std::array<uint8_t, 16>> raw(kKeys);
  for (uint32_t k = 0; k < kKeys; ++k) {
    for (int b = 0; b < 16; ++b) raw[k][size_t(b)] = uint8_t(k * 13 + b * 7 + 1);
    ipsec::core::aes_expand(raw[k].data(), 16, table, keys[k]);
    WARPATH_ASSIGN_OR_RETURN(handles[k], engine->add_key(raw[k].data(), 16));
  }
  std::vector<uint8_t> host(size_t(kLen + 16) * kMax);
  std::vector<ipsec::detail::CtrDeviceOp> ops(kMax);
  std::vector<ipsec::CtrOp> host_ops(kMax);
  for (uint32_t p = 0; p < kMax; ++p) {
    const uint32_t key            = p % kKeys;
    ipsec::detail::CtrDeviceOp& d = ops[p];
    d.offset = p * (kLen + 16), d.len = kLen, d.key = key, d.skip = (p * 7) % 16;
    for (int b = 0; b < 16; ++b) d.counter[b] = uint8_t(p >> (b % 4 * 8));
    host_ops[p].key  = handles[key];
    host_ops[p].skip = uint8_t(d.skip);
    std::memcpy(host_ops[p].counter, d.counter, 16);
    host_ops[p].data = host.data() + d.offset;
    host_ops[p].len  = kLen;
  }
  for (size_t b = 0; b < host.size(); ++b) host[b] = uint8_t(b * 31);
  void *d_keys = nullptr, *d_data = nullptr, *d_ops = nullptr;
  WARPATH_CUDA_TRY(cudaMalloc(&d_keys, sizeof(keys[0]) * kKeys));
  WARPATH_CUDA_TRY(cudaMalloc(&d_data, host.size()));
  WARPATH_CUDA_TRY(cudaMalloc(&d_ops, sizeof(ops[0]) * kMax));
  WARPATH_CUDA_TRY(
      cudaMemcpy(d_keys, keys.data(), sizeof(keys[0]) * kKeys, cudaMemcpyHostToDevice));
  WARPATH_CUDA_TRY(cudaMemcpy(d_data, host.data(), host.size(), cudaMemcpyHostToDevice));
  WARPATH_CUDA_TRY(cudaMemcpy(d_ops, ops.data(), sizeof(ops[0]) * kMax, cudaMemcpyHostToDevice));
  const std::string name = "ctr.aes128.1392B";
  for (uint32_t n = 256; n <= kMax; n *= 4) {
    WARPATH_ASSIGN_OR_RETURN(float kernel,
                             time_kernel(
                                 repeat,
                                 [&] {
                                   return ipsec::detail::launch_ctr(
                                       static_cast<ipsec::core::AesKey*>(d_keys),
                                       static_cast<uint8_t*>(d_data),
                                       static_cast<ipsec::detail::CtrDeviceOp*>(d_ops), n, nullptr);
                                 },
                                 launches_for(n)));
    double best_e2e = 1e30;
    for (int r = 0; r < repeat; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      WARPATH_TRY(engine->apply({host_ops.data(), n}));
      best_e2e = std::min(
          best_e2e,
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    rows.push_back(
        {name, n, kernel * 1e3, n / (kernel * 1e3), best_e2e * 1e3, n / (best_e2e * 1e3)});
  }
  // The engine's output against ref.ctr's on fresh copies of the first 4,096 ranges.
  auto ref = ipsec::make_ctr_cipher("ref.ctr");
  if (ref.is_ok()) {
    constexpr uint32_t kCheck = 4096;
    std::vector<uint8_t> a(host.begin(), host.begin() + long(kCheck * (kLen + 16))), b = a;
    std::vector<ipsec::CtrOp> oa(host_ops.begin(), host_ops.begin() + kCheck), ob      = oa;
    std::vector<uint32_t> ref_handles(kKeys);
    for (uint32_t k = 0; k < kKeys; ++k) {
      WARPATH_ASSIGN_OR_RETURN(ref_handles[k], ref.value()->add_key(raw[k].data(), 16));
    }
    for (uint32_t p = 0; p < kCheck; ++p) {
      oa[p].data = a.data() + size_t(p) * (kLen + 16);
      ob[p].data = b.data() + size_t(p) * (kLen + 16);
      ob[p].key  = ref_handles[p % kKeys];
    }
    WARPATH_TRY(engine->apply({oa.data(), kCheck}));
    WARPATH_TRY(ref.value()->apply({ob.data(), kCheck}));
    if (a != b) return Status(Errc::kInvalidArgument, name + ": cuda.ctr differs from ref.ctr");
  }
  cudaFree(d_keys);
  cudaFree(d_data);
  cudaFree(d_ops);
  return Status::ok();
}

// Packet scheduling on the GPU (GASPP section 5.3, its Figure 10): AES-128-GCM sealing of
// packets whose inner lengths are spread uniformly over 40-1,500 bytes, kernel-only, in arrival
// order ("esp.gcm128.seal.mixed.arrival") and scheduled as the offload master does it: the
// ops sorted by core::length_key with CUB's radix sort, gathered, then sealed
// ("esp.gcm128.seal.mixed.scheduled", the sort and gather included in its time). Scheduling
// pays where the second row beats the first; the master sorts only when the chain asks
// (Chain::set_schedule_sort, `warpath run --schedule`).
Status run_esp_schedule(int repeat, std::vector<Row>& rows) {
  constexpr uint32_t kMax = 65536;
  ipsec::SaKeys k;
  k.cipher    = ipsec::Cipher::kAesGcm;
  k.integrity = ipsec::Integrity::kNone;
  k.icv_bytes = 16;
  for (int i = 0; i < 32; ++i) k.key[size_t(i)] = uint8_t(i * 5 + 3);
  std::vector<ipsec::detail::EspDeviceOp> ops(kMax);
  std::vector<uint16_t> keys(kMax);
  std::vector<uint8_t> host;
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (uint32_t p = 0; p < kMax; ++p) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const uint32_t inner = 40 + uint32_t(x % 1461);
    const uint32_t text  = ipsec::core::text_bytes(inner);
    const uint32_t span  = (ipsec::core::kEspHead + text + 16 + 15) / 16 * 16;
    const size_t at      = host.size();
    host.resize(at + span);
    ipsec::core::write_esp_header(host.data() + at, 0x2002, p + 1);
    ipsec::core::write_trailer(host.data() + at + ipsec::core::kEspHead, inner,
                               ipsec::core::kNextIpv4);
    ops[p]  = {uint32_t(at), text, 0, 0};
    keys[p] = runtime::core::length_key(ipsec::core::kEspHead + text + 16);
  }
  void *d_sas = nullptr, *d_data = nullptr, *d_ops = nullptr, *d_sorted = nullptr,
       *d_keys = nullptr, *d_order = nullptr;
  WARPATH_CUDA_TRY(cudaMalloc(&d_sas, sizeof(ipsec::core::DeviceSa)));
  WARPATH_CUDA_TRY(cudaMalloc(&d_data, host.size()));
  WARPATH_CUDA_TRY(cudaMalloc(&d_ops, kMax * sizeof(ops[0])));
  WARPATH_CUDA_TRY(cudaMalloc(&d_sorted, kMax * sizeof(ops[0])));
  WARPATH_CUDA_TRY(cudaMalloc(&d_keys, kMax * sizeof(uint16_t)));
  WARPATH_CUDA_TRY(cudaMalloc(&d_order, kMax * sizeof(uint32_t)));
  WARPATH_TRY(ipsec::detail::prepare_device_sas(&k, 1, static_cast<ipsec::core::DeviceSa*>(d_sas)));
  WARPATH_CUDA_TRY(cudaMemcpy(d_data, host.data(), host.size(), cudaMemcpyHostToDevice));
  WARPATH_CUDA_TRY(cudaMemcpy(d_ops, ops.data(), kMax * sizeof(ops[0]), cudaMemcpyHostToDevice));
  WARPATH_CUDA_TRY(
      cudaMemcpy(d_keys, keys.data(), kMax * sizeof(uint16_t), cudaMemcpyHostToDevice));
  auto* sas  = static_cast<ipsec::core::DeviceSa*>(d_sas);
  auto* data = static_cast<uint8_t*>(d_data);
  for (uint32_t n = 1024; n <= kMax; n *= 4) {
    WARPATH_ASSIGN_OR_RETURN(float arrival,
                             time_kernel(
                                 repeat,
                                 [&] {
                                   return ipsec::detail::launch_esp(
                                       sas, data, static_cast<ipsec::detail::EspDeviceOp*>(d_ops),
                                       n, nullptr, nullptr);
                                 },
                                 launches_for(n)));
    WARPATH_ASSIGN_OR_RETURN(
        float scheduled,
        time_kernel(
            repeat,
            [&]() -> Status {
              const char* why = nullptr;
              if (!runtime::detail::device_sort_order(
                      static_cast<const uint16_t*>(d_keys), static_cast<uint32_t*>(d_order), n,
                      runtime::core::kLengthKeyBits, nullptr, &why) ||
                  !runtime::detail::device_gather_rows(static_cast<const uint8_t*>(d_ops),
                                                       static_cast<uint8_t*>(d_sorted),
                                                       static_cast<const uint32_t*>(d_order), n,
                                                       uint32_t(sizeof(ops[0])), nullptr, &why))
                return Status(Errc::kCudaError, std::string("schedule: ") + (why ? why : "?"));
              return ipsec::detail::launch_esp(sas, data,
                                               static_cast<ipsec::detail::EspDeviceOp*>(d_sorted),
                                               n, nullptr, nullptr);
            },
            launches_for(n)));
    rows.push_back({"esp.gcm128.seal.mixed.arrival", n, arrival * 1e3, n / (arrival * 1e3), 0, 0});
    rows.push_back(
        {"esp.gcm128.seal.mixed.scheduled", n, scheduled * 1e3, n / (scheduled * 1e3), 0, 0});
  }
  for (void* p : {d_sas, d_data, d_ops, d_sorted, d_keys, d_order}) cudaFree(p);
  return Status::ok();
}

}  // namespace warpath::gpu_bench
