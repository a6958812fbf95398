"""What the JIT needs to know of a `.ag` source before compiling it: its kernels'
names and parameters (which are `const`, so compile-time keywords), and its
`# arch:` line. A light scan of the `def` headers, not a parser: argusc reports
every real error when it compiles."""

import re

from .errors import ArgusError

_KERNEL_DEF = re.compile(r"^[ \t]*@kernel\b.*?^[ \t]*def[ \t]+([A-Za-z_]\w*)[ \t]*\(", re.M | re.S)
_ARCH_LINE = re.compile(r"^# arch: *(\S+)", re.M)
_ARCH_RANK = {"sm_80": 0, "sm_90": 1, "sm_90a": 2}


class ParamInfo:
    __slots__ = ("name", "kind", "has_default")

    def __init__(self, name, kind, has_default):
        self.name = name
        self.kind = kind  # "const", "tensor" or "scalar"
        self.has_default = has_default

    def __repr__(self):
        return f"ParamInfo({self.name!r}, {self.kind!r}, has_default={self.has_default})"


def _strip_comment(line):
    return line.split("#", 1)[0]


def _split_top_level(text, separator):
    """Splits at `separator` outside brackets."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == separator and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _header_params(source, open_paren):
    """The text between the parentheses of a def header, comments removed."""
    depth, i = 0, open_paren
    while i < len(source):
        c = source[i]
        if c == "#":
            i = source.find("\n", i)
            if i < 0:
                break
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                body = source[open_paren + 1:i]
                return " ".join(_strip_comment(line) for line in body.split("\n"))
        i += 1
    raise ArgusError("the kernel's parameter list has no closing ')'")


def _param(text):
    name_and_type, *default = _split_top_level(text, "=")
    name, *annotation = _split_top_level(name_and_type, ":")
    annotation = annotation[0].strip() if annotation else ""
    kind = "const" if annotation == "const" else "tensor" if annotation.startswith("Tensor") else "scalar"
    return ParamInfo(name.strip(), kind, bool(default))


def kernels(source):
    """{kernel name: [ParamInfo, ...]} in the order the source defines them."""
    found = {}
    for match in _KERNEL_DEF.finditer(source):
        params = [p for p in _split_top_level(_header_params(source, match.end() - 1), ",") if p.strip()]
        found[match.group(1)] = [_param(p) for p in params]
    return found


def declared_arch(source):
    """The architecture of the source's `# arch: sm_90a` line, or None."""
    match = _ARCH_LINE.search(source)
    return match.group(1) if match and match.group(1) in _ARCH_RANK else None


def arch_runs(device_arch, needed):
    """Whether code for `device_arch` has everything `needed` asks for (sm_90a > sm_90 > sm_80)."""
    return _ARCH_RANK.get(device_arch, -1) >= _ARCH_RANK.get(needed, 0)


def arch_for_capability(major, minor):
    """The architecture argusc compiles for on a GPU of this compute capability (as `argusc run`)."""
    if major < 8:
        return None
    if (major, minor) == (9, 0):
        return "sm_90a"
    return "sm_80" if major == 8 else "sm_90"
