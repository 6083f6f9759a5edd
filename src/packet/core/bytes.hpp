// src/packet/core/bytes.hpp: the byte-order and checksum helpers of warpath/net, under the
// names the parsers and the packet code use (packet::core::load_be16, ones_sum, ...).
#pragma once
#include <cstdint>

#include "warpath/core/hd.hpp"
#include "warpath/net/byte_order.hpp"
#include "warpath/net/checksum.hpp"

namespace warpath::packet::core {

using net::fold_checksum;
using net::load_be16;
using net::load_be32;
using net::ones_sum;
using net::ones_sum20;
using net::ones_sum_words;
using net::store_be16;
using net::store_be32;

}  // namespace warpath::packet::core
