// cuda.lpm: the DIR-24-8 and binary-search-on-lengths bodies in CUDA kernels over device
// mirrors of a FibState's images. A lookup call copies the addresses in, launches, copies the
// next hops out and waits (ExecContext::stream); a resident call (ExecContext::resident: the
// offload master's one upload) launches on them where they are and waits. Host updates reach the device through the
// FibState hooks: dirty IPv4 ranges are copied in place; a rebuilt image (IPv4 or IPv6) is
// uploaded whole, published by pointer swap, and the old one freed after ReadGuard says no
// lookup can still use it.
#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_array.cuh"
#include "core/cuda/scratch_pool.cuh"
#include "lookup/cuda/bsl6_cuda.hpp"
#include "lookup/cuda/dir24_8_cuda.hpp"
#include "lookup/engines.hpp"
#include "lookup/fib_state.hpp"

namespace warpath::lookup::detail {
namespace {

class CudaFib final : public Fib {
 public:
  explicit CudaFib(std::unique_ptr<FibState> state) : state_(std::move(state)) {}
  ~CudaFib() override {
    delete dv4_.load();
    delete dv6_.load();
  }

  Status init() {
    if (const Dir24_8Image* host4 = state_->v4()) {
      WARPATH_ASSIGN_OR_RETURN(auto v4, Dir24_8Device::upload(*host4));
      dv4_.store(v4.release());
    }
    WARPATH_ASSIGN_OR_RETURN(auto v6, Bsl6Device::upload(*state_->v6()));
    dv6_.store(v6.release());
    state_->on_v4_change = [this](Dir24_8Image& img, bool rebuilt) -> Status {
      Dir24_8Device* d4 = dv4_.load();
      if (!rebuilt && d4) return d4->apply(img, img.drain_dirty());
      WARPATH_ASSIGN_OR_RETURN(auto fresh, Dir24_8Device::upload(img));
      img.drain_dirty();
      return publish(dv4_, fresh.release());
    };
    state_->on_v6_change = [this](const Bsl6Image& img) -> Status {
      WARPATH_ASSIGN_OR_RETURN(auto fresh, Bsl6Device::upload(img));
      return publish(dv6_, fresh.release());
    };
    return Status::ok();
  }

  std::string_view id() const noexcept override { return "cuda.lpm"; }
  bool takes_device_memory() const noexcept override { return true; }

  Status do_lookup4(Span<const uint32_t> addrs, Span<NextHop> out, ExecContext& ctx) const override {
    return run(addrs, out, ctx, [&](const uint32_t* d_in, NextHop* d_out, void* stream) -> Status {
      const Dir24_8Device* d4 = dv4_.load(std::memory_order_acquire);
      if (!d4) {  // no IPv4 route yet (an IPv6-only FIB): no address has one
        WARPATH_CUDA_TRY(cudaMemsetAsync(d_out, 0xFF, size_t(addrs.size) * sizeof(NextHop),
                                         static_cast<cudaStream_t>(stream)));
        static_assert(kNoRoute == 0xFFFF'FFFFu, "the memset writes kNoRoute");
        return Status::ok();
      }
      return launch_dir24_8_lookup(*d4, d_in, d_out, addrs.size, stream);
    });
  }
  Status do_lookup6(Span<const Ip6> addrs, Span<NextHop> out, ExecContext& ctx) const override {
    return run(addrs, out, ctx, [&](const Ip6* d_in, NextHop* d_out, void* stream) {
      return launch_bsl6_lookup(dv6_.load(std::memory_order_acquire)->view(), d_in, d_out,
                                addrs.size, stream);
    });
  }

  Status add4(const Route4& r) override { return state_->add4(r); }
  Status add6(const Route6& r) override { return state_->add6(r); }
  Status remove4(uint32_t prefix, uint8_t len) override { return state_->remove4(prefix, len); }
  Status remove6(Ip6 prefix, uint8_t len) override { return state_->remove6(prefix, len); }
  FibStats stats() const override {
    FibStats s              = state_->stats();
    const Dir24_8Device* d4 = dv4_.load();
    s.memory_bytes += (d4 ? d4->memory_bytes() : 0) + dv6_.load()->memory_bytes();
    return s;
  }

 private:
  template <class T>
  Status publish(std::atomic<T*>& slot, T* fresh) {
    T* old = slot.exchange(fresh, std::memory_order_acq_rel);
    state_->guard().synchronize();
    delete old;
    return Status::ok();
  }

  template <class Key, class Launch>
  Status run(Span<const Key> addrs, Span<NextHop> out, ExecContext& ctx,
             const Launch& launch) const {
    if (addrs.size == 0) return Status::ok();
    auto stream = static_cast<cudaStream_t>(ctx.stream);
    // A deferred resident call (exec.hpp) holds the tables until its caller saw the stream
    // finish (read_guard.hpp: holds); any other call reads them within a section.
    const ReadGuard::Scope scope(state_->guard(), ctx.resident ? ctx.keep : nullptr);
    if (ctx.resident) {  // the addresses and next hops are device memory (exec.hpp)
      WARPATH_TRY(launch(addrs.data, out.data, stream));
      if (scope.deferred()) return Status::ok();
      WARPATH_CUDA_TRY(cudaStreamSynchronize(stream));
      return Status::ok();
    }
    auto scratch     = scratch_.acquire();  // this call's device buffers (scratch_pool.cuh)
    DeviceArray &in_ = scratch[0], &out_ = scratch[1];
    WARPATH_TRY(in_.reserve(size_t(addrs.size) * sizeof(Key)));
    WARPATH_TRY(out_.reserve(size_t(addrs.size) * sizeof(NextHop)));
    WARPATH_CUDA_TRY(cudaMemcpyAsync(in_.ptr, addrs.data, size_t(addrs.size) * sizeof(Key),
                                     cudaMemcpyHostToDevice, stream));
    WARPATH_TRY(launch(static_cast<const Key*>(in_.ptr), static_cast<NextHop*>(out_.ptr), stream));
    WARPATH_CUDA_TRY(cudaMemcpyAsync(out.data, out_.ptr, size_t(addrs.size) * sizeof(NextHop),
                                     cudaMemcpyDeviceToHost, stream));
    WARPATH_CUDA_TRY(cudaStreamSynchronize(stream));
    return Status::ok();
  }

  std::unique_ptr<FibState> state_;
  std::atomic<Dir24_8Device*> dv4_{nullptr};
  std::atomic<Bsl6Device*> dv6_{nullptr};
  ScratchPool<2> scratch_;
};

}  // namespace

Result<std::unique_ptr<Fib>> make_cuda_fib(const RouteTable& table, const FibParams& params) {
  int device = 0;
  WARPATH_CUDA_TRY(cudaGetDevice(&device));
  WARPATH_ASSIGN_OR_RETURN(auto state, FibState::create(table, params));
  auto fib = std::make_unique<CudaFib>(std::move(state));
  WARPATH_TRY(fib->init());
  return std::unique_ptr<Fib>(std::move(fib));
}

}  // namespace warpath::lookup::detail
