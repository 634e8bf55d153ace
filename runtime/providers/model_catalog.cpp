#include "runtime/providers/model_catalog.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "bridge/http/http_client.hpp"
#include "runtime/providers/model_provider.hpp"

namespace runtime::providers {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

// A picker that fills in a few seconds late is fine; one provider that hangs must not hold a
// coroutine (and a socket) for the model request's long timeouts.
constexpr std::chrono::seconds kFetchTimeout{5};
constexpr std::size_t kMaxBody = 4 * 1024 * 1024;
// The first retry comes soon (a gateway still starting), later ones rarely: a provider without a
// models endpoint costs one small GET every few minutes.
constexpr std::chrono::seconds kRetryDelays[] = {std::chrono::seconds{2}, std::chrono::seconds{15},
                                                 std::chrono::seconds{60}, std::chrono::seconds{300}};

// GET <models endpoint> with the headers of a model request; nullopt (logged at debug: the
// picker then offers the current model only, which is no error for the user) when it fails.
asio::awaitable<std::optional<std::vector<std::string>>> fetch_model_list(const ResolvedModel& m) {
  auto format = m.provider.api_type == "anthropic" ? make_anthropic_messages_format() : make_openai_chat_format();
  bridge::http::HttpRequest req;
  req.method = "GET";
  req.url = format->models_endpoint(m.provider.base_url);
  for (auto& h : format->headers(m.api_key))
    if (h.first != "content-type" && h.first != "accept") req.headers.push_back(std::move(h));
  req.headers.emplace_back("accept", "application/json");
  bridge::http::StreamOptions options;
  options.connect_timeout = kFetchTimeout;
  options.idle_timeout = kFetchTimeout;
  int status = 0;
  std::string body;
  // Named callbacks, not temporaries inside co_await: GCC 12 destroys such temporaries twice.
  std::function<void(const bridge::http::HttpResponseHead&)> on_head = [&](const auto& head) { status = head.status; };
  std::function<void(std::string_view)> on_data = [&](std::string_view data) {
    if (body.size() < kMaxBody) body.append(data);
  };
  auto failure = co_await bridge::http::stream_request(req, options, std::move(on_head), std::move(on_data), nullptr);
  std::optional<std::vector<std::string>> models;
  if (failure) {
    spdlog::debug("models of provider '{}': {} failed: {}", m.provider.id, req.url, failure->message);
  } else if (status != 200) {
    spdlog::debug("models of provider '{}': {} answered HTTP {}", m.provider.id, req.url, status);
  } else if (!(models = parse_model_list(body))) {
    spdlog::debug("models of provider '{}': {} answered no `data[].id` list", m.provider.id, req.url);
  }
  co_return models;
}

}  // namespace

std::vector<std::string> model_choices(const config::MainConfig& cfg, const std::string& current,
                                       const std::map<std::string, std::vector<std::string>>& fetched) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](std::string v) {
    if (seen.insert(v).second) out.push_back(std::move(v));
  };
  if (!current.empty()) add(current);
  for (const auto& [id, provider] : cfg.providers) {
    const std::vector<std::string>* models = provider.models ? &*provider.models : nullptr;
    if (!models)
      if (auto it = fetched.find(id); it != fetched.end()) models = &it->second;
    if (models)
      for (const auto& m : *models) add(id + "/" + m);
  }
  return out;
}

std::optional<std::vector<std::string>> parse_model_list(std::string_view body) {
  json::error_code ec;
  auto v = json::parse(body, ec);
  const json::array* data = nullptr;
  if (!ec && v.is_object())
    if (auto* d = v.as_object().if_contains("data"); d && d->is_array()) data = &d->as_array();
  if (!data) return std::nullopt;
  std::vector<std::string> ids;
  for (const auto& entry : *data) {
    const json::value* id = entry.is_object() ? entry.as_object().if_contains("id") : nullptr;
    if (id && id->is_string() && !id->as_string().empty()) ids.emplace_back(id->as_string());
  }
  return ids;
}

double cost_of(const Usage& usage, const config::ModelPrice& price) {
  const auto cached = std::clamp<std::int64_t>(usage.cached_input_tokens, 0, usage.input_tokens);
  const double per_token = 1e-6;
  return (static_cast<double>(usage.input_tokens - cached) * price.input +
          static_cast<double>(cached) * price.cached_input.value_or(price.input) +
          static_cast<double>(usage.output_tokens) * price.output) *
         per_token;
}

struct ModelCatalog::State {
  asio::any_io_executor executor;
  bool alive = true;  // false once the catalog is gone: retries stop
  std::function<void()> on_change;
  std::map<std::string, std::vector<std::string>> fetched;  // by provider id
  // What each provider's list is fetched from ("<base_url> <key>"): a reload that changes either
  // starts a new fetch, and the old one's retries stop.
  std::map<std::string, std::string> source;
  std::set<asio::steady_timer*> retry_waits;  // fetches waiting to try again (stop() ends them)
};

ModelCatalog::ModelCatalog(asio::any_io_executor executor) : state_(std::make_shared<State>()) {
  state_->executor = std::move(executor);
}

// Fetches in flight keep the state alive but must not call back into whoever owned the catalog.
ModelCatalog::~ModelCatalog() { stop(); }

void ModelCatalog::stop() {
  state_->alive = false;
  state_->on_change = nullptr;
  for (auto* wait : state_->retry_waits) wait->cancel();
}

void ModelCatalog::on_change(std::function<void()> f) { state_->on_change = std::move(f); }

void ModelCatalog::fetch_missing(const config::MainConfig& cfg) {
  for (const auto& [id, provider] : cfg.providers) {
    if (provider.models) continue;
    ResolvedModel target;
    try {
      target = resolve_model(cfg, id + "/-");  // the provider and its key, as a model request has them
    } catch (const ModelError& e) {
      spdlog::debug("models of provider '{}' not fetched: {}", id, e.what());
      continue;
    }
    std::string source = target.provider.base_url + " " + target.api_key;
    if (auto& known = state_->source[id]; known == source) continue;
    else known = source;
    asio::co_spawn(
        state_->executor,
        [state = state_, target = std::move(target), source = std::move(source)]() -> asio::awaitable<void> {
          auto current = [&] { return state->alive && state->source[target.provider.id] == source; };
          std::optional<std::vector<std::string>> models;
          for (std::size_t failures = 0; !(models = co_await fetch_model_list(target)); ++failures) {
            if (!current()) co_return;
            asio::steady_timer wait(state->executor, kRetryDelays[std::min(failures, std::size(kRetryDelays) - 1)]);
            // Listed for stop() while it waits; taken off however the wait ends, also when the
            // io_context is destroyed with this frame still suspended (state outlives it).
            struct Listed {
              State& state;
              asio::steady_timer* timer;
              ~Listed() { state.retry_waits.erase(timer); }
            } listed{*state, &wait};
            state->retry_waits.insert(&wait);
            co_await wait.async_wait(asio::as_tuple(asio::use_awaitable));
            if (!current()) co_return;
          }
          if (!current()) co_return;
          auto [known, fresh] = state->fetched.try_emplace(target.provider.id);
          if (!fresh && known->second == *models) co_return;
          known->second = std::move(*models);
          if (state->on_change) state->on_change();
        },
        asio::detached);
  }
}

std::vector<std::string> ModelCatalog::choices(const config::MainConfig& cfg, const std::string& current) const {
  return model_choices(cfg, current, state_->fetched);
}

}  // namespace runtime::providers
