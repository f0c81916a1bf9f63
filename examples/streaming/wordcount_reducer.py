#!/usr/bin/env python3
"""WordCount's reducer, and its combiner, for a Camdoop streaming job: one "word<TAB>count" line per word.

Its input is "word<TAB>count" lines sorted by word, so the lines of one word are adjacent; it sums their counts.
"""
import sys


def main():
    out = sys.stdout.buffer
    current, total = None, 0
    for line in sys.stdin.buffer:
        word, _, count = line.rstrip(b"\n").partition(b"\t")
        if word != current:
            if current is not None:
                out.write(b"%s\t%d\n" % (current, total))
            current, total = word, 0
        total += int(count)
    if current is not None:
        out.write(b"%s\t%d\n" % (current, total))


if __name__ == "__main__":
    main()
