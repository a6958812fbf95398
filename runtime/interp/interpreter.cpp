// run(): binds the arguments, derives the runtime sizes, checks requirements,
// evaluates the grid and runs every block (executor.cpp does the ops).
#include "runtime/interp/interpreter.h"

#include <limits>
#include <new>
#include <stdexcept>

#include "runtime/interp/executor.h"

namespace argus::interp {

namespace {

using detail::RtValue;

RunError runError(DiagId id, std::vector<std::string> args, SourceRange range) {
  RunError e;
  e.id = id;
  e.message = formatDiagMessage(id, args);
  e.arguments = std::move(args);
  e.range = range;
  return e;
}

RunError argumentError(const ir::Param& p, DiagId id, std::vector<std::string> args) {
  return runError(id, std::move(args), p.range);
}

std::string shapeStr(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

struct SizeSource {
  std::string tensor;
  size_t dim = 0;
};

// Checks one tensor argument against its parameter and records runtime sizes.
std::optional<RunError> bindTensor(const ir::Function& fn, const ir::Param& p, HostTensor* t,
                                   std::vector<int64_t>& sizes, std::vector<SizeSource>& sources) {
  if (!t) return argumentError(p, DiagId::RunArgumentNotATensor, {p.name, "it is a null pointer"});
  if (t->dtype != p.dtype)
    return argumentError(p, DiagId::RunTensorDType, {p.name, ir::dtypeName(p.dtype), ir::dtypeName(t->dtype)});
  if (t->shape.size() != p.dims.size())
    return argumentError(p, DiagId::RunTensorRank, {p.name, std::to_string(p.dims.size()), shapeStr(t->shape)});
  for (size_t d = 0; d < p.dims.size(); ++d) {
    int64_t extent = t->shape[d];
    const ir::DimRef& dim = p.dims[d];
    const std::string axis = std::to_string(d);
    if (extent < 0 || extent > std::numeric_limits<int32_t>::max())
      return argumentError(p, DiagId::RunTensorExtentRange, {p.name, axis, std::to_string(extent)});
    if (dim.constant >= 0) {
      if (extent != dim.constant)
        return argumentError(p, DiagId::RunTensorExtent,
                             {p.name, axis, std::to_string(dim.constant), std::to_string(extent)});
      continue;
    }
    size_t s = static_cast<size_t>(dim.sizeIndex);
    if (s >= sizes.size())  // ir::verify rejects it
      return argumentError(p, DiagId::RunInvalidIR,
                           {"tensor '" + p.name + "' dimension " + axis + " refers to an unknown size"});
    if (sizes[s] < 0) {
      sizes[s] = extent;
      sources[s] = {p.name, d};
    } else if (sizes[s] != extent) {
      return argumentError(p, DiagId::RunSizeMismatch,
                           {p.name, axis, fn.sizeNames[s], std::to_string(sizes[s]), sources[s].tensor,
                            std::to_string(sources[s].dim), std::to_string(extent)});
    }
  }
  if (t->bytes.size() != t->size() * t->elementBytes())
    return argumentError(p, DiagId::RunTensorData,
                         {p.name, std::to_string(t->bytes.size()), shapeStr(t->shape),
                          std::to_string(t->size() * t->elementBytes())});
  return std::nullopt;
}

std::string sizesStr(const ir::Function& fn, const std::vector<int64_t>& sizes) {
  std::string s;
  for (size_t i = 0; i < sizes.size() && i < fn.sizeNames.size(); ++i)
    s += (i ? ", " : "") + fn.sizeNames[i] + " = " + std::to_string(sizes[i]);
  return s;
}

std::optional<RunError> runChecked(const ir::Function& fn, std::vector<ArgValue>& args, const RunOptions& opts) {
  std::vector<std::string> problems = ir::verify(fn);
  if (!problems.empty()) return runError(DiagId::RunInvalidIR, {problems[0]}, fn.range);
  size_t expected = 0;
  std::string names;
  for (const ir::Param& p : fn.params)
    if (p.kind != ir::ParamKind::Size) names += (expected++ ? ", " : "") + p.name;
  if (args.size() != expected)
    return runError(DiagId::RunArgumentMismatch,
                    {fn.name, std::to_string(expected), names, std::to_string(args.size())}, fn.range);

  std::vector<int64_t> sizes(fn.sizeNames.size(), -1);
  std::vector<SizeSource> sources(fn.sizeNames.size());
  std::vector<RtValue> params(fn.params.size());
  size_t next = 0;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const ir::Param& p = fn.params[i];
    if (p.kind == ir::ParamKind::Size) continue;
    ArgValue& arg = args[next++];
    RtValue& v = params[i];
    if (p.kind == ir::ParamKind::Tensor) {
      HostTensor* const* t = std::get_if<HostTensor*>(&arg.value);
      if (!t) return argumentError(p, DiagId::RunArgumentNotATensor, {p.name, "a scalar was given"});
      if (auto error = bindTensor(fn, p, *t, sizes, sources)) return error;
      v.kind = ir::TypeKind::Tensor;
      v.tensor = *t;
      continue;
    }
    v.kind = ir::TypeKind::Scalar;
    if (const double* d = std::get_if<double>(&arg.value)) {
      v.scalar = num::fromDouble(p.dtype, *d);
    } else if (const int64_t* n = std::get_if<int64_t>(&arg.value)) {
      Elem e;
      e.i = *n;
      v.scalar = num::cast(ir::DType::I64, p.dtype, e);
    } else {
      return argumentError(p, DiagId::RunArgumentNotAScalar, {p.name, ir::dtypeName(p.dtype)});
    }
  }
  for (size_t s = 0; s < sizes.size(); ++s)
    if (sizes[s] < 0) return runError(DiagId::RunMissingSize, {fn.sizeNames[s]}, fn.range);
  // Size params come in sizeNames order and carry the size's name.
  size_t sizeOrder = 0;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    if (fn.params[i].kind != ir::ParamKind::Size) continue;
    size_t index = sizeOrder++;
    for (size_t k = 0; k < fn.sizeNames.size(); ++k)
      if (fn.sizeNames[k] == fn.params[i].name) index = k;
    params[i].kind = ir::TypeKind::Scalar;
    params[i].scalar.i = index < sizes.size() ? sizes[index] : 0;
  }

  for (const ir::Requirement& r : fn.requirements) {
    int64_t holds = 0;
    std::string error;
    if (!r.condition.evaluate(sizes, holds, &error) || !holds)
      return runError(DiagId::RunRequirementFailed,
                      {r.text, sizesStr(fn, sizes), error.empty() ? std::string() : " (" + error + ")"}, r.range);
  }

  std::array<int64_t, 3> grid{1, 1, 1};
  for (int axis = 0; axis < 3; ++axis) {
    std::string error;
    if (!fn.grid[axis].evaluate(sizes, grid[axis], &error) || grid[axis] < 0 ||
        grid[axis] > std::numeric_limits<int32_t>::max())
      return runError(DiagId::RunGridAxis,
                      {std::to_string(axis), fn.grid[axis].str(fn.sizeNames),
                       error.empty() ? std::to_string(grid[axis]) : error, sizesStr(fn, sizes)},
                      fn.range);
  }

  detail::LayoutCache layouts(fn.numWarps);
  for (int64_t z = 0; z < grid[2]; ++z)
    for (int64_t y = 0; y < grid[1]; ++y)
      for (int64_t x = 0; x < grid[0]; ++x) {
        detail::BlockContext ctx;
        ctx.blockId = {x, y, z};
        ctx.grid = grid;
        ctx.linearBlock = x + grid[0] * (y + grid[1] * z);
        detail::BlockExecutor block(fn, opts, layouts, ctx);
        try {
          block.run(params);
        } catch (detail::Fault& fault) {
          RunError e = std::move(fault.error);
          e.message = "block (" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) + "): " + e.message;
          return e;
        }
      }
  return std::nullopt;
}

}  // namespace

std::optional<RunError> run(const ir::Function& fn, std::vector<ArgValue>& args, const RunOptions& opts) {
  try {
    return runChecked(fn, args, opts);
  } catch (const std::bad_alloc&) {
    return runError(DiagId::RunOutOfMemory, {fn.name}, fn.range);
  } catch (const std::length_error&) {  // a buffer larger than a vector can hold
    return runError(DiagId::RunOutOfMemory, {fn.name}, fn.range);
  } catch (const std::exception& e) {
    return runError(DiagId::RunInternalError, {fn.name, e.what()}, fn.range);
  } catch (...) {
    return runError(DiagId::RunInternalError, {fn.name, "an unknown exception"}, fn.range);
  }
}

Diagnostic toDiagnostic(const RunError& error) {
  Diagnostic d;
  d.id = error.id;
  d.severity = diagInfo(error.id).severity;
  d.range = error.range;
  d.message = error.message;
  d.arguments = error.arguments;
  d.labels = error.labels;
  if (error.block || error.thread) {
    Counterexample c;
    c.block = error.block;
    c.thread = error.thread;
    if (error.thread) {
      c.warp = *error.thread / 32;
      c.lane = *error.thread % 32;
    }
    if (error.otherThread)
      c.facts.push_back({"other thread", std::to_string(*error.otherThread) + " (warp " + std::to_string(*error.otherThread / 32) +
                                             ", lane " + std::to_string(*error.otherThread % 32) + ")"});
    d.counterexample = std::move(c);
  }
  return d;
}

bool isSharedRace(DiagId id) {
  switch (id) {
    case DiagId::RunSharedRace:
    case DiagId::RunWriteAfterReadRace:
    case DiagId::RunWriteWriteRace:
    case DiagId::RunCopyAfterReadRace:
    case DiagId::RunCopyAfterWriteRace:
    case DiagId::RunAsyncCopyPendingRead:
    case DiagId::RunAsyncCopyUnsyncedRead:
    case DiagId::RunWriteOverAsyncCopy:
    case DiagId::RunBulkCopyPendingRead:
    case DiagId::RunWriteOverBulkCopy:
    case DiagId::RunMbarrierInitRace:
      return true;
    default:
      return false;
  }
}

}  // namespace argus::interp
