#pragma once
// A model provider streams one model response for a conversation. Concrete wire formats
// (OpenAI Chat Completions, Anthropic Messages) only build the request body and decode SSE
// events; HTTP, retries with backoff, timeouts and error classification are shared.
#include <boost/asio/awaitable.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "support/cancellation.hpp"
#include "bridge/http/sse_decoder.hpp"
#include "runtime/protocol/conversation.hpp"
#include "runtime/config/main_config.hpp"
#include "runtime/config/secrets.hpp"

namespace runtime::providers {

struct ModelRequest {
  std::string model;
  std::string system;
  const std::vector<Message>* messages = nullptr;
  std::vector<ToolSpec> tools;
  // OpenAI's reasoning_effort ("low" | "medium" | "high"); empty: not sent (models without
  // reasoning refuse the field). The Anthropic format ignores it.
  std::string reasoning_effort;
};

struct ModelResponse {
  std::string text;
  std::string reasoning;
  std::vector<ToolCall> tool_calls;
  FinishReason finish = FinishReason::Stop;
  Usage usage;
};

struct StreamCallbacks {
  std::function<void(std::string_view)> on_text;
  std::function<void(std::string_view)> on_reasoning;
  std::function<void(int attempt, int max_attempts, const std::string& why)> on_retry;
  // Awaited before more of the stream is read: resumes when whoever shows the text can take
  // more (the editor reads what was sent). Unset: read as fast as the model sends.
  std::function<boost::asio::awaitable<void>()> wait_for_consumer;
};

class ModelError : public std::runtime_error {
 public:
  enum class Kind { Auth, Config, Timeout, Network, Server, RateLimit, BadRequest, Cancelled };
  // Every provider error becomes text here: a key echoed by the provider (some gateways put it in
  // their error body) never reaches the editor, the log or the journal.
  ModelError(Kind kind, std::string_view message)
      : std::runtime_error(config::redact_secrets(message)), kind_(kind) {}
  Kind kind() const { return kind_; }
  bool retryable() const {
    return kind_ == Kind::Timeout || kind_ == Kind::Network || kind_ == Kind::Server || kind_ == Kind::RateLimit;
  }

 private:
  Kind kind_;
};

// Per-request decoding state of one wire format.
class StreamDecoder {
 public:
  virtual ~StreamDecoder() = default;
  // Applies one SSE event to `out`, calling the callbacks for streamed text.
  virtual void on_event(const bridge::http::SseEvent& ev, ModelResponse& out, StreamCallbacks& cb) = 0;
  // Called at end of stream; throws ModelError if the stream ended before the response did.
  virtual void finish(ModelResponse& out) = 0;
};

class WireFormat {
 public:
  virtual ~WireFormat() = default;
  virtual std::string endpoint(const std::string& base_url) const = 0;
  // Where the provider lists its models (GET; answered with `data[].id`).
  virtual std::string models_endpoint(const std::string& base_url) const = 0;
  virtual std::vector<std::pair<std::string, std::string>> headers(const std::string& api_key) const = 0;
  virtual std::string body(const ModelRequest& req, std::optional<int> max_output_tokens) const = 0;
  virtual std::unique_ptr<StreamDecoder> decoder() const = 0;
  // The provider's error message from an error response body, if it has one.
  virtual std::string error_message(std::string_view body) const = 0;
};

std::unique_ptr<WireFormat> make_openai_chat_format();
std::unique_ptr<WireFormat> make_anthropic_messages_format();

// The model the session uses: a provider, its key, and a model name.
struct ResolvedModel {
  config::ProviderConfig provider;
  std::string model;
  std::string api_key;  // never logged
  std::string api_key_source;  // where the key came from: "$VAR" or the credentials.yaml path; empty = no key
};

// What the turn loop talks to: one streamed response per request. ModelClient is the real one;
// unit tests script their own.
class Model {
 public:
  virtual ~Model() = default;
  virtual const ResolvedModel& model() const = 0;
  // Streams one response. Throws ModelError.
  virtual boost::asio::awaitable<ModelResponse> stream(const ModelRequest& req, StreamCallbacks& cb,
                                                       support::CancelSource* cancel) = 0;
};

class ModelClient : public Model {
 public:
  explicit ModelClient(ResolvedModel model);
  const ResolvedModel& model() const override { return model_; }

  // Retries 429/5xx/connection failures with backoff while nothing has been streamed yet,
  // telling cb.on_retry before each new attempt.
  boost::asio::awaitable<ModelResponse> stream(const ModelRequest& req, StreamCallbacks& cb,
                                               support::CancelSource* cancel) override;

 private:
  ResolvedModel model_;
  std::unique_ptr<WireFormat> format_;
};

// Opens the Model a turn talks to. The server uses make_model_client; the fuzzer and tests that
// drive the whole agent give their own (SessionManager::Deps::open_model).
using ModelFactory = std::function<std::unique_ptr<Model>(ResolvedModel)>;
std::unique_ptr<Model> make_model_client(ResolvedModel model);

// Which model a session uses and where that choice comes from, first set wins: the agent's
// `model`, $OPENVAALA_MODEL, config.yaml's `model`. `model` is empty when none is set.
struct ModelChoice {
  enum class From { None, Agent, Environment, ConfigFile };
  std::string model;
  From from = From::None;
};
ModelChoice choose_model(const config::MainConfig& cfg, const std::optional<std::string>& agent_model);

// Works out the model from config.yaml and the conventional environment variables (DESIGN §5).
// Throws ModelError(Config | Auth) with a message that says what to set.
ResolvedModel resolve_model(const config::MainConfig& cfg, const std::optional<std::string>& model_override = {});

}  // namespace runtime::providers
