// Framing of the LSP base protocol: well-formed, odd and broken input.
#include <gtest/gtest.h>

#include <sstream>

#include "lsp/transport.h"

namespace argus::lsp {
namespace {

std::vector<ReadResult> readAll(const std::string& bytes) {
  std::istringstream in(bytes);
  MessageReader reader(in);
  std::vector<ReadResult> results;
  for (int guard = 0; guard < 1000; ++guard) {
    ReadResult r = reader.read();
    if (r.kind == ReadResult::Kind::EndOfStream) break;
    results.push_back(r);
  }
  return results;
}

TEST(LspTransport, ReadsConsecutiveMessages) {
  auto results = readAll("Content-Length: 2\r\n\r\n{}Content-Length: 7\r\n\r\n[1,2,3]");
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].kind, ReadResult::Kind::Message);
  EXPECT_EQ(results[0].body, "{}");
  EXPECT_EQ(results[1].body, "[1,2,3]");
}

TEST(LspTransport, HeaderNamesAreCaseInsensitiveAndOtherHeadersIgnored) {
  auto results = readAll("content-length:2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].kind, ReadResult::Kind::Message);
  EXPECT_EQ(results[0].body, "{}");
}

TEST(LspTransport, AcceptsBareNewlines) {
  auto results = readAll("Content-Length: 2\n\n{}");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].body, "{}");
}

TEST(LspTransport, MissingContentLengthIsMalformedAndReadingGoesOn) {
  auto results = readAll("Content-Type: x\r\n\r\nContent-Length: 2\r\n\r\n{}");
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].kind, ReadResult::Kind::Malformed);
  EXPECT_EQ(results[1].kind, ReadResult::Kind::Message);
  EXPECT_EQ(results[1].body, "{}");
}

TEST(LspTransport, NonNumericAndNegativeLengthsAreMalformed) {
  for (const char* bad : {"abc", "-5", "1e3", "", "99999999999999999999"}) {
    auto results = readAll(std::string("Content-Length: ") + bad + "\r\n\r\nContent-Length: 2\r\n\r\n{}");
    ASSERT_GE(results.size(), 1u) << bad;
    EXPECT_EQ(results.front().kind, ReadResult::Kind::Malformed) << bad;
    EXPECT_EQ(results.back().kind, ReadResult::Kind::Message) << bad;
  }
}

TEST(LspTransport, HugeLengthIsRefusedWithoutAllocating) {
  auto results = readAll("Content-Length: 999999999999\r\n\r\n{}");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].kind, ReadResult::Kind::Malformed);
}

TEST(LspTransport, TruncatedBodyIsMalformedThenEnd) {
  auto results = readAll("Content-Length: 50\r\n\r\n{\"a\":1}");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].kind, ReadResult::Kind::Malformed);
  EXPECT_NE(results[0].problem.find("7 of 50"), std::string::npos);
}

TEST(LspTransport, ShortLengthDesynchronisesOnlyUntilTheNextHeader) {
  // The first message claims 3 bytes of a 7-byte body: the rest is garbage
  // before the next header block, which is still read.
  auto results = readAll("Content-Length: 3\r\n\r\n{\"a\":1}\r\n\r\nContent-Length: 2\r\n\r\n{}");
  ASSERT_GE(results.size(), 2u);
  EXPECT_EQ(results[0].kind, ReadResult::Kind::Message);
  EXPECT_EQ(results[0].body, "{\"a");
  EXPECT_EQ(results.back().kind, ReadResult::Kind::Message);
  EXPECT_EQ(results.back().body, "{}");
}

TEST(LspTransport, ResynchronisesOnAHeaderAfterGarbageOnTheSameLine) {
  // An understated length leaves `1}` before the next header, on its line.
  auto results = readAll("Content-Length: 5\r\n\r\n{\"a\":1}Content-Length: 2\r\n\r\n{}");
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1].kind, ReadResult::Kind::Message);
  EXPECT_EQ(results[1].body, "{}");
  EXPECT_NE(results[1].problem.find("garbage before a header"), std::string::npos);
}

TEST(LspTransport, BadLengthThenGoodMessage) {
  auto results = readAll("Content-Length: x\r\n\r\n{\"a\":1}Content-Length: 2\r\n\r\n{}");
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].kind, ReadResult::Kind::Malformed);
  EXPECT_EQ(results[1].kind, ReadResult::Kind::Message);
  EXPECT_EQ(results[1].body, "{}");
}

TEST(LspTransport, BinaryGarbageNeverStopsReading) {
  std::string garbage;
  for (int i = 0; i < 20000; ++i) garbage += static_cast<char>((i * 7919) % 256);
  auto results = readAll(garbage + "\r\n\r\nContent-Length: 2\r\n\r\n{}");
  ASSERT_FALSE(results.empty());
  EXPECT_EQ(results.back().kind, ReadResult::Kind::Message);
  EXPECT_EQ(results.back().body, "{}");
}

TEST(LspTransport, OverlongHeaderLineIsMalformed) {
  auto results = readAll(std::string(100000, 'x') + "\r\n\r\nContent-Length: 2\r\n\r\n{}");
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].kind, ReadResult::Kind::Malformed);
  EXPECT_EQ(results[1].body, "{}");
}

TEST(LspTransport, EmptyStreamEndsAtOnce) { EXPECT_TRUE(readAll("").empty()); }

TEST(LspTransport, ZeroLengthBodyIsAnEmptyMessage) {
  auto results = readAll("Content-Length: 0\r\n\r\n");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].kind, ReadResult::Kind::Message);
  EXPECT_EQ(results[0].body, "");
}

TEST(LspTransport, WriterFramesWithByteLength) {
  std::ostringstream out;
  MessageWriter writer(out);
  writer.write(nlohmann::json{{"text", "é"}});
  std::string expectedBody = "{\"text\":\"é\"}";
  EXPECT_EQ(out.str(), "Content-Length: " + std::to_string(expectedBody.size()) + "\r\n\r\n" + expectedBody);
}

TEST(LspTransport, InvalidUtf8IsReplacedNotThrown) {
  std::string body;
  EXPECT_NO_THROW(body = dumpJson(nlohmann::json{{"text", std::string("a\xff" "b")}}));
  EXPECT_NE(body.find("\xEF\xBF\xBD"), std::string::npos);
}

TEST(LspTransport, RoundTripThroughReader) {
  std::string bytes = frameMessage(nlohmann::json{{"id", 1}}) + frameMessage(nlohmann::json{{"id", 2}});
  auto results = readAll(bytes);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(results[1].body)["id"], 2);
}

}  // namespace
}  // namespace argus::lsp
