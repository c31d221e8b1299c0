"""The YAML files people write are read within bounds: no alias bomb, no huge file, no huge error."""

import os

import pytest

from explorer.config.profiles import ProfileError, load_profiles
from explorer.sweep.sweep_file import SweepError, load_sweep
from perception.keymap import KeyMapError, load_keymap
from perception.world import WorldError, load_world
from perception.yaml_files import MAX_PROBLEM_CHARS

BOMB = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{n}: &{n} [{', '.join(['*' + p] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi")
)
LOADERS = [
    (load_world, WorldError, "size: *i\nname: w\n"),
    (lambda path: load_profiles(path, 2, "offline"), ProfileError, "default: {role: *i}\n"),
    (lambda path: load_keymap(path, lambda key: True), KeyMapError, "actions: {forward: *i}\n"),
]


@pytest.mark.parametrize("load, error, use", LOADERS, ids=["world", "profiles", "key map"])
def test_an_alias_bomb_is_refused_in_every_kind_of_file(tmp_path, load, error, use):
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB + use)
    with pytest.raises(error, match="expands to more than 1,000,000 values"):
        load(path)


@pytest.mark.parametrize("load, error, use", LOADERS, ids=["world", "profiles", "key map"])
def test_a_file_larger_than_the_limit_is_refused_unread(tmp_path, load, error, use):
    path = tmp_path / "huge.yaml"
    with open(path, "w") as file:
        file.write("name: w\n")
        file.truncate(10_000_001)
    with pytest.raises(error, match="larger than 10 MB"):
        load(path)


def test_anchors_that_stay_small_are_read_as_meant(tmp_path):
    path = tmp_path / "profiles.yaml"
    path.write_text("default: &d {role: scout, temperature: 0.5}\nagents:\n  - *d\n  - {role: mapper}\n")
    first, second = load_profiles(path, 2, "offline")
    assert (first.role, first.temperature, second.role) == ("scout", 0.5, "mapper")


def test_an_error_quotes_a_long_value_only_in_part(tmp_path):
    path = tmp_path / "world.yaml"
    path.write_text("name: w\nsize: [" + ", ".join(["1"] * 50_000) + "]\nobjects: [{name: a, position: [0, 0]}]\n")
    with pytest.raises(WorldError) as raised:
        load_world(path)
    assert len(str(raised.value)) <= len(str(path)) + 2 + MAX_PROBLEM_CHARS


@pytest.mark.parametrize("load, error, use", LOADERS, ids=["world", "profiles", "key map"])
def test_a_key_given_twice_is_refused_naming_it_and_its_line(tmp_path, load, error, use):
    path = tmp_path / "twice.yaml"
    key = use.split(":")[0]
    path.write_text(f"{key}: {{}}\n{key}: {{}}\n")
    with pytest.raises(error, match=f"the key '{key}' is given twice \\(again at line 2\\)"):
        load(path)


def test_a_key_given_twice_in_a_sweep_grid_is_refused(tmp_path):
    path = tmp_path / "sweep.yaml"
    path.write_text("steps: 5\nout: o\ngrid:\n  seed: [1, 2]\n  model: [offline]\n  seed: [3]\n")
    with pytest.raises(SweepError, match="the key 'seed' is given twice \\(again at line 6\\)"):
        load_sweep(path)


@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
@pytest.mark.parametrize("load, error, use", LOADERS, ids=["world", "profiles", "key map"])
def test_a_device_or_a_fifo_is_refused_unread(tmp_path, load, error, use, special):
    path = tmp_path / "special.yaml"
    if special == "fifo":
        os.mkfifo(path)  # nobody writes to it: a reader that waited would hang
    else:
        path.symlink_to(special)
    with pytest.raises(error, match="is not a regular file"):
        load(path)


def test_a_sweep_file_that_is_a_device_is_refused_unread(tmp_path):
    path = tmp_path / "sweep.yaml"
    path.symlink_to("/dev/zero")  # read to its end, it never ends
    with pytest.raises(SweepError, match="is not a regular file"):
        load_sweep(path)
