"""The zoo's exception types: each message says what went wrong and what to do."""

from asrbench.errors import AsrbenchError, InputError


class ZooError(AsrbenchError):
    """A zoo operation failed; the message is meant for the user, never contains secrets."""


class ZooInputError(ZooError, InputError):
    """A zoo command given bad input (unknown remote, bad ID, both -d and -m...)."""


class ZooNotFound(ZooInputError):
    """The remote holds no such entry or version."""


class ZooRemoteMissing(ZooNotFound):
    """The remote itself does not exist (no such folder or bucket): it holds nothing."""


class ZooCorrupt(ZooError):
    """An object whose bytes do not hash to its name (corrupted on the remote or in transit)."""


class ZooMissingObject(ZooError):
    """An object a manifest names is not on the remote (deleted, or a push that never finished)."""
