"""The validation queue: real archives of real bots, in order, through the sandbox; hostile
archives refused with their reason; a team's bot name fixed; each accepted upload a new version."""

from __future__ import annotations

import io
import stat
import tarfile
import zipfile

import pytest
from competition_helpers import bot_files, tar_gz, write_config, zipped

from arena.competition import Submissions, Teams, load_competition
from arena.competition.archives import unpack_archive
from arena.competition.errors import UploadRefused
from arena.competition.validation import validate_next


@pytest.fixture
def comp(tmp_path):
    competition = load_competition(write_config(tmp_path / "c.toml", "[uploads]\nmax_files = 20\nmax_unpacked_bytes = 200000\n"))
    results = tmp_path / "r"
    return results, competition, Submissions(results, competition), Teams(results)


def test_good_uploads_are_accepted_in_order_as_new_versions(comp):
    results, competition, subs, teams = comp
    alpha, _ = teams.add("alpha")
    beta, _ = teams.add("beta")
    first = subs.submit(alpha, "a.tar.gz", io.BytesIO(tar_gz(bot_files("alpha-bot"), top="x")))
    other = subs.submit(beta, "b.zip", io.BytesIO(zipped(bot_files("beta-bot"))))
    second = subs.submit(alpha, "a2.zip", io.BytesIO(zipped(bot_files("alpha-bot", extra={"notes.txt": b"v2"}))))
    done = [validate_next(results, competition) for _ in range(3)]
    assert [d.id for d in done] == [first.id, other.id, second.id]
    assert validate_next(results, competition) is None
    a1, b1, a2 = (subs.get(s.id) for s in (first, other, second))
    assert (a1.status, a1.version, a1.bot_name) == ("accepted", 1, "alpha-bot")
    assert (a2.status, a2.version) == ("accepted", 2) and a2.bot_key != a1.bot_key
    assert b1.status == "accepted" and b1.report["passed"] is True and b1.report["checks"]
    assert (results / "submissions" / "alpha" / "1" / "alpha-bot" / "bot.toml").is_file()
    assert (results / "submissions" / "alpha" / "2" / "alpha-bot" / "notes.txt").read_bytes() == b"v2"
    # The ladder plays each team's latest accepted version.
    assert [(s.team, s.version) for s in subs.accepted()] == [("alpha", 2), ("beta", 1)]


def test_a_broken_bot_is_rejected_with_its_report(comp):
    results, competition, subs, teams = comp
    alpha, _ = teams.add("alpha")
    broken = bot_files("broken", extra={"bot.py": b"import sys\nprint('hello', flush=True)\nsys.exit(3)\n"})
    sub = subs.submit(alpha, "b.tar.gz", io.BytesIO(tar_gz(broken)))
    done = validate_next(results, competition)
    assert done.status == "rejected" and "check(s) failed" in done.reason and "\n" not in done.reason
    assert done.report["passed"] is False
    assert subs.accepted() == [] and not (results / "submissions" / "alpha").exists()
    assert done.id == sub.id


def test_a_failing_build_keeps_its_log(comp):
    results, competition, subs, teams = comp
    alpha, _ = teams.add("alpha")
    files = bot_files("builder")
    files["bot.toml"] += b'build = ["sh", "-c", "echo compiling here; echo broken >&2; exit 2"]\n'
    subs.submit(alpha, "b.tar.gz", io.BytesIO(tar_gz(files)))
    done = validate_next(results, competition)
    assert done.status == "rejected" and done.reason.startswith("build failed")
    assert "compiling here" in done.build_log


def test_a_teams_bot_name_is_fixed_and_names_are_not_shared(comp):
    results, competition, subs, teams = comp
    alpha, _ = teams.add("alpha")
    beta, _ = teams.add("beta")
    subs.submit(alpha, "a.zip", io.BytesIO(zipped(bot_files("sushi"))))
    assert validate_next(results, competition).status == "accepted"
    subs.submit(alpha, "a.zip", io.BytesIO(zipped(bot_files("other-name"))))
    renamed = validate_next(results, competition)
    assert renamed.status == "rejected" and "fixed" in renamed.reason
    subs.submit(beta, "b.zip", io.BytesIO(zipped(bot_files("Sushi"))))
    taken = validate_next(results, competition)
    assert taken.status == "rejected" and "taken by team 'alpha'" in taken.reason


def _tar_with(member: tarfile.TarInfo, data: bytes = b"") -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        ok = tarfile.TarInfo("bot/bot.toml")
        ok.size = 3
        tar.addfile(ok, io.BytesIO(b"x=1"))
        tar.addfile(member, io.BytesIO(data) if data else None)
    return raw.getvalue()


def _member(name: str, kind: bytes = tarfile.REGTYPE, **attrs) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    for k, v in attrs.items():
        setattr(info, k, v)
    return info


def _zip_link() -> bytes:
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w") as z:
        info = zipfile.ZipInfo("bot/link")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        z.writestr(info, "/etc/passwd")
    return raw.getvalue()


def _bomb_zip() -> bytes:
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("bot/bot.toml", b"x")
        z.writestr("bot/zeros", b"\0" * 50_000_000)  # about 50 KB compressed
    return raw.getvalue()


def _bomb_tar() -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        info = tarfile.TarInfo("bot/zeros")
        info.size = 30_000_000
        tar.addfile(info, io.BytesIO(b"\0" * info.size))
    return raw.getvalue()


HOSTILE = {
    "absolute path": (_tar_with(_member("/etc/cron.d/x", size=1), b"x"), "not a plain relative path"),
    "parent path": (_tar_with(_member("bot/../../escape", size=1), b"x"), "not a plain relative path"),
    "symlink": (_tar_with(_member("bot/link", tarfile.SYMTYPE, linkname="/etc/passwd")), "a link"),
    "hard link": (_tar_with(_member("bot/hard", tarfile.LNKTYPE, linkname="bot/bot.toml")), "a link"),
    "device": (_tar_with(_member("bot/dev", tarfile.CHRTYPE, devmajor=1, devminor=3)), "device"),
    "fifo": (_tar_with(_member("bot/fifo", tarfile.FIFOTYPE)), "FIFO"),
    "control character": (_tar_with(_member("bot/\x1b[2Jx", size=1), b"x"), "control character"),
    "zip symlink": (_zip_link(), "not a folder or a regular file"),
    "zip parent path": (zipped({"../evil": b"x"}), "not a plain relative path"),
    "zip bomb": (_bomb_zip(), "unpacks to more than 200,000 bytes"),
    "gzip bomb": (_bomb_tar(), "unpacks to more than 200,000 bytes"),
    "too many files": (zipped({f"bot/f{i}": b"x" for i in range(30)}), "more than 20 files"),
    "not an archive": (b"PK\x03\x04 and then garbage" * 10, "damaged"),
    "no bot.toml": (zipped({"a/readme": b"x", "b/readme": b"y"}), "no bot.toml"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_archives_are_refused_with_the_reason(comp, tmp_path, case):
    results, competition, subs, teams = comp
    data, reason = HOSTILE[case]
    alpha, _ = teams.add("alpha")
    subs.submit(alpha, "evil", io.BytesIO(data))
    done = validate_next(results, competition)
    assert done.status == "rejected"
    assert reason in done.reason, done.reason
    assert not (tmp_path / "escape").exists() and not (results / "submissions").exists()
    assert not list((results / ".staging").glob("*"))  # nothing left unpacked


def test_unpacking_writes_nothing_outside(tmp_path):
    archive = tmp_path / "a.tar.gz"
    archive.write_bytes(_tar_with(_member("bot/../../../outside", size=1), b"x"))
    dest = tmp_path / "deep" / "dest"
    dest.mkdir(parents=True)
    with pytest.raises(UploadRefused):
        unpack_archive(archive, dest, max_files=10, max_bytes=100)
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a.tar.gz", "bot", "bot.toml", "deep", "dest"]
