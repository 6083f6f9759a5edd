// src/lookup/huge_array.cpp
#include "lookup/huge_array.hpp"

#include <cstdlib>
#include <new>

#include "core/huge_pages.hpp"

namespace warpath::lookup::detail {

HugeArray::HugeArray(size_t n_bytes) {
  const size_t page = warpath::detail::kHugePage;
  bytes             = n_bytes ? (n_bytes + page - 1) / page * page : page;
  data              = warpath::detail::huge_alloc(bytes);  // advice only: works without THP
  if (!data) throw std::bad_alloc();
}

HugeArray& HugeArray::operator=(HugeArray&& o) noexcept {
  if (this != &o) {
    std::free(data);
    data   = o.data;
    bytes  = o.bytes;
    o.data = nullptr;
  }
  return *this;
}

HugeArray::~HugeArray() { std::free(data); }

}  // namespace warpath::lookup::detail
