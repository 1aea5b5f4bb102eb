"""Uploads: stored queued under uploads/<sha256>.<ext>, bounded as they are read, refused
when too big, of the wrong type or past the team's hourly cap."""

from __future__ import annotations

import hashlib
import io
import tarfile
import zipfile

import pytest

from arena.competition import RateLimited, Submissions, Teams, UploadRefused, load_competition


def tar_gz(files: dict[str, bytes]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return raw.getvalue()


def zipped(files: dict[str, bytes]) -> bytes:
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return raw.getvalue()


class CountingStream(io.BytesIO):
    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.given = 0

    def read(self, n: int = -1) -> bytes:
        chunk = super().read(n)
        self.given += len(chunk)
        return chunk


@pytest.fixture
def setup(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text("[uploads]\nmax_bytes = 4000\nper_hour = 3\n")
    competition = load_competition(config)
    team, _ = Teams(tmp_path / "r").add("alpha")
    return Submissions(tmp_path / "r", competition), team, tmp_path / "r"


def test_an_upload_is_stored_queued(setup):
    subs, team, results = setup
    data = tar_gz({"bot/bot.toml": b'name = "x"\n'})
    sub = subs.submit(team, "../../my bot.tar.gz", io.BytesIO(data))
    assert sub.status == "queued" and sub.team == "alpha" and sub.team_id == team.id
    assert sub.archive_name == "my bot.tar.gz"
    assert sub.archive_sha256 == hashlib.sha256(data).hexdigest() and sub.archive_bytes == len(data)
    assert (results / "uploads" / f"{sub.archive_sha256}.tar.gz").read_bytes() == data
    assert subs.get(sub.id) == sub and subs.for_team(team.id) == [sub] and subs.recent(5) == [sub]
    z = subs.submit(team, "b.zip", io.BytesIO(zipped({"bot.toml": b"x"})))
    assert (results / "uploads" / f"{z.archive_sha256}.zip").is_file()
    assert [s.id for s in subs.for_team(team.id)] == [z.id, sub.id]
    assert subs.get(999) is None


def test_too_big_is_refused_after_reading_one_byte_more(setup):
    subs, team, results = setup
    stream = CountingStream(b"\x1f\x8b" + b"\0" * 100_000)
    with pytest.raises(UploadRefused, match="larger than the 4,000 bytes") as caught:
        subs.submit(team, "big.tar.gz", stream)
    assert caught.value.too_large
    assert stream.given == 4001
    assert subs.for_team(team.id) == [] and list((results / "uploads").iterdir()) == []


@pytest.mark.parametrize("data", [b"", b"#!/bin/sh\necho hi\n", b"\x7fELF" + b"\0" * 50])
def test_not_an_archive_is_refused(setup, data):
    subs, team, results = setup
    with pytest.raises(UploadRefused):
        subs.submit(team, "bot.zip", io.BytesIO(data))
    assert subs.for_team(team.id) == [] and list((results / "uploads").iterdir()) == []


def test_the_hourly_cap(setup):
    subs, team, _ = setup
    for i in range(3):
        subs.submit(team, "b.tar.gz", io.BytesIO(tar_gz({"b/f": bytes([i])})))
    with pytest.raises(RateLimited) as caught:
        subs.submit(team, "b.tar.gz", io.BytesIO(tar_gz({"b/f": b"4"})))
    assert 3500 <= caught.value.retry_after <= 3601
    other, _ = Teams(setup[2]).add("beta")
    assert subs.submit(other, "b.tar.gz", io.BytesIO(tar_gz({"b/f": b"5"}))).status == "queued"
