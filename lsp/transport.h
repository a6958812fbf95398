// The LSP base protocol: `Content-Length` framed JSON-RPC messages over a byte
// stream (stdio). The reader never trusts its input: a header block without a
// usable length, an absurd length or a truncated body is reported as
// `Malformed`; garbage before a `Content-Length` header (even on the same line,
// as when a previous length was wrong) is skipped so that reading resynchronises
// at the next header; only the end of the stream stops it.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace argus::lsp {

struct ReadResult {
  enum class Kind { Message, Malformed, EndOfStream };
  Kind kind = Kind::EndOfStream;
  std::string body;     // Message: the raw JSON text
  std::string problem;  // Malformed: what was wrong; Message: garbage skipped before it (for the log)
};

class MessageReader {
 public:
  // Bodies above this size are refused (and skipped) rather than allocated.
  static constexpr size_t kMaxBodyBytes = 64u << 20;
  static constexpr size_t kMaxHeaderLineBytes = 4096;

  explicit MessageReader(std::istream& in) : in_(in) {}
  ReadResult read();

 private:
  enum class Line { Ok, TooLong, EndOfStream };
  Line readLine(std::string& line);
  std::istream& in_;
};

// Serialises messages with their header; safe to call from several threads.
class MessageWriter {
 public:
  explicit MessageWriter(std::ostream& out) : out_(out) {}
  void write(const nlohmann::json& message);

 private:
  std::mutex mutex_;
  std::ostream& out_;
};

// The framed bytes of one message (header + body), as `MessageWriter` sends it.
std::string frameMessage(const nlohmann::json& message);
// JSON text that never throws: invalid UTF-8 in strings becomes U+FFFD.
std::string dumpJson(const nlohmann::json& value);

// Makes a message body acceptable to a strict JSON parser without losing it:
// every invalid UTF-8 sequence becomes U+FFFD (one per maximal ill-formed
// subpart, as Unicode recommends and as JavaScript's and Python's decoders do,
// so that the client's UTF-16 positions still fit), and so does a `\u` escape
// of a lone surrogate. One linear pass, no recursion.
std::string sanitizeJsonText(std::string_view body);

// Parses a message body (sanitised first). Objects and arrays nested deeper
// than `maxDepth` are not built; `tooDeep` then says so and the message's
// shallow members (`id`, `method`) are still there to answer it. Never
// recurses in proportion to the input; discarded on a syntax error.
nlohmann::json parseMessage(const std::string& body, size_t maxDepth, bool& tooDeep);

}  // namespace argus::lsp
