"""Broken on purpose for the validator's tests: see _broken.py."""

from _broken import main

main("slow")
