# SPDX-License-Identifier: Apache-2.0
"""How the fixture beside this file was made: ``python trim.py <format-1 run dir> <fixture dir>``.

It keeps two backends of a real format-1 default run and fewer records; every number it keeps is
the run's own, unchanged (the per-attribute accounting lists are shortened, the totals stay).
"""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path
from typing import Any

KEEP = ("timescaledb", "mysql")
PER_ATTRIBUTE = 3          # entries of a trial's accounting.per_attribute kept
CSV_ROWS = 40              # rows of a part's CSV kept (of the kept backends)
CASES = {("devdouble", "scalar"), ("devlong", "scalar"), ("devboolean", "scalar"), ("devstring", "scalar"),
         ("devdouble", "spectrum")}


def load(path: Path) -> Any:
    return json.loads(path.read_text())


def dump(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")


def trim_csv(src: Path, dest: Path) -> None:
    with open(src, newline="") as given, open(dest, "w", newline="") as out:
        reader, writer = csv.reader(given), csv.writer(out)
        head = next(reader)
        writer.writerow(head)
        rows = [row for row in reader if dict(zip(head, row)).get("backend", KEEP[0]) in KEEP]
        writer.writerows(rows[:CSV_ROWS])


def trim_insertion(src: Path, dest: Path) -> None:
    doc = load(src / "results.json")
    trials = [t for t in doc["results"]["trials"] if t["backend"] in KEEP]
    for trial in trials:
        trial["accounting"]["per_attribute"] = trial["accounting"]["per_attribute"][:PER_ATTRIBUTE]
        (dest / "series").mkdir(exist_ok=True)
        shutil.copy2(src / "series" / f"{trial['label']}.csv", dest / "series" / f"{trial['label']}.csv")
    doc["results"]["trials"] = trials
    dump(dest / "results.json", doc)


def trim_extraction(doc: dict[str, Any]) -> dict[str, Any]:
    results = doc["results"]
    group = results["summary"][0]["group"]
    results["summary"] = [s for s in results["summary"] if s["backend"] in KEEP and s["group"] == group]
    results["fits"] = [f for f in results.get("fits") or [] if f["backend"] in KEEP and f["group"] == group]
    results["queries"] = (results.get("queries") or [])[:2]
    for key in ("loads", "clustering"):
        if isinstance(results.get(key), list):
            results[key] = [x for x in results[key] if not isinstance(x, dict) or x.get("backend") in KEEP]
    checksums = (results.get("validation") or {}).get("checksums")
    if isinstance(checksums, dict):
        results["validation"]["checksums"] = dict(list(checksums.items())[:2])
    return doc


def trim_disk(doc: dict[str, Any], variant: str) -> dict[str, Any]:
    """The cases of the run's schema variant (the one the ranking reads) and a few types."""
    results = doc["results"]
    results["cases"] = [c for c in results["cases"] if c["backend"] in KEEP and c["case_write"] == "ro"
                        and c["variant"] == variant and (c["case_type"], c["case_format"]) in CASES]
    for key in ("fits", "variants", "inventory_runs"):
        results[key] = [x for x in results.get(key) or [] if x.get("backend") in KEEP]
    return doc


def trim_part(src: Path, dest: Path, part: str, trim: Any) -> None:
    """The part's copy beside the results and its own run directory, trimmed alike."""
    (sub,) = [p for p in (src / part).iterdir() if p.is_dir()]
    copied = load(src / f"{part}.json")
    assert copied == load(sub / "results.json"), f"{part}.json is not the copy of its run's results.json"
    doc = trim(copied)
    dump(dest / f"{part}.json", doc)
    out = dest / part / sub.name
    dump(out / "results.json", doc)
    shutil.copy2(sub / "status.json", out / "status.json")
    for csv_file in sub.glob("*.csv"):
        trim_csv(csv_file, out / csv_file.name)


def main(src: Path, dest: Path) -> None:
    dest.mkdir(parents=True)
    for name in ("status.json", "scenario.json", "environment.json"):
        shutil.copy2(src / name, dest / name)
    trim_insertion(src, dest)
    trim_part(src, dest, "extraction", trim_extraction)
    variant = load(src / "scenario.json")["schema_variant"]
    trim_part(src, dest, "disk", lambda doc: trim_disk(doc, variant))
    sizing = load(src / "sizing.json")
    sizing["results"]["projections"] = [p for p in sizing["results"]["projections"] if p["backend"] in KEEP]
    dump(dest / "sizing.json", sizing)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
