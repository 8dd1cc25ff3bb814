"""A Kubernetes Indexed Job of a run's shards, and the analysis Job after it.

The shards' Job has N completions, completion mode Indexed: each pod runs
`stancelab launch task --index-env JOB_COMPLETION_INDEX ...`, which reads its index from the
variable Kubernetes sets in an Indexed Job's pods and runs shard index + 1 of N. The image and
the API keys are by reference only: `envFrom: secretRef` (every key of a Secret) and
`valueFrom.secretKeyRef` (one key as one variable); no key's value is ever in a manifest.

The analysis Job waits in the simplest honest way: it is applied once the shards' Job has
finished (`--apply` polls the Job's status, then creates it; with `--output` the user applies it
after `kubectl wait`). It runs whether or not every shard succeeded: `stancelab analyze` counts
complete shards only and marks the summary partial, naming the missing ones."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from stancelab.core.errors import StancelabError
from stancelab.core.runs.launch.task import K8S_INDEX, LaunchPlan

RETRIES_PER_SHARD = 2
"""a failed pod's shard is retried this often, the other shards untouched (backoffLimitPerIndex)"""
POLL_S = 15.0
"""seconds between two looks at the shards' Job while `--apply` waits for it"""


@dataclass(frozen=True)
class SecretKey:
    """`VAR=SECRET:KEY`: the variable VAR from key KEY of the Secret SECRET."""

    variable: str
    secret: str
    key: str


def parse_secret_key(text: str) -> SecretKey:
    """`VAR=SECRET:KEY` -> SecretKey; a clear error for anything else."""
    variable, _, reference = text.partition("=")
    secret, _, key = reference.partition(":")
    if not variable.isidentifier() or not secret or not key:
        raise StancelabError(
            f"--secret-env expects VAR=SECRET:KEY (e.g. OPENAI_API_KEY=llm-keys:openai), not {text!r}."
        )
    return SecretKey(variable, secret, key)


def parse_volume(text: str | None) -> tuple[str, str] | None:
    """`CLAIM:MOUNT` -> (claim, mount path); a clear error for anything else."""
    if text is None:
        return None
    claim, _, mount = text.partition(":")
    if not claim or not mount.startswith("/"):
        raise StancelabError(
            f"--volume expects CLAIM:MOUNT (e.g. shared-runs:/runs), not {text!r}."
        )
    return claim, mount


@dataclass(frozen=True)
class KubernetesSpec:
    """Where and with what the pods run."""

    image: str
    secrets: tuple[str, ...] = ()
    """Secrets whose every key becomes a variable (envFrom)"""
    secret_keys: tuple[SecretKey, ...] = ()
    namespace: str | None = None
    parallelism: int | None = None
    """pods at once (default: every shard)"""
    volume: tuple[str, str] | None = None
    """(claim, mount path): a PersistentVolumeClaim every pod mounts"""


def job_name(plan: LaunchPlan) -> str:
    """`stancelab-PROBE-DIGEST`: a DNS label, the same for the same launch."""
    digest = hashlib.sha256(json.dumps([plan.run_args, plan.shards]).encode()).hexdigest()[:8]
    return f"stancelab-{plan.run_args[1]}-{digest}"[:63].lower()


def _container(name: str, command: list[str], spec: KubernetesSpec) -> Any:
    from kubernetes import client

    env = [client.V1EnvVar(name=item.variable, value_from=client.V1EnvVarSource(
               secret_key_ref=client.V1SecretKeySelector(name=item.secret, key=item.key)))
           for item in spec.secret_keys]  # fmt: skip
    env_from = [client.V1EnvFromSource(secret_ref=client.V1SecretEnvSource(name=secret))
                for secret in spec.secrets]  # fmt: skip
    mounts = [client.V1VolumeMount(name="runs", mount_path=spec.volume[1])] if spec.volume else None
    return client.V1Container(name=name, image=spec.image, command=command, env=env or None,
                              env_from=env_from or None, volume_mounts=mounts)  # fmt: skip


def _volumes(spec: KubernetesSpec) -> list[Any] | None:
    """The pods' volume: the claim of `--volume`, if any."""
    from kubernetes import client

    if spec.volume is None:
        return None
    claim = client.V1PersistentVolumeClaimVolumeSource(claim_name=spec.volume[0])
    return [client.V1Volume(name="runs", persistent_volume_claim=claim)]


def _job(name: str, container: Any, spec: KubernetesSpec, **job_spec: Any) -> dict[str, Any]:
    from kubernetes import client

    labels = {"app.kubernetes.io/name": "stancelab", "app.kubernetes.io/instance": name}
    template = client.V1PodTemplateSpec(
        metadata=client.V1ObjectMeta(labels=labels),
        spec=client.V1PodSpec(
            containers=[container], restart_policy="Never", volumes=_volumes(spec)
        ),
    )
    job = client.V1Job(api_version="batch/v1", kind="Job",
                       metadata=client.V1ObjectMeta(name=name, namespace=spec.namespace, labels=labels),
                       spec=client.V1JobSpec(template=template, **job_spec))  # fmt: skip
    return client.ApiClient().sanitize_for_serialization(job)


def shards_job(plan: LaunchPlan, spec: KubernetesSpec) -> dict[str, Any]:
    """The Indexed Job of the shards, as a manifest (a plain dict, the API's field names)."""
    name = job_name(plan)
    container = _container("shard", plan.task_command(K8S_INDEX), spec)
    parallelism = min(spec.parallelism or plan.shards, plan.shards)
    return _job(name, container, spec, completions=plan.shards, parallelism=parallelism,
                completion_mode="Indexed", backoff_limit_per_index=RETRIES_PER_SHARD)  # fmt: skip


def analysis_job(plan: LaunchPlan, spec: KubernetesSpec) -> dict[str, Any]:
    """The analysis Job (apply it once the shards' Job has finished)."""
    container = _container("analyze", plan.analysis_command(), spec)
    return _job(f"{job_name(plan)}-analyze", container, spec, backoff_limit=1)


def checked_job(manifest: dict[str, Any]) -> Any:
    """`manifest` read by the Kubernetes client's models (`V1Job`): a field of the wrong type
    or missing is an error, and so is a field the models do not know (they would drop it)."""
    from kubernetes.client import ApiClient

    api = ApiClient()
    job = api.deserialize(json.dumps(manifest), "V1Job", None)
    if api.sanitize_for_serialization(job) != manifest:
        raise StancelabError(f"manifest of {manifest.get('metadata', {}).get('name')}: fields "
                             "the Kubernetes API does not know")  # fmt: skip
    return job


def manifest_yaml(manifest: dict[str, Any]) -> str:
    """A manifest as YAML, checked by the client's models first."""
    import yaml

    checked_job(manifest)
    return yaml.safe_dump(manifest, sort_keys=False)


def apply_jobs(shards: dict[str, Any], analysis: dict[str, Any], namespace: str,
               say: Callable[[str], None] = print) -> None:  # fmt: skip
    """Create the shards' Job with the user's kubeconfig, wait until it has finished, then
    create the analysis Job."""
    from kubernetes import client, config, utils

    try:
        config.load_kube_config()
    except (config.ConfigException, OSError) as error:
        raise StancelabError(f"--apply: no usable kubeconfig ({error}); or write the manifests "
                             "with --output FILE.") from None  # fmt: skip
    api = client.ApiClient()
    checked_job(shards)
    checked_job(analysis)
    utils.create_from_dict(api, shards, namespace=namespace)
    name = shards["metadata"]["name"]
    say(f"created job/{name} ({shards['spec']['completions']} shards); waiting for it to finish")
    while not _finished(client.BatchV1Api(api).read_namespaced_job_status(name, namespace)):
        time.sleep(POLL_S)
    utils.create_from_dict(api, analysis, namespace=namespace)
    say(f"created job/{analysis['metadata']['name']} (the analysis)")


def _finished(job: Any) -> bool:
    """Whether a Job has ended: complete or failed."""
    conditions = job.status.conditions or []
    return any(item.type in ("Complete", "Failed") and item.status == "True" for item in conditions)
