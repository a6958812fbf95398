// The Evaluator (agent/evaluator.h): check -> compile -> signature -> validate
// on the CPU interpreter against the task's reference -> GPU check and timing,
// or the cost model. docs/agent/evaluation.md describes each step.
#include "agent/evaluator.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <future>
#include <random>

#include "agent/evaluator_internal.h"
#include "driver/compilation.h"
#include "driver/metadata.h"
#include "ir/ir.h"
#include "runtime/interp/interpreter.h"
#include "support/render.h"

namespace argus::agent {

using detail::KernelArguments;

std::string stateHash(const std::string& source) {
  // FNV-1a over the text with line endings and trailing blanks normalised, so
  // that a rewrite that only touches whitespace at line ends is the same state.
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&](unsigned char c) {
    h ^= c;
    h *= 0x100000001b3ull;
  };
  size_t lineStart = 0;
  while (lineStart <= source.size()) {
    size_t end = source.find('\n', lineStart);
    if (end == std::string::npos) end = source.size();
    size_t last = end;
    while (last > lineStart && (source[last - 1] == ' ' || source[last - 1] == '\t' || source[last - 1] == '\r')) --last;
    for (size_t i = lineStart; i < last; ++i) mix(static_cast<unsigned char>(source[i]));
    if (end < source.size()) mix('\n');
    lineStart = end + 1;
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016" PRIx64, h);
  return text;
}

const char* verdictName(Verdict v) {
  switch (v) {
    case Verdict::Ok: return "ok";
    case Verdict::CheckFailed: return "check-failed";
    case Verdict::CompileFailed: return "compile-failed";
    case Verdict::SignatureChanged: return "signature-changed";
    case Verdict::Wrong: return "wrong";
    case Verdict::RunFailed: return "run-failed";
  }
  return "unknown";
}

namespace {

constexpr uint64_t kMaxOpsPerBlock = 2'000'000;  // a runaway loop becomes a fault, not a hang
constexpr int kGpuWarmup = 5;

std::string dimsText(const ir::Function& fn, const ir::Param& p) {
  std::string text = "(";
  for (size_t d = 0; d < p.dims.size(); ++d) {
    const ir::DimRef& dim = p.dims[d];
    text += d ? ", " : "";
    text += dim.constant >= 0 ? std::to_string(dim.constant) : fn.sizeNames.at(static_cast<size_t>(dim.sizeIndex));
  }
  return text + ")";
}

const char* kindText(ir::ParamKind k) {
  return k == ir::ParamKind::Tensor ? "tensor" : k == ir::ParamKind::Scalar ? "scalar" : "size";
}

// Empty when `candidate` keeps the reference's signature (the kernel name, and
// every non-const parameter's name, kind, dtype and shape symbols).
std::string signatureDifference(const ir::Function& reference, const ir::Function& candidate) {
  auto userParams = [](const ir::Function& fn) {
    std::vector<const ir::Param*> out;
    for (const ir::Param& p : fn.params)
      if (p.kind != ir::ParamKind::Size) out.push_back(&p);
    return out;
  };
  std::vector<const ir::Param*> want = userParams(reference), got = userParams(candidate);
  for (size_t i = 0; i < std::max(want.size(), got.size()); ++i) {
    if (i >= got.size()) return "parameter '" + want[i]->name + "' was removed";
    if (i >= want.size()) return "parameter '" + got[i]->name + "' was added";
    const ir::Param& w = *want[i];
    const ir::Param& g = *got[i];
    if (w.name != g.name) return "parameter " + std::to_string(i + 1) + " was renamed from '" + w.name + "' to '" + g.name + "'";
    if (w.kind != g.kind)
      return "parameter '" + w.name + "' changed from a " + kindText(w.kind) + " to a " + kindText(g.kind);
    if (w.dtype != g.dtype)
      return "parameter '" + w.name + "' changed dtype from " + ir::dtypeName(w.dtype) + " to " + ir::dtypeName(g.dtype);
    if (w.kind == ir::ParamKind::Tensor && dimsText(reference, w) != dimsText(candidate, g))
      return "tensor '" + w.name + "' changed shape from " + dimsText(reference, w) + " to " + dimsText(candidate, g);
  }
  return "";
}

const ir::Function* findKernel(const ir::Module& module, const std::string& name) {
  for (const auto& fn : module.functions)
    if (fn->name == name) return fn.get();
  return nullptr;
}

// The first of the kernel's requirements that the given sizes break; nullptr
// when all hold or one cannot be evaluated (a size the task does not name).
const ir::Requirement* requirementBrokenAt(const ir::Function& fn, const Sizes& sizes) {
  std::vector<int64_t> values;
  for (const std::string& name : fn.sizeNames) {
    auto it = sizes.find(name);
    if (it == sizes.end()) return nullptr;
    values.push_back(it->second);
  }
  for (const ir::Requirement& r : fn.requirements) {
    int64_t holds = 1;
    if (r.condition.evaluate(values, holds) && !holds) return &r;
  }
  return nullptr;
}

std::string describe(const Diagnostic& d, const SourceFile& file) {
  LineCol at = file.lineCol(d.range.begin);
  return std::string(d.code()) + " at " + std::to_string(at.line) + ":" + std::to_string(at.column) + ": " + d.message;
}

}  // namespace

struct Evaluator::State {
  Task task;
  EvaluatorOptions options;
  double scale = 1.0;
  std::string setupError;  // the reference cannot serve: every evaluation reports it
  std::unique_ptr<Compilation> reference;
  const ir::Function* referenceFn = nullptr;
  std::vector<detail::TensorUse> referenceUses;
  std::unique_ptr<detail::GpuMeasurer> gpu;
  std::string noGpuReason;
  std::string referencePtx, referenceMeta;  // for the measured-shape check on a GPU
  uint64_t evaluations = 0;

  // A new seed every evaluation: from std::random_device, or (options.seed != 0)
  // the splitmix64 sequence of options.seed, so that a run can be repeated.
  uint64_t nextSeed() {
    uint64_t x;
    if (options.seed != 0) {
      x = options.seed + 0x9e3779b97f4a7c15ull * ++evaluations;
    } else {
      std::random_device device;
      x = (static_cast<uint64_t>(device()) << 32) ^ device();
    }
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x == 0 ? 1 : x;
  }
};

Evaluator::Evaluator(const Task& task, EvaluatorOptions options) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.task = task;
  s.options = options;
  CompileOptions compile;
  compile.arch = task.arch;
  s.reference = std::make_unique<Compilation>(SourceFile(task.kernelPath, task.kernelSource), compile);
  const ir::Module& module = s.reference->ir();
  if (s.reference->hasErrors() || module.functions.empty()) {
    s.setupError = "the task's kernel " + task.kernelPath + " does not check";
    for (const Diagnostic& d : s.reference->diagnostics())
      if (d.severity == Severity::Error) {
        s.setupError += ": " + describe(d, s.reference->source());
        break;
      }
  } else {
    s.referenceFn = module.functions.front().get();
    s.referenceUses = detail::tensorUses(*s.referenceFn);
    std::vector<std::pair<std::string, const Sizes*>> shapes;
    for (const Sizes& v : task.validate) shapes.push_back({"validate", &v});
    shapes.push_back({"measure", &task.measure});
    for (const auto& [field, sizes] : shapes)
      for (const std::string& name : s.referenceFn->sizeNames)
        if (!sizes->count(name) && s.setupError.empty())
          s.setupError = "the task's '" + field + "' sizes lack '" + name + "', a size of kernel '" + s.referenceFn->name + "'";
  }
  if (options.useGpu) {
    s.gpu = options.gpuForTesting ? options.gpuForTesting() : detail::GpuMeasurer::open(s.noGpuReason);
    // Code for sm_90 does not run on an sm_80 device: model rather than fail every candidate.
    if (s.gpu && s.gpu->deviceArch() == "sm_80" && task.arch != "sm_80") {
      s.noGpuReason = s.gpu->deviceName() + " (sm_80) cannot run the task's " + task.arch + " code";
      s.gpu.reset();
    }
  } else {
    s.noGpuReason = "GPU measurement is off";
  }
  if (s.gpu && s.setupError.empty()) {
    s.referencePtx = s.reference->ptx();
    s.referenceMeta = kernelMetadataJson(module, task.arch);
    if (s.referencePtx.empty()) {
      s.noGpuReason = "the task's kernel produces no PTX for " + task.arch + ", so nothing checks a GPU result";
      s.gpu.reset();
    }
  }
}

Evaluator::~Evaluator() = default;

bool Evaluator::hasGpu() const { return state_->gpu != nullptr; }

std::string Evaluator::gpuName() const { return state_->gpu ? state_->gpu->deviceName() : ""; }

void Evaluator::calibrate(const std::vector<std::pair<double, double>>& modelledMeasuredMs) {
  state_->scale = fitCalibrationScale(modelledMeasuredMs);
}

std::optional<std::string> Evaluator::requirementBrokenAtMeasure(const std::string& source) const {
  const State& s = *state_;
  if (!s.setupError.empty()) return std::nullopt;
  CompileOptions compile;
  compile.arch = s.task.arch;
  Compilation c(SourceFile(s.task.kernelPath, source), compile);
  const ir::Function* fn = findKernel(c.ir(), s.referenceFn->name);
  if (!fn) return std::nullopt;  // evaluate() says what is wrong with it
  if (const ir::Requirement* broken = requirementBrokenAt(*fn, s.task.measure)) return broken->text;
  return std::nullopt;
}

Evaluation Evaluator::evaluate(const Candidate& candidate) {
  State& s = *state_;
  Evaluation ev;
  if (!s.setupError.empty()) {
    ev.detail = s.setupError;
    return ev;
  }
  const std::string& kernelName = s.referenceFn->name;

  // 1. Check and compile, collecting exactly what `argusc --diagnostics-format=json` prints.
  CompileOptions compile;
  compile.arch = s.task.arch;
  Compilation c(SourceFile(s.task.kernelPath, candidate.source), compile);
  const ir::Module& module = c.ir();
  bool checked = c.check();
  const std::string& ptx = checked ? c.ptx() : std::string();
  const Diagnostic* firstError = nullptr;
  for (const Diagnostic& d : c.diagnostics()) {
    ev.diagnostics.push_back(diagnosticToJson(d, c.source()));
    ev.diagnosticCodes.push_back(d.code());
    if (d.severity == Severity::Error) {
      ++ev.errorCount;
      if (!firstError) firstError = &d;
    } else if (d.severity == Severity::Warning) {
      ++ev.warningCount;
    }
  }
  if (!checked || module.functions.empty()) {
    ev.verdict = Verdict::CheckFailed;
    ev.detail = firstError ? describe(*firstError, c.source()) : "the program defines no kernel";
    return ev;
  }
  if (ptx.empty()) {
    ev.verdict = Verdict::CompileFailed;
    ev.detail = firstError ? describe(*firstError, c.source()) : "code generation produced no PTX";
    return ev;
  }

  // 2. The signature: a candidate may change how, never what, the kernel computes.
  const ir::Function* fn = findKernel(module, kernelName);
  if (!fn) {
    ev.verdict = Verdict::SignatureChanged;
    ev.detail = "the kernel '" + kernelName + "' is missing (found '" + module.functions.front()->name + "')";
    return ev;
  }
  if (std::string diff = signatureDifference(*s.referenceFn, *fn); !diff.empty()) {
    ev.verdict = Verdict::SignatureChanged;
    ev.detail = diff;
    return ev;
  }
  // A requirement that excludes the measured shape would make any timing meaningless.
  if (const ir::Requirement* broken = requirementBrokenAt(*fn, s.task.measure)) {
    ev.verdict = Verdict::RunFailed;
    ev.detail = "requirement '" + broken->text + "' does not hold at the measured shape " + detail::sizesText(s.task.measure);
    return ev;
  }
  ev.estimate = estimateCost(*fn, s.task.measure, s.scale);
  ev.modelTimeMs = ev.estimate.uncalibratedMs;

  // 3. Correctness on the CPU interpreter, fresh inputs at every shape of the plan.
  const uint64_t seed = s.nextSeed();
  const std::string seedText = "seed " + std::to_string(seed);
  std::mt19937_64 rng(seed);
  const int tripTarget = std::max(2, detail::pipelineDepth(*fn, ev.estimate.pipelineStages) + 1);
  detail::ShapePlan plan =
      detail::planValidationShapes(*s.referenceFn, *fn, s.task, tripTarget, s.options.interpreterBudget, rng);
  nlohmann::json& evidence = ev.evidence;
  evidence = {{"seed", std::to_string(seed)}, {"trip_target", tripTarget}, {"shapes", nlohmann::json::array()}};
  if (!plan.skipped.empty()) evidence["skipped"] = plan.skipped;
  if (plan.measureUnaffordable) evidence["measure_in_interpreter"] = "over the interpreter budget";
  auto shapeRecord = [](const std::string& role, const Sizes& sizes, const char* engine) {
    return nlohmann::json{{"role", role}, {"sizes", sizes}, {"engine", engine}};
  };
  auto failAt = [&](nlohmann::json record, Verdict verdict, const std::string& detail) {
    record["failed"] = detail;
    evidence["failed_at"] = record;
    ev.verdict = verdict;
    ev.detail = detail;
    return ev;
  };
  const Sizes* gpuShape = nullptr;
  KernelArguments gpuArgs;
  std::vector<interp::HostTensor> gpuExpected;
  double gpuShapeElements = 0;
  interp::RunOptions run;
  run.maxOpsPerBlock = kMaxOpsPerBlock;
  for (const detail::ValidationShape& shape : plan.shapes) {
    const Sizes& sizes = shape.sizes;
    const std::string where = "at " + detail::sizesText(sizes) + " (" + shape.role + " shape, " + seedText + ")";
    nlohmann::json record = shapeRecord(shape.role, sizes, "interpreter");
    KernelArguments inputs;
    std::string error;
    if (!detail::drawArguments(*s.referenceFn, sizes, rng, inputs, error)) return failAt(record, Verdict::RunFailed, error);
    for (size_t t = 0; t < inputs.tensors.size(); ++t)
      if (s.referenceUses[t] == detail::TensorUse::WriteOnly) detail::poison(inputs.tensors[t]);
    KernelArguments want = inputs, got = inputs;
    std::vector<interp::ArgValue> wantValues = want.interpreterValues(*s.referenceFn);
    std::vector<interp::ArgValue> gotValues = got.interpreterValues(*fn);
    // The reference and the candidate run side by side (separate functions and
    // arguments; the interpreter keeps no shared state): half the wall time on two cores.
    std::future<std::optional<interp::RunError>> reference =
        std::async(std::launch::async, [&] { return interp::run(*s.referenceFn, wantValues, run); });
    std::optional<interp::RunError> candidateFault = interp::run(*fn, gotValues, run);
    if (std::optional<interp::RunError> fault = reference.get())
      return failAt(record, Verdict::RunFailed, "the task's reference kernel faults " + where + ": " + fault->message);
    if (const std::optional<interp::RunError>& fault = candidateFault) {
      Diagnostic d = interp::toDiagnostic(*fault);
      ev.diagnostics.push_back(diagnosticToJson(d, c.source()));
      ev.diagnosticCodes.push_back(d.code());
      ++ev.errorCount;
      return failAt(record, Verdict::RunFailed, where + ": " + describe(d, c.source()));
    }
    double maxError = 0, worstRatio = 0;
    for (size_t t = 0; t < got.tensors.size(); ++t) {
      detail::TensorError error;
      std::string mismatch = detail::compareTensors(got.tensorNames[t], got.tensors[t], want.tensors[t], &error);
      if (!mismatch.empty()) return failAt(record, Verdict::Wrong, mismatch + " " + where);
      maxError = std::max(maxError, error.maxError);
      if (error.tolerance > 0) worstRatio = std::max(worstRatio, error.maxError / error.tolerance);
    }
    record["max_error"] = maxError;
    record["max_error_over_tolerance"] = worstRatio;
    evidence["shapes"].push_back(std::move(record));
    if (shape.role != "task") continue;
    double elements = 0;
    for (const interp::HostTensor& t : inputs.tensors) elements += static_cast<double>(t.size());
    if (!gpuShape || elements < gpuShapeElements) {
      gpuShape = &sizes;
      gpuShapeElements = elements;
      gpuArgs = std::move(inputs);
      gpuExpected = std::move(got.tensors);
    }
  }
  std::string validated = "matches the reference at " + std::to_string(plan.shapes.size()) + " shape" +
                          (plan.shapes.size() == 1 ? "" : "s") + " in the interpreter (" + seedText + ")";

  // 4. On a GPU: the GPU result must match the interpreter's at the smallest task
  // shape, and the task's kernel's GPU result at the measured shape (fresh
  // inputs every evaluation); then the time. Without one: the model's time.
  std::optional<double> flops = taskFlops(s.task, s.task.measure);
  if (s.gpu) {
    std::vector<detail::TensorUse> uses = detail::tensorUses(*fn);
    std::string meta = kernelMetadataJson(module, s.task.arch), error;
    std::vector<interp::HostTensor> results;
    if (gpuShape) {
      nlohmann::json record = shapeRecord("task", *gpuShape, "gpu");
      const std::string where = "at " + detail::sizesText(*gpuShape) + " (" + seedText + ")";
      if (!s.gpu->runOnce(ptx, meta, kernelName, *gpuShape, gpuArgs, uses, results, error))
        return failAt(record, Verdict::RunFailed, "on the GPU " + where + ": " + error);
      double maxError = 0;
      for (size_t t = 0; t < results.size(); ++t) {
        detail::TensorError tensorError;
        std::string mismatch = detail::compareTensors(gpuArgs.tensorNames[t], results[t], gpuExpected[t], &tensorError);
        if (!mismatch.empty())
          return failAt(record, Verdict::Wrong, "the GPU result differs from the interpreter's: " + mismatch + " " + where);
        maxError = std::max(maxError, tensorError.maxError);
      }
      record["max_error"] = maxError;
      evidence["shapes"].push_back(std::move(record));
    }
    KernelArguments measureArgs;
    nlohmann::json record = shapeRecord("measure", s.task.measure, "gpu");
    const std::string where = "at the measured shape " + detail::sizesText(s.task.measure) + " (" + seedText + ")";
    if (!detail::drawArguments(*s.referenceFn, s.task.measure, rng, measureArgs, error))
      return failAt(record, Verdict::RunFailed, error);
    std::vector<interp::HostTensor> expected;
    if (!s.gpu->runOnce(s.referencePtx, s.referenceMeta, kernelName, s.task.measure, measureArgs, s.referenceUses,
                        expected, error))
      return failAt(record, Verdict::RunFailed, "the task's kernel on the GPU " + where + ": " + error);
    if (!s.gpu->runOnce(ptx, meta, kernelName, s.task.measure, measureArgs, uses, results, error))
      return failAt(record, Verdict::RunFailed, "on the GPU " + where + ": " + error);
    double maxError = 0;
    for (size_t t = 0; t < results.size() && t < expected.size(); ++t) {
      detail::TensorError tensorError;
      std::string mismatch = detail::compareTensors(measureArgs.tensorNames[t], results[t], expected[t], &tensorError);
      if (!mismatch.empty())
        return failAt(record, Verdict::Wrong, "differs from the task's kernel on the GPU: " + mismatch + " " + where);
      maxError = std::max(maxError, tensorError.maxError);
    }
    record["max_error"] = maxError;
    evidence["shapes"].push_back(std::move(record));
    double ms = 0;
    if (!s.gpu->time(ptx, meta, kernelName, s.task.measure, measureArgs, uses, kGpuWarmup, s.options.gpuRepeat, ms,
                     error)) {
      ev.verdict = Verdict::RunFailed;
      ev.detail = "timing on the GPU at " + detail::sizesText(s.task.measure) + ": " + error;
      return ev;
    }
    ev.timeMs = ms;
    ev.timeSource = "gpu";
    ev.detail = validated + ", on the GPU against the interpreter and against the task's kernel at the measured shape;"
                " median of " + std::to_string(std::max(1, s.options.gpuRepeat)) + " runs on " + s.gpu->deviceName();
  } else {
    ev.timeMs = ev.estimate.timeMs;
    ev.timeSource = "model";
    ev.detail = validated + "; time from the cost model (" + s.noGpuReason + ")";
  }
  ev.verdict = Verdict::Ok;
  if (flops && *ev.timeMs > 0) ev.tflops = *flops / (*ev.timeMs * 1e-3) / 1e12;
  return ev;
}

}  // namespace argus::agent
