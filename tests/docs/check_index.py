#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""docs/README.md indexes every page of docs/, and each page it links to
exists. usage: check_index.py DOCS_DIR"""
import os
import re
import sys


def main():
    docs = sys.argv[1]
    with open(os.path.join(docs, "README.md")) as f:
        links = set(re.findall(r"\]\(([\w.-]+\.md)\)", f.read()))
    pages = {p for p in os.listdir(docs) if p.endswith(".md")} - {"README.md"}
    bad = [f"docs/README.md does not index {p}" for p in sorted(pages - links)]
    bad += [f"docs/README.md links to {p}, which does not exist"
            for p in sorted(links - pages)]
    print("\n".join(bad) or f"docs/README.md indexes all {len(pages)} pages")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
