"""A real Redis server for tests, started by the session on a free port in a temporary directory.

Loaded as a plugin (`pytest_plugins = ("tests.support.redis_server",)`), so that
every module shares one server. Without `redis-server` the tests skip, except
in CI (CI=true), where they must run.
"""

import os
import shutil
import tempfile
import uuid

import pytest

from harness.redis_process import RedisServer


def start_redis(folder):
    if shutil.which("redis-server") is None:
        reason = "redis-server is not installed: apt-get install redis-server"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    try:
        return RedisServer(folder)
    except RuntimeError as failed:
        pytest.fail(str(failed))


@pytest.fixture(scope="session")
def redis_server():
    """One server for the session; each test keeps to its own run id."""
    with tempfile.TemporaryDirectory(prefix="redis-") as folder:
        server = start_redis(folder)
        yield server
        server.stop()


@pytest.fixture
def own_redis_server(tmp_path):
    """A server of the test's own, which it may stop."""
    server = start_redis(str(tmp_path))
    yield server
    server.stop()


@pytest.fixture
def run_id():
    return f"test-{uuid.uuid4().hex[:12]}"
