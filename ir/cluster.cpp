// Cluster-uniform values and the multicast copies that need them (see cluster.h).
#include "ir/cluster.h"

#include <unordered_map>
#include <unordered_set>

#include "ir/ops.h"

namespace argus::ir {

namespace {

class Uniformity {
 public:
  explicit Uniformity(const Function& fn) : fn_(fn) {}

  std::vector<ClusterProblem> run() {
    // Values only ever become varying, so repeating the walk until nothing changes
    // settles loop-carried values (a yield may vary only after its loop was walked).
    do {
      changed_ = false;
      walk(fn_.body, nullptr);
    } while (changed_);
    collect(fn_.body, nullptr);
    return std::move(problems_);
  }

 private:
  // `control`: the innermost loop or branch around the block whose bounds or
  // condition vary (null: none).
  void walk(const Block& block, const Op* control) {
    for (const auto& op : block.ops) {
      switch (op->kind) {
        case OpKind::For: walkFor(*op, control); break;
        case OpKind::If: walkIf(*op, control); break;
        default:
          if (control || anyVarying(op->operands) || isVaryingSource(*op))
            for (ValueId r : op->results) mark(r, op.get());
      }
    }
  }

  void walkFor(const Op& loop, const Op* control) {
    const ForOp forOp(loop);
    const Op* inner = control;
    if (!inner && (varying(forOp.lowerBound()) || varying(forOp.upperBound()) || varying(forOp.step())))
      inner = &loop;
    const Block& body = loop.regions[0];
    if (inner) mark(body.args[0], inner);
    const Op* yield = body.ops.empty() ? nullptr : body.ops.back().get();
    for (size_t i = 1; i < body.args.size(); ++i) {
      const ValueId init = loop.operands[2 + i];
      const bool yielded = yield && yield->kind == OpKind::Yield && i - 1 < yield->operands.size() &&
                           varying(yield->operands[i - 1]);
      if (inner || varying(init) || yielded) {
        mark(body.args[i], inner ? inner : &loop);
        if (i - 1 < loop.results.size()) mark(loop.results[i - 1], inner ? inner : &loop);
      }
    }
    walk(body, inner);
  }

  void walkIf(const Op& branch, const Op* control) {
    const Op* inner = control ? control : varying(IfOp(branch).condition()) ? &branch : nullptr;
    for (const Block& region : branch.regions) {
      walk(region, inner);
      const Op* yield = region.ops.empty() ? nullptr : region.ops.back().get();
      if (!yield || yield->kind != OpKind::Yield) continue;
      for (size_t i = 0; i < yield->operands.size() && i < branch.results.size(); ++i)
        if (inner || varying(yield->operands[i])) mark(branch.results[i], inner ? inner : &branch);
    }
  }

  // program_id(0) differs between the blocks of a cluster; program_id(0) // k, k a
  // multiple of the cluster size, is the cluster's index scaled and does not.
  bool isVaryingSource(const Op& op) const {
    auto pid = as<ProgramIdOp>(op);
    return pid && pid->axis() == 0;
  }
  bool clusterIndex(const Op& op) const {
    auto div = as<BinaryOp>(op);
    if (!div || div->binaryKind() != BinaryKind::Div) return false;
    const Op* x = fn_.values[div->lhs()].def;
    std::optional<int64_t> k = constantInt(fn_, div->rhs());
    return x && isVaryingSource(*x) && k && *k > 0 && *k % fn_.clusterSize == 0;
  }

  bool anyVarying(const std::vector<ValueId>& values) const {
    for (ValueId v : values)
      if (varying(v)) return true;
    return false;
  }
  bool varying(ValueId v) const { return cause_.count(v) != 0; }
  void mark(ValueId v, const Op* why) {
    if (v == kNoValue || varying(v)) return;
    const Op* def = fn_.values[v].def;
    if (def && clusterIndex(*def)) return;
    cause_[v] = why;
    changed_ = true;
  }

  void collect(const Block& block, const Op* control) {
    for (const auto& op : block.ops) {
      if (auto copy = as<CopyBulkOp>(*op); copy && copy->multicast()) check(*op, control);
      const Op* inner = control;
      if (!inner && op->kind == OpKind::For) {
        const ForOp forOp(*op);
        if (varying(forOp.lowerBound()) || varying(forOp.upperBound()) || varying(forOp.step())) inner = op.get();
      }
      if (!inner && op->kind == OpKind::If && varying(IfOp(*op).condition())) inner = op.get();
      for (const Block& region : op->regions) collect(region, inner);
    }
  }

  void check(const Op& copy, const Op* control) {
    if (control) {
      const bool loop = control->kind == OpKind::For;
      // `control` is a For or an If (collect sets nothing else).
      const std::vector<ValueId> from = loop ? control->operands : std::vector<ValueId>{IfOp(*control).condition()};
      problems_.push_back({copy.range, control->range,
                           std::string(loop ? "the loop around it may run a different number of iterations"
                                            : "the branch around it may go another way") +
                               " in each block of the cluster, as its " + (loop ? "bounds depend" : "condition depends") +
                               " on " + origin(from)});
      return;
    }
    if (copy.operands.size() < 2) return;
    const ValueId src = CopyBulkOp(copy).src();
    if (!varying(src)) return;
    std::string named = namedVarying(src);
    SourceRange where = rootRange(src);
    problems_.push_back({copy.range, where,
                         "the source tile" + (named.empty() ? std::string() : " depends on '" + named + "', which") +
                             " is computed from " + origin({src})});
  }

  // Visits the varying values `v` is computed from (itself first), depth first, until
  // `visit` returns true.
  template <typename Visit>
  void walkBack(ValueId v, const Visit& visit) const {
    std::unordered_set<ValueId> seen;
    std::vector<ValueId> work{v};
    while (!work.empty()) {
      ValueId x = work.back();
      work.pop_back();
      if (!varying(x) || !seen.insert(x).second) continue;
      if (visit(x)) return;
      if (const Op* def = fn_.values[x].def)
        for (ValueId o : def->operands) work.push_back(o);
    }
  }

  // The first user-named varying value on the way from `v` to where it starts to vary.
  std::string namedVarying(ValueId v) const {
    std::string name;
    walkBack(v, [&](ValueId x) {
      name = fn_.values[x].name;
      return !name.empty();
    });
    return name;
  }

  // Where a varying value starts: program_id(0), or the loop or branch that made it vary.
  const Op* root(ValueId v) const {
    const Op* found = nullptr;
    walkBack(v, [&](ValueId x) {
      const Op* def = fn_.values[x].def;
      if (def && isVaryingSource(*def)) found = def;
      else if (!def || (!anyVarying(def->operands) && def->kind != OpKind::For && def->kind != OpKind::If))
        found = cause_.at(x);
      return found != nullptr;
    });
    return found;
  }
  SourceRange rootRange(ValueId v) const {
    const Op* r = root(v);
    return r ? r->range : fn_.values[v].range;
  }
  std::string origin(const std::vector<ValueId>& values) const {
    for (ValueId v : values) {
      if (!varying(v)) continue;
      const Op* r = root(v);
      if (r && r->kind == OpKind::ProgramId)
        return "program_id(0), which differs between the blocks of a cluster (program_id(0) // " +
               std::to_string(fn_.clusterSize) + " is the same in all of them)";
      if (r && r->kind == OpKind::For) return "the iterations of a loop whose bounds differ between the blocks";
      if (r && r->kind == OpKind::If) return "a branch whose condition differs between the blocks";
    }
    return "values that may differ between the blocks of a cluster";
  }

  const Function& fn_;
  std::unordered_map<ValueId, const Op*> cause_;  // varying values: the op that makes them vary
  bool changed_ = false;
  std::vector<ClusterProblem> problems_;
};

}  // namespace

std::vector<ClusterProblem> findClusterProblems(const Function& fn) {
  if (fn.clusterSize < 2) return {};
  return Uniformity(fn).run();
}

void checkClusters(Module& module, DiagnosticSink& diags) {
  for (auto& fn : module.functions) {
    if (!fn) continue;
    std::vector<ClusterProblem> problems = findClusterProblems(*fn);
    for (const ClusterProblem& p : problems)
      diags.report(DiagId::MulticastSourceVaries, p.copy, {p.why}).labels.push_back({p.cause, "differs between the blocks of a cluster"});
    if (!problems.empty()) fn.reset();
  }
  std::erase(module.functions, nullptr);
}

}  // namespace argus::ir
