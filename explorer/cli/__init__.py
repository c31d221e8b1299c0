"""The command line and the console: arguments, the live view, signals."""
