#pragma once
// A spdlog sink in front of another that takes every known key value out of each message
// (runtime::config::redact_secrets), so no code path can put a key in stderr or the log file.
#include <spdlog/sinks/sink.h>

#include <memory>
#include <string>

#include "runtime/config/secrets.hpp"

namespace app {

class RedactingSink : public spdlog::sinks::sink {
 public:
  explicit RedactingSink(spdlog::sink_ptr inner) : inner_(std::move(inner)) {}

  void log(const spdlog::details::log_msg& msg) override {
    if (!inner_->should_log(msg.level)) return;
    const std::string text = runtime::config::redact_secrets(std::string_view(msg.payload.data(), msg.payload.size()));
    spdlog::details::log_msg clean = msg;
    clean.payload = spdlog::string_view_t(text.data(), text.size());
    inner_->log(clean);
  }
  void flush() override { inner_->flush(); }
  void set_pattern(const std::string& pattern) override { inner_->set_pattern(pattern); }
  void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override { inner_->set_formatter(std::move(formatter)); }

 private:
  spdlog::sink_ptr inner_;
};

}  // namespace app
