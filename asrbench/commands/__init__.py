"""Small CLI commands of the platform core (each runnable as `python -m asrbench.commands.X`)."""
