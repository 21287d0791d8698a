"""rfx's errors: one class per exit status of the rfx command (rfx.h's rfx_result)."""


class Error(Exception):
    """An error reported by rfx; str() is its message (file:line:col for programs, file:line
    for facts), .code the rfx command's exit status for it."""
    code = 4

    def __init__(self, message):
        super().__init__(message)
        self.message = message


class ProgramError(Error):
    """An error in the program (also: division by zero while it runs)."""
    code = 1


class InputError(Error, ValueError):
    """Unreadable or malformed input, unwritable output, data that do not fit a relation, misuse."""
    code = 2


class ResourceError(Error, MemoryError):
    """Out of memory (host or device), a size limit, a CUDA failure."""
    code = 3


class InternalError(Error):
    """A bug in rfx."""
    code = 4


BY_CODE = {1: ProgramError, 2: InputError, 3: ResourceError, 4: InternalError}
