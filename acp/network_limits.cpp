#include "acp/network_limits.hpp"

#include "acp/methods.hpp"

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include <map>
#include <mutex>
#include <set>

namespace acp {

namespace json = boost::json;

ConnectionSlot& ConnectionSlot::operator=(ConnectionSlot&& other) noexcept {
  if (this != &other) {
    release();
    owner_ = std::move(other.owner_);
  }
  return *this;
}

void ConnectionSlot::release() {
  if (auto owner = std::exchange(owner_, nullptr)) --owner->used_;
}

std::optional<ConnectionSlot> ConnectionSlots::take() {
  if (used_ >= max_) return std::nullopt;
  ++used_;
  return ConnectionSlot(shared_from_this());
}

std::string ConnectionSlots::refusal() const {
  return "503 Service Unavailable: too many ACP connections (--max-connections " + std::to_string(max_) +
         "); close one or try again later\n";
}

namespace {

// Whether a request to `method` for `session` would add a session to those `open`: a new one
// or a fork always does; a load or resume unless that session is open here already.
bool adds_session(std::string_view method, const std::string& session, const std::set<std::string>& open) {
  if (method == methods::kSessionNew || method == methods::kSessionFork) return true;
  return (method == methods::kSessionLoad || method == methods::kSessionResume) && !open.contains(session);
}

bool opens_session(std::string_view method) {
  return method == methods::kSessionNew || method == methods::kSessionLoad || method == methods::kSessionResume || method == methods::kSessionFork;
}

std::string session_param(const json::object& message) {
  const auto* params = message.if_contains("params");
  const auto* object = params ? params->if_object() : nullptr;
  const auto* session = object ? object->if_contains("sessionId") : nullptr;
  return session && session->is_string() ? std::string(session->as_string()) : std::string();
}

class LimitedTransport : public Transport {
 public:
  LimitedTransport(std::unique_ptr<Transport> inner, ConnectionSlot slot, std::size_t max_sessions)
      : inner_(std::move(inner)), slot_(std::move(slot)), max_sessions_(max_sessions) {}

  void start(Handlers handlers) override {
    handlers_ = std::move(handlers);
    inner_->start({
        [this](IncomingMessage&& message) {
          if (admit(message)) handlers_.on_message(std::move(message));
        },
        [this] {
          slot_.release();
          if (handlers_.on_disconnect) handlers_.on_disconnect();
        },
    });
  }

  void send(std::string line) override {
    note_reply(line);
    inner_->send(std::move(line));
  }
  boost::asio::awaitable<void> wait_until_writable(support::CancelSource* cancel) override {
    return inner_->wait_until_writable(cancel);
  }
  void hold_output() override { inner_->hold_output(); }
  void release_output() override { inner_->release_output(); }
  void flush_and_stop() override { inner_->flush_and_stop(); }

 private:
  struct Pending {
    std::string method;
    std::string session;  // params.sessionId, if any
  };

  // False when the message opens a session past the limit: then it was answered here.
  bool admit(const IncomingMessage& message) {
    const json::object* o = message.problem == IncomingMessage::Problem::None ? message.value.if_object() : nullptr;
    const json::value* id = o ? o->if_contains("id") : nullptr;
    const json::value* method_value = o ? o->if_contains("method") : nullptr;
    if (!id || !method_value || !method_value->is_string()) return true;
    const std::string_view method = method_value->as_string();
    if (!opens_session(method) && method != methods::kSessionClose) return true;
    const std::string session = session_param(*o);
    std::lock_guard lock(mu_);
    if (adds_session(method, session, open_) && open_.size() + opening() >= max_sessions_) {
      spdlog::info("refusing {}: the connection has {} sessions open (--max-sessions {})", method, open_.size(), max_sessions_);
      inner_->send(json::serialize(json::object{
          {"jsonrpc", "2.0"},
          {"id", *id},
          {"error", {{"code", kTooManySessionsCode},
                     {"message", "Too many sessions on this connection (--max-sessions " + std::to_string(max_sessions_) +
                                     "): close one with session/close, or open another connection"}}}}));
      return false;
    }
    pending_[json::serialize(*id)] = Pending{std::string(method), session};
    return true;
  }

  std::size_t opening() const {
    std::size_t n = 0;
    for (const auto& [_, p] : pending_) n += adds_session(p.method, p.session, open_);
    return n;
  }

  // Keeps the set of open sessions up to date from the agent's replies to the requests admit()
  // noted. Notifications (most of the traffic) are not parsed.
  void note_reply(const std::string& line) {
    std::lock_guard lock(mu_);
    if (pending_.empty() || line.starts_with(R"({"jsonrpc":"2.0","method")")) return;
    boost::system::error_code ec;
    const json::value v = json::parse(line, ec);
    const json::object* o = ec ? nullptr : v.if_object();
    const json::value* id = o ? o->if_contains("id") : nullptr;
    if (!id || o->contains("method")) return;
    auto it = pending_.find(json::serialize(*id));
    if (it == pending_.end()) return;
    const Pending p = std::move(it->second);
    pending_.erase(it);
    const json::value* result = o->if_contains("result");
    if (!result) return;  // an error: nothing opened or closed
    if (p.method == methods::kSessionClose) {
      open_.erase(p.session);
    } else if (p.method == methods::kSessionNew || p.method == methods::kSessionFork) {
      const json::object* r = result->if_object();
      const json::value* made = r ? r->if_contains("sessionId") : nullptr;
      if (made && made->is_string()) open_.insert(std::string(made->as_string()));
    } else {
      open_.insert(p.session);
    }
  }

  std::unique_ptr<Transport> inner_;
  ConnectionSlot slot_;
  const std::size_t max_sessions_;
  Handlers handlers_;
  std::mutex mu_;
  std::set<std::string> open_;
  std::map<std::string, Pending> pending_;  // serialized request id -> what it asked
};

}  // namespace

std::unique_ptr<Transport> make_limited_transport(std::unique_ptr<Transport> inner, ConnectionSlot slot,
                                                  std::size_t max_sessions) {
  return std::make_unique<LimitedTransport>(std::move(inner), std::move(slot), max_sessions);
}

}  // namespace acp
