#include "lsp/checking.h"

#include <algorithm>
#include <atomic>
#include <future>
#include <iterator>
#include <mutex>
#include <thread>

#include "checker/checker.h"
#include "codegen/codegen.h"
#include "lsp/remap.h"

namespace argus::lsp {

namespace {

bool hasErrors(const std::vector<Diagnostic>& diags) {
  for (const Diagnostic& d : diags)
    if (d.severity == Severity::Error) return true;
  return false;
}

void appendToken(std::string& key, const TokenInfo& token) {
  key += token.kind;
  key += '\x1f';
  key += token.text;
  key += '\x1e';
}

// Reuses `entry` for the snapshot when its key matches and every diagnostic
// maps onto the new text at the same line:column.
std::optional<std::vector<Diagnostic>> reuse(const CheckCache::Entry& entry, const std::string& key,
                                             const Snapshot& snapshot) {
  if (entry.key != key || !entry.base) return std::nullopt;
  TokenAlignment alignment(entry.base->file, entry.base->tokens, snapshot.file(), snapshot.tokens);
  std::vector<Diagnostic> moved = entry.diagnostics;
  for (Diagnostic& d : moved)
    if (!alignment.remap(d, /*exact=*/true)) return std::nullopt;
  return moved;
}

// LLVM's target set-up is shared by the whole process: one code generation at a time.
std::mutex& codegenMutex();

struct Generated {
  DiagnosticSink diags;
  std::string ptx;
};

Generated generate(const ir::Module& module, const std::string& arch) {
  Generated out;
  std::lock_guard<std::mutex> lock(codegenMutex());
  codegen::Options options;
  options.arch = arch;
  codegen::emitPTX(module, options, out.diags, &out.ptx);
  return out;
}

std::mutex& codegenMutex() {
  static std::mutex mutex;
  return mutex;
}

// Code generation that runs beside a check on a thread of its own, holding the
// snapshot it reads, so that a cancelled check returns at once instead of waiting
// for it. The threads are joined, not detached: by the next start once they are
// done, and all of them by waitForBackgroundCodegen, which the scheduler calls when
// it stops (at the process's exit it would be too late: LLVM's lazily made statics
// may already be gone).
class BackgroundCodegen {
 public:
  static BackgroundCodegen& get() {
    static BackgroundCodegen instance;
    return instance;
  }
  ~BackgroundCodegen() { waitForAll(); }

  std::future<Generated> start(std::shared_ptr<const Snapshot> snapshot) {
    auto job = std::make_shared<std::packaged_task<Generated()>>(
        [snapshot] { return generate(*snapshot->ir, snapshot->options().arch); });
    std::future<Generated> result = job->get_future();
    auto done = std::make_shared<std::atomic<bool>>(false);
    std::thread thread([done](std::shared_ptr<std::packaged_task<Generated()>> task) {
      (*task)();
      task.reset();  // the snapshot goes with it, before the thread says it is done
      done->store(true);
    }, std::move(job));
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = workers_.begin(); it != workers_.end();) {
      if (!it->done->load()) {
        ++it;
        continue;
      }
      it->thread.join();
      it = workers_.erase(it);
    }
    workers_.push_back(Worker{std::move(thread), std::move(done)});
    return result;
  }

  void waitForAll() {
    std::vector<Worker> all;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      all.swap(workers_);
    }
    for (Worker& worker : all) worker.thread.join();
  }

 private:
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::mutex mutex_;
  std::vector<Worker> workers_;
};

// The key of code generation's result: the options and every token.
std::string wholeKey(const Snapshot& snapshot) {
  std::string whole = optionsKey(snapshot.options()) + '\x1d';
  for (const TokenInfo& token : snapshot.tokens) appendToken(whole, token);
  return whole;
}

}  // namespace

bool needsCheck(const Snapshot& snapshot) {
  return snapshot.ir && !snapshot.ir->functions.empty() && !hasErrors(snapshot.diagnostics);
}

void waitForBackgroundCodegen() { BackgroundCodegen::get().waitForAll(); }

std::optional<std::vector<Diagnostic>> checkSnapshot(const std::shared_ptr<const Snapshot>& held, CheckCache& cache,
                                                     const std::function<bool()>& cancelled,
                                                     const std::function<void(const CheckProgress&)>& progress,
                                                     CheckStats* stats) {
  const Snapshot& snapshot = *held;
  CheckStats localStats;
  CheckStats& counts = stats ? *stats : localStats;
  std::vector<Diagnostic> all = snapshot.diagnostics;
  if (!needsCheck(snapshot)) return all;
  const ir::Module& module = *snapshot.ir;
  auto base = std::make_shared<CheckCache::Base>(CheckCache::Base{snapshot.file(), snapshot.tokens});
  const std::string options = optionsKey(snapshot.options());

  // A kernel's findings depend on its own tokens and on everything outside the
  // kernels (device functions, constants, imports), never on another kernel.
  std::vector<const ir::Function*> byStart;
  for (const auto& fn : module.functions)
    if (fn && !fn->range.empty()) byStart.push_back(fn.get());
  std::sort(byStart.begin(), byStart.end(),
            [](const ir::Function* a, const ir::Function* b) { return a->range.begin < b->range.begin; });
  auto insideKernel = [&](const TokenInfo& token) -> const ir::Function* {
    // The last kernel starting at or before the token (kernels do not nest).
    auto after = std::upper_bound(byStart.begin(), byStart.end(), token.range.begin,
                                  [](uint32_t o, const ir::Function* f) { return o < f->range.begin; });
    if (after == byStart.begin()) return nullptr;
    const ir::Function* fn = *(after - 1);
    return token.range.end <= fn->range.end ? fn : nullptr;
  };
  std::string outside;
  std::map<const ir::Function*, std::string> kernelTokens;
  for (const TokenInfo& token : snapshot.tokens) {
    if (const ir::Function* fn = insideKernel(token)) appendToken(kernelTokens[fn], token);
    else appendToken(outside, token);
  }

  // Code generation reads the same IR and nothing the checker finds, so when
  // its diagnostics for this text are not cached it runs beside the kernels'
  // checks; its result is used only when they find no error (as argusc does),
  // and a cancelled check leaves it to finish on its own.
  const std::string whole = wholeKey(snapshot);
  std::optional<std::vector<Diagnostic>> codegenReused;
  if (cache.codegen) codegenReused = reuse(*cache.codegen, whole, snapshot);
  std::future<Generated> beside;
  if (!codegenReused) beside = BackgroundCodegen::get().start(held);

  checker::Options checkerOptions;
  checkerOptions.cancelled = cancelled;
  CheckProgress step;
  step.total = module.functions.size();
  for (const auto& fn : module.functions) {
    if (!fn) continue;
    if (cancelled && cancelled()) return std::nullopt;
    std::string key = options + '\x1d' + outside + '\x1d' + kernelTokens[fn.get()];
    auto cached = cache.kernels.find(fn->name);
    if (cached != cache.kernels.end()) {
      if (std::optional<std::vector<Diagnostic>> reused = reuse(cached->second, key, snapshot)) {
        all.insert(all.end(), reused->begin(), reused->end());
        ++counts.kernelsReused;
        ++step.done;
        continue;
      }
    }
    step.kernel = fn->name;
    if (progress) progress(step);
    DiagnosticSink sink;
    const ir::Function* only = fn.get();
    checkerOptions.accept = [only](const ir::Function& f) { return &f == only; };
    checker::check(module, sink, &snapshot.file(), checkerOptions);
    if (cancelled && cancelled()) return std::nullopt;
    cache.kernels[fn->name] = CheckCache::Entry{key, base, sink.diagnostics()};
    all.insert(all.end(), sink.diagnostics().begin(), sink.diagnostics().end());
    ++counts.kernelsChecked;
    ++step.done;
  }
  // Forget kernels that no longer exist (renamed or deleted).
  for (auto it = cache.kernels.begin(); it != cache.kernels.end();) {
    bool present = false;
    for (const auto& fn : module.functions) present = present || (fn && fn->name == it->first);
    it = present ? std::next(it) : cache.kernels.erase(it);
  }
  if (hasErrors(all)) return all;

  // Code generation's diagnostics are about the target (shared memory per
  // block, instructions only sm_90a has): argusc reports them, so does the editor.
  if (codegenReused) {
    all.insert(all.end(), codegenReused->begin(), codegenReused->end());
    counts.codegenReused = true;
    return all;
  }
  if (cancelled && cancelled()) return std::nullopt;
  step.kernel.clear();
  if (progress) progress(step);
  Generated generated = beside.valid() ? beside.get() : generate(module, snapshot.options().arch);
  counts.codegenRan = true;
  const std::vector<Diagnostic>& found = generated.diags.diagnostics();
  cache.codegen = CheckCache::Entry{whole, base, found};
  cache.codegenPtx = hasErrors(found) ? std::string() : std::move(generated.ptx);
  cache.resources.reset();
  all.insert(all.end(), found.begin(), found.end());
  return all;
}

std::optional<std::vector<codegen::KernelResources>> measureResources(const Snapshot& snapshot, CheckCache& cache,
                                                                      const std::string& ptxasPath,
                                                                      const std::function<bool()>& cancelled) {
  if (!cache.codegen || cache.codegenPtx.empty() || cache.codegen->key != wholeKey(snapshot)) return std::nullopt;
  if (!cache.resources) {
    // A missing or failing ptxas only means no measurement (argusc reports it
    // when asked for a cubin); it is not tried again on the same PTX.
    DiagnosticSink ignored;
    std::vector<codegen::KernelResources> kernels;
    if (!codegen::assembleCubin(cache.codegenPtx, snapshot.options().arch, ptxasPath, ignored, &kernels, cancelled)) {
      if (cancelled && cancelled()) return std::nullopt;  // not measured: the next check's PTX will be
      kernels.clear();
    }
    cache.resources = std::move(kernels);
  }
  return cache.resources;
}

}  // namespace argus::lsp
