"""Every nested settings object is parsed with its real field types: a valid value sent by an editor is
kept and reported as no problem (history's and sync's numbers were refused as "invalid" while their
classes' postponed annotations stayed strings)."""

from __future__ import annotations

import attrs

from kin_memory.editor_settings import Settings, parse_settings


def test_valid_history_and_sync_values_are_kept_without_a_problem():
    settings, problems = parse_settings(
        {
            "history": {"keepVersions": 7, "keepDays": 30, "maxMegabytes": 12.5},
            "sync": {"intervalMinutes": 15, "afterWrites": True},
        }
    )
    assert problems == []
    assert (settings.history.keep_versions, settings.history.keep_days, settings.history.max_megabytes) == (
        7,
        30.0,
        12.5,
    )
    assert (settings.sync.interval_minutes, settings.sync.after_writes) == (15.0, True)


def test_an_invalid_nested_value_is_still_reported_and_defaulted():
    settings, problems = parse_settings(
        {"history": {"keepVersions": 0}, "sync": {"intervalMinutes": "often"}}
    )
    assert sorted(p.key for p in problems) == ["history.keepVersions", "sync.intervalMinutes"]
    assert settings.history.keep_versions == 20 and settings.sync.interval_minutes == 0.0


def test_every_nested_settings_class_has_resolved_field_types():
    unresolved = [
        f"{cls.__name__}.{f.name}"
        for cls in (Settings, *(f.type for f in attrs.fields(Settings) if attrs.has(f.type)))
        for f in attrs.fields(cls)
        if isinstance(f.type, str)
    ]
    assert unresolved == []
