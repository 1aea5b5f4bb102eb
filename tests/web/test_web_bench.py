"""`arena bench serve` end to end on a small store: every phase measured, no request failed,
and the figures hold together (the targets themselves are the benchmark's to report, not a
test's: the machine's load decides them)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import arena


@pytest.mark.skipif(shutil.which("cc") is None, reason="the instant bots need a C compiler (cc)")
def test_bench_serve_measures_every_phase(tmp_path: Path) -> None:
    done = arena("bench", "serve", "--stored", "300", "--seconds", "1", "--games", "60", "--clients", "8",
                 "--scratch", str(tmp_path), "--json")
    doc = json.loads(done.stdout)
    assert doc["benchmark"] == "serve" and doc["stored"] == 300 and doc["clients"] == 8
    for phase in ("web", "web_during_games"):
        for route in ("page", "api"):
            lat = doc[phase][route]
            assert lat["requests"] > 0 and lat["errors"] == 0, (phase, route, lat)
            assert 0 < lat["p50_ms"] <= lat["p99_ms"]
    assert doc["games"] == 60
    assert min(doc["games_per_s_alone"], doc["games_per_s_loaded"], doc["games_per_s_flooded"]) > 0
    assert doc["throughput_change"] == pytest.approx(doc["games_per_s_loaded"] / doc["games_per_s_alone"] - 1, abs=1e-3)
    assert set(doc["targets"]) == {"p99_ms", "p99_met", "throughput_change", "throughput_met"}
