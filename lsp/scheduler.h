// Per-document analysis off the main loop (in the spirit of clangd's
// TUScheduler), in three steps so that the editor never waits for the checker:
//  1. screen (every edit, no debounce): lex the new text; when its tokens equal
//     those of the last fully checked text (the edit touched only comments or
//     whitespace), that text's diagnostics are carried over at once;
//  2. front end (after the debounce, or at once for a waiting request): parse,
//     sema, Tile IR; its diagnostics are published at once, with the checker's
//     findings of the last check that still map onto the text;
//  3. check (one thread of its own): the invariant checker and code
//     generation's target checks, kernel by kernel, reusing unchanged kernels'
//     findings; the next edit cancels it. Then every diagnostic is published,
//     and, when code generation ran clean, ptxas measures each kernel's
//     registers for the inlay hints (also cancelled by the next edit).
// Feature requests run on the workers against the front end of the latest text.
#pragma once

#include <atomic>
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
#include "lsp/checking.h"
#include "lsp/remap.h"

namespace argus::lsp {

struct SchedulerOptions {
  std::chrono::milliseconds debounce{200};
  // Threads for the front end and requests, shared by all documents; one
  // document is analysed by one at a time, so a large file does not hold up
  // requests on the others. The checker has a thread of its own besides.
  unsigned workers = 2;
  // After a check that reached code generation, ptxas measures each kernel's
  // registers and spills (inlay hints); empty: never.
  std::string ptxasPath = "/usr/local/cuda/bin/ptxas";
};

// A background check's progress, for `$/progress`.
struct CheckEvent {
  enum class Kind { Begin, Report, End };
  Kind kind = Kind::Begin;
  uint64_t id = 0;  // one per check
  std::string uri;
  CheckProgress progress;
};

class Scheduler {
 public:
  // Diagnostics of one version of a document, called on a worker thread.
  using Publish = std::function<void(const std::string& uri, int64_t version, const SourceFile& file,
                                     const std::vector<Diagnostic>& diagnostics)>;
  using Progress = std::function<void(const CheckEvent&)>;
  // Runs on a worker thread; the snapshot is null for a document that is not open.
  using Task = std::function<void(const std::shared_ptr<const Snapshot>&)>;
  // The document's latest snapshot has just received its kernels' resources.
  using Measured = std::function<void(const std::string& uri)>;

  Scheduler(SchedulerOptions options, Publish publish, Progress progress = {}, Measured measured = {});
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // didOpen / didChange: the document's new full text. `commentShifts`, when
  // the change only edited inside comments (lsp/document.h), says how the
  // tokens moved: the screen then needs no lexer.
  void update(const std::string& uri, int64_t version, std::string text,
              std::optional<std::vector<TokenShift>> commentShifts = std::nullopt);
  // Pending tasks of the document then run with a null snapshot.
  void close(const std::string& uri);
  bool isOpen(const std::string& uri) const;
  std::vector<std::string> openUris() const;
  // The current text and version of an open document.
  std::optional<std::pair<std::string, int64_t>> text(const std::string& uri) const;
  // Runs `task` once the document's latest text has been through the front
  // end (without waiting for the debounce delay or the checker).
  void schedule(const std::string& uri, Task task);
  // Affects analyses that start afterwards; open documents are re-analysed.
  void setCompileOptions(ConfiguredOptions options);
  // Whether checks are followed by ptxas's measurement (on by default when
  // SchedulerOptions::ptxasPath is set).
  void setMeasureResources(bool on) { measureResources_ = on; }
  // Stops the threads; pending tasks are dropped. Idempotent.
  void stop();

 private:
  // The last text whose diagnostics are complete (front end, checker, codegen).
  struct Settled {
    SourceFile file;
    std::vector<TokenInfo> tokens;
    std::string optionsKey;
    std::vector<Diagnostic> diagnostics;
    size_t frontEndCount = 0;  // the first diagnostics are the front end's
    std::shared_ptr<const std::vector<codegen::KernelResources>> resources;  // once measured
  };
  struct Document {
    std::string uri;
    std::string text;
    int64_t version = 0;
    uint64_t generation = 0;
    std::atomic<uint64_t> latestGeneration{0};  // read without the lock by a running check
    std::chrono::steady_clock::time_point editedAt;
    uint64_t screenedGeneration = 0;
    uint64_t analysedGeneration = 0;
    uint64_t settledGeneration = 0;  // complete diagnostics of this generation were published
    uint64_t checkGeneration = 0;    // the front end of this generation wants a check
    std::shared_ptr<const Snapshot> snapshot;
    std::shared_ptr<const Settled> settled;
    // The comment-only edits since the text of generation `shiftBase`, each
    // tagged with the generation it made; valid while every update since was one.
    std::optional<uint64_t> shiftBase;
    std::vector<std::pair<uint64_t, TokenShift>> shifts;
    CheckCache cache;  // only the checker thread touches it
    std::vector<Task> tasks;
    bool busy = false;
    bool checking = false;
    bool closed = false;
  };
  void workerLoop();
  void checkerLoop();
  void screen(std::unique_lock<std::mutex>& lock, const std::shared_ptr<Document>& doc);
  void analyse(std::unique_lock<std::mutex>& lock, const std::shared_ptr<Document>& doc);
  void check(std::unique_lock<std::mutex>& lock, const std::shared_ptr<Document>& doc);
  bool wantsCheck(const Document& doc) const;
  // The settled text is now that of `generation`: drop the shifts it includes.
  static void settleShifts(Document& doc, uint64_t generation);
  // The tokens of the document's current text from the settled ones, when only comments changed since.
  static std::optional<std::vector<TokenInfo>> tokensByShifts(const Document& doc);
  void measure(std::unique_lock<std::mutex>& lock, const std::shared_ptr<Document>& doc,
               const std::shared_ptr<const Snapshot>& snapshot);

  SchedulerOptions options_;
  Publish publish_;
  Progress progress_;
  Measured measured_;
  std::atomic<bool> measureResources_{true};
  ConfiguredOptions compileOptions_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::map<std::string, std::shared_ptr<Document>> documents_;
  uint64_t nextGeneration_ = 1;
  uint64_t nextCheckId_ = 1;
  std::atomic<bool> stopping_{false};
  std::vector<std::thread> workers_;
  std::thread checker_;
};

}  // namespace argus::lsp
