// The executor helper's frames (helper_protocol.hpp).
#include "runtime/executors/helper_protocol.hpp"

#include <stdexcept>

namespace runtime::executors::helper {

void put_u32(std::string& out, std::uint32_t v) {
  const char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                     static_cast<char>(v)};
  out.append(b, 4);
}

void put_string(std::string& out, std::string_view s) {
  put_u32(out, static_cast<std::uint32_t>(s.size()));
  out.append(s);
}

namespace {
std::uint32_t get_u32(std::string_view s) {
  auto b = [&](int i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(s[i])); };
  return b(0) << 24 | b(1) << 16 | b(2) << 8 | b(3);
}
}  // namespace

std::string encode(const Frame& f) {
  std::string out;
  out.reserve(9 + f.payload.size());
  put_u32(out, static_cast<std::uint32_t>(5 + f.payload.size()));
  put_u32(out, f.id);
  out.push_back(f.kind);
  out.append(f.payload);
  return out;
}

std::optional<Frame> FrameReader::next() {
  const std::string_view view = std::string_view(buffer_).substr(at_);
  if (view.size() < 4) return std::nullopt;
  const std::uint32_t length = get_u32(view);
  if (length < 5) throw std::runtime_error("a frame of " + std::to_string(length) + " bytes is too short");
  if (length > kMaxFrameBytes) throw std::runtime_error("a frame of " + std::to_string(length) + " bytes is too large");
  if (view.size() < 4 + length) return std::nullopt;
  Frame f{get_u32(view.substr(4)), view[8], std::string(view.substr(9, length - 5))};
  at_ += 4 + length;
  // Drop what was read once it is most of the buffer, so the buffer does not grow forever.
  if (at_ > buffer_.size() / 2) {
    buffer_.erase(0, at_);
    at_ = 0;
  }
  return f;
}

std::string_view PayloadReader::take(std::size_t n) {
  if (p_.size() - at_ < n) throw std::runtime_error("the payload ends early");
  auto s = p_.substr(at_, n);
  at_ += n;
  return s;
}

std::uint32_t PayloadReader::u32() { return get_u32(take(4)); }

std::uint64_t PayloadReader::u64() {
  const std::uint64_t high = u32();
  return high << 32 | u32();
}

std::string PayloadReader::string() { return std::string(take(u32())); }

char PayloadReader::byte() { return take(1)[0]; }

}  // namespace runtime::executors::helper
