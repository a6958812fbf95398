// The `pipelined(n, stages=S)` policy: the compiler builds the prologue, the
// steady state and the epilogue of a software pipeline of asynchronous copies.
//
// A pipelined loop (For with stages S >= 2, lb = 0, step = 1) whose body
// starts with copy_async(B, src(kt)) statements, each filling a whole shared
// buffer B, becomes
//
//   B gets S stages: shared<dt, [S, ...]>; each view of B in the body reads stage kt % S
//   for p in 0 .. S-2 (unrolled):  if p < n: copy_async(B[p], src(p))      ; commit_group
//   for j in 0 .. n:
//     wait_group(S-2); barrier
//     if j+S-1 < n: copy_async(B[(j+S-1) % S], src(j+S-1))                 ; commit_group
//     <the rest of the body, B -> B[j % S]>
//   wait_group(0); barrier
//
// A loop whose leading copies are copy_bulk (TMA) instead gets one mbarrier per
// stage (BYTES: the bytes its leading copies write per iteration):
//
//   bars = shared<u64, [S]>; mbarrier_init(bars[s], 1) for every s; barrier
//   for p in 0 .. S-2:  if p < n: mbarrier_expect_tx(bars[p], BYTES); copy_bulk(B[p], src(p), bars[p])
//   for j in 0 .. n:
//     barrier
//     if j+S-1 < n: st = (j+S-1) % S; mbarrier_expect_tx(bars[st], BYTES); copy_bulk(B[st], src(j+S-1), bars[st])
//     mbarrier_wait(bars[j % S], parity (j / S) % 2)
//     <the rest of the body, B -> B[j % S]>
//   barrier
//
// When the body's computation is a wgmma dot whose accumulator the loop carries
// (and S >= 3), the copies run S-2 iterations ahead instead of S-1 (the prologue
// issues S-2 of them, iteration j refills stage (j+S-2) % S): the stage a dot
// read is refilled two iterations later, so its wgmma group may still be in
// flight for one iteration. The dot is marked kDotWgmmaInFlight for codegen.
//
// With specialize=True (copy_bulk loops only) no block barrier orders a refill after
// the reads of the stage it overwrites; a second mbarrier per stage does, on which
// every thread arrives once it has read the stage (T: the block's threads):
//
//   free = shared<u64, [S]>; mbarrier_init(free[s], T) for every s
//   (prologue as above)
//   for j in 0 .. n:
//     if j+A < n:                                    <- kIfProducer: the copies, nothing else
//       p = j+A; st = p % S
//       if p >= S: mbarrier_wait(free[st], parity (p / S - 1) % 2)
//       mbarrier_expect_tx(bars[st], BYTES); copy_bulk(B[st], src(p), bars[st])
//     mbarrier_wait(bars[j % S], parity (j / S) % 2)
//     <the rest of the body>
//     mbarrier_arrive(free[j % S])       (in flight: if j >= 1: mbarrier_arrive(free[(j-1) % S]))
//
// (no barrier after the loop: the free barriers already order every read of a stage
// before its next refill.)
// (A = S-1, or S-2 with a wgmma in flight; then, after the loop, once n >= 1, every
// thread also releases the stage of the last iteration.) Executed as written, by
// the whole block, this is a correct pipeline; codegen instead runs the
// kIfProducer ifs (the prologue's too) on a producer warpgroup of their own
// (Function::producerWarps), which then runs ahead of the block, held back only
// by the free barriers.
//
// A copy_bulk loop directly in the body of a top-level loop (a persistent kernel's
// loop over tiles) runs once per outer iteration. Its barriers and their init go
// before the outer loop, which carries base, the iterations of the earlier runs
// (0, then base + n), and every stage and parity above counts global iterations:
// iteration j of a run is global iteration base + j (stage (base + j) % S).
//
// The checker and codegen only ever see the rewritten loop. Why it is correct
// is argued in pipeline.cpp.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"
#include "support/diagnostic.h"

namespace argus::ir {

// Why a pipelined loop cannot be rewritten. Sema reports these (with the
// user's text) as soon as the loop's body is built; the pass finds the same
// problems again and leaves such loops alone.
struct PipelineProblem {
  enum class Kind : uint8_t {
    NoLeadingCopy,     // the body does not start with copy_async; `range` is the first statement
    LateCopy,          // a copy_async after the leading ones (or nested in a branch or loop)
    ExplicitSync,      // a barrier, commit_group or wait_group in the body
    PartialBuffer,     // a leading copy fills part of a buffer; `value` is the buffer (if any),
                       // `related` the destination view
    BufferCopiedTwice, // two leading copies fill one buffer; `related` is the first
    BufferUsedOutside, // a staged buffer is also used outside the loop; `value` is the buffer
    SourceNotComputable, // a leading copy's views depend on a value it cannot recompute ahead;
                         // `value` is that value: an op's result (`range` is the op, `related`
                         // the copy) or a loop-carried block argument (`range` is the copy,
                         // `related` where the value is assigned)
    BadLoop,           // not a loop from 0 with step 1, or S < 2 (sema never builds one)
    MixedCopies,       // leading copies of both kinds; `range` is the first copy of the other kind
    BulkNested,        // a loop of copy_bulk copies nested deeper than directly in a top-level loop
    SpecializeNeedsBulk, // specialize=True on a loop of copy_async copies; `range` is the first copy
    SpecializeIgnored, // a note, not a problem: specialize=True not applied because of the statement
                       // at `range` before the loop, which the producer warpgroup could not run
  };
  Kind kind;
  SourceRange range;    // what the user wrote that causes it
  SourceRange related;  // the copy or the loop it conflicts with
  ValueId value = kNoValue;
  int64_t stages = 0;   // of the loop
};

// An `if` that only computes scalars (both regions nothing but scalar arithmetic,
// nested such ifs and their yields; scalar results): the producer warpgroup of a
// specialized pipeline can run it to get a tile index (codegen/hopper_specialize.cpp).
bool isScalarIf(const Function& fn, const Op& op);

// The user-facing diagnostic for a problem (codes AG4032-AG4038), quoting
// what the user wrote when `file` is given. Sema adds the fix-its it can.
struct PipelineMessage {
  DiagId id;
  SourceRange range;
  std::vector<std::string> args;
  std::vector<Label> labels;
};
PipelineMessage describe(const Function& fn, const PipelineProblem& problem, const SourceFile* file);

// The problems of one pipelined loop of `fn` (ForOp::stages() > 0), in source
// order. Works on partial functions too: sema calls it while the kernel is
// still being built (then uses of a buffer after the loop are not seen yet).
std::vector<PipelineProblem> findPipeliningProblems(const Function& fn, const Op& forOp);

// Rewrites every pipelined loop of `fn` (innermost first) and resets its
// stages to 0. Loops with problems are left as they are and their problems
// returned; an empty result means every pipelined loop was rewritten.
// `notes`, when given, receives requests the rewrite could not honour (SpecializeIgnored).
std::vector<PipelineProblem> applyPipelining(Function& fn, std::vector<PipelineProblem>* notes = nullptr);
std::vector<PipelineProblem> applyPipelining(Module& module);
// The same for every kernel, reporting the problems (see describe()) and the
// notes (as warnings); a kernel with problems is removed from the module, as
// sema does with kernels that have errors.
void applyPipelining(Module& module, const SourceFile* file, DiagnosticSink& diags);

}  // namespace argus::ir
