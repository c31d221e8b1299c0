"""The run directory: one run each, claimed atomically; a path that cannot be one is a one-line error."""

import threading

import pytest

from explorer.records.errors import ConfigError
from explorer.run.run_dir import CLAIM, claim_run_dir
from tests.support.in_process import main_here
from tests.support.mounts import tmpfs
from tests.test_cli import assert_one_line_error


def claim_together(count, wanted=None):
    """`count` threads claim at once; returns (paths claimed, errors)."""
    claimed, errors, start = [], [], threading.Barrier(count)

    def claim():
        start.wait()
        try:
            claimed.append(claim_run_dir(wanted))
        except ConfigError as error:
            errors.append(str(error))

    threads = [threading.Thread(target=claim) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return claimed, errors


def test_runs_started_together_get_a_directory_each(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    claimed, errors = claim_together(8)
    assert errors == [] and len(set(claimed)) == 8
    assert all(path.parent == tmp_path / "runs" and (path / CLAIM).exists() for path in claimed)


def test_a_given_directory_goes_to_one_run_only(tmp_path):
    claimed, errors = claim_together(6, tmp_path / "shared")
    assert claimed == [tmp_path / "shared"]
    assert len(errors) == 5 and all("already used by another run" in e for e in errors)


@pytest.mark.parametrize(
    "where, problem",
    [
        (lambda tmp: tmp / "a_file", "is a file"),
        (lambda tmp: tmp / "a_file" / "below", "Not a directory"),
        (lambda tmp: "/proc/no_run_here", "cannot create the run directory"),
    ],
    ids=["a file", "below a file", "under /proc"],
)
def test_a_path_that_cannot_be_a_run_directory_is_a_one_line_error(tmp_path, where, problem):
    (tmp_path / "a_file").write_text("not a directory")
    assert_one_line_error(main_here("--steps", "1", "--run-dir", str(where(tmp_path))), problem)


def test_a_read_only_file_system_is_a_one_line_error(tmp_path):
    with tmpfs(tmp_path / "read_only", "ro,size=1m") as mount:
        assert_one_line_error(main_here("--steps", "1", "--run-dir", str(mount / "run")), "Read-only file system")
