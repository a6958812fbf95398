#include "lsp/scheduler.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "lsp/remap.h"

namespace argus::lsp {

using Clock = std::chrono::steady_clock;

Scheduler::Scheduler(SchedulerOptions options, Publish publish, Progress progress, Measured measured)
    : options_(std::move(options)),
      publish_(std::move(publish)),
      progress_(std::move(progress)),
      measured_(std::move(measured)) {
  unsigned count = options_.workers == 0 ? 1 : options_.workers;
  for (unsigned i = 0; i < count; ++i) workers_.emplace_back([this] { workerLoop(); });
  checker_ = std::thread([this] { checkerLoop(); });
}

Scheduler::~Scheduler() { stop(); }

void Scheduler::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_)
    if (t.joinable()) t.join();
  workers_.clear();
  if (checker_.joinable()) checker_.join();
  // A cancelled check's code generation may still run; LLVM's state must outlive it,
  // so the server waits for it here rather than at the process's exit.
  waitForBackgroundCodegen();
}

void Scheduler::update(const std::string& uri, int64_t version, std::string text,
                       std::optional<std::vector<TokenShift>> commentShifts) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::shared_ptr<Document>& doc = documents_[uri];
    if (!doc) {
      doc = std::make_shared<Document>();
      doc->uri = uri;
    }
    uint64_t previous = doc->generation;
    doc->text = std::move(text);
    doc->version = version;
    doc->generation = nextGeneration_++;
    // A chain of comment edits continues only from the text just before this one.
    bool continues = doc->shiftBase && (doc->shifts.empty() ? *doc->shiftBase : doc->shifts.back().first) == previous;
    if (!commentShifts || previous == 0) {
      doc->shiftBase.reset();
      doc->shifts.clear();
    } else {
      if (!continues) {
        doc->shiftBase = previous;
        doc->shifts.clear();
      }
      for (const TokenShift& shift : *commentShifts) doc->shifts.emplace_back(doc->generation, shift);
    }
    doc->latestGeneration = doc->generation;  // a running check of an older text stops
    doc->editedAt = Clock::now();
  }
  wake_.notify_all();
}

void Scheduler::close(const std::string& uri) {
  std::vector<Task> orphans;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = documents_.find(uri);
    if (it == documents_.end()) return;
    it->second->closed = true;
    it->second->latestGeneration = 0;
    orphans = std::move(it->second->tasks);
    it->second->tasks.clear();
    documents_.erase(it);
  }
  for (Task& task : orphans) task(nullptr);
}

bool Scheduler::isOpen(const std::string& uri) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return documents_.count(uri) != 0;
}

std::vector<std::string> Scheduler::openUris() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> uris;
  for (const auto& [uri, document] : documents_) uris.push_back(uri);
  return uris;
}

std::optional<std::pair<std::string, int64_t>> Scheduler::text(const std::string& uri) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = documents_.find(uri);
  if (it == documents_.end()) return std::nullopt;
  return std::make_pair(it->second->text, it->second->version);
}

void Scheduler::schedule(const std::string& uri, Task task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = documents_.find(uri);
    if (it != documents_.end() && !stopping_) {
      it->second->tasks.push_back(std::move(task));
      wake_.notify_all();
      return;
    }
  }
  task(nullptr);
}

void Scheduler::setCompileOptions(ConfiguredOptions options) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    compileOptions_ = std::move(options);
    for (auto& [uri, doc] : documents_) {
      doc->generation = nextGeneration_++;
      doc->latestGeneration = doc->generation;
      doc->editedAt = Clock::now();
    }
  }
  wake_.notify_all();
}

void Scheduler::settleShifts(Document& doc, uint64_t generation) {
  if (!doc.shiftBase) return;
  if (*doc.shiftBase == generation) return;
  bool inChain = false;
  for (const auto& [made, shift] : doc.shifts) inChain = inChain || made == generation;
  if (!inChain) {
    doc.shiftBase.reset();
    doc.shifts.clear();
    return;
  }
  doc.shiftBase = generation;
  doc.shifts.erase(std::remove_if(doc.shifts.begin(), doc.shifts.end(),
                                  [&](const auto& entry) { return entry.first <= generation; }),
                   doc.shifts.end());
}

std::optional<std::vector<TokenInfo>> Scheduler::tokensByShifts(const Document& doc) {
  if (!doc.settled || !doc.shiftBase || *doc.shiftBase != doc.settledGeneration) return std::nullopt;
  uint64_t last = doc.shifts.empty() ? *doc.shiftBase : doc.shifts.back().first;
  if (last != doc.generation) return std::nullopt;
  std::vector<TokenShift> shifts;
  for (const auto& [made, shift] : doc.shifts) shifts.push_back(shift);
  return shiftedTokens(doc.settled->tokens, shifts);
}

// Step 1: an edit that changed no token reuses the last complete diagnostics.
void Scheduler::screen(std::unique_lock<std::mutex>& lock, const std::shared_ptr<Document>& doc) {
  uint64_t generation = doc->generation;
  int64_t version = doc->version;
  std::string text = doc->text;
  std::shared_ptr<const Settled> settled = doc->settled;
  ConfiguredOptions configured = compileOptions_;
  // Only comments changed since the settled text: its tokens, moved, are this text's.
  std::optional<std::vector<TokenInfo>> shifted = tokensByShifts(*doc);
  lock.unlock();
  std::shared_ptr<Settled> carried;
  bool exact = true;
  if (settled) {
    std::string key = optionsKey(effectiveOptions(configured, text));  // a `# arch:` comment counts
    SourceFile file(doc->uri, text);
    std::vector<TokenInfo> tokens;
    if (shifted) {
      tokens = std::move(*shifted);
    } else {
      DiagnosticSink lexical;  // the lexer's findings are among the settled ones
      tokens = tokenize(file, lexical);
    }
    if (key == settled->optionsKey && sameTokens(tokens, settled->tokens)) {
      carried = std::make_shared<Settled>(Settled{std::move(file), std::move(tokens), key, settled->diagnostics,
                                                  settled->frontEndCount, settled->resources});
      TokenAlignment alignment(settled->file, settled->tokens, carried->file, carried->tokens);
      for (Diagnostic& d : carried->diagnostics)
        if (!alignment.remap(d, /*exact=*/true)) exact = false;
      if (!exact) {
        // Lines moved: show the findings where they now are at once; the front
        // end and the checker follow to get the line numbers in notes right.
        carried->diagnostics = settled->diagnostics;
        for (Diagnostic& d : carried->diagnostics) alignment.remap(d, /*exact=*/false);
      }
    }
  }
  lock.lock();
  doc->screenedGeneration = std::max(doc->screenedGeneration, generation);
  if (!carried || generation != doc->generation || doc->closed || stopping_) return;
  if (exact) {
    doc->settled = carried;
    doc->settledGeneration = generation;
    settleShifts(*doc, generation);
  }
  lock.unlock();
  publish_(doc->uri, version, carried->file, carried->diagnostics);
  lock.lock();
}

// Step 2: the front end; its diagnostics go out at once.
void Scheduler::analyse(std::unique_lock<std::mutex>& lock, const std::shared_ptr<Document>& doc) {
  std::string text = doc->text;
  int64_t version = doc->version;
  uint64_t generation = doc->generation;
  ConfiguredOptions options = compileOptions_;
  lock.unlock();
  std::shared_ptr<const Snapshot> snapshot;
  try {
    snapshot = analyzeDocument(doc->uri, version, generation, std::move(text), options);
  } catch (const std::exception&) {
    // The library promises not to throw; if it does, keep the last good
    // analysis rather than lose the document.
  }
  lock.lock();
  doc->analysedGeneration = generation;
  if (!snapshot) return;
  doc->snapshot = snapshot;
  bool fresh = generation == doc->generation && !doc->closed && !stopping_;
  if (doc->settledGeneration == generation) {
    // The screen found the same tokens: the carried-over diagnostics are complete.
    snapshot->setCheckedDiagnostics(doc->settled->diagnostics);
    snapshot->setResources(doc->settled->resources);
    return;
  }
  if (!fresh) return;
  std::vector<Diagnostic> first = snapshot->diagnostics;
  if (!needsCheck(*snapshot)) {
    // Front-end errors: argusc stops here too, so this is everything.
    snapshot->setCheckedDiagnostics(first);
    doc->settled = std::make_shared<Settled>(
        Settled{snapshot->file(), snapshot->tokens, optionsKey(snapshot->options()), first, first.size(), nullptr});
    doc->settledGeneration = generation;
    settleShifts(*doc, generation);
  } else {
    // Until the checker is done, keep showing its last findings that still
    // map onto the text (no flicker while typing), then check.
    if (std::shared_ptr<const Settled> last = doc->settled) {
      TokenAlignment alignment(last->file, last->tokens, snapshot->file(), snapshot->tokens);
      for (size_t i = last->frontEndCount; i < last->diagnostics.size(); ++i) {
        Diagnostic d = last->diagnostics[i];
        if (alignment.remap(d, /*exact=*/false)) first.push_back(std::move(d));
      }
    }
  }
  lock.unlock();
  publish_(doc->uri, version, snapshot->file(), first);
  lock.lock();
  // The check starts only after the front end's publish, so that the editor
  // always gets the quick answer first.
  if (generation == doc->generation && doc->settledGeneration != generation) {
    doc->checkGeneration = generation;
    wake_.notify_all();
  }
}

bool Scheduler::wantsCheck(const Document& doc) const {
  return !doc.checking && doc.checkGeneration == doc.generation && doc.settledGeneration != doc.generation &&
         doc.snapshot && doc.snapshot->generation == doc.generation;
}

// Step 3: the checker and code generation, cancelled by the next edit.
void Scheduler::check(std::unique_lock<std::mutex>& lock, const std::shared_ptr<Document>& doc) {
  std::shared_ptr<const Snapshot> snapshot = doc->snapshot;
  uint64_t generation = snapshot->generation;
  uint64_t id = nextCheckId_++;
  doc->checking = true;
  lock.unlock();
  auto cancelled = [this, doc, generation] { return stopping_ || doc->latestGeneration != generation; };
  auto report = [&](CheckEvent::Kind kind, const CheckProgress& progress) {
    if (progress_) progress_(CheckEvent{kind, id, doc->uri, progress});
  };
  report(CheckEvent::Kind::Begin, {});
  std::optional<std::vector<Diagnostic>> all;
  try {
    all = checkSnapshot(snapshot, doc->cache, cancelled,
                        [&](const CheckProgress& progress) { report(CheckEvent::Kind::Report, progress); });
  } catch (const std::exception&) {
    all.reset();  // keep what is shown; the next edit tries again
  }
  lock.lock();
  doc->checking = false;
  bool fresh = all && !cancelled() && !doc->closed;
  if (all) snapshot->setCheckedDiagnostics(*all);
  if (fresh) {
    doc->settled = std::make_shared<Settled>(Settled{snapshot->file(), snapshot->tokens,
                                                     optionsKey(snapshot->options()), *all,
                                                     snapshot->diagnostics.size(), nullptr});
    doc->settledGeneration = generation;
    settleShifts(*doc, generation);
    lock.unlock();
    publish_(doc->uri, snapshot->version, snapshot->file(), *all);
    report(CheckEvent::Kind::End, {});
    lock.lock();
    measure(lock, doc, snapshot);
  } else {
    // A never-checked generation must not block the next one: the check of
    // the newer text is wanted once its front end is done.
    if (doc->checkGeneration == generation && !all) doc->checkGeneration = 0;
    lock.unlock();
    report(CheckEvent::Kind::End, {});
    lock.lock();
  }
  wake_.notify_all();
}

// After a complete check: ptxas's registers and spills for the inlay hints,
// on the checker's thread (the cache is its own), for the text just checked.
void Scheduler::measure(std::unique_lock<std::mutex>& lock, const std::shared_ptr<Document>& doc,
                        const std::shared_ptr<const Snapshot>& snapshot) {
  if (options_.ptxasPath.empty() || !measureResources_ || stopping_ || doc->closed ||
      doc->latestGeneration != snapshot->generation)
    return;
  lock.unlock();
  std::optional<std::vector<codegen::KernelResources>> measured;
  try {
    uint64_t generation = snapshot->generation;
    measured = measureResources(*snapshot, doc->cache, options_.ptxasPath, [this, &doc, generation] {
      return stopping_ || doc->latestGeneration != generation;
    });
  } catch (const std::exception&) {
    measured.reset();
  }
  lock.lock();
  if (!measured || measured->empty() || doc->closed || stopping_) return;
  auto resources = std::make_shared<const std::vector<codegen::KernelResources>>(std::move(*measured));
  snapshot->setResources(resources);
  // Edits of comments and whitespace since the check keep the tokens, and so
  // the registers: their settled diagnostics and snapshot share them.
  const std::string key = optionsKey(snapshot->options());
  if (const std::shared_ptr<const Settled>& settled = doc->settled;
      settled && settled->optionsKey == key && sameTokens(settled->tokens, snapshot->tokens)) {
    auto copy = std::make_shared<Settled>(*settled);
    copy->resources = resources;
    doc->settled = copy;
  }
  if (const std::shared_ptr<const Snapshot>& latest = doc->snapshot;
      latest && latest != snapshot && optionsKey(latest->options()) == key && sameTokens(latest->tokens, snapshot->tokens))
    latest->setResources(resources);
  if (!measured_) return;
  lock.unlock();
  measured_(doc->uri);
  lock.lock();
}

void Scheduler::checkerLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    std::shared_ptr<Document> job;
    for (auto& [uri, doc] : documents_)
      if (wantsCheck(*doc)) {
        job = doc;
        break;
      }
    if (!job) {
      wake_.wait(lock);
      continue;
    }
    check(lock, job);
  }
}

void Scheduler::workerLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    Clock::time_point now = Clock::now();
    std::optional<Clock::time_point> nextDeadline;
    std::shared_ptr<Document> job;
    enum class Step { Screen, Analyse, Tasks } step = Step::Tasks;
    for (auto& [uri, doc] : documents_) {
      if (doc->busy) continue;
      if (doc->screenedGeneration < doc->generation) {
        job = doc;
        step = Step::Screen;
        break;
      }
      bool current = doc->analysedGeneration == doc->generation;
      if (current && !doc->tasks.empty()) {
        job = doc;
        step = Step::Tasks;
        break;
      }
      if (!current) {
        Clock::time_point due = doc->editedAt + options_.debounce;
        if (!doc->tasks.empty() || due <= now) {
          job = doc;
          step = Step::Analyse;
          break;
        }
        if (!nextDeadline || due < *nextDeadline) nextDeadline = due;
      }
    }
    if (!job) {
      if (nextDeadline) wake_.wait_until(lock, *nextDeadline);
      else wake_.wait(lock);
      continue;
    }
    job->busy = true;
    switch (step) {
      case Step::Screen: screen(lock, job); break;
      case Step::Analyse: analyse(lock, job); break;
      case Step::Tasks: {
        std::vector<Task> tasks = std::move(job->tasks);
        job->tasks.clear();
        std::shared_ptr<const Snapshot> snapshot = job->snapshot;
        lock.unlock();
        for (Task& task : tasks) task(snapshot);
        lock.lock();
        break;
      }
    }
    job->busy = false;
    wake_.notify_all();
  }
}

}  // namespace argus::lsp
