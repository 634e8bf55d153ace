// Line numbers of places in a file's text, for `path:line:` diagnostics.
#include "runtime/engine/text_lines.hpp"

#include <string>

namespace runtime::engine {

int line_at_offset(std::string_view text, std::size_t off) {
  if (off > text.size()) off = text.size();
  int line = 1;
  for (std::size_t i = 0; i < off; ++i)
    if (text[i] == '\n') ++line;
  return line;
}

int json_key_line(std::string_view text, std::string_view key, std::size_t from) {
  std::string quoted = "\"" + std::string(key) + "\"";
  std::size_t pos = from;
  while ((pos = text.find(quoted, pos)) != std::string_view::npos) {
    std::size_t after = pos + quoted.size();
    while (after < text.size() && (text[after] == ' ' || text[after] == '\t' || text[after] == '\r' || text[after] == '\n'))
      ++after;
    if (after < text.size() && text[after] == ':') return line_at_offset(text, pos);
    pos += quoted.size();
  }
  return 0;
}

}  // namespace runtime::engine
