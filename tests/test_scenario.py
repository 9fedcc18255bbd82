# SPDX-License-Identifier: Apache-2.0
"""Scenario files are validated completely, with errors that name the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from hdbbench.backends.registry import backend_class
from hdbbench.model.errors import ConfigError
from hdbbench.model.hdbtypes import AttrFormat, TangoType
from hdbbench.scenario.scenario import load_scenario
from tests.harness import REPO

GOOD = """
name = "small"
seed = 7
backends = ["timescaledb", "mysql"]
[stack]
profile = "durable"
[subscribers]
count = 2
lib_configuration = { batch_size = 512 }
[load]
rate = 1500
duration_s = 20
warmup_s = 5
[measurements]
batch_sweep = [64, 128]
saturation = { start_rate = 1000, step = 0.1, step_s = 7, max_steps = 3 }
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "scenario.toml"
    path.write_text(text)
    return path


def test_a_good_scenario_resolves_with_defaults(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, GOOD))
    assert scenario.name == "small" and scenario.seed == 7
    assert scenario.backends == ("timescaledb", "mysql")
    assert scenario.profile == "durable" and scenario.subscribers == 2
    assert dict(scenario.lib_configuration) == {"batch_size": "512"}
    assert scenario.measurements.batch_sweep == (64, 128)
    assert scenario.measurements.saturation is not None and scenario.measurements.saturation.max_steps == 3
    assert scenario.to_dict()["lib_configuration"] == {"batch_size": "512"}


@pytest.mark.parametrize(
    ("edit", "line", "message"),
    [
        (('backends = ["timescaledb", "mysql"]', 'backends = ["oracle"]'), 4,
         "backends: names an unknown backend 'oracle'"),
        (('name = "small"', ""), None, "name: is missing"),
        (("rate = 1500", "rate = -5"), 11, "[load] rate: must be > 0, got -5"),
        (("warmup_s = 5", "warmup_s = 50"), 13, "[load] warmup_s: must be shorter than duration_s (20), got 50"),
        (('profile = "durable"', 'profile = "fast"'), 6, "[stack] profile: must be one of durable, relaxed"),
        (("count = 2", "count = 2\ncolour = 1"), 9, "[subscribers] colour: unknown key"),
        (("warmup_s = 5", "warmup = 5"), 13, "[load] warmup: unknown key; did you mean 'warmup_s'?"),
        (("batch_sweep = [64, 128]", "batch_sweep = [64, 0]"), 15,
         "[measurements] batch_sweep: must be a list of integers >= 1"),
        (("seed = 7", 'seed = "seven"'), 3, "seed: must be an integer"),
        (("[load]", "[load"), 10, "not valid TOML"),
        (("step_s = 7", "step_s = 5"), 16,
         "[measurements.saturation] step_s: must be >= 7 s, got 5: Elettra's rule needs"),
    ],
)
def test_a_broken_scenario_is_refused_naming_file_line_and_key(tmp_path: Path, edit: tuple[str, str], line: int | None,
                                                               message: str) -> None:
    path = write(tmp_path, GOOD.replace(*edit))
    with pytest.raises(ConfigError) as caught:
        load_scenario(path)
    where = f"{path}:{line}: " if line else f"{path}: "
    assert str(caught.value).startswith(where + message)
    assert "\n" not in str(caught.value)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="nope.toml: scenario file not found"):
        load_scenario(tmp_path / "nope.toml")


def test_the_device_profile_is_validated_with_the_scenario(tmp_path: Path) -> None:
    missing = write(tmp_path, GOOD + '[devices]\nprofile = "no/such/profile.toml"\n')
    with pytest.raises(ConfigError, match=r"scenario\.toml:\d+: \[devices\] profile: names a file that does not exist"):
        load_scenario(missing)
    broken = tmp_path / "broken-profile.toml"
    broken.write_text('[profile]\nname = "b"\n[[attribute]]\nname = "a"\nrate_hz = -1\n')
    with pytest.raises(ConfigError, match=r"broken-profile\.toml:5: \[\[attribute\]\] #1 \('a'\): .*rate_hz"):
        load_scenario(write(tmp_path, GOOD + f'[devices]\nprofile = "{broken}"\n'))


def test_a_device_mix_a_backend_cannot_hold_is_refused_in_one_line(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # Every HDB++ backend holds every type; a what-if engine may not (Backend.cannot_hold). Give one
    # registered backend such a limit for the test and check that validation names it.
    mix = tmp_path / "mix.toml"
    mix.write_text('[profile]\nname = "m"\n[[attribute]]\nname = "enc"\ntype = "DevEncoded"\n'
                   '[[attribute]]\nname = "d"\ntype = "DevDouble"\n')
    load_scenario(write(tmp_path, GOOD + f'[devices]\nprofile = "{mix}"\n'))  # held: accepted
    monkeypatch.setattr(backend_class("mysql"), "cannot_hold", classmethod(
        lambda cls, t, f: "no blobs here" if (t, f) == (TangoType.DEV_ENCODED, AttrFormat.SCALAR) else None))
    with pytest.raises(ConfigError, match=r"scenario\.toml:\d+: backends: backend mysql cannot hold devencoded "
                                          r"scalar attributes of the device mix \(no blobs here\)$"):
        load_scenario(write(tmp_path, GOOD + f'[devices]\nprofile = "{mix}"\n'))


def test_a_table_fault_on_a_backend_without_table_faults_is_refused_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    faults = '[faults]\nkinds = ["table_lock"]\n'
    load_scenario(write(tmp_path, GOOD + faults))  # every backend of GOOD has the ability: accepted
    monkeypatch.setattr(backend_class("mysql"), "faults", classmethod(lambda cls: None))
    with pytest.raises(ConfigError, match=r"scenario\.toml:\d+: \[faults\] kinds: table_lock: backend mysql has "
                                          r"no table faults"):
        load_scenario(write(tmp_path, GOOD + faults))


@pytest.mark.parametrize(("edit", "key"), [
    ('[schema]\nvariant = "pk+2"\n', r"\[schema\] variant"),
    ('[schema]\nvariant = "pk"\n[extraction]\nquery_set = "query_sets/small.toml"\nvariants = ["pk", "pk+2"]\n', r"\[extraction\] variants"),
])
def test_a_variant_a_backend_cannot_build_is_refused_in_one_line(tmp_path: Path, edit: str, key: str) -> None:
    text = GOOD.replace('backends = ["timescaledb", "mysql"]', 'backends = ["timescaledb", "clickhouse"]')
    load_scenario(write(tmp_path, text + '[schema]\nvariant = "pk"\n'))  # the primary key alone: both build it
    with pytest.raises(ConfigError, match=rf"scenario\.toml:\d+: {key}: 'pk\+2' on backend clickhouse: .*does not apply$"):
        load_scenario(write(tmp_path, text + edit))


def test_quick_cuts_the_default_scenario_down_and_says_so() -> None:
    from hdbbench.run.quick import quick

    full = load_scenario(REPO / "scenarios" / "default.toml")
    cut = quick(full)
    assert cut.quick and not full.quick and cut.name == "default-quick" and cut.to_dict()["quick"] is True
    assert cut.backends == full.backends and cut.seed == full.seed
    assert cut.duration_s < full.duration_s and cut.duration_s >= cut.warmup_s + 5
    assert cut.measurements.batch_sweep == (64, 8192)
    sat, full_sat = cut.measurements.saturation, full.measurements.saturation
    assert sat is not None and full_sat is not None and sat.mode == "bisect" == full_sat.mode
    assert sat.resolution == max(0.10, 2 * full_sat.resolution) > full_sat.resolution and sat.max_steps <= 12
    assert cut.extraction is not None and not cut.extraction.cold and len(cut.extraction.variants) == 1
    assert cut.disk is not None and full.disk is not None and cut.disk.events == full.disk.events // 4
