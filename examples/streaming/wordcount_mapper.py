#!/usr/bin/env python3
"""WordCount's mapper for a Camdoop streaming job: a "word<TAB>1" line for every word of every input line.

A word is a maximal run of ASCII letters and digits, lower-cased, as in the built-in wordcount job: every other byte,
every byte of a non-ASCII character included, separates words. Input is read as bytes, so any encoding passes.
"""
import re
import sys

WORD = re.compile(rb"[A-Za-z0-9]+")


def main():
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        words = WORD.findall(line)
        if words:
            out.write(b"".join(word.lower() + b"\t1\n" for word in words))


if __name__ == "__main__":
    main()
