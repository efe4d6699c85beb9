"""The Kubernetes manifests (``deploy/kubernetes``, issue 56) as a cluster would take them, offline: each resource
valid for the Kubernetes versions they are for, strictly (a field the API server would drop is an error), every
file applied by the kustomization, a pod environment `pyramide serve` starts with, and a grace period that lets the
drain finish before the kubelet's SIGKILL. checkov's policies: ``tests/integration/test_kubernetes_policies.py``."""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from pyramide.service.infra.settings import MetricsSettings, Settings, unknown_variables
from pyramide.service.infra.signing import new_key_pem
from pyramide.service.serve import stop_budget_s

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy" / "kubernetes"
KUBERNETES_VERSIONS = ("1.31", "1.37")
"""The oldest Kubernetes the manifests are for (a PodDisruptionBudget's ``unhealthyPodEvictionPolicy`` is GA from
1.31) and the newest whose schemas the pinned kubernetes-validate ships."""
Resource = dict[str, Any]


@cache
def _resources() -> list[tuple[str, Resource]]:
    """Every resource the kustomization applies, with its file's name (read once: no test changes them)."""
    kustomization = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())
    return [
        (name, resource)
        for name in kustomization["resources"]
        for resource in yaml.safe_load_all((DEPLOY / name).read_text())
        if resource
    ]


def _one(kind: str) -> Resource:
    (found,) = [resource for _, resource in _resources() if resource["kind"] == kind]
    return found


def _container() -> Resource:
    (container,) = _one("Deployment")["spec"]["template"]["spec"]["containers"]
    return dict(container)


def test_the_kustomization_applies_every_manifest_here() -> None:
    listed = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())["resources"]
    assert sorted(listed) == sorted(p.name for p in DEPLOY.glob("*.yaml") if p.name != "kustomization.yaml")
    kinds = {resource["kind"] for _, resource in _resources()}
    assert {"Deployment", "Service", "PodDisruptionBudget", "HorizontalPodAutoscaler", "NetworkPolicy"} <= kinds


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_every_resource_is_valid_for_kubernetes_strictly(version: str) -> None:
    """A misspelt or misplaced field fails here (strict), as does a kind whose schema the version lacks (an API
    removed): kubernetes-validate's command line only warns of those."""
    problems = []
    for name, resource in _resources():
        try:
            kubernetes_validate.validate(resource, version, strict=True)
        except kubernetes_validate.ValidationError as error:
            where = ".".join(map(str, error.path))
            problems.append(f"{name}: {resource['kind']} invalid for Kubernetes {version}: {where}: {error.message}")
        except kubernetes_validate.SchemaNotFoundError as error:
            problems.append(f"{name}: {error.message}")
    assert not problems, "\n".join(problems)


def _pod_environment(secrets_dir: Path) -> dict[str, str]:
    """The variables the pod's container gets: its ConfigMap's, its own (a Secret's REDIS_URL as a stand-in URL, each
    ``*_FILE`` moved from the Secret's mount to ``secrets_dir``, where a valid secret is written under the name the
    volume gives it) and, unless the pod turns them off, the ones Kubernetes adds for every Service here."""
    pod = _one("Deployment")["spec"]["template"]["spec"]
    container = _container()
    config_map = _one("ConfigMap")
    environment = dict(config_map["data"])
    assert [source["configMapRef"]["name"] for source in container["envFrom"]] == [config_map["metadata"]["name"]]
    mounts = {mount["mountPath"]: mount for mount in container["volumeMounts"]}
    volumes = {volume["name"]: volume for volume in pod["volumes"]}
    for variable in container["env"]:
        name = variable["name"]
        if name == "REDIS_URL":
            assert "secretKeyRef" in variable["valueFrom"], "REDIS_URL may hold a password: from a Secret"
            environment[name] = "redis://unused"
        elif name.endswith("_FILE"):
            path = Path(variable["value"])
            mount = mounts[str(path.parent)]
            assert mount["readOnly"] is True
            items = {item["path"] for item in volumes[mount["name"]]["secret"]["items"]}
            assert path.name in items, f"{name}: the Secret's volume has no {path.name}"
            environment[name] = str(secrets_dir / path.name)
            (secrets_dir / path.name).write_text(_a_valid_secret(name) + "\n")
        else:
            environment[name] = variable["value"]
    if pod.get("enableServiceLinks", True):
        for service in (resource for _, resource in _resources() if resource["kind"] == "Service"):
            prefix = re.sub(r"[^A-Z0-9]", "_", service["metadata"]["name"].upper())
            for port in service["spec"]["ports"]:
                environment[f"{prefix}_SERVICE_HOST"] = "cluster address"
                environment[f"{prefix}_PORT_{port['port']}_TCP"] = "tcp://cluster address"
    return environment


def _a_valid_secret(variable: str) -> str:
    return {
        "PYRAMIDE_OPERATOR_KEY_FILE": "o" * 40,
        "PYRAMIDE_DEAL_SECRET_FILE": "a deal secret of some length",
        "PYRAMIDE_SIGNING_KEYS_FILE": new_key_pem(),
    }[variable]


def _pod_settings(environment: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The settings `pyramide serve --workers auto` reads in that environment, and nothing else of the test's."""
    for name in list(os.environ):
        if name.upper().startswith(("PYRAMIDE_", "REDIS_", "PROMETHEUS_")):
            monkeypatch.delenv(name)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert unknown_variables(environment) == [], "pyramide serve would stop: unknown settings"
    return Settings(http={"workers": "auto"})


def test_the_pod_s_environment_is_one_the_service_starts_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No unknown ``PYRAMIDE_*`` variable (for a Service named ``pyramide`` Kubernetes would add its ``_PORT``,
    ``_SERVICE_HOST`` and others under that prefix, unless the pod turns service links off), every value valid, and
    each secret read from its mounted file."""
    settings = _pod_settings(_pod_environment(tmp_path), monkeypatch)
    assert settings.redis.url == "redis://unused"
    assert settings.secrets.kept_in_redis() == [], "the signing key and the deal secret come from the Secret"
    assert settings.secrets.operator_key == "o" * 40


def test_the_grace_period_outlasts_the_drain_the_grace_and_the_jobs_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGKILL comes ``terminationGracePeriodSeconds`` after SIGTERM: later than the readiness 503 of the drain, the
    requests' grace and the background jobs' stop, as the pod's own settings give them."""
    settings = _pod_settings(_pod_environment(tmp_path), monkeypatch)
    needed = stop_budget_s(settings.http)
    grace = _one("Deployment")["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
    drain = settings.http.drain_s
    assert grace >= needed, f"terminationGracePeriodSeconds {grace} < {needed} s (drain {drain} s + grace + stop)"


def test_the_container_runs_as_the_image_s_user_on_a_read_only_root() -> None:
    """The Dockerfile's user, so that the Secret's files (group ``fsGroup``, mode 0440) are readable; the only
    writable place the service needs with ``REDIS_URL`` is the temporary directory (the workers' metric files)."""
    user = re.search(r"^USER (\d+):(\d+)$", (ROOT / "Dockerfile").read_text(), re.MULTILINE)
    assert user is not None
    pod = _one("Deployment")["spec"]["template"]["spec"]
    context = _container()["securityContext"]
    assert (pod["securityContext"]["runAsUser"], pod["securityContext"]["fsGroup"]) == tuple(map(int, user.groups()))
    assert context["readOnlyRootFilesystem"] is True and context["allowPrivilegeEscalation"] is False
    assert context["capabilities"] == {"drop": ["ALL"]}
    writable = {m["mountPath"] for m in _container()["volumeMounts"] if not m.get("readOnly")}
    tmpdir = dict(_one("ConfigMap")["data"]).get("TMPDIR", "/tmp")
    assert tmpdir in writable


def test_the_probes_and_the_service_reach_the_port_the_command_serves() -> None:
    container = _container()
    command = container["command"]
    port = int(command[command.index("--port") + 1])
    ports = {entry["name"]: entry for entry in container["ports"]}
    named = ports["http"]
    assert named["containerPort"] == port
    assert ports["metrics"]["containerPort"] == MetricsSettings().port, "PYRAMIDE_METRICS_PORT's default"
    probes = {kind: container[kind]["httpGet"] for kind in ("startupProbe", "livenessProbe", "readinessProbe")}
    assert {probe["port"] for probe in probes.values()} == {named["name"]}
    assert probes["readinessProbe"]["path"] == "/health/ready"
    assert probes["livenessProbe"]["path"] == probes["startupProbe"]["path"] == "/health/live"
    assert [p["targetPort"] for p in _one("Service")["spec"]["ports"]] == [named["name"]], "not the metrics' port"
