#include "lsp/transport.h"

#include <algorithm>
#include <cctype>
#include <istream>
#include <optional>
#include <ostream>

namespace argus::lsp {

namespace {

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string trim(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  size_t end = text.find_last_not_of(" \t");
  return text.substr(begin, end - begin + 1);
}

// A strictly decimal, bounded Content-Length value; anything else is malformed.
bool parseLength(const std::string& text, size_t& length) {
  if (text.empty() || text.size() > 12) return false;
  size_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<size_t>(c - '0');
  }
  length = value;
  return true;
}

std::string printable(const std::string& text) {
  std::string out;
  for (unsigned char c : text.substr(0, 60)) out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  return out;
}

}  // namespace

MessageReader::Line MessageReader::readLine(std::string& line) {
  line.clear();
  bool tooLong = false;
  for (;;) {
    int c = in_.get();
    if (c == std::char_traits<char>::eof()) return line.empty() && !tooLong ? Line::EndOfStream : Line::Ok;
    if (c == '\n') break;
    if (line.size() < kMaxHeaderLineBytes) line += static_cast<char>(c);
    else tooLong = true;
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return tooLong ? Line::TooLong : Line::Ok;
}

ReadResult MessageReader::read() {
  ReadResult result;
  std::string line;
  bool haveLength = false, sawHeader = false;
  size_t length = 0;
  std::string problem, skipped;
  for (;;) {
    Line status = readLine(line);
    if (status == Line::EndOfStream) {
      result.kind = ReadResult::Kind::EndOfStream;
      return result;
    }
    if (status == Line::TooLong) {
      problem = "header line longer than " + std::to_string(kMaxHeaderLineBytes) + " bytes";
      sawHeader = true;
      continue;
    }
    if (line.empty()) {
      if (!sawHeader) continue;  // stray blank lines between messages
      break;
    }
    sawHeader = true;
    // A header may follow garbage on the same line (the tail of a body whose
    // length was understated): start the block afresh from it.
    size_t header = lowercase(line).find("content-length");
    if (header != std::string::npos && header > 0) {
      skipped += "garbage before a header: '" + printable(line.substr(0, header)) + "'; ";
      line = line.substr(header);
      problem.clear();
      haveLength = false;
    }
    size_t colon = line.find(':');
    if (colon == std::string::npos) {
      problem = "not a header line: '" + printable(line) + "'";
      continue;
    }
    std::string name = lowercase(trim(line.substr(0, colon)));
    std::string value = trim(line.substr(colon + 1));
    if (name == "content-length") {
      if (!problem.empty()) skipped += problem + "; ";
      problem.clear();
      size_t parsed = 0;
      if (!parseLength(value, parsed)) {
        problem = "bad Content-Length '" + printable(value) + "'";
        haveLength = false;
      } else {
        length = parsed;
        haveLength = true;
      }
    } else if (haveLength && name.find_first_not_of("abcdefghijklmnopqrstuvwxyz-") != std::string::npos) {
      // Junk after a good Content-Length: keep the message, note the junk.
      skipped += "odd header '" + printable(line) + "'; ";
    }
    // Other headers (Content-Type) are accepted and ignored.
  }
  if (!haveLength) {
    result.kind = ReadResult::Kind::Malformed;
    result.problem = skipped + (problem.empty() ? "header block without Content-Length" : problem);
    return result;
  }
  if (length > kMaxBodyBytes) {
    // Not skipped either (that could wait for gigabytes): the body that follows
    // is garbage before the next header, which the next read skips.
    result.kind = ReadResult::Kind::Malformed;
    result.problem = "Content-Length " + std::to_string(length) + " exceeds the limit";
    return result;
  }
  result.body.resize(length);
  in_.read(result.body.data(), static_cast<std::streamsize>(length));
  size_t got = static_cast<size_t>(in_.gcount());
  if (got < length) {
    result.body.resize(got);
    in_.clear(std::ios::eofbit);
    result.kind = ReadResult::Kind::Malformed;
    result.problem = "stream ended inside a message body (" + std::to_string(got) + " of " +
                     std::to_string(length) + " bytes)";
    return result;
  }
  result.kind = ReadResult::Kind::Message;
  if (!skipped.empty()) result.problem = skipped + (problem.empty() ? "" : problem);
  return result;
}

namespace {

// The length of the well-formed UTF-8 sequence at `at`, or of its maximal
// ill-formed subpart (then `valid` is false): Unicode 15, table 3-7.
size_t utf8Sequence(std::string_view text, size_t at, bool& valid) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char lead = byte(at);
  valid = true;
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) length = 2;
  else if (lead == 0xE0) length = 3, low = 0xA0;
  else if ((lead >= 0xE1 && lead <= 0xEC) || lead == 0xEE || lead == 0xEF) length = 3;
  else if (lead == 0xED) length = 3, high = 0x9F;
  else if (lead == 0xF0) length = 4, low = 0x90;
  else if (lead >= 0xF1 && lead <= 0xF3) length = 4;
  else if (lead == 0xF4) length = 4, high = 0x8F;
  else {
    valid = false;
    return 1;
  }
  for (size_t k = 1; k < length; ++k) {
    if (at + k >= text.size()) {
      valid = false;
      return k;
    }
    unsigned char c = byte(at + k);
    bool ok = k == 1 ? (c >= low && c <= high) : (c >= 0x80 && c <= 0xBF);
    if (!ok) {
      valid = false;
      return k;
    }
  }
  return length;
}

std::optional<unsigned> hex4(std::string_view text, size_t at) {
  if (at + 4 > text.size()) return std::nullopt;
  unsigned value = 0;
  for (size_t i = at; i < at + 4; ++i) {
    char c = text[i];
    value <<= 4;
    if (c >= '0' && c <= '9') value |= static_cast<unsigned>(c - '0');
    else if (c >= 'a' && c <= 'f') value |= static_cast<unsigned>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') value |= static_cast<unsigned>(c - 'A' + 10);
    else return std::nullopt;
  }
  return value;
}

}  // namespace

std::string sanitizeJsonText(std::string_view body) {
  std::string out;
  out.reserve(body.size());
  bool inString = false;
  for (size_t i = 0; i < body.size();) {
    unsigned char c = static_cast<unsigned char>(body[i]);
    if (c >= 0x80) {
      bool valid = false;
      size_t length = utf8Sequence(body, i, valid);
      if (valid) out.append(body.substr(i, length));
      else out += "\xEF\xBF\xBD";
      i += length;
      continue;
    }
    if (c == '"') inString = !inString;
    if (inString && c == '\\' && i + 1 < body.size()) {
      if (body[i + 1] == 'u') {
        std::optional<unsigned> unit = hex4(body, i + 2);
        if (unit && *unit >= 0xD800 && *unit <= 0xDBFF) {
          std::optional<unsigned> next =
              i + 8 < body.size() && body[i + 6] == '\\' && body[i + 7] == 'u' ? hex4(body, i + 8) : std::nullopt;
          if (next && *next >= 0xDC00 && *next <= 0xDFFF) {
            out.append(body.substr(i, 12));  // a proper pair
            i += 12;
          } else {
            out += "\\uFFFD";
            i += 6;
          }
          continue;
        }
        if (unit && *unit >= 0xDC00 && *unit <= 0xDFFF) {
          out += "\\uFFFD";
          i += 6;
          continue;
        }
      }
      out.append(body.substr(i, 2));  // the escape and what it escapes, never a closing quote
      i += 2;
      continue;
    }
    out += static_cast<char>(c);
    ++i;
  }
  return out;
}

nlohmann::json parseMessage(const std::string& body, size_t maxDepth, bool& tooDeep) {
  tooDeep = false;
  // The callback parser builds nothing below a value it declined, and keeps
  // its own stack: deep nesting costs memory for one flag per level, no recursion.
  nlohmann::json::parser_callback_t keepShallow = [&](int depth, nlohmann::json::parse_event_t event,
                                                      nlohmann::json&) {
    if ((event == nlohmann::json::parse_event_t::object_start ||
         event == nlohmann::json::parse_event_t::array_start) &&
        static_cast<size_t>(depth) >= maxDepth) {
      tooDeep = true;
      return false;
    }
    return true;
  };
  return nlohmann::json::parse(sanitizeJsonText(body), keepShallow, /*allow_exceptions=*/false);
}

std::string dumpJson(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string frameMessage(const nlohmann::json& message) {
  std::string body = dumpJson(message);
  return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

void MessageWriter::write(const nlohmann::json& message) {
  std::string framed = frameMessage(message);
  std::lock_guard<std::mutex> lock(mutex_);
  out_.write(framed.data(), static_cast<std::streamsize>(framed.size()));
  out_.flush();
}

}  // namespace argus::lsp
