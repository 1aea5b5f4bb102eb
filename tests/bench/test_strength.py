"""tests/bench/tools/strength.py: rotations, the interval, and a short real match through the referee."""

from __future__ import annotations

import importlib.util
import json
import sys
from types import ModuleType

import pytest
from sdk_helpers import ROOT


def load_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("strength_tool", ROOT / "tests" / "bench" / "tools" / "strength.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


strength = load_tool()


def test_every_bot_sits_in_every_seat_and_both_orders_round_the_table() -> None:
    seatings = [strength.seating(deal, r, 4) for deal in range(2) for r in range(4)]
    for seat in range(4):
        assert sorted(s[seat] for s in seatings[:4]) == [0, 1, 2, 3]
    passes = {(s[i], s[(i + 1) % 4]) for s in seatings for i in range(4)}  # who passes to whom
    assert len(passes) == 8  # each bot passes to the one after it and, on odd deals, before it


def test_wilson_interval() -> None:
    assert strength.wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    low, high = strength.wilson(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
    assert strength.percentile([3.0, 1.0, 2.0, 10.0], 50) == 2.0
    assert strength.percentile([3.0, 1.0, 2.0, 10.0], 100) == 10.0


def test_a_short_match(capsys: pytest.CaptureFixture[str]) -> None:
    bots = [str(ROOT / "example_bots" / name) for name in ("random", "minimal", "random")]
    status = strength.main([*bots, "--games", "5", "--json", "--quiet"])  # rounded up to 6
    out = json.loads(capsys.readouterr().out)
    assert status == 0 and out["problems"] == []
    rows = out["bots"]
    assert [r["bot"] for r in rows] == ["random#0", "minimal", "random#2"]
    assert all(r["games"] == 6 and r["faults"] == 0 and r["decisions"] == 6 * 3 * 8 for r in rows)
    assert sum(r["wins"] for r in rows) == pytest.approx(6)
