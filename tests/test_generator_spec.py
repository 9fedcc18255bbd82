# SPDX-License-Identifier: Apache-2.0
"""The Python engine against the value function's test vectors (devices/spec/value-vectors.json).

The C++ engine is checked against the same file by its GoogleTest (hdbbench-gen-tests); this side
checks the file is exactly what the Python reference computes, so neither can drift alone.
"""

from __future__ import annotations

import importlib.util
import json
import struct
from pathlib import Path

import numpy as np

from hdbbench.load import emitter as em
from hdbbench.model import valuefn as vf

SPEC_DIR = Path(__file__).resolve().parents[1] / "devices" / "spec"


def _make_vectors():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("make_vectors", SPEC_DIR / "make_vectors.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_vectors_are_what_the_python_engine_computes() -> None:
    committed = (SPEC_DIR / "value-vectors.json").read_text()
    assert _make_vectors().document() == committed, \
        "the value function changed: run python devices/spec/make_vectors.py and update value-function.md"


def test_vectors_cover_every_type_format_and_model() -> None:
    doc = json.loads((SPEC_DIR / "value-vectors.json").read_text())
    covered = {(c["spec"]["type"], c["spec"]["format"], c["spec"]["model"]) for c in doc["cases"]}
    for type_name, info in em.TYPES.items():
        for fmt in em.FORMATS:
            if info.kind == "encoded" and fmt != "SCALAR":
                continue
            for model in em.MODELS[info.kind]:
                assert (type_name, fmt, model) in covered
    qualities = {e[1] for c in doc["cases"] for e in c["events"]}
    assert {em.VALID, em.INVALID, em.ALARM, em.WARNING} <= qualities
    assert any(e[2] for c in doc["cases"] for e in c["events"])


def test_sin2pi_follows_the_sine() -> None:
    t = np.linspace(-3.0, 3.0, 10001)
    assert np.max(np.abs(vf.sin2pi(t) - np.sin(2 * np.pi * t))) < 1e-9


def test_draws_are_uniform_enough_and_independent_of_blocking() -> None:
    base = vf.stream_base(1, "a/b/c/d")
    ks = np.arange(0, 20000, dtype=np.int64)
    u = vf.unit(vf.draws(vf.event_words(base, ks), vf.SLOT_VALUE, 1)[:, 0])
    assert 0.49 < u.mean() < 0.51 and u.min() >= 0.0 and u.max() < 1.0
    halves = np.concatenate([vf.event_words(base, ks[:7]), vf.event_words(base, ks[7:])])
    assert np.array_equal(halves, vf.event_words(base, ks))
    assert vf.mix64(0x0123456789ABCDEF) == int(vf.mix64_array(np.array([0x0123456789ABCDEF], dtype=np.uint64))[0])


def test_walk_positions_do_not_depend_on_the_block_size() -> None:
    spec = em.AttrSpec(name="w", model="walk", amplitude=3.0, step=0.2, format="SPECTRUM", dim_x=3)
    whole = em.EventStream(5, "x/y/z/w", spec)
    direct = [whole.event(k).value for k in range(0, 2000, 97)]
    fresh = em.EventStream(5, "x/y/z/w", spec)
    backwards = [fresh.event(k).value for k in reversed(range(0, 2000, 97))][::-1]
    assert all(np.array_equal(a, b) for a, b in zip(direct, backwards))
    assert struct.pack("<d", float(direct[-1][0])) == struct.pack("<d", float(backwards[-1][0]))
