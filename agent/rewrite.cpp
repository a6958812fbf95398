// The rewrite registry and kernel analysis (rewrite.h). Each family of
// rewrites lives in its own file: rewrite_params.cpp (set_params,
// set_stages), rewrite_staging.cpp (stage_operands_in_shared),
// rewrite_pipeline.cpp (async_pipeline), rewrite_mma.cpp (tensor_core_mma,
// swizzle_shared), rewrite_grid.cpp (rasterize_grid), rewrite_hopper.cpp
// (tma_wgmma, persistent_tiles); rewrite_ast.cpp holds what they share.
#include "agent/rewrite.h"

#include <functional>

#include "agent/rewrite_internal.h"

namespace argus::agent {

using namespace detail;

std::vector<std::string> KernelFeatures::tags() const {
  std::vector<std::string> out;
  if (!parsed) {
    out.push_back("does_not_compile");
    return out;
  }
  out.push_back("parsed");
  if (hasDot) out.push_back("dot");
  if (registerOperands) out.push_back("register_operands");
  if (hasDot || registerOperands) out.push_back("gemm");
  if (usesShared) out.push_back("shared");
  if (usesShared && !usesCopyAsync) out.push_back("sync_copies");
  if (usesCopyAsync) out.push_back("copy_async");
  if (usesCopyAsync && !usesPipelined) out.push_back("explicit_async");
  if (usesPipelined) out.push_back("pipelined");
  if (usesMmaLayout) out.push_back("mma");
  if (usesSwizzle) out.push_back("swizzle");
  if (usesTensorCoreDtype) out.push_back("tensor_core_dtype");
  if (!operandDtype.empty()) out.push_back(operandDtype);
  if (constParams.count("STAGES")) out.push_back("stages_param");
  if (usesCopyBulk) out.push_back("copy_bulk");
  if (specialized) out.push_back("specialized");
  if (persistent) out.push_back("persistent");
  if (grid1d) out.push_back("grid_1d");
  if (!arch.empty()) out.push_back(arch);
  return out;
}

KernelFeatures analyzeKernel(const std::string& source, const std::string& fileName) {
  KernelFeatures f;
  Compilation c(SourceFile(fileName, source), CompileOptions{});
  c.ir();  // frontend: parse and check
  f.parsed = !c.hasErrors();
  const ast::FunctionDef* kernel = nullptr;
  for (const auto& fn : c.ast().functions)
    if (kernelDecorator(*fn)) {
      kernel = fn.get();
      break;
    }
  if (!kernel) {
    f.parsed = false;
    return f;
  }
  f.kernelName = kernel->name;
  f.constParams = constIntDefaults(*kernel);
  if (const ast::Decorator* d = kernelDecorator(*kernel); d && d->args)
    for (const ast::Argument& a : *d->args)
      if (a.keyword && *a.keyword == "warps" && a.value) {
        if (std::optional<int64_t> w = evalInt(*a.value, f.constParams)) f.warps = static_cast<int>(*w);
        for (const auto& [name, value] : f.constParams) {
          std::map<std::string, int64_t> doubled = f.constParams;
          doubled[name] = value * 2;
          if (std::optional<int64_t> w = evalInt(*a.value, doubled); w && *w > 32) f.warpsLimitedConsts.insert(name);
        }
      }
  if (f.warps == 0) f.warps = 4;  // the language's default
  if (const ast::Decorator* d = kernelDecorator(*kernel); d && d->args)
    for (const ast::Argument& a : *d->args)
      if (a.keyword && *a.keyword == "grid" && a.value && a.value->kind == ast::ExprKind::Tuple)
        f.grid1d = static_cast<const ast::TupleExpr&>(*a.value).elements.size() == 1;

  std::vector<const ast::CallExpr*> calls;
  collectCalls(kernel->body, calls);
  for (const ast::CallExpr* call : calls) {
    std::string name = calleeName(*call);
    if (name == "dot") f.hasDot = true;
    if (name == "shared") {
      f.usesShared = true;
      if (keywordArg(*call, "swizzle")) f.usesSwizzle = true;
    }
    if (name == "copy_async") f.usesCopyAsync = true;
    if (name == "copy_bulk") f.usesCopyBulk = true;
    if (name == "num_programs") f.persistent = true;
    if (name == "pipelined") {
      f.usesPipelined = true;
      if (const ast::Argument* s = keywordArg(*call, "specialize"); s && s->value && s->value->kind == ast::ExprKind::Bool)
        f.specialized = static_cast<const ast::BoolExpr&>(*s->value).value;
    }
    if (name == "zeros")
      if (const ast::Argument* layout = keywordArg(*call, "layout"); layout && asCall(layout->value.get(), "mma"))
        f.usesMmaLayout = true;
  }
  // The operands' dtype: the shared buffers a dot reads, or the tensors an
  // outer-product loop reads.
  for (const ast::CallExpr* dot : dotCalls(*kernel)) {
    const ast::Argument* a = positionalArg(*dot, 0);
    const ast::NameExpr* root = a ? rootName(a->value.get()) : nullptr;
    const ast::CallExpr* decl = root ? sharedDecl(*kernel, root->name) : nullptr;
    const ast::Argument* dtype = decl ? positionalArg(*decl, 0) : nullptr;
    if (const ast::NameExpr* n = dtype ? asName(dtype->value.get()) : nullptr) {
      f.operandDtype = n->name;
      break;
    }
  }
  if (!f.hasDot) {
    std::string why;
    std::optional<ParsedKernel> parsed = parseKernel(source, why);
    if (parsed)
      if (std::optional<OuterProductLoop> loop = findOuterProductLoop(*parsed, why)) {
        f.registerOperands = true;
        if (std::optional<std::string> dt = tensorDtype(*kernel, loop->tensorA)) f.operandDtype = *dt;
      }
  }
  f.usesTensorCoreDtype = f.operandDtype == "bf16" || f.operandDtype == "f16";
  return f;
}

std::vector<std::string> rewriteIds() {
  return {"set_params",     "stage_operands_in_shared", "async_pipeline", "tensor_core_mma",
          "swizzle_shared", "set_stages",               "rasterize_grid", "tma_wgmma", "persistent_tiles"};
}

RewriteResult rewrite(const std::string& rewriteId, const std::string& source, const nlohmann::json& args) {
  using Fn = std::function<RewriteResult(const std::string&, const nlohmann::json&)>;
  static const std::map<std::string, Fn> table = {
      {"set_params", setParams},           {"stage_operands_in_shared", stageOperandsInShared},
      {"async_pipeline", asyncPipeline},   {"tensor_core_mma", tensorCoreMma},
      {"swizzle_shared", swizzleShared},   {"set_stages", setStages},
      {"rasterize_grid", rasterizeGrid},   {"tma_wgmma", tmaWgmma},
      {"persistent_tiles", persistentTiles},
  };
  auto it = table.find(rewriteId);
  if (it == table.end()) return notApplied("unknown rewrite '" + rewriteId + "'");
  try {
    return it->second(source, args);
  } catch (const std::exception& e) {  // a malformed args object (nlohmann throws on type errors)
    return notApplied("bad arguments for " + rewriteId + ": " + e.what());
  }
}

}  // namespace argus::agent
