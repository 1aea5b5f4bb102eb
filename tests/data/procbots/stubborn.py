"""A test bot that ignores SIGTERM and never reads its stdin: only SIGKILL ends it."""

import signal
import sys
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
sys.stdout.write("ready\n")
sys.stdout.flush()
while True:
    time.sleep(1)
