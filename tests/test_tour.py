# SPDX-License-Identifier: Apache-2.0
"""The README's tour runs as written, and every other shell block of the README and of docs/*.md is marked
illustrative; their links lead to files and headings that exist.

The tour's commands run one by one, exactly as the README shows them, in a fresh clone of this
repository inside a directory only its owner may enter (as root: the case of ``/root``, where
PostgreSQL and MariaDB, run as their own accounts, cannot reach the state directory). The clone
borrows ``.venv`` and ``build`` of this checkout through links instead of running the set-up again,
and its own code is imported (PYTHONPATH). Each output line the README shows must appear, in order,
in what the command prints; what differs from run to run matches anything of its kind: numbers
(ports, pids, counts, versions), the digest in the servers' data paths, the Tango state (ON, or
ALARM while an attribute's last event was an error). The README's clone location stands for the
clone's.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from hdbbench.stack.servers import homes
from tests.harness import REPO

README = REPO / "README.md"
DOCUMENTS = (README, *sorted((REPO / "docs").glob("*.md")))  # the README and every doc: one harness
TOUR_MARK = "<!-- tour"
ILLUSTRATIVE_MARK = "<!-- illustrative -->"
SHELL_LANGUAGES = {"", "sh", "bash", "shell", "console"}
SHOWN_CLONE = "/root/hdbbench"  # where the README's tour was run
_FENCE = re.compile(r"^```(?P<lang>[\w-]*)\n(?P<body>.*?)^```$", re.M | re.S)
_VOLATILE = re.compile(r"(?P<digest>\b[0-9a-f]{16}\b)|(?P<number>\d+)|(?P<space>\s+)|(?P<state>\b(?:ON|ALARM)\b)")
_VOLATILE_PATTERNS = {"digest": "[0-9a-f]{16}", "number": r"\d+", "space": r"\s+", "state": "(?:ON|ALARM)"}
_LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6} (?P<title>.+)$", re.M)


@dataclass(frozen=True)
class Block:
    lang: str
    body: str
    mark: str  # the non-empty line before the fence


@dataclass(frozen=True)
class Step:
    command: str
    shown: tuple[str, ...]  # the output lines the README shows


def readme_blocks(text: str) -> list[Block]:
    """The fenced blocks of a markdown document (the README or a doc), each with the line that marks it."""
    blocks = []
    for match in _FENCE.finditer(text):
        before = [line for line in text[:match.start()].splitlines() if line.strip()]
        blocks.append(Block(match["lang"], match["body"], before[-1].strip() if before else ""))
    return blocks


def tour_steps(blocks: list[Block]) -> list[Step]:
    steps: list[Step] = []
    for block in blocks:
        if not block.mark.startswith(TOUR_MARK):
            continue
        for line in block.body.splitlines():
            if line.startswith("$ "):
                steps.append(Step(line[2:], ()))
            elif line.strip():
                assert steps, f"README tour: output before the first command: {line!r}"
                steps[-1] = Step(steps[-1].command, (*steps[-1].shown, line))
    return steps


def line_pattern(shown: str, clone: Path) -> re.Pattern[str]:
    text = shown.replace(SHOWN_CLONE, str(clone))
    parts, pos = [], 0
    for match in _VOLATILE.finditer(text):
        parts += [re.escape(text[pos:match.start()]), _VOLATILE_PATTERNS[match.lastgroup or ""]]
        pos = match.end()
    parts.append(re.escape(text[pos:]))
    return re.compile("".join(parts))


def missing_lines(shown: tuple[str, ...], printed: str, clone: Path) -> list[str]:
    """The shown lines that do not appear, in order, among the printed ones."""
    lines = [line.rstrip() for line in printed.splitlines()]
    missing, at = [], 0
    for expected in shown:
        pattern = line_pattern(expected.rstrip(), clone)
        found = next((i for i in range(at, len(lines)) if pattern.fullmatch(lines[i])), None)
        if found is None:
            missing.append(expected)
        else:
            at = found + 1
    return missing


def heading_anchor(title: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (not - or _), spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def _prose(document: Path) -> str:
    """The document without its fenced blocks (a `#` comment in a block is no heading)."""
    return _FENCE.sub("", document.read_text())


def broken_links(document: Path) -> list[str]:
    """The document's relative links whose file, or heading in it, does not exist."""
    broken = []
    for match in _LINK.finditer(_prose(document)):
        target = match["target"]
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto: ...
        path, _, anchor = target.partition("#")
        linked = (document.parent / path).resolve() if path else document
        if not linked.exists():
            broken.append(target)
        elif anchor and anchor not in {heading_anchor(m["title"]) for m in _HEADING.finditer(_prose(linked))}:
            broken.append(target)
    return broken


def test_the_docs_are_checked_and_listed() -> None:
    docs = [d for d in DOCUMENTS if d != README]
    assert docs, "docs/*.md not found: the checks below would pass on nothing"
    index = (REPO / "docs" / "README.md").read_text()
    unlisted = [d.name for d in docs if d.name != "README.md" and f"]({d.name})" not in index]
    assert unlisted == [], f"docs/README.md does not list {unlisted}"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda d: str(d.relative_to(REPO)))
def test_every_shell_block_is_the_tour_or_illustrative(document: Path) -> None:
    blocks = readme_blocks(document.read_text())
    unmarked = [b.body.splitlines()[0] for b in blocks if b.lang in SHELL_LANGUAGES
                and not (b.mark.startswith(TOUR_MARK) or b.mark == ILLUSTRATIVE_MARK)]
    assert unmarked == [], (f"{document.relative_to(REPO)}: shell blocks neither run by a test nor marked "
                            f"{ILLUSTRATIVE_MARK}: {unmarked}")
    steps = tour_steps(blocks)
    if document == README:
        assert steps[0].command.endswith("stack up") and steps[-1].command.endswith("stack down")
    else:  # only the README's tour runs: a tour mark elsewhere would claim a test that does not exist
        assert steps == [], f"{document.relative_to(REPO)}: a block marked {TOUR_MARK} outside the README"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda d: str(d.relative_to(REPO)))
def test_links_lead_to_existing_files_and_headings(document: Path) -> None:
    assert broken_links(document) == []


def test_heading_anchors_are_githubs() -> None:
    assert heading_anchor("A tour: from `stack up` to rows in the database") == \
        "a-tour-from-stack-up-to-rows-in-the-database"
    assert heading_anchor("Extraction, disk usage and sizing on their own") == \
        "extraction-disk-usage-and-sizing-on-their-own"
    assert heading_anchor("A facility's installed hdbpp-es") == "a-facilitys-installed-hdbpp-es"


def test_the_matcher_accepts_other_numbers_and_refuses_other_words(tmp_path: Path) -> None:
    device = "archiving/hdbbench-es/timescaledb-1"
    shown = (f"{device}: ON, 82/82 attributes started, 0 failing, 0 pending, 1678 rows stored",
             f"          data {SHOWN_CLONE}/.hdbbench/tangodb/tango.db")
    printed = (f"{device}: ALARM, 80/82 attributes started, 2 failing, 10 pending, 5 rows stored\n"
               f"   data {tmp_path}/.hdbbench/tangodb/tango.db\n")
    assert missing_lines(shown, printed, tmp_path) == []
    assert missing_lines(shown[::-1], printed, tmp_path) == [shown[0]]  # order matters
    assert missing_lines(shown[:1], printed.replace("rows stored", "rows lost"), tmp_path) == [shown[0]]


@pytest.fixture
def clone_in_private_dir() -> Iterator[Path]:
    parent = Path(tempfile.mkdtemp(prefix="hdbbench-tour-"))  # mode 0700, as /root
    clone = parent / "hdbbench"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True, timeout=120)
    for borrowed in (".venv", "build"):
        (clone / borrowed).symlink_to(REPO / borrowed)
    try:
        yield clone
    finally:
        subprocess.run([str(clone / ".venv" / "bin" / "hdbbench"), "stack", "down"], cwd=clone, env=_env(clone),
                       capture_output=True, timeout=120)
        shutil.rmtree(parent, ignore_errors=True)


def _env(clone: Path) -> dict[str, str]:
    """This environment without what would point the tour at another stack; the clone's code first."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("HDBBENCH_") and k not in ("TANGO_HOST", "PYTHONPATH")}
    return {**env, "PYTHONPATH": str(clone)}


@pytest.mark.skipif(os.geteuid() != 0, reason="the README shows the tour as root (owner root, data in /var/tmp)")
def test_the_tour_runs_as_root_in_a_private_directory(clone_in_private_dir: Path) -> None:
    clone = clone_in_private_dir
    assert stat.S_IMODE(clone.parent.stat().st_mode) == 0o700 and clone.parent.stat().st_uid == 0
    steps = tour_steps(readme_blocks(README.read_text()))
    printed: dict[str, str] = {}
    for step in steps:
        result = subprocess.run(step.command, shell=True, executable="/bin/bash", cwd=clone, env=_env(clone),
                                capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, f"{step.command}: exit {result.returncode}\n{result.stderr}"
        missing = missing_lines(step.shown, result.stdout, clone)
        assert missing == [], f"{step.command}: not printed {missing}\nprinted:\n{result.stdout}"
        printed[step.command] = result.stdout
    counted = next(out for command, out in printed.items() if " data count " in f"{command} ")
    rows = re.search(r": (\d+) rows of (\d+) attributes", counted)
    assert rows is not None and int(rows[1]) > 0 and int(rows[2]) > 0, counted
    state = clone / ".hdbbench"
    assert not homes.home_path(state, "postgres").parent.exists(), "stack down leaves the servers' homes"
    left = [p for p in psutil.process_iter(["cmdline"]) if any(str(clone) in arg for arg in p.info["cmdline"] or ())]
    assert left == [], f"left running after stack down: {[p.info['cmdline'] for p in left]}"
