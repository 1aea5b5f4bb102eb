"""A protocol-v1 bot (standard library only) that plays a random legal card, except for
one misbehaviour: the tests write it out as a single-file bot with ``main(FAULT)`` added
at the end (a bot runs from a copy of its own files alone: it cannot import this)."""

import json
import random
import sys
import time


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main(fault: str) -> None:
    rng = random.Random(0)
    first_act = True
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["type"]
        if kind == "hello":
            if fault == "silent_hello":
                continue  # never answers: the validator's hello times out
            version = 2 if fault == "version" else 1
            send({"type": "hello", "re": msg["id"], "version": version, "name": fault})
        elif kind == "game_start":
            rng = random.Random(msg["seed"])
            first_act = True
            send({"type": "ready", "re": msg["id"]})
        elif kind == "act":
            legal = msg["legal"]
            singles = [p for p in legal if len(p["cards"]) == 1] or legal
            reply = {"type": "action", "re": msg["id"], **rng.choice(singles)}
            if fault == "chopsticks_crash" and len(singles) < len(legal):
                raise RuntimeError("two-card plays: this bot never expected them")
            if fault == "illegal":
                reply["cards"] = [999]
            if fault == "dummy_ignored":
                reply.pop("dummy_card", None)  # one card where the dummy's card is required too
            if fault == "non_json":
                sys.stdout.write("thinking about my move...\n")
                sys.stdout.flush()
            if fault == "slow" and first_act:
                time.sleep(0.3)  # the first decision of every game comes late
            first_act = False
            send(reply)
        elif kind == "game_over":
            send({"type": "ack", "re": msg["id"]})
        elif kind == "shutdown":
            break
