"""The whole protocol in ~30 lines of standard-library Python (no SDK).

Read one JSON line, answer one JSON line with `re` = the request's `id`, flush.
An entry of `legal` has exactly the fields of an action, so echoing one back is
always a legal answer, in every variant (dummy_card included).
"""

import json
import random
import sys

rng = random.Random(0)


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()  # without this the referee waits for an answer that sits in a buffer


for line in sys.stdin:
    msg = json.loads(line)
    kind, msg_id = msg["type"], msg.get("id")
    if kind == "hello":
        send({"type": "hello", "re": msg_id, "version": 1, "name": "minimal", "bot_version": "1"})
    elif kind == "game_start":
        rng = random.Random(msg["seed"])  # seeded by the referee: the same game plays the same way
        send({"type": "ready", "re": msg_id})
    elif kind == "act":
        play = rng.choice(msg["legal"])
        send({"type": "action", "re": msg_id, **play})
    elif kind == "game_over":
        send({"type": "ack", "re": msg_id})
    elif kind == "shutdown":
        break
