#include "support/line_framer.hpp"

#include <cstring>

namespace support {

void LineFramer::emit() {
  if (!partial_.empty() && partial_.back() == '\r') partial_.pop_back();
  // Blank lines between messages are harmless; skip them rather than report parse errors.
  if (partial_.find_first_not_of(" \t") != std::string::npos) sink_.on_line(std::move(partial_));
  partial_.clear();
}

void LineFramer::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    const void* nl = std::memchr(bytes.data(), '\n', bytes.size());
    std::size_t take = nl ? static_cast<const char*>(nl) - bytes.data() : bytes.size();
    if (discarding_) {
      discarded_ += take;
    } else if (partial_.size() + take > max_) {
      discarding_ = true;
      discarded_ = partial_.size() + take;
      partial_.clear();
      partial_.shrink_to_fit();
    } else {
      partial_.append(bytes.data(), take);
    }
    if (!nl) return;
    bytes.remove_prefix(take + 1);
    if (discarding_) {
      sink_.on_oversized_line(discarded_);
      discarding_ = false;
      discarded_ = 0;
    } else {
      emit();
    }
  }
}

void LineFramer::finish() {
  if (discarding_) {
    sink_.on_oversized_line(discarded_);
    discarding_ = false;
  } else if (!partial_.empty()) {
    emit();
  }
}

}  // namespace support
