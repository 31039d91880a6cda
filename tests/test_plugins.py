"""`helper_agent.plugins.Registry`, the lookup the method and memory registries share: the order a
name is looked up in, the order names are listed in, and a broken distribution that must not hide
the built-ins."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest

from helper_agent import plugins
from helper_agent.plugins import Registry

GROUP = "helper_agent.test_plugins"


class Unknown(ValueError):
    pass


def registry(**extra: object) -> Registry[object]:
    return Registry(group=GROUP, builtins={"zeta": "json:dumps", "alpha": "json:loads"}, noun="thing",
                    unknown="no thing {name!r}; choose {choices}", error=Unknown, **extra)  # type: ignore[arg-type]


def test_lookup_order_and_listing(monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    installed = EntryPoint(name="beta", value="json:JSONDecoder", group=GROUP)
    monkeypatch.setattr(plugins, "entry_points", lambda group: [installed] if group == GROUP else [])
    things = registry()
    things.register("gamma", len)
    assert things.names() == ["zeta", "alpha", "beta", "gamma"]  # built-ins in their order, then sorted
    assert registry(sorted_names=True).names() == ["alpha", "beta", "zeta"]
    assert things.get("zeta") is json.dumps and things.get("beta") is json.JSONDecoder and things.get("gamma") is len
    with pytest.raises(ValueError, match="a thing named 'alpha' is already registered"):
        things.register("alpha", len)
    things.register("alpha", print, replace=True)  # a registration wins over the built-in
    assert things.get("alpha") is print
    with pytest.raises(Unknown, match="no thing 'nope'; choose zeta, alpha, beta, gamma"):
        things.get("nope")


def test_an_entry_point_is_adopted_or_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    entries = [EntryPoint(name="good", value="json:dumps", group=GROUP),
               EntryPoint(name="broken", value="no_such_module_xyz:Thing", group=GROUP)]
    monkeypatch.setattr(plugins, "entry_points", lambda group: entries)

    def adopt(name: str, loaded: object, entry: EntryPoint) -> object:
        return (name, loaded.__name__, entry.value)  # type: ignore[attr-defined]

    assert registry(adopt=adopt).get("good") == ("good", "dumps", "json:dumps")
    with pytest.raises(Unknown, match=r"thing 'broken' \(entry point 'no_such_module_xyz:Thing' in group "
                                      r"'helper_agent.test_plugins'\) failed to load"):
        registry().get("broken")


def test_unreadable_metadata_leaves_the_builtins(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    def broken(group: str) -> list[EntryPoint]:
        raise OSError("a distribution's metadata is unreadable")

    monkeypatch.setattr(plugins, "entry_points", broken)
    things = registry()
    assert things.names() == ["zeta", "alpha"]
    with pytest.raises(Unknown, match="no thing 'beta'; choose zeta, alpha"):
        things.get("beta")
    assert "cannot read entry points of group helper_agent.test_plugins" in caplog.text
