#pragma once
// Ids nobody else picks: `prefix` + 24 random hex digits (session ids, message ids).
#include <string>
#include <string_view>

namespace support {

std::string random_id(std::string_view prefix);

}  // namespace support
