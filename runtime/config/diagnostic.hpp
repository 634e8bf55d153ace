#pragma once
// A problem found while loading configuration, printed as `path:line: message`.
#include <string>
#include <vector>

namespace runtime::config {

struct Diagnostic {
  enum class Severity { Error, Warning };
  Severity severity = Severity::Error;
  std::string path;  // the file at fault
  int line = 0;      // 1-based; 0 when the whole file is meant
  std::string message;

  std::string to_string() const;
};

using Diagnostics = std::vector<Diagnostic>;

bool has_errors(const Diagnostics& d);

}  // namespace runtime::config
