"""A small protocol-v1 test bot (standard library only) with switchable misbehaviour.

    python testbot.py [--mode MODE] [--at R.T] [--name NAME]

It plays a seeded random legal play every turn (the seed comes from game_start),
and at the turn R.T of every game (default 1.2) misbehaves as MODE says:

  ok          never misbehaves
  first       always plays legal[0] (deterministic without a seed)
  hello_silent never answers hello
  late        answers this act after sleeping past the deadline (--sleep seconds)
  sleep       stops answering for good at R.T
  badjson     sends a line that is not JSON
  wrongshape  sends valid JSON of the wrong shape (cards as a string)
  illegal     names a card id that exists in no hand (999)
  otherseat   names a card that is now in another seat's hand (one it passed on)
  exit        exits with status 3 at R.T
  wrongre     answers with a wrong `re`
  stale       answers twice: the second, extra answer arrives during the next act
  longline    sends a line longer than the cap
  chatty      writes 200 KB to stderr every turn
  slow        sleeps --sleep seconds before every reply (hello, ready, action, ack)

--log FILE appends every line received to FILE (for hidden-information checks).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time

SLOW = 0.0  # seconds to sleep before every reply (--mode slow)


def send(obj: dict) -> None:
    if SLOW:
        time.sleep(SLOW)
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="ok")
    parser.add_argument("--at", default="1.2")
    parser.add_argument("--name", default="testbot")
    parser.add_argument("--sleep", type=float, default=1.5)
    parser.add_argument("--log", default=None)
    args = parser.parse_args()
    if args.mode == "slow":
        global SLOW
        SLOW = args.sleep
    log = open(args.log, "a", encoding="utf-8") if args.log else None  # noqa: SIM115
    at_round, at_turn = (int(x) for x in args.at.split("."))
    rng = random.Random(0)
    previous_hand: list[int] = []
    previous_play: list[int] = []
    for line in sys.stdin:
        if log is not None:
            log.write(line)
            log.flush()
        msg = json.loads(line)
        kind = msg["type"]
        if kind == "hello":
            if args.mode == "hello_silent":
                continue
            send({"type": "hello", "re": msg["id"], "version": 1, "name": args.name, "bot_version": "1"})
        elif kind == "game_start":
            rng = random.Random(msg["seed"])
            send({"type": "ready", "re": msg["id"]})
        elif kind == "act":
            here = (msg["round"], msg["turn"]) == (at_round, at_turn)
            legal = msg["legal"]
            play = legal[0] if args.mode == "first" else legal[rng.randrange(len(legal))]
            reply = {"type": "action", "re": msg["id"], **play}
            if args.mode == "chatty":
                sys.stderr.write("x" * 200_000 + "\n")
                sys.stderr.flush()
            if here and args.mode == "late":
                time.sleep(args.sleep)
            elif here and args.mode == "sleep":
                time.sleep(3600)
            elif here and args.mode == "badjson":
                sys.stdout.write("{this is not json\n")
                sys.stdout.flush()
                continue
            elif here and args.mode == "wrongshape":
                reply["cards"] = "all of them"
            elif here and args.mode == "illegal":
                reply["cards"] = [999]
            elif here and args.mode == "otherseat":
                passed_on = [c for c in previous_hand if c not in previous_play]
                reply["cards"] = [passed_on[0]]
            elif here and args.mode == "exit":
                sys.exit(3)
            elif here and args.mode == "wrongre":
                reply["re"] = msg["id"] + 1000
            elif here and args.mode == "longline":
                reply["debug"] = "y" * 70_000
            send(reply)
            if here and args.mode == "stale":
                time.sleep(0.05)
                send(reply)  # a second answer to the same request: must be discarded
            previous_hand = [c["id"] for c in msg["hand"]]
            previous_play = list(play["cards"]) + ([play["dummy_card"]] if "dummy_card" in play else [])
        elif kind == "game_over":
            send({"type": "ack", "re": msg["id"]})
        elif kind == "shutdown":
            return


if __name__ == "__main__":
    main()
