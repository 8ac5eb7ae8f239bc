"""The zoo's one exception type: its message says what went wrong and what to do."""


class ZooError(Exception):
    """A zoo operation failed; the message is meant for the user, never contains secrets."""
