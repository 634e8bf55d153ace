#include "bridge/http/sse_decoder.hpp"

#include <charconv>

namespace bridge::http {

void SseDecoder::feed(std::string_view chunk, std::vector<SseEvent>& out) {
  if (skip_lf_ && !chunk.empty()) {
    if (chunk.front() == '\n') chunk.remove_prefix(1);
    skip_lf_ = false;
  }
  std::size_t start = 0;
  for (std::size_t i = 0; i < chunk.size(); ++i) {
    char c = chunk[i];
    if (c != '\n' && c != '\r') continue;
    std::string_view piece = chunk.substr(start, i - start);
    if (buffer_.empty()) {
      process_line(piece, out);
    } else {
      buffer_.append(piece);
      process_line(buffer_, out);
      buffer_.clear();
    }
    if (c == '\r') {
      if (i + 1 < chunk.size()) {
        if (chunk[i + 1] == '\n') ++i;
      } else {
        skip_lf_ = true;
      }
    }
    start = i + 1;
  }
  buffer_.append(chunk.substr(start));
}

void SseDecoder::finish(std::vector<SseEvent>& out) {
  if (!buffer_.empty()) {
    std::string line = std::move(buffer_);
    buffer_.clear();
    process_line(line, out);
  }
  dispatch(out);
}

void SseDecoder::process_line(std::string_view line, std::vector<SseEvent>& out) {
  if (!bom_checked_) {  // a byte order mark may start the stream (checked on whole lines)
    bom_checked_ = true;
    if (line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);
  }
  if (line.empty()) {
    dispatch(out);
    return;
  }
  if (line.front() == ':') return;  // comment / keep-alive
  std::string_view field = line, value;
  if (auto colon = line.find(':'); colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_) current_.data.push_back('\n');
    current_.data.append(value);
    has_data_ = true;
  } else if (field == "event") {
    current_.event.assign(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) current_.id.assign(value);
    last_id_ = current_.id;
  } else if (field == "retry") {
    int ms = 0;
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
    if (ec == std::errc() && p == value.data() + value.size()) current_.retry_ms = ms;
  }
}

void SseDecoder::dispatch(std::vector<SseEvent>& out) {
  if (has_data_) {
    out.push_back(std::move(current_));
  }
  current_ = SseEvent{};
  has_data_ = false;
}

}  // namespace bridge::http
