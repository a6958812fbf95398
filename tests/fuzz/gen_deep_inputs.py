#!/usr/bin/env python3
"""Writes Argus sources whose size is one long chain or one deep nest.

Each input stresses one kind of structure whose naive handling recurses once
per term: a chain of one binary operator, a chain of prefix operators, a
chain of attribute accesses / calls / subscripts, nested brackets, nested
blocks, an elif chain, a chain of @device calls, a chain of dependent
statements. Used to measure which inputs crash (bench/results/fuzzing.md) and
mirrored by tests/unit/driver_deep_inputs_test.cpp.

usage: gen_deep_inputs.py OUT_DIR [N ...]     (default sizes 1000 10000 100000)
then:  for f in OUT_DIR/*.ag; do argusc --emit=ptx -o /dev/null "$f"; echo "$f $?"; done
"""
import os
import sys

HEAD = ("@kernel(grid=(1,), warps=4)\n"
        "def k(x: Tensor[f32, (N,)], out: Tensor[f32, (N,)], BLOCK: const = 128):\n"
        "    t = load(x.tile((BLOCK,))[0])\n"
        "    i = program_id(0)\n")
TAIL = "    out.tile((BLOCK,))[0] = t\n"

FLOAT_OPS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "matmul": "@"}
INT_OPS = {"floordiv": "//", "mod": "%", "shl": "<<", "shr": ">>", "bitand": "&", "bitor": "|",
           "bitxor": "^", "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
           "and": "and", "or": "or", "pow": "**"}


def kernel(body):
    return HEAD + body + TAIL


def cases(n):
    for name, op in FLOAT_OPS.items():
        yield f"chain_{name}", kernel(f"    t = {f' {op} '.join(['t'] * n)}\n")
    for name, op in INT_OPS.items():
        yield f"chain_{name}", kernel(f"    j = {f' {op} '.join(['i'] * n)}\n")
    yield "unary_neg", kernel(f"    t = {'- ' * n}t\n")
    yield "unary_invert", kernel(f"    j = {'~' * n}i\n")
    yield "unary_not", kernel(f"    j = {'not ' * n}i\n")
    yield "attribute_chain", kernel(f"    j = x{'.shape' * n}\n")
    yield "call_chain", kernel(f"    j = program_id{'(0)' * n}\n")
    yield "subscript_chain", kernel(f"    j = x{'[0]' * n}\n")
    yield "nested_parens", kernel(f"    t = {'(' * n}t{')' * n}\n")
    yield "nested_lists", kernel(f"    j = {'[' * n}0{']' * n}\n")
    yield "nested_calls", kernel(f"    t = {'exp2(' * n}t{')' * n}\n")
    yield "nested_subscripts", kernel(f"    j = {'x.shape[' * n}0{']' * n}\n")
    yield "dependent_statements", kernel("    t = t * 2.0\n" * n)
    # Scalars whose symbolic value (in the checker, in codegen) grows with
    # every statement, then used as a tile index.
    for name, step in {"affine": "j = j * 3 + i", "floordiv": "j = j // 2 + i", "xor": "j = j ^ i"}.items():
        body = "    j = i\n" + f"    {step}\n" * n + "    t = load(x.tile((BLOCK,))[j % 4])\n"
        yield f"dependent_scalars_{name}", kernel(body)
    yield "elif_chain", kernel("    if i == 0:\n        pass\n" + "    elif i == 1:\n        pass\n" * n)
    yield "long_tuple", kernel(f"    j = ({', '.join(['i'] * n)})\n")
    devices = "".join(f"@device\ndef d{k}(v):\n    return d{k + 1}(v)\n\n" for k in range(n))
    devices += f"@device\ndef d{n}(v):\n    return v\n\n"
    yield "device_call_chain", devices + kernel("    t = d0(t)\n")
    # Blocks nest by indentation: one space per level keeps the file small.
    levels = min(n, 3000)
    nest_if = "".join(" " * (4 + k) + "if i == 0:\n" for k in range(levels)) + " " * (4 + levels) + "t = t + 1.0\n"
    yield f"nested_ifs_{levels}", kernel(nest_if)
    nest_for = "".join(" " * (4 + k) + f"for v{k} in range(2):\n" for k in range(levels)) + " " * (4 + levels) + "t = t + 1.0\n"
    yield f"nested_fors_{levels}", kernel(nest_for)


def main():
    out = sys.argv[1]
    sizes = [int(s) for s in sys.argv[2:]] or [1000, 10000, 100000]
    os.makedirs(out, exist_ok=True)
    for n in sizes:
        for name, text in cases(n):
            with open(os.path.join(out, f"{name}_{n}.ag"), "w") as f:
                f.write(text)


if __name__ == "__main__":
    main()
