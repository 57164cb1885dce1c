#!/usr/bin/env python3
"""Checks that every relative link in the project's Markdown resolves.

For README.md, BENCHMARKS.md, CHANGELOG.md, docs/*.md and the crates' and examples'
READMEs: each relative link `[text](path)`, `[text](path#anchor)`, `[text](#anchor)` and
reference definition `[id]: path` must name a file or directory that exists, and an
anchor must name a heading of the Markdown file it points into (GitHub's slugs).
External links (http, https, mailto) are not fetched. Links inside code blocks and code
spans are ignored, as are rustdoc intra-doc links (`[Type]`, `[text](crate::path)`),
which `cargo doc` checks. Standard library only.

Usage: scripts/check-links.py [FILE.md ...]   (default: the project's documentation)
Exit status 1 lists every broken link as FILE:LINE: target: problem.
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Pages that may be linked before they exist (none).
EXPECTED_ELSEWHERE: set[str] = set()

DEFAULT_GLOBS = [
    "README.md",
    "BENCHMARKS.md",
    "CHANGELOG.md",
    "docs/*.md",
    "*/README.md",
    "examples/*/README.md",
    "tests/*/README.md",
]

INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")


def strip_code_spans(line):
    return CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


def prose_lines(text):
    """(line number, line) for lines outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m:
            marker = m.group(1)
            if fence is None:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence):
                fence = None
            continue
        if fence is None:
            yield number, line


def slug(heading):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links keep their text
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


_anchor_cache = {}


def anchors(path):
    if path not in _anchor_cache:
        found, seen = set(), {}
        text = path.read_text(encoding="utf-8")
        for _, line in prose_lines(text):
            m = HEADING.match(line)
            if m:
                base = slug(m.group(2))
                n = seen.get(base, 0)
                seen[base] = n + 1
                found.add(base if n == 0 else f"{base}-{n}")
            found.update(HTML_ANCHOR.findall(line))
        _anchor_cache[path] = found
    return _anchor_cache[path]


def is_intra_doc(target):
    # rustdoc paths such as `crate::module::Item`, `Self::method`, `super::Item`.
    return "::" in target and "/" not in target and not target.endswith(".md")


def check_link(source, target):
    """None if `target`, written in `source`, resolves; else the problem."""
    if not target or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) and not is_intra_doc(target):
        return None  # external (http:, https:, mailto:) or empty
    if is_intra_doc(target):
        return None
    path_part, _, anchor = target.partition("#")
    if path_part:
        resolved = (source.parent / path_part).resolve()
        try:
            rel = resolved.relative_to(ROOT).as_posix()
        except ValueError:
            return "points outside the repository"
        if not resolved.exists():
            if rel in EXPECTED_ELSEWHERE:
                return None
            return "no such file"
    else:
        resolved = source
    if anchor and resolved.is_file() and resolved.suffix == ".md":
        if anchor not in anchors(resolved):
            return f"no heading with anchor #{anchor}"
    return None


def links(text):
    for number, line in prose_lines(text):
        line = strip_code_spans(line)
        for m in INLINE.finditer(line):
            yield number, m.group(1)
        m = REFDEF.match(line)
        if m:
            yield number, m.group(1)


def main(argv):
    if argv:
        files = [Path(a).resolve() for a in argv]
    else:
        files = sorted({p.resolve() for g in DEFAULT_GLOBS for p in ROOT.glob(g)})
        files = [f for f in files if "target" not in f.relative_to(ROOT).parts]
    problems, checked = [], 0
    for source in files:
        text = source.read_text(encoding="utf-8")
        for number, target in links(text):
            checked += 1
            problem = check_link(source, target)
            if problem:
                rel = source.relative_to(ROOT).as_posix()
                problems.append(f"{rel}:{number}: {target}: {problem}")
    for p in problems:
        print(p)
    print(f"{checked} links in {len(files)} files, {len(problems)} broken")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
