#include "agent_scripted_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>

namespace argus::agent::testing {
namespace {

constexpr int kPollSliceMs = 20;
constexpr size_t kMaxRequestBytes = 64u << 20;

std::string lowerCase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string trimmed(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  size_t end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

const char* reasonPhrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    default: return "Status";
  }
}

bool sendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

ScriptedResponse ScriptedResponse::json(int status, std::string body, int delayMs) {
  ScriptedResponse response;
  response.status = status;
  response.body = std::move(body);
  response.delayMs = delayMs;
  return response;
}

ScriptedResponse ScriptedResponse::hangUp(int delayMs) {
  ScriptedResponse response;
  response.closeWithoutReply = true;
  response.delayMs = delayMs;
  return response;
}

std::string RecordedRequest::header(const std::string& name) const {
  auto it = headers.find(lowerCase(name));
  return it == headers.end() ? std::string() : it->second;
}

bool RecordedRequest::hasHeader(const std::string& name) const {
  return headers.count(lowerCase(name)) != 0;
}

ScriptedServer::ScriptedServer()
    : fallback_(ScriptedResponse::json(500, R"({"error":{"message":"no scripted response left"}})")) {
  listenFd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listenFd_ < 0) {
    error_ = std::string("socket: ") + std::strerror(errno);
    return;
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  if (::bind(listenFd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::listen(listenFd_, 64) != 0 ||
      ::getsockname(listenFd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    error_ = std::string("bind/listen: ") + std::strerror(errno);
    ::close(listenFd_);
    listenFd_ = -1;
    return;
  }
  port_ = ntohs(address.sin_port);
  acceptThread_ = std::thread([this] { acceptLoop(); });
}

ScriptedServer::~ScriptedServer() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  stopSignal_.notify_all();
  if (acceptThread_.joinable()) acceptThread_.join();
  // The accept thread has exited: nobody else touches connections_ now.
  for (std::thread& connection : connections_) connection.join();
  if (listenFd_ >= 0) ::close(listenFd_);
}

std::string ScriptedServer::baseUrl(const std::string& prefix) const {
  return "http://127.0.0.1:" + std::to_string(port_) + prefix;
}

void ScriptedServer::enqueue(ScriptedResponse response) {
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.push_back(std::move(response));
}

void ScriptedServer::setFallback(ScriptedResponse response) {
  std::lock_guard<std::mutex> lock(mutex_);
  fallback_ = std::move(response);
}

std::vector<RecordedRequest> ScriptedServer::requests() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return requests_;
}

size_t ScriptedServer::requestCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return requests_.size();
}

size_t ScriptedServer::pendingResponses() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queue_.size();
}

ScriptedResponse ScriptedServer::nextResponse() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (queue_.empty()) return fallback_;
  ScriptedResponse response = std::move(queue_.front());
  queue_.pop_front();
  return response;
}

bool ScriptedServer::waitOrStop(int delayMs) {
  std::unique_lock<std::mutex> lock(mutex_);
  return !stopSignal_.wait_for(lock, std::chrono::milliseconds(std::max(0, delayMs)),
                               [this] { return stopping_.load(); });
}

void ScriptedServer::acceptLoop() {
  while (!stopping_) {
    pollfd waiting{listenFd_, POLLIN, 0};
    if (::poll(&waiting, 1, kPollSliceMs) <= 0) continue;
    int fd = ::accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    connections_.emplace_back([this, fd] { serveConnection(fd); });
  }
}

void ScriptedServer::serveConnection(int fd) {
  // Read the head, then Content-Length bytes of body; poll in slices so that
  // stopping the server never waits on a silent client.
  std::string data;
  size_t headEnd = std::string::npos;
  size_t contentLength = 0;
  bool continueSent = false;
  RecordedRequest request;
  char buffer[16384];
  while (!stopping_) {
    if (headEnd == std::string::npos) {
      headEnd = data.find("\r\n\r\n");
      if (headEnd != std::string::npos) {
        std::string head = data.substr(0, headEnd);
        size_t lineEnd = head.find("\r\n");
        std::string requestLine = head.substr(0, lineEnd);
        size_t space1 = requestLine.find(' ');
        size_t space2 = requestLine.find(' ', space1 + 1);
        request.method = requestLine.substr(0, space1);
        request.path = space1 == std::string::npos
                           ? ""
                           : requestLine.substr(space1 + 1, space2 - space1 - 1);
        size_t at = lineEnd == std::string::npos ? head.size() : lineEnd + 2;
        while (at < head.size()) {
          size_t next = head.find("\r\n", at);
          if (next == std::string::npos) next = head.size();
          std::string line = head.substr(at, next - at);
          size_t colon = line.find(':');
          if (colon != std::string::npos)
            request.headers[lowerCase(line.substr(0, colon))] = trimmed(line.substr(colon + 1));
          at = next + 2;
        }
        contentLength = std::strtoull(request.header("content-length").c_str(), nullptr, 10);
        if (lowerCase(request.header("expect")) == "100-continue" && !continueSent) {
          sendAll(fd, "HTTP/1.1 100 Continue\r\n\r\n");
          continueSent = true;
        }
      }
    }
    if (headEnd != std::string::npos && data.size() >= headEnd + 4 + contentLength) break;
    if (data.size() > kMaxRequestBytes) break;
    pollfd readable{fd, POLLIN, 0};
    if (::poll(&readable, 1, kPollSliceMs) <= 0) continue;
    ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) {  // the client went away before finishing its request
      ::close(fd);
      return;
    }
    data.append(buffer, static_cast<size_t>(n));
  }
  if (stopping_ || headEnd == std::string::npos) {
    ::close(fd);
    return;
  }
  request.body = data.substr(headEnd + 4, contentLength);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    requests_.push_back(request);
  }
  ScriptedResponse response = nextResponse();
  if (!waitOrStop(response.delayMs) || response.closeWithoutReply) {
    ::close(fd);
    return;
  }
  std::string reply = "HTTP/1.1 " + std::to_string(response.status) + " " +
                      reasonPhrase(response.status) + "\r\n";
  reply += "Content-Type: application/json\r\n";
  reply += "Content-Length: " + std::to_string(response.body.size()) + "\r\n";
  reply += "Connection: close\r\n";
  for (const auto& [name, value] : response.headers) reply += name + ": " + value + "\r\n";
  reply += "\r\n";
  reply += response.body;
  sendAll(fd, reply);
  ::shutdown(fd, SHUT_WR);
  ::close(fd);
}

}  // namespace argus::agent::testing
