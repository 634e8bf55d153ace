#include "runtime/config/diagnostic.hpp"

#include <algorithm>

namespace runtime::config {

std::string Diagnostic::to_string() const {
  std::string out = path;
  if (line > 0) out += ":" + std::to_string(line);
  out += ": ";
  if (severity == Severity::Warning) out += "warning: ";
  out += message;
  return out;
}

bool has_errors(const Diagnostics& d) {
  return std::any_of(d.begin(), d.end(), [](const Diagnostic& x) { return x.severity == Diagnostic::Severity::Error; });
}

}  // namespace runtime::config
