"""The Kubernetes manifests, rendered as a user would render them and checked object by object.

Core kinds are validated against the Kubernetes schemas by kubernetes-validate. KEDA's
ScaledObject and Prometheus Operator's ServiceMonitor are custom resources whose schemas that
package does not hold, so their required fields and types are checked here as those projects'
published CRDs state them. Beyond the schemas, the tests hold the promises of docs/kubernetes.md:
keys reach only the workers, every container has limits and probes that mean something, a
running case has time to finish, and the dashboard draws only metrics the workers serve.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from memeval_farm import metrics

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"
TARGETS = ("overlays/dev", "overlays/production", "run")
KUBE_VERSION = "1.30"
ENGINE_KEYS = "memeval-engine-keys"


def render(target: str) -> list[dict[str, Any]]:
    kubectl = shutil.which("kubectl")
    assert kubectl, "kubectl (with kustomize) is needed to render deploy/k8s: install kubectl"
    out = subprocess.run(
        [kubectl, "kustomize", str(K8S / target)], capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
    return [doc for doc in yaml.safe_load_all(out.stdout) if doc]


@pytest.fixture(scope="module", params=TARGETS)
def rendered(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    return render(request.param)


def pod_specs(objects: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (obj["metadata"]["name"], obj["spec"]["template"]["spec"])
        for obj in objects
        if obj["kind"] in ("Deployment", "StatefulSet", "Job")
    ]


def secret_refs(spec: dict[str, Any]) -> set[str]:
    names: set[str] = set()
    for container in spec["containers"]:
        names |= {e["secretRef"]["name"] for e in container.get("envFrom", []) if "secretRef" in e}
        names |= {
            e["valueFrom"]["secretKeyRef"]["name"]
            for e in container.get("env", [])
            if "secretKeyRef" in e.get("valueFrom", {})
        }
    names |= {v["secret"]["secretName"] for v in spec.get("volumes", []) if "secret" in v}
    return names


def by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def test_every_core_object_validates_against_the_kubernetes_schemas(rendered) -> None:
    import kubernetes_validate  # here, not at the top: collection (once per xdist worker) skips it

    core = [o for o in rendered if o["kind"] not in ("ScaledObject", "ServiceMonitor")]
    assert core
    for obj in core:
        kubernetes_validate.validate(obj, KUBE_VERSION, strict=True)


def test_a_wrong_field_is_caught_by_the_validator() -> None:
    """The validation above can fail: a typo in a container is rejected."""
    import kubernetes_validate

    worker = next(o for o in render("overlays/dev") if o["kind"] == "Deployment")
    worker["spec"]["template"]["spec"]["containers"][0]["resorces"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(worker, KUBE_VERSION, strict=True)


def test_custom_resources_have_the_fields_their_crds_require(rendered) -> None:
    for scaler in by_kind(rendered, "ScaledObject"):
        spec = scaler["spec"]
        assert scaler["apiVersion"] == "keda.sh/v1alpha1"
        assert isinstance(spec["scaleTargetRef"]["name"], str)
        for key in ("minReplicaCount", "maxReplicaCount", "pollingInterval", "cooldownPeriod"):
            assert isinstance(spec[key], int), key
        for trigger in spec["triggers"]:
            assert isinstance(trigger["type"], str)
            assert all(isinstance(v, str) for v in trigger["metadata"].values())
    for monitor in by_kind(rendered, "ServiceMonitor"):
        assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
        assert monitor["spec"]["selector"]["matchLabels"]
        assert all(isinstance(e["port"], str) for e in monitor["spec"]["endpoints"])


def test_engine_and_model_keys_reach_only_the_workers(rendered) -> None:
    for name, spec in pod_specs(rendered):
        refs = secret_refs(spec)
        if name == "memeval-worker":
            assert ENGINE_KEYS in refs
        else:
            assert ENGINE_KEYS not in refs, f"{name} must not see engine or model keys"
    for config in by_kind(rendered, "ConfigMap"):
        for key in config.get("data", {}):
            assert not re.search(r"KEY|TOKEN|PASSWORD|SECRET", key), f"{key} belongs in a Secret"


def test_every_container_has_requests_limits_and_probes(rendered) -> None:
    for name, spec in pod_specs(rendered):
        for container in spec["containers"]:
            where = f"{name}/{container['name']}"
            resources = container.get("resources", {})
            for part in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(resources.get(part, {})), f"{where}: {part}"
            assert "readinessProbe" in container and "livenessProbe" in container, where


def test_a_worker_is_ready_only_while_its_broker_answers(rendered) -> None:
    for name, spec in pod_specs(rendered):
        if name == "memeval-worker":
            probe = spec["containers"][0]["readinessProbe"]["exec"]["command"]
            assert probe == ["python", "-m", "memeval_farm.probe"]


def test_a_running_case_has_time_to_finish_before_the_pod_is_killed(rendered) -> None:
    config = {k: v for c in by_kind(rendered, "ConfigMap") for k, v in c.get("data", {}).items()}
    for name, spec in pod_specs(rendered):
        if name == "memeval-worker":
            timeout = float(config["MEMEVAL_CASE_TIMEOUT"])
            assert spec["terminationGracePeriodSeconds"] >= timeout + 30


def test_the_farm_scales_from_zero_on_its_own_queue(rendered) -> None:
    config = {k: v for c in by_kind(rendered, "ConfigMap") for k, v in c.get("data", {}).items()}
    for scaler in by_kind(rendered, "ScaledObject"):
        spec = scaler["spec"]
        assert spec["minReplicaCount"] == 0 < spec["maxReplicaCount"]
        workers = [o["metadata"]["name"] for o in by_kind(rendered, "Deployment")]
        assert spec["scaleTargetRef"]["name"] in workers
        (trigger,) = spec["triggers"]
        assert trigger["type"] == "redis"
        assert trigger["metadata"]["listName"] == config["MEMEVAL_QUEUE"]
        assert trigger["metadata"]["address"].split(":")[0] in config["MEMEVAL_BROKER_URL"]


def test_keda_adds_a_worker_per_pod_worth_of_waiting_cases(rendered) -> None:
    """docs/scale.md sizes a fleet in pods of `--workers` threads: KEDA's list length is the
    same number, so the cases waiting at any time are what the pods it starts can hold."""
    threads = {
        name: int(args[args.index("--workers") + 1])
        for name, spec in pod_specs(rendered)
        if "--workers" in (args := spec["containers"][0].get("args", []))
    }
    for scaler in by_kind(rendered, "ScaledObject"):
        (trigger,) = scaler["spec"]["triggers"]
        target = scaler["spec"]["scaleTargetRef"]["name"]
        assert int(trigger["metadata"]["listLength"]) == threads[target]


def test_redis_keeps_an_append_only_file_on_a_volume(rendered) -> None:
    for redis in [o for o in by_kind(rendered, "StatefulSet") if "redis" in o["metadata"]["name"]]:
        args = redis["spec"]["template"]["spec"]["containers"][0]["args"]
        assert args[args.index("--appendonly") + 1] == "yes"
        assert redis["spec"]["volumeClaimTemplates"]


def test_workers_are_protected_by_a_disruption_budget(rendered) -> None:
    workers = [
        o for o in by_kind(rendered, "Deployment") if o["metadata"]["name"] == "memeval-worker"
    ]
    for worker in workers:
        labels = worker["spec"]["template"]["metadata"]["labels"]
        budgets = by_kind(rendered, "PodDisruptionBudget")
        assert any(b["spec"]["selector"]["matchLabels"].items() <= labels.items() for b in budgets)


def test_flower_asks_for_credentials(rendered) -> None:
    for name, spec in pod_specs(rendered):
        if name == "memeval-flower":
            env = {e["name"] for e in spec["containers"][0].get("env", [])}
            assert "MEMEVAL_FLOWER_BASIC_AUTH" in env


def test_the_dashboard_draws_only_metrics_the_farm_serves() -> None:
    dashboard = json.loads(
        (K8S / "components" / "monitoring" / "memeval-dashboard.json").read_text()
    )
    families = [*metrics.worker_metrics().values(), *metrics.dispatcher_metrics().values()]
    served = {d.name for family in families for d in family.describe()}
    used = {
        re.sub(r"_(total|bucket|count|sum)$", "", name)
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in re.findall(r"memeval_[a-z_]+", target["expr"])
    }
    assert used and used <= served, used - served
