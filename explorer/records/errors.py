"""The error every floor raises for a user's mistake: bad arguments, files and run directories."""


class ConfigError(ValueError):
    """A user's mistake in the arguments; the message is one line."""
