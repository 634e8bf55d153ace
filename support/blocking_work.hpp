#pragma once
// Counts work handed from an io thread to a worker pool that has not yet posted its result back.
// The server never reads it; a harness that steps the io_context by hand (tests/fuzz/agent_fuzz)
// does, to tell "the agent waits for a pool thread" (wait a moment) from "the agent waits for us"
// (go on at once) without sleeping on every step.
#include <atomic>

namespace support {

inline std::atomic<int>& blocking_work_in_flight() {
  static std::atomic<int> count{0};
  return count;
}

// Held from the hand-off until the result has been posted back to the waiting executor.
class BlockingWorkToken {
 public:
  BlockingWorkToken() { blocking_work_in_flight().fetch_add(1, std::memory_order_relaxed); }
  ~BlockingWorkToken() { release(); }
  BlockingWorkToken(BlockingWorkToken&& other) noexcept : held_(other.held_) { other.held_ = false; }
  BlockingWorkToken(const BlockingWorkToken&) = delete;
  BlockingWorkToken& operator=(const BlockingWorkToken&) = delete;
  BlockingWorkToken& operator=(BlockingWorkToken&&) = delete;
  // Call after posting the result back: a reader that sees the count drop finds the result queued.
  void release() {
    if (held_) blocking_work_in_flight().fetch_sub(1, std::memory_order_release);
    held_ = false;
  }

 private:
  bool held_ = true;
};

}  // namespace support
