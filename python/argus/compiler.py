"""argusc from Python: finding it, naming what it compiles (the cache key), and
compiling into the on-disk cache of the JIT (argus.jit).

The cache holds one folder per key: sha256 over the source text, the constants
(-D values), the architecture and the compiler's identity (its --version line,
the binary's size and modification time, so a rebuilt argusc never reuses old
code). Folders are written under a temporary name and renamed into place, so
concurrent processes never see half a folder."""

import hashlib
import json
import os
import shutil
import subprocess
import tempfile

from .errors import ArgusError

# The repository's own build, for a checkout used in place (python/argus/ -> build/argusc).
_REPO_BUILD = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "argusc"))


class CompilerNotFoundError(ArgusError):
    """argus.jit needs argusc and none was found."""


class CompileError(ArgusError):
    """argusc rejected the kernel; the message holds its diagnostics."""

    def __init__(self, message, diagnostics=""):
        self.diagnostics = diagnostics
        super().__init__(message)


def find_argusc(env=None, repo_build=_REPO_BUILD):
    """The argusc to use: $ARGUSC, else `argusc` on PATH, else the repository's
    build/argusc. Raises CompilerNotFoundError saying where it looked."""
    env = os.environ if env is None else env
    explicit = env.get("ARGUSC")
    if explicit:
        if os.path.isfile(explicit) and os.access(explicit, os.X_OK):
            return explicit
        raise CompilerNotFoundError(f"ARGUSC={explicit} is not an executable file; point it at argusc "
                                    f"(built as build/argusc by `bash scripts/main.sh`)")
    on_path = shutil.which("argusc", path=env.get("PATH", ""))
    if on_path:
        return on_path
    if os.path.isfile(repo_build) and os.access(repo_build, os.X_OK):
        return repo_build
    raise CompilerNotFoundError(
        "argus.jit compiles kernels with argusc, and none was found (not in $ARGUSC, which is unset; not on PATH; "
        f"not at {repo_build}). Build it with `bash scripts/main.sh` in the Argus repository, or set "
        "ARGUSC=/path/to/argusc. Kernels compiled elsewhere still load without it: argus.load('kernel.ptx') "
        "with its kernel.meta.json beside it")


_identities = {}


def compiler_identity(argusc):
    """What distinguishes this compiler build: its version line, size and mtime."""
    st = os.stat(argusc)
    memo = (argusc, st.st_size, st.st_mtime_ns)
    if memo not in _identities:
        try:
            done = subprocess.run([argusc, "--version"], capture_output=True, text=True, timeout=60)
        except OSError as e:
            raise CompilerNotFoundError(f"cannot run {argusc} ({e.strerror})") from None
        if done.returncode != 0:
            raise CompilerNotFoundError(f"{argusc} --version failed (exit {done.returncode}): {done.stderr.strip()}")
        _identities[memo] = f"{done.stdout.strip()}; {st.st_size} bytes; mtime {st.st_mtime_ns}"
    return _identities[memo]


def define_text(name, value):
    """-D's value for a Python constant: ints and bools as argusc reads them, floats exactly."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    raise ArgusError(f"constant {name}={value!r}: a const parameter takes an int, a float or a bool, "
                     f"not {type(value).__name__}")


def cache_key(source, constants, arch, identity):
    """The hex sha256 naming a compilation: source text, constants, arch, compiler."""
    record = {"source": source, "constants": sorted((k, define_text(k, v)) for k, v in constants.items()),
              "arch": arch, "compiler": identity}
    return hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()


def cache_root(env=None):
    """$ARGUS_CACHE_DIR, else $XDG_CACHE_HOME/argus/jit, else ~/.cache/argus/jit."""
    env = os.environ if env is None else env
    if env.get("ARGUS_CACHE_DIR"):
        return env["ARGUS_CACHE_DIR"]
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "argus", "jit")


def argusc_command(argusc, source_path, constants, arch, output):
    return ([argusc, f"--arch={arch}", "--color=never"] +
            [f"-D{k}={define_text(k, v)}" for k, v in sorted(constants.items())] +
            [source_path, "-o", output])


def describe(origin, constants, arch):
    consts = ", ".join(f"{k}={define_text(k, v)}" for k, v in sorted(constants.items()))
    return f"{origin} ({consts + ', ' if consts else ''}{arch})"


def compile_cached(source, origin, constants, arch, argusc=None, root=None):
    """The path of `kernel.ptx` (its kernel.meta.json beside it) for this
    compilation, from the cache or compiled now, and whether it was compiled now.
    argusc compiles exactly the text hashed (written beside its output); its
    diagnostics name `origin` (the user's file, or "<source>")."""
    argusc = argusc or find_argusc()
    root = root or cache_root()
    key = cache_key(source, constants, arch, compiler_identity(argusc))
    folder = os.path.join(root, key)
    ptx = os.path.join(folder, "kernel.ptx")
    if os.path.isfile(ptx) and os.path.isfile(os.path.join(folder, "kernel.meta.json")):
        return ptx, False
    os.makedirs(root, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix=".compiling-", dir=root)
    try:
        source_path = os.path.join(scratch, "kernel.ag")
        with open(source_path, "w", encoding="utf-8") as f:
            f.write(source)
        command = argusc_command(argusc, source_path, constants, arch, os.path.join(scratch, "kernel.ptx"))
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            diagnostics = done.stderr.replace(source_path, origin).rstrip()
            raise CompileError(f"argusc could not compile {describe(origin, constants, arch)}; it said:\n{diagnostics}",
                               diagnostics)
        with open(os.path.join(scratch, "key.json"), "w", encoding="utf-8") as f:
            json.dump({"origin": origin, "constants": {k: define_text(k, v) for k, v in constants.items()},
                       "arch": arch, "compiler": compiler_identity(argusc), "command": command}, f, indent=1)
        try:
            os.rename(scratch, folder)
        except OSError:  # another process put it there first: theirs is the same
            pass
        return ptx, True
    finally:
        if os.path.isdir(scratch):
            shutil.rmtree(scratch, ignore_errors=True)
