#include "support/random_id.hpp"

#include <random>

namespace support {

std::string random_id(std::string_view prefix) {
  // One generator per thread: ids are made on the io thread and on the pool.
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(prefix);
  for (int i = 0; i < 24; ++i) id.push_back(kHex[rng() & 15]);
  return id;
}

}  // namespace support
