"""Exceptions raised by the Argus launcher. Every failure is one of these, with a
message that names the kernel and parameter involved; nothing segfaults."""


class ArgusError(Exception):
    """Base class of every error the launcher raises."""


class MetadataError(ArgusError, ValueError):
    """The .meta.json beside a PTX/cubin file is missing, unreadable or malformed."""


class ArgumentError(ArgusError, TypeError):
    """A kernel was called with arguments that do not match its signature
    (wrong count, dtype, rank, extents, device, layout, or a failed require())."""


class CudaError(ArgusError, RuntimeError):
    """A CUDA driver call returned an error code (CUresult != 0)."""

    def __init__(self, call, code, name, description, detail=""):
        self.call = call
        self.code = code
        self.name = name
        message = f"{call} failed with {name} ({code}): {description}"
        if detail:
            message += "\n" + detail
        super().__init__(message)
