// support::raw_json: values read as the text they were written as, and checked as Boost.JSON
// checks them, since what it passes is spliced unparsed into what the editor reads.
#include "support/raw_json.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace raw = support::raw_json;

bool boost_accepts(std::string_view text) {
  boost::json::parse_options opt;
  opt.max_depth = raw::kMaxDepth;
  boost::system::error_code ec;
  boost::json::parse(text, ec, {}, opt);
  return !ec;
}

TEST(RawJson, MembersAreTheirKeysAndTheTextOfTheirValuesAsWritten) {
  const std::string text =
      R"( {"type":"assistant", "message" : {"text":"a\"b\\n\u00e9","n":[1,-2.5e+3,{"x":null}]},"ok":true,"e":{}} )";
  std::vector<std::pair<std::string, std::string>> seen;
  ASSERT_TRUE(raw::for_each_member(text, [&](std::string_view k, std::string_view v) {
    seen.emplace_back(k, v);
    return true;
  }));
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"type", R"("assistant")"},
      {"message", R"({"text":"a\"b\\n\u00e9","n":[1,-2.5e+3,{"x":null}]})"},
      {"ok", "true"},
      {"e", "{}"}};
  EXPECT_EQ(seen, expected) << "each member's value must be its exact text, escapes and all";

  std::vector<std::string> elements;
  ASSERT_TRUE(raw::for_each_element(R"([ "a" , {"b":[]} ,3])", [&](std::string_view e) {
    elements.emplace_back(e);
    return true;
  }));
  EXPECT_EQ(elements, (std::vector<std::string>{R"("a")", R"({"b":[]})", "3"}));
}

TEST(RawJson, WhatIsNotOneValidValueIsRefused) {
  for (const char* bad : {"", "  ", R"({"a":1,})", R"({"a" 1})", R"({a:1})", "[1,]", "[1 2]", "01", "1.", "-", "1e",
                          "tru", "nul", R"("cut)", "\"tab\there\"", R"("\x")", R"("\u12")", R"({"a":1}})", "{} {}",
                          "[", "{", R"({"a":)", "+1", ".5"}) {
    EXPECT_FALSE(raw::is_value(bad)) << "accepted: " << bad;
    EXPECT_FALSE(boost_accepts(bad)) << "the test's own case is valid JSON: " << bad;
  }
  EXPECT_FALSE(raw::for_each_member("[1]", [](auto, auto) { return true; })) << "an array is not an object";
  EXPECT_FALSE(raw::for_each_member(R"({"a":1} {"b":2})", [](auto, auto) { return true; }))
      << "an object read member by member must be the whole text: a journal line with more after it is not the server's";
  EXPECT_FALSE(raw::for_each_element("[1] 2", [](auto) { return true; })) << "the same for an array";
  EXPECT_FALSE(raw::for_each_element(R"({"a":1})", [](auto) { return true; })) << "an object is not an array";
  std::string deep(raw::kMaxDepth + 1, '[');
  deep += std::string(raw::kMaxDepth + 1, ']');
  EXPECT_FALSE(raw::is_value(deep)) << "nesting past kMaxDepth must be refused";
  EXPECT_TRUE(raw::is_value(deep.substr(1, deep.size() - 2)));
}

TEST(RawJson, AVisitorThatSaysStopStopsTheScan) {
  int visits = 0;
  EXPECT_FALSE(raw::for_each_member(R"({"a":1,"b":2,"c":3})", [&](std::string_view k, std::string_view) {
    ++visits;
    return k != "b";
  }));
  EXPECT_EQ(visits, 2);
}

// Differential: valid JSON and thousands of its corruptions (bytes dropped, swapped in, doubled)
// are accepted exactly when Boost.JSON accepts them (ASCII only: UTF-8 is deliberately not checked).
TEST(RawJson, AcceptsExactlyWhatBoostJsonAcceptsOverCorruptedSamples) {
  const std::vector<std::string> samples = {
      R"({"type":"tool_call","t":"2026-01-02T03:04:05.185Z","toolCallId":"call_0","title":"Read a.cpp","kind":"read","status":"pending","locations":[{"path":"/w/a.cpp","line":120}],"rawInput":{"path":"a.cpp","offset":120,"limit":200}})",
      R"({"type":"user","message":{"role":"user","id":"msg_u0","text":"x\n\ty \"q\" \\ \u00e9"},"prompt":[{"type":"text","text":"x"},{"type":"image","mimeType":"image/png","data":"AAAA"}]})",
      R"([0,-0,1.5,-2e10,3E-2,true,false,null,"",{},[],[[{}]],{"a":{"b":{"c":[1,2,{"d":"\/"}]}}}])",
  };
  const std::string alphabet = "{}[]\":,\\/ \t\n0123456789-+.eEtrufalsn\x01u";
  std::mt19937 rng(1234);
  for (const auto& s : samples) {
    ASSERT_TRUE(raw::is_value(s)) << s;
    for (int i = 0; i < 4000; ++i) {
      std::string m = s;
      const int edits = 1 + static_cast<int>(rng() % 3);
      for (int e = 0; e < edits && !m.empty(); ++e) {
        const std::size_t at = rng() % m.size();
        switch (rng() % 3) {
          case 0: m.erase(at, 1); break;
          case 1: m[at] = alphabet[rng() % alphabet.size()]; break;
          default: m.insert(at, 1, m[at]); break;
        }
      }
      ASSERT_EQ(raw::is_value(m), boost_accepts(m)) << "disagrees with Boost.JSON on: " << m;
    }
  }
}

}  // namespace
