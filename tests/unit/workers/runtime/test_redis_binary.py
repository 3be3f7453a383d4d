"""Which redis-server runs on a data directory (workers/runtime/redis_binary.py): the one that ran on
it before, and never one too old for its data. The binaries here are stand-ins that only
answer `--version`; tests/integration/test_redis_server.py runs the real ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from assocmem.workers.errors import RedisLaunchError
from assocmem.workers.runtime.redis_binary import (
    SPLIT_AOF,
    Recorded,
    read_record,
    redis_binary,
    remember,
)


def stand_in(directory: Path, version: str) -> str:
    """An executable `redis-server` in `directory` that says it is Redis `version`."""
    directory.mkdir(parents=True)
    binary = directory / "redis-server"
    binary.write_text(f'#!/bin/sh\necho "Redis server v={version} sha=00000000:0 bits=64"\n')
    binary.chmod(0o755)
    return str(binary)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """An empty data directory of the embedded Redis."""
    (tmp_path / "data").mkdir()
    return tmp_path / "data"


@pytest.fixture
def six_then_seven(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """A Redis 6.2 first on PATH (as an activated virtualenv puts the wheel's), a 7.0 after."""
    six = stand_in(tmp_path / "venv-bin", "6.2.14")
    seven = stand_in(tmp_path / "usr-bin", "7.0.15")
    monkeypatch.setenv("PATH", f"{tmp_path / 'venv-bin'}:{tmp_path / 'usr-bin'}")
    return six, seven


def test_a_new_directory_takes_the_first_on_path_and_records_it(
    data: Path, six_then_seven: tuple[str, str]
) -> None:
    six, _ = six_then_seven
    assert redis_binary(data) == six
    remember(data, six)
    assert read_record(data) == Recorded(six, (6, 2, 14))


def test_the_binary_that_ran_on_a_directory_keeps_it_whatever_comes_first_on_path(
    data: Path, six_then_seven: tuple[str, str]
) -> None:
    _, seven = six_then_seven
    remember(data, seven)  # `make run`: the system's Redis 7
    assert redis_binary(data) == seven  # `up` from the activated virtualenv


def test_redis_7_data_without_a_record_is_never_given_to_redis_6(
    data: Path, six_then_seven: tuple[str, str]
) -> None:
    _, seven = six_then_seven
    (data / SPLIT_AOF).mkdir()  # a directory from before records
    assert redis_binary(data) == seven


def test_a_recorded_binary_that_is_gone_gives_way_to_one_as_new(
    data: Path, tmp_path: Path, six_then_seven: tuple[str, str]
) -> None:
    _, seven = six_then_seven
    gone = stand_in(tmp_path / "old-bin", "7.2.4")
    remember(data, gone)
    Path(gone).unlink()
    assert redis_binary(data) == seven


def test_a_start_no_binary_can_serve_is_refused_saying_which_redis_the_data_needs(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stand_in(tmp_path / "venv-bin", "6.2.14")
    monkeypatch.setenv("PATH", str(tmp_path / "venv-bin"))
    (data / SPLIT_AOF).mkdir()
    with pytest.raises(
        RedisLaunchError, match=r"needs Redis 7 or newer \(its AOF is in appendonlydir/\).*6\.2\.14"
    ):
        redis_binary(data)


def test_an_unreadable_record_counts_as_none(data: Path, six_then_seven: tuple[str, str]) -> None:
    six, _ = six_then_seven
    (data / "binary").write_text("half a line")
    assert read_record(data) is None
    assert redis_binary(data) == six


def test_a_binary_found_through_a_relative_path_is_recorded_by_its_whole_path(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seven = stand_in(tmp_path / "bin", "7.0.15")
    monkeypatch.chdir(tmp_path)
    remember(data, "bin/redis-server")
    assert read_record(data) == Recorded(seven, (7, 0, 15))


def test_a_record_whose_version_was_unreadable_still_keeps_redis_7_data_from_redis_6(
    data: Path, six_then_seven: tuple[str, str]
) -> None:
    _, seven = six_then_seven
    (data / "binary").write_text("/gone/redis-server\n0.0.0\n")
    (data / SPLIT_AOF).mkdir()
    assert redis_binary(data) == seven
