#pragma once
// Cooperative cancellation for one unit of work (a request, a prompt turn). Work in flight
// registers a callback that aborts it (close a socket, kill a process group, answer a pending
// client call); cancel() runs them once. Single-threaded: used only on the io_context thread.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>

namespace support {

class CancelSource {
 public:
  using Callback = std::function<void()>;

  bool cancelled() const { return cancelled_; }
  void cancel() {
    if (cancelled_) return;
    cancelled_ = true;
    auto callbacks = std::move(callbacks_);
    callbacks_.clear();
    for (auto& [_, cb] : callbacks) cb();
  }

  // RAII registration: the callback is removed when the guard goes away.
  class Registration {
   public:
    Registration() = default;
    Registration(CancelSource* src, std::uint64_t key) : src_(src), key_(key) {}
    Registration(Registration&& o) noexcept : src_(o.src_), key_(o.key_) { o.src_ = nullptr; }
    Registration& operator=(Registration&& o) noexcept {
      reset();
      src_ = o.src_;
      key_ = o.key_;
      o.src_ = nullptr;
      return *this;
    }
    ~Registration() { reset(); }
    void reset() {
      if (src_) src_->callbacks_.erase(key_);
      src_ = nullptr;
    }

   private:
    CancelSource* src_ = nullptr;
    std::uint64_t key_ = 0;
  };

  // If already cancelled the callback runs immediately.
  [[nodiscard]] Registration on_cancel(Callback cb) {
    if (cancelled_) {
      cb();
      return {};
    }
    auto key = next_++;
    callbacks_.emplace(key, std::move(cb));
    return Registration(this, key);
  }

 private:
  bool cancelled_ = false;
  std::uint64_t next_ = 1;
  std::map<std::uint64_t, Callback> callbacks_;
};

using CancelSourcePtr = std::shared_ptr<CancelSource>;

}  // namespace support
