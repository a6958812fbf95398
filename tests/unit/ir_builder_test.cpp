#include <gtest/gtest.h>

#include "ir/ir.h"
#include "ir/ops.h"

namespace argus::ir {
namespace {

Attrs binaryAttrs(BinaryKind k) {
  Attrs a;
  argus::ir::BinaryAttrs(a).binaryKind(k);
  return a;
}

LaunchExpr constExpr(int64_t v) { return LaunchExpr{LaunchExpr::Kind::Const, v, {}}; }
LaunchExpr sizeExpr(int64_t index) { return LaunchExpr{LaunchExpr::Kind::Size, index, {}}; }
LaunchExpr binExpr(LaunchExpr::Kind k, LaunchExpr a, LaunchExpr b) { return LaunchExpr{k, 0, {std::move(a), std::move(b)}}; }

// vadd over N elements in tiles of 1024.
std::unique_ptr<Function> makeVadd() {
  auto fn = std::make_unique<Function>();
  fn->name = "vadd";
  fn->sizeNames = {"N"};
  fn->grid[0] = binExpr(LaunchExpr::Kind::CeilDiv, sizeExpr(0), constExpr(1024));
  fn->grid[1] = constExpr(1);
  fn->grid[2] = constExpr(1);
  fn->constants = {{"BLOCK", 1024}};
  Builder b(*fn, &fn->body);
  for (const char* name : {"x", "y", "out"}) {
    Param p{ParamKind::Tensor, name, DType::F32, {DimRef{-1, 0}}, kNoValue, {}, {}};
    p.value = b.addBlockArg(fn->body, Type::tensor(DType::F32, {-1}), name);
    fn->params.push_back(p);
  }
  Param n{ParamKind::Size, "N", DType::I32, {}, kNoValue, {}, {}};
  n.value = b.addBlockArg(fn->body, Type::scalar(DType::I32), "N");
  fn->params.push_back(n);

  Attrs axis0;
  ValueId pid = b.make(OpKind::ProgramId, {}, Type::scalar(DType::I32), {10, 20}, axis0);
  ValueId block = b.constInt(1024, DType::I32, {30, 34});
  ValueId offset = b.make(OpKind::Binary, {pid, block}, Type::scalar(DType::I32), {40, 50}, binaryAttrs(BinaryKind::Mul));
  Type view = Type::view(MemSpace::Global, DType::F32, {1024});
  Type tile = Type::tile(DType::F32, Layout::canonical({1024}));
  ValueId vx = b.make(OpKind::View, {fn->params[0].value, offset}, view, {});
  ValueId a = b.make(OpKind::Load, {vx}, tile, {});
  fn->values[a].name = "a";
  ValueId vy = b.make(OpKind::View, {fn->params[1].value, offset}, view, {});
  ValueId c = b.make(OpKind::Load, {vy}, tile, {});
  ValueId sum = b.make(OpKind::Binary, {a, c}, tile, {}, binaryAttrs(BinaryKind::Add));
  ValueId vo = b.make(OpKind::View, {fn->params[2].value, offset}, view, {});
  b.create(OpKind::Store, {vo, sum}, {}, {});
  return fn;
}

TEST(Builder, ValuesAndResults) {
  auto fn = makeVadd();
  EXPECT_EQ(fn->body.args.size(), 4u);
  EXPECT_EQ(fn->values[fn->body.args[0]].def, nullptr);
  const Op& load = *fn->body.ops[4];
  EXPECT_EQ(load.kind, OpKind::Load);
  EXPECT_EQ(fn->values[load.results[0]].def, &load);
  EXPECT_EQ(fn->values[load.results[0]].resultIndex, 0u);
}

TEST(Verify, AcceptsVadd) {
  auto fn = makeVadd();
  EXPECT_EQ(verify(*fn), std::vector<std::string>{});
}

TEST(Print, Vadd) {
  auto fn = makeVadd();
  SourceFile file("vadd.ag", "0123456789\n0123456789\n0123456789\n0123456789\n0123456789\n");
  EXPECT_EQ(print(*fn, &file),
            "kernel @vadd(%x.0: tensor<f32, [N]>, %y.1: tensor<f32, [N]>, %out.2: tensor<f32, [N]>, %N.3: i32 size)\n"
            "    grid (cdiv(N, 1024), 1, 1) warps 4\n"
            "    const BLOCK = 1024\n"
            "{\n"
            "  %4 = program_id 0 : i32  // 1:11\n"
            "  %5 = const 1024 : i32  // 3:9\n"
            "  %6 = mul %4, %5 : i32  // 4:8\n"
            "  %7 = view %x.0[%6] : view<global, f32, [1024]>  // 1:1\n"
            "  %a.8 = load %7 : tile<f32, [1024], #blocked<[1024]>>  // 1:1\n"
            "  %9 = view %y.1[%6] : view<global, f32, [1024]>  // 1:1\n"
            "  %10 = load %9 : tile<f32, [1024], #blocked<[1024]>>  // 1:1\n"
            "  %11 = add %a.8, %10 : tile<f32, [1024], #blocked<[1024]>>  // 1:1\n"
            "  %12 = view %out.2[%6] : view<global, f32, [1024]>  // 1:1\n"
            "  store %12, %11  // 1:1\n"
            "}\n");
}

TEST(Verify, RejectsMismatchedBinaryOperands) {
  auto fn = makeVadd();
  Builder b(*fn, &fn->body);
  ValueId f = b.constFloat(1.0, DType::F32, {77, 78});
  ValueId i = b.constInt(1, DType::I32);
  b.make(OpKind::Binary, {f, i}, Type::scalar(DType::F32), {80, 81}, binaryAttrs(BinaryKind::Add));
  auto errors = verify(*fn);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("binary at offset 80"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("expected f32"), std::string::npos) << errors[0];
}

TEST(Verify, RejectsLoadWithWrongLayoutAndBadStore) {
  auto fn = makeVadd();
  Builder b(*fn, &fn->body);
  ValueId zero = b.constInt(0, DType::I32);
  ValueId v = b.make(OpKind::View, {fn->params[0].value, zero}, Type::view(MemSpace::Global, DType::F32, {64}), {});
  b.make(OpKind::Load, {v}, Type::tile(DType::F32, Layout::canonical({128})), {5, 6});
  ValueId t = b.make(OpKind::Splat, {b.constFloat(0, DType::F32)}, Type::tile(DType::F32, Layout::canonical({32})), {});
  b.create(OpKind::Store, {v, t}, {}, {7, 8});
  auto errors = verify(*fn);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0].find("load at offset 5"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("store at offset 7"), std::string::npos) << errors[1];
}

TEST(Verify, RejectsUseBeforeDefinition) {
  auto fn = makeVadd();
  // Move the last op (the store) to the front: it uses values defined later.
  auto store = std::move(fn->body.ops.back());
  fn->body.ops.pop_back();
  fn->body.ops.insert(fn->body.ops.begin(), std::move(store));
  auto errors = verify(*fn);
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors[0].find("not defined before this point"), std::string::npos) << errors[0];
}

// Row softmax-like reduction: max along axis 1, broadcast back, subtract.
TEST(Verify, ReduceAndBroadcastRules) {
  Function fn;
  fn.name = "rows";
  Builder b(fn, &fn.body);
  Type tile = Type::tile(DType::F32, Layout::canonical({4, 1024}));
  ValueId x = b.make(OpKind::Splat, {b.constFloat(1.5, DType::F32)}, tile, {});
  Attrs red;
  argus::ir::ReduceAttrs(red).reduceKind(ReduceKind::Max);
  argus::ir::ReduceAttrs(red).axis(1);
  Type reduced = Type::tile(DType::F32, Layout{{4, 1024}, 0b10});
  ValueId m = b.make(OpKind::Reduce, {x}, reduced, {}, red);
  ValueId mb = b.make(OpKind::Broadcast, {m}, tile, {});
  b.make(OpKind::Binary, {x, mb}, tile, {}, binaryAttrs(BinaryKind::Sub));
  Attrs all;
  argus::ir::ReduceAllAttrs(all).reduceKind(ReduceKind::Sum);
  b.make(OpKind::ReduceAll, {x}, Type::scalar(DType::F32), {}, all);
  EXPECT_EQ(verify(fn), std::vector<std::string>{});
  EXPECT_EQ(print(fn),
            "kernel @rows()\n"
            "    grid (0, 0, 0) warps 4\n"
            "{\n"
            "  %0 = const 1.5 : f32\n"
            "  %1 = splat %0 : tile<f32, [4, 1024], #blocked<[4, 1024]>>\n"
            "  %2 = reduce max %1, axis 1 : tile<f32, [4, 1], #blocked<[4, 1024], reduced=[1]>>\n"
            "  %3 = broadcast %2 : tile<f32, [4, 1024], #blocked<[4, 1024]>>\n"
            "  %4 = sub %1, %3 : tile<f32, [4, 1024], #blocked<[4, 1024]>>\n"
            "  %5 = reduce_all sum %1 : f32\n"
            "}\n");

  // A broadcast that "un-reduces" nothing but reduces a new axis is wrong.
  Builder b2(fn, &fn.body);
  b2.make(OpKind::Broadcast, {x}, reduced, {9, 9});
  // A reduce whose result forgets the reduced axis is wrong.
  b2.make(OpKind::Reduce, {x}, tile, {11, 11}, red);
  auto errors = verify(fn);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0].find("broadcast at offset 9"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("reduce at offset 11"), std::string::npos) << errors[1];
}

// sum = 0; for i in range(0, n, 1): sum = sum + f32(i)
struct LoopKernel {
  Function fn;
  Op* loop = nullptr;
  ValueId yielded = kNoValue;
};

void buildLoop(LoopKernel& k) {
  Function& fn = k.fn;
  fn.name = "loop";
  fn.grid[0] = fn.grid[1] = fn.grid[2] = constExpr(1);
  Builder b(fn, &fn.body);
  ValueId lb = b.constInt(0, DType::I32);
  ValueId ub = b.constInt(10, DType::I32);
  ValueId step = b.constInt(1, DType::I32);
  ValueId init = b.constFloat(0.0, DType::F32);
  fn.values[init].name = "acc";
  Op& loop = b.create(OpKind::For, {lb, ub, step, init}, {Type::scalar(DType::F32)}, {});
  k.loop = &loop;
  Block& body = loop.regions[0];
  ValueId iv = b.addBlockArg(body, Type::scalar(DType::I32), "i");
  ValueId acc = b.addBlockArg(body, Type::scalar(DType::F32), "acc");
  Builder inner(fn, &body);
  Attrs cast;
  argus::ir::CastAttrs(cast).to(DType::F32);
  ValueId f = inner.make(OpKind::Cast, {iv}, Type::scalar(DType::F32), {}, cast);
  k.yielded = inner.make(OpKind::Binary, {acc, f}, Type::scalar(DType::F32), {}, binaryAttrs(BinaryKind::Add));
  inner.create(OpKind::Yield, {k.yielded}, {}, {});
  fn.values[loop.results[0]].name = "acc";
}

TEST(Verify, ForLoopWithIterArgs) {
  LoopKernel k;
  buildLoop(k);
  EXPECT_EQ(verify(k.fn), std::vector<std::string>{});
  EXPECT_EQ(print(k.fn),
            "kernel @loop()\n"
            "    grid (1, 1, 1) warps 4\n"
            "{\n"
            "  %0 = const 0 : i32\n"
            "  %1 = const 10 : i32\n"
            "  %2 = const 1 : i32\n"
            "  %acc.3 = const 0.0 : f32\n"
            "  %acc.4 = for %i.5 = %0 to %1 step %2 iter_args(%acc.6 = %acc.3) -> (f32) {\n"
            "    %7 = cast %i.5 : f32\n"
            "    %8 = add %acc.6, %7 : f32\n"
            "    yield %8\n"
            "  }\n"
            "}\n");
}

TEST(Verify, ForLoopErrors) {
  LoopKernel k;
  buildLoop(k);
  // Yield an i32 where the loop carries an f32.
  k.loop->regions[0].ops.back()->operands[0] = k.loop->regions[0].args[0];
  auto errors = verify(k.fn);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("yields i32 for result 0 of type f32"), std::string::npos) << errors[0];

  LoopKernel k2;
  buildLoop(k2);
  k2.loop->regions[0].ops.pop_back();  // no terminator
  errors = verify(k2.fn);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("does not end in yield"), std::string::npos) << errors[0];

  LoopKernel k3;
  buildLoop(k3);
  // Use a loop-body value after the loop: not dominated.
  Builder b(k3.fn, &k3.fn.body);
  b.make(OpKind::Unary, {k3.yielded}, Type::scalar(DType::F32), {}, Attrs{});
  errors = verify(k3.fn);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("not defined before this point"), std::string::npos) << errors[0];
}

TEST(Verify, IfRegions) {
  Function fn;
  fn.name = "branch";
  fn.grid[0] = fn.grid[1] = fn.grid[2] = constExpr(1);
  Builder b(fn, &fn.body);
  ValueId cond = b.constBool(true);
  ValueId notBool = b.constInt(7, DType::I32);
  Op& branch = b.create(OpKind::If, {cond}, {Type::scalar(DType::I32)}, {});
  Builder thenB(fn, &branch.regions[0]);
  thenB.create(OpKind::Yield, {thenB.constInt(1, DType::I32)}, {}, {});
  Builder elseB(fn, &branch.regions[1]);
  elseB.create(OpKind::Yield, {elseB.constInt(2, DType::I32)}, {}, {});
  EXPECT_EQ(verify(fn), std::vector<std::string>{});
  EXPECT_EQ(print(fn),
            "kernel @branch()\n"
            "    grid (1, 1, 1) warps 4\n"
            "{\n"
            "  %0 = const true : bool\n"
            "  %1 = const 7 : i32\n"
            "  %2 = if %0 -> (i32) {\n"
            "    %3 = const 1 : i32\n"
            "    yield %3\n"
            "  } else {\n"
            "    %4 = const 2 : i32\n"
            "    yield %4\n"
            "  }\n"
            "}\n");

  // A non-bool condition and a yield of the wrong type.
  branch.operands[0] = notBool;
  branch.regions[1].ops.back()->operands[0] = cond;
  auto errors = verify(fn);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0].find("condition %1 has type i32, expected bool"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("else region yields bool"), std::string::npos) << errors[1];
}

TEST(Verify, DotShapes) {
  Function fn;
  fn.name = "mm";
  Builder b(fn, &fn.body);
  ValueId zero = b.constInt(0, DType::I32);
  ValueId as = b.make(OpKind::AllocShared, {}, Type::shared(DType::BF16, {64, 32}), {});
  ValueId bs = b.make(OpKind::AllocShared, {}, Type::shared(DType::BF16, {32, 16}), {});
  ValueId av = b.make(OpKind::View, {as, zero, zero}, Type::view(MemSpace::Shared, DType::BF16, {64, 32}), {});
  ValueId bv = b.make(OpKind::View, {bs, zero, zero}, Type::view(MemSpace::Shared, DType::BF16, {32, 16}), {});
  Type acc = Type::tile(DType::F32, Layout::canonical({64, 16}));
  ValueId c = b.make(OpKind::Splat, {b.constFloat(0, DType::F32)}, acc, {});
  b.make(OpKind::Dot, {av, bv, c}, acc, {});
  EXPECT_EQ(verify(fn), std::vector<std::string>{});
  b.make(OpKind::Dot, {bv, av, c}, acc, {3, 4});
  auto errors = verify(fn);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("dot at offset 3: shapes do not compose"), std::string::npos) << errors[0];
}

TEST(Verify, ViewOffsetsAndSpaces) {
  Function fn;
  fn.name = "views";
  Builder b(fn, &fn.body);
  ValueId zero = b.constInt(0, DType::I32);
  ValueId s = b.make(OpKind::AllocShared, {}, Type::shared(DType::F32, {2, 64}), {});
  b.make(OpKind::View, {s, zero, zero}, Type::view(MemSpace::Shared, DType::F32, {64}), {});
  EXPECT_EQ(verify(fn), std::vector<std::string>{});
  b.make(OpKind::View, {s, zero}, Type::view(MemSpace::Global, DType::F32, {64}), {1, 2});
  auto errors = verify(fn);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0].find("expects 2 offsets"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("does not match its base"), std::string::npos) << errors[1];
}

TEST(LaunchExpr, PrintAndEvaluate) {
  using K = LaunchExpr::Kind;
  std::vector<std::string> names = {"M", "N"};
  LaunchExpr grid = binExpr(K::CeilDiv, sizeExpr(0), constExpr(64));
  EXPECT_EQ(grid.str(names), "cdiv(M, 64)");
  int64_t out = 0;
  ASSERT_TRUE(grid.evaluate({130, 1}, out));
  EXPECT_EQ(out, 3);

  LaunchExpr e = binExpr(K::Mul, binExpr(K::Add, sizeExpr(0), constExpr(1)), binExpr(K::Sub, sizeExpr(1), constExpr(2)));
  EXPECT_EQ(e.str(names), "(M + 1) * (N - 2)");
  ASSERT_TRUE(e.evaluate({3, 10}, out));
  EXPECT_EQ(out, 32);

  LaunchExpr sub = binExpr(K::Sub, sizeExpr(0), binExpr(K::Sub, sizeExpr(1), constExpr(1)));
  EXPECT_EQ(sub.str(names), "M - (N - 1)");

  LaunchExpr req = binExpr(K::And, binExpr(K::Le, sizeExpr(1), constExpr(1024)),
                           binExpr(K::Eq, binExpr(K::Mod, sizeExpr(0), constExpr(16)), constExpr(0)));
  EXPECT_EQ(req.str(names), "N <= 1024 and M % 16 == 0");
  ASSERT_TRUE(req.evaluate({32, 1024}, out));
  EXPECT_EQ(out, 1);
  ASSERT_TRUE(req.evaluate({33, 1024}, out));
  EXPECT_EQ(out, 0);

  LaunchExpr notExpr{K::Not, 0, {binExpr(K::Or, constExpr(0), sizeExpr(0))}};
  EXPECT_EQ(notExpr.str(names), "not (0 or M)");
  ASSERT_TRUE(notExpr.evaluate({0, 0}, out));
  EXPECT_EQ(out, 1);

  LaunchExpr mm = binExpr(K::Max, binExpr(K::Min, sizeExpr(0), sizeExpr(1)), binExpr(K::FloorDiv, constExpr(-7), constExpr(2)));
  EXPECT_EQ(mm.str(names), "max(min(M, N), -7 // 2)");
  ASSERT_TRUE(mm.evaluate({-9, 5}, out));
  EXPECT_EQ(out, -3);  // truncating division, as in the kernel language

  std::string error;
  LaunchExpr bad = binExpr(K::FloorDiv, sizeExpr(0), sizeExpr(1));
  EXPECT_FALSE(bad.evaluate({5, 0}, out, &error));
  EXPECT_EQ(error, "division by zero");
  EXPECT_FALSE(sizeExpr(5).evaluate({1}, out, &error));
}

TEST(Names, Spellings) {
  EXPECT_STREQ(opKindName(OpKind::ConvertLayout), "convert_layout");
  EXPECT_STREQ(binaryKindName(BinaryKind::Shr), "shr");
  EXPECT_STREQ(cmpKindName(CmpKind::Ge), "ge");
  EXPECT_STREQ(unaryKindName(UnaryKind::Rsqrt), "rsqrt");
  EXPECT_STREQ(reduceKindName(ReduceKind::Prod), "prod");
}

}  // namespace
}  // namespace argus::ir
