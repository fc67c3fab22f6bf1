#!/usr/bin/env python3
"""Summarises bench/crosschecks_workloads.sh's figures.tsv as Markdown: per configuration and
figure, each tool's median [min-max] over the repetitions, and schedlab's ratio to each peer
taken pair by pair (same repetition) and then the median of those ratios."""
import csv
import statistics
import sys
from collections import defaultdict

rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
vals = defaultdict(dict)  # (part, config, figure) -> tool -> {rep: value}
for r in rows:
    try:
        v = float(r["value"])
    except ValueError:
        continue
    vals[(r["part"], r["config"], r["figure"])].setdefault(r["tool"], {})[r["rep"]] = v


def fmt(x):
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"


current = None
for (part, config, figure), tools in vals.items():
    if part != current:
        current = part
        print(f"\n### {part}\n")
        print("| config | figure | tool | n | median [min-max] | schedlab / tool, median of paired ratios [min-max] |")
        print("|---|---|---|---|---|---|")
    sl = tools.get("schedlab", {})
    for tool, by_rep in tools.items():
        xs = list(by_rep.values())
        cell = f"{fmt(statistics.median(xs))} [{fmt(min(xs))}-{fmt(max(xs))}]"
        ratio = ""
        if tool != "schedlab" and sl:
            rs = [sl[k] / v for k, v in by_rep.items() if k in sl and v > 0]
            if rs:
                ratio = f"{statistics.median(rs):.2f} [{min(rs):.2f}-{max(rs):.2f}]"
        print(f"| {config} | {figure} | {tool} | {len(xs)} | {cell} | {ratio} |")
