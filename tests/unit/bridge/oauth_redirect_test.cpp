// The loopback redirect listener of an OAuth sign-in (issue 40 items 13 and 14): a redirect
// without the sign-in's state is refused and the wait goes on; idle connections do not hold up
// the browser's redirect.
#include "bridge/mcp/oauth_redirect.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bridge/mcp/errors.hpp"

namespace {

namespace asio = boost::asio;
using bridge::mcp::oauth::RedirectListener;

int port_of(const std::string& redirect_uri) {
  // http://127.0.0.1:<port>/callback
  const auto colon = redirect_uri.rfind(':');
  return std::stoi(redirect_uri.substr(colon + 1));
}

// How long a request waits for its answer: a listener that stopped serving (a sign-in ended by a
// forged redirect) must fail the test, not hang it.
constexpr timeval kAnswerWithin{5, 0};

// A connected socket to the listener (blocking, reads and writes bounded by kAnswerWithin), or -1.
int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &kAnswerWithin, sizeof kAnswerWithin);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &kAnswerWithin, sizeof kAnswerWithin);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The HTTP status of the answer to GET `target` (0: no answer within kAnswerWithin).
int get(int port, const std::string& target) {
  const int fd = connect_to(port);
  if (fd < 0) return 0;
  const std::string req = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  if (::write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) {
    ::close(fd);
    return 0;
  }
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) got.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  if (got.rfind("HTTP/1.1 ", 0) != 0 || got.size() < 12) return 0;
  return std::stoi(got.substr(9, 3));
}

// Runs wait_for_code("right-state") while `browser` plays the other side on a thread of its own.
struct SignIn {
  asio::io_context ioc;
  RedirectListener listener{ioc.get_executor(), 0};
  std::optional<std::string> code;
  std::string error;

  void run(std::chrono::seconds timeout, const std::function<void(int port)>& browser) {
    bool done = false;
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
          try {
            code = co_await listener.wait_for_code("right-state", nullptr, timeout, "remote");
          } catch (const std::exception& e) {
            error = e.what();
          }
          done = true;
        },
        asio::detached);
    std::atomic<bool> browser_done = false;
    std::thread other([&, port = port_of(listener.redirect_uri())] {
      browser(port);
      browser_done = true;
    });
    // Until both sides are done (the last answer is written after the wait has its code), not
    // until the io_context runs out of work: connections left open keep their deadlines running.
    while (!done || !browser_done) ioc.run_one_for(std::chrono::milliseconds(50));
    other.join();
  }
};

TEST(OAuthRedirect, ARedirectWithAWrongOrMissingStateIsRefusedAndTheSignInWaitsForTheRightOne) {
  SignIn s;
  std::vector<int> statuses;
  s.run(std::chrono::seconds(20), [&](int port) {
    // Stops at the first wrong answer: a forged redirect that ended the sign-in leaves nobody
    // serving, and every later request would only wait out kAnswerWithin.
    const auto answered = [&](const std::string& target, int want) {
      statuses.push_back(get(port, target));
      return statuses.back() == want;
    };
    (void)(answered("/callback?code=forged&state=wrong-state", 400) && answered("/callback?code=forged", 400) &&
           answered("/callback?code=forged&state=", 400) &&
           answered("/callback?error=access_denied&state=wrong-state", 400) &&
           answered("/elsewhere?code=forged&state=right-state", 404) &&
           answered("/callback?code=the-code&state=right-state", 200));
  });
  const char* promise = "a redirect with a wrong or missing state gets 400 and the sign-in waits for the right one";
  EXPECT_EQ(statuses, (std::vector<int>{400, 400, 400, 400, 404, 200})) << promise;
  EXPECT_EQ(s.code, std::optional<std::string>("the-code")) << promise << "; " << s.error;
}

TEST(OAuthRedirect, TheRightStatesErrorEndsTheSignIn) {
  SignIn s;
  int status = 0;
  s.run(std::chrono::seconds(20), [&](int port) { status = get(port, "/callback?error=access_denied&state=right-state"); });
  EXPECT_EQ(status, 200);
  EXPECT_FALSE(s.code);
  EXPECT_NE(s.error.find("access_denied"), std::string::npos) << s.error;
}

TEST(OAuthRedirect, IdleConnectionsOpenedFirstDoNotHoldUpTheRedirect) {
  SignIn s;
  int status = 0;
  // Each idle connection held the listener for its 10 s read deadline, one after the other: with
  // three of them, a sign-in with a 5 s timeout timed out before the redirect was read.
  s.run(std::chrono::seconds(5), [&](int port) {
    std::vector<int> idle;
    for (int i = 0; i < 3; ++i) idle.push_back(connect_to(port));
    const int partial = connect_to(port);
    const std::string half = "GET /callback?code=x";  // a request that never ends
    EXPECT_EQ(::write(partial, half.data(), half.size()), static_cast<ssize_t>(half.size()));
    status = get(port, "/callback?code=the-code&state=right-state");
    for (int fd : idle) ::close(fd);
    ::close(partial);
  });
  EXPECT_EQ(status, 200);
  EXPECT_EQ(s.code, std::optional<std::string>("the-code")) << s.error;
}

}  // namespace
