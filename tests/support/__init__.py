"""What the tests start and stand on: servers, windows, browsers and paths."""
