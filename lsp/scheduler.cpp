#include "lsp/scheduler.h"

#include <exception>
#include <utility>

namespace argus::lsp {

using Clock = std::chrono::steady_clock;

Scheduler::Scheduler(SchedulerOptions options, Publish publish)
    : options_(options), publish_(std::move(publish)) {
  unsigned count = options_.workers == 0 ? 1 : options_.workers;
  for (unsigned i = 0; i < count; ++i) workers_.emplace_back([this] { workerLoop(); });
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
}

void Scheduler::update(const std::string& uri, int64_t version, std::string text) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::shared_ptr<Document>& doc = documents_[uri];
    if (!doc) {
      doc = std::make_shared<Document>();
      doc->uri = uri;
    }
    doc->text = std::move(text);
    doc->version = version;
    doc->generation = nextGeneration_++;
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

void Scheduler::setCompileOptions(CompileOptions options) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    compileOptions_ = std::move(options);
    for (auto& [uri, doc] : documents_) {
      doc->generation = nextGeneration_++;
      doc->editedAt = Clock::now();
    }
  }
  wake_.notify_all();
}

void Scheduler::workerLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    Clock::time_point now = Clock::now();
    std::optional<Clock::time_point> nextDeadline;
    std::shared_ptr<Document> job;
    bool analyse = false;
    for (auto& [uri, doc] : documents_) {
      if (doc->busy) continue;
      bool current = doc->analysedGeneration == doc->generation;
      if (current && !doc->tasks.empty()) {
        job = doc;
        break;
      }
      if (!current) {
        Clock::time_point due = doc->editedAt + options_.debounce;
        if (!doc->tasks.empty() || due <= now) {
          job = doc;
          analyse = true;
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
    if (analyse) {
      std::string text = job->text;
      int64_t version = job->version;
      uint64_t generation = job->generation;
      CompileOptions options = compileOptions_;
      lock.unlock();
      std::shared_ptr<const Snapshot> snapshot;
      try {
        snapshot = analyzeDocument(job->uri, version, generation, std::move(text), options);
      } catch (const std::exception&) {
        // The library promises not to throw; if it does, keep the last good
        // analysis rather than lose the document.
      }
      lock.lock();
      job->analysedGeneration = generation;
      if (snapshot) job->snapshot = snapshot;
      bool fresh = snapshot && generation == job->generation && !job->closed && !stopping_;
      if (fresh) {
        lock.unlock();
        publish_(snapshot);
        lock.lock();
      }
    } else {
      std::vector<Task> tasks = std::move(job->tasks);
      job->tasks.clear();
      std::shared_ptr<const Snapshot> snapshot = job->snapshot;
      lock.unlock();
      for (Task& task : tasks) task(snapshot);
      lock.lock();
    }
    job->busy = false;
    wake_.notify_all();
  }
}

}  // namespace argus::lsp
