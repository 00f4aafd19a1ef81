"""docker-compose.yml, parsed as Compose reads it (YAML merge keys resolved) and checked service
by service, since no Docker engine runs here: what each service gets, and the promises of the
file's header. Each check is a function that a mutated copy of the file must fail.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml

from memeval.cli import COMMANDS
from memeval.engines.registry import describe
from memeval.llm.failures import KEY_VARS
from memeval.report.write import default_out_dir

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
WORKER_K8S = ROOT / "deploy" / "k8s" / "base" / "worker.yaml"
MEMEVAL = ("worker", "flower", "run")
HOST_RUNS = PurePosixPath("memeval-runs")
SECRETISH = re.compile(r"KEY|TOKEN")

Services = dict[str, dict[str, Any]]


def services() -> Services:
    return yaml.safe_load(COMPOSE.read_text())["services"]


def key_vars() -> set[str]:
    """The model keys and every built-in engine's secret settings, as the code names them."""
    engines = {s.env for e in describe() if e.origin == "built-in" for s in e.settings if s.secret}
    return set(KEY_VARS) | engines


def holds_keys(env: dict[str, Any], keys: set[str]) -> set[str]:
    return {name for name in env if name in keys or SECRETISH.search(name)}


def check_keys_only_on_workers(services: Services, keys: set[str]) -> None:
    for name, service in services.items():
        env = service.get("environment", {})
        if name == "worker":
            assert keys <= set(env), f"the worker misses {sorted(keys - set(env))}"
            # By name only: Compose then passes the host's value, or leaves it unset. An empty
            # string would be taken as a key by the engines (they refuse a blank one).
            given = {k: env[k] for k in sorted(keys) if env[k] is not None}
            assert not given, f"the worker must take these from the host by name: {given}"
        else:
            assert not holds_keys(env, keys), f"{name} must not see {holds_keys(env, keys)}"


def test_model_and_engine_keys_reach_only_the_workers() -> None:
    keys = key_vars()
    assert {"OPENROUTER_API_KEY", "MEM0_API_KEY"} <= keys  # the code still names them
    check_keys_only_on_workers(services(), keys)


@pytest.mark.parametrize("service", ["flower", "run", "postgres"])
def test_a_key_given_to_another_service_is_caught(service: str) -> None:
    mutated = copy.deepcopy(services())
    mutated[service].setdefault("environment", {})["OPENROUTER_API_KEY"] = None
    with pytest.raises(AssertionError, match=f"{service} must not see"):
        check_keys_only_on_workers(mutated, key_vars())


def test_an_empty_default_for_a_worker_key_is_caught() -> None:
    mutated = copy.deepcopy(services())
    mutated["worker"]["environment"]["MEM0_API_KEY"] = "${MEM0_API_KEY:-}"
    with pytest.raises(AssertionError, match="MEM0_API_KEY"):
        check_keys_only_on_workers(mutated, key_vars())


def check_healthchecks(services: Services) -> None:
    for name in ("redis", "postgres", "worker", "flower"):
        test = services[name].get("healthcheck", {}).get("test")
        assert test and test[0] in ("CMD", "CMD-SHELL") and len(test) > 1, f"{name}: {test}"
    for name, service in services.items():
        for needed, how in service.get("depends_on", {}).items():
            if how.get("condition") == "service_healthy":
                assert "healthcheck" in services[needed], f"{name} waits on {needed}'s health"


def test_every_long_running_service_has_a_healthcheck() -> None:
    check_healthchecks(services())
    mutated = copy.deepcopy(services())
    del mutated["flower"]["healthcheck"]
    with pytest.raises(AssertionError, match="flower"):
        check_healthchecks(mutated)


def test_a_worker_is_healthy_as_it_is_ready_on_kubernetes() -> None:
    """The same probe as the cluster's readiness: the worker's broker answers."""
    (worker,) = [d for d in yaml.safe_load_all(WORKER_K8S.read_text()) if d["kind"] == "Deployment"]
    readiness = worker["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]
    assert services()["worker"]["healthcheck"]["test"] == ["CMD", *readiness["exec"]["command"]]


def test_flower_is_checked_over_http_with_the_images_python() -> None:
    flower = services()["flower"]
    cmd, program, flag, code = flower["healthcheck"]["test"]
    assert (cmd, program, flag) == ("CMD", "python", "-c")
    port = flower["command"][flower["command"].index("--port") + 1]
    assert f"http://127.0.0.1:{port}/healthcheck" in code
    assert re.search(r"^FROM python:", DOCKERFILE.read_text(), re.MULTILINE)


def test_flower_needs_the_broker_only() -> None:
    flower = services()["flower"]
    assert set(flower["depends_on"]) == {"redis"}
    assert "MEMEVAL_DATABASE_URL" not in flower["environment"]
    assert "MEMEVAL_BROKER_URL" in flower["environment"]
    assert flower["environment"]["MEMEVAL_FLOWER_BASIC_AUTH"].startswith("${FLOWER_BASIC_AUTH:?")


def host_out_dir(service: dict[str, Any], argv: list[str], label: str) -> PurePosixPath | None:
    """Where on the host `memeval <argv>` in this service writes its reports; None where that
    folder is not bind-mounted, so the reports die with the container."""
    if "--out" in argv:
        out = PurePosixPath(argv[argv.index("--out") + 1])
    else:
        out = PurePosixPath(default_out_dir(label))
    inside = PurePosixPath(service["working_dir"]) / out
    for volume in service.get("volumes", []):
        source, target = volume.split(":")[:2]
        if source.startswith("./") and inside.is_relative_to(target):
            return PurePosixPath(source) / inside.relative_to(target)
    return None


def check_run_keeps_reports(service: dict[str, Any]) -> None:
    for argv in (service["command"], ["run", "--engine", "naive"], ["run", "--suite", "dims"]):
        found = host_out_dir(service, argv, "nightly")
        assert found == HOST_RUNS / "nightly", f"`memeval {' '.join(argv)}` writes to {found}"


def test_the_run_service_keeps_its_reports_for_any_command() -> None:
    run = services()["run"]
    assert "entrypoint" not in run  # the image's `memeval`: the command is memeval's arguments
    check_run_keeps_reports(run)


def test_the_old_run_service_is_caught() -> None:
    """The file before the fix: `--out /runs/latest` in a command the user's command replaces."""
    old = copy.deepcopy(services()["run"])
    old.update(command=["run", "--out", "/runs/latest"], volumes=["./memeval-runs:/runs"])
    with pytest.raises(AssertionError, match="writes to"):
        check_run_keeps_reports(old)


def test_every_memeval_service_builds_the_same_image() -> None:
    all_services = services()
    assert set(all_services) == {"redis", "postgres", *MEMEVAL}
    builds = {name: all_services[name]["build"] for name in MEMEVAL}
    images = {name: all_services[name]["image"] for name in MEMEVAL}
    assert len({repr(b) for b in builds.values()}) == 1, builds
    assert len(set(images.values())) == 1, images
    assert (ROOT / builds["worker"]["context"] / builds["worker"]["dockerfile"]) == DOCKERFILE
    assert 'ENTRYPOINT ["memeval"]' in DOCKERFILE.read_text()
    for name in MEMEVAL:
        assert all_services[name]["command"][0] in COMMANDS, name
    for name in ("redis", "postgres"):
        image = all_services[name]["image"]
        assert "build" not in all_services[name] and re.fullmatch(r"[a-z0-9]+:\d+[\w.-]*", image)
