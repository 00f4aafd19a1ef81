"""Engine references and plug-ins: `name?option=...`, `package.module:Class`, entry points,
and the listing `memeval engines` prints."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from memeval.engines import registry
from memeval.engines.adapters.http import HttpEngine
from memeval.engines.naive import NaiveEngine
from memeval.engines.registry import create, describe, parse_ref, with_options
from memeval.errors import UsageError

TOY = """
from pydantic import Field
from pydantic_settings import SettingsConfigDict

from memeval.engines.adapters.settings import EngineSettings
from memeval.engines.naive import NaiveEngine


class ToySettings(EngineSettings):
    model_config = SettingsConfigDict(env_prefix="TOY_")
    engine = "toy"
    url: str = "http://127.0.0.1:1"
    flavour: str = Field(default="plain", description="How it tastes.")


class ToyEngine(NaiveEngine):
    name = "toy"
    settings_model = ToySettings

    def __init__(self, settings: ToySettings) -> None:
        super().__init__()
        self.flavour = settings.flavour


class NotAnEngine:
    pass
"""


@pytest.fixture
def plugin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An installed plug-in package: a module and a dist-info with entry points."""
    (tmp_path / "toy_engine.py").write_text(TOY)
    info = tmp_path / "toy_engine-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-engine\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        textwrap.dedent(
            """
            [memeval.engines]
            toy = toy_engine:ToyEngine
            broken = toy_engine:Missing
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_references_carry_plain_options():
    ref = parse_ref("http?url=http%3A%2F%2Fh%3A8080%2Fbase&timeout=5")
    assert ref.name == "http" and ref.options == {"url": "http://h:8080/base", "timeout": "5"}
    assert parse_ref("http?url=http://h:8080").options == {"url": "http://h:8080"}
    folded = with_options("http", url="http://h:1/x?y=1", enrich_wait=None)
    assert parse_ref(folded).options == {"url": "http://h:1/x?y=1"}
    with pytest.raises(UsageError, match="set twice"):
        with_options("http?url=http://a", url="http://b")
    with pytest.raises(UsageError, match="given twice"):
        parse_ref("http?url=a&url=b")
    with pytest.raises(UsageError, match="cannot read"):
        parse_ref("http?no-equals-sign")


def test_settings_come_from_the_environment_and_the_reference(monkeypatch):
    monkeypatch.setenv("MEMEVAL_HTTP_TOKEN", "t0ken-value")
    monkeypatch.setenv("MEMEVAL_HTTP_URL", "http://from-env:1")
    engine = create("http")
    assert isinstance(engine, HttpEngine) and engine.settings.url == "http://from-env:1"
    assert create("http?url=http://from-ref:2").settings.url == "http://from-ref:2"
    assert "t0ken-value" not in repr(engine) + repr(engine.settings) + repr(engine.transport)


@pytest.mark.parametrize(
    ("ref", "needle"),
    [
        ("http?url=ftp://x", "not an http(s) URL"),
        ("http?url=not a url", "not an http(s) URL"),
        ("http?token=abc", "is a secret"),
        ("http?retries=-1", "retries"),
        ("http?colour=red", "has no option `colour`"),
        ("naive?x=1", "takes no options"),
    ],
)
def test_bad_references_say_what_to_change(monkeypatch, ref, needle):
    monkeypatch.setenv("MEMEVAL_HTTP_TOKEN", "t0ken-value")
    monkeypatch.setenv("MEMEVAL_HTTP_URL", "http://h:1")
    with pytest.raises(UsageError) as caught:
        create(ref)
    assert needle in caught.value.render()


def test_missing_settings_name_their_variables(monkeypatch):
    for name in ("MEMEVAL_HTTP_TOKEN", "MEMEVAL_HTTP_URL", "MEM0_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(UsageError) as caught:
        create("http?url=http://h:1")
    assert "MEMEVAL_HTTP_TOKEN" in caught.value.fix
    monkeypatch.setenv("MEMEVAL_HTTP_TOKEN", "t0ken-value")
    with pytest.raises(UsageError) as caught:
        create("http")
    assert "MEMEVAL_HTTP_URL" in caught.value.fix and "--url" in caught.value.fix
    with pytest.raises(UsageError) as caught:
        create("mem0")
    assert "MEM0_API_KEY" in caught.value.fix


def test_a_module_class_reference_loads_an_engine(plugin_dir):
    engine = create("toy_engine:ToyEngine?flavour=sour")
    assert engine.name == "toy" and engine.flavour == "sour"
    assert isinstance(create("memeval.engines.naive:NaiveEngine"), NaiveEngine)
    for ref, needle in [
        ("toy_engine:NotAnEngine", "not a memeval engine"),
        ("toy_engine:Nope", "has no `Nope`"),
        ("no_such_pkg.mod:Engine", "cannot import"),
        ("toy_engine:", "cannot read"),
    ]:
        with pytest.raises(UsageError, match=needle):
            create(ref)


def test_entry_points_register_names(plugin_dir):
    assert {"toy", "broken"} <= set(registry.known())
    assert create("toy?flavour=salty").flavour == "salty"
    with pytest.raises(UsageError, match="failed to load"):
        create("broken")
    rows = {row.name: row for row in describe()}
    assert rows["toy"].origin == "plugin toy_engine:ToyEngine"
    assert [s.option for s in rows["toy"].settings if s.option == "flavour"] == ["flavour"]
    assert rows["broken"].error and "failed to load" in rows["broken"].error


def test_the_listing_shows_capabilities_and_settings_never_secrets(cli, plugin_dir):
    env = {
        "PYTHONPATH": os.pathsep.join([str(plugin_dir), str(Path.cwd())]),
        "CORTEX_API_KEY": "super-secret-value",
    }
    listed = cli("engines", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    assert "super-secret-value" not in listed.stdout
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert {
        "reference",
        "naive",
        "http",
        "cortex",
        "tinyhumans",
        "verifiedstate",
        "mem0",
        "toy",
    } <= (set(rows))
    assert rows["http"]["capabilities"] is None  # declared by the server
    assert "lifecycle" in rows["reference"]["capabilities"]
    key = next(s for s in rows["cortex"]["settings"] if s["env"] == "CORTEX_API_KEY")
    assert key["secret"] and key["present"] and key["option"] is None
    assert rows["tinyhumans"]["notes"]
    table = cli("engines", env={**env, "COLUMNS": "200"})
    assert table.returncode == 0 and "declared by the server" in table.stdout


def test_a_dispatcher_checks_references_without_holding_the_keys(monkeypatch):
    monkeypatch.delenv("CORTEX_API_KEY", raising=False)
    registry.validate("cortex?enrich_wait=30")  # the workers hold the key
    with pytest.raises(UsageError, match="not an http"):
        registry.validate("cortex?url=nope")
    with pytest.raises(UsageError, match="is a secret"):
        registry.validate("cortex?api_key=abc")
    with pytest.raises(UsageError, match="takes no options"):
        registry.validate("naive?x=1")
