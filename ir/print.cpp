// The textual form of the Tile IR (`--emit=ir`, `argusc opt`, golden tests). Lossless but for
// source ranges: ir/parse.h reads it back (a test round-trips every example). Stable: change
// it only together with the goldens and the parser.
//
//   kernel @vadd(%x.0: tensor<f32, [N]>, ..., %N.3: i32 size)
//       grid (cdiv(N, 1024), 1, 1) warps 4
//       const BLOCK = 1024
//       require N <= 1024  "N <= BLOCK"
//   {
//     %4 = program_id 0 : i32  // 6:9
//     %5 = for %i.6 = %1 to %2 step %3 iter_args(%acc.7 = %4) -> (f32) {
//       yield %8
//     }
//   }
#include <charconv>
#include <string>

#include "ir/ir.h"
#include "ir/ops.h"

namespace argus::ir {

namespace {

std::string formatFloat(double v, DType t) {
  char buf[64];
  std::to_chars_result r = (t == DType::F64) ? std::to_chars(buf, buf + sizeof buf, v)
                                             : std::to_chars(buf, buf + sizeof buf, static_cast<float>(v));
  std::string s(buf, r.ptr);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // "n": inf / nan stay as they are
  return s;
}

// A string literal the IR parser reads back: quotes, backslashes and line breaks escaped.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') out += "\\n";
    else out += c;
  }
  return out + "\"";
}

class Printer {
 public:
  Printer(const Function& fn, const SourceFile* file) : fn_(fn), file_(file) {}

  std::string run() {
    header();
    out_ += "{\n";
    for (const auto& op : fn_.body.ops) printOp(*op, 1);
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  const Function& fn_;
  const SourceFile* file_;
  std::string out_;

  std::string name(ValueId id) const {
    if (id >= fn_.values.size()) return "%<invalid>";
    const Value& v = fn_.values[id];
    return "%" + (v.name.empty() ? "" : v.name + ".") + std::to_string(id);
  }

  std::string typeOf(ValueId id) const { return id < fn_.values.size() ? fn_.values[id].type.str() : "?"; }

  std::string list(const std::vector<ValueId>& ids, size_t from = 0, size_t to = SIZE_MAX) const {
    std::string s;
    for (size_t i = from; i < ids.size() && i < to; ++i) s += (i > from ? ", " : "") + name(ids[i]);
    return s;
  }

  std::string location(SourceRange range) const {
    if (!file_) return "";
    LineCol lc = file_->lineCol(range.begin);
    return "  // " + std::to_string(lc.line) + ":" + std::to_string(lc.column);
  }

  std::string paramType(const Param& p) const {
    switch (p.kind) {
      case ParamKind::Tensor: {
        std::string s = std::string("tensor<") + dtypeName(p.dtype) + ", [";
        for (size_t d = 0; d < p.dims.size(); ++d) {
          if (d) s += ", ";
          const DimRef& dim = p.dims[d];
          if (dim.constant >= 0) s += std::to_string(dim.constant);
          else if (dim.sizeIndex >= 0 && static_cast<size_t>(dim.sizeIndex) < fn_.sizeNames.size())
            s += fn_.sizeNames[static_cast<size_t>(dim.sizeIndex)];
          else s += "?";
        }
        return s + "]>";
      }
      case ParamKind::Size: return std::string(dtypeName(p.dtype)) + " size";
      case ParamKind::Scalar: return dtypeName(p.dtype);
    }
    return "?";
  }

  void header() {
    out_ += "kernel @" + fn_.name + "(";
    for (size_t i = 0; i < fn_.params.size(); ++i) {
      const Param& p = fn_.params[i];
      if (i) out_ += ", ";
      out_ += (p.value != kNoValue ? name(p.value) : "%" + p.name) + ": " + paramType(p);
      if (p.defaultValue) out_ += " = " + formatFloat(*p.defaultValue, DType::F64);
    }
    out_ += ")\n    grid (";
    for (int axis = 0; axis < 3; ++axis) out_ += (axis ? ", " : "") + fn_.grid[axis].str(fn_.sizeNames);
    out_ += ") warps " + std::to_string(fn_.numWarps);
    if (fn_.producerWarps) out_ += " producer_warps " + std::to_string(fn_.producerWarps);
    if (fn_.clusterSize != 1) out_ += " cluster " + std::to_string(fn_.clusterSize);
    out_ += "\n";
    for (const auto& [constName, value] : fn_.constants)
      out_ += "    const " + constName + " = " + std::to_string(value) + "\n";
    for (const Requirement& r : fn_.requirements) {
      out_ += "    require " + r.condition.str(fn_.sizeNames);
      if (!r.text.empty()) out_ += "  " + quoted(r.text);
      out_ += location(r.range) + "\n";
    }
  }

  void indent(int depth) { out_.append(static_cast<size_t>(depth) * 2, ' '); }

  std::string resultTypes(const Op& op) const {
    std::string s;
    for (size_t i = 0; i < op.results.size(); ++i) s += (i ? ", " : "") + typeOf(op.results[i]);
    return s;
  }

  // The text between "= " and " : type" for ops without regions.
  std::string body(const Op& op) const {
    std::string operands = list(op.operands);
    switch (op.kind) {
      case OpKind::Const: {
        const ConstOp constant(op);
        DType t = op.results.empty() ? constant.dtype() : fn_.values[op.results[0]].type.dtype;
        if (t == DType::Bool) return std::string("const ") + (constant.intValue() ? "true" : "false");
        if (isFloat(t)) return "const " + formatFloat(constant.floatValue(), t);
        return "const " + std::to_string(constant.intValue());
      }
      case OpKind::ProgramId: case OpKind::NumPrograms: case OpKind::Iota:
        return std::string(opKindName(op.kind)) + " " +
               std::to_string(op.kind == OpKind::Iota ? IotaOp(op).axis() : gridAxisOf(op));
      case OpKind::Binary: return std::string(binaryKindName(BinaryOp(op).binaryKind())) + " " + operands;
      case OpKind::Compare: return std::string("cmp ") + cmpKindName(CompareOp(op).cmpKind()) + " " + operands;
      case OpKind::Unary: return std::string(unaryKindName(UnaryOp(op).unaryKind())) + " " + operands;
      case OpKind::Reduce:
        return std::string("reduce ") + reduceKindName(ReduceOp(op).reduceKind()) + " " + operands + ", axis " +
               std::to_string(ReduceOp(op).axis());
      case OpKind::ReduceAll: return std::string("reduce_all ") + reduceKindName(ReduceAllOp(op).reduceKind()) + " " + operands;
      case OpKind::AllocShared: case OpKind::CommitGroup: return opKindName(op.kind);
      case OpKind::Barrier: return BarrierOp(op).afterMbarrierInit() ? "barrier after_mbarrier_init" : "barrier";
      case OpKind::WaitGroup: return "wait_group " + std::to_string(WaitGroupOp(op).pending());
      case OpKind::MbarrierInit:
        return "mbarrier_init " + operands + ", count " + std::to_string(MbarrierInitOp(op).arrivals()) +
               (MbarrierInitOp(op).clusterRelease() ? ", cluster_release" : "");
      case OpKind::MbarrierArrive:
        return "mbarrier_arrive " + operands + (MbarrierArriveOp(op).clusterRelease() ? ", cluster_release" : "");
      case OpKind::MbarrierExpectTx:
        return "mbarrier_expect_tx " + operands + ", bytes " + std::to_string(MbarrierExpectTxOp(op).bytes());
      case OpKind::CopyBulk: return "copy_bulk " + operands + (CopyBulkOp(op).multicast() ? ", multicast" : "");
      case OpKind::View:
        return "view " + (op.operands.empty() ? std::string("?") : name(ViewOp(op).base())) + "[" + list(op.operands, 1) + "]";
      case OpKind::Load: {
        const LoadOp load(op);
        if (op.operands.size() == 2) return "load " + name(load.view()) + ", other " + name(load.other());
        return "load " + operands;
      }
      case OpKind::TagSet:
        return "tag " + TagSetOp(op).tagName() + " " + operands;
      case OpKind::Assert: return "assert [" + operands + "] " + assertCondition(op);
      case OpKind::Dot:
        return std::string("dot ") + operands + (DotOp(op).transB() ? ", trans_b" : "") +
               (DotOp(op).wgmmaInFlight() ? ", wgmma_in_flight" : "");
      default:
        return std::string(opKindName(op.kind)) + (operands.empty() ? "" : " " + operands);
    }
  }

  // The postfix condition of an Assert in infix: `(%3.origin[1] div 16) eq %kt`.
  std::string assertCondition(const Op& op) const {
    const AssertOp assertion(op);
    const std::vector<int64_t>& code = assertion.code();
    const std::vector<std::string>& names = assertion.names();
    std::vector<std::string> stack;
    auto operandName = [&](int64_t k) {
      return k >= 0 && static_cast<size_t>(k) < op.operands.size() ? name(op.operands[static_cast<size_t>(k)]) : std::string("?");
    };
    auto pop = [&] {
      if (stack.empty()) return std::string("?");
      std::string top = stack.back();
      stack.pop_back();
      return top;
    };
    for (size_t pc = 0; pc < code.size();) {
      auto arg = [&](size_t i) { return pc + i < code.size() ? code[pc + i] : int64_t{-1}; };
      switch (static_cast<AssertCode>(code[pc])) {
        case AssertCode::Const: stack.push_back(std::to_string(arg(1))); pc += 2; break;
        case AssertCode::Scalar: stack.push_back(operandName(arg(1))); pc += 2; break;
        case AssertCode::Tag: {
          int64_t n = arg(2);
          std::string tagName = n >= 0 && static_cast<size_t>(n) < names.size() ? names[static_cast<size_t>(n)] : "?";
          std::string s = operandName(arg(1)) + "." + tagName;
          if (arg(3) >= 0) s += "[" + std::to_string(arg(3)) + "]";
          stack.push_back(s);
          pc += 4;
          break;
        }
        case AssertCode::Binary: case AssertCode::Compare: {
          std::string y = pop(), x = pop();
          bool binary = static_cast<AssertCode>(code[pc]) == AssertCode::Binary;
          std::string opName = binary ? binaryKindName(static_cast<BinaryKind>(arg(1))) : cmpKindName(static_cast<CmpKind>(arg(1)));
          stack.push_back("(" + x + " " + opName + " " + y + ")");
          pc += 2;
          break;
        }
        case AssertCode::And: case AssertCode::Or: {
          std::string y = pop(), x = pop();
          stack.push_back("(" + x + (static_cast<AssertCode>(code[pc]) == AssertCode::And ? " and " : " or ") + y + ")");
          pc += 1;
          break;
        }
        case AssertCode::Not: stack.push_back("not " + pop()); pc += 1; break;
        case AssertCode::Neg: stack.push_back("-" + pop()); pc += 1; break;
        default: return "?";
      }
    }
    std::string out = stack.empty() ? "?" : stack.back();
    if (!names.empty() && !names[0].empty()) out += "  " + quoted(names[0]);
    return out;
  }

  void printRegion(const Block& block, int depth) {
    for (const auto& op : block.ops) printOp(*op, depth);
  }

  void printOp(const Op& op, int depth) {
    indent(depth);
    if (!op.results.empty()) out_ += list(op.results) + " = ";
    if (op.kind == OpKind::For) return printFor(op, depth);
    if (op.kind == OpKind::If) return printIf(op, depth);
    out_ += body(op);
    if (!op.results.empty()) out_ += " : " + resultTypes(op);
    out_ += location(op.range) + "\n";
  }

  void printFor(const Op& op, int depth) {
    const Block* region = op.regions.empty() ? nullptr : &op.regions[0];
    std::string iv = region && !region->args.empty() ? name(region->args[0]) : "%?";
    const ForOp loop(op);
    out_ += "for " + iv + " = " + (op.operands.size() > 0 ? name(loop.lowerBound()) : "?") + " to " +
            (op.operands.size() > 1 ? name(loop.upperBound()) : "?") + " step " +
            (op.operands.size() > 2 ? name(loop.step()) : "?");
    if (const int64_t stages = loop.stages()) out_ += " stages " + std::to_string(stages);
    if (loop.specialize()) out_ += " specialize";
    if (op.operands.size() > 3) {
      out_ += " iter_args(";
      for (size_t i = 3; i < op.operands.size(); ++i) {
        std::string arg = region && i - 2 < region->args.size() ? name(region->args[i - 2]) : "%?";
        out_ += (i > 3 ? ", " : "") + arg + " = " + name(op.operands[i]);
      }
      out_ += ")";
    }
    if (!op.results.empty()) out_ += " -> (" + resultTypes(op) + ")";
    out_ += " {" + location(op.range) + "\n";
    if (region) printRegion(*region, depth + 1);
    indent(depth);
    out_ += "}\n";
  }

  void printIf(const Op& op, int depth) {
    out_ += "if " + list(op.operands) + (IfOp(op).producer() ? " producer" : "");
    if (!op.results.empty()) out_ += " -> (" + resultTypes(op) + ")";
    out_ += " {" + location(op.range) + "\n";
    if (!op.regions.empty()) printRegion(op.regions[0], depth + 1);
    indent(depth);
    out_ += "} else {\n";
    if (op.regions.size() > 1) printRegion(op.regions[1], depth + 1);
    indent(depth);
    out_ += "}\n";
  }
};

}  // namespace

std::string print(const Function& fn, const SourceFile* file) { return Printer(fn, file).run(); }

std::string print(const Module& module, const SourceFile* file) {
  std::string out;
  for (size_t i = 0; i < module.functions.size(); ++i) {
    if (!module.functions[i]) continue;
    if (!out.empty()) out += "\n";
    out += print(*module.functions[i], file);
  }
  return out;
}

}  // namespace argus::ir
