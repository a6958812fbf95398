// The Hopper rewrites (language.md §7, "Hopper"), for tasks compiled for sm_90a.
//
// tma_wgmma: a tensor-core GEMM pipelined with copy_async (the shape of
// examples/gemm_tc.ag) becomes the shape of examples/gemm_wgmma.ag /
// gemm_nn.ag: TMA copies (copy_bulk) into 128-byte-swizzled stages, issued by
// a producer warpgroup (specialize=True), and a dot that the compiler runs on
// wgmma because the accumulator has no layout and the kernel has BM / 16 warps:
//
//     a_s = shared(bf16, (BM, BK), swizzle=(2, 3, 3))     a_s = shared(bf16, (BM, BK), swizzle=(3, 3, 3))
//     acc = zeros(f32, (BM, BN), layout=mma(...))         acc = zeros(f32, (BM, BN))
//     for kt in pipelined(n, stages=STAGES):              for kt in pipelined(n, stages=STAGES, specialize=True):
//         copy_async(a_s, ...)                                copy_bulk(a_s, ...)
//
// with warps=BM // 16, BK one swizzle span (64 bf16), BM, BN and STAGES from
// the arguments (STAGES lowered until the stages fit shared memory), and the
// const parameters only the old layout and swizzles used (WM, WN, SWA, ...)
// removed.
//
// persistent_tiles: a grid of output tiles becomes one block per SM that
// walks them, so that the producer loads the next tile while the block stores
// this one (examples/gemm_nn.ag):
//
//     @kernel(grid=(G,), ...)                     @kernel(grid=(SMS,), ...)
//     pid = program_id(0)                         for tile in range(program_id(0), G, num_programs(0)):
//     ...                                             pid = tile
//                                                     ...
//
// A 2-D grid (G0, G1) is walked row by row: tile_m = tile // G1 and
// tile_n = tile % G1 take the places of program_id(0) and program_id(1).
#include <bit>

#include "agent/rewrite_internal.h"

namespace argus::agent::detail {

namespace {

constexpr int64_t kSwizzleSpanBytes = 128;            // swizzle=(3, 3, 3): one 128-byte row
constexpr int64_t kSharedBytesPerBlock = 227 * 1024;  // sm_90's opt-in maximum
constexpr int64_t kSharedBytesReserved = 1024;        // the pipeline's mbarriers and alignment

const ast::Argument* decoratorArg(const ast::FunctionDef& fn, const std::string& keyword) {
  const ast::Decorator* deco = kernelDecorator(fn);
  if (!deco || !deco->args) return nullptr;
  for (const ast::Argument& a : *deco->args)
    if (a.keyword && *a.keyword == keyword && a.value) return &a;
  return nullptr;
}

bool isTrue(const ast::Expr* e) { return e && e->kind == ast::ExprKind::Bool && static_cast<const ast::BoolExpr*>(e)->value; }

// The extents of `shared(dtype, (d0, d1))` / `zeros(dtype, (d0, d1))` as written.
std::optional<std::array<const ast::Expr*, 2>> shape2(const ast::CallExpr& call) {
  const ast::Argument* shape = positionalArg(call, 1);
  if (!shape || shape->value->kind != ast::ExprKind::Tuple) return std::nullopt;
  const auto& t = static_cast<const ast::TupleExpr&>(*shape->value);
  if (t.elements.size() != 2) return std::nullopt;
  return std::array<const ast::Expr*, 2>{t.elements[0].get(), t.elements[1].get()};
}

std::string dtypeWord(const ast::CallExpr& call) {
  const ast::Argument* a = positionalArg(call, 0);
  const ast::NameExpr* n = a ? asName(a->value.get()) : nullptr;
  return n ? n->name : "";
}

bool inside(SourceRange inner, uint32_t begin, uint32_t end) { return inner.begin >= begin && inner.end <= end; }

// A GEMM whose dot sits in a pipelined() loop that its leading copies feed.
struct PipelinedGemm {
  const ast::ForStmt* loop = nullptr;
  const ast::CallExpr* pipelined = nullptr;
  std::vector<const ast::CallExpr*> copies;  // the loop's leading copy_async / copy_bulk
  const ast::CallExpr* dot = nullptr;
  const ast::CallExpr* decl[2] = {nullptr, nullptr};  // shared(...) of a and b
  std::string buffer[2];
  const ast::CallExpr* zeros = nullptr;  // the accumulator's zeros(...)
  bool transB = false;
};

// The `NAME = zeros(...)` that makes `acc`, at the top of the kernel or of a loop body.
const ast::CallExpr* accumulatorZeros(const ast::FunctionDef& fn, const std::string& acc) {
  std::vector<const ast::Block*> blocks{&fn.body};
  std::vector<const ast::ForStmt*> loops;
  collectLoops(fn.body, loops);
  for (const ast::ForStmt* l : loops) blocks.push_back(&l->body);
  for (const ast::Block* block : blocks)
    for (const ast::StmtPtr& s : *block) {
      if (s->kind != ast::StmtKind::Assign) continue;
      const auto& a = static_cast<const ast::AssignStmt&>(*s);
      const ast::NameExpr* t = a.targets.size() == 1 ? asName(a.targets[0].get()) : nullptr;
      if (t && t->name == acc)
        if (const ast::CallExpr* z = asCall(a.value.get(), "zeros")) return z;
    }
  return nullptr;
}

std::optional<PipelinedGemm> findPipelinedGemm(const ParsedKernel& p, std::string& whyNot) {
  PipelinedGemm g;
  std::vector<const ast::ForStmt*> loops;
  collectLoops(p.kernel->body, loops);
  for (const ast::ForStmt* loop : loops)
    if (const ast::CallExpr* call = asCall(loop->iter.get(), "pipelined")) {
      if (g.loop) {
        whyNot = "the kernel has more than one pipelined() loop";
        return std::nullopt;
      }
      g.loop = loop;
      g.pipelined = call;
    }
  if (!g.loop) {
    whyNot = "the kernel has no pipelined() loop; pipeline its copies first (async_pipeline)";
    return std::nullopt;
  }
  for (const ast::StmtPtr& s : g.loop->body) {
    const ast::CallExpr* call =
        s->kind == ast::StmtKind::Expr ? asCall(static_cast<const ast::ExprStmt&>(*s).expr.get()) : nullptr;
    std::string name = call ? calleeName(*call) : "";
    if (name != "copy_async" && name != "copy_bulk") break;
    g.copies.push_back(call);
  }
  if (g.copies.empty()) {
    whyNot = "the pipelined() loop does not start with copies into shared buffers";
    return std::nullopt;
  }
  for (const ast::CallExpr* dot : dotCalls(*p.kernel))
    if (inside(dot->range, g.loop->range.begin, blockEnd(*g.loop))) {
      if (g.dot) {
        whyNot = "the pipelined() loop has more than one dot()";
        return std::nullopt;
      }
      g.dot = dot;
    }
  if (!g.dot) {
    whyNot = "the pipelined() loop has no dot()";
    return std::nullopt;
  }
  for (size_t k = 0; k < 2; ++k) {
    const ast::Argument* arg = positionalArg(*g.dot, k);
    const ast::NameExpr* name = arg ? asName(arg->value.get()) : nullptr;
    g.decl[k] = name ? sharedDecl(*p.kernel, name->name) : nullptr;
    if (!g.decl[k]) {
      whyNot = std::string("operand ") + (k ? "b" : "a") + " of the dot is not a whole shared buffer declared in the kernel";
      return std::nullopt;
    }
    g.buffer[k] = name->name;
  }
  const ast::Argument* accArg = positionalArg(*g.dot, 2);
  const ast::NameExpr* acc = accArg ? asName(accArg->value.get()) : nullptr;
  g.zeros = acc ? accumulatorZeros(*p.kernel, acc->name) : nullptr;
  if (!g.zeros) {
    whyNot = "the dot's accumulator is not made by zeros(f32, (BM, BN))";
    return std::nullopt;
  }
  if (const ast::Argument* t = keywordArg(*g.dot, "trans_b")) g.transB = isTrue(t->value.get());
  return g;
}

// The const parameter an extent names, or null (a literal, an expression).
const ast::Param* extentParam(const ParsedKernel& p, const ast::Expr* e) {
  const ast::NameExpr* n = asName(e);
  return n ? constParam(*p.kernel, n->name) : nullptr;
}

Edit setDefault(const ast::Param& param, int64_t value) {
  if (param.defaultValue) return {param.defaultValue->range.begin, param.defaultValue->range.end, std::to_string(value)};
  return {param.range.end, param.range.end, " = " + std::to_string(value)};
}

Edit removeParam(const ast::FunctionDef& fn, size_t index) {
  if (index > 0) return {fn.params[index - 1].range.end, fn.params[index].range.end, ""};
  uint32_t end = fn.params.size() > 1 ? fn.params[1].range.begin : fn.params[0].range.end;
  return {fn.params[0].range.begin, end, ""};
}

Edit removeKeywordArg(const ast::CallExpr& call, const ast::Argument& arg) {
  for (size_t i = 0; i < call.args.size(); ++i) {
    if (&call.args[i] != &arg) continue;
    if (i > 0) return {call.args[i - 1].range.end, arg.range.end, ""};
    uint32_t end = call.args.size() > 1 ? call.args[1].range.begin : arg.range.end;
    return {arg.range.begin, end, ""};
  }
  return {arg.range.begin, arg.range.end, ""};
}

// Every name the kernel reads: its body, its decorator's arguments and its parameters' defaults.
std::vector<const ast::NameExpr*> allNameUses(const ast::FunctionDef& fn) {
  std::vector<const ast::NameExpr*> out;
  collectNames(fn.body, out);
  if (const ast::Decorator* deco = kernelDecorator(fn); deco && deco->args)
    for (const ast::Argument& a : *deco->args) collectNames(a.value.get(), out);
  for (const ast::Param& q : fn.params) {
    collectNames(q.defaultValue.get(), out);
    if (q.annotation && q.annotation->kind == ast::ExprKind::Subscript) collectNames(q.annotation.get(), out);
  }
  return out;
}

}  // namespace

RewriteResult tmaWgmma(const std::string& source, const nlohmann::json& args) {
  int64_t bm = 128, bn = 256, stages = 4;
  if (args.is_object()) {
    bm = args.value("BM", bm);
    bn = args.value("BN", bn);
    stages = args.value("STAGES", stages);
  }
  if (bm != 64 && bm != 128 && bm != 256)
    return notApplied("wgmma gives each warpgroup 64 rows of the accumulator, and tile extents are powers of two: "
                      "BM must be 64, 128 or 256, not " + std::to_string(bm));
  if (bn < 8 || bn > 256 || !std::has_single_bit(static_cast<uint64_t>(bn)))
    return notApplied("wgmma's N is a power of two from 8 to 256 here (tile extents are powers of two), not " +
                      std::to_string(bn));
  if (stages < 2 || stages > 8) return notApplied("a pipeline has 2 to 8 stages, not " + std::to_string(stages));
  std::string why;
  std::optional<ParsedKernel> p = parseKernel(source, why);
  if (!p) return notApplied(why);
  std::optional<PipelinedGemm> g = findPipelinedGemm(*p, why);
  if (!g) return notApplied(why);
  for (const ast::CallExpr* copy : g->copies)
    if (calleeName(*copy) == "copy_bulk") return notApplied("the loop already copies with TMA (copy_bulk)");
  const std::string dtype = dtypeWord(*g->decl[0]);
  if ((dtype != "bf16" && dtype != "f16") || dtypeWord(*g->decl[1]) != dtype)
    return notApplied("wgmma takes bf16 or f16 operands of one type, but the dot reads " + dtype + " and " +
                      dtypeWord(*g->decl[1]));
  const int64_t bk = kSwizzleSpanBytes / 2;
  if (!g->transB && bn % bk != 0)
    return notApplied("B stored (K, N) is read in column panels of " + std::to_string(bk) + ": BN must be a multiple of " +
                      std::to_string(bk) + ", not " + std::to_string(bn));
  // The extents as the shapes name them: acc (M, N), a (M, K), b (K, N) or (N, K) with trans_b.
  auto accShape = shape2(*g->zeros), aShape = shape2(*g->decl[0]), bShape = shape2(*g->decl[1]);
  if (!accShape || !aShape || !bShape) return notApplied("the accumulator and the dot's operands must be 2-D tiles");
  const ast::Expr* bK = g->transB ? (*bShape)[1] : (*bShape)[0];
  const ast::Expr* bN = g->transB ? (*bShape)[0] : (*bShape)[1];
  const ast::Param* mParam = extentParam(*p, (*accShape)[0]);
  const ast::Param* nParam = extentParam(*p, (*accShape)[1]);
  const ast::Param* kParam = extentParam(*p, (*aShape)[1]);
  if (!mParam || !nParam || !kParam)
    return notApplied("the tile extents must be const parameters (BM, BN, BK) for this rewrite to resize them");
  auto same = [&](const ast::Expr* e, const ast::Param* q) { return asName(e) && asName(e)->name == q->name; };
  if (!same((*aShape)[0], mParam) || !same(bN, nParam) || !same(bK, kParam))
    return notApplied("the operand buffers' shapes do not follow the accumulator's: a (" + mParam->name + ", " +
                      kParam->name + ") and b " + (g->transB ? "(N, K)" : "(K, N)") + " expected");
  const int64_t stageBytes = (bm + bn) * bk * 2;
  const int64_t fit = (kSharedBytesPerBlock - kSharedBytesReserved) / stageBytes;
  if (fit < 2) return notApplied("two stages of " + std::to_string(bm) + " x " + std::to_string(bn) + " tiles do not fit shared memory");
  stages = std::min(stages, fit);

  std::vector<Edit> edits;
  std::vector<SourceRange> dropped;  // source whose names no longer count as uses
  for (const ast::CallExpr* copy : g->copies) edits.push_back({copy->callee->range.begin, copy->callee->range.end, "copy_bulk"});
  edits.push_back(setKeywordArg(*p, *g->pipelined, "specialize", "True"));
  const ast::Argument* stagesArg = keywordArg(*g->pipelined, "stages");
  if (!stagesArg) stagesArg = positionalArg(*g->pipelined, 1);
  const ast::Param* stagesParam = stagesArg ? extentParam(*p, stagesArg->value.get()) : nullptr;
  if (stagesParam) edits.push_back(setDefault(*stagesParam, stages));
  else if (stagesArg) edits.push_back({stagesArg->value->range.begin, stagesArg->value->range.end, std::to_string(stages)});
  else edits.push_back(setKeywordArg(*p, *g->pipelined, "stages", std::to_string(stages)));
  for (size_t k = 0; k < 2; ++k) {
    if (k == 1 && g->decl[1] == g->decl[0]) break;
    if (const ast::Argument* sw = keywordArg(*g->decl[k], "swizzle")) dropped.push_back(sw->value->range);
    edits.push_back(setKeywordArg(*p, *g->decl[k], "swizzle", "(3, 3, 3)"));
  }
  if (const ast::Argument* layout = keywordArg(*g->zeros, "layout")) {
    dropped.push_back(layout->range);
    edits.push_back(removeKeywordArg(*g->zeros, *layout));
  }
  const std::string warps = mParam->name + " // 16";
  if (const ast::Argument* w = decoratorArg(*p->kernel, "warps")) {
    dropped.push_back(w->value->range);
    edits.push_back({w->value->range.begin, w->value->range.end, warps});
  } else {
    const ast::Decorator* deco = kernelDecorator(*p->kernel);
    if (!deco->args || deco->args->empty()) return notApplied("the @kernel decorator has no arguments to add warps= to");
    uint32_t at = deco->args->back().range.end;
    edits.push_back({at, at, ", warps=" + warps});
  }
  edits.push_back(setDefault(*mParam, bm));
  edits.push_back(setDefault(*nParam, bn));
  edits.push_back(setDefault(*kParam, bk));
  // The const parameters that only the replaced layout, swizzles and warps used go.
  std::set<std::string> candidates, stillUsed;
  for (const ast::NameExpr* n : allNameUses(*p->kernel)) {
    bool gone = false;
    for (SourceRange r : dropped) gone = gone || inside(n->range, r.begin, r.end);
    (gone ? candidates : stillUsed).insert(n->name);
  }
  std::string removed;
  const ast::Param* resized[] = {mParam, nParam, kParam, stagesParam};
  for (size_t i = 0; i < p->kernel->params.size(); ++i) {
    const ast::Param& q = p->kernel->params[i];
    bool kept = stillUsed.count(q.name) || std::find(std::begin(resized), std::end(resized), &q) != std::end(resized);
    if (!candidates.count(q.name) || kept || !constParam(*p->kernel, q.name)) continue;
    edits.push_back(removeParam(*p->kernel, i));
    removed += (removed.empty() ? "" : ", ") + q.name;
  }
  if (source.find("# arch:") == std::string::npos) {
    uint32_t end = static_cast<uint32_t>(source.size());
    edits.push_back({end, end, std::string(source.empty() || source.back() == '\n' ? "" : "\n") + "# arch: sm_90a\n"});
  }
  return finishRewrite(source, std::move(edits),
                       "TMA copies (copy_bulk) into 128-byte-swizzled stages from a producer warpgroup, dot on wgmma: " +
                           mParam->name + " = " + std::to_string(bm) + ", " + nParam->name + " = " + std::to_string(bn) +
                           ", " + kParam->name + " = " + std::to_string(bk) + ", " + std::to_string(stages) +
                           " stages, warps=" + warps + (removed.empty() ? "" : "; removed " + removed));
}

RewriteResult persistentTiles(const std::string& source, const nlohmann::json& args) {
  int64_t sms = 132;
  if (args.is_object()) sms = args.value("SMS", sms);
  if (sms < 1 || sms > 1024) return notApplied("SMS is the number of blocks, one per multiprocessor: 1 to 1024, not " + std::to_string(sms));
  std::string why;
  std::optional<ParsedKernel> p = parseKernel(source, why);
  if (!p) return notApplied(why);
  const ast::FunctionDef& fn = *p->kernel;
  const ast::Argument* grid = decoratorArg(fn, "grid");
  const size_t rank = grid && grid->value->kind == ast::ExprKind::Tuple
                          ? static_cast<const ast::TupleExpr&>(*grid->value).elements.size()
                          : 0;
  if (rank != 1 && rank != 2) return notApplied("a persistent kernel walks a 1-D or 2-D grid=(...) of tiles");
  const auto& axes = static_cast<const ast::TupleExpr&>(*grid->value).elements;
  std::optional<PipelinedGemm> g = findPipelinedGemm(*p, why);
  if (!g) return notApplied(why);
  const ast::Argument* specialize = keywordArg(*g->pipelined, "specialize");
  if (calleeName(*g->copies.front()) != "copy_bulk" || !isTrue(specialize ? specialize->value.get() : nullptr))
    return notApplied("only a warp-specialized copy_bulk pipeline carries its phases from one tile to the next "
                      "(tma_wgmma first)");
  for (const ast::StmtPtr& s : fn.body)
    if (s->kind == ast::StmtKind::For && static_cast<const ast::ForStmt*>(s.get()) != g->loop)
      return notApplied("the kernel already has a top-level loop; a persistent kernel's tile loop would nest it");
  std::vector<const ast::CallExpr*> calls, pids[2];
  collectCalls(fn.body, calls);
  for (const ast::CallExpr* call : calls) {
    std::string name = calleeName(*call);
    if (name == "num_programs") return notApplied("the kernel already reads num_programs()");
    if (name != "program_id") continue;
    const ast::Argument* axis = positionalArg(*call, 0);
    std::optional<int64_t> v = axis ? evalInt(*axis->value, {}) : std::nullopt;
    if (!v || *v < 0 || static_cast<size_t>(*v) >= rank)
      return notApplied("program_id(" + (axis ? p->slice(*axis->value) : "") + ") is not an axis of the grid");
    pids[*v].push_back(call);
  }
  if (pids[0].empty()) return notApplied("the kernel does not read program_id(0)");
  if (hasName(fn, "SMS")) return notApplied("the kernel already uses the name SMS");

  // Everything after the shared() declarations goes into the tile loop.
  size_t at = 0;
  while (at < fn.body.size() && fn.body[at]->kind == ast::StmtKind::Assign &&
         asCall(static_cast<const ast::AssignStmt&>(*fn.body[at]).value.get(), "shared"))
    ++at;
  if (at == fn.body.size()) return notApplied("the kernel body has nothing after its shared buffers");
  const std::string& text = *p->text;
  const uint32_t begin = lineStartOf(text, fn.body[at]->range.begin);
  const uint32_t end = blockEnd(*fn.body.back());
  for (const auto& axis : pids)
    for (const ast::CallExpr* call : axis)
      if (call->range.begin < begin) return notApplied("a shared buffer declaration reads program_id()");
  const std::string tile = freshName(fn, "tile");
  const std::string ind = indentAt(text, fn.body[at]->range.begin);
  // A 2-D grid's tiles go row by row: consecutive blocks share their A tiles in L2.
  auto grouped = [&](const ast::Expr& e) {
    return e.kind == ast::ExprKind::Name || e.kind == ast::ExprKind::Call || e.kind == ast::ExprKind::Int
               ? p->slice(e) : "(" + p->slice(e) + ")";
  };
  std::string tiles = rank == 1 ? p->slice(*axes[0]) : grouped(*axes[0]) + " * " + grouped(*axes[1]);
  std::string head = ind + "for " + tile + " in range(program_id(0), " + tiles + ", num_programs(0)):\n";
  std::string coordinate[2] = {tile, ""};
  if (rank == 2) {
    coordinate[0] = freshName(fn, "tile_m");
    coordinate[1] = freshName(fn, "tile_n");
    head += ind + "    " + coordinate[0] + " = " + tile + " // " + grouped(*axes[1]) + "\n";
    head += ind + "    " + coordinate[1] + " = " + tile + " % " + grouped(*axes[1]) + "\n";
  }
  std::vector<Edit> edits;
  edits.push_back({grid->value->range.begin, grid->value->range.end, "(SMS,)"});
  edits.push_back({begin, begin, head + "    "});
  for (uint32_t i = begin; i < end; ++i)
    if (text[i] == '\n' && i + 1 < end) edits.push_back({i + 1, i + 1, "    "});
  for (size_t axis = 0; axis < rank; ++axis)
    for (const ast::CallExpr* call : pids[axis]) edits.push_back({call->range.begin, call->range.end, coordinate[axis]});
  edits.push_back(addConstParams(*p, {{"SMS", sms}}));
  return finishRewrite(source, std::move(edits),
                       "persistent: SMS = " + std::to_string(sms) + " blocks walk the " + tiles +
                           " tiles, the producer loading a tile's first stages while the block stores the previous one");
}

}  // namespace argus::agent::detail
