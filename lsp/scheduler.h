// Per-document analysis off the main loop (in the spirit of clangd's
// TUScheduler): edits only record the new text; worker threads analyse a
// document once it has been quiet for the debounce delay, drop results that a
// newer edit made stale, and run feature requests against the analysis of the
// document's latest text. The main loop never waits for analysis.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "lsp/analysis.h"

namespace argus::lsp {

struct SchedulerOptions {
  std::chrono::milliseconds debounce{200};
  // Threads shared by all documents; one document is analysed by one at a time,
  // so a large file does not hold up requests on the others.
  unsigned workers = 2;
};

class Scheduler {
 public:
  // Called on a worker thread with each analysis that is still current.
  using Publish = std::function<void(const std::shared_ptr<const Snapshot>&)>;
  // Runs on a worker thread; the snapshot is null for a document that is not open.
  using Task = std::function<void(const std::shared_ptr<const Snapshot>&)>;

  Scheduler(SchedulerOptions options, Publish publish);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // didOpen / didChange: the document's new full text.
  void update(const std::string& uri, int64_t version, std::string text);
  // Pending tasks of the document then run with a null snapshot.
  void close(const std::string& uri);
  bool isOpen(const std::string& uri) const;
  std::vector<std::string> openUris() const;
  // The current text and version of an open document.
  std::optional<std::pair<std::string, int64_t>> text(const std::string& uri) const;
  // Runs `task` once the document's latest text is analysed (without waiting
  // for the debounce delay).
  void schedule(const std::string& uri, Task task);
  // Affects analyses that start afterwards; open documents are re-analysed.
  void setCompileOptions(CompileOptions options);
  // Stops the workers; pending tasks are dropped. Idempotent.
  void stop();

 private:
  struct Document {
    std::string uri;
    std::string text;
    int64_t version = 0;
    uint64_t generation = 0;
    uint64_t analysedGeneration = 0;
    std::chrono::steady_clock::time_point editedAt;
    std::shared_ptr<const Snapshot> snapshot;
    std::vector<Task> tasks;
    bool busy = false;
    bool closed = false;
  };
  void workerLoop();

  SchedulerOptions options_;
  Publish publish_;
  CompileOptions compileOptions_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::map<std::string, std::shared_ptr<Document>> documents_;
  uint64_t nextGeneration_ = 1;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace argus::lsp
