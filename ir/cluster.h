// Thread-block clusters (@kernel(cluster=C), Function::clusterSize) and the one
// thing they let a kernel share: multicast copies (copy_bulk(dst, src,
// multicast=True), kCopyMulticast). Each block of a cluster issues one slice of
// the tile and receives the others' slices from the other blocks, so the copy is
// the one the program says only if every block of the cluster asks for the same
// tile, in the same iteration of the same loops. This file proves that, or says
// which value may differ between the blocks of a cluster.
//
// The proof is a conservative data-flow analysis over the IR before pipelining.
// A value is cluster-uniform when it is computed by scalar ops, under loops and
// branches whose bounds and conditions are uniform, from constants, parameters,
// runtime sizes, num_programs(...), program_id(1), program_id(2), and
// program_id(0) // k with k a multiple of C (clusters are C consecutive blocks
// along the grid's first axis). Everything else is assumed to differ.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"
#include "support/diagnostic.h"

namespace argus::ir {

// A multicast copy whose tile may differ between the blocks of a cluster.
struct ClusterProblem {
  SourceRange copy;   // the copy_bulk call
  SourceRange cause;  // the value (or the loop or branch) that may differ
  std::string why;    // "'tm' is computed from program_id(0), ..." (no trailing period)
};

std::vector<ClusterProblem> findClusterProblems(const Function& fn);

// Reports the problems of every kernel (AG4048) and drops the kernels that have any.
void checkClusters(Module& module, DiagnosticSink& diags);

}  // namespace argus::ir
