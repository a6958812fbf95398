// `argusc run --cpu`'s inputs and outputs as NumPy .npy files (--input NAME=FILE.npy,
// --output-dir DIR); the dtype conventions are runtime/interp/npy.h's.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "ir/ir.h"
#include "runtime/interp/host_tensor.h"

namespace argus::cli {

// Reads every `files` entry (parameter name -> path) into a tensor of its
// parameter's dtype and checks it against the parameter: a tensor parameter of
// `fn`, the same rank, its constant extents. Each extent that is a runtime size
// sets `sizes[name]` (checked against the value it already has, from --size or an
// earlier file). False with `error` set to the whole message on any mismatch.
bool loadInputs(const ir::Function& fn, const std::map<std::string, std::string>& files,
                std::map<std::string, int64_t>& sizes, std::map<std::string, interp::HostTensor>& out,
                std::string& error);

// Writes `t` as DIR/NAME.npy (creating DIR); false with `error` set.
bool writeOutput(const std::string& dir, const std::string& name, const interp::HostTensor& t, std::string& error);

// "(3, 4)", "(3,)": a shape as Python prints it.
std::string shapeText(const std::vector<int64_t>& shape);

}  // namespace argus::cli
