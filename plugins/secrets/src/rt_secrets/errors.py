"""The errors rt.secrets raises, and the codes they carry.

Two families, as in the reference runtime: argument errors are raised at once, before any thread or OS call,
with the reference messages and the code ``ERR_INVALID_ARG_TYPE``; failures of the store become
:class:`SecretsError` with an ``ERR_SECRETS_*`` code and a message that says how to fix it. No message ever
contains a secret value.
"""

from __future__ import annotations

from rt.errors import RtError

INVALID_ARG = "ERR_INVALID_ARG_TYPE"

PLATFORM_ERROR = "ERR_SECRETS_PLATFORM_ERROR"
UNAVAILABLE = "ERR_SECRETS_UNAVAILABLE"
ACCESS_DENIED = "ERR_SECRETS_ACCESS_DENIED"
INTERACTION_NOT_ALLOWED = "ERR_SECRETS_INTERACTION_NOT_ALLOWED"
INTERACTION_REQUIRED = "ERR_SECRETS_INTERACTION_REQUIRED"
AUTH_FAILED = "ERR_SECRETS_AUTH_FAILED"
USER_CANCELED = "ERR_SECRETS_USER_CANCELED"
UNKNOWN_BACKEND = "ERR_SECRETS_UNKNOWN_BACKEND"
VALUE_TOO_LONG = "ERR_SECRETS_VALUE_TOO_LONG"

MSG_NOT_STRINGS = "Expected service and name to be strings"
MSG_EMPTY = "Expected service and name to not be empty"
MSG_VALUE_NOT_STRING = "Expected 'value' to be a string. To delete the secret, call secrets.delete instead."
MSG_VALUE_NOT_UNICODE = (
    "Expected 'value' to be valid Unicode: it contains a lone surrogate, which no store can keep"
)

# Appended to every "no store" message, so the reader always learns the alternatives.
CHOOSE_ANOTHER_BACKEND = (
    "or choose another backend: RT_SECRETS_BACKEND=file (pip install rt-filesecrets; an encrypted file "
    "for servers and CI) or RT_SECRETS_BACKEND=memory (kept in the process only, for tests)"
)


class SecretsError(RtError):
    """The credential store failed (unavailable, locked, denied ...); ``code`` is an ``ERR_SECRETS_*``."""

    def __init__(self, message: str, code: str = PLATFORM_ERROR) -> None:
        super().__init__(message)
        self.code = code

    def __repr__(self) -> str:
        return f"SecretsError({str(self)!r}, code={self.code!r})"


class SecretValueTooLongError(SecretsError, ValueError):
    """A value longer than the store accepts, refused before it reaches the OS."""

    def __init__(self, message: str) -> None:
        super().__init__(message, VALUE_TOO_LONG)


class InvalidSecretArgumentType(TypeError):
    """service/name/value of the wrong type (the reference runtime's ``ERR_INVALID_ARG_TYPE``)."""

    code = INVALID_ARG


class InvalidSecretArgumentValue(ValueError):
    """An empty service or name, or a value that is not valid Unicode."""

    code = INVALID_ARG
